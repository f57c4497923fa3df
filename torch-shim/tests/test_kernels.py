# SPDX-License-Identifier: MIT
"""The kernel language (torch_neuron.kernels): tracing, views, the JIT and
its caches, the errors a kernel writer sees."""
import os
import subprocess

import pytest
import torch

import torch_neuron.kernels as nk

dev = "neuron"


def stats():
    return torch.neuron.compile_stats()["nk_kernels"]


@nk.kernel
def scaled_add(x, y, alpha: float):
    out = nk.empty(x.shape, x.dtype)
    nk.add(x, y, alpha, out=out)
    return out


def test_vector_add_and_cache():
    x = torch.randn(1000, device=dev)
    y = torch.randn(1000, device=dev)
    torch.testing.assert_close(scaled_add(x, y, 0.5).cpu(), (x + 0.5 * y).cpu())
    n = stats()["scaled_add"]["compiles"] + stats()["scaled_add"]["cache_hits"]
    out = scaled_add(y, x, 0.5)         # same signature: the cached kernel
    torch.testing.assert_close(out.cpu(), (y + 0.5 * x).cpu())
    assert stats()["scaled_add"]["compiles"] + stats()["scaled_add"]["cache_hits"] == n
    scaled_add(x[:10], y[:10], 0.5)      # a new shape: a new kernel
    scaled_add(x, y, 2.0)                # a new constant: a new kernel
    assert stats()["scaled_add"]["compiles"] + stats()["scaled_add"]["cache_hits"] == n + 2
    torch.testing.assert_close(scaled_add(x, y, 2.0).cpu(), (x + 2 * y).cpu())


@nk.kernel
def tile_sum(x, tile: int):
    """Row sums of x [N, D] computed tile by tile of columns (a Python loop
    unrolled at trace time), accumulated into the output."""
    n, d = x.shape
    out = nk.zeros((n, 1), nk.float32)
    for j in range(0, d, tile):
        part = nk.sum(x[:, j:min(j + tile, d)], 1, keepdim=True)
        nk.add(out, part, out=out)
    return out


def test_tiles_loop():
    x = torch.randn(7, 50, device=dev)
    got = tile_sum(x, 16)
    torch.testing.assert_close(got.cpu(), x.cpu().sum(1, keepdim=True), rtol=1e-5, atol=1e-5)


@nk.kernel
def views(a, b):
    """Strided views, transpose, broadcast and reshape without a copy."""
    at = a.T                                  # [K, M] view
    c = nk.matmul(at[:, ::2], b)              # every other column of a^T: [K, M/2] @ [M/2, N]
    row = nk.sum(c, 0, keepdim=True)          # [1, N]
    out = nk.empty(c.shape, c.dtype)
    nk.sub(c, row.broadcast_to(c.shape), out=out)
    flat = out.reshape(-1)
    flat[0:3] = 0.0                           # a FILL through a view
    return out


def test_views():
    a = torch.randn(8, 5, device=dev)        # M=8, K=5
    b = torch.randn(4, 3, device=dev)        # M/2=4, N=3
    ref = a.cpu().T[:, ::2] @ b.cpu()
    ref = ref - ref.sum(0, keepdim=True)
    ref.view(-1)[0:3] = 0
    torch.testing.assert_close(views(a, b).cpu(), ref, rtol=1e-5, atol=1e-5)


@nk.kernel
def in_place(x, y):
    x[1:3] = y[0:2] * 2.0
    nk.relu(x, out=x)


def test_in_place_mutation():
    x = torch.randn(4, 3, device=dev)
    y = torch.randn(4, 3, device=dev)
    ref = x.cpu().clone()
    ref[1:3] = y.cpu()[0:2] * 2
    ref = ref.relu()
    assert in_place(x, y) is None
    torch.testing.assert_close(x.cpu(), ref)


@nk.kernel
def gather_rows(table, idx, tokens):
    rows = nk.index_select(table, idx, 0)
    picked = nk.gather(rows, tokens, 1)
    return rows, picked


def test_gather_and_lists():
    table = torch.randn(10, 6, device=dev)
    idx = torch.tensor([3, 1, 7], device=dev)
    tokens = torch.tensor([[0], [5], [2]], device=dev)
    rows, picked = gather_rows(table, idx, tokens)
    torch.testing.assert_close(rows.cpu(), table.cpu()[[3, 1, 7]])
    torch.testing.assert_close(picked.cpu(), table.cpu()[[3, 1, 7]].gather(1, tokens.cpu()))


@nk.kernel
def list_scale(xs, s: float):
    for x in xs:
        nk.mul(x, s, out=x)


def test_list_of_tensors():
    xs = [torch.randn(n, device=dev) for n in (3, 5, 7)]
    ref = [x.cpu() * 3 for x in xs]
    list_scale(xs, 3.0)
    for x, r in zip(xs, ref):
        torch.testing.assert_close(x.cpu(), r)


@nk.kernel
def noisy(x):
    return x + nk.rand(x.shape)


def test_random_drawn_per_launch():
    x = torch.zeros(1000, device=dev)
    torch.manual_seed(1)
    a = noisy(x).cpu()
    b = noisy(x).cpu()
    assert not torch.equal(a, b)
    assert 0 <= a.min() and a.max() < 1 and abs(a.mean() - 0.5) < 0.05
    torch.manual_seed(1)
    torch.testing.assert_close(noisy(x).cpu(), a)    # the generator governs them


@nk.kernel
def timed(x):
    t0 = nk.timestamp()
    y = nk.exp(x)
    for _ in range(4):
        y = nk.sqrt(y + 1.0)
    t1 = nk.timestamp()
    return y, t0, t1


def test_timestamps_read_the_clock_at_each_launch():
    x = torch.randn(1 << 16, device=dev)
    y, t0, t1 = timed(x)
    ref = x.cpu().exp()
    for _ in range(4):
        ref = (ref + 1).sqrt()
    torch.testing.assert_close(y.cpu(), ref)
    assert t0.dtype == torch.int64 and t0.shape == ()
    assert t1.item() > t0.item() > 0              # the work between took time
    _, u0, u1 = timed(x)
    assert u0.item() >= t1.item() and u1.item() > u0.item()   # read anew


def test_elementwise_from_the_instruction_table():
    # every function of the ISA's unary table is a function of the language
    names = [e.split(":")[0] for e in torch.ops.neuron.isa_table("unary")]
    assert "gelu_tanh" in names and all(hasattr(nk, n) for n in names)

    @nk.kernel
    def f(x):
        return nk.gelu_tanh(x), nk.softplus(x, 1.0, 20.0), nk.atan2(x, 2.0), x >= 0.5

    x = torch.randn(64, device=dev)
    g, sp, at, ge = f(x)
    xc = x.cpu()
    torch.testing.assert_close(g.cpu(), torch.nn.functional.gelu(xc, approximate="tanh"))
    torch.testing.assert_close(sp.cpu(), torch.nn.functional.softplus(xc))
    torch.testing.assert_close(at.cpu(), torch.atan2(xc, torch.tensor(2.0)))
    assert torch.equal(ge.cpu(), xc >= 0.5)


# ---- errors ------------------------------------------------------------------

@nk.kernel
def oob(x):
    return x[0:20] * 2.0


@nk.kernel
def branch_on_value(x):
    s = nk.sum(x, 0)
    if s > 0:
        return x * 2.0
    return x


@nk.kernel
def bad_matmul(a, b):
    return nk.matmul(a, b)


@nk.kernel
def bits_of_float(x):
    return nk.bitnot(x)


@nk.kernel
def reads_garbage(x):
    t = nk.empty(x.shape)
    return x + t


def test_trace_errors_name_the_line():
    x = torch.randn(10, device=dev)
    with pytest.raises(nk.KernelError, match=r"kernel 'oob', test_kernels.py:\d+: "
                       r"`return x\[0:20\] \* 2.0`: slice 0:20 out of bounds"):
        oob(x)
    with pytest.raises(nk.KernelError, match=r"test_kernels.py:\d+: `if s > 0:`: bool\(\) "
                       r"of an nk.Tensor: a card value cannot steer Python control flow"):
        branch_on_value(x)
    with pytest.raises(nk.KernelError, match=r"`return nk.matmul\(a, b\)`: matmul of shapes "
                       r"\(3, 4\) and \(5, 2\): inner dims 4 and 5 differ"):
        bad_matmul(torch.randn(3, 4, device=dev), torch.randn(5, 2, device=dev))
    with pytest.raises(nk.KernelError, match="bitwise function of a torch.float32"):
        bits_of_float(x)
    with pytest.raises(nk.KernelError, match="reads memory it never wrote"):
        reads_garbage(x)
    with pytest.raises(nk.KernelError, match="called outside a kernel"):
        nk.exp(x)
    # after errors the kernels still work
    torch.testing.assert_close(scaled_add(x, x, 1.0).cpu(), 2 * x.cpu())


def test_grad_without_backward_is_refused():
    x = torch.randn(4, device=dev, requires_grad=True)
    with pytest.raises(nk.KernelError, match="has no backward"):
        scaled_add(x, x, 1.0)
    with torch.no_grad():
        scaled_add(x, x, 1.0)


def test_sources_map_instructions_to_lines():
    a = torch.randn(8, 5, device=dev)
    b = torch.randn(4, 3, device=dev)
    lines = views.sources(a, b)
    assert lines and any("nk.matmul(at[:, ::2], b)" in l for l in lines)
    assert any("flat[0:3] = 0.0" in l for l in lines)


def test_dump_and_objdump(tmp_path):
    x = torch.randn(100, device=dev)
    y = torch.randn(100, device=dev)
    path = scaled_add.dump(x, y, 0.5, path=str(tmp_path / "k.ngraph"))
    r = subprocess.run(["neuron-objdump", path], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "neuron graph" in r.stdout and "arg0:" in r.stdout, r.stdout
    assert "dst@arg2" in r.stdout and "src0@arg0" in r.stdout and "<- captured 0" in r.stdout, \
        r.stdout


@nk.kernel
def pick(table, idx):
    rows = nk.index_select(table, idx, 0)
    return rows * 2.0


def test_card_error_names_kernel_instruction_and_line():
    """An index known only on the card is out of range: the card refuses
    the GATHER; the error names the kernel, its instruction and the line."""
    table = torch.randn(4, 3, device=dev)
    good = torch.tensor([1, 3], device=dev)
    torch.testing.assert_close(pick(table, good).cpu(), table.cpu()[[1, 3]] * 2)
    bad = torch.tensor([1, 9], device=dev)
    with pytest.raises(RuntimeError, match=r"index out of range in kernel 'pick', "
                       r"instruction \d+ \(captured instruction 0\), from test_kernels.py:"
                       r"\d+: `rows = nk.index_select\(table, idx, 0\)`"):
        pick(table, bad).cpu()
    # the card goes on with later work
    torch.testing.assert_close(pick(table, good).cpu(), table.cpu()[[1, 3]] * 2)


# ---- the disk cache ----------------------------------------------------------

def _fresh(kernel):
    """The same function as a new Kernel: what a new process has (nothing
    in memory; the disk cache only)."""
    return nk.Kernel(kernel.fn)


def test_disk_cache_hit_and_corrupt_entry_rebuilt(fresh_compile, tmp_path):
    x = torch.randn(64, device=dev)
    y = torch.randn(64, device=dev)
    ref = (x + 0.25 * y).cpu()
    k1 = _fresh(scaled_add)
    torch.testing.assert_close(k1(x, y, 0.25).cpu(), ref)
    st = torch.neuron.compile_stats()
    assert st["cache_misses"] == 1 and st["cache_writes"] == 1
    entries = sorted((tmp_path / "cache").glob("*.ngraph"))
    assert len(entries) == 1
    # a new process: loaded, not traced
    k2 = _fresh(scaled_add)
    torch.testing.assert_close(k2(x, y, 0.25).cpu(), ref)
    st = torch.neuron.compile_stats()
    assert st["cache_hits"] == 1 and st["nk_kernels"]["scaled_add"]["compiles"] == 1
    # a damaged entry is deleted and rebuilt, the result still right
    data = bytearray(entries[0].read_bytes())
    data[-5] ^= 0xFF
    entries[0].write_bytes(bytes(data))
    k3 = _fresh(scaled_add)
    torch.testing.assert_close(k3(x, y, 0.25).cpu(), ref)
    st = torch.neuron.compile_stats()
    assert st["cache_corrupt"] == 1 and st["nk_kernels"]["scaled_add"]["compiles"] == 2
    k4 = _fresh(scaled_add)
    torch.testing.assert_close(k4(x, y, 0.25).cpu(), ref)
    assert torch.neuron.compile_stats()["cache_hits"] == 2


def test_disk_cache_stale_when_a_helper_changes(fresh_compile, tmp_path):
    """A helper module the body calls is part of the entry: edited, the
    entry is stale and the kernel traced again."""
    import importlib
    import sys as _sys
    mod = tmp_path / "nk_helper_mod.py"
    mod.write_text("def scale(x):\n    return x * 2.0\n")
    _sys.path.insert(0, str(tmp_path))
    try:
        import nk_helper_mod

        def body(x):
            return nk_helper_mod.scale(x)

        x = torch.randn(8, device=dev)
        assert torch.equal(nk.Kernel(body)(x).cpu(), x.cpu() * 2)
        assert torch.equal(nk.Kernel(body)(x).cpu(), x.cpu() * 2)
        assert torch.neuron.compile_stats()["cache_hits"] == 1
        mod.write_text("def scale(x):\n    return x * 3.0  # edited\n")
        importlib.reload(nk_helper_mod)
        assert torch.equal(nk.Kernel(body)(x).cpu(), x.cpu() * 3)
        assert torch.neuron.compile_stats()["cache_corrupt"] == 1
    finally:
        _sys.path.remove(str(tmp_path))


# ---- the profiler --------------------------------------------------------------

def test_profiler_shows_the_kernel_with_its_card_time():
    from torch.profiler import ProfilerActivity, profile

    x = torch.randn(4096, device=dev)
    scaled_add(x, x, 1.0)
    torch.neuron.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.PrivateUse1]) as prof:
        scaled_add(x, x, 1.0)
        torch.neuron.synchronize()
    rows = {e.key: e for e in prof.key_averages()}
    assert "nk.scaled_add" in rows, sorted(rows)
    assert rows["nk.scaled_add"].device_time_total > 0


@nk.op("nktest::scale")
def scale_op(x: torch.Tensor, s: float) -> torch.Tensor:
    return x * s


@nk.op("nktest::bump", mutates_args=("x",))
def bump_op(x: torch.Tensor) -> None:
    nk.add(x, 1.0, out=x)


def test_op_direct_eager_path(monkeypatch):
    """An operator called in plain eager code launches its kernel without
    the dispatcher's Python layers; with anything the dispatcher must see
    (autograd, a dispatch mode, the profiler) the call takes the operator.
    Both give the same result, and a mutated argument's version advances
    either way."""
    from torch.utils._python_dispatch import TorchDispatchMode
    seen = []
    opov = scale_op._opoverload

    def counting(*a, **kw):
        seen.append(1)
        return opov(*a, **kw)
    monkeypatch.setattr(scale_op, "_opoverload", counting)
    x = torch.randn(64, device=dev)
    torch.testing.assert_close(scale_op(x, 3.0).cpu(), x.cpu() * 3)
    assert seen == []                                  # direct
    xg = x.clone().requires_grad_()
    torch.testing.assert_close(scale_op(xg, 3.0).detach().cpu(), x.cpu() * 3)
    assert len(seen) == 1                              # autograd records it
    with torch.no_grad():
        scale_op(xg, 3.0)
    assert len(seen) == 1                              # nothing to record: direct

    class Record(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(str(func))
            return func(*args, **(kwargs or {}))
    with Record():
        scale_op(x, 3.0)
    assert "nktest.scale.default" in seen                # the mode saw the operator
    from torch.profiler import profile
    n = len(seen)
    with profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        scale_op(x, 3.0)
    assert len(seen) == n + 1
    assert any(e.name == "nktest::scale" for e in prof.events())

    y = torch.zeros(8, device=dev)
    v = y._version
    bump_op(y)
    assert y._version > v
    torch.testing.assert_close(y.cpu(), torch.ones(8))
    v = y._version
    bump_op._opoverload(y)                             # the operator's own path
    assert y._version > v
    torch.testing.assert_close(y.cpu(), torch.full((8,), 2.0))

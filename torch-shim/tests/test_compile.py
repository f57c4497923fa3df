# SPDX-License-Identifier: MIT
"""torch.compile(backend="neuron"): AOTAutograd's graphs run as captured,
compiled kernels (torch_neuron/compile, docs/compile.md).

A compiled graph issues the instructions the eager operations encode, so
compiled results are compared with eager `neuron` results EXACTLY (no
tolerance). Each test uses its own compile cache directory and counters."""
import hashlib
import logging
import os
import struct

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch_neuron

N = "neuron"


pytestmark = pytest.mark.usefixtures("fresh_compile")


def mlp():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4)).to(N)


def train(compiled, steps=3, batch=8):
    """Losses and final parameters of a few SGD steps of mlp()."""
    model = mlp()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    g = torch.Generator().manual_seed(1)

    def loss_fn(x, y):
        return F.cross_entropy(model(x), y)

    if compiled:
        loss_fn = torch.compile(loss_fn, backend="neuron")
    losses = []
    for _ in range(steps):
        x = torch.randn(batch, 16, generator=g).to(N)
        y = torch.randint(0, 4, (batch,), generator=g).to(N)
        loss = loss_fn(x, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, [p.detach().cpu() for p in model.parameters()]


def assert_same(a, b):
    assert a[0] == b[0]
    for p, q in zip(a[1], b[1]):
        assert torch.equal(p, q)


def test_backend_registered_by_entry_point():
    assert "neuron" in torch._dynamo.list_backends()
    assert torch._dynamo.lookup_backend("neuron") is torch_neuron.compile.backend


def test_mlp_training_equals_eager():
    eager = train(False)
    compiled = train(True)
    assert_same(compiled, eager)
    s = torch_neuron.compile_stats()
    # one dynamo graph; its forward and backward each captured once and
    # launched once per step; nothing ran eagerly
    assert s["dynamo_graphs"] == 1 and s["dynamo_recompiles"] == 0
    assert s["graphs"] == 2 and s["captures"] == 2
    assert s["launches"] == 2 * 3
    assert s["eager_graphs"] == 0 and s["eager_fallbacks"] == {}
    assert s["cache_misses"] == 2 and s["cache_writes"] == 2 and s["cache_hits"] == 0
    assert s["compile_ms"] > 0
    assert sorted(s["kernels_per_graph"].values()) == [1, 1]
    assert torch.neuron.compile_stats()["launches"] == 6


def _entries():
    d = os.environ["TORCH_NEURON_CACHE_DIR"]
    return sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(".ngraph"))


def _corrupt_blob(path):
    """Flip a byte of the libneuron blob and re-sign the file: only
    libneuron's own check (nrn_graph_deserialize) can notice."""
    data = bytearray(open(path, "rb").read())
    head = 8 + 32
    (n,) = struct.unpack_from("<I", data, head)
    data[head + 4 + n + 40] ^= 0x5a
    data[8:head] = hashlib.sha256(bytes(data[head:])).digest()
    open(path, "wb").write(bytes(data))


def test_cache_hits_and_corrupt_entries_rebuilt(caplog):
    eager = train(False, steps=2)
    assert_same(train(True, steps=2), eager)
    entries = _entries()
    assert len(entries) == 2
    # damaged two ways: a flipped byte (the file's checksum) and a
    # re-signed file whose kernel blob is bad (libneuron's checksum)
    with open(entries[0], "r+b") as f:
        f.seek(100)
        b = f.read(1)
        f.seek(100)
        f.write(bytes([b[0] ^ 0xff]))
    _corrupt_blob(entries[1])
    torch._dynamo.reset()
    torch_neuron.reset_compile_stats()
    with caplog.at_level(logging.WARNING, logger="torch_neuron.compile"):
        assert_same(train(True, steps=2), eager)
    logged = " ".join(r.getMessage() for r in caplog.records)
    assert "corrupt (checksum mismatch)" in logged and "nrn_graph_deserialize" in logged
    s = torch_neuron.compile_stats()
    assert s["cache_corrupt"] == 2 and s["cache_hits"] == 0 and s["captures"] == 2
    assert s["cache_writes"] == 2 and s["eager_graphs"] == 0
    # rebuilt entries are sound: a new process-like start hits both
    torch._dynamo.reset()
    torch_neuron.reset_compile_stats()
    assert_same(train(True, steps=2), eager)
    s = torch_neuron.compile_stats()
    assert s["cache_hits"] == 2 and s["captures"] == 0 and s["cache_corrupt"] == 0


def test_uncapturable_graph_runs_eagerly():
    """nonzero() reads the card's results on the host: no capture; the graph
    runs through eager neuron operations, with a warning and a count."""
    x = torch.tensor([[0.0, 1.5, -2.0], [3.0, 0.0, 0.25]])

    def f(t):
        idx = t.nonzero()
        return (t * 2).sum() + idx.sum()

    with torch._dynamo.config.patch(capture_dynamic_output_shape_ops=True):
        g = torch.compile(f, backend="neuron")
        with pytest.warns(UserWarning, match="runs through eager neuron operations"):
            got = g(x.to(N))
        again = g(x.to(N))
    assert got.cpu() == f(x) and again.cpu() == f(x)
    s = torch_neuron.compile_stats()
    assert s["eager_graphs"] == 1 and s["captures"] == 0 and s["eager_calls"] == 2
    (reason,) = s["eager_fallbacks"].values()
    assert "captur" in reason


def test_random_graph_runs_eagerly():
    """dropout (p > 0) draws random numbers: a kernel would replay one draw."""
    def f(t):
        return F.dropout(t, 0.5, training=True) * 2

    x = torch.rand(64, 64).add_(1)
    g = torch.compile(f, backend="neuron")
    with pytest.warns(UserWarning, match="random"):
        a = g(x.to(N)).cpu()
    b = g(x.to(N)).cpu()
    for out in (a, b):
        kept = out != 0
        assert 0 < kept.sum() < x.numel()
        assert torch.equal(out[kept], (x * 4)[kept])
    assert not torch.equal(a, b)  # two draws
    s = torch_neuron.compile_stats()
    assert s["eager_graphs"] == 1 and s["captures"] == 0


def _forward(fn, batches, mark=False):
    outs = []
    with torch.no_grad():
        for b in batches:
            x = torch.linspace(-1, 1, b * 16).reshape(b, 16).to(N)
            if mark:
                torch._dynamo.mark_dynamic(x, 0)
            outs.append(fn(x).cpu())
    return outs


def test_dynamic_batch_without_recompiles(monkeypatch):
    """dynamic=True: one dynamo graph; a kernel per concrete batch size,
    at most TORCH_NEURON_KERNELS_PER_GRAPH of them (LRU)."""
    monkeypatch.setenv("TORCH_NEURON_KERNELS_PER_GRAPH", "2")
    monkeypatch.setenv("TORCH_NEURON_COMPILE_CACHE", "0")
    model = mlp()
    batches = [4, 7, 9, 4, 9]
    want = _forward(model, batches)
    got = _forward(torch.compile(model, backend="neuron", dynamic=True), batches)
    for g, w in zip(got, want):
        assert torch.equal(g, w)
    s = torch_neuron.compile_stats()
    assert s["dynamo_graphs"] == 1 and s["dynamo_recompiles"] == 0
    # 4, 7, 9 captured; 4 again after its eviction (bound 2); 9 is held
    assert s["captures"] == 4 and s["kernel_evictions"] == 2 and s["launches"] == 5
    assert list(s["kernels_per_graph"].values()) == [2]


def test_mark_dynamic_batch_without_recompiles():
    model = mlp()
    batches = [5, 6, 5]
    want = _forward(model, batches)
    got = _forward(torch.compile(model, backend="neuron"), batches, mark=True)
    for g, w in zip(got, want):
        assert torch.equal(g, w)
    s = torch_neuron.compile_stats()
    assert s["dynamo_graphs"] == 1 and s["dynamo_recompiles"] == 0
    assert s["captures"] == 2 and s["launches"] == 3 and s["eager_graphs"] == 0


@pytest.mark.slow
def test_compiled_optimizer_step_updates_in_its_kernel():
    """torch.compile(opt.step): the in-place updates of the parameters and
    momentum buffers stay in the inference graph (its kernel writes its
    arguments); the parameters equal eager SGD's exactly."""
    copies = []

    def run(compiled):
        model = mlp()
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        step = torch.compile(opt.step, backend="neuron") if compiled else opt.step
        x = torch.linspace(-1, 1, 8 * 16).reshape(8, 16).to(N)
        for i in range(3):
            opt.zero_grad()
            model(x).square().mean().backward()
            if compiled and i == 2:
                cpu = torch.profiler.ProfilerActivity.CPU
                with torch.profiler.profile(activities=[cpu]) as prof:
                    step()
                copies.extend(e for e in prof.events() if e.name == "aten::copy_")
            else:
                step()
        return [p.detach().cpu() for p in model.parameters()]

    eager = run(False)
    torch_neuron.reset_compile_stats()
    for p, q in zip(run(True), eager):
        assert torch.equal(p, q)
    # the updates are the kernel's writes, not copy_ calls after it
    assert copies == []
    s = torch_neuron.compile_stats()
    assert s["eager_graphs"] == 0 and s["captures"] >= 1
    assert all(name.startswith("inference") for name in s["kernels_per_graph"])
    # one launch per step: no eager copy_ of each updated tensor after it
    assert s["launches"] == 3

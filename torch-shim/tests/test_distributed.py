# SPDX-License-Identifier: MIT
"""torch.distributed backend "neuron" on 2 cards (docs/distributed.md).

Two worker processes (ranks 0 and 1, cards neuron:0 and neuron:1) are
started once for the module -- one process imports PyTorch (a minute of
CPU under TCG), then forks the second before either touches a card -- and
join init_process_group("neuron"); every test sends the name of a check_*
function below to both, which run it together and reply.
For the two-node checks the same workers leave that group and join a new
one as nodes of their own (importing PyTorch again would cost ~25 s).
A check also fails when an operator fell back to the CPU inside it (the
workers are not this pytest process, so they count fallbacks themselves).

Equality: on 2 ranks each element of a reduction is one operation on two
values (rounded once to the dtype), so the collectives must equal the CPU
reference bit for bit. Training (DDP, FSDP2) sums the gradients in another
order than one card does, so it agrees to float32 rounding carried through
the steps: relative loss difference <= 1e-4 (examples/ddp.py).
"""
import json
import os
import signal
import socket
import subprocess
import sys
import time
import traceback

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(HERE, "..", "..", "examples")
WORLD = 2
RTOL_TRAINING = 1e-4
MARK = "@@neuron-worker@@ "
# FSDP2's copy-in/out operators (Python-defined in PyTorch 2.6, kernels for
# CPU and CUDA only) run through the shim's visible CPU fallback: counted,
# allowed here, listed in docs/distributed.md's limits.
ALLOWED_FALLBACKS = {"check_fsdp2_mlp": {"fsdp::all_gather_copy_in", "fsdp::chunk_cat",
                                         "fsdp::split_with_sizes_copy"}}

# ---- the checks (run inside both workers) ---------------------------------


def _data(rank, shape, dtype, seed=0):
    import torch
    g = torch.Generator().manual_seed(1000 * seed + rank)
    return torch.randn(shape, generator=g).to(dtype)


def _cpu_reduce(op, parts, dtype):
    """Reference: two ranks' values reduced once, rounded to @dtype; AVG is
    the sum (rounded) halved (exact in binary)."""
    import torch
    import torch.distributed as dist
    a, b = (p.float() for p in parts)
    if op in (dist.ReduceOp.SUM, dist.ReduceOp.AVG):
        r = (a + b).to(dtype)
        return (r.float() / 2).to(dtype) if op == dist.ReduceOp.AVG else r
    if op == dist.ReduceOp.PRODUCT:
        return (a * b).to(dtype)
    return (torch.maximum(a, b) if op == dist.ReduceOp.MAX else torch.minimum(a, b)).to(dtype)


def _dtypes():
    import torch
    return [torch.float32, torch.bfloat16, torch.float16]


def check_allreduce(rank, dev):
    import torch
    import torch.distributed as dist
    ops = [dist.ReduceOp.SUM, dist.ReduceOp.AVG, dist.ReduceOp.PRODUCT,
           dist.ReduceOp.MAX, dist.ReduceOp.MIN]
    for dtype in _dtypes():
        for shape in [(1,), (1000,), (3, 4097)]:
            for i, op in enumerate(ops):
                parts = [_data(r, shape, dtype, seed=i) for r in range(WORLD)]
                t = parts[rank].to(dev)
                dist.all_reduce(t, op=op)
                ref = _cpu_reduce(op, parts, dtype)
                assert torch.equal(t.cpu(), ref), f"all_reduce {op} {dtype} {shape}"


def check_allreduce_coalesced_buckets(rank, dev):
    """Several tensors in one call (what DDP's buckets amount to)."""
    import torch
    import torch.distributed as dist
    parts = [[_data(r, (n,), torch.float32, seed=n) for n in (5, 300, 7000)]
             for r in range(WORLD)]
    mine = [p.to(dev) for p in parts[rank]]
    dist.all_reduce_coalesced(mine)
    for j, t in enumerate(mine):
        ref = parts[0][j] + parts[1][j]
        assert torch.equal(t.cpu(), ref), f"coalesced tensor {j}"


def check_broadcast_gather_scatter(rank, dev):
    import torch
    import torch.distributed as dist
    for dtype in _dtypes() + [torch.int64]:
        parts = [_data(r, (2, 513), torch.float32, seed=7).mul(100).to(dtype)
                 for r in range(WORLD)]
        for root in range(WORLD):
            t = parts[rank].to(dev)
            dist.broadcast(t, src=root)
            assert torch.equal(t.cpu(), parts[root]), f"broadcast {dtype} root {root}"
        outs = [torch.empty_like(parts[0]).to(dev) for _ in range(WORLD)]
        dist.all_gather(outs, parts[rank].to(dev))
        for r in range(WORLD):
            assert torch.equal(outs[r].cpu(), parts[r]), f"all_gather {dtype}"
        out = torch.empty((WORLD * 2, 513), dtype=dtype, device=dev)
        dist.all_gather_into_tensor(out, parts[rank].to(dev))
        assert torch.equal(out.cpu(), torch.cat(parts)), f"all_gather_into_tensor {dtype}"
        out = torch.empty(WORLD * 2 * 513, dtype=dtype, device=dev)
        inp = torch.cat([p.flatten() + 1000 * rank for p in parts]).to(dev)
        dist.all_to_all_single(out, inp)
        n = 2 * 513
        ref = torch.cat([torch.cat([p.flatten() + 1000 * r for p in parts])[rank * n:(rank + 1) * n]
                         for r in range(WORLD)])
        assert torch.equal(out.cpu(), ref), f"all_to_all_single {dtype}"
    for dtype in _dtypes():
        for op in (dist.ReduceOp.SUM, dist.ReduceOp.AVG, dist.ReduceOp.MAX):
            parts = [_data(r, (WORLD * 1031,), dtype, seed=3) for r in range(WORLD)]
            ref = _cpu_reduce(op, parts, dtype).view(WORLD, -1)[rank]
            out = torch.empty(1031, dtype=dtype, device=dev)
            dist.reduce_scatter_tensor(out, parts[rank].to(dev), op=op)
            assert torch.equal(out.cpu(), ref), f"reduce_scatter_tensor {op} {dtype}"
            out = torch.empty(1031, dtype=dtype, device=dev)
            dist.reduce_scatter(out, list(parts[rank].to(dev).view(WORLD, -1).unbind(0)), op=op)
            assert torch.equal(out.cpu(), ref), f"reduce_scatter {op} {dtype}"


def check_rooted(rank, dev):
    """reduce, gather and scatter from each root, several dtypes; a
    reduce leaves the other ranks' tensors as they were."""
    import torch
    import torch.distributed as dist
    for dtype in _dtypes() + [torch.int64, torch.bool]:
        parts = [_data(r, (3, 1001), torch.float32, seed=21).mul(50).to(dtype)
                 for r in range(WORLD)]
        for root in range(WORLD):
            outs = [torch.empty_like(parts[0]).to(dev) for _ in range(WORLD)]
            dist.gather(parts[rank].to(dev), outs if rank == root else None, dst=root)
            if rank == root:
                for r in range(WORLD):
                    assert torch.equal(outs[r].cpu(), parts[r]), f"gather {dtype} root {root}"
            out = torch.empty_like(parts[0]).to(dev)
            src = [(p + 7 * r if dtype != torch.bool else p).to(dev)
                   for r, p in enumerate(parts)]
            dist.scatter(out, src if rank == root else None, src=root)
            want = parts[rank] + 7 * rank if dtype != torch.bool else parts[rank]
            assert torch.equal(out.cpu(), want), f"scatter {dtype} root {root}"
    for dtype in _dtypes():
        for op in (dist.ReduceOp.SUM, dist.ReduceOp.AVG, dist.ReduceOp.MAX):
            parts = [_data(r, (5000,), dtype, seed=23) for r in range(WORLD)]
            for root in range(WORLD):
                t = parts[rank].to(dev)
                dist.reduce(t, dst=root, op=op)
                want = _cpu_reduce(op, parts, dtype) if rank == root else parts[rank]
                assert torch.equal(t.cpu(), want), f"reduce {op} {dtype} root {root}"


def _int_reduce(op, parts):
    import functools
    import torch
    import torch.distributed as dist
    if parts[0].dtype == torch.bool:
        any_ = op in (dist.ReduceOp.SUM, dist.ReduceOp.MAX, dist.ReduceOp.BOR)
        if op == dist.ReduceOp.BXOR:
            return functools.reduce(torch.bitwise_xor, parts)
        return functools.reduce(torch.logical_or if any_ else torch.logical_and, parts)
    fn = {dist.ReduceOp.SUM: torch.add, dist.ReduceOp.PRODUCT: torch.mul,
          dist.ReduceOp.MIN: torch.minimum, dist.ReduceOp.MAX: torch.maximum,
          dist.ReduceOp.BAND: torch.bitwise_and, dist.ReduceOp.BOR: torch.bitwise_or,
          dist.ReduceOp.BXOR: torch.bitwise_xor}[op]
    return functools.reduce(fn, parts).to(parts[0].dtype)


def check_integer_and_bitwise(rank, dev):
    """Integer and bool reductions (what the links do not reduce: gathered
    and folded on the card) equal the CPU's: all_reduce, reduce_scatter,
    reduce."""
    import torch
    import torch.distributed as dist
    ops = [dist.ReduceOp.SUM, dist.ReduceOp.PRODUCT, dist.ReduceOp.MIN, dist.ReduceOp.MAX,
           dist.ReduceOp.BAND, dist.ReduceOp.BOR, dist.ReduceOp.BXOR]
    for dtype in (torch.int64, torch.int32, torch.uint8, torch.int8, torch.bool):
        g = [torch.Generator().manual_seed(100 + r) for r in range(WORLD)]
        hi = 2 if dtype == torch.bool else 100
        parts = [torch.randint(0, hi, (WORLD * 777,), generator=g[r]).to(dtype)
                 for r in range(WORLD)]
        for op in ops:
            ref = _int_reduce(op, parts)
            t = parts[rank].to(dev)
            dist.all_reduce(t, op=op)
            assert torch.equal(t.cpu(), ref), f"all_reduce {op} {dtype}"
            out = torch.empty(777, dtype=dtype, device=dev)
            dist.reduce_scatter_tensor(out, parts[rank].to(dev), op=op)
            assert torch.equal(out.cpu(), ref.view(WORLD, -1)[rank]), \
                f"reduce_scatter_tensor {op} {dtype}"
            t = parts[rank].to(dev)
            dist.reduce(t, dst=1, op=op)
            assert torch.equal(t.cpu(), ref if rank == 1 else parts[rank]), f"reduce {op} {dtype}"


def check_premul_sum(rank, dev):
    """PREMUL_SUM (FSDP's gradient pre-division): each rank's tensor times
    the factor (a double or a 1-element tensor), then summed."""
    import torch
    import torch.distributed as dist
    for dtype in _dtypes():
        parts = [_data(r, (WORLD * 513,), dtype, seed=31) for r in range(WORLD)]
        for factor in (0.25, torch.tensor([0.5], dtype=dtype, device=dev)):
            f = factor if isinstance(factor, float) else float(factor.item())
            scaled = [(p * f).to(dtype) for p in parts]
            ref = _cpu_reduce(dist.ReduceOp.SUM, scaled, dtype)
            op = dist._make_nccl_premul_sum(factor)
            t = parts[rank].to(dev)
            dist.all_reduce(t, op=op)
            assert torch.equal(t.cpu(), ref), f"all_reduce PREMUL_SUM {dtype} {factor}"
            out = torch.empty(513, dtype=dtype, device=dev)
            inp = parts[rank].to(dev)
            dist.reduce_scatter_tensor(out, inp, op=op)
            assert torch.equal(out.cpu(), ref.view(WORLD, -1)[rank])
            assert torch.equal(inp.cpu(), parts[rank]), "reduce_scatter changed its input"


def check_all_to_all_unequal(rank, dev):
    """all_to_all_single with split sizes (empty blocks too, rows of 2-D
    tensors) and all_to_all with lists of any sizes: rank q's block for
    rank r is rows of value 100 q + r."""
    import torch
    import torch.distributed as dist
    def rows(q, r):
        return [[0, 3], [5, 1]][q][r]
    for dtype in (torch.float32, torch.bfloat16, torch.int64, torch.uint8):
        send = [rows(rank, r) for r in range(WORLD)]
        recv = [rows(q, rank) for q in range(WORLD)]
        inp = torch.cat([torch.full((send[r], 3), 100 * rank + r) for r in range(WORLD)])
        out = torch.full((sum(recv), 3), -1).to(dtype).to(dev)
        dist.all_to_all_single(out, inp.to(dtype).to(dev), recv, send)
        want = torch.cat([torch.full((recv[q], 3), 100 * q + rank) for q in range(WORLD)])
        assert torch.equal(out.cpu(), want.to(dtype)), f"all_to_all_single splits {dtype}"
        ins = [torch.full((send[r] + 1, 2), 100 * rank + r).to(dtype).to(dev)
               for r in range(WORLD)]
        outs = [torch.empty((recv[q] + 1, 2), dtype=dtype, device=dev) for q in range(WORLD)]
        dist.all_to_all(outs, ins)
        for q in range(WORLD):
            assert torch.equal(outs[q].cpu(), torch.full((recv[q] + 1, 2), 100 * q + rank)
                               .to(dtype)), f"all_to_all {dtype} from {q}"


def check_functional_collectives(rank, dev):
    """torch.distributed._functional_collectives (what DTensor and compiled
    code call): all_reduce, all_gather_tensor, reduce_scatter_tensor and
    the coalesced forms, on the card."""
    import torch
    import torch.distributed as dist
    import torch.distributed._functional_collectives as funcol
    group = dist.group.WORLD
    parts = [_data(r, (WORLD * 4, 6), torch.float32, seed=41) for r in range(WORLD)]
    x = parts[rank].to(dev)
    got = funcol.all_reduce(x, "sum", group)
    assert torch.equal(got.cpu(), parts[0] + parts[1])
    got = funcol.all_gather_tensor(x, 0, group)
    assert torch.equal(got.cpu(), torch.cat(parts))
    got = funcol.all_gather_tensor(x, 1, group)
    assert torch.equal(got.cpu(), torch.cat(parts, 1))
    got = funcol.reduce_scatter_tensor(x, "sum", 0, group)
    assert torch.equal(got.cpu(), (parts[0] + parts[1]).chunk(WORLD)[rank])
    ys = [x, x[:2].contiguous() * 3]
    got = funcol.all_gather_into_tensor_coalesced(ys, group)
    assert torch.equal(got[0].cpu(), torch.cat(parts))
    assert torch.equal(got[1].cpu(), torch.cat([p[:2] * 3 for p in parts]))
    got = funcol.reduce_scatter_tensor_coalesced(ys, "sum", [0, 0], group)
    assert torch.equal(got[0].cpu(), (parts[0] + parts[1]).chunk(WORLD)[rank])
    assert torch.equal(got[1].cpu(), (parts[0][:2] * 3 + parts[1][:2] * 3).chunk(WORLD)[rank])
    # rank 0 sends 1 row to itself and 7 to rank 1, rank 1 3 and 5
    got = funcol.all_to_all_single(x, [1, 3] if rank == 0 else [7, 5],
                                   [1, 7] if rank == 0 else [3, 5], group)
    want = torch.cat([parts[0][:1], parts[1][:3]]) if rank == 0 else \
        torch.cat([parts[0][1:], parts[1][3:]])
    assert torch.equal(got.cpu(), want)


def check_compiled_collectives(rank, dev):
    """torch.compile(backend="neuron") of a function with functional
    collectives between matmuls: one dynamo graph (no break), cut at the
    collectives into compiled kernels (split.py), the collectives issued
    on the card's stream between them; the results equal eager's exactly,
    and a second call launches the kernels without capturing again."""
    import torch
    import torch.distributed as dist
    import torch.distributed._functional_collectives as funcol
    import torch_neuron
    group = dist.group.WORLD

    def layer(x, w1, w2):
        h = torch.relu(x @ w1)
        h = funcol.all_reduce(h, "sum", group)
        g = funcol.all_gather_tensor(h * 2, 0, group)
        return funcol.reduce_scatter_tensor(torch.tanh(g @ w2), "sum", 0, group) + 1

    g = torch.Generator().manual_seed(50 + rank)
    x, w1, w2 = (torch.randn(s, generator=g).to(dev) for s in ((8, 16), (16, 32), (32, 4)))
    want = layer(x, w1, w2)
    torch._dynamo.reset()
    torch_neuron.reset_compile_stats()
    fn = torch.compile(layer, backend="neuron")
    got = fn(x, w1, w2)
    assert torch.equal(got.cpu(), want.cpu())
    st = torch_neuron.compile_stats()
    assert st["dynamo_graphs"] == 1, st
    assert st["split_graphs"] == 1 and st["split_segments"] == 4, st
    assert st["captures"] == 4 and st["eager_graphs"] == 0, st
    x2 = x + 1
    assert torch.equal(fn(x2, w1, w2).cpu(), layer(x2, w1, w2).cpu())
    assert torch_neuron.compile_stats()["captures"] == 4


def check_dtensor_random(rank, dev):
    """A random operator on a sharded DTensor runs on the card: DTensor's
    RNG tracker gives each shard its offset in the card generator's
    counter (the 16-byte seed/offset state), so with one counter per
    element the shards together are the one-card draw of the whole."""
    import torch
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import Shard, distribute_tensor
    from torch.distributed.tensor._random import manual_seed
    mesh = init_device_mesh("neuron", (WORLD,))
    manual_seed(7, mesh)
    d = distribute_tensor(torch.zeros(8, 16, device=dev), mesh, [Shard(0)])
    d.uniform_()
    full = d.full_tensor().cpu()
    g = torch.Generator(device=dev).manual_seed(7)
    assert torch.equal(full, torch.rand(8, 16, generator=g, device=dev).cpu())
    assert not torch.equal(full[:4], full[4:])


def check_send_recv_barrier(rank, dev):
    import torch
    import torch.distributed as dist
    x = _data(0, (4096,), torch.float32, seed=11)
    if rank == 0:
        dist.send(x.to(dev), dst=1)
        back = torch.empty(4096, device=dev)
        dist.recv(back, src=1)
        assert torch.equal(back.cpu(), x * 2)
    else:
        # into a leaf that requires grad, as a pipeline stage's receive
        # buffer is: the data arrives, and the tensor stays a leaf
        got = torch.empty(4096, device=dev, requires_grad=True)
        dist.recv(got, src=0)
        assert got.is_leaf and got.grad_fn is None
        assert torch.equal(got.detach().cpu(), x)
        dist.send(got.detach() * 2, dst=0)
    # barrier: rank 1 arrives 1 s late; rank 0 must wait for it
    if rank == 1:
        time.sleep(1.0)
    t0 = time.monotonic()
    dist.barrier()
    if rank == 0:
        assert time.monotonic() - t0 > 0.5, "barrier returned before rank 1 reached it"


def check_recv_any_source(rank, dev):
    """recv() with no source takes what the first sender sends and returns
    its rank (over the links on one node; Gloo's recvAnysource across)."""
    import torch
    import torch.distributed as dist
    x = _data(0, (3000,), torch.float32, seed=12)
    if rank == 1:
        dist.send(x.to(dev), dst=0)
    else:
        got = torch.empty(3000, device=dev)
        assert dist.recv(got) == 1
        assert torch.equal(got.cpu(), x)
    dist.barrier()


def check_async_work(rank, dev):
    """The Work of a collective completes later, by itself. Issuing returns
    once both ranks issued; the card work queued before the collective on
    the stream (a chain of matmuls) keeps it from being complete then."""
    import torch
    import torch.distributed as dist
    # about 17 GFLOP, 0.1 s of card time: longer than the two ranks take to
    # meet (the all-reduce is issued once both have called it)
    x = torch.randn(1024, 1024, device=dev) / 1024 ** 0.5
    y = x
    for _ in range(8):
        y = y @ x
    t = torch.full((1 << 20,), float(rank + 1), device=dev)
    work = dist.all_reduce(t, async_op=True)
    fut = work.get_future()
    assert not work.is_completed(), "complete before the work queued ahead of it"
    assert not fut.done()
    assert work.wait()
    assert work.is_completed() and fut.done()
    assert torch.equal(t.cpu(), torch.full((1 << 20,), 3.0))
    value = fut.wait()
    assert isinstance(value, list) and value[0].data_ptr() == t.data_ptr()
    # is_completed turns true without wait(): polling only
    t2 = torch.ones(8, device=dev)
    w2 = dist.all_reduce(t2, async_op=True)
    deadline = time.monotonic() + 60
    while not w2.is_completed():
        assert time.monotonic() < deadline, "work never completed"
        time.sleep(0.01)
    assert torch.equal(t2.cpu(), torch.full((8,), 2.0))


def check_errors(rank, dev):
    """Unsupported arguments fail naming op and dtype, before anything is
    issued (so both ranks stay in step); the group works afterwards."""
    import torch
    import torch.distributed as dist

    def raises(fn, *words):
        try:
            fn()
        except (RuntimeError, ValueError) as e:
            for w in words:
                assert w in str(e), f"{w!r} not in {e}"
            return
        raise AssertionError(f"no error for {words}")

    u16 = torch.empty(4, dtype=torch.uint16).to(dev)  # storage only on the card
    raises(lambda: dist.all_reduce(u16),
           "allreduce", "UInt16")
    raises(lambda: dist.all_reduce(torch.ones(4, dtype=torch.int64, device=dev),
                                   op=dist.ReduceOp.AVG), "allreduce", "AVG", "Long")
    raises(lambda: dist.gather(torch.ones(4, device=dev), None, dst=2), "gather", "root")
    raises(lambda: dist.all_reduce(torch.ones(4, 4, device=dev)[:, ::2]),
           "allreduce", "contiguous")
    raises(lambda: dist.all_reduce(torch.ones(4, device=dev), op=dist.ReduceOp.BAND),
           "allreduce", "BAND")
    raises(lambda: dist.reduce_scatter_tensor(u16[:2], u16), "reduce_scatter_tensor", "UInt16")
    raises(lambda: dist.all_reduce(torch.ones(4)), "cpu")  # no CPU backend in this group
    t = torch.ones(4, device=dev)
    dist.all_reduce(t)
    assert torch.equal(t.cpu(), torch.full((4,), 2.0))
    # float64 is reduced on the links in float64: 0.1 + 0.1 is float64's 0.2
    t = torch.full((4,), 0.1, dtype=torch.float64, device=dev)
    dist.all_reduce(t)
    assert torch.equal(t.cpu(), torch.full((4,), 0.1 + 0.1, dtype=torch.float64))


def _train_compare(rank, dev, model, wrap_name, steps):
    import torch.distributed as dist
    sys.path.insert(0, EXAMPLES)
    import ddp
    wrap = ddp.fsdp_wrap(WORLD) if wrap_name == "fsdp" else ddp.ddp_wrap(dev)
    losses, _ = ddp.train(model, steps, dev, rank, WORLD, wrap, quiet=True)
    if rank == 0:
        ref, _ = ddp.train(model, steps, dev, quiet=True)
        worst = max(abs(u - v) / abs(v) for u, v in zip(losses, ref))
        print(f"{wrap_name} {model}: largest relative loss difference {worst:.3g}",
              file=sys.stderr, flush=True)
        assert worst <= RTOL_TRAINING, (losses, ref)
        assert losses[-1] < losses[0], "did not train"
    dist.barrier()


def check_ddp_gpt(rank, dev):
    _train_compare(rank, dev, "gpt", "ddp", 6)


def check_fsdp2_mlp(rank, dev):
    import torch_neuron
    torch_neuron.reset_fallback_stats()
    _train_compare(rank, dev, "mlp", "fsdp", 8)
    # FSDP2's copy operators (fsdp::*) run on the card, not the CPU
    fsdp_on_cpu = {k: v for k, v in torch_neuron.fallback_stats().items() if "fsdp" in k}
    assert not fsdp_on_cpu, fsdp_on_cpu


# Tensor parallelism (examples/tp.py) splits each matrix product's sum in
# two partial sums added over the ranks: the losses agree with one card's
# to float32 rounding carried through AdamW (2.6e-7 in 6 steps on the CPU
# with Gloo), no looser than that.
RTOL_TP = 1e-5


def _tp_compare(rank, dev, steps, compile=False, layers=2):
    """examples/tp.py's TP + SP training of its Llama over both cards (a 1-D
    device mesh over the workers' group), then this rank's one-card training
    of the same model on the same batches: the same losses, and it learned."""
    import torch
    import torch.distributed as dist
    sys.path.insert(0, EXAMPLES)
    import tp
    import torch_neuron
    if compile:
        torch._dynamo.reset()
        torch_neuron.reset_compile_stats()
    try:
        losses = tp.train_tp(steps, dev, "neuron", rank, WORLD, compile=compile,
                             layers=layers)
        st = torch_neuron.compile_stats()
        # the reference eager: compiled graphs give eager's numbers on the card
        ref = tp.train_single(steps, dev, layers=layers)
    finally:
        if compile:
            torch._dynamo.reset()
    if compile:
        # one dynamo graph (no break at the collectives), its forward and
        # backward cut at them into kernels, none eager, and the collectives
        # the backward would have issued again for nothing dropped
        assert st["dynamo_graphs"] == 1 and st["eager_graphs"] == 0, st
        assert st["split_graphs"] == 2 and st["split_segments"] > 4, st
        assert st["dropped_collectives"] > 0, st
    worst = max(abs(u - v) / abs(v) for u, v in zip(losses, ref))
    if rank == 0:
        print(f"tp{' compiled' if compile else ''} llama: largest relative loss difference "
              f"{worst:.3g}", file=sys.stderr, flush=True)
    assert worst <= RTOL_TP, (losses, ref)
    assert losses[-1] < losses[0], f"did not train: {losses}"
    dist.barrier()


def check_tp_llama(rank, dev):
    _tp_compare(rank, dev, 6)


def check_tp_llama_compiled(rank, dev):
    """The TP model's loss under torch.compile(backend="neuron"): one dynamo
    graph with its collectives in it (no graph break), its ATen graphs cut
    around them into kernels (check_compiled_collectives); the losses those
    of the one-card eager training. One block: dynamo's tracing of DTensor
    is most of the time under TCG, and a block has every collective."""
    _tp_compare(rank, dev, 3, compile=True, layers=1)


def check_dcp_tp_to_one_card(rank, dev):
    """torch.distributed.checkpoint: the TP-sharded model and AdamW state of
    both cards saved (each rank writes its shards; DCP's planning goes
    through the object collectives, gather and scatter on the card), then
    loaded into the unsplit model on each card alone (DCP reshards) and
    trained on: the same losses as the TP training after the save."""
    import tempfile
    import torch.distributed as dist
    import torch.distributed.checkpoint as dcp
    from torch.distributed.checkpoint.state_dict import get_state_dict, set_state_dict
    sys.path.insert(0, EXAMPLES)
    import gpt2
    import tp
    from dcp import step as train_step  # examples/dcp.py

    def step(model, opt, batch):
        return train_step(model, opt, batch, dev)

    model, batch_of = tp.setup(dev)
    tp.parallelize(model, tp.make_mesh("neuron", WORLD))
    opt = gpt2.optimizer(model, lr=3e-3)
    for s in range(2):
        step(model, opt, batch_of(s))
    path = [tempfile.mkdtemp(prefix="neuron-dcp-") if rank == 0 else None]
    dist.broadcast_object_list(path, src=0)
    msd, osd = get_state_dict(model, opt)
    dcp.save({"model": msd, "optim": osd}, checkpoint_id=path[0])
    after = [step(model, opt, batch_of(s)) for s in (2, 3)]

    one, batch_one = tp.setup(dev)
    opt1 = gpt2.optimizer(one, lr=3e-3)
    for s in range(2):
        batch_one(s)  # the same batches from here on
    msd1, osd1 = get_state_dict(one, opt1)
    dcp.load({"model": msd1, "optim": osd1}, checkpoint_id=path[0])
    set_state_dict(one, opt1, model_state_dict=msd1, optim_state_dict=osd1)
    got = [step(one, opt1, batch_one(s)) for s in (2, 3)]
    worst = max(abs(u - v) / abs(v) for u, v in zip(got, after))
    assert worst <= RTOL_TP, (got, after)
    dist.barrier()
    if rank == 0:
        import shutil
        shutil.rmtree(path[0])


def check_moe_expert_parallel(rank, dev):
    """examples/moe.py: a mixture-of-experts transformer with its 4 experts
    split over the 2 cards, tokens dispatched to their expert's card and
    back by differentiable all_to_all_single with unequal split sizes;
    the losses equal the one-card training's within 1e-5, and it learns."""
    import torch.distributed as dist
    import torch_neuron.distributed as nd
    sys.path.insert(0, EXAMPLES)
    import moe
    nd.reset_stats()
    losses = moe.train(6, dev, 4, rank, WORLD)
    assert nd.stats()["card_collectives"] > 0 and nd.stats()["gloo_collectives"] == 0
    ref = moe.train(6, dev, 4)
    worst = max(abs(u - v) / abs(v) for u, v in zip(losses, ref))
    if rank == 0:
        print(f"moe: largest relative loss difference {worst:.3g}", file=sys.stderr, flush=True)
    assert worst <= RTOL_TP, (losses, ref)
    assert losses[-1] < losses[0], f"did not train: {losses}"
    dist.barrier()


def check_pipeline(rank, dev):
    """examples/pp.py: the MLP split in two pipeline stages, rank r = stage
    r on its card, trained with ScheduleGPipe and with Schedule1F1B over 4
    microbatches: the losses equal the unsplit model's on one card within
    1e-5, and it learns. 1F1B has both ranks send to each other first
    (fwd_sends + bwd_recvs against bwd_sends + fwd_recvs): the backend
    issues queued sends and recvs in one order on both ranks."""
    import torch
    import torch.distributed as dist
    sys.path.insert(0, EXAMPLES)
    import pp
    # the crossed order by itself: each rank sends to the other first
    mine = torch.full((1000,), float(rank + 1), device=dev)
    got = torch.empty(1000, device=dev)
    works = [dist.isend(mine, 1 - rank), dist.irecv(got, 1 - rank)]
    works[-1].wait()  # issues both, in the order the other rank uses too
    works[0].wait()
    assert torch.equal(got.cpu(), torch.full((1000,), float(2 - rank)))
    ref = pp.train_single(4, dev)
    for schedule in ("gpipe", "1f1b"):
        losses = pp.train_pp(4, dev, rank, WORLD, schedule, microbatches=4)
        worst = max(abs(u - v) / abs(v) for u, v in zip(losses, ref))
        if rank == 0:
            print(f"pp {schedule}: largest relative loss difference {worst:.3g}",
                  file=sys.stderr, flush=True)
        assert worst <= RTOL_TP, (schedule, losses, ref)
        assert losses[-1] < losses[0], f"{schedule} did not train: {losses}"
    dist.barrier()


def check_unordered_mesh_refused(rank, dev):
    """A neuron DeviceMesh listing a dimension's ranks out of order fails
    loudly: PyTorch's groups sort their ranks while DTensor takes the mesh
    coordinate for the group rank, so shards would land on the wrong ranks
    (with FSDP2 over TP: training on wrong weights)."""
    import torch.distributed as dist
    from torch.distributed.device_mesh import DeviceMesh
    try:
        DeviceMesh("neuron", [1, 0])
    except ValueError as e:
        assert "lists the ranks [1, 0] out of order" in str(e), e
    else:
        raise AssertionError("DeviceMesh('neuron', [1, 0]) was not refused")
    assert DeviceMesh("neuron", [0, 1]).get_coordinate() == [rank]
    dist.barrier()


def check_stats(rank, dev):
    import torch
    import torch.distributed as dist
    import torch_neuron.distributed as nd
    nd.reset_stats()
    dist.all_reduce(torch.ones(1000, device=dev))
    s = nd.stats()
    assert s["card_collectives"] == 1 and s["card_bytes"] == 4000, s
    assert s["gloo_collectives"] == 0, s  # one VM: no Gloo


def check_stats_nodes(rank, dev):
    """Across nodes an all-reduce is node-local card work plus one Gloo
    all-reduce of the leaders; the other collectives go through Gloo."""
    import torch
    import torch.distributed as dist
    import torch_neuron.distributed as nd
    nd.reset_stats()
    dist.all_reduce(torch.ones(1000, device=dev))
    s = nd.stats()
    assert s["gloo_collectives"] == 1 and s["gloo_bytes"] == 4000, s
    nd.reset_stats()
    dist.broadcast(torch.ones(10, device=dev), src=0)
    assert nd.stats()["gloo_collectives"] == 1


# ---- the worker ------------------------------------------------------------


def _join(rank, port, nodes):
    """init_process_group("neuron") for this worker; @nodes: each rank a node
    of its own (TORCH_NEURON_NODE), the cross-node path."""
    import datetime
    import torch
    import torch.distributed as dist
    if nodes:
        os.environ["TORCH_NEURON_NODE"] = f"node{rank}"
        os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    os.environ.update(LOCAL_RANK=str(rank), RANK=str(rank), WORLD_SIZE=str(WORLD),
                      MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    # a rank whose check failed early leaves its peer in a collective: the
    # peer's fails after this timeout instead of hanging the run
    dist.init_process_group("neuron", timeout=datetime.timedelta(seconds=180))
    dev = torch.device("neuron", torch.neuron.current_device())
    assert dev.index == rank
    return dev


def _workers(port, in_fd, out_fd):
    """Both ranks from one `import torch`: fork before any card is touched;
    the child is rank 1 on the pipes @in_fd/@out_fd, this process rank 0
    (it waits for rank 1, and fails if rank 1 did)."""
    import torch  # noqa: F401  (the import both ranks share)
    fds = [os.readlink(f"/proc/self/fd/{fd}") for fd in os.listdir("/proc/self/fd")
           if os.path.exists(f"/proc/self/fd/{fd}")]
    assert not [f for f in fds if f.startswith("/dev/accel")], \
        f"a card is open before the fork: {fds}"
    sys.stdout.flush()
    pid = os.fork()
    if pid == 0:
        os.dup2(in_fd, 0)
        os.dup2(out_fd, 1)
        os.close(in_fd)
        os.close(out_fd)
        code = 1
        try:
            _worker(1, port)
            code = 0
        finally:
            sys.stdout.flush()
            os._exit(code)
    os.close(in_fd)
    os.close(out_fd)
    _worker(0, port)
    _, status = os.waitpid(pid, 0)
    sys.exit(0 if os.waitstatus_to_exitcode(status) == 0 else 1)


def _worker(rank, port):
    import torch.distributed as dist
    import torch_neuron
    dev = _join(rank, port, nodes=False)
    _reply({"ready": rank})
    for line in sys.stdin:
        name = line.strip()
        if not name:
            break
        if name.startswith("@nodes "):  # leave the one-node group, join as two nodes
            try:
                dist.destroy_process_group()
                dev = _join(rank, int(name.split()[1]), nodes=True)
                _reply({"ok": True, "error": ""})
            except BaseException:
                _reply({"ok": False, "error": traceback.format_exc()})
            continue
        torch_neuron.reset_fallback_stats()
        try:
            globals()[name](rank, dev)
            fell = {op: n for op, n in torch_neuron.fallback_stats().items()
                    if op not in ALLOWED_FALLBACKS.get(name, ())}
            reply = {"ok": not fell, "error": f"CPU fallbacks: {fell}" if fell else ""}
        except BaseException:
            reply = {"ok": False, "error": traceback.format_exc()}
        _reply(reply)
    dist.destroy_process_group()


def _reply(obj):
    print(MARK + json.dumps(obj), flush=True)


def _read_reply(proc):
    """The worker's next reply (other output on its stdout is passed on)."""
    for line in proc.stdout:
        if line.startswith(MARK):
            return json.loads(line[len(MARK):])
        sys.stderr.write(line)
    return None


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class _Rank:
    """Pytest's end of one worker: what it reads and what it replies."""

    def __init__(self, stdin, stdout):
        self.stdin, self.stdout = stdin, stdout


class Workers:
    def __init__(self):
        port = _free_port()
        self.nodes = False
        # rank 1's pipes: the launcher (rank 0) gives them to the rank it forks
        in_r, in_w = os.pipe()
        out_r, out_w = os.pipe()
        from conftest import python_command  # not at the top: the workers run this file
        self.proc = subprocess.Popen(python_command() + [__file__, "--workers", str(port),
                                      str(in_r), str(out_w)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                     pass_fds=(in_r, out_w),
                                     # its own process group, so that rank 1,
                                     # which it forks, goes with it on a kill
                                     start_new_session=True)
        os.close(in_r)
        os.close(out_w)
        self.procs = [_Rank(self.proc.stdin, self.proc.stdout),
                      _Rank(open(in_w, "w"), open(out_r))]
        try:
            for p in self.procs:
                reply = _read_reply(p)
                assert reply and reply.get("ready") is not None, "worker did not start"
        except BaseException:
            self.close(timeout=0)
            raise

    def as_nodes(self):
        """From now on each rank is a node of its own (a new group)."""
        if not self.nodes:
            self.run(f"@nodes {_free_port()}")
            self.nodes = True

    def run(self, name):
        for p in self.procs:
            p.stdin.write(name + "\n")
            p.stdin.flush()
        replies = [_read_reply(p) for p in self.procs]
        errors = []
        for r, reply in enumerate(replies):
            if reply is None:
                errors.append(f"rank {r}: worker died (rank 0's exit status: "
                              f"{self.proc.poll()})")
                continue
            if not reply["ok"]:
                errors.append(f"rank {r}: {reply['error']}")
        assert not errors, "\n".join(errors)

    def close(self, timeout=120):
        """End both ranks: EOF on their stdin, @timeout seconds for rank 0
        to exit (it waits for rank 1), then a kill of what is left of their
        process group (rank 0 and the rank 1 it forked)."""
        for p in self.procs:
            if not p.stdin.closed:
                p.stdin.close()
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            pass
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass  # both have exited
        self.proc.wait()
        for p in self.procs:
            p.stdout.close()


@pytest.fixture(scope="module")
def workers():
    import torch
    if torch.neuron.device_count() < WORLD:
        pytest.skip(f"needs {WORLD} cards")
    w = Workers()
    yield w
    w.close()


ONE_NODE = ["check_allreduce", "check_allreduce_coalesced_buckets",
            "check_broadcast_gather_scatter", "check_rooted", "check_integer_and_bitwise",
            "check_premul_sum", "check_all_to_all_unequal", "check_functional_collectives",
            "check_compiled_collectives", "check_dtensor_random", "check_dcp_tp_to_one_card",
            "check_moe_expert_parallel", "check_unordered_mesh_refused",
            "check_send_recv_barrier", "check_recv_any_source", "check_async_work",
            "check_errors", "check_stats",
            "check_ddp_gpt", "check_fsdp2_mlp",
            "check_tp_llama", "check_tp_llama_compiled", "check_pipeline"]
TWO_NODES = ["check_allreduce", "check_allreduce_coalesced_buckets",
             "check_broadcast_gather_scatter", "check_rooted", "check_integer_and_bitwise",
             "check_premul_sum", "check_all_to_all_unequal", "check_functional_collectives",
             "check_send_recv_barrier", "check_recv_any_source", "check_errors",
             "check_stats_nodes", "check_ddp_gpt"]
# Model-sized runs (15-75 s each under TCG): make check runs a share of them.
SLOW = {"check_dcp_tp_to_one_card", "check_tp_llama", "check_tp_llama_compiled"}


def params(checks):
    return [pytest.param(c, marks=pytest.mark.slow) if c in SLOW else c for c in checks]


class TestOneNode:
    """2 ranks on 2 linked cards of this VM: libneuron collectives only."""

    @pytest.mark.parametrize("check", params(ONE_NODE))
    def test_check(self, workers, check):
        assert not workers.nodes, "run before TestTwoNodes (file order)"
        workers.run(check)


class TestTwoNodes:
    """2 ranks that call themselves nodes of their own (TORCH_NEURON_NODE):
    each node's communicator has one card and Gloo joins the nodes, the
    path taken across VMs."""

    @pytest.mark.parametrize("check", params(TWO_NODES))
    def test_check(self, workers, check):
        workers.as_nodes()
        workers.run(check)


def test_backend_registered():
    import torch.distributed as dist
    assert dist.Backend.NEURON == "neuron"
    assert dist.Backend.default_device_backend_map.get("neuron") == "neuron"


def test_torchrun_ddp_example():
    """The example under torchrun: DDP on 2 cards equals 1 card. It starts
    three more PyTorch processes (about a minute under TCG), so make check
    leaves it to make check-multicard (NEURON_TEST_TORCHRUN=1); make check's
    DDP check above runs the same training in the workers."""
    import torch
    if os.environ.get("NEURON_TEST_TORCHRUN") != "1":
        pytest.skip("torchrun launch: make check-multicard runs it (NEURON_TEST_TORCHRUN=1)")
    if torch.neuron.device_count() < WORLD:
        pytest.skip(f"needs {WORLD} cards")
    r = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--nproc-per-node",
                        str(WORLD), os.path.join(EXAMPLES, "ddp.py"), "--model", "mlp",
                        "--steps", "6", "--compare"],
                       capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "final loss" in r.stdout and ": OK" in r.stdout, r.stdout


if __name__ == "__main__" and len(sys.argv) == 5 and sys.argv[1] == "--workers":
    _workers(*map(int, sys.argv[2:]))

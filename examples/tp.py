# SPDX-License-Identifier: MIT
"""Tensor parallelism with sequence parallelism on several cards, with
DTensor (torch.distributed.tensor.parallel): examples/llama.py's Llama
(RMSNorm, RoPE, grouped-query attention, SwiGLU) trained as a character
model on gpt2.py's corpus, each layer's weights split over a 1-D device
mesh of all the ranks the way PyTorch's Llama TP example splits them:

  - wq, wk, wv and the MLP's w1 (gate) and w3 (up): ColwiseParallel, each
    rank holds some of the output features -- whole attention heads (its
    heads // world query heads and kv_heads // world key/value heads);
  - wo and the MLP's w2 (down): RowwiseParallel, the partial sums reduced
    and scattered over the sequence (output Shard(1));
  - the RMSNorms: SequenceParallel, each rank normalizes its slice of the
    sequence (the residual stream stays split over the sequence between
    the blocks); PrepareModuleInput all-gathers that slice before the
    attention and the MLP;
  - the token embedding: RowwiseParallel (vocabulary rows split), the
    output head: ColwiseParallel (vocabulary columns split), its logits
    gathered whole (or, with --loss-parallel, the cross-entropy taken on
    the vocabulary-split logits under loss_parallel()).

    torchrun --nproc-per-node 2 examples/tp.py --steps 20
    torchrun --nproc-per-node 2 examples/tp.py --steps 6 --compare
    torchrun --nproc-per-node 2 examples/tp.py --device cpu --compare   (Gloo)
    torchrun --nproc-per-node 2 examples/tp.py --steps 6 --bench        (ms per step)
    torchrun --nproc-per-node 4 examples/tp.py --dp 2 --compare          (FSDP2 x TP)

--dp N makes the mesh 2-D, (dp, tp) = (N, world // N) from
init_device_mesh: TP + SP within each row of the mesh as above, and FSDP2
(fully_shard) of every block and of the model over its columns, each
column's ranks taking their share of the batch's rows; the vocabulary is
padded to a multiple of the ranks (FSDP2 over TP shards evenly only), in
the one-card run of --compare too. On the card every
row and column must be a group of linked cards: on 4 cards that is the
`mesh` link topology (scripts/vm --topology mesh), whose every pair of
cards is linked; a ring of 4 has no 2 x 2 mesh with both dimensions in
rank order, which DTensor needs (docs/distributed.md, Limits).

Every rank builds the same seeded full model, then parallelize_module()
keeps its part (rank 0's copy scattered, DTensor's distribute_tensor);
every rank trains on the same whole batch (tensor parallelism splits the
model, not the data). --compare also trains the unsplit model on this
rank's device alone on the same batches and checks that every step's loss
agrees within --rtol: the split matrix products add their partial sums in
another order (two halves then a sum over the ranks), which moves the
results by float32 rounding only (2.6e-7 relative in 6 steps on the CPU).

--collectives prints the collectives parallelize_module() and one step
issue, as the profiler records them. On 2 ranks: a scatter from rank 0 of
each split weight (16; on the card also, once, a broadcast of the RNG
state: DTensor's RNG tracker); a forward of 5 reduce-scatters and 6
all-gathers (the functional collectives, which the backend receives as
reduce_scatter_tensor_coalesced and allgather_into_tensor_coalesced of
one tensor each), a backward of 5 and 5, and an optimizer step of 15
all-reduces: the RMSNorm weights' gradients stay Partial (pending sum)
and are summed again each time AdamW reads one. The 29-letter vocabulary
splits 15 + 14; DTensor pads the smaller part, so every collective moves
the same size on each rank.
"""
import argparse
import json
import os
import sys
import time
from contextlib import nullcontext

import torch
import torch.distributed as dist
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpt2  # noqa: E402
import llama  # noqa: E402

CTX, BATCH = 32, 8


def setup(dev, seed: int = 0, vocab_multiple: int = 1, layers: int = 2):
    """The seeded full model of @layers blocks on @dev, and batch_of(step)
    -> (x, y) [B, T] on the CPU: the same for every rank and for the
    one-device run. @vocab_multiple: the vocabulary padded up to a multiple
    of it (rows no token uses), as FSDP2 over TP needs: it shards the
    embedding's and the head's vocabulary dimension over every rank, evenly
    only."""
    vocab, batch_of = gpt2.char_batches(CTX, BATCH, seed)
    vocab = -(-vocab // vocab_multiple) * vocab_multiple
    torch.manual_seed(seed)
    model = llama.Llama(vocab, CTX, d=64, heads=4, kv_heads=2, layers=layers).to(dev)
    return model, batch_of


def parallelize(model, mesh, loss_parallel: bool = False):
    """Split @model (a llama.Llama) over the 1-D @mesh in place: TP + SP."""
    from torch.distributed.tensor import Replicate, Shard
    from torch.distributed.tensor.parallel import (ColwiseParallel, PrepareModuleInput,
                                                   RowwiseParallel, SequenceParallel,
                                                   parallelize_module)
    world = mesh.size()
    parallelize_module(model, mesh, {
        "tok_embeddings": RowwiseParallel(input_layouts=Replicate(), output_layouts=Shard(1)),
        "norm": SequenceParallel(),
        # loss_parallel: the logits stay a DTensor split over the vocabulary
        "output": ColwiseParallel(input_layouts=Shard(1),
                                  output_layouts=Shard(-1) if loss_parallel else Replicate(),
                                  use_local_output=not loss_parallel),
    })
    for blk in model.layers:
        att = blk.attention
        assert att.heads % world == 0 and att.kv_heads % world == 0, \
            f"{att.heads} heads, {att.kv_heads} kv heads do not split over {world} ranks"
        parallelize_module(blk, mesh, {
            "attention_norm": SequenceParallel(),
            # Attention.forward(x, cos, sin, positions, layer_cache, mask):
            # x arrives split over the sequence, the rest as they are
            "attention": PrepareModuleInput(input_layouts=(Shard(1),) + (None,) * 5,
                                            desired_input_layouts=(Replicate(),) + (None,) * 5),
            "attention.wq": ColwiseParallel(),
            "attention.wk": ColwiseParallel(),
            "attention.wv": ColwiseParallel(),
            "attention.wo": RowwiseParallel(output_layouts=Shard(1)),
            "ffn_norm": SequenceParallel(),
            "feed_forward": PrepareModuleInput(input_layouts=(Shard(1),),
                                               desired_input_layouts=(Replicate(),)),
            "feed_forward.w1": ColwiseParallel(),
            "feed_forward.w3": ColwiseParallel(),
            "feed_forward.w2": RowwiseParallel(output_layouts=Shard(1)),
        })
        # the local q/k/v projections produce this rank's heads only
        att.heads //= world
        att.kv_heads //= world
    return model


def make_mesh(device_type: str, world: int, dp: int = 1):
    """The 1-D mesh of all @world ranks, or with @dp > 1 the 2-D (dp, tp)
    mesh of @dp rows of world // dp ranks."""
    from torch.distributed.device_mesh import init_device_mesh
    if dp == 1:
        return init_device_mesh(device_type, (world,))
    assert world % dp == 0, f"--dp {dp} does not divide {world} ranks"
    return init_device_mesh(device_type, (dp, world // dp), mesh_dim_names=("dp", "tp"))


def shard_data_parallel(model, dp_mesh):
    """FSDP2 over @dp_mesh of the TP-split @model: each block, then the rest."""
    from torch.distributed.fsdp import fully_shard
    for blk in model.layers:
        fully_shard(blk, mesh=dp_mesh)
    fully_shard(model, mesh=dp_mesh)
    return model


def train(steps: int, dev, mesh=None, loss_parallel: bool = False, compile: bool = False,
          lr: float = 3e-3, quiet: bool = True, phases=None, vocab_multiple: int = 1,
          layers: int = 2):
    """The losses of @steps AdamW steps from the seeded model; @mesh: split
    over it (TP + SP; a 2-D mesh: TP over "tp", FSDP2 and the batch over
    "dp"), None: the whole model on @dev. @phases(step, name, fn) -> fn's
    result wraps each phase ("parallelize" once, then "forward",
    "backward", "optimizer" each step): --collectives' profiler.
    @vocab_multiple, @layers: as for setup()."""
    model, batch_of = setup(dev, vocab_multiple=vocab_multiple, layers=layers)
    run = phases or (lambda step, name, fn: fn())
    dp_mesh = mesh["dp"] if mesh is not None and mesh.ndim == 2 else None
    if mesh is not None:
        tp_mesh = mesh["tp"] if dp_mesh is not None else mesh
        run(-1, "parallelize", lambda: parallelize(model, tp_mesh, loss_parallel))
    if dp_mesh is not None:
        run(-1, "fully_shard", lambda: shard_data_parallel(model, dp_mesh))
    opt = gpt2.optimizer(model, lr=lr)
    lp = nullcontext
    if loss_parallel and mesh is not None:
        from torch.distributed.tensor.parallel import loss_parallel as lp

    def forward_loss(x, y):
        logits = model(x)
        with lp():
            return F.cross_entropy(logits.flatten(0, 1), y.flatten(0, 1))

    if compile:
        backend = "neuron" if torch.device(dev).type == "neuron" else "inductor"
        forward_loss = torch.compile(forward_loss, backend=backend)
    losses = []
    for step in range(steps):
        x, y = batch_of(step)
        if dp_mesh is not None:  # this column's rows of the batch
            rows = x.shape[0] // dp_mesh.size()
            x, y = (t[dp_mesh.get_local_rank() * rows:][:rows] for t in (x, y))
        x, y = x.to(dev), y.to(dev)
        loss = run(step, "forward", lambda: forward_loss(x, y))

        def backward():
            opt.zero_grad(set_to_none=True)
            with lp():
                loss.backward()
        run(step, "backward", backward)
        run(step, "optimizer", opt.step)
        if hasattr(loss, "full_tensor"):  # loss_parallel: a replicated DTensor
            loss = loss.full_tensor()
        if dp_mesh is not None:  # the whole batch's: the mean of the columns'
            loss = loss.detach().clone()
            dist.all_reduce(loss, group=dp_mesh.get_group())
            loss = loss / dp_mesh.size()
        losses.append(loss.item())
        if not quiet:
            print(f"step {step:4d}  loss {losses[-1]:.6f}", flush=True)
    return losses


def train_tp(steps: int, dev, mesh_device_type: str, rank: int, world: int, dp: int = 1,
             **kw):
    """The losses of TP + SP training over all @world ranks (the default
    process group; @dp > 1: FSDP2 x TP); every rank gets the same (the
    whole batch's)."""
    assert dist.get_world_size() == world and dist.get_rank() == rank
    run = kw.get("phases") or (lambda step, name, fn: fn())
    return train(steps, dev, run(-1, "init_device_mesh",
                                 lambda: make_mesh(mesh_device_type, world, dp)), **kw)


def train_single(steps: int, dev, **kw):
    """The same model and batches on @dev alone."""
    kw.pop("loss_parallel", None)
    return train(steps, dev, None, **kw)


class StepTimer:
    """phases= for train(): the mean ms of a step (forward, backward and
    optimizer; the device synchronized), the first step left out."""

    def __init__(self, dev):
        self.dev, self.t = dev, []

    def __call__(self, step, name, fn):
        if step >= 1 and name == "forward":
            _sync(self.dev)
            self.t0 = time.perf_counter()
        out = fn()
        if step >= 1 and name == "optimizer":
            _sync(self.dev)
            self.t.append(time.perf_counter() - self.t0)
        return out

    def ms(self):
        return sum(self.t) / len(self.t) * 1e3 if self.t else float("nan")


def _sync(dev):
    if torch.device(dev).type == "neuron":
        torch.neuron.synchronize()


class Collectives:
    """phases= for train(): records, by the profiler, the collectives of
    each phase of the @steps given (-1: init_device_mesh and parallelize)
    -- the functional collectives (_c10d_functional::*) DTensor issues,
    with their input's dtype and shape, and the c10d::* operators the
    ProcessGroup dispatches to its backend, one per Backend method call."""

    def __init__(self, steps=(-1, 0)):
        self.steps, self.log = set(steps), {}

    def __call__(self, step, name, fn):
        if step not in self.steps:
            return fn()
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
            out = fn()
        ops = self.log.setdefault(name if step < 0 else f"step {step} {name}", {})
        for e in prof.profiler.kineto_results.events():
            op = e.name()
            if op.startswith(("c10d::", "_c10d_functional::")) and "wait_tensor" not in op:
                arg = "" if op.startswith("c10d::") else f"{e.dtypes()[0]}{e.shapes()[0]}"
                ops[op, arg] = ops.get((op, arg), 0) + 1
        return out

    def report(self):
        lines = []
        for phase, ops in self.log.items():
            lines.append(f"{phase}:" + ("" if ops else " none"))
            lines += [f"  {n:3d} x {op} {arg}" for (op, arg), n in ops.items()]
        return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--device", choices=["neuron", "cpu"], default="neuron",
                   help="cpu: the Gloo backend; neuron: the card's, one card a rank")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--compare", action="store_true",
                   help="also train the whole model on this rank's device and compare the losses")
    p.add_argument("--rtol", type=float, default=1e-5)
    p.add_argument("--loss-parallel", action="store_true",
                   help="cross-entropy on the vocabulary-split logits (loss_parallel())")
    p.add_argument("--compile", action="store_true", help="torch.compile the forward and loss")
    p.add_argument("--dp", type=int, default=1,
                   help="a 2-D mesh: FSDP2 over this many rows of TP ranks (default 1: TP only)")
    p.add_argument("--collectives", action="store_true",
                   help="print the collectives of parallelize_module() and of step 0")
    p.add_argument("--bench", action="store_true",
                   help="print the ms per step (after the first) of the TP run and of the "
                        "whole model on one card as JSON (make bench)")
    a = p.parse_args()
    if a.dp > 1 and (a.compile or a.collectives or a.bench):
        p.error("--dp takes neither --compile, --collectives nor --bench")

    if a.device == "cpu":
        dist.init_process_group("gloo")
        dev = torch.device("cpu")
    else:
        dist.init_process_group("neuron")
        dev = torch.device("neuron", torch.neuron.current_device())  # LOCAL_RANK's card
    rank, world = dist.get_rank(), dist.get_world_size()
    rec = Collectives() if a.collectives else (StepTimer(dev) if a.bench else None)
    t0 = time.perf_counter()
    pad = {"vocab_multiple": world} if a.dp > 1 else {}
    losses = train_tp(a.steps, dev, a.device, rank, world, a.dp, loss_parallel=a.loss_parallel,
                      compile=a.compile, quiet=a.compare or rank != 0, phases=rec, **pad)
    s = time.perf_counter() - t0
    if rank == 0:
        mode = f"fsdp2 {a.dp} x tp+sp {world // a.dp}" if a.dp > 1 else "tp+sp"
        print(f"final loss {losses[-1]:.6f} ({mode}, {world} ranks, {a.steps} steps, {s:.1f} s)",
              flush=True)
    if a.bench:
        one = StepTimer(dev)
        train_single(a.steps, dev, phases=one)
        if rank == 0:
            print(json.dumps({f"tp_llama_step_{world}cards_ms": rec.ms(),
                              "tp_llama_step_1card_ms": one.ms()}), flush=True)
    elif rec is not None:
        for r in range(world):  # one rank after the other
            if r == rank:
                print(f"rank {rank}: collectives\n{rec.report()}", flush=True)
            dist.barrier()
    ok = True
    if a.compare:
        ref = train_single(a.steps, dev, compile=a.compile, **pad)
        worst = max(abs(u - v) / abs(v) for u, v in zip(losses, ref))
        ok = worst <= a.rtol and losses[-1] < losses[0]
        if rank == 0:
            for i, (u, v) in enumerate(zip(losses, ref)):
                print(f"step {i}: tp {u:.8f} single {v:.8f}", flush=True)
        flag = torch.tensor([1.0 if ok else 0.0], device=dev)
        dist.all_reduce(flag, op=dist.ReduceOp.MIN)
        if rank == 0:
            print(f"largest relative loss difference {worst:.3g} (rtol {a.rtol:g}): "
                  f"{'OK' if flag.item() == 1.0 else 'MISMATCH'}", flush=True)
        ok = flag.item() == 1.0
    if a.device == "cpu":
        # PyTorch 2.6's Gloo worker threads free the tensors of finished
        # collectives after wait() returned, and freeing one whose Python
        # object is gone takes the GIL; destroy_process_group() joins those
        # threads holding the GIL (released there since pytorch#154976): a
        # hang, or an abort at exit. Let them have it first.
        time.sleep(0.1)
    dist.destroy_process_group()
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()

# SPDX-License-Identifier: MIT
"""Data-parallel training on several cards with torch.distributed's backend
"neuron": DistributedDataParallel (gradient buckets all-reduced card to
card while the backward runs) or, with --fsdp, FSDP2 (fully_shard: the
parameters sharded over the cards, all-gathered for each layer's forward
and backward, gradients reduce-scattered).

    torchrun --nproc-per-node 2 examples/ddp.py --model gpt --steps 20
    torchrun --nproc-per-node 2 examples/ddp.py --model mlp --fsdp --steps 20

Every rank draws the same global batch from a seeded generator and trains
on its slice (rows rank*B/W .. (rank+1)*B/W); the printed loss is the
global batch's (the mean of the ranks' losses). --compare then trains the
same model on one card with the whole global batch and checks that every
step's loss agrees within --rtol: the gradients are the same sums taken in
another order, so they differ by float32 rounding (a few ulp), which the
optimizer carries into later steps -- not by any systematic amount.
--bench prints the ms per step of both runs as JSON (make bench).
"""
import argparse
import json
import os
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpt2  # noqa: E402
import mlp  # noqa: E402


def setup(model: str, dev):
    """Model, optimizer, batch maker (step -> (x, y) of the global batch) and
    the loss, all seeded: every rank and the 1-card run start alike."""
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    if model == "gpt":
        chars = sorted(set(gpt2.CORPUS))
        data = torch.tensor([chars.index(c) for c in gpt2.CORPUS], dtype=torch.long)
        ctx, batch = 32, 16
        net = gpt2.GPT2(len(chars), ctx).to(dev)

        def make_opt(params_model):
            return gpt2.optimizer(params_model)

        def batch_of(step):
            starts = torch.randint(0, len(data) - ctx - 1, (batch,), generator=g)
            x = torch.stack([data[s:s + ctx] for s in starts])
            y = torch.stack([data[s + 1:s + ctx + 1] for s in starts])
            return x, y
    else:
        x_all, y_all = mlp.spirals(512, 3, g)
        net = mlp.MLP(x_all.shape[1], 128, 3).to(dev)
        batch = 64

        def make_opt(params_model):
            return torch.optim.SGD(params_model.parameters(), lr=0.1, momentum=0.9)

        def batch_of(step):
            idx = torch.randint(0, x_all.shape[0], (batch,), generator=g)
            return x_all[idx], y_all[idx]

    def loss_of(out, y):
        return F.cross_entropy(out.reshape(-1, out.shape[-1]), y.reshape(-1))

    return net, make_opt, batch_of, loss_of


def train(model: str, steps: int, dev, rank=0, world=1, wrap=None, quiet=False):
    """Losses of the global batch per step, and ms per step (after step 0).
    wrap(net) -> the distributed module (DDP or FSDP2); None: one card."""
    net, make_opt, batch_of, loss_of = setup(model, dev)
    if wrap is not None:
        net = wrap(net)
    opt = make_opt(net)
    losses, t0 = [], None
    for step in range(steps):
        if step == 1:
            t0 = time.perf_counter()
        x, y = batch_of(step)
        rows = x.shape[0] // world
        x, y = x[rank * rows:(rank + 1) * rows].to(dev), y[rank * rows:(rank + 1) * rows].to(dev)
        loss = loss_of(net(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        if model == "gpt":
            nn.utils.clip_grad_norm_(net.parameters(), 1.0)
        opt.step()
        g = loss.detach().clone()
        if world > 1:
            dist.all_reduce(g, op=dist.ReduceOp.AVG)
        losses.append(g.item())
        if not quiet and rank == 0:
            print(f"step {step:4d}  loss {losses[-1]:.6f}", flush=True)
    ms = (time.perf_counter() - t0) / (steps - 1) * 1e3 if steps > 1 else float("nan")
    return losses, ms


def ddp_wrap(dev):
    from torch.nn.parallel import DistributedDataParallel as DDP

    def wrap(net):
        return DDP(net, device_ids=None, bucket_cap_mb=1)  # several buckets
    return wrap


def fsdp_wrap(world):
    from torch.distributed._composable.fsdp import fully_shard
    from torch.distributed.device_mesh import init_device_mesh

    mesh = init_device_mesh("neuron", (world,))

    def wrap(net):
        layers = net.h if hasattr(net, "h") else [net.fc1, net.fc2, net.fc3]
        for layer in layers:
            fully_shard(layer, mesh=mesh)
        fully_shard(net, mesh=mesh)
        return net
    return wrap


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", choices=["gpt", "mlp"], default="gpt")
    p.add_argument("--fsdp", action="store_true", help="FSDP2 (fully_shard) instead of DDP")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--compare", action="store_true",
                   help="also train on one card with the global batch and compare the losses")
    p.add_argument("--rtol", type=float, default=1e-4)
    p.add_argument("--bench", action="store_true",
                   help="print the ms/step of the distributed and the 1-card run as JSON")
    a = p.parse_args()

    dist.init_process_group("neuron")
    rank, world = dist.get_rank(), dist.get_world_size()
    dev = torch.device("neuron", torch.neuron.current_device())  # LOCAL_RANK's card
    wrap = fsdp_wrap(world) if a.fsdp else ddp_wrap(dev)
    losses, ms = train(a.model, a.steps, dev, rank, world, wrap, quiet=a.bench)
    kind = "fsdp2" if a.fsdp else "ddp"
    ok = True
    if rank == 0:
        print(f"final loss {losses[-1]:.6f} ({kind}, {world} ranks, {a.steps} steps, "
              f"{ms:.1f} ms/step)", flush=True)
    if a.compare or a.bench:
        if rank == 0:
            ref, ref_ms = train(a.model, a.steps, dev, quiet=True)
            worst = max(abs(u - v) / max(abs(v), 1e-12) for u, v in zip(losses, ref))
            ok = worst <= a.rtol
            if a.bench:
                print(json.dumps({f"{kind}_{a.model}_step_{world}cards_ms": ms,
                                  f"{kind}_{a.model}_step_1card_ms": ref_ms}), flush=True)
            print(f"1-card final loss {ref[-1]:.6f}; largest relative loss difference "
                  f"{worst:.3g} (rtol {a.rtol:g}): {'OK' if ok else 'MISMATCH'}", flush=True)
        flag = torch.tensor([1.0 if ok else 0.0], device=dev)
        dist.broadcast(flag, 0)
        ok = flag.item() == 1.0
    dist.destroy_process_group()
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()

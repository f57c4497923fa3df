# SPDX-License-Identifier: MIT
"""Pipeline parallelism with torch.distributed.pipelining: examples/mlp.py's
MLP split in two stages, rank r running stage r on its card, trained with
ScheduleGPipe or Schedule1F1B over microbatches.

Stage 0 is fc1 -> relu -> fc2 -> relu, stage 1 is fc3 and the loss. Each
microbatch's activations go from card 0 to card 1 (send/recv of the
process group), its gradients back. PyTorch 2.6's schedules add the
microbatches' gradients up, so the loss of a microbatch is its mean cross
entropy divided by the number of microbatches: the step's gradients and its
loss (the sum of the microbatches' losses) are those of the whole batch's
mean, as on one card.

    torchrun --nproc-per-node 2 examples/pp.py --schedule 1f1b --compare

--compare then trains the unsplit model on one card on the same batches,
prints both losses and checks that every step's agrees within --rtol (the
microbatches' gradients are added in another order): it exits 1 if not.
With one card on each of two nodes (make check-cluster), the stages are
on different VMs and the activations cross between them through Gloo.
"""
import argparse
import copy
import os
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mlp import MLP, spirals  # noqa: E402

HIDDEN, CLASSES, LR = 128, 3, 0.1


def data(seed: int):
    """The spirals of mlp.py and a fixed batch order."""
    g = torch.Generator().manual_seed(seed)
    x, y = spirals(512, CLASSES, g)
    return x, y, torch.randperm(x.shape[0], generator=g)


def batches(steps: int, batch: int, seed: int):
    x, y, order = data(seed)
    for step in range(steps):
        idx = order[(step * batch) % x.shape[0]:][:batch]
        yield x[idx], y[idx]


def make_model(seed: int) -> MLP:
    x, _, _ = data(seed)
    torch.manual_seed(seed)
    return MLP(x.shape[1], HIDDEN, CLASSES)


def stage_modules(model: MLP):
    """The two stages of @model (sharing its parameters)."""
    return [nn.Sequential(model.fc1, nn.ReLU(), model.fc2, nn.ReLU()), model.fc3]


SCHEDULES = {"gpipe": "ScheduleGPipe", "1f1b": "Schedule1F1B"}


def train_pp(steps: int, dev, rank: int, world: int, schedule: str = "gpipe",
             microbatches: int = 4, batch: int = 64, seed: int = 0, times=None):
    """Train with this rank's stage on @dev; every rank returns the step
    losses (broadcast from the last stage). @times, a list, gets each
    step's seconds."""
    from torch.distributed import pipelining
    assert world == 2, "two stages, one per rank"
    assert batch % microbatches == 0
    dev = torch.device(dev)
    d_in = data(seed)[0].shape[1]
    module = stage_modules(copy.deepcopy(make_model(seed)))[rank].to(dev)
    mb = batch // microbatches
    # Shapes of one microbatch's input and output: no shape inference
    shapes = [((mb, d_in), (mb, HIDDEN)), ((mb, HIDDEN), (mb, CLASSES))][rank]
    stage = pipelining.PipelineStage(
        module, rank, world, dev,
        input_args=(torch.empty(shapes[0], device=dev),),
        output_args=(torch.empty(shapes[1], device=dev),))

    def loss_fn(out, y):
        return F.cross_entropy(out, y) / microbatches

    sched = getattr(pipelining, SCHEDULES[schedule])(stage, microbatches, loss_fn=loss_fn)
    opt = torch.optim.SGD(module.parameters(), lr=LR, momentum=0.9)
    losses = []
    for x, y in batches(steps, batch, seed):
        t0 = time.perf_counter()
        opt.zero_grad()
        if rank == 0:
            sched.step(x.to(dev))
            loss = torch.zeros(1, device=dev)
        else:
            mb_losses = []
            sched.step(target=y.to(dev), losses=mb_losses)
            loss = torch.stack(mb_losses).sum().detach().reshape(1)
        opt.step()
        dist.broadcast(loss, src=world - 1)
        losses.append(loss.item())
        if times is not None:
            times.append(time.perf_counter() - t0)
    return losses


def train_single(steps: int, dev, batch: int = 64, seed: int = 0, times=None):
    """The unsplit model on one card, the same batches and optimizer."""
    model = make_model(seed).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=LR, momentum=0.9)
    losses = []
    for x, y in batches(steps, batch, seed):
        t0 = time.perf_counter()
        loss = F.cross_entropy(model(x.to(dev)), y.to(dev))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
        if times is not None:
            times.append(time.perf_counter() - t0)
    return losses


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--device", choices=["neuron", "cpu"], default="neuron",
                   help="cpu: Gloo between CPU processes")
    p.add_argument("--schedule", choices=sorted(SCHEDULES), default="1f1b")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--microbatches", type=int, default=4)
    p.add_argument("--compare", action="store_true",
                   help="also train the unsplit model on one card and compare the losses")
    p.add_argument("--rtol", type=float, default=1e-5)
    a = p.parse_args()
    if a.device == "cpu":
        dist.init_process_group("gloo")
        dev = torch.device("cpu")
    else:
        dist.init_process_group("neuron")
        dev = torch.device("neuron", torch.neuron.current_device())  # LOCAL_RANK's card
    rank, world = dist.get_rank(), dist.get_world_size()
    ok = True
    times = []
    losses = train_pp(a.steps, dev, rank, world, a.schedule, a.microbatches, a.batch,
                      times=times)
    if rank == 0:
        print(f"{SCHEDULES[a.schedule]}, {a.microbatches} microbatches: "
              f"{sorted(times)[len(times) // 2] * 1e3:.1f} ms a step (median)")
        if a.compare:
            one = []
            ref = train_single(a.steps, dev, a.batch, times=one)
            print(f"one card: {sorted(one)[len(one) // 2] * 1e3:.1f} ms a step (median)")
            for i, (u, v) in enumerate(zip(losses, ref)):
                print(f"step {i:3d}  pipeline {u:.6f}  one card {v:.6f}")
            worst = max(abs(u - v) / abs(v) for u, v in zip(losses, ref))
            ok = worst <= a.rtol and losses[-1] < losses[0]
            print(f"largest relative difference {worst:.3g} (rtol {a.rtol:g}): "
                  f"{'OK' if ok else 'MISMATCH'}", flush=True)
        else:
            for i, v in enumerate(losses):
                print(f"step {i:3d}  loss {v:.6f}")
    dist.barrier()
    dist.destroy_process_group()
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()

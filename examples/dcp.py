# SPDX-License-Identifier: MIT
"""Sharded checkpoints that change card count and parallelism on load:
torch.distributed.checkpoint (DCP) saves examples/tp.py's tensor-parallel
Llama and its AdamW state from the cards that hold their shards, and
loads them into the same model split another way over another number of
cards -- FSDP2 (fully_shard) over every rank, or the whole model on one
card -- where training goes on with the same losses.

    torchrun --nproc-per-node 2 examples/dcp.py --save /tmp/ckpt     (TP on 2 cards)
    torchrun --nproc-per-node 4 examples/dcp.py --load /tmp/ckpt     (FSDP2 on 4)
    python3 examples/dcp.py --load /tmp/ckpt                         (1 card)

--save trains --steps steps with TP + SP over all the ranks, saves the
model and optimizer state (each rank writes its own shards; DCP plans
with the object collectives: gather and scatter on the card), then trains
--steps more and writes their losses beside the checkpoint
(losses-after.json). --load builds the seeded model, shards it with FSDP2
over all the ranks (one rank: leaves it whole), loads the checkpoint into
it (DCP reshards each tensor to its new placement), trains the same --steps
batches and checks that every loss agrees with the saved run's within
--rtol: TP adds its partial sums in another order than FSDP2 or one card
does, which moves the losses by float32 rounding only. Every rank of the
FSDP2 run trains on the whole batch, so any card count loads it.
"""
import argparse
import json
import os
import sys

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
import torch.nn.functional as F
from torch.distributed.checkpoint.state_dict import get_state_dict, set_state_dict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpt2  # noqa: E402
import tp  # noqa: E402

AFTER = "losses-after.json"


def step(model, opt, batch, dev):
    x, y = (t.to(dev) for t in batch)
    loss = F.cross_entropy(model(x).flatten(0, 1), y.flatten(0, 1))
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    return loss.item()


def save(path, steps, dev, device_type):
    """TP over all the ranks: @steps steps, the checkpoint, @steps more
    (their losses written beside it by rank 0)."""
    model, batch_of = tp.setup(dev)
    tp.parallelize(model, tp.make_mesh(device_type, dist.get_world_size()))
    opt = gpt2.optimizer(model)
    for s in range(steps):
        step(model, opt, batch_of(s), dev)
    msd, osd = get_state_dict(model, opt)
    dcp.save({"model": msd, "optim": osd}, checkpoint_id=path)
    after = [step(model, opt, batch_of(s), dev) for s in range(steps, 2 * steps)]
    if dist.get_rank() == 0:
        with open(os.path.join(path, AFTER), "w") as f:
            json.dump({"steps": steps, "world": dist.get_world_size(), "losses": after}, f)
    return after


def load(path, dev, distributed):
    """The checkpoint into the model sharded with FSDP2 over all the ranks
    (@distributed) or whole on @dev; the losses of the saved run's next
    steps, and those expected."""
    with open(os.path.join(path, AFTER)) as f:
        saved = json.load(f)
    steps = saved["steps"]
    model, batch_of = tp.setup(dev)
    if distributed:
        from torch.distributed.fsdp import fully_shard
        mesh = tp.make_mesh(dev.type, dist.get_world_size())
        for blk in model.layers:
            fully_shard(blk, mesh=mesh)
        fully_shard(model, mesh=mesh)
    opt = gpt2.optimizer(model)
    msd, osd = get_state_dict(model, opt)
    # one process: DCP reads the checkpoint without a process group
    dcp.load({"model": msd, "optim": osd}, checkpoint_id=path)
    set_state_dict(model, opt, model_state_dict=msd, optim_state_dict=osd)
    for s in range(steps):
        batch_of(s)  # the saved run's batches from here on
    got = [step(model, opt, batch_of(s), dev) for s in range(steps, 2 * steps)]
    return got, saved["losses"]


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--save", metavar="DIR", help="train with TP, save the checkpoint in DIR")
    g.add_argument("--load", metavar="DIR", help="load DIR's checkpoint and compare")
    p.add_argument("--steps", type=int, default=2, help="steps before the save and after it")
    p.add_argument("--rtol", type=float, default=1e-5)
    a = p.parse_args()

    distributed = "WORLD_SIZE" in os.environ
    if a.save and not distributed:
        p.error("--save runs under torchrun (its ranks hold the shards)")
    if distributed:
        dist.init_process_group("neuron")
    dev = torch.device("neuron", torch.neuron.current_device())  # LOCAL_RANK's card
    rank = dist.get_rank() if distributed else 0
    world = dist.get_world_size() if distributed else 1
    ok = True
    if a.save:
        after = save(a.save, a.steps, dev, "neuron")
        if rank == 0:
            print(f"saved TP on {world} ranks to {a.save}; losses after: "
                  + " ".join(f"{v:.8f}" for v in after), flush=True)
    else:
        got, want = load(a.load, dev, distributed)
        worst = max(abs(u - v) / abs(v) for u, v in zip(got, want))
        ok = worst <= a.rtol
        if distributed:
            flag = torch.tensor([1.0 if ok else 0.0], device=dev)
            dist.all_reduce(flag, op=dist.ReduceOp.MIN)
            ok = flag.item() == 1.0
        if rank == 0:
            how = f"FSDP2 on {world} ranks" if distributed else "1 device"
            print(f"loaded into {how}: losses " + " ".join(f"{v:.8f}" for v in got)
                  + "; saved run's " + " ".join(f"{v:.8f}" for v in want)
                  + f"; largest relative difference {worst:.3g} (rtol {a.rtol:g}): "
                  + ("OK" if ok else "MISMATCH"), flush=True)
    if distributed:
        dist.destroy_process_group()
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()

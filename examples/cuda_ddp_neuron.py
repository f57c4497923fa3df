# SPDX-License-Identifier: MIT
"""examples/cuda_ddp.py's training written for neuron: the same model, data,
autocast (float16) and loss scaling, on the "neuron" backend. Both print the
same losses, step by step (torch-shim/tests/test_cuda_switch.py).

    torchrun --nproc-per-node 2 examples/cuda_ddp_neuron.py
"""
import argparse
import os
import sys

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cuda_ddp import Net, data  # noqa: E402  (the same model and data)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=8)
    p.add_argument("--batch", type=int, default=64)
    args = p.parse_args()

    dist.init_process_group("neuron")
    rank, world = dist.get_rank(), dist.get_world_size()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.neuron.set_device(local_rank)
    device = torch.device("neuron", local_rank)

    torch.manual_seed(0)
    model = Net().to(device)
    model = DDP(model, device_ids=[local_rank])
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    scaler = torch.amp.GradScaler("neuron")
    x_all, y_all, g = data()
    rows = args.batch // world
    for step in range(args.steps):
        idx = torch.randint(0, x_all.shape[0], (args.batch,), generator=g)
        idx = idx[rank * rows:(rank + 1) * rows]
        x = x_all[idx].to(device, non_blocking=True)
        y = y_all[idx].to(device)
        with torch.autocast("neuron", dtype=torch.float16):
            loss = F.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        torch.neuron.synchronize()
        mean = loss.detach().float()
        dist.all_reduce(mean)
        mean /= world
        if rank == 0:
            print(f"step {step} loss {mean.item()!r} scale {scaler.get_scale()!r}", flush=True)
    if rank == 0:
        print(f"device {torch.neuron.get_device_name()}; peak memory "
              f"{torch.neuron.max_memory_allocated() >> 10} KiB", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

# SPDX-License-Identifier: MIT
"""A data-parallel training program written for CUDA, as public PyTorch code
is: .cuda(), torch.cuda.amp's autocast and GradScaler, torch.cuda.synchronize,
cuDNN flags, DistributedDataParallel over "nccl". Nothing here names neuron.

On CUDA machines:  torchrun --nproc-per-node 2 examples/cuda_ddp.py
On neuron cards, unchanged (docs/cuda.md):
    TORCH_NEURON_CUDA=1 torchrun --nproc-per-node 2 examples/cuda_ddp.py
    torchrun --nproc-per-node 2 -m torch_neuron.cuda examples/cuda_ddp.py
examples/cuda_ddp_neuron.py is the same training written for neuron; both
print the same losses, step by step.
"""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP


class Net(nn.Module):
    def __init__(self, d_in=32, hidden=64, classes=4):
        super().__init__()
        self.fc1 = nn.Linear(d_in, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.head = nn.Linear(hidden, classes)

    def forward(self, x):
        return self.head(F.relu(self.fc2(F.relu(self.fc1(x)))))


def data(n=1024, d_in=32, classes=4):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(n, d_in, generator=g)
    w = torch.randn(d_in, classes, generator=g)
    return x, (x @ w).argmax(dim=1), g


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=8)
    p.add_argument("--batch", type=int, default=64)
    args = p.parse_args()

    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = True
    assert torch.cuda.is_available(), "this program needs a GPU"
    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)

    torch.manual_seed(0)
    model = Net().cuda()
    model = DDP(model, device_ids=[local_rank])
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    scaler = torch.cuda.amp.GradScaler()
    x_all, y_all, g = data()
    rows = args.batch // world
    for step in range(args.steps):
        idx = torch.randint(0, x_all.shape[0], (args.batch,), generator=g)
        idx = idx[rank * rows:(rank + 1) * rows]
        x = x_all[idx].cuda(non_blocking=True)
        y = y_all[idx].to(device)
        assert x.is_cuda and y.is_cuda
        with torch.cuda.amp.autocast():
            loss = F.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        torch.cuda.synchronize()
        mean = loss.detach().float()
        dist.all_reduce(mean)
        mean /= world
        if rank == 0:
            print(f"step {step} loss {mean.item()!r} scale {scaler.get_scale()!r}", flush=True)
    if rank == 0:
        print(f"device {torch.cuda.get_device_name()}; peak memory "
              f"{torch.cuda.max_memory_allocated() >> 10} KiB", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

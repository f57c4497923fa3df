# SPDX-License-Identifier: MIT
"""Time one training step of a 784-1024-1024-10 MLP (batch 256, float32,
SGD with momentum) on the card and on the CPU; print JSON figures."""
import json
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


def step_time(dev: str, steps: int) -> float:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(784, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(),
                          nn.Linear(1024, 10)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x, y = torch.randn(256, 784).to(dev), torch.randint(0, 10, (256,)).to(dev)

    def step():
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss.item()  # waits for the device

    step()  # warm-up: allocations, first-use costs
    t0 = time.perf_counter()
    for _ in range(steps):
        step()
    return (time.perf_counter() - t0) / steps


if __name__ == "__main__":
    neuron = step_time("neuron", 10)
    cpu = step_time("cpu", 2 if "--quick" in sys.argv else 3)
    print(json.dumps({"mlp_step_neuron_ms": neuron * 1e3, "mlp_step_cpu_ms": cpu * 1e3,
                      "mlp_step_speedup_vs_cpu": cpu / neuron}, indent=2))

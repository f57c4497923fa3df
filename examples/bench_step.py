# SPDX-License-Identifier: MIT
"""Time one training step of a model on a device; print JSON figures.

    python3 examples/bench_step.py mlp --device neuron
    python3 examples/bench_step.py gpt --device cpu --steps 5

mlp: a 784-1024-1024-10 MLP, batch 256, float32, SGD with momentum.
gpt: the GPT-2 of examples/gpt2.py (2 layers, d=64, 4 heads, context 32,
     batch 16) with AdamW, float32.
resnet18: torchvision's ResNet-18 (10 classes) as examples/resnet.py trains
     it: batch 32, 3x32x32 images, float32, SGD with momentum.
The step is forward, loss, backward, optimizer step and loss.item() (which
waits for the device); the first step is a warm-up.
"""
import argparse
import json
import os
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def mlp_setup(dev):
    model = nn.Sequential(nn.Linear(784, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(),
                          nn.Linear(1024, 10)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x, y = torch.randn(256, 784).to(dev), torch.randint(0, 10, (256,)).to(dev)
    return model, opt, x, y


def gpt_setup(dev):
    import gpt2
    vocab, ctx, batch = 32, 32, 16
    model = gpt2.GPT2(vocab, ctx).to(dev)
    opt = gpt2.optimizer(model)
    x = torch.randint(0, vocab, (batch, ctx)).to(dev)
    y = torch.randint(0, vocab, (batch, ctx)).to(dev)
    return model, opt, x, y


def resnet18_setup(dev):
    import torchvision
    model = torchvision.models.resnet18(num_classes=10).to(dev)
    model.train()
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=5e-4)
    x, y = torch.randn(32, 3, 32, 32).to(dev), torch.randint(0, 10, (32,)).to(dev)
    return model, opt, x, y


SETUPS = {"mlp": mlp_setup, "gpt": gpt_setup, "resnet18": resnet18_setup}


def step_ms(name: str, dev: str, steps: int) -> float:
    torch.manual_seed(0)
    model, opt, x, y = SETUPS[name](dev)

    def step():
        logits = model(x)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss.item()  # waits for the device

    step()  # warm-up: allocations, first-use costs
    t0 = time.perf_counter()
    for _ in range(steps):
        step()
    return (time.perf_counter() - t0) / steps * 1e3


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model", choices=list(SETUPS))
    p.add_argument("--device", default="neuron")
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--name", help="figure name (default: MODEL_step_DEVICE_ms)")
    a = p.parse_args()
    ms = step_ms(a.model, a.device, a.steps)
    print(json.dumps({a.name or f"{a.model}_step_{a.device}_ms": ms,
                      "torch_version": torch.__version__}))

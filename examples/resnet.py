# SPDX-License-Identifier: MIT
"""Train torchvision's ResNet-18 (10 classes) on random CIFAR-size images.

Every operator runs on the virtual Trainium card (convolutions, batch norm,
pooling and their backward included): try it with TORCH_NEURON_FALLBACK=error.
The device is one line (or --device):
    device = "neuron"
"""
import argparse
import time

import torch
import torch.nn.functional as F
import torchvision

device = "neuron"  # "cpu", "cuda", or "neuron"


def train(dev: str, steps: int, batch: int, optimizer: str = "sgd", seed: int = 0,
          quiet: bool = False):
    """Train from a seeded initialisation on seeded random data; the losses."""
    g = torch.Generator().manual_seed(seed)
    images = torch.randn(batch * steps, 3, 32, 32, generator=g)
    labels = torch.randint(0, 10, (batch * steps,), generator=g)
    torch.manual_seed(seed)
    model = torchvision.models.resnet18(num_classes=10).to(dev)
    if optimizer == "sgd":
        opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=5e-4)
    else:
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-2)
    model.train()
    losses = []
    t0 = time.time()
    for step in range(steps):
        x = images[step * batch:(step + 1) * batch].to(dev)
        y = labels[step * batch:(step + 1) * batch].to(dev)
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
        if not quiet:
            print(f"step {step:3d}  loss {losses[-1]:.4f}  ({time.time() - t0:.1f}s)",
                  flush=True)
    return losses


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--device", default=device)
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--optimizer", choices=["sgd", "adamw"], default="sgd")
    a = p.parse_args()
    train(a.device, a.steps, a.batch, a.optimizer)

# SPDX-License-Identifier: MIT
"""Train an MLP to classify points of a synthetic spiral dataset.

Runs on the virtual Trainium card by changing one line (or --device):
    device = "neuron"
"""
import argparse
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

device = "neuron"  # "cpu", "cuda", or "neuron"


def spirals(n_per_class: int, classes: int, generator: torch.Generator):
    """Interleaved 2-D spirals, one per class, with noise; features expanded to 16."""
    xs, ys = [], []
    for c in range(classes):
        r = torch.linspace(0.05, 1.0, n_per_class)
        t = torch.linspace(c * 4.0, (c + 1) * 4.0, n_per_class) + \
            0.2 * torch.randn(n_per_class, generator=generator)
        xs.append(torch.stack([r * torch.sin(t), r * torch.cos(t)], dim=1))
        ys.append(torch.full((n_per_class,), c, dtype=torch.long))
    x = torch.cat(xs)
    # A fixed random lift to more features, so the first layer has work to do.
    lift = torch.randn(2, 16, generator=generator)
    return torch.cat([x, torch.sin(x @ lift)], dim=1), torch.cat(ys)


def compile_backend(dev: str) -> str:
    """torch.compile's backend for @dev: "neuron" compiles for the card."""
    return "neuron" if torch.device(dev).type == "neuron" else "inductor"


class MLP(nn.Module):
    def __init__(self, d_in: int, hidden: int, classes: int):
        super().__init__()
        self.fc1 = nn.Linear(d_in, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.fc3 = nn.Linear(hidden, classes)

    def forward(self, x):
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))


def train(dev: str, steps: int, batch: int, seed: int = 0, log_every: int = 10,
          quiet: bool = False, compile: bool = False):
    """Train and return the list of losses (one per step). compile: the
    forward and loss (and so their backward) run as torch.compile graphs
    (backend "neuron" on the card: compiled kernels; "inductor" elsewhere)."""
    g = torch.Generator().manual_seed(seed)
    x, y = spirals(512, 3, g)
    torch.manual_seed(seed)
    model = MLP(x.shape[1], 128, 3).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x, y = x.to(dev), y.to(dev)
    losses = []
    order = torch.randperm(x.shape[0], generator=g)
    t0 = time.time()

    def forward_loss(xb, yb):
        return F.cross_entropy(model(xb), yb)

    if compile:
        forward_loss = torch.compile(forward_loss, backend=compile_backend(dev))
    for step in range(steps):
        idx = order[(step * batch) % x.shape[0]:][:batch].to(dev)
        loss = forward_loss(x.index_select(0, idx), y.index_select(0, idx))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
        if not quiet and (step % log_every == 0 or step == steps - 1):
            print(f"step {step:4d}  loss {losses[-1]:.4f}")
    with torch.no_grad():
        acc = (model(x).argmax(1) == y).float().mean().item()
    if not quiet:
        print(f"{steps} steps on {dev} in {time.time() - t0:.1f}s, "
              f"accuracy {acc:.3f}")
    return losses, acc


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--device", default=device)
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--compile", action="store_true",
                   help="torch.compile the forward and loss (compiled kernels on neuron)")
    a = p.parse_args()
    losses, _ = train(a.device, a.steps, a.batch, compile=a.compile)
    assert math.isfinite(losses[-1])

# SPDX-License-Identifier: MIT
"""Train a Vision Transformer (4x4 patches by a strided convolution, a class
token, learned position embeddings, a pre-norm nn.TransformerEncoder, a
linear head on the class token; AdamW, clip_grad_norm_) on random
CIFAR-size images (3x32x32, 10 classes: each image is its class's random
pattern under as much noise).

Every operator runs on the virtual Trainium card, forward and backward:
try it with TORCH_NEURON_FALLBACK=error. The device is one line (or --device):
    device = "neuron"
"""
import argparse
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

device = "neuron"  # "cpu", "cuda", or "neuron"


class ViT(nn.Module):
    def __init__(self, image: int = 32, patch: int = 4, d: int = 64, heads: int = 4,
                 layers: int = 2, classes: int = 10, dropout: float = 0.0):
        super().__init__()
        self.patch = nn.Conv2d(3, d, patch, stride=patch)
        self.cls = nn.Parameter(torch.zeros(1, 1, d))
        self.pos = nn.Parameter(torch.randn(1, (image // patch) ** 2 + 1, d) * 0.02)
        layer = nn.TransformerEncoderLayer(d, heads, 4 * d, dropout, activation="gelu",
                                           batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, classes)

    def forward(self, images):
        x = self.patch(images).flatten(2).transpose(1, 2)        # [B, patches, d]
        x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], dim=1) + self.pos
        return self.head(self.norm(self.encoder(x))[:, 0])


def train(dev: str, steps: int, batch: int = 32, d: int = 64, layers: int = 2,
          dropout: float = 0.0, seed: int = 0, quiet: bool = False):
    """Train from a seeded initialisation on seeded random data; the losses."""
    g = torch.Generator().manual_seed(seed)
    patterns = torch.randn(10, 3, 32, 32, generator=g)
    labels = torch.randint(0, 10, (steps, batch), generator=g)
    images = patterns[labels] + torch.randn(steps, batch, 3, 32, 32, generator=g)
    torch.manual_seed(seed)
    model = ViT(d=d, layers=layers, dropout=dropout).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.05)
    model.train()
    losses = []
    t0 = time.time()
    for step in range(steps):
        loss = F.cross_entropy(model(images[step].to(dev)), labels[step].to(dev))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
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
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--d", type=int, default=64)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--dropout", type=float, default=0.0,
                   help="dropout masks come from the device's generator: with dropout, "
                        "losses differ from another device's")
    a = p.parse_args()
    if a.device == "neuron":
        import torch_neuron  # noqa: F401  (registers the device)
    losses = train(a.device, a.steps, a.batch, a.d, a.layers, a.dropout)
    assert math.isfinite(losses[-1])

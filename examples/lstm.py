# SPDX-License-Identifier: MIT
"""A small sequence model: a 2-layer bidirectional LSTM then a GRU reads
random token sequences and learns to predict each sequence's sum modulo 4.

The LSTM's and GRU's fused cells and their backward run on the virtual
Trainium card: try it with TORCH_NEURON_FALLBACK=error. The device is one
line (or --device):
    device = "neuron"
"""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F

device = "neuron"  # "cpu", "cuda", or "neuron"


class SeqModel(nn.Module):
    def __init__(self, vocab=10, emb=16, hidden=24, classes=4):
        super().__init__()
        self.emb = nn.Embedding(vocab, emb)
        self.lstm = nn.LSTM(emb, hidden, num_layers=2, bidirectional=True, batch_first=True)
        self.gru = nn.GRU(2 * hidden, hidden, batch_first=True)
        self.head = nn.Linear(hidden, classes)

    def forward(self, tokens):
        y, _ = self.lstm(self.emb(tokens))
        _, h = self.gru(y)
        return self.head(h[-1])


def train(dev: str, steps: int = 20, batch: int = 16, seq: int = 12, seed: int = 0,
          quiet: bool = False):
    """Train from a seeded initialisation on seeded random data; the losses."""
    g = torch.Generator().manual_seed(seed)
    tokens = torch.randint(0, 10, (steps, batch, seq), generator=g)
    labels = tokens.sum(-1) % 4
    torch.manual_seed(seed)
    model = SeqModel().to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    losses = []
    for step in range(steps):
        loss = F.cross_entropy(model(tokens[step].to(dev)), labels[step].to(dev))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
        if not quiet:
            print(f"step {step}: loss {losses[-1]:.4f}", flush=True)
    return losses


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default=device)
    ap.add_argument("--steps", type=int, default=20)
    args = ap.parse_args()
    if args.device == "neuron":
        import torch_neuron  # noqa: F401  (registers the device)
    train(args.device, args.steps)

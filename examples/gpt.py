# SPDX-License-Identifier: MIT
"""Train a small GPT-style decoder (token and position embeddings, causal
self-attention, layer norm, GELU MLP) as a character model on a tiny corpus.

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

CORPUS = (
    "the quick brown fox jumps over the lazy dog. "
    "a journey of a thousand miles begins with a single step. "
    "to be or not to be, that is the question. "
    "all that glitters is not gold. "
) * 8


class Block(nn.Module):
    def __init__(self, d: int, heads: int, ctx: int, dropout: float):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
        self.drop = nn.Dropout(dropout)
        self.register_buffer("causal", torch.tril(torch.ones(ctx, ctx, dtype=torch.bool)))

    def attention(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).split(d, dim=2)
        q = q.view(b, t, self.heads, d // self.heads).transpose(1, 2)
        k = k.view(b, t, self.heads, d // self.heads).transpose(1, 2)
        v = v.view(b, t, self.heads, d // self.heads).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(d // self.heads))
        att = att.masked_fill(~self.causal[:t, :t], float("-inf"))
        att = self.drop(F.softmax(att, dim=-1))
        y = (att @ v).transpose(1, 2).contiguous().view(b, t, d)
        return self.proj(y)

    def forward(self, x):
        x = x + self.drop(self.attention(self.ln1(x)))
        return x + self.drop(self.mlp(self.ln2(x)))


class GPT(nn.Module):
    def __init__(self, vocab: int, ctx: int, d: int = 64, heads: int = 4, layers: int = 2,
                 dropout: float = 0.1):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(ctx, d)
        self.blocks = nn.ModuleList(Block(d, heads, ctx, dropout) for _ in range(layers))
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab)

    def forward(self, idx):
        t = idx.shape[1]
        x = self.tok(idx) + self.pos(torch.arange(t, device=idx.device))
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.ln(x))


def train(dev: str, steps: int, batch: int = 16, ctx: int = 32, seed: int = 0,
          log_every: int = 25):
    chars = sorted(set(CORPUS))
    data = torch.tensor([chars.index(c) for c in CORPUS], dtype=torch.long)
    torch.manual_seed(seed)
    model = GPT(len(chars), ctx).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
    g = torch.Generator().manual_seed(seed)
    t0 = time.time()
    for step in range(steps):
        starts = torch.randint(0, len(data) - ctx - 1, (batch,), generator=g)
        x = torch.stack([data[s:s + ctx] for s in starts]).to(dev)
        y = torch.stack([data[s + 1:s + ctx + 1] for s in starts]).to(dev)
        logits = model(x)
        loss = F.cross_entropy(logits.view(-1, logits.shape[-1]), y.view(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % log_every == 0 or step == steps - 1:
            print(f"step {step:4d}  loss {loss.item():.4f}")
    print(f"{steps} steps on {dev} in {time.time() - t0:.1f}s")
    return loss.item()


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--device", default=device)
    p.add_argument("--steps", type=int, default=300)
    a = p.parse_args()
    final = train(a.device, a.steps)
    assert math.isfinite(final)

# SPDX-License-Identifier: MIT
"""Train a GPT-2 (pre-norm decoder blocks, learned position embeddings,
causal F.scaled_dot_product_attention, tanh-GELU MLP, final layer norm,
LM head tied to the token embedding; AdamW with weight decay on the
matrices only, clip_grad_norm_) as a character model on a tiny corpus.
The defaults are a small GPT-2 (2 layers, d=64, 4 heads, context 32);
--layers 12 --d 768 --heads 12 --ctx 1024 is GPT-2 small's shape.

--amp runs the forward in torch.autocast(device, bfloat16); --amp-dtype
float16 also scales the loss with torch.amp.GradScaler(device).

--kernels (neuron only) trains with the fused kernels of examples/kernels/
(written in torch_neuron.kernels): each block's causal attention is
attention.py's tiled kernel (online softmax over key blocks, forward and
backward one kernel each) in place of F.scaled_dot_product_attention, the
loss is cross_entropy.py's, and AdamW's update is adamw.py's FusedAdamW,
one kernel per parameter group and step (the same groups, betas and eps).
The losses are those without the flag (float32: within 1e-4, step by
step; torch-shim/tests/test_kernel_gpt2.py). It combines with --amp and
--compile; the kernel attention has no dropout, so --dropout is refused.
Runs on the virtual Trainium card by changing one line (or --device):
    device = "neuron"
"""
import argparse
import math
import os
import sys
import time
import types

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


def char_batches(ctx: int, batch: int, seed: int = 0):
    """The corpus' vocabulary size and batch_of(step) -> (x, y), each
    [batch, ctx] on the CPU: seeded random windows of the corpus, y the next
    character of x. The same seed draws the same batches, in call order."""
    chars = sorted(set(CORPUS))
    data = torch.tensor([chars.index(c) for c in CORPUS], dtype=torch.long)
    g = torch.Generator().manual_seed(seed)

    def batch_of(step):
        starts = torch.randint(0, len(data) - ctx - 1, (batch,), generator=g)
        x = torch.stack([data[s:s + ctx] for s in starts])
        y = torch.stack([data[s + 1:s + ctx + 1] for s in starts])
        return x, y

    return len(chars), batch_of


_kernels = None


def load_kernels():
    """The fused kernels of examples/kernels/ (beside this file): attention,
    cross_entropy, FusedAdamW. Imported on first use only (--kernels)."""
    global _kernels
    if _kernels is None:
        kdir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernels")
        if kdir not in sys.path:
            sys.path.insert(0, kdir)
        import adamw
        import attention
        import cross_entropy
        _kernels = types.SimpleNamespace(attention=attention.attention,
                                         cross_entropy=cross_entropy.cross_entropy,
                                         FusedAdamW=adamw.FusedAdamW)
    return _kernels


def _refuse_dropout(dropout: float):
    if dropout > 0:
        raise ValueError(f"gpt2: --kernels with --dropout {dropout}: the kernel attention "
                         "(examples/kernels/attention.py) has no dropout; use --dropout 0")


class Block(nn.Module):
    def __init__(self, d: int, heads: int, dropout: float, kernels: bool = False):
        super().__init__()
        if kernels:
            _refuse_dropout(dropout)
            load_kernels()
        self.heads, self.dropout, self.kernels = heads, dropout, kernels
        self.ln_1 = nn.LayerNorm(d)
        self.c_attn = nn.Linear(d, 3 * d)
        self.c_proj = nn.Linear(d, d)
        self.ln_2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(approximate="tanh"),
                                 nn.Linear(4 * d, d))
        self.drop = nn.Dropout(dropout)

    def attention(self, x):
        b, t, d = x.shape
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2)
                   for z in self.c_attn(x).split(d, dim=2))
        if self.kernels:
            y = _kernels.attention(q, k, v, causal=True)
        else:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True,
                                               dropout_p=self.dropout if self.training else 0.0)
        return self.c_proj(y.transpose(1, 2).reshape(b, t, d))

    def forward(self, x):
        x = x + self.drop(self.attention(self.ln_1(x)))
        return x + self.drop(self.mlp(self.ln_2(x)))


class GPT2(nn.Module):
    def __init__(self, vocab: int, ctx: int, d: int = 64, heads: int = 4, layers: int = 2,
                 dropout: float = 0.0, kernels: bool = False):
        super().__init__()
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Embedding(ctx, d)
        self.drop = nn.Dropout(dropout)
        self.h = nn.ModuleList(Block(d, heads, dropout, kernels) for _ in range(layers))
        self.ln_f = nn.LayerNorm(d)
        # GPT-2's initialisation: N(0, 0.02), residual projections scaled down
        for name, p in self.named_parameters():
            if p.dim() == 2:
                std = 0.02 / math.sqrt(2 * layers) if name.endswith(("c_proj.weight", "2.weight")) \
                    else 0.02
                nn.init.normal_(p, 0.0, std)
            elif name.endswith("bias"):
                nn.init.zeros_(p)

    def forward(self, idx):
        t = idx.shape[1]
        x = self.drop(self.wte(idx) + self.wpe(torch.arange(t, device=idx.device)))
        for blk in self.h:
            x = blk(x)
        # the LM head is the token embedding (tied)
        return F.linear(self.ln_f(x), self.wte.weight)


def optimizer(model, lr=3e-3, weight_decay=0.1, kernels=False):
    """AdamW as GPT-2 trainings use it: no weight decay on biases and norms.
    kernels: the same update as one fused kernel per group (FusedAdamW)."""
    decay = [p for p in model.parameters() if p.dim() >= 2]
    rest = [p for p in model.parameters() if p.dim() < 2]
    cls = load_kernels().FusedAdamW if kernels else torch.optim.AdamW
    return cls([{"params": decay, "weight_decay": weight_decay},
                {"params": rest, "weight_decay": 0.0}], lr=lr, betas=(0.9, 0.95), eps=1e-8)


def lm_loss(logits, y, kernels=False):
    """The mean cross-entropy of the next-token logits [B, T, V] against y
    [B, T]; kernels: the fused softmax cross-entropy kernel."""
    logits, y = logits.reshape(-1, logits.shape[-1]), y.reshape(-1)
    return load_kernels().cross_entropy(logits, y) if kernels else F.cross_entropy(logits, y)


def train(dev: str, steps: int, amp: str = "", batch: int = 16, ctx: int = 32, d: int = 64,
          heads: int = 4, layers: int = 2, dropout: float = 0.0, seed: int = 0,
          quiet: bool = False, log_every: int = 1, compile: bool = False,
          kernels: bool = False):
    """Train from a seeded initialisation on seeded batches; the losses.
    amp: "" (float32), "bfloat16" or "float16" (autocast; float16 with a
    GradScaler). compile: the forward and loss (and so their backward) run
    as torch.compile graphs (backend "neuron" on the card). kernels: the
    attention, the loss and the optimizer step are the fused kernels of
    examples/kernels/ (the card only; no dropout)."""
    if kernels and torch.device(dev).type != "neuron":
        raise ValueError(f"gpt2: --kernels runs kernels written for the neuron card, "
                         f"not on {dev!r}: use --device neuron")
    chars = sorted(set(CORPUS))
    data = torch.tensor([chars.index(c) for c in CORPUS], dtype=torch.long)
    torch.manual_seed(seed)
    model = GPT2(len(chars), ctx, d, heads, layers, dropout, kernels).to(dev)
    opt = optimizer(model, kernels=kernels)
    amp_dtype = getattr(torch, amp) if amp else None
    scaler = torch.amp.GradScaler(dev, enabled=amp == "float16")
    g = torch.Generator().manual_seed(seed)
    losses = []

    def forward_loss(x, y):
        return lm_loss(model(x), y, kernels)

    if compile:
        backend = "neuron" if torch.device(dev).type == "neuron" else "inductor"
        forward_loss = torch.compile(forward_loss, backend=backend)
    t0 = time.time()
    for step in range(steps):
        starts = torch.randint(0, len(data) - ctx - 1, (batch,), generator=g)
        x = torch.stack([data[s:s + ctx] for s in starts]).to(dev)
        y = torch.stack([data[s + 1:s + ctx + 1] for s in starts]).to(dev)
        with torch.autocast(dev, dtype=amp_dtype, enabled=bool(amp)):
            loss = forward_loss(x, y)
        opt.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(opt)
        scaler.update()
        losses.append(loss.item())
        if not quiet and (step % log_every == 0 or step == steps - 1):
            print(f"step {step:4d}  loss {losses[-1]:.4f}", flush=True)
    if not quiet:
        print(f"{steps} steps on {dev} in {time.time() - t0:.1f}s")
    return losses


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--device", default=device)
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--amp", action="store_true", help="autocast (bfloat16 unless --amp-dtype)")
    p.add_argument("--amp-dtype", choices=["bfloat16", "float16"], default="bfloat16")
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--ctx", type=int, default=32)
    p.add_argument("--d", type=int, default=64)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--dropout", type=float, default=0.0,
                   help="dropout masks come from the device's generator: with dropout, "
                        "losses differ from another device's")
    p.add_argument("--log-every", type=int, default=25)
    p.add_argument("--compile", action="store_true",
                   help="torch.compile the forward and loss (compiled kernels on neuron)")
    p.add_argument("--kernels", action="store_true",
                   help="the fused kernels of examples/kernels/: attention, cross-entropy, "
                        "AdamW (neuron only; no dropout)")
    a = p.parse_args()
    if a.kernels and a.dropout > 0:
        p.error(f"--kernels with --dropout {a.dropout}: the kernel attention has no dropout")
    if a.device == "neuron":
        import torch_neuron  # noqa: F401  (registers the device)
    losses = train(a.device, a.steps, a.amp_dtype if a.amp else "", a.batch, a.ctx, a.d,
                   a.heads, a.layers, a.dropout, log_every=a.log_every, compile=a.compile,
                   kernels=a.kernels)
    assert math.isfinite(losses[-1])

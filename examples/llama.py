# SPDX-License-Identifier: MIT
"""A Llama-style decoder: pre-norm blocks with RMSNorm, rotary position
embeddings (RoPE, the half-split rotation), grouped-query attention (fewer
key/value heads than query heads, each shared by a group of query heads),
a SwiGLU MLP (w2(silu(w1 x) * w3 x)), no biases, a final RMSNorm and an
untied LM head.

forward(idx) is the training form (causal attention over idx). With a
static KV cache (examples/generate.py) the same modules run the inference
form: forward(idx, positions, cache, mask) writes the keys and values of
idx's tokens into the cache at `positions` (a tensor on the model's device,
never a Python int) and attends over the whole cache under `mask`, so one
captured step serves every position.

cached_attention() is shared with generate.py's GPT-2.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def cached_attention(q, k, v, layer_cache, positions, mask):
    """Attention of q over a static cache after writing k and v into it.

    q [B, H, T, D]; k, v [B, Hkv, T, D] (H a multiple of Hkv: grouped-query
    attention); layer_cache [2, B, Hkv, M, D], keys then values, M the
    cache's length; positions [T] (long, on the device) where k and v go
    and mask [T, M] (bool) which cache entries each query sees -- or, each
    sequence at its own place (examples/serve.py's slots), positions [B, T]
    and mask [B, T, M]. Query head h reads key/value head h // (H // Hkv):
    the query heads of a group are stacked as rows of one attention over
    their shared cache, so the cache is never repeated. Returns
    [B, H, T, D]."""
    b, h, t, d = q.shape
    hkv = k.shape[1]
    g = h // hkv
    if positions.dim() == 1:
        layer_cache[0].index_copy_(2, positions, k)
        layer_cache[1].index_copy_(2, positions, v)
        m = mask.repeat(g, 1) if g > 1 else mask
    else:
        where = positions[:, None, :, None].expand(b, hkv, t, d)
        layer_cache[0].scatter_(2, where, k)
        layer_cache[1].scatter_(2, where, v)
        m = (mask.repeat(1, g, 1) if g > 1 else mask)[:, None]
    qg = q.reshape(b, hkv, g * t, d)
    y = F.scaled_dot_product_attention(qg, layer_cache[0], layer_cache[1], attn_mask=m)
    return y.view(b, h, t, d)


def rope_tables(head_dim: int, max_len: int, theta: float = 10000.0):
    """cos and sin [max_len, head_dim / 2] of RoPE's angles p * theta^(-2i/D)."""
    inv = 1.0 / theta ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim)
    ang = torch.outer(torch.arange(max_len, dtype=torch.float32), inv)
    return ang.cos(), ang.sin()


def rope(x, cos, sin):
    """Rotate the halves of x [B, H, T, D] by the angles cos/sin [T, D/2]."""
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1)


class Attention(nn.Module):
    def __init__(self, d: int, heads: int, kv_heads: int):
        super().__init__()
        assert d % heads == 0 and heads % kv_heads == 0
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, d // heads
        self.wq = nn.Linear(d, heads * self.head_dim, bias=False)
        self.wk = nn.Linear(d, kv_heads * self.head_dim, bias=False)
        self.wv = nn.Linear(d, kv_heads * self.head_dim, bias=False)
        self.wo = nn.Linear(heads * self.head_dim, d, bias=False)

    def forward(self, x, cos, sin, positions=None, layer_cache=None, mask=None):
        b, t, _ = x.shape
        q = self.wq(x).view(b, t, self.heads, self.head_dim).transpose(1, 2)
        k = self.wk(x).view(b, t, self.kv_heads, self.head_dim).transpose(1, 2)
        v = self.wv(x).view(b, t, self.kv_heads, self.head_dim).transpose(1, 2)
        q, k = rope(q, cos, sin), rope(k, cos, sin)
        if layer_cache is None:
            g = self.heads // self.kv_heads
            k, v = k.repeat_interleave(g, dim=1), v.repeat_interleave(g, dim=1)
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            y = cached_attention(q, k, v, layer_cache, positions, mask)
        return self.wo(y.transpose(1, 2).reshape(b, t, -1))


class SwiGLU(nn.Module):
    def __init__(self, d: int, hidden: int):
        super().__init__()
        self.w1 = nn.Linear(d, hidden, bias=False)
        self.w3 = nn.Linear(d, hidden, bias=False)
        self.w2 = nn.Linear(hidden, d, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class LlamaBlock(nn.Module):
    def __init__(self, d: int, heads: int, kv_heads: int, hidden: int, eps: float):
        super().__init__()
        self.attention_norm = nn.RMSNorm(d, eps=eps)
        self.attention = Attention(d, heads, kv_heads)
        self.ffn_norm = nn.RMSNorm(d, eps=eps)
        self.feed_forward = SwiGLU(d, hidden)

    def forward(self, x, cos, sin, positions=None, layer_cache=None, mask=None):
        x = x + self.attention(self.attention_norm(x), cos, sin, positions, layer_cache, mask)
        return x + self.feed_forward(self.ffn_norm(x))


class Llama(nn.Module):
    """vocab, ctx (the longest sequence: RoPE's tables), d, heads, kv_heads
    (grouped-query attention when fewer than heads), layers; the SwiGLU's
    hidden width is Llama's 8d/3 rounded up to a multiple of 32."""

    def __init__(self, vocab: int, ctx: int, d: int = 64, heads: int = 4, kv_heads: int = 2,
                 layers: int = 2, eps: float = 1e-5):
        super().__init__()
        self.ctx = ctx
        hidden = 32 * math.ceil(8 * d / 3 / 32)
        self.tok_embeddings = nn.Embedding(vocab, d)
        self.layers = nn.ModuleList(LlamaBlock(d, heads, kv_heads, hidden, eps)
                                    for _ in range(layers))
        self.norm = nn.RMSNorm(d, eps=eps)
        self.output = nn.Linear(d, vocab, bias=False)
        cos, sin = rope_tables(d // heads, ctx)
        self.register_buffer("rope_cos", cos, persistent=False)
        self.register_buffer("rope_sin", sin, persistent=False)
        for name, p in self.named_parameters():
            if p.dim() == 2:
                std = 0.02 / math.sqrt(2 * layers) if name.endswith(("wo.weight", "w2.weight")) \
                    else 0.02
                nn.init.normal_(p, 0.0, std)

    def hidden(self, idx, positions=None, cache=None, mask=None):
        """The final hidden states [B, T, d] of idx [B, T]; with a cache, of
        tokens at `positions` [T] (or [B, T]) seeing the cache entries
        `mask` [T, M] (or [B, T, M]) allows (cached_attention())."""
        if positions is None:
            positions = torch.arange(idx.shape[1], device=idx.device)
        if positions.dim() == 1:
            cos = self.rope_cos.index_select(0, positions)
            sin = self.rope_sin.index_select(0, positions)
        else:  # [B, 1, T, D/2]: over each sequence's heads
            cos = F.embedding(positions, self.rope_cos)[:, None]
            sin = F.embedding(positions, self.rope_sin)[:, None]
        x = self.tok_embeddings(idx)
        for i, blk in enumerate(self.layers):
            x = blk(x, cos, sin, positions, None if cache is None else cache[i], mask)
        return self.norm(x)

    def head(self, h):
        return self.output(h)

    def forward(self, idx):
        return self.head(self.hidden(idx))

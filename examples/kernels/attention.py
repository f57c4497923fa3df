# SPDX-License-Identifier: MIT
"""Tiled attention for the card: softmax(q k^T * scale) v computed key
block by key block with an online softmax (FlashAttention's shape), so the
[S, S] score matrix never exists; causal masking skips the blocks above the
diagonal (a Python `if` on block positions, decided at trace time) and
masks the diagonal blocks. The forward also returns each row's logsumexp,
from which the backward kernel recomputes the probabilities.

q, k, v: [B, H, S, D] contiguous (any floating card type; statistics in
float32).

    python3 examples/kernels/attention.py
"""
import math

import torch
import torch.nn.functional as F

import torch_neuron.kernels as nk

NEG_INF = float("-inf")


def _causal_bias(rows, j, block):
    """[S, block] float32: -inf where key j + c comes after query r, else 0
    (PyTorch's additive causal mask; positions exact to 2^24 in float32).
    Small, and made before the scores' MATMUL, so that the addition
    follows the product directly (one float32 pass shared by the card's
    threads; the MATMUL's own bias operand would be added on the one
    thread a product this small runs on)."""
    r = nk.arange(rows, dtype=nk.float32).reshape(rows, 1)
    c = nk.arange(j, j + block, dtype=nk.float32).reshape(1, block)
    return nk.where(c > r, NEG_INF, nk.zeros((rows, block)))


def _scores(q3, kt, causal, j=0):
    """q3 @ kt [BH, S, block], not yet scaled, -inf for the keys after
    their query when @causal. The scale is applied where the scores are
    next read, in the EXPR of the exp: softmax(x * scale) = exp((x - m) *
    scale) / sum for the row max m of x (scale > 0, -inf stays -inf)."""
    s, block = q3.shape[1], kt.shape[2]
    if causal and j + block - 1 > 0:
        bias = _causal_bias(s, j, block)
        return nk.matmul(q3, kt, dtype=nk.float32) + bias
    return nk.matmul(q3, kt, dtype=nk.float32)


def _one_block(q3, k3, v3, out3, lse3, causal, scale):
    """Every key in one tile: the scores once, a plain softmax and one
    product with V -- the online rescaling of the tiled loop would only
    add work. The row sums of p come out of that product too: V gets a
    column of ones (p @ [V | 1] = [p V | sum p]), which costs a copy of V
    instead of a REDUCE over the [S, SK] probabilities."""
    bh, sk, d = v3.shape
    sc = _scores(q3, k3.transpose(1, 2), causal)                         # [BH, S, SK]
    m = nk.max(sc, 2, keepdim=True)
    p = nk.exp((sc - m) * scale)
    v1 = nk.ones((bh, sk, d + 1))
    nk.copy(v1[:, :, :d], v3)
    o1 = nk.matmul(p, v1)                                               # [BH, S, D + 1]
    l = o1[:, :, d:]
    nk.div(o1[:, :, :d], l, out=out3)
    nk.add(m * scale, nk.log(l), out=lse3)


@nk.kernel
def attention_fwd(q, k, v, causal: bool, block: int):
    b, h, s, d = q.shape
    sk = k.shape[2]
    scale = 1.0 / math.sqrt(d)
    q3, k3, v3 = q.reshape(b * h, s, d), k.reshape(b * h, sk, d), v.reshape(b * h, sk, d)
    out = nk.empty(q.shape, q.dtype)
    lse = nk.empty((b, h, s, 1), nk.float32)
    if sk <= block:
        _one_block(q3, k3, v3, out.reshape(b * h, s, d), lse.reshape(b * h, s, 1),
                   causal, scale)
        return out, lse
    m = nk.full((b * h, s, 1), NEG_INF)                   # running row max
    l = nk.zeros((b * h, s, 1))                           # running row sum of exp
    acc = nk.zeros((b * h, s, d))                         # running output, unnormalised
    for j in range(0, sk, block):
        if causal and j > s - 1:
            break                                          # every later block is masked
        bj = min(block, sk - j)
        kj, vj = k3[:, j:j + bj, :], v3[:, j:j + bj, :]
        sc = _scores(q3, kj.transpose(1, 2), causal, j)                     # [BH, S, bj]
        m_new = nk.maximum(m, nk.max(sc, 2, keepdim=True))
        p = nk.exp((sc - m_new) * scale)
        alpha = nk.exp((m - m_new) * scale)
        nk.add(l * alpha, nk.sum(p, 2, keepdim=True), out=l)
        nk.mul(acc, alpha, out=acc)
        nk.matmul(p, vj.to(nk.float32) if vj.dtype != nk.float32 else vj, out=acc,
                  accumulate=True)
        nk.copy(m, m_new)
    nk.div(acc, l, out=out.reshape(b * h, s, d))
    nk.add(m * scale, nk.log(l), out=lse.reshape(b * h, s, 1))
    return out, lse


@nk.kernel
def attention_bwd(do, q, k, v, out, lse, causal: bool):
    b, h, s, d = q.shape
    sk = k.shape[2]
    scale = 1.0 / math.sqrt(d)
    bh = b * h
    q3, k3, v3 = q.reshape(bh, s, d), k.reshape(bh, sk, d), v.reshape(bh, sk, d)
    do3, o3 = do.reshape(bh, s, d), out.reshape(bh, s, d)
    if q.dtype != nk.float32:     # bfloat16/float16: the products with p and ds in float32
        q3, k3, v3, do3 = (t.to(nk.float32) for t in (q3, k3, v3, do3))
    sc = _scores(q3, k3.transpose(1, 2), causal)                         # [BH, S, SK]
    p = nk.exp(sc * scale - lse.reshape(bh, s, 1))         # the forward's probabilities
    dq, dk, dv = (nk.empty(t.shape, t.dtype) for t in (q, k, v))
    nk.matmul(p.transpose(1, 2), do3, out=dv.reshape(bh, sk, d))          # P^T dO
    dp = nk.matmul(do3, v3.transpose(1, 2))                # dO V^T  [BH, S, SK]
    delta = nk.sum(do3 * o3, 2, keepdim=True)             # rowsum(dO * O)
    ds = p * (dp - delta) * scale
    nk.matmul(ds, k3, out=dq.reshape(bh, s, d))
    nk.matmul(ds.transpose(1, 2), q3, out=dk.reshape(bh, sk, d))
    return dq, dk, dv


@nk.op("examples::attention")
def attention_op(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool,
                 block: int) -> tuple[torch.Tensor, torch.Tensor]:
    return attention_fwd(q, k, v, causal, block)


@nk.op("examples::attention_backward")
def attention_backward_op(do: torch.Tensor, q: torch.Tensor, k: torch.Tensor,
                          v: torch.Tensor, out: torch.Tensor, lse: torch.Tensor,
                          causal: bool) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return attention_bwd(do, q, k, v, out, lse, causal)


def _setup(ctx, inputs, output):
    q, k, v, causal, _block = inputs
    ctx.causal = causal
    ctx.save_for_backward(q, k, v, *output)


def _backward(ctx, do, _dlse):
    q, k, v, out, lse = ctx.saved_tensors
    dq, dk, dv = attention_backward_op(do.contiguous(), q, k, v, out, lse, ctx.causal)
    return dq, dk, dv, None, None


attention_op.register_autograd(_backward, setup_context=_setup)


def attention(q, k, v, causal=False, block=128):
    """softmax(q k^T / sqrt(d)) v over [B, H, S, D] tensors, key blocks of
    @block (one kernel forward, one backward; up to @block keys are one
    tile, computed in one pass)."""
    return attention_op(q.contiguous(), k.contiguous(), v.contiguous(), causal, block)[0]


def reference(q, k, v, causal=False):
    return F.scaled_dot_product_attention(q, k, v, is_causal=causal)


def composed(q, k, v, causal=False):
    """The same computation written with PyTorch's operators one by one:
    scaled scores, the causal mask, softmax, the product with V."""
    s = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(q.shape[-1]))
    if causal:
        ls, lk = q.shape[-2], k.shape[-2]
        s = s.masked_fill(torch.ones(ls, lk, dtype=torch.bool, device=q.device).triu(1),
                          NEG_INF)
    return s.softmax(-1) @ v


if __name__ == "__main__":
    q, k, v = (torch.randn(2, 4, 64, 32, device="neuron", requires_grad=True) for _ in range(3))
    y = attention(q, k, v, causal=True)
    y.sum().backward()
    grads = [t.grad for t in (q, k, v)]
    for t in (q, k, v):
        t.grad = None
    ref = reference(q, k, v, causal=True)
    ref.sum().backward()
    print("forward max error", (y - ref).abs().max().item())
    print("grad max errors", [(a - t.grad).abs().max().item() for a, t in zip(grads, (q, k, v))])

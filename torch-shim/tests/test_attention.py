# SPDX-License-Identifier: MIT
"""scaled_dot_product_attention on the card (the "overrideable" SDPA
backend, forward and backward) against the CPU: no mask, causal, boolean and
additive masks, explicit scale, dropout (the card's RNG; backward redraws the
same mask), and nn.MultiheadAttention / nn.TransformerEncoderLayer, trained
and in eval mode (PyTorch's fused fast path)."""
import copy

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from conftest import assert_close

N = "neuron"


def leaves(*ts):
    return ([t.clone().requires_grad_() for t in ts],
            [t.detach().to(N).requires_grad_() for t in ts])


def sdpa_both(q, k, v, mask=None, **kw):
    (qc, kc, vc), (qn, kn, vn) = leaves(q, k, v)
    want = F.scaled_dot_product_attention(qc, kc, vc, attn_mask=mask, **kw)
    got = F.scaled_dot_product_attention(qn, kn, vn, attn_mask=None if mask is None
                                         else mask.to(N), **kw)
    assert_close(got, want.detach())
    g = torch.randn(want.shape)
    (want * g).sum().backward()
    (got * g.to(N)).sum().backward()
    for c, d in zip((qc, kc, vc), (qn, kn, vn)):
        assert_close(d.grad, c.grad)


def qkv(B=2, H=3, L=5, S=7, E=8, Ev=6):
    return torch.randn(B, H, L, E), torch.randn(B, H, S, E), torch.randn(B, H, S, Ev)


def test_sdpa_picks_the_card_backend():
    q, k, v = (t.to(N) for t in qkv())
    assert torch._fused_sdp_choice(q, k, v) == 4  # SDPBackend.overrideable


@pytest.mark.parametrize("causal", [False, True])
def test_sdpa_plain_and_causal(causal):
    sdpa_both(*qkv(L=6, S=6), is_causal=causal)
    sdpa_both(*qkv(L=4, S=9), is_causal=causal, scale=0.3)


def test_sdpa_boolean_mask():
    q, k, v = qkv()
    mask = torch.rand(5, 7) > 0.4
    mask[:, 0] = True  # no row fully masked
    sdpa_both(q, k, v, mask)
    sdpa_both(q, k, v, mask.expand(2, 1, 5, 7).clone())


def test_sdpa_additive_mask_and_its_grad():
    q, k, v = qkv()
    bias = torch.randn(1, 3, 5, 7)
    (qc, kc, vc, bc), (qn, kn, vn, bn) = leaves(q, k, v, bias)
    want = F.scaled_dot_product_attention(qc, kc, vc, attn_mask=bc)
    got = F.scaled_dot_product_attention(qn, kn, vn, attn_mask=bn)
    assert_close(got, want.detach())
    want.sum().backward()
    got.sum().backward()
    for c, d in zip((qc, kc, vc, bc), (qn, kn, vn, bn)):
        assert_close(d.grad, c.grad)


def test_sdpa_dropout_mask_is_the_same_in_backward():
    q, k, v = (t.to(N) for t in qkv(L=16, S=16, E=4, Ev=4))
    v = torch.eye(16).expand(2, 3, 16, 16).contiguous().to(N)
    torch.neuron.manual_seed(7)
    a = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5)
    torch.neuron.manual_seed(7)
    b = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5)
    assert torch.equal(a.cpu(), b.cpu())  # the card's generator drew the mask
    # v = I: out is the dropped-out probabilities; about half are zero
    zeros = (a.cpu() == 0).float().mean().item()
    assert 0.4 < zeros < 0.6, zeros
    # grad wrt v of sum(out * G) is P_dropped^T G: with the same mask it matches
    vv = v.clone().requires_grad_()
    torch.neuron.manual_seed(7)
    out = F.scaled_dot_product_attention(q, k, vv, dropout_p=0.5)
    g = torch.randn(out.shape).to(N)
    (out * g).sum().backward()
    assert_close(vv.grad, (a.transpose(-2, -1) @ g).cpu())


def test_sdpa_grad_as_accurate_as_the_cpu_with_large_logits():
    """Scores in the tens (a row's logsumexp far from 0): the card's
    gradients stay within twice the CPU's float32 error against float64
    (recomputing the probabilities as exp(s - lse) from a float32 lse cost
    about |lse| ulps each: 6.1 times the CPU's error on q's gradient here)."""
    torch.manual_seed(3)
    q, k, v = (torch.randn(2, 2, 16, 8) * 6 for _ in range(3))
    g = torch.randn(2, 2, 16, 8)
    mask = torch.rand(16, 16) > 0.3
    mask[:, 0] = True

    def grads(dev, dtype):
        xs = [t.detach().to(dev, dtype).requires_grad_() for t in (q, k, v)]
        F.scaled_dot_product_attention(*xs, attn_mask=mask.to(dev)).backward(g.to(dev, dtype))
        return [x.grad.cpu().double() for x in xs]
    exact, cpu, card = grads("cpu", torch.float64), grads("cpu", torch.float32), grads(N, torch.float32)
    for r, c, d in zip(exact, cpu, card):
        err_cpu, err_card = (c - r).abs().max().item(), (d - r).abs().max().item()
        assert err_card <= 2 * err_cpu, (err_card, err_cpu)


def test_sdpa_bfloat16():
    q, k, v = (t.bfloat16() for t in qkv())
    want = F.scaled_dot_product_attention(q.float(), k.float(), v.float())
    got = F.scaled_dot_product_attention(q.to(N), k.to(N), v.to(N))
    assert got.dtype == torch.bfloat16
    assert_close(got, want.bfloat16(), torch.bfloat16)


def module_both(mod, *inputs, outs=lambda o: o):
    dev = copy.deepcopy(mod).to(N)
    xc, xn = leaves(*inputs)
    want, got = outs(mod(*xc)), outs(dev(*xn))
    assert_close(got, want.detach())
    g = torch.randn(want.shape)
    (want * g).sum().backward()
    (got * g.to(N)).sum().backward()
    for c, d in zip(xc, xn):
        assert_close(d.grad, c.grad)
    for (name, p), q in zip(mod.named_parameters(), dev.parameters()):
        assert_close(q.grad, p.grad)


def test_multihead_attention():
    mha = nn.MultiheadAttention(12, 3, batch_first=True)
    x = torch.randn(2, 5, 12)
    module_both(mha, x, x, x, outs=lambda o: o[0])


def test_transformer_encoder_layer():
    layer = nn.TransformerEncoderLayer(16, 4, dim_feedforward=32, dropout=0.0,
                                       batch_first=True)
    module_both(layer, torch.randn(2, 6, 16))
    layer = nn.TransformerEncoderLayer(16, 4, dim_feedforward=32, dropout=0.0,
                                       batch_first=True, norm_first=True)
    module_both(layer, torch.randn(2, 6, 16))


FUSED = {"aten::_native_multi_head_attention", "aten::_transformer_encoder_layer_fwd",
         "aten::_nested_tensor_from_mask"}


def fused_ops(fn):
    """fn()'s result and the fused fast-path operators it ran."""
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        r = fn()
    return r, {e.name for e in prof.events()} & FUSED


def fast_both(mod, *args, **kw):
    """@mod in eval mode without gradients, on the CPU and on the card: the
    same fast-path operators (torch._native_multi_head_attention,
    torch._transformer_encoder_layer_fwd) on both, which this returns."""
    mod = mod.eval()
    dev = copy.deepcopy(mod).to(N)
    moved = {}  # one copy per tensor: self-attention is query is key is value

    def to_dev(v):
        if not isinstance(v, torch.Tensor):
            return v
        return moved.setdefault(id(v), v.to(N))
    with torch.no_grad():
        want, fused_cpu = fused_ops(lambda: mod(*args, **kw))
        got, fused = fused_ops(lambda: dev(*map(to_dev, args),
                                           **{k: to_dev(v) for k, v in kw.items()}))
    assert fused == fused_cpu
    for g, w in zip(got if isinstance(got, tuple) else (got,),
                    want if isinstance(want, tuple) else (want,)):
        if w is None:
            assert g is None
        else:
            assert_close(g, w)
    return fused


@pytest.mark.parametrize("need_weights", [False, True])
def test_multihead_attention_fast_path(need_weights):
    """Self-attention in eval mode: no mask, a key padding mask (one batch
    entry fully padded gives NaN rows on both sides), an attention mask,
    both (boolean and additive)."""
    torch.manual_seed(0)
    mha = nn.MultiheadAttention(16, 4, batch_first=True)
    x = torch.randn(3, 6, 16)
    pad = torch.zeros(3, 6, dtype=torch.bool)
    pad[0, 4:] = True
    pad[2, :] = True
    causal = torch.triu(torch.ones(6, 6, dtype=torch.bool), 1)
    kw = dict(need_weights=need_weights)
    assert fast_both(mha, x, x, x, **kw) == {"aten::_native_multi_head_attention"}
    fast_both(mha, x, x, x, key_padding_mask=pad, **kw)
    fast_both(mha, x, x, x, attn_mask=causal, **kw)
    fast_both(mha, x[:2], x[:2], x[:2], key_padding_mask=pad[:2], attn_mask=causal, **kw)
    additive = torch.zeros(6, 6).masked_fill(causal, float("-inf"))
    fast_both(mha, x, x, x, attn_mask=additive, **kw)
    fast_both(mha, x, x, x, average_attn_weights=False, **kw)


@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_transformer_encoder_fast_path(activation):
    """TransformerEncoderLayer and a 2-layer TransformerEncoder in eval mode
    (the fused layer), with and without a causal mask."""
    torch.manual_seed(1)
    layer = nn.TransformerEncoderLayer(16, 4, dim_feedforward=32, dropout=0.0,
                                       activation=activation, batch_first=True)
    x = torch.randn(2, 5, 16)
    causal = nn.Transformer.generate_square_subsequent_mask(5)
    assert "aten::_transformer_encoder_layer_fwd" in fast_both(layer, x)
    fast_both(layer, x, src_mask=causal)
    enc = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
    fast_both(enc, x)
    fast_both(enc, x, mask=causal, is_causal=True)


def test_transformer_encoder_padding_mask_nested_path():
    """nn.TransformerEncoder in eval mode with a padding mask packs the
    sequences into a nested tensor on the card, runs each layer on it and
    pads the result: all on the card (the conftest fails a fallback), equal
    to the CPU's. The primitives alone: packing, padding, the alignment
    check."""
    torch.manual_seed(2)
    layer = nn.TransformerEncoderLayer(16, 4, dim_feedforward=32, dropout=0.0,
                                       batch_first=True)
    x = torch.randn(3, 6, 16)
    pad = torch.zeros(3, 6, dtype=torch.bool)
    pad[0, 4:] = True
    pad[1, 5:] = True
    for norm_first in (False, True):
        layer.norm_first = norm_first
        fused = fast_both(nn.TransformerEncoder(layer, 2), x, src_key_padding_mask=pad)
        assert ("aten::_nested_tensor_from_mask" in fused) == (not norm_first)
    keep = ~pad
    nt = torch._nested_tensor_from_mask(x.to(N), keep.to(N))
    assert nt.is_nested and nt.device.type == "neuron"
    assert_close(nt.to_padded_tensor(0.5), torch._nested_tensor_from_mask(x, keep)
                 .to_padded_tensor(0.5))
    assert_close(nt.to_padded_tensor(0.0, (3, 7, 16)),
                 torch._nested_tensor_from_mask(x, keep).to_padded_tensor(0.0, (3, 7, 16)))
    gap = keep.clone()
    gap[2, 1] = False
    for m in (keep, gap):
        assert (torch._nested_tensor_from_mask_left_aligned(x.to(N), m.to(N))
                == torch._nested_tensor_from_mask_left_aligned(x, m))
    with pytest.raises(RuntimeError, match="left aligned"):
        torch._nested_tensor_from_mask(x.to(N), gap.to(N))

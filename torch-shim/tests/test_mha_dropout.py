# SPDX-License-Identifier: MIT
"""F.multi_head_attention_forward on the card against the CPU, the shape of
PyTorch's OpInfo samples (unbatched, bias_k/bias_v, one or two heads).
Without dropout the numbers must be the CPU's. With dropout (training=True)
the card's random mask cannot equal the CPU generator's, so the card's
result is checked for being a correct dropout of the CPU's attention: every
returned weight is 0 or the CPU's weight / (1 - p), and the output is the
CPU's computation from exactly those weights."""
import pytest
import torch
import torch.nn.functional as F

from conftest import assert_close

N = "neuron"
P = 0.5


def make(emb, seed):
    g = torch.Generator().manual_seed(seed)
    r = lambda *s: torch.randn(*s, generator=g)  # noqa: E731
    return dict(query=r(3, emb), key=r(3, emb), value=r(3, emb),
                in_proj_weight=r(3 * emb, emb), in_proj_bias=r(3 * emb),
                bias_k=r(emb), bias_v=r(emb), out_proj_weight=r(emb, emb),
                out_proj_bias=r(emb))


def mha(t, heads, training, dev):
    t = {k: v.to(dev) for k, v in t.items()}
    emb = t["query"].size(-1)
    return F.multi_head_attention_forward(
        t["query"], t["key"], t["value"], emb, heads, t["in_proj_weight"],
        t["in_proj_bias"], t["bias_k"], t["bias_v"], False, P, t["out_proj_weight"],
        t["out_proj_bias"], training=training)


@pytest.mark.parametrize("heads", [1, 2])
def test_mha_no_dropout(heads):
    t = make(2, heads)
    want = mha(t, heads, False, "cpu")
    got = mha(t, heads, False, N)
    assert_close(got[0], want[0])
    assert_close(got[1], want[1])


def test_mha_dropout_is_a_dropout_of_the_cpu_result():
    t = make(2, 7)
    _, w_ref = mha(t, 1, False, "cpu")          # [3, 4]: softmax weights, no dropout
    torch.manual_seed(0)
    out, w = mha(t, 1, True, N)
    scaled = w_ref / (1 - P)
    # every weight is dropped (0) or kept and scaled by 1 / (1 - p)
    assert_close(torch.where(w.ne(0), w, scaled.to(N)), scaled)
    w = w.cpu()
    kept = w.ne(0)
    assert kept.any() and not kept.all(), "a 0.5 dropout of 12 weights kept all or none"
    # the output is the CPU's attention from exactly those weights (one head)
    emb = 2
    wv, bv = t["in_proj_weight"][2 * emb:], t["in_proj_bias"][2 * emb:]
    v = torch.cat([t["value"] @ wv.T + bv, t["bias_v"].view(1, emb)])
    want = (w @ v) @ t["out_proj_weight"].T + t["out_proj_bias"]
    assert_close(out, want, atol=1e-5)

# SPDX-License-Identifier: MIT
"""embedding_bag, segment_reduce, masked_scatter and the margin and CTC
losses on the card against the CPU, forward and backward: every reduction,
weights, p = 1 and 2, multilabel targets ending in -1, CTC with padded and
concatenated targets, repeated labels and shorter inputs, embedding_bag in
every mode with padding_idx, per_sample_weights and include_last_offset."""
import pytest
import torch
import torch.nn.functional as F

from conftest import assert_close

N = "neuron"
REDUCTIONS = ["none", "mean", "sum"]


def check_fwd_bwd(fn, x, *rest, atol=1e-5, **kw):
    xc = x.clone().requires_grad_()
    xn = x.to(N).requires_grad_()
    want = fn(xc, *rest, **kw)
    got = fn(xn, *[r.to(N) if isinstance(r, torch.Tensor) else r for r in rest],
             **{k: v.to(N) if isinstance(v, torch.Tensor) else v for k, v in kw.items()})
    assert_close(got, want.detach(), atol=atol)
    g = torch.randn(want.shape)
    (want * g).sum().backward()
    (got * g.to(N)).sum().backward()
    assert_close(xn.grad, xc.grad, atol=atol)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("p", [1, 2])
def test_multi_margin(reduction, p):
    x, t = torch.randn(6, 5), torch.tensor([0, 4, 2, 2, 1, 3])
    check_fwd_bwd(F.multi_margin_loss, x, t, p=p, reduction=reduction)
    check_fwd_bwd(F.multi_margin_loss, x, t, p=p, margin=0.5, weight=torch.rand(5),
                  reduction=reduction)
    check_fwd_bwd(F.multi_margin_loss, torch.randn(5), torch.tensor(3), p=p,
                  reduction=reduction)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_multilabel_margin(reduction):
    x = torch.randn(4, 5)
    t = torch.tensor([[3, 0, -1, 1, 2], [1, 2, 3, 4, 0], [-1, 1, 1, 1, 1], [4, 4, -1, 0, 0]])
    check_fwd_bwd(F.multilabel_margin_loss, x, t, reduction=reduction)
    check_fwd_bwd(F.multilabel_margin_loss, torch.randn(5), torch.tensor([2, 0, -1, 4, 3]),
                  reduction=reduction)


def test_margin_modules():
    for mod, t in [(torch.nn.MultiMarginLoss(), torch.tensor([1, 0, 3])),
                   (torch.nn.MultiLabelMarginLoss(),
                    torch.tensor([[1, -1, 0, 0], [3, 2, -1, 0], [0, 1, 2, 3]]))]:
        check_fwd_bwd(mod, torch.randn(3, 4), t)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("concat", [False, True])
def test_ctc(reduction, concat):
    T, B, C, S = 12, 3, 5, 4
    lp = torch.randn(T, B, C).log_softmax(2)
    targets = torch.tensor([[1, 2, 2, 3], [4, 1, 0, 0], [2, 2, 2, 0]])   # repeats, padding
    tl = [4, 2, 3]
    il = [12, 9, 10]
    tgt = torch.cat([targets[b, :tl[b]] for b in range(B)]) if concat else targets
    for zi in [False, True]:
        check_fwd_bwd(F.ctc_loss, lp, tgt, torch.tensor(il), torch.tensor(tl),
                      reduction=reduction, zero_infinity=zi, atol=1e-4)


def test_ctc_impossible_and_module():
    # a target longer than the input can hold: infinite loss, 0 with zero_infinity
    lp = torch.randn(3, 1, 4).log_softmax(2)
    t, il, tl = torch.tensor([[1, 1, 1]]), torch.tensor([3]), torch.tensor([3])
    want = F.ctc_loss(lp, t, il, tl, reduction="sum")
    got = F.ctc_loss(lp.to(N), t.to(N), il.to(N), tl.to(N), reduction="sum")
    assert torch.isinf(want) and torch.isinf(got.cpu())
    check_fwd_bwd(F.ctc_loss, lp, t, il, tl, zero_infinity=True, reduction="sum")
    check_fwd_bwd(torch.nn.CTCLoss(blank=3), torch.randn(6, 2, 4).log_softmax(2),
                  torch.tensor([[0, 1], [2, 2]]), torch.tensor([6, 5]), torch.tensor([2, 2]),
                  atol=1e-4)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag(mode):
    w = torch.randn(10, 3)
    idx = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9, 0, 0])
    offsets = torch.tensor([0, 4, 4, 7])   # an empty bag
    for pad in [None, 4]:
        check_fwd_bwd(lambda ww: F.embedding_bag(idx.to(ww.device), ww, offsets.to(ww.device),
                                                 mode=mode, padding_idx=pad), w)
    check_fwd_bwd(lambda ww: F.embedding_bag(idx.view(2, 5).to(ww.device), ww, mode=mode), w)
    check_fwd_bwd(lambda ww: F.embedding_bag(idx.to(ww.device), ww,
                                             torch.tensor([0, 3, 10]).to(ww.device),
                                             mode=mode, include_last_offset=True), w)
    if mode == "sum":
        psw = torch.randn(10)
        check_fwd_bwd(lambda pp: F.embedding_bag(idx.to(pp.device), w.to(pp.device),
                                                 offsets.to(pp.device), mode="sum",
                                                 per_sample_weights=pp), psw)


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "max", "min"])
def test_segment_reduce(reduce):
    data = torch.randn(7, 3)
    lengths = torch.tensor([2, 0, 4, 1])
    want = torch.segment_reduce(data, reduce, lengths=lengths)
    got = torch.segment_reduce(data.to(N), reduce, lengths=lengths.to(N))
    assert_close(got, want)
    offsets = torch.tensor([0, 3, 3, 7])
    want = torch.segment_reduce(data, reduce, offsets=offsets, initial=0.5)
    got = torch.segment_reduce(data.to(N), reduce, offsets=offsets.to(N), initial=0.5)
    assert_close(got, want)
    d2, l2 = torch.randn(2, 5, 2), torch.tensor([[1, 4], [3, 2]])
    want = torch.segment_reduce(d2, reduce, lengths=l2, axis=1)
    got = torch.segment_reduce(d2.to(N), reduce, lengths=l2.to(N), axis=1)
    assert_close(got, want)


def test_masked_scatter():
    x, src = torch.randn(4, 5), torch.randn(30)
    mask = torch.rand(4, 5) > 0.5
    assert_close(x.to(N).masked_scatter(mask.to(N), src.to(N)), x.masked_scatter(mask, src))
    row = torch.tensor([True, False, True, True, False])
    assert_close(x.to(N).masked_scatter(row.to(N), src.to(N)), x.masked_scatter(row, src))

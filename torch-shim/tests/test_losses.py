# SPDX-License-Identifier: MIT
"""Losses on the card against the CPU, forward and backward, every
reduction: mse, smooth L1 (beta, beta = 0), Huber, binary cross entropy
(weights, the log clamp at 0 and 1, the range check) and with logits
(weights, pos_weight, large logits), nll_loss2d."""
import pytest
import torch
import torch.nn.functional as F

from conftest import assert_close

N = "neuron"
REDUCTIONS = ["none", "mean", "sum"]


def both(fn, inputs, const=(), **kw):
    """fn(*inputs, *const) on both devices; compare values and input grads."""
    xc = [t.clone().requires_grad_() for t in inputs]
    xn = [t.detach().to(N).requires_grad_() for t in inputs]
    want = fn(*xc, *const, **kw)
    got = fn(*xn, *[c.to(N) if c is not None else None for c in const], **kw)
    assert_close(got, want.detach())
    g = torch.randn(want.shape)
    (want * g).sum().backward()
    (got * g.to(N)).sum().backward()
    for c, d in zip(xc, xn):
        assert_close(d.grad, c.grad)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_mse(reduction):
    both(F.mse_loss, [torch.randn(4, 5), torch.randn(4, 5)], reduction=reduction)
    both(F.mse_loss, [torch.randn(3, 1, 5)], (torch.randn(3, 1, 5),), reduction=reduction)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("beta", [1.0, 0.3, 0.0])
def test_smooth_l1(reduction, beta):
    x, t = torch.randn(6, 7) * 2, torch.randn(6, 7)
    t[0, :3] = x[0, :3] + beta  # on the branch point
    both(F.smooth_l1_loss, [x, t], reduction=reduction, beta=beta)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("delta", [1.0, 0.25, 3.0])
def test_huber(reduction, delta):
    both(F.huber_loss, [torch.randn(5, 8) * 2, torch.randn(5, 8)], reduction=reduction,
         delta=delta)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_bce(reduction):
    x, t = torch.rand(4, 6) * 0.98 + 0.01, torch.rand(4, 6)
    both(F.binary_cross_entropy, [x], (t,), reduction=reduction)
    both(F.binary_cross_entropy, [x], (t, torch.rand(6)), reduction=reduction)
    # log(0) is clamped at -100 on both
    x0 = torch.tensor([0.0, 1.0, 0.5, 1.0])
    t0 = torch.tensor([1.0, 0.0, 0.5, 1.0])
    assert_close(F.binary_cross_entropy(x0.to(N), t0.to(N), reduction=reduction),
                 F.binary_cross_entropy(x0, t0, reduction=reduction))


def test_bce_checks_range():
    with pytest.raises(RuntimeError, match="between 0 and 1"):
        F.binary_cross_entropy(torch.tensor([0.5, 1.5], device=N), torch.ones(2, device=N))
    with pytest.raises(RuntimeError, match="between 0 and 1"):
        F.binary_cross_entropy(torch.tensor([float("nan")], device=N), torch.ones(1, device=N))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_bce_with_logits(reduction):
    x, t = torch.randn(4, 6) * 3, torch.rand(4, 6)
    both(F.binary_cross_entropy_with_logits, [x, t], reduction=reduction)
    w, pw = torch.rand(6), torch.rand(6) * 3
    both(lambda a, b, c, d, **kw: F.binary_cross_entropy_with_logits(a, b, weight=c,
                                                                    pos_weight=d, **kw),
         [x], (t, w, pw), reduction=reduction)
    # large logits: tiny losses keep their digits (log1p, not log(1 + y))
    big = torch.tensor([30.0, -30.0, 50.0, -0.0, 1e-6])
    tt = torch.tensor([1.0, 0.0, 1.0, 1.0, 0.0])
    want = F.binary_cross_entropy_with_logits(big, tt, reduction="none")
    got = F.binary_cross_entropy_with_logits(big.to(N), tt.to(N), reduction="none")
    torch.testing.assert_close(got.cpu(), want, rtol=1e-5, atol=0)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_nll_loss2d(reduction):
    x = torch.randn(2, 4, 3, 5).log_softmax(1)
    t = torch.randint(0, 4, (2, 3, 5))
    t[0, 0, :2] = -100
    both(F.nll_loss, [x], (t,), reduction=reduction)
    both(F.nll_loss, [x], (t, torch.rand(4)), reduction=reduction)
    both(F.cross_entropy, [torch.randn(2, 4, 3, 5)], (t,), reduction=reduction)

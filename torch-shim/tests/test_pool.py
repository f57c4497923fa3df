# SPDX-License-Identifier: MIT
"""Pooling on the card against the CPU: max (with indices), average
(count_include_pad, ceil_mode, divisor_override), adaptive average and
adaptive max, 1-d and 2-d, forward and backward, float32 and bfloat16."""
import pytest
import torch
import torch.nn.functional as F

from conftest import assert_close

N = "neuron"


def run(fn, x, dtype=torch.float32, exact_indices=True):
    """fn(x) on the CPU and on the card: outputs (and indices) and the input
    gradient of a weighted sum of the output."""
    xc = x.to(dtype).clone().requires_grad_()
    xn = xc.detach().to(N).requires_grad_()
    want, got = fn(xc), fn(xn)
    if isinstance(want, tuple):
        want, wi = want
        got, gi = got
        assert gi.dtype == torch.int64
        if exact_indices:
            assert torch.equal(gi.cpu(), wi), (gi.cpu(), wi)
    assert_close(got, want.detach(), dtype)
    gout = torch.randn(want.shape).to(dtype)
    (want * gout).sum().backward()
    (got * gout.to(N)).sum().backward()
    assert_close(xn.grad, xc.grad, dtype)


MAXPOOL = [  # kernel, stride, padding, dilation, ceil_mode
    (2, None, 0, 1, False), (3, 2, 1, 1, False), (3, 2, 1, 1, True), ((3, 2), (2, 1), (1, 0), 1, False),
    (3, 2, 0, 2, True), (2, 3, 1, 1, True), (5, 1, 2, 1, False),
]


@pytest.mark.parametrize("case", range(len(MAXPOOL)))
def test_max_pool2d(case):
    k, s, p, d, c = MAXPOOL[case]
    run(lambda x: F.max_pool2d(x, k, s, p, d, c, return_indices=True), torch.randn(2, 3, 11, 10))


def test_max_pool2d_odd_inputs():
    # batch 1, unbatched 3-d, non-contiguous, channels_last
    run(lambda x: F.max_pool2d(x, 3, 2, 1, return_indices=True), torch.randn(1, 2, 7, 9))
    run(lambda x: F.max_pool2d(x, 2, return_indices=True), torch.randn(3, 8, 6))
    run(lambda x: F.max_pool2d(x.transpose(2, 3), 3, 2, 1, return_indices=True),
        torch.randn(2, 3, 9, 8))
    run(lambda x: F.max_pool2d(x.contiguous(memory_format=torch.channels_last), 3, 2, 1,
                               return_indices=True), torch.randn(2, 3, 9, 8))


def test_max_pool2d_ties_inf_nan():
    """Ties pick the first maximum; a window of -inf (and padding) its first
    real element; NaN wins, the last one of its window (PyTorch's choice)."""
    x = torch.zeros(1, 1, 6, 6)
    x[0, 0, 0, :] = -float("inf")
    x[0, 0, 3, 3] = float("nan")
    x[0, 0, 3, 4] = float("nan")
    x[0, 0, 5, 0] = float("nan")
    run(lambda x: F.max_pool2d(x, 3, 2, 1, return_indices=True), x)
    run(lambda x: F.max_pool2d(x, 2, 2, 1, return_indices=True), torch.full((1, 1, 3, 3), -float("inf")))


def test_max_pool_bfloat16_and_1d():
    run(lambda x: F.max_pool2d(x, 3, 2, 1, return_indices=True), torch.randn(2, 3, 9, 9),
        dtype=torch.bfloat16)
    run(lambda x: F.max_pool1d(x, 3, 2, 1, return_indices=True), torch.randn(2, 3, 15))


AVGPOOL = [  # kernel, stride, padding, ceil_mode, count_include_pad, divisor_override
    (2, None, 0, False, True, None), (3, 2, 1, False, True, None), (3, 2, 1, False, False, None),
    (3, 2, 1, True, True, None), (3, 2, 1, True, False, None), ((3, 2), (2, 3), (1, 1), True, True, None),
    (3, 1, 1, False, True, 5), (2, 3, 1, True, False, 2),
]


@pytest.mark.parametrize("case", range(len(AVGPOOL)))
def test_avg_pool2d(case):
    k, s, p, c, inc, div = AVGPOOL[case]
    run(lambda x: F.avg_pool2d(x, k, s, p, c, inc, div), torch.randn(2, 3, 10, 11))


def test_avg_pool_odd_bf16_1d():
    run(lambda x: F.avg_pool2d(x, 3, 2, 1), torch.randn(4, 7, 5))
    run(lambda x: F.avg_pool2d(x.transpose(2, 3), 3, 2, 1, True, False), torch.randn(1, 3, 9, 8))
    run(lambda x: F.avg_pool2d(x, 3, 2, 1), torch.randn(2, 3, 9, 8), dtype=torch.bfloat16)
    run(lambda x: F.avg_pool1d(x, 4, 3, 2, True, False), torch.randn(2, 3, 14))


@pytest.mark.parametrize("out", [(1, 1), (3, 3), (4, 3), (7, 5), (2, 11)])
def test_adaptive_avg_pool2d(out):
    run(lambda x: F.adaptive_avg_pool2d(x, out), torch.randn(2, 3, 7, 11))


def test_adaptive_avg_pool_odd_bf16_1d():
    run(lambda x: F.adaptive_avg_pool2d(x, (2, 3)), torch.randn(3, 5, 7))
    run(lambda x: F.adaptive_avg_pool2d(x.transpose(2, 3), 3), torch.randn(2, 3, 8, 9))
    run(lambda x: F.adaptive_avg_pool2d(x, 3), torch.randn(2, 3, 8, 9), dtype=torch.bfloat16)
    run(lambda x: F.adaptive_avg_pool1d(x, 4), torch.randn(2, 3, 13))


@pytest.mark.parametrize("out", [(1, 1), (3, 3), (4, 3), (7, 5), (2, 11)])
def test_adaptive_max_pool2d(out):
    run(lambda x: F.adaptive_max_pool2d(x, out, return_indices=True), torch.randn(2, 3, 7, 11))


def test_adaptive_max_pool_odd_bf16_1d_nan():
    run(lambda x: F.adaptive_max_pool2d(x, (2, 3), True), torch.randn(3, 5, 7))
    run(lambda x: F.adaptive_max_pool2d(x, 3, True), torch.randn(2, 3, 8, 9), dtype=torch.bfloat16)
    run(lambda x: F.adaptive_max_pool1d(x, 4, True), torch.randn(2, 3, 13))
    x = torch.randn(1, 2, 5, 5)
    x[0, 0, 1, 1] = x[0, 0, 1, 3] = float("nan")
    run(lambda x: F.adaptive_max_pool2d(x, 3, True), x)


def test_pool_errors():
    with pytest.raises(RuntimeError, match="not supported for dtype Long"):
        F.max_pool2d(torch.ones(1, 1, 4, 4, dtype=torch.int64).to(N), 2)
    with pytest.raises(RuntimeError, match="pad should be"):
        F.max_pool2d(torch.ones(1, 1, 4, 4).to(N), 2, 1, 2)
    with pytest.raises(RuntimeError, match="too small"):
        F.avg_pool2d(torch.ones(1, 1, 2, 2).to(N), 3)

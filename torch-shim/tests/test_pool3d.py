# SPDX-License-Identifier: MIT
"""3-d pooling on the card against the CPU: max (with indices), average
(count_include_pad, ceil_mode, divisor_override), adaptive average and
adaptive max, LPPool3d, forward and backward, float32 and bfloat16; batch
norm's training path (_batch_norm_with_update and its backward)."""
import pytest
import torch
import torch.nn as nn
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
        assert gi.dtype == torch.int64 and gi.device.type == N
        if exact_indices:
            assert torch.equal(gi.cpu(), wi), (gi.cpu(), wi)
    assert_close(got, want.detach(), dtype)
    gout = torch.randn(want.shape).to(dtype)
    (want * gout).sum().backward()
    (got * gout.to(N)).sum().backward()
    assert_close(xn.grad, xc.grad, dtype)


MAXPOOL = [  # kernel, stride, padding, dilation, ceil_mode
    (2, None, 0, 1, False), (3, 2, 1, 1, False), (3, 2, 1, 1, True),
    ((3, 2, 2), (2, 1, 2), (1, 0, 1), 1, False), (2, 2, 0, 2, True), ((1, 3, 2), 1, (0, 1, 1), 1, False),
]


@pytest.mark.parametrize("case", range(len(MAXPOOL)))
def test_max_pool3d(case):
    k, s, p, d, c = MAXPOOL[case]
    run(lambda x: F.max_pool3d(x, k, s, p, d, c, return_indices=True), torch.randn(2, 3, 7, 6, 5))


def test_max_pool3d_unbatched_strided_bf16_nan():
    run(lambda x: F.max_pool3d(x, 2, return_indices=True), torch.randn(3, 4, 6, 4))
    run(lambda x: F.max_pool3d(x.transpose(2, 4), 3, 2, 1, return_indices=True),
        torch.randn(1, 2, 5, 6, 7))
    run(lambda x: F.max_pool3d(x, 3, 2, 1, return_indices=True), torch.randn(2, 2, 5, 5, 5),
        dtype=torch.bfloat16)
    x = torch.randn(1, 1, 4, 4, 4)
    x[0, 0, 1, 1, 1] = x[0, 0, 1, 1, 0] = float("nan")
    x[0, 0, 3, :, :] = -float("inf")
    run(lambda x: F.max_pool3d(x, 2, return_indices=True), x)


AVGPOOL = [  # kernel, stride, padding, ceil_mode, count_include_pad, divisor_override
    (2, None, 0, False, True, None), (3, 2, 1, False, True, None), (3, 2, 1, False, False, None),
    (3, 2, 1, True, True, None), (3, 2, 1, True, False, None),
    ((3, 2, 1), (2, 3, 1), (1, 1, 0), True, True, None), (3, 1, 1, False, True, 5),
]


@pytest.mark.parametrize("case", range(len(AVGPOOL)))
def test_avg_pool3d(case):
    k, s, p, c, cip, div = AVGPOOL[case]
    run(lambda x: F.avg_pool3d(x, k, s, p, c, cip, div), torch.randn(2, 3, 7, 6, 5))


def test_avg_pool3d_unbatched_bf16():
    run(lambda x: F.avg_pool3d(x, 2), torch.randn(3, 4, 6, 4))
    # the CPU has no bfloat16 avg_pool3d: the card's bfloat16 against the CPU's float32
    x = torch.randn(2, 2, 5, 6, 5).to(torch.bfloat16)
    got = F.avg_pool3d(x.to(N), 3, 2, 1)
    assert got.dtype == torch.bfloat16
    assert_close(got, F.avg_pool3d(x.float(), 3, 2, 1).to(torch.bfloat16), torch.bfloat16)


@pytest.mark.parametrize("out", [(1, 1, 1), (2, 3, 2), (4, 3, 5), (5, 6, 7), (3, 1, 4)])
def test_adaptive_pool3d(out):
    x = torch.randn(2, 3, 5, 6, 7)
    run(lambda x: F.adaptive_avg_pool3d(x, out), x)
    run(lambda x: F.adaptive_max_pool3d(x, out, return_indices=True), x)


def test_adaptive_pool3d_unbatched_bf16_inf():
    run(lambda x: F.adaptive_avg_pool3d(x, 2), torch.randn(3, 5, 4, 3))
    run(lambda x: F.adaptive_max_pool3d(x, 2, True), torch.randn(3, 5, 4, 3))
    run(lambda x: F.adaptive_avg_pool3d(x, (2, 3, 2)), torch.randn(2, 2, 5, 6, 5),
        dtype=torch.bfloat16)
    # an inf stays in its own window (no 0 * inf in the others)
    x = torch.randn(1, 1, 4, 4, 4)
    x[0, 0, 0, 0, 0] = float("inf")
    run(lambda x: F.adaptive_avg_pool3d(x, 2), x)
    run(lambda x: F.adaptive_avg_pool2d(x, 2), x[0])


def test_lp_pool3d_and_modules():
    for m in (nn.LPPool3d(2, 2), nn.AvgPool3d(3, 2, 1), nn.MaxPool3d(2, 1),
              nn.AdaptiveAvgPool3d((2, 3, 1)), nn.AdaptiveMaxPool3d(2)):
        x = torch.rand(2, 3, 6, 5, 4) + 0.1
        run(m, x)


def test_pool3d_errors():
    with pytest.raises(RuntimeError, match="not supported for dtype Long"):
        F.max_pool3d(torch.ones(1, 1, 4, 4, 4, dtype=torch.int64).to(N), 2)
    with pytest.raises(RuntimeError, match="pad should be"):
        F.max_pool3d(torch.ones(1, 1, 4, 4, 4).to(N), 2, 1, 2)
    with pytest.raises(RuntimeError, match="4D or 5D"):  # the CPU's message (its meta)
        torch.ops.aten.avg_pool3d(torch.ones(4, 4).to(N), [2, 2, 2])
    with pytest.raises(RuntimeError, match="must be 3"):
        torch.ops.aten.adaptive_max_pool3d(torch.ones(1, 4, 4, 4).to(N), [2, 2])


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_batch_norm_training_with_update(dtype):
    """nn.BatchNorm2d/3d in training: _batch_norm_with_update (the running
    stats updated in place) and batch_norm_backward, vs the CPU."""
    for bn, shape in ((nn.BatchNorm2d(3), (4, 3, 5, 5)), (nn.BatchNorm3d(2, momentum=0.3),
                                                         (3, 2, 4, 3, 5))):
        bn_n = bn.to(dtype)
        bn_c = type(bn)(bn.num_features, momentum=bn.momentum).to(dtype)
        bn_n = bn_n.to(N)
        x = torch.randn(shape).to(dtype)
        xc = x.clone().requires_grad_()
        xn = x.to(N).requires_grad_()
        want, got = bn_c(xc), bn_n(xn)
        assert_close(got, want.detach(), dtype)
        g = torch.randn(shape).to(dtype)
        (want * g).sum().backward()
        (got * g.to(N)).sum().backward()
        assert_close(xn.grad, xc.grad, dtype)
        assert_close(bn_n.weight.grad, bn_c.weight.grad, dtype)
        assert_close(bn_n.bias.grad, bn_c.bias.grad, dtype)
        assert_close(bn_n.running_mean, bn_c.running_mean, dtype)
        assert_close(bn_n.running_var, bn_c.running_var, dtype)
    out = torch.ops.aten._batch_norm_with_update(
        torch.randn(2, 3, 4).to(N), None, None, torch.zeros(3).to(N), torch.ones(3).to(N),
        0.1, 1e-5)
    assert len(out) == 4 and out[3].numel() == 0 and out[3].dtype == torch.uint8


@pytest.mark.parametrize("dims", [2, 3])
def test_fractional_max_pool(dims):
    """Given the same random samples, the same windows, maxima and indices."""
    shape = (2, 3, 9, 8) if dims == 2 else (2, 3, 7, 8, 6)
    fn = F.fractional_max_pool2d if dims == 2 else F.fractional_max_pool3d
    for k, out, ratio in ((2, 4, None), (3, None, (0.5,) * dims), ((2, 3, 2)[:dims], (5, 4, 3)[:dims], None)):
        samples = torch.rand(2, 3, dims)
        run(lambda x: fn(x, k, out, ratio, return_indices=True,
                         _random_samples=samples.to(x.device)), torch.randn(shape))
    # unbatched, bfloat16
    samples = torch.rand(1, 3, dims).to(torch.bfloat16)
    run(lambda x: fn(x, 2, 3, return_indices=True, _random_samples=samples.to(x.device)),
        torch.randn(shape[1:]), dtype=torch.bfloat16)

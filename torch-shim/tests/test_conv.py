# SPDX-License-Identifier: MIT
"""Convolutions on the card against the CPU: forward and backward (input,
weight and bias gradients) over strides, padding (incl. 'same'), dilation,
groups (incl. depthwise), transposed with output_padding, 1-d / 2-d / 3-d,
odd sizes, batch 1, non-contiguous and channels_last inputs, bfloat16."""
import pytest
import torch
import torch.nn.functional as F

from conftest import assert_close

N = "neuron"


def run(fn, x, w, b, dtype=torch.float32, grad=True):
    """fn(x, w, b) on the CPU and on the card; compare the output and the
    gradients of a weighted sum of it (a non-uniform output gradient).

    bfloat16: the card sums in float32 and rounds once; the CPU's bfloat16
    convolutions round partial sums (col2im), so the reference is the float32
    computation on the same bfloat16 values, rounded to bfloat16."""
    vals = [t.to(dtype) if t is not None else None for t in (x, w, b)]
    xs = [t.float().clone().requires_grad_(grad) if t is not None else None for t in vals]
    xn = [t.to(N).requires_grad_(grad) if t is not None else None for t in vals]
    want = fn(*xs)
    got = fn(*xn)
    assert got.dtype == dtype
    assert_close(got, want.detach().to(dtype), dtype)
    if not grad:
        return
    gout = torch.randn(want.shape).to(dtype)
    (want * gout.float()).sum().backward()
    (got * gout.to(N)).sum().backward()
    for a, c in zip(xn, xs):
        if a is not None:
            assert a.grad.dtype == dtype
            assert_close(a.grad, c.grad.to(dtype), dtype)


CONV2D = [  # (N, C, H, W), (O, C/g, kh, kw), stride, padding, dilation, groups
    ((2, 3, 9, 8), (4, 3, 3, 3), 1, 0, 1, 1),
    ((2, 3, 9, 8), (4, 3, 3, 3), 1, 1, 1, 1),
    ((1, 4, 11, 7), (6, 2, 3, 2), 2, 1, 1, 2),
    ((2, 4, 10, 10), (4, 1, 3, 3), 1, 1, 1, 4),      # depthwise
    ((2, 3, 13, 12), (5, 3, 3, 3), (2, 3), (1, 2), 2, 1),
    ((1, 2, 7, 9), (3, 2, 1, 1), 1, 0, 1, 1),        # 1x1
    ((3, 3, 16, 16), (8, 3, 7, 7), 2, 3, 1, 1),      # resnet's stem
    ((2, 6, 5, 5), (6, 3, 5, 5), 1, 2, 1, 2),
]


@pytest.mark.parametrize("case", range(len(CONV2D)))
def test_conv2d(case):
    xs, ws, stride, padding, dilation, groups = CONV2D[case]
    run(lambda x, w, b: F.conv2d(x, w, b, stride, padding, dilation, groups),
        torch.randn(xs), torch.randn(ws), torch.randn(ws[0]))


def test_conv2d_no_bias_batch1_odd():
    run(lambda x, w, b: F.conv2d(x, w, None, 2, 1),
        torch.randn(1, 5, 7, 5), torch.randn(3, 5, 3, 3), None)


@pytest.mark.parametrize("padding", ["same", "valid"])
def test_conv2d_padding_strings(padding):
    # 'same' with an even kernel pads asymmetrically (F.pad, then a conv)
    run(lambda x, w, b: F.conv2d(x, w, b, padding=padding, dilation=(1, 2)),
        torch.randn(2, 3, 8, 9), torch.randn(4, 3, 4, 3), torch.randn(4))


def test_conv2d_noncontiguous_and_channels_last():
    x = torch.randn(2, 4, 9, 10)
    w = torch.randn(6, 4, 3, 3)
    run(lambda x, w, b: F.conv2d(x.transpose(2, 3), w, b, padding=1), x, w, torch.randn(6))
    run(lambda x, w, b: F.conv2d(x.contiguous(memory_format=torch.channels_last),
                                 w.contiguous(memory_format=torch.channels_last), b,
                                 stride=2, padding=1), x, w, torch.randn(6))
    # a sliced (strided) input and a transposed weight view
    run(lambda x, w, b: F.conv2d(x[:, ::2, 1:, ::2], w.transpose(0, 1), b),
        torch.randn(2, 4, 9, 10), torch.randn(2, 5, 3, 3), torch.randn(5))


@pytest.mark.parametrize("stride,padding,dilation,groups", [
    (1, 0, 1, 1), (2, 1, 1, 1), (3, 2, 2, 3), (1, 2, 1, 6)])
def test_conv1d(stride, padding, dilation, groups):
    run(lambda x, w, b: F.conv1d(x, w, b, stride, padding, dilation, groups),
        torch.randn(2, 6, 17), torch.randn(6, 6 // groups, 3), torch.randn(6))


@pytest.mark.parametrize("stride,padding,dilation,groups", [
    (1, 1, 1, 1), (2, 0, 1, 2), ((1, 2, 1), (1, 0, 2), (2, 1, 1), 1)])
def test_conv3d(stride, padding, dilation, groups):
    run(lambda x, w, b: F.conv3d(x, w, b, stride, padding, dilation, groups),
        torch.randn(2, 4, 6, 7, 5), torch.randn(4, 4 // groups, 3, 2, 3), torch.randn(4))


@pytest.mark.parametrize("stride,padding,output_padding,dilation,groups", [
    (1, 0, 0, 1, 1), (2, 1, 1, 1, 1), (3, 1, 2, 1, 2), (2, 0, 0, 2, 1), (1, 1, 0, 1, 4)])
def test_conv_transpose2d(stride, padding, output_padding, dilation, groups):
    cin, cout = 4, 8
    run(lambda x, w, b: F.conv_transpose2d(x, w, b, stride, padding, output_padding,
                                           groups, dilation),
        torch.randn(2, cin, 5, 6), torch.randn(cin, cout // groups, 3, 3), torch.randn(cout))


def test_conv_transpose1d_and_3d():
    run(lambda x, w, b: F.conv_transpose1d(x, w, b, 2, 1, 1),
        torch.randn(2, 3, 7), torch.randn(3, 5, 4), torch.randn(5))
    run(lambda x, w, b: F.conv_transpose3d(x, w, b, (1, 2, 2), 1, (0, 1, 0)),
        torch.randn(1, 2, 3, 4, 3), torch.randn(2, 3, 3, 3, 2), torch.randn(3))


@pytest.mark.parametrize("transposed", [False, True])
def test_conv_bfloat16(transposed):
    if transposed:
        fn = lambda x, w, b: F.conv_transpose2d(x, w, b, 2, 1, 1)  # noqa: E731
        args = torch.randn(2, 4, 6, 5), torch.randn(4, 3, 3, 3), torch.randn(3)
    else:
        fn = lambda x, w, b: F.conv2d(x, w, b, 2, 1, 1, 2)  # noqa: E731
        args = torch.randn(2, 4, 9, 8), torch.randn(6, 2, 3, 3), torch.randn(6)
    run(fn, *args, dtype=torch.bfloat16)


def test_conv_output_mask():
    """Only the gradients asked for are computed (weight frozen, input not)."""
    x = torch.randn(2, 3, 6, 6)
    w = torch.randn(4, 3, 3, 3)
    xn, wn = x.to(N), w.to(N).requires_grad_()
    F.conv2d(xn, wn, padding=1).square().sum().backward()
    wc = w.clone().requires_grad_()
    F.conv2d(x, wc, padding=1).square().sum().backward()
    assert xn.grad is None
    assert_close(wn.grad, wc.grad)
    xn = x.to(N).requires_grad_()
    xc = x.clone().requires_grad_()
    F.conv2d(xn, w.to(N), padding=1).square().sum().backward()
    F.conv2d(xc, w, padding=1).square().sum().backward()
    assert_close(xn.grad, xc.grad)


def test_conv_module_layers():
    """nn.Conv2d / ConvTranspose2d modules, no grad mode."""
    torch.manual_seed(0)
    conv = torch.nn.Conv2d(3, 8, 3, stride=2, padding=1)
    convt = torch.nn.ConvTranspose2d(8, 3, 3, stride=2, padding=1, output_padding=1)
    x = torch.randn(2, 3, 10, 10)
    with torch.no_grad():
        want = convt(conv(x))
        got = convt.to(N)(conv.to(N)(x.to(N)))
    assert_close(got, want)


def test_conv_errors():
    """Unsupported dtypes and bad shapes fail loudly, naming the case."""
    with pytest.raises(RuntimeError, match="float32, float64, bfloat16 and float16"):
        F.conv2d(torch.ones(1, 1, 4, 4, dtype=torch.int32).to(N),
                 torch.ones(1, 1, 3, 3, dtype=torch.int32).to(N))
    with pytest.raises(RuntimeError):
        F.conv2d(torch.randn(1, 2, 4, 4).to(N), torch.randn(1, 3, 3, 3).to(N))
    with pytest.raises(RuntimeError):
        F.conv2d(torch.randn(1, 3, 2, 2).to(N), torch.randn(1, 3, 3, 3).to(N))

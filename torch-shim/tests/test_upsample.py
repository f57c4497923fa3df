# SPDX-License-Identifier: MIT
"""Upsampling (nearest, nearest-exact, linear, bilinear, bicubic, trilinear,
antialiased bilinear/bicubic; sizes and scale factors, align_corners),
reflection/replication padding (1-d, 2-d, 3-d, negative padding),
unfold/fold (im2col/col2im) and grid_sample (4-d and 5-d) on the card
against the CPU, forward and backward, float32 and bfloat16."""
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from conftest import assert_close

N = "neuron"


def run(fn, *xs, dtype=torch.float32, grad=True, **tol):
    """fn(*xs) on the CPU and on the card, and the inputs' gradients of a
    weighted sum of the output."""
    xc = [x.to(dtype).clone().requires_grad_(grad) for x in xs]
    xn = [x.detach().to(N).requires_grad_(grad) for x in xc]
    want, got = fn(*xc), fn(*xn)
    assert_close(got, want.detach(), dtype, **tol)
    if not grad:
        return
    gout = torch.randn(want.shape).to(dtype)
    (want * gout).sum().backward()
    (got * gout.to(N)).sum().backward()
    for a, b in zip(xn, xc):
        assert_close(a.grad, b.grad, dtype, **tol)


INTERP = [  # mode, input shape, size, scale_factor, align_corners
    ("nearest", (2, 3, 7), 12, None, None), ("nearest", (2, 3, 8), None, 0.6, None),
    ("nearest", (2, 3, 5, 6), (10, 12), None, None), ("nearest", (2, 2, 5, 6), None, 1.7, None),
    ("nearest", (1, 2, 3, 4, 5), (5, 4, 7), None, None),
    ("nearest-exact", (2, 3, 7), 12, None, None), ("nearest-exact", (2, 3, 5, 6), (3, 11), None, None),
    ("nearest-exact", (1, 2, 3, 4, 5), None, 1.5, None),
    ("linear", (2, 3, 7), 12, None, False), ("linear", (2, 3, 7), 12, None, True),
    ("linear", (2, 3, 9), None, 0.5, False),
    ("bilinear", (2, 3, 5, 6), (9, 4), None, False), ("bilinear", (2, 3, 5, 6), (9, 4), None, True),
    ("bilinear", (2, 3, 5, 6), None, 2.3, False), ("bilinear", (2, 3, 5, 6), (5, 6), None, False),
    ("bicubic", (2, 3, 5, 6), (9, 4), None, False), ("bicubic", (2, 3, 5, 6), (9, 11), None, True),
    ("bicubic", (2, 3, 6, 6), None, 0.7, False),
    ("trilinear", (1, 2, 3, 4, 5), (5, 3, 8), None, False),
    ("trilinear", (1, 2, 3, 4, 5), (5, 3, 8), None, True),
]


@pytest.mark.parametrize("case", range(len(INTERP)))
def test_interpolate(case):
    mode, shape, size, scale, ac = INTERP[case]
    run(lambda x: F.interpolate(x, size, scale, mode, ac), torch.randn(shape))


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("size", [(3, 4), (9, 13), (4, 12)])
def test_interpolate_antialias(mode, size):
    x = torch.randn(2, 3, 7, 8)
    run(lambda x: F.interpolate(x, size, mode=mode, antialias=True), x)
    run(lambda x: F.interpolate(x, size, mode=mode, align_corners=True, antialias=True), x)


def test_interpolate_bf16_strided_channels_last():
    run(lambda x: F.interpolate(x, (7, 9), mode="bilinear"), torch.randn(2, 3, 4, 5),
        dtype=torch.bfloat16)
    run(lambda x: F.interpolate(x.transpose(2, 3), (7, 9), mode="bicubic"), torch.randn(2, 3, 5, 4))
    run(lambda x: F.interpolate(x.contiguous(memory_format=torch.channels_last), (7, 9),
                                mode="nearest"), torch.randn(2, 3, 4, 5))


def test_interpolate_errors():
    with pytest.raises(RuntimeError, match="greater than 0"):
        torch.ops.aten.upsample_bilinear2d(torch.randn(1, 1, 2, 2).to(N), [0, 3], False)
    with pytest.raises(RuntimeError, match="upsample_linear.*Long"):
        torch.ops.aten.upsample_bilinear2d(torch.ones(1, 1, 2, 2, dtype=torch.long).to(N),
                                           [3, 3], False)


PADS = [  # mode, input shape, pad
    ("reflect", (2, 3, 7), (2, 3)), ("reflect", (3, 7), (6, 0)), ("reflect", (2, 3, 5, 6), (1, 2, 4, 0)),
    ("reflect", (1, 2, 3, 4, 5), (1, 2, 2, 1, 0, 2)), ("replicate", (2, 3, 7), (4, 1)),
    ("replicate", (2, 3, 5, 6), (1, 7, 4, 0)), ("replicate", (1, 2, 3, 4, 5), (3, 2, 2, 1, 0, 4)),
    ("replicate", (2, 3, 5, 6), (-1, 2, 3, -2)), ("reflect", (2, 3, 5, 6), (-1, 2, 3, -2)),
]


@pytest.mark.parametrize("case", range(len(PADS)))
def test_pad(case):
    mode, shape, pad = PADS[case]
    run(lambda x: F.pad(x, pad, mode), torch.randn(shape))


def test_pad_modules_bf16_ints_errors():
    for m in (nn.ReflectionPad1d(2), nn.ReflectionPad2d((1, 0, 2, 1)), nn.ReflectionPad3d(1),
              nn.ReplicationPad1d((0, 3)), nn.ReplicationPad2d(2), nn.ReplicationPad3d((1, 2, 0, 1, 2, 0))):
        dims = int(type(m).__name__[-2])
        run(m, torch.randn((2, 3) + (4,) * dims))
    run(lambda x: F.pad(x, (2, 2, 1, 1), "reflect"), torch.randn(2, 3, 4, 5), dtype=torch.bfloat16)
    xi = torch.arange(24, dtype=torch.int64).view(2, 3, 4)
    assert torch.equal(F.pad(xi.to(N), (3, 2), "reflect").cpu(), F.pad(xi, (3, 2), "reflect"))
    with pytest.raises(RuntimeError, match="Padding size should be less than"):
        F.pad(torch.randn(1, 2, 3).to(N), (3, 0), "reflect")


@pytest.mark.parametrize("args", [  # kernel, dilation, padding, stride
    (2, 1, 0, 1), (3, 1, 1, 2), ((2, 3), (2, 1), (1, 0), (1, 2)), (3, 2, 2, 3)])
def test_unfold_fold(args):
    k, d, p, s = args
    x = torch.randn(2, 3, 9, 8)
    run(lambda x: F.unfold(x, k, d, p, s), x)
    cols = F.unfold(x, k, d, p, s)
    run(lambda c: F.fold(c, (9, 8), k, d, p, s), cols)


def test_unfold_fold_unbatched_bf16():
    run(lambda x: F.unfold(x, 3, padding=1), torch.randn(3, 5, 6))
    run(lambda c: F.fold(c, (5, 6), 3, padding=1), torch.randn(27, 30))
    run(lambda x: F.unfold(x, 2, stride=2), torch.randn(2, 3, 6, 6), dtype=torch.bfloat16)
    with pytest.raises(RuntimeError, match="divisible"):
        F.fold(torch.randn(1, 7, 30).to(N), (5, 6), 3, padding=1)


@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("ac", [False, True])
def test_grid_sample(mode, padding, ac):
    x = torch.randn(2, 3, 5, 7)
    # positions inside and well outside [-1, 1] (padding and reflection)
    grid = torch.rand(2, 4, 6, 2) * 3.2 - 1.6
    grad = mode != "nearest"
    run(lambda x, g: F.grid_sample(x, g, mode, padding, ac), x, grid, grad=grad)
    if not grad:  # nearest: the input's gradient only
        run(lambda x: F.grid_sample(x, grid.to(x.device), mode, padding, ac), x)


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("ac", [False, True])
def test_grid_sample_3d(mode, padding, ac):
    """5-d input: trilinear and nearest, every padding, forward and both
    gradients (nearest: the input's)."""
    x = torch.randn(2, 3, 4, 5, 6)
    grid = torch.rand(2, 3, 4, 5, 3) * 3.2 - 1.6
    grad = mode != "nearest"
    run(lambda x, g: F.grid_sample(x, g, mode, padding, ac), x, grid, grad=grad)
    if not grad:
        run(lambda x: F.grid_sample(x, grid.to(x.device), mode, padding, ac), x)


def test_grid_sample_3d_exact_positions():
    """Nearest samples exactly half-way between voxels (rounded to even, as
    the CPU's nearbyint) and on the corners; a NaN or infinite grid value
    samples what the CPU samples (a NaN clips to the far border)."""
    x = torch.arange(2 * 3 * 4, dtype=torch.float32).reshape(1, 1, 2, 3, 4)
    steps = torch.linspace(-1.5, 1.5, 13)
    grid = torch.stack(torch.meshgrid(steps, steps[:5], steps[:3], indexing="ij"), -1)
    grid = grid.reshape(1, 13, 5, 3, 3)
    for padding in ("zeros", "border", "reflection"):
        for ac in (False, True):
            run(lambda x, g: F.grid_sample(x, g, "nearest", padding, ac), x, grid,
                grad=False, rtol=0, atol=0)
    odd = torch.tensor([float("nan"), float("inf"), -float("inf"), 0.25])
    grid = torch.stack(torch.meshgrid(odd, odd, odd, indexing="ij"), -1).reshape(1, 4, 4, 4, 3)
    for mode in ("bilinear", "nearest"):
        for padding in ("zeros", "border", "reflection"):
            run(lambda x, g: F.grid_sample(x, g, mode, padding, False), x, grid,
                grad=False)


def test_grid_sample_bf16_and_errors():
    run(lambda x, g: F.grid_sample(x, g, align_corners=False), torch.randn(1, 2, 4, 5),
        torch.rand(1, 3, 3, 2) * 2 - 1, dtype=torch.bfloat16)
    with pytest.raises(RuntimeError, match="grid"):
        F.grid_sample(torch.randn(1, 1, 3, 3).to(N), torch.zeros(2, 2, 2, 2).to(N),
                      align_corners=False)

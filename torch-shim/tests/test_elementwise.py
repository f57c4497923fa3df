# SPDX-License-Identifier: MIT
"""The elementwise operators of the ISA's tables against the CPU: rounding,
transcendental and inverse functions, activations with parameters and their
backward, predicates, logical and bitwise operators, the binary functions
and division with a rounding mode, in float32 and bfloat16, with NaN, the
infinities and -0.0 among the inputs."""
import math

import pytest
import torch
import torch.nn.functional as F

from conftest import assert_close

N = "neuron"
DTYPES = [torch.float32, torch.bfloat16]
SPECIALS = [math.nan, math.inf, -math.inf, -0.0, 0.0, 1.0, -1.0, 0.5, -0.5, 1.5,
            -1.5, 2.5, -2.5, 3.0, -3.0, 1e-30, -7.25, 100.0, -100.0]


def randn(*shape, lo=-3.0, hi=3.0):
    return torch.rand(*shape) * (hi - lo) + lo


# name -> (function, domain of the random inputs)
UNARY = {
    "ceil": (torch.ceil, (-5, 5)), "round": (torch.round, (-5, 5)),
    "round_dec2": (lambda x: torch.round(x, decimals=2), (-5, 5)),
    "round_dec-1": (lambda x: torch.round(x, decimals=-1), (-500, 500)),
    "trunc": (torch.trunc, (-5, 5)), "frac": (torch.frac, (-5, 5)),
    "expm1": (torch.expm1, (-3, 3)), "log1p": (torch.log1p, (-0.9, 5)),
    "log2": (torch.log2, (0.01, 9)), "log10": (torch.log10, (0.01, 9)),
    "tan": (torch.tan, (-1.4, 1.4)), "asin": (torch.asin, (-1, 1)),
    "acos": (torch.acos, (-1, 1)), "atan": (torch.atan, (-9, 9)),
    "sinh": (torch.sinh, (-4, 4)), "cosh": (torch.cosh, (-4, 4)),
    "asinh": (torch.asinh, (-9, 9)), "acosh": (torch.acosh, (1, 9)),
    "atanh": (torch.atanh, (-0.99, 0.99)), "erfc": (torch.erfc, (-3, 3)),
    "erfinv": (torch.erfinv, (-0.999, 0.999)), "lgamma": (torch.lgamma, (0.1, 9)),
    "hardswish": (F.hardswish, (-5, 5)), "hardsigmoid": (F.hardsigmoid, (-5, 5)),
    "mish": (F.mish, (-5, 5)), "logsigmoid": (F.logsigmoid, (-9, 9)),
    "elu": (lambda x: F.elu(x, alpha=0.7), (-4, 4)), "selu": (F.selu, (-4, 4)),
    "celu": (lambda x: F.celu(x, alpha=1.3), (-4, 4)),
    "leaky_relu": (lambda x: F.leaky_relu(x, 0.2), (-4, 4)),
    "softplus": (lambda x: F.softplus(x, beta=2.0, threshold=5.0), (-5, 5)),
    "hardshrink": (lambda x: F.hardshrink(x, 0.3), (-2, 2)),
    "softshrink": (lambda x: F.softshrink(x, 0.3), (-2, 2)),
}
# Functions whose sign of a zero result the card must reproduce.
ZERO_SIGN = {"ceil", "round", "trunc", "expm1", "log1p", "tan", "asin", "atan",
             "sinh", "asinh", "atanh", "leaky_relu"}


def check_zero_sign(got, want):
    got = got.cpu()
    zero = (want == 0) & (got == 0)
    assert torch.equal(torch.signbit(got[zero]), torch.signbit(want[zero])), \
        (got[zero], want[zero])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary(name, dtype):
    """Random inputs in the function's domain, then the special values."""
    fn, (lo, hi) = UNARY[name]
    x = randn(5, 37, lo=lo, hi=hi).to(dtype)
    if name.startswith("round_dec") and dtype != torch.float32:
        with pytest.raises(RuntimeError, match="float32 and float64 only"):
            fn(x.to(N))
        return
    assert_close(fn(x.to(N)), fn(x), dtype)
    assert_close(fn(x.to(N).t()), fn(x.t()), dtype)   # strided
    s = torch.tensor(SPECIALS).to(dtype)
    got, want = fn(s.to(N)), fn(s)
    assert_close(got, want, dtype)
    if name in ZERO_SIGN:
        check_zero_sign(got, want)


def test_round_half_even():
    """Ties go to the even neighbour, in both directions."""
    x = torch.tensor([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.5, 0.49999997, 8388609.0])
    got = torch.round(x.to(N)).cpu()
    assert torch.equal(got, torch.round(x))
    assert got.tolist()[:6] == [0.0, 2.0, 2.0, -0.0, -2.0, -2.0]
    y = torch.tensor([0.125, 0.375, -0.125, 2.675])
    assert torch.equal(torch.round(y.to(N), decimals=2).cpu(), torch.round(y, decimals=2))


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64])
def test_unary_integer(dtype):
    """Rounding keeps an integer exactly; math functions give floats."""
    x = torch.tensor([-(2 ** 31), -7, -1, 0, 1, 5, 2 ** 31 - 1], dtype=dtype)
    for fn in (torch.ceil, torch.round, torch.trunc):
        got = fn(x.to(N))
        assert got.dtype == dtype and torch.equal(got.cpu(), fn(x))
    for fn in (torch.expm1, torch.atan, torch.log1p):
        got = fn(x.to(N))
        assert got.dtype == torch.float32
        assert_close(got, fn(x))
    with pytest.raises(RuntimeError, match="frac"):
        torch.frac(x.to(N))


def test_unary_inplace_out():
    """In place and out= come from the same table line."""
    x = randn(4, 9)
    xn = x.to(N)
    torch.expm1_(xn)
    assert_close(xn, torch.expm1(x))
    out = torch.empty(0, device=N)
    torch.atan(x.to(N), out=out)
    assert_close(out, torch.atan(x))
    with pytest.raises(RuntimeError, match="can't be cast"):
        torch.log1p_(torch.arange(4).to(N))


BACKWARD = {
    "hardswish": (F.hardswish, (-5, 5)), "hardsigmoid": (F.hardsigmoid, (-5, 5)),
    "mish": (F.mish, (-5, 5)), "logsigmoid": (F.logsigmoid, (-9, 9)),
    "elu": (lambda x: F.elu(x, alpha=0.7), (-4, 4)), "selu": (F.selu, (-4, 4)),
    "celu": (lambda x: F.celu(x, alpha=1.3), (-4, 4)),
    "elu_inplace": (lambda x: F.elu(x * 1, alpha=0.7, inplace=True), (-4, 4)),
    "selu_inplace": (lambda x: F.selu(x * 1, inplace=True), (-4, 4)),
    "leaky_relu": (lambda x: F.leaky_relu(x, 0.2), (-4, 4)),
    "leaky_relu_inplace": (lambda x: F.leaky_relu(x * 1, 0.2, inplace=True), (-4, 4)),
    "softplus": (lambda x: F.softplus(x, beta=2.0, threshold=5.0), (-5, 5)),
    "hardshrink": (lambda x: F.hardshrink(x, 0.3), (-2, 2)),
    "softshrink": (lambda x: F.softshrink(x, 0.3), (-2, 2)),
    "expm1": (torch.expm1, (-3, 3)), "log1p": (torch.log1p, (-0.9, 5)),
    "tan": (torch.tan, (-1.4, 1.4)), "asin": (torch.asin, (-0.9, 0.9)),
    "acos": (torch.acos, (-0.9, 0.9)), "atan": (torch.atan, (-9, 9)),
    "sinh": (torch.sinh, (-4, 4)), "cosh": (torch.cosh, (-4, 4)),
    "asinh": (torch.asinh, (-9, 9)), "acosh": (torch.acosh, (1.1, 9)),
    "atanh": (torch.atanh, (-0.9, 0.9)), "erfc": (torch.erfc, (-3, 3)),
    "erfinv": (torch.erfinv, (-0.9, 0.9)), "log2": (torch.log2, (0.1, 9)),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(BACKWARD))
def test_backward(name, dtype):
    """The gradient PyTorch's autograd asks the card for, against the CPU's."""
    fn, (lo, hi) = BACKWARD[name]
    x = randn(6, 11, lo=lo, hi=hi).to(dtype)
    g = torch.randn(6, 11).to(dtype)
    grads = []
    for dev in ("cpu", N):
        xd = x.detach().to(dev).requires_grad_()
        fn(xd).backward(g.to(dev))
        grads.append(xd.grad)
    assert_close(grads[1], grads[0], dtype)


@pytest.mark.parametrize("name", sorted(BACKWARD))
def test_backward_nonfinite_grad(name):
    """A NaN or infinite incoming gradient gives what the CPU's kernel gives:
    0 where it selects 0 (outside hardsigmoid's slope, inside the shrinks'
    band, below hardswish's), NaN or infinite where it multiplies."""
    fn, (lo, hi) = BACKWARD[name]
    x = torch.linspace(lo, hi, 21).repeat(6, 1)
    g = torch.tensor([math.nan, math.inf, -math.inf, 1.0, -1.0, 0.0])[:, None].expand(6, 21)
    grads = []
    for dev in ("cpu", N):
        xd = x.detach().to(dev).requires_grad_()
        fn(xd).backward(g.to(dev))
        grads.append(xd.grad)
    assert_close(grads[1], grads[0])


PREDICATES = [torch.isnan, torch.isinf, torch.isposinf, torch.isneginf,
              torch.isfinite, torch.signbit, torch.logical_not]


@pytest.mark.parametrize("dtype", DTYPES + [torch.int64])
@pytest.mark.parametrize("fn", PREDICATES, ids=lambda f: f.__name__)
def test_predicates(fn, dtype):
    s = torch.tensor(SPECIALS) if dtype != torch.int64 else torch.tensor([-5, -1, 0, 3])
    s = s.to(dtype)
    got = fn(s.to(N))
    assert got.dtype == torch.bool
    assert torch.equal(got.cpu(), fn(s))
    if fn in (torch.isposinf, torch.isneginf, torch.signbit):
        out = torch.empty(0, dtype=torch.bool, device=N)
        fn(s.to(N), out=out)
        assert torch.equal(out.cpu(), fn(s))


@pytest.mark.parametrize("fn", [torch.logical_and, torch.logical_or, torch.logical_xor],
                         ids=lambda f: f.__name__)
def test_logical(fn):
    a = torch.tensor([0.0, -0.0, math.nan, 1.0, 0.0, 2.0, math.inf])
    b = torch.tensor([0.0, 1.0, 0.0, math.nan, -3.0, 2.0, 0.0])
    assert torch.equal(fn(a.to(N), b.to(N)).cpu(), fn(a, b))
    i = torch.tensor([0, 1, 5, 0, -2])
    j = torch.tensor([0, 0, 3, 7, -2])
    assert torch.equal(fn(i.to(N), j.to(N)).cpu(), fn(i, j))
    assert torch.equal(fn(i.to(N) > 0, j.to(N) > 0).cpu(), fn(i > 0, j > 0))
    out = torch.empty(0, dtype=torch.bool, device=N)
    fn(a.to(N), b.to(N)[None], out=out)
    assert torch.equal(out.cpu(), fn(a, b[None]))
    c = a.clone().to(N)
    getattr(c, fn.__name__ + "_")(b.to(N))
    assert torch.equal(c.cpu(), getattr(a.clone(), fn.__name__ + "_")(b))


BINARY = {
    "atan2": torch.atan2, "hypot": torch.hypot, "copysign": torch.copysign,
    "fmod": torch.fmod, "logaddexp": torch.logaddexp, "logaddexp2": torch.logaddexp2,
    "xlogy": torch.xlogy,
    "div_trunc": lambda a, b: torch.div(a, b, rounding_mode="trunc"),
    "div_floor": lambda a, b: torch.div(a, b, rounding_mode="floor"),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary(name, dtype):
    """Random operands with broadcasting, then every pair of special values."""
    fn = BINARY[name]
    a = (torch.randn(5, 7) * 4).to(dtype)
    b = (torch.randn(7) * 3).to(dtype)
    if name == "xlogy":
        b = b.abs()
    assert_close(fn(a.to(N), b.to(N)), fn(a, b), dtype)
    s = torch.tensor(SPECIALS).to(dtype)
    x, y = s[:, None], s[None, :]
    got, want = fn(x.to(N), y.to(N)), fn(x, y)
    assert_close(got, want, dtype)
    if name in ("copysign", "fmod", "div_trunc", "div_floor"):
        check_zero_sign(got, want)


def test_binary_scalar_forms():
    a = torch.randn(4, 5) * 4
    for fn in (lambda t: torch.fmod(t, 1.5), lambda t: torch.copysign(t, -1.0),
               lambda t: torch.xlogy(t.abs(), 2.0), lambda t: torch.xlogy(3.0, t.abs()),
               lambda t: torch.div(t, 0.7, rounding_mode="floor"),
               lambda t: torch.div(t, -0.7, rounding_mode="trunc")):
        assert_close(fn(a.to(N)), fn(a))
    an = a.to(N)
    an.fmod_(1.25)
    assert_close(an, a.fmod(1.25))
    an = a.to(N)
    an.div_(0.3, rounding_mode="floor")
    assert_close(an, a.div(0.3, rounding_mode="floor"))
    out = torch.empty(0, device=N)
    torch.div(a.to(N), a.to(N).flip(0), rounding_mode="trunc", out=out)
    assert_close(out, torch.div(a, a.flip(0), rounding_mode="trunc"))


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64])
def test_integer_division_modes(dtype):
    """Exact on integers: truncation toward zero, floor, fmod's dividend sign."""
    a = torch.tensor([7, -7, 7, -7, 0, 2 ** 30, -(2 ** 31) + 1], dtype=dtype)
    b = torch.tensor([2, 2, -2, -2, 3, 7, 3], dtype=dtype)
    for mode in ("trunc", "floor"):
        got = torch.div(a.to(N), b.to(N), rounding_mode=mode)
        assert got.dtype == dtype
        assert torch.equal(got.cpu(), torch.div(a, b, rounding_mode=mode))
    assert torch.equal(torch.fmod(a.to(N), b.to(N)).cpu(), torch.fmod(a, b))
    assert torch.equal(torch.fmod(a.to(N), -3).cpu(), torch.fmod(a, -3))


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64, torch.bool])
def test_bitwise(dtype):
    if dtype == torch.bool:
        a, b = torch.tensor([0, 1, 1, 0]).bool(), torch.tensor([0, 0, 1, 1]).bool()
    else:
        a = torch.tensor([0, -1, 12, -(2 ** 31), 2 ** 31 - 1, 0x5A5A], dtype=dtype)
        b = torch.tensor([5, 7, -3, -1, 0x0F0F, 0x3C3C], dtype=dtype)
    for fn in (torch.bitwise_and, torch.bitwise_or, torch.bitwise_xor):
        got = fn(a.to(N), b.to(N))
        assert got.dtype == dtype and torch.equal(got.cpu(), fn(a, b))
    assert torch.equal((a.to(N) & b.to(N)).cpu(), a & b)
    assert torch.equal((a.to(N) ^ True if dtype == torch.bool else a.to(N) ^ 6).cpu(),
                       a ^ True if dtype == torch.bool else a ^ 6)
    assert torch.equal(torch.bitwise_not(a.to(N)).cpu(), torch.bitwise_not(a))


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64])
def test_shifts(dtype):
    bits = 32 if dtype == torch.int32 else 64
    a = torch.tensor([1, -1, 12345, -12345, 2 ** 30, -(2 ** 30), 7, -7], dtype=dtype)
    s = torch.tensor([0, 1, 3, 5, 1, 2, bits - 1, bits - 1], dtype=dtype)
    for op in ("__lshift__", "__rshift__"):
        got = getattr(a.to(N), op)(s.to(N))
        assert torch.equal(got.cpu(), getattr(a, op)(s)), op
        assert torch.equal(getattr(a.to(N), op)(2).cpu(), getattr(a, op)(2)), op
    assert torch.equal(torch.bitwise_left_shift(a.to(N), s.to(N)).cpu(),
                       torch.bitwise_left_shift(a, s))
    c = a.to(N)
    c >>= 1
    assert torch.equal(c.cpu(), a >> 1)


def test_bitwise_refuses_floats():
    """A bitwise operator on a floating tensor is an error, not numbers."""
    x = torch.randn(3).to(N)
    with pytest.raises(RuntimeError, match="bitwise"):
        torch.bitwise_and(x, x)
    with pytest.raises(RuntimeError, match="bitwise"):
        x << 1


def test_elu_unsupported_combination():
    """elu with both scale and input_scale other than 1 fails loudly."""
    x = torch.randn(3).to(N)
    with pytest.raises(RuntimeError, match="input_scale"):
        torch.ops.aten.elu(x, 1.0, 2.0, 0.5)


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64, torch.uint8])
def test_integer_division_by_zero_raises(dtype):
    """An integer division by zero raises on the CPU; on the card it fails
    the instruction (DIV_ZERO, docs/hardware.md), reported when the stream
    is next synchronized, as a device error is -- never a made-up 0. In
    place, nothing is written. Floats give inf/nan."""
    a = torch.tensor([5, 7, 9], dtype=dtype)
    b = torch.tensor([2, 0, 3], dtype=dtype)
    for fn in (lambda x, y: torch.div(x, y, rounding_mode="floor"), torch.fmod,
               lambda x, y: torch.div(x, y, rounding_mode="trunc"), torch.remainder,
               lambda x, y: x // y, lambda x, y: x % y):
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            fn(a, b)
        with pytest.raises(RuntimeError, match="integer division by zero"):
            fn(a.to(N), b.to(N)).cpu()
        with pytest.raises(RuntimeError, match="integer division by zero"):
            fn(a.to(N), 0).cpu()
        nz = b.clamp(min=1)
        assert torch.equal(fn(a.to(N), nz.to(N)).cpu(), fn(a, nz))  # the card goes on
    x = a.to(N)
    with pytest.raises(RuntimeError, match="integer division by zero"):
        x.floor_divide_(b.to(N))
        torch.neuron.synchronize()
    assert torch.equal(x.cpu(), a)  # nothing written
    assert torch.equal((a.float().to(N) / 0).cpu(), a.float() / 0)

# SPDX-License-Identifier: MIT
"""Special functions and the remaining elementwise and factory operators on
the card against the CPU: torch.special (gamma family, Bessel and Airy
functions, the normal distribution, orthogonal polynomials), polygamma,
igamma, sinc/exp2/logit/nan_to_num/angle/frexp, heaviside/nextafter/fmax/
fmin/remainder/floor_divide/lerp, threshold/prelu/rrelu, renorm, equal, and
arange/linspace/logspace/eye written by IOTA. Random inputs across each
domain plus the special values (poles, zeros, infinities, NaN); the conftest
fails a test in which any operator fell back to the CPU."""
import math

import pytest
import torch
import torch.nn.functional as F

from conftest import assert_close

N = "neuron"
S = torch.special
SPECIALS = [math.nan, math.inf, -math.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0,
            -2.5, 1e-6, 7.5, -7.5, 30.0, -30.0, 100.0]


def sample(lo, hi, n=400, specials=True):
    x = torch.rand(n) * (hi - lo) + lo
    return torch.cat([x, torch.tensor(SPECIALS)]) if specials else x


UNARY = {
    "digamma": (torch.digamma, (-9, 9)), "i0": (torch.i0, (-20, 20)),
    "i0e": (S.i0e, (-50, 50)), "i1": (S.i1, (-20, 20)), "i1e": (S.i1e, (-50, 50)),
    "ndtri": (S.ndtri, (0, 1)), "log_ndtr": (S.log_ndtr, (-40, 9)),
    "erfcx": (S.erfcx, (-9, 40)), "airy_ai": (S.airy_ai, (-12, 12)),
    "bessel_j0": (S.bessel_j0, (-30, 30)), "bessel_j1": (S.bessel_j1, (-30, 30)),
    "bessel_y0": (S.bessel_y0, (0, 30)), "bessel_y1": (S.bessel_y1, (0, 30)),
    "modified_bessel_i0": (S.modified_bessel_i0, (-20, 20)),
    "modified_bessel_i1": (S.modified_bessel_i1, (-20, 20)),
    "modified_bessel_k0": (S.modified_bessel_k0, (0, 30)),
    "modified_bessel_k1": (S.modified_bessel_k1, (0, 30)),
    "scaled_modified_bessel_k0": (S.scaled_modified_bessel_k0, (0, 500)),
    "scaled_modified_bessel_k1": (S.scaled_modified_bessel_k1, (0, 500)),
    "spherical_bessel_j0": (S.spherical_bessel_j0, (-20, 20)),
    "entr": (S.entr, (-1, 9)), "sinc": (torch.sinc, (-9, 9)),
    "exp2": (torch.exp2, (-20, 20)), "logit": (torch.logit, (0, 1)),
    "angle": (torch.angle, (-9, 9)),
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary(name):
    fn, (lo, hi) = UNARY[name]
    x = sample(lo, hi)
    assert_close(fn(x.to(N)), fn(x))


@pytest.mark.parametrize("n", range(5))
def test_polygamma(n):
    # away from the poles, where the CPU's float32 trigamma is not infinite
    x = sample(-9, 9, specials=False)
    x = x[(x - x.round()).abs() > 1e-3]
    x = torch.cat([x, torch.tensor([0.5, 1.0, 2.0, 30.0, math.inf, math.nan])])
    want = torch.polygamma(n, x)
    assert_close(torch.polygamma(n, x.to(N)), want, rtol=2e-4)
    with pytest.raises(RuntimeError, match="negative n"):
        torch.polygamma(-1, x.to(N))


BINARY = {
    "zeta": (S.zeta, (1, 9), (-9, 9)), "xlog1py": (S.xlog1py, (-9, 9), (-1, 9)),
    "igamma": (torch.igamma, (0, 12), (0, 12)),
    "igammac": (torch.igammac, (0, 12), (0, 12)),
    "fmax": (torch.fmax, (-9, 9), (-9, 9)), "fmin": (torch.fmin, (-9, 9), (-9, 9)),
    "heaviside": (torch.heaviside, (-2, 2), (-2, 2)),
    "remainder": (torch.remainder, (-9, 9), (-4, 4)),
    "floor_divide": (torch.floor_divide, (-9, 9), (-4, 4)),
}


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary(name):
    fn, (lo, hi), (lo2, hi2) = BINARY[name]
    x, y = sample(lo, hi), sample(lo2, hi2)
    y[::7] = x[::7].round()          # heaviside's x == 0, zeta's integer points
    assert_close(fn(x.to(N), y.to(N)), fn(x, y))
    if name in ("zeta", "xlog1py", "remainder", "floor_divide"):
        assert_close(fn(x.to(N), 2.0), fn(x, 2.0))


def test_nextafter_exact():
    x, y = sample(-9, 9), sample(-9, 9)
    y[:5] = x[:5]
    got = torch.nextafter(x.to(N), y.to(N)).cpu()
    assert torch.equal(got.isnan(), torch.nextafter(x, y).isnan())
    ok = ~got.isnan()
    assert torch.equal(got[ok], torch.nextafter(x, y)[ok])
    with pytest.raises(RuntimeError, match="float32 and float64 only"):
        torch.nextafter(x.bfloat16().to(N), y.bfloat16().to(N))


POLY = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
        "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
        "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
        "shifted_chebyshev_polynomial_w", "hermite_polynomial_h",
        "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p"]


@pytest.mark.parametrize("name", POLY)
def test_polynomial(name):
    fn = getattr(S, name)
    x = torch.cat([torch.rand(300) * 2.4 - 1.2, torch.tensor([1.0, -1.0, 0.0, 0.5, math.nan])])
    n = torch.randint(-2, 12, x.shape).float()
    n[:4] = torch.tensor([0.0, 1.0, 2.7, -0.5])
    assert_close(fn(x.to(N), n.to(N)), fn(x, n))
    assert_close(fn(x.to(N), 5), fn(x, 5))
    with pytest.raises(RuntimeError, match="degree above"):
        fn(x.to(N), torch.full_like(x, 1e6).to(N))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("eps", [None, 0.0, 0.1])
def test_logit_backward(eps, dtype):
    """logit's gradient (one LOGIT_GRAD and a select) as the CPU's: across
    [-0.5, 1.5] and its special values (NaN outside [0, 1] without eps, 0
    outside [eps, 1 - eps] with it, whatever the incoming gradient), with
    finite and non-finite gradients, and its out= form."""
    x = torch.cat([sample(-0.5, 1.5), torch.tensor([0.1, 0.9, 1.0, 1e-40])]).to(dtype)
    g = torch.randn(x.shape).to(dtype)
    g[::7] = math.nan
    g[1::7] = math.inf
    g[2::7] = 0.0
    grads = []
    for dev in ("cpu", N):
        xd = x.detach().to(dev).requires_grad_()
        torch.logit(xd, eps=eps).backward(g.to(dev))
        grads.append(xd.grad)
    assert_close(grads[1], grads[0], dtype)
    out = torch.empty(0, dtype=dtype, device=N)
    torch.ops.aten.logit_backward.grad_input(g.to(N), x.to(N), eps, grad_input=out)
    assert_close(out, grads[0], dtype)


def test_logit_backward_mixed_dtypes():
    """A bfloat16 input with a float32 gradient: computed, and eps's bounds
    rounded, in float32 (the common type), as on the CPU: bfloat16(0.1001)
    lies below float32's eps bound, not below bfloat16's."""
    x = torch.tensor([0.1, 0.1001, 0.5, 0.8999, 0.9, 0.95]).bfloat16()
    g = torch.ones(6)
    want = torch.ops.aten.logit_backward(g, x, 0.1001)
    assert want[1] == 0
    got = torch.ops.aten.logit_backward(g.to(N), x.to(N), 0.1001)
    assert got.dtype == want.dtype == torch.float32
    assert_close(got, want)


def test_logit_eps_nan_to_num_frexp():
    x = sample(-0.5, 1.5)
    assert_close(torch.logit(x.to(N), eps=1e-3), torch.logit(x, eps=1e-3))
    y = torch.tensor([math.nan, math.inf, -math.inf, 1.5, -0.0])
    assert_close(torch.nan_to_num(y.to(N)), torch.nan_to_num(y))
    assert_close(torch.nan_to_num(y.to(N), nan=2.0, posinf=9.0, neginf=-8.0),
                 torch.nan_to_num(y, nan=2.0, posinf=9.0, neginf=-8.0))
    yb = y.bfloat16()
    assert_close(torch.nan_to_num(yb.to(N)), torch.nan_to_num(yb), torch.bfloat16)
    i = torch.tensor([1, -5, 2**40])
    assert torch.equal(torch.nan_to_num(i.to(N)).cpu(), i)
    m, e = torch.frexp(x.to(N))
    wm, we = torch.frexp(x)
    assert e.dtype == torch.int32
    assert_close(m, wm)
    assert torch.equal(e.cpu(), we)


def test_threshold_prelu_rrelu():
    x = sample(-3, 3).requires_grad_()
    xn = x.detach().to(N).requires_grad_()
    assert_close(F.threshold(xn, 0.5, -2.0), F.threshold(x, 0.5, -2.0))
    w = torch.tensor([0.25, -0.5, 1.5])
    a = torch.randn(4, 3, 5, requires_grad=True)
    an = a.detach().to(N).requires_grad_()
    wn = w.to(N).requires_grad_()
    wc = w.clone().requires_grad_()
    out, outn = F.prelu(a, wc), F.prelu(an, wn)
    assert_close(outn, out)
    g = torch.randn_like(out)
    out.backward(g)
    outn.backward(g.to(N))
    assert_close(an.grad, a.grad)
    assert_close(wn.grad, wc.grad)
    # eval: the mean slope; training: x * U(lower, upper) where x <= 0
    assert_close(F.rrelu(xn, 0.1, 0.3), F.rrelu(x, 0.1, 0.3))
    xt = torch.randn(1000).to(N)
    r = F.rrelu(xt, 0.1, 0.3, training=True).cpu()
    xc = xt.cpu()
    assert torch.equal(r[xc > 0], xc[xc > 0])
    ratio = r[xc < 0] / xc[xc < 0]
    assert ratio.min() >= 0.1 and ratio.max() <= 0.3 and ratio.std() > 0.03


def test_lerp_renorm_equal():
    a, b = torch.randn(50) * 1e4, torch.randn(50) * 1e-3
    w = torch.rand(50)
    w[:3] = torch.tensor([0.0, 1.0, 0.5])
    got = torch.lerp(a.to(N), b.to(N), w.to(N))
    assert_close(got, torch.lerp(a, b, w))
    assert got.cpu()[1] == b[1]        # exact at weight 1
    x = torch.randn(4, 3, 5) * 3
    for p, dim, mx in [(2, 0, 5.0), (1, 1, 2.0), (3.5, 2, 1.0)]:
        assert_close(torch.renorm(x.to(N), p, dim, mx), torch.renorm(x, p, dim, mx))
    xn = x.to(N)
    assert torch.equal(xn, xn.clone())
    y = x.clone()
    y[1, 2, 3] += 1
    assert not torch.equal(xn, y.to(N))
    assert not torch.equal(xn, xn[:2])
    nan = torch.tensor([math.nan]).to(N)
    assert not torch.equal(nan, nan)


def test_factories():
    for args, dtype in [((0, 10, 3), torch.int64), ((-2.5, 4.0, 0.3), torch.float32),
                        ((5, -7, -2), torch.int32), ((1e6, 1e6 + 50, 7), torch.float32)]:
        got = torch.arange(*args, dtype=dtype, device=N)
        assert torch.equal(got.cpu(), torch.arange(*args, dtype=dtype)), args
    big = torch.arange(2**40, 2**40 + 5, device=N)
    assert torch.equal(big.cpu(), torch.arange(2**40, 2**40 + 5))
    for s, e, n in [(-3.0, 7.0, 11), (0.0, 1.0, 1), (2.0, -1.0, 50), (0, 10, 4)]:
        assert_close(torch.linspace(s, e, n, device=N), torch.linspace(s, e, n))
        assert_close(torch.logspace(s, e, n, device=N), torch.logspace(s, e, n),
                     rtol=2e-4)
        assert_close(torch.logspace(s, e, n, base=2.0, device=N),
                     torch.logspace(s, e, n, base=2.0))
    li = torch.linspace(0, 10, 4, dtype=torch.int64, device=N)
    assert torch.equal(li.cpu(), torch.linspace(0, 10, 4, dtype=torch.int64))
    assert torch.linspace(0, 1, 11, device=N).cpu()[-1] == 1.0
    for n, m in [(3, 3), (2, 5), (5, 2), (0, 4)]:
        assert torch.equal(torch.eye(n, m, device=N).cpu(), torch.eye(n, m))
    assert torch.equal(torch.eye(4, dtype=torch.bool, device=N).cpu(),
                       torch.eye(4, dtype=torch.bool))

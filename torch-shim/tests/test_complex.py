# SPDX-License-Identifier: MIT
"""complex64 on the card against the CPU's complex64.

The card stores complex64 as PyTorch does (two float32, real then
imaginary) and computes the functions docs/hardware.md lists under
"Complex numbers" in double, rounding each part once: results equal the
CPU's to float32 rounding (rtol 1e-6 here; exact for the copies, views,
negation and conjugation). What it does not compute fails naming the
operator; nothing falls back to the CPU (conftest).
"""
import cmath
import warnings

import pytest
import torch

N = "neuron"
C = torch.complex64
TOL = dict(rtol=2e-6, atol=1e-6)


def z(*shape, scale=1.0):
    return torch.randn(*shape, dtype=C) * scale


def close(got, want, **kw):
    assert got.device.type == N, got.device
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    torch.testing.assert_close(got.cpu(), want, **{**TOL, **kw}, equal_nan=True)


def same(got, want):
    close(got, want, rtol=0, atol=0)


def test_storage_round_trip_and_conversions():
    a = z(3, 5)
    same(a.to(N), a)
    x = torch.randn(4, 6)
    same(x.to(N).to(C), x.to(C))                # real -> complex on the card
    same(torch.zeros(2, 3, dtype=C, device=N), torch.zeros(2, 3, dtype=C))
    same(torch.full((4,), 1 - 2j, dtype=C, device=N), torch.full((4,), 1 - 2j, dtype=C))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # "discards the imaginary part", once
        got = a.to(N).to(torch.float32)
        same(got, a.real.contiguous())
        same(a.to(N).to(torch.bool), a.to(torch.bool))   # either part non-zero
    same(a.to(N)[1:, ::2].contiguous(), a[1:, ::2].contiguous())
    assert a.to(N)[1, 2].item() == a[1, 2].item()


def test_view_as_real_and_complex_are_views():
    a = z(4, 3)
    d = a.to(N)
    r = torch.view_as_real(d)
    assert r.shape == (4, 3, 2) and r.dtype == torch.float32
    assert r.data_ptr() == d.data_ptr()
    same(r, torch.view_as_real(a))
    same(d.real, a.real)
    same(d.imag, a.imag)
    d.imag.mul_(2)                               # through the view
    a.imag.mul_(2)
    same(d, a)
    p = torch.randn(5, 2)
    back = torch.view_as_complex(p.to(N))
    same(back, torch.view_as_complex(p))
    assert back.data_ptr() == torch.view_as_real(back).data_ptr()


def test_conjugate_views_and_copies():
    a = z(6)
    d = a.to(N)
    same(d.conj(), a.conj())                     # lazy: a conjugate view
    assert d.conj().is_conj()
    same(d.conj().resolve_conj(), a.conj())
    same(torch.conj_physical(d), a.conj())
    same(d.conj() + 1, a.conj() + 1)
    out = torch.empty(6, dtype=C, device=N)
    out.conj().copy_(d)                          # into a conjugate view
    same(out, a.conj())
    same((-d.conj()).imag, a.imag)               # a negative view
    x = torch.randn(5)
    same(torch.conj_physical(x.to(N)), x)


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
def test_binary_arithmetic(op):
    f = getattr(torch, op)
    a, b = z(4, 5), z(4, 5)
    close(f(a.to(N), b.to(N)), f(a, b))
    close(f(a.to(N), b[0].to(N)), f(a, b[0]))                 # broadcast
    x = torch.randn(4, 5)
    close(f(a.to(N), x.to(N)), f(a, x))                       # complex op real
    close(f(x.to(N), a.to(N)), f(x, a))
    close(f(a.to(N), 2.5), f(a, 2.5))                         # real scalar
    close(f(a.to(N), 1.5 - 0.5j), f(a, 1.5 - 0.5j))           # complex scalar
    close(f(a.to(N), torch.tensor(2 + 1j)), f(a, torch.tensor(2 + 1j)))
    d = a.to(N)
    getattr(d, op + "_")(b.to(N))
    close(d, f(a, b))


def test_add_alpha_and_division_edge_cases():
    a, b = z(8), z(8)
    close(torch.add(a.to(N), b.to(N), alpha=3), torch.add(a, b, alpha=3))
    # 16 elements: the CPU's vectorized division (NaN parts) for every one
    num, zero = z(16), torch.zeros(16, dtype=C)
    close(num.to(N) / zero.to(N), num / zero)
    big = torch.tensor([3e30 + 4e30j], dtype=C)
    close(big.to(N) / big.to(N), big / big)                   # no overflow
    close(big.to(N) * 1e-30, big * 1e-30)


@pytest.mark.parametrize("name", ["neg", "exp", "log", "sqrt", "reciprocal", "sin",
                                  "cos", "tanh", "sigmoid", "sgn", "square", "pow"])
def test_unary(name):
    f = (lambda t: torch.pow(t, 1.5 - 0.5j)) if name == "pow" else getattr(torch, name)
    a = z(64)
    a[0] = 0
    close(f(a.to(N)), f(a), rtol=1e-5, atol=1e-6)


def test_abs_and_angle_are_real():
    a = z(7, 3)
    a[0, 0] = 0
    close(a.to(N).abs(), a.abs())
    close(a.to(N).angle(), a.angle())
    close(torch.angle(torch.tensor([-2.0, 0.0, 3.0]).to(N)),
          torch.angle(torch.tensor([-2.0, 0.0, 3.0])))
    with pytest.raises(RuntimeError, match="not supported for complex"):
        a.to(N).abs_()


def test_predicates_comparisons_and_where():
    a = torch.tensor([1 + 1j, float("nan") + 0j, complex(0, float("inf")), 2j], dtype=C)
    for f in (torch.isnan, torch.isinf, torch.isfinite):
        same(f(a.to(N)), f(a))
    b = a.clone()
    b[3] = 2
    same(a.to(N) == b.to(N), a == b)
    same(a.to(N) != b.to(N), a != b)
    m = torch.tensor([True, False, True, False])
    same(torch.where(m.to(N), a.to(N), b.to(N)), torch.where(m, a, b))


def test_sum_and_mean():
    a = z(3, 4, 5)
    close(a.to(N).sum(), a.sum(), rtol=1e-5)
    close(a.to(N).sum(1), a.sum(1), rtol=1e-5)
    close(a.to(N).mean((0, 2), keepdim=True), a.mean((0, 2), keepdim=True), rtol=1e-5)


def test_complex_and_polar_constructors():
    re, im = torch.randn(6), torch.randn(6)
    same(torch.complex(re.to(N), im.to(N)), torch.complex(re, im))
    mag, arg = torch.rand(6), torch.randn(6) * 3
    close(torch.polar(mag.to(N), arg.to(N)), torch.polar(mag, arg))


def test_cat_stack_and_pad_move_complex():
    a, b = z(2, 3), z(2, 3)
    same(torch.cat([a.to(N), b.to(N)], 1), torch.cat([a, b], 1))
    same(torch.stack([a.to(N), b.to(N)]), torch.stack([a, b]))
    same(torch.nn.functional.pad(a.to(N), (1, 2)), torch.nn.functional.pad(a, (1, 2)))


def test_gradients_through_complex_arithmetic():
    """Wirtinger gradients of a real loss of complex intermediates, as the
    CPU computes them."""
    def loss(x, w):
        zx = torch.complex(x[..., 0], x[..., 1])
        return ((zx * w).exp().abs() + (zx / (w + 2)).angle()).sum()

    x, w = torch.randn(5, 2), z(5)
    xc, wc = x.clone().requires_grad_(), w.clone().requires_grad_()
    xn, wn = x.to(N).requires_grad_(), w.to(N).requires_grad_()
    lc, ln = loss(xc, wc), loss(xn, wn)
    lc.backward()
    ln.backward()
    close(ln.detach(), lc.detach(), rtol=1e-5)
    close(xn.grad, xc.grad, rtol=1e-4, atol=1e-5)
    close(wn.grad, wc.grad, rtol=1e-4, atol=1e-5)


def test_what_the_card_does_not_compute_is_refused_by_name():
    d = z(4).to(N)
    with pytest.raises(RuntimeError, match="erfinv.*complex64"):
        torch.special.erfinv(d)
    # composed of instructions: refused by libneuron before the card sees it
    with pytest.raises(RuntimeError, match="cumprod.*does not compute this on complex64"):
        d.cumprod(0)
    with pytest.raises(RuntimeError, match="ComplexDouble"):
        torch.zeros(2, dtype=torch.complex128, device=N)
    with pytest.raises(RuntimeError, match="complex"):
        torch.randn(3, dtype=torch.float64).to(N).to(torch.complex128)


def test_python_complex_scalars():
    a = z(3)
    close(a.to(N) * 1j, a * 1j)
    close(1j + a.to(N), 1j + a)
    assert isinstance(a.to(N).sum().item(), complex)
    assert cmath.isclose(a.to(N).sum().item(), a.sum().item(), rel_tol=1e-5)


def test_matrix_products():
    a, b = z(5, 7), z(7, 3)
    close(a.to(N) @ b.to(N), a @ b, rtol=1e-5, atol=1e-5)
    p, q = z(2, 4, 6), z(2, 6, 5)
    close(torch.bmm(p.to(N), q.to(N)), torch.bmm(p, q), rtol=1e-5, atol=1e-5)
    c = z(5, 3)
    close(torch.addmm(c.to(N), a.to(N), b.to(N)), torch.addmm(c, a, b), rtol=1e-5, atol=1e-5)
    close(a.to(N).conj() @ b.to(N), a.conj() @ b, rtol=1e-5, atol=1e-5)
    close(a.to(N) @ b.to(N).conj(), a @ b.conj(), rtol=1e-5, atol=1e-5)
    close(a.to(N).mH @ a.to(N), a.mH @ a, rtol=1e-5, atol=1e-5)
    u, v = z(9), z(9)
    # (u * v).sum(): PyTorch's CPU dot of complex64 gives 0 on this build
    # (the BLAS' cdotu returning its complex result another way)
    close(torch.dot(u.to(N), v.to(N)), (u * v).sum(), rtol=1e-5)
    close(torch.vdot(u.to(N), v.to(N)), (u.conj() * v).sum(), rtol=1e-5)
    w = torch.randn(7, 2)
    # the imaginary part of a conjugate view is a negative view: shown, not stored
    got = a.to(N).conj().imag @ w.to(N)
    torch.testing.assert_close(got.cpu(), a.conj().imag @ w, rtol=1e-5, atol=1e-5)


def test_random_complex_tensors():
    """randn/rand of complex64 draw both parts (each part's deviation
    1/sqrt(2) for randn, as on the CPU)."""
    g = torch.randn(200000, dtype=C, device=N).cpu()
    assert abs(g.real.std().item() - 0.5 ** 0.5) < 0.01
    assert abs(g.imag.std().item() - 0.5 ** 0.5) < 0.01
    assert abs((g.abs() ** 2).mean().item() - 1.0) < 0.02
    u = torch.rand(1000, dtype=C, device=N).cpu()
    assert (u.real >= 0).all() and (u.real < 1).all()
    assert (u.imag >= 0).all() and (u.imag < 1).all() and u.imag.std() > 0.2


@pytest.mark.parametrize("fn", [torch.logical_and, torch.logical_or, torch.logical_xor])
def test_logical_operators_take_the_truth_value(fn):
    """A complex number is true when either part is nonzero (0, 1j, 2, and
    random values), with a complex, a real or a Python scalar beside it."""
    a = torch.tensor([0, 1j, 2, 0, -0.0 - 0j, 1 + 1j], dtype=C)
    b = torch.tensor([3, 0, 0j, 0, 1j, 2 - 1j], dtype=C)
    for x, y in ((a, b), (a, b.real), (a.real, b), (a, b.abs() > 1)):
        same(fn(x.to(N), y.to(N)), fn(x, y))
    for s in (0j, 2 + 0j):
        same(fn(a.to(N), torch.tensor(s)), fn(a, torch.tensor(s)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # nothing is discarded: no warning
        out = a.to(N).clone()
        fn(out, b.to(N), out=torch.empty(6, dtype=torch.bool, device=N))


def test_masked_fill_with_a_complex_value():
    x = z(3, 4)
    m = torch.rand(3, 4) > 0.5
    for v in (1 - 2j, 3.0, torch.tensor(0.5j)):
        same(x.to(N).masked_fill(m.to(N), v), x.masked_fill(m, v))
        # in place through a conjugate view: the stored value is conj(v)
        got, want = x.to(N), x.clone()
        got.conj().masked_fill_(m.to(N), v)
        want.conj().masked_fill_(m, v)
        same(got, want)


def test_silu_and_sinc_by_the_cpus_formulas():
    a = torch.cat([z(64, scale=3.0), torch.tensor([0, 1e-30j, 2.5, -1j], dtype=C)])
    for f in (torch.nn.functional.silu, torch.sinc):
        close(f(a.to(N)), f(a))
        got = a.to(N).clone()
        want = a.clone()
        (torch.nn.functional.silu(got, inplace=True) if f is torch.nn.functional.silu
         else got.sinc_())
        (torch.nn.functional.silu(want, inplace=True) if f is torch.nn.functional.silu
         else want.sinc_())
        close(got, want)
    assert torch.sinc(torch.zeros(3, dtype=C, device=N)).cpu().eq(1).all()

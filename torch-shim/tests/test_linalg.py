# SPDX-License-Identifier: MIT
"""Linear algebra on the card (LINALG) against the CPU: Cholesky, LU and its
solves, inverse, determinants, triangular solves, QR and the Householder
products, SVD, eigh, lu_unpack; the composites PyTorch builds from them
(solve, matrix_norm, cond, svdvals, eigvalsh, multi_dot, tensorsolve...);
pinv and matrix_rank, whose float64 tolerances the shim computes on the
host; trace, addbmm, cross, torch.norm; and the backward of
cholesky, inv, solve, svd, eigh, qr and det -- all with no CPU fallback
(the conftest fails a test in which any operator ran on the CPU)."""
import math

import pytest
import torch

from conftest import assert_close

N = "neuron"
TOL = dict(rtol=1e-4, atol=1e-4)


def spd(*batch, n=4):
    a = torch.randn(*batch, n, n)
    return a @ a.mT + n * torch.eye(n)


def well(*batch, n=4, m=None):
    """A well-conditioned (m x n) matrix batch."""
    a = torch.randn(*batch, m or n, n)
    if m is None:
        a = a + n * torch.eye(n)
    return a


def check(fn, *xs, grad=False, tol=TOL, outs=None, **kw):
    """fn on the CPU and on neuron (the same inputs), outputs and gradients close."""
    xc = [x.clone().requires_grad_(grad) for x in xs]
    xn = [x.detach().to(N).requires_grad_(grad) for x in xs]
    want, got = fn(*xc, **kw), fn(*xn, **kw)
    ws = want if isinstance(want, (tuple, list)) else (want,)
    gs = got if isinstance(got, (tuple, list)) else (got,)
    assert len(ws) == len(gs)
    for i, (w, g) in enumerate(zip(ws, gs)):
        if outs is not None and i not in outs:
            continue
        assert g.device.type == N and g.dtype == w.dtype and g.shape == w.shape, (i, g, w)
        assert_close(g.detach(), w.detach(), w.dtype, **(tol if w.is_floating_point() else {}))
    if grad:
        loss_c = sum((w * torch.ones_like(w)).sum() for i, w in enumerate(ws)
                     if w.is_floating_point() and (outs is None or i in outs))
        loss_n = sum((g * torch.ones_like(g)).sum() for i, g in enumerate(gs)
                     if g.is_floating_point() and (outs is None or i in outs))
        loss_c.backward()
        loss_n.backward()
        for c, d in zip(xc, xn):
            assert_close(d.grad, c.grad, **tol)
    return got


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky(upper):
    a = spd(2, 3)
    check(lambda x: torch.linalg.cholesky(x, upper=upper), a, grad=True)
    check(lambda x: torch.cholesky(x, upper=upper), a[0, 0])
    check(lambda x: torch.linalg.cholesky_ex(x, upper=upper), a)
    L = torch.linalg.cholesky(a, upper=upper)
    b = torch.randn(2, 3, 4, 2)
    check(lambda l, y: torch.cholesky_solve(y, l, upper=upper), L, b)
    check(lambda l: torch.cholesky_inverse(l, upper=upper), L[0, 0])


def test_cholesky_not_pd():
    bad = torch.tensor([[1.0, 2.0], [2.0, 1.0]])
    L, info = torch.linalg.cholesky_ex(bad.to(N))
    assert info.item() == 2
    with pytest.raises(RuntimeError, match="positive-definite"):
        torch.linalg.cholesky(bad.to(N))


def test_lu():
    a = torch.randn(3, 5, 5)
    check(torch.linalg.lu_factor, a)
    check(torch.linalg.lu_factor_ex, a)
    check(torch.linalg.lu, a)
    check(torch.linalg.lu, torch.randn(4, 6))
    check(torch.linalg.lu, torch.randn(6, 4))
    LU, piv = torch.linalg.lu_factor(a)
    b = torch.randn(3, 5, 2)
    for left in (True, False):
        for adjoint in (False, True):
            B = b if left else b.mT
            X = torch.linalg.lu_solve(LU.to(N), piv.to(N), B.to(N), left=left, adjoint=adjoint)
            assert_close(X, torch.linalg.lu_solve(LU, piv, B, left=left, adjoint=adjoint))


def test_lu_unpack_pivots():
    a = torch.randn(2, 6, 6)
    LU, piv = torch.linalg.lu_factor(a)
    P, L, U = torch.lu_unpack(LU.to(N), piv.to(N))
    Pc, Lc, Uc = torch.lu_unpack(LU, piv)
    assert_close(P, Pc)
    assert_close(L, Lc)
    assert_close(U, Uc)
    assert_close(P @ L @ U, a, rtol=1e-4, atol=1e-4)


def test_solve_inv_det():
    a = well(2, n=5)
    b = torch.randn(2, 5, 3)
    check(torch.linalg.solve, a, b, grad=True)
    check(torch.linalg.solve, a, b[..., 0])                       # vector right-hand side
    check(lambda x, y: torch.linalg.solve(x, y, left=False), a, b.mT)
    check(torch.linalg.solve_ex, a, b)
    check(torch.linalg.inv, a, grad=True)
    check(torch.linalg.inv_ex, a.mT)                              # non-contiguous A
    check(torch.linalg.det, a, grad=True)
    check(torch.linalg.det, a.mT)
    check(torch.linalg.slogdet, a, grad=True, outs=(1,))
    check(torch.logdet, spd(3))
    t = (torch.randn(12, 12) + 12 * torch.eye(12)).reshape(4, 3, 6, 2)
    check(lambda x: torch.linalg.tensorsolve(x, torch.ones(4, 3, device=x.device)), t)
    check(lambda x: torch.linalg.tensorinv(x, ind=2), t)
    check(lambda x, y, z: torch.linalg.multi_dot([x, y, z]), torch.randn(3, 4),
          torch.randn(4, 5), torch.randn(5, 2))


def test_singular():
    s = torch.tensor([[1.0, 2.0], [2.0, 4.0]])
    d = torch.linalg.det(s.to(N))
    assert d.item() == 0.0
    sign, logabs = torch.linalg.slogdet(s.to(N))
    assert sign.item() == 0.0 and logabs.item() == float("-inf")
    _, info = torch.linalg.inv_ex(s.to(N))
    assert info.item() == 2
    with pytest.raises(RuntimeError, match="singular"):
        torch.linalg.inv(s.to(N))


@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("unit", [False, True])
def test_solve_triangular(upper, left, unit):
    a = well(2, n=4)
    a = a.triu() if upper else a.tril()
    b = torch.randn(2, 4, 3) if left else torch.randn(2, 3, 4)
    check(lambda x, y: torch.linalg.solve_triangular(x, y, upper=upper, left=left,
                                                     unitriangular=unit), a, b, grad=True)


@pytest.mark.parametrize("transpose", [False, True])
def test_triangular_solve(transpose):
    a = well(3, n=4).triu()
    b = torch.randn(3, 4, 2)
    check(lambda y, x: torch.triangular_solve(y, x, upper=True, transpose=transpose), b, a)


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4)])
def test_qr(shape):
    a = torch.randn(*shape)
    for mode in ("reduced", "complete", "r"):
        check(lambda x: torch.linalg.qr(x, mode=mode), a)
    if shape[-2] >= shape[-1]:
        check(torch.linalg.qr, a, grad=True)
    check(torch.geqrf, a)
    qr, tau = torch.geqrf(a)
    if shape[-2] >= shape[-1]:
        check(torch.linalg.householder_product, qr, tau)
    c = torch.randn(*shape[:-1], 2)
    for transpose in (False, True):
        check(lambda x, t, y: torch.ormqr(x, t, y, left=True, transpose=transpose), qr, tau, c)
        check(lambda x, t, y: torch.ormqr(x, t, y, left=False, transpose=transpose), qr, tau,
              c.mT.contiguous())


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4)])
def test_svd(shape):
    a = torch.randn(*shape)
    check(torch.linalg.svd, a, full_matrices=False)
    check(torch.linalg.svd, a, full_matrices=True)
    check(torch.linalg.svdvals, a, grad=True)
    check(torch.linalg.matrix_norm, a, ord="nuc")
    check(torch.linalg.matrix_norm, a, ord=2)
    check(torch.linalg.cond, a)
    # (linalg.pinv builds float64 tolerances: not a card dtype, see the report)


def test_eigh():
    a = spd(2, n=5)
    check(torch.linalg.eigh, a)
    check(torch.linalg.eigh, a, UPLO="U")
    check(torch.linalg.eigvalsh, a, grad=True)
    check(lambda x: torch.linalg.eigh(x)[1].abs(), a, grad=True)


def test_composed():
    a = torch.randn(5, 5)
    check(torch.trace, a, grad=True)
    check(torch.trace, torch.arange(9).reshape(3, 3))
    m = torch.randn(3, 4)
    b1, b2 = torch.randn(6, 3, 2), torch.randn(6, 2, 4)
    check(torch.addbmm, m, b1, b2, grad=True)
    check(lambda x, y, z: torch.addbmm(x, y, z, beta=0.5, alpha=2), m, b1, b2)
    x, y = torch.randn(4, 3), torch.randn(4, 3)
    check(torch.linalg.cross, x, y, grad=True)
    check(lambda p, q: torch.linalg.cross(p, q, dim=0), x.mT.contiguous(), y.mT.contiguous())
    check(torch.norm, a)
    check(lambda t: torch.norm(t, p=1, dim=1, keepdim=True), a, grad=True)
    check(lambda t: torch.norm(t, p=3, dim=0), a)
    check(lambda t: torch.dist(t, torch.ones_like(t)), a)


def low_rank(*batch, m=5, n=4, r=2):
    """Rank r exactly: r random columns, then zero ones. Its other singular
    values are 0, not rounding noise near the tolerance, so the CPU's LAPACK
    and the card's agree on the rank."""
    return torch.cat([torch.randn(*batch, m, r), torch.zeros(*batch, m, n - r)], -1)


def test_pinv():
    """pinv and pinverse: ATen holds their tolerances in float64 tensors on
    the input's device, which the card cannot store; the shim computes the
    tolerance on the host and everything else on the card."""
    a = low_rank(2)
    check(torch.linalg.pinv, a)
    check(torch.linalg.pinv, well(3, n=4, m=6), grad=True)
    check(torch.pinverse, a[0])
    check(lambda x: torch.pinverse(x, rcond=0.3), a)
    check(lambda x: torch.linalg.pinv(x, hermitian=True), spd(2), grad=True)
    check(lambda x: torch.linalg.pinv(x, atol=0.5, rtol=0.1), a)
    check(lambda x: torch.linalg.pinv(x, rtol=torch.full((2,), 0.2, device=x.device)), a)
    check(lambda x: torch.linalg.pinv(x, atol=torch.tensor([0.1, 9.0], device=x.device)), a)
    check(lambda x: torch.linalg.pinv(x, torch.tensor(0.3, device=x.device)), a)
    check(torch.linalg.pinv, torch.randn(0, 3, 4))
    check(torch.linalg.pinv, torch.randn(3, 0))
    out = torch.empty(0, device=N)
    assert torch.linalg.pinv(a.to(N), out=out) is out
    assert_close(out, torch.linalg.pinv(a), **TOL)


def test_matrix_rank():
    a = low_rank(3, m=6, n=5, r=3)
    r = check(torch.linalg.matrix_rank, a)
    assert r.tolist() == [3, 3, 3]
    h = torch.block_diag(spd(n=3), torch.zeros(2, 2))
    assert check(lambda x: torch.linalg.matrix_rank(x, hermitian=True), h).item() == 3
    check(lambda x: torch.linalg.matrix_rank(x, hermitian=True), spd(2, 2))
    check(lambda x: torch.linalg.matrix_rank(x, tol=0.5), a)
    check(lambda x: torch.linalg.matrix_rank(x, atol=1.0, rtol=0.0), a)
    check(lambda x: torch.linalg.matrix_rank(x, rtol=0.3), a)
    check(lambda x: torch.linalg.matrix_rank(x, torch.tensor(2.0, device=x.device)), a)
    check(lambda x: torch.linalg.matrix_rank(
        x, atol=torch.tensor([0.0, 1.0, 1e3], device=x.device)), a)
    check(torch.linalg.matrix_rank, torch.randn(2, 0, 3))
    out = torch.empty(0, dtype=torch.long, device=N)
    assert torch.linalg.matrix_rank(a.to(N), out=out) is out
    assert out.tolist() == [3, 3, 3]


@pytest.mark.parametrize("hermitian", [False, True])
def test_rank_tolerance_is_float64(hermitian):
    """The CPU compares float32 singular values with a float64 threshold:
    0.1 is below float32(0.1), so a singular value of float32(0.1) counts.
    Compared with the threshold rounded to nearest (float32(0.1)) it would
    not; the card compares with it rounded down, which gives the CPU's
    answer for every float32 value."""
    a = torch.diag(torch.tensor([1.0, 0.1]))
    point_one = torch.tensor(0.1).item()           # float32(0.1) as a double
    for atol, rank in ((0.1, 2), (point_one, 1)):
        want = torch.linalg.matrix_rank(a, atol=atol, rtol=0.0, hermitian=hermitian)
        got = torch.linalg.matrix_rank(a.to(N), atol=atol, rtol=0.0, hermitian=hermitian)
        assert want.item() == got.item() == rank
    p = torch.linalg.pinv(a.to(N), atol=0.1, rtol=0.0, hermitian=hermitian)
    assert_close(p, torch.linalg.pinv(a, atol=0.1, rtol=0.0, hermitian=hermitian))
    assert p[1, 1].item() != 0


def test_matrix_exp():
    """Scaling and squaring on the card: per matrix of a batch (norms from
    0.1 to about 40), closed forms, the gradient."""
    a = torch.randn(3, 5, 5) * torch.tensor([0.05, 1.0, 8.0]).view(3, 1, 1)
    got, want = torch.linalg.matrix_exp(a.to(N)).cpu(), torch.linalg.matrix_exp(a)
    exact = torch.linalg.matrix_exp(a.double())
    for g, w, x in zip(got, want, exact):
        scale = x.abs().max()
        assert (g.double() - x).abs().max() <= max(4 * (w.double() - x).abs().max(),
                                                   1e-6 * scale), (g, w)
    t = 0.7
    rot = torch.tensor([[0.0, t], [-t, 0.0]])
    assert_close(torch.matrix_exp(rot.to(N)), torch.tensor([[math.cos(t), math.sin(t)],
                                                          [-math.sin(t), math.cos(t)]]))
    nil = torch.tensor([[0.0, 1.0], [0.0, 0.0]])
    assert torch.equal(torch.matrix_exp(nil.to(N)).cpu(), torch.tensor([[1.0, 1.0], [0.0, 1.0]]))
    check(torch.linalg.matrix_exp, torch.randn(2, 4, 4) * 0.5, grad=True)
    check(torch.linalg.matrix_exp, torch.randn(0, 3, 3))


def test_refusals():
    with pytest.raises(RuntimeError, match="float32"):
        torch.linalg.cholesky(spd(n=3).to(torch.bfloat16).to(N))
    with pytest.raises(RuntimeError, match="not supported by the card"):
        torch.linalg.det(torch.randn(1100, 1100).to(N))
    with pytest.raises(RuntimeError, match="square"):
        torch.linalg.inv(torch.randn(3, 4).to(N))


def test_ldl():
    a = torch.randn(2, 5, 5)
    a = a + a.mT                      # symmetric, indefinite: 2x2 blocks likely
    check(torch.linalg.ldl_factor, a)
    check(torch.linalg.ldl_factor_ex, a)
    LD, piv = torch.linalg.ldl_factor(a)
    b = torch.randn(2, 5, 3)
    X = torch.linalg.ldl_solve(LD.to(N), piv.to(N), b.to(N))
    assert_close(X, torch.linalg.ldl_solve(LD, piv, b))
    assert_close(a.to(N) @ X, b, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("driver", ["gels", "gelsy", "gelsd", "gelss"])
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4)])
def test_lstsq(driver, shape):
    a = torch.randn(*shape)
    b = torch.randn(*shape[:-1], 2)
    check(lambda x, y: torch.linalg.lstsq(x, y, driver=driver), a, b)
    check(lambda x, y: torch.linalg.lstsq(x, y, driver=driver), a, b[..., 0])
    if driver in ("gelsd", "gelss"):
        # rank-deficient: rank 2, no residuals, the minimum-norm solution
        r = check(lambda x, y: torch.linalg.lstsq(x, y, driver=driver),
                  low_rank(m=6, n=4, r=2), torch.randn(6, 3))
        assert r.rank.item() == 2 and r.residuals.numel() == 0
        check(lambda x, y: torch.linalg.lstsq(x, y, rcond=0.5, driver=driver), a, b)

# SPDX-License-Identifier: MIT
"""Sparse CSR matrices on the card (csrc/aten/SparseCsrTensor.cpp;
docs/sparse.md) against the CPU: construction, .to() and .cpu(), the
accessors, printing, the conversions (dense and COO to CSR, CSR to dense
and COO), the products with a dense matrix or vector and their backward
(to the dense operand and to the CSR values), sparse_sampled_addmm; empty
rows, nnz 0, duplicate columns; and the loud errors of what has no kernel.
The conftest fails a test in which anything ran on the CPU fallback."""
import pytest
import torch

from conftest import assert_close

N = "neuron"


def random_csr(shape, density=0.3, seed=0, dtype=torch.float32):
    """A CPU CSR matrix with some empty rows."""
    g = torch.Generator().manual_seed(seed)
    d = torch.randn(shape, generator=g).to(dtype)
    d = d * (torch.rand(shape, generator=g) < density)
    if shape[0] > 2:
        d[1] = 0  # an empty row
    return d.to_sparse_csr()


def assert_csr_equal(got, want, **kw):
    assert got.device.type == N and got.layout == torch.sparse_csr
    assert got.shape == want.shape and got._nnz() == want._nnz()
    assert torch.equal(got.crow_indices().cpu(), want.crow_indices())
    assert torch.equal(got.col_indices().cpu(), want.col_indices())
    assert_close(got.values(), want.values(), **kw)


SHAPES = [(6, 5), (1, 4), (7, 3), (5, 5)]


def test_construct_to_and_back():
    crow = torch.tensor([0, 2, 2, 3])
    col = torch.tensor([0, 3, 1])
    v = torch.tensor([1., 2., 3.])
    want = torch.sparse_csr_tensor(crow, col, v, (3, 4))
    s = torch.sparse_csr_tensor(crow.to(N), col.to(N), v.to(N), (3, 4), device=N)
    assert s.layout == torch.sparse_csr and s.device.type == N
    assert (s._nnz(), s.sparse_dim(), s.dense_dim()) == (3, 2, 0)
    assert s.values().device.type == N and s.crow_indices().device.type == N
    assert_csr_equal(s, want)
    assert_csr_equal(want.to(N), want)
    back = s.cpu()
    assert back.layout == torch.sparse_csr and back.device.type == "cpu"
    assert torch.equal(back.to_dense(), want.to_dense())
    assert_csr_equal(s.clone(), want)
    # int32 indices, as torch.sparse_csr_tensor takes them
    s32 = torch.sparse_csr_tensor(crow.int(), col.int(), v, (3, 4)).to(N)
    assert s32.crow_indices().dtype == torch.int32
    assert_close(s32.to_dense(), want.to_dense())
    assert "sparse_csr" in repr(s) and "crow_indices" in repr(s)


@pytest.mark.parametrize("shape", SHAPES)
def test_to_dense_and_from_dense(shape):
    want = random_csr(shape)
    got = want.to(N)
    assert_close(got.to_dense(), want.to_dense(), rtol=0, atol=0)
    d = want.to_dense()
    assert_csr_equal(d.to(N).to_sparse_csr(), d.to_sparse_csr())
    assert_csr_equal(d.to(N).to_sparse(layout=torch.sparse_csr), d.to_sparse_csr())


def test_duplicates_and_empty():
    # a non-canonical CSR matrix (a column twice in a row): to_dense adds them
    want = torch.sparse_csr_tensor(torch.tensor([0, 3, 3, 4]), torch.tensor([1, 1, 0, 2]),
                                   torch.tensor([1., 2., 3., 4.]), (3, 3))
    assert_close(want.to(N).to_dense(), want.to_dense())
    x = torch.randn(3, 2)
    assert_close(torch.mm(want.to(N), x.to(N)), torch.mm(want, x))
    e = torch.zeros(4, 3).to_sparse_csr()
    assert_csr_equal(torch.zeros(4, 3, device=N).to_sparse_csr(), e)
    assert_close(e.to(N).to_dense(), e.to_dense())
    assert_close(torch.mm(e.to(N), torch.ones(3, 2, device=N)), torch.zeros(4, 2))


@pytest.mark.parametrize("shape", SHAPES)
def test_coo_conversions(shape):
    want = random_csr(shape, seed=1)
    coo = want.to(N).to_sparse()
    ref = want.to_sparse()
    assert coo.layout == torch.sparse_coo and coo.is_coalesced()
    assert torch.equal(coo._indices().cpu(), ref.coalesce()._indices())
    assert_close(coo._values(), ref.coalesce()._values())
    # COO -> CSR, from an uncoalesced operand with duplicates
    i = torch.tensor([[2, 0, 2, 1, 0], [1, 3, 1, 0, 0]])
    c = torch.sparse_coo_tensor(i, torch.tensor([1., 2., 3., 4., 5.]), (4, 4))
    assert_csr_equal(c.to(N).to_sparse_csr(), c.to_sparse_csr())
    assert_csr_equal(ref.to(N).to_sparse_csr(), ref.to_sparse_csr())


@pytest.mark.parametrize("shape", SHAPES)
def test_mm_forms(shape):
    a = random_csr(shape, seed=2)
    x = torch.randn(shape[1], 3)
    an, xn = a.to(N), x.to(N)
    want = torch.mm(a, x)
    assert_close(torch.mm(an, xn), want)
    assert_close(torch.sparse.mm(an, xn), torch.sparse.mm(a, x))
    assert_close(an @ xn, a @ x)
    assert_close(torch.matmul(an, xn), want)
    bias = torch.randn(shape[0], 3)
    assert_close(torch.addmm(bias.to(N), an, xn, beta=0.5, alpha=2.0),
                 torch.addmm(bias, a, x, beta=0.5, alpha=2.0))
    assert_close(torch.addmm(bias.to(N), an, xn), torch.addmm(bias, a, x))
    out = torch.empty(shape[0], 3, device=N)
    torch.mm(an, xn, out=out)
    assert_close(out, want)
    # dense @ csr
    y = torch.randn(2, shape[0])
    assert_close(torch.mm(y.to(N), an), torch.mm(y, a))
    # matrix-vector
    v = torch.randn(shape[1])
    assert_close(an @ v.to(N), a @ v)
    assert_close(torch.mv(an, v.to(N)), torch.mv(a, v))


def test_mm_backward_to_dense():
    a = random_csr((6, 5), seed=3)
    x = torch.randn(5, 4, requires_grad=True)
    xn = x.detach().to(N).requires_grad_()
    (torch.mm(a, x) ** 2).sum().backward()
    (torch.mm(a.to(N), xn) ** 2).sum().backward()
    assert_close(xn.grad, x.grad)
    v = torch.randn(5, requires_grad=True)
    vn = v.detach().to(N).requires_grad_()
    (a @ v).sum().backward()
    (a.to(N) @ vn).sum().backward()
    assert_close(vn.grad, v.grad)


def test_mm_backward_to_csr_values():
    a = random_csr((6, 5), seed=4).requires_grad_()
    an = a.detach().to(N).requires_grad_()
    x = torch.randn(5, 3)
    (torch.mm(a, x) ** 2).sum().backward()
    (torch.mm(an, x.to(N)) ** 2).sum().backward()
    # PyTorch's gradient of a CSR operand of mm is grad @ x.t(), the layout
    # the CPU gives (strided in PyTorch 2.6), with the same numbers
    assert an.grad.layout == a.grad.layout
    if a.grad.layout == torch.sparse_csr:
        assert_csr_equal(an.grad, a.grad)
    else:
        assert_close(an.grad, a.grad)


@pytest.mark.parametrize("beta,alpha", [(1.0, 1.0), (0.5, -2.0), (0.0, 1.0)])
def test_sampled_addmm(beta, alpha):
    s = random_csr((5, 4), seed=5)
    m1, m2 = torch.randn(5, 3), torch.randn(3, 4)
    want = torch.sparse.sampled_addmm(s, m1, m2, beta=beta, alpha=alpha)
    got = torch.sparse.sampled_addmm(s.to(N), m1.to(N), m2.to(N), beta=beta, alpha=alpha)
    assert_csr_equal(got, want)


@pytest.mark.parametrize("reduce", ["sum", "mean", "amax", "amin"])
def test_mm_reduce(reduce):
    a = random_csr((6, 5), seed=7)  # row 1 empty
    x = torch.randn(5, 3)
    assert_close(torch.sparse.mm(a.to(N), x.to(N), reduce), torch.sparse.mm(a, x, reduce))


def test_gcn_layer_csr():
    """A graph convolution over a CSR adjacency built on the card, trained a
    few steps like on the CPU."""
    g = torch.Generator().manual_seed(0)
    n, f, h = 30, 8, 4
    edges = torch.randint(0, n, (2, 90), generator=g)
    adj = torch.sparse_coo_tensor(edges, torch.ones(90), (n, n)).coalesce()
    feats = torch.randn(n, f, generator=g)
    w0 = torch.randn(f, h, generator=g) * 0.3

    def train(device):
        a = adj.to(device).to_sparse_csr()
        w = w0.clone().to(device).requires_grad_()
        x = feats.to(device)
        losses = []
        for _ in range(3):
            loss = (torch.sparse.mm(a, x @ w).relu() ** 2).mean()
            loss.backward()
            with torch.no_grad():
                w -= 0.1 * w.grad
                w.grad = None
            losses.append(loss.item())
        return losses, w.detach()

    lc, wc = train("cpu")
    ln, wn = train(N)
    assert lc == pytest.approx(ln, rel=1e-4)
    assert_close(wn, wc)


LOUD = {
    "aten::sin": lambda s: torch.sin(s),
    "aten::sin_": lambda s: s.sin_(),
    "aten::add.Tensor": lambda s: s + s,
    "aten::mul.Tensor": lambda s: s * 2,
    "aten::sum": lambda s: s.sum(),
    "two sparse matrices": lambda s: torch.mm(s, s.t()),
    "batch or dense dims": lambda s: torch.stack([s.cpu().to_dense()] * 2).to_sparse_csr()
                                         .to(N).to_dense(),
    "to_sparse_csr of a 3-D": lambda s: torch.zeros(2, 3, 4, device=N).to_sparse_csr(),
    "_to_sparse_bsr": lambda s: s.to_sparse_bsr((1, 1)),
    "_to_sparse_csc": lambda s: torch.zeros(3, 4, device=N).to_sparse_csc(),
    "_sparse_mm_reduce_impl_backward": lambda s: torch.sparse.mm(
        s, torch.ones(4, 2, device=N, requires_grad=True), "sum").sum().backward(),
}


@pytest.mark.parametrize("what", list(LOUD))
def test_unsupported_names_op_and_layout(what):
    s = random_csr((4, 4), seed=6).to(N)
    with pytest.raises(NotImplementedError) as e:
        LOUD[what](s)
    assert what in str(e.value) and "sparse_c" in str(e.value)

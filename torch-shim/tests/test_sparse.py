# SPDX-License-Identifier: MIT
"""Sparse COO tensors on the card (csrc/aten/SparseTensor.cpp,
SparseTensorMath.cpp; docs/sparse.md) against the CPU: construction, .to()
and .cpu(), inspection, coalesce, to_dense and to_sparse, copies, the
sparse x dense products with their backward (to the dense operand and to
the sparse one), sums, add into a dense tensor (SGD with
Embedding(sparse=True)), scaling; uncoalesced operands with duplicates
and empty (nnz 0) ones; the GCN example trained on both; and the loud
errors of what has no kernel. The conftest fails a test in which anything
ran on the CPU fallback."""
import os
import sys

import pytest
import torch

from conftest import assert_close

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples"))
import gcn  # noqa: E402

N = "neuron"


def random_coo(shape, nnz, sparse_dim=None, seed=0, dtype=torch.float32):
    """A CPU sparse COO tensor with duplicate positions (uncoalesced)."""
    g = torch.Generator().manual_seed(seed)
    sparse_dim = len(shape) if sparse_dim is None else sparse_dim
    idx = torch.stack([torch.randint(0, s, (nnz,), generator=g) for s in shape[:sparse_dim]])
    if nnz > 1:
        idx[:, -1] = idx[:, 0]  # at least one duplicate
    vals = torch.randn((nnz,) + tuple(shape[sparse_dim:]), generator=g).to(dtype)
    return torch.sparse_coo_tensor(idx.reshape(sparse_dim, nnz), vals, shape)


def empty_coo(shape):
    return torch.sparse_coo_tensor(torch.zeros(len(shape), 0, dtype=torch.long),
                                   torch.zeros(0), shape)


def assert_sparse_equal(got, want, **kw):
    """Same layout, size, flags, indices (exactly) and values."""
    assert got.device.type == "neuron" and got.layout == torch.sparse_coo
    assert got.shape == want.shape
    assert (got.sparse_dim(), got.dense_dim()) == (want.sparse_dim(), want.dense_dim())
    assert got.is_coalesced() == want.is_coalesced()
    assert torch.equal(got._indices().cpu(), want._indices())
    assert_close(got._values(), want._values(), **kw)


CASES = [((6, 5), 12, None), ((4, 3, 5), 10, None), ((5, 4, 3), 7, 2), ((6, 5), 1, None)]


def test_construct_to_and_back():
    i = torch.tensor([[0, 1, 1, 0, 2], [2, 0, 2, 2, 1]])
    v = torch.tensor([1., 2., 3., 4., 5.])
    s = torch.sparse_coo_tensor(i, v, (3, 4), device=N)
    assert s.device.type == N and s.layout == torch.sparse_coo
    assert s._indices().device.type == N and s._values().device.type == N
    assert (s._nnz(), s.sparse_dim(), s.dense_dim(), s.is_coalesced()) == (5, 2, 0, False)
    assert torch.equal(s._indices().cpu(), i) and torch.equal(s._values().cpu(), v)
    cpu = torch.sparse_coo_tensor(i, v, (3, 4))
    moved = cpu.to(N)
    assert_sparse_equal(moved, cpu)
    back = moved.cpu()
    assert back.layout == torch.sparse_coo and back.device.type == "cpu"
    assert torch.equal(back._indices(), i) and torch.equal(back._values(), v)
    # the size inferred from the indices, on the card
    assert torch.sparse_coo_tensor(i.to(N), v.to(N)).shape == (3, 3)
    # check_invariants runs its checks on the card
    assert torch.sparse_coo_tensor(i, v, (3, 4), device=N, check_invariants=True)._nnz() == 5
    with pytest.raises(RuntimeError, match="size is inconsistent with indices"):
        torch.sparse_coo_tensor(i, v, (2, 4), device=N, check_invariants=True)


def test_indices_values_need_coalesced():
    s = random_coo((6, 5), 12)
    with pytest.raises(RuntimeError, match="uncoalesced"):
        s.to(N).values()
    c = s.coalesce()
    assert torch.equal(c.to(N).indices().cpu(), c.indices())
    assert_close(c.to(N).values(), c.values())


@pytest.mark.parametrize("shape,nnz,sparse_dim", CASES)
def test_coalesce(shape, nnz, sparse_dim):
    s = random_coo(shape, nnz, sparse_dim)
    got = s.to(N).coalesce()
    assert_sparse_equal(got, s.coalesce())
    assert got.coalesce() is got  # coalesce() of a coalesced tensor is itself


@pytest.mark.parametrize("shape,nnz,sparse_dim", CASES)
def test_to_dense(shape, nnz, sparse_dim):
    s = random_coo(shape, nnz, sparse_dim)
    assert_close(s.to(N).to_dense(), s.to_dense())


def test_to_dense_dtypes():
    s = random_coo((5, 4), 9)
    assert torch.equal(s.long().to(N).to_dense().cpu(), s.long().to_dense())
    assert_close(s.to(torch.bfloat16).to(N).to_dense(), s.to(torch.bfloat16).to_dense(),
                 dtype=torch.bfloat16)


@pytest.mark.parametrize("sparse_dim", [None, 1, 2])
def test_to_sparse(sparse_dim):
    x = torch.randn(5, 4, 3)
    x[x.abs() < 0.8] = 0
    x[1] = 0
    args = () if sparse_dim is None else (sparse_dim,)
    assert_sparse_equal(x.to(N).to_sparse(*args), x.to_sparse(*args))
    z = torch.zeros(3, 4)
    assert_sparse_equal(z.to(N).to_sparse(), z.to_sparse())


def test_clone_copy_zeros_resize():
    s = random_coo((6, 5), 12)
    sn = s.to(N)
    assert_sparse_equal(sn.clone(), s.clone())
    dst = torch.sparse_coo_tensor(size=(6, 5), device=N)
    dst.copy_(sn)
    assert_sparse_equal(dst, s)
    dst2 = torch.sparse_coo_tensor(size=(6, 5), device=N)
    dst2.copy_(s)  # from the CPU
    assert_sparse_equal(dst2, s)
    assert_sparse_equal(torch.zeros_like(sn), torch.zeros_like(s))
    assert_sparse_equal(torch.zeros(3, 3, layout=torch.sparse_coo, device=N),
                        torch.zeros(3, 3, layout=torch.sparse_coo))
    r = sn.clone().sparse_resize_and_clear_((7, 7), 2, 0)
    assert r.shape == (7, 7) and r._nnz() == 0
    c = sn.clone()._coalesced_(True)
    assert c.is_coalesced()


def test_empty():
    e = empty_coo((3, 4))
    en = e.to(N)
    assert en._nnz() == 0
    assert_sparse_equal(en.coalesce(), e.coalesce())
    assert_close(en.to_dense(), e.to_dense())
    d = torch.randn(4, 5)
    assert_close(torch.sparse.mm(en, d.to(N)), torch.sparse.mm(e, d))
    assert_close(torch.sparse.sum(en), torch.sparse.sum(e))
    x = torch.randn(3, 4)
    assert_close(x.to(N).add_(en), x + e)


def products(s, d, bias):
    return {
        "sparse.mm": lambda: torch.sparse.mm(s, d),
        "mm": lambda: torch.mm(s, d),
        "matmul": lambda: s @ d,
        "addmm": lambda: torch.addmm(bias, s, d),
        "addmm_scaled": lambda: torch.addmm(bias, s, d, beta=0.5, alpha=-2.0),
        "dense_mm_sparse": lambda: torch.mm(d.t(), s.t()),
    }


@pytest.mark.parametrize("op", list(products(None, None, None)))
@pytest.mark.parametrize("nnz", [0, 1, 40])
def test_products_and_backward(op, nnz):
    s = random_coo((7, 6), nnz) if nnz else empty_coo((7, 6))
    d, bias = torch.randn(6, 5), torch.randn(5)
    dc, dn = d.clone().requires_grad_(), d.to(N).requires_grad_()
    want = products(s, dc, bias)[op]()
    got = products(s.to(N), dn, bias.to(N))[op]()
    assert_close(got, want)
    g = torch.randn(want.shape)
    want.backward(g)
    got.backward(g.to(N))
    assert_close(dn.grad, dc.grad)


def test_addmm_beta_zero_ignores_nan():
    s, d = random_coo((4, 3), 6), torch.randn(3, 2)
    bias = torch.full((4, 2), float("nan"))
    assert_close(torch.addmm(bias.to(N), s.to(N), d.to(N), beta=0),
                 torch.addmm(bias, s, d, beta=0))


def test_grad_of_sparse_operand():
    """sparse.mm's gradient for the sparse matrix: sparse_mask of the dense
    gradient, at the (coalesced) positions of the operand."""
    s, d = random_coo((5, 4), 9).coalesce(), torch.randn(4, 3)
    sc, sn = s.clone().requires_grad_(), s.to(N).requires_grad_()
    torch.sparse.mm(sc, d).sum().backward()
    torch.sparse.mm(sn, d.to(N)).sum().backward()
    assert_sparse_equal(sn.grad.coalesce(), sc.grad.coalesce())
    # to_dense's gradient to the values of an uncoalesced tensor
    u = random_coo((5, 4), 9)
    vc = u._values().clone().requires_grad_()
    vn = u._values().to(N).requires_grad_()
    w = torch.randn(5, 4)
    (torch.sparse_coo_tensor(u._indices(), vc, u.shape).to_dense() * w).sum().backward()
    (torch.sparse_coo_tensor(u._indices().to(N), vn, u.shape).to_dense() * w.to(N)
     ).sum().backward()
    assert_close(vn.grad, vc.grad)


@pytest.mark.parametrize("shape,nnz,sparse_dim", CASES)
def test_sparse_sum(shape, nnz, sparse_dim):
    s = random_coo(shape, nnz, sparse_dim)
    sn = s.to(N)
    assert_close(torch.sparse.sum(sn), torch.sparse.sum(s))
    assert_close(sn.sum(), s.sum())
    for dim in [0, 1, (0, 1), -1]:
        got, want = torch.sparse.sum(sn, dim), torch.sparse.sum(s, dim)
        if want.is_sparse:
            assert_sparse_equal(got, want)
        else:
            assert_close(got, want)


@pytest.mark.parametrize("shape,nnz,sparse_dim", CASES)
def test_sparse_sum_backward(shape, nnz, sparse_dim):
    s = random_coo(shape, nnz, sparse_dim)
    for dim in [0, 1, (0, 1), -1, tuple(range(len(shape)))]:
        grads = []
        for dev in ("cpu", N):
            leaf = s.detach().to(dev).requires_grad_()
            out = torch.sparse.sum(leaf, dim)
            out = out.to_dense() if out.is_sparse else out
            w = torch.arange(out.numel(), dtype=out.dtype).reshape(out.shape) - 2.5
            (out * w.to(dev)).sum().backward()
            grads.append(leaf.grad)
        assert grads[1].layout == torch.sparse_coo
        assert_close(grads[1].to_dense(), grads[0].to_dense())


def test_add():
    s = random_coo((6, 5), 12)
    x = torch.randn(6, 5)
    assert_close(x.to(N).add_(s.to(N), alpha=-0.25), x.clone().add_(s, alpha=-0.25))
    assert_close(x.to(N) + s.to(N), x + s)
    assert_close(torch.add(x.to(N), s.to(N), alpha=3), torch.add(x, s, alpha=3))
    t = random_coo((6, 5), 7, seed=1)
    for a, b in [(s, t), (s.coalesce(), t.coalesce())]:
        got, want = a.to(N) + b.to(N), a + b
        assert got.is_coalesced() == want.is_coalesced()
        assert_sparse_equal(got.coalesce(), want.coalesce())
    with pytest.raises(RuntimeError, match=r"add\(sparse, dense\) is not supported"):
        torch.add(s.to(N), x.to(N))
    # an integer sparse tensor into a float dense one; not the reverse
    assert_close(x.to(N).add_(s.long().to(N)), x.clone().add_(s.long()))
    with pytest.raises(RuntimeError, match="can't cast"):
        x.long().to(N).add_(s.to(N))


def test_scale():
    s = random_coo((6, 5), 12)
    sn = s.to(N)
    for got, want in [(sn * 2.5, s * 2.5), (3 * sn, 3 * s), (sn / 4, s / 4), (-sn, -s)]:
        assert_sparse_equal(got, want)


@pytest.mark.parametrize("shape,nnz,sparse_dim", CASES)
def test_mul_dense(shape, nnz, sparse_dim):
    s = random_coo(shape, nnz, sparse_dim)
    d = torch.randn(shape)
    for sp in (s, s.coalesce()):
        got, want = sp.to(N) * d.to(N), sp * d
        assert got.is_sparse == want.is_sparse
        if want.is_sparse:
            assert_sparse_equal(got.coalesce(), want.coalesce())
        else:
            assert_close(got, want)
        assert_close((d.to(N) * sp.to(N)).to_dense(), (d * sp).to_dense())


UNARY = ["abs", "sqrt", "sin", "tan", "tanh", "sinh", "asin", "asinh", "atan", "atanh",
         "expm1", "log1p", "sign", "sgn", "trunc", "floor", "ceil", "round", "erf", "erfinv",
         "deg2rad", "rad2deg", "relu"]


@pytest.mark.parametrize("name", UNARY)
def test_unary_on_values(name):
    """Functions with f(0) = 0: on the coalesced values (duplicates summed
    first), as the CPU computes them."""
    s = random_coo((6, 5), 12)
    s = torch.sparse_coo_tensor(s._indices(), s._values() * 0.3, s.shape)  # mostly in (-1, 1)
    got, want = getattr(torch, name)(s.to(N)), getattr(torch, name)(s)
    assert_sparse_equal(got, want)


def test_embedding_sparse_sgd():
    """nn.Embedding(sparse=True): the gradient is a sparse COO tensor (with
    duplicates), SGD adds it into the weight (add_ of a sparse tensor)."""
    weights = {}
    for dev in ("cpu", N):
        torch.manual_seed(1)
        emb = torch.nn.Embedding(20, 4, sparse=True).to(dev)
        opt = torch.optim.SGD(emb.parameters(), lr=0.1)
        for step in range(4):
            opt.zero_grad()
            x = torch.tensor([[1, 2, 2, 7], [5, 1, 19, step]], device=dev)
            emb(x).pow(2).sum().backward()
            assert emb.weight.grad.layout == torch.sparse_coo
            opt.step()
        weights[dev] = emb.weight.detach()
    assert_close(weights[N], weights["cpu"])


SPARSE_OPTIMIZERS = [
    (torch.optim.SGD, dict(lr=0.1, momentum=0.9)),
    (torch.optim.SGD, dict(lr=0.1, momentum=0.9, nesterov=True)),
    (torch.optim.Adagrad, dict(lr=0.1)),
    (torch.optim.SparseAdam, dict(lr=0.1)),
]


@pytest.mark.parametrize("opt_cls,kw", SPARSE_OPTIMIZERS,
                         ids=[f"{c.__name__}-{i}" for i, (c, _) in enumerate(SPARSE_OPTIMIZERS)])
def test_embedding_sparse_optimizers(opt_cls, kw):
    """The optimizers that take sparse gradients: SGD's momentum buffer
    (mul_ and add_ of sparse tensors), Adagrad (sparse_mask of its dense
    state), SparseAdam (coalesce, sparse_mask, values)."""
    weights = {}
    for dev in ("cpu", N):
        torch.manual_seed(1)
        emb = torch.nn.Embedding(20, 4, sparse=True).to(dev)
        opt = opt_cls(emb.parameters(), **kw)
        for step in range(4):
            opt.zero_grad()
            emb(torch.tensor([[1, 2, 2, 7], [5, 1, 19, step]], device=dev)).pow(2).sum().backward()
            opt.step()
        weights[dev] = emb.weight.detach()
    assert_close(weights[N], weights["cpu"])


def test_embedding_sparse_grad_accumulates():
    """Two backward passes without zero_grad: the sparse gradients add."""
    grads = {}
    for dev in ("cpu", N):
        torch.manual_seed(2)
        emb = torch.nn.Embedding(10, 3, sparse=True).to(dev)
        for ids in ([1, 2, 2], [2, 9]):
            emb(torch.tensor(ids, device=dev)).sum().backward()
        grads[dev] = emb.weight.grad
    assert_close(grads[N].to_dense(), grads["cpu"].to_dense())


def test_gcn_example_compare(monkeypatch, capsys):
    """examples/gcn.py --compare on a small graph: CPU and neuron losses
    within rtol 1e-4 (exit status 0), and the loss goes down."""
    monkeypatch.setattr(sys, "argv", ["gcn.py", "--compare", "--steps", "6", "--nodes", "300",
                                      "--edges", "1200", "--features", "64", "--classes", "4"])
    assert gcn.main() == 0
    out = capsys.readouterr().out
    assert "largest relative difference" in out and "FAIL" not in out
    losses = [float(line.split()[-1]) for line in out.splitlines() if line.startswith("step")]
    assert len(losses) == 4 and losses[1] < losses[0]  # steps 0 and 5, CPU then neuron


def test_unsupported_fails_loudly():
    s = random_coo((6, 5), 12).to(N)
    with pytest.raises(NotImplementedError, match=r"aten::cos.*sparse COO.*torch\.sparse_coo"):
        torch.cos(s)  # cos(0) = 1: not a sparse result
    with pytest.raises(NotImplementedError, match="index_select.*sparse_coo"):
        s.index_select(0, torch.tensor([0], device=N))
    with pytest.raises(NotImplementedError, match="mm of two sparse"):
        torch.mm(s, s.t())
    with pytest.raises(NotImplementedError, match="1 dense dims"):
        torch.sparse.mm(random_coo((4, 3, 2), 5, 2).to(N), torch.randn(3, 2, device=N))
    with pytest.raises(NotImplementedError, match="mul of a sparse"):
        s * s
    x = torch.randn(3, 4, device=N)
    with pytest.raises(NotImplementedError, match="_to_sparse_csc.*compressed"):
        x.to_sparse_csc()
    with pytest.raises(NotImplementedError, match="to_sparse to layout"):
        x.to_sparse(layout=torch.sparse_bsr, blocksize=(1, 1))
    # CSR matrices have kernels (test_sparse_csr.py); a CSC tensor is made on
    # neuron (ATen's device-generic constructor), then few operators take it
    csr = torch.sparse_csr_tensor(torch.tensor([0, 1, 2]), torch.tensor([0, 1]),
                                  torch.tensor([1., 2.]))
    for t in (csr.to_sparse_csc().to(N),):
        with pytest.raises(NotImplementedError, match="to_sparse_csr of a torch.sparse_csc"):
            t.to_sparse_csr()
        with pytest.raises(NotImplementedError, match="sin.*compressed sparse"):
            t.sin()


def s34():
    i = torch.tensor([[0, 1, 1, 0, 2], [2, 0, 2, 2, 1]])
    return torch.sparse_coo_tensor(i, torch.tensor([1., 2., 3., 4., 5.]), (3, 4)).to(N)


LOUD = {
    "aten::exp": lambda s: torch.exp(s),
    "aten::sin_": lambda s: s.sin_(),
    "aten::pow.Tensor_Scalar": lambda s: s.pow(2),
    "aten::narrow_copy": lambda s: s.narrow_copy(0, 0, 1),
    "aten::cat": lambda s: torch.cat([s, s]),
    "mul of a sparse": lambda s: s * torch.randn(4, device=N),
    "add_ of a dense tensor into a sparse": lambda s: s.clone().add_(torch.ones(3, 4, device=N)),
    "aten::_sparse_sparse_matmul": lambda s: torch.sparse.mm(s, s.t()),
    "aten::bmm": lambda s: torch.bmm(torch.stack([s.cpu(), s.cpu()]).to(N),
                                     torch.randn(2, 4, 2, device=N)),
    "aten::hspmm": lambda s: torch.hspmm(s, torch.randn(4, 2, device=N)),
    "aten::_sparse_mm_reduce_impl": lambda s: torch.sparse.mm(s, torch.randn(4, 2, device=N),
                                                              "sum"),
    "addmm with a sparse 'self'": lambda s: torch.addmm(s, s, torch.randn(4, 4, device=N)),
    "aten::_sparse_softmax": lambda s: torch.sparse.softmax(s, 1),
    "to_sparse of a 0-dim": lambda s: torch.tensor(3., device=N).to_sparse(),
}


@pytest.mark.parametrize("what", list(LOUD))
def test_unsupported_names_op_and_layout(what):
    with pytest.raises(NotImplementedError) as e:
        LOUD[what](s34())
    assert what in str(e.value) and "torch.sparse_coo" in str(e.value)


def test_unsupported_under_fallback_error(monkeypatch):
    """Nothing sparse reaches the CPU fallback: under
    TORCH_NEURON_FALLBACK=error the errors are the same NotImplementedError."""
    monkeypatch.setenv("TORCH_NEURON_FALLBACK", "error")
    s = random_coo((6, 5), 12).to(N)
    with pytest.raises(NotImplementedError, match="sparse COO"):
        torch.exp(s)

# Owner(s): ["module: PrivateUse1"]
# SPDX-License-Identifier: MIT
"""Each operator on the card against the CPU: random inputs, broadcasting,
non-contiguous views, zero-size tensors, float32 and bfloat16."""
import pytest
import torch
import torch.nn.functional as F

from conftest import assert_close

N = "neuron"
DTYPES = [torch.float32, torch.bfloat16]


def both(*tensors):
    """The CPU tensors and their copies on the card."""
    return tensors, tuple(t.to(N) for t in tensors)


UNARY = {
    "neg": torch.neg, "abs": torch.abs, "exp": torch.exp, "sqrt": lambda x: torch.sqrt(x.abs()),
    "log": lambda x: torch.log(x.abs() + 0.1), "rsqrt": lambda x: torch.rsqrt(x.abs() + 0.1),
    "reciprocal": lambda x: torch.reciprocal(x + 10), "relu": torch.relu,
    "gelu": F.gelu, "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"), "silu": F.silu,
    "sigmoid": torch.sigmoid, "tanh": torch.tanh, "sin": torch.sin, "cos": torch.cos,
    "erf": torch.erf, "floor": torch.floor, "square": torch.square,
    "pow_scalar": lambda x: x.abs() ** 1.5,
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary(name, dtype):
    """Unary math and activations."""
    fn = UNARY[name]
    (x,), (xn,) = both(torch.randn(7, 33).to(dtype))
    assert_close(fn(xn), fn(x), dtype)
    # non-contiguous input
    assert_close(fn(xn.t()), fn(x.t()), dtype)


BINARY = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "div": lambda a, b: a / (b.abs() + 0.5), "add_alpha": lambda a, b: torch.add(a, b, alpha=-0.5),
    "maximum": torch.maximum, "minimum": torch.minimum,
    "pow": lambda a, b: a.abs() ** b, "rsub": lambda a, b: torch.rsub(a, b, alpha=2),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_broadcast(name, dtype):
    """Binary ops with broadcasting (a row, a column, a scalar tensor)."""
    fn = BINARY[name]
    (a, b, c, s), (an, bn, cn, sn) = both(torch.randn(5, 6).to(dtype),
                                          torch.randn(6).to(dtype),
                                          torch.randn(5, 1).to(dtype),
                                          torch.randn(()).to(dtype))
    assert_close(fn(an, bn), fn(a, b), dtype)
    assert_close(fn(an, cn), fn(a, c), dtype)
    assert_close(fn(an, sn), fn(a, s), dtype)
    assert_close(fn(an.t(), cn.t()), fn(a.t(), c.t()), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("alpha", [0, 1, 2, -0.5])
def test_rsub_scalar_alpha(alpha, dtype):
    """rsub(a, scalar, alpha) is scalar - alpha * a, for alpha = 0 too."""
    (a,), (an,) = both(torch.randn(4, 5).to(dtype))
    assert_close(torch.rsub(an, 2.0, alpha=alpha), torch.rsub(a, 2.0, alpha=alpha), dtype)
    assert_close(torch.rsub(an, an, alpha=alpha), torch.rsub(a, a, alpha=alpha), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_scalar_forms_inplace_out(dtype):
    """Python scalars, in-place and out= variants."""
    (a, b), (an, bn) = both(torch.randn(4, 5).to(dtype), torch.randn(4, 5).to(dtype))
    assert_close(an * 3 + 1.5, a * 3 + 1.5, dtype)
    assert_close(2 - an, 2 - a, dtype)
    assert_close(1 / (an.abs() + 1), 1 / (a.abs() + 1), dtype)
    x, xn = a.clone(), an.clone()
    x.add_(b, alpha=3).mul_(0.5).sub_(1)
    xn.add_(bn, alpha=3).mul_(0.5).sub_(1)
    assert_close(xn, x, dtype)
    out = torch.empty(4, 5, dtype=dtype, device=N)
    torch.mul(an, bn, out=out)
    assert_close(out, a * b, dtype)
    # out= of the wrong size is resized
    out = torch.empty(0, dtype=dtype, device=N)
    torch.add(an, bn, out=out)
    assert out.shape == (4, 5)


def test_integer_and_bool_ops():
    """int64 arithmetic, true division promotes, bool masks."""
    (a, b), (an, bn) = both(torch.randint(-50, 50, (10,)), torch.randint(1, 9, (10,)))
    assert torch.equal((an + bn * 3).cpu(), a + b * 3)
    assert (an / bn).dtype == torch.float32
    assert_close(an / bn, a / b)
    assert torch.equal((~(an > 0)).cpu(), ~(a > 0))
    assert torch.equal((~an).cpu(), ~a)


@pytest.mark.parametrize("op", ["eq", "ne", "lt", "le", "gt", "ge"])
def test_compare_where_masked_fill(op):
    """Comparisons to masks, where and masked_fill."""
    (a, b), (an, bn) = both(torch.randint(-3, 3, (6, 7)).float(), torch.randint(-3, 3, (7,)).float())
    m, mn = getattr(a, op)(b), getattr(an, op)(bn)
    assert mn.dtype == torch.bool
    assert torch.equal(mn.cpu(), m)
    assert torch.equal(getattr(an, op)(0.5).cpu(), getattr(a, op)(0.5))
    assert_close(torch.where(mn, an, bn), torch.where(m, a, b))
    assert_close(an.masked_fill(mn, -1e9), a.masked_fill(m, -1e9))


@pytest.mark.parametrize("dtype", DTYPES)
def test_reductions(dtype):
    """sum, mean, amax, max/argmax along dims, keepdim, all."""
    (x,), (xn,) = both(torch.randn(4, 5, 6).to(dtype))
    for dim in [0, 1, -1, (0, 2)]:
        for keep in [False, True]:
            assert_close(xn.sum(dim, keepdim=keep), x.sum(dim, keepdim=keep), dtype)
            assert_close(xn.mean(dim, keepdim=keep), x.mean(dim, keepdim=keep), dtype)
            assert_close(xn.amax(dim, keepdim=keep), x.amax(dim, keepdim=keep), dtype)
    assert_close(xn.sum(), x.sum(), dtype)
    v, i = xn.max(1)
    vc, ic = x.max(1)
    assert_close(v, vc, dtype)
    assert torch.equal(i.cpu(), ic)
    assert torch.equal(xn.argmax(-1).cpu(), x.argmax(-1))
    assert torch.equal(xn.argmax().cpu(), x.argmax())
    assert xn.sum().item() == pytest.approx(x.float().sum().item(), rel=2e-2, abs=1e-2)


def test_bincount():
    """bincount on the card (MoE routers count tokens per expert with it):
    counts of any integer type, minlength, float32 weights, an empty
    input; negative or 2-D inputs refused as on the CPU."""
    g = torch.Generator().manual_seed(5)
    x = torch.randint(0, 9, (500,), generator=g)
    w = torch.rand(500, generator=g)
    for t in (x, x.to(torch.uint8), x.int()):
        for minlength in (0, 4, 20):
            got = torch.bincount(t.to(N), minlength=minlength)
            assert got.dtype == torch.int64
            assert torch.equal(got.cpu(), torch.bincount(t, minlength=minlength))
    got = torch.bincount(x.to(N), weights=w.to(N))
    assert got.dtype == torch.float32
    assert_close(got, torch.bincount(x, weights=w))
    e = torch.empty(0, dtype=torch.long)
    assert torch.equal(torch.bincount(e.to(N), minlength=3).cpu(), torch.bincount(e, minlength=3))
    for bad in (torch.tensor([1, -1]), torch.tensor([[1]])):
        with pytest.raises(RuntimeError, match="non-negative integral"):
            torch.bincount(bad.to(N))


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.uint8, torch.bool])
def test_amax_amin_out(dtype):
    """amax and amin with out= (c10d's MIN/MAX fold of integer tensors calls
    them) on the card, as the CPU gives them."""
    (x,), (xn,) = both((torch.randn(4, 5, 6) * 30).to(dtype))
    for fn in (torch.amax, torch.amin):
        for dim in [0, (1, 2)]:
            want = fn(x, dim)
            out = torch.empty(want.shape, dtype=dtype, device=N)
            fn(xn, dim, out=out)
            assert torch.equal(out.cpu(), want), (fn, dim)


@pytest.mark.parametrize("dtype", DTYPES)
def test_logsumexp(dtype):
    """logsumexp is one LOGSUMEXP reduction per dim: dims, keepdim and all,
    large values, the infinities and NaN as the CPU gives them, an empty
    axis, integers, out=, and its backward."""
    (x,), (xn,) = both((torch.randn(4, 5, 6) * 30).to(dtype))
    for dim in [0, 1, -1, (0, 2), (0, 1, 2)]:
        for keep in [False, True]:
            assert_close(torch.logsumexp(xn, dim, keep), torch.logsumexp(x, dim, keep), dtype)
    inf, nan = float("inf"), float("nan")
    s = torch.tensor([[1.0, inf, 2.0], [-inf, -inf, -inf], [nan, 1.0, inf],
                      [-1e30, 1e30, 0.0], [inf, -inf, 3.0]])
    assert_close(torch.logsumexp(s.to(N), 1), torch.logsumexp(s, 1))
    e = torch.empty(3, 0)
    assert torch.equal(torch.logsumexp(e.to(N), 1).cpu(), torch.logsumexp(e, 1))
    i = torch.arange(12).view(3, 4)
    got = torch.logsumexp(i.to(N), 1)
    assert got.dtype == torch.float32
    assert_close(got, torch.logsumexp(i, 1))
    out = torch.empty(4, device=N, dtype=dtype)
    torch.logsumexp(xn, (1, 2), out=out)
    assert_close(out, torch.logsumexp(x, (1, 2)), dtype)
    with pytest.raises(RuntimeError, match="floating point"):
        torch.logsumexp(xn, 1, out=torch.empty(4, 6, device=N, dtype=torch.long))
    a = x.float().requires_grad_()
    an = a.detach().to(N).requires_grad_()
    torch.logsumexp(a, 1).pow(2).sum().backward()
    torch.logsumexp(an, 1).pow(2).sum().backward()
    assert_close(an.grad, a.grad)


@pytest.mark.parametrize("dtype", DTYPES)
def test_softmax(dtype):
    """softmax and log_softmax along each dim, with large values."""
    (x,), (xn,) = both((torch.randn(3, 4, 9) * 30).to(dtype))
    for dim in [0, 1, 2]:
        assert_close(F.softmax(xn, dim), F.softmax(x.float(), dim).to(dtype), dtype)
        assert_close(F.log_softmax(xn, dim), F.log_softmax(x.float(), dim).to(dtype), dtype,
                     atol=5e-2 if dtype == torch.bfloat16 else 1e-4)


@pytest.mark.parametrize("dtype", DTYPES)
def test_matmul_family(dtype):
    """mm, addmm (bias), bmm, matmul with broadcast batch, linear, transposes."""
    (a, b, bias, c, d), (an, bn, biasn, cn, dn) = both(
        torch.randn(9, 17).to(dtype), torch.randn(17, 5).to(dtype), torch.randn(5).to(dtype),
        torch.randn(3, 9, 17).to(dtype), torch.randn(3, 17, 4).to(dtype))
    assert_close(an @ bn, a @ b, dtype)
    assert_close(torch.addmm(biasn, an, bn), torch.addmm(bias, a, b), dtype)
    assert_close(torch.addmm(biasn, an, bn, beta=0.5, alpha=2), torch.addmm(bias, a, b, beta=0.5, alpha=2), dtype)
    assert_close(torch.bmm(cn, dn), torch.bmm(c, d), dtype)
    assert_close(cn @ bn, c @ b, dtype)
    assert_close(bn.t() @ an.t(), b.t() @ a.t(), dtype)
    assert_close(F.linear(an, bn.t(), biasn), F.linear(a, b.t(), bias), dtype)
    q, k = torch.randn(2, 3, 8, 4).to(dtype), torch.randn(2, 3, 8, 4).to(dtype)
    assert_close(q.to(N) @ k.to(N).transpose(-2, -1), q @ k.transpose(-2, -1), dtype)


def test_indexing():
    """index_select/embedding, gather, scatter_add, index_add, cat, stack."""
    (w, ids, src), (wn, idsn, srcn) = both(torch.randn(10, 4), torch.tensor([3, 0, 9, 3]),
                                           torch.randn(4, 4))
    assert_close(wn.index_select(0, idsn), w.index_select(0, ids))
    assert_close(F.embedding(idsn.view(2, 2), wn), F.embedding(ids.view(2, 2), w))
    g = torch.randint(0, 4, (10, 3))
    assert_close(wn.gather(1, g.to(N)), w.gather(1, g))
    assert_close(wn.scatter_add(1, g.to(N), torch.ones(10, 3, device=N)),
                 w.scatter_add(1, g, torch.ones(10, 3)))
    assert_close(wn.index_add(0, idsn, srcn), w.index_add(0, ids, src))
    assert_close(torch.cat([wn, wn[:2]], 0), torch.cat([w, w[:2]], 0))
    assert_close(torch.stack([wn, wn * 2], 1), torch.stack([w, w * 2], 1))
    assert_close(torch.cat([wn.t(), srcn], 1), torch.cat([w.t(), src], 1))


def test_losses_and_norms():
    """cross_entropy (with ignore_index, weights), nll_loss, layer_norm."""
    (x, t, wt), (xn, tn, wtn) = both(torch.randn(8, 5), torch.tensor([0, 4, 2, -100, 1, 1, 3, 0]),
                                     torch.rand(5))
    for red in ["mean", "sum", "none"]:
        assert_close(F.cross_entropy(xn, tn, reduction=red), F.cross_entropy(x, t, reduction=red))
        assert_close(F.cross_entropy(xn, tn, weight=wtn, reduction=red),
                     F.cross_entropy(x, t, weight=wt, reduction=red))
    (y, w, b), (yn, wn, bn) = both(torch.randn(3, 4, 16), torch.randn(16), torch.randn(16))
    assert_close(F.layer_norm(yn, (16,), wn, bn), F.layer_norm(y, (16,), w, b), atol=1e-4)
    assert_close(F.layer_norm(yn, (4, 16)), F.layer_norm(y, (4, 16)), atol=1e-4)


def test_creation_and_copies():
    """zeros/ones/full/arange on the card; copies in every direction; casts."""
    assert torch.equal(torch.zeros(3, 2, device=N).cpu(), torch.zeros(3, 2))
    assert torch.equal(torch.full((2, 2), 7.5, device=N).cpu(), torch.full((2, 2), 7.5))
    assert torch.equal(torch.arange(2, 20, 3, device=N).cpu(), torch.arange(2, 20, 3))
    x = torch.randn(5, 6)
    xn = x.to(N)
    assert torch.equal(xn.to(torch.bfloat16).cpu(), x.to(torch.bfloat16))
    assert torch.equal(xn.to(torch.bfloat16).float().cpu(), x.to(torch.bfloat16).float())
    assert torch.equal((xn.double() + 1).cpu(), x.double() + 1)
    assert torch.equal(xn.t().contiguous().cpu(), x.t().contiguous())
    y = torch.empty(6, 5, device=N)
    y.copy_(x.t())
    assert torch.equal(y.cpu(), x.t())
    assert xn[2, 3].item() == x[2, 3].item()
    assert torch.equal(x.to(torch.float64).to(N).cpu(), x)


def test_zero_size():
    """Zero-size tensors go through every kind of op."""
    e = torch.randn(0, 4, device=N)
    assert (e + 1).shape == (0, 4)
    assert e.sum(0).cpu().tolist() == [0.0] * 4
    assert (e @ torch.randn(4, 3, device=N)).shape == (0, 3)
    assert torch.cat([e, torch.ones(2, 4, device=N)]).shape == (2, 4)
    assert F.softmax(e, 1).shape == (0, 4)


def test_empty_inner_dim():
    """A product over an empty inner dimension is 0 (+ bias, + beta * self);
    a reduction over an empty dim gives its identity. The empty operands own
    no memory: the card must not need any (libneuron crashed on addmm)."""
    cases = {
        "addmm": lambda d: torch.addmm(torch.arange(12.0, device=d).view(3, 4),
                                       torch.zeros(3, 0, device=d), torch.zeros(0, 4, device=d),
                                       beta=2.5),
        "addmm_bias": lambda d: torch.addmm(torch.arange(4.0, device=d), torch.zeros(3, 0, device=d),
                                            torch.zeros(0, 4, device=d)),
        "mm": lambda d: torch.zeros(3, 0, device=d) @ torch.zeros(0, 4, device=d),
        "baddbmm": lambda d: torch.baddbmm(torch.ones(2, 3, 4, device=d),
                                           torch.zeros(2, 3, 0, device=d),
                                           torch.zeros(2, 0, 4, device=d)),
        "linear": lambda d: F.linear(torch.zeros(3, 0, device=d), torch.zeros(4, 0, device=d),
                                     torch.arange(4.0, device=d)),
        "addmv": lambda d: torch.addmv(torch.ones(3, device=d), torch.zeros(3, 0, device=d),
                                       torch.zeros(0, device=d)),
        "sum": lambda d: torch.zeros(3, 0, device=d).sum(1),
        "prod": lambda d: torch.zeros(3, 0, device=d).prod(1),
        "mean": lambda d: torch.zeros(3, 0, device=d).mean(1),
        "layer_norm": lambda d: F.layer_norm(torch.zeros(3, 0, device=d), (0,)),
        "cdist": lambda d: torch.cdist(torch.zeros(3, 0, device=d), torch.zeros(2, 0, device=d)),
    }
    for name, fn in cases.items():
        want, got = fn("cpu"), fn(N).cpu()
        assert got.shape == want.shape, name
        assert torch.equal(got.nan_to_num(7.0), want.nan_to_num(7.0)), name
    # Indexing an empty dim is an error, as on the CPU (not a result unwritten).
    for d in ("cpu", N):
        with pytest.raises(RuntimeError, match="out of bounds"):
            torch.gather(torch.zeros(3, 0, device=d), 1, torch.zeros(3, 1, dtype=torch.long,
                                                                  device=d))
            torch.neuron.synchronize()


def test_indexing_scalars_and_high_rank():
    """gather and scatter_add of 0-dim tensors (the card had refused them
    after the fact), and of six dims (one instruction per leading index)."""
    for d in ("cpu", N):
        x, i = torch.tensor(2.5, device=d), torch.tensor(0, device=d)
        assert torch.gather(x, 0, i).item() == 2.5
        assert torch.gather(x, 0, i.view(1)).tolist() == [2.5]
        assert torch.scatter_add(x, 0, i, torch.tensor(1.0, device=d)).item() == 3.5
    x = torch.randn(2, 3, 1, 2, 2, 5)
    i = torch.randint(0, 5, (2, 2, 1, 2, 2, 3))
    assert torch.equal(torch.gather(x.to(N), -1, i.to(N)).cpu(), torch.gather(x, -1, i))
    src = torch.randn(2, 2, 1, 2, 2, 3)
    assert_close(torch.scatter_add(x.to(N), 5, i.to(N), src.to(N)),
                 torch.scatter_add(x, 5, i, src))
    q = torch.randn(3, 2, 1, 2)
    assert_close(torch.quantile(q.to(N), 0.5, dim=0, keepdim=True),
                 torch.quantile(q, 0.5, dim=0, keepdim=True))


def test_printing():
    """A neuron tensor prints like any other, with its device."""
    s = repr(torch.arange(3.0, device=N))
    assert "tensor([0., 1., 2.]" in s and "neuron:0" in s


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16, torch.float16])
def test_pow_two_is_the_cpus_square(dtype):
    """x ** 2 of a real floating tensor runs as x * x: bit for bit the CPU's
    (which multiplies too), special values, in place and out= included."""
    x = torch.cat([torch.randn(1000) * 1e3,
                   torch.tensor([0.0, -0.0, float("inf"), -float("inf"), float("nan"),
                                 1e-30, -3e30, 65504.0, 300.0])]).to(dtype)
    xn = x.to(N)
    for e in (2, 2.0):
        torch.testing.assert_close(torch.pow(xn, e).cpu(), torch.pow(x, e), rtol=0, atol=0,
                                   equal_nan=True)
    y = xn.clone()
    y.pow_(2)
    torch.testing.assert_close(y.cpu(), x.pow(2), rtol=0, atol=0, equal_nan=True)
    out = torch.empty_like(xn)
    torch.pow(xn, 2, out=out)
    torch.testing.assert_close(out.cpu(), x.pow(2), rtol=0, atol=0, equal_nan=True)
    # an integer tensor's square stays integer, a float exponent 2.0 gives float
    i = torch.arange(-5, 5)
    assert torch.pow(i.to(N), 2).dtype == torch.int64
    assert torch.equal(torch.pow(i.to(N), 2).cpu(), i.pow(2))
    assert torch.pow(i.to(N), 2.0).dtype == torch.pow(i, 2.0).dtype

# SPDX-License-Identifier: MIT
"""The scatter/index family on the card (NISA_INSN_SCATTER and the
compositions over it) against the CPU: scatter (src, value, reduce),
scatter_reduce (every reduction, include_self, duplicates, integers),
index_copy/index_fill/index_reduce, advanced indexing (x[i, j], x[:, i],
non-adjacent indices, negative indices, index_put_ with accumulate), take,
put_, max_unpool2d/3d, channel_shuffle, cdist/pdist with their backward,
and out-of-range indices failing loudly instead of wrapping."""
import pytest
import torch
import torch.nn.functional as F

from conftest import assert_close

N = "neuron"
REDUCES = ["sum", "prod", "mean", "amax", "amin"]


def dup_index(shape, n, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, n, shape, generator=g)


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_scatter_src_value_reduce(dim):
    x, src = torch.randn(5, 6), torch.randn(5, 6)
    # scatter with duplicates is defined on the CPU's loop order; the card
    # applies updates in the same (row-major) order
    idx = dup_index((4, 3), x.shape[dim])
    assert_close(x.to(N).scatter(dim, idx.to(N), src.to(N)), x.scatter(dim, idx, src))
    assert_close(x.to(N).scatter(dim, idx.to(N), 2.5), x.scatter(dim, idx, 2.5))
    for red in ["add", "multiply"]:
        assert_close(x.to(N).scatter(dim, idx.to(N), src.to(N), reduce=red),
                     x.scatter(dim, idx, src, reduce=red))
        assert_close(x.to(N).scatter(dim, idx.to(N), 1.5, reduce=red),
                     x.scatter(dim, idx, 1.5, reduce=red))
    xn = x.to(N)
    xn.scatter_(dim, idx.to(N), src.to(N))
    assert_close(xn, x.clone().scatter_(dim, idx, src))
    out = torch.empty(5, 6, device=N)
    torch.scatter(x.to(N), dim, idx.to(N), src.to(N), out=out)
    assert_close(out, x.scatter(dim, idx, src))


@pytest.mark.parametrize("reduce", REDUCES)
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce(reduce, include_self):
    x, src = torch.randn(4, 7), torch.randn(4, 5)
    src[1, 2] = float("nan")
    idx = dup_index((4, 5), 7, seed=3)
    want = x.scatter_reduce(1, idx, src, reduce, include_self=include_self)
    got = x.to(N).scatter_reduce(1, idx.to(N), src.to(N), reduce, include_self=include_self)
    assert_close(got, want)
    # integers: exact (floor division for mean)
    xi, si = torch.randint(-9, 9, (6, 3)), torch.randint(-9, 9, (4, 3))
    ii = dup_index((4, 3), 6, seed=4)
    want = xi.scatter_reduce(0, ii, si, reduce, include_self=include_self)
    got = xi.to(N).scatter_reduce(0, ii.to(N), si.to(N), reduce, include_self=include_self)
    assert torch.equal(got.cpu(), want)


def test_index_copy_fill():
    x, src = torch.randn(6, 4), torch.randn(3, 4)
    idx = torch.tensor([4, 0, 2])
    assert_close(x.to(N).index_copy(0, idx.to(N), src.to(N)), x.index_copy(0, idx, src))
    cols = torch.randn(6, 2)
    assert_close(x.to(N).index_copy(1, torch.tensor([3, 1]).to(N), cols.to(N)),
                 x.index_copy(1, torch.tensor([3, 1]), cols))
    # index_fill takes negative indices
    fi = torch.tensor([-1, 1])
    assert_close(x.to(N).index_fill(1, fi.to(N), -2.0), x.index_fill(1, fi, -2.0))
    assert_close(x.to(N).index_fill(0, fi.to(N), torch.tensor(3.0)),
                 x.index_fill(0, fi, torch.tensor(3.0)))
    xn = x.to(N)
    xn.index_fill_(0, torch.tensor([2]).to(N), 7.0)
    assert_close(xn, x.clone().index_fill_(0, torch.tensor([2]), 7.0))


@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_index_reduce(reduce, include_self):
    x, src = torch.randn(5, 3, 2), torch.randn(5, 4, 2)
    idx = torch.tensor([2, 0, 2, 1])
    want = x.index_reduce(1, idx, src, reduce, include_self=include_self)
    got = x.to(N).index_reduce(1, idx.to(N), src.to(N), reduce, include_self=include_self)
    assert_close(got, want)


def test_advanced_indexing():
    x = torch.randn(4, 5, 6)
    xn = x.to(N)
    i, j = torch.tensor([0, 3, -1, 2]), torch.tensor([[1], [3]])
    for key in [(i,), (slice(None), i), (i, j), (i, slice(None), j), (slice(None), slice(None), i),
                (1, i), (j, slice(1, 4), i)]:
        kn = tuple(k.to(N) if isinstance(k, torch.Tensor) else k for k in key)
        assert_close(xn[kn], x[key])
    # index_put_, with and without accumulate (duplicates accumulate)
    for acc in [False, True]:
        d = torch.tensor([1, 3, 1])
        v = torch.randn(3, 6)
        want = x.clone().index_put_((d, torch.tensor([0, 2, 4])), v, accumulate=acc)
        got = xn.clone().index_put_((d.to(N), torch.tensor([0, 2, 4]).to(N)), v.to(N),
                                    accumulate=acc)
        assert_close(got, want)
    y, yn = x.clone(), xn.clone()
    y[:, i] = 0.5
    yn[:, i.to(N)] = 0.5
    assert_close(yn, y)
    y[i, :, j] += 1.0
    yn[i.to(N), :, j.to(N)] += 1.0
    assert_close(yn, y)


def test_take_put():
    x = torch.randn(3, 4)
    idx = torch.tensor([[0, -1], [5, 11]])
    assert_close(torch.take(x.to(N), idx.to(N)), torch.take(x, idx))
    src = torch.randn(2, 2)
    for acc in [False, True]:
        want = x.clone().put_(torch.tensor([[1, 1], [-2, 0]]), src, accumulate=acc)
        got = x.to(N).put_(torch.tensor([[1, 1], [-2, 0]]).to(N), src.to(N), accumulate=acc)
        assert_close(got, want)


def test_out_of_range_is_loud():
    x = torch.randn(3, 4, device=N)
    with pytest.raises(Exception):
        x.scatter(0, torch.tensor([[3]], device=N), 1.0)
        torch.neuron.synchronize()
    with pytest.raises(Exception):
        x[torch.tensor([0, 3], device=N)].cpu()
    with pytest.raises(Exception):
        x[:, torch.tensor([-5], device=N)].cpu()
    # the stream is usable again
    assert_close(x[torch.tensor([2], device=N)], x.cpu()[torch.tensor([2])])


def test_max_unpool():
    x = torch.randn(2, 3, 8, 8)
    p, i = F.max_pool2d(x, 2, return_indices=True)
    want = F.max_unpool2d(p, i, 2)
    assert_close(F.max_unpool2d(p.to(N), i.to(N), 2), want)
    x3 = torch.randn(1, 2, 4, 4, 4)
    p3, i3 = F.max_pool3d(x3, 2, return_indices=True)
    assert_close(F.max_unpool3d(p3.to(N), i3.to(N), 2), F.max_unpool3d(p3, i3, 2))
    # backward: the gather of the output gradient
    pc = p.clone().requires_grad_()
    pn = p.to(N).requires_grad_()
    g = torch.randn(want.shape)
    (F.max_unpool2d(pc, i, 2) * g).sum().backward()
    (F.max_unpool2d(pn, i.to(N), 2) * g.to(N)).sum().backward()
    assert_close(pn.grad, pc.grad)


def test_channel_shuffle():
    x = torch.randn(2, 6, 3, 3)
    assert_close(F.channel_shuffle(x.to(N), 3), F.channel_shuffle(x, 3), rtol=0, atol=0)
    assert_close(torch.nn.ChannelShuffle(2)(x.to(N)), torch.nn.ChannelShuffle(2)(x))


@pytest.mark.parametrize("p", [0.0, 1.0, 2.0, 3.0, 0.5, float("inf")])
def test_cdist_pdist(p):
    a, b = torch.randn(2, 5, 3), torch.randn(2, 4, 3)
    b[0, 1] = a[0, 2]   # a zero distance
    ac, bc = a.clone().requires_grad_(), b.clone().requires_grad_()
    an, bn = a.to(N).requires_grad_(), b.to(N).requires_grad_()
    want, got = torch.cdist(ac, bc, p), torch.cdist(an, bn, p)
    assert_close(got, want.detach())
    g = torch.randn(want.shape)
    (want * g).sum().backward()
    (got * g.to(N)).sum().backward()
    assert_close(an.grad, ac.grad, atol=1e-4)
    assert_close(bn.grad, bc.grad, atol=1e-4)
    x = torch.randn(6, 4)
    xc, xn = x.clone().requires_grad_(), x.to(N).requires_grad_()
    want, got = F.pdist(xc, p), F.pdist(xn, p)
    assert_close(got, want.detach())
    g = torch.randn(want.shape)
    (want * g).sum().backward()
    (got * g.to(N)).sum().backward()
    assert_close(xn.grad, xc.grad, atol=1e-4)


def test_cdist_matmul_form():
    # more than 25 rows: the CPU (and the card) use |a|^2 + |b|^2 - 2ab
    a, b = torch.randn(30, 8), torch.randn(27, 8)
    assert_close(torch.cdist(a.to(N), b.to(N)), torch.cdist(a, b))


def test_boolean_mask_put_of_a_scalar():
    """x[mask] = v for a boolean mask over x's leading dims (or all of them)
    and a scalar v -- a CPU number or a 0-dim card tensor, floats and ints --
    is the CPU's, reads nothing back to the host, and so can be captured in
    a NeuronGraph (torchaudio's wav2vec2 encoder zeroes padding this way).
    A mask that does not match, a tensor of values, accumulate: the general
    path, as before."""
    g = torch.Generator().manual_seed(5)
    x = torch.randn(3, 4, 5, generator=g)
    for mask, v in [(torch.rand(3, 4, generator=g) > 0.5, 0.0),
                    (torch.rand(3, 4, 5, generator=g) > 0.5, float("nan")),
                    (torch.rand(3, generator=g) > 0.5, torch.tensor(2.5)),
                    (torch.zeros(3, 4, dtype=torch.bool), 1.0)]:
        want = x.clone()
        want[mask] = v
        got = x.to(N)
        vn = v.to(N) if isinstance(v, torch.Tensor) else v
        got[mask.to(N)] = vn
        assert_close(got, want)
    xi = torch.arange(24).view(4, 6)
    mi = xi % 3 == 0
    want = xi.clone()
    want[mi] = -7
    got = xi.to(N)
    got[mi.to(N)] = -7
    assert torch.equal(got.cpu(), want)
    # captured: the mask and the data change between replays
    xs, ms = x.clone().to(N), (torch.rand(3, 4, generator=g) > 0.5).to(N)
    graph = torch.neuron.NeuronGraph()
    with torch.neuron.graph(graph):
        xs[ms] = 0.0
    for _ in range(2):
        x2, m2 = torch.randn(3, 4, 5, generator=g), torch.rand(3, 4, generator=g) > 0.5
        xs.copy_(x2)
        ms.copy_(m2)
        graph.replay()
        x2[m2] = 0.0
        assert torch.equal(xs.cpu(), x2)
    # the general path: values of the selection's length, accumulate
    m = torch.rand(3, 4, generator=g) > 0.3
    vals = torch.randn(int(m.sum()), 5, generator=g)
    want = x.clone()
    want[m] = vals
    got = x.to(N)
    got[m.to(N)] = vals.to(N)
    assert_close(got, want)
    want = x.clone().index_put_((m,), torch.tensor(1.0), accumulate=True)
    got = x.to(N).index_put_((m.to(N),), torch.tensor(1.0).to(N), accumulate=True)
    assert_close(got, want)

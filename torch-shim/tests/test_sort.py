# SPDX-License-Identifier: MIT
"""Sorting, scans and the data-dependent selections on the card against the
CPU: stability and ties, NaN and -0.0, every dim, descending, empty
tensors, integer exactness, backward through the scans, and statistical
checks of randperm and multinomial (drawn on the card). The conftest hook
fails a test in which any operator fell back to the CPU."""
import math

import pytest
import torch

from conftest import assert_close

DEV = "neuron"


def both(x):
    return x, x.to(DEV)


def same(got, want):
    assert got.device.type == "neuron"
    torch.testing.assert_close(got.cpu(), want, rtol=0, atol=0, equal_nan=True)


# ---- sort and friends ----

@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("descending", [False, True])
def test_sort_stable_ties_nan_signed_zero(dim, descending):
    x = torch.tensor([[3.0, float("nan"), -0.0, 1.0, 0.0],
                      [1.0, 1.0, float("-inf"), float("nan"), 2.0],
                      [0.0, -0.0, 0.0, 5.0, 1.0]])
    c, n = both(x)
    cv, ci = torch.sort(c, dim=dim, descending=descending, stable=True)
    nv, ni = torch.sort(n, dim=dim, descending=descending, stable=True)
    same(nv, cv)
    same(ni, ci)
    assert torch.equal(nv.cpu().signbit(), cv.signbit())  # -0.0 stays where it was
    same(torch.argsort(n, dim=dim, descending=descending, stable=True),
         torch.argsort(c, dim=dim, descending=descending, stable=True))


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.bfloat16, torch.bool])
def test_sort_dtypes(dtype):
    if dtype == torch.bool:
        c = torch.rand(4, 33) > 0.5
    elif dtype.is_floating_point:
        c = torch.randn(4, 33).to(dtype)
    else:
        c = torch.randint(-5, 5, (4, 33), dtype=dtype)
    if dtype == torch.int64:
        c[0, :3] = torch.tensor([2 ** 60 + 1, 2 ** 60, 2 ** 60 + 3])  # beyond double
    n = c.to(DEV)
    for d in (0, 1):
        cv, ci = torch.sort(c, dim=d, stable=True)
        nv, ni = torch.sort(n, dim=d, stable=True)
        same(nv, cv)
        same(ni, ci)
    same(torch.msort(n), torch.msort(c))


def test_sort_empty_scalar_and_noncontiguous():
    for c in (torch.empty(0, 3), torch.tensor(2.5), torch.randn(5, 6).t()):
        n = c.to(DEV)
        cv, ci = torch.sort(c, dim=-1)
        nv, ni = torch.sort(n, dim=-1)
        same(nv, cv)
        same(ni, ci)
    out_v = torch.empty(0, device=DEV)
    out_i = torch.empty(0, dtype=torch.long, device=DEV)
    x = torch.randn(3, 7)
    torch.sort(x.to(DEV), dim=1, stable=True, out=(out_v, out_i))
    same(out_v, torch.sort(x, dim=1).values)


@pytest.mark.parametrize("largest", [True, False])
def test_topk_kthvalue(largest):
    c = torch.randn(6, 20)
    c[1, 3] = float("nan")
    n = c.to(DEV)
    cv, ci = torch.topk(c, 5, dim=1, largest=largest)
    nv, ni = torch.topk(n, 5, dim=1, largest=largest)
    same(nv, cv)
    same(ni, ci)
    kv, ki = torch.kthvalue(n, 4, dim=0, keepdim=True)
    ckv, cki = torch.kthvalue(c, 4, dim=0, keepdim=True)
    same(kv, ckv)
    same(ki, cki)
    with pytest.raises(RuntimeError, match="out of range"):
        torch.topk(n, 21, dim=1)


def test_median_nanmedian():
    c = torch.randn(5, 9)
    c[0, 2] = float("nan")
    c[3, 1:] = float("nan")
    c[4, 1:7] = float("nan")
    n = c.to(DEV)
    for f in (torch.median, torch.nanmedian):
        for d in (0, 1):
            cv, ci = f(c, dim=d)
            nv, ni = f(n, dim=d)
            same(nv, cv)
            same(ni, ci)
        same(f(n), f(c))
    # a lane of NaN only: NaN (which of the NaNs the CPU's nth_element
    # reports is its implementation's choice, not compared)
    same(torch.nanmedian(torch.full((2, 5), float("nan"), device=DEV), 1).values,
         torch.full((2,), float("nan")))
    ints = torch.randint(0, 100, (4, 7))
    same(torch.median(ints.to(DEV), dim=1).values, torch.median(ints, dim=1).values)


def test_mode():
    c = torch.randint(0, 4, (6, 11))
    n = c.to(DEV)
    for d in (0, 1):
        for keep in (False, True):
            cv, ci = torch.mode(c, d, keep)
            nv, ni = torch.mode(n, d, keep)
            same(nv, cv)
            same(ni, ci)
    f = torch.tensor([3.0, 2.0, 1.0, 2.0, 3.0, 1.0])  # all twice: the smallest, its last place
    v, i = torch.mode(f.to(DEV))
    assert v.item() == 1.0 and i.item() == 5


# ---- scans ----

@pytest.mark.parametrize("dim", [0, 1])
def test_cumsum_cumprod_logcumsumexp(dim):
    c = torch.randn(7, 9)
    n = c.to(DEV)
    assert_close(torch.cumsum(n, dim), torch.cumsum(c, dim))
    assert_close(torch.cumprod(n, dim), torch.cumprod(c, dim))
    assert_close(torch.logcumsumexp(n, dim), torch.logcumsumexp(c, dim))
    i = torch.randint(-3, 4, (7, 9), dtype=torch.int32)
    same(torch.cumsum(i.to(DEV), dim), torch.cumsum(i, dim))  # int32 -> int64
    same(torch.cumprod(i.to(DEV), dim), torch.cumprod(i, dim))
    big = torch.tensor([2 ** 62, 2 ** 62, 2 ** 62, 1])  # wraps exactly as on the CPU
    same(torch.cumsum(big.to(DEV), 0), torch.cumsum(big, 0))
    same(torch.cumsum(i.to(DEV), dim, dtype=torch.float32), torch.cumsum(i, dim, dtype=torch.float32))


def test_cummax_cummin_ties_and_nan():
    c = torch.tensor([[1.0, 3.0, 3.0, 2.0, float("nan"), 5.0, float("nan")],
                      [0.0, -1.0, -1.0, 4.0, 4.0, -2.0, 0.0]])
    n = c.to(DEV)
    for f in (torch.cummax, torch.cummin):
        for d in (0, 1):
            cv, ci = f(c, d)
            nv, ni = f(n, d)
            same(nv, cv)
            same(ni, ci)
    i = torch.randint(0, 3, (3, 11))
    cv, ci = torch.cummax(i, 1)
    nv, ni = torch.cummax(i.to(DEV), 1)
    same(nv, cv)
    same(ni, ci)


def test_scan_backward():
    c = torch.rand(4, 6) + 0.5
    for f in (lambda t: torch.cumsum(t, 1), lambda t: torch.cumprod(t, 1),
              lambda t: torch.logcumsumexp(t, 0), lambda t: torch.cummax(t, 1).values):
        a = c.clone().requires_grad_()
        b = c.to(DEV).requires_grad_()
        f(a).pow(2).sum().backward()
        f(b).pow(2).sum().backward()
        assert_close(b.grad, a.grad, rtol=1e-4, atol=1e-4)


def test_prod_aminmax():
    c = torch.randn(5, 6)
    n = c.to(DEV)
    assert_close(torch.prod(n), torch.prod(c))
    assert_close(torch.prod(n, 1), torch.prod(c, 1))
    assert_close(torch.prod(n, 0, keepdim=True), torch.prod(c, 0, keepdim=True))
    i = torch.tensor([[2 ** 40, 2 ** 30, 3], [1, -7, 11]])
    same(torch.prod(i.to(DEV), 1), torch.prod(i, 1))  # exact, wrapping
    same(torch.prod(torch.empty(0, 3, device=DEV), 0), torch.ones(3))
    lo, hi = torch.aminmax(n, dim=1)
    clo, chi = torch.aminmax(c, dim=1)
    same(lo, clo)
    same(hi, chi)
    same(torch.aminmax(n).max, torch.aminmax(c).max)


# ---- selections ----

def test_nonzero_masked_select_count():
    c = torch.randn(4, 5, 3)
    c[c.abs() < 0.5] = 0
    n = c.to(DEV)
    same(torch.nonzero(n), torch.nonzero(c))
    same(torch.argwhere(n), torch.argwhere(c))
    same(torch.nonzero_static(n, size=7, fill_value=-3), torch.nonzero_static(c, size=7, fill_value=-3))
    same(torch.nonzero_static(n, size=200), torch.nonzero_static(c, size=200))
    mask = c > 0.2
    same(torch.masked_select(n, mask.to(DEV)), torch.masked_select(c, mask))
    row = torch.rand(5, 1) > 0.5  # broadcast over dims 0 and 2
    same(torch.masked_select(n, row.to(DEV)), torch.masked_select(c, row))
    same(torch.count_nonzero(n, dim=(0, 2)), torch.count_nonzero(c, dim=(0, 2)))
    same(torch.nonzero(torch.zeros(3, device=DEV)), torch.nonzero(torch.zeros(3)))


def test_unique():
    c = torch.randint(0, 6, (5, 7))
    n = c.to(DEV)
    for kw in (dict(), dict(return_inverse=True), dict(return_counts=True),
               dict(return_inverse=True, return_counts=True)):
        got, want = torch.unique(n, **kw), torch.unique(c, **kw)
        for g, w in zip(got if isinstance(got, tuple) else (got,),
                        want if isinstance(want, tuple) else (want,)):
            same(g, w)
        got = torch.unique_consecutive(n.flatten(), **kw)
        want = torch.unique_consecutive(c.flatten(), **kw)
        for g, w in zip(got if isinstance(got, tuple) else (got,),
                        want if isinstance(want, tuple) else (want,)):
            same(g, w)


def unique_both(fn, c, **kw):
    got, want = fn(c.to(DEV), **kw), fn(c, **kw)
    for g, w in zip(got if isinstance(got, tuple) else (got,),
                    want if isinstance(want, tuple) else (want,)):
        assert g.shape == w.shape and g.stride() == w.stride()
        same(g, w)


@pytest.mark.parametrize("dim", [0, 1, -1, 2])
def test_unique_dim(dim):
    """Rows along @dim in the CPU's lexicographic order, with their inverse
    and counts: small integers (many ties), wide rows (the packed keys take
    several rounds), -0.0 against 0.0, bool, one row, empty along dim."""
    g = torch.Generator().manual_seed(dim + 10)
    cases = [torch.randint(0, 3, (6, 5, 4), generator=g),
             torch.randint(-2, 2, (9, 4, 40), generator=g).float(),
             torch.randint(0, 2, (7, 6, 3), generator=g).bool(),
             torch.tensor([[0.0, 1.0], [-0.0, 1.0], [0.0, -1.0]]).reshape(3, 2, 1),
             torch.randn(1, 3, 2, generator=g)]
    for c in cases:
        d = dim if dim < c.dim() else -1
        for kw in (dict(), dict(return_inverse=True, return_counts=True)):
            unique_both(torch.unique, c, dim=d, **kw)
            unique_both(torch.unique_consecutive, c, dim=d, **kw)
    # The raw operators return all three results.
    c = torch.randint(0, 4, (30, 3), generator=g)
    for op in (torch.ops.aten.unique_dim, torch.ops.aten.unique_dim_consecutive):
        unique_both(op, c, dim=0)
    unique_both(torch.unique, torch.zeros(0, 3), dim=0, return_counts=True)
    with pytest.raises(RuntimeError, match="0 sized dimensions"):
        torch.unique(torch.zeros(3, 0, device=DEV), dim=0)


def test_unique_dim_many_rows():
    """Thousands of rows of 300 columns: each column's ranks reach n, so few
    columns share a key, and equal rows are spread far apart."""
    g = torch.Generator().manual_seed(7)
    base = torch.randn(40, 300, generator=g)
    c = base[torch.randint(0, 40, (3000,), generator=g)]
    c[::7, 5] = torch.randn(c[::7].shape[0], generator=g)
    unique_both(torch.unique, c, dim=0, return_inverse=True, return_counts=True)


@pytest.mark.parametrize("right", [False, True])
def test_searchsorted_bucketize_isin(right):
    b = torch.tensor([-1.0, 0.0, 0.0, 2.5, 7.0])
    v = torch.tensor([[-2.0, 0.0, 1.0], [2.5, 9.0, float("nan")]])
    same(torch.searchsorted(b.to(DEV), v.to(DEV), right=right), torch.searchsorted(b, v, right=right))
    same(torch.bucketize(v.to(DEV), b.to(DEV), right=right, out_int32=True),
         torch.bucketize(v, b, right=right, out_int32=True))
    bb = torch.sort(torch.randn(2, 6), dim=1).values
    same(torch.searchsorted(bb.to(DEV), v.to(DEV), right=right), torch.searchsorted(bb, v, right=right))
    e, t = torch.randint(0, 10, (4, 5)), torch.tensor([1, 3, 3, 8])
    same(torch.isin(e.to(DEV), t.to(DEV)), torch.isin(e, t))
    same(torch.isin(e.to(DEV), t.to(DEV), invert=True), torch.isin(e, t, invert=True))


def test_search_large():
    """A million values against thousands of boundaries: the searches sort
    values and boundaries together (memory O(n + m)); a comparison of every
    pair would need 4 GB here. Ties, NaN and integers exact."""
    g = torch.Generator().manual_seed(11)
    v = torch.randn(1_000_000, generator=g)
    v[::1000] = float("nan")
    b = torch.sort(torch.randn(4096, generator=g)).values
    v[1::1000] = b[torch.randint(0, 4096, (1000,), generator=g)]   # exact ties
    for right in (False, True):
        same(torch.bucketize(v.to(DEV), b.to(DEV), right=right), torch.bucketize(v, b, right=right))
    e = torch.randint(0, 3_000_000, (1_000_000,), generator=g)
    t = torch.randint(0, 3_000_000, (100_000,), generator=g)
    same(torch.isin(e.to(DEV), t.to(DEV)), torch.isin(e, t))
    same(torch.isin(v.to(DEV), b.to(DEV)), torch.isin(v, b))


@pytest.mark.parametrize("right", [False, True])
def test_searchsorted_scalar(right):
    """A Scalar value is a wrapped number: float32 boundaries keep float32
    (0.1 is float32(0.1) there), an int value is compared as float32."""
    b = torch.tensor([-1.0, 0.0, 0.1, 0.1, 2.5])
    for value in (0.1, 0, -3, 2.5, 9.0, float("nan")):
        same(torch.searchsorted(b.to(DEV), value, right=right),
             torch.searchsorted(b, value, right=right))
    bi = torch.tensor([0, 2, 2, 5])
    same(torch.searchsorted(bi.to(DEV), 2, right=right, out_int32=True),
         torch.searchsorted(bi, 2, right=right, out_int32=True))
    same(torch.searchsorted(bi.to(DEV), 1.5, right=right), torch.searchsorted(bi, 1.5, right=right))


def test_repeat_interleave():
    for reps in ([2, 0, 1, 3], [0, 0], [5], [1, 1, 1], []):
        r = torch.tensor(reps, dtype=torch.long)
        same(torch.repeat_interleave(r.to(DEV)), torch.repeat_interleave(r))
    r = torch.tensor([1, 2, 0, 4], dtype=torch.int32)
    same(torch.repeat_interleave(r.to(DEV), output_size=7), torch.repeat_interleave(r))
    x = torch.randn(4, 3)
    same(torch.repeat_interleave(x.to(DEV), r.to(DEV), dim=0), torch.repeat_interleave(x, r, dim=0))
    with pytest.raises(RuntimeError, match="negative"):
        torch.repeat_interleave(torch.tensor([1, -1], device=DEV))
    with pytest.raises(RuntimeError, match="does not match"):
        torch.repeat_interleave(torch.tensor([1, 2], device=DEV), output_size=2)


def test_embedding_max_norm():
    """nn.Embedding(max_norm=...) renormalizes the rows it looks up, in
    place and once per row (embedding_renorm_), on the card."""
    torch.manual_seed(0)
    w = torch.randn(10, 4) * 3
    idx = torch.tensor([[1, 3, 1], [9, 0, 3]])
    for p in (2.0, 1.0, 3.5):
        wc, wn = w.clone(), w.to(DEV)
        yc = torch.nn.functional.embedding(idx, wc, max_norm=2.0, norm_type=p)
        yn = torch.nn.functional.embedding(idx.to(DEV), wn, max_norm=2.0, norm_type=p)
        assert_close(yn, yc)
        assert_close(wn, wc)                    # the weight itself, rows 2, 4.. untouched
        assert torch.equal(wn.cpu()[[2, 4, 5]], w[[2, 4, 5]])


def test_histogram():
    """torch.histogram with a bin count: the CPU's edges to the bit, its bin
    search (values on the edges, the top edge in the last bin), range,
    weights, density; NaN outside a given range counts nowhere. With the
    edges given: uneven bins, an empty one."""
    torch.manual_seed(0)
    c = torch.randn(1000)
    w = torch.rand(1000)
    for kw in (dict(bins=10), dict(bins=7, range=(-1.0, 2.0)), dict(bins=5, density=True),
               dict(bins=4, weight=w), dict(bins=6, weight=w, density=True, range=(0.0, 1.5))):
        kn = {k: (v.to(DEV) if isinstance(v, torch.Tensor) else v) for k, v in kw.items()}
        hn, en = torch.histogram(c.to(DEV), **kn)
        hc, ec = torch.histogram(c, **kw)
        same(en, ec)
        if "weight" in kw or kw.get("density"):
            assert_close(hn, hc)
        else:
            same(hn, hc)
    for x, kw in ((torch.arange(11.0), dict(bins=10)), (torch.arange(11.0) / 3, dict(bins=7)),
                  (torch.full((5,), 2.0), dict(bins=3)),
                  (torch.tensor([0.5, float("nan"), 3.0, -1.0]), dict(bins=2, range=(0.0, 3.0))),
                  (torch.empty(0), dict(bins=3))):
        hn, en = torch.histogram(x.to(DEV), **kw)
        hc, ec = torch.histogram(x, **kw)
        same(hn, hc)
        same(en, ec)
    edges = torch.tensor([-1.0, -0.2, 0.0, 0.0, 0.5, 2.0])      # uneven, one empty bin
    for kw in (dict(), dict(weight=w), dict(density=True)):
        kn = {k: (v.to(DEV) if isinstance(v, torch.Tensor) else v) for k, v in kw.items()}
        hn, en = torch.histogram(c.to(DEV), edges.to(DEV), **kn)
        hc, ec = torch.histogram(c, edges, **kw)
        same(en, ec)
        assert_close(hn, hc)


def test_histogramdd():
    """torch.histogramdd in 1 to 3 dims: bin counts (one per dim or one for
    all), range, the data's own range per dim (one constant), weights,
    density, given edges (uneven), values on edges and outside."""
    g = torch.Generator().manual_seed(3)
    x = torch.randn(500, 3, generator=g)
    x[:20, 1] = torch.arange(20.0) / 4                         # on the edges
    w = torch.rand(500, generator=g)
    cases = [(x, dict(bins=[4, 5, 3])), (x, dict(bins=6, range=[-1, 1, 0, 2, -3, 3])),
             (x[:, :2], dict(bins=[3, 7], weight=w)), (x[:, :2], dict(bins=4, density=True)),
             (x.reshape(10, 50, 3), dict(bins=2, weight=w.reshape(10, 50), density=True)),
             (torch.stack([x[:, 0], torch.full((500,), 2.5)], 1), dict(bins=[5, 2])),
             (x[:, :1], dict(bins=[8])), (torch.empty(0, 2), dict(bins=3))]
    for c, kw in cases:
        kn = {k: (v.to(DEV) if isinstance(v, torch.Tensor) else v) for k, v in kw.items()}
        hn, en = torch.histogramdd(c.to(DEV), **kn)
        hc, ec = torch.histogramdd(c, **kw)
        for a, b in zip(en, ec):
            same(a, b)
        if "weight" in kw or kw.get("density"):
            assert_close(hn, hc)
        else:
            same(hn, hc)
    edges = [torch.tensor([-1.0, -0.2, 0.0, 0.5, 2.0]), torch.tensor([0.0, 1.0, 4.0])]
    hn, _ = torch.histogramdd(x[:, :2].to(DEV), [e.to(DEV) for e in edges])
    same(hn, torch.histogramdd(x[:, :2], edges)[0])
    with pytest.raises(RuntimeError, match="range should have 4 elements"):
        torch.histogramdd(x[:, :2].to(DEV), bins=3, range=[0.0, 1.0])


def test_histc():
    c = torch.randn(1000)
    n = c.to(DEV)
    same(torch.histc(n, bins=10, min=-2, max=2), torch.histc(c, bins=10, min=-2, max=2))
    same(torch.histc(n, bins=7), torch.histc(c, bins=7))
    with pytest.raises(RuntimeError, match="max must be larger than min"):
        torch.histc(n, bins=4, min=3, max=1)


# ---- drawn on the card ----

def chi2_999(df):
    z = 3.0902
    return df * (1 - 2 / (9 * df) + z * math.sqrt(2 / (9 * df))) ** 3


def test_randperm_is_a_permutation_and_uniform():
    torch.manual_seed(7)
    p = torch.randperm(1000, device=DEV)
    assert p.device.type == "neuron" and p.dtype == torch.long
    assert torch.equal(torch.sort(p.cpu()).values, torch.arange(1000))
    g = torch.Generator(device=DEV)
    g.manual_seed(3)
    a = torch.randperm(50, device=DEV, generator=g)
    g.manual_seed(3)
    assert torch.equal(a.cpu(), torch.randperm(50, device=DEV, generator=g).cpu())
    # where element 0 lands, over many permutations of 8: uniform
    counts = [0] * 8
    trials = 800
    for _ in range(trials):
        counts[int((torch.randperm(8, device=DEV) == 0).nonzero()[0, 0])] += 1
    e = trials / 8
    assert sum((c - e) ** 2 / e for c in counts) < chi2_999(7)


@pytest.mark.parametrize("replacement", [True, False])
def test_multinomial_frequencies(replacement):
    p = torch.tensor([0.1, 0.0, 0.4, 0.2, 0.3])
    draws = 4000 if replacement else 1
    rows = 1 if replacement else 4000
    s = torch.multinomial(p.to(DEV).expand(rows, 5).contiguous(), draws, replacement=replacement)
    assert s.device.type == "neuron" and s.shape == (rows, draws)
    flat = s.cpu().flatten()
    assert not (flat == 1).any()  # zero probability: never drawn
    counts = torch.bincount(flat, minlength=5).tolist()
    expected = [p[i].item() * flat.numel() for i in range(5)]
    stat = sum((c - e) ** 2 / e for c, e in zip(counts, expected) if e > 0)
    assert stat < chi2_999(3)
    if not replacement:
        k = torch.multinomial(p.to(DEV), 4, replacement=False).cpu()
        assert len(set(k.tolist())) == 4 and 1 not in k.tolist()
        with pytest.raises(RuntimeError, match="not enough"):
            torch.multinomial(p.to(DEV), 5, replacement=False)

# SPDX-License-Identifier: MIT
"""Random numbers drawn on the card: seeding and reproducibility, generator
state, explicit generators, each distribution's statistics and range,
dropout. Statistical checks use a fixed seed and tolerances of 5 standard
errors of the estimate for the sample size (a false failure is then far
rarer than one in a million); chi-square checks use the 99.9% quantile."""
import math

import pytest
import torch

N = "neuron"
SIZE = 1 << 18  # samples for the moment checks


def two_cards():
    return torch.neuron.device_count() >= 2


def moments(x):
    x = x.cpu().double().flatten()
    m = x.mean()
    c = x - m
    var = (c * c).mean()
    skew = (c ** 3).mean() / var ** 1.5
    kurt = (c ** 4).mean() / var ** 2
    return m.item(), var.item(), skew.item(), kurt.item()


def chi2_999(df):
    """The 99.9% quantile of chi-square with df degrees of freedom
    (Wilson-Hilferty, within 0.5% for df >= 5)."""
    z = 3.0902
    return df * (1 - 2 / (9 * df) + z * math.sqrt(2 / (9 * df))) ** 3


def chi2(counts, expected):
    return sum((c - e) ** 2 / e for c, e in zip(counts, expected))


def offset_of(state):
    """A neuron generator state's counter (bytes 8..15, little endian)."""
    return int.from_bytes(bytes(state[8:16].tolist()), "little")


# ---- seeding, state, generators ----

def test_same_seed_same_numbers():
    torch.manual_seed(7)
    a = torch.randn(1000, device=N).cpu()
    b = torch.rand(1000, device=N).cpu()
    torch.manual_seed(7)
    assert torch.equal(torch.randn(1000, device=N).cpu(), a)
    assert torch.equal(torch.rand(1000, device=N).cpu(), b)
    assert not torch.equal(a, torch.randn(1000, device=N).cpu())  # the counter moved
    torch.manual_seed(8)
    assert not torch.equal(torch.randn(1000, device=N).cpu(), a)


@pytest.mark.skipif(not two_cards(), reason="needs 2 neuron cards")
def test_same_numbers_on_every_card():
    torch.manual_seed(11)
    a = torch.randn(500, device="neuron:0").cpu()
    r = torch.randint(0, 100, (500,), device="neuron:0").cpu()
    b = torch.randn(500, device="neuron:1").cpu()
    s = torch.randint(0, 100, (500,), device="neuron:1").cpu()
    assert torch.equal(a, b) and torch.equal(r, s)
    torch.neuron.manual_seed_all(5)
    st = torch.neuron.get_rng_state_all()
    assert len(st) == 2 and torch.equal(st[0], st[1])
    with torch.neuron.device(1):
        torch.neuron.manual_seed(6)  # the current card only
        assert torch.neuron.initial_seed() == 6
    assert torch.neuron.initial_seed() == 5


def test_seed_values():
    torch.manual_seed(2 ** 64 - 1)
    assert torch.neuron.initial_seed() == 2 ** 64 - 1
    torch.manual_seed(-5)  # mapped as the CPU generator maps it
    assert torch.neuron.initial_seed() == torch.initial_seed()
    with pytest.raises(RuntimeError):
        torch.neuron.manual_seed_all(2 ** 64)
    torch.neuron.seed()
    s = torch.neuron.initial_seed()
    torch.neuron.manual_seed(s)
    a = torch.rand(10, device=N).cpu()
    torch.neuron.manual_seed(s)
    assert torch.equal(torch.rand(10, device=N).cpu(), a)


def test_state_restores_the_continuation():
    torch.manual_seed(3)
    torch.rand(100, device=N)
    state = torch.neuron.get_rng_state()
    assert state.dtype == torch.uint8 and state.device.type == "cpu"
    assert offset_of(state) == 100  # one counter per element drawn
    a = torch.randn(64, 3, device=N).cpu()
    b = torch.randint(-10, 10, (50,), device=N).cpu()
    torch.neuron.set_rng_state(state)
    assert torch.equal(torch.randn(64, 3, device=N).cpu(), a)
    assert torch.equal(torch.randint(-10, 10, (50,), device=N).cpu(), b)
    torch.rand(0, 5, device=N)  # nothing drawn, nothing reserved
    assert offset_of(torch.neuron.get_rng_state()) == 100 + 192 + 50


def test_state_layout_is_seed_then_offset():
    """16 bytes, seed then offset (torch.cuda's layout, which DTensor's RNG
    tracker reads and writes): a state made by hand is taken."""
    torch.neuron.manual_seed(1234)
    torch.rand(40, device=N)
    state = torch.neuron.get_rng_state()
    assert state.numel() == 16
    assert state[:8].view(torch.int64).item() == 1234 and offset_of(state) == 40
    a = torch.rand(8, device=N).cpu()
    made = torch.tensor([1234, 40], dtype=torch.int64).view(torch.uint8)
    torch.neuron.set_rng_state(made)
    assert torch.equal(torch.rand(8, device=N).cpu(), a)


def test_bad_state_is_refused():
    good = torch.neuron.get_rng_state()
    with pytest.raises(RuntimeError, match="16 bytes"):
        torch.neuron.set_rng_state(torch.zeros(24, dtype=torch.uint8))
    with pytest.raises(RuntimeError, match="16 bytes"):
        torch.neuron.set_rng_state(torch.get_rng_state())  # the CPU's
    with pytest.raises(TypeError):
        torch.neuron.set_rng_state(good.float())
    assert torch.equal(torch.neuron.get_rng_state(), good)


def test_explicit_generator():
    g = torch.Generator(device=N)
    assert g.device.type == "neuron"
    g.manual_seed(21)
    before = torch.neuron.get_rng_state()
    a = torch.rand(300, device=N, generator=g).cpu()
    n = torch.empty(40, device=N).normal_(generator=g).cpu()
    assert torch.equal(torch.neuron.get_rng_state(), before)  # default untouched
    g.manual_seed(21)
    assert torch.equal(torch.rand(300, device=N, generator=g).cpu(), a)
    st = g.get_state()
    assert torch.equal(torch.empty(40, device=N).normal_(generator=g).cpu(), n)
    g.set_state(st)
    assert torch.equal(torch.empty(40, device=N).normal_(generator=g).cpu(), n)
    h = g.clone_state()
    assert torch.equal(torch.rand(5, device=N, generator=h).cpu(),
                       torch.rand(5, device=N, generator=g).cpu())
    # a generator seeded like the default one draws the default's numbers
    torch.manual_seed(21)
    assert torch.equal(torch.rand(300, device=N).cpu(), a)
    with pytest.raises(RuntimeError, match="device type for generator"):
        torch.rand(3, device=N, generator=torch.Generator())
    with pytest.raises(RuntimeError, match="16 bytes"):
        g.set_state(torch.Generator().get_state())


def test_default_generators():
    gens = torch.neuron.default_generators
    assert len(gens) == torch.neuron.device_count()
    assert gens[0].device == torch.device("neuron:0")
    gens[0].manual_seed(77)
    assert torch.neuron.initial_seed() == 77
    a = torch.rand(10, device=N).cpu()
    torch.neuron.manual_seed(77)
    assert torch.equal(torch.rand(10, device=N, generator=gens[0]).cpu(), a)
    assert torch.equal(gens[0].get_state(), torch.neuron.get_rng_state())


def test_fork_rng():
    torch.manual_seed(4)
    with torch.random.fork_rng(devices=[0], device_type="neuron"):
        a = torch.rand(20, device=N).cpu()
    assert torch.equal(torch.rand(20, device=N).cpu(), a)


# ---- uniform ----

def test_uniform_moments_and_bins():
    torch.manual_seed(100)
    u = torch.rand(SIZE, device=N)
    x = u.cpu().double()
    assert 0 <= x.min() and x.max() < 1
    m, var, _, _ = moments(x)
    assert abs(m - 0.5) < 5 * math.sqrt(1 / 12 / SIZE)
    assert abs(var - 1 / 12) < 5 * math.sqrt((1 / 80 - 1 / 144) / SIZE)
    bins = 100
    counts = torch.histc(x, bins, 0, 1).tolist()
    assert chi2(counts, [SIZE / bins] * bins) < chi2_999(bins - 1)


def test_uniform_range():
    torch.manual_seed(101)
    x = torch.empty(SIZE, device=N).uniform_(-3, 5).cpu()
    assert x.min() >= -3 and x.max() < 5
    assert x.min() < -2.99 and x.max() > 4.99
    assert abs(x.double().mean().item() - 1) < 5 * 8 * math.sqrt(1 / 12 / SIZE)
    y = torch.empty(1000, device=N).uniform_(1, 1).cpu()
    assert torch.equal(y, torch.ones(1000))
    # a narrow range where rounding would reach `to`
    z = torch.empty(SIZE, device=N).uniform_(1, 1 + 2 ** -20).cpu()
    assert z.min() >= 1 and z.max() < 1 + 2 ** -20
    with pytest.raises(RuntimeError, match="from=2.*to=1"):
        torch.empty(3, device=N).uniform_(2, 1)
    with pytest.raises(RuntimeError, match="not supported for dtype Long"):
        torch.empty(3, dtype=torch.long, device=N).uniform_()


def test_rand_like_and_noncontiguous():
    torch.manual_seed(5)
    c = torch.empty(6, 8, device=N).uniform_().cpu()
    torch.manual_seed(5)
    t = torch.empty(8, 6, device=N).t()  # element i in row-major order: counter i
    t.uniform_()
    assert torch.equal(t.cpu(), c)
    base = torch.zeros(6, 16, device=N)
    torch.manual_seed(5)
    base[:, ::2].uniform_()
    assert torch.equal(base[:, ::2].cpu(), c)
    assert torch.equal(base[:, 1::2].cpu(), torch.zeros(6, 8))
    r = torch.rand_like(base)
    assert r.shape == base.shape and r.device == base.device
    assert torch.randn_like(base).shape == base.shape
    e = torch.rand(0, 3, device=N)
    assert e.shape == (0, 3)
    with pytest.raises(RuntimeError, match="more than one element"):
        torch.zeros(1, device=N).expand(4).uniform_()


def test_bfloat16():
    torch.manual_seed(9)
    u = torch.rand(1 << 16, device=N, dtype=torch.bfloat16)
    assert u.dtype == torch.bfloat16
    k = (u.cpu().double() * 256)
    assert torch.equal(k, k.round())  # [0, 1) at bfloat16's 8 bits
    assert k.min() == 0 and k.max() == 255
    counts = torch.bincount(k.long(), minlength=256).tolist()
    assert chi2(counts, [len(k) / 256] * 256) < chi2_999(255)
    n = torch.randn(SIZE, device=N, dtype=torch.bfloat16)
    m, var, _, _ = moments(n)
    assert abs(m) < 0.02 and abs(var - 1) < 0.02
    v = torch.empty(1000, device=N, dtype=torch.bfloat16).uniform_(-2, 2).cpu()
    assert v.min() >= -2 and v.max() < 2


def test_float64_uniform_and_normal():
    """float64 draws: uniform on float64's 2^-53 grid (not float32's
    2^-24), normal with the right moments."""
    u = torch.rand(SIZE, dtype=torch.float64, device=N).cpu()
    assert u.dtype == torch.float64 and u.min() >= 0 and u.max() < 1
    assert torch.equal(u * 2.0 ** 53, (u * 2.0 ** 53).floor())
    assert (u * 2.0 ** 24 != (u * 2.0 ** 24).floor()).float().mean() > 0.99
    n = torch.randn(SIZE, dtype=torch.float64, device=N)
    m, var, _, _ = moments(n)
    assert n.dtype == torch.float64 and abs(m) < 0.02 and abs(var - 1) < 0.02


# ---- normal ----

def test_normal_moments():
    torch.manual_seed(200)
    m, var, skew, kurt = moments(torch.randn(SIZE, device=N))
    assert abs(m) < 5 / math.sqrt(SIZE)
    assert abs(var - 1) < 5 * math.sqrt(2 / SIZE)
    assert abs(skew) < 5 * math.sqrt(6 / SIZE)
    assert abs(kurt - 3) < 5 * math.sqrt(24 / SIZE)
    m, var, _, _ = moments(torch.empty(SIZE, device=N).normal_(3, 0.5))
    assert abs(m - 3) < 5 * 0.5 / math.sqrt(SIZE)
    assert abs(var - 0.25) < 5 * 0.25 * math.sqrt(2 / SIZE)
    with pytest.raises(RuntimeError, match="std >= 0.0"):
        torch.empty(3, device=N).normal_(0, -1)


def test_normal_tensor_overloads():
    torch.manual_seed(201)
    mean = torch.tensor([-10.0, 0.0, 10.0], device=N).repeat(20000)
    std = torch.tensor([1.0, 2.0, 0.0], device=N).repeat(20000)
    x = torch.normal(mean, std).cpu().view(-1, 3)
    assert torch.equal(x[:, 2], torch.full((20000,), 10.0))
    assert abs(x[:, 0].mean() + 10) < 5 / math.sqrt(20000)
    assert abs(x[:, 1].std() - 2) < 5 * 2 / math.sqrt(2 * 20000)
    y = torch.normal(mean, 0.5).cpu().view(-1, 3)
    assert abs(y[:, 2].mean() - 10) < 5 * 0.5 / math.sqrt(20000)
    z = torch.normal(1.0, std).cpu().view(-1, 3)
    assert torch.equal(z[:, 2], torch.ones(20000))
    out = torch.empty(0, device=N)
    torch.normal(mean, std, out=out)
    assert out.shape == mean.shape
    b = torch.normal(torch.zeros(4, 1, device=N), torch.ones(1, 5, device=N))
    assert b.shape == (4, 5)
    with pytest.raises(RuntimeError, match="std >= 0.0"):
        torch.normal(mean, -std)


# ---- integers ----

def test_randint_range_and_buckets():
    torch.manual_seed(300)
    x = torch.randint(0, 10, (SIZE,), device=N)
    assert x.dtype == torch.int64
    c = x.cpu()
    assert c.min() == 0 and c.max() == 9
    counts = torch.bincount(c, minlength=10).tolist()
    assert chi2(counts, [SIZE / 10] * 10) < chi2_999(9)
    y = torch.randint(-7, -2, (10000,), device=N, dtype=torch.int32).cpu()
    assert y.dtype == torch.int32 and y.min() == -7 and y.max() == -3
    big = torch.randint(-2 ** 40, 2 ** 40 + 3, (10000,), device=N).cpu()
    assert big.min() >= -2 ** 40 and big.max() < 2 ** 40 + 3
    assert big.min() < -2 ** 39 and big.max() > 2 ** 39
    assert torch.randint(5, (3, 4), device=N).shape == (3, 4)
    assert torch.randint_like(x, 3, 4).cpu().unique().tolist() == [3]


def test_random_overloads():
    torch.manual_seed(301)
    a = torch.empty(20000, dtype=torch.int32, device=N).random_().cpu()
    assert a.min() >= 0 and a.max() > 2 ** 30  # [0, 2^31 - 1]
    b = torch.empty(20000, dtype=torch.int64, device=N).random_().cpu()
    assert b.min() >= 0 and b.max() > 2 ** 62  # [0, 2^63 - 1]
    f = torch.empty(20000, device=N).random_().cpu()
    assert torch.equal(f, f.round()) and f.min() >= 0 and f.max() <= 2 ** 24
    assert f.max() > 2 ** 23
    h = torch.empty(20000, dtype=torch.bfloat16, device=N).random_().cpu().double()
    assert h.min() >= 0 and h.max() <= 256 and len(h.unique()) == 257
    t = torch.empty(20000, dtype=torch.int64, device=N).random_(6).cpu()
    assert t.unique().tolist() == list(range(6))
    g = torch.empty(20000, device=N).random_(-3, 3).cpu()
    assert g.unique().tolist() == [-3.0, -2.0, -1.0, 0.0, 1.0, 2.0]
    bo = torch.empty(1000, dtype=torch.bool, device=N).random_().cpu()
    assert bo.dtype == torch.bool and 400 < bo.sum() < 600
    # from without to: up to the dtype's maximum, over more than 2^63 values
    lo = -2 ** 63 + 10
    w = torch.empty(20000, dtype=torch.int64, device=N).random_(lo, None).cpu()
    assert w.min() >= lo and (w < 0).any() and (w > 2 ** 62).any()
    full = torch.empty(20000, dtype=torch.int64, device=N).random_(-2 ** 63, None).cpu()
    assert (full < -2 ** 62).any() and (full > 2 ** 62).any()
    with pytest.raises(RuntimeError, match="from=5 >= to=5"):
        torch.empty(3, dtype=torch.int64, device=N).random_(5, 5)
    with pytest.raises(RuntimeError, match="out of bounds"):
        torch.empty(3, dtype=torch.int32, device=N).random_(0, 2 ** 40)
    with pytest.raises(RuntimeError, match="out of bounds"):
        torch.empty(3, device=N).random_(0, 2 ** 30)


# ---- bernoulli, dropout and the other distributions ----

def test_bernoulli():
    torch.manual_seed(400)
    x = torch.empty(SIZE, device=N).bernoulli_(0.3).cpu()
    assert set(x.unique().tolist()) == {0.0, 1.0}
    assert abs(x.mean() - 0.3) < 5 * math.sqrt(0.3 * 0.7 / SIZE)
    p = torch.tensor([0.0, 1.0, 0.5, 0.9], device=N).repeat(SIZE // 4)
    y = torch.bernoulli(p).cpu().view(-1, 4)
    assert y[:, 0].sum() == 0 and y[:, 1].sum() == SIZE // 4
    for col, q in [(2, 0.5), (3, 0.9)]:
        assert abs(y[:, col].mean() - q) < 5 * math.sqrt(q * (1 - q) / (SIZE // 4))
    b = torch.empty(1000, dtype=torch.bool, device=N).bernoulli_(0.5).cpu()
    assert b.dtype == torch.bool and 400 < b.sum() < 600
    assert torch.bernoulli(torch.zeros(10, device=N), 1.0).cpu().sum() == 10
    with pytest.raises(RuntimeError, match=r"\[0, 1\]"):
        torch.empty(3, device=N).bernoulli_(1.5)
    with pytest.raises(RuntimeError, match=r"\[0, 1\]"):
        torch.bernoulli(torch.full((3,), 2.0, device=N))


@pytest.mark.parametrize("p", [0.1, 0.5])
def test_dropout(p):
    torch.manual_seed(500)
    x = torch.ones(1 << 16, device=N, requires_grad=True)
    drop = torch.nn.Dropout(p)
    y = drop(x)
    kept = (y != 0).cpu()
    assert abs(kept.double().mean() - (1 - p)) < 5 * math.sqrt(p * (1 - p) / (1 << 16))
    scale = torch.tensor(1 / (1 - p), dtype=torch.float32)
    assert torch.equal(y.detach().cpu()[kept], scale.expand(int(kept.sum())))
    w = torch.arange(1, (1 << 16) + 1).float()
    (y * w.to(N)).sum().backward()
    grad = x.grad.cpu()
    assert torch.equal(grad != 0, kept)  # the forward's mask
    torch.testing.assert_close(grad[kept], w[kept] * scale, rtol=1e-6, atol=0)
    drop.eval()
    assert torch.equal(drop(x).detach().cpu(), torch.ones(1 << 16))
    torch.manual_seed(500)
    assert torch.equal((torch.nn.functional.dropout(x, p) != 0).cpu(), kept)


def test_exponential_geometric_log_normal_cauchy():
    torch.manual_seed(600)
    e = torch.empty(SIZE, device=N).exponential_(2.0).cpu().double()
    assert e.min() >= 0
    assert abs(e.mean() - 0.5) < 5 * 0.5 / math.sqrt(SIZE)
    g = torch.empty(SIZE, device=N).geometric_(0.25).cpu().double()
    assert torch.equal(g, g.round()) and g.min() == 1
    assert abs(g.mean() - 4) < 5 * math.sqrt(0.75 / 0.25 ** 2 / SIZE)
    assert abs((g == 1).double().mean() - 0.25) < 5 * math.sqrt(0.25 * 0.75 / SIZE)
    gi = torch.empty(1000, dtype=torch.int64, device=N).geometric_(0.5).cpu()
    assert gi.dtype == torch.int64 and gi.min() >= 1
    ln = torch.empty(SIZE, device=N).log_normal_(1.0, 0.5).cpu().double()
    m, var, _, _ = moments(ln.log())
    assert abs(m - 1) < 5 * 0.5 / math.sqrt(SIZE)
    assert abs(var - 0.25) < 5 * 0.25 * math.sqrt(2 / SIZE)
    c = torch.empty(SIZE, device=N).cauchy_(2.0, 3.0).cpu().double()
    q = torch.quantile(c[:100000], torch.tensor([0.25, 0.5, 0.75], dtype=torch.float64))
    # quartiles of Cauchy(2, 3): 2 - 3, 2, 2 + 3 (density there: 1/(6 pi))
    se = math.sqrt(0.25 * 0.75 / 100000) * 6 * math.pi
    assert torch.allclose(q, torch.tensor([-1.0, 2.0, 5.0], dtype=torch.float64), atol=5 * se)
    with pytest.raises(RuntimeError, match="lambda > 0.0"):
        torch.empty(3, device=N).exponential_(0)
    with pytest.raises(RuntimeError, match=r"\(0, 1\)"):
        torch.empty(3, device=N).geometric_(1.0)


@pytest.mark.allow_fallback("aten::randperm.generator_out", "aten::multinomial")
def test_randperm_and_multinomial_fall_back_visibly():
    """No sort or cumulative sum on the card: these two run on the CPU."""
    p = torch.randperm(50, device=N)
    assert p.device.type == "neuron" and sorted(p.cpu().tolist()) == list(range(50))
    w = torch.tensor([0.0, 1.0, 3.0], device=N)
    s = torch.multinomial(w, 200, replacement=True).cpu()
    assert 0 not in s.tolist()

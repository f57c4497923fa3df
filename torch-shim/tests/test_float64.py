# SPDX-License-Identifier: MIT
"""float64 on the card against the CPU's float64.

No operator computes narrower than asked: every float64 result here is
within 1e-12 (relative and absolute) of the CPU's float64, where one
float32 step anywhere (float32's eps is 1.2e-7) misses by about 1e-8, and
nothing falls back to the CPU (conftest fails a test on any fallback; the
training test also checks torch_neuron.fallback_stats() itself). Inputs
are drawn in float64, so they are not float32 values (checked). Linear
algebra runs on LAPACK's d routines (the card's LINALG with F64 operands).
"""
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch_neuron

N = "neuron"
D = torch.float64
TOL = dict(rtol=1e-12, atol=1e-12)


def r(*shape, scale=1.0):
    """float64 normal samples, none of them a float32 value."""
    x = torch.randn(*shape, dtype=D) * scale
    assert (x != x.float().double()).all()
    return x


def close(got, want, **kw):
    """got (on the card) equals the CPU's want to 1e-12, same dtype."""
    assert got.device.type == N, got.device
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    torch.testing.assert_close(got.cpu(), want, **{**TOL, **kw}, equal_nan=True)


def same(got, want):
    close(got, want, rtol=0, atol=0)


def test_the_tolerance_sees_one_float32_step():
    """What every test here relies on: a result that went through float32
    once misses the CPU's float64 by far more than TOL."""
    x = r(64)
    with pytest.raises(AssertionError):
        close(x.to(N).float().exp().double(), x.exp())
    with pytest.raises(AssertionError):
        close((x.float() @ x.float()).double().to(N), x @ x)


def with_grads(fn, *xs):
    """fn on the CPU and on the card (float64 leaves), each output's
    weighted sum backpropagated: (cpu output, card output, cpu grads, card
    grads)."""
    xc = [x.clone().requires_grad_() for x in xs]
    xn = [x.to(N).requires_grad_() for x in xs]
    want, got = fn(*xc), fn(*xn)
    gout = r(*want.shape)
    (want * gout).sum().backward()
    (got * gout.to(N)).sum().backward()
    return want.detach(), got.detach(), [x.grad for x in xc], [x.grad for x in xn]


def check_grads(fn, *xs):
    want, got, gw, gg = with_grads(fn, *xs)
    close(got, want)
    for a, b in zip(gg, gw):
        close(a, b)


# ---- elementwise ----

BINARY = {
    "add": torch.add, "mul": torch.mul, "div": torch.div, "sub": torch.sub,
    "floor_divide": torch.floor_divide, "fmod": torch.fmod,
    "nextafter": torch.nextafter, "atan2": torch.atan2, "pow": lambda a, b: a.abs() ** b,
}


@pytest.mark.parametrize("name", list(BINARY))
def test_binary(name):
    a, b = r(64, scale=10), r(64)
    close(BINARY[name](a.to(N), b.to(N)), BINARY[name](a, b))


def test_nextafter_steps_a_float64_ulp():
    a = r(16)
    got = torch.nextafter(a.to(N), torch.full((16,), float("inf"), dtype=D, device=N))
    same(got, torch.nextafter(a, torch.full((16,), float("inf"), dtype=D)))
    assert ((got.cpu() - a) < 1e-14).all()  # a float32 ulp here is ~1e-7


UNARY = {
    "exp": torch.exp, "sin": torch.sin, "log": lambda x: x.abs().log(), "tanh": torch.tanh,
    "sqrt": lambda x: x.abs().sqrt(), "sigmoid": torch.sigmoid, "erf": torch.erf,
    "floor": torch.floor, "round": torch.round, "round3": lambda x: torch.round(x, decimals=3),
    "reciprocal": torch.reciprocal, "gelu": F.gelu, "silu": F.silu,
}


@pytest.mark.parametrize("name", list(UNARY))
def test_unary(name):
    x = r(64, scale=3)
    close(UNARY[name](x.to(N)), UNARY[name](x))


def test_python_scalars_stay_float64():
    """A Python number next to a float64 tensor is a float64 operand."""
    x = r(32)
    xn = x.to(N)
    close(xn * 0.1, x * 0.1)
    close(xn + 1 / 3, x + 1 / 3)
    close(torch.where(xn > 0, xn, 0.1), torch.where(x > 0, x, 0.1))
    close(xn.clamp(-0.3, 0.7), x.clamp(-0.3, 0.7))
    close(torch.addcmul(xn, xn, xn, value=0.1), torch.addcmul(x, x, x, value=0.1))


def test_nan_to_num_uses_float64_limits():
    x = torch.tensor([float("nan"), float("inf"), -float("inf"), 1e300], dtype=D)
    same(torch.nan_to_num(x.to(N)), torch.nan_to_num(x))


# ---- reductions ----

REDUCE = {
    "sum": lambda x: x.sum(1), "mean": lambda x: x.mean(1), "var": lambda x: x.var(1),
    "std": lambda x: x.std(0), "prod": lambda x: x.prod(1), "max": lambda x: x.max(1)[0],
    "cumsum": lambda x: x.cumsum(1), "logsumexp": lambda x: x.logsumexp(1),
    "softmax": lambda x: x.softmax(1), "log_softmax": lambda x: x.log_softmax(1),
    "norm": lambda x: x.norm(dim=1), "sum_all": lambda x: x.sum(),
}


@pytest.mark.parametrize("name", list(REDUCE))
def test_reduce(name):
    x = r(6, 40)
    close(REDUCE[name](x.to(N)), REDUCE[name](x))


def test_argmax_and_max_indices():
    x = r(6, 40)
    same(x.to(N).argmax(1), x.argmax(1))
    v, i = x.to(N).max(0)
    same(v, x.max(0)[0])
    same(i, x.max(0)[1])


def test_softmax_backward():
    check_grads(lambda x: x.log_softmax(1), r(5, 30))


# ---- products ----

def test_matmul_mm_bmm():
    a, b = r(17, 33), r(33, 9)
    close(a.to(N) @ b.to(N), a @ b)
    close(torch.mm(a.to(N), b.to(N)), torch.mm(a, b))
    p, q = r(3, 7, 13), r(3, 13, 5)
    close(torch.bmm(p.to(N), q.to(N)), torch.bmm(p, q))
    close(torch.matmul(p.to(N), b[:13, :4].to(N)), torch.matmul(p, b[:13, :4]))


def test_addmm_and_linear_with_bias():
    c, a, b = r(17, 9), r(17, 33), r(33, 9)
    close(torch.addmm(c.to(N), a.to(N), b.to(N)), torch.addmm(c, a, b))
    close(torch.addmm(c.to(N), a.to(N), b.to(N), beta=0.3, alpha=1.7),
          torch.addmm(c, a, b, beta=0.3, alpha=1.7))
    check_grads(F.linear, r(4, 6, 33), r(9, 33), r(9))


# ---- convolution, pooling, normalization, resampling ----

def test_conv2d_forward_backward():
    check_grads(lambda x, w, b: F.conv2d(x, w, b, stride=1, padding=1),
                r(2, 3, 9, 8), r(5, 3, 3, 3), r(5))
    check_grads(lambda x, w: F.conv2d(x, w, stride=2, padding=2, dilation=2, groups=2),
                r(2, 4, 11, 10), r(6, 2, 3, 3))


def test_conv_transpose2d():
    check_grads(lambda x, w: F.conv_transpose2d(x, w, stride=2, padding=1),
                r(2, 4, 5, 6), r(4, 3, 3, 3))


@pytest.mark.parametrize("pool", ["max", "avg", "avg_pad", "adaptive_avg", "adaptive_max"])
def test_pool2d(pool):
    fn = {"max": lambda x: F.max_pool2d(x, 3, 2, 1),
          "avg": lambda x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True),
          "avg_pad": lambda x: F.avg_pool2d(x, 3, 2, 1, count_include_pad=False),
          "adaptive_avg": lambda x: F.adaptive_avg_pool2d(x, (4, 3)),
          "adaptive_max": lambda x: F.adaptive_max_pool2d(x, (4, 3))}[pool]
    check_grads(fn, r(2, 3, 11, 9))


def test_batch_norm_forward_backward():
    x = r(4, 3, 5, 6)
    cpu = nn.BatchNorm2d(3).double()
    nn.init.normal_(cpu.weight)
    nn.init.normal_(cpu.bias)
    card = nn.BatchNorm2d(3).double().to(N)
    card.load_state_dict(cpu.state_dict())
    want, got, gw, gg = with_grads(lambda x: (cpu if x.device.type == "cpu" else card)(x), x)
    close(got, want)
    close(gg[0], gw[0])
    close(card.weight.grad, cpu.weight.grad)
    close(card.bias.grad, cpu.bias.grad)
    close(card.running_mean, cpu.running_mean)
    close(card.running_var, cpu.running_var)
    cpu.eval()
    card.eval()
    x = r(2, 3, 4, 4)
    close(card(x.to(N)), cpu(x))


def test_layer_norm_forward_backward():
    check_grads(lambda x, w, b: F.layer_norm(x, (7,), w, b), r(3, 5, 7), r(7), r(7))


def test_group_norm_forward_backward():
    check_grads(lambda x, w, b: F.group_norm(x, 2, w, b), r(3, 4, 5, 6), r(4), r(4))


@pytest.mark.parametrize("align", [False, True])
def test_interpolate_bilinear(align):
    check_grads(lambda x: F.interpolate(x, size=(7, 11), mode="bilinear", align_corners=align),
                r(2, 3, 5, 6))


def test_interpolate_bicubic_and_scale():
    check_grads(lambda x: F.interpolate(x, scale_factor=1.7, mode="bicubic"), r(1, 2, 5, 6))


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
def test_grid_sample(mode):
    grid = (torch.rand(2, 4, 5, 2, dtype=D) * 2.2 - 1.1)
    check_grads(lambda x, g: F.grid_sample(x, g, mode=mode, padding_mode="zeros",
                                           align_corners=False),
                r(2, 3, 6, 7), grid)


def test_grid_sample_reflection():
    grid = (torch.rand(1, 3, 4, 2, dtype=D) * 3 - 1.5)
    check_grads(lambda x, g: F.grid_sample(x, g, padding_mode="reflection", align_corners=True),
                r(1, 2, 5, 6), grid)


def test_reflection_pad_backward():
    check_grads(lambda x: F.pad(x, (2, 1, 1, 2), mode="reflect"), r(2, 3, 5, 6))


def test_weight_norm():
    check_grads(lambda v, g: torch._weight_norm(v, g, 0), r(5, 4, 3), r(5, 1, 1))


def test_scaled_dot_product_attention():
    check_grads(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
                r(2, 2, 5, 8), r(2, 2, 5, 8), r(2, 2, 5, 8))


# ---- indexing, sorting ----

def test_embedding_forward_backward():
    idx = torch.tensor([[0, 3, 3, 7], [2, 9, 0, 3]])
    w = r(10, 6)
    wc, wn = w.clone().requires_grad_(), w.to(N).requires_grad_()
    want, got = F.embedding(idx, wc), F.embedding(idx.to(N), wn)
    close(got, want.detach())
    gout = r(2, 4, 6)
    (want * gout).sum().backward()
    (got * gout.to(N)).sum().backward()
    close(wn.grad, wc.grad)


def test_index_select_gather_scatter_add():
    x = r(6, 8)
    idx = torch.tensor([5, 0, 2, 2])
    same(x.to(N).index_select(0, idx.to(N)), x.index_select(0, idx))
    g = torch.randint(0, 8, (6, 5))
    same(x.to(N).gather(1, g.to(N)), x.gather(1, g))
    src = r(6, 5)
    close(torch.zeros(6, 8, dtype=D, device=N).scatter_add_(1, g.to(N), src.to(N)),
          torch.zeros(6, 8, dtype=D).scatter_add_(1, g, src))
    rows = r(4, 8)
    close(torch.zeros(6, 8, dtype=D, device=N).index_add_(0, idx.to(N), rows.to(N)),
          torch.zeros(6, 8, dtype=D).index_add_(0, idx, rows))


def test_sort_topk():
    x = r(5, 30)
    v, i = x.to(N).sort(1)
    same(v, x.sort(1)[0])
    same(i, x.sort(1)[1])
    v, i = x.to(N).topk(4, 1)
    same(v, x.topk(4, 1)[0])
    same(i, x.topk(4, 1)[1])


# ---- random ----

def test_rand_randn_float64():
    for draw in (torch.rand, torch.randn):
        x = draw(4000, dtype=D, device=N)
        assert x.dtype == D and x.shape == (4000,)
        xc = x.cpu()
        # 53 random bits: not float32 values (a float32 draw cast up would be)
        assert (xc != xc.float().double()).float().mean() > 0.99
    u = torch.rand(4000, dtype=D, device=N).cpu()
    assert u.min() >= 0 and u.max() < 1
    u = torch.empty(4000, dtype=D, device=N).uniform_(-2, 3).cpu()
    assert u.min() >= -2 and u.max() < 3 and (u != u.float().double()).any()


def test_random_float64_integers_to_2_53():
    x = torch.empty(1000, dtype=D, device=N).random_(0, 2 ** 40).cpu()
    assert (x == x.round()).all() and x.max() > 2 ** 30 and x.max() < 2 ** 40


def test_bernoulli_float64_p():
    p = torch.full((20000,), 0.3, dtype=D, device=N)
    b = torch.bernoulli(p)
    assert b.dtype == D
    assert abs(b.mean().item() - 0.3) < 0.02


# ---- casts and factories ----

def test_casts():
    x = r(256, scale=1000)
    xn = x.to(N)
    same(xn.to(torch.float32), x.to(torch.float32))
    same(xn.to(torch.float32).to(D), x.to(torch.float32).to(D))
    same(xn.to(torch.bfloat16), x.to(torch.bfloat16))
    same(xn.to(torch.int64), x.to(torch.int64))
    big = torch.tensor([2 ** 53 + 1, -(2 ** 53) - 3, 2 ** 62 + 12345, 7], dtype=torch.int64)
    same(big.to(N).to(D), big.to(D))
    same(x.float().to(N).to(D), x.float().to(D))
    assert torch.equal(xn.cpu(), x)  # storage round trip, bit for bit


def test_linspace_logspace_arange():
    close(torch.linspace(-1.3, 2.7, 37, dtype=D, device=N),
         torch.linspace(-1.3, 2.7, 37, dtype=D))
    close(torch.logspace(-1.3, 2.7, 37, dtype=D, device=N),
          torch.logspace(-1.3, 2.7, 37, dtype=D))
    close(torch.arange(0.1, 3.3, 0.1, dtype=D, device=N), torch.arange(0.1, 3.3, 0.1, dtype=D))


def test_histogram_and_bincount():
    x = r(500)
    h, e = torch.histogram(x.to(N), bins=13)
    wh, we = torch.histogram(x, bins=13)
    same(h, wh)
    same(e, we)
    idx = torch.randint(0, 7, (50,))
    w = r(50)
    close(torch.bincount(idx.to(N), w.to(N)), torch.bincount(idx, w))


# ---- training ----

def test_mlp_trains_in_float64_as_on_the_cpu():
    torch_neuron.reset_fallback_stats()
    torch.manual_seed(0)
    cpu = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 16), nn.GELU(),
                        nn.Linear(16, 3)).double()
    card = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 16), nn.GELU(),
                         nn.Linear(16, 3)).double().to(N)
    card.load_state_dict(cpu.state_dict())
    oc = torch.optim.SGD(cpu.parameters(), lr=0.1, momentum=0.9)
    on = torch.optim.SGD(card.parameters(), lr=0.1, momentum=0.9)
    for step in range(3):
        x, y = r(32, 8), torch.randint(0, 3, (32,))
        for m, o, dev in ((cpu, oc, "cpu"), (card, on, N)):
            o.zero_grad()
            F.cross_entropy(m(x.to(dev)), y.to(dev)).backward()
            o.step()
    for (name, pc), pn in zip(cpu.named_parameters(), card.parameters()):
        assert pn.dtype == D
        torch.testing.assert_close(pn.detach().cpu(), pc.detach(), rtol=1e-10, atol=1e-10,
                                   msg=lambda m: f"{name}: {m}")
    assert torch_neuron.fallback_stats() == {}


# ---- linear algebra: LINALG on LAPACK's d routines ----

def test_linalg_float64():
    """Factorizations and solves in float64: the 8 x 8 Hilbert matrix
    (condition number 1.5e10) solved to float64's accuracy (float32 would
    be off by far more than 1), and inv/cholesky/qr/det/svd/eigh/lstsq/pinv
    against the CPU's float64."""
    n = 8
    h = 1.0 / (torch.arange(n, dtype=D)[:, None] + torch.arange(n, dtype=D)[None] + 1)
    x = torch.linalg.solve(h.to(N), h.sum(1, keepdim=True).to(N)).cpu()
    torch.testing.assert_close(x, torch.ones(n, 1, dtype=D), rtol=1e-5, atol=1e-5)
    a = r(3, 5, 5) + 5 * torch.eye(5, dtype=D)
    spd = a @ a.mT
    close(torch.linalg.inv(a.to(N)), torch.linalg.inv(a), rtol=1e-10, atol=1e-11)
    close(torch.linalg.cholesky(spd.to(N)), torch.linalg.cholesky(spd), rtol=1e-10,
          atol=1e-11)
    close(torch.linalg.det(a.to(N)), torch.linalg.det(a), rtol=1e-10, atol=1e-11)
    q, rr = torch.linalg.qr(a.to(N))
    close(q @ rr, a.to(N).cpu(), rtol=1e-10, atol=1e-11)
    close(torch.linalg.svdvals(a.to(N)), torch.linalg.svdvals(a), rtol=1e-10, atol=1e-11)
    close(torch.linalg.eigvalsh(spd.to(N)), torch.linalg.eigvalsh(spd), rtol=1e-10,
          atol=1e-10)
    b = r(3, 5, 2)
    close(torch.linalg.lstsq(a.to(N), b.to(N)).solution, torch.linalg.lstsq(a, b).solution,
          rtol=1e-10, atol=1e-10)
    close(torch.linalg.pinv(a.to(N)), torch.linalg.pinv(a), rtol=1e-9, atol=1e-10)


def test_matrix_exp_float64():
    a = r(3, 5, 5, scale=0.7)
    close(torch.linalg.matrix_exp(a.to(N)), torch.linalg.matrix_exp(a), rtol=1e-11, atol=1e-12)


# ---- code nobody here wrote ----

@pytest.mark.slow
def test_torchvision_resnet18_float64_forward_backward():
    """torchvision's ResNet-18 in float64 (model.double()), eval forward and
    the gradients of its sum: the CPU's float64 numbers, no fallback."""
    import torchvision
    torch.manual_seed(0)
    cpu = torchvision.models.resnet18(num_classes=10).double().eval()
    card = torchvision.models.resnet18(num_classes=10).double().eval()
    card.load_state_dict(cpu.state_dict())
    card.to(N)
    x = r(2, 3, 32, 32)
    want = cpu(x)
    want.sum().backward()
    got = card(x.to(N))
    got.sum().backward()
    close(got, want, rtol=1e-10, atol=1e-10)
    for (name, pc), pn in zip(cpu.named_parameters(), card.parameters()):
        torch.testing.assert_close(pn.grad.cpu(), pc.grad, rtol=1e-9, atol=1e-9,
                                   msg=lambda m: f"{name}: {m}")

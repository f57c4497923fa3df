# SPDX-License-Identifier: MIT
"""float16, uint8, int8 and int16 on the card, against the CPU.

float16 is a type of the card like bfloat16: elementwise ops, matmuls,
reductions, softmax, convolutions and norms run on it in float16. The
small integers are exact and wrap as the CPU's do (uint8 200 + 100 is 44).
A type that is not the card's (uint32): an operator on it fails naming
itself and the dtype (float64: test_float64.py). torch.amp.GradScaler("neuron") trains in float16 as the CPU's
GradScaler does, step for step.
"""
import copy

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

N = "neuron"
H = torch.float16


def same(got, want):
    """Bit-for-bit (NaN where NaN)."""
    assert got.device.type == N
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    torch.testing.assert_close(got.cpu(), want, rtol=0, atol=0, equal_nan=True)


def close16(got, want, rtol=2e-3, atol=1e-3):
    """float16: within about one float16 rounding (eps 9.8e-4) of the CPU."""
    assert got.device.type == N
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    torch.testing.assert_close(got.cpu(), want, rtol=rtol, atol=atol, equal_nan=True)


def rand16(*shape, lo=-3.0, hi=3.0):
    return (torch.rand(*shape) * (hi - lo) + lo).to(H)


# ---- float16 ----

def test_float16_round_trip_and_storage():
    x = torch.tensor([0.0, -0.0, 1.0, 65504.0, 6e-8, -2.5, float("inf"), float("nan")],
                     dtype=H)
    xn = x.to(N)
    assert xn.dtype == H and xn.element_size() == 2
    same(xn, x)
    # float32 -> float16 on the card: ties to even, overflow, subnormals
    f = torch.tensor([2049.0, 2051.0, 65520.0, 65519.0, 2.0 ** -25, 3 * 2.0 ** -25,
                      1e-9, -7e4, 0.1])
    same(f.to(N).half(), f.half())
    same(f.to(N).to(H).float(), f.half().float())


def test_float16_exact_elementwise():
    """One rounding of an exact result: the CPU's float32-then-float16 bits."""
    a, b = rand16(64), rand16(64)
    b = torch.where(b == 0, torch.ones_like(b), b)
    an, bn = a.to(N), b.to(N)
    for name, f in [("add", torch.add), ("sub", torch.sub), ("mul", torch.mul),
                    ("div", torch.div), ("maximum", torch.maximum),
                    ("minimum", torch.minimum)]:
        same(f(an, bn), f(a, b))
    same(an + 2.5, a + 2.5)
    same(torch.add(an, bn, alpha=3), torch.add(a, b, alpha=3))
    same(-an, -a)
    same(an.abs(), a.abs())
    same(F.relu(an), F.relu(a))
    same(torch.where(an > bn, an, bn), torch.where(a > b, a, b))
    same(an < bn, a < b)
    same(an.floor(), a.floor())
    big = torch.tensor([60000.0, -60000.0], dtype=H)
    same(big.to(N) * 2, big * 2)                     # overflow to +-inf


def test_float16_math_functions():
    a = rand16(128)
    an = a.to(N)
    for f in [torch.exp, torch.tanh, torch.sigmoid, torch.sin, F.gelu, F.silu,
              torch.erf, lambda t: torch.sqrt(t.abs()), lambda t: torch.log(t.abs() + 1),
              lambda t: t.pow(2), torch.rsqrt]:
        close16(f(an), f(a))


def test_float16_matmul_and_linear():
    a, b = rand16(8, 32, lo=-1, hi=1), rand16(32, 16, lo=-1, hi=1)
    close16(a.to(N) @ b.to(N), a @ b, rtol=5e-3, atol=5e-3)
    x, w, bias = rand16(3, 5, 32, lo=-1, hi=1), rand16(16, 32, lo=-1, hi=1), rand16(16)
    close16(F.linear(x.to(N), w.to(N), bias.to(N)), F.linear(x, w, bias), rtol=5e-3, atol=5e-3)
    p, q = rand16(4, 6, 8, lo=-1, hi=1), rand16(4, 8, 5, lo=-1, hi=1)
    close16(torch.bmm(p.to(N), q.to(N)), torch.bmm(p, q), rtol=5e-3, atol=5e-3)


def test_float16_reductions_and_softmax():
    a = rand16(6, 40)
    an = a.to(N)
    close16(an.sum(1), a.sum(1), rtol=5e-3, atol=1e-2)
    close16(an.mean(0), a.mean(0), rtol=5e-3, atol=1e-2)
    same(an.amax(1), a.amax(1))
    same(an.argmax(1), a.argmax(1))
    close16(F.softmax(an, dim=1), F.softmax(a, dim=1))
    close16(F.log_softmax(an, dim=1), F.log_softmax(a, dim=1))
    assert an.sum(1).dtype == H


def test_float16_conv_and_norms():
    x = rand16(2, 3, 9, 9, lo=-1, hi=1)
    y = rand16(4, 6, 5)
    for mod, inp in [(nn.Conv2d(3, 4, 3, padding=1), x), (nn.LayerNorm(5), y),
                     (nn.BatchNorm1d(6), y), (nn.GroupNorm(2, 6), y)]:
        ref = mod.to(H)
        dev = copy.deepcopy(ref).to(N)
        close16(dev(inp.to(N)), ref(inp), rtol=5e-3, atol=5e-3)
        if isinstance(ref, nn.BatchNorm1d):
            close16(dev.running_mean, ref.running_mean, rtol=5e-3, atol=1e-3)
            close16(dev.running_var, ref.running_var, rtol=5e-3, atol=1e-3)
    close16(F.max_pool2d(x.to(N), 2), F.max_pool2d(x, 2), rtol=0, atol=0)


def test_float16_backward():
    """Gradients in float16 through linear, gelu and a norm, as on the CPU."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.LayerNorm(16), nn.Linear(16, 2)).to(H)
    x = rand16(4, 8, lo=-1, hi=1)

    def grads(m, dev):
        m = m.to(dev)
        m.zero_grad()
        m(x.to(dev)).float().pow(2).sum().backward()
        return [p.grad.cpu() for p in m.parameters()]

    want = grads(copy.deepcopy(model), "cpu")
    got = grads(model, N)
    for g, w in zip(got, want):
        assert g.dtype == H
        torch.testing.assert_close(g, w, rtol=2e-2, atol=2e-2)


def test_float16_random():
    u = torch.rand(4096, dtype=H, device=N).cpu().float()
    assert u.min() >= 0 and u.max() < 1
    assert torch.equal(u * 2048, (u * 2048).floor())      # on the 2^-11 grid
    assert abs(u.mean().item() - 0.5) < 0.03
    n = torch.randn(4096, dtype=H, device=N)
    assert n.dtype == H and abs(n.float().std().item() - 1) < 0.1


def test_autocast_float16():
    a, b = torch.randn(8, 16), torch.randn(16, 4)
    with torch.autocast("neuron", dtype=torch.float16):
        y = a.to(N) @ b.to(N)
        sm = F.softmax(y, dim=1)
    with torch.autocast("cpu", dtype=torch.float16):
        want = a @ b
    assert y.dtype == H and sm.dtype == torch.float32
    close16(y, want, rtol=5e-3, atol=5e-3)
    assert torch.neuron.get_amp_supported_dtype() == [torch.float16, torch.bfloat16]
    assert torch.neuron.is_bf16_supported()


# ---- uint8, int8, int16 ----

def test_uint8_image_pipeline():
    """Images arrive as uint8: to float, / 255, normalise -- on the card."""
    img = torch.randint(0, 256, (2, 3, 8, 8), dtype=torch.uint8)
    mean = torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1)
    std = torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1)
    imgn = img.to(N)
    assert imgn.dtype == torch.uint8
    same(imgn, img)
    x = imgn.float() / 255
    same(x, img.float() / 255)
    same((x - mean.to(N)) / std.to(N), (img.float() / 255 - mean) / std)
    same(imgn.half() / 255, img.half() / 255)
    same(x.mul(255).round().byte(), (img.float() / 255).mul(255).round().byte())
    same(imgn.sum(), img.sum())                       # int64, no wrap
    same(imgn.max(), img.max())


def test_small_int_wraparound():
    u = torch.tensor([200, 100, 0, 255, 16], dtype=torch.uint8)
    v = torch.tensor([100, 200, 1, 1, 16], dtype=torch.uint8)
    un, vn = u.to(N), v.to(N)
    same(un + vn, u + v)                             # 300 -> 44
    same(un - vn, u - v)                             # 0 - 1 -> 255
    same(un * vn, u * v)
    same(un + 300, u + 300)
    same(-un, -u)
    same(un * -1, u * -1)
    s = torch.tensor([100, -128, 127, -1, 50], dtype=torch.int8)
    t = torch.tensor([100, -1, 1, -1, 3], dtype=torch.int8)
    sn, tn = s.to(N), t.to(N)
    same(sn + tn, s + t)                             # 200 -> -56; 127 + 1 -> -128
    same(sn - tn, s - t)
    same(sn * tn, s * t)
    same(sn.abs(), s.abs())                          # abs(-128) is -128
    same(torch.div(sn, 3, rounding_mode="floor"), torch.div(s, 3, rounding_mode="floor"))
    same(torch.div(sn, 3, rounding_mode="trunc"), torch.div(s, 3, rounding_mode="trunc"))
    h = torch.tensor([30000, -32768, 300, 7], dtype=torch.int16)
    k = torch.tensor([30000, -1, 300, -2], dtype=torch.int16)
    same(h.to(N) + k.to(N), h + k)
    same(h.to(N) * k.to(N), h * k)
    un.add_(vn)
    same(un, u + v)


def test_small_int_promotion_and_comparisons():
    u = torch.tensor([200, 10, 0, 255], dtype=torch.uint8)
    s = torch.tensor([-1, 10, -128, 127], dtype=torch.int8)
    h = torch.tensor([-300, 10, 1000, 5], dtype=torch.int16)
    un, sn, hn = u.to(N), s.to(N), h.to(N)
    same(un + sn, u + s)                             # int16
    same(sn * hn, s * h)                             # int16
    same(un + 1.5, u + 1.5)                          # float32
    same(un / 4, u / 4)
    same(un.float() * hn, u.float() * h)
    for f in [torch.eq, torch.ne, torch.lt, torch.le, torch.gt, torch.ge]:
        same(f(un, sn), f(u, s))
        same(f(sn, hn), f(s, h))
        same(f(un, 100), f(u, 100))
    # a Python number is cast to the tensor's type first, as on the CPU
    same(un < 300, u < 300)
    same(un == 456, u == 456)
    same(torch.div(un, 300, rounding_mode="floor"), torch.div(u, 300, rounding_mode="floor"))
    same(sn < 200, s < 200)
    v = torch.tensor([3, 30, 0, 1], dtype=torch.uint8)
    same(torch.maximum(un, v.to(N)), torch.maximum(u, v))
    same(torch.minimum(sn, hn), torch.minimum(s, h))


def test_small_int_bitwise():
    u = torch.tensor([0b11001010, 0x80, 0xff, 1], dtype=torch.uint8)
    v = torch.tensor([0b10100110, 1, 0x0f, 7], dtype=torch.uint8)
    s = torch.tensor([-7, 64, -128, 1], dtype=torch.int8)
    un, vn, sn = u.to(N), v.to(N), s.to(N)
    same(un & vn, u & v)
    same(un | vn, u | v)
    same(un ^ vn, u ^ v)
    same(~un, ~u)
    same(~sn, ~s)
    same(un >> 1, u >> 1)                            # logical for uint8
    same(sn >> 1, s >> 1)                            # arithmetic for int8
    same(un << 1, u << 1)                            # wraps
    same(sn << 1, s << 1)


def test_conversions_match_cpu():
    """op_db's half, byte, char, short: the .to() conversions."""
    f = torch.tensor([1.5, -2.7, 300.2, -300.2, 127.9, 65504.0, 70000.0, 0.0, -0.0,
                      float("nan"), float("inf"), -float("inf"), 1e10])
    fn = f.to(N)
    same(fn.half(), f.half())
    same(fn.byte(), f.byte())
    same(fn.char(), f.char())
    same(fn.short(), f.short())
    i = torch.tensor([300, -1, 65537, -32769, 2 ** 40 + 5])
    inn = i.to(N)
    for dt in (torch.uint8, torch.int8, torch.int16, torch.float16):
        same(inn.to(dt), i.to(dt))
    u = torch.tensor([0, 127, 128, 255], dtype=torch.uint8)
    for dt in (torch.int8, torch.int16, torch.int32, torch.int64, torch.float16,
               torch.bfloat16, torch.float32, torch.bool):
        same(u.to(N).to(dt), u.to(dt))
    b = torch.tensor([True, False])
    same(b.to(N).to(torch.uint8), b.to(torch.uint8))


def test_small_int_random():
    r = torch.randint(0, 256, (4096,), dtype=torch.uint8, device=N).cpu()
    assert r.dtype == torch.uint8
    assert r.min() == 0 and r.max() == 255 and len(r.unique()) == 256
    r = torch.randint(-100, 100, (4096,), dtype=torch.int8, device=N).cpu()
    assert r.min() >= -100 and r.max() < 100
    r = torch.empty(4096, dtype=torch.int16, device=N).random_().cpu()
    assert r.min() >= 0 and r.max() > 30000


# ---- a type that is not the card's ----

def test_foreign_dtype_refused_naming_op_and_dtype():
    x = torch.empty(4, dtype=torch.uint32).to(N)      # storage only
    with pytest.raises(RuntimeError, match=r"aten::add.*UInt32.*not supported on the card"):
        x + 1
    with pytest.raises(RuntimeError, match=r"aten::bitwise_not.*UInt32"):
        torch.bitwise_not(x)


# ---- GradScaler ----

def test_amp_update_scale_matches_cpu():
    cases = [(0.0, 0), (0.0, 2), (1.0, 2), (1.0, 0), (0.0, 1)]
    for found, tracker in cases:
        for start in (1024.0, 3.0e38):
            res = []
            for dev in ("cpu", N):
                s = torch.tensor(start, device=dev)
                t = torch.tensor(tracker, dtype=torch.int32, device=dev)
                f = torch.tensor(found, device=dev)
                torch._amp_update_scale_(s, t, f, 2.0, 0.5, 3)
                res.append((s.cpu(), t.cpu()))
            assert torch.equal(res[0][0], res[1][0]), (found, tracker, start, res)
            assert torch.equal(res[0][1], res[1][1]), (found, tracker, start, res)


def test_amp_non_finite_check_and_unscale():
    g = [torch.tensor([2.0, 4.0], dtype=H), torch.tensor([[1.0, float("inf")]]),
         torch.tensor([3.0], dtype=torch.bfloat16), torch.empty(0)]
    for gs in (g[:1] + g[2:], g):
        res = []
        for dev in ("cpu", N):
            grads = [x.clone().to(dev) for x in gs]
            f = torch.zeros((), device=dev)
            torch._amp_foreach_non_finite_check_and_unscale_(grads, f, torch.tensor(0.25, device=dev))
            res.append((f.cpu(), [x.cpu() for x in grads]))
        assert torch.equal(res[0][0], res[1][0])
        for a, b in zip(res[0][1], res[1][1]):
            torch.testing.assert_close(b, a, rtol=0, atol=0, equal_nan=True)


def test_grad_scaler_float16_training_matches_cpu():
    """float16 autocast with GradScaler: the first steps overflow float16 and
    are skipped (scale backs off), later steps grow the scale; every step's
    scale, skip and parameters as with the CPU's GradScaler."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
    init = [p.detach().clone() for p in model.parameters()]
    x, y = torch.randn(32, 8) * 4, torch.randn(32, 1) * 4

    def run(dev):
        m = model.to(dev)
        with torch.no_grad():
            for p, q in zip(m.parameters(), init):
                p.copy_(q)
        opt = torch.optim.SGD(m.parameters(), lr=1e-3)
        scaler = torch.amp.GradScaler(dev, init_scale=2.0 ** 16, growth_interval=2)
        log = []
        for _ in range(8):
            opt.zero_grad()
            with torch.autocast(dev, dtype=torch.float16):
                loss = F.mse_loss(m(x.to(dev)), y.to(dev))
            before = [p.detach().cpu().clone() for p in m.parameters()]
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            moved = any(not torch.equal(b, p.detach().cpu()) for b, p in zip(before, m.parameters()))
            log.append((scaler.get_scale(), moved, loss.item()))
        return log, [p.detach().cpu() for p in m.parameters()]

    want_log, want_params = run("cpu")
    got_log, got_params = run(N)
    assert [s for s, _, _ in got_log] == [s for s, _, _ in want_log]
    assert [m for _, m, _ in got_log] == [m for _, m, _ in want_log]
    assert not want_log[0][1] and any(m for _, m, _ in want_log)   # skipped, then stepped
    assert any(b[0] > a[0] for a, b in zip(want_log, want_log[1:]))  # the scale grew
    for (_, _, gl), (_, _, wl) in zip(got_log, want_log):
        assert abs(gl - wl) <= 2e-3 * abs(wl) + 1e-3
    for g, w in zip(got_params, want_params):
        torch.testing.assert_close(g, w, rtol=1e-3, atol=1e-4)

# SPDX-License-Identifier: MIT
"""Composed operators on the card against the CPU: any/all, vector norms,
tril/triu, flip, roll, var/std with corrections, nansum, dot, addmv, glu,
clamp and hardtanh (with their backward), where's out= form; and gradient
clipping with AdamW/SGD steps running with no CPU fallback."""
import pytest
import torch
import torch.nn.functional as F

from conftest import assert_close

N = "neuron"


def same(fn, *xs, dtype=torch.float32, grad=False, **kw):
    xc = [x.clone().requires_grad_(grad) if x.is_floating_point() else x for x in xs]
    xn = [x.detach().to(N).requires_grad_(grad) if x.is_floating_point() else x.to(N)
          for x in xs]
    want, got = fn(*xc, **kw), fn(*xn, **kw)
    if isinstance(want, tuple):
        for w, g in zip(want, got):
            assert_close(g, w.detach(), dtype)
        return
    assert got.dtype == want.dtype and got.shape == want.shape
    assert_close(got, want.detach(), dtype)
    if grad:
        g = torch.randn(want.shape)
        (want * g).sum().backward()
        (got * g.to(N)).sum().backward()
        for c, d in zip(xc, xn):
            if c.requires_grad:
                assert_close(d.grad, c.grad)


def test_any_all():
    x = torch.tensor([[0.0, 1.0, 0.0], [0.0, 0.0, 0.0], [2.0, float("nan"), 3.0]])
    for fn in (torch.any, torch.all):
        same(fn, x)
        same(fn, x, dim=1)
        same(fn, x, dim=0, keepdim=True)
        same(fn, x > 0)
        same(fn, torch.zeros(0, 3), dim=0)
        same(lambda t: fn(t, dim=(0, 1)), x)
    out = torch.empty((), dtype=torch.bool, device=N)
    torch.any(x.to(N), out=out)
    assert out.item() is True
    assert not torch.all(x.to(N)).item()


@pytest.mark.parametrize("ord", [2, 1, 0, float("inf"), -float("inf"), 3.5])
def test_vector_norm(ord):
    x = torch.randn(4, 5)
    same(torch.linalg.vector_norm, x, ord=ord)
    same(torch.linalg.vector_norm, x, ord=ord, dim=1, keepdim=True)
    if ord not in (0, float("inf"), -float("inf")):
        same(torch.linalg.vector_norm, x, grad=True, ord=ord, dim=(0,))
    same(torch.norm, x)


@pytest.mark.parametrize("k", [0, 1, -2, 7])
def test_tril_triu(k):
    x = torch.randn(2, 4, 5)
    same(torch.tril, x, diagonal=k, grad=True)
    same(torch.triu, x, diagonal=k, grad=True)
    y = x.to(N)
    y.tril_(k)
    assert_close(y, x.tril(k))


def test_flip_roll():
    x = torch.randn(3, 4, 5)
    same(torch.flip, x, dims=(0, 2), grad=True)
    same(torch.flip, x.transpose(0, 2), dims=(1,))
    same(torch.flip, torch.arange(6).view(2, 3), dims=(-1,))
    same(torch.roll, x, shifts=(1, -3), dims=(0, 2), grad=True)
    same(torch.roll, x, shifts=7)


@pytest.mark.parametrize("correction", [0, 1, 2.5])
def test_var_std(correction):
    x = torch.randn(4, 6) * 3 + 1
    for fn in (torch.var, torch.std, torch.var_mean, torch.std_mean):
        same(fn, x, correction=correction)
        same(fn, x, dim=1, correction=correction, keepdim=True)
    same(torch.var, x, grad=True, dim=0)
    same(torch.std, x, grad=True)


def test_nansum_dot_addmv():
    x = torch.randn(3, 4)
    x[0, 1] = float("nan")
    same(torch.nansum, x)
    same(torch.nansum, x, dim=1)
    a, b = torch.randn(7), torch.randn(7)
    same(torch.dot, a, b, grad=True)
    same(torch.vdot, a, b)
    m, v, s = torch.randn(3, 7), torch.randn(7), torch.randn(3)
    same(torch.addmv, s, m, v, grad=True)
    same(torch.addmv, s, m, v, beta=0.5, alpha=2.0)
    same(torch.mv, m, v)


def test_glu_clamp_hardtanh():
    x = torch.randn(4, 6) * 2
    x[0, 0] = 1.0  # exactly on a bound
    same(F.glu, x, grad=True)
    same(F.glu, x, dim=0, grad=True)
    same(torch.clamp, x, min=-1.0, max=1.0, grad=True)
    same(torch.clamp, x, max=0.5, grad=True)
    same(torch.clamp, x, min=-0.5, grad=True)
    same(torch.clamp, x, min=2.0, max=1.0)  # min > max gives max
    same(lambda t, lo, hi: torch.clamp(t, lo, hi), x, -torch.rand(6), torch.rand(6))
    same(F.hardtanh, x, grad=True)
    same(F.relu6, x, grad=True)
    nan = torch.tensor([float("nan"), 3.0, -3.0])
    same(torch.clamp, nan, min=-1.0, max=1.0)
    same(torch.clamp, torch.arange(-3, 4), min=-1, max=2)


def test_where_out_and_masked_fill():
    c, a, b = torch.rand(3, 4) > 0.5, torch.randn(3, 4), torch.randn(3, 4)
    out = torch.empty(3, 4, device=N)
    torch.where(c.to(N), a.to(N), b.to(N), out=out)
    assert_close(out, torch.where(c, a, b))
    same(lambda t: t.masked_fill(c.to(t.device), -1.0), a)


@pytest.mark.parametrize("opt", ["adamw", "sgd"])
def test_clip_grad_norm_and_optimizer_steps(opt):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3))
    dev = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3))
    dev.load_state_dict(model.state_dict())
    dev.to(N)
    make = (lambda p: torch.optim.AdamW(p, lr=1e-2, weight_decay=0.1)) if opt == "adamw" \
        else (lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True))
    oc, on = make(model.parameters()), make(dev.parameters())
    for step in range(3):
        x, y = torch.randn(5, 6) * 4, torch.randn(5, 3)
        for m, o, xx, yy in ((model, oc, x, y), (dev, on, x.to(N), y.to(N))):
            o.zero_grad()
            F.mse_loss(m(xx), yy).backward()
            norm = torch.nn.utils.clip_grad_norm_(m.parameters(), 0.5)
            torch.nn.utils.clip_grad_value_(m.parameters(), 0.1)
            o.step()
            if m is model:
                want_norm = norm
        assert_close(norm, want_norm)
    for p, q in zip(model.parameters(), dev.parameters()):
        assert_close(q, p.detach())

# SPDX-License-Identifier: MIT
"""torch.autocast("neuron"): PyTorch's autocast lists, bfloat16 by default."""
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from conftest import assert_close

N = "neuron"


def test_autocast_disabled_is_a_no_op():
    """Training scripts write autocast(..., enabled=False) unconditionally."""
    a, b = torch.randn(4, 8, device=N), torch.randn(8, 3, device=N)
    with torch.autocast("neuron", enabled=False):
        y = a @ b
    assert y.dtype == torch.float32
    assert_close(y, a.cpu() @ b.cpu())


def test_autocast_policies_follow_pytorch_lists():
    a, b = torch.randn(4, 8), torch.randn(8, 3)
    an, bn = a.to(N), b.to(N)
    assert torch.get_autocast_dtype("neuron") == torch.bfloat16
    with torch.autocast("neuron"):
        mm = an @ bn                       # lower precision list
        sm = F.softmax(mm, dim=1)          # float32 list (set opt dtype)
        ex = torch.exp(mm)                 # float32 list
        lin = F.linear(an, bn.t())
    with torch.autocast("cpu", dtype=torch.bfloat16):
        want = a @ b
    assert mm.dtype == torch.bfloat16 and lin.dtype == torch.bfloat16
    assert sm.dtype == torch.float32 and ex.dtype == torch.float32
    assert_close(mm, want, dtype=torch.bfloat16)
    assert_close(ex, torch.exp(want.float()), rtol=1e-5)


def test_autocast_float16_is_supported():
    """float16 is a type of the card: autocast runs matmuls in it
    (test_dtypes.py compares with the CPU)."""
    assert torch.neuron.get_amp_supported_dtype() == [torch.float16, torch.bfloat16]
    assert torch.neuron.is_bf16_supported()
    with torch.autocast("neuron", dtype=torch.float16):
        y = torch.randn(2, 2, device=N) @ torch.randn(2, 2, device=N)
    assert y.dtype == torch.float16


def test_autocast_training_step_matches_cpu():
    """A bfloat16 autocast step: the same loss and gradients as the CPU's
    bfloat16 autocast step, within bfloat16's precision."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.Linear(32, 4))
    x, t = torch.randn(8, 16), torch.randint(0, 4, (8,))
    ref = [p.detach().clone() for p in model.parameters()]

    def step(dev):
        m = model.to(dev)
        with torch.no_grad():
            for p, r in zip(m.parameters(), ref):
                p.copy_(r)
        m.zero_grad()
        with torch.autocast(dev, dtype=torch.bfloat16):
            loss = F.cross_entropy(m(x.to(dev)), t.to(dev))
        loss.backward()
        # Copies: the next model.to() moves the gradients themselves (as
        # .cuda() does), and with them any reference to them.
        return loss.detach().cpu(), [p.grad.detach().cpu().clone() for p in m.parameters()]

    want_loss, want_grads = step("cpu")
    got_loss, got_grads = step(N)
    assert got_loss.dtype == torch.float32
    torch.testing.assert_close(got_loss, want_loss, rtol=2e-2, atol=2e-2)
    for g, w in zip(got_grads, want_grads):
        torch.testing.assert_close(g, w, rtol=5e-2, atol=2e-2)

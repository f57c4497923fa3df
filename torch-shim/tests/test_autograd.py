# Owner(s): ["module: PrivateUse1"]
# SPDX-License-Identifier: MIT
"""Autograd on the card: gradients against the CPU's, and a model whose
training curve on "neuron" follows the CPU's."""
import os
import sys

import pytest
import torch
import torch.nn.functional as F

from conftest import assert_close

N = "neuron"


def grads(fn, *inputs):
    xs = [x.detach().clone().requires_grad_(x.is_floating_point()) for x in inputs]
    out = fn(*xs)
    out.backward(torch.ones_like(out))
    return out, [x.grad for x in xs if x.requires_grad]


CASES = {
    "arith": lambda a, b: (a * b + a / (b.abs() + 1) - a.exp() * 0.1).sum(1),
    "activations": lambda a, b: F.gelu(a) + F.silu(b) + torch.tanh(a) * torch.sigmoid(b) + F.relu(a - b),
    "matmul": lambda a, b: (a @ b.t()).relu(),
    "softmax": lambda a, b: F.softmax(a, -1) * b + F.log_softmax(b, 0),
    "reduce": lambda a, b: a.amax(1, keepdim=True) * b.mean(0) + a.sum(),
    "layer_norm": lambda a, b: F.layer_norm(a, (a.shape[-1],)) * b,
    "broadcast": lambda a, b: a[:, :1] * b[0] + a.t().t()[0],
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradients_match_cpu(name):
    """Forward and input gradients of composite expressions."""
    a, b = torch.randn(6, 8), torch.randn(6, 8)
    out_c, g_c = grads(CASES[name], a, b)
    out_n, g_n = grads(CASES[name], a.to(N), b.to(N))
    assert_close(out_n, out_c.detach(), atol=1e-4)
    for gn, gc in zip(g_n, g_c):
        assert_close(gn, gc, atol=1e-4)


def test_embedding_and_cross_entropy_gradients():
    """The backward of embedding (index_add) and of cross_entropy (scatter_add)."""
    w = torch.randn(11, 4)
    ids = torch.tensor([[1, 5, 5], [0, 10, 1]])
    tgt = torch.tensor([3, 0, 10, 1, 1, 7])

    def f(weight, dev):
        emb = F.embedding(ids.to(dev), weight)
        logits = emb.reshape(6, 4) @ weight.t()
        return F.cross_entropy(logits, tgt.to(dev))

    wc = w.clone().requires_grad_()
    f(wc, "cpu").backward()
    wn = w.to(N).requires_grad_()
    f(wn, N).backward()
    assert_close(wn.grad, wc.grad, atol=1e-5)


def test_mlp_training_matches_cpu():
    """40 steps of the MLP example (the loss falls to about a quarter, 96%
    accuracy): the loss curve on neuron follows the CPU's."""
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples"))
    import mlp

    losses_n, acc_n = mlp.train(N, 40, 64, quiet=True)
    losses_c, acc_c = mlp.train("cpu", 40, 64, quiet=True)
    for ln, lc in zip(losses_n, losses_c):
        assert ln == pytest.approx(lc, rel=1e-3, abs=1e-4)
    assert losses_n[-1] < 0.6 * losses_n[0]
    assert abs(acc_n - acc_c) < 0.02


def test_optimizers():
    """SGD with momentum and AdamW (foreach path) step like on the CPU."""
    for make in [lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, weight_decay=1e-2),
                 lambda p: torch.optim.AdamW(p, lr=1e-2, weight_decay=1e-2),
                 lambda p: torch.optim.Adam(p, lr=1e-2)]:
        results = []
        for dev in ["cpu", N]:
            torch.manual_seed(0)
            w = torch.randn(5, 3).to(dev).requires_grad_()
            opt = make([w])
            for _ in range(5):
                loss = (w * w).sum() + w.sum()
                opt.zero_grad()
                loss.backward()
                opt.step()
            results.append(w.detach().cpu())
        torch.testing.assert_close(results[1], results[0], rtol=1e-5, atol=1e-6)

# SPDX-License-Identifier: MIT
"""examples/gpt2.py --kernels: the attention of every block
(examples/kernels/attention.py, causal), the loss (cross_entropy.py) and
the optimizer step (adamw.py's FusedAdamW) are the example kernels, and
GPT-2 trains with the losses it has without them, step by step: float32
within rtol 1e-4 (the kernels sum in another order than the composed
operators: the losses agree to ~1e-7 over these steps), autocast within
1e-2 (the kernel attention and SDPA under autocast round to bfloat16 or
float16 at other places: the losses agree to ~2e-4), and under
torch.compile(backend="neuron") with every graph compiled. What --kernels
cannot do is refused: dropout, a device other than the card."""
import functools
import os
import sys

import pytest
import torch
import torch_neuron

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples"))
import gpt2  # noqa: E402

N = "neuron"
STEPS = 3


@pytest.fixture(autouse=True)
def _no_fallback(monkeypatch):
    monkeypatch.setenv("TORCH_NEURON_FALLBACK", "error")


@functools.lru_cache(maxsize=None)
def plain_losses(amp=""):
    """gpt2.py without --kernels on the card (test_examples.py: the CPU's)."""
    return gpt2.train(N, STEPS, amp, batch=8, quiet=True)


def kernel_losses():
    return gpt2.train(N, STEPS, batch=8, quiet=True, kernels=True)


@pytest.fixture
def calls(monkeypatch):
    """Count the calls gpt2.py makes into the kernels."""
    k = gpt2.load_kernels()
    n = {"attention": 0, "cross_entropy": 0, "adamw_step": 0}

    def counted(name, fn):
        def wrapper(*args, **kwargs):
            n[name] += 1
            return fn(*args, **kwargs)
        return wrapper

    class CountedAdamW(k.FusedAdamW):
        def step(self, closure=None):
            n["adamw_step"] += 1
            return super().step(closure)

    monkeypatch.setattr(k, "attention", counted("attention", k.attention))
    monkeypatch.setattr(k, "cross_entropy", counted("cross_entropy", k.cross_entropy))
    monkeypatch.setattr(k, "FusedAdamW", CountedAdamW)
    return n


def test_gpt2_kernels_train_like_composed_operators(calls):
    got = kernel_losses()
    # every block's attention, the loss and the optimizer step of each step
    assert calls == {"attention": 2 * STEPS, "cross_entropy": STEPS, "adamw_step": STEPS}
    assert got == pytest.approx(plain_losses(), rel=1e-4)
    assert got[-1] < got[0]


@pytest.mark.parametrize("amp", ["bfloat16", "float16"])
def test_gpt2_kernels_autocast(amp, calls):
    """Under autocast the attention kernel gets the Linear's bfloat16 (or
    float16) q, k, v and runs in that dtype (no autocast rule; statistics
    in float32), its backward too; the loss kernel runs in float32
    (declared autocast=torch.float32), as F.cross_entropy does."""
    if getattr(torch, amp) not in torch.neuron.get_amp_supported_dtype():
        pytest.skip(f"{amp} autocast is not supported on neuron yet")
    got = gpt2.train(N, STEPS, amp, batch=8, quiet=True, kernels=True)
    assert calls["attention"] == 2 * STEPS and calls["cross_entropy"] == STEPS
    assert got == pytest.approx(plain_losses(amp), rel=1e-2)
    # autocast did compute in the lower precision: not float32's numbers
    assert got != pytest.approx(plain_losses(), rel=1e-6)


@pytest.mark.slow
def test_gpt2_kernels_compiled(fresh_compile):
    """--compile --kernels: the kernels' operators are nodes of the compiled
    forward and backward graphs (one dynamo graph, no break, no eager
    graph) and compute there what they compute in eager: the losses of
    eager --kernels exactly (tolerance 0, as test_compile_examples.py)."""
    got = gpt2.train(N, STEPS, batch=8, quiet=True, kernels=True, compile=True)
    s = torch_neuron.compile_stats()
    assert s["eager_graphs"] == 0, s["eager_fallbacks"]
    assert s["dynamo_graphs"] == 1 and s["graphs"] == 2  # forward, backward
    assert got == kernel_losses()          # eager --kernels
    assert got == pytest.approx(plain_losses(), rel=1e-4)


def test_gpt2_kernels_refuse_what_they_cannot_do():
    with pytest.raises(ValueError, match="has no dropout"):
        gpt2.train(N, 1, dropout=0.1, kernels=True)
    with pytest.raises(ValueError, match="not on 'cpu'"):
        gpt2.train("cpu", 1, kernels=True)

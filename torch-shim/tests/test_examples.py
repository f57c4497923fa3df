# SPDX-License-Identifier: MIT
"""The examples train on the card with the CPU's loss curve, every operator
on the card (TORCH_NEURON_FALLBACK=error, and the conftest's count):
examples/vit.py and examples/gpt2.py (float32, and with --amp: bfloat16
autocast; float16 autocast with a GradScaler). resnet.py: test_resnet.py;
lstm.py: test_rnn.py.

Tolerances: float32 losses within rtol 1e-4 of the CPU's (matmuls and
reductions sum in another order: the losses agree to ~1e-6 over these
steps). Autocast: the CPU under torch.autocast("cpu", same dtype) is the
reference; the two backends' autocast lists differ in a few operators
(PrivateUse1 follows CUDA's), so the losses agree within 1e-2 relative,
about one bfloat16 rounding, over these steps."""
import functools
import os
import sys

import pytest
import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples"))
import gpt2  # noqa: E402
import vit  # noqa: E402

N = "neuron"


@pytest.fixture(autouse=True)
def _no_fallback(monkeypatch):
    monkeypatch.setenv("TORCH_NEURON_FALLBACK", "error")


@functools.lru_cache(maxsize=None)
def gpt2_losses(dev, amp=""):
    return gpt2.train(dev, 3, amp, batch=8, quiet=True)


@pytest.mark.slow
def test_vit_trains_like_cpu():
    got = vit.train(N, 3, batch=8, quiet=True)
    want = vit.train("cpu", 3, batch=8, quiet=True)
    assert got == pytest.approx(want, rel=1e-4)


def test_gpt2_trains_like_cpu():
    got, want = gpt2_losses(N), gpt2_losses("cpu")
    assert got == pytest.approx(want, rel=1e-4)
    assert got[-1] < got[0]


@pytest.mark.slow
@pytest.mark.parametrize("amp", ["bfloat16", "float16"])
def test_gpt2_amp_trains_like_cpu(amp):
    """--amp: autocast in @amp; float16 scales the loss with a GradScaler."""
    if getattr(torch, amp) not in torch.neuron.get_amp_supported_dtype():
        pytest.skip(f"{amp} autocast is not supported on neuron yet")
    got = gpt2_losses(N, amp)
    assert got == pytest.approx(gpt2_losses("cpu", amp), rel=1e-2)
    # autocast did compute in the lower precision: not float32's numbers
    assert got != pytest.approx(gpt2_losses(N), rel=1e-6)

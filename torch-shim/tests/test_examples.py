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


def test_vit_trains_like_cpu():
    got = vit.train(N, 3, batch=8, quiet=True)
    want = vit.train("cpu", 3, batch=8, quiet=True)
    assert got == pytest.approx(want, rel=1e-4)
    assert got[-1] < got[0]


def test_gpt2_trains_like_cpu():
    got = gpt2.train(N, 3, quiet=True)
    want = gpt2.train("cpu", 3, quiet=True)
    assert got == pytest.approx(want, rel=1e-4)
    assert got[-1] < got[0]


def test_gpt2_amp_bfloat16_trains_like_cpu():
    got = gpt2.train(N, 3, "bfloat16", quiet=True)
    want = gpt2.train("cpu", 3, "bfloat16", quiet=True)
    assert got == pytest.approx(want, rel=1e-2)
    # autocast did compute in bfloat16: not float32's numbers
    assert got != pytest.approx(gpt2.train(N, 3, quiet=True), rel=1e-6)


def test_gpt2_amp_float16_with_grad_scaler_trains_like_cpu():
    if torch.float16 not in torch.neuron.get_amp_supported_dtype():
        pytest.skip("float16 autocast is not supported on neuron yet")
    got = gpt2.train(N, 3, "float16", quiet=True)
    want = gpt2.train("cpu", 3, "float16", quiet=True)
    assert got == pytest.approx(want, rel=1e-2)
    assert got != pytest.approx(gpt2.train(N, 3, quiet=True), rel=1e-6)

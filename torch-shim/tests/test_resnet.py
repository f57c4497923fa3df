# SPDX-License-Identifier: MIT
"""examples/resnet.py (torchvision's ResNet-18) trains on the card with the
CPU's losses (rtol 1e-3 over two steps), with no operator falling back to
the CPU (TORCH_NEURON_FALLBACK=error, and the conftest's count)."""
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples"))
resnet = pytest.importorskip("resnet", reason="torchvision is not installed",
                             exc_type=ImportError)


@pytest.mark.slow
@pytest.mark.parametrize("optimizer", ["sgd", "adamw"])
def test_resnet18_trains_like_cpu(optimizer, monkeypatch):
    monkeypatch.setenv("TORCH_NEURON_FALLBACK", "error")
    got = resnet.train("neuron", 2, 4, optimizer, quiet=True)
    want = resnet.train("cpu", 2, 4, optimizer, quiet=True)
    assert got == pytest.approx(want, rel=1e-3)

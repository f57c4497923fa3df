# SPDX-License-Identifier: MIT
"""examples/resnet.py (torchvision's ResNet-18) trains on the card with the
CPU's losses, with no operator falling back to the CPU (the conftest)."""
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples"))
resnet = pytest.importorskip("resnet", reason="torchvision is not installed",
                             exc_type=ImportError)


@pytest.mark.slow
@pytest.mark.parametrize("optimizer", ["sgd", "adamw"])
def test_resnet18_trains_like_cpu(optimizer):
    got = resnet.train("neuron", 2, 8, optimizer, quiet=True)
    want = resnet.train("cpu", 2, 8, optimizer, quiet=True)
    assert got == pytest.approx(want, rel=1e-3)

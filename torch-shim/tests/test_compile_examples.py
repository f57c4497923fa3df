# SPDX-License-Identifier: MIT
"""examples/mlp.py --compile and examples/gpt2.py --compile train with the
losses of eager `neuron`, exactly (tolerance 0: the kernels run the
instructions the eager operations encode, fused elementwise chains with the
same roundings), every graph compiled (no eager graph) and every operator
on the card (TORCH_NEURON_FALLBACK=error and the conftest's count)."""
import os
import sys

import pytest
import torch
import torch_neuron

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples"))
import gpt2  # noqa: E402
import mlp  # noqa: E402

N = "neuron"


@pytest.fixture(autouse=True)
def _no_fallback(fresh_compile, monkeypatch):
    monkeypatch.setenv("TORCH_NEURON_FALLBACK", "error")


def assert_all_compiled(steps):
    s = torch_neuron.compile_stats()
    assert s["eager_graphs"] == 0, s["eager_fallbacks"]
    assert s["graphs"] == 2 and s["captures"] == 2  # forward, backward
    assert s["launches"] == 2 * steps
    assert s["dynamo_recompiles"] == 0


def test_mlp_compiled_trains_like_eager():
    eager, acc = mlp.train(N, 3, 32, quiet=True)
    torch_neuron.reset_compile_stats()
    compiled, acc_c = mlp.train(N, 3, 32, quiet=True, compile=True)
    assert compiled == eager and acc_c == acc
    assert_all_compiled(3)


@pytest.mark.slow
def test_gpt2_compiled_trains_like_eager():
    eager = gpt2.train(N, 3, batch=8, quiet=True)
    torch_neuron.reset_compile_stats()
    compiled = gpt2.train(N, 3, batch=8, quiet=True, compile=True)
    assert compiled == eager
    assert compiled[-1] < compiled[0]
    assert_all_compiled(3)

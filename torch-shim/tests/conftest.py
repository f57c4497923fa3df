# SPDX-License-Identifier: MIT
"""Shared helpers of the torch_neuron tests (one Python process runs them all)."""
import pytest
import torch


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: longer end-to-end runs")


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(1234)


def assert_close(got, want, dtype=torch.float32, **kw):
    """Compare a neuron result with the CPU's; tolerances by dtype.

    float32: the card computes elementwise ops in double and rounds once, so
    results are within a few ulp of the CPU's; matmuls and reductions sum in
    another order: rtol 1e-4. bfloat16: one bf16 rounding apart: rtol 1.6e-2.
    """
    tol = {torch.float32: dict(rtol=1e-4, atol=1e-5),
           torch.bfloat16: dict(rtol=1.6e-2, atol=1e-2)}.get(dtype, dict(rtol=0, atol=0))
    tol.update(kw)
    assert got.device.type == "neuron", got.device
    torch.testing.assert_close(got.cpu(), want, **tol, equal_nan=True)

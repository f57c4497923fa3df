# SPDX-License-Identifier: MIT
"""torch.compile(model, backend="neuron"): compiled mode on the card.

The backend is registered in the torch_dynamo_backends entry-point group,
so it needs no import. Importing this package does not import dynamo; the
backend itself (aot.py) is loaded on its first use. See docs/compile.md.
"""
from .stats import reset as reset_compile_stats
from .stats import snapshot as compile_stats

__all__ = ["backend", "compile_stats", "reset_compile_stats"]


def backend(gm, example_inputs, **kwargs):
    """The dynamo backend "neuron" (AOTAutograd + captured kernels)."""
    # Not a submodule named `backend`: importing it would rebind this
    # package's attribute `backend` (the entry point's name) to the module.
    from .aot import neuron_backend

    return neuron_backend(gm, example_inputs, **kwargs)

# SPDX-License-Identifier: MIT
"""torch.compile(model, backend="neuron"): compiled mode on the card.

The backend is registered in the torch_dynamo_backends entry-point group,
so it needs no import. Importing this package does not import dynamo; the
backend itself (backend.py) is loaded on its first use. See docs/compile.md.
"""
from .stats import reset as reset_compile_stats
from .stats import snapshot as compile_stats

__all__ = ["backend", "compile_stats", "reset_compile_stats"]


def backend(gm, example_inputs, **kwargs):
    """The dynamo backend "neuron" (AOTAutograd + captured kernels)."""
    from .backend import neuron_backend

    # Importing the submodule `backend` set this package's attribute of that
    # name to the module: torch_neuron.compile.backend stays this function
    # (the one the entry point names), whatever ran before.
    globals()["backend"] = _entry
    return neuron_backend(gm, example_inputs, **kwargs)


_entry = backend

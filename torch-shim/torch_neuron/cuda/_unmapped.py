# SPDX-License-Identifier: MIT
"""What a CUDA program may call that has no neuron counterpart: each such
name is replaced by a callable that raises NotImplementedError naming the
CUDA API, so a program fails at that call, never later with other numbers.
"""
import types

_WHY = ("has no neuron counterpart; TORCH_NEURON_CUDA runs CUDA programs on "
        "neuron by mapping what has one (docs/cuda.md)")


class CudaApiNotMapped(NotImplementedError):
    """A CUDA-only API was called under TORCH_NEURON_CUDA."""


def unmapped(name, why=_WHY):
    """A callable standing for the CUDA API @name: calling it raises."""
    def stub(*args, **kwargs):
        raise CudaApiNotMapped(f"{name} is CUDA-only: it {why}")
    stub.__name__ = name.rsplit(".", 1)[-1]
    stub.__qualname__ = name
    stub.__doc__ = f"{name}: not available on neuron (TORCH_NEURON_CUDA, docs/cuda.md)."
    stub._neuron_cuda_unmapped = True
    return stub


class UnmappedModule(types.ModuleType):
    """A CUDA-only module (torch.cuda.nvtx, torch.cuda.jiterator, ...): every
    public attribute is a callable that raises naming it."""

    def __init__(self, name, why=_WHY):
        super().__init__(name, f"{name}: CUDA-only, not available on neuron (docs/cuda.md).")
        self._why = why

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return unmapped(f"{self.__name__}.{attr}", self._why)

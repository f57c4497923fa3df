# SPDX-License-Identifier: MIT
"""torch_neuron.kernels: write kernels for the card in Python.

    import torch_neuron.kernels as nk

    @nk.kernel
    def scaled_add(x, y, alpha: float):
        out = nk.empty(x.shape, x.dtype)
        nk.add(x, y, alpha, out=out)        # one BINARY instruction
        return out

A kernel's body is traced once per signature (tensor shapes, dtypes and
strides; the values of its other arguments) into a libneuron kernel,
compiled as torch.compile's graphs are, and launched by one C++ call on
later calls. `nk.op("lib::name")` makes it a PyTorch operator (autograd,
torch.compile, NeuronGraph, autocast). docs/kernels.md is the guide.
"""
from . import lang as _lang
from .jit import Kernel, kernel
from .lang import *  # noqa: F401,F403 -- the primitives
from .lang import BINARY, COMPARE, Tensor, UNARY
from .op import op
from .trace import KernelError

__all__ = ["Kernel", "KernelError", "Tensor", "kernel", "op"] + [
    n for n in dir(_lang) if not n.startswith("_") and n not in ("builtins", "numbers", "torch")]

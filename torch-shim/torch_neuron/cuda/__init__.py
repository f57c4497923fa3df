# SPDX-License-Identifier: MIT
"""Run a program written for CUDA on neuron, unchanged (docs/cuda.md).

Turned on, for the whole process and for good, by either of
  * TORCH_NEURON_CUDA=1 in the environment (read when the backend
    autoloads, i.e. at ``import torch``);
  * ``import torch_neuron.cuda`` (before the program's first use of CUDA);
  * ``python -m torch_neuron.cuda PROGRAM [ARG...]`` (or ``-m MODULE``),
    which imports it and runs the program, e.g. under
    ``torchrun ... -m torch_neuron.cuda train.py``.

Then "cuda" means "neuron": device strings and torch.device("cuda", i)
(_devices.py), torch.cuda.* (_namespace.py), autocast and GradScaler
(_amp.py), the "nccl" backend (_distributed.py). Devices made so say
"neuron" (``torch.device("cuda").type == "neuron"``), so a library that
compares device types takes its generic path, not a CUDA-only one; what
only CUDA has raises CudaApiNotMapped naming the CUDA API.
"""
from . import _amp, _devices, _distributed, _namespace
from ._unmapped import CudaApiNotMapped

__all__ = ["CudaApiNotMapped", "ENV", "enabled"]

ENV = "TORCH_NEURON_CUDA"
_on = False


def enabled() -> bool:
    """Whether CUDA programs are mapped to neuron in this process."""
    return _on


def _enable():
    global _on
    if _on:
        return
    _devices.install()
    _namespace.install()
    _amp.install()
    _distributed.install()
    _on = True


_enable()

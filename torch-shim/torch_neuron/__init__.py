# SPDX-License-Identifier: MIT
"""PyTorch backend for the virtual Trainium card: device "neuron".

Loaded automatically by ``import torch`` through the ``torch.backends``
entry point (set ``TORCH_DEVICE_BACKEND_AUTOLOAD=0`` to turn that off), so
``torch.device("neuron")`` works with no import.
"""
import os


def _autoload():
    """Entry point of the torch.backends group: importing did the work.
    Defined before ``import torch``: when this package is imported first
    (``python -m torch_neuron.cuda``), torch's autoload finds it while this
    module is still partly initialised; the rest runs once torch is in."""


import torch  # noqa: E402

_LIB = os.path.join(os.path.dirname(__file__), "lib", "libtorch_neuron.so")
torch.ops.load_library(_LIB)

# The three registrations of a PrivateUse1 backend.
torch.utils.rename_privateuse1_backend("neuron")
from . import neuron as _device_module  # noqa: E402

torch._register_device_module("neuron", _device_module)
_device_module._set_default_autocast_dtype()
from .amp import _install_grad_scaler  # noqa: E402

_install_grad_scaler()  # GradScaler("neuron") without float64 (amp.py)
torch.utils.generate_methods_for_privateuse1_backend(for_storage=True)

from .modules import _install as _install_module_moves  # noqa: E402

_install_module_moves()  # module.to('neuron') keeps Parameters (modules.py)
from . import profiler  # noqa: E402,F401  (torch_neuron.profiler, profiler.py)
from . import distributed as _distributed  # noqa: E402

_distributed._register()  # init_process_group("neuron") (distributed.py)
from .dlpack import _install as _install_dlpack  # noqa: E402

_install_dlpack()  # torch.from_dlpack of neuron tensors (dlpack.py)
from .multiprocessing import _install as _install_multiprocessing  # noqa: E402

_install_multiprocessing()  # neuron tensors through torch.multiprocessing (multiprocessing.py)

# torch.utils.checkpoint saves and restores the random state of the device
# type of the checkpointed function's tensor arguments, or of its default
# type ("cuda") when none is on a device: with no CUDA, "neuron".
if not torch.cuda.is_available() and _device_module.is_available():
    import torch.utils.checkpoint  # noqa: E402

    torch.utils.checkpoint.DefaultDeviceType.set_device_type("neuron")


# Printing formats a tensor with many small operations (in float64); as
# PyTorch does for XLA and other devices, format a CPU copy instead (the
# device suffix still comes from the tensor itself). PyTorch 2.6 offers no
# hook for this: torch/_tensor_str.py copies to the CPU only for a fixed
# list of device types ("xla", "lazy", "ipu", "mtia"), so the formatter is
# wrapped here.
_tensor_str_orig = torch._tensor_str._tensor_str


def _tensor_str(self, indent):
    if self.device.type == "neuron":
        self = self.cpu()
    return _tensor_str_orig(self, indent)


torch._tensor_str._tensor_str = _tensor_str


# DataLoader(pin_memory=True) pins batches only for CUDA in PyTorch 2.6
# unless pin_memory_device names the device (later versions pin for the
# current accelerator); without CUDA, pin them for "neuron", as they do.
_dl_iter_init = torch.utils.data.dataloader._BaseDataLoaderIter.__init__


def _dl_iter_init_neuron(self, loader):
    if (loader.pin_memory and not loader.pin_memory_device
            and not torch.cuda.is_available() and _device_module.is_available()):
        loader.pin_memory_device = "neuron"
        try:
            _dl_iter_init(self, loader)
        finally:
            loader.pin_memory_device = ""
    else:
        _dl_iter_init(self, loader)


torch.utils.data.dataloader._BaseDataLoaderIter.__init__ = _dl_iter_init_neuron


# Debugging aid: operators listed here run through the CPU fallback instead
# of their neuron kernels (e.g. to check that tests notice a missing kernel).
if os.environ.get("TORCH_NEURON_DISABLE_KERNELS"):
    torch.ops.neuron.disable_kernels(os.environ["TORCH_NEURON_DISABLE_KERNELS"])


def fallback_stats():
    """Calls per operator that ran on the CPU: it has no neuron kernel, or the
    card cannot give the CPU's result for the inputs (the warning says which)."""
    names, counts = torch.ops.neuron.fallback_stats()
    return dict(zip(names, counts))


def reset_fallback_stats():
    """Forget the counts of fallback_stats()."""
    torch.ops.neuron.reset_fallback_stats()


def compile_stats():
    """Counters of compiled mode (torch.compile(backend="neuron")): graphs,
    captures, cache hits/misses/corrupt entries, compile time, launches,
    eager fallbacks with their reasons, kernels per graph, dynamo
    recompiles. See docs/compile.md."""
    from .compile import compile_stats as stats

    return stats()


def reset_compile_stats():
    """Zero the counters of compile_stats()."""
    from .compile import reset_compile_stats as reset

    reset()


_device_module.compile_stats = compile_stats
_device_module.reset_compile_stats = reset_compile_stats


# Programs written for CUDA run on neuron unchanged (docs/cuda.md):
# TORCH_NEURON_CUDA=1 maps "cuda" to "neuron", as `import torch_neuron.cuda` does.
if os.environ.get("TORCH_NEURON_CUDA", "") not in ("", "0"):
    from . import cuda  # noqa: E402,F401

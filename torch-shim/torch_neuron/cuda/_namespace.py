# SPDX-License-Identifier: MIT
"""torch.cuda.* answered by torch.neuron.*, and what CUDA alone has.

The module torch.cuda stays the same object (code that imported it before
still sees the change); each public name in its __all__ becomes:
  * torch.neuron's function or class of the same name (is_available,
    device_count, set_device, synchronize, Stream, Event, memory_allocated,
    manual_seed_all, get_rng_state, graph, ...), or one of a few aliases
    (CUDAGraph -> NeuronGraph, memory_cached -> memory_reserved, ...);
  * unchanged: exception classes (except torch.cuda.OutOfMemoryError still
    catches the card's out-of-memory error) and the legacy typed
    tensor/storage classes (they raise "not compiled with CUDA" on use);
  * otherwise a callable that raises naming the CUDA API (_unmapped.py).
torch.cuda.amp keeps its classes: autocast and GradScaler pass "cuda" to
torch.amp, which maps it (_amp.py). The CUDA-only submodules (nvtx,
jiterator, nccl, comm, profiler, tunable, gds) raise on any call.
"""
import sys

import torch

from ._devices import _NEURON, map_device
from ._unmapped import UnmappedModule, unmapped

# torch.cuda name -> torch.neuron name, where they differ.
_ALIASES = {
    "CUDAGraph": "NeuronGraph",
    "memory_cached": "memory_reserved",
    "max_memory_cached": "max_memory_reserved",
    "reset_max_memory_allocated": "reset_peak_memory_stats",
    "reset_max_memory_cached": "reset_peak_memory_stats",
    "init": "_lazy_init",
}
# Left as they are (see above), and the submodules handled one by one.
_KEEP = {"CudaError", "DeferredCudaCallError", "OutOfMemoryError", "amp", "graphs",
         "memory", "random", "streams", "sparse", "has_half", "has_magma"}
_CUDA_ONLY_MODULES = ["nvtx", "jiterator", "nccl", "comm", "profiler", "tunable", "gds"]
# get_device_properties(): what a neuron card's properties have no value for.
_CUDA_PROPERTIES = {"major", "minor", "multi_processor_count", "is_integrated",
                    "is_multi_gpu_board", "max_threads_per_multi_processor", "gcnArchName",
                    "uuid", "L2_cache_size", "warp_size", "regs_per_multiprocessor"}


def _device_index(device=None, optional=False, allow_cpu=False):
    """torch.cuda._utils._get_device_index, for neuron devices."""
    if device is None and optional:
        return torch.neuron.current_device()
    if isinstance(device, int):
        return device
    device = torch.device(map_device(device))
    if device.type == "cpu" and allow_cpu:
        return -1
    if device.type != _NEURON:
        raise ValueError(f"Expected a cuda device, but got: {device}")
    return torch.neuron.current_device() if device.index is None else device.index


class _Properties:
    """torch.cuda.get_device_properties(): the neuron card's, raising for the
    fields only a CUDA device has (compute capability, SM count, ...)."""

    def __init__(self, props):
        self._props = props

    def __getattr__(self, name):
        if name in _CUDA_PROPERTIES:
            raise AttributeError(
                f"torch.cuda.get_device_properties().{name} is CUDA-only: a neuron "
                "card has no such property (TORCH_NEURON_CUDA, docs/cuda.md)")
        return getattr(self._props, name)

    def __repr__(self):
        return repr(self._props)


def _get_device_properties(device=None):
    return _Properties(torch.neuron.get_device_properties(
        None if device is None else _device_index(device)))


def _counterpart(name):
    target = _ALIASES.get(name, name)
    return getattr(torch.neuron, target, None)


def _map_module(mod, names, prefix):
    for name in names:
        if name in _KEEP or name.endswith(("Storage", "Tensor")):
            continue
        if name in ("get_device_properties",):
            setattr(mod, name, _get_device_properties)
            continue
        new = _counterpart(name)
        if new is None:
            new = unmapped(f"{prefix}.{name}")
        setattr(mod, name, new)


def install():
    import torch.cuda
    cuda = torch.cuda
    _map_module(cuda, list(cuda.__all__), "torch.cuda")
    # Private names PyTorch's own Python calls once torch.cuda.is_available().
    cuda._lazy_init = torch.neuron._lazy_init
    cuda._get_device_index = _device_index
    cuda._utils._get_device_index = _device_index
    for sub in ("memory", "random", "streams", "graphs"):
        m = sys.modules.get(f"torch.cuda.{sub}")
        if m is not None:
            _map_module(m, [n for n in getattr(m, "__all__", []) if not n.startswith("_")],
                        f"torch.cuda.{sub}")
    for sub in _CUDA_ONLY_MODULES:
        stub = UnmappedModule(f"torch.cuda.{sub}")
        sys.modules[f"torch.cuda.{sub}"] = stub
        setattr(cuda, sub, stub)
    _install_cpp_extension()


def _install_cpp_extension():
    """CUDA extensions cannot build or run for neuron: say so at the call."""
    import torch.utils.cpp_extension as ext

    ext.CUDAExtension = unmapped("torch.utils.cpp_extension.CUDAExtension",
                                 "compiles CUDA kernels, which a neuron card cannot run")
    why = "compiles CUDA kernels (.cu sources, with_cuda=True), which a neuron card cannot run"
    for fname, has_cuda in (
            ("load", lambda a, kw: kw.get("with_cuda") or any(
                str(s).endswith((".cu", ".cuh")) for s in _as_list(
                    a[1] if len(a) > 1 else kw.get("sources", [])))),
            ("load_inline", lambda a, kw: kw.get("with_cuda") or bool(
                a[2] if len(a) > 2 else kw.get("cuda_sources")))):
        orig = getattr(ext, fname)

        def wrapper(*args, _orig=orig, _has=has_cuda, _name=fname, **kwargs):
            if _has(args, kwargs):
                unmapped(f"torch.utils.cpp_extension.{_name}(CUDA sources)", why)()
            return _orig(*args, **kwargs)

        wrapper.__doc__ = orig.__doc__
        setattr(ext, fname, wrapper)


def _as_list(x):
    return [x] if isinstance(x, str) else list(x)


# SPDX-License-Identifier: MIT
"""torch.neuron: the device module, in the image of torch.cuda.

PyTorch's own Python asks a device module for what torch.cuda has, by
name: torch.utils.checkpoint saves and restores a device's random state
only when ``getattr(module, "_initialized", False)`` is true,
torch.random.fork_rng calls get_rng_state/set_rng_state per index, DDP
and FSDP use ``device(i)``, Stream, Event and current_stream, the
DataLoader's pinning thread set_device, torch.load's map_location
device_count and is_available, torch._dynamo a registered
DeviceInterface. Each is given here with torch.cuda's meaning; the tests
in test_device_module.py exercise each of those callers.
"""
import torch

# Set by _lazy_init(), as torch.cuda's: whether this process has used the
# device from Python (torch.utils.checkpoint reads it).
_initialized = False


def device_count() -> int:
    """Number of neuron cards (0 when there is none or no driver)."""
    return int(torch.ops.neuron.device_count())


def is_available() -> bool:
    """Whether at least one neuron card can be used."""
    return device_count() > 0


def is_initialized() -> bool:
    """Whether this process has used the device (PyTorch called
    _lazy_init(): a tensor made on it, a module moved to it...)."""
    return _initialized and not _is_in_bad_fork()


def current_device() -> int:
    """Index of this thread's current neuron device."""
    return int(torch.ops.neuron.current_device())


def _index(dev) -> int:
    if isinstance(dev, int):
        return dev
    dev = torch.device(dev)
    if dev.type != "neuron":
        raise ValueError(f"expected a neuron device, got {dev}")
    return current_device() if dev.index is None else dev.index


def set_device(dev) -> None:
    """Make ``dev`` (an index, "neuron:N" or a torch.device) current."""
    torch.ops.neuron.set_device(_index(dev))


class device:
    """Context manager that makes ``dev`` (an index, "neuron:N", a
    torch.device) the current neuron device, as torch.cuda.device: None or
    a negative index changes nothing."""

    def __init__(self, dev):
        self.idx = -1 if dev is None else _index(dev)
        self.prev_idx = -1

    def __enter__(self):
        if self.idx >= 0:
            self.prev_idx = current_device()
            if self.prev_idx != self.idx:
                set_device(self.idx)

    def __exit__(self, *exc):
        if self.idx >= 0 and self.prev_idx != self.idx:
            set_device(self.prev_idx)
        return False


class device_of(device):
    """The device of tensor ``obj`` made current (nothing for a CPU tensor)."""

    def __init__(self, obj):
        super().__init__(obj.get_device() if obj.device.type == "neuron" else -1)


def _lazy_init() -> None:
    """Called by PyTorch before the device's first use from Python (a
    tensor made on it, ...); until then torch.accelerator.synchronize()
    does nothing. The cards open lazily: only their presence is checked."""
    global _initialized
    if _initialized:
        return
    if not is_available():
        raise RuntimeError("neuron: no neuron device (is neuron.ko loaded?)")
    _initialized = True


def _is_in_bad_fork() -> bool:
    """Whether this process was forked (no exec) from one that had used a
    neuron card: the card cannot be used here (its first use raises, saying
    to use spawn); torch.manual_seed and the DataLoader's workers skip it."""
    return bool(torch.ops.neuron.in_bad_fork())


def _device_index(dev=None) -> int:
    return current_device() if dev is None else _index(dev)


def synchronize(dev=None) -> None:
    """Wait until every stream of the device has finished the work issued so
    far; raises the first error of that work."""
    torch.ops.neuron.synchronize(_device_index(dev))


def get_device_name(dev=None) -> str:
    """Name of the card, with its PCI address."""
    return str(torch.ops.neuron.device_name(_device_index(dev)))


class _DeviceProperties:
    def __init__(self, index: int):
        cores, dma, mem, model = torch.ops.neuron.device_properties(index)
        self.name = get_device_name(index)
        self.neuron_cores = int(cores)
        self.dma_queues = int(dma)
        self.total_memory = int(mem)
        self.model_version = f"{int(model) >> 16}.{int(model) & 0xffff}"

    def __repr__(self):
        return (f"_NeuronDeviceProperties(name='{self.name}', neuron_cores="
                f"{self.neuron_cores}, total_memory={self.total_memory >> 20}MB)")


def get_device_properties(dev=None) -> _DeviceProperties:
    """Cores, DMA queues, memory and model version of the card."""
    return _DeviceProperties(_device_index(dev))


from .graphs import NeuronGraph, graph, is_current_stream_capturing  # noqa: E402,F401
from .streams import Event, Stream, current_stream, default_stream, set_stream, stream  # noqa: E402,F401
from .memory import (empty_cache, max_memory_allocated, max_memory_reserved,  # noqa: E402,F401
                     mem_get_info, memory_allocated, memory_reserved, memory_stats,
                     memory_summary, reset_accumulated_memory_stats,
                     reset_peak_memory_stats)
from .random import (default_generators, get_rng_state, get_rng_state_all,  # noqa: E402,F401
                     initial_seed, manual_seed, manual_seed_all, seed, seed_all,
                     set_rng_state, set_rng_state_all)
from .amp import (_set_default_autocast_dtype, get_amp_supported_dtype,  # noqa: E402,F401
                  is_autocast_available, is_bf16_supported)

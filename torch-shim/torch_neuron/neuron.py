# SPDX-License-Identifier: MIT
"""torch.neuron: the device module, in the image of torch.cuda."""
import contextlib

import torch


def device_count() -> int:
    """Number of neuron cards (0 when there is none or no driver)."""
    return int(torch.ops.neuron.device_count())


def is_available() -> bool:
    """Whether at least one neuron card can be used."""
    return device_count() > 0


def is_initialized() -> bool:
    """Devices are opened lazily; the module itself is always ready."""
    return True


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


@contextlib.contextmanager
def device(dev):
    """Context manager that makes ``dev`` the current neuron device."""
    prev = current_device()
    set_device(dev)
    try:
        yield
    finally:
        set_device(prev)


def synchronize(dev=None) -> None:
    """Wait for the device's work to finish (operations are synchronous)."""
    if dev is not None:
        _index(dev)


def manual_seed(seed: int) -> None:
    """Seed random numbers for neuron tensors (they are drawn on the CPU)."""
    torch.manual_seed(seed)


def manual_seed_all(seed: int) -> None:
    """Seed random numbers for every neuron device."""
    torch.manual_seed(seed)


def _is_in_bad_fork() -> bool:
    return False

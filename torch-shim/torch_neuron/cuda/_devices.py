# SPDX-License-Identifier: MIT
"""Where a CUDA program names a device: "cuda" becomes "neuron".

torch.device is a C type that parses "cuda" itself, so it is replaced by a
class of the same name whose call makes a real torch.device of the mapped
type: ``torch.device("cuda", 1)`` is ``device(type='neuron', index=1)``, and
``isinstance(d, torch.device)`` holds for every real device (the metaclass
answers for the C type). A library reading ``.type`` sees "neuron", never a
CUDA device. Strings that reach PyTorch's C++ parser without passing
through torch.device (``device="cuda"``, ``x.to("cuda:1")``, ``map_location``)
are mapped at the functions that take them: the factory functions,
Tensor.to/cuda/new_*, Module.to, storages' .cuda(), torch.load's restore
location, torch.set_default_device, DataLoader's pin_memory_device.
"""
import functools

import torch

_Device = torch.device  # the C type: what every device object still is
_CUDA = "cuda"
_NEURON = "neuron"


def map_device(dev):
    """@dev with CUDA replaced by neuron: "cuda", "cuda:N", a torch.device of
    type cuda; anything else is returned as it is."""
    if isinstance(dev, str):
        if dev == _CUDA or dev.startswith(_CUDA + ":"):
            return _NEURON + dev[len(_CUDA):]
        return dev
    if isinstance(dev, _Device) and dev.type == _CUDA:
        return _Device(_NEURON, dev.index)
    return dev


def map_cuda_index(dev):
    """.cuda(dev)'s argument (None, an index, "cuda:N", a device) as a
    neuron device."""
    if dev is None:
        return _Device(_NEURON, torch.neuron.current_device())
    if isinstance(dev, int):
        return _Device(_NEURON, dev)
    dev = _Device(map_device(dev))
    if dev.type != _NEURON:
        raise ValueError(f"Tensor.cuda(): expected a CUDA device or index, got {dev}")
    return dev


class _DeviceMeta(type):
    """torch.device's replacement type: calling it makes a real torch.device
    (mapped); isinstance/issubclass answer for the C type."""

    def __call__(cls, *args, **kwargs):
        if args:
            args = (map_device(args[0]),) + args[1:]
        if "type" in kwargs:
            kwargs["type"] = map_device(kwargs["type"])
        return _Device(*args, **kwargs)

    def __instancecheck__(cls, obj):
        return isinstance(obj, _Device)

    def __subclasscheck__(cls, sub):
        return issubclass(sub, _Device)

    def __getattr__(cls, name):  # class attributes of the C type
        return getattr(_Device, name)


class device(metaclass=_DeviceMeta):  # noqa: N801 -- torch.device's name
    __doc__ = _Device.__doc__


device.__module__ = "torch"
device.__qualname__ = "device"


def _mapping_kwargs(fn, key="device"):
    """@fn with its keyword @key mapped."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if key in kwargs:
            kwargs[key] = map_device(kwargs[key])
        return fn(*args, **kwargs)
    wrapper._neuron_cuda_orig = fn
    return wrapper


def _mapping_first_and_kwargs(fn):
    """@fn with its first positional argument and device= mapped (Tensor.to,
    Module.to, set_default_device, pin_memory, ...)."""
    @functools.wraps(fn)
    def wrapper(self, *args, **kwargs):
        if args:
            args = (map_device(args[0]),) + args[1:]
        if "device" in kwargs:
            kwargs["device"] = map_device(kwargs["device"])
        return fn(self, *args, **kwargs)
    wrapper._neuron_cuda_orig = fn
    return wrapper


# Factory functions not in torch.utils._device._device_constructors() that
# take device= too.
_MORE_FACTORIES = ["empty_like", "zeros_like", "ones_like", "full_like", "rand_like",
                   "randn_like", "randint_like", "normal", "from_file", "frombuffer",
                   "sparse_coo_tensor", "tensor", "as_tensor", "asarray"]


def _install_factories():
    from torch.utils._device import _device_constructors
    fns = set(_device_constructors())
    fns.update(getattr(torch, n) for n in _MORE_FACTORIES if hasattr(torch, n))
    for fn in fns:
        mod = torch.fft if fn in (torch.fft.fftfreq, torch.fft.rfftfreq) else \
            torch.nested if fn is torch.nested.nested_tensor else torch
        name = fn.__name__
        if getattr(mod, name, None) is fn:
            setattr(mod, name, _mapping_kwargs(fn))


def _tensor_cuda(self, device=None, non_blocking=False, memory_format=torch.preserve_format):
    """Tensor.cuda() under TORCH_NEURON_CUDA: a copy on the neuron card
    (the current one, or the index/"cuda:N" given)."""
    return self.to(map_cuda_index(device), non_blocking=non_blocking,
                   memory_format=memory_format)


def _storage_cuda(self, device=None, non_blocking=False):
    """Storage.cuda() under TORCH_NEURON_CUDA: the storage on the neuron card."""
    return self.to(device=map_cuda_index(device), non_blocking=non_blocking)


def _cuda_array_interface(self):
    raise AttributeError(
        "__cuda_array_interface__: a neuron tensor is not CUDA memory (TORCH_NEURON_CUDA "
        "maps CUDA programs to neuron; copy it to the CPU for CUDA libraries)")


def _install_tensor_methods():
    T = torch.Tensor
    for name in ("to", "new_empty", "new_zeros", "new_ones", "new_full", "new_tensor",
                 "new_empty_strided", "pin_memory", "is_pinned"):
        setattr(T, name, _mapping_first_and_kwargs(getattr(T, name))
                if name in ("to", "pin_memory", "is_pinned")
                else _mapping_kwargs(getattr(T, name)))
    T.cuda = _tensor_cuda
    # A program asks is_cuda for "is it on the accelerator"; its device's
    # type still says "neuron" to libraries that compare types.
    T.is_cuda = property(lambda self: self.device.type in (_NEURON, _CUDA),
                         doc="True for a neuron tensor under TORCH_NEURON_CUDA")
    T.__cuda_array_interface__ = property(_cuda_array_interface)
    torch.UntypedStorage.cuda = _storage_cuda
    torch.TypedStorage.cuda = _storage_cuda
    torch.nn.Module.to = _mapping_first_and_kwargs(torch.nn.Module.to)
    torch.nn.Module.to_empty = _mapping_kwargs(torch.nn.Module.to_empty)


def _install_load():
    """torch.load: "cuda:N" locations (a checkpoint saved on a GPU, or
    map_location naming CUDA) restore onto neuron:N."""
    import torch.serialization as ser
    orig = ser.default_restore_location

    @functools.wraps(orig)
    def default_restore_location(storage, location):
        return orig(storage, map_device(location))

    ser.default_restore_location = default_restore_location


def _install_dataloader():
    """DataLoader(pin_memory=True[, pin_memory_device="cuda"]) pins for neuron."""
    from torch.utils.data import dataloader as dl
    orig = dl._BaseDataLoaderIter.__init__

    @functools.wraps(orig)
    def __init__(self, loader):
        want = loader.pin_memory_device
        if loader.pin_memory and (not want or map_device(want) != want):
            loader.pin_memory_device = _NEURON
            try:
                return orig(self, loader)
            finally:
                loader.pin_memory_device = want
        return orig(self, loader)

    dl._BaseDataLoaderIter.__init__ = __init__


def install():
    _install_factories()
    _install_tensor_methods()
    _install_load()
    _install_dataloader()
    torch.set_default_device = _mapping_kwargs(
        _mapping_first(torch.set_default_device))
    torch.Generator = _generator_type()
    torch.device = device


def _mapping_first(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if args:
            args = (map_device(args[0]),) + args[1:]
        return fn(*args, **kwargs)
    return wrapper


def _generator_type():
    """torch.Generator(device="cuda") makes a neuron generator (the same
    replacement as torch.device's)."""
    gen = torch.Generator

    class _GeneratorMeta(type):
        def __call__(cls, device="cpu"):
            return gen(map_device(device))

        def __instancecheck__(cls, obj):
            return isinstance(obj, gen)

        def __subclasscheck__(cls, sub):
            return issubclass(sub, gen)

        def __getattr__(cls, name):
            return getattr(gen, name)

    class Generator(metaclass=_GeneratorMeta):
        __doc__ = gen.__doc__

    Generator.__module__ = "torch"
    return Generator

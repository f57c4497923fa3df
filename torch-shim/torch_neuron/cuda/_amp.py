# SPDX-License-Identifier: MIT
"""Autocast and loss scaling named for CUDA run on neuron.

torch.cuda.amp.autocast and torch.cuda.amp.GradScaler (deprecated but
common) are subclasses that pass "cuda" to torch.amp's classes; torch.amp's
autocast, GradScaler, custom_fwd and custom_bwd map their device type here,
so both spellings, and torch.autocast("cuda"), give neuron's autocast
(float16 where torch.cuda.amp asks for it) and neuron's GradScaler. The
autocast state functions (torch.is_autocast_enabled(), with no argument
meaning CUDA, or "cuda"; get/set_autocast_dtype; the *_gpu_dtype ones)
answer for neuron.
"""
import functools
import inspect

import torch

from ._devices import _NEURON, map_device


def _map_type(device_type):
    return map_device(device_type) if isinstance(device_type, str) else device_type


def _wrap_init(cls, key):
    """cls.__init__ with its first argument @key mapped, given or not
    (GradScaler's device defaults to "cuda")."""
    orig = cls.__init__
    default = inspect.signature(orig).parameters[key].default

    @functools.wraps(orig)
    def __init__(self, *args, **kwargs):
        if args:
            args = (_map_type(args[0]),) + args[1:]
        elif key in kwargs:
            kwargs[key] = _map_type(kwargs[key])
        elif default is not inspect.Parameter.empty:
            kwargs[key] = _map_type(default)
        orig(self, *args, **kwargs)

    cls.__init__ = __init__


def _wrap_device_type_kw(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if "device_type" in kwargs:
            kwargs["device_type"] = _map_type(kwargs["device_type"])
        return fn(*args, **kwargs)
    return wrapper


def _wrap_state(fn, no_arg_is_cuda):
    """torch.is_autocast_enabled & co.: "cuda" (or no device, which
    PyTorch reads as CUDA) asks about neuron."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if args and isinstance(args[0], str):
            args = (_map_type(args[0]),) + args[1:]
        elif no_arg_is_cuda and not args and "device_type" not in kwargs:
            args = (_NEURON,)
        if "device_type" in kwargs:
            kwargs["device_type"] = _map_type(kwargs["device_type"])
        return fn(*args, **kwargs)
    return wrapper


def install():
    import torch.amp.autocast_mode as am
    import torch.amp.grad_scaler as gs

    _wrap_init(am.autocast, "device_type")
    _wrap_init(gs.GradScaler, "device")
    for mod in (torch.amp, am):
        mod.custom_fwd = _wrap_device_type_kw(am.custom_fwd)
        mod.custom_bwd = _wrap_device_type_kw(am.custom_bwd)
    torch.is_autocast_enabled = _wrap_state(torch.is_autocast_enabled, True)
    torch.set_autocast_enabled = _wrap_state(torch.set_autocast_enabled, False)
    torch.get_autocast_dtype = _wrap_state(torch.get_autocast_dtype, False)
    torch.set_autocast_dtype = _wrap_state(torch.set_autocast_dtype, False)
    torch.get_autocast_gpu_dtype = lambda: torch.get_autocast_dtype(_NEURON)
    torch.set_autocast_gpu_dtype = lambda dtype: torch.set_autocast_dtype(_NEURON, dtype)
    for mod in (torch.amp, am):
        mod.is_autocast_available = _wrap_state(am.is_autocast_available, False)

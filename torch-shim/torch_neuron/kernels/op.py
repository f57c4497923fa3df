# SPDX-License-Identifier: MIT
"""nk.op: a kernel as a PyTorch operator (torch.library.custom_op).

The operator has a schema inferred from the kernel function's annotations,
the kernel as its neuron implementation, a fake implementation that runs
the body with no instruction (shapes and dtypes only: torch.compile traces
through it with fake tensors), and optionally an autocast rule. Its
backward is PyTorch's: `op.register_autograd(backward, setup_context=...)`,
the backward free to call other kernels' operators.
"""
import inspect
import typing

import torch

from . import jit
from . import trace as _trace

_AUTOCAST = torch._C.DispatchKey.AutocastPrivateUse1
_libs = {}


def _typing(a):
    """list[X] / tuple[X, ...] as typing.List / typing.Tuple: the spelling
    PyTorch 2.6's schema inference knows."""
    origin, args = typing.get_origin(a), typing.get_args(a)
    if origin is list:
        return typing.List[tuple(_typing(x) for x in args)] if args else a
    if origin is tuple:
        return typing.Tuple[tuple(_typing(x) for x in args)] if args else a
    return a


def _impl_fn(k):
    fn = k.fn
    sig = inspect.signature(fn)
    sig = sig.replace(parameters=[p.replace(annotation=_typing(p.annotation))
                                  for p in sig.parameters.values()],
                      return_annotation=_typing(sig.return_annotation))

    def impl(*args, **kwargs):
        values = k._values(args, kwargs)
        tensors, key = jit._flatten(values)
        return k.launch(values, tensors, key)

    def fake(*args, **kwargs):
        return k.abstract(k._values(args, kwargs))

    for f in (impl, fake):
        f.__signature__ = sig
        f.__annotations__ = {n: _typing(a) for n, a in
                             getattr(fn, "__annotations__", {}).items()}
        f.__name__ = fn.__name__
        f.__qualname__ = fn.__qualname__
        f.__module__ = fn.__module__
    return impl, fake


def _autocast(cop, qualname, dtype):
    """Under torch.autocast("neuron"), floating neuron tensor arguments are
    cast to @dtype ("autocast": the autocast dtype) before the kernel runs
    (as custom_fwd(cast_inputs=...) does for a CUDA function)."""
    ns, name = qualname.split("::")
    lib = _libs.get(ns)
    if lib is None:
        lib = _libs[ns] = torch.library.Library(ns, "FRAGMENT")

    def cast(v, dt):
        if isinstance(v, torch.Tensor) and v.is_floating_point() and v.device.type == "neuron":
            return v.to(dt)
        if isinstance(v, (list, tuple)):
            return type(v)(cast(x, dt) for x in v)
        return v

    def autocast_impl(*args, **kwargs):
        dt = torch.get_autocast_dtype("neuron") if dtype == "autocast" else dtype
        args = [cast(a, dt) for a in args]
        kwargs = {k: cast(v, dt) for k, v in kwargs.items()}
        with torch._C._ExcludeDispatchKeyGuard(torch._C.DispatchKeySet(_AUTOCAST)):
            return cop._opoverload(*args, **kwargs)

    lib.impl(name, autocast_impl, "AutocastPrivateUse1")


def op(qualname, *, mutates_args=(), autocast=None, schema=None):
    """Decorator: register a kernel (or a function, made a kernel) as the
    operator @qualname ("namespace::name") on the neuron device.

    mutates_args: the names of the tensor arguments the kernel writes (as
    torch.library.custom_op). autocast: None (the operator runs with the
    dtypes it is given, PyTorch's default for a custom operator), a dtype
    (floating inputs are cast to it under autocast), or "autocast" (cast to
    the autocast dtype). Returns torch's CustomOpDef: call it like a
    function, give it a backward with .register_autograd(...); the kernel is
    its .kernel attribute.
    """
    if autocast is not None and autocast != "autocast" and not isinstance(autocast, torch.dtype):
        raise ValueError(f"nk.op: autocast={autocast!r}: None, a dtype or 'autocast'")

    def wrap(k):
        if not isinstance(k, jit.Kernel):
            k = jit.Kernel(k, name=qualname)
        impl, fake = _impl_fn(k)
        try:
            cop = torch.library.custom_op(qualname, impl, mutates_args=mutates_args,
                                          device_types="neuron", schema=schema)
        except ValueError as e:
            raise _trace.KernelError(f"nk.op('{qualname}'): {e} (annotate every argument "
                                     "and the result: torch.Tensor, float, int, bool, "
                                     "list[torch.Tensor], ...)") from None
        cop.register_fake(fake)
        if autocast is not None:
            _autocast(cop, qualname, autocast)
        cop.kernel = k
        return cop

    return wrap

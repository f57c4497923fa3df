# SPDX-License-Identifier: MIT
"""nk.op: a kernel as a PyTorch operator (torch.library.custom_op).

The operator has a schema inferred from the kernel function's annotations,
the kernel as its neuron implementation, a fake implementation that runs
the body with no instruction (shapes and dtypes only: torch.compile traces
through it with fake tensors), and optionally an autocast rule. Its
backward is PyTorch's: `op.register_autograd(backward, setup_context=...)`,
the backward free to call other kernels' operators.

A call in plain eager code -- neuron tensors of no subclass, nothing to
record for autograd, no dispatch or function mode, no functorch transform,
autocast off when the operator has a rule, no profiler, no JIT trace --
launches the kernel directly: the dispatcher would only pass it through
custom_op's Python autograd and backend layers to the same launch (0.5 ms
a call in a TCG guest against 0.15 ms for the launch itself). Anything
else, and every call torch.compile traces, takes the operator.
"""
import inspect
import typing

import torch
from torch._library.custom_ops import CustomOpDef

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


_PLAIN = (torch.Tensor, torch.nn.Parameter)
_dispatch_depth = torch._C._len_torch_dispatch_stack
_function_modes = torch._C._is_torch_function_mode_enabled
_profiling = torch._C._autograd._profiler_enabled
_tracing = torch._C._get_tracing_state
_functorch = torch._C._functorch.peek_interpreter_stack


_SLOW = object()     # _direct(): take the operator


class KernelOpDef(CustomOpDef):
    """torch.library.custom_op's operator, with the direct eager path of
    the module's docstring (_direct)."""

    def __call__(self, *args, **kwargs):
        if not kwargs and not torch.compiler.is_compiling():
            r = self._direct(args)
            if r is not _SLOW:
                return r
        return self._opoverload(*args, **kwargs)

    def _direct(self, args):
        k = self.kernel
        if (self._nk_mutated is None or len(args) != len(k.signature.parameters)
                or _dispatch_depth() or _function_modes() or _profiling()
                or _tracing() is not None or _functorch() is not None
                or (self._nk_autocast and torch.is_autocast_enabled("neuron"))):
            return _SLOW
        tensors, key = jit._flatten(args)
        grad = torch.is_grad_enabled()
        for t in tensors:
            if type(t) not in _PLAIN or t.device.type != "neuron" or (grad and t.requires_grad):
                return _SLOW
        out = k.launch(args, tensors, key)
        for i in self._nk_mutated:        # as custom_op's ADInplaceOrView kernel
            torch.autograd.graph.increment_version(args[i])
        return out


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
        cop.__class__ = KernelOpDef          # adds only the direct path
        cop.kernel = k
        cop._nk_autocast = autocast is not None
        names = list(k.signature.parameters)
        cop._nk_mutated = (None if mutates_args == "unknown" else   # every argument: the operator
                           tuple(names.index(n) for n in mutates_args))
        return cop

    return wrap

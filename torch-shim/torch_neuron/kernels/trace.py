# SPDX-License-Identifier: MIT
"""The trace a kernel's body runs in, and the errors a kernel writer sees.

While a kernel is traced, this thread has one `Trace`: the card it is for,
the tensors the body allocated (kept alive until the kernel is compiled,
so that no two of them share bytes), the hidden random inputs the body
asked for (drawn before each launch, arguments of the kernel), and for every instruction the capture recorded, the Python
source line that issued it.
"""
import linecache
import os
import sys
import threading

import torch

_HERE = os.path.dirname(os.path.abspath(__file__))
_local = threading.local()


class KernelError(RuntimeError):
    """A kernel refused at trace time (or failing on the card): the message
    names the kernel and the line of its source that caused it."""


def site():
    """(filename, lineno) of the innermost frame outside this package: the
    kernel writer's line that called the language."""
    f = sys._getframe(1)
    while f is not None and os.path.dirname(os.path.abspath(f.f_code.co_filename)) == _HERE:
        f = f.f_back
    if f is None:
        return ("<unknown>", 0)
    return (f.f_code.co_filename, f.f_lineno)


def describe(where):
    """'file.py:12: `source text`' for a site."""
    filename, lineno = where
    text = linecache.getline(filename, lineno).strip()
    short = os.path.basename(filename)
    return f"{short}:{lineno}: `{text}`" if text else f"{short}:{lineno}"


class Trace:
    """One kernel's trace on @device. `abstract`: shapes only (a fake
    implementation for torch.compile): the primitives issue nothing."""

    def __init__(self, name, device, abstract=False):
        self.name = name
        self.device = device
        self.abstract = abstract
        self.keep = []        # tensors the body allocated
        self.hidden = []      # (kind, shape, dtype) of each random input
        self.hidden_tensors = []  # and its tensor in the trace
        self.lines = []       # per captured instruction: its site
        self.limit = int(torch.ops.neuron.kernel_max_insns()) if not abstract else 0

    def error(self, message, where=None):
        where = where or site()
        return KernelError(f"kernel '{self.name}', {describe(where)}: {message}")

    def emit(self, what, op, *args):
        """Run primitive @op (a torch.ops.neuron.k_* operator) and map the
        instructions it recorded to the caller's line. @what names the
        primitive in an error."""
        if self.abstract:
            return
        where = site()
        try:
            n = int(op(*args))
        except RuntimeError as e:
            msg = str(e).split("\n")[0]
            raise self.error(f"{what}: the card's instruction builder refused it: {msg}",
                             where) from None
        if n < 0:
            raise self.error(f"{what}: the trace stream stopped capturing (the capture "
                             "failed on an earlier instruction)", where)
        self.lines.extend([where] * (n - len(self.lines)))
        if n > self.limit:
            raise self.error(f"the kernel has {n} instructions, more than the card's "
                             f"{self.limit} per kernel (NISA_MAX_INSNS): tile less finely or "
                             "split the kernel", where)


def current():
    """This thread's trace, or None."""
    return getattr(_local, "trace", None)


def require(what):
    tr = current()
    if tr is None:
        raise KernelError(f"nk.{what}: a kernel primitive is called outside a kernel: it "
                          "is only valid in the body of an @nk.kernel function while it "
                          "is traced")
    return tr


class active:
    """Context: @trace is this thread's trace."""

    def __init__(self, trace):
        self.trace = trace

    def __enter__(self):
        if current() is not None:
            raise KernelError(f"kernel '{self.trace.name}' is traced while kernel "
                              f"'{current().name}' is: a kernel called from another "
                              "kernel's body is inlined, not traced again")
        _local.trace = self.trace
        return self.trace

    def __exit__(self, *exc):
        _local.trace = None
        return False

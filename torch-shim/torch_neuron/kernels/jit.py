# SPDX-License-Identifier: MIT
"""@nk.kernel: a Python function traced into a compiled libneuron kernel,
once per signature, and launched by one C++ call after that.

The compile path is torch.compile's (torch_neuron/compile/): a
torch.classes.neuron.GraphSet holds the kernels of one function, one per
signature (per tensor argument: device, dtype, sizes, strides, storage
sharing); the capture of the body's instructions is compiled by
nrn_graph_compile (scratch arena planned by liveness, elementwise chains
fused into EXPR); kernels are kept on disk in the compile cache. What is
not a tensor -- ints, floats, bools, strings, dtypes, None, tuples of
them -- is a constant of the kernel: each value compiles its own.
"""
import functools
import hashlib
import inspect
import os
import sys
import sysconfig
import threading
import time

import torch

from ..compile import cache, config, stats
from . import lang
from . import trace as _trace

_HERE = os.path.dirname(os.path.abspath(__file__))
_streams = {}
_streams_lock = threading.Lock()
_trace_locks = {}


def _trace_stream(index):
    """The stream kernels are traced on, per card: its own, so that a trace
    never meets a capture already open on the caller's stream (a kernel
    called inside torch.compile's capture or a NeuronGraph capture)."""
    with _streams_lock:
        s = _streams.get(index)
        if s is None:
            s = _streams[index] = torch.neuron.Stream(device=index)
            _trace_locks[index] = threading.Lock()
        return s, _trace_locks[index]


def _file_hash(path, _memo={}):
    try:
        st = os.stat(path)
    except OSError:
        return None
    key = (path, st.st_mtime_ns, st.st_size)
    h = _memo.get(key)
    if h is None:
        with open(path, "rb") as f:
            h = _memo[key] = hashlib.sha256(f.read()).hexdigest()
    return h


@functools.lru_cache(None)
def _language_hash():
    """The language's own sources: they decide which instructions a body makes."""
    h = hashlib.sha256()
    for name in sorted(os.listdir(_HERE)):
        if name.endswith(".py"):
            h.update(name.encode())
            h.update((_file_hash(os.path.join(_HERE, name)) or "").encode())
    return h.hexdigest()


_SKIP = tuple(os.path.abspath(p) + os.sep for p in
              {sysconfig.get_paths()["stdlib"], os.path.dirname(torch.__file__), _HERE})


class _Deps:
    """The Python files whose code ran while a body was traced (the kernel's
    own and its helpers'): a cache entry made from other versions of them
    is stale."""

    def __init__(self):
        self.files = set()

    def __call__(self, frame, event, arg):
        if event == "call":
            self.files.add(frame.f_code.co_filename)

    def hashes(self):
        out = {}
        for f in sorted(self.files):
            p = os.path.abspath(f)
            if not p.startswith(_SKIP) and os.path.isfile(p):
                out[p] = _file_hash(p)
        return out


def _flatten(values):
    """Split call values into (tensors, constants key, rebuild info)."""
    tensors, key = [], []
    for v in values:
        if isinstance(v, torch.Tensor):
            tensors.append(v)
            key.append(None)
        elif isinstance(v, (list, tuple)) and v and all(isinstance(t, torch.Tensor) for t in v):
            tensors.extend(v)
            key.append(("T", type(v).__name__, len(v)))
        else:
            key.append((type(v).__name__, v if not isinstance(v, torch.dtype) else str(v)))
    return tensors, tuple(key)


def _wrap(values, key, tensors):
    """The body's arguments: each tensor as an nk.Tensor."""
    out, it = [], iter(tensors)
    for v, k in zip(values, key):
        if k is None:
            out.append(lang.Tensor(next(it)))
        elif isinstance(k, tuple) and k and k[0] == "T":
            seq = [lang.Tensor(next(it)) for _ in range(k[2])]
            out.append(seq if k[1] == "list" else tuple(seq))
        else:
            out.append(v)
    return out


def _results(name, result):
    """The body's return value as (list of torch tensors, structure)."""
    if result is None:
        return [], "none"
    if isinstance(result, lang.Tensor):
        return [result._t], "one"
    if isinstance(result, (tuple, list)) and all(isinstance(r, lang.Tensor) for r in result):
        return [r._t for r in result], len(result)
    raise _trace.KernelError(f"kernel '{name}' returned {type(result).__name__}: a kernel "
                             "returns None, an nk.Tensor or a tuple of them")


def _shape_results(outs, structure):
    if structure == "none":
        return None
    if structure == "one":
        return outs[0]
    return tuple(outs)


class _Variant:
    """The kernels of one tuple of constants."""

    def __init__(self):
        self.set = torch.classes.neuron.GraphSet(config.kernels_per_graph(), config.flags())
        self.structure = None
        self.hidden = {}      # tensor geometry -> [(kind, shape, dtype)] of its kernel
        self.lines = {}       # signature text -> the source site of each captured insn


class Kernel:
    """A Python function compiled for the card (see @kernel)."""

    def __init__(self, fn, name=None):
        functools.update_wrapper(self, fn)
        self.fn = fn
        self.name = name or fn.__qualname__
        self.signature = inspect.signature(fn)
        self._variants = {}
        self._lock = threading.Lock()
        self._random = False
        src = inspect.getsourcefile(fn) or ""
        self._code_key = hashlib.sha256(
            f"{_file_hash(src)}|{fn.__module__}|{fn.__qualname__}|{_language_hash()}".encode()
        ).hexdigest()

    def __repr__(self):
        return f"<nk.kernel {self.name}>"

    # -- calls ---------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        if _trace.current() is not None:
            return self.fn(*args, **kwargs)     # inside another kernel: inlined
        values = self._values(args, kwargs)
        tensors, key = _flatten(values)
        if torch.is_grad_enabled() and any(t.requires_grad for t in tensors):
            raise _trace.KernelError(
                f"kernel '{self.name}' is called on tensors that require grad, and a kernel "
                "has no backward: register it as an operator with nk.op(...) and give it one "
                "(register_autograd), or call it under torch.no_grad() / on detached tensors")
        return self.launch(values, tensors, key)

    def _values(self, args, kwargs):
        if not kwargs and len(args) == len(self.signature.parameters):
            return args
        b = self.signature.bind(*args, **kwargs)
        b.apply_defaults()
        return tuple(b.arguments.values())

    def launch(self, values, tensors, key):
        """Run the kernel of these values (compiling it first if needed)."""
        v = self._variants.get(key)
        if v is None:
            with self._lock:
                v = self._variants.setdefault(key, _Variant())
        full = tensors
        if self._random:
            full = tensors + self._draw(v, tensors)
        prof = torch._C._autograd._profiler_enabled()
        if prof:
            with torch._C._profiler._RecordFunctionFast(f"nk.{self.name}"):
                outs = v.set.run(full)
        else:
            outs = v.set.run(full)
        if outs is None:
            outs = self._new_signature(v, values, tensors, key)
        return _shape_results(list(outs), v.structure)

    def _geometry(self, tensors):
        return tuple((t.dtype, tuple(t.shape), t.stride()) for t in tensors)

    def _draw(self, v, tensors):
        specs = v.hidden.get(self._geometry(tensors))
        if specs is None:
            return []
        dev = tensors[0].device
        out = []
        for kind, shape, dtype in specs:
            f = torch.rand if kind == "rand" else torch.randn
            out.append(f(shape, dtype=dtype, device=dev))
        return out

    # -- a signature without a kernel ----------------------------------------
    def _device(self, tensors):
        if not tensors:
            raise _trace.KernelError(f"kernel '{self.name}' has no tensor argument: a "
                                     "kernel runs on the card of its tensors")
        dev = tensors[0].device
        for t in tensors:
            if t.device.type != "neuron" or t.device != dev:
                raise _trace.KernelError(
                    f"kernel '{self.name}': its tensor arguments are on one neuron card; "
                    f"got {dev} and {t.device}")
        return dev

    def _new_signature(self, v, values, tensors, key):
        dev = self._device(tensors)
        sig = v.set.signature(tensors)
        ckey = self._cache_key(key, sig) if cache.enabled() else None
        if ckey and self._load(v, ckey, tensors):
            full = tensors + self._draw(v, tensors)
            return v.set.run(full)
        stats.add("cache_misses")
        t0 = time.perf_counter()
        full, outs, tr, deps, structure = self._trace(v, values, tensors, key, dev)
        try:
            info, plan = v.set.compile(full, outs)
        except RuntimeError as e:
            raise _trace.KernelError(
                f"kernel '{self.name}' cannot be compiled: {str(e).splitlines()[0]} -- it "
                "reads memory it never wrote (an nk.empty tensor read before it is written, "
                "or a tensor that is not one of its arguments), writes two arguments that "
                "overlap, or leaves part of a returned tensor unwritten") from None
        self._set_structure(v, structure)
        v.hidden[self._geometry(tensors)] = [h for h in tr.hidden]
        v.lines[sig] = tr.lines
        lines = [_trace.describe(w) for w in tr.lines]
        torch.ops.neuron.register_graph_sources(int(info[6]), f"kernel '{self.name}'", lines)
        if tr.hidden:
            self._random = True
        ms = (time.perf_counter() - t0) * 1e3
        stats.add("captures")
        stats.add("compile_ms", ms)
        stats.kernel_compiled(self.name, ms, int(info[1]), int(info[0]))
        if ckey:
            blob = v.set.serialize(full)
            meta = self._meta(plan)
            meta.update(deps=deps, structure=structure, lines=lines,
                        hidden=[[k, list(s), str(d)] for k, s, d in tr.hidden])
            cache.store(ckey, meta, blob.numpy().tobytes())
        del tr, full, outs
        return v.set.run(tensors + self._draw(v, tensors))

    def _set_structure(self, v, structure):
        if v.structure is not None and v.structure != structure:
            raise _trace.KernelError(
                f"kernel '{self.name}' returns {structure} results for these shapes and "
                f"{v.structure} for others: a kernel returns the same structure for every "
                "signature of its constants")
        v.structure = structure

    def _trace(self, v, values, tensors, key, dev):
        """Run the body on the trace stream while it captures."""
        stream, lock = _trace_stream(dev.index)
        tr = _trace.Trace(self.name, dev)
        deps = _Deps()
        with lock, torch.neuron.stream(stream):
            v.set.begin_kernel_capture(dev.index)
            error = None
            old = sys.getprofile()
            try:
                with _trace.active(tr):
                    sys.setprofile(deps)
                    try:
                        result = self.fn(*_wrap(values, key, tensors))
                    finally:
                        sys.setprofile(old)
                    outs, structure = _results(self.name, result)
            except BaseException as e:
                error = e
            finally:
                failed = v.set.end_capture()
        if error is not None:
            raise error
        if failed:
            raise _trace.KernelError(f"kernel '{self.name}': {failed}")
        return tensors + tr.hidden_tensors, outs, tr, deps.hashes(), structure

    # -- the disk cache ---------------------------------------------------------
    def _meta(self, plan=None):
        m = {"isa": int(torch.ops.neuron.isa_version()), "build": config.build_id(),
             "flags": config.flags(), "kernel": self.name}
        if plan is not None:
            m["plan"] = list(plan)
        return m

    def _cache_key(self, key, sig):
        meta = self._meta()
        text = (f"nk|{self._code_key}|{key!r}|{sig}|{meta['isa']}|{meta['build']}|"
                f"{meta['flags']}")
        return hashlib.sha256(text.encode()).hexdigest()

    def _load(self, v, ckey, tensors):
        t0 = time.perf_counter()
        entry = cache.load(ckey, self._meta())
        if entry is None:
            return False
        meta, blob = entry
        for path, h in (meta.get("deps") or {}).items():
            if _file_hash(path) != h:
                cache.drop(ckey, f"stale ({path} changed since the kernel was compiled)")
                return False
        hidden = [(k, tuple(s), getattr(torch, d.split(".")[-1])) for k, s, d in
                  meta.get("hidden", [])]
        dev = tensors[0].device
        full = tensors + [torch.empty(s, dtype=d, device=dev) for _k, s, d in hidden]
        try:
            info = v.set.load(full, torch.frombuffer(bytearray(blob), dtype=torch.uint8),
                              meta.get("plan", []))
        except RuntimeError as e:
            cache.drop(ckey, f"rejected ({e})")
            return False
        structure = meta.get("structure")
        self._set_structure(v, structure)
        torch.ops.neuron.register_graph_sources(int(info[6]), f"kernel '{self.name}'",
                                                list(meta.get("lines", [])))
        v.hidden[self._geometry(tensors)] = hidden
        if hidden:
            self._random = True
        ms = (time.perf_counter() - t0) * 1e3
        stats.add("cache_hits")
        stats.add("cache_load_ms", ms)
        stats.kernel_loaded(self.name, ms, int(info[1]), int(info[0]))
        return True

    # -- inspection ----------------------------------------------------------------
    def dump(self, *args, path, **kwargs):
        """Write the compiled kernel of these arguments' signature (compiled
        first if needed) to @path, in libneuron's graph format: what
        `neuron-objdump` prints."""
        values = self._values(args, kwargs)
        tensors, key = _flatten(values)
        with torch.no_grad():
            self.launch(values, tensors, key)
        v = self._variants[key]
        full = tensors + self._draw(v, tensors)
        blob = v.set.serialize(full)
        with open(path, "wb") as f:
            f.write(blob.numpy().tobytes())
        return path

    def sources(self, *args, **kwargs):
        """For each instruction the capture of these arguments' kernel
        recorded, 'file:line: `source`' (compiled first if needed)."""
        values = self._values(args, kwargs)
        tensors, key = _flatten(values)
        with torch.no_grad():
            self.launch(values, tensors, key)
        v = self._variants[key]
        lines = v.lines.get(v.set.signature(tensors))
        if lines is None:
            return None        # loaded from the disk cache: not traced here
        return [_trace.describe(w) for w in lines]

    # -- the fake implementation ---------------------------------------------------
    def abstract(self, values):
        """Outputs of the right shapes and dtypes on @values' device (fake
        tensors under torch.compile): the body run with no instruction."""
        tensors, key = _flatten(values)
        dev = tensors[0].device if tensors else torch.device("neuron", 0)
        tr = _trace.Trace(self.name, dev, abstract=True)
        with _trace.active(tr):
            result = self.fn(*_wrap(values, key, tensors))
            outs, structure = _results(self.name, result)
        return _shape_results(outs, structure)


def kernel(fn=None, *, name=None):
    """Decorator: @fn becomes a kernel for the card (docs/kernels.md)."""
    if fn is None:
        return lambda f: Kernel(f, name)
    return Kernel(fn, name)

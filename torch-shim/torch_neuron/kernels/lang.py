# SPDX-License-Identifier: MIT
"""The language: `nk.Tensor`, a view of card memory inside a kernel, and
the primitives, each one card instruction (docs/kernels.md).

A `Tensor` wraps a neuron tensor of the trace -- an argument, a view of
one, or memory the body allocated -- and offers only what the card does:
views (indexing with steps, transpose, permute, reshape without a copy,
broadcast), and operations that issue instructions. Values never come
back to Python while a kernel is traced: what depends on them is computed
on the card (`nk.where`), not by Python's `if`.
"""
import builtins
import numbers

import torch

from . import trace as _trace

float32, float64 = torch.float32, torch.float64
bfloat16, float16 = torch.bfloat16, torch.float16
int64, int32, int16, int8, uint8 = torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8
bool_ = torch.bool

_CARD_DTYPES = (float32, float64, bfloat16, float16, int64, int32, int16, int8, uint8, bool_)


def _err(message):
    tr = _trace.current()
    if tr is None:
        return _trace.KernelError(message)
    return tr.error(message)


def _flow(what):
    return _err(f"{what} of an nk.Tensor: a card value cannot steer Python control flow "
                "at trace time (values exist only on the card when the kernel runs); "
                "branch on shapes and constants, or compute both sides and select with "
                "nk.where")


class Tensor:
    """A view of card memory in a kernel being traced."""

    __slots__ = ("_t",)

    def __init__(self, t):
        self._t = t

    # -- what is known at trace time ------------------------------------
    @property
    def shape(self):
        return tuple(self._t.shape)

    @property
    def dtype(self):
        return self._t.dtype

    @property
    def ndim(self):
        return self._t.dim()

    @property
    def strides(self):
        """Element strides of the view."""
        return tuple(self._t.stride())

    def numel(self):
        return self._t.numel()

    def __len__(self):
        if not self.ndim:
            raise _err("len() of a 0-dim nk.Tensor")
        return self.shape[0]

    def __repr__(self):
        return f"nk.Tensor(shape={self.shape}, dtype={self.dtype})"

    def __iter__(self):
        """Rows along dim 0: a loop unrolled at trace time."""
        return (self[i] for i in range(len(self)))

    # -- what is not -----------------------------------------------------
    def __bool__(self):
        raise _flow("bool()")

    def __int__(self):
        raise _flow("int()")

    def __float__(self):
        raise _flow("float()")

    def __index__(self):
        raise _flow("use as an index")

    def item(self):
        raise _flow(".item()")

    def tolist(self):
        raise _flow(".tolist()")

    def __array__(self, *a, **k):
        raise _flow("conversion to NumPy")

    __hash__ = object.__hash__

    # -- views: no instruction ------------------------------------------
    def __getitem__(self, idx):
        return Tensor(self._t[_checked_index(self.shape, idx)])

    def transpose(self, a, b):
        _dim(self, a)
        _dim(self, b)
        return Tensor(self._t.transpose(a, b))

    @property
    def T(self):
        if self.ndim != 2:
            raise _err(f".T of a {self.ndim}-dim tensor: use transpose(a, b) or permute")
        return self.transpose(0, 1)

    def permute(self, *dims):
        dims = tuple(dims[0]) if len(dims) == 1 and isinstance(dims[0], (tuple, list)) else dims
        if sorted(d % builtins.max(self.ndim, 1) for d in dims) != list(range(self.ndim)):
            raise _err(f"permute{dims} of a {self.ndim}-dim tensor: not a permutation")
        return Tensor(self._t.permute(*dims))

    def reshape(self, *shape):
        shape = tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
        try:
            return Tensor(self._t.view(*shape))
        except RuntimeError:
            raise _err(f"reshape of {self.shape} (strides {self.strides}) to {shape}: not a "
                       "view of the same memory; copy it first (nk.copy into an nk.empty "
                       "of the new shape)") from None

    view = reshape

    def broadcast_to(self, shape):
        try:
            torch.broadcast_shapes(self.shape, tuple(shape))
            if len(shape) < self.ndim:
                raise RuntimeError
            return Tensor(self._t.expand(*shape))
        except RuntimeError:
            raise _err(f"broadcast of {self.shape} to {tuple(shape)}: the shapes do not "
                       "broadcast") from None

    expand = broadcast_to

    def unsqueeze(self, d):
        if not -self.ndim - 1 <= d <= self.ndim:
            raise _err(f"unsqueeze({d}) of a {self.ndim}-dim tensor")
        return Tensor(self._t.unsqueeze(d))

    def squeeze(self, d):
        _dim(self, d)
        if self.shape[d] != 1:
            raise _err(f"squeeze({d}) of shape {self.shape}: that dim is not 1")
        return Tensor(self._t.squeeze(d))

    # -- writes ------------------------------------------------------------
    def __setitem__(self, idx, value):
        copy(self[idx], value)

    def to(self, dtype):
        """A new tensor of @dtype holding this one's values (COPY)."""
        out = empty(self.shape, dtype)
        copy(out, self)
        return out

    # -- arithmetic: BINARY / COMPARE instructions -------------------------
    def __add__(self, o):
        return add(self, o)

    def __radd__(self, o):
        return add(o, self)

    def __sub__(self, o):
        return sub(self, o)

    def __rsub__(self, o):
        return sub(o, self)

    def __mul__(self, o):
        return mul(self, o)

    def __rmul__(self, o):
        return mul(o, self)

    def __truediv__(self, o):
        return _truediv(self, o)

    def __rtruediv__(self, o):
        return _truediv(o, self)

    def __floordiv__(self, o):
        return floordiv(self, o)

    def __rfloordiv__(self, o):
        return floordiv(o, self)

    def __mod__(self, o):
        return rem(self, o)

    def __rmod__(self, o):
        return rem(o, self)

    def __pow__(self, o):
        return pow(self, o)

    def __rpow__(self, o):
        return pow(o, self)

    def __matmul__(self, o):
        return matmul(self, o)

    def __and__(self, o):
        return bitwise_and(self, o)

    def __or__(self, o):
        return bitwise_or(self, o)

    def __xor__(self, o):
        return bitwise_xor(self, o)

    def __neg__(self):
        return neg(self)

    def __abs__(self):
        return abs(self)

    def __invert__(self):
        return bitnot(self)

    def __lt__(self, o):
        return lt(self, o)

    def __le__(self, o):
        return le(self, o)

    def __gt__(self, o):
        return gt(self, o)

    def __ge__(self, o):
        return ge(self, o)

    def __eq__(self, o):
        return eq(self, o)

    def __ne__(self, o):
        return ne(self, o)


# ---- helpers -----------------------------------------------------------------

def _dim(x, d, what="dim"):
    n = builtins.max(x.ndim, 1)
    if not -n <= d < n:
        raise _err(f"{what} {d} of a {x.ndim}-dim tensor of shape {x.shape}")
    return d % n


def _checked_index(shape, idx):
    """@idx with every int and slice bound inside @shape (Python would
    clamp a slice silently; a kernel's view out of bounds is an error)."""
    if not isinstance(idx, tuple):
        idx = (idx,)
    n_real = builtins.sum(1 for i in idx if i is not None and i is not Ellipsis)
    if builtins.sum(1 for i in idx if i is Ellipsis) > 1:
        raise _err("an index with more than one '...'")
    if n_real > len(shape):
        raise _err(f"too many indices ({n_real}) for a tensor of shape {shape}")
    out, d = [], 0
    for i in idx:
        if i is None:
            out.append(None)
        elif i is Ellipsis:
            out.append(i)
            d += len(shape) - n_real
        elif isinstance(i, bool) or isinstance(i, Tensor):
            raise _err(f"index {i!r}: a kernel's views take ints and slices (gather "
                       "with nk.gather / nk.index_select)")
        elif isinstance(i, numbers.Integral):
            n = shape[d]
            if not -n <= i < n:
                raise _err(f"index {i} out of bounds for dim {d} of size {n} (shape {shape})")
            out.append(int(i))
            d += 1
        elif isinstance(i, slice):
            n = shape[d]
            for b in (i.start, i.stop):
                if b is not None and not -n <= b <= n:
                    raise _err(f"slice {i.start}:{i.stop} out of bounds for dim {d} of size "
                               f"{n} (shape {shape})")
            if i.step is not None and i.step <= 0:
                raise _err(f"slice step {i.step}: steps are positive")
            out.append(i)
            d += 1
        else:
            raise _err(f"index {i!r} of type {type(i).__name__}: ints, slices, None, ...")
    return tuple(out)


def _device():
    return _trace.require("empty").device


def _new(shape, dtype):
    tr = _trace.require("empty")
    if dtype not in _CARD_DTYPES:
        raise _err(f"dtype {dtype} is not a card type ({', '.join(map(str, _CARD_DTYPES))})")
    shape = tuple(int(s) for s in shape)
    if any(s < 0 for s in shape):
        raise _err(f"a negative size in {shape}")
    t = torch.empty(shape, dtype=dtype, device=tr.device)
    tr.keep.append(t)
    return Tensor(t)


def _tensor(x, what):
    _trace.require(what.split()[0])
    if not isinstance(x, Tensor):
        raise _err(f"{what}: expected an nk.Tensor, got {type(x).__name__}")
    return x


def _number(v):
    return isinstance(v, (numbers.Number, bool)) and not isinstance(v, Tensor)


def _out(out, shape, dtype, what):
    """@out checked against (shape, dtype), or a new tensor."""
    if out is None:
        return _new(shape, dtype)
    _tensor(out, what + " out=")
    if tuple(out.shape) != tuple(shape):
        raise _err(f"{what}: out= has shape {out.shape}, the result {tuple(shape)}")
    return out


def _emit(what, op, *args):
    _trace.require(what).emit(what, op, *args)


def _broadcast(what, *shapes):
    try:
        return tuple(torch.broadcast_shapes(*shapes))
    except RuntimeError:
        raise _err(f"{what}: shapes {' and '.join(map(str, shapes))} do not broadcast") from None


# ---- allocation ----------------------------------------------------------------

def empty(shape, dtype=float32):
    """Card memory of the kernel (uninitialised): scratch, or an output when
    the kernel returns it."""
    return _new(shape, dtype)


def full(shape, value, dtype=float32):
    out = _new(shape, dtype)
    _emit("full", torch.ops.neuron.k_fill, out._t, float(value))
    return out


def zeros(shape, dtype=float32):
    return full(shape, 0, dtype)


def ones(shape, dtype=float32):
    return full(shape, 1, dtype)


def empty_like(x, dtype=None):
    return _new(_tensor(x, "empty_like").shape, dtype or x.dtype)


def zeros_like(x, dtype=None):
    return full(_tensor(x, "zeros_like").shape, 0, dtype or x.dtype)


def arange(start, stop=None, step=1, dtype=int64):
    """[start, stop) by @step (IOTA); ints known at trace time."""
    if stop is None:
        start, stop = 0, start
    if step == 0:
        raise _err("arange: step 0")
    n = builtins.max(0, -(-(stop - start) // step))
    out = _new((n,), dtype)
    _emit("arange", torch.ops.neuron.k_iota, out._t, float(start), float(step))
    return out


# ---- data movement -----------------------------------------------------------

def copy(dst, src):
    """dst = src (COPY, converting the dtype, any strides); @src broadcasts
    to dst's shape, a number fills dst (FILL)."""
    _tensor(dst, "copy dst")
    if _number(src):
        _emit("fill", torch.ops.neuron.k_fill, dst._t, float(src))
        return dst
    _tensor(src, "copy src")
    _broadcast("copy", dst.shape, src.shape)
    if len(src.shape) > len(dst.shape) or torch.broadcast_shapes(dst.shape, src.shape) != dst.shape:
        raise _err(f"copy: src of shape {src.shape} does not broadcast to dst's {dst.shape}")
    _emit("copy", torch.ops.neuron.k_copy, dst._t, src._t.expand(dst.shape))
    return dst


def gather(src, index, axis, *, out=None):
    """out[i][j] = src[index[i][j]][j] along @axis (GATHER, element form):
    out has index's shape."""
    _tensor(src, "gather src")
    _index_dtype(_tensor(index, "gather index"), "gather")
    axis = _dim(src, axis, "gather axis")
    if index.ndim != src.ndim:
        raise _err(f"gather: index has {index.ndim} dims, src {src.ndim}")
    out = _out(out, index.shape, src.dtype, "gather")
    _emit("gather", torch.ops.neuron.k_gather, out._t, src._t, index._t, 1, axis)
    return out


def index_select(src, index, axis, *, out=None):
    """Rows @index (1-D) of @src along @axis (GATHER, select form)."""
    _tensor(src, "index_select src")
    _index_dtype(_tensor(index, "index_select index"), "index_select")
    axis = _dim(src, axis, "index_select axis")
    if index.ndim != 1:
        raise _err(f"index_select: index has {index.ndim} dims, not 1")
    shape = list(src.shape)
    shape[axis] = index.shape[0]
    out = _out(out, shape, src.dtype, "index_select")
    _emit("index_select", torch.ops.neuron.k_gather, out._t, src._t, index._t, 0, axis)
    return out


_SCATTER = {"assign": 0, "add": 1, "mul": 2, "max": 3, "min": 4}


def scatter(dst, index, src, axis, reduce="assign"):
    """dst[index[i][j]][j] op= src[i][j] along @axis, in place (SCATTER,
    element form; index has src's shape); updates apply in row-major order."""
    return _scatter("scatter", 1, dst, index, src, axis, reduce)


def index_scatter(dst, index, src, axis, reduce="assign"):
    """Rows of @dst named by @index (1-D) op= rows of @src (SCATTER, select
    form: index_copy / index_add / index_reduce)."""
    return _scatter("index_scatter", 0, dst, index, src, axis, reduce)


def _scatter(what, mode, dst, index, src, axis, reduce):
    _tensor(dst, what + " dst")
    _tensor(src, what + " src")
    _index_dtype(_tensor(index, what + " index"), what)
    if reduce not in _SCATTER:
        raise _err(f"{what}: reduce={reduce!r}, one of {', '.join(_SCATTER)}")
    axis = _dim(dst, axis, what + " axis")
    _emit(what, torch.ops.neuron.k_scatter, dst._t, src._t, index._t, _SCATTER[reduce], mode,
          axis)
    return dst


def _index_dtype(index, what):
    if index.dtype not in (int32, int64):
        raise _err(f"{what}: index of dtype {index.dtype}; indices are int32 or int64")


# ---- matmul, reductions, softmax, scans, sort --------------------------------

def matmul(a, b, bias=None, *, out=None, accumulate=False, dtype=None):
    """a [..., M, K] @ b [..., K, N] (+ bias) (+ out with accumulate=True):
    one MATMUL; batch dims broadcast, a transposed view costs nothing. The
    operands may differ in dtype when one is floating (the card reads each
    as float32: an int8 weight exactly); the result is then the promoted
    dtype unless dtype= or out= says otherwise."""
    _tensor(a, "matmul a")
    _tensor(b, "matmul b")
    if a.ndim < 2 or b.ndim < 2:
        raise _err(f"matmul of shapes {a.shape} and {b.shape}: both need 2 dims or more")
    if a.shape[-1] != b.shape[-2]:
        raise _err(f"matmul of shapes {a.shape} and {b.shape}: inner dims "
                   f"{a.shape[-1]} and {b.shape[-2]} differ")
    if a.dtype != b.dtype and not (a.dtype.is_floating_point or b.dtype.is_floating_point):
        raise _err(f"matmul of {a.dtype} and {b.dtype}: operands of two dtypes need a "
                   "floating one")
    batch = _broadcast("matmul batch dims", a.shape[:-2], b.shape[:-2])
    shape = batch + (a.shape[-2], b.shape[-1])
    if accumulate and out is None:
        raise _err("matmul: accumulate=True adds into out=, which is missing")
    out = _out(out, shape, dtype or torch.promote_types(a.dtype, b.dtype), "matmul")
    if bias is not None:
        _tensor(bias, "matmul bias")
        _broadcast("matmul bias", shape, bias.shape)
    _emit("matmul", torch.ops.neuron.k_matmul, out._t, a._t, b._t,
          None if bias is None else bias._t, bool(accumulate))
    return out


_REDUCE = {"sum": 0, "mean": 1, "max": 2, "min": 3, "argmax": 4, "argmin": 5, "prod": 6}


def _reduction(name):
    red = _REDUCE[name]

    def reduce(x, axis, keepdim=False, *, out=None, dtype=None):
        _tensor(x, name)
        axis = _dim(x, axis, name + " axis")
        shape = list(x.shape)
        if keepdim:
            shape[axis] = 1
        else:
            del shape[axis]
        if dtype is None:
            if name in ("argmax", "argmin"):
                dtype = int64
            elif name in ("sum", "prod") and not x.dtype.is_floating_point:
                dtype = int64
            else:
                dtype = x.dtype
        out = _out(out, shape, dtype, name)
        _emit(name, torch.ops.neuron.k_reduce, out._t, x._t, red, axis)
        return out

    reduce.__name__ = name
    reduce.__doc__ = (f"{name} of @x along @axis (REDUCE {name.upper()}); keepdim keeps it "
                      "as a dim of 1.")
    return reduce


sum = _reduction("sum")
mean = _reduction("mean")
max = _reduction("max")
min = _reduction("min")
argmax = _reduction("argmax")
argmin = _reduction("argmin")
prod = _reduction("prod")


def softmax(x, axis, *, out=None):
    """softmax along @axis (SOFTMAX), computed the numerically safe way."""
    _tensor(x, "softmax")
    axis = _dim(x, axis, "softmax axis")
    out = _out(out, x.shape, x.dtype, "softmax")
    _emit("softmax", torch.ops.neuron.k_softmax, out._t, x._t, 0, axis)
    return out


def log_softmax(x, axis, *, out=None):
    _tensor(x, "log_softmax")
    axis = _dim(x, axis, "log_softmax axis")
    out = _out(out, x.shape, x.dtype, "log_softmax")
    _emit("log_softmax", torch.ops.neuron.k_softmax, out._t, x._t, 1, axis)
    return out


_SCAN = {"cumsum": 0, "cumprod": 1, "cummax": 2, "cummin": 3, "logcumsumexp": 4}


def _scan(name):
    op = _SCAN[name]

    def scan(x, axis, *, out=None):
        _tensor(x, name)
        axis = _dim(x, axis, name + " axis")
        dtype = x.dtype if x.dtype.is_floating_point or name in ("cummax", "cummin") else int64
        out = _out(out, x.shape, dtype, name)
        idx = _new(x.shape, int64) if name in ("cummax", "cummin") else None
        _emit(name, torch.ops.neuron.k_scan, out._t, None if idx is None else idx._t, x._t,
              op, axis)
        return (out, idx) if idx is not None else out

    scan.__name__ = name
    scan.__doc__ = f"Inclusive {name} of @x along @axis (SCAN)."
    return scan


cumsum = _scan("cumsum")
cumprod = _scan("cumprod")
cummax = _scan("cummax")
cummin = _scan("cummin")
logcumsumexp = _scan("logcumsumexp")


def sort(x, axis=-1, descending=False):
    """(values, int64 indices) of @x sorted stably along @axis (SORT)."""
    _tensor(x, "sort")
    axis = _dim(x, axis, "sort axis")
    out, idx = _new(x.shape, x.dtype), _new(x.shape, int64)
    _emit("sort", torch.ops.neuron.k_sort, out._t, idx._t, x._t, axis, bool(descending))
    return out, idx


def where(cond, a, b, *, out=None):
    """cond ? a : b elementwise (WHERE); a number becomes a filled 0-dim
    tensor of the other operand's dtype."""
    _tensor(cond, "where cond")
    if _number(a) and _number(b):
        raise _err("where: at least one of a and b is an nk.Tensor")
    if _number(a):
        a = full((), a, b.dtype)
    if _number(b):
        b = full((), b, a.dtype)
    shape = _broadcast("where", cond.shape, _tensor(a, "where a").shape, _tensor(b, "where b").shape)
    out = _out(out, shape, torch.promote_types(a.dtype, b.dtype), "where")
    _emit("where", torch.ops.neuron.k_where, out._t, cond._t, a._t, b._t)
    return out


# ---- random numbers: drawn at each launch ----------------------------------

def _hidden(kind, shape, dtype):
    tr = _trace.require(kind)
    out = _new(shape, dtype)
    tr.hidden.append((kind, tuple(out.shape), dtype))
    tr.hidden_tensors.append(out._t)
    return out


def rand(shape, dtype=float32):
    """Uniform [0, 1) numbers, new at every launch, from the card's
    generator (torch.manual_seed governs them): one RANDOM instruction of
    the launch, issued before the kernel (docs/kernels.md)."""
    if not dtype.is_floating_point:
        raise _err(f"rand: dtype {dtype} is not floating")
    return _hidden("rand", shape, dtype)


def randn(shape, dtype=float32):
    """Standard normal numbers, as rand."""
    if not dtype.is_floating_point:
        raise _err(f"randn: dtype {dtype} is not floating")
    return _hidden("randn", shape, dtype)


def timestamp():
    """The card's clock in ns when the kernel reaches this point, as a new
    0-dim int64 tensor (TIMESTAMP): return it to read it. The compiler
    never moves an instruction across a timestamp."""
    out = _new((), int64)
    _emit("timestamp", torch.ops.neuron.k_timestamp, out._t)
    return out


# ---- elementwise functions, from the instruction table ------------------------

# ISA names that are Python keywords or that the language spells as NumPy
# does (max/min are reductions here, as in NumPy and NKI).
_RENAME = {"max": "maximum", "min": "minimum", "and": "bitwise_and", "or": "bitwise_or",
           "xor": "bitwise_xor", "land": "logical_and", "lor": "logical_or",
           "lxor": "logical_xor"}


def _table(family):
    return [tuple(e.split(":")) for e in torch.ops.neuron.isa_table(family)]


def _unary_fn(name, fn, kind):
    def unary(x, p=0.0, q=0.0, *, out=None, dtype=None):
        _tensor(x, name)
        if kind == "BITS" and x.dtype.is_floating_point:
            raise _err(f"{name}: a bitwise function of a {x.dtype} tensor (integers and bool only)")
        if dtype is None:
            dtype = x.dtype if kind != "REAL" or x.dtype.is_floating_point else float32
        o = _out(out, x.shape, dtype, name)
        _emit(name, torch.ops.neuron.k_unary, o._t, x._t, fn, float(p), float(q))
        return o

    unary.__name__ = name
    unary.__doc__ = (f"{name}(x) elementwise (UNARY {name.upper()}, {kind}); p and q are "
                     "the parameters of the functions that take them (docs/hardware.md).")
    return unary


def _result(a, b):
    if isinstance(a, Tensor) and isinstance(b, Tensor):
        return torch.promote_types(a.dtype, b.dtype)
    t, v = (a, b) if isinstance(a, Tensor) else (b, a)
    return torch.result_type(t._t, v)


def _binary_fn(name, op, kind):
    def binary(a, b, alpha=1.0, *, out=None, dtype=None):
        if not isinstance(a, Tensor) and not isinstance(b, Tensor):
            raise _err(f"{name}: at least one operand is an nk.Tensor")
        for v in (a, b):
            if not isinstance(v, Tensor) and not _number(v):
                raise _err(f"{name}: an operand of type {type(v).__name__}")
        res = _result(a, b)
        if kind == "BITS" and res.is_floating_point:
            raise _err(f"{name}: a bitwise operation on {res} (integers and bool only)")
        if dtype is None:
            dtype = float32 if kind == "REAL" and not res.is_floating_point else res
        if isinstance(a, Tensor) and isinstance(b, Tensor):
            shape = _broadcast(name, a.shape, b.shape)
            o = _out(out, shape, dtype, name)
            _emit(name, torch.ops.neuron.k_binary, o._t, a._t, b._t, op, float(alpha))
        else:
            t, v, rev = (a, b, False) if isinstance(a, Tensor) else (b, a, True)
            o = _out(out, t.shape, dtype, name)
            _emit(name, torch.ops.neuron.k_binary_scalar, o._t, t._t, float(v), op,
                  float(alpha), rev)
        return o

    binary.__name__ = name
    binary.__doc__ = (f"{name}(a, b) elementwise (BINARY {name.upper()}, {kind}): a op "
                      "(alpha * b), operands broadcasting; one may be a number.")
    return binary


def _compare_fn(name, cmp):
    def compare(a, b, *, out=None):
        if not isinstance(a, Tensor):
            if not isinstance(b, Tensor):
                raise _err(f"{name}: at least one operand is an nk.Tensor")
            flip = {"lt": "gt", "gt": "lt", "le": "ge", "ge": "le"}.get(name, name)
            return globals()[_RENAME.get(flip, flip)](b, a, out=out)
        if isinstance(b, Tensor):
            o = _out(out, _broadcast(name, a.shape, b.shape), bool_, name)
            _emit(name, torch.ops.neuron.k_compare, o._t, a._t, b._t, cmp)
        elif _number(b):
            o = _out(out, a.shape, bool_, name)
            _emit(name, torch.ops.neuron.k_compare_scalar, o._t, a._t, float(b), cmp)
        else:
            raise _err(f"{name}: an operand of type {type(b).__name__}")
        return o

    compare.__name__ = name
    compare.__doc__ = f"{name}(a, b) elementwise, a bool tensor (COMPARE {name.upper()})."
    return compare


UNARY = []
BINARY = []
COMPARE = []


def _generate():
    g = globals()
    for i, (name, kind) in enumerate(_table("unary")):
        n = _RENAME.get(name, name)
        g[n] = _unary_fn(n, i, kind)
        UNARY.append(n)
    for i, (name, kind) in enumerate(_table("binary")):
        n = _RENAME.get(name, name)
        g[n] = _binary_fn(n, i, kind)
        BINARY.append(n)
    for i, (name, _kind) in enumerate(_table("compare")):
        n = _RENAME.get(name, name)
        g[n] = _compare_fn(n, i)
        COMPARE.append(n)


_generate()


def _truediv(a, b):
    if _result(a, b).is_floating_point:
        return div(a, b)
    raise _err("`/` of integer operands: the card's DIV of integers truncates; convert "
               "with .to(nk.float32) first, or say which you mean with nk.div_trunc / "
               "nk.floordiv")

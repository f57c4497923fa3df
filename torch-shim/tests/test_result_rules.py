# SPDX-License-Identifier: MIT
"""The results of the elementwise operators follow ATen's rules exactly:
in every form (functional, out= of each type and shape, in place), with
broadcasting, CPU scalars and transposed inputs, an operator raises on
neuron when and only when it raises on the CPU, and otherwise returns a
tensor of the CPU's type, shape and strides holding the CPU's values. The
shim takes those results from ATen's own TensorIterator builders and
structured meta functions (csrc/aten/NeuronMeta.h), so this is the test that
it does."""
import itertools

import pytest
import torch
import torch.nn.functional as F

N = "neuron"

BINARY = {
    "add": torch.add, "add_alpha": lambda a, b, **kw: torch.add(a, b, alpha=2, **kw),
    "add_alpha_float": lambda a, b, **kw: torch.add(a, b, alpha=0.5, **kw),
    "sub": torch.sub, "mul": torch.mul, "div": torch.div,
    "div_floor": lambda a, b, **kw: torch.div(a, b, rounding_mode="floor", **kw),
    "maximum": torch.maximum, "remainder": torch.remainder,
    "bitwise_and": torch.bitwise_and, "atan2": torch.atan2,
    "logical_and": torch.logical_and, "eq": torch.eq, "lt": torch.lt,
    "pow": torch.pow, "fmax": torch.fmax, "heaviside": torch.heaviside,
    "copysign": torch.copysign, "xlogy": torch.xlogy, "hypot": torch.hypot,
    "bitwise_left_shift": torch.bitwise_left_shift, "floor_divide": torch.floor_divide,
    "clamp_min_tensor": torch.clamp_min,
}
INTEGER_DIVISION = {"div_floor", "remainder", "floor_divide"}
INPLACE = {
    "add": "add_", "sub": "sub_", "mul": "mul_", "div": "div_",
    "remainder": "remainder_", "bitwise_and": "bitwise_and_", "atan2": "atan2_",
    "logical_and": "logical_and_", "eq": "eq_", "lt": "lt_",
    "pow": "pow_", "copysign": "copysign_", "heaviside": "heaviside_",
    "clamp_min_tensor": "clamp_min_",
}
UNARY = {
    "neg": torch.neg, "abs": torch.abs, "exp": torch.exp, "sigmoid": torch.sigmoid,
    "floor": torch.floor, "bitwise_not": torch.bitwise_not, "signbit": torch.signbit,
    "isposinf": torch.isposinf, "logical_not": torch.logical_not,
    "round_dec": lambda x, **kw: torch.round(x, decimals=1, **kw),
}
UNARY_FUNCTIONAL = {"relu": torch.relu, "gelu": F.gelu, "isnan": torch.isnan}
TYPES = [torch.float32, torch.int64, torch.bool]


def make(shape, dtype, transposed=False):
    g = torch.Generator().manual_seed(7)
    x = torch.randn(*shape, generator=g) * 3
    if transposed:
        x = x.t().contiguous().t()
    if dtype == torch.bool:
        return x > 0
    if dtype.is_floating_point:
        return x.to(dtype)
    # No integer 0: an integer division by zero is an error the card reports
    # at the next synchronisation, where the CPU raises at once.
    return torch.where(x.round() == 0, 1, x.round()).to(dtype)


def on(x):
    """@x on neuron, except what stays a CPU scalar or is not a tensor."""
    return x.to(N) if isinstance(x, torch.Tensor) and x.dim() else x


def outcome(fn, args, out=None):
    kw = {} if out is None else {"out": out}
    try:
        return fn(*args, **kw), None
    except (RuntimeError, TypeError, ValueError, IndexError) as e:
        return None, e


def check_same(name, fn, args, out=None):
    """fn on the CPU and on neuron: both raise, or the same result."""
    nargs = [on(a) for a in args]  # before the CPU's in-place or out= writes
    nout = None if out is None else out.to(N)
    want, werr = outcome(fn, args, out)
    got, gerr = outcome(fn, nargs, nout)
    where = f"{name} on {[getattr(a, 'dtype', a) for a in args]}" + (
        "" if out is None else f" out={out.dtype}{tuple(out.shape)}")
    if werr and not gerr and "not implemented for" in str(werr):
        return  # a type the CPU's kernel has no loop for; the card computes it
    if werr or gerr:
        assert type(werr) is type(gerr), f"{where}: CPU raised {werr!r}, neuron raised {gerr!r}"
        return
    assert got.device.type == N, where
    if out is not None:
        assert got is nout, f"{where}: out= returned another tensor"
    assert got.dtype == want.dtype, f"{where}: dtype {got.dtype}, CPU {want.dtype}"
    assert got.shape == want.shape, f"{where}: shape {got.shape}, CPU {want.shape}"
    assert got.stride() == want.stride(), (
        f"{where}: strides {got.stride()}, CPU {want.stride()}")
    torch.testing.assert_close(got.cpu(), want, rtol=1e-5, atol=1e-6, equal_nan=True,
                               msg=lambda m: f"{where}: {m}")


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_forms(name):
    fn = BINARY[name]
    for ta, tb in itertools.product(TYPES, TYPES):
        if name in INTEGER_DIVISION and tb == torch.bool:
            continue  # False is an integer 0 (see make)
        a, b = make((3, 4), ta), make((4,), tb)
        check_same(name, fn, [a, b])
        check_same(name, fn, [make((3, 4), ta, transposed=True), b])
        check_same(name, fn, [a, torch.tensor(2, dtype=tb)])
        for to in TYPES:
            for shape in [(3, 4), (0,)]:
                check_same(name, fn, [a, b], out=torch.empty(shape, dtype=to))
    for ta in TYPES:
        check_same(name, fn, [make((3, 4), ta), 3])
        check_same(name, fn, [make((3, 4), ta), 2.5])


@pytest.mark.parametrize("name", sorted(INPLACE))
def test_binary_inplace(name):
    method = INPLACE[name]
    for ta, tb in itertools.product(TYPES, TYPES):
        if name in INTEGER_DIVISION and tb == torch.bool:
            continue

        def inplace(x, y):
            return getattr(x, method)(y)
        # Broadcast onto self, and a self that would have to grow.
        check_same(name, inplace, [make((3, 4), ta), make((4,), tb)])
        check_same(name, inplace, [make((4,), ta), make((3, 4), tb)])


def test_overlap_is_refused_as_on_the_cpu():
    def shifted_add(x):
        return x[1:].add_(x[:-1])

    def expanded_add(x):
        return x.expand(3, 4).add_(1)

    for fn in (shifted_add, expanded_add):
        check_same(fn.__name__, fn, [torch.arange(4.0)])


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_forms(name):
    fn = UNARY[name]
    for ta in [torch.float32, torch.int64, torch.bool, torch.float64]:
        a = make((3, 4), ta)
        check_same(name, fn, [a])
        check_same(name, fn, [make((3, 4), ta, transposed=True)])
        for to in TYPES:
            check_same(name, fn, [a], out=torch.empty((0,), dtype=to))


@pytest.mark.parametrize("name", sorted(UNARY_FUNCTIONAL))
def test_unary_functional(name):
    for ta in [torch.float32, torch.int64, torch.float64]:
        check_same(name, UNARY_FUNCTIONAL[name], [make((3, 4), ta, transposed=True)])


def test_where_forms():
    c = make((3, 4), torch.bool)
    for ta, tb in itertools.product([torch.float32, torch.int64], repeat=2):
        a, b = make((3, 4), ta, transposed=True), make((4,), tb)
        check_same("where", torch.where, [c, a, b])
        check_same("where", torch.where, [c, a, torch.tensor(1.5)])
        for to in [torch.float32, torch.int64]:
            check_same("where", torch.where, [c, a, b], out=torch.empty((0,), dtype=to))


F32, F64, I64 = torch.float32, torch.float64, torch.int64
STRUCTURED = {
    "mm": (torch.mm, [((3, 4), F32), ((4, 5), F32)]),
    "mm_shapes": (torch.mm, [((3, 4), F32), ((3, 5), F32)]),
    "mm_types": (torch.mm, [((3, 4), F32), ((4, 5), F64)]),
    "mm_vector": (torch.mm, [((3, 4), F32), ((4,), F32)]),
    "addmm": (torch.addmm, [((5,), F32), ((3, 4), F32), ((4, 5), F32)]),
    "addmm_bias_shape": (torch.addmm, [((4,), F32), ((3, 4), F32), ((4, 5), F32)]),
    "bmm": (torch.bmm, [((2, 3, 4), F32), ((2, 4, 5), F32)]),
    "addmv": (torch.addmv, [((3,), F32), ((3, 4), F32), ((4,), F32)]),
    "addmv_broadcast": (lambda c, a, b, **kw: torch.addmv(c, a, b, beta=0.5, alpha=2, **kw),
                        [((1,), F32), ((3, 4), F32), ((4,), F32)]),
    "addmv_shapes": (torch.addmv, [((3,), F32), ((3, 4), F32), ((3,), F32)]),
    "bmm_batches": (torch.bmm, [((2, 3, 4), F32), ((3, 4, 5), F32)]),
    "baddbmm": (torch.baddbmm, [((1, 5), F32), ((2, 3, 4), F32), ((2, 4, 5), F32)]),
    "softmax": (lambda x, **kw: torch._softmax(x, 1, False, **kw), [((3, 4), F32)]),
    "softmax_dim": (lambda x, **kw: torch._softmax(x, 2, False, **kw), [((3, 4), F32)]),
    "log_softmax": (lambda x, **kw: torch._log_softmax(x, 0, False, **kw), [((3, 4), F64)]),
    "cumsum_int": (lambda x, **kw: torch.cumsum(x, 1, **kw), [((3, 4), I64)]),
    "cumsum_bool": (lambda x, **kw: torch.cumsum(x, 0, **kw), [((3, 4), torch.bool)]),
    "cumsum_dtype": (lambda x, **kw: torch.cumsum(x, 1, dtype=F64, **kw), [((3, 4), F32)]),
    "cumprod": (lambda x, **kw: torch.cumprod(x, 1, **kw), [((3, 4), F32)]),
    "addcmul": (torch.addcmul, [((3, 4), F32), ((4,), F32), ((3, 1), F32)]),
    "addcmul_types": (torch.addcmul, [((3, 4), F32), ((4,), I64), ((3, 1), F64)]),
    "addcdiv": (lambda a, b, c, **kw: torch.addcdiv(a, b, c, value=0.5, **kw),
                [((3, 4), F32), ((4,), F32), ((3, 1), F32)]),
    "addcdiv_integer": (torch.addcdiv, [((3, 4), I64), ((4,), I64), ((3, 1), I64)]),
    "lerp_scalar": (lambda a, b, **kw: torch.lerp(a, b, 0.3, **kw),
                    [((3, 4), F32), ((4,), F32)]),
    "lerp_tensor": (torch.lerp, [((3, 4), F32), ((4,), F32), ((3, 1), F32)]),
    "lerp_types": (torch.lerp, [((3, 4), F32), ((4,), F64), ((3, 1), F32)]),
    "sum": (lambda x, **kw: torch.sum(x, (0, 1), **kw), [((3, 4), F32)]),
    "sum_int_keepdim": (lambda x, **kw: torch.sum(x, 1, keepdim=True, **kw), [((3, 4), I64)]),
    "sum_bool": (lambda x, **kw: torch.sum(x, 0, **kw), [((3, 4), torch.bool)]),
    "sum_dtype": (lambda x, **kw: torch.sum(x, 1, dtype=F64, **kw), [((3, 4), F32)]),
    "mean": (lambda x, **kw: torch.mean(x, (0, 1), keepdim=True, **kw), [((3, 4), F32)]),
    "mean_int": (lambda x, **kw: torch.mean(x, 1, **kw), [((3, 4), I64)]),
    "amax": (lambda x, **kw: torch.amax(x, 0, **kw), [((3, 4), F32)]),
    "amin_int": (lambda x, **kw: torch.amin(x, (0, 1), keepdim=True, **kw), [((3, 4), I64)]),
    "amax_empty": (lambda x, **kw: torch.amax(x, 1, **kw), [((0, 4), F32)]),
    "amax_empty_dim": (lambda x, **kw: torch.amax(x, 0, **kw), [((0, 4), F32)]),
    "argmax": (lambda x, **kw: torch.argmax(x, 1, **kw), [((3, 4), F32)]),
    "argmax_all": (lambda x, **kw: torch.argmax(x, keepdim=True, **kw), [((3, 4), F32)]),
    "prod": (lambda x, **kw: torch.prod(x, 1, **kw), [((3, 4), F32)]),
    "prod_int_keepdim": (lambda x, **kw: torch.prod(x, 0, keepdim=True, **kw), [((3, 4), I64)]),
    "prod_dtype": (lambda x, **kw: torch.prod(x, 1, dtype=F64, **kw), [((3, 4), F32)]),
    "all_dim": (lambda x, **kw: torch.all(x, 1, **kw), [((3, 4), F32)]),
    "any_dims": (lambda x, **kw: torch.any(x, (0, 1), keepdim=True, **kw), [((3, 4), I64)]),
    "all_all": (lambda x, **kw: torch.all(x, **kw), [((3, 4), torch.uint8)]),
    "any_uint8": (lambda x, **kw: torch.any(x, 0, **kw), [((3, 4), torch.uint8)]),
    "tril": (lambda x, **kw: torch.tril(x, 1, **kw), [((3, 4), F32)]),
    "triu_vector": (lambda x, **kw: torch.triu(x, **kw), [((4,), F32)]),
}


@pytest.mark.parametrize("name", sorted(STRUCTURED))
def test_structured_meta_forms(name):
    fn, specs = STRUCTURED[name]
    args = [make(shape, dtype, transposed=len(shape) == 2) for shape, dtype in specs]
    check_same(name, fn, args)
    for to in [F32, F64, I64]:
        for shape in [(0,), (2, 2)]:
            check_same(name, fn, args, out=torch.empty(shape, dtype=to))


def test_structured_meta_inplace():
    def addmm_(c, a, b):
        return c.addmm_(a, b)

    def cumsum_(x):
        return x.cumsum_(1)

    def cumsum_dtype_(x):
        return x.cumsum_(1, dtype=F64)

    check_same("addmm_", addmm_, [make((3, 5), F32), make((3, 4), F32), make((4, 5), F32)])
    check_same("addmm_ broadcast self", addmm_,
               [make((5,), F32), make((3, 4), F32), make((4, 5), F32)])
    check_same("cumsum_", cumsum_, [make((3, 4), F32, transposed=True)])
    check_same("addcmul_", torch.Tensor.addcmul_,
               [make((3, 4), F32), make((4,), F32), make((3, 1), F64)])
    check_same("addcmul_ grow", torch.Tensor.addcmul_,
               [make((4,), F32), make((3, 4), F32), make((3, 1), F32)])
    check_same("lerp_", torch.Tensor.lerp_, [make((3, 4), F32), make((4,), F32), 0.25])
    check_same("lerp_ tensor", torch.Tensor.lerp_,
               [make((3, 4), F32), make((4,), F32), make((3, 1), F32)])
    check_same("cumsum_ dtype", cumsum_dtype_, [make((3, 4), F32)])
    check_same("tril_", lambda x: x.tril_(-1), [make((3, 4), F32, transposed=True)])
    check_same("addmv_", lambda c, a, b: c.addmv_(a, b, beta=2),
               [make((3,), F32), make((3, 4), F32), make((4,), F32)])
    check_same("triu_", lambda x: x.triu_(1), [make((2, 3, 4), I64)])


def test_softmax_half_to_float():
    """half_to_float gives a float32 result of a reduced-precision input (the
    CPU refuses it; CUDA, like the card, computes it)."""
    x = make((3, 4), torch.bfloat16)
    got = torch._softmax(x.to(N), 1, True)
    assert got.dtype == F32
    torch.testing.assert_close(got.cpu(), torch.softmax(x.float(), 1), rtol=1e-6, atol=1e-7)


def check_values_indices_out(fn, x):
    """fn(x, out=(values, indices)) for values and indices of several types:
    refused where the CPU refuses, else the CPU's results in those tensors."""
    for vt, it in [(F32, I64), (F32, torch.int32), (F64, I64)]:
        want, werr = outcome(fn, [x], (torch.empty(0, dtype=vt), torch.empty(0, dtype=it)))
        nout = (torch.empty(0, dtype=vt, device=N), torch.empty(0, dtype=it, device=N))
        got, gerr = outcome(fn, [x.to(N)], nout)
        assert type(werr) is type(gerr), f"{fn.__name__} {vt} {it}: {werr!r} {gerr!r}"
        if werr is None:
            assert got[0] is nout[0] and got[1] is nout[1]
            assert torch.equal(got[0].cpu(), want[0]) and torch.equal(got[1].cpu(), want[1])


def test_sort_and_topk_out_rules():
    """values and indices of out= are checked and resized as on the CPU: an
    int32 indices tensor is refused, not silently cast."""
    x = make((3, 5), F32, transposed=True)

    def topk(a, out=None):
        return torch.topk(a, 2, 1, out=out)

    def sort(a, out=None):
        return torch.sort(a, 0, stable=True, descending=True, out=out)

    for fn in (topk, sort):
        check_values_indices_out(fn, x)


def test_max_dim_out_rules():
    x = make((3, 5), F32, transposed=True)

    def max_dim(a, out=None):
        return torch.max(a, 1, keepdim=True, out=out)

    check_values_indices_out(max_dim, x)
    for a in (x, make((0, 3), F32), make((3, 4), I64)):
        check_same("min.dim", lambda t: torch.min(t, -1).values, [a])
        check_same("max.dim indices", lambda t: torch.max(t, 0).indices, [a])
        check_same("aminmax dim", lambda t: torch.aminmax(t, dim=0, keepdim=True).min, [a])
        check_same("aminmax", lambda t: torch.aminmax(t).max, [a])
        check_same("max()", torch.max, [a])
        check_same("min()", torch.min, [a])
    z = torch.tensor(-2.5)  # 0-dim: itself, at index 0
    v, i = torch.max(z.to(N), 0)
    assert v.shape == () and v.item() == -2.5 and i.dtype == I64 and i.item() == 0


def test_gather_rules():
    x = make((3, 4), F32, transposed=True)
    idx = torch.tensor([[0, 1, 3], [2, 2, 0]])
    for index in (idx, idx.to(torch.int32), torch.empty(0, dtype=torch.int32),
                  torch.zeros(4, 2, dtype=I64)):
        def gather(a, i, **kw):
            return torch.gather(a, 1, i, **kw)

        check_same("gather", gather, [x, index])
        for to in [F32, F64]:
            check_same("gather", gather, [x, index], out=torch.empty(0, dtype=to))


def test_scatter_and_index_family_rules():
    x, src = make((3, 4), F32), make((2, 4), F32)
    idx, rows = torch.tensor([[0, 1, 2, 0]]), torch.tensor([2, 0])
    cases = {
        "scatter": (lambda s, i, v, **kw: torch.scatter(s, 0, i, v, **kw), [x, idx, src]),
        "scatter int32": (lambda s, i, v, **kw: torch.scatter(s, 0, i, v, **kw),
                          [x, idx.int(), src]),
        "scatter src type": (lambda s, i, v, **kw: torch.scatter(s, 0, i, v, **kw),
                             [x, idx, src.double()]),
        "scatter value": (lambda s, i, **kw: torch.scatter(s, 1, i, 2.5, **kw), [x, idx]),
        "scatter reduce": (lambda s, i, v, **kw: torch.scatter(s, 0, i, v, reduce="multiply",
                                                               **kw), [x, idx, src]),
        "scatter_add": (lambda s, i, v, **kw: torch.scatter_add(s, 0, i, v, **kw),
                        [x, idx, src]),
        "scatter_add shapes": (lambda s, i, v, **kw: torch.scatter_add(s, 0, i, v, **kw),
                               [x, torch.zeros(1, 5, dtype=I64), src]),
        "scatter_reduce": (lambda s, i, v, **kw: torch.scatter_reduce(
            s, 0, i, v, "amax", include_self=False, **kw), [x, idx, src]),
        "index_add": (lambda s, i, v, **kw: torch.index_add(s, 0, i, v, alpha=2, **kw),
                      [x, rows, src]),
        "index_copy": (lambda s, i, v, **kw: torch.index_copy(s, 0, i, v, **kw),
                       [x, rows, src]),
        "index_reduce": (lambda s, i, v, **kw: torch.index_reduce(s, 0, i, v, "prod", **kw),
                         [x, rows, src]),
    }
    for name, (fn, args) in cases.items():
        check_same(name, fn, args)
        for to in [F32, F64]:
            check_same(name, fn, args, out=torch.empty(0, dtype=to))
    check_same("scatter_", lambda s, i, v: s.scatter_(0, i, v), [x, idx, src])
    check_same("index_add_", lambda s, i, v: s.index_add_(0, i, v), [x, rows, src])
    check_same("index_copy_ type", lambda s, i, v: s.index_copy_(0, i, v),
               [x, rows, src.double()])


def test_out_sharing_memory_with_the_input():
    """A reduction or softmax whose out= is (part of) its own input gives the
    result of its input as it was before the call, not one read while being
    written (the CPU's own result is not the reference here: it may read
    what it has already written)."""
    cases = [
        (lambda x: torch.sum(x, 0, out=x[0]), lambda x: torch.sum(x, 0)),
        (lambda x: torch._softmax(x, 1, False, out=x), lambda x: torch.softmax(x, 1)),
        (lambda x: torch.amax(x, 1, out=x[:, 0]), lambda x: torch.amax(x, 1)),
        (lambda x: torch.prod(x, 0, out=x[1]), lambda x: torch.prod(x, 0)),
        # A broadcast input: ATen cannot tell its elements from a result's.
        (lambda x: torch._softmax(x[:1].expand(4, 4), 1, False),
         lambda x: torch.softmax(x[:1].expand(4, 4), 1)),
        (lambda x: torch.sum(x[:1].expand(4, 4), 0), lambda x: torch.sum(x[:1].expand(4, 4), 0)),
    ]
    for into_self, plain in cases:
        x = make((4, 4), F32)
        got = into_self(x.to(N))
        torch.testing.assert_close(got.cpu(), plain(x), rtol=1e-6, atol=1e-6)


def aten(name, *params):
    """aten::@name on (x, *params), functional or .out."""
    op = getattr(torch.ops.aten, name)

    def call(*args, out=None):
        if out is None:
            return op.default(*args, *params)
        return op.out(*args, *params, out=out)
    call.__name__, call.params = name, params
    return call


ACTIVATIONS = {
    "gelu": aten("gelu"), "gelu_tanh": aten("gelu", "tanh"), "silu": aten("silu"),
    "mish": aten("mish"), "hardsigmoid": aten("hardsigmoid"),
    "hardswish": aten("hardswish"), "leaky_relu": aten("leaky_relu", 0.2),
    "elu": aten("elu", 1.5), "selu": aten("elu", 1.6732632, 1.0507009),
    "celu": aten("elu", 2.0, 1.0, 0.5), "softplus": aten("softplus", 2.0, 10.0),
    "hardshrink": aten("hardshrink", 0.5), "softshrink": aten("softshrink", 0.5),
    "softshrink_negative_lambda": aten("softshrink", -0.5),
    "threshold": aten("threshold", 0.5, -1.0), "hardtanh": aten("hardtanh", -0.5, 0.5),
    "clamp": aten("clamp", -0.5, 0.5), "clamp_int_bounds": aten("clamp", -1, 2),
    "clamp_float_bounds": aten("clamp", 0.5, 1.5), "clamp_min_only": aten("clamp", 0.5),
    "clamp_nothing": aten("clamp"), "clamp_min": aten("clamp_min", 0.5),
    "clamp_max": aten("clamp_max", 1),
}


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation_and_clamp_forms(name):
    """The activations and clamp take their results from their structured
    metas: refused where the CPU refuses (integers, bool, a negative
    softshrink lambda, no clamp bound), the CPU's type, shape and values
    otherwise, in every form."""
    fn = ACTIVATIONS[name]
    inplace = getattr(torch.ops.aten, fn.__name__ + "_", None)
    for ta in [torch.float32, torch.float64, torch.int64, torch.bool]:
        x = make((3, 4), ta, transposed=True)
        check_same(name, fn, [x])
        for to in [torch.float32, torch.float64, torch.int64]:
            check_same(name, fn, [x], out=torch.empty((0,), dtype=to))
        if inplace is not None:
            check_same(name + "_", lambda t: inplace.default(t, *fn.params), [x])


def test_clamp_tensor_bounds():
    x = make((3, 4), F32, transposed=True)
    lo, hi = make((4,), F32) - 1, make((3, 1), F64) + 1
    check_same("clamp.Tensor", torch.clamp, [x, lo, hi])
    check_same("clamp.Tensor int", torch.clamp, [make((3, 4), I64), lo, None])
    check_same("clamp.Tensor nan bound", torch.clamp,
               [x, torch.tensor([float("nan"), 0.0, 1.0, -1.0]), None])
    for to in [F32, F64, I64]:
        check_same("clamp.Tensor", torch.clamp, [x, lo, hi], out=torch.empty(0, dtype=to))
    check_same("clamp_ promoting", lambda a, b: a.clamp_(b), [make((3, 4), I64), lo])
    check_same("clamp_ int by float", lambda a: a.clamp_(0.5), [make((3, 4), I64)])
    check_same("clamp_", lambda a: a.clamp_(-0.5, 0.5), [x])
    check_same("clamp nan", lambda a: a.clamp(-0.5, 0.5),
               [torch.tensor([float("nan"), 2.0, -2.0, 0.25])])
    check_same("clamp min > max", lambda a: a.clamp(1.0, -1.0), [x])


BACKWARDS = {
    "gelu_backward": ("none",), "silu_backward": (), "hardsigmoid_backward": (),
    "leaky_relu_backward": (0.2, False), "leaky_relu_backward_negative_result": (-0.2, True),
    "softplus_backward": (2.0, 10.0), "hardshrink_backward": (0.5,),
    "softshrink_backward": (0.5,), "threshold_backward": (0.25,),
    "elu_backward": None, "hardtanh_backward": (-0.5, 0.5),
    "hardswish_backward": (), "mish_backward": (),
}


@pytest.mark.parametrize("name", sorted(BACKWARDS))
def test_activation_backward_forms(name):
    """The backwards' results: their structured metas' (the promoted type
    of grad and input, their broadcast shape, out= checked), or
    TensorIterator's binary ones where ATen has no meta."""
    op = getattr(torch.ops.aten, name.split("_negative")[0])
    params = BACKWARDS[name]
    g, x = make((3, 4), F32), make((3, 4), F32, transposed=True)

    def fn(grad, inp, out=None):
        if params is None:  # elu_backward(grad, alpha, scale, input_scale, is_result, x)
            args = (grad, 1.5, 1.0, 1.0, False, inp)
        else:
            args = (grad, inp, *params)
        if out is None:
            return op.default(*args)
        return op.grad_input(*args, grad_input=out)

    check_same(name, fn, [g, x])
    check_same(name + " types", fn, [g.double(), x])
    check_same(name + " broadcast", fn, [make((2, 3, 4), F32), x])
    for to in [F32, F64, I64] if hasattr(op, "grad_input") else []:
        check_same(name, fn, [g, x], out=torch.empty((0,), dtype=to))


@pytest.mark.parametrize("reduction", [0, 1, 2])
def test_loss_forms(reduction):
    """mse and smooth L1 losses: their metas' results (the promoted type;
    the broadcast shape unreduced, 0-dim reduced), a negative beta refused."""
    a, b = make((3, 4), F32, transposed=True), make((4,), F32)
    for name, params in [("mse_loss", ()), ("smooth_l1_loss", (0.5,)),
                         ("smooth_l1_loss", (0.0,)), ("smooth_l1_loss", (-1.0,))]:
        fn = aten(name, reduction, *params)
        check_same(name, fn, [a, b])
        check_same(name + " types", fn, [a, b.double()])
        for to in [F32, F64, I64]:
            check_same(name, fn, [a, b], out=torch.empty((0,), dtype=to))


@pytest.mark.parametrize("reduction", [0, 1, 2])
def test_nll_loss_forms(reduction):
    """nll_loss forward and backward: their metas' results and checks (1-D
    and 2-D input, weight of the wrong size, mismatched batch), ignored
    targets, and the out= overloads."""
    x = torch.log_softmax(make((5, 3), F32), 1)
    t, w = torch.tensor([0, 2, 1, 1, 0]), torch.tensor([1.0, 2.0, 0.5])
    for weight in (None, w, torch.ones(4)):
        def fwd(a, tgt, out=None):
            nw, tgt = None if weight is None else weight.to(a.device), tgt.to(a.device)
            if out is None:
                return torch.ops.aten.nll_loss_forward(a, tgt, nw, reduction, 1)[0]
            total = torch.empty(0, dtype=out.dtype, device=out.device)
            return torch.ops.aten.nll_loss_forward.output(a, tgt, nw, reduction, 1,
                                                          output=out, total_weight=total)[0]

        def bwd(a, tgt, out=None):
            nw, tgt = None if weight is None else weight.to(a.device), tgt.to(a.device)
            loss, total = torch.ops.aten.nll_loss_forward(a, tgt, nw, reduction, 1)
            g = torch.ones_like(loss)
            if out is None:
                return torch.ops.aten.nll_loss_backward(g, a, tgt, nw, reduction, 1, total)
            return torch.ops.aten.nll_loss_backward.grad_input(g, a, tgt, nw, reduction, 1,
                                                               total, grad_input=out)

        for fn in (fwd, bwd):
            check_same(fn.__name__, fn, [x, t])
            check_same(fn.__name__ + " 1-D", fn, [x[0], t[1]])
            check_same(fn.__name__ + " batch", fn, [x, t[:4]])
            check_same(fn.__name__, fn, [x, t], out=torch.empty(0))


def test_vector_norm_rules():
    """linalg.vector_norm, torch.norm along dims and renorm: their metas'
    results and checks (integers refused, a complex input's real result,
    an empty input's inf or negative norm refused, out= of another type
    refused) in every form, in every order the card computes differently."""
    x = make((3, 4), F32, transposed=True)
    inputs = [x, make((3, 4), F64), make((3, 4), I64), make((3, 4), torch.float16),
              torch.complex(x, x.flip(0)), make((0, 4), F32)]
    for ord_ in (2, 1, 0, 3, 0.5, -1, float("inf"), float("-inf")):
        for dim, keepdim in ((None, False), (1, False), ((0, 1), True), (0, True)):
            def vn(a, out=None):
                kw = {} if out is None else {"out": out}
                return torch.linalg.vector_norm(a, ord_, dim, keepdim, **kw)
            for inp in inputs:
                check_same("vector_norm", vn, [inp])
            if dim is None:  # of a 0-dim tensor (one check_same keeps on the CPU)
                s = torch.tensor(-2.5)
                for k in (False, True):
                    want = torch.linalg.vector_norm(s, ord_, keepdim=k)
                    got = torch.linalg.vector_norm(s.to(N), ord_, keepdim=k)
                    assert got.shape == want.shape and got.dtype == want.dtype
                    assert got.cpu().item() == want.item(), (ord_, got, want)
            for to in (F32, F64):
                check_same("vector_norm", vn, [x], out=torch.empty(0, dtype=to))
    check_same("vector_norm dtype", lambda a: torch.linalg.vector_norm(a, dtype=F64), [x])
    check_same("vector_norm dtype", lambda a: torch.linalg.vector_norm(a, dtype=I64), [x])
    for fn in (aten("norm", 2, [1], False), aten("norm", None, [0], True),
               aten("norm", 3, [1], False, F64), aten("norm", 1, [], False)):
        op = fn.__name__
        for inp in inputs[:5]:
            if len(fn.params) == 4:  # ScalarOpt_dim_dtype
                def call(a, out=None, fn=fn):
                    o = torch.ops.aten.norm
                    return (o.ScalarOpt_dim_dtype(a, *fn.params) if out is None
                            else o.dtype_out(a, *fn.params, out=out))
            else:
                def call(a, out=None, fn=fn):
                    o = torch.ops.aten.norm
                    return (o.ScalarOpt_dim(a, *fn.params) if out is None
                            else o.out(a, *fn.params, out=out))
            check_same(op, call, [inp])
            for to in (F32, F64):
                check_same(op, call, [inp], out=torch.empty(0, dtype=to))
    check_same("norm", lambda a: torch.norm(a), [x])
    check_same("norm", lambda a: torch.norm(a, 3), [x])
    check_same("norm", lambda a: torch.norm(a, dtype=F64), [x])
    for p, dim, maxnorm in ((2, 0, 1.0), (1, 1, 0.5), (3, -1, 2.0), (0, 0, 1.0), (2, 0, -1.0)):
        fn = aten("renorm", p, dim, maxnorm)
        for inp in (x, make((2, 3, 4), F64), make((4,), F32), make((3, 4), torch.float16)):
            check_same("renorm", fn, [inp])
            check_same("renorm_", lambda t: t.renorm_(p, dim, maxnorm), [inp])
            for to in (inp.dtype, F64):
                check_same("renorm", fn, [inp], out=torch.empty(0, dtype=to))


def test_cat_rules():
    """cat: its meta's promoted type, shape checks and refusal of an out=
    overlapping an input; 1-D empty inputs skipped."""
    a, b = make((2, 3), F32, transposed=True), make((1, 3), F64)

    def cat(x, y, **kw):
        return torch.cat([x, y], 0, **kw)

    check_same("cat", cat, [a, b])
    check_same("cat dim 1", lambda x, y: torch.cat([x, y], 1), [a, make((2, 2), I64)])
    check_same("cat shapes", cat, [a, make((2, 2), F32)])
    check_same("cat legacy empty", cat, [a, torch.empty(0)])
    check_same("cat all empty", cat, [torch.empty(0), torch.empty(0)])
    for to in [F32, F64, I64]:
        check_same("cat", cat, [a, b], out=torch.empty(0, dtype=to))
    check_same("cat into an input", lambda x: torch.cat([x, x], 0, out=x), [make((2, 3), F32)])


def test_upsample_rules():
    """Upsampling: its metas' results (channels-last kept, out= of another
    type refused, sizes checked) in every form, forward and backward."""
    x = make((1, 2, 3, 4), F32)
    cl = x.contiguous(memory_format=torch.channels_last)
    for fn in (aten("upsample_nearest2d", [6, 8]), aten("upsample_bilinear2d", [5, 7], False),
               aten("upsample_bicubic2d", [5, 7], True), aten("_upsample_nearest_exact2d", [2, 3]),
               aten("upsample_nearest2d", [0, 8])):
        for inp in (x, cl, make((2, 3, 4), F32), make((1, 2, 3, 4), I64)):
            check_same(fn.__name__, fn, [inp])
        for to in (F32, F64):
            check_same(fn.__name__, fn, [x], out=torch.empty(0, dtype=to))
        # a resized out= of a channels-last input is channels-last too
        check_same(fn.__name__, fn, [cl], out=torch.empty(0))
        check_same(fn.__name__, fn, [cl], out=torch.empty(2, 2))
    g = make((1, 2, 6, 8), F32)

    def nearest_bw(grad, out=None):
        op = torch.ops.aten.upsample_nearest2d_backward
        if out is None:
            return op.default(grad, [6, 8], [1, 2, 3, 4])
        return op.grad_input(grad, [6, 8], [1, 2, 3, 4], grad_input=out)

    check_same("upsample_nearest2d_backward", nearest_bw, [g])
    check_same("upsample_nearest2d_backward sizes", nearest_bw, [make((1, 2, 5, 8), F32)])
    for to in (F32, F64):
        check_same("upsample_nearest2d_backward", nearest_bw, [g], out=torch.empty(0, dtype=to))


def test_isin_rules():
    e, t = make((3, 4), F32), make((5,), I64)
    t[0] = e[1, 2].round()
    for elements, test in ((e, t), (e.round(), t), (make((3, 4), I64), t), (e, t[:0]),
                           (make((3, 4), torch.bool), t)):
        for invert in (False, True):
            def isin(a, b, **kw):
                return torch.isin(a, b, invert=invert, **kw)

            check_same("isin", isin, [elements, test])
            check_same("isin", isin, [elements, test], out=torch.empty(0, dtype=torch.bool))
            check_same("isin", isin, [elements, test], out=torch.empty(0, dtype=F32))
            check_same("isin scalar", lambda a: torch.isin(a, 2, invert=invert), [elements])
    check_same("isin nan", torch.isin, [torch.tensor([float("nan"), 1.0]),
                                        torch.tensor([float("nan"), 1.0])])


def overloads(name, out_overload, *params):
    """aten::@name on (*args, *params): functional, or its @out_overload
    with the out= tensors (one, or a tuple) in the schema's order."""
    packet = getattr(torch.ops.aten, name)

    def call(*args, out=None):
        if out is None:
            return packet.default(*args, *params)
        op = getattr(packet, out_overload)
        names = [a.name for a in op._schema.arguments if a.is_out]
        outs = out if isinstance(out, tuple) else (out,)
        return op(*args, *params, **dict(zip(names, outs)))
    call.__name__ = name
    return call


def check_results(name, fn, args, out=None, values=True):
    """check_same for operators of one result or several (a tuple, out= a
    tuple): each result of the CPU's type, shape, strides and values."""
    nargs = [on(a) for a in args]
    nout = None if out is None else (
        tuple(o.to(N) for o in out) if isinstance(out, tuple) else out.to(N))
    want, werr = outcome(fn, args, out)
    got, gerr = outcome(fn, nargs, nout)
    outs = () if out is None else out if isinstance(out, tuple) else (out,)
    where = f"{name} on {[getattr(a, 'dtype', a) for a in args]}" + "".join(
        f" out={o.dtype}{tuple(o.shape)}{o.stride()}" for o in outs)
    if werr or gerr:
        assert type(werr) is type(gerr), f"{where}: CPU raised {werr!r}, neuron raised {gerr!r}"
        return
    if isinstance(want, torch.Tensor):
        want, got, nout = (want,), (got,), None if nout is None else (nout,)
    assert len(got) == len(want), where
    for i, (g, w) in enumerate(zip(got, want)):
        at = f"{where}: result {i}"
        assert g.device.type == N, at
        if nout is not None:
            assert g is nout[i], f"{at}: out= returned another tensor"
        assert g.dtype == w.dtype, f"{at}: dtype {g.dtype}, CPU {w.dtype}"
        assert g.shape == w.shape, f"{at}: shape {g.shape}, CPU {w.shape}"
        assert g.stride() == w.stride(), f"{at}: strides {g.stride()}, CPU {w.stride()}"
        if values:
            torch.testing.assert_close(g.cpu(), w, rtol=1e-5, atol=1e-5, equal_nan=True,
                                       msg=lambda m: f"{at}: {m}")


def check_out_forms(name, fn, args, values=True, strided=True):
    """fn functional, and with out= tensors: empty ones (resized), ones of the
    wrong shape (resized), of the wrong type (refused), and (@strided)
    non-contiguous ones of the right shape (written through their strides)."""
    check_results(name, fn, args, values=values)
    try:
        want = fn(*args)
    except (RuntimeError, TypeError, ValueError, IndexError):
        return
    want = want if isinstance(want, tuple) else (want,)
    pack = (lambda ts: tuple(ts)) if len(want) > 1 else (lambda ts: ts[0])
    other = {F32: F64, F64: F32, I64: torch.int32, torch.int32: I64}
    check_results(name, fn, args, pack([torch.empty(0, dtype=w.dtype) for w in want]), values)
    check_results(name, fn, args, pack([torch.empty(2, 2, dtype=w.dtype) for w in want]), values)
    for i in range(len(want)):
        outs = [torch.empty(0, dtype=w.dtype) for w in want]
        outs[i] = torch.empty(0, dtype=other.get(want[i].dtype, F32))
        check_results(name, fn, args, pack(outs), values)
    if strided:
        check_results(name, fn, args, pack(
            [torch.empty(*w.shape[:-2], w.shape[-1], w.shape[-2], dtype=w.dtype).mT
             if w.dim() >= 2 else torch.empty(w.shape, dtype=w.dtype) for w in want]), values)


def test_pooling_rules():
    """The structured poolings: their metas' results (channels-last kept,
    checks, out= of another type refused, resized) forward and backward."""
    x = make((2, 3, 7, 8), F32)
    cl = x.contiguous(memory_format=torch.channels_last)
    for inp in (x, cl, make((3, 7, 8), F32)):
        for k, s, p, d, c in (([3, 2], [2, 1], [1, 0], [1, 1], False),
                              ([3], [], [1], [2], True), ([9, 2], [1], [0], [1], False)):
            mp = overloads("max_pool2d_with_indices", "out", k, s, p, d, c)
            check_out_forms("max_pool2d_with_indices", mp, [inp])
            try:
                v, i = mp(inp)
            except RuntimeError:
                continue
            g = torch.randn_like(v)
            check_out_forms("max_pool2d_with_indices_backward",
                            overloads("max_pool2d_with_indices_backward", "grad_input"),
                            [g, inp, k, s, p, d, c, i])
            for cip, div in ((True, None), (False, None), (True, 3), (True, 0)):
                ap = overloads("avg_pool2d", "out", k, s, p, c, cip, div)
                check_out_forms("avg_pool2d", ap, [inp])
                check_out_forms("avg_pool2d_backward",
                                overloads("avg_pool2d_backward", "grad_input",
                                          k, s, p, c, cip, div), [g, inp])
        for size in ([3, 4], [7, 8], [1, 5], [0, 2]):
            amp = overloads("adaptive_max_pool2d", "out", size)
            check_out_forms("adaptive_max_pool2d", amp, [inp])
            try:
                v, i = amp(inp)
            except RuntimeError:
                continue
            check_out_forms("adaptive_max_pool2d_backward",
                            overloads("adaptive_max_pool2d_backward", "grad_input"),
                            [torch.randn_like(v), inp, i])
    check_out_forms("max_pool2d_with_indices grad shape",
                    overloads("max_pool2d_with_indices_backward", "grad_input"),
                    [make((2, 3, 3, 3), F32), x, [3], [2], [1], [1], False,
                     torch.zeros(2, 3, 3, 3, dtype=I64)])
    x3 = make((2, 2, 5, 6, 7), F32)
    for inp in (x3, x3[0]):
        for k, s, p, c in (([3, 2, 2], [2], [1, 0, 1], False), ([2], [], [0], True)):
            # The CPU's 3-d poolings write a non-contiguous out= as if it were
            # contiguous (wrong values); the card writes through its strides.
            ap = overloads("avg_pool3d", "out", k, s, p, c, True, None)
            check_out_forms("avg_pool3d", ap, [inp], strided=False)
            check_out_forms("avg_pool3d_backward",
                            overloads("avg_pool3d_backward", "grad_input", k, s, p, c, False, 2),
                            [torch.randn_like(ap(inp)), inp], strided=False)
        amp = overloads("adaptive_max_pool3d", "out", [2, 3, 3])
        check_out_forms("adaptive_max_pool3d", amp, [inp], strided=False)
        v, i = amp(inp)
        check_out_forms("adaptive_max_pool3d_backward",
                        overloads("adaptive_max_pool3d_backward", "grad_input"),
                        [torch.randn_like(v), inp, i], strided=False)
    check_out_forms("avg_pool3d too large", overloads("avg_pool3d", "out", [6], [1], [0],
                                                      False, True, None), [x3])


def test_fractional_max_pool_rules():
    x = make((2, 3, 9, 8), F32)
    u = torch.rand(2, 3, 2, generator=torch.Generator().manual_seed(3))
    for inp, out_size in ((x, [4, 3]), (x[0], [5, 5]), (x, [9, 9])):
        fmp = overloads("fractional_max_pool2d", "output", [2, 3], out_size)
        check_out_forms("fractional_max_pool2d", fmp, [inp, u])
        try:
            v, i = fmp(inp, u)
        except RuntimeError:
            continue
        check_out_forms("fractional_max_pool2d_backward",
                        overloads("fractional_max_pool2d_backward", "grad_input",
                                  [2, 3], out_size), [torch.randn_like(v), inp, i])
    x3 = make((2, 2, 6, 7, 5), F32)
    u3 = torch.rand(2, 2, 3, generator=torch.Generator().manual_seed(4))
    for inp, out_size in ((x3, [3, 4, 2]), (x3, [3, 7, 2])):
        check_out_forms("fractional_max_pool3d",
                        overloads("fractional_max_pool3d", "output", [2, 2, 2], out_size),
                        [inp, u3])


def test_padding_rules():
    pads = {1: ([2, 1], [-1, 2], [4, 0]), 2: ([1, 2, 0, 1], [2, 2, 3, 3]),
            3: ([1, 0, 1, 1, 0, 1], [1, 1, 1, 1, 2, 2], [4, 0, 0, 0, 0, 0])}
    shapes = {1: [(2, 3, 4), (3, 4)], 2: [(2, 3, 4, 5), (3, 4, 5)],
              3: [(1, 2, 3, 4, 5), (2, 3, 4, 5)]}
    for kind in ("reflection", "replication"):
        for n in (1, 2, 3):
            name = f"{kind}_pad{n}d"
            for shape in shapes[n]:
                x = make(shape, F32)
                for p in pads[n]:
                    fw = overloads(name, "out", p)
                    # The CPU's paddings restride a non-contiguous out=; the
                    # card's keep its strides (the same values): not compared
                    check_out_forms(name, fw, [x], strided=False)
                    try:
                        y = fw(x)
                    except RuntimeError:
                        continue
                    bw = overloads(name + "_backward", "grad_input", p)
                    check_out_forms(name + "_backward", bw, [torch.randn_like(y), x],
                                    strided=False)
                    check_out_forms(name + "_backward grad shape", bw,
                                    [torch.randn(*y.shape[:-1], y.shape[-1] + 1), x],
                                    strided=False)
            # more dims than a batch: the CPU pads a misread tensor, the card refuses
            with pytest.raises(RuntimeError, match="batch mode"):
                overloads(name, "out", pads[n][0])(make((5,) * (n + 3), F32).to(N))


def spd(*shape):
    a = make(shape, F64)
    return a @ a.mT + shape[-1] * torch.eye(shape[-1], dtype=F64)


def test_linalg_factorization_rules():
    """The structured factorizations and solves: the metas' results (the
    CPU's column-major strides, checks, out= refused or resized as on the
    CPU, written through the strides of a non-contiguous one)."""
    a, b = make((3, 4, 4), F64), make((4, 4), F64)
    rect, wide, bad = make((2, 5, 3), F64), make((3, 5), F64), make((3, 4), F64)
    for A in (a, b, a.mT, rect, wide, bad, make((4, 4), F32), make((2, 0, 0), F64)):
        check_out_forms("linalg_lu_factor_ex", overloads("linalg_lu_factor_ex", "out"), [A])
        check_out_forms("linalg_lu", overloads("linalg_lu", "out"), [A])
        square = A.shape[-1] == A.shape[-2]
        for upper in (False, True):
            # LAPACKs leave different partial factors of a matrix that is
            # not positive definite: its info and layout only
            chol = overloads("linalg_cholesky_ex", "L", upper)
            check_out_forms("linalg_cholesky_ex", chol, [spd(*A.shape) if square else A])
            check_out_forms("linalg_cholesky_ex failing", chol, [A], values=False)
            check_results("linalg_cholesky_ex info", lambda a: chol(a)[1], [A])
        check_out_forms("linalg_inv_ex", overloads("linalg_inv_ex", "inverse"), [A])
        check_out_forms("_linalg_det", overloads("_linalg_det", "result"), [A])
        check_out_forms("_linalg_slogdet", overloads("_linalg_slogdet", "sign"), [A])
        check_out_forms("linalg_qr", overloads("linalg_qr", "out", "reduced"), [A])
        check_out_forms("linalg_qr complete", overloads("linalg_qr", "out", "complete"), [A])
        check_out_forms("linalg_qr r", overloads("linalg_qr", "out", "r"), [A])
        check_out_forms("_linalg_svd", overloads("_linalg_svd", "U", False), [A])
        check_out_forms("_linalg_svd full", overloads("_linalg_svd", "U", True), [A])
        check_out_forms("_linalg_svd values", overloads("_linalg_svd", "U", False, False), [A])
        s = A + A.mT if A.shape[-1] == A.shape[-2] else A
        check_out_forms("_linalg_eigh", overloads("_linalg_eigh", "eigenvalues", "L"), [s])
        check_out_forms("_linalg_eigh U", overloads("_linalg_eigh", "eigenvalues", "U", False),
                        [s])
        check_out_forms("linalg_ldl_factor_ex", overloads("linalg_ldl_factor_ex", "out"), [s])
    check_out_forms("linalg_cholesky_ex check_errors",
                    overloads("linalg_cholesky_ex", "L", False, True), [-spd(3, 3)])
    check_out_forms("linalg_lu no pivot", overloads("linalg_lu", "out", False), [b])


def test_linalg_solve_rules():
    A, LU_A = make((3, 4, 4), F64), make((4, 4), F64)
    LU, piv = torch.linalg.lu_factor(A)
    LU1, piv1 = torch.linalg.lu_factor(LU_A)
    for B in (make((3, 4, 2), F64), make((4, 2), F64), make((2, 3, 4, 2), F64),
              make((4, 3), F64).mT, make((4, 5), F32), make((5, 2), F64), make((4,), F64)):
        for left, adjoint in ((True, False), (True, True), (False, False)):
            check_out_forms("linalg_lu_solve", overloads("linalg_lu_solve", "out", left, adjoint),
                            [LU, piv, B])
            check_out_forms("linalg_lu_solve 2-d", overloads("linalg_lu_solve", "out", left),
                            [LU1, piv1, B])
        for left in (True, False):
            check_out_forms("_linalg_solve_ex", overloads("_linalg_solve_ex", "result", left),
                            [A, B])
            check_out_forms("_linalg_solve_ex 2-d", overloads("_linalg_solve_ex", "result", left),
                            [LU_A.mT, B])
        for upper, trans, unit in ((True, False, False), (False, True, True)):
            check_out_forms("triangular_solve",
                            overloads("triangular_solve", "X", upper, trans, unit), [B, A])
        if B.dim() <= 3:  # the CPU's ldl_solve crashes on a B of more batch dims than LD
            LD, lpiv = torch.linalg.ldl_factor(A + A.mT)
            check_out_forms("linalg_ldl_solve", overloads("linalg_ldl_solve", "out"),
                            [LD, lpiv, B])
    check_out_forms("linalg_lu_solve int64 pivots", overloads("linalg_lu_solve", "out"),
                    [LU, piv.long(), make((4, 2), F64)])
    for unpack_data, unpack_pivots in ((True, True), (False, True), (True, False)):
        for lu, p in ((LU, piv), (*torch.linalg.lu_factor(make((2, 5, 3), F64)),),
                      (*torch.linalg.lu_factor(make((3, 5), F64)),)):
            check_out_forms("lu_unpack", overloads("lu_unpack", "out", unpack_data, unpack_pivots),
                            [lu, p])


def test_linalg_cross_rules():
    for a, b, dim in ((make((4, 3), F32), make((4, 3), F32), 1),
                      (make((1, 3), F32), make((4, 3), F32), -1),
                      (make((3, 4), F32), make((3, 4), F32), 0),
                      (make((3, 4), F32), make((3, 4), F64), 0),
                      (make((3, 4), F32), make((3, 4), F32), 1),
                      (make((3,), F32), make((2, 3), F32), 0),
                      (make((4, 3), I64), make((4, 3), I64), 1)):
        check_out_forms("linalg_cross", overloads("linalg_cross", "out", dim), [a, b])

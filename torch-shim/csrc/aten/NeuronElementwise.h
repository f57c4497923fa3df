// SPDX-License-Identifier: MIT
// What the elementwise operator files share: operands (CPU scalars put on
// the card), result types, the lowering of one UNARY, BINARY or COMPARE
// instruction into a functional, in-place or out= result, the kernels of
// the unary tables' rows, and the few helpers of the composed operators.
#pragma once

#include "NeuronMeta.h"

namespace torch_neuron {

// A neuron operand for @t: itself, or a CPU scalar put on @dev (one fill).
// A float64 scalar in an operation of narrower type @common (the operands'
// promoted type) is put there as float32, as the CPU casts it before
// computing; in float64 it stays float64.
inline at::Tensor operand(const at::Tensor& t, const at::Device& dev,
                          at::ScalarType common = at::kDouble) {
  if (is_neuron(t))
    return t;
  TORCH_CHECK(is_cpu_scalar(t), "Expected all tensors to be on the same "
              "device, but found at least two devices, ", dev, " and ",
              t.device(), "!");
  at::ScalarType st = t.scalar_type();
  if (t.is_complex()) {
    at::Tensor n = empty_neuron({}, at::kComplexFloat, dev);
    nrn_tensor_desc d = desc(n);
    c10::complex<double> z = t.item<c10::complex<double>>();
    NEURON_OP(nrn_op_fill_complex(stream_for(n), &d, z.real(), z.imag()));
    return n;
  }
  if (!supported_dtype(st) || (st == at::kDouble && common != at::kDouble))
    st = at::kFloat;
  at::Tensor n = empty_neuron({}, st, dev);
  nrn_tensor_desc d = desc(n);
  NEURON_OP(nrn_op_fill(stream_for(n), &d, t.item<double>()));
  return n;
}

// The CPU scalar @v as the CPU computes with it next to @other: cast to
// their common type when that is an integer type (uint8 < 300 compares
// with 300 cast to uint8, 44; int8 // 200 divides by -56), unless the
// operation computes in floating point whatever its operands (@to_float).
inline double scalar_value(const at::Tensor& v, const at::Tensor& other,
                           bool to_float = false) {
  at::ScalarType ct = at::result_type(v, other);
  if (!to_float && at::isIntegralType(ct, false) && v.scalar_type() != ct)
    return v.to(ct).item<double>();
  return v.item<double>();
}

inline at::ScalarType float_result(at::ScalarType t) {
  return at::isFloatingType(t) || at::isComplexType(t)
             ? t : at::typeMetaToScalarType(at::get_default_dtype());
}

// An elementwise instruction with a complex operand: the card computes the
// functions nisa_takes_complex() lists (docs/hardware.md, "Complex
// numbers"), the others are refused here, naming the operator; a complex
// source gives a complex result but for @real_ok functions (abs, angle,
// the predicates) and comparisons.
inline void check_complex(nisa_opcode op, unsigned sub, bool any_complex,
                          const at::Tensor& out, bool real_ok = false) {
  if (!any_complex && !out.is_complex())
    return;
  std::string name = current_op_name();
  TORCH_CHECK(nisa_takes_complex(op, sub), "neuron: ",
              name.empty() ? "this operator" : name, " is not implemented "
              "for complex64 on the card");
  TORCH_CHECK(out.is_complex() || real_ok || !any_complex, "neuron: ",
              name.empty() ? "this operator" : name, ": the result of "
              "complex operands is complex, got an output of type ",
              out.scalar_type());
}

// Kind BITS of the ISA's tables: integer (and bool) operands only.
#define NEURON_ISA_BITS_EXACT false
#define NEURON_ISA_BITS_REAL false
#define NEURON_ISA_BITS_BITS true
#define NEURON_ISA_BIN_BITS_(NAME, name, kind, res) \
  case NISA_BIN_##NAME: return NEURON_ISA_BITS_##kind;
inline bool binary_is_bitwise(nisa_binary op) {
  switch (op) {
    NISA_BINARY_OPS(NEURON_ISA_BIN_BITS_)
    case NISA_NUM_BINARY: break;
  }
  return false;
}

// Operators whose result is floating even for integer operands: RESULT
// FLOAT in the ISA's table.
#define NEURON_ISA_FLOAT_SAME false
#define NEURON_ISA_FLOAT_FLOAT true
#define NEURON_ISA_BIN_FLOAT_(NAME, name, kind, res) \
  case NISA_BIN_##NAME: return NEURON_ISA_FLOAT_##res;
inline bool binary_is_float(nisa_binary op) {
  switch (op) {
    NISA_BINARY_OPS(NEURON_ISA_BIN_FLOAT_)
    case NISA_NUM_BINARY: break;
  }
  return false;
}

// The operand types ISA operator @op takes: the bitwise ones, integers and
// bool only, as the CPU's kernels.
inline void check_binary_types(nisa_binary op, const at::Tensor& a, const at::Tensor& b) {
  TORCH_CHECK(!binary_is_bitwise(op) || !at::isFloatingType(at::result_type(a, b)),
              "neuron: bitwise operations are not implemented for '", at::result_type(a, b),
              "' (integer and bool tensors only)");
}

inline at::Tensor& binary_into(nisa_binary op, const at::Tensor& a,
                               const at::Tensor& b, double alpha, at::Tensor& out) {
  at::Device dev = out.device();
  check_device(out, a);
  check_device(out, b);
  check_complex(NISA_INSN_BINARY, op, a.is_complex() || b.is_complex(), out);
  nrn_stream* s = stream_for(out);
  nrn_tensor_desc o = desc(out);
  if (is_neuron(a) && is_cpu_scalar(b) && !b.is_complex()) {
    nrn_tensor_desc x = desc(a);
    NEURON_OP(nrn_op_binary_scalar(s, op, &o, &x, scalar_value(b, a, binary_is_float(op)),
                                   alpha, 0));
  } else if (is_cpu_scalar(a) && is_neuron(b) && alpha == 1.0 && !a.is_complex()) {
    nrn_tensor_desc y = desc(b);
    NEURON_OP(nrn_op_binary_scalar(s, op, &o, &y, scalar_value(a, b, binary_is_float(op)),
                                   1.0, 1));
  } else {
    at::ScalarType ct = at::result_type(a, b);
    at::Tensor x = operand(a, dev, ct), y = operand(b, dev, ct);
    nrn_tensor_desc dx = desc(x), dy = desc(y);
    NEURON_OP(nrn_op_binary(s, op, &o, &dx, &dy, alpha));
  }
  return out;
}

inline at::Device result_device(const at::Tensor& a, const at::Tensor& b) {
  return is_neuron(a) ? a.device() : b.device();
}

// An elementwise operator's result tensor, and the type ATen computes it in
// (the operands' common type). Where they differ -- out= or self of
// another type -- the CPU computes in the common type and casts the values
// into the result, and so does compute_in.
struct EwResult {
  at::Tensor tensor;
  at::ScalarType compute;
};

template <class F>
at::Tensor& compute_in(const EwResult& r, at::Tensor& out, F&& f) {
  if (r.compute == out.scalar_type()) {
    f(out);
    return out;
  }
  at::Tensor t = at::empty(out.sizes(), out.options().dtype(r.compute));
  f(t);
  return out.copy_(t);
}

// The result of an operator whose structured meta @Meta is a TensorIterator
// (add, mul, ...), in @form (@given: out=, or self in place); of another
// single-result meta, its result and type.
template <class Meta, class... Args>
EwResult ew_meta(Form form, const at::Tensor& given, const Args&... args) {
  NeuronMeta<Meta> m(form, {given});
  m.meta(args...);
  if constexpr (std::is_base_of_v<at::TensorIteratorBase, Meta>)
    return {m.outs[0], m.common_dtype()};
  else
    return {m.outs[0], m.outs[0].scalar_type()};
}

// The result of binary operator @op on @a and @b as ATen's TensorIterator
// builders for binary operators make it (binary_float_op for the table's
// FLOAT operators): a new tensor when @out is undefined -- the broadcast
// shape, the promoted type, the inputs' memory layout --, else @out (out=,
// or self in place) checked and resized; devices, safe casting and memory
// overlap checked as for the CPU.
inline EwResult binary_result(nisa_binary op, const at::Tensor& a, const at::Tensor& b,
                              at::TensorBase out = {}) {
  check_binary_types(op, a, b);
  at::TensorIterator it = binary_is_float(op) ? at::TensorIterator::binary_float_op(out, a, b)
                                              : at::TensorIterator::binary_op(out, a, b);
  return {it.output(), it.common_dtype()};
}

inline at::Tensor binary(nisa_binary op, const at::Tensor& a, const at::Tensor& b,
                         double alpha = 1.0) {
  at::Tensor out = binary_result(op, a, b).tensor;
  return binary_into(op, a, b, alpha, out);
}

inline at::Tensor& binary_out(nisa_binary op, const at::Tensor& a,
                              const at::Tensor& b, double alpha, at::Tensor& out) {
  return compute_in(binary_result(op, a, b, out), out,
                    [&](at::Tensor& o) { binary_into(op, a, b, alpha, o); });
}

inline at::Tensor& binary_inplace(nisa_binary op, at::Tensor& self,
                                  const at::Tensor& b, double alpha = 1.0) {
  return binary_out(op, self, b, alpha, self);
}

inline at::Tensor scalar_tensor(const at::Scalar& v) {
  return at::scalar_tensor(v, at::TensorOptions().dtype(
      v.isComplex() ? at::kComplexDouble : v.isFloatingPoint() ? at::kDouble
      : v.isBoolean() ? at::kBool : at::kLong)).fill_(v);
}

// Wrapped-number scalars take part in type promotion like Python numbers.
inline at::Tensor wrapped(const at::Scalar& v) {
  at::Tensor t = scalar_tensor(v);
  t.unsafeGetTensorImpl()->set_wrapped_number(true);
  return t;
}

// An operand as a tensor: itself, or a scalar wrapped as a Python number.
inline const at::Tensor& as_tensor(const at::Tensor& t) { return t; }
inline at::Tensor as_tensor(const at::Scalar& s) { return wrapped(s); }

// ---- unary: dst = fn(src; p, q) ----

#define NEURON_UN_NAME_(NAME, name, kind) #name,
inline const char* const unary_names[NISA_NUM_UNARY] = {NISA_UNARY_OPS(NEURON_UN_NAME_)};

// How a unary function's result type follows its operand's.
enum class UnaryResult {
  Keep,       // the operand's (neg, abs, floor, ...)
  Float,      // integers give the default float type (exp, sin, ...)
  FloatOnly,  // floating operands only (frac, activations with parameters)
  Bool,       // predicates (isnan, ...)
};

inline at::ScalarType unary_result_type(UnaryResult r, at::ScalarType t,
                                        const char* name,
                                        nisa_unary fn = NISA_NUM_UNARY) {
  // |z| and arg z of a complex z are real.
  if (at::isComplexType(t) && (fn == NISA_UN_ABS || fn == NISA_UN_ANGLE))
    return c10::toRealValueType(t);
  switch (r) {
    case UnaryResult::Keep: return t;
    case UnaryResult::Float: return float_result(t);
    case UnaryResult::FloatOnly:
      TORCH_CHECK(at::isFloatingType(t), "neuron: ", name, " is not "
                  "implemented for '", t, "' (floating types only)");
      return t;
    case UnaryResult::Bool: return at::kBool;
  }
  return t;
}

// Complex functions composed of ones the card computes, by the CPU's
// formulas: silu(z) = z / (1 + exp(-z)); sinc(z) = sin(pi z) / (pi z), 1
// where z is 0. Undefined for the others.
inline at::Tensor complex_composed(nisa_unary fn, const at::Tensor& z) {
  if (fn == NISA_UN_SILU)
    return z / (at::exp(-z) + 1);
  if (fn == NISA_UN_SINC) {
    at::Tensor w = z * M_PI;
    return at::where(z == 0, at::ones({}, z.options()), at::sin(w) / w);
  }
  return at::Tensor();
}

inline at::Tensor& unary_into(nisa_unary fn, const at::Tensor& a, at::Tensor& out,
                              double p = 0.0, double q = 0.0) {
  check_device(out, a);
  if (a.is_complex() && out.is_complex() && (fn == NISA_UN_SILU || fn == NISA_UN_SINC))
    return out.copy_(complex_composed(fn, a));
  check_complex(NISA_INSN_UNARY, fn, a.is_complex(), out,
                fn == NISA_UN_ABS || fn == NISA_UN_ANGLE || fn == NISA_UN_ISNAN ||
                    fn == NISA_UN_ISINF || fn == NISA_UN_ISFINITE);
  nrn_tensor_desc o = desc(out), x = desc(a);
  if (p == 0.0 && q == 0.0)
    NEURON_OP(nrn_op_unary(stream_for(out), fn, &o, &x));
  else
    NEURON_OP(nrn_op_unary_param(stream_for(out), fn, &o, &x, p, q));
  return out;
}

// The result of unary function @fn (result kind @r; NISA_NUM_UNARY: an
// operator of its own) of @a as ATen's
// TensorIterator builders make it: unary_op (the operand's type; out= of
// that type), unary_float_op (integers give the default float type; out=
// any type the result casts to safely) or the boolean predicates' config;
// a new tensor when @out is undefined, else @out checked and resized. |z|
// and arg z of a complex z are real, in a result of the real type.
inline EwResult unary_result(UnaryResult r, const at::Tensor& a, at::TensorBase out = {},
                             nisa_unary fn = NISA_NUM_UNARY) {
  std::string name = fn < NISA_NUM_UNARY ? unary_names[fn] : current_op_name();
  TORCH_CHECK(fn != NISA_UN_NEG || a.scalar_type() != at::kBool, "Negation, the `-` "
              "operator, on a bool tensor is not supported. If you are trying to invert "
              "a mask, use the `~` or `logical_not()` operator instead.");
  at::ScalarType rt = unary_result_type(r, a.scalar_type(), name.c_str(), fn);
  if (at::isComplexType(a.scalar_type()) && !at::isComplexType(rt) && r != UnaryResult::Bool) {
    if (!out.defined())
      return {empty_neuron(a.sizes(), rt, a.device()), rt};
    TORCH_CHECK(at::canCast(rt, out.scalar_type()), "result type ", rt,
                " can't be cast to the desired output type ", out.scalar_type());
    at::Tensor given(out);
    resize_out(given, a.sizes());
    return {given, given.scalar_type()};
  }
  at::Tensor t;
  switch (r) {
    case UnaryResult::Keep:
    case UnaryResult::FloatOnly:
      t = at::TensorIterator::unary_op(out, a).output();
      return {t, t.scalar_type()};
    case UnaryResult::Float: {
      at::TensorIterator it = at::TensorIterator::unary_float_op(out, a);
      return {it.output(), it.common_dtype()};
    }
    case UnaryResult::Bool: break;
  }
  t = at::TensorIteratorConfig()
          .set_check_mem_overlap(true)
          .check_all_same_dtype(false)
          .declare_static_dtype(at::kBool)
          .declare_static_device(a.device())
          .add_output(out)
          .add_const_input(a)
          .build()
          .output();
  return {t, t.scalar_type()};
}

// The backward of an activation into @out (its meta's result, of the
// computing type): grad * f'(x), f' an ISA function.
inline at::Tensor& grad_times(nisa_unary deriv, const at::Tensor& grad, const at::Tensor& x,
                              at::Tensor& out, double p = 0.0, double q = 0.0) {
  at::Tensor d = empty_neuron(x.sizes(), out.scalar_type(), x.device());
  unary_into(deriv, x, d, p, q);
  return binary_into(NISA_BIN_MUL, grad, d, 1.0, out);
}

// ---- compare: dst (bool) = a cmp b ----

// The result of a comparison or logical operator on @a and @b as ATen's
// TensorIterator::comparison_op makes it: a new bool tensor of the
// broadcast shape when @out is undefined, else @out (any type) checked
// and resized.
inline at::Tensor compare_result(const at::Tensor& a, const at::Tensor& b,
                                 at::TensorBase out = {}) {
  return at::TensorIterator::comparison_op(out, a, b).output();
}

inline at::Tensor& compare_into(nisa_compare cmp, const at::Tensor& a,
                                const at::Tensor& b, at::Tensor& out) {
  check_device(out, a);
  check_device(out, b);
  // logical_and/or/xor of a complex operand take its truth value, either
  // part nonzero (a COPY to bool, docs/hardware.md), as the CPU's do.
  if ((cmp == NISA_CMP_LAND || cmp == NISA_CMP_LOR || cmp == NISA_CMP_LXOR) &&
      (a.is_complex() || b.is_complex()))
    return compare_into(cmp, a.is_complex() ? a.to(at::kBool) : a,
                        b.is_complex() ? b.to(at::kBool) : b, out);
  check_complex(NISA_INSN_COMPARE, cmp, a.is_complex() || b.is_complex(), out, true);
  nrn_stream* s = stream_for(out);
  nrn_tensor_desc o = desc(out);
  if (is_cpu_scalar(b) && !b.is_complex()) {
    nrn_tensor_desc x = desc(a);
    NEURON_OP(nrn_op_compare_scalar(s, cmp, &o, &x, scalar_value(b, a)));
  } else {
    at::ScalarType ct = at::result_type(a, b);
    at::Tensor x = operand(a, out.device(), ct), y = operand(b, out.device(), ct);
    nrn_tensor_desc dx = desc(x), dy = desc(y);
    NEURON_OP(nrn_op_compare(s, cmp, &o, &dx, &dy));
  }
  return out;
}

// ---- the kernels of a row of a unary table (UnaryOps.cpp, Activation.cpp) ----

template <nisa_unary FN, UnaryResult RES>
at::Tensor un_f(const at::Tensor& a) {
  at::Tensor out = unary_result(RES, a, {}, FN).tensor;
  return unary_into(FN, a, out);
}
template <nisa_unary FN, UnaryResult RES>
at::Tensor& un_i(at::Tensor& a) {
  TORCH_CHECK(!a.is_complex() || (FN != NISA_UN_ABS && FN != NISA_UN_ANGLE),
              "In-place ", unary_names[FN], " is not supported for complex tensors.");
  return compute_in(unary_result(RES, a, a, FN), a,
                    [&](at::Tensor& o) { unary_into(FN, a, o); });
}
template <nisa_unary FN, UnaryResult RES>
at::Tensor& un_o(const at::Tensor& a, at::Tensor& out) {
  return compute_in(unary_result(RES, a, out, FN), out,
                    [&](at::Tensor& o) { unary_into(FN, a, o); });
}

// A table row X(name, FN, RES): name, name_ and name.out registered on @m.
#define REG_UNARY(name, FN, RES)                                              \
  m.impl(#name, un_f<NISA_UN_##FN, UnaryResult::RES>);                        \
  m.impl(#name "_", un_i<NISA_UN_##FN, UnaryResult::RES>);                    \
  m.impl(#name ".out", un_o<NISA_UN_##FN, UnaryResult::RES>);

// ---- what the composed elementwise operators share ----

inline void check_floating(at::ScalarType t, const char* name) {
  TORCH_CHECK(at::isFloatingType(t), "neuron: ", name, " is not implemented "
              "for '", t, "' (floating types only)");
}

// mask (bool) = x > 0
inline at::Tensor sp_positive(const at::Tensor& x) {
  at::Tensor mask = empty_neuron(x.sizes(), at::kBool, x.device());
  nrn_tensor_desc dm = desc(mask), dx = desc(x);
  NEURON_OP(nrn_op_compare_scalar(stream_for(x), NISA_CMP_GT, &dm, &dx, 0.0));
  return mask;
}
inline at::Tensor filled(double v, at::ScalarType t, const at::Device& dev) {
  at::Tensor f = empty_neuron({}, t, dev);
  nrn_tensor_desc d = desc(f);
  NEURON_OP(nrn_op_fill(stream_for(f), &d, v));
  return f;
}
inline at::Tensor& where_into(const at::Tensor& m, const at::Tensor& a,
                              const at::Tensor& b, at::Tensor& out) {
  nrn_tensor_desc o = desc(out), dm = desc(m), da = desc(a), db = desc(b);
  NEURON_OP(nrn_op_where(stream_for(out), &o, &dm, &da, &db));
  return out;
}

// The backward of an activation whose CPU kernel selects 0 -- rather than
// multiplying grad by 0 -- where f'(x) is 0 (outside hardsigmoid's slope,
// inside the shrinks' band, below hardswish's): there a NaN or infinite
// gradient gives 0 as on the CPU, elsewhere grad * f'(x), into @out as
// grad_times. The region is where f'(x) == 0, unless @zero (bool, x's
// shape) names it.
inline at::Tensor& grad_select(nisa_unary deriv, const at::Tensor& grad, const at::Tensor& x,
                               at::Tensor& out, double p = 0.0, double q = 0.0,
                               at::Tensor zero = {}) {
  at::Tensor d = empty_neuron(x.sizes(), out.scalar_type(), x.device());
  unary_into(deriv, x, d, p, q);
  if (!zero.defined()) {
    zero = empty_neuron(x.sizes(), at::kBool, x.device());
    nrn_tensor_desc dz = desc(zero), dd = desc(d);
    NEURON_OP(nrn_op_compare_scalar(stream_for(d), NISA_CMP_EQ, &dz, &dd, 0.0));
  }
  binary_into(NISA_BIN_MUL, grad, d, 1.0, out);
  return where_into(zero, filled(0.0, out.scalar_type(), out.device()), out, out);
}

}  // namespace torch_neuron

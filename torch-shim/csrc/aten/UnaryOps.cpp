// SPDX-License-Identifier: MIT
// The unary operators: the math functions that map 1:1 onto an ISA
// function, as a table (one line gives an operator its functional, in-place
// and out= kernels: docs/adding-an-operator.md), the predicates, round with
// decimals, bitwise_not, logical_not, nan_to_num, frexp, and the backward of
// sigmoid and tanh. The table's activations are in Activation.cpp, the
// special functions in SpecialOps.cpp.
#include <limits>

#include <ATen/ops/isneginf_meta.h>
#include <ATen/ops/isposinf_meta.h>
#include <ATen/ops/signbit_meta.h>

#include "NeuronElementwise.h"

namespace torch_neuron {
namespace {

using R = UnaryResult;

// Predicates with a structured meta (ATen's checks: real operands, bool
// results).
template <nisa_unary FN, class Meta>
at::Tensor pred(const at::Tensor& a) {
  at::Tensor out = meta_results<Meta>(Form::Functional, {}, a)[0];
  return unary_into(FN, a, out);
}
template <nisa_unary FN, class Meta>
at::Tensor& pred_out(const at::Tensor& a, at::Tensor& out) {
  meta_results<Meta>(Form::Out, {out}, a);
  return unary_into(FN, a, out);
}

// ---- rounding with decimals ----

at::Tensor& round_dec_into(const at::Tensor& a, int64_t decimals, at::Tensor& out) {
  if (!decimals)
    return unary_into(NISA_UN_ROUND, a, out);
  // The card rounds step by step in the destination's type, float32 or
  // float64, as the CPU's kernel of that type does; the CPU's bfloat16
  // kernel rounds to bfloat16 between the steps.
  TORCH_CHECK((a.scalar_type() == at::kFloat || a.scalar_type() == at::kDouble) &&
              out.scalar_type() == a.scalar_type(), "neuron: round with decimals is "
              "implemented for float32 and float64 only on the card, not for '",
              a.scalar_type(), "' into '", out.scalar_type(), "'");
  return unary_into(NISA_UN_ROUND_DEC, a, out, static_cast<double>(decimals));
}
at::Tensor round_dec(const at::Tensor& a, int64_t decimals) {
  at::Tensor out = unary_result(R::Keep, a).tensor;
  return round_dec_into(a, decimals, out);
}
at::Tensor& round_dec_(at::Tensor& a, int64_t decimals) {
  return round_dec_into(a, decimals, a);
}
at::Tensor& round_dec_out(const at::Tensor& a, int64_t decimals, at::Tensor& out) {
  unary_result(R::Keep, a, out);
  return round_dec_into(a, decimals, out);
}

// ~x: logical for bool, two's complement (-1 - x) for integers
at::Tensor& bitwise_not_into(const at::Tensor& a, at::Tensor& out) {
  TORCH_CHECK(!at::isFloatingType(a.scalar_type()), "bitwise_not_cpu\" not "
              "implemented for '", a.scalar_type(), "'");
  nrn_tensor_desc o = desc(out), x = desc(a);
  if (a.scalar_type() == at::kBool)
    NEURON_OP(nrn_op_compare_scalar(stream_for(out), NISA_CMP_EQ, &o, &x, 0.0));
  else
    NEURON_OP(nrn_op_binary_scalar(stream_for(out), NISA_BIN_SUB, &o, &x, -1.0, 1.0, 1));
  return out;
}
at::Tensor bitwise_not(const at::Tensor& a) {
  at::Tensor out = unary_result(R::Keep, a).tensor;
  return bitwise_not_into(a, out);
}
at::Tensor& bitwise_not_out(const at::Tensor& a, at::Tensor& out) {
  unary_result(R::Keep, a, out);
  return bitwise_not_into(a, out);
}
at::Tensor& bitwise_not_(at::Tensor& a) {
  return bitwise_not_into(a, a);
}
// logical_not's result as ATen's logical_not_out shapes it (of any type;
// a new one is bool).
void logical_not_result(const at::Tensor& a, const at::Tensor& out) {
  at::TensorIteratorConfig().check_all_same_dtype(false).add_output(out).add_const_input(a)
      .build();
}
at::Tensor logical_not(const at::Tensor& a) {
  at::Tensor out = at::empty({0}, a.options().dtype(at::kBool));
  logical_not_result(a, out);
  nrn_tensor_desc o = desc(out), x = desc(a);
  NEURON_OP(nrn_op_compare_scalar(stream_for(out), NISA_CMP_EQ, &o, &x, 0.0));
  return out;
}
// logical_not into any dtype: 1 where x == 0 (NaN is true, so 0).
at::Tensor& logical_not_out(const at::Tensor& a, at::Tensor& out) {
  logical_not_result(a, out);
  return unary_into(NISA_UN_LOGICAL_NOT, a, out);
}
at::Tensor& logical_not_(at::Tensor& a) {
  return unary_into(NISA_UN_LOGICAL_NOT, a, a);
}

double float_max(at::ScalarType t) {
  switch (t) {
    case at::kBFloat16: return static_cast<double>(std::numeric_limits<c10::BFloat16>::max());
    case at::kHalf: return static_cast<double>(std::numeric_limits<c10::Half>::max());
    case at::kDouble: return std::numeric_limits<double>::max();
    default: return static_cast<double>(std::numeric_limits<float>::max());
  }
}
// NaN -> nan, +inf -> posinf, -inf -> neginf (defaults: 0 and the type's
// largest and lowest values); integers and bool are copied.
at::Tensor& nan_to_num_into(const at::Tensor& a, c10::optional<double> nan,
                            c10::optional<double> posinf,
                            c10::optional<double> neginf, at::Tensor& out) {
  check_device(out, a);
  nrn_stream* s = stream_for(out);
  nrn_tensor_desc o = desc(out), x = desc(a);
  if (!at::isFloatingType(a.scalar_type())) {
    if (!out.is_same(a))
      NEURON_OP(nrn_op_copy(s, &o, &x));
    return out;
  }
  double big = float_max(out.scalar_type());
  NEURON_OP(nrn_op_unary_param(s, NISA_UN_NAN_TO, &o, &x, nan.value_or(0.0), 0.0));
  NEURON_OP(nrn_op_unary_param(s, NISA_UN_INF_TO, &o, &o, posinf.value_or(big),
                               neginf.value_or(-big)));
  return out;
}
at::Tensor nan_to_num(const at::Tensor& a, c10::optional<double> nan,
                      c10::optional<double> posinf, c10::optional<double> neginf) {
  at::Tensor out = empty_neuron(a.sizes(), a.scalar_type(), a.device());
  return nan_to_num_into(a, nan, posinf, neginf, out);
}
at::Tensor& nan_to_num_out(const at::Tensor& a, c10::optional<double> nan,
                           c10::optional<double> posinf,
                           c10::optional<double> neginf, at::Tensor& out) {
  TORCH_CHECK(out.scalar_type() == a.scalar_type(), "nan_to_num: dtype of out: ",
              out.scalar_type(), " should be same as input: ", a.scalar_type());
  resize_out(out, a.sizes());
  return nan_to_num_into(a, nan, posinf, neginf, out);
}
at::Tensor& nan_to_num_(at::Tensor& a, c10::optional<double> nan,
                        c10::optional<double> posinf, c10::optional<double> neginf) {
  return nan_to_num_into(a, nan, posinf, neginf, a);
}

std::tuple<at::Tensor&, at::Tensor&> frexp_out(const at::Tensor& a, at::Tensor& mant,
                                               at::Tensor& expo) {
  TORCH_CHECK(at::isFloatingType(a.scalar_type()), "torch.frexp() only supports "
              "floating-point dtypes");
  TORCH_CHECK(mant.scalar_type() == a.scalar_type(), "torch.frexp() expects "
              "mantissa to have dtype ", a.scalar_type(), " but got ",
              mant.scalar_type());
  TORCH_CHECK(expo.scalar_type() == at::kInt, "torch.frexp() expects exponent "
              "to have int dtype but got ", expo.scalar_type());
  resize_out(expo, a.sizes());
  resize_out(mant, a.sizes());
  unary_into(NISA_UN_FREXP_EXP, a, expo);
  unary_into(NISA_UN_FREXP_MANT, a, mant);
  return {mant, expo};
}

// sigmoid'(x) = y * (1 - y), tanh'(x) = 1 - y^2, from the output y
at::Tensor sigmoid_backward(const at::Tensor& grad, const at::Tensor& y) {
  at::Tensor t = empty_neuron(y.sizes(), grad.scalar_type(), y.device());
  nrn_stream* s = stream_for(y);
  nrn_tensor_desc dt = desc(t), dy = desc(y), dg = desc(grad);
  NEURON_OP(nrn_op_binary_scalar(s, NISA_BIN_SUB, &dt, &dy, 1.0, 1.0, 1));
  NEURON_OP(nrn_op_binary(s, NISA_BIN_MUL, &dt, &dt, &dy, 1.0));
  NEURON_OP(nrn_op_binary(s, NISA_BIN_MUL, &dt, &dt, &dg, 1.0));
  return t;
}
at::Tensor tanh_backward(const at::Tensor& grad, const at::Tensor& y) {
  at::Tensor t = empty_neuron(y.sizes(), grad.scalar_type(), y.device());
  nrn_stream* s = stream_for(y);
  nrn_tensor_desc dt = desc(t), dy = desc(y), dg = desc(grad);
  NEURON_OP(nrn_op_unary(s, NISA_UN_SQUARE, &dt, &dy));
  NEURON_OP(nrn_op_binary_scalar(s, NISA_BIN_SUB, &dt, &dt, 1.0, 1.0, 1));
  NEURON_OP(nrn_op_binary(s, NISA_BIN_MUL, &dt, &dt, &dg, 1.0));
  return t;
}

}  // namespace

// torch name, ISA function, result type: functional, in-place and out=.
#define NEURON_UNARY_MAP(X)                                                   \
  X(neg, NEG, Keep) X(abs, ABS, Keep) X(exp, EXP, Float) X(log, LOG, Float)   \
  X(sqrt, SQRT, Float) X(rsqrt, RSQRT, Float) X(reciprocal, RECIP, Float)     \
  X(sigmoid, SIGMOID, Float) X(tanh, TANH, Float) X(sin, SIN, Float)          \
  X(cos, COS, Float) X(sign, SIGN, Keep)                                     \
  X(erf, ERF, Float) X(floor, FLOOR, Keep)                                    \
  X(ceil, CEIL, Keep) X(round, ROUND, Keep) X(trunc, TRUNC, Keep)             \
  X(frac, FRAC, FloatOnly) X(expm1, EXPM1, Float) X(log1p, LOG1P, Float)      \
  X(log2, LOG2, Float) X(log10, LOG10, Float) X(tan, TAN, Float)              \
  X(asin, ASIN, Float) X(acos, ACOS, Float) X(atan, ATAN, Float)              \
  X(sinh, SINH, Float) X(cosh, COSH, Float) X(asinh, ASINH, Float)            \
  X(acosh, ACOSH, Float) X(atanh, ATANH, Float) X(erfc, ERFC, Float)          \
  X(erfinv, ERFINV, Float) X(lgamma, LGAMMA, Float)                           \
  X(digamma, DIGAMMA, Float) X(i0, I0, Float)                                 \
  X(sinc, SINC, Float) X(exp2, EXP2, Float)

// Predicates with an out= form (isnan and isfinite have none).
#define NEURON_PREDICATE_MAP(X)                                               \
  X(isposinf, ISPOSINF) X(isneginf, ISNEGINF) X(signbit, SIGNBIT)

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  NEURON_UNARY_MAP(REG_UNARY)
#define REG_PRED(name, FN)                                                    \
  m.impl(#name, pred<NISA_UN_##FN, at::meta::structured_##name>);            \
  m.impl(#name ".out", pred_out<NISA_UN_##FN, at::meta::structured_##name>);
  NEURON_PREDICATE_MAP(REG_PRED)
  m.impl("isnan", un_f<NISA_UN_ISNAN, R::Bool>);
  m.impl("isinf", un_f<NISA_UN_ISINF, R::Bool>);
  m.impl("round.decimals", round_dec);
  m.impl("round_.decimals", round_dec_);
  m.impl("round.decimals_out", round_dec_out);
  m.impl("sigmoid_backward", sigmoid_backward);
  m.impl("tanh_backward", tanh_backward);
  m.impl("bitwise_not", bitwise_not);
  m.impl("bitwise_not.out", bitwise_not_out);
  m.impl("bitwise_not_", bitwise_not_);
  m.impl("logical_not", logical_not);
  m.impl("logical_not_", logical_not_);
  m.impl("logical_not.out", logical_not_out);
  m.impl("nan_to_num", nan_to_num);
  m.impl("nan_to_num_", nan_to_num_);
  m.impl("nan_to_num.out", nan_to_num_out);
  m.impl("frexp.Tensor_out", frexp_out);
}

}  // namespace torch_neuron

// SPDX-License-Identifier: MIT
// The elementwise operators that map 1:1 onto an ISA function, as tables:
// one line gives an operator its functional, in-place and out= kernels
// (docs/adding-an-operator.md). Then the ones with parameters or a
// rounding mode, the backward of the activations, and the predicates.
#include "NeuronElementwise.h"

namespace torch_neuron {
namespace {

using R = UnaryResult;

#define NEURON_UN_NAME_(NAME, name, kind) #name,
const char* const unary_names[NISA_NUM_UNARY] = {NISA_UNARY_OPS(NEURON_UN_NAME_)};

template <nisa_unary FN, UnaryResult RES>
at::Tensor un_f(const at::Tensor& a) {
  at::Tensor out = empty_neuron(
      a.sizes(), unary_result_type(RES, a.scalar_type(), unary_names[FN]), a.device());
  return unary_into(FN, a, out);
}
template <nisa_unary FN, UnaryResult RES>
at::Tensor& un_i(at::Tensor& a) {
  at::ScalarType rt = unary_result_type(RES, a.scalar_type(), unary_names[FN]);
  TORCH_CHECK(at::canCast(rt, a.scalar_type()), "result type ", rt,
              " can't be cast to the desired output type ", a.scalar_type());
  return unary_into(FN, a, a);
}
template <nisa_unary FN, UnaryResult RES>
at::Tensor& un_o(const at::Tensor& a, at::Tensor& out) {
  at::ScalarType rt = unary_result_type(RES, a.scalar_type(), unary_names[FN]);
  TORCH_CHECK(at::canCast(rt, out.scalar_type()), "result type ", rt,
              " can't be cast to the desired output type ", out.scalar_type());
  return unary_out(FN, a, out);
}

template <nisa_binary OP>
at::Tensor bin_t(const at::Tensor& a, const at::Tensor& b) { return binary(OP, a, b); }
template <nisa_binary OP>
at::Tensor& bin_t_(at::Tensor& a, const at::Tensor& b) {
  return binary_inplace(OP, a, b);
}
template <nisa_binary OP>
at::Tensor& bin_t_out(const at::Tensor& a, const at::Tensor& b, at::Tensor& out) {
  return binary_out(OP, a, b, 1.0, out);
}
template <nisa_binary OP>
at::Tensor bin_s(const at::Tensor& a, const at::Scalar& b) {
  return binary(OP, a, wrapped(b));
}
template <nisa_binary OP>
at::Tensor& bin_s_(at::Tensor& a, const at::Scalar& b) {
  return binary_inplace(OP, a, wrapped(b));
}
template <nisa_binary OP>
at::Tensor& bin_s_out(const at::Tensor& a, const at::Scalar& b, at::Tensor& out) {
  return binary_out(OP, a, wrapped(b), 1.0, out);
}
template <nisa_binary OP>
at::Tensor bin_st(const at::Scalar& a, const at::Tensor& b) {
  return binary(OP, wrapped(a), b);
}

// Logical operators: bool results (in place: the operand's type).
template <nisa_compare CMP>
at::Tensor cmp_t(const at::Tensor& a, const at::Tensor& b) {
  at::Tensor out = empty_neuron(at::infer_size(a.sizes(), b.sizes()), at::kBool,
                                result_device(a, b));
  return compare_into(CMP, a, b, out);
}
template <nisa_compare CMP>
at::Tensor& cmp_t_(at::Tensor& a, const at::Tensor& b) {
  TORCH_CHECK(at::infer_size(a.sizes(), b.sizes()) == a.sizes(), "output with "
              "shape ", a.sizes(), " doesn't match the broadcast shape ",
              at::infer_size(a.sizes(), b.sizes()));
  return compare_into(CMP, a, b, a);
}
template <nisa_compare CMP>
at::Tensor& cmp_t_out(const at::Tensor& a, const at::Tensor& b, at::Tensor& out) {
  resize_out(out, at::infer_size(a.sizes(), b.sizes()));
  return compare_into(CMP, a, b, out);
}

// Predicates: bool results.
template <nisa_unary FN>
at::Tensor& pred_out(const at::Tensor& a, at::Tensor& out) {
  TORCH_CHECK(out.scalar_type() == at::kBool, "neuron: the out= tensor of a "
              "predicate must be bool, got ", out.scalar_type());
  return unary_out(FN, a, out);
}

// ---- rounding with decimals, division with a rounding mode ----

at::Tensor& round_dec_into(const at::Tensor& a, int64_t decimals, at::Tensor& out) {
  if (!decimals)
    return unary_into(NISA_UN_ROUND, a, out);
  // The card rounds in float32 step by step, as the CPU's float32 kernel
  // does; the CPU's bfloat16 kernel rounds to bfloat16 between the steps.
  TORCH_CHECK(a.scalar_type() == at::kFloat, "neuron: round with decimals is "
              "implemented for float32 only on the card, not for '",
              a.scalar_type(), "'");
  return unary_into(NISA_UN_ROUND_DEC, a, out, static_cast<double>(decimals));
}
at::Tensor round_dec(const at::Tensor& a, int64_t decimals) {
  at::Tensor out = empty_neuron(a.sizes(), a.scalar_type(), a.device());
  return round_dec_into(a, decimals, out);
}
at::Tensor& round_dec_(at::Tensor& a, int64_t decimals) {
  return round_dec_into(a, decimals, a);
}
at::Tensor& round_dec_out(const at::Tensor& a, int64_t decimals, at::Tensor& out) {
  resize_out(out, a.sizes());
  return round_dec_into(a, decimals, out);
}

nisa_binary div_mode(c10::optional<c10::string_view> mode) {
  if (!mode.has_value())
    return NISA_BIN_DIV;
  if (*mode == "trunc")
    return NISA_BIN_DIV_TRUNC;
  TORCH_CHECK(*mode == "floor", "div expected rounding_mode to be one of None, "
              "'trunc', or 'floor' but found '", *mode, "'");
  return NISA_BIN_FLOORDIV;
}
// bfloat16 and float16 'trunc': the CPU rounds the quotient to the reduced
// type and truncates that (11.96 -> 12 -> 12), so the card divides into the
// reduced result and truncates it in place; other dtypes truncate the
// quotient directly.
bool trunc_after(c10::optional<c10::string_view> mode, at::ScalarType rt) {
  return div_mode(mode) == NISA_BIN_DIV_TRUNC && at::isReducedFloatingType(rt);
}
nisa_binary div_op(c10::optional<c10::string_view> mode, at::ScalarType rt) {
  return trunc_after(mode, rt) ? NISA_BIN_DIV : div_mode(mode);
}
at::Tensor& div_finish(c10::optional<c10::string_view> mode, at::Tensor& out) {
  if (trunc_after(mode, out.scalar_type()))
    unary_into(NISA_UN_TRUNC, out, out);
  return out;
}
at::Tensor div_tm(const at::Tensor& a, const at::Tensor& b,
                  c10::optional<c10::string_view> mode) {
  at::Tensor out = binary(div_op(mode, at::result_type(a, b)), a, b);
  return div_finish(mode, out);
}
at::Tensor& div_tm_(at::Tensor& a, const at::Tensor& b,
                    c10::optional<c10::string_view> mode) {
  return div_finish(mode, binary_inplace(div_op(mode, a.scalar_type()), a, b));
}
at::Tensor& div_tm_out(const at::Tensor& a, const at::Tensor& b,
                       c10::optional<c10::string_view> mode, at::Tensor& out) {
  return div_finish(mode, binary_out(div_op(mode, out.scalar_type()), a, b, 1.0, out));
}
at::Tensor div_sm(const at::Tensor& a, const at::Scalar& b,
                  c10::optional<c10::string_view> mode) {
  at::Tensor w = wrapped(b);
  at::Tensor out = binary(div_op(mode, at::result_type(a, w)), a, w);
  return div_finish(mode, out);
}
at::Tensor& div_sm_(at::Tensor& a, const at::Scalar& b,
                    c10::optional<c10::string_view> mode) {
  return div_finish(mode, binary_inplace(div_op(mode, a.scalar_type()), a, wrapped(b)));
}

// ---- activations with parameters, and their backward ----

void check_float(const at::Tensor& a, const char* name) {
  TORCH_CHECK(at::isFloatingType(a.scalar_type()), "neuron: ", name,
              " is not implemented for '", a.scalar_type(), "'");
}

// An activation with parameters: functional and out= (and in place below).
#define PARAM_ACT(name, FN, ARGS, P, Q)                                       \
  at::Tensor name(const at::Tensor& a ARGS) {                                 \
    check_float(a, #name);                                                    \
    at::Tensor out = empty_neuron(a.sizes(), a.scalar_type(), a.device());    \
    return unary_into(FN, a, out, P, Q);                                      \
  }                                                                           \
  at::Tensor& name##_out(const at::Tensor& a ARGS, at::Tensor& out) {         \
    check_float(a, #name);                                                    \
    return unary_out(FN, a, out, P, Q);                                       \
  }

#define SLOPE_ARG , const at::Scalar& slope
PARAM_ACT(leaky_relu, NISA_UN_LEAKY_RELU, SLOPE_ARG, slope.toDouble(), 0.0)
#define LAMBD_ARG , const at::Scalar& lambd
PARAM_ACT(hardshrink, NISA_UN_HARDSHRINK, LAMBD_ARG, lambd.toDouble(), 0.0)
PARAM_ACT(softshrink, NISA_UN_SOFTSHRINK, LAMBD_ARG, lambd.toDouble(), 0.0)
#define SOFTPLUS_ARG , const at::Scalar& beta, const at::Scalar& threshold
PARAM_ACT(softplus, NISA_UN_SOFTPLUS, SOFTPLUS_ARG, beta.toDouble(),
          threshold.toDouble())

at::Tensor& leaky_relu_(at::Tensor& a, const at::Scalar& slope) {
  check_float(a, "leaky_relu");
  return unary_into(NISA_UN_LEAKY_RELU, a, a, slope.toDouble());
}

at::Tensor leaky_relu_backward(const at::Tensor& grad, const at::Tensor& x,
                               const at::Scalar& slope, bool is_result) {
  // With is_result, x is the output; its sign is the input's (slope >= 0).
  return grad_times(NISA_UN_LEAKY_RELU_GRAD, grad, x, slope.toDouble());
}
at::Tensor shrink_backward(const at::Tensor& grad, const at::Tensor& x,
                           const at::Scalar& lambd) {
  return grad_times(NISA_UN_SHRINK_GRAD, grad, x, lambd.toDouble());
}
at::Tensor softplus_backward(const at::Tensor& grad, const at::Tensor& x,
                             const at::Scalar& beta, const at::Scalar& threshold) {
  return grad_times(NISA_UN_SOFTPLUS_GRAD, grad, x, beta.toDouble(),
                    threshold.toDouble());
}

// elu(x) = x > 0 ? scale x : alpha scale (exp(input_scale x) - 1); selu and
// celu are elu with (alpha, scale, 1) and (alpha, 1, 1 / alpha).
struct EluFn {
  nisa_unary fn;
  double p, q;
};
EluFn elu_fn(const at::Scalar& alpha, const at::Scalar& scale,
             const at::Scalar& input_scale, bool grad) {
  double a = alpha.toDouble(), s = scale.toDouble(), i = input_scale.toDouble();
  if (i == 1.0)
    return {grad ? NISA_UN_ELU_GRAD : NISA_UN_ELU, a * s, s};
  TORCH_CHECK(s == 1.0, "neuron: elu with both scale (", s, ") and "
              "input_scale (", i, ") other than 1 is not supported on the card");
  return {grad ? NISA_UN_CELU_GRAD : NISA_UN_CELU, a, i};
}
#define ELU_ARGS , const at::Scalar& alpha, const at::Scalar& scale, \
                   const at::Scalar& input_scale
PARAM_ACT(elu, elu_fn(alpha, scale, input_scale, false).fn, ELU_ARGS,
          elu_fn(alpha, scale, input_scale, false).p,
          elu_fn(alpha, scale, input_scale, false).q)

at::Tensor& elu_(at::Tensor& a, const at::Scalar& alpha, const at::Scalar& scale,
                 const at::Scalar& input_scale) {
  check_float(a, "elu");
  EluFn f = elu_fn(alpha, scale, input_scale, false);
  return unary_into(f.fn, a, a, f.p, f.q);
}

at::Tensor elu_backward(const at::Tensor& grad, const at::Scalar& alpha,
                        const at::Scalar& scale, const at::Scalar& input_scale,
                        bool is_result, const at::Tensor& x_or_y) {
  if (!is_result) {
    EluFn f = elu_fn(alpha, scale, input_scale, true);
    return grad_times(f.fn, grad, x_or_y, f.p, f.q);
  }
  // From the output y: y > 0 ? scale : input_scale * (y + alpha * scale).
  double a = alpha.toDouble(), s = scale.toDouble(), i = input_scale.toDouble();
  at::Tensor d = binary(NISA_BIN_ADD, x_or_y, wrapped(a * s));
  if (i != 1.0)
    binary_inplace(NISA_BIN_MUL, d, wrapped(i));
  at::Tensor mask = empty_neuron(x_or_y.sizes(), at::kBool, x_or_y.device());
  at::Tensor sv = empty_neuron({}, d.scalar_type(), d.device());
  nrn_stream* st = stream_for(d);
  nrn_tensor_desc dm = desc(mask), dy = desc(x_or_y), ds = desc(sv), dd = desc(d);
  NEURON_OP(nrn_op_compare_scalar(st, NISA_CMP_GT, &dm, &dy, 0.0));
  NEURON_OP(nrn_op_fill(st, &ds, s));
  NEURON_OP(nrn_op_where(st, &dd, &dm, &ds, &dd));
  return binary_into(NISA_BIN_MUL, grad, d, 1.0, d);
}

template <nisa_unary DERIV>
at::Tensor act_backward(const at::Tensor& grad, const at::Tensor& x) {
  return grad_times(DERIV, grad, x);
}

// log_sigmoid: the CPU's buffer is not needed on the card (an empty one).
std::tuple<at::Tensor, at::Tensor> log_sigmoid_forward(const at::Tensor& a) {
  check_float(a, "log_sigmoid");
  at::Tensor out = empty_neuron(a.sizes(), a.scalar_type(), a.device());
  unary_into(NISA_UN_LOG_SIGMOID, a, out);
  return {out, empty_neuron({0}, a.scalar_type(), a.device())};
}
std::tuple<at::Tensor&, at::Tensor&> log_sigmoid_forward_out(
    const at::Tensor& a, at::Tensor& out, at::Tensor& buffer) {
  check_float(a, "log_sigmoid");
  unary_out(NISA_UN_LOG_SIGMOID, a, out);
  resize_out(buffer, {0});
  return {out, buffer};
}
at::Tensor log_sigmoid_backward(const at::Tensor& grad, const at::Tensor& x,
                                const at::Tensor& buffer) {
  return grad_times(NISA_UN_LOG_SIGMOID_GRAD, grad, x);
}

}  // namespace

// torch name, ISA function, result type: functional, in-place and out=.
#define NEURON_UNARY_MAP(X)                                                   \
  X(neg, NEG, Keep) X(abs, ABS, Keep) X(exp, EXP, Float) X(log, LOG, Float)   \
  X(sqrt, SQRT, Float) X(rsqrt, RSQRT, Float) X(reciprocal, RECIP, Float)     \
  X(sigmoid, SIGMOID, Float) X(tanh, TANH, Float) X(sin, SIN, Float)          \
  X(cos, COS, Float) X(sign, SIGN, Keep) X(sgn, SIGN, Keep)                   \
  X(erf, ERF, Float) X(floor, FLOOR, Keep) X(silu, SILU, Float)               \
  X(ceil, CEIL, Keep) X(round, ROUND, Keep) X(trunc, TRUNC, Keep)             \
  X(frac, FRAC, FloatOnly) X(expm1, EXPM1, Float) X(log1p, LOG1P, Float)      \
  X(log2, LOG2, Float) X(log10, LOG10, Float) X(tan, TAN, Float)              \
  X(asin, ASIN, Float) X(acos, ACOS, Float) X(atan, ATAN, Float)              \
  X(sinh, SINH, Float) X(cosh, COSH, Float) X(asinh, ASINH, Float)            \
  X(acosh, ACOSH, Float) X(atanh, ATANH, Float) X(erfc, ERFC, Float)          \
  X(erfinv, ERFINV, Float) X(lgamma, LGAMMA, Float)                           \
  X(hardswish, HARDSWISH, FloatOnly) X(hardsigmoid, HARDSIGMOID, FloatOnly)   \
  X(mish, MISH, FloatOnly) X(digamma, DIGAMMA, Float) X(i0, I0, Float)          \
  X(sinc, SINC, Float) X(exp2, EXP2, Float)

// Predicates with an out= form (isnan and isfinite have none).
#define NEURON_PREDICATE_MAP(X)                                               \
  X(isposinf, ISPOSINF) X(isneginf, ISNEGINF) X(signbit, SIGNBIT)

// torch name, ISA operator: .Tensor, _.Tensor, .Tensor_out (name, _, .out
// for the ones without a scalar form), and the .Scalar forms.
#define NEURON_BINARY_TENSOR_MAP(X)                                           \
  X(atan2, ATAN2) X(hypot, HYPOT)
#define NEURON_BINARY_MAP(X)                                                  \
  X(fmod, FMOD) X(bitwise_and, AND) X(remainder, REM)  \
  X(bitwise_or, OR) X(bitwise_xor, XOR)
#define NEURON_SHIFT_MAP(X)                                                   \
  X(bitwise_left_shift, SHL, __lshift__, __ilshift__)                         \
  X(bitwise_right_shift, SHR, __rshift__, __irshift__)
#define NEURON_LOGICAL_MAP(X)                                                 \
  X(logical_and, LAND) X(logical_or, LOR) X(logical_xor, LXOR)

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
#define REG_UNARY(name, FN, RES)                                              \
  m.impl(#name, un_f<NISA_UN_##FN, R::RES>);                                  \
  m.impl(#name "_", un_i<NISA_UN_##FN, R::RES>);                              \
  m.impl(#name ".out", un_o<NISA_UN_##FN, R::RES>);
  NEURON_UNARY_MAP(REG_UNARY)
#define REG_PRED(name, FN)                                                    \
  m.impl(#name, un_f<NISA_UN_##FN, R::Bool>);                                 \
  m.impl(#name ".out", pred_out<NISA_UN_##FN>);
  NEURON_PREDICATE_MAP(REG_PRED)
  m.impl("isnan", un_f<NISA_UN_ISNAN, R::Bool>);
  m.impl("isinf", un_f<NISA_UN_ISINF, R::Bool>);
#define REG_BIN_TENSOR(name, OP)                                              \
  m.impl(#name, bin_t<NISA_BIN_##OP>);                                        \
  m.impl(#name "_", bin_t_<NISA_BIN_##OP>);                                   \
  m.impl(#name ".out", bin_t_out<NISA_BIN_##OP>);
  NEURON_BINARY_TENSOR_MAP(REG_BIN_TENSOR)
#define REG_BIN(name, OP)                                                     \
  m.impl(#name ".Tensor", bin_t<NISA_BIN_##OP>);                              \
  m.impl(#name "_.Tensor", bin_t_<NISA_BIN_##OP>);                            \
  m.impl(#name ".Tensor_out", bin_t_out<NISA_BIN_##OP>);                      \
  m.impl(#name ".Scalar", bin_s<NISA_BIN_##OP>);                              \
  m.impl(#name "_.Scalar", bin_s_<NISA_BIN_##OP>);                            \
  m.impl(#name ".Scalar_out", bin_s_out<NISA_BIN_##OP>);
  NEURON_BINARY_MAP(REG_BIN)
#define REG_SHIFT(name, OP, dunder, idunder)                                  \
  m.impl(#name ".Tensor", bin_t<NISA_BIN_##OP>);                              \
  m.impl(#name "_.Tensor", bin_t_<NISA_BIN_##OP>);                            \
  m.impl(#name ".Tensor_out", bin_t_out<NISA_BIN_##OP>);                      \
  m.impl(#name ".Tensor_Scalar", bin_s<NISA_BIN_##OP>);                       \
  m.impl(#name "_.Tensor_Scalar", bin_s_<NISA_BIN_##OP>);                     \
  m.impl(#name ".Tensor_Scalar_out", bin_s_out<NISA_BIN_##OP>);               \
  m.impl(#name ".Scalar_Tensor", bin_st<NISA_BIN_##OP>);                      \
  m.impl(#dunder ".Tensor", bin_t<NISA_BIN_##OP>);                            \
  m.impl(#dunder ".Scalar", bin_s<NISA_BIN_##OP>);                            \
  m.impl(#idunder ".Tensor", bin_t_<NISA_BIN_##OP>);                          \
  m.impl(#idunder ".Scalar", bin_s_<NISA_BIN_##OP>);
  NEURON_SHIFT_MAP(REG_SHIFT)
#define REG_LOGICAL(name, CMP)                                                \
  m.impl(#name, cmp_t<NISA_CMP_##CMP>);                                       \
  m.impl(#name "_", cmp_t_<NISA_CMP_##CMP>);                                  \
  m.impl(#name ".out", cmp_t_out<NISA_CMP_##CMP>);
  NEURON_LOGICAL_MAP(REG_LOGICAL)
  m.impl("copysign.Tensor", bin_t<NISA_BIN_COPYSIGN>);
  m.impl("copysign_.Tensor", bin_t_<NISA_BIN_COPYSIGN>);
  m.impl("copysign.out", bin_t_out<NISA_BIN_COPYSIGN>);
  m.impl("copysign.Scalar", bin_s<NISA_BIN_COPYSIGN>);
  m.impl("copysign_.Scalar", bin_s_<NISA_BIN_COPYSIGN>);
  m.impl("copysign.Scalar_out", bin_s_out<NISA_BIN_COPYSIGN>);
  m.impl("logaddexp", bin_t<NISA_BIN_LOGADDEXP>);
  m.impl("logaddexp.out", bin_t_out<NISA_BIN_LOGADDEXP>);
  m.impl("logaddexp2", bin_t<NISA_BIN_LOGADDEXP2>);
  m.impl("logaddexp2.out", bin_t_out<NISA_BIN_LOGADDEXP2>);
  m.impl("xlogy.Tensor", bin_t<NISA_BIN_XLOGY>);
  m.impl("xlogy_.Tensor", bin_t_<NISA_BIN_XLOGY>);
  m.impl("xlogy.OutTensor", bin_t_out<NISA_BIN_XLOGY>);
  m.impl("xlogy.Scalar_Other", bin_s<NISA_BIN_XLOGY>);
  m.impl("xlogy_.Scalar_Other", bin_s_<NISA_BIN_XLOGY>);
  m.impl("xlogy.Scalar_Self", bin_st<NISA_BIN_XLOGY>);
  m.impl("remainder.Scalar_Tensor", bin_st<NISA_BIN_REM>);
  m.impl("floor_divide", bin_t<NISA_BIN_FLOORDIV>);
  m.impl("floor_divide_.Tensor", bin_t_<NISA_BIN_FLOORDIV>);
  m.impl("floor_divide.out", bin_t_out<NISA_BIN_FLOORDIV>);
  m.impl("floor_divide.Scalar", bin_s<NISA_BIN_FLOORDIV>);
  m.impl("floor_divide_.Scalar", bin_s_<NISA_BIN_FLOORDIV>);
  m.impl("round.decimals", round_dec);
  m.impl("round_.decimals", round_dec_);
  m.impl("round.decimals_out", round_dec_out);
  m.impl("div.Tensor_mode", div_tm);
  m.impl("div_.Tensor_mode", div_tm_);
  m.impl("div.out_mode", div_tm_out);
  m.impl("div.Scalar_mode", div_sm);
  m.impl("div_.Scalar_mode", div_sm_);
  m.impl("leaky_relu", leaky_relu);
  m.impl("leaky_relu_", leaky_relu_);
  m.impl("leaky_relu.out", leaky_relu_out);
  m.impl("leaky_relu_backward", leaky_relu_backward);
  m.impl("hardshrink", hardshrink);
  m.impl("hardshrink.out", hardshrink_out);
  m.impl("hardshrink_backward", shrink_backward);
  m.impl("softshrink", softshrink);
  m.impl("softshrink.out", softshrink_out);
  m.impl("softshrink_backward", shrink_backward);
  m.impl("softplus", softplus);
  m.impl("softplus.out", softplus_out);
  m.impl("softplus_backward", softplus_backward);
  m.impl("elu", elu);
  m.impl("elu_", elu_);
  m.impl("elu.out", elu_out);
  m.impl("elu_backward", elu_backward);
  m.impl("hardswish_backward", act_backward<NISA_UN_HARDSWISH_GRAD>);
  m.impl("hardsigmoid_backward", act_backward<NISA_UN_HARDSIGMOID_GRAD>);
  m.impl("mish_backward", act_backward<NISA_UN_MISH_GRAD>);
  m.impl("log_sigmoid_forward", log_sigmoid_forward);
  m.impl("log_sigmoid_forward.output", log_sigmoid_forward_out);
  m.impl("log_sigmoid_backward", log_sigmoid_backward);
}

}  // namespace torch_neuron

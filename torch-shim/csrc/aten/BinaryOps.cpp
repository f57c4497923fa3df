// SPDX-License-Identifier: MIT
// The binary operators on the card, tensor and scalar forms, broadcasting,
// in place and out=: arithmetic (add, sub, mul, div and its rounding modes,
// rsub, pow, floor_divide, remainder, fmod), maximum/minimum, fmax/fmin,
// the comparisons, the bitwise and logical operators, atan2, hypot,
// copysign, logaddexp, xlogy, heaviside and nextafter. The ones that map
// 1:1 onto an ISA operator are tables: one line gives an operator its
// kernels (docs/adding-an-operator.md).
#include <ATen/native/BinaryOps.h>
#include <ATen/ops/add_meta.h>
#include <ATen/ops/div_meta.h>
#include <ATen/ops/mul_meta.h>
#include <ATen/ops/sub_meta.h>

#include "NeuronElementwise.h"

namespace torch_neuron {
namespace {

// add, sub, mul and div take their results from their structured metas
// (ATen's checks of alpha and of sub on bool included). ATen checks alpha
// against the type the CPU computes in, which its meta sees as the
// output's only on the CPU (where out= of another type gets a temporary):
// into out= or self of another type, the card checks the computing type.
#define BINARY_OPS(name, OP, ALPHA_ARG, ALPHA, ALPHA_META)                    \
  using name##_meta = at::meta::structured_##name##_Tensor;                   \
  at::Tensor name##_tensor(const at::Tensor& a,                               \
                           const at::Tensor& b ALPHA_ARG) {                   \
    at::Tensor out =                                                          \
        ew_meta<name##_meta>(Form::Functional, {}, a, b ALPHA_META).tensor;   \
    return binary_into(OP, a, b, ALPHA, out);                                 \
  }                                                                           \
  at::Tensor& name##_tensor_out(const at::Tensor& a,                          \
                                const at::Tensor& b ALPHA_ARG,                \
                                at::Tensor& out) {                            \
    EwResult r = ew_meta<name##_meta>(Form::Out, out, a, b ALPHA_META);      \
    ALPHA_CHECK(r.compute);                                                   \
    return compute_in(r, out, [&](at::Tensor& o) {                            \
      binary_into(OP, a, b, ALPHA, o);                                        \
    });                                                                       \
  }                                                                           \
  at::Tensor& name##_tensor_(at::Tensor& a, const at::Tensor& b ALPHA_ARG) {  \
    EwResult r = ew_meta<name##_meta>(Form::Inplace, a, a, b ALPHA_META);    \
    ALPHA_CHECK(r.compute);                                                   \
    return compute_in(r, a, [&](at::Tensor& o) {                              \
      binary_into(OP, a, b, ALPHA, o);                                        \
    });                                                                       \
  }                                                                           \
  at::Tensor name##_scalar(const at::Tensor& a,                               \
                           const at::Scalar& b ALPHA_ARG) {                   \
    return name##_tensor(a, wrapped(b) ALPHA_META);                           \
  }                                                                           \
  at::Tensor& name##_scalar_(at::Tensor& a, const at::Scalar& b ALPHA_ARG) {  \
    return name##_tensor_(a, wrapped(b) ALPHA_META);                          \
  }

#define WITH_ALPHA , const at::Scalar& alpha
#define WITH_ALPHA_META , alpha
#define ALPHA_CHECK(t) at::native::alpha_check(t, alpha)
#define NO_ALPHA
BINARY_OPS(add, NISA_BIN_ADD, WITH_ALPHA, alpha.toDouble(), WITH_ALPHA_META)
BINARY_OPS(sub, NISA_BIN_SUB, WITH_ALPHA, alpha.toDouble(), WITH_ALPHA_META)
#undef ALPHA_CHECK
#define ALPHA_CHECK(t)
BINARY_OPS(mul, NISA_BIN_MUL, NO_ALPHA, 1.0, NO_ALPHA)
BINARY_OPS(div, NISA_BIN_DIV, NO_ALPHA, 1.0, NO_ALPHA)

at::Tensor maximum(const at::Tensor& a, const at::Tensor& b) {
  return binary(NISA_BIN_MAX, a, b);
}
at::Tensor& maximum_out(const at::Tensor& a, const at::Tensor& b, at::Tensor& out) {
  return binary_out(NISA_BIN_MAX, a, b, 1.0, out);
}
at::Tensor minimum(const at::Tensor& a, const at::Tensor& b) {
  return binary(NISA_BIN_MIN, a, b);
}
at::Tensor& minimum_out(const at::Tensor& a, const at::Tensor& b, at::Tensor& out) {
  return binary_out(NISA_BIN_MIN, a, b, 1.0, out);
}

// z^w of complex numbers (any operand complex): exp(w log z), 0 where z is
// 0 (libstdc++'s std::pow, which the CPU's kernel calls), z * z for the
// exponent 2 (the CPU's special case). The card's POW is real only.
bool complex_pow(const at::Tensor& a, const at::Tensor& b) {
  return at::isComplexType(at::result_type(a, b));
}

at::Tensor pow_complex(const at::Tensor& a, const at::Tensor& b) {
  at::Device dev = result_device(a, b);
  at::Tensor z = operand(a, dev).to(at::kComplexFloat);
  if (is_cpu_scalar(b) && b.item<c10::complex<double>>() == c10::complex<double>(2.0))
    return z * z;
  at::Tensor r = at::exp(at::log(z) * operand(b, dev));
  return at::where(z == 0, at::zeros({}, z.options()), r);
}

at::Tensor pow_tt(const at::Tensor& a, const at::Tensor& b) {
  return complex_pow(a, b) ? pow_complex(a, b) : binary(NISA_BIN_POW, a, b);
}
at::Tensor& pow_tt_out(const at::Tensor& a, const at::Tensor& b, at::Tensor& out) {
  if (complex_pow(a, b))
    return into(out, pow_complex(a, b));
  return binary_out(NISA_BIN_POW, a, b, 1.0, out);
}
// x^2 of a real floating tensor is x * x: the same number (the product of
// two floats is exact in double, the card's POW rounds it once, as MUL
// does, and the CPU's kernel multiplies too), at a multiply's cost instead
// of a pow()'s per element (the square of RMSNorm and of variances).
bool real_square(const at::Tensor& a, const at::Scalar& e) {
  return a.is_floating_point() && !e.isComplex() && !e.isBoolean() && e.toDouble() == 2.0;
}

at::Tensor pow_ts(const at::Tensor& a, const at::Scalar& e) {
  if (real_square(a, e))
    return binary(NISA_BIN_MUL, a, a);
  at::Tensor w = wrapped(e);
  return complex_pow(a, w) ? pow_complex(a, w) : binary(NISA_BIN_POW, a, w);
}
at::Tensor& pow_ts_(at::Tensor& a, const at::Scalar& e) {
  if (real_square(a, e))
    return binary_inplace(NISA_BIN_MUL, a, a);
  at::Tensor w = wrapped(e);
  if (complex_pow(a, w)) {
    TORCH_CHECK(a.is_complex(), "result type ComplexFloat can't be cast to the "
                "desired output type ", a.scalar_type());
    return a.copy_(pow_complex(a, w));
  }
  return binary_inplace(NISA_BIN_POW, a, w);
}
at::Tensor& pow_ts_out(const at::Tensor& a, const at::Scalar& e, at::Tensor& out) {
  if (real_square(a, e))
    return binary_out(NISA_BIN_MUL, a, a, 1.0, out);
  at::Tensor w = wrapped(e);
  if (complex_pow(a, w))
    return into(out, pow_complex(a, w));
  return binary_out(NISA_BIN_POW, a, w, 1.0, out);
}
at::Tensor pow_st(const at::Scalar& a, const at::Tensor& e) {
  at::Tensor b = wrapped(a);
  return complex_pow(b, e) ? pow_complex(b, e) : binary(NISA_BIN_POW, b, e);
}

// rsub(self, other, alpha) = other - alpha * self
at::Tensor rsub_tensor(const at::Tensor& self, const at::Tensor& other,
                       const at::Scalar& alpha) {
  return binary(NISA_BIN_SUB, other, self, alpha.toDouble());
}
at::Tensor rsub_scalar(const at::Tensor& self, const at::Scalar& other,
                       const at::Scalar& alpha) {
  at::Tensor out = binary_result(NISA_BIN_SUB, self, wrapped(other)).tensor;
  nrn_tensor_desc o = desc(out), x = desc(self);
  // out = other, then out -= alpha * self (one rounding, alpha = 0 included)
  nrn_stream* s = stream_for(out);
  NEURON_OP(nrn_op_fill(s, &o, other.toDouble()));
  NEURON_OP(nrn_op_binary(s, NISA_BIN_SUB, &o, &o, &x, alpha.toDouble()));
  return out;
}

// ---- the tables' kernels (below): tensor and scalar forms ----

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
  at::Tensor out = compare_result(a, b);
  return compare_into(CMP, a, b, out);
}
template <nisa_compare CMP>
at::Tensor& cmp_t_(at::Tensor& a, const at::Tensor& b) {
  compare_result(a, b, a);
  return compare_into(CMP, a, b, a);
}
template <nisa_compare CMP>
at::Tensor& cmp_t_out(const at::Tensor& a, const at::Tensor& b, at::Tensor& out) {
  compare_result(a, b, out);
  return compare_into(CMP, a, b, out);
}

// ---- comparisons ----

#define COMPARE_OPS(name, CMP)                                                 \
  at::Tensor name##_t(const at::Tensor& a, const at::Tensor& b) {              \
    return cmp_t<CMP>(a, b);                                                   \
  }                                                                            \
  at::Tensor name##_s(const at::Tensor& a, const at::Scalar& b) {              \
    return cmp_t<CMP>(a, wrapped(b));                                          \
  }                                                                            \
  at::Tensor& name##_to(const at::Tensor& a, const at::Tensor& b,              \
                        at::Tensor& out) {                                     \
    return cmp_t_out<CMP>(a, b, out);                                          \
  }                                                                            \
  at::Tensor& name##_so(const at::Tensor& a, const at::Scalar& b,              \
                        at::Tensor& out) {                                     \
    return cmp_t_out<CMP>(a, wrapped(b), out);                                 \
  }

COMPARE_OPS(eq, NISA_CMP_EQ)
COMPARE_OPS(ne, NISA_CMP_NE)
COMPARE_OPS(lt, NISA_CMP_LT)
COMPARE_OPS(le, NISA_CMP_LE)
COMPARE_OPS(gt, NISA_CMP_GT)
COMPARE_OPS(ge, NISA_CMP_GE)

// ---- division with a rounding mode ----

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

// nextafter: float32 or float64 on the card (the step is an ulp of the
// destination's type).
at::Tensor& nextafter_into(const at::Tensor& a, const at::Tensor& b, at::Tensor& out) {
  at::ScalarType t = at::result_type(a, b);
  TORCH_CHECK((t == at::kFloat || t == at::kDouble) && out.scalar_type() == t,
              "neuron: nextafter is implemented for float32 and float64 only on the "
              "card, not for '", t, "' into '", out.scalar_type(), "'");
  return binary_into(NISA_BIN_NEXTAFTER, a, b, 1.0, out);
}
at::Tensor& sp_nextafter_out(const at::Tensor& a, const at::Tensor& b, at::Tensor& out) {
  binary_result(NISA_BIN_NEXTAFTER, a, b, out);
  return nextafter_into(a, b, out);
}
at::Tensor nextafter(const at::Tensor& a, const at::Tensor& b) {
  at::Tensor out = binary_result(NISA_BIN_NEXTAFTER, a, b).tensor;
  return nextafter_into(a, b, out);
}
at::Tensor& nextafter_(at::Tensor& a, const at::Tensor& b) {
  return sp_nextafter_out(a, b, a);
}

// fmax, fmin, heaviside: the operands' promoted type.
template <nisa_binary OP>
at::Tensor same_bin(const at::Tensor& a, const at::Tensor& b) {
  return binary(OP, a, b);
}
template <nisa_binary OP>
at::Tensor& same_bin_out(const at::Tensor& a, const at::Tensor& b, at::Tensor& out) {
  return binary_out(OP, a, b, 1.0, out);
}
void check_heaviside(const at::Tensor& a, const at::Tensor& b) {
  TORCH_CHECK(a.scalar_type() == b.scalar_type(), "heaviside is not yet "
              "implemented for tensors with different dtypes");
}
at::Tensor heaviside(const at::Tensor& a, const at::Tensor& b) {
  check_heaviside(a, b);
  return binary(NISA_BIN_HEAVISIDE, a, b);
}
at::Tensor& heaviside_(at::Tensor& a, const at::Tensor& b) {
  check_heaviside(a, b);
  return binary_inplace(NISA_BIN_HEAVISIDE, a, b);
}
at::Tensor& heaviside_out(const at::Tensor& a, const at::Tensor& b, at::Tensor& out) {
  check_heaviside(a, b);
  return binary_out(NISA_BIN_HEAVISIDE, a, b, 1.0, out);
}

}  // namespace

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
#define REG_BINARY(name)                                    \
  m.impl(#name ".Tensor", name##_tensor);                   \
  m.impl(#name "_.Tensor", name##_tensor_);                 \
  m.impl(#name ".out", name##_tensor_out);                  \
  m.impl(#name ".Scalar", name##_scalar);                   \
  m.impl(#name "_.Scalar", name##_scalar_);
  REG_BINARY(add)
  REG_BINARY(sub)
  REG_BINARY(mul)
  REG_BINARY(div)
  m.impl("maximum", maximum);
  m.impl("maximum.out", maximum_out);
  m.impl("minimum", minimum);
  m.impl("minimum.out", minimum_out);
  m.impl("pow.Tensor_Tensor", pow_tt);
  m.impl("pow.Tensor_Tensor_out", pow_tt_out);
  m.impl("pow.Tensor_Scalar", pow_ts);
  m.impl("pow_.Scalar", pow_ts_);
  m.impl("pow.Tensor_Scalar_out", pow_ts_out);
  m.impl("pow.Scalar", pow_st);
  m.impl("rsub.Tensor", rsub_tensor);
  m.impl("rsub.Scalar", rsub_scalar);
#define REG_COMPARE(name)                                   \
  m.impl(#name ".Tensor", name##_t);                        \
  m.impl(#name ".Scalar", name##_s);                        \
  m.impl(#name ".Tensor_out", name##_to);                   \
  m.impl(#name ".Scalar_out", name##_so);
  REG_COMPARE(eq)
  REG_COMPARE(ne)
  REG_COMPARE(lt)
  REG_COMPARE(le)
  REG_COMPARE(gt)
  REG_COMPARE(ge)
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
  m.impl("div.Tensor_mode", div_tm);
  m.impl("div_.Tensor_mode", div_tm_);
  m.impl("div.out_mode", div_tm_out);
  m.impl("div.Scalar_mode", div_sm);
  m.impl("div_.Scalar_mode", div_sm_);
  m.impl("nextafter", nextafter);
  m.impl("nextafter_", nextafter_);
  m.impl("nextafter.out", sp_nextafter_out);
  m.impl("fmax", same_bin<NISA_BIN_FMAX>);
  m.impl("fmax.out", same_bin_out<NISA_BIN_FMAX>);
  m.impl("fmin", same_bin<NISA_BIN_FMIN>);
  m.impl("fmin.out", same_bin_out<NISA_BIN_FMIN>);
  m.impl("heaviside", heaviside);
  m.impl("heaviside_", heaviside_);
  m.impl("heaviside.out", heaviside_out);
}

}  // namespace torch_neuron

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
#include <ATen/ops/atan2_meta.h>
#include <ATen/ops/bitwise_and_meta.h>
#include <ATen/ops/bitwise_left_shift_meta.h>
#include <ATen/ops/bitwise_or_meta.h>
#include <ATen/ops/bitwise_right_shift_meta.h>
#include <ATen/ops/bitwise_xor_meta.h>
#include <ATen/ops/copysign_meta.h>
#include <ATen/ops/div_meta.h>
#include <ATen/ops/eq_meta.h>
#include <ATen/ops/fmax_meta.h>
#include <ATen/ops/fmin_meta.h>
#include <ATen/ops/fmod_meta.h>
#include <ATen/ops/ge_meta.h>
#include <ATen/ops/gt_meta.h>
#include <ATen/ops/heaviside_meta.h>
#include <ATen/ops/hypot_meta.h>
#include <ATen/ops/le_meta.h>
#include <ATen/ops/logaddexp_meta.h>
#include <ATen/ops/logaddexp2_meta.h>
#include <ATen/ops/lt_meta.h>
#include <ATen/ops/maximum_meta.h>
#include <ATen/ops/minimum_meta.h>
#include <ATen/ops/mul_meta.h>
#include <ATen/ops/ne_meta.h>
#include <ATen/ops/nextafter_meta.h>
#include <ATen/ops/pow_meta.h>
#include <ATen/ops/remainder_meta.h>
#include <ATen/ops/sub_meta.h>
#include <ATen/ops/xlogy_meta.h>

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

// z^w of complex numbers (any operand complex): exp(w log z), 0 where z is
// 0 (libstdc++'s std::pow, which the CPU's kernel calls), z * z for the
// exponent 2 (the CPU's special case). The card's POW is real only.
at::Tensor pow_complex(const at::Tensor& a, const at::Tensor& b) {
  at::Device dev = result_device(a, b);
  at::Tensor z = operand(a, dev).to(at::kComplexFloat);
  if (is_cpu_scalar(b) && b.item<c10::complex<double>>() == c10::complex<double>(2.0))
    return z * z;
  at::Tensor r = at::exp(at::log(z) * operand(b, dev));
  return at::where(z == 0, at::zeros({}, z.options()), r);
}

// x^2 of a real floating tensor is x * x: the same number (the product of
// two floats is exact in double, the card's POW rounds it once, as MUL
// does, and the CPU's kernel multiplies too), at a multiply's cost instead
// of a pow()'s per element (the square of RMSNorm and of variances).
bool real_square(const at::Tensor& a, const at::Tensor& e, const at::Tensor& out) {
  return a.is_floating_point() && a.scalar_type() == out.scalar_type() && is_cpu_scalar(e) &&
         !e.is_complex() && e.scalar_type() != at::kBool && e.item<double>() == 2.0;
}

// a^b into @out, the result of one of pow's structured metas.
at::Tensor& pow_into(const at::Tensor& a, const at::Tensor& b, at::Tensor& out) {
  if (out.is_complex())
    return out.copy_(pow_complex(a, b));
  if (real_square(a, b, out))
    return binary_into(NISA_BIN_MUL, a, a, 1.0, out);
  return binary_into(NISA_BIN_POW, a, b, 1.0, out);
}

// pow's functional, out= (and with POW_KERNELS_ in-place) kernels for self
// of type A and an exponent of type B, Meta the overload's structured meta.
#define POW_KERNELS(name, Meta, A, B)                                         \
  at::Tensor name(const A& a, const B& b) {                                   \
    at::Tensor out = ew_meta<Meta>(Form::Functional, {}, a, b).tensor;        \
    return pow_into(as_tensor(a), as_tensor(b), out);                         \
  }                                                                           \
  at::Tensor& name##_out(const A& a, const B& b, at::Tensor& out) {           \
    return compute_in(ew_meta<Meta>(Form::Out, out, a, b), out, [&](at::Tensor& o) { \
      pow_into(as_tensor(a), as_tensor(b), o);                                \
    });                                                                       \
  }
#define POW_KERNELS_(name, Meta, B)                                           \
  POW_KERNELS(name, Meta, at::Tensor, B)                                      \
  at::Tensor& name##_(at::Tensor& a, const B& b) {                            \
    return compute_in(ew_meta<Meta>(Form::Inplace, a, a, b), a,               \
                      [&](at::Tensor& o) { pow_into(a, as_tensor(b), o); });  \
  }
POW_KERNELS_(pow_tt, at::meta::structured_pow_Tensor_Tensor, at::Tensor)
POW_KERNELS_(pow_ts, at::meta::structured_pow_Tensor_Scalar, at::Scalar)
POW_KERNELS(pow_st, at::meta::structured_pow_Scalar, at::Scalar, at::Tensor)

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

// The result of ISA operator @op on @a and @b in @form: from the operator's
// structured meta @Meta, or for the few with none (Meta void) from
// TensorIterator's binary builder, as ATen's own kernels make it.
template <class Meta>
EwResult bin_result(nisa_binary op, Form form, const at::Tensor& given, const at::Tensor& a,
                    const at::Tensor& b) {
  check_binary_types(op, a, b);
  if constexpr (std::is_void_v<Meta>)
    return binary_result(op, a, b, given);
  else
    return ew_meta<Meta>(form, given, a, b);
}

template <nisa_binary OP, class Meta>
at::Tensor bin_t(const at::Tensor& a, const at::Tensor& b) {
  at::Tensor out = bin_result<Meta>(OP, Form::Functional, {}, a, b).tensor;
  return binary_into(OP, a, b, 1.0, out);
}
template <nisa_binary OP, class Meta>
at::Tensor& bin_t_(at::Tensor& a, const at::Tensor& b) {
  return compute_in(bin_result<Meta>(OP, Form::Inplace, a, a, b), a,
                    [&](at::Tensor& o) { binary_into(OP, a, b, 1.0, o); });
}
template <nisa_binary OP, class Meta>
at::Tensor& bin_t_out(const at::Tensor& a, const at::Tensor& b, at::Tensor& out) {
  return compute_in(bin_result<Meta>(OP, Form::Out, out, a, b), out,
                    [&](at::Tensor& o) { binary_into(OP, a, b, 1.0, o); });
}
template <nisa_binary OP, class Meta>
at::Tensor bin_s(const at::Tensor& a, const at::Scalar& b) {
  return bin_t<OP, Meta>(a, wrapped(b));
}
template <nisa_binary OP, class Meta>
at::Tensor& bin_s_(at::Tensor& a, const at::Scalar& b) {
  return bin_t_<OP, Meta>(a, wrapped(b));
}
template <nisa_binary OP, class Meta>
at::Tensor& bin_s_out(const at::Tensor& a, const at::Scalar& b, at::Tensor& out) {
  return bin_t_out<OP, Meta>(a, wrapped(b), out);
}
template <nisa_binary OP, class Meta>
at::Tensor bin_st(const at::Scalar& a, const at::Tensor& b) {
  return bin_t<OP, Meta>(wrapped(a), b);
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

// A comparison's kernels, results from its structured metas (.Tensor and
// .Scalar).
template <nisa_compare CMP, class Meta, class B>
at::Tensor cmp_meta(const at::Tensor& a, const B& b) {
  at::Tensor out = ew_meta<Meta>(Form::Functional, {}, a, b).tensor;
  return compare_into(CMP, a, as_tensor(b), out);
}
template <nisa_compare CMP, class Meta, class B>
at::Tensor& cmp_meta_out(const at::Tensor& a, const B& b, at::Tensor& out) {
  ew_meta<Meta>(Form::Out, out, a, b);
  return compare_into(CMP, a, as_tensor(b), out);
}
template <nisa_compare CMP, class Meta, class B>
at::Tensor& cmp_meta_(at::Tensor& a, const B& b) {
  ew_meta<Meta>(Form::Inplace, a, a, b);
  return compare_into(CMP, a, as_tensor(b), a);
}
#define COMPARE_OPS(name, CMP)                                                 \
  using name##_t_meta = at::meta::structured_##name##_Tensor;                 \
  using name##_s_meta = at::meta::structured_##name##_Scalar;                 \
  constexpr auto name##_t = cmp_meta<CMP, name##_t_meta, at::Tensor>;         \
  constexpr auto name##_s = cmp_meta<CMP, name##_s_meta, at::Scalar>;         \
  constexpr auto name##_to = cmp_meta_out<CMP, name##_t_meta, at::Tensor>;    \
  constexpr auto name##_so = cmp_meta_out<CMP, name##_s_meta, at::Scalar>;    \
  constexpr auto name##_ti = cmp_meta_<CMP, name##_t_meta, at::Tensor>;      \
  constexpr auto name##_si = cmp_meta_<CMP, name##_s_meta, at::Scalar>;

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
using div_mode_meta = at::meta::structured_div_Tensor_mode;
at::Tensor& div_mode_into(const at::Tensor& a, const at::Tensor& b,
                          c10::optional<c10::string_view> mode, at::Tensor& out) {
  binary_into(div_op(mode, out.scalar_type()), a, b, 1.0, out);
  return div_finish(mode, out);
}
at::Tensor div_tm(const at::Tensor& a, const at::Tensor& b,
                  c10::optional<c10::string_view> mode) {
  at::Tensor out = ew_meta<div_mode_meta>(Form::Functional, {}, a, b, mode).tensor;
  return div_mode_into(a, b, mode, out);
}
at::Tensor& div_tm_(at::Tensor& a, const at::Tensor& b,
                    c10::optional<c10::string_view> mode) {
  return compute_in(ew_meta<div_mode_meta>(Form::Inplace, a, a, b, mode), a,
                    [&](at::Tensor& o) { div_mode_into(a, b, mode, o); });
}
at::Tensor& div_tm_out(const at::Tensor& a, const at::Tensor& b,
                       c10::optional<c10::string_view> mode, at::Tensor& out) {
  return compute_in(ew_meta<div_mode_meta>(Form::Out, out, a, b, mode), out,
                    [&](at::Tensor& o) { div_mode_into(a, b, mode, o); });
}
at::Tensor div_sm(const at::Tensor& a, const at::Scalar& b,
                  c10::optional<c10::string_view> mode) {
  return div_tm(a, wrapped(b), mode);
}
at::Tensor& div_sm_(at::Tensor& a, const at::Scalar& b,
                    c10::optional<c10::string_view> mode) {
  return div_tm_(a, wrapped(b), mode);
}

// nextafter: float32 or float64 on the card (the step is an ulp of the
// destination's type).
void check_nextafter(const at::Tensor& a, const at::Tensor& b) {
  at::ScalarType t = at::result_type(a, b);
  TORCH_CHECK(t == at::kFloat || t == at::kDouble, "neuron: nextafter is implemented for "
              "float32 and float64 only on the card, not for '", t, "'");
}
at::Tensor nextafter(const at::Tensor& a, const at::Tensor& b) {
  check_nextafter(a, b);
  return bin_t<NISA_BIN_NEXTAFTER, at::meta::structured_nextafter>(a, b);
}
at::Tensor& nextafter_(at::Tensor& a, const at::Tensor& b) {
  check_nextafter(a, b);
  return bin_t_<NISA_BIN_NEXTAFTER, at::meta::structured_nextafter>(a, b);
}
at::Tensor& nextafter_out(const at::Tensor& a, const at::Tensor& b, at::Tensor& out) {
  check_nextafter(a, b);
  return bin_t_out<NISA_BIN_NEXTAFTER, at::meta::structured_nextafter>(a, b, out);
}

}  // namespace

// The tables: torch name, ISA operator (the operator's structured meta is
// at::meta::structured_<name>, or _<name>_Tensor for the ones with scalar
// forms).
// Tensor only: name, name.out (and name_ in the second).
#define NEURON_BINARY_PAIR_MAP(X)                                             \
  X(maximum, MAX) X(minimum, MIN) X(fmax, FMAX) X(fmin, FMIN)
#define NEURON_BINARY_TENSOR_MAP(X)                                           \
  X(atan2, ATAN2) X(hypot, HYPOT) X(heaviside, HEAVISIDE)
// .Tensor, _.Tensor, .Tensor_out, .Scalar, _.Scalar, .Scalar_out.
#define NEURON_BINARY_MAP(X)                                                  \
  X(fmod, FMOD) X(remainder, REM) X(bitwise_and, AND) X(bitwise_or, OR)       \
  X(bitwise_xor, XOR)
// The shifts: their .Tensor_Scalar and .Scalar_Tensor forms and the
// Python operators.
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
  m.impl("pow.Tensor_Tensor", pow_tt);
  m.impl("pow_.Tensor", pow_tt_);
  m.impl("pow.Tensor_Tensor_out", pow_tt_out);
  m.impl("pow.Tensor_Scalar", pow_ts);
  m.impl("pow_.Scalar", pow_ts_);
  m.impl("pow.Tensor_Scalar_out", pow_ts_out);
  m.impl("pow.Scalar", pow_st);
  m.impl("pow.Scalar_out", pow_st_out);
  m.impl("rsub.Tensor", rsub_tensor);
  m.impl("rsub.Scalar", rsub_scalar);
#define REG_COMPARE(name)                                   \
  m.impl(#name ".Tensor", name##_t);                        \
  m.impl(#name ".Scalar", name##_s);                        \
  m.impl(#name ".Tensor_out", name##_to);                   \
  m.impl(#name ".Scalar_out", name##_so);                   \
  m.impl(#name "_.Tensor", name##_ti);                      \
  m.impl(#name "_.Scalar", name##_si);
  REG_COMPARE(eq)
  REG_COMPARE(ne)
  REG_COMPARE(lt)
  REG_COMPARE(le)
  REG_COMPARE(gt)
  REG_COMPARE(ge)
#define REG_BIN_PAIR(name, OP)                                                \
  m.impl(#name, bin_t<NISA_BIN_##OP, at::meta::structured_##name>);           \
  m.impl(#name ".out", bin_t_out<NISA_BIN_##OP, at::meta::structured_##name>);
  NEURON_BINARY_PAIR_MAP(REG_BIN_PAIR)
#define REG_BIN_TENSOR(name, OP)                                              \
  REG_BIN_PAIR(name, OP)                                                      \
  m.impl(#name "_", bin_t_<NISA_BIN_##OP, at::meta::structured_##name>);
  NEURON_BINARY_TENSOR_MAP(REG_BIN_TENSOR)
#define REG_BIN_FORMS(name, OP, Meta, T, S)                                   \
  m.impl(#name "." T, bin_t<NISA_BIN_##OP, Meta>);                            \
  m.impl(#name "_." T, bin_t_<NISA_BIN_##OP, Meta>);                          \
  m.impl(#name "." T "_out", bin_t_out<NISA_BIN_##OP, Meta>);                 \
  m.impl(#name "." S, bin_s<NISA_BIN_##OP, Meta>);                            \
  m.impl(#name "_." S, bin_s_<NISA_BIN_##OP, Meta>);                          \
  m.impl(#name "." S "_out", bin_s_out<NISA_BIN_##OP, Meta>);
#define REG_BIN(name, OP)                                                     \
  REG_BIN_FORMS(name, OP, at::meta::structured_##name##_Tensor, "Tensor", "Scalar")
  NEURON_BINARY_MAP(REG_BIN)
  m.impl("remainder.Scalar_Tensor", bin_st<NISA_BIN_REM, at::meta::structured_remainder_Tensor>);
#define REG_SHIFT(name, OP, dunder, idunder)                                  \
  REG_BIN_FORMS(name, OP, at::meta::structured_##name##_Tensor, "Tensor", "Tensor_Scalar") \
  m.impl(#name ".Scalar_Tensor", bin_st<NISA_BIN_##OP, at::meta::structured_##name##_Tensor>); \
  m.impl(#dunder ".Tensor", bin_t<NISA_BIN_##OP, void>);                      \
  m.impl(#dunder ".Scalar", bin_s<NISA_BIN_##OP, void>);                      \
  m.impl(#idunder ".Tensor", bin_t_<NISA_BIN_##OP, void>);                    \
  m.impl(#idunder ".Scalar", bin_s_<NISA_BIN_##OP, void>);
  NEURON_SHIFT_MAP(REG_SHIFT)
#define REG_LOGICAL(name, CMP)                                                \
  m.impl(#name, cmp_t<NISA_CMP_##CMP>);                                       \
  m.impl(#name "_", cmp_t_<NISA_CMP_##CMP>);                                  \
  m.impl(#name ".out", cmp_t_out<NISA_CMP_##CMP>);
  NEURON_LOGICAL_MAP(REG_LOGICAL)
  using copysign_meta = at::meta::structured_copysign_Tensor;
  m.impl("copysign.Tensor", bin_t<NISA_BIN_COPYSIGN, copysign_meta>);
  m.impl("copysign_.Tensor", bin_t_<NISA_BIN_COPYSIGN, copysign_meta>);
  m.impl("copysign.out", bin_t_out<NISA_BIN_COPYSIGN, copysign_meta>);
  m.impl("copysign.Scalar", bin_s<NISA_BIN_COPYSIGN, copysign_meta>);
  m.impl("copysign_.Scalar", bin_s_<NISA_BIN_COPYSIGN, copysign_meta>);
  m.impl("copysign.Scalar_out", bin_s_out<NISA_BIN_COPYSIGN, copysign_meta>);
  using logaddexp_meta = at::meta::structured_logaddexp;
  using logaddexp2_meta = at::meta::structured_logaddexp2;
  m.impl("logaddexp", bin_t<NISA_BIN_LOGADDEXP, logaddexp_meta>);
  m.impl("logaddexp.out", bin_t_out<NISA_BIN_LOGADDEXP, logaddexp_meta>);
  m.impl("logaddexp2", bin_t<NISA_BIN_LOGADDEXP2, logaddexp2_meta>);
  m.impl("logaddexp2.out", bin_t_out<NISA_BIN_LOGADDEXP2, logaddexp2_meta>);
  using xlogy_meta = at::meta::structured_xlogy_Tensor;
  m.impl("xlogy.Tensor", bin_t<NISA_BIN_XLOGY, xlogy_meta>);
  m.impl("xlogy_.Tensor", bin_t_<NISA_BIN_XLOGY, xlogy_meta>);
  m.impl("xlogy.OutTensor", bin_t_out<NISA_BIN_XLOGY, xlogy_meta>);
  m.impl("xlogy.Scalar_Other", bin_s<NISA_BIN_XLOGY, xlogy_meta>);
  m.impl("xlogy_.Scalar_Other", bin_s_<NISA_BIN_XLOGY, xlogy_meta>);
  m.impl("xlogy.OutScalar_Other", bin_s_out<NISA_BIN_XLOGY, xlogy_meta>);
  m.impl("xlogy.Scalar_Self", bin_st<NISA_BIN_XLOGY, xlogy_meta>);
  // floor_divide has no structured meta: TensorIterator's binary builder.
  m.impl("floor_divide", bin_t<NISA_BIN_FLOORDIV, void>);
  m.impl("floor_divide_.Tensor", bin_t_<NISA_BIN_FLOORDIV, void>);
  m.impl("floor_divide.out", bin_t_out<NISA_BIN_FLOORDIV, void>);
  m.impl("floor_divide.Scalar", bin_s<NISA_BIN_FLOORDIV, void>);
  m.impl("floor_divide_.Scalar", bin_s_<NISA_BIN_FLOORDIV, void>);
  m.impl("div.Tensor_mode", div_tm);
  m.impl("div_.Tensor_mode", div_tm_);
  m.impl("div.out_mode", div_tm_out);
  m.impl("div.Scalar_mode", div_sm);
  m.impl("div_.Scalar_mode", div_sm_);
  m.impl("nextafter", nextafter);
  m.impl("nextafter_", nextafter_);
  m.impl("nextafter.out", nextafter_out);
}

}  // namespace torch_neuron

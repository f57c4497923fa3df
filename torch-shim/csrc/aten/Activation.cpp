// SPDX-License-Identifier: MIT
// The activation functions, forward and backward: relu, threshold, gelu,
// silu, hardswish, hardsigmoid and mish (rows of the unary table),
// leaky_relu, hardshrink, softshrink, softplus, elu (selu, celu),
// log_sigmoid, prelu, rrelu, hardtanh and glu. Most are one ISA function
// of the card (with parameters), their backward grad * f'(x) with the
// ISA's derivative function; prelu, rrelu and relu's backward are a few
// card instructions; hardtanh (a clamp) and glu are ATen operators that
// dispatch to the neuron kernels.
#include <ATen/ops/elu_meta.h>
#include <ATen/ops/elu_backward_meta.h>
#include <ATen/ops/gelu_meta.h>
#include <ATen/ops/gelu_backward_meta.h>
#include <ATen/ops/hardshrink_meta.h>
#include <ATen/ops/hardshrink_backward_meta.h>
#include <ATen/ops/hardsigmoid_meta.h>
#include <ATen/ops/hardsigmoid_backward_meta.h>
#include <ATen/ops/leaky_relu_meta.h>
#include <ATen/ops/leaky_relu_backward_meta.h>
#include <ATen/ops/mish_meta.h>
#include <ATen/ops/silu_meta.h>
#include <ATen/ops/silu_backward_meta.h>
#include <ATen/ops/softplus_meta.h>
#include <ATen/ops/softplus_backward_meta.h>
#include <ATen/ops/softshrink_meta.h>
#include <ATen/ops/softshrink_backward_meta.h>
#include <ATen/ops/threshold_meta.h>
#include <ATen/ops/threshold_backward_meta.h>

#include "NeuronElementwise.h"

namespace torch_neuron {
namespace {

at::Tensor relu(const at::Tensor& a) {
  at::Tensor out = unary_result(UnaryResult::Keep, a).tensor;
  return unary_into(NISA_UN_RELU, a, out);
}
at::Tensor& relu_(at::Tensor& a) { return unary_into(NISA_UN_RELU, a, a); }

// The activations below take their results from their structured metas
// (TensorIterator's unary builder: the input's type, the out= checks, the
// overlap checks in place); the CPU computes them for floating types only
// (silu for complex too), and so does the card.
void check_activation(const at::Tensor& a, bool complex_ok = false) {
  std::string name = current_op_name();
  TORCH_CHECK(at::isFloatingType(a.scalar_type()) || (complex_ok && a.is_complex()),
              "neuron: ", name.empty() ? "this activation" : name, " is not implemented "
              "for '", a.scalar_type(), "' (floating types only)");
}

#define EXPAND(...) __VA_ARGS__
// An activation with structured meta at::meta::structured_<name> computing
// ISA function FN(x; P, Q) (ARGS: its parameters after x, META_ARGS their
// names, both parenthesised, each with a leading comma): its functional
// and out= kernels, and with META_ACT_ in place.
#define META_ACT(name, ARGS, META_ARGS, FN, P, Q, COMPLEX)                    \
  at::Tensor name(const at::Tensor& a EXPAND ARGS) {                          \
    at::Tensor out = ew_meta<at::meta::structured_##name>(                    \
        Form::Functional, {}, a EXPAND META_ARGS).tensor;                     \
    check_activation(a, COMPLEX);                                             \
    return unary_into(FN, a, out, P, Q);                                      \
  }                                                                           \
  at::Tensor& name##_out(const at::Tensor& a EXPAND ARGS, at::Tensor& out) {  \
    ew_meta<at::meta::structured_##name>(Form::Out, out, a EXPAND META_ARGS); \
    check_activation(a, COMPLEX);                                             \
    return unary_into(FN, a, out, P, Q);                                      \
  }
#define META_ACT_(name, ARGS, META_ARGS, FN, P, Q, COMPLEX)                   \
  META_ACT(name, ARGS, META_ARGS, FN, P, Q, COMPLEX)                          \
  at::Tensor& name##_(at::Tensor& a EXPAND ARGS) {                            \
    ew_meta<at::meta::structured_##name>(Form::Inplace, a, a EXPAND META_ARGS); \
    check_activation(a, COMPLEX);                                             \
    return unary_into(FN, a, a, P, Q);                                        \
  }

nisa_unary gelu_fn(c10::string_view approximate, bool grad) {
  bool tanh = approximate == "tanh";
  TORCH_CHECK(tanh || approximate == "none", "neuron: gelu approximate must "
              "be 'none' or 'tanh', got ", approximate);
  return grad ? (tanh ? NISA_UN_GELU_TANH_GRAD : NISA_UN_GELU_ERF_GRAD)
              : (tanh ? NISA_UN_GELU_TANH : NISA_UN_GELU_ERF);
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

#define NO_ARGS ()
#define GELU_ARG (, c10::string_view approximate)
#define GELU_META (, approximate)
META_ACT_(gelu, GELU_ARG, GELU_META, gelu_fn(approximate, false), 0.0, 0.0, false)
META_ACT_(silu, NO_ARGS, NO_ARGS, NISA_UN_SILU, 0.0, 0.0, true)
META_ACT_(mish, NO_ARGS, NO_ARGS, NISA_UN_MISH, 0.0, 0.0, false)
META_ACT_(hardsigmoid, NO_ARGS, NO_ARGS, NISA_UN_HARDSIGMOID, 0.0, 0.0, false)
#define SLOPE_ARG (, const at::Scalar& slope)
#define SLOPE_META (, slope)
META_ACT_(leaky_relu, SLOPE_ARG, SLOPE_META, NISA_UN_LEAKY_RELU, slope.toDouble(), 0.0, false)
#define LAMBD_ARG (, const at::Scalar& lambd)
#define LAMBD_META (, lambd)
META_ACT(hardshrink, LAMBD_ARG, LAMBD_META, NISA_UN_HARDSHRINK, lambd.toDouble(), 0.0, false)
META_ACT(softshrink, LAMBD_ARG, LAMBD_META, NISA_UN_SOFTSHRINK, lambd.toDouble(), 0.0, false)
#define SOFTPLUS_ARG (, const at::Scalar& beta, const at::Scalar& threshold)
#define SOFTPLUS_META (, beta, threshold)
META_ACT(softplus, SOFTPLUS_ARG, SOFTPLUS_META, NISA_UN_SOFTPLUS, beta.toDouble(),
         threshold.toDouble(), false)
#define ELU_ARGS (, const at::Scalar& alpha, const at::Scalar& scale, \
                  const at::Scalar& input_scale)
#define ELU_META (, alpha, scale, input_scale)
META_ACT_(elu, ELU_ARGS, ELU_META, elu_fn(alpha, scale, input_scale, false).fn,
         elu_fn(alpha, scale, input_scale, false).p,
         elu_fn(alpha, scale, input_scale, false).q, false)

// threshold(x, t, v) = x <= t ? v : x: one THRESHOLD, computed in double,
// exact for every card type but int64, which gets a compare and a where
// (t and v converted to int64 first, as on the CPU).
at::Tensor& threshold_into(const at::Tensor& a, const at::Scalar& th,
                           const at::Scalar& v, at::Tensor& out) {
  if (a.scalar_type() != at::kLong && out.scalar_type() != at::kLong)
    return unary_into(NISA_UN_THRESHOLD, a, out, th.toDouble(), v.toDouble());
  at::Tensor below = empty_neuron(a.sizes(), at::kBool, a.device());
  compare_into(NISA_CMP_LE, a, wrapped(th.toLong()), below);
  at::Tensor value = empty_neuron({}, at::kLong, a.device());
  value.fill_(v.toLong());
  return where_into(below, value, a, out);
}
using threshold_meta = at::meta::structured_threshold;
at::Tensor threshold(const at::Tensor& a, const at::Scalar& th, const at::Scalar& v) {
  at::Tensor out = ew_meta<threshold_meta>(Form::Functional, {}, a, th, v).tensor;
  return threshold_into(a, th, v, out);
}
at::Tensor& threshold_(at::Tensor& a, const at::Scalar& th, const at::Scalar& v) {
  ew_meta<threshold_meta>(Form::Inplace, a, a, th, v);
  return threshold_into(a, th, v, a);
}
at::Tensor& threshold_out(const at::Tensor& a, const at::Scalar& th,
                          const at::Scalar& v, at::Tensor& out) {
  return compute_in(ew_meta<threshold_meta>(Form::Out, out, a, th, v), out,
                    [&](at::Tensor& o) { threshold_into(a, th, v, o); });
}

// ---- backward: grad * f'(x), results from the backward's structured meta ----

// A backward whose structured meta is at::meta::structured_<name> (PARAMS:
// its parameters, META_ARGS: the meta's arguments, both parenthesised),
// computing BODY into `out`: its functional and .grad_input (out=)
// kernels. Into a .grad_input of another type, BODY computes in the meta's
// computing type and the result is cast, as on the CPU.
#define META_GRAD(name, PARAMS, META_ARGS, BODY)                               \
  at::Tensor name(EXPAND PARAMS) {                                             \
    at::Tensor out = ew_meta<at::meta::structured_##name>(                     \
        Form::Functional, {}, EXPAND META_ARGS).tensor;                        \
    BODY;                                                                      \
    return out;                                                                \
  }                                                                            \
  at::Tensor& name##_out(EXPAND PARAMS, at::Tensor& grad_input) {              \
    EwResult r = ew_meta<at::meta::structured_##name>(Form::Out, grad_input,   \
                                                      EXPAND META_ARGS);       \
    return compute_in(r, grad_input, [&](at::Tensor& out) { BODY; });          \
  }

META_GRAD(gelu_backward,
          (const at::Tensor& grad, const at::Tensor& x, c10::string_view approximate),
          (grad, x, approximate), grad_times(gelu_fn(approximate, true), grad, x, out))
META_GRAD(silu_backward, (const at::Tensor& grad, const at::Tensor& x), (grad, x),
          grad_times(NISA_UN_SILU_GRAD, grad, x, out))
// With is_result, x is the output; its sign is the input's (slope >= 0,
// which the meta checks).
META_GRAD(leaky_relu_backward,
          (const at::Tensor& grad, const at::Tensor& x, const at::Scalar& slope,
           bool is_result),
          (grad, x, slope, is_result),
          grad_times(NISA_UN_LEAKY_RELU_GRAD, grad, x, out, slope.toDouble()))
META_GRAD(softplus_backward,
          (const at::Tensor& grad, const at::Tensor& x, const at::Scalar& beta,
           const at::Scalar& threshold),
          (grad, x, beta, threshold),
          grad_times(NISA_UN_SOFTPLUS_GRAD, grad, x, out, beta.toDouble(),
                     threshold.toDouble()))
META_GRAD(hardshrink_backward,
          (const at::Tensor& grad, const at::Tensor& x, const at::Scalar& lambd),
          (grad, x, lambd), grad_select(NISA_UN_SHRINK_GRAD, grad, x, out, lambd.toDouble()))
META_GRAD(softshrink_backward,
          (const at::Tensor& grad, const at::Tensor& x, const at::Scalar& lambd),
          (grad, x, lambd), grad_select(NISA_UN_SHRINK_GRAD, grad, x, out, lambd.toDouble()))
META_GRAD(hardsigmoid_backward, (const at::Tensor& grad, const at::Tensor& x), (grad, x),
          grad_select(NISA_UN_HARDSIGMOID_GRAD, grad, x, out))

// relu's backward: x <= threshold ? 0 : grad.
void threshold_grad_into(const at::Tensor& grad, const at::Tensor& x,
                         const at::Scalar& threshold, at::Tensor& out) {
  at::Tensor mask = empty_neuron(x.sizes(), at::kBool, x.device());
  nrn_tensor_desc dm = desc(mask), dx = desc(x);
  NEURON_OP(nrn_op_compare_scalar(stream_for(x), NISA_CMP_GT, &dm, &dx,
                                  threshold.toDouble()));
  where_into(mask, operand(grad, out.device()), filled(0.0, out.scalar_type(), out.device()),
             out);
}
META_GRAD(threshold_backward,
          (const at::Tensor& grad, const at::Tensor& x, const at::Scalar& threshold),
          (grad, x, threshold), threshold_grad_into(grad, x, threshold, out))

// From the output y: y > 0 ? scale : input_scale * (y + alpha * scale).
void elu_grad_of_result(const at::Tensor& grad, const at::Scalar& alpha,
                        const at::Scalar& scale, const at::Scalar& input_scale,
                        const at::Tensor& y, at::Tensor& out) {
  double a = alpha.toDouble(), s = scale.toDouble(), i = input_scale.toDouble();
  at::Tensor d = empty_neuron(y.sizes(), out.scalar_type(), y.device());
  binary_into(NISA_BIN_ADD, y, wrapped(a * s), 1.0, d);
  if (i != 1.0)
    binary_into(NISA_BIN_MUL, d, wrapped(i), 1.0, d);
  at::Tensor mask = sp_positive(y);
  where_into(mask, filled(s, d.scalar_type(), d.device()), d, d);
  binary_into(NISA_BIN_MUL, grad, d, 1.0, out);
}
void elu_grad_into(const at::Tensor& grad, const at::Scalar& alpha, const at::Scalar& scale,
                   const at::Scalar& input_scale, bool is_result, const at::Tensor& x_or_y,
                   at::Tensor& out) {
  if (is_result)
    return elu_grad_of_result(grad, alpha, scale, input_scale, x_or_y, out);
  EluFn f = elu_fn(alpha, scale, input_scale, true);
  grad_times(f.fn, grad, x_or_y, out, f.p, f.q);
}
META_GRAD(elu_backward,
          (const at::Tensor& grad, const at::Scalar& alpha, const at::Scalar& scale,
           const at::Scalar& input_scale, bool is_result, const at::Tensor& x_or_y),
          (grad, alpha, scale, input_scale, is_result, x_or_y),
          elu_grad_into(grad, alpha, scale, input_scale, is_result, x_or_y, out))

// The backwards with no structured meta in ATen: their results as ATen's
// own kernels make them (TensorIterator's binary builder).
// mish's: into a result of x's type (ATen gives its iterator one).
at::Tensor mish_backward(const at::Tensor& grad, const at::Tensor& x) {
  at::Tensor out = at::empty({0}, x.options());
  return compute_in(binary_result(NISA_BIN_MUL, grad, x, out), out, [&](at::Tensor& o) {
    grad_times(NISA_UN_MISH_GRAD, grad, x, o);
  });
}
// 0 below -3; at -1.5, where the slope x / 3 + 1/2 is 0, the CPU multiplies.
at::Tensor hardswish_backward(const at::Tensor& grad, const at::Tensor& x) {
  at::Tensor out = binary_result(NISA_BIN_MUL, grad, x).tensor;
  at::Tensor below = empty_neuron(x.sizes(), at::kBool, x.device());
  nrn_tensor_desc db = desc(below), dx = desc(x);
  NEURON_OP(nrn_op_compare_scalar(stream_for(x), NISA_CMP_LT, &db, &dx, -3.0));
  return grad_select(NISA_UN_HARDSWISH_GRAD, grad, x, out, 0.0, 0.0, below);
}

// log_sigmoid: the CPU's buffer is not needed on the card (an empty one).
std::tuple<at::Tensor, at::Tensor> log_sigmoid_forward(const at::Tensor& a) {
  check_floating(a.scalar_type(), "log_sigmoid");
  at::Tensor out = unary_result(UnaryResult::FloatOnly, a).tensor;
  unary_into(NISA_UN_LOG_SIGMOID, a, out);
  return {out, empty_neuron({0}, a.scalar_type(), a.device())};
}
std::tuple<at::Tensor&, at::Tensor&> log_sigmoid_forward_out(
    const at::Tensor& a, at::Tensor& out, at::Tensor& buffer) {
  check_floating(a.scalar_type(), "log_sigmoid");
  unary_result(UnaryResult::FloatOnly, a, out);
  unary_into(NISA_UN_LOG_SIGMOID, a, out);
  resize_out(buffer, {0});
  return {out, buffer};
}
at::Tensor log_sigmoid_backward(const at::Tensor& grad, const at::Tensor& x,
                                const at::Tensor& buffer) {
  at::Tensor out = binary_result(NISA_BIN_MUL, grad, x).tensor;
  return grad_times(NISA_UN_LOG_SIGMOID_GRAD, grad, x, out);
}

// ---- composed of card instructions ----

at::Tensor prelu_kernel(const at::Tensor& x, const at::Tensor& w) {
  check_floating(x.scalar_type(), "prelu");
  return binary(NISA_BIN_PRELU, x, w);
}
// d/dx = x > 0 ? 1 : w, d/dw = x > 0 ? 0 : x (both of the broadcast shape;
// autograd sums the weight's to its shape).
std::tuple<at::Tensor, at::Tensor> prelu_kernel_backward(
    const at::Tensor& g, const at::Tensor& x, const at::Tensor& w) {
  at::Tensor mask = sp_positive(x);
  at::Tensor gi = binary(NISA_BIN_MUL, g, w);
  at::Tensor gw = binary(NISA_BIN_MUL, g, x);
  at::Tensor gx = empty_neuron(gi.sizes(), gi.scalar_type(), gi.device());
  where_into(mask, g, gi, gx);
  where_into(mask, filled(0.0, gw.scalar_type(), gw.device()), gw, gw);
  return {gx, gw};
}

// Eval: leaky_relu with the mean slope. Training: noise = x > 0 ? 1 :
// U(lower, upper) drawn on the card, result x * noise.
at::Tensor& rrelu_into(const at::Tensor& x, const at::Tensor& noise,
                       const at::Scalar& lower, const at::Scalar& upper,
                       bool training, c10::optional<at::Generator> gen,
                       at::Tensor& out) {
  check_floating(x.scalar_type(), "rrelu_with_noise");
  double lo = lower.toDouble(), hi = upper.toDouble();
  if (!training)
    return unary_into(NISA_UN_LEAKY_RELU, x, out, (lo + hi) / 2);
  at::Tensor n = noise;
  TORCH_CHECK(n.sizes() == x.sizes(), "rrelu_with_noise: noise has shape ",
              n.sizes(), ", the input ", x.sizes());
  n.uniform_(lo, hi, gen);
  where_into(sp_positive(x), filled(1.0, n.scalar_type(), n.device()), n, n);
  return binary_into(NISA_BIN_MUL, x, n, 1.0, out);
}
at::Tensor rrelu_with_noise(const at::Tensor& x, at::Tensor& noise,
                            const at::Scalar& lower, const at::Scalar& upper,
                            bool training, c10::optional<at::Generator> gen) {
  at::Tensor out = empty_neuron(x.sizes(), x.scalar_type(), x.device());
  return rrelu_into(x, noise, lower, upper, training, gen, out);
}
at::Tensor& rrelu_with_noise_(at::Tensor& x, at::Tensor& noise,
                              const at::Scalar& lower, const at::Scalar& upper,
                              bool training, c10::optional<at::Generator> gen) {
  return rrelu_into(x, noise, lower, upper, training, gen, x);
}
at::Tensor& rrelu_with_noise_out(const at::Tensor& x, at::Tensor& noise,
                                 const at::Scalar& lower, const at::Scalar& upper,
                                 bool training, c10::optional<at::Generator> gen,
                                 at::Tensor& out) {
  resize_out(out, x.sizes());
  return rrelu_into(x, noise, lower, upper, training, gen, out);
}

// ---- glu: a * sigmoid(b) of the two halves along dim ----
at::Tensor glu_n(const at::Tensor& self, int64_t dim) {
  int64_t d = at::maybe_wrap_dim(dim, self.dim()), n = self.size(d);
  TORCH_CHECK(n % 2 == 0, "Halving dimension must be even, but dimension ", d,
              " is size ", n);
  return self.narrow(d, 0, n / 2) * self.narrow(d, n / 2, n / 2).sigmoid();
}
at::Tensor& glu_out(const at::Tensor& self, int64_t dim, at::Tensor& out) {
  return into(out, glu_n(self, dim));
}
at::Tensor glu_backward(const at::Tensor& grad, const at::Tensor& self, int64_t dim) {
  int64_t d = at::maybe_wrap_dim(dim, self.dim()), h = self.size(d) / 2;
  at::Tensor a = self.narrow(d, 0, h), sb = self.narrow(d, h, h).sigmoid();
  at::Tensor ga = grad * sb;
  return at::cat({ga, ga * a * (1 - sb)}, d);
}

// ---- hardtanh: a clamp ----

// hardtanh(x, lo, hi) is clamp(x, lo, hi), which computes it into its
// result, with ATen's rules: no bool input, and integer inputs take the
// bounds truncated (the bounds do not promote the result), never negative
// for uint8.
at::Tensor& hardtanh_out(const at::Tensor& self, const at::Scalar& lo, const at::Scalar& hi,
                         at::Tensor& out) {
  TORCH_CHECK(self.scalar_type() != at::kBool, "Bool inputs not supported for hardtanh");
  if (!at::isIntegralType(self.scalar_type(), false))
    return at::clamp_out(out, self, lo, hi);
  int64_t l = lo.toLong(), h = hi.toLong();
  TORCH_CHECK(self.scalar_type() != at::kByte || (l >= 0 && h >= 0),
              "cannot do hardtanh on an unsigned type with negative limits");
  return at::clamp_out(out, self, l, h);
}
at::Tensor hardtanh(const at::Tensor& self, const at::Scalar& lo, const at::Scalar& hi) {
  at::Tensor out = at::empty_like(self);
  return hardtanh_out(self, lo, hi, out);
}
at::Tensor& hardtanh_(at::Tensor& self, const at::Scalar& lo, const at::Scalar& hi) {
  return hardtanh_out(self, lo, hi, self);
}

// No gradient at or beyond min and max (NaN passes it), as on the CPU;
// the result is TensorIterator's binary one of grad and x, as ATen's.
at::Tensor& hardtanh_grad_into(const at::Tensor& grad, const at::Tensor& x,
                               const at::Scalar& lo, const at::Scalar& hi, at::Tensor& out) {
  at::Tensor outside = empty_neuron(x.sizes(), at::kBool, x.device());
  at::Tensor above = empty_neuron(x.sizes(), at::kBool, x.device());
  compare_into(NISA_CMP_LE, x, wrapped(lo), outside);
  compare_into(NISA_CMP_GE, x, wrapped(hi), above);
  compare_into(NISA_CMP_LOR, outside, above, outside);
  return where_into(outside, filled(0.0, out.scalar_type(), out.device()),
                    operand(grad, out.device()), out);
}
at::Tensor hardtanh_backward(const at::Tensor& grad, const at::Tensor& x,
                             const at::Scalar& lo, const at::Scalar& hi) {
  at::Tensor out = binary_result(NISA_BIN_MUL, grad, x).tensor;
  return hardtanh_grad_into(grad, x, lo, hi, out);
}
at::Tensor& hardtanh_backward_out(const at::Tensor& grad, const at::Tensor& x,
                                  const at::Scalar& lo, const at::Scalar& hi,
                                  at::Tensor& grad_input) {
  return compute_in(binary_result(NISA_BIN_MUL, grad, x, grad_input), grad_input,
                    [&](at::Tensor& o) { hardtanh_grad_into(grad, x, lo, hi, o); });
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("hardswish", un_f<NISA_UN_HARDSWISH, UnaryResult::FloatOnly>);
  m.impl("hardswish_", un_i<NISA_UN_HARDSWISH, UnaryResult::FloatOnly>);
  m.impl("hardswish.out", un_o<NISA_UN_HARDSWISH, UnaryResult::FloatOnly>);
  m.impl("relu", relu);
  m.impl("relu_", relu_);
#define REG_ACT(name)                 \
  m.impl(#name, name);                \
  m.impl(#name ".out", name##_out);
#define REG_ACT_(name)                \
  REG_ACT(name)                       \
  m.impl(#name "_", name##_);
#define REG_GRAD(name)                \
  m.impl(#name, name);                \
  m.impl(#name ".grad_input", name##_out);
  REG_ACT_(gelu)
  REG_ACT_(silu)
  REG_ACT_(mish)
  REG_ACT_(hardsigmoid)
  REG_ACT_(leaky_relu)
  REG_ACT_(elu)
  REG_ACT_(threshold)
  REG_ACT(hardshrink)
  REG_ACT(softshrink)
  REG_ACT(softplus)
  REG_GRAD(gelu_backward)
  REG_GRAD(silu_backward)
  REG_GRAD(leaky_relu_backward)
  REG_GRAD(softplus_backward)
  REG_GRAD(hardshrink_backward)
  REG_GRAD(softshrink_backward)
  REG_GRAD(hardsigmoid_backward)
  REG_GRAD(threshold_backward)
  REG_GRAD(elu_backward)
  m.impl("hardswish_backward", hardswish_backward);
  m.impl("mish_backward", mish_backward);
  m.impl("log_sigmoid_forward", log_sigmoid_forward);
  m.impl("log_sigmoid_forward.output", log_sigmoid_forward_out);
  m.impl("log_sigmoid_backward", log_sigmoid_backward);
  m.impl("_prelu_kernel", prelu_kernel);
  m.impl("_prelu_kernel_backward", prelu_kernel_backward);
  m.impl("rrelu_with_noise", rrelu_with_noise);
  m.impl("rrelu_with_noise_", rrelu_with_noise_);
  m.impl("rrelu_with_noise.out", rrelu_with_noise_out);
  m.impl("glu", glu_n);
  m.impl("glu.out", glu_out);
  m.impl("glu_backward", glu_backward);
  m.impl("hardtanh", hardtanh);
  m.impl("hardtanh_", hardtanh_);
  m.impl("hardtanh.out", hardtanh_out);
  m.impl("hardtanh_backward", hardtanh_backward);
  m.impl("hardtanh_backward.grad_input", hardtanh_backward_out);
}

}  // namespace torch_neuron

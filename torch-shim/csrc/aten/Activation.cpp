// SPDX-License-Identifier: MIT
// The activation functions, forward and backward: relu, threshold, gelu,
// silu, hardswish, hardsigmoid and mish (rows of the unary table),
// leaky_relu, hardshrink, softshrink, softplus, elu (selu, celu),
// log_sigmoid, prelu, rrelu, hardtanh and glu. Most are one ISA function
// of the card (with parameters), their backward grad * f'(x) with the
// ISA's derivative function; prelu, rrelu and relu's backward are a few
// card instructions; hardtanh (a clamp) and glu are ATen operators that
// dispatch to the neuron kernels.
#include "NeuronElementwise.h"

namespace torch_neuron {
namespace {

at::Tensor relu(const at::Tensor& a) {
  at::Tensor out = unary_result(UnaryResult::Keep, a).tensor;
  return unary_into(NISA_UN_RELU, a, out);
}
at::Tensor& relu_(at::Tensor& a) { return unary_into(NISA_UN_RELU, a, a); }

nisa_unary gelu_fn(c10::string_view approximate, bool grad) {
  bool tanh = approximate == "tanh";
  TORCH_CHECK(tanh || approximate == "none", "neuron: gelu approximate must "
              "be 'none' or 'tanh', got ", approximate);
  return grad ? (tanh ? NISA_UN_GELU_TANH_GRAD : NISA_UN_GELU_ERF_GRAD)
              : (tanh ? NISA_UN_GELU_TANH : NISA_UN_GELU_ERF);
}
at::Tensor gelu(const at::Tensor& a, c10::string_view approximate) {
  at::Tensor out = unary_result(UnaryResult::FloatOnly, a).tensor;
  return unary_into(gelu_fn(approximate, false), a, out);
}
at::Tensor& gelu_(at::Tensor& a, c10::string_view approximate) {
  return unary_into(gelu_fn(approximate, false), a, a);
}
at::Tensor& gelu_out(const at::Tensor& a, c10::string_view approximate,
                     at::Tensor& out) {
  unary_result(UnaryResult::FloatOnly, a, out);
  return unary_into(gelu_fn(approximate, false), a, out);
}

// ---- backward of activations: grad * f'(x) ----

at::Tensor gelu_backward(const at::Tensor& grad, const at::Tensor& x,
                         c10::string_view approximate) {
  return grad_times(gelu_fn(approximate, true), grad, x);
}
at::Tensor silu_backward(const at::Tensor& grad, const at::Tensor& x) {
  return grad_times(NISA_UN_SILU_GRAD, grad, x);
}
// relu's backward: grad where x > threshold, else 0
at::Tensor threshold_backward(const at::Tensor& grad, const at::Tensor& x,
                              const at::Scalar& threshold) {
  at::Tensor mask = empty_neuron(x.sizes(), at::kBool, x.device());
  at::Tensor zero = empty_neuron({}, grad.scalar_type(), x.device());
  at::Tensor out = empty_neuron(at::infer_size(grad.sizes(), x.sizes()),
                                grad.scalar_type(), x.device());
  nrn_stream* s = stream_for(x);
  nrn_tensor_desc dm = desc(mask), dx = desc(x), dz = desc(zero), dg = desc(grad),
                  dout = desc(out);
  NEURON_OP(nrn_op_compare_scalar(s, NISA_CMP_GT, &dm, &dx, threshold.toDouble()));
  NEURON_OP(nrn_op_fill(s, &dz, 0.0));
  NEURON_OP(nrn_op_where(s, &dout, &dm, &dg, &dz));
  return out;
}

// threshold(x, t, v) = x <= t ? v : x, computed in double: exact for every
// card type but int64 (refused).
at::Tensor& threshold_into(const at::Tensor& a, const at::Scalar& th,
                           const at::Scalar& v, at::Tensor& out) {
  TORCH_CHECK(a.scalar_type() != at::kLong && out.scalar_type() != at::kLong,
              "neuron: threshold is not implemented for 'Long' on the card");
  return unary_into(NISA_UN_THRESHOLD, a, out, th.toDouble(), v.toDouble());
}
at::Tensor threshold(const at::Tensor& a, const at::Scalar& th, const at::Scalar& v) {
  at::Tensor out = empty_neuron(a.sizes(), a.scalar_type(), a.device());
  return threshold_into(a, th, v, out);
}
at::Tensor& threshold_(at::Tensor& a, const at::Scalar& th, const at::Scalar& v) {
  return threshold_into(a, th, v, a);
}
at::Tensor& threshold_out(const at::Tensor& a, const at::Scalar& th,
                          const at::Scalar& v, at::Tensor& out) {
  resize_out(out, a.sizes());
  return threshold_into(a, th, v, out);
}

// ---- activations with parameters, and their backward ----

// An activation with parameters: functional and out= (and in place below).
#define PARAM_ACT(name, FN, ARGS, P, Q)                                       \
  at::Tensor name(const at::Tensor& a ARGS) {                                 \
    check_floating(a.scalar_type(), #name);                                   \
    at::Tensor out = unary_result(UnaryResult::FloatOnly, a).tensor;                 \
    return unary_into(FN, a, out, P, Q);                                      \
  }                                                                           \
  at::Tensor& name##_out(const at::Tensor& a ARGS, at::Tensor& out) {         \
    check_floating(a.scalar_type(), #name);                                   \
    unary_result(UnaryResult::FloatOnly, a, out);                             \
    return unary_into(FN, a, out, P, Q);                                      \
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
  check_floating(a.scalar_type(), "leaky_relu");
  return unary_into(NISA_UN_LEAKY_RELU, a, a, slope.toDouble());
}

at::Tensor leaky_relu_backward(const at::Tensor& grad, const at::Tensor& x,
                               const at::Scalar& slope, bool is_result) {
  // With is_result, x is the output; its sign is the input's (slope >= 0).
  return grad_times(NISA_UN_LEAKY_RELU_GRAD, grad, x, slope.toDouble());
}
at::Tensor shrink_backward(const at::Tensor& grad, const at::Tensor& x,
                           const at::Scalar& lambd) {
  return grad_select(NISA_UN_SHRINK_GRAD, grad, x, lambd.toDouble());
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
  check_floating(a.scalar_type(), "elu");
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

at::Tensor mish_backward(const at::Tensor& grad, const at::Tensor& x) {
  return grad_times(NISA_UN_MISH_GRAD, grad, x);
}
at::Tensor hardsigmoid_backward(const at::Tensor& grad, const at::Tensor& x) {
  return grad_select(NISA_UN_HARDSIGMOID_GRAD, grad, x);
}
// 0 below -3; at -1.5, where the slope x / 3 + 1/2 is 0, the CPU multiplies.
at::Tensor hardswish_backward(const at::Tensor& grad, const at::Tensor& x) {
  at::Tensor below = empty_neuron(x.sizes(), at::kBool, x.device());
  nrn_tensor_desc db = desc(below), dx = desc(x);
  NEURON_OP(nrn_op_compare_scalar(stream_for(x), NISA_CMP_LT, &db, &dx, -3.0));
  return grad_select(NISA_UN_HARDSWISH_GRAD, grad, x, 0.0, 0.0, below);
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
  return grad_times(NISA_UN_LOG_SIGMOID_GRAD, grad, x);
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
at::Tensor hardtanh(const at::Tensor& self, const at::Scalar& lo, const at::Scalar& hi) {
  return clamp_s(self, lo, hi);
}
at::Tensor& hardtanh_(at::Tensor& self, const at::Scalar& lo, const at::Scalar& hi) {
  return self.copy_(clamp_s(self, lo, hi));
}
at::Tensor& hardtanh_out(const at::Tensor& self, const at::Scalar& lo,
                         const at::Scalar& hi, at::Tensor& out) {
  return into(out, clamp_s(self, lo, hi));
}
// No gradient at or beyond min and max (NaN passes it), as on the CPU.
at::Tensor hardtanh_backward(const at::Tensor& grad, const at::Tensor& self,
                             const at::Scalar& lo, const at::Scalar& hi) {
  at::Tensor outside = self.le(lo).logical_or(self.ge(hi));
  return at::where(outside, at::zeros({}, grad.options()), grad);
}

}  // namespace

// torch name, ISA function, result type: functional, in-place and out=
// (REG_UNARY: NeuronElementwise.h).
#define NEURON_ACTIVATION_MAP(X)                                              \
  X(silu, SILU, Float) X(hardswish, HARDSWISH, FloatOnly)                     \
  X(hardsigmoid, HARDSIGMOID, FloatOnly) X(mish, MISH, FloatOnly)

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  NEURON_ACTIVATION_MAP(REG_UNARY)
  m.impl("relu", relu);
  m.impl("relu_", relu_);
  m.impl("gelu", gelu);
  m.impl("gelu_", gelu_);
  m.impl("gelu.out", gelu_out);
  m.impl("gelu_backward", gelu_backward);
  m.impl("silu_backward", silu_backward);
  m.impl("threshold_backward", threshold_backward);
  m.impl("threshold", threshold);
  m.impl("threshold_", threshold_);
  m.impl("threshold.out", threshold_out);
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
  m.impl("hardswish_backward", hardswish_backward);
  m.impl("hardsigmoid_backward", hardsigmoid_backward);
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
}

}  // namespace torch_neuron

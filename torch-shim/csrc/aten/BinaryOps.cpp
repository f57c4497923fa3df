// SPDX-License-Identifier: MIT
// Elementwise operators on the card: arithmetic (tensor and scalar forms,
// broadcasting, in-place and out=), gelu/silu/sigmoid/tanh backward,
// comparisons, where, masked_fill, fill and zero. The operators that map
// 1:1 onto an ISA function are tables in UnaryOps.cpp.
#include "NeuronElementwise.h"

namespace torch_neuron {
namespace {

#define BINARY_OPS(name, OP, ALPHA_ARG, ALPHA)                                \
  at::Tensor name##_tensor(const at::Tensor& a,                               \
                           const at::Tensor& b ALPHA_ARG) {                   \
    return binary(OP, a, b, ALPHA);                                           \
  }                                                                           \
  at::Tensor& name##_tensor_(at::Tensor& a, const at::Tensor& b ALPHA_ARG) {  \
    return binary_inplace(OP, a, b, ALPHA);                                   \
  }                                                                           \
  at::Tensor& name##_tensor_out(const at::Tensor& a,                          \
                                const at::Tensor& b ALPHA_ARG,                \
                                at::Tensor& out) {                            \
    return binary_out(OP, a, b, ALPHA, out);                                  \
  }                                                                           \
  at::Tensor name##_scalar(const at::Tensor& a,                               \
                           const at::Scalar& b ALPHA_ARG) {                   \
    return binary(OP, a, wrapped(b), ALPHA);                                  \
  }                                                                           \
  at::Tensor& name##_scalar_(at::Tensor& a, const at::Scalar& b ALPHA_ARG) {  \
    return binary_inplace(OP, a, wrapped(b), ALPHA);                          \
  }

#define WITH_ALPHA , const at::Scalar& alpha
#define NO_ALPHA
BINARY_OPS(add, NISA_BIN_ADD, WITH_ALPHA, alpha.toDouble())
BINARY_OPS(sub, NISA_BIN_SUB, WITH_ALPHA, alpha.toDouble())
BINARY_OPS(mul, NISA_BIN_MUL, NO_ALPHA, 1.0)
BINARY_OPS(div, NISA_BIN_DIV, NO_ALPHA, 1.0)

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

at::Tensor pow_tt(const at::Tensor& a, const at::Tensor& b) {
  return binary(NISA_BIN_POW, a, b);
}
at::Tensor& pow_tt_out(const at::Tensor& a, const at::Tensor& b, at::Tensor& out) {
  return binary_out(NISA_BIN_POW, a, b, 1.0, out);
}
at::Tensor pow_ts(const at::Tensor& a, const at::Scalar& e) {
  return binary(NISA_BIN_POW, a, wrapped(e));
}
at::Tensor& pow_ts_(at::Tensor& a, const at::Scalar& e) {
  return binary_inplace(NISA_BIN_POW, a, wrapped(e));
}
at::Tensor& pow_ts_out(const at::Tensor& a, const at::Scalar& e, at::Tensor& out) {
  return binary_out(NISA_BIN_POW, a, wrapped(e), 1.0, out);
}
at::Tensor pow_st(const at::Scalar& a, const at::Tensor& e) {
  return binary(NISA_BIN_POW, wrapped(a), e);
}

// rsub(self, other, alpha) = other - alpha * self
at::Tensor rsub_tensor(const at::Tensor& self, const at::Tensor& other,
                       const at::Scalar& alpha) {
  return binary(NISA_BIN_SUB, other, self, alpha.toDouble());
}
at::Tensor rsub_scalar(const at::Tensor& self, const at::Scalar& other,
                       const at::Scalar& alpha) {
  at::Tensor out = empty_neuron(self.sizes(),
                                binary_result_type(NISA_BIN_SUB, self, wrapped(other)),
                                self.device());
  nrn_tensor_desc o = desc(out), x = desc(self);
  // out = other, then out -= alpha * self (one rounding, alpha = 0 included)
  nrn_stream* s = stream_for(out);
  NEURON_OP(nrn_op_fill(s, &o, other.toDouble()));
  NEURON_OP(nrn_op_binary(s, NISA_BIN_SUB, &o, &o, &x, alpha.toDouble()));
  return out;
}

at::Tensor relu(const at::Tensor& a) { return unary(NISA_UN_RELU, a, true); }
at::Tensor& relu_(at::Tensor& a) { return unary_into(NISA_UN_RELU, a, a); }

nisa_unary gelu_fn(c10::string_view approximate, bool grad) {
  bool tanh = approximate == "tanh";
  TORCH_CHECK(tanh || approximate == "none", "neuron: gelu approximate must "
              "be 'none' or 'tanh', got ", approximate);
  return grad ? (tanh ? NISA_UN_GELU_TANH_GRAD : NISA_UN_GELU_ERF_GRAD)
              : (tanh ? NISA_UN_GELU_TANH : NISA_UN_GELU_ERF);
}
at::Tensor gelu(const at::Tensor& a, c10::string_view approximate) {
  return unary(gelu_fn(approximate, false), a, false);
}
at::Tensor& gelu_(at::Tensor& a, c10::string_view approximate) {
  return unary_into(gelu_fn(approximate, false), a, a);
}
at::Tensor& gelu_out(const at::Tensor& a, c10::string_view approximate,
                     at::Tensor& out) {
  return unary_out(gelu_fn(approximate, false), a, out);
}

// ---- backward of activations: grad * f'(x) ----

at::Tensor gelu_backward(const at::Tensor& grad, const at::Tensor& x,
                         c10::string_view approximate) {
  return grad_times(gelu_fn(approximate, true), grad, x);
}
at::Tensor silu_backward(const at::Tensor& grad, const at::Tensor& x) {
  return grad_times(NISA_UN_SILU_GRAD, grad, x);
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

// ---- comparisons, where, fill ----

#define COMPARE_OPS(name, CMP)                                                 \
  at::Tensor name##_t(const at::Tensor& a, const at::Tensor& b) {              \
    at::Tensor out = empty_neuron(at::infer_size(a.sizes(), b.sizes()),        \
                                  at::kBool, result_device(a, b));             \
    return compare_into(CMP, a, b, out);                                       \
  }                                                                            \
  at::Tensor name##_s(const at::Tensor& a, const at::Scalar& b) {              \
    return name##_t(a, wrapped(b));                                            \
  }                                                                            \
  at::Tensor& name##_to(const at::Tensor& a, const at::Tensor& b,              \
                        at::Tensor& out) {                                     \
    resize_out(out, at::infer_size(a.sizes(), b.sizes()));                     \
    return compare_into(CMP, a, b, out);                                       \
  }                                                                            \
  at::Tensor& name##_so(const at::Tensor& a, const at::Scalar& b,              \
                        at::Tensor& out) {                                     \
    return name##_to(a, wrapped(b), out);                                      \
  }

COMPARE_OPS(eq, NISA_CMP_EQ)
COMPARE_OPS(ne, NISA_CMP_NE)
COMPARE_OPS(lt, NISA_CMP_LT)
COMPARE_OPS(le, NISA_CMP_LE)
COMPARE_OPS(gt, NISA_CMP_GT)
COMPARE_OPS(ge, NISA_CMP_GE)

at::Tensor where_self(const at::Tensor& cond, const at::Tensor& a, const at::Tensor& b) {
  at::Device dev = is_neuron(cond) ? cond.device() : result_device(a, b);
  at::Tensor out = empty_neuron(at::infer_size(cond.sizes(),
                                               at::infer_size(a.sizes(), b.sizes())),
                                at::result_type(a, b), dev);
  at::Tensor c = operand(cond, dev), x = operand(a, dev), y = operand(b, dev);
  nrn_tensor_desc o = desc(out), dc = desc(c), dx = desc(x), dy = desc(y);
  NEURON_OP(nrn_op_where(stream_for(out), &o, &dc, &dx, &dy));
  return out;
}

at::Tensor& masked_fill_scalar_(at::Tensor& self, const at::Tensor& mask,
                                const at::Scalar& value) {
  at::Tensor v = empty_neuron({}, self.scalar_type(), self.device());
  nrn_tensor_desc dv = desc(v), o = desc(self), dm = desc(mask);
  NEURON_OP(nrn_op_fill(stream_for(self), &dv, value.toDouble()));
  NEURON_OP(nrn_op_where(stream_for(self), &o, &dm, &dv, &o));
  return self;
}

at::Tensor& masked_fill_tensor_(at::Tensor& self, const at::Tensor& mask,
                                const at::Tensor& value) {
  TORCH_CHECK(value.dim() == 0, "masked_fill_ only supports a 0-dimensional "
              "value tensor, but got tensor with ", value.dim(), " dimension(s).");
  return masked_fill_scalar_(self, mask, value.item());
}

at::Tensor& fill_scalar_(at::Tensor& self, const at::Scalar& value) {
  nrn_tensor_desc o = desc(self);
  NEURON_OP(nrn_op_fill(stream_for(self), &o, value.toDouble()));
  return self;
}

at::Tensor& fill_tensor_(at::Tensor& self, const at::Tensor& value) {
  TORCH_CHECK(value.dim() == 0, "fill_ only supports 0-dimension value tensor "
              "but got tensor with ", value.dim(), " dimensions.");
  return fill_scalar_(self, value.item());
}

at::Tensor& zero_(at::Tensor& self) {
  return fill_scalar_(self, 0);
}

// addcmul: self + value * t1 * t2 ; addcdiv: self + value * t1 / t2
at::Tensor& addc_into(nisa_binary op, const at::Tensor& self, const at::Tensor& t1,
                      const at::Tensor& t2, const at::Scalar& value, at::Tensor& out) {
  at::Tensor tmp = binary(op, t1, t2);
  nrn_tensor_desc o = desc(out), ds = desc(operand(self, out.device())), dt = desc(tmp);
  NEURON_OP(nrn_op_binary(stream_for(out), NISA_BIN_ADD, &o, &ds, &dt, value.toDouble()));
  return out;
}
at::Tensor& addcmul_(at::Tensor& self, const at::Tensor& t1, const at::Tensor& t2,
                     const at::Scalar& value) {
  return addc_into(NISA_BIN_MUL, self, t1, t2, value, self);
}
at::Tensor& addcdiv_(at::Tensor& self, const at::Tensor& t1, const at::Tensor& t2,
                     const at::Scalar& value) {
  return addc_into(NISA_BIN_DIV, self, t1, t2, value, self);
}
at::Tensor& addcmul_out(const at::Tensor& self, const at::Tensor& t1,
                        const at::Tensor& t2, const at::Scalar& value, at::Tensor& out) {
  resize_out(out, at::infer_size(self.sizes(), at::infer_size(t1.sizes(), t2.sizes())));
  return addc_into(NISA_BIN_MUL, self, t1, t2, value, out);
}
at::Tensor& addcdiv_out(const at::Tensor& self, const at::Tensor& t1,
                        const at::Tensor& t2, const at::Scalar& value, at::Tensor& out) {
  resize_out(out, at::infer_size(self.sizes(), at::infer_size(t1.sizes(), t2.sizes())));
  return addc_into(NISA_BIN_DIV, self, t1, t2, value, out);
}
// lerp_(self, end, weight) = self + weight * (end - self)
at::Tensor& lerp_scalar_(at::Tensor& self, const at::Tensor& end, const at::Scalar& w) {
  at::Tensor d = binary(NISA_BIN_SUB, end, self);
  return binary_inplace(NISA_BIN_ADD, self, d, w.toDouble());
}
at::Tensor& lerp_scalar_out(const at::Tensor& self, const at::Tensor& end,
                            const at::Scalar& w, at::Tensor& out) {
  at::Tensor d = binary(NISA_BIN_SUB, end, self);
  return binary_out(NISA_BIN_ADD, self, d, w.toDouble(), out);
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
  at::Tensor out = empty_neuron(a.sizes(), a.scalar_type(), a.device());
  return bitwise_not_into(a, out);
}
at::Tensor& bitwise_not_out(const at::Tensor& a, at::Tensor& out) {
  resize_out(out, a.sizes());
  return bitwise_not_into(a, out);
}
at::Tensor& bitwise_not_(at::Tensor& a) {
  return bitwise_not_into(a, a);
}
at::Tensor logical_not(const at::Tensor& a) {
  at::Tensor out = empty_neuron(a.sizes(), at::kBool, a.device());
  nrn_tensor_desc o = desc(out), x = desc(a);
  NEURON_OP(nrn_op_compare_scalar(stream_for(out), NISA_CMP_EQ, &o, &x, 0.0));
  return out;
}

at::Tensor& clamp_min_(at::Tensor& self, const at::Scalar& m) {
  return binary_inplace(NISA_BIN_MAX, self, wrapped(m));
}
at::Tensor clamp_min(const at::Tensor& self, const at::Scalar& m) {
  return binary(NISA_BIN_MAX, self, wrapped(m));
}

}  // namespace

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
  m.impl("relu", relu);
  m.impl("relu_", relu_);
  m.impl("gelu", gelu);
  m.impl("gelu_", gelu_);
  m.impl("gelu.out", gelu_out);
  m.impl("gelu_backward", gelu_backward);
  m.impl("silu_backward", silu_backward);
  m.impl("sigmoid_backward", sigmoid_backward);
  m.impl("tanh_backward", tanh_backward);
  m.impl("threshold_backward", threshold_backward);
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
  m.impl("where.self", where_self);
  m.impl("masked_fill_.Scalar", masked_fill_scalar_);
  m.impl("masked_fill_.Tensor", masked_fill_tensor_);
  m.impl("fill_.Scalar", fill_scalar_);
  m.impl("fill_.Tensor", fill_tensor_);
  m.impl("zero_", zero_);
  m.impl("addcmul_", addcmul_);
  m.impl("addcdiv_", addcdiv_);
  m.impl("addcmul.out", addcmul_out);
  m.impl("addcdiv.out", addcdiv_out);
  m.impl("lerp_.Scalar", lerp_scalar_);
  m.impl("lerp.Scalar_out", lerp_scalar_out);
  m.impl("clamp_min", clamp_min);
  m.impl("bitwise_not", bitwise_not);
  m.impl("bitwise_not.out", bitwise_not_out);
  m.impl("bitwise_not_", bitwise_not_);
  m.impl("logical_not", logical_not);
  m.impl("clamp_min_", clamp_min_);
}

}  // namespace torch_neuron

// SPDX-License-Identifier: MIT
// The pointwise operators of three tensors: addcmul, addcdiv and lerp (a
// scalar or a tensor weight), in place and out=, composed of the card's
// elementwise instructions.
#include "NeuronElementwise.h"

namespace torch_neuron {
namespace {

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

// lerp(a, b, w) = w < 0.5 ? a + w (b - a) : b - (b - a)(1 - w), the CPU's
// two-sided form (exact at both ends).
at::Tensor& lerp_into(const at::Tensor& a, const at::Tensor& b, const at::Tensor& w,
                      at::Tensor& out) {
  at::Tensor d = binary(NISA_BIN_SUB, b, a);
  at::Tensor lo = binary(NISA_BIN_ADD, a, binary(NISA_BIN_MUL, w, d));
  at::Tensor omw = binary(NISA_BIN_SUB, wrapped(1.0), w);
  at::Tensor hi = binary(NISA_BIN_SUB, b, binary(NISA_BIN_MUL, d, omw));
  at::Tensor mask = empty_neuron(w.sizes(), at::kBool, out.device());
  at::Tensor wn = operand(w, out.device());
  nrn_tensor_desc dm = desc(mask), dw = desc(wn);
  NEURON_OP(nrn_op_compare_scalar(stream_for(out), NISA_CMP_LT, &dm, &dw, 0.5));
  return where_into(mask, lo, hi, out);
}
at::Tensor& sp_lerp_out(const at::Tensor& a, const at::Tensor& b,
                            const at::Tensor& w, at::Tensor& out) {
  TORCH_CHECK(a.scalar_type() == b.scalar_type() && a.scalar_type() == w.scalar_type(),
              "expected dtype ", a.scalar_type(), " for `end` and `weight` but got ",
              b.scalar_type(), " and ", w.scalar_type());
  check_floating(a.scalar_type(), "lerp");
  resize_out(out, at::infer_size(at::infer_size(a.sizes(), b.sizes()), w.sizes()));
  return lerp_into(a, b, w, out);
}
at::Tensor& lerp_tensor_(at::Tensor& a, const at::Tensor& b, const at::Tensor& w) {
  TORCH_CHECK(at::infer_size(at::infer_size(a.sizes(), b.sizes()), w.sizes()) ==
              a.sizes(), "output with shape ", a.sizes(), " doesn't match the "
              "broadcast shape");
  return sp_lerp_out(a, b, w, a);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("addcmul_", addcmul_);
  m.impl("addcdiv_", addcdiv_);
  m.impl("addcmul.out", addcmul_out);
  m.impl("addcdiv.out", addcdiv_out);
  m.impl("lerp_.Scalar", lerp_scalar_);
  m.impl("lerp.Scalar_out", lerp_scalar_out);
  m.impl("lerp_.Tensor", lerp_tensor_);
  m.impl("lerp.Tensor_out", sp_lerp_out);
}

}  // namespace torch_neuron

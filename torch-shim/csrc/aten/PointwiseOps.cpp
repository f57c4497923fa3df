// SPDX-License-Identifier: MIT
// The pointwise operators of three tensors: addcmul, addcdiv and lerp (a
// scalar or a tensor weight), in place and out=, composed of the card's
// elementwise instructions.
#include <ATen/ops/addcdiv_meta.h>
#include <ATen/ops/addcmul_meta.h>
#include <ATen/ops/lerp_meta.h>

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
// The results and checks of addcmul, addcdiv and lerp are their structured
// metas' (TensorIterators: broadcasting, type promotion, casting).
template <class Meta, nisa_binary OP>
at::Tensor& addc_out(const at::Tensor& self, const at::Tensor& t1, const at::Tensor& t2,
                     const at::Scalar& value, at::Tensor& out) {
  EwResult r = ew_meta<Meta>(Form::Out, out, self, t1, t2, value);
  return compute_in(r, out, [&](at::Tensor& o) { addc_into(OP, self, t1, t2, value, o); });
}
template <class Meta, nisa_binary OP>
at::Tensor& addc_(at::Tensor& self, const at::Tensor& t1, const at::Tensor& t2,
                  const at::Scalar& value) {
  EwResult r = ew_meta<Meta>(Form::Inplace, self, self, t1, t2, value);
  return compute_in(r, self, [&](at::Tensor& o) { addc_into(OP, self, t1, t2, value, o); });
}
// lerp_(self, end, weight) = self + weight * (end - self)
at::Tensor& lerp_scalar_into(const at::Tensor& self, const at::Tensor& end,
                             const at::Scalar& w, at::Tensor& out) {
  at::Tensor d = binary(NISA_BIN_SUB, end, self);
  return binary_into(NISA_BIN_ADD, self, d, w.toDouble(), out);
}
at::Tensor& lerp_scalar_(at::Tensor& self, const at::Tensor& end, const at::Scalar& w) {
  ew_meta<at::meta::structured_lerp_Scalar>(Form::Inplace, self, self, end, w);
  return lerp_scalar_into(self, end, w, self);
}
at::Tensor& lerp_scalar_out(const at::Tensor& self, const at::Tensor& end,
                            const at::Scalar& w, at::Tensor& out) {
  EwResult r = ew_meta<at::meta::structured_lerp_Scalar>(Form::Out, out, self, end, w);
  return compute_in(r, out, [&](at::Tensor& o) { lerp_scalar_into(self, end, w, o); });
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
  ew_meta<at::meta::structured_lerp_Tensor>(Form::Out, out, a, b, w);
  check_floating(a.scalar_type(), "lerp");
  return lerp_into(a, b, w, out);
}
at::Tensor& lerp_tensor_(at::Tensor& a, const at::Tensor& b, const at::Tensor& w) {
  ew_meta<at::meta::structured_lerp_Tensor>(Form::Inplace, a, a, b, w);
  check_floating(a.scalar_type(), "lerp");
  return lerp_into(a, b, w, a);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  using Addcmul = at::meta::structured_addcmul;
  using Addcdiv = at::meta::structured_addcdiv;
  m.impl("addcmul_", addc_<Addcmul, NISA_BIN_MUL>);
  m.impl("addcdiv_", addc_<Addcdiv, NISA_BIN_DIV>);
  m.impl("addcmul.out", addc_out<Addcmul, NISA_BIN_MUL>);
  m.impl("addcdiv.out", addc_out<Addcdiv, NISA_BIN_DIV>);
  m.impl("lerp_.Scalar", lerp_scalar_);
  m.impl("lerp.Scalar_out", lerp_scalar_out);
  m.impl("lerp_.Tensor", lerp_tensor_);
  m.impl("lerp.Tensor_out", sp_lerp_out);
}

}  // namespace torch_neuron

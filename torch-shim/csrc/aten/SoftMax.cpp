// SPDX-License-Identifier: MIT
// softmax and log_softmax (one SOFTMAX instruction of the card each) and
// their backward, composed of ATen operators that dispatch to the neuron
// kernels.
#include <ATen/ops/_log_softmax_meta.h>
#include <ATen/ops/_softmax_meta.h>

#include "NeuronMeta.h"

namespace torch_neuron {
namespace {

// The results and argument checks are the structured metas' (half_to_float:
// a float32 result of a float16 or bfloat16 input, computed from the input
// directly). The card writes a contiguous result; an out= of other strides,
// or sharing memory with self, receives a copy.
void softmax_into(nisa_softmax v, const at::Tensor& self, int64_t dim,
                  const at::Tensor& out) {
  if (self.numel() == 0)
    return;
  if (!out.is_contiguous() || may_share_elements(out, self)) {
    at::Tensor r = at::empty_like(out, at::MemoryFormat::Contiguous);
    softmax_into(v, self, dim, r);
    out.copy_(r);
    return;
  }
  nrn_tensor_desc o = desc(out), x = desc(self);
  NEURON_OP(nrn_op_softmax(stream_for(self), v, &o, &x,
                           static_cast<int>(at::maybe_wrap_dim(dim, self.dim()))));
}

template <class Meta, nisa_softmax V>
at::Tensor softmax_fn(const at::Tensor& self, int64_t dim, bool half_to_float) {
  at::Tensor out = meta_results<Meta>(Form::Functional, {}, self, dim, half_to_float)[0];
  softmax_into(V, self, dim, out);
  return out;
}
template <class Meta, nisa_softmax V>
at::Tensor& softmax_out(const at::Tensor& self, int64_t dim, bool half_to_float,
                        at::Tensor& out) {
  meta_results<Meta>(Form::Out, {out}, self, dim, half_to_float);
  softmax_into(V, self, dim, out);
  return out;
}

// d softmax: y * (g - sum(g * y, dim))
at::Tensor softmax_backward(const at::Tensor& grad, const at::Tensor& y, int64_t dim,
                            at::ScalarType input_dtype) {
  at::Tensor gy = grad * y;
  at::Tensor s = gy.sum(dim, true);
  return (grad - s) * y;
}

// d log_softmax: g - exp(y) * sum(g, dim)
at::Tensor log_softmax_backward(const at::Tensor& grad, const at::Tensor& y,
                                int64_t dim, at::ScalarType input_dtype) {
  return grad - y.exp() * grad.sum(dim, true);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  using Softmax = at::meta::structured__softmax;
  using LogSoftmax = at::meta::structured__log_softmax;
  m.impl("_softmax", softmax_fn<Softmax, NISA_SM_SOFTMAX>);
  m.impl("_softmax.out", softmax_out<Softmax, NISA_SM_SOFTMAX>);
  m.impl("_log_softmax", softmax_fn<LogSoftmax, NISA_SM_LOG_SOFTMAX>);
  m.impl("_log_softmax.out", softmax_out<LogSoftmax, NISA_SM_LOG_SOFTMAX>);
  m.impl("_softmax_backward_data", softmax_backward);
  m.impl("_log_softmax_backward_data", log_softmax_backward);
}

}  // namespace torch_neuron

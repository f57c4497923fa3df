// SPDX-License-Identifier: MIT
// softmax and log_softmax (one SOFTMAX instruction of the card each) and
// their backward, composed of ATen operators that dispatch to the neuron
// kernels.
#include "NeuronOps.h"

namespace torch_neuron {
namespace {

at::Tensor softmax_impl(nisa_softmax v, const at::Tensor& self, int64_t dim,
                        bool half_to_float) {
  at::Tensor out = at::empty_like(self, at::MemoryFormat::Contiguous);
  if (self.numel() == 0)
    return out;
  nrn_tensor_desc o = desc(out), x = desc(self);
  NEURON_OP(nrn_op_softmax(stream_for(self), v, &o, &x,
                           static_cast<int>(at::maybe_wrap_dim(dim, self.dim()))));
  return out;
}

at::Tensor softmax(const at::Tensor& self, int64_t dim, bool half_to_float) {
  return softmax_impl(NISA_SM_SOFTMAX, self, dim, half_to_float);
}
at::Tensor& softmax_out(const at::Tensor& self, int64_t dim, bool half_to_float,
                        at::Tensor& out) {
  at::Tensor r = torch_neuron::softmax(self, dim, half_to_float);
  return into(out, r);
}
at::Tensor log_softmax(const at::Tensor& self, int64_t dim, bool half_to_float) {
  return softmax_impl(NISA_SM_LOG_SOFTMAX, self, dim, half_to_float);
}
at::Tensor& log_softmax_out(const at::Tensor& self, int64_t dim, bool half_to_float,
                            at::Tensor& out) {
  at::Tensor r = torch_neuron::log_softmax(self, dim, half_to_float);
  return into(out, r);
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
  m.impl("_softmax", softmax);
  m.impl("_softmax.out", softmax_out);
  m.impl("_log_softmax", log_softmax);
  m.impl("_log_softmax.out", log_softmax_out);
  m.impl("_softmax_backward_data", softmax_backward);
  m.impl("_log_softmax_backward_data", log_softmax_backward);
}

}  // namespace torch_neuron

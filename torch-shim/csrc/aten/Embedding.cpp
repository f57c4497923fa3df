// SPDX-License-Identifier: MIT
// nn.Embedding's operators besides index_select: embedding_dense_backward
// (the gradient's rows index_add-ed into their weight rows) and
// embedding_renorm_ (max_norm). (embedding_bag: EmbeddingBag.cpp.)
#include "NeuronScatter.h"

namespace torch_neuron {
namespace {

// nn.Embedding's max_norm: each row the indices name (once each) whose
// norm exceeds max_norm is scaled by max_norm / (norm + 1e-7), in place.
at::Tensor& embedding_renorm_(at::Tensor& self, const at::Tensor& indices, double max_norm,
                              double norm_type) {
  check_index(indices);
  check_device(self, indices);
  TORCH_CHECK(self.dim() == 2, "embedding_renorm_(): expected 2-D weight, got ", self.dim(),
              "-D");
  if (indices.numel() == 0)
    return self;
  at::Tensor rows = std::get<0>(at::_unique2(indices.reshape({-1}), true, false, false));
  at::Tensor w = self.index_select(0, rows);
  at::Tensor norm = at::linalg_vector_norm(w, norm_type, {1}, true);
  at::Tensor scale = at::where(norm > max_norm, (norm + 1e-7).reciprocal_().mul_(max_norm),
                               at::ones({}, norm.options()));
  return self.index_copy_(0, rows, w * scale);
}

// grad_weight[num_weights, D] = sum of grad rows per index; padding_idx gets 0.
at::Tensor embedding_dense_backward(const at::Tensor& grad, const at::Tensor& indices,
                                    c10::SymInt num_weights, c10::SymInt padding_idx,
                                    bool scale_grad_by_freq) {
  TORCH_CHECK(!scale_grad_by_freq, "neuron: embedding with scale_grad_by_freq=True "
              "is not supported");
  int64_t n = num_weights.expect_int(), pad = padding_idx.expect_int();
  int64_t d = grad.size(-1);
  at::Tensor gw = at::zeros({n, d}, grad.options());
  at::Tensor g = grad.reshape({-1, d}), idx = indices.reshape({-1});
  index_add_into(gw, 0, idx, g, 1);
  if (pad >= 0 && pad < n)
    gw.select(0, pad).zero_();
  return gw;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("embedding_dense_backward", embedding_dense_backward);
  m.impl("embedding_renorm_", embedding_renorm_);
}

}  // namespace torch_neuron

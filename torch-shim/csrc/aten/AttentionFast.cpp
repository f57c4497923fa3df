// SPDX-License-Identifier: MIT
// The inference fast path of nn.MultiheadAttention and
// nn.TransformerEncoderLayer (eval mode, no gradients):
// torch._native_multi_head_attention and torch._transformer_encoder_layer_fwd.
// PyTorch's implementations of those two are device-generic -- they call
// ATen operators -- so the card runs them as they are. What they reach
// through the dispatcher that only the CPU and CUDA had is here:
// _transform_bias_rescale_qkv (bias add, head split and query scaling),
// _masked_softmax (the CPU's masking and mask types), and _addmm_activation
// (the feed-forward's linear + ReLU or GELU).
#include <ATen/ops/_native_multi_head_attention_native.h>
#include <ATen/ops/_transformer_encoder_layer_fwd_native.h>

#include <cmath>
#include <limits>

#include "NeuronOps.h"

namespace torch_neuron {
namespace {

// qkv [B, T, 3D] + bias -> q, k, v [B, H, T, D / H] (views of one buffer),
// q scaled by 1 / sqrt(D / H) rounded to the input's type, as the CPU.
std::tuple<at::Tensor, at::Tensor, at::Tensor> transform_bias_rescale_qkv(
    const at::Tensor& qkv, const at::Tensor& qkv_bias, int64_t num_head) {
  TORCH_CHECK(qkv.dim() == 3 && qkv_bias.dim() == 1 && qkv_bias.size(0) == qkv.size(2),
              "neuron: _transform_bias_rescale_qkv: expected qkv [B, T, 3D] and a bias of "
              "3D, got ", qkv.sizes(), " and ", qkv_bias.sizes());
  int64_t B = qkv.size(0), T = qkv.size(1), D = qkv.size(2) / 3;
  TORCH_CHECK(num_head > 0 && D % num_head == 0, "neuron: _transform_bias_rescale_qkv: ",
              D, " does not divide into ", num_head, " heads");
  TORCH_CHECK(qkv.size(2) % 3 == 0, "neuron: _transform_bias_rescale_qkv: the last dim ",
              qkv.size(2), " is not 3 D");
  int64_t dh = D / num_head;
  at::Tensor all = at::add(qkv, qkv_bias)
                       .view({B, T, 3, num_head, dh})
                       .permute({2, 0, 3, 1, 4})
                       .contiguous();
  // 1 / sqrt(dh) in the CPU's accumulation type: float, double for float64
  double scale = acc_dtype(qkv.scalar_type()) == at::kDouble
                     ? 1.0 / std::sqrt(static_cast<double>(dh))
                     : static_cast<float>(1.0 / std::sqrt(static_cast<float>(dh)));
  all.select(0, 0).mul_(scale);
  auto parts = all.view({3 * B, num_head, T, dh}).split(B, 0);
  return {parts[0], parts[1], parts[2]};
}

// Softmax along @dim over the elements @mask leaves (true masks out), as
// the CPU: masked elements 0, a row with nothing left NaN. mask_type 0 is
// an [L, L] mask for every batch and head, 1 a [B, L] padding mask, 2 (and
// any mask not 2-d on a 4-d input) the input's own shape.
at::Tensor masked_softmax(const at::Tensor& self, const at::Tensor& mask,
                          std::optional<int64_t> dim_, std::optional<int64_t> mask_type) {
  check_device(self, mask);
  TORCH_CHECK(mask.scalar_type() == at::kBool, "Mask should be a boolean tensor");
  TORCH_CHECK(card_float(self.scalar_type()), "neuron: _masked_softmax: expected a float "
              "input, got ", self.scalar_type());
  int64_t type = mask_type.value_or(-1);
  if (mask.dim() != 2 || self.dim() != 4)
    type = 2;
  TORCH_CHECK(type >= 0 && type <= 2, "Mask Type should be 0 (src_mask) or 1 "
              "(src_key_padding_mask), or 2 (default_mask)");
  at::Tensor m;
  if (type == 2) {
    TORCH_CHECK(self.sizes() == mask.sizes(),
                "For mask_type == 2 mask shape should match input shape");
    m = mask;
  } else if (type == 1) {
    TORCH_CHECK(self.size(0) == mask.size(0) && self.size(2) == mask.size(1),
                "For mask_type == 1 mask shape should be (B, L)");
    m = mask.view({mask.size(0), 1, 1, mask.size(1)}).expand(self.sizes());
  } else {
    TORCH_CHECK(self.size(2) == mask.size(0) && self.size(2) == mask.size(1),
                "For mask_type == 0 mask shape should be (L, L)");
    m = mask.view({1, 1, mask.size(0), mask.size(1)}).expand(self.sizes());
  }
  if (self.numel() == 0)
    return at::empty_like(self);
  int64_t dim = at::maybe_wrap_dim(dim_.value_or(self.dim() - 1), self.dim());
  at::Tensor ninf = at::full({}, -std::numeric_limits<double>::infinity(), self.options());
  at::Tensor zero = at::zeros({}, self.options());
  at::Tensor top = at::where(m, ninf, self).amax(dim, true);
  at::Tensor z = at::where(m, zero, at::exp(self - top));
  return z.div(z.sum(dim, true));
}

at::Tensor addmm_activation(const at::Tensor& self, const at::Tensor& mat1,
                            const at::Tensor& mat2, const at::Scalar& beta,
                            const at::Scalar& alpha, bool use_gelu) {
  at::Tensor r = at::addmm(self, mat1, mat2, beta, alpha);
  return use_gelu ? at::gelu_(r) : at::relu_(r);
}
at::Tensor& addmm_activation_out(const at::Tensor& self, const at::Tensor& mat1,
                                 const at::Tensor& mat2, const at::Scalar& beta,
                                 const at::Scalar& alpha, bool use_gelu, at::Tensor& out) {
  at::Tensor r = addmm_activation(self, mat1, mat2, beta, alpha, use_gelu);
  return into(out, r);
}

}  // namespace
}  // namespace torch_neuron

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_transform_bias_rescale_qkv", torch_neuron::transform_bias_rescale_qkv);
  m.impl("_masked_softmax", torch_neuron::masked_softmax);
  m.impl("_addmm_activation", torch_neuron::addmm_activation);
  m.impl("_addmm_activation.out", torch_neuron::addmm_activation_out);
  // PyTorch's own, which are device-generic (see above).
  m.impl("_native_multi_head_attention", at::native::native_multi_head_attention_cpu);
  m.impl("_transformer_encoder_layer_fwd", at::native::transformer_encoder_layer_forward);
}

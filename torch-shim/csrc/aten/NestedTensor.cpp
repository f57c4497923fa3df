// SPDX-License-Identifier: MIT
// nn.TransformerEncoder's inference path with a padding mask, on the card.
// In eval mode it packs the batch into a nested tensor (each sequence its
// own length: torch._nested_tensor_from_mask), runs each layer on it
// (torch._transformer_encoder_layer_fwd) and pads the result back
// (to_padded_tensor). A nested tensor here is PyTorch's own NestedTensorImpl
// over a buffer on the card; the layer pads it, runs the dense fused layer
// with the lengths as a key padding mask -- the same attention, each token
// seeing only its own sequence -- and keeps each sequence's rows. Any other
// operator on a nested tensor runs on the CPU, loudly (Fallback.cpp).
#include <ATen/NestedTensorImpl.h>
#include <ATen/native/nested/NestedTensorUtils.h>
#include <ATen/ops/_transformer_encoder_layer_fwd_native.h>

#include "NeuronOps.h"

namespace torch_neuron {
namespace {

// The CPU's checks of a padded batch @t [N, L, D] and its mask [N, L].
void check_mask(const at::Tensor& t, const at::Tensor& mask) {
  TORCH_CHECK(mask.scalar_type() == at::kBool, "Expected mask to be of type Bool, but got ",
              mask.scalar_type(), " instead.");
  TORCH_CHECK(mask.dim() == 2, "Padding mask should be 2D");
  TORCH_CHECK(t.dim() == 3, "Input should be a 3D tensor, N * L * D");
  TORCH_CHECK(t.size(0) == mask.size(0) && t.size(1) == mask.size(1),
              "Mask size should match input size");
  check_device(t, mask);
}

// Each row's count of true, read back.
std::vector<int64_t> lengths_of(const at::Tensor& mask) {
  at::Tensor n = mask.sum(1, false, at::kLong).cpu();
  return {n.data_ptr<int64_t>(), n.data_ptr<int64_t>() + n.numel()};
}

// Whether every row of @mask is its true elements, then its false ones.
bool left_aligned(const at::Tensor& mask, const std::vector<int64_t>& len) {
  at::Tensor n = at::tensor(len, at::kLong).to(mask.device());
  at::Tensor pos = at::arange(mask.size(1), mask.options().dtype(at::kLong));
  return at::equal(mask, pos.unsqueeze(0).lt(n.unsqueeze(1)));
}

// The first len[i] rows of each padded[i] ([N, L, D]) as a nested tensor
// [len[i], D] on the card.
at::Tensor nested_from_rows(const at::Tensor& padded, const std::vector<int64_t>& len) {
  int64_t N = padded.size(0), L = padded.size(1), D = padded.size(2);
  std::vector<int64_t> rows, sizes;
  for (int64_t i = 0; i < N; i++) {
    for (int64_t j = 0; j < len[i]; j++)
      rows.push_back(i * L + j);
    sizes.insert(sizes.end(), {len[i], D});
  }
  at::Tensor idx = at::tensor(rows, at::kLong).to(padded.device());
  at::Tensor buffer = padded.reshape({N * L, D}).index_select(0, idx).reshape({-1});
  return at::native::wrap_buffer(buffer, at::tensor(sizes, at::kLong).view({N, 2}));
}

bool nested_tensor_from_mask_left_aligned(const at::Tensor& t, const at::Tensor& mask) {
  check_mask(t, mask);
  return left_aligned(mask, lengths_of(mask));
}

at::Tensor nested_tensor_from_mask(const at::Tensor& t, const at::Tensor& mask,
                                   bool mask_check) {
  check_mask(t, mask);
  std::vector<int64_t> len = lengths_of(mask);
  if (mask_check)
    TORCH_CHECK(left_aligned(mask, len), "Mask must be left aligned without gaps");
  return nested_from_rows(t, len);
}

// The lengths of a nested tensor whose elements are all [len, D].
std::vector<int64_t> rows_of(const at::Tensor& nt, int64_t D, const char* op) {
  const at::Tensor& sizes = at::native::get_nested_tensor_impl(nt)->get_nested_sizes();
  TORCH_CHECK(sizes.dim() == 2 && sizes.size(1) == 2, "neuron: ", op, ": expected a nested "
              "tensor of [length, ", D, "] sequences, got one of ", sizes.size(1) + 1,
              " dims");
  auto sz = sizes.accessor<int64_t, 2>();
  std::vector<int64_t> len;
  for (int64_t i = 0; i < sizes.size(0); i++) {
    TORCH_CHECK(sz[i][1] == D, "neuron: ", op, ": sequence ", i, " has ", sz[i][1],
                " features, expected ", D);
    len.push_back(sz[i][0]);
  }
  return len;
}

// A nested tensor padded with @padding to the largest size in each dim (or
// @output_size): one copy per element, any strides.
at::Tensor to_padded_tensor(const at::Tensor& self, double padding,
                            at::OptionalIntArrayRef output_size) {
  auto* impl = at::native::get_nested_tensor_impl(self);
  const at::Tensor& sizes = impl->get_nested_sizes();
  int64_t n = sizes.size(0), k = sizes.dim() == 2 ? sizes.size(1) : 0;
  at::Tensor storage = impl->get_unsafe_storage_as_tensor();
  if (n == 0 || k == 0) {
    TORCH_CHECK(n == 0, "neuron: to_padded_tensor: nested scalars are not supported");
    return at::full(output_size ? *output_size : at::IntArrayRef{0}, padding,
                    storage.options());
  }
  std::vector<int64_t> shape(k + 1, 0);
  shape[0] = n;
  auto sz = sizes.accessor<int64_t, 2>();
  auto st = impl->get_nested_strides().accessor<int64_t, 2>();
  auto off = impl->get_storage_offsets().accessor<int64_t, 1>();
  for (int64_t i = 0; i < n; i++)
    for (int64_t d = 0; d < k; d++)
      shape[d + 1] = std::max(shape[d + 1], sz[i][d]);
  if (output_size) {
    TORCH_CHECK(static_cast<int64_t>(output_size->size()) == k + 1, "Length of output_size "
                "does not match NestedTensor dims. Broadcasting is not supported.");
    for (int64_t d = 0; d <= k; d++) {
      TORCH_CHECK((*output_size)[d] >= shape[d], "Value in output_size is less than "
                  "NestedTensor padded size. Truncation is not supported.");
      shape[d] = (*output_size)[d];
    }
  }
  at::Tensor out = at::full(shape, padding, storage.options());
  for (int64_t i = 0; i < n; i++) {
    std::vector<int64_t> esz(k), est(k);
    at::Tensor dst = out.select(0, i);
    for (int64_t d = 0; d < k; d++) {
      esz[d] = sz[i][d];
      est[d] = st[i][d];
      dst = dst.narrow(d, 0, esz[d]);
    }
    if (dst.numel())
      dst.copy_(storage.as_strided(esz, est, off[i]));
  }
  return out;
}

at::Tensor transformer_encoder_layer_fwd_nested(
    const at::Tensor& src, int64_t embed_dim, int64_t num_heads, const at::Tensor& qkv_weight,
    const at::Tensor& qkv_bias, const at::Tensor& proj_weight, const at::Tensor& proj_bias,
    bool use_gelu, bool norm_first, double eps, const at::Tensor& norm_weight_1,
    const at::Tensor& norm_bias_1, const at::Tensor& norm_weight_2,
    const at::Tensor& norm_bias_2, const at::Tensor& ffn_weight_1,
    const at::Tensor& ffn_bias_1, const at::Tensor& ffn_weight_2,
    const at::Tensor& ffn_bias_2, const std::optional<at::Tensor>& mask,
    std::optional<int64_t> mask_type) {
  TORCH_CHECK(!mask || !mask->defined(), "NestedTensor with mask is not supported yet");
  std::vector<int64_t> len = rows_of(src, embed_dim, "_transformer_encoder_layer_fwd");
  at::Tensor padded = to_padded_tensor(src, 0.0, std::nullopt);
  if (padded.numel() == 0)
    return nested_from_rows(padded, len);
  at::Tensor n = at::tensor(len, at::kLong).to(padded.device());
  at::Tensor pos = at::arange(padded.size(1), n.options());
  at::Tensor pad_mask = pos.unsqueeze(0).ge(n.unsqueeze(1));  // true: padding
  at::Tensor out = at::native::transformer_encoder_layer_forward(
      padded, embed_dim, num_heads, qkv_weight, qkv_bias, proj_weight, proj_bias, use_gelu,
      norm_first, eps, norm_weight_1, norm_bias_1, norm_weight_2, norm_bias_2, ffn_weight_1,
      ffn_bias_1, ffn_weight_2, ffn_bias_2, pad_mask, 1);
  return nested_from_rows(out, len);
}

}  // namespace
}  // namespace torch_neuron

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_nested_tensor_from_mask", torch_neuron::nested_tensor_from_mask);
  m.impl("_nested_tensor_from_mask_left_aligned",
         torch_neuron::nested_tensor_from_mask_left_aligned);
}

TORCH_LIBRARY_IMPL(aten, NestedTensorPrivateUse1, m) {
  m.impl("to_padded_tensor", torch_neuron::to_padded_tensor);
  m.impl("_transformer_encoder_layer_fwd", torch_neuron::transformer_encoder_layer_fwd_nested);
}

// SPDX-License-Identifier: MIT
// max_unpool2d/3d on the card: a scatter of each plane's values to the
// positions max_pool returned, as the CPU does (the last write to a position
// wins).
// max_unpool's backward is PyTorch's gather, already on the card.
#include "NeuronScatter.h"

namespace torch_neuron {
namespace {

// out[n, c, :] (the output planes flattened) gets self's plane values at
// the positions @indices names; everything else is 0.
at::Tensor& unpool_into(const at::Tensor& self, const at::Tensor& indices,
                        at::IntArrayRef out_spatial, at::Tensor& out, const char* op) {
  int64_t sp = static_cast<int64_t>(out_spatial.size());
  TORCH_CHECK(indices.scalar_type() == at::kLong, op, "(): elements in indices should be "
              "type int64 but got: ", indices.scalar_type());
  TORCH_CHECK(self.sizes() == indices.sizes(), op, "(): Shape of indices (",
              indices.sizes(), ") should match shape of input (", self.sizes(), ")");
  TORCH_CHECK(self.dim() == sp + 1 || self.dim() == sp + 2, op, "(): Expected ", sp + 1,
              "D or ", sp + 2, "D tensor, but got ", self.sizes());
  check_device(self, indices);
  for (int64_t s : out_spatial)
    TORCH_CHECK(s > 0, op, "(): output_size must be positive, got ", out_spatial);
  std::vector<int64_t> shape(self.sizes().begin(), self.sizes().end() - sp);
  int64_t planes = 1, plane_out = 1, plane_in = 1;
  for (int64_t s : shape) planes *= s;
  for (int64_t s : out_spatial) plane_out *= s;
  for (int64_t d = self.dim() - sp; d < self.dim(); d++) plane_in *= self.size(d);
  shape.insert(shape.end(), out_spatial.begin(), out_spatial.end());
  resize_out(out, shape);
  out.zero_();
  if (self.numel() == 0)
    return out;
  at::Tensor flat = out.is_contiguous() ? out.view({planes, plane_out})
                                        : at::zeros({planes, plane_out}, out.options());
  // an index outside the output plane is refused by the card (the CPU
  // raises "Found an invalid max index")
  scatter_elements(flat, 1, indices.reshape({planes, plane_in}),
                   self.reshape({planes, plane_in}), NISA_SCAT_ASSIGN, op);
  if (!out.is_contiguous())
    out.copy_(flat.view(shape));
  return out;
}

at::Tensor& max_unpool2d_out(const at::Tensor& self, const at::Tensor& indices,
                             c10::SymIntArrayRef output_size, at::Tensor& out) {
  TORCH_CHECK(output_size.size() == 2, "There should be exactly two elements (height, "
              "width) in output_size, but got ", output_size.size(), " elements.");
  std::vector<int64_t> os{output_size[0].expect_int(), output_size[1].expect_int()};
  return unpool_into(self, indices, os, out, "max_unpooling2d_forward_out");
}

at::Tensor max_unpool2d(const at::Tensor& self, const at::Tensor& indices,
                        c10::SymIntArrayRef output_size) {
  at::Tensor out = empty_neuron({0}, self.scalar_type(), self.device());
  return max_unpool2d_out(self, indices, output_size, out);
}

at::Tensor& max_unpool3d_out(const at::Tensor& self, const at::Tensor& indices,
                             c10::SymIntArrayRef output_size, at::IntArrayRef stride,
                             at::IntArrayRef padding, at::Tensor& out) {
  TORCH_CHECK(output_size.size() == 3, "There should be exactly three elements (depth, "
              "height, width) in output_size, but got: ", output_size.size(), " elements.");
  TORCH_CHECK(stride.size() == 3 && padding.size() == 3, "max_unpool3d(): stride and "
              "padding need three elements");
  for (int64_t s : stride)
    TORCH_CHECK(s > 0, "strides should be greater than zero, but got stride: ", stride);
  std::vector<int64_t> os{output_size[0].expect_int(), output_size[1].expect_int(),
                          output_size[2].expect_int()};
  return unpool_into(self, indices, os, out, "max_unpooling3d_forward_out");
}

at::Tensor max_unpool3d(const at::Tensor& self, const at::Tensor& indices,
                        c10::SymIntArrayRef output_size, at::IntArrayRef stride,
                        at::IntArrayRef padding) {
  at::Tensor out = empty_neuron({0}, self.scalar_type(), self.device());
  return max_unpool3d_out(self, indices, output_size, stride, padding, out);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("max_unpool2d", max_unpool2d);
  m.impl("max_unpool2d.out", max_unpool2d_out);
  m.impl("max_unpool3d", max_unpool3d);
  m.impl("max_unpool3d.out", max_unpool3d_out);
}

}  // namespace torch_neuron

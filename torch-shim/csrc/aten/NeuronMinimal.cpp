// SPDX-License-Identifier: MIT
// The operators every PrivateUse1 backend must provide: tensor creation,
// views, resize and copies between the CPU and the card. Everything else is
// either lowered to libneuron (NeuronOps*.cpp) or falls back to the CPU
// (NeuronFallback.cpp).
#include <ATen/EmptyTensor.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/_reshape_alias_native.h>
#include <ATen/ops/as_strided_native.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/view_native.h>
#include <torch/library.h>

#include "../NeuronHelpers.h"

namespace torch_neuron {
namespace {

constexpr auto kKey = c10::DispatchKey::PrivateUse1;

nrn_buffer* tensor_buffer(const at::Tensor& t) {
  return buffer_of(t.storage().data_ptr().get_context());
}

size_t tensor_byte_offset(const at::Tensor& t) {
  return static_cast<size_t>(t.storage_offset()) * t.itemsize();
}

// The elements a strided view reaches, as [first, last] storage offsets.
std::pair<int64_t, int64_t> view_span(const at::Tensor& t) {
  int64_t lo = t.storage_offset(), hi = lo;
  for (int64_t d = 0; d < t.dim(); d++) {
    int64_t extent = (t.size(d) - 1) * t.stride(d);
    (extent >= 0 ? hi : lo) += extent;
  }
  return {lo, hi};
}

// A CPU tensor with the contents of the neuron view @t (same strides).
at::Tensor read_to_cpu(const at::Tensor& t) {
  auto [lo, hi] = view_span(t);
  at::Tensor host = at::empty({hi - lo + 1}, t.options().device(at::kCPU));
  NEURON_CHECK(nrn_copy_d2h(host.data_ptr(), tensor_buffer(t),
                            static_cast<size_t>(lo) * t.itemsize(),
                            host.nbytes()));
  return host.as_strided(t.sizes(), t.strides(), t.storage_offset() - lo);
}

// Write the CPU tensor @src (same shape and dtype) into the neuron view @dst.
void write_from_cpu(const at::Tensor& dst, const at::Tensor& src) {
  if (dst.is_contiguous()) {
    at::Tensor c = src.contiguous();
    NEURON_CHECK(nrn_copy_h2d(tensor_buffer(dst), tensor_byte_offset(dst),
                              c.data_ptr(), c.nbytes()));
    return;
  }
  // Read the span around the view, update the view in it, write it back.
  auto [lo, hi] = view_span(dst);
  at::Tensor span = read_to_cpu(dst);
  span.copy_(src);
  at::Tensor base = at::empty({0}, span.options()).set_(
      span.storage(), 0, {hi - lo + 1}, {1});
  NEURON_CHECK(nrn_copy_h2d(tensor_buffer(dst),
                            static_cast<size_t>(lo) * dst.itemsize(),
                            base.data_ptr(), base.nbytes()));
}

at::Tensor neuron_empty(c10::IntArrayRef size,
                        std::optional<at::ScalarType> dtype,
                        std::optional<at::Layout> layout,
                        std::optional<at::Device> device,
                        std::optional<bool> pin_memory,
                        std::optional<at::MemoryFormat> memory_format) {
  const c10::DeviceGuard guard(device.value_or(
      c10::Device(c10::DeviceType::PrivateUse1, current_device())));
  return at::detail::empty_generic(size, c10::GetAllocator(c10::DeviceType::PrivateUse1),
                                   c10::DispatchKeySet(kKey),
                                   c10::dtype_or_default(dtype), memory_format);
}

at::Tensor neuron_empty_strided(c10::IntArrayRef size, c10::IntArrayRef stride,
                                std::optional<at::ScalarType> dtype,
                                std::optional<at::Layout> layout,
                                std::optional<at::Device> device,
                                std::optional<bool> pin_memory) {
  const c10::DeviceGuard guard(device.value_or(
      c10::Device(c10::DeviceType::PrivateUse1, current_device())));
  return at::detail::empty_strided_generic(size, stride,
                                           c10::GetAllocator(c10::DeviceType::PrivateUse1),
                                           c10::DispatchKeySet(kKey),
                                           c10::dtype_or_default(dtype));
}

at::Tensor& neuron_copy_from_impl(const at::Tensor& self, at::Tensor& dst) {
  if (self.numel() == 0)
    return dst;
  if (dst.is_cpu()) {
    dst.copy_(read_to_cpu(self));
  } else if (self.is_cpu()) {
    if (self.scalar_type() == dst.scalar_type() && self.sizes() == dst.sizes()) {
      write_from_cpu(dst, self);
    } else {
      at::Tensor tmp = at::empty(dst.sizes(), dst.options().device(at::kCPU));
      tmp.copy_(self);
      write_from_cpu(dst, tmp);
    }
  } else if (self.is_contiguous() && dst.is_contiguous() &&
             self.scalar_type() == dst.scalar_type() &&
             self.sizes() == dst.sizes()) {
    NEURON_CHECK(nrn_copy_buffer(tensor_buffer(dst), tensor_byte_offset(dst),
                                 tensor_buffer(self), tensor_byte_offset(self),
                                 self.nbytes()));
  } else {
    at::Tensor tmp = read_to_cpu(self);
    neuron_copy_from_impl(tmp, dst);
  }
  return dst;
}

at::Tensor neuron_copy_from(const at::Tensor& self, const at::Tensor& dst,
                            bool non_blocking) {
  at::Tensor out = dst;
  neuron_copy_from_impl(self, out);
  return out;
}

const at::Tensor& neuron_resize_(const at::Tensor& self, c10::IntArrayRef size,
                                 std::optional<at::MemoryFormat> format) {
  int64_t numel = c10::multiply_integers(size);
  size_t need = static_cast<size_t>(numel + self.storage_offset()) * self.itemsize();
  if (need > self.storage().nbytes()) {
    at::Tensor fresh = neuron_empty({numel + self.storage_offset()}, self.scalar_type(),
                                    std::nullopt, self.device(), std::nullopt,
                                    std::nullopt);
    if (self.storage().nbytes())
      NEURON_CHECK(nrn_copy_buffer(tensor_buffer(fresh), 0, tensor_buffer(self), 0,
                                   self.storage().nbytes()));
    self.unsafeGetTensorImpl()->set_storage_keep_dtype(fresh.storage());
  }
  self.unsafeGetTensorImpl()->set_sizes_contiguous(size);
  if (format && *format != at::MemoryFormat::Preserve)
    self.unsafeGetTensorImpl()->empty_tensor_restride(*format);
  return self;
}

at::Tensor neuron_copy_from_and_resize(const at::Tensor& self,
                                       const at::Tensor& dst) {
  neuron_resize_(dst, self.sizes(), std::nullopt);
  return neuron_copy_from(self, dst, false);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("empty.memory_format", neuron_empty);
  m.impl("empty_strided", neuron_empty_strided);
  m.impl("as_strided", at::native::as_strided_tensorimpl);
  m.impl("view", at::native::view);
  m.impl("_reshape_alias", at::native::_reshape_alias);
  m.impl("resize_", neuron_resize_);
  m.impl("_copy_from", neuron_copy_from);
  m.impl("_copy_from_and_resize", neuron_copy_from_and_resize);
}

} // namespace
} // namespace torch_neuron

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

#include "NeuronOps.h"

namespace torch_neuron {
namespace {

constexpr auto kKey = c10::DispatchKey::PrivateUse1;

nrn_buffer* tensor_buffer(const at::Tensor& t) {
  return storage_span(t.storage()).buf;
}

// Bytes from the start of tensor_buffer(t) to t's element 0.
size_t tensor_byte_offset(const at::Tensor& t) {
  return storage_span(t.storage()).offset +
         static_cast<size_t>(t.storage_offset()) * t.itemsize();
}

// dst = src on the card: any strides, any supported dtypes.
void device_copy(const at::Tensor& dst, const at::Tensor& src) {
  nrn_tensor_desc d = desc(dst), s = desc(src);
  NEURON_CHECK(nrn_op_copy(stream_for(dst), &d, &s));
}

// A contiguous CPU tensor with @t's contents (same dtype).
at::Tensor read_to_cpu(const at::Tensor& t) {
  at::Tensor src = t;
  if (!t.is_contiguous()) {
    src = at::empty(t.sizes(), t.options());
    device_copy(src, t);
  }
  at::Tensor host = at::empty(t.sizes(), t.options().device(at::kCPU));
  NEURON_CHECK(nrn_stream_copy_d2h(stream_for(src), host.data_ptr(),
                                   tensor_buffer(src), tensor_byte_offset(src),
                                   host.nbytes()));
  return host;
}

// Write the CPU tensor @src (dst's shape) into the neuron view @dst.
void write_from_cpu(const at::Tensor& dst, const at::Tensor& src) {
  at::Tensor c = src.contiguous();
  if (dst.is_contiguous() && c.scalar_type() == dst.scalar_type()) {
    NEURON_CHECK(nrn_stream_copy_h2d(stream_for(dst), tensor_buffer(dst),
                                     tensor_byte_offset(dst), c.data_ptr(),
                                     c.nbytes()));
    return;
  }
  // Upload contiguous, then let the card scatter and convert.
  at::Tensor tmp = at::empty(c.sizes(), dst.options().dtype(c.scalar_type()));
  NEURON_CHECK(nrn_stream_copy_h2d(stream_for(tmp), tensor_buffer(tmp),
                                   tensor_byte_offset(tmp),
                                   c.data_ptr(), c.nbytes()));
  device_copy(dst, tmp);
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
    // Card to CPU: the card's dtype, then the CPU converts and broadcasts.
    dst.copy_(read_to_cpu(self));
  } else if (self.is_cpu()) {
    at::Tensor src = self;
    if (!supported_dtype(src.scalar_type()) || src.sizes() != dst.sizes())
      src = self.to(dst.scalar_type()).expand(dst.sizes());
    write_from_cpu(dst, src);
  } else {
    if (self.device() != dst.device()) {
      // Card to card: through the CPU (device-to-device DMA comes later).
      write_from_cpu(dst, read_to_cpu(self));
    } else {
      device_copy(dst, self.expand(dst.sizes()));
    }
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
      NEURON_CHECK(nrn_stream_copy_buffer(stream_for(self), tensor_buffer(fresh),
                                          storage_span(fresh.storage()).offset,
                                          tensor_buffer(self),
                                          storage_span(self.storage()).offset,
                                          self.storage().nbytes()));
    self.unsafeGetTensorImpl()->set_storage_keep_dtype(fresh.storage());
  }
  self.unsafeGetTensorImpl()->set_sizes_contiguous(size);
  if (format && *format != at::MemoryFormat::Preserve)
    self.unsafeGetTensorImpl()->empty_tensor_restride(*format);
  return self;
}

// item(): one element, read back (this synchronises the stream).
at::Scalar local_scalar_dense(const at::Tensor& self) {
  at::Tensor host = read_to_cpu(self);
  return host.item();
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
  m.impl("_local_scalar_dense", local_scalar_dense);
}

} // namespace
} // namespace torch_neuron

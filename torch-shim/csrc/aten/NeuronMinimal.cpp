// SPDX-License-Identifier: MIT
// The operators every PrivateUse1 backend must provide: tensor creation,
// views and resize (copies: Copy.cpp, set_: Resize.cpp).
// Everything else is either lowered to libneuron (Neuron*.cpp) or falls back
// to the CPU (Fallback.cpp).
#include <ATen/EmptyTensor.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/_reshape_alias_native.h>
#include <ATen/ops/as_strided_native.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/view_native.h>
#include <torch/library.h>

#include "NeuronOps.h"
#include "NeuronStorage.h"

namespace torch_neuron {
namespace {

constexpr auto kKey = c10::DispatchKey::PrivateUse1;

// Complex numbers have no place on the card, not even as storage: refuse
// them where every neuron tensor is born, so that an operator whose CPU
// fallback returns complex fails with this message rather than later.
void check_storable(at::ScalarType dtype) {
  TORCH_CHECK(!c10::isComplexType(dtype), "neuron: dtype ", dtype,
              " is not supported on the card (complex tensors cannot be "
              "stored on a neuron device; keep them on the CPU)");
  if (dtype == at::kDouble)
    track_op_names(); // operators refusing it say who they are (Dtype.cpp)
}

at::Tensor neuron_empty(c10::IntArrayRef size,
                        std::optional<at::ScalarType> dtype,
                        std::optional<at::Layout> layout,
                        std::optional<at::Device> device,
                        std::optional<bool> pin_memory,
                        std::optional<at::MemoryFormat> memory_format) {
  const c10::DeviceGuard guard(device.value_or(
      c10::Device(c10::DeviceType::PrivateUse1, current_device())));
  check_storable(c10::dtype_or_default(dtype));
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
  check_storable(c10::dtype_or_default(dtype));
  return at::detail::empty_strided_generic(size, stride,
                                           c10::GetAllocator(c10::DeviceType::PrivateUse1),
                                           c10::DispatchKeySet(kKey),
                                           c10::dtype_or_default(dtype));
}

const at::Tensor& neuron_resize_(const at::Tensor& self, c10::IntArrayRef size,
                                 std::optional<at::MemoryFormat> format) {
  // Like the CPU's resize_: a storage too small grows in place (the
  // tensors sharing it see the new one).
  int64_t numel = c10::multiply_integers(size);
  size_t need = static_cast<size_t>(numel + self.storage_offset()) * self.itemsize();
  if (numel && need > self.storage().nbytes())
    resize_storage_bytes(self.storage().unsafeGetStorageImpl(), need);
  self.unsafeGetTensorImpl()->set_sizes_contiguous(size);
  if (format && *format != at::MemoryFormat::Preserve)
    self.unsafeGetTensorImpl()->empty_tensor_restride(*format);
  return self;
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("empty.memory_format", neuron_empty);
  m.impl("empty_strided", neuron_empty_strided);
  m.impl("as_strided", at::native::as_strided_tensorimpl);
  m.impl("view", at::native::view);
  m.impl("_reshape_alias", at::native::_reshape_alias);
  m.impl("resize_", neuron_resize_);
}

} // namespace
} // namespace torch_neuron

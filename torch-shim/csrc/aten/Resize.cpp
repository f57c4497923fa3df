// SPDX-License-Identifier: MIT
// Storages that grow: resize_, set_ and resize_storage_bytes() (which
// UntypedStorage.resize_() reaches through the hooks).
//
// set_(): a tensor made a view of a storage -- how torch.load rebuilds a
// tensor (torch._utils._rebuild_tensor), and how UntypedStorage.copy_()
// reaches a storage's bytes. ATen has these kernels for the CPU and CUDA
// only; without ours, set_ ran through the CPU fallback, which set the
// storage of a CPU copy of the tensor and failed ("Attempted to set the
// storage of a tensor on device cpu to a storage on different device").
#include <ATen/EmptyTensor.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/set_native.h>
#include <c10/core/DeviceGuard.h>

#include "NeuronOps.h"
#include "NeuronStorage.h"

namespace torch_neuron {

void resize_storage_bytes(c10::StorageImpl* st, size_t nbytes) {
  TORCH_CHECK(st->resizable(), "neuron: trying to resize a storage that is "
              "not resizable");
  TORCH_CHECK(st->allocator(), "neuron: trying to resize a storage without "
              "an allocator");
  const c10::Device dev = st->device();
  const c10::DeviceGuard guard(dev);
  c10::Storage fresh(c10::Storage::use_byte_size_t(), nbytes, st->allocator(),
                     /*resizable=*/true);
  size_t keep = std::min(nbytes, st->nbytes());
  if (keep) {
    c10::Storage old(c10::intrusive_ptr<c10::StorageImpl>::reclaim_copy(st));
    DeviceSpan from = storage_span(old), to = storage_span(fresh);
    // In stream order: work queued on the old block reads it first, and
    // the old block is reused (after this returns) only by later work.
    NEURON_CHECK(nrn_stream_copy_buffer(device_stream(dev.index()), to.buf,
                                        to.offset, from.buf, from.offset, keep));
  }
  st->set_data_ptr_noswap(
      fresh.unsafeGetStorageImpl()->set_data_ptr(c10::DataPtr(nullptr, dev)));
  st->set_nbytes(nbytes);
}

namespace {

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

at::Tensor& neuron_set_storage(at::Tensor& self, c10::Storage source,
                               int64_t storage_offset, at::IntArrayRef size,
                               at::IntArrayRef stride) {
  at::native::checkSetStorage(self, source, storage_offset, size, stride);
  c10::TensorImpl* impl = self.unsafeGetTensorImpl();
  impl->set_storage_offset(storage_offset);
  if (stride.data())
    impl->set_sizes_and_strides(size, stride);
  else
    impl->set_sizes_contiguous(size);
  // Like the CPU's set_: a storage too small for the view grows.
  size_t need = at::detail::computeStorageNbytes(self.sizes(), self.strides(),
                                                 self.itemsize(), storage_offset);
  if (self.numel() && need > self.storage().nbytes())
    resize_storage_bytes(self.storage().unsafeGetStorageImpl(), need);
  return self;
}

// set_(): an empty storage of self's device.
at::Tensor& neuron_set_empty(at::Tensor& self) {
  const c10::DeviceGuard guard(self.device());
  c10::Storage st(c10::Storage::use_byte_size_t(), 0,
                  c10::GetAllocator(c10::DeviceType::PrivateUse1),
                  /*resizable=*/true);
  self.unsafeGetTensorImpl()->set_storage_keep_dtype(std::move(st));
  self.unsafeGetTensorImpl()->set_storage_offset(0);
  self.unsafeGetTensorImpl()->set_sizes_contiguous({0});
  return self;
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("set_.source_Storage_storage_offset", neuron_set_storage);
  // These two end in the one above.
  m.impl("set_.source_Storage", at::native::set_);
  m.impl("set_.source_Tensor", at::native::set_tensor_);
  m.impl("set_", neuron_set_empty);
  m.impl("resize_", neuron_resize_);
}

}  // namespace
}  // namespace torch_neuron

// SPDX-License-Identifier: MIT
// PrivateUse1 hooks: what ATen asks a backend outside operator dispatch.
#include <ATen/detail/PrivateUse1HooksInterface.h>

#include "../NeuronHelpers.h"
#include "../aten/NeuronStorage.h"
#include "NeuronGenerator.h"
#include "NeuronHostAllocator.h"

namespace torch_neuron {
namespace {

struct NeuronHooks final : at::PrivateUse1HooksInterface {
  bool hasPrimaryContext(c10::DeviceIndex index) const override {
    return index >= 0 && index < device_count();
  }

  c10::DeviceIndex deviceCount() const override { return device_count(); }

  c10::DeviceIndex getCurrentDevice() const override {
    return current_device();
  }

  void setCurrentDevice(c10::DeviceIndex index) const override {
    set_device(index);
  }

  // Each card's Philox generator (NeuronGenerator.cpp); -1: the current card.
  const at::Generator& getDefaultGenerator(c10::DeviceIndex index) const override {
    return default_generator(index);
  }

  // Pinned memory: blocks of the cards' host buffers (NeuronHostAllocator.cpp).
  // torch.empty(pin_memory=True), tensor.pin_memory() and is_pinned() ask here.
  at::Allocator* getPinnedMemoryAllocator() const override {
    return host_allocator();
  }

  bool isPinnedPtr(const void* data) const override {
    return is_pinned_ptr(data);
  }

  // UntypedStorage.resize_() of a neuron storage.
  void resizePrivateUse1Bytes(const c10::Storage& storage,
                              size_t newsize) const override {
    resize_storage_bytes(storage.unsafeGetStorageImpl(), newsize);
  }
};

const bool g_registered = [] {
  static NeuronHooks hooks;
  at::RegisterPrivateUse1HooksInterface(&hooks);
  return true;
}();

} // namespace
} // namespace torch_neuron

// SPDX-License-Identifier: MIT
// Device memory for tensors: each allocation is a libneuron device buffer;
// the tensor's data pointer is the buffer's CPU mapping (unique, and handy
// in a debugger), its DataPtr context is the buffer itself.
#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>

#include "../NeuronHelpers.h"

namespace torch_neuron {
namespace {

void neuron_free(void* ctx) {
  nrn_buffer_free(static_cast<nrn_buffer*>(ctx));
}

struct NeuronAllocator final : c10::Allocator {
  c10::DataPtr allocate(size_t nbytes) override {
    c10::DeviceIndex index = current_device();
    c10::Device dev(c10::DeviceType::PrivateUse1, index);
    nrn_buffer* buf = nullptr;
    void* ptr = nullptr;

    if (nbytes == 0)
      return {nullptr, dev};
    NEURON_CHECK(nrn_buffer_alloc(device(index), nbytes, NRN_MEM_DEVICE, &buf));
    int err = nrn_buffer_map(buf, &ptr);
    if (err < 0) {
      nrn_buffer_free(buf);
      NEURON_CHECK(err);
    }
    return {ptr, buf, &neuron_free, dev};
  }

  c10::DeleterFnPtr raw_deleter() const override {
    return nullptr; // the context is not the data pointer
  }

  void copy_data(void* dest, const void* src, std::size_t count) const override {
    TORCH_CHECK(false, "neuron: raw copies between device pointers are not "
                "supported; copy tensors instead");
  }
};

NeuronAllocator g_allocator;
REGISTER_ALLOCATOR(c10::DeviceType::PrivateUse1, &g_allocator);

} // namespace

nrn_buffer* buffer_of(const void* ctx) {
  return static_cast<nrn_buffer*>(const_cast<void*>(ctx));
}

} // namespace torch_neuron

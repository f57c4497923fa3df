// SPDX-License-Identifier: MIT
// The caching allocator's statistics (torch.neuron.memory_allocated() ...).
#pragma once

#include <c10/core/Device.h>

#include <cstdint>

namespace torch_neuron {

struct AllocatorStats {
  int64_t allocated = 0;       // bytes in blocks held by tensors
  int64_t reserved = 0;        // bytes in blocks held by the allocator
  int64_t peak_allocated = 0;
  int64_t peak_reserved = 0;
};

AllocatorStats allocator_stats(c10::DeviceIndex index);
void reset_peak_stats(c10::DeviceIndex index);
// Give cached (unused) blocks back to the card.
void empty_cache(c10::DeviceIndex index);

}  // namespace torch_neuron

// SPDX-License-Identifier: MIT
// The caching allocator of device memory. Each block is a libneuron device
// buffer; freed blocks go back to a per-device cache, binned by their
// rounded size, and are handed out again without a trip to the kernel.
// Reuse is safe in stream order: every operation of a device runs on its one
// stream, so work queued on a freed block finishes before work queued by
// its next user. The tensor's data pointer is the buffer's CPU mapping
// (unique, and readable in a debugger); its DataPtr context is the block.
#include <c10/core/Allocator.h>

#include <array>
#include <map>
#include <mutex>
#include <vector>

#include "../NeuronHelpers.h"
#include "NeuronAllocator.h"

namespace torch_neuron {
namespace {

constexpr size_t kSmall = 1 << 20;

size_t round_size(size_t n) {
  if (n < kSmall)
    return (n + 4095) & ~size_t{4095};
  return (n + kSmall - 1) & ~(kSmall - 1);
}

struct Block {
  nrn_buffer* buf;
  void* map;
  size_t size;
  c10::DeviceIndex device;
};

struct DeviceCache {
  std::multimap<size_t, Block*> free;  // by size
  AllocatorStats stats;
};

std::mutex g_lock;  // protects g_cache
std::array<DeviceCache, 64> g_cache;

void release_cached_locked(DeviceCache& c) {
  for (auto& [size, b] : c.free) {
    nrn_buffer_free(b->buf);
    c.stats.reserved -= b->size;
    delete b;
  }
  c.free.clear();
}

void neuron_free(void* ctx) {
  auto* b = static_cast<Block*>(ctx);
  std::lock_guard<std::mutex> guard(g_lock);
  DeviceCache& c = g_cache[b->device];
  c.stats.allocated -= b->size;
  c.free.emplace(b->size, b);
}

Block* fresh_block(c10::DeviceIndex index, size_t size) {
  nrn_buffer* buf = nullptr;
  void* map = nullptr;
  int err = nrn_buffer_alloc(device(index), size, NRN_MEM_DEVICE, &buf);
  if (err == -ENOMEM) {
    // Give the cache back to the card and try once more.
    {
      std::lock_guard<std::mutex> guard(g_lock);
      release_cached_locked(g_cache[index]);
    }
    err = nrn_buffer_alloc(device(index), size, NRN_MEM_DEVICE, &buf);
  }
  if (err == -ENOMEM) {
    AllocatorStats st = allocator_stats(index);
    TORCH_CHECK_WITH(OutOfMemoryError, false, "neuron: out of device memory: "
                     "tried to allocate ", size, " bytes on neuron:",
                     static_cast<int>(index), " (", st.allocated,
                     " bytes allocated, ", st.reserved, " reserved)");
  }
  NEURON_CHECK(err);
  err = nrn_buffer_map(buf, &map);
  if (err < 0) {
    nrn_buffer_free(buf);
    NEURON_CHECK(err);
  }
  return new Block{buf, map, size, index};
}

struct NeuronAllocator final : c10::Allocator {
  c10::DataPtr allocate(size_t nbytes) override {
    c10::DeviceIndex index = current_device();
    c10::Device dev(c10::DeviceType::PrivateUse1, index);
    if (nbytes == 0)
      return {nullptr, dev};
    size_t size = round_size(nbytes);
    Block* b = nullptr;
    {
      std::lock_guard<std::mutex> guard(g_lock);
      DeviceCache& c = g_cache[index];
      auto it = c.free.find(size);
      if (it != c.free.end()) {
        b = it->second;
        c.free.erase(it);
      }
    }
    if (!b) {
      b = fresh_block(index, size);
      std::lock_guard<std::mutex> guard(g_lock);
      g_cache[index].stats.reserved += size;
    }
    {
      std::lock_guard<std::mutex> guard(g_lock);
      AllocatorStats& st = g_cache[index].stats;
      st.allocated += size;
      st.peak_allocated = std::max(st.peak_allocated, st.allocated);
      st.peak_reserved = std::max(st.peak_reserved, st.reserved);
    }
    return {b->map, b, &neuron_free, dev};
  }

  c10::DeleterFnPtr raw_deleter() const override {
    return nullptr;  // the context is not the data pointer
  }

  void copy_data(void* dest, const void* src, std::size_t count) const override {
    TORCH_CHECK(false, "neuron: raw copies between device pointers are not "
                "supported; copy tensors instead");
  }
};

NeuronAllocator g_allocator;
REGISTER_ALLOCATOR(c10::DeviceType::PrivateUse1, &g_allocator);

}  // namespace

DeviceSpan storage_span(const c10::Storage& storage) {
  // Empty storages have no block.
  const void* ctx = storage.data_ptr().get_context();
  return {ctx ? static_cast<const Block*>(ctx)->buf : nullptr, 0};
}

AllocatorStats allocator_stats(c10::DeviceIndex index) {
  std::lock_guard<std::mutex> guard(g_lock);
  return g_cache[index].stats;
}

void reset_peak_stats(c10::DeviceIndex index) {
  std::lock_guard<std::mutex> guard(g_lock);
  AllocatorStats& st = g_cache[index].stats;
  st.peak_allocated = st.allocated;
  st.peak_reserved = st.reserved;
}

void empty_cache(c10::DeviceIndex index) {
  std::lock_guard<std::mutex> guard(g_lock);
  release_cached_locked(g_cache[index]);
}

}  // namespace torch_neuron

// SPDX-License-Identifier: MIT
// The pinned (host) memory allocator. A block is one host buffer of a card
// (NRN_MEM_HOST_PINNED: system memory the card reaches by DMA, its pages
// pinned once, at allocation, so that copies pin nothing), mapped into the
// process; a pinned CPU tensor's data pointer is that mapping. Past the
// driver's budget of pinned memory (neuron.ko max_pinned_mb, per device
// file) a block is a plain host buffer (NRN_MEM_HOST), whose pages each copy
// pins for itself: the same results, slower copies (and each copy must fit
// in what the pinned blocks leave of the budget). Host buffers
// are a limited resource of the driver (DRM_NEURON_PARAM_MAX_HOST_BO bytes
// each, mmap offsets per card), so blocks are cached: sizes are rounded up to
// a power of two (at least a page), and a freed block goes back to the cache
// of its card and size.
//
// A block belongs to the card that was current when it was allocated: only
// that card's DMA engine can address it. Copies between a pinned tensor and
// another card take the staged (pageable) path: correct, synchronous with
// respect to the CPU memory, no faster than pageable memory.
//
// Asynchronous copies (non_blocking=True) leave a DMA job in flight on the
// block after the copy returns; the tensor may die before the job runs. Each
// such copy records an event on its stream (pinned_used()); a freed block
// with events not yet complete waits in `pending` and is reused only once
// they all are (queried at each allocation, never waited for).
#include <c10/util/llvmMathExtras.h>
#include <torch/library.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "NeuronHostAllocator.h"
#include "NeuronIpc.h"

namespace torch_neuron {
namespace {

constexpr size_t kMinBlock = 4096;
constexpr int kMaxCards = 64;  // spare events are kept per card

struct Block {
  nrn_buffer* buf;
  char* ptr;  // the buffer's CPU mapping
  size_t size;
  c10::DeviceIndex device;
  bool allocated;
  std::vector<std::pair<nrn_event*, c10::DeviceIndex>> events;  // in flight
};

struct HostCache {
  std::mutex lock;  // protects everything below
  std::map<uintptr_t, Block*> by_addr;  // every block, by address
  std::map<std::pair<c10::DeviceIndex, size_t>, std::vector<Block*>> free;
  std::vector<Block*> pending;  // freed, some events not complete yet
  std::array<std::vector<nrn_event*>, kMaxCards> spare_events;
  int64_t allocated = 0;  // bytes of blocks held by tensors
  int64_t reserved = 0;   // bytes of all blocks
};

// Never destroyed: tensors may free their blocks during process exit.
HostCache& cache() {
  static HostCache* c = new HostCache;
  return *c;
}

void host_free(void* ctx);

int take_event(c10::DeviceIndex index, nrn_event** evp) {
  HostCache& c = cache();
  {
    std::lock_guard<std::mutex> guard(c.lock);
    auto& spare = c.spare_events[index];
    if (!spare.empty()) {
      *evp = spare.back();
      spare.pop_back();
      return 0;
    }
  }
  return nrn_event_create(device(index), evp);
}

// Caller holds the lock. An event whose work failed is not reused.
void give_event_locked(HostCache& c, nrn_event* ev, c10::DeviceIndex index,
                       int status) {
  if (status == 0)
    c.spare_events[index].push_back(ev);
  else
    nrn_event_destroy(ev);
}

// Move freed blocks whose DMA jobs are all done to the free lists. Queries
// (ioctls) run without the lock: a pending block is touched by no one else.
void process_pending() {
  HostCache& c = cache();
  std::vector<Block*> blocks;
  {
    std::lock_guard<std::mutex> guard(c.lock);
    if (c.pending.empty())
      return;
    blocks.swap(c.pending);
  }
  std::vector<std::pair<std::pair<nrn_event*, c10::DeviceIndex>, int>> done;
  for (Block* b : blocks) {
    auto& evs = b->events;
    for (size_t i = 0; i < evs.size();) {
      int st = nrn_event_query(evs[i].first);
      if (st == -EBUSY) {
        i++;
        continue;
      }
      // Complete, or failed: either way the job no longer touches the block.
      done.push_back({evs[i], st});
      evs[i] = evs.back();
      evs.pop_back();
    }
  }
  std::lock_guard<std::mutex> guard(c.lock);
  for (auto& [ev, st] : done)
    give_event_locked(c, ev.first, ev.second, st);
  for (Block* b : blocks) {
    if (b->events.empty())
      c.free[{b->device, b->size}].push_back(b);
    else
      c.pending.push_back(b);
  }
}

// Give every cached (free) block back to the driver.
void release_free_blocks() {
  HostCache& c = cache();
  std::vector<Block*> gone;
  {
    std::lock_guard<std::mutex> guard(c.lock);
    for (auto& [key, list] : c.free) {
      for (Block* b : list) {
        c.by_addr.erase(reinterpret_cast<uintptr_t>(b->ptr));
        c.reserved -= b->size;
        gone.push_back(b);
      }
    }
    c.free.clear();
  }
  for (Block* b : gone) {
    nrn_buffer_free(b->buf);
    delete b;
  }
}

Block* fresh_block(c10::DeviceIndex index, size_t size) {
  nrn_buffer* buf = nullptr;
  // Pinned if the budget of pinned memory allows, with the free blocks
  // cached here given back first if they are what fills it; else a buffer
  // pinned by each copy (NRN_MEM_HOST_PREFER_PINNED).
  int err = nrn_buffer_alloc(device(index), size, NRN_MEM_HOST_PINNED, &buf);
  if (err == -ENOMEM || err == -ENOSPC)
    release_free_blocks();
  if (err)
    err = nrn_buffer_alloc(device(index), size, NRN_MEM_HOST_PREFER_PINNED, &buf);
  if (err == -ENOMEM || err == -ENOSPC || err == -E2BIG)
    TORCH_CHECK_WITH(OutOfMemoryError, false, "neuron: cannot allocate ", size,
                     " bytes of pinned memory for neuron:",
                     static_cast<int>(index), ": ", nrn_strerror(err),
                     err == -E2BIG ? " (larger than the driver's largest host "
                                     "buffer, neuron.ko max_host_bo_mb)" : "");
  NEURON_CHECK(err);
  void* map = nullptr;
  err = nrn_buffer_map(buf, &map);
  if (err < 0) {
    nrn_buffer_free(buf);
    NEURON_CHECK(err);
  }
  return new Block{buf, static_cast<char*>(map), size, index, true, {}};
}

struct HostAllocator final : c10::Allocator {
  c10::DataPtr allocate(size_t nbytes) override {
    const c10::Device cpu(c10::DeviceType::CPU);
    TORCH_CHECK(device_count() > 0, "neuron: pinned memory needs a neuron "
                "card, and none was found");
    check_not_forked();  // the cached blocks would be the parent's memory
    if (nbytes == 0)
      return {nullptr, cpu};
    c10::DeviceIndex index = current_device();
    size_t size = c10::llvm::PowerOf2Ceil(std::max(nbytes, kMinBlock));
    process_pending();
    HostCache& c = cache();
    Block* b = nullptr;
    {
      std::lock_guard<std::mutex> guard(c.lock);
      auto it = c.free.find({index, size});
      if (it != c.free.end() && !it->second.empty()) {
        b = it->second.back();
        it->second.pop_back();
        b->allocated = true;
        c.allocated += size;
      }
    }
    if (!b) {
      b = fresh_block(index, size);
      std::lock_guard<std::mutex> guard(c.lock);
      c.by_addr[reinterpret_cast<uintptr_t>(b->ptr)] = b;
      c.reserved += size;
      c.allocated += size;
    }
    return {b->ptr, b, &host_free, cpu};
  }

  c10::DeleterFnPtr raw_deleter() const override {
    return nullptr;  // the context is the block, not the data pointer
  }

  void copy_data(void* dest, const void* src, std::size_t count) const override {
    std::memcpy(dest, src, count);  // pinned memory is CPU memory
  }
};

HostAllocator g_host_allocator;

void host_free(void* ctx) {
  auto* b = static_cast<Block*>(ctx);
  HostCache& c = cache();
  std::lock_guard<std::mutex> guard(c.lock);
  b->allocated = false;
  c.allocated -= b->size;
  if (b->events.empty())
    c.free[{b->device, b->size}].push_back(b);
  else
    c.pending.push_back(b);
}

Block* block_of(const at::Tensor& t) {
  if (!t.has_storage())
    return nullptr;
  const c10::DataPtr& dp = t.storage().data_ptr();
  if (dp.get_deleter() != &host_free)
    return nullptr;
  return static_cast<Block*>(dp.get_context());
}

// allocated, reserved (bytes), cached free blocks, blocks waiting for DMA
std::vector<int64_t> host_memory_stats() {
  HostCache& c = cache();
  std::lock_guard<std::mutex> guard(c.lock);
  int64_t cached = 0;
  for (auto& [key, list] : c.free)
    cached += static_cast<int64_t>(list.size());
  return {c.allocated, c.reserved, cached,
          static_cast<int64_t>(c.pending.size())};
}

void host_empty_cache() {
  process_pending();
  release_free_blocks();
}

}  // namespace

c10::Allocator* host_allocator() {
  return &g_host_allocator;
}

bool is_pinned_ptr(const void* ptr) {
  auto p = reinterpret_cast<uintptr_t>(ptr);
  HostCache& c = cache();
  std::lock_guard<std::mutex> guard(c.lock);
  auto it = c.by_addr.upper_bound(p);
  if (it == c.by_addr.begin())
    return false;
  --it;
  return p < it->first + it->second->size;
}

std::optional<DeviceSpan> pinned_span(const at::Tensor& t, c10::DeviceIndex index) {
  Block* b = block_of(t);
  if (!b || b->device != index)
    return std::nullopt;
  auto off = static_cast<const char*>(t.const_data_ptr()) - b->ptr;
  TORCH_INTERNAL_ASSERT(off >= 0 && static_cast<size_t>(off) + t.nbytes() <= b->size);
  return DeviceSpan{b->buf, static_cast<uint64_t>(off)};
}

void pinned_used(const at::Tensor& t, nrn_stream* s, c10::DeviceIndex index,
                 bool wait) {
  Block* b = block_of(t);
  TORCH_INTERNAL_ASSERT(b && b->allocated);
  nrn_event* ev = nullptr;
  int err = take_event(index, &ev);
  if (!err)
    err = nrn_event_record(ev, s);
  if (err) {
    // No event to track the job by: it must end before the block can be
    // reused, so wait for the whole stream here.
    nrn_stream_sync(s);
    if (ev)
      nrn_event_destroy(ev);
    NEURON_CHECK(err);
  }
  if (wait)
    err = nrn_event_wait(ev, -1);
  HostCache& c = cache();
  {
    std::lock_guard<std::mutex> guard(c.lock);
    if (wait)
      give_event_locked(c, ev, index, err);
    else
      b->events.push_back({ev, index});
  }
  NEURON_CHECK(err);
}

}  // namespace torch_neuron

// torch.ops.neuron's view of pinned memory (the rest: NeuronModule.cpp).
TORCH_LIBRARY_FRAGMENT(neuron, m) {
  m.def("host_memory_stats() -> int[]", &torch_neuron::host_memory_stats);
  m.def("host_empty_cache() -> ()", &torch_neuron::host_empty_cache);
}

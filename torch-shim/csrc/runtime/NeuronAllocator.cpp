// SPDX-License-Identifier: MIT
// The caching allocator of device memory, stream-aware (CUDA's scheme).
//
// Segments are libneuron device buffers; blocks are split from them and
// coalesced with free neighbours when freed. Requests are rounded to 512
// bytes; those up to 1 MiB come from 2 MiB segments (the small pool), larger
// ones from segments rounded to 2 MiB (the large pool), whose blocks split
// only when more than 1 MiB would be left. A block belongs to the stream it
// was allocated on, and so does its segment: a freed block is reused at
// once by that stream only (its later work runs after the earlier work on
// the block), never by another. A block recorded on other streams
// (record_stream) is reused only once an event recorded on each of them at
// free time has completed. Unused memory is bounded: before a segment is
// added, whole free segments are given back while what is reserved would
// exceed twice what is allocated plus kCacheSlack; when the card is out of
// memory, every free segment is given back and the allocation retried once.
//
// The data pointer is the CPU mapping of the block's first byte; the DataPtr
// context is the block; storage_span() gives its segment and offset.
#include <algorithm>
#include <array>
#include <map>
#include <mutex>
#include <set>
#include <unordered_map>
#include <vector>

#include "../NeuronHelpers.h"
#include "NeuronAllocator.h"
#include "NeuronIpc.h"
#include "NeuronStream.h"

namespace torch_neuron {
namespace {

constexpr size_t kMinBlock = 512;
constexpr size_t kSmallRequest = 1 << 20;   // up to this: the small pool
constexpr size_t kSmallSegment = 2 << 20;
constexpr size_t kLargeRound = 2 << 20;     // large segments: multiples of this
constexpr size_t kCacheSlack = 32 << 20;

struct Block {
  c10::DeviceIndex device;
  c10::StreamId stream;  // the stream it was allocated on
  bool small;            // its pool
  nrn_buffer* buf;       // its segment's buffer, mapped at map
  char* map;
  size_t offset, size, requested = 0;
  bool allocated = false;
  bool held = false;                 // freed while frees are held
  int protects = 0;                  // graphs replayed in place over it...
  bool kept = false;                 // ...which keep it from reuse, freed
  int pending_events = 0;            // freed, waiting for other streams
  std::vector<c10::StreamId> uses;   // streams recorded besides its own
  Block* prev = nullptr;             // neighbours in the segment
  Block* next = nullptr;
};

struct BySize {
  bool operator()(const Block* a, const Block* b) const {
    if (a->stream != b->stream)
      return a->stream < b->stream;
    if (a->size != b->size)
      return a->size < b->size;
    return reinterpret_cast<uintptr_t>(a->map) + a->offset <
           reinterpret_cast<uintptr_t>(b->map) + b->offset;
  }
};

// One statistic as PyTorch counts it.
struct Stat {
  int64_t current = 0, peak = 0, allocated = 0, freed = 0;
  void add(int64_t n) {
    current += n;
    if (n > 0)
      allocated += n;
    else
      freed -= n;
    peak = std::max(peak, current);
  }
};

enum { kAll, kSmallPool, kLargePool, kStatTypes };
// The statistics kept per pool, by PyTorch's name.
#define NEURON_POOL_STATS(X) X(allocation) X(segment) X(active) \
  X(inactive_split) X(allocated_bytes) X(reserved_bytes) X(active_bytes) \
  X(inactive_split_bytes) X(requested_bytes)
#define NEURON_COUNTERS(X) X(num_alloc_retries) X(num_ooms) \
  X(num_sync_all_streams) X(num_device_alloc) X(num_device_free)

struct Stats {
#define X(name) std::array<Stat, kStatTypes> name;
  NEURON_POOL_STATS(X)
#undef X
#define X(name) int64_t name = 0;
  NEURON_COUNTERS(X)
#undef X
};

struct Pending {
  nrn_event* ev;
  Block* block;
};

struct DeviceAlloc {
  std::set<Block*, BySize> pools[2];  // free blocks: large, small
  std::vector<Pending> pending;       // freed blocks' events on other streams
  Stats stats;
  int holds = 0;              // hold_frees() depth: freed blocks are kept...
  std::vector<Block*> held;   // ... here, not reused, until it drops to 0
  // Each segment's first block (offset 0: never merged into another).
  std::unordered_map<nrn_buffer*, Block*> segments;
  // The same by the CPU address of their first byte, with their sizes:
  // where a pointer into the card's memory that came back without its
  // block (a DLPack capsule's, at::from_blob's) lies (locate()).
  std::map<const char*, std::pair<Block*, size_t>> by_addr;
};

std::mutex g_lock;  // protects g_alloc and every Block
// Never destroyed: tensors may still be freed while the process exits.
std::array<DeviceAlloc, kMaxDevices>& g_alloc = *new std::array<DeviceAlloc, kMaxDevices>;

void add(std::array<Stat, kStatTypes>& s, bool small, int64_t n) {
  s[kAll].add(n);
  s[small ? kSmallPool : kLargePool].add(n);
}

bool is_split(const Block* b) {
  return b->prev || b->next;
}

// A free block enters or leaves its pool (and the inactive-split stats).
void pool_insert(DeviceAlloc& d, Block* b) {
  d.pools[b->small].insert(b);
  if (is_split(b)) {
    add(d.stats.inactive_split, b->small, 1);
    add(d.stats.inactive_split_bytes, b->small, b->size);
  }
}

void pool_erase(DeviceAlloc& d, Block* b) {
  d.pools[b->small].erase(b);
  if (is_split(b)) {
    add(d.stats.inactive_split, b->small, -1);
    add(d.stats.inactive_split_bytes, b->small, -static_cast<int64_t>(b->size));
  }
}

// @b (no longer active) goes back to its pool, merged with free neighbours.
void free_block(DeviceAlloc& d, Block* b) {
  add(d.stats.active, b->small, -1);
  add(d.stats.active_bytes, b->small, -static_cast<int64_t>(b->size));
  auto is_free = [](Block* n) {
    return n && !n->allocated && !n->pending_events && !n->held && !n->kept;
  };
  if (is_free(b->prev)) {
    Block* p = b->prev;
    pool_erase(d, p);
    p->size += b->size;
    p->next = b->next;
    if (b->next)
      b->next->prev = p;
    delete b;
    b = p;
  }
  if (is_free(b->next)) {
    Block* n = b->next;
    pool_erase(d, n);
    b->size += n->size;
    b->next = n->next;
    if (n->next)
      n->next->prev = b;
    delete n;
  }
  pool_insert(d, b);
}

// @b is free: back to its pool, or held while a capture runs, or kept
// while a graph replayed in place may still write it.
void release_block(DeviceAlloc& d, Block* b) {
  if (d.holds) {
    b->held = true;  // not merged into a neighbour freed meanwhile either
    d.held.push_back(b);
  } else if (b->protects)
    b->kept = true;
  else
    free_block(d, b);
}

// One of @b's events is done (or failed: the work will not touch it).
void event_done(DeviceAlloc& d, Pending& p) {
  nrn_event_destroy(p.ev);
  if (--p.block->pending_events == 0)
    release_block(d, p.block);
}

void process_events(DeviceAlloc& d) {
  auto done = [&](Pending& p) {
    if (nrn_event_query(p.ev) == -EBUSY)
      return false;
    event_done(d, p);
    return true;
  };
  d.pending.erase(std::remove_if(d.pending.begin(), d.pending.end(), done),
                  d.pending.end());
}

void sync_events(DeviceAlloc& d) {
  if (d.pending.empty())
    return;
  d.stats.num_sync_all_streams++;
  for (Pending& p : d.pending) {
    nrn_event_wait(p.ev, -1);
    event_done(d, p);
  }
  d.pending.clear();
}

void release_segment(DeviceAlloc& d, Block* b) {
  pool_erase(d, b);
  d.segments.erase(b->buf);
  d.by_addr.erase(b->map);
  nrn_buffer_free(b->buf);  // work still queued on it keeps it alive
  add(d.stats.segment, b->small, -1);
  add(d.stats.reserved_bytes, b->small, -static_cast<int64_t>(b->size));
  d.stats.num_device_free++;
  delete b;
}

// Give back whole free segments, largest first, while @want says so.
template <typename Want>
void release_free_segments(DeviceAlloc& d, Want want) {
  std::vector<Block*> whole;
  for (auto& pool : d.pools)
    for (Block* b : pool)
      if (!is_split(b))
        whole.push_back(b);
  std::sort(whole.begin(), whole.end(),
            [](Block* a, Block* b) { return a->size > b->size; });
  for (Block* b : whole) {
    if (!want())
      break;
    release_segment(d, b);
  }
}

[[noreturn]] void out_of_memory(DeviceAlloc& d, c10::DeviceIndex index,
                                size_t nbytes, size_t seg) {
  struct nrn_device_info info{};
  nrn_device_info(device(index), &info);
  const Stats& st = d.stats;
  TORCH_CHECK_WITH(OutOfMemoryError, false, "neuron: out of device memory: "
                   "tried to allocate ", nbytes, " bytes (a segment of ", seg,
                   ") on neuron:", static_cast<int>(index), ", which has ",
                   info.mem_size, " bytes in all and ", info.mem_free,
                   " free; this process has ", st.allocated_bytes[kAll].current,
                   " bytes allocated and ", st.reserved_bytes[kAll].current,
                   " reserved by the caching allocator (torch.neuron.memory_summary() "
                   "shows where)");
}

// A new segment of @seg bytes for @nbytes on @stream; @d's lock is held.
Block* new_segment(DeviceAlloc& d, c10::DeviceIndex index, c10::StreamId stream,
                   bool small, size_t nbytes, size_t seg) {
  int64_t need = static_cast<int64_t>(seg);
  release_free_segments(d, [&] {
    return d.stats.reserved_bytes[kAll].current + need >
           2 * (d.stats.allocated_bytes[kAll].current + need) +
               static_cast<int64_t>(kCacheSlack);
  });
  nrn_buffer* buf = nullptr;
  int err = nrn_buffer_alloc(device(index), seg, NRN_MEM_DEVICE, &buf);
  if (err == -ENOMEM) {
    // Give the whole cache back to the card and try once more.
    sync_events(d);
    release_free_segments(d, [] { return true; });
    d.stats.num_alloc_retries++;
    err = nrn_buffer_alloc(device(index), seg, NRN_MEM_DEVICE, &buf);
  }
  if (err == -ENOMEM) {
    d.stats.num_ooms++;
    out_of_memory(d, index, nbytes, seg);
  }
  NEURON_CHECK(err);
  void* map = nullptr;
  err = nrn_buffer_map(buf, &map);
  if (err < 0) {
    nrn_buffer_free(buf);
    NEURON_CHECK(err);
  }
  d.stats.num_device_alloc++;
  add(d.stats.segment, small, 1);
  add(d.stats.reserved_bytes, small, need);
  auto* b = new Block{index, stream, small, buf, static_cast<char*>(map), 0, seg};
  d.segments[buf] = b;
  d.by_addr[b->map] = {b, seg};
  return b;
}

void neuron_free(void* ctx) {
  if (in_bad_fork())
    return;  // a forked child's copy of the parent's block: left alone
  auto* b = static_cast<Block*>(ctx);
  std::lock_guard<std::mutex> guard(g_lock);
  DeviceAlloc& d = g_alloc[b->device];
  b->allocated = false;
  add(d.stats.allocation, b->small, -1);
  add(d.stats.allocated_bytes, b->small, -static_cast<int64_t>(b->size));
  add(d.stats.requested_bytes, b->small, -static_cast<int64_t>(b->requested));
  for (c10::StreamId id : b->uses) {
    c10::Stream s(c10::Stream::UNSAFE,
                  c10::Device(c10::DeviceType::PrivateUse1, b->device), id);
    nrn_stream* ns = nrn_stream_of(s);
    nrn_event* ev = nullptr;
    if (nrn_event_create(device(b->device), &ev) == 0 &&
        nrn_event_record(ev, ns) == 0) {
      d.pending.push_back({ev, b});
      b->pending_events++;
    } else {
      // No event: wait for that stream now (a failure there means its
      // work will not run either).
      nrn_event_destroy(ev);
      nrn_stream_sync(ns);
    }
  }
  b->uses.clear();
  if (!b->pending_events)
    release_block(d, b);
}

struct NeuronAllocator final : c10::Allocator {
  c10::DataPtr allocate(size_t nbytes) override {
    check_not_forked();
    c10::DeviceIndex index = current_device();
    c10::Device dev(c10::DeviceType::PrivateUse1, index);
    if (nbytes == 0)
      return {nullptr, dev};
    c10::StreamId stream = current_stream(index).id();
    size_t size = (nbytes + kMinBlock - 1) / kMinBlock * kMinBlock;
    bool small = size <= kSmallRequest;
    std::lock_guard<std::mutex> guard(g_lock);
    DeviceAlloc& d = g_alloc[index];
    process_events(d);
    // Best fit among this stream's free blocks of the pool.
    Block key{index, stream, small, nullptr, nullptr, 0, size};
    auto& pool = d.pools[small];
    auto it = pool.lower_bound(&key);
    Block* b = nullptr;
    if (it != pool.end() && (*it)->stream == stream) {
      b = *it;
      pool_erase(d, b);
    } else {
      size_t seg = small ? kSmallSegment
                         : (size + kLargeRound - 1) / kLargeRound * kLargeRound;
      b = new_segment(d, index, stream, small, nbytes, seg);
    }
    size_t rest = b->size - size;
    if (small ? rest >= kMinBlock : rest > kSmallRequest) {
      auto* r = new Block{index, stream, small, b->buf, b->map, b->offset + size, rest};
      r->prev = b;
      r->next = b->next;
      if (b->next)
        b->next->prev = r;
      b->next = r;
      b->size = size;
      pool_insert(d, r);
    }
    b->allocated = true;
    b->requested = nbytes;
    add(d.stats.allocation, small, 1);
    add(d.stats.allocated_bytes, small, b->size);
    add(d.stats.active, small, 1);
    add(d.stats.active_bytes, small, b->size);
    add(d.stats.requested_bytes, small, nbytes);
    return {b->map + b->offset, b, &neuron_free, dev};
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

// The live block holding the @nbytes at @data's pointer, and the pointer's
// offset in it. A DataPtr the allocator made carries its block; one that
// points at the card's memory without it (a tensor back from a DLPack
// capsule of this process, at::from_blob) is looked up by address, and
// must lie within a block some tensor still holds: the card takes no other
// memory.
struct Where {
  Block* block;
  size_t delta;
};

Where locate(const c10::DataPtr& data, size_t nbytes) {
  if (!data.get())
    return {nullptr, 0};  // an empty storage (its DataPtr may still have a context)
  if (data.get_deleter() == &neuron_free)
    return {static_cast<Block*>(data.get_context()), 0};
  const auto* p = static_cast<const char*>(data.get());
  const c10::DeviceIndex index = data.device().index();
  TORCH_CHECK(index >= 0 && index < kMaxDevices, "neuron: a storage of ",
              data.device(), " that names no card");
  std::lock_guard<std::mutex> guard(g_lock);
  DeviceAlloc& d = g_alloc[index];
  auto it = d.by_addr.upper_bound(p);
  if (it != d.by_addr.begin()) {
    --it;
    if (p < it->first + it->second.second) {
      for (Block* b = it->second.first; b; b = b->next) {
        const char* start = b->map + b->offset;
        if (p < start || p >= start + b->size)
          continue;
        if (b->allocated && static_cast<size_t>(p - start) + nbytes <= b->size)
          return {b, static_cast<size_t>(p - start)};
        break;
      }
    }
  }
  TORCH_CHECK(false, "neuron: a storage of ", nbytes, " bytes at ",
              static_cast<const void*>(p), " on ", data.device(), " is not "
              "memory of a live neuron tensor: the card takes only the memory "
              "its allocator gave to tensors that still hold it (a DLPack "
              "capsule or at::from_blob pointer of another library, or of a "
              "freed tensor, cannot become a neuron tensor)");
}

}  // namespace

void hold_frees(c10::DeviceIndex index, bool hold) {
  std::lock_guard<std::mutex> guard(g_lock);
  DeviceAlloc& d = g_alloc[index];
  if (hold) {
    d.holds++;
    return;
  }
  TORCH_CHECK(d.holds > 0, "neuron: hold_frees(false) without hold_frees(true)");
  if (--d.holds)
    return;
  for (Block* b : d.held) {
    b->held = false;
    release_block(d, b);
  }
  d.held.clear();
}

std::vector<void*> protect_segments(c10::DeviceIndex index,
                                    const std::vector<nrn_buffer*>& bufs) {
  std::lock_guard<std::mutex> guard(g_lock);
  DeviceAlloc& d = g_alloc[index];
  std::vector<void*> out;
  for (nrn_buffer* buf : bufs) {
    auto it = d.segments.find(buf);
    if (it == d.segments.end())
      continue;  // not the allocator's (nothing else can reuse it)
    for (Block* b = it->second; b; b = b->next) {
      if (!b->allocated && !b->held && !b->pending_events && !b->kept)
        continue;  // free when the capture ended: the graph never touches it
      b->protects++;
      out.push_back(b);
    }
  }
  return out;
}

void unprotect(const std::vector<void*>& blocks) {
  std::lock_guard<std::mutex> guard(g_lock);
  for (void* p : blocks) {
    auto* b = static_cast<Block*>(p);
    if (--b->protects || !b->kept)
      continue;
    b->kept = false;
    release_block(g_alloc[b->device], b);
  }
}

DeviceSpan storage_span(const c10::Storage& storage) {
  check_not_forked();
  DeviceSpan imported;
  if (ipc_span(storage.data_ptr(), &imported))
    return imported;  // another process's storage (NeuronIpc.cpp)
  // Empty storages have no block.
  Where w = locate(storage.data_ptr(), storage.nbytes());
  return w.block ? DeviceSpan{w.block->buf, w.block->offset + w.delta}
                 : DeviceSpan{nullptr, 0};
}

void record_stream(const c10::DataPtr& data, const c10::Stream& s) {
  if (ipc_span(data, nullptr))
    return;  // freed only after its card's work (NeuronIpc.cpp)
  const Block* cb = locate(data, 0).block;
  if (!cb)
    return;
  TORCH_CHECK(s.device_type() == c10::DeviceType::PrivateUse1 &&
              s.device_index() == cb->device, "neuron: record_stream: the "
              "stream is on ", s.device(), ", the tensor on neuron:",
              static_cast<int>(cb->device));
  nrn_stream_of(s);  // a valid stream
  std::lock_guard<std::mutex> guard(g_lock);
  auto* b = const_cast<Block*>(cb);
  if (s.id() != b->stream &&
      std::find(b->uses.begin(), b->uses.end(), s.id()) == b->uses.end())
    b->uses.push_back(s.id());
}

std::vector<std::pair<std::string, int64_t>> allocator_stats(c10::DeviceIndex index) {
  static const char* const kTypes[] = {"all", "small_pool", "large_pool"};
  static const char* const kFields[] = {"current", "peak", "allocated", "freed"};
  std::lock_guard<std::mutex> guard(g_lock);
  const Stats& st = g_alloc[index].stats;
  std::vector<std::pair<std::string, int64_t>> out;
  auto pool = [&](const char* name, const std::array<Stat, kStatTypes>& s) {
    for (int t = 0; t < kStatTypes; t++) {
      const int64_t v[] = {s[t].current, s[t].peak, s[t].allocated, s[t].freed};
      for (int f = 0; f < 4; f++)
        out.emplace_back(std::string(name) + "." + kTypes[t] + "." + kFields[f], v[f]);
    }
  };
#define X(name) pool(#name, st.name);
  NEURON_POOL_STATS(X)
#undef X
#define X(name) out.emplace_back(#name, st.name);
  NEURON_COUNTERS(X)
#undef X
  return out;
}

void reset_peak_stats(c10::DeviceIndex index) {
  std::lock_guard<std::mutex> guard(g_lock);
  Stats& st = g_alloc[index].stats;
#define X(name) for (Stat& s : st.name) s.peak = s.current;
  NEURON_POOL_STATS(X)
#undef X
}

void reset_accumulated_stats(c10::DeviceIndex index) {
  std::lock_guard<std::mutex> guard(g_lock);
  Stats& st = g_alloc[index].stats;
#define X(name) for (Stat& s : st.name) s.allocated = s.freed = 0;
  NEURON_POOL_STATS(X)
#undef X
#define X(name) st.name = 0;
  NEURON_COUNTERS(X)
#undef X
}

void empty_cache(c10::DeviceIndex index) {
  std::lock_guard<std::mutex> guard(g_lock);
  DeviceAlloc& d = g_alloc[index];
  sync_events(d);
  release_free_segments(d, [] { return true; });
}

}  // namespace torch_neuron

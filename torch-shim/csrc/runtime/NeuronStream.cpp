// SPDX-License-Identifier: MIT
// The stream table of each device (see NeuronStream.h) and the per-thread
// current streams. Streams live until the process exits, as CUDA's pool.
#include <array>
#include <atomic>
#include <mutex>

#include "NeuronProfiler.h"
#include "NeuronStream.h"

namespace torch_neuron {
namespace {

constexpr int kStreamsPerDevice = 1 + 2 * kStreamPoolSize;
constexpr auto kType = c10::DeviceType::PrivateUse1;

struct DeviceStreams {
  std::atomic<nrn_stream*> streams[kStreamsPerDevice] = {};
  std::atomic<unsigned> next[2] = {};  // round-robin position of each pool
};

std::mutex g_create_lock;  // serialises the creation of streams
std::array<DeviceStreams, kMaxDevices> g_devices;
thread_local std::array<c10::StreamId, kMaxDevices> t_current{};

// 0 for the default stream, 1 for the pool of priority 0, 2 for priority -1.
int group_of(c10::StreamId id) {
  return id == 0 ? 0 : 1 + static_cast<int>((id - 1) / kStreamPoolSize);
}

// Create the default stream and, for a pool, the whole pool in order, so
// that the pool's streams take consecutive places on the card's cores.
void create_group(c10::DeviceIndex index, int group) {
  nrn_device* dev = device(index);
  DeviceStreams& d = g_devices[index];
  std::lock_guard<std::mutex> guard(g_create_lock);
  int first = group == 0 ? 0 : 1 + (group - 1) * kStreamPoolSize;
  int count = group == 0 ? 1 : kStreamPoolSize;
  auto create = [&](int id) {
    if (d.streams[id].load(std::memory_order_relaxed))
      return;
    nrn_stream* s = nullptr;
    NEURON_CHECK(nrn_stream_create(dev, &s));
    d.streams[id].store(s, std::memory_order_release);
  };
  create(0);
  for (int id = first; id < first + count; id++)
    create(id);
}

nrn_stream* lookup(c10::DeviceIndex index, c10::StreamId id) {
  DeviceStreams& d = g_devices[index];
  nrn_stream* s = d.streams[id].load(std::memory_order_acquire);
  if (C10_UNLIKELY(!s)) {
    create_group(index, group_of(id));
    s = d.streams[id].load(std::memory_order_acquire);
  }
  return s;
}

void check_stream(const c10::Stream& s) {
  TORCH_CHECK(s.device_type() == kType, "neuron: expected a neuron stream, "
              "got one of device ", s.device());
  checked_index(s.device_index());
  TORCH_CHECK(s.id() >= 0 && s.id() < kStreamsPerDevice, "neuron: ", s,
              " is not a stream of the neuron device (ids are 0 .. ",
              kStreamsPerDevice - 1, ")");
}

}  // namespace

c10::Stream default_stream(c10::DeviceIndex index) {
  return c10::Stream(c10::Stream::UNSAFE, c10::Device(kType, checked_index(index)), 0);
}

c10::Stream current_stream(c10::DeviceIndex index) noexcept {
  c10::StreamId id = index >= 0 && index < kMaxDevices ? t_current[index] : 0;
  return c10::Stream(c10::Stream::UNSAFE, c10::Device(kType, index), id);
}

c10::Stream pool_stream(c10::DeviceIndex index, int priority) {
  checked_index(index);
  int group = priority < 0 ? 2 : 1;
  unsigned k = g_devices[index].next[group - 1].fetch_add(1) % kStreamPoolSize;
  c10::StreamId id = 1 + (group - 1) * kStreamPoolSize + k;
  lookup(index, id);
  return c10::Stream(c10::Stream::UNSAFE, c10::Device(kType, index), id);
}

c10::Stream exchange_stream(const c10::Stream& s) noexcept {
  c10::DeviceIndex index = s.device_index();
  if (index < 0 || index >= kMaxDevices)
    return s;
  c10::Stream old = current_stream(index);
  t_current[index] = s.id();
  // Work batched on the stream being left goes to the card now: a stream
  // switch marks the end of a piece of work (as a CUDA launch would have
  // started it), and the next stream's work must be able to run beside it.
  if (old.id() != s.id() && old.id() >= 0 && old.id() < kStreamsPerDevice &&
      index < device_count()) {
    nrn_stream* left = g_devices[index].streams[old.id()].load(std::memory_order_acquire);
    if (left)
      nrn_stream_flush(left);  // an error surfaces at the next sync
  }
  return old;
}

int stream_priority(const c10::Stream& s) {
  check_stream(s);
  return group_of(s.id()) == 2 ? -1 : 0;
}

nrn_stream* nrn_stream_of(const c10::Stream& s) {
  check_stream(s);
  return lookup(s.device_index(), s.id());
}

nrn_stream* device_stream(c10::DeviceIndex index) {
  checked_index(index);
  c10::StreamId id = t_current[index];
  TORCH_CHECK(id >= 0 && id < kStreamsPerDevice, "neuron: the current stream "
              "of neuron:", static_cast<int>(index), " (id ", id,
              ") is not a neuron stream");
  nrn_stream* s = lookup(index, id);
  if (C10_UNLIKELY(profiler::active()))
    profiler::note_stream(index, s);  // torch.profiler: the op's card work
  return s;
}

std::vector<c10::Stream> created_streams(c10::DeviceIndex index) {
  checked_index(index);
  std::vector<c10::Stream> out;
  for (int id = 0; id < kStreamsPerDevice; id++)
    if (g_devices[index].streams[id].load(std::memory_order_acquire))
      out.emplace_back(c10::Stream::UNSAFE, c10::Device(kType, index), id);
  return out;
}

void synchronize_device(c10::DeviceIndex index) {
  int first_error = 0;
  // Submit every stream's batch before waiting for any, so that the
  // streams' work runs at the same time rather than one after the other.
  for (const c10::Stream& s : created_streams(index))
    nrn_stream_flush(nrn_stream_of(s));
  for (const c10::Stream& s : created_streams(index)) {
    int err = nrn_stream_sync(nrn_stream_of(s));
    if (err < 0 && !first_error)
      first_error = err;
  }
  NEURON_CHECK(first_error);
}

}  // namespace torch_neuron

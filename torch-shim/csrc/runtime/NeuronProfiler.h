// SPDX-License-Identifier: MIT
// torch.profiler on the card (NeuronProfiler.cpp): while a profile with
// ProfilerActivity.PrivateUse1 runs, the card work each operator issues is
// bracketed by timing events on the stream it used, and reported to Kineto
// as device activities linked to the operator. The shim's issuing paths call
// the two hooks below; when no profile runs they cost one relaxed load.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "../NeuronHelpers.h"

namespace torch_neuron::profiler {

extern std::atomic<bool> g_active;

// A profile with device activities is running.
inline bool active() noexcept {
  return g_active.load(std::memory_order_relaxed);
}

// What an interval of an operator's card work is.
enum class Work : uint8_t { Kernel, CopyH2D, CopyD2H };

// device_stream(): the running operator issues work on @s of card @index.
void note_stream(c10::DeviceIndex index, nrn_stream* s) noexcept;
// Before a host<->card copy of @bytes: the operator's next work on card
// @index (from its next note_stream()) is that copy, on the DMA queue.
void note_copy(c10::DeviceIndex index, Work kind, uint64_t bytes) noexcept;

// ---- Between the collector (NeuronProfiler.cpp) and Kineto (NeuronKineto.cpp).

// Lanes of a card in the trace: NeuronCore c is lane c, DMA queue q is
// kDmaLane + q.
constexpr uint32_t kDmaLane = 1000;

// One interval of card work of one operator, in host wall-clock ns.
struct DeviceRecord {
  uint64_t correlation;  // the operator's Kineto correlation id
  c10::DeviceIndex device;
  Work kind;
  uint32_t lane;
  uint64_t bytes;  // copies
  int64_t start_ns;
  int64_t end_ns;
};

// A profile starts: operators' card work is bracketed from now on.
void begin_session();
// It stops: waits for the bracketed work and returns its intervals; what
// could not be measured is described in @errors.
std::vector<DeviceRecord> end_session(std::vector<std::string>* errors);
// TIMESTAMP instructions the profiler issued since the process started
// (torch.ops.neuron.profiler_timestamps(): none outside sessions).
int64_t timestamps_issued();
// Kineto's correlation ids: an operator starts / ends on this thread.
void push_correlation(uint64_t id) noexcept;
void pop_correlation() noexcept;

}  // namespace torch_neuron::profiler

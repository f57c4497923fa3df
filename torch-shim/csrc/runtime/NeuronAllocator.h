// SPDX-License-Identifier: MIT
// The caching allocator of device memory (NeuronAllocator.cpp): record_stream
// and the statistics torch.neuron.memory_stats() reports.
#pragma once

#include <c10/core/Allocator.h>
#include <c10/core/Stream.h>

#include "../NeuronHelpers.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace torch_neuron {

// @data (a neuron DataPtr) is also used by the work of @s: its block is not
// reused before the work issued to @s until it is freed has completed.
void record_stream(const c10::DataPtr& data, const c10::Stream& s);

// The statistics of device @index under PyTorch's names
// ("allocated_bytes.all.current", "num_alloc_retries", ...).
std::vector<std::pair<std::string, int64_t>> allocator_stats(c10::DeviceIndex index);
void reset_peak_stats(c10::DeviceIndex index);
void reset_accumulated_stats(c10::DeviceIndex index);
// Give the cached (unused) segments back to the card, once the work that
// used them is done.
void empty_cache(c10::DeviceIndex index);
// While held (calls nest), memory freed on device @index is not reused:
// each allocation of a capture gets bytes of its own, so the instructions
// of a freed temporary never land in a later output or argument (compiled
// mode, csrc/compile). Releasing the last hold frees the held blocks.
void hold_frees(c10::DeviceIndex index, bool hold);
// A graph replayed in place (NeuronGraph.cpp) writes the bytes its capture
// touched at every replay, whoever holds them by then. protect_segments()
// marks every block of the segments @bufs that is not free (allocated, or
// freed during the capture and still held): such a block, once freed, is
// kept -- given to no other tensor -- until unprotect() of the handles it
// returned (buffers that are not the allocator's segments are skipped).
std::vector<void*> protect_segments(c10::DeviceIndex index,
                                    const std::vector<nrn_buffer*>& bufs);
void unprotect(const std::vector<void*>& blocks);

}  // namespace torch_neuron

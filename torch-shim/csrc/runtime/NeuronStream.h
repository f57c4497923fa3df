// SPDX-License-Identifier: MIT
// The streams of a device as PyTorch sees them (c10::Stream), each one a
// libneuron stream, and this thread's current stream of each device.
//
// Stream ids of a device: 0 is the default stream; 1 .. kStreamPoolSize the
// pool of priority 0, then as many of priority -1 ("high"). A pool is
// created whole on its first request, after the default stream, and handed
// out round-robin: libneuron places each new stream on the next NeuronCore
// and DMA queue, so consecutive handouts run on different cores. The card's
// queues have no priorities: a high-priority stream is a stream of its own
// (it does not wait behind the normal pool's work) and reports priority -1,
// nothing more.
#pragma once

#include <c10/core/Stream.h>

#include <vector>

#include "../NeuronHelpers.h"

namespace torch_neuron {

constexpr int kStreamPoolSize = 4;

c10::Stream default_stream(c10::DeviceIndex index);
// This thread's current stream of device @index (never throws).
c10::Stream current_stream(c10::DeviceIndex index) noexcept;
// The next stream of the pool of @priority (< 0: the high-priority pool).
c10::Stream pool_stream(c10::DeviceIndex index, int priority);
// Make @s the current stream of its device on this thread; the previous one.
c10::Stream exchange_stream(const c10::Stream& s) noexcept;
// 0 or -1; throws if @s is no stream of a neuron device.
int stream_priority(const c10::Stream& s);
// The libneuron stream behind @s (created on first use); throws if @s is no
// stream of a neuron device.
nrn_stream* nrn_stream_of(const c10::Stream& s);
// The streams of device @index created so far.
std::vector<c10::Stream> created_streams(c10::DeviceIndex index);
// Wait for the work of every stream of device @index; raises the first
// error once all were waited for.
void synchronize_device(c10::DeviceIndex index);

}  // namespace torch_neuron

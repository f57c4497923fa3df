// SPDX-License-Identifier: MIT
// Pinned host memory: CPU tensors whose bytes are a host buffer of a card
// (NRN_MEM_HOST), which that card's DMA engine reads and writes directly,
// so copies from and to them can be one asynchronous DMA job.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Allocator.h>

#include <optional>

#include "../NeuronHelpers.h"

namespace torch_neuron {

// The allocator of tensor.pin_memory() and torch.empty(..., pin_memory=True):
// blocks of the current device's host buffers, cached by power-of-two size.
c10::Allocator* host_allocator();

// Whether @ptr points into a pinned block (torch.Tensor.is_pinned()).
bool is_pinned_ptr(const void* ptr);

// Where the CPU tensor @t's bytes (from its element 0) live when they are
// in a pinned block that card @index can reach by DMA; nullopt otherwise
// (pageable memory, or a block of another card).
std::optional<DeviceSpan> pinned_span(const at::Tensor& t, c10::DeviceIndex index);

// After issuing a DMA job on @s (a stream of card @index) that reads or
// writes the pinned tensor @t: the block is not handed out again before
// that job is done. With @wait, also wait for it here (a blocking copy).
void pinned_used(const at::Tensor& t, nrn_stream* s, c10::DeviceIndex index,
                 bool wait);

}  // namespace torch_neuron

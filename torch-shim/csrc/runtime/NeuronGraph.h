// SPDX-License-Identifier: MIT
// Whole sequences of work captured once and replayed in place
// (torch.neuron.NeuronGraph, NeuronGraph.cpp).
#pragma once

#include <c10/core/Device.h>

namespace torch_neuron {

// True while a NeuronGraph captures on device @index. A copy from pageable
// host memory is refused then: the capture would keep the bytes it had, and
// every replay would copy those again instead of what the host holds by then.
bool in_graph_capture(c10::DeviceIndex index) noexcept;

}  // namespace torch_neuron

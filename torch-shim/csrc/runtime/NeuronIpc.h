// SPDX-License-Identifier: MIT
// Neuron storages shared between processes, and fork() (NeuronIpc.cpp).
#pragma once

#include <c10/core/Allocator.h>

#include "../NeuronHelpers.h"

namespace torch_neuron {

// Whether this process was forked (no exec) from one that had a card open:
// then the cards cannot be used here (libneuron's nrn_forked()).
bool in_bad_fork() noexcept;
// Raises, saying to use spawn, in such a process.
void check_not_forked();

// If @data is a storage imported from another process, sets *@span (when
// not null) to its buffer and offset and returns true.
bool ipc_span(const c10::DataPtr& data, DeviceSpan* span);

}  // namespace torch_neuron

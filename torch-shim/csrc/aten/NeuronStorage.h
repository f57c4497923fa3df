// SPDX-License-Identifier: MIT
// Storages of neuron tensors: growing one in place (resize_, set_, and
// UntypedStorage.resize_() through the hooks).
#pragma once

#include <c10/core/StorageImpl.h>

namespace torch_neuron {

// Give the neuron storage @st @nbytes bytes: a new block of its device
// holding the old contents (up to @nbytes), in place, so every tensor that
// shares the storage sees it. Throws if the storage is not resizable.
void resize_storage_bytes(c10::StorageImpl* st, size_t nbytes);

}  // namespace torch_neuron

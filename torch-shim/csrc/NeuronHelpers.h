// SPDX-License-Identifier: MIT
// Shared by the shim's C++ files: the device table, and NEURON_CHECK, which
// turns a libneuron -errno into a c10::Error carrying where it happened.
#pragma once

#include <c10/core/Device.h>
#include <c10/core/Storage.h>
#include <c10/util/Exception.h>

extern "C" {
#include <libneuron.h>
}

namespace torch_neuron {

// The most cards a process uses (more are not counted).
constexpr int kMaxDevices = 64;

// Cards seen by libneuron; 0 (never an exception) when there are none.
c10::DeviceIndex device_count() noexcept;
// @index as a device index; throws when no such card exists.
c10::DeviceIndex checked_index(int64_t index);
// The card @index, opened on first use; throws on a bad index.
nrn_device* device(c10::DeviceIndex index);
c10::DeviceIndex current_device();
void set_device(c10::DeviceIndex index);

// Where a neuron storage's bytes live: a libneuron buffer and the byte
// offset of the storage's first byte in it (the allocator may place several
// storages in one buffer). Empty storages have no buffer.
struct DeviceSpan {
  nrn_buffer* buf;
  uint64_t offset;
};
DeviceSpan storage_span(const c10::Storage& storage);

// The libneuron stream of this thread's current stream of device @index
// (torch.neuron.current_stream(); the default stream unless one was set,
// see NeuronStream.h). Operations and copies of the device are issued on
// it, in order.
nrn_stream* device_stream(c10::DeviceIndex index);

[[noreturn]] void check_failed(int err, const char* expr, const char* func,
                               const char* file, int line);

// The operator being run when a dtype is refused, for the message: the
// name c10's dispatcher gives it (empty if no operator is known; the names
// are tracked from track_op_names() on: aten/Dtype.cpp).
std::string current_op_name();
void track_op_names();

} // namespace torch_neuron

#define NEURON_CHECK(expr)                                                    \
  do {                                                                        \
    int neuron_err_ = (expr);                                                 \
    if (C10_UNLIKELY(neuron_err_ < 0))                                        \
      ::torch_neuron::check_failed(neuron_err_, #expr, __func__, __FILE__,    \
                                   __LINE__);                                 \
  } while (0)

// SPDX-License-Identifier: MIT
// The cards, opened lazily through libneuron, and the current device.
#include <array>
#include <mutex>

#include "../NeuronHelpers.h"
#include "NeuronIpc.h"

namespace torch_neuron {

namespace {
std::mutex g_open_lock;  // protects g_devices
std::array<nrn_device*, kMaxDevices> g_devices{};
thread_local c10::DeviceIndex t_current = 0;
} // namespace

c10::DeviceIndex device_count() noexcept {
  // Counted once: PyTorch expects the count to stay put in a process.
  static const c10::DeviceIndex count = [] {
    int n = nrn_device_count();
    return static_cast<c10::DeviceIndex>(n < 0 ? 0 : std::min(n, kMaxDevices));
  }();
  return count;
}

c10::DeviceIndex checked_index(int64_t index) {
  TORCH_CHECK(index >= 0 && index < device_count(), "neuron device index ",
              index, " is out of range: there are ",
              static_cast<int>(device_count()), " neuron devices");
  return static_cast<c10::DeviceIndex>(index);
}

nrn_device* device(c10::DeviceIndex index) {
  check_not_forked();  // before the lock: a parent's thread may have held it
  checked_index(index);
  std::lock_guard<std::mutex> guard(g_open_lock);
  if (!g_devices[index])
    NEURON_CHECK(nrn_device_open(index, &g_devices[index]));
  return g_devices[index];
}

c10::DeviceIndex current_device() {
  return t_current;
}

void set_device(c10::DeviceIndex index) {
  t_current = checked_index(index);
}

void check_failed(int err, const char* expr, const char* func,
                  const char* file, int line) {
  if (err == -ENOMEM)
    TORCH_CHECK_WITH(OutOfMemoryError, false, "neuron: out of device memory (",
                     expr, " in ", func, " at ", file, ":", line, ")");
  TORCH_CHECK(false, "neuron: ", nrn_strerror(err), " (", expr, " in ", func,
              " at ", file, ":", line, ")");
}

} // namespace torch_neuron

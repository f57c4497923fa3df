// SPDX-License-Identifier: MIT
// The cards, opened lazily through libneuron, and the current device.
#include <array>
#include <climits>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <torch/library.h>

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

namespace {
// What a card-side error is reported with: per compiled graph (by
// nrn_graph_id()), a name and, per captured instruction, the source that
// made it (the kernel language's lines; empty for torch.compile's graphs).
struct GraphSources {
  std::string name;
  std::vector<std::string> lines;
};
std::mutex g_sources_lock;
std::map<uint64_t, GraphSources> g_sources;

// " in <kernel> instruction i ..." for the site of the error behind the
// last -EIO of the current stream, or "" when it is not known.
std::string error_site() {
  nrn_error_site site{};
  if (nrn_stream_error_site(device_stream(current_device()), &site) != 0)
    return "";
  std::string out = std::string(": ") + nrn_device_error_name(site.code);
  if (site.job_insn == UINT_MAX)
    return out;
  if (!site.graph_id)
    return out + " at instruction " + std::to_string(site.job_insn) + " of its job";
  std::lock_guard<std::mutex> guard(g_sources_lock);
  auto it = g_sources.find(site.graph_id);
  out += " in ";
  out += it == g_sources.end() ? "compiled graph " + std::to_string(site.graph_id)
                               : it->second.name;
  out += ", instruction " + std::to_string(site.graph_insn);
  if (site.origin != UINT_MAX) {
    out += " (captured instruction " + std::to_string(site.origin) + ")";
    if (it != g_sources.end() && site.origin < it->second.lines.size())
      out += ", from " + it->second.lines[site.origin];
  }
  return out;
}

void register_graph_sources(int64_t graph_id, std::string name,
                            std::vector<std::string> lines) {
  std::lock_guard<std::mutex> guard(g_sources_lock);
  g_sources[static_cast<uint64_t>(graph_id)] = {std::move(name), std::move(lines)};
}
} // namespace

void check_failed(int err, const char* expr, const char* func,
                  const char* file, int line) {
  if (err == -ENOMEM)
    TORCH_CHECK_WITH(OutOfMemoryError, false, "neuron: out of device memory (",
                     expr, " in ", func, " at ", file, ":", line, ")");
  if (err == -EDOM) {
    std::string op = current_op_name();
    TORCH_CHECK(false, "neuron: ", op.empty() ? "" : op + ": ", "the card does not "
                "compute this on complex64 tensors (docs/complex.md lists what it "
                "does) (", expr, " in ", func, " at ", file, ":", line, ")");
  }
  std::string where;
  if (err == -EIO) {
    try {
      where = error_site();
    } catch (...) {  // no device: the plain message
    }
  }
  TORCH_CHECK(false, "neuron: ", nrn_strerror(err), where, " (", expr, " in ", func,
              " at ", file, ":", line, ")");
}

} // namespace torch_neuron

TORCH_LIBRARY_FRAGMENT(neuron, m) {
  // The sources a card-side error in compiled graph @graph_id is reported
  // with (torch_neuron/kernels/jit.py registers each kernel's lines).
  m.def("register_graph_sources(int graph_id, str name, str[] lines) -> ()",
        &torch_neuron::register_graph_sources);
}

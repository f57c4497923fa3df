// SPDX-License-Identifier: MIT
// The CPU fallback: an operator with no neuron kernel runs on the CPU, its
// tensors copied out and back. It is loud (a warning naming the operator,
// once per operator), countable (torch_neuron.fallback_stats()), and can be
// made an error (TORCH_NEURON_FALLBACK=error).
#include <ATen/native/CPUFallback.h>
#include <torch/library.h>

#include <cstdlib>
#include <map>
#include <mutex>
#include <string>

#include "../NeuronHelpers.h"

namespace torch_neuron {
namespace {

std::mutex g_stats_lock;
std::map<std::string, int64_t> g_stats; // operator name -> calls

bool fallback_is_error() {
  const char* v = std::getenv("TORCH_NEURON_FALLBACK");
  return v && std::string(v) == "error";
}

void neuron_cpu_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const auto& name = op.schema().operator_name();
  std::string full = name.overload_name.empty()
                         ? name.name
                         : name.name + "." + name.overload_name;
  bool first;
  {
    std::lock_guard<std::mutex> guard(g_stats_lock);
    first = g_stats[full]++ == 0;
  }
  TORCH_CHECK(!fallback_is_error(), "neuron: operator ", full,
              " has no neuron kernel and TORCH_NEURON_FALLBACK=error forbids "
              "running it on the CPU");
  if (first)
    TORCH_WARN("neuron: operator ", full, " has no neuron kernel; it runs on "
               "the CPU (slow). torch_neuron.fallback_stats() counts these.");
  at::native::cpu_fallback(op, stack);
}

std::tuple<std::vector<std::string>, std::vector<int64_t>> fallback_stats() {
  std::lock_guard<std::mutex> guard(g_stats_lock);
  std::vector<std::string> names;
  std::vector<int64_t> counts;
  for (const auto& [n, c] : g_stats) {
    names.push_back(n);
    counts.push_back(c);
  }
  return {names, counts};
}

void reset_fallback_stats() {
  std::lock_guard<std::mutex> guard(g_stats_lock);
  g_stats.clear();
}

int64_t neuron_device_count() {
  return device_count();
}

int64_t neuron_current_device() {
  return current_device();
}

void neuron_set_device(int64_t index) {
  set_device(static_cast<c10::DeviceIndex>(index));
}

} // namespace
} // namespace torch_neuron

TORCH_LIBRARY_IMPL(_, PrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<
             &torch_neuron::neuron_cpu_fallback>());
}

// Helpers the Python package calls (torch.ops.neuron.*).
TORCH_LIBRARY(neuron, m) {
  m.def("fallback_stats() -> (str[], int[])", &torch_neuron::fallback_stats);
  m.def("reset_fallback_stats() -> ()", &torch_neuron::reset_fallback_stats);
  m.def("device_count() -> int", &torch_neuron::neuron_device_count);
  m.def("current_device() -> int", &torch_neuron::neuron_current_device);
  m.def("set_device(int index) -> ()", &torch_neuron::neuron_set_device);
}

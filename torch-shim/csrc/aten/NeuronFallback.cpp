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
#include "../runtime/NeuronAllocator.h"

namespace torch_neuron {
namespace {

std::mutex g_stats_lock;
std::map<std::string, int64_t> g_stats; // operator name -> calls

bool fallback_is_error() {
  const char* v = std::getenv("TORCH_NEURON_FALLBACK");
  return v && std::string(v) == "error";
}

bool is_list_of(const c10::Argument& a, c10::TypeKind elem) {
  auto list = a.type()->cast<c10::ListType>();
  return list && list->getElementType()->kind() == elem;
}

// _foreach_X(lists...) is X applied per index: find X's per-tensor overload
// with the same arguments and call it n times. Returns false if there is
// none (the operator then falls back to the CPU).
bool foreach_decompose(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  static const std::string prefix = "aten::_foreach_";
  const c10::FunctionSchema& schema = op.schema();
  if (schema.name().rfind(prefix, 0) != 0)
    return false;
  std::string base = "aten::" + schema.name().substr(prefix.size());
  const std::string& ov = schema.overload_name();
  std::vector<std::string> cands;
  if (ov == "List" || ov == "Tensor")
    cands = {"Tensor", ""};
  else if (ov == "Scalar" || ov == "ScalarList")
    cands = {"Scalar", ""};
  else
    cands = {ov, ""};
  std::optional<c10::OperatorHandle> per;
  for (const auto& c : cands) {
    per = c10::Dispatcher::singleton().findSchema({base, c});
    if (per)
      break;
  }
  size_t nargs = schema.arguments().size();
  if (!per || per->schema().arguments().size() != nargs ||
      !is_list_of(schema.arguments()[0], c10::TypeKind::TensorType))
    return false;
  std::vector<c10::IValue> args(stack->end() - nargs, stack->end());
  size_t n = args[0].toTensorList().size();
  bool functional = !schema.returns().empty();
  std::vector<at::Tensor> results;
  for (size_t i = 0; i < n; i++) {
    torch::jit::Stack st;
    for (size_t j = 0; j < nargs; j++) {
      const c10::Argument& a = schema.arguments()[j];
      if (is_list_of(a, c10::TypeKind::TensorType) && args[j].isTensorList())
        st.emplace_back(args[j].toTensorList().get(i));
      else if (a.type()->cast<c10::ListType>() && args[j].isList())
        st.emplace_back(args[j].toListRef()[i]);
      else
        st.push_back(args[j]);
    }
    per->callBoxed(&st);
    if (functional)
      results.push_back(st.at(0).toTensor());
  }
  torch::jit::drop(*stack, nargs);
  if (functional)
    stack->emplace_back(c10::List<at::Tensor>(results));
  return true;
}

void neuron_cpu_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  if (foreach_decompose(op, stack))
    return;
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

void synchronize(int64_t index);

int64_t neuron_device_count() {
  return device_count();
}

// allocated, reserved, peak allocated, peak reserved (bytes)
std::vector<int64_t> memory_stats(int64_t index) {
  set_device(static_cast<c10::DeviceIndex>(index));
  AllocatorStats st = allocator_stats(static_cast<c10::DeviceIndex>(index));
  return {st.allocated, st.reserved, st.peak_allocated, st.peak_reserved};
}

void reset_peak_memory_stats(int64_t index) {
  reset_peak_stats(static_cast<c10::DeviceIndex>(index));
}

void neuron_empty_cache(int64_t index) {
  synchronize(index);
  empty_cache(static_cast<c10::DeviceIndex>(index));
}

void synchronize(int64_t index) {
  NEURON_CHECK(nrn_stream_sync(device_stream(static_cast<c10::DeviceIndex>(index))));
}

std::string device_name(int64_t index) {
  struct nrn_device_info info;
  NEURON_CHECK(nrn_device_info(device(static_cast<c10::DeviceIndex>(index)), &info));
  return "Trainium (virtual) " + std::string(info.pci_address);
}

// cores, dma queues, memory bytes, model version
std::vector<int64_t> device_properties(int64_t index) {
  struct nrn_device_info info;
  NEURON_CHECK(nrn_device_info(device(static_cast<c10::DeviceIndex>(index)), &info));
  return {info.num_cores, info.num_dma_queues, static_cast<int64_t>(info.mem_size),
          info.model_version};
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
  m.def("memory_stats(int index) -> int[]", &torch_neuron::memory_stats);
  m.def("reset_peak_memory_stats(int index) -> ()", &torch_neuron::reset_peak_memory_stats);
  m.def("empty_cache(int index) -> ()", &torch_neuron::neuron_empty_cache);
  m.def("synchronize(int index) -> ()", &torch_neuron::synchronize);
  m.def("device_name(int index) -> str", &torch_neuron::device_name);
  m.def("device_properties(int index) -> int[]", &torch_neuron::device_properties);
  m.def("current_device() -> int", &torch_neuron::neuron_current_device);
  m.def("set_device(int index) -> ()", &torch_neuron::neuron_set_device);
}

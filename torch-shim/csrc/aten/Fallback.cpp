// SPDX-License-Identifier: MIT
// The CPU fallback: an operator with no neuron kernel runs on the CPU, its
// tensors copied out and back; so does one whose inputs its kernel cannot
// do the CPU's way (run_on_cpu). It is loud (a warning naming the operator,
// once per operator), countable (torch_neuron.fallback_stats()), and can be
// made an error (TORCH_NEURON_FALLBACK=error).
#include <ATen/native/CPUFallback.h>
#include <ATen/ops/_to_copy_native.h>
#include <ATen/ops/copy_native.h>
#include <ATen/ops/empty_like_native.h>
#include <torch/csrc/autograd/autograd_not_implemented_fallback.h>
#include <torch/library.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "../NeuronHelpers.h"

namespace torch_neuron {
namespace {

std::mutex g_stats_lock;
std::map<std::string, int64_t> g_stats; // operator name -> calls

bool fallback_is_error() {
  const char* v = std::getenv("TORCH_NEURON_FALLBACK");
  return v && std::string(v) == "error";
}

// Before @op runs on the CPU: refuses a view (through the CPU it would alias
// a copy, and writes through it would be lost), counts the call, refuses it
// under TORCH_NEURON_FALLBACK=error, and warns the first time, saying @why
// it is not on the card.
void announce(const c10::OperatorHandle& op, const char* why) {
  const auto& name = op.schema().operator_name();
  std::string full = name.overload_name.empty()
                         ? name.name
                         : name.name + "." + name.overload_name;
  for (const auto& ret : op.schema().returns())
    TORCH_CHECK(!ret.alias_info() || ret.alias_info()->isWrite(), "neuron: "
                "operator ", full, " returns a view and ", why, "; the CPU fallback "
                "cannot return a view of a neuron tensor");
  bool first;
  {
    std::lock_guard<std::mutex> guard(g_stats_lock);
    first = g_stats[full]++ == 0;
  }
  TORCH_CHECK(!fallback_is_error(), "neuron: operator ", full, " ", why,
              " and TORCH_NEURON_FALLBACK=error forbids running it on the CPU");
  if (first)
    TORCH_WARN("neuron: operator ", full, " ", why, "; it runs on the CPU "
               "(slow). torch_neuron.fallback_stats() counts these.");
}

// Runs @op on the CPU, loudly: @why says why it is not on the card.
void run_on_cpu_because(const c10::OperatorHandle& op, torch::jit::Stack* stack,
                        const char* why) {
  announce(op, why);
  at::native::cpu_fallback(op, stack);
}

// (The _foreach_* operators never come here: their CompositeExplicitAutograd
// kernels apply the per-tensor operator, which the card runs.)
void neuron_cpu_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  run_on_cpu_because(op, stack, "has no neuron kernel");
}

// An operator given a nested tensor on neuron: its tensors are copied to
// the CPU (nested ones stay nested) and the operator dispatched again from
// the top, which cpu_fallback() does not do (it calls the dense CPU
// kernel); tensor results come back. In-place operators are refused: the
// results would land in copies.
void nested_cpu_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const char* why = "is given a nested tensor, which no neuron kernel takes";
  const auto& schema = op.schema();
  for (const auto& arg : schema.arguments())
    TORCH_CHECK(!arg.alias_info() || !arg.alias_info()->isWrite(), "neuron: operator ",
                schema.operator_name(), " writes its argument in place and ", why,
                "; it cannot run on a nested neuron tensor");
  announce(op, why);
  size_t n = schema.arguments().size();
  std::optional<c10::Device> device;
  auto to_cpu = [&device](const at::Tensor& t) {
    if (!t.defined() || t.device().is_cpu())
      return t;
    device = t.device();
    return t.cpu();
  };
  for (size_t i = stack->size() - n; i < stack->size(); i++) {
    c10::IValue& v = (*stack)[i];
    if (v.isTensor()) {
      v = to_cpu(v.toTensor());
    } else if (v.isTensorList()) {
      auto list = v.toTensorList();
      for (size_t i = 0; i < list.size(); i++)
        list[i] = to_cpu(static_cast<at::Tensor>(list[i]));
    }
  }
  op.callBoxed(stack);
  TORCH_INTERNAL_ASSERT(device, "the nested fallback found no neuron tensor");
  for (size_t i = stack->size() - schema.returns().size(); i < stack->size(); i++) {
    c10::IValue& v = (*stack)[i];
    if (v.isTensor() && v.toTensor().defined()) {
      v = v.toTensor().to(*device);
    } else if (v.isTensorList()) {
      auto list = v.toTensorList();
      for (size_t i = 0; i < list.size(); i++)
        list[i] = static_cast<at::Tensor>(list[i]).to(*device);
    }
  }
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

// Route @names (comma-separated, e.g. "aten::relu,aten::add.Tensor") to the
// CPU fallback, overriding their neuron kernels for the rest of the process:
// TORCH_NEURON_DISABLE_KERNELS shows what a missing kernel would do (the
// tests must notice it).
void disable_kernels(const std::string& names) {
  static std::mutex lock;
  static std::vector<std::unique_ptr<torch::Library>> libs;
  std::lock_guard<std::mutex> guard(lock);
  size_t start = 0;
  while (start <= names.size()) {
    size_t end = names.find(',', start);
    if (end == std::string::npos)
      end = names.size();
    std::string name = names.substr(start, end - start);
    start = end + 1;
    if (name.empty())
      continue;
    TORCH_CHECK(name.rfind("aten::", 0) == 0, "neuron: cannot disable '", name,
                "': only aten:: operators have neuron kernels");
    auto lib = std::make_unique<torch::Library>(
        torch::Library::IMPL, "aten", c10::DispatchKey::PrivateUse1, __FILE__,
        __LINE__);
    std::string op = name.substr(6);
    // A view through the CPU fallback would alias a CPU copy: wrong numbers.
    size_t dot = op.find('.');
    auto handle = c10::Dispatcher::singleton().findSchema(
        {"aten::" + op.substr(0, dot),
         dot == std::string::npos ? "" : op.substr(dot + 1)});
    TORCH_CHECK(handle, "neuron: cannot disable '", name, "': no such operator");
    for (const auto& ret : handle->schema().returns())
      TORCH_CHECK(!ret.alias_info(), "neuron: cannot disable '", name,
                  "': it returns a view, which the CPU fallback cannot give");
    lib->impl(op.c_str(), torch::CppFunction::makeFromBoxedFunction<
                              &neuron_cpu_fallback>());
    libs.push_back(std::move(lib));
  }
}

} // namespace

void run_on_cpu(const char* name, const char* overload, torch::jit::Stack* stack,
                const char* why) {
  run_on_cpu_because(c10::Dispatcher::singleton().findSchemaOrThrow(name, overload),
                     stack, why);
}

} // namespace torch_neuron

TORCH_LIBRARY_IMPL(_, PrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<
             &torch_neuron::neuron_cpu_fallback>());
}

// A library's operator with kernels for backends only (TORCH_LIBRARY_IMPL(ns,
// CPU), torch.library's impl(..., "CPU")) and none for autograd: what PyTorch
// gives the autograd keys of its own backends (AutogradCPU, AutogradCUDA...)
// and leaves to a PrivateUse1 backend, so that such an operator reaches the
// fallback above (loud, counted) instead of failing in AutogradPrivateUse1.
TORCH_LIBRARY_IMPL(_, AutogradPrivateUse1, m) {
  m.fallback(torch::autograd::basicAutogradNotImplementedFallback());
}

// Nested tensors on neuron (torch.nested, nn.TransformerEncoder's inference
// path with a padding mask): their buffer lives on the card, but no neuron
// kernel takes one, so every operator on them runs on the CPU through the
// same loud fallback. Moving them between devices and allocating them is
// PyTorch's own device-generic code.
TORCH_LIBRARY_IMPL(_, NestedTensorPrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<
             &torch_neuron::nested_cpu_fallback>());
}
TORCH_LIBRARY_IMPL(aten, NestedTensorPrivateUse1, m) {
  m.impl("_to_copy", at::native::_to_copy_nested);
  m.impl("empty_like", at::native::empty_like_nested);
  m.impl("copy_", at::native::copy_nested_);
}

// The fallback's own helpers in torch.ops.neuron (the rest: NeuronModule.cpp).
TORCH_LIBRARY_FRAGMENT(neuron, m) {
  m.def("fallback_stats() -> (str[], int[])", &torch_neuron::fallback_stats);
  m.def("reset_fallback_stats() -> ()", &torch_neuron::reset_fallback_stats);
  m.def("disable_kernels(str names) -> ()", &torch_neuron::disable_kernels);
}

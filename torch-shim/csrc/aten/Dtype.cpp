// SPDX-License-Identifier: MIT
// Naming the operator that refused a dtype. A type that is not the card's
// (uint16 to uint64, the float8 types) can be stored on a neuron device (a
// CPU fallback may return it) but no instruction takes it: to_nrn()
// (NeuronOps.h) refuses it, and its message names the operator being run.
// The dispatcher knows that name only through RecordFunction, which costs
// a little on every operator call, so the observer is installed the first
// time such a tensor is made on a neuron device: a process that never
// does pays nothing.
#include <ATen/record_function.h>

#include <mutex>
#include <string>
#include <vector>

#include "NeuronOps.h"

namespace torch_neuron {
namespace {

// The operators running on this thread, innermost last.
thread_local std::vector<const char*> t_ops;

std::unique_ptr<at::ObserverContext> op_enter(const at::RecordFunction& fn) {
  t_ops.push_back(fn.name());
  return nullptr;
}

void op_leave(const at::RecordFunction&, at::ObserverContext*) {
  if (!t_ops.empty())
    t_ops.pop_back();
}

}  // namespace

void track_op_names() {
  static std::once_flag once;
  std::call_once(once, [] {
    at::addGlobalCallback(at::RecordFunctionCallback(op_enter, op_leave)
                              .needsInputs(false)
                              .scopes({at::RecordScope::FUNCTION}));
  });
}

std::string current_op_name() {
  return t_ops.empty() || !t_ops.back() ? std::string() : std::string(t_ops.back());
}

}  // namespace torch_neuron

// SPDX-License-Identifier: MIT
// Compiled mode (torch_neuron/compile): what a captured FX graph's kernel
// depends on and how a launch rebuilds its results.
//
// SIGNATURE: the arguments of one call as integers -- per tensor its device,
// dtype, sizes, strides, conj/neg bits and which earlier argument shares its
// storage (with the byte distance between them); the values of ints, floats,
// bools and of small CPU tensors (the capture bakes them into instructions
// or constants). Kernels are specialised per signature.
//
// PLAN: the graph's arguments (libneuron's byte regions) and outputs.
// Argument regions are, in order, one per storage of the call's neuron
// tensors (the union of the extents of the arguments on it, placed relative
// to the first argument on that storage, its LEADER), then one per fresh
// output storage (the whole storage, allocated at each launch). Each output
// is a value (None, int, float, bool), a tensor on fresh storage j, or a
// view of argument k's storage. The plan is also a flat int64 list (the
// compile cache stores it); parse_plan() checks every index and size.
#pragma once

#include <ATen/core/List.h>
#include <ATen/core/Tensor.h>
#include <ATen/core/ivalue.h>

#include <string>
#include <vector>

#include "../NeuronHelpers.h"

namespace torch_neuron {

using Signature = std::vector<int64_t>;

// The signature of @args into *@sig; false with the reason in *@why when an
// argument cannot be part of a compiled graph (a large CPU tensor, another
// device, a sparse tensor, a string ...).
bool graph_signature(const c10::List<c10::IValue>& args, Signature* sig,
                     std::string* why);

struct PlanRegion {        // an argument region on the call's tensors
  int64_t leader;          // argument index of the storage's first tensor
  int64_t delta;           // region start - the leader's first byte
  int64_t size;            // bytes
};

struct PlanOutput {
  enum Kind : int64_t { kNone, kInt, kDouble, kBool, kFresh, kView } kind;
  int64_t value = 0;       // kInt/kBool value, kDouble bits; kFresh: storage
                           // index; kView: argument index
  int64_t dtype = 0;
  std::vector<int64_t> sizes, strides;
  int64_t offset = 0;      // kFresh: storage offset (elements); kView: byte
                           // distance from the argument's first byte
};

struct GraphPlan {
  c10::DeviceIndex device = 0;
  std::vector<PlanRegion> regions;
  std::vector<int64_t> fresh;      // bytes of each fresh output storage
  std::vector<PlanOutput> outputs;

  // argument regions libneuron sees: regions, then non-empty fresh storages
  size_t nargs() const;
  std::vector<int64_t> encode() const;
};

// Throws a c10::Error naming what is wrong with @ints.
GraphPlan parse_plan(const std::vector<int64_t>& ints);

// The plan of a capture whose call had @args and produced @outputs;
// *@regions gets the argument regions at capture time (libneuron's order).
// Throws when an output cannot be rebuilt (a CPU tensor ...).
GraphPlan make_plan(const c10::List<c10::IValue>& args,
                    const c10::List<c10::IValue>& outputs,
                    std::vector<nrn_graph_arg>* regions);

// Bind @plan's arguments for a call with @args (fresh output storages are
// allocated into *@fresh), launch @g on the device's current stream with a
// fresh arena of @arena_size bytes, and return the outputs.
c10::List<c10::IValue> launch_plan(const GraphPlan& plan, const nrn_graph* g,
                                   uint64_t arena_size,
                                   const c10::List<c10::IValue>& args);

}  // namespace torch_neuron

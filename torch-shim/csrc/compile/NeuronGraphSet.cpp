// SPDX-License-Identifier: MIT
// torch.classes.neuron.GraphSet: the compiled kernels of one FX graph, one
// per concrete signature (NeuronGraphPlan.h), in a bounded LRU; and the
// capture around the graph's eager run that makes them. The Python side is
// torch_neuron/compile/kernels.py.
//
//   run(args)              the outputs of the kernel of @args' signature,
//                          launched, or None when there is none
//   begin_capture(device)  capture the device's current stream
//   begin_kernel_capture(device)  the same, TIMESTAMP instructions kept
//   end_capture()          "" or why the capture failed (then discarded)
//   compile(args, outs)    compile the capture into the kernel of @args'
//                          signature: (info, plan) -- info is [launch
//                          instructions, captured, fused, arena bytes,
//                          constant bytes, kernels held, nrn_graph_id()]
//   serialize(args)        the kernel's libneuron blob (uint8 CPU tensor)
//   load(args, blob, plan) a kernel from the compile cache: info
//   signature(args)        the signature as text (the cache key's part)
#include <ATen/ops/empty.h>
#include <torch/custom_class.h>
#include <torch/library.h>

#include <atomic>
#include <cstdlib>
#include <list>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "../runtime/NeuronStreamCapture.h"
#include "NeuronGraphPlan.h"

namespace torch_neuron {
namespace {

std::atomic<int64_t> g_launches{0}, g_evictions{0};

struct SigHash {
  size_t operator()(const Signature& s) const noexcept {
    uint64_t h = 1469598103934665603ull;
    for (int64_t v : s) {
      h ^= static_cast<uint64_t>(v);
      h *= 1099511628211ull;
    }
    return static_cast<size_t>(h);
  }
};

struct Kernel {
  nrn_graph* graph = nullptr;
  GraphPlan plan;
  struct nrn_graph_info info{};
  ~Kernel() { nrn_graph_destroy(graph); }
};

std::string errno_text(int err) {
  return std::string(nrn_strerror(err)) + " (" + std::to_string(err) + ")";
}

class GraphSet : public torch::CustomClassHolder {
 public:
  GraphSet(int64_t capacity, int64_t flags)
      : capacity_(std::max<int64_t>(1, capacity)), flags_(flags) {}
  ~GraphSet() override { drop_capture(); }

  c10::IValue run(c10::List<c10::IValue> args) {
    Signature sig;
    std::string why;
    if (!graph_signature(args, &sig, &why))
      return c10::IValue();
    std::shared_ptr<Kernel> k = find(sig);
    if (!k)
      return c10::IValue();
    c10::List<c10::IValue> out = launch_plan(k->plan, k->graph, k->info.arena_size, args);
    g_launches.fetch_add(1, std::memory_order_relaxed);
    return out;
  }

  std::string signature(c10::List<c10::IValue> args) {
    Signature sig;
    std::string why;
    TORCH_CHECK(graph_signature(args, &sig, &why), "neuron: compiled graph: ", why);
    std::string s;
    for (int64_t v : sig)
      s += std::to_string(v) + ",";
    return s;
  }

  void begin_capture(int64_t device) {
    begin(device, 0);
  }

  // The capture of a kernel of the language (torch_neuron/kernels/): its
  // TIMESTAMP instructions are kept (nk.timestamp()).
  void begin_kernel_capture(int64_t device) {
    begin(device, NRN_CAPTURE_TIMESTAMPS);
  }

  void begin(int64_t device, unsigned int flags) {
    std::lock_guard<std::mutex> guard(lock_);
    TORCH_CHECK(!capture_.open(), "neuron: compiled graph: a capture is already open");
    capture_.begin(checked_index(device), flags, "a new signature while the stream "
                   "captures (a torch.neuron.NeuronGraph): a capture cannot nest; run "
                   "the compiled graph once with these shapes before capturing");
  }

  std::string end_capture() {
    std::lock_guard<std::mutex> guard(lock_);
    TORCH_CHECK(capture_.open(), "neuron: compiled graph: no capture is open");
    nrn_capture* c = nullptr;
    int err = capture_.end(&c);
    capture_.release();
    drop_capture();
    if (err < 0)
      return "the capture failed: " + capture_error(err);
    if (!nrn_capture_count(c)) {
      nrn_capture_destroy(c);
      return "the graph issued no instructions on the card";
    }
    captured_ = c;
    return "";
  }

  std::tuple<std::vector<int64_t>, std::vector<int64_t>> compile(
      c10::List<c10::IValue> args, c10::List<c10::IValue> outputs) {
    Signature sig;
    std::string why;
    TORCH_CHECK(graph_signature(args, &sig, &why), "neuron: compiled graph: ", why);
    std::unique_lock<std::mutex> guard(lock_);
    TORCH_CHECK(captured_, "neuron: compiled graph: no capture to compile");
    nrn_capture* c = captured_;
    captured_ = nullptr;
    guard.unlock();
    std::unique_ptr<nrn_capture, void (*)(nrn_capture*)> hold(c, nrn_capture_destroy);
    std::vector<nrn_graph_arg> regions;
    auto k = std::make_shared<Kernel>();
    k->plan = make_plan(args, outputs, &regions);
    int err = nrn_graph_compile(c, regions.data(), static_cast<unsigned>(regions.size()),
                                static_cast<unsigned>(flags_), &k->graph);
    TORCH_CHECK(err == 0, "neuron: compiled graph: nrn_graph_compile: ", errno_text(err));
    check_kernel(*k);
    insert(sig, k);
    return {info_of(*k), k->plan.encode()};
  }

  at::Tensor serialize(c10::List<c10::IValue> args) {
    std::shared_ptr<Kernel> k = find_checked(args);
    void* buf = nullptr;
    size_t len = 0;
    NEURON_CHECK(nrn_graph_serialize(k->graph, &buf, &len));
    at::Tensor t = at::empty({static_cast<int64_t>(len)}, at::kByte);
    std::memcpy(t.mutable_data_ptr(), buf, len);
    std::free(buf);
    return t;
  }

  std::vector<int64_t> load(c10::List<c10::IValue> args, at::Tensor blob,
                            std::vector<int64_t> plan) {
    Signature sig;
    std::string why;
    TORCH_CHECK(graph_signature(args, &sig, &why), "neuron: compiled graph: ", why);
    TORCH_CHECK(blob.device().is_cpu() && blob.scalar_type() == at::kByte &&
                blob.is_contiguous(), "neuron: compiled graph: a blob is a "
                "contiguous uint8 CPU tensor");
    auto k = std::make_shared<Kernel>();
    k->plan = parse_plan(plan);
    int err = nrn_graph_deserialize(blob.const_data_ptr(), blob.numel(), &k->graph);
    TORCH_CHECK(err == 0, "neuron: compiled graph: the cached kernel is rejected: "
                "nrn_graph_deserialize: ", errno_text(err));
    check_kernel(*k);
    insert(sig, k);
    return info_of(*k);
  }

  int64_t size() {
    std::lock_guard<std::mutex> guard(lock_);
    return static_cast<int64_t>(map_.size());
  }

 private:
  using Lru = std::list<std::pair<Signature, std::shared_ptr<Kernel>>>;

  std::shared_ptr<Kernel> find(const Signature& sig) {
    std::lock_guard<std::mutex> guard(lock_);
    auto it = map_.find(sig);
    if (it == map_.end())
      return nullptr;
    lru_.splice(lru_.begin(), lru_, it->second);
    return it->second->second;
  }

  std::shared_ptr<Kernel> find_checked(const c10::List<c10::IValue>& args) {
    Signature sig;
    std::string why;
    TORCH_CHECK(graph_signature(args, &sig, &why), "neuron: compiled graph: ", why);
    std::shared_ptr<Kernel> k = find(sig);
    TORCH_CHECK(k, "neuron: compiled graph: no kernel for this signature");
    return k;
  }

  void insert(const Signature& sig, std::shared_ptr<Kernel> k) {
    std::lock_guard<std::mutex> guard(lock_);
    auto it = map_.find(sig);
    if (it != map_.end()) {
      lru_.erase(it->second);
      map_.erase(it);
    }
    lru_.emplace_front(sig, std::move(k));
    map_[sig] = lru_.begin();
    while (static_cast<int64_t>(lru_.size()) > capacity_) {
      // A kernel's work already issued keeps what it uses alive (libneuron
      // holds the buffers of issued work).
      map_.erase(lru_.back().first);
      lru_.pop_back();
      g_evictions.fetch_add(1, std::memory_order_relaxed);
    }
  }

  // The kernel must take the plan's arguments. (That it writes every fresh
  // output storage whole, nrn_graph_compile checks: NRN_GRAPH_ARG_FRESH.)
  void check_kernel(Kernel& k) {
    NEURON_CHECK(nrn_graph_info(k.graph, &k.info));
    TORCH_CHECK(k.info.nargs == k.plan.nargs(), "neuron: compiled graph: the kernel "
                "has ", k.info.nargs, " arguments, its plan ", k.plan.nargs());
    std::vector<int64_t> sizes;
    for (const PlanRegion& r : k.plan.regions)
      sizes.push_back(r.size);
    for (int64_t b : k.plan.fresh)
      if (b)
        sizes.push_back(b);
    for (size_t i = 0; i < sizes.size(); i++) {
      uint32_t access = 0;
      uint64_t size = 0;
      NEURON_CHECK(nrn_graph_arg_access(k.graph, static_cast<unsigned>(i), &access, &size));
      TORCH_CHECK(size == static_cast<uint64_t>(sizes[i]), "neuron: compiled graph: "
                  "argument ", i, " is ", size, " bytes in the kernel, ", sizes[i],
                  " in its plan");
    }
  }

  std::vector<int64_t> info_of(const Kernel& k) {
    return {k.info.insns, k.info.captured_insns, k.info.fused,
            static_cast<int64_t>(k.info.arena_size), static_cast<int64_t>(k.info.const_size),
            size(), static_cast<int64_t>(nrn_graph_id(k.graph))};
  }

  void drop_capture() {
    nrn_capture_destroy(captured_);
    captured_ = nullptr;
  }

  std::mutex lock_;
  int64_t capacity_, flags_;
  StreamCapture capture_{"compiled graph", false};
  nrn_capture* captured_ = nullptr;  // ended, not yet compiled
  Lru lru_;
  std::unordered_map<Signature, Lru::iterator, SigHash> map_;
};

std::vector<int64_t> graph_counters() {
  return {g_launches.load(), g_evictions.load()};
}

void reset_graph_counters() {
  g_launches = 0;
  g_evictions = 0;
}

int64_t isa_version() {
  return NISA_ISA_VERSION;
}

}  // namespace
}  // namespace torch_neuron

TORCH_LIBRARY_FRAGMENT(neuron, m) {
  using torch_neuron::GraphSet;
  m.class_<GraphSet>("GraphSet")
      .def(torch::init<int64_t, int64_t>())
      .def("run", &GraphSet::run)
      .def("signature", &GraphSet::signature)
      .def("begin_capture", &GraphSet::begin_capture)
      .def("begin_kernel_capture", &GraphSet::begin_kernel_capture)
      .def("end_capture", &GraphSet::end_capture)
      .def("compile", &GraphSet::compile)
      .def("serialize", &GraphSet::serialize)
      .def("load", &GraphSet::load)
      .def("size", &GraphSet::size);
  m.def("graph_counters() -> int[]", &torch_neuron::graph_counters);
  m.def("reset_graph_counters() -> ()", &torch_neuron::reset_graph_counters);
  m.def("isa_version() -> int", &torch_neuron::isa_version);
}

// SPDX-License-Identifier: MIT
// torch.classes.neuron.Graph: the work a sequence of operations issues on a
// device's current stream -- a whole training step, forward, backward and
// optimizer -- captured once and replayed in place by one launch, with no
// Python, dispatch or autograd in between (torch.neuron.NeuronGraph, which
// follows torch.cuda.CUDAGraph; Python side: torch_neuron/graphs.py).
//
//   capture_begin(device)  the device's current stream starts capturing
//   capture_end()          the capture compiled onto the very buffers it
//                          touched: [instructions, buffers, constant bytes];
//                          raises, naming why, if the capture failed
//   abort()                end a capture whose body raised, keeping
//                          nothing: "" or why the capture itself failed
//   replay()               one launch on the device's current stream
//   reset()                drop the graph, once its replays are done
//   info()                 [instructions, buffers, constant bytes, replays,
//                           element operations, resident]
// and graph_resident_limits(): [instructions, element operations] of the
// longest graph a replay submits as one resident job.
//
// In place means that a replay reads and writes the bytes the captured
// operations did: the tensors alive across the capture (parameters, inputs,
// gradients, optimizer state) are the graph's inputs and outputs. So that
// no other tensor is ever given those bytes while the graph lives, the
// capture's allocations keep their own memory (hold_frees) and every block
// of the segments it touched is protected (protect_segments): freed, it is
// kept, not reused, until reset().
#include <torch/custom_class.h>
#include <torch/library.h>

#include <mutex>
#include <vector>

#include "NeuronAllocator.h"
#include "NeuronStream.h"
#include "NeuronStreamCapture.h"

namespace torch_neuron {
namespace {

class Graph : public torch::CustomClassHolder {
 public:
  ~Graph() override {
    try {
      reset();
    } catch (...) {  // a device error: the card will not touch the memory
    }
  }

  void capture_begin(int64_t device) {
    std::lock_guard<std::mutex> guard(lock_);
    TORCH_CHECK(!capture_.open(), "neuron: NeuronGraph: capture_begin() while capturing");
    TORCH_CHECK(!graph_, "neuron: NeuronGraph: this graph holds a capture; reset() it "
                "before capturing again");
    c10::DeviceIndex index = checked_index(device);
    capture_.begin(index, 0, "the current stream of neuron:" +
                   std::to_string(static_cast<int>(index)) + " captures already");
    device_ = index;
  }

  std::vector<int64_t> capture_end() {
    std::lock_guard<std::mutex> guard(lock_);
    TORCH_CHECK(capture_.open(), "neuron: NeuronGraph: capture_end() without capture_begin()");
    nrn_capture* c = nullptr;
    int err = capture_.end(&c);
    std::unique_ptr<nrn_capture, void (*)(nrn_capture*)> hold(c, nrn_capture_destroy);
    if (err < 0 || !nrn_capture_count(c)) {
      capture_.release();
      TORCH_CHECK(err >= 0, "neuron: NeuronGraph: the capture failed: ", capture_error(err));
      TORCH_CHECK(false, "neuron: NeuronGraph: the capture issued no work on the card");
    }
    std::vector<nrn_buffer*> bufs(nrn_capture_buffers(c, nullptr, 0));
    nrn_capture_buffers(c, bufs.data(), static_cast<unsigned>(bufs.size()));
    std::vector<nrn_graph_arg> args;
    for (nrn_buffer* b : bufs)
      args.push_back({b, 0, nrn_buffer_size(b), 0});
    nrn_graph* g = nullptr;
    err = nrn_graph_compile(c, args.data(), static_cast<unsigned>(args.size()), 0, &g);
    if (err == 0)
      protected_ = protect_segments(device_, bufs);
    capture_.release();  // after protecting: held blocks stay kept
    TORCH_CHECK(err == 0, "neuron: NeuronGraph: nrn_graph_compile: ", nrn_strerror(err),
                " (", err, ")");
    struct nrn_graph_info info{};
    nrn_graph_info(g, &info);
    graph_ = g;
    captured_ = hold.release();  // it holds a reference to every buffer
    args_ = std::move(args);
    info_ = {info.insns, static_cast<int64_t>(args_.size()),
             static_cast<int64_t>(info.const_size)};
    return info_;
  }

  std::string abort() {
    std::lock_guard<std::mutex> guard(lock_);
    return abort_locked();
  }

  void replay() {
    std::lock_guard<std::mutex> guard(lock_);
    TORCH_CHECK(graph_, "neuron: NeuronGraph: replay() of a graph that holds no capture");
    NEURON_CHECK(nrn_graph_launch(device_stream(device_), graph_, args_.data(), nullptr, 0));
    replays_++;
  }

  void reset() {
    std::lock_guard<std::mutex> guard(lock_);
    abort_locked();
    if (!graph_)
      return;
    std::vector<void*> blocks = std::move(protected_);
    nrn_graph* g = graph_;
    nrn_capture* c = captured_;
    graph_ = nullptr;
    captured_ = nullptr;
    args_.clear();
    replays_ = 0;
    // The memory may go to other tensors only once no replay writes it.
    struct Release {
      std::vector<void*>& blocks;
      nrn_graph* g;
      nrn_capture* c;
      ~Release() {
        unprotect(blocks);
        nrn_graph_destroy(g);
        nrn_capture_destroy(c);
      }
    } release{blocks, g, c};
    synchronize_device(device_);
  }

  std::vector<int64_t> info() {
    std::lock_guard<std::mutex> guard(lock_);
    if (!graph_)
      return {};
    std::vector<int64_t> out = info_;
    struct nrn_graph_info info{};
    nrn_graph_info(graph_, &info);
    out.insert(out.end(), {replays_, static_cast<int64_t>(info.work), info.resident});
    return out;
  }

 private:
  std::string abort_locked() { return capture_.abort(); }

  std::mutex lock_;
  StreamCapture capture_{"NeuronGraph", true};
  c10::DeviceIndex device_ = 0;
  nrn_graph* graph_ = nullptr;
  nrn_capture* captured_ = nullptr;  // what graph_ was compiled from
  std::vector<nrn_graph_arg> args_;
  std::vector<void*> protected_;
  std::vector<int64_t> info_;
  int64_t replays_ = 0;
};


// The most instructions and element operations a graph may have and still
// replay as one resident job (libneuron's limits).
std::vector<int64_t> graph_resident_limits() {
  return {NRN_GRAPH_RESIDENT_MAX_INSNS, static_cast<int64_t>(NRN_BATCH_MAX_WORK)};
}

bool is_current_stream_capturing(int64_t device) {
  return nrn_stream_is_capturing(device_stream(checked_index(device))) == 1;
}

}  // namespace

}  // namespace torch_neuron

TORCH_LIBRARY_FRAGMENT(neuron, m) {
  using torch_neuron::Graph;
  m.class_<Graph>("Graph")
      .def(torch::init<>())
      .def("capture_begin", &Graph::capture_begin)
      .def("capture_end", &Graph::capture_end)
      .def("abort", &Graph::abort)
      .def("replay", &Graph::replay)
      .def("reset", &Graph::reset)
      .def("info", &Graph::info);
  m.def("graph_resident_limits() -> int[]", &torch_neuron::graph_resident_limits);
  m.def("is_current_stream_capturing(int device) -> bool",
        &torch_neuron::is_current_stream_capturing);
}

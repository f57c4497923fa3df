// SPDX-License-Identifier: MIT
// The Work objects of the c10d backend "neuron" (NeuronProcessGroup.h) and
// the thread that completes them.
//
// A collective is issued on a card stream and returns at once; an event
// recorded on that stream after it marks its end. One completion thread
// per process group waits for those events in issue order and then
// completes the Work and its Future (value: the output tensors, as DDP's
// reducer expects) -- or fails both with the card's error (a peer gone,
// a peer that never joined within the communicator's timeout) or with a
// timeout of the Work's own. The Future has no devices: it completes only
// once the card finished the collective, so a callback or a reader of its
// value never needs a stream to wait for it.
#pragma once

#include <ATen/core/ivalue.h>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "../NeuronHelpers.h"

namespace torch_neuron {

class NeuronWork : public c10d::Work {
 public:
  // @ev (owned; nullptr: the work is complete already) marks the end of
  // the collective @what on the card; @keep are the tensors it uses, held
  // until then; @outputs the Future's value.
  // @source: a receive's sender, -1 for the other ops.
  NeuronWork(int rank, c10d::OpType type, std::string what, nrn_event* ev,
             std::vector<at::Tensor> outputs, std::vector<at::Tensor> keep,
             std::chrono::milliseconds timeout, int source = -1);
  ~NeuronWork() override;
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override;
  std::vector<at::Tensor> result() override;
  int sourceRank() const override;
  // Wait for the card (up to the timeout), then complete; called by the
  // completion thread, or at once when there is no event.
  void complete();

 private:
  std::string what_;
  nrn_event* ev_;
  std::vector<at::Tensor> outputs_;
  std::vector<at::Tensor> keep_;
  std::chrono::milliseconds timeout_;
  int source_;
  c10::intrusive_ptr<c10::ivalue::Future> future_;
};

// The completion thread of one process group.
class CompletionQueue {
 public:
  CompletionQueue();
  // Completes what was queued, then ends the thread.
  ~CompletionQueue();
  void push(c10::intrusive_ptr<NeuronWork> w);

 private:
  void run();
  std::mutex m_;
  std::condition_variable cv_;
  std::deque<c10::intrusive_ptr<NeuronWork>> q_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace torch_neuron

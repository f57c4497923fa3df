// SPDX-License-Identifier: MIT
// NeuronWork and its completion thread (NeuronWork.h).
#include "NeuronWork.h"

#include <c10/util/Exception.h>

#include <cerrno>

namespace torch_neuron {

NeuronWork::NeuronWork(int rank, c10d::OpType type, std::string what,
                       nrn_event* ev, std::vector<at::Tensor> outputs,
                       std::vector<at::Tensor> keep,
                       std::chrono::milliseconds timeout, int source)
    : c10d::Work(rank, type),
      what_(std::move(what)),
      ev_(ev),
      outputs_(std::move(outputs)),
      keep_(std::move(keep)),
      timeout_(timeout),
      source_(source),
      future_(c10::make_intrusive<c10::ivalue::Future>(
          c10::ListType::create(c10::TensorType::get()))) {}

NeuronWork::~NeuronWork() {
  if (ev_)
    nrn_event_destroy(ev_);
}

c10::intrusive_ptr<c10::ivalue::Future> NeuronWork::getFuture() {
  return future_;
}

std::vector<at::Tensor> NeuronWork::result() {
  return outputs_;
}

int NeuronWork::sourceRank() const {
  TORCH_CHECK(source_ >= 0, "neuron: sourceRank() is the sender of a receive; "
              "this Work is ", what_, "'s");
  return source_;
}

void NeuronWork::complete() {
  std::exception_ptr err;
  if (ev_) {
    int64_t ns = timeout_.count() > 0 ? timeout_.count() * 1000000LL : -1;
    int rc = nrn_event_wait(ev_, ns);
    if (rc < 0) {
      try {
        if (rc == -ETIME)
          TORCH_CHECK_WITH(DistBackendError, false, "neuron: ", what_,
                           " did not complete within the timeout (",
                           timeout_.count(), " ms)");
        TORCH_CHECK_WITH(DistBackendError, false, "neuron: ", what_,
                         " failed: ", nrn_strerror(rc));
      } catch (...) {
        err = std::current_exception();
      }
    }
  }
  keep_.clear();
  if (err) {
    future_->setError(err);
    finish(err);
  } else {
    future_->markCompleted(c10::IValue(outputs_));
    finish();
  }
}

CompletionQueue::CompletionQueue() : thread_([this] { run(); }) {}

CompletionQueue::~CompletionQueue() {
  {
    std::lock_guard<std::mutex> g(m_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void CompletionQueue::push(c10::intrusive_ptr<NeuronWork> w) {
  {
    std::lock_guard<std::mutex> g(m_);
    q_.push_back(std::move(w));
  }
  cv_.notify_all();
}

void CompletionQueue::run() {
  for (;;) {
    c10::intrusive_ptr<NeuronWork> w;
    {
      std::unique_lock<std::mutex> l(m_);
      cv_.wait(l, [this] { return stop_ || !q_.empty(); });
      if (q_.empty())
        return;
      w = std::move(q_.front());
      q_.pop_front();
    }
    w->complete();
  }
}

}  // namespace torch_neuron

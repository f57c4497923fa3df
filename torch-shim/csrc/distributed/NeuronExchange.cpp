// SPDX-License-Identifier: MIT
// The c10d backend "neuron" (NeuronProcessGroup.h): all-to-all, send/recv,
// barrier, and the cross-node paths that go through the world Gloo group
// on host copies (each such step is counted in distributed_stats()).
#include <ATen/ATen.h>

#include "NeuronProcessGroup.h"

namespace torch_neuron {

c10::intrusive_ptr<c10d::Work> NeuronBackend::cross_broadcast(
    std::vector<at::Tensor>& tensors, const c10d::BroadcastOptions& opts) {
  for (auto& t : tensors) {
    std::vector<at::Tensor> h{host_copy(t, false)};
    c10d::BroadcastOptions o = opts;
    o.timeout = timeout_of(opts.timeout);
    world_->broadcast(h, o)->wait();
    t.copy_(h[0]);
    count_gloo(h[0]);
  }
  return finish_on(device_stream(dev_), c10d::OpType::BROADCAST, "broadcast",
                   tensors, {}, opts.timeout);
}

c10::intrusive_ptr<c10d::Work> NeuronBackend::cross_allgather(
    std::vector<at::Tensor> blocks, const at::Tensor& input, c10d::OpType type,
    std::vector<at::Tensor> outputs, std::chrono::milliseconds timeout) {
  std::vector<at::Tensor> hin{host_copy(input, false)};
  std::vector<std::vector<at::Tensor>> hout(1);
  for (int r = 0; r < size_; r++)
    hout[0].push_back(at::empty_like(hin[0]));
  c10d::AllgatherOptions o;
  o.timeout = timeout_of(timeout);
  world_->allgather(hout, hin, o)->wait();
  for (int r = 0; r < size_; r++) {
    blocks[r].view({-1}).copy_(hout[0][r].view({-1}));
    count_gloo(hout[0][r]);
  }
  return finish_on(device_stream(dev_), type, "all_gather", std::move(outputs),
                   {input}, timeout);
}

c10::intrusive_ptr<c10d::Work> NeuronBackend::alltoall_base(
    at::Tensor& output, at::Tensor& input, std::vector<int64_t>& output_splits,
    std::vector<int64_t>& input_splits, const c10d::AllToAllOptions& opts) {
  const char* name = "all_to_all_single";
  check_tensor(input, name);
  check_tensor(output, name);
  TORCH_CHECK(output.scalar_type() == input.scalar_type() &&
              output.numel() == input.numel(), "neuron: ", name, ": the output "
              "must have the input's dtype and size");
  TORCH_CHECK(input.numel() % size_ == 0, "neuron: ", name, ": ", input.numel(),
              " elements do not split into ", size_, " equal blocks");
  auto equal = [&](const std::vector<int64_t>& splits) {
    for (int64_t v : splits)
      if (v != splits[0])
        return false;
    return splits.empty() || static_cast<int>(splits.size()) == size_;
  };
  TORCH_CHECK(equal(output_splits) && equal(input_splits), "neuron: ", name,
              ": unequal split sizes are not supported (the card exchanges "
              "equal blocks)");
  nrn_stream* s = device_stream(dev_);
  if (multinode()) {
    at::Tensor hin = host_copy(input, false), hout = at::empty_like(hin);
    c10d::AllToAllOptions o;
    o.timeout = timeout_of(opts.timeout);
    world_->alltoall_base(hout, hin, output_splits, input_splits, o)->wait();
    output.copy_(hout);
    count_gloo(hout);
  } else if (input.numel() > 0) {
    Span si = span_of(input), so = span_of(output);
    NEURON_CHECK(nrn_all_to_all(comm_, s, si.buf, si.off, so.buf, so.off,
                                bytes_of(input) / size_, NISA_U8));
    count_card(input);
  }
  return finish_on(s, c10d::OpType::ALLTOALL_BASE, name, {output}, {input},
                   opts.timeout);
}

c10::intrusive_ptr<c10d::Work> NeuronBackend::send(std::vector<at::Tensor>& tensors,
                                                   int dst, int tag) {
  TORCH_CHECK(tensors.size() == 1, "neuron: send: one tensor");
  TORCH_CHECK(dst >= 0 && dst < size_ && dst != rank_, "neuron: send: bad "
              "destination rank ", dst, " (this is rank ", rank_, " of ", size_, ")");
  at::Tensor& t = tensors[0];
  check_tensor(t, "send");
  nrn_stream* s = device_stream(dev_);
  if (multinode()) {
    std::vector<at::Tensor> h{host_copy(t, false)};
    world_->send(h, dst, tag)->wait();
    count_gloo(h[0]);
  } else if (t.numel() > 0) {
    Span sp = span_of(t);
    NEURON_CHECK(nrn_send(comm_, s, sp.buf, sp.off, bytes_of(t), dst));
    count_card(t);
  }
  return finish_on(s, c10d::OpType::SEND, "send", {}, {t}, std::chrono::milliseconds(0));
}

c10::intrusive_ptr<c10d::Work> NeuronBackend::recv(std::vector<at::Tensor>& tensors,
                                                   int src, int tag) {
  TORCH_CHECK(tensors.size() == 1, "neuron: recv: one tensor");
  TORCH_CHECK(src >= 0 && src < size_ && src != rank_, "neuron: recv: bad "
              "source rank ", src, " (this is rank ", rank_, " of ", size_,
              "; receiving from any source is not supported)");
  at::Tensor& t = tensors[0];
  check_tensor(t, "recv");
  nrn_stream* s = device_stream(dev_);
  if (multinode()) {
    std::vector<at::Tensor> h{at::empty(t.sizes(), t.options().device(at::kCPU))};
    world_->recv(h, src, tag)->wait();
    t.copy_(h[0]);
    count_gloo(h[0]);
  } else if (t.numel() > 0) {
    Span sp = span_of(t);
    NEURON_CHECK(nrn_recv(comm_, s, sp.buf, sp.off, bytes_of(t), src));
    count_card(t);
  }
  return finish_on(s, c10d::OpType::RECV, "recv", {t}, {}, std::chrono::milliseconds(0));
}

// Work issued after it (on this stream) and the host's wait() start once
// every rank has reached the barrier.
c10::intrusive_ptr<c10d::Work> NeuronBackend::barrier(const c10d::BarrierOptions& opts) {
  nrn_stream* s = device_stream(dev_);
  NEURON_CHECK(nrn_barrier(comm_, s));
  if (multinode()) {
    NEURON_CHECK(nrn_stream_sync(s));
    c10d::BarrierOptions o;
    o.timeout = timeout_of(opts.timeout);
    world_->barrier(o)->wait();
    dist_stats().gloo_collectives++;
  }
  return finish_on(s, c10d::OpType::BARRIER, "barrier", {}, {}, opts.timeout);
}

}  // namespace torch_neuron

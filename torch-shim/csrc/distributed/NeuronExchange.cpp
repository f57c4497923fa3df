// SPDX-License-Identifier: MIT
// The c10d backend "neuron" (NeuronProcessGroup.h): the all-to-alls (equal
// blocks or any), send/recv, barrier, and the cross-node paths that go
// through the world Gloo group on host copies (each such step is counted
// in distributed_stats()).
#include <ATen/ATen.h>

#include <algorithm>
#include <cerrno>
#include <tuple>

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

void NeuronBackend::cross_allgather(std::vector<at::Tensor> blocks, const at::Tensor& input,
                                    std::chrono::milliseconds timeout) {
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
}

// Gloo reduces integers with every op but AVG and PREMUL_SUM, and no bool:
// a bool goes as uint8 with MAX (any) or MIN (all).
void NeuronBackend::cross_allreduce(const at::Tensor& t, c10d::ReduceOp op) {
  at::Tensor h = host_copy(t, false);
  c10d::AllreduceOptions o;
  o.reduceOp = op;
  o.timeout = timeout_;
  if (h.scalar_type() == at::kBool) {
    h = h.to(at::kByte);
    bool any = op.op_ == c10d::ReduceOp::SUM || op.op_ == c10d::ReduceOp::MAX ||
               op.op_ == c10d::ReduceOp::BOR;
    if (op.op_ != c10d::ReduceOp::BXOR)
      o.reduceOp = any ? c10d::ReduceOp::MAX : c10d::ReduceOp::MIN;
  }
  std::vector<at::Tensor> v{h};
  world_->allreduce(v, o)->wait();
  t.copy_(h.to(t.scalar_type()));
  count_gloo(h);
}

// Bytes of one row (dim 0's index) of @t.
static uint64_t row_bytes(const at::Tensor& t) {
  return t.dim() == 0 || t.size(0) == 0 ? 0 : bytes_of(t) / static_cast<uint64_t>(t.size(0));
}

void NeuronBackend::issue_alltoallv(const at::Tensor& out, const at::Tensor& in,
                                    const std::vector<uint64_t>& send,
                                    const std::vector<uint64_t>& recv,
                                    std::chrono::milliseconds timeout) {
  nrn_stream* s = device_stream(dev_);
  if (multinode()) {
    std::vector<int64_t> ss(send.begin(), send.end()), rs(recv.begin(), recv.end());
    at::Tensor hin = host_copy(in, false).view({-1}).view(at::kByte);
    at::Tensor hout = at::empty({static_cast<int64_t>(bytes_of(out))},
                                hin.options());
    c10d::AllToAllOptions o;
    o.timeout = timeout_of(timeout);
    world_->alltoall_base(hout, hin, rs, ss, o)->wait();
    out.view({-1}).view(at::kByte).copy_(hout);
    count_gloo(hout);
    return;
  }
  Span si = span_of(in), so = span_of(out);
  NEURON_CHECK(nrn_all_to_allv(comm_, s, si.buf, si.off, send.data(), so.buf, so.off,
                               recv.data(), NISA_U8));
  count_card(in);
}

c10::intrusive_ptr<c10d::Work> NeuronBackend::alltoall_base(
    at::Tensor& output, at::Tensor& input, std::vector<int64_t>& output_splits,
    std::vector<int64_t>& input_splits, const c10d::AllToAllOptions& opts) {
  flush_p2p();
  const char* name = "all_to_all_single";
  check_tensor(input, name);
  check_tensor(output, name);
  TORCH_CHECK(output.scalar_type() == input.scalar_type(), "neuron: ", name,
              ": the output must have the input's dtype");
  nrn_stream* s = device_stream(dev_);
  if (output_splits.empty() && input_splits.empty()) {
    TORCH_CHECK(output.numel() == input.numel(), "neuron: ", name, ": the output must "
                "have the input's size");
    TORCH_CHECK(input.numel() % size_ == 0, "neuron: ", name, ": ", input.numel(),
                " elements do not split into ", size_, " equal blocks");
    if (!multinode() && input.numel() > 0) {
      Span si = span_of(input), so = span_of(output);
      NEURON_CHECK(nrn_all_to_all(comm_, s, si.buf, si.off, so.buf, so.off,
                                  bytes_of(input) / size_, NISA_U8));
      count_card(input);
    } else if (input.numel() > 0) {
      std::vector<uint64_t> eq(size_, bytes_of(input) / size_);
      issue_alltoallv(output, input, eq, eq, opts.timeout);
    }
    return finish_on(s, c10d::OpType::ALLTOALL_BASE, name, {output}, {input},
                     opts.timeout);
  }
  // Split sizes count rows (dim 0); an empty list means equal rows.
  auto bytes = [&](const at::Tensor& t, const std::vector<int64_t>& splits,
                   const char* which) {
    std::vector<uint64_t> b(size_);
    int64_t rows = t.dim() ? t.size(0) : 1, sum = 0;
    TORCH_CHECK(splits.empty() || static_cast<int>(splits.size()) == size_, "neuron: ",
                name, ": ", which, " has ", splits.size(), " split sizes for ", size_,
                " ranks");
    TORCH_CHECK(!splits.empty() || rows % size_ == 0, "neuron: ", name, ": ", rows,
                " rows of the ", which, " do not split into ", size_, " equal blocks");
    for (int q = 0; q < size_; q++) {
      int64_t v = splits.empty() ? rows / size_ : splits[q];
      TORCH_CHECK(v >= 0, "neuron: ", name, ": negative split size ", v);
      b[q] = static_cast<uint64_t>(v) * row_bytes(t);
      sum += v;
    }
    TORCH_CHECK(sum == rows, "neuron: ", name, ": the ", which, "'s split sizes add "
                "up to ", sum, " rows, it has ", rows);
    return b;
  };
  TORCH_CHECK(input.dim() > 0 && output.dim() > 0 &&
              input.numel() / std::max<int64_t>(input.size(0), 1) ==
                  output.numel() / std::max<int64_t>(output.size(0), 1),
              "neuron: ", name, ": the input's and the output's rows (dim 0) must "
              "have the same size");
  std::vector<uint64_t> send = bytes(input, input_splits, "input");
  std::vector<uint64_t> recv = bytes(output, output_splits, "output");
  issue_alltoallv(output, input, send, recv, opts.timeout);
  return finish_on(s, c10d::OpType::ALLTOALL_BASE, name, {output}, {input},
                   opts.timeout);
}

// all_to_all with lists: input q to rank q, output q from it, of any sizes
// (and dtypes: bytes move), packed into one buffer each way.
c10::intrusive_ptr<c10d::Work> NeuronBackend::alltoall(
    std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
    const c10d::AllToAllOptions& opts) {
  flush_p2p();
  const char* name = "all_to_all";
  TORCH_CHECK(static_cast<int>(outputs.size()) == size_ &&
              static_cast<int>(inputs.size()) == size_, "neuron: ", name, ": ",
              inputs.size(), " inputs and ", outputs.size(), " outputs, expected ",
              size_, " of each (one per rank)");
  std::vector<uint64_t> send(size_), recv(size_);
  std::vector<at::Tensor> ins, keep;
  int64_t nout = 0;
  for (int q = 0; q < size_; q++) {
    check_tensor(inputs[q], name);
    check_tensor(outputs[q], name);
    send[q] = bytes_of(inputs[q]);
    recv[q] = bytes_of(outputs[q]);
    nout += static_cast<int64_t>(recv[q]);
    ins.push_back(inputs[q].reshape({-1}).view(at::kByte));
  }
  at::Tensor in = at::cat(ins);
  at::Tensor out = at::empty({nout}, in.options());
  issue_alltoallv(out, in, send, recv, opts.timeout);
  int64_t o = 0;
  for (int q = 0; q < size_; q++) {
    int64_t b = static_cast<int64_t>(recv[q]);
    outputs[q].view({-1}).view(at::kByte).copy_(out.narrow(0, o, b));
    o += b;
  }
  keep.push_back(in);
  keep.push_back(out);
  return finish_on(device_stream(dev_), c10d::OpType::ALLTOALL, name, outputs, keep,
                   opts.timeout);
}

namespace {
// The Gloo tag of every send and recv across nodes (see send()).
constexpr int kP2PTag = 0;
}  // namespace

// Queued on one node and across nodes alike (issue_p2p_locked): both ends
// issue a pair's ops in one agreed order, which 1F1B's crossed sends need
// (Gloo's send waits for its receiver to post the matching recv). @tag is
// not used: that order matches the ops.
c10::intrusive_ptr<c10d::Work> NeuronBackend::send(std::vector<at::Tensor>& tensors,
                                                   int dst, int tag) {
  TORCH_CHECK(tensors.size() == 1, "neuron: send: one tensor");
  TORCH_CHECK(dst >= 0 && dst < size_ && dst != rank_, "neuron: send: bad "
              "destination rank ", dst, " (this is rank ", rank_, " of ", size_, ")");
  at::Tensor& t = tensors[0];
  check_tensor(t, "send");
  return queue_p2p(true, t, dst);
}

c10::intrusive_ptr<c10d::Work> NeuronBackend::recv(std::vector<at::Tensor>& tensors,
                                                   int src, int tag) {
  TORCH_CHECK(tensors.size() == 1, "neuron: recv: one tensor");
  TORCH_CHECK(src >= 0 && src < size_ && src != rank_, "neuron: recv: bad "
              "source rank ", src, " (this is rank ", rank_, " of ", size_, ")");
  at::Tensor& t = tensors[0];
  check_tensor(t, "recv");
  return queue_p2p(false, t, src);
}

c10::intrusive_ptr<c10d::Work> NeuronBackend::recvAnysource(std::vector<at::Tensor>& tensors,
                                                            int tag) {
  TORCH_CHECK(tensors.size() == 1, "neuron: recv: one tensor");
  at::Tensor& t = tensors[0];
  check_tensor(t, "recv");
  TORCH_CHECK(t.numel() > 0, "neuron: recv from any source: the tensor is empty, and "
              "an empty send moves nothing to wait for (name the source rank)");
  // The queued ops first: a sender may be waiting for one of them.
  flush_p2p();
  nrn_stream* s = device_stream(dev_);
  int src = -1;
  if (multinode()) {
    std::vector<at::Tensor> h{at::empty(t.sizes(), t.options().device(at::kCPU))};
    auto w = world_->recvAnysource(h, kP2PTag);
    w->wait();
    src = w->sourceRank();
    t.copy_(h[0]);
    count_gloo(h[0]);
  } else {
    Span sp = span_of(t);
    int rc = nrn_recv_any(comm_, s, sp.buf, sp.off, bytes_of(t), &src);
    TORCH_CHECK_WITH(DistBackendError, rc >= 0, "neuron: recv from any source failed: ",
                     nrn_strerror(rc), rc == -ETIMEDOUT ? " (no linked rank sent to this "
                     "one within the group's timeout)" : "");
    count_card(t);
  }
  {
    // It took the sender's next op from it: counted as the sender counted
    // its send, so both order their later ops between them alike.
    std::lock_guard<std::mutex> g(p2p_->m);
    p2p_->seq[{src, rank_}]++;
  }
  return finish_on(s, c10d::OpType::RECVANYSOURCE, "recv", {t}, {},
                   std::chrono::milliseconds(0), src);
}

c10::intrusive_ptr<c10d::Work> NeuronBackend::queue_p2p(bool send, at::Tensor& t,
                                                        int peer) {
  auto w = c10::make_intrusive<PendingWork>(
      rank_, send ? c10d::OpType::SEND : c10d::OpType::RECV, p2p_);
  std::lock_guard<std::mutex> g(p2p_->m);
  int src = send ? rank_ : peer, dst = send ? peer : rank_;
  uint64_t seq = p2p_->seq[{src, dst}]++;
  p2p_->ops.push_back({send, src, dst, seq, t, device_stream(dev_), w});
  return w;
}

void NeuronBackend::issue_p2p_locked() {
  auto ops = std::move(p2p_->ops);
  p2p_->ops.clear();
  // One total order over every pair's ops, the same on both ends of each
  // pair: each pair's ops in the order of their calls (seq within each
  // direction), the two directions interleaved alike on both sides.
  auto key = [](const P2PQueue::Op& o) {
    return std::make_tuple(o.seq, std::min(o.src, o.dst), std::max(o.src, o.dst), o.src);
  };
  std::stable_sort(ops.begin(), ops.end(), [&](const P2PQueue::Op& a,
                                               const P2PQueue::Op& b) {
    return key(a) < key(b);
  });
  for (size_t i = 0; i < ops.size(); i++) {
    P2PQueue::Op& op = ops[i];
    const char* name = op.send ? "send" : "recv";
    try {
      if (op.t.numel() > 0 && multinode()) {
        // Through the all-ranks Gloo group on a host copy; the copy back
        // below autograd (a flush may run from a Work's wait()).
        at::AutoDispatchBelowADInplaceOrView guard;
        std::vector<at::Tensor> h{op.send ? host_copy(op.t, false)
                                          : at::empty(op.t.sizes(),
                                                      op.t.options().device(at::kCPU))};
        if (op.send) {
          world_->send(h, op.dst, kP2PTag)->wait();
        } else {
          world_->recv(h, op.src, kP2PTag)->wait();
          op.t.copy_(h[0]);
        }
        count_gloo(h[0]);
        op.s = device_stream(dev_);  // where the copy back went
      } else if (op.t.numel() > 0) {
        Span sp = span_of(op.t);
        int rc = op.send ? nrn_send(comm_, op.s, sp.buf, sp.off, bytes_of(op.t), op.dst)
                         : nrn_recv(comm_, op.s, sp.buf, sp.off, bytes_of(op.t), op.src);
        TORCH_CHECK_WITH(DistBackendError, rc >= 0, "neuron: ", name, " ",
                         op.send ? "to" : "from", " rank ", op.send ? op.dst : op.src,
                         " failed: ", nrn_strerror(rc));
        count_card(op.t);
      }
      std::vector<at::Tensor> out, keep;
      (op.send ? keep : out).push_back(op.t);
      op.work->issued(finish_on(op.s, op.send ? c10d::OpType::SEND : c10d::OpType::RECV,
                                name, out, keep, std::chrono::milliseconds(0)));
    } catch (...) {
      // This op and the ones after it are never issued: their Works fail.
      auto e = std::current_exception();
      for (size_t j = i; j < ops.size(); j++)
        ops[j].work->failed(e);
      throw;
    }
  }
}

bool PendingWork::isCompleted() {
  return real()->isCompleted();
}

bool PendingWork::isSuccess() const {
  std::lock_guard<std::mutex> g(m_);
  return !err_ && real_ && real_->isSuccess();
}

std::exception_ptr PendingWork::exception() const {
  std::lock_guard<std::mutex> g(m_);
  if (err_)
    return err_;
  return real_ ? real_->exception() : nullptr;
}

std::vector<at::Tensor> PendingWork::result() {
  return real()->result();
}

void PendingWork::synchronize() {
  real()->synchronize();
}

bool PendingWork::wait(std::chrono::milliseconds timeout) {
  return real()->wait(timeout);
}

c10::intrusive_ptr<c10::ivalue::Future> PendingWork::getFuture() {
  return real()->getFuture();
}

void PendingWork::issued(c10::intrusive_ptr<c10d::Work> w) {
  std::lock_guard<std::mutex> g(m_);
  real_ = std::move(w);
}

void PendingWork::failed(std::exception_ptr e) {
  std::lock_guard<std::mutex> g(m_);
  err_ = e;
}

c10::intrusive_ptr<c10d::Work> PendingWork::real() {
  {
    std::lock_guard<std::mutex> g(m_);
    if (real_)
      return real_;
  }
  // An error of the flush belongs to the op that failed; this Work's own
  // error (if the flush failed before it) is rethrown below.
  try {
    q_->flush();
  } catch (...) {
    std::lock_guard<std::mutex> g(m_);
    if (!err_ && !real_)
      throw;
  }
  std::lock_guard<std::mutex> g(m_);
  if (err_)
    std::rethrow_exception(err_);
  TORCH_CHECK_WITH(DistBackendError, real_.defined(), "neuron: ", c10d::opTypeToString(opType_),
                   ": never issued");
  return real_;
}

// Work issued after it (on this stream) and the host's wait() start once
// every rank has reached the barrier.
c10::intrusive_ptr<c10d::Work> NeuronBackend::barrier(const c10d::BarrierOptions& opts) {
  flush_p2p();
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

// SPDX-License-Identifier: MIT
// The c10d backend "neuron": torch.distributed collectives over libneuron's
// communicators (nrn_comm, card to card over the links), one rank per card.
//
// Within one VM (one "node") every collective is one libneuron collective
// issued on the caller's current neuron stream; it returns a NeuronWork at
// once and the completion thread completes it (NeuronWork.h). Across VMs
// the ranks of each node form their own nrn_comm and two internal Gloo
// groups join the nodes over TCP (made by torch_neuron/distributed.py over
// the same store): an all-reduce reduces within each node over the links,
// all-reduces the node leaders' host copies through Gloo, and broadcasts
// the result within each node over the links; the other collectives go
// through Gloo on host copies of every rank's tensors. The cross-node
// parts run on the calling thread (the returned Work waits only for the
// final card work) and are counted in distributed_stats().
//
// On one node send and recv are not issued when called: libneuron's
// nrn_send/nrn_recv block at issue until the partner issues the matching
// call, so two ranks that each first send to the other (a pipeline
// schedule's batched sends and receives) would both fail. They are queued
// (P2PQueue) and issued when one of their Works is waited for or polled,
// or before any other collective, in an order every rank agrees on.
// docs/distributed.md describes the design and its limits.
#pragma once

#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "../NeuronHelpers.h"
#include "NeuronWork.h"

namespace torch_neuron {

// Where this rank sits: its node, its rank among the node's ranks.
struct NodeLayout {
  int node = 0;
  int nnodes = 1;
  int local_rank = 0;
  int local_size = 1;
};

class PendingWork;

// The send/recv ops a backend has not issued yet. Shared with their
// Works, which may outlive the backend (flush_locked is then empty).
struct P2PQueue {
  struct Op {
    bool send;
    int src, dst;
    uint64_t seq;  // among the ops from src to dst
    at::Tensor t;
    nrn_stream* s;  // the caller's stream at the call
    c10::intrusive_ptr<PendingWork> work;
  };
  std::mutex m;
  std::vector<Op> ops;
  std::map<std::pair<int, int>, uint64_t> seq;
  // Issues ops (m held).
  std::function<void()> flush_locked;
  void flush() {
    std::lock_guard<std::mutex> g(m);
    if (flush_locked)
      flush_locked();
  }
};

// The Work of a queued send or recv: waiting for it, polling it or asking
// for its Future issues the queue first, then it is the issued op's Work.
class PendingWork : public c10d::Work {
 public:
  PendingWork(int rank, c10d::OpType type, std::shared_ptr<P2PQueue> q)
      : c10d::Work(rank, type), q_(std::move(q)) {}
  bool isCompleted() override;
  bool isSuccess() const override;
  std::exception_ptr exception() const override;
  std::vector<at::Tensor> result() override;
  void synchronize() override;
  bool wait(std::chrono::milliseconds timeout = kNoTimeout) override;
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override;
  // Called by the flush (queue lock held).
  void issued(c10::intrusive_ptr<c10d::Work> w);
  void failed(std::exception_ptr e);

 private:
  // Flushes the queue; the issued Work, or throws the op's error.
  c10::intrusive_ptr<c10d::Work> real();
  std::shared_ptr<P2PQueue> q_;
  mutable std::mutex m_;
  c10::intrusive_ptr<c10d::Work> real_;
  std::exception_ptr err_;
};

class NeuronBackend : public c10d::Backend {
 public:
  // Joins communicator @id as local rank @layout.local_rank with card
  // @dev. @leaders (node leaders only, else null) and @world (every rank)
  // are the Gloo groups between nodes; both null on one node.
  NeuronBackend(int rank, int size, c10::DeviceIndex dev, const nrn_comm_id& id,
                NodeLayout layout, std::chrono::milliseconds timeout,
                c10::intrusive_ptr<c10d::Backend> leaders,
                c10::intrusive_ptr<c10d::Backend> world);
  ~NeuronBackend() override;

  const std::string getBackendName() const override { return "neuron"; }

  c10::intrusive_ptr<c10d::Work> broadcast(
      std::vector<at::Tensor>& tensors, const c10d::BroadcastOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allreduce(
      std::vector<at::Tensor>& tensors, const c10d::AllreduceOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allreduce_coalesced(
      std::vector<at::Tensor>& tensors,
      const c10d::AllreduceCoalescedOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allgather(
      std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
      const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> _allgather_base(
      at::Tensor& output, at::Tensor& input, const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce_scatter(
      std::vector<at::Tensor>& outputs, std::vector<std::vector<at::Tensor>>& inputs,
      const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> _reduce_scatter_base(
      at::Tensor& output, at::Tensor& input,
      const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allgather_into_tensor_coalesced(
      std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
      const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce_scatter_tensor_coalesced(
      std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
      const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce(
      std::vector<at::Tensor>& tensors, const c10d::ReduceOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> gather(
      std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
      const c10d::GatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> scatter(
      std::vector<at::Tensor>& outputs, std::vector<std::vector<at::Tensor>>& inputs,
      const c10d::ScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> alltoall_base(
      at::Tensor& output, at::Tensor& input, std::vector<int64_t>& output_splits,
      std::vector<int64_t>& input_splits, const c10d::AllToAllOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> alltoall(
      std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
      const c10d::AllToAllOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> send(std::vector<at::Tensor>& tensors, int dst,
                                      int tag) override;
  c10::intrusive_ptr<c10d::Work> recv(std::vector<at::Tensor>& tensors, int src,
                                      int tag) override;
  // recv from whichever rank sends to this one first (Work::sourceRank()
  // names it): on one node after the queued sends and recvs are issued.
  c10::intrusive_ptr<c10d::Work> recvAnysource(std::vector<at::Tensor>& tensors,
                                               int tag) override;
  c10::intrusive_ptr<c10d::Work> barrier(const c10d::BarrierOptions& opts) override;

 private:
  bool multinode() const { return layout_.nnodes > 1; }
  // Issues the queued sends and recvs (every collective calls it first).
  void flush_p2p() { p2p_->flush(); }
  // The flush (queue lock held): the ops sorted by (seq, lower rank,
  // higher rank, src) -- one order on every rank -- each issued as one
  // nrn_send/nrn_recv on its caller's stream.
  void issue_p2p_locked();
  // Queues a send (@send) or recv of @t, @peer the other rank.
  c10::intrusive_ptr<c10d::Work> queue_p2p(bool send, at::Tensor& t, int peer);
  // The checks every tensor argument passes (named @op in errors).
  void check_tensor(const at::Tensor& t, const char* op) const;
  // check_tensor of both, the same dtype, @whole world size x @block elements.
  void check_blocks(const at::Tensor& whole, const at::Tensor& block, const char* whole_name,
                    const char* block_name, const char* name) const;
  // All-reduce @t in place on the current stream: one nrn_all_reduce, or
  // across nodes the hierarchical path; what the links do not reduce is
  // all-gathered and folded on the card. Temporaries the card still
  // reads or writes are added to @keep.
  void issue_allreduce(const at::Tensor& t, c10d::ReduceOp op, const char* name,
                       std::vector<at::Tensor>& keep);
  // The bodies of all_gather_into_tensor and reduce_scatter_tensor (checked
  // arguments), for one pair or a coalesced list.
  void issue_allgather(const at::Tensor& output, const at::Tensor& input, const char* name,
                       std::chrono::milliseconds timeout, std::vector<at::Tensor>& keep);
  void issue_reduce_scatter(const at::Tensor& output, const at::Tensor& input,
                            c10d::ReduceOp op, const char* name,
                            std::vector<at::Tensor>& keep);
  // All-to-all of 1-byte elements, rank q's @send[q] bytes of @in to it and
  // @recv[q] bytes from it into @out (both packed in rank order).
  void issue_alltoallv(const at::Tensor& out, const at::Tensor& in,
                       const std::vector<uint64_t>& send, const std::vector<uint64_t>& recv,
                       std::chrono::milliseconds timeout);
  // A Work ending with what was issued on @s so far; @source: a receive's
  // sender (Work::sourceRank()), -1 for the other ops.
  c10::intrusive_ptr<c10d::Work> finish_on(nrn_stream* s, c10d::OpType type,
                                           const char* what,
                                           std::vector<at::Tensor> outputs,
                                           std::vector<at::Tensor> keep,
                                           std::chrono::milliseconds timeout,
                                           int source = -1);
  std::chrono::milliseconds timeout_of(std::chrono::milliseconds t) const;
  // Cross-node paths through the world Gloo group on host copies
  // (NeuronExchange.cpp); they finish on the current stream's copies back.
  c10::intrusive_ptr<c10d::Work> cross_broadcast(std::vector<at::Tensor>& tensors,
                                                 const c10d::BroadcastOptions& opts);
  void cross_allgather(std::vector<at::Tensor> blocks, const at::Tensor& input,
                       std::chrono::milliseconds timeout);
  // @t gets op over every rank's @t through the world Gloo group.
  void cross_allreduce(const at::Tensor& t, c10d::ReduceOp op);
  void count_gloo(const at::Tensor& host);

  c10::DeviceIndex dev_;
  NodeLayout layout_;
  std::chrono::milliseconds timeout_;
  nrn_comm* comm_ = nullptr;
  c10::intrusive_ptr<c10d::Backend> leaders_;
  c10::intrusive_ptr<c10d::Backend> world_;
  std::unique_ptr<CompletionQueue> done_;
  std::shared_ptr<P2PQueue> p2p_;
};

// Process-wide counters of the backend (torch_neuron.distributed.stats()).
struct DistStats {
  std::atomic<int64_t> card_collectives{0};     // libneuron collectives issued
  std::atomic<int64_t> card_bytes{0};           // bytes they were given
  std::atomic<int64_t> gloo_collectives{0};     // cross-node steps through Gloo
  std::atomic<int64_t> gloo_bytes{0};           // host bytes they moved
};
DistStats& dist_stats();

// Where a contiguous neuron tensor's bytes are, how many, and the counting
// of a card collective over @t.
struct Span {
  nrn_buffer* buf;
  uint64_t off;
};
Span span_of(const at::Tensor& t);
uint64_t bytes_of(const at::Tensor& t);
void count_card(const at::Tensor& t);

// Reductions (NeuronReduceOps.cpp). The links reduce float32, float64,
// bfloat16 and float16 with SUM, AVG, PRODUCT, MIN and MAX (PREMUL_SUM is a
// multiply on the card, then SUM); every other reduction the card computes -- integer
// and bool tensors, BAND, BOR, BXOR -- is the ranks' blocks brought
// together (gathered) and folded on the card.
const char* reduce_name(c10d::ReduceOp op);
bool link_reduces(const at::Tensor& t, c10d::ReduceOp op);
nrn_reduce_op link_op(c10d::ReduceOp op);
nisa_dtype link_dtype(const at::Tensor& t);
// Fails, naming @name, for a (dtype, op) neither way reduces.
void check_reduction(const at::Tensor& t, c10d::ReduceOp op, const char* name);
// PREMUL_SUM's factor applied (in @t when @in_place, else in a new
// tensor); @t itself for any other op.
at::Tensor premultiply(const at::Tensor& t, c10d::ReduceOp op, bool in_place);
// @out (numel m) = op over the n rows of @blocks ([n, m]), in rank order.
void fold_blocks(const at::Tensor& blocks, c10d::ReduceOp op, const at::Tensor& out);

// Host copy of @t for the cross-node path (float32 for a reduction's
// 16-bit types, so that Gloo adds in float32), and back.
at::Tensor host_copy(const at::Tensor& t, bool widen);

}  // namespace torch_neuron

// SPDX-License-Identifier: MIT
// The c10d backend "neuron" (NeuronProcessGroup.h): argument checks, the
// all-reduce (hierarchical across nodes), all-gather and reduce-scatter and
// their coalesced forms. The rooted collectives are in NeuronRooted.cpp,
// the all-to-alls, point to point and the cross-node paths in
// NeuronExchange.cpp, the reductions in NeuronReduceOps.cpp.
#include "NeuronProcessGroup.h"

#include "../aten/NeuronOps.h"  // supported_dtype(), card_dtype_names()

#include <ATen/ATen.h>

namespace torch_neuron {

Span span_of(const at::Tensor& t) {
  DeviceSpan sp = storage_span(t.storage());
  return {sp.buf, sp.offset + static_cast<uint64_t>(t.storage_offset()) * t.element_size()};
}

uint64_t bytes_of(const at::Tensor& t) {
  return static_cast<uint64_t>(t.numel()) * t.element_size();
}

void count_card(const at::Tensor& t) {
  dist_stats().card_collectives++;
  dist_stats().card_bytes += static_cast<int64_t>(bytes_of(t));
}

DistStats& dist_stats() {
  static DistStats* s = new DistStats();  // outlives static destructors
  return *s;
}

void NeuronBackend::count_gloo(const at::Tensor& host) {
  dist_stats().gloo_collectives++;
  dist_stats().gloo_bytes += static_cast<int64_t>(host.numel() * host.element_size());
}

at::Tensor host_copy(const at::Tensor& t, bool widen) {
  at::Tensor h = t.to(at::kCPU);  // waits for the work issued before it
  if (widen && (h.scalar_type() == at::kBFloat16 || h.scalar_type() == at::kHalf))
    h = h.to(at::kFloat);  // float32 and float64 stay as they are
  return h;
}

NeuronBackend::NeuronBackend(int rank, int size, c10::DeviceIndex dev,
                             const nrn_comm_id& id, NodeLayout layout,
                             std::chrono::milliseconds timeout,
                             c10::intrusive_ptr<c10d::Backend> leaders,
                             c10::intrusive_ptr<c10d::Backend> world)
    : c10d::Backend(rank, size),
      dev_(dev),
      layout_(layout),
      timeout_(timeout),
      leaders_(std::move(leaders)),
      world_(std::move(world)) {
  TORCH_CHECK(layout_.nnodes == 1 || world_, "neuron: several nodes need the "
              "Gloo group between them");
  TORCH_CHECK(layout_.nnodes > 1 || (layout_.local_size == size &&
                                     layout_.local_rank == rank),
              "neuron: on one node the local ranks are the ranks");
  int64_t ns = timeout.count() > 0 ? timeout.count() * 1000000LL : -1;
  NEURON_CHECK(nrn_comm_init_rank(device(dev), layout_.local_size,
                                  layout_.local_rank, &id, ns, &comm_));
  done_ = std::make_unique<CompletionQueue>();
  p2p_ = std::make_shared<P2PQueue>();
  p2p_->flush_locked = [this] { issue_p2p_locked(); };
}

NeuronBackend::~NeuronBackend() {
  {
    // Sends and recvs never waited for are not issued now (their partner
    // may be gone): their Works fail.
    std::lock_guard<std::mutex> g(p2p_->m);
    p2p_->flush_locked = nullptr;
    for (auto& op : p2p_->ops) {
      try {
        TORCH_CHECK_WITH(DistBackendError, false, "neuron: ", op.send ? "send to" :
                         "recv from", " rank ", op.send ? op.dst : op.src, ": the "
                         "process group was destroyed before it was issued (a send or "
                         "recv is issued when its Work is waited for, or before the "
                         "next collective)");
      } catch (...) {
        op.work->failed(std::current_exception());
      }
    }
    p2p_->ops.clear();
  }
  done_.reset();  // completes the works in flight
  if (comm_)
    nrn_comm_destroy(comm_);
}

std::chrono::milliseconds NeuronBackend::timeout_of(std::chrono::milliseconds t) const {
  return t.count() > 0 ? t : timeout_;
}

void NeuronBackend::check_tensor(const at::Tensor& t, const char* op) const {
  TORCH_CHECK(t.device().type() == c10::DeviceType::PrivateUse1, "neuron: ", op,
              ": the backend \"neuron\" takes neuron tensors, got a tensor on ",
              t.device(), " (use a group with a CPU backend, e.g. "
              "init_process_group(\"cpu:gloo,neuron:neuron\"), for CPU tensors)");
  TORCH_CHECK(t.device().index() == dev_, "neuron: ", op, ": the tensor is on ",
              t.device(), " but this rank's card is neuron:", static_cast<int>(dev_));
  TORCH_CHECK(t.is_contiguous(), "neuron: ", op, ": the tensor must be "
              "contiguous (call .contiguous() first)");
  TORCH_CHECK(supported_dtype(t.scalar_type()), "neuron: ", op, ": dtype ",
              t.scalar_type(), " is not supported on the card (", card_dtype_names(), ")");
}

c10::intrusive_ptr<c10d::Work> NeuronBackend::finish_on(
    nrn_stream* s, c10d::OpType type, const char* what, std::vector<at::Tensor> outputs,
    std::vector<at::Tensor> keep, std::chrono::milliseconds timeout, int source) {
  nrn_event* ev = nullptr;
  NEURON_CHECK(nrn_event_create(device(dev_), &ev));
  int rc = nrn_event_record(ev, s);
  if (rc < 0) {
    nrn_event_destroy(ev);
    NEURON_CHECK(rc);
  }
  auto w = c10::make_intrusive<NeuronWork>(rank_, type, what, ev, std::move(outputs),
                                           std::move(keep), timeout_of(timeout), source);
  done_->push(w);
  return w;
}

void NeuronBackend::issue_allreduce(const at::Tensor& t, c10d::ReduceOp op,
                                    const char* name, std::vector<at::Tensor>& keep) {
  check_reduction(t, op, name);
  if (t.numel() == 0)
    return;
  nrn_stream* s = device_stream(dev_);
  premultiply(t, op, /*in_place=*/true);
  if (!link_reduces(t, op)) {
    if (multinode()) {
      cross_allreduce(t, op);
      return;
    }
    // Every rank's tensor, then the fold, on each card.
    at::Tensor blocks = at::empty({size_, t.numel()}, t.options());
    Span si = span_of(t), so = span_of(blocks);
    NEURON_CHECK(nrn_all_gather(comm_, s, si.buf, si.off, so.buf, so.off, bytes_of(t),
                                NISA_U8));
    count_card(blocks);
    fold_blocks(blocks, op, t);
    keep.push_back(blocks);
    return;
  }
  nisa_dtype dt = link_dtype(t);
  nrn_reduce_op rop = link_op(op);
  Span sp = span_of(t);
  uint64_t n = static_cast<uint64_t>(t.numel());
  if (!multinode()) {
    NEURON_CHECK(nrn_all_reduce(comm_, s, sp.buf, sp.off, sp.buf, sp.off, n, dt, rop));
    count_card(t);
    return;
  }
  // Across nodes: reduce within the node, leaders all-reduce through Gloo
  // (AVG as a SUM divided by the world size), broadcast within the node.
  bool avg = rop == NRN_REDUCE_AVG;
  NEURON_CHECK(nrn_all_reduce(comm_, s, sp.buf, sp.off, sp.buf, sp.off, n, dt,
                              avg ? NRN_REDUCE_SUM : rop));
  count_card(t);
  if (leaders_) {
    at::Tensor h = host_copy(t, true);
    std::vector<at::Tensor> v{h};
    c10d::AllreduceOptions o;
    o.reduceOp = avg || op.op_ == c10d::ReduceOp::PREMUL_SUM
                     ? c10d::ReduceOp(c10d::ReduceOp::SUM) : op;
    o.timeout = timeout_;
    leaders_->allreduce(v, o)->wait();
    if (avg)
      h.div_(size_);
    t.copy_(h.to(t.scalar_type()));
    count_gloo(h);
  }
  NEURON_CHECK(nrn_broadcast(comm_, s, sp.buf, sp.off, bytes_of(t), NISA_U8, 0));
  count_card(t);
}

c10::intrusive_ptr<c10d::Work> NeuronBackend::allreduce(
    std::vector<at::Tensor>& tensors, const c10d::AllreduceOptions& opts) {
  flush_p2p();
  std::vector<at::Tensor> keep;
  for (auto& t : tensors) {
    check_tensor(t, "allreduce");
    check_reduction(t, opts.reduceOp, "allreduce");
  }
  for (auto& t : tensors)
    issue_allreduce(t, opts.reduceOp, "allreduce", keep);
  return finish_on(device_stream(dev_), c10d::OpType::ALLREDUCE, "allreduce",
                   tensors, keep, opts.timeout);
}

// DDP's buckets: one collective per tensor, one Work for them all.
c10::intrusive_ptr<c10d::Work> NeuronBackend::allreduce_coalesced(
    std::vector<at::Tensor>& tensors, const c10d::AllreduceCoalescedOptions& opts) {
  flush_p2p();
  std::vector<at::Tensor> keep;
  for (auto& t : tensors) {
    check_tensor(t, "allreduce_coalesced");
    check_reduction(t, opts.reduceOp, "allreduce_coalesced");
  }
  for (auto& t : tensors)
    issue_allreduce(t, opts.reduceOp, "allreduce_coalesced", keep);
  return finish_on(device_stream(dev_), c10d::OpType::ALLREDUCE_COALESCED,
                   "allreduce_coalesced", tensors, keep, opts.timeout);
}

c10::intrusive_ptr<c10d::Work> NeuronBackend::broadcast(
    std::vector<at::Tensor>& tensors, const c10d::BroadcastOptions& opts) {
  flush_p2p();
  TORCH_CHECK(opts.rootTensor == 0, "neuron: broadcast: one tensor per rank");
  TORCH_CHECK(opts.rootRank >= 0 && opts.rootRank < size_, "neuron: broadcast: "
              "root rank ", opts.rootRank, " is not a rank of ", size_);
  for (auto& t : tensors)
    check_tensor(t, "broadcast");
  nrn_stream* s = device_stream(dev_);
  if (multinode())
    return cross_broadcast(tensors, opts);
  for (auto& t : tensors) {
    if (t.numel() == 0)
      continue;
    Span sp = span_of(t);
    NEURON_CHECK(nrn_broadcast(comm_, s, sp.buf, sp.off, bytes_of(t), NISA_U8,
                               static_cast<int>(opts.rootRank)));
    count_card(t);
  }
  return finish_on(s, c10d::OpType::BROADCAST, "broadcast", tensors, {}, opts.timeout);
}

// The checks of a pair whose @whole side is world size x the @block side.
void NeuronBackend::check_blocks(const at::Tensor& whole, const at::Tensor& block,
                                 const char* whole_name, const char* block_name,
                                 const char* name) const {
  check_tensor(whole, name);
  check_tensor(block, name);
  TORCH_CHECK(whole.scalar_type() == block.scalar_type(), "neuron: ", name, ": ",
              whole_name, " dtype ", whole.scalar_type(), " differs from the ", block_name,
              "'s ", block.scalar_type());
  TORCH_CHECK(whole.numel() == block.numel() * size_, "neuron: ", name, ": the ",
              whole_name, " has ", whole.numel(), " elements, expected ",
              block.numel() * size_, " (world size x ", block_name, ")");
}

void NeuronBackend::issue_allgather(const at::Tensor& output, const at::Tensor& input,
                                    const char* name, std::chrono::milliseconds timeout,
                                    std::vector<at::Tensor>& keep) {
  check_blocks(output, input, "output", "input", name);
  keep.push_back(input);
  if (multinode()) {
    cross_allgather(output.reshape({size_, -1}).unbind(0), input, timeout);
    return;
  }
  if (input.numel() > 0) {
    Span in = span_of(input), out = span_of(output);
    NEURON_CHECK(nrn_all_gather(comm_, device_stream(dev_), in.buf, in.off, out.buf,
                                out.off, bytes_of(input), NISA_U8));
    count_card(output);
  }
}

c10::intrusive_ptr<c10d::Work> NeuronBackend::_allgather_base(
    at::Tensor& output, at::Tensor& input, const c10d::AllgatherOptions& opts) {
  flush_p2p();
  std::vector<at::Tensor> keep;
  issue_allgather(output, input, "all_gather_into_tensor", opts.timeout, keep);
  return finish_on(device_stream(dev_), c10d::OpType::_ALLGATHER_BASE,
                   "all_gather_into_tensor", {output}, keep, opts.timeout);
}

// Functional collectives' (DTensor's) coalesced all-gathers: one per pair.
c10::intrusive_ptr<c10d::Work> NeuronBackend::allgather_into_tensor_coalesced(
    std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
    const c10d::AllgatherOptions& opts) {
  flush_p2p();
  const char* name = "all_gather_into_tensor_coalesced";
  TORCH_CHECK(outputs.size() == inputs.size(), "neuron: ", name, ": ", outputs.size(),
              " outputs for ", inputs.size(), " inputs");
  std::vector<at::Tensor> keep;
  for (size_t i = 0; i < inputs.size(); i++)
    issue_allgather(outputs[i], inputs[i], name, opts.timeout, keep);
  return finish_on(device_stream(dev_), c10d::OpType::COALESCED, name, outputs, keep,
                   opts.timeout);
}

c10::intrusive_ptr<c10d::Work> NeuronBackend::allgather(
    std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
    const c10d::AllgatherOptions& opts) {
  flush_p2p();
  TORCH_CHECK(inputs.size() == 1 && outputs.size() == 1, "neuron: all_gather: "
              "one input tensor and one output list per rank");
  at::Tensor& in = inputs[0];
  check_tensor(in, "all_gather");
  TORCH_CHECK(static_cast<int>(outputs[0].size()) == size_, "neuron: all_gather: "
              "the output list has ", outputs[0].size(), " tensors, expected ", size_);
  for (auto& o : outputs[0]) {
    check_tensor(o, "all_gather");
    TORCH_CHECK(o.device() == in.device() && o.scalar_type() == in.scalar_type() &&
                o.numel() == in.numel(), "neuron: all_gather: every output must "
                "have the input's device, dtype and size");
  }
  if (multinode()) {
    cross_allgather(outputs[0], in, opts.timeout);
    return finish_on(device_stream(dev_), c10d::OpType::ALLGATHER, "all_gather",
                     outputs[0], {in}, opts.timeout);
  }
  // Gather into one buffer, then copy the blocks out on the same stream.
  at::Tensor flat = at::empty({size_ * in.numel()}, in.options());
  nrn_stream* s = device_stream(dev_);
  if (in.numel() > 0) {
    at::Tensor src = in;
    Span si = span_of(src), so = span_of(flat);
    NEURON_CHECK(nrn_all_gather(comm_, s, si.buf, si.off, so.buf, so.off,
                                bytes_of(src), NISA_U8));
    count_card(flat);
    auto blocks = flat.view({size_, -1});
    for (int r = 0; r < size_; r++)
      outputs[0][r].view({-1}).copy_(blocks[r]);
  }
  return finish_on(s, c10d::OpType::ALLGATHER, "all_gather", outputs[0], {in, flat},
                   opts.timeout);
}

void NeuronBackend::issue_reduce_scatter(const at::Tensor& output, const at::Tensor& input,
                                         c10d::ReduceOp op, const char* name,
                                         std::vector<at::Tensor>& keep) {
  check_blocks(input, output, "input", "output", name);
  check_reduction(input, op, name);
  keep.push_back(input);
  if (output.numel() == 0)
    return;
  nrn_stream* s = device_stream(dev_);
  if (multinode()) {
    // All-reduce a copy hierarchically, keep this rank's block.
    at::Tensor tmp = input.clone();
    issue_allreduce(tmp, op, name, keep);
    output.view({-1}).copy_(tmp.view({size_, -1})[rank_]);
    keep.push_back(tmp);
    return;
  }
  at::Tensor in = premultiply(input, op, /*in_place=*/false);
  Span si = span_of(in), so = span_of(output);
  keep.push_back(in);
  if (!link_reduces(input, op)) {
    // Block q of every rank to rank q (an all-to-all), then the fold.
    at::Tensor blocks = at::empty({size_, output.numel()}, output.options());
    Span sb = span_of(blocks);
    NEURON_CHECK(nrn_all_to_all(comm_, s, si.buf, si.off, sb.buf, sb.off,
                                bytes_of(output), NISA_U8));
    count_card(input);
    fold_blocks(blocks, op, output);
    keep.push_back(blocks);
    return;
  }
  NEURON_CHECK(nrn_reduce_scatter(comm_, s, si.buf, si.off, so.buf, so.off,
                                  static_cast<uint64_t>(output.numel()), link_dtype(input),
                                  link_op(op)));
  count_card(input);
}

c10::intrusive_ptr<c10d::Work> NeuronBackend::_reduce_scatter_base(
    at::Tensor& output, at::Tensor& input, const c10d::ReduceScatterOptions& opts) {
  flush_p2p();
  const char* name = "reduce_scatter_tensor";
  std::vector<at::Tensor> keep;
  issue_reduce_scatter(output, input, opts.reduceOp, name, keep);
  return finish_on(device_stream(dev_), c10d::OpType::_REDUCE_SCATTER_BASE, name,
                   {output}, keep, opts.timeout);
}

c10::intrusive_ptr<c10d::Work> NeuronBackend::reduce_scatter_tensor_coalesced(
    std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
    const c10d::ReduceScatterOptions& opts) {
  flush_p2p();
  const char* name = "reduce_scatter_tensor_coalesced";
  TORCH_CHECK(outputs.size() == inputs.size(), "neuron: ", name, ": ", outputs.size(),
              " outputs for ", inputs.size(), " inputs");
  std::vector<at::Tensor> keep;
  for (size_t i = 0; i < inputs.size(); i++)
    check_reduction(inputs[i], opts.reduceOp, name);
  for (size_t i = 0; i < inputs.size(); i++)
    issue_reduce_scatter(outputs[i], inputs[i], opts.reduceOp, name, keep);
  return finish_on(device_stream(dev_), c10d::OpType::COALESCED, name, outputs, keep,
                   opts.timeout);
}

c10::intrusive_ptr<c10d::Work> NeuronBackend::reduce_scatter(
    std::vector<at::Tensor>& outputs, std::vector<std::vector<at::Tensor>>& inputs,
    const c10d::ReduceScatterOptions& opts) {
  flush_p2p();
  TORCH_CHECK(outputs.size() == 1 && inputs.size() == 1, "neuron: reduce_scatter: "
              "one output tensor and one input list per rank");
  TORCH_CHECK(static_cast<int>(inputs[0].size()) == size_, "neuron: reduce_scatter: "
              "the input list has ", inputs[0].size(), " tensors, expected ", size_);
  for (auto& t : inputs[0]) {
    check_tensor(t, "reduce_scatter");
    TORCH_CHECK(t.scalar_type() == outputs[0].scalar_type() &&
                t.numel() == outputs[0].numel(), "neuron: reduce_scatter: every "
                "input must have the output's dtype and size");
  }
  std::vector<at::Tensor> flat_parts;
  for (auto& t : inputs[0])
    flat_parts.push_back(t.reshape({-1}));
  at::Tensor flat = at::cat(flat_parts);
  auto w = _reduce_scatter_base(outputs[0], flat, opts);
  return w;
}

}  // namespace torch_neuron

// SPDX-License-Identifier: MIT
// The c10d backend "neuron" (NeuronProcessGroup.h): the collectives with a
// root -- reduce, gather, scatter. Within a node each is one libneuron
// collective (reduce along the ring into the root; gather and scatter
// card to card over the links, forwarded where two cards have no link);
// across nodes they go through the world Gloo group on host copies.
#include <ATen/ATen.h>

#include "NeuronProcessGroup.h"

namespace torch_neuron {
namespace {

void check_root(int64_t root, int size, const char* name) {
  TORCH_CHECK(root >= 0 && root < size, "neuron: ", name, ": root rank ", root,
              " is not a rank of ", size);
}

}  // namespace

// The root's tensor gets op over every rank's; the others' are left as
// they were (PyTorch's documented contract: only the root's result is
// defined; here it is the input, untouched).
c10::intrusive_ptr<c10d::Work> NeuronBackend::reduce(std::vector<at::Tensor>& tensors,
                                                     const c10d::ReduceOptions& opts) {
  flush_p2p();
  const char* name = "reduce";
  TORCH_CHECK(tensors.size() == 1 && opts.rootTensor == 0, "neuron: ", name,
              ": one tensor per rank");
  check_root(opts.rootRank, size_, name);
  at::Tensor& t = tensors[0];
  check_tensor(t, name);
  check_reduction(t, opts.reduceOp, name);
  int root = static_cast<int>(opts.rootRank);
  bool me = rank_ == root;
  nrn_stream* s = device_stream(dev_);
  std::vector<at::Tensor> keep;
  if (t.numel() == 0)
    return finish_on(s, c10d::OpType::REDUCE, name, tensors, keep, opts.timeout);
  if (multinode()) {
    // The hierarchical all-reduce of a copy; the root keeps it.
    at::Tensor tmp = t.clone();
    issue_allreduce(tmp, opts.reduceOp, name, keep);
    if (me)
      t.copy_(tmp);
    keep.push_back(tmp);
    return finish_on(s, c10d::OpType::REDUCE, name, tensors, keep, opts.timeout);
  }
  at::Tensor in = premultiply(t, opts.reduceOp, /*in_place=*/me);
  Span si = span_of(in), so = span_of(t);
  keep.push_back(in);
  if (link_reduces(t, opts.reduceOp)) {
    NEURON_CHECK(nrn_reduce(comm_, s, si.buf, si.off, me ? so.buf : nullptr, so.off,
                            static_cast<uint64_t>(t.numel()), link_dtype(t),
                            link_op(opts.reduceOp), root));
    count_card(t);
  } else {
    // Every rank's tensor to the root, folded there.
    at::Tensor blocks = me ? at::empty({size_, t.numel()}, t.options()) : at::Tensor();
    Span sb = me ? span_of(blocks) : Span{nullptr, 0};
    NEURON_CHECK(nrn_gather(comm_, s, si.buf, si.off, sb.buf, sb.off, bytes_of(t),
                            NISA_U8, root));
    count_card(t);
    if (me) {
      fold_blocks(blocks, opts.reduceOp, t);
      keep.push_back(blocks);
    }
  }
  return finish_on(s, c10d::OpType::REDUCE, name, tensors, keep, opts.timeout);
}

c10::intrusive_ptr<c10d::Work> NeuronBackend::gather(
    std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
    const c10d::GatherOptions& opts) {
  flush_p2p();
  const char* name = "gather";
  check_root(opts.rootRank, size_, name);
  TORCH_CHECK(inputs.size() == 1, "neuron: ", name, ": one input tensor per rank");
  at::Tensor& in = inputs[0];
  check_tensor(in, name);
  bool me = rank_ == opts.rootRank;
  std::vector<at::Tensor> outs;
  if (me) {
    TORCH_CHECK(outputs.size() == 1 && static_cast<int>(outputs[0].size()) == size_,
                "neuron: ", name, ": the root's output list must have ", size_,
                " tensors");
    outs = outputs[0];
  } else {
    TORCH_CHECK(outputs.empty() || (outputs.size() == 1 && outputs[0].empty()),
                "neuron: ", name, ": only the root rank gives an output list");
  }
  for (auto& o : outs) {
    check_tensor(o, name);
    TORCH_CHECK(o.scalar_type() == in.scalar_type() && o.numel() == in.numel(),
                "neuron: ", name, ": every output must have the input's dtype and size");
  }
  nrn_stream* s = device_stream(dev_);
  std::vector<at::Tensor> keep{in};
  if (multinode()) {
    std::vector<at::Tensor> blocks = outs;
    for (int r = 0; !me && r < size_; r++)
      blocks.push_back(at::empty_like(in));
    cross_allgather(blocks, in, opts.timeout);
    keep.insert(keep.end(), blocks.begin(), blocks.end());
  } else if (in.numel() > 0) {
    // Into one buffer at the root, then its blocks copied out on the stream.
    at::Tensor flat = me ? at::empty({size_ * in.numel()}, in.options()) : at::Tensor();
    Span si = span_of(in), sf = me ? span_of(flat) : Span{nullptr, 0};
    NEURON_CHECK(nrn_gather(comm_, s, si.buf, si.off, sf.buf, sf.off, bytes_of(in),
                            NISA_U8, static_cast<int>(opts.rootRank)));
    count_card(in);
    if (me) {
      auto rows = flat.view({size_, -1});
      for (int r = 0; r < size_; r++)
        outs[r].view({-1}).copy_(rows[r]);
      keep.push_back(flat);
    }
  }
  return finish_on(s, c10d::OpType::GATHER, name, outs, keep, opts.timeout);
}

c10::intrusive_ptr<c10d::Work> NeuronBackend::scatter(
    std::vector<at::Tensor>& outputs, std::vector<std::vector<at::Tensor>>& inputs,
    const c10d::ScatterOptions& opts) {
  flush_p2p();
  const char* name = "scatter";
  check_root(opts.rootRank, size_, name);
  TORCH_CHECK(outputs.size() == 1, "neuron: ", name, ": one output tensor per rank");
  at::Tensor& out = outputs[0];
  check_tensor(out, name);
  bool me = rank_ == opts.rootRank;
  std::vector<at::Tensor> ins;
  if (me) {
    TORCH_CHECK(inputs.size() == 1 && static_cast<int>(inputs[0].size()) == size_,
                "neuron: ", name, ": the root's input list must have ", size_,
                " tensors");
    for (auto& t : inputs[0]) {
      check_tensor(t, name);
      TORCH_CHECK(t.scalar_type() == out.scalar_type() && t.numel() == out.numel(),
                  "neuron: ", name, ": every input must have the output's dtype and size");
      ins.push_back(t.reshape({-1}));
    }
  } else {
    TORCH_CHECK(inputs.empty() || (inputs.size() == 1 && inputs[0].empty()),
                "neuron: ", name, ": only the root rank gives an input list");
  }
  nrn_stream* s = device_stream(dev_);
  // The root's blocks packed in rank order.
  at::Tensor flat = me ? at::cat(ins) : at::Tensor();
  std::vector<at::Tensor> keep;
  if (multinode()) {
    if (!me)
      flat = at::empty({size_ * out.numel()}, out.options());
    std::vector<at::Tensor> v{flat};
    c10d::BroadcastOptions o;
    o.rootRank = opts.rootRank;
    o.timeout = opts.timeout;
    cross_broadcast(v, o);
    out.view({-1}).copy_(flat.view({size_, -1})[rank_]);
    keep.push_back(flat);
  } else if (out.numel() > 0) {
    Span sf = me ? span_of(flat) : Span{nullptr, 0}, so = span_of(out);
    NEURON_CHECK(nrn_scatter(comm_, s, sf.buf, sf.off, so.buf, so.off, bytes_of(out),
                             NISA_U8, static_cast<int>(opts.rootRank)));
    count_card(out);
    if (me)
      keep.push_back(flat);
  }
  return finish_on(s, c10d::OpType::SCATTER, name, outputs, keep, opts.timeout);
}

}  // namespace torch_neuron

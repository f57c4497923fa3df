// SPDX-License-Identifier: MIT
// embedding_bag on the card (modes sum, mean, max; per_sample_weights;
// padding_idx; include_last_offset) and its backward, composed of card
// operations: each index's bag is a running count of the bag starts at or
// before it (offset2bag), the rows are gathered and index_add-ed (sum,
// mean) or scatter-maxed (max) into their bags. Empty bags give 0.
#include "NeuronScatter.h"

#include <limits>

namespace torch_neuron {
namespace {

enum { kSum = 0, kMean = 1, kMax = 2 };

struct Bags {
  at::Tensor idx;       // int64 [n]
  at::Tensor o2b;       // int64 [n]: the bag of each index
  at::Tensor keep;      // bool [n]: not the padding index
  int64_t n, nbags;
};

Bags make_bags(const at::Tensor& weight, const at::Tensor& indices, const at::Tensor& offsets,
               bool include_last_offset, int64_t padding_idx) {
  check_device(weight, indices);
  check_device(weight, offsets);
  TORCH_CHECK(indices.dim() == 1, "input has to be a 1D or 2D Tensor, but got Tensor of "
              "dimension ", indices.dim());
  TORCH_CHECK(offsets.dim() == 1, "offsets has to be a 1D Tensor, but got Tensor of "
              "dimension ", offsets.dim());
  TORCH_CHECK(weight.dim() == 2, "weight has to be a 2D Tensor, but got Tensor of "
              "dimension ", weight.dim());
  for (const at::Tensor* t : {&indices, &offsets})
    TORCH_CHECK(t->scalar_type() == at::kLong || t->scalar_type() == at::kInt,
                "embedding_bag: expected indices and offsets of type int64 or int32, got ",
                t->scalar_type());
  Bags b;
  b.idx = indices.to(at::kLong);
  b.n = indices.numel();
  b.nbags = offsets.numel() - (include_last_offset ? 1 : 0);
  TORCH_CHECK(b.nbags >= 0, "embedding_bag: include_last_offset needs at least one offset");
  at::TensorOptions lo = b.idx.options();
  if (b.n == 0 || b.nbags == 0) {
    b.o2b = at::zeros({b.n}, lo);
    b.keep = at::ones({b.n}, lo.dtype(at::kBool));
    return b;
  }
  // marks[i] = bag starts at i; an index before the first start gets bag -1
  // (refused by the card, as the CPU refuses offsets[0] != 0)
  at::Tensor starts = offsets.to(at::kLong).slice(0, 0, b.nbags);
  at::Tensor marks = at::zeros({b.n + 1}, lo);
  scatter_rows(marks, 0, starts, at::ones({}, lo).expand({b.nbags}), NISA_SCAT_ADD,
               "embedding_bag");
  b.o2b = at::cumsum(marks.slice(0, 0, b.n), 0).sub_(1);
  b.keep = padding_idx >= 0 ? b.idx.ne(padding_idx) : at::ones({b.n}, lo.dtype(at::kBool));
  return b;
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> embedding_bag(
    const at::Tensor& weight, const at::Tensor& indices, const at::Tensor& offsets,
    bool scale_grad_by_freq, int64_t mode, bool sparse,
    const std::optional<at::Tensor>& per_sample_weights, bool include_last_offset,
    int64_t padding_idx) {
  TORCH_CHECK(mode == kSum || mode == kMean || mode == kMax, "embedding_bag: unknown mode ",
              mode);
  bool psw = per_sample_weights && per_sample_weights->defined();
  TORCH_CHECK(!psw || mode == kSum, "embedding_bag: per_sample_weights was not None. "
              "per_sample_weights is only supported for mode='sum' (got mode='",
              mode == kMean ? "mean" : "max", "'). Please open a feature request on GitHub.");
  Bags b = make_bags(weight, indices, offsets, include_last_offset, padding_idx);
  int64_t D = weight.size(1);
  at::TensorOptions lo = b.idx.options();
  at::Tensor out = at::zeros({b.nbags, D}, weight.options());
  at::Tensor bag_size = at::zeros({b.nbags}, lo);
  at::Tensor max_indices = at::zeros({mode == kMax ? b.nbags : 0, D}, lo);
  if (b.n == 0 || b.nbags == 0)
    return {out, b.o2b, bag_size, mode == kMax ? max_indices.fill_(-1) : max_indices};
  at::Tensor rows = weight.index_select(0, b.idx);
  at::Tensor keep = b.keep.unsqueeze(1);
  bag_size.index_add_(0, b.o2b, b.keep.to(at::kLong));
  if (mode == kMax) {
    at::Tensor ninf = at::scalar_tensor(-std::numeric_limits<double>::infinity(),
                                        weight.options());
    out.fill_(ninf);
    scatter_rows(out, 0, b.o2b, at::where(keep, rows, ninf), NISA_SCAT_MAX, "embedding_bag");
    at::Tensor empty = bag_size.eq(0).unsqueeze(1);
    out = at::where(empty, at::zeros({}, weight.options()), out);
    // the first index (in order) reaching its bag's maximum, per column
    at::Tensor pos = at::arange(b.n, lo).unsqueeze(1).expand({b.n, D});
    at::Tensor hit = rows.eq(out.index_select(0, b.o2b)).logical_and_(keep);
    at::Tensor first = at::full({b.nbags, D}, b.n, lo);
    scatter_rows(first, 0, b.o2b, at::where(hit, pos, at::scalar_tensor(b.n, lo)),
                 NISA_SCAT_MIN, "embedding_bag");
    at::Tensor padded = at::cat({b.idx, at::full({1}, -1, lo)});
    max_indices = padded.index_select(0, first.reshape({-1})).view({b.nbags, D});
    return {out, b.o2b, bag_size, max_indices};
  }
  if (psw) {
    check_device(weight, *per_sample_weights);
    rows = rows * per_sample_weights->reshape({b.n, 1});
  }
  rows = at::where(keep, rows, at::zeros({}, rows.options()));
  out.index_add_(0, b.o2b, rows);
  if (mode == kMean)
    out.div_(bag_size.clamp_min(1).unsqueeze(1).to(out.scalar_type()));
  return {out, b.o2b, bag_size, max_indices};
}

at::Tensor embedding_bag_dense_backward(const at::Tensor& grad, const at::Tensor& indices,
                                        const at::Tensor& offset2bag,
                                        const at::Tensor& bag_size,
                                        const at::Tensor& max_indices,
                                        c10::SymInt num_weights, bool scale_grad_by_freq,
                                        int64_t mode,
                                        const std::optional<at::Tensor>& per_sample_weights,
                                        int64_t padding_idx) {
  TORCH_CHECK(!scale_grad_by_freq, "neuron: embedding_bag with scale_grad_by_freq=True is "
              "not supported");
  int64_t V = num_weights.expect_int(), D = grad.size(1);
  at::Tensor gw = at::zeros({V, D}, grad.options());
  if (indices.numel() == 0)
    return gw;
  at::Tensor idx = indices.to(at::kLong);
  if (mode == kMax) {
    at::Tensor mi = max_indices.to(at::kLong);
    at::Tensor valid = mi.ge(0);
    at::Tensor g = at::where(valid, grad, at::zeros({}, grad.options()));
    gw.scatter_add_(0, at::where(valid, mi, at::zeros({}, mi.options())), g);
    return gw;
  }
  at::Tensor g = grad.index_select(0, offset2bag);
  if (per_sample_weights && per_sample_weights->defined())
    g = g * per_sample_weights->reshape({-1, 1});
  if (mode == kMean)
    g = g / bag_size.clamp_min(1).index_select(0, offset2bag).unsqueeze(1).to(g.scalar_type());
  if (padding_idx >= 0)
    g = at::where(idx.ne(padding_idx).unsqueeze(1), g, at::zeros({}, g.options()));
  gw.index_add_(0, idx, g);
  return gw;
}

at::Tensor embedding_bag_per_sample_weights_backward(const at::Tensor& grad,
                                                     const at::Tensor& weight,
                                                     const at::Tensor& indices,
                                                     const at::Tensor& offsets,
                                                     const at::Tensor& offset2bag, int64_t mode,
                                                     int64_t padding_idx) {
  TORCH_CHECK(mode == kSum, "embedding_bag_backward: per_sample_weights only supported "
              "for mode='sum'");
  if (indices.numel() == 0)
    return at::zeros({0}, grad.options());
  at::Tensor idx = indices.to(at::kLong);
  at::Tensor r = (grad.index_select(0, offset2bag) * weight.index_select(0, idx)).sum(1);
  if (padding_idx >= 0)
    r = at::where(idx.ne(padding_idx), r, at::zeros({}, r.options()));
  return r;
}

// The autograd formula's entry point: the dense gradient (as the CPU's
// non-sparse path); a sparse gradient is refused loudly.
at::Tensor embedding_bag_backward(const at::Tensor& grad, const at::Tensor& indices,
                                  const at::Tensor& offsets, const at::Tensor& offset2bag,
                                  const at::Tensor& bag_size,
                                  const at::Tensor& maximum_indices, c10::SymInt num_weights,
                                  bool scale_grad_by_freq, int64_t mode, bool sparse,
                                  const std::optional<at::Tensor>& per_sample_weights,
                                  int64_t padding_idx) {
  TORCH_CHECK(!sparse, "neuron: embedding_bag with sparse=True (a sparse gradient) is "
              "not supported");
  return embedding_bag_dense_backward(grad, indices, offset2bag, bag_size, maximum_indices,
                                      num_weights, scale_grad_by_freq, mode,
                                      per_sample_weights, padding_idx);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_embedding_bag_forward_only", embedding_bag);
  m.impl("_embedding_bag", embedding_bag);
  m.impl("_embedding_bag_backward", embedding_bag_backward);
  m.impl("_embedding_bag_dense_backward", embedding_bag_dense_backward);
  m.impl("_embedding_bag_per_sample_weights_backward",
         embedding_bag_per_sample_weights_backward);
}

}  // namespace torch_neuron

// SPDX-License-Identifier: MIT
// Indexing on the card: index_select (embedding), gather, scatter_add,
// index_add and embedding's backward.
#include "NeuronOps.h"

namespace torch_neuron {
namespace {

void check_index(const at::Tensor& index) {
  TORCH_CHECK(index.scalar_type() == at::kLong || index.scalar_type() == at::kInt,
              "index must be int64 or int32, got ", index.scalar_type());
}

at::Tensor& index_select_into(const at::Tensor& self, int64_t dim,
                              const at::Tensor& index, at::Tensor& out) {
  check_index(index);
  check_device(self, index);
  at::Tensor idx = index.dim() == 0 ? index.view({1}) : index;
  TORCH_CHECK(idx.dim() == 1, "index_select(): Index is supposed to be a vector");
  dim = at::maybe_wrap_dim(dim, std::max<int64_t>(self.dim(), 1));
  std::vector<int64_t> shape(self.sizes().begin(), self.sizes().end());
  if (self.dim() == 0) {
    // A scalar stays a scalar (as on the CPU): one index, a 0-dim result.
    TORCH_CHECK(idx.size(0) == 1, "index_select(): Index to scalar can have "
                "only 1 value, got ", idx.size(0), " value(s)");
  } else {
    shape[dim] = idx.size(0);
  }
  resize_out(out, shape);
  if (out.numel() == 0)
    return out;
  at::Tensor src = self.dim() == 0 ? self.view({1}) : self;
  at::Tensor dst = out.dim() == 0 ? out.view({1}) : out;
  nrn_tensor_desc o = desc(dst), s = desc(src), i = desc(idx);
  NEURON_OP(nrn_op_gather(stream_for(self), NISA_IDX_SELECT, &o, &s, &i,
                          static_cast<int>(dim)));
  return out;
}

at::Tensor index_select(const at::Tensor& self, int64_t dim, const at::Tensor& index) {
  at::Tensor out = empty_neuron({0}, self.scalar_type(), self.device());
  return index_select_into(self, dim, index, out);
}

at::Tensor& index_select_out(const at::Tensor& self, int64_t dim,
                             const at::Tensor& index, at::Tensor& out) {
  return index_select_into(self, dim, index, out);
}

at::Tensor& gather_out(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                       bool sparse_grad, at::Tensor& out) {
  check_index(index);
  check_device(self, index);
  dim = at::maybe_wrap_dim(dim, std::max<int64_t>(self.dim(), 1));
  resize_out(out, index.sizes());
  if (out.numel() == 0)
    return out;
  nrn_tensor_desc o = desc(out), s = desc(self), i = desc(index);
  NEURON_OP(nrn_op_gather(stream_for(self), NISA_IDX_ELEMENT, &o, &s, &i,
                          static_cast<int>(dim)));
  return out;
}

at::Tensor gather(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                  bool sparse_grad) {
  at::Tensor out = empty_neuron(index.sizes(), self.scalar_type(), self.device());
  return gather_out(self, dim, index, sparse_grad, out);
}

at::Tensor& scatter_add_(at::Tensor& self, int64_t dim, const at::Tensor& index,
                         const at::Tensor& src) {
  check_index(index);
  check_device(self, index);
  check_device(self, src);
  if (index.numel() == 0)
    return self;
  dim = at::maybe_wrap_dim(dim, std::max<int64_t>(self.dim(), 1));
  // The card walks the index's shape and reads src there.
  at::Tensor s = src.sizes() == index.sizes() ? src
                 : src.as_strided(index.sizes(), src.strides(), src.storage_offset());
  nrn_tensor_desc o = desc(self), ds = desc(s), i = desc(index);
  NEURON_OP(nrn_op_scatter_add(stream_for(self), NISA_IDX_ELEMENT, &o, &ds, &i,
                               static_cast<int>(dim)));
  return self;
}

at::Tensor scatter_add(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                       const at::Tensor& src) {
  at::Tensor out = self.clone();
  return scatter_add_(out, dim, index, src);
}

at::Tensor& index_add_into(at::Tensor& out, int64_t dim, const at::Tensor& index,
                           const at::Tensor& source, const at::Scalar& alpha) {
  check_index(index);
  check_device(out, index);
  check_device(out, source);
  if (index.numel() == 0)
    return out;
  dim = at::maybe_wrap_dim(dim, std::max<int64_t>(out.dim(), 1));
  at::Tensor src = alpha.toDouble() == 1.0 ? source : source.mul(alpha);
  at::Tensor idx = index.dim() == 0 ? index.view({1}) : index;
  // A scalar is a one-element vector here (as index_select reads it).
  at::Tensor dst = out.dim() == 0 ? out.view({1}) : out;
  if (out.dim() == 0)
    src = src.reshape({1});
  nrn_tensor_desc o = desc(dst), s = desc(src), i = desc(idx);
  NEURON_OP(nrn_op_scatter_add(stream_for(out), NISA_IDX_SELECT, &o, &s, &i,
                               static_cast<int>(dim)));
  return out;
}

at::Tensor& index_add_(at::Tensor& self, int64_t dim, const at::Tensor& index,
                       const at::Tensor& source, const at::Scalar& alpha) {
  return index_add_into(self, dim, index, source, alpha);
}

at::Tensor& index_add_out(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                          const at::Tensor& source, const at::Scalar& alpha,
                          at::Tensor& out) {
  if (!out.is_same(self)) {
    resize_out(out, self.sizes());
    out.copy_(self);
  }
  return index_add_into(out, dim, index, source, alpha);
}

// grad_weight[num_weights, D] = sum of grad rows per index; padding_idx gets 0.
at::Tensor embedding_dense_backward(const at::Tensor& grad, const at::Tensor& indices,
                                    c10::SymInt num_weights, c10::SymInt padding_idx,
                                    bool scale_grad_by_freq) {
  TORCH_CHECK(!scale_grad_by_freq, "neuron: embedding with scale_grad_by_freq=True "
              "is not supported");
  int64_t n = num_weights.expect_int(), pad = padding_idx.expect_int();
  int64_t d = grad.size(-1);
  at::Tensor gw = at::zeros({n, d}, grad.options());
  at::Tensor g = grad.reshape({-1, d}), idx = indices.reshape({-1});
  index_add_into(gw, 0, idx, g, 1);
  if (pad >= 0 && pad < n)
    gw.select(0, pad).zero_();
  return gw;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("index_select", index_select);
  m.impl("index_select.out", index_select_out);
  m.impl("gather", gather);
  m.impl("gather.out", gather_out);
  m.impl("scatter_add", scatter_add);
  m.impl("scatter_add_", scatter_add_);
  m.impl("index_add_", index_add_);
  m.impl("index_add.out", index_add_out);
  m.impl("embedding_dense_backward", embedding_dense_backward);
}

}  // namespace torch_neuron

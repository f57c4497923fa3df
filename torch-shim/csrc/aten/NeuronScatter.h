// SPDX-License-Identifier: MIT
// The reducing scatter (NISA_INSN_SCATTER) as the indexing files use it,
// index tensors made safe for the card (negative ones wrapped, any
// outside the axis turned into one the card refuses), and the index
// checks and index_add that several of them share.
#pragma once

#include "NeuronOps.h"

namespace torch_neuron {

// self op= src at index (scatter_ form: index of src's shape, src narrowed
// to it), along dim; checks the shapes as torch.scatter_ does.
void scatter_elements(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                      const at::Tensor& src, nisa_scatter red, const char* op);

// self op= source rows at index (index_copy_ form: index 1-D, source with
// index.numel() entries along dim); checks the shapes.
void scatter_rows(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                  const at::Tensor& source, nisa_scatter red, const char* op);

// int64 indices into an axis of @n: negative ones count from the end, any
// outside [-n, n) becomes n, which the card refuses (NISA_ERR_BAD_INDEX).
at::Tensor wrap_indices(const at::Tensor& index, int64_t n);

// A 0-dim tensor as a one-element vector (a view): the card's GATHER and
// SCATTER walk an axis, which a scalar does not have.
inline at::Tensor as_1d(const at::Tensor& t) { return t.dim() == 0 ? t.view({1}) : t; }

// index, self (and src) as torch.gather and torch.scatter_add check them:
// the same number of dims (a scalar counts as one), and off @dim the
// index no larger than self (and src); @dim wrapped.
void check_elementwise_index(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                             const at::Tensor* src, const char* op);

// A 0-dim tensor of @value on self's device and dtype.
at::Tensor scalar_like(const at::Scalar& value, const at::Tensor& self);

// Index tensors are int64 or int32 (index_select, gather, scatter_add,
// index_add, take, embedding).
inline void check_index(const at::Tensor& index) {
  TORCH_CHECK(index.scalar_type() == at::kLong || index.scalar_type() == at::kInt,
              "index must be int64 or int32, got ", index.scalar_type());
}

// out[.., index[i], ..] += alpha * source[.., i, ..] along @dim: index_add_
// (ScatterGather.cpp), embedding's backward.
at::Tensor& index_add_into(at::Tensor& out, int64_t dim, const at::Tensor& index,
                           const at::Tensor& source, const at::Scalar& alpha);

}  // namespace torch_neuron

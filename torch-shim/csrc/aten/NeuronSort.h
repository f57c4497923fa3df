// SPDX-License-Identifier: MIT
// Sort and scan on the card (NISA_INSN_SORT, NISA_INSN_SCAN) and what is
// built on them, shared by Sorting.cpp (sort, topk, median...),
// CumulativeOps.cpp (cumsum...), ReduceOps.cpp (prod), Unique.cpp,
// Bucketization.cpp (searchsorted), TensorCompare.cpp (isin),
// TensorAdvancedIndexing.cpp (nonzero, masked_select) and
// Distributions.cpp (randperm, multinomial).
#pragma once

#include "NeuronOps.h"

namespace torch_neuron {

// Stable sort of @self along @dim: (values, int64 indices), both contiguous
// in self's shape. NaN is the largest value, as on the CPU.
std::tuple<at::Tensor, at::Tensor> sort_stable(const at::Tensor& self, int64_t dim,
                                               bool descending);

// @sorted put back in the order a sort took it from: out[perm[k]] =
// sorted[k] along @dim (@perm the sort's int64 indices, as sort_stable
// returns them). unique's inverse and the searches' value positions.
inline at::Tensor unsort(const at::Tensor& sorted, const at::Tensor& perm, int64_t dim) {
  return at::empty_like(sorted).scatter_(dim, perm, sorted);
}

// Inclusive scan of @self along @dim in @dtype: a new contiguous tensor, or
// @dst (a contiguous tensor of self's shape and @dtype, not self), and for
// MAX/MIN the int64 positions of the extremes when @indices is set.
at::Tensor scan(nisa_scan op, const at::Tensor& self, int64_t dim,
                at::ScalarType dtype, at::Tensor* indices = nullptr,
                const at::Tensor* dst = nullptr);

// The positions (row-major, int64, ascending) of @mask's true elements,
// found on the card; reads back only their count.
at::Tensor true_positions(const at::Tensor& mask);

// The runs that @first (bool [n], first[0] true) starts: each element's run
// (int64, from 0), each run's first position and, with @want_counts, each
// run's length. unique and unique(dim=) share it.
std::tuple<at::Tensor, at::Tensor, at::Tensor> run_groups(const at::Tensor& first,
                                                          bool want_counts);

// The dtype of a sum, a scan and a prod: @dtype, else int64 for integers and
// bool.
inline at::ScalarType scan_dtype(const at::Tensor& self,
                                 std::optional<at::ScalarType> dtype) {
  if (dtype)
    return *dtype;
  return at::isIntegralType(self.scalar_type(), true) ? at::kLong : self.scalar_type();
}

// Per element of @v, the count of the sorted boundaries @b (along the last
// dim) before it, those < v (or <= v with @right), int64 (int32 with
// @out_int32): searchsorted (Bucketization.cpp) and isin.
at::Tensor search(const at::Tensor& b, const at::Tensor& v, bool right, bool out_int32);

}  // namespace torch_neuron

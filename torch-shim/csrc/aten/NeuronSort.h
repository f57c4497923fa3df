// SPDX-License-Identifier: MIT
// Sort and scan on the card (NISA_INSN_SORT, NISA_INSN_SCAN), shared by
// NeuronSort.cpp (sort, topk, median, cumsum...) and NeuronSelect.cpp
// (nonzero, masked_select, unique, randperm, multinomial...).
#pragma once

#include "NeuronOps.h"

namespace torch_neuron {

// Stable sort of @self along @dim: (values, int64 indices), both contiguous
// in self's shape. NaN is the largest value, as on the CPU.
std::tuple<at::Tensor, at::Tensor> sort_stable(const at::Tensor& self, int64_t dim,
                                               bool descending);

// Inclusive scan of @self along @dim in @dtype: dst (contiguous), and for
// MAX/MIN the int64 positions of the extremes when @indices is set.
at::Tensor scan(nisa_scan op, const at::Tensor& self, int64_t dim,
                at::ScalarType dtype, at::Tensor* indices = nullptr);

// The positions (row-major, int64, ascending) of @mask's true elements,
// found on the card; reads back only their count.
at::Tensor true_positions(const at::Tensor& mask);

}  // namespace torch_neuron

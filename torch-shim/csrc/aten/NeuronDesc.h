// SPDX-License-Identifier: MIT
// Operand descriptors computed arithmetically, for operators that run many
// instructions (Card, NeuronOps.h) on views of a few buffers (batch norm,
// convolution). A view here is only a libneuron descriptor -- sizes,
// strides and an offset over a buffer -- so no ATen view op, allocation or
// dispatch is paid for it; the instructions are exactly those the ATen
// operators would issue.
#pragma once

#include <initializer_list>

#include "NeuronOps.h"

namespace torch_neuron {

// A descriptor of the memory of @base with @sizes and @strides (elements),
// starting @offset elements after @base's first element (>= 0).
inline nrn_tensor_desc view_desc(const nrn_tensor_desc& base, at::IntArrayRef sizes,
                                 at::IntArrayRef strides, int64_t offset = 0) {
  TORCH_CHECK(sizes.size() == strides.size() && sizes.size() <= NRN_TENSOR_MAX_DIMS &&
              offset >= 0, "neuron: internal: bad view of ", sizes.size(), " dims");
  nrn_tensor_desc d{};
  d.buf = base.buf;
  d.dtype = base.dtype;
  d.offset = base.offset + static_cast<uint64_t>(offset) * nisa_dtype_size(base.dtype);
  d.ndim = static_cast<unsigned>(sizes.size());
  for (size_t i = 0; i < sizes.size(); i++) {
    d.shape[i] = sizes[i];
    d.strides[i] = strides[i];
  }
  return d;
}

inline nrn_tensor_desc view_desc(const nrn_tensor_desc& base,
                                 std::initializer_list<int64_t> sizes,
                                 std::initializer_list<int64_t> strides, int64_t offset = 0) {
  return view_desc(base, at::IntArrayRef(sizes), at::IntArrayRef(strides), offset);
}

// Row-major strides of @sizes.
inline std::vector<int64_t> row_major(at::IntArrayRef sizes) {
  std::vector<int64_t> st(sizes.size(), 1);
  for (int64_t i = static_cast<int64_t>(sizes.size()) - 2; i >= 0; i--)
    st[i] = st[i + 1] * std::max<int64_t>(sizes[i + 1], 1);
  return st;
}

}  // namespace torch_neuron

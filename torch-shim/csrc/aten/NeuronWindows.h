// SPDX-License-Identifier: MIT
// What convolution and pooling share: windows of a tensor as strided views
// (descriptors only, nothing computed), padded copies, and the card's copy
// and matmul on such views.
#pragma once

#include <vector>

#include "NeuronOps.h"

namespace torch_neuron {

// A view of @base's storage: @sizes, @strides and @offset in elements, relative
// to @base's first element. Only a descriptor: the card reads it in place.
inline at::Tensor strided(const at::Tensor& base, at::IntArrayRef sizes,
                          at::IntArrayRef strides, int64_t offset = 0) {
  return base.as_strided(sizes, strides, base.storage_offset() + offset);
}

// dst = src (dtype converted), any strides; one instruction per 4 dims.
inline void copy_into(const at::Tensor& dst, const at::Tensor& src) {
  nrn_tensor_desc d = desc(dst), s = desc(src);
  NEURON_OP(nrn_op_copy(stream_for(dst), &d, &s));
}

// dst = a @ b (+ bias) (+ dst when @accumulate), batch dims broadcast.
inline void matmul_acc(const at::Tensor& dst, const at::Tensor& a, const at::Tensor& b,
                       const at::Tensor* bias, bool accumulate) {
  nrn_tensor_desc o = desc(dst), da = desc(a), db = desc(b), dbias{};
  if (bias)
    dbias = desc(*bias);
  NEURON_OP(nrn_op_matmul(stream_for(dst), &o, &da, &db, bias ? &dbias : nullptr,
                          accumulate ? 1 : 0));
}

// dst = a + b, elementwise (b broadcasts); dst may be a itself.
inline void add_into(const at::Tensor& dst, const at::Tensor& a, const at::Tensor& b) {
  nrn_tensor_desc o = desc(dst), da = desc(a), db = desc(b);
  NEURON_OP(nrn_op_binary(stream_for(dst), NISA_BIN_ADD, &o, &da, &db, 1.0));
}

// @x [B, C, *S] copied into a new contiguous [B, C, *(S + lo + hi)] of dtype
// @dtype whose border is @value: lo[i] before and hi[i] after spatial dim i.
inline at::Tensor padded(const at::Tensor& x, at::IntArrayRef lo, at::IntArrayRef hi,
                         double value, at::ScalarType dtype) {
  std::vector<int64_t> sizes(x.sizes().begin(), x.sizes().end());
  int64_t nsp = static_cast<int64_t>(lo.size());
  for (int64_t i = 0; i < nsp; i++)
    sizes[x.dim() - nsp + i] += lo[i] + hi[i];
  at::Tensor out = empty_neuron(sizes, dtype, x.device());
  nrn_tensor_desc o = desc(out);
  NEURON_OP(nrn_op_fill(stream_for(out), &o, value));
  at::Tensor inner = out;
  for (int64_t i = 0; i < nsp; i++)
    inner = inner.narrow(x.dim() - nsp + i, lo[i], x.size(x.dim() - nsp + i));
  copy_into(inner, x);
  return out;
}

// The window at kernel offset @k (a multi-index) of the padded [B, C, *Sp]
// tensor @xp, for every output position: [B, C, *out], reading
// xp[.., k * dilation + o * stride].
inline at::Tensor window(const at::Tensor& xp, at::IntArrayRef k, at::IntArrayRef out,
                         at::IntArrayRef stride, at::IntArrayRef dilation) {
  int64_t nsp = static_cast<int64_t>(k.size()), lead = xp.dim() - nsp, off = 0;
  std::vector<int64_t> sizes(xp.sizes().begin(), xp.sizes().begin() + lead);
  std::vector<int64_t> strides(xp.strides().begin(), xp.strides().begin() + lead);
  for (int64_t i = 0; i < nsp; i++) {
    int64_t st = xp.stride(lead + i);
    off += k[i] * dilation[i] * st;
    sizes.push_back(out[i]);
    strides.push_back(stride[i] * st);
  }
  return strided(xp, sizes, strides, off);
}

// Every multi-index of the box @extent, row-major (the kernel offsets).
inline std::vector<std::vector<int64_t>> offsets(at::IntArrayRef extent) {
  std::vector<std::vector<int64_t>> all(1);
  for (int64_t e : extent) {
    std::vector<std::vector<int64_t>> next;
    for (const auto& pre : all)
      for (int64_t i = 0; i < e; i++) {
        next.push_back(pre);
        next.back().push_back(i);
      }
    all.swap(next);
  }
  return all;
}

}  // namespace torch_neuron

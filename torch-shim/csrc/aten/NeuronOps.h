// SPDX-License-Identifier: MIT
// What the operator files share: tensors as libneuron descriptors, the
// stream to issue on, dtype mapping, and the allocation of results.
#pragma once

#include <ATen/ATen.h>
#include <torch/library.h>

#include "../NeuronHelpers.h"

namespace torch_neuron {

inline bool is_neuron(const at::Tensor& t) {
  return t.device().type() == c10::DeviceType::PrivateUse1;
}

// A CPU 0-dim tensor next to neuron tensors is a scalar (as in `x * 2`).
inline bool is_cpu_scalar(const at::Tensor& t) {
  return t.device().is_cpu() && t.dim() == 0;
}

inline bool supported_dtype(at::ScalarType t) {
  return t == at::kFloat || t == at::kBFloat16 || t == at::kInt ||
         t == at::kLong || t == at::kBool;
}

inline nisa_dtype to_nrn(at::ScalarType t) {
  switch (t) {
    case at::kFloat: return NISA_F32;
    case at::kBFloat16: return NISA_BF16;
    case at::kInt: return NISA_I32;
    case at::kLong: return NISA_I64;
    case at::kBool: return NISA_BOOL;
    default:
      TORCH_CHECK(false, "neuron: dtype ", t, " is not supported on the card "
                  "(float32, bfloat16, int32, int64 and bool are)");
  }
}

// The descriptor of a neuron tensor (any strides).
inline nrn_tensor_desc desc(const at::Tensor& t) {
  TORCH_CHECK(is_neuron(t), "neuron: expected a tensor on device neuron, got "
              "one on ", t.device(), " (move it with .to('neuron'))");
  TORCH_CHECK(t.dim() <= NRN_TENSOR_MAX_DIMS, "neuron: tensors of more than ",
              NRN_TENSOR_MAX_DIMS, " dimensions are not supported");
  nrn_tensor_desc d{};
  DeviceSpan span = storage_span(t.storage());
  d.buf = span.buf;
  d.offset = span.offset + static_cast<uint64_t>(t.storage_offset()) * t.itemsize();
  d.dtype = to_nrn(t.scalar_type());
  d.ndim = static_cast<unsigned>(t.dim());
  for (int64_t i = 0; i < t.dim(); i++) {
    d.shape[i] = t.size(i);
    d.strides[i] = t.stride(i);
  }
  return d;
}

// The stream to issue work on @t on: the current stream of its device.
inline nrn_stream* stream_for(const at::Tensor& t) {
  return device_stream(t.device().index());
}

// Operations read and write many tensors: they must share the device.
inline void check_device(const at::Tensor& a, const at::Tensor& b) {
  TORCH_CHECK(!is_neuron(b) || b.device() == a.device(), "neuron: expected "
              "all tensors on ", a.device(), ", found one on ", b.device());
  TORCH_CHECK(is_neuron(b) || is_cpu_scalar(b), "Expected all tensors to be on "
              "the same device, but found at least two devices, ", a.device(),
              " and ", b.device(), "!");
}

inline at::Tensor empty_neuron(at::IntArrayRef sizes, at::ScalarType dtype,
                               const at::Device& dev) {
  return at::empty(sizes, at::TensorOptions().dtype(dtype).device(dev));
}

// Resize an out= tensor to @sizes (the usual out= contract).
inline void resize_out(const at::Tensor& out, at::IntArrayRef sizes) {
  if (out.sizes() != sizes)
    out.resize_(sizes);
}

}  // namespace torch_neuron

#define NEURON_OP(expr) NEURON_CHECK(expr)

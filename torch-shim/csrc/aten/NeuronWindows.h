// SPDX-License-Identifier: MIT
// What convolution and pooling share: windows of a tensor as strided views
// (descriptors only, nothing computed) and padded copies.
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
  Card(out).copy(inner, x);
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

namespace torch_neuron {

// A small int64 index vector on @dev. Only for tables that depend on shapes
// and scale factors (never on tensor data): built on the host, copied once.
inline at::Tensor shape_index(const std::vector<int64_t>& v, const at::Device& dev) {
  return at::tensor(v, at::TensorOptions().dtype(at::kLong)).to(dev);
}

// The same for float32 weights (interpolation coefficients of shapes and scales).
inline at::Tensor shape_weights(const std::vector<float>& v, const at::Device& dev) {
  return at::tensor(v, at::TensorOptions().dtype(at::kFloat)).to(dev);
}

// Weights as a tensor of type @t on @dev (float32 or float64: values
// computed in float are exact in either).
inline at::Tensor shape_weights(const std::vector<double>& v, const at::Device& dev,
                                at::ScalarType t) {
  return at::tensor(v, at::TensorOptions().dtype(at::kDouble)).to(t).to(dev);
}

// A floating input the card stores, or a clear error naming @op.
inline void check_float_input(const at::Tensor& x, const char* op) {
  TORCH_CHECK(is_neuron(x), "neuron: ", op, ": expected a neuron tensor");
  TORCH_CHECK(at::isFloatingType(x.scalar_type()) && supported_dtype(x.scalar_type()),
              "neuron: ", op, " is not supported for dtype ", x.scalar_type(),
              " on the card");
}

// Concrete sizes of a SymInt list (the card runs eager: no symbolic shapes).
inline std::vector<int64_t> concrete(c10::SymIntArrayRef v) {
  std::vector<int64_t> r;
  for (const c10::SymInt& s : v)
    r.push_back(s.expect_int());
  return r;
}

// @w [n] as a tensor of @ndim dims that broadcasts along dim @d.
inline at::Tensor along(const at::Tensor& w, int64_t ndim, int64_t d) {
  std::vector<int64_t> shape(ndim, 1);
  shape[d] = w.numel();
  return w.view(shape);
}

// What the poolings share.

inline void check_pool_input(const at::Tensor& x, int n, const char* op) {
  check_float_input(x, op);
  bool ok = x.dim() == n + 1 || x.dim() == n + 2;
  for (int64_t i = x.dim() == n + 2 ? 1 : 0; ok && i < x.dim(); i++)
    ok = x.size(i) > 0;
  TORCH_CHECK(ok, "neuron: ", op, ": expected a ", n + 1, "-d or ", n + 2, "-d (batch "
              "mode) tensor with optional 0 dim batch size for input, but got: ", x.sizes());
}

// [B, C, *S] of an input with or without its batch dim.
inline at::Tensor batched(const at::Tensor& x, int n) { return x.dim() == n + 1 ? x.unsqueeze(0) : x; }
inline at::Tensor unbatched(const at::Tensor& t, const at::Tensor& like, int n) {
  return like.dim() == n + 1 ? t.squeeze(0) : t;
}


inline int64_t numel_of(at::IntArrayRef v) {
  int64_t r = 1;
  for (int64_t e : v)
    r *= e;
  return r;
}


// REDUCE @red of @src along its last dim into a new tensor of @dtype.
inline at::Tensor reduce_last(nisa_reduce red, const at::Tensor& src, at::ScalarType dtype) {
  std::vector<int64_t> shape(src.sizes().begin(), src.sizes().end() - 1);
  at::Tensor out = empty_neuron(shape, dtype, src.device());
  if (out.numel() == 0)
    return out;
  nrn_tensor_desc o = desc(out), s = desc(src);
  NEURON_OP(nrn_op_reduce(stream_for(out), red, &o, &s, static_cast<int>(src.dim() - 1)));
  return out;
}

// Max and its window position over the last dim of @wins, as PyTorch picks
// it: the first maximum, or the last NaN.
inline std::tuple<at::Tensor, at::Tensor> max_arg(const at::Tensor& wins) {
  at::Tensor vals = reduce_last(NISA_RED_MAX, wins, wins.scalar_type());
  at::Tensor arg = reduce_last(NISA_RED_ARGMAX, wins, at::kLong);
  int64_t kk = wins.size(-1);
  if (kk > 1 && vals.numel()) {
    // The last NaN: the first one of the windows read backwards.
    at::Tensor last = empty_neuron(vals.sizes(), at::kLong, wins.device());
    nrn_tensor_desc o = desc(last), s = desc(wins);
    s.offset += static_cast<uint64_t>((kk - 1) * wins.stride(-1) * wins.itemsize());
    s.strides[wins.dim() - 1] = -wins.stride(-1);
    NEURON_OP(nrn_op_reduce(stream_for(last), NISA_RED_ARGMAX, &o, &s,
                            static_cast<int>(wins.dim() - 1)));
    at::Tensor from_end = at::rsub(last, kk - 1);
    arg = at::where(vals.ne(vals), from_end, arg);
  }
  return {vals, arg};
}

// table [1, P, KK] (positions of each window's elements), arg [B, P] -> [B, P].
inline at::Tensor positions(const at::Tensor& table, const at::Tensor& arg) {
  int64_t B = arg.size(0), P = arg.size(1);
  return table.expand({B, P, table.size(2)}).gather(2, arg.unsqueeze(2)).squeeze(2);
}

inline std::vector<int64_t> out_shape(int64_t B, int64_t C, at::IntArrayRef sp) {
  std::vector<int64_t> shape{B, C};
  shape.insert(shape.end(), sp.begin(), sp.end());
  return shape;
}


// Scatter-add @grad at flat plane positions @indices into zeros shaped like @input.
inline at::Tensor scatter_back(const at::Tensor& grad, const at::Tensor& input, int n,
                        const at::Tensor& indices, const char* op) {
  check_device(input, grad);
  check_device(input, indices);
  TORCH_CHECK(indices.scalar_type() == at::kLong, "neuron: ", op, ": indices must be int64");
  TORCH_CHECK(grad.sizes() == indices.sizes(), "neuron: ", op, ": grad_output ",
              grad.sizes(), " and indices ", indices.sizes(), " differ in shape");
  at::Tensor x = batched(input, n);
  int64_t BC = x.size(0) * x.size(1), plane = numel_of(x.sizes().slice(2));
  at::Tensor acc = at::zeros({BC, plane}, x.options().dtype(acc_dtype(input.scalar_type())));
  if (grad.numel()) {
    at::Tensor g = grad.to(acc.scalar_type()).contiguous().view({BC, -1});
    acc.scatter_add_(1, indices.contiguous().view({BC, -1}), g);
  }
  return acc.to(input.scalar_type()).view(input.sizes());
}

// index_select / index_add_ along dim @d of a tensor of any rank, through a
// [before, d, after] view (the card's gathers take up to 4 dims).
inline at::Tensor select_along(const at::Tensor& x, int64_t d, const at::Tensor& idx) {
  int64_t pre = 1, post = 1;
  for (int64_t i = 0; i < d; i++)
    pre *= x.size(i);
  for (int64_t i = d + 1; i < x.dim(); i++)
    post *= x.size(i);
  std::vector<int64_t> shape(x.sizes().begin(), x.sizes().end());
  shape[d] = idx.numel();
  return x.reshape({pre, x.size(d), post}).index_select(1, idx).view(shape);
}

inline void add_along(at::Tensor& dst, int64_t d, const at::Tensor& idx, const at::Tensor& src) {
  int64_t pre = 1, post = 1;
  for (int64_t i = 0; i < d; i++)
    pre *= dst.size(i);
  for (int64_t i = d + 1; i < dst.dim(); i++)
    post *= dst.size(i);
  at::Tensor flat = dst.view({pre, dst.size(d), post});  // dst: fresh and contiguous
  flat.index_add_(1, idx, src.reshape({pre, src.size(d), post}));
}

}  // namespace torch_neuron

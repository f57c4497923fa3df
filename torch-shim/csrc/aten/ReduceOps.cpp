// SPDX-License-Identifier: MIT
// Reductions (sum, mean, logsumexp, amax, amin, max/min along a dim, argmax) and
// softmax / log_softmax with their backward, on the card.
#include <algorithm>
#include <cmath>

#include "NeuronOps.h"

namespace torch_neuron {
namespace {

// Dims to reduce, as sorted non-negative indices (none given: all).
std::vector<int64_t> reduce_dims(const at::Tensor& t, at::OptionalIntArrayRef dims) {
  std::vector<int64_t> out;
  if (!dims || dims->empty()) {
    for (int64_t d = 0; d < t.dim(); d++)
      out.push_back(d);
  } else {
    for (int64_t d : *dims)
      out.push_back(at::maybe_wrap_dim(d, t.dim()));
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
  }
  return out;
}

std::vector<int64_t> reduced_shape(const at::Tensor& t, const std::vector<int64_t>& dims,
                                   bool keepdim) {
  std::vector<int64_t> shape;
  for (int64_t d = 0; d < t.dim(); d++) {
    bool r = std::find(dims.begin(), dims.end(), d) != dims.end();
    if (!r)
      shape.push_back(t.size(d));
    else if (keepdim)
      shape.push_back(1);
  }
  return shape;
}

// Reduce @src over @dims, one dim at a time (keeping them), into @out's dtype.
at::Tensor reduce_keep(nisa_reduce red, const at::Tensor& src,
                       const std::vector<int64_t>& dims, at::ScalarType dtype) {
  at::Tensor cur = src;
  if (src.dim() == 0) {
    at::Tensor out = empty_neuron({}, dtype, src.device());
    nrn_tensor_desc o = desc(out), x = desc(src);
    NEURON_OP(nrn_op_reduce(stream_for(src), red, &o, &x, 0));
    return out;
  }
  for (size_t i = 0; i < dims.size(); i++) {
    std::vector<int64_t> shape(cur.sizes().begin(), cur.sizes().end());
    shape[dims[i]] = 1;
    at::Tensor out = empty_neuron(shape, dtype, src.device());
    // Over an empty axis a reduction gives what the ISA's table says, or
    // has no result (the card's BAD_INSN): say so now.
    TORCH_CHECK(cur.numel() > 0 || out.numel() == 0 || nisa_reduce_takes_empty(red),
                "neuron: this reduction of a tensor with no elements has no result");
    nrn_tensor_desc o = desc(out), x = desc(cur);
    NEURON_OP(nrn_op_reduce(stream_for(src), red, &o, &x, static_cast<int>(dims[i])));
    cur = out;
  }
  if (dims.empty())
    cur = cur.to(dtype, false, true);
  return cur;
}

at::ScalarType sum_dtype(const at::Tensor& t, std::optional<at::ScalarType> dtype) {
  if (dtype)
    return *dtype;
  return at::isIntegralType(t.scalar_type(), true) ? at::kLong : t.scalar_type();
}

at::Tensor sum_dim(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                   std::optional<at::ScalarType> dtype) {
  auto dims = reduce_dims(self, dim);
  at::Tensor r = reduce_keep(NISA_RED_SUM, self, dims, sum_dtype(self, dtype));
  return r.view(reduced_shape(self, dims, keepdim));
}

at::Tensor& sum_out(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                    std::optional<at::ScalarType> dtype, at::Tensor& out) {
  at::Tensor r = sum_dim(self, dim, keepdim, dtype ? dtype : out.scalar_type());
  resize_out(out, r.sizes());
  return out.copy_(r);
}

// logsumexp: one LOGSUMEXP per dim (that of the dims' results is that of
// all), in the floating type integers promote to, as the CPU's.
at::Tensor logsumexp(const at::Tensor& self, at::IntArrayRef dim, bool keepdim) {
  at::ScalarType dt = at::isIntegralType(self.scalar_type(), true)
                          ? at::typeMetaToScalarType(at::get_default_dtype())
                          : self.scalar_type();
  auto dims = reduce_dims(self, dim);
  at::Tensor r = reduce_keep(NISA_RED_LOGSUMEXP, self, dims, dt);
  return r.view(reduced_shape(self, dims, keepdim));
}

at::Tensor& logsumexp_out(const at::Tensor& self, at::IntArrayRef dim, bool keepdim,
                          at::Tensor& out) {
  TORCH_CHECK(at::isFloatingType(out.scalar_type()), "logsumexp(): Expected floating "
              "point type for result tensor, but got: ", out.scalar_type());
  at::Tensor r = torch_neuron::logsumexp(self, dim, keepdim);  // not ADL's at::
  resize_out(out, r.sizes());
  return out.copy_(r);
}

at::Tensor mean_dim(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                    std::optional<at::ScalarType> dtype) {
  auto dims = reduce_dims(self, dim);
  at::ScalarType dt = dtype ? *dtype : self.scalar_type();
  TORCH_CHECK(at::isFloatingType(dt), "mean(): could not infer output dtype. "
              "Input dtype must be either a floating point or complex dtype. Got: ",
              self.scalar_type());
  at::Tensor r;
  if (dims.size() == 1) {
    r = reduce_keep(NISA_RED_MEAN, self, dims, dt);
  } else {
    int64_t n = 1;
    for (int64_t d : dims)
      n *= self.size(d);
    r = reduce_keep(NISA_RED_SUM, self, dims, dt);
    r.div_(static_cast<double>(n));
  }
  return r.view(reduced_shape(self, dims, keepdim));
}

at::Tensor& mean_out(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                     std::optional<at::ScalarType> dtype, at::Tensor& out) {
  at::Tensor r = mean_dim(self, dim, keepdim, dtype ? dtype : out.scalar_type());
  resize_out(out, r.sizes());
  return out.copy_(r);
}

at::Tensor extreme(nisa_reduce red, const at::Tensor& self, at::IntArrayRef dim,
                   bool keepdim) {
  TORCH_CHECK(self.numel() > 0 || !dim.empty(), "max(): Expected reduction dim to be "
              "specified for input.numel() == 0. Specify the reduction dim with the 'dim' "
              "argument.");
  auto dims = reduce_dims(self, dim);
  if (self.numel() == 0) {
    // Empty off the reduced dims (which must not be): an empty result.
    for (int64_t d : dims)
      TORCH_CHECK_INDEX(self.size(d) > 0, "max(): Expected reduction dim ", d,
                        " to have non-zero size.");
    return empty_neuron(reduced_shape(self, dims, keepdim), self.scalar_type(),
                        self.device());
  }
  return reduce_keep(red, self, dims, self.scalar_type())
      .view(reduced_shape(self, dims, keepdim));
}

at::Tensor amax(const at::Tensor& self, at::IntArrayRef dim, bool keepdim) {
  return extreme(NISA_RED_MAX, self, dim, keepdim);
}
at::Tensor& amax_out(const at::Tensor& self, at::IntArrayRef dim, bool keepdim,
                     at::Tensor& out) {
  at::Tensor r = torch_neuron::amax(self, dim, keepdim);
  resize_out(out, r.sizes());
  return out.copy_(r);
}
at::Tensor amin(const at::Tensor& self, at::IntArrayRef dim, bool keepdim) {
  return extreme(NISA_RED_MIN, self, dim, keepdim);
}
at::Tensor max_all(const at::Tensor& self) {
  return extreme(NISA_RED_MAX, self, {}, false);
}
at::Tensor min_all(const at::Tensor& self) {
  return extreme(NISA_RED_MIN, self, {}, false);
}

std::tuple<at::Tensor, at::Tensor> extreme_dim(nisa_reduce red, nisa_reduce arg,
                                               const at::Tensor& self, int64_t dim,
                                               bool keepdim) {
  std::vector<int64_t> dims{at::maybe_wrap_dim(dim, std::max<int64_t>(self.dim(), 1))};
  if (self.dim() == 0)
    return {self.clone(), at::zeros({}, self.options().dtype(at::kLong))};
  TORCH_CHECK(self.size(dims[0]) > 0, "max(): Expected reduction dim ", dim,
              " to have non-zero size.");
  auto shape = reduced_shape(self, dims, keepdim);
  at::Tensor v = reduce_keep(red, self, dims, self.scalar_type()).view(shape);
  at::Tensor i = reduce_keep(arg, self, dims, at::kLong).view(shape);
  return {v, i};
}

std::tuple<at::Tensor, at::Tensor> max_dim(const at::Tensor& self, int64_t dim, bool keepdim) {
  return extreme_dim(NISA_RED_MAX, NISA_RED_ARGMAX, self, dim, keepdim);
}
std::tuple<at::Tensor&, at::Tensor&> max_dim_out(const at::Tensor& self, int64_t dim,
                                                 bool keepdim, at::Tensor& values,
                                                 at::Tensor& indices) {
  auto [v, i] = torch_neuron::max_dim(self, dim, keepdim);
  resize_out(values, v.sizes());
  resize_out(indices, i.sizes());
  values.copy_(v);
  indices.copy_(i);
  return {values, indices};
}
std::tuple<at::Tensor, at::Tensor> min_dim(const at::Tensor& self, int64_t dim, bool keepdim) {
  return extreme_dim(NISA_RED_MIN, NISA_RED_ARGMIN, self, dim, keepdim);
}

at::Tensor arg(nisa_reduce red, const at::Tensor& self, std::optional<int64_t> dim,
               bool keepdim) {
  if (!dim) {
    at::Tensor flat = self.reshape({-1});
    at::Tensor r = reduce_keep(red, flat, {0}, at::kLong);
    return r.view(keepdim ? std::vector<int64_t>(self.dim(), 1) : std::vector<int64_t>{});
  }
  std::vector<int64_t> dims{at::maybe_wrap_dim(*dim, std::max<int64_t>(self.dim(), 1))};
  if (self.dim() == 0)
    return at::zeros({}, self.options().dtype(at::kLong));
  return reduce_keep(red, self, dims, at::kLong).view(reduced_shape(self, dims, keepdim));
}

at::Tensor& argmax_out(const at::Tensor& self, std::optional<int64_t> dim, bool keepdim,
                       at::Tensor& out) {
  at::Tensor r = arg(NISA_RED_ARGMAX, self, dim, keepdim);
  resize_out(out, r.sizes());
  return out.copy_(r);
}
at::Tensor argmax(const at::Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  return arg(NISA_RED_ARGMAX, self, dim, keepdim);
}
at::Tensor argmin(const at::Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  return arg(NISA_RED_ARGMIN, self, dim, keepdim);
}

// ---- softmax ----

at::Tensor softmax_impl(nisa_softmax v, const at::Tensor& self, int64_t dim,
                        bool half_to_float) {
  at::Tensor out = at::empty_like(self, at::MemoryFormat::Contiguous);
  if (self.numel() == 0)
    return out;
  nrn_tensor_desc o = desc(out), x = desc(self);
  NEURON_OP(nrn_op_softmax(stream_for(self), v, &o, &x,
                           static_cast<int>(at::maybe_wrap_dim(dim, self.dim()))));
  return out;
}

at::Tensor softmax(const at::Tensor& self, int64_t dim, bool half_to_float) {
  return softmax_impl(NISA_SM_SOFTMAX, self, dim, half_to_float);
}
at::Tensor& softmax_out(const at::Tensor& self, int64_t dim, bool half_to_float,
                        at::Tensor& out) {
  at::Tensor r = torch_neuron::softmax(self, dim, half_to_float);
  resize_out(out, r.sizes());
  return out.copy_(r);
}
at::Tensor log_softmax(const at::Tensor& self, int64_t dim, bool half_to_float) {
  return softmax_impl(NISA_SM_LOG_SOFTMAX, self, dim, half_to_float);
}
at::Tensor& log_softmax_out(const at::Tensor& self, int64_t dim, bool half_to_float,
                            at::Tensor& out) {
  at::Tensor r = torch_neuron::log_softmax(self, dim, half_to_float);
  resize_out(out, r.sizes());
  return out.copy_(r);
}

// d softmax: y * (g - sum(g * y, dim))
at::Tensor softmax_backward(const at::Tensor& grad, const at::Tensor& y, int64_t dim,
                            at::ScalarType input_dtype) {
  at::Tensor gy = grad * y;
  at::Tensor s = gy.sum(dim, true);
  return (grad - s) * y;
}

// d log_softmax: g - exp(y) * sum(g, dim)
at::Tensor log_softmax_backward(const at::Tensor& grad, const at::Tensor& y,
                                int64_t dim, at::ScalarType input_dtype) {
  return grad - y.exp() * grad.sum(dim, true);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("sum.dim_IntList", sum_dim);
  m.impl("sum.IntList_out", sum_out);
  m.impl("mean.dim", mean_dim);
  m.impl("mean.out", mean_out);
  m.impl("logsumexp", logsumexp);
  m.impl("logsumexp.out", logsumexp_out);
  m.impl("amax", amax);
  m.impl("amax.out", amax_out);
  m.impl("amin", amin);
  m.impl("max", max_all);
  m.impl("min", min_all);
  m.impl("max.dim", max_dim);
  m.impl("max.dim_max", max_dim_out);
  m.impl("min.dim", min_dim);
  m.impl("argmax", argmax);
  m.impl("argmax.out", argmax_out);
  m.impl("argmin", argmin);
  m.impl("_softmax", softmax);
  m.impl("_softmax.out", softmax_out);
  m.impl("_log_softmax", log_softmax);
  m.impl("_log_softmax.out", log_softmax_out);
  m.impl("_softmax_backward_data", softmax_backward);
  m.impl("_log_softmax_backward_data", log_softmax_backward);
}

}  // namespace torch_neuron

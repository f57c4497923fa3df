// SPDX-License-Identifier: MIT
// The reductions: sum, mean, logsumexp, amax/amin, max/min (all, along a
// dim), argmax/argmin, prod and aminmax, each REDUCE instructions of the
// card; any/all, var/std with a correction, nansum and the vector norms
// (linalg_vector_norm and torch.norm's overloads) composed of ATen
// operators that dispatch to the card's kernels. (The cumulative ones:
// CumulativeOps.cpp; softmax: SoftMax.cpp.)
#include <algorithm>
#include <cmath>

#include "NeuronSort.h"

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

// The sum or mean of a complex64 tensor: of its real and imaginary planes
// (view_as_real's last dim), each as a float32 tensor's.
at::Tensor complex_reduce(bool mean, const at::Tensor& self, at::OptionalIntArrayRef dim,
                          bool keepdim, std::optional<at::ScalarType> dtype) {
  TORCH_CHECK(!dtype || *dtype == at::kComplexFloat, "neuron: ", mean ? "mean" : "sum",
              " of a complex64 tensor into ", *dtype, " is not supported on the card");
  if (self.dim() == 0)  // nothing to reduce (the planes' own dim is not one)
    return self.clone();
  auto dims = reduce_dims(self, dim);
  at::Tensor planes = at::view_as_real(self);
  at::Tensor r = mean ? at::mean(planes, dims, keepdim) : at::sum(planes, dims, keepdim);
  return at::view_as_complex(r);
}

at::Tensor sum_dim(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                   std::optional<at::ScalarType> dtype) {
  if (self.is_complex())
    return complex_reduce(false, self, dim, keepdim, dtype);
  auto dims = reduce_dims(self, dim);
  at::Tensor r = reduce_keep(NISA_RED_SUM, self, dims, scan_dtype(self, dtype));
  return r.view(reduced_shape(self, dims, keepdim));
}

at::Tensor& sum_out(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                    std::optional<at::ScalarType> dtype, at::Tensor& out) {
  at::Tensor r = sum_dim(self, dim, keepdim, dtype ? dtype : out.scalar_type());
  return into(out, r);
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
  return into(out, r);
}

at::Tensor mean_dim(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                    std::optional<at::ScalarType> dtype) {
  if (self.is_complex())
    return complex_reduce(true, self, dim, keepdim, dtype);
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
  return into(out, r);
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
  return into(out, r);
}
at::Tensor amin(const at::Tensor& self, at::IntArrayRef dim, bool keepdim) {
  return extreme(NISA_RED_MIN, self, dim, keepdim);
}
at::Tensor& amin_out(const at::Tensor& self, at::IntArrayRef dim, bool keepdim,
                     at::Tensor& out) {
  at::Tensor r = torch_neuron::amin(self, dim, keepdim);
  return into(out, r);
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
  return into(out, r);
}
at::Tensor argmax(const at::Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  return arg(NISA_RED_ARGMAX, self, dim, keepdim);
}
at::Tensor argmin(const at::Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  return arg(NISA_RED_ARGMIN, self, dim, keepdim);
}

// ---- prod, aminmax ----

at::Tensor prod_along(const at::Tensor& self, int64_t dim, bool keepdim, at::ScalarType dt) {
  int64_t d = at::maybe_wrap_dim(dim, std::max<int64_t>(self.dim(), 1));
  if (self.dim() == 0)
    return self.to(dt).clone();
  std::vector<int64_t> shape(self.sizes().begin(), self.sizes().end());
  shape[d] = 1;
  at::Tensor out = empty_neuron(shape, dt, self.device());
  if (self.size(d) == 0) {
    out.fill_(1);
  } else if (out.numel()) {
    // Integers stay integers (the card's product is exact on int64).
    bool ints = at::isIntegralType(self.scalar_type(), true) &&
                at::isIntegralType(dt, true);
    at::Tensor x = ints ? self : self.to(dt);
    nrn_tensor_desc o = desc(out), s = desc(x);
    NEURON_OP(nrn_op_reduce(stream_for(self), NISA_RED_PROD, &o, &s, static_cast<int>(d)));
  }
  return keepdim ? out : out.squeeze(d);
}

at::Tensor prod_dim(const at::Tensor& self, int64_t dim, bool keepdim,
                    std::optional<at::ScalarType> dtype) {
  return prod_along(self, dim, keepdim, scan_dtype(self, dtype));
}
at::Tensor& prod_dim_out(const at::Tensor& self, int64_t dim, bool keepdim,
                         std::optional<at::ScalarType> dtype, at::Tensor& out) {
  into(out, prod_along(self, dim, keepdim, dtype ? *dtype : out.scalar_type()));
  return out;
}
at::Tensor prod_all(const at::Tensor& self, std::optional<at::ScalarType> dtype) {
  return prod_along(self.reshape({-1}), 0, false, scan_dtype(self, dtype));
}
at::Tensor& prod_all_out(const at::Tensor& self, std::optional<at::ScalarType> dtype,
                         at::Tensor& out) {
  into(out, prod_along(self.reshape({-1}), 0, false,
                           dtype ? *dtype : out.scalar_type()));
  return out;
}

std::tuple<at::Tensor, at::Tensor> aminmax(const at::Tensor& self, std::optional<int64_t> dim,
                                           bool keepdim) {
  if (dim) {
    TORCH_CHECK(self.dim() == 0 || self.size(at::maybe_wrap_dim(*dim, self.dim())) > 0,
                "aminmax(): Expected reduction dim ", *dim, " to have non-zero size.");
    if (self.dim() == 0)
      return {self.clone(), self.clone()};
    return {at::amin(self, {*dim}, keepdim), at::amax(self, {*dim}, keepdim)};
  }
  TORCH_CHECK(self.numel() > 0, "aminmax(): cannot compute aminmax over an empty "
              "dimension as the operation has no identity.");
  at::Tensor flat = self.reshape({-1});
  at::Tensor lo = at::amin(flat, {0}, false), hi = at::amax(flat, {0}, false);
  if (keepdim) {
    std::vector<int64_t> ones(self.dim(), 1);
    lo = lo.reshape(ones);
    hi = hi.reshape(ones);
  }
  return {lo, hi};
}
std::tuple<at::Tensor&, at::Tensor&> aminmax_out(const at::Tensor& self,
                                                 std::optional<int64_t> dim, bool keepdim,
                                                 at::Tensor& min, at::Tensor& max) {
  auto [lo, hi] = torch_neuron::aminmax(self, dim, keepdim);
  into(min, lo);
  into(max, hi);
  return {min, max};
}

// ---- composed of ATen operators ----

std::vector<int64_t> dims_of(const at::Tensor& t, at::OptionalIntArrayRef dim) {
  std::vector<int64_t> d;
  if (dim && !dim->empty())
    for (int64_t x : *dim)
      d.push_back(at::maybe_wrap_dim(x, std::max<int64_t>(t.dim(), 1)));
  else
    for (int64_t i = 0; i < t.dim(); i++)
      d.push_back(i);
  return d;
}

// ---- any / all: count the nonzero (zero) elements ----
at::Tensor count(const at::Tensor& hits, at::OptionalIntArrayRef dim, bool keepdim) {
  at::Tensor c = hits.to(at::kLong);
  return hits.dim() == 0 ? c : c.sum(dims_of(hits, dim), keepdim);
}
at::Tensor any_dims(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim) {
  return count(self.ne(0), dim, keepdim).gt(0);
}
at::Tensor all_dims(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim) {
  return count(self.eq(0), dim, keepdim).eq(0);
}
at::Tensor any_all(const at::Tensor& self) { return any_dims(self, {}, false); }
at::Tensor all_all(const at::Tensor& self) { return all_dims(self, {}, false); }
at::Tensor any_dim(const at::Tensor& self, int64_t dim, bool keepdim) {
  return any_dims(self, at::IntArrayRef{dim}, keepdim);
}
at::Tensor all_dim(const at::Tensor& self, int64_t dim, bool keepdim) {
  return all_dims(self, at::IntArrayRef{dim}, keepdim);
}
at::Tensor& any_all_out(const at::Tensor& self, at::Tensor& out) {
  return into(out, any_all(self));
}
at::Tensor& all_all_out(const at::Tensor& self, at::Tensor& out) {
  return into(out, all_all(self));
}
at::Tensor& any_dims_out(const at::Tensor& self, at::OptionalIntArrayRef dim,
                         bool keepdim, at::Tensor& out) {
  return into(out, any_dims(self, dim, keepdim));
}
at::Tensor& all_dims_out(const at::Tensor& self, at::OptionalIntArrayRef dim,
                         bool keepdim, at::Tensor& out) {
  return into(out, all_dims(self, dim, keepdim));
}
at::Tensor& any_dim_out(const at::Tensor& self, int64_t dim, bool keepdim,
                        at::Tensor& out) {
  return into(out, any_dim(self, dim, keepdim));
}
at::Tensor& all_dim_out(const at::Tensor& self, int64_t dim, bool keepdim,
                        at::Tensor& out) {
  return into(out, all_dim(self, dim, keepdim));
}

// ---- variance and standard deviation with a correction ----
std::tuple<at::Tensor, at::Tensor> var_mean_impl(const at::Tensor& self,
                                                 at::OptionalIntArrayRef dim,
                                                 const std::optional<at::Scalar>& correction,
                                                 bool keepdim) {
  TORCH_CHECK(at::isFloatingType(self.scalar_type()) ||
              self.scalar_type() == at::kComplexFloat, "var/std: expected a floating "
              "point or complex64 input on neuron, got ", self.scalar_type());
  std::vector<int64_t> d = dims_of(self, dim);
  int64_t n = 1;
  for (int64_t i : d)
    n *= self.dim() ? self.size(i) : 1;
  at::Tensor x = self.dim() == 0 ? self.reshape({1}) : self;
  at::Tensor mean = x.mean(d, true);
  at::Tensor dev = x - mean;
  // |dev|^2: of a complex deviation, the sum of its parts' squares (real)
  at::Tensor sq = dev.is_complex() ? at::view_as_real(dev).square().sum(-1) : dev * dev;
  double c = correction ? correction->toDouble() : 1.0;
  at::Tensor var = sq.sum(d, keepdim).div_(std::max(0.0, n - c));
  if (!keepdim)
    mean = mean.squeeze(d);
  if (self.dim() == 0)
    var = var.reshape({}), mean = mean.reshape({});
  return {var, mean};
}
at::Tensor var_c(const at::Tensor& self, at::OptionalIntArrayRef dim,
                 const std::optional<at::Scalar>& correction, bool keepdim) {
  return std::get<0>(var_mean_impl(self, dim, correction, keepdim));
}
at::Tensor std_c(const at::Tensor& self, at::OptionalIntArrayRef dim,
                 const std::optional<at::Scalar>& correction, bool keepdim) {
  return var_c(self, dim, correction, keepdim).sqrt();
}
std::tuple<at::Tensor, at::Tensor> std_mean_c(const at::Tensor& self,
                                              at::OptionalIntArrayRef dim,
                                              const std::optional<at::Scalar>& correction,
                                              bool keepdim) {
  auto [v, m] = var_mean_impl(self, dim, correction, keepdim);
  return {v.sqrt(), m};
}
at::Tensor& var_c_out(const at::Tensor& self, at::OptionalIntArrayRef dim,
                      const std::optional<at::Scalar>& correction, bool keepdim,
                      at::Tensor& out) {
  return into(out, var_c(self, dim, correction, keepdim));
}
at::Tensor& std_c_out(const at::Tensor& self, at::OptionalIntArrayRef dim,
                      const std::optional<at::Scalar>& correction, bool keepdim,
                      at::Tensor& out) {
  return into(out, std_c(self, dim, correction, keepdim));
}

at::Tensor nansum(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                  std::optional<at::ScalarType> dtype) {
  at::Tensor x = at::where(self.ne(self), at::zeros({}, self.options()), self);
  return x.sum(dims_of(x, dim), keepdim, dtype);
}

// ---- vector norms ----
at::Tensor vector_norm(const at::Tensor& self, const at::Scalar& ord,
                       at::OptionalIntArrayRef dim, bool keepdim,
                       std::optional<at::ScalarType> dtype) {
  // Of complex numbers, the norm of their magnitudes.
  if (self.is_complex())
    return vector_norm(self.abs(), ord, dim, keepdim,
                       dtype ? std::optional(c10::toRealValueType(*dtype)) : std::nullopt);
  TORCH_CHECK(at::isFloatingType(self.scalar_type()), "linalg.vector_norm: expected a "
              "floating point input on neuron, got ", self.scalar_type());
  at::Tensor x = dtype ? self.to(*dtype) : self;
  std::vector<int64_t> d = dims_of(x, dim);
  at::Tensor a = x.abs();
  if (x.dim() == 0)
    a = a.reshape({1}), d = {0};
  double p = ord.toDouble();
  at::Tensor r;
  if (std::isinf(p)) {
    TORCH_CHECK(a.numel() > 0, "linalg.vector_norm cannot compute the ", p,
                " norm on an empty tensor");
    r = p > 0 ? a.amax(d, keepdim) : a.amin(d, keepdim);
  } else if (p == 0) {
    r = a.ne(0).to(x.scalar_type()).sum(d, keepdim);
  } else if (p == 1) {
    r = a.sum(d, keepdim);
  } else if (p == 2) {
    r = (a * a).sum(d, keepdim).sqrt();
  } else {
    r = a.pow(p).sum(d, keepdim).pow(1.0 / p);
  }
  return self.dim() == 0 ? r.reshape({}) : r;
}

at::Tensor& vector_norm_out(const at::Tensor& self, const at::Scalar& ord,
                            at::OptionalIntArrayRef dim, bool keepdim,
                            std::optional<at::ScalarType> dtype, at::Tensor& out) {
  return into(out, vector_norm(self, ord, dim, keepdim, dtype));
}

// ---- torch.norm's overloads: the vector norm of the same order ----
at::Tensor norm_dim_dtype(const at::Tensor& self, const std::optional<at::Scalar>& p,
                          at::IntArrayRef dim, bool keepdim,
                          std::optional<at::ScalarType> dtype) {
  return at::linalg_vector_norm(self, p.value_or(2), dim, keepdim, dtype);
}

at::Tensor norm_dim(const at::Tensor& self, const std::optional<at::Scalar>& p,
                    at::IntArrayRef dim, bool keepdim) {
  return norm_dim_dtype(self, p, dim, keepdim, std::nullopt);
}

at::Tensor norm_dim_dt(const at::Tensor& self, const std::optional<at::Scalar>& p,
                       at::IntArrayRef dim, bool keepdim, at::ScalarType dtype) {
  return norm_dim_dtype(self, p, dim, keepdim, dtype);
}

at::Tensor norm_scalar(const at::Tensor& self, const at::Scalar& p) {
  return norm_dim_dtype(self, p, {}, false, std::nullopt);
}

at::Tensor norm_dtype(const at::Tensor& self, const std::optional<at::Scalar>& p,
                      at::ScalarType dtype) {
  return norm_dim_dtype(self, p, {}, false, dtype);
}

at::Tensor& norm_dim_out(const at::Tensor& self, const std::optional<at::Scalar>& p,
                         at::IntArrayRef dim, bool keepdim, at::Tensor& out) {
  return into(out, norm_dim(self, p, dim, keepdim));
}

at::Tensor& norm_dim_dtype_out(const at::Tensor& self, const std::optional<at::Scalar>& p,
                               at::IntArrayRef dim, bool keepdim, at::ScalarType dtype,
                               at::Tensor& out) {
  return into(out, norm_dim_dt(self, p, dim, keepdim, dtype));
}

at::Tensor& norm_scalar_out(const at::Tensor& self, const at::Scalar& p, at::Tensor& out) {
  return into(out, norm_scalar(self, p));
}

at::Tensor& norm_dtype_out(const at::Tensor& self, const std::optional<at::Scalar>& p,
                           at::ScalarType dtype, at::Tensor& out) {
  return into(out, norm_dtype(self, p, dtype));
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
  m.impl("amin.out", amin_out);
  m.impl("max", max_all);
  m.impl("min", min_all);
  m.impl("max.dim", max_dim);
  m.impl("max.dim_max", max_dim_out);
  m.impl("min.dim", min_dim);
  m.impl("argmax", argmax);
  m.impl("argmax.out", argmax_out);
  m.impl("argmin", argmin);
  m.impl("prod", prod_all);
  m.impl("prod.out", prod_all_out);
  m.impl("prod.dim_int", prod_dim);
  m.impl("prod.int_out", prod_dim_out);
  m.impl("aminmax", aminmax);
  m.impl("aminmax.out", aminmax_out);
  m.impl("any", any_all);
  m.impl("all", all_all);
  m.impl("any.dim", any_dim);
  m.impl("all.dim", all_dim);
  m.impl("any.dims", any_dims);
  m.impl("all.dims", all_dims);
  m.impl("any.all_out", any_all_out);
  m.impl("all.all_out", all_all_out);
  m.impl("any.out", any_dim_out);
  m.impl("all.out", all_dim_out);
  m.impl("any.dims_out", any_dims_out);
  m.impl("all.dims_out", all_dims_out);
  m.impl("linalg_vector_norm", vector_norm);
  m.impl("linalg_vector_norm.out", vector_norm_out);
  m.impl("var.correction", var_c);
  m.impl("std.correction", std_c);
  m.impl("var_mean.correction", var_mean_impl);
  m.impl("std_mean.correction", std_mean_c);
  m.impl("var.correction_out", var_c_out);
  m.impl("std.correction_out", std_c_out);
  m.impl("nansum", nansum);
  m.impl("norm.ScalarOpt_dim", norm_dim);
  m.impl("norm.ScalarOpt_dim_dtype", norm_dim_dt);
  m.impl("norm.Scalar", norm_scalar);
  m.impl("norm.ScalarOpt_dtype", norm_dtype);
  m.impl("norm.out", norm_dim_out);
  m.impl("norm.dtype_out", norm_dim_dtype_out);
  m.impl("norm.Scalar_out", norm_scalar_out);
  m.impl("norm.ScalarOpt_dtype_out", norm_dtype_out);
}

}  // namespace torch_neuron

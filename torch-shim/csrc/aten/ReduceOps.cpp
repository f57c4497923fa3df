// SPDX-License-Identifier: MIT
// The reductions: sum, mean, logsumexp, amax/amin, max/min (all, along a
// dim), argmax/argmin, prod and aminmax, each REDUCE instructions of the
// card; any/all, var/std with a correction and nansum composed of ATen
// operators that dispatch to the card's kernels. (The cumulative ones:
// CumulativeOps.cpp; softmax: SoftMax.cpp; the vector norms:
// VectorNorms.cpp.)
#include <algorithm>
#include <cmath>

#include <ATen/ops/all_meta.h>
#include <ATen/ops/amax_meta.h>
#include <ATen/ops/amin_meta.h>
#include <ATen/ops/aminmax_meta.h>
#include <ATen/ops/any_meta.h>
#include <ATen/ops/argmax_meta.h>
#include <ATen/ops/argmin_meta.h>
#include <ATen/ops/max_meta.h>
#include <ATen/ops/mean_meta.h>
#include <ATen/ops/min_meta.h>
#include <ATen/ops/prod_meta.h>
#include <ATen/ops/sum_meta.h>

#include "NeuronElementwise.h"
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

// Reduce @src over @dims, one dim at a time (keeping them), into @dtype; the
// last step into @dst when given (contiguous, of @dtype, the result's
// elements: keepdim or not).
at::Tensor reduce_keep(nisa_reduce red, const at::Tensor& src,
                       const std::vector<int64_t>& dims, at::ScalarType dtype,
                       const at::Tensor* dst = nullptr) {
  at::Tensor cur = src;
  if (src.dim() == 0) {
    at::Tensor out = dst ? *dst : empty_neuron({}, dtype, src.device());
    nrn_tensor_desc o = desc(out), x = desc(src);
    NEURON_OP(nrn_op_reduce(stream_for(src), red, &o, &x, 0));
    return out;
  }
  for (size_t i = 0; i < dims.size(); i++) {
    std::vector<int64_t> shape(cur.sizes().begin(), cur.sizes().end());
    shape[dims[i]] = 1;
    at::Tensor out = dst && i + 1 == dims.size() ? dst->view(shape)
                                                 : empty_neuron(shape, dtype, src.device());
    // Over an empty axis a reduction gives what the ISA's table says, or
    // has no result (the card's BAD_INSN): say so now.
    TORCH_CHECK(cur.numel() > 0 || out.numel() == 0 || nisa_reduce_takes_empty(red),
                "neuron: this reduction of a tensor with no elements has no result");
    nrn_tensor_desc o = desc(out), x = desc(cur);
    NEURON_OP(nrn_op_reduce(stream_for(src), red, &o, &x, static_cast<int>(dims[i])));
    cur = out;
  }
  return cur;
}

// Reduce @self over @dims into @out, a reduction's result (its meta's:
// reduced shape, keepdim or not, and type). Into an integer type the CPU
// converts a floating input's elements before it reduces them, and so
// does the card. An out= that shares memory with self gets a copy.
void reduce_into(nisa_reduce red, const at::Tensor& self, const std::vector<int64_t>& dims,
                 const at::Tensor& out) {
  bool convert = !at::isIntegralType(self.scalar_type(), true) &&
                 at::isIntegralType(out.scalar_type(), true) && red != NISA_RED_ARGMAX &&
                 red != NISA_RED_ARGMIN;
  at::Tensor x = convert ? self.to(out.scalar_type()) : self;
  // Written in place only when no input element is also a result element.
  if (out.is_contiguous() && !may_share_elements(out, x))
    reduce_keep(red, x, dims, out.scalar_type(), &out);
  else
    out.copy_(reduce_keep(red, x, dims, out.scalar_type()).view(out.sizes()));
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

// The results of sum, mean, amax, amin, max and min along dims, argmax,
// argmin and aminmax, and their checks, are their structured metas'.
at::Tensor sum_dim(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                   std::optional<at::ScalarType> dtype) {
  if (self.is_complex())
    return complex_reduce(false, self, dim, keepdim, dtype);
  at::Tensor out = meta_results<at::meta::structured_sum_dim_IntList>(
      Form::Functional, {}, self, dim, keepdim, dtype)[0];
  reduce_into(NISA_RED_SUM, self, reduce_dims(self, dim), out);
  return out;
}

at::Tensor& sum_out(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                    std::optional<at::ScalarType> dtype, at::Tensor& out) {
  meta_results<at::meta::structured_sum_dim_IntList>(Form::Out, {out}, self, dim, keepdim,
                                                     dtype);
  if (self.is_complex())
    return into(out, complex_reduce(false, self, dim, keepdim, out.scalar_type()));
  reduce_into(NISA_RED_SUM, self, reduce_dims(self, dim), out);
  return out;
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

void mean_into(const at::Tensor& self, at::OptionalIntArrayRef dim, const at::Tensor& out) {
  auto dims = reduce_dims(self, dim);
  if (dims.size() == 1) {
    reduce_into(NISA_RED_MEAN, self, dims, out);
    return;
  }
  int64_t n = 1;
  for (int64_t d : dims)
    n *= self.size(d);
  reduce_into(NISA_RED_SUM, self, dims, out);
  out.div_(static_cast<double>(n));
}

at::Tensor mean_dim(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                    std::optional<at::ScalarType> dtype) {
  if (self.is_complex())
    return complex_reduce(true, self, dim, keepdim, dtype);
  at::Tensor out = meta_results<at::meta::structured_mean_dim>(Form::Functional, {}, self,
                                                               dim, keepdim, dtype)[0];
  mean_into(self, dim, out);
  return out;
}

at::Tensor& mean_out(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                     std::optional<at::ScalarType> dtype, at::Tensor& out) {
  meta_results<at::meta::structured_mean_dim>(Form::Out, {out}, self, dim, keepdim, dtype);
  if (self.is_complex())
    return into(out, complex_reduce(true, self, dim, keepdim, out.scalar_type()));
  mean_into(self, dim, out);
  return out;
}

// max() and min() of all elements (which have no structured meta).
at::Tensor extreme_all(nisa_reduce red, const at::Tensor& self) {
  TORCH_CHECK(self.numel() > 0, red == NISA_RED_MAX ? "max" : "min", "(): Expected "
              "reduction dim to be specified for input.numel() == 0. Specify the "
              "reduction dim with the 'dim' argument.");
  at::Tensor r = reduce_keep(red, self, reduce_dims(self, {}), self.scalar_type());
  return r.view(at::IntArrayRef{});  // ({} alone would be view(ScalarType))
}

template <class Meta, nisa_reduce RED>
at::Tensor extreme_fn(const at::Tensor& self, at::IntArrayRef dim, bool keepdim) {
  at::Tensor out = meta_results<Meta>(Form::Functional, {}, self, dim, keepdim)[0];
  if (out.numel())
    reduce_into(RED, self, reduce_dims(self, dim), out);
  return out;
}
template <class Meta, nisa_reduce RED>
at::Tensor& extreme_out(const at::Tensor& self, at::IntArrayRef dim, bool keepdim,
                        at::Tensor& out) {
  meta_results<Meta>(Form::Out, {out}, self, dim, keepdim);
  if (out.numel())
    reduce_into(RED, self, reduce_dims(self, dim), out);
  return out;
}
at::Tensor max_all(const at::Tensor& self) { return extreme_all(NISA_RED_MAX, self); }
at::Tensor min_all(const at::Tensor& self) { return extreme_all(NISA_RED_MIN, self); }

template <class Meta, nisa_reduce RED, nisa_reduce ARG>
void extreme_dim_into(const at::Tensor& self, int64_t dim, at::Tensor& values,
                      at::Tensor& indices) {
  if (self.dim() == 0) {
    values.copy_(self);
    indices.zero_();
    return;
  }
  std::vector<int64_t> dims{at::maybe_wrap_dim(dim, self.dim())};
  if (!values.numel())
    return;
  reduce_into(RED, self, dims, values);
  reduce_into(ARG, self, dims, indices);
}
template <class Meta, nisa_reduce RED, nisa_reduce ARG>
std::tuple<at::Tensor, at::Tensor> extreme_dim(const at::Tensor& self, int64_t dim,
                                               bool keepdim) {
  auto r = meta_results<Meta, 2>(Form::Functional, {}, self, dim, keepdim);
  extreme_dim_into<Meta, RED, ARG>(self, dim, r[0], r[1]);
  return {r[0], r[1]};
}
template <class Meta, nisa_reduce RED, nisa_reduce ARG>
std::tuple<at::Tensor&, at::Tensor&> extreme_dim_out(const at::Tensor& self, int64_t dim,
                                                     bool keepdim, at::Tensor& values,
                                                     at::Tensor& indices) {
  meta_results<Meta, 2>(Form::Out, {values, indices}, self, dim, keepdim);
  extreme_dim_into<Meta, RED, ARG>(self, dim, values, indices);
  return {values, indices};
}

template <class Meta, nisa_reduce RED>
void arg_into(const at::Tensor& self, std::optional<int64_t> dim, const at::Tensor& out) {
  if (!dim) {
    reduce_into(RED, self.reshape({-1}), {0}, out.view({1}));
    return;
  }
  if (self.dim() == 0) {
    out.zero_();
    return;
  }
  reduce_into(RED, self, {at::maybe_wrap_dim(*dim, self.dim())}, out);
}
template <class Meta, nisa_reduce RED>
at::Tensor arg(const at::Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  at::Tensor out = meta_results<Meta>(Form::Functional, {}, self, dim, keepdim)[0];
  arg_into<Meta, RED>(self, dim, out);
  return out;
}
template <class Meta, nisa_reduce RED>
at::Tensor& arg_out(const at::Tensor& self, std::optional<int64_t> dim, bool keepdim,
                    at::Tensor& out) {
  meta_results<Meta>(Form::Out, {out}, self, dim, keepdim);
  if (out.is_contiguous()) {
    arg_into<Meta, RED>(self, dim, out);
    return out;
  }
  return out.copy_(arg<Meta, RED>(self, dim, keepdim));
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

// prod along @dim into @out, the result of prod.dim_int's structured meta
// (its type: the dtype asked for, out='s, or self's with integers as
// int64), computed in place when out is contiguous and shares no memory
// with self.
at::Tensor& prod_into(const at::Tensor& self, int64_t dim, bool keepdim, at::Tensor& out) {
  if (!out.is_contiguous() || may_share_elements(out, self))
    return out.copy_(prod_along(self, dim, keepdim, out.scalar_type()));
  if (self.dim() == 0)
    return out.copy_(self);
  int64_t d = at::maybe_wrap_dim(dim, self.dim());
  at::Tensor o = keepdim ? out : out.unsqueeze(d);
  if (self.size(d) == 0) {
    o.fill_(1);
  } else if (o.numel()) {
    bool ints = at::isIntegralType(self.scalar_type(), true) &&
                at::isIntegralType(out.scalar_type(), true);
    at::Tensor x = ints ? self : self.to(out.scalar_type());
    nrn_tensor_desc od = desc(o), sd = desc(x);
    NEURON_OP(nrn_op_reduce(stream_for(self), NISA_RED_PROD, &od, &sd, static_cast<int>(d)));
  }
  return out;
}
using prod_meta = at::meta::structured_prod_dim_int;
at::Tensor prod_dim(const at::Tensor& self, int64_t dim, bool keepdim,
                    std::optional<at::ScalarType> dtype) {
  auto [out] = meta_results<prod_meta>(Form::Functional, {}, self, dim, keepdim, dtype);
  return prod_into(self, dim, keepdim, out);
}
at::Tensor& prod_dim_out(const at::Tensor& self, int64_t dim, bool keepdim,
                         std::optional<at::ScalarType> dtype, at::Tensor& out) {
  meta_results<prod_meta>(Form::Out, {out}, self, dim, keepdim, dtype);
  return prod_into(self, dim, keepdim, out);
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

void aminmax_into(const at::Tensor& self, std::optional<int64_t> dim, const at::Tensor& lo,
                  const at::Tensor& hi) {
  if (self.dim() == 0) {
    lo.copy_(self);
    hi.copy_(self);
  } else if (lo.numel()) {
    auto dims = dim ? std::vector<int64_t>{at::maybe_wrap_dim(*dim, self.dim())}
                    : reduce_dims(self, {});
    reduce_into(NISA_RED_MIN, self, dims, lo);
    reduce_into(NISA_RED_MAX, self, dims, hi);
  }
}
std::tuple<at::Tensor, at::Tensor> aminmax(const at::Tensor& self, std::optional<int64_t> dim,
                                           bool keepdim) {
  auto r = meta_results<at::meta::structured_aminmax, 2>(Form::Functional, {}, self, dim,
                                                         keepdim);
  aminmax_into(self, dim, r[0], r[1]);
  return {r[0], r[1]};
}
std::tuple<at::Tensor&, at::Tensor&> aminmax_out(const at::Tensor& self,
                                                 std::optional<int64_t> dim, bool keepdim,
                                                 at::Tensor& min, at::Tensor& max) {
  meta_results<at::meta::structured_aminmax, 2>(Form::Out, {min, max}, self, dim, keepdim);
  aminmax_into(self, dim, min, max);
  return {min, max};
}

// ---- composed of ATen operators ----

// ---- any / all: results from their structured metas (bool, or uint8 of a
// uint8 input), the count of nonzero (zero) elements compared with 0 ----
at::Tensor count(const at::Tensor& hits, at::OptionalIntArrayRef dim, bool keepdim) {
  at::Tensor c = hits.to(at::kLong);
  return hits.dim() == 0 ? c : c.sum(reduce_dims(hits, dim), keepdim);
}
at::Tensor& bool_reduce_into(bool any, const at::Tensor& self, at::OptionalIntArrayRef dim,
                             bool keepdim, at::Tensor& out) {
  at::Tensor c = count(any ? self.ne(0) : self.eq(0), dim, keepdim);
  return compare_into(any ? NISA_CMP_GT : NISA_CMP_EQ, c.view(out.sizes()), wrapped(0), out);
}

// The kernels of any or all (ANY), all elements, along a dim or dims,
// functional and out=.
#define BOOL_REDUCE(name, ANY)                                                \
  at::Tensor name##_all(const at::Tensor& self) {                             \
    auto [out] = meta_results<at::meta::structured_##name>(Form::Functional, {}, self); \
    return bool_reduce_into(ANY, self, std::nullopt, false, out);             \
  }                                                                           \
  at::Tensor& name##_all_out(const at::Tensor& self, at::Tensor& out) {       \
    meta_results<at::meta::structured_##name>(Form::Out, {out}, self);        \
    return bool_reduce_into(ANY, self, std::nullopt, false, out);             \
  }                                                                           \
  at::Tensor name##_dim(const at::Tensor& self, int64_t dim, bool keepdim) {  \
    auto [out] = meta_results<at::meta::structured_##name##_dim>(Form::Functional, {}, self, \
                                                                 dim, keepdim); \
    return bool_reduce_into(ANY, self, at::IntArrayRef{dim}, keepdim, out);   \
  }                                                                           \
  at::Tensor& name##_dim_out(const at::Tensor& self, int64_t dim, bool keepdim, \
                             at::Tensor& out) {                               \
    meta_results<at::meta::structured_##name##_dim>(Form::Out, {out}, self, dim, keepdim); \
    return bool_reduce_into(ANY, self, at::IntArrayRef{dim}, keepdim, out);   \
  }                                                                           \
  at::Tensor name##_dims(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim) { \
    auto [out] = meta_results<at::meta::structured_##name##_dims>(Form::Functional, {}, self, \
                                                                  dim, keepdim); \
    return bool_reduce_into(ANY, self, dim, keepdim, out);                    \
  }                                                                           \
  at::Tensor& name##_dims_out(const at::Tensor& self, at::OptionalIntArrayRef dim, \
                              bool keepdim, at::Tensor& out) {                \
    meta_results<at::meta::structured_##name##_dims>(Form::Out, {out}, self, dim, keepdim); \
    return bool_reduce_into(ANY, self, dim, keepdim, out);                    \
  }
BOOL_REDUCE(any, true)
BOOL_REDUCE(all, false)

// ---- variance and standard deviation with a correction ----
std::tuple<at::Tensor, at::Tensor> var_mean_impl(const at::Tensor& self,
                                                 at::OptionalIntArrayRef dim,
                                                 const std::optional<at::Scalar>& correction,
                                                 bool keepdim) {
  TORCH_CHECK(at::isFloatingType(self.scalar_type()) ||
              self.scalar_type() == at::kComplexFloat, "var/std: expected a floating "
              "point or complex64 input on neuron, got ", self.scalar_type());
  std::vector<int64_t> d = reduce_dims(self, dim);
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
  return x.sum(reduce_dims(x, dim), keepdim, dtype);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("sum.dim_IntList", sum_dim);
  m.impl("sum.IntList_out", sum_out);
  m.impl("mean.dim", mean_dim);
  m.impl("mean.out", mean_out);
  m.impl("logsumexp", logsumexp);
  m.impl("logsumexp.out", logsumexp_out);
  using Amax = at::meta::structured_amax;
  using Amin = at::meta::structured_amin;
  m.impl("amax", extreme_fn<Amax, NISA_RED_MAX>);
  m.impl("amax.out", extreme_out<Amax, NISA_RED_MAX>);
  m.impl("amin", extreme_fn<Amin, NISA_RED_MIN>);
  m.impl("amin.out", extreme_out<Amin, NISA_RED_MIN>);
  m.impl("max", max_all);
  m.impl("min", min_all);
  using MaxDim = at::meta::structured_max_dim;
  using MinDim = at::meta::structured_min_dim;
  m.impl("max.dim", extreme_dim<MaxDim, NISA_RED_MAX, NISA_RED_ARGMAX>);
  m.impl("max.dim_max", extreme_dim_out<MaxDim, NISA_RED_MAX, NISA_RED_ARGMAX>);
  m.impl("min.dim", extreme_dim<MinDim, NISA_RED_MIN, NISA_RED_ARGMIN>);
  using Argmax = at::meta::structured_argmax;
  using Argmin = at::meta::structured_argmin;
  m.impl("argmax", arg<Argmax, NISA_RED_ARGMAX>);
  m.impl("argmax.out", arg_out<Argmax, NISA_RED_ARGMAX>);
  m.impl("argmin", arg<Argmin, NISA_RED_ARGMIN>);
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
  m.impl("var.correction", var_c);
  m.impl("std.correction", std_c);
  m.impl("var_mean.correction", var_mean_impl);
  m.impl("std_mean.correction", std_mean_c);
  m.impl("var.correction_out", var_c_out);
  m.impl("std.correction_out", std_c_out);
  m.impl("nansum", nansum);
}

}  // namespace torch_neuron

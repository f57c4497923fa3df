// SPDX-License-Identifier: MIT
// Common operators composed from the card's kernels: any/all, vector norms,
// tril/triu, flip (one strided copy with negative strides), roll, var/std
// with a correction, nansum, dot/vdot and addmv.
#include <algorithm>

#include "NeuronOps.h"

namespace torch_neuron {
namespace {

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

// ---- vector norms ----
at::Tensor vector_norm(const at::Tensor& self, const at::Scalar& ord,
                       at::OptionalIntArrayRef dim, bool keepdim,
                       std::optional<at::ScalarType> dtype) {
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

// ---- tril / triu: keep where (col - row) is on the right side of k ----
at::Tensor tri(const at::Tensor& self, int64_t k, bool lower) {
  TORCH_CHECK(self.dim() >= 2, lower ? "tril" : "triu", ": input tensor must have at "
              "least 2 dimensions");
  at::TensorOptions io = self.options().dtype(at::kLong);
  at::Tensor row = at::arange(self.size(-2), io).unsqueeze(1);
  at::Tensor diff = at::arange(self.size(-1), io) - row;
  at::Tensor keep = lower ? diff.le(k) : diff.ge(k);
  return at::where(keep, self, at::zeros({}, self.options()));
}
at::Tensor tril(const at::Tensor& self, int64_t k) { return tri(self, k, true); }
at::Tensor triu(const at::Tensor& self, int64_t k) { return tri(self, k, false); }
at::Tensor& tril_out(const at::Tensor& self, int64_t k, at::Tensor& out) {
  return into(out, tri(self, k, true));
}
at::Tensor& triu_out(const at::Tensor& self, int64_t k, at::Tensor& out) {
  return into(out, tri(self, k, false));
}
at::Tensor& tril_(at::Tensor& self, int64_t k) { return self.copy_(tri(self, k, true)); }
at::Tensor& triu_(at::Tensor& self, int64_t k) { return self.copy_(tri(self, k, false)); }

// ---- flip: one copy reading the source with negated strides ----
at::Tensor flip(const at::Tensor& self, at::IntArrayRef dims) {
  at::Tensor out = at::empty_like(self, at::MemoryFormat::Contiguous);
  if (self.numel() == 0)
    return out;
  nrn_tensor_desc src = desc(self), dst = desc(out);
  std::vector<bool> seen(std::max<int64_t>(self.dim(), 1), false);
  for (int64_t d0 : dims) {
    int64_t d = at::maybe_wrap_dim(d0, self.dim());
    TORCH_CHECK(!seen[d], "dim ", d, " appears multiple times in the list of dims");
    seen[d] = true;
    src.offset += static_cast<uint64_t>((src.shape[d] - 1) * src.strides[d] *
                                        static_cast<int64_t>(self.itemsize()));
    src.strides[d] = -src.strides[d];
  }
  NEURON_OP(nrn_op_copy(stream_for(out), &dst, &src));
  return out;
}

// ---- roll: the two halves of each rolled dim, swapped ----
at::Tensor roll_n(const at::Tensor& self, at::IntArrayRef shifts, at::IntArrayRef dims) {
  if (dims.empty()) {
    TORCH_CHECK(shifts.size() == 1, "roll: shifts and dims must align");
    return roll_n(self.flatten(), shifts, {0}).view(self.sizes());
  }
  TORCH_CHECK(shifts.size() == dims.size(), "shifts and dimensions must align. shifts: ",
              shifts.size(), ", dims:", dims.size());
  at::Tensor x = self;
  for (size_t i = 0; i < dims.size(); i++) {
    int64_t d = at::maybe_wrap_dim(dims[i], self.dim()), n = x.size(d);
    if (n == 0)
      continue;
    int64_t s = ((shifts[i] % n) + n) % n;
    if (s != 0)
      x = at::cat({x.narrow(d, n - s, s), x.narrow(d, 0, n - s)}, d);
  }
  return x.is_same(self) ? self.clone() : x;
}

// ---- variance and standard deviation with a correction ----
std::tuple<at::Tensor, at::Tensor> var_mean_impl(const at::Tensor& self,
                                                 at::OptionalIntArrayRef dim,
                                                 const std::optional<at::Scalar>& correction,
                                                 bool keepdim) {
  TORCH_CHECK(at::isFloatingType(self.scalar_type()), "var/std: expected a floating "
              "point input on neuron, got ", self.scalar_type());
  std::vector<int64_t> d = dims_of(self, dim);
  int64_t n = 1;
  for (int64_t i : d)
    n *= self.dim() ? self.size(i) : 1;
  at::Tensor x = self.dim() == 0 ? self.reshape({1}) : self;
  at::Tensor mean = x.mean(d, true);
  at::Tensor dev = x - mean;
  double c = correction ? correction->toDouble() : 1.0;
  at::Tensor var = (dev * dev).sum(d, keepdim).div_(std::max(0.0, n - c));
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

// ---- products ----
at::Tensor dot(const at::Tensor& a, const at::Tensor& b) {
  TORCH_CHECK(a.dim() == 1 && b.dim() == 1, "1D tensors expected, but got ", a.dim(),
              "D and ", b.dim(), "D tensors");
  TORCH_CHECK(a.numel() == b.numel(), "inconsistent tensor size, expected tensor [",
              a.numel(), "] and src [", b.numel(), "] to have the same number of "
              "elements, but got ", a.numel(), " and ", b.numel(), " elements respectively");
  TORCH_CHECK(a.scalar_type() == b.scalar_type(), "dot : expected both vectors to have "
              "same dtype, but found ", a.scalar_type(), " and ", b.scalar_type());
  if (!at::isFloatingType(a.scalar_type()))
    return (a * b).sum();
  return at::mm(a.unsqueeze(0), b.unsqueeze(1)).reshape({});
}

at::Tensor addmv_n(const at::Tensor& self, const at::Tensor& mat, const at::Tensor& vec,
                 const at::Scalar& beta, const at::Scalar& alpha) {
  TORCH_CHECK(mat.dim() == 2 && vec.dim() == 1 && mat.size(1) == vec.size(0),
              "size mismatch, got input (", self.sizes(), "), mat (", mat.sizes(),
              "), vec (", vec.sizes(), ")");
  at::Tensor r = at::mm(mat, vec.unsqueeze(1)).squeeze(1);
  if (alpha.toDouble() != 1.0)
    r = r * alpha;
  if (beta.toDouble() != 0.0)
    r = r + self * beta;
  return r;
}
at::Tensor& addmv_out(const at::Tensor& self, const at::Tensor& mat, const at::Tensor& vec,
                      const at::Scalar& beta, const at::Scalar& alpha, at::Tensor& out) {
  return into(out, addmv_n(self, mat, vec, beta, alpha));
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
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
  m.impl("tril", tril);
  m.impl("triu", triu);
  m.impl("tril.out", tril_out);
  m.impl("triu.out", triu_out);
  m.impl("tril_", tril_);
  m.impl("triu_", triu_);
  m.impl("flip", flip);
  m.impl("roll", roll_n);
  m.impl("var.correction", var_c);
  m.impl("std.correction", std_c);
  m.impl("var_mean.correction", var_mean_impl);
  m.impl("std_mean.correction", std_mean_c);
  m.impl("var.correction_out", var_c_out);
  m.impl("std.correction_out", std_c_out);
  m.impl("nansum", nansum);
  m.impl("dot", dot);
  m.impl("vdot", dot);
  m.impl("addmv", addmv_n);
  m.impl("addmv.out", addmv_out);
}

}  // namespace torch_neuron

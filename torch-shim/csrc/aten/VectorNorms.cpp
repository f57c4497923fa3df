// SPDX-License-Identifier: MIT
// The vector norms: linalg_vector_norm and torch.norm's overloads that
// reduce along dims (ATen keeps the one in LinearAlgebra.cpp, the others in
// ReduceOps.cpp; here they are one family). Their results and checks --
// the real result type, an empty input's inf or negative norm refused --
// are their structured metas'; the norm is composed of the card's
// reductions and elementwise kernels, in float32 for float16 and bfloat16
// inputs as the CPU accumulates them. torch.norm's other overloads are
// ATen's composites over these.
#include <cmath>

#include <ATen/ops/linalg_vector_norm_meta.h>
#include <ATen/ops/norm_meta.h>

#include "NeuronMeta.h"

namespace torch_neuron {
namespace {

// The @ord norm of @self along @dim (none: all) into @out, the result of
// linalg_vector_norm's meta (its type: the real type of @dtype, or of
// self's). The reductions read a temporary (the magnitudes), never @out.
void vector_norm_into(const at::Tensor& self, double ord, at::OptionalIntArrayRef dim,
                      bool keepdim, std::optional<at::ScalarType> dtype, at::Tensor& out) {
  at::Tensor a = (dtype ? self.to(*dtype) : self).abs();
  at::Tensor r = out;
  if (a.scalar_type() == at::kHalf || a.scalar_type() == at::kBFloat16) {
    a = a.to(at::kFloat);
    r = at::empty(out.sizes(), out.options().dtype(at::kFloat));
  }
  std::vector<int64_t> d = dim ? dim->vec() : std::vector<int64_t>{};
  if (self.dim() == 0)  // its one element, whatever dims and keepdim say
    a = a.reshape({1}), d = {0}, keepdim = false;
  if (std::isinf(ord)) {
    if (ord > 0)
      at::amax_out(r, a, d, keepdim);
    else
      at::amin_out(r, a, d, keepdim);
  } else if (ord == 0) {
    at::sum_out(r, a.ne(0).to(a.scalar_type()), d, keepdim);
  } else if (ord == 1) {
    at::sum_out(r, a, d, keepdim);
  } else if (ord == 2) {
    at::sum_out(r, a * a, d, keepdim).sqrt_();
  } else {
    at::sum_out(r, a.pow(ord), d, keepdim).pow_(1.0 / ord);
  }
  if (!r.is_same(out))
    out.copy_(r);
}

using VectorNormMeta = at::meta::structured_linalg_vector_norm;

at::Tensor vector_norm(const at::Tensor& self, const at::Scalar& ord,
                       at::OptionalIntArrayRef dim, bool keepdim,
                       std::optional<at::ScalarType> dtype) {
  auto [out] = meta_results<VectorNormMeta>(Form::Functional, {}, self, ord, dim, keepdim, dtype);
  vector_norm_into(self, ord.toDouble(), dim, keepdim, dtype, out);
  return out;
}

at::Tensor& vector_norm_out(const at::Tensor& self, const at::Scalar& ord,
                            at::OptionalIntArrayRef dim, bool keepdim,
                            std::optional<at::ScalarType> dtype, at::Tensor& out) {
  meta_results<VectorNormMeta>(Form::Out, {out}, self, ord, dim, keepdim, dtype);
  vector_norm_into(self, ord.toDouble(), dim, keepdim, dtype, out);
  return out;
}

// torch.norm along dims: its meta's checks and result, then the vector
// norm of order @p (2 when none) into it, as ATen's kernel computes it.
at::Tensor norm_dim(const at::Tensor& self, const std::optional<at::Scalar>& p,
                    at::IntArrayRef dim, bool keepdim) {
  auto [out] = meta_results<at::meta::structured_norm_ScalarOpt_dim>(
      Form::Functional, {}, self, opt_ref(p), dim, keepdim);
  return at::linalg_vector_norm_out(out, self, p.value_or(2.0), dim, keepdim);
}

at::Tensor norm_dim_dtype(const at::Tensor& self, const std::optional<at::Scalar>& p,
                          at::IntArrayRef dim, bool keepdim, at::ScalarType dtype) {
  auto [out] = meta_results<at::meta::structured_norm_ScalarOpt_dim_dtype>(
      Form::Functional, {}, self, opt_ref(p), dim, keepdim, dtype);
  return at::linalg_vector_norm_out(out, self, p.value_or(2.0), dim, keepdim, dtype);
}

at::Tensor& norm_dim_out(const at::Tensor& self, const std::optional<at::Scalar>& p,
                         at::IntArrayRef dim, bool keepdim, at::Tensor& out) {
  meta_results<at::meta::structured_norm_ScalarOpt_dim>(Form::Out, {out}, self, opt_ref(p),
                                                        dim, keepdim);
  return at::linalg_vector_norm_out(out, self, p.value_or(2.0), dim, keepdim);
}

at::Tensor& norm_dim_dtype_out(const at::Tensor& self, const std::optional<at::Scalar>& p,
                               at::IntArrayRef dim, bool keepdim, at::ScalarType dtype,
                               at::Tensor& out) {
  meta_results<at::meta::structured_norm_ScalarOpt_dim_dtype>(Form::Out, {out}, self,
                                                              opt_ref(p), dim, keepdim, dtype);
  return at::linalg_vector_norm_out(out, self, p.value_or(2.0), dim, keepdim, dtype);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("linalg_vector_norm", vector_norm);
  m.impl("linalg_vector_norm.out", vector_norm_out);
  m.impl("norm.ScalarOpt_dim", norm_dim);
  m.impl("norm.ScalarOpt_dim_dtype", norm_dim_dtype);
  m.impl("norm.out", norm_dim_out);
  m.impl("norm.dtype_out", norm_dim_dtype_out);
}

}  // namespace torch_neuron

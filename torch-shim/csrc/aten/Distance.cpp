// SPDX-License-Identifier: MIT
// cdist and pdist (forward and backward) composed of card operations: the
// p-norm of the pairwise differences, or, for p = 2 where the CPU uses it,
// the CPU's matrix-product form (|a|^2 + |b|^2 - 2 a.b, clamped at 1e-30,
// square root); the backward is the CPU's per-pair derivative.
#include <c10/util/accumulate.h>

#include "NeuronOps.h"

#include <cmath>

namespace torch_neuron {
namespace {

// The p-norm of @diff over its last dim (p = 0: the count of non-zeros).
at::Tensor pnorm_last(const at::Tensor& diff, double p) {
  if (diff.size(-1) == 0)
    return at::zeros(diff.sizes().slice(0, diff.dim() - 1), diff.options());
  return at::linalg_vector_norm(diff, p, {-1}, false, std::nullopt);
}

// d dist / d diff * grad, per element of diff (the CPU's cases).
at::Tensor dnorm(const at::Tensor& diff, const at::Tensor& grad, const at::Tensor& dist,
                 double p) {
  at::Tensor zero = at::zeros({}, diff.options());
  if (p == 0)
    return at::zeros_like(diff);
  if (p == 1)
    return diff.sign() * grad;
  if (std::isinf(p))
    return diff.sign() * grad * diff.abs().eq(dist).to(diff.scalar_type());
  at::Tensor r;
  if (p == 2)
    r = diff * grad / dist;
  else
    r = diff.sign() * diff.abs().pow(p - 1) * grad / dist.pow(p - 1);
  r = at::where(dist.eq(0), zero, r);
  if (p < 1)
    r = at::where(diff.eq(0), zero, r);
  return r;
}

struct Batched {
  std::vector<int64_t> batch;
  at::Tensor a, b;   // [B, P, M], [B, R, M]
};

Batched batch_pair(const at::Tensor& x1, const at::Tensor& x2) {
  Batched r;
  r.batch = at::infer_size(x1.sizes().slice(0, x1.dim() - 2), x2.sizes().slice(0, x2.dim() - 2));
  std::vector<int64_t> s1(r.batch), s2(r.batch);
  s1.insert(s1.end(), {x1.size(-2), x1.size(-1)});
  s2.insert(s2.end(), {x2.size(-2), x2.size(-1)});
  // B by the shape, not -1: an empty matrix leaves it undetermined.
  int64_t B = c10::multiply_integers(r.batch);
  r.a = x1.expand(s1).reshape({B, x1.size(-2), x1.size(-1)});
  r.b = x2.expand(s2).reshape({B, x2.size(-2), x2.size(-1)});
  return r;
}

void check_cdist(const at::Tensor& x1, const at::Tensor& x2, double p) {
  check_device(x1, x2);
  TORCH_CHECK(x1.dim() >= 2, "cdist only supports at least 2D tensors, X1 got: ", x1.dim(), "D");
  TORCH_CHECK(x2.dim() >= 2, "cdist only supports at least 2D tensors, X2 got: ", x2.dim(), "D");
  TORCH_CHECK(x1.size(-1) == x2.size(-1), "X1 and X2 must have the same number of columns. "
              "X1: ", x1.size(-1), " X2: ", x2.size(-1));
  TORCH_CHECK(at::isFloatingType(x1.scalar_type()) && x1.scalar_type() == x2.scalar_type(),
              "cdist only supports floating-point dtypes of the same type, X1 got: ",
              x1.scalar_type(), ", X2 got: ", x2.scalar_type());
  TORCH_CHECK(p >= 0, "cdist only supports non-negative p values");
}

at::Tensor cdist_forward(const at::Tensor& x1, const at::Tensor& x2, double p,
                         std::optional<int64_t> mode) {
  check_cdist(x1, x2, p);
  int64_t m = mode.value_or(0);
  TORCH_CHECK(m >= 0 && m <= 2, "possible modes: 0, 1, 2, but was: ", m);
  Batched bp = batch_pair(x1, x2);
  int64_t P = x1.size(-2), R = x2.size(-2);
  std::vector<int64_t> shape(bp.batch);
  shape.insert(shape.end(), {P, R});
  if (P == 0 || R == 0 || bp.a.size(0) == 0)
    return at::empty(shape, x1.options());
  at::Tensor d;
  if (p == 2 && (m == 1 || (m == 0 && (P > 25 || R > 25)))) {
    at::Tensor n1 = bp.a.pow(2).sum(-1, true), n2 = bp.b.pow(2).sum(-1, true);
    at::Tensor a = at::cat({bp.a.mul(-2), n1, at::ones_like(n1)}, -1);
    at::Tensor b = at::cat({bp.b, at::ones_like(n2), n2}, -1);
    d = a.matmul(b.mT()).clamp_min_(1e-30).sqrt_();
  } else {
    d = pnorm_last(bp.a.unsqueeze(2) - bp.b.unsqueeze(1), p);
  }
  return d.reshape(shape);
}

// d cdist / d x1 (the CPU's _cdist_backward; x2's is this with the roles swapped).
at::Tensor cdist_backward(const at::Tensor& grad, const at::Tensor& x1, const at::Tensor& x2,
                          double p, const at::Tensor& cdist) {
  check_cdist(x1, x2, p);
  Batched bp = batch_pair(x1, x2);
  int64_t P = x1.size(-2), R = x2.size(-2);
  if (P == 0 || R == 0 || x1.size(-1) == 0 || bp.a.size(0) == 0)
    return at::zeros_like(x1);
  at::Tensor g = grad.reshape({-1, P, R, 1}), dist = cdist.reshape({-1, P, R, 1});
  at::Tensor diff = bp.a.unsqueeze(2) - bp.b.unsqueeze(1);
  at::Tensor r = dnorm(diff, g, dist, p).sum(2);
  std::vector<int64_t> full(bp.batch);
  full.insert(full.end(), {P, x1.size(-1)});
  return at::sum_to(r.reshape(full), x1.sizes());
}

// The pairs i < j of n rows in the CPU's order, as two index tensors
// (constants of the shape, built once per call and copied to the card).
std::pair<at::Tensor, at::Tensor> pairs(int64_t n, const at::Device& dev) {
  std::vector<int64_t> r, c;
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = i + 1; j < n; j++)
      r.push_back(i), c.push_back(j);
  auto opt = at::TensorOptions().dtype(at::kLong);
  return {at::tensor(r, opt).to(dev), at::tensor(c, opt).to(dev)};
}

void check_pdist(const at::Tensor& self, double p) {
  TORCH_CHECK(self.dim() == 2, "pdist only supports 2D tensors, got: ", self.dim(), "D");
  TORCH_CHECK(at::isFloatingType(self.scalar_type()), "pdist only supports floating-point "
              "dtypes");
  TORCH_CHECK(p >= 0, "pdist only supports non-negative p values");
}

at::Tensor pdist_forward(const at::Tensor& self, double p) {
  check_pdist(self, p);
  int64_t n = self.size(0);
  int64_t k = n >= 2 ? n * (n - 1) / 2 : 0;
  if (k == 0)
    return at::empty({0}, self.options());
  auto [r, c] = pairs(n, self.device());
  return pnorm_last(self.index_select(0, r) - self.index_select(0, c), p);
}

at::Tensor pdist_backward(const at::Tensor& grad, const at::Tensor& self, double p,
                          const at::Tensor& pdist) {
  check_pdist(self, p);
  int64_t n = self.size(0);
  at::Tensor out = at::zeros_like(self);
  if (n < 2 || self.size(1) == 0)
    return out;
  auto [r, c] = pairs(n, self.device());
  at::Tensor diff = self.index_select(0, r) - self.index_select(0, c);
  at::Tensor d = dnorm(diff, grad.unsqueeze(1), pdist.unsqueeze(1), p);
  out.index_add_(0, r, d);
  out.index_add_(0, c, d, -1);
  return out;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_cdist_forward", cdist_forward);
  m.impl("_cdist_backward", cdist_backward);
  m.impl("_pdist_forward", pdist_forward);
  m.impl("_pdist_backward", pdist_backward);
}

}  // namespace torch_neuron

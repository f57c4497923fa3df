// SPDX-License-Identifier: MIT
// Linear algebra composed of other card kernels: trace (a strided diagonal
// summed), addbmm (one matmul over the concatenated batch), linalg_cross
// (rolled products) and matrix_exp (scaling and squaring).
#include <cmath>

#include "NeuronLinalg.h"

namespace torch_neuron {
namespace linalg {
namespace {

at::Tensor trace_k(const at::Tensor& self) {
  TORCH_CHECK(self.dim() == 2, "trace: expected a matrix, but got tensor with dim ", self.dim());
  return self.diagonal().sum();
}

at::Tensor& trace_out(const at::Tensor& self, at::Tensor& out) {
  return into(out, trace_k(self));
}

// sum_b b1[b] @ b2[b] is [b1[0] .. b1[B-1]] (side by side) @ [b2[0]; ..; b2[B-1]].
at::Tensor addbmm_k(const at::Tensor& self, const at::Tensor& b1, const at::Tensor& b2,
                  const at::Scalar& beta, const at::Scalar& alpha) {
  TORCH_CHECK(b1.dim() == 3, "batch1 must be a 3D tensor");
  TORCH_CHECK(b2.dim() == 3, "batch2 must be a 3D tensor");
  TORCH_CHECK(b1.size(0) == b2.size(0), "batch1 and batch2 must have same number of batches, "
              "got ", b1.size(0), " and ", b2.size(0));
  TORCH_CHECK(b1.size(2) == b2.size(1), "Incompatible matrix sizes for bmm (", b1.size(1), "x",
              b1.size(2), " and ", b2.size(1), "x", b2.size(2), ")");
  int64_t B = b1.size(0), n = b1.size(1), p = b1.size(2), q = b2.size(2);
  at::Tensor a = b1.transpose(0, 1).reshape({n, B * p});
  at::Tensor b = b2.reshape({B * p, q});
  return at::addmm(self.expand({n, q}), a, b, beta, alpha);
}

at::Tensor& addbmm_out(const at::Tensor& self, const at::Tensor& b1, const at::Tensor& b2,
                       const at::Scalar& beta, const at::Scalar& alpha, at::Tensor& out) {
  return into(out, addbmm_k(self, b1, b2, beta, alpha));
}

at::Tensor& addbmm_inplace(at::Tensor& self, const at::Tensor& b1, const at::Tensor& b2,
                    const at::Scalar& beta, const at::Scalar& alpha) {
  at::Tensor r = addbmm_k(self, b1, b2, beta, alpha);
  TORCH_CHECK(r.sizes() == self.sizes(), "addbmm_: the result's shape ", r.sizes(),
              " differs from self's ", self.sizes());
  return self.copy_(r);
}

// c_i = a_{i+1} b_{i+2} - a_{i+2} b_{i+1} (indices mod 3) along @dim.
at::Tensor cross_k(const at::Tensor& self, const at::Tensor& other, int64_t dim) {
  TORCH_CHECK(self.dim() == other.dim(), "linalg.cross: inputs must have the same number of "
              "dimensions.");
  auto shape = at::infer_size(self.sizes(), other.sizes());
  int64_t d = at::maybe_wrap_dim(dim, static_cast<int64_t>(shape.size()));
  TORCH_CHECK(self.size(d) == 3 && other.size(d) == 3, "linalg.cross: inputs dimension ", dim,
              " must have length 3. Got ", self.size(d), " and ", other.size(d));
  at::ScalarType t = at::result_type(self, other);
  at::Tensor a = self.to(t).expand(shape), b = other.to(t).expand(shape);
  return a.roll(-1, d) * b.roll(-2, d) - a.roll(-2, d) * b.roll(-1, d);
}

at::Tensor& cross_out(const at::Tensor& self, const at::Tensor& other, int64_t dim,
                      at::Tensor& out) {
  return into(out, cross_k(self, other, dim));
}

// exp(A) by scaling and squaring: A / 2^s, with s per matrix from its
// 1-norm (read back) so that the scaled norm is at most 1/2; the Taylor
// polynomial of degree 18 by Horner's rule (truncation error below
// 2^-19 / 19!, far under float32's); then squared s times. ATen picks the
// degree by the norm instead; both are accurate to float32.
at::Tensor matrix_exp_k(const at::Tensor& A) {
  const char* op = "linalg.matrix_exp";
  check_float(A, op);
  check_matrix(A, op, true);
  if (A.numel() == 0)
    return at::empty_like(A);
  at::Tensor a = mats(A);
  int64_t B = a.size(0), n = a.size(-1);
  at::Tensor norms = a.abs().sum(-2).amax(-1).cpu().to(at::kDouble);
  auto nrm = norms.accessor<double, 1>();
  std::vector<float> scale(B);
  std::vector<int64_t> s(B);
  int64_t most = 0;
  for (int64_t b = 0; b < B; b++) {
    double nb = nrm[b];
    s[b] = std::isfinite(nb) && nb > 0.5 ? std::min<int64_t>(
        static_cast<int64_t>(std::ceil(std::log2(nb / 0.5))), 126) : 0;
    scale[b] = std::ldexp(1.0f, static_cast<int>(-s[b]));
    most = std::max(most, s[b]);
  }
  at::Tensor x = a * at::tensor(scale).view({B, 1, 1}).to(A.device());
  at::Tensor I = eye({B}, n, a);
  at::Tensor r = I + x / 18.0;
  for (int k = 17; k >= 1; k--)
    r = I + at::matmul(x, r) / static_cast<double>(k);
  if (most) {
    at::Tensor steps = at::tensor(s).view({B, 1, 1}).to(A.device());
    for (int64_t j = 1; j <= most; j++)
      r = at::where(steps >= j, at::matmul(r, r), r);
  }
  return r.view(A.sizes());
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("trace", trace_k);
  m.impl("trace.out", trace_out);
  m.impl("addbmm", addbmm_k);
  m.impl("addbmm.out", addbmm_out);
  m.impl("addbmm_", addbmm_inplace);
  m.impl("linalg_cross", cross_k);
  m.impl("linalg_matrix_exp", matrix_exp_k);
  m.impl("linalg_cross.out", cross_out);
}

}  // namespace linalg
}  // namespace torch_neuron

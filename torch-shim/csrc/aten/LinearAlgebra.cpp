// SPDX-License-Identifier: MIT
// Linear algebra of products and what is composed of them: mm, addmm,
// bmm, baddbmm, dot/vdot, addmv, addbmm, trace, linalg_cross,
// linalg_matrix_exp, linalg_pinv/pinverse and linalg_matrix_rank. (The
// factorizations and the solves: BatchLinearAlgebra.cpp and
// BatchLinearAlgebraOrthogonal.cpp.)
//
// Matrix products on the card: mm, addmm (linear), bmm, baddbmm. Transposed
// operands (weight.t() in linear) are passed as strided views; the card's
// MATMUL takes them in place.
#include <cmath>
#include <limits>

#include <ATen/ops/addmm_meta.h>
#include <ATen/ops/addmv_meta.h>
#include <ATen/ops/baddbmm_meta.h>
#include <ATen/ops/bmm_meta.h>
#include <ATen/ops/linalg_cross_meta.h>
#include <ATen/ops/mm_meta.h>

#include "NeuronLinalg.h"
#include "NeuronMeta.h"

namespace torch_neuron {
namespace {

// @t's elements as it shows them: ATen passes the products conjugate and
// negative views (their math bits) as they are, since CPU BLAS takes them.
at::Tensor shown(const at::Tensor& t) {
  return t.is_conj() || t.is_neg() ? t.resolve_conj().resolve_neg() : t;
}

void matmul_into(const at::Tensor& out, const at::Tensor& a, const at::Tensor& b,
                 const at::Tensor* bias, bool accumulate);

// The product of complex64 matrices: four real products of their planes
// (view_as_real), re = ar br - ai bi, im = ar bi + ai br, each a MATMUL
// accumulating in float32 as the real products do.
void complex_matmul_into(const at::Tensor& out, const at::Tensor& a, const at::Tensor& b,
                         const at::Tensor* bias, bool accumulate) {
  auto part = [](const at::Tensor& t, int64_t i) {
    return t.is_complex() ? at::view_as_real(t).select(-1, i)
                          : (i ? at::zeros_like(t) : t);
  };
  at::Tensor ar = part(a, 0), ai = part(a, 1), br = part(b, 0), bi = part(b, 1);
  at::Tensor re = empty_neuron(out.sizes(), at::kFloat, out.device());
  at::Tensor im = empty_neuron(out.sizes(), at::kFloat, out.device());
  at::Tensor t = empty_neuron(out.sizes(), at::kFloat, out.device());
  matmul_into(re, ar, br, nullptr, false);
  matmul_into(t, ai, bi, nullptr, false);
  re.sub_(t);
  matmul_into(im, ar, bi, nullptr, false);
  matmul_into(im, ai, br, nullptr, true);
  if (bias) {
    re.add_(part(*bias, 0));
    im.add_(part(*bias, 1));
  }
  at::Tensor ore = at::view_as_real(out).select(-1, 0);
  at::Tensor oim = at::view_as_real(out).select(-1, 1);
  if (accumulate) {
    ore.add_(re);
    oim.add_(im);
  } else {
    ore.copy_(re);
    oim.copy_(im);
  }
}

// out = a @ b (+ bias) (+ out); all on one device.
void matmul_into(const at::Tensor& out, const at::Tensor& a, const at::Tensor& b,
                 const at::Tensor* bias, bool accumulate) {
  TORCH_CHECK(!out.is_conj() && !out.is_neg(), "neuron: a matrix product into a "
              "conjugate or negative view is not supported; resolve it first");
  if (a.is_conj() || a.is_neg() || b.is_conj() || b.is_neg() ||
      (bias && (bias->is_conj() || bias->is_neg()))) {
    at::Tensor rb = bias ? shown(*bias) : at::Tensor();
    return matmul_into(out, shown(a), shown(b), bias ? &rb : nullptr, accumulate);
  }
  if (out.is_complex())
    return complex_matmul_into(out, a, b, bias, accumulate);
  nrn_tensor_desc o = desc(out), da = desc(a), db = desc(b), dbias;
  if (bias)
    dbias = desc(*bias);
  NEURON_OP(nrn_op_matmul(stream_for(out), &o, &da, &db, bias ? &dbias : nullptr,
                          accumulate ? 1 : 0));
}

// The products' results and argument checks are their structured metas';
// the matrices' common type is checked by ATen's CPU kernels, and here.
void check_mm(const at::Tensor& a, const at::Tensor& b) {
  check_device(a, b);
  TORCH_CHECK(a.scalar_type() == b.scalar_type(), "expected m1 and m2 to have the same "
              "dtype, but got: ", a.scalar_type(), " != ", b.scalar_type());
}

at::Tensor mm(const at::Tensor& a, const at::Tensor& b) {
  check_mm(a, b);
  at::Tensor out = meta_results<at::meta::structured_mm>(Form::Functional, {}, a, b)[0];
  matmul_into(out, a, b, nullptr, false);
  return out;
}

at::Tensor& mm_out(const at::Tensor& a, const at::Tensor& b, at::Tensor& out) {
  check_mm(a, b);
  meta_results<at::meta::structured_mm>(Form::Out, {out}, a, b);
  matmul_into(out, a, b, nullptr, false);
  return out;
}

// beta * self + alpha * (a @ b); beta = alpha = 1 is one instruction.
// (beta and alpha may be complex for complex operands.)
at::Tensor& addmm_into(const at::Tensor& self, const at::Tensor& a, const at::Tensor& b,
                       const at::Scalar& beta, const at::Scalar& alpha, at::Tensor& out) {
  if (beta.equal(1) && alpha.equal(1)) {
    if (out.is_same(self)) {
      matmul_into(out, a, b, nullptr, true);
    } else {
      at::Tensor bias = self.expand(out.sizes());
      matmul_into(out, a, b, &bias, false);
    }
    return out;
  }
  at::Tensor prod = empty_neuron(out.sizes(), out.scalar_type(), out.device());
  matmul_into(prod, a, b, nullptr, false);
  prod.mul_(alpha);
  if (beta.isComplex())
    prod.add_(self * beta);
  else if (!beta.equal(0))
    prod.add_(self, beta.toDouble());
  return out.copy_(prod);
}

at::Tensor addmm(const at::Tensor& self, const at::Tensor& a, const at::Tensor& b,
                 const at::Scalar& beta, const at::Scalar& alpha) {
  check_mm(a, b);
  at::Tensor out = meta_results<at::meta::structured_addmm>(Form::Functional, {}, self, a,
                                                            b, beta, alpha)[0];
  return addmm_into(self, a, b, beta, alpha, out);
}

at::Tensor& addmm_out(const at::Tensor& self, const at::Tensor& a, const at::Tensor& b,
                      const at::Scalar& beta, const at::Scalar& alpha, at::Tensor& out) {
  check_mm(a, b);
  meta_results<at::meta::structured_addmm>(Form::Out, {out}, self, a, b, beta, alpha);
  return addmm_into(self, a, b, beta, alpha, out);
}

at::Tensor& addmm_(at::Tensor& self, const at::Tensor& a, const at::Tensor& b,
                   const at::Scalar& beta, const at::Scalar& alpha) {
  check_mm(a, b);
  meta_results<at::meta::structured_addmm>(Form::Inplace, {self}, self, a, b, beta, alpha);
  return addmm_into(self, a, b, beta, alpha, self);
}

at::Tensor bmm(const at::Tensor& a, const at::Tensor& b) {
  check_mm(a, b);
  at::Tensor out = meta_results<at::meta::structured_bmm>(Form::Functional, {}, a, b)[0];
  matmul_into(out, a, b, nullptr, false);
  return out;
}

at::Tensor& bmm_out(const at::Tensor& a, const at::Tensor& b, at::Tensor& out) {
  check_mm(a, b);
  meta_results<at::meta::structured_bmm>(Form::Out, {out}, a, b);
  matmul_into(out, a, b, nullptr, false);
  return out;
}

at::Tensor baddbmm(const at::Tensor& self, const at::Tensor& a, const at::Tensor& b,
                   const at::Scalar& beta, const at::Scalar& alpha) {
  check_mm(a, b);
  at::Tensor out = meta_results<at::meta::structured_baddbmm>(Form::Functional, {}, self,
                                                              a, b, beta, alpha)[0];
  return addmm_into(self, a, b, beta, alpha, out);
}

at::Tensor& baddbmm_out(const at::Tensor& self, const at::Tensor& a, const at::Tensor& b,
                        const at::Scalar& beta, const at::Scalar& alpha, at::Tensor& out) {
  check_mm(a, b);
  meta_results<at::meta::structured_baddbmm>(Form::Out, {out}, self, a, b, beta, alpha);
  return addmm_into(self, a, b, beta, alpha, out);
}

at::Tensor& baddbmm_(at::Tensor& self, const at::Tensor& a, const at::Tensor& b,
                     const at::Scalar& beta, const at::Scalar& alpha) {
  check_mm(a, b);
  meta_results<at::meta::structured_baddbmm>(Form::Inplace, {self}, self, a, b, beta, alpha);
  return addmm_into(self, a, b, beta, alpha, self);
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

// vdot(a, b) = sum(conj(a) b): dot for real vectors.
at::Tensor vdot(const at::Tensor& a, const at::Tensor& b) {
  return torch_neuron::dot(a.is_complex() ? a.conj() : a, b);
}

// addmv: the result and checks are its structured meta's; the product is
// addmm's, with vec a column and out viewed as one (beta = 0 ignores self,
// NaN included, as on the CPU).
at::Tensor& addmv_into(const at::Tensor& self, const at::Tensor& mat, const at::Tensor& vec,
                       const at::Scalar& beta, const at::Scalar& alpha, at::Tensor& out) {
  at::Tensor col = out.unsqueeze(1);
  at::Tensor bias = self.dim() == 1 ? self.unsqueeze(1) : self;
  at::addmm_out(col, bias, mat, vec.unsqueeze(1), beta, alpha);
  return out;
}
at::Tensor addmv_n(const at::Tensor& self, const at::Tensor& mat, const at::Tensor& vec,
                   const at::Scalar& beta, const at::Scalar& alpha) {
  auto [out] = meta_results<at::meta::structured_addmv>(Form::Functional, {}, self, mat, vec,
                                                        beta, alpha);
  return addmv_into(self, mat, vec, beta, alpha, out);
}
at::Tensor& addmv_out(const at::Tensor& self, const at::Tensor& mat, const at::Tensor& vec,
                      const at::Scalar& beta, const at::Scalar& alpha, at::Tensor& out) {
  meta_results<at::meta::structured_addmv>(Form::Out, {out}, self, mat, vec, beta, alpha);
  return addmv_into(self, mat, vec, beta, alpha, out);
}
at::Tensor& addmv_(at::Tensor& self, const at::Tensor& mat, const at::Tensor& vec,
                   const at::Scalar& beta, const at::Scalar& alpha) {
  meta_results<at::meta::structured_addmv>(Form::Inplace, {self}, self, mat, vec, beta, alpha);
  return addmv_into(self, mat, vec, beta, alpha, self);
}

}  // namespace

namespace linalg {
namespace {

// ---- composed of other card kernels ----
// trace (a strided diagonal summed), addbmm (one matmul over the
// concatenated batch), linalg_cross (rolled products) and matrix_exp
// (scaling and squaring).

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


// exp(A) by scaling and squaring: A / 2^s, with s per matrix from its
// 1-norm (read back) so that the scaled norm is at most 1/2; the Taylor
// polynomial of degree 18 by Horner's rule (truncation error below
// 2^-19 / 19!, far under float32's and float64's); then squared s times.
// ATen picks the degree by the norm instead; both are accurate to the
// dtype. Products only (no LINALG instruction): float64 runs too.
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

// ---- linalg.pinv, pinverse and linalg.matrix_rank ----
//
// Singular (or absolute eigen) values above a tolerance, max(atol, rtol *
// their largest).
//
// ATen composes these from other operators, holding atol and rtol in
// float64 tensors on the input's device (their defaults, 0 and
// eps * max(m, n), are float64). Here the decomposition, the mask and the
// products run on the card; the tolerance alone -- one value per matrix,
// from the largest singular value read back -- is computed on the host by
// the CPU's own operators, in the dtype the CPU promotes to. For float32
// singular values a float64 threshold t is then rounded down to float32:
// for a float32 s, s > t exactly when s > (t rounded down), so the card's
// float32 comparison keeps the CPU's mask bit for bit.
//
// The kernels are registered for PrivateUse1 and AutogradPrivateUse1 (the
// operators are CompositeImplicitAutograd): autograd records the card
// operators they call, as it would ATen's composition.

// atol and rtol as the CPU holds them, on the CPU.
struct Tols {
  at::Tensor atol, rtol;
};

double default_rtol(const at::Tensor& A) {
  double eps = A.scalar_type() == at::kDouble ? std::numeric_limits<double>::epsilon()
                                              : std::numeric_limits<float>::epsilon();
  return eps * static_cast<double>(std::max(A.size(-1), A.size(-2)));
}

at::Tensor host_tol(const std::optional<at::Tensor>& t, const char* op, const char* name) {
  TORCH_CHECK(!t->is_complex(), op, ": ", name, " tensor of complex type is not supported.");
  return t->detach().cpu();
}

// The Tensor overloads: a missing atol is 0, a missing rtol eps * max(m, n),
// or 0 where a given atol is positive.
Tols tols(const at::Tensor& A, const std::optional<at::Tensor>& atol,
          const std::optional<at::Tensor>& rtol, const char* op) {
  at::TensorOptions f64 = at::TensorOptions().dtype(at::kDouble);
  Tols t;
  t.atol = atol && atol->defined() ? host_tol(atol, op, "atol") : at::zeros({}, f64);
  if (rtol && rtol->defined()) {
    t.rtol = host_tol(rtol, op, "rtol");
  } else {
    at::Tensor d = at::full({}, default_rtol(A), f64);
    t.rtol = atol && atol->defined() ? at::where(t.atol > 0, at::zeros({}, f64), d) : d;
  }
  return t;
}

// The float overloads: the same defaults, as float64 scalars.
Tols tols(const at::Tensor& A, std::optional<double> atol, std::optional<double> rtol) {
  at::TensorOptions f64 = at::TensorOptions().dtype(at::kDouble);
  double r = rtol ? *rtol : (atol && *atol > 0 ? 0.0 : default_rtol(A));
  return {at::full({}, atol.value_or(0.0), f64), at::full({}, r, f64)};
}

// S > max(atol, rtol * max_s) along the last dim, S on the card.
at::Tensor above(const at::Tensor& S, const at::Tensor& max_s, const Tols& t) {
  at::Tensor tol = at::max(t.atol.unsqueeze(-1), t.rtol.unsqueeze(-1) * max_s.detach().cpu());
  if (S.scalar_type() == at::kFloat && tol.scalar_type() != at::kFloat) {
    at::Tensor wide = tol.to(at::kDouble), f = wide.to(at::kFloat);
    at::Tensor down = at::nextafter(f, at::full({}, -INFINITY, f.options()));
    tol = at::where(f.to(at::kDouble) > wide, down, f);
  }
  return S > tol.to(S.device());
}

at::Tensor pinv(const at::Tensor& A, const Tols& t, bool hermitian) {
  check_float(A, "linalg.pinv");
  TORCH_CHECK(A.dim() >= 2, "linalg.pinv(", A.scalar_type(), "{", A.sizes(),
              "}): expected a tensor with 2 or more dimensions of float, double, cfloat or "
              "cdouble types");
  if (A.numel() == 0) {
    auto [U, S, V] = A.svd();
    return at::matmul(V * S.reciprocal().unsqueeze(-2), U.mH());
  }
  if (hermitian) {
    auto [L, U] = at::linalg_eigh(A);
    at::Tensor mag = L.abs();
    at::Tensor inv = at::where(above(mag, mag.amax(-1, true), t), L.reciprocal(),
                               at::zeros({}, L.options()));
    return at::matmul(U * inv.unsqueeze(-2), U.mH());
  }
  auto [U, S, V] = A.svd();
  at::Tensor inv = at::where(above(S, S.narrow(-1, 0, 1), t), S.reciprocal(),
                             at::zeros({}, S.options()));
  return at::matmul(V * inv.unsqueeze(-2), U.mH());
}

at::Tensor pinv_t(const at::Tensor& A, const std::optional<at::Tensor>& atol,
                  const std::optional<at::Tensor>& rtol, bool hermitian) {
  return pinv(A, tols(A, atol, rtol, "torch.linalg.pinv"), hermitian);
}

at::Tensor pinv_f(const at::Tensor& A, std::optional<double> atol, std::optional<double> rtol,
                  bool hermitian) {
  return pinv(A, tols(A, atol, rtol), hermitian);
}

// rcond is the relative tolerance (NumPy's name).
at::Tensor pinv_rcond(const at::Tensor& A, double rcond, bool hermitian) {
  return pinv_f(A, 0.0, rcond, hermitian);
}

at::Tensor pinv_rcond_t(const at::Tensor& A, const at::Tensor& rcond, bool hermitian) {
  return pinv_t(A, at::zeros({}, at::kDouble), rcond, hermitian);
}

at::Tensor pinverse(const at::Tensor& A, double rcond) { return pinv_rcond(A, rcond, false); }

at::Tensor& pinv_t_out(const at::Tensor& A, const std::optional<at::Tensor>& atol,
                       const std::optional<at::Tensor>& rtol, bool hermitian, at::Tensor& out) {
  return into(out, pinv_t(A, atol, rtol, hermitian));
}

at::Tensor& pinv_f_out(const at::Tensor& A, std::optional<double> atol,
                       std::optional<double> rtol, bool hermitian, at::Tensor& out) {
  return into(out, pinv_f(A, atol, rtol, hermitian));
}

at::Tensor& pinv_rcond_out(const at::Tensor& A, double rcond, bool hermitian, at::Tensor& out) {
  return into(out, pinv_rcond(A, rcond, hermitian));
}

at::Tensor& pinv_rcond_t_out(const at::Tensor& A, const at::Tensor& rcond, bool hermitian,
                             at::Tensor& out) {
  return into(out, pinv_rcond_t(A, rcond, hermitian));
}

// The number of singular (absolute eigen) values above the tolerance, int64.
at::Tensor rank(const at::Tensor& A, const Tols& t, bool hermitian) {
  TORCH_CHECK(A.dim() >= 2, "torch.linalg.matrix_rank: The input tensor input must have at "
              "least 2 dimensions.");
  check_float(A, "linalg.matrix_rank");
  if (A.numel() == 0)
    return at::zeros(batch_of(A, 2), A.options().dtype(at::kLong));
  at::Tensor S, max_s;
  if (hermitian) {
    S = at::linalg_eigvalsh(A).abs();
    max_s = S.amax(-1, true);
  } else {
    S = at::linalg_svdvals(A);
    max_s = S.narrow(-1, 0, 1);
  }
  return above(S, max_s, t).sum(-1);
}

at::Tensor rank_t(const at::Tensor& A, const std::optional<at::Tensor>& atol,
                  const std::optional<at::Tensor>& rtol, bool hermitian) {
  return rank(A, tols(A, atol, rtol, "torch.linalg.matrix_rank"), hermitian);
}

at::Tensor rank_f(const at::Tensor& A, std::optional<double> atol, std::optional<double> rtol,
                  bool hermitian) {
  return rank(A, tols(A, atol, rtol), hermitian);
}

// tol is the absolute tolerance, not scaled (NumPy's meaning).
at::Tensor rank_tol(const at::Tensor& A, double tol, bool hermitian) {
  return rank_f(A, tol, 0.0, hermitian);
}

at::Tensor rank_tol_t(const at::Tensor& A, const at::Tensor& tol, bool hermitian) {
  return rank_t(A, tol, at::zeros({}, tol.options().device(at::kCPU)), hermitian);
}

at::Tensor& rank_out(at::Tensor& out, const at::Tensor& value) {
  TORCH_CHECK(out.scalar_type() == at::kLong, "torch.linalg.matrix_rank: Expected result to "
              "be safely castable from Long dtype, but got result with dtype ",
              out.scalar_type());
  return into(out, value);
}

at::Tensor& rank_t_out(const at::Tensor& A, const std::optional<at::Tensor>& atol,
                       const std::optional<at::Tensor>& rtol, bool hermitian, at::Tensor& out) {
  return rank_out(out, rank_t(A, atol, rtol, hermitian));
}

at::Tensor& rank_f_out(const at::Tensor& A, std::optional<double> atol,
                       std::optional<double> rtol, bool hermitian, at::Tensor& out) {
  return rank_out(out, rank_f(A, atol, rtol, hermitian));
}

at::Tensor& rank_tol_out(const at::Tensor& A, double tol, bool hermitian, at::Tensor& out) {
  return rank_out(out, rank_tol(A, tol, hermitian));
}

at::Tensor& rank_tol_t_out(const at::Tensor& A, const at::Tensor& tol, bool hermitian,
                           at::Tensor& out) {
  return rank_out(out, rank_tol_t(A, tol, hermitian));
}

void register_rank(torch::Library& m) {
  m.impl("linalg_pinv.atol_rtol_tensor", pinv_t);
  m.impl("linalg_pinv.atol_rtol_float", pinv_f);
  m.impl("linalg_pinv", pinv_rcond);
  m.impl("linalg_pinv.rcond_tensor", pinv_rcond_t);
  m.impl("linalg_pinv.atol_rtol_tensor_out", pinv_t_out);
  m.impl("linalg_pinv.atol_rtol_float_out", pinv_f_out);
  m.impl("linalg_pinv.out", pinv_rcond_out);
  m.impl("linalg_pinv.out_rcond_tensor", pinv_rcond_t_out);
  m.impl("pinverse", pinverse);
  m.impl("linalg_matrix_rank.atol_rtol_tensor", rank_t);
  m.impl("linalg_matrix_rank.atol_rtol_float", rank_f);
  m.impl("linalg_matrix_rank", rank_tol);
  m.impl("linalg_matrix_rank.tol_tensor", rank_tol_t);
  m.impl("linalg_matrix_rank.atol_rtol_tensor_out", rank_t_out);
  m.impl("linalg_matrix_rank.atol_rtol_float_out", rank_f_out);
  m.impl("linalg_matrix_rank.out", rank_tol_out);
  m.impl("linalg_matrix_rank.out_tol_tensor", rank_tol_t_out);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("mm", mm);
  m.impl("mm.out", mm_out);
  m.impl("addmm", addmm);
  m.impl("addmm.out", addmm_out);
  m.impl("addmm_", addmm_);
  m.impl("bmm", bmm);
  m.impl("bmm.out", bmm_out);
  m.impl("baddbmm", baddbmm);
  m.impl("baddbmm.out", baddbmm_out);
  m.impl("baddbmm_", baddbmm_);
  m.impl("dot", dot);
  m.impl("vdot", vdot);
  m.impl("addmv", addmv_n);
  m.impl("addmv.out", addmv_out);
  m.impl("addmv_", addmv_);
  m.impl("trace", trace_k);
  m.impl("trace.out", trace_out);
  m.impl("addbmm", addbmm_k);
  m.impl("addbmm.out", addbmm_out);
  m.impl("addbmm_", addbmm_inplace);
  NEURON_COMPUTED_IMPL(m, "linalg_cross", "out", linalg_cross, cross_k)
  m.impl("linalg_matrix_exp", matrix_exp_k);
  register_rank(m);
}
TORCH_LIBRARY_IMPL(aten, AutogradPrivateUse1, m) { register_rank(m); }

}  // namespace linalg
}  // namespace torch_neuron

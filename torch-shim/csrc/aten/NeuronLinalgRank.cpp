// SPDX-License-Identifier: MIT
// linalg.pinv, pinverse and linalg.matrix_rank: singular (or absolute
// eigen) values above a tolerance, max(atol, rtol * their largest).
//
// ATen composes these from other operators, but it holds atol and rtol in
// float64 tensors on the input's device (their defaults, 0 and
// eps * max(m, n), are float64), which the card cannot store, so every call
// failed. Here the decomposition, the mask and the products run on the card;
// the tolerance alone -- one value per matrix, from the largest singular
// value read back -- is computed on the host by the CPU's own operators, in
// the dtype the CPU promotes to. A float64 threshold t is then rounded down
// to float32: for a float32 s, s > t exactly when s > (t rounded down), so
// the card's float32 comparison keeps the CPU's mask bit for bit.
//
// The kernels are registered for PrivateUse1 and AutogradPrivateUse1 (the
// operators are CompositeImplicitAutograd): autograd records the card
// operators they call, as it would ATen's composition.
#include <cmath>
#include <limits>

#include "NeuronLinalg.h"

namespace torch_neuron {
namespace linalg {
namespace {

// atol and rtol as the CPU holds them, on the CPU.
struct Tols {
  at::Tensor atol, rtol;
};

double default_rtol(const at::Tensor& A) {
  return std::numeric_limits<float>::epsilon() *
         static_cast<double>(std::max(A.size(-1), A.size(-2)));
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
  if (tol.scalar_type() != at::kFloat) {
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

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) { register_rank(m); }
TORCH_LIBRARY_IMPL(aten, AutogradPrivateUse1, m) { register_rank(m); }

}  // namespace linalg
}  // namespace torch_neuron

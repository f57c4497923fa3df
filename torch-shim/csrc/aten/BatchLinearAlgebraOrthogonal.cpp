// SPDX-License-Identifier: MIT
// Orthogonal factorizations on the card (LINALG): geqrf, the Householder
// products (linalg_householder_product = orgqr, ormqr), linalg_qr composed
// of them as PyTorch's CPU does, the SVD (gesdd, as the CPU's default) and
// the symmetric eigendecomposition (syevd). A factorization LAPACK cannot
// complete (non-finite input, no convergence) comes back as NaN.
#include <limits>
#include <string>

#include <ATen/ops/_linalg_eigh_meta.h>
#include <ATen/ops/_linalg_svd_meta.h>
#include <ATen/ops/linalg_qr_meta.h>

#include "NeuronLinalg.h"
#include "NeuronMeta.h"

namespace torch_neuron {
namespace linalg {
namespace {

std::tuple<at::Tensor, at::Tensor> geqrf_k(const at::Tensor& A) {
  const char* op = "geqrf";
  check_float(A, op);
  check_matrix(A, op, false);
  int64_t k = std::min(A.size(-2), A.size(-1));
  at::Tensor QR = at::empty(A.sizes(), A.options().memory_format(at::MemoryFormat::Contiguous));
  at::Tensor tau = at::empty(with(batch_of(A, 2), {k}), A.options());
  run(NISA_LA_GEQRF, 0, mats(QR), mats(A), vecs(tau));
  return {QR, tau};
}

std::tuple<at::Tensor&, at::Tensor&> geqrf_out(const at::Tensor& A, at::Tensor& a,
                                               at::Tensor& tau) {
  auto r = geqrf_k(A);
  into(a, std::get<0>(r));
  into(tau, std::get<1>(r));
  return {a, tau};
}

void check_tau(const at::Tensor& input, const at::Tensor& tau, const char* op) {
  check_float(tau, op);
  TORCH_CHECK(tau.dim() == input.dim() - 1 &&
              tau.sizes().slice(0, tau.dim() - 1) == input.sizes().slice(0, input.dim() - 2),
              op, ": Expected batch dimensions of tau to be equal to input.shape[:-2], "
              "but got ", tau.sizes(), " for input of shape ", input.sizes());
}

at::Tensor householder_product_k(const at::Tensor& V, const at::Tensor& tau) {
  const char* op = "torch.linalg.householder_product";
  check_float(V, op);
  check_matrix(V, op, false);
  int64_t m = V.size(-2), n = V.size(-1);
  TORCH_CHECK(m >= n, op, ": input.shape[-2] must be greater than or equal to "
              "input.shape[-1]");
  TORCH_CHECK(tau.dim() >= 1 && tau.size(-1) <= n, op, ": input.shape[-1] must be greater "
              "than or equal to tau.shape[-1]");
  check_tau(V, tau, op);
  if (tau.size(-1) == 0)   // no reflector: the first n columns of I
    return eye(batch_of(V, 2), m, V).narrow(-1, 0, n).contiguous();
  at::Tensor Q = at::empty(V.sizes(), V.options().memory_format(at::MemoryFormat::Contiguous));
  run(NISA_LA_ORGQR, 0, mats(Q), mats(V), vecs(tau));
  return Q;
}

at::Tensor& householder_product_out(const at::Tensor& V, const at::Tensor& tau,
                                    at::Tensor& out) {
  return into(out, householder_product_k(V, tau));
}

at::Tensor ormqr_k(const at::Tensor& A, const at::Tensor& tau, const at::Tensor& C, bool left,
                 bool transpose) {
  const char* op = "torch.ormqr";
  check_float(A, op);
  check_float(C, op);
  check_matrix(A, op, false);
  check_matrix(C, op, false);
  int64_t mq = left ? C.size(-2) : C.size(-1);
  TORCH_CHECK(A.size(-2) == mq, op, ": other.shape[", left ? -2 : -1, "] must be equal to "
              "input.shape[-2]");
  TORCH_CHECK(tau.dim() >= 1 && tau.size(-1) <= A.size(-1) && tau.size(-1) <= mq, op,
              ": tau.shape[-1] must be less than or equal to input.shape[-1] and ",
              "input.shape[-2]");
  check_tau(A, tau, op);
  TORCH_CHECK(C.dim() == A.dim() &&
              C.sizes().slice(0, C.dim() - 2) == A.sizes().slice(0, A.dim() - 2),
              op, ": Expected batch dimensions of other to be equal to input.shape[:-2]");
  if (tau.size(-1) == 0)
    return C.clone(at::MemoryFormat::Contiguous);
  at::Tensor out = at::empty(C.sizes(), C.options().memory_format(at::MemoryFormat::Contiguous));
  run(NISA_LA_ORMQR, (transpose ? NISA_IF_LA_TRANS : 0) | (left ? 0 : NISA_IF_LA_RIGHT),
      mats(out), mats(A), vecs(tau), mats(C));
  return out;
}

at::Tensor& ormqr_out(const at::Tensor& A, const at::Tensor& tau, const at::Tensor& C,
                      bool left, bool transpose, at::Tensor& out) {
  return into(out, ormqr_k(A, tau, C, left, transpose));
}

std::tuple<at::Tensor, at::Tensor> qr_k(const at::Tensor& A, c10::string_view mode) {
  const char* op = "linalg.qr";
  TORCH_CHECK(mode == "reduced" || mode == "complete" || mode == "r", "qr received unrecognized "
              "mode '", mode, "' but expected one of 'reduced' (default), 'r', or 'complete'");
  check_matrix(A, op, false);
  int64_t m = A.size(-2), n = A.size(-1), k = std::min(m, n);
  auto f = geqrf_k(A);
  at::Tensor QR = std::get<0>(f), tau = std::get<1>(f);
  bool complete = mode == "complete";
  at::Tensor R = (complete ? QR : QR.narrow(-2, 0, k)).triu();
  if (mode == "r")
    return {at::empty({0}, A.options()), R};
  at::Tensor V;
  if (!complete || m <= n) {
    V = QR.narrow(-1, 0, complete ? m : k);
  } else {
    V = at::zeros(with(batch_of(A, 2), {m, m}), A.options());
    V.narrow(-1, 0, n).copy_(QR);
  }
  return {householder_product_k(V, tau), R};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> svd_k(const at::Tensor& A, bool full_matrices,
                                                   bool compute_uv,
                                                   std::optional<c10::string_view> driver) {
  const char* op = "linalg.svd";
  TORCH_CHECK(!driver, "torch.linalg.svd: keyword argument `driver=` is only supported on "
              "CUDA inputs with cuSOLVER backend.");
  check_float(A, op);
  check_matrix(A, op, false);
  int64_t m = A.size(-2), n = A.size(-1), k = std::min(m, n);
  std::vector<int64_t> batch = batch_of(A, 2);
  at::Tensor S = at::empty(with(batch, {k}), A.options());
  if (!compute_uv) {
    run(NISA_LA_GESDD, NISA_IF_LA_NOVEC, vecs(S), mats(A));
    return {at::empty({0}, A.options()), S, at::empty({0}, A.options())};
  }
  if (k == 0) {   // nothing to decompose: the full bases are identities
    at::Tensor U = full_matrices ? eye(batch, m, A) : at::empty(with(batch, {m, 0}), A.options());
    at::Tensor Vh = full_matrices ? eye(batch, n, A) : at::empty(with(batch, {0, n}), A.options());
    return {U, S, Vh};
  }
  int64_t uc = full_matrices ? m : k, vr = full_matrices ? n : k;
  at::Tensor U = at::empty(with(batch, {m, uc}), A.options());
  at::Tensor Vh = at::empty(with(batch, {vr, n}), A.options());
  run(NISA_LA_GESDD, full_matrices ? NISA_IF_LA_FULL : 0, vecs(S), mats(A), mats(U), mats(Vh));
  return {U, S, Vh};
}

std::tuple<at::Tensor, at::Tensor> eigh_k(const at::Tensor& A, c10::string_view uplo,
                                        bool compute_v) {
  const char* op = "linalg.eigh";
  TORCH_CHECK(uplo.size() == 1 && (uplo[0] == 'U' || uplo[0] == 'L' || uplo[0] == 'u' ||
                                   uplo[0] == 'l'),
              "Expected UPLO argument to be 'L' or 'U', but got ", uplo);
  check_float(A, op);
  check_matrix(A, op, true);
  bool upper = uplo[0] == 'U' || uplo[0] == 'u';
  at::Tensor W = at::empty(with(batch_of(A, 2), {A.size(-1)}), A.options());
  if (!compute_v) {
    run(NISA_LA_SYEVD, (upper ? NISA_IF_LA_UPPER : 0) | NISA_IF_LA_NOVEC, vecs(W), mats(A));
    return {W, at::empty({0}, A.options())};
  }
  at::Tensor V = at::empty(A.sizes(), A.options().memory_format(at::MemoryFormat::Contiguous));
  run(NISA_LA_SYEVD, upper ? NISA_IF_LA_UPPER : 0, vecs(W), mats(A), mats(V));
  return {W, V};
}

// Least squares with the CPU's drivers gels (QR; full rank), gelsy (the
// default: rank-revealing, rcond) and the SVD-based gelsd and gelss: the
// minimum-norm solution V diag(1/s) U^T B over the singular values above
// rcond * s_max (as LAPACK cuts them), with the rank and the singular
// values; their residuals, for m > n when every matrix has full rank, are
// |A X - B|^2 per column (LAPACK sums the same from its rotated B).
std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> lstsq_svd(
    const at::Tensor& A, const at::Tensor& B, double rcond, bool vector_case) {
  int64_t m = A.size(-2), n = A.size(-1);
  auto [U, S, Vh] = at::linalg_svd(A, false);
  at::Tensor keep = S > S.narrow(-1, 0, std::min<int64_t>(1, S.size(-1))) * rcond;
  at::Tensor inv = at::where(keep, S.reciprocal(), at::zeros({}, S.options()));
  at::Tensor X = at::matmul(Vh.mH(), inv.unsqueeze(-1) * at::matmul(U.mH(), B));
  at::Tensor rank = keep.sum(-1);
  at::Tensor residuals = at::empty({0}, A.options());
  if (m > n && rank.numel() && rank.min().item<int64_t>() == n)
    residuals = (at::matmul(A, X) - B).square().sum(-2);
  if (vector_case)
    X = X.squeeze(-1);
  return {X.contiguous(), residuals, rank, S};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> lstsq_k(
    const at::Tensor& A, const at::Tensor& B, std::optional<double> rcond,
    std::optional<c10::string_view> driver) {
  const char* op = "torch.linalg.lstsq";
  std::string drv = driver ? std::string(*driver) : std::string("gelsy");
  TORCH_CHECK(drv == "gels" || drv == "gelsy" || drv == "gelsd" || drv == "gelss", op,
              ": parameter `driver` should be one of (gels, gelsy, gelsd, gelss)");
  check_float(A, op);
  check_float(B, op);
  check_matrix(A, op, false);
  TORCH_CHECK(B.dim() >= 1, op, ": other must have at least 1 dimension.");
  bool vector_case = B.dim() == 1 || A.dim() - 1 == B.dim();
  at::Tensor B2 = vector_case ? B.unsqueeze(-1) : B;
  int64_t m = A.size(-2), n = A.size(-1), r = B2.size(-1), mx = std::max(m, n);
  TORCH_CHECK(B2.size(-2) == m, op, ": input.size(-2) should match other.size(-",
              vector_case ? 1 : 2, ")");
  check_matrix(B2, op, false);
  std::vector<int64_t> batch = at::infer_size(batch_of(A, 2), batch_of(B2, 2));
  at::Tensor Ab = A.expand(with(batch, {m, n})), Bb = B2.expand(with(batch, {m, r}));
  double rc = rcond.value_or(std::numeric_limits<float>::epsilon() * static_cast<double>(mx));
  if (drv == "gelsd" || drv == "gelss")
    return lstsq_svd(Ab, Bb, rc, vector_case);
  at::Tensor X = at::zeros(with(batch, {mx, r}), A.options());
  at::Tensor rank = at::empty({0}, A.options().dtype(at::kLong));
  if (drv == "gels") {
    run(NISA_LA_GELS, 0, mats(X), mats(Ab), mats(Bb));
  } else {
    rank = at::zeros(batch, A.options().dtype(at::kLong));
    run(NISA_LA_GELSY, 0, mats(X), mats(Ab), mats(Bb), vals(rank), rc);
  }
  at::Tensor residuals = at::empty({0}, A.options());
  if (m > n && drv == "gels")   // rows n.. of LAPACK's B hold the residual's parts
    residuals = X.narrow(-2, n, m - n).square().sum(-2);
  at::Tensor sol = X.narrow(-2, 0, n);
  if (vector_case)
    sol = sol.squeeze(-1);
  return {sol.contiguous(), residuals, rank, at::empty({0}, A.options())};
}

std::tuple<at::Tensor&, at::Tensor&, at::Tensor&, at::Tensor&> lstsq_out(
    const at::Tensor& A, const at::Tensor& B, std::optional<double> rcond,
    std::optional<c10::string_view> driver, at::Tensor& sol, at::Tensor& res,
    at::Tensor& rank, at::Tensor& sv) {
  auto r = lstsq_k(A, B, rcond, driver);
  into(sol, std::get<0>(r));
  into(res, std::get<1>(r));
  into(rank, std::get<2>(r));
  into(sv, std::get<3>(r));
  return {sol, res, rank, sv};
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("geqrf", geqrf_k);
  m.impl("geqrf.a", geqrf_out);
  m.impl("linalg_householder_product", householder_product_k);
  m.impl("linalg_householder_product.out", householder_product_out);
  m.impl("ormqr", ormqr_k);
  m.impl("ormqr.out", ormqr_out);
  NEURON_COMPUTED_IMPL(m, "linalg_qr", "out", linalg_qr, qr_k)
  NEURON_COMPUTED_IMPL(m, "_linalg_svd", "U", _linalg_svd, svd_k)
  NEURON_COMPUTED_IMPL(m, "_linalg_eigh", "eigenvalues", _linalg_eigh, eigh_k)
  m.impl("linalg_lstsq", lstsq_k);
  m.impl("linalg_lstsq.out", lstsq_out);
}

}  // namespace linalg
}  // namespace torch_neuron

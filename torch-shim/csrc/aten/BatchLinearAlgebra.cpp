// SPDX-License-Identifier: MIT
// Linear algebra on the card (LINALG, docs/hardware.md): Cholesky, LU and
// the solves, inverses and determinants built on them, triangular solves.
// Each primitive is one LINALG instruction over the flattened batch; the
// composites follow PyTorch's CPU algorithms step by step (which LU they
// factor, which solve they call) so that their results -- and the LU and
// pivots autograd reuses -- are the CPU's up to rounding. The operators
// ATen has structured take their results (checks, shapes, the CPU's
// column-major strides, out= rules) from its metas, the values computed
// here copied into them.
#include <ATen/ops/_linalg_det_meta.h>
#include <ATen/ops/_linalg_slogdet_meta.h>
#include <ATen/ops/_linalg_solve_ex_meta.h>
#include <ATen/ops/linalg_cholesky_ex_meta.h>
#include <ATen/ops/linalg_inv_ex_meta.h>
#include <ATen/ops/linalg_ldl_factor_ex_meta.h>
#include <ATen/ops/linalg_ldl_solve_meta.h>
#include <ATen/ops/linalg_lu_factor_ex_meta.h>
#include <ATen/ops/linalg_lu_meta.h>
#include <ATen/ops/linalg_lu_solve_meta.h>
#include <ATen/ops/lu_unpack_meta.h>
#include <ATen/ops/triangular_solve_meta.h>

#include "NeuronLinalg.h"
#include "NeuronMeta.h"

namespace torch_neuron {
namespace linalg {

std::tuple<at::Tensor, at::Tensor, at::Tensor> lu_factor(const at::Tensor& A,
                                                         const char* op) {
  check_float(A, op);
  check_matrix(A, op, false);
  int64_t m = A.size(-2), n = A.size(-1), k = std::min(m, n);
  at::Tensor LU = at::empty(A.sizes(), A.options().memory_format(at::MemoryFormat::Contiguous));
  at::Tensor piv = at::empty(with(batch_of(A, 2), {k}), A.options().dtype(at::kInt));
  at::Tensor info = at::zeros(batch_of(A, 2), A.options().dtype(at::kInt));
  run(NISA_LA_GETRF, 0, mats(LU), mats(A), vecs(piv), vals(info));
  return {LU, piv, info};
}

at::Tensor lu_solve(const at::Tensor& LU, const at::Tensor& pivots, const at::Tensor& B,
                    bool left, bool adjoint) {
  const char* op = "linalg.lu_solve";
  check_float(LU, op);
  check_float(B, op);
  check_matrix(LU, op, true);
  TORCH_CHECK(B.dim() >= 2, op, ": Expected B to have at least 2 dimensions, but it has ",
              B.dim(), " dimensions instead");
  TORCH_CHECK(pivots.scalar_type() == at::kInt, op, ": pivots should be a Tensor of "
              "scalar type torch.int32");
  int64_t n = LU.size(-1);
  TORCH_CHECK(left ? B.size(-2) == n : B.size(-1) == n, op, ": Incompatible shapes of A "
              "and B for the equation ", left ? "AX = B" : "XA = B", " (", n, "x", n,
              " and ", B.size(-2), "x", B.size(-1), ")");
  TORCH_CHECK(pivots.dim() == LU.dim() - 1 && pivots.size(-1) == n, op,
              ": Number of pivots per batch should be same as the dimension of the matrix");
  check_matrix(B, op, false);
  std::vector<int64_t> batch = at::infer_size(batch_of(LU, 2), batch_of(B, 2));
  batch = at::infer_size(batch, batch_of(pivots, 1));
  at::Tensor LUb = LU.expand(with(batch, {n, n}));
  at::Tensor pb = pivots.expand(with(batch, {n}));
  at::Tensor Bb = B.expand(with(batch, {B.size(-2), B.size(-1)}));
  // X A = B is A^T X^T = B^T: the transposed solve into X's transpose.
  at::Tensor X = at::empty(with(batch, {B.size(-2), B.size(-1)}), B.options());
  at::Tensor X3 = mats(X), B3 = mats(Bb);
  if (!left) {
    X3 = X3.mT();
    B3 = B3.mT();
  }
  run(NISA_LA_GETRS, (adjoint != !left) ? NISA_IF_LA_TRANS : 0, X3, mats(LUb),
      vecs(pb), B3);
  return X;
}

namespace {

// ---- Cholesky ----
std::tuple<at::Tensor, at::Tensor> cholesky_ex_k(const at::Tensor& A, bool upper,
                                               bool check_errors) {
  const char* op = "linalg.cholesky";
  check_float(A, op);
  check_matrix(A, op, true);
  at::Tensor L = at::empty(A.sizes(), A.options().memory_format(at::MemoryFormat::Contiguous));
  at::Tensor info = at::zeros(batch_of(A, 2), A.options().dtype(at::kInt));
  run(NISA_LA_POTRF, upper ? NISA_IF_LA_UPPER : 0, mats(L), mats(A), vals(info));
  if (check_errors)
    at::_linalg_check_errors(info, "linalg.cholesky_ex", A.dim() == 2);
  return {L, info};
}

at::Tensor cholesky_k(const at::Tensor& A, bool upper) {
  auto r = cholesky_ex_k(A, upper, false);
  at::_linalg_check_errors(std::get<1>(r), "cholesky", A.dim() == 2);
  return std::get<0>(r);
}

at::Tensor& cholesky_out(const at::Tensor& A, bool upper, at::Tensor& out) {
  return into(out, cholesky_k(A, upper));
}

// Solve A X = B with A = L L^T (U^T U): two triangular solves.
at::Tensor cholesky_solve_helper_k(const at::Tensor& B, const at::Tensor& A, bool upper) {
  const char* op = "cholesky_solve";
  check_float(A, op);
  check_float(B, op);
  check_matrix(A, op, true);
  check_matrix(B, op, false);
  std::vector<int64_t> batch = at::infer_size(batch_of(A, 2), batch_of(B, 2));
  int64_t n = A.size(-1);
  TORCH_CHECK(B.size(-2) == n, op, ": Incompatible matrix sizes for cholesky_solve: each "
              "A matrix is ", n, " by ", n, " but each b matrix is ", B.size(-2), " by ",
              B.size(-1));
  at::Tensor A3 = mats(A.expand(with(batch, {n, n})));
  at::Tensor B3 = mats(B.expand(with(batch, {n, B.size(-1)})));
  at::Tensor Y = at::empty(B3.sizes(), B.options()), X = at::empty(B3.sizes(), B.options());
  uint32_t tri = upper ? NISA_IF_LA_UPPER : 0;
  run(NISA_LA_TRSM, tri | (upper ? NISA_IF_LA_TRANS : 0), Y, A3, B3);
  run(NISA_LA_TRSM, tri | (upper ? 0 : NISA_IF_LA_TRANS), X, A3, Y);
  return X.view(with(batch, {n, B.size(-1)}));
}

at::Tensor& cholesky_solve_helper_out(const at::Tensor& B, const at::Tensor& A, bool upper,
                                      at::Tensor& out) {
  return into(out, cholesky_solve_helper_k(B, A, upper));
}

at::Tensor cholesky_inverse_k(const at::Tensor& L, bool upper) {
  check_matrix(L, "cholesky_inverse", true);
  return cholesky_solve_helper_k(eye(batch_of(L, 2), L.size(-1), L), L, upper);
}

at::Tensor& cholesky_inverse_out(const at::Tensor& L, bool upper, at::Tensor& out) {
  return into(out, cholesky_inverse_k(L, upper));
}

// ---- LU ----
std::tuple<at::Tensor, at::Tensor, at::Tensor> lu_factor_ex_k(const at::Tensor& A, bool pivot,
                                                            bool check_errors) {
  TORCH_CHECK(pivot, "linalg.lu_factor: LU without pivoting is not implemented on the CPU");
  auto r = lu_factor(A, "linalg.lu_factor");
  if (check_errors)
    at::_linalg_check_errors(std::get<2>(r), "torch.linalg.lu_factor_ex", A.dim() == 2);
  return r;
}

// P (A = P L U) from the pivots, L (unit lower, [m, k]) and U ([k, n]).
std::tuple<at::Tensor, at::Tensor, at::Tensor> lu_unpack_k(const at::Tensor& LU,
                                                         const at::Tensor& piv,
                                                         bool unpack_data,
                                                         bool unpack_pivots) {
  const char* op = "torch.lu_unpack";
  check_matrix(LU, op, false);
  int64_t m = LU.size(-2), n = LU.size(-1), k = std::min(m, n);
  at::Tensor P = at::empty({0}, LU.options()), L = P, U = P;
  if (unpack_data) {
    check_float(LU, op);
    L = LU.narrow(-1, 0, k).tril(-1);
    L.diagonal(0, -2, -1).fill_(1);
    U = LU.narrow(-2, 0, k).triu();
  }
  if (unpack_pivots) {
    TORCH_CHECK(piv.scalar_type() == at::kInt, op, ": LU_pivots is expected to be a "
                "contiguous tensor of torch.int32 dtype. Note: this function is intended "
                "to be used with the output produced by torch.linalg.lu_factor");
    TORCH_CHECK(piv.dim() >= 1 && piv.size(-1) == k, op, ": the pivots do not match LU");
    std::vector<int64_t> batch = batch_of(piv, 1);
    P = at::empty(with(batch, {m, m}), LU.options());
    if (k == 0)
      P = eye(batch, m, LU);
    else
      run(NISA_LA_PERM, 0, mats(P), vecs(piv));
  }
  return {P, L, U};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> linalg_lu_k(const at::Tensor& A, bool pivot) {
  TORCH_CHECK(pivot, "linalg.lu: LU without pivoting is not implemented on the CPU");
  auto f = lu_factor(A, "linalg.lu");
  return lu_unpack_k(std::get<0>(f), std::get<1>(f), true, true);
}

// ---- solve, inverse: the CPU factors A^T when A is contiguous ----
std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> solve_ex_k(
    const at::Tensor& A, const at::Tensor& B, bool left, bool check_errors) {
  const char* op = "linalg.solve";
  check_matrix(A, op, true);
  TORCH_CHECK(A.scalar_type() == B.scalar_type(), op, ": Expected A and B to have the "
              "same dtype, but found A of type ", A.scalar_type(), " and B of type ",
              B.scalar_type(), " instead");
  bool vector_case = B.dim() == 1 ||
                     (A.dim() - 1 == B.dim() && B.sizes() == A.sizes().slice(0, A.dim() - 1));
  TORCH_CHECK(left || !vector_case, "linalg.solve: Vector broadcasting of the left hand "
              "side is not supported for left=False. In this case linalg.solve is "
              "equivalent to B / A.squeeze(-1)");
  bool use_A_T = A.is_contiguous();
  auto f = lu_factor(use_A_T ? A.mT() : A, op);
  if (check_errors)
    at::_linalg_check_errors(std::get<2>(f), "torch.linalg.solve_ex", A.dim() == 2);
  at::Tensor X = lu_solve(std::get<0>(f), std::get<1>(f), vector_case ? B.unsqueeze(-1) : B,
                          left, use_A_T);
  return {vector_case ? X.squeeze(-1) : X, std::get<0>(f), std::get<1>(f), std::get<2>(f)};
}

std::tuple<at::Tensor, at::Tensor> inv_ex_k(const at::Tensor& A, bool check_errors) {
  const char* op = "linalg.inv";
  check_matrix(A, op, true);
  bool use_A_T = A.is_contiguous();
  auto f = lu_factor(use_A_T ? A.mT() : A, op);
  if (check_errors)
    at::_linalg_check_errors(std::get<2>(f), "linalg.inv_ex", A.dim() == 2);
  at::Tensor I = eye({}, A.size(-1), A).expand(A.sizes());
  return {lu_solve(std::get<0>(f), std::get<1>(f), I, true, use_A_T), std::get<2>(f)};
}

// ---- determinants: prod(diag(U)) and the pivots' sign, on the card ----
std::tuple<at::Tensor, at::Tensor, at::Tensor> det_k(const at::Tensor& A) {
  const char* op = "linalg.det";
  check_matrix(A, op, true);
  auto f = lu_factor(A.is_contiguous() ? A.mT() : A, op);
  at::Tensor d = at::ones(batch_of(A, 2), A.options());
  run(NISA_LA_LUDET, 0, vals(d), mats(std::get<0>(f)), vecs(std::get<1>(f)));
  return {d, std::get<0>(f), std::get<1>(f)};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> slogdet_k(const at::Tensor& A) {
  const char* op = "linalg.slogdet";
  check_matrix(A, op, true);
  auto f = lu_factor(A.is_contiguous() ? A.mT() : A, op);
  at::Tensor sign = at::ones(batch_of(A, 2), A.options());
  at::Tensor logabs = at::zeros(batch_of(A, 2), A.options());
  run(NISA_LA_LUDET, NISA_IF_LA_LOG, vals(logabs), mats(std::get<0>(f)),
      vecs(std::get<1>(f)), vals(sign));
  return {sign, logabs, std::get<0>(f), std::get<1>(f)};
}

// ---- triangular solves ----
at::Tensor trsm_k(const at::Tensor& A, const at::Tensor& B, uint32_t flags, const char* op) {
  check_float(A, op);
  check_float(B, op);
  check_matrix(A, op, true);
  check_matrix(B, op, false);
  bool right = flags & NISA_IF_LA_RIGHT;
  int64_t n = A.size(-1);
  TORCH_CHECK((right ? B.size(-1) : B.size(-2)) == n, op, ": Incompatible shapes of A and "
              "B for the equation ", right ? "XA = B" : "AX = B", " (", n, "x", n, " and ",
              B.size(-2), "x", B.size(-1), ")");
  std::vector<int64_t> batch = at::infer_size(batch_of(A, 2), batch_of(B, 2));
  at::Tensor X = at::empty(with(batch, {B.size(-2), B.size(-1)}), B.options());
  run(NISA_LA_TRSM, flags, mats(X), mats(A.expand(with(batch, {n, n}))),
      mats(B.expand(with(batch, {B.size(-2), B.size(-1)}))));
  return X;
}

uint32_t tri_flags(bool upper, bool unitriangular) {
  return (upper ? NISA_IF_LA_UPPER : 0) | (unitriangular ? NISA_IF_LA_UNIT : 0);
}

at::Tensor solve_triangular_k(const at::Tensor& A, const at::Tensor& B, bool upper, bool left,
                            bool unitriangular) {
  return trsm_k(A, B, tri_flags(upper, unitriangular) | (left ? 0 : NISA_IF_LA_RIGHT),
              "linalg.solve_triangular");
}

at::Tensor& solve_triangular_out(const at::Tensor& A, const at::Tensor& B, bool upper,
                                 bool left, bool unitriangular, at::Tensor& out) {
  return into(out, solve_triangular_k(A, B, upper, left, unitriangular));
}

std::tuple<at::Tensor, at::Tensor> triangular_solve_k(const at::Tensor& B, const at::Tensor& A,
                                                    bool upper, bool transpose,
                                                    bool unitriangular) {
  at::Tensor X = trsm_k(A, B, tri_flags(upper, unitriangular) |
                      (transpose ? NISA_IF_LA_TRANS : 0), "triangular_solve");
  std::vector<int64_t> batch = batch_of(X, 2);
  return {X, A.expand(with(batch, {A.size(-2), A.size(-1)})).clone()};
}

// ---- LDL^T (sytrf / sytrs, lower, as the CPU) ----
std::tuple<at::Tensor, at::Tensor, at::Tensor> ldl_factor_ex_k(const at::Tensor& A,
                                                               bool hermitian,
                                                               bool check_errors) {
  const char* op = "torch.linalg.ldl_factor_ex";
  check_float(A, op);
  check_matrix(A, op, true);
  at::Tensor LD = at::empty(A.sizes(), A.options().memory_format(at::MemoryFormat::Contiguous));
  at::Tensor piv = at::empty(with(batch_of(A, 2), {A.size(-1)}), A.options().dtype(at::kInt));
  at::Tensor info = at::zeros(batch_of(A, 2), A.options().dtype(at::kInt));
  run(NISA_LA_SYTRF, 0, mats(LD), mats(A), vecs(piv), vals(info));
  if (check_errors)
    at::_linalg_check_errors(info, op, A.dim() == 2);
  return {LD, piv, info};
}

at::Tensor ldl_solve_k(const at::Tensor& LD, const at::Tensor& pivots, const at::Tensor& B,
                       bool hermitian) {
  const char* op = "torch.linalg.ldl_solve";
  check_float(LD, op);
  check_float(B, op);
  check_matrix(LD, op, true);
  check_matrix(B, op, false);
  TORCH_CHECK(pivots.scalar_type() == at::kInt, op, ": Expected pivots to be integers. Got ",
              pivots.scalar_type());
  int64_t n = LD.size(-1);
  TORCH_CHECK(B.size(-2) == n && pivots.dim() == LD.dim() - 1 && pivots.size(-1) == n, op,
              ": Incompatible shapes of LD, pivots and B");
  std::vector<int64_t> batch = at::infer_size(batch_of(LD, 2), batch_of(B, 2));
  batch = at::infer_size(batch, batch_of(pivots, 1));
  at::Tensor X = at::empty(with(batch, {n, B.size(-1)}), B.options());
  run(NISA_LA_SYTRS, 0, mats(X), mats(LD.expand(with(batch, {n, n}))),
      vecs(pivots.expand(with(batch, {n}))), mats(B.expand(with(batch, {n, B.size(-1)}))));
  return X;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  NEURON_COMPUTED_IMPL(m, "linalg_cholesky_ex", "L", linalg_cholesky_ex, cholesky_ex_k)
  m.impl("cholesky", cholesky_k);
  m.impl("cholesky.out", cholesky_out);
  m.impl("_cholesky_solve_helper", cholesky_solve_helper_k);
  m.impl("_cholesky_solve_helper.out", cholesky_solve_helper_out);
  m.impl("cholesky_inverse", cholesky_inverse_k);
  m.impl("cholesky_inverse.out", cholesky_inverse_out);
  NEURON_COMPUTED_IMPL(m, "linalg_lu_factor_ex", "out", linalg_lu_factor_ex, lu_factor_ex_k)
  NEURON_COMPUTED_IMPL(m, "linalg_lu_solve", "out", linalg_lu_solve, lu_solve)
  NEURON_COMPUTED_IMPL(m, "lu_unpack", "out", lu_unpack, lu_unpack_k)
  NEURON_COMPUTED_IMPL(m, "linalg_lu", "out", linalg_lu, linalg_lu_k)
  NEURON_COMPUTED_IMPL(m, "_linalg_solve_ex", "result", _linalg_solve_ex, solve_ex_k)
  NEURON_COMPUTED_IMPL(m, "linalg_inv_ex", "inverse", linalg_inv_ex, inv_ex_k)
  NEURON_COMPUTED_IMPL(m, "_linalg_det", "result", _linalg_det, det_k)
  NEURON_COMPUTED_IMPL(m, "_linalg_slogdet", "sign", _linalg_slogdet, slogdet_k)
  m.impl("linalg_solve_triangular", solve_triangular_k);
  m.impl("linalg_solve_triangular.out", solve_triangular_out);
  NEURON_COMPUTED_IMPL(m, "triangular_solve", "X", triangular_solve, triangular_solve_k)
  NEURON_COMPUTED_IMPL(m, "linalg_ldl_factor_ex", "out", linalg_ldl_factor_ex, ldl_factor_ex_k)
  NEURON_COMPUTED_IMPL(m, "linalg_ldl_solve", "out", linalg_ldl_solve, ldl_solve_k)
}

}  // namespace linalg
}  // namespace torch_neuron

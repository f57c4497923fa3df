// SPDX-License-Identifier: MIT
// What the linear algebra files share: batches of matrices as the card's
// LINALG operands ([B, r, c], vectors [B, 1, n], one value per matrix
// [B, 1, 1]), the checks that refuse loudly what the card does not do, and
// one LINALG instruction.
#pragma once

#include <optional>

#include "NeuronOps.h"

namespace torch_neuron {
namespace linalg {

// The product of all but the last @mat dims.
inline int64_t batch_count(at::IntArrayRef s, size_t mat) {
  int64_t b = 1;
  for (size_t i = 0; i + mat < s.size(); i++)
    b *= s[i];
  return b;
}

inline std::vector<int64_t> batch_of(const at::Tensor& t, size_t mat) {
  at::IntArrayRef s = t.sizes();
  return std::vector<int64_t>(s.begin(), s.end() - static_cast<long>(mat));
}

inline std::vector<int64_t> with(std::vector<int64_t> batch,
                                 std::initializer_list<int64_t> tail) {
  batch.insert(batch.end(), tail.begin(), tail.end());
  return batch;
}

// float32 and float64, as the CPU's LAPACK: LINALG computes a float64
// matrix with LAPACK's d routines (docs/hardware.md, "LINALG"); neither the
// CPU nor the card factors bfloat16 or float16.
inline void check_float(const at::Tensor& t, const char* op) {
  TORCH_CHECK(is_neuron(t), "neuron: ", op, ": expected a tensor on neuron, got one on ",
              t.device());
  TORCH_CHECK(t.scalar_type() == at::kFloat || t.scalar_type() == at::kDouble,
              "neuron: ", op, ": only float32 and float64 are supported by the card's "
              "linear algebra, got ", t.scalar_type());
}

inline void check_matrix(const at::Tensor& t, const char* op, bool square) {
  TORCH_CHECK(t.dim() >= 2, op, ": The input tensor A must have at least 2 dimensions.");
  if (square)
    TORCH_CHECK(t.size(-1) == t.size(-2), op, ": A must be batches of square matrices, "
                "but they are ", t.size(-2), " by ", t.size(-1), " matrices");
  TORCH_CHECK(t.size(-1) <= NISA_LINALG_MAX_DIM && t.size(-2) <= NISA_LINALG_MAX_DIM,
              "neuron: ", op, ": matrices larger than ", NISA_LINALG_MAX_DIM, " x ",
              NISA_LINALG_MAX_DIM, " are not supported by the card (got ", t.size(-2),
              " x ", t.size(-1), ")");
}

// [B, r, c]: a view of a contiguous result, a copy (on the card) of an input
// whose batch dims do not merge.
inline at::Tensor mats(const at::Tensor& t) {
  return t.reshape({batch_count(t.sizes(), 2), t.size(-2), t.size(-1)});
}
inline at::Tensor vecs(const at::Tensor& t) {
  return t.reshape({batch_count(t.sizes(), 1), 1, t.size(-1)});
}
inline at::Tensor vals(const at::Tensor& t) {
  return t.reshape({t.numel(), 1, 1});
}

// One LINALG instruction on @dst's stream (nothing when an operand is empty).
inline void run(nisa_linalg op, uint32_t flags, const at::Tensor& dst,
                const at::Tensor& s0, const std::optional<at::Tensor>& s1 = std::nullopt,
                const std::optional<at::Tensor>& s2 = std::nullopt, double scalar = 0) {
  check_device(dst, s0);
  nrn_tensor_desc d = desc(dst), a = desc(s0), b{}, c{};
  if (s1) {
    check_device(dst, *s1);
    b = desc(*s1);
  }
  if (s2) {
    check_device(dst, *s2);
    c = desc(*s2);
  }
  NEURON_OP(nrn_op_linalg(stream_for(dst), op, flags, scalar, &d, &a, s1 ? &b : nullptr,
                          s2 ? &c : nullptr));
}

// Identity matrices of @like's batch and dtype, [.., n, n] (made on the card).
inline at::Tensor eye(std::vector<int64_t> batch, int64_t n, const at::Tensor& like) {
  at::Tensor e = at::zeros(with(std::move(batch), {n, n}), like.options());
  e.diagonal(0, -2, -1).fill_(1);
  return e;
}

// The LU factorization ops share (linalg_lu_factor_ex without the checks).
std::tuple<at::Tensor, at::Tensor, at::Tensor> lu_factor(const at::Tensor& A,
                                                         const char* op);
// X with A X = B (or X A = B), A = P L U given as LU and pivots.
at::Tensor lu_solve(const at::Tensor& LU, const at::Tensor& pivots, const at::Tensor& B,
                    bool left, bool adjoint);

}  // namespace linalg
}  // namespace torch_neuron

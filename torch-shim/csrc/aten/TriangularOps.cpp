// SPDX-License-Identifier: MIT
// tril and triu (functional, in place and out=): results from their
// structured metas, the elements on the kept side of diagonal k selected
// into them by one WHERE on the card.
#include <ATen/ops/tril_meta.h>
#include <ATen/ops/triu_meta.h>

#include "NeuronElementwise.h"

namespace torch_neuron {
namespace {

// ---- tril / triu: keep where (col - row) is on the kept side of k ----
at::Tensor& tri_into(const at::Tensor& self, int64_t k, bool lower, at::Tensor& out) {
  TORCH_CHECK(self.dim() >= 2, lower ? "tril" : "triu", ": input tensor must have at "
              "least 2 dimensions");
  at::TensorOptions io = self.options().dtype(at::kLong);
  at::Tensor row = at::arange(self.size(-2), io).unsqueeze(1);
  at::Tensor diff = at::arange(self.size(-1), io) - row;
  at::Tensor keep = lower ? diff.le(k) : diff.ge(k);
  return where_into(keep, self, filled(0.0, self.scalar_type(), self.device()), out);
}

// The functional, out= and in-place kernels of NAME (LOWER: tril).
#define TRI_KERNELS(name, LOWER)                                              \
  at::Tensor name(const at::Tensor& self, int64_t k) {                        \
    auto [out] = meta_results<at::meta::structured_##name>(Form::Functional, {}, self, k); \
    return tri_into(self, k, LOWER, out);                                     \
  }                                                                           \
  at::Tensor& name##_out(const at::Tensor& self, int64_t k, at::Tensor& out) { \
    meta_results<at::meta::structured_##name>(Form::Out, {out}, self, k);     \
    return tri_into(self, k, LOWER, out);                                     \
  }                                                                           \
  at::Tensor& name##_(at::Tensor& self, int64_t k) {                          \
    meta_results<at::meta::structured_##name>(Form::Inplace, {self}, self, k); \
    return tri_into(self, k, LOWER, self);                                    \
  }
TRI_KERNELS(tril, true)
TRI_KERNELS(triu, false)

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("tril", tril);
  m.impl("triu", triu);
  m.impl("tril.out", tril_out);
  m.impl("triu.out", triu_out);
  m.impl("tril_", tril_);
  m.impl("triu_", triu_);
}

}  // namespace torch_neuron

// SPDX-License-Identifier: MIT
// tril and triu (functional, in place and out=): the elements on the kept
// side of diagonal k selected by a where, composed of ATen operators that
// dispatch to the card's kernels.
#include "NeuronOps.h"

namespace torch_neuron {
namespace {

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

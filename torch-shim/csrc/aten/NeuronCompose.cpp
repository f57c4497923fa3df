// SPDX-License-Identifier: MIT
// Common operators composed from the card's kernels: tril/triu, flip (one
// strided copy with negative strides), roll, dot/vdot and addmv.
#include <algorithm>

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

// ---- flip: one copy reading the source with negated strides ----
at::Tensor flip(const at::Tensor& self, at::IntArrayRef dims) {
  at::Tensor out = at::empty_like(self, at::MemoryFormat::Contiguous);
  if (self.numel() == 0)
    return out;
  nrn_tensor_desc src = desc(self), dst = desc(out);
  std::vector<bool> seen(std::max<int64_t>(self.dim(), 1), false);
  for (int64_t d0 : dims) {
    int64_t d = at::maybe_wrap_dim(d0, self.dim());
    TORCH_CHECK(!seen[d], "dim ", d, " appears multiple times in the list of dims");
    seen[d] = true;
    src.offset += static_cast<uint64_t>((src.shape[d] - 1) * src.strides[d] *
                                        static_cast<int64_t>(self.itemsize()));
    src.strides[d] = -src.strides[d];
  }
  NEURON_OP(nrn_op_copy(stream_for(out), &dst, &src));
  return out;
}

// ---- roll: the two halves of each rolled dim, swapped ----
at::Tensor roll_n(const at::Tensor& self, at::IntArrayRef shifts, at::IntArrayRef dims) {
  if (dims.empty()) {
    TORCH_CHECK(shifts.size() == 1, "roll: shifts and dims must align");
    return roll_n(self.flatten(), shifts, {0}).view(self.sizes());
  }
  TORCH_CHECK(shifts.size() == dims.size(), "shifts and dimensions must align. shifts: ",
              shifts.size(), ", dims:", dims.size());
  at::Tensor x = self;
  for (size_t i = 0; i < dims.size(); i++) {
    int64_t d = at::maybe_wrap_dim(dims[i], self.dim()), n = x.size(d);
    if (n == 0)
      continue;
    int64_t s = ((shifts[i] % n) + n) % n;
    if (s != 0)
      x = at::cat({x.narrow(d, n - s, s), x.narrow(d, 0, n - s)}, d);
  }
  return x.is_same(self) ? self.clone() : x;
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

at::Tensor addmv_n(const at::Tensor& self, const at::Tensor& mat, const at::Tensor& vec,
                 const at::Scalar& beta, const at::Scalar& alpha) {
  TORCH_CHECK(mat.dim() == 2 && vec.dim() == 1 && mat.size(1) == vec.size(0),
              "size mismatch, got input (", self.sizes(), "), mat (", mat.sizes(),
              "), vec (", vec.sizes(), ")");
  at::Tensor r = at::mm(mat, vec.unsqueeze(1)).squeeze(1);
  if (alpha.toDouble() != 1.0)
    r = r * alpha;
  if (beta.toDouble() != 0.0)
    r = r + self * beta;
  return r;
}
at::Tensor& addmv_out(const at::Tensor& self, const at::Tensor& mat, const at::Tensor& vec,
                      const at::Scalar& beta, const at::Scalar& alpha, at::Tensor& out) {
  return into(out, addmv_n(self, mat, vec, beta, alpha));
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("tril", tril);
  m.impl("triu", triu);
  m.impl("tril.out", tril_out);
  m.impl("triu.out", triu_out);
  m.impl("tril_", tril_);
  m.impl("triu_", triu_);
  m.impl("flip", flip);
  m.impl("roll", roll_n);
  m.impl("dot", dot);
  m.impl("vdot", dot);
  m.impl("addmv", addmv_n);
  m.impl("addmv.out", addmv_out);
}

}  // namespace torch_neuron

// SPDX-License-Identifier: MIT
// flip (one strided copy with negative strides) and roll (the halves of
// each rolled dim swapped), on the card.
#include <algorithm>

#include "NeuronOps.h"

namespace torch_neuron {
namespace {

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

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("flip", flip);
  m.impl("roll", roll_n);
}

}  // namespace torch_neuron

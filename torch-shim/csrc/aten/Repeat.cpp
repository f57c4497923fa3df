// SPDX-License-Identifier: MIT
// repeat_interleave(repeats): the indices repeated, from a running sum on
// the card.
#include "NeuronOps.h"

namespace torch_neuron {
namespace {

// repeat_interleave(repeats): i repeated repeats[i] times. A mark at the
// end of every block but the last, summed up: out[j] = the blocks ended
// at or before j. The total is read back (unless given), as on the CPU.
at::Tensor repeat_interleave(const at::Tensor& repeats, std::optional<c10::SymInt> output_size) {
  TORCH_CHECK(repeats.dim() == 1, "repeat_interleave only accept 1D vector as repeat");
  TORCH_CHECK(repeats.scalar_type() == at::kLong || repeats.scalar_type() == at::kInt,
              "repeats has to be Long or Int tensor");
  at::Tensor r = repeats.to(at::kLong);
  if (r.numel() == 0)
    return empty_neuron({0}, repeats.scalar_type(), repeats.device());
  TORCH_CHECK(r.min().item<int64_t>() >= 0, "repeats can not be negative");
  at::Tensor ends = r.cumsum(0);
  int64_t total = ends[-1].item<int64_t>();
  if (output_size)
    TORCH_CHECK(output_size->expect_int() == total, "allocated size does not match "
                "required size");
  at::Tensor marks = at::zeros({total + 1}, ends.options());
  marks.index_add_(0, ends.narrow(0, 0, r.numel() - 1),
                   at::ones({r.numel() - 1}, ends.options()));
  return marks.cumsum(0).narrow(0, 0, total).to(repeats.scalar_type());
}
at::Tensor& repeat_interleave_out(const at::Tensor& repeats,
                                  std::optional<c10::SymInt> output_size, at::Tensor& out) {
  at::Tensor r = repeat_interleave(repeats, output_size);
  return into(out, r);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("repeat_interleave.Tensor", repeat_interleave);
  m.impl("repeat_interleave.Tensor_out", repeat_interleave_out);
}

}  // namespace torch_neuron

// SPDX-License-Identifier: MIT
// channel_shuffle (and native_channel_shuffle): a copy through a transposed
// view, on the card.
#include "NeuronOps.h"

namespace torch_neuron {
namespace {

// [N, C, *] -> channels regrouped: out channel g' * (C/g) + j... as the CPU:
// view [N, g, C/g, rest], swap the group dims, copy.
at::Tensor channel_shuffle(const at::Tensor& self, c10::SymInt groups_) {
  int64_t groups = groups_.expect_int();
  TORCH_CHECK(self.dim() > 2, "channel_shuffle expects input to have at least 3 "
              "dimensions, but got input with sizes ", self.sizes());
  TORCH_CHECK(groups > 0, "Number of groups to divide channels in must be positive.",
              " Value of groups:", groups);
  int64_t c = self.size(1);
  TORCH_CHECK(c % groups == 0, "Number of channels must be divisible by groups. Got ", c,
              " channels and ", groups, " groups.");
  if (self.numel() == 0)
    return self.clone();
  at::Tensor v = self.reshape({self.size(0), groups, c / groups, -1});
  return v.transpose(1, 2).contiguous().view(self.sizes());
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("channel_shuffle", channel_shuffle);
  m.impl("native_channel_shuffle", channel_shuffle);
}

}  // namespace torch_neuron

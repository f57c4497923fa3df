// SPDX-License-Identifier: MIT
// torch.autocast("neuron"): the cast policy of each operator under autocast,
// by PyTorch's own lists (the ones CUDA and CPU use; ATen/autocast_mode.h
// gives them to out-of-tree backends). Matmuls and convolutions run in the
// autocast dtype, precision-sensitive ops (exp, norms, losses, softmax...)
// in float32, mixed-input ops in the widest input type. The card computes
// every elementwise op in double and rounds once, so the float32 list is
// about what PyTorch users expect, not about the card's accuracy.
#include <ATen/autocast_mode.h>
#include <torch/library.h>

#define NEURON_LOWER(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, lower_precision_fp)
#define NEURON_FP32(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, fp32)
#define NEURON_FP32_OPT_DTYPE(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, fp32_set_opt_dtype)
#define NEURON_PROMOTE(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, promote)

namespace at::autocast {
namespace {

TORCH_LIBRARY_IMPL(aten, AutocastPrivateUse1, m) {
  AT_FORALL_LOWER_PRECISION_FP(NEURON_LOWER)
  AT_FORALL_FP32(NEURON_FP32)
  AT_FORALL_FP32_SET_OPT_DTYPE(NEURON_FP32_OPT_DTYPE)
  AT_FORALL_DIFFERENT_REDISPATCH_SIGNATURE(
      KERNEL_DIFFERENT_REDISPATCH_SIGNATURE_PRIVATEUSEONE)
  AT_FORALL_PROMOTE(NEURON_PROMOTE)
}

// Every other operator runs as it is, in the dtypes it is given.
TORCH_LIBRARY_IMPL(_, AutocastPrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFallthrough());
}

}  // namespace
}  // namespace at::autocast

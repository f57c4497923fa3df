// SPDX-License-Identifier: MIT
// Shape operators: the views (as_strided, view, _reshape_alias and unfold:
// ATen's own kernels, nothing computed), unfold's backward, and cat (stack is cat of unsqueezed
// views). (arange: TensorFactories.cpp; the _foreach_* operators are
// decomposed per tensor in Fallback.cpp.)
#include <ATen/ops/_reshape_alias_native.h>
#include <ATen/ops/as_strided_native.h>
#include <ATen/ops/cat_meta.h>
#include <ATen/ops/unfold_native.h>
#include <ATen/ops/view_native.h>

#include "NeuronMeta.h"

namespace torch_neuron {
namespace {

// cat's results and checks are its structured meta's (the promoted type,
// the shapes, the memory format, no out= overlapping an input); each input
// is then copied into its slice of the result (1-D empty ones skipped, as
// ATen does for legacy code).
at::Tensor& cat_into(const at::ITensorListRef& tensors, int64_t dim, at::Tensor& out) {
  if (out.dim() == 0)
    return out;
  dim = at::maybe_wrap_dim(dim, out.dim());
  int64_t off = 0;
  for (const at::Tensor& t : tensors) {
    if (t.dim() == 1 && t.numel() == 0)
      continue;
    out.narrow(dim, off, t.size(dim)).copy_(t);
    off += t.size(dim);
  }
  return out;
}

at::Tensor cat(const at::ITensorListRef& tensors, int64_t dim) {
  auto [out] = meta_results<at::meta::structured_cat>(Form::Functional, {}, tensors, dim);
  return cat_into(tensors, dim, out);
}

at::Tensor& cat_out(const at::ITensorListRef& tensors, int64_t dim, at::Tensor& out) {
  meta_results<at::meta::structured_cat>(Form::Out, {out}, tensors, dim);
  return cat_into(tensors, dim, out);
}

// unfold's backward (and istft's overlap-add): the windows of @grad
// ([..., frames, size] with dim's extent the frames) summed into a tensor
// of @input_sizes. Window element j of frame i lands on i * step + j; the
// elements of one phase (j in [c step, (c + 1) step)) of all frames fall on
// distinct positions, so each phase is one add into a strided view:
// ceil(size / step) adds.
at::Tensor unfold_backward(const at::Tensor& grad, at::IntArrayRef input_sizes,
                           int64_t dim, int64_t size, int64_t step) {
  at::Tensor out = at::zeros(input_sizes, grad.options());
  dim = at::maybe_wrap_dim(dim, static_cast<int64_t>(input_sizes.size()));
  at::Tensor o = out.movedim(dim, -1);
  at::Tensor g = grad.movedim(dim, -2);
  int64_t frames = g.size(-2), s = o.stride(-1);
  if (frames == 0 || size == 0 || out.numel() == 0)
    return out;
  std::vector<int64_t> sizes(o.sizes().begin(), o.sizes().end() - 1);
  std::vector<int64_t> strides(o.strides().begin(), o.strides().end() - 1);
  sizes.insert(sizes.end(), {frames, 0});
  strides.insert(strides.end(), {step * s, s});
  for (int64_t c = 0; c * step < size; c++) {
    int64_t w = std::min(step, size - c * step);
    sizes.back() = w;
    o.as_strided(sizes, strides, o.storage_offset() + c * step * s)
        .add_(g.narrow(-1, c * step, w));
  }
  return out;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("as_strided", at::native::as_strided_tensorimpl);
  m.impl("view", at::native::view);
  m.impl("_reshape_alias", at::native::_reshape_alias);
  // A view of windows (the strides of @self, nothing computed): repeat, tile
  // and conv-style code reach it. Its only ATen kernels are per backend.
  m.impl("unfold", at::native::unfold);
  m.impl("unfold_backward", unfold_backward);
  m.impl("cat", cat);
  m.impl("cat.out", cat_out);
}

}  // namespace torch_neuron

// SPDX-License-Identifier: MIT
// im2col (nn.functional.unfold) and col2im (fold) on the card; each is the
// other's backward. im2col copies the zero-padded input's window at every
// kernel offset (a strided view, NeuronWindows.h) into its rows of the
// [N, C * KH * KW, L] result; col2im adds each kernel offset's rows back
// into the windows of a zero-padded plane (in acc_dtype()) and crops the
// padding.
#include <ATen/native/im2col_shape_check.h>

#include "NeuronWindows.h"

namespace torch_neuron {
namespace {

struct Geom {
  int64_t k[2], d[2], p[2], s[2], in[2], out[2];
};

Geom geometry(at::IntArrayRef kernel, at::IntArrayRef dilation, at::IntArrayRef padding,
              at::IntArrayRef stride, int64_t h, int64_t w, const char* op) {
  TORCH_CHECK(kernel.size() == 2 && dilation.size() == 2 && padding.size() == 2 &&
              stride.size() == 2, op, ": kernel_size, dilation, padding and stride must "
              "each have 2 elements");
  Geom g;
  for (int i = 0; i < 2; i++) {
    g.k[i] = kernel[i];
    g.d[i] = dilation[i];
    g.p[i] = padding[i];
    g.s[i] = stride[i];
    g.in[i] = i == 0 ? h : w;
    g.out[i] = (g.in[i] + 2 * g.p[i] - (g.d[i] * (g.k[i] - 1) + 1)) / g.s[i] + 1;
  }
  return g;
}

at::Tensor im2col(const at::Tensor& self, at::IntArrayRef kernel, at::IntArrayRef dilation,
                  at::IntArrayRef padding, at::IntArrayRef stride) {
  TORCH_CHECK(is_neuron(self), "neuron: im2col: expected a neuron tensor");
  TORCH_CHECK(kernel.size() == 2 && dilation.size() == 2 && padding.size() == 2 &&
              stride.size() == 2, "im2col: kernel_size, dilation, padding and stride must "
              "each have 2 elements");
  at::native::im2col_shape_check(self, at::Tensor(), kernel[0], kernel[1], dilation[0],
                                 dilation[1], padding[0], padding[1], stride[0], stride[1]);
  at::Tensor x = self.dim() == 3 ? self.unsqueeze(0) : self;
  Geom g = geometry(kernel, dilation, padding, stride, x.size(2), x.size(3), "im2col");
  int64_t N = x.size(0), C = x.size(1), KK = g.k[0] * g.k[1], L = g.out[0] * g.out[1];
  at::Tensor cols = empty_neuron({N, C, KK, g.out[0], g.out[1]}, x.scalar_type(), x.device());
  if (cols.numel()) {
    at::Tensor xp = padded(x, {g.p[0], g.p[1]}, {g.p[0], g.p[1]}, 0.0, x.scalar_type());
    Card card(cols);
    int64_t i = 0;
    for (const auto& k : offsets({g.k[0], g.k[1]}))
      card.copy(cols.select(2, i++),
                window(xp, k, {g.out[0], g.out[1]}, {g.s[0], g.s[1]}, {g.d[0], g.d[1]}));
  }
  at::Tensor r = cols.view({N, C * KK, L});
  return self.dim() == 3 ? r.squeeze(0) : r;
}

at::Tensor col2im(const at::Tensor& self, c10::SymIntArrayRef output_size,
                  at::IntArrayRef kernel, at::IntArrayRef dilation, at::IntArrayRef padding,
                  at::IntArrayRef stride) {
  check_float_input(self, "col2im");
  std::vector<int64_t> osz = concrete(output_size);
  TORCH_CHECK(osz.size() == 2, "It is expected output_size equals to 2, but got size ",
              osz.size());
  TORCH_CHECK(kernel.size() == 2 && dilation.size() == 2 && padding.size() == 2 &&
              stride.size() == 2, "col2im: kernel_size, dilation, padding and stride must "
              "each have 2 elements");
  at::native::col2im_shape_check(self, at::Tensor(), osz[0], osz[1], kernel[0], kernel[1],
                                 dilation[0], dilation[1], padding[0], padding[1], stride[0],
                                 stride[1]);
  at::Tensor cols = self.dim() == 2 ? self.unsqueeze(0) : self;
  Geom g = geometry(kernel, dilation, padding, stride, osz[0], osz[1], "col2im");
  int64_t N = cols.size(0), KK = g.k[0] * g.k[1], C = cols.size(1) / KK;
  at::Tensor gp = at::zeros({N, C, osz[0] + 2 * g.p[0], osz[1] + 2 * g.p[1]},
                            cols.options().dtype(acc_dtype(cols.scalar_type())));
  if (cols.numel()) {
    at::Tensor c = cols.reshape({N, C, KK, g.out[0], g.out[1]}).to(gp.scalar_type());
    Card card(gp);
    int64_t i = 0;
    for (const auto& k : offsets({g.k[0], g.k[1]})) {
      at::Tensor win = window(gp, k, {g.out[0], g.out[1]}, {g.s[0], g.s[1]}, {g.d[0], g.d[1]});
      card.bin(NISA_BIN_ADD, win, win, c.select(2, i++));
    }
  }
  at::Tensor out = empty_neuron({N, C, osz[0], osz[1]}, self.scalar_type(), self.device());
  if (out.numel())
    Card(out).copy(out, gp.narrow(2, g.p[0], osz[0]).narrow(3, g.p[1], osz[1]));
  return self.dim() == 2 ? out.squeeze(0) : out;
}

at::Tensor& im2col_out(const at::Tensor& self, at::IntArrayRef kernel, at::IntArrayRef dilation,
                       at::IntArrayRef padding, at::IntArrayRef stride, at::Tensor& out) {
  at::Tensor r = (im2col)(self, kernel, dilation, padding, stride);
  resize_out(out, r.sizes());
  out.copy_(r);
  return out;
}

at::Tensor& col2im_out(const at::Tensor& self, c10::SymIntArrayRef output_size,
                       at::IntArrayRef kernel, at::IntArrayRef dilation,
                       at::IntArrayRef padding, at::IntArrayRef stride, at::Tensor& out) {
  at::Tensor r = (col2im)(self, output_size, kernel, dilation, padding, stride);
  resize_out(out, r.sizes());
  out.copy_(r);
  return out;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("im2col", im2col);
  m.impl("im2col.out", im2col_out);
  m.impl("col2im", col2im);
  m.impl("col2im.out", col2im_out);
}

}  // namespace torch_neuron

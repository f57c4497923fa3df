// SPDX-License-Identifier: MIT
// Upsampling on the card: nearest and nearest-exact (1-d, 2-d, 3-d), linear,
// bilinear, trilinear, bicubic, and the antialiased bilinear and bicubic,
// forward and backward.
//
// Every mode is separable: one spatial dim at a time (the last first, as the
// CPU kernels nest their sums), out = sum_t x.index_select(d, idx_t) * w_t
// with a few taps t (1 nearest, 2 linear, 4 cubic, the filter's support for
// antialiasing). The tap indices and weights are PyTorch's (ATen's
// UpSample.h helpers) and depend only on the sizes, align_corners and the
// scale factors -- never on tensor data -- so they are built on the host as
// small tables, computed as PyTorch's CPU computes them (in float, in
// double for float64); the gathers, products and sums run on the card in
// acc_dtype() (bfloat16 is rounded once at the end). The backward is the transpose:
// index_add of the weighted gradient, dim by dim in reverse.
#include <ATen/native/UpSample.h>
#include <ATen/ops/_upsample_bicubic2d_aa_meta.h>
#include <ATen/ops/_upsample_bicubic2d_aa_backward_meta.h>
#include <ATen/ops/_upsample_bilinear2d_aa_meta.h>
#include <ATen/ops/_upsample_bilinear2d_aa_backward_meta.h>
#include <ATen/ops/_upsample_nearest_exact1d_meta.h>
#include <ATen/ops/_upsample_nearest_exact1d_backward_meta.h>
#include <ATen/ops/_upsample_nearest_exact2d_meta.h>
#include <ATen/ops/_upsample_nearest_exact2d_backward_meta.h>
#include <ATen/ops/_upsample_nearest_exact3d_meta.h>
#include <ATen/ops/_upsample_nearest_exact3d_backward_meta.h>
#include <ATen/ops/upsample_bicubic2d_meta.h>
#include <ATen/ops/upsample_bicubic2d_backward_meta.h>
#include <ATen/ops/upsample_bilinear2d_meta.h>
#include <ATen/ops/upsample_bilinear2d_backward_meta.h>
#include <ATen/ops/upsample_linear1d_meta.h>
#include <ATen/ops/upsample_linear1d_backward_meta.h>
#include <ATen/ops/upsample_nearest1d_meta.h>
#include <ATen/ops/upsample_nearest1d_backward_meta.h>
#include <ATen/ops/upsample_nearest2d_meta.h>
#include <ATen/ops/upsample_nearest2d_backward_meta.h>
#include <ATen/ops/upsample_nearest3d_meta.h>
#include <ATen/ops/upsample_nearest3d_backward_meta.h>
#include <ATen/ops/upsample_trilinear3d_meta.h>
#include <ATen/ops/upsample_trilinear3d_backward_meta.h>

#include <cmath>

#include "NeuronMeta.h"
#include "NeuronWindows.h"

namespace torch_neuron {
namespace {

using Scales = std::array<std::optional<double>, 3>;

enum class Mode { Nearest, NearestExact, Linear, Cubic, LinearAA, CubicAA };

const char* mode_name(Mode m) {
  switch (m) {
    case Mode::Nearest: return "upsample_nearest";
    case Mode::NearestExact: return "_upsample_nearest_exact";
    case Mode::Linear: return "upsample_linear";
    case Mode::Cubic: return "upsample_bicubic2d";
    case Mode::LinearAA: return "_upsample_bilinear2d_aa";
    case Mode::CubicAA: return "_upsample_bicubic2d_aa";
  }
  return "upsample";
}

// The taps of one dim: idx[t][o] (input position) and w[t][o] (weight; none
// for nearest; float values for every type but float64). skip: the dim is
// left as it is (antialiasing, same size).
struct Taps {
  std::vector<std::vector<int64_t>> idx;
  std::vector<std::vector<double>> w;
  bool skip = false;
};

double aa_linear(double x) {
  x = std::fabs(x);
  return x < 1.0 ? 1.0 - x : 0.0;
}

double aa_cubic(double x) {  // Keys' cubic convolution, a = -0.5
  const double a = -0.5;
  x = std::fabs(x);
  if (x < 1.0)
    return ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0;
  if (x < 2.0)
    return (((x - 5.0) * x + 8.0) * x - 4.0) * a;
  return 0.0;
}

// Antialiased taps: the filter, stretched by the scale when downsampling,
// over the input positions around each output's center, normalized. T:
// the type they are computed in (float, double for float64).
template <typename T>
Taps taps_aa(bool cubic, int64_t in, int64_t out, bool ac, std::optional<double> sc) {
  Taps t;
  if (in == out) {
    t.skip = true;
    return t;
  }
  T scale = at::native::area_pixel_compute_scale<T>(in, out, ac, sc);
  double half = cubic ? 2.0 : 1.0;
  double support = scale >= 1.0 ? half * scale : half;
  int64_t taps = static_cast<int64_t>(std::ceil(support) * 2 + 1);
  T invscale = scale >= 1.0 ? T(1) / scale : T(1);
  t.idx.assign(taps, std::vector<int64_t>(out));
  std::vector<std::vector<T>> w(taps, std::vector<T>(out, T(0)));
  for (int64_t o = 0; o < out; o++) {
    T center = scale * (o + T(0.5));
    int64_t xmin = std::max<int64_t>(static_cast<int64_t>(center - support + 0.5), 0);
    int64_t xsize = std::min<int64_t>(static_cast<int64_t>(center + support + 0.5), in) - xmin;
    xsize = std::clamp<int64_t>(xsize, 0, taps);
    T total = T(0);
    for (int64_t j = 0; j < xsize; j++) {
      T wj = static_cast<T>((cubic ? aa_cubic : aa_linear)((j + xmin - center + T(0.5)) *
                                                           invscale));
      w[j][o] = wj;
      total += wj;
    }
    for (int64_t j = 0; j < taps; j++) {
      if (total != T(0))
        w[j][o] /= total;
      t.idx[j][o] = std::min(xmin + j, in - 1);
    }
  }
  for (const auto& row : w)
    t.w.emplace_back(row.begin(), row.end());
  return t;
}

template <typename T>
Taps taps_for(Mode m, int64_t in, int64_t out, bool ac, std::optional<double> sc) {
  Taps t;
  switch (m) {
    case Mode::Nearest:
    case Mode::NearestExact:
      t.idx.assign(1, std::vector<int64_t>(out));
      for (int64_t o = 0; o < out; o++)
        t.idx[0][o] = m == Mode::Nearest ? at::native::nearest_idx(o, in, out, sc)
                                         : at::native::nearest_exact_idx(o, in, out, sc);
      return t;
    case Mode::Linear: {
      T ratio = at::native::area_pixel_compute_scale<T>(in, out, ac, sc);
      t.idx.assign(2, std::vector<int64_t>(out));
      t.w.assign(2, std::vector<double>(out));
      for (int64_t o = 0; o < out; o++) {
        T w0, w1;
        at::native::compute_source_index_and_lambda<T, T>(
            t.idx[0][o], t.idx[1][o], w0, w1, ratio, o, in, out, ac);
        t.w[0][o] = w0;
        t.w[1][o] = w1;
      }
      return t;
    }
    case Mode::Cubic: {
      T ratio = at::native::area_pixel_compute_scale<T>(in, out, ac, sc);
      t.idx.assign(4, std::vector<int64_t>(out));
      t.w.assign(4, std::vector<double>(out));
      for (int64_t o = 0; o < out; o++) {
        T real = at::native::area_pixel_compute_source_index<T>(ratio, o, ac, true);
        int64_t i0;
        T lambda, c[4];
        at::native::guard_index_and_lambda<T, T>(real, in, i0, lambda);
        at::native::get_cubic_upsample_coefficients<T>(c, lambda);
        for (int j = 0; j < 4; j++) {
          t.idx[j][o] = std::clamp<int64_t>(i0 - 1 + j, 0, in - 1);
          t.w[j][o] = c[j];
        }
      }
      return t;
    }
    case Mode::LinearAA:
    case Mode::CubicAA:
      return taps_aa<T>(m == Mode::CubicAA, in, out, ac, sc);
  }
  return t;
}

// x [B, C, *S] -> the same with dim @d interpolated by @t.
at::Tensor interp_dim(const at::Tensor& x, int64_t d, const Taps& t) {
  if (t.skip)
    return x;
  at::Device dev = x.device();
  if (t.w.empty())
    return select_along(x, d, shape_index(t.idx[0], dev));
  at::Tensor acc;
  for (size_t k = 0; k < t.idx.size(); k++) {
    at::Tensor w = shape_weights(t.w[k], dev, x.scalar_type());
    at::Tensor term = select_along(x, d, shape_index(t.idx[k], dev))
                          .mul_(along(w, x.dim(), d));
    acc = k == 0 ? term : acc.add_(term);
  }
  return acc;
}

// The transpose of interp_dim: g [.., out at d, ..] -> [.., in at d, ..].
at::Tensor interp_dim_backward(const at::Tensor& g, int64_t d, int64_t in, const Taps& t) {
  if (t.skip)
    return g;
  at::Device dev = g.device();
  std::vector<int64_t> shape(g.sizes().begin(), g.sizes().end());
  shape[d] = in;
  at::Tensor gx = at::zeros(shape, g.options());
  for (size_t k = 0; k < t.idx.size(); k++) {
    at::Tensor src = t.w.empty() ? g : g.mul(along(shape_weights(t.w[k], dev, g.scalar_type()),
                                                   g.dim(), d));
    add_along(gx, d, shape_index(t.idx[k], dev), src);
  }
  return gx;
}

bool is_nearest(Mode m) { return m == Mode::Nearest || m == Mode::NearestExact; }

// The taps of every dim, for a floating tensor of type @t.
std::vector<Taps> all_taps(Mode m, at::IntArrayRef in, at::IntArrayRef out, bool ac,
                           const Scales& sc, at::ScalarType t) {
  std::vector<Taps> taps;
  for (size_t i = 0; i < out.size(); i++)
    taps.push_back(acc_dtype(t) == at::kDouble ? taps_for<double>(m, in[i], out[i], ac, sc[i])
                                               : taps_for<float>(m, in[i], out[i], ac, sc[i]));
  return taps;
}

// The scale factors and align_corners of a kernel's parameters (after
// output_size), in their order.
struct Params {
  bool ac = false;
  Scales sc{};
};
inline void collect(Params&, size_t) {}
template <class... R>
void collect(Params& p, size_t i, bool ac, R... r) {
  p.ac = ac;
  collect(p, i, r...);
}
template <class... R>
void collect(Params& p, size_t i, std::optional<double> s, R... r) {
  p.sc[i] = s;
  collect(p, i + 1, r...);
}
template <class... P>
Params params(P... p) {
  Params r;
  collect(r, 0, p...);
  return r;
}

// Upsamples @input into @out, the result of the operator's structured meta
// (which checks the sizes and picks the memory format).
at::Tensor& upsample(const at::Tensor& input, at::IntArrayRef out_sz, Mode m, const Params& p,
                     at::Tensor& out) {
  const char* op = mode_name(m);
  TORCH_CHECK(is_neuron(input), "neuron: ", op, ": expected a neuron tensor");
  if (!is_nearest(m))
    check_float_input(input, op);
  if (input.numel() == 0)
    return out;
  int64_t nsp = static_cast<int64_t>(out_sz.size()), lead = input.dim() - nsp;
  std::vector<Taps> taps = all_taps(m, input.sizes().slice(lead), out_sz, p.ac, p.sc,
                                    input.scalar_type());
  at::Tensor y = is_nearest(m) ? input : input.to(acc_dtype(input.scalar_type()));
  for (int64_t i = nsp - 1; i >= 0; i--)
    y = interp_dim(y, lead + i, taps[i]);
  return out.copy_(y);
}

// The backward into @out (of the input's sizes, from the backward's meta).
at::Tensor& upsample_backward(const at::Tensor& grad, at::IntArrayRef out_sz,
                              at::IntArrayRef in_sz, Mode m, const Params& p, at::Tensor& out) {
  check_float_input(grad, mode_name(m));
  if (grad.numel() == 0)
    return out.zero_();
  int64_t nsp = static_cast<int64_t>(out_sz.size()), lead = grad.dim() - nsp;
  std::vector<Taps> taps = all_taps(m, in_sz.slice(lead), out_sz, p.ac, p.sc,
                                    grad.scalar_type());
  at::Tensor g = grad.to(acc_dtype(grad.scalar_type()));
  for (int64_t i = 0; i < nsp; i++)
    g = interp_dim_backward(g, lead + i, in_sz[lead + i], taps[i]);
  return out.copy_(g);
}

using SA = c10::SymIntArrayRef;

// The kernels of one upsampling operator: mode M, structured metas Meta and
// its backward's BwMeta, P the parameters after output_size (align_corners
// and the scales, or the scales alone). Functional and out=, forward
// (self, output_size, P...) and backward (grad, output_size, input_size,
// P...).
template <Mode M, class Meta, class... P>
at::Tensor up(const at::Tensor& x, SA o, P... p) {
  std::vector<int64_t> os = concrete(o);
  auto [out] = meta_results<Meta>(Form::Functional, {}, x, os, p...);
  return upsample(x, os, M, params(p...), out);
}
template <Mode M, class Meta, class... P>
at::Tensor& up_out(const at::Tensor& x, SA o, P... p, at::Tensor& out) {
  std::vector<int64_t> os = concrete(o);
  meta_results<Meta>(Form::Out, {out}, x, os, p...);
  return upsample(x, os, M, params(p...), out);
}
template <Mode M, class Meta, class... P>
at::Tensor up_bw(const at::Tensor& g, SA o, SA i, P... p) {
  std::vector<int64_t> os = concrete(o), is = concrete(i);
  auto [out] = meta_results<Meta>(Form::Functional, {}, g, os, is, p...);
  return upsample_backward(g, os, is, M, params(p...), out);
}
template <Mode M, class Meta, class... P>
at::Tensor& up_bw_out(const at::Tensor& g, SA o, SA i, P... p, at::Tensor& out) {
  std::vector<int64_t> os = concrete(o), is = concrete(i);
  meta_results<Meta>(Form::Out, {out}, g, os, is, p...);
  return upsample_backward(g, os, is, M, params(p...), out);
}

}  // namespace

// name, mode, the parameters after output_size.
#define NEURON_UPSAMPLE(name, mode, ...)                                       \
  m.impl(#name, up<Mode::mode, at::meta::structured_##name, __VA_ARGS__>);     \
  m.impl(#name ".out", up_out<Mode::mode, at::meta::structured_##name, __VA_ARGS__>); \
  m.impl(#name "_backward",                                                    \
         up_bw<Mode::mode, at::meta::structured_##name##_backward, __VA_ARGS__>); \
  m.impl(#name "_backward.grad_input",                                         \
         up_bw_out<Mode::mode, at::meta::structured_##name##_backward, __VA_ARGS__>);

using OD = std::optional<double>;
TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  NEURON_UPSAMPLE(upsample_nearest1d, Nearest, OD)
  NEURON_UPSAMPLE(upsample_nearest2d, Nearest, OD, OD)
  NEURON_UPSAMPLE(upsample_nearest3d, Nearest, OD, OD, OD)
  NEURON_UPSAMPLE(_upsample_nearest_exact1d, NearestExact, OD)
  NEURON_UPSAMPLE(_upsample_nearest_exact2d, NearestExact, OD, OD)
  NEURON_UPSAMPLE(_upsample_nearest_exact3d, NearestExact, OD, OD, OD)
  NEURON_UPSAMPLE(upsample_linear1d, Linear, bool, OD)
  NEURON_UPSAMPLE(upsample_bilinear2d, Linear, bool, OD, OD)
  NEURON_UPSAMPLE(upsample_trilinear3d, Linear, bool, OD, OD, OD)
  NEURON_UPSAMPLE(upsample_bicubic2d, Cubic, bool, OD, OD)
  NEURON_UPSAMPLE(_upsample_bilinear2d_aa, LinearAA, bool, OD, OD)
  NEURON_UPSAMPLE(_upsample_bicubic2d_aa, CubicAA, bool, OD, OD)
}

}  // namespace torch_neuron

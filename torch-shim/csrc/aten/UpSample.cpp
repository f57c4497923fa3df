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

#include <cmath>

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

// Checks of the input and output sizes, as the CPU's: the full output shape.
std::vector<int64_t> check_sizes(at::IntArrayRef input_size, at::IntArrayRef out) {
  switch (out.size()) {
    case 1: {
      auto s = at::native::upsample_1d_common_check(input_size, out);
      return {s.begin(), s.end()};
    }
    case 2: {
      auto s = at::native::upsample_2d_common_check(input_size, out);
      return {s.begin(), s.end()};
    }
    default: {
      auto s = at::native::upsample_3d_common_check(input_size, out);
      return {s.begin(), s.end()};
    }
  }
}

at::Tensor upsample(const at::Tensor& input, c10::SymIntArrayRef osize, Mode m, bool ac,
                    const Scales& sc) {
  const char* op = mode_name(m);
  TORCH_CHECK(is_neuron(input), "neuron: ", op, ": expected a neuron tensor");
  if (!is_nearest(m))
    check_float_input(input, op);
  std::vector<int64_t> out_sz = concrete(osize);
  std::vector<int64_t> full = check_sizes(input.sizes(), out_sz);
  int64_t nsp = static_cast<int64_t>(out_sz.size()), lead = input.dim() - nsp;
  TORCH_CHECK(input.numel() != 0 || input.size(0) == 0, "neuron: ", op, ": non-empty ",
              input.dim(), "D data tensor expected but got a tensor with sizes ",
              input.sizes());
  if (input.numel() == 0)
    return empty_neuron(full, input.scalar_type(), input.device());
  std::vector<Taps> taps = all_taps(m, input.sizes().slice(lead), out_sz, ac, sc,
                                    input.scalar_type());
  at::Tensor y = is_nearest(m) ? input : input.to(acc_dtype(input.scalar_type()));
  for (int64_t i = nsp - 1; i >= 0; i--)
    y = interp_dim(y, lead + i, taps[i]);
  return y.to(input.scalar_type()).contiguous(input.suggest_memory_format());
}

at::Tensor upsample_backward(const at::Tensor& grad, c10::SymIntArrayRef osize,
                             c10::SymIntArrayRef isize, Mode m, bool ac, const Scales& sc) {
  const char* op = mode_name(m);
  check_float_input(grad, op);
  std::vector<int64_t> out_sz = concrete(osize);
  std::vector<int64_t> in_sz = concrete(isize);
  std::vector<int64_t> full = check_sizes(in_sz, out_sz);
  TORCH_CHECK(grad.sizes() == at::IntArrayRef(full), "neuron: ", op, "_backward: expected "
              "grad_output of sizes ", at::IntArrayRef(full), ", got ", grad.sizes());
  int64_t nsp = static_cast<int64_t>(out_sz.size()), lead = grad.dim() - nsp;
  if (grad.numel() == 0)
    return at::zeros(in_sz, grad.options());
  std::vector<Taps> taps = all_taps(m, at::IntArrayRef(in_sz).slice(lead), out_sz, ac, sc,
                                    grad.scalar_type());
  at::Tensor g = grad.to(acc_dtype(grad.scalar_type()));
  for (int64_t i = 0; i < nsp; i++)
    g = interp_dim_backward(g, lead + i, in_sz[lead + i], taps[i]);
  return g.to(grad.scalar_type()).contiguous();
}

at::Tensor& to_out(const at::Tensor& r, at::Tensor& out) {
  resize_out(out, r.sizes());
  out.copy_(r);
  return out;
}

using SA = c10::SymIntArrayRef;
using OD = std::optional<double>;

// Nearest: (self, output_size, scales...) and backward (grad, output_size, input_size, scales...).
template <Mode M>
at::Tensor near1(const at::Tensor& x, SA o, OD s) { return upsample(x, o, M, false, {s}); }
template <Mode M>
at::Tensor& near1_out(const at::Tensor& x, SA o, OD s, at::Tensor& r) {
  return to_out(near1<M>(x, o, s), r);
}
template <Mode M>
at::Tensor near2(const at::Tensor& x, SA o, OD h, OD w) {
  return upsample(x, o, M, false, {h, w});
}
template <Mode M>
at::Tensor& near2_out(const at::Tensor& x, SA o, OD h, OD w, at::Tensor& r) {
  return to_out(near2<M>(x, o, h, w), r);
}
template <Mode M>
at::Tensor near3(const at::Tensor& x, SA o, OD d, OD h, OD w) {
  return upsample(x, o, M, false, {d, h, w});
}
template <Mode M>
at::Tensor& near3_out(const at::Tensor& x, SA o, OD d, OD h, OD w, at::Tensor& r) {
  return to_out(near3<M>(x, o, d, h, w), r);
}
template <Mode M>
at::Tensor near1_bw(const at::Tensor& g, SA o, SA i, OD s) {
  return upsample_backward(g, o, i, M, false, {s});
}
template <Mode M>
at::Tensor& near1_bw_out(const at::Tensor& g, SA o, SA i, OD s, at::Tensor& r) {
  return to_out(near1_bw<M>(g, o, i, s), r);
}
template <Mode M>
at::Tensor near2_bw(const at::Tensor& g, SA o, SA i, OD h, OD w) {
  return upsample_backward(g, o, i, M, false, {h, w});
}
template <Mode M>
at::Tensor& near2_bw_out(const at::Tensor& g, SA o, SA i, OD h, OD w, at::Tensor& r) {
  return to_out(near2_bw<M>(g, o, i, h, w), r);
}
template <Mode M>
at::Tensor near3_bw(const at::Tensor& g, SA o, SA i, OD d, OD h, OD w) {
  return upsample_backward(g, o, i, M, false, {d, h, w});
}
template <Mode M>
at::Tensor& near3_bw_out(const at::Tensor& g, SA o, SA i, OD d, OD h, OD w, at::Tensor& r) {
  return to_out(near3_bw<M>(g, o, i, d, h, w), r);
}

// Interpolating: (self, output_size, align_corners, scales...).
template <Mode M>
at::Tensor lin1(const at::Tensor& x, SA o, bool ac, OD s) { return upsample(x, o, M, ac, {s}); }
template <Mode M>
at::Tensor& lin1_out(const at::Tensor& x, SA o, bool ac, OD s, at::Tensor& r) {
  return to_out(lin1<M>(x, o, ac, s), r);
}
template <Mode M>
at::Tensor lin2(const at::Tensor& x, SA o, bool ac, OD h, OD w) {
  return upsample(x, o, M, ac, {h, w});
}
template <Mode M>
at::Tensor& lin2_out(const at::Tensor& x, SA o, bool ac, OD h, OD w, at::Tensor& r) {
  return to_out(lin2<M>(x, o, ac, h, w), r);
}
template <Mode M>
at::Tensor lin3(const at::Tensor& x, SA o, bool ac, OD d, OD h, OD w) {
  return upsample(x, o, M, ac, {d, h, w});
}
template <Mode M>
at::Tensor& lin3_out(const at::Tensor& x, SA o, bool ac, OD d, OD h, OD w, at::Tensor& r) {
  return to_out(lin3<M>(x, o, ac, d, h, w), r);
}
template <Mode M>
at::Tensor lin1_bw(const at::Tensor& g, SA o, SA i, bool ac, OD s) {
  return upsample_backward(g, o, i, M, ac, {s});
}
template <Mode M>
at::Tensor& lin1_bw_out(const at::Tensor& g, SA o, SA i, bool ac, OD s, at::Tensor& r) {
  return to_out(lin1_bw<M>(g, o, i, ac, s), r);
}
template <Mode M>
at::Tensor lin2_bw(const at::Tensor& g, SA o, SA i, bool ac, OD h, OD w) {
  return upsample_backward(g, o, i, M, ac, {h, w});
}
template <Mode M>
at::Tensor& lin2_bw_out(const at::Tensor& g, SA o, SA i, bool ac, OD h, OD w, at::Tensor& r) {
  return to_out(lin2_bw<M>(g, o, i, ac, h, w), r);
}
template <Mode M>
at::Tensor lin3_bw(const at::Tensor& g, SA o, SA i, bool ac, OD d, OD h, OD w) {
  return upsample_backward(g, o, i, M, ac, {d, h, w});
}
template <Mode M>
at::Tensor& lin3_bw_out(const at::Tensor& g, SA o, SA i, bool ac, OD d, OD h, OD w,
                        at::Tensor& r) {
  return to_out(lin3_bw<M>(g, o, i, ac, d, h, w), r);
}

}  // namespace

#define NEURON_UPSAMPLE(name, kind, mode)                                      \
  m.impl(name, kind<Mode::mode>);                                              \
  m.impl(name ".out", kind##_out<Mode::mode>);                                 \
  m.impl(name "_backward", kind##_bw<Mode::mode>);                             \
  m.impl(name "_backward.grad_input", kind##_bw_out<Mode::mode>);

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  NEURON_UPSAMPLE("upsample_nearest1d", near1, Nearest)
  NEURON_UPSAMPLE("upsample_nearest2d", near2, Nearest)
  NEURON_UPSAMPLE("upsample_nearest3d", near3, Nearest)
  NEURON_UPSAMPLE("_upsample_nearest_exact1d", near1, NearestExact)
  NEURON_UPSAMPLE("_upsample_nearest_exact2d", near2, NearestExact)
  NEURON_UPSAMPLE("_upsample_nearest_exact3d", near3, NearestExact)
  NEURON_UPSAMPLE("upsample_linear1d", lin1, Linear)
  NEURON_UPSAMPLE("upsample_bilinear2d", lin2, Linear)
  NEURON_UPSAMPLE("upsample_trilinear3d", lin3, Linear)
  NEURON_UPSAMPLE("upsample_bicubic2d", lin2, Cubic)
  NEURON_UPSAMPLE("_upsample_bilinear2d_aa", lin2, LinearAA)
  NEURON_UPSAMPLE("_upsample_bicubic2d_aa", lin2, CubicAA)
}

}  // namespace torch_neuron

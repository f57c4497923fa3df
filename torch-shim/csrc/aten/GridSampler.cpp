// SPDX-License-Identifier: MIT
// grid_sampler_2d on the card (nn.functional.grid_sample, 4-d): bilinear,
// nearest and bicubic interpolation, zeros/border/reflection padding, align_corners,
// forward and backward. The sampling positions depend on the grid's values,
// so all of it runs on the card as ATen operators on neuron tensors: the
// grid is unnormalized to pixel coordinates (the CPU kernel's formulas),
// border-clipped or reflected, the neighbours' flat positions and weights
// are computed elementwise, the input is gathered at them (an out-of-bounds
// neighbour reads 0 through a select, never 0 * value), and the weighted
// values are summed in the CPU's order (nw, ne, sw, se; bicubic: rows of
// 4, each neighbour padded on its own, Keys' weights). The backward
// scatter-adds the weighted gradient into the input and differentiates the
// weights (times the clip/reflection factor) for the grid.
#include <ATen/native/GridSamplerUtils.h>

#include "NeuronWindows.h"

namespace torch_neuron {
namespace {

using at::native::GridSamplerInterpolation;
using at::native::GridSamplerPadding;

// A coordinate in pixels and d(pixel)/d(grid value).
struct Coord {
  at::Tensor v, mult;
};

// reflect @x into [lo2 / 2, hi2 / 2] (PyTorch's reflect_coordinates), with
// the sign of its derivative.
Coord reflect(const at::Tensor& x, int64_t lo2, int64_t hi2) {
  if (lo2 == hi2)
    return {at::zeros_like(x), at::zeros_like(x)};
  double mn = lo2 / 2.0, span = (hi2 - lo2) / 2.0;
  at::Tensor d = x - mn;
  at::Tensor sign = 1.0 - d.lt(0).to(d.scalar_type()) * 2.0;
  at::Tensor a = d.abs();
  at::Tensor extra = at::fmod(a, span);
  at::Tensor flips = at::floor(a / span);
  at::Tensor even = at::fmod(flips, 2).eq(0);
  return {at::where(even, extra + mn, (span + mn) - extra), at::where(even, sign, -sign)};
}

// Clip @c to [0, size - 1]; the derivative is 0 where it clipped.
Coord clip(const Coord& c, int64_t size) {
  at::Tensor inside = c.v.gt(0).logical_and(c.v.lt(static_cast<double>(size - 1)));
  return {c.v.clamp(0.0, static_cast<double>(size - 1)), at::where(inside, c.mult, 0.0)};
}

// A pixel coordinate after the padding mode: clipped, or reflected and clipped.
Coord pad_coord(const Coord& c, int64_t size, int64_t padding, bool ac) {
  if (padding == static_cast<int64_t>(GridSamplerPadding::Border))
    return clip(c, size);
  if (padding == static_cast<int64_t>(GridSamplerPadding::Reflection)) {
    Coord r = ac ? reflect(c.v, 0, 2 * (size - 1)) : reflect(c.v, -1, 2 * size - 1);
    return clip({r.v, r.mult * c.mult}, size);
  }
  return c;
}

// grid values [N, P] -> source pixel coordinates along a dim of @size.
Coord source(const at::Tensor& g, int64_t size, int64_t padding, bool ac) {
  double scale = ac ? (size - 1) / 2.0 : size / 2.0;
  at::Tensor v = ac ? (g + 1.0) * scale : (g + 1.0) * scale - 0.5;
  return pad_coord({v, at::full_like(v, scale)}, size, padding, ac);
}

struct Setup {
  int64_t N, C, H, W, Ho, Wo, P;
  Coord x, y;
  int64_t padding;
  bool ac;
  at::ScalarType acc;  // the type computed in: acc_dtype() of the input's
};

constexpr int64_t kBicubic = static_cast<int64_t>(GridSamplerInterpolation::Bicubic);

Setup setup(const at::Tensor& input, const at::Tensor& grid, int64_t interp,
            int64_t padding, bool ac, const char* op) {
  check_float_input(input, op);
  check_device(input, grid);
  at::native::check_grid_sampler_common(input, grid);
  at::native::check_grid_sampler_2d(input, grid);
  TORCH_CHECK(interp >= 0 && interp <= 2, "neuron: ", op, ": unknown interpolation mode ",
              interp);
  TORCH_CHECK(padding >= 0 && padding <= 2, "neuron: ", op, ": unknown padding mode ", padding);
  Setup s{input.size(0), input.size(1), input.size(2), input.size(3), grid.size(1),
          grid.size(2), grid.size(1) * grid.size(2), {}, {}, padding, ac,
          acc_dtype(input.scalar_type())};
  at::Tensor g = grid.to(s.acc).reshape({s.N, s.P, 2});
  // bicubic pads each of its 16 neighbours instead of the sampling point
  int64_t pad = interp == kBicubic ? 0 : padding;
  s.x = source(g.select(2, 0), s.W, pad, ac);
  s.y = source(g.select(2, 1), s.H, pad, ac);
  return s;
}

// One neighbour: flat position (0 where outside) and whether it is inside.
struct Tap {
  at::Tensor idx, inside, w;
};

Tap tap(const Setup& s, const at::Tensor& xi, const at::Tensor& yi, const at::Tensor& w) {
  at::Tensor inside = xi.ge(0).logical_and(xi.lt(static_cast<double>(s.W)))
                          .logical_and(yi.ge(0)).logical_and(yi.lt(static_cast<double>(s.H)));
  at::Tensor flat = at::where(inside, yi * static_cast<double>(s.W) + xi, 0.0).to(at::kLong);
  return {flat, inside, w};
}

// The neighbours of every sample: 4 (bilinear, nw ne sw se) or 1 (nearest).
std::vector<Tap> taps(const Setup& s, int64_t interp) {
  if (interp == static_cast<int64_t>(GridSamplerInterpolation::Nearest))
    return {tap(s, at::round(s.x.v), at::round(s.y.v), at::Tensor())};
  at::Tensor x0 = at::floor(s.x.v), y0 = at::floor(s.y.v), x1 = x0 + 1, y1 = y0 + 1;
  at::Tensor ex = x1 - s.x.v, wx = s.x.v - x0, ey = y1 - s.y.v, wy = s.y.v - y0;
  return {tap(s, x0, y0, ex * ey), tap(s, x1, y0, wx * ey), tap(s, x0, y1, ex * wy),
          tap(s, x1, y1, wx * wy)};
}

// input [N, C, H, W] at the tap: [N, C, P] (0 outside).
at::Tensor gather(const at::Tensor& planes, const Setup& s, const Tap& t) {
  at::Tensor v = planes.gather(2, t.idx.unsqueeze(1).expand({s.N, s.C, s.P}));
  return at::where(t.inside.unsqueeze(1), v, 0.0);
}

// Keys' cubic convolution (A = -0.75) as the CPU's UpSample.h computes it:
// the weights of the neighbours at -1, 0, 1, 2 for fractions t, or (@grad)
// their derivatives in t.
std::array<at::Tensor, 4> cubic(const at::Tensor& t, bool grad) {
  const double A = -0.75;
  auto f1 = [A](const at::Tensor& x) { return (x * (A + 2) - (A + 3)) * x * x + 1.0; };
  auto f2 = [A](const at::Tensor& x) { return ((x * A - 5 * A) * x + 8 * A) * x - 4 * A; };
  auto d1 = [A](const at::Tensor& x) { return (x * (3 * (A + 2)) - 2 * (A + 3)) * x; };
  auto d2 = [A](const at::Tensor& x) { return (x * (3 * A) - 10 * A) * x + 8 * A; };
  at::Tensor u = 1.0 - t;
  if (grad)
    return {d2(t + 1.0), d1(t), -d1(u), -d2(u + 1.0)};
  return {f2(t + 1.0), f1(t), f1(u), f2(u + 1.0)};
}

// The 16 neighbours of bicubic sampling, row i (y) major, each padded on its own.
std::vector<Tap> bicubic_taps(const Setup& s) {
  at::Tensor x0 = at::floor(s.x.v), y0 = at::floor(s.y.v);
  std::vector<Tap> ts;
  for (int i = 0; i < 4; i++) {
    at::Tensor yi = y0 + static_cast<double>(i - 1);
    yi = pad_coord({yi, yi}, s.H, s.padding, s.ac).v;
    for (int a = 0; a < 4; a++) {
      at::Tensor xa = x0 + static_cast<double>(a - 1);
      ts.push_back(tap(s, pad_coord({xa, xa}, s.W, s.padding, s.ac).v, yi, at::Tensor()));
    }
  }
  return ts;
}

at::Tensor bicubic_forward(const at::Tensor& planes, const Setup& s) {
  std::vector<Tap> ts = bicubic_taps(s);
  auto cx = cubic(s.x.v - at::floor(s.x.v), false);
  auto cy = cubic(s.y.v - at::floor(s.y.v), false);
  at::Tensor out;
  for (int i = 0; i < 4; i++) {
    at::Tensor row;
    for (int a = 0; a < 4; a++) {
      at::Tensor v = gather(planes, s, ts[i * 4 + a]) * cx[a].unsqueeze(1);
      row = row.defined() ? row.add_(v) : v;
    }
    row.mul_(cy[i].unsqueeze(1));
    out = out.defined() ? out.add_(row) : row;
  }
  return out;
}

// The input's and the grid's gradients of bicubic sampling (either may be skipped).
void bicubic_backward(const at::Tensor& g, const at::Tensor& planes, const Setup& s,
                      at::Tensor* gin, at::Tensor* ggrid) {
  std::vector<Tap> ts = bicubic_taps(s);
  at::Tensor tx = s.x.v - at::floor(s.x.v), ty = s.y.v - at::floor(s.y.v);
  auto cx = cubic(tx, false), cy = cubic(ty, false);
  auto dx = cubic(tx, true), dy = cubic(ty, true);
  at::Tensor gx, gy;
  for (int i = 0; i < 4; i++)
    for (int a = 0; a < 4; a++) {
      const Tap& t = ts[i * 4 + a];
      if (gin) {
        at::Tensor src = at::where(t.inside.unsqueeze(1), g * (cx[a] * cy[i]).unsqueeze(1), 0.0);
        gin->scatter_add_(2, t.idx.unsqueeze(1).expand({s.N, s.C, s.P}), src);
      }
      if (ggrid) {
        at::Tensor vg = (gather(planes, s, t) * g).sum(1);
        at::Tensor px = vg * dx[a] * cy[i], py = vg * cx[a] * dy[i];
        gx = gx.defined() ? gx.add_(px) : px;
        gy = gy.defined() ? gy.add_(py) : py;
      }
    }
  if (ggrid)
    *ggrid = at::stack({gx * s.x.mult, gy * s.y.mult}, 2);
}

at::Tensor grid_sampler_2d(const at::Tensor& input, const at::Tensor& grid, int64_t interp,
                           int64_t padding, bool ac) {
  Setup s = setup(input, grid, interp, padding, ac, "grid_sampler_2d");
  if (s.N * s.C * s.P == 0)
    return at::zeros({s.N, s.C, s.Ho, s.Wo}, input.options());
  at::Tensor planes = input.to(s.acc).reshape({s.N, s.C, s.H * s.W});
  if (interp == kBicubic)
    return bicubic_forward(planes, s).view({s.N, s.C, s.Ho, s.Wo}).to(input.scalar_type());
  at::Tensor out;
  for (const Tap& t : taps(s, interp)) {
    at::Tensor v = gather(planes, s, t);
    if (t.w.defined())
      v = v * t.w.unsqueeze(1);
    out = out.defined() ? out.add_(v) : v;
  }
  return out.view({s.N, s.C, s.Ho, s.Wo}).to(input.scalar_type());
}

std::tuple<at::Tensor, at::Tensor> grid_sampler_2d_backward(
    const at::Tensor& grad, const at::Tensor& input, const at::Tensor& grid, int64_t interp,
    int64_t padding, bool ac, std::array<bool, 2> mask) {
  Setup s = setup(input, grid, interp, padding, ac, "grid_sampler_2d_backward");
  check_device(input, grad);
  TORCH_CHECK(grad.dim() == 4 && grad.size(0) == s.N && grad.size(1) == s.C &&
              grad.size(2) == s.Ho && grad.size(3) == s.Wo, "neuron: grid_sampler_2d_backward: "
              "grad_output ", grad.sizes(), " does not match the output [", s.N, ", ", s.C,
              ", ", s.Ho, ", ", s.Wo, "]");
  at::Tensor gi, gg;
  at::Tensor g = grad.to(s.acc).reshape({s.N, s.C, s.P});
  if (interp == kBicubic) {
    at::Tensor acc = at::zeros({s.N, s.C, s.H * s.W}, input.options().dtype(s.acc));
    if (s.N * s.C * s.P == 0) {
      gg = mask[1] ? at::zeros(grid.sizes(), grid.options()) : at::Tensor();
    } else {
      at::Tensor planes = input.to(s.acc).reshape({s.N, s.C, s.H * s.W});
      bicubic_backward(g, planes, s, mask[0] ? &acc : nullptr, mask[1] ? &gg : nullptr);
      if (mask[1])
        gg = gg.view({s.N, s.Ho, s.Wo, 2}).to(grid.scalar_type());
    }
    if (mask[0])
      gi = acc.view(input.sizes()).to(input.scalar_type());
    return {gi, gg};
  }
  std::vector<Tap> ts = taps(s, interp);
  if (mask[0]) {
    at::Tensor acc = at::zeros({s.N, s.C, s.H * s.W}, input.options().dtype(s.acc));
    if (s.N * s.C * s.P != 0)
      for (const Tap& t : ts) {
        at::Tensor src = t.w.defined() ? g * t.w.unsqueeze(1) : g;
        src = at::where(t.inside.unsqueeze(1), src, 0.0);
        acc.scatter_add_(2, t.idx.unsqueeze(1).expand({s.N, s.C, s.P}), src);
      }
    gi = acc.view(input.sizes()).to(input.scalar_type());
  }
  if (mask[1]) {
    if (interp == static_cast<int64_t>(GridSamplerInterpolation::Nearest) ||
        s.N * s.C * s.P == 0) {
      gg = at::zeros(grid.sizes(), grid.options());
    } else {
      at::Tensor planes = input.to(s.acc).reshape({s.N, s.C, s.H * s.W});
      // sum over channels of value * grad at each tap: [N, P]
      std::vector<at::Tensor> vg;
      for (const Tap& t : ts)
        vg.push_back((gather(planes, s, t) * g).sum(1));
      at::Tensor x0 = at::floor(s.x.v), y0 = at::floor(s.y.v);
      at::Tensor ex = (x0 + 1) - s.x.v, wx = s.x.v - x0, ey = (y0 + 1) - s.y.v,
                 wy = s.y.v - y0;
      at::Tensor gx = (vg[1] - vg[0]) * ey + (vg[3] - vg[2]) * wy;
      at::Tensor gy = (vg[2] - vg[0]) * ex + (vg[3] - vg[1]) * wx;
      gg = at::stack({gx * s.x.mult, gy * s.y.mult}, 2)
               .view({s.N, s.Ho, s.Wo, 2}).to(grid.scalar_type());
    }
  }
  return {gi, gg};
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("grid_sampler_2d", grid_sampler_2d);
  m.impl("grid_sampler_2d_backward", grid_sampler_2d_backward);
}

}  // namespace torch_neuron

// SPDX-License-Identifier: MIT
// grid_sampler_3d on the card (nn.functional.grid_sample, 5-d): trilinear
// and nearest interpolation, zeros/border/reflection padding,
// align_corners, forward and backward, as ATen operators on neuron tensors
// (the positions depend on the grid's values).
//
// The CPU computes 3-d sampling with its scalar formulas (GridSampler.h),
// not the vectorized ones of the 2-d kernel that GridSampler.cpp
// follows: unnormalizing is ((g + 1) / 2) * (size - 1) or
// ((g + 1) * size - 1) / 2, a reflection ends (span - extra) + min, and
// clipping is min(size - 1, max(x, 0)), which takes a NaN coordinate to
// size - 1 in the forward and keeps it in the backward. They are followed
// here operation for operation, so a nearest sample lands on the CPU's
// voxel. The eight neighbours are summed in the CPU's order (x fastest,
// then y, then z: tnw, tne, tsw, tse, bnw, bne, bsw, bse), each weight
// the product of its three factors in x, y, z order, and an outside
// neighbour adds nothing (not 0 times a weight, which may be NaN).
#include <ATen/native/GridSamplerUtils.h>

#include "NeuronWindows.h"

namespace torch_neuron {
namespace {

using at::native::GridSamplerInterpolation;
using at::native::GridSamplerPadding;
constexpr int64_t kBorder = static_cast<int64_t>(GridSamplerPadding::Border);
constexpr int64_t kReflection = static_cast<int64_t>(GridSamplerPadding::Reflection);
constexpr int64_t kNearest = static_cast<int64_t>(GridSamplerInterpolation::Nearest);

// A voxel coordinate and d(coordinate)/d(grid value).
struct Coord {
  at::Tensor v, mult;
};

// min(size - 1, max(x, 0)) as std::min/std::max evaluate it (NaN -> size
// - 1); for the backward (@grad) as clip_coordinates_set_grad: 0 at or
// below 0, size - 1 at or above it, x itself (NaN too) between, and the
// derivative 1 only there.
Coord clip(const Coord& c, int64_t size, bool grad) {
  double hi = static_cast<double>(size - 1);
  if (!grad) {
    at::Tensor lo = at::where(c.v.lt(0), 0.0, c.v);
    return {at::where(lo.lt(hi), lo, hi), c.mult};
  }
  at::Tensor below = c.v.le(0), above = c.v.ge(hi);
  at::Tensor v = at::where(below, 0.0, at::where(above, hi, c.v));
  return {v, at::where(below.logical_or(above), 0.0, c.mult)};
}

// reflect_coordinates(_set_grad): @x into [lo2 / 2, hi2 / 2].
Coord reflect(const Coord& c, int64_t lo2, int64_t hi2) {
  if (lo2 == hi2)
    return {at::zeros_like(c.v), at::zeros_like(c.v)};
  double mn = lo2 / 2.0, span = (hi2 - lo2) / 2.0;
  at::Tensor d = c.v - mn;
  at::Tensor sign = at::where(d.lt(0), -1.0, 1.0);
  at::Tensor a = d.abs();
  at::Tensor extra = at::fmod(a, span);
  at::Tensor even = at::fmod(at::floor(a / span), 2).eq(0);
  return {at::where(even, extra + mn, (span - extra) + mn),
          at::where(even, sign, -sign) * c.mult};
}

// A grid value [N, P] -> voxel coordinate along a dim of @size.
Coord source(const at::Tensor& g, int64_t size, int64_t padding, bool ac, bool grad) {
  at::Tensor v = ac ? ((g + 1.0) / 2.0) * static_cast<double>(size - 1)
                    : ((g + 1.0) * static_cast<double>(size) - 1.0) / 2.0;
  Coord c{v, at::full_like(v, ac ? (size - 1) / 2.0 : size / 2.0)};
  if (padding == kBorder)
    return clip(c, size, grad);
  if (padding == kReflection)
    return clip(ac ? reflect(c, 0, 2 * (size - 1)) : reflect(c, -1, 2 * size - 1), size, grad);
  return c;
}

struct Setup {
  int64_t N, C, D, H, W, P;
  std::array<Coord, 3> c;  // x (along W), y (H), z (D)
  std::array<int64_t, 3> size;
  at::ScalarType acc;  // the type computed in: acc_dtype() of the input's
};

Setup setup(const at::Tensor& input, const at::Tensor& grid, int64_t interp,
            int64_t padding, bool ac, bool grad, const char* op) {
  check_float_input(input, op);
  check_device(input, grid);
  at::native::check_grid_sampler_common(input, grid);
  at::native::check_grid_sampler_3d(input, grid, interp);
  TORCH_CHECK(interp >= 0 && interp <= 1, "neuron: ", op, ": unknown interpolation mode ",
              interp);
  TORCH_CHECK(padding >= 0 && padding <= 2, "neuron: ", op, ": unknown padding mode ", padding);
  Setup s{input.size(0), input.size(1), input.size(2), input.size(3), input.size(4),
          grid.size(1) * grid.size(2) * grid.size(3), {}, {},
          acc_dtype(input.scalar_type())};
  s.size = {s.W, s.H, s.D};
  at::Tensor g = grid.to(s.acc).reshape({s.N, s.P, 3});
  for (int d = 0; d < 3; d++)
    s.c[d] = source(g.select(2, d), s.size[d], padding, ac, grad);
  return s;
}

// One neighbour: its flat position (0 where outside), whether it is inside,
// its weight and, per dim, its factor of the weight.
struct Tap {
  at::Tensor idx, inside, w;
  std::array<at::Tensor, 3> f;
};

Tap tap(const Setup& s, const std::array<at::Tensor, 3>& pos) {
  at::Tensor inside;
  for (int d = 0; d < 3; d++) {
    at::Tensor in = pos[d].ge(0).logical_and(pos[d].lt(static_cast<double>(s.size[d])));
    inside = inside.defined() ? inside.logical_and(in) : in;
  }
  std::array<at::Tensor, 3> i;
  for (int d = 0; d < 3; d++)
    i[d] = at::where(inside, pos[d], 0.0).to(at::kLong);
  return {(i[2] * s.H + i[1]) * s.W + i[0], inside, at::Tensor(), {}};
}

// The neighbours of every sample: 8 (trilinear, in the CPU's order) or 1.
std::vector<Tap> taps(const Setup& s, int64_t interp) {
  if (interp == kNearest)
    return {tap(s, {at::round(s.c[0].v), at::round(s.c[1].v), at::round(s.c[2].v)})};
  std::array<at::Tensor, 3> lo, e, w;
  for (int d = 0; d < 3; d++) {
    lo[d] = at::floor(s.c[d].v);
    e[d] = (lo[d] + 1.0) - s.c[d].v;
    w[d] = s.c[d].v - lo[d];
  }
  std::vector<Tap> ts;
  for (int k = 0; k < 8; k++) {
    std::array<at::Tensor, 3> pos, f;
    for (int d = 0; d < 3; d++) {
      bool hi = (k >> d) & 1;
      pos[d] = hi ? lo[d] + 1.0 : lo[d];
      f[d] = hi ? w[d] : e[d];
    }
    Tap t = tap(s, pos);
    t.f = f;
    t.w = (f[0] * f[1]) * f[2];
    ts.push_back(t);
  }
  return ts;
}

// input [N, C, D*H*W] at the tap: [N, C, P].
at::Tensor gather(const at::Tensor& vox, const Setup& s, const Tap& t) {
  return vox.gather(2, t.idx.unsqueeze(1).expand({s.N, s.C, s.P}));
}

at::Tensor grid_sampler_3d(const at::Tensor& input, const at::Tensor& grid, int64_t interp,
                           int64_t padding, bool ac) {
  Setup s = setup(input, grid, interp, padding, ac, false, "grid_sampler_3d");
  std::vector<int64_t> shape{s.N, s.C, grid.size(1), grid.size(2), grid.size(3)};
  if (s.N * s.C * s.P == 0)
    return at::zeros(shape, input.options());
  at::Tensor vox = input.to(s.acc).reshape({s.N, s.C, s.D * s.H * s.W});
  at::Tensor out;
  for (const Tap& t : taps(s, interp)) {
    at::Tensor v = gather(vox, s, t);
    if (t.w.defined())
      v = v * t.w.unsqueeze(1);
    v = at::where(t.inside.unsqueeze(1), v, 0.0);
    out = out.defined() ? out.add_(v) : v;
  }
  return out.view(shape).to(input.scalar_type());
}

std::tuple<at::Tensor, at::Tensor> grid_sampler_3d_backward(
    const at::Tensor& grad, const at::Tensor& input, const at::Tensor& grid, int64_t interp,
    int64_t padding, bool ac, std::array<bool, 2> mask) {
  Setup s = setup(input, grid, interp, padding, ac, true, "grid_sampler_3d_backward");
  check_device(input, grad);
  TORCH_CHECK(grad.dim() == 5 && grad.size(0) == s.N && grad.size(1) == s.C &&
              grad.size(2) == grid.size(1) && grad.size(3) == grid.size(2) &&
              grad.size(4) == grid.size(3), "neuron: grid_sampler_3d_backward: grad_output ",
              grad.sizes(), " does not match the output [", s.N, ", ", s.C, ", ",
              grid.size(1), ", ", grid.size(2), ", ", grid.size(3), "]");
  at::Tensor gi, gg;
  bool empty = s.N * s.C * s.P == 0;
  std::vector<Tap> ts = empty ? std::vector<Tap>() : taps(s, interp);
  at::Tensor g = grad.to(s.acc).reshape({s.N, s.C, s.P});
  if (mask[0]) {
    at::Tensor acc = at::zeros({s.N, s.C, s.D * s.H * s.W}, input.options().dtype(s.acc));
    for (const Tap& t : ts) {
      at::Tensor src = t.w.defined() ? g * t.w.unsqueeze(1) : g;
      src = at::where(t.inside.unsqueeze(1), src, 0.0);
      acc.scatter_add_(2, t.idx.unsqueeze(1).expand({s.N, s.C, s.P}), src);
    }
    gi = acc.view(input.sizes()).to(input.scalar_type());
  }
  if (mask[1]) {
    if (interp == kNearest || empty) {
      gg = at::zeros(grid.sizes(), grid.options());
    } else {
      at::Tensor vox = input.to(s.acc).reshape({s.N, s.C, s.D * s.H * s.W});
      std::array<at::Tensor, 3> gc;
      for (int k = 0; k < 8; k++) {
        const Tap& t = ts[k];
        // sum over channels of value * grad at the tap: [N, P]
        at::Tensor vg = at::where(t.inside, (gather(vox, s, t) * g).sum(1), 0.0);
        for (int d = 0; d < 3; d++) {
          // d(weight)/d(coordinate d): the other two factors, signed
          at::Tensor part = vg * (t.f[(d + 1) % 3] * t.f[(d + 2) % 3]);
          if (!((k >> d) & 1))
            part = part.neg();
          gc[d] = gc[d].defined() ? gc[d].add_(part) : part;
        }
      }
      gg = at::stack({gc[0] * s.c[0].mult, gc[1] * s.c[1].mult, gc[2] * s.c[2].mult}, 2)
               .view(grid.sizes()).to(grid.scalar_type());
    }
  }
  return {gi, gg};
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("grid_sampler_3d", grid_sampler_3d);
  m.impl("grid_sampler_3d_backward", grid_sampler_3d_backward);
}

}  // namespace torch_neuron

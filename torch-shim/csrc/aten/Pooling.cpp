// SPDX-License-Identifier: MIT
// 2-d and 3-d pooling on the card (1-d pooling reaches these through 2-d):
// max_pool{2,3}d_with_indices, avg_pool{2,3}d, _adaptive_avg_pool{2,3}d,
// adaptive_max_pool{2,3}d, and their backward.
//
// Fixed windows: the padded input's window at each kernel offset (a strided
// view) is copied into the last dim of a [B, C, *out, prod(kernel)] buffer,
// which one REDUCE turns into the max (and ARGMAX) or the sum. Max pooling
// pads with -inf; its indices are PyTorch's (flat index into the input
// plane, the first maximum, the last NaN, and for a window of only -inf its
// first real element), found by gathering from the windows of a table of
// flat positions. Average pooling divides by the window counts, themselves
// sums of the windows of a 0/1 table (count_include_pad, ceil_mode) or by
// divisor_override. Adaptive pooling gathers its variable windows through a
// table of PyTorch's start/end positions (padded with the window's last
// element, masked to 0 for the average, so an inf stays in its window) and
// reduces them. The backward passes scatter-add (max, adaptive average) or
// add windows back (average). The operators ATen has structured (all but
// max_pool3d_with_indices and the adaptive averages) take their results --
// checks, shape, memory format, out= rules -- from ATen's metas, the values
// computed here copied into them.
#include <ATen/native/AdaptivePooling.h>
#include <ATen/native/Pool.h>
#include <ATen/ops/adaptive_max_pool2d_backward_meta.h>
#include <ATen/ops/adaptive_max_pool2d_meta.h>
#include <ATen/ops/adaptive_max_pool3d_backward_meta.h>
#include <ATen/ops/adaptive_max_pool3d_meta.h>
#include <ATen/ops/avg_pool2d_backward_meta.h>
#include <ATen/ops/avg_pool2d_meta.h>
#include <ATen/ops/avg_pool3d_backward_meta.h>
#include <ATen/ops/avg_pool3d_meta.h>
#include <ATen/ops/max_pool2d_with_indices_backward_meta.h>
#include <ATen/ops/max_pool2d_with_indices_meta.h>

#include "NeuronMeta.h"
#include "NeuronWindows.h"

namespace torch_neuron {
namespace {

int64_t pick(at::IntArrayRef v, size_t i, int64_t dflt) {
  if (v.empty())
    return dflt;
  return v.size() == 1 ? v[0] : v[i];
}

// The windows of an n-d pooling (n = 2 or 3).
struct Win {
  int n;
  std::vector<int64_t> k, s, p, d, in, out;
  int64_t hi(int i) const {  // padding after: ceil_mode's last window may pass it
    int64_t need = (out[i] - 1) * s[i] + d[i] * (k[i] - 1) + 1;
    return std::max(p[i], need - in[i] - p[i]);
  }
  std::vector<int64_t> his() const {
    std::vector<int64_t> h;
    for (int i = 0; i < n; i++)
      h.push_back(hi(i));
    return h;
  }
  int64_t kk() const { return numel_of(k); }
};

Win window_params(const at::Tensor& x, int n, at::IntArrayRef kernel, at::IntArrayRef stride,
                  at::IntArrayRef padding, at::IntArrayRef dilation, bool ceil_mode,
                  const char* op) {
  auto one_or_n = [n](at::IntArrayRef v, bool may_be_empty) {
    return (may_be_empty && v.empty()) || v.size() == 1 || v.size() == static_cast<size_t>(n);
  };
  const char* tuple = n == 2 ? "a tuple of two ints" : "a tuple of three ints";
  TORCH_CHECK(one_or_n(kernel, false), op, ": kernel_size must either be a single int, or ",
              tuple);
  TORCH_CHECK(one_or_n(stride, true), op, ": stride must either be omitted, a single int, "
              "or ", tuple);
  TORCH_CHECK(one_or_n(padding, false), op, ": padding must either be a single int, or ",
              tuple);
  TORCH_CHECK(one_or_n(dilation, false), op, ": dilation must be either a single int, or ",
              tuple);
  Win w;
  w.n = n;
  for (int i = 0; i < n; i++) {
    w.k.push_back(pick(kernel, i, 1));
    w.s.push_back(pick(stride, i, w.k[i]));
    w.p.push_back(pick(padding, i, 0));
    w.d.push_back(pick(dilation, i, 1));
    w.in.push_back(x.size(x.dim() - n + i));
    TORCH_CHECK(w.k[i] > 0 && w.s[i] > 0 && w.d[i] > 0, op, ": kernel size, stride "
                "and dilation must be greater than zero");
    w.out.push_back(at::native::pooling_output_shape<int64_t>(w.in[i], w.k[i], w.p[i],
                                                              w.s[i], w.d[i], ceil_mode));
  }
  if (n == 2)
    at::native::pool2d_shape_check(x, w.k[0], w.k[1], w.s[0], w.s[1], w.p[0], w.p[1],
                                   w.d[0], w.d[1], x.size(-3), w.in[0], w.in[1], w.out[0],
                                   w.out[1], at::MemoryFormat::Contiguous);
  else
    at::native::pool3d_shape_check(x, x.size(-4), w.k[0], w.k[1], w.k[2], w.s[0], w.s[1],
                                   w.s[2], w.p[0], w.p[1], w.p[2], w.d[0], w.d[1], w.d[2],
                                   w.in[0], w.in[1], w.in[2], w.out[0], w.out[1], w.out[2],
                                   op, true);
  return w;
}

// xp [B, C, *Sp] -> [B, C, *out, numel_of(k)]: every window, in row-major order.
at::Tensor windows(const at::Tensor& xp, const Win& w) {
  std::vector<int64_t> shape{xp.size(0), xp.size(1)};
  shape.insert(shape.end(), w.out.begin(), w.out.end());
  shape.push_back(w.kk());
  at::Tensor buf = empty_neuron(shape, xp.scalar_type(), xp.device());
  Card card(buf);
  int64_t i = 0;
  for (const auto& k : offsets(w.k))
    card.copy(buf.select(-1, i++), window(xp, k, w.out, w.s, w.d));
  return buf;
}

at::Tensor pad(const at::Tensor& x, const Win& w, double value, at::ScalarType dtype) {
  return padded(x, w.p, w.his(), value, dtype);
}

std::tuple<at::Tensor, at::Tensor> max_pool(const at::Tensor& input, int n,
                                            at::IntArrayRef kernel, at::IntArrayRef stride,
                                            at::IntArrayRef padding, at::IntArrayRef dilation,
                                            bool ceil_mode, const char* op) {
  check_pool_input(input, n, op);
  Win w = window_params(input, n, kernel, stride, padding, dilation, ceil_mode, op);
  at::Tensor x = batched(input, n);
  int64_t B = x.size(0), C = x.size(1), P = numel_of(w.out);
  std::vector<int64_t> oshape = out_shape(B, C, w.out);
  if (B == 0) {
    at::Tensor v = empty_neuron(oshape, x.scalar_type(), x.device());
    return {v, empty_neuron(v.sizes(), at::kLong, x.device())};
  }
  auto [vals, arg] = max_arg(windows(pad(x, w, -INFINITY, x.scalar_type()), w));
  // Flat input positions of every window element (-1 on the padding).
  at::Tensor pos = at::arange(numel_of(w.in), at::TensorOptions().dtype(at::kLong).device(x.device()))
                       .view(out_shape(1, 1, w.in));
  at::Tensor table = windows(pad(pos, w, -1, at::kLong), w).view({1, P, w.kk()});
  // A window of only -infs (and padding): its first real element.
  at::Tensor real = pad(at::ones(out_shape(1, 1, w.in), x.options()), w, 0.0, x.scalar_type());
  at::Tensor first_real = reduce_last(NISA_RED_ARGMAX, windows(real, w), at::kLong);
  at::Tensor k = at::where(vals.eq(-INFINITY), first_real, arg).view({B * C, P});
  at::Tensor idx = positions(table, k).view(vals.sizes());
  return {unbatched(vals, input, n), unbatched(idx, input, n)};
}

std::tuple<at::Tensor, at::Tensor> max_pool2d(const at::Tensor& input, at::IntArrayRef kernel,
                                              at::IntArrayRef stride, at::IntArrayRef padding,
                                              at::IntArrayRef dilation, bool ceil_mode) {
  return max_pool(input, 2, kernel, stride, padding, dilation, ceil_mode, "max_pool2d");
}

std::tuple<at::Tensor, at::Tensor> max_pool3d(const at::Tensor& input, at::IntArrayRef kernel,
                                              at::IntArrayRef stride, at::IntArrayRef padding,
                                              at::IntArrayRef dilation, bool ceil_mode) {
  return max_pool(input, 3, kernel, stride, padding, dilation, ceil_mode, "max_pool3d");
}

at::Tensor max_pool2d_backward(const at::Tensor& grad, const at::Tensor& input,
                               at::IntArrayRef kernel, at::IntArrayRef stride,
                               at::IntArrayRef padding, at::IntArrayRef dilation,
                               bool ceil_mode, const at::Tensor& indices) {
  const char* op = "max_pool2d_backward";
  check_pool_input(input, 2, op);
  window_params(input, 2, kernel, stride, padding, dilation, ceil_mode, op);
  return scatter_back(grad, input, 2, indices, op);
}

at::Tensor max_pool3d_backward(const at::Tensor& grad, const at::Tensor& input,
                               at::IntArrayRef kernel, at::IntArrayRef stride,
                               at::IntArrayRef padding, at::IntArrayRef dilation,
                               bool ceil_mode, const at::Tensor& indices) {
  const char* op = "max_pool3d_with_indices_backward";
  check_pool_input(input, 3, op);
  window_params(input, 3, kernel, stride, padding, dilation, ceil_mode, op);
  return scatter_back(grad, input, 3, indices, op);
}

// The divisor of each output position [1, 1, *out], in @acc.
at::Tensor avg_counts(const Win& w, const at::Device& dev, bool count_include_pad,
                      at::ScalarType acc) {
  at::TensorOptions o = at::TensorOptions().dtype(acc).device(dev);
  at::Tensor ones;
  if (count_include_pad) {  // the input and its padding, not ceil_mode's overhang
    std::vector<int64_t> full{1, 1}, zero(w.n, 0), over;
    for (int i = 0; i < w.n; i++) {
      full.push_back(w.in[i] + 2 * w.p[i]);
      over.push_back(w.hi(i) - w.p[i]);
    }
    ones = padded(at::ones(full, o), zero, over, 0.0, acc);
  } else {
    ones = pad(at::ones(out_shape(1, 1, w.in), o), w, 0.0, acc);
  }
  return reduce_last(NISA_RED_SUM, windows(ones, w), acc);
}

at::Tensor avg_pool(const at::Tensor& input, int n, at::IntArrayRef kernel,
                    at::IntArrayRef stride, at::IntArrayRef padding, bool ceil_mode,
                    bool count_include_pad, std::optional<int64_t> divisor_override,
                    const char* op) {
  check_pool_input(input, n, op);
  Win w = window_params(input, n, kernel, stride, padding, {1}, ceil_mode, op);
  at::Tensor x = batched(input, n);
  at::ScalarType acc = acc_dtype(input.scalar_type());
  at::Tensor sum = reduce_last(NISA_RED_SUM, windows(pad(x, w, 0.0, acc), w), acc);
  at::Tensor out = divisor_override ? sum.div_(static_cast<double>(*divisor_override))
                                    : sum.div_(avg_counts(w, x.device(), count_include_pad, acc));
  return unbatched(out.to(input.scalar_type()), input, n);
}

at::Tensor avg_pool2d(const at::Tensor& input, at::IntArrayRef kernel, at::IntArrayRef stride,
                      at::IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                      std::optional<int64_t> divisor_override) {
  return avg_pool(input, 2, kernel, stride, padding, ceil_mode, count_include_pad,
                  divisor_override, "avg_pool2d");
}

at::Tensor avg_pool3d(const at::Tensor& input, at::IntArrayRef kernel, at::IntArrayRef stride,
                      at::IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                      std::optional<int64_t> divisor_override) {
  return avg_pool(input, 3, kernel, stride, padding, ceil_mode, count_include_pad,
                  divisor_override, "avg_pool3d");
}

at::Tensor avg_pool_backward(const at::Tensor& grad, const at::Tensor& input, int n,
                             at::IntArrayRef kernel, at::IntArrayRef stride,
                             at::IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                             std::optional<int64_t> divisor_override, const char* op) {
  check_pool_input(input, n, op);
  check_device(input, grad);
  Win w = window_params(input, n, kernel, stride, padding, {1}, ceil_mode, op);
  at::ScalarType acc = acc_dtype(input.scalar_type());
  at::Tensor x = batched(input, n), g = batched(grad, n).to(acc);
  g = divisor_override ? g.div(static_cast<double>(*divisor_override))
                       : g.div(avg_counts(w, x.device(), count_include_pad, acc));
  std::vector<int64_t> shape{x.size(0), x.size(1)};
  for (int i = 0; i < n; i++)
    shape.push_back(w.in[i] + w.p[i] + w.hi(i));
  at::Tensor gp = at::zeros(shape, x.options().dtype(acc));
  Card card(gp);
  if (g.numel()) {
    for (const auto& k : offsets(w.k)) {
      at::Tensor win = window(gp, k, w.out, w.s, std::vector<int64_t>(n, 1));
      card.bin(NISA_BIN_ADD, win, win, g);
    }
  }
  at::Tensor inner = gp;
  for (int i = 0; i < n; i++)
    inner = inner.narrow(2 + i, w.p[i], w.in[i]);
  at::Tensor gi = empty_neuron(x.sizes(), input.scalar_type(), x.device());
  card.copy(gi, inner);
  return gi.view(input.sizes());
}

at::Tensor avg_pool2d_backward(const at::Tensor& grad, const at::Tensor& input,
                               at::IntArrayRef kernel, at::IntArrayRef stride,
                               at::IntArrayRef padding, bool ceil_mode,
                               bool count_include_pad, std::optional<int64_t> divisor_override) {
  return avg_pool_backward(grad, input, 2, kernel, stride, padding, ceil_mode,
                           count_include_pad, divisor_override, "avg_pool2d_backward");
}

at::Tensor avg_pool3d_backward(const at::Tensor& grad, const at::Tensor& input,
                               at::IntArrayRef kernel, at::IntArrayRef stride,
                               at::IntArrayRef padding, bool ceil_mode,
                               bool count_include_pad, std::optional<int64_t> divisor_override) {
  return avg_pool_backward(grad, input, 3, kernel, stride, padding, ceil_mode,
                           count_include_pad, divisor_override, "avg_pool3d_backward");
}

void check_adaptive(const at::Tensor& x, int n, at::IntArrayRef out, const char* op) {
  check_pool_input(x, n, op);
  TORCH_CHECK(out.size() == static_cast<size_t>(n), op, ": output_size must be ", n);
  for (int64_t o : out)
    TORCH_CHECK(o >= 0, op, ": elements of output_size must be greater than or equal to 0 "
                "but received ", out);
  for (int64_t i = 1; i < x.dim(); i++)
    TORCH_CHECK(x.size(i) > 0, op, "(): Expected input to have non-zero size for "
                "non-batch dimensions, but input has sizes ", x.sizes(), " with "
                "dimension ", i, " being empty");
}

// PyTorch's adaptive windows: for every output position (row-major over
// @out), the flat input positions of its window's elements, padded to the
// largest window with the window's last element, and which of them are
// padding. They depend only on the sizes (never on tensor data): built on
// the host, the gathers and reductions over them run on the card.
struct Adaptive {
  at::Tensor table;  // [1, P, KK] int64
  at::Tensor pad;    // [1, P, KK] bool: a repeated element
  at::Tensor count;  // [1, P] float32: the window's size (exact)
  int64_t P, KK;
};

Adaptive adaptive_windows(at::IntArrayRef in, at::IntArrayRef out, const at::Device& dev) {
  size_t n = in.size();
  std::vector<std::vector<int64_t>> st(n), len(n);
  std::vector<int64_t> kmax(n, 0), stride(n, 1);
  for (size_t i = 0; i < n; i++) {
    for (int64_t o = 0; o < out[i]; o++) {
      st[i].push_back(at::native::start_index(o, out[i], in[i]));
      len[i].push_back(at::native::end_index(o, out[i], in[i]) - st[i].back());
      kmax[i] = std::max(kmax[i], len[i].back());
    }
    for (size_t j = i + 1; j < n; j++)
      stride[i] *= in[j];
  }
  Adaptive a{{}, {}, {}, numel_of(out), numel_of(kmax)};
  std::vector<int64_t> table, pad;
  std::vector<float> count;
  for (const auto& o : offsets(out)) {
    int64_t c = 1;
    for (size_t i = 0; i < n; i++)
      c *= len[i][o[i]];
    count.push_back(static_cast<float>(c));
    for (const auto& k : offsets(kmax)) {
      int64_t pos = 0;
      bool repeated = false;
      for (size_t i = 0; i < n; i++) {
        repeated = repeated || k[i] >= len[i][o[i]];
        pos += (st[i][o[i]] + std::min(k[i], len[i][o[i]] - 1)) * stride[i];
      }
      table.push_back(pos);
      pad.push_back(repeated);
    }
  }
  a.table = shape_index(table, dev).view({1, a.P, a.KK});
  a.pad = shape_index(pad, dev).view({1, a.P, a.KK}).to(at::kBool);
  a.count = shape_weights(count, dev).view({1, a.P});
  return a;
}

// x [B, C, *in] -> [B*C, P, KK]: the elements of every adaptive window.
at::Tensor adaptive_gather(const at::Tensor& x, const Adaptive& a) {
  int64_t BC = x.size(0) * x.size(1);
  at::Tensor planes = x.reshape({BC, numel_of(x.sizes().slice(2))});
  return planes.gather(1, a.table.view({1, a.P * a.KK}).expand({BC, a.P * a.KK}))
      .view({BC, a.P, a.KK});
}

at::Tensor adaptive_avg_pool(const at::Tensor& input, int n, c10::SymIntArrayRef size,
                             const char* op) {
  std::vector<int64_t> out = concrete(size);
  check_adaptive(input, n, out, op);
  at::Tensor x = batched(input, n);
  std::vector<int64_t> oshape = out_shape(x.size(0), x.size(1), out);
  if (x.numel() == 0 || numel_of(out) == 0)
    return unbatched(empty_neuron(oshape, input.scalar_type(), x.device()), input, n);
  Adaptive a = adaptive_windows(x.sizes().slice(2), out, x.device());
  at::ScalarType acc = acc_dtype(input.scalar_type());
  at::Tensor wins = adaptive_gather(x, a).to(acc);
  wins.masked_fill_(a.pad.expand_as(wins), 0.0);
  at::Tensor avg = reduce_last(NISA_RED_SUM, wins, acc).div_(a.count);
  return unbatched(avg.to(input.scalar_type()).view(oshape), input, n);
}

at::Tensor adaptive_avg_pool_backward(const at::Tensor& grad, const at::Tensor& input, int n,
                                      const char* op) {
  check_pool_input(input, n, op);
  check_device(input, grad);
  at::Tensor x = batched(input, n), g = batched(grad, n);
  TORCH_CHECK(g.dim() == x.dim() && g.size(0) == x.size(0) && g.size(1) == x.size(1),
              "neuron: ", op, ": grad_output ", grad.sizes(), " does not match the input ",
              input.sizes());
  int64_t BC = x.size(0) * x.size(1), plane = numel_of(x.sizes().slice(2));
  at::Tensor acc = at::zeros({BC, plane}, x.options().dtype(acc_dtype(input.scalar_type())));
  if (g.numel()) {
    Adaptive a = adaptive_windows(x.sizes().slice(2), g.sizes().slice(2), x.device());
    at::Tensor share = g.to(acc.scalar_type()).reshape({BC, a.P}).div(a.count).unsqueeze(2)
                           .expand({BC, a.P, a.KK}).contiguous();
    share.masked_fill_(a.pad.expand_as(share), 0.0);
    acc.scatter_add_(1, a.table.view({1, a.P * a.KK}).expand({BC, a.P * a.KK}),
                     share.view({BC, a.P * a.KK}));
  }
  return acc.to(input.scalar_type()).view(input.sizes());
}

std::tuple<at::Tensor, at::Tensor> adaptive_max_pool(const at::Tensor& input, int n,
                                                     at::IntArrayRef out, const char* op) {
  check_adaptive(input, n, out, op);
  at::Tensor x = batched(input, n);
  std::vector<int64_t> oshape = out_shape(x.size(0), x.size(1), out);
  if (x.numel() == 0 || numel_of(out) == 0) {
    at::Tensor v = empty_neuron(oshape, input.scalar_type(), x.device());
    return {unbatched(v, input, n),
            unbatched(empty_neuron(oshape, at::kLong, x.device()), input, n)};
  }
  Adaptive a = adaptive_windows(x.sizes().slice(2), out, x.device());
  auto [vals, arg] = max_arg(adaptive_gather(x, a));
  at::Tensor idx = positions(a.table, arg);
  return {unbatched(vals.view(oshape), input, n), unbatched(idx.view(oshape), input, n)};
}

at::Tensor adaptive_avg_pool2d(const at::Tensor& input, c10::SymIntArrayRef size) {
  return adaptive_avg_pool(input, 2, size, "adaptive_avg_pool2d");
}
at::Tensor adaptive_avg_pool3d(const at::Tensor& input, c10::SymIntArrayRef size) {
  return adaptive_avg_pool(input, 3, size, "adaptive_avg_pool3d");
}
at::Tensor adaptive_avg_pool2d_backward(const at::Tensor& grad, const at::Tensor& input) {
  return adaptive_avg_pool_backward(grad, input, 2, "adaptive_avg_pool2d_backward");
}
at::Tensor adaptive_avg_pool3d_backward(const at::Tensor& grad, const at::Tensor& input) {
  return adaptive_avg_pool_backward(grad, input, 3, "adaptive_avg_pool3d_backward");
}
std::tuple<at::Tensor, at::Tensor> adaptive_max_pool2d(const at::Tensor& input,
                                                       at::IntArrayRef size) {
  return adaptive_max_pool(input, 2, size, "adaptive_max_pool2d");
}
std::tuple<at::Tensor, at::Tensor> adaptive_max_pool3d(const at::Tensor& input,
                                                       at::IntArrayRef size) {
  return adaptive_max_pool(input, 3, size, "adaptive_max_pool3d");
}
at::Tensor adaptive_max_pool2d_backward(const at::Tensor& grad, const at::Tensor& input,
                                        const at::Tensor& indices) {
  check_pool_input(input, 2, "adaptive_max_pool2d_backward");
  return scatter_back(grad, input, 2, indices, "adaptive_max_pool2d_backward");
}
at::Tensor adaptive_max_pool3d_backward(const at::Tensor& grad, const at::Tensor& input,
                                        const at::Tensor& indices) {
  check_pool_input(input, 3, "adaptive_max_pool3d_backward");
  return scatter_back(grad, input, 3, indices, "adaptive_max_pool3d_backward");
}

// out= forms: compute, then copy into the caller's tensors (into()).

std::tuple<at::Tensor&, at::Tensor&> max_pool3d_out(const at::Tensor& x, at::IntArrayRef k,
                                                    at::IntArrayRef s, at::IntArrayRef p,
                                                    at::IntArrayRef d, bool c, at::Tensor& out,
                                                    at::Tensor& idx) {
  auto [v, i] = (max_pool3d)(x, k, s, p, d, c);
  into(out, v);
  into(idx, i);
  return {out, idx};
}
at::Tensor& max_pool3d_backward_out(const at::Tensor& g, const at::Tensor& x,
                                    at::IntArrayRef k, at::IntArrayRef s, at::IntArrayRef p,
                                    at::IntArrayRef d, bool c, const at::Tensor& idx,
                                    at::Tensor& gi) {
  into(gi, (max_pool3d_backward)(g, x, k, s, p, d, c, idx));
  return gi;
}

}  // namespace

// The structured poolings that 2-d and 3-d both have.
#define NEURON_POOL_METAS(n)                                                                \
  NEURON_COMPUTED_IMPL(m, "avg_pool" #n "d", "out", avg_pool##n##d, avg_pool##n##d)         \
  NEURON_COMPUTED_IMPL(m, "avg_pool" #n "d_backward", "grad_input", avg_pool##n##d_backward, \
                       avg_pool##n##d_backward)                                             \
  NEURON_COMPUTED_IMPL(m, "adaptive_max_pool" #n "d", "out", adaptive_max_pool##n##d,       \
                       adaptive_max_pool##n##d)                                             \
  NEURON_COMPUTED_IMPL(m, "adaptive_max_pool" #n "d_backward", "grad_input",                \
                       adaptive_max_pool##n##d_backward, adaptive_max_pool##n##d_backward)

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  NEURON_COMPUTED_IMPL(m, "max_pool2d_with_indices", "out", max_pool2d_with_indices, max_pool2d)
  NEURON_COMPUTED_IMPL(m, "max_pool2d_with_indices_backward", "grad_input",
                       max_pool2d_with_indices_backward, max_pool2d_backward)
  NEURON_POOL_METAS(2)
  NEURON_POOL_METAS(3)
  m.impl("_adaptive_avg_pool2d", adaptive_avg_pool2d);
  m.impl("_adaptive_avg_pool2d_backward", adaptive_avg_pool2d_backward);
  m.impl("max_pool3d_with_indices", max_pool3d);
  m.impl("max_pool3d_with_indices.out", max_pool3d_out);
  m.impl("max_pool3d_with_indices_backward", max_pool3d_backward);
  m.impl("max_pool3d_with_indices_backward.grad_input", max_pool3d_backward_out);
  m.impl("_adaptive_avg_pool3d", adaptive_avg_pool3d);
  m.impl("_adaptive_avg_pool3d_backward", adaptive_avg_pool3d_backward);
}

}  // namespace torch_neuron

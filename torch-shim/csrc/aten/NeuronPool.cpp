// SPDX-License-Identifier: MIT
// 2-d pooling on the card (1-d pooling reaches these through 2-d):
// max_pool2d_with_indices, avg_pool2d, _adaptive_avg_pool2d,
// adaptive_max_pool2d, and their backward.
//
// Fixed windows: the padded input's window at each kernel offset (a strided
// view) is copied into the last dim of a [B, C, OH, OW, KH*KW] buffer, which
// one REDUCE turns into the max (and ARGMAX) or the sum. Max pooling pads
// with -inf; its indices are PyTorch's (flat index into the input plane, the
// first maximum, the last NaN, and for a window of only -inf its first real
// element), found by gathering from the windows of a table of flat
// positions. Average pooling divides by the window counts, themselves sums
// of the windows of a 0/1 table (count_include_pad, ceil_mode) or by
// divisor_override. Adaptive average pooling is separable: A_h @ x @ A_w^T
// with averaging matrices built from PyTorch's start/end indices; adaptive
// max pooling gathers its variable windows through an index table (clamped
// to the window's last element). The backward passes scatter-add (max) or
// add windows back (average).
#include <ATen/native/AdaptivePooling.h>
#include <ATen/native/Pool.h>

#include "NeuronWindows.h"

namespace torch_neuron {
namespace {

constexpr at::ScalarType kAcc = at::kFloat;

void check_pool_input(const at::Tensor& x, const char* op) {
  TORCH_CHECK(is_neuron(x), "neuron: ", op, ": expected a neuron tensor");
  TORCH_CHECK(x.scalar_type() == at::kFloat || x.scalar_type() == at::kBFloat16,
              "neuron: ", op, " supports float32 and bfloat16, not ", x.scalar_type());
  TORCH_CHECK(((x.dim() == 3 || x.dim() == 4) && x.numel() > 0) ||
              (x.dim() == 4 && x.size(0) == 0 && x.size(1) && x.size(2) && x.size(3)),
              "neuron: ", op, ": expected a 3-d or 4-d (batch mode) tensor with "
              "optional 0 dim batch size for input, but got: ", x.sizes());
}

// [B, C, H, W] of a 3-d or 4-d input.
at::Tensor batched(const at::Tensor& x) { return x.dim() == 3 ? x.unsqueeze(0) : x; }
at::Tensor unbatched(const at::Tensor& t, const at::Tensor& like) {
  return like.dim() == 3 ? t.squeeze(0) : t;
}

int64_t pick(at::IntArrayRef v, size_t i, int64_t dflt) {
  if (v.empty())
    return dflt;
  return v.size() == 1 ? v[0] : v[i];
}

struct Win {
  int64_t k[2], s[2], p[2], d[2], in[2], out[2];
  int64_t hi(int i) const {  // padding after: ceil_mode's last window may pass it
    int64_t need = (out[i] - 1) * s[i] + d[i] * (k[i] - 1) + 1;
    return std::max(p[i], need - in[i] - p[i]);
  }
  int64_t kk() const { return k[0] * k[1]; }
};

Win window_params(const at::Tensor& x, at::IntArrayRef kernel, at::IntArrayRef stride,
                  at::IntArrayRef padding, at::IntArrayRef dilation, bool ceil_mode,
                  bool max) {
  const char* op = max ? "max_pool2d" : "avg_pool2d";
  TORCH_CHECK(kernel.size() == 1 || kernel.size() == 2, op, ": kernel_size must either "
              "be a single int, or a tuple of two ints");
  TORCH_CHECK(stride.empty() || stride.size() == 1 || stride.size() == 2, op,
              ": stride must either be omitted, a single int, or a tuple of two ints");
  TORCH_CHECK(padding.size() == 1 || padding.size() == 2, op, ": padding must either "
              "be a single int, or a tuple of two ints");
  TORCH_CHECK(dilation.size() == 1 || dilation.size() == 2, op, ": dilation must be "
              "either a single int, or a tuple of two ints");
  Win w;
  for (int i = 0; i < 2; i++) {
    w.k[i] = pick(kernel, i, 1);
    w.s[i] = pick(stride, i, w.k[i]);
    w.p[i] = pick(padding, i, 0);
    w.d[i] = pick(dilation, i, 1);
    w.in[i] = x.size(x.dim() - 2 + i);
    TORCH_CHECK(w.k[i] > 0 && w.s[i] > 0 && w.d[i] > 0, op, ": kernel size, stride "
                "and dilation must be greater than zero");
    w.out[i] = at::native::pooling_output_shape<int64_t>(w.in[i], w.k[i], w.p[i], w.s[i],
                                                         w.d[i], ceil_mode);
  }
  at::native::pool2d_shape_check(x, w.k[0], w.k[1], w.s[0], w.s[1], w.p[0], w.p[1],
                                 w.d[0], w.d[1], x.size(-3), w.in[0], w.in[1], w.out[0],
                                 w.out[1], at::MemoryFormat::Contiguous);
  return w;
}

// xp [B, C, Hp, Wp] -> [B, C, OH, OW, KH*KW]: every window, in row-major order.
at::Tensor windows(const at::Tensor& xp, const Win& w) {
  at::Tensor buf = empty_neuron({xp.size(0), xp.size(1), w.out[0], w.out[1], w.kk()},
                                xp.scalar_type(), xp.device());
  int64_t i = 0;
  for (const auto& k : offsets({w.k[0], w.k[1]}))
    copy_into(buf.select(4, i++), window(xp, k, {w.out[0], w.out[1]}, {w.s[0], w.s[1]},
                                         {w.d[0], w.d[1]}));
  return buf;
}

at::Tensor pad(const at::Tensor& x, const Win& w, double value, at::ScalarType dtype) {
  return padded(x, {w.p[0], w.p[1]}, {w.hi(0), w.hi(1)}, value, dtype);
}

// REDUCE @red of @src along its last dim into a new tensor of @dtype.
at::Tensor reduce_last(nisa_reduce red, const at::Tensor& src, at::ScalarType dtype) {
  std::vector<int64_t> shape(src.sizes().begin(), src.sizes().end() - 1);
  at::Tensor out = empty_neuron(shape, dtype, src.device());
  if (out.numel() == 0)
    return out;
  nrn_tensor_desc o = desc(out), s = desc(src);
  NEURON_OP(nrn_op_reduce(stream_for(out), red, &o, &s, static_cast<int>(src.dim() - 1)));
  return out;
}

// Max and its window position over the last dim of @wins, as PyTorch picks
// it: the first maximum, or the last NaN.
std::tuple<at::Tensor, at::Tensor> max_arg(const at::Tensor& wins) {
  at::Tensor vals = reduce_last(NISA_RED_MAX, wins, wins.scalar_type());
  at::Tensor arg = reduce_last(NISA_RED_ARGMAX, wins, at::kLong);
  int64_t kk = wins.size(-1);
  if (kk > 1 && vals.numel()) {
    // The last NaN: the first one of the windows read backwards.
    at::Tensor last = empty_neuron(vals.sizes(), at::kLong, wins.device());
    nrn_tensor_desc o = desc(last), s = desc(wins);
    s.offset += static_cast<uint64_t>((kk - 1) * wins.stride(-1) * wins.itemsize());
    s.strides[wins.dim() - 1] = -wins.stride(-1);
    NEURON_OP(nrn_op_reduce(stream_for(last), NISA_RED_ARGMAX, &o, &s,
                            static_cast<int>(wins.dim() - 1)));
    at::Tensor from_end = at::rsub(last, kk - 1);
    arg = at::where(vals.ne(vals), from_end, arg);
  }
  return {vals, arg};
}

// table [1, P, KK] (positions of each window's elements), arg [B, P] -> [B, P].
at::Tensor positions(const at::Tensor& table, const at::Tensor& arg) {
  int64_t B = arg.size(0), P = arg.size(1);
  return table.expand({B, P, table.size(2)}).gather(2, arg.unsqueeze(2)).squeeze(2);
}

std::tuple<at::Tensor, at::Tensor> max_pool2d(const at::Tensor& input, at::IntArrayRef kernel,
                                              at::IntArrayRef stride, at::IntArrayRef padding,
                                              at::IntArrayRef dilation, bool ceil_mode) {
  check_pool_input(input, "max_pool2d");
  Win w = window_params(input, kernel, stride, padding, dilation, ceil_mode, true);
  at::Tensor x = batched(input);
  int64_t B = x.size(0), C = x.size(1), H = w.in[0], W = w.in[1], P = w.out[0] * w.out[1];
  if (B == 0) {
    at::Tensor v = empty_neuron({0, C, w.out[0], w.out[1]}, x.scalar_type(), x.device());
    return {v, empty_neuron(v.sizes(), at::kLong, x.device())};
  }
  auto [vals, arg] = max_arg(windows(pad(x, w, -INFINITY, x.scalar_type()), w));
  // Flat input positions of every window element (-1 on the padding).
  at::Tensor pos = at::arange(H * W, at::TensorOptions().dtype(at::kLong).device(x.device()))
                       .view({1, 1, H, W});
  at::Tensor table = windows(pad(pos, w, -1, at::kLong), w).view({1, P, w.kk()});
  // A window of only -infs (and padding): its first real element.
  at::Tensor real = pad(at::ones({1, 1, H, W}, x.options()), w, 0.0, x.scalar_type());
  at::Tensor first_real = reduce_last(NISA_RED_ARGMAX, windows(real, w), at::kLong);
  at::Tensor k = at::where(vals.eq(-INFINITY), first_real, arg).view({B * C, P});
  at::Tensor idx = positions(table, k).view(vals.sizes());
  return {unbatched(vals, input), unbatched(idx, input)};
}

// Scatter-add @grad at flat plane positions @indices into zeros shaped like @input.
at::Tensor scatter_back(const at::Tensor& grad, const at::Tensor& input,
                        const at::Tensor& indices, const char* op) {
  check_device(input, grad);
  check_device(input, indices);
  TORCH_CHECK(indices.scalar_type() == at::kLong, "neuron: ", op, ": indices must be int64");
  TORCH_CHECK(grad.sizes() == indices.sizes(), "neuron: ", op, ": grad_output ",
              grad.sizes(), " and indices ", indices.sizes(), " differ in shape");
  at::Tensor x = batched(input);
  int64_t B = x.size(0), C = x.size(1), HW = x.size(2) * x.size(3);
  at::Tensor acc = at::zeros({B * C, HW}, x.options().dtype(kAcc));
  if (grad.numel()) {
    at::Tensor g = grad.to(kAcc).contiguous().view({B * C, -1});
    acc.scatter_add_(1, indices.contiguous().view({B * C, -1}), g);
  }
  return acc.to(input.scalar_type()).view(input.sizes());
}

at::Tensor max_pool2d_backward(const at::Tensor& grad, const at::Tensor& input,
                               at::IntArrayRef kernel, at::IntArrayRef stride,
                               at::IntArrayRef padding, at::IntArrayRef dilation,
                               bool ceil_mode, const at::Tensor& indices) {
  check_pool_input(input, "max_pool2d_backward");
  window_params(input, kernel, stride, padding, dilation, ceil_mode, true);
  return scatter_back(grad, input, indices, "max_pool2d_backward");
}

// The divisor of each output position [1, 1, OH, OW] (f32).
at::Tensor avg_counts(const at::Tensor& x, const Win& w, bool count_include_pad) {
  at::TensorOptions o = x.options().dtype(kAcc);
  at::Tensor ones;
  if (count_include_pad) {  // the input and its padding, not ceil_mode's overhang
    ones = at::ones({1, 1, w.in[0] + 2 * w.p[0], w.in[1] + 2 * w.p[1]}, o);
    ones = padded(ones, {0, 0}, {w.hi(0) - w.p[0], w.hi(1) - w.p[1]}, 0.0, kAcc);
  } else {
    ones = pad(at::ones({1, 1, w.in[0], w.in[1]}, o), w, 0.0, kAcc);
  }
  return reduce_last(NISA_RED_SUM, windows(ones, w), kAcc);
}

at::Tensor avg_pool2d(const at::Tensor& input, at::IntArrayRef kernel, at::IntArrayRef stride,
                      at::IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                      std::optional<int64_t> divisor_override) {
  check_pool_input(input, "avg_pool2d");
  TORCH_CHECK(!divisor_override || *divisor_override != 0, "divisor must be not zero");
  Win w = window_params(input, kernel, stride, padding, {1}, ceil_mode, false);
  at::Tensor x = batched(input);
  at::Tensor sum = reduce_last(NISA_RED_SUM, windows(pad(x, w, 0.0, kAcc), w), kAcc);
  at::Tensor out = divisor_override ? sum.div_(static_cast<double>(*divisor_override))
                                    : sum.div_(avg_counts(x, w, count_include_pad));
  return unbatched(out.to(input.scalar_type()), input);
}

at::Tensor avg_pool2d_backward(const at::Tensor& grad, const at::Tensor& input,
                               at::IntArrayRef kernel, at::IntArrayRef stride,
                               at::IntArrayRef padding, bool ceil_mode,
                               bool count_include_pad, std::optional<int64_t> divisor_override) {
  check_pool_input(input, "avg_pool2d_backward");
  check_device(input, grad);
  TORCH_CHECK(!divisor_override || *divisor_override != 0, "divisor must be not zero");
  Win w = window_params(input, kernel, stride, padding, {1}, ceil_mode, false);
  at::Tensor x = batched(input), g = batched(grad).to(kAcc);
  TORCH_CHECK(g.size(2) == w.out[0] && g.size(3) == w.out[1] && g.size(1) == x.size(1),
              "neuron: avg_pool2d_backward: grad_output ", grad.sizes(),
              " does not match the output of the pooling");
  g = divisor_override ? g.div(static_cast<double>(*divisor_override))
                       : g.div(avg_counts(x, w, count_include_pad));
  std::vector<int64_t> shape{x.size(0), x.size(1), w.in[0] + w.p[0] + w.hi(0),
                             w.in[1] + w.p[1] + w.hi(1)};
  at::Tensor gp = at::zeros(shape, x.options().dtype(kAcc));
  if (g.numel()) {
    for (const auto& k : offsets({w.k[0], w.k[1]})) {
      at::Tensor win = window(gp, k, {w.out[0], w.out[1]}, {w.s[0], w.s[1]}, {1, 1});
      add_into(win, win, g);
    }
  }
  at::Tensor gi = empty_neuron(x.sizes(), input.scalar_type(), x.device());
  copy_into(gi, gp.narrow(2, w.p[0], w.in[0]).narrow(3, w.p[1], w.in[1]));
  return gi.view(input.sizes());
}

void check_adaptive(const at::Tensor& x, at::IntArrayRef out, const char* op) {
  check_pool_input(x, op);
  TORCH_CHECK(out.size() == 2, op, ": output_size must be 2");
  TORCH_CHECK(out[0] >= 0 && out[1] >= 0, op, ": elements of output_size must be "
              "greater than or equal to 0 but received {", out[0], ", ", out[1], "}");
  for (int64_t i = 1; i < x.dim(); i++)
    TORCH_CHECK(x.size(i) > 0, op, "(): Expected input to have non-zero size for "
                "non-batch dimensions, but input has sizes ", x.sizes(), " with "
                "dimension ", i, " being empty");
}

// PyTorch's adaptive windows of @in positions into @out: starts and ends.
std::pair<at::Tensor, at::Tensor> adaptive_bounds(int64_t in, int64_t out,
                                                  const at::Device& dev) {
  std::vector<int64_t> st, en;
  for (int64_t o = 0; o < out; o++) {
    st.push_back(at::native::start_index(o, out, in));
    en.push_back(at::native::end_index(o, out, in));
  }
  auto opts = at::TensorOptions().dtype(at::kLong);
  return {at::tensor(st, opts).to(dev).view({out, 1}), at::tensor(en, opts).to(dev).view({out, 1})};
}

// [out, in]: 1 / (window length) inside each window, 0 elsewhere.
at::Tensor averaging(int64_t in, int64_t out, const at::Device& dev) {
  auto [st, en] = adaptive_bounds(in, out, dev);
  at::Tensor i = at::arange(in, at::TensorOptions().dtype(at::kLong).device(dev)).view({1, in});
  at::Tensor inside = i.ge(st).to(kAcc).mul_(i.lt(en).to(kAcc));
  return inside.div_(en.sub(st).to(kAcc));
}

at::Tensor adaptive_avg_pool2d(const at::Tensor& input, c10::SymIntArrayRef size) {
  std::vector<int64_t> out_sz{size[0].expect_int(), size[1].expect_int()};
  check_adaptive(input, out_sz, "adaptive_avg_pool2d");
  at::Tensor x = batched(input);
  at::Device dev = x.device();
  at::Tensor ah = averaging(x.size(2), out_sz[0], dev);
  at::Tensor aw = averaging(x.size(3), out_sz[1], dev);
  at::Tensor t = empty_neuron({x.size(0), x.size(1), x.size(2), out_sz[1]}, kAcc, dev);
  at::Tensor out = empty_neuron({x.size(0), x.size(1), out_sz[0], out_sz[1]}, kAcc, dev);
  matmul_acc(t, x, aw.t(), nullptr, false);
  matmul_acc(out, ah, t, nullptr, false);
  return unbatched(out.to(input.scalar_type()), input);
}

at::Tensor adaptive_avg_pool2d_backward(const at::Tensor& grad, const at::Tensor& input) {
  check_pool_input(input, "adaptive_avg_pool2d_backward");
  check_device(input, grad);
  at::Tensor x = batched(input), g = batched(grad);
  at::Device dev = x.device();
  at::Tensor ah = averaging(x.size(2), g.size(2), dev);
  at::Tensor aw = averaging(x.size(3), g.size(3), dev);
  at::Tensor t = empty_neuron({x.size(0), x.size(1), g.size(2), x.size(3)}, kAcc, dev);
  at::Tensor gi = empty_neuron(x.sizes(), kAcc, dev);
  matmul_acc(t, g, aw, nullptr, false);
  matmul_acc(gi, ah.t(), t, nullptr, false);
  return gi.to(input.scalar_type()).view(input.sizes());
}

// [out, kmax]: the input positions of each adaptive window, the last one repeated.
at::Tensor adaptive_rows(int64_t in, int64_t out, const at::Device& dev, int64_t* kmax) {
  *kmax = 0;
  for (int64_t o = 0; o < out; o++)
    *kmax = std::max(*kmax, at::native::end_index(o, out, in) -
                                at::native::start_index(o, out, in));
  auto [st, en] = adaptive_bounds(in, out, dev);
  at::Tensor j = at::arange(*kmax, at::TensorOptions().dtype(at::kLong).device(dev))
                     .view({1, *kmax});
  return at::minimum(st.add(j), en.sub(1));
}

std::tuple<at::Tensor, at::Tensor> adaptive_max_pool2d(const at::Tensor& input,
                                                       at::IntArrayRef size) {
  check_adaptive(input, size, "adaptive_max_pool2d");
  at::Tensor x = batched(input);
  at::Device dev = x.device();
  int64_t B = x.size(0), C = x.size(1), W = x.size(3), kh, kw;
  at::Tensor rows = adaptive_rows(x.size(2), size[0], dev, &kh);
  at::Tensor cols = adaptive_rows(W, size[1], dev, &kw);
  // [OH, OW, kh, kw] flat positions, as [1, P * kh * kw].
  at::Tensor table = rows.view({size[0], 1, kh, 1}).mul(W).add(cols.view({1, size[1], 1, kw}));
  int64_t P = size[0] * size[1], KK = kh * kw;
  at::Tensor planes = x.reshape({B * C, x.size(2) * W});
  at::Tensor wins = planes.gather(1, table.reshape({1, P * KK}).expand({B * C, P * KK}));
  auto [vals, arg] = max_arg(wins.view({B * C, P, KK}));
  at::Tensor idx = positions(table.view({1, P, KK}), arg);
  std::vector<int64_t> shape{B, C, size[0], size[1]};
  return {unbatched(vals.view(shape), input), unbatched(idx.view(shape), input)};
}

at::Tensor adaptive_max_pool2d_backward(const at::Tensor& grad, const at::Tensor& input,
                                        const at::Tensor& indices) {
  check_pool_input(input, "adaptive_max_pool2d_backward");
  return scatter_back(grad, input, indices, "adaptive_max_pool2d_backward");
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("max_pool2d_with_indices", max_pool2d);
  m.impl("max_pool2d_with_indices_backward", max_pool2d_backward);
  m.impl("avg_pool2d", avg_pool2d);
  m.impl("avg_pool2d_backward", avg_pool2d_backward);
  m.impl("_adaptive_avg_pool2d", adaptive_avg_pool2d);
  m.impl("_adaptive_avg_pool2d_backward", adaptive_avg_pool2d_backward);
  m.impl("adaptive_max_pool2d", adaptive_max_pool2d);
  m.impl("adaptive_max_pool2d_backward", adaptive_max_pool2d_backward);
}

}  // namespace torch_neuron

// SPDX-License-Identifier: MIT
// Fractional max pooling (2-d and 3-d) on the card, forward and backward.
// The window starts of each plane come from its random samples u (tensor
// data), so they are computed on the card as the CPU kernel does in the
// input's float type: start[i] = int((i + u) * alpha) - int(u * alpha) with
// alpha = (in - k) / (out - 1), and the last window ends at the input's
// end. The windows' flat positions (broadcast sums of the starts and the
// kernel offsets) index a gather of the planes; one REDUCE picks the max
// and its position (the first maximum, the last NaN, as on the CPU). The
// backward scatter-adds the gradient at the indices. Their results (checks,
// shape, out= rules) come from ATen's metas where it has them (all but the
// 3-d backward).
#include <ATen/ops/fractional_max_pool2d_backward_meta.h>
#include <ATen/ops/fractional_max_pool2d_meta.h>
#include <ATen/ops/fractional_max_pool3d_meta.h>

#include "NeuronMeta.h"
#include "NeuronWindows.h"

namespace torch_neuron {
namespace {

// [NC, out] window starts along one dim of @in with pool size @k, from
// samples u [NC] (float32, or float64 for a float64 input: acc_dtype()).
at::Tensor starts(const at::Tensor& u, int64_t in, int64_t k, int64_t out) {
  const at::Device dev = u.device();
  at::TensorOptions lo = at::TensorOptions().dtype(at::kLong).device(dev);
  if (out == 1)
    return at::full({u.size(0), 1}, in - k, lo);
  double alpha = u.scalar_type() == at::kDouble
                     ? static_cast<double>(in - k) / static_cast<double>(out - 1)
                     : static_cast<float>(in - k) / static_cast<float>(out - 1);
  at::Tensor i = at::arange(out - 1, at::TensorOptions().dtype(u.scalar_type()).device(dev));
  at::Tensor a = at::floor((i.view({1, out - 1}) + u.view({-1, 1})) * alpha);
  at::Tensor b = at::floor(u * alpha).view({-1, 1});
  at::Tensor s = (a - b).to(at::kLong);
  return at::cat({s, at::full({u.size(0), 1}, in - k, lo)}, 1);
}

std::tuple<at::Tensor, at::Tensor> fractional_max_pool(const at::Tensor& input, int n,
                                                       at::IntArrayRef kernel,
                                                       at::IntArrayRef out,
                                                       const at::Tensor& samples,
                                                       const char* op) {
  check_pool_input(input, n, op);
  check_device(input, samples);
  TORCH_CHECK(kernel.size() == static_cast<size_t>(n) && out.size() == static_cast<size_t>(n),
              op, ": kernel_size and output_size must have ", n, " elements");
  at::Tensor x = batched(input, n);
  int64_t B = x.size(0), C = x.size(1), NC = B * C;
  std::vector<int64_t> in(x.sizes().begin() + 2, x.sizes().end());
  for (int i = 0; i < n; i++)
    TORCH_CHECK(out[i] + kernel[i] - 1 <= in[i], op, "(): pool size ", kernel[i],
                " and output size ", out[i], " are too large for input size ", in[i]);
  TORCH_CHECK(samples.dim() == 3 && samples.size(0) >= B && samples.size(1) >= C &&
              samples.size(2) == n, op, ": random_samples ", samples.sizes(),
              " must be [N, C, ", n, "] for an input ", input.sizes());
  std::vector<int64_t> oshape{B, C};
  oshape.insert(oshape.end(), out.begin(), out.end());
  if (NC == 0) {
    return {unbatched(empty_neuron(oshape, x.scalar_type(), x.device()), input, n),
            unbatched(empty_neuron(oshape, at::kLong, x.device()), input, n)};
  }
  at::Tensor u = samples.narrow(0, 0, B).narrow(1, 0, C).to(acc_dtype(input.scalar_type()))
                     .reshape({NC, n});
  // flat positions [NC, P, KK], P and KK row-major over the dims: built dim
  // by dim (at most 5 dims at a time, as the card's tensors allow).
  std::vector<int64_t> stride(n, 1);
  for (int i = n - 2; i >= 0; i--)
    stride[i] = stride[i + 1] * in[i + 1];
  at::Tensor table;
  int64_t P = 1, KK = 1;
  for (int i = 0; i < n; i++) {
    // the CPU's sample order: (W, H) in 2-d, (T, H, W) in 3-d
    at::Tensor s = starts(u.select(1, n == 2 ? 1 - i : i), in[i], kernel[i], out[i]);
    at::Tensor off = at::arange(kernel[i], at::TensorOptions().dtype(at::kLong).device(x.device()));
    at::Tensor p = (s.view({NC, out[i], 1}) + off.view({1, 1, kernel[i]})) * stride[i];
    table = i == 0 ? p
                   : (table.view({NC, P, 1, KK, 1}) + p.view({NC, 1, out[i], 1, kernel[i]}))
                         .reshape({NC, P * out[i], KK * kernel[i]});
    P *= out[i];
    KK *= kernel[i];
  }
  int64_t plane = stride[0] * in[0];
  at::Tensor wins = x.reshape({NC, plane}).gather(1, table.reshape({NC, P * KK})).view({NC, P, KK});
  auto [vals, arg] = max_arg(wins);
  at::Tensor idx = table.gather(2, arg.unsqueeze(2)).squeeze(2);
  return {unbatched(vals.view(oshape), input, n), unbatched(idx.view(oshape), input, n)};
}

std::tuple<at::Tensor, at::Tensor> fmp2d(const at::Tensor& x, at::IntArrayRef k,
                                         at::IntArrayRef o, const at::Tensor& s) {
  return fractional_max_pool(x, 2, k, o, s, "fractional_max_pool2d");
}
std::tuple<at::Tensor, at::Tensor> fmp3d(const at::Tensor& x, at::IntArrayRef k,
                                         at::IntArrayRef o, const at::Tensor& s) {
  return fractional_max_pool(x, 3, k, o, s, "fractional_max_pool3d");
}
template <int N>
at::Tensor fmp_backward(const at::Tensor& grad, const at::Tensor& input, at::IntArrayRef k,
                        at::IntArrayRef o, const at::Tensor& indices) {
  const char* op = N == 2 ? "fractional_max_pool2d_backward" : "fractional_max_pool3d_backward";
  check_pool_input(input, N, op);
  return scatter_back(grad, input, N, indices, op);
}
at::Tensor& fmp3d_backward_out(const at::Tensor& grad, const at::Tensor& input,
                               at::IntArrayRef k, at::IntArrayRef o,
                               const at::Tensor& indices, at::Tensor& gi) {
  return into(gi, fmp_backward<3>(grad, input, k, o, indices));
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  NEURON_COMPUTED_IMPL(m, "fractional_max_pool2d", "output", fractional_max_pool2d, fmp2d)
  NEURON_COMPUTED_IMPL(m, "fractional_max_pool2d_backward", "grad_input",
                       fractional_max_pool2d_backward, fmp_backward<2>)
  NEURON_COMPUTED_IMPL(m, "fractional_max_pool3d", "output", fractional_max_pool3d, fmp3d)
  m.impl("fractional_max_pool3d_backward", fmp_backward<3>);
  m.impl("fractional_max_pool3d_backward.grad_input", fmp3d_backward_out);
}

}  // namespace torch_neuron

// SPDX-License-Identifier: MIT
// Weight normalisation's fused kernels (torch._weight_norm with dim 0 or the
// last dimension: torch.nn.utils.weight_norm and its parametrization, e.g.
// wav2vec2's and HuBERT's positional convolution), composed of card
// operations the way the CPU kernel computes them, in float for every card
// float type:
//   norm = sqrt(sum over the other dims of v^2)   (g's shape, float)
//   w    = v * (g / norm)
// and the backward, with s = sum over the other dims of grad_w * v:
//   grad_g = s / norm,  a = g / norm,  b = a * grad_g / norm,
//   grad_v = a * grad_w - b * v.
// Other dims take torch._weight_norm's composite path (norm_except_dim),
// which is made of operators the card has.
#include "NeuronOps.h"

namespace torch_neuron {
namespace {

// The dimensions the norm sums over: all but @dim.
std::vector<int64_t> other_dims(const at::Tensor& v, int64_t dim) {
  std::vector<int64_t> d;
  for (int64_t i = 0; i < v.dim(); i++)
    if (i != dim)
      d.push_back(i);
  return d;
}

// Sum of @x over @dims, kept as size-1 dimensions; x itself if there are none
// (a 1-D v: each element is its own slice).
at::Tensor sum_over(const at::Tensor& x, const std::vector<int64_t>& dims) {
  return dims.empty() ? x : x.sum(dims, /*keepdim=*/true);
}

void check_args(const char* op, const at::Tensor& v, const at::Tensor& g, int64_t dim) {
  check_device(v, g);
  TORCH_CHECK(is_neuron(g), "neuron: ", op, ": g must be on ", v.device(), ", got ",
              g.device());
  TORCH_CHECK(v.dim() >= 1, "neuron: ", op, ": v must have at least one dimension");
  TORCH_CHECK(dim == 0 || dim == v.dim() - 1, "neuron: ", op, ": the fused kernel "
              "normalises over dim 0 or the last dim (", v.dim() - 1, "), got dim ", dim,
              "; torch._weight_norm takes its composite path for other dims");
  TORCH_CHECK(card_float(v.scalar_type()), "neuron: ", op, ": expected a float32, "
              "float64, bfloat16 or float16 v, got ", v.scalar_type());
  TORCH_CHECK(g.scalar_type() == v.scalar_type(), "neuron: ", op, ": g (",
              g.scalar_type(), ") must have v's dtype (", v.scalar_type(), ")");
  TORCH_CHECK(g.numel() == v.size(dim), "neuron: ", op, ": g has ", g.numel(),
              " elements, expected v.size(", dim, ") = ", v.size(dim));
}

std::tuple<at::Tensor, at::Tensor> weight_norm(const at::Tensor& v, const at::Tensor& g,
                                               int64_t dim) {
  check_args("_weight_norm_interface", v, g, dim);
  at::ScalarType acc = acc_dtype(v.scalar_type());
  at::Tensor vf = v.to(acc);
  at::Tensor norm = sum_over(vf.mul(vf), other_dims(v, dim)).sqrt_();
  at::Tensor a = g.to(acc).reshape(norm.sizes()).div(norm);
  at::Tensor w = vf.mul(a).to(v.scalar_type()).contiguous();
  // the CPU's and CUDA's norms: float for the reduced types (else v's
  // type), g's shape
  return {w, norm.reshape(g.sizes()).contiguous()};
}

std::tuple<at::Tensor, at::Tensor> weight_norm_backward(
    const at::Tensor& grad_w, const at::Tensor& v, const at::Tensor& g,
    const at::Tensor& norm, int64_t dim) {
  check_args("_weight_norm_interface_backward", v, g, dim);
  check_device(v, grad_w);
  check_device(v, norm);
  TORCH_CHECK(grad_w.sizes() == v.sizes(), "neuron: _weight_norm_interface_backward: "
              "grad_w has shape ", grad_w.sizes(), ", v ", v.sizes());
  TORCH_CHECK(norm.numel() == g.numel(), "neuron: _weight_norm_interface_backward: "
              "saved_norm has ", norm.numel(), " elements, g ", g.numel());
  at::ScalarType acc = acc_dtype(v.scalar_type());
  at::Tensor vf = v.to(acc), gw = grad_w.to(acc);
  at::Tensor s = sum_over(gw.mul(vf), other_dims(v, dim));
  at::Tensor n = norm.to(acc).reshape(s.sizes());
  at::Tensor grad_g = s.div(n);
  at::Tensor a = g.to(acc).reshape(s.sizes()).div(n);
  at::Tensor b = a.mul(grad_g).div_(n);
  at::Tensor grad_v = a.mul(gw).sub_(b.mul(vf));
  return {grad_v.to(v.scalar_type()).contiguous(),
          grad_g.to(g.scalar_type()).reshape(g.sizes()).contiguous()};
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_weight_norm_interface", weight_norm);
  m.impl("_weight_norm_interface_backward", weight_norm_backward);
}

}  // namespace torch_neuron

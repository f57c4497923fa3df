// SPDX-License-Identifier: MIT
// Neural-network operators composed from the card's instructions:
// nll_loss (cross_entropy's second half), layer_norm, dropout, and their
// backward. They call ATen operators, which dispatch to the neuron kernels
// (below autograd: the autograd node is the composite op's own).
#include <c10/util/accumulate.h>

#include "NeuronOps.h"

namespace torch_neuron {
namespace {

struct NllParts {
  at::Tensor input2d;  // [N, C]
  at::Tensor safe;     // targets with ignored ones replaced by 0, [N, 1]
  at::Tensor weight;   // per-sample weight (0 where ignored), [N]
};

NllParts nll_parts(const at::Tensor& self, const at::Tensor& target,
                   const std::optional<at::Tensor>& weight, int64_t ignore_index) {
  TORCH_CHECK(self.dim() == 1 || self.dim() == 2, "input tensor should be 1D or 2D");
  TORCH_CHECK(target.dim() <= 1, "0D or 1D target tensor expected, multi-target "
              "not supported");
  at::Tensor input2d = self.dim() == 1 ? self.unsqueeze(0) : self;
  at::Tensor tgt = target.reshape({-1});
  TORCH_CHECK(tgt.size(0) == input2d.size(0), "Expected input batch_size (",
              input2d.size(0), ") to match target batch_size (", tgt.size(0), ").");
  at::Tensor valid = tgt.ne(ignore_index);
  at::Tensor safe = at::where(valid, tgt, at::zeros({}, tgt.options()));
  at::Tensor w = valid.to(self.scalar_type());
  if (weight && weight->defined())
    w = w * weight->index_select(0, safe);
  return {input2d, safe.unsqueeze(1), w};
}

std::tuple<at::Tensor, at::Tensor> nll_loss_forward(
    const at::Tensor& self, const at::Tensor& target,
    const std::optional<at::Tensor>& weight, int64_t reduction, int64_t ignore_index) {
  NllParts p = nll_parts(self, target, weight, ignore_index);
  at::Tensor picked = p.input2d.gather(1, p.safe).squeeze(1);
  at::Tensor losses = (picked * p.weight).neg();
  at::Tensor total = p.weight.sum();
  if (reduction == at::Reduction::None)
    return {self.dim() == 1 ? losses.squeeze(0) : losses, total};
  at::Tensor out = losses.sum();
  if (reduction == at::Reduction::Mean)
    out = out / total;
  return {out, total};
}

at::Tensor nll_loss_backward(const at::Tensor& grad_output, const at::Tensor& self,
                             const at::Tensor& target,
                             const std::optional<at::Tensor>& weight,
                             int64_t reduction, int64_t ignore_index,
                             const at::Tensor& total_weight) {
  NllParts p = nll_parts(self, target, weight, ignore_index);
  at::Tensor coef = p.weight.neg();
  if (reduction == at::Reduction::None)
    coef = coef * grad_output.reshape({-1});
  else if (reduction == at::Reduction::Mean)
    coef = coef * (grad_output / total_weight);
  else
    coef = coef * grad_output;
  at::Tensor grad = at::zeros_like(p.input2d);
  grad.scatter_add_(1, p.safe, coef.unsqueeze(1));
  return self.dim() == 1 ? grad.squeeze(0) : grad;
}

// Normalize over the last len(normalized_shape) dims, seen as [M, N].
std::tuple<at::Tensor, at::Tensor, at::Tensor> layer_norm(
    const at::Tensor& input, at::IntArrayRef normalized_shape,
    const std::optional<at::Tensor>& weight, const std::optional<at::Tensor>& bias,
    double eps) {
  int64_t k = static_cast<int64_t>(normalized_shape.size());
  int64_t axis = input.dim() - k, N = 1;
  for (int64_t s : normalized_shape)
    N *= s;
  // M rows by the shape, not -1: with N == 0 the rows cannot be inferred.
  int64_t M = c10::multiply_integers(input.sizes().slice(0, axis));
  at::Tensor x = input.reshape({M, N});
  at::Tensor mean = x.mean(1, true);
  at::Tensor xc = x - mean;
  at::Tensor rstd = (xc * xc).mean(1, true).add_(eps).rsqrt_();
  at::Tensor y = xc * rstd;
  if (weight && weight->defined())
    y.mul_(weight->reshape({N}));
  if (bias && bias->defined())
    y.add_(bias->reshape({N}));
  std::vector<int64_t> stat_shape(input.sizes().begin(), input.sizes().begin() + axis);
  stat_shape.insert(stat_shape.end(), k, 1);
  return {y.view(input.sizes()), mean.view(stat_shape), rstd.view(stat_shape)};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> layer_norm_backward(
    const at::Tensor& grad_out, const at::Tensor& input,
    at::IntArrayRef normalized_shape, const at::Tensor& mean, const at::Tensor& rstd,
    const std::optional<at::Tensor>& weight, const std::optional<at::Tensor>& bias,
    std::array<bool, 3> mask) {
  int64_t N = 1;
  for (int64_t s : normalized_shape)
    N *= s;
  int64_t M = c10::multiply_integers(
      input.sizes().slice(0, input.dim() - static_cast<int64_t>(normalized_shape.size())));
  at::Tensor x = input.reshape({M, N}), g = grad_out.reshape({M, N});
  at::Tensor mu = mean.reshape({M, 1}), rs = rstd.reshape({M, 1});
  at::Tensor xhat = (x - mu) * rs;
  bool has_w = weight && weight->defined();
  at::Tensor gw = has_w ? g * weight->reshape({N}) : g;
  at::Tensor gi, gweight, gbias;
  if (mask[0]) {
    at::Tensor a = gw.mean(1, true), b = (gw * xhat).mean(1, true);
    gi = ((gw - a) - xhat * b).mul_(rs).view(input.sizes());
  }
  if (mask[1] && has_w)
    gweight = (g * xhat).sum(0).view(weight->sizes());
  if (mask[2] && bias && bias->defined())
    gbias = g.sum(0).view(bias->sizes());
  return {gi, gweight, gbias};
}

// The mask is drawn on the card by its generator (bernoulli_, Distributions.cpp).
std::tuple<at::Tensor, at::Tensor> native_dropout(const at::Tensor& input, double p,
                                                  std::optional<bool> train) {
  if (!train.value_or(true) || p == 0.0)
    return {input.clone(), at::ones(input.sizes(), input.options().dtype(at::kBool))};
  TORCH_CHECK(p >= 0 && p <= 1, "dropout probability has to be between 0 and 1, "
              "but got ", p);
  if (p == 1.0)
    return {at::zeros_like(input), at::zeros(input.sizes(),
                                             input.options().dtype(at::kBool))};
  at::Tensor mask = at::empty(input.sizes(), input.options().dtype(at::kBool))
                        .bernoulli_(1.0 - p);
  return {input * mask * (1.0 / (1.0 - p)), mask};
}

at::Tensor native_dropout_backward(const at::Tensor& grad, const at::Tensor& mask,
                                   double scale) {
  return grad * mask * scale;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("nll_loss_forward", nll_loss_forward);
  m.impl("nll_loss_backward", nll_loss_backward);
  m.impl("native_layer_norm", layer_norm);
  m.impl("native_layer_norm_backward", layer_norm_backward);
  m.impl("native_dropout", native_dropout);
  m.impl("native_dropout_backward", native_dropout_backward);
}

}  // namespace torch_neuron

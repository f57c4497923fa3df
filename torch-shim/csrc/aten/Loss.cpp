// SPDX-License-Identifier: MIT
// The losses: nll_loss and nll_loss2d, mse, smooth L1, Huber, binary
// cross entropy, forward and backward (the margin, CTC and RNN-T losses
// have their own files, as in ATen).
//
// nll_loss (cross_entropy's second half) and nll_loss2d (nll_loss over
// the pixels of [N, C, H, W]), regression and binary losses on the card:
// mse, smooth L1, Huber, binary cross entropy (on probabilities and on
// logits). Composed from ATen operators that dispatch to the card's
// kernels, with the CPU kernels' formulas (the same branch points, clamps
// and epsilons).
#include <ATen/core/Reduction.h>
#include <ATen/ops/mse_loss_meta.h>
#include <ATen/ops/nll_loss_backward_meta.h>
#include <ATen/ops/nll_loss_forward_meta.h>
#include <ATen/ops/smooth_l1_loss_meta.h>

#include "NeuronElementwise.h"

namespace torch_neuron {
namespace {

at::Tensor reduce(const at::Tensor& l, int64_t reduction) {
  if (reduction == at::Reduction::Mean)
    return l.mean();
  if (reduction == at::Reduction::Sum)
    return l.sum();
  TORCH_CHECK(reduction == at::Reduction::None, "neuron: unknown reduction ", reduction);
  return l;
}

// The gradient's scale per element: grad_output, over numel for 'mean'.
at::Tensor grad_scale(const at::Tensor& grad_output, const at::Tensor& self,
                      int64_t reduction) {
  if (reduction == at::Reduction::Mean)
    return grad_output / static_cast<double>(self.numel());
  return grad_output;
}

// mse and smooth L1 take their results from their structured metas: the
// unreduced loss of the operands' promoted type and broadcast shape, or a
// 0-dim one. Unreduced, the loss is computed into the result; reduced, a
// temporary is summed or averaged into it.
at::Tensor& loss_reduce_into(const at::Tensor& l, int64_t reduction, at::Tensor& out) {
  if (reduction == at::Reduction::Mean)
    return at::mean_out(out, l, at::IntArrayRef{});
  return at::sum_out(out, l, at::IntArrayRef{});
}

// (x - t)^2
void mse_into(const at::Tensor& self, const at::Tensor& target, int64_t reduction,
              at::Tensor& out) {
  bool none = reduction == at::Reduction::None;
  at::Tensor l = none ? out : at::empty(at::infer_size(self.sizes(), target.sizes()),
                                        out.options());
  binary_into(NISA_BIN_SUB, self, target, 1.0, l);
  binary_into(NISA_BIN_MUL, l, l, 1.0, l);
  if (!none)
    loss_reduce_into(l, reduction, out);
}

// |d| < beta: 0.5 d^2 / beta, else |d| - 0.5 beta (beta = 0: |d|).
void smooth_l1_into(const at::Tensor& self, const at::Tensor& target, int64_t reduction,
                    double beta, at::Tensor& out) {
  at::Tensor d = self - target, ad = d.abs();
  at::Tensor l = beta == 0 ? ad : at::where(ad.lt(beta), d * d * (0.5 / beta), ad - 0.5 * beta);
  if (reduction == at::Reduction::None)
    out.copy_(l);
  else
    loss_reduce_into(l, reduction, out);
}

// The functional and out= kernels of loss NAME (PARAMS, ARGS: its
// parameters after self and target) computing BODY into `out`.
#define META_LOSS(name, PARAMS, ARGS, BODY)                                   \
  at::Tensor name(const at::Tensor& self, const at::Tensor& target PARAMS) {  \
    at::Tensor out = ew_meta<at::meta::structured_##name>(                    \
        Form::Functional, {}, self, target ARGS).tensor;                      \
    BODY;                                                                     \
    return out;                                                               \
  }                                                                           \
  at::Tensor& name##_out(const at::Tensor& self, const at::Tensor& target PARAMS, \
                         at::Tensor& result) {                                \
    EwResult r = ew_meta<at::meta::structured_##name>(Form::Out, result, self, target ARGS); \
    return compute_in(r, result, [&](at::Tensor& out) { BODY; });            \
  }
#define MSE_PARAMS , int64_t reduction
#define MSE_ARGS , reduction
META_LOSS(mse_loss, MSE_PARAMS, MSE_ARGS, mse_into(self, target, reduction, out))
#define SMOOTH_L1_PARAMS , int64_t reduction, double beta
#define SMOOTH_L1_ARGS , reduction, beta
META_LOSS(smooth_l1_loss, SMOOTH_L1_PARAMS, SMOOTH_L1_ARGS,
          smooth_l1_into(self, target, reduction, beta, out))

at::Tensor mse_loss_backward(const at::Tensor& grad_output, const at::Tensor& self,
                             const at::Tensor& target, int64_t reduction) {
  return (self - target) * grad_scale(grad_output, self, reduction) * 2.0;
}

at::Tensor smooth_l1_loss_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                   const at::Tensor& target, int64_t reduction,
                                   double beta) {
  at::Tensor d = self - target;
  at::Tensor g = beta == 0 ? d.sign() : at::where(d.abs().lt(beta), d / beta, d.sign());
  return g * grad_scale(grad_output, self, reduction);
}

// |d| < delta: 0.5 d^2, else delta (|d| - 0.5 delta).
at::Tensor huber_loss(const at::Tensor& self, const at::Tensor& target,
                      int64_t reduction, double delta) {
  TORCH_CHECK(delta > 0, "huber_loss does not support non-positive values for delta.");
  at::Tensor d = self - target, ad = d.abs();
  at::Tensor l = at::where(ad.lt(delta), d * d * 0.5, (ad - 0.5 * delta) * delta);
  return reduce(l, reduction);
}

at::Tensor huber_loss_backward(const at::Tensor& grad_output, const at::Tensor& self,
                               const at::Tensor& target, int64_t reduction, double delta) {
  at::Tensor d = self - target;
  at::Tensor g = at::where(d.abs().lt(delta), d, d.sign() * delta);
  return g * grad_scale(grad_output, self, reduction);
}

void check_probabilities(const at::Tensor& self) {
  // One read-back: the largest distance from 0.5 (NaN propagates).
  double far = self.numel() ? (self - 0.5).abs().amax().item<double>() : 0.0;
  TORCH_CHECK(far <= 0.5, "all elements of input should be between 0 and 1");
}

at::Tensor binary_cross_entropy(const at::Tensor& self, const at::Tensor& target,
                                const std::optional<at::Tensor>& weight,
                                int64_t reduction) {
  TORCH_CHECK(self.sizes() == target.sizes(), "Using a target size (", target.sizes(),
              ") that is different to the input size (", self.sizes(), ") is deprecated. "
              "Please ensure they have the same size.");
  check_probabilities(self);
  // -(t log x + (1 - t) log(1 - x)), each log clamped at -100 as on the CPU.
  at::Tensor lx = at::clamp_min(self.log(), -100);
  at::Tensor l1x = at::clamp_min((1 - self).log(), -100);
  at::Tensor l = ((target - 1) * l1x).sub_(target * lx);
  if (weight && weight->defined())
    l.mul_(*weight);
  return reduce(l, reduction);
}

at::Tensor binary_cross_entropy_backward(const at::Tensor& grad_output,
                                         const at::Tensor& self, const at::Tensor& target,
                                         const std::optional<at::Tensor>& weight,
                                         int64_t reduction) {
  // (x - t) / max(x (1 - x), 1e-12), as the CPU kernel.
  at::Tensor denom = at::clamp_min((1 - self) * self, 1e-12);
  at::Tensor g = (self - target) / denom * grad_scale(grad_output, self, reduction);
  if (weight && weight->defined())
    g.mul_(*weight);
  return g;
}

// log(1 + y) for y >= 0 without losing small y: y log(u) / (u - 1), u = 1 + y.
at::Tensor log1p_nonneg(const at::Tensor& y) {
  at::Tensor u = y + 1;
  at::Tensor exact = u.eq(1);
  at::Tensor den = (u - 1).masked_fill_(exact, 1.0);
  return at::where(exact, y, y * u.log() / den);
}

// log(sigmoid(x)) = min(x, 0) - log(1 + exp(-|x|)).
at::Tensor log_sig(const at::Tensor& x) {
  return x.masked_fill(x.gt(0), 0.0) - log1p_nonneg(x.abs().neg().exp());
}

at::Tensor bce_with_logits(const at::Tensor& self, const at::Tensor& target,
                           const std::optional<at::Tensor>& weight,
                           const std::optional<at::Tensor>& pos_weight,
                           int64_t reduction) {
  at::Tensor ls = log_sig(self);
  if (pos_weight && pos_weight->defined())
    ls.mul_((*pos_weight - 1) * target + 1);
  at::Tensor l = (1 - target) * self - ls;
  if (weight && weight->defined())
    l.mul_(*weight);
  return reduce(l, reduction);
}

struct NllParts {
  at::Tensor input2d;  // [N, C]
  at::Tensor safe;     // targets with ignored ones replaced by 0, [N, 1]
  at::Tensor weight;   // per-sample weight (0 where ignored), [N]
};

// After the metas' checks of shapes and weight.
NllParts nll_parts(const at::Tensor& self, const at::Tensor& target,
                   const std::optional<at::Tensor>& weight, int64_t ignore_index) {
  at::Tensor input2d = self.dim() == 1 ? self.unsqueeze(0) : self;
  at::Tensor tgt = target.reshape({-1});
  at::Tensor valid = tgt.ne(ignore_index);
  at::Tensor safe = at::where(valid, tgt, at::zeros({}, tgt.options()));
  at::Tensor w = valid.to(self.scalar_type());
  if (weight && weight->defined())
    w = w * weight->index_select(0, safe);
  return {input2d, safe.unsqueeze(1), w};
}

// The loss and the total weight into @out and @total, the results of
// nll_loss_forward's structured meta.
void nll_into(const at::Tensor& self, const at::Tensor& target,
              const std::optional<at::Tensor>& weight, int64_t reduction,
              int64_t ignore_index, at::Tensor& out, at::Tensor& total) {
  NllParts p = nll_parts(self, target, weight, ignore_index);
  at::Tensor picked = p.input2d.gather(1, p.safe).squeeze(1);
  at::Tensor losses = (picked * p.weight).neg();
  at::sum_out(total, p.weight, at::IntArrayRef{});
  if (reduction == at::Reduction::None) {
    out.copy_(losses.view(out.sizes()));
    return;
  }
  at::sum_out(out, losses, at::IntArrayRef{});
  if (reduction == at::Reduction::Mean)
    out.div_(total);
}

using nll_meta = at::meta::structured_nll_loss_forward;
std::tuple<at::Tensor, at::Tensor> nll_loss_forward(
    const at::Tensor& self, const at::Tensor& target,
    const std::optional<at::Tensor>& weight, int64_t reduction, int64_t ignore_index) {
  auto [out, total] = meta_results<nll_meta, 2>(Form::Functional, {}, self, target,
                                                opt_ref(weight), reduction, ignore_index);
  nll_into(self, target, weight, reduction, ignore_index, out, total);
  return {out, total};
}
std::tuple<at::Tensor&, at::Tensor&> nll_loss_forward_out(
    const at::Tensor& self, const at::Tensor& target,
    const std::optional<at::Tensor>& weight, int64_t reduction, int64_t ignore_index,
    at::Tensor& out, at::Tensor& total) {
  meta_results<nll_meta, 2>(Form::Out, {out, total}, self, target, opt_ref(weight),
                            reduction, ignore_index);
  nll_into(self, target, weight, reduction, ignore_index, out, total);
  return {out, total};
}

// -w[t] grad (over the total weight for 'mean') at each row's target.
void nll_grad_into(const at::Tensor& grad_output, const at::Tensor& self,
                   const at::Tensor& target, const std::optional<at::Tensor>& weight,
                   int64_t reduction, int64_t ignore_index, const at::Tensor& total_weight,
                   at::Tensor& grad) {
  NllParts p = nll_parts(self, target, weight, ignore_index);
  at::Tensor coef = p.weight.neg();
  if (reduction == at::Reduction::None)
    coef = coef * grad_output.reshape({-1});
  else if (reduction == at::Reduction::Mean)
    coef = coef * (grad_output / total_weight);
  else
    coef = coef * grad_output;
  grad.zero_();
  at::Tensor rows = self.dim() == 1 ? grad.unsqueeze(0) : grad;
  rows.scatter_add_(1, p.safe, coef.unsqueeze(1).to(grad.scalar_type()));
}

using nll_grad_meta = at::meta::structured_nll_loss_backward;
at::Tensor nll_loss_backward(const at::Tensor& grad_output, const at::Tensor& self,
                             const at::Tensor& target,
                             const std::optional<at::Tensor>& weight,
                             int64_t reduction, int64_t ignore_index,
                             const at::Tensor& total_weight) {
  auto [grad] = meta_results<nll_grad_meta>(Form::Functional, {}, grad_output, self, target,
                                            opt_ref(weight), reduction, ignore_index,
                                            total_weight);
  nll_grad_into(grad_output, self, target, weight, reduction, ignore_index, total_weight,
                grad);
  return grad;
}
at::Tensor& nll_loss_backward_out(const at::Tensor& grad_output, const at::Tensor& self,
                                  const at::Tensor& target,
                                  const std::optional<at::Tensor>& weight,
                                  int64_t reduction, int64_t ignore_index,
                                  const at::Tensor& total_weight, at::Tensor& grad_input) {
  meta_results<nll_grad_meta>(Form::Out, {grad_input}, grad_output, self, target,
                              opt_ref(weight), reduction, ignore_index, total_weight);
  nll_grad_into(grad_output, self, target, weight, reduction, ignore_index, total_weight,
                grad_input);
  return grad_input;
}

// [N, C, d1..dk] with targets [N, d1..dk] as nll_loss over N*d1*..*dk rows.
at::Tensor rows_of(const at::Tensor& self) {
  return self.movedim(1, -1).reshape({-1, self.size(1)});
}

void check_2d(const at::Tensor& self, const at::Tensor& target) {
  TORCH_CHECK(self.dim() == 4 && target.dim() == 3 && self.size(0) == target.size(0) &&
              self.size(2) == target.size(1) && self.size(3) == target.size(2),
              "nll_loss2d: expected input [N, C, H, W] and target [N, H, W], got ",
              self.sizes(), " and ", target.sizes());
}

std::tuple<at::Tensor, at::Tensor> nll_loss2d_forward(
    const at::Tensor& self, const at::Tensor& target,
    const std::optional<at::Tensor>& weight, int64_t reduction, int64_t ignore_index) {
  check_2d(self, target);
  auto [out, total] = at::nll_loss_forward(rows_of(self), target.reshape({-1}), weight,
                                           reduction, ignore_index);
  if (reduction == at::Reduction::None)
    out = out.view(target.sizes());
  return {out, total};
}

at::Tensor nll_loss2d_backward(const at::Tensor& grad_output, const at::Tensor& self,
                               const at::Tensor& target,
                               const std::optional<at::Tensor>& weight,
                               int64_t reduction, int64_t ignore_index,
                               const at::Tensor& total_weight) {
  check_2d(self, target);
  at::Tensor g = reduction == at::Reduction::None ? grad_output.reshape({-1}) : grad_output;
  at::Tensor rows = at::nll_loss_backward(g, rows_of(self), target.reshape({-1}), weight,
                                          reduction, ignore_index, total_weight);
  std::vector<int64_t> shape = {self.size(0), self.size(2), self.size(3), self.size(1)};
  return rows.view(shape).movedim(-1, 1).contiguous();
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("mse_loss", mse_loss);
  m.impl("mse_loss.out", mse_loss_out);
  m.impl("mse_loss_backward", mse_loss_backward);
  m.impl("smooth_l1_loss", smooth_l1_loss);
  m.impl("smooth_l1_loss.out", smooth_l1_loss_out);
  m.impl("smooth_l1_loss_backward", smooth_l1_loss_backward);
  m.impl("huber_loss", huber_loss);
  m.impl("huber_loss_backward", huber_loss_backward);
  m.impl("binary_cross_entropy", binary_cross_entropy);
  m.impl("binary_cross_entropy_backward", binary_cross_entropy_backward);
  m.impl("binary_cross_entropy_with_logits", bce_with_logits);
  m.impl("nll_loss_forward", nll_loss_forward);
  m.impl("nll_loss_forward.output", nll_loss_forward_out);
  m.impl("nll_loss_backward", nll_loss_backward);
  m.impl("nll_loss_backward.grad_input", nll_loss_backward_out);
  m.impl("nll_loss2d_forward", nll_loss2d_forward);
  m.impl("nll_loss2d_backward", nll_loss2d_backward);
}

}  // namespace torch_neuron

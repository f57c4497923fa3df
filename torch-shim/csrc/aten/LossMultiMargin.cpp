// SPDX-License-Identifier: MIT
// multi_margin_loss and multilabel_margin_loss, forward and backward,
// composed of card operations with the CPU kernels' definitions:
//   multi_margin:  sum_{j != y} w[y] max(0, margin - x[y] + x[j])^p / C
//   multilabel:    sum_{k valid} sum_{j not a target} max(0, 1 - x[y_k] + x[j]) / C
// where a multilabel target row's valid labels are those before its first -1.
#include "NeuronScatter.h"

namespace torch_neuron {
namespace {

at::Tensor reduce_loss(const at::Tensor& per_sample, int64_t reduction, bool keep_dim) {
  if (reduction == at::Reduction::Mean)
    return per_sample.mean();
  if (reduction == at::Reduction::Sum)
    return per_sample.sum();
  return keep_dim ? per_sample : per_sample.reshape({});
}

// The gradient of the loss with respect to each sample's loss, [N, 1].
at::Tensor per_sample_grad(const at::Tensor& grad_output, int64_t n, int64_t reduction) {
  if (reduction == at::Reduction::None && grad_output.dim() > 0)
    return grad_output.reshape({n, 1});
  at::Tensor g = grad_output.reshape({1, 1});
  return reduction == at::Reduction::Mean ? g / static_cast<double>(n) : g;
}

// ---- multi_margin_loss -----------------------------------------------------

struct MultiMargin {
  at::Tensor x, t;   // [N, C], [N, 1] int64
  int64_t n, c;
};

MultiMargin mm_inputs(const at::Tensor& self, const at::Tensor& target, const at::Scalar& p,
                      const std::optional<at::Tensor>& weight) {
  check_device(self, target);
  int64_t c = self.dim() == 0 ? 1 : self.size(-1);
  int64_t n = self.dim() <= 1 ? 1 : self.size(0);
  TORCH_CHECK(self.numel() > 0 && self.dim() <= 2, "Expected non-empty vector or matrix "
              "with optional 0-dim batch size, but got: ", self.sizes());
  TORCH_CHECK(target.dim() <= 1 && target.numel() == n, "inconsistent target size, "
              "expected ", n, " but got ", target.sizes());
  TORCH_CHECK(p.toDouble() == 1 || p.toDouble() == 2, "only p == 1 and p == 2 supported");
  TORCH_CHECK(target.scalar_type() == at::kLong, "multi_margin_loss: expected int64 "
              "targets, got ", target.scalar_type());
  if (weight && weight->defined()) {
    check_device(self, *weight);
    TORCH_CHECK(weight->numel() == c && weight->dim() <= 1, "inconsistent weight size, "
                "expected ", c, " but got ", weight->sizes());
  }
  return {self.reshape({n, c}), target.reshape({n, 1}), n, c};
}

// max(0, margin - x[y] + x[j]) for j != y (0 at j = y), [N, C].
at::Tensor mm_hinge(const MultiMargin& m, const at::Scalar& margin) {
  at::Tensor xy = m.x.gather(1, m.t);
  at::Tensor z = (m.x - xy).add_(margin).relu_();
  return z.scatter_(1, m.t, 0);
}

at::Tensor mm_weight(const MultiMargin& m, const std::optional<at::Tensor>& weight) {
  if (!weight || !weight->defined())
    return at::Tensor();
  return weight->reshape({-1}).index_select(0, m.t.reshape({-1})).reshape({m.n, 1});
}

at::Tensor mm_loss(const at::Tensor& self, const at::Tensor& target,
                             const at::Scalar& p, const at::Scalar& margin,
                             const std::optional<at::Tensor>& weight, int64_t reduction) {
  MultiMargin m = mm_inputs(self, target, p, weight);
  at::Tensor h = mm_hinge(m, margin);
  if (p.toDouble() == 2)
    h = h * h;
  at::Tensor w = mm_weight(m, weight);
  if (w.defined())
    h = h * w;
  at::Tensor loss = h.sum(1).div_(static_cast<double>(m.c));
  return reduce_loss(loss, reduction, target.dim() > 0);
}

at::Tensor& mm_loss_out(const at::Tensor& self, const at::Tensor& target,
                                  const at::Scalar& p, const at::Scalar& margin,
                                  const std::optional<at::Tensor>& weight, int64_t reduction,
                                  at::Tensor& out) {
  at::Tensor r = mm_loss(self, target, p, margin, weight, reduction);
  return into(out, r);
}

at::Tensor mm_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                      const at::Tensor& target, const at::Scalar& p,
                                      const at::Scalar& margin,
                                      const std::optional<at::Tensor>& weight,
                                      int64_t reduction) {
  MultiMargin m = mm_inputs(self, target, p, weight);
  at::Tensor z = mm_hinge(m, margin);
  at::Tensor d = p.toDouble() == 2 ? z * 2 : z.gt(0).to(z.scalar_type());
  at::Tensor w = mm_weight(m, weight);
  if (w.defined())
    d = d * w;
  d = d * per_sample_grad(grad_output, m.n, reduction) / static_cast<double>(m.c);
  // x[y] enters every term with the opposite sign
  d.scatter_(1, m.t, d.sum(1, true).neg());
  return d.reshape(self.sizes());
}

at::Tensor& mm_backward_out(const at::Tensor& grad_output,
                                           const at::Tensor& self, const at::Tensor& target,
                                           const at::Scalar& p, const at::Scalar& margin,
                                           const std::optional<at::Tensor>& weight,
                                           int64_t reduction, at::Tensor& grad_input) {
  at::Tensor r = mm_backward(grad_output, self, target, p, margin, weight,
                                            reduction);
  return into(grad_input, r);
}

// ---- multilabel_margin_loss ------------------------------------------------

struct MultiLabel {
  at::Tensor x, t, valid, is_target;  // [N, C]; t int64 with -1 -> 0; valid as x's dtype
  int64_t n, c;
};

MultiLabel ml_inputs(const at::Tensor& self, const at::Tensor& target) {
  check_device(self, target);
  TORCH_CHECK(self.numel() > 0 && self.dim() <= 2, "Expected non-empty vector or matrix "
              "with optional 0-dim batch size, but got: ", self.sizes());
  TORCH_CHECK(target.sizes() == self.sizes(), "inconsistent target size: ", target.sizes(),
              " for input of size: ", self.sizes());
  TORCH_CHECK(target.scalar_type() == at::kLong, "multilabel_margin_loss: expected int64 "
              "targets, got ", target.scalar_type());
  int64_t c = self.dim() == 0 ? 1 : self.size(-1);
  int64_t n = self.dim() <= 1 ? 1 : self.size(0);
  MultiLabel m{self.reshape({n, c}), target.reshape({n, c}), {}, {}, n, c};
  // valid[k]: no -1 at or before k (a -1 count through an upper-triangular
  // matrix of ones, exact in floating point for these small counts)
  at::Tensor neg = m.t.eq(-1).to(self.scalar_type());
  at::Tensor upper = at::ones({c, c}, self.options()).triu();
  m.valid = neg.matmul(upper).eq(0).to(self.scalar_type());
  m.t = at::where(m.valid.to(at::kBool), m.t, at::zeros({}, m.t.options()));
  // is_target[j] = 1 where j is a valid label (max: invalid ones add nothing)
  m.is_target = at::zeros_like(m.x);
  scatter_elements(m.is_target, 1, m.t, m.valid, NISA_SCAT_MAX, "multilabel_margin_loss");
  return m;
}

// max(0, 1 - x[y_k] + x[j]) for valid k and non-target j, [N, K, J].
at::Tensor ml_hinge(const MultiLabel& m) {
  at::Tensor xy = m.x.gather(1, m.t);
  at::Tensor z = (m.x.unsqueeze(1) - xy.unsqueeze(2)).add_(1).relu_();
  return z * m.valid.unsqueeze(2) * (1 - m.is_target).unsqueeze(1);
}

std::tuple<at::Tensor, at::Tensor> ml_forward(
    const at::Tensor& self, const at::Tensor& target, int64_t reduction) {
  MultiLabel m = ml_inputs(self, target);
  at::Tensor loss = ml_hinge(m).sum({1, 2}).div_(static_cast<double>(m.c));
  return {reduce_loss(loss, reduction, self.dim() == 2),
          m.is_target.reshape(self.sizes())};
}

std::tuple<at::Tensor&, at::Tensor&> ml_forward_out(
    const at::Tensor& self, const at::Tensor& target, int64_t reduction, at::Tensor& output,
    at::Tensor& is_target) {
  auto [o, it] = ml_forward(self, target, reduction);
  resize_out(output, o.sizes());
  resize_out(is_target, it.sizes());
  output.copy_(o);
  is_target.copy_(it);
  return {output, is_target};
}

at::Tensor ml_backward(const at::Tensor& grad_output,
                                           const at::Tensor& self, const at::Tensor& target,
                                           int64_t reduction, const at::Tensor& is_target) {
  MultiLabel m = ml_inputs(self, target);
  at::Tensor h = ml_hinge(m).gt(0).to(self.scalar_type())
                 * m.valid.unsqueeze(2) * (1 - m.is_target).unsqueeze(1);
  at::Tensor g = h.sum(1);                          // + at each non-target j
  at::Tensor pos = at::zeros_like(m.x);
  scatter_elements(pos, 1, m.t, h.sum(2), NISA_SCAT_ADD, "multilabel_margin_loss_backward");
  at::Tensor r = (g - pos) * per_sample_grad(grad_output, m.n, reduction)
                 / static_cast<double>(m.c);
  return r.reshape(self.sizes());
}

at::Tensor& ml_backward_out(const at::Tensor& grad_output,
                                                const at::Tensor& self,
                                                const at::Tensor& target, int64_t reduction,
                                                const at::Tensor& is_target,
                                                at::Tensor& grad_input) {
  at::Tensor r = ml_backward(grad_output, self, target, reduction,
                                                 is_target);
  return into(grad_input, r);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("multi_margin_loss", mm_loss);
  m.impl("multi_margin_loss.out", mm_loss_out);
  m.impl("multi_margin_loss_backward", mm_backward);
  m.impl("multi_margin_loss_backward.grad_input", mm_backward_out);
  m.impl("multilabel_margin_loss_forward", ml_forward);
  m.impl("multilabel_margin_loss_forward.output", ml_forward_out);
  m.impl("multilabel_margin_loss_backward", ml_backward);
  m.impl("multilabel_margin_loss_backward.grad_input", ml_backward_out);
}

}  // namespace torch_neuron

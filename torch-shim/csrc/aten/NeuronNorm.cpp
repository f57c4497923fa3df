// SPDX-License-Identifier: MIT
// Batch norm (training: batch statistics and the running-stat update with
// momentum and the unbiased variance; eval: the running statistics) and
// group norm, forward and backward, composed from the card's reductions and
// elementwise instructions (ATen operators that dispatch to the neuron
// kernels). Instance norm reaches batch norm through a reshape. bfloat16
// tensors are normalized in float32 and rounded once, as on the CPU.
#include "NeuronOps.h"

namespace torch_neuron {
namespace {

using Tensors3 = std::tuple<at::Tensor, at::Tensor, at::Tensor>;
constexpr at::ScalarType kAcc = at::kFloat;
const int64_t kNLdims[] = {0, 2};
const at::IntArrayRef kNL(kNLdims);  // N and L of [N, C, L]
const int64_t kLdims[] = {2};
const at::IntArrayRef kL(kLdims);  // D of [N, G, D]

const at::Tensor* opt(const std::optional<at::Tensor>& t) {
  return t && t->defined() ? &*t : nullptr;
}

void check_norm_input(const at::Tensor& x, const char* op) {
  TORCH_CHECK(is_neuron(x), "neuron: ", op, ": expected a neuron tensor");
  TORCH_CHECK(card_float(x.scalar_type()), "neuron: ", op,
              " supports float32, bfloat16 and float16, not ", x.scalar_type());
  TORCH_CHECK(x.dim() >= 2, "neuron: ", op, ": expected an input of at least 2 dims "
              "[N, C, ...], got ", x.sizes());
}

// A per-channel [C] tensor as float32 [1, C, 1] (broadcasts over [N, C, L]).
at::Tensor per_channel(const at::Tensor& t, int64_t C, const at::Tensor& x, const char* what) {
  check_device(x, t);
  TORCH_CHECK(t.numel() == C, "neuron: batch_norm: ", what, " should contain ", C,
              " elements not ", t.numel());
  return t.to(kAcc).reshape({1, C, 1});
}

// @x [N, C, *] as float32 [N, C, L].
at::Tensor as_ncl(const at::Tensor& x) {
  return x.to(kAcc).reshape({x.size(0), x.size(1), -1});
}

// The dtype of the statistics: the running stats', the weight's, or the input's.
at::ScalarType stat_dtype(const at::Tensor& x, const at::Tensor* w, const at::Tensor* rm) {
  if (rm)
    return rm->scalar_type();
  return w ? w->scalar_type() : x.scalar_type();
}

Tensors3 batch_norm(const at::Tensor& input, const std::optional<at::Tensor>& weight_opt,
                    const std::optional<at::Tensor>& bias_opt,
                    const std::optional<at::Tensor>& rmean_opt,
                    const std::optional<at::Tensor>& rvar_opt, bool training,
                    double momentum, double eps) {
  check_norm_input(input, "batch_norm");
  const at::Tensor *w = opt(weight_opt), *b = opt(bias_opt);
  const at::Tensor *rm = opt(rmean_opt), *rv = opt(rvar_opt);
  int64_t C = input.size(1);
  at::ScalarType sdt = stat_dtype(input, w, rm);
  at::Tensor x = as_ncl(input), mean, invstd;
  if (training) {
    int64_t n = input.numel() / std::max<int64_t>(C, 1);
    mean = x.mean(kNL);
    at::Tensor xc = x - mean.view({1, C, 1});
    at::Tensor sq = (xc * xc).sum(kNL);
    invstd = sq.div(static_cast<double>(n)).add_(eps).rsqrt_();
    if (rm) {
      at::Tensor upd = per_channel(*rm, C, input, "running_mean").view({C}) * (1 - momentum) +
                       mean * momentum;
      rm->copy_(upd.view(rm->sizes()));
    }
    if (rv) {
      at::Tensor unbiased = sq.div(static_cast<double>(n - 1));
      at::Tensor upd = per_channel(*rv, C, input, "running_var").view({C}) * (1 - momentum) +
                       unbiased * momentum;
      rv->copy_(upd.view(rv->sizes()));
    }
  } else {
    TORCH_CHECK(rm && rv, "neuron: batch_norm: running_mean and running_var must be "
                "defined in evaluation mode");
    mean = per_channel(*rm, C, input, "running_mean").view({C});
    invstd = per_channel(*rv, C, input, "running_var").view({C}).add(eps).rsqrt_();
  }
  at::Tensor y = (x - mean.view({1, C, 1})).mul_(invstd.view({1, C, 1}));
  if (w)
    y.mul_(per_channel(*w, C, input, "weight"));
  if (b)
    y.add_(per_channel(*b, C, input, "bias"));
  at::Tensor out = y.to(input.scalar_type()).view(input.sizes());
  if (!training)
    return {out, empty_neuron({0}, sdt, input.device()), empty_neuron({0}, sdt, input.device())};
  return {out, mean.to(sdt), invstd.to(sdt)};
}

Tensors3 batch_norm_backward(const at::Tensor& grad_out, const at::Tensor& input,
                             const std::optional<at::Tensor>& weight_opt,
                             const std::optional<at::Tensor>& rmean_opt,
                             const std::optional<at::Tensor>& rvar_opt,
                             const std::optional<at::Tensor>& smean_opt,
                             const std::optional<at::Tensor>& sinvstd_opt, bool train,
                             double eps, std::array<bool, 3> mask) {
  check_norm_input(input, "batch_norm_backward");
  check_device(input, grad_out);
  const at::Tensor *w = opt(weight_opt), *rm = opt(rmean_opt), *rv = opt(rvar_opt);
  const at::Tensor *sm = opt(smean_opt), *si = opt(sinvstd_opt);
  int64_t C = input.size(1), n = input.numel() / std::max<int64_t>(C, 1);
  at::Tensor mean, invstd;
  if (train) {
    TORCH_CHECK(sm && si, "neuron: batch_norm_backward: save_mean and save_invstd are "
                "needed in training mode");
    mean = per_channel(*sm, C, input, "save_mean");
    invstd = per_channel(*si, C, input, "save_invstd");
  } else {
    TORCH_CHECK(rm && rv, "neuron: batch_norm_backward: running_mean and running_var "
                "are needed in evaluation mode");
    mean = per_channel(*rm, C, input, "running_mean");
    invstd = per_channel(*rv, C, input, "running_var").add(eps).rsqrt_();
  }
  at::Tensor x = as_ncl(input), g = as_ncl(grad_out);
  at::Tensor xhat = (x - mean).mul_(invstd);
  at::Tensor gsum = g.sum(kNL), gxsum = (g * xhat).sum(kNL);
  at::ScalarType pdt = w ? w->scalar_type() : stat_dtype(input, nullptr, rm);
  at::Tensor gi, gw, gb;
  if (mask[0]) {
    at::Tensor scale = w ? invstd * per_channel(*w, C, input, "weight") : invstd;
    at::Tensor t = g;
    if (train) {
      double inv_n = 1.0 / static_cast<double>(n);
      t = g - gsum.view({1, C, 1}).mul(inv_n) - xhat * gxsum.view({1, C, 1}).mul(inv_n);
    }
    gi = (t * scale).to(input.scalar_type()).view(input.sizes());
  }
  if (mask[1])
    gw = gxsum.to(pdt);
  if (mask[2])
    gb = gsum.to(pdt);
  return {gi, gw, gb};
}

Tensors3 batch_norm_legit(const at::Tensor& input, const std::optional<at::Tensor>& weight,
                          const std::optional<at::Tensor>& bias, at::Tensor& running_mean,
                          at::Tensor& running_var, bool training, double momentum, double eps) {
  return batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps);
}

Tensors3 batch_norm_legit_no_stats(const at::Tensor& input,
                                   const std::optional<at::Tensor>& weight,
                                   const std::optional<at::Tensor>& bias, bool training,
                                   double momentum, double eps) {
  return batch_norm(input, weight, bias, std::nullopt, std::nullopt, training, momentum, eps);
}

Tensors3 batch_norm_legit_no_training(const at::Tensor& input,
                                      const std::optional<at::Tensor>& weight,
                                      const std::optional<at::Tensor>& bias,
                                      const at::Tensor& running_mean,
                                      const at::Tensor& running_var, double momentum,
                                      double eps) {
  return batch_norm(input, weight, bias, running_mean, running_var, false, momentum, eps);
}

// PyTorch 2.6's training path of batch norm: the batch statistics and the
// running-stat update, plus an empty uint8 "reserve" (as on the CPU).
std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> batch_norm_with_update(
    const at::Tensor& input, const std::optional<at::Tensor>& weight,
    const std::optional<at::Tensor>& bias, at::Tensor& running_mean, at::Tensor& running_var,
    double momentum, double eps) {
  auto [out, mean, invstd] =
      batch_norm(input, weight, bias, running_mean, running_var, true, momentum, eps);
  return {out, mean, invstd, empty_neuron({0}, at::kByte, input.device())};
}

std::tuple<at::Tensor&, at::Tensor&, at::Tensor&, at::Tensor&> batch_norm_with_update_out(
    const at::Tensor& input, const std::optional<at::Tensor>& weight,
    const std::optional<at::Tensor>& bias, at::Tensor& running_mean, at::Tensor& running_var,
    double momentum, double eps, at::Tensor& out, at::Tensor& save_mean,
    at::Tensor& save_invstd, at::Tensor& reserve) {
  auto [o, m, v] = batch_norm(input, weight, bias, running_mean, running_var, true, momentum,
                              eps);
  for (auto [src, dst] : {std::pair<const at::Tensor&, at::Tensor&>{o, out}, {m, save_mean},
                          {v, save_invstd}}) {
    resize_out(dst, src.sizes());
    dst.copy_(src);
  }
  resize_out(reserve, {0});
  return {out, save_mean, save_invstd, reserve};
}

// Its backward (weight may be undefined; @update: the statistics were the batch's).
Tensors3 batch_norm_backward_update(const at::Tensor& grad_out, const at::Tensor& input,
                                    const at::Tensor& weight,
                                    const std::optional<at::Tensor>& rmean,
                                    const std::optional<at::Tensor>& rvar,
                                    const std::optional<at::Tensor>& smean,
                                    const std::optional<at::Tensor>& svar, bool update,
                                    double eps, std::array<bool, 3> mask,
                                    const at::Tensor& reserve) {
  std::optional<at::Tensor> w;
  if (weight.defined())
    w = weight;
  return batch_norm_backward(grad_out, input, w, rmean, rvar, smean, svar, update, eps, mask);
}

// Group norm: @x seen as [N, G, D] (statistics) and [N, C, HxW] (affine).
Tensors3 group_norm(const at::Tensor& input, const std::optional<at::Tensor>& weight_opt,
                    const std::optional<at::Tensor>& bias_opt, c10::SymInt N_, c10::SymInt C_,
                    c10::SymInt HxW_, int64_t group, double eps) {
  check_norm_input(input, "group_norm");
  int64_t N = N_.expect_int(), C = C_.expect_int(), HxW = HxW_.expect_int();
  TORCH_CHECK(group > 0 && C % group == 0, "Expected number of channels in input to be "
              "divisible by num_groups, but got input of shape ", input.sizes(), " and "
              "num_groups=", group);
  TORCH_CHECK(input.numel() == N * C * HxW, "neuron: group_norm: input ", input.sizes(),
              " is not N=", N, " x C=", C, " x HxW=", HxW);
  const at::Tensor *w = opt(weight_opt), *b = opt(bias_opt);
  at::Tensor x = input.to(kAcc).reshape({N, group, -1});
  at::Tensor mean = x.mean(kL, true);
  at::Tensor xc = x - mean;
  at::Tensor rstd = (xc * xc).mean(kL, true).add_(eps).rsqrt_();
  at::Tensor y = (xc * rstd).view({N, C, HxW});
  if (w)
    y.mul_(per_channel(*w, C, input, "weight"));
  if (b)
    y.add_(per_channel(*b, C, input, "bias"));
  at::ScalarType dt = input.scalar_type();
  return {y.to(dt).view(input.sizes()), mean.to(dt).view({N, group}),
          rstd.to(dt).view({N, group})};
}

Tensors3 group_norm_backward(const at::Tensor& grad_out, const at::Tensor& input,
                             const at::Tensor& mean, const at::Tensor& rstd,
                             const std::optional<at::Tensor>& weight_opt, c10::SymInt N_,
                             c10::SymInt C_, c10::SymInt HxW_, int64_t group,
                             std::array<bool, 3> mask) {
  check_norm_input(input, "group_norm_backward");
  check_device(input, grad_out);
  int64_t N = N_.expect_int(), C = C_.expect_int(), HxW = HxW_.expect_int();
  TORCH_CHECK(group > 0 && C % group == 0 && input.numel() == N * C * HxW,
              "neuron: group_norm_backward: input ", input.sizes(), " is not N=", N,
              " x C=", C, " x HxW=", HxW, " in ", group, " groups");
  const at::Tensor* w = opt(weight_opt);
  at::Tensor mu = mean.to(kAcc).reshape({N, group, 1});
  at::Tensor rs = rstd.to(kAcc).reshape({N, group, 1});
  at::Tensor xhat = (input.to(kAcc).reshape({N, group, -1}) - mu).mul_(rs);
  at::Tensor g = grad_out.to(kAcc).reshape({N, C, HxW});
  at::Tensor xhat_c = xhat.view({N, C, HxW});
  at::Tensor gi, gw, gb;
  if (mask[0]) {
    at::Tensor gx = (w ? g * per_channel(*w, C, input, "weight") : g).reshape({N, group, -1});
    at::Tensor a = gx.mean(kL, true), c = (gx * xhat).mean(kL, true);
    gi = ((gx - a) - xhat * c).mul_(rs).to(input.scalar_type()).view(input.sizes());
  }
  at::ScalarType pdt = w ? w->scalar_type() : input.scalar_type();
  if (mask[1])
    gw = (g * xhat_c).sum(kNL).to(pdt);
  if (mask[2])
    gb = g.sum(kNL).to(pdt);
  return {gi, gw, gb};
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("native_batch_norm", batch_norm);
  m.impl("native_batch_norm_backward", batch_norm_backward);
  m.impl("_native_batch_norm_legit", batch_norm_legit);
  m.impl("_native_batch_norm_legit.no_stats", batch_norm_legit_no_stats);
  m.impl("_native_batch_norm_legit_no_training", batch_norm_legit_no_training);
  m.impl("_batch_norm_with_update", batch_norm_with_update);
  m.impl("_batch_norm_with_update.out", batch_norm_with_update_out);
  m.impl("batch_norm_backward", batch_norm_backward_update);
  m.impl("native_group_norm", group_norm);
  m.impl("native_group_norm_backward", group_norm_backward);
}

}  // namespace torch_neuron

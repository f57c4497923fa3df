// SPDX-License-Identifier: MIT
// The normalization operators: batch norm, layer norm and group norm,
// forward and backward, and renorm.
//
// Batch norm (training: batch statistics and the running-stat update with
// momentum and the unbiased variance; eval: the running statistics) and
// group norm, forward and backward, from the card's reductions and
// elementwise instructions: batch norm (on ResNets' hot path) issues them
// itself on descriptors, group norm through ATen operators that dispatch to
// the neuron kernels. Instance norm reaches batch norm through a reshape.
// bfloat16 and float16 tensors are normalized in float32 and rounded once,
// as on the CPU; float32 and float64 in their own type (acc_dtype()).
#include <ATen/AccumulateType.h>
#include <ATen/ops/renorm_meta.h>
#include <c10/util/accumulate.h>

#include "NeuronDesc.h"
#include "NeuronElementwise.h"
#include "NeuronMeta.h"

namespace torch_neuron {
namespace {

using Tensors3 = std::tuple<at::Tensor, at::Tensor, at::Tensor>;
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
              " supports float32, float64, bfloat16 and float16, not ", x.scalar_type());
  TORCH_CHECK(x.dim() >= 2, "neuron: ", op, ": expected an input of at least 2 dims "
              "[N, C, ...], got ", x.sizes());
}

// A per-channel [C] tensor as [1, C, 1] (broadcasts over [N, C, L]), in
// the type @x computes in.
at::Tensor per_channel(const at::Tensor& t, int64_t C, const at::Tensor& x, const char* what) {
  check_device(x, t);
  TORCH_CHECK(t.numel() == C, "neuron: batch_norm: ", what, " should contain ", C,
              " elements not ", t.numel());
  return t.to(acc_dtype(x.scalar_type())).reshape({1, C, 1});
}

// The dtype of the statistics: the running stats', the weight's, or the input's.
at::ScalarType stat_dtype(const at::Tensor& x, const at::Tensor* w, const at::Tensor* rm) {
  if (rm)
    return rm->scalar_type();
  return w ? w->scalar_type() : x.scalar_type();
}

// Batch norm issues its instructions itself, on descriptors of a few
// buffers (NeuronDesc.h): the same instructions, in the same order and
// with the same roundings, as the ATen operators it was first written
// with, without their dispatch, views and allocations. [C] vectors
// broadcast over [N, C, L] as [1, C, 1] descriptors of stride 0.

// A per-channel vector @t of @C elements (the running stats, weight, bias,
// saved statistics; any dtype of the card) as a [C] operand.
nrn_tensor_desc vec_desc(const at::Tensor& t, int64_t C, const at::Tensor& x, const char* what) {
  check_device(x, t);
  TORCH_CHECK(t.numel() == C, "neuron: batch_norm: ", what, " should contain ", C,
              " elements not ", t.numel());
  TORCH_CHECK(t.dim() == 1 || t.is_contiguous(), "neuron: batch_norm: ", what,
              " must be 1-d or contiguous, got sizes ", t.sizes(), " strides ", t.strides());
  nrn_tensor_desc d = desc(t);
  return view_desc(d, {C}, {t.dim() == 1 ? t.stride(0) : 1});
}

// A [C] operand seen as [1, C, 1].
nrn_tensor_desc chan(const nrn_tensor_desc& v) {
  return view_desc(v, {1, v.shape[0], 1}, {0, v.strides[0], 0});
}

// A contiguous tensor of @x's sizes [N, C, *] as [N, C, L].
nrn_tensor_desc ncl(const at::Tensor& t, int64_t N, int64_t C, int64_t L) {
  return view_desc(desc(t), {N, C, L}, {C * L, L, 1});
}

// @x [N, C, *] as an [N, C, L] operand of type @acc: itself when it is of
// that type and its spatial dims merge into one (contiguous or
// channels-last), else a contiguous copy in @acc, kept alive in @keep.
nrn_tensor_desc ncl_acc(const Card& card, const at::Tensor& x, at::Tensor& keep,
                        at::ScalarType acc) {
  int64_t N = x.size(0), C = x.size(1), L = x.numel() / (N * C), Ls = 1, next = 0;
  bool merge = true, first = true;  // Ls may be 0 (an expanded gradient)
  for (int64_t d = x.dim() - 1; d >= 2; d--) {
    if (x.size(d) == 1)
      continue;
    if (first)
      Ls = x.stride(d);
    else if (x.stride(d) != next)
      merge = false;
    first = false;
    next = x.stride(d) * x.size(d);
  }
  if (x.scalar_type() == acc && merge)
    return view_desc(desc(x), {N, C, L}, {x.stride(0), x.stride(1), Ls});
  keep = empty_neuron(x.sizes(), acc, x.device());
  nrn_tensor_desc k = desc(keep);
  card.copy(k, x);
  return view_desc(k, {N, C, L}, {C * L, L, 1});
}

void check_nonempty(const at::Tensor& x) {
  TORCH_CHECK(x.numel() > 0, "input tensor must have at least one element, but got "
              "input_sizes = ", x.sizes());
}

// @s = sum of @src [N, C, L] over N and L (through @part [1, C, L]), as
// the ATen sum over dims (0, 2): dim 0 first, each rounded to @s's type.
void sum_nl(const Card& card, const nrn_tensor_desc& s, const nrn_tensor_desc& src,
            const nrn_tensor_desc& part) {
  card.reduce(NISA_RED_SUM, part, src, 0);
  card.reduce(NISA_RED_SUM, chan(s), part, 2);
}

Tensors3 batch_norm(const at::Tensor& input, const std::optional<at::Tensor>& weight_opt,
                    const std::optional<at::Tensor>& bias_opt,
                    const std::optional<at::Tensor>& rmean_opt,
                    const std::optional<at::Tensor>& rvar_opt, bool training,
                    double momentum, double eps) {
  check_norm_input(input, "batch_norm");
  check_nonempty(input);
  const at::Tensor *w = opt(weight_opt), *b = opt(bias_opt);
  const at::Tensor *rm = opt(rmean_opt), *rv = opt(rvar_opt);
  int64_t N = input.size(0), C = input.size(1), L = input.numel() / (N * C);
  at::ScalarType sdt = stat_dtype(input, w, rm), acc = acc_dtype(input.scalar_type());
  at::Device dev = input.device();
  Card card(input);
  at::Tensor xkeep, mean, invstd = empty_neuron({C}, acc, dev);
  nrn_tensor_desc x = ncl_acc(card, input, xkeep, acc), I = desc(invstd), M;
  at::Tensor a = empty_neuron(input.sizes(), acc, dev);  // x - mean, then y in acc
  nrn_tensor_desc A = ncl(a, N, C, L);
  if (training) {
    double n = static_cast<double>(N * L);
    mean = empty_neuron({C}, acc, dev);
    M = desc(mean);
    // Work space: the partial sums [1, C, L], sum of squares, two [C] temporaries.
    at::Tensor ws = empty_neuron({C * L + 3 * C}, acc, dev);
    nrn_tensor_desc W = desc(ws), P = view_desc(W, {1, C, L}, {C * L, L, 1});
    nrn_tensor_desc SQ = view_desc(W, {C}, {1}, C * L), TA = view_desc(W, {C}, {1}, C * L + C);
    nrn_tensor_desc TB = view_desc(W, {C}, {1}, C * L + 2 * C);
    sum_nl(card, M, x, P);
    card.scalar(NISA_BIN_DIV, M, M, n);  // mean
    card.bin(NISA_BIN_SUB, A, x, chan(M));
    {
      at::Tensor sq = empty_neuron(input.sizes(), acc, dev);
      nrn_tensor_desc S = ncl(sq, N, C, L);
      card.bin(NISA_BIN_MUL, S, A, A);
      sum_nl(card, SQ, S, P);
    }
    card.scalar(NISA_BIN_DIV, I, SQ, n);
    card.scalar(NISA_BIN_ADD, I, I, eps);
    card.unary(NISA_UN_RSQRT, I, I);
    // running = running * (1 - momentum) + batch statistic * momentum,
    // rounded to acc and then to the running stat's dtype.
    if (rm) {
      nrn_tensor_desc R = vec_desc(*rm, C, input, "running_mean");
      card.scalar(NISA_BIN_MUL, TA, R, 1 - momentum);
      card.scalar(NISA_BIN_MUL, TB, M, momentum);
      card.bin(NISA_BIN_ADD, R, TA, TB);
    }
    if (rv) {
      nrn_tensor_desc R = vec_desc(*rv, C, input, "running_var");
      card.scalar(NISA_BIN_DIV, TB, SQ, n - 1);  // the unbiased variance
      card.scalar(NISA_BIN_MUL, TA, R, 1 - momentum);
      card.scalar(NISA_BIN_MUL, TB, TB, momentum);
      card.bin(NISA_BIN_ADD, R, TA, TB);
    }
  } else {
    TORCH_CHECK(rm && rv, "neuron: batch_norm: running_mean and running_var must be "
                "defined in evaluation mode");
    M = vec_desc(*rm, C, input, "running_mean");
    card.scalar(NISA_BIN_ADD, I, vec_desc(*rv, C, input, "running_var"), eps);
    card.unary(NISA_UN_RSQRT, I, I);
    card.bin(NISA_BIN_SUB, A, x, chan(M));
  }
  // y = (x - mean) * invstd (* weight) (+ bias); the last product or sum is
  // stored straight in the output's dtype (rounded to acc first).
  bool same = input.scalar_type() == acc;
  at::Tensor out = same ? a : empty_neuron(input.sizes(), input.scalar_type(), dev);
  nrn_tensor_desc Y = same ? A : ncl(out, N, C, L);
  card.bin(NISA_BIN_MUL, w || b ? A : Y, A, chan(I));
  if (w)
    card.bin(NISA_BIN_MUL, b ? A : Y, A, chan(vec_desc(*w, C, input, "weight")));
  if (b)
    card.bin(NISA_BIN_ADD, Y, A, chan(vec_desc(*b, C, input, "bias")));
  if (!training)
    return {out, empty_neuron({0}, sdt, dev), empty_neuron({0}, sdt, dev)};
  if (sdt != acc)
    return {out, mean.to(sdt), invstd.to(sdt)};
  return {out, mean, invstd};
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
  check_nonempty(input);
  TORCH_CHECK(grad_out.sizes() == input.sizes(), "neuron: batch_norm_backward: "
              "grad_output ", grad_out.sizes(), " and input ", input.sizes(),
              " differ in shape");
  const at::Tensor *w = opt(weight_opt), *rm = opt(rmean_opt), *rv = opt(rvar_opt);
  const at::Tensor *sm = opt(smean_opt), *si = opt(sinvstd_opt);
  int64_t N = input.size(0), C = input.size(1), L = input.numel() / (N * C);
  at::ScalarType acc = acc_dtype(input.scalar_type());
  at::Device dev = input.device();
  Card card(input);
  // Work space: partial sums [1, C, L], and [C]: 1/sqrt(var + eps) in
  // evaluation, weight * invstd, the two mean terms.
  at::Tensor ws = empty_neuron({C * L + 4 * C}, acc, dev);
  nrn_tensor_desc W = desc(ws), P = view_desc(W, {1, C, L}, {C * L, L, 1});
  nrn_tensor_desc EI = view_desc(W, {C}, {1}, C * L), SC = view_desc(W, {C}, {1}, C * L + C);
  nrn_tensor_desc A1 = view_desc(W, {C}, {1}, C * L + 2 * C);
  nrn_tensor_desc A2 = view_desc(W, {C}, {1}, C * L + 3 * C);
  nrn_tensor_desc M, I;
  if (train) {
    TORCH_CHECK(sm && si, "neuron: batch_norm_backward: save_mean and save_invstd are "
                "needed in training mode");
    M = vec_desc(*sm, C, input, "save_mean");
    I = vec_desc(*si, C, input, "save_invstd");
  } else {
    TORCH_CHECK(rm && rv, "neuron: batch_norm_backward: running_mean and running_var "
                "are needed in evaluation mode");
    M = vec_desc(*rm, C, input, "running_mean");
    card.scalar(NISA_BIN_ADD, EI, vec_desc(*rv, C, input, "running_var"), eps);
    card.unary(NISA_UN_RSQRT, EI, EI);
    I = EI;
  }
  at::Tensor xkeep, gkeep;
  nrn_tensor_desc x = ncl_acc(card, input, xkeep, acc);
  nrn_tensor_desc g = ncl_acc(card, grad_out, gkeep, acc);
  at::Tensor xh = empty_neuron(input.sizes(), acc, dev), t = empty_neuron(input.sizes(), acc, dev);
  at::Tensor gsum = empty_neuron({C}, acc, dev), gxsum = empty_neuron({C}, acc, dev);
  nrn_tensor_desc X = ncl(xh, N, C, L), T = ncl(t, N, C, L), GS = desc(gsum), GX = desc(gxsum);
  card.bin(NISA_BIN_SUB, X, x, chan(M));
  card.bin(NISA_BIN_MUL, X, X, chan(I));  // xhat
  sum_nl(card, GS, g, P);
  card.bin(NISA_BIN_MUL, T, g, X);
  sum_nl(card, GX, T, P);
  at::ScalarType pdt = w ? w->scalar_type() : stat_dtype(input, nullptr, rm);
  at::Tensor gi, gw, gb;
  if (mask[0]) {
    nrn_tensor_desc scale = I;
    if (w) {
      card.bin(NISA_BIN_MUL, chan(SC), chan(I), chan(vec_desc(*w, C, input, "weight")));
      scale = SC;
    }
    nrn_tensor_desc src = g;
    if (train) {
      // (g - gsum / n - xhat * gxsum / n) * scale
      double inv_n = 1.0 / static_cast<double>(N * L);
      card.scalar(NISA_BIN_MUL, A1, GS, inv_n);
      card.bin(NISA_BIN_SUB, T, g, chan(A1));
      card.scalar(NISA_BIN_MUL, A2, GX, inv_n);
      card.bin(NISA_BIN_MUL, X, X, chan(A2));
      card.bin(NISA_BIN_SUB, T, T, X);
      src = T;
    }
    bool reuse = train && input.scalar_type() == acc;
    gi = reuse ? t : empty_neuron(input.sizes(), input.scalar_type(), dev);
    card.bin(NISA_BIN_MUL, reuse ? T : ncl(gi, N, C, L), src, chan(scale));
  }
  if (mask[1])
    gw = pdt == acc ? gxsum : gxsum.to(pdt);
  if (mask[2])
    gb = pdt == acc ? gsum : gsum.to(pdt);
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

// ---- layer norm: ATen operators, which dispatch to the neuron kernels
// (below autograd: the autograd node is the composite op's own) ----

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
  // Not -1: with no element the last extent could not be inferred.
  at::Tensor x = input.to(acc_dtype(input.scalar_type())).reshape({N, group, C / group * HxW});
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
  at::ScalarType acc = acc_dtype(input.scalar_type());
  at::Tensor mu = mean.to(acc).reshape({N, group, 1});
  at::Tensor rs = rstd.to(acc).reshape({N, group, 1});
  at::Tensor xhat = (input.to(acc).reshape({N, group, C / group * HxW}) - mu).mul_(rs);
  at::Tensor g = grad_out.to(acc).reshape({N, C, HxW});
  at::Tensor xhat_c = xhat.view({N, C, HxW});
  at::Tensor gi, gw, gb;
  if (mask[0]) {
    at::Tensor gx = (w ? g * per_channel(*w, C, input, "weight") : g)
                         .reshape({N, group, C / group * HxW});
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

// ---- renorm ----

// renorm into @out, the result of its structured meta (which checks p,
// maxnorm and the input's dims): each slice along @dim whose p-norm
// exceeds maxnorm is scaled by maxnorm / (norm + 1e-7). The norms and
// factors of float16 and bfloat16 inputs are float32's, as the CPU's.
void renorm_into(const at::Tensor& a, const at::Scalar& p, int64_t dim,
                 const at::Scalar& maxnorm, at::Tensor& out) {
  check_floating(a.scalar_type(), "renorm");
  dim = c10::maybe_wrap_dim(dim, a.dim());
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < a.dim(); d++)
    if (d != dim)
      dims.push_back(d);
  at::ScalarType acc = at::toAccumulateType(a.scalar_type(), /*is_cuda=*/true);
  at::Tensor norm = at::linalg_vector_norm(a, p, dims, /*keepdim=*/true, acc);
  double mx = maxnorm.toDouble();
  at::Tensor f = binary(NISA_BIN_ADD, norm, wrapped(1e-7));
  f = binary(NISA_BIN_DIV, wrapped(mx), f);
  at::Tensor mask = empty_neuron(norm.sizes(), at::kBool, norm.device());
  nrn_tensor_desc dm = desc(mask), dn = desc(norm);
  NEURON_OP(nrn_op_compare_scalar(stream_for(norm), NISA_CMP_GT, &dm, &dn, mx));
  where_into(mask, f, filled(1.0, f.scalar_type(), f.device()), f);
  binary_into(NISA_BIN_MUL, a, f.to(a.scalar_type()), 1.0, out);
}

at::Tensor renorm(const at::Tensor& a, const at::Scalar& p, int64_t dim,
                  const at::Scalar& maxnorm) {
  auto [out] = meta_results<at::meta::structured_renorm>(Form::Functional, {}, a, p, dim, maxnorm);
  renorm_into(a, p, dim, maxnorm, out);
  return out;
}
at::Tensor& renorm_(at::Tensor& a, const at::Scalar& p, int64_t dim,
                    const at::Scalar& maxnorm) {
  meta_results<at::meta::structured_renorm>(Form::Inplace, {a}, a, p, dim, maxnorm);
  renorm_into(a, p, dim, maxnorm, a);
  return a;
}
at::Tensor& renorm_out(const at::Tensor& a, const at::Scalar& p, int64_t dim,
                       const at::Scalar& maxnorm, at::Tensor& out) {
  meta_results<at::meta::structured_renorm>(Form::Out, {out}, a, p, dim, maxnorm);
  renorm_into(a, p, dim, maxnorm, out);
  return out;
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
  m.impl("native_layer_norm", layer_norm);
  m.impl("native_layer_norm_backward", layer_norm_backward);
  m.impl("native_group_norm", group_norm);
  m.impl("native_group_norm_backward", group_norm_backward);
  m.impl("renorm", renorm);
  m.impl("renorm_", renorm_);
  m.impl("renorm.out", renorm_out);
}

}  // namespace torch_neuron

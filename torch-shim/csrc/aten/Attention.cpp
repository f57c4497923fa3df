// SPDX-License-Identifier: MIT
// scaled_dot_product_attention on the card as one path: the SDPA choice of
// neuron tensors is the "overrideable" backend, whose forward and backward
// are composed here from the card's matmul, softmax and elementwise kernels.
//
// Contract with the backward (what forward returns besides the output):
//   logsumexp [B, H, L] in acc_dtype(): log(sum(exp(scores))) per query row, -inf
//     where every key is masked;
//   philox_seed: the neuron generator's state (a CPU byte tensor) before the
//     dropout mask was drawn (undefined without dropout), so backward redraws
//     the same mask from a clone of the generator; philox_offset: unused.
// Grouped-query attention (enable_gqa with fewer key/value heads) and nested
// tensors take the math path (which runs on the card as well).
#include <ATen/native/transformers/attention.h>

#include <limits>

#include "NeuronOps.h"

namespace torch_neuron {
namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

int64_t sdp_choice(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                   const std::optional<at::Tensor>& mask, double dropout_p,
                   bool is_causal, std::optional<double> scale, bool enable_gqa) {
  bool plain = q.dim() == 4 && k.dim() == 4 && v.dim() == 4 && !q.is_nested() &&
               q.size(1) == k.size(1) && k.size(1) == v.size(1) &&
               card_float(q.scalar_type());
  return static_cast<int64_t>(plain ? at::SDPBackend::overrideable
                                    : at::SDPBackend::math);
}

double scale_of(const at::Tensor& q, std::optional<double> scale) {
  return scale ? *scale : 1.0 / std::sqrt(static_cast<double>(q.size(-1)));
}

// The scaled scores q k^T with the causal and additive masks, [B,H,L,S] in q's type.
at::Tensor scores(const at::Tensor& q, const at::Tensor& k,
                  const at::Tensor& bias, bool is_causal, double scale) {
  at::Tensor s = at::matmul(q, k.transpose(-2, -1)).mul_(scale);
  if (is_causal) {
    int64_t L = q.size(-2), S = k.size(-2);
    at::TensorOptions io = q.options().dtype(at::kLong);
    at::Tensor row = at::arange(L, io).unsqueeze(1), col = at::arange(S, io);
    s.masked_fill_(col.gt(row), kNegInf);  // key j after query i
  }
  if (bias.defined())
    s.add_(bias);
  return s;
}

// softmax(s) along the keys, 0 in rows with every key masked (lse = -inf
// there). Not exp(s - lse): lse rounded to float32 would put about |lse|
// ulps of error into every probability (7 times the CPU's float32 error in
// a cross-attention gradient of the sweep's TransformerDecoderLayer).
at::Tensor probs(const at::Tensor& s, const at::Tensor& lse) {
  at::Tensor dead = lse.unsqueeze(-1).eq(kNegInf);
  return at::_softmax(s, -1, false).masked_fill_(dead, 0.0);
}

// The dropout mask (bool) drawn on the card from @gen.
at::Tensor dropout_mask(const at::Tensor& like, double p, at::Generator gen) {
  return at::empty(like.sizes(), like.options().dtype(at::kBool))
      .bernoulli_(1.0 - p, gen);
}

at::Generator neuron_generator(const at::Device& dev) {
  return at::globalContext().defaultGenerator(dev);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, c10::SymInt, c10::SymInt,
           at::Tensor, at::Tensor, at::Tensor>
sdpa_forward(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
             const std::optional<at::Tensor>& attn_bias, double dropout_p,
             bool is_causal, bool return_debug_mask, std::optional<double> scale) {
  TORCH_CHECK(q.dim() == 4 && k.dim() == 4 && v.dim() == 4, "neuron: "
              "scaled_dot_product_attention expects 4-D query, key and value here");
  TORCH_CHECK(q.size(1) == k.size(1) && k.size(1) == v.size(1), "neuron: "
              "scaled_dot_product_attention: query, key and value need the same "
              "number of heads (grouped-query attention takes the math path)");
  TORCH_CHECK(!return_debug_mask, "neuron: scaled_dot_product_attention cannot "
              "return the debug attention mask");
  TORCH_CHECK(dropout_p >= 0 && dropout_p < 1, "neuron: dropout_p must be in "
              "[0, 1), got ", dropout_p);
  check_device(q, k);
  check_device(q, v);
  at::Tensor bias = attn_bias ? *attn_bias : at::Tensor();
  at::ScalarType acc = acc_dtype(q.scalar_type());
  at::Tensor qf = q.to(acc), kf = k.to(acc), vf = v.to(acc);
  at::Tensor s = scores(qf, kf, bias.defined() ? bias.to(acc) : bias,
                        is_causal, scale_of(q, scale));
  at::Tensor lse = s.logsumexp(-1);
  at::Tensor p = probs(s, lse);
  at::Tensor seed;
  if (dropout_p > 0) {
    at::Generator gen = neuron_generator(q.device());
    seed = gen.get_state();  // the mask's draw below starts from here
    p.mul_(dropout_mask(p, dropout_p, gen)).mul_(1.0 / (1.0 - dropout_p));
  }
  at::Tensor out = at::matmul(p, vf).to(q.scalar_type());
  at::Tensor none = at::empty({0}, q.options().dtype(at::kLong));
  return {out, lse, none, none, c10::SymInt(q.size(2)), c10::SymInt(k.size(2)),
          seed, at::Tensor(), at::Tensor()};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> sdpa_backward(
    const at::Tensor& grad_out, const at::Tensor& q, const at::Tensor& k,
    const at::Tensor& v, const at::Tensor& attn_bias, std::array<bool, 4> mask,
    const at::Tensor& out, const at::Tensor& lse, const at::Tensor& cum_seq_q,
    const at::Tensor& cum_seq_k, c10::SymInt max_q, c10::SymInt max_k,
    double dropout_p, bool is_causal, const at::Tensor& philox_seed,
    const at::Tensor& philox_offset, std::optional<double> scale) {
  double sc = scale_of(q, scale);
  at::ScalarType acc = acc_dtype(q.scalar_type());
  at::Tensor qf = q.to(acc), kf = k.to(acc), vf = v.to(acc);
  at::Tensor go = grad_out.to(acc);
  at::Tensor bias = attn_bias.defined() ? attn_bias.to(acc) : attn_bias;
  at::Tensor p = probs(scores(qf, kf, bias, is_causal, sc), lse);
  at::Tensor pd = p, keep;
  if (dropout_p > 0) {
    TORCH_CHECK(philox_seed.defined(), "neuron: attention backward with dropout "
                "needs the generator state the forward saved");
    at::Generator gen = neuron_generator(q.device()).clone();
    gen.set_state(philox_seed);
    keep = dropout_mask(p, dropout_p, gen);
    pd = p * keep * (1.0 / (1.0 - dropout_p));
  }
  at::Tensor gq, gk, gv, gb;
  if (mask[2])
    gv = at::matmul(pd.transpose(-2, -1), go).to(v.scalar_type());
  if (mask[0] || mask[1] || mask[3]) {
    at::Tensor dp = at::matmul(go, vf.transpose(-2, -1));
    if (keep.defined())
      dp.mul_(keep).mul_(1.0 / (1.0 - dropout_p));
    at::Tensor ds = p * (dp - (dp * p).sum(-1, true));
    if (mask[0])
      gq = at::matmul(ds, kf).mul_(sc).to(q.scalar_type());
    if (mask[1])
      gk = at::matmul(ds.transpose(-2, -1), qf).mul_(sc).to(k.scalar_type());
    if (mask[3] && attn_bias.defined())
      gb = ds.sum_to_size(attn_bias.sizes()).to(attn_bias.scalar_type());
  }
  return {gq, gk, gv, gb};
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_fused_sdp_choice", sdp_choice);
  m.impl("_scaled_dot_product_fused_attention_overrideable", sdpa_forward);
  m.impl("_scaled_dot_product_fused_attention_overrideable_backward", sdpa_backward);
}

}  // namespace torch_neuron

namespace at::native {
REGISTER_PRIVATEUSE1_DISPATCH(_fused_sdp_choice_stub, &torch_neuron::sdp_choice);
}  // namespace at::native

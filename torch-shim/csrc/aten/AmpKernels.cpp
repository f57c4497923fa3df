// SPDX-License-Identifier: MIT
// torch.amp.GradScaler("neuron"): the two operators it runs on the device,
// composed of card instructions. Nothing leaves the card: found_inf, the
// scale and the growth tracker stay there, so a training step with a
// GradScaler does not synchronise (as on CUDA).
//
//   _amp_foreach_non_finite_check_and_unscale_(grads, found_inf, inv_scale):
//     found_inf = 1 if any element of any grad is inf or NaN (else left
//     as it is); every grad *= inv_scale (also when found_inf is set).
//   _amp_update_scale_(scale, growth_tracker, found_inf, growth, backoff,
//                      interval):
//     found_inf: scale *= backoff, tracker = 0; otherwise tracker + 1 and,
//     when that reaches interval, scale *= growth (kept only if finite)
//     and tracker = 0.
//
// The card computes in double and rounds once to the destination type
// (docs/hardware.md, "Numerics"): scale * growth into a float32 scale is
// CUDA's static_cast<float>(scale * (double)growth), and grad * inv_scale
// into a float16 grad is the float32 product rounded to float16.
#include <torch/library.h>

#include "NeuronOps.h"

namespace torch_neuron {
namespace {

void check_amp_scalar(const at::Tensor& t, const char* op, const char* what,
                      at::ScalarType dtype) {
  TORCH_CHECK(is_neuron(t), "neuron: ", op, ": ", what, " must be a neuron tensor");
  TORCH_CHECK(t.numel() == 1, "neuron: ", op, ": ", what, " must be a "
              "one-element tensor, got ", t.numel(), " elements");
  TORCH_CHECK(t.scalar_type() == dtype, "neuron: ", op, ": ", what, " must be ",
              dtype, ", got ", t.scalar_type());
}

// @t (one element) seen with @shape's number of dims, for broadcasting.
nrn_tensor_desc one_as(const at::Tensor& t, const at::Tensor& like) {
  return desc(t.reshape({}).expand(like.sizes()));
}

void non_finite_check_and_unscale(at::TensorList grads, at::Tensor& found_inf,
                                  const at::Tensor& inv_scale) {
  static const char* op = "_amp_foreach_non_finite_check_and_unscale_";
  check_amp_scalar(found_inf, op, "found_inf", at::kFloat);
  check_amp_scalar(inv_scale, op, "inv_scale", at::kFloat);
  check_device(found_inf, inv_scale);
  nrn_stream* s = stream_for(found_inf);
  at::Tensor f = found_inf.reshape({});
  nrn_tensor_desc df = desc(f);
  for (const at::Tensor& g0 : grads) {
    check_device(found_inf, g0);
    TORCH_CHECK(is_neuron(g0), "neuron: ", op, ": expected every gradient on ",
                found_inf.device(), ", got one on ", g0.device());
    TORCH_CHECK(card_float(g0.scalar_type()), "neuron: ", op, ": gradients must "
                "be float32, bfloat16 or float16, got ", g0.scalar_type());
    TORCH_CHECK(g0.layout() == at::kStrided, "neuron: ", op, ": sparse gradients "
                "are not supported on the card");
    if (g0.numel() == 0)
      continue;
    // One dimension when it can be (any rank); else the strided tensor.
    at::Tensor g = g0.is_contiguous() ? g0.view({-1}) : g0;
    // ok = min over g of isfinite(g): 0 when some element is inf or NaN.
    at::Tensor fin = empty_neuron({g.numel()}, at::kBool, g.device());
    at::Tensor ok = empty_neuron({}, at::kFloat, g.device());
    nrn_tensor_desc dg = desc(g), dfin = desc(fin.view(g.sizes())), dfin1 = desc(fin);
    nrn_tensor_desc dok = desc(ok.view({1}));
    NEURON_OP(nrn_op_unary(s, NISA_UN_ISFINITE, &dfin, &dg));
    NEURON_OP(nrn_op_reduce(s, NISA_RED_MIN, &dok, &dfin1, 0));
    // found_inf = max(found_inf, 1 - ok)
    nrn_tensor_desc dok0 = desc(ok);
    NEURON_OP(nrn_op_binary_scalar(s, NISA_BIN_SUB, &dok0, &dok0, 1.0, 1.0, 1));
    NEURON_OP(nrn_op_binary(s, NISA_BIN_MAX, &df, &df, &dok0, 1.0));
    // g *= inv_scale
    nrn_tensor_desc dinv = one_as(inv_scale, g);
    NEURON_OP(nrn_op_binary(s, NISA_BIN_MUL, &dg, &dg, &dinv, 1.0));
  }
}

at::Tensor& update_scale(at::Tensor& scale, at::Tensor& growth_tracker,
                         const at::Tensor& found_inf, double growth_factor,
                         double backoff_factor, int64_t growth_interval) {
  static const char* op = "_amp_update_scale_";
  check_amp_scalar(scale, op, "scale", at::kFloat);
  check_amp_scalar(growth_tracker, op, "growth_tracker", at::kInt);
  check_amp_scalar(found_inf, op, "found_inf", at::kFloat);
  check_device(scale, growth_tracker);
  check_device(scale, found_inf);
  nrn_stream* s = stream_for(scale);
  at::Device dev = scale.device();
  auto scalar = [&](at::ScalarType t) { return empty_neuron({}, t, dev); };
  at::Tensor sc = scale.reshape({}), tr = growth_tracker.reshape({});
  at::Tensor inf = scalar(at::kBool), grow = scalar(at::kBool), fin = scalar(at::kBool);
  at::Tensor succ = scalar(at::kInt), zero = scalar(at::kInt);
  at::Tensor grown = scalar(at::kFloat), backed = scalar(at::kFloat);
  nrn_tensor_desc dsc = desc(sc), dtr = desc(tr), dfound = desc(found_inf.reshape({}));
  nrn_tensor_desc dinf = desc(inf), dgrow = desc(grow), dfin = desc(fin);
  nrn_tensor_desc dsucc = desc(succ), dzero = desc(zero);
  nrn_tensor_desc dgrown = desc(grown), dbacked = desc(backed);

  NEURON_OP(nrn_op_compare_scalar(s, NISA_CMP_NE, &dinf, &dfound, 0.0));
  NEURON_OP(nrn_op_binary_scalar(s, NISA_BIN_ADD, &dsucc, &dtr, 1.0, 1.0, 0));
  NEURON_OP(nrn_op_compare_scalar(s, NISA_CMP_EQ, &dgrow, &dsucc,
                                  static_cast<double>(growth_interval)));
  NEURON_OP(nrn_op_fill(s, &dzero, 0.0));
  // scale: grown if growing and finite, backed off on inf, else unchanged.
  NEURON_OP(nrn_op_binary_scalar(s, NISA_BIN_MUL, &dgrown, &dsc, growth_factor, 1.0, 0));
  NEURON_OP(nrn_op_unary(s, NISA_UN_ISFINITE, &dfin, &dgrown));
  NEURON_OP(nrn_op_compare(s, NISA_CMP_LAND, &dfin, &dfin, &dgrow));
  NEURON_OP(nrn_op_binary_scalar(s, NISA_BIN_MUL, &dbacked, &dsc, backoff_factor, 1.0, 0));
  NEURON_OP(nrn_op_where(s, &dsc, &dfin, &dgrown, &dsc));
  NEURON_OP(nrn_op_where(s, &dsc, &dinf, &dbacked, &dsc));
  // tracker: 0 on inf or growth, else succ.
  NEURON_OP(nrn_op_compare(s, NISA_CMP_LOR, &dgrow, &dgrow, &dinf));
  NEURON_OP(nrn_op_where(s, &dtr, &dgrow, &dzero, &dsucc));
  return scale;
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_amp_foreach_non_finite_check_and_unscale_", non_finite_check_and_unscale);
  m.impl("_amp_update_scale_", update_scale);
}

}  // namespace
}  // namespace torch_neuron

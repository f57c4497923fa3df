// SPDX-License-Identifier: MIT
// Dropout: native_dropout and its backward, composed of ATen operators
// that dispatch to the neuron kernels (below autograd: the autograd node
// is the composite op's own).
#include "NeuronOps.h"

namespace torch_neuron {
namespace {

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
  m.impl("native_dropout", native_dropout);
  m.impl("native_dropout_backward", native_dropout_backward);
}

}  // namespace torch_neuron

// SPDX-License-Identifier: MIT
// fill_ and zero_: one FILL instruction of the card (a complex value's
// imaginary part is the instruction's @alpha).
#include "NeuronOps.h"

namespace torch_neuron {
namespace {

at::Tensor& fill_scalar_(at::Tensor& self, const at::Scalar& value) {
  nrn_tensor_desc o = desc(self);
  if (self.is_complex()) {
    c10::complex<double> z = value.toComplexDouble();
    // A conjugate view holds the conjugate of what it shows.
    double im = self.is_conj() ? -z.imag() : z.imag();
    NEURON_OP(nrn_op_fill_complex(stream_for(self), &o, z.real(), im));
    return self;
  }
  NEURON_OP(nrn_op_fill(stream_for(self), &o, value.toDouble()));
  return self;
}

at::Tensor& fill_tensor_(at::Tensor& self, const at::Tensor& value) {
  TORCH_CHECK(value.dim() == 0, "fill_ only supports 0-dimension value tensor "
              "but got tensor with ", value.dim(), " dimensions.");
  return fill_scalar_(self, value.item());
}

at::Tensor& zero_(at::Tensor& self) {
  return fill_scalar_(self, 0);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("fill_.Scalar", fill_scalar_);
  m.impl("fill_.Tensor", fill_tensor_);
  m.impl("zero_", zero_);
}

}  // namespace torch_neuron

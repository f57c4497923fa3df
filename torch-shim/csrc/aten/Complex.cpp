// SPDX-License-Identifier: MIT
// complex64 on the card (docs/hardware.md, "Complex numbers"): the views
// between complex and real (view_as_real, view_as_complex), the conjugate,
// sgn and angle, torch.complex and torch.polar. The elementwise arithmetic
// is the card's (NeuronElementwise.h checks what it takes); the reductions
// of complex tensors sum real and imaginary parts through view_as_real
// (ReduceOps.cpp).
#include <ATen/ops/view_as_complex_native.h>
#include <ATen/ops/view_as_real_native.h>

#include "NeuronElementwise.h"

namespace torch_neuron {
namespace {

// conj_physical: the conjugate, stored (UNARY CONJ; a copy for a real tensor).
at::Tensor& conj_physical_out(const at::Tensor& self, at::Tensor& out) {
  resize_out(out, self.sizes());
  return unary_into(NISA_UN_CONJ, self, out);
}

at::Tensor& conj_physical_(at::Tensor& self) {
  return self.is_complex() ? unary_into(NISA_UN_CONJ, self, self) : self;
}

// sgn(z) = z / |z|, 0 at 0; sign(x) for a real x.
at::Tensor& sgn_into(const at::Tensor& self, at::Tensor& out) {
  if (!self.is_complex())
    return unary_into(NISA_UN_SIGN, self, out);
  TORCH_CHECK(out.is_complex(), "neuron: sgn: the result of a complex tensor is "
              "complex, got an output of type ", out.scalar_type());
  at::Tensor mag = empty_neuron(self.sizes(), at::kFloat, self.device());
  unary_into(NISA_UN_ABS, self, mag);
  at::Tensor zero = empty_neuron(self.sizes(), at::kBool, self.device());
  nrn_tensor_desc dz = desc(zero), dm = desc(mag);
  NEURON_OP(nrn_op_compare_scalar(stream_for(mag), NISA_CMP_EQ, &dz, &dm, 0.0));
  binary_into(NISA_BIN_DIV, self, mag, 1.0, out);
  return where_into(zero, filled(0.0, out.scalar_type(), out.device()), out, out);
}

at::Tensor sgn(const at::Tensor& self) {
  at::Tensor out = empty_neuron(self.sizes(), self.scalar_type(), self.device());
  return sgn_into(self, out);
}

at::Tensor& sgn_(at::Tensor& self) {
  return sgn_into(self, self);
}

at::Tensor& sgn_out(const at::Tensor& self, at::Tensor& out) {
  TORCH_CHECK(at::canCast(self.scalar_type(), out.scalar_type()), "result type ",
              self.scalar_type(), " can't be cast to the desired output type ",
              out.scalar_type());
  resize_out(out, self.sizes());
  return sgn_into(self, out);
}

// angle: arg z of a complex z (real result); pi for a negative real x, 0
// otherwise (NaN stays NaN), in the floating type integers promote to.
at::Tensor angle(const at::Tensor& self) {
  at::ScalarType rt = self.is_complex() ? c10::toRealValueType(self.scalar_type())
                                        : float_result(self.scalar_type());
  at::Tensor out = empty_neuron(self.sizes(), rt, self.device());
  return unary_into(NISA_UN_ANGLE, self, out);
}

at::Tensor& angle_out(const at::Tensor& self, at::Tensor& out) {
  resize_out(out, self.sizes());
  return unary_into(NISA_UN_ANGLE, self, out);
}

// The real and imaginary planes of the complex64 tensor @out.
at::Tensor plane(const at::Tensor& out, int64_t which) {
  return at::view_as_real(out).select(-1, which);
}

void check_parts(const at::Tensor& a, const at::Tensor& b, const char* what,
                 const at::Tensor& out) {
  TORCH_CHECK(a.scalar_type() == b.scalar_type(), "Expected object of scalar type ",
              a.scalar_type(), " but got scalar type ", b.scalar_type(),
              " for second argument");
  TORCH_CHECK(a.scalar_type() == at::kFloat, "neuron: ", what, ": the card's "
              "complex type is complex64, from float32 parts (got ",
              a.scalar_type(), ")");
  TORCH_CHECK(out.scalar_type() == at::kComplexFloat, "Expected object of scalar "
              "type ComplexFloat but got scalar type ", out.scalar_type(),
              " for argument 'out'");
}

// torch.complex(real, imag): each part copied into its plane.
at::Tensor& complex_out(const at::Tensor& re, const at::Tensor& im, at::Tensor& out) {
  check_parts(re, im, "complex", out);
  resize_out(out, at::infer_size(re.sizes(), im.sizes()));
  plane(out, 0).copy_(re);
  plane(out, 1).copy_(im);
  return out;
}

// torch.polar(abs, angle) = abs cos(angle) + i abs sin(angle).
at::Tensor& polar_out(const at::Tensor& mag, const at::Tensor& arg, at::Tensor& out) {
  check_parts(mag, arg, "polar", out);
  resize_out(out, at::infer_size(mag.sizes(), arg.sizes()));
  at::Tensor re = plane(out, 0), im = plane(out, 1);
  unary_into(NISA_UN_COS, arg.expand(out.sizes()), re);
  binary_into(NISA_BIN_MUL, re, mag, 1.0, re);
  unary_into(NISA_UN_SIN, arg.expand(out.sizes()), im);
  binary_into(NISA_BIN_MUL, im, mag, 1.0, im);
  return out;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("view_as_real", at::native::view_as_real);
  m.impl("view_as_complex", at::native::view_as_complex);
  m.impl("conj_physical.out", conj_physical_out);
  m.impl("conj_physical_", conj_physical_);
  m.impl("sgn", sgn);
  m.impl("sgn_", sgn_);
  m.impl("sgn.out", sgn_out);
  m.impl("angle", angle);
  m.impl("angle.out", angle_out);
  m.impl("complex.out", complex_out);
  m.impl("polar.out", polar_out);
}

}  // namespace torch_neuron

// SPDX-License-Identifier: MIT
// Matrix products on the card: mm, addmm (linear), bmm, baddbmm. Transposed
// operands (weight.t() in linear) are passed as strided views; the card's
// MATMUL takes them in place.
#include "NeuronOps.h"

namespace torch_neuron {
namespace {

void check_mm(const at::Tensor& a, const at::Tensor& b, int64_t dims) {
  TORCH_CHECK(a.dim() == dims && b.dim() == dims, "neuron: expected ", dims,
              "-D tensors, got ", a.dim(), "-D and ", b.dim(), "-D");
  TORCH_CHECK(a.size(-1) == b.size(-2), "mat1 and mat2 shapes cannot be "
              "multiplied (", a.size(-2), "x", a.size(-1), " and ", b.size(-2),
              "x", b.size(-1), ")");
  TORCH_CHECK(a.scalar_type() == b.scalar_type(), "expected m1 and m2 to have "
              "the same dtype, but got: ", a.scalar_type(), " != ", b.scalar_type());
  check_device(a, b);
}

// out = a @ b (+ bias) (+ out); all on one device.
void matmul_into(const at::Tensor& out, const at::Tensor& a, const at::Tensor& b,
                 const at::Tensor* bias, bool accumulate) {
  nrn_tensor_desc o = desc(out), da = desc(a), db = desc(b), dbias;
  if (bias)
    dbias = desc(*bias);
  NEURON_OP(nrn_op_matmul(stream_for(out), &o, &da, &db, bias ? &dbias : nullptr,
                          accumulate ? 1 : 0));
}

at::Tensor mm(const at::Tensor& a, const at::Tensor& b) {
  check_mm(a, b, 2);
  at::Tensor out = empty_neuron({a.size(0), b.size(1)}, a.scalar_type(), a.device());
  matmul_into(out, a, b, nullptr, false);
  return out;
}

at::Tensor& mm_out(const at::Tensor& a, const at::Tensor& b, at::Tensor& out) {
  check_mm(a, b, 2);
  resize_out(out, {a.size(0), b.size(1)});
  matmul_into(out, a, b, nullptr, false);
  return out;
}

// beta * self + alpha * (a @ b); beta = alpha = 1 is one instruction.
at::Tensor& addmm_into(const at::Tensor& self, const at::Tensor& a, const at::Tensor& b,
                       const at::Scalar& beta, const at::Scalar& alpha, at::Tensor& out) {
  double be = beta.toDouble(), al = alpha.toDouble();
  if (be == 1.0 && al == 1.0) {
    if (out.is_same(self)) {
      matmul_into(out, a, b, nullptr, true);
    } else {
      at::Tensor bias = self.expand(out.sizes());
      matmul_into(out, a, b, &bias, false);
    }
    return out;
  }
  at::Tensor prod = empty_neuron(out.sizes(), out.scalar_type(), out.device());
  matmul_into(prod, a, b, nullptr, false);
  prod.mul_(al);
  if (be != 0.0)
    prod.add_(self, be);
  return out.copy_(prod);
}

at::Tensor addmm(const at::Tensor& self, const at::Tensor& a, const at::Tensor& b,
                 const at::Scalar& beta, const at::Scalar& alpha) {
  check_mm(a, b, 2);
  at::Tensor out = empty_neuron({a.size(0), b.size(1)}, a.scalar_type(), a.device());
  return addmm_into(self, a, b, beta, alpha, out);
}

at::Tensor& addmm_out(const at::Tensor& self, const at::Tensor& a, const at::Tensor& b,
                      const at::Scalar& beta, const at::Scalar& alpha, at::Tensor& out) {
  check_mm(a, b, 2);
  resize_out(out, {a.size(0), b.size(1)});
  return addmm_into(self, a, b, beta, alpha, out);
}

at::Tensor& addmm_(at::Tensor& self, const at::Tensor& a, const at::Tensor& b,
                   const at::Scalar& beta, const at::Scalar& alpha) {
  check_mm(a, b, 2);
  return addmm_into(self, a, b, beta, alpha, self);
}

at::Tensor bmm(const at::Tensor& a, const at::Tensor& b) {
  check_mm(a, b, 3);
  TORCH_CHECK(a.size(0) == b.size(0), "batch1 and batch2 must have same number of batches");
  at::Tensor out = empty_neuron({a.size(0), a.size(1), b.size(2)}, a.scalar_type(),
                                a.device());
  matmul_into(out, a, b, nullptr, false);
  return out;
}

at::Tensor& bmm_out(const at::Tensor& a, const at::Tensor& b, at::Tensor& out) {
  check_mm(a, b, 3);
  resize_out(out, {a.size(0), a.size(1), b.size(2)});
  matmul_into(out, a, b, nullptr, false);
  return out;
}

at::Tensor baddbmm(const at::Tensor& self, const at::Tensor& a, const at::Tensor& b,
                   const at::Scalar& beta, const at::Scalar& alpha) {
  check_mm(a, b, 3);
  at::Tensor out = empty_neuron({a.size(0), a.size(1), b.size(2)}, a.scalar_type(),
                                a.device());
  return addmm_into(self, a, b, beta, alpha, out);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("mm", mm);
  m.impl("mm.out", mm_out);
  m.impl("addmm", addmm);
  m.impl("addmm.out", addmm_out);
  m.impl("addmm_", addmm_);
  m.impl("bmm", bmm);
  m.impl("bmm.out", bmm_out);
  m.impl("baddbmm", baddbmm);
}

}  // namespace torch_neuron

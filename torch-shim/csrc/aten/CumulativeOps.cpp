// SPDX-License-Identifier: MIT
// The cumulative operators: cumsum, cumprod, cummax, cummin and
// logcumsumexp, each one SCAN of the card (NISA_INSN_SCAN; scan() in
// Sorting.cpp). ATen keeps them in ReduceOps.cpp.
#include "NeuronSort.h"

namespace torch_neuron {
namespace {

at::Tensor cumsum(const at::Tensor& self, int64_t dim, std::optional<at::ScalarType> dtype) {
  return scan(NISA_SCAN_SUM, self, dim, scan_dtype(self, dtype));
}
at::Tensor& cumsum_out(const at::Tensor& self, int64_t dim,
                       std::optional<at::ScalarType> dtype, at::Tensor& out) {
  into(out, scan(NISA_SCAN_SUM, self, dim, dtype ? *dtype : out.scalar_type()));
  return out;
}
at::Tensor& cumsum_(at::Tensor& self, int64_t dim, std::optional<at::ScalarType> dtype) {
  return self.copy_(scan(NISA_SCAN_SUM, self, dim, dtype ? *dtype : self.scalar_type()));
}
at::Tensor cumprod(const at::Tensor& self, int64_t dim, std::optional<at::ScalarType> dtype) {
  return scan(NISA_SCAN_PROD, self, dim, scan_dtype(self, dtype));
}
at::Tensor& cumprod_out(const at::Tensor& self, int64_t dim,
                        std::optional<at::ScalarType> dtype, at::Tensor& out) {
  into(out, scan(NISA_SCAN_PROD, self, dim, dtype ? *dtype : out.scalar_type()));
  return out;
}
at::Tensor& cumprod_(at::Tensor& self, int64_t dim, std::optional<at::ScalarType> dtype) {
  return self.copy_(scan(NISA_SCAN_PROD, self, dim, dtype ? *dtype : self.scalar_type()));
}

void cum_extreme(nisa_scan op, const at::Tensor& self, at::Tensor& values,
                 at::Tensor& indices, int64_t dim) {
  at::Tensor idx;
  at::Tensor v = scan(op, self, dim, self.scalar_type(), &idx);
  into(values, v);
  into(indices, idx);
}
void cummax_helper(const at::Tensor& self, at::Tensor& values, at::Tensor& indices,
                   int64_t dim) {
  cum_extreme(NISA_SCAN_MAX, self, values, indices, dim);
}
void cummin_helper(const at::Tensor& self, at::Tensor& values, at::Tensor& indices,
                   int64_t dim) {
  cum_extreme(NISA_SCAN_MIN, self, values, indices, dim);
}

at::Tensor logcumsumexp(const at::Tensor& self, int64_t dim) {
  TORCH_CHECK(card_float(self.scalar_type()), "neuron: logcumsumexp takes a floating "
              "tensor (float32, float64, bfloat16, float16), got ", self.scalar_type());
  return scan(NISA_SCAN_LOGSUMEXP, self, dim, self.scalar_type());
}
at::Tensor& logcumsumexp_out(const at::Tensor& self, int64_t dim, at::Tensor& out) {
  into(out, torch_neuron::logcumsumexp(self, dim));
  return out;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("cumsum", cumsum);
  m.impl("cumsum.out", cumsum_out);
  m.impl("cumsum_", cumsum_);
  m.impl("cumprod", cumprod);
  m.impl("cumprod.out", cumprod_out);
  m.impl("cumprod_", cumprod_);
  m.impl("_cummax_helper", cummax_helper);
  m.impl("_cummin_helper", cummin_helper);
  m.impl("_logcumsumexp", logcumsumexp);
  m.impl("_logcumsumexp.out", logcumsumexp_out);
}

}  // namespace torch_neuron

// SPDX-License-Identifier: MIT
// The cumulative operators: cumsum, cumprod, cummax, cummin and
// logcumsumexp, each one SCAN of the card (NISA_INSN_SCAN; scan() in
// Sorting.cpp). ATen keeps them in ReduceOps.cpp.
#include <ATen/ops/cumprod_meta.h>
#include <ATen/ops/cumsum_meta.h>

#include "NeuronMeta.h"
#include "NeuronSort.h"

namespace torch_neuron {
namespace {

// cumsum and cumprod: results (their type: dtype, else int64 for integers,
// else self's) and checks from the structured metas.
template <class Meta, nisa_scan OP>
at::Tensor cum_fn(const at::Tensor& self, int64_t dim, std::optional<at::ScalarType> dtype) {
  at::Tensor out = meta_results<Meta>(Form::Functional, {}, self, dim, dtype)[0];
  return scan(OP, self, dim, out.scalar_type(), nullptr, &out);
}
template <class Meta, nisa_scan OP>
at::Tensor& cum_out(const at::Tensor& self, int64_t dim, std::optional<at::ScalarType> dtype,
                    at::Tensor& out) {
  meta_results<Meta>(Form::Out, {out}, self, dim, dtype);
  return out.copy_(scan(OP, self, dim, out.scalar_type()));
}
template <class Meta, nisa_scan OP>
at::Tensor& cum_(at::Tensor& self, int64_t dim, std::optional<at::ScalarType> dtype) {
  meta_results<Meta>(Form::Inplace, {self}, self, dim, dtype);
  return self.copy_(scan(OP, self, dim, self.scalar_type()));
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
  using Cumsum = at::meta::structured_cumsum;
  using Cumprod = at::meta::structured_cumprod;
  m.impl("cumsum", cum_fn<Cumsum, NISA_SCAN_SUM>);
  m.impl("cumsum.out", cum_out<Cumsum, NISA_SCAN_SUM>);
  m.impl("cumsum_", cum_<Cumsum, NISA_SCAN_SUM>);
  m.impl("cumprod", cum_fn<Cumprod, NISA_SCAN_PROD>);
  m.impl("cumprod.out", cum_out<Cumprod, NISA_SCAN_PROD>);
  m.impl("cumprod_", cum_<Cumprod, NISA_SCAN_PROD>);
  m.impl("_cummax_helper", cummax_helper);
  m.impl("_cummin_helper", cummin_helper);
  m.impl("_logcumsumexp", logcumsumexp);
  m.impl("_logcumsumexp.out", logcumsumexp_out);
}

}  // namespace torch_neuron

// SPDX-License-Identifier: MIT
// Comparing and selecting operators: clamp, clamp_min and clamp_max (scalar
// and tensor bounds; in place and out=), where, equal and isin.
#include "NeuronElementwise.h"
#include "NeuronSort.h"

namespace torch_neuron {
namespace {

// ---- clamp: NaN stays NaN; min > max gives max, as on the CPU ----
at::Tensor upper(const at::Tensor& x, const at::Tensor& hi) {
  return at::where(x.gt(hi), hi.to(x.scalar_type()), x);
}
at::Tensor lower(const at::Tensor& x, const at::Tensor& lo) {
  return at::where(x.lt(lo), lo.to(x.scalar_type()), x);
}
at::Tensor clamp_t(const at::Tensor& self, const std::optional<at::Tensor>& lo,
                   const std::optional<at::Tensor>& hi) {
  bool has_lo = lo && lo->defined(), has_hi = hi && hi->defined();
  TORCH_CHECK(has_lo || has_hi, "torch.clamp: At least one of 'min' or 'max' must not "
              "be None");
  at::ScalarType rt = self.scalar_type();
  if (has_lo)
    rt = at::promote_types(rt, lo->scalar_type());
  if (has_hi)
    rt = at::promote_types(rt, hi->scalar_type());
  at::Tensor x = self.to(rt);
  if (has_lo)
    x = lower(x, *lo);
  if (has_hi)
    x = upper(x, *hi);
  return x.is_same(self) ? self.clone() : x;
}
std::optional<at::Tensor> bound_opt(const std::optional<at::Scalar>& s,
                                    const at::Tensor& self) {
  if (!s)
    return std::nullopt;
  at::ScalarType rt = at::result_type(self, *s);
  return at::scalar_tensor(*s, self.options().dtype(rt));
}

}  // namespace

at::Tensor clamp_s(const at::Tensor& self, const std::optional<at::Scalar>& lo,
                   const std::optional<at::Scalar>& hi) {
  return clamp_t(self, bound_opt(lo, self), bound_opt(hi, self));
}

namespace {

at::Tensor& clamp_s_out(const at::Tensor& self, const std::optional<at::Scalar>& lo,
                        const std::optional<at::Scalar>& hi, at::Tensor& out) {
  return into(out, clamp_s(self, lo, hi));
}
at::Tensor& clamp_t_out(const at::Tensor& self, const std::optional<at::Tensor>& lo,
                        const std::optional<at::Tensor>& hi, at::Tensor& out) {
  return into(out, clamp_t(self, lo, hi));
}
at::Tensor& clamp_s_(at::Tensor& self, const std::optional<at::Scalar>& lo,
                     const std::optional<at::Scalar>& hi) {
  return self.copy_(clamp_s(self, lo, hi));
}
at::Tensor& clamp_t_(at::Tensor& self, const std::optional<at::Tensor>& lo,
                     const std::optional<at::Tensor>& hi) {
  return self.copy_(clamp_t(self, lo, hi));
}
at::Tensor clamp_max_n(const at::Tensor& self, const at::Scalar& hi) {
  return clamp_s(self, std::nullopt, hi);
}
at::Tensor& clamp_max_(at::Tensor& self, const at::Scalar& hi) {
  return self.copy_(clamp_max_n(self, hi));
}
at::Tensor clamp_max_t(const at::Tensor& self, const at::Tensor& hi) {
  return clamp_t(self, std::nullopt, hi);
}
at::Tensor clamp_min_t(const at::Tensor& self, const at::Tensor& lo) {
  return clamp_t(self, lo, std::nullopt);
}
at::Tensor& clamp_min_(at::Tensor& self, const at::Scalar& m) {
  return binary_inplace(NISA_BIN_MAX, self, wrapped(m));
}
at::Tensor clamp_min(const at::Tensor& self, const at::Scalar& m) {
  return binary(NISA_BIN_MAX, self, wrapped(m));
}

// where's result as ATen's where.self_out makes it: a TensorIterator over
// the condition and both values (a new result: of their promoted type).
at::Tensor where_result(const at::Tensor& cond, const at::Tensor& a, const at::Tensor& b,
                        at::TensorBase out = {}) {
  at::TensorIteratorConfig config;
  config.check_all_same_dtype(false).allow_cpu_scalars(true).add_output(out)
      .add_const_input(cond).add_const_input(a).add_const_input(b);
  at::ScalarType rt = at::result_type(a, b);
  if (out.defined()) {
    TORCH_CHECK(out.scalar_type() == rt, "Expected out type to be ", rt, " but got ",
                out.scalar_type());
  } else {
    config.declare_static_dtype(rt);
  }
  at::Tensor r = config.build().output();
  at::Device dev = r.device();
  at::Tensor c = operand(cond, dev), x = operand(a, dev), y = operand(b, dev);
  nrn_tensor_desc o = desc(r), dc = desc(c), dx = desc(x), dy = desc(y);
  NEURON_OP(nrn_op_where(stream_for(r), &o, &dc, &dx, &dy));
  return r;
}
at::Tensor where_self(const at::Tensor& cond, const at::Tensor& a, const at::Tensor& b) {
  return where_result(cond, a, b);
}
at::Tensor& where_out(const at::Tensor& cond, const at::Tensor& a, const at::Tensor& b,
                      at::Tensor& out) {
  where_result(cond, a, b, out);
  return out;
}

// equal: same shape and every element equal (NaN is not), reduced on the
// card; the one bool is read back.
bool equal(const at::Tensor& a, const at::Tensor& b) {
  check_device(a, b);
  if (a.sizes() != b.sizes())
    return false;
  if (a.numel() == 0)
    return true;
  at::Tensor mask = empty_neuron(a.sizes(), at::kBool, a.device());
  compare_into(NISA_CMP_EQ, a, b, mask);
  return mask.all().item<bool>();
}

// An element is in @test when the first sorted test value not below it (a
// search in O(n + m) memory) equals it, compared in the two's common type;
// NaN is in nothing.
at::Tensor isin(const at::Tensor& elements, const at::Tensor& test, bool, bool invert) {
  at::Tensor r;
  int64_t m = test.numel();
  if (m == 0 || elements.numel() == 0) {
    r = at::zeros(elements.sizes(), elements.options().dtype(at::kBool));
  } else {
    auto type = at::result_type(elements, test);
    at::Tensor e = elements.to(type).reshape({-1});
    at::Tensor sorted = std::get<0>(sort_stable(test.to(type).reshape({-1}), 0, false));
    at::Tensor pos = search(sorted, e, false, false).clamp_max_(m - 1);
    r = sorted.index_select(0, pos).eq(e).view(elements.sizes());
  }
  return invert ? at::logical_not(r) : r;
}
at::Tensor& isin_out(const at::Tensor& elements, const at::Tensor& test, bool unique,
                     bool invert, at::Tensor& out) {
  at::Tensor r = torch_neuron::isin(elements, test, unique, invert);
  return into(out, r);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("clamp", clamp_s);
  m.impl("clamp.Tensor", clamp_t);
  m.impl("clamp.out", clamp_s_out);
  m.impl("clamp.Tensor_out", clamp_t_out);
  m.impl("clamp_", clamp_s_);
  m.impl("clamp_.Tensor", clamp_t_);
  m.impl("clamp_max", clamp_max_n);
  m.impl("clamp_max_", clamp_max_);
  m.impl("clamp_max.Tensor", clamp_max_t);
  m.impl("clamp_min.Tensor", clamp_min_t);
  m.impl("clamp_min", clamp_min);
  m.impl("clamp_min_", clamp_min_);
  m.impl("where.self", where_self);
  m.impl("where.self_out", where_out);
  m.impl("equal", equal);
  m.impl("isin.Tensor_Tensor", isin);
  m.impl("isin.Tensor_Tensor_out", isin_out);
}

}  // namespace torch_neuron

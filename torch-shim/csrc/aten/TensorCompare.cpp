// SPDX-License-Identifier: MIT
// Comparing and selecting operators: clamp, clamp_min and clamp_max (scalar
// and tensor bounds; in place and out=), where, equal and isin.
#include <ATen/ops/clamp_meta.h>
#include <ATen/ops/clamp_max_meta.h>
#include <ATen/ops/clamp_min_meta.h>
#include <ATen/ops/isin_meta.h>

#include "NeuronElementwise.h"
#include "NeuronSort.h"

namespace torch_neuron {
namespace {

// ---- clamp, clamp_min, clamp_max: results from their structured metas ----

// clamp of @self into @out (the meta's result, of the type the operands
// are promoted to; @lo, @hi: card tensors or CPU scalars, undefined when
// absent) as the CPU's kernels compute it: minimum(maximum(x, lo), hi). NaN
// in x or in a bound gives NaN, and min > max gives max. The maximum of
// values rounded to the result's type is the rounded maximum, so the card
// takes the operands in their own types.
void clamp_into(const at::Tensor& self, const at::Tensor& lo, const at::Tensor& hi,
                at::Tensor& out) {
  if (lo.defined())
    binary_into(NISA_BIN_MAX, self, lo, 1.0, out);
  if (hi.defined())
    binary_into(NISA_BIN_MIN, lo.defined() ? out : self, hi, 1.0, out);
}

at::Tensor opt_tensor(const std::optional<at::Scalar>& s) {
  return s ? wrapped(*s) : at::Tensor();
}
at::Tensor opt_tensor(const std::optional<at::Tensor>& t) {
  return t ? *t : at::Tensor();
}

// The functional, in-place and out= kernels of clamp@SUFFIX (Meta: its
// structured meta; LO, HI: the bounds' types): clamp_s*, clamp_t*.
#define CLAMP_KERNELS(name, Meta, B)                                          \
  at::Tensor name(const at::Tensor& self, const std::optional<B>& lo,         \
                  const std::optional<B>& hi) {                               \
    EwResult r = ew_meta<Meta>(Form::Functional, {}, self, opt_ref(lo), opt_ref(hi)); \
    clamp_into(self, opt_tensor(lo), opt_tensor(hi), r.tensor);               \
    return r.tensor;                                                          \
  }                                                                           \
  at::Tensor& name##_out(const at::Tensor& self, const std::optional<B>& lo,  \
                         const std::optional<B>& hi, at::Tensor& out) {       \
    EwResult r = ew_meta<Meta>(Form::Out, out, self, opt_ref(lo), opt_ref(hi)); \
    return compute_in(r, out, [&](at::Tensor& o) {                            \
      clamp_into(self, opt_tensor(lo), opt_tensor(hi), o);                    \
    });                                                                       \
  }                                                                           \
  at::Tensor& name##_(at::Tensor& self, const std::optional<B>& lo,           \
                      const std::optional<B>& hi) {                           \
    EwResult r = ew_meta<Meta>(Form::Inplace, self, self, opt_ref(lo), opt_ref(hi)); \
    return compute_in(r, self, [&](at::Tensor& o) {                           \
      clamp_into(self, opt_tensor(lo), opt_tensor(hi), o);                    \
    });                                                                       \
  }

CLAMP_KERNELS(clamp_s, at::meta::structured_clamp, at::Scalar)
CLAMP_KERNELS(clamp_t, at::meta::structured_clamp_Tensor, at::Tensor)

// clamp_min and clamp_max: one bound (LOWER: the min), a Scalar or a Tensor.
#define CLAMP_ONE_KERNELS(name, Meta, B, LOWER)                               \
  at::Tensor name(const at::Tensor& self, const B& v) {                       \
    EwResult r = ew_meta<Meta>(Form::Functional, {}, self, v);                \
    clamp_one_into(self, v, LOWER, r.tensor);                                 \
    return r.tensor;                                                          \
  }                                                                           \
  at::Tensor& name##_out(const at::Tensor& self, const B& v, at::Tensor& out) { \
    EwResult r = ew_meta<Meta>(Form::Out, out, self, v);                      \
    return compute_in(r, out, [&](at::Tensor& o) { clamp_one_into(self, v, LOWER, o); }); \
  }                                                                           \
  at::Tensor& name##_(at::Tensor& self, const B& v) {                         \
    EwResult r = ew_meta<Meta>(Form::Inplace, self, self, v);                 \
    return compute_in(r, self, [&](at::Tensor& o) { clamp_one_into(self, v, LOWER, o); }); \
  }

template <class B>
void clamp_one_into(const at::Tensor& self, const B& v, bool lower, at::Tensor& out) {
  at::Tensor b = as_tensor(v);
  clamp_into(self, lower ? b : at::Tensor(), lower ? at::Tensor() : b, out);
}

CLAMP_ONE_KERNELS(clamp_min_s, at::meta::structured_clamp_min, at::Scalar, true)
CLAMP_ONE_KERNELS(clamp_max_s, at::meta::structured_clamp_max, at::Scalar, false)
CLAMP_ONE_KERNELS(clamp_min_t, at::meta::structured_clamp_min_Tensor, at::Tensor, true)
CLAMP_ONE_KERNELS(clamp_max_t, at::meta::structured_clamp_max_Tensor, at::Tensor, false)

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
// NaN is in nothing. Into @out, the result of isin's structured meta
// (which refuses bool and complex, as the CPU's sort does).
at::Tensor& isin_into(const at::Tensor& elements, const at::Tensor& test, bool invert,
                      at::Tensor& out) {
  int64_t m = test.numel();
  if (m == 0 || elements.numel() == 0)
    return out.fill_(invert);
  auto type = at::result_type(elements, test);
  at::Tensor e = elements.to(type).reshape({-1});
  at::Tensor sorted = std::get<0>(sort_stable(test.to(type).reshape({-1}), 0, false));
  at::Tensor pos = search(sorted, e, false, false).clamp_max_(m - 1);
  at::Tensor found = sorted.index_select(0, pos).view(elements.sizes());
  return compare_into(invert ? NISA_CMP_NE : NISA_CMP_EQ, found,
                      e.view(elements.sizes()), out);
}
using isin_meta = at::meta::structured_isin_Tensor_Tensor;
at::Tensor isin(const at::Tensor& elements, const at::Tensor& test, bool unique, bool invert) {
  auto [out] = meta_results<isin_meta>(Form::Functional, {}, elements, test, unique, invert);
  return isin_into(elements, test, invert, out);
}
at::Tensor& isin_out(const at::Tensor& elements, const at::Tensor& test, bool unique,
                     bool invert, at::Tensor& out) {
  meta_results<isin_meta>(Form::Out, {out}, elements, test, unique, invert);
  return isin_into(elements, test, invert, out);
}
// A scalar test element is one of elements' type, as ATen makes it.
using isin_s_meta = at::meta::structured_isin_Tensor_Scalar;
at::Tensor isin_s(const at::Tensor& elements, const at::Scalar& test, bool unique,
                  bool invert) {
  auto [out] = meta_results<isin_s_meta>(Form::Functional, {}, elements, test, unique, invert);
  return isin_into(elements, at::scalar_tensor(test, elements.options()), invert, out);
}
at::Tensor& isin_s_out(const at::Tensor& elements, const at::Scalar& test, bool unique,
                       bool invert, at::Tensor& out) {
  meta_results<isin_s_meta>(Form::Out, {out}, elements, test, unique, invert);
  return isin_into(elements, at::scalar_tensor(test, elements.options()), invert, out);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
#define REG_CLAMP(name, fn)                       \
  m.impl(#name, fn);                              \
  m.impl(#name "_", fn##_);                       \
  m.impl(#name ".out", fn##_out);
#define REG_CLAMP_T(name, fn)                     \
  m.impl(#name ".Tensor", fn);                    \
  m.impl(#name "_.Tensor", fn##_);                \
  m.impl(#name ".Tensor_out", fn##_out);
  REG_CLAMP(clamp, clamp_s)
  REG_CLAMP_T(clamp, clamp_t)
  REG_CLAMP(clamp_min, clamp_min_s)
  REG_CLAMP_T(clamp_min, clamp_min_t)
  REG_CLAMP(clamp_max, clamp_max_s)
  REG_CLAMP_T(clamp_max, clamp_max_t)
  m.impl("where.self", where_self);
  m.impl("where.self_out", where_out);
  m.impl("equal", equal);
  m.impl("isin.Tensor_Tensor", isin);
  m.impl("isin.Tensor_Tensor_out", isin_out);
  m.impl("isin.Tensor_Scalar", isin_s);
  m.impl("isin.Tensor_Scalar_out", isin_s_out);
}

}  // namespace torch_neuron

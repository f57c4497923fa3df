// SPDX-License-Identifier: MIT
// Gather and scatter along a dim on the card: gather, scatter (src, value,
// reduce add/multiply), scatter_add and scatter_reduce (an index per
// element, NISA_IDX_ELEMENT), index_select, index_add, index_copy,
// index_fill and index_reduce (an index of slices along the dim,
// NISA_IDX_SELECT). (Advanced indexing: TensorAdvancedIndexing.cpp.)
//
// The reducing scatter on the card (NISA_INSN_SCATTER): scatter (src, value,
// reduce add/multiply), scatter_reduce (sum, prod, mean, amax, amin,
// include_self), index_copy, index_fill, index_reduce. Duplicate indices
// apply in the order a sequential CPU loop takes them (the card's row-major
// order), so the results are the CPU's; mean is the sum divided by the
// count, as PyTorch computes it.
#include <ATen/ops/gather_meta.h>
#include <ATen/ops/index_add_meta.h>
#include <ATen/ops/index_copy_meta.h>
#include <ATen/ops/index_reduce_meta.h>
#include <ATen/ops/scatter_add_meta.h>
#include <ATen/ops/scatter_meta.h>
#include <ATen/ops/scatter_reduce_meta.h>

#include "NeuronMeta.h"
#include "NeuronScatter.h"

#include <limits>

namespace torch_neuron {

namespace {

void check_index_dtype(const at::Tensor& index, const char* op) {
  TORCH_CHECK_INDEX(index.scalar_type() == at::kLong || index.scalar_type() == at::kInt,
                    op, "(): Expected dtype int64 or int32 for index, got ",
                    index.scalar_type());
}

enum class Red { Sum, Prod, Mean, Amax, Amin };

Red parse_reduce(c10::string_view r, const char* op) {
  if (r == "sum" || r == "add") return Red::Sum;
  if (r == "prod" || r == "multiply") return Red::Prod;
  if (r == "mean") return Red::Mean;
  if (r == "amax") return Red::Amax;
  if (r == "amin") return Red::Amin;
  TORCH_CHECK(false, op, "(): reduce argument must be either sum, prod, mean, amax or "
              "amin, got ", r);
}

nisa_scatter to_isa(Red r) {
  switch (r) {
    case Red::Sum: case Red::Mean: return NISA_SCAT_ADD;
    case Red::Prod: return NISA_SCAT_MUL;
    case Red::Amax: return NISA_SCAT_MAX;
    case Red::Amin: return NISA_SCAT_MIN;
  }
  return NISA_SCAT_ADD;
}

// What PyTorch writes at the scattered positions when include_self=False.
at::Scalar identity(Red r, at::ScalarType t) {
  bool fl = at::isFloatingType(t);
  if (r == Red::Sum || r == Red::Mean) return 0;
  if (r == Red::Prod) return 1;
  if (fl) return r == Red::Amax ? -std::numeric_limits<double>::infinity()
                                : std::numeric_limits<double>::infinity();
  int64_t lo = 0, hi = 1;
  switch (t) {
    case at::kLong: lo = std::numeric_limits<int64_t>::lowest(); hi = std::numeric_limits<int64_t>::max(); break;
    case at::kInt: lo = std::numeric_limits<int32_t>::lowest(); hi = std::numeric_limits<int32_t>::max(); break;
    case at::kShort: lo = std::numeric_limits<int16_t>::lowest(); hi = std::numeric_limits<int16_t>::max(); break;
    case at::kChar: lo = std::numeric_limits<int8_t>::lowest(); hi = std::numeric_limits<int8_t>::max(); break;
    case at::kByte: lo = 0; hi = 255; break;
    case at::kBool: lo = 0; hi = 1; break;
    default: TORCH_CHECK(false, "neuron: no reduction identity for dtype ", t);
  }
  return r == Red::Amax ? lo : hi;
}

// out /= count (floor division for integers), count 0 read as 1 (PyTorch's mean).
void divide_by_count(const at::Tensor& out, const at::Tensor& count) {
  count.masked_fill_(count.eq(0), 1);
  if (out.is_floating_point())
    out.div_(count);
  else
    out.div_(count, "floor");
}

// scatter_reduce of @src into @out (a copy of self) along dim.
void scatter_reduce_into(const at::Tensor& out, int64_t dim, const at::Tensor& index,
                         const at::Tensor& src, Red r, bool include_self) {
  const char* op = "scatter_reduce";
  if (index.numel() == 0)
    return;
  if (!include_self)
    scatter_elements(out, dim, index, scalar_like(identity(r, out.scalar_type()), out)
                     .expand(index.sizes()), NISA_SCAT_ASSIGN, op);
  scatter_elements(out, dim, index, src, to_isa(r), op);
  if (r == Red::Mean) {
    at::Tensor count = include_self ? at::ones_like(out) : at::zeros_like(out);
    scatter_elements(count, dim, index, scalar_like(1, out).expand(index.sizes()),
                     NISA_SCAT_ADD, op);
    divide_by_count(out, count);
  }
}

void index_reduce_into(const at::Tensor& out, int64_t dim, const at::Tensor& index,
                       const at::Tensor& source, Red r, bool include_self) {
  const char* op = "index_reduce";
  TORCH_CHECK(r != Red::Sum, op, "(): reduce argument must be either prod, mean, amax "
              "or amin, got sum");
  if (index.numel() == 0)
    return;
  dim = at::maybe_wrap_dim(dim, std::max<int64_t>(out.dim(), 1));
  if (!include_self)
    scatter_rows(out, dim, index, scalar_like(identity(r, out.scalar_type()), out)
                 .expand(source.sizes()), NISA_SCAT_ASSIGN, op);
  scatter_rows(out, dim, index, source, to_isa(r), op);
  if (r == Red::Mean) {
    at::Tensor count = include_self ? at::ones_like(out) : at::zeros_like(out);
    scatter_rows(count, dim, index, scalar_like(1, out).expand(source.sizes()),
                 NISA_SCAT_ADD, op);
    divide_by_count(out, count);
  }
}

// The three forms of a structured scatter or index operator name##_ (its
// kernel, in place on a tensor holding self): the result and the checks
// of its arguments are its structured meta's; the functional and out=
// results get self's values first.
#define STRUCTURED_FORMS(name, Meta, PARAMS, ARGS)                              \
  at::Tensor name(const at::Tensor& self PARAMS) {                              \
    at::Tensor out = meta_results<Meta>(Form::Functional, {}, self ARGS)[0];    \
    out.copy_(self);                                                            \
    return name##_kernel(out ARGS);                                             \
  }                                                                             \
  at::Tensor& name##_inplace(at::Tensor& self PARAMS) {                         \
    meta_results<Meta>(Form::Inplace, {self}, self ARGS);                       \
    return name##_kernel(self ARGS);                                            \
  }                                                                             \
  at::Tensor& name##_out(const at::Tensor& self PARAMS, at::Tensor& out) {      \
    meta_results<Meta>(Form::Out, {out}, self ARGS);                            \
    if (!out.is_same(self))                                                     \
      out.copy_(self);                                                          \
    return name##_kernel(out ARGS);                                             \
  }

// ---- scatter ---------------------------------------------------------------

nisa_scatter old_reduce(c10::string_view r) {
  if (r == "add") return NISA_SCAT_ADD;
  if (r == "multiply") return NISA_SCAT_MUL;
  TORCH_CHECK(false, "reduce argument must be either add or multiply.");
}

at::Tensor& scatter_src_kernel(at::Tensor& self, int64_t dim, const at::Tensor& index,
                              const at::Tensor& src) {
  scatter_elements(self, dim, index, src, NISA_SCAT_ASSIGN, "scatter");
  return self;
}
at::Tensor& scatter_value_kernel(at::Tensor& self, int64_t dim, const at::Tensor& index,
                                const at::Scalar& value) {
  scatter_elements(self, dim, index, scalar_like(value, self).expand(index.sizes()),
                   NISA_SCAT_ASSIGN, "scatter");
  return self;
}
at::Tensor& scatter_reduce_old_kernel(at::Tensor& self, int64_t dim, const at::Tensor& index,
                                     const at::Tensor& src, c10::string_view reduce) {
  scatter_elements(self, dim, index, src, old_reduce(reduce), "scatter");
  return self;
}
at::Tensor& scatter_value_reduce_kernel(at::Tensor& self, int64_t dim,
                                       const at::Tensor& index, const at::Scalar& value,
                                       c10::string_view reduce) {
  scatter_elements(self, dim, index, scalar_like(value, self).expand(index.sizes()),
                   old_reduce(reduce), "scatter");
  return self;
}
at::Tensor& scatter_reduce_two_kernel(at::Tensor& self, int64_t dim, const at::Tensor& index,
                                     const at::Tensor& src, c10::string_view reduce,
                                     bool include_self) {
  scatter_reduce_into(self, dim, index, src, parse_reduce(reduce, "scatter_reduce"),
                      include_self);
  return self;
}
at::Tensor& index_copy_kernel(at::Tensor& self, int64_t dim, const at::Tensor& index,
                             const at::Tensor& source) {
  scatter_rows(self, dim, index, source, NISA_SCAT_ASSIGN, "index_copy");
  return self;
}
at::Tensor& index_reduce_kernel(at::Tensor& self, int64_t dim, const at::Tensor& index,
                               const at::Tensor& source, c10::string_view reduce,
                               bool include_self) {
  index_reduce_into(self, dim, index, source, parse_reduce(reduce, "index_reduce"),
                    include_self);
  return self;
}

#define P_SRC , int64_t dim, const at::Tensor& index, const at::Tensor& src
#define A_SRC , dim, index, src
#define P_VALUE , int64_t dim, const at::Tensor& index, const at::Scalar& value
#define A_VALUE , dim, index, value
STRUCTURED_FORMS(scatter_src, at::meta::structured_scatter_src, P_SRC, A_SRC)
STRUCTURED_FORMS(scatter_value, at::meta::structured_scatter_value, P_VALUE, A_VALUE)
#define P_SRC_RED P_SRC, c10::string_view reduce
#define A_SRC_RED A_SRC, reduce
#define P_VALUE_RED P_VALUE, c10::string_view reduce
#define A_VALUE_RED A_VALUE, reduce
#define P_SRC_RED_SELF P_SRC_RED, bool include_self
#define A_SRC_RED_SELF A_SRC_RED, include_self
#define P_SOURCE , int64_t dim, const at::Tensor& index, const at::Tensor& source
#define A_SOURCE , dim, index, source
#define P_SOURCE_RED_SELF P_SOURCE, c10::string_view reduce, bool include_self
#define A_SOURCE_RED_SELF A_SOURCE, reduce, include_self
STRUCTURED_FORMS(scatter_reduce_old, at::meta::structured_scatter_reduce, P_SRC_RED, A_SRC_RED)
STRUCTURED_FORMS(scatter_value_reduce, at::meta::structured_scatter_value_reduce, P_VALUE_RED,
                 A_VALUE_RED)
STRUCTURED_FORMS(scatter_reduce_two, at::meta::structured_scatter_reduce_two, P_SRC_RED_SELF,
                 A_SRC_RED_SELF)
STRUCTURED_FORMS(index_copy, at::meta::structured_index_copy, P_SOURCE, A_SOURCE)
STRUCTURED_FORMS(index_reduce, at::meta::structured_index_reduce, P_SOURCE_RED_SELF,
                 A_SOURCE_RED_SELF)

at::Tensor& index_fill_tensor_(at::Tensor& self, int64_t dim, const at::Tensor& index,
                               const at::Tensor& value) {
  TORCH_CHECK(value.dim() == 0, "index_fill_ only supports a 0-dimensional value "
              "tensor, but got tensor with ", value.dim(), " dimension(s).");
  check_index_dtype(index, "index_fill_");
  check_device(self, index);
  if (index.numel() == 0 || self.numel() == 0)
    return self;
  at::Tensor v = is_neuron(value) ? value.to(self.scalar_type())
                                  : scalar_like(value.item(), self);
  dim = at::maybe_wrap_dim(dim, std::max<int64_t>(self.dim(), 1));
  at::Tensor dst = as_1d(self);
  // index_fill_ takes negative indices, counted from the end.
  at::Tensor idx = wrap_indices(as_1d(index), dst.size(dim));
  std::vector<int64_t> shape(dst.sizes().begin(), dst.sizes().end());
  shape[dim] = idx.numel();
  scatter_rows(dst, dim, idx, v.expand(shape), NISA_SCAT_ASSIGN, "index_fill_");
  return self;
}
at::Tensor& index_fill_scalar_(at::Tensor& self, int64_t dim, const at::Tensor& index,
                               const at::Scalar& value) {
  return index_fill_tensor_(self, dim, index, scalar_like(value, self));
}
at::Tensor index_fill_scalar(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                             const at::Scalar& value) {
  at::Tensor out = self.clone();
  return index_fill_scalar_(out, dim, index, value);
}
at::Tensor index_fill_tensor(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                             const at::Tensor& value) {
  at::Tensor out = self.clone();
  return index_fill_tensor_(out, dim, index, value);
}

// ---- index_select, gather, scatter_add, index_add ------------------------

at::Tensor& index_select_into(const at::Tensor& self, int64_t dim,
                              const at::Tensor& index, at::Tensor& out) {
  check_index(index);
  check_device(self, index);
  at::Tensor idx = index.dim() == 0 ? index.view({1}) : index;
  TORCH_CHECK(idx.dim() == 1, "index_select(): Index is supposed to be a vector");
  dim = at::maybe_wrap_dim(dim, std::max<int64_t>(self.dim(), 1));
  std::vector<int64_t> shape(self.sizes().begin(), self.sizes().end());
  if (self.dim() == 0) {
    // A scalar stays a scalar (as on the CPU): one index, a 0-dim result.
    TORCH_CHECK(idx.size(0) == 1, "index_select(): Index to scalar can have "
                "only 1 value, got ", idx.size(0), " value(s)");
  } else {
    shape[dim] = idx.size(0);
  }
  resize_out(out, shape);
  if (out.numel() == 0)
    return out;
  at::Tensor src = self.dim() == 0 ? self.view({1}) : self;
  at::Tensor dst = out.dim() == 0 ? out.view({1}) : out;
  nrn_tensor_desc o = desc(dst), s = desc(src), i = desc(idx);
  NEURON_OP(nrn_op_gather(stream_for(self), NISA_IDX_SELECT, &o, &s, &i,
                          static_cast<int>(dim)));
  return out;
}

at::Tensor index_select(const at::Tensor& self, int64_t dim, const at::Tensor& index) {
  at::Tensor out = empty_neuron({0}, self.scalar_type(), self.device());
  return index_select_into(self, dim, index, out);
}

at::Tensor& index_select_out(const at::Tensor& self, int64_t dim,
                             const at::Tensor& index, at::Tensor& out) {
  return index_select_into(self, dim, index, out);
}

// gather's result and checks (the index's type and shape) are its
// structured meta's; an empty index gathers nothing.
at::Tensor& gather_into(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                        at::Tensor& out) {
  check_device(self, index);
  if (index.numel() == 0)
    return out;
  check_elementwise_index(self, dim, index, nullptr, "gather");
  dim = at::maybe_wrap_dim(dim, std::max<int64_t>(self.dim(), 1));
  at::Tensor dst = as_1d(out);
  nrn_tensor_desc o = desc(dst), s = desc(as_1d(self)), i = desc(as_1d(index));
  NEURON_OP(nrn_op_gather(stream_for(self), NISA_IDX_ELEMENT, &o, &s, &i,
                          static_cast<int>(dim)));
  return out;
}

at::Tensor& gather_out(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                       bool sparse_grad, at::Tensor& out) {
  meta_results<at::meta::structured_gather>(Form::Out, {out}, self, dim, index, sparse_grad);
  return gather_into(self, dim, index, out);
}

at::Tensor gather(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                  bool sparse_grad) {
  at::Tensor out = meta_results<at::meta::structured_gather>(Form::Functional, {}, self, dim,
                                                             index, sparse_grad)[0];
  return gather_into(self, dim, index, out);
}

at::Tensor& scatter_add_kernel(at::Tensor& self, int64_t dim, const at::Tensor& index,
                              const at::Tensor& src) {
  check_index(index);
  check_device(self, index);
  check_device(self, src);
  check_elementwise_index(self, dim, index, &src, "scatter_add");
  if (index.numel() == 0)
    return self;
  dim = at::maybe_wrap_dim(dim, std::max<int64_t>(self.dim(), 1));
  // The card walks the index's shape and reads src there.
  at::Tensor idx = as_1d(index), s = as_1d(src);
  if (s.sizes() != idx.sizes())
    s = s.as_strided(idx.sizes(), s.strides(), s.storage_offset());
  at::Tensor dst = as_1d(self);
  nrn_tensor_desc o = desc(dst), ds = desc(s), i = desc(idx);
  NEURON_OP(nrn_op_scatter_add(stream_for(self), NISA_IDX_ELEMENT, &o, &ds, &i,
                               static_cast<int>(dim)));
  return self;
}

STRUCTURED_FORMS(scatter_add, at::meta::structured_scatter_add, P_SRC, A_SRC)

}  // namespace

at::Tensor& index_add_into(at::Tensor& out, int64_t dim, const at::Tensor& index,
                           const at::Tensor& source, const at::Scalar& alpha) {
  check_index(index);
  check_device(out, index);
  check_device(out, source);
  if (index.numel() == 0)
    return out;
  dim = at::maybe_wrap_dim(dim, std::max<int64_t>(out.dim(), 1));
  at::Tensor src = alpha.toDouble() == 1.0 ? source : source.mul(alpha);
  at::Tensor idx = index.dim() == 0 ? index.view({1}) : index;
  // A scalar is a one-element vector here (as index_select reads it).
  at::Tensor dst = out.dim() == 0 ? out.view({1}) : out;
  if (out.dim() == 0)
    src = src.reshape({1});
  nrn_tensor_desc o = desc(dst), s = desc(src), i = desc(idx);
  NEURON_OP(nrn_op_scatter_add(stream_for(out), NISA_IDX_SELECT, &o, &s, &i,
                               static_cast<int>(dim)));
  return out;
}

namespace {

at::Tensor& index_add_kernel(at::Tensor& self, int64_t dim, const at::Tensor& index,
                            const at::Tensor& source, const at::Scalar& alpha) {
  return index_add_into(self, dim, index, source, alpha);
}
#define P_SOURCE_ALPHA P_SOURCE, const at::Scalar& alpha
#define A_SOURCE_ALPHA A_SOURCE, alpha
STRUCTURED_FORMS(index_add, at::meta::structured_index_add, P_SOURCE_ALPHA, A_SOURCE_ALPHA)

}  // namespace

at::Tensor scalar_like(const at::Scalar& value, const at::Tensor& self) {
  return at::scalar_tensor(value, self.options());
}

at::Tensor wrap_indices(const at::Tensor& index, int64_t n) {
  at::Tensor i = index.scalar_type() == at::kLong ? index : index.to(at::kLong);
  at::Tensor w = at::where(i.lt(0), i.add(n), i);
  at::Tensor bad = w.lt(0).logical_or_(w.ge(n));
  return at::where(bad, at::scalar_tensor(n, w.options()), w);
}

void check_elementwise_index(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                             const at::Tensor* src, const char* op) {
  TORCH_CHECK(index.dim() == self.dim() || (index.dim() <= 1 && self.dim() <= 1), op,
              "(): Index tensor must have the same number of dimensions as self tensor");
  TORCH_CHECK(!src || as_1d(*src).dim() == as_1d(index).dim(), op, "(): Index tensor must "
              "have the same number of dimensions as src tensor");
  int64_t d0 = at::maybe_wrap_dim(dim, std::max<int64_t>(self.dim(), 1));
  at::Tensor idx = as_1d(index), dst = as_1d(self);
  TORCH_CHECK(idx.numel() == 0 || dst.size(d0) > 0, op, "(): index out of bounds: "
              "dimension ", d0, " of self has size 0");
  for (int64_t d = 0; d < idx.dim(); d++) {
    TORCH_CHECK((!src || idx.size(d) <= as_1d(*src).size(d)) &&
                (d == d0 || idx.size(d) <= dst.size(d)), op, "(): Expected index ",
                idx.sizes(), " to be smaller than self ", dst.sizes(), " apart from "
                "dimension ", d0, src ? " and to be smaller size than src " : "",
                src ? as_1d(*src).sizes() : at::IntArrayRef());
  }
}

void scatter_elements(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                      const at::Tensor& src, nisa_scatter red, const char* op) {
  check_index_dtype(index, op);
  check_device(self, index);
  check_device(self, src);
  TORCH_CHECK(is_neuron(src), op, "(): expected src on ", self.device());
  TORCH_CHECK(src.scalar_type() == self.scalar_type(), op, "(): Expected self.dtype to "
              "be equal to src.dtype");
  check_elementwise_index(self, dim, index, &src, op);
  if (index.numel() == 0)
    return;
  dim = at::maybe_wrap_dim(dim, std::max<int64_t>(self.dim(), 1));
  at::Tensor dst = as_1d(self), idx = as_1d(index), s = as_1d(src);
  // The card walks the index's shape and reads src there.
  if (s.sizes() != idx.sizes())
    s = s.as_strided(idx.sizes(), s.strides(), s.storage_offset());
  nrn_tensor_desc o = desc(dst), ds = desc(s), i = desc(idx);
  NEURON_OP(nrn_op_scatter(stream_for(self), red, NISA_IDX_ELEMENT, &o, &ds, &i,
                           static_cast<int>(dim)));
}

void scatter_rows(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                  const at::Tensor& source, nisa_scatter red, const char* op) {
  check_index_dtype(index, op);
  check_device(self, index);
  check_device(self, source);
  TORCH_CHECK(is_neuron(source), op, "(): expected source on ", self.device());
  TORCH_CHECK(source.scalar_type() == self.scalar_type(), op, "(): self (",
              self.scalar_type(), ") and source (", source.scalar_type(),
              ") must have the same scalar type");
  TORCH_CHECK_INDEX(index.dim() <= 1, op, "(): Index should have dimension 1 or 0 (got ",
                    index.dim(), ")");
  if (index.numel() == 0)
    return;
  dim = at::maybe_wrap_dim(dim, std::max<int64_t>(self.dim(), 1));
  at::Tensor dst = as_1d(self), idx = as_1d(index), src = as_1d(source);
  TORCH_CHECK(src.dim() == dst.dim(), op, "(): Source/destination tensor must have same "
              "slice shapes. Destination slice shape: ", dst.sizes(), ", source: ",
              src.sizes());
  for (int64_t d = 0; d < dst.dim(); d++) {
    TORCH_CHECK(d == dim ? src.size(d) == idx.numel() : src.size(d) == dst.size(d), op,
                "(): Source/destination tensor must have same slice shapes "
                "(source ", src.sizes(), ", destination ", dst.sizes(), ", ",
                idx.numel(), " indices along dimension ", dim, ")");
  }
  nrn_tensor_desc o = desc(dst), ds = desc(src), i = desc(idx);
  NEURON_OP(nrn_op_scatter(stream_for(self), red, NISA_IDX_SELECT, &o, &ds, &i,
                           static_cast<int>(dim)));
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("index_select", index_select);
  m.impl("index_select.out", index_select_out);
  m.impl("gather", gather);
  m.impl("gather.out", gather_out);
  m.impl("scatter_add", scatter_add);
  m.impl("scatter_add_", scatter_add_inplace);
  m.impl("scatter_add.out", scatter_add_out);
  m.impl("index_add", index_add);
  m.impl("index_add_", index_add_inplace);
  m.impl("index_add.out", index_add_out);
  m.impl("scatter.src", scatter_src);
  m.impl("scatter_.src", scatter_src_inplace);
  m.impl("scatter.src_out", scatter_src_out);
  m.impl("scatter.value", scatter_value);
  m.impl("scatter_.value", scatter_value_inplace);
  m.impl("scatter.value_out", scatter_value_out);
  m.impl("scatter.reduce", scatter_reduce_old);
  m.impl("scatter_.reduce", scatter_reduce_old_inplace);
  m.impl("scatter.reduce_out", scatter_reduce_old_out);
  m.impl("scatter.value_reduce", scatter_value_reduce);
  m.impl("scatter_.value_reduce", scatter_value_reduce_inplace);
  m.impl("scatter.value_reduce_out", scatter_value_reduce_out);
  m.impl("scatter_reduce.two", scatter_reduce_two);
  m.impl("scatter_reduce_.two", scatter_reduce_two_inplace);
  m.impl("scatter_reduce.two_out", scatter_reduce_two_out);
  m.impl("index_copy", index_copy);
  m.impl("index_copy_", index_copy_inplace);
  m.impl("index_copy.out", index_copy_out);
  m.impl("index_fill.int_Scalar", index_fill_scalar);
  m.impl("index_fill_.int_Scalar", index_fill_scalar_);
  m.impl("index_fill.int_Tensor", index_fill_tensor);
  m.impl("index_fill_.int_Tensor", index_fill_tensor_);
  m.impl("index_reduce", index_reduce);
  m.impl("index_reduce_", index_reduce_inplace);
  m.impl("index_reduce.out", index_reduce_out);
}

}  // namespace torch_neuron

// SPDX-License-Identifier: MIT
// Sorting on the card: sort (stable, so argsort/msort too), topk,
// kthvalue, median/nanmedian and mode, and the sort and scan the other
// files build on (NeuronSort.h). Every value comes from NISA_INSN_SORT /
// NISA_INSN_SCAN and the card's elementwise and gather instructions; the
// host only works out shapes.
#include <algorithm>
#include <cmath>

#include <ATen/ops/sort_meta.h>
#include <ATen/ops/topk_meta.h>

#include "NeuronMeta.h"
#include "NeuronSort.h"

namespace torch_neuron {
namespace {

// @t's sizes around @dim: {outer, len, inner}.
std::vector<int64_t> around(const at::Tensor& t, int64_t dim) {
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; d++)
    outer *= t.size(d);
  for (int64_t d = dim + 1; d < t.dim(); d++)
    inner *= t.size(d);
  return {outer, t.size(dim), inner};
}

void check_lanes(const std::vector<int64_t>& s, const char* op) {
  for (int64_t v : s)
    TORCH_CHECK(v <= static_cast<int64_t>(UINT32_MAX), "neuron: ", op, ": a dimension of ",
                v, " elements is more than the card's operands take (2^32 - 1)");
}

}  // namespace

std::tuple<at::Tensor, at::Tensor> sort_stable(const at::Tensor& self, int64_t dim,
                                               bool descending) {
  int64_t d = at::maybe_wrap_dim(dim, std::max<int64_t>(self.dim(), 1));
  at::Tensor values = empty_neuron(self.sizes(), self.scalar_type(), self.device());
  at::Tensor indices = empty_neuron(self.sizes(), at::kLong, self.device());
  if (self.numel() == 0)
    return {values, indices};
  if (self.dim() == 0) {
    values.copy_(self);
    indices.zero_();
    return {values, indices};
  }
  auto s3 = around(self, d);
  check_lanes(s3, "sort");
  TORCH_CHECK(s3[1] <= NISA_SORT_MAX_LEN, "neuron: sort: ", s3[1], " elements along "
              "the sorted dimension; the card sorts at most ", NISA_SORT_MAX_LEN);
  at::Tensor x = self.contiguous().view(s3);
  nrn_tensor_desc dv = desc(values.view(s3)), di = desc(indices.view(s3)), dx = desc(x);
  NEURON_OP(nrn_op_sort(stream_for(self), &dv, &di, &dx, 1, descending ? 1 : 0));
  return {values, indices};
}

at::Tensor scan(nisa_scan op, const at::Tensor& self, int64_t dim, at::ScalarType dtype,
                at::Tensor* indices, const at::Tensor* dst) {
  int64_t d = at::maybe_wrap_dim(dim, std::max<int64_t>(self.dim(), 1));
  TORCH_INTERNAL_ASSERT(!dst || (dst->is_contiguous() && dst->scalar_type() == dtype &&
                                 dst->sizes() == self.sizes()));
  at::Tensor out = dst ? *dst : empty_neuron(self.sizes(), dtype, self.device());
  if (indices)
    *indices = empty_neuron(self.sizes(), at::kLong, self.device());
  if (self.numel() == 0)
    return out;
  at::Tensor x = self.to(dtype).contiguous();
  auto s3 = self.dim() ? around(self, d) : std::vector<int64_t>{1, 1, 1};
  check_lanes(s3, "scan");
  nrn_tensor_desc dd = desc(out.view(s3)), dx = desc(x.view(s3)), di{};
  if (indices)
    di = desc(indices->view(s3));
  NEURON_OP(nrn_op_scan(stream_for(self), op, &dd, indices ? &di : nullptr, &dx, 1));
  return out;
}

namespace {

// ---- sort, topk, kthvalue ----

std::tuple<at::Tensor, at::Tensor> sort_st(const at::Tensor& self, std::optional<bool>,
                                           int64_t dim, bool descending) {
  return sort_stable(self, dim, descending);
}

// The out= forms check and resize values and indices with the structured
// metas (ATen's out= rules: indices int64, values self's type).
std::tuple<at::Tensor&, at::Tensor&> sort_values_stable(const at::Tensor& self,
                                                        std::optional<bool> stable,
                                                        int64_t dim, bool descending,
                                                        at::Tensor& values,
                                                        at::Tensor& indices) {
  meta_results<at::meta::structured_sort_stable, 2>(Form::Out, {values, indices}, self,
                                                      stable, dim, descending);
  auto [v, i] = sort_stable(self, dim, descending);
  values.copy_(v);
  indices.copy_(i);
  return {values, indices};
}

std::tuple<at::Tensor, at::Tensor> topk_impl(const at::Tensor& self, int64_t k, int64_t dim,
                                             bool largest) {
  int64_t d = at::maybe_wrap_dim(dim, std::max<int64_t>(self.dim(), 1));
  int64_t n = self.dim() ? self.size(d) : 1;
  TORCH_CHECK(k >= 0 && k <= n, "selected index k out of range");
  auto [v, i] = sort_stable(self, d, largest);
  if (self.dim() == 0)
    return {v, i};
  return {v.narrow(d, 0, k).contiguous(), i.narrow(d, 0, k).contiguous()};
}

std::tuple<at::Tensor, at::Tensor> topk(const at::Tensor& self, c10::SymInt k, int64_t dim,
                                        bool largest, bool) {
  return topk_impl(self, k.guard_int(__FILE__, __LINE__), dim, largest);
}

std::tuple<at::Tensor&, at::Tensor&> topk_out(const at::Tensor& self, c10::SymInt k,
                                              int64_t dim, bool largest, bool sorted,
                                              at::Tensor& values, at::Tensor& indices) {
  int64_t kk = k.guard_int(__FILE__, __LINE__);
  meta_results<at::meta::structured_topk, 2>(Form::Out, {values, indices}, self, kk, dim,
                                             largest, sorted);
  auto [v, i] = topk_impl(self, kk, dim, largest);
  values.copy_(v);
  indices.copy_(i);
  return {values, indices};
}

// Element @pos (int64, self's shape with dim of extent 1) of the sorted lanes.
std::tuple<at::Tensor, at::Tensor> pick(const at::Tensor& sv, const at::Tensor& si,
                                        const at::Tensor& pos, int64_t d, bool keepdim) {
  at::Tensor v = sv.gather(d, pos), i = si.gather(d, pos);
  if (!keepdim) {
    v = v.squeeze(d);
    i = i.squeeze(d);
  }
  return {v, i};
}

std::tuple<at::Tensor, at::Tensor> kthvalue(const at::Tensor& self, int64_t k, int64_t dim,
                                            bool keepdim) {
  int64_t d = at::maybe_wrap_dim(dim, std::max<int64_t>(self.dim(), 1));
  int64_t n = self.dim() ? self.size(d) : 1;
  TORCH_CHECK(k >= 1 && k <= n, "kthvalue(): selected number k out of range for dimension ",
              dim);
  if (self.dim() == 0)
    return {self.clone(), at::zeros({}, self.options().dtype(at::kLong))};
  auto [sv, si] = sort_stable(self, d, false);
  std::vector<int64_t> shape(self.sizes().begin(), self.sizes().end());
  shape[d] = 1;
  at::Tensor pos = at::full(shape, k - 1, self.options().dtype(at::kLong));
  return pick(sv, si, pos, d, keepdim);
}

std::tuple<at::Tensor&, at::Tensor&> kthvalue_out(const at::Tensor& self, int64_t k,
                                                  int64_t dim, bool keepdim,
                                                  at::Tensor& values, at::Tensor& indices) {
  auto [v, i] = torch_neuron::kthvalue(self, k, dim, keepdim);
  into(values, v);
  into(indices, i);
  return {values, indices};
}

// ---- median, nanmedian ----

// The CPU's choice: median takes the lower middle, or the first NaN of a
// lane that has one; nanmedian the lower middle of the numbers (the first
// NaN when there are none). Sorted ascending, a lane's NaNs are its last
// elements, in their order.
std::tuple<at::Tensor, at::Tensor> median_dim_impl(const at::Tensor& self, int64_t dim,
                                                   bool keepdim, bool ignore_nan) {
  int64_t d = at::maybe_wrap_dim(dim, std::max<int64_t>(self.dim(), 1));
  const char* name = ignore_nan ? "nanmedian" : "median";
  TORCH_CHECK(self.dim() == 0 || self.size(d) > 0, name, "() cannot compute ", name,
              " for dimension ", dim, " of size 0");
  if (self.dim() == 0)
    return {self.clone(), at::zeros({}, self.options().dtype(at::kLong))};
  auto [sv, si] = sort_stable(self, d, false);
  int64_t n = self.size(d);
  at::Tensor pos;
  if (card_float(self.scalar_type())) {
    at::Tensor nans = at::isnan(self).sum(d, true, at::kLong);
    if (ignore_nan) {
      // ((n - nans - 1) max 0) floor-div 2
      pos = at::div(nans.neg().add(n - 1).clamp_min(0), 2, "floor");
    } else {
      pos = at::where(nans.gt(0), nans.neg().add(n), at::full_like(nans, (n - 1) / 2));
    }
  } else {
    std::vector<int64_t> shape(self.sizes().begin(), self.sizes().end());
    shape[d] = 1;
    pos = at::full(shape, (n - 1) / 2, self.options().dtype(at::kLong));
  }
  return pick(sv, si, pos, d, keepdim);
}

std::tuple<at::Tensor, at::Tensor> median_dim(const at::Tensor& self, int64_t dim,
                                              bool keepdim) {
  return median_dim_impl(self, dim, keepdim, false);
}
std::tuple<at::Tensor, at::Tensor> nanmedian_dim(const at::Tensor& self, int64_t dim,
                                                 bool keepdim) {
  return median_dim_impl(self, dim, keepdim, true);
}
std::tuple<at::Tensor&, at::Tensor&> median_dim_out(const at::Tensor& self, int64_t dim,
                                                    bool keepdim, at::Tensor& values,
                                                    at::Tensor& indices) {
  auto [v, i] = median_dim_impl(self, dim, keepdim, false);
  into(values, v);
  into(indices, i);
  return {values, indices};
}
std::tuple<at::Tensor&, at::Tensor&> nanmedian_dim_out(const at::Tensor& self, int64_t dim,
                                                       bool keepdim, at::Tensor& values,
                                                       at::Tensor& indices) {
  auto [v, i] = median_dim_impl(self, dim, keepdim, true);
  into(values, v);
  into(indices, i);
  return {values, indices};
}

at::Tensor median_all_impl(const at::Tensor& self, bool ignore_nan) {
  if (self.numel() == 0)
    return at::full({}, std::nan(""), self.options());
  return std::get<0>(median_dim_impl(self.reshape({-1}), 0, false, ignore_nan));
}
at::Tensor median_all(const at::Tensor& self) {
  return median_all_impl(self, false);
}
at::Tensor nanmedian_all(const at::Tensor& self) {
  return median_all_impl(self, true);
}

// ---- mode ----

// The most frequent value of each lane (of equally frequent ones the
// smallest) and the last position it occurs at, as the CPU reports them:
// sorted stably, a run's last element carries the value's largest
// position; the run lengths come from scans, the first longest from argmax.
std::tuple<at::Tensor, at::Tensor> mode(const at::Tensor& self, int64_t dim, bool keepdim) {
  int64_t d = at::maybe_wrap_dim(dim, std::max<int64_t>(self.dim(), 1));
  TORCH_CHECK(self.dim() == 0 || self.size(d) > 0, "mode(): Expected reduction dim ", dim,
              " to have non-zero size.");
  if (self.dim() == 0)
    return {self.clone(), at::zeros({}, self.options().dtype(at::kLong))};
  std::vector<int64_t> out_shape(self.sizes().begin(), self.sizes().end());
  out_shape[d] = 1;
  if (self.numel() == 0) {
    at::Tensor v = empty_neuron(out_shape, self.scalar_type(), self.device());
    at::Tensor i = empty_neuron(out_shape, at::kLong, self.device());
    return {keepdim ? v : v.squeeze(d), keepdim ? i : i.squeeze(d)};
  }
  int64_t n = self.size(d);
  at::Tensor rows = self.movedim(d, -1).reshape({-1, n});
  auto [sv, si] = sort_stable(rows, 1, false);
  int64_t r = rows.size(0);
  auto lopts = self.options().dtype(at::kLong);
  at::Tensor first = empty_neuron({r, n}, at::kBool, self.device());
  first.narrow(1, 0, 1).fill_(true);
  if (n > 1) {
    at::Tensor rest = first.narrow(1, 1, n - 1);
    at::ne_out(rest, sv.narrow(1, 1, n - 1), sv.narrow(1, 0, n - 1));
  }
  at::Tensor pos = scan(NISA_SCAN_SUM, at::ones({r, n}, lopts), 1, at::kLong).sub_(1);
  at::Tensor start = scan(NISA_SCAN_MAX, at::where(first, pos, at::zeros_like(pos)), 1,
                          at::kLong);
  at::Tensor len = pos.sub(start);
  at::Tensor at_ = at::argmax(len, 1, true);
  at::Tensor v = sv.gather(1, at_), i = si.gather(1, at_);
  std::vector<int64_t> moved(out_shape.begin(), out_shape.end());
  moved.erase(moved.begin() + d);
  v = v.view(moved);
  i = i.view(moved);
  if (keepdim) {
    v = v.unsqueeze(d);
    i = i.unsqueeze(d);
  }
  return {v, i};
}

std::tuple<at::Tensor&, at::Tensor&> mode_out(const at::Tensor& self, int64_t dim,
                                              bool keepdim, at::Tensor& values,
                                              at::Tensor& indices) {
  auto [v, i] = torch_neuron::mode(self, dim, keepdim);
  into(values, v);
  into(indices, i);
  return {values, indices};
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("sort.stable", sort_st);
  m.impl("sort.values_stable", sort_values_stable);
  m.impl("topk", topk);
  m.impl("topk.values", topk_out);
  m.impl("kthvalue", kthvalue);
  m.impl("kthvalue.values", kthvalue_out);
  m.impl("median", median_all);
  m.impl("median.dim", median_dim);
  m.impl("median.dim_values", median_dim_out);
  m.impl("nanmedian", nanmedian_all);
  m.impl("nanmedian.dim", nanmedian_dim);
  m.impl("nanmedian.dim_values", nanmedian_dim_out);
  m.impl("mode", mode);
  m.impl("mode.values", mode_out);
}

}  // namespace torch_neuron

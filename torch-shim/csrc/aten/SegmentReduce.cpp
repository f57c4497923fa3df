// SPDX-License-Identifier: MIT
// segment_reduce (sum, prod, mean, max, min; lengths or offsets; initial)
// on the card: each position along the axis gets its segment's number (how
// many segment ends lie at or before it), then one reducing scatter of the
// data into the segments, in the CPU's order. As on the CPU: the reduction
// starts from `initial` (or its identity), mean divides by the length, an
// empty segment is `initial`, or NaN for mean without one.
#include "NeuronScatter.h"

#include <limits>

namespace torch_neuron {
namespace {

at::Tensor segment_reduce(const at::Tensor& data, c10::string_view reduce,
                          const std::optional<at::Tensor>& lengths,
                          const std::optional<at::Tensor>& indices,
                          const std::optional<at::Tensor>& offsets, int64_t axis, bool unsafe,
                          const std::optional<at::Scalar>& initial) {
  nisa_scatter red = NISA_SCAT_ADD;
  double ident = 0;
  bool mean = reduce == "mean";
  const double inf = std::numeric_limits<double>::infinity();
  if (reduce == "prod") {
    red = NISA_SCAT_MUL, ident = 1;
  } else if (reduce == "max") {
    red = NISA_SCAT_MAX, ident = -inf;
  } else if (reduce == "min") {
    red = NISA_SCAT_MIN, ident = inf;
  } else {
    TORCH_CHECK(reduce == "sum" || mean, "unsupported reduction given! ", reduce);
  }
  TORCH_CHECK(!indices || !indices->defined(), "segment_reduce(): indices based reduction "
              "is not supported yet.");
  TORCH_CHECK(at::isFloatingType(data.scalar_type()), "segment_reduce(): expected floating "
              "data, got ", data.scalar_type());
  axis = at::maybe_wrap_dim(axis, data.dim());
  at::Tensor len;
  if (lengths && lengths->defined()) {
    len = *lengths;
  } else {
    TORCH_CHECK(offsets && offsets->defined(), "segment_reduce(): Either lengths or offsets "
                "must be defined");
    const at::Tensor& o = *offsets;
    int64_t k = o.size(-1);
    len = o.narrow(-1, 1, k - 1) - o.narrow(-1, 0, k - 1);
  }
  check_device(data, len);
  TORCH_CHECK(len.scalar_type() == at::kLong || len.scalar_type() == at::kInt,
              "segment_reduce(): lengths must be int64 or int32");
  TORCH_CHECK(len.dim() == axis + 1, "segment_reduce(): Expected lengths/offsets to have ",
              axis + 1, " dimensions (axis ", axis, "), got ", len.dim());
  for (int64_t d = 0; d < axis; d++)
    TORCH_CHECK(len.size(d) == data.size(d), "segment_reduce(): lengths and data differ "
                "in dimension ", d);
  len = len.to(at::kLong);
  int64_t S = len.size(-1), J = data.size(axis);
  std::vector<int64_t> shape(data.sizes().begin(), data.sizes().end());
  shape[axis] = S + 1;  // one more: data past the last segment lands there
  at::Scalar start = initial ? *initial : at::Scalar(ident);
  at::Tensor out = at::full(shape, start, data.options());
  if (J > 0 && S > 0) {
    // seg[o, j] = #{s : end[o, s] <= j}, the segment of position j
    at::Tensor ends = at::cumsum(len, -1).unsqueeze(-2);                // [.., 1, S]
    at::Tensor pos = at::arange(J, len.options()).view({J, 1});       // [J, 1]
    at::Tensor seg = ends.le(pos).sum(-1);                             // [.., J]
    std::vector<int64_t> view(seg.sizes().begin(), seg.sizes().end());
    for (int64_t d = axis + 1; d < data.dim(); d++) view.push_back(1);
    scatter_elements(out, axis, seg.view(view).expand(data.sizes()), data, red,
                     "segment_reduce");
  }
  out = out.narrow(axis, 0, S);
  if (mean) {
    std::vector<int64_t> lv(len.sizes().begin(), len.sizes().end());
    for (int64_t d = axis + 1; d < data.dim(); d++) lv.push_back(1);
    at::Tensor l = len.view(lv);
    at::Tensor empty_val = initial ? at::scalar_tensor(*initial, data.options())
                                   : at::scalar_tensor(std::nan(""), data.options());
    out = at::where(l.eq(0), empty_val, out / l.to(data.scalar_type()));
  }
  return out.contiguous();
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("segment_reduce", segment_reduce);
}

}  // namespace torch_neuron

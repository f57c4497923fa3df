// SPDX-License-Identifier: MIT
// searchsorted and bucketize on the card: a stable sort of the boundaries
// and values together, then a scan (search(), isin's too); the host
// only works out shapes.
#include "NeuronSort.h"

namespace torch_neuron {

// Per element of @v, how many of the sorted boundaries @b (along the last
// dim) lie before it: left, those < v; right, those <= v -- what the CPU's
// binary search finds. One stable sort of each row's boundaries and values
// together, in O(m + n) memory: with the values first (left) a boundary
// equal to a value sorts after it, with the boundaries first (right)
// before; a value's answer is the count of boundaries sorted before it.
// NaN sorts last, so a NaN value lands at m, as on the CPU.
at::Tensor search(const at::Tensor& b, const at::Tensor& v, bool right, bool out_int32) {
  int64_t m = b.size(-1);
  auto type = out_int32 ? at::kInt : at::kLong;
  if (v.numel() == 0 || m == 0)
    return at::zeros(v.sizes(), v.options().dtype(type));
  // rows: one for 1-d boundaries, else one per leading position
  at::Tensor bnd = b.reshape({-1, m});
  at::Tensor val = b.dim() == 1 ? v.reshape({1, -1}) : v.reshape({bnd.size(0), -1});
  int64_t n = val.size(1);
  at::Tensor both = right ? at::cat({bnd, val}, 1) : at::cat({val, bnd}, 1);
  at::Tensor order = std::get<1>(sort_stable(both, 1, false));
  at::Tensor is_bound = right ? order.lt(m) : order.ge(n);
  at::Tensor before = scan(NISA_SCAN_SUM, is_bound, 1, at::kLong);
  // each value's count, back in the values' order
  at::Tensor r = unsort(before, order, 1).narrow(1, right ? m : 0, n).reshape(v.sizes());
  return out_int32 ? r.to(at::kInt) : r;
}

namespace {

bool side_right(bool right, const std::optional<c10::string_view>& side) {
  if (side) {
    TORCH_CHECK(*side == "left" || *side == "right", "torch.searchsorted(): side can only "
                "be 'left' or 'right' but got ", *side);
    TORCH_CHECK(!right || *side == "right", "torch.searchsorted(): side and right can't "
                "be set to opposites, got side of left while right was True");
    return *side == "right";
  }
  return right;
}

at::Tensor searchsorted(const at::Tensor& seq, const at::Tensor& self, bool out_int32,
                        bool right, std::optional<c10::string_view> side,
                        const std::optional<at::Tensor>& sorter) {
  TORCH_CHECK(seq.dim() == 1 || seq.sizes().slice(0, seq.dim() - 1) ==
              self.sizes().slice(0, std::max<int64_t>(self.dim() - 1, 0)),
              "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
              "dimensions of boundaries tensor and input value tensor must match");
  at::Tensor b = seq;
  if (sorter && sorter->defined())
    b = seq.gather(-1, *sorter);
  if (self.scalar_type() != b.scalar_type()) {
    auto t = at::promote_types(self.scalar_type(), b.scalar_type());
    return search(b.to(t), self.to(t), side_right(right, side), out_int32);
  }
  return search(b, self, side_right(right, side), out_int32);
}
at::Tensor& searchsorted_out(const at::Tensor& seq, const at::Tensor& self, bool out_int32,
                             bool right, std::optional<c10::string_view> side,
                             const std::optional<at::Tensor>& sorter, at::Tensor& out) {
  at::Tensor r = torch_neuron::searchsorted(seq, self, out_int32, right, side, sorter);
  return into(out, r);
}
// A Scalar value is a 0-dim tensor of the type torch gives it against the
// boundaries (a wrapped number: float32 boundaries keep float32).
at::Tensor searchsorted_scalar(const at::Tensor& seq, const at::Scalar& self, bool out_int32,
                               bool right, std::optional<c10::string_view> side,
                               const std::optional<at::Tensor>& sorter) {
  TORCH_CHECK(seq.dim() == 1, "torch.searchsorted(): input value can be a scalar only when "
              "boundaries tensor dimension is 1, but we got boundaries tensor dim(",
              seq.dim(), ") and input value's dim(0) numel(1)");
  at::Tensor v = at::scalar_tensor(self, seq.options().dtype(at::result_type(seq, self)));
  return torch_neuron::searchsorted(seq, v, out_int32, right, side, sorter);
}
at::Tensor& searchsorted_scalar_out(const at::Tensor& seq, const at::Scalar& self,
                                    bool out_int32, bool right,
                                    std::optional<c10::string_view> side,
                                    const std::optional<at::Tensor>& sorter, at::Tensor& out) {
  at::Tensor r = searchsorted_scalar(seq, self, out_int32, right, side, sorter);
  return into(out, r);
}

at::Tensor bucketize(const at::Tensor& self, const at::Tensor& boundaries, bool out_int32,
                     bool right) {
  TORCH_CHECK(boundaries.dim() == 1, "boundaries tensor must be 1 dimension, but got dim(",
              boundaries.dim(), ")");
  return torch_neuron::searchsorted(boundaries, self, out_int32, right, std::nullopt,
                                    std::nullopt);
}
at::Tensor& bucketize_out(const at::Tensor& self, const at::Tensor& boundaries,
                          bool out_int32, bool right, at::Tensor& out) {
  at::Tensor r = torch_neuron::bucketize(self, boundaries, out_int32, right);
  return into(out, r);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("searchsorted.Tensor", searchsorted);
  m.impl("searchsorted.Tensor_out", searchsorted_out);
  m.impl("searchsorted.Scalar", searchsorted_scalar);
  m.impl("searchsorted.Scalar_out", searchsorted_scalar_out);
  m.impl("bucketize.Tensor", bucketize);
  m.impl("bucketize.Tensor_out", bucketize_out);
}

}  // namespace torch_neuron

// SPDX-License-Identifier: MIT
// Selections whose size depends on the data, and the searches built on the
// card's sort and scan: nonzero, nonzero_static, masked_select,
// count_nonzero, unique, unique_consecutive, searchsorted, bucketize, isin,
// randperm, multinomial and repeat_interleave (histograms:
// Histogram.cpp; unique(dim=): Unique.cpp). The
// positions are found on the card (a stable sort of "not selected" puts the
// selected positions first, in order); the host reads back only their
// count, as CUDA does.
#include "NeuronSort.h"

namespace torch_neuron {

at::Tensor true_positions(const at::Tensor& mask) {
  at::Tensor flat = mask.reshape({-1});
  if (flat.scalar_type() != at::kBool)
    flat = flat.ne(0);
  at::Tensor idx = std::get<1>(sort_stable(at::logical_not(flat), 0, false));
  int64_t count = flat.sum(at::kLong).item<int64_t>();
  return idx.narrow(0, 0, count);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> run_groups(const at::Tensor& first,
                                                          bool want_counts) {
  int64_t n = first.size(0);
  at::Tensor group = scan(NISA_SCAN_SUM, first, 0, at::kLong).sub_(1);
  at::Tensor starts = true_positions(first);
  at::Tensor counts;
  if (want_counts)
    counts = at::zeros({starts.size(0)}, first.options().dtype(at::kLong))
                 .scatter_add_(0, group, at::ones({n}, first.options().dtype(at::kLong)));
  return {group, starts, counts};
}

namespace {

using Gen = std::optional<at::Generator>;

// dst = x op v on the card, exactly for integers.
void scalar_op(nisa_binary op, const at::Tensor& dst, const at::Tensor& x, double v) {
  nrn_tensor_desc o = desc(dst), s = desc(x);
  NEURON_OP(nrn_op_binary_scalar(stream_for(x), op, &o, &s, v, 1.0, 0));
}

// Row-major positions @lin (int64) as coordinates of @sizes, into @out [n, ndim].
void unravel(const at::Tensor& lin, at::IntArrayRef sizes, at::Tensor& out) {
  int64_t stride = 1;
  at::Tensor q = empty_neuron(lin.sizes(), at::kLong, lin.device());
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; d--) {
    at::Tensor col = out.select(1, d);
    scalar_op(NISA_BIN_FLOORDIV, q, lin, static_cast<double>(stride));
    scalar_op(NISA_BIN_REM, col, q, static_cast<double>(sizes[d]));
    stride *= sizes[d];
  }
}

at::Tensor nonzero(const at::Tensor& self) {
  at::Tensor lin = true_positions(self);
  at::Tensor out = empty_neuron({lin.size(0), self.dim()}, at::kLong, self.device());
  if (lin.size(0) && self.dim())
    unravel(lin, self.sizes(), out);
  return out;
}
at::Tensor& nonzero_out(const at::Tensor& self, at::Tensor& out) {
  at::Tensor r = torch_neuron::nonzero(self);
  resize_out(out, r.sizes());
  return out.copy_(r);
}

at::Tensor nonzero_static(const at::Tensor& self, int64_t size, int64_t fill_value) {
  TORCH_CHECK(size >= 0, "nonzero_static: 'size' must be an non-negative integer");
  at::Tensor lin = true_positions(self);
  int64_t k = std::min<int64_t>(lin.size(0), size);
  at::Tensor out = at::full({size, self.dim()}, fill_value,
                            self.options().dtype(at::kLong));
  if (k && self.dim()) {
    at::Tensor head = out.narrow(0, 0, k);
    unravel(lin.narrow(0, 0, k), self.sizes(), head);
  }
  return out;
}
at::Tensor& nonzero_static_out(const at::Tensor& self, int64_t size, int64_t fill_value,
                               at::Tensor& out) {
  at::Tensor r = torch_neuron::nonzero_static(self, size, fill_value);
  resize_out(out, r.sizes());
  return out.copy_(r);
}

at::Tensor masked_select(const at::Tensor& self, const at::Tensor& mask) {
  TORCH_CHECK(mask.scalar_type() == at::kBool, "masked_select: expected BoolTensor for mask");
  auto both = at::broadcast_tensors({self, mask});
  at::Tensor lin = true_positions(both[1]);
  return both[0].reshape({-1}).index_select(0, lin);
}
at::Tensor& masked_select_out(const at::Tensor& self, const at::Tensor& mask,
                              at::Tensor& out) {
  at::Tensor r = torch_neuron::masked_select(self, mask);
  resize_out(out, r.sizes());
  return out.copy_(r);
}

at::Tensor count_nonzero(const at::Tensor& self, at::IntArrayRef dims) {
  return self.ne(0).sum(dims, false, at::kLong);
}

// ---- unique ----

// Runs of equal neighbours in @flat (1-D): each run's first element, each
// element's run, each run's length; NaNs are each their own run.
std::tuple<at::Tensor, at::Tensor, at::Tensor> runs(const at::Tensor& flat,
                                                    bool want_counts) {
  int64_t n = flat.size(0);
  at::Tensor first = empty_neuron({n}, at::kBool, flat.device());
  first.narrow(0, 0, 1).fill_(true);
  if (n > 1) {
    at::Tensor rest = first.narrow(0, 1, n - 1);
    at::ne_out(rest, flat.narrow(0, 1, n - 1), flat.narrow(0, 0, n - 1));
  }
  auto [group, starts, counts] = run_groups(first, want_counts);
  return {flat.index_select(0, starts), group, counts};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> unique2(const at::Tensor& self, bool,
                                                       bool return_inverse,
                                                       bool return_counts) {
  auto opts = self.options().dtype(at::kLong);
  if (self.numel() == 0)
    return {empty_neuron({0}, self.scalar_type(), self.device()),
            return_inverse ? at::empty(self.sizes(), opts) : at::empty({0}, opts),
            at::empty({0}, opts)};
  // Sorted, as the CPU returns it (sorted=False too).
  auto [sv, si] = sort_stable(self.reshape({-1}), 0, false);
  auto [values, group, counts] = runs(sv, return_counts);
  at::Tensor inverse = at::empty({0}, opts);
  if (return_inverse) {
    // group is in sorted order: back to the elements' order
    inverse = unsort(group, si, 0).view(self.sizes());
  }
  return {values, inverse, return_counts ? counts : at::empty({0}, opts)};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> unique_consecutive(
    const at::Tensor& self, bool return_inverse, bool return_counts,
    std::optional<int64_t> dim) {
  if (dim && !(self.dim() == 1 && at::maybe_wrap_dim(*dim, 1) == 0))
    return at::unique_dim_consecutive(self, *dim, return_inverse, return_counts);
  auto opts = self.options().dtype(at::kLong);
  if (self.numel() == 0)
    return {empty_neuron({0}, self.scalar_type(), self.device()),
            return_inverse ? at::empty(self.sizes(), opts) : at::empty({0}, opts),
            at::empty({0}, opts)};
  auto [values, group, counts] = runs(self.reshape({-1}), return_counts);
  return {values, return_inverse ? group.view(self.sizes()) : at::empty({0}, opts),
          return_counts ? counts : at::empty({0}, opts)};
}

// ---- searches ----

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
  resize_out(out, r.sizes());
  return out.copy_(r);
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
  resize_out(out, r.sizes());
  return out.copy_(r);
}

// repeat_interleave(repeats): i repeated repeats[i] times. A mark at the
// end of every block but the last, summed up: out[j] = the blocks ended
// at or before j. The total is read back (unless given), as on the CPU.
at::Tensor repeat_interleave(const at::Tensor& repeats, std::optional<c10::SymInt> output_size) {
  TORCH_CHECK(repeats.dim() == 1, "repeat_interleave only accept 1D vector as repeat");
  TORCH_CHECK(repeats.scalar_type() == at::kLong || repeats.scalar_type() == at::kInt,
              "repeats has to be Long or Int tensor");
  at::Tensor r = repeats.to(at::kLong);
  if (r.numel() == 0)
    return empty_neuron({0}, repeats.scalar_type(), repeats.device());
  TORCH_CHECK(r.min().item<int64_t>() >= 0, "repeats can not be negative");
  at::Tensor ends = r.cumsum(0);
  int64_t total = ends[-1].item<int64_t>();
  if (output_size)
    TORCH_CHECK(output_size->expect_int() == total, "allocated size does not match "
                "required size");
  at::Tensor marks = at::zeros({total + 1}, ends.options());
  marks.index_add_(0, ends.narrow(0, 0, r.numel() - 1),
                   at::ones({r.numel() - 1}, ends.options()));
  return marks.cumsum(0).narrow(0, 0, total).to(repeats.scalar_type());
}
at::Tensor& repeat_interleave_out(const at::Tensor& repeats,
                                  std::optional<c10::SymInt> output_size, at::Tensor& out) {
  at::Tensor r = repeat_interleave(repeats, output_size);
  resize_out(out, r.sizes());
  return out.copy_(r);
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
  resize_out(out, r.sizes());
  return out.copy_(r);
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
  resize_out(out, r.sizes());
  return out.copy_(r);
}

// ---- random permutations and draws ----

// randperm: sort 64-bit random keys drawn on the card; the order is the permutation.
at::Tensor& randperm_gen_out(int64_t n, Gen gen, at::Tensor& out) {
  TORCH_CHECK(n >= 0, "n must be non-negative, got", n);
  resize_out(out, {n});
  if (n == 0)
    return out;
  at::Tensor keys = empty_neuron({n}, at::kLong, out.device());
  keys.random_(gen);
  return out.copy_(std::get<1>(sort_stable(keys, 0, false)));
}
at::Tensor& randperm_out(int64_t n, at::Tensor& out) {
  return randperm_gen_out(n, std::nullopt, out);
}
at::Tensor randperm_gen(int64_t n, Gen gen, std::optional<at::ScalarType> dtype,
                        std::optional<at::Layout>, std::optional<at::Device> device,
                        std::optional<bool>) {
  at::Tensor out = empty_neuron({0}, dtype.value_or(at::kLong),
                                device.value_or(at::Device(c10::DeviceType::PrivateUse1)));
  return randperm_gen_out(n, gen, out);
}
at::Tensor randperm(int64_t n, std::optional<at::ScalarType> dtype,
                    std::optional<at::Layout> layout, std::optional<at::Device> device,
                    std::optional<bool> pin) {
  return randperm_gen(n, std::nullopt, dtype, layout, device, pin);
}

// multinomial: with replacement, u * total searched in the cumulative sums;
// without, the largest p / E with E ~ Exp(1) (the exponential race), both
// drawn and computed on the card. The checks read back three scalars.
at::Tensor multinomial(const at::Tensor& self, int64_t num_samples, bool replacement, Gen gen) {
  TORCH_CHECK(self.dim() == 1 || self.dim() == 2, "prob_dist must be 1 or 2 dim");
  TORCH_CHECK(card_float(self.scalar_type()), "multinomial only supports floating-point "
              "dtypes for input, got: ", self.scalar_type());
  TORCH_CHECK(num_samples > 0, "cannot sample n_sample <= 0 samples");
  int64_t n = self.size(-1);
  TORCH_CHECK(replacement || num_samples <= n, "cannot sample n_sample > prob_dist.size(-1) "
              "samples without replacement");
  at::Tensor p = self.dim() == 1 ? self.unsqueeze(0) : self;
  int64_t rows = p.size(0);
  at::Tensor out = empty_neuron({rows, num_samples}, at::kLong, self.device());
  if (rows == 0)
    return self.dim() == 1 ? out.squeeze(0) : out;
  at::Tensor pf = p.to(at::kFloat);
  at::Tensor bad = at::logical_or(at::logical_not(at::isfinite(pf)), pf.lt(0)).any();
  TORCH_CHECK(!bad.item<bool>(), "probability tensor contains either `inf`, `nan` or element < 0");
  at::Tensor nonzero_per_row = pf.gt(0).sum(1, false, at::kLong);
  TORCH_CHECK(at::amin(nonzero_per_row, {0}).item<int64_t>() > 0,
              "invalid multinomial distribution (sum of probabilities <= 0)");
  if (replacement) {
    at::Tensor cdf = scan(NISA_SCAN_SUM, pf, 1, at::kFloat);
    at::Tensor total = cdf.narrow(1, n - 1, 1);
    at::Tensor u = at::empty({rows, num_samples}, pf.options());
    u.uniform_(0, 1, gen);
    u.mul_(total);
    // #(cdf[j] <= u) over j < n - 1: the first j whose cdf exceeds u.
    at::Tensor head = cdf.narrow(1, 0, n - 1).unsqueeze(1);
    out.copy_(at::le(head, u.unsqueeze(2)).sum(2, false, at::kLong));
  } else {
    TORCH_CHECK(at::amin(nonzero_per_row, {0}).item<int64_t>() >= num_samples,
                "invalid multinomial distribution (with replacement=False, not enough "
                "non-negative category to sample)");
    at::Tensor e = at::empty({rows, n}, pf.options());
    e.exponential_(1, gen);
    at::Tensor keys = pf.div(e);
    auto sorted = sort_stable(keys, 1, true);
    out.copy_(std::get<1>(sorted).narrow(1, 0, num_samples));
  }
  return self.dim() == 1 ? out.squeeze(0) : out;
}
at::Tensor& multinomial_out(const at::Tensor& self, int64_t num_samples, bool replacement,
                            Gen gen, at::Tensor& out) {
  at::Tensor r = torch_neuron::multinomial(self, num_samples, replacement, gen);
  resize_out(out, r.sizes());
  return out.copy_(r);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("nonzero", nonzero);
  m.impl("nonzero.out", nonzero_out);
  m.impl("nonzero_static", nonzero_static);
  m.impl("nonzero_static.out", nonzero_static_out);
  m.impl("masked_select", masked_select);
  m.impl("masked_select.out", masked_select_out);
  m.impl("count_nonzero.dim_IntList", count_nonzero);
  m.impl("_unique2", unique2);
  m.impl("unique_consecutive", unique_consecutive);
  m.impl("searchsorted.Tensor", searchsorted);
  m.impl("searchsorted.Tensor_out", searchsorted_out);
  m.impl("searchsorted.Scalar", searchsorted_scalar);
  m.impl("searchsorted.Scalar_out", searchsorted_scalar_out);
  m.impl("repeat_interleave.Tensor", repeat_interleave);
  m.impl("repeat_interleave.Tensor_out", repeat_interleave_out);
  m.impl("bucketize.Tensor", bucketize);
  m.impl("bucketize.Tensor_out", bucketize_out);
  m.impl("isin.Tensor_Tensor", isin);
  m.impl("isin.Tensor_Tensor_out", isin_out);
  m.impl("randperm", randperm);
  m.impl("randperm.generator", randperm_gen);
  m.impl("randperm.out", randperm_out);
  m.impl("randperm.generator_out", randperm_gen_out);
  m.impl("multinomial", multinomial);
  m.impl("multinomial.out", multinomial_out);
}

}  // namespace torch_neuron

// SPDX-License-Identifier: MIT
// unique: _unique2 and unique_consecutive of the elements (runs of equal
// neighbours, after a stable sort on the card for _unique2), and
// unique(dim=) and unique_consecutive(dim=) of slices.
//
// unique(dim=) and unique_consecutive(dim=): the distinct slices of a tensor
// along a dim, each slice a row of @rows [n, w].
//
// The CPU sorts the rows lexicographically (first column first) and keeps
// each run's first row. On the card the order comes from sorts of whole
// columns: each column's dense rank (equal values share one, -0.0 is 0.0),
// then the ranks of g columns packed into one int64 key, the key being the
// rank digits in base n (n^g <= INT64_MAX), which orders as the g columns
// do lexicographically. Ranking and packing again until one key remains
// takes about log_g(w) rounds of a few instructions, whatever w is, and a
// last stable sort gives the rows' order.
//
// A NaN is unordered: the CPU's std::sort then returns an order of its own
// making, which no sort reproduces; rows with NaN in them go to the CPU,
// visibly (run_on_cpu). unique_consecutive compares neighbours only and
// runs on the card whatever the values (a row with NaN equals no other, as
// on the CPU).
#include <limits>

#include "NeuronSort.h"

namespace torch_neuron {

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

// ---- unique of the elements ----

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

// ---- unique(dim=) ----

using Result = std::tuple<at::Tensor, at::Tensor, at::Tensor>;

// first[0] = true, first[k] = row k of @v differs from row k - 1.
at::Tensor row_starts(const at::Tensor& v) {
  int64_t n = v.size(0);
  at::Tensor first = empty_neuron({n}, at::kBool, v.device());
  first.narrow(0, 0, 1).fill_(true);
  if (n > 1) {
    at::Tensor diff = at::ne(v.narrow(0, 1, n - 1), v.narrow(0, 0, n - 1));
    at::Tensor rest = first.narrow(0, 1, n - 1);
    at::any_out(rest, diff, 1);
  }
  return first;
}

// The dense rank of each element of @v [n, m] within its column, int64.
at::Tensor column_ranks(const at::Tensor& v) {
  int64_t n = v.size(0);
  auto [sv, si] = sort_stable(v, 0, false);
  at::Tensor step = empty_neuron(v.sizes(), at::kBool, v.device());
  step.narrow(0, 0, 1).fill_(false);
  if (n > 1) {
    at::Tensor rest = step.narrow(0, 1, n - 1);
    at::ne_out(rest, sv.narrow(0, 1, n - 1), sv.narrow(0, 0, n - 1));
  }
  at::Tensor sorted_rank = scan(NISA_SCAN_SUM, step, 0, at::kLong);
  return at::empty_like(sorted_rank).scatter_(0, si, sorted_rank);
}

// One int64 key per row of @rows [n, w] (no NaN) whose order is the rows'
// lexicographic order.
at::Tensor lexicographic_key(const at::Tensor& rows) {
  int64_t n = rows.size(0);
  at::Tensor keys = rows;
  // How many base-n digits an int64 holds (at least 2 for n <= 2^31).
  int64_t g = 1, top = n;
  while (n > 1 && top <= std::numeric_limits<int64_t>::max() / n) {
    top *= n;
    g++;
  }
  while (keys.size(1) > 1) {
    int64_t m = keys.size(1);
    int64_t per = n > 1 ? std::min(g, m) : m;
    TORCH_INTERNAL_ASSERT(per >= 2, "unique(dim=): ", n, " rows do not pack");
    int64_t c = (m + per - 1) / per;
    at::Tensor r = column_ranks(keys);
    if (c * per != m)
      r = at::constant_pad_nd(r, {0, c * per - m}, 0);
    std::vector<int64_t> weight(per, 1);  // n^(per-1), .., n, 1
    for (int64_t i = per - 2; i >= 0; i--)
      weight[i] = weight[i + 1] * n;
    at::Tensor wt = at::tensor(weight, at::kLong).to(rows.device());
    keys = r.view({n, c, per}).mul(wt).sum(-1);
  }
  return keys.select(1, 0);
}

Result unique_rows(const at::Tensor& self, int64_t dim, bool consecutive) {
  dim = at::maybe_wrap_dim(dim, self.dim());
  auto sizes = self.sizes().vec();
  auto zero_dims = std::count(sizes.begin(), sizes.end(), 0);
  auto opts = self.options().dtype(at::kLong);
  if (self.size(dim) == 0) {
    TORCH_CHECK(zero_dims == 1, "Number of zero sized dimensions is more than one, so "
                "unique cannot be applied ");
    return {at::empty(sizes, self.options()), at::empty({0}, opts), at::empty({0}, opts)};
  }
  TORCH_CHECK(zero_dims == 0, "There are 0 sized dimensions, and they aren't selected, "
              "so unique cannot be applied");
  at::Tensor moved = self.movedim(dim, 0);
  auto shape = moved.sizes().vec();
  int64_t n = shape[0];
  at::Tensor rows = moved.reshape({n, -1});

  at::Tensor perm;  // sorted position -> row (none: the rows' own order)
  at::Tensor first;
  if (consecutive) {
    first = row_starts(rows);
  } else {
    auto [sorted_key, order] = sort_stable(lexicographic_key(rows), 0, false);
    perm = order;
    first = row_starts(sorted_key.unsqueeze(1));
  }
  auto [group, starts, counts] = run_groups(first, true);
  at::Tensor inverse = group;
  if (perm.defined()) {
    starts = perm.index_select(0, starts);
    inverse = unsort(group, perm, 0);
  }
  shape[0] = starts.size(0);
  at::Tensor out = rows.index_select(0, starts).view(shape).movedim(0, dim);
  return {out, inverse, counts};
}

bool has_nan(const at::Tensor& t) {
  return at::isFloatingType(t.scalar_type()) && at::isnan(t).any().item<bool>();
}

Result unique_dim(const at::Tensor& self, int64_t dim, bool sorted, bool return_inverse,
                  bool return_counts) {
  if (has_nan(self)) {
    torch::jit::Stack stack{self, dim, sorted, return_inverse, return_counts};
    run_on_cpu("aten::unique_dim", "", &stack,
               "cannot order rows with NaN as the CPU's std::sort does");
    return {stack[0].toTensor(), stack[1].toTensor(), stack[2].toTensor()};
  }
  return unique_rows(self, dim, false);
}

Result unique_dim_consecutive(const at::Tensor& self, int64_t dim, bool, bool) {
  return unique_rows(self, dim, true);
}

}  // namespace
}  // namespace torch_neuron

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_unique2", torch_neuron::unique2);
  m.impl("unique_consecutive", torch_neuron::unique_consecutive);
  m.impl("unique_dim", torch_neuron::unique_dim);
  m.impl("unique_dim_consecutive", torch_neuron::unique_dim_consecutive);
}

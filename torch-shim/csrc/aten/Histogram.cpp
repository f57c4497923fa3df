// SPDX-License-Identifier: MIT
// Histograms on the card: histogram (a bin count or edges) and histogramdd
// (its ATen parts _histogramdd_bin_edges, _from_bin_cts and
// _from_bin_tensors) share one kernel, as on the CPU: the input is rows of
// D coordinates, each coordinate gets a bin along its dim, and the row adds
// its weight (or 1) at the flat position of its D bins when every
// coordinate lies within its dim's outer edges. histc, the legacy one-dim
// form of any card float type, keeps its own few lines (the guess alone).
//
// Equal-width edges are the CPU's own linspace, computed on the host (a few
// values, so the same to the bit), over range= or the data's min and max
// (read back, as the CPU reads them). A coordinate x then goes where the
// CPU's search puts it: the guess trunc((x - e_0) * n / (e_n - e_0)) in
// the input's type (float32 or float64), then the edges at guess-1..guess+1
// that are <= x counted. Given
// edges, the bin is the count of edges <= x, less
// one. The top edge belongs to the last bin; NaN to none. density divides
// by the total, then by each dim's bin widths.
#include <cmath>

#include "NeuronOps.h"
#include "NeuronScatter.h"

namespace torch_neuron {
namespace {

// One dim's edges: on the card, and for equal widths their bin count, outer
// values and width (as the CPU's edges of the input's type hold them).
struct Edges {
  at::Tensor dev;
  int64_t n;            // bins
  bool linear;  // equal widths: the interpolated guess, then a local search
  double lo, hi, width;  // width: hi - lo rounded to the edges' type
};

Edges equal_edges(double lo, double hi, int64_t bins, const at::Device& dev,
                  at::ScalarType t) {
  at::Tensor host = at::linspace(lo, hi, bins + 1, at::TensorOptions().dtype(t));
  if (t == at::kDouble) {
    double l = host[0].item<double>(), h = host[bins].item<double>();
    return {host.to(dev), bins, true, l, h, h - l};
  }
  float l = host[0].item<float>(), h = host[bins].item<float>();
  return {host.to(dev), bins, true, l, h, h - l};
}

// The bin of each of @x's values along one dim (clamped into the bins: the
// top edge to the last one, values outside anywhere), and @in: whether the
// value lies within the outer edges.
at::Tensor bin_of(const at::Tensor& x, const Edges& e, at::Tensor& in) {
  int64_t n = e.n;
  at::Tensor pos;
  if (!e.linear) {
    in = at::logical_and(x.ge(e.dev[0]), x.le(e.dev[n]));
    pos = at::searchsorted(e.dev, x, false, true).sub_(1);
    return pos.clamp_(0, n - 1);
  }
  in = at::logical_and(x.ge(e.lo), x.le(e.hi));
  at::Tensor guess = at::where(in, x.sub(e.lo).mul_(static_cast<double>(n)).div_(e.width),
                               at::zeros({}, x.options()))
                         .to(at::kLong)
                         .clamp_(0, n);
  at::Tensor first = (guess - 1).clamp_min_(0), end = (guess + 2).clamp_max_(n + 1);
  pos = first - 1;
  for (int64_t d = -1; d <= 1; d++) {
    at::Tensor k = guess + d;
    at::Tensor edge = e.dev.index_select(0, k.clamp(0, n));
    pos.add_(at::logical_and(at::logical_and(k.ge(first), k.lt(end)), edge.le(x)));
  }
  return pos.clamp_(0, n - 1);
}

// The histogram of @rows [M, D] over @edges (one per dim), weighted by
// @weight [M] if given.
at::Tensor histogram_rows(const at::Tensor& rows, const std::vector<Edges>& edges,
                          const std::optional<at::Tensor>& weight, bool density) {
  std::vector<int64_t> shape;
  for (const Edges& e : edges)
    shape.push_back(e.n);
  at::Tensor hist = at::zeros(shape, rows.options());
  if (rows.size(0) > 0 && hist.numel() > 0) {
    at::Tensor in, flat;
    for (size_t d = 0; d < edges.size(); d++) {
      at::Tensor in_d;
      at::Tensor pos = bin_of(rows.select(1, static_cast<int64_t>(d)), edges[d], in_d);
      in = in.defined() ? in.logical_and_(in_d) : in_d;
      flat = flat.defined() ? flat.mul_(edges[d].n).add_(pos) : pos;
    }
    at::Tensor w = weight && weight->defined() ? weight->reshape({-1})
                                               : at::ones({}, rows.options()).expand({rows.size(0)});
    hist.view({-1}).scatter_add_(0, flat, at::where(in, w, at::zeros({}, rows.options())));
  }
  if (density) {
    hist.div_(hist.sum().item());
    for (size_t d = 0; d < edges.size(); d++) {
      std::vector<int64_t> at_d(edges.size(), 1);
      at_d[d] = edges[d].n;
      hist.div_(edges[d].dev.diff().view(at_d));
    }
  }
  return hist;
}

// torch.histogramdd's checks of input and weight (the CPU's messages).
void check_input(const at::Tensor& self, const std::optional<at::Tensor>& weight) {
  TORCH_CHECK(self.scalar_type() == at::kFloat || self.scalar_type() == at::kDouble,
              "torch.histogram: input tensor must be float32 or float64 on neuron, got ",
              self.scalar_type());
  TORCH_CHECK(self.dim() >= 2, "torch.histogramdd: input tensor should have at least 2 "
              "dimensions, but got ", self.dim());
  if (!weight || !weight->defined())
    return;
  check_device(self, *weight);
  TORCH_CHECK(weight->scalar_type() == self.scalar_type(), "torch.histogramdd: if weight "
              "tensor is provided, input tensor and weight tensor should have the same "
              "dtype, but got input(", self.scalar_type(), "), and weight(",
              weight->scalar_type(), ")");
  // A 0-dim weight counts as [1].
  at::IntArrayRef want = self.sizes().slice(0, self.dim() - 1);
  bool same = weight->dim() == 0 ? want.size() == 1 && want[0] == 1 : weight->sizes() == want;
  TORCH_CHECK(same, "torch.histogramdd: if weight tensor is provided it should have "
              "the same shape as the input tensor excluding its innermost dimension, but got "
              "input with shape ", self.sizes(), " and weight with shape ", weight->sizes());
}

at::Tensor as_rows(const at::Tensor& self) {
  return self.reshape({-1, self.size(-1)});
}

// Equal-width edges of each dim of @rows [M, D]: over range= (2 D values)
// or each column's min and max.
std::vector<Edges> equal_edges_of(const at::Tensor& rows, at::IntArrayRef bins,
                                  std::optional<at::ArrayRef<double>> range) {
  int64_t D = rows.size(1);
  TORCH_CHECK(static_cast<int64_t>(bins.size()) == D, "histogramdd: The size of bins must be "
              "equal to the innermost dimension of the input.");
  std::vector<double> lo(D, 0.0), hi(D, 1.0);
  if (range) {
    TORCH_CHECK(static_cast<int64_t>(range->size()) == 2 * D, "torch.histogramdd: for a ", D,
                "-dimensional histogram range should have ", 2 * D, " elements, but got ",
                range->size());
    for (int64_t d = 0; d < D; d++) {
      lo[d] = (*range)[2 * d];
      hi[d] = (*range)[2 * d + 1];
    }
  } else if (rows.numel() > 0) {
    auto [mn, mx] = at::aminmax(rows, 0);
    at::Tensor mnh = mn.cpu(), mxh = mx.cpu();
    for (int64_t d = 0; d < D; d++) {
      lo[d] = mnh[d].item<double>();
      hi[d] = mxh[d].item<double>();
    }
  }
  std::vector<Edges> edges;
  for (int64_t d = 0; d < D; d++) {
    TORCH_CHECK(std::isfinite(lo[d]) && std::isfinite(hi[d]), "torch.histogramdd: dimension ",
                d, "'s range [", lo[d], ", ", hi[d], "] is not finite");
    TORCH_CHECK(lo[d] <= hi[d], "torch.histogramdd: min should not exceed max, but got min ",
                lo[d], " max ", hi[d], " for dimension ", d);
    if (lo[d] == hi[d]) {
      lo[d] -= 0.5;
      hi[d] += 0.5;
    }
    TORCH_CHECK(bins[d] > 0, "torch.histogram(): bins must be > 0, but got ", bins[d],
                " for dimension ", d);
    edges.push_back(equal_edges(lo[d], hi[d], bins[d], rows.device(), rows.scalar_type()));
  }
  return edges;
}

std::vector<Edges> given_edges(const at::Tensor& self, at::TensorList bins) {
  int64_t D = self.size(-1);
  TORCH_CHECK(static_cast<int64_t>(bins.size()) == D, "torch.histogramdd: expected ", D,
              " sequences of bin edges for a ", D, "-dimensional histogram but got ",
              bins.size());
  std::vector<Edges> edges;
  for (int64_t d = 0; d < D; d++) {
    const at::Tensor& b = bins[d];
    check_device(self, b);
    TORCH_CHECK(b.scalar_type() == self.scalar_type(), "torch.histogramdd: input tensor and "
                "bins tensors should have the same dtype, but got input with dtype ",
                self.scalar_type(), " and bins for dimension ", d, " with dtype ",
                b.scalar_type());
    TORCH_CHECK(b.dim() == 1, "torch.histogramdd: bins tensor should have one dimension, but "
                "got ", b.dim(), " dimensions in the bins tensor for dimension ", d);
    TORCH_CHECK(b.numel() > 0, "torch.histogramdd: bins tensor should have at least 1 "
                "element, but got ", b.numel(), " elements in the bins tensor for dimension ",
                d);
    edges.push_back({b.contiguous(), b.numel() - 1, false, 0.0, 0.0, 0.0});
  }
  return edges;
}

// ---- histogramdd ----

std::vector<at::Tensor> histogramdd_bin_edges(const at::Tensor& self, at::IntArrayRef bins,
                                              std::optional<at::ArrayRef<double>> range,
                                              const std::optional<at::Tensor>& weight, bool) {
  check_input(self, weight);
  std::vector<at::Tensor> out;
  for (const Edges& e : equal_edges_of(as_rows(self), bins, range))
    out.push_back(e.dev);
  return out;
}

at::Tensor histogramdd_from_bin_cts(const at::Tensor& self, at::IntArrayRef bins,
                                    std::optional<at::ArrayRef<double>> range,
                                    const std::optional<at::Tensor>& weight, bool density) {
  check_input(self, weight);
  at::Tensor rows = as_rows(self);
  return histogram_rows(rows, equal_edges_of(rows, bins, range), weight, density);
}

at::Tensor histogramdd_from_bin_tensors(const at::Tensor& self, at::TensorList bins,
                                        const std::optional<at::Tensor>& weight,
                                        bool density) {
  check_input(self, weight);
  return histogram_rows(as_rows(self), given_edges(self, bins), weight, density);
}

// ---- histogram: one dim ----

std::optional<at::Tensor> flat_weight(const std::optional<at::Tensor>& weight) {
  if (weight && weight->defined())
    return weight->reshape({-1});
  return weight;
}

std::tuple<at::Tensor, at::Tensor> histogram_edges(const at::Tensor& self,
                                                   const at::Tensor& bins,
                                                   const std::optional<at::Tensor>& weight,
                                                   bool density) {
  at::Tensor rows = self.reshape({-1, 1});
  auto w = flat_weight(weight);
  check_input(rows, w);
  at::Tensor hist = histogram_rows(rows, given_edges(rows, bins), w, density);
  return {hist, bins.clone()};
}
std::tuple<at::Tensor&, at::Tensor&> histogram_edges_out(
    const at::Tensor& self, const at::Tensor& bins, const std::optional<at::Tensor>& weight,
    bool density, at::Tensor& hist, at::Tensor& bin_edges) {
  auto [h, e] = histogram_edges(self, bins, weight, density);
  resize_out(hist, h.sizes());
  hist.copy_(h);
  resize_out(bin_edges, e.sizes());
  bin_edges.copy_(e);
  return {hist, bin_edges};
}

std::tuple<at::Tensor, at::Tensor> histogram_ct(const at::Tensor& self, int64_t bins,
                                                std::optional<at::ArrayRef<double>> range,
                                                const std::optional<at::Tensor>& weight,
                                                bool density) {
  at::Tensor rows = self.reshape({-1, 1});
  auto w = flat_weight(weight);
  check_input(rows, w);
  std::vector<Edges> edges = equal_edges_of(rows, bins, range);
  return {histogram_rows(rows, edges, w, density), edges[0].dev};
}
std::tuple<at::Tensor&, at::Tensor&> histogram_ct_out(
    const at::Tensor& self, int64_t bins, std::optional<at::ArrayRef<double>> range,
    const std::optional<at::Tensor>& weight, bool density, at::Tensor& hist,
    at::Tensor& bin_edges) {
  auto [h, e] = histogram_ct(self, bins, range, weight, density);
  resize_out(hist, h.sizes());
  hist.copy_(h);
  resize_out(bin_edges, e.sizes());
  bin_edges.copy_(e);
  return {hist, bin_edges};
}

// torch.histc: range [min, max], or the data's when they are equal, or
// +-1 around one value; any card float type, counted in it. bin =
// trunc((x - lo) * bins / (hi - lo)) in the input's precision, the top
// edge in the last bin, values outside [lo, hi] (and NaN) dropped.
at::Tensor histc(const at::Tensor& self, int64_t bins, const at::Scalar& min,
                 const at::Scalar& max) {
  TORCH_CHECK(card_float(self.scalar_type()), "torch.histc: input tensor and bins must "
              "be of floating type, got ", self.scalar_type());
  TORCH_CHECK(bins > 0, "torch.histc(): bins must be > 0, but got ", bins, " for dimension 0");
  double lo = min.toDouble(), hi = max.toDouble();
  if (lo == hi && self.numel() > 0) {
    auto mm = at::aminmax(self);
    lo = std::get<0>(mm).item<double>();  // two scalars back, as the CPU reads them
    hi = std::get<1>(mm).item<double>();
  }
  if (lo == hi) {
    lo -= 1;
    hi += 1;
  }
  TORCH_CHECK(!(std::isinf(lo) || std::isinf(hi) || std::isnan(lo) || std::isnan(hi)),
              "torch.histc: range of [", lo, ", ", hi, "] is not finite");
  TORCH_CHECK(lo < hi, "torch.histc: max must be larger than min");
  at::Tensor hist = at::zeros({bins}, self.options());
  if (self.numel() == 0)
    return hist;
  at::Tensor x = self.reshape({-1});
  at::Tensor lo_t = at::scalar_tensor(lo, self.options()), hi_t = at::scalar_tensor(hi, self.options());
  at::Tensor pos = x.sub(lo_t).mul_(static_cast<double>(bins)).div_(hi_t.sub(lo_t));
  at::Tensor bin = pos.to(at::kLong).clamp_(0, bins - 1);
  at::Tensor keep = at::logical_and(x.ge(lo_t), x.le(hi_t)).to(self.scalar_type());
  return hist.scatter_add_(0, bin, keep);
}
at::Tensor& histc_out(const at::Tensor& self, int64_t bins, const at::Scalar& min,
                      const at::Scalar& max, at::Tensor& out) {
  at::Tensor r = torch_neuron::histc(self, bins, min, max);
  return into(out, r);
}

// bincount: how often each value of a 1-D non-negative integer tensor
// occurs (or the sum of its weights), as index_add of ones (the weights)
// into max(input) + 1 bins (read back, as the CPU reads it) or minlength.
// Float32 weights sum in float32; any other weights in float64, as the
// CPU sums them (into a float64 result).
at::Tensor bincount(const at::Tensor& self, const std::optional<at::Tensor>& weights,
                    int64_t minlength) {
  TORCH_CHECK(minlength >= 0, "minlength should be >= 0");
  TORCH_CHECK(self.dim() == 1 && at::isIntegralType(self.scalar_type(), false),
              "bincount only supports 1-d non-negative integral inputs.");
  bool weighted = weights.has_value() && weights->defined();
  if (weighted) {
    TORCH_CHECK(weights->dim() == 1 && weights->size(0) == self.size(0),
                "weights should be 1-d and have the same length as input");
    check_device(self, *weights);
  }
  auto dtype = !weighted ? at::kLong
               : weights->scalar_type() == at::kFloat ? at::kFloat : at::kDouble;
  if (self.numel() == 0)
    return at::zeros({minlength}, self.options().dtype(dtype));
  auto [lo, hi] = at::aminmax(self);
  TORCH_CHECK(lo.item<int64_t>() >= 0, "bincount only supports 1-d non-negative integral "
              "inputs.");
  int64_t bins = std::max(hi.item<int64_t>() + 1, minlength);
  at::Tensor out = at::zeros({bins}, self.options().dtype(dtype));
  at::Tensor src = weighted ? weights->to(dtype) : at::ones({self.numel()}, out.options());
  index_add_into(out, 0, self.to(at::kLong), src, 1);
  return out;
}

}  // namespace
}  // namespace torch_neuron

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("bincount", torch_neuron::bincount);
  m.impl("histc", torch_neuron::histc);
  m.impl("histc.out", torch_neuron::histc_out);
  m.impl("histogram.bin_ct", torch_neuron::histogram_ct);
  m.impl("histogram.bin_ct_out", torch_neuron::histogram_ct_out);
  m.impl("histogram.bins_tensor", torch_neuron::histogram_edges);
  m.impl("histogram.bins_tensor_out", torch_neuron::histogram_edges_out);
  m.impl("_histogramdd_bin_edges", torch_neuron::histogramdd_bin_edges);
  m.impl("_histogramdd_from_bin_cts", torch_neuron::histogramdd_from_bin_cts);
  m.impl("_histogramdd_from_bin_tensors", torch_neuron::histogramdd_from_bin_tensors);
}

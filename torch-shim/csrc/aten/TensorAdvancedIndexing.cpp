// SPDX-License-Identifier: MIT
// Advanced indexing on the card: index.Tensor and index_put_ (x[i0, i1,
// ...] and x[...] = v), take, put_, masked_fill_, masked_scatter_,
// masked_select, nonzero, nonzero_static and count_nonzero. (index_select,
// gather, index_add and the scatters: ScatterGather.cpp; embedding:
// Embedding.cpp.)
#include <ATen/MemoryOverlap.h>

#include "NeuronScatter.h"
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

namespace {

// ---- advanced indexing: x[i0, i1, ...] and x[...] = v ----------------------
// The indexed dims (moved to the front when they are not adjacent, as
// PyTorch does) are flattened into one axis; the broadcast index tensors
// become one linear index into it (card arithmetic), which the card's
// GATHER / SCATTER use. An index outside its dim becomes one the card
// refuses, never a neighbouring element.
struct AdvPlan {
  at::Tensor x;                  // self, indexed dims together (a view)
  std::vector<int64_t> before, after, bshape, xsize;
  int64_t nb = 1, na = 1, total = 1;
  at::Tensor lin;                // int64, shape bshape
};

AdvPlan plan_index(const at::Tensor& self, const c10::List<std::optional<at::Tensor>>& indices) {
  std::vector<at::Tensor> idx;
  for (size_t k = 0; k < indices.size(); k++) {
    std::optional<at::Tensor> o = indices[k];
    if (!o.has_value() || !o->defined()) {
      idx.emplace_back();
      continue;
    }
    at::Tensor t = *o;
    // index tensors may live on the host (as with CUDA): copied to the card
    if (!is_neuron(t))
      t = t.to(self.device());
    check_device(self, t);
    if (t.scalar_type() == at::kBool || t.scalar_type() == at::kByte) {
      TORCH_CHECK_INDEX(t.dim() > 0, "neuron: a 0-dim boolean index is not supported");
      int64_t at0 = static_cast<int64_t>(idx.size());
      TORCH_CHECK_INDEX(at0 + t.dim() <= self.dim(), "too many indices for tensor of "
                        "dimension ", self.dim());
      for (int64_t j = 0; j < t.dim(); j++) {
        TORCH_CHECK_INDEX(t.size(j) == self.size(at0 + j), "The shape of the mask ",
                          t.sizes(), " at index ", j, " does not match the shape of the "
                          "indexed tensor ", self.sizes(), " at index ", at0 + j);
      }
      at::Tensor nz = at::nonzero(t);
      for (int64_t j = 0; j < t.dim(); j++)
        idx.push_back(nz.select(1, j));
      continue;
    }
    TORCH_CHECK_INDEX(t.scalar_type() == at::kLong || t.scalar_type() == at::kInt,
                      "tensors used as indices must be long, int, byte or bool tensors");
    idx.push_back(t);
  }
  TORCH_CHECK_INDEX(static_cast<int64_t>(idx.size()) <= self.dim(), "too many indices for "
                    "tensor of dimension ", self.dim(), " (got ", idx.size(), ")");
  idx.resize(self.dim());
  std::vector<int64_t> dims;
  std::vector<at::Tensor> defined;
  for (int64_t d = 0; d < self.dim(); d++) {
    if (idx[d].defined()) {
      dims.push_back(d);
      defined.push_back(idx[d]);
    }
  }
  TORCH_CHECK(!dims.empty(), "neuron: index() needs at least one index tensor");
  defined = at::broadcast_tensors(defined);
  bool adjacent = dims.back() - dims.front() + 1 == static_cast<int64_t>(dims.size());
  std::vector<int64_t> perm;
  if (adjacent)
    for (int64_t d = 0; d < dims.front(); d++) perm.push_back(d);
  size_t nbefore = perm.size();
  for (int64_t d : dims) perm.push_back(d);
  for (int64_t d = 0; d < self.dim(); d++)
    if (!idx[d].defined() && !(adjacent && d < dims.front())) perm.push_back(d);
  AdvPlan p;
  p.x = self.permute(perm);
  p.xsize.assign(p.x.sizes().begin(), p.x.sizes().end());
  for (size_t j = 0; j < nbefore; j++) {
    p.before.push_back(p.x.size(j));
    p.nb *= p.x.size(j);
  }
  for (size_t j = nbefore + dims.size(); j < perm.size(); j++) {
    p.after.push_back(p.x.size(j));
    p.na *= p.x.size(j);
  }
  p.bshape.assign(defined[0].sizes().begin(), defined[0].sizes().end());
  at::Tensor bad;
  for (size_t j = dims.size(); j-- > 0;) {
    int64_t n = self.size(dims[j]);
    at::Tensor w = wrap_indices(defined[j], n);
    at::Tensor b = w.eq(n);
    bad = bad.defined() ? bad.logical_or_(b) : b;
    if (p.total != 1)
      w = w.mul(p.total);
    p.lin = p.lin.defined() ? p.lin.add(w) : w;
    p.total *= n;
  }
  // An index outside its dim makes the linear one out of range (total).
  p.lin = at::where(bad, at::scalar_tensor(p.total, p.lin.options()), p.lin);
  return p;
}

std::vector<int64_t> result_shape(const AdvPlan& p) {
  std::vector<int64_t> s(p.before);
  s.insert(s.end(), p.bshape.begin(), p.bshape.end());
  s.insert(s.end(), p.after.begin(), p.after.end());
  return s;
}

at::Tensor& index_tensor_out(const at::Tensor& self,
                             const c10::List<std::optional<at::Tensor>>& indices,
                             at::Tensor& out) {
  AdvPlan p = plan_index(self, indices);
  std::vector<int64_t> shape = result_shape(p);
  resize_out(out, shape);
  if (out.numel() == 0)
    return out;
  at::Tensor x3 = p.x.reshape({p.nb, p.total, p.na});
  at::Tensor r = at::index_select(x3, 1, p.lin.reshape({-1}));
  out.copy_(r.view(shape));
  return out;
}

at::Tensor index_tensor(const at::Tensor& self,
                        const c10::List<std::optional<at::Tensor>>& indices) {
  at::Tensor out = empty_neuron({0}, self.scalar_type(), self.device());
  return index_tensor_out(self, indices, out);
}

// A value for x[...] = v: a CPU scalar is a tiny host scalar, anything else
// must be a tensor on self's device of self's dtype.
at::Tensor put_values(const at::Tensor& self, const at::Tensor& values) {
  at::Tensor v = values;
  if (!is_neuron(v)) {
    TORCH_CHECK(v.dim() == 0, "neuron: index_put_ values must be on ", self.device());
    v = scalar_like(v.item(), self);
  }
  check_device(self, v);
  TORCH_CHECK(v.scalar_type() == self.scalar_type(), "Index put requires the source and "
              "destination dtypes match, got ", self.scalar_type(), " for the destination "
              "and ", v.scalar_type(), " for the source.");
  return v;
}

// Scatter rows of @src (shape [nb, L, na]) into @x viewed as [nb, total, na].
void scatter_into_view(const at::Tensor& x, int64_t nb, int64_t total, int64_t na,
                       const at::Tensor& lin, const at::Tensor& src, nisa_scatter red,
                       const char* op) {
  at::Tensor x3 = x.reshape({nb, total, na});
  bool is_view = x3.storage().is_alias_of(x.storage());
  scatter_rows(x3, 1, lin, src, red, op);
  if (!is_view)
    x.copy_(x3.view(x.sizes()));
}

// x[mask] = v for one boolean mask over x's leading dims and a 0-dim v: one
// WHERE on the card, with no count of the mask read back (the general path
// below needs nonzero's) -- so it can be captured in a graph (torchaudio's
// wav2vec2 encoder zeroes its padded frames this way). True if done.
bool put_masked_scalar(at::Tensor& self, const c10::List<std::optional<at::Tensor>>& indices,
                       const at::Tensor& values) {
  if (indices.size() != 1 || values.dim() != 0)
    return false;
  std::optional<at::Tensor> m = indices.get(0);
  if (!m || m->scalar_type() != at::kBool || !is_neuron(*m) || m->dim() == 0 ||
      m->dim() > self.dim() || m->sizes() != self.sizes().slice(0, m->dim()))
    return false;
  check_device(self, *m);
  at::assert_no_internal_overlap(self);
  at::Tensor v = put_values(self, values);
  std::vector<int64_t> shape(m->sizes().begin(), m->sizes().end());
  shape.resize(self.dim(), 1);
  at::Tensor mask = m->reshape(shape);
  nrn_tensor_desc o = desc(self), dm = desc(mask), dv = desc(v);
  NEURON_OP(nrn_op_where(stream_for(self), &o, &dm, &dv, &o));
  return true;
}

at::Tensor& index_put_impl_(at::Tensor& self, const c10::List<std::optional<at::Tensor>>& indices,
                            const at::Tensor& values, bool accumulate, bool unsafe) {
  if (!accumulate && self.numel() > 0 && put_masked_scalar(self, indices, values))
    return self;
  at::Tensor v = put_values(self, values);
  AdvPlan p = plan_index(self, indices);
  int64_t L = p.lin.numel();
  if (L == 0 || self.numel() == 0)
    return self;
  at::Tensor src = v.expand(result_shape(p)).reshape({p.nb, L, p.na});
  scatter_into_view(p.x, p.nb, p.total, p.na, p.lin.reshape({-1}), src,
                    accumulate ? NISA_SCAT_ADD : NISA_SCAT_ASSIGN, "index_put_");
  return self;
}

// ---- take, put_, masked_scatter_ ------------------------------------------

at::Tensor& take_out(const at::Tensor& self, const at::Tensor& index, at::Tensor& out) {
  check_index(index);
  check_device(self, index);
  TORCH_CHECK_INDEX(index.scalar_type() == at::kLong, "take(): Expected a long tensor for "
                    "index, but got ", index.scalar_type());
  resize_out(out, index.sizes());
  if (out.numel() == 0)
    return out;
  at::Tensor flat = self.reshape({-1});
  at::Tensor lin = wrap_indices(index, self.numel()).reshape({-1});
  out.copy_(at::index_select(flat, 0, lin).view(index.sizes()));
  return out;
}

at::Tensor take(const at::Tensor& self, const at::Tensor& index) {
  at::Tensor out = empty_neuron({0}, self.scalar_type(), self.device());
  return take_out(self, index, out);
}

at::Tensor& put_(at::Tensor& self, const at::Tensor& index, const at::Tensor& source,
                 bool accumulate) {
  check_device(self, index);
  check_device(self, source);
  TORCH_CHECK_INDEX(index.scalar_type() == at::kLong, "put_(): Expected a long tensor for "
                    "index, but got ", index.scalar_type());
  TORCH_CHECK(source.scalar_type() == self.scalar_type(), "put_(): self and source expected "
              "to have the same dtype, but got self.dtype = ", self.scalar_type(),
              " and source.dtype = ", source.scalar_type());
  TORCH_CHECK(index.numel() == source.numel(), "put_(): Expected source and index to have "
              "the same number of elements, but got source.numel() = ", source.numel(),
              ", index.numel() = ", index.numel());
  if (index.numel() == 0)
    return self;
  at::Tensor lin = wrap_indices(index, self.numel()).reshape({-1});
  scatter_into_view(self, 1, self.numel(), 1, lin, source.reshape({1, -1, 1}),
                    accumulate ? NISA_SCAT_ADD : NISA_SCAT_ASSIGN, "put_");
  return self;
}

// self[mask] = source[:count] in order: each true element's rank among the
// true ones (a running sum of the mask on the card) picks its source value.
at::Tensor& masked_scatter_(at::Tensor& self, const at::Tensor& mask, const at::Tensor& source) {
  check_device(self, mask);
  check_device(self, source);
  TORCH_CHECK(mask.scalar_type() == at::kBool, "masked_scatter_ only supports boolean "
              "masks, but got mask with dtype ", mask.scalar_type());
  TORCH_CHECK(self.scalar_type() == source.scalar_type(), "masked_scatter: expected self "
              "and source to have same dtypes but got", self.scalar_type(), " and ",
              source.scalar_type());
  if (self.numel() == 0)
    return self;
  at::Tensor m = mask.expand(self.sizes());
  at::Tensor rank = at::cumsum(m.reshape({-1}), 0, at::kLong).sub_(1);
  // positions whose mask is false read element 0 (any valid one); an empty
  // source with a true mask element reads out of range: the card refuses.
  at::Tensor pos = at::where(m.reshape({-1}), rank, at::zeros_like(rank));
  at::Tensor src = source.reshape({-1});
  if (src.numel() == 0)
    src = at::zeros({1}, self.options()), pos = at::where(m.reshape({-1}),
        at::full_like(rank, 1), pos);
  at::Tensor picked = at::index_select(src, 0, pos).view(self.sizes());
  self.copy_(at::where(m, picked, self));
  return self;
}

// ---- masked_fill_: one WHERE on the card ----

at::Tensor& masked_fill_scalar_(at::Tensor& self, const at::Tensor& mask,
                                const at::Scalar& value) {
  at::Tensor v = empty_neuron({}, self.scalar_type(), self.device());
  v.fill_(value);  // a complex value too (Fill.cpp)
  nrn_tensor_desc dv = desc(v), o = desc(self), dm = desc(mask);
  NEURON_OP(nrn_op_where(stream_for(self), &o, &dm, &dv, &o));
  return self;
}

at::Tensor& masked_fill_tensor_(at::Tensor& self, const at::Tensor& mask,
                                const at::Tensor& value) {
  TORCH_CHECK(value.dim() == 0, "masked_fill_ only supports a 0-dimensional "
              "value tensor, but got tensor with ", value.dim(), " dimension(s).");
  return masked_fill_scalar_(self, mask, value.item());
}

// ---- nonzero, masked_select: selections whose size depends on the data ----
// The positions are found on the card (a stable sort of "not selected" puts
// the selected positions first, in order); the host reads back only their
// count, as CUDA does.

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
  return into(out, r);
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
  return into(out, r);
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
  return into(out, r);
}

at::Tensor count_nonzero(const at::Tensor& self, at::IntArrayRef dims) {
  return self.ne(0).sum(dims, false, at::kLong);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("index.Tensor", index_tensor);
  m.impl("index.Tensor_out", index_tensor_out);
  m.impl("_index_put_impl_", index_put_impl_);
  m.impl("take", take);
  m.impl("take.out", take_out);
  m.impl("put_", put_);
  m.impl("masked_scatter_", masked_scatter_);
  m.impl("masked_fill_.Scalar", masked_fill_scalar_);
  m.impl("masked_fill_.Tensor", masked_fill_tensor_);
  m.impl("nonzero", nonzero);
  m.impl("nonzero.out", nonzero_out);
  m.impl("nonzero_static", nonzero_static);
  m.impl("nonzero_static.out", nonzero_static_out);
  m.impl("masked_select", masked_select);
  m.impl("masked_select.out", masked_select_out);
  m.impl("count_nonzero.dim_IntList", count_nonzero);
}

}  // namespace torch_neuron

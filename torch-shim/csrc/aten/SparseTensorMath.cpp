// SPDX-License-Identifier: MIT
// Arithmetic with sparse COO tensors on neuron (SparsePrivateUse1): to_dense,
// add of a sparse tensor into a dense one (SGD's update with a sparse
// gradient) or of two sparse tensors, the sparse x dense products (mm,
// addmm, and through them torch.sparse.mm, matmul and their backward),
// sums, and scaling by a scalar. (Construction and coalescing:
// SparseTensor.cpp; docs/sparse.md.)
//
// Each is a composition of dense operators on the card over the indices
// and values: index_put_ with accumulate, index_select, mul, index_add_.
// The card's scatters add duplicates in the order of the nonzeros, as the
// CPU's loops do, so an uncoalesced operand needs no coalescing first.
#include <ATen/ExpandUtils.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/ops/_sparse_sum_native.h>
#include <ATen/ops/copy_sparse_to_sparse_native.h>
#include <ATen/ops/sum_native.h>

#include <numeric>

#include "NeuronOps.h"

namespace torch_neuron {
namespace {

at::Tensor make_sparse(const at::Tensor& like, const at::Tensor& indices,
                       const at::Tensor& values, bool coalesced) {
  return at::_sparse_coo_tensor_with_dims_and_tensors(
      like.sparse_dim(), like.dense_dim(), like.sizes(), indices, values,
      values.options().layout(at::kSparse), coalesced);
}

// dense += alpha * sparse, on the card: the values (scaled, in dense's
// dtype) accumulated at their positions by index_put_, one index tensor per
// sparse dim; the dense dims of a hybrid tensor are the trailing ones.
at::Tensor& add_sparse_into(at::Tensor& dense, const at::Tensor& sparse,
                            const at::Scalar& alpha, const char* op) {
  TORCH_CHECK(dense.sizes() == sparse.sizes(), op, ": expected 'self' and 'other' "
              "to have same size, but self has size ", dense.sizes(),
              " while other has size ", sparse.sizes());
  check_device(dense, sparse._values());
  at::ScalarType common = at::promoteTypes(dense.scalar_type(), sparse.scalar_type());
  TORCH_CHECK(at::canCast(common, dense.scalar_type()), op, ": can't cast the result "
              "of type ", common, " to the output of type ", dense.scalar_type());
  if (sparse._nnz() == 0)
    return dense;
  at::Tensor indices = sparse._indices();
  at::Tensor values = sparse._values().to(common);
  if (!(alpha.isIntegral(true) && alpha.toLong() == 1))
    values = values.mul(alpha);
  c10::List<std::optional<at::Tensor>> ix;
  for (int64_t d = 0; d < sparse.sparse_dim(); d++)
    ix.push_back(indices.select(0, d));
  dense.index_put_(ix, values.to(dense.scalar_type()), /*accumulate=*/true);
  return dense;
}

at::Tensor sparse_to_dense(const at::Tensor& self, std::optional<at::ScalarType> dtype,
                    std::optional<bool> masked_grad) {
  TORCH_CHECK(!dtype || *dtype == self.scalar_type(),
              "dtype argument is not supported by sparse_to_dense");
  at::Tensor dense = at::zeros(self.sizes(), self._values().options());
  return add_sparse_into(dense, self, 1, "to_dense");
}

// sparse + alpha * sparse: the nonzeros of both, side by side (duplicates
// stay until a coalesce adds them); coalesced again when both were, as the
// CPU's merge gives.
at::Tensor add_sparse_sparse(const at::Tensor& self, const at::Tensor& other,
                             const at::Scalar& alpha) {
  TORCH_CHECK(self.sizes() == other.sizes(), "add: expected sizes of 'self' and 'other' "
              "to match, but ", self.sizes(), " != ", other.sizes());
  TORCH_CHECK(self.sparse_dim() == other.sparse_dim() &&
              self.dense_dim() == other.dense_dim(), "add: expected 'self' and 'other' "
              "to have the same sparse and dense dims");
  at::ScalarType common = at::promoteTypes(self.scalar_type(), other.scalar_type());
  at::Tensor ov = other._values().to(common);
  if (!(alpha.isIntegral(true) && alpha.toLong() == 1))
    ov = ov.mul(alpha);
  at::Tensor indices = at::cat({self._indices(), other._indices()}, 1);
  at::Tensor values = at::cat({self._values().to(common), ov}, 0);
  at::Tensor out = make_sparse(self, indices, values, false);
  if (self.is_coalesced() && other.is_coalesced())
    out = out.coalesce();
  return out;
}

at::Tensor sparse_add(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) {
  if (self.is_sparse() && other.is_sparse())
    return add_sparse_sparse(self, other, alpha);
  TORCH_CHECK(!self.is_sparse(), "add(sparse, dense) is not supported. Use "
              "add(dense, sparse) instead.");
  at::ScalarType common = at::promoteTypes(self.scalar_type(), other.scalar_type());
  at::Tensor out = self.to(common, /*non_blocking=*/false, /*copy=*/true);
  return add_sparse_into(out, other, alpha, "add");
}

at::Tensor& sparse_add_(at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) {
  if (!self.is_sparse())
    return add_sparse_into(self, other, alpha, "add_");
  TORCH_CHECK_NOT_IMPLEMENTED(other.is_sparse(), "neuron: add_ of a dense tensor into a "
                              "sparse one (layout torch.sparse_coo) has no neuron kernel");
  at::Tensor sum = add_sparse_sparse(self, other, alpha);
  return at::native::copy_sparse_(self, sum, false);
}

at::Tensor& sparse_add_out(const at::Tensor& self, const at::Tensor& other,
                    const at::Scalar& alpha, at::Tensor& out) {
  at::Tensor r = sparse_add(self, other, alpha);
  if (out.is_sparse())
    return at::native::copy_sparse_(out, r, false);
  return into(out, r);
}

// The sparse operand of a product: a matrix with no dense dims.
void check_sparse_matrix(const at::Tensor& s, const char* op) {
  TORCH_CHECK_NOT_IMPLEMENTED(s.sparse_dim() == 2 && s.dense_dim() == 0, "neuron: ", op,
                              " of a sparse COO tensor with ", s.sparse_dim(),
                              " sparse and ", s.dense_dim(), " dense dims has no neuron "
                              "kernel (only sparse matrices: 2 sparse dims, 0 dense)");
}

// acc += alpha * (S @ D) for sparse S [n, m] and dense D [m, k] (or, with
// @right, acc += alpha * (D @ S) for D [n, m] and S [m, k]): for each
// nonzero (i, j, v), row j of D times alpha * v added into row i of acc
// (column j of D into column i of acc). D's rows gathered by index_select,
// scaled by mul, summed into place by index_add_ in the nonzeros' order.
void spmm_into(at::Tensor& acc, const at::Tensor& s, const at::Tensor& d,
               const at::Scalar& alpha, bool right, const char* op) {
  check_sparse_matrix(s, op);
  TORCH_CHECK(d.dim() == 2 && !d.is_sparse(), op, ": expected a dense 2-D tensor "
              "beside the sparse one, got ", d.dim(), "-D");
  TORCH_CHECK(s.scalar_type() == d.scalar_type(), op, ": expected the sparse and dense "
              "operands to have the same dtype, got ", s.scalar_type(), " and ",
              d.scalar_type());
  const at::Tensor& a = right ? d : s;
  const at::Tensor& b = right ? s : d;
  TORCH_CHECK(a.size(1) == b.size(0), op, ": mat1 and mat2 shapes cannot be multiplied (",
              a.size(0), "x", a.size(1), " and ", b.size(0), "x", b.size(1), ")");
  check_device(d, s._values());
  if (s._nnz() == 0)
    return;
  at::Tensor rows = s._indices().select(0, 0);
  at::Tensor cols = s._indices().select(0, 1);
  at::Tensor vals = s._values();
  if (!(alpha.isIntegral(true) && alpha.toLong() == 1))
    vals = vals.mul(alpha);
  if (!right)
    acc.index_add_(0, rows, d.index_select(0, cols).mul_(vals.unsqueeze(1)));
  else
    acc.index_add_(1, cols, d.index_select(1, rows).mul_(vals));
}

// beta * self + alpha * (mat1 @ mat2), one of mat1, mat2 sparse. beta == 0
// ignores self (its NaNs too), as PyTorch does.
at::Tensor addmm_impl(const at::Tensor& self, const at::Tensor& mat1,
                      const at::Tensor& mat2, const at::Scalar& beta,
                      const at::Scalar& alpha, const char* op) {
  TORCH_CHECK_NOT_IMPLEMENTED(!self.is_sparse() && !(mat1.is_sparse() && mat2.is_sparse()),
                              "neuron: ", op, " with ", self.is_sparse() ? "a sparse "
                              "'self'" : "two sparse matrices", " (layout "
                              "torch.sparse_coo) has no neuron kernel");
  bool right = mat2.is_sparse();
  const at::Tensor& s = right ? mat2 : mat1;
  const at::Tensor& d = right ? mat1 : mat2;
  check_sparse_matrix(s, op);
  TORCH_CHECK(mat1.dim() == 2 && mat2.dim() == 2, op, ": expected 2-D matrices");
  int64_t n = mat1.size(0), k = mat2.size(1);
  at::Tensor acc;
  if (beta.toComplexDouble() == 0.0) {
    acc = at::zeros({n, k}, d.options());
  } else {
    TORCH_CHECK(self.scalar_type() == d.scalar_type(), op, ": expected 'self' to have "
                "dtype ", d.scalar_type(), ", got ", self.scalar_type());
    at::Tensor t = self.expand({n, k});
    acc = (beta.isIntegral(true) && beta.toLong() == 1) ? t.clone(at::MemoryFormat::Contiguous)
                                                        : t.mul(beta);
  }
  spmm_into(acc, s, d, alpha, right, op);
  return acc;
}

at::Tensor sparse_addmm(const at::Tensor& self, const at::Tensor& mat1, const at::Tensor& mat2,
                 const at::Scalar& beta, const at::Scalar& alpha) {
  return addmm_impl(self, mat1, mat2, beta, alpha, "addmm");
}

at::Tensor& sparse_addmm_out(const at::Tensor& self, const at::Tensor& mat1,
                      const at::Tensor& mat2, const at::Scalar& beta,
                      const at::Scalar& alpha, at::Tensor& out) {
  return into(out, addmm_impl(self, mat1, mat2, beta, alpha, "addmm"));
}

at::Tensor& sparse_addmm_(at::Tensor& self, const at::Tensor& mat1, const at::Tensor& mat2,
                   const at::Scalar& beta, const at::Scalar& alpha) {
  at::Tensor r = addmm_impl(self, mat1, mat2, beta, alpha, "addmm_");
  TORCH_CHECK(r.sizes() == self.sizes(), "addmm_: 'self' of size ", self.sizes(),
              " cannot hold the product of size ", r.sizes());
  self.copy_(r);
  return self;
}

at::Tensor sparse_mm(const at::Tensor& self, const at::Tensor& mat2) {
  TORCH_CHECK_NOT_IMPLEMENTED(!(self.is_sparse() && mat2.is_sparse()), "neuron: mm of two "
                              "sparse COO tensors (layout torch.sparse_coo) has no neuron "
                              "kernel");
  const at::Tensor& d = self.is_sparse() ? mat2 : self;
  return addmm_impl(at::empty({0}, d.options()), self, mat2, 0, 1, "mm");
}

at::Tensor& sparse_mm_out(const at::Tensor& self, const at::Tensor& mat2, at::Tensor& out) {
  return into(out, sparse_mm(self, mat2));
}

// Sums: ATen's, over the values (and, for some sparse dims, a coalesce).
at::Tensor sparse_sum_dim(const at::Tensor& self, at::IntArrayRef dim) {
  return at::native::_sparse_sum(self, dim);
}

// The row-major linear position of each nonzero over the sparse dims @dims
// (the int64 multiply-adds of coalesce's, on the card).
at::Tensor flat_positions(const at::Tensor& indices, const std::vector<int64_t>& dims,
                          at::IntArrayRef sizes) {
  at::Tensor lin = indices.select(0, dims[0]);
  for (size_t k = 1; k < dims.size(); k++)
    lin = lin.mul(sizes[dims[k]]).add_(indices.select(0, dims[k]));
  return lin.contiguous();
}

// The gradient of torch.sparse.sum(input, dims) for a sparse input: the
// gradient of each of its (coalesced) nonzeros is grad at the position it
// was summed into -- grad itself expanded when every sparse dim was summed
// (grad is dense), else the nonzero of the (coalesced, so sorted) sparse
// grad at the same kept indices, found by searchsorted, 0 where grad has
// none. Dense dims summed are expanded back.
at::Tensor sparse_sum_backward(const at::Tensor& grad_, const at::Tensor& input_,
                               at::IntArrayRef dims_to_sum) {
  if ((grad_.is_sparse() && grad_._nnz() == 0) || grad_.numel() == 0)
    return at::zeros_like(input_);
  at::Tensor input = input_.coalesce();
  int64_t sparse_dim = input.sparse_dim(), dim = input.dim();
  std::vector<bool> summed(dim, false);
  for (int64_t d : dims_to_sum)
    summed[at::maybe_wrap_dim(d, dim)] = true;
  std::vector<int64_t> kept_sparse, dense_summed;
  int64_t n_sparse_summed = 0;
  for (int64_t d = 0; d < dim; d++) {
    if (summed[d] && d < sparse_dim)
      n_sparse_summed++;
    else if (summed[d])
      dense_summed.push_back(d + 1 - sparse_dim);  // its dim in the values
    else if (d < sparse_dim)
      kept_sparse.push_back(d);
  }
  at::Tensor values = input._values();
  at::Tensor gv = grad_.is_sparse() ? grad_.coalesce()._values() : grad_;
  if (!grad_.is_sparse())
    gv = gv.unsqueeze(0);  // the nnz dim, expanded below
  for (int64_t d : dense_summed)
    gv = gv.unsqueeze(d);
  at::Tensor grad_values;
  if (n_sparse_summed == sparse_dim) {
    TORCH_CHECK(!grad_.is_sparse(), "_sparse_sum_backward: expected grad to be dense "
                "since all sparse dims are summed");
    grad_values = gv.expand(values.sizes()).contiguous();
  } else {
    TORCH_CHECK(grad_.is_sparse(), "_sparse_sum_backward: expected grad to be sparse");
    auto size = values.sizes().vec();
    size[0] = gv.size(0);
    gv = gv.expand(size);
    if (n_sparse_summed == 0) {
      grad_values = gv.contiguous();
    } else {
      at::Tensor g = grad_.coalesce();
      std::vector<int64_t> all(g.sparse_dim());
      std::iota(all.begin(), all.end(), 0);
      at::Tensor have = flat_positions(g._indices(), all, g.sizes());
      at::Tensor want = flat_positions(input._indices(), kept_sparse, input.sizes());
      at::Tensor pos = at::searchsorted(have, want).clamp_max_(g._nnz() - 1);
      at::Tensor found = have.index_select(0, pos).eq(want);
      for (int64_t d = 1; d < values.dim(); d++)
        found = found.unsqueeze(-1);
      grad_values = at::where(found, gv.index_select(0, pos),
                              at::zeros({}, gv.options())).contiguous();
    }
  }
  return at::_sparse_coo_tensor_with_dims_and_tensors(
      sparse_dim, input.dense_dim(), input.sizes(), input._indices().clone(), grad_values,
      grad_values.options().layout(at::kSparse), input.is_coalesced());
}

// sparse * scalar, sparse / scalar, -sparse: the values computed, the
// indices copied, the coalesced flag kept.
bool is_scalar_operand(const at::Tensor& t) {
  return !t.is_sparse() && t.dim() == 0;
}

at::Tensor scale_values(const at::Tensor& s, const at::Tensor& scalar, bool divide,
                        const char* op) {
  at::Tensor v = divide ? s._values().div(scalar.to(s.device())) :
                          s._values().mul(scalar.to(s.device()));
  return make_sparse(s, s._indices().clone(), v, s.is_coalesced());
}

// sparse * dense of the same shape: a sparse result at the sparse
// operand's positions, its values times the dense elements there (index).
at::Tensor mul_dense(const at::Tensor& s, const at::Tensor& d) {
  check_device(d, s._values());
  at::Tensor indices = s._indices();
  c10::List<std::optional<at::Tensor>> ix;
  for (int64_t k = 0; k < s.sparse_dim(); k++)
    ix.push_back(indices.select(0, k));
  at::ScalarType common = at::promoteTypes(s.scalar_type(), d.scalar_type());
  at::Tensor values = s._values().to(common).mul(d.index(ix).to(common));
  return make_sparse(s, indices.clone(), values, s.is_coalesced());
}

at::Tensor sparse_mul(const at::Tensor& self, const at::Tensor& other) {
  if (self.is_sparse() && is_scalar_operand(other))
    return scale_values(self, other, false, "mul");
  if (other.is_sparse() && is_scalar_operand(self))
    return scale_values(other, self, false, "mul");
  if (self.is_sparse() != other.is_sparse() && self.sizes() == other.sizes())
    return self.is_sparse() ? mul_dense(self, other) : mul_dense(other, self);
  TORCH_CHECK_NOT_IMPLEMENTED(false, "neuron: mul of a sparse COO tensor by another sparse "
                              "one or by a dense one of another shape (layout "
                              "torch.sparse_coo) has no neuron kernel");
}

// In place: the values scaled where they are (SGD's momentum buffer of a
// sparse gradient).
at::Tensor& sparse_mul_(at::Tensor& self, const at::Tensor& other) {
  TORCH_CHECK_NOT_IMPLEMENTED(self.is_sparse() && is_scalar_operand(other), "neuron: mul_ "
                              "of a sparse COO tensor by anything but a scalar (layout "
                              "torch.sparse_coo) has no neuron kernel");
  self._values().mul_(other.to(self.device()));
  return self;
}

at::Tensor& sparse_mul_out(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {
  at::Tensor r = sparse_mul(self, other);
  TORCH_CHECK_NOT_IMPLEMENTED(out.is_sparse(), "neuron: mul.out of a sparse COO tensor "
                              "into a dense one has no neuron kernel");
  return at::native::copy_sparse_(out, r, false);
}

at::Tensor sparse_div(const at::Tensor& self, const at::Tensor& other) {
  TORCH_CHECK_NOT_IMPLEMENTED(self.is_sparse() && is_scalar_operand(other), "neuron: div "
                              "of a sparse COO tensor by anything but a scalar (layout "
                              "torch.sparse_coo) has no neuron kernel");
  return scale_values(self, other, true, "div");
}

at::Tensor sparse_neg(const at::Tensor& self) {
  return make_sparse(self, self._indices().clone(), self._values().neg(),
                     self.is_coalesced());
}

// The elementwise functions that map 0 to 0, as PyTorch computes them on a
// sparse tensor: on the values of the coalesced tensor (a function of a
// sum of duplicates, not a sum of functions), the indices kept.
#define NEURON_SPARSE_UNARY(X) \
  X(abs) X(sqrt) X(sin) X(tan) X(tanh) X(sinh) X(asin) X(asinh) X(atan) X(atanh) \
  X(expm1) X(log1p) X(sign) X(sgn) X(trunc) X(floor) X(ceil) X(round) X(erf) \
  X(erfinv) X(deg2rad) X(rad2deg) X(relu)
#define NEURON_SPARSE_UNARY_FN(name)                                        \
  at::Tensor sparse_##name(const at::Tensor& self) {                        \
    at::Tensor c = self.coalesce();                                         \
    return make_sparse(c, c._indices().clone(), at::name(c._values()), true); \
  }
NEURON_SPARSE_UNARY(NEURON_SPARSE_UNARY_FN)
#undef NEURON_SPARSE_UNARY_FN

} // namespace
} // namespace torch_neuron

TORCH_LIBRARY_IMPL(aten, SparsePrivateUse1, m) {
  m.impl("_to_dense", torch_neuron::sparse_to_dense);
  m.impl("add.Tensor", torch_neuron::sparse_add);
  m.impl("add_.Tensor", torch_neuron::sparse_add_);
  m.impl("add.out", torch_neuron::sparse_add_out);
  m.impl("addmm", torch_neuron::sparse_addmm);
  m.impl("addmm.out", torch_neuron::sparse_addmm_out);
  m.impl("addmm_", torch_neuron::sparse_addmm_);
  m.impl("mm", torch_neuron::sparse_mm);
  m.impl("mm.out", torch_neuron::sparse_mm_out);
  m.impl("_sparse_sum.dim", torch_neuron::sparse_sum_dim);
  m.impl("_sparse_sum_backward", torch_neuron::sparse_sum_backward);
  m.impl("sum", TORCH_FN(at::native::sum_coo));
  m.impl("sum.dim_IntList", TORCH_FN(at::native::sum_sparse_coo));
  m.impl("mul.Tensor", torch_neuron::sparse_mul);
  m.impl("mul_.Tensor", torch_neuron::sparse_mul_);
  m.impl("mul.out", torch_neuron::sparse_mul_out);
  m.impl("div.Tensor", torch_neuron::sparse_div);
  m.impl("neg", torch_neuron::sparse_neg);
#define NEURON_SPARSE_UNARY_IMPL(name) m.impl(#name, torch_neuron::sparse_##name);
  NEURON_SPARSE_UNARY(NEURON_SPARSE_UNARY_IMPL)
#undef NEURON_SPARSE_UNARY_IMPL
}

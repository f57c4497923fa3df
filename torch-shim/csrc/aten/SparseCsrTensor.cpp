// SPDX-License-Identifier: MIT
// Sparse CSR tensors on neuron (dispatch key SparseCsrPrivateUse1): their
// construction, inspection, copies, the conversions to and from dense and
// COO tensors, and the products with a dense matrix or vector (mm, addmm,
// mv, and sparse_sampled_addmm, the gradient of the CSR operand).
// docs/sparse.md says what works and what does not.
//
// A CSR tensor on the card is PyTorch's own SparseCsrTensorImpl whose
// crow_indices [n + 1], col_indices [nnz] and values [nnz] are ordinary
// neuron tensors: ATen's device-generic code builds, copies and inspects it
// (the at::native functions registered below). What touches the numbers is
// a composition of operators the card already runs: each nonzero's row is
// searchsorted in crow_indices, then index_select, mul, index_add_ (the
// products) or index_put_ (to_dense); crow_indices of a COO tensor is
// searchsorted in its sorted rows.
//
// Only matrices (2 sparse dims, no batch or dense dims) have kernels; the
// products also take the CSC layout (the transpose of a CSR matrix, which
// their backward uses). Any other operator, and BSR/BSC tensors, fail
// naming the operator and the layouts (the SparseCsrPrivateUse1 fallback in
// SparseTensor.cpp).
#include <ATen/SparseCsrTensorUtils.h>
#include <ATen/ops/_nnz_native.h>
#include <ATen/ops/ccol_indices_native.h>
#include <ATen/ops/clone_native.h>
#include <ATen/ops/col_indices_native.h>
#include <ATen/ops/copy_native.h>
#include <ATen/ops/crow_indices_native.h>
#include <ATen/ops/dense_dim_native.h>
#include <ATen/ops/empty_like_native.h>
#include <ATen/ops/empty_native.h>
#include <ATen/ops/resize_as_sparse_native.h>
#include <ATen/ops/row_indices_native.h>
#include <ATen/ops/sparse_dim_native.h>
#include <ATen/ops/values_native.h>
#include <ATen/ops/zero_native.h>

#include "NeuronOps.h"

namespace torch_neuron {
namespace {

const char* layout_name(at::Layout l) {
  switch (l) {
    case at::kSparseCsr: return "torch.sparse_csr";
    case at::kSparseCsc: return "torch.sparse_csc";
    case at::kSparseBsr: return "torch.sparse_bsr";
    case at::kSparseBsc: return "torch.sparse_bsc";
    case at::kSparse: return "torch.sparse_coo";
    default: return "torch.strided";
  }
}

// The compressed operand of a kernel here: a CSR (or CSC) matrix, no batch
// or dense dims.
void check_compressed_matrix(const at::Tensor& t, const char* op, bool csc_ok) {
  at::Layout l = t.layout();
  TORCH_CHECK_NOT_IMPLEMENTED(l == at::kSparseCsr || (csc_ok && l == at::kSparseCsc),
                              "neuron: ", op, " of a tensor of layout ", layout_name(l),
                              " has no neuron kernel (only torch.sparse_csr",
                              csc_ok ? " and torch.sparse_csc" : "", "); see docs/sparse.md");
  TORCH_CHECK_NOT_IMPLEMENTED(t.dim() == 2 && t.dense_dim() == 0, "neuron: ", op,
                              " of a ", layout_name(l), " tensor with batch or dense dims "
                              "(size ", t.sizes(), ", dense_dim ", t.dense_dim(), ") has no "
                              "neuron kernel (only matrices)");
}

// The row of each nonzero, from crow_indices: k's row is the last i with
// crow[i] <= k (searchsorted to the right, minus 1; empty rows repeat crow).
at::Tensor expand_compressed(const at::Tensor& compressed, int64_t nnz) {
  at::Tensor c = compressed.to(at::kLong).contiguous();
  at::Tensor k = at::arange(nnz, c.options());
  return at::searchsorted(c, k, /*out_int32=*/false, /*right=*/true).sub_(1);
}

// Each nonzero's (row, column) as int64, of a CSR or CSC matrix, in the
// order of its values.
std::pair<at::Tensor, at::Tensor> rows_cols(const at::Tensor& t) {
  auto [compressed, plain] = at::sparse_csr::getCompressedPlainIndices(t);
  at::Tensor expanded = expand_compressed(compressed, plain.numel());
  at::Tensor p = plain.to(at::kLong);
  if (t.layout() == at::kSparseCsr)
    return {expanded, p};
  return {p, expanded};
}

at::Tensor compressed_to_dense(const at::Tensor& self, std::optional<at::ScalarType> dtype,
                               std::optional<bool> masked_grad) {
  TORCH_CHECK(!dtype || *dtype == self.scalar_type(),
              "dtype argument is not supported by sparse_csr_to_dense");
  check_compressed_matrix(self, "to_dense", true);
  at::Tensor values = self.values();
  at::Tensor dense = at::zeros(self.sizes(), values.options().layout(at::kStrided));
  if (values.numel() == 0)
    return dense;
  auto [rows, cols] = rows_cols(self);
  dense.index_put_({rows, cols}, values, /*accumulate=*/true);
  return dense;
}

// A CSR matrix as a COO one: its rows expanded beside its columns, then
// coalesced (sorted already; duplicates of a non-canonical CSR tensor are
// added, in their order).
at::Tensor compressed_to_coo(const at::Tensor& self) {
  check_compressed_matrix(self, "to_sparse", true);
  auto [rows, cols] = rows_cols(self);
  at::Tensor out = at::_sparse_coo_tensor_unsafe(at::stack({rows, cols}), self.values().clone(),
                                                 self.sizes(),
                                                 self.values().options().layout(at::kSparse));
  return out.coalesce();
}

at::Tensor compressed_to_sparse_dim(const at::Tensor& self, int64_t sparse_dim) {
  TORCH_CHECK(sparse_dim == 2, "sparse dim 1 is not supported by sparse_csr_to_dense");
  return compressed_to_coo(self);
}

at::Tensor compressed_to_sparse(const at::Tensor& self, std::optional<at::Layout> layout,
                                at::OptionalIntArrayRef blocksize,
                                std::optional<int64_t> dense_dim) {
  at::Layout l = layout.value_or(at::kSparse);
  if (l == at::kSparse && !blocksize)
    return compressed_to_coo(self);
  TORCH_CHECK_NOT_IMPLEMENTED(l == self.layout() && !blocksize && !dense_dim,
                              "neuron: to_sparse of a ", layout_name(self.layout()),
                              " tensor to layout ", layout_name(l), " has no neuron kernel");
  return self.clone();
}

// A coalesced COO matrix's row pointers: crow[i] is the number of nonzeros
// in rows before i, searchsorted (to the left) in the sorted rows.
at::Tensor coo_to_csr(const at::Tensor& coo_) {
  TORCH_CHECK_NOT_IMPLEMENTED(coo_.sparse_dim() == 2 && coo_.dense_dim() == 0,
                              "neuron: to_sparse_csr of a sparse COO tensor with ",
                              coo_.sparse_dim(), " sparse and ", coo_.dense_dim(),
                              " dense dims has no neuron kernel (only matrices)");
  at::Tensor coo = coo_.coalesce();
  at::Tensor indices = coo._indices();
  at::Tensor rows = indices.select(0, 0).contiguous();
  at::Tensor at_rows = at::arange(coo.size(0) + 1, rows.options());
  at::Tensor crow = at::searchsorted(rows, at_rows);
  return at::_sparse_csr_tensor_unsafe(crow, indices.select(0, 1).contiguous(),
                                       coo._values(), coo.sizes(),
                                       coo._values().options().layout(at::kSparseCsr));
}

at::Tensor coo_to_sparse_csr(const at::Tensor& self, std::optional<int64_t> dense_dim) {
  TORCH_CHECK_NOT_IMPLEMENTED(!dense_dim || *dense_dim == 0, "neuron: to_sparse_csr with "
                              "dense_dim > 0 (hybrid, layout torch.sparse_csr) has no "
                              "neuron kernel");
  return coo_to_csr(self);
}

at::Tensor dense_to_sparse_csr(const at::Tensor& self, std::optional<int64_t> dense_dim) {
  TORCH_CHECK_NOT_IMPLEMENTED(!dense_dim || *dense_dim == 0, "neuron: to_sparse_csr with "
                              "dense_dim > 0 (hybrid, layout torch.sparse_csr) has no "
                              "neuron kernel");
  TORCH_CHECK_NOT_IMPLEMENTED(self.dim() == 2, "neuron: to_sparse_csr of a ", self.dim(),
                              "-D tensor (batched, layout torch.sparse_csr) has no neuron "
                              "kernel (only matrices)");
  return coo_to_csr(self._to_sparse(2));
}

at::Tensor compressed_to_sparse_csr(const at::Tensor& self, std::optional<int64_t> dense_dim) {
  TORCH_CHECK_NOT_IMPLEMENTED(self.layout() == at::kSparseCsr && !dense_dim,
                              "neuron: to_sparse_csr of a ", layout_name(self.layout()),
                              " tensor has no neuron kernel");
  return self.clone();
}

// acc += alpha * (S @ D) for a CSR/CSC S [n, m] and dense D [m, k] (D a
// vector [m] too), or with @right acc += alpha * (D @ S) for D [n, m]: for
// each nonzero (i, j, v), row j of D times alpha * v added into row i of acc
// (column i of D into column j of acc), in the order of the values.
void csr_mm_into(at::Tensor& acc, const at::Tensor& s, const at::Tensor& d,
                 const at::Scalar& alpha, bool right, const char* op) {
  check_compressed_matrix(s, op, true);
  TORCH_CHECK(d.layout() == at::kStrided, op, ": expected a strided tensor beside the ",
              layout_name(s.layout()), " one");
  TORCH_CHECK(s.scalar_type() == d.scalar_type(), op, ": expected the sparse and dense "
              "operands to have the same dtype, got ", s.scalar_type(), " and ",
              d.scalar_type());
  at::Tensor vals = s.values();
  check_device(d, vals);
  if (vals.numel() == 0)
    return;
  auto [rows, cols] = rows_cols(s);
  if (!(alpha.isIntegral(true) && alpha.toLong() == 1))
    vals = vals.mul(alpha);
  if (d.dim() == 1)
    acc.index_add_(0, rows, d.index_select(0, cols).mul_(vals));
  else if (!right)
    acc.index_add_(0, rows, d.index_select(0, cols).mul_(vals.unsqueeze(1)));
  else
    acc.index_add_(1, cols, d.index_select(1, rows).mul_(vals));
}

at::Tensor csr_addmm_impl(const at::Tensor& self, const at::Tensor& mat1,
                          const at::Tensor& mat2, const at::Scalar& beta,
                          const at::Scalar& alpha, const char* op) {
  bool s1 = mat1.layout() != at::kStrided, s2 = mat2.layout() != at::kStrided;
  TORCH_CHECK_NOT_IMPLEMENTED(self.layout() == at::kStrided && s1 != s2, "neuron: ", op,
                              " with ", self.layout() != at::kStrided ? "a sparse 'self'" :
                              "two sparse matrices", " (layouts ", layout_name(self.layout()),
                              ", ", layout_name(mat1.layout()), ", ", layout_name(mat2.layout()),
                              ") has no neuron kernel");
  bool right = s2;
  const at::Tensor& s = right ? mat2 : mat1;
  const at::Tensor& d = right ? mat1 : mat2;
  check_compressed_matrix(s, op, true);
  TORCH_CHECK(mat1.dim() == 2 && mat2.dim() == 2, op, ": expected 2-D matrices, got ",
              mat1.dim(), "-D and ", mat2.dim(), "-D");
  TORCH_CHECK(mat1.size(1) == mat2.size(0), op, ": mat1 and mat2 shapes cannot be "
              "multiplied (", mat1.size(0), "x", mat1.size(1), " and ", mat2.size(0), "x",
              mat2.size(1), ")");
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
  csr_mm_into(acc, s, d, alpha, right, op);
  return acc;
}

at::Tensor csr_addmm(const at::Tensor& self, const at::Tensor& mat1, const at::Tensor& mat2,
                     const at::Scalar& beta, const at::Scalar& alpha) {
  return csr_addmm_impl(self, mat1, mat2, beta, alpha, "addmm");
}

at::Tensor& csr_addmm_out(const at::Tensor& self, const at::Tensor& mat1,
                          const at::Tensor& mat2, const at::Scalar& beta,
                          const at::Scalar& alpha, at::Tensor& out) {
  TORCH_CHECK_NOT_IMPLEMENTED(out.layout() == at::kStrided, "neuron: addmm.out into a ",
                              layout_name(out.layout()), " tensor has no neuron kernel");
  return into(out, csr_addmm_impl(self, mat1, mat2, beta, alpha, "addmm"));
}

at::Tensor& csr_addmm_(at::Tensor& self, const at::Tensor& mat1, const at::Tensor& mat2,
                       const at::Scalar& beta, const at::Scalar& alpha) {
  at::Tensor r = csr_addmm_impl(self, mat1, mat2, beta, alpha, "addmm_");
  TORCH_CHECK(r.sizes() == self.sizes(), "addmm_: 'self' of size ", self.sizes(),
              " cannot hold the product of size ", r.sizes());
  self.copy_(r);
  return self;
}

at::Tensor csr_mm(const at::Tensor& self, const at::Tensor& mat2) {
  TORCH_CHECK_NOT_IMPLEMENTED(self.layout() == at::kStrided || mat2.layout() == at::kStrided,
                              "neuron: mm of two sparse matrices (layouts ",
                              layout_name(self.layout()), ", ", layout_name(mat2.layout()),
                              ") has no neuron kernel");
  const at::Tensor& d = self.layout() == at::kStrided ? self : mat2;
  return csr_addmm_impl(at::empty({0}, d.options()), self, mat2, 0, 1, "mm");
}

at::Tensor& csr_mm_out(const at::Tensor& self, const at::Tensor& mat2, at::Tensor& out) {
  TORCH_CHECK_NOT_IMPLEMENTED(out.layout() == at::kStrided, "neuron: mm.out into a ",
                              layout_name(out.layout()), " tensor has no neuron kernel");
  return into(out, csr_mm(self, mat2));
}

// y = S @ x for a CSR/CSC matrix S and a dense vector x.
at::Tensor csr_mv(const at::Tensor& self, const at::Tensor& vec) {
  TORCH_CHECK(vec.dim() == 1 && vec.layout() == at::kStrided, "mv: expected a strided "
              "1-D vector, got ", vec.dim(), "-D");
  check_compressed_matrix(self, "mv", true);
  TORCH_CHECK(self.size(1) == vec.size(0), "size mismatch, got input (", self.size(0),
              "), mat (", self.size(0), "x", self.size(1), "), vec (", vec.size(0), ")");
  at::Tensor acc = at::zeros({self.size(0)}, vec.options());
  csr_mm_into(acc, self, vec, 1, false, "mv");
  return acc;
}

// sparse_sampled_addmm: beta * self + alpha * (mat1 @ mat2) at self's
// nonzeros only, self's pattern kept (PyTorch's gradient of a CSR operand
// of mm). Each nonzero (i, j): the sum over k of mat1[i, k] * mat2[k, j]
// (rows of mat1 and columns of mat2 gathered by index_select, mul, sum).
at::Tensor csr_sampled_addmm(const at::Tensor& self, const at::Tensor& mat1,
                             const at::Tensor& mat2, const at::Scalar& beta,
                             const at::Scalar& alpha) {
  check_compressed_matrix(self, "sparse_sampled_addmm", false);
  TORCH_CHECK(mat1.layout() == at::kStrided && mat2.layout() == at::kStrided,
              "sampled_addmm: Expected mat1 and mat2 to be strided tensors");
  TORCH_CHECK_NOT_IMPLEMENTED(mat1.dim() == 2 && mat2.dim() == 2, "neuron: "
                              "sparse_sampled_addmm of batched matrices (layout "
                              "torch.sparse_csr) has no neuron kernel (only matrices)");
  TORCH_CHECK(mat1.size(1) == mat2.size(0), "sampled_addmm: mat1 and mat2 shapes cannot "
              "be multiplied (", mat1.size(0), "x", mat1.size(1), " and ", mat2.size(0),
              "x", mat2.size(1), ")");
  TORCH_CHECK(self.size(0) == mat1.size(0) && self.size(1) == mat2.size(1),
              "sampled_addmm: self of size ", self.sizes(), " does not match the product "
              "of size (", mat1.size(0), "x", mat2.size(1), ")");
  TORCH_CHECK(self.scalar_type() == mat1.scalar_type() &&
              self.scalar_type() == mat2.scalar_type(), "sampled_addmm: Expected mat1, "
              "mat2 and self to have the same dtype, got ", mat1.scalar_type(), ", ",
              mat2.scalar_type(), " and ", self.scalar_type());
  at::Tensor vals = self.values();
  check_device(mat1, vals);
  check_device(mat2, vals);
  at::Tensor out_vals;
  if (vals.numel() == 0) {
    out_vals = vals.clone();
  } else {
    auto [rows, cols] = rows_cols(self);
    at::Tensor prod = mat1.index_select(0, rows).mul(mat2.t().index_select(0, cols)).sum(-1);
    if (!(alpha.isIntegral(true) && alpha.toLong() == 1))
      prod = prod.mul(alpha);
    if (beta.toComplexDouble() == 0.0)
      out_vals = prod.contiguous();
    else
      out_vals = vals.mul(beta).add_(prod);
  }
  return at::_sparse_csr_tensor_unsafe(self.crow_indices().clone(), self.col_indices().clone(),
                                       out_vals, self.sizes(), out_vals.options()
                                       .layout(at::kSparseCsr));
}

at::Tensor& csr_sampled_addmm_out(const at::Tensor& self, const at::Tensor& mat1,
                                  const at::Tensor& mat2, const at::Scalar& beta,
                                  const at::Scalar& alpha, at::Tensor& out) {
  at::Tensor r = csr_sampled_addmm(self, mat1, mat2, beta, alpha);
  TORCH_CHECK(out.layout() == at::kSparseCsr, "sampled_addmm: Expected result to be a "
              "sparse CSR tensor");
  if (!out.is_same(self))
    at::native::resize_as_sparse_compressed_(out, r);
  return at::native::copy_sparse_compressed_(out, r, false);
}

// torch.sparse.mm(csr, other, reduce): for "sum" and "mean" the product
// above, divided for "mean" by each row's count of nonzeros (the
// differences of crow_indices; an empty row stays 0); for "amax" and
// "amin" each nonzero's row of products (index_select of other's rows,
// times the value) reduced into its output row by index_reduce_ without
// the output's zeros, so an empty row stays 0 as on the CPU. The argument
// tensor, which only the backward reads, is returned empty, as the CPU
// does when no operand needs a gradient; the backward has no kernel.
std::tuple<at::Tensor, at::Tensor> csr_mm_reduce(const at::Tensor& self,
                                                 const at::Tensor& other,
                                                 c10::string_view reduce) {
  const bool extremum = reduce == "amax" || reduce == "amin";
  TORCH_CHECK(reduce == "sum" || reduce == "mean" || extremum, "_sparse_mm_reduce_impl: "
              "reduce argument must be either sum, mean, amax or amin, got ", reduce);
  check_compressed_matrix(self, "_sparse_mm_reduce_impl", false);
  TORCH_CHECK(other.layout() == at::kStrided && other.dim() == 2, "sparse_mm_reduce: "
              "expected 'other' to be a dense 2-D tensor");
  TORCH_CHECK(self.size(1) == other.size(0), "sparse_mm_reduce: mat1 and mat2 shapes "
              "cannot be multiplied (", self.size(0), "x", self.size(1), " and ",
              other.size(0), "x", other.size(1), ")");
  at::Tensor out = at::zeros({self.size(0), other.size(1)}, other.options());
  if (extremum) {
    TORCH_CHECK(self.layout() == at::kSparseCsr, "sparse_mm_reduce: expected a CSR "
                "matrix, got ", layout_name(self.layout()));
    at::Tensor vals = self.values();
    check_device(other, vals);
    if (vals.numel() == 0)
      return {out, at::Tensor()};
    auto [rows, cols] = rows_cols(self);
    at::Tensor prod = other.index_select(0, cols).mul(vals.unsqueeze(1));
    out.index_reduce_(0, rows, prod, reduce, /*include_self=*/false);
    return {out, at::Tensor()};
  }
  csr_mm_into(out, self, other, 1, false, "_sparse_mm_reduce_impl");
  if (reduce == "mean") {
    at::Tensor crow = self.crow_indices().to(at::kLong);
    at::Tensor count = crow.narrow(0, 1, self.size(0)).sub(crow.narrow(0, 0, self.size(0)));
    out.div_(count.clamp_min(1).to(out.scalar_type()).unsqueeze(1));
  }
  return {out, at::Tensor()};
}

// What no kernel here takes, among the operators PyTorch's CPU has CSR
// kernels for: an error naming the operator and the layout. (Without it,
// the structured operators' generic kernels, which c10 also gives the
// SparseCsr keys, would fail in TensorIterator with "unsupported tensor
// layout", not naming the operator.)
void compressed_refused(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "neuron: operator ", op.schema().operator_name(),
                              " has no neuron kernel for compressed sparse tensors (layouts "
                              "torch.sparse_csr, sparse_csc, sparse_bsr, sparse_bsc); on "
                              "neuron sparse COO tensors and some operators of CSR matrices "
                              "run, see docs/sparse.md");
}

// Registered once the kernels above are (static initialization runs in the
// order of this file): each aten operator with a SparseCsrCPU kernel, a
// CompositeExplicitAutogradNonFunctional one, and none for
// SparseCsrPrivateUse1 gets compressed_refused.
struct RefuseCompressed {
  torch::Library lib{torch::Library::IMPL, "aten", c10::DispatchKey::SparseCsrPrivateUse1,
                     __FILE__, __LINE__};
  RefuseCompressed() {
    auto& d = c10::Dispatcher::singleton();
    for (const c10::OperatorName& name : d.getAllOpNames()) {
      if (name.name.rfind("aten::", 0) != 0)
        continue;
      auto op = d.findOp(name);
      if (!op || !op->hasKernelForDispatchKey(c10::DispatchKey::SparseCsrCPU) ||
          op->hasKernelForDispatchKey(c10::DispatchKey::SparseCsrPrivateUse1) ||
          !op->hasKernelForDispatchKey(c10::DispatchKey::CompositeExplicitAutogradNonFunctional))
        continue;
      std::string n = name.name.substr(6);
      if (!name.overload_name.empty())
        n += "." + name.overload_name;
      lib.impl(n.c_str(), torch::CppFunction::makeFromBoxedFunction<&compressed_refused>());
    }
  }
};

} // namespace
} // namespace torch_neuron

TORCH_LIBRARY_IMPL(aten, SparseCsrPrivateUse1, m) {
  m.impl("crow_indices", TORCH_FN(at::native::crow_indices_sparse_csr));
  m.impl("col_indices", TORCH_FN(at::native::col_indices_sparse_csr));
  m.impl("ccol_indices", TORCH_FN(at::native::ccol_indices_sparse_csr));
  m.impl("row_indices", TORCH_FN(at::native::row_indices_sparse_csr));
  m.impl("values", TORCH_FN(at::native::values_sparse_csr));
  m.impl("_nnz", TORCH_FN(at::native::_nnz_sparse_csr));
  m.impl("sparse_dim", TORCH_FN(at::native::sparse_dim_sparse_csr));
  m.impl("dense_dim", TORCH_FN(at::native::dense_dim_sparse_csr));
  m.impl("empty.memory_format", TORCH_FN(at::native::empty_sparse_compressed_symint));
  m.impl("empty_like", TORCH_FN(at::native::empty_like_sparse_csr));
  m.impl("clone", TORCH_FN(at::native::clone_sparse_compressed));
  m.impl("copy_", TORCH_FN(at::native::copy_sparse_compressed_));
  m.impl("resize_as_sparse_", TORCH_FN(at::native::resize_as_sparse_compressed_));
  m.impl("zero_", TORCH_FN(at::native::zero_sparse_csr_));
  m.impl("_to_dense", torch_neuron::compressed_to_dense);
  m.impl("_to_sparse.sparse_dim", torch_neuron::compressed_to_sparse_dim);
  m.impl("_to_sparse", torch_neuron::compressed_to_sparse);
  m.impl("_to_sparse_csr", torch_neuron::compressed_to_sparse_csr);
  m.impl("addmm", torch_neuron::csr_addmm);
  m.impl("addmm.out", torch_neuron::csr_addmm_out);
  m.impl("addmm_", torch_neuron::csr_addmm_);
  m.impl("mm", torch_neuron::csr_mm);
  m.impl("mm.out", torch_neuron::csr_mm_out);
  m.impl("mv", torch_neuron::csr_mv);
  m.impl("_sparse_mm_reduce_impl", torch_neuron::csr_mm_reduce);
  m.impl("sparse_sampled_addmm", torch_neuron::csr_sampled_addmm);
  m.impl("sparse_sampled_addmm.out", torch_neuron::csr_sampled_addmm_out);
}

TORCH_LIBRARY_IMPL(aten, SparsePrivateUse1, m) {
  m.impl("_to_sparse_csr", torch_neuron::coo_to_sparse_csr);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_to_sparse_csr", torch_neuron::dense_to_sparse_csr);
}

// After the registrations above (see RefuseCompressed).
static torch_neuron::RefuseCompressed refuse_compressed;

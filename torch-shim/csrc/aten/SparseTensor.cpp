// SPDX-License-Identifier: MIT
// Sparse COO tensors on neuron (dispatch key SparsePrivateUse1): their
// construction, inspection, copies, conversion from dense and coalescing.
// (The arithmetic: SparseTensorMath.cpp; what works and what does not:
// docs/sparse.md.)
//
// A sparse tensor on the card is PyTorch's own SparseTensorImpl whose
// indices [sparse_dim, nnz] (int64) and values [nnz, dense...] are ordinary
// neuron tensors: ATen's device-generic code builds, resizes, copies and
// inspects it (the at::native functions registered below), and what
// touches the numbers (coalesce, to_sparse) is a composition of operators
// the card already runs -- sort, unique_consecutive, cumsum, index_select,
// index_add, nonzero, index.
//
// An operator with no kernel here or in SparseTensorMath.cpp fails naming
// itself and the layout (the fallback at the end): a sparse tensor never
// goes to the CPU behind the program's back.
#include <ATen/ops/_coalesced_native.h>
#include <ATen/ops/_indices_native.h>
#include <ATen/ops/_nnz_native.h>
#include <ATen/ops/_sparse_coo_tensor_with_dims_and_tensors_native.h>
#include <ATen/ops/_sparse_coo_tensor_with_dims_native.h>
#include <ATen/ops/_to_sparse_native.h>
#include <ATen/ops/_values_native.h>
#include <ATen/ops/clone_native.h>
#include <ATen/ops/copy_sparse_to_sparse_native.h>
#include <ATen/ops/dense_dim_native.h>
#include <ATen/ops/empty_like_native.h>
#include <ATen/ops/empty_native.h>
#include <ATen/ops/indices_native.h>
#include <ATen/ops/is_coalesced_native.h>
#include <ATen/ops/sparse_dim_native.h>
#include <ATen/ops/sparse_resize_and_clear_native.h>
#include <ATen/ops/sparse_resize_native.h>
#include <ATen/ops/values_native.h>
#include <ATen/ops/zero_native.h>

#include "NeuronOps.h"

namespace torch_neuron {
namespace {

// Each nonzero's position as one int64, row-major over the sparse dims:
// i0 * s1 * s2 ... + i1 * s2 ... + ..., computed on the card (exact in
// int64; PyTorch's flatten_indices is the same number).
at::Tensor linear_index(const at::Tensor& indices, at::IntArrayRef sizes) {
  int64_t sparse_dim = indices.size(0);
  at::Tensor lin = indices.select(0, 0);
  for (int64_t d = 1; d < sparse_dim; d++)
    lin = lin.mul(sizes[d]).add_(indices.select(0, d));
  return lin.contiguous();
}

// _coalesce: each position once, in row-major order, its values the sum of
// the duplicates'. On the card: the linear positions sorted (stable, so the
// duplicates keep their order), unique_consecutive's runs, the first index
// column of each run, and the values index_add-ed into their run in the
// sorted order -- the order in which the CPU's loop adds them.
at::Tensor coalesce_sparse(const at::Tensor& self) {
  int64_t nnz = self._nnz();
  if (nnz < 2) {
    at::Tensor out = at::native::clone_sparse(self);
    out._coalesced_(true);
    return out;
  }
  at::Tensor indices = self._indices();
  at::Tensor values = self._values();
  at::Tensor lin = linear_index(indices, self.sizes());
  auto [sorted, perm] = at::sort(lin, /*stable=*/true, 0, false);
  auto [uniq, run, counts] = at::unique_consecutive(sorted, /*return_inverse=*/true,
                                                    /*return_counts=*/true, std::nullopt);
  int64_t n = uniq.size(0);
  at::Tensor starts = counts.cumsum(0).sub_(counts);
  at::Tensor new_indices = indices.index_select(1, perm.index_select(0, starts));
  auto vsizes = values.sizes().vec();
  vsizes[0] = n;
  at::Tensor new_values = at::zeros(vsizes, values.options())
                              .index_add_(0, run, values.index_select(0, perm));
  return at::native::new_with_dims_and_tensor_sparse_symint(
      self.sparse_dim(), self.dense_dim(), self.sym_sizes(), new_indices, new_values,
      values.scalar_type(), at::kSparse, values.device(), std::nullopt,
      /*is_coalesced=*/true);
}

// A dense neuron tensor as a sparse COO tensor of @sparse_dim sparse dims:
// its nonzero positions (a slice of the dense dims counts if any of its
// elements is nonzero) in nonzero()'s row-major order, so coalesced.
at::Tensor dense_to_sparse_coo(const at::Tensor& self, int64_t sparse_dim) {
  int64_t dims = self.dim();
  TORCH_CHECK(sparse_dim > 0 || dims == 0, "neuron: to_sparse: sparse_dim must be > 0");
  TORCH_CHECK(sparse_dim <= dims, "neuron: to_sparse: sparse_dim must be less than or "
              "equal to the number of dimensions (", dims, "), got ", sparse_dim);
  TORCH_CHECK_NOT_IMPLEMENTED(dims > 0, "neuron: to_sparse of a 0-dim tensor (layout "
                              "torch.sparse_coo) has no neuron kernel");
  at::Tensor mask = self.ne(0);
  if (sparse_dim < dims)
    mask = mask.flatten(sparse_dim).any(-1);
  at::Tensor nz = mask.nonzero().t().contiguous();
  c10::List<std::optional<at::Tensor>> ix;
  for (int64_t d = 0; d < sparse_dim; d++)
    ix.push_back(nz.select(0, d));
  at::Tensor values = self.index(ix).contiguous();
  return at::native::new_with_dims_and_tensor_sparse_symint(
      sparse_dim, dims - sparse_dim, self.sym_sizes(), nz, values, self.scalar_type(),
      at::kSparse, self.device(), std::nullopt, /*is_coalesced=*/true);
}

at::Tensor to_sparse_dim(const at::Tensor& self, int64_t sparse_dim) {
  return dense_to_sparse_coo(self, sparse_dim);
}

at::Tensor to_sparse(const at::Tensor& self, std::optional<at::Layout> layout,
                     at::OptionalIntArrayRef blocksize, std::optional<int64_t> dense_dim) {
  at::Layout l = layout.value_or(at::kSparse);
  if (l == at::kSparseCsr && !blocksize)
    return self._to_sparse_csr(dense_dim);  // SparseCsrTensor.cpp
  TORCH_CHECK_NOT_IMPLEMENTED(l == at::kSparse && !blocksize, "neuron: to_sparse to "
                              "layout ", l, " has no neuron kernel (only torch.sparse_coo "
                              "and torch.sparse_csr)");
  return dense_to_sparse_coo(self, self.dim() - dense_dim.value_or(0));
}

// to_sparse of a sparse COO tensor: itself (ATen's checks).
at::Tensor sparse_to_sparse_dim(const at::Tensor& self, int64_t sparse_dim) {
  return at::native::sparse_coo_to_sparse(self, sparse_dim);
}

at::Tensor sparse_to_sparse(const at::Tensor& self, std::optional<at::Layout> layout,
                            at::OptionalIntArrayRef blocksize,
                            std::optional<int64_t> dense_dim) {
  return at::native::sparse_coo_to_sparse(self, layout, blocksize, dense_dim);
}

// The values of sparse @self at the positions @indices (0 where it has
// none; the sum of its duplicates): @self coalesced, its sorted linear
// positions searched (searchsorted) for each of @indices'.
at::Tensor sparse_at(const at::Tensor& self, const at::Tensor& indices) {
  TORCH_CHECK_NOT_IMPLEMENTED(self.sparse_dim() == indices.size(0), "neuron: sparse_mask "
                              "of sparse COO tensors (layout torch.sparse_coo) with "
                              "different sparse dims has no neuron kernel");
  at::Tensor c = self.coalesce();
  auto vsizes = c._values().sizes().vec();
  vsizes[0] = indices.size(1);
  int64_t nnz = c._nnz();
  if (nnz == 0 || indices.size(1) == 0)
    return at::zeros(vsizes, c._values().options());
  at::Tensor have = linear_index(c._indices(), self.sizes());
  at::Tensor want = linear_index(indices, self.sizes());
  at::Tensor pos = at::searchsorted(have, want).clamp_max_(nnz - 1);
  at::Tensor found = have.index_select(0, pos).eq(want);
  for (int64_t d = 1; d < static_cast<int64_t>(vsizes.size()); d++)
    found = found.unsqueeze(-1);
  return at::where(found, c._values().index_select(0, pos),
                   at::zeros({}, c._values().options())).contiguous();
}

// sparse_mask: a dense (or sparse) tensor's elements at a sparse tensor's
// positions (PyTorch's gradient of a sparse operand), gathered by index on
// the card; the mask's indices, and its coalesced flag.
at::Tensor sparse_mask(const at::Tensor& self, const at::Tensor& mask) {
  TORCH_CHECK(mask.sizes() == self.sizes(), "sparse_mask(): operands have incompatible "
              "sizes; self has size ", self.sizes(), " but mask has size ", mask.sizes());
  at::Tensor indices = mask._indices();
  at::Tensor values;
  if (self.is_sparse()) {
    values = sparse_at(self, indices);
  } else {
    c10::List<std::optional<at::Tensor>> ix;
    for (int64_t d = 0; d < mask.sparse_dim(); d++)
      ix.push_back(indices.select(0, d));
    values = self.index(ix).contiguous();
  }
  return at::native::new_with_dims_and_tensor_sparse_symint(
      mask.sparse_dim(), mask.dense_dim(), mask.sym_sizes(), indices.clone(), values,
      self.scalar_type(), at::kSparse, self.device(), std::nullopt, mask.is_coalesced());
}

// What no kernel takes: an error naming the operator and the layout, where
// an operator without a dense kernel would run on the CPU (Fallback.cpp).
void sparse_unsupported(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "neuron: operator ", op.schema().operator_name(),
                              " has no neuron kernel for sparse COO tensors (layout "
                              "torch.sparse_coo); docs/sparse.md lists what runs on the "
                              "card. Convert with .to_dense() first, or move the tensor "
                              "to the CPU with .cpu().");
}

// The compressed layouts (CSR, CSC, BSR, BSC): what SparseCsrTensor.cpp has
// no kernel for (every operator of CSC, BSR and BSC tensors but the
// products, and the conversions of a dense neuron tensor to them) fails
// naming itself.
void compressed_unsupported(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "neuron: operator ", op.schema().operator_name(),
                              " has no neuron kernel for compressed sparse tensors (layouts "
                              "torch.sparse_csr, sparse_csc, sparse_bsr, sparse_bsc); on "
                              "neuron sparse COO tensors and some operators of CSR matrices "
                              "run, see docs/sparse.md");
}

} // namespace
} // namespace torch_neuron

TORCH_LIBRARY_IMPL(aten, SparsePrivateUse1, m) {
  m.impl("_sparse_coo_tensor_with_dims_and_tensors",
         TORCH_FN(at::native::new_with_dims_and_tensor_sparse_symint));
  m.impl("_sparse_coo_tensor_with_dims", TORCH_FN(at::native::new_with_dims_sparse));
  m.impl("empty.memory_format", TORCH_FN(at::native::empty_sparse_symint));
  m.impl("empty_like", TORCH_FN(at::native::empty_like_sparse_coo));
  m.impl("clone", TORCH_FN(at::native::clone_sparse));
  m.impl("zero_", TORCH_FN(at::native::zero_sparse_));
  m.impl("copy_", TORCH_FN(at::native::copy_sparse_));
  m.impl("_indices", TORCH_FN(at::native::_indices_sparse));
  m.impl("_values", TORCH_FN(at::native::_values_sparse));
  m.impl("indices", TORCH_FN(at::native::indices_sparse));
  m.impl("values", TORCH_FN(at::native::values_sparse));
  m.impl("_nnz", TORCH_FN(at::native::_nnz_sparse));
  m.impl("sparse_dim", TORCH_FN(at::native::sparse_dim_sparse));
  m.impl("dense_dim", TORCH_FN(at::native::dense_dim_sparse));
  m.impl("is_coalesced", TORCH_FN(at::native::is_coalesced_sparse));
  m.impl("_coalesced_", TORCH_FN(at::native::_coalesced_sparse_));
  m.impl("sparse_resize_", TORCH_FN(at::native::sparse_resize_));
  m.impl("sparse_resize_and_clear_", TORCH_FN(at::native::sparse_resize_and_clear_));
  m.impl("_coalesce", torch_neuron::coalesce_sparse);
  m.impl("_to_sparse.sparse_dim", torch_neuron::sparse_to_sparse_dim);
  m.impl("_to_sparse", torch_neuron::sparse_to_sparse);
  m.impl("sparse_mask", torch_neuron::sparse_mask);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_to_sparse.sparse_dim", torch_neuron::to_sparse_dim);
  m.impl("_to_sparse", torch_neuron::to_sparse);
  for (const char* op : {"_to_sparse_csc", "_to_sparse_bsr", "_to_sparse_bsc"})
    m.impl(op, torch::CppFunction::makeFromBoxedFunction<
                   &torch_neuron::compressed_unsupported>());
}

TORCH_LIBRARY_IMPL(_, SparsePrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&torch_neuron::sparse_unsupported>());
}

TORCH_LIBRARY_IMPL(_, SparseCsrPrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&torch_neuron::compressed_unsupported>());
}

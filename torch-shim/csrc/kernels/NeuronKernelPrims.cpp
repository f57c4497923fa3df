// SPDX-License-Identifier: MIT
// The primitives of the kernel language (torch_neuron/kernels/): each
// torch.ops.neuron.k_* operator encodes the card instruction(s) of one
// libneuron call on the given views, on the current stream of their device
// -- which is the kernel's trace stream, capturing, while a kernel is
// traced. Each returns the number of instructions the stream's capture
// holds after it (-1 when the stream does not capture), so that the
// language maps every captured instruction to the Python line that made
// it. Shapes, dtypes and bounds are checked by the language before the
// call, with the kernel's source line in the message; libneuron checks
// them again (a refusal here is a c10::Error naming the libneuron call).
//
// isa_table(family) lists an elementwise family of the instruction table
// (isa/neuron_isa.h's X-macros) as "name:KIND" in subop order: the
// language's functions are generated from it, so a function added to the
// table is a function of the language.
#include <torch/library.h>

#include <optional>

#include "../aten/NeuronOps.h"

namespace torch_neuron {
namespace {

int64_t captured(nrn_stream* s) {
  unsigned int n = 0;
  return nrn_stream_capture_count(s, &n) == 0 ? static_cast<int64_t>(n) : -1;
}

nrn_stream* stream_of(const at::Tensor& out) {
  TORCH_CHECK(is_neuron(out), "neuron: a kernel primitive's operands are neuron tensors");
  return stream_for(out);
}

void same_device(const at::Tensor& out, const at::Tensor& t) {
  TORCH_CHECK(is_neuron(t) && t.device() == out.device(), "neuron: a kernel primitive's "
              "operands are on one card (", out.device(), "), got one on ", t.device());
}

int64_t k_fill(const at::Tensor& out, double v) {
  nrn_stream* s = stream_of(out);
  nrn_tensor_desc o = desc(out);
  NEURON_OP(nrn_op_fill(s, &o, v));
  return captured(s);
}

int64_t k_copy(const at::Tensor& out, const at::Tensor& x) {
  nrn_stream* s = stream_of(out);
  same_device(out, x);
  nrn_tensor_desc o = desc(out), a = desc(x);
  NEURON_OP(nrn_op_copy(s, &o, &a));
  return captured(s);
}

int64_t k_unary(const at::Tensor& out, const at::Tensor& x, int64_t fn, double p, double q) {
  TORCH_CHECK(fn >= 0 && fn < NISA_NUM_UNARY, "neuron: no unary function ", fn);
  nrn_stream* s = stream_of(out);
  same_device(out, x);
  nrn_tensor_desc o = desc(out), a = desc(x);
  NEURON_OP(nrn_op_unary_param(s, static_cast<nisa_unary>(fn), &o, &a, p, q));
  return captured(s);
}

int64_t k_binary(const at::Tensor& out, const at::Tensor& x, const at::Tensor& y, int64_t op,
                 double alpha) {
  TORCH_CHECK(op >= 0 && op < NISA_NUM_BINARY, "neuron: no binary operator ", op);
  nrn_stream* s = stream_of(out);
  same_device(out, x);
  same_device(out, y);
  nrn_tensor_desc o = desc(out), a = desc(x), b = desc(y);
  NEURON_OP(nrn_op_binary(s, static_cast<nisa_binary>(op), &o, &a, &b, alpha));
  return captured(s);
}

int64_t k_binary_scalar(const at::Tensor& out, const at::Tensor& x, double v, int64_t op,
                        double alpha, bool reverse) {
  TORCH_CHECK(op >= 0 && op < NISA_NUM_BINARY, "neuron: no binary operator ", op);
  nrn_stream* s = stream_of(out);
  same_device(out, x);
  nrn_tensor_desc o = desc(out), a = desc(x);
  NEURON_OP(nrn_op_binary_scalar(s, static_cast<nisa_binary>(op), &o, &a, v, alpha,
                                 reverse ? 1 : 0));
  return captured(s);
}

int64_t k_compare(const at::Tensor& out, const at::Tensor& x, const at::Tensor& y,
                  int64_t cmp) {
  TORCH_CHECK(cmp >= 0 && cmp < NISA_NUM_COMPARE, "neuron: no comparison ", cmp);
  nrn_stream* s = stream_of(out);
  same_device(out, x);
  same_device(out, y);
  nrn_tensor_desc o = desc(out), a = desc(x), b = desc(y);
  NEURON_OP(nrn_op_compare(s, static_cast<nisa_compare>(cmp), &o, &a, &b));
  return captured(s);
}

int64_t k_compare_scalar(const at::Tensor& out, const at::Tensor& x, double v, int64_t cmp) {
  TORCH_CHECK(cmp >= 0 && cmp < NISA_NUM_COMPARE, "neuron: no comparison ", cmp);
  nrn_stream* s = stream_of(out);
  same_device(out, x);
  nrn_tensor_desc o = desc(out), a = desc(x);
  NEURON_OP(nrn_op_compare_scalar(s, static_cast<nisa_compare>(cmp), &o, &a, v));
  return captured(s);
}

int64_t k_where(const at::Tensor& out, const at::Tensor& c, const at::Tensor& x,
                const at::Tensor& y) {
  nrn_stream* s = stream_of(out);
  same_device(out, c);
  same_device(out, x);
  same_device(out, y);
  nrn_tensor_desc o = desc(out), dc = desc(c), a = desc(x), b = desc(y);
  NEURON_OP(nrn_op_where(s, &o, &dc, &a, &b));
  return captured(s);
}

int64_t k_reduce(const at::Tensor& out, const at::Tensor& x, int64_t red, int64_t axis) {
  TORCH_CHECK(red >= 0 && red < NISA_NUM_REDUCE, "neuron: no reduction ", red);
  nrn_stream* s = stream_of(out);
  same_device(out, x);
  nrn_tensor_desc o = desc(out), a = desc(x);
  NEURON_OP(nrn_op_reduce(s, static_cast<nisa_reduce>(red), &o, &a, static_cast<int>(axis)));
  return captured(s);
}

int64_t k_softmax(const at::Tensor& out, const at::Tensor& x, int64_t variant, int64_t axis) {
  TORCH_CHECK(variant >= 0 && variant < NISA_NUM_SOFTMAX, "neuron: no softmax variant ",
              variant);
  nrn_stream* s = stream_of(out);
  same_device(out, x);
  nrn_tensor_desc o = desc(out), a = desc(x);
  NEURON_OP(nrn_op_softmax(s, static_cast<nisa_softmax>(variant), &o, &a,
                           static_cast<int>(axis)));
  return captured(s);
}

int64_t k_scan(const at::Tensor& out, const std::optional<at::Tensor>& indices,
               const at::Tensor& x, int64_t op, int64_t axis) {
  TORCH_CHECK(op >= 0 && op < NISA_NUM_SCAN, "neuron: no scan ", op);
  nrn_stream* s = stream_of(out);
  same_device(out, x);
  nrn_tensor_desc o = desc(out), a = desc(x), i{};
  if (indices) {
    same_device(out, *indices);
    i = desc(*indices);
  }
  NEURON_OP(nrn_op_scan(s, static_cast<nisa_scan>(op), &o, indices ? &i : nullptr, &a,
                        static_cast<int>(axis)));
  return captured(s);
}

int64_t k_sort(const at::Tensor& out, const std::optional<at::Tensor>& indices,
               const at::Tensor& x, int64_t axis, bool descending) {
  nrn_stream* s = stream_of(out);
  same_device(out, x);
  nrn_tensor_desc o = desc(out), a = desc(x), i{};
  if (indices) {
    same_device(out, *indices);
    i = desc(*indices);
  }
  NEURON_OP(nrn_op_sort(s, &o, indices ? &i : nullptr, &a, static_cast<int>(axis),
                        descending ? 1 : 0));
  return captured(s);
}

int64_t k_matmul(const at::Tensor& out, const at::Tensor& x, const at::Tensor& y,
                 const std::optional<at::Tensor>& bias, bool accumulate) {
  nrn_stream* s = stream_of(out);
  same_device(out, x);
  same_device(out, y);
  nrn_tensor_desc o = desc(out), a = desc(x), b = desc(y), c{};
  if (bias) {
    same_device(out, *bias);
    c = desc(*bias);
  }
  NEURON_OP(nrn_op_matmul(s, &o, &a, &b, bias ? &c : nullptr, accumulate ? 1 : 0));
  return captured(s);
}

int64_t k_gather(const at::Tensor& out, const at::Tensor& src, const at::Tensor& index,
                 int64_t mode, int64_t axis) {
  TORCH_CHECK(mode >= 0 && mode < NISA_NUM_IDX, "neuron: no index form ", mode);
  nrn_stream* s = stream_of(out);
  same_device(out, src);
  same_device(out, index);
  nrn_tensor_desc o = desc(out), a = desc(src), i = desc(index);
  NEURON_OP(nrn_op_gather(s, static_cast<nisa_index_mode>(mode), &o, &a, &i,
                          static_cast<int>(axis)));
  return captured(s);
}

int64_t k_scatter(const at::Tensor& out, const at::Tensor& src, const at::Tensor& index,
                  int64_t red, int64_t mode, int64_t axis) {
  TORCH_CHECK(mode >= 0 && mode < NISA_NUM_IDX, "neuron: no index form ", mode);
  TORCH_CHECK(red >= 0 && red < NISA_NUM_SCATTER, "neuron: no scatter reduction ", red);
  nrn_stream* s = stream_of(out);
  same_device(out, src);
  same_device(out, index);
  nrn_tensor_desc o = desc(out), a = desc(src), i = desc(index);
  NEURON_OP(nrn_op_scatter(s, static_cast<nisa_scatter>(red),
                           static_cast<nisa_index_mode>(mode), &o, &a, &i,
                           static_cast<int>(axis)));
  return captured(s);
}

int64_t k_iota(const at::Tensor& out, double start, double step) {
  nrn_stream* s = stream_of(out);
  nrn_tensor_desc o = desc(out);
  NEURON_OP(nrn_op_iota(s, &o, start, step));
  return captured(s);
}

int64_t k_timestamp(const at::Tensor& out) {
  TORCH_CHECK(out.scalar_type() == at::kLong && out.numel() == 1, "neuron: a timestamp is "
              "one int64");
  nrn_stream* s = stream_of(out);
  nrn_tensor_desc o = desc(out);
  NEURON_OP(nrn_op_timestamp(s, o.buf, o.offset));
  return captured(s);
}

#define KIND_NAME_(NAME, name, kind, ...) #name ":" #kind,

std::vector<std::string> isa_table(const std::string& family) {
  static const char* const unary[] = {NISA_UNARY_OPS(KIND_NAME_)};
  static const char* const binary[] = {NISA_BINARY_OPS(KIND_NAME_)};
  static const char* const compare[] = {NISA_COMPARE_OPS(KIND_NAME_)};
  static_assert(sizeof(unary) / sizeof(unary[0]) == NISA_NUM_UNARY, "unary table");
  static_assert(sizeof(binary) / sizeof(binary[0]) == NISA_NUM_BINARY, "binary table");
  static_assert(sizeof(compare) / sizeof(compare[0]) == NISA_NUM_COMPARE, "compare table");
  if (family == "unary")
    return {std::begin(unary), std::end(unary)};
  if (family == "binary")
    return {std::begin(binary), std::end(binary)};
  if (family == "compare")
    return {std::begin(compare), std::end(compare)};
  TORCH_CHECK(false, "neuron: isa_table: no family '", family, "' (unary, binary, compare)");
}

// The most instructions one compiled kernel of the language may hold.
int64_t kernel_max_insns() {
  return NISA_MAX_INSNS;
}

}  // namespace
}  // namespace torch_neuron

TORCH_LIBRARY_FRAGMENT(neuron, m) {
  using namespace torch_neuron;
  m.def("k_fill(Tensor(a!) out, float v) -> int", &k_fill);
  m.def("k_copy(Tensor(a!) out, Tensor x) -> int", &k_copy);
  m.def("k_unary(Tensor(a!) out, Tensor x, int fn, float p, float q) -> int", &k_unary);
  m.def("k_binary(Tensor(a!) out, Tensor x, Tensor y, int op, float alpha) -> int", &k_binary);
  m.def("k_binary_scalar(Tensor(a!) out, Tensor x, float v, int op, float alpha, "
        "bool reverse) -> int", &k_binary_scalar);
  m.def("k_compare(Tensor(a!) out, Tensor x, Tensor y, int cmp) -> int", &k_compare);
  m.def("k_compare_scalar(Tensor(a!) out, Tensor x, float v, int cmp) -> int",
        &k_compare_scalar);
  m.def("k_where(Tensor(a!) out, Tensor c, Tensor x, Tensor y) -> int", &k_where);
  m.def("k_reduce(Tensor(a!) out, Tensor x, int red, int axis) -> int", &k_reduce);
  m.def("k_softmax(Tensor(a!) out, Tensor x, int variant, int axis) -> int", &k_softmax);
  m.def("k_scan(Tensor(a!) out, Tensor(b!)? indices, Tensor x, int op, int axis) -> int",
        &k_scan);
  m.def("k_sort(Tensor(a!) out, Tensor(b!)? indices, Tensor x, int axis, bool descending) "
        "-> int", &k_sort);
  m.def("k_matmul(Tensor(a!) out, Tensor x, Tensor y, Tensor? bias, bool accumulate) -> int",
        &k_matmul);
  m.def("k_gather(Tensor(a!) out, Tensor src, Tensor index, int mode, int axis) -> int",
        &k_gather);
  m.def("k_scatter(Tensor(a!) out, Tensor src, Tensor index, int red, int mode, int axis) "
        "-> int", &k_scatter);
  m.def("k_iota(Tensor(a!) out, float start, float step) -> int", &k_iota);
  m.def("k_timestamp(Tensor(a!) out) -> int", &k_timestamp);
  m.def("isa_table(str family) -> str[]", &isa_table);
  m.def("kernel_max_insns() -> int", &kernel_max_insns);
}

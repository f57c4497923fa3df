// SPDX-License-Identifier: MIT
// What the operator files share: tensors as libneuron descriptors, the
// stream to issue on, dtype mapping, and the allocation of results.
#pragma once

#include <ATen/ATen.h>
#include <torch/library.h>

#include "../NeuronHelpers.h"

namespace torch_neuron {

// Runs operator @name.@overload on the CPU through the fallback, as loudly
// as an operator without a neuron kernel (warned, counted, an error under
// TORCH_NEURON_FALLBACK=error), the message saying @why ("cannot ..."): for
// the inputs a kernel cannot give the CPU's result for. @stack holds the
// arguments and receives the results.
void run_on_cpu(const char* name, const char* overload, torch::jit::Stack* stack,
                const char* why);

inline bool is_neuron(const at::Tensor& t) {
  return t.device().type() == c10::DeviceType::PrivateUse1;
}

// A CPU 0-dim tensor next to neuron tensors is a scalar (as in `x * 2`).
inline bool is_cpu_scalar(const at::Tensor& t) {
  return t.device().is_cpu() && t.dim() == 0;
}

// The card's element types as PyTorch's ScalarTypes: X(ScalarType, NISA
// type), every type of NISA_DTYPES (isa/neuron_isa.h) once.
#define NEURON_SCALAR_TYPES(X)                                                \
  X(Float, F32) X(BFloat16, BF16) X(Int, I32) X(Long, I64) X(Bool, BOOL)      \
  X(Half, F16) X(Byte, U8) X(Char, I8) X(Short, I16) X(Double, F64)        \
  X(ComplexFloat, C64)
#define NEURON_COUNT_(t, n) +1
static_assert(0 NEURON_SCALAR_TYPES(NEURON_COUNT_) == NISA_NUM_DTYPES,
              "NEURON_SCALAR_TYPES: each card type once");
#undef NEURON_COUNT_

// Whether @t is an element type of the card (docs/hardware.md, "Element types").
inline bool supported_dtype(at::ScalarType t) {
  switch (t) {
#define NEURON_CASE_(t, n) case at::ScalarType::t:
    NEURON_SCALAR_TYPES(NEURON_CASE_)
#undef NEURON_CASE_
      return true;
    default:
      return false;
  }
}

// The card's floating types: float32, bfloat16, float16, float64.
inline bool card_float(at::ScalarType t) {
  switch (t) {
#define NEURON_CASE_(t, n) case at::ScalarType::t: return nisa_dtype_is_float(NISA_##n);
    NEURON_SCALAR_TYPES(NEURON_CASE_)
#undef NEURON_CASE_
    default:
      return false;
  }
}

// The type a composed operator computes the floating operand of type @t
// in: float64 for float64, float32 for the narrower floating types (as
// PyTorch's opmath type). The one home of the rule that no operator
// computes narrower than asked.
inline at::ScalarType acc_dtype(at::ScalarType t) {
  return t == at::kDouble ? at::kDouble : at::kFloat;
}

// The card's element types by PyTorch's names, for messages:
// "the card's types: float32, bfloat16, ..." (with @floating_only, the
// floating ones), from the table above.
inline std::string card_dtype_names(bool floating_only = false) {
  std::string s = floating_only ? "the card's floating types: " : "the card's types: ";
  bool first = true;
#define NEURON_NAME_(t, n)                                                    \
  if (!floating_only || card_float(at::ScalarType::t)) {                      \
    s += (first ? "" : ", ") + c10::getDtypeNames(at::ScalarType::t).first;   \
    first = false;                                                            \
  }
  NEURON_SCALAR_TYPES(NEURON_NAME_)
#undef NEURON_NAME_
  return s;
}

inline nisa_dtype to_nrn(at::ScalarType t) {
  switch (t) {
#define NEURON_CASE_(t, n) case at::ScalarType::t: return NISA_##n;
    NEURON_SCALAR_TYPES(NEURON_CASE_)
#undef NEURON_CASE_
    default: {
      std::string op = current_op_name();
      TORCH_CHECK(false, "neuron: ", op.empty() ? "" : op + ": ", "dtype ", t,
                  " is not supported on the card (", card_dtype_names(), ")");
    }
  }
}

// The descriptor of a neuron tensor (any strides).
inline nrn_tensor_desc desc(const at::Tensor& t) {
  TORCH_CHECK(is_neuron(t), "neuron: expected a tensor on device neuron, got "
              "one on ", t.device(), " (move it with .to('neuron'))");
  TORCH_CHECK(t.dim() <= NRN_TENSOR_MAX_DIMS, "neuron: tensors of more than ",
              NRN_TENSOR_MAX_DIMS, " dimensions are not supported");
  nrn_tensor_desc d{};
  DeviceSpan span = storage_span(t.storage());
  d.buf = span.buf;
  d.offset = span.offset + static_cast<uint64_t>(t.storage_offset()) * t.itemsize();
  d.dtype = to_nrn(t.scalar_type());
  d.ndim = static_cast<unsigned>(t.dim());
  for (int64_t i = 0; i < t.dim(); i++) {
    d.shape[i] = t.size(i);
    d.strides[i] = t.stride(i);
  }
  return d;
}

// The stream to issue work on @t on: the current stream of its device.
inline nrn_stream* stream_for(const at::Tensor& t) {
  return device_stream(t.device().index());
}

// Operations read and write many tensors: they must share the device.
inline void check_device(const at::Tensor& a, const at::Tensor& b) {
  TORCH_CHECK(!is_neuron(b) || b.device() == a.device(), "neuron: expected "
              "all tensors on ", a.device(), ", found one on ", b.device());
  TORCH_CHECK(is_neuron(b) || is_cpu_scalar(b), "Expected all tensors to be on "
              "the same device, but found at least two devices, ", a.device(),
              " and ", b.device(), "!");
}

inline at::Tensor empty_neuron(at::IntArrayRef sizes, at::ScalarType dtype,
                               const at::Device& dev) {
  return at::empty(sizes, at::TensorOptions().dtype(dtype).device(dev));
}

// Resize an out= tensor to @sizes (the usual out= contract).
inline void resize_out(const at::Tensor& out, at::IntArrayRef sizes) {
  if (out.sizes() != sizes)
    out.resize_(sizes);
}

// The out= form of a composed operator: @value, computed, copied into @out
// (resized to it).
inline at::Tensor& into(at::Tensor& out, const at::Tensor& value) {
  resize_out(out, value.sizes());
  return out.copy_(value);
}

}  // namespace torch_neuron

#define NEURON_OP(expr) NEURON_CHECK(expr)

namespace torch_neuron {

// An instruction's operand: a neuron tensor, or a descriptor computed
// arithmetically (view_desc, NeuronDesc.h).
struct Operand {
  nrn_tensor_desc d;
  Operand(const at::Tensor& t) : d(desc(t)) {}  // NOLINT: implicit by design
  Operand(const nrn_tensor_desc& x) : d(x) {}   // NOLINT
};

// The card's instructions, issued on the current stream of one device: the
// shim's one wrapper of a single instruction (an operator's semantics --
// type promotion, scalars, complex operands -- are the *_into helpers' of
// NeuronElementwise.h, built on libneuron's calls the same way).
struct Card {
  nrn_stream* s;
  explicit Card(const at::Tensor& like) : s(stream_for(like)) {}

  // o = a, converted to o's type; any strides.
  void copy(const Operand& o, const Operand& a) const {
    NEURON_OP(nrn_op_copy(s, &o.d, &a.d));
  }
  // o = a op (alpha * b), b broadcasting.
  void bin(nisa_binary op, const Operand& o, const Operand& a, const Operand& b,
           double alpha = 1.0) const {
    NEURON_OP(nrn_op_binary(s, op, &o.d, &a.d, &b.d, alpha));
  }
  // o = a op scalar (as ATen's a op Python-number: computed in double,
  // rounded once to o's type).
  void scalar(nisa_binary op, const Operand& o, const Operand& a, double v) const {
    NEURON_OP(nrn_op_binary_scalar(s, op, &o.d, &a.d, v, 1.0, 0));
  }
  void unary(nisa_unary fn, const Operand& o, const Operand& a) const {
    NEURON_OP(nrn_op_unary(s, fn, &o.d, &a.d));
  }
  void reduce(nisa_reduce red, const Operand& o, const Operand& a, int axis) const {
    NEURON_OP(nrn_op_reduce(s, red, &o.d, &a.d, axis));
  }
  void fill(const Operand& o, double v) const { NEURON_OP(nrn_op_fill(s, &o.d, v)); }
  // o = a @ b (+ bias) (+ o when @accumulate), batch dims broadcast.
  void matmul(const Operand& o, const Operand& a, const Operand& b, const Operand* bias,
              bool accumulate) const {
    NEURON_OP(nrn_op_matmul(s, &o.d, &a.d, &b.d, bias ? &bias->d : nullptr,
                            accumulate ? 1 : 0));
  }
};

}  // namespace torch_neuron

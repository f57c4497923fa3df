// SPDX-License-Identifier: MIT
// The factory operators: empty and empty_strided, where every neuron tensor
// is born, and the factories written by the card: arange, linspace and
// logspace are ramps of IOTA (dst[i] = start + i * step, docs/hardware.md
// "IOTA"), eye two fills. The host only works out sizes and the ramps' two
// scalars.
#include <ATen/EmptyTensor.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>

#include <cmath>

#include "NeuronElementwise.h"

namespace torch_neuron {
namespace {

// ---- empty, empty_strided ----
// With the views (TensorShape.cpp), resize_ and set_ (Resize.cpp) and the
// copies (Copy.cpp), the operators every PrivateUse1 backend must provide;
// every other operator has a kernel on the card or falls back to the CPU
// (Fallback.cpp).

constexpr auto kKey = c10::DispatchKey::PrivateUse1;

// The card stores complex64 (pairs of float32) and no other complex type:
// refuse the others where every neuron tensor is born, so that an operator
// whose CPU fallback returns one fails with this message rather than later.
void check_storable(at::ScalarType dtype) {
  TORCH_CHECK(!c10::isComplexType(dtype) || dtype == at::kComplexFloat,
              "neuron: dtype ", dtype, " is not supported on the card (of the "
              "complex types, the card stores complex64 only; convert with "
              ".to(torch.complex64) or keep it on the CPU)");
  // Operators refusing it (or, for complex64, refusing the functions the
  // card does not compute on complex numbers) say who they are (Dtype.cpp).
  if (!supported_dtype(dtype) || c10::isComplexType(dtype))
    track_op_names();
}

at::Tensor neuron_empty(c10::IntArrayRef size,
                        std::optional<at::ScalarType> dtype,
                        std::optional<at::Layout> layout,
                        std::optional<at::Device> device,
                        std::optional<bool> pin_memory,
                        std::optional<at::MemoryFormat> memory_format) {
  const c10::DeviceGuard guard(device.value_or(
      c10::Device(c10::DeviceType::PrivateUse1, current_device())));
  check_storable(c10::dtype_or_default(dtype));
  return at::detail::empty_generic(size, c10::GetAllocator(c10::DeviceType::PrivateUse1),
                                   c10::DispatchKeySet(kKey),
                                   c10::dtype_or_default(dtype), memory_format);
}

at::Tensor neuron_empty_strided(c10::IntArrayRef size, c10::IntArrayRef stride,
                                std::optional<at::ScalarType> dtype,
                                std::optional<at::Layout> layout,
                                std::optional<at::Device> device,
                                std::optional<bool> pin_memory) {
  const c10::DeviceGuard guard(device.value_or(
      c10::Device(c10::DeviceType::PrivateUse1, current_device())));
  check_storable(c10::dtype_or_default(dtype));
  return at::detail::empty_strided_generic(size, stride,
                                           c10::GetAllocator(c10::DeviceType::PrivateUse1),
                                           c10::DispatchKeySet(kKey),
                                           c10::dtype_or_default(dtype));
}

void iota_into(const at::Tensor& out, double start, double step) {
  if (out.numel() == 0)
    return;
  TORCH_CHECK(out.dim() <= NISA_MAX_DIMS, "neuron: a ramp of more than ",
              NISA_MAX_DIMS, " dims");
  nrn_tensor_desc d = desc(out);
  NEURON_OP(nrn_op_iota(stream_for(out), &d, start, step));
}

at::Tensor& arange_out(const at::Scalar& start, const at::Scalar& end,
                       const at::Scalar& step, at::Tensor& out) {
  double xs = start.toDouble(), xe = end.toDouble(), st = step.toDouble();
  TORCH_CHECK(st != 0, "step must be nonzero");
  TORCH_CHECK(std::isfinite(xs) && std::isfinite(xe), "unsupported range: ",
              xs, " -> ", xe);
  TORCH_CHECK((st > 0 && xe >= xs) || (st < 0 && xe <= xs),
              "upper bound and larger bound inconsistent with step sign");
  double size_d;
  if (out.scalar_type() == at::kLong) {
    int64_t s = start.toLong(), e = end.toLong(), k = step.toLong();
    int64_t sgn = (k > 0) - (k < 0);
    size_d = static_cast<double>((e - s + k - sgn) / k);   // ceil((e - s) / k)
  } else {
    size_d = std::ceil((xe - xs) / st);
  }
  TORCH_CHECK(size_d >= 0 && size_d <= static_cast<double>(INT64_MAX),
              "invalid size, possible overflow?");
  int64_t size = static_cast<int64_t>(size_d);
  if (out.numel() != size)
    resize_out(out, {size});
  if (at::isIntegralType(out.scalar_type(), /*includeBool=*/false))
    iota_into(out, static_cast<double>(start.toLong()),
              static_cast<double>(step.toLong()));
  else
    iota_into(out, xs, st);
  return out;
}

// PyTorch's two-sided ramp: the first half from start, the second half
// back from end, so that both ends are exact.
void two_sided_ramp(const at::Tensor& out, double start, double end, int64_t steps) {
  if (steps == 1) {
    nrn_tensor_desc d = desc(out);
    NEURON_OP(nrn_op_fill(stream_for(out), &d, start));
    return;
  }
  double step = (end - start) / static_cast<double>(steps - 1);
  int64_t half = steps / 2;
  iota_into(out.narrow(0, 0, half), start, step);
  iota_into(out.narrow(0, half, steps - half),
            end - step * static_cast<double>(steps - 1 - half), step);
}

at::Tensor& linspace_out(const at::Scalar& start, const at::Scalar& end,
                         int64_t steps, at::Tensor& out) {
  TORCH_CHECK(steps >= 0, "number of steps must be non-negative");
  if (out.numel() != steps)
    resize_out(out, {steps});
  if (steps)
    two_sided_ramp(out, start.toDouble(), end.toDouble(), steps);
  return out;
}

// base ** (the linspace of the exponents, in float32 as the CPU's float32,
// in float64 for float64)
at::Tensor& logspace_out(const at::Scalar& start, const at::Scalar& end,
                         int64_t steps, double base, at::Tensor& out) {
  TORCH_CHECK(steps >= 0, "number of steps must be non-negative");
  TORCH_CHECK(at::isFloatingType(out.scalar_type()), "neuron: logspace into '",
              out.scalar_type(), "' is not supported on the card (floating "
              "types only)");
  if (out.numel() != steps)
    resize_out(out, {steps});
  if (!steps)
    return out;
  at::Tensor e = empty_neuron({steps}, acc_dtype(out.scalar_type()), out.device());
  two_sided_ramp(e, start.toDouble(), end.toDouble(), steps);
  nrn_tensor_desc o = desc(out), de = desc(e);
  NEURON_OP(nrn_op_binary_scalar(stream_for(out), NISA_BIN_POW, &o, &de, base, 1.0, 1));
  return out;
}

// eye: zeros, then ones on the diagonal (a strided view of it).
at::Tensor& eye_m_out(int64_t n, int64_t m, at::Tensor& out) {
  TORCH_CHECK(n >= 0, "n must be greater or equal to 0, got ", n);
  TORCH_CHECK(m >= 0, "m must be greater or equal to 0, got ", m);
  resize_out(out, {n, m});
  if (out.numel() == 0)
    return out;
  nrn_stream* s = stream_for(out);
  at::Tensor diag = out.diagonal();
  nrn_tensor_desc o = desc(out), dd = desc(diag);
  NEURON_OP(nrn_op_fill(s, &o, 0.0));
  NEURON_OP(nrn_op_fill(s, &dd, 1.0));
  return out;
}
at::Tensor& eye_out(int64_t n, at::Tensor& out) {
  return eye_m_out(n, n, out);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("empty.memory_format", neuron_empty);
  m.impl("empty_strided", neuron_empty_strided);
  m.impl("arange.start_out", arange_out);
  m.impl("linspace.out", linspace_out);
  m.impl("logspace.out", logspace_out);
  m.impl("eye.out", eye_out);
  m.impl("eye.m_out", eye_m_out);
}

}  // namespace torch_neuron

// SPDX-License-Identifier: MIT
// Copies between the CPU and the card, and between cards (_copy_from).
//
// Pageable CPU memory goes through libneuron's staging ring: an upload has
// taken the data when it returns, a download waits for it. Pinned memory
// (NeuronHostAllocator.cpp) of the same card is one DMA job between the host
// block and the device buffer: with non_blocking=True it is only queued on the
// current stream (the caller synchronises before touching the CPU tensor, as
// with CUDA), otherwise waited for. The bytes move as they are: other dtypes,
// strides and broadcasts are converted on the card (or by the CPU for dtypes
// the card lacks) around the transfer.
#include <ATen/core/Tensor.h>
#include <ATen/ops/_conj.h>
#include <ATen/ops/_neg_view.h>
#include <ATen/ops/empty.h>
#include <torch/library.h>

#include "../runtime/NeuronStreamCapture.h"
#include "../runtime/NeuronHostAllocator.h"
#include "../runtime/NeuronProfiler.h"
#include "NeuronOps.h"

namespace torch_neuron {
namespace {

// Bytes from the start of t's buffer to t's element 0.
DeviceSpan tensor_span(const at::Tensor& t) {
  DeviceSpan s = storage_span(t.storage());
  s.offset += static_cast<uint64_t>(t.storage_offset()) * t.itemsize();
  return s;
}

// dst = src on the card: any strides, any supported dtypes.
void device_copy(const at::Tensor& dst, const at::Tensor& src) {
  nrn_tensor_desc d = desc(dst), s = desc(src);
  NEURON_CHECK(nrn_op_copy(stream_for(dst), &d, &s));
}

at::Tensor contiguous_on_card(const at::Tensor& t) {
  if (t.is_contiguous())
    return t;
  at::Tensor c = at::empty(t.sizes(), t.options());
  device_copy(c, t);
  return c;
}

// The contiguous CPU tensor @host's bytes into the contiguous neuron tensor
// @dev (same dtype and size).
void upload(const at::Tensor& dev, const at::Tensor& host, bool non_blocking) {
  if (C10_UNLIKELY(profiler::active()))
    profiler::note_copy(dev.device().index(), profiler::Work::CopyH2D,
                        host.nbytes());
  nrn_stream* s = stream_for(dev);
  DeviceSpan to = tensor_span(dev);
  if (auto from = pinned_span(host, dev.device().index())) {
    NEURON_CHECK(nrn_stream_copy_buffer(s, to.buf, to.offset, from->buf,
                                        from->offset, host.nbytes()));
    pinned_used(host, s, dev.device().index(), !non_blocking);
    return;
  }
  TORCH_CHECK(!in_graph_capture(dev.device().index()) || !nrn_stream_is_capturing(s),
              "neuron: NeuronGraph: a copy from the CPU while capturing: the graph "
              "would keep the bytes the tensor holds now and copy those at every "
              "replay; copy new data into a static input before replay(), outside "
              "the capture");
  NEURON_CHECK(nrn_stream_copy_h2d(s, to.buf, to.offset, host.const_data_ptr(),
                                   host.nbytes()));
}

// The contiguous neuron tensor @dev's bytes into the contiguous CPU tensor
// @host (same dtype and size).
void download(const at::Tensor& host, const at::Tensor& dev, bool non_blocking) {
  if (C10_UNLIKELY(profiler::active()))
    profiler::note_copy(dev.device().index(), profiler::Work::CopyD2H,
                        host.nbytes());
  nrn_stream* s = stream_for(dev);
  DeviceSpan from = tensor_span(dev);
  if (auto to = pinned_span(host, dev.device().index())) {
    NEURON_CHECK(nrn_stream_copy_buffer(s, to->buf, to->offset, from.buf,
                                        from.offset, host.nbytes()));
    pinned_used(host, s, dev.device().index(), !non_blocking);
    return;
  }
  NEURON_CHECK(nrn_stream_copy_d2h(s, host.mutable_data_ptr(), from.buf,
                                   from.offset, host.nbytes()));
}

// A contiguous CPU tensor with @t's contents (same dtype), read now.
at::Tensor read_to_cpu(const at::Tensor& t) {
  at::Tensor host = at::empty(t.sizes(), t.options().device(at::kCPU));
  download(host, contiguous_on_card(t), false);
  return host;
}

// Write the CPU tensor @src (dst's shape) into the neuron view @dst.
void write_from_cpu(const at::Tensor& dst, const at::Tensor& src,
                    bool non_blocking) {
  at::Tensor c = src.contiguous();
  if (dst.is_contiguous() && c.scalar_type() == dst.scalar_type()) {
    upload(dst, c, non_blocking);
    return;
  }
  // Upload contiguous, then let the card scatter and convert.
  at::Tensor tmp = at::empty(c.sizes(), dst.options().dtype(c.scalar_type()));
  upload(tmp, c, non_blocking);
  device_copy(dst, tmp);
}

// Card to CPU.
void copy_to_cpu(const at::Tensor& dst, const at::Tensor& src, bool non_blocking) {
  if (dst.is_contiguous() && dst.scalar_type() == src.scalar_type() &&
      dst.sizes() == src.sizes() && pinned_span(dst, src.device().index())) {
    // Straight into the pinned tensor (non-contiguous sources gathered on
    // the card first, in stream order).
    download(dst, contiguous_on_card(src), non_blocking);
    return;
  }
  // The card's dtype, then the CPU converts and broadcasts.
  dst.copy_(read_to_cpu(src));
}

// @t without its math bits (a conjugate or negative view shows the
// conjugate or negation of what it holds): the elements as stored.
at::Tensor stored(const at::Tensor& t) {
  at::Tensor r = t;
  if (r.is_conj())
    r = at::_conj(r);
  if (r.is_neg())
    r = at::_neg_view(r);
  return r;
}

at::Tensor neuron_copy_from(const at::Tensor& self, const at::Tensor& dst,
                            bool non_blocking) {
  if (self.numel() == 0)
    return dst;
  // As the CPU: to bool, a complex value is true when either part is
  // nonzero, which discards nothing.
  if (self.is_complex() && !dst.is_complex() && dst.scalar_type() != at::kBool) {
    TORCH_WARN_ONCE("Casting complex values to real discards the imaginary part");
  }
  // _copy_from gets views with their math bits: copy what is stored, then
  // conjugate or negate dst's elements where the two views differ.
  if (self.is_conj() || self.is_neg() || dst.is_conj() || dst.is_neg()) {
    at::Tensor to = stored(dst);
    neuron_copy_from(stored(self), to, non_blocking);
    if (self.is_conj() != dst.is_conj())
      to.conj_physical_();
    if (self.is_neg() != dst.is_neg())
      to.neg_();
    return dst;
  }
  if (dst.is_cpu()) {
    copy_to_cpu(dst, self, non_blocking);
  } else if (self.is_cpu()) {
    at::Tensor src = self;
    if (!supported_dtype(src.scalar_type()) || src.sizes() != dst.sizes())
      src = self.to(dst.scalar_type()).expand(dst.sizes());
    write_from_cpu(dst, src, non_blocking);
  } else if (self.device() != dst.device()) {
    // Card to card: through the CPU, synchronously (device-to-device DMA
    // comes later).
    write_from_cpu(dst, read_to_cpu(self), false);
  } else {
    device_copy(dst, self.expand(dst.sizes()));
  }
  return dst;
}

at::Tensor neuron_copy_from_and_resize(const at::Tensor& self,
                                       const at::Tensor& dst) {
  dst.resize_(self.sizes());
  return neuron_copy_from(self, dst, false);
}

// item(): one element, read back (this synchronises the stream).
at::Scalar local_scalar_dense(const at::Tensor& self) {
  return read_to_cpu(self).item();
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_copy_from", neuron_copy_from);
  m.impl("_copy_from_and_resize", neuron_copy_from_and_resize);
  m.impl("_local_scalar_dense", local_scalar_dense);
}

// The math bits pass through to neuron_copy_from(), which resolves them (the
// fallbacks of these keys would materialize a conjugate view by a clone,
// itself a copy: a recursion without end).
TORCH_LIBRARY_IMPL(aten, Conjugate, m) {
  m.impl("_copy_from", torch::CppFunction::makeFallthrough());
  m.impl("_copy_from_and_resize", torch::CppFunction::makeFallthrough());
}
TORCH_LIBRARY_IMPL(aten, Negative, m) {
  m.impl("_copy_from", torch::CppFunction::makeFallthrough());
  m.impl("_copy_from_and_resize", torch::CppFunction::makeFallthrough());
}

}  // namespace
}  // namespace torch_neuron

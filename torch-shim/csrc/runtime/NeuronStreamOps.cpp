// SPDX-License-Identifier: MIT
// torch.ops.neuron helpers of torch.neuron's streams (torch_neuron/streams.py).
// A stream crosses to Python as its id on a device index; torch.Stream
// rebuilds it from (id, index, device type).
#include <ATen/core/Tensor.h>
#include <torch/library.h>

#include "NeuronAllocator.h"
#include "NeuronStream.h"

namespace torch_neuron {
namespace {

c10::Stream stream_at(int64_t index, int64_t id) {
  return c10::Stream(c10::Stream::UNSAFE,
                     c10::Device(c10::DeviceType::PrivateUse1, checked_index(index)),
                     id);
}

int64_t current_stream_id(int64_t index) {
  return current_stream(checked_index(index)).id();
}

int64_t default_stream_id(int64_t index) {
  return default_stream(checked_index(index)).id();
}

// Makes the stream current on its device (for this thread); checked first.
void set_stream(int64_t index, int64_t id) {
  c10::Stream s = stream_at(index, id);
  nrn_stream_of(s);
  exchange_stream(s);
}

int64_t priority(int64_t index, int64_t id) {
  return stream_priority(stream_at(index, id));
}

int64_t device_type() {
  return static_cast<int64_t>(c10::DeviceType::PrivateUse1);
}

// tensor.record_stream(s): the caching allocator keeps the block from
// other streams until the work issued to @s before the free is done.
void neuron_record_stream(at::Tensor& self, c10::Stream s) {
  record_stream(self.storage().data_ptr(), s);
}

} // namespace
} // namespace torch_neuron

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("record_stream", torch_neuron::neuron_record_stream);
}

TORCH_LIBRARY_FRAGMENT(neuron, m) {
  m.def("current_stream(int index) -> int", &torch_neuron::current_stream_id);
  m.def("default_stream(int index) -> int", &torch_neuron::default_stream_id);
  m.def("set_stream(int index, int id) -> ()", &torch_neuron::set_stream);
  m.def("stream_priority(int index, int id) -> int", &torch_neuron::priority);
  m.def("device_type() -> int", &torch_neuron::device_type);
}

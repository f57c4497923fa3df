// SPDX-License-Identifier: MIT
// One capture of a device's current stream (NeuronStreamCapture.cpp), the
// one both ways of replaying work use: torch.neuron.NeuronGraph
// (NeuronGraph.cpp) and compiled mode's kernels (compile/NeuronGraphSet.cpp).
#pragma once

#include <c10/core/Device.h>

#include <string>

#include "NeuronStream.h"

namespace torch_neuron {

// While open, libneuron records the work issued on the stream instead of
// running it, and every allocation on the device gets memory of its own
// (hold_frees): the instructions of a temporary freed during the capture
// never land in a later tensor.
class StreamCapture {
 public:
  // @who names the user in errors ("NeuronGraph", "compiled graph").
  // @refuse_pageable: while open, copies from pageable host memory to the
  // device are refused (in_graph_capture()): a replay in place would copy
  // the bytes of the capture's time again, not what the host holds then.
  StreamCapture(const char* who, bool refuse_pageable)
      : who_(who), refuse_pageable_(refuse_pageable) {}
  ~StreamCapture();
  StreamCapture(const StreamCapture&) = delete;
  StreamCapture& operator=(const StreamCapture&) = delete;

  // Starts capturing the current stream of device @index with libneuron's
  // NRN_CAPTURE_* @flags; raises "neuron: <who>: <busy>" if that stream
  // captures already.
  void begin(c10::DeviceIndex index, unsigned int flags, const std::string& busy);
  bool open() const noexcept { return stream_ != nullptr; }
  c10::DeviceIndex device() const noexcept { return device_; }
  // Stops capturing: 0 and the capture in *@out (the caller's), or a
  // negative errno and nothing. The frees stay held until release().
  int end(nrn_capture** out);
  // Lets the memory freed since begin() go (after end(); once).
  void release();
  // Ends an open capture keeping nothing: "" or why the capture failed.
  std::string abort();

 private:
  const char* who_;
  bool refuse_pageable_;
  nrn_stream* stream_ = nullptr;
  c10::DeviceIndex device_ = 0;
  bool holding_ = false;
};

// What a capture's error @err (a negative errno) means, in PyTorch's terms,
// with libneuron's name for it in parentheses.
std::string capture_error(int err);

// True while a capture that refuses pageable copies is open on device
// @index (Copy.cpp asks).
bool in_graph_capture(c10::DeviceIndex index) noexcept;

}  // namespace torch_neuron

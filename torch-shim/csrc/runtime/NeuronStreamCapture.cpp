// SPDX-License-Identifier: MIT
// StreamCapture: begin, end and abort of one capture of a device's current
// stream, with the allocator's holds and the errors' meanings in one place.
#include "NeuronStreamCapture.h"

#include <array>
#include <atomic>

#include "NeuronAllocator.h"

namespace torch_neuron {
namespace {

std::array<std::atomic<int>, kMaxDevices> g_refusing{};

}  // namespace

StreamCapture::~StreamCapture() {
  try {
    abort();
  } catch (...) {  // a destructor raises nothing
  }
}

void StreamCapture::begin(c10::DeviceIndex index, unsigned int flags,
                          const std::string& busy) {
  TORCH_CHECK(!stream_ && !holding_, "neuron: ", who_, ": a capture is already open");
  nrn_stream* s = device_stream(index);
  int err = nrn_stream_begin_capture_flags(s, flags);
  TORCH_CHECK(err != -EBUSY, "neuron: ", who_, ": ", busy);
  NEURON_CHECK(err);
  hold_frees(index, true);
  holding_ = true;
  if (refuse_pageable_)
    g_refusing[index]++;
  stream_ = s;
  device_ = index;
}

int StreamCapture::end(nrn_capture** out) {
  TORCH_CHECK(stream_, "neuron: ", who_, ": no capture is open");
  *out = nullptr;
  nrn_capture* c = nullptr;
  int err = nrn_stream_end_capture(stream_, &c);
  stream_ = nullptr;
  if (refuse_pageable_)
    g_refusing[device_]--;
  if (err < 0) {
    nrn_capture_destroy(c);
    return err;
  }
  *out = c;
  return 0;
}

void StreamCapture::release() {
  if (!holding_)
    return;
  holding_ = false;
  hold_frees(device_, false);
}

std::string StreamCapture::abort() {
  if (!stream_) {
    release();
    return "";
  }
  nrn_capture* c = nullptr;
  int err = end(&c);
  nrn_capture_destroy(c);
  release();
  return err < 0 ? capture_error(err) : "";
}

std::string capture_error(int err) {
  const char* meaning;
  switch (err) {
  case -EBUSY:
    meaning = "an operation needed results the capture has not computed (a "
              "host read such as .item(), print(), a copy to the CPU, an "
              "operator without a neuron kernel), a synchronisation, an event, "
              "or a compiled graph capturing itself inside the capture (run it "
              "once before capturing)";
    break;
  case -ENOTSUP:
    meaning = "random numbers (a replay would repeat one draw), a timestamp, or a "
              "copy between the card and pinned host memory";
    break;
  default:
    meaning = "the capture could not record an operation";
  }
  return std::string(meaning) + " (" + nrn_strerror(err) + ")";
}

bool in_graph_capture(c10::DeviceIndex index) noexcept {
  return index >= 0 && index < kMaxDevices && g_refusing[index].load() > 0;
}

}  // namespace torch_neuron

// SPDX-License-Identifier: MIT
// DeviceGuard for "neuron": the current device is per thread; there is one
// stream per device (every operation is synchronous for now).
#include <c10/core/impl/DeviceGuardImplInterface.h>

#include "../NeuronHelpers.h"

namespace torch_neuron {
namespace {

struct NeuronGuardImpl final : c10::impl::DeviceGuardImplInterface {
  static constexpr c10::DeviceType kType = c10::DeviceType::PrivateUse1;

  c10::DeviceType type() const override { return kType; }

  c10::Device exchangeDevice(c10::Device d) const override {
    c10::Device old = getDevice();
    if (d.index() != old.index())
      set_device(d.index());
    return old;
  }

  c10::Device getDevice() const override {
    return c10::Device(kType, current_device());
  }

  void setDevice(c10::Device d) const override { set_device(d.index()); }

  // Must not throw: an invalid index is simply not applied.
  void uncheckedSetDevice(c10::Device d) const noexcept override {
    if (d.index() >= 0 && d.index() < device_count())
      set_device(d.index());
  }

  c10::Stream getStream(c10::Device d) const noexcept override {
    return c10::Stream(c10::Stream::DEFAULT, d);
  }

  c10::Stream exchangeStream(c10::Stream s) const noexcept override {
    return c10::Stream(c10::Stream::DEFAULT, s.device());
  }

  // Must not throw (the c10 contract): 0 when there is no card.
  c10::DeviceIndex deviceCount() const noexcept override {
    return device_count();
  }
};

C10_REGISTER_GUARD_IMPL(PrivateUse1, NeuronGuardImpl);

} // namespace
} // namespace torch_neuron

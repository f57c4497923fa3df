// SPDX-License-Identifier: MIT
// DeviceGuard for "neuron": the current device and the current stream of
// each device are per thread (NeuronStream.h); events are libneuron events.
#include <c10/core/impl/DeviceGuardImplInterface.h>

#include "../NeuronHelpers.h"
#include "NeuronAllocator.h"
#include "NeuronStream.h"

namespace torch_neuron {
namespace {

// What a c10::Event holds: created at its first record, on that card.
struct Event {
  nrn_event* ev;
  c10::DeviceIndex device;
  bool timing;
};

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

  static c10::DeviceIndex index_of(c10::Device d) {
    return d.has_index() ? d.index() : current_device();
  }

  c10::Stream getStream(c10::Device d) const noexcept override {
    return current_stream(index_of(d));
  }

  c10::Stream getDefaultStream(c10::Device d) const override {
    return default_stream(index_of(d));
  }

  c10::Stream getStreamFromGlobalPool(c10::Device d,
                                      bool high_priority) const override {
    return pool_stream(index_of(d), high_priority ? -1 : 0);
  }

  // Streams are never destroyed: a "new" stream is the pool's next one.
  c10::Stream getNewStream(c10::Device d, int priority) const override {
    return pool_stream(index_of(d), priority);
  }

  c10::Stream exchangeStream(c10::Stream s) const noexcept override {
    return exchange_stream(s);
  }

  // Must not throw (the c10 contract): 0 when there is no card.
  c10::DeviceIndex deviceCount() const noexcept override {
    return device_count();
  }

  bool queryStream(const c10::Stream& s) const override {
    // Whether the stream's last point has passed, through a fresh event.
    nrn_stream* ns = nrn_stream_of(s);
    nrn_event* ev = nullptr;
    NEURON_CHECK(nrn_event_create(device(s.device_index()), &ev));
    int err = nrn_event_record(ev, ns);
    if (!err)
      err = nrn_event_query(ev);
    nrn_event_destroy(ev);
    if (err == -EBUSY)
      return false;
    NEURON_CHECK(err);
    return true;
  }

  void synchronizeStream(const c10::Stream& s) const override {
    NEURON_CHECK(nrn_stream_sync(nrn_stream_of(s)));
  }

  void synchronizeDevice(c10::DeviceIndex index) const override {
    synchronize_device(index < 0 ? current_device() : index);
  }

  void record(void** event, const c10::Stream& s, c10::DeviceIndex index,
              c10::EventFlag flag) const override {
    TORCH_CHECK(index == -1 || index == s.device_index(), "neuron: an event "
                "of neuron:", static_cast<int>(index), " cannot be recorded on "
                "a stream of neuron:", static_cast<int>(s.device_index()));
    nrn_stream* ns = nrn_stream_of(s);
    auto* e = static_cast<Event*>(*event);
    if (e) {
      NEURON_CHECK(nrn_event_record(e->ev, ns));
      return;
    }
    // PyTorch's note on event flags: BACKEND_DEFAULT asks for timing.
    TORCH_CHECK(flag != c10::EventFlag::INVALID, "neuron: invalid event flag");
    bool timing = flag == c10::EventFlag::BACKEND_DEFAULT;
    nrn_event* ev = nullptr;
    NEURON_CHECK(nrn_event_create_flags(device(s.device_index()),
                                        timing ? NRN_EVENT_TIMING : 0, &ev));
    int err = nrn_event_record(ev, ns);
    if (err < 0) {
      nrn_event_destroy(ev);
      NEURON_CHECK(err);
    }
    *event = new Event{ev, s.device_index(), timing};
  }

  void block(void* event, const c10::Stream& s) const override {
    auto* e = static_cast<Event*>(event);
    if (!e)
      return;  // never recorded: nothing to wait for
    if (e->device == s.device_index()) {
      NEURON_CHECK(nrn_stream_wait_event(nrn_stream_of(s), e->ev));
    } else {
      // Another card's event: the host waits for it, so work issued to @s
      // from now on starts after it.
      NEURON_CHECK(nrn_event_wait(e->ev, -1));
    }
  }

  bool queryEvent(void* event) const override {
    auto* e = static_cast<Event*>(event);
    if (!e)
      return true;
    int err = nrn_event_query(e->ev);
    if (err == -EBUSY)
      return false;
    NEURON_CHECK(err);
    return true;
  }

  void synchronizeEvent(void* event) const override {
    if (auto* e = static_cast<Event*>(event))
      NEURON_CHECK(nrn_event_wait(e->ev, -1));
  }

  void destroyEvent(void* event, c10::DeviceIndex) const noexcept override {
    if (auto* e = static_cast<Event*>(event)) {
      nrn_event_destroy(e->ev);
      delete e;
    }
  }

  // Milliseconds of card time from @start to @end; waits for both.
  double elapsedTime(void* start, void* end, c10::DeviceIndex) const override {
    auto* a = static_cast<Event*>(start);
    auto* b = static_cast<Event*>(end);
    TORCH_CHECK(a && b, "neuron: both events must be recorded before "
                "calculating elapsed time");
    TORCH_CHECK(a->timing && b->timing, "neuron: elapsed_time needs events "
                "created with enable_timing=True");
    NEURON_CHECK(nrn_event_wait(a->ev, -1));
    NEURON_CHECK(nrn_event_wait(b->ev, -1));
    int64_t ns = 0;
    NEURON_CHECK(nrn_event_elapsed_ns(a->ev, b->ev, &ns));
    return static_cast<double>(ns) / 1e6;
  }

  void recordDataPtrOnStream(const c10::DataPtr& data,
                             const c10::Stream& s) const override {
    record_stream(data, s);
  }
};

C10_REGISTER_GUARD_IMPL(PrivateUse1, NeuronGuardImpl);

} // namespace
} // namespace torch_neuron

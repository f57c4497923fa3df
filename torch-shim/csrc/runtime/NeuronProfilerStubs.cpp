// SPDX-License-Identifier: MIT
// PyTorch's legacy device hooks for profilers (ProfilerStubs), registered
// for PrivateUse1 with registerPrivateUse1Methods().
//
// torch.autograd.profiler.profile(use_device="neuron") with its default
// use_kineto=False runs PyTorch's KINETO_PRIVATEUSE1_FALLBACK state, which
// calls record() as every operator starts and ends and elapsed() between
// the two. Without these hooks each call fails ("PrivateUse1 used in
// profiler but not enabled"). record() records a timing event on the
// current stream of the current card; elapsed() is the card time between
// two, in microseconds (what KinetoEvent::privateuse1ElapsedUs() returns,
// truncated). (PyTorch 2.6's Python parser reads that time only for a
// backend still named "privateuseone", so the tables of such a profile show
// no device time: docs/profiling.md. torch.profiler and use_kineto=True
// take the Kineto path of NeuronKineto.cpp.)
#include <c10/util/ApproximateClock.h>
#include <torch/csrc/profiler/stubs/base.h>

#include "NeuronStream.h"

namespace torch_neuron {
namespace {

using torch::profiler::impl::ProfilerVoidEventStub;

class Stubs final : public torch::profiler::impl::ProfilerStubs {
 public:
  void record(c10::DeviceIndex* device, ProfilerVoidEventStub* event,
              int64_t* cpu_ns) const override {
    c10::DeviceIndex index = current_device();
    if (device)
      *device = index;
    nrn_stream* s = nrn_stream_of(current_stream(index));
    event->reset();
    // A capturing stream runs nothing (and would refuse the record):
    // no event, and elapsed() says so.
    if (nrn_stream_is_capturing(s) != 1) {
      nrn_event* ev = nullptr;
      NEURON_CHECK(nrn_event_create_flags(torch_neuron::device(index),
                                          NRN_EVENT_TIMING, &ev));
      *event = ProfilerVoidEventStub(ev, [](void* p) {
        nrn_event_destroy(static_cast<nrn_event*>(p));
      });
      NEURON_CHECK(nrn_event_record(ev, s));
    }
    if (cpu_ns)
      *cpu_ns = c10::getTime();
  }

  float elapsed(const ProfilerVoidEventStub* start,
                const ProfilerVoidEventStub* end) const override {
    TORCH_CHECK(start && end && *start && *end, "neuron: profiler: no card "
                "time for an operator issued while its stream was capturing");
    auto* a = static_cast<nrn_event*>(start->get());
    auto* b = static_cast<nrn_event*>(end->get());
    NEURON_CHECK(nrn_event_wait(b, -1));
    int64_t ns = 0;
    NEURON_CHECK(nrn_event_elapsed_ns(a, b, &ns));
    return static_cast<float>(ns / 1e3);  // microseconds
  }

  // Annotations for external range tools (NVTX-like): the card has none.
  void mark(const char* name) const override {}
  void rangePush(const char* name) const override {}
  void rangePop() const override {}

  bool enabled() const override { return true; }

  void onEachDevice(std::function<void(int)> op) const override {
    for (c10::DeviceIndex i = 0; i < device_count(); i++)
      op(i);
  }

  void synchronize() const override {
    for (c10::DeviceIndex i = 0; i < device_count(); i++)
      synchronize_device(i);
  }
};

struct Registration {
  Registration() {
    static Stubs stubs;
    torch::profiler::impl::registerPrivateUse1Methods(&stubs);
  }
};
const Registration g_registration;

}  // namespace
}  // namespace torch_neuron

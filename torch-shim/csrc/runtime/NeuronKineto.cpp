// SPDX-License-Identifier: MIT
// The card in torch.profiler: a Kineto child profiler ("neuron").
//
// PyTorch 2.6 turns ProfilerActivity.PrivateUse1 (or use_device="neuron")
// into Kineto's device activity types (CONCURRENT_KERNEL, GPU_MEMCPY, ...)
// and runs Kineto's activity profiler, which configures every child
// profiler registered with libkineto::api().registerProfilerFactory(). Ours
// starts a session of the collector (NeuronProfiler.cpp) only when device
// activities are asked for, receives the correlation id of every operator
// as it starts and ends (pushCorrelationId / popCorrelationId), and at the
// end hands Kineto one activity per interval of card work: a kernel
// (CONCURRENT_KERNEL) on the lane of the NeuronCore that ran it, or a copy
// (GPU_MEMCPY) on the lane of the DMA queue, with card timestamps, linked to
// the operator that issued it. PyTorch maps those activity types to
// DeviceType.PrivateUse1 because a PrivateUse1 backend is registered, and
// adds their time to the linked operator: key_averages() has device time
// per operator, and the Chrome trace has a process per card with one thread
// (lane) per NeuronCore and DMA queue.
#include <libkineto.h>
#include <torch/library.h>

#include <map>
#include <set>

#include "NeuronProfiler.h"

namespace torch_neuron::profiler {
namespace {

using libkineto::ActivityType;

const std::set<ActivityType>& device_types() {
  static const std::set<ActivityType> types{ActivityType::CONCURRENT_KERNEL,
                                            ActivityType::GPU_MEMCPY};
  return types;
}

// The span our activities point to (Kineto's copies keep the pointer).
const libkineto::TraceSpan& trace_span() {
  static const libkineto::TraceSpan span(0, 0, "neuron");
  return span;
}

std::string lane_name(uint32_t lane) {
  return lane >= kDmaLane ? "DMA queue " + std::to_string(lane - kDmaLane)
                          : "NeuronCore " + std::to_string(lane);
}

const char* copy_name(Work kind) {
  return kind == Work::CopyH2D ? "Memcpy HtoD (neuron)"
                               : "Memcpy DtoH (neuron)";
}

class Session final : public libkineto::IActivityProfilerSession {
 public:
  void start() override {
    begin_session();
    status_ = libkineto::TraceStatus::RECORDING;
  }

  void stop() override {
    try {
      records_ = end_session(&errors_);
    } catch (const std::exception& e) {
      errors_.push_back(std::string("neuron profiler: ") + e.what());
    }
    status_ = errors_.empty() ? libkineto::TraceStatus::READY
                              : libkineto::TraceStatus::WARNING;
    // Kineto keeps a session's errors to itself: say them (a Python
    // warning), so that a profile missing card work is never silent.
    for (const std::string& e : errors_)
      TORCH_WARN(e);
  }

  std::vector<std::string> errors() override { return errors_; }

  void processTrace(libkineto::ActivityLogger& logger) override {
    emit(logger, nullptr);
  }

  void processTrace(libkineto::ActivityLogger& logger,
                    libkineto::getLinkedActivityCallback linked,
                    int64_t /*start*/, int64_t /*end*/) override {
    emit(logger, &linked);
  }

  std::unique_ptr<libkineto::DeviceInfo> getDeviceInfo() override {
    if (records_.empty())
      return nullptr;
    c10::DeviceIndex first = records_.front().device;
    for (const auto& r : records_)
      first = std::min(first, r.device);
    std::string name = "neuron:" + std::to_string(first);
    return std::make_unique<libkineto::DeviceInfo>(
        first, first, name, "NeuronCores and DMA queues");
  }

  std::vector<libkineto::ResourceInfo> getResourceInfos() override {
    std::set<std::pair<int64_t, uint32_t>> lanes;
    for (const auto& r : records_)
      lanes.insert({r.device, r.lane});
    std::vector<libkineto::ResourceInfo> out;
    for (const auto& [dev, lane] : lanes)
      out.emplace_back(dev, lane, lane, lane_name(lane));
    return out;
  }

  std::unique_ptr<libkineto::CpuTraceBuffer> getTraceBuffer() override {
    return nullptr;  // our activities go through processTrace()
  }

  void pushCorrelationId(uint64_t id) override { push_correlation(id); }
  void popCorrelationId() override { pop_correlation(); }

 private:
  void emit(libkineto::ActivityLogger& logger,
            const libkineto::getLinkedActivityCallback* linked) {
    for (const DeviceRecord& r : records_) {
      const libkineto::ITraceActivity* op =
          linked ? (*linked)(static_cast<int32_t>(r.correlation)) : nullptr;
      bool kernel = r.kind == Work::Kernel;
      // Named after the operator, marked as the card's: key_averages()
      // keeps it apart from the operator's own (CPU) row.
      std::string name = !kernel ? copy_name(r.kind)
                         : op    ? op->name() + " (neuron)"
                                 : "kernel (neuron)";
      libkineto::GenericTraceActivity a(
          trace_span(),
          kernel ? ActivityType::CONCURRENT_KERNEL : ActivityType::GPU_MEMCPY,
          name);
      a.startTime = r.start_ns;
      a.endTime = r.end_ns;
      a.id = static_cast<int32_t>(r.correlation);
      a.device = r.device;
      a.resource = static_cast<int32_t>(r.lane);
      a.linked = op;
      a.addMetadataQuoted("device", "neuron:" + std::to_string(r.device));
      a.addMetadataQuoted("lane", lane_name(r.lane));
      if (!kernel)
        a.addMetadata("bytes", r.bytes);
      a.log(logger);  // the logger keeps a copy
    }
  }

  std::vector<DeviceRecord> records_;
  std::vector<std::string> errors_;
};

class Profiler final : public libkineto::IActivityProfiler {
 public:
  const std::string& name() const override { return name_; }

  const std::set<ActivityType>& availableActivities() const override {
    return device_types();
  }

  std::unique_ptr<libkineto::IActivityProfilerSession> configure(
      const std::set<ActivityType>& types,
      const libkineto::Config& config) override {
    for (ActivityType t : device_types())
      if (types.count(t))
        return std::make_unique<Session>();
    return nullptr;  // a CPU-only profile: the card is left alone
  }

  std::unique_ptr<libkineto::IActivityProfilerSession> configure(
      int64_t /*ts_ms*/, int64_t /*duration_ms*/,
      const std::set<ActivityType>& types,
      const libkineto::Config& config) override {
    return configure(types, config);
  }

 private:
  std::string name_ = "neuron";
};

struct Registration {
  Registration() {
    libkineto::api().registerProfilerFactory(
        [] { return std::make_unique<Profiler>(); });
  }
};
const Registration g_registration;

}  // namespace
}  // namespace torch_neuron::profiler

TORCH_LIBRARY_FRAGMENT(neuron, m) {
  m.def("profiler_timestamps() -> int",
        &torch_neuron::profiler::timestamps_issued);
}

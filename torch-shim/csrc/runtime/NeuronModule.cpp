// SPDX-License-Identifier: MIT
// torch.ops.neuron: the runtime helpers the Python package (torch.neuron)
// calls -- devices, memory statistics, synchronisation; the streams' are in
// NeuronStreamOps.cpp. The CPU fallback
// adds its own (fallback_stats...) in Fallback.cpp.
#include <torch/library.h>

#include <string>
#include <tuple>
#include <vector>

#include "../NeuronHelpers.h"
#include "NeuronAllocator.h"
#include "NeuronStream.h"

namespace torch_neuron {
namespace {

int64_t neuron_device_count() {
  return device_count();
}

// The allocator's statistics: names (PyTorch's) and values.
std::tuple<std::vector<std::string>, std::vector<int64_t>> memory_stats(int64_t index) {
  // Reading a card's statistics does not make it the current device.
  std::vector<std::string> names;
  std::vector<int64_t> values;
  for (auto& [name, value] : allocator_stats(checked_index(index))) {
    names.push_back(name);
    values.push_back(value);
  }
  return {names, values};
}

void reset_peak_memory_stats(int64_t index) {
  reset_peak_stats(checked_index(index));
}

void reset_accumulated_memory_stats(int64_t index) {
  reset_accumulated_stats(checked_index(index));
}

// Free and total bytes of the card's memory, from the driver.
std::vector<int64_t> mem_get_info(int64_t index) {
  struct nrn_device_info info;
  NEURON_CHECK(nrn_device_info(device(checked_index(index)), &info));
  return {static_cast<int64_t>(info.mem_free), static_cast<int64_t>(info.mem_size)};
}

// Every stream of the device.
void synchronize(int64_t index) {
  synchronize_device(checked_index(index));
}

void neuron_empty_cache(int64_t index) {
  synchronize(index);
  empty_cache(checked_index(index));
}

std::string device_name(int64_t index) {
  struct nrn_device_info info;
  NEURON_CHECK(nrn_device_info(device(checked_index(index)), &info));
  return "Trainium (virtual) " + std::string(info.pci_address);
}

// cores, dma queues, memory bytes, model version
std::vector<int64_t> device_properties(int64_t index) {
  struct nrn_device_info info;
  NEURON_CHECK(nrn_device_info(device(checked_index(index)), &info));
  return {info.num_cores, info.num_dma_queues, static_cast<int64_t>(info.mem_size),
          info.model_version};
}

int64_t neuron_current_device() {
  return current_device();
}

void neuron_set_device(int64_t index) {
  set_device(checked_index(index));
}

// Raises unless @self's storage is memory of a live neuron tensor (a
// tensor made from a DLPack capsule or at::from_blob may point anywhere).
void storage_check(const at::Tensor& self) {
  TORCH_CHECK(self.device().type() == c10::DeviceType::PrivateUse1,
              "neuron: storage_check of a tensor on ", self.device());
  storage_span(self.storage());
}

} // namespace
} // namespace torch_neuron

TORCH_LIBRARY(neuron, m) {
  m.def("device_count() -> int", &torch_neuron::neuron_device_count);
  m.def("memory_stats(int index) -> (str[], int[])", &torch_neuron::memory_stats);
  m.def("reset_peak_memory_stats(int index) -> ()", &torch_neuron::reset_peak_memory_stats);
  m.def("reset_accumulated_memory_stats(int index) -> ()",
        &torch_neuron::reset_accumulated_memory_stats);
  m.def("mem_get_info(int index) -> int[]", &torch_neuron::mem_get_info);
  m.def("empty_cache(int index) -> ()", &torch_neuron::neuron_empty_cache);
  m.def("synchronize(int index) -> ()", &torch_neuron::synchronize);
  m.def("device_name(int index) -> str", &torch_neuron::device_name);
  m.def("device_properties(int index) -> int[]", &torch_neuron::device_properties);
  m.def("current_device() -> int", &torch_neuron::neuron_current_device);
  m.def("set_device(int index) -> ()", &torch_neuron::neuron_set_device);
  m.def("storage_check(Tensor self) -> ()", &torch_neuron::storage_check);
}

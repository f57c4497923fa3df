// SPDX-License-Identifier: MIT
// torch.ops.neuron helpers of torch_neuron/distributed.py: a communicator
// id, a card's fabric, the backend's construction (returned inside a
// c10d ProcessGroup, the custom class Python can unbox) and its counters.
#include <torch/library.h>

#include <string>
#include <tuple>
#include <vector>

#include "NeuronProcessGroup.h"

namespace torch_neuron {
namespace {

std::vector<int64_t> comm_id_new() {
  nrn_comm_id id;
  NEURON_CHECK(nrn_comm_id_new(&id));
  return std::vector<int64_t>(id.bytes, id.bytes + sizeof(id.bytes));
}

// fabric id (0: no links), fabric rank, fabric size, links, links up (mask)
std::vector<int64_t> fabric_info(int64_t index) {
  struct nrn_device_info info;
  NEURON_CHECK(nrn_device_info(device(checked_index(index)), &info));
  return {info.fabric_id, info.fabric_rank, info.fabric_size, info.num_links,
          info.links_up};
}

c10::intrusive_ptr<c10d::ProcessGroup> make_process_group(
    int64_t dev, int64_t rank, int64_t size, std::vector<int64_t> comm_id,
    int64_t timeout_ms, int64_t node, int64_t nnodes, int64_t local_rank,
    int64_t local_size, std::optional<c10::intrusive_ptr<c10d::ProcessGroup>> leaders,
    std::optional<c10::intrusive_ptr<c10d::ProcessGroup>> world) {
  nrn_comm_id id;
  TORCH_CHECK(comm_id.size() == sizeof(id.bytes), "neuron: a communicator id has ",
              sizeof(id.bytes), " bytes");
  for (size_t i = 0; i < comm_id.size(); i++)
    id.bytes[i] = static_cast<unsigned char>(comm_id[i]);
  NodeLayout layout{static_cast<int>(node), static_cast<int>(nnodes),
                    static_cast<int>(local_rank), static_cast<int>(local_size)};
  auto cpu = [](const auto& pg) -> c10::intrusive_ptr<c10d::Backend> {
    return pg ? (*pg)->getBackend(c10::DeviceType::CPU)
              : c10::intrusive_ptr<c10d::Backend>();
  };
  auto backend = c10::make_intrusive<NeuronBackend>(
      static_cast<int>(rank), static_cast<int>(size), checked_index(dev), id, layout,
      std::chrono::milliseconds(timeout_ms), cpu(leaders), cpu(world));
  auto pg = c10::make_intrusive<c10d::ProcessGroup>(static_cast<int>(rank),
                                                    static_cast<int>(size));
  pg->setBackend(c10::DeviceType::PrivateUse1, c10d::ProcessGroup::BackendType::CUSTOM,
                 backend);
  return pg;
}

std::tuple<std::vector<std::string>, std::vector<int64_t>> distributed_stats() {
  DistStats& s = dist_stats();
  return {{"card_collectives", "card_bytes", "gloo_collectives", "gloo_bytes"},
          {s.card_collectives.load(), s.card_bytes.load(), s.gloo_collectives.load(),
           s.gloo_bytes.load()}};
}

void reset_distributed_stats() {
  DistStats& s = dist_stats();
  s.card_collectives = 0;
  s.card_bytes = 0;
  s.gloo_collectives = 0;
  s.gloo_bytes = 0;
}

}  // namespace
}  // namespace torch_neuron

TORCH_LIBRARY_FRAGMENT(neuron, m) {
  m.def("comm_id_new() -> int[]", &torch_neuron::comm_id_new);
  m.def("fabric_info(int index) -> int[]", &torch_neuron::fabric_info);
  m.def("c10d_process_group(int device, int rank, int size, int[] comm_id, "
        "int timeout_ms, int node, int nnodes, int local_rank, int local_size, "
        "__torch__.torch.classes.c10d.ProcessGroup? leaders, "
        "__torch__.torch.classes.c10d.ProcessGroup? world) -> "
        "__torch__.torch.classes.c10d.ProcessGroup",
        &torch_neuron::make_process_group);
  m.def("distributed_stats() -> (str[], int[])", &torch_neuron::distributed_stats);
  m.def("reset_distributed_stats() -> ()", &torch_neuron::reset_distributed_stats);
}

namespace {

// c10d's collectives have no autograd kernels; on a neuron tensor they
// run as kernels do, below autograd: the backend's own ATen calls (copies
// into the caller's tensors on the paths through host memory, the blocks
// of a gather) then add no autograd history and bump no version counter,
// as NCCL's writes into device memory do not; a receive into a leaf that
// requires grad (a pipeline stage's buffer) works. The basic autograd
// fallback (Fallback.cpp) only redispatches, which leaves autograd on for
// the calls the backend makes.
void below_autograd(const c10::OperatorHandle& op, c10::DispatchKeySet ks,
                    torch::jit::Stack* stack) {
  at::AutoDispatchBelowADInplaceOrView guard;
  op.redispatchBoxed(ks & c10::after_ADInplaceOrView_keyset, stack);
}

}  // namespace

TORCH_LIBRARY_IMPL(c10d, AutogradPrivateUse1, m) {
  for (const char* op : {"broadcast_", "allreduce_", "allreduce_coalesced_", "allgather_",
                         "_allgather_base_", "allgather_coalesced_",
                         "allgather_into_tensor_coalesced_", "reduce_scatter_",
                         "_reduce_scatter_base_", "reduce_scatter_tensor_coalesced_",
                         "alltoall_", "alltoall_base_", "barrier", "monitored_barrier_",
                         "send", "recv_", "recv_any_source_", "reduce_", "gather_",
                         "scatter_"})
    m.impl(op, torch::CppFunction::makeFromBoxedFunction<&below_autograd>());
}

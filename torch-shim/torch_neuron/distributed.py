# SPDX-License-Identifier: MIT
"""The torch.distributed backend "neuron" (docs/distributed.md).

Registered by the autoload (torch_neuron/__init__.py), so that
``torch.distributed.init_process_group("neuron")`` works under ``torchrun``
with no import: one rank per card, the card being ``LOCAL_RANK`` (as with
CUDA). The collectives themselves are C++ (csrc/distributed/): libneuron
communicators over the cards' links within a VM; across VMs, hierarchical
through two internal Gloo groups over the same store.

Rendezvous, in the creator below, over the group's store:
  * every rank publishes its node -- the host name (or ``TORCH_NEURON_NODE``)
    and its card's fabric id -- and reads everyone's; ranks of one node, in
    rank order, form one libneuron communicator;
  * the first rank of each node makes the communicator's id and publishes it;
  * with more than one node: a Gloo group of all ranks (host copies for the
    collectives other than all-reduce) and one of the node leaders (the
    all-reduce's middle step), both over a PrefixStore of the same store.
    One node: no Gloo at all.
"""
import datetime
import os
import socket

import torch
import torch.distributed as dist

_NAME = "neuron"


def _node_key(device):
    node = os.environ.get("TORCH_NEURON_NODE") or socket.gethostname()
    fabric = torch.ops.neuron.fabric_info(device)[0]
    return f"{node}/fabric{fabric}"


def _gloo_group(store, prefix, rank, size, timeout):
    """A Gloo backend boxed in a ProcessGroup (the custom class the C++
    creator takes); its store keys live under @prefix."""
    from torch._C._distributed_c10d import ProcessGroup, ProcessGroupGloo

    pstore = dist.PrefixStore(prefix, store)
    gloo = ProcessGroupGloo(pstore, rank, size, timeout)
    pg = ProcessGroup(pstore, rank, size)
    pg._register_backend(torch.device("cpu"), ProcessGroup.BackendType.GLOO, gloo)
    return pg


def _refuse_fsdp_over_tp():
    """FSDP2 (fully_shard) of a DTensor (tensor-parallel) parameter on the
    card fails loudly: its unsharded weights come out wrong today
    (docs/distributed.md, Limits), and a wrong answer must not be silent."""
    from torch.distributed.fsdp._fully_shard import _fsdp_param
    from torch.distributed.tensor import DTensor

    cls = _fsdp_param.FSDPParam
    if getattr(cls, "_neuron_checked", False):
        return
    init = cls.__init__

    def checked_init(self, param, module_info, mesh_info, *args, **kwargs):
        if isinstance(param, DTensor) and param.device.type == _NAME:
            raise NotImplementedError(
                f"neuron: FSDP2 over a tensor-parallel (DTensor) parameter "
                f"({module_info.param_name} of {type(module_info.module).__name__}) "
                f"is not supported: its unsharded weights come out wrong on the card "
                f"(docs/distributed.md, Limits). Use tensor parallelism with a plain "
                f"data-parallel split instead")
        init(self, param, module_info, mesh_info, *args, **kwargs)

    cls.__init__ = checked_init
    cls._neuron_checked = True


def _create(store, rank, size, timeout):
    """Backend.register_backend's creator: (store, rank, size, timeout)."""
    from torch._C._distributed_c10d import ProcessGroup

    _refuse_fsdp_over_tp()

    if not torch.neuron.is_available():
        raise RuntimeError("neuron: init_process_group(\"neuron\") needs a neuron card")
    # The card first: LOCAL_RANK, as torchrun sets it (else the rank on its node).
    local_env = os.environ.get("LOCAL_RANK")
    device = int(local_env) if local_env is not None else None
    probe = device if device is not None else 0
    key = _node_key(probe)
    store.set(f"node/{rank}", key)
    keys = [store.get(f"node/{r}").decode() for r in range(size)]
    nodes = list(dict.fromkeys(keys))
    node = nodes.index(key)
    local = [r for r in range(size) if keys[r] == key]
    local_rank = local.index(rank)
    if device is None:
        device = local_rank
    if device >= torch.neuron.device_count():
        raise RuntimeError(f"neuron: rank {rank} wants card neuron:{device} (LOCAL_RANK) "
                           f"but this VM has {torch.neuron.device_count()} card(s)")
    torch.neuron.set_device(device)
    if local_rank == 0:
        store.set(f"comm_id/{node}", bytes(torch.ops.neuron.comm_id_new()))
    comm_id = list(store.get(f"comm_id/{node}"))
    leaders = world = None
    if len(nodes) > 1:
        world = _gloo_group(store, "gloo_world/", rank, size, timeout).boxed()
        if local_rank == 0:
            leaders = _gloo_group(store, "gloo_leaders/", node, len(nodes), timeout).boxed()
    timeout_ms = int(timeout.total_seconds() * 1000) if isinstance(
        timeout, datetime.timedelta) else int(timeout)
    boxed = torch.ops.neuron.c10d_process_group(
        device, rank, size, comm_id, timeout_ms, node, len(nodes), local_rank,
        len(local), leaders, world)
    return ProcessGroup.unbox(boxed)._get_backend(torch.device(_NAME))


def stats():
    """Counters of this process's backend: card collectives issued and their
    bytes, cross-node steps through Gloo and the host bytes they moved."""
    names, values = torch.ops.neuron.distributed_stats()
    return dict(zip(names, values))


def reset_stats():
    torch.ops.neuron.reset_distributed_stats()


def _register():
    if not dist.is_available() or _NAME.upper() in dist.Backend._plugins:
        return
    dist.Backend.register_backend(_NAME, _create, devices=[_NAME])

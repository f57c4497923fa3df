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


def _refuse_unordered_mesh():
    """A "neuron" DeviceMesh whose ranks along some dimension are not in
    ascending order fails loudly. PyTorch makes each dimension's process
    group with new_group(), which sorts the ranks, while DTensor takes a
    rank's mesh coordinate for its rank in that group: in the mesh
    [[0, 1], [3, 2]], rank 3 is the first of its row but the second of its
    group, so distribute_tensor() gives it the second shard while its
    placement says the first, and FSDP2 over such a TP mesh trains on
    wrong weights (PyTorch 2.6, with any backend)."""
    from torch.distributed.device_mesh import DeviceMesh

    if getattr(DeviceMesh, "_neuron_checked", False):
        return
    init = DeviceMesh.__init__

    def checked_init(self, device_type, mesh, *args, **kwargs):
        if device_type == _NAME:
            t = mesh.detach().cpu() if isinstance(mesh, torch.Tensor) else torch.tensor(mesh)
            for d in range(t.dim()):
                rows = t.movedim(d, -1).reshape(-1, t.size(d))
                bad = [r.tolist() for r in rows if not bool((r[1:] > r[:-1]).all())]
                if bad:
                    raise ValueError(
                        f"neuron: DeviceMesh {t.tolist()}: dimension {d} lists the ranks "
                        f"{bad[0]} out of order; PyTorch's process groups sort their "
                        f"ranks, so DTensor would place shards on the wrong ranks. "
                        f"List every dimension's ranks in ascending order (on a ring of "
                        f"4 cards, a 2 x 2 mesh needs the mesh link topology: "
                        f"docs/distributed.md, Limits)")
        init(self, device_type, mesh, *args, **kwargs)

    DeviceMesh.__init__ = checked_init
    DeviceMesh._neuron_checked = True


def _register_fsdp_copies():
    """FSDP2's copy operators (fsdp::all_gather_copy_in, split_with_sizes_copy,
    chunk_cat) on the card: PyTorch registers its own device-generic
    implementations of them for CPU and CUDA only, so on a neuron tensor
    they fell back to the CPU (a copy each way per parameter group, every
    step). The same functions, registered for PrivateUse1, run ATen's
    operators on the card instead.

    The two that write FSDP2's all-gather outputs keep those tensors'
    version counters as the CPU fallback's copy-back did: the backward's
    all-gather rewrites the unsharded parameters with the values the
    forward saved (the optimizer has not stepped yet), and a version bump
    there would fail the backward ("modified by an inplace operation")."""
    from torch.distributed.fsdp._fully_shard import _fsdp_collectives as fc

    if getattr(fc, "_neuron_registered", False):
        return

    def keeping_versions(fn):
        def impl(*args, out):
            outs = out if isinstance(out, (list, tuple)) else [out]
            versions = [t._version for t in outs]
            fn(*args, out=out)
            for t, v in zip(outs, versions):
                torch._C._autograd._unsafe_set_version_counter(t, v)
        return impl

    fc.lib.impl("all_gather_copy_in", fc.all_gather_copy_in_cuda, "PrivateUse1")
    fc.lib.impl("split_with_sizes_copy", keeping_versions(fc.split_with_sizes_copy),
                "PrivateUse1")
    fc.lib.impl("chunk_cat", keeping_versions(fc.chunk_cat), "PrivateUse1")
    fc._neuron_registered = True


def _create(store, rank, size, timeout):
    """Backend.register_backend's creator: (store, rank, size, timeout)."""
    from torch._C._distributed_c10d import ProcessGroup

    _refuse_unordered_mesh()
    _register_fsdp_copies()

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

# SPDX-License-Identifier: MIT
"""torch.distributed's "nccl" is the neuron backend (torch_neuron/distributed.py).

Backend("nccl") -- what init_process_group and new_group make of their
backend argument -- is "neuron", so dist.get_backend() says "neuron";
device:backend strings ("cpu:gloo,cuda:nccl") map both halves; a
DeviceMesh of device type "cuda" is a neuron mesh. torch.distributed.
is_nccl_available() says whether "nccl" can be used: whether the neuron
backend can (PyTorch's own code keeps its answer: it guards uses of the
ProcessGroupNCCL class, which a build without CUDA does not have).
"""
import functools

import torch
import torch.distributed as dist

from ._devices import _NEURON, map_device


def _map_backend(name):
    if not isinstance(name, str):
        return name
    if ":" not in name:
        return _NEURON if name.lower() == "nccl" else name
    pairs = []
    for pair in name.split(","):
        dev, _, be = pair.partition(":")
        dev = map_device(dev.strip())
        pairs.append(f"{dev}:{_NEURON if dev == _NEURON else be}")
    return ",".join(pairs)


def install():
    if not dist.is_available():
        return
    import torch.distributed.distributed_c10d as c10d

    Backend = c10d.Backend
    orig_new = Backend.__new__

    def __new__(cls, name):
        return orig_new(cls, _map_backend(name))

    Backend.__new__ = staticmethod(__new__)
    orig_config = c10d.BackendConfig.__init__

    @functools.wraps(orig_config)
    def config_init(self, backend):
        orig_config(self, _map_backend(str(backend)))

    c10d.BackendConfig.__init__ = config_init
    is_neuron = functools.wraps(c10d.is_nccl_available)(
        lambda: torch.neuron.is_available())
    dist.is_nccl_available = is_neuron  # not c10d's own: it guards ProcessGroupNCCL
    try:
        from torch.distributed import device_mesh as dm
    except ImportError:
        return
    orig_mesh = dm.DeviceMesh.__init__

    @functools.wraps(orig_mesh)
    def mesh_init(self, device_type, *args, **kwargs):
        orig_mesh(self, map_device(device_type), *args, **kwargs)

    dm.DeviceMesh.__init__ = mesh_init

# SPDX-License-Identifier: MIT
"""Neuron tensors shared between processes (docs/multiprocessing.md).

torch.multiprocessing pickles a CUDA tensor as a handle to its memory, so
that the receiving process maps the same bytes; for every other device it
has no such path. Here a ``neuron`` tensor (or storage) put on a
multiprocessing queue, pipe or Process argument is pickled the same way:
its storage's device memory leaves as a dma-buf descriptor (sent as
shared CPU memory is, with ``multiprocessing.reduction.DupFd``), the
receiver imports it on the same card and builds a tensor of the same view
(dtype, size, stride, storage offset) over the same bytes. What may not be
shared raises in the reduction, in the sending process, naming why.

The rule that keeps the memory right (NeuronIpc.cpp): the sender keeps the
storage (its allocator cannot reuse the block) until every receiver has
freed what it received; a receiver's storage, when freed, first waits for
its card's work. The sender drops those it kept at its next send, and at
``ipc_collect()``.
"""
import os
from multiprocessing import reduction

import torch
import torch.multiprocessing.reductions as _red
from torch._namedtensor_internals import check_serializing_named_tensor


def ipc_collect() -> int:
    """Give back to the allocator the storages this process shared that no
    other process holds any more; returns how many it still keeps."""
    return int(torch.ops.neuron.ipc_collect())


def _fd_id(fd):
    st = os.fstat(fd)
    return (st.st_ino, st.st_dev)


def _share_storage(storage, tensor=None):
    """What rebuilds @storage (an UntypedStorage on neuron) in another
    process: (_rebuild_storage, args)."""
    if storage.nbytes() == 0:
        return (_rebuild_empty, (storage.device.index,))
    if tensor is None:
        tensor = torch.empty(0, dtype=torch.uint8, device=storage.device).set_(storage)
    fd, counter_fd, slot, offset, nbytes, minor = torch.ops.neuron.ipc_export(tensor)
    try:
        df, dcf = reduction.DupFd(fd), reduction.DupFd(counter_fd)
    finally:
        os.close(fd)
    return (_rebuild_storage, (df, dcf, slot, offset, nbytes, minor))


def _rebuild_empty(index):
    return torch.UntypedStorage(0, device=torch.device("neuron", index))


def _rebuild_storage(df, dcf, slot, offset, nbytes, minor):
    fd, counter_fd = df.detach(), dcf.detach()
    try:
        # The same storage received twice is one storage here too.
        key = ("neuron",) + _fd_id(fd) + (offset, nbytes)
        storage = _red.storage_from_cache(torch.UntypedStorage, key)
        if storage is not None:
            torch.ops.neuron.ipc_release(counter_fd, slot)
            return storage
        storage = torch.ops.neuron.ipc_import(fd, counter_fd, slot, offset, nbytes,
                                              minor).untyped_storage()
        _red.shared_cache[key] = _red.StorageWeakRef(storage)
        return storage
    finally:
        os.close(fd)
        os.close(counter_fd)


def _rebuild_tensor(cls, rebuild, args, dtype, size, stride, offset, requires_grad):
    storage = rebuild(*args)
    t = torch.empty((0,), dtype=dtype, device=storage.device).set_(
        storage, offset, size, stride)
    if cls is torch.nn.parameter.Parameter:
        return torch.nn.parameter.Parameter(t, requires_grad=requires_grad)
    t.requires_grad = requires_grad
    return t


def _rebuild_untyped(rebuild, args):
    return rebuild(*args)


def _reduce_tensor(tensor):
    if tensor.device.type != "neuron":
        return _red.reduce_tensor(tensor)
    if tensor.requires_grad and not tensor.is_leaf:
        raise RuntimeError(
            "Cowardly refusing to serialize non-leaf tensor which requires_grad, "
            "since autograd does not support crossing process boundaries.  "
            "If you just want to transfer the data, call detach() on the tensor "
            "before serializing (e.g., putting it on the queue).")
    if tensor.layout != torch.strided or tensor.is_nested:
        raise RuntimeError(f"neuron: cannot share a {tensor.layout} neuron tensor "
                           "with another process: only strided tensors are shared")
    check_serializing_named_tensor(tensor)
    torch.utils.hooks.warn_if_has_hooks(tensor)
    storage = tensor.untyped_storage()
    rebuild, args = _share_storage(storage, tensor if storage.nbytes() else None)
    return (_rebuild_tensor, (type(tensor), rebuild, args, tensor.dtype, tensor.size(),
                              tensor.stride(), tensor.storage_offset(),
                              tensor.requires_grad))


def _reduce_storage(storage):
    if storage.device.type != "neuron":
        return _red.reduce_storage(storage)
    return (_rebuild_untyped, _share_storage(storage))


def _install():
    """Register the reductions, over torch.multiprocessing's (which
    ``import torch`` registered before loading this backend)."""
    import torch.multiprocessing  # noqa: F401  (its init_reductions() first)

    for cls, fn in list(reduction.ForkingPickler._extra_reducers.items()):
        if fn is _red.reduce_tensor:
            reduction.register(cls, _reduce_tensor)
        elif fn is _red.reduce_storage:
            reduction.register(cls, _reduce_storage)

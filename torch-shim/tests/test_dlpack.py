# SPDX-License-Identifier: MIT
"""DLPack: a neuron tensor exported as a capsule (torch.to_dlpack) or
through the protocol (__dlpack__, __dlpack_device__) and imported again
(torch.from_dlpack) is the same memory on the same card, with no copy; a
capsule whose memory is not the card's live memory is refused, naming
DLPack."""
import ctypes

import pytest
import torch
from torch.utils.dlpack import DLDeviceType, from_dlpack, to_dlpack

N = "neuron"


def test_device_of_the_protocol():
    t = torch.arange(4.0, device=N)
    assert t.__dlpack_device__() == (DLDeviceType.kDLExtDev, t.get_device())
    assert torch.ones(2).__dlpack_device__() == (DLDeviceType.kDLCPU, 0)


@pytest.mark.parametrize("how", ["capsule", "protocol"])
def test_round_trip_shares_the_storage(how):
    base = torch.arange(24.0, device=N).view(4, 6)
    x = base[1:, ::2]  # a view: storage offset and strides of its own
    y = from_dlpack(to_dlpack(x)) if how == "capsule" else torch.from_dlpack(x)
    assert y.device == x.device and y.dtype == x.dtype
    assert y.shape == x.shape and y.stride() == x.stride()
    assert y.data_ptr() == x.data_ptr()
    assert torch.equal(y.cpu(), x.cpu())
    # The same bytes: a write through one is seen through the other.
    y.mul_(-1)
    assert torch.equal(base.cpu()[1:, ::2], -torch.arange(24.0).view(4, 6)[1:, ::2])
    x.add_(100)
    assert torch.equal(y.cpu(), x.cpu())
    # Operators take the imported tensor like any other.
    assert torch.equal((y @ y.T).cpu(), x.cpu() @ x.cpu().T)


def test_imported_tensor_outlives_the_exporter():
    x = torch.arange(1000, dtype=torch.int32, device=N)
    y = from_dlpack(to_dlpack(x))
    del x  # the capsule's deleter keeps the exporter's memory
    junk = [torch.full((1000,), -7, dtype=torch.int32, device=N) for _ in range(4)]
    assert torch.equal(y.cpu(), torch.arange(1000, dtype=torch.int32))
    del junk


def test_empty_tensor_round_trips():
    x = torch.empty(0, 3, device=N)
    y = torch.from_dlpack(x)
    assert y.device == x.device and y.shape == (0, 3)
    assert torch.equal((y + 1).cpu(), torch.empty(0, 3))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64, torch.bool])
def test_dtypes_round_trip(dtype):
    x = (torch.arange(10) % 3).to(dtype).to(N)
    y = from_dlpack(to_dlpack(x))
    assert y.dtype == dtype and torch.equal(y.cpu(), x.cpu())


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class _DLManagedTensor(ctypes.Structure):
    pass


_DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(_DLManagedTensor))
_DLManagedTensor._fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p),
                             ("deleter", _DELETER)]


def _foreign_capsule(buf, n, device_id):
    """A DLPack capsule of another library's making: @n float32 at @buf (host
    memory) labelled as the card's device type (kDLExtDev)."""
    shape = (ctypes.c_int64 * 1)(n)
    m = _DLManagedTensor()
    m.dl_tensor = _DLTensor(ctypes.cast(buf, ctypes.c_void_p), _DLDevice(DLDeviceType.kDLExtDev,
                            device_id), 1, _DLDataType(2, 32, 1), shape, None, 0)
    m.deleter = _DELETER(0)
    new = ctypes.pythonapi.PyCapsule_New
    new.restype, new.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    keep = (shape, m)  # alive as long as the test holds them
    return new(ctypes.addressof(m), b"dltensor", None), keep


def test_foreign_capsule_is_refused_naming_dlpack():
    buf = (ctypes.c_float * 16)()
    capsule, keep = _foreign_capsule(buf, 16, torch.neuron.current_device())
    with pytest.raises(RuntimeError, match="from_dlpack: a DLPack tensor on neuron"):
        from_dlpack(capsule)
    # The card's own memory, through the same check: taken.
    x = torch.arange(8.0, device=N)
    torch.ops.neuron.storage_check(torch.from_dlpack(x))

# SPDX-License-Identifier: MIT
"""DLPack for neuron tensors (torch.to_dlpack, torch.from_dlpack,
Tensor.__dlpack__).

PyTorch 2.6 packs a PrivateUse1 tensor as a DLPack tensor of device type
kDLExtDev with the card's index, and unpacks one into a tensor whose
storage is the capsule's pointer (no copy). Two things are missing there
for a backend, and are added here:

- ``Tensor.__dlpack_device__`` knows only the CPU, CUDA, ROCm and XPU
  devices ("Unknown device type neuron for Dlpack"): a neuron tensor
  answers ``(kDLExtDev, index)``, so ``torch.from_dlpack(t)`` and other
  libraries' consumers take it through the protocol;
- a capsule of kDLExtDev may carry any pointer: ``from_dlpack`` checks
  that its memory is that of a live neuron tensor of this process (the
  card's memory is not addressable from elsewhere) and raises, naming
  DLPack, when it is not.

A tensor that came back from a capsule shares the exporter's memory: it
is the same bytes, on the same card, kept alive by the capsule.
"""
import torch
import torch.utils.dlpack as _dlpack

_DEVICE_TYPE = _dlpack.DLDeviceType.kDLExtDev

_dlpack_device_orig = torch.Tensor.__dlpack_device__
_from_dlpack_orig = _dlpack.from_dlpack


def _dlpack_device(self):
    if self.device.type == "neuron":
        return (_DEVICE_TYPE, self.device.index if self.device.index is not None else 0)
    return _dlpack_device_orig(self)


def from_dlpack(ext_tensor):
    """torch.from_dlpack, which also takes neuron tensors' capsules (see the
    module's docstring)."""
    out = _from_dlpack_orig(ext_tensor)
    if out.device.type == "neuron":
        try:
            torch.ops.neuron.storage_check(out)
        except RuntimeError as e:
            raise RuntimeError(f"from_dlpack: a DLPack tensor on {out.device} that the "
                              f"card cannot take: {e}") from None
    return out


from_dlpack.__doc__ = _from_dlpack_orig.__doc__


def _install():
    torch.Tensor.__dlpack_device__ = _dlpack_device
    _dlpack.from_dlpack = from_dlpack
    torch.from_dlpack = from_dlpack

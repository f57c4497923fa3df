# SPDX-License-Identifier: MIT
"""torch._dynamo's DeviceInterface for "neuron": what dynamo (and any
device-agnostic compiler code) asks of a device by name -- its streams and
events inside a traced function (``with torch.neuron.stream(s)``,
``torch.neuron.current_stream()``), the current device, properties. It is
registered when the "neuron" backend is first used (aot.py), so importing
torch does not import dynamo."""
import torch
from torch._dynamo import device_interface as _di

from .. import neuron as _neuron
from .. import streams as _streams


def _exchange_device(index: int) -> int:
    prev = _neuron.current_device()
    if index >= 0 and index != prev:
        _neuron.set_device(index)
    return prev


class NeuronInterface(_di.DeviceInterface):
    device = _neuron.device
    Event = _streams.Event
    Stream = _streams.Stream

    class Worker:
        @staticmethod
        def set_device(device: int):
            _di.caching_worker_current_devices["neuron"] = device

        @staticmethod
        def current_device() -> int:
            return _di.caching_worker_current_devices.get("neuron", _neuron.current_device())

        @staticmethod
        def get_device_properties(device=None):
            return _neuron.get_device_properties(device)

    current_device = staticmethod(_neuron.current_device)
    set_device = staticmethod(_neuron.set_device)
    device_count = staticmethod(_neuron.device_count)
    is_available = staticmethod(_neuron.is_available)
    stream = staticmethod(_streams.stream)
    current_stream = staticmethod(_streams.current_stream)
    set_stream = staticmethod(_streams.set_stream)
    synchronize = staticmethod(_neuron.synchronize)
    get_device_properties = staticmethod(_neuron.get_device_properties)
    exchange_device = staticmethod(_exchange_device)
    maybe_exchange_device = staticmethod(_exchange_device)
    is_bf16_supported = staticmethod(_neuron.is_bf16_supported)
    memory_allocated = staticmethod(_neuron.memory_allocated)

    @staticmethod
    def _set_stream_by_id(stream_id: int, device_index: int, device_type: int):
        _streams.set_stream(_streams.Stream(stream_id=stream_id, device_index=device_index,
                                            device_type=device_type))

    @staticmethod
    def get_raw_stream(device_idx: int) -> int:
        return _streams.current_stream(device_idx).stream_id


def register() -> None:
    """Make NeuronInterface dynamo's interface of "neuron" and each "neuron:N"."""
    _di.register_interface_for_device("neuron", NeuronInterface)
    for i in range(_neuron.device_count()):
        _di.register_interface_for_device(f"neuron:{i}", NeuronInterface)

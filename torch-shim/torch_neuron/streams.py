# SPDX-License-Identifier: MIT
"""Streams and events of the neuron device, in the image of torch.cuda's.

Every operator and copy is issued on the current stream of its device (per
thread; the default stream unless set). Each stream is a libneuron stream:
an in-order queue placed on one NeuronCore and DMA queue of the card, so
work of different streams runs concurrently, on different cores. Streams
come from a pool (four per priority per device, handed out round-robin,
like CUDA's): ``Stream()`` does not create a new queue each time.

Priorities: ``priority`` < 0 takes a stream of the high-priority pool and
``Stream.priority`` reports -1, otherwise 0. The card's queues have no
priorities: a high-priority stream only gets queues of its own (its work
does not wait behind the normal pool's streams); it is not scheduled first.
"""
import contextlib

import torch


def _index(device=None) -> int:
    from .neuron import _device_index
    return _device_index(device)


def _wrap(index: int, stream_id: int) -> "Stream":
    return Stream(stream_id=stream_id, device_index=index,
                  device_type=torch.ops.neuron.device_type())


class Stream(torch.Stream):
    """An in-order queue of work on a neuron card (cf. torch.cuda.Stream).

    ``Stream(device=None, priority=0)`` hands out the next stream of the
    device's pool; query(), synchronize(), wait_event(), wait_stream() and
    record_event() behave as torch.cuda.Stream's.
    """

    def __new__(cls, device=None, priority=0, **kwargs):
        if kwargs:  # an existing stream: stream_id, device_index, device_type
            return super().__new__(cls, priority=priority, **kwargs)
        return super().__new__(cls, device=torch.device("neuron", _index(device)),
                               priority=priority)

    @property
    def priority(self) -> int:
        return int(torch.ops.neuron.stream_priority(self.device_index, self.stream_id))

    def record_event(self, event=None) -> "Event":
        """Record ``event`` (a new Event if None) on this stream; return it."""
        if event is None:
            event = Event()
        event.record(self)
        return event

    def wait_event(self, event) -> None:
        """Work issued to this stream from now on starts after ``event``'s point."""
        event.wait(self)

    def wait_stream(self, stream) -> None:
        """Work issued to this stream from now on starts after the work
        issued to ``stream`` so far."""
        self.wait_event(stream.record_event())

    def __repr__(self):
        return (f"<torch.neuron.Stream device=neuron:{self.device_index} "
                f"stream_id={self.stream_id} priority={self.priority}>")


class Event(torch.Event):
    """A point of a stream (cf. torch.cuda.Event).

    ``enable_timing=True``: recording also has the card write its clock at
    that point, and ``elapsed_time(end)`` returns the card time between two
    such events in milliseconds (it waits for both). ``blocking`` is
    accepted: waiting always sleeps in the kernel. Interprocess events are
    not supported.
    """

    def __new__(cls, enable_timing=False, blocking=False, interprocess=False):
        if interprocess:
            raise NotImplementedError("neuron: interprocess events are not supported")
        return super().__new__(cls, device="neuron", enable_timing=enable_timing,
                               blocking=blocking)

    def record(self, stream=None) -> None:
        """Record on ``stream`` (default: the current stream)."""
        super().record(current_stream() if stream is None else stream)

    def wait(self, stream=None) -> None:
        """Make ``stream`` (default: the current stream) wait for this event."""
        super().wait(current_stream() if stream is None else stream)

    def __repr__(self):
        return f"<torch.neuron.Event device_index={self.device.index} query={self.query()}>"


def current_stream(device=None) -> Stream:
    """This thread's current stream of ``device`` (default: current device)."""
    index = _index(device)
    return _wrap(index, int(torch.ops.neuron.current_stream(index)))


def default_stream(device=None) -> Stream:
    """The default stream of ``device``: current until another is set."""
    index = _index(device)
    return _wrap(index, int(torch.ops.neuron.default_stream(index)))


def set_stream(stream) -> None:
    """Make ``stream`` current on its device, and its device current
    (as torch.cuda.set_stream); None does nothing."""
    if stream is None:
        return
    if stream.device_type != torch.ops.neuron.device_type():
        raise ValueError(f"expected a neuron stream, got one of {stream.device}")
    torch.ops.neuron.set_stream(stream.device_index, stream.stream_id)
    torch.ops.neuron.set_device(stream.device_index)


@contextlib.contextmanager
def stream(s):
    """Context manager: ``s`` is the current stream (and its device the
    current device) inside; both are restored on exit. None does nothing."""
    if s is None:
        yield
        return
    prev_device = _index()
    prev_stream = current_stream(s.device_index)
    set_stream(s)
    try:
        yield s
    finally:
        torch.ops.neuron.set_stream(prev_stream.device_index, prev_stream.stream_id)
        torch.ops.neuron.set_device(prev_device)

# SPDX-License-Identifier: MIT
"""Whole steps as one launch: NeuronGraph, in the image of torch.cuda.CUDAGraph.

The work that a sequence of operations issues on the device's current
stream -- a whole training step, forward, loss, backward and optimizer -- is
captured once and then replayed by one launch, with no Python, dispatch or
autograd in between::

    g = torch.neuron.NeuronGraph()
    # warm up first: the optimizer's state exists, compiled graphs have
    # their kernels, and the step's allocations are made
    with torch.neuron.graph(g):
        static_loss = step(static_x, static_y)
    for x, y in data:
        static_x.copy_(x)
        static_y.copy_(y)
        g.replay()
        print(static_loss.item())

A replay works *in place*: it reads and writes the very tensors the captured
operations did. The tensors that live across the capture (parameters,
gradients, optimizer state, the inputs and the outputs, called static
because they keep their memory) are the graph's inputs and outputs; new data
goes into the static inputs before replay(), and the results are read from
the static outputs after it. So that no other tensor is ever given the
graph's bytes, every block of memory the capture touched is kept for the
graph until reset() (or the graph's end), even once its tensor is freed.

Refused while capturing, with an error naming the cause (and the capture
discarded): anything that needs results the capture has not computed (a
host read such as ``.item()``, an operator that falls back to the CPU, a
synchronisation), random numbers (a replay would repeat one draw), a copy
from the CPU (a replay would copy the same bytes again), and the step of an
optimizer with ``capturable=False`` (its step count lives on the host).
Values the host computes while capturing are fixed in the graph: a learning
rate changed afterwards is not seen by replays (keep it in a tensor, as with
CUDA graphs).
"""
import torch
from torch.optim.optimizer import register_optimizer_step_pre_hook

from .streams import _index, stream as _stream


def is_current_stream_capturing(device=None) -> bool:
    """Whether the current stream of ``device`` is capturing (a NeuronGraph,
    or a compiled graph recording its kernel)."""
    return bool(torch.ops.neuron.is_current_stream_capturing(_index(device)))


class NeuronGraph:
    """A captured sequence of work on one neuron device (cf. torch.cuda.CUDAGraph).
    Dropping it resets it (the C++ object's destructor, which also waits
    for its replays before its memory is reused)."""

    def __init__(self):
        self._g = torch.classes.neuron.Graph()
        self._device = None

    def capture_begin(self, device=None) -> None:
        """Start capturing the work issued on ``device``'s current stream."""
        index = _index(device)
        self._g.capture_begin(index)
        self._device = index

    def capture_end(self) -> None:
        """End the capture and compile it; raises if the capture failed."""
        self._g.capture_end()

    def replay(self) -> None:
        """Issue the captured work once more, on the device's current
        stream (asynchronous, like any operation). Under torch.profiler the
        replay is an event of its own, "NeuronGraph.replay", which holds its
        card time: a custom class method is no operator the profiler sees,
        and work issued in a user scope (record_function) is not linked to
        it, so the event is of the kind dynamo marks its compiled regions
        with."""
        if torch._C._autograd._profiler_enabled():
            with torch._C._profiler._RecordFunctionFast("NeuronGraph.replay"):
                self._g.replay()
        else:
            self._g.replay()

    def reset(self) -> None:
        """Drop the capture (once its replays are done); its memory is
        reusable again and the graph can capture anew."""
        self._g.reset()

    @staticmethod
    def resident_limits() -> dict:
        """The largest graph that replays, from its third replay on, as one
        resident job (one submission of instructions kept on the card):
        ``instructions`` and ``work`` (element operations: each
        instruction's result elements, times the inner dimension of a
        matrix product), so that a job's time stays bounded; it must also
        bind at most 64 buffers. Another graph is issued instruction by
        instruction at each replay, which costs the host CPU time per
        instruction. ``info()`` says whether a graph is resident."""
        n, work = torch.ops.neuron.graph_resident_limits()
        return {"instructions": int(n), "work": int(work)}

    def info(self) -> dict:
        """What the graph holds: instructions a replay issues, the device
        buffers it binds, its constant bytes, replays so far, the element
        operations a replay carries (``work``), and whether a replay runs
        as its resident job (see resident_limits())."""
        v = self._g.info()
        if not v:
            return {}
        d = dict(zip(("instructions", "buffers", "constant_bytes", "replays", "work",
                      "resident"), v))
        d["resident"] = bool(d["resident"])
        return d


def _capturable_check(optimizer, args, kwargs):
    for group in optimizer.param_groups:
        if group.get("capturable") is False and any(
                p.device.type == "neuron" for p in group["params"]):
            raise RuntimeError(
                f"neuron: NeuronGraph: captured step() of {type(optimizer).__name__} "
                "with capturable=False: its step count is a host value that replays "
                "would not advance; create it with capturable=True")


class graph:
    """Context manager: capture the work of its body into ``neuron_graph``
    (cf. torch.cuda.graph). ``stream``: capture on that stream instead of
    the current one (it is current inside the body). Pending work is waited
    for first. If the body raises, the capture is discarded and the error
    propagates (as the cause of one naming what the capture refused, when
    it refused a call)."""

    def __init__(self, neuron_graph: NeuronGraph, stream=None, device=None):
        self.graph = neuron_graph
        self.stream = stream
        self.device = stream.device_index if stream is not None else device
        self._ctx = None
        self._hook = None

    def __enter__(self):
        torch.neuron.synchronize(self.device)
        self._ctx = _stream(self.stream)
        self._ctx.__enter__()
        try:
            self.graph.capture_begin(self.device)
        except BaseException:
            self._ctx.__exit__(None, None, None)
            raise
        self._hook = register_optimizer_step_pre_hook(_capturable_check)
        return self.graph

    def __exit__(self, exc_type, exc, tb):
        self._hook.remove()
        try:
            if exc_type is None:
                self.graph.capture_end()
                return False
            # The body raised: keep nothing. If the capture refused a call
            # (the error raised there is libneuron's), say what it means.
            why = self.graph._g.abort()
        finally:
            self._ctx.__exit__(None, None, None)
        if why:
            raise RuntimeError(f"neuron: NeuronGraph: the capture failed: {why}") from exc
        return False

# SPDX-License-Identifier: MIT
"""The dynamo backend: AOTAutograd, each forward/backward/inference ATen
graph served by a GraphKernels (kernels.py), or, when it holds collectives,
by one per segment between them (split.py)."""
import itertools
import threading

from torch._dynamo.backends.common import aot_autograd
from torch._guards import CompileContext

from . import device_interface, stats
from .kernels import GraphKernels
from .split import has_collectives, split_kernels

device_interface.register()

_ids = itertools.count()
_frames = set()
_lock = threading.Lock()


def _note_dynamo_graph():
    cid = CompileContext.current_compile_id()
    with _lock:
        stats.add("dynamo_graphs")
        if cid is not None and cid.frame_compile_id > 0 and cid not in _frames:
            stats.add("dynamo_recompiles")
        if cid is not None:
            _frames.add(cid)


def neuron_backend(gm, example_inputs, **kwargs):
    _note_dynamo_graph()
    n = next(_ids)

    def compiler(kind):
        def compile_graph(fx, inputs):
            if has_collectives(fx):
                return split_kernels(fx, f"{kind} graph {n}")
            return GraphKernels(fx, f"{kind} graph {n}")
        return compile_graph

    # keep_inference_input_mutations: an inference graph's in-place updates
    # of its inputs (an optimizer step's parameters and state) stay in the
    # graph, so they are part of its kernel, not one eager copy_ each after it.
    return aot_autograd(fw_compiler=compiler("forward"), bw_compiler=compiler("backward"),
                        inference_compiler=compiler("inference"),
                        keep_inference_input_mutations=True)(gm, example_inputs, **kwargs)

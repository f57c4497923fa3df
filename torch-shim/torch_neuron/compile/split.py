# SPDX-License-Identifier: MIT
"""Graphs holding collectives: compiled kernels between them.

A kernel replays on one card and a capturing stream refuses collectives, so
an ATen graph with functional collectives (`_c10d_functional.*`: what
DTensor's tensor parallelism and traced `torch.distributed._functional_
collectives` calls become) is cut at them: each run of ordinary operators
is a segment served by its own GraphKernels (captured, compiled, cached),
and the collectives between them -- with their `wait_tensor` -- are nodes
of the same graph that run as they do eagerly: issued on the card's
current stream, after the previous segment's kernel and before the next's.
No graph break: dynamo's graph stays one graph, and only the collectives
are outside kernels.
"""
import operator

import torch
from torch.fx.passes.split_module import split_module

from . import stats
from .kernels import GraphKernels

_NAMESPACES = ("_c10d_functional", "_c10d_functional_autograd", "c10d")


def is_collective(node):
    return (node.op == "call_function" and isinstance(node.target, torch._ops.OpOverload)
            and node.target.namespace in _NAMESPACES)


def has_collectives(gm):
    return any(is_collective(n) for n in gm.graph.nodes)


def drop_unused_collectives(gm):
    """Remove collectives whose results nothing reads (their wait_tensor
    unused too), then what only fed them; the number removed.

    AOTAutograd's default partitioner recomputes forward values in the
    backward graph, collectives included, and keeps them because
    wait_tensor counts as a side effect: a TP backward issued every
    forward collective again for nothing. Every rank compiles the same
    graph, so every rank drops the same ones and the ranks' collectives
    stay in step."""
    removed = 0
    changed = True
    while changed:
        changed = False
        for node in reversed(list(gm.graph.nodes)):
            if node.users:
                continue
            getitem = (node.op == "call_function" and node.target is operator.getitem
                       and isinstance(node.args[0], torch.fx.Node)
                       and is_collective(node.args[0]))
            if is_collective(node) or getitem:
                gm.graph.erase_node(node)
                removed += is_collective(node)
                changed = True
    if removed:
        gm.graph.eliminate_dead_code()
        gm.recompile()
    return removed


class _Segment(torch.nn.Module):
    """A segment's kernels, called as the split graph calls its submodule."""

    def __init__(self, kernels, single):
        super().__init__()
        self.kernels = kernels
        self.single = single

    def forward(self, *args):
        out = self.kernels(list(args))
        return out[0] if self.single else tuple(out)


def _tuple_output(sub):
    """Make @sub return a tuple (GraphKernels' outputs are a sequence);
    True when it returned one value."""
    out = next(n for n in sub.graph.nodes if n.op == "output")
    if isinstance(out.args[0], (tuple, list)):
        return False
    out.args = ((out.args[0],),)
    sub.recompile()
    return True


def split_kernels(gm, name):
    """The boxed callable for @gm: its segments between collectives as
    kernels, the collectives eager."""
    stats.add("dropped_collectives", drop_unused_collectives(gm))
    part = [0]
    prev = [None]

    def partition(node):
        kind = is_collective(node)
        if prev[0] is not None and kind != prev[0]:
            part[0] += 1
        prev[0] = kind
        return part[0]

    top = split_module(gm, None, partition, keep_original_order=True)
    segments = 0
    for sub_name, sub in list(top.named_children()):
        if any(is_collective(n) for n in sub.graph.nodes):
            continue
        single = _tuple_output(sub)
        setattr(top, sub_name, _Segment(GraphKernels(sub, f"{name} segment {segments}"),
                                        single))
        segments += 1
    stats.add("split_graphs")
    stats.add("split_segments", segments)

    def run(args):
        return top(*args)

    run._boxed_call = True
    run.split = top
    return run

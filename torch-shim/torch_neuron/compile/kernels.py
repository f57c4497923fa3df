# SPDX-License-Identifier: MIT
"""One ATen FX graph of AOTAutograd run as compiled libneuron kernels.

A call whose signature (C++: NeuronGraphPlan.h) has a kernel launches it:
one C++ call allocates the outputs and the arena and issues every
instruction. A new signature is served from the disk cache or CAPTURED: the
graph runs once eagerly on `neuron` while the stream records the
instructions its operations encode, libneuron compiles them into a kernel
over the call's argument and output regions, and the kernel is launched to
produce this call's results. A graph that cannot be captured (a sync, a
read of results by the host, a random op, a CPU fallback, ...) runs through
eager `neuron` operations from then on, with one warning and a count.
"""
import hashlib
import logging
import os
import time
import warnings

import torch

from . import cache, config, stats

log = logging.getLogger("torch_neuron.compile")

# Operators whose result depends on state outside the graph's arguments: a
# kernel would replay one draw (the card's RANDOM instructions are refused
# by the capture too; this also covers random numbers drawn on the CPU).
_SEEDED = torch.Tag.nondeterministic_seeded


def _dropout_off(node):
    """A seeded operator whose dropout probability is the constant 0 (SDPA
    with dropout_p=0.0) draws nothing."""
    for i, a in enumerate(node.target._schema.arguments):
        if a.name in ("dropout_p", "p"):
            v = node.args[i] if i < len(node.args) else node.kwargs.get(a.name, a.default_value)
            return isinstance(v, (int, float)) and v == 0
    return False


def _refusal(gm):
    """Why @gm cannot become a kernel, or None (checked before any capture)."""
    for node in gm.graph.nodes:
        if node.op == "call_function" and isinstance(node.target, torch._ops.OpOverload):
            if _SEEDED in node.target.tags and not _dropout_off(node):
                return f"{node.target.name()} draws random numbers"
    return None


def _constants(gm):
    """The graph's tensor attributes: arguments of its kernels too."""
    out = []
    for node in gm.graph.nodes:
        if node.op == "get_attr":
            v = gm
            for part in node.target.split("."):
                v = getattr(v, part)
            if isinstance(v, torch.Tensor):
                out.append(v)
    return out


def _code_key(gm, consts):
    h = hashlib.sha256(gm.code.encode())
    for c in consts:
        h.update(repr((c.dtype, tuple(c.shape), tuple(c.stride()), str(c.device))).encode())
        h.update(c.detach().cpu().contiguous().view(torch.uint8).numpy().tobytes())
    return h.hexdigest()


def _device_of(args):
    for a in args:
        if isinstance(a, torch.Tensor) and a.device.type == "neuron":
            return a.device.index
    return None


class GraphKernels:
    """The boxed callable AOTAutograd gets for one FX graph."""

    def __init__(self, gm, name):
        self._boxed_call = True  # an instance attribute: dynamo's wrappers copy __dict__
        self.gm = gm
        self.name = name
        self.consts = _constants(gm)
        self.eager = _refusal(gm)
        self.set = None
        self.code_key = None
        stats.add("graphs")
        if self.eager:
            self._fall_back(self.eager)
        else:
            self.set = torch.classes.neuron.GraphSet(config.kernels_per_graph(), config.flags())

    def __call__(self, args):
        if self.eager is None:
            full = args + self.consts if self.consts else args
            out = self.set.run(full)
            if out is not None:
                return out
            out = self._new_signature(args, full)
            if out is not None:
                return out
        stats.add("eager_calls")
        return self.gm(*args)

    # -- a signature without a kernel -------------------------------------

    def _new_signature(self, args, full):
        """Load or capture the kernel of @full's signature and launch it;
        None when the graph falls back to eager from now on."""
        try:
            sig = self.set.signature(full)
        except RuntimeError as e:
            return self._fall_back(str(e))
        dev = _device_of(full)
        if dev is None:
            return self._fall_back("no argument is a neuron tensor")
        key = self._cache_key(sig) if cache.enabled() else None
        if key and self._load(key, full):
            return self.set.run(full)
        stats.add("cache_misses")
        t0 = time.perf_counter()
        self.set.begin_capture(dev)
        error = None
        try:
            outs = self.gm(*args)
        except Exception as e:  # the capture's error names the cause
            error = e
        finally:  # the stream captures until this, whatever happened
            failed = self.set.end_capture()
        if failed or error is not None:
            reason = failed or f"{type(error).__name__}: {error}"
            if error is not None and failed:
                reason = f"{failed}; raised {type(error).__name__}: {error}"
            return self._fall_back(reason.strip())
        try:
            info, plan = self.set.compile(full, list(outs))
        except RuntimeError as e:
            return self._fall_back(str(e))
        ms = (time.perf_counter() - t0) * 1e3
        torch.ops.neuron.register_graph_sources(int(info[6]), f"compiled graph {self.name}", [])
        stats.add("captures")
        stats.add("compile_ms", ms)
        stats.kernels(self.name, int(info[5]))
        log.debug("torch_neuron.compile: %s: compiled a kernel in %.1f ms (%d instructions "
                  "launched, %d captured, %d fused, arena %d bytes)", self.name, ms,
                  info[0], info[1], info[2], info[3])
        if key:
            blob = self.set.serialize(full)
            cache.store(key, self._meta(plan), blob.numpy().tobytes())
        return self.set.run(full)

    def _meta(self, plan=None):
        m = {"isa": int(torch.ops.neuron.isa_version()), "build": config.build_id(),
             "flags": config.flags()}
        if plan is not None:
            m["plan"] = list(plan)
        return m

    def _cache_key(self, sig):
        if self.code_key is None:
            self.code_key = _code_key(self.gm, self.consts)
        meta = self._meta()
        text = f"{self.code_key}|{sig}|{meta['isa']}|{meta['build']}|{meta['flags']}"
        return hashlib.sha256(text.encode()).hexdigest()

    def _load(self, key, full):
        t0 = time.perf_counter()
        entry = cache.load(key, self._meta())
        if entry is None:
            return False
        meta, blob = entry
        try:
            info = self.set.load(full, torch.frombuffer(bytearray(blob), dtype=torch.uint8),
                                 meta.get("plan", []))
        except RuntimeError as e:
            cache.drop(key, f"rejected ({e})")
            return False
        ms = (time.perf_counter() - t0) * 1e3
        torch.ops.neuron.register_graph_sources(int(info[6]), f"compiled graph {self.name}", [])
        stats.add("cache_hits")
        stats.add("cache_load_ms", ms)
        stats.kernels(self.name, int(info[5]))
        log.debug("torch_neuron.compile: %s: kernel loaded from the cache in %.1f ms", self.name, ms)
        return True

    def _fall_back(self, reason):
        if self.set is not None:
            self.eager = reason
        self.set = None
        stats.eager_fallback(self.name, reason)
        warnings.warn(f"torch_neuron.compile: {self.name} runs through eager neuron "
                      f"operations: {reason}", stacklevel=2)
        return None

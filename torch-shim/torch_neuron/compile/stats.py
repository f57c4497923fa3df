# SPDX-License-Identifier: MIT
"""The counters behind torch_neuron.compile_stats().

Kept apart from the backend so that reading them never imports dynamo.
Counters the C++ side keeps (launches, kernel evictions) are read from it.
"""
import threading

import torch

_lock = threading.Lock()
_counts = {}
_reasons = {}
_kernels = {}
_nk = {}


def _zero():
    return {
        "dynamo_graphs": 0,        # graphs dynamo handed to the backend
        "dynamo_recompiles": 0,    # of those, for a frame compiled before
        "graphs": 0,               # ATen graphs (AOTAutograd fw/bw/inference)
        "captures": 0,             # capture + compile of a concrete signature
        "cache_hits": 0,
        "cache_misses": 0,
        "cache_corrupt": 0,        # entries found damaged/stale, deleted
        "cache_writes": 0,
        "compile_ms": 0.0,         # capture + compile time, total
        "cache_load_ms": 0.0,      # disk cache read + deserialize time, total
        "eager_graphs": 0,         # graphs that fell back to eager neuron ops
        "eager_calls": 0,          # calls of those graphs
        "split_graphs": 0,         # graphs cut at their collectives (split.py)
        "split_segments": 0,       # their segments between collectives
        "dropped_collectives": 0,  # collectives nothing read, removed (split.py)
    }


def reset():
    with _lock:
        _counts.clear()
        _counts.update(_zero())
        _reasons.clear()
        _kernels.clear()
        _nk.clear()
    if hasattr(torch.ops.neuron, "graph_counters"):
        torch.ops.neuron.reset_graph_counters()


reset()


def add(name, value=1):
    with _lock:
        _counts[name] += value


def eager_fallback(graph_name, reason):
    with _lock:
        _counts["eager_graphs"] += 1
        _reasons[graph_name] = reason


def kernels(graph_name, n):
    """@graph_name holds @n compiled kernels now."""
    with _lock:
        _kernels[graph_name] = n


def _nk_entry(name):
    return _nk.setdefault(name, {"compiles": 0, "cache_hits": 0, "compile_ms": 0.0,
                                 "instructions": 0, "captured_instructions": 0})


def kernel_compiled(name, ms, captured, launched):
    """Kernel @name (torch_neuron.kernels) traced and compiled a signature."""
    with _lock:
        e = _nk_entry(name)
        e["compiles"] += 1
        e["compile_ms"] = round(e["compile_ms"] + ms, 3)
        e["captured_instructions"], e["instructions"] = captured, launched


def kernel_loaded(name, ms, captured, launched):
    """Kernel @name took a signature's kernel from the disk cache."""
    with _lock:
        e = _nk_entry(name)
        e["cache_hits"] += 1
        e["captured_instructions"], e["instructions"] = captured, launched


def snapshot():
    with _lock:
        out = dict(_counts)
        out["eager_fallbacks"] = dict(_reasons)
        out["kernels_per_graph"] = dict(_kernels)
        out["nk_kernels"] = {k: dict(v) for k, v in _nk.items()}
    out["compile_ms"] = round(out["compile_ms"], 3)
    out["cache_load_ms"] = round(out["cache_load_ms"], 3)
    if hasattr(torch.ops.neuron, "graph_counters"):
        launches, evictions = torch.ops.neuron.graph_counters()
        out["launches"] = int(launches)
        out["kernel_evictions"] = int(evictions)
    return out

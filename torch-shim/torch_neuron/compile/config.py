# SPDX-License-Identifier: MIT
"""Settings of compiled mode, from the environment.

TORCH_NEURON_KERNELS_PER_GRAPH  kernels (concrete signatures) each graph
                                keeps, least recently used evicted (8)
TORCH_NEURON_FUSE               1: fuse elementwise chains into EXPR
                                instructions (default), 0: do not
TORCH_NEURON_CACHE_DIR, TORCH_NEURON_COMPILE_CACHE: see cache.py
"""
import functools
import os

NRN_GRAPH_FUSE = 0x1  # libneuron.h


def kernels_per_graph():
    return max(1, int(os.environ.get("TORCH_NEURON_KERNELS_PER_GRAPH", "8")))


def flags():
    return NRN_GRAPH_FUSE if os.environ.get("TORCH_NEURON_FUSE", "1") != "0" else 0


@functools.lru_cache(None)
def build_id():
    """Identifies the shim and libneuron builds (a cache entry made by other
    builds is stale: they may encode other instructions)."""
    libs = []
    with open("/proc/self/maps") as f:
        for line in f:
            p = line.split()[-1]
            if ("libtorch_neuron" in p or "libneuron.so" in p) and p not in libs:
                libs.append(p)
    out = []
    for p in sorted(libs):
        st = os.stat(p)
        out.append(f"{os.path.basename(p)}:{st.st_size}:{st.st_mtime_ns}")
    return ";".join(out)

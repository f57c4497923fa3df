# SPDX-License-Identifier: MIT
"""Device memory as PyTorch users read it (cf. torch.cuda.memory).

The caching allocator (csrc/runtime/NeuronAllocator.cpp) splits blocks
from segments (libneuron device buffers): requests up to 1 MiB from 2 MiB
segments (the small pool), larger ones from segments rounded to 2 MiB (the
large pool). Its statistics carry torch.cuda.memory_stats()'s names:
"allocated_bytes.all.current", "reserved_bytes.large_pool.peak",
"num_alloc_retries", ...
"""
import collections

import torch


def _index(device=None) -> int:
    from .neuron import _device_index
    return _device_index(device)


def memory_stats(device=None) -> "collections.OrderedDict[str, int]":
    """The allocator's statistics of ``device``, flat, sorted by name.

    For each of allocation, segment, active, inactive_split (counts) and
    allocated_bytes, reserved_bytes, active_bytes, inactive_split_bytes,
    requested_bytes, per pool ("all", "small_pool", "large_pool"): current,
    peak, allocated (total ever added) and freed. Active blocks are the
    allocated ones and the freed ones still waiting for other streams
    (record_stream); inactive_split are free blocks of partly used segments.
    Then num_alloc_retries (a segment allocation that failed, the cache was
    given back and it was retried), num_ooms, num_sync_all_streams,
    num_device_alloc and num_device_free (libneuron buffers).
    """
    names, values = torch.ops.neuron.memory_stats(_index(device))
    return collections.OrderedDict(sorted(zip(names, (int(v) for v in values))))


def memory_allocated(device=None) -> int:
    """Bytes in blocks held by tensors (sizes rounded as the allocator does)."""
    return memory_stats(device)["allocated_bytes.all.current"]


def max_memory_allocated(device=None) -> int:
    """Peak of memory_allocated() since the start or the last reset."""
    return memory_stats(device)["allocated_bytes.all.peak"]


def memory_reserved(device=None) -> int:
    """Bytes of device memory held by the caching allocator, used or not."""
    return memory_stats(device)["reserved_bytes.all.current"]


def max_memory_reserved(device=None) -> int:
    """Peak of memory_reserved() since the start or the last reset."""
    return memory_stats(device)["reserved_bytes.all.peak"]


def reset_peak_memory_stats(device=None) -> None:
    """Make every peak the current value."""
    torch.ops.neuron.reset_peak_memory_stats(_index(device))


def reset_accumulated_memory_stats(device=None) -> None:
    """Zero the totals ("allocated", "freed") and the num_* counters."""
    torch.ops.neuron.reset_accumulated_memory_stats(_index(device))


def empty_cache() -> None:
    """Give every device's unused cached segments back to the card (after
    the work issued so far, which may still use them, is done)."""
    from .neuron import device_count
    for i in range(device_count()):
        torch.ops.neuron.empty_cache(i)


def mem_get_info(device=None) -> "tuple[int, int]":
    """(free, total) bytes of the card's memory, from the driver: free
    counts every process's allocations, this allocator's cache included."""
    free, total = torch.ops.neuron.mem_get_info(_index(device))
    return int(free), int(total)


def _fmt(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


def memory_summary(device=None, abbreviated: bool = False) -> str:
    """A table of memory_stats(): each statistic's current, peak,
    allocated and freed values, for all pools (and per pool unless
    ``abbreviated``), then the counters."""
    index = _index(device)
    stats = memory_stats(index)
    rows = [("Allocated memory", "allocated_bytes", True),
            ("Active memory", "active_bytes", True),
            ("Requested memory", "requested_bytes", True),
            ("Reserved memory", "reserved_bytes", True),
            ("Non-releasable memory", "inactive_split_bytes", True),
            ("Allocations", "allocation", False),
            ("Active allocs", "active", False),
            ("Segments", "segment", False),
            ("Non-releasable allocs", "inactive_split", False)]
    pools = [("all", "")] if abbreviated else [
        ("all", ""), ("large_pool", "  from large pool"), ("small_pool", "  from small pool")]
    width = 24 + 4 * 13
    lines = ["=" * width,
             f" neuron:{index} caching allocator summary".ljust(width),
             "-" * width,
             f"{'Metric':<24}{'Cur Usage':>13}{'Peak Usage':>13}{'Tot Alloc':>13}{'Tot Freed':>13}",
             "-" * width]
    for title, key, is_bytes in rows:
        for pool, label in pools:
            vals = [stats[f"{key}.{pool}.{f}"] for f in ("current", "peak", "allocated", "freed")]
            cells = "".join(f"{_fmt(v) if is_bytes else v:>13}" for v in vals)
            lines.append(f"{(label or title):<24}{cells}")
        lines.append("-" * width)
    free, total = mem_get_info(index)
    for key in ("num_alloc_retries", "num_ooms", "num_sync_all_streams",
                "num_device_alloc", "num_device_free"):
        lines.append(f"{key:<37}{stats[key]:>13}")
    lines.append(f"{'card memory free / total':<37}{_fmt(free) + ' / ' + _fmt(total):>29}")
    lines.append("=" * width)
    return "\n".join(lines) + "\n"

# SPDX-License-Identifier: MIT
"""Timing shared by the examples' benchmarks (bench_*.py)."""
import statistics
import time


def best_ms(fn, reps):
    """Best wall time of fn() over @reps runs after one warm-up, in ms."""
    fn()  # warm-up
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times) * 1e3


def median_ms_per_call(fn, calls, windows, sync):
    """Median over @windows timing windows of the wall time per call of
    @calls back-to-back fn() calls, in ms; sync() (the device's
    synchronize) before and at the end of each window, so a window holds
    exactly its calls' work. Warm up first: this times only."""
    times = []
    for _ in range(windows):
        sync()
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        sync()
        times.append((time.perf_counter() - t0) / calls)
    return statistics.median(times) * 1e3

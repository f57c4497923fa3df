# SPDX-License-Identifier: MIT
"""Timing shared by the examples' benchmarks (bench_*.py)."""
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

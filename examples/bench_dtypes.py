# SPDX-License-Identifier: MIT
"""What float64 costs on the card against float32: the same operations in
both types, timed on the card (median over windows of back-to-back calls,
the card synchronized around each window), as JSON.

    python3 examples/bench_dtypes.py [--device neuron] [--windows N]

Figures: f64_ms_<op>, f32_ms_<op> and f64_vs_f32_<op> (how many times the
float32 time the float64 one takes) for a 1024^3 matmul, and, on 2^22
elements, an add, an exp and a sum. The card computes elementwise work in
double whatever the type (docs/hardware.md, "Numerics"), so there float64
costs the bytes moved; its matmul is dgemm against sgemm.
"""
import argparse
import json

import torch

from benchtime import median_ms_per_call


def ops(n_mm, n_ew):
    return {
        "matmul_1024": (lambda t: (t(n_mm, n_mm), t(n_mm, n_mm)), lambda a, b: a @ b),
        "add_4m": (lambda t: (t(n_ew), t(n_ew)), lambda a, b: a + b),
        "exp_4m": (lambda t: (t(n_ew),), torch.exp),
        "sum_4m": (lambda t: (t(n_ew),), torch.sum),
    }


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--device", default="neuron")
    p.add_argument("--windows", type=int, default=5)
    p.add_argument("--calls", type=int, default=4)
    a = p.parse_args()
    if a.device == "neuron":
        import torch_neuron  # noqa: F401
    dev = torch.device(a.device)
    sync = (lambda: torch.neuron.synchronize()) if dev.type == "neuron" else (lambda: None)
    figs = {}
    for name, (make, fn) in ops(1024, 1 << 22).items():
        ms = {}
        for dtype, tag in ((torch.float32, "f32"), (torch.float64, "f64")):
            g = torch.Generator().manual_seed(0)
            args = make(lambda *s: torch.randn(*s, generator=g, dtype=dtype).to(dev))
            fn(*args)  # warm-up
            ms[tag] = median_ms_per_call(lambda: fn(*args), a.calls, a.windows, sync)
            figs[f"{tag}_ms_{name}"] = round(ms[tag], 3)
        figs[f"f64_vs_f32_{name}"] = round(ms["f64"] / ms["f32"], 2)
    print(json.dumps(figs))


if __name__ == "__main__":
    main()

# SPDX-License-Identifier: MIT
"""Do two streams run on two NeuronCores at once? Print JSON figures.

    python3 examples/bench_streams.py [--device neuron] [--n 1024] [--count 8] [--reps 3]

--count independent float32 matmuls of --n x --n: all on one stream, then
the same split over two streams (consecutive streams of the pool, so each
on its own core), issued and waited for; warm, best of --reps rounds.

two_streams_vs_one = two streams' time / one stream's: about 0.5 when the
two cores work in parallel, 1.0 when the work is serialised.
"""
import argparse
import json

import torch

from benchtime import best_ms


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="neuron")
    ap.add_argument("--n", type=int, default=1024)
    ap.add_argument("--count", type=int, default=8)
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    dev = torch.device(args.device)
    mod = getattr(torch, dev.type)

    a = [torch.rand(args.n, args.n).to(dev) for _ in range(args.count)]
    b = torch.rand(args.n, args.n).to(dev)
    out = [torch.empty(args.n, args.n, device=dev) for _ in range(args.count)]
    mod.synchronize()
    streams = [mod.Stream(), mod.Stream()]
    for s in streams:  # the inputs were written on the default stream
        s.wait_stream(mod.current_stream())

    def run(nstreams):
        for i in range(args.count):
            with mod.stream(streams[i % nstreams]):
                torch.mm(a[i], b, out=out[i])
        mod.synchronize()

    one = best_ms(lambda: run(1), args.reps)
    two = best_ms(lambda: run(2), args.reps)
    print(json.dumps({"two_streams_vs_one": round(two / one, 3),
                      "one_stream_ms": round(one, 1),
                      "two_streams_ms": round(two, 1)}))


if __name__ == "__main__":
    main()

# SPDX-License-Identifier: MIT
"""Transformer encoder inference (eval, no gradients). Print JSON figures.

    python3 examples/bench_encoder.py [--device neuron] [--layers 4] [--batch 16]
                                      [--seq 64] [--reps 10]

A TransformerEncoder of --layers layers (d_model 256, 4 heads, feed-forward
1024), batch --batch x --seq tokens; "dense" without a mask (PyTorch's
fused encoder layer), "padded" with a key padding mask of random lengths
from seq/2 to seq (its nested-tensor path). ms per forward, best of --reps
after one warm-up. Compare with PyTorch on the host's own CPU:
scripts/chroot-run env OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=2
python3 examples/bench_encoder.py --device cpu
"""
import argparse
import json

import torch
import torch.nn as nn

from benchtime import best_ms


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="neuron")
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--seq", type=int, default=64)
    ap.add_argument("--reps", type=int, default=10)
    args = ap.parse_args()
    dev = torch.device(args.device)
    mod = getattr(torch, dev.type)
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(256, 4, 1024, dropout=0.0, batch_first=True)
    enc = nn.TransformerEncoder(layer, args.layers).eval().to(dev)
    x = torch.randn(args.batch, args.seq, 256).to(dev)
    lengths = torch.randint(args.seq // 2, args.seq + 1, (args.batch,))
    pad = (torch.arange(args.seq)[None] >= lengths[:, None]).to(dev)

    def forward(**kw):
        with torch.no_grad():
            enc(x, **kw)
        if hasattr(mod, "synchronize"):
            mod.synchronize()

    figures = {"device": dev.type,
               "encoder_dense_ms": round(best_ms(forward, args.reps), 1),
               "encoder_padded_ms": round(best_ms(lambda: forward(src_key_padding_mask=pad),
                                                  args.reps), 1)}
    if dev.type == "neuron":
        import torch_neuron
        figures["fallbacks"] = torch_neuron.fallback_stats()
    print(json.dumps(figures))


if __name__ == "__main__":
    main()

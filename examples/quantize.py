# SPDX-License-Identifier: MIT
"""Weight-only int8 quantization of a model's nn.Linear layers.

Each weight [N, K] becomes int8 values wq and one float32 scale per output
channel (row): scale = max|w_row| / 127, wq = round(w / scale) (to nearest,
symmetric: -127..127). So every weight is within scale / 2 of wq * scale,
at most 1/254 of its row's largest magnitude, and a layer's output y_n is
within (scale_n / 2) * sum_k |x_k| of the float layer's (plus the float
arithmetic's own rounding). Activations stay float32 or bfloat16.

On the card an Int8Linear is examples/kernels/int8_linear.py's kernel: the
MATMUL reads the int8 weights as stored. Elsewhere it computes the same
with PyTorch's operators, so the same model runs on the CPU for reference.

    from quantize import quantize
    quantize(model)              # in place: every nn.Linear -> Int8Linear

    python3 examples/quantize.py [--device neuron]   # the error on trained models
"""
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F


def quantize_weight(w):
    """(wq int8 [N, K], scale float32 [N]) of a weight [N, K]. An all-zero
    row gets scale 1 and zeros."""
    w = w.detach().float()
    scale = w.abs().amax(1) / 127
    scale = torch.where(scale > 0, scale, torch.ones_like(scale))
    wq = torch.round(w / scale[:, None]).clamp(-127, 127).to(torch.int8)
    return wq, scale


_card = None


def _card_linear():
    global _card
    if _card is None:
        kdir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernels")
        if kdir not in sys.path:
            sys.path.insert(0, kdir)
        import int8_linear
        _card = int8_linear.int8_linear
    return _card


class Int8Linear(nn.Module):
    """nn.Linear with int8 weights and per-output-channel scales (buffers:
    wq, scale, bias); inference only (no gradient reaches the weights)."""

    def __init__(self, linear: nn.Linear):
        super().__init__()
        self.in_features, self.out_features = linear.in_features, linear.out_features
        wq, scale = quantize_weight(linear.weight)
        dev = linear.weight.device
        self.register_buffer("wq", wq.to(dev))
        self.register_buffer("scale", scale.to(dev))
        bias = None if linear.bias is None else linear.bias.detach().clone()
        self.register_buffer("bias", bias)

    def forward(self, x):
        if x.device.type == "neuron":
            y = _card_linear()(x.contiguous(), self.wq, self.scale)
        else:
            y = (F.linear(x.float(), self.wq.float()) * self.scale).to(x.dtype)
        return y if self.bias is None else y + self.bias

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"int8 weights, bias={self.bias is not None}")


def quantize(model: nn.Module) -> nn.Module:
    """Replace every nn.Linear of @model (in place) by an Int8Linear; returns it."""
    for name, child in model.named_children():
        if isinstance(child, nn.Linear):
            setattr(model, name, Int8Linear(child))
        else:
            quantize(child)
    return model


def main():
    """The quantization's error on a trained model: the logits' relative
    error and how many greedy tokens of int8 generation are the float
    model's."""
    import argparse
    import copy

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import generate as gen

    ap = argparse.ArgumentParser(description=main.__doc__)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--train-steps", type=int, default=300)
    ap.add_argument("--new", type=int, default=64)
    a = ap.parse_args()
    dev = torch.device(a.device)
    if dev.type == "neuron":
        import torch_neuron  # noqa: F401  (registers the device)
    for name in ("llama", "gpt2"):
        model = gen.make_model(name, 128)
        loss = gen.train(model, a.train_steps)  # on the CPU
        q = quantize(copy.deepcopy(model)).to(dev)
        model.to(dev)
        idx = torch.randint(0, gen.VOCAB, (8, 64), generator=torch.Generator().manual_seed(0))
        with torch.no_grad():
            lf, lq = model(idx.to(dev)).cpu(), q(idx.to(dev)).cpu()
        prompts = torch.cat([gen.encode(t)[None, :8]
                             for t in ("to be or", "the king", "what is ", "and then")])
        mode = "graph" if dev.type == "neuron" else "eager"
        want = gen.Decoder(model, 4, 128, mode).generate(prompts, a.new)[:, 8:]
        got = gen.Decoder(q, 4, 128, mode).generate(prompts, a.new)[:, 8:]
        print(f"{name} (trained {a.train_steps} steps, loss {loss:.3f}) on {dev.type}: int8 "
              f"logits' relative error {((lf - lq).norm() / lf.norm()).item():.4f}, largest "
              f"{(lf - lq).abs().max().item():.3f}; greedy tokens equal to float's "
              f"{int((want == got).sum())} of {want.numel()}")


if __name__ == "__main__":
    main()

# SPDX-License-Identifier: MIT
"""A weight-only int8 linear layer for the card, as a PyTorch operator.

    y = (x @ wq^T) * scale        wq int8 [N, K], scale float32 [N]

The card's MATMUL reads the int8 weights as they are stored -- each
converted to float32 exactly as the product packs its tiles -- so the
weights stay a quarter of their float32 size in card memory and are never
dequantized into a tensor of their own; the per-output-channel scale is
applied to the float32 product, rounded once to x's dtype (float32 or
bfloat16). On the CPU the operator computes the same with PyTorch's
operators (float32 product, then the scale). The quantization itself
(round-to-nearest, symmetric, per output channel) is examples/quantize.py.

    python3 examples/kernels/int8_linear.py   # checks it against the CPU's
"""
import torch
import torch.nn.functional as F

import torch_neuron.kernels as nk


@nk.kernel
def int8_linear_fwd(x, wq, scale):
    k, n = x.shape[-1], wq.shape[0]
    x2 = x.reshape(-1, k)                                   # [M, K], a view
    acc = nk.matmul(x2, wq.T, dtype=nk.float32)             # [M, N]: int8 read as float32
    y = nk.empty(tuple(x.shape[:-1]) + (n,), x.dtype)
    nk.mul(acc, scale, out=y.reshape(-1, n))                # scale broadcasts over rows
    return y


@nk.op("examples::int8_linear")
def int8_linear(x: torch.Tensor, wq: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    return int8_linear_fwd(x, wq, scale)


@int8_linear.register_kernel("cpu")
def _int8_linear_cpu(x, wq, scale):
    return reference(x, wq, scale)


def reference(x, wq, scale):
    """The same with PyTorch's operators: the float32 product, then the scale."""
    return (F.linear(x.float(), wq.float()) * scale).to(x.dtype)


if __name__ == "__main__":
    torch.manual_seed(0)
    w = torch.randn(96, 64)
    scale = w.abs().amax(1) / 127
    wq = torch.round(w / scale[:, None]).to(torch.int8)
    x = torch.randn(4, 7, 64)
    y = int8_linear(x.to("neuron"), wq.to("neuron"), scale.to("neuron")).cpu()
    print("against the CPU's:", (y - reference(x, wq, scale)).abs().max().item(),
          "against float weights:", (y - F.linear(x, w)).abs().max().item())

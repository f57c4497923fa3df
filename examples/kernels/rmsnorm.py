# SPDX-License-Identifier: MIT
"""Fused RMSNorm for the card, forward and backward, as a PyTorch operator.

    y = x / sqrt(mean(x^2, -1) + eps) * weight

Composed of PyTorch operators this is 6 operators forward (pow, mean, add,
rsqrt, mul, mul), each a launch of its own in eager mode; here it is one
kernel each way. Statistics are computed in float32 whatever x's dtype.

    python3 examples/kernels/rmsnorm.py       # checks it against the composition
"""
import torch

import torch_neuron.kernels as nk


@nk.kernel
def rms_norm_fwd(x, weight, eps: float):
    d = x.shape[-1]
    x2 = x.reshape(-1, d)                                 # [N, D], a view
    ms = nk.mean(nk.square(x2, dtype=nk.float32), 1, keepdim=True)   # [N, 1]
    rstd = nk.rsqrt(ms + eps)                             # [N, 1] float32
    y = nk.empty(x.shape, x.dtype)
    nk.mul(x2 * rstd, weight, out=y.reshape(-1, d))       # weight broadcasts over rows
    return y, rstd


@nk.kernel
def rms_norm_bwd(dy, x, weight, rstd):
    d = x.shape[-1]
    x2, dy2 = x.reshape(-1, d), dy.reshape(-1, d)
    xhat = x2 * rstd                                      # [N, D] float32
    dw = nk.empty(weight.shape, weight.dtype)
    nk.sum(dy2 * xhat, 0, out=dw)
    g = dy2 * weight                                      # d loss / d xhat
    dot = nk.mean(g * xhat, 1, keepdim=True)              # [N, 1]
    dx = nk.empty(x.shape, x.dtype)
    nk.mul(g - xhat * dot, rstd, out=dx.reshape(-1, d))
    return dx, dw


@nk.op("examples::rms_norm", autocast=torch.float32)
def rms_norm_op(x: torch.Tensor, weight: torch.Tensor, eps: float) -> tuple[torch.Tensor, torch.Tensor]:
    return rms_norm_fwd(x, weight, eps)


@nk.op("examples::rms_norm_backward")
def rms_norm_backward_op(dy: torch.Tensor, x: torch.Tensor, weight: torch.Tensor,
                         rstd: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return rms_norm_bwd(dy, x, weight, rstd)


def _setup(ctx, inputs, output):
    x, weight, _eps = inputs
    ctx.save_for_backward(x, weight, output[1])


def _backward(ctx, dy, _drstd):
    x, weight, rstd = ctx.saved_tensors
    dx, dw = rms_norm_backward_op(dy.contiguous(), x, weight, rstd)
    return dx, dw, None


rms_norm_op.register_autograd(_backward, setup_context=_setup)


def rms_norm(x, weight, eps=1e-6):
    """RMSNorm over the last dim of a contiguous x (one kernel)."""
    return rms_norm_op(x, weight, eps)[0]


def reference(x, weight, eps=1e-6):
    """The same with PyTorch's operators."""
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps) * weight).to(x.dtype)


class RMSNorm(torch.nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = torch.nn.Parameter(torch.ones(d))

    def forward(self, x):
        return rms_norm(x, self.weight, self.eps)


if __name__ == "__main__":
    x = torch.randn(4, 16, 64, device="neuron", requires_grad=True)
    w = torch.randn(64, device="neuron", requires_grad=True)
    y = rms_norm(x, w)
    y.square().sum().backward()
    gx, gw = x.grad, w.grad
    x.grad = w.grad = None
    ref = reference(x, w)
    ref.square().sum().backward()
    print("forward max error", (y - ref).abs().max().item())
    print("grad x max error", (gx - x.grad).abs().max().item(),
          "grad w max error", (gw - w.grad).abs().max().item())

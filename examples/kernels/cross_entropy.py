# SPDX-License-Identifier: MIT
"""Softmax cross-entropy (mean over rows) for the card, forward and
backward, each one kernel, as a PyTorch operator.

    loss = mean_i( logsumexp(logits_i) - logits_i[target_i] )
    dlogits = (softmax(logits) - onehot(target)) * dloss / N

F.cross_entropy is log_softmax + nll_loss forward and two more operators
backward. The forward kernel computes each row's logsumexp (row max, exp,
row sum: the float32 fast paths of EXPR and REDUCE) and keeps it for the
backward, which writes exp(logits - lse) scaled by dloss / N in one EXPR
and subtracts at the targets (a SCATTER), in one launch.

    python3 examples/kernels/cross_entropy.py
"""
import torch
import torch.nn.functional as F

import torch_neuron.kernels as nk


@nk.kernel
def xent_fwd(logits, target):
    n = logits.shape[0]
    m = nk.max(logits, 1, keepdim=True)                   # [N, 1]
    lse = m + nk.log(nk.sum(nk.exp(logits - m), 1, keepdim=True))
    picked = nk.gather(logits, target.reshape(n, 1), 1)   # [N, 1]: the target's logit
    loss = nk.empty((), nk.float32)
    nk.mean((lse - picked).reshape(n), 0, out=loss)
    return loss, lse


@nk.kernel
def xent_bwd(dloss, logits, target, lse):
    n = logits.shape[0]
    scale = dloss * (1.0 / n)                             # 0-dim, on the card
    grad = nk.exp(logits - lse) * scale                   # softmax * dloss / N
    minus = nk.full((n, 1), -1.0, grad.dtype) * scale
    nk.scatter(grad, target.reshape(n, 1), minus, 1, reduce="add")
    return grad


@nk.op("examples::cross_entropy", autocast=torch.float32)
def cross_entropy_op(logits: torch.Tensor,
                     target: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return xent_fwd(logits, target)


@nk.op("examples::cross_entropy_backward")
def cross_entropy_backward_op(dloss: torch.Tensor, logits: torch.Tensor,
                              target: torch.Tensor, lse: torch.Tensor) -> torch.Tensor:
    return xent_bwd(dloss, logits, target, lse)


def _setup(ctx, inputs, output):
    ctx.save_for_backward(*inputs, output[1])


def _backward(ctx, dloss, _dlse):
    logits, target, lse = ctx.saved_tensors
    return cross_entropy_backward_op(dloss, logits, target, lse), None


cross_entropy_op.register_autograd(_backward, setup_context=_setup)


def cross_entropy(logits, target):
    """F.cross_entropy(logits [N, C], target [N]) with the mean reduction."""
    return cross_entropy_op(logits, target)[0]


def reference(logits, target):
    return F.cross_entropy(logits, target)


if __name__ == "__main__":
    logits = torch.randn(64, 100, device="neuron", requires_grad=True)
    target = torch.randint(0, 100, (64,), device="neuron")
    loss = cross_entropy(logits, target)
    loss.backward()
    g = logits.grad
    logits.grad = None
    ref = reference(logits, target)
    ref.backward()
    print("loss", loss.item(), "reference", ref.item())
    print("grad max error", (g - logits.grad).abs().max().item())

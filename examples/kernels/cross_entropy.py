# SPDX-License-Identifier: MIT
"""Softmax cross-entropy (mean over rows) for the card, forward and
backward, each one kernel, as a PyTorch operator.

    loss = mean_i( logsumexp(logits_i) - logits_i[target_i] )
    dlogits = (softmax(logits) - onehot(target)) * dloss / N

F.cross_entropy is log_softmax + nll_loss forward and two more operators
backward; the backward kernel writes softmax, subtracts 1 at the targets
(a SCATTER) and scales, in one launch.

    python3 examples/kernels/cross_entropy.py
"""
import torch
import torch.nn.functional as F

import torch_neuron.kernels as nk


@nk.kernel
def xent_fwd(logits, target):
    n = logits.shape[0]
    lsm = nk.log_softmax(logits, 1)                       # [N, C]
    picked = nk.gather(lsm, target.reshape(n, 1), 1)      # [N, 1]: log p of the target
    loss = nk.empty((), nk.float32)
    nk.mean(picked.reshape(n), 0, out=loss)
    nk.neg(loss, out=loss)
    return loss


@nk.kernel
def xent_bwd(dloss, logits, target):
    n = logits.shape[0]
    grad = nk.softmax(logits, 1)                          # [N, C]
    minus_one = nk.full((n, 1), -1.0, grad.dtype)
    nk.scatter(grad, target.reshape(n, 1), minus_one, 1, reduce="add")
    scale = dloss * (1.0 / n)                             # 0-dim, on the card
    nk.mul(grad, scale, out=grad)
    return grad


@nk.op("examples::cross_entropy", autocast=torch.float32)
def cross_entropy_op(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    return xent_fwd(logits, target)


@nk.op("examples::cross_entropy_backward")
def cross_entropy_backward_op(dloss: torch.Tensor, logits: torch.Tensor,
                              target: torch.Tensor) -> torch.Tensor:
    return xent_bwd(dloss, logits, target)


def _setup(ctx, inputs, output):
    ctx.save_for_backward(*inputs)


def _backward(ctx, dloss):
    logits, target = ctx.saved_tensors
    return cross_entropy_backward_op(dloss, logits, target), None


cross_entropy_op.register_autograd(_backward, setup_context=_setup)


def cross_entropy(logits, target):
    """F.cross_entropy(logits [N, C], target [N]) with the mean reduction."""
    return cross_entropy_op(logits, target)


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

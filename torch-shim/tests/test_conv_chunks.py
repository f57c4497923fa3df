# SPDX-License-Identifier: MIT
"""Convolutions whose im2col columns exceed the shim's column budget
(Convolution.cpp, kColumnBudget: 4 Mi elements) go through the batch in
chunks: the output, the input gradient (per chunk) and the weight gradient
(accumulated over the chunks) equal the CPU's. Here one batch entry has
16 * 5*5 * 32*32 = 409600 column elements: 10 entries per chunk, so a batch
of 12 is a full chunk and a partial one.

The weight gradient sums 12 * 32*32 products per element, in another order
than the CPU: elements are compared within 1e-4 relative plus 1e-6 of the
largest magnitude (float32 rounding of such sums)."""
import pytest
import torch
import torch.nn.functional as F

N = "neuron"


def run(fn, x, w, b, dtype=torch.float32):
    """fn(x, w, b) on the CPU (float32, on the same values) and on the card;
    the output and the gradients of a weighted sum of it."""
    vals = [t.to(dtype) if t is not None else None for t in (x, w, b)]
    xs = [t.float().clone().requires_grad_() if t is not None else None for t in vals]
    xn = [t.to(N).requires_grad_() if t is not None else None for t in vals]
    want, got = fn(*xs), fn(*xn)
    gout = torch.randn(want.shape).to(dtype)
    (want * gout.float()).sum().backward()
    (got * gout.to(N)).sum().backward()
    rtol = 1e-4 if dtype == torch.float32 else 1.6e-2
    pairs = [(got, want.detach())] + [(a.grad, c.grad) for a, c in zip(xn, xs) if a is not None]
    for g, c in pairs:
        assert g.device.type == N and g.dtype == dtype
        scale = float(c.abs().max())
        torch.testing.assert_close(g.cpu().float(), c.to(dtype).float(), rtol=rtol,
                                   atol=max(1e-5, scale * (1e-6 if dtype == torch.float32
                                                           else 8e-3)))


@pytest.mark.parametrize("groups", [1, 2])
def test_conv2d_in_batch_chunks(groups):
    x = torch.randn(12, 16, 32, 32)
    w = torch.randn(4, 16 // groups, 5, 5) * 0.1
    b = torch.randn(4)
    run(lambda x, w, b: F.conv2d(x, w, b, padding=2, groups=groups), x, w, b)


def test_conv_transpose2d_in_batch_chunks():
    """A transposed convolution is the input gradient's path (and its
    backward the forward and weight-gradient paths), also chunked."""
    x = torch.randn(12, 4, 32, 32)
    w = torch.randn(4, 16, 5, 5) * 0.1
    b = torch.randn(16)
    run(lambda x, w, b: F.conv_transpose2d(x, w, b, padding=2), x, w, b)


def test_conv2d_bfloat16_in_batch_chunks():
    x = torch.randn(12, 16, 32, 32)
    w = torch.randn(4, 16, 5, 5) * 0.1
    run(lambda x, w, b: F.conv2d(x, w, b, padding=2), x, w, None, torch.bfloat16)


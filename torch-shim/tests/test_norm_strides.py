# SPDX-License-Identifier: MIT
"""Batch norm on inputs and gradients of unusual strides: an expanded
(stride-0) gradient, as `.sum().backward()` gives, an expanded input, and a
channels-last one, against the CPU."""
import torch
import torch.nn.functional as F

from conftest import assert_close

N = "neuron"


def test_batch_norm_expanded_grad_and_input():
    torch.manual_seed(0)
    for shape in [(4, 3, 5, 6), (2, 5, 7), (1, 2, 3, 3, 2)]:
        x = torch.randn(shape) * 2 + 1
        xc, xn = x.clone().requires_grad_(), x.to(N).requires_grad_()
        F.batch_norm(xc, None, None, training=True).sum().backward()
        F.batch_norm(xn, None, None, training=True).sum().backward()
        assert_close(xn.grad, xc.grad)
        # An input whose spatial dims are a stride-0 expansion.
        row = torch.randn(shape[0], shape[1], 1)
        ex = row.expand(shape[0], shape[1], 6)
        want = F.batch_norm(ex, None, None, training=True, eps=1e-3)
        got = F.batch_norm(row.to(N).expand(shape[0], shape[1], 6), None, None,
                           training=True, eps=1e-3)
        assert_close(got, want)


def test_batch_norm_channels_last_grad():
    torch.manual_seed(1)
    x = torch.randn(3, 4, 5, 5).to(memory_format=torch.channels_last)
    g = torch.randn(3, 4, 5, 5).to(memory_format=torch.channels_last)
    xc, xn = x.clone().requires_grad_(), x.to(N).requires_grad_()
    w, b = torch.randn(4).requires_grad_(), torch.randn(4).requires_grad_()
    wn, bn = w.detach().to(N).requires_grad_(), b.detach().to(N).requires_grad_()
    (F.batch_norm(xc, None, None, w, b, True) * g).sum().backward()
    (F.batch_norm(xn, None, None, wn, bn, True) * g.to(N)).sum().backward()
    for c, d in [(xc, xn), (w, wn), (b, bn)]:
        assert_close(d.grad, c.grad)

# SPDX-License-Identifier: MIT
"""The example kernels (examples/kernels/) against the same computation
composed of PyTorch operators: forward and backward, float32 and
bfloat16, eager, under torch.compile(backend="neuron", fullgraph=True)
and inside a NeuronGraph capture."""
import os
import sys

import pytest
import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples", "kernels"))

import adamw  # noqa: E402
import attention  # noqa: E402
import cross_entropy  # noqa: E402
import rmsnorm  # noqa: E402

dev = "neuron"
TOL = {torch.float32: dict(rtol=1e-5, atol=1e-5), torch.bfloat16: dict(rtol=2e-2, atol=2e-2)}


def grads_of(fn, *inputs):
    """fn(*inputs) and the gradients of sum(out * fixed weights) w.r.t.
    the floating inputs."""
    ins = [t.detach().clone().requires_grad_(t.is_floating_point()) for t in inputs]
    out = fn(*ins)
    torch.manual_seed(123)
    w = torch.randn(out.shape, dtype=torch.float32).to(out.device, out.dtype)
    (out * w).sum().backward()
    return out.detach(), [t.grad for t in ins if t.is_floating_point()]


def check_fwd_bwd(fn, ref, inputs, dtype, tol=None):
    tol = tol or TOL[dtype]
    out, g = grads_of(fn, *inputs)
    rout, rg = grads_of(ref, *inputs)
    torch.testing.assert_close(out.float().cpu(), rout.float().cpu(), **tol)
    for a, b in zip(g, rg):
        torch.testing.assert_close(a.float().cpu(), b.float().cpu(), **tol)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_rmsnorm(dtype):
    x = torch.randn(3, 5, 32, device=dev).to(dtype)
    w = (1 + 0.1 * torch.randn(32, device=dev)).to(dtype)
    check_fwd_bwd(rmsnorm.rms_norm, rmsnorm.reference, (x, w), dtype)


def test_cross_entropy():
    logits = torch.randn(16, 40, device=dev)
    target = torch.randint(0, 40, (16,), device=dev)
    check_fwd_bwd(cross_entropy.cross_entropy, cross_entropy.reference, (logits, target),
                  torch.float32)


@pytest.mark.parametrize("block", [8, 32])       # key tiles with the online softmax; one tile
@pytest.mark.parametrize("causal", [False, True])
def test_attention(causal, block):
    q, k, v = (torch.randn(2, 2, 24, 8, device=dev) for _ in range(3))
    check_fwd_bwd(lambda q, k, v: attention.attention(q, k, v, causal, block=block),
                  lambda q, k, v: attention.reference(q, k, v, causal), (q, k, v),
                  torch.float32, tol=dict(rtol=1e-4, atol=1e-5))


def test_attention_bfloat16():
    """bfloat16 q, k, v (autocast hands them to the kernel so): forward and
    backward against float32 SDPA, within bfloat16's tolerance."""
    q, k, v = (torch.randn(1, 2, 16, 8, device=dev).bfloat16() for _ in range(3))
    check_fwd_bwd(lambda q, k, v: attention.attention(q, k, v, True, block=8).float(),
                  lambda q, k, v: attention.reference(q.float(), k.float(), v.float(), True),
                  (q, k, v), torch.bfloat16, tol=dict(rtol=3e-2, atol=3e-2))


def test_adamw_matches_torch():
    torch.manual_seed(0)
    ps = [torch.randn(n, device=dev, requires_grad=True) for n in (10, 33, 7)]
    ref = [p.detach().clone().requires_grad_() for p in ps]
    opt = adamw.FusedAdamW(ps, lr=1e-2, weight_decay=0.1)
    ropt = torch.optim.AdamW(ref, lr=1e-2, weight_decay=0.1, foreach=False)
    before = torch.neuron.compile_stats()["nk_kernels"].get("examples::adamw_", {}).get("compiles", 0)
    for i in range(4):
        for group in (ps, ref):
            for p in group:
                p.grad = torch.cos(p.detach() * (i + 1))
        opt.step()
        ropt.step()
    for a, b in zip(ps, ref):
        torch.testing.assert_close(a.detach().cpu(), b.detach().cpu(), rtol=1e-5, atol=1e-6)
    # one kernel for the whole training: the step count is on the card
    after = torch.neuron.compile_stats()["nk_kernels"]["examples::adamw_"]
    assert after["compiles"] + after["cache_hits"] - before <= 1


def test_compiled_fullgraph_no_break():
    """The operators inside torch.compile: one node each, no graph break,
    the backward through register_autograd."""
    torch._dynamo.reset()

    def step(x, w, logits, target):
        y = rmsnorm.rms_norm(x, w)
        return y.square().mean() + cross_entropy.cross_entropy(logits, target)

    x = torch.randn(4, 16, device=dev)
    w = torch.ones(16, device=dev)
    logits = torch.randn(8, 10, device=dev)
    target = torch.randint(0, 10, (8,), device=dev)
    ins = [t.clone().requires_grad_(t.is_floating_point()) for t in (x, w, logits, target)]
    cins = [t.clone().requires_grad_(t.is_floating_point()) for t in (x, w, logits, target)]
    ref = step(*ins)
    ref.backward()
    compiled = torch.compile(step, backend="neuron", fullgraph=True)
    got = compiled(*cins)
    got.backward()
    torch.testing.assert_close(got.detach().cpu(), ref.detach().cpu(), rtol=1e-5, atol=1e-5)
    for a, b in zip(cins, ins):
        if a.grad is not None:
            torch.testing.assert_close(a.grad.cpu(), b.grad.cpu(), rtol=1e-5, atol=1e-5)
    st = torch.neuron.compile_stats()
    assert st["eager_graphs"] == 0, st["eager_fallbacks"]


def test_attention_compiled_fullgraph():
    torch._dynamo.reset()
    q, k, v = (torch.randn(1, 2, 16, 8, device=dev) for _ in range(3))
    f = torch.compile(lambda q, k, v: attention.attention(q, k, v, True, 8) * 2.0,
                      backend="neuron", fullgraph=True)
    torch.testing.assert_close(f(q, k, v).cpu(), 2 * attention.reference(q, k, v, True).cpu(),
                               rtol=1e-4, atol=1e-5)


def test_neuron_graph_capture():
    x = torch.randn(6, 32, device=dev)
    w = torch.randn(32, device=dev)
    rmsnorm.rms_norm(x, w)                 # compiled before the capture
    g = torch.neuron.NeuronGraph()
    with torch.neuron.graph(g):
        y = rmsnorm.rms_norm(x, w)
    x.copy_(torch.randn(6, 32, device=dev))
    g.replay()
    torch.testing.assert_close(y.cpu(), rmsnorm.reference(x, w).cpu(), rtol=1e-5, atol=1e-5)


def test_autocast_declared_dtype():
    x = torch.randn(4, 32, device=dev)
    w = torch.ones(32, device=dev)
    with torch.autocast("neuron", dtype=torch.bfloat16):
        h = x.bfloat16()
        y = rmsnorm.rms_norm(h, w)
    assert y.dtype == torch.float32        # declared autocast=torch.float32
    torch.testing.assert_close(y.cpu(), rmsnorm.reference(h.float(), w).cpu(),
                               rtol=1e-5, atol=1e-5)


@pytest.mark.skipif(torch.neuron.device_count() < 2, reason="one card")
def test_second_card():
    with torch.neuron.device(1):
        x = torch.randn(4, 32, device="neuron")
        w = torch.ones(32, device="neuron")
        y = rmsnorm.rms_norm(x, w)
    assert y.device == torch.device("neuron", 1)
    torch.testing.assert_close(y.cpu(), rmsnorm.reference(x, w).cpu(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", ["rmsnorm", "cross_entropy", "attention"])
def test_pytorch_opcheck(name):
    """PyTorch's own checker of custom operators (torch.library.opcheck):
    the schema, the fake implementation against the kernel, AOTAutograd
    with dynamic shapes. (Its autograd-registration check is, in 2.6,
    written for CPU and CUDA only.)"""
    if name == "rmsnorm":
        op, args = rmsnorm.rms_norm_op, (torch.randn(4, 32, device=dev, requires_grad=True),
                                         torch.randn(32, device=dev, requires_grad=True), 1e-6)
    elif name == "cross_entropy":
        op, args = cross_entropy.cross_entropy_op, (
            torch.randn(8, 10, device=dev, requires_grad=True),
            torch.randint(0, 10, (8,), device=dev))
    else:
        op, args = attention.attention_op, tuple(
            torch.randn(1, 2, 16, 8, device=dev, requires_grad=True) for _ in range(3)) + (True, 8)
    res = torch.library.opcheck(op, args, test_utils=("test_schema", "test_faketensor",
                                                      "test_aot_dispatch_dynamic"))
    assert set(res.values()) == {"SUCCESS"}, res

# SPDX-License-Identifier: MIT
"""Batch norm (training with running-stat updates, eval), instance norm and
group norm on the card against the CPU, forward and backward, and a small
ResNet-style network training on the card with the CPU's losses."""
import pytest
import torch
import torch.nn.functional as F

from conftest import assert_close

N = "neuron"


def leaves(*ts, dtype=torch.float32):
    cpu = [t.to(dtype).requires_grad_() if t is not None else None for t in ts]
    dev = [t.detach().to(N).requires_grad_() if t is not None else None for t in cpu]
    return cpu, dev


def check_grads(want, got, cpu, dev, dtype=torch.float32):
    assert_close(got, want.detach(), dtype)
    gout = torch.randn(want.shape).to(dtype)
    (want * gout).sum().backward()
    (got * gout.to(N)).sum().backward()
    for c, d in zip(cpu, dev):
        if c is not None:
            assert_close(d.grad, c.grad, dtype)


@pytest.mark.parametrize("shape", [(4, 3, 5, 6), (2, 5, 7), (3, 4), (1, 2, 3, 3, 2), (5, 3, 1, 1)])
@pytest.mark.parametrize("affine", [True, False])
def test_batch_norm_train(shape, affine):
    C = shape[1]
    w, b = (torch.randn(C), torch.randn(C)) if affine else (None, None)
    (x, wc, bc), (xn, wn, bn) = leaves(torch.randn(shape) * 3 + 1, w, b)
    rm, rv = torch.randn(C), torch.rand(C) + 0.5
    rmn, rvn = rm.to(N), rv.to(N)
    want = F.batch_norm(x, rm, rv, wc, bc, True, 0.3, 1e-3)
    got = F.batch_norm(xn, rmn, rvn, wn, bn, True, 0.3, 1e-3)
    assert_close(rmn, rm)
    assert_close(rvn, rv)
    check_grads(want, got, (x, wc, bc), (xn, wn, bn))


def test_batch_norm_eval_and_no_stats():
    C = 4
    (x, w, b), (xn, wn, bn) = leaves(torch.randn(3, C, 5, 5), torch.randn(C), torch.randn(C))
    rm, rv = torch.randn(C), torch.rand(C) + 0.5
    want = F.batch_norm(x, rm, rv, w, b, False, 0.1, 1e-5)
    got = F.batch_norm(xn, rm.to(N), rv.to(N), wn, bn, False, 0.1, 1e-5)
    check_grads(want, got, (x, w, b), (xn, wn, bn))
    (x,), (xn,) = leaves(torch.randn(3, C, 4, 4))
    check_grads(F.batch_norm(x, None, None, training=True),
                F.batch_norm(xn, None, None, training=True), (x,), (xn,))


def test_batch_norm_module_channels_last_bf16():
    torch.manual_seed(0)
    m = torch.nn.BatchNorm2d(6, momentum=None)  # cumulative average
    mn = torch.nn.BatchNorm2d(6, momentum=None).to(N)
    for _ in range(2):
        x = torch.randn(2, 6, 4, 5).contiguous(memory_format=torch.channels_last)
        assert_close(mn(x.to(N)), m(x).detach())
    assert_close(mn.running_mean, m.running_mean)
    assert_close(mn.running_var, m.running_var)
    assert int(mn.num_batches_tracked) == 2
    m.eval()
    mn.eval()
    x = torch.randn(2, 6, 4, 5)
    assert_close(mn(x.to(N)), m(x).detach())
    C = 3
    (x, w, b), (xn, wn, bn) = leaves(torch.randn(4, C, 5, 5), torch.randn(C), torch.randn(C),
                                     dtype=torch.bfloat16)
    rm, rv = torch.zeros(C, dtype=torch.bfloat16), torch.ones(C, dtype=torch.bfloat16)
    rmn, rvn = rm.to(N), rv.to(N)
    want = F.batch_norm(x, rm, rv, w, b, True)
    got = F.batch_norm(xn, rmn, rvn, wn, bn, True)
    assert_close(rmn, rm, torch.bfloat16)
    assert_close(rvn, rv, torch.bfloat16)
    check_grads(want, got, (x, w, b), (xn, wn, bn), torch.bfloat16)


def test_native_batch_norm_legit_variants():
    """The _native_batch_norm_legit* overloads (export / compile paths)."""
    C = 3
    x, w, b = torch.randn(2, C, 4, 4), torch.randn(C), torch.randn(C)
    rm, rv = torch.randn(C), torch.rand(C) + 0.5
    rmn, rvn = rm.to(N), rv.to(N)
    aten = torch.ops.aten
    want = aten._native_batch_norm_legit(x, w, b, rm, rv, True, 0.1, 1e-5)
    got = aten._native_batch_norm_legit(x.to(N), w.to(N), b.to(N), rmn, rvn, True, 0.1, 1e-5)
    for g, c in zip(got, want):
        assert_close(g, c)
    assert_close(rmn, rm)
    assert_close(rvn, rv)
    want = aten._native_batch_norm_legit.no_stats(x, w, b, True, 0.1, 1e-5)
    got = aten._native_batch_norm_legit.no_stats(x.to(N), w.to(N), b.to(N), True, 0.1, 1e-5)
    for g, c in zip(got, want):
        assert_close(g, c)
    want = aten._native_batch_norm_legit_no_training(x, w, b, rm, rv, 0.1, 1e-5)
    got = aten._native_batch_norm_legit_no_training(x.to(N), w.to(N), b.to(N), rm.to(N),
                                                    rv.to(N), 0.1, 1e-5)
    assert_close(got[0], want[0])
    assert got[1].shape == want[1].shape == (0,)


def test_instance_norm():
    C = 4
    (x, w, b), (xn, wn, bn) = leaves(torch.randn(2, C, 5, 6), torch.randn(C), torch.randn(C))
    rm, rv = torch.randn(C), torch.rand(C) + 0.5
    rmn, rvn = rm.to(N), rv.to(N)
    want = F.instance_norm(x, rm, rv, w, b, use_input_stats=True, momentum=0.2)
    got = F.instance_norm(xn, rmn, rvn, wn, bn, use_input_stats=True, momentum=0.2)
    assert_close(rmn, rm)
    assert_close(rvn, rv)
    check_grads(want, got, (x, w, b), (xn, wn, bn))


@pytest.mark.parametrize("groups,shape", [(1, (2, 6, 5, 4)), (3, (2, 6, 5, 4)), (6, (1, 6, 7)),
                                          (2, (3, 4))])
def test_group_norm(groups, shape):
    C = shape[1]
    (x, w, b), (xn, wn, bn) = leaves(torch.randn(shape) * 2 - 1, torch.randn(C), torch.randn(C))
    check_grads(F.group_norm(x, groups, w, b, 1e-4), F.group_norm(xn, groups, wn, bn, 1e-4),
                (x, w, b), (xn, wn, bn))
    (x,), (xn,) = leaves(torch.randn(shape), dtype=torch.bfloat16)
    check_grads(F.group_norm(x, groups), F.group_norm(xn, groups), (x,), (xn,), torch.bfloat16)


def test_norm_errors():
    with pytest.raises(RuntimeError, match="float32, float64, bfloat16 and float16"):
        F.batch_norm(torch.ones(2, 3, dtype=torch.int64).to(N), None, None, training=True)


class Block(torch.nn.Module):
    """conv-bn-relu-maxpool, a residual pair of convs, adaptive avg pool, linear."""

    def __init__(self):
        super().__init__()
        self.stem = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, 1, 1, bias=False),
                                        torch.nn.BatchNorm2d(8), torch.nn.ReLU(),
                                        torch.nn.MaxPool2d(3, 2, 1))
        self.c1 = torch.nn.Conv2d(8, 8, 3, 1, 1, bias=False)
        self.b1 = torch.nn.BatchNorm2d(8)
        self.c2 = torch.nn.Conv2d(8, 8, 3, 1, 1, bias=False)
        self.b2 = torch.nn.BatchNorm2d(8)
        self.head = torch.nn.Linear(8, 10)

    def forward(self, x):
        x = self.stem(x)
        y = F.relu(self.b1(self.c1(x)))
        x = F.relu(x + self.b2(self.c2(y)))
        return self.head(F.adaptive_avg_pool2d(x, 1).flatten(1))


def test_resnet_block_trains_like_cpu():
    torch.manual_seed(0)
    cpu = Block()
    dev = Block()
    dev.load_state_dict(cpu.state_dict())
    dev.to(N)
    x, y = torch.randn(4, 3, 16, 16), torch.randint(0, 10, (4,))
    xn, yn = x.to(N), y.to(N)
    oc = torch.optim.SGD(cpu.parameters(), lr=0.1, momentum=0.9)
    od = torch.optim.SGD(dev.parameters(), lr=0.1, momentum=0.9)
    for _ in range(3):
        lc = F.cross_entropy(cpu(x), y)
        ld = F.cross_entropy(dev(xn), yn)
        torch.testing.assert_close(ld.item(), lc.item(), rtol=1e-4, atol=1e-5)
        oc.zero_grad()
        od.zero_grad()
        lc.backward()
        ld.backward()
        oc.step()
        od.step()
    assert_close(dev.b1.running_mean, cpu.b1.running_mean)
    assert_close(dev.c1.weight, cpu.c1.weight.detach())

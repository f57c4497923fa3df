# SPDX-License-Identifier: MIT
"""Weight normalisation on the card: the fused forward and backward
(aten::_weight_norm_interface and its backward, taken by torch._weight_norm
for dim 0 and the last dim) against the CPU's kernels, and both module forms
(torch.nn.utils.weight_norm, torch.nn.utils.parametrizations.weight_norm)
training with dim 0, the last dim and dim=None (norm over the whole weight,
torch._weight_norm's composite path); conftest fails any test where an
operator fell back to the CPU."""
import pytest
import torch
import torch.nn.functional as F

from conftest import assert_close

# A conv1d weight [out, in / groups, kernel], as in wav2vec2's positional
# convolution (normalised over dim 2, the last).
SHAPE = (6, 4, 5)


@pytest.mark.parametrize("dim", [0, 2])
def test_interface_forward_and_backward_match_cpu(dim):
    v = torch.randn(SHAPE)
    g = torch.rand([SHAPE[i] if i == dim else 1 for i in range(3)]) + 0.5
    w, norm = torch._weight_norm_interface(v, g, dim)
    nw, nnorm = torch._weight_norm_interface(v.to("neuron"), g.to("neuron"), dim)
    assert nnorm.shape == norm.shape and nnorm.dtype == norm.dtype
    assert_close(nw, w)
    assert_close(nnorm, norm)
    gw = torch.randn(SHAPE)
    gv, gg = torch.ops.aten._weight_norm_interface_backward(gw, v, g, norm, dim)
    ngv, ngg = torch.ops.aten._weight_norm_interface_backward(gw.to("neuron"), v.to("neuron"),
                                                     g.to("neuron"), nnorm, dim)
    assert ngg.shape == gg.shape
    assert_close(ngv, gv)
    assert_close(ngg, gg)


def test_interface_bfloat16_keeps_a_float_norm():
    v = torch.randn(SHAPE).bfloat16()
    g = (torch.rand(SHAPE[0], 1, 1) + 0.5).bfloat16()
    w, norm = torch._weight_norm_interface(v, g, 0)
    nw, nnorm = torch._weight_norm_interface(v.to("neuron"), g.to("neuron"), 0)
    assert nnorm.dtype == norm.dtype == torch.float32
    assert_close(nw, w, torch.bfloat16)
    assert_close(nnorm, norm)


def test_interface_refuses_a_middle_dim():
    v = torch.randn(SHAPE, device="neuron")
    g = torch.ones(1, SHAPE[1], 1, device="neuron")
    with pytest.raises(RuntimeError, match="dim 0 or the last dim"):
        torch._weight_norm_interface(v, g, 1)


def _train(conv, x, steps=2):
    """Losses and the parameters' gradients after @steps of SGD."""
    opt = torch.optim.SGD(conv.parameters(), lr=0.1)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = F.gelu(conv(x)).pow(2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.detach())
    return losses, {n: p.grad for n, p in conv.named_parameters()}


@pytest.mark.parametrize("form", ["hook", "parametrization"])
@pytest.mark.parametrize("dim", [0, 2, None])
def test_weight_norm_conv_trains_like_cpu(form, dim):
    def make():
        conv = torch.nn.Conv1d(SHAPE[1] * 2, SHAPE[0], SHAPE[2], padding=2, groups=2)
        if form == "hook":
            return torch.nn.utils.weight_norm(conv, dim=dim)
        return torch.nn.utils.parametrizations.weight_norm(conv, dim=dim)

    torch.manual_seed(0)
    cpu = make()
    torch.manual_seed(0)
    dev = make().to("neuron")
    x = torch.randn(3, SHAPE[1] * 2, 11)
    want_losses, want = _train(cpu, x)
    got_losses, got = _train(dev, x.to("neuron"))
    for a, b in zip(got_losses, want_losses):
        assert_close(a, b)
    assert got.keys() == want.keys() and len(got) == 3
    for name in want:
        assert_close(got[name], want[name], atol=1e-5, rtol=1e-4)

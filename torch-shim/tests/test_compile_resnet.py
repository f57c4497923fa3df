# SPDX-License-Identifier: MIT
"""torch.compile(backend="neuron") of a ResNet in training mode: convolutions,
batch norm (which updates its running statistics, buffers the graph
mutates), max pooling, residual adds, the loss and their backward run as
compiled kernels, with the same numbers as eager `neuron` (docs/compile.md:
a kernel replays the instructions the eager operations encode, so losses,
parameters and running statistics are compared EXACTLY).

The model is narrow (a stem and one of torchvision's own BasicBlocks, widths 8 and 16, 16x16
images, batch 4) so that dynamo and AOTAutograd trace it quickly under TCG;
examples/bench_step.py resnet18 --compile runs torchvision's ResNet-18."""
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch_neuron

torchvision = pytest.importorskip("torchvision", reason="torchvision is not installed",
                                  exc_type=ImportError)
from torchvision.models.resnet import BasicBlock  # noqa: E402

N = "neuron"


pytestmark = pytest.mark.usefixtures("fresh_compile")


def narrow_resnet():
    """A ResNet's shapes in small: stem conv-BN-ReLU-maxpool, a strided
    block with a 1x1 conv + BN downsample, pooling, fc."""
    down = nn.Sequential(nn.Conv2d(8, 16, 1, stride=2, bias=False), nn.BatchNorm2d(16))
    return nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(inplace=True),
        nn.MaxPool2d(3, stride=2, padding=1),
        BasicBlock(8, 16, stride=2, downsample=down),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 10))


def train(compiled, steps=2):
    """Losses, parameters and batch-norm buffers after a few SGD steps."""
    torch.manual_seed(0)
    model = narrow_resnet().to(N).train()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4)
    g = torch.Generator().manual_seed(1)

    def loss_fn(x, y):
        return F.cross_entropy(model(x), y)

    if compiled:
        loss_fn = torch.compile(loss_fn, backend="neuron")
    losses = []
    for _ in range(steps):
        x = torch.randn(4, 3, 16, 16, generator=g).to(N)
        y = torch.randint(0, 10, (4,), generator=g).to(N)
        loss = loss_fn(x, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    params = {k: v.detach().cpu() for k, v in model.named_parameters()}
    buffers = {k: v.cpu() for k, v in model.named_buffers()}
    return losses, params, buffers


@pytest.mark.slow
def test_resnet_training_compiled_equals_eager():
    eager = train(False)
    torch_neuron.reset_compile_stats()
    compiled = train(True)
    assert compiled[0] == eager[0]
    for k, p in eager[1].items():
        assert torch.equal(compiled[1][k], p), k
    # the batch norms' running statistics were updated by the compiled
    # forward (BN in training mode mutates them), exactly as eagerly
    bufs = compiled[2]
    assert sum(k.endswith("running_mean") for k in bufs) == 4
    for k, b in eager[2].items():
        assert torch.equal(bufs[k], b), k
        if k.endswith("running_mean"):
            assert b.abs().max() > 0, k  # moved from its initial zeros
        elif k.endswith("running_var"):
            assert not torch.equal(b, torch.ones_like(b)), k
        else:
            assert int(b) == 2, k  # num_batches_tracked: one per step
    s = torch_neuron.compile_stats()
    assert s["eager_graphs"] == 0 and s["eager_fallbacks"] == {}
    assert s["dynamo_graphs"] == 1 and s["graphs"] == 2 and s["captures"] == 2
    assert s["launches"] == 2 * 2  # forward and backward, each step


# SPDX-License-Identifier: MIT
"""``module.to("neuron")`` and back keeps every Parameter object, as
``.cuda()`` does: tied weights stay tied and an optimizer made before the
move trains the moved model (torch_neuron/modules.py)."""
import copy

import torch
from torch import nn

from conftest import assert_close

N = "neuron"


class TiedLM(nn.Module):
    """An embedding and an output head sharing one weight (GPT-2's tie)."""

    def __init__(self, vocab=11, dim=8):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.mix = nn.Linear(dim, dim)
        self.head = nn.Linear(dim, vocab, bias=False)
        self.head.weight = self.emb.weight

    def forward(self, x):
        return self.head(torch.tanh(self.mix(self.emb(x))))


def train(model, opt, dev, steps=3):
    torch.manual_seed(7)
    x = torch.randint(0, 11, (4, 5))
    y = torch.randint(0, 11, (4, 5))
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        out = model(x.to(dev))
        loss = nn.functional.cross_entropy(out.reshape(-1, 11), y.to(dev).reshape(-1))
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def test_tied_weights_stay_tied():
    m = TiedLM()
    ids = {name: id(p) for name, p in m.named_parameters()}
    m.to(N)
    assert m.head.weight is m.emb.weight
    assert len(list(m.parameters())) == 3
    assert {name: id(p) for name, p in m.named_parameters()} == ids
    assert m.emb.weight.device.type == N
    m.to("cpu")
    assert m.head.weight is m.emb.weight and m.emb.weight.device.type == "cpu"


def test_tied_model_trains_as_on_cpu():
    torch.manual_seed(1)
    cpu = TiedLM()
    dev = copy.deepcopy(cpu).to(N)
    want = train(cpu, torch.optim.SGD(cpu.parameters(), lr=0.5), "cpu")
    got = train(dev, torch.optim.SGD(dev.parameters(), lr=0.5), N)
    torch.testing.assert_close(torch.tensor(got), torch.tensor(want), rtol=1e-4, atol=1e-5)
    assert_close(dev.emb.weight, cpu.emb.weight)
    assert dev.head.weight is dev.emb.weight


def test_optimizer_made_before_the_move_trains_the_moved_model():
    torch.manual_seed(2)
    cpu = TiedLM()
    dev = copy.deepcopy(cpu)
    opt = torch.optim.AdamW(dev.parameters(), lr=0.1)
    dev.to(N)
    before = dev.mix.weight.detach().cpu().clone()
    got = train(dev, opt, N)
    want = train(cpu, torch.optim.AdamW(cpu.parameters(), lr=0.1), "cpu")
    assert not torch.equal(dev.mix.weight.detach().cpu(), before)
    torch.testing.assert_close(torch.tensor(got), torch.tensor(want), rtol=1e-4, atol=1e-5)


def test_gradients_move_with_their_parameters():
    m = nn.Linear(3, 2)
    m(torch.randn(4, 3)).sum().backward()
    g = m.weight.grad.clone()
    p = m.weight
    m.to(N)
    assert m.weight is p and m.weight.grad.device.type == N
    assert torch.equal(m.weight.grad.cpu(), g)


def test_other_conversions_are_unchanged():
    m = nn.Linear(3, 2)
    m.to(N)
    p = m.weight
    m.to(torch.bfloat16)
    assert m.weight.dtype == torch.bfloat16 and m.weight.device.type == N
    assert not torch.__future__.get_swap_module_params_on_conversion()
    del p


def test_a_model_whose_output_is_alive_moves_and_keeps_its_ties():
    """An output still holding the autograd graph pins the Parameters (no
    swap possible): the move makes new ones and restores the tie."""
    torch.manual_seed(3)
    cpu = TiedLM()
    out = cpu(torch.randint(0, 11, (2, 3)))  # keeps the graph alive
    dev = copy.deepcopy(cpu)
    keep = dev(torch.randint(0, 11, (2, 3)))
    dev.to(N)
    assert dev.head.weight is dev.emb.weight and dev.emb.weight.device.type == N
    assert len(list(dev.parameters())) == 3
    want = train(cpu, torch.optim.SGD(cpu.parameters(), lr=0.5), "cpu")
    got = train(dev, torch.optim.SGD(dev.parameters(), lr=0.5), N)
    torch.testing.assert_close(torch.tensor(got), torch.tensor(want), rtol=1e-4, atol=1e-5)
    del out, keep

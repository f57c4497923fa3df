# SPDX-License-Identifier: MIT
"""Recurrent layers on the card: nn.LSTM (stacked, bidirectional,
batch_first), nn.GRU, LSTMCell and GRUCell forward and backward against the
CPU (their fused cells and the cells' backward run on the card), and
examples/lstm.py's first losses against the CPU's."""
import copy
import os
import runpy
import sys

import pytest
import torch
import torch.nn as nn

from conftest import assert_close

N = "neuron"
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def compare(mod, inputs, outs_of, call=lambda m, *xs: m(*xs)):
    """Run @mod and a neuron copy on @inputs; compare outputs and all grads."""
    mod.zero_grad(set_to_none=True)
    dev = copy.deepcopy(mod).to(N)
    xc = [t.clone().requires_grad_() for t in inputs]
    xn = [t.detach().to(N).requires_grad_() for t in inputs]
    want, got = outs_of(call(mod, *xc)), outs_of(call(dev, *xn))
    loss_c = sum((w * torch.linspace(-1, 1, w.numel()).view(w.shape)).sum() for w in want)
    loss_n = sum((g * torch.linspace(-1, 1, g.numel()).view(g.shape).to(N)).sum()
                 for g in got)
    for w, g in zip(want, got):
        assert_close(g, w.detach())
    loss_c.backward()
    loss_n.backward()
    for a, b in zip(xc, xn):
        assert_close(b.grad, a.grad)
    for (name, p), q in zip(mod.named_parameters(), dev.parameters()):
        assert q.grad is not None, name
        assert_close(q.grad, p.grad)


def flat(out):
    y, h = out
    return [y] + (list(h) if isinstance(h, tuple) else [h])


@pytest.mark.parametrize("bidir", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
def test_lstm(bidir, batch_first):
    lstm = nn.LSTM(5, 7, num_layers=2, bidirectional=bidir, batch_first=batch_first)
    x = torch.randn(3, 4, 5)
    d = 2 * (2 if bidir else 1)
    h0, c0 = torch.randn(d, 3 if batch_first else 4, 7), torch.randn(d, 3 if batch_first else 4, 7)
    compare(lstm, [x, h0, c0], flat, call=lambda m, x, h, c: m(x, (h, c)))
    compare(lstm, [x], lambda o: flat(o))  # zero initial state


@pytest.mark.parametrize("bidir", [False, True])
def test_gru(bidir):
    gru = nn.GRU(4, 6, num_layers=2, bidirectional=bidir, batch_first=True)
    x, h0 = torch.randn(2, 5, 4), torch.randn(4 if bidir else 2, 2, 6)
    compare(gru, [x, h0], lambda o: flat(o))


def test_no_bias_and_cells():
    compare(nn.LSTM(3, 4, bias=False), [torch.randn(6, 2, 3)], flat)
    compare(nn.GRU(3, 4, bias=False), [torch.randn(6, 2, 3)], flat)
    cell = nn.LSTMCell(5, 3)
    x, h, c = torch.randn(4, 5), torch.randn(4, 3), torch.randn(4, 3)
    pair = dict(call=lambda m, x, h, c: m(x, (h, c)))
    compare(cell, [x, h, c], lambda o: list(o), **pair)
    # only the cell state's gradient flows (hy unused): grad_hy is undefined
    compare(cell, [x, h, c], lambda o: [o[1]], **pair)
    compare(nn.GRUCell(5, 3), [torch.randn(4, 5), torch.randn(4, 3)], lambda o: [o])
    compare(nn.GRUCell(5, 3), [torch.randn(5)], lambda o: [o])  # unbatched


class _Tuple(nn.Module):
    def __init__(self, cell):
        super().__init__()
        self.cell = cell

    def forward(self, x, h, c):
        return self.cell(x, (h, c))


def test_lstm_cell_state_tuple():
    compare(_Tuple(nn.LSTMCell(4, 2)), [torch.randn(3, 4), torch.randn(3, 2),
                                         torch.randn(3, 2)], lambda o: list(o))


def test_fused_cell_checks_shapes():
    ig = torch.randn(2, 8, device=N)
    with pytest.raises(RuntimeError, match="_thnn_fused_lstm_cell"):
        torch.ops.aten._thnn_fused_lstm_cell(ig, ig, torch.randn(2, 3, device=N))
    with pytest.raises(RuntimeError, match="_thnn_fused_gru_cell"):
        torch.ops.aten._thnn_fused_gru_cell(ig, ig, torch.randn(2, 3, device=N))


def test_example_lstm_losses_match_cpu():
    sys.path.insert(0, os.path.join(ROOT, "examples"))
    try:
        import lstm
    finally:
        sys.path.pop(0)
    want = lstm.train("cpu", steps=3, quiet=True)
    got = lstm.train(N, steps=3, quiet=True)
    assert len(got) == 3
    torch.testing.assert_close(torch.tensor(got), torch.tensor(want), rtol=1e-4, atol=1e-5)


@pytest.mark.slow
def test_example_runs_without_fallback(monkeypatch, capsys):
    """The script itself, as `python3 examples/lstm.py --steps 2` runs it
    (in this process: a new interpreter would only add PyTorch's import)."""
    monkeypatch.setenv("TORCH_NEURON_FALLBACK", "error")
    script = os.path.join(ROOT, "examples", "lstm.py")
    monkeypatch.setattr(sys, "argv", [script, "--steps", "2"])
    runpy.run_path(script, run_name="__main__")
    out = capsys.readouterr().out
    assert out.count("loss") == 2, out

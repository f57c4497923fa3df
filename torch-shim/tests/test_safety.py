# SPDX-License-Identifier: MIT
"""What must never happen on "neuron": a result that differs from the CPU's
without an error, or a crash. Each case here once did one of the two."""
import pytest
import torch
import torch.nn as nn

from conftest import assert_close

N = "neuron"


def test_repeat_and_tile_match_cpu():
    """repeat and tile go through aten::unfold, a view: it runs on the card
    (through the CPU it aliased a copy and returned wrong numbers)."""
    x = torch.randn(3, 4)
    xn = x.to(N)
    for reps in [(2, 3), (1, 1, 2), (4, 1), (2, 0)]:
        assert torch.equal(xn.repeat(*reps).cpu(), x.repeat(*reps))
    assert torch.equal(xn.tile((2,)).cpu(), x.tile((2,)))
    assert torch.equal(xn.unfold(1, 2, 1).cpu(), x.unfold(1, 2, 1))
    w = xn.unfold(0, 2, 1)
    assert w.untyped_storage().data_ptr() == xn.untyped_storage().data_ptr()


def test_multihead_attention_bias_kv_matches_cpu():
    """nn.MultiheadAttention(add_bias_kv=True) repeats its bias: it was
    silently wrong in half of PyTorch's own ModuleInfo samples."""
    torch.manual_seed(0)
    m = nn.MultiheadAttention(8, 2, add_bias_kv=True, batch_first=True)
    q = torch.randn(2, 5, 8)
    want, _ = m(q, q, q)
    got, _ = m.to(N)(q.to(N), q.to(N), q.to(N))
    assert_close(got, want.detach(), atol=1e-5)


def test_index_select_of_a_scalar():
    """index_select on a 0-dim tensor gives a 0-dim tensor, as on the CPU."""
    x = torch.tensor(5.0)
    for idx in (torch.tensor([0]), torch.tensor(0)):
        got = x.to(N).index_select(0, idx.to(N))
        assert got.shape == torch.Size([])
        assert got.item() == 5.0
    with pytest.raises(RuntimeError, match="only 1 value"):
        x.to(N).index_select(0, torch.tensor([0, 0], device=N))


def test_complex128_is_refused_not_a_crash():
    """complex64 is a card type; the other complex types are refused where
    a neuron tensor is made (complex results once recursed until the stack
    overflowed)."""
    with pytest.raises(RuntimeError, match="complex64 only"):
        torch.zeros(2, dtype=torch.complex128, device=N)
    with pytest.raises(RuntimeError, match="complex64 only"):
        torch.randn(8, dtype=torch.float64).to(N).to(torch.complex128)


def test_fft_of_float64_is_refused_not_a_crash():
    x = torch.randn(8, dtype=torch.float64, device=N)
    for f in (torch.fft.ifft, torch.fft.ihfft, torch.fft.fft, torch.fft.rfft):
        with pytest.raises(RuntimeError, match="complex"):
            f(x)


def test_view_without_kernel_is_refused():
    """A view operator reaching the CPU fallback is an error, never a copy:
    a library's view operator with a CPU kernel only."""
    lib = torch.library.Library("neuron_safety_test", "DEF")
    lib.define("flat(Tensor(a) x) -> Tensor(a)")
    lib.impl("flat", lambda x: x.view(-1), "CPU")
    with pytest.raises(RuntimeError, match="returns a view"):
        torch.ops.neuron_safety_test.flat(torch.randn(2, 2, device=N))


def test_index_add_into_a_scalar():
    """index_add on a 0-dim tensor (an OpInfo sample) made the card fail the job."""
    x, src = torch.tensor(1.5), torch.tensor(-2.0)
    want = x.index_add(0, torch.tensor([0]), src, alpha=-1)
    got = x.to(N).index_add(0, torch.tensor([0], device=N), src.to(N), alpha=-1)
    assert got.shape == torch.Size([]) and got.item() == want.item()

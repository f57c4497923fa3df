# Owner(s): ["module: PrivateUse1"]
# SPDX-License-Identifier: MIT
"""The caching allocator: statistics, reuse, empty_cache, out of memory."""
import pytest
import torch


def test_stats_return_to_baseline():
    """Memory allocated returns to its baseline once tensors are freed."""
    torch.neuron.synchronize()
    base = torch.neuron.memory_allocated()
    x = torch.empty(1 << 20, device="neuron")
    y = torch.empty(3000, device="neuron")
    assert torch.neuron.memory_allocated() >= base + (4 << 20) + 12000
    assert torch.neuron.max_memory_allocated() >= torch.neuron.memory_allocated()
    assert torch.neuron.memory_reserved() >= torch.neuron.memory_allocated()
    del x, y
    assert torch.neuron.memory_allocated() == base


def test_cache_reuse_and_empty_cache():
    """Freed blocks are reused without growing; empty_cache returns them."""
    x = torch.empty(1 << 18, device="neuron")
    del x
    reserved = torch.neuron.memory_reserved()
    x = torch.empty(1 << 18, device="neuron")
    assert torch.neuron.memory_reserved() == reserved
    del x
    torch.neuron.empty_cache()
    assert torch.neuron.memory_reserved() < reserved


def test_out_of_memory():
    """More than the card holds raises torch.OutOfMemoryError, and the card still works."""
    total = torch.neuron.get_device_properties(0).total_memory
    with pytest.raises(torch.OutOfMemoryError, match="out of device memory"):
        torch.empty(total // 4 + 1024, device="neuron")
    assert (torch.ones(4, device="neuron") * 2).sum().item() == 8


def test_device_properties():
    """The card's name and properties."""
    p = torch.neuron.get_device_properties(0)
    assert p.neuron_cores >= 1 and p.total_memory >= 16 << 20
    assert "Trainium" in torch.neuron.get_device_name(0)


def test_stats_of_another_card_keep_the_current_device():
    """Reading card 1's statistics does not make card 1 current (make check
    boots two cards); a card that does not exist is an error."""
    n = torch.neuron.device_count()
    assert n >= 2, "this test needs two cards (scripts/vm --cards 2)"
    torch.neuron.set_device(0)
    x = torch.empty(1000, device="neuron:1")
    assert torch.neuron.memory_allocated(1) >= 4000
    torch.neuron.max_memory_allocated(1)
    torch.neuron.reset_peak_memory_stats(1)
    assert torch.neuron.current_device() == 0
    assert torch.empty(1, device="neuron").device.index == 0
    del x
    for bad in (n, 300, -1):
        with pytest.raises(RuntimeError, match="out of range"):
            torch.neuron.memory_allocated(bad)
    assert torch.neuron.current_device() == 0

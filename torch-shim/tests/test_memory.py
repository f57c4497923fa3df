# Owner(s): ["module: PrivateUse1"]
# SPDX-License-Identifier: MIT
"""The caching allocator: statistics (torch.cuda's names), reuse, splitting,
fragmentation, empty_cache, out of memory."""
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


# PyTorch's names (torch.cuda.memory_stats()) that the allocator reports.
_POOL_STATS = ("allocation", "segment", "active", "inactive_split", "allocated_bytes",
               "reserved_bytes", "active_bytes", "inactive_split_bytes", "requested_bytes")
_COUNTERS = ("num_alloc_retries", "num_ooms", "num_sync_all_streams",
             "num_device_alloc", "num_device_free")
MiB = 1 << 20


def test_memory_stats_keys_and_values():
    """memory_stats() has torch.cuda's keys, consistent with each other and
    with memory_allocated()/memory_reserved()."""
    before = torch.neuron.memory_stats()
    for name in _POOL_STATS:
        for pool in ("all", "small_pool", "large_pool"):
            for field in ("current", "peak", "allocated", "freed"):
                assert f"{name}.{pool}.{field}" in before
    for name in _COUNTERS:
        assert name in before
    x = torch.empty(3 * MiB // 4, device="neuron")      # 3 MiB: large pool
    y = torch.empty(1000, device="neuron")              # 4000 B: small pool
    st = torch.neuron.memory_stats()
    assert st["allocated_bytes.all.current"] == torch.neuron.memory_allocated()
    assert st["reserved_bytes.all.current"] == torch.neuron.memory_reserved()
    assert st["allocated_bytes.all.peak"] == torch.neuron.max_memory_allocated()
    assert st["reserved_bytes.all.peak"] == torch.neuron.max_memory_reserved()
    assert st["requested_bytes.all.current"] - before["requested_bytes.all.current"] == 3 * MiB + 4000
    assert st["allocation.all.current"] - before["allocation.all.current"] == 2
    assert st["allocated_bytes.large_pool.current"] - before["allocated_bytes.large_pool.current"] >= 3 * MiB
    assert st["allocated_bytes.small_pool.current"] - before["allocated_bytes.small_pool.current"] == 4096
    for name in _POOL_STATS:
        for field in ("current", "allocated", "freed"):
            assert (st[f"{name}.all.{field}"] == st[f"{name}.small_pool.{field}"]
                    + st[f"{name}.large_pool.{field}"]), name
        assert st[f"{name}.all.current"] == st[f"{name}.all.allocated"] - st[f"{name}.all.freed"]
        assert st[f"{name}.all.peak"] >= st[f"{name}.all.current"] >= 0
    assert st["reserved_bytes.all.current"] >= st["active_bytes.all.current"] >= st["allocated_bytes.all.current"]
    assert st["segment.all.current"] >= 2
    del x, y
    after = torch.neuron.memory_stats()
    assert after["allocated_bytes.all.current"] == before["allocated_bytes.all.current"]
    assert after["allocated_bytes.all.freed"] - before["allocated_bytes.all.freed"] >= 3 * MiB + 4096
    text = torch.neuron.memory_summary()
    assert "Allocated memory" in text and "Reserved memory" in text and "num_alloc_retries" in text


def test_reset_peak_and_accumulated():
    x = torch.empty(4 * MiB, device="neuron")
    del x
    assert torch.neuron.max_memory_allocated() >= 16 * MiB + torch.neuron.memory_allocated()
    torch.neuron.reset_peak_memory_stats()
    assert torch.neuron.max_memory_allocated() == torch.neuron.memory_allocated()
    assert torch.neuron.max_memory_reserved() == torch.neuron.memory_reserved()
    torch.neuron.reset_accumulated_memory_stats()
    st = torch.neuron.memory_stats()
    assert st["allocated_bytes.all.allocated"] == st["allocated_bytes.all.freed"] == 0
    assert st["num_device_alloc"] == 0 and st["num_ooms"] == 0


def test_small_tensors_share_a_segment():
    """Small tensors are blocks of one 2 MiB segment, each at its own
    offset; operators on them read and write the right bytes."""
    torch.neuron.empty_cache()
    seg = torch.neuron.memory_stats()["segment.small_pool.current"]
    xs = [torch.full((100,), float(i)).to("neuron") for i in range(20)]
    assert torch.neuron.memory_stats()["segment.small_pool.current"] <= seg + 1
    ptrs = sorted(x.data_ptr() for x in xs)
    assert ptrs[-1] - ptrs[0] < 2 * MiB
    total = xs[0]
    for x in xs[1:]:
        total = total + x * 2
    assert total.cpu().tolist() == [float(sum(2 * i for i in range(1, 20)))] * 100


def test_mem_get_info():
    """(free, total) from the driver: a fresh segment lowers free."""
    torch.neuron.empty_cache()
    free, total = torch.neuron.mem_get_info()
    assert total == torch.neuron.get_device_properties(0).total_memory
    assert 0 < free <= total
    x = torch.empty(16 * MiB, device="neuron")  # 64 MiB
    free2, _ = torch.neuron.mem_get_info()
    assert free - free2 >= 64 * MiB
    del x
    torch.neuron.empty_cache()
    assert torch.neuron.mem_get_info()[0] >= free - MiB


def test_oom_message_and_retry():
    """Out of memory names what was asked, allocated, reserved and free;
    a request that fits once the cache is given back succeeds (a retry)."""
    torch.neuron.empty_cache()
    free, total = torch.neuron.mem_get_info()
    st0 = torch.neuron.memory_stats()
    with pytest.raises(torch.OutOfMemoryError) as err:
        torch.empty(total // 4 + 1024, device="neuron")
    msg = str(err.value)
    assert f"tried to allocate {total + 4096} bytes" in msg
    for word in ("allocated", "reserved", "free", f"{total} bytes in all"):
        assert word in msg, msg
    st1 = torch.neuron.memory_stats()
    assert st1["num_ooms"] == st0["num_ooms"] + 1
    # 40% live, 40% cached, then 50%: only fits once the cache is given back.
    unit = (free // 10) // (2 * MiB) * (2 * MiB)
    a = torch.empty(4 * unit // 4, device="neuron")
    b = torch.empty(4 * unit // 4, device="neuron")
    del b
    c = torch.empty(5 * unit // 4, device="neuron")
    st2 = torch.neuron.memory_stats()
    assert st2["num_alloc_retries"] == st1["num_alloc_retries"] + 1
    assert st2["num_ooms"] == st1["num_ooms"]
    # Written at both ends only: the card's memory is host RAM that QEMU
    # backs page by page as it is first written, and c is half the card.
    c[:MiB].fill_(1.0)
    c[-MiB:].fill_(2.0)
    assert c[0].item() == 1.0 and c[-1].item() == 2.0
    del a, c
    torch.neuron.empty_cache()


def test_fragmentation_is_bounded():
    """Mixed sizes allocated and freed at random: what the allocator
    reserves stays within 2 x the peak allocated + 48 MiB."""
    import random
    rng = random.Random(7)
    torch.neuron.empty_cache()
    torch.neuron.reset_peak_memory_stats()
    live = []
    for _ in range(400):
        if live and (len(live) > 12 or rng.random() < 0.45):
            live.pop(rng.randrange(len(live)))
        elif rng.random() < 0.6:
            live.append(torch.empty(rng.randrange(64, 256 * 1024), device="neuron"))
        else:
            live.append(torch.empty(rng.randrange(300 * 1024, 6 * MiB), device="neuron"))
    peak_alloc = torch.neuron.max_memory_allocated()
    peak_reserved = torch.neuron.max_memory_reserved()
    assert peak_reserved <= 2 * peak_alloc + 48 * MiB, (peak_reserved, peak_alloc)
    del live

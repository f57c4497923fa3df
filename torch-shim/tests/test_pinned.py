# SPDX-License-Identifier: MIT
"""Pinned host memory (host buffers of the card) and asynchronous copies
from and to it: pin_memory(), is_pinned(), torch.empty(pin_memory=True),
non_blocking=True copies that return before their DMA is done, the host
allocator's cache and its refusal to hand out a block a copy still reads,
and a DataLoader(pin_memory=True) training loop."""
import time

import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset

N = "neuron"
MiB = 1 << 20


def host_stats():
    """allocated bytes, reserved bytes, cached blocks, blocks waiting for a DMA"""
    return [int(v) for v in torch.ops.neuron.host_memory_stats()]


def queue_long_work(seconds=2.0):
    """Queue about @seconds of matmuls on the current stream (measured once,
    then repeated) and return without waiting for them."""
    a = torch.randn(1024, 1024, device=N)
    t0 = time.perf_counter()
    (a @ a).sum().item()
    one = time.perf_counter() - t0
    for _ in range(max(2, int(seconds / max(one, 1e-3)))):
        b = a @ a
    return b


def test_pin_memory_and_is_pinned():
    x = torch.randn(64, 33)
    assert not x.is_pinned()
    p = x.pin_memory()
    assert p.is_pinned() and p.device.type == "cpu"
    assert torch.equal(p, x)
    assert p.pin_memory().data_ptr() == p.data_ptr()  # already pinned: itself
    assert p[3:].is_pinned()  # a view into the block
    e = torch.empty(10, 7, pin_memory=True)
    assert e.is_pinned() and e.shape == (10, 7)
    assert torch.zeros(5, pin_memory=True).is_pinned()
    # Only our blocks are pinned: other CPU memory is not.
    assert not torch.empty(4096).is_pinned()
    assert not torch.from_numpy(x.numpy().copy()).is_pinned()


def sync_all():
    for i in range(torch.neuron.device_count()):
        torch.neuron.synchronize(i)


def test_host_allocator_rounds_and_caches():
    sync_all()  # every pinned block's copies are done: empty_cache frees them all
    torch.ops.neuron.host_empty_cache()
    before = host_stats()
    a = torch.empty(5000, dtype=torch.uint8, pin_memory=True)
    st = host_stats()
    assert st[0] - before[0] == 8192  # a power of two, at least a page
    assert st[1] - before[1] == 8192
    ptr = a.data_ptr()
    del a
    assert host_stats()[0] == before[0]
    # Another size of the same class gets the cached block back.
    b = torch.empty(7000, dtype=torch.uint8, pin_memory=True)
    assert b.data_ptr() == ptr
    assert host_stats()[1] == st[1]
    del b
    torch.ops.neuron.host_empty_cache()
    assert host_stats()[1] == before[1]


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64])
def test_pinned_copies_round_trip(dtype):
    x = (torch.randn(300, 17) * 100).to(dtype)
    p = x.pin_memory()
    for non_blocking in (False, True):
        d = p.to(N, non_blocking=non_blocking)
        back = torch.empty(x.shape, dtype=dtype, pin_memory=True)
        back.copy_(d, non_blocking=non_blocking)
        torch.neuron.synchronize()
        assert torch.equal(back, x)
    # Into a non-contiguous card tensor, and from a non-contiguous one.
    d = torch.zeros(17, 300, dtype=dtype, device=N).t()
    d.copy_(p, non_blocking=True)
    back = torch.empty(x.shape, dtype=dtype, pin_memory=True)
    back.copy_(d, non_blocking=True)
    torch.neuron.synchronize()
    assert torch.equal(back, x)


def card_counter(name, card=0):
    """One of the card's counters (sysfs), or None where it cannot be read."""
    try:
        with open(f"/sys/class/accel/accel{card}/device/neuron/{name}") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def test_pinned_block_is_pinned_by_the_driver():
    """A block is a host buffer pinned once, at allocation (the card's
    "pinned" counter grows by its size and stays while the block is cached),
    so that its copies pin nothing more."""
    torch.ones(4, device=N).cpu()  # the stream's own buffers are made
    sync_all()
    torch.ops.neuron.host_empty_cache()
    base = card_counter("pinned")
    if base is None:
        pytest.skip("the card's sysfs counters are not readable here")
    p = torch.empty(4 * MiB // 4, pin_memory=True)
    # (Blocks of earlier tests whose copies were pending may go meanwhile.)
    assert abs(card_counter("pinned") - base - 4 * MiB) < 256 * 1024
    p.normal_()
    d = p.to(N)
    assert torch.equal(d.cpu(), p)
    del p, d
    sync_all()
    torch.ops.neuron.host_empty_cache()
    deadline = time.monotonic() + 5
    while card_counter("pinned") > base and time.monotonic() < deadline:
        time.sleep(0.01)
    assert card_counter("pinned") <= base


def test_pinned_past_the_budget_falls_back_to_per_copy_pinning():
    """With the driver's budget of pinned memory leaving this process
    about 1 MiB, a 2 MiB block is a plain host buffer, whose pages each copy
    pins: still pinned memory as PyTorch sees it, and its copies (each
    within the budget, one in flight at a time) give the same results."""
    param = "/sys/module/neuron/parameters/max_pinned_mb"
    sync_all()
    torch.ops.neuron.host_empty_cache()
    held = card_counter("pinned") or 0  # this process's live blocks among it
    try:
        with open(param) as f:
            old = f.read().strip()
        with open(param, "w") as f:
            f.write(str((held + MiB - 1) // MiB + 1))
    except OSError:
        pytest.skip("needs root: sets neuron.ko's max_pinned_mb")
    try:
        x = torch.randn(2 * MiB // 4)
        p = x.pin_memory()  # 2 MiB: over what is left
        back = torch.zeros_like(x, pin_memory=True)
        assert p.is_pinned() and back.is_pinned()
        d = torch.empty_like(x, device=N)
        q = 64 * 1024  # 256 KiB a copy
        for i in range(0, x.numel(), q):
            d[i:i + q].copy_(p[i:i + q])
        torch.neuron.synchronize()
        for i in range(0, x.numel(), q):
            back[i:i + q].copy_(d[i:i + q])
        torch.neuron.synchronize()
        assert torch.equal(back, x)
    finally:
        with open(param, "w") as f:
            f.write(old)
        sync_all()
        torch.ops.neuron.host_empty_cache()


def test_non_blocking_h2d_returns_before_the_dma():
    src = torch.randn(4 * MiB // 4).pin_memory()
    torch.neuron.synchronize()
    work = queue_long_work()
    t0 = time.perf_counter()
    d = src.to(N, non_blocking=True)
    t_call = time.perf_counter() - t0
    torch.neuron.synchronize()
    t_all = time.perf_counter() - t0
    # The copy is queued behind seconds of work, and did not wait for it.
    assert t_call < 0.25 * t_all, (t_call, t_all)
    assert torch.equal(d.cpu(), src)
    # A blocking copy from pinned memory waits for its DMA.
    work = queue_long_work()
    t0 = time.perf_counter()
    d2 = src.to(N)
    t_call = time.perf_counter() - t0
    t0 = time.perf_counter()
    torch.neuron.synchronize()
    assert time.perf_counter() - t0 < t_call, "the blocking copy returned early"
    assert torch.equal(d2.cpu(), src)
    del work


def test_block_not_reused_before_its_copy_is_done():
    n = 2 * MiB // 4
    src = torch.empty(n, pin_memory=True).fill_(1.0)
    ptr = src.data_ptr()
    torch.neuron.synchronize()
    work = queue_long_work()
    d = src.to(N, non_blocking=True)
    del src  # its block is still being read by the queued DMA
    other = torch.empty(n, pin_memory=True)
    assert other.data_ptr() != ptr, "a block in use by a DMA was handed out"
    other.fill_(2.0)
    assert host_stats()[3] >= 1  # the freed block waits for its copy
    torch.neuron.synchronize()
    assert torch.equal(d.cpu(), torch.ones(n))
    # Once the copy is done, the block is reused.
    again = torch.empty(n, pin_memory=True)
    assert again.data_ptr() == ptr
    del work, other, again


def test_non_blocking_d2h_into_pinned():
    x = torch.randn(4 * MiB // 4)
    d = x.to(N)
    out = torch.zeros(x.shape, pin_memory=True)
    torch.neuron.synchronize()
    work = queue_long_work()
    t0 = time.perf_counter()
    out.copy_(d, non_blocking=True)
    t_call = time.perf_counter() - t0
    torch.neuron.synchronize()
    t_all = time.perf_counter() - t0
    assert t_call < 0.25 * t_all, (t_call, t_all)
    assert torch.equal(out, x)
    # tensor.to("cpu", non_blocking=True) lands in pinned memory, like CUDA.
    y = d.to("cpu", non_blocking=True)
    torch.neuron.synchronize()
    assert y.is_pinned() and torch.equal(y, x)
    del work


@pytest.mark.skipif(torch.neuron.device_count() < 2, reason="needs two cards")
def test_pinned_block_of_another_card_copies_correctly():
    """A block of card 0 is no DMA target of card 1: the staged path copies."""
    with torch.neuron.device(0):
        p = torch.randn(1000).pin_memory()
    d = p.to("neuron:1", non_blocking=True)
    back = torch.empty(1000, pin_memory=True)  # card 0's
    back.copy_(d, non_blocking=True)
    torch.neuron.synchronize(1)
    assert d.device == torch.device("neuron:1")
    assert torch.equal(back, p)


def test_dataloader_pin_memory_training():
    """DataLoader(pin_memory=True, num_workers=2) feeding an MLP on the card:
    batches arrive pinned (no pin_memory_device needed), go over with
    non_blocking copies, and the loss falls."""
    torch.manual_seed(0)
    X = torch.randn(512, 16)
    y = (X[:, :4].sum(1) > 0).long()
    loader = DataLoader(TensorDataset(X, y), batch_size=64, shuffle=True,
                        pin_memory=True, num_workers=2)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(),
                                torch.nn.Linear(32, 2)).to(N)
    opt = torch.optim.SGD(model.parameters(), lr=0.2)
    losses = []
    for _ in range(3):
        for xb, yb in loader:
            assert xb.is_pinned() and yb.is_pinned()
            xb = xb.to(N, non_blocking=True)
            yb = yb.to(N, non_blocking=True)
            loss = torch.nn.functional.cross_entropy(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
    assert len(losses) == 24
    assert sum(losses[-4:]) < 0.7 * sum(losses[:4]), losses

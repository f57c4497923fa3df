# Owner(s): ["module: PrivateUse1"]
# SPDX-License-Identifier: MIT
"""Streams and events (torch.neuron.Stream/Event, torch.Stream/Event,
torch.accelerator): ordering across streams, timing, and the cores at work."""
import pytest
import torch

N = 384  # a matmul of N x N takes a visible time on the card


def _big(n=N):
    a = torch.rand(n, n).to("neuron")
    b = torch.rand(n, n).to("neuron")
    torch.neuron.synchronize()
    return a, b


def _long_work(length=6):
    """@length 1024x1024 matmuls on the current stream (each about 10 ms of
    the card's time or more): the stream is busy for a while after this
    returns, however fast the card's products are."""
    g1, g2 = _big(1024)
    for _ in range(length):
        g1 = g1 @ g2
    return g1


def _gate(length):
    """A stream busy with @length long matmuls, and an event at their end."""
    gate_stream = torch.neuron.Stream()
    with torch.neuron.stream(gate_stream):
        g = _long_work(length)
        return gate_stream.record_event(), g


def test_current_and_default_stream():
    """The default stream is current until another is set; stream() sets
    and restores it, per device."""
    d = torch.neuron.default_stream()
    assert d.stream_id == 0 and d.device == torch.device("neuron", 0)
    assert torch.neuron.current_stream() == d
    s = torch.neuron.Stream()
    assert s != d and s.device.type == "neuron"
    with torch.neuron.stream(s):
        assert torch.neuron.current_stream() == s
        assert torch.neuron.current_stream(1) == torch.neuron.default_stream(1)
    assert torch.neuron.current_stream() == d
    torch.neuron.set_stream(s)
    try:
        assert torch.neuron.current_stream() == s
    finally:
        torch.neuron.set_stream(d)
    assert torch.neuron.current_stream() == d


def test_stream_context_switches_device():
    """A stream of card 1 makes card 1 current inside stream() (as CUDA)."""
    s1 = torch.neuron.Stream(device=1)
    assert s1.device_index == 1
    with torch.neuron.stream(s1):
        assert torch.neuron.current_device() == 1
        assert torch.empty(1, device="neuron").device.index == 1
        assert torch.neuron.current_stream() == s1
    assert torch.neuron.current_device() == 0
    assert torch.neuron.current_stream(1).stream_id == 0


def test_current_stream_is_per_thread():
    """Another thread starts on the default stream."""
    import threading
    s = torch.neuron.Stream()
    seen = []
    with torch.neuron.stream(s):
        t = threading.Thread(target=lambda: seen.append(torch.neuron.current_stream()))
        t.start()
        t.join()
    assert seen == [torch.neuron.default_stream()]


def test_pool_round_robin_and_priority():
    """Streams come round-robin from a fixed pool per priority."""
    normal = [torch.neuron.Stream() for _ in range(8)]
    ids = [s.stream_id for s in normal]
    assert len(set(ids)) == 4 and ids[:4] == ids[4:] and 0 not in ids
    assert all(s.priority == 0 for s in normal)
    high = [torch.neuron.Stream(priority=-1) for _ in range(4)]
    assert all(s.priority == -1 for s in high)
    assert not set(s.stream_id for s in high) & set(ids)
    assert torch.neuron.default_stream().priority == 0


def test_work_goes_to_the_current_stream():
    """An operator runs on the current stream: right after a long matmul
    issued under stream(s), s is busy and the default stream is not."""
    a, b = _big()
    s = torch.neuron.Stream()
    with torch.neuron.stream(s):
        g = _long_work()
        c = a @ b
        c = c @ b
        assert not s.query()
    assert torch.neuron.default_stream().query()
    s.synchronize()
    assert s.query()
    torch.testing.assert_close(c.cpu(), a.cpu() @ b.cpu() @ b.cpu(), rtol=1e-4, atol=1e-3)
    del g


def test_wait_stream_orders_work():
    """B.wait_stream(A): work issued on B afterwards sees A's results. A's
    matmul waits behind a gate (long work of a third stream), so B would
    read zeros if it did not wait."""
    a, b = _big()
    want = (a.cpu() @ b.cpu()).sum()
    sa, sb = torch.neuron.Stream(), torch.neuron.Stream()
    with torch.neuron.stream(sa):
        y = torch.zeros(N, N, device="neuron")
    gate, g = _gate(6)
    sa.wait_event(gate)
    with torch.neuron.stream(sa):
        torch.mm(a, b, out=y)
    sb.wait_stream(sa)
    with torch.neuron.stream(sb):
        total = y.sum()
    assert not gate.query(), "the gate finished too early"
    with torch.neuron.stream(sb):
        got = total.item()  # synchronises B only
    torch.testing.assert_close(torch.tensor(got), want, rtol=1e-4, atol=1e-2)
    del g


def test_events_record_wait_query():
    """Event: unrecorded is complete; record/query/synchronize; a stream
    waits for another's event (recorded after gated work)."""
    a, b = _big()
    e = torch.neuron.Event()
    assert e.query()
    e.synchronize()
    sa, sb = torch.neuron.Stream(), torch.neuron.Stream()
    with torch.neuron.stream(sa):
        y = torch.zeros(N, N, device="neuron")
    gate, g = _gate(6)
    sa.wait_event(gate)
    with torch.neuron.stream(sa):
        torch.mm(a, b, out=y)
        e.record()
    assert not e.query()
    sb.wait_event(e)
    with torch.neuron.stream(sb):
        total = y.sum()
    assert not gate.query(), "the gate finished too early"
    with torch.neuron.stream(sb):
        got = total.item()
    assert e.query()
    torch.testing.assert_close(torch.tensor(got), (a.cpu() @ b.cpu()).sum(),
                               rtol=1e-4, atol=1e-2)
    e2 = sa.record_event()
    assert isinstance(e2, torch.neuron.Event)
    e2.synchronize()
    assert e2.query() and sa.query()
    del g


def test_elapsed_time():
    """elapsed_time in ms from the card's clock: two big matmuls take longer
    than a tiny op; events need enable_timing. The timed stream first waits
    behind long work of another stream, so that the host's (slow) issuing
    is over before the card reaches the events: what is measured is the
    card's time alone."""
    a, b = _big(1024)
    x = torch.ones(4, device="neuron")
    s = torch.neuron.Stream()
    gate, g = _gate(6)
    s.wait_event(gate)
    with torch.neuron.stream(s):
        t = [torch.neuron.Event(enable_timing=True) for _ in range(3)]
        t[0].record()
        x = x + 1
        t[1].record()
        c = a @ b
        c = c @ b
        t[2].record()
    assert not gate.query(), "the gate finished before the timed work was issued"
    small, big = t[0].elapsed_time(t[1]), t[1].elapsed_time(t[2])
    assert 0 <= small < big, (small, big)
    e = torch.neuron.Event()
    e.record()
    with pytest.raises(RuntimeError, match="enable_timing"):
        t[0].elapsed_time(e)
    with pytest.raises(RuntimeError, match="record"):
        torch.neuron.Event(enable_timing=True).elapsed_time(t[0])
    del c, g


def test_synchronize_waits_for_every_stream():
    """torch.neuron.synchronize() covers streams other than the current one."""
    a, b = _big()
    s = torch.neuron.Stream()
    with torch.neuron.stream(s):
        c = _long_work()
    assert not s.query()
    torch.neuron.synchronize()
    assert s.query()
    del c


def test_accelerator():
    """torch.accelerator drives the neuron device."""
    acc = torch.accelerator
    assert acc.is_available() and acc.device_count() == torch.neuron.device_count()
    assert acc.current_accelerator().type == "neuron"
    assert acc.current_device_index() == 0
    acc.set_device_index(1)
    try:
        assert torch.neuron.current_device() == 1
        assert acc.current_device_index() == 1
    finally:
        acc.set_device_index(0)
    assert torch.neuron.current_device() == 0
    cur = acc.current_stream()
    assert isinstance(cur, torch.Stream) and cur.stream_id == 0
    assert cur.device == torch.device("neuron", 0)
    s = torch.neuron.Stream()
    acc.set_stream(s)
    try:
        assert acc.current_stream().stream_id == s.stream_id
        assert torch.neuron.current_stream() == s
        c = _long_work()
        assert not s.query()
        acc.synchronize()
        assert s.query()
    finally:
        acc.set_stream(torch.neuron.default_stream())
    assert torch.neuron.current_stream().stream_id == 0
    del c


def test_generic_stream_and_event():
    """torch.Stream(device="neuron") and torch.Event(device="neuron")."""
    a, b = _big()
    s = torch.Stream(device="neuron")
    assert s.device.type == "neuron" and s.stream_id != 0
    t0 = torch.Event(device="neuron", enable_timing=True)
    t1 = torch.Event(device="neuron", enable_timing=True)
    t0.record(s)
    with torch.neuron.stream(s):
        c = (a @ b) @ b
        _long_work()        # s stays busy past the queries, however fast the card
    t1.record(s)
    assert not s.query() and not t1.query()
    other = torch.Stream(device="neuron")
    other.wait_event(t1)
    with torch.neuron.stream(other):
        total = c.sum()
    t1.synchronize()
    assert t1.query()
    assert t0.elapsed_time(t1) > 0.05
    other.synchronize()
    assert other.query() and s.query()
    torch.testing.assert_close(total.cpu(), (a.cpu() @ b.cpu() @ b.cpu()).sum(),
                               rtol=1e-4, atol=1)
    e = s.record_event()
    e.wait(other)
    e.synchronize()


def _core_busy_ns(index=0):
    pci = torch.neuron.get_device_name(index).split()[-1]
    with open(f"/sys/bus/pci/devices/{pci}/neuron/core_busy_ns") as f:
        return [int(v) for v in f.read().split()]


def test_each_stream_on_its_own_core():
    """Two streams handed out one after the other run on different
    NeuronCores (the driver's per-core busy time in sysfs)."""
    if torch.neuron.get_device_properties(0).neuron_cores < 2:
        pytest.skip("the card has one core")
    a, b = _big(768)
    cores = []
    for s in (torch.neuron.Stream(), torch.neuron.Stream()):
        before = _core_busy_ns()
        with torch.neuron.stream(s):
            c = (a @ b) @ b
        s.synchronize()
        busy = [x - y for x, y in zip(_core_busy_ns(), before)]
        cores.append(max(range(len(busy)), key=busy.__getitem__))
        assert sorted(busy)[-2] < 0.2 * max(busy), busy  # one core did the work
    assert cores[0] != cores[1]
    del c


def test_two_streams_run_at_the_same_time():
    """The work of two streams overlaps in card time: both wait behind a
    gate (so the host has issued everything before the card starts), and
    the card clock's span from the first start to the last end is well
    below the sum of the two streams' own times."""
    if torch.neuron.get_device_properties(0).neuron_cores < 2:
        pytest.skip("the card has one core")
    a, b = _big(768)
    for length in (6, 12, 24):
        s1, s2 = torch.neuron.Stream(), torch.neuron.Stream()
        gate, g = _gate(length)
        ev = {}
        for name, s in (("1", s1), ("2", s2)):
            s.wait_event(gate)
            with torch.neuron.stream(s):
                ev["start" + name] = torch.neuron.Event(enable_timing=True)
                ev["end" + name] = torch.neuron.Event(enable_timing=True)
                ev["start" + name].record()
                c = (a @ b) @ b
                ev["end" + name].record()
        if not gate.query():
            break
        torch.neuron.synchronize()  # the host was too slow: a longer gate
    else:
        pytest.fail("the gate always finished before the work was issued")
    t0 = ev["start1"]
    d1 = t0.elapsed_time(ev["end1"])
    d2 = ev["start2"].elapsed_time(ev["end2"])
    first = min(0.0, t0.elapsed_time(ev["start2"]))
    last = max(d1, t0.elapsed_time(ev["end2"]))
    span = last - first
    assert d1 > 1 and d2 > 1, (d1, d2)
    assert span < 0.75 * (d1 + d2), (span, d1, d2)
    del c, g


def test_blocks_stay_with_their_stream():
    """A block freed on one stream is reused by that stream at once, never
    by another."""
    s = torch.neuron.Stream()
    with torch.neuron.stream(s):
        w = torch.empty(3000, device="neuron")
    ptr = w.data_ptr()
    del w
    other = torch.empty(3000, device="neuron")  # the default stream
    assert other.data_ptr() != ptr
    with torch.neuron.stream(s):
        again = torch.empty(3000, device="neuron")
    assert again.data_ptr() == ptr
    del other, again


def test_record_stream_keeps_a_block_until_the_stream_is_done():
    """x (default stream) is read late by stream s; with x.record_stream(s),
    freeing x does not let the default stream overwrite it before s has read
    it, and the block comes back once s is done."""
    size = 256 * 1024
    x = torch.arange(size, dtype=torch.float32).to("neuron")
    want = x.cpu()
    s = torch.neuron.Stream()
    s.wait_stream(torch.neuron.current_stream())
    gate, g = _gate(6)
    s.wait_event(gate)
    with torch.neuron.stream(s):
        y = x * 1  # runs after the gate
    x.record_stream(s)
    ptr = x.data_ptr()
    del x
    z = torch.empty(size, device="neuron")
    assert z.data_ptr() != ptr
    z.fill_(-1.0)
    assert not gate.query(), "the gate finished too early"
    s.synchronize()
    assert torch.equal(y.cpu(), want)
    del z, y, g
    w = torch.empty(size, device="neuron")
    assert w.data_ptr() == ptr


def test_record_stream_checks_the_stream():
    x = torch.ones(10, device="neuron")
    with pytest.raises(RuntimeError, match="record_stream"):
        x.record_stream(torch.neuron.Stream(device=1))

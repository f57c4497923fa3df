# SPDX-License-Identifier: MIT
"""torch.profiler shows the card: device events with card timestamps, linked
to the operators that issued them, device time in key_averages(), a Chrome
trace with a lane per NeuronCore and DMA queue, and nothing added when no
profile runs."""
import glob
import json
import time

import pytest
import torch
import torch_neuron
from torch.autograd import DeviceType
from torch.profiler import ProfilerActivity, profile

DEV = "neuron"


def _model():
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Conv2d(3, 4, 3, padding=1), torch.nn.ReLU(), torch.nn.Flatten(),
        torch.nn.Linear(4 * 6 * 6, 10)).to(DEV)


def _step(model, opt, x, y):
    xd, yd = x.to(DEV), y.to(DEV)
    loss = torch.nn.functional.cross_entropy(model(xd), yd)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss.item()


def _device_step(model, opt, x, y):
    """A training step on device tensors that never waits (so a NeuronGraph
    can capture it)."""
    def step():
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return step


def _profiled_step():
    model = _model()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(8, 3, 6, 6), torch.randint(0, 10, (8,))
    _step(model, opt, x, y)  # warm up outside the profile
    with profile(activities=torch_neuron.profiler.activities()) as prof:
        _step(model, opt, x, y)
    return prof


def test_activity_supported():
    assert torch_neuron.profiler.is_available()
    assert ProfilerActivity.PrivateUse1 in torch.profiler.supported_activities()


def test_training_step_has_device_events_linked_to_ops():
    prof = _profiled_step()
    dev = torch_neuron.profiler.device_events(prof)
    names = {e.name for e in dev}
    # matmul and convolution, forward and backward, ran on the card
    assert "aten::addmm (neuron)" in names, names
    assert any(n.startswith("aten::mm") for n in names), names
    assert any("convolution" in n for n in names), names
    assert "Memcpy HtoD (neuron)" in names and "Memcpy DtoH (neuron)" in names
    for e in dev:
        assert e.device_index == 0
        if "mm" in e.name or "convolution" in e.name:
            assert e.time_range.elapsed_us() > 0, e.name
    # every device event is a kernel of the CPU operator that issued it
    kernels = {}
    for e in prof.events():
        if e.device_type == DeviceType.CPU:
            for k in e.kernels:
                kernels.setdefault(k.name, []).append(e.name)
    for e in dev:
        assert e.name in kernels, e.name
    assert "aten::addmm" in kernels["aten::addmm (neuron)"]
    conv_ops = {op for n, ops in kernels.items() if "convolution" in n for op in ops}
    assert conv_ops and all("convolution" in op for op in conv_ops), conv_ops
    assert set(kernels["Memcpy HtoD (neuron)"]) <= {"aten::copy_", "aten::_copy_from"}


def test_work_after_a_nested_operator_stays_with_its_operator():
    # A convolution takes its stream, allocates its workspace (a nested
    # aten::empty, which closes its interval), then issues its im2col and
    # matmul: those kernels, and all their card time, are the convolution's.
    # (Not compared with timing events around it: under TCG those measure
    # the gaps while the guest issues the next job, up to twice the card's
    # busy time when the host's cores are shared.)
    torch.manual_seed(0)
    x = torch.randn(16, 32, 32, 32, device=DEV)
    w = torch.randn(64, 32, 3, 3, device=DEV)
    torch.nn.functional.conv2d(x, w, padding=1)
    torch.neuron.synchronize()
    with profile(activities=torch_neuron.profiler.activities()) as prof:
        torch.nn.functional.conv2d(x, w, padding=1)
        torch.neuron.synchronize()
    dev = torch_neuron.profiler.device_events(prof)
    names = [e.name for e in dev]
    assert len(names) >= 2 and all("convolution" in n for n in names), names
    card_us = sum(e.time_range.elapsed_us() for e in dev)
    conv_us = {e.key: e for e in prof.key_averages()}[
        "aten::convolution_overrideable"].self_device_time_total
    assert card_us > 0 and conv_us == pytest.approx(card_us, rel=1e-6), (conv_us, card_us)


def test_intervals_of_one_lane_do_not_overlap():
    # One stream runs its work in order: the card's timestamps say so.
    dev = torch_neuron.profiler.device_events(_profiled_step())
    by_lane = {}
    for e in dev:
        if e.name.startswith("Memcpy"):
            continue
        by_lane.setdefault(e.device_resource_id, []).append(e.time_range)
    assert by_lane
    for lane, ranges in by_lane.items():
        for a, b in zip(ranges, ranges[1:]):
            assert a.end <= b.start + 1e-3, (lane, a, b)


def test_key_averages_have_device_time_per_op():
    avg = {e.key: e for e in _profiled_step().key_averages()}
    for op in ("aten::addmm", "aten::mm", "aten::convolution_backward"):
        assert op in avg, sorted(avg)
        assert avg[op].device_time_total > 0, op
    assert avg["aten::addmm"].self_device_time_total > 0
    # an operator that only moves metadata has no card time
    assert avg["aten::t"].device_time_total == 0
    table = _profiled_step().key_averages().table(sort_by="self_device_time_total")
    assert "NEURON" in table.upper()


def test_chrome_trace_has_a_lane_per_core_and_dma_queue(tmp_path):
    a = torch.randn(64, 64, device=DEV)
    s1, s2 = torch.neuron.Stream(), torch.neuron.Stream()
    with profile(activities=torch_neuron.profiler.activities()) as prof:
        with torch.neuron.stream(s1):
            b = a @ a
        with torch.neuron.stream(s2):
            c = a * 2
        torch.neuron.synchronize()
        (b + c).cpu()
    path = torch_neuron.profiler.export_chrome_trace(prof, str(tmp_path / "t.json"))
    events = json.load(open(path))["traceEvents"]
    device = [e for e in events if e.get("cat") in ("kernel", "gpu_memcpy")]
    assert device and all(e["pid"] == 0 for e in device)
    lanes = {e["tid"]: e["args"]["lane"] for e in device}
    cores = {n for n in lanes.values() if n.startswith("NeuronCore")}
    assert len(cores) >= 2, lanes  # two streams, two cores
    assert any(n.startswith("DMA queue") for n in lanes.values()), lanes
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
             if e.get("ph") == "M" and e.get("name") == "thread_name"}
    for tid, lane in lanes.items():
        assert names[(0, tid)] == lane
    procs = {e["pid"]: e["args"]["name"] for e in events
             if e.get("ph") == "M" and e.get("name") == "process_name"}
    assert procs[0] == "neuron:0"
    mm = [e for e in device if e["name"] == "aten::mm (neuron)"]
    assert mm and mm[0]["dur"] > 0


def _core_busy_ns():
    """The card's busy time per NeuronCore, as neuron-top reads it."""
    path = sorted(glob.glob("/sys/class/accel/accel*/device/neuron/core_busy_ns"))[0]
    with open(path) as f:
        return [int(v) for v in f.read().split()]


def test_kernel_time_per_core_within_neuron_top_busy_time():
    a = torch.randn(128, 128, device=DEV)
    s1, s2 = torch.neuron.Stream(), torch.neuron.Stream()
    torch.neuron.synchronize()
    before = _core_busy_ns()
    with profile(activities=torch_neuron.profiler.activities()) as prof:
        for s in (s1, s2):
            with torch.neuron.stream(s):
                for _ in range(3):
                    b = (a @ a).relu()
        torch.neuron.synchronize()
    after = _core_busy_ns()
    kernel_ns = {}
    for e in torch_neuron.profiler.device_events(prof):
        if not e.name.startswith("Memcpy"):
            lane = e.device_resource_id
            kernel_ns[lane] = kernel_ns.get(lane, 0) + e.time_range.elapsed_us() * 1000
    assert len(kernel_ns) >= 2, kernel_ns
    for core, ns in kernel_ns.items():
        busy = after[core] - before[core]
        assert 0 < ns <= busy * 1.05 + 20000, (core, ns, busy)
    del b


def test_cpu_only_profile_and_no_profile_issue_nothing():
    model = _model()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(8, 3, 6, 6), torch.randint(0, 10, (8,))
    before = torch_neuron.profiler.timestamps_issued()
    _step(model, opt, x, y)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        _step(model, opt, x, y)
    assert torch_neuron.profiler.timestamps_issued() == before
    assert not torch_neuron.profiler.device_events(prof)
    with profile(activities=torch_neuron.profiler.activities()):
        _step(model, opt, x, y)
    during = torch_neuron.profiler.timestamps_issued()
    assert during > before
    _step(model, opt, x, y)
    assert torch_neuron.profiler.timestamps_issued() == during


def test_profiling_off_costs_nothing_measurable():
    # Small operators run as fast after a profile as before any (the hooks
    # are off), and measurably slower under one (each operator's work is
    # bracketed and submitted alone). Minimum of several runs, and up to
    # three profiles against the one reference taken before the first: the
    # guest's speed drifts for seconds at a time (a minimum of 7 runs
    # doubled after a profile in 1 of 11 tries on the Zen 3 host, and halved
    # in another), while hooks left on fail every attempt.
    a = torch.randn(32, 32, device=DEV)

    def run():
        t0 = time.perf_counter()
        for _ in range(50):
            b = a + 1
        b.cpu()
        return time.perf_counter() - t0

    run()
    before = min(run() for _ in range(7))
    seen = []
    for _ in range(3):
        with profile(activities=torch_neuron.profiler.activities()):
            during = min(run() for _ in range(3))
        after = min(run() for _ in range(7))
        seen.append((during, after))
        if after < before * 1.5 + 0.003 and during > after:
            return
    pytest.fail(f"before a profile {before}; (during, after) of 3 profiles: {seen}")


def test_compiled_training_step_shows_its_graph_launches(tmp_path, monkeypatch):
    # torch.compile(backend="neuron") launches each graph as one batch of card
    # instructions from the CompiledFunction operator: the profile has that
    # work, with card time, forward and backward.
    monkeypatch.setenv("TORCH_NEURON_CACHE_DIR", str(tmp_path / "cache"))
    torch._dynamo.reset()
    torch_neuron.reset_compile_stats()
    try:
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(),
                                    torch.nn.Linear(32, 4)).to(DEV)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        cm = torch.compile(model, backend="neuron")
        step = _device_step(cm, opt, torch.randn(8, 16, device=DEV),
                            torch.randint(0, 4, (8,), device=DEV))

        step()
        step()
        launches = torch_neuron.compile_stats()["launches"]
        with profile(activities=torch_neuron.profiler.activities()) as prof:
            step()
            torch.neuron.synchronize()
        s = torch_neuron.compile_stats()
        assert s["eager_graphs"] == 0 and s["launches"] == launches + 2, s
        dev = {e.name: e for e in torch_neuron.profiler.device_events(prof)}
        for name in ("CompiledFunction (neuron)", "CompiledFunctionBackward (neuron)"):
            assert name in dev, sorted(dev)
            assert dev[name].time_range.elapsed_us() > 0
        avg = {e.key: e for e in prof.key_averages()}
        assert avg["CompiledFunction"].device_time_total > 0
    finally:
        torch._dynamo.reset()


def test_graph_replay_shows_its_launch():
    # A NeuronGraph replay is one launch of the whole captured step: under a
    # profile it is a scope with that launch's card time.
    model = _model()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    step = _device_step(model, opt, torch.randn(8, 3, 6, 6, device=DEV),
                        torch.randint(0, 10, (8,), device=DEV))

    step()
    step()
    g = torch.neuron.NeuronGraph()
    with torch.neuron.graph(g):
        step()
    g.replay()
    torch.neuron.synchronize()
    with profile(activities=torch_neuron.profiler.activities()) as prof:
        g.replay()
        g.replay()
        torch.neuron.synchronize()
    dev = [e for e in torch_neuron.profiler.device_events(prof)
           if e.name == "NeuronGraph.replay (neuron)"]
    assert len(dev) == 2, sorted(e.name for e in torch_neuron.profiler.device_events(prof))
    assert all(e.time_range.elapsed_us() > 0 for e in dev)
    avg = {e.key: e for e in prof.key_averages()}
    assert avg["NeuronGraph.replay"].device_time_total > 0
    g.reset()


def test_autograd_profiler_use_device_neuron():
    a = torch.randn(32, 32, device=DEV, requires_grad=True)
    # use_kineto=True: the Kineto path, device time per operator
    with torch.autograd.profiler.profile(use_device=DEV, use_kineto=True) as prof:
        (a @ a).sum().backward()
    avg = {e.key: e for e in prof.key_averages()}
    assert avg["aten::mm"].device_time_total > 0
    assert any(e.name == "aten::mm (neuron)" for e in torch_neuron.profiler.device_events(prof))
    # the default use_kineto=False: PyTorch's PrivateUse1 fallback calls the
    # shim's ProfilerStubs around every operator (card timing events)
    with torch.autograd.profiler.profile(use_device=DEV) as prof:
        (a @ a).sum().backward()
    mm = [e for e in prof.kineto_results.events() if e.name() == "aten::mm"]
    assert mm and all(e.privateuse1_elapsed_us() >= 0 for e in mm)
    assert max(e.privateuse1_elapsed_us() for e in mm) > 0


@pytest.mark.skipif(torch.neuron.device_count() < 2, reason="needs two cards")
def test_chrome_trace_names_every_card(tmp_path):
    a0 = torch.randn(32, 32, device="neuron:0")
    a1 = torch.randn(32, 32, device="neuron:1")
    with profile(activities=torch_neuron.profiler.activities()) as prof:
        (a0 @ a0).cpu()
        (a1 @ a1).cpu()
    cards = {e.device_index for e in torch_neuron.profiler.device_events(prof)}
    assert cards == {0, 1}
    path = torch_neuron.profiler.export_chrome_trace(prof, str(tmp_path / "t.json"))
    events = json.load(open(path))["traceEvents"]
    procs = {e["pid"]: e["args"]["name"] for e in events
             if e.get("ph") == "M" and e.get("name") == "process_name"}
    assert procs[0] == "neuron:0" and procs[1] == "neuron:1"
    mm = {e["pid"] for e in events if e.get("name") == "aten::mm (neuron)"}
    assert mm == {0, 1}


def test_device_error_under_profile_is_loud(capfd):
    # An index out of range is found by the card: PyTorch's profiler exit
    # synchronises and raises it; the intervals of the failed stream are
    # dropped with a warning, never shown with made-up times.
    x = torch.randn(4, device=DEV)
    idx = torch.tensor([7], device=DEV)
    p = profile(activities=torch_neuron.profiler.activities())
    with pytest.raises(RuntimeError, match="device reported an error"):
        with p:
            torch.index_select(x, 0, idx)
    capfd.readouterr()
    p.profiler.__exit__(None, None, None)  # PyTorch left it running
    # a C++ warning (TORCH_WARN at Kineto's stop) on stderr: the failed
    # stream's work, or its intervals whose timestamps the failed job never
    # wrote (since neuron.ko 0.2's error sites the failure is consumed by
    # the sync that raised it, and the next job starts a fresh chain)
    err = capfd.readouterr().err
    assert ("neuron profiler: card work of a profiled stream" in err or
            "intervals without card timestamps were dropped" in err), err
    # nothing of the failed job is shown: the failing operator has no
    # interval; an interval of work that ran after the reported failure
    # (the profiler's own synchronize) keeps the times the card wrote
    events = torch_neuron.profiler.device_events(p)
    assert not [e for e in events if "index_select" in e.name], events
    assert all(e.time_range.elapsed_us() >= 0 for e in events)
    assert torch.equal((x * 2).cpu(), x.cpu() * 2)  # the card works on

# SPDX-License-Identifier: MIT
"""torch.profiler on the card.

A profile with ``ProfilerActivity.PrivateUse1`` (or
``torch.autograd.profiler.profile(use_device="neuron")``) records, next to
the CPU operators, the card work each operator issued: one device event per
interval of its work on a stream, timed by the card's own clock (TIMESTAMP
instructions issued around the work), placed on the host's timeline and
linked to the operator. Kernels lie on the lane of the NeuronCore that ran
them, host<->card copies on the lane of the DMA queue. So::

    from torch.profiler import profile, ProfilerActivity
    with profile(activities=[ProfilerActivity.CPU,
                             ProfilerActivity.PrivateUse1]) as prof:
        train_step()
    print(prof.key_averages().table(sort_by="self_device_time_total"))
    torch_neuron.profiler.export_chrome_trace(prof, "trace.json")

``key_averages()`` has device time per operator (the "NEURON" columns);
``prof.export_chrome_trace()`` writes the card's lanes too, and
:func:`export_chrome_trace` names the lanes of every card (Kineto names only
the first card's). Profiling makes every operator its own job on the card
(the work is exactly timed, the run is slower); with no profile running,
nothing is added. docs/profiling.md has the details.
"""
import json

import torch
from torch.autograd import DeviceType
from torch.profiler import ProfilerActivity

__all__ = ["is_available", "activities", "device_events", "export_chrome_trace",
           "timestamps_issued"]

_LANE_CATS = ("kernel", "gpu_memcpy")


def is_available():
    """True when torch.profiler can record the card (PyTorch has a
    PrivateUse1 activity for the registered "neuron" backend)."""
    return ProfilerActivity.PrivateUse1 in torch.profiler.supported_activities()


def activities():
    """The activities of a profile of the host and the card."""
    return [ProfilerActivity.CPU, ProfilerActivity.PrivateUse1]


def device_events(prof):
    """The card's events of a finished profile (``FunctionEvent``s of
    ``DeviceType.PrivateUse1``), in start order; @prof is a
    torch.profiler.profile or a torch.autograd.profiler.profile."""
    events = prof.events() if hasattr(prof, "events") else prof.function_events
    evs = [e for e in events if e.device_type == DeviceType.PrivateUse1]
    return sorted(evs, key=lambda e: e.time_range.start)


def timestamps_issued():
    """TIMESTAMP instructions the profiler issued since the process started
    (none while no profile with device activities runs)."""
    return int(torch.ops.neuron.profiler_timestamps())


def export_chrome_trace(prof, path):
    """``prof.export_chrome_trace(path)``, with each card a process named
    "neuron:N" and each of its lanes ("NeuronCore i", "DMA queue j") a named
    thread, for every card of the profile. Returns @path."""
    prof.export_chrome_trace(path)
    with open(path) as f:
        trace = json.load(f)
    events = trace["traceEvents"]
    lanes = {}
    for e in events:
        args = e.get("args") or {}
        if e.get("cat") in _LANE_CATS and str(args.get("device", "")).startswith("neuron:"):
            lanes.setdefault(e["pid"], (args["device"], {}))[1][e["tid"]] = args["lane"]
    ts = min((e["ts"] for e in events if "ts" in e), default=0)
    kept = [e for e in events
            if not (e.get("ph") == "M" and e.get("pid") in lanes
                    and e.get("name") in ("process_name", "process_labels",
                                          "process_sort_index", "thread_name",
                                          "thread_sort_index"))]
    for pid, (card, names) in sorted(lanes.items()):
        meta = [("process_name", {"name": card}),
                ("process_labels", {"labels": "NeuronCores and DMA queues"}),
                ("process_sort_index", {"sort_index": 5000000 + pid})]
        kept += [{"name": n, "ph": "M", "ts": ts, "pid": pid, "tid": 0, "args": a}
                 for n, a in meta]
        for tid, lane in sorted(names.items()):
            kept.append({"name": "thread_name", "ph": "M", "ts": ts, "pid": pid,
                         "tid": tid, "args": {"name": lane}})
            kept.append({"name": "thread_sort_index", "ph": "M", "ts": ts,
                         "pid": pid, "tid": tid, "args": {"sort_index": tid}})
    trace["traceEvents"] = kept
    with open(path, "w") as f:
        json.dump(trace, f)
    return path

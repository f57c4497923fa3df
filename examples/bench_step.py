# SPDX-License-Identifier: MIT
"""Time one training step of a model on a device; print JSON figures.

    python3 examples/bench_step.py mlp --device neuron
    python3 examples/bench_step.py gpt --device cpu --steps 5

mlp: a 784-1024-1024-10 MLP, batch 256, float32, SGD with momentum.
gpt: the GPT-2 of examples/gpt2.py (2 layers, d=64, 4 heads, context 32,
     batch 16) with AdamW, float32.
resnet18: torchvision's ResNet-18 (10 classes) as examples/resnet.py trains
     it: batch 32, 3x32x32 images, float32, SGD with momentum.
The step is forward, loss, backward, optimizer step and loss.item() (which
waits for the device); the first step is a warm-up (two when compiled); the
figure is the median of the --steps timed steps.

--compile: the forward and loss run as torch.compile(backend="neuron")
(their backward too), and so does the optimizer step (AdamW with
capturable=True: its step counts on the card, not baked into the kernel as
host values); also reported: the first step's time with an empty
compile cache (dynamo, AOTAutograd, capture and compile), the same with the
cache holding the kernels (a new dynamo compile whose kernels come from the
disk; --no-cache-figures skips it), and the kernel launches per step.

--graph: after the warm-up, the whole step (forward, loss, zero_grad,
backward, optimizer step) is captured once into a torch.neuron.NeuronGraph
and each timed step is its replay and loss.item(): one launch a step, no
Python, dispatch or autograd in between (with --compile, the compiled
kernels are what the graph replays; the optimizer then has capturable=True
too). Also reported: the graph's instructions and the capture's time.

--kernels (gpt only): the GPT trains with the fused kernels of
examples/kernels/ (examples/gpt2.py --kernels: the tiled attention, the
softmax cross-entropy, FusedAdamW); the figures' names get "_kernels"
(gpt_step_neuron_kernels_ms).

--profile N: after the timed steps, N more run under torch.profiler (the
card's kernels too, ProfilerActivity.PrivateUse1, on neuron) and the table
of operators by self time goes to stderr: where a step's time goes, on the
card or natively. Also reported, but for --compile and --graph (a compiled
graph or a replay is one event there): the matrix products' time a step
(aten::mm, addmm, bmm, baddbmm: self CPU time natively, card time on
neuron).
"""
import argparse
import json
import os
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def mlp_setup(dev):
    model = nn.Sequential(nn.Linear(784, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(),
                          nn.Linear(1024, 10)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x, y = torch.randn(256, 784).to(dev), torch.randint(0, 10, (256,)).to(dev)
    return model, opt, x, y


def gpt_setup(dev, kernels=False):
    import gpt2
    vocab, ctx, batch = 32, 32, 16
    model = gpt2.GPT2(vocab, ctx, kernels=kernels).to(dev)
    opt = gpt2.optimizer(model, kernels=kernels)
    x = torch.randint(0, vocab, (batch, ctx)).to(dev)
    y = torch.randint(0, vocab, (batch, ctx)).to(dev)
    return model, opt, x, y


def resnet18_setup(dev):
    import torchvision
    model = torchvision.models.resnet18(num_classes=10).to(dev)
    model.train()
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=5e-4)
    x, y = torch.randn(32, 3, 32, 32).to(dev), torch.randint(0, 10, (32,)).to(dev)
    return model, opt, x, y


SETUPS = {"mlp": mlp_setup, "gpt": gpt_setup, "resnet18": resnet18_setup}


MATMUL_OPS = ("aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm")


def profile_steps(step, n: int, dev: str, key: str, figures) -> None:
    """Run @n steps under torch.profiler; the table to stderr, the matrix
    products' ms a step into @figures (None: not reported)."""
    from torch.profiler import ProfilerActivity, profile
    if dev == "cpu":
        acts = [ProfilerActivity.CPU]
    else:
        import torch_neuron
        acts = torch_neuron.profiler.activities()
    with profile(activities=acts) as prof:
        for _ in range(n):
            step()
    avg = prof.key_averages()
    attr = "self_cpu_time_total" if dev == "cpu" else "self_device_time_total"
    print(avg.table(sort_by=attr, row_limit=15), file=sys.stderr)
    us = sum(getattr(e, attr) for e in avg if e.key in MATMUL_OPS)
    if figures is not None:
        figures[f"{key}_profiled_matmul_ms"] = us / n / 1e3


def step_ms(name: str, dev: str, steps: int, compile: bool = False, figures=None,
            cache_figures: bool = True, graph: bool = False, profile: int = 0,
            kernels: bool = False) -> float:
    torch.manual_seed(0)
    if kernels:
        import gpt2
        model, opt, x, y = SETUPS[name](dev, kernels=True)
        name += "_kernels"      # the figures' names

        def forward_loss(x, y):
            return gpt2.lm_loss(model(x), y, kernels=True)
    else:
        model, opt, x, y = SETUPS[name](dev)

        def forward_loss(x, y):
            logits = model(x)
            return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))

    fn = [torch.compile(forward_loss, backend="neuron") if compile else forward_loss]
    opt_step = [opt.step]
    if compile or graph:
        for group in opt.param_groups:
            if "capturable" in group:
                group["capturable"] = True
        opt_step[0] = torch.compile(opt.step, backend="neuron")

    def body():
        loss = fn[0](x, y)
        opt.zero_grad()
        loss.backward()
        opt_step[0]()
        return loss

    def step():
        return body().item()  # waits for the device

    t0 = time.perf_counter()
    step()  # warm-up: allocations, first-use costs (compiled: the compile)
    if compile:
        step()  # the optimizer's state exists from the second step on: its recompile
    first = (time.perf_counter() - t0) * 1e3
    if graph:
        step()  # the step's allocations as they will be in the capture
        t0 = time.perf_counter()
        g = torch.neuron.NeuronGraph()
        with torch.neuron.graph(g):
            static_loss = body()
        if figures is not None:
            key = f"{name}{'_compiled' if compile else ''}_graphed"
            figures[f"{key}_capture_ms"] = (time.perf_counter() - t0) * 1e3
            figures[f"{key}_instructions"] = g.info()["instructions"]

        def step():
            g.replay()
            return static_loss.item()
        step()
    if compile:
        import torch_neuron
        launches = torch_neuron.compile_stats()["launches"]
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        step()
        times.append((time.perf_counter() - t0) * 1e3)
    ms = statistics.median(times)
    if compile and not graph and figures is not None:
        s = torch_neuron.compile_stats()
        figures[f"{name}_launches_per_step_compiled"] = (s["launches"] - launches) / steps
        figures[f"{name}_first_compile_ms"] = first  # the first two steps
        figures[f"{name}_capture_compile_ms"] = s["compile_ms"]
        figures[f"{name}_eager_graphs"] = s["eager_graphs"]
    if compile and not graph and figures is not None and cache_figures:
        # a new dynamo compile of the same step: its kernels come from the cache
        torch._dynamo.reset()
        fn[0] = torch.compile(forward_loss, backend="neuron")
        opt_step[0] = torch.compile(opt.step, backend="neuron")
        hits = s["cache_hits"]
        t0 = time.perf_counter()
        step()
        step()
        figures[f"{name}_cache_hit_first_steps_ms"] = (time.perf_counter() - t0) * 1e3
        s = torch_neuron.compile_stats()
        figures[f"{name}_cache_hits"] = s["cache_hits"] - hits
        figures[f"{name}_cache_load_ms"] = s["cache_load_ms"]
    if profile:
        key = f"{name}_{dev}" + ("_compiled" if compile else "") + ("_graphed" if graph else "")
        # compiled graphs and replays are one event each: no products in them
        profile_steps(step, profile, dev, key, None if compile or graph else figures)
    return ms


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model", choices=list(SETUPS))
    p.add_argument("--device", default="neuron")
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--name", help="figure name (default: MODEL_step_DEVICE_ms, "
                   "MODEL_step_DEVICE_compiled_ms with --compile)")
    p.add_argument("--compile", action="store_true",
                   help='torch.compile(backend="neuron") the forward and loss')
    p.add_argument("--graph", action="store_true",
                   help="capture the whole step in a torch.neuron.NeuronGraph, time its replays")
    p.add_argument("--profile", type=int, default=0, metavar="N",
                   help="profile N more steps; the table of operators to stderr")
    p.add_argument("--no-cache-figures", action="store_true",
                   help="with --compile: skip the second compile from the disk cache")
    p.add_argument("--kernels", action="store_true",
                   help="gpt on neuron: the fused kernels of examples/kernels/ (gpt2.py "
                        "--kernels: attention, cross-entropy, AdamW)")
    a = p.parse_args()
    if a.kernels and a.model != "gpt":
        p.error(f"--kernels: only the gpt model has kernels, not {a.model}")
    if a.compile:
        # a cache of its own, empty: the first step compiles
        import tempfile
        os.environ["TORCH_NEURON_CACHE_DIR"] = tempfile.mkdtemp(prefix="bench-cache-")
    figures = {}
    ms = step_ms(a.model, a.device, a.steps, a.compile, figures, not a.no_cache_figures,
                 a.graph, a.profile, a.kernels)
    mode = (("_compiled" if a.compile else "") + ("_graphed" if a.graph else "")
            + ("_kernels" if a.kernels else ""))
    name = a.name or f"{a.model}_step_{a.device}{mode}_ms"
    print(json.dumps({name: ms, **figures, "torch_version": torch.__version__}))

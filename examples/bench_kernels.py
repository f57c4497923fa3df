# SPDX-License-Identifier: MIT
"""The example kernels of examples/kernels/ against the same computation in
eager `neuron` operators and under torch.compile(backend="neuron"); print
JSON figures.

    python3 examples/bench_kernels.py [--only rmsnorm_fwd,attention_fwd] [--no-compiled]

Each case is run three ways (attention a fourth, below): "kernel" (the torch_neuron.kernels operator),
"eager" (the example's `reference`, PyTorch's operators one by one) and
"compiled" (that reference through torch.compile(backend="neuron")):

  rmsnorm_fwd      rms_norm of x [16, 128, 256] float32, weight [256] (no grad)
  rmsnorm_fwd_bwd  the same forward, then the gradients of x and weight
                   (torch.autograd.grad with a fixed dy)
  xent_fwd_bwd     mean softmax cross-entropy of logits [512, 2048] float32,
                   then the gradient of the logits
  attention_fwd    causal attention, q, k, v [4, 4, 128, 32] float32, no
                   grad (the kernel's default tile of 128 keys: one pass);
                   the eager way is attention.composed (scores, mask,
                   softmax, product with V, operator by operator); a
                   fourth way, "sdpa", is F.scaled_dot_product_attention,
                   which on neuron is one C++ operator composing the
                   card's kernels
  adamw_step       one AdamW step (lr 1e-3, weight decay 0.01) over 10
                   parameters (2 of [512, 128], 4 of [128, 128], 4 of [128]),
                   fixed gradients: adamw.py's FusedAdamW (one kernel);
                   torch.optim.AdamW (its default on neuron: foreach);
                   the same with capturable=True, its step compiled

Figures per case and way: kernel_<case>_<way>_wall_ms, the wall time per
call (after 3 warm-up calls -- a compiled way compiles there -- the
median over --windows windows of --calls back-to-back calls, each window
between two torch.neuron.synchronize()), and kernel_<case>_<way>_card_ms,
the card's time per call (--profile-calls more calls under torch.profiler
with ProfilerActivity.PrivateUse1, each call in a profile of its own:
the median over the calls of the sum of a call's card kernel intervals,
torch_neuron.profiler.device_events; host<->card copies are left out).
Before timing, the kernel's result is checked against the eager one: a
benchmark of a wrong answer is refused.
"""
import argparse
import json
import os
import statistics
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "kernels"))

import torch_neuron  # noqa: E402
from benchtime import median_ms_per_call  # noqa: E402

import adamw  # noqa: E402
import attention  # noqa: E402
import cross_entropy  # noqa: E402
import rmsnorm  # noqa: E402

DEV = "neuron"
WAYS = ("kernel", "eager", "compiled", "sdpa")     # sdpa: attention only


def _compile(fn):
    return torch.compile(fn, backend="neuron")


def rmsnorm_fwd():
    x = torch.randn(16, 128, 256, device=DEV)
    w = torch.randn(256, device=DEV)
    comp = _compile(rmsnorm.reference)
    return (dict(kernel=lambda: rmsnorm.rms_norm(x, w), eager=lambda: rmsnorm.reference(x, w),
                 compiled=lambda: comp(x, w)), False)


def rmsnorm_fwd_bwd():
    x = torch.randn(16, 128, 256, device=DEV, requires_grad=True)
    w = torch.randn(256, device=DEV, requires_grad=True)
    dy = torch.randn(16, 128, 256, device=DEV)
    comp = _compile(rmsnorm.reference)

    def way(f):
        return lambda: torch.autograd.grad(f(x, w), (x, w), dy)
    return (dict(kernel=way(rmsnorm.rms_norm), eager=way(rmsnorm.reference),
                 compiled=way(comp)), True)


def xent_fwd_bwd():
    logits = torch.randn(512, 2048, device=DEV, requires_grad=True)
    target = torch.randint(0, 2048, (512,), device=DEV)
    comp = _compile(cross_entropy.reference)

    def way(f):
        def call():
            loss = f(logits, target)
            return (loss,) + torch.autograd.grad(loss, logits)
        return call
    return (dict(kernel=way(cross_entropy.cross_entropy), eager=way(cross_entropy.reference),
                 compiled=way(comp)), True)


def attention_fwd():
    q, k, v = (torch.randn(4, 4, 128, 32, device=DEV) for _ in range(3))

    def ref_causal(q, k, v):
        return attention.composed(q, k, v, causal=True)
    comp = _compile(ref_causal)
    return (dict(kernel=lambda: attention.attention(q, k, v, causal=True),
                 eager=lambda: ref_causal(q, k, v), compiled=lambda: comp(q, k, v),
                 sdpa=lambda: attention.reference(q, k, v, causal=True)), False)


def adamw_step():
    shapes = [(512, 128)] * 2 + [(128, 128)] * 4 + [(128,)] * 4
    init = [torch.randn(s, device=DEV) for s in shapes]
    grads = [torch.randn(s, device=DEV) for s in shapes]

    def params():
        ps = [p.clone().requires_grad_() for p in init]
        for p, g in zip(ps, grads):
            p.grad = g.clone()
        return ps
    pk, pe, pc = params(), params(), params()
    kw = dict(lr=1e-3, weight_decay=0.01)
    fused = adamw.FusedAdamW(pk, **kw)
    eager = torch.optim.AdamW(pe, **kw)
    comp = torch.optim.AdamW(pc, capturable=True, **kw)
    comp_step = _compile(comp.step)

    def check():   # one step each from the same state: the same parameters
        fused.step()
        eager.step()
        return pk, pe
    return (dict(kernel=fused.step, eager=eager.step, compiled=comp_step, check=check), False)


CASES = {f.__name__: f for f in (rmsnorm_fwd, rmsnorm_fwd_bwd, xent_fwd_bwd, attention_fwd,
                                   adamw_step)}


def _flat(r):
    if isinstance(r, torch.Tensor):
        return [r]
    return [t for x in r for t in _flat(x)]


def check(name, ways):
    """The kernel's result against the eager composition's (float32)."""
    if "check" in ways:
        got, want = ways.pop("check")()
    else:
        got, want = ways["kernel"](), ways["eager"]()
    got, want = _flat(got), _flat(want)
    if len(got) != len(want):
        raise SystemExit(f"bench_kernels: {name}: the kernel gives {len(got)} tensors, "
                         f"the reference {len(want)}")
    for i, (a, b) in enumerate(zip(got, want)):
        if not torch.allclose(a.detach(), b.detach(), rtol=1e-4, atol=1e-5):
            err = (a.detach() - b.detach()).abs().max().item()
            raise SystemExit(f"bench_kernels: {name}: result {i} differs from the reference "
                             f"by up to {err:g}: not benchmarking a wrong answer")


def card_ms(fn, calls):
    """The card's kernel time per call of fn, from torch.profiler: the
    median over @calls profiles of one call each (a call's card intervals
    summed; the card's threads share the host's cores, so a preempted one
    stretches its interval: the median leaves such calls out)."""
    from torch.profiler import profile
    per_call = []
    for _ in range(calls):
        torch.neuron.synchronize()
        with profile(activities=torch_neuron.profiler.activities()) as prof:
            fn()
            torch.neuron.synchronize()
        per_call.append(sum(e.time_range.elapsed_us()
                            for e in torch_neuron.profiler.device_events(prof)
                            if not e.name.startswith("Memcpy")))
    return statistics.median(per_call) / 1e3


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", help="comma-separated cases (default: all): " + ", ".join(CASES))
    ap.add_argument("--no-compiled", action="store_true", help="skip the compiled way")
    ap.add_argument("--calls", type=int, default=10, help="calls per timing window")
    ap.add_argument("--windows", type=int, default=5, help="timing windows (the median)")
    ap.add_argument("--profile-calls", type=int, default=7,
                    help="calls profiled, one profile each (the median)")
    a = ap.parse_args()
    names = a.only.split(",") if a.only else list(CASES)
    for n in names:
        if n not in CASES:
            ap.error(f"unknown case {n!r}: {', '.join(CASES)}")
    figures = {}
    for name in names:
        torch.manual_seed(0)
        ways, grad = CASES[name]()
        with torch.set_grad_enabled(grad):
            check(name, ways)
            for way in WAYS:
                if way not in ways or (way == "compiled" and a.no_compiled):
                    continue
                fn = ways[way]
                for _ in range(3):
                    fn()
                ms = median_ms_per_call(fn, a.calls, a.windows, torch.neuron.synchronize)
                figures[f"kernel_{name}_{way}_wall_ms"] = round(ms, 3)
                figures[f"kernel_{name}_{way}_card_ms"] = round(card_ms(fn, a.profile_calls), 3)
                print(f"{name:16} {way:8} wall {ms:8.3f} ms/call  card "
                      f"{figures[f'kernel_{name}_{way}_card_ms']:8.3f} ms/call",
                      file=sys.stderr, flush=True)
    print(json.dumps(figures))


if __name__ == "__main__":
    main()

# SPDX-License-Identifier: MIT
"""PyTorch's own test samples as the measure of the "neuron" backend.

Runs the OpInfo samples of ``op_db`` (forward) and the ModuleInfo samples
of ``module_db`` (forward and backward) on the CPU and on "neuron", in
float32 (or --dtype float64 or complex64), and sorts every op and module into one of:

  pass      every sample matches the CPU and nothing fell back to the CPU
  fallback  every sample matches, but some operator ran through the CPU
  loud      some sample raised on neuron (a clear error), none mismatched
  MISMATCH  some sample returned numbers other than the CPU's, no error
  CRASH     the process died in it (the sweep restarts after it)

MISMATCH and CRASH are the failures this backend must never have. Results
per op go to OUT (JSON); the summary lines are

  opinfo: N of M ops pass on neuron with no fallback (...)
  moduleinfo: N of M modules pass on neuron with no fallback (...)

("opinfo float64: ..." and "moduleinfo float64: ..." with --dtype float64,
and so on).

Usage: sweep.py [--samples K] [--only ops|modules] [--filter REGEX]
                [--dtype float32|float64|complex64] [--item-timeout S]
                [--shards N]
                [--card I] --out DIR

--dtype float64 sweeps the ops and modules that take float64, compared
with the CPU's float64 at TOL_F64: far tighter than float32 is from it,
so that an operator that computes narrower than float64 is a MISMATCH.
--dtype complex64 sweeps those that take complex64, at float32's tolerance
per part.

--card I runs the samples on card I ("neuron" is then neuron:I): `make
check` sweeps card 1 while its other tests use card 0.
"""
import argparse
import copy
import concurrent.futures
import faulthandler
import itertools
import json
import os
import re
import shlex
import subprocess
import sys
import time

DEV = "neuron"

# Ops whose results are random or uninitialised: only the shape, dtype and
# device are compared (and that no error or fallback happened).
NONDETERMINISTIC = (
    "bernoulli", "normal", "rand_like", "randn_like", "randint_like", "randint",
    "multinomial", "uniform", "cauchy", "exponential", "geometric",
    "log_normal", "empty", "empty_like", "new_empty", "new_empty_strided",
    "empty_strided", "empty_permuted", "nn.functional.dropout",
    "nn.functional.dropout2d", "nn.functional.dropout3d",
    "nn.functional.alpha_dropout", "nn.functional.feature_alpha_dropout",
    "nn.functional.rrelu", "randn", "rand", "randperm",
    # They draw their pooling regions (fractional) or a projection
    # (svd_lowrank) from the device's generator, whose numbers differ.
    "nn.functional.fractional_max_pool2d", "nn.functional.fractional_max_pool3d",
    "svd_lowrank",
)
TOL = dict(rtol=1e-4, atol=1e-5)
# float64 against the CPU's float64: a float32 step anywhere misses it by
# about 1e-8; summation orders and 1-ulp functions stay far below.
TOL_F64 = dict(rtol=1e-9, atol=1e-10)
# The dtype swept (--dtype; the child sets it).
DTYPE = "float32"


def tol_for(t):
    """float64 at TOL_F64; float32 and complex64 (float32 parts) at TOL."""
    return TOL_F64 if t.dtype.is_floating_point and t.dtype.itemsize == 8 else TOL


def tree_map(fn, x):
    if isinstance(x, (list, tuple)):
        return type(x)(tree_map(fn, v) for v in x) if not hasattr(x, "_fields") \
            else type(x)(*[tree_map(fn, v) for v in x])
    if isinstance(x, dict):
        return {k: tree_map(fn, v) for k, v in x.items()}
    return fn(x)


def leaves(x):
    if isinstance(x, (list, tuple)):
        for v in x:
            yield from leaves(v)
    elif isinstance(x, dict):
        for v in x.values():
            yield from leaves(v)
    else:
        yield x


def compare(torch, want, got, exact_shape_only, device=DEV, exact=None, noise=None):
    """None if got (from neuron) matches want (from the CPU), else why not.
    device: where got's tensors belong (a sample may ask for the CPU).
    exact: the same computation in float64 on the CPU, if it can be made:
    a float32 result that misses the CPU's still passes if it is as close
    to float64's (as_accurate; noise: per output, the CPU's own float32
    error on perturbed inputs)."""
    w, g = list(leaves(want)), list(leaves(got))
    x = list(leaves(exact)) if exact is not None else None
    if len(w) != len(g) or (x is not None and len(x) != len(w)):
        return f"{len(g)} outputs, the CPU gave {len(w)}"
    for n, (a, b) in enumerate(zip(w, g)):
        if isinstance(a, torch.Tensor):
            if not isinstance(b, torch.Tensor):
                return f"a {type(b).__name__} where the CPU gave a tensor"
            if b.device.type != device and a.numel():
                return f"result on {b.device}, not on {device}"
            if a.shape != b.shape or a.dtype != b.dtype:
                return f"{tuple(b.shape)} {b.dtype}, CPU {tuple(a.shape)} {a.dtype}"
            if exact_shape_only:
                continue
            try:
                torch.testing.assert_close(b.detach().cpu(), a.detach(), equal_nan=True,
                                           **(tol_for(a) if a.is_floating_point()
                                              or a.is_complex() else dict(rtol=0, atol=0)))
            except AssertionError as e:
                if not (x is not None and as_accurate(torch, a, b, x[n],
                                                      noise[n] if noise else 0.0)):
                    return str(e).splitlines()[0][:200]
        elif isinstance(a, (float, complex)) and type(b) is type(a):
            tol = TOL_F64 if DTYPE == "float64" else TOL
            if not (a == b or abs(a - b) <= tol["atol"] + tol["rtol"] * abs(a)
                    or (a != a and b != b)):
                return f"{b} != {a}"
        elif type(a) is not type(b) or (not isinstance(a, float) and a != b):
            return f"{b!r} != {a!r}"
    return None


def as_accurate(torch, cpu, card, exact, noise=0.0):
    """card is as close to the result exact (float64: from float64 for a
    float32 result, from mpmath for a float64 one) as the CPU's is: within
    4 times the CPU's largest error, or within noise (the CPU's own largest
    error on inputs perturbed by half an ulp, for an ill-conditioned
    sample), with NaNs and infinities where the CPU has them."""
    if cpu.is_complex() and isinstance(exact, torch.Tensor) and exact.is_complex():
        # complex64 against complex128: part by part
        cpu, card = torch.view_as_real(cpu.resolve_conj()), torch.view_as_real(
            card.detach().resolve_conj())
        exact = torch.view_as_real(exact.resolve_conj())
    if not (cpu.dtype in (torch.float32, torch.float64) and isinstance(exact, torch.Tensor)
            and exact.dtype == torch.float64 and exact.shape == cpu.shape):
        return False
    c, r = cpu.detach().double(), exact.detach()
    d = card.detach().cpu().double()
    if not torch.equal(c.isnan(), d.isnan()) or not torch.equal(c.isinf(), d.isinf()):
        return False
    fin = r.isfinite() & c.isfinite()
    if not torch.equal(c[~fin].nan_to_num(), d[~fin].nan_to_num()):
        return False
    if not fin.any():
        return True
    scale = max(1.0, r[fin].abs().max().item())
    err_cpu = (c[fin] - r[fin]).abs().max().item()
    err_card = (d[fin] - r[fin]).abs().max().item()
    floor = 1e-6 if cpu.dtype == torch.float32 else 1e-14
    return err_card <= max(4 * err_cpu, noise, floor * scale)


def copied(torch, x, fn=lambda t: t.clone()):
    """x with fn of each tensor (detached; requires_grad kept), the same
    tensor twice still one tensor."""
    seen = {}

    def one(t):
        if not isinstance(t, torch.Tensor):
            return t
        if id(t) not in seen:
            seen[id(t)] = fn(t.detach()).requires_grad_(t.requires_grad)
        return seen[id(t)]
    return tree_map(one, x)


def to_double(torch, x):
    """x with its float32 tensors in float64 and complex64 in complex128,
    every tensor a copy."""
    wider = {torch.float32: torch.float64, torch.complex64: torch.complex128}
    return copied(torch, x, lambda t: t.to(wider[t.dtype]) if t.dtype in wider else t.clone())


def perturbed(torch, x, gen):
    """x with each float32 element scaled by 1 + N(0, 2^-24): about half an ulp."""
    return copied(torch, x, lambda t: (t.double() * (1 + 2.0 ** -24 * torch.randn(
        t.shape, generator=gen, dtype=torch.float64))).float()
        if t.dtype == torch.float32 else t.clone())


def second_look(torch, call, sample, want, got, device, why):
    """why, or None if the card's result, which misses the CPU's, is as
    accurate: call (the op on the CPU) on sample (pristine CPU inputs) in
    float64 gives the exact result; call on 8 perturbed float32 copies
    measures how far the CPU's own float32 strays on this sample."""
    try:
        torch.manual_seed(0)
        exact = call(to_double(torch, sample))
        gen = torch.Generator().manual_seed(0)
        noise = [0.0] * len(list(leaves(want)))
        for _ in range(8):
            torch.manual_seed(0)
            for n, (p, x) in enumerate(zip(leaves(call(perturbed(torch, sample, gen))),
                                           leaves(exact))):
                if isinstance(p, torch.Tensor) and p.is_floating_point() and \
                        isinstance(x, torch.Tensor) and p.shape == x.shape:
                    e = (p.double() - x).abs().nan_to_num(0, 0, 0).max().item() \
                        if p.numel() else 0.0
                    noise[n] = max(noise[n], e)
    except Exception:  # noqa: BLE001 -- no float64 reference: why stands
        return why
    return compare(torch, want, got, False, device, exact, noise)


# float64 ops whose exact result mpmath gives (40 digits), for the second
# look of a float64 sample: PyTorch's CPU computes these Bessel functions
# with Cephes' approximations (errors up to 2e-7 on its own samples), the
# card with the C library's (1e-16).
MPMATH_EXACT = {
    "special.bessel_j0": lambda mp, x: mp.besselj(0, x),
    "special.bessel_j1": lambda mp, x: mp.besselj(1, x),
    "special.bessel_y0": lambda mp, x: mp.bessely(0, x),
    "special.bessel_y1": lambda mp, x: mp.bessely(1, x),
}


def mpmath_look(torch, name, sample, want, got, why):
    """why, or None if the float64 card result of unary op @name on sample
    (pristine CPU inputs) is as close to mpmath's exact value as the
    CPU's."""
    import mpmath
    mpmath.mp.dps = 40
    x = sample[0]
    if not (isinstance(x, torch.Tensor) and isinstance(want, torch.Tensor)
            and x.shape == want.shape):
        return why

    def exact_of(v):
        if v <= 0 and name.startswith("special.bessel_y"):
            return float("nan")  # outside the domain: NaN/inf, compared as such
        return float(MPMATH_EXACT[name](mpmath, v))
    exact = torch.tensor([exact_of(v) for v in x.flatten().tolist()],
                         dtype=torch.float64).reshape(x.shape)
    exact = torch.where(exact.isnan(), want, exact)
    return None if as_accurate(torch, want, got, exact) else why


class Runner:
    def __init__(self, torch, torch_neuron):
        self.torch, self.tn = torch, torch_neuron

    def run(self, fn):
        """(result, error string, fallback operators) of fn() on neuron."""
        self.tn.reset_fallback_stats()
        try:
            out = fn()
            if isinstance(out, self.torch.Tensor) or isinstance(out, (list, tuple)):
                self.torch.neuron.synchronize()
            err = None
        except Exception as e:  # noqa: BLE001 -- any error is a loud one
            out, err = None, f"{type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}"
        return out, err, sorted(self.tn.fallback_stats())


def classify(results):
    kinds = [r["kind"] for r in results]
    for k in ("MISMATCH", "loud", "fallback"):
        if k in kinds:
            return k
    return "pass" if kinds else "nosample"


def to_cpu(torch, x):
    """x with its neuron tensors copied to the CPU, and "neuron" devices
    named "cpu". Aliasing is kept: a tensor that appears twice becomes one
    CPU tensor (a sample may pass the same tensor as two arguments), and
    tensors that need no gradient keep their storage, strides and offset
    (as_strided reads the storage beyond a view)."""
    seen, storages = {}, {}

    def storage_of(t):
        st = t.untyped_storage()
        key = (st.data_ptr(), t.dtype)
        if key not in storages:
            n = st.nbytes() // t.element_size()
            storages[key] = torch.as_strided(t.detach(), (n,), (1,), 0).cpu()
        return storages[key]

    def one(t):
        if isinstance(t, (str, torch.device)):
            return "cpu" if str(t).startswith(DEV) else t
        if not isinstance(t, torch.Tensor):
            return t
        if id(t) not in seen:
            if t.device.type == DEV and t.layout == torch.strided and \
                    not t.requires_grad and \
                    t.untyped_storage().nbytes() % t.element_size() == 0:
                c = storage_of(t).as_strided(t.shape, t.stride(), t.storage_offset())
            else:
                c = t.detach().cpu().requires_grad_(t.requires_grad)
            seen[id(t)] = c
        return seen[id(t)]
    return tree_map(one, x)


def result_device(torch, sample):
    """Where a sample's result belongs: the device it names, else neuron
    if one of its tensors is there; None if it does not touch the card
    (arange(3) with no device: nothing of it runs on neuron)."""
    named = sample[2].get("device") if isinstance(sample[2], dict) else None
    if named is not None:
        return torch.device(named).type
    if any(isinstance(t, torch.Tensor) and t.device.type == DEV for t in leaves(sample)):
        return DEV
    return None


def make_samples(torch, fn, k):
    """The first @k samples PyTorch generates for "neuron" (as its
    device-generic tests do), or the error that generating them raised.
    Only those are made: some generators yield hundreds (max_pool2d's took
    65 s under TCG to make them all for one sample)."""
    try:
        torch.manual_seed(0)
        return list(itertools.islice(fn(), k)), None
    except Exception as e:  # noqa: BLE001
        return [], f"making samples on {DEV}: {type(e).__name__}: {str(e).splitlines()[0][:160]}"


def dropout_sample(op, args, kwargs):
    """A sample that draws a dropout mask (training with p > 0, or
    scaled_dot_product_attention's dropout_p, which has no training flag):
    its values depend on the generator, the card's differs from the CPU's.
    For multi_head_attention_forward, dropout_p is the tenth argument
    (torch-shim/tests/test_mha_dropout.py checks those samples exactly)."""
    if op.name == "nn.functional.scaled_dot_product_attention":
        return kwargs.get("dropout_p", 0.0) > 0
    if not kwargs.get("training", False):
        return False
    p = kwargs.get("dropout_p", kwargs.get("p"))
    if p is None and op.name == "nn.functional.multi_head_attention_forward" and len(args) > 9:
        p = args[9]
    return isinstance(p, (int, float)) and p > 0


# Products whose CPU result is wrong for complex vectors on this PyTorch
# build: its BLAS returns cdotu's and zdotu's complex result another way
# than PyTorch reads it, so dot, vdot and a matmul of two vectors give 0 on
# the CPU (complex128 too). Their reference is the same sum of products
# through einsum (PyTorch's bmm: another BLAS routine).
CPU_COMPLEX_DOT_WRONG = {"dot", "vdot", "matmul", "__rmatmul__"}


def complex_dot_reference(torch, name, inp, args):
    """The product of the vectors of a sample of CPU_COMPLEX_DOT_WRONG, or
    None if it is not a product of two vectors."""
    a, b = (args[0], inp) if name == "__rmatmul__" else (inp, args[0] if args else None)
    if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)
            and a.dim() == 1 and b.dim() == 1 and a.is_complex()):
        return None
    return torch.einsum("i,i->", a.conj() if name == "vdot" else a, b)


def sweep_op(torch, runner, op, k):
    results = []
    random_op = op.name in NONDETERMINISTIC or op.name.split(".")[0] in NONDETERMINISTIC
    samples, err = make_samples(torch, lambda: op.sample_inputs(DEV, getattr(torch, DTYPE),
                                                                requires_grad=False), k)
    if err:
        return [{"kind": "loud", "why": err, "fallback": []}]
    for s in samples:
        inp, args, kwargs = s.input, s.args, s.kwargs
        device = result_device(torch, (inp, args, kwargs))
        if device is None:
            continue  # nothing of it runs on the card
        try:
            torch.manual_seed(0)
            cpu_in, cpu_args, cpu_kw = to_cpu(torch, (inp, args, kwargs))
            pristine = copied(torch, (cpu_in, cpu_args, cpu_kw))  # before an in-place op
            want = op(cpu_in, *cpu_args, **cpu_kw)
            if DTYPE == "complex64" and op.name in CPU_COMPLEX_DOT_WRONG:
                ref = complex_dot_reference(torch, op.name, cpu_in, cpu_args)
                want = want if ref is None else ref
        except Exception:  # noqa: BLE001 -- the CPU refuses: not a sample
            continue
        got, err, fell = runner.run(lambda: op(inp, *args, **kwargs))
        if err:
            results.append({"kind": "loud", "why": err, "fallback": fell})
            continue
        random = random_op or dropout_sample(op, args, kwargs)
        why = compare(torch, want, got, random, device)
        if why and not random and DTYPE in ("float32", "complex64"):
            why = second_look(torch, lambda x: op(x[0], *x[1], **x[2]), pristine, want, got,
                              device, why)
        elif why and DTYPE == "float64" and op.name in MPMATH_EXACT:
            why = mpmath_look(torch, op.name, pristine, want, got, why)
        kind = "MISMATCH" if why else ("fallback" if fell else "pass")
        results.append({"kind": kind, "why": why, "fallback": fell})
    return results


def sweep_module(torch, runner, mi, k):
    results = []
    inputs, err = make_samples(torch, lambda: mi.module_inputs_func(
        mi, device=DEV, dtype=getattr(torch, DTYPE), requires_grad=True, training=False), k)
    if err:
        return [{"kind": "loud", "why": err, "fallback": []}]
    for mod_in in inputs:
        if mod_in.forward_input is None:
            continue
        cargs, ckw = to_cpu(torch, (mod_in.constructor_input.args,
                                    mod_in.constructor_input.kwargs))
        dargs, dkw = mod_in.forward_input.args, mod_in.forward_input.kwargs
        fargs, fkw = to_cpu(torch, (dargs, dkw))
        try:
            torch.manual_seed(0)
            m = mi.module_cls(*cargs, **ckw).eval()
            pristine = copied(torch, (fargs, fkw))  # before an in-place module
            want = m(*fargs, **fkw)
            want_grads = backward(torch, m, fargs, want)
        except Exception:  # noqa: BLE001 -- the CPU refuses: not a sample
            continue
        md = copy.deepcopy(m).to(DEV)
        for p in md.parameters():
            p.grad = None

        def step():
            out = md(*dargs, **dkw)
            return out, backward(torch, md, dargs, out)
        got, err, fell = runner.run(step)
        if err:
            results.append({"kind": "loud", "why": err, "fallback": fell})
            continue
        why = compare(torch, (want, want_grads), got, False)
        if why and DTYPE == "float32":
            def call(x, m=m):
                """The module (in float64 for float64 inputs) and its gradients."""
                mc = copy.deepcopy(m)
                if any(isinstance(t, torch.Tensor) and t.dtype == torch.float64
                       for t in leaves(x)):
                    mc = mc.double()
                out = mc(*x[0], **x[1])
                return out, backward(torch, mc, x[0], out)
            why = second_look(torch, call, pristine, (want, want_grads), got, DEV, why)
        kind = "MISMATCH" if why else ("fallback" if fell else "pass")
        results.append({"kind": kind, "why": why, "fallback": fell})
    return results


def backward(torch, m, args, out):
    """Gradients of sum(outputs) w.r.t. the inputs and parameters."""
    outs = [o for o in leaves(out) if isinstance(o, torch.Tensor) and o.requires_grad
            and o.is_floating_point()]
    wrt = [a for a in leaves(args) if isinstance(a, torch.Tensor) and a.requires_grad]
    wrt += list(m.parameters())
    if not outs or not wrt:
        return []
    total = sum(o.sum() for o in outs)
    grads = torch.autograd.grad(total, wrt, allow_unused=True)
    return [g if g is not None else torch.zeros(()) for g in grads]


def items_of(torch, kinds):
    """(kind, name, item, function) of every op and module swept, in order:
    the OpInfos of op_db, then the ModuleInfos of module_db, that take DTYPE."""
    dtype = getattr(torch, DTYPE)
    out = []
    if "ops" in kinds:
        from torch.testing._internal import common_utils
        from torch.testing._internal.common_methods_invocations import op_db
        from torch.testing._internal.opinfo import core
        # Each sample_inputs() call looks up the stack for a unittest
        # TestCase (its tracked inputs, its per-sample skips), reading every
        # frame's source: 30 ms under TCG, for nothing here, where no
        # TestCase runs (it always finds None).
        common_utils.extract_test_fn = core.extract_test_fn = lambda: None
        out += [("ops", op.name + (f".{op.variant_test_name}" if op.variant_test_name else ""),
                 op, sweep_op)
                for op in op_db if dtype in op.supported_dtypes("cpu")]
    if "modules" in kinds:
        from torch.testing._internal.common_modules import module_db
        out += [("modules", m.name, m, sweep_module)
                for m in module_db if dtype in m.dtypes]
    return out


def child(argv):
    """Run items [start, ...) of the kinds asked for, one JSON line per
    finished item. One process goes through both kinds: `import torch` and
    the test modules cost a minute under TCG, per process."""
    a = parse(argv)
    global DTYPE
    DTYPE = a.dtype
    import torch
    import torch_neuron
    import warnings
    warnings.filterwarnings("ignore")
    torch.neuron.set_device(a.card)
    runner = Runner(torch, torch_neuron)
    items = items_of(torch, kinds_of(a))
    if a.filter:
        items = [it for it in items if re.search(a.filter, it[1])]
    with open(a.progress, "a") as prog:
        if a.start == 0:
            totals = {k: sum(it[0] == k for it in items) for k in kinds_of(a)}
            prog.write(json.dumps({"total": len(items), "totals": totals}) + "\n")
        for i in range(a.start, len(items)):
            if i % a.shards != a.shard:
                continue
            kind, name, item, fn = items[i]
            prog.write(json.dumps({"start": i, "set": kind, "name": name}) + "\n")
            prog.flush()
            t = time.time()
            # A hang is as bad as a crash: the child exits, the item is a CRASH.
            faulthandler.dump_traceback_later(a.item_timeout, exit=True)
            res = fn(torch, runner, item, a.samples)
            faulthandler.cancel_dump_traceback_later()
            prog.write(json.dumps({"done": i, "set": kind, "name": name,
                                   "kind": classify(res),
                                   "seconds": round(time.time() - t, 2),
                                   "samples": res}) + "\n")
            prog.flush()


def kinds_of(a):
    return [a.only] if a.only else ["ops", "modules"]


def parse(argv):
    p = argparse.ArgumentParser()
    p.add_argument("--samples", type=int, default=3)
    p.add_argument("--only", choices=["ops", "modules"])
    p.add_argument("--out", default="build/sweep")
    p.add_argument("--child", action="store_true")
    p.add_argument("--start", type=int, default=0)
    p.add_argument("--item-timeout", type=int, default=300)
    p.add_argument("--shard", type=int, default=0)
    p.add_argument("--shards", type=int, default=2,
                   help="processes (the guest has two CPUs)")
    p.add_argument("--card", type=int, default=0,
                   help='the card that "neuron" means in the samples')
    p.add_argument("--progress")
    p.add_argument("--filter", help="only the ops/modules whose name matches this regex")
    p.add_argument("--dtype", choices=["float32", "float64", "complex64"], default="float32")
    p.add_argument("--python", default=shlex.quote(sys.executable),
                   help="the command that runs the children (make check: "
                        "scripts/guest/prefork.py's client)")
    return p.parse_args(argv)


def drive(shard, a):
    """Run the child on items shard, shard + shards, ... until it has gone
    through them all, restarting it after an item that killed it (that item
    is a CRASH). Returns the finished items by index, and the totals per
    kind."""
    progress = os.path.join(a.out, f"{a.only or 'all'}-{shard}.progress")
    if os.path.exists(progress):
        os.remove(progress)
    start, done, total, totals = 0, {}, None, None
    while True:
        subprocess.run(shlex.split(a.python) + [__file__, "--child", "--samples", str(a.samples),
                        "--start", str(start), "--item-timeout", str(a.item_timeout),
                        "--shard", str(shard), "--shards", str(a.shards),
                        "--card", str(a.card), "--dtype", a.dtype, "--progress", progress]
                       + (["--only", a.only] if a.only else [])
                       + (["--filter", a.filter] if a.filter else []), check=False)
        last = None
        with open(progress) as f:
            for line in f:
                rec = json.loads(line)
                if "total" in rec:
                    total, totals = rec["total"], rec["totals"]
                elif "start" in rec:
                    last = rec
                else:
                    done[rec["done"]] = rec
        if total is None:
            raise SystemExit("sweep: the child died before listing its items")
        if last is None or last["start"] in done:
            break  # finished every item
        done[last["start"]] = {"done": last["start"], "set": last["set"],
                               "name": last["name"], "kind": "CRASH", "samples": []}
        start = last["start"] + 1
        if start >= total:
            break
    return done, totals


def main():
    a = parse(sys.argv[1:])
    if a.child:
        return child(sys.argv[1:])
    os.makedirs(a.out, exist_ok=True)
    with concurrent.futures.ThreadPoolExecutor(a.shards) as pool:
        runs = list(pool.map(lambda shard: drive(shard, a), range(a.shards)))
    done = {}
    for d, _ in runs:
        done.update(d)
    totals = runs[0][1]
    bad = 0
    for kind in kinds_of(a):
        recs = [done[i] for i in sorted(done) if done[i]["set"] == kind]
        label, noun = {"ops": ("opinfo", "ops"), "modules": ("moduleinfo", "modules")}[kind]
        if a.dtype != "float32":
            label += " " + a.dtype  # its own line: "opinfo float64: ..."

        with open(os.path.join(a.out, f"{kind}.json"), "w") as f:
            json.dump(recs, f, indent=1)
        count = {k: sum(r["kind"] == k for r in recs)
                 for k in ("pass", "fallback", "loud", "MISMATCH", "CRASH", "nosample")}
        for r in recs:
            if r["kind"] in ("MISMATCH", "CRASH"):
                why = next((s["why"] for s in r["samples"] if s["kind"] == "MISMATCH"), "")
                print(f"  {r['kind']} {r['name']}: {why}")
        counted = totals[kind] - count["nosample"]
        print(f"{label}: {count['pass']} of {counted} {noun} pass on neuron with no "
              f"fallback ({count['fallback']} fall back, {count['loud']} fail loudly, "
              f"{count['MISMATCH']} mismatch, {count['CRASH']} crash; "
              f"{a.samples} samples each)", flush=True)
        bad += count["MISMATCH"] + count["CRASH"]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

# SPDX-License-Identifier: MIT
"""Programs written for CUDA on neuron, unchanged (docs/cuda.md).

The switch changes the whole process for good, so nothing here turns it on
in the pytest process:
  * one process with TORCH_NEURON_CUDA=1 (a new interpreter: the variable is
    read when torch imports the backend) runs the check_* functions below
    and reports each; a test per check reads its report;
  * one process without the variable shows that nothing changed;
  * examples/cuda_ddp.py -- .cuda(), torch.cuda.amp, "nccl" DDP -- under
    torchrun on 2 cards through ``-m torch_neuron.cuda`` (the import form),
    and examples/cuda_ddp_neuron.py, the same training written for neuron:
    the same losses, step for step, bit for bit (the same operations on the
    same cards in the same order).
"""
import io
import json
import os
import pickle
import re
import socket
import sys
import traceback

import pytest

from conftest import Spawned, python_command, spawn_early

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.normpath(os.path.join(HERE, "..", "..", "examples"))
MARK = "@@cuda-switch@@ "
ENV = "TORCH_NEURON_CUDA"
WORLD = 2

# ---- run with TORCH_NEURON_CUDA=1 (in the --switched process) ----------------


def check_env_turned_it_on():
    import torch_neuron.cuda as nc
    assert nc.enabled()
    assert os.environ[ENV] == "1"


def check_availability():
    import torch
    n = torch.neuron.device_count()
    assert torch.cuda.is_available() and torch.cuda.device_count() == n > 0
    torch.cuda.init()
    assert torch.cuda.is_initialized()
    torch.cuda.set_device(n - 1)
    assert torch.cuda.current_device() == torch.neuron.current_device() == n - 1
    with torch.cuda.device(0):
        assert torch.neuron.current_device() == 0
    with torch.cuda.device("cuda:0"):
        assert torch.neuron.current_device() == 0
    torch.cuda.set_device(0)
    assert torch.cuda.get_device_name() == torch.neuron.get_device_name(0)
    props = torch.cuda.get_device_properties(0)
    assert props.total_memory == torch.neuron.get_device_properties(0).total_memory
    assert torch.cuda.is_bf16_supported()


def check_devices():
    import torch
    d = torch.device("cuda")
    assert d.type == "neuron" and d.index is None and str(d) == "neuron"
    assert torch.device("cuda", 0) == torch.device("cuda:0") == torch.device("neuron:0")
    assert torch.device(type="cuda", index=0).type == "neuron"
    assert torch.device(torch.device("cpu")).type == "cpu"
    assert torch.device("cpu").type == "cpu" and torch.device("meta").type == "meta"
    for dev in (d, torch.device("cpu"), torch.zeros(1, device="cuda").device):
        assert isinstance(dev, torch.device)
    assert not isinstance("cuda", torch.device)
    assert pickle.loads(pickle.dumps(torch.device("cuda", 0))) == torch.device("neuron:0")
    with torch.device("cuda"):
        assert torch.zeros(2).device.type == "neuron"
    assert torch.Generator(device="cuda").device.type == "neuron"
    assert isinstance(torch.Generator(), torch.Generator)


def check_tensors():
    import torch
    ref = torch.arange(6.0).reshape(2, 3)
    made = [torch.zeros(2, 3, device="cuda"), torch.ones(2, device=torch.device("cuda", 0)),
            torch.tensor([1.0], device="cuda:0"), torch.empty(3, device="cuda"),
            torch.arange(4, device="cuda"), torch.full((2,), 3.0, device="cuda"),
            torch.zeros_like(ref, device="cuda"), torch.randn(2, device="cuda")]
    moved = [ref.cuda(), ref.cuda(0), ref.cuda("cuda:0"), ref.to("cuda"),
             ref.to(device="cuda:0"), ref.to(torch.device("cuda")),
             ref.to("cuda", torch.float16), ref.cuda(non_blocking=True)]
    for t in made + moved:
        assert t.device.type == "neuron" and t.is_cuda, t.device
    for t in moved:
        assert torch.equal(t.cpu().float(), ref)
    x = ref.cuda()
    assert x.new_zeros(2, device="cuda").device.type == "neuron"
    assert x.new_tensor([1.0]).device.type == "neuron"
    assert not ref.is_cuda and x.device.type == "neuron" and x.device.type != "cuda"
    assert not hasattr(x, "__cuda_array_interface__")
    assert torch.equal((x * 2 + 1).cpu(), ref * 2 + 1)


def check_modules():
    import torch
    m = torch.nn.Linear(3, 2)
    w = m.weight
    m.cuda()
    assert m.weight is w and w.device.type == "neuron" and w.is_cuda
    m2 = torch.nn.Linear(3, 2).to("cuda")
    assert m2.weight.device.type == "neuron"
    m3 = torch.nn.Linear(3, 2).to(torch.device("cuda", 0), torch.float16)
    assert m3.weight.device.type == "neuron" and m3.weight.dtype == torch.float16
    m4 = torch.nn.Linear(3, 2).cuda(0)
    assert m4.bias.device == torch.device("neuron:0")


def check_load_map_location():
    import torch
    import torch.serialization as ser
    x = torch.arange(5.0)
    buf = io.BytesIO()
    torch.save({"w": x}, buf)
    # A checkpoint as a GPU machine writes it: storages tagged "cuda:0".
    tagger = ser.location_tag
    ser.location_tag = lambda storage: "cuda:0"
    try:
        gpu_buf = io.BytesIO()
        torch.save({"w": x}, gpu_buf)
    finally:
        ser.location_tag = tagger
    assert b"cuda:0" in gpu_buf.getvalue()
    cases = [(gpu_buf, None), (buf, "cuda"), (buf, "cuda:0"), (buf, torch.device("cuda", 0)),
             (gpu_buf, {"cuda:0": "cuda:0"}), (buf, lambda s, loc: s.cuda(0)),
             (gpu_buf, lambda s, loc: s.cuda())]
    for f, where in cases:
        f.seek(0)
        w = torch.load(f, map_location=where)["w"]
        assert w.device == torch.device("neuron:0"), (where, w.device)
        assert torch.equal(w.cpu(), x)


def check_amp():
    import torch
    a = torch.randn(8, 8, device="cuda")
    with torch.cuda.amp.autocast():
        assert torch.is_autocast_enabled() and torch.is_autocast_enabled("cuda")
        assert torch.get_autocast_gpu_dtype() == torch.float16
        assert (a @ a).dtype == torch.float16 and (a @ a).device.type == "neuron"
    assert not torch.is_autocast_enabled()
    with torch.autocast("cuda", dtype=torch.bfloat16):
        assert (a @ a).dtype == torch.bfloat16
    with torch.amp.autocast(device_type="cuda", dtype=torch.float16):
        assert (a @ a).dtype == torch.float16

    class Mul(torch.autograd.Function):
        @staticmethod
        @torch.cuda.amp.custom_fwd(cast_inputs=torch.float32)
        def forward(ctx, u, v):
            return u @ v

        @staticmethod
        @torch.cuda.amp.custom_bwd
        def backward(ctx, g):
            return g, g

    with torch.cuda.amp.autocast():
        assert Mul.apply(a, a).dtype == torch.float32
    for scaler in (torch.cuda.amp.GradScaler(), torch.amp.GradScaler("cuda"),
                   torch.amp.GradScaler()):
        assert scaler._device == "neuron" and scaler.is_enabled()
    m = torch.nn.Linear(8, 2).cuda()
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    scaler = torch.cuda.amp.GradScaler(init_scale=256.0)
    with torch.cuda.amp.autocast():
        loss = m(a).float().pow(2).mean()
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    assert scaler.get_scale() == 256.0 and m.weight.grad.device.type == "neuron"


def check_memory_rng_streams():
    import torch
    x = torch.empty(1 << 20, device="cuda")
    assert torch.cuda.memory_allocated() == torch.neuron.memory_allocated() >= x.nbytes
    assert torch.cuda.memory_reserved() >= torch.cuda.memory_allocated()
    assert torch.cuda.max_memory_allocated() >= x.nbytes
    assert torch.cuda.memory_stats()["allocated_bytes.all.current"] >= x.nbytes
    free, total = torch.cuda.mem_get_info()
    assert 0 < free <= total
    del x
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    torch.cuda.manual_seed(7)
    a = torch.randn(16, device="cuda")
    torch.neuron.manual_seed(7)
    b = torch.randn(16, device="neuron")
    assert torch.equal(a.cpu(), b.cpu())
    torch.cuda.manual_seed_all(3)
    state = torch.cuda.get_rng_state()
    c = torch.rand(4, device="cuda")
    torch.cuda.set_rng_state(state)
    assert torch.equal(torch.rand(4, device="cuda").cpu(), c.cpu())
    assert len(torch.cuda.get_rng_state_all()) == torch.neuron.device_count()
    s = torch.cuda.Stream()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    with torch.cuda.stream(s):
        start.record()
        y = torch.ones(1000, device="cuda") * 3
        end.record()
    torch.cuda.current_stream().wait_stream(s)
    end.synchronize()
    torch.cuda.synchronize()
    assert torch.cuda.current_stream() == torch.neuron.current_stream()
    assert float(y.sum()) == 3000.0


def check_cudnn_flags_accepted():
    import torch
    torch.backends.cudnn.benchmark = True
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.allow_tf32 = True
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.enabled = True
    x = torch.randn(1, 2, 5, 5)
    conv = torch.nn.Conv2d(2, 3, 3)
    want = conv(x)
    got = conv.cuda()(x.cuda())
    torch.testing.assert_close(got.cpu(), want, rtol=1e-4, atol=1e-5)
    # What asks whether CUDA or cuDNN is built still hears no.
    assert not torch.backends.cudnn.is_available() and not torch.backends.cuda.is_built()
    assert torch.version.cuda is None


def check_nccl_names():
    import torch.distributed as dist
    assert dist.Backend("nccl") == "neuron" and dist.Backend(dist.Backend.NCCL) == "neuron"
    assert dist.is_nccl_available()
    from torch.distributed.distributed_c10d import BackendConfig
    cfg = BackendConfig(dist.Backend("cpu:gloo,cuda:nccl"))
    assert cfg.get_device_backend_map() == {"cpu": "gloo", "neuron": "neuron"}, cfg
    assert BackendConfig(dist.Backend("nccl")).get_device_backend_map() == {"neuron": "neuron"}


def check_dataloader_pins():
    import torch
    from torch.utils.data import DataLoader, TensorDataset
    ds = TensorDataset(torch.arange(8.0))
    for kw in ({}, {"pin_memory_device": "cuda"}):
        (batch,) = next(iter(DataLoader(ds, batch_size=4, pin_memory=True, **kw)))
        assert batch.is_pinned(), kw
        assert torch.equal(batch.cuda(non_blocking=True).cpu(), torch.arange(4.0))


def _raises_naming(fn, name, exc=NotImplementedError):
    try:
        fn()
    except exc as e:
        assert name in str(e), f"{name!r} not in {e!r}"
        return
    raise AssertionError(f"{name} did not raise {exc.__name__}")


def check_unmapped_fail_naming_the_cuda_api():
    import torch
    import torch.utils.cpp_extension as ext
    from torch_neuron.cuda import CudaApiNotMapped
    _raises_naming(torch.cuda.get_device_capability, "torch.cuda.get_device_capability",
                   CudaApiNotMapped)
    _raises_naming(lambda: torch.cuda.nvtx.range_push("fwd"), "torch.cuda.nvtx.range_push")
    from torch.cuda.nvtx import range as nvtx_range
    _raises_naming(lambda: nvtx_range("fwd"), "torch.cuda.nvtx.range")
    _raises_naming(lambda: torch.cuda.jiterator._create_jit_fn("template <typename T> T f(T x)"
                                                                " { return x; }"),
                   "torch.cuda.jiterator._create_jit_fn")
    _raises_naming(lambda: torch.cuda.nccl.all_reduce([torch.zeros(1)]),
                   "torch.cuda.nccl.all_reduce")
    _raises_naming(lambda: torch.cuda.set_per_process_memory_fraction(0.5),
                   "torch.cuda.set_per_process_memory_fraction")
    _raises_naming(lambda: torch.cuda.make_graphed_callables(torch.nn.Linear(1, 1), ()),
                   "torch.cuda.make_graphed_callables")
    _raises_naming(lambda: ext.CUDAExtension("k", ["k.cu"]),
                   "torch.utils.cpp_extension.CUDAExtension")
    _raises_naming(lambda: ext.load_inline("k", cpp_sources="", cuda_sources="__global__ void "
                                           "k() {}"), "torch.utils.cpp_extension.load_inline")
    _raises_naming(lambda: torch.cuda.get_device_properties(0).major,
                   "torch.cuda.get_device_properties().major", AttributeError)
    _raises_naming(lambda: torch.zeros(1, device="cuda").__cuda_array_interface__,
                   "__cuda_array_interface__", AttributeError)


def check_no_fallbacks():
    """Runs last: nothing above ran an operator on the CPU instead of the card."""
    import torch_neuron
    assert torch_neuron.fallback_stats() == {}, torch_neuron.fallback_stats()


SWITCHED = [n for n in list(globals()) if n.startswith("check_")]


def _run_switched():
    """The --switched process: every check, in order, one report line each."""
    for name in SWITCHED:
        try:
            globals()[name]()
            res = {"name": name, "ok": True}
        except BaseException:  # noqa: BLE001 -- reported to the test
            res = {"name": name, "ok": False, "error": traceback.format_exc()}
        print(MARK + json.dumps(res), flush=True)


def _run_off():
    """The process without the variable: PyTorch as it always is."""
    import torch
    import torch.distributed as dist
    assert "torch_neuron.cuda" not in sys.modules
    assert type(torch.device("cpu")) is torch.device
    assert torch.device("cuda").type == "cuda"
    assert not torch.cuda.is_available()
    assert torch.cuda.is_available.__module__ == "torch.cuda"
    assert "is_cuda" not in torch.Tensor.__dict__ and "cuda" not in torch.Tensor.__dict__
    assert torch.zeros.__module__ is None or "torch_neuron" not in str(torch.zeros.__module__)
    assert not hasattr(torch.zeros, "_neuron_cuda_orig")
    try:
        torch.zeros(1, device="cuda")
    except (AssertionError, RuntimeError) as e:
        assert "CUDA" in str(e), e
    else:
        raise AssertionError("torch.zeros(device='cuda') worked without CUDA")
    assert torch.cuda.nvtx.__name__ == "torch.cuda.nvtx" and hasattr(torch.cuda.nvtx, "__file__")
    assert torch.amp.GradScaler.__init__.__module__ == "torch.amp.grad_scaler"
    assert dist.Backend("nccl") == "nccl"
    assert torch.zeros(1, device="neuron").device.type == "neuron"
    print(MARK + "off ok", flush=True)


# ---- the tests -------------------------------------------------------------


def _start_switched():
    env = dict(os.environ, **{ENV: "1"})
    # A new interpreter: the variable is read when torch imports the backend
    # (a prefork child has imported it already).
    return Spawned([sys.executable, os.path.abspath(__file__), "--switched"], env=env, cwd=HERE)


def _start_off():
    env = {k: v for k, v in os.environ.items() if k != ENV}
    return Spawned(python_command() + [os.path.abspath(__file__), "--off"], env=env, cwd=HERE)


_reports = {}


def _switched_reports(early):
    if not _reports:
        r = early.result(timeout=900)
        for line in r.stdout.splitlines():
            if line.startswith(MARK):
                rep = json.loads(line[len(MARK):])
                _reports[rep["name"]] = rep
        _reports["__output__"] = r.stdout + r.stderr
        _reports["__rc__"] = r.returncode
    return _reports


@pytest.fixture(scope="module")
def switched():
    return _switched_reports(_start_switched())


@pytest.mark.parametrize("check", SWITCHED)
def test_switched(switched, check):
    rep = switched.get(check)
    assert rep is not None, f"no report from {check}:\n{switched['__output__'][-4000:]}"
    assert rep["ok"], rep["error"]


@spawn_early(_start_off)
def test_switch_off_changes_nothing(early):
    r = early.result(timeout=600)
    assert r.returncode == 0 and MARK + "off ok" in r.stdout, r.stdout + r.stderr


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _torchrun(program_cmd):
    """torchrun, 2 workers, each running @program_cmd (no python prepended:
    the command may be the prefork client, conftest.python_command())."""
    # torchrun sets OMP_NUM_THREADS=1 for its workers unless it is set: keep
    # this process's count, so that the workers can be forks of make check's
    # prefork server (which has it) instead of fresh interpreters.
    import torch
    env = dict(os.environ, OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS")
               or str(torch.get_num_threads()))
    return Spawned(python_command() + [
        "-m", "torch.distributed.run", "--nproc-per-node", str(WORLD),
        "--master-addr", "127.0.0.1", "--master-port", str(_free_port()),
        "--no-python"] + program_cmd, cwd=EXAMPLES, env=env)


def _losses(out):
    return re.findall(r"^step \d+ loss .*$", out, re.M)


@pytest.mark.slow
def test_cuda_ddp_program_unchanged_on_two_cards():
    """examples/cuda_ddp.py, written for CUDA, under torchrun with the
    switch, gives the losses (and loss scales) of the same training written
    for neuron, step by step, with no operator on the CPU."""
    import torch
    if torch.neuron.device_count() < WORLD:
        pytest.skip(f"needs {WORLD} cards")
    steps = ["--steps", "6"]
    cuda = _torchrun(python_command() + ["-m", "torch_neuron.cuda", "cuda_ddp.py"] + steps)
    r = cuda.result(timeout=900)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-6000:]
    ref = _torchrun(python_command() + ["cuda_ddp_neuron.py"] + steps).result(timeout=900)
    ref_out = ref.stdout + ref.stderr
    assert ref.returncode == 0, ref_out[-6000:]
    got, want = _losses(r.stdout), _losses(ref.stdout)
    assert len(want) == 6 and got == want, f"CUDA program:\n{out}\nneuron program:\n{ref_out}"
    assert "device " in r.stdout and "runs on the CPU" not in out + ref_out, out + ref_out


if __name__ == "__main__":
    if sys.argv[1:] == ["--switched"]:
        _run_switched()
    elif sys.argv[1:] == ["--off"]:
        _run_off()

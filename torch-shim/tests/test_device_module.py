# SPDX-License-Identifier: MIT
"""torch.neuron as PyTorch's own Python uses a device module: each test
is one caller in PyTorch 2.6 that asks torch.<device> for something by
name (torch.utils.checkpoint, torch.random.fork_rng, torch.nn.parallel,
torch.autograd.graph.save_on_cpu, the DataLoader's pinning thread,
torch._dynamo's device interfaces), run the way that caller runs it."""
import subprocess
import textwrap

import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.checkpoint import checkpoint

from conftest import python_command

N = "neuron"


def bits(t):
    """@t's bytes on the CPU (NaN and -0.0 compare as bits)."""
    t = t.detach().cpu().contiguous()
    return t.view(torch.uint8) if t.dtype.itemsize == 1 else t.view(torch.int32)


def same_bits(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and torch.equal(bits(a), bits(b))


def _dropout_step(mode):
    """One training step of a Linear, dropout, Linear model on the card;
    @mode: "plain", or checkpoint with use_reentrant "reentrant" or
    "nonreentrant" around the first Linear and its dropout. Returns the
    gradients and a number drawn after the step (the generator's state
    after it)."""
    torch.manual_seed(0)
    lin1, lin2 = nn.Linear(16, 32).to(N), nn.Linear(32, 4).to(N)
    x = torch.randn(8, 16, device=N, requires_grad=True)

    def f(x):
        return F.dropout(lin1(x), p=0.5, training=True)

    torch.manual_seed(1)
    if mode == "plain":
        h = f(x)
    else:
        h = checkpoint(f, x, use_reentrant=(mode == "reentrant"))
    # More random numbers between the forward and the recomputation.
    loss = F.dropout(lin2(h), p=0.25, training=True).square().sum()
    loss.backward()
    after = torch.rand(4, device=N)
    return [lin1.weight.grad, lin1.bias.grad, lin2.weight.grad, x.grad, after]


@pytest.mark.parametrize("mode", ["nonreentrant", "reentrant"])
def test_checkpointed_dropout_step_equals_the_plain_step(mode):
    # torch.utils.checkpoint saves the card's random state for the
    # recomputation only if getattr(torch.neuron, "_initialized") is true.
    plain, ckpt = _dropout_step("plain"), _dropout_step(mode)
    for i, (a, b) in enumerate(zip(plain, ckpt)):
        assert same_bits(a, b), f"result {i} differs with checkpoint(use_reentrant={mode == 'reentrant'})"


def test_checkpoint_default_device_is_the_card():
    # With no tensor argument on a device, checkpoint falls back to
    # DefaultDeviceType (PyTorch's default: "cuda"): the autocast state it
    # restores for the recomputation is then the card's.
    assert torch.utils.checkpoint.DefaultDeviceType.get_device_type() == N
    torch.manual_seed(0)
    lin = nn.Linear(16, 16).to(N)
    x = torch.randn(4, 16)

    def f(x):
        return lin(x.to(N)).relu()

    def grads(use_checkpoint):
        lin.zero_grad()
        with torch.autocast(N, dtype=torch.bfloat16):
            y = checkpoint(f, x, use_reentrant=False) if use_checkpoint else f(x)
        assert y.dtype == torch.bfloat16
        y.float().sum().backward()
        return [p.grad.clone() for p in lin.parameters()]

    for a, b in zip(grads(False), grads(True)):
        assert same_bits(a, b)


def test_checkpoint_device_states_round_trip():
    x = torch.ones(2, device=N)
    ids, states = torch.utils.checkpoint.get_device_states(x)
    assert ids == [x.get_device()] and len(states) == 1
    a = torch.rand(3, device=N)
    torch.utils.checkpoint.set_device_states(ids, states, device_type=N)
    assert same_bits(torch.rand(3, device=N), a)


def test_fork_rng_restores_the_card():
    torch.manual_seed(3)
    before = torch.neuron.get_rng_state()
    with torch.random.fork_rng(device_type=N):
        inside = torch.rand(5, device=N)
    assert same_bits(torch.neuron.get_rng_state(), before)
    assert same_bits(torch.rand(5, device=N), inside)


def test_device_context_like_cuda():
    cur = torch.neuron.current_device()
    for noop in (None, -1):
        with torch.neuron.device(noop):
            assert torch.neuron.current_device() == cur
    with torch.neuron.device(torch.device(N, cur)) as d:
        assert d is None and torch.neuron.current_device() == cur
    t = torch.ones(1, device=N)
    with torch.neuron.device_of(t):
        assert torch.neuron.current_device() == t.get_device()
    with torch.neuron.device_of(torch.ones(1)):  # a CPU tensor: no change
        assert torch.neuron.current_device() == cur
    with pytest.raises(ValueError, match="expected a neuron device"):
        torch.neuron.device("cpu")


def test_initialized_only_after_first_use():
    # torch.cuda's meaning: PyTorch calls _lazy_init() at the device's first
    # use from Python; _initialized and is_initialized() say whether it did.
    prog = textwrap.dedent("""
        import torch
        before = (torch.neuron._initialized, torch.neuron.is_initialized())
        torch.ones(1, device="neuron")
        print(before, (torch.neuron._initialized, torch.neuron.is_initialized()))
    """)
    out = subprocess.run(python_command() + ["-c", prog], capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[-2] == "(False, False) (True, True)"


def test_nn_parallel_background_stream():
    from torch.nn.parallel._functions import _get_stream
    dev = torch.device(N, torch.neuron.current_device())
    s = _get_stream(dev)
    assert isinstance(s, torch.neuron.Stream) and s.device == dev
    assert _get_stream(dev) is s


def test_save_on_cpu_with_pinned_memory():
    torch.manual_seed(0)
    lin = nn.Sequential(nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 1)).to(N)
    x = torch.randn(5, 8, device=N)

    def grads(offload):
        lin.zero_grad()
        if offload:
            with torch.autograd.graph.save_on_cpu(pin_memory=True, device_type=N):
                y = lin(x)
        else:
            y = lin(x)
        y.sum().backward()
        return [p.grad.clone() for p in lin.parameters()]

    for a, b in zip(grads(False), grads(True)):
        assert same_bits(a, b)


def test_dataloader_pin_memory_thread():
    # The pinning thread makes the loader's device current in it through
    # torch.neuron.set_device (torch/utils/data/_utils/pin_memory.py).
    data = torch.utils.data.TensorDataset(torch.arange(12.0).view(6, 2))
    loader = torch.utils.data.DataLoader(data, batch_size=3, pin_memory=True,
                                         pin_memory_device=N)
    batches = list(loader)
    assert len(batches) == 2 and all(b[0].is_pinned() for b in batches)
    assert torch.equal(torch.cat([b[0] for b in batches]), data.tensors[0])


def test_dynamo_device_interface():
    from torch._dynamo.device_interface import get_interface_for_device

    import torch_neuron.compile.aot  # noqa: F401  (registers the interface)
    di = get_interface_for_device(N)
    assert di.device_count() == torch.neuron.device_count() and di.is_available()
    assert di.current_device() == torch.neuron.current_device()
    s = di.Stream()
    assert isinstance(s, torch.Stream) and di.current_stream() == torch.neuron.current_stream()
    with di.stream(s):
        assert di.current_stream() == s
        assert di.get_raw_stream(s.device_index) == s.stream_id
    e = di.Event()
    e.record()
    di.synchronize()
    assert e.query()
    assert get_interface_for_device(f"neuron:{torch.neuron.current_device()}") is di


def test_checkpoint_sequential_torchvision_model_with_dropout():
    # Code nobody here wrote: torchvision's SqueezeNet (its classifier
    # starts with Dropout) through torch.utils.checkpoint.checkpoint_sequential,
    # against the same step unchecked: the same gradients, bit for bit.
    import torchvision
    from torch.utils.checkpoint import checkpoint_sequential

    torch.manual_seed(0)
    net = torchvision.models.squeezenet1_1(num_classes=10).to(N).train()
    seq = nn.Sequential(net.features, net.classifier, nn.Flatten())
    x = torch.randn(2, 3, 64, 64, device=N)

    def grads(checkpointed):
        seq.zero_grad()
        torch.manual_seed(5)
        # Three segments: the last one (Flatten) runs unchecked, as
        # checkpoint_sequential does; the classifier (Dropout) is recomputed.
        y = checkpoint_sequential(seq, 3, x, use_reentrant=False) if checkpointed else seq(x)
        y.square().sum().backward()
        return [p.grad.clone() for p in seq.parameters()] + [torch.rand(3, device=N)]

    for i, (a, b) in enumerate(zip(grads(False), grads(True))):
        assert same_bits(a, b), f"result {i}"

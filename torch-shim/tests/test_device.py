# Owner(s): ["module: PrivateUse1"]
# SPDX-License-Identifier: MIT
"""Device "neuron": registration, tensors in device memory, the fallback."""
import os
import sys
import warnings

import pytest
import torch
import torch_neuron
from conftest import Spawned, python_command, spawn_early


def _autoload_interpreters():
    with_autoload = Spawned([sys.executable, "-c", "import torch; print(torch.device("
                             "'neuron').type, torch.neuron.device_count())"])
    env = dict(os.environ, TORCH_DEVICE_BACKEND_AUTOLOAD="0")
    without = Spawned([sys.executable, "-c", "import torch; print(hasattr(torch, 'neuron'))"],
                      env=env)
    return with_autoload, without


@spawn_early(_autoload_interpreters)
def test_autoload_in_fresh_interpreter(early):
    """A fresh Python finds device "neuron" with no import; autoload can be disabled."""
    with_autoload, without = (p.result() for p in early)
    assert with_autoload.returncode == 0, with_autoload.stderr
    assert with_autoload.stdout.split() == ["neuron", str(torch.neuron.device_count())]
    assert without.returncode == 0, without.stderr
    assert without.stdout.strip() == "False"


def test_new_process_through_python_command():
    """The tests' own new processes (python_command(); in make check a fork
    of scripts/guest/prefork.py's server) get their arguments, environment,
    inherited files and exit status as a new interpreter would."""
    r, w = os.pipe()
    code = ("import os, sys, torch; x = torch.ones(3, device='neuron') * 2; "
            "os.write(int(sys.argv[1]), b'%s %s' % (os.environ['NEURON_T'].encode(), "
            "str(x.sum().item()).encode())); sys.exit(7)")
    p = Spawned(python_command() + ["-c", code, str(w)], pass_fds=(w,),
                env=dict(os.environ, NEURON_T="here"))
    os.close(w)
    res = p.result(timeout=300)
    got = os.read(r, 100)
    os.close(r)
    assert res.returncode == 7, res.stderr
    assert got == b"here 6.0", (got, res.stderr)


def test_device_module():
    """torch.neuron reports the card and selects devices like torch.cuda."""
    assert torch.neuron.is_available()
    assert torch.neuron.device_count() >= 1
    assert torch.neuron.current_device() == 0
    with torch.neuron.device(0):
        assert torch.neuron.current_device() == 0
    with pytest.raises(RuntimeError, match="out of range"):
        torch.neuron.set_device(torch.neuron.device_count())


@pytest.mark.parametrize("shape", [(4,), (3, 5), (2, 3, 4), (0, 3), (1 << 20,)])
def test_roundtrip(shape):
    """CPU -> neuron -> CPU returns the same values."""
    x = torch.randn(shape)
    y = x.to("neuron")
    assert y.device.type == "neuron"
    assert y.shape == x.shape
    assert torch.equal(y.cpu(), x)


def test_noncontiguous_copies():
    """Strided views copy in and out of device memory correctly."""
    x = torch.arange(60, dtype=torch.float32).reshape(3, 4, 5)
    d = x.to("neuron")
    assert torch.equal(d.transpose(0, 2).cpu(), x.transpose(0, 2))
    assert torch.equal(d[:, 1::2, ::3].cpu(), x[:, 1::2, ::3])
    d2 = torch.zeros(5, 4, 3, device="neuron")
    d2.copy_(x.transpose(0, 2))
    assert torch.equal(d2.cpu(), x.transpose(0, 2).contiguous())
    d3 = torch.zeros(3, 4, 5, device="neuron")
    d3.transpose(0, 1).copy_(x.transpose(0, 1))
    assert torch.equal(d3.cpu(), x)


def test_ones_times_two():
    """The walking-skeleton example computes the right values on the card."""
    x = torch.ones(4, device="neuron") * 2
    assert x.device.type == "neuron"
    assert x.cpu().tolist() == [2.0, 2.0, 2.0, 2.0]


# unique(dim=) of rows with NaN in them runs on the CPU: the CPU's order of
# such rows is its std::sort's own (Unique.cpp).
@pytest.mark.allow_fallback("aten::unique_dim")
def test_fallback_warns_and_counts(monkeypatch):
    """An op the card cannot do the CPU's way runs on the CPU, warns once,
    and is counted; TORCH_NEURON_FALLBACK=error makes it an error."""
    torch_neuron.reset_fallback_stats()
    c = torch.tensor([[1.0, 2.0], [0.5, float("nan")], [1.0, 2.0]])
    x = c.to("neuron")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y = torch.unique(x, dim=0)
    assert y.device.type == "neuron"
    torch.testing.assert_close(y.cpu(), torch.unique(c, dim=0), equal_nan=True)
    assert any("unique_dim" in str(w.message) and "NaN" in str(w.message)
               for w in caught)
    assert torch_neuron.fallback_stats().get("aten::unique_dim", 0) >= 1
    monkeypatch.setenv("TORCH_NEURON_FALLBACK", "error")
    with pytest.raises(RuntimeError, match="TORCH_NEURON_FALLBACK=error"):
        torch.unique(x, dim=0)
    torch_neuron.reset_fallback_stats()
    assert torch.equal(torch.unique(x.nan_to_num(), dim=0).cpu(),
                       torch.unique(c.nan_to_num(), dim=0))
    assert torch_neuron.fallback_stats() == {}


@pytest.mark.allow_fallback("aten::add.Tensor")
def test_nested_tensor_ops_fall_back():
    """A nested tensor on neuron (its buffer on the card): an operator with no
    nested neuron kernel runs on the CPU, loudly, its result back on the
    card; an in-place one is refused (it would write a copy)."""
    a, b = torch.randn(2, 3), torch.randn(4, 3)
    nt = torch.nested.nested_tensor([a, b], device="neuron")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = nt + 1
    assert r.is_nested and r.device.type == "neuron"
    assert any("nested tensor" in str(w.message) for w in caught)
    want = torch.nested.nested_tensor([a + 1, b + 1]).to_padded_tensor(0.0)
    assert torch.equal(r.to_padded_tensor(0.0).cpu(), want)
    with pytest.raises(RuntimeError, match="in place"):
        nt.add_(1)


def test_bad_device_index():
    """An out-of-range device index raises the error PyTorch users expect."""
    with pytest.raises(RuntimeError, match="out of range"):
        torch.empty(2, device=f"neuron:{torch.neuron.device_count()}")


def test_mixing_devices():
    """A CPU tensor in a neuron op is refused, as with CUDA."""
    with pytest.raises(RuntimeError, match="same device"):
        torch.ones(3, device="neuron") + torch.ones(3)


def test_module_and_tensor_methods():
    """Generated Tensor.neuron(), is_neuron, Module.neuron()."""
    t = torch.ones(2).neuron()
    assert t.is_neuron and t.device.type == "neuron"
    m = torch.nn.Linear(2, 2).neuron()
    assert next(m.parameters()).device.type == "neuron"


def _pytest_without_relu():
    here = os.path.dirname(os.path.abspath(__file__))
    env = dict(os.environ, TORCH_NEURON_DISABLE_KERNELS="aten::relu")
    return Spawned([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                    "--rootdir", here, os.path.join(here, "test_ops.py"),
                    "-k", "test_unary and (relu or neg)"], env=env)


@spawn_early(_pytest_without_relu)
def test_missing_kernel_fails_the_tests_using_it(early):
    """With a kernel removed (TORCH_NEURON_DISABLE_KERNELS=aten::relu), the
    op still gives CPU numbers through the fallback, and the suite's fallback
    check fails exactly the tests that use it."""
    proc = early.result(timeout=900)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out
    assert "2 failed, 2 passed" in out, out  # relu fails, neg passes (2 dtypes each)
    assert "aten::relu" in out and "ran on the CPU" in out, out


def test_disabling_a_view_kernel_is_refused():
    """A view cannot run through the CPU fallback (it would alias a copy):
    asking to disable one, or an unknown operator, is an error."""
    with pytest.raises(RuntimeError, match="returns a view"):
        torch.ops.neuron.disable_kernels("aten::view")
    with pytest.raises(RuntimeError, match="no such operator"):
        torch.ops.neuron.disable_kernels("aten::no_such_op")
    x = torch.arange(6.0, device="neuron")
    assert x.view(2, 3).cpu().tolist() == [[0, 1, 2], [3, 4, 5]]

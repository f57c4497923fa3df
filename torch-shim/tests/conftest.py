# SPDX-License-Identifier: MIT
"""Shared helpers of the torch_neuron tests (one Python process runs them;
make check splits them over two, see scripts/guest/check)."""
import atexit
import faulthandler
import os
import shlex
import subprocess
import sys
import tempfile

import pytest
import torch
import torch_neuron


# "neuron" (no index) means this card for the whole process: make check runs
# part of the suite in a second pytest process on the VM's second card
# (scripts/guest/check).
if os.environ.get("TORCH_NEURON_TEST_CARD"):
    torch.neuron.set_device(int(os.environ["TORCH_NEURON_TEST_CARD"]))


# Where a hung test's stacks go: the process's stderr, duplicated while
# pytest's capture of it is suspended (pytest_configure), since the output
# pytest captures during a test is lost when the process exits.
_stderr = None


def pytest_configure(config):
    global _stderr
    _stderr = os.fdopen(os.dup(2), "w")
    config.addinivalue_line("markers", "slow: longer end-to-end runs")
    config.addinivalue_line(
        "markers", "allow_fallback(*ops): operators (as torch_neuron.fallback_stats() "
        "names them, e.g. 'aten::cumsum.out') this test may run on the CPU")


# A test that hangs (a wait on the card that never ends) stops its pytest
# process after this many seconds, printing every thread's stack, instead
# of holding make check until the VM's timeout (40 minutes). The slowest
# test takes 82 s in make check on a 2-core TCG host.
CALL_TIMEOUT = int(os.environ.get("TORCH_NEURON_TEST_TIMEOUT", "900"))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    """A test fails when an operator fell back to the CPU during it, unless
    the test names that operator in @pytest.mark.allow_fallback(...): a
    fallback gives the right numbers on "neuron", so only counting shows it.
    A test that runs for CALL_TIMEOUT seconds ends the process (see above)."""
    torch_neuron.reset_fallback_stats()
    faulthandler.dump_traceback_later(CALL_TIMEOUT, exit=True, file=_stderr)
    try:
        result = yield
    finally:
        faulthandler.cancel_dump_traceback_later()
    marker = item.get_closest_marker("allow_fallback")
    allowed = set(marker.args) if marker else set()
    fell = {op: n for op, n in torch_neuron.fallback_stats().items() if op not in allowed}
    if fell:
        pytest.fail("operators ran on the CPU instead of the card: "
                    + ", ".join(f"{op} x{n}" for op, n in sorted(fell.items()))
                    + "; give them kernels, or name them in @pytest.mark.allow_fallback",
                    pytrace=False)
    return result


def python_command():
    """The command a test starts a new Python process that imports torch
    with: this interpreter, or what TORCH_NEURON_TEST_PYTHON says (make
    check: scripts/guest/prefork.py's client, a fork of a server that has
    imported torch, where a fresh `import torch` costs 30-70 s of TCG)."""
    return shlex.split(os.environ.get("TORCH_NEURON_TEST_PYTHON", "")) or [sys.executable]


class Spawned:
    """A subprocess.Popen whose output goes to temporary files (a full pipe
    cannot stall it while nobody reads) and that is killed when pytest exits
    without having waited for it."""

    def __init__(self, args, **kw):
        self.out, self.err = tempfile.TemporaryFile("w+"), tempfile.TemporaryFile("w+")
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=self.out,
                                     stderr=self.err, text=True, **kw)
        atexit.register(self._kill)

    def _kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def result(self, timeout=900):
        """subprocess.run's CompletedProcess (output captured as text)."""
        self.proc.wait(timeout=timeout)
        self.out.seek(0)
        self.err.seek(0)
        return subprocess.CompletedProcess(self.proc.args, self.proc.returncode,
                                           self.out.read(), self.err.read())


def spawn_early(start):
    """Decorator of a test that runs new Python interpreters: start() starts
    them (returning Spawned objects) as soon as pytest has selected the tests,
    so that their import of PyTorch (most of their cost under TCG) overlaps
    the tests that run before; the test gets start()'s result as `early`."""
    def mark(test):
        test.spawn_early = start
        return test
    return mark


_early = {}


def pytest_collection_finish(session):
    for item in session.items:
        start = getattr(getattr(item, "function", None), "spawn_early", None)
        if start is not None:
            _early[item.nodeid] = start()


@pytest.fixture
def early(request):
    if request.node.nodeid in _early:
        return _early.pop(request.node.nodeid)
    return request.function.spawn_early()


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(1234)


@pytest.fixture
def fresh_compile(tmp_path, monkeypatch):
    """A compiled-mode test starts from nothing: its own empty kernel cache
    (TORCH_NEURON_CACHE_DIR), dynamo's caches reset, compile_stats() zero."""
    monkeypatch.setenv("TORCH_NEURON_CACHE_DIR", str(tmp_path / "cache"))
    torch._dynamo.reset()
    torch_neuron.reset_compile_stats()
    yield
    torch._dynamo.reset()


def assert_close(got, want, dtype=torch.float32, **kw):
    """Compare a neuron result with the CPU's; tolerances by dtype.

    float32: the card computes elementwise ops in double and rounds once, so
    results are within a few ulp of the CPU's; matmuls and reductions sum in
    another order: rtol 1e-4. bfloat16: one bf16 rounding apart: rtol 1.6e-2.
    """
    tol = {torch.float32: dict(rtol=1e-4, atol=1e-5),
           torch.bfloat16: dict(rtol=1.6e-2, atol=1e-2)}.get(dtype, dict(rtol=0, atol=0))
    tol.update(kw)
    assert got.device.type == "neuron", got.device
    torch.testing.assert_close(got.cpu(), want, **tol, equal_nan=True)

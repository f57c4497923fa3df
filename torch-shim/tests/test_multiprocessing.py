# SPDX-License-Identifier: MIT
"""neuron tensors shared between processes through torch.multiprocessing
(torch_neuron/multiprocessing.py, docs/multiprocessing.md): the receiver
gets the sender's memory, not a copy, with the same view; writes are seen
both ways after a synchronize; what cannot be shared raises at put."""
import json
import multiprocessing.reduction
import os
import queue
import shlex
import stat
import sys
import tempfile
import time

import pytest
import torch
import torch.multiprocessing as mp

from conftest import Spawned, python_command, spawn_early

N = "neuron"
MARK = "@@mp "


def _roundtrip(obj):
    """Pickle @obj as a multiprocessing queue does and load it back here."""
    return multiprocessing.reduction.ForkingPickler.loads(
        multiprocessing.reduction.ForkingPickler.dumps(obj))


def test_share_in_process_is_the_same_memory():
    """Sent and received in one process: the same bytes (libneuron hands
    back the buffer the device file already has), views keep their offset
    and strides, two views of one storage stay one storage, and the block
    is not given to another tensor while the received one lives."""
    from torch_neuron.multiprocessing import ipc_collect
    base = torch.arange(24, dtype=torch.float32, device=N)
    view = base[4:16].view(3, 4)[:, 1:3]
    b2, v2 = _roundtrip((base, view))
    assert v2.storage_offset() == view.storage_offset() == 5
    assert v2.stride() == view.stride() and v2.shape == view.shape
    assert torch.equal(v2.cpu(), view.cpu())
    assert v2.untyped_storage().data_ptr() == b2.untyped_storage().data_ptr()
    v2.mul_(-1)
    torch.neuron.synchronize()
    assert base[5].item() == -5.0 and base[4].item() == 4.0
    base[0] = 100.0
    torch.neuron.synchronize()
    assert b2[0].item() == 100.0
    # The sender's tensor gone, the block is kept while b2 lives.
    addr = base.untyped_storage().data_ptr()
    del base, view, v2
    others = [torch.empty(24, dtype=torch.float32, device=N) for _ in range(4)]
    assert all(o.untyped_storage().data_ptr() != addr for o in others)
    assert ipc_collect() == 1
    assert b2[5].item() == -5.0
    del b2
    assert ipc_collect() == 0


def test_share_storage_empty_and_parameter():
    p = torch.nn.Parameter(torch.ones(3, device=N))
    st = torch.arange(6, dtype=torch.uint8, device=N).untyped_storage()
    e = torch.empty(0, device=N)
    p2, st2, e2 = _roundtrip((p, st, e))
    assert isinstance(p2, torch.nn.Parameter) and p2.requires_grad
    assert p2.untyped_storage().data_ptr() == p.untyped_storage().data_ptr()
    assert st2.device.type == N and st2.data_ptr() == st.data_ptr()
    assert e2.device.type == N and e2.numel() == 0


def test_unshareable_raises_at_put():
    """Raised by the reduction in the sending process, at once."""
    q = mp.get_context("spawn").SimpleQueue()
    x = torch.ones(4, device=N, requires_grad=True) * 2   # not a leaf
    t0 = time.monotonic()
    with pytest.raises(RuntimeError, match="non-leaf tensor which requires_grad"):
        q.put(x)
    assert time.monotonic() - t0 < 1.0
    q.close()


def test_import_on_a_card_this_process_lacks_raises():
    """The receiver names the card it does not have, and gives the
    sender's count back (the sender's storage is not kept forever)."""
    from torch_neuron.multiprocessing import ipc_collect
    x = torch.ones(8, device=N)
    fd, cfd, slot, off, nbytes, minor = torch.ops.neuron.ipc_export(x)
    try:
        with pytest.raises(RuntimeError, match="accel999, which this process does not have"):
            torch.ops.neuron.ipc_import(fd, cfd, slot, off, nbytes, 999)
    finally:
        os.close(fd)
    assert ipc_collect() == 0


# ---- two processes ----------------------------------------------------------
#
# Each context is run by a program of its own (this file run as a script):
# for "fork" the parent must not have used the card before it forks (see
# test_fork.py for what happens when it has). Under make check a new
# interpreter is a fork of the prefork server (conftest.python_command());
# spawn's and forkserver's children are started the same way, through a
# two-line executable, as spawn starts any interpreter.


def _child(q_in, q_out):
    base, view = q_in.get()
    report = {"values": view.cpu().tolist(), "offset": view.storage_offset(),
              "stride": list(view.stride()),
              "one_storage": view.untyped_storage().data_ptr()
              == base.untyped_storage().data_ptr()}
    view.mul_(-1)                       # in place, in the parent's memory
    torch.neuron.synchronize()
    mine = torch.full((5,), 7.0, device=N)
    torch.neuron.synchronize()
    q_out.put((report, mine))
    assert q_in.get() == "done"         # the parent holds `mine` now


def _main(method):
    ctx = mp.get_context(method)
    cmd = shlex.split(os.environ.get("TORCH_NEURON_TEST_PYTHON", ""))
    if method != "fork" and cmd:
        exe = os.path.join(tempfile.mkdtemp(), "python")
        with open(exe, "w") as f:
            # spawn passes the interpreter's flags (-B, -X opt...): the
            # zygote's interpreter has them already.
            f.write("#!/bin/sh\nwhile [ $# -gt 0 ]; do case $1 in -c|-m|-u) break;; "
                    "-W|-X) shift 2;; -*) shift;; *) break;; esac; done\n"
                    "exec " + shlex.join(cmd) + ' "$@"\n')
        os.chmod(exe, stat.S_IRWXU)
        ctx.set_executable(exe)
    q_in, q_out = ctx.Queue(), ctx.Queue()
    p = ctx.Process(target=_child, args=(q_in, q_out))
    p.start()
    base = torch.arange(24, dtype=torch.float32, device=N)
    view = base[4:16].view(3, 4)[:, 1:3]
    q_in.put((base, view))
    deadline = time.monotonic() + 600
    while True:
        try:
            report, mine = q_out.get(timeout=2)
            break
        except queue.Empty:
            if not p.is_alive() or time.monotonic() > deadline:
                raise SystemExit(f"the {method} child ended ({p.exitcode}) or hung "
                                 "without answering")
    torch.neuron.synchronize()
    report["parent_sees"] = base.cpu().tolist()
    report["child_tensor"] = mine.cpu().tolist()
    q_in.put("done")
    p.join(timeout=120)
    report["exitcode"] = p.exitcode
    # The child is gone: its tensor's memory is still here.
    report["child_tensor_after_exit"] = (mine + 1).cpu().tolist()
    print(MARK + json.dumps(report), flush=True)


def _start(method):
    return Spawned(python_command() + [os.path.abspath(__file__), method],
                   cwd=os.path.dirname(os.path.abspath(__file__)))


def _check(early):
    r = early.result(timeout=900)
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith(MARK)]
    assert r.returncode == 0 and lines, r.stdout[-3000:] + r.stderr[-6000:]
    rep = json.loads(lines[-1][len(MARK):])
    want = torch.arange(24, dtype=torch.float32)
    assert rep["values"] == want[4:16].view(3, 4)[:, 1:3].tolist()
    assert rep["offset"] == 5 and rep["stride"] == [4, 1] and rep["one_storage"]
    want[4:16].view(3, 4)[:, 1:3].mul_(-1)
    assert rep["parent_sees"] == want.tolist()
    assert rep["child_tensor"] == [7.0] * 5
    assert rep["child_tensor_after_exit"] == [8.0] * 5
    assert rep["exitcode"] == 0


@spawn_early(lambda: _start("fork"))
def test_two_processes_fork_context(early):
    _check(early)


@spawn_early(lambda: _start("spawn"))
def test_two_processes_spawn_context(early):
    _check(early)


@spawn_early(lambda: _start("forkserver"))
def test_two_processes_forkserver_context(early):
    _check(early)


if __name__ == "__main__":
    _main(sys.argv[1])

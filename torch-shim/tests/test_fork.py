# SPDX-License-Identifier: MIT
"""A child forked (no exec) after its parent used the card: the card is
refused there at first use with a message saying to use spawn -- never a
hang, never the parent's memory -- and the parent goes on unharmed. This
pytest process has used the card, so each case forks it. (A child forked
before its parent used the card uses the card normally:
test_multiprocessing.py's fork-context case.)"""
import json
import os
import pickle
import select
import signal
import time

import pytest
import torch
import torch.multiprocessing as mp
from torch.utils.data import DataLoader, Dataset

N = "neuron"
LIMIT = 120  # seconds a child may take before the test kills it and fails


def _in_child(x):
    """The checks a forked child makes; a dict of what it saw."""
    out = {"bad_fork": torch.neuron._is_in_bad_fork()}
    for name, use in [("new", lambda: torch.ones(2, device=N)),
                      ("op", lambda: x + 1),
                      ("read", lambda: x.cpu()),
                      ("put", lambda: mp.get_context("spawn").SimpleQueue().put(x)),
                      ("pinned", lambda: torch.empty(4, pin_memory=True))]:
        t0 = time.monotonic()
        try:
            use()
            out[name] = "worked"
        except RuntimeError as e:
            out[name] = str(e)
        out[name + "_s"] = time.monotonic() - t0
    torch.manual_seed(1)  # the DataLoader's workers do this: skips the card
    out["cpu"] = (torch.ones(3) * 2).tolist()
    return out


def _check_child(out):
    assert out["bad_fork"] is True
    for name in ["new", "op", "read", "put", "pinned"]:
        assert "forked" in out[name] and "'spawn'" in out[name], out[name]
        assert out[name + "_s"] < 5.0
    assert out["cpu"] == [2.0] * 3


def _wait(pid, deadline):
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    pytest.fail(f"the forked child did not finish in {LIMIT} s")


def test_os_fork_refuses_the_card():
    x = torch.arange(4.0, device=N)
    torch.neuron.synchronize()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            data = json.dumps(_in_child(x)).encode()
        except BaseException as e:  # noqa: BLE001  (report anything)
            data = json.dumps({"error": repr(e)}).encode()
        os.write(w, data)
        os._exit(0)
    os.close(w)
    deadline = time.monotonic() + LIMIT
    chunks = []
    while True:
        ready, _, _ = select.select([r], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            break
        chunk = os.read(r, 65536)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(r)
    assert _wait(pid, deadline) == 0
    out = json.loads(b"".join(chunks) or b"{}")
    assert "error" not in out, out
    _check_child(out)
    # The parent's tensor and card are intact.
    assert (x + 1).cpu().tolist() == [1.0, 2.0, 3.0, 4.0]
    assert torch.neuron._is_in_bad_fork() is False


def _mp_target(x, q):
    try:
        q.put(pickle.dumps(_in_child(x)))
    except BaseException as e:  # noqa: BLE001
        q.put(pickle.dumps({"error": repr(e)}))


def test_multiprocessing_fork_context_refuses_the_card():
    ctx = mp.get_context("fork")
    x = torch.arange(4.0, device=N)
    q = ctx.SimpleQueue()
    p = ctx.Process(target=_mp_target, args=(x, q))
    p.start()
    p.join(LIMIT)
    if p.is_alive():
        p.kill()
        p.join()
        pytest.fail(f"the fork-context child did not finish in {LIMIT} s")
    assert p.exitcode == 0
    out = pickle.loads(q.get())
    assert "error" not in out, out
    _check_child(out)
    assert (x * 2).cpu().tolist() == [0.0, 2.0, 4.0, 6.0]


class _Squares(Dataset):
    def __init__(self, on_card):
        self.on_card = on_card

    def __len__(self):
        return 8

    def __getitem__(self, i):
        t = torch.tensor([float(i)])
        return t.to(N) if self.on_card else t * t


def test_dataloader_workers_on_the_card_raise():
    torch.ones(1, device=N)  # this process has used the card
    loader = DataLoader(_Squares(True), batch_size=2, num_workers=2, timeout=LIMIT)
    t0 = time.monotonic()
    with pytest.raises(RuntimeError, match="(?s)DataLoader worker.*forked.*'spawn'"):
        list(loader)
    assert time.monotonic() - t0 < LIMIT


def test_dataloader_cpu_workers_work():
    """Workers that do not touch the card work (torch.manual_seed in each
    worker skips the card: torch.neuron._is_in_bad_fork()); the batches
    then go to the card in this process."""
    torch.ones(1, device=N)
    loader = DataLoader(_Squares(False), batch_size=4, num_workers=2, timeout=LIMIT)
    got = [b.to(N).sum().item() for b in loader]
    assert got == [0.0 + 1 + 4 + 9, 16.0 + 25 + 36 + 49]

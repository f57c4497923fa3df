# SPDX-License-Identifier: MIT
"""A checkpoint resumes training exactly: a model with dropout, trained on
the card on data drawn on the card, is saved after K steps (weights, AdamW
state and the card's RNG state, with torch.save); a new Python process
loads it and trains K more steps; its losses equal, bit for bit, those of
steps K..2K-1 of the uninterrupted run. Without the RNG state they differ.

The new process is started when pytest imports this file, and waits on its
stdin for the checkpoint's path: it has nothing of this process but the
file, and its import of PyTorch (most of its cost under TCG) overlaps the
tests that run before this one. It exits when its stdin closes."""
import atexit
import json
import os
import subprocess
import sys
import tempfile

import pytest
import torch
import torch.nn as nn
from conftest import python_command

N = "neuron"
K = 4
CHILD = "TORCH_NEURON_TEST_RESUME_CHILD"


def make():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Dropout(0.3),
                          nn.Linear(32, 4)).to(N)
    return model, torch.optim.AdamW(model.parameters(), lr=1e-2)


def step(model, opt):
    # data from the card's generator too: the state must carry it on
    x = torch.randn(64, 16, device=N)
    y = torch.randint(0, 4, (64,), device=N)
    loss = nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss.item()


def load(path, with_rng=True):
    model, opt = make()
    ck = torch.load(path, weights_only=True)
    model.load_state_dict(ck["model"])
    opt.load_state_dict(ck["opt"])
    if with_rng:
        torch.neuron.set_rng_state(ck["rng"])
    return model, opt


def child_main():
    """The new process: wait for a checkpoint's path, train K steps from it,
    print the losses as JSON. An empty line or EOF: nothing to do."""
    path = sys.stdin.readline().strip()
    if path:
        model, opt = load(path)
        print(json.dumps([step(model, opt) for _ in range(K)]), flush=True)


def spawn():
    here = os.path.dirname(os.path.abspath(__file__))
    code = f"import sys; sys.path.insert(0, {here!r}); import test_resume; test_resume.child_main()"
    err = tempfile.TemporaryFile(mode="w+")
    proc = subprocess.Popen(python_command() + ["-c", code], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=err, text=True,
                            env=dict(os.environ, **{CHILD: "1"}))
    proc.err = err

    def reap():
        if proc.poll() is None:
            proc.stdin.close()
            try:
                proc.wait(timeout=120)
            except subprocess.TimeoutExpired:
                proc.kill()
    atexit.register(reap)
    return proc


_child = None if os.environ.get(CHILD) else spawn()


@pytest.mark.slow
def test_resume_in_a_new_process(tmp_path):
    global _child
    child, _child = _child or spawn(), None
    model, opt = make()
    first = [step(model, opt) for _ in range(K)]
    path = str(tmp_path / "ck.pt")
    torch.save({"model": model.state_dict(), "opt": opt.state_dict(),
                "rng": torch.neuron.get_rng_state()}, path)
    full = first + [step(model, opt) for _ in range(K)]

    out, _ = child.communicate(path + "\n", timeout=900)
    child.err.seek(0)
    assert child.returncode == 0, child.err.read()[-3000:]
    resumed = json.loads(out.strip().splitlines()[-1])
    assert resumed == full[K:]

    # the RNG state matters: without it the masks and data differ
    torch.manual_seed(99)
    model, opt = load(path, with_rng=False)
    assert [step(model, opt) for _ in range(K)] != full[K:]

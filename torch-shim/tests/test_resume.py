# SPDX-License-Identifier: MIT
"""A checkpoint resumes training exactly: a model with dropout, trained on
the card on data drawn on the card, is saved after K steps (weights, AdamW
state and the card's RNG state, with torch.save); a new Python process
loads it and trains K more steps; its losses equal, bit for bit, those of
steps K..2K-1 of an uninterrupted run."""
import json
import os
import subprocess
import sys

import pytest
import torch
import torch.nn as nn

N = "neuron"
K = 4


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


def resume_main(path):
    """Run in the new process: K steps from the checkpoint, losses as JSON."""
    model, opt = load(path)
    print(json.dumps([step(model, opt) for _ in range(K)]))


@pytest.mark.slow
def test_resume_in_a_new_process(tmp_path):
    model, opt = make()
    full = [step(model, opt) for _ in range(2 * K)]

    model, opt = make()
    first = [step(model, opt) for _ in range(K)]
    assert first == full[:K]
    path = str(tmp_path / "ck.pt")
    torch.save({"model": model.state_dict(), "opt": opt.state_dict(),
                "rng": torch.neuron.get_rng_state()}, path)

    here = os.path.dirname(os.path.abspath(__file__))
    code = (f"import sys; sys.path.insert(0, {here!r}); import test_resume; "
            f"test_resume.resume_main({path!r})")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    resumed = json.loads(out.stdout.strip().splitlines()[-1])
    assert resumed == full[K:]

    # the RNG state matters: without it the masks and data differ
    torch.manual_seed(99)
    model, opt = load(path, with_rng=False)
    assert [step(model, opt) for _ in range(K)] != full[K:]

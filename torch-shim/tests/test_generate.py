# Owner(s): ["module: PrivateUse1"]
# SPDX-License-Identifier: MIT
"""examples/generate.py: GPT-2 and a Llama-style decoder generate on the card
from a static KV cache, the prefill one NeuronGraph replay per prompt
bucket and each decode step one replay. Greedy decoding gives the CPU's
tokens (the same code, eagerly), which are those of the plain way (the
training forward over the whole sequence at every step); decode steps
across 64 positions are one launch each with no capture, compile or
recompile -- as a NeuronGraph and under torch.compile(backend="neuron");
sampling (temperature, top-k, top-p) draws from the card's generator,
reproducibly under a seed, and its choice on the card is the CPU's for the
same uniforms."""
import copy
import os
import sys

import pytest
import torch
import torch_neuron
from torch.utils._python_dispatch import TorchDispatchMode

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples"))
import generate as G  # noqa: E402

N = "neuron"
MAX_LEN = 96


@pytest.fixture(autouse=True)
def _no_fallback(monkeypatch):
    monkeypatch.setenv("TORCH_NEURON_FALLBACK", "error")


def _prompt(batch=2, n=8, seed=1):
    return torch.randint(0, G.VOCAB, (batch, n), generator=torch.Generator().manual_seed(seed))


def _cpu_tokens(model, prompt, new):
    """The same Decoder eagerly on the CPU, checked against the plain way."""
    out = G.Decoder(model, prompt.shape[0], MAX_LEN, "eager").generate(prompt, new)
    assert torch.equal(out, G.generate_full(model, prompt, new))
    return out


class _CountOps(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.ops = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops.append(str(func))
        return func(*args, **(kwargs or {}))


@pytest.mark.slow
@pytest.mark.parametrize("name", ["gpt2", "llama"])
def test_greedy_on_neuron_equals_cpu(name):
    """64 greedy tokens of two prompts, then a prompt of another bucket on
    the same graphs: the card's tokens are the CPU's."""
    model = G.make_model(name, MAX_LEN)
    prompt = _prompt()
    want = _cpu_tokens(model, prompt, 64)
    dec = G.Decoder(copy.deepcopy(model).to(N), 2, MAX_LEN, "graph")
    assert dec.cache.shape == G.cache_shape(model, 2, MAX_LEN)
    assert torch.equal(dec.generate(prompt, 64), want)
    longer = _prompt(n=20, seed=2)
    assert torch.equal(dec.generate(longer, 16), _cpu_tokens(model, longer, 16))
    assert sorted(dec.prefill_graphs) == [16, 32]
    assert dec.decode_graph.info()["replays"] == 63 + 15


def test_decode_steps_per_launch_equal_one_at_a_time():
    """A replay of a graph of K decode steps gives the tokens of K one-step
    replays, K not dividing the steps (the rest run graphs of fewer);
    "auto" picks the largest power of two whose graph replays as one
    resident job, and it does."""
    model = G.make_model("llama", MAX_LEN)
    prompt = _prompt(batch=1)
    want = _cpu_tokens(model, prompt, 24)
    card = copy.deepcopy(model).to(N)
    dec = G.Decoder(card, 1, MAX_LEN, "graph", steps_per_launch=3)
    assert torch.equal(dec.generate(prompt, 24), want)
    # 23 steps: 7 replays of 3, then 1 of 2
    three, two = dec.multi_graphs[3].info(), dec.multi_graphs[2].info()
    assert (three["replays"], two["replays"], dec.decode_graph) == (7, 1, None)
    assert three["instructions"] == 3 * two["instructions"] // 2
    auto = G.Decoder(card, 1, MAX_LEN, "graph", steps_per_launch="auto")
    for _ in range(3):  # the third replay of a graph runs as its resident job
        assert torch.equal(auto.generate(prompt, 24), want)
    limit = torch.neuron.NeuronGraph.resident_limits()
    one = auto.decode_graph.info()
    k = auto.steps_per_launch
    assert k >= 2 and k & (k - 1) == 0
    assert k * one["instructions"] <= limit["instructions"] and k * one["work"] <= limit["work"]
    big = auto.multi_graphs[k].info()
    assert big["instructions"] == k * one["instructions"]
    assert big["replays"] >= 3 and big["resident"]
    with pytest.raises(ValueError, match="steps_per_launch"):
        G.Decoder(card, 1, MAX_LEN, "eager", steps_per_launch=2)


@pytest.mark.slow
def test_decode_steps_graphed_one_launch_each():
    """After the capture, 64 decode steps at positions 9..72 are 64 replays
    of one graph: no operator is dispatched, nothing is captured or
    compiled, and the tokens are the CPU's."""
    model = G.make_model("llama", MAX_LEN)
    prompt = _prompt(batch=1)
    want = _cpu_tokens(model, prompt, 66)
    dec = G.Decoder(copy.deepcopy(model).to(N), 1, MAX_LEN, "graph")
    dec.start(prompt)
    dec.step()  # captures the step (and replays it once)
    g = dec.decode_graph
    torch.neuron.synchronize()
    torch_neuron.reset_compile_stats()
    replays = g.info()["replays"]
    with _CountOps() as count:
        for _ in range(64):
            dec.step()
    assert count.ops == []
    assert g.info()["replays"] == replays + 64
    s = torch_neuron.compile_stats()
    assert s["captures"] == 0 and s["dynamo_graphs"] == 0 and s["launches"] == 0
    assert dec.pos.item() == 8 + 65
    assert torch.equal(dec.tokens[:, :8 + 66].cpu(), want)


@pytest.mark.slow
def test_decode_steps_compiled_no_recompile():
    """The step under torch.compile(backend="neuron"): after the first,
    64 steps are 64 kernel launches with no dynamo graph, recompile or
    capture -- the position is a tensor, not a constant of the graph."""
    model = G.make_model("gpt2", MAX_LEN)
    prompt = _prompt(batch=1)
    want = _cpu_tokens(model, prompt, 66)
    dec = G.Decoder(copy.deepcopy(model).to(N), 1, MAX_LEN, "compile")
    dec.start(prompt)
    dec.step()
    torch.neuron.synchronize()
    torch_neuron.reset_compile_stats()
    for _ in range(64):
        dec.step()
    s = torch_neuron.compile_stats()
    assert s["dynamo_graphs"] == 0 and s["dynamo_recompiles"] == 0
    assert s["captures"] == 0 and s["cache_hits"] == 0 and s["eager_graphs"] == 0
    assert s["launches"] == 64
    assert torch.equal(dec.tokens[:, :8 + 66].cpu(), want)


@pytest.mark.parametrize("cfg", [dict(temperature=0.7), dict(temperature=1.0, top_k=5),
                                 dict(temperature=0.9, top_p=0.8),
                                 dict(temperature=0.8, top_k=20, top_p=0.9)])
def test_sampler_on_neuron_equals_cpu(cfg):
    """choose() with the same logits and uniforms picks the CPU's tokens,
    and only tokens that top-k and top-p allow."""
    g = torch.Generator().manual_seed(3)
    logits = torch.randn(64, G.VOCAB, generator=g) * 3
    u = torch.rand(64, generator=g)
    want = G.choose(logits, u, **cfg)
    assert torch.equal(G.choose(logits.to(N), u.to(N), **cfg).cpu(), want)
    if cfg.get("top_k"):
        kth = logits.topk(cfg["top_k"], -1).values[:, -1]
        assert bool((logits.gather(1, want[:, None])[:, 0] >= kth).all())


def test_sampling_on_neuron():
    """Sampled generation on the card: the same tokens under the same seed
    (the card's generator), others under another; top_k=1 is greedy."""
    model = G.make_model("llama", MAX_LEN)
    prompt = _prompt()
    cfg = dict(temperature=0.8, top_k=20, top_p=0.9)
    dec = G.Decoder(copy.deepcopy(model).to(N), 2, MAX_LEN, "graph", **cfg)
    torch.manual_seed(0)
    a = dec.generate(prompt, 32)
    torch.manual_seed(0)
    b = dec.generate(prompt, 32)
    torch.manual_seed(1)
    c = dec.generate(prompt, 32)
    assert torch.equal(a, b) and not torch.equal(a, c)
    assert torch.equal(a[:, :8], prompt)
    one = G.Decoder(copy.deepcopy(model).to(N), 2, MAX_LEN, "graph", temperature=1.0, top_k=1)
    assert torch.equal(one.generate(prompt, 16), _cpu_tokens(model, prompt, 16))

# Owner(s): ["module: PrivateUse1"]
# SPDX-License-Identifier: MIT
"""examples/serve.py: continuous batching on the card. Requests of mixed
lengths, arriving while others run, go through fewer slots than requests
(so they queue, and finished slots are refilled while the others go on);
each request's tokens are those of generating it alone (generate.py's
Decoder, one sequence, on the CPU). Every decode step is one replay of one
NeuronGraph whatever the slots hold. A request that cannot fit a slot, and
a cache larger than the card's memory, are refused with a ValueError that
says why, and the server goes on."""
import copy
import os
import sys

import pytest
import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples"))
import generate as G  # noqa: E402
import serve as S  # noqa: E402

N = "neuron"
MAX_LEN = 96


@pytest.fixture(autouse=True)
def _no_fallback(monkeypatch):
    monkeypatch.setenv("TORCH_NEURON_FALLBACK", "error")


def _alone(model, req):
    """The request's greedy tokens generated alone, eagerly on the CPU."""
    out = G.Decoder(model, 1, MAX_LEN, "eager").generate(req.prompt[None], req.max_new)
    return out[0, req.prompt.numel():].tolist()


def _serve(server, trace):
    """Submit the trace's requests a few at a time between steps (they
    arrive while others run), then step until all are done."""
    reqs = []
    for i, (_, prompt, new) in enumerate(trace):
        reqs.append(server.submit(prompt, new))
        if i % 3 == 2:
            server.step()
    while not server.idle():
        server.step()
    return reqs


@pytest.mark.slow
@pytest.mark.parametrize("name", ["llama", "gpt2"])
def test_continuous_batching_equals_one_at_a_time(name):
    """16 requests (prompts of 4-40 tokens, 8-48 new) through 4 slots:
    each request's tokens are its tokens generated alone; the decode step
    is one graph, replayed once a step; the prefills one graph per bucket."""
    model = G.make_model(name, MAX_LEN)
    server = S.Server(copy.deepcopy(model).to(N), 4, MAX_LEN, "graph")
    trace = S.make_trace(16, seed=5)
    reqs = _serve(server, trace)
    assert len({r.slot for r in reqs}) == 4  # every slot used, refilled
    assert max(r.id for r in reqs) == 15 and all(r.finished for r in reqs)
    for r in reqs:
        assert len(r.tokens) == r.max_new
        assert r.tokens == _alone(model, r), f"request {r.id} (prompt {r.prompt.numel()})"
    # Capture replays once; every later step is one replay.
    assert server.decode_graph.info()["replays"] == server.steps
    assert set(server.prefill_graphs) <= {16, 32, 64}
    # Fewer steps than one request at a time would take.
    assert server.steps < sum(r.max_new for r in reqs) // 2


def test_same_server_on_the_cpu():
    """The same server code eagerly on the CPU gives the same tokens as
    the card's graphs."""
    model = G.make_model("llama", MAX_LEN)
    trace = S.make_trace(8, seed=7)
    cpu = _serve(S.Server(model, 3, MAX_LEN, "eager"), trace)
    card = _serve(S.Server(copy.deepcopy(model).to(N), 3, MAX_LEN, "graph"), trace)
    assert [r.tokens for r in cpu] == [r.tokens for r in card]


def test_requests_queue_when_the_slots_are_full():
    """5 requests at once on 2 slots: 2 run, 3 wait; as each finishes its
    slot takes the next, in arrival order."""
    model = G.make_model("llama", MAX_LEN).to(N)
    server = S.Server(model, 2, MAX_LEN, "graph")
    reqs = [server.submit(torch.arange(5 + i), 3 + 2 * i) for i in range(5)]
    server.step()
    assert len(server.running) == 2 and len(server.waiting) == 3
    assert [r.id for r in server.waiting] == [2, 3, 4]
    order = []
    while not server.idle():
        order += [r.id for r in server.step()]
    assert sorted(order) == [0, 1, 2, 3, 4] and order[:2] == [0, 1]
    assert all(len(r.tokens) == r.max_new for r in reqs)


def test_what_cannot_fit_is_refused():
    """A request longer than a slot, an empty one, out-of-vocabulary ids:
    ValueError, the queue unchanged and the server still serving; a cache
    larger than the card's free memory: ValueError naming the sizes."""
    model = G.make_model("gpt2", MAX_LEN).to(N)
    server = S.Server(model, 2, MAX_LEN, "graph")
    with pytest.raises(ValueError, match="do not fit a slot of 96"):
        server.submit(torch.zeros(90, dtype=torch.long), 7)
    with pytest.raises(ValueError, match="needs a prompt"):
        server.submit([], 4)
    with pytest.raises(ValueError, match="token ids"):
        server.submit([1, 2, 256], 4)
    assert server.idle()
    req = server.submit(torch.arange(89), 7)  # exactly a slot
    while not server.idle():
        server.step()
    assert len(req.tokens) == 7
    with pytest.raises(ValueError, match=r"needs \d+ MiB; the card has \d+ MiB free"):
        S.Server(model, 1 << 20, MAX_LEN, "graph")
    with pytest.raises(ValueError, match="'graph' is a NeuronGraph"):
        S.Server(G.make_model("gpt2", MAX_LEN), 2, MAX_LEN, "graph")


def test_run_reports_latencies():
    """Server.run over a timed trace: every request's time to first token
    and per output token are measured, and the figures add up."""
    model = G.make_model("llama", MAX_LEN).to(N)
    server = S.Server(model, 4, MAX_LEN, "graph")
    trace = S.make_trace(6, seed=2, rate=1000.0)
    reqs, wall = server.run(trace)
    fig = S.summarize(reqs, wall, server.steps)
    assert fig["requests"] == 6 and fig["tokens"] == sum(n for _, _, n in trace)
    assert all(r.ttft() > 0 and r.done >= r.first for r in reqs)
    assert 0 < fig["ttft_ms_median"] <= fig["ttft_ms_max"] <= wall * 1e3

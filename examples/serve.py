# SPDX-License-Identifier: MIT
"""Serve generation requests with continuous batching: the GPT-2 or the
Llama-style decoder of examples/generate.py answering requests of
different prompt lengths that arrive over time, greedily, on a slotted
KV cache on the card.

How it works (Server):
- the KV cache is [layers, 2, slots, kv_heads, max_len, head_dim] on the
  card, allocated once; each slot holds one request's keys and values,
  with its own current token tok[slot] and position pos[slot] -- the
  model's inference form with positions [slots, 1] (cached_attention() of
  examples/llama.py writes each sequence's key at its own position);
- a request is admitted into a free slot by one prefill call over a
  one-sequence staging cache (the prompt padded to a bucket of
  generate.py's kind), which then goes into the slot by one index_copy_
  along the cache's slot axis -- the slot is a tensor, so one graph per
  bucket serves every slot;
- one decode step advances every slot at once, the idle ones included (a
  slot's `active` flag, 0 or 1, is added to its position, so an idle slot
  recomputes one position and writes nothing anyone reads): a step is one
  replay of one NeuronGraph whatever the slots hold;
- after each step the host reads the slots' new tokens (one copy of
  [slots] longs), hands them to their requests, retires the requests that
  have all their tokens and refills their slots from the queue before the
  next step -- the others go on without stopping (continuous batching);
- a request longer than the cache (prompt + new tokens > max_len) is
  refused with a ValueError at submit(); requests beyond the free slots
  wait in the queue; a cache larger than the card's free memory is refused
  when the Server is made (mem_get_info), naming the sizes.

Each request's tokens are the greedy tokens of generating it alone
(generate.py's Decoder with one sequence); test_serve.py checks so.

    python3 examples/serve.py --model llama --slots 8 --requests 32
    python3 examples/serve.py --device cpu --mode eager --json
A request trace (arrival times, prompt lengths 4..40, 8..48 new tokens) is
made from --seed; it is served once to capture the graphs (--warmup), then
once timed: each request's time to first token and time per output token,
and the throughput (generated tokens a second of wall time). --json prints
them as one JSON object with keys serve_<model>_<device>_<mode>_s<slots>_*.
"""
import argparse
import collections
import json
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import generate as gen  # noqa: E402
from generate import cache_shape, lm_head, lm_hidden  # noqa: E402

device = "neuron"  # "cpu", "cuda", or "neuron"


# ---- the step functions (the same code in every mode and on every device) --

def slot_prefill(model, prompt, length, slot, staging, cache, key_pos, tok, pos, active):
    """Prefill one request, prompt [1, Tb] (its first length[0] tokens real,
    the rest padding), through the staging cache [layers, 2, 1, ...]; the
    cache's slot (slot [1], long) gets the staging cache, tok[slot] the
    first new token, pos[slot] its position (= length) and active[slot] 1.
    The staging entries past the prompt, left by earlier requests, are
    masked until the slot's own steps overwrite them."""
    tb = prompt.shape[1]
    positions = key_pos[:tb]
    mask = key_pos[None, :] <= positions[:, None]
    h = lm_hidden(model, prompt, positions, staging, mask)
    nxt = lm_head(model, h.index_select(1, length - 1)[:, 0]).argmax(-1)
    cache.index_copy_(2, slot, staging)
    tok.index_copy_(0, slot, nxt[:, None])
    pos.index_copy_(0, slot, length)
    active.index_fill_(0, slot, 1)


def slots_decode(model, cache, key_pos, tok, pos, active):
    """One step of every slot: tok [S, 1] at its position pos [S] into the
    cache, the next token chosen greedily into tok, pos advanced by active
    [S] (1 for a slot with a request, 0 for an idle one)."""
    positions = pos[:, None]
    mask = key_pos[None, None, :] <= positions[:, :, None]
    h = lm_hidden(model, tok, positions, cache, mask)
    tok.copy_(lm_head(model, h[:, -1]).argmax(-1)[:, None])
    pos.add_(active)


# ---- requests and the server ------------------------------------------------

class Request:
    """One request: prompt (1-D long), max_new tokens to generate. The
    server fills tokens (the generated ones, ints), slot, and the times
    (time.perf_counter()) of arrival, first token and completion."""

    def __init__(self, rid, prompt, max_new, arrival):
        self.id, self.prompt, self.max_new = rid, prompt, max_new
        self.arrival, self.first, self.done = arrival, None, None
        self.tokens, self.slot = [], None

    @property
    def finished(self):
        return self.done is not None

    def ttft(self):
        """Time to first token (s): from arrival to the first token on the host."""
        return self.first - self.arrival

    def tpot(self):
        """Time per output token after the first (s); None for one token."""
        n = len(self.tokens)
        return (self.done - self.first) / (n - 1) if n > 1 else None


class Server:
    """Continuous batching of greedy generation requests for @model (eval
    mode, on its device) over @slots slots of @max_len tokens each.

    mode: "graph" (neuron: a NeuronGraph per prefill bucket and one for the
    decode step) or "eager". Prompts are padded to the smallest of @buckets
    that holds them."""

    def __init__(self, model, slots, max_len, mode="graph", buckets=(16, 32, 64)):
        self.model = model.eval()
        p = next(model.parameters())
        self.device, dt = p.device, p.dtype
        if mode not in ("graph", "eager"):
            raise ValueError(f"serve: mode {mode!r}: 'graph' or 'eager'")
        if mode == "graph" and self.device.type != "neuron":
            raise ValueError(f"serve: mode 'graph' is a NeuronGraph; {self.device} runs 'eager'")
        if slots < 1:
            raise ValueError(f"serve: {slots} slots: at least 1")
        self.slots, self.max_len, self.mode = slots, max_len, mode
        self.buckets = tuple(b for b in buckets if b < max_len) + (max_len,)
        shape = cache_shape(model, slots, max_len)
        need = (slots + 1) * torch.Size(shape[:2] + shape[3:]).numel() * p.element_size()
        if self.device.type == "neuron":
            free, _ = torch.neuron.mem_get_info(self.device)
            if need > free:
                raise ValueError(f"serve: a cache of {slots} slots of {max_len} tokens needs "
                                 f"{need >> 20} MiB; the card has {free >> 20} MiB free")
        dev = self.device
        self.cache = torch.zeros(shape, device=dev, dtype=dt)
        self.staging = torch.zeros(cache_shape(model, 1, max_len), device=dev, dtype=dt)
        self.key_pos = torch.arange(max_len, device=dev)
        self.tok = torch.zeros(slots, 1, dtype=torch.long, device=dev)
        self.pos = torch.zeros(slots, dtype=torch.long, device=dev)
        self.active = torch.zeros(slots, dtype=torch.long, device=dev)
        self.length = torch.ones(1, dtype=torch.long, device=dev)
        self.slot = torch.zeros(1, dtype=torch.long, device=dev)
        self.prompts = {}           # bucket -> static prompt [1, bucket]
        self.prefill_graphs = {}
        self.decode_graph = None
        self.waiting = collections.deque()
        self.running = {}           # slot -> Request
        self.steps = 0              # decode steps run
        self._next_id = 0

    # -- requests
    def submit(self, prompt, max_new, arrival=None):
        """Queue a request: prompt (a sequence of token ids), max_new >= 1
        tokens to generate. Returns its Request. A request that cannot fit
        a slot is refused here (ValueError); nothing else is changed."""
        prompt = torch.as_tensor(prompt, dtype=torch.long).reshape(-1).cpu()
        n = prompt.numel()
        if n < 1 or max_new < 1:
            raise ValueError(f"serve: a request needs a prompt and new tokens "
                             f"(prompt of {n}, max_new {max_new})")
        if n + max_new > self.max_len:
            raise ValueError(f"serve: a prompt of {n} tokens and {max_new} new ones do not "
                             f"fit a slot of {self.max_len}")
        if int(prompt.min()) < 0 or int(prompt.max()) >= gen.VOCAB:
            raise ValueError(f"serve: token ids must be in [0, {gen.VOCAB})")
        req = Request(self._next_id, prompt, max_new,
                      time.perf_counter() if arrival is None else arrival)
        self._next_id += 1
        self.waiting.append(req)
        return req

    def idle(self):
        return not self.waiting and not self.running

    # -- the calls, on the static state
    def _run_prefill(self, tb):
        slot_prefill(self.model, self.prompts[tb], self.length, self.slot, self.staging,
                     self.cache, self.key_pos, self.tok, self.pos, self.active)

    def _run_decode(self):
        slots_decode(self.model, self.cache, self.key_pos, self.tok, self.pos, self.active)

    def _graph(self, run):
        run()  # warm-up: allocations made; the state it leaves is the call's own
        g = torch.neuron.NeuronGraph()
        with torch.neuron.graph(g):
            run()
        return g

    def _prefill(self, req, slot):
        n = req.prompt.numel()
        tb = next(b for b in self.buckets if n <= b)
        if tb not in self.prompts:
            self.prompts[tb] = torch.zeros(1, tb, dtype=torch.long, device=self.device)
        padded = torch.zeros(1, tb, dtype=torch.long)
        padded[0, :n] = req.prompt
        self.prompts[tb].copy_(padded)
        self.length.fill_(n)
        self.slot.fill_(slot)
        if self.mode == "eager":
            self._run_prefill(tb)
        elif tb in self.prefill_graphs:
            self.prefill_graphs[tb].replay()
        else:
            # A prefill is the same whether run once or three times.
            self.prefill_graphs[tb] = self._graph(lambda: self._run_prefill(tb))
            self.prefill_graphs[tb].replay()
        req.slot = slot
        self.running[slot] = req

    def _decode(self):
        if self.mode == "eager":
            self._run_decode()
        else:
            if self.decode_graph is None:
                # The warm-up and the capture advance the state: saved
                # and put back (the cache entries they write are those
                # the real step writes again, the same values).
                tok, pos = self.tok.clone(), self.pos.clone()
                self.decode_graph = self._graph(self._run_decode)
                self.tok.copy_(tok)
                self.pos.copy_(pos)
            self.decode_graph.replay()
        self.steps += 1

    def _collect(self, reqs):
        """Hand the slots' current tokens to @reqs; retire the finished."""
        tok = self.tok[:, 0].cpu()
        now = time.perf_counter()
        retired = []
        for req in reqs:
            req.tokens.append(int(tok[req.slot]))
            if req.first is None:
                req.first = now
            if len(req.tokens) == req.max_new:
                req.done = now
                retired.append(req.slot)
                del self.running[req.slot]
        if retired:
            idle = torch.zeros(self.slots, dtype=torch.long)
            for s in self.running:
                idle[s] = 1
            self.active.copy_(idle)

    @torch.no_grad()
    def step(self):
        """Admit waiting requests into the free slots (one prefill each),
        then run one decode step of all slots if any request needs more
        tokens. Returns the requests finished in this step."""
        before = set(self.running.values())
        admitted = []
        for slot in range(self.slots):
            if not self.waiting:
                break
            if slot not in self.running:
                req = self.waiting.popleft()
                self._prefill(req, slot)
                admitted.append(req)
        if admitted:
            self._collect(admitted)
        if self.running:
            self._decode()
            self._collect(list(self.running.values()))
        return [r for r in before.union(admitted) if r.finished]

    def run(self, trace, clock=time.perf_counter):
        """Serve @trace, a list of (arrival s after the start, prompt,
        max_new) in arrival order, as the requests arrive; returns the
        Requests and the wall time (s)."""
        t0 = clock()
        pending = collections.deque(trace)
        reqs = []
        while pending or not self.idle():
            now = clock() - t0
            while pending and pending[0][0] <= now:
                at, prompt, max_new = pending.popleft()
                reqs.append(self.submit(prompt, max_new, arrival=t0 + at))
            if self.idle():
                time.sleep(max(0.0, pending[0][0] - (clock() - t0)))
                continue
            self.step()
        return reqs, clock() - t0


def make_trace(n, seed=0, rate=200.0, prompt=(4, 40), new=(8, 48)):
    """@n requests arriving as a Poisson process of @rate a second, prompt
    lengths and new tokens uniform in the given ranges (inclusive)."""
    g = torch.Generator().manual_seed(seed)
    gaps = torch.empty(n).exponential_(rate, generator=g)
    arrivals = gaps.cumsum(0).tolist()
    trace = []
    for at in arrivals:
        pn = int(torch.randint(prompt[0], prompt[1] + 1, (1,), generator=g))
        nn_ = int(torch.randint(new[0], new[1] + 1, (1,), generator=g))
        trace.append((at, torch.randint(0, gen.VOCAB, (pn,), generator=g), nn_))
    return trace


def summarize(reqs, wall, steps):
    ttft = [r.ttft() * 1e3 for r in reqs]
    tpot = [r.tpot() * 1e3 for r in reqs if r.tpot() is not None]
    tokens = sum(len(r.tokens) for r in reqs)
    return {"requests": len(reqs), "tokens": tokens, "wall_s": wall, "decode_steps": steps,
            "tokens_per_s": tokens / wall,
            "ttft_ms_median": statistics.median(ttft), "ttft_ms_max": max(ttft),
            "tpot_ms_median": statistics.median(tpot) if tpot else None}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default=device)
    ap.add_argument("--model", choices=["gpt2", "llama"], default="llama")
    ap.add_argument("--mode", choices=["graph", "eager"], default=None,
                    help="graph on neuron, eager elsewhere (default)")
    ap.add_argument("--slots", type=int, default=8)
    ap.add_argument("--max-len", type=int, default=96)
    ap.add_argument("--requests", type=int, default=32)
    ap.add_argument("--rate", type=float, default=200.0, help="arrivals a second")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--warmup", type=int, default=1,
                    help="runs of the trace before the timed one (graphs captured)")
    ap.add_argument("--threads", type=int, default=0, help="torch.set_num_threads (0: as is)")
    ap.add_argument("--json", action="store_true", help="print the figures as one JSON line")
    a = ap.parse_args()
    if a.threads:
        torch.set_num_threads(a.threads)
    dev = torch.device(a.device)
    mode = a.mode or ("graph" if dev.type == "neuron" else "eager")
    model = gen.make_model(a.model, a.max_len).to(dev)
    server = Server(model, a.slots, a.max_len, mode)
    trace = make_trace(a.requests, a.seed, a.rate)
    for _ in range(a.warmup):
        server.run(trace)
    steps0 = server.steps
    reqs, wall = server.run(trace)
    fig = summarize(reqs, wall, server.steps - steps0)
    if a.json:
        pre = f"serve_{a.model}_{dev.type}_{mode}_s{a.slots}_"
        print(json.dumps({pre + k: v for k, v in fig.items()}))
        return
    print(f"{a.model} on {dev.type} ({mode}), {a.slots} slots: {fig['requests']} requests, "
          f"{fig['tokens']} tokens in {wall:.3f} s ({fig['tokens_per_s']:.0f} tokens/s, "
          f"{fig['decode_steps']} decode steps)")
    print(f"  time to first token: median {fig['ttft_ms_median']:.2f} ms, "
          f"max {fig['ttft_ms_max']:.2f} ms; time per output token: median "
          f"{fig['tpot_ms_median']:.2f} ms")
    r = reqs[0]
    print(f"  request 0: {gen.decode_text(r.prompt.tolist())!r} -> "
          f"{gen.decode_text(r.tokens)!r}")


if __name__ == "__main__":
    main()

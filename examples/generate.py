# SPDX-License-Identifier: MIT
"""Generate text from a prompt with the GPT-2 of examples/gpt2.py or the
Llama-style decoder of examples/llama.py (RMSNorm, rotary embeddings,
grouped-query attention, SwiGLU): greedy decoding or sampling with a
temperature, top-k and top-p, on a static KV cache.

The way it runs on the card (Decoder, mode "graph"):
- the KV cache is one tensor [layers, 2, batch, kv_heads, max_len,
  head_dim] allocated on the card once, with the sequence's tokens
  [batch, max_len], the current token [batch, 1] and its position [1];
- positions reach the model as a tensor: a step writes its keys and values
  at the position with index_copy_ and attends over the whole cache with a
  mask computed on the card from the position (key j visible when
  j <= position), so one captured step is right for every position;
- the prompt is prefilled by one call: a NeuronGraph per prompt-length
  bucket (the prompt padded to it; the pad's cache entries are masked and
  overwritten by the steps that reach them), which also picks the first
  new token;
- each decode step is one replay of a NeuronGraph: model, choice of the
  next token, its write into the sequence, the position's increment -- all
  on the card, so the host issues nothing else and reads the sequence once
  at the end; one replay runs K steps (a graph of K steps captured in a
  row, as vLLM's multi-step scheduling does), so the guest's cost of a
  launch is paid once for K tokens: K is the largest power of two, up to
  16, whose graph still replays as one resident job (--steps-per-launch:
  auto), the steps left over graphs of fewer;
- sampling draws its uniforms from the device's generator once per
  generation (a capture refuses random numbers: a replay would repeat one
  draw; torch.multinomial also reads its checks back to the host) and the
  step picks its token by the inverse CDF of the filtered distribution
  with the uniform of its position -- what torch.multinomial computes on
  the card.

Mode "compile" runs the same prefill and step functions through
torch.compile(backend="neuron") instead (one kernel launch a step, no
recompilation as the position advances: it is a tensor); mode "eager" runs
them as they are (the CPU's way). Greedy decoding on the card gives the
CPU's tokens.

    python3 examples/generate.py --model gpt2 --prompt "to be or " --new 64
    python3 examples/generate.py --model llama --temperature 0.8 --top-k 20 --top-p 0.9
    python3 examples/generate.py --device cpu --batch 8 --bench
    python3 examples/generate.py --model llama --int8 --dtype bfloat16
Tokens are bytes (vocabulary 256); --train-steps trains the model on
gpt2.py's corpus first, so that the text is not noise.
"""
import argparse
import json
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpt2  # noqa: E402
import llama  # noqa: E402
from llama import cached_attention  # noqa: E402

device = "neuron"  # "cpu", "cuda", or "neuron"
VOCAB = 256


# ---- the models' inference form -------------------------------------------

def gpt2_hidden(model, idx, positions, cache, mask):
    """gpt2.GPT2's forward over idx [B, T] at `positions` [T] (or [B, T],
    each sequence at its own place) with the static cache (its blocks' own
    modules; dropout is off in inference)."""
    b, t = idx.shape
    x = model.wte(idx) + model.wpe(positions)
    for i, blk in enumerate(model.h):
        h = blk.ln_1(x)
        d = h.shape[-1]
        q, k, v = (z.view(b, t, blk.heads, d // blk.heads).transpose(1, 2)
                   for z in blk.c_attn(h).split(d, dim=2))
        y = cached_attention(q, k, v, cache[i], positions, mask)
        x = x + blk.c_proj(y.transpose(1, 2).reshape(b, t, d))
        x = x + blk.mlp(blk.ln_2(x))
    return model.ln_f(x)


def lm_hidden(model, idx, positions, cache, mask):
    if isinstance(model, gpt2.GPT2):
        return gpt2_hidden(model, idx, positions, cache, mask)
    return model.hidden(idx, positions, cache, mask)


def lm_head(model, h):
    if isinstance(model, gpt2.GPT2):
        return F.linear(h, model.wte.weight)
    return model.head(h)


def cache_shape(model, batch, max_len):
    """[layers, 2, batch, kv_heads, max_len, head_dim] of @model."""
    if isinstance(model, gpt2.GPT2):
        blk = model.h[0]
        heads = blk.heads
        return (len(model.h), 2, batch, heads, max_len, blk.c_proj.in_features // heads)
    att = model.layers[0].attention
    return (len(model.layers), 2, batch, att.kv_heads, max_len, att.head_dim)


def make_model(name, ctx, d=64, heads=4, kv_heads=2, layers=2, seed=0):
    torch.manual_seed(seed)
    if name == "gpt2":
        return gpt2.GPT2(VOCAB, ctx, d, heads, layers)
    if name == "llama":
        return llama.Llama(VOCAB, ctx, d, heads, kv_heads, layers)
    raise ValueError(f"generate: unknown model {name!r} (gpt2 or llama)")


# ---- choosing the next token ----------------------------------------------

def choose(logits, u, temperature=0.0, top_k=0, top_p=1.0):
    """The next token [B] from logits [B, V]: argmax when temperature is 0,
    else a draw from softmax(logits / temperature) restricted to the top_k
    most likely tokens (0: all) and to the smallest set of them whose
    probability reaches top_p (the nucleus; 1.0: all), by the inverse CDF at
    the uniforms u [B] in [0, 1)."""
    if temperature == 0:
        return logits.argmax(-1)
    logits = logits.float() / temperature
    if top_k:
        kth = logits.topk(top_k, dim=-1).values[:, -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    if top_p < 1.0:
        s, order = logits.sort(dim=-1, descending=True)
        p = s.softmax(-1)
        # drop a token when the ones before it already reach top_p
        s = s.masked_fill(p.cumsum(-1) - p >= top_p, float("-inf"))
        logits = torch.empty_like(logits).scatter_(-1, order, s)
    cdf = logits.softmax(-1).cumsum(-1)
    # the first token whose cumulative probability exceeds u * total
    return (cdf[:, :-1] <= u[:, None] * cdf[:, -1:]).sum(-1)


# ---- the step functions (the same code in every mode and on every device) --

def prefill(model, prompt, length, cache, key_pos, tokens, tok, pos, uniform, sampling):
    """Fill the cache from prompt [B, Tb] (its first length[0] tokens real,
    the rest padding) and pick the token after it: the sequence gets the
    prompt and that token, tok the token, pos its position (= length)."""
    tb = prompt.shape[1]
    positions = key_pos[:tb]
    mask = key_pos[None, :] <= positions[:, None]
    h = lm_hidden(model, prompt, positions, cache, mask)
    last = length - 1
    logits = lm_head(model, h.index_select(1, last)[:, 0])
    nxt = choose(logits, uniform.index_select(0, last)[0], **sampling)
    tokens[:, :tb].copy_(prompt)
    tokens.index_copy_(1, length, nxt[:, None])
    tok.copy_(nxt[:, None])
    pos.copy_(length)


def decode(model, cache, key_pos, tokens, tok, pos, uniform, sampling):
    """One step: tok [B, 1] at position pos [1] into the cache, the next
    token chosen, written into the sequence at pos + 1, and made tok with
    pos advanced -- nothing read by the host."""
    mask = key_pos[None, :] <= pos[:, None]
    h = lm_hidden(model, tok, pos, cache, mask)
    logits = lm_head(model, h[:, -1])
    nxt = choose(logits, uniform.index_select(0, pos)[0], **sampling)
    tokens.index_copy_(1, pos + 1, nxt[:, None])
    tok.copy_(nxt[:, None])
    pos.add_(1)


class Decoder:
    """Generation for @model (eval mode, on its device) with @batch
    sequences of up to @max_len tokens, its state static on the device.

    mode: "graph" (neuron: a NeuronGraph per prefill bucket and one for the
    decode step), "compile" (torch.compile of prefill and decode; backend
    "neuron" on the card, inductor elsewhere) or "eager". sampling:
    temperature (0: greedy), top_k, top_p, fixed for the Decoder (they are
    constants of its graphs). Prompts are padded to the smallest of
    @buckets that holds them. @steps_per_launch (mode graph): the decode
    steps one replay runs, in a graph of that many steps captured in a
    row ("auto": the largest power of two, up to 16, whose graph replays
    as one resident job, NeuronGraph.resident_limits()); the steps left
    over run graphs of fewer (powers of two)."""

    MAX_STEPS_PER_LAUNCH = 16  # "auto": more would save little and capture much

    def __init__(self, model, batch, max_len, mode="eager", temperature=0.0, top_k=0,
                 top_p=1.0, buckets=(16, 32, 64), steps_per_launch=1):
        self.model = model.eval()
        p = next(model.parameters())
        self.device, dt = p.device, p.dtype
        if mode == "graph" and self.device.type != "neuron":
            raise ValueError(f"generate: mode 'graph' is a NeuronGraph; {self.device} runs "
                             "'eager' or 'compile'")
        if steps_per_launch != 1 and (mode != "graph" or not (
                steps_per_launch == "auto" or int(steps_per_launch) > 1)):
            raise ValueError(f"generate: steps_per_launch {steps_per_launch!r}: 1, or more "
                             "or 'auto' in mode 'graph'")
        self.batch, self.max_len, self.mode = batch, max_len, mode
        self.steps_per_launch = steps_per_launch
        self.buckets = tuple(b for b in buckets if b < max_len) + (max_len,)
        self.sampling = dict(temperature=temperature, top_k=top_k, top_p=top_p)
        dev = self.device
        self.cache = torch.zeros(cache_shape(model, batch, max_len), device=dev, dtype=dt)
        self.key_pos = torch.arange(max_len, device=dev)
        self.tokens = torch.zeros(batch, max_len, dtype=torch.long, device=dev)
        self.tok = torch.zeros(batch, 1, dtype=torch.long, device=dev)
        self.pos = torch.zeros(1, dtype=torch.long, device=dev)
        self.length = torch.ones(1, dtype=torch.long, device=dev)
        self.uniform = torch.zeros(max_len, batch, device=dev)
        self.prompts = {}       # bucket -> static prompt [B, bucket]
        self.prefill_graphs = {}
        self.decode_graph = None
        self.multi_graphs = {}  # steps a replay -> its graph (2 or more)
        self._prefill, self._decode = prefill, decode
        if mode == "compile":
            backend = "neuron" if dev.type == "neuron" else "inductor"
            self._prefill = torch.compile(prefill, backend=backend)
            self._decode = torch.compile(decode, backend=backend)

    # the calls, on the static state
    def _run_prefill(self, tb):
        self._prefill(self.model, self.prompts[tb], self.length, self.cache, self.key_pos,
                      self.tokens, self.tok, self.pos, self.uniform, self.sampling)

    def _run_decode(self):
        self._decode(self.model, self.cache, self.key_pos, self.tokens, self.tok, self.pos,
                     self.uniform, self.sampling)

    def _bucket(self, n):
        for b in self.buckets:
            if n <= b:
                return b
        raise ValueError(f"generate: a prompt of {n} tokens does not fit max_len "
                         f"{self.max_len}")

    @torch.no_grad()
    def start(self, prompt):
        """Prefill the prompt [B, n] (long, any device); the first new token
        is chosen. One call (one graph replay in mode graph)."""
        b, n = prompt.shape
        if b != self.batch:
            raise ValueError(f"generate: a batch of {b} prompts for a Decoder of {self.batch}")
        tb = self._bucket(n)
        if tb not in self.prompts:
            self.prompts[tb] = torch.zeros(b, tb, dtype=torch.long, device=self.device)
        padded = torch.zeros(b, tb, dtype=torch.long)
        padded[:, :n] = prompt
        self.prompts[tb].copy_(padded)
        self.length.fill_(n)
        if self.sampling["temperature"]:
            self.uniform.uniform_()  # the device's generator: one draw per generation
        if self.mode != "graph":
            self._run_prefill(tb)
            return
        g = self.prefill_graphs.get(tb)
        if g is None:
            self._run_prefill(tb)  # warm-up: allocations made, kernels compiled
            g = torch.neuron.NeuronGraph()
            with torch.neuron.graph(g):
                self._run_prefill(tb)
            self.prefill_graphs[tb] = g
        g.replay()

    def step(self):
        """One decode step (one replay in mode graph). A replay records
        nothing for autograd, so it sets no grad mode: in an emulated guest
        entering and leaving torch.no_grad() costs about as much as the
        launch itself."""
        if self.decode_graph is not None:
            self.decode_graph.replay()
            return
        with torch.no_grad():
            if self.mode != "graph":
                self._run_decode()
                return
            self.decode_graph = self._capture_decode(1)
            self.decode_graph.replay()

    def steps(self, n):
        """@n decode steps: in mode graph, replays of the graph of
        steps_per_launch steps while that many are left, then of graphs of
        fewer (powers of two), the last step a one-step replay."""
        if self.steps_per_launch == "auto" and n > 0:
            if self.decode_graph is None:
                self.step()  # its graph's size decides
                n -= 1
            one = self.decode_graph.info()
            limit = torch.neuron.NeuronGraph.resident_limits()
            k = min(limit["instructions"] // max(1, one["instructions"]),
                    limit["work"] // max(1, one["work"]), self.MAX_STEPS_PER_LAUNCH)
            self.steps_per_launch = 1 << (max(1, k).bit_length() - 1)
        k = self.steps_per_launch
        for size in [k] + [1 << i for i in reversed(range(k.bit_length())) if 1 << i < k]:
            while n >= size:
                if size == 1:
                    self.step()
                else:
                    if size not in self.multi_graphs:
                        with torch.no_grad():
                            self.multi_graphs[size] = self._capture_decode(size)
                    self.multi_graphs[size].replay()
                n -= size

    def _capture_decode(self, k):
        # The warm-up step and the capture leave the state as it was:
        # the warm-up writes the cache at pos (rewritten by the next real
        # step there) and the sequence at pos + 1, which is saved; a
        # capture runs nothing.
        pos = self.pos.clone()
        tok = self.tok.clone()
        seq = self.tokens.clone()
        self._run_decode()
        g = torch.neuron.NeuronGraph()
        with torch.neuron.graph(g):
            for _ in range(k):
                self._run_decode()
        self.pos.copy_(pos)
        self.tok.copy_(tok)
        self.tokens.copy_(seq)
        return g

    @torch.no_grad()
    def generate(self, prompt, new_tokens):
        """The prompt [B, n] followed by @new_tokens tokens: [B, n + new]
        on the CPU."""
        n = prompt.shape[1]
        if n + new_tokens > self.max_len:
            raise ValueError(f"generate: {n} + {new_tokens} tokens exceed max_len "
                             f"{self.max_len}")
        self.start(prompt)
        self.steps(new_tokens - 1)
        return self.tokens[:, :n + new_tokens].cpu()


def generate_full(model, prompt, new_tokens):
    """Greedy decoding the plain way, the whole sequence through the
    training forward at every step (no cache): the reference."""
    idx = prompt.to(next(model.parameters()).device)
    with torch.no_grad():
        for _ in range(new_tokens):
            nxt = model(idx)[:, -1].argmax(-1)
            idx = torch.cat([idx, nxt[:, None]], dim=1)
    return idx.cpu()


# ---- the command line -------------------------------------------------------

def encode(text):
    return torch.tensor(list(text.encode()), dtype=torch.long)


def decode_text(ids):
    return bytes(int(i) for i in ids).decode(errors="replace")


def train(model, steps, ctx=32, batch=16, seed=0, lr=3e-3):
    """A few AdamW steps on gpt2.py's corpus as bytes, so that the model
    generates text rather than noise."""
    dev = next(model.parameters()).device
    data = encode(gpt2.CORPUS)
    g = torch.Generator().manual_seed(seed)
    opt = torch.optim.AdamW(model.parameters(), lr=lr)
    model.train()
    loss = None
    for _ in range(steps):
        s = torch.randint(0, len(data) - ctx - 1, (batch,), generator=g)
        x = torch.stack([data[i:i + ctx] for i in s]).to(dev)
        y = torch.stack([data[i + 1:i + ctx + 1] for i in s]).to(dev)
        loss = F.cross_entropy(model(x).reshape(-1, VOCAB), y.reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    model.eval()
    return None if loss is None else loss.item()


def sync(dev):
    if dev.type == "neuron":
        torch.neuron.synchronize()


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--device", default=device)
    p.add_argument("--model", choices=["gpt2", "llama"], default="gpt2")
    p.add_argument("--mode", choices=["graph", "compile", "eager"], default=None,
                   help="default: graph on neuron, eager elsewhere")
    p.add_argument("--prompt", default="to be or not ")
    p.add_argument("--new", type=int, default=64, help="tokens to generate")
    p.add_argument("--batch", type=int, nargs="+", default=[1],
                   help="batch sizes (one run each)")
    p.add_argument("--max-len", type=int, default=128)
    p.add_argument("--temperature", type=float, default=0.0, help="0: greedy")
    p.add_argument("--top-k", type=int, default=0)
    p.add_argument("--top-p", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--d", type=int, default=64)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--kv-heads", type=int, default=2, help="llama: key/value heads")
    p.add_argument("--steps-per-launch", type=lambda v: v if v == "auto" else int(v),
                   default="auto", metavar="K",
                   help="mode graph: decode steps one graph replay runs (auto: the most "
                        "whose graph replays as one resident job)")
    p.add_argument("--train-steps", type=int, default=0)
    p.add_argument("--dtype", choices=["float32", "bfloat16"], default="float32",
                   help="the model's (and the cache's) dtype, after any training")
    p.add_argument("--int8", action="store_true",
                   help="weight-only int8 nn.Linear layers (examples/quantize.py), after "
                        "any training")
    p.add_argument("--bench", type=int, nargs="?", const=5, default=0, metavar="REPS",
                   help="time REPS (5) warm generations: the prefill, the decode steps' "
                        "ms and tokens/s (medians)")
    p.add_argument("--json", action="store_true",
                   help="print only the --bench figures, as one JSON object")
    a = p.parse_args()
    dev = torch.device(a.device)
    if dev.type == "neuron":
        import torch_neuron  # noqa: F401  (registers the device)
    mode = a.mode or ("graph" if dev.type == "neuron" else "eager")
    model = make_model(a.model, a.max_len, a.d, a.heads, a.kv_heads, a.layers, a.seed).to(dev)
    if a.train_steps:
        t0 = time.time()
        loss = train(model, a.train_steps)
        if not a.json:
            print(f"trained {a.train_steps} steps on {dev} in {time.time() - t0:.1f}s, "
                  f"loss {loss:.3f}")
    if a.dtype == "bfloat16":
        model.to(torch.bfloat16)
    if a.int8:
        from quantize import quantize
        quantize(model)
    figures = {}
    for batch in a.batch:
        run(model, dev, mode, batch, a, figures)
    if a.json:
        print(json.dumps(figures))


def run(model, dev, mode, batch, a, figures):
    prompt = encode(a.prompt).repeat(batch, 1)
    dec = Decoder(model, batch, a.max_len, mode, a.temperature, a.top_k, a.top_p,
                  steps_per_launch=a.steps_per_launch if mode == "graph" else 1)
    torch.manual_seed(a.seed)
    t0 = time.time()
    out = dec.generate(prompt, a.new)
    first = time.time() - t0
    say = (lambda *x, **k: None) if a.json else print
    for row in out[:min(batch, 4)]:
        say(repr(decode_text(row)))
    say(f"{a.model} on {dev} ({mode}): first generation of {a.new} tokens x {batch} "
        f"in {first:.2f}s (captures/compiles included)")
    if a.bench:
        pre_ms, step_ms, launches = bench(dec, prompt, a.new, a.bench)
        tps = batch * 1e3 / step_ms
        say(f"{a.model} {dev.type} {mode} batch {batch}: prefill {pre_ms:.2f} ms "
            f"({prompt.shape[1]} tokens), decode {step_ms:.3f} ms a step, {tps:.1f} tokens/s "
            f"(medians of {a.bench} warm generations of {a.new} tokens; "
            f"{dec.steps_per_launch} a launch)"
            + ("" if launches is None else f", {launches:g} card jobs a step"), flush=True)
        variant = ("_int8" if a.int8 else "") + ("_bf16" if a.dtype == "bfloat16" else "")
        name = f"generate_{a.model}_{dev.type}_{mode}{variant}_b{batch}"
        figures.update({f"{name}_prefill_ms": round(pre_ms, 3),
                        f"{name}_decode_step_ms": round(step_ms, 4),
                        f"{name}_tokens_per_s": round(tps, 1),
                        f"{name}_steps_per_launch": dec.steps_per_launch})
        if launches is not None:
            figures[f"{name}_launches_per_decode_step"] = round(launches, 3)


def submitted_jobs():
    """Jobs the cards' driver has submitted (the sum of debugfs'
    accel/*/counters "submitted" lines; root only), or None."""
    import glob
    total = None
    for path in glob.glob("/sys/kernel/debug/accel/*/counters"):
        try:
            with open(path) as f:
                for line in f:
                    if line.startswith("submitted "):
                        total = (total or 0) + int(line.split()[1])
        except OSError:
            return None
    return total


def bench(dec, prompt, new, reps):
    """Medians over @reps warm generations of the prefill's time and of
    the time per decode step (the device synchronized around each), ms;
    and the card jobs submitted per decode step (None where not known)."""
    dev = dec.device
    pre, step = [], []
    jobs = 0
    for _ in range(reps):
        sync(dev)
        t0 = time.perf_counter()
        dec.start(prompt)
        sync(dev)
        t1 = time.perf_counter()
        j0 = submitted_jobs() if dev.type == "neuron" else None
        dec.steps(new - 1)
        sync(dev)
        t2 = time.perf_counter()
        j1 = submitted_jobs() if j0 is not None else None
        jobs = None if j1 is None or jobs is None else jobs + j1 - j0
        pre.append(t1 - t0)
        step.append((t2 - t1) / (new - 1))
    per_step = None if jobs is None else jobs / (reps * (new - 1))
    return statistics.median(pre) * 1e3, statistics.median(step) * 1e3, per_step


if __name__ == "__main__":
    main()

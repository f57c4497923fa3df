# SPDX-License-Identifier: MIT
"""Expert parallelism: a small mixture-of-experts transformer whose experts
are split over the ranks, trained as a character model on gpt2.py's corpus.

One block: causal self-attention, then a mixture-of-experts feed-forward
layer -- a router picks each token's top expert (top-1, its softmax
probability the gate) among --experts SwiGLU-less MLPs. With W ranks, rank
r holds experts [r E/W, (r+1) E/W) and trains on rows [r B/W, (r+1) B/W)
of each global batch; the attention, router, embedding and head are
replicated (their gradients averaged over the ranks, as DDP does). A
token goes to its expert's rank and back by two all_to_all_single calls
with unequal split sizes (how many tokens each rank sends each other
rank), differentiable (torch.distributed.nn.functional), card to card.

    torchrun --nproc-per-node 2 examples/moe.py --steps 6 --compare
    torchrun --nproc-per-node 2 examples/moe.py --device cpu --compare   (Gloo)
    torchrun --nproc-per-node 2 examples/moe.py --steps 6 --bench        (ms per step)
    torchrun --nproc-per-node 3 examples/moe.py --experts 12 --batch 12 --compare

Every rank trains on an equal share of the global batch's rows, so --batch
must be a multiple of the ranks (8 by default: 2 or 4 ranks; 12 for 3).

--compare also trains the same model with every expert on this rank's
device on the whole batches and checks that every step's loss agrees
within --rtol: the gradients are the same sums in another order.
"""
import argparse
import json
import os
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpt2  # noqa: E402

CTX, BATCH, D, HIDDEN = 32, 8, 32, 64


class Expert(nn.Module):
    def __init__(self, d, hidden):
        super().__init__()
        self.up = nn.Linear(d, hidden)
        self.down = nn.Linear(hidden, d)

    def forward(self, x):
        return self.down(F.gelu(self.up(x)))


class MoE(nn.Module):
    """Top-1 mixture of experts. @rank, @world: this rank holds experts
    [rank E/world, (rank+1) E/world) and exchanges tokens with the others;
    world 1: every expert here."""

    def __init__(self, d, hidden, experts, rank=0, world=1, group=None):
        super().__init__()
        assert experts % world == 0, f"{experts} experts do not split over {world} ranks"
        self.e, self.rank, self.world, self.group = experts, rank, world, group
        self.local = experts // world
        self.router = nn.Linear(d, experts)
        # every expert is made (the same seeded values on every rank), this
        # rank keeps its own
        all_experts = [Expert(d, hidden) for _ in range(experts)]
        self.experts = nn.ModuleList(all_experts[rank * self.local:(rank + 1) * self.local])

    def _apply_local(self, x, which):
        """Expert which[i] (a local index) of x[i], for every row."""
        out = torch.zeros_like(x)
        for j, ex in enumerate(self.experts):
            m = which == j
            if bool(m.any()):
                out[m] = ex(x[m])
        return out

    def forward(self, x):
        shape = x.shape
        x = x.reshape(-1, shape[-1])
        probs = F.softmax(self.router(x), dim=-1)
        gate, idx = probs.max(dim=-1)
        if self.world == 1:
            return (self._apply_local(x, idx) * gate[:, None]).view(shape)
        from torch.distributed.nn.functional import all_to_all_single
        order = torch.argsort(idx, stable=True)          # tokens by expert
        per_expert = torch.bincount(idx, minlength=self.e)
        # how many tokens each rank's experts get from every rank
        got = torch.empty_like(per_expert)
        dist.all_to_all_single(got, per_expert, group=self.group)
        send = per_expert.view(self.world, self.local).sum(1).tolist()
        recv_counts = got.view(self.world, self.local)
        recv = recv_counts.sum(1).tolist()
        xin = all_to_all_single(x.new_empty(sum(recv), x.shape[1]), x[order], recv, send,
                                group=self.group)
        # local expert of each received token: sources in rank order, each
        # source's tokens in expert order
        which = torch.repeat_interleave(
            torch.arange(self.local, device=x.device).repeat(self.world), recv_counts.flatten())
        yout = self._apply_local(xin, which)
        back = all_to_all_single(x.new_empty(x.shape[0], x.shape[1]), yout, send, recv,
                                 group=self.group)
        y = torch.empty_like(back)
        y[order] = back
        return (y * gate[:, None]).view(shape)


class MoEModel(nn.Module):
    def __init__(self, vocab, experts, rank=0, world=1, group=None):
        super().__init__()
        self.emb = nn.Embedding(vocab, D)
        self.pos = nn.Parameter(torch.randn(CTX, D) * 0.02)
        self.n1, self.n2, self.nf = nn.LayerNorm(D), nn.LayerNorm(D), nn.LayerNorm(D)
        self.qkv = nn.Linear(D, 3 * D)
        self.proj = nn.Linear(D, D)
        self.moe = MoE(D, HIDDEN, experts, rank, world, group)
        self.head = nn.Linear(D, vocab)

    def forward(self, idx):
        b, t = idx.shape
        h = self.emb(idx) + self.pos[:t]
        q, k, v = self.qkv(self.n1(h)).view(b, t, 3, 4, D // 4).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        h = h + self.proj(a.transpose(1, 2).reshape(b, t, D))
        h = h + self.moe(self.n2(h))
        return self.head(self.nf(h))


def setup(dev, experts, rank=0, world=1, group=None, batch=BATCH):
    """The seeded model (this rank's experts) on @dev and batch_of(step) ->
    the global batch (x, y) of @batch rows on the CPU."""
    vocab, batch_of = gpt2.char_batches(CTX, batch)
    torch.manual_seed(0)
    model = MoEModel(vocab, experts, rank, world, group).to(dev)
    return model, batch_of


def train(steps, dev, experts=4, rank=0, world=1, group=None, quiet=True, times=None,
          batch=BATCH):
    """The global batch's loss at each of @steps AdamW steps; world > 1:
    expert-parallel over the default group (this rank's rows of the @batch;
    every rank the same number). @times: a list that gets each step's
    seconds but the first's."""
    assert batch % world == 0, f"a batch of {batch} rows does not split over {world} ranks"
    model, batch_of = setup(dev, experts, rank, world, group, batch)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    expert_params = {id(p) for p in model.moe.experts.parameters()}
    rows = batch // world
    losses = []
    for step in range(steps):
        t0 = time.perf_counter()
        x, y = batch_of(step)
        x, y = (t[rank * rows:(rank + 1) * rows].to(dev) for t in (x, y))
        loss = F.cross_entropy(model(x).flatten(0, 1), y.flatten(0, 1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        if world > 1:
            for p in model.parameters():
                if p.grad is None:
                    p.grad = torch.zeros_like(p)
                if id(p) in expert_params:
                    # the sum of every rank's share of the global loss
                    p.grad.div_(world)
                else:  # SUM then a division: Gloo has no AVG
                    dist.all_reduce(p.grad, group=group)
                    p.grad.div_(world)
            total = loss.detach().clone()
            dist.all_reduce(total, group=group)
            loss = total / world
        opt.step()
        losses.append(loss.item())  # waits for the card
        if times is not None and step:
            times.append(time.perf_counter() - t0)
        if not quiet:
            print(f"step {step:4d}  loss {losses[-1]:.6f}", flush=True)
    return losses


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--device", choices=["neuron", "cpu"], default="neuron")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--experts", type=int, default=4)
    p.add_argument("--batch", type=int, default=BATCH,
                   help="rows of the global batch, a multiple of the ranks (12 for 2, 3 or 4)")
    p.add_argument("--compare", action="store_true")
    p.add_argument("--rtol", type=float, default=1e-5)
    p.add_argument("--bench", action="store_true",
                   help="print the ms per step (after the first) of the expert-parallel run "
                        "and of one card as JSON (make bench)")
    a = p.parse_args()
    local = int(os.environ.get("LOCAL_RANK", 0))
    if a.device == "neuron":
        torch.neuron.set_device(local)
        dev = torch.device("neuron", local)
        dist.init_process_group("neuron")
    else:
        dev = torch.device("cpu")
        dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    if a.batch % world:
        p.error(f"--batch {a.batch} does not split over {world} ranks (each trains on "
                f"an equal share of the rows)")
    t0 = time.perf_counter()
    times, one = [], []
    losses = train(a.steps, dev, a.experts, rank, world, quiet=a.compare or rank != 0,
                   times=times, batch=a.batch)
    if rank == 0:
        print(f"final loss {losses[-1]:.6f} (expert parallel, {world} ranks, "
              f"{a.steps} steps, {time.perf_counter() - t0:.1f} s)")
    ok = True
    if a.bench:
        train(a.steps, dev, a.experts, times=one, batch=a.batch)
        if rank == 0:
            ms = lambda t: sum(t) / len(t) * 1e3  # noqa: E731
            print(json.dumps({f"moe_step_{world}cards_ms": ms(times),
                              "moe_step_1card_ms": ms(one)}), flush=True)
    if a.compare and rank == 0:
        ref = train(a.steps, dev, a.experts, batch=a.batch)
        worst = 0.0
        for i, (u, v) in enumerate(zip(losses, ref)):
            print(f"step {i}: ep {u:.8f} single {v:.8f}")
            worst = max(worst, abs(u - v) / abs(v))
        ok = worst <= a.rtol
        print(f"largest relative loss difference {worst:.3g} (rtol {a.rtol:g}): "
              f"{'OK' if ok else 'MISMATCH'}")
    dist.barrier()
    if a.device == "cpu":
        time.sleep(0.1)  # PyTorch 2.6's Gloo teardown can race its workers
    dist.destroy_process_group()
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()

# SPDX-License-Identifier: MIT
"""A model sized like a real one on the default card: one training step of
a two-layer graph attention network (GAT, Velickovic et al. 2018) with the
shapes of the public Cora example -- 2708 nodes of 1433 features, 8 heads
of 8 hidden units, 7 classes -- and dense attention (8 x 2708 x 2708 scores
per step), which ran out of memory on the 512 MiB card scripts/vm used to
boot. The step needs about 1.4 GiB of device memory (asserted: more than
that old card), and gives the CPU's loss, logits, gradients and updated weights.

The graph is made here: a random symmetric adjacency of about Cora's
density (5429 edges among 2708 nodes) plus self loops, random binary bag-of-
words features, random labels; dropout is off (the card's random stream is
not the CPU's)."""
import copy

import pytest
import torch
import torch.nn.functional as F

MiB = 1 << 20
NODES, FEATURES, HEADS, HIDDEN, CLASSES = 2708, 1433, 8, 8, 7
TRAIN = 140  # Cora's training split: the first 140 nodes


class DenseGAT(torch.nn.Module):
    """One graph attention layer over a dense adjacency: every head scores
    every pair of nodes, LeakyReLU(a_src . Wh_i + a_dst . Wh_j), keeps the
    edges, normalizes each row by softmax and averages the neighbours."""

    def __init__(self, fin, fout, heads):
        super().__init__()
        self.heads, self.fout = heads, fout
        self.lin = torch.nn.Linear(fin, heads * fout, bias=False)
        self.att_src = torch.nn.Parameter(torch.empty(heads, 1, fout))
        self.att_dst = torch.nn.Parameter(torch.empty(heads, 1, fout))
        torch.nn.init.xavier_uniform_(self.lin.weight, gain=1.414)
        torch.nn.init.xavier_uniform_(self.att_src, gain=1.414)
        torch.nn.init.xavier_uniform_(self.att_dst, gain=1.414)

    def forward(self, x, adj):
        n = x.shape[0]
        h = self.lin(x).view(n, self.heads, self.fout).transpose(0, 1)  # H x N x F
        src = (h * self.att_src).sum(-1, keepdim=True)                   # H x N x 1
        dst = (h * self.att_dst).sum(-1, keepdim=True).transpose(1, 2)   # H x 1 x N
        e = F.leaky_relu(src + dst, 0.2)                                 # H x N x N
        att = torch.softmax(e.masked_fill(~adj, float("-inf")), dim=-1)
        return att @ h                                                   # H x N x F


class GAT(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layer1 = DenseGAT(FEATURES, HIDDEN, HEADS)
        self.layer2 = DenseGAT(HEADS * HIDDEN, CLASSES, 1)

    def forward(self, x, adj):
        h = F.elu(self.layer1(x, adj).transpose(0, 1).reshape(x.shape[0], -1))
        return self.layer2(h, adj).mean(0)                               # N x C


def graph():
    g = torch.Generator().manual_seed(45)
    x = (torch.rand(NODES, FEATURES, generator=g) < 0.0127).float()
    # 5429 undirected edges among 2708 nodes: p = 5429 / (2708^2 / 2).
    edges = torch.rand(NODES, NODES, generator=g) < 5429 / (NODES * NODES / 2)
    adj = torch.triu(edges, 1)
    adj = adj | adj.T | torch.eye(NODES, dtype=torch.bool)
    y = torch.randint(0, CLASSES, (NODES,), generator=g)
    return x, adj, y


def train_step(model, x, adj, y):
    """One step as the Cora example trains: cross-entropy on the training
    nodes, SGD with weight decay. Returns the logits and the loss."""
    opt = torch.optim.SGD(model.parameters(), lr=0.005, weight_decay=5e-4)
    out = model(x, adj)
    loss = F.cross_entropy(out[:TRAIN], y[:TRAIN])
    opt.zero_grad()
    loss.backward()
    opt.step()
    return out.detach(), loss.detach()


@pytest.mark.slow
def test_gat_cora_sized_step_matches_cpu():
    """The step runs on the card with no fallback and gives the CPU's numbers.

    Tolerance: float32 (eps 1.2e-7) whose sums the card adds in another
    order than the CPU (blocked matrix products, tree reductions). The
    longest sums are over 1433 features and 2708 nodes; the rounding of a
    sum of n terms reordered is within about sqrt(n) eps of its magnitude
    typically (6e-6 here) and n eps at worst (3e-4), and a softmax over 2708
    scores passes its inputs' error on. So rtol 1e-4, with atol 1e-4 of the
    largest magnitude of each tensor (its near-zero elements are sums that
    cancel, whose absolute error is that of their terms)."""
    torch.manual_seed(0)
    x, adj, y = graph()
    cpu_model = GAT()
    dev_model = copy.deepcopy(cpu_model).to("neuron")

    want_out, want_loss = train_step(cpu_model, x, adj, y)

    torch.neuron.empty_cache()
    torch.neuron.reset_peak_memory_stats()
    got_out, got_loss = train_step(dev_model, x.to("neuron"), adj.to("neuron"),
                                   y.to("neuron"))
    torch.neuron.synchronize()
    peak = torch.neuron.max_memory_allocated()
    assert peak > 512 * MiB, (f"the step used only {peak / MiB:.0f} MiB: "
                              "no more than the 512 MiB card it ran out of")

    def close(got, want, what):
        atol = 1e-4 * want.abs().max().item()
        torch.testing.assert_close(got.cpu(), want, rtol=1e-4, atol=atol, msg=lambda m: f"{what}: {m}")

    close(got_loss, want_loss, "loss")
    close(got_out, want_out, "logits")
    for (name, p), q in zip(cpu_model.named_parameters(), dev_model.parameters()):
        close(q.grad, p.grad, f"{name}.grad")
        close(q.detach(), p.detach(), name)
    del got_out, got_loss, dev_model
    torch.neuron.empty_cache()

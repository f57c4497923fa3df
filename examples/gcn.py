# SPDX-License-Identifier: MIT
"""Train a two-layer graph convolutional network (Kipf & Welling, 2017) on a
random citation-like graph, its normalized adjacency a sparse COO tensor.

The graph has Cora's shape -- 2708 nodes, about 10k directed edges, 1433
binary word features, 7 classes -- and is made here by a seeded generator
(nothing is downloaded): each node has a class, its words drawn mostly from
its class's vocabulary, and most edges join nodes of one class. Each layer
is  A_hat @ (H @ W) + b  with A_hat = D^-1/2 (A + I) D^-1/2, built on the
device from the edge list (coalesce, torch.sparse.sum for the degrees),
trained with Adam on 20 labelled nodes per class.

    python3 examples/gcn.py --device neuron
    python3 examples/gcn.py --compare      # CPU and neuron agree within rtol 1e-4

The dropout masks come from a CPU generator, so that both devices train
with the same ones.
"""
import argparse
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


def random_graph(nodes: int, edges: int, features: int, classes: int, seed: int = 0):
    """(edge_index [2, E] int64 without duplicates or self loops, both
    directions; features [nodes, features] of 0/1; labels [nodes])."""
    g = torch.Generator().manual_seed(seed)
    labels = torch.randint(0, classes, (nodes,), generator=g)
    # A word is in a class's vocabulary with probability 1/classes: a node
    # uses its vocabulary's words 10 times more often than the others.
    vocab = torch.randint(0, classes, (features,), generator=g)
    p = torch.where(vocab.unsqueeze(0) == labels.unsqueeze(1), 0.05, 0.005)
    x = torch.bernoulli(p, generator=g)
    # Undirected edges, 80 % of them within a class.
    src = torch.randint(0, nodes, (edges // 2,), generator=g)
    same = torch.rand(edges // 2, generator=g) < 0.8
    # A peer of the same class: a random position among the nodes of
    # src's class in the nodes sorted by class.
    by_class = torch.argsort(labels, stable=True)
    count = torch.bincount(labels, minlength=classes)
    start = torch.cumsum(count, 0) - count
    c = labels[src]
    peer = by_class[start[c] + (torch.rand(edges // 2, generator=g) * count[c]).long()]
    dst = torch.where(same, peer, torch.randint(0, nodes, (edges // 2,), generator=g))
    keep = src != dst
    pairs = torch.stack([torch.cat([src[keep], dst[keep]]), torch.cat([dst[keep], src[keep]])])
    pairs = torch.unique(pairs, dim=1)
    return pairs, x, labels


def normalized_adjacency(edge_index: torch.Tensor, nodes: int, dev: str) -> torch.Tensor:
    """D^-1/2 (A + I) D^-1/2 as a coalesced sparse COO tensor on @dev, made
    there: the self loops appended, coalesced, the degrees a sparse sum."""
    loops = torch.arange(nodes).repeat(2, 1)
    idx = torch.cat([edge_index, loops], dim=1).to(dev)
    a = torch.sparse_coo_tensor(idx, torch.ones(idx.shape[1], device=dev),
                                (nodes, nodes)).coalesce()
    dinv = torch.sparse.sum(a, dim=1).to_dense().pow(-0.5)
    row, col = a.indices()
    vals = dinv[row] * a.values() * dinv[col]
    return torch.sparse_coo_tensor(a.indices(), vals, (nodes, nodes), is_coalesced=True)


class GraphConv(nn.Module):
    def __init__(self, d_in: int, d_out: int, g: torch.Generator):
        super().__init__()
        bound = (6.0 / (d_in + d_out)) ** 0.5  # Glorot uniform
        self.weight = nn.Parameter((torch.rand(d_in, d_out, generator=g) * 2 - 1) * bound)
        self.bias = nn.Parameter(torch.zeros(d_out))

    def forward(self, adj, h):
        return torch.sparse.mm(adj, h @ self.weight) + self.bias


class GCN(nn.Module):
    def __init__(self, d_in: int, hidden: int, classes: int, g: torch.Generator):
        super().__init__()
        self.conv1 = GraphConv(d_in, hidden, g)
        self.conv2 = GraphConv(hidden, classes, g)

    def forward(self, adj, x, mask=None):
        h = F.relu(self.conv1(adj, x))
        if mask is not None:
            h = h * mask
        return self.conv2(adj, h)


def train(dev: str, steps: int, nodes: int = 2708, edges: int = 10556,
          features: int = 1433, classes: int = 7, hidden: int = 16,
          dropout: float = 0.5, seed: int = 0, log_every: int = 10,
          quiet: bool = False):
    """Train on @dev for @steps; returns the losses (floats)."""
    edge_index, x, labels = random_graph(nodes, edges, features, classes, seed)
    train_idx = torch.cat([torch.nonzero(labels == c).flatten()[:20] for c in range(classes)])
    test_mask = torch.ones(nodes, dtype=torch.bool)
    test_mask[train_idx] = False
    g = torch.Generator().manual_seed(seed + 1)
    model = GCN(features, hidden, classes, g).to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
    adj = normalized_adjacency(edge_index, nodes, dev)
    x, labels = x.to(dev), labels.to(dev)
    train_idx, test_mask = train_idx.to(dev), test_mask.to(dev)
    if not quiet:
        print(f"graph: {nodes} nodes, {adj._nnz() - nodes} edges (+{nodes} self loops), "
              f"{features} features, {classes} classes; device {dev}")
    losses = []
    t0 = time.time()
    for step in range(steps):
        model.train()
        mask = None
        if dropout > 0:
            keep = torch.rand(nodes, hidden, generator=g) >= dropout
            mask = (keep.float() / (1 - dropout)).to(dev)
        opt.zero_grad()
        out = model(adj, x, mask)
        loss = F.cross_entropy(out[train_idx], labels[train_idx])
        loss.backward()
        opt.step()
        losses.append(loss.item())
        if not quiet and (step % log_every == 0 or step == steps - 1):
            print(f"step {step:4d}  loss {losses[-1]:.6f}")
    with torch.no_grad():
        model.eval()
        pred = model(adj, x).argmax(1)
        acc = (pred[test_mask] == labels[test_mask]).float().mean().item()
    if not quiet:
        print(f"test accuracy {acc:.3f}; {steps} steps in {time.time() - t0:.1f} s")
    return losses


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", default="neuron", help="neuron or cpu")
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--nodes", type=int, default=2708)
    ap.add_argument("--edges", type=int, default=10556)
    ap.add_argument("--features", type=int, default=1433)
    ap.add_argument("--classes", type=int, default=7)
    ap.add_argument("--compare", action="store_true",
                    help="train on the CPU and on neuron; exit 1 unless the losses "
                    "agree within rtol 1e-4")
    args = ap.parse_args()
    kw = dict(nodes=args.nodes, edges=args.edges, features=args.features,
              classes=args.classes)
    if not args.compare:
        train(args.device, args.steps, **kw)
        return 0
    want = train("cpu", args.steps, **kw)
    got = train("neuron", args.steps, **kw)
    worst = max(abs(a - b) / abs(b) for a, b in zip(got, want))
    print(f"losses: cpu {want[0]:.6f} -> {want[-1]:.6f}, neuron {got[0]:.6f} -> "
          f"{got[-1]:.6f}; largest relative difference {worst:.2e} (rtol 1e-4)")
    if worst > 1e-4:
        print("FAIL: the neuron losses differ from the CPU's")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

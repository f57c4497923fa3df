# Owner(s): ["module: PrivateUse1"]
# SPDX-License-Identifier: MIT
"""torch.neuron.NeuronGraph: a whole training step captured once and replayed
by one launch gives, step after step, the very numbers of the eager step;
what a replay could not repeat is refused while capturing; the graph's
memory goes to no other tensor while the graph lives."""
import copy

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F


def _mlp():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 64), nn.Tanh(),
                         nn.Linear(64, 10))


def _batches(n):
    g = torch.Generator().manual_seed(1)
    return [(torch.randn(16, 32, generator=g), torch.randint(0, 10, (16,), generator=g))
            for _ in range(n)]


def _train(model, opt, x, y):
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    return loss


def _graphed_step(model, opt, make_step=None):
    """Warm up one step on static inputs, then capture a whole step."""
    sx = torch.zeros(16, 32, device="neuron")
    sy = torch.zeros(16, dtype=torch.long, device="neuron")
    step = make_step or _train
    opt.zero_grad(set_to_none=False)
    step(model, opt, sx, sy)  # the optimizer's state exists from here on
    g = torch.neuron.NeuronGraph()
    with torch.neuron.graph(g):
        opt.zero_grad(set_to_none=False)
        loss = step(model, opt, sx, sy)
    return g, sx, sy, loss


def _warm_up(ref, ref_opt):
    """The warm-up step of _graphed_step(), eagerly on the reference."""
    zx = torch.zeros(16, 32, device="neuron")
    zy = torch.zeros(16, dtype=torch.long, device="neuron")
    ref_opt.zero_grad(set_to_none=False)
    _train(ref, ref_opt, zx, zy)


def _replays_and_eager(ref, ref_opt, graphed, n):
    """(replayed loss, eager loss) of each of @n batches: the eager step on
    the reference, the graph's replay on the batch copied in."""
    g, sx, sy, loss = graphed
    out = []
    for x, y in _batches(n):
        ref_opt.zero_grad(set_to_none=False)
        want = _train(ref, ref_opt, x.to("neuron"), y.to("neuron")).item()
        sx.copy_(x)
        sy.copy_(y)
        g.replay()
        out.append((loss.item(), want))
    return out


@pytest.mark.parametrize("name,make_opt", [
    ("sgd_momentum", lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9, weight_decay=1e-4)),
    ("adamw_capturable", lambda p: torch.optim.AdamW(p, lr=1e-3, capturable=True)),
])
def test_replayed_steps_equal_eager_steps(name, make_opt):
    """Replays of a captured step (forward, loss, backward, optimizer) give
    the eager step's losses and parameters bit for bit, each on new data
    copied into the static inputs."""
    ref = _mlp().to("neuron")
    model = copy.deepcopy(ref)
    ref_opt, opt = make_opt(ref.parameters()), make_opt(model.parameters())
    # the same warm-up step on both, then the captured one's state is equal
    _warm_up(ref, ref_opt)
    graphed = _graphed_step(model, opt)
    g = graphed[0]
    assert g.info()["instructions"] > 0 and g.info()["replays"] == 0
    pairs = _replays_and_eager(ref, ref_opt, graphed, 4)
    assert all(got == want for got, want in pairs)
    assert g.info()["replays"] == 4 and len({got for got, _ in pairs}) == 4
    for p, q in zip(ref.parameters(), model.parameters()):
        assert torch.equal(p.cpu(), q.cpu())
        assert torch.equal(p.grad.cpu(), q.grad.cpu())


@pytest.mark.slow
def test_replay_after_capture_with_compiled_forward():
    """A torch.compile(backend="neuron") forward run once before the capture
    is captured as its kernel launches (graphs nest): replays equal eager."""
    ref = _mlp().to("neuron")
    model = copy.deepcopy(ref)
    fwd = torch.compile(model, backend="neuron")
    ref_opt = torch.optim.SGD(ref.parameters(), lr=0.05, momentum=0.9)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)

    def compiled_step(_model, o, x, y):
        loss = F.cross_entropy(fwd(x), y)
        loss.backward()
        o.step()
        return loss

    _warm_up(ref, ref_opt)
    pairs = _replays_and_eager(ref, ref_opt, _graphed_step(model, opt, compiled_step), 3)
    assert all(abs(got - want) <= 1e-5 * abs(want) for got, want in pairs)
    for p, q in zip(ref.parameters(), model.parameters()):
        torch.testing.assert_close(q.cpu(), p.cpu(), rtol=1e-5, atol=1e-6)


def _refused(body, match):
    a = torch.ones(8, 8, device="neuron")
    g = torch.neuron.NeuronGraph()
    with pytest.raises(RuntimeError, match=match):
        with torch.neuron.graph(g):
            body(a)
    assert not torch.neuron.is_current_stream_capturing()
    assert g.info() == {}
    # the stream and the graph work as before
    assert (a * 2).sum().item() == 128
    with torch.neuron.graph(g):
        b = a * 3
    g.replay()
    assert b.sum().item() == 192


def test_host_read_is_refused():
    _refused(lambda a: (a + 1).sum().item(), "capture failed: an operation needed results")


def test_random_numbers_are_refused():
    _refused(lambda a: torch.rand_like(a), "capture failed: random numbers")


def test_copy_from_cpu_is_refused():
    _refused(lambda a: a.copy_(torch.zeros(8, 8)), "a copy from the CPU while capturing")


def test_uncapturable_optimizer_is_refused():
    p = nn.Parameter(torch.ones(4, device="neuron"))
    p.grad = torch.ones(4, device="neuron")
    opt = torch.optim.Adam([p], lr=0.1)
    opt.step()
    _refused(lambda a: opt.step(), "capturable=False")


def test_body_error_discards_the_capture():
    def body(a):
        a * 2
        raise ValueError("in the body")
    g = torch.neuron.NeuronGraph()
    with pytest.raises(ValueError, match="in the body"):
        with torch.neuron.graph(g):
            body(torch.ones(4, device="neuron"))
    assert not torch.neuron.is_current_stream_capturing() and g.info() == {}


def test_misuse_is_an_error():
    g = torch.neuron.NeuronGraph()
    with pytest.raises(RuntimeError, match="holds no capture"):
        g.replay()
    with pytest.raises(RuntimeError, match="without capture_begin"):
        g.capture_end()
    g.capture_begin()
    assert torch.neuron.is_current_stream_capturing()
    with pytest.raises(RuntimeError, match="while capturing"):
        g.capture_begin()
    with pytest.raises(RuntimeError, match="issued no work"):
        g.capture_end()
    a = torch.ones(4, device="neuron")
    with torch.neuron.graph(g):
        a.mul_(2)
    with pytest.raises(RuntimeError, match="reset"):
        g.capture_begin()
    g.replay()
    g.replay()
    assert a.cpu().tolist() == [4.0] * 4  # the capture ran nothing itself


def test_graph_memory_goes_to_no_other_tensor():
    """A tensor the graph writes, freed by its owner, and the capture's own
    temporaries are not handed to new tensors while the graph lives; after
    reset() they are reusable."""
    def active():
        return torch.neuron.memory_stats()["active_bytes.all.current"]

    torch.neuron.synchronize()
    base = active()
    x = torch.ones(1 << 16, device="neuron")
    g = torch.neuron.NeuronGraph()
    with torch.neuron.graph(g):
        t = x * 2        # a temporary of the capture
        x.copy_(t + 1)   # x is written by every replay
        del t
    del x                # x's bytes stay the graph's
    assert active() >= base + 2 * (1 << 18)
    others = [torch.full((1 << 16,), 7.0, device="neuron") for _ in range(4)]
    for _ in range(3):
        g.replay()
    torch.neuron.synchronize()
    assert all(torch.equal(o.cpu(), torch.full((1 << 16,), 7.0)) for o in others)
    del others
    g.reset()
    assert g.info() == {} and active() == base


def test_replay_on_another_stream_is_ordered():
    """replay() issues on the current stream: after copies on that stream,
    before reads on it."""
    a = torch.zeros(256, 256, device="neuron")
    g = torch.neuron.NeuronGraph()
    with torch.neuron.graph(g):
        out = a @ a + 1
    s = torch.neuron.Stream()
    s.wait_stream(torch.neuron.current_stream())
    with torch.neuron.stream(s):
        a.copy_(torch.full((256, 256), 2.0))
        g.replay()
        got = out.cpu()
    assert torch.equal(got, torch.full((256, 256), 2.0 * 2.0 * 256 + 1))


def test_new_compiled_signature_is_refused():
    """A compiled graph meeting a new signature inside a capture cannot
    capture its own kernel there: the error says to run it first."""
    f = torch.compile(lambda t: t * 2 + 1, backend="neuron")
    _refused(f, "a capture cannot nest")
    a = torch.ones(8, 8, device="neuron")
    f(a)  # its kernel exists now: the capture records its launch
    g = torch.neuron.NeuronGraph()
    with torch.neuron.graph(g):
        out = f(a)
    g.replay()
    assert torch.equal(out.cpu(), torch.full((8, 8), 3.0))


@pytest.mark.parametrize("name", ["TransformerEncoderLayer", "torchvision MLP"])
def test_inference_replays_with_new_inputs_equal_cpu(name):
    """Modules nobody here wrote, captured in inference and replayed with new
    inputs copied into the static one: every replay after the second runs as
    libneuron's resident job (one SUBMIT of the kept instructions), and each
    output equals the CPU module's on that input."""
    torch.manual_seed(0)
    if name == "TransformerEncoderLayer":
        cpu, shape = nn.TransformerEncoderLayer(32, 4, 64, batch_first=True).eval(), (2, 5, 32)
    else:
        torchvision = pytest.importorskip("torchvision")
        cpu = torchvision.ops.MLP(16, [32, 32, 8], norm_layer=nn.LayerNorm).eval()
        shape = (4, 16)
    dev = copy.deepcopy(cpu).to("neuron")
    x = torch.randn(*shape, device="neuron")
    with torch.no_grad():
        dev(x)
        g = torch.neuron.NeuronGraph()
        with torch.neuron.graph(g):
            y = dev(x)
        assert g.info()["instructions"] <= 256   # one submission: resident
        for _ in range(5):
            inp = torch.randn(*shape)
            x.copy_(inp)
            g.replay()
            torch.testing.assert_close(y.cpu(), cpu(inp), rtol=1e-5, atol=1e-5)

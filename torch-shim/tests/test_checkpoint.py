# SPDX-License-Identifier: MIT
"""Checkpoints: torch.save / torch.load of neuron tensors, a module's
state_dict and an optimizer's state, with every form of map_location, and
between cards. Values must come back bit for bit."""
import io

import pytest
import torch

N = "neuron"
TWO_CARDS = pytest.mark.skipif(torch.neuron.device_count() < 2, reason="needs two cards")


def round_trip(obj, **load_kw):
    buf = io.BytesIO()
    torch.save(obj, buf)
    buf.seek(0)
    return torch.load(buf, **load_kw)


def same_bits(a, b):
    """Equal dtype, shape and bytes (NaN, -0.0 included)."""
    a, b = a.detach().cpu().contiguous(), b.detach().cpu().contiguous()
    return (a.dtype == b.dtype and a.shape == b.shape
            and torch.equal(a.view(torch.uint8), b.view(torch.uint8)))


def sample():
    f = torch.randn(7, 5)
    f[0, 0], f[0, 1], f[0, 2] = float("nan"), -0.0, float("inf")
    return {"f32": f, "bf16": torch.randn(3, 8).to(torch.bfloat16),
            "i64": torch.randint(-10**12, 10**12, (11,)), "i32": torch.arange(9, dtype=torch.int32),
            "bool": torch.rand(6) > 0.5}


@pytest.mark.parametrize("map_location", [None, "neuron", "neuron:0", torch.device("neuron"),
                                          {"neuron:0": "neuron:0"}])
def test_tensors_round_trip_on_the_card(map_location):
    cpu = sample()
    out = round_trip({k: v.to(N) for k, v in cpu.items()}, map_location=map_location)
    for k, v in cpu.items():
        assert out[k].device == torch.device("neuron:0"), k
        assert same_bits(out[k], v), k


@pytest.mark.parametrize("map_location", ["cpu", torch.device("cpu"), {"neuron:0": "cpu"},
                                          lambda storage, loc: storage])
def test_neuron_checkpoint_to_cpu(map_location):
    cpu = sample()
    out = round_trip({k: v.to(N) for k, v in cpu.items()}, map_location=map_location)
    for k, v in cpu.items():
        assert out[k].device.type == "cpu" and same_bits(out[k], v), k


@pytest.mark.parametrize("map_location", ["neuron", "neuron:0", torch.device("neuron", 0),
                                          {"cpu": "neuron:0"}])
def test_cpu_checkpoint_to_the_card(map_location):
    cpu = sample()
    out = round_trip(cpu, map_location=map_location)
    for k, v in cpu.items():
        assert out[k].device == torch.device("neuron:0") and same_bits(out[k], v), k


def test_views_keep_sharing_their_storage():
    base = torch.arange(20, dtype=torch.float32).to(N)
    a, b = base[2:10], base.view(4, 5).t()
    out = round_trip({"a": a, "b": b})
    ra, rb = out["a"], out["b"]
    assert ra.untyped_storage().data_ptr() == rb.untyped_storage().data_ptr()
    assert ra.storage_offset() == 2 and rb.stride() == (1, 5)
    assert same_bits(ra, a) and same_bits(rb, b)
    ra.fill_(-1)  # one storage: the other view sees the write
    assert (rb.cpu().t().reshape(-1)[2:10] == -1).all()


def test_storage_resize_keeps_contents():
    s = torch.arange(8, dtype=torch.float32).to(N).untyped_storage()
    s.resize_(64)
    t = torch.empty(0, device=N).set_(s, 0, (16,), (1,))
    assert torch.equal(t.cpu()[:8], torch.arange(8, dtype=torch.float32))
    # set_ with a view larger than the storage grows it, like the CPU's.
    u = torch.empty(0, device=N).set_(s, 0, (20,), (1,))
    assert s.nbytes() == 80 and torch.equal(u.cpu()[:8], torch.arange(8, dtype=torch.float32))


def make_model():
    return torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3))


def train(model, opt, steps, seed):
    g = torch.Generator().manual_seed(seed)
    for _ in range(steps):
        x = torch.randn(8, 6, generator=g).to(N)
        y = torch.randint(0, 3, (8,), generator=g).to(N)
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()


def test_model_and_adamw_resume_bit_exact():
    """Save a model and its AdamW state mid-training, load them into fresh
    objects, train both on: the parameters stay identical bit for bit."""
    torch.manual_seed(0)
    model = make_model().to(N)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=1e-2)
    train(model, opt, 3, seed=1)
    ck = round_trip({"model": model.state_dict(), "opt": opt.state_dict()})
    assert all(v.device.type == "neuron" for v in ck["model"].values())
    model2 = make_model().to(N)
    model2.load_state_dict(ck["model"])
    opt2 = torch.optim.AdamW(model2.parameters(), lr=1e-2, weight_decay=1e-2)
    opt2.load_state_dict(ck["opt"])
    for p in opt2.state.values():
        assert p["exp_avg"].device.type == "neuron" and p["exp_avg_sq"].device.type == "neuron"
    train(model, opt, 2, seed=2)
    train(model2, opt2, 2, seed=2)
    for (k, a), (_, b) in zip(model.state_dict().items(), model2.state_dict().items()):
        assert same_bits(a, b), k


def test_model_checkpoint_from_cpu_and_back():
    torch.manual_seed(0)
    cpu_model = make_model()
    sd = round_trip(cpu_model.state_dict(), map_location="neuron")
    model = make_model().to(N)
    model.load_state_dict(sd)
    x = torch.randn(4, 6)
    torch.testing.assert_close(model(x.to(N)).cpu(), cpu_model(x), rtol=1e-5, atol=1e-6)
    back = round_trip(model.state_dict(), map_location="cpu")
    for k, v in cpu_model.state_dict().items():
        assert same_bits(back[k], v), k


@TWO_CARDS
def test_between_cards():
    cpu = sample()
    on1 = {k: v.to("neuron:1") for k, v in cpu.items()}
    buf = io.BytesIO()
    torch.save(on1, buf)
    cases = [(None, "neuron:1"), ("neuron:0", "neuron:0"), ({"neuron:1": "neuron:0"}, "neuron:0"),
             (torch.device("neuron", 1), "neuron:1"), ("cpu", "cpu")]
    for map_location, want in cases:
        buf.seek(0)
        out = torch.load(buf, map_location=map_location)
        for k, v in cpu.items():
            assert out[k].device == torch.device(want), (map_location, k)
            assert same_bits(out[k], v), (map_location, k)
    # Card 0's checkpoint onto card 1.
    out = round_trip({k: v.to("neuron:0") for k, v in cpu.items()}, map_location="neuron:1")
    for k, v in cpu.items():
        assert out[k].device == torch.device("neuron:1") and same_bits(out[k], v), k


@TWO_CARDS
def test_module_moves_between_cards_through_a_checkpoint():
    torch.manual_seed(0)
    m0 = make_model().to("neuron:0")
    sd = round_trip(m0.state_dict(), map_location={"neuron:0": "neuron:1"})
    m1 = make_model().to("neuron:1")
    m1.load_state_dict(sd)
    x = torch.randn(4, 6)
    assert all(p.device == torch.device("neuron:1") for p in m1.parameters())
    assert same_bits(m1(x.to("neuron:1")), m0(x.to("neuron:0")))


def test_a_checkpoint_for_a_missing_card_fails_clearly():
    buf = io.BytesIO()
    torch.save(torch.ones(3).to(N), buf)
    buf.seek(0)
    with pytest.raises(RuntimeError, match="device_count"):
        torch.load(buf, map_location=f"neuron:{torch.neuron.device_count()}")

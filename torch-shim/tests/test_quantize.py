# Owner(s): ["module: PrivateUse1"]
# SPDX-License-Identifier: MIT
"""Weight-only int8 (examples/quantize.py, examples/kernels/int8_linear.py)
and bfloat16 inference on the card. The quantization keeps every weight
within half a step of its row's scale; a layer's output stays within the
bound that implies; the card's int8 product (a MATMUL reading the int8
weights) gives the CPU's; greedy generation with int8 weights gives the
CPU's tokens, graphed, and torchaudio's wav2vec2 quantized transcribes as
on the CPU; a bfloat16 model generates on the card
with the same logits as on the CPU, to bfloat16's precision."""
import copy
import os
import sys

import pytest
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples"))
import generate as G  # noqa: E402
import quantize as Q  # noqa: E402

N = "neuron"
MAX_LEN = 64


@pytest.fixture(autouse=True)
def _no_fallback(monkeypatch):
    monkeypatch.setenv("TORCH_NEURON_FALLBACK", "error")


def test_quantized_weights_are_within_half_a_step():
    """|w - wq * scale| <= scale / 2 for every weight; each row's largest
    magnitude is +-127; an all-zero row stays zero."""
    w = torch.randn(40, 72) * torch.logspace(-3, 1, 40)[:, None]
    w[7] = 0
    wq, scale = Q.quantize_weight(w)
    assert wq.dtype == torch.int8 and scale.dtype == torch.float32
    err = (w - wq.float() * scale[:, None]).abs()
    assert (err <= scale[:, None] / 2 * (1 + 1e-6)).all()
    rows = [r for r in range(40) if r != 7]
    assert (wq[rows].abs().amax(1) == 127).all()
    assert (wq[7] == 0).all()


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_int8_linear_on_the_card_equals_cpu(dtype):
    """The card's int8 product, float32 or bfloat16 activations, against
    the same on the CPU; the weights stay int8 on the card."""
    torch.manual_seed(0)
    lin = torch.nn.Linear(64, 48).to(dtype)
    x = torch.randn(3, 5, 64).to(dtype)
    ref = Q.Int8Linear(lin)
    want = ref(x)
    card = copy.deepcopy(ref).to(N)
    assert card.wq.dtype == torch.int8 and card.wq.device.type == N
    got = card(x.to(N))
    assert got.dtype == dtype
    torch.testing.assert_close(got.cpu(), want)


def test_int8_output_error_is_bounded():
    """A quantized layer's output differs from the float layer's by at
    most (scale_n / 2) * sum_k |x_k| (and float32's rounding)."""
    torch.manual_seed(1)
    lin = torch.nn.Linear(128, 32, bias=False)
    q = Q.Int8Linear(lin).to(N)
    x = torch.randn(16, 128)
    got = q(x.to(N)).cpu()
    bound = (x.abs().sum(1, keepdim=True) * q.scale.cpu() / 2) + 1e-4
    err = (got - F.linear(x, lin.weight.detach())).abs()
    assert (err <= bound).all()
    assert err.max() > 0  # it is an approximation


@pytest.mark.parametrize("name", ["llama", "gpt2"])
def test_int8_generation_equals_cpu(name):
    """Greedy generation of a quantized model on the card (each decode
    step one graph replay, the int8 kernels inside it) gives the quantized
    model's tokens on the CPU."""
    model = Q.quantize(G.make_model(name, MAX_LEN))
    prompt = torch.randint(0, G.VOCAB, (2, 7), generator=torch.Generator().manual_seed(3))
    want = G.Decoder(model, 2, MAX_LEN, "eager").generate(prompt, 24)
    card = copy.deepcopy(model).to(N)
    assert isinstance(card.layers[0].attention.wq if name == "llama" else card.h[0].c_attn,
                      Q.Int8Linear)
    got = G.Decoder(card, 2, MAX_LEN, "graph").generate(prompt, 24)
    assert torch.equal(got, want)


def test_bfloat16_generation():
    """A bfloat16 model on the card: its cache is bfloat16, the prefill's
    logits are the CPU's to bfloat16's precision, and the graphed decode
    gives the tokens of the same model run eagerly on the card."""
    model = G.make_model("llama", MAX_LEN).to(torch.bfloat16)
    card = copy.deepcopy(model).to(N)
    prompt = torch.randint(0, G.VOCAB, (1, 9), generator=torch.Generator().manual_seed(4))
    with torch.no_grad():
        want = model(prompt)
        got = card(prompt.to(N)).cpu()
    assert got.dtype == torch.bfloat16
    torch.testing.assert_close(got, want, atol=0.05, rtol=0.02)
    dec = G.Decoder(card, 1, MAX_LEN, "graph")
    assert dec.cache.dtype == torch.bfloat16
    graphed = dec.generate(prompt, 20)
    eager = G.Decoder(card, 1, MAX_LEN, "eager").generate(prompt, 20)
    assert torch.equal(graphed, eager)


def test_int8_torchaudio_wav2vec2():
    """quantize() on a model nobody here wrote: torchaudio's wav2vec2 (from
    its factory, examples/asr.py's size) gets int8 encoder and head layers,
    and transcribes on the card, graphed, as on the CPU."""
    pytest.importorskip("torchaudio")
    import asr
    model = Q.quantize(asr.make_model())
    assert sum(isinstance(m, Q.Int8Linear) for m in model.modules()) >= 10
    audio = asr.make_audio(6, seed=1, seconds=(0.5, 1.5))
    want = asr.Transcriber(model).transcribe(audio, batch=3)
    card = asr.Transcriber(copy.deepcopy(model).to(N), "graph")
    assert card.transcribe(audio, batch=3) == want

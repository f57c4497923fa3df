# Owner(s): ["module: PrivateUse1"]
# SPDX-License-Identifier: MIT
"""examples/asr.py: a wav2vec2-style model from torchaudio's factory
transcribes batches of audio on the card, batched by length, with greedy
CTC decoding, eagerly or each batch shape a NeuronGraph: the emissions are the CPU's (within the card's summation
order), the transcripts are the CPU's, every utterance is transcribed once
in its own place, and each utterance's valid frames follow its length
(one per 320 samples), whatever the padding of its batch."""
import copy
import os
import sys

import pytest
import torch

pytest.importorskip("torchaudio")
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples"))
import asr  # noqa: E402


@pytest.fixture(autouse=True)
def _no_fallback(monkeypatch):
    monkeypatch.setenv("TORCH_NEURON_FALLBACK", "error")


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["eager", "graph"])
def test_transcripts_equal_cpu(mode):
    """Eagerly, and each batch shape one NeuronGraph replayed with the
    next batch's waves and lengths copied in (torchaudio's `x[mask] = 0.0`
    of the padded frames is captured: it reads nothing back)."""
    model = asr.make_model()
    audio = asr.make_audio(10, seed=3, seconds=(0.5, 2.0))
    cpu = asr.Transcriber(model)
    card = asr.Transcriber(copy.deepcopy(model).to("neuron"), mode)
    want = cpu.transcribe(audio, batch=4)
    assert card.transcribe(audio, batch=4) == want
    if mode == "graph":
        shapes = {tuple(w.shape) for _, w, _ in asr.batches(audio, 4, 0.5)}
        assert set(card.graphs) == shapes
        assert card.transcribe(audio, batch=4) == want  # replays only
    assert all(want)  # a random model still emits symbols
    # the batches: sorted by length, padded to 0.5 s buckets
    groups = list(asr.batches(audio, 4, 0.5))
    assert sorted(i for g in groups for i in g[0]) == list(range(10))
    for idx, wave, lengths in groups:
        assert wave.shape[1] % 8000 == 0 and wave.shape[1] >= lengths.max()
        e_cpu, f_cpu = cpu.emissions(wave, lengths)
        e, f = card.emissions(wave, lengths)
        assert torch.equal(f.cpu(), f_cpu)
        torch.testing.assert_close(e.cpu(), e_cpu, rtol=1e-3, atol=1e-4)


def test_frames_follow_lengths():
    """Each utterance's valid frames follow its own length (one per 320
    samples after the first 400), whatever the padding of its batch; an
    utterance alone is transcribed as on the CPU. (Its transcript alone and
    padded in a batch may differ, on the CPU as on the card: the group-norm
    extractor normalizes over the padded samples too, as wav2vec2 base's
    does -- hence batching by length.)"""
    model = asr.make_model()
    card = asr.Transcriber(copy.deepcopy(model).to("neuron"))
    audio = asr.make_audio(3, seed=4, seconds=(1.0, 3.0))
    short = min(range(3), key=lambda i: audio[i].numel())
    for idx, wave, lengths in asr.batches(audio, 3, 0.5):
        _, frames = card.emissions(wave, lengths)
        assert frames.cpu().tolist() == [(int(n) - 400) // 320 + 1 for n in lengths]
    alone = [audio[short]]
    assert card.transcribe(alone, batch=1) == asr.Transcriber(model).transcribe(alone, batch=1)

# SPDX-License-Identifier: MIT
"""Speech recognition on the card: a wav2vec2-style model built by
torchaudio's own factory (torchaudio.models.wav2vec2_model, a convolutional
feature extractor with wav2vec2 base's strides at a smaller width, then a
Transformer encoder and a CTC head over 29 symbols) transcribing batches
of 16 kHz audio with greedy CTC decoding.

- Utterances are batched by length: sorted, then grouped --batch at a time
  and padded to the group's bucket (a multiple of --bucket-s seconds), with
  their lengths, so that the padding is small and the shapes few (the
  group-norm extractor, as wav2vec2 base's, normalizes over the padded
  samples too: an utterance's transcript can depend on its batch's
  padding, on the CPU as on the card);
- the model gives per-frame emissions (one frame per 20 ms) and each
  utterance's number of valid frames; greedy CTC takes the most likely
  symbol per frame, merges repeats and drops the blank;
- mode "graph" (neuron) captures the forward once per (batch, bucket)
  shape in a NeuronGraph and replays it with the next batch's waves and
  lengths copied in; "eager" runs it as it is.

No weights can be downloaded here: the model's weights are random, so
the transcripts are not words; the arithmetic, the shapes and the throughput
are those of a real model of this size. Audio seconds per second are the
figure: seconds of audio transcribed per second of wall time.

    python3 examples/asr.py --utterances 32 --batch 8
    python3 examples/asr.py --device cpu --json
"""
import argparse
import json
import math
import time

import torch
import torchaudio

device = "neuron"  # "cpu", "cuda", or "neuron"
RATE = 16000
SYMBOLS = "_ abcdefghijklmnopqrstuvwxyz'"  # index 0 (_) is CTC's blank


def make_model(width=64, dim=96, layers=2, heads=4, seed=0):
    """wav2vec2's architecture at a small size: its extractor strides (5,
    2, 2, 2, 2, 2, 2: 320 samples a frame) with @width channels."""
    torch.manual_seed(seed)
    convs = [(width, 10, 5)] + [(width, 3, 2)] * 4 + [(width, 2, 2)] * 2
    return torchaudio.models.wav2vec2_model(
        extractor_mode="group_norm", extractor_conv_layer_config=convs,
        extractor_conv_bias=False, encoder_embed_dim=dim, encoder_projection_dropout=0.0,
        encoder_pos_conv_kernel=16, encoder_pos_conv_groups=4, encoder_num_layers=layers,
        encoder_num_heads=heads, encoder_attention_dropout=0.0,
        encoder_ff_interm_features=2 * dim, encoder_ff_interm_dropout=0.0, encoder_dropout=0.0,
        encoder_layer_norm_first=False, encoder_layer_drop=0.0, aux_num_out=len(SYMBOLS)).eval()


def make_audio(n, seed=0, seconds=(1.0, 4.0)):
    """@n synthetic utterances (1-D float32 at 16 kHz, lengths uniform in
    @seconds): a few gliding tones with a syllable-like envelope and noise."""
    g = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(n):
        s = seconds[0] + (seconds[1] - seconds[0]) * float(torch.rand(1, generator=g))
        t = torch.arange(int(s * RATE)) / RATE
        f0 = 100 + 150 * torch.rand(3, generator=g)
        glide = 1 + 0.3 * torch.sin(2 * math.pi * 0.7 * t)
        x = sum(torch.sin(2 * math.pi * f * glide * t) / (k + 1) for k, f in enumerate(f0))
        env = 0.5 + 0.5 * torch.sin(2 * math.pi * 4 * t).clamp(min=0)
        out.append((x * env + 0.05 * torch.randn(t.shape, generator=g)).float())
    return out


def batches(audio, batch, bucket_s):
    """(indices, padded [B, L], lengths [B]) groups of @audio sorted by
    length, each padded to a multiple of @bucket_s seconds."""
    order = sorted(range(len(audio)), key=lambda i: audio[i].numel())
    step = int(bucket_s * RATE)
    for k in range(0, len(order), batch):
        idx = order[k:k + batch]
        n = max(audio[i].numel() for i in idx)
        wave = torch.zeros(len(idx), step * math.ceil(n / step))
        for j, i in enumerate(idx):
            wave[j, :audio[i].numel()] = audio[i]
        yield idx, wave, torch.tensor([audio[i].numel() for i in idx])


def ctc_greedy(emissions, lengths):
    """Transcripts of emissions [B, T, S] over their first lengths[b]
    frames: the best symbol per frame, repeats merged, blanks dropped."""
    best = emissions.argmax(-1).cpu()
    texts = []
    for row, n in zip(best, lengths.cpu().tolist()):
        ids = torch.unique_consecutive(row[:n]).tolist()
        texts.append("".join(SYMBOLS[i] for i in ids if i != 0))
    return texts


class Transcriber:
    """Greedy CTC transcription with @model on its device; mode "graph" (a
    NeuronGraph per input shape) or "eager"."""

    def __init__(self, model, mode="eager"):
        self.model = model
        self.device = next(model.parameters()).device
        if mode not in ("graph", "eager"):
            raise ValueError(f"asr: mode {mode!r}: 'graph' or 'eager'")
        if mode == "graph" and self.device.type != "neuron":
            raise ValueError(f"asr: mode 'graph' is a NeuronGraph; {self.device} runs 'eager'")
        self.mode = mode
        self.graphs = {}  # (B, L) -> (graph, wave, lengths, emissions, frames)

    @torch.no_grad()
    def emissions(self, wave, lengths):
        """Emissions [B, T, S] and valid frames [B] of padded waves [B, L]."""
        if self.mode == "eager":
            return self.model(wave.to(self.device), lengths.to(self.device))
        key = tuple(wave.shape)
        if key not in self.graphs:
            w, n = wave.to(self.device), lengths.to(self.device)
            self.model(w, n)  # warm-up: allocations made
            g = torch.neuron.NeuronGraph()
            with torch.neuron.graph(g):
                e, f = self.model(w, n)
            self.graphs[key] = (g, w, n, e, f)
        g, w, n, e, f = self.graphs[key]
        w.copy_(wave)
        n.copy_(lengths)
        g.replay()
        return e, f

    def transcribe(self, audio, batch=8, bucket_s=0.5):
        """Transcripts of @audio (a list of 1-D waves), in its order."""
        texts = [None] * len(audio)
        for idx, wave, lengths in batches(audio, batch, bucket_s):
            e, frames = self.emissions(wave, lengths)
            for i, t in zip(idx, ctc_greedy(e, frames)):
                texts[i] = t
        return texts


def sync(dev):
    if dev.type == "neuron":
        torch.neuron.synchronize()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default=device)
    ap.add_argument("--mode", choices=["graph", "eager"], default=None,
                    help="graph on neuron, eager elsewhere (default)")
    ap.add_argument("--utterances", type=int, default=32)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--bucket-s", type=float, default=0.5)
    ap.add_argument("--reps", type=int, default=3, help="timed passes (the median is kept)")
    ap.add_argument("--threads", type=int, default=0, help="torch.set_num_threads (0: as is)")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    if a.threads:
        torch.set_num_threads(a.threads)
    dev = torch.device(a.device)
    if dev.type == "neuron":
        import torch_neuron  # noqa: F401  (registers the device)
    mode = a.mode or ("graph" if dev.type == "neuron" else "eager")
    tr = Transcriber(make_model().to(dev), mode)
    audio = make_audio(a.utterances)
    seconds = sum(x.numel() for x in audio) / RATE
    texts = tr.transcribe(audio, a.batch, a.bucket_s)  # the first pass captures
    times = []
    for _ in range(a.reps):
        sync(dev)
        t0 = time.perf_counter()
        again = tr.transcribe(audio, a.batch, a.bucket_s)
        sync(dev)
        times.append(time.perf_counter() - t0)
        assert again == texts
    wall = sorted(times)[len(times) // 2]
    fig = {f"asr_{dev.type}_{mode}_b{a.batch}_audio_s_per_s": round(seconds / wall, 2),
           f"asr_{dev.type}_{mode}_b{a.batch}_wall_s": round(wall, 4)}
    if a.json:
        print(json.dumps(fig))
        return
    print(f"{a.utterances} utterances, {seconds:.1f} s of audio, on {dev.type} ({mode}), "
          f"batches of {a.batch}: {wall:.3f} s, {seconds / wall:.1f} audio seconds a second "
          f"(median of {a.reps})")
    print(f"  utterance 0 ({audio[0].numel() / RATE:.2f} s): {texts[0][:60]!r}")


if __name__ == "__main__":
    main()

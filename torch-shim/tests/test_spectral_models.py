# SPDX-License-Identifier: MIT
"""torchaudio's models whose front end is spectral, trained on the card:
a Conformer over a log-mel front end (MelSpectrogram: stft, |.|^2, the
mel filter bank, log), Wav2Letter over MFCCs, and HDemucs, whose
spectral branch runs stft, view_as_real masks and istft. Two SGD steps on
the card and on the CPU from the same weights: the same losses and
gradients (within 1e-3 relative), no operator falling back to the CPU
(conftest)."""
import pytest
import torch
import torch.nn as nn

torchaudio = pytest.importorskip("torchaudio")
from test_audio_models import _compare  # noqa: E402 -- two SGD steps, card and CPU


class LogMelConformer(nn.Module):
    """Log-mel features (25 ms windows, 10 ms hop at 16 kHz) into a small
    torchaudio Conformer and a per-frame classifier."""

    def __init__(self, n_mels=32, classes=10):
        super().__init__()
        self.mel = torchaudio.transforms.MelSpectrogram(
            sample_rate=16000, n_fft=400, hop_length=160, n_mels=n_mels)
        self.conformer = torchaudio.models.Conformer(
            input_dim=n_mels, num_heads=2, ffn_dim=32, num_layers=2,
            depthwise_conv_kernel_size=7)
        self.out = nn.Linear(n_mels, classes)

    def forward(self, wave):
        feats = (self.mel(wave) + 1e-6).log().transpose(1, 2)      # [B, T, mels]
        lengths = torch.full((feats.shape[0],), feats.shape[1], device=feats.device)
        y, _ = self.conformer(feats, lengths)
        return self.out(y)


def test_log_mel_conformer_trains_on_neuron_like_cpu():
    torch.manual_seed(0)
    model = LogMelConformer()
    wave = torch.randn(2, 8000)
    labels = torch.randint(10, (2, 51))

    def step(m, dev):
        logits = m(wave.to(dev))
        return nn.functional.cross_entropy(logits.reshape(-1, 10), labels.to(dev).reshape(-1))
    _compare(model, step, atol=1e-5)


@pytest.mark.slow
def test_mfcc_wav2letter_trains_on_neuron_like_cpu():
    torch.manual_seed(0)
    mfcc = torchaudio.transforms.MFCC(
        sample_rate=16000, n_mfcc=13, melkwargs=dict(n_fft=400, hop_length=160, n_mels=40))
    model = nn.Sequential()
    model.add_module("mfcc", mfcc)
    net = torchaudio.models.Wav2Letter(num_classes=8, input_type="mfcc", num_features=13)
    wave = torch.randn(2, 8000)

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.mfcc, self.net = mfcc, net

        def forward(self, x):
            return self.net(self.mfcc(x))

    def step(m, dev):
        return -m(wave.to(dev))[:, 0].mean()     # log-probabilities of class 0
    _compare(M(), step, atol=1e-4)


def test_hdemucs_trains_on_neuron_like_cpu():
    """A small HDemucs: its time and spectral branches (stft of the
    mixture, a complex-as-channels U-Net, istft of the masked spectrum)."""
    torch.manual_seed(0)
    model = torchaudio.models.HDemucs(sources=["a", "b"], audio_channels=1, channels=8,
                                      nfft=256, depth=3)
    mix = torch.randn(1, 1, 2048)
    target = torch.randn(1, 2, 1, 2048)

    def step(m, dev):
        return nn.functional.l1_loss(m(mix.to(dev)), target.to(dev))
    _compare(model, step, atol=1e-5)

# SPDX-License-Identifier: MIT
"""torch.fft, torch.stft/istft and torchaudio's spectral front ends on the
card against the CPU (pocketfft).

The card's FFT instruction computes in double and rounds each output once
(docs/hardware.md, "FFT"), so its results are at least as accurate as the
CPU's float32 ones: they agree to 1e-5 of the result's largest magnitude
here (the issue's bound is 1e-4). Lengths cover powers of two, mixed radix
and primes; every transform runs forward and backward (gradients of a real
loss through it). Nothing falls back to the CPU (conftest).
"""
import pytest
import torch

N = "neuron"
LENGTHS = [1, 2, 7, 12, 97, 360, 1009, 1024]


def close(got, want, rel=1e-5):
    """got equals want to @rel of want's largest magnitude."""
    assert got.device.type == N, got.device
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    scale = want.abs().max().item() if want.numel() else 1.0
    torch.testing.assert_close(got.cpu(), want, rtol=0, atol=rel * max(scale, 1e-30))


def both(f, *xs):
    """f on the CPU and the card, and the gradients of a random real
    projection of its output with respect to each input."""
    xc = [x.clone().requires_grad_() for x in xs]
    xn = [x.to(N).requires_grad_() for x in xs]
    want, got = f(*xc), f(*xn)
    want, got = want.resolve_conj(), got.resolve_conj()     # ihfft: a conjugate view
    w = torch.randn(torch.view_as_real(want).shape if want.is_complex() else want.shape)
    proj = (lambda t: (torch.view_as_real(t) * w.to(t.device)).sum()) if want.is_complex() \
        else (lambda t: (t * w.to(t.device)).sum())
    proj(want).backward()
    proj(got).backward()
    close(got.detach(), want.detach())
    for a, b in zip(xn, xc):
        close(a.grad, b.grad)
    return got


@pytest.mark.parametrize("n", LENGTHS)
def test_complex_fft_and_ifft(n):
    x = torch.randn(3, n, dtype=torch.complex64)
    for f in (torch.fft.fft, torch.fft.ifft):
        for norm in (None, "ortho", "forward"):
            both(lambda t: f(t, norm=norm), x)


@pytest.mark.parametrize("n", LENGTHS)
def test_real_fft_round_trip(n):
    x = torch.randn(4, n)
    both(torch.fft.rfft, x)
    X = torch.fft.rfft(x)
    both(lambda t: torch.fft.irfft(t, n=n), X)
    back = torch.fft.irfft(torch.fft.rfft(x.to(N)), n=n)
    close(back, x)


def test_hermitian_transforms_and_padding():
    x = torch.randn(2, 9, dtype=torch.complex64)
    both(lambda t: torch.fft.hfft(t, n=16), x)
    both(torch.fft.ihfft, torch.randn(2, 15))
    both(lambda t: torch.fft.fft(t, n=20), x)                    # zero padded
    both(lambda t: torch.fft.fft(t, n=5), x)                     # truncated
    both(lambda t: torch.fft.rfft(t, n=32, norm="ortho"), torch.randn(3, 20))


def test_multidimensional_and_strided():
    x = torch.randn(4, 6, 10, dtype=torch.complex64)
    both(torch.fft.fft2, x)
    both(lambda t: torch.fft.fftn(t, dim=(0, 2)), x)
    both(lambda t: torch.fft.ifftn(t, norm="ortho"), x)
    r = torch.randn(5, 8, 12)
    both(torch.fft.rfft2, r)
    both(lambda t: torch.fft.rfftn(t, dim=(0, 1)), r)
    both(lambda t: torch.fft.irfftn(t, s=(5, 8, 12)), torch.fft.rfftn(r))
    both(lambda t: torch.fft.fft(t.transpose(0, 2), dim=1), x)   # non-contiguous
    both(lambda t: torch.fft.fft(t, dim=0), x)                   # a leading axis
    both(lambda t: torch.fft.fftshift(torch.fft.fft(t), dim=-1), x)
    y = torch.randn(2, 2, 3, 2, 16, dtype=torch.complex64)       # 5 dims
    both(lambda t: torch.fft.fft(t, dim=2), y)
    both(lambda t: torch.fft.rfft(t, dim=-1), torch.randn(2, 3, 2, 2, 9))


def test_one_million_points():
    x = torch.randn(1 << 20, dtype=torch.complex64)
    close(torch.fft.fft(x.to(N)), torch.fft.fft(x))


@pytest.mark.parametrize("center,onesided,window", [
    (True, True, "hann"), (False, True, None), (True, False, "hamming")])
def test_stft_and_istft(center, onesided, window):
    n_fft, hop = 64, 16
    win = {"hann": torch.hann_window, "hamming": torch.hamming_window}[window](n_fft) \
        if window else None
    x = torch.randn(2, 1000)

    def stft(t):
        return torch.stft(t, n_fft, hop, window=None if win is None else win.to(t.device),
                          center=center, onesided=onesided, return_complex=True)

    S = both(stft, x)
    if win is not None:
        def istft(t):
            return torch.istft(t, n_fft, hop, window=win.to(t.device), center=center,
                               onesided=onesided, length=1000)
        both(istft, torch.stft(x, n_fft, hop, window=win, center=center,
                               onesided=onesided, return_complex=True))
        close(torch.istft(S.detach(), n_fft, hop, window=win.to(N), center=center,
                          onesided=onesided, length=1000), x)


def test_what_the_card_does_not_transform_is_refused():
    with pytest.raises(RuntimeError, match="complex128|float32"):
        torch.fft.fft(torch.randn(8, dtype=torch.float64).to(N))


torchaudio = pytest.importorskip("torchaudio")
T = torchaudio.transforms


@pytest.mark.parametrize("make", [
    lambda: T.Spectrogram(n_fft=400, hop_length=160),
    lambda: T.Spectrogram(n_fft=256, power=None),
    lambda: T.MelSpectrogram(sample_rate=16000, n_fft=400, hop_length=160, n_mels=40),
    lambda: T.MFCC(sample_rate=16000, n_mfcc=13,
                   melkwargs=dict(n_fft=400, hop_length=160, n_mels=40)),
], ids=["spectrogram", "complex-spectrogram", "melspectrogram", "mfcc"])
def test_torchaudio_front_ends(make):
    torch.manual_seed(0)
    m = make()
    x = torch.randn(2, 4000)
    xc, xn = x.clone().requires_grad_(), x.to(N).requires_grad_()
    want, got = m(xc), m.to(N)(xn)
    assert got.device.type == N
    if want.is_complex():
        want, got = torch.view_as_real(want), torch.view_as_real(got)
    # MFCC's log of small mel energies: relative to each element's size too
    torch.testing.assert_close(got.detach().cpu(), want.detach(), rtol=1e-4,
                               atol=1e-4 * want.abs().max().item())
    w = torch.randn(want.shape)
    (want * w).sum().backward()
    (got * w.to(N)).sum().backward()
    torch.testing.assert_close(xn.grad.cpu(), xc.grad, rtol=1e-4,
                               atol=1e-4 * xc.grad.abs().max().item())


def test_torchaudio_inverse_spectrogram():
    spec = T.Spectrogram(n_fft=256, hop_length=64, power=None)
    inv = T.InverseSpectrogram(n_fft=256, hop_length=64)
    x = torch.randn(2, 3000)
    S = spec(x)
    Sc, Sn = S.clone().requires_grad_(), S.to(N).requires_grad_()
    want, got = inv(Sc, length=3000), inv.to(N)(Sn, length=3000)
    close(got.detach(), want.detach())
    close(got.detach(), x, rel=1e-4)
    w = torch.randn(want.shape)
    (want * w).sum().backward()
    (got * w.to(N)).sum().backward()
    close(Sn.grad, Sc.grad)

# SPDX-License-Identifier: MIT
"""The spectral front end of an audio model, timed: torch.stft of a batch
of 16 one-second clips at 16 kHz (n_fft 400, hop 160, a Hann window, the
log-mel front end's framing) and a 2^20-point complex FFT, as JSON.

    python3 examples/bench_spectral.py [--device neuron|cpu] [--windows N]

Figures (median over windows of back-to-back calls, the device
synchronized around each window): stft_16k_<tag>_ms and fft_1m_<tag>_ms,
<tag> "neuron" on the card, "native_cpu" with --device cpu (make bench
runs that natively on the host's cores, in the guest root by chroot). On
the card each is FFT instructions (docs/hardware.md, "FFT") between the
framing and windowing operations.
"""
import argparse
import json

import torch

from benchtime import median_ms_per_call


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--device", default="neuron")
    p.add_argument("--windows", type=int, default=5)
    p.add_argument("--calls", type=int, default=4)
    a = p.parse_args()
    if a.device == "neuron":
        import torch_neuron  # noqa: F401
    dev = torch.device(a.device)
    tag = "neuron" if dev.type == "neuron" else "native_cpu"
    sync = (lambda: torch.neuron.synchronize()) if dev.type == "neuron" else (lambda: None)
    g = torch.Generator().manual_seed(0)
    clips = torch.randn(16, 16000, generator=g).to(dev)
    window = torch.hann_window(400).to(dev)
    signal = torch.randn(1 << 20, dtype=torch.complex64, generator=g).to(dev)
    cases = {
        "stft_16k": lambda: torch.stft(clips, 400, 160, window=window, return_complex=True),
        "fft_1m": lambda: torch.fft.fft(signal),
    }
    figs = {}
    for name, fn in cases.items():
        fn()  # warm-up
        figs[f"{name}_{tag}_ms"] = round(median_ms_per_call(fn, a.calls, a.windows, sync), 3)
    print(json.dumps(figs))


if __name__ == "__main__":
    main()

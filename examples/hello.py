# SPDX-License-Identifier: MIT
"""The smallest PyTorch program on the card: change the device, nothing else."""
import torch

device = "neuron"  # or "cpu", or "cuda"

x = torch.ones(4, device=device) * 2
print(f"torch.ones(4, device={device!r}) * 2 = {x.cpu().tolist()} (computed on {x.device})")

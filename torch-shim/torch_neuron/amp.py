# SPDX-License-Identifier: MIT
"""Automatic mixed precision on "neuron" (torch.autocast("neuron")).

The card computes in float32 and bfloat16; autocast's operator lists are
PyTorch's own (csrc/aten/NeuronAutocast.cpp). bfloat16 is the default
autocast dtype of "neuron", so ``torch.autocast("neuron")`` needs no dtype.
"""
import torch


def get_amp_supported_dtype():
    """The dtypes torch.autocast("neuron", dtype=...) accepts."""
    return [torch.bfloat16]


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """bfloat16 is a native type of the card."""
    return True


def is_autocast_available() -> bool:
    return True


def _set_default_autocast_dtype():
    # PyTorch's default for PrivateUse1 is float16, which the card lacks.
    # The setting is per thread: this is the importing (main) thread's.
    torch.set_autocast_dtype("neuron", torch.bfloat16)

# SPDX-License-Identifier: MIT
"""Automatic mixed precision on "neuron".

torch.autocast("neuron") takes bfloat16 (the default) and float16; its
operator lists are PyTorch's own (csrc/aten/Autocast.cpp).
torch.amp.GradScaler("neuron") scales float16 losses: its two operators,
_amp_foreach_non_finite_check_and_unscale_ and _amp_update_scale_, run on
the card (csrc/aten/AmpKernels.cpp) and found_inf never leaves it.
"""
import torch
from torch.amp.grad_scaler import GradScaler, OptState


def get_amp_supported_dtype():
    """The dtypes torch.autocast("neuron", dtype=...) accepts."""
    return [torch.float16, torch.bfloat16]


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """bfloat16 is a native type of the card."""
    return True


def is_autocast_available() -> bool:
    return True


def _set_default_autocast_dtype():
    # PyTorch's default for PrivateUse1 is float16; bfloat16 needs no loss
    # scaling and is the card's first type, so it is "neuron"'s default.
    # The setting is per thread: this is the importing (main) thread's.
    torch.set_autocast_dtype("neuron", torch.bfloat16)


# GradScaler.unscale_ computes 1 / scale as scale.double().reciprocal()
# .float(); float64 is not a type of the card. The card computes every
# elementwise function in double and rounds once to the destination type
# (docs/hardware.md, "Numerics"), so reciprocal() of the float32 scale on the
# card is that same float32 value, bit for bit: for "neuron" unscale_ takes
# it from there, and does otherwise what PyTorch's unscale_ does.
_unscale_orig = GradScaler.unscale_


def _unscale_(self, optimizer):
    if not self._enabled or self._device != "neuron":
        return _unscale_orig(self, optimizer)
    self._check_scale_growth_tracker("unscale_")
    state = self._per_optimizer_states[id(optimizer)]
    if state["stage"] is OptState.UNSCALED:
        raise RuntimeError("unscale_() has already been called on this "
                           "optimizer since the last update().")
    if state["stage"] is OptState.STEPPED:
        raise RuntimeError("unscale_() is being called after step().")
    inv_scale = torch.reciprocal(self._scale)
    found_inf = torch.zeros((), dtype=torch.float32, device=self._scale.device)
    state["found_inf_per_device"] = self._unscale_grads_(
        optimizer, inv_scale, found_inf, False)
    state["stage"] = OptState.UNSCALED


_unscale_.__doc__ = _unscale_orig.__doc__


def _install_grad_scaler():
    if GradScaler.unscale_ is not _unscale_:
        GradScaler.unscale_ = _unscale_

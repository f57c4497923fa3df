# SPDX-License-Identifier: MIT
"""Random numbers of the neuron cards (torch.neuron.manual_seed, ...).

Each card has a default generator (Philox4x32-10: a seed and a counter
offset) and the card draws the numbers itself. ``torch.manual_seed(s)``
seeds every card through manual_seed_all, so the same seed gives the same
numbers, run after run and on every card. A generator's state is a CPU
uint8 tensor (seed and offset) that torch.save can keep in a checkpoint.
"""
from typing import Iterable, List, Union

import torch

_U64 = 0xFFFF_FFFF_FFFF_FFFF

__all__ = ["default_generators", "manual_seed", "manual_seed_all", "seed", "seed_all", "initial_seed",
           "get_rng_state", "set_rng_state", "get_rng_state_all",
           "set_rng_state_all"]


def _count() -> int:
    return int(torch.ops.neuron.device_count())


# Each card's default generator, as torch.Generator objects (by index).
default_generators = tuple(torch.ops.neuron.default_generator(i) for i in range(_count()))


def _index(device) -> int:
    if isinstance(device, int):
        return device
    device = torch.device(device)
    if device.type != "neuron":
        raise ValueError(f"expected a neuron device, got {device}")
    return int(torch.ops.neuron.current_device()) if device.index is None else device.index


def _as_int64(seed) -> int:
    """@seed as the 64 bits the ops carry in an int64: a negative seed is
    its two's complement, as the CPU generator takes it."""
    seed = int(seed)
    if not -0x8000_0000_0000_0000 <= seed <= _U64:
        raise RuntimeError(f"seed {seed} is out of range: a seed must be within "
                           "[-0x8000_0000_0000_0000, 0xffff_ffff_ffff_ffff]")
    return seed - (1 << 64) if seed >= 1 << 63 else seed


def manual_seed(seed: int) -> None:
    """Seed the current card's generator (nothing without a card)."""
    if _count() > 0:
        torch.ops.neuron.rng_manual_seed(_index("neuron"), _as_int64(seed))


def manual_seed_all(seed: int) -> None:
    """Seed every card's generator with @seed (torch.manual_seed calls this)."""
    s = _as_int64(seed)
    for i in range(_count()):
        torch.ops.neuron.rng_manual_seed(i, s)


def seed() -> None:
    """Seed the current card's generator with a non-deterministic number."""
    if _count() > 0:
        torch.ops.neuron.rng_seed(_index("neuron"))


def seed_all() -> None:
    """Seed every card's generator with one non-deterministic number."""
    n = _count()
    if n > 0:
        s = int(torch.ops.neuron.rng_seed(0))
        for i in range(1, n):
            torch.ops.neuron.rng_manual_seed(i, s)


def initial_seed() -> int:
    """The seed of the current card's generator."""
    return int(torch.ops.neuron.rng_initial_seed(_index("neuron"))) & _U64


def get_rng_state(device: Union[int, str, torch.device] = "neuron") -> torch.Tensor:
    """The generator state of @device's card (a CPU torch.ByteTensor)."""
    return torch.ops.neuron.rng_get_state(_index(device))


def set_rng_state(new_state: torch.Tensor,
                  device: Union[int, str, torch.device] = "neuron") -> None:
    """Restore a state get_rng_state() returned (of any neuron card)."""
    torch.ops.neuron.rng_set_state(_index(device), new_state)


def get_rng_state_all() -> List[torch.Tensor]:
    """The generator states of all cards, by index."""
    return [get_rng_state(i) for i in range(_count())]


def set_rng_state_all(new_states: Iterable[torch.Tensor]) -> None:
    """Restore the states get_rng_state_all() returned."""
    for i, state in enumerate(new_states):
        set_rng_state(state, i)

# SPDX-License-Identifier: MIT
"""``module.to("neuron")`` keeps each Parameter object, as ``.cuda()`` does.

``nn.Module._apply`` changes a parameter in place (``param.data = new``)
only when the old and the new tensor have "compatible shallow-copy types",
and PyTorch 2.6 counts only its built-in devices as such: moving between
the CPU and a PrivateUse1 device makes a *new* Parameter per module instead.
Two things then break without an error:

- tied weights (GPT-2's head and embedding, one Parameter in two modules)
  become two Parameters, each module getting its own copy, so the model
  trains as an untied one and its losses differ from the CPU's;
- an optimizer made before ``model.to("neuron")`` keeps the old CPU
  Parameters and never updates the model.

For a move between the CPU and neuron, ``_apply`` here uses PyTorch's own
tensor swapping (``torch.__future__.set_swap_module_params_on_conversion``,
``torch.utils.swap_tensors``), which keeps every Parameter object and so
every tie and every reference. Swapping needs each Parameter referenced
from Python only (no autograd graph or weak reference holding it, e.g. an
output of the model still alive); when one is not, the move makes new
Parameters as PyTorch does, and then restores the ties: a Parameter that
was shared before the move is shared after it (an optimizer made before
the move must then be made again, as the PyTorch default is for every
PrivateUse1 device). Other conversions are left as they are.
"""
import threading
import weakref

import torch

_state = threading.local()


def _first_tensor(module):
    for m in module.modules():
        for t in list(m._parameters.values()) + list(m._buffers.values()):
            if t is not None:
                return t
    return None


def _moves_to_or_from_neuron(module, fn):
    """Whether @fn moves @module's tensors between neuron and another
    device: tried on one tensor (a copy of it, discarded)."""
    t = _first_tensor(module)
    if t is None:
        return False
    with torch.no_grad():
        r = fn(t)
    kinds = {t.device.type, getattr(r, "device", t.device).type}
    return "neuron" in kinds and len(kinds) > 1


def _swappable(module):
    """Whether torch.utils.swap_tensors can swap every Parameter (and its
    gradient) of @module: nothing but its Python object refers to it."""
    for p in module.parameters():
        if weakref.getweakrefs(p) or p._use_count() > 1:
            return False
        g = p.grad
        if g is not None and (weakref.getweakrefs(g) or g._use_count() > 2):
            return False  # 2: p's gradient slot, and g here
    return True


def _apply_keeping_ties(orig, module, fn, recurse):
    """PyTorch's _apply (new Parameters), then each Parameter that several
    places shared before is shared again: the first new one everywhere."""
    where = {}
    for m in module.modules():
        for name, p in m._parameters.items():
            if p is not None:
                where.setdefault(id(p), []).append((m, name))
    out = orig(module, fn, recurse)
    for places in where.values():
        m0, n0 = places[0]
        for m, name in places[1:]:
            m._parameters[name] = m0._parameters[n0]
    return out


def _install():
    orig = torch.nn.Module._apply

    def _apply(self, fn, recurse=True):
        if getattr(_state, "active", False) or \
                torch.__future__.get_swap_module_params_on_conversion() or \
                not _moves_to_or_from_neuron(self, fn):
            return orig(self, fn, recurse)
        _state.active = True
        try:
            if not _swappable(self):
                return _apply_keeping_ties(orig, self, fn, recurse)
            torch.__future__.set_swap_module_params_on_conversion(True)
            try:
                return orig(self, fn, recurse)
            finally:
                torch.__future__.set_swap_module_params_on_conversion(False)
        finally:
            _state.active = False

    _apply.__doc__ = orig.__doc__
    torch.nn.Module._apply = _apply

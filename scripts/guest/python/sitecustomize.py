# SPDX-License-Identifier: MIT
"""Imported by every Python process in the VM (scripts/guest/init puts this
directory on PYTHONPATH; Debian's own sitecustomize only hooks apport, which
the guest does not have).

Debian's PyTorch 2.6 is built without libuv, yet TCPStore asks for libuv by
default (use_libuv=True), and torchrun's rendezvous store and its workers'
connection to it do not pass the argument: `torchrun` fails with
"use_libuv was requested but PyTorch was build without libuv support".
PyTorch's own remedy, the environment variable USE_LIBUV=0, is read only by
init_process_group's env:// rendezvous. Here TCPStore's default follows
USE_LIBUV everywhere (an explicit use_libuv= argument still wins), when
USE_LIBUV=0 (set by the init). The change is made once torch.distributed
has been imported; nothing is imported here."""
import importlib.abc
import importlib.util
import os
import sys


def _patch_tcpstore():
    # torch.distributed's import creates torch._C._distributed_c10d: the
    # modules it imported meanwhile bound the class already; rebind them.
    c10d = getattr(sys.modules.get("torch._C"), "_distributed_c10d", None)
    base = getattr(c10d, "TCPStore", None)
    if base is None or getattr(base, "_follows_use_libuv", False):
        return

    class TCPStore(base):
        __doc__ = base.__doc__
        _follows_use_libuv = True

        def __init__(self, *args, **kwargs):
            kwargs.setdefault("use_libuv", os.environ.get("USE_LIBUV", "1") == "1")
            super().__init__(*args, **kwargs)

    TCPStore.__name__ = TCPStore.__qualname__ = "TCPStore"
    c10d.TCPStore = TCPStore
    for name, mod in list(sys.modules.items()):
        if name.startswith("torch.distributed") and getattr(mod, "TCPStore", None) is base:
            mod.TCPStore = TCPStore


class _PatchAfter(importlib.abc.Loader):
    def __init__(self, loader):
        self._loader = loader

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        _patch_tcpstore()


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != "torch.distributed":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.loader is not None:
            spec.loader = _PatchAfter(spec.loader)
        return spec


if os.environ.get("USE_LIBUV") == "0":
    sys.meta_path.insert(0, _Finder())

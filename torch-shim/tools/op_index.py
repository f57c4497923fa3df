# SPDX-License-Identifier: MIT
"""The index of the shim's operators: which file of torch-shim/csrc holds
the kernel each operator has on the card.

Every kernel the shim registers for the PrivateUse1 dispatch key (and the
AutogradPrivateUse1 fallthroughs and kernels, and the sparse tensors'
SparsePrivateUse1 and SparseCsrPrivateUse1 kernels) is read from c10's dispatcher
itself, which records the file and line of each registration, so the
index cannot miss a registration hidden in a macro. The index is
torch-shim/operators.txt, one line per operator and key:

    aten::add.Tensor  aten/BinaryOps.cpp

Usage (in the VM, with torch_neuron built):
    op_index.py            print the index as the dispatcher has it
    op_index.py --write    rewrite torch-shim/operators.txt from it
    op_index.py --check    compare: exit 1 naming every difference

tests/test_op_index.py runs the check in make check.
"""
import argparse
import os
import re
import sys

import torch
import torch_neuron  # noqa: F401  (registers the kernels)

INDEX = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                     "operators.txt")
KEYS = ("PrivateUse1", "AutogradPrivateUse1", "SparsePrivateUse1", "SparseCsrPrivateUse1")
# "PrivateUse1: registered at csrc/aten/X.cpp:300 :: (...) [ boxed unboxed ]":
# the shim is compiled from torch-shim/, so its paths start with csrc/
# (PyTorch's own with ./).
_LINE = re.compile(r"^(\w+): registered at csrc/(\S+?):\d+ ")


def registrations():
    """{(operator, key): file relative to csrc} as the dispatcher has them."""
    found = {}
    for key in KEYS:
        for op in torch._C._dispatch_get_registrations_for_dispatch_key(key):
            name = op if "::" in op else f"aten::{op}"
            for line in torch._C._dispatch_dump(name).splitlines():
                m = _LINE.match(line)
                if not m or m.group(1) != key:
                    continue
                found[(name, key)] = m.group(2)
    return found


def render(regs):
    """The index's text: sorted, the key named when it is not PrivateUse1."""
    lines = []
    for (op, key), path in sorted(regs.items()):
        suffix = "" if key == "PrivateUse1" else f" [{key}]"
        lines.append(f"{op}{suffix}  {path}")
    return "".join(line + "\n" for line in lines)


def parse(text):
    regs = {}
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        m = re.match(r"^(\S+)(?: \[(\w+)\])?\s+(\S+)$", line)
        if not m:
            raise ValueError(f"{INDEX}:{n}: not 'operator [key]  file': {line!r}")
        regs[(m.group(1), m.group(2) or "PrivateUse1")] = m.group(3)
    return regs


HEADER = ("# The shim's operators and the file of torch-shim/csrc holding each one's\n"
          "# kernel, as c10's dispatcher records them. Generated: in the VM,\n"
          "# python3 torch-shim/tools/op_index.py --write (tests/test_op_index.py\n"
          "# fails when it differs from the built shim).\n")


def differences(want, have):
    """What the built shim registers that the index does not say, and back."""
    out = []
    for k in sorted(set(want) | set(have)):
        op = k[0] if k[1] == "PrivateUse1" else f"{k[0]} [{k[1]}]"
        if k not in want:
            out.append(f"{op}: registered in {have[k]}, not in the index")
        elif k not in have:
            out.append(f"{op}: in the index ({want[k]}), not registered")
        elif want[k] != have[k]:
            out.append(f"{op}: registered in {have[k]}, the index says {want[k]}")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    have = registrations()
    if args.write:
        with open(INDEX, "w") as f:
            f.write(HEADER + render(have))
        print(f"{INDEX}: {len(have)} registrations")
        return 0
    if args.check:
        with open(INDEX) as f:
            diff = differences(parse(f.read()), have)
        for d in diff:
            print(d)
        print(f"{len(have)} registrations, {len(diff)} differences from {INDEX}")
        return 1 if diff else 0
    sys.stdout.write(render(have))
    return 0


if __name__ == "__main__":
    sys.exit(main())

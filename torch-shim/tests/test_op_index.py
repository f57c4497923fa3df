# SPDX-License-Identifier: MIT
"""torch-shim/operators.txt, the index from each operator the shim gives a
kernel to to the file that holds it, says what the built shim registers
(tools/op_index.py reads it from c10's dispatcher)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "tools"))
import op_index  # noqa: E402


def test_every_registration_is_in_the_index():
    have = op_index.registrations()
    assert len(have) > 500, f"only {len(have)} registrations found: is the dump format read?"
    with open(op_index.INDEX) as f:
        want = op_index.parse(f.read())
    diff = op_index.differences(want, have)
    assert not diff, ("torch-shim/operators.txt differs from the shim's registrations "
                      "(regenerate: python3 torch-shim/tools/op_index.py --write in the "
                      "VM):\n" + "\n".join(diff))


def test_index_names_existing_files():
    csrc = os.path.join(os.path.dirname(op_index.INDEX), "csrc")
    with open(op_index.INDEX) as f:
        files = set(op_index.parse(f.read()).values())
    missing = sorted(p for p in files if not os.path.isfile(os.path.join(csrc, p)))
    assert not missing, f"operators.txt names files that do not exist: {missing}"

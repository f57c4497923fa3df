# SPDX-License-Identifier: MIT
"""python -m torch_neuron.cuda (PROGRAM | -m MODULE) [ARG...]: run a
program written for CUDA on neuron (importing torch_neuron.cuda turned the
mapping on), as ``python PROGRAM`` or ``python -m MODULE`` would."""
import os
import runpy
import sys

import torch_neuron.cuda  # noqa: F401  (the switch)


def main(argv):
    if not argv or argv[0] in ("-h", "--help") or (argv[0] == "-m" and len(argv) < 2):
        sys.exit(__doc__)
    if argv[0] == "-m":
        sys.argv = argv[1:]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = argv
        sys.path[0] = os.path.dirname(os.path.abspath(argv[0]))  # as python PROGRAM
        runpy.run_path(argv[0], run_name="__main__")


main(sys.argv[1:])

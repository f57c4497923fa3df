# SPDX-License-Identifier: MIT
"""What `make run` shows once the driver is loaded (scripts/guest/demo): the
cards (neuron-ls), a first computation on device "neuron"
(examples/hello.py) and the MLP example training, its loss falling, in one
Python process (importing torch is the slow part under TCG), then which
operators fell back to the CPU."""
import runpy
import subprocess
import sys

# The cards first: in the warm session (make run NEURON_SESSION=1) this
# file is the command itself, forked from the interpreter that has torch
# imported already, so nothing here starts another Python.
print("$ neuron-ls", flush=True)
subprocess.run(["neuron-ls"], check=True)
print("$ python3 examples/hello.py; python3 examples/mlp.py --steps 100", flush=True)
runpy.run_path("examples/hello.py")
sys.argv = ["mlp.py", "--steps", "100"]
runpy.run_path("examples/mlp.py", run_name="__main__")
import torch_neuron  # noqa: E402 -- imported by the examples already

print("operators that fell back to the CPU:", torch_neuron.fallback_stats() or "none")

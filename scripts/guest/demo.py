# SPDX-License-Identifier: MIT
"""The PyTorch part of what `make run` shows (scripts/guest/demo): a first
computation on device "neuron" (examples/hello.py) and the MLP example
training, its loss falling, in one Python process (importing torch is the
slow part under TCG), then which operators fell back to the CPU."""
import runpy
import sys

runpy.run_path("examples/hello.py")
sys.argv = ["mlp.py", "--steps", "100"]
runpy.run_path("examples/mlp.py", run_name="__main__")
import torch_neuron  # noqa: E402 -- imported by the examples already

print("operators that fell back to the CPU:", torch_neuron.fallback_stats() or "none")

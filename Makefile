# SPDX-License-Identifier: MIT
# The two commands (see README.md):
#   make run     set everything up, boot the VM, load neuron.ko, run neuron-ls
#                and a PyTorch program on device "neuron"
#   make check   set everything up, run every test suite, print totals
# and their parts: setup qemu guest stack bench fuzz sweep shell clean; the
# warm session: up reload down; the checks beyond make check: check-full
# check-multicard check-cluster check-session stress-stall.
# Every step is idempotent; expensive outputs are cached in $(NEURON_CACHE)
# (default /var/cache/neuron-stack).
SHELL := /bin/bash
S := scripts
export NEURON_T0 := $(shell date +%s)

all: stack

setup:
	@$(S)/setup-host

qemu: setup
	@$(S)/build-qemu

guest: setup
	@$(S)/build-guest
	@$(S)/fetch-kernel-tools

# The two long setup chains run side by side (a cold run spends minutes in
# downloads and single-threaded dpkg, configure and link steps): QEMU's build,
# and the guest root followed by the stack compiled inside it.
MAKEFLAGS += --jobs=2
stack: qemu guest-stack

guest-stack: guest
	@$(S)/build-stack

# NEURON_SESSION=1: in the warm session (make up) instead of a VM of its own.
run: stack
	@if [ -n "$(NEURON_SESSION)" ]; then $(S)/vm exec -- python3 scripts/guest/demo.py; \
	else $(S)/vm run -- scripts/guest/demo; fi

# The warm session (scripts/vm-session): a VM that stays up with the driver
# loaded and torch imported; `scripts/vm exec -- CMD` runs commands in it.
up: stack
	@$(S)/vm up

# Rebuild what changed and load it into the running session.
reload: stack
	@$(S)/vm reload

down:
	@$(S)/vm down

# The session's lifecycle with the real warm interpreter: a shim change
# reloaded, a program's start-up timed (make check runs a lighter one).
check-session: stack
	@$(S)/tests/session-test --full

check: stack
	@$(S)/check

# make check with every test marked slow (make check runs a quarter of
# them, another quarter at each commit: scripts/check).
check-full: stack
	@NEURON_CHECK_SLOW=all $(S)/check

# The two-vCPU TCG timer stall, provoked (STALL_RUNS boots of STALL_MINUTES
# minutes each): no stall with qemu-patches/ applied.
STALL_RUNS ?= 3
STALL_MINUTES ?= 5
stress-stall: stack
	@$(S)/tests/stall-stress --runs $(STALL_RUNS) --minutes $(STALL_MINUTES)

# Two VMs joined by a QEMU network, 2 cards each: scripts/tests/cluster-test
# (ping, a torchrun Gloo all_reduce, first failure wins), then the DDP GPT
# example under torchrun over the 2 x 2 cards (links within a VM, TCP
# between them) against one card; then, one card a VM, the pipeline example
# with a stage on each VM, GPipe and 1F1B (scripts/guest/cluster-torchrun).
check-cluster: stack
	@$(S)/tests/cluster-test
	@$(S)/cluster --nodes 2 --cards 2 --timeout 2400 run -- \
		scripts/guest/cluster-torchrun examples/ddp.py --model gpt --steps 8 --compare
	@$(S)/cluster --nodes 2 --cards 1 --timeout 2400 run -- sh -c \
		'for s in gpipe 1f1b; do scripts/guest/cluster-torchrun examples/pp.py \
			--schedule $$s --steps 6 --compare || exit 1; done'

# On rings of 2, 3 and 4 cards: libneuron's collective tests at their full
# sizes (to 256 MiB; make check runs them to 64 MiB on 2), the torchrun DDP,
# MoE and pipeline examples, a DCP checkpoint saved on 2 cards loaded on all; then
# FSDP2 x TP on 4 cards with every pair linked (scripts/guest/check-multicard).
check-multicard: stack
	@rc=0; for n in 2 3 4; do \
		$(S)/vm --cards $$n --timeout 2400 run -- scripts/guest/check-multicard || rc=1; \
	done; \
	$(S)/vm --cards 4 --topology mesh --timeout 2400 run -- scripts/guest/check-multicard 2d || rc=1; \
	exit $$rc

bench: stack
	@$(S)/bench

# The fuzzers' long runs (10 minutes each; FUZZ_SECONDS=N to change).
fuzz: stack
	@$(S)/fuzz

# PyTorch's OpInfo and ModuleInfo samples, all of them (make check runs one
# of each); results per op and module in build/sweep-full/. SWEEP_DTYPE=
# float64 or complex64 sweeps those samples (into build/sweep-full-float64/
# or build/sweep-full-complex64/).
SWEEP_DTYPE ?= float32
sweep: stack
	@$(S)/vm --timeout 14400 run -- sh -c 'insmod /src/neuron.ko && \
		python3 /src/torch-shim/tools/sweep.py --samples 1000 --dtype $(SWEEP_DTYPE) \
		--out /src/build/sweep-full$(if $(filter float32,$(SWEEP_DTYPE)),,-$(SWEEP_DTYPE))'

shell: stack
	@$(S)/vm shell

# Kbuild's own targets for the module alone (after `make guest`).
module:
	@$(S)/chroot-run make -C /usr/src/$$(ls $$(. $(S)/lib.sh; guest_root)/usr/src | \
		grep -- '-amd64$$' | sort -V | tail -n1) M=/src W=1 modules

clean:
	rm -rf build
	rm -f neuron.ko neuron.o neuron.mod neuron.mod.c neuron.mod.o Module.symvers \
		modules.order .module-common.o
	find driver -name '*.o' -o -name '.*.cmd' | xargs rm -f
	rm -f .*.cmd

.PHONY: all setup qemu guest guest-stack stack run up reload down check check-full check-cluster check-multicard check-session stress-stall bench fuzz sweep shell module clean

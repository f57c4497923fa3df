# SPDX-License-Identifier: MIT
"""The guest's side of scripts/tests/stall-stress: make the two-vCPU TCG
timer stall as likely as possible, for SECONDS seconds.

vCPU 0 toggles the memory decoding of the last card's PCI function (its
command register's bit 1, through sysfs; the driver is not loaded), so
that QEMU maps and unmaps that card's 32-bit BAR, which lies below the
local APIC's page: each toggle is a new memory map in which the regions
above the BAR are numbered anew. vCPU 1 meanwhile sleeps 200 us at a time:
each sleep programs its local APIC timer (TMICT) and ends with a timer
interrupt and its EOI, both writes to the local APIC's page. A write that
QEMU sent to another region than the APIC stops that vCPU's timers for
ever; scripts/vm sees it (no heartbeat, or RCU stall warnings) and stops
the VM. The toggles are counted and printed each 10 s."""
import os
import sys
import time

seconds = float(sys.argv[1])
cards = sorted(d for d in os.listdir("/sys/bus/pci/devices")
               if open(f"/sys/bus/pci/devices/{d}/vendor").read().strip() == "0x1d0f")
if not cards:
    sys.exit("stall_stress: no card")
fd = os.open(f"/sys/bus/pci/devices/{cards[-1]}/config", os.O_RDWR)
command = int.from_bytes(os.pread(fd, 2, 4), "little")
if not command & 2:
    sys.exit(f"stall_stress: {cards[-1]} does not decode memory (command {command:#x})")

sleeper = os.fork()
if sleeper == 0:
    os.sched_setaffinity(0, {1})
    while True:
        time.sleep(0.0002)
os.sched_setaffinity(0, {0})
off = (command & ~2).to_bytes(2, "little")
on = command.to_bytes(2, "little")
start = last = time.monotonic()
toggles = 0
try:
    while time.monotonic() - start < seconds:
        os.pwrite(fd, off, 4)
        os.pwrite(fd, on, 4)
        toggles += 1
        if time.monotonic() - last >= 10:
            last = time.monotonic()
            print(f"stall_stress: {toggles} toggles in {last - start:.0f} s", flush=True)
finally:
    os.kill(sleeper, 9)
    os.pwrite(fd, on, 4)
print(f"stall_stress: {toggles} toggles in {time.monotonic() - start:.0f} s, no stall")

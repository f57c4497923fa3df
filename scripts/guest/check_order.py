# SPDX-License-Identifier: MIT
"""pytest plugin of scripts/guest/check (-p check_order): the tests that time
the card against the host run last, in the same pytest process as the rest
of lane A (one `import torch` fewer: 45-60 s under TCG), and wait first for
the background work (lane B with it) that shares the guest's CPUs to finish.

  NEURON_CHECK_LAST   file names (space-separated) of the tests to run last
  NEURON_CHECK_WAIT   a file whose existence means the background work ended

and for the watchdog of scripts/guest/check, in either lane:

  NEURON_CHECK_CURRENT  a file that holds the test now running and when it
                        started (seconds since the epoch)
"""
import os
import time

_last = set(os.environ.get("NEURON_CHECK_LAST", "").split())
_waited = False


def _is_last(item):
    return os.path.basename(str(item.fspath)) in _last


def pytest_collection_modifyitems(session, config, items):
    # Stable: the order within each group is pytest's own.
    items.sort(key=_is_last)


def pytest_runtest_setup(item):
    global _waited
    if _waited or not _is_last(item):
        return
    _waited = True
    wait = os.environ.get("NEURON_CHECK_WAIT")
    if not wait:
        return
    t0 = time.monotonic()
    while not os.path.exists(wait):
        time.sleep(0.5)
    reporter = item.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line(f"\n== the timed tests ({' '.join(sorted(_last))}) start: "
                            f"waited {time.monotonic() - t0:.0f} s for {wait}")


def pytest_runtest_logstart(nodeid, location):
    current = os.environ.get("NEURON_CHECK_CURRENT")
    if current:
        with open(current, "w") as f:
            f.write(f"{nodeid} {time.time():.0f}\n")


def pytest_sessionfinish(session, exitstatus):
    current = os.environ.get("NEURON_CHECK_CURRENT")
    if current and os.path.exists(current):
        os.unlink(current)

# SPDX-License-Identifier: MIT
"""pytest plugin of scripts/guest/check (-p check_order): the tests that time
the card against the host run last, in the same pytest process as the rest
of lane A (one `import torch` fewer: 45-60 s under TCG), and wait first for
the background work (lane B with it) that shares the guest's CPUs to finish.

  NEURON_CHECK_LAST   file names (space-separated) of the tests to run last
  NEURON_CHECK_WAIT   a file whose existence means the background work ended
  NEURON_CHECK_SLOW   "all", or "I/N": of the tests marked slow (model-sized
                      runs), only share I of N (0 <= I < N) runs -- a test's
                      share is a hash of its node id, the same in both lanes
                      and on every machine, so N runs of consecutive I run
                      each slow test once (scripts/check takes I from the
                      commit count; make check-full runs them all)

and for the watchdog of scripts/guest/check, in either lane:

  NEURON_CHECK_CURRENT  a file that holds the test now running and when it
                        started (seconds since the epoch)
"""
import hashlib
import os
import time

_last = set(os.environ.get("NEURON_CHECK_LAST", "").split())
_waited = False


def _is_last(item):
    return os.path.basename(str(item.fspath)) in _last


def _slow_share():
    """(I, N) from NEURON_CHECK_SLOW, or None to run every slow test."""
    value = os.environ.get("NEURON_CHECK_SLOW", "all")
    if value == "all":
        return None
    try:
        i, n = (int(v) for v in value.split("/"))
    except ValueError:
        i = n = 0
    if not 0 <= i < n:
        raise ValueError(f"NEURON_CHECK_SLOW={value!r}: expected 'all' or 'I/N', 0 <= I < N")
    return i, n


def share_of(nodeid, n):
    return int.from_bytes(hashlib.sha256(nodeid.encode()).digest()[:8], "big") % n


def pytest_collection_modifyitems(session, config, items):
    share = _slow_share()
    if share is not None:
        slow = [it for it in items if it.get_closest_marker("slow")]
        skip = [it for it in slow if share_of(it.nodeid, share[1]) != share[0]]
        if skip:
            config.hook.pytest_deselected(items=skip)
            ids = {id(it) for it in skip}
            items[:] = [it for it in items if id(it) not in ids]
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line(
                f"== slow tests: share {share[0]} of {share[1]}, {len(slow) - len(skip)} of "
                f"{len(slow)} run (NEURON_CHECK_SLOW={share[0]}/{share[1]}; "
                "make check-full runs every one)")
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

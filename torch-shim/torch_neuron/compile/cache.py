# SPDX-License-Identifier: MIT
"""The persistent compile cache: one file per compiled kernel.

Directory: $TORCH_NEURON_CACHE_DIR, else $XDG_CACHE_HOME/torch_neuron, else
~/.cache/torch_neuron. An entry is named by its key (a sha256 over the
graph's code and constants, the concrete input signature, the ISA version,
the shim's version and the compile flags) and holds

    MAGIC | sha256(payload) | payload
    payload = u32 length of the JSON | JSON metadata | nrn_graph_serialize() blob

The JSON carries the key, versions and the output plan. A file whose magic,
checksum, JSON or metadata does not match is corrupt or stale: it is
deleted and counted, never loaded (libneuron checks the blob once more when
it deserializes it). Entries are written to a temporary file and renamed,
so a reader never sees half an entry.
"""
import hashlib
import json
import logging
import os
import struct
import tempfile

from . import stats

log = logging.getLogger("torch_neuron.compile")

MAGIC = b"TNGRAPH1"
FORMAT = 1


def directory():
    d = os.environ.get("TORCH_NEURON_CACHE_DIR")
    if d:
        return d
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "torch_neuron")


def enabled():
    return os.environ.get("TORCH_NEURON_COMPILE_CACHE", "1") != "0"


def path(key):
    return os.path.join(directory(), key + ".ngraph")


def _drop(p, why):
    stats.add("cache_corrupt")
    log.warning("torch_neuron.compile: cache entry %s is %s: deleted, rebuilding", p, why)
    try:
        os.unlink(p)
    except OSError:
        pass


def load(key, meta):
    """(metadata, blob) of entry @key if it exists and is sound, else None.
    @meta: the fields the entry's metadata must match (versions...)."""
    p = path(key)
    try:
        with open(p, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return None
    except OSError as e:
        log.debug("cache entry %s unreadable: %s", p, e)
        return None
    head = len(MAGIC) + 32
    if len(data) < head + 4 or data[:len(MAGIC)] != MAGIC:
        _drop(p, "not a cache entry (bad magic or truncated)")
        return None
    payload = data[head:]
    if hashlib.sha256(payload).digest() != data[len(MAGIC):head]:
        _drop(p, "corrupt (checksum mismatch)")
        return None
    (n,) = struct.unpack_from("<I", payload)
    try:
        got = json.loads(payload[4:4 + n].decode())
    except (ValueError, UnicodeDecodeError):
        _drop(p, "corrupt (metadata unreadable)")
        return None
    want = dict(meta, key=key, format=FORMAT)
    bad = [k for k, v in want.items() if got.get(k) != v]
    if bad:
        _drop(p, "stale (" + ", ".join(f"{k}: {got.get(k)!r} != {want[k]!r}" for k in bad) + ")")
        return None
    return got, payload[4 + n:]


def drop(key, why):
    """Entry @key failed to load further on (libneuron refused the blob)."""
    _drop(path(key), why)


def store(key, meta, blob):
    """Write entry @key atomically; a failure to write is logged, not raised."""
    d = directory()
    js = json.dumps(dict(meta, key=key, format=FORMAT), sort_keys=True).encode()
    payload = struct.pack("<I", len(js)) + js + bytes(blob)
    try:
        os.makedirs(d, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=d)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(MAGIC + hashlib.sha256(payload).digest() + payload)
            os.replace(tmp, path(key))
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError as e:
        log.warning("torch_neuron.compile: cannot write the cache entry in %s: %s", d, e)
        return
    stats.add("cache_writes")

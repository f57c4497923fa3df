# SPDX-License-Identifier: MIT
# The guest side of scripts/tests/cluster-test, run on every node of a
# scripts/cluster run:
#   python3 cluster-smoke.py ping        ICMP echo to every other node
#   torchrun ... cluster-smoke.py allreduce
#                                        a Gloo all_reduce across the nodes
# Each check prints one "check NAME: ok" or "check NAME: FAILED ..." line
# and a failure exits non-zero.
import os
import socket
import struct
import sys
import time


def checksum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack(f"!{len(b) // 2}H", b))
    s = (s >> 16) + (s & 0xFFFF)
    s += s >> 16
    return ~s & 0xFFFF


def echo(sock, addr, ident, seq, timeout):
    payload = b"neuron-cluster" + struct.pack("!d", time.time())
    hdr = struct.pack("!BBHHH", 8, 0, 0, ident, seq)
    pkt = struct.pack("!BBHHH", 8, 0, checksum(hdr + payload), ident, seq) + payload
    sock.sendto(pkt, (addr, 0))
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        sock.settimeout(max(end - time.monotonic(), 0.01))
        try:
            data, src = sock.recvfrom(2048)
        except socket.timeout:
            break
        ihl = (data[0] & 0xF) * 4
        typ, _, _, rid, rseq = struct.unpack("!BBHHH", data[ihl:ihl + 8])
        if src[0] == addr and typ == 0 and rid == ident and rseq == seq \
                and data[ihl + 8:] == payload:
            return True
    return False


def ping():
    rank, nnodes = int(os.environ["NODE_RANK"]), int(os.environ["NNODES"])
    ok = True
    with socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP) as s:
        for peer in range(nnodes):
            if peer == rank:
                continue
            addr = socket.gethostbyname(f"node{peer}")
            # The peer may still be booting: wait for its first reply (60 s),
            # then 3 more echoes must all come back.
            end, seq = time.monotonic() + 60, 0
            while not echo(s, addr, 0x4E00 + rank, seq, 1.0):
                seq += 1
                if time.monotonic() > end:
                    break
            replies = sum(echo(s, addr, 0x4E00 + rank, seq + 1 + k, 2.0) for k in range(3))
            good = replies == 3
            ok &= good
            print(f"check ping node{peer} ({addr}): "
                  + ("ok" if good else f"FAILED ({replies} of 3 echoes answered)"), flush=True)
    return ok


def allreduce():
    import torch
    import torch.distributed as dist
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    n = 1 << 20
    # Rank r contributes (r + 1) * i, exact in float64 for these sizes.
    x = torch.arange(n, dtype=torch.float64) * (rank + 1)
    dist.all_reduce(x)
    want = torch.arange(n, dtype=torch.float64) * (world * (world + 1) / 2)
    good = torch.equal(x, want)
    names = [None] * world
    dist.all_gather_object(names, socket.gethostname())
    dist.destroy_process_group()
    good = good and len(set(names)) == int(os.environ["NNODES"])
    print(f"check all_reduce over {world} ranks on {sorted(names)}: "
          + ("ok" if good else f"FAILED (max error {(x - want).abs().max().item()})"),
          flush=True)
    return good


if __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 else ""
    if what not in ("ping", "allreduce"):
        sys.exit("usage: cluster-smoke.py ping|allreduce")
    sys.exit(0 if (ping() if what == "ping" else allreduce()) else 1)

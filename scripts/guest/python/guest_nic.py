# SPDX-License-Identifier: MIT
"""Bring up the VM's one NIC with an address, as `ip addr add` and `ip link
set up` would: the guest root has no iproute2, so with the SIOCSIF* ioctls.
Used by scripts/guest/cluster-node (the cluster's network) and
scripts/guest/session (QEMU's user network of the warm session).

  python3 -m guest_nic ADDR/PREFIX     load virtio_net, address the NIC
"""
import fcntl
import ipaddress
import os
import socket
import struct
import subprocess
import sys
import time

SIOCGIFFLAGS, SIOCSIFFLAGS = 0x8913, 0x8914
SIOCSIFADDR, SIOCSIFNETMASK = 0x8916, 0x891C
IFF_UP = 0x1


def ifreq_addr(name, addr):
    sin = struct.pack("HH4s8x", socket.AF_INET, 0, socket.inet_aton(addr))
    return struct.pack("16s16s", name.encode(), sin)


def link_up(sock, name):
    req = struct.pack("16sH14x", name.encode(), 0)
    flags = struct.unpack("16sH14x", fcntl.ioctl(sock, SIOCGIFFLAGS, req))[1]
    fcntl.ioctl(sock, SIOCSIFFLAGS, struct.pack("16sH14x", name.encode(), flags | IFF_UP))


def find_nic():
    """The kernel's own name of the NIC (eth0: no udev in the VM), once the
    driver has probed it; None if none appears within 5 s."""
    for _ in range(100):
        nics = sorted(n for n in os.listdir("/sys/class/net") if n != "lo")
        if nics:
            return nics[0]
        time.sleep(0.05)
    return None


def up(iface_addr):
    """Give the NIC @iface_addr ("10.0.2.15/24") and bring it up; its name.
    ValueError for a bad address, RuntimeError for no NIC."""
    net = ipaddress.IPv4Interface(iface_addr)
    subprocess.run(["modprobe", "virtio_net"], check=True)
    nic = find_nic()
    if nic is None:
        raise RuntimeError("no network interface appeared after loading virtio_net")
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        fcntl.ioctl(s, SIOCSIFADDR, ifreq_addr(nic, str(net.ip)))
        fcntl.ioctl(s, SIOCSIFNETMASK, ifreq_addr(nic, str(net.netmask)))
        link_up(s, nic)
    return nic


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    try:
        print(f"guest_nic: {sys.argv[1]} on {up(sys.argv[1])}", file=sys.stderr)
    except (ValueError, RuntimeError, OSError, subprocess.CalledProcessError) as e:
        sys.exit(f"guest_nic: {e}")

# Devices of the neuron test VM's QEMU (configs/devices/x86_64-softmmu/neuron.mak):
# a q35 machine, virtio-fs for the root and the repo, PCIe root ports for
# hot-plug, and the trainium card.
CONFIG_Q35=y
CONFIG_VIRTIO_PCI=y
CONFIG_VHOST_USER_FS=y
CONFIG_PCIE_PORT=y
CONFIG_TRAINIUM=y
# A NIC for scripts/cluster: VMs joined by a QEMU stream network (virtio-net).
CONFIG_VIRTIO_NET=y

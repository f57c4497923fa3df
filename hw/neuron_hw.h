/* SPDX-License-Identifier: (GPL-2.0-only OR MIT) */
/*
 * The virtual Trainium card's hardware interface: PCI identity, BAR0
 * register map, queue descriptors and their completion protocol.
 *
 * This is the one definition of these layouts. It is included by the QEMU
 * device model (qemu-device/) and by the kernel driver (driver/); user space
 * never sees it. docs/hardware.md is the prose specification of the same
 * contract. All multi-byte fields are little-endian.
 */
#ifndef NEURON_HW_H
#define NEURON_HW_H

/*
 * In the kernel the little-endian fields carry sparse's __le types; the
 * device model converts with le*_to_cpu() on its side.
 */
#ifdef __KERNEL__
#include <linux/types.h>
typedef __le16 nrn_le16;
typedef __le32 nrn_le32;
typedef __le64 nrn_le64;
#else
typedef uint16_t nrn_le16;
typedef uint32_t nrn_le32;
typedef uint64_t nrn_le64;
#endif

/* ---- PCI identity ---------------------------------------------------- */

#define NRN_PCI_VENDOR_ID		0x1d0f	/* Amazon.com, Inc. */
#define NRN_PCI_DEVICE_ID		0x7e00	/* virtual Trainium (no shipping part) */
#define NRN_PCI_SUBSYS_ID		0x0001
#define NRN_PCI_REVISION		0x01
#define NRN_PCI_CLASS			0x1200	/* processing accelerator */

#define NRN_BAR_REGS			0	/* 64 KiB of 32-bit registers */
#define NRN_BAR_MEM			2	/* 64-bit prefetchable device memory */
#define NRN_BAR_MSIX			4	/* MSI-X table and PBA */
#define NRN_BAR_REGS_SIZE		0x10000

/* ---- BAR0: global registers ------------------------------------------ */

#define NRN_REG_ID			0x000	/* RO: NRN_ID_MAGIC */
#define NRN_ID_MAGIC			0x4e524e31	/* "NRN1" */
#define NRN_REG_VERSION			0x004	/* RO: model version */
#define NRN_VERSION_MAJOR(v)		(((v) >> 16) & 0xffff)
#define NRN_VERSION_MINOR(v)		((v) & 0xffff)
#define NRN_MODEL_VERSION		0x00010000	/* 1.0 */
#define NRN_REG_CAPS			0x008	/* RO: NRN_CAP_* */
#define NRN_CAP_DMA			(1u << 0)	/* DMA engine queues */
#define NRN_CAP_DMA_SGL			(1u << 1)	/* scatter-gather host operands */
#define NRN_CAP_COMPUTE			(1u << 2)	/* NeuronCores run kernels */
#define NRN_CAP_BF16			(1u << 3)
#define NRN_CAP_FAULT_INJECT		(1u << 4)	/* NRN_QREG_FAULT is live */
#define NRN_REG_QUEUES			0x00c	/* RO: queue counts */
#define NRN_QUEUES_DMA(v)		((v) & 0xff)
#define NRN_QUEUES_CORES(v)		(((v) >> 8) & 0xff)
#define NRN_REG_MEM_SIZE_LO		0x010	/* RO: device memory bytes */
#define NRN_REG_MEM_SIZE_HI		0x014
#define NRN_REG_SCRATCH			0x018	/* RW: no side effect */
#define NRN_REG_ISA_VERSION		0x01c	/* RO: see uapi/drm/neuron_isa.h */
#define NRN_REG_CTRL			0x020	/* RW */
#define NRN_CTRL_RESET			(1u << 0)	/* W1: reset the device; reads 0 */
#define NRN_REG_STATUS			0x024	/* RO */
#define NRN_STATUS_READY		(1u << 0)
#define NRN_REG_INT_STATUS		0x030	/* RW1C: bit q = queue q, NRN_INT_ERROR */
#define NRN_INT_ERROR			(1u << 31)
#define NRN_REG_INT_MASK		0x034	/* RW: 1 = masked */
#define NRN_REG_ERR_QUEUE		0x038	/* RO: queue of the last error */
#define NRN_REG_ERR_CODE		0x03c	/* RO: NRN_ERR_* of the last error */

/* ---- BAR0: per-queue registers --------------------------------------- */

/*
 * Queues 0 .. NRN_QUEUES_DMA-1 are DMA engine queues; the next
 * NRN_QUEUES_CORES are NeuronCore command queues, one per core. Queue q's
 * block starts at NRN_QREG_BASE(q) and raises MSI-X vector q; the vector
 * after the last queue is the error vector.
 */
#define NRN_MAX_QUEUES			30
#define NRN_QREG_BASE(q)		(0x1000 + (q) * 0x100)
#define NRN_QREG_RING_LO		0x00	/* RW: ring bus address, 64-byte aligned */
#define NRN_QREG_RING_HI		0x04
#define NRN_QREG_RING_SIZE		0x08	/* RW: entries, power of 2, 2..NRN_RING_MAX */
#define NRN_QREG_CTRL			0x0c	/* RW */
#define NRN_QCTRL_ENABLE		(1u << 0)	/* ring registers latched when set */
#define NRN_QCTRL_RESET			(1u << 1)	/* W1: abort and reset the queue */
#define NRN_QREG_HEAD			0x10	/* RO: next descriptor the device takes */
#define NRN_QREG_TAIL			0x14	/* RW: doorbell, next free descriptor */
#define NRN_QREG_STATUS			0x18	/* RO */
#define NRN_QSTATUS_ENABLED		(1u << 0)
#define NRN_QSTATUS_BUSY		(1u << 1)	/* a descriptor is executing */
#define NRN_QSTATUS_HALTED		(1u << 2)	/* stopped on a ring error */
#define NRN_QREG_ERROR			0x1c	/* RO: NRN_ERR_* that halted the queue */
#define NRN_QREG_DONE_LO		0x20	/* RO: descriptors completed since reset */
#define NRN_QREG_DONE_HI		0x24
#define NRN_QREG_FAULT			0x28	/* RW: test hook, NRN_FAULT_* */
#define NRN_FAULT_HANG			(1u << 0)	/* take descriptors, never finish */
#define NRN_FAULT_FAIL_NEXT		(1u << 1)	/* fail the next descriptor; self-clears */

#define NRN_RING_MAX			4096
#define NRN_RING_ALIGN			64

/* ---- Descriptors ----------------------------------------------------- */

/*
 * Every ring entry is one 64-byte descriptor. The device copies the entry
 * out of the ring before using it, executes it, then writes back
 * NRN_DESC_DONE | error code into @status (the last word of the entry) and
 * advances HEAD. If @flags has NRN_DESC_F_IRQ, it then sets the queue's bit
 * in INT_STATUS and, unless masked, signals the queue's MSI-X vector.
 */
#define NRN_DESC_SIZE			64

enum nrn_desc_op {
	NRN_OP_NOP	= 0,	/* completes at once */
	NRN_OP_COPY	= 1,	/* DMA queues: copy len bytes src -> dst */
	NRN_OP_LAUNCH	= 2,	/* core queues: run a kernel */
};

#define NRN_DESC_F_IRQ			(1u << 0)

/* Address spaces of a copy operand. */
enum nrn_space {
	NRN_SPACE_DEV	= 0,	/* addr is an offset into device memory */
	NRN_SPACE_HOST	= 1,	/* addr is a bus address, contiguous */
	NRN_SPACE_SGL	= 2,	/* addr is the bus address of nseg nrn_sg_entry */
};

/* One segment of a host scatter-gather list. */
struct nrn_sg_entry {
	nrn_le64 addr;		/* bus address */
	nrn_le64 len;		/* bytes, > 0 */
};

#define NRN_SGL_MAX_SEGS		(1u << 20)

struct nrn_copy_desc {
	uint8_t op;		/* NRN_OP_COPY */
	uint8_t flags;		/* NRN_DESC_F_* */
	uint8_t src_space;	/* enum nrn_space */
	uint8_t dst_space;
	nrn_le32 tag;		/* driver's, not interpreted */
	nrn_le64 src_addr;
	nrn_le64 dst_addr;
	nrn_le64 src_off;	/* byte offset into the operand */
	nrn_le64 dst_off;
	nrn_le64 len;		/* bytes; 0 is a no-op */
	nrn_le32 src_nseg;	/* NRN_SPACE_SGL: entries in the list */
	nrn_le32 dst_nseg;
	nrn_le32 status;	/* written by the device */
	nrn_le32 rsvd;		/* must be zero */
};

/*
 * A kernel launch. The instruction stream is @code_len bytes at @code_off in
 * device memory; operands name slots of the buffer table, @nslots
 * nrn_slot entries at bus address @table_addr in host memory.
 */
struct nrn_launch_desc {
	uint8_t op;		/* NRN_OP_LAUNCH */
	uint8_t flags;
	nrn_le16 nslots;
	nrn_le32 tag;
	nrn_le64 code_off;
	nrn_le64 code_len;
	nrn_le64 table_addr;
	nrn_le64 rsvd[3];	/* must be zero */
	nrn_le32 rsvd2;
	nrn_le32 status;
};

/* A buffer table entry: a window of device memory and what may be done. */
struct nrn_slot {
	nrn_le64 base;		/* device memory offset */
	nrn_le64 size;		/* bytes */
	nrn_le32 access;	/* NRN_ACCESS_* */
	nrn_le32 rsvd;		/* must be zero */
};

#define NRN_ACCESS_READ			(1u << 0)
#define NRN_ACCESS_WRITE		(1u << 1)
#define NRN_MAX_SLOTS			64

/* Completion status word. */
#define NRN_DESC_DONE			(1u << 31)
#define NRN_DESC_ERR(s)			((s) & 0xffff)

/* Error codes (descriptor status, QREG_ERROR, ERR_CODE). */
enum nrn_err {
	NRN_ERR_NONE		= 0,
	NRN_ERR_BAD_OP		= 1,	/* unknown or wrong-queue opcode */
	NRN_ERR_BAD_DESC	= 2,	/* reserved field set, bad space */
	NRN_ERR_DEV_RANGE	= 3,	/* device memory access out of range */
	NRN_ERR_HOST_DMA	= 4,	/* host address not backed by memory */
	NRN_ERR_BAD_SGL		= 5,	/* malformed scatter-gather list */
	NRN_ERR_BAD_SLOT	= 6,	/* operand names a missing slot */
	NRN_ERR_ACCESS		= 7,	/* slot access rights violated */
	NRN_ERR_SLOT_RANGE	= 8,	/* operand outside its slot */
	NRN_ERR_BAD_INSN	= 9,	/* malformed instruction */
	NRN_ERR_INJECTED	= 10,	/* NRN_FAULT_FAIL_NEXT */
	NRN_ERR_ABORTED		= 11,	/* queue or device reset while running */
	NRN_ERR_RING		= 12,	/* ring base/size invalid or unreadable */
};

_Static_assert(sizeof(struct nrn_copy_desc) == NRN_DESC_SIZE, "copy descriptor size");
_Static_assert(sizeof(struct nrn_launch_desc) == NRN_DESC_SIZE, "launch descriptor size");
_Static_assert(sizeof(struct nrn_sg_entry) == 16, "sg entry size");
_Static_assert(sizeof(struct nrn_slot) == 24, "slot size");

#endif /* NEURON_HW_H */

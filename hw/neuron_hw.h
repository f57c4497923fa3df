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
 * Both sides build on Linux and take the fixed-width and little-endian
 * types (__u8, __le32, ...) from <linux/types.h>; BIT() comes from the
 * kernel's <linux/bits.h> or QEMU's "qemu/bitops.h".
 */
#include <linux/types.h>
#ifdef __KERNEL__
#include <linux/bits.h>
#include <linux/build_bug.h>
#include <linux/stddef.h>
#include <drm/neuron_card.h>
#else
/* QEMU: the device model and its qtest. */
#include <assert.h>
#include <stddef.h>
#include "qemu/bitops.h"
#include "uapi/drm/neuron_card.h"
#endif

/* ---- PCI identity ---------------------------------------------------- */

#define NHW_PCI_VENDOR_ID		0x1d0f	/* Amazon.com, Inc. */
#define NHW_PCI_DEVICE_ID		0x7e00	/* virtual Trainium (no shipping part) */
#define NHW_PCI_SUBSYS_ID		0x0001
#define NHW_PCI_REVISION		0x01
#define NHW_PCI_CLASS			0x1200	/* processing accelerator */

#define NHW_BAR_REGS			0	/* 64 KiB of 32-bit registers */
#define NHW_BAR_MEM			2	/* 64-bit prefetchable device memory */
#define NHW_BAR_MSIX			4	/* MSI-X table and PBA */
#define NHW_BAR_REGS_SIZE		0x10000

/* ---- BAR0: global registers ------------------------------------------ */

#define NHW_REG_ID			0x000	/* RO: NHW_ID_MAGIC */
#define NHW_ID_MAGIC			0x4e524e31	/* "NRN1" */
#define NHW_REG_VERSION			0x004	/* RO: model version */
#define NHW_VERSION_MAJOR(v)		(((v) >> 16) & 0xffff)
#define NHW_VERSION_MINOR(v)		((v) & 0xffff)
#define NHW_MODEL_VERSION		0x00010001	/* 1.1: links */
#define NHW_REG_CAPS			0x008	/* RO: NHW_CAP_* */
#define NHW_CAP_DMA			BIT(0)	/* DMA engine queues */
#define NHW_CAP_DMA_SGL			BIT(1)	/* scatter-gather host operands */
#define NHW_CAP_COMPUTE			BIT(2)	/* NeuronCores run kernels */
#define NHW_CAP_BF16			BIT(3)
#define NHW_CAP_FAULT_INJECT		BIT(4)	/* NHW_QREG_FAULT is live */
#define NHW_CAP_IRQ_AT			BIT(5)	/* NHW_QREG_IRQ_AT */
#define NHW_CAP_LINK			BIT(6)	/* card-to-card links, NHW_OP_LINK */
#define NHW_CAP_AFTER			BIT(7)	/* NHW_DESC_F_AFTER */
#define NHW_REG_QUEUES			0x00c	/* RO: queue counts */
#define NHW_QUEUES_DMA(v)		((v) & 0xff)
#define NHW_QUEUES_CORES(v)		(((v) >> 8) & 0xff)
#define NHW_QUEUES_LINKS(v)		(((v) >> 16) & 0xff)
#define NHW_REG_MEM_SIZE_LO		0x010	/* RO: device memory bytes */
#define NHW_REG_MEM_SIZE_HI		0x014
#define NHW_REG_SCRATCH			0x018	/* RW: no side effect */
#define NHW_REG_ISA_VERSION		0x01c	/* RO: NISA_ISA_VERSION of isa/neuron_isa.h */
#define NHW_REG_CTRL			0x020	/* RW */
#define NHW_CTRL_RESET			BIT(0)	/* W1: reset the device; reads 0 */
#define NHW_REG_STATUS			0x024	/* RO */
#define NHW_STATUS_READY		BIT(0)
#define NHW_REG_INT_STATUS		0x030	/* RW1C: bit q = queue q, NHW_INT_ERROR */
#define NHW_INT_ERROR			BIT(31)
#define NHW_REG_INT_MASK		0x034	/* RW: 1 = masked */
#define NHW_REG_ERR_QUEUE		0x038	/* RO: queue of the last error */
#define NHW_REG_ERR_CODE		0x03c	/* RO: NISA_ERR_* of the last error */

/*
 * Links (docs/hardware.md "Links"): the cards of one fabric are joined by
 * point-to-point links; link l's DMA engine is queue DMA + cores + l and
 * writes into the device memory of the card at the link's other end.
 */
#define NHW_REG_FABRIC			0x040	/* RO: 0 when in no fabric */
#define NHW_FABRIC_RANK(v)		((v) & 0xff)	/* this card's rank */
#define NHW_FABRIC_SIZE(v)		(((v) >> 8) & 0xff)	/* ranks in it */
#define NHW_FABRIC_ID(v)		(((v) >> 16) & 0xffff)	/* its id, non-zero */
#define NHW_MAX_LINKS			6
#define NHW_REG_LINK(l)			(0x080 + (l) * 4)	/* RO: link l */
#define NHW_LINK_PEER(v)		((v) & 0xff)	/* rank at the other end */
#define NHW_LINK_UP			BIT(31)	/* that card is present */

/* ---- BAR0: per-queue registers --------------------------------------- */

/*
 * Queues 0 .. NHW_QUEUES_DMA-1 are DMA engine queues; the next
 * NHW_QUEUES_CORES are NeuronCore command queues, one per core, and the
 * next NHW_QUEUES_LINKS the link engines, one per link. Queue q's
 * block starts at NHW_QREG_BASE(q) and raises MSI-X vector q; the vector
 * after the last queue is the error vector.
 */
#define NHW_MAX_QUEUES			30
#define NHW_QREG_BASE(q)		(0x1000 + (q) * 0x100)
#define NHW_QREG_RING_LO		0x00	/* RW: ring bus address, 64-byte aligned */
#define NHW_QREG_RING_HI		0x04
#define NHW_QREG_RING_SIZE		0x08	/* RW: entries, power of 2, 2..NHW_RING_MAX */
#define NHW_QREG_CTRL			0x0c	/* RW */
#define NHW_QCTRL_ENABLE		BIT(0)	/* ring registers latched when set */
#define NHW_QCTRL_RESET			BIT(1)	/* W1: abort and reset the queue */
#define NHW_QREG_HEAD			0x10	/* RO: next descriptor the device takes */
#define NHW_QREG_TAIL			0x14	/* RW: doorbell, next free descriptor */
#define NHW_QREG_STATUS			0x18	/* RO */
#define NHW_QSTATUS_ENABLED		BIT(0)
#define NHW_QSTATUS_BUSY		BIT(1)	/* a descriptor is executing */
#define NHW_QSTATUS_HALTED		BIT(2)	/* stopped on a ring error */
#define NHW_QSTATUS_IRQ_ARMED		BIT(3)	/* IRQ_AT is waiting for DONE */
#define NHW_QREG_ERROR			0x1c	/* RO: NISA_ERR_* that halted the queue */
#define NHW_QREG_DONE_LO		0x20	/* RO: descriptors completed since reset */
#define NHW_QREG_DONE_HI		0x24
#define NHW_QREG_FAULT			0x28	/* RW: test hook, NHW_FAULT_* */
#define NHW_QREG_IRQ_AT			0x2c	/* RW: one-shot interrupt at DONE_LO */
#define NHW_FAULT_HANG			BIT(0)	/* take descriptors, never finish */
#define NHW_FAULT_FAIL_NEXT		BIT(1)	/* fail the next descriptor; self-clears */
#define NHW_FAULT_STUCK			BIT(2)	/* queue reset does nothing: device reset needed */

#define NHW_RING_MAX			4096
#define NHW_RING_ALIGN			64

/* ---- Descriptors ----------------------------------------------------- */

/*
 * Every ring entry is one 64-byte descriptor. The device copies the entry
 * out of the ring before using it, executes it, then writes back
 * NHW_DESC_DONE | error code into @status (the last word of the entry) and
 * advances HEAD. If @flags has NHW_DESC_F_IRQ, it then sets the queue's bit
 * in INT_STATUS and, unless masked, signals the queue's MSI-X vector. So it
 * does, once, when DONE_LO reaches the value last written to IRQ_AT: an
 * interrupt asked for after the descriptors were queued.
 */
#define NHW_DESC_SIZE			64
#define NHW_DESC_STATUS_OFF		60

enum nhw_desc_op {
	NHW_OP_NOP	= 0,	/* completes at once */
	NHW_OP_COPY	= 1,	/* DMA queues: copy len bytes src -> dst */
	NHW_OP_LAUNCH	= 2,	/* core queues: run a kernel */
	NHW_OP_LINK	= 3,	/* link queues: copy/reduce into the peer's memory */
};

#define NHW_DESC_F_IRQ			BIT(0)
/*
 * Runs only if the descriptor the queue completed before it did so without
 * error; otherwise completes at once, not run, with NHW_DESC_SKIPPED and
 * that descriptor's error code (a queue reset or ENABLE forgets it).
 */
#define NHW_DESC_F_AFTER		BIT(1)

/* Address spaces of a copy operand. */
enum nhw_space {
	NHW_SPACE_DEV	= 0,	/* addr is an offset into device memory */
	NHW_SPACE_HOST	= 1,	/* addr is a bus address, contiguous */
	NHW_SPACE_SGL	= 2,	/* addr is the bus address of nseg nhw_sg_entry */
};

/* One segment of a host scatter-gather list. */
struct nhw_sg_entry {
	__le64 addr;		/* bus address */
	__le64 len;		/* bytes, > 0 */
};

#define NHW_SGL_MAX_SEGS		BIT(20)

struct nhw_copy_desc {
	__u8 op;		/* NHW_OP_COPY */
	__u8 flags;		/* NHW_DESC_F_* */
	__u8 src_space;	/* enum nhw_space */
	__u8 dst_space;
	__le32 tag;		/* driver's, not interpreted */
	__le64 src_addr;
	__le64 dst_addr;
	__le64 src_off;	/* byte offset into the operand */
	__le64 dst_off;
	__le64 len;		/* bytes; 0 is a no-op */
	__le32 src_nseg;	/* NHW_SPACE_SGL: entries in the list */
	__le32 dst_nseg;
	__le32 rsvd;		/* must be zero */
	__le32 status;	/* written by the device */
};

/*
 * A kernel launch. The instruction stream (the card's instruction set,
 * isa/neuron_isa.h) is @code_len bytes at @code_off in device memory;
 * operands name slots of the buffer table, @nslots nhw_slot entries at bus
 * address @table_addr in host memory.
 *
 * @err_insn is written back by the device, before @status: the index in
 * the kernel (0 = the first instruction) of the instruction that failed,
 * or NHW_INSN_NONE when no instruction did (success, or an error of the
 * descriptor, its table or the fault hook). Its value on submission is
 * ignored.
 */
struct nhw_launch_desc {
	__u8 op;		/* NHW_OP_LAUNCH */
	__u8 flags;
	__le16 nslots;
	__le32 tag;
	__le64 code_off;
	__le64 code_len;
	__le64 table_addr;
	__le64 rsvd[3];	/* must be zero */
	__le32 err_insn;	/* written by the device */
	__le32 status;
};

#define NHW_DESC_ERR_INSN_OFF		56
#define NHW_INSN_NONE			0xffffffffu

/*
 * A link copy: @len bytes from this card's device memory at @src_off to
 * the link peer's device memory at @dst_off, stored (@reduce
 * NISA_REDUCE_NONE, @dtype 0) or combined with what is there (another
 * enum nisa_link_reduce; @dtype NISA_F32, NISA_BF16 or NISA_F16, @len and both
 * offsets multiples of its size). A peer that is absent or goes away
 * fails it with NISA_ERR_PEER.
 */
struct nhw_link_desc {
	__u8 op;		/* NHW_OP_LINK */
	__u8 flags;
	__u8 reduce;		/* enum nisa_link_reduce */
	__u8 dtype;		/* enum nisa_dtype when reducing, else 0 */
	__le32 tag;
	__le64 src_off;		/* this card's device memory */
	__le64 dst_off;		/* the peer's device memory */
	__le64 len;		/* bytes; 0 completes at once */
	__le64 rsvd[3];	/* must be zero */
	__le32 rsvd2;
	__le32 status;
};

/* A ring entry, whichever its opcode. */
union nhw_desc {
	struct {
		__u8 op;
		__u8 flags;
	};
	struct nhw_copy_desc copy;
	struct nhw_launch_desc launch;
	struct nhw_link_desc link;
};

/* A buffer table entry: a window of device memory and what may be done. */
struct nhw_slot {
	__le64 base;		/* device memory offset */
	__le64 size;		/* bytes */
	__le32 access;	/* NISA_ACCESS_* */
	__le32 rsvd;		/* must be zero */
};

/* Access bits: NISA_ACCESS_READ, NISA_ACCESS_WRITE of the ISA header. */
#define NHW_MAX_SLOTS			64

/* Completion status word. */
#define NHW_DESC_DONE			BIT(31)
#define NHW_DESC_SKIPPED		BIT(30)	/* NHW_DESC_F_AFTER: not run */
#define NHW_DESC_ERR(s)			((s) & 0xffff)

/* Error codes: enum nisa_err, in the ISA header (user space sees them too). */

static_assert(sizeof(struct nhw_copy_desc) == NHW_DESC_SIZE, "copy descriptor size");
static_assert(sizeof(struct nhw_launch_desc) == NHW_DESC_SIZE, "launch descriptor size");
static_assert(sizeof(struct nhw_link_desc) == NHW_DESC_SIZE, "link descriptor size");
static_assert(sizeof(union nhw_desc) == NHW_DESC_SIZE, "descriptor size");
static_assert(sizeof(struct nhw_sg_entry) == 16, "sg entry size");
/* The status word is the last word of every descriptor. */
static_assert(offsetof(struct nhw_copy_desc, status) == NHW_DESC_STATUS_OFF,
	      "copy descriptor status");
static_assert(offsetof(struct nhw_launch_desc, status) == NHW_DESC_STATUS_OFF,
	      "launch descriptor status");
static_assert(offsetof(struct nhw_link_desc, status) == NHW_DESC_STATUS_OFF,
	      "link descriptor status");
static_assert(offsetof(struct nhw_launch_desc, err_insn) == NHW_DESC_ERR_INSN_OFF,
	      "launch descriptor err_insn");
static_assert(sizeof(struct nhw_slot) == 24, "slot size");

#endif /* NEURON_HW_H */

/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR MIT) */
/*
 * What the driver and user space share about the card beyond the ioctls:
 * the element types, the card's error codes (a failed job's
 * @device_error), the reductions of link copies, a kernel's access rights
 * on its buffers, and the size and number of instructions of a kernel.
 * The instruction encoding itself is not here: it is a contract between
 * libneuron and the device (isa/neuron_isa.h, docs/hardware.md), and the
 * driver does not interpret it. Included by neuron_accel.h, by the
 * hardware interface (hw/neuron_hw.h) and by the ISA.
 */
#ifndef __UAPI_DRM_NEURON_CARD_H__
#define __UAPI_DRM_NEURON_CARD_H__

#include <linux/types.h>

#if defined(__cplusplus)
extern "C" {
#endif

#define NISA_MAX_INSNS		65536	/* instructions in one kernel */
#define NISA_INSN_SIZE		288	/* bytes of one instruction */

/*
 * Error codes of the card: the status of a failed descriptor or
 * instruction, reported to user space by DRM_IOCTL_NEURON_WAIT
 * (@device_error) when a job fails with -EIO.
 */
enum nisa_err {
	NISA_ERR_NONE		= 0,
	NISA_ERR_BAD_OP		= 1,	/* unknown or wrong-queue opcode */
	NISA_ERR_BAD_DESC	= 2,	/* reserved field set, bad space */
	NISA_ERR_DEV_RANGE	= 3,	/* device memory access out of range */
	NISA_ERR_HOST_DMA	= 4,	/* host address not backed by memory */
	NISA_ERR_BAD_SGL		= 5,	/* malformed scatter-gather list */
	NISA_ERR_BAD_SLOT	= 6,	/* operand names a missing slot */
	NISA_ERR_ACCESS		= 7,	/* slot access rights violated */
	NISA_ERR_SLOT_RANGE	= 8,	/* operand outside its slot */
	NISA_ERR_BAD_INSN	= 9,	/* malformed instruction */
	NISA_ERR_INJECTED	= 10,	/* NHW_FAULT_FAIL_NEXT */
	NISA_ERR_ABORTED		= 11,	/* queue or device reset while running */
	NISA_ERR_RING		= 12,	/* ring base/size invalid or unreadable */
	NISA_ERR_BAD_INDEX	= 13,	/* GATHER/SCATTER_ADD index out of range */
	NISA_ERR_PEER		= 14,	/* link down: no peer card, or it went away */
	NISA_ERR_DIV_ZERO	= 15,	/* integer division by zero */
	NISA_NUM_ERRS
};

/*
 * What a link copy does with the bytes it moves (docs/hardware.md "Links"):
 * NONE stores them at the destination; the others combine each element
 * with the one already there, dst = dst op src, computed as the ISA's
 * elementwise ADD, MUL, MAXIMUM and MINIMUM of that dtype are (same
 * rounding, NaN propagated).
 */
enum nisa_link_reduce {
	NISA_REDUCE_NONE	= 0,
	NISA_REDUCE_SUM		= 1,
	NISA_REDUCE_PROD	= 2,
	NISA_REDUCE_MAX		= 3,
	NISA_REDUCE_MIN		= 4,
	NISA_NUM_LINK_REDUCE
};

/* Element types. */
enum nisa_dtype {
	NISA_F32		= 0,
	NISA_BF16	= 1,
	NISA_I32		= 2,
	NISA_I64		= 3,
	NISA_BOOL	= 4,	/* one byte, 0 or 1 */
	NISA_F16		= 5,	/* IEEE-754 binary16 */
	NISA_U8		= 6,
	NISA_I8		= 7,
	NISA_I16		= 8,
	NISA_F64		= 9,	/* IEEE-754 binary64 */
	NISA_C64		= 10,	/* complex: two binary32, real then imaginary */
	NISA_NUM_DTYPES
};

/* Bytes of one element of @dtype; 0 for an unknown type. */
static inline unsigned int nisa_dtype_size(unsigned int dtype)
{
	switch (dtype) {
	case NISA_F32:
	case NISA_I32:
		return 4;
	case NISA_BF16:
	case NISA_F16:
	case NISA_I16:
		return 2;
	case NISA_I64:
	case NISA_F64:
	case NISA_C64:
		return 8;
	case NISA_BOOL:
	case NISA_U8:
	case NISA_I8:
		return 1;
	}
	return 0;
}

/* Whether a link copy may reduce elements of @dtype: the floating types. */
static inline int nisa_link_reduces_dtype(unsigned int dtype)
{
	return dtype == NISA_F32 || dtype == NISA_BF16 || dtype == NISA_F16 ||
	       dtype == NISA_F64;
}

/* A kernel's rights on a buffer-table slot. */
#define NISA_ACCESS_READ		0x1
#define NISA_ACCESS_WRITE	0x2

#if defined(__cplusplus)
}
#endif

#endif /* __UAPI_DRM_NEURON_CARD_H__ */

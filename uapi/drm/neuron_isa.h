/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR MIT) */
/*
 * The NeuronCore instruction set: what a kernel (the instruction stream of
 * a LAUNCH job) is made of. User space assembles it (libneuron), the device
 * executes it (qemu-device/), and docs/hardware.md specifies each
 * instruction's semantics and numerics.
 *
 * A kernel is an array of struct nrn_insn, executed in order. Operands are
 * tensors named by (buffer-table slot, byte offset, dtype, shape, strides);
 * the slots are the buffers the job was submitted with, in order. The
 * device checks every operand against its slot (existence, access right,
 * extent) before the instruction touches memory.
 */
#ifndef __UAPI_DRM_NEURON_ISA_H__
#define __UAPI_DRM_NEURON_ISA_H__

#include <linux/types.h>

#if defined(__cplusplus)
extern "C" {
#endif

#define NRN_ISA_VERSION		1

#define NRN_MAX_DIMS		4	/* dimensions of a tensor operand */
#define NRN_MAX_INSNS		65536	/* instructions in one kernel */
/*
 * Elements of one tensor operand, counting an extent of 0 as 1 (so that no
 * product of its extents is larger); an operand beyond it is NRN_ERR_BAD_INSN.
 */
#define NRN_MAX_ELEMS		(1ULL << 40)

/*
 * Error codes of the card: the status of a failed descriptor or
 * instruction, reported to user space by DRM_IOCTL_NEURON_WAIT
 * (@device_error) when a job fails with -EIO.
 */
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
	NRN_ERR_BAD_INDEX	= 13,	/* GATHER/SCATTER_ADD index out of range */
};

/* Element types. */
enum nrn_dtype {
	NRN_F32		= 0,
	NRN_BF16	= 1,
	NRN_I32		= 2,
	NRN_I64		= 3,
	NRN_BOOL	= 4,	/* one byte, 0 or 1 */
	NRN_NUM_DTYPES
};

/* Bytes of one element of @dtype; 0 for an unknown type. */
static inline unsigned int nrn_dtype_size(unsigned int dtype)
{
	switch (dtype) {
	case NRN_F32:
	case NRN_I32:
		return 4;
	case NRN_BF16:
		return 2;
	case NRN_I64:
		return 8;
	case NRN_BOOL:
		return 1;
	}
	return 0;
}

/* A kernel's rights on a buffer-table slot. */
#define NRN_ACCESS_READ		0x1
#define NRN_ACCESS_WRITE	0x2

/**
 * struct nrn_tensor - a tensor operand
 *
 * Element (i0, i1, i2, i3) is at byte @offset + (i0 * strides[0] + ... ) *
 * element size in slot @slot. Dimensions past @ndim must have shape 0 and
 * stride 0 (anything else is NRN_ERR_BAD_INSN). Strides count elements and
 * may be 0 (broadcast) or negative.
 */
struct nrn_tensor {
	__u8 slot;
	__u8 dtype;		/* enum nrn_dtype */
	__u8 ndim;		/* 0 (a scalar) .. NRN_MAX_DIMS */
	__u8 rsvd0;
	__u32 rsvd1;
	__u64 offset;		/* bytes into the slot */
	__u32 shape[NRN_MAX_DIMS];
	__s64 strides[NRN_MAX_DIMS];
};

/* Opcodes. */
enum nrn_opcode {
	NRN_INSN_NOP		= 0,
	NRN_INSN_FILL		= 1,	/* dst = scalar */
	NRN_INSN_COPY		= 2,	/* dst = src0, converting the dtype */
	NRN_INSN_UNARY		= 3,	/* dst = fn(src0) */
	NRN_INSN_BINARY		= 4,	/* dst = src0 op (alpha * src1) */
	NRN_INSN_COMPARE	= 5,	/* dst (bool) = src0 cmp src1 */
	NRN_INSN_WHERE		= 6,	/* dst = src0 ? src1 : src2 */
	NRN_INSN_REDUCE		= 7,	/* dst = reduce(src0) along @axis */
	NRN_INSN_SOFTMAX	= 8,	/* dst = softmax(src0) along @axis */
	NRN_INSN_MATMUL		= 9,	/* dst = src0 @ src1 (+ src2) (+ dst) */
	NRN_INSN_GATHER		= 10,	/* dst = src0 indexed by src1 along @axis */
	NRN_INSN_SCATTER_ADD	= 11,	/* dst += src0 at src1 along @axis */
	NRN_NUM_OPCODES
};

/* NRN_INSN_UNARY functions (@subop). */
enum nrn_unary {
	NRN_UN_NEG = 0, NRN_UN_ABS, NRN_UN_EXP, NRN_UN_LOG, NRN_UN_SQRT,
	NRN_UN_RSQRT, NRN_UN_RECIP, NRN_UN_RELU, NRN_UN_GELU_ERF,
	NRN_UN_GELU_TANH, NRN_UN_SILU, NRN_UN_SIGMOID, NRN_UN_TANH,
	NRN_UN_SIN, NRN_UN_COS, NRN_UN_SQUARE, NRN_UN_SIGN,
	NRN_UN_ERF, NRN_UN_FLOOR,
	/* Derivatives, for the backward of the activations. */
	NRN_UN_GELU_ERF_GRAD, NRN_UN_GELU_TANH_GRAD, NRN_UN_SILU_GRAD,
	NRN_UN_BITNOT,		/* ~x; logical not of a bool; integer types only */
	NRN_NUM_UNARY
};

/* NRN_INSN_BINARY operators (@subop). */
enum nrn_binary {
	NRN_BIN_ADD = 0, NRN_BIN_SUB, NRN_BIN_MUL, NRN_BIN_DIV, NRN_BIN_MAX,
	NRN_BIN_MIN, NRN_BIN_POW,
	NRN_BIN_AND, NRN_BIN_OR, NRN_BIN_XOR,	/* integer types only */
	NRN_BIN_FLOORDIV,	/* floor(x / y) */
	NRN_BIN_REM,		/* x - floor(x / y) * y: the divisor's sign */
	NRN_NUM_BINARY
};

/* NRN_INSN_COMPARE predicates (@subop). */
enum nrn_compare {
	NRN_CMP_EQ = 0, NRN_CMP_NE, NRN_CMP_LT, NRN_CMP_LE, NRN_CMP_GT,
	NRN_CMP_GE,
	NRN_NUM_COMPARE
};

/* NRN_INSN_REDUCE reductions (@subop). */
enum nrn_reduce {
	NRN_RED_SUM = 0, NRN_RED_MEAN, NRN_RED_MAX, NRN_RED_MIN,
	NRN_RED_ARGMAX, NRN_RED_ARGMIN,
	NRN_NUM_REDUCE
};

/* NRN_INSN_SOFTMAX variants (@subop). */
enum nrn_softmax {
	NRN_SM_SOFTMAX = 0, NRN_SM_LOG_SOFTMAX,
	NRN_NUM_SOFTMAX
};

/* NRN_INSN_GATHER / NRN_INSN_SCATTER_ADD forms (@subop). */
enum nrn_index_mode {
	NRN_IDX_SELECT = 0,	/* index_select / index_add: src1 is 1-D */
	NRN_IDX_ELEMENT,	/* gather / scatter_add: src1 has dst's (src0's) shape */
	NRN_NUM_IDX
};

/* Instruction flags. */
#define NRN_IF_SCALAR		0x1	/* BINARY, COMPARE: src1 is @scalar, not a tensor */
#define NRN_IF_ACCUMULATE	0x2	/* MATMUL: dst += product */
#define NRN_IF_BIAS		0x4	/* MATMUL: add src2, broadcast by its strides */
#define NRN_IF_REVERSE		0x8	/* BINARY: dst = (alpha * src1) op src0 */

/**
 * struct nrn_insn - one instruction (288 bytes)
 *
 * Scalars are IEEE-754 doubles, carried as their bit patterns.
 */
struct nrn_insn {
	__u16 opcode;		/* enum nrn_opcode */
	__u16 subop;		/* per opcode: enum nrn_unary, nrn_binary, ... */
	__u32 flags;		/* NRN_IF_* */
	__s32 axis;		/* REDUCE, SOFTMAX, GATHER, SCATTER_ADD */
	__u32 rsvd;		/* must be zero */
	__u64 scalar;		/* FILL value, BINARY/COMPARE scalar operand */
	__u64 alpha;		/* BINARY ADD and SUB: src1 multiplier */
	struct nrn_tensor dst;
	struct nrn_tensor src[3];
};

#if defined(__cplusplus)
}
#endif

#endif /* __UAPI_DRM_NEURON_ISA_H__ */

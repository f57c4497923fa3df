/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR MIT) */
/*
 * The NeuronCore instruction set: what a kernel (the instruction stream of
 * a LAUNCH job) is made of. User space assembles it (libneuron), the device
 * executes it (qemu-device/), and docs/hardware.md specifies each
 * instruction's semantics and numerics.
 *
 * A kernel is an array of struct nisa_insn, executed in order. Operands are
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

#define NISA_ISA_VERSION		1

#define NISA_MAX_DIMS		4	/* dimensions of a tensor operand */
#define NISA_MAX_INSNS		65536	/* instructions in one kernel */
/*
 * Elements of one tensor operand, counting an extent of 0 as 1 (so that no
 * product of its extents is larger); an operand beyond it is NISA_ERR_BAD_INSN.
 */
#define NISA_MAX_ELEMS		(1ULL << 40)

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
};

/* Element types. */
enum nisa_dtype {
	NISA_F32		= 0,
	NISA_BF16	= 1,
	NISA_I32		= 2,
	NISA_I64		= 3,
	NISA_BOOL	= 4,	/* one byte, 0 or 1 */
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
		return 2;
	case NISA_I64:
		return 8;
	case NISA_BOOL:
		return 1;
	}
	return 0;
}

/* A kernel's rights on a buffer-table slot. */
#define NISA_ACCESS_READ		0x1
#define NISA_ACCESS_WRITE	0x2

/**
 * struct nisa_tensor - a tensor operand
 *
 * Element (i0, i1, i2, i3) is at byte @offset + (i0 * strides[0] + ... ) *
 * element size in slot @slot. Dimensions past @ndim must have shape 0 and
 * stride 0 (anything else is NISA_ERR_BAD_INSN). Strides count elements and
 * may be 0 (broadcast) or negative.
 */
struct nisa_tensor {
	__u8 slot;
	__u8 dtype;		/* enum nisa_dtype */
	__u8 ndim;		/* 0 (a scalar) .. NISA_MAX_DIMS */
	__u8 rsvd0;
	__u32 rsvd1;
	__u64 offset;		/* bytes into the slot */
	__u32 shape[NISA_MAX_DIMS];
	__s64 strides[NISA_MAX_DIMS];
};

/* Opcodes. */
enum nisa_opcode {
	NISA_INSN_NOP		= 0,
	NISA_INSN_FILL		= 1,	/* dst = scalar */
	NISA_INSN_COPY		= 2,	/* dst = src0, converting the dtype */
	NISA_INSN_UNARY		= 3,	/* dst = fn(src0) */
	NISA_INSN_BINARY		= 4,	/* dst = src0 op (alpha * src1) */
	NISA_INSN_COMPARE	= 5,	/* dst (bool) = src0 cmp src1 */
	NISA_INSN_WHERE		= 6,	/* dst = src0 ? src1 : src2 */
	NISA_INSN_REDUCE		= 7,	/* dst = reduce(src0) along @axis */
	NISA_INSN_SOFTMAX	= 8,	/* dst = softmax(src0) along @axis */
	NISA_INSN_MATMUL		= 9,	/* dst = src0 @ src1 (+ src2) (+ dst) */
	NISA_INSN_GATHER		= 10,	/* dst = src0 indexed by src1 along @axis */
	NISA_INSN_SCATTER_ADD	= 11,	/* dst += src0 at src1 along @axis */
	NISA_INSN_TIMESTAMP	= 12,	/* dst (one I64) = the card's clock, ns */
	NISA_INSN_RANDOM		= 13,	/* dst = Philox4x32-10(@scalar, @alpha + i) */
	NISA_NUM_OPCODES
};

/* NISA_INSN_UNARY functions (@subop). */
enum nisa_unary {
	NISA_UN_NEG = 0, NISA_UN_ABS, NISA_UN_EXP, NISA_UN_LOG, NISA_UN_SQRT,
	NISA_UN_RSQRT, NISA_UN_RECIP, NISA_UN_RELU, NISA_UN_GELU_ERF,
	NISA_UN_GELU_TANH, NISA_UN_SILU, NISA_UN_SIGMOID, NISA_UN_TANH,
	NISA_UN_SIN, NISA_UN_COS, NISA_UN_SQUARE, NISA_UN_SIGN,
	NISA_UN_ERF, NISA_UN_FLOOR,
	/* Derivatives, for the backward of the activations. */
	NISA_UN_GELU_ERF_GRAD, NISA_UN_GELU_TANH_GRAD, NISA_UN_SILU_GRAD,
	NISA_UN_BITNOT,		/* ~x; logical not of a bool; integer types only */
	NISA_NUM_UNARY
};

/* NISA_INSN_BINARY operators (@subop). */
enum nisa_binary {
	NISA_BIN_ADD = 0, NISA_BIN_SUB, NISA_BIN_MUL, NISA_BIN_DIV, NISA_BIN_MAX,
	NISA_BIN_MIN, NISA_BIN_POW,
	NISA_BIN_AND, NISA_BIN_OR, NISA_BIN_XOR,	/* integer types only */
	NISA_BIN_FLOORDIV,	/* floor(x / y) */
	NISA_BIN_REM,		/* x - floor(x / y) * y: the divisor's sign */
	NISA_NUM_BINARY
};

/* NISA_INSN_COMPARE predicates (@subop). */
enum nisa_compare {
	NISA_CMP_EQ = 0, NISA_CMP_NE, NISA_CMP_LT, NISA_CMP_LE, NISA_CMP_GT,
	NISA_CMP_GE,
	NISA_NUM_COMPARE
};

/* NISA_INSN_REDUCE reductions (@subop). */
enum nisa_reduce {
	NISA_RED_SUM = 0, NISA_RED_MEAN, NISA_RED_MAX, NISA_RED_MIN,
	NISA_RED_ARGMAX, NISA_RED_ARGMIN,
	NISA_NUM_REDUCE
};

/* NISA_INSN_SOFTMAX variants (@subop). */
enum nisa_softmax {
	NISA_SM_SOFTMAX = 0, NISA_SM_LOG_SOFTMAX,
	NISA_NUM_SOFTMAX
};

/* NISA_INSN_GATHER / NISA_INSN_SCATTER_ADD forms (@subop). */
enum nisa_index_mode {
	NISA_IDX_SELECT = 0,	/* index_select / index_add: src1 is 1-D */
	NISA_IDX_ELEMENT,	/* gather / scatter_add: src1 has dst's (src0's) shape */
	NISA_NUM_IDX
};

/*
 * NISA_INSN_RANDOM distributions (@subop). @scalar is the key (the seed),
 * @alpha the counter of element 0: element i (row-major) is drawn from the
 * Philox4x32-10 block of counter @alpha + i, so a result does not depend on
 * how the card splits the work (docs/hardware.md, "Random numbers").
 */
enum nisa_random {
	NISA_RNG_UNIFORM = 0,	/* floating dst: [0, 1) at dst's precision */
	NISA_RNG_NORMAL,	/* floating dst: standard normal (Box-Muller) */
	NISA_RNG_BITS,		/* integer dst: raw random bits of its width */
	NISA_NUM_RANDOM
};

/* Instruction flags. */
#define NISA_IF_SCALAR		0x1	/* BINARY, COMPARE: src1 is @scalar, not a tensor */
#define NISA_IF_ACCUMULATE	0x2	/* MATMUL: dst += product */
#define NISA_IF_BIAS		0x4	/* MATMUL: add src2, broadcast by its strides */
#define NISA_IF_REVERSE		0x8	/* BINARY: dst = (alpha * src1) op src0 */

/**
 * struct nisa_insn - one instruction (288 bytes)
 *
 * Scalars are IEEE-754 doubles, carried as their bit patterns.
 */
struct nisa_insn {
	__u16 opcode;		/* enum nisa_opcode */
	__u16 subop;		/* per opcode: enum nisa_unary, nisa_binary, ... */
	__u32 flags;		/* NISA_IF_* */
	__s32 axis;		/* REDUCE, SOFTMAX, GATHER, SCATTER_ADD */
	__u32 rsvd;		/* must be zero */
	__u64 scalar;		/* FILL value, BINARY/COMPARE scalar operand */
	__u64 alpha;		/* BINARY ADD and SUB: src1 multiplier */
	struct nisa_tensor dst;
	struct nisa_tensor src[3];
};

#if defined(__cplusplus)
}
#endif

#endif /* __UAPI_DRM_NEURON_ISA_H__ */

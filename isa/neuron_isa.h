/* SPDX-License-Identifier: MIT */
/*
 * The NeuronCore instruction set: what a kernel (the instruction stream of
 * a LAUNCH job) is made of. User space assembles it (libneuron), the device
 * executes it (qemu-device/), and docs/hardware.md specifies each
 * instruction's semantics and numerics. The driver does not interpret
 * instructions: what it and user space share about the card -- element
 * types, error codes, link reductions, access rights, the size and number
 * of instructions of a kernel -- is in the driver's uAPI
 * (uapi/drm/neuron_card.h), which this header includes.
 *
 * A kernel is an array of struct nisa_insn, executed in order. Operands are
 * tensors named by (buffer-table slot, byte offset, dtype, shape, strides);
 * the slots are the buffers the job was submitted with, in order. The
 * device checks every operand against its slot (existence, access right,
 * extent) before the instruction touches memory.
 */
#ifndef NEURON_ISA_H
#define NEURON_ISA_H

#ifdef QEMU_OSDEP_H
/* The device model: its copy of the uAPI beside this file (qemu-add-device). */
#include "uapi/drm/neuron_card.h"
#else
#include <drm/neuron_card.h>
#endif

#if defined(__cplusplus)
extern "C" {
#endif

/*
 * 1: the first; 2: NISA_F64 (an element type; no encoding changed);
 * 3: NISA_C64, NISA_INSN_FFT and NISA_UN_CONJ (appended: no encoding changed).
 */
#define NISA_ISA_VERSION		3

#define NISA_MAX_DIMS		4	/* dimensions of a tensor operand */
/*
 * Elements of one tensor operand, counting an extent of 0 as 1 (so that no
 * product of its extents is larger); an operand beyond it is NISA_ERR_BAD_INSN.
 */
#define NISA_MAX_ELEMS		(1ULL << 40)


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

/*
 * The instruction table: one line per opcode, in number order,
 *   X(NAME, name, CLASS, DST, SRC0, SRC1, SRC2, SUBOPS)
 * The opcode enum, the device's dispatch, libneuron's disassembler, its
 * fusion and its capture's dependency tracking are generated from it
 * (docs/adding-an-operator.md): an opcode is added by one line here plus
 * its handler in the device, named after @name (qemu-device/, a missing one
 * is a build error), and its section in docs/hardware.md.
 *
 * CLASS is what the layers decide by:
 *   NONE    does nothing
 *   EW      elementwise: dst[i] = f(src[][i]) over operands broadcast to
 *           dst's shape; the device's elementwise engine runs it, an EXPR
 *           step can be one, libneuron fuses them into EXPRs
 *   AXIS    along @axis of src0 (reductions, softmax, sorting, scans)
 *   INDEX   positions named by an index tensor (src1) along @axis
 *   MATMUL  matrix products
 *   LINALG  dense linear algebra, one LAPACK routine per subop
 *   GEN     dst made from the instruction's scalars alone
 *   CLOCK   reads the card's clock: never reordered against anything
 *   GROUP   an EXPR: the first of a group of instructions
 *   CONT    a continuation of the group before it
 * DST, SRC0..SRC2 are the operands' roles (enum nisa_role below), the
 * largest use an opcode makes of each; flags narrow some. SUBOPS names
 * the table its @subop indexes (NISA_<SUBOPS>_OPS), NONE when @subop is 0.
 */
#define NISA_OPCODES(X)							\
	X(NOP, nop, NONE, N, N, N, N, NONE)				\
	X(FILL, fill, EW, W, N, N, N, NONE)	/* dst = scalar */	\
	X(COPY, copy, EW, W, R, N, N, NONE)	/* converting the dtype */ \
	X(UNARY, unary, EW, W, R, N, N, UNARY)	/* dst = fn(src0) */	\
	X(BINARY, binary, EW, W, R, RS, N, BINARY) /* src0 op (alpha src1) */ \
	X(COMPARE, compare, EW, W, R, RS, N, COMPARE) /* bool dst */	\
	X(WHERE, where, EW, W, R, R, R, NONE)	/* src0 ? src1 : src2 */ \
	X(REDUCE, reduce, AXIS, W, R, N, N, REDUCE)			\
	X(SOFTMAX, softmax, AXIS, W, R, N, N, SOFTMAX)			\
	X(MATMUL, matmul, MATMUL, WA, R, R, RB, NONE) /* src0 @ src1 (+ src2) */ \
	X(GATHER, gather, INDEX, W, R, R, N, INDEX)			\
	X(SCATTER_ADD, scatter_add, INDEX, RW, R, R, N, INDEX)		\
	X(TIMESTAMP, timestamp, CLOCK, W, N, N, N, NONE) /* one I64, ns */ \
	X(RANDOM, random, GEN, W, N, N, N, RANDOM) /* Philox4x32-10 */	\
	X(LINALG, linalg, LINALG, W, LA, LA, LA, LINALG)		\
	X(SORT, sort, AXIS, W, R, WI, N, NONE)				\
	X(SCAN, scan, AXIS, W, R, WI, N, SCAN)	/* inclusive */		\
	X(SCATTER, scatter, INDEX, RW, R, R, N, SCATTER)		\
	X(IOTA, iota, GEN, W, N, N, N, NONE)	/* @scalar + i @alpha */ \
	X(EXPR, expr, GROUP, W, RX, RX, RX, NONE) /* elementwise program */ \
	X(EXPR_DATA, expr_data, CONT, XD, XD, XD, XD, EXPR_DATA)	\
	X(FFT, fft, AXIS, W, R, N, N, FFT)	/* along @axis, scaled by @scalar */

/* Opcodes. */
#define NISA_INSN_ENUM_(NAME, ...)	NISA_INSN_##NAME,
enum nisa_opcode {
	NISA_OPCODES(NISA_INSN_ENUM_)
	NISA_NUM_OPCODES
};

/* The CLASS column. */
enum nisa_class {
	NISA_CLASS_NONE, NISA_CLASS_EW, NISA_CLASS_AXIS, NISA_CLASS_INDEX,
	NISA_CLASS_MATMUL, NISA_CLASS_LINALG, NISA_CLASS_GEN, NISA_CLASS_CLOCK,
	NISA_CLASS_GROUP, NISA_CLASS_CONT,
};

/* The roles in the tables: what an instruction does with an operand. */
enum nisa_role {
	NISA_ROLE_N,	/* unused: all its fields zero */
	NISA_ROLE_R,	/* read */
	NISA_ROLE_W,	/* written */
	NISA_ROLE_RW,	/* read and written: an update in place */
	NISA_ROLE_WA,	/* written; read too with NISA_IF_ACCUMULATE */
	NISA_ROLE_RS,	/* read, unless NISA_IF_SCALAR (@scalar stands for it) */
	NISA_ROLE_RB,	/* read with NISA_IF_BIAS, else unused */
	NISA_ROLE_WI,	/* written with NISA_IF_INDICES, else unused */
	NISA_ROLE_WV,	/* written, unless NISA_IF_LA_NOVEC */
	NISA_ROLE_WL,	/* written with NISA_IF_LA_LOG, else unused */
	NISA_ROLE_RX,	/* EXPR input i: read when @axis (the input count) > i */
	NISA_ROLE_LA,	/* LINALG: the subop's row of NISA_LINALG_OPS says */
	NISA_ROLE_XD,	/* EXPR_DATA: INPUTS reads every operand; STEPS has
			 * only a dst, the EXPR's own (written) */
};

/*
 * The elementwise functions, one table per family: X(NAME, name, KIND) per
 * function, in subop order. The tables generate the enums below, the
 * disassembler's names (libneuron) and the device's dispatch (qemu-device),
 * so that a function is added by one line here (appended at the end of its
 * table: kernels are serialized, a subop's number never changes) plus its
 * arithmetic in the device and its line in docs/hardware.md
 * (docs/adding-an-operator.md). KIND says how the device computes it:
 *   EXACT  exactly on int64 when every operand is an integer type, else in
 *          double (docs/hardware.md, "Numerics");
 *   REAL   in double whatever the operand types;
 *   BITS   integer types only (bool included); anything else is
 *          NISA_ERR_BAD_INSN.
 * UNARY functions that take parameters read them from @scalar (p) and
 * @alpha (q), as doubles; the others ignore both.
 */
#define NISA_UNARY_OPS(X)						\
	X(NEG, neg, EXACT) X(ABS, abs, EXACT) X(EXP, exp, REAL)		\
	X(LOG, log, REAL) X(SQRT, sqrt, REAL) X(RSQRT, rsqrt, REAL)	\
	X(RECIP, recip, REAL) X(RELU, relu, EXACT)			\
	X(GELU_ERF, gelu_erf, REAL) X(GELU_TANH, gelu_tanh, REAL)	\
	X(SILU, silu, REAL) X(SIGMOID, sigmoid, REAL)			\
	X(TANH, tanh, REAL) X(SIN, sin, REAL) X(COS, cos, REAL)		\
	X(SQUARE, square, EXACT) X(SIGN, sign, EXACT) X(ERF, erf, REAL)	\
	X(FLOOR, floor, EXACT)						\
	/* derivatives, for the backward of the activations */		\
	X(GELU_ERF_GRAD, gelu_erf_grad, REAL)				\
	X(GELU_TANH_GRAD, gelu_tanh_grad, REAL)				\
	X(SILU_GRAD, silu_grad, REAL)					\
	X(BITNOT, bitnot, BITS)		/* ~x; a bool's is its logical not */ \
	X(CEIL, ceil, EXACT) X(ROUND, round, EXACT) /* half to even */	\
	X(ROUND_DEC, round_dec, REAL)	/* p decimals, half to even */	\
	X(TRUNC, trunc, EXACT) X(FRAC, frac, REAL) X(EXPM1, expm1, REAL) \
	X(LOG1P, log1p, REAL) X(LOG2, log2, REAL) X(LOG10, log10, REAL)	\
	X(TAN, tan, REAL) X(ASIN, asin, REAL) X(ACOS, acos, REAL)	\
	X(ATAN, atan, REAL) X(SINH, sinh, REAL) X(COSH, cosh, REAL)	\
	X(ASINH, asinh, REAL) X(ACOSH, acosh, REAL) X(ATANH, atanh, REAL) \
	X(ERFC, erfc, REAL) X(ERFINV, erfinv, REAL) X(LGAMMA, lgamma, REAL) \
	X(HARDSWISH, hardswish, REAL) X(HARDSWISH_GRAD, hardswish_grad, REAL) \
	X(HARDSIGMOID, hardsigmoid, REAL)				\
	X(HARDSIGMOID_GRAD, hardsigmoid_grad, REAL)			\
	X(MISH, mish, REAL) X(MISH_GRAD, mish_grad, REAL)		\
	X(LOG_SIGMOID, log_sigmoid, REAL)				\
	X(LOG_SIGMOID_GRAD, log_sigmoid_grad, REAL)			\
	X(ELU, elu, REAL)		/* x > 0 ? q x : p expm1(x) */	\
	X(ELU_GRAD, elu_grad, REAL)	/* x > 0 ? q : p exp(x) */	\
	X(CELU, celu, REAL)		/* x > 0 ? x : p expm1(q x) */	\
	X(CELU_GRAD, celu_grad, REAL)	/* x > 0 ? 1 : p q exp(q x) */	\
	X(LEAKY_RELU, leaky_relu, REAL)	/* x > 0 ? x : p x */		\
	X(LEAKY_RELU_GRAD, leaky_relu_grad, REAL) /* x > 0 ? 1 : p */	\
	X(SOFTPLUS, softplus, REAL)	/* beta p, threshold q */	\
	X(SOFTPLUS_GRAD, softplus_grad, REAL)				\
	X(HARDSHRINK, hardshrink, REAL)	/* lambda p */			\
	X(SOFTSHRINK, softshrink, REAL)	/* lambda p */			\
	X(SHRINK_GRAD, shrink_grad, REAL) /* |x| <= p ? 0 : 1 */	\
	/* predicates: 1 or 0 */					\
	X(ISNAN, isnan, REAL) X(ISINF, isinf, REAL)			\
	X(ISPOSINF, isposinf, REAL) X(ISNEGINF, isneginf, REAL)		\
	X(ISFINITE, isfinite, REAL) X(SIGNBIT, signbit, REAL)		\
	X(LOGICAL_NOT, logical_not, EXACT)				\
	/* special functions (docs/hardware.md, "Special functions") */	\
	X(DIGAMMA, digamma, REAL)					\
	X(POLYGAMMA, polygamma, REAL)	/* order p */			\
	X(I0, i0, REAL) X(I0E, i0e, REAL) X(I1, i1, REAL) X(I1E, i1e, REAL) \
	X(NDTRI, ndtri, REAL) X(LOG_NDTR, log_ndtr, REAL)		\
	X(ERFCX, erfcx, REAL) X(AIRY_AI, airy_ai, REAL)			\
	X(BESSEL_J0, bessel_j0, REAL) X(BESSEL_J1, bessel_j1, REAL)	\
	X(BESSEL_Y0, bessel_y0, REAL) X(BESSEL_Y1, bessel_y1, REAL)	\
	X(BESSEL_K0, bessel_k0, REAL) X(BESSEL_K1, bessel_k1, REAL)	\
	X(BESSEL_K0E, bessel_k0e, REAL) X(BESSEL_K1E, bessel_k1e, REAL)	\
	X(SPHERICAL_J0, spherical_j0, REAL) X(ENTR, entr, REAL)		\
	X(SINC, sinc, REAL) X(EXP2, exp2, REAL)				\
	X(LOGIT, logit, REAL)	/* q != 0: x clamped to [p, 1 - p] */	\
	X(ANGLE, angle, REAL)	/* x < 0 ? pi : 0 */			\
	X(FREXP_MANT, frexp_mant, REAL) X(FREXP_EXP, frexp_exp, REAL)	\
	X(NAN_TO, nan_to, REAL)		/* NaN -> p */			\
	X(INF_TO, inf_to, REAL)		/* +inf -> p, -inf -> q */	\
	X(THRESHOLD, threshold, REAL)	/* x <= p ? q : x */		\
	X(CONJ, conj, EXACT)		/* complex conjugate; x for a real x */

/*
 * NISA_INSN_BINARY operators: x op (alpha * y), alpha for ADD and SUB.
 * X(NAME, name, KIND, RESULT): RESULT is the type of the framework's
 * operator for integer operands, which the card does not decide (it
 * rounds into dst's dtype, whatever it is): SAME, the operands' promoted
 * type, or FLOAT, the default floating type (true division, atan2...).
 */
#define NISA_BINARY_OPS(X)						\
	X(ADD, add, EXACT, SAME) X(SUB, sub, EXACT, SAME)		\
	X(MUL, mul, EXACT, SAME)					\
	X(DIV, div, EXACT, FLOAT) /* integers: truncating */		\
	X(MAX, max, EXACT, SAME) X(MIN, min, EXACT, SAME)		\
	X(POW, pow, EXACT, SAME)					\
	X(AND, and, BITS, SAME) X(OR, or, BITS, SAME)			\
	X(XOR, xor, BITS, SAME)						\
	X(FLOORDIV, floordiv, EXACT, SAME) /* floor(x / y) */		\
	/* x - floor(x / y) * y: the divisor's sign */			\
	X(REM, rem, EXACT, SAME)					\
	X(DIV_TRUNC, div_trunc, EXACT, SAME) /* trunc(x / y) */		\
	/* x - trunc(x / y) * y: the dividend's sign */			\
	X(FMOD, fmod, EXACT, SAME)					\
	X(ATAN2, atan2, REAL, FLOAT)					\
	X(HYPOT, hypot, REAL, FLOAT)					\
	X(COPYSIGN, copysign, REAL, FLOAT)				\
	X(LOGADDEXP, logaddexp, REAL, FLOAT)				\
	X(LOGADDEXP2, logaddexp2, REAL, FLOAT)				\
	X(XLOGY, xlogy, REAL, FLOAT)					\
	X(SHL, shl, BITS, SAME)						\
	X(SHR, shr, BITS, SAME)		/* arithmetic right shift */	\
	X(FMAX, fmax, EXACT, SAME)	/* NaN ignored */		\
	X(FMIN, fmin, EXACT, SAME)	/* NaN ignored */		\
	X(HEAVISIDE, heaviside, EXACT, SAME) /* x == 0 ? y : x > 0 */	\
	X(NEXTAFTER, nextafter, REAL, SAME) /* in float32 */		\
	X(ZETA, zeta, REAL, FLOAT)					\
	X(XLOG1PY, xlog1py, REAL, FLOAT)				\
	X(IGAMMA, igamma, REAL, SAME)					\
	X(IGAMMAC, igammac, REAL, SAME)					\
	/* orthogonal polynomials of x, degree y (truncated) */	\
	X(CHEB_T, cheb_t, REAL, SAME)					\
	X(CHEB_U, cheb_u, REAL, SAME)					\
	X(CHEB_V, cheb_v, REAL, SAME)					\
	X(CHEB_W, cheb_w, REAL, SAME)					\
	X(SCHEB_T, scheb_t, REAL, SAME)					\
	X(SCHEB_U, scheb_u, REAL, SAME)					\
	X(SCHEB_V, scheb_v, REAL, SAME)					\
	X(SCHEB_W, scheb_w, REAL, SAME)					\
	X(HERMITE_H, hermite_h, REAL, SAME)				\
	X(HERMITE_HE, hermite_he, REAL, SAME)				\
	X(LAGUERRE_L, laguerre_l, REAL, SAME)				\
	X(LEGENDRE_P, legendre_p, REAL, SAME)				\
	X(PRELU, prelu, REAL, SAME) /* x > 0 ? x : y x */		\
	X(LOGIT_GRAD, logit_grad, REAL, FLOAT) /* x / (y (1 - y)) */

/* NISA_INSN_COMPARE predicates: dst (bool) = x cmp y. */
#define NISA_COMPARE_OPS(X)						\
	X(EQ, eq, EXACT) X(NE, ne, EXACT) X(LT, lt, EXACT)		\
	X(LE, le, EXACT) X(GT, gt, EXACT) X(GE, ge, EXACT)		\
	X(LAND, land, EXACT) X(LOR, lor, EXACT)				\
	X(LXOR, lxor, EXACT)						\
	/* logical: an operand is true when it is not 0 (NaN is true) */

#define NISA_UN_ENUM_(NAME, ...)	NISA_UN_##NAME,
#define NISA_BIN_ENUM_(NAME, ...)	NISA_BIN_##NAME,
#define NISA_CMP_ENUM_(NAME, ...)	NISA_CMP_##NAME,

/* NISA_INSN_UNARY functions (@subop). */
enum nisa_unary {
	NISA_UNARY_OPS(NISA_UN_ENUM_)
	NISA_NUM_UNARY
};

/* NISA_INSN_BINARY operators (@subop). */
enum nisa_binary {
	NISA_BINARY_OPS(NISA_BIN_ENUM_)
	NISA_NUM_BINARY
};

/* NISA_INSN_COMPARE predicates (@subop). */
enum nisa_compare {
	NISA_COMPARE_OPS(NISA_CMP_ENUM_)
	NISA_NUM_COMPARE
};

/*
 * NISA_INSN_REDUCE reductions (@subop): X(NAME, name, EMPTY). EMPTY is
 * what the reduction of an empty axis gives: ZERO, ONE, NAN (a mean:
 * 0 / 0), or NONE: then the instruction is NISA_ERR_BAD_INSN (the
 * extremes and their positions have no value to give).
 */
#define NISA_REDUCE_OPS(X)						\
	X(SUM, sum, ZERO) X(MEAN, mean, NAN)				\
	X(MAX, max, NONE) X(MIN, min, NONE)				\
	X(ARGMAX, argmax, NONE) X(ARGMIN, argmin, NONE)			\
	X(PROD, prod, ONE)	/* integers: exact, wrapping at the store */ \
	X(LOGSUMEXP, logsumexp, NEG_INF) /* log(sum(exp(x))), in double */

/* NISA_INSN_SOFTMAX variants (@subop). */
#define NISA_SOFTMAX_OPS(X)	X(SOFTMAX, softmax) X(LOG_SOFTMAX, log_softmax)

/* NISA_INSN_GATHER / NISA_INSN_SCATTER_ADD forms (@subop). */
#define NISA_INDEX_OPS(X)						\
	X(SELECT, select)	/* index_select / index_add: src1 is 1-D */ \
	X(ELEMENT, element)	/* gather / scatter_add: src1 has dst's (src0's) shape */

/*
 * NISA_INSN_RANDOM distributions (@subop). @scalar is the key (the seed),
 * @alpha the counter of element 0: element i (row-major) is drawn from the
 * Philox4x32-10 block of counter @alpha + i, so a result does not depend on
 * how the card splits the work (docs/hardware.md, "Random numbers").
 */
#define NISA_RANDOM_OPS(X)						\
	X(UNIFORM, uniform)	/* floating dst: [0, 1) at dst's precision */ \
	X(NORMAL, normal)	/* floating dst: standard normal (Box-Muller) */ \
	X(BITS, bits)		/* integer dst: raw random bits of its width */

/*
 * NISA_INSN_SORT (@subop 0): dst = src0 sorted along @axis, stably,
 * ascending (NaN last) or, with NISA_IF_DESCENDING, descending (NaN
 * first); with NISA_IF_INDICES src[1] (I32 or I64, written) receives each
 * value's position along the axis in src0. dst and src[1] have src0's shape.
 * At most NISA_SORT_MAX_LEN elements along the axis.
 */
#define NISA_SORT_MAX_LEN	(1u << 24)

/*
 * NISA_INSN_SCAN scans (@subop): dst[.., i, ..] = op(src0[.., 0..i, ..])
 * along @axis, inclusive. MAX and MIN with NISA_IF_INDICES write into
 * src[1] (I32 or I64) the position of the extreme (the last of equal
 * ones; a NaN is the extreme from where it appears), like cummax/cummin.
 * Integer SUM, PROD, MAX, MIN are exact on int64 (wrapping at the store);
 * everything else is computed in double, rounded at each store.
 */
#define NISA_SCAN_OPS(X)						\
	X(SUM, sum) X(PROD, prod) X(MAX, max) X(MIN, min)		\
	X(LOGSUMEXP, logsumexp)

/*
 * NISA_INSN_SCATTER (@subop = NISA_SCATTER_SUBOP(reduction, index form)):
 * dst[at src1] = dst[at src1] op src0, the positions named by src1 along
 * @axis as in SCATTER_ADD's two index forms (NISA_IDX_SELECT: src1 1-D,
 * index_copy/index_reduce; NISA_IDX_ELEMENT: src1 of src0's shape,
 * scatter/scatter_reduce). Updates apply one at a time in row-major order
 * of the iteration (src0's, resp. the index's), each rounded at the store:
 * with ASSIGN the last of duplicate indices wins. Integer operands are
 * exact on int64 (wrapping at the store); MAX/MIN propagate NaN. Every
 * index is checked before anything is written (NISA_ERR_BAD_INDEX).
 */
#define NISA_SCATTER_OPS(X)						\
	X(ASSIGN, assign)	/* dst = src0 */			\
	X(ADD, add)		/* dst += src0 */			\
	X(MUL, mul)		/* dst *= src0 */			\
	X(MAX, max)		/* dst = max(dst, src0) */		\
	X(MIN, min)		/* dst = min(dst, src0) */
#define NISA_SCATTER_SUBOP(red, mode)	((__u16)((red) | ((mode) << 8)))
#define NISA_SCATTER_RED(subop)		((subop) & 0xff)
#define NISA_SCATTER_MODE(subop)	((subop) >> 8)

/*
 * NISA_INSN_LINALG subops (docs/hardware.md, "LINALG"): dense linear
 * algebra in float32 (LAPACK), batched. Every operand is read as 4-D
 * (right-aligned): dims 0 and 1 are the batch and equal in every operand,
 * a matrix is dims 2 and 3, a vector [.., 1, n], a per-matrix value
 * [.., 1, 1]. Floating operands are F32, BF16 or any floating type the
 * card stores; pivots and info are I32. m x n is src0's matrix, k = min(m,
 * n). No matrix dimension exceeds NISA_LINALG_MAX_DIM. A numerically bad
 * matrix is never an error of the card: it shows in info (or as NaN).
 * X(NAME, name, SRC0, SRC1, SRC2, FLAGS): the sources' roles (dst is
 * written) and the NISA_IF_LA_* flags the subop takes.
 */
#define NISA_LINALG_OPS(X)						\
	/* dst = Cholesky factor of src0; src1 = info */		\
	X(POTRF, potrf, R, W, N, NISA_IF_LA_UPPER)			\
	/* dst = LU of src0; src1 = pivots [k]; src2 = info */		\
	X(GETRF, getrf, R, W, W, 0)					\
	/* dst = A^-1 src2, A from LU src0, pivots src1 */		\
	X(GETRS, getrs, R, R, R, NISA_IF_LA_TRANS)			\
	/* dst = op(src0)^-1 src1 (or src1 op(src0)^-1) */		\
	X(TRSM, trsm, R, R, N, NISA_IF_LA_UPPER | NISA_IF_LA_UNIT |	\
	  NISA_IF_LA_TRANS | NISA_IF_LA_RIGHT)				\
	/* dst = QR of src0 (Householder form); src1 = tau [k] */	\
	X(GEQRF, geqrf, R, W, N, 0)					\
	/* dst = Q from reflectors src0 and tau src1 */			\
	X(ORGQR, orgqr, R, R, N, 0)					\
	/* dst = op(Q) src2 (or src2 op(Q)), Q from src0, src1 */	\
	X(ORMQR, ormqr, R, R, R, NISA_IF_LA_TRANS | NISA_IF_LA_RIGHT)	\
	/* dst = S [k] of src0; src1 = U, src2 = Vh */			\
	X(GESDD, gesdd, R, WV, WV, NISA_IF_LA_FULL | NISA_IF_LA_NOVEC)	\
	/* dst = eigenvalues [n] of symmetric src0; src1 = vectors */	\
	X(SYEVD, syevd, R, WV, N, NISA_IF_LA_UPPER | NISA_IF_LA_NOVEC)	\
	/* dst = det from LU src0, pivots src1 (LOG: log|det|, src2 = sign) */ \
	X(LUDET, ludet, R, R, WL, NISA_IF_LA_LOG)			\
	/* dst [m, m] = P of A = P L U from pivots src0 (I32 [1, k]) */	\
	X(PERM, perm, R, N, N, 0)					\
	/* dst = LDL^T of symmetric src0; src1 = pivots [n]; src2 = info */ \
	X(SYTRF, sytrf, R, W, W, 0)					\
	/* dst = A^-1 src2, A from LD src0, pivots src1 */		\
	X(SYTRS, sytrs, R, R, R, 0)					\
	/* dst = least squares of src0 X = src1 (QR, full rank) */	\
	X(GELS, gels, R, R, N, 0)					\
	/* the same, rank-revealing (rcond @scalar); src2 = rank (I64) */ \
	X(GELSY, gelsy, R, R, W, 0)

/*
 * NISA_INSN_FFT transforms (@subop), along @axis, batched over the other
 * axes (docs/hardware.md, "FFT"). n is the transform's length: src0's
 * extent along @axis (C2R: dst's). Forward is sum_j x_j e^(-2 pi i jk / n),
 * backward the same with e^(+2 pi i jk / n), both unnormalised: every
 * result is multiplied by @scalar (1, 1/n, 1/sqrt(n)... as the caller
 * normalises). Computed in double, rounded once to dst's type.
 */
#define NISA_FFT_OPS(X)							\
	X(FORWARD, forward)	/* C64 -> C64, dst of src0's shape */	\
	X(BACKWARD, backward)	/* C64 -> C64, dst of src0's shape */	\
	/* F32 -> C64, forward: dst's extent along @axis is n / 2 + 1	\
	 * (one-sided) or n (both halves, the second the conjugate	\
	 * mirror of the first) */					\
	X(R2C, r2c)							\
	/* C64 -> F32, backward, from a one-sided half: src0's extent	\
	 * along @axis is at least n / 2 + 1 and only that many are read; \
	 * the imaginary parts of bin 0 (and n / 2, n even) are ignored */ \
	X(C2R, c2r)

/* Largest transform length along the axis. */
#define NISA_FFT_MAX_LEN	(1U << 26)

#define NISA_RED_ENUM_(NAME, ...)	NISA_RED_##NAME,
#define NISA_SM_ENUM_(NAME, ...)	NISA_SM_##NAME,
#define NISA_IDX_ENUM_(NAME, ...)	NISA_IDX_##NAME,
#define NISA_RNG_ENUM_(NAME, ...)	NISA_RNG_##NAME,
#define NISA_SCAN_ENUM_(NAME, ...)	NISA_SCAN_##NAME,
#define NISA_SCAT_ENUM_(NAME, ...)	NISA_SCAT_##NAME,
#define NISA_LA_ENUM_(NAME, ...)	NISA_LA_##NAME,
#define NISA_FFT_ENUM_(NAME, ...)	NISA_FFT_##NAME,
#define NISA_XD_ENUM_(NAME, ...)	NISA_EXPR_DATA_##NAME,

enum nisa_reduce { NISA_REDUCE_OPS(NISA_RED_ENUM_) NISA_NUM_REDUCE };
enum nisa_softmax { NISA_SOFTMAX_OPS(NISA_SM_ENUM_) NISA_NUM_SOFTMAX };
enum nisa_index_mode { NISA_INDEX_OPS(NISA_IDX_ENUM_) NISA_NUM_IDX };
enum nisa_random { NISA_RANDOM_OPS(NISA_RNG_ENUM_) NISA_NUM_RANDOM };
enum nisa_scan { NISA_SCAN_OPS(NISA_SCAN_ENUM_) NISA_NUM_SCAN };
enum nisa_scatter { NISA_SCATTER_OPS(NISA_SCAT_ENUM_) NISA_NUM_SCATTER };
enum nisa_linalg { NISA_LINALG_OPS(NISA_LA_ENUM_) NISA_NUM_LINALG };
enum nisa_fft { NISA_FFT_OPS(NISA_FFT_ENUM_) NISA_NUM_FFT };

#define NISA_LINALG_MAX_DIM	1024
/* LINALG flags (their own bits: no other opcode takes them). */
#define NISA_IF_LA_UPPER	0x010000	/* POTRF, TRSM, SYEVD: the upper triangle */
#define NISA_IF_LA_UNIT		0x020000	/* TRSM: unit diagonal, not read */
#define NISA_IF_LA_TRANS	0x040000	/* GETRS, TRSM, ORMQR: the transpose */
#define NISA_IF_LA_RIGHT	0x080000	/* TRSM, ORMQR: the matrix on the right */
#define NISA_IF_LA_FULL		0x100000	/* GESDD: full U and Vh */
#define NISA_IF_LA_NOVEC	0x200000	/* GESDD, SYEVD: values only */
#define NISA_IF_LA_LOG		0x400000	/* LUDET: log|det| and sign */

/*
 * NISA_INSN_EXPR (docs/hardware.md, "EXPR"): dst = P(in0 .. in(n-1))
 * elementwise, one pass over memory. Every input broadcasts to dst's shape
 * the NumPy way (right-aligned; an extent of 1 repeats). P is a
 * straight-line program of @subop steps over NISA_EXPR_NUM_REGS registers;
 * register i starts as input i (its dtype); each step is one elementwise
 * instruction (FILL, COPY, UNARY, BINARY, COMPARE, WHERE with their subops,
 * flags, scalar and alpha) whose result is rounded to the step's @dtype
 * exactly as that instruction storing into a tensor of @dtype would round
 * it, so a program gives the bits of the unfused instructions. dst (of the
 * last step's dtype) receives the last step's register.
 *
 * The EXPR instruction: @subop = step count (1 .. NISA_EXPR_MAX_STEPS),
 * @axis = input count (0 .. NISA_EXPR_MAX_INPUTS), @flags, @scalar,
 * @alpha 0; dst; src[0..2] = inputs 0..2 (unused ones all zero). It is
 * followed by its continuations, NISA_INSN_EXPR_DATA instructions: first
 * the INPUTS ones (dst, src[0..2] = the next four inputs) while inputs
 * remain, then the STEPS ones (struct nisa_expr_steps: the EXPR's dst
 * again, so that every instruction of the group names a tensor in its dst
 * field, and six steps). A continuation anywhere else is NISA_ERR_BAD_INSN.
 */
#define NISA_EXPR_MAX_INPUTS	8
#define NISA_EXPR_MAX_STEPS	32
#define NISA_EXPR_NUM_REGS	16
#define NISA_EXPR_INPUTS_PER_DATA	4
#define NISA_EXPR_STEPS_PER_DATA	6

/* NISA_INSN_EXPR_DATA kinds (@subop). */
#define NISA_EXPR_DATA_OPS(X)						\
	X(INPUTS, inputs)	/* a struct nisa_insn: dst, src[] are inputs */ \
	X(STEPS, steps)		/* a struct nisa_expr_steps */
enum nisa_expr_data { NISA_EXPR_DATA_OPS(NISA_XD_ENUM_) NISA_NUM_EXPR_DATA };

/**
 * struct nisa_expr_step - one step of an EXPR program (32 bytes)
 *
 * reg[@dst] = @op(reg[@src[0]], reg[@src[1]], reg[@src[2]]) rounded to
 * @dtype; @op takes as many sources as the instruction does (FILL none,
 * BINARY and COMPARE one with NISA_IF_SCALAR), the others must be 0.
 */
struct nisa_expr_step {
	__u8 op;		/* NISA_INSN_FILL .. NISA_INSN_WHERE */
	__u8 dtype;		/* enum nisa_dtype: the result's rounding */
	__u8 dst;		/* register */
	__u8 src[3];		/* registers */
	__u16 subop;		/* as the instruction's */
	__u32 flags;		/* NISA_IF_SCALAR, NISA_IF_REVERSE as the instruction's */
	__u32 rsvd;		/* must be zero */
	__u64 scalar;		/* as the instruction's */
	__u64 alpha;		/* as the instruction's */
};

/* A NISA_EXPR_DATA_STEPS continuation (288 bytes, a struct nisa_insn's size). */
struct nisa_expr_steps {
	__u16 opcode;		/* NISA_INSN_EXPR_DATA */
	__u16 subop;		/* NISA_EXPR_DATA_STEPS */
	__u32 rsvd0;		/* must be zero */
	__u64 rsvd[3];		/* must be zero */
	struct nisa_tensor dst;	/* the EXPR's dst, byte for byte */
	struct nisa_expr_step step[NISA_EXPR_STEPS_PER_DATA]; /* unused: zero */
};

/* Instructions an EXPR of @nsteps steps and @ninputs inputs occupies. */
static inline unsigned int nisa_expr_length(unsigned int nsteps,
					    unsigned int ninputs)
{
	unsigned int more = ninputs > 3 ? ninputs - 3 : 0;

	return 1 + (more + NISA_EXPR_INPUTS_PER_DATA - 1) /
		   NISA_EXPR_INPUTS_PER_DATA +
	       (nsteps + NISA_EXPR_STEPS_PER_DATA - 1) /
		   NISA_EXPR_STEPS_PER_DATA;
}

/* Instruction flags. */
#define NISA_IF_SCALAR		0x1	/* BINARY, COMPARE: src1 is @scalar, not a tensor */
#define NISA_IF_ACCUMULATE	0x2	/* MATMUL: dst += product */
#define NISA_IF_BIAS		0x4	/* MATMUL: add src2, broadcast by its strides */
#define NISA_IF_REVERSE		0x8	/* BINARY: dst = (alpha * src1) op src0 */
#define NISA_IF_DESCENDING	0x10	/* SORT: largest first */
#define NISA_IF_INDICES		0x20	/* SORT, SCAN MAX/MIN: src[1] gets indices */

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
	__u64 scalar;		/* FILL value, BINARY/COMPARE scalar, UNARY p */
	__u64 alpha;		/* BINARY ADD and SUB: src1 multiplier, UNARY q */
	struct nisa_tensor dst;
	struct nisa_tensor src[3];
};

/*
 * The element types (enum nisa_dtype, numbered in drm/neuron_card.h, which
 * the driver shares): X(NAME, name, KIND), in the enum's order; KIND is
 * FLOAT (IEEE or bfloat16), INT (two's complement; BOOL is one byte, 0
 * or 1) or COMPLEX (two floats, real then imaginary: which instructions
 * take it is nisa_takes_complex()). @name is the disassembler's. A type
 * missing here, or out of order, fails to compile (below).
 */
#define NISA_DTYPES(X)							\
	X(F32, f32, FLOAT) X(BF16, bf16, FLOAT) X(I32, i32, INT)	\
	X(I64, i64, INT) X(BOOL, bool, INT) X(F16, f16, FLOAT)		\
	X(U8, u8, INT) X(I8, i8, INT) X(I16, i16, INT)		\
	X(F64, f64, FLOAT) X(C64, c64, COMPLEX)

/* Whether @dtype is a floating type (0 for an unknown type too). */
static inline int nisa_dtype_is_float(unsigned int dtype)
{
#define NISA_DT_FLOAT_(NAME, name, kind)	NISA_DT_KIND_##kind,
#define NISA_DT_KIND_FLOAT	1
#define NISA_DT_KIND_INT	0
#define NISA_DT_KIND_COMPLEX	0
	static const unsigned char f[NISA_NUM_DTYPES] = {
		NISA_DTYPES(NISA_DT_FLOAT_)
	};
#undef NISA_DT_FLOAT_
#undef NISA_DT_KIND_FLOAT
#undef NISA_DT_KIND_INT
#undef NISA_DT_KIND_COMPLEX
	return dtype < NISA_NUM_DTYPES && f[dtype];
}

/* Whether @dtype is a complex type. */
static inline int nisa_dtype_is_complex(unsigned int dtype)
{
	return dtype == NISA_C64;
}

/* Whether @dtype is an integer type (bool included). */
static inline int nisa_dtype_is_int(unsigned int dtype)
{
	return dtype < NISA_NUM_DTYPES && !nisa_dtype_is_float(dtype) &&
	       !nisa_dtype_is_complex(dtype);
}

/* @dtype's short name ("f32", "bf16", ...); "?" for an unknown type. */
static inline const char *nisa_dtype_name(unsigned int dtype)
{
#define NISA_DT_NAME_(NAME, name, kind)	#name,
	static const char *const n[NISA_NUM_DTYPES] = {
		NISA_DTYPES(NISA_DT_NAME_)
	};
#undef NISA_DT_NAME_
	return dtype < NISA_NUM_DTYPES ? n[dtype] : "?";
}

/*
 * The error codes' names (enum nisa_err, drm/neuron_card.h), in its order;
 * a code missing here fails to compile (below).
 */
#define NISA_ERR_NAMES(X)						\
	X("none") X("bad opcode") X("bad descriptor")			\
	X("device memory out of range") X("host address not memory")	\
	X("bad scatter-gather list") X("no such buffer slot")		\
	X("slot access denied") X("operand outside its slot")		\
	X("bad instruction") X("injected fault") X("aborted by a reset")	\
	X("bad ring") X("index out of range") X("link down")		\
	X("integer division by zero")

/* @code's name; "unknown device error" for one that is not a code. */
static inline const char *nisa_err_name(unsigned int code)
{
#define NISA_ERR_NAME_(s)	s,
	static const char *const n[] = { NISA_ERR_NAMES(NISA_ERR_NAME_) };
#undef NISA_ERR_NAME_
	return code < NISA_NUM_ERRS ? n[code] : "unknown device error";
}

/* ---- What the tables say of one instruction (every layer asks here) ---- */

/* @opcode's CLASS; NISA_CLASS_NONE for an unknown one. */
static inline enum nisa_class nisa_opcode_class(unsigned int opcode)
{
#define NISA_CLASS_(NAME, name, cls, ...)	NISA_CLASS_##cls,
	static const unsigned char cls[NISA_NUM_OPCODES] = {
		NISA_OPCODES(NISA_CLASS_)
	};
#undef NISA_CLASS_
	return opcode < NISA_NUM_OPCODES ? (enum nisa_class)cls[opcode] :
					   NISA_CLASS_NONE;
}

/*
 * The functions the card computes on complex operands (docs/hardware.md,
 * "Complex numbers"): an instruction with a NISA_C64 operand is one of
 * these, anything else is NISA_ERR_BAD_INSN. Real operands of these
 * instructions are complex numbers of imaginary part 0. ABS, ANGLE and the
 * predicates write a real (or bool) dst; COPY of a complex source to a
 * real dst keeps the real part. GATHER, SCATTER_ADD and SCATTER (assign,
 * add) take complex dst and src0 together (real indices): moves are exact,
 * adds are made part by part as float32's; so does SCAN SUM (cumsum).
 */
#define NISA_C64_UNARY(X)						\
	X(NEG) X(CONJ) X(ABS) X(ANGLE) X(SQUARE) X(RECIP) X(EXP)	\
	X(LOG) X(SQRT) X(SIN) X(COS) X(TANH) X(SIGMOID)		\
	X(ISNAN) X(ISINF) X(ISFINITE)					\
	X(TAN) X(ASIN) X(ACOS) X(ATAN) X(SINH) X(COSH)			\
	X(ASINH) X(ACOSH) X(ATANH) X(LOG2) X(LOG10) X(LOG1P)		\
	X(EXPM1) X(RSQRT) X(EXP2)
#define NISA_C64_BINARY(X)	X(ADD) X(SUB) X(MUL) X(DIV)
#define NISA_C64_COMPARE(X)	X(EQ) X(NE)

static inline int nisa_takes_complex(unsigned int opcode, unsigned int subop)
{
#define NISA_C64_UN_(NAME)	case NISA_UN_##NAME:
#define NISA_C64_BIN_(NAME)	case NISA_BIN_##NAME:
#define NISA_C64_CMP_(NAME)	case NISA_CMP_##NAME:
	switch (opcode) {
	case NISA_INSN_FILL:	/* @scalar + i @alpha */
	case NISA_INSN_COPY:
	case NISA_INSN_WHERE:
	case NISA_INSN_FFT:
		return 1;
	case NISA_INSN_UNARY:
		switch (subop) {
		NISA_C64_UNARY(NISA_C64_UN_)
			return 1;
		}
		return 0;
	case NISA_INSN_BINARY:	/* @alpha and @scalar are real */
		switch (subop) {
		NISA_C64_BINARY(NISA_C64_BIN_)
			return 1;
		}
		return 0;
	case NISA_INSN_COMPARE:
		switch (subop) {
		NISA_C64_COMPARE(NISA_C64_CMP_)
			return 1;
		}
		return 0;
	case NISA_INSN_GATHER:	/* dst and src0 C64: exact moves */
	case NISA_INSN_SCATTER_ADD:	/* per part, as float32 */
		return subop == NISA_IDX_SELECT || subop == NISA_IDX_ELEMENT;
	case NISA_INSN_SCATTER:	/* assign (moves) and add (per part) */
		return (NISA_SCATTER_MODE(subop) == NISA_IDX_SELECT ||
			NISA_SCATTER_MODE(subop) == NISA_IDX_ELEMENT) &&
		       (NISA_SCATTER_RED(subop) == NISA_SCAT_ASSIGN ||
			NISA_SCATTER_RED(subop) == NISA_SCAT_ADD);
	case NISA_INSN_SCAN:	/* cumsum, per part */
		return subop == NISA_SCAN_SUM;
	}
	return 0;
#undef NISA_C64_UN_
#undef NISA_C64_BIN_
#undef NISA_C64_CMP_
}

/* Whether a reduction @red (enum nisa_reduce) takes an empty axis. */
static inline int nisa_reduce_takes_empty(unsigned int red)
{
#define NISA_RED_EMPTY_(NAME, name, empty)	NISA_RED_EMPTY_##empty,
#define NISA_RED_EMPTY_NONE	0
#define NISA_RED_EMPTY_ZERO	1
#define NISA_RED_EMPTY_ONE	1
#define NISA_RED_EMPTY_NAN	1
#define NISA_RED_EMPTY_NEG_INF	1
	static const unsigned char ok[NISA_NUM_REDUCE] = {
		NISA_REDUCE_OPS(NISA_RED_EMPTY_)
	};
#undef NISA_RED_EMPTY_
#undef NISA_RED_EMPTY_NONE
#undef NISA_RED_EMPTY_ZERO
#undef NISA_RED_EMPTY_ONE
#undef NISA_RED_EMPTY_NAN
#undef NISA_RED_EMPTY_NEG_INF
	return red < NISA_NUM_REDUCE && ok[red];
}

/*
 * How many subops @opcode has (its SUBOPS table's length; 1 for NONE: the
 * subop must be 0; for SCATTER, the reductions; for EXPR, whose @subop is
 * its step count, NISA_EXPR_MAX_STEPS + 1). 0 for an unknown opcode.
 */
static inline unsigned int nisa_num_subops(unsigned int opcode)
{
#define NISA_NUM_SUBOPS_(NAME, name, cls, d, s0, s1, s2, subops) NISA_NSUB_##subops,
#define NISA_NSUB_NONE		1
#define NISA_NSUB_UNARY		NISA_NUM_UNARY
#define NISA_NSUB_BINARY	NISA_NUM_BINARY
#define NISA_NSUB_COMPARE	NISA_NUM_COMPARE
#define NISA_NSUB_REDUCE	NISA_NUM_REDUCE
#define NISA_NSUB_SOFTMAX	NISA_NUM_SOFTMAX
#define NISA_NSUB_INDEX		NISA_NUM_IDX
#define NISA_NSUB_RANDOM	NISA_NUM_RANDOM
#define NISA_NSUB_LINALG	NISA_NUM_LINALG
#define NISA_NSUB_SCAN		NISA_NUM_SCAN
#define NISA_NSUB_SCATTER	NISA_NUM_SCATTER
#define NISA_NSUB_EXPR_DATA	NISA_NUM_EXPR_DATA
#define NISA_NSUB_FFT		NISA_NUM_FFT
	static const unsigned short n[NISA_NUM_OPCODES] = {
		NISA_OPCODES(NISA_NUM_SUBOPS_)
	};
#undef NISA_NUM_SUBOPS_
#undef NISA_NSUB_NONE
#undef NISA_NSUB_UNARY
#undef NISA_NSUB_BINARY
#undef NISA_NSUB_COMPARE
#undef NISA_NSUB_REDUCE
#undef NISA_NSUB_SOFTMAX
#undef NISA_NSUB_INDEX
#undef NISA_NSUB_RANDOM
#undef NISA_NSUB_LINALG
#undef NISA_NSUB_SCAN
#undef NISA_NSUB_SCATTER
#undef NISA_NSUB_EXPR_DATA
#undef NISA_NSUB_FFT
	if (opcode == NISA_INSN_EXPR)
		return NISA_EXPR_MAX_STEPS + 1;
	return opcode < NISA_NUM_OPCODES ? n[opcode] : 0;
}

/*
 * What an instruction of @opcode, @subop, @flags and @axis does with
 * operand @i (0: dst, 1 + j: src[j]): NISA_ACCESS_READ and/or
 * NISA_ACCESS_WRITE, 0 when it does not use it (then the operand is all
 * zero in a valid instruction). Values, not a struct nisa_insn, so that the
 * device passes its fields in host order.
 */
static inline __u32 nisa_operand_access(unsigned int opcode, unsigned int subop,
					__u32 flags, int axis, unsigned int i)
{
#define NISA_ROLES_(NAME, name, cls, d, s0, s1, s2, ...)		\
	{ NISA_ROLE_##d, NISA_ROLE_##s0, NISA_ROLE_##s1, NISA_ROLE_##s2 },
#define NISA_LA_ROLES_(NAME, name, s0, s1, s2, ...)			\
	{ NISA_ROLE_W, NISA_ROLE_##s0, NISA_ROLE_##s1, NISA_ROLE_##s2 },
	static const unsigned char roles[NISA_NUM_OPCODES][4] = {
		NISA_OPCODES(NISA_ROLES_)
	};
	static const unsigned char la_roles[NISA_NUM_LINALG][4] = {
		NISA_LINALG_OPS(NISA_LA_ROLES_)
	};
#undef NISA_ROLES_
#undef NISA_LA_ROLES_
	const __u32 r = NISA_ACCESS_READ, w = NISA_ACCESS_WRITE;
	unsigned int role;

	if (opcode >= NISA_NUM_OPCODES || i > 3)
		return 0;
	role = roles[opcode][i];
	if (role == NISA_ROLE_LA)
		role = subop < NISA_NUM_LINALG ? la_roles[subop][i] : 0u;
	switch (role) {
	case NISA_ROLE_R:
		return r;
	case NISA_ROLE_W:
		return w;
	case NISA_ROLE_RW:
		return r | w;
	case NISA_ROLE_WA:
		return flags & NISA_IF_ACCUMULATE ? r | w : w;
	case NISA_ROLE_RS:
		return flags & NISA_IF_SCALAR ? 0 : r;
	case NISA_ROLE_RB:
		return flags & NISA_IF_BIAS ? r : 0;
	case NISA_ROLE_WI:
		return flags & NISA_IF_INDICES ? w : 0;
	case NISA_ROLE_WV:
		return flags & NISA_IF_LA_NOVEC ? 0 : w;
	case NISA_ROLE_WL:
		return flags & NISA_IF_LA_LOG ? w : 0;
	case NISA_ROLE_RX:
		return axis >= 0 && i <= (unsigned int)axis ? r : 0;
	case NISA_ROLE_XD:
		if (subop == NISA_EXPR_DATA_INPUTS)
			return r;
		return i == 0 ? w : 0;
	default:
		return 0;
	}
}

#if defined(__cplusplus)
}
#endif

#ifdef __cplusplus
#define NISA_STATIC_ASSERT_ static_assert
#else
#define NISA_STATIC_ASSERT_ _Static_assert
#endif

/* The driver checks a kernel's size in these units. */
NISA_STATIC_ASSERT_(sizeof(struct nisa_insn) == NISA_INSN_SIZE, "NISA_INSN_SIZE");

/* NISA_DTYPES lists every element type, in the enum's order. */
enum nisa_dtype_position_ {
#define NISA_DT_POS_(NAME, name, kind)	NISA_DT_POS_##NAME,
	NISA_DTYPES(NISA_DT_POS_)
#undef NISA_DT_POS_
	NISA_DT_POS_COUNT_
};
NISA_STATIC_ASSERT_((int)NISA_DT_POS_COUNT_ == (int)NISA_NUM_DTYPES,
		    "NISA_DTYPES: a type is missing");
#define NISA_DT_ORDER_(NAME, name, kind)				\
	NISA_STATIC_ASSERT_((int)NISA_##NAME == (int)NISA_DT_POS_##NAME, \
			    "NISA_DTYPES: " #NAME " out of the enum's order");
NISA_DTYPES(NISA_DT_ORDER_)
#undef NISA_DT_ORDER_

/* NISA_ERR_NAMES names every error code. */
#define NISA_ERR_COUNT_(s)	+1
NISA_STATIC_ASSERT_(0 NISA_ERR_NAMES(NISA_ERR_COUNT_) == (int)NISA_NUM_ERRS,
		    "NISA_ERR_NAMES: one name per error code");
#undef NISA_ERR_COUNT_
#undef NISA_STATIC_ASSERT_

#endif /* NEURON_ISA_H */

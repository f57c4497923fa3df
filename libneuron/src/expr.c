// SPDX-License-Identifier: MIT
/*
 * Elementwise expressions (NISA_INSN_EXPR): the program builders, the
 * check of a program against its operands' dtypes (so that a malformed one
 * is -EINVAL here rather than an error of the card later), the encoding of
 * an EXPR and its continuations, and nrn_op_expr(), which shapes its
 * operands as every elementwise operation does (ops.c) and issues each
 * group in one kernel.
 */
#include <errno.h>
#include <string.h>

#include "expr.h"

#define MAXD NRN_TENSOR_MAX_DIMS

static uint64_t nrn_expr_bits(double d)
{
	uint64_t u;

	memcpy(&u, &d, sizeof(u));
	return u;
}

/*
 * Sources a step of @op with @flags takes (the first ones its instruction
 * reads); -1 for an op a step cannot be (not elementwise).
 */
static int nrn_expr_nsrc(unsigned int op, uint32_t flags)
{
	int n = 0;

	if (nisa_opcode_class(op) != NISA_CLASS_EW)
		return -1;
	while (n < 3 && nisa_operand_access(op, 0, flags, 0, n + 1))
		n++;
	return n;
}

/* The step's op, subop, flags and ranges (not which registers are set). */
static int nrn_expr_step_ok(const struct nisa_expr_step *st)
{
	uint32_t allowed = 0;
	unsigned int limit = 1;
	int nsrc = nrn_expr_nsrc(st->op, st->flags);

	if (nsrc < 0 || st->rsvd || st->dtype >= NISA_NUM_DTYPES ||
	    nisa_dtype_is_complex(st->dtype) || st->dst >= NISA_EXPR_NUM_REGS)
		return -EINVAL;
	if (st->op == NISA_INSN_UNARY)
		limit = NISA_NUM_UNARY;
	if (st->op == NISA_INSN_BINARY) {
		limit = NISA_NUM_BINARY;
		allowed = NISA_IF_SCALAR | NISA_IF_REVERSE;
	}
	if (st->op == NISA_INSN_COMPARE) {
		limit = NISA_NUM_COMPARE;
		allowed = NISA_IF_SCALAR;
	}
	if (st->subop >= limit || (st->flags & ~allowed))
		return -EINVAL;
	for (int j = 0; j < 3; j++)
		if (j < nsrc ? st->src[j] >= NISA_EXPR_NUM_REGS : st->src[j] != 0)
			return -EINVAL;
	return 0;
}

NRN_EXPORT void nrn_expr_init(struct nrn_expr *e)
{
	memset(e, 0, sizeof(*e));
}

/* Append @st (checked); a failure is remembered for nrn_op_expr(). */
static int nrn_expr_push(struct nrn_expr *e, struct nisa_expr_step st)
{
	int ret;

	if (!e)
		return -EINVAL;
	ret = e->nsteps >= NISA_EXPR_MAX_STEPS ? -E2BIG : nrn_expr_step_ok(&st);
	if (ret) {
		if (!e->error)
			e->error = (unsigned int)-ret;
		return ret;
	}
	e->steps[e->nsteps++] = st;
	return 0;
}

/* A register number, or an invalid one (checked by nrn_expr_step_ok()). */
static uint8_t nrn_reg(unsigned int r)
{
	return r < NISA_EXPR_NUM_REGS ? (uint8_t)r : 0xff;
}

static struct nisa_expr_step nrn_step(unsigned int op, unsigned int subop,
				      unsigned int dst, enum nisa_dtype dtype)
{
	return (struct nisa_expr_step){
		.op = (uint8_t)op, .subop = (uint16_t)(subop > 0xffff ? 0xffff : subop),
		.dst = nrn_reg(dst),
		.dtype = (uint8_t)((unsigned int)dtype > 0xff ? 0xff : dtype),
	};
}

NRN_EXPORT int nrn_expr_fill(struct nrn_expr *e, unsigned int dst,
			     enum nisa_dtype dtype, double value)
{
	struct nisa_expr_step st = nrn_step(NISA_INSN_FILL, 0, dst, dtype);

	st.scalar = nrn_expr_bits(value);
	return nrn_expr_push(e, st);
}

NRN_EXPORT int nrn_expr_copy(struct nrn_expr *e, unsigned int dst,
			     enum nisa_dtype dtype, unsigned int src)
{
	struct nisa_expr_step st = nrn_step(NISA_INSN_COPY, 0, dst, dtype);

	st.src[0] = nrn_reg(src);
	return nrn_expr_push(e, st);
}

NRN_EXPORT int nrn_expr_unary(struct nrn_expr *e, enum nisa_unary fn,
			      unsigned int dst, enum nisa_dtype dtype,
			      unsigned int src, double p, double q)
{
	struct nisa_expr_step st = nrn_step(NISA_INSN_UNARY, fn, dst, dtype);

	st.src[0] = nrn_reg(src);
	st.scalar = nrn_expr_bits(p);
	st.alpha = nrn_expr_bits(q);
	return nrn_expr_push(e, st);
}

NRN_EXPORT int nrn_expr_binary(struct nrn_expr *e, enum nisa_binary op,
			       unsigned int dst, enum nisa_dtype dtype,
			       unsigned int a, unsigned int b, double alpha)
{
	struct nisa_expr_step st = nrn_step(NISA_INSN_BINARY, op, dst, dtype);

	st.src[0] = nrn_reg(a);
	st.src[1] = nrn_reg(b);
	st.alpha = nrn_expr_bits(alpha);
	return nrn_expr_push(e, st);
}

NRN_EXPORT int nrn_expr_binary_scalar(struct nrn_expr *e, enum nisa_binary op,
				      unsigned int dst, enum nisa_dtype dtype,
				      unsigned int a, double scalar, double alpha,
				      int reverse)
{
	struct nisa_expr_step st = nrn_step(NISA_INSN_BINARY, op, dst, dtype);

	st.flags = NISA_IF_SCALAR | (reverse ? NISA_IF_REVERSE : 0);
	st.src[0] = nrn_reg(a);
	st.scalar = nrn_expr_bits(scalar);
	st.alpha = nrn_expr_bits(alpha);
	return nrn_expr_push(e, st);
}

NRN_EXPORT int nrn_expr_compare(struct nrn_expr *e, enum nisa_compare cmp,
				unsigned int dst, enum nisa_dtype dtype,
				unsigned int a, unsigned int b)
{
	struct nisa_expr_step st = nrn_step(NISA_INSN_COMPARE, cmp, dst, dtype);

	st.src[0] = nrn_reg(a);
	st.src[1] = nrn_reg(b);
	return nrn_expr_push(e, st);
}

NRN_EXPORT int nrn_expr_compare_scalar(struct nrn_expr *e, enum nisa_compare cmp,
				       unsigned int dst, enum nisa_dtype dtype,
				       unsigned int a, double scalar)
{
	struct nisa_expr_step st = nrn_step(NISA_INSN_COMPARE, cmp, dst, dtype);

	st.flags = NISA_IF_SCALAR;
	st.src[0] = nrn_reg(a);
	st.scalar = nrn_expr_bits(scalar);
	return nrn_expr_push(e, st);
}

NRN_EXPORT int nrn_expr_where(struct nrn_expr *e, unsigned int dst,
			      enum nisa_dtype dtype, unsigned int cond,
			      unsigned int a, unsigned int b)
{
	struct nisa_expr_step st = nrn_step(NISA_INSN_WHERE, 0, dst, dtype);

	st.src[0] = nrn_reg(cond);
	st.src[1] = nrn_reg(a);
	st.src[2] = nrn_reg(b);
	return nrn_expr_push(e, st);
}

int nrn_expr_check(const struct nrn_expr *e, const uint8_t *in_dtypes,
		   unsigned int n, unsigned int dst_dtype)
{
	bool set[NISA_EXPR_NUM_REGS] = { false };

	if (n > NISA_EXPR_MAX_INPUTS)
		return -E2BIG;
	if (e->error)
		return -(int)e->error;
	if (!e->nsteps || e->nsteps > NISA_EXPR_MAX_STEPS)
		return -EINVAL;
	for (unsigned int i = 0; i < n; i++) {
		/* The card computes an EXPR in real arithmetic only. */
		if (in_dtypes[i] >= NISA_NUM_DTYPES ||
		    nisa_dtype_is_complex(in_dtypes[i]))
			return -EINVAL;
		set[i] = true;
	}
	for (unsigned int s = 0; s < e->nsteps; s++) {
		const struct nisa_expr_step *st = &e->steps[s];
		int nsrc = nrn_expr_nsrc(st->op, st->flags);

		if (nrn_expr_step_ok(st))
			return -EINVAL;
		for (int j = 0; j < nsrc; j++)
			if (!set[st->src[j]])
				return -EINVAL;	/* read before it is set */
		set[st->dst] = true;
	}
	if (nisa_dtype_is_complex(dst_dtype))
		return -EINVAL;
	return e->steps[e->nsteps - 1].dtype == dst_dtype ? 0 : -EINVAL;
}

int nrn_expr_step_from_insn(const struct nisa_insn *in, struct nisa_expr_step *st)
{
	int nsrc = nrn_expr_nsrc(in->opcode, in->flags);

	if (nsrc < 0 || in->rsvd)
		return -1;
	*st = (struct nisa_expr_step){
		.op = (uint8_t)in->opcode, .subop = in->subop, .flags = in->flags,
		.dtype = in->dst.dtype, .scalar = in->scalar, .alpha = in->alpha,
	};
	return nrn_expr_step_ok(st) ? -1 : nsrc;
}

unsigned int nrn_insn_group_length(const struct nisa_insn *in)
{
	if (in->opcode != NISA_INSN_EXPR || in->axis < 0 ||
	    in->axis > NISA_EXPR_MAX_INPUTS || in->subop > NISA_EXPR_MAX_STEPS)
		return 1;
	return nisa_expr_length(in->subop, (unsigned int)in->axis);
}

void nrn_expr_input_pos(unsigned int i, unsigned int *rec, unsigned int *opnd)
{
	if (i < 3) {
		*rec = 0;
		*opnd = i + 1;
	} else {
		*rec = 1 + (i - 3) / NISA_EXPR_INPUTS_PER_DATA;
		*opnd = (i - 3) % NISA_EXPR_INPUTS_PER_DATA;
	}
}

static struct nisa_tensor *nrn_expr_opnd(struct nisa_insn *in, unsigned int i)
{
	return i ? &in->src[i - 1] : &in->dst;
}

unsigned int nrn_expr_encode(const struct nrn_expr *e,
			     const struct nisa_tensor *dst,
			     const struct nisa_tensor *in, unsigned int n,
			     struct nisa_insn *out)
{
	unsigned int len = nisa_expr_length(e->nsteps, n);
	unsigned int nin = n > 3 ? (n - 3 + NISA_EXPR_INPUTS_PER_DATA - 1) /
				   NISA_EXPR_INPUTS_PER_DATA : 0;

	memset(out, 0, len * sizeof(*out));
	out[0].opcode = NISA_INSN_EXPR;
	out[0].subop = (uint16_t)e->nsteps;
	out[0].axis = (int32_t)n;
	out[0].dst = *dst;
	for (unsigned int r = 1; r <= nin; r++) {
		out[r].opcode = NISA_INSN_EXPR_DATA;
		out[r].subop = NISA_EXPR_DATA_INPUTS;
	}
	for (unsigned int i = 0; i < n; i++) {
		unsigned int rec, opnd;

		nrn_expr_input_pos(i, &rec, &opnd);
		*nrn_expr_opnd(&out[rec], opnd) = in[i];
	}
	for (unsigned int s = 0, r = 1 + nin; s < e->nsteps;
	     s += NISA_EXPR_STEPS_PER_DATA, r++) {
		struct nisa_expr_steps rec = {
			.opcode = NISA_INSN_EXPR_DATA, .subop = NISA_EXPR_DATA_STEPS,
			.dst = *dst,
		};

		for (unsigned int j = 0; j < NISA_EXPR_STEPS_PER_DATA &&
		     s + j < e->nsteps; j++)
			rec.step[j] = e->steps[s + j];
		memcpy(&out[r], &rec, sizeof(rec));
	}
	return len;
}

int nrn_stream_group_room_locked(struct nrn_stream *s, unsigned int len)
{
	if (s->capture)
		return 0;	/* each recorded instruction binds its own */
	if (nrn_stream_batch_full_locked(s, len) ||
	    s->batch.nslots + NRN_EXPR_MAX_BUFS > DRM_NEURON_MAX_BOS)
		return nrn_stream_flush_locked(s);
	return 0;
}

/*
 * Issue one group: bind every buffer it names first (dst for writing, then
 * the inputs for reading, in operand order), then push its instructions.
 * @room made sure that no flush happens inside the group; a capturing
 * stream records the group with the bindings made before it (stream.c).
 */
static int nrn_expr_issue_locked(struct nrn_stream *s, struct nisa_insn *code,
				 unsigned int len, unsigned int n,
				 struct nrn_buffer *dst,
				 struct nrn_buffer *const *in)
{
	unsigned int steps_at = len - (unsigned int)(code[0].subop +
				NISA_EXPR_STEPS_PER_DATA - 1) / NISA_EXPR_STEPS_PER_DATA;
	unsigned int dslot = 0, slot;
	int ret = nrn_stream_group_room_locked(s, len);

	if (!ret)
		ret = nrn_stream_slot_locked(s, dst, NISA_ACCESS_WRITE, &dslot);
	for (unsigned int i = 0; !ret && i < n; i++) {
		unsigned int rec, opnd;

		nrn_expr_input_pos(i, &rec, &opnd);
		ret = nrn_stream_slot_locked(s, in[i], NISA_ACCESS_READ, &slot);
		nrn_expr_opnd(&code[rec], opnd)->slot = (uint8_t)slot;
	}
	/* The EXPR and its STEPS records name dst, byte for byte the same. */
	code[0].dst.slot = (uint8_t)dslot;
	for (unsigned int r = steps_at; r < len; r++)
		code[r].dst.slot = (uint8_t)dslot;
	for (unsigned int r = 0; !ret && r < len; r++)
		ret = nrn_stream_push_locked(s, &code[r]);
	return ret;
}

NRN_EXPORT int nrn_op_expr(struct nrn_stream *s, const struct nrn_tensor_desc *dst,
			   const struct nrn_tensor_desc *const *inputs, unsigned int n,
			   const struct nrn_expr *expr)
{
	const struct nrn_tensor_desc *ts[NRN_EXPR_MAX_BUFS];
	struct nrn_buffer *bufs[NISA_EXPR_MAX_INPUTS];
	int64_t shape[MAXD], strides[NRN_EXPR_MAX_BUFS][MAXD], idx[MAXD] = { 0 };
	struct nisa_insn code[1 + 2 + NISA_EXPR_MAX_STEPS / NISA_EXPR_STEPS_PER_DATA + 1];
	uint8_t dtypes[NISA_EXPR_MAX_INPUTS];
	unsigned int ndim, nd, first;
	int64_t outer = 1, numel = 1;
	int ret;

	if (!s || !dst || !expr || (n && !inputs))
		return -EINVAL;
	if (n > NISA_EXPR_MAX_INPUTS)
		return -E2BIG;
	ret = nrn_check_tensor(s, dst);
	ts[0] = dst;
	for (unsigned int i = 0; !ret && i < n; i++) {
		ret = nrn_check_tensor(s, inputs[i]);
		ts[1 + i] = inputs[i];
		if (!ret) {
			dtypes[i] = (uint8_t)inputs[i]->dtype;
			bufs[i] = inputs[i]->buf;
		}
	}
	if (!ret)
		ret = nrn_expr_check(expr, dtypes, n, dst->dtype);
	if (ret)
		return ret;
	for (unsigned int d = 0; d < dst->ndim; d++)
		numel *= dst->shape[d];
	if (!numel)
		return 0;
	ret = nrn_shape_elementwise(ts, 1 + n, &ndim, shape, strides);
	if (ret)
		return ret;
	nd = ndim < NISA_MAX_DIMS ? ndim : NISA_MAX_DIMS;
	first = ndim - nd;
	for (unsigned int d = 0; d < first; d++)
		outer *= shape[d];
	if (outer > NRN_BATCH_MAX_OPS * 64)
		return -E2BIG;

	if (nrn_inherited(s->dev))
		return -EBADFD;
	pthread_mutex_lock(&s->lock);
	for (int64_t o = 0; !ret && o < outer; o++) {
		struct nisa_tensor t[NRN_EXPR_MAX_BUFS];
		unsigned int len;

		/* One group per index of the dims beyond the ISA's four. */
		for (unsigned int i = 0; i < 1 + n; i++) {
			int64_t extra = 0;

			for (unsigned int d = 0; d < first; d++)
				extra += idx[d] * strides[i][d];
			t[i] = (struct nisa_tensor){
				.dtype = (uint8_t)ts[i]->dtype, .ndim = (uint8_t)nd,
				.offset = ts[i]->offset + (uint64_t)(extra *
					  (int64_t)nisa_dtype_size(ts[i]->dtype)),
			};
			for (unsigned int d = 0; d < nd; d++) {
				t[i].shape[d] = (uint32_t)shape[first + d];
				t[i].strides[d] = strides[i][first + d];
			}
		}
		len = nrn_expr_encode(expr, &t[0], &t[1], n, code);
		ret = nrn_expr_issue_locked(s, code, len, n, dst->buf, bufs);
		for (unsigned int d = first; d-- > 0;) {
			if (++idx[d] < shape[d])
				break;
			idx[d] = 0;
		}
	}
	pthread_mutex_unlock(&s->lock);
	return ret;
}

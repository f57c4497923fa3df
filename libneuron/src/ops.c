// SPDX-License-Identifier: MIT
/*
 * The operations layer: tensor descriptors in, ISA instructions out, into
 * the stream's batch. It does what the ISA leaves to software: NumPy-style
 * broadcasting (as zero strides), merging dimensions that are contiguous in
 * every operand (fewer, longer loops on the card), and splitting operands of
 * more than NISA_MAX_DIMS dimensions into one instruction per leading index.
 */
#include <errno.h>
#include <string.h>

#include "internal.h"

#define MAXD NRN_TENSOR_MAX_DIMS
/* dst and up to three sources; an EXPR (expr.c) has up to eight inputs. */
#define MAX_OPERANDS (1 + NISA_EXPR_MAX_INPUTS)

/* An operand being shaped for the ISA. */
struct nrn_opnd {
	const struct nrn_tensor_desc *t;
	uint32_t access;
	uint64_t offset;
	int64_t strides[MAXD];
};

/* The common iteration space of an instruction's operands. */
struct nrn_space {
	unsigned int ndim;
	int64_t shape[MAXD];
	struct nrn_opnd op[MAX_OPERANDS];
	unsigned int nop;
	/* Reductions: the axis, where the destination has extent 1 (or -1). */
	int reduce_axis;
	/*
	 * Matmul: the space is dst's [.., M, N]; a's last dim and b's
	 * second-last are the inner dim @k instead.
	 */
	bool matmul;
	int64_t k;
	/*
	 * Random: the instruction's @alpha counts elements (the counter of
	 * its first one), so each instruction of a split operand starts at
	 * its first element's row-major index.
	 */
	bool counter;
};

NRN_EXPORT void nrn_tensor_contiguous(struct nrn_tensor_desc *t,
				      struct nrn_buffer *buf, uint64_t offset,
				      enum nisa_dtype dtype, unsigned int ndim,
				      const int64_t *shape)
{
	int64_t stride = 1;

	memset(t, 0, sizeof(*t));
	t->buf = buf;
	t->offset = offset;
	t->dtype = dtype;
	t->ndim = ndim > MAXD ? MAXD : ndim;
	for (int d = (int)t->ndim - 1; d >= 0; d--) {
		t->shape[d] = shape[d];
		t->strides[d] = stride;
		stride *= shape[d];
	}
}

static int64_t nrn_numel(const int64_t *shape, unsigned int ndim);

int nrn_check_tensor(struct nrn_stream *s, const struct nrn_tensor_desc *t)
{
	if (!t || t->ndim > MAXD || (unsigned int)t->dtype >= NISA_NUM_DTYPES)
		return -EINVAL;
	/* An empty tensor may have no memory at all. */
	if (!t->buf)
		return nrn_numel(t->shape, t->ndim) ? -EINVAL : 0;
	if (t->buf->dev != s->dev)
		return -EXDEV;
	if (t->buf->mem != NRN_MEM_DEVICE)
		return -EINVAL;
	if (t->offset % nisa_dtype_size(t->dtype))
		return -EINVAL;
	for (unsigned int d = 0; d < t->ndim; d++)
		if (t->shape[d] < 0 || t->shape[d] > UINT32_MAX)
			return -EINVAL;
	return 0;
}

static int64_t nrn_numel(const int64_t *shape, unsigned int ndim)
{
	int64_t n = 1;

	for (unsigned int d = 0; d < ndim; d++)
		n *= shape[d];
	return n;
}

/* Start a space shaped like @t. */
static void nrn_space_init(struct nrn_space *sp, const struct nrn_tensor_desc *t)
{
	memset(sp, 0, sizeof(*sp));
	sp->reduce_axis = -1;
	sp->ndim = t->ndim;
	memcpy(sp->shape, t->shape, sizeof(sp->shape));
}

/* Add @t, broadcast to the space's shape (right-aligned, size-1 dims). */
static int nrn_space_add(struct nrn_space *sp, const struct nrn_tensor_desc *t,
			 uint32_t access)
{
	struct nrn_opnd *o = &sp->op[sp->nop++];
	unsigned int lead = sp->ndim - t->ndim;

	if (t->ndim > sp->ndim)
		return -EINVAL;
	memset(o, 0, sizeof(*o));
	o->t = t;
	o->access = access;
	o->offset = t->offset;
	for (unsigned int d = 0; d < t->ndim; d++) {
		if (t->shape[d] == sp->shape[lead + d])
			o->strides[lead + d] = t->shape[d] == 1 ? 0 : t->strides[d];
		else if (t->shape[d] == 1)
			o->strides[lead + d] = 0;
		else
			return -EINVAL;
	}
	return 0;
}

/*
 * Drop size-1 dimensions and merge neighbours that are contiguous in every
 * operand. Dimensions in @keep (a bit mask) are neither dropped nor merged;
 * @pos (if not NULL) receives each kept dimension's new index.
 */
static void nrn_space_coalesce(struct nrn_space *sp, unsigned int keep,
			       unsigned int *pos)
{
	unsigned int n = 0, d, i;
	bool last_kept = false;

	for (d = 0; d < sp->ndim; d++) {
		bool kept = keep & (1u << d);

		if (sp->shape[d] == 1 && !kept)
			continue;
		if (n && !kept && !last_kept) {
			bool merge = true;

			for (i = 0; i < sp->nop; i++)
				if (sp->op[i].strides[n - 1] !=
				    sp->op[i].strides[d] * sp->shape[d])
					merge = false;
			if (merge) {
				sp->shape[n - 1] *= sp->shape[d];
				for (i = 0; i < sp->nop; i++)
					sp->op[i].strides[n - 1] = sp->op[i].strides[d];
				continue;
			}
		}
		if (kept && pos)
			pos[d] = n;
		sp->shape[n] = sp->shape[d];
		for (i = 0; i < sp->nop; i++)
			sp->op[i].strides[n] = sp->op[i].strides[d];
		last_kept = kept;
		n++;
	}
	if (!n) {
		sp->shape[0] = 1;
		for (i = 0; i < sp->nop; i++)
			sp->op[i].strides[0] = 0;
		n = 1;
	}
	sp->ndim = n;
}

/* The ISA operand for @o over the last @nd dims of the space, at @extra bytes. */
static struct nisa_tensor nrn_isa_tensor(const struct nrn_space *sp,
					const struct nrn_opnd *o, unsigned int slot,
					unsigned int first, unsigned int nd,
					uint64_t extra)
{
	struct nisa_tensor t = {
		.slot = (uint8_t)slot, .dtype = (uint8_t)o->t->dtype,
		.ndim = (uint8_t)nd, .offset = o->offset + extra,
	};

	for (unsigned int d = 0; d < nd; d++) {
		t.shape[d] = (uint32_t)sp->shape[first + d];
		t.strides[d] = o->strides[first + d];
	}
	return t;
}

/*
 * The buffer operand @i is bound to. An empty operand may have no memory
 * (nrn_check_tensor); its instruction operand reaches no byte, so it names
 * another operand's buffer (dst's, unless dst is the empty one) at offset
 * 0: a MATMUL with an empty inner dimension, a REDUCE over an empty axis, a
 * GATHER from an empty axis (which the card refuses: BAD_INDEX).
 */
static struct nrn_buffer *nrn_opnd_buf(const struct nrn_space *sp, unsigned int i)
{
	for (unsigned int j = 0; !sp->op[i].t->buf && j < sp->nop; j++)
		if (sp->op[j].t->buf)
			return sp->op[j].t->buf;
	return sp->op[i].t->buf;
}

/* Bind the operands' buffers, flushing first if they do not fit the batch. */
static int nrn_bind_locked(struct nrn_stream *s, const struct nrn_space *sp,
			   unsigned int ninsn, unsigned int *slots)
{
	unsigned int fresh = 0, i, j;
	int ret;

	for (i = 0; i < sp->nop; i++) {
		bool bound = false;

		for (j = 0; j < s->batch.nslots && !bound; j++)
			bound = s->slots[j] == nrn_opnd_buf(sp, i);
		for (j = 0; j < i && !bound; j++)
			bound = nrn_opnd_buf(sp, j) == nrn_opnd_buf(sp, i);
		fresh += !bound;
	}
	if (s->batch.nslots + fresh > DRM_NEURON_MAX_BOS ||
	    nrn_stream_batch_full_locked(s, ninsn)) {
		ret = nrn_stream_flush_locked(s);
		if (ret)
			return ret;
	}
	for (i = 0; i < sp->nop; i++) {
		ret = nrn_stream_slot_locked(s, nrn_opnd_buf(sp, i), sp->op[i].access,
					     &slots[i]);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * Encode @tmpl with its operands from the space: op[0] is dst, op[1..] the
 * sources. Dimensions beyond the last NISA_MAX_DIMS are looped over, one
 * instruction per index.
 */
static int nrn_emit(struct nrn_stream *s, struct nrn_space *sp,
		    const struct nisa_insn *tmpl)
{
	unsigned int nd = sp->ndim < NISA_MAX_DIMS ? sp->ndim : NISA_MAX_DIMS;
	unsigned int first = sp->ndim - nd, slots[MAX_OPERANDS], i, d;
	int64_t outer = nrn_numel(sp->shape, first), idx[MAXD] = { 0 }, dst_numel = 1;
	int ret;

	/*
	 * Nothing to do in an empty space, but for a reduction's axis: dst
	 * has extent 1 there, and an empty axis still writes it (a sum's 0).
	 */
	for (d = 0; d < sp->ndim; d++)
		dst_numel *= (int)d == sp->reduce_axis ? 1 : sp->shape[d];
	if (!dst_numel)
		return 0;
	if (outer > NRN_BATCH_MAX_OPS * 64)
		return -E2BIG;
	if (nrn_inherited(s->dev))
		return -EBADFD;
	pthread_mutex_lock(&s->lock);
	ret = nrn_bind_locked(s, sp, outer < NRN_BATCH_MAX_OPS ? (unsigned int)outer : 1,
			      slots);
	for (int64_t n = 0; !ret && n < outer; n++) {
		struct nisa_insn in = *tmpl;

		if (sp->counter)
			in.alpha += (uint64_t)n * (uint64_t)nrn_numel(sp->shape + first, nd);
		for (i = 0; i < sp->nop; i++) {
			uint64_t extra = 0;
			struct nisa_tensor t;

			for (d = 0; d < first; d++)
				extra += idx[d] * sp->op[i].strides[d] *
					 nisa_dtype_size(sp->op[i].t->dtype);
			t = nrn_isa_tensor(sp, &sp->op[i], slots[i], first, nd, extra);
			if (!sp->op[i].t->buf)
				t.offset = 0; /* empty, on dst's buffer */
			if (i == 0 && sp->reduce_axis >= (int)first)
				t.shape[sp->reduce_axis - first] = 1;
			if (sp->matmul && i == 1)
				t.shape[nd - 1] = (uint32_t)sp->k;
			if (sp->matmul && i == 2)
				t.shape[nd - 2] = (uint32_t)sp->k;
			if (i == 0)
				in.dst = t;
			else
				in.src[i - 1] = t;
		}
		ret = nrn_stream_push_locked(s, &in);
		/* A flush inside the loop ends the bindings: bind again. */
		if (!ret && !s->batch.count && n + 1 < outer)
			ret = nrn_bind_locked(s, sp, 1, slots);
		for (d = first; d-- > 0;) {
			if (++idx[d] < sp->shape[d])
				break;
			idx[d] = 0;
		}
	}
	pthread_mutex_unlock(&s->lock);
	return ret;
}

static uint64_t nrn_bits(double d)
{
	uint64_t u;

	memcpy(&u, &d, sizeof(u));
	return u;
}

/* Elementwise: dst and up to three sources broadcast to dst's shape. */
static int nrn_elementwise(struct nrn_stream *s, const struct nisa_insn *tmpl,
			   const struct nrn_tensor_desc *dst,
			   const struct nrn_tensor_desc *const *srcs,
			   unsigned int nsrc)
{
	struct nrn_space sp;
	int ret;

	if (!s)
		return -EINVAL;
	ret = nrn_check_tensor(s, dst);
	for (unsigned int i = 0; !ret && i < nsrc; i++)
		ret = nrn_check_tensor(s, srcs[i]);
	if (ret)
		return ret;
	if (!nrn_numel(dst->shape, dst->ndim))
		return 0;
	nrn_space_init(&sp, dst);
	ret = nrn_space_add(&sp, dst, NISA_ACCESS_WRITE);
	for (unsigned int i = 0; !ret && i < nsrc; i++)
		ret = nrn_space_add(&sp, srcs[i], NISA_ACCESS_READ);
	if (ret)
		return ret;
	nrn_space_coalesce(&sp, 0, NULL);
	return nrn_emit(s, &sp, tmpl);
}

/*
 * For expr.c: @ts[0] (dst) and @ts[1..n) broadcast to its shape, shaped as
 * the elementwise operations shape theirs (broadcast, coalesced): *@ndim
 * dims of @shape, operand i's strides in @strides[i]. -EINVAL if one does
 * not broadcast.
 */
int nrn_shape_elementwise(const struct nrn_tensor_desc *const *ts, unsigned int n,
			  unsigned int *ndim, int64_t *shape,
			  int64_t (*strides)[NRN_TENSOR_MAX_DIMS])
{
	struct nrn_space sp;
	int ret = 0;

	if (n > MAX_OPERANDS)
		return -E2BIG;
	nrn_space_init(&sp, ts[0]);
	for (unsigned int i = 0; !ret && i < n; i++)
		ret = nrn_space_add(&sp, ts[i], i ? NISA_ACCESS_READ : NISA_ACCESS_WRITE);
	if (ret)
		return ret;
	nrn_space_coalesce(&sp, 0, NULL);
	*ndim = sp.ndim;
	memcpy(shape, sp.shape, sizeof(sp.shape));
	for (unsigned int i = 0; i < n; i++)
		memcpy(strides[i], sp.op[i].strides, sizeof(sp.op[i].strides));
	return 0;
}

NRN_EXPORT int nrn_op_fill(struct nrn_stream *s, const struct nrn_tensor_desc *dst,
			   double value)
{
	struct nisa_insn in = { .opcode = NISA_INSN_FILL, .scalar = nrn_bits(value) };

	return nrn_elementwise(s, &in, dst, NULL, 0);
}

NRN_EXPORT int nrn_op_fill_complex(struct nrn_stream *s,
				   const struct nrn_tensor_desc *dst, double re,
				   double im)
{
	struct nisa_insn in = { .opcode = NISA_INSN_FILL, .scalar = nrn_bits(re),
			       .alpha = nrn_bits(im) };

	if (!dst || dst->dtype != NISA_C64)
		return -EINVAL;
	return nrn_elementwise(s, &in, dst, NULL, 0);
}

NRN_EXPORT int nrn_op_copy(struct nrn_stream *s, const struct nrn_tensor_desc *dst,
			   const struct nrn_tensor_desc *src)
{
	struct nisa_insn in = { .opcode = NISA_INSN_COPY };

	return nrn_elementwise(s, &in, dst, &src, 1);
}

NRN_EXPORT int nrn_op_unary(struct nrn_stream *s, enum nisa_unary fn,
			    const struct nrn_tensor_desc *dst,
			    const struct nrn_tensor_desc *src)
{
	struct nisa_insn in = { .opcode = NISA_INSN_UNARY, .subop = (uint16_t)fn };

	if ((unsigned int)fn >= NISA_NUM_UNARY)
		return -EINVAL;
	return nrn_elementwise(s, &in, dst, &src, 1);
}

NRN_EXPORT int nrn_op_unary_param(struct nrn_stream *s, enum nisa_unary fn,
				  const struct nrn_tensor_desc *dst,
				  const struct nrn_tensor_desc *src, double p,
				  double q)
{
	struct nisa_insn in = { .opcode = NISA_INSN_UNARY, .subop = (uint16_t)fn,
			       .scalar = nrn_bits(p), .alpha = nrn_bits(q) };

	if ((unsigned int)fn >= NISA_NUM_UNARY)
		return -EINVAL;
	return nrn_elementwise(s, &in, dst, &src, 1);
}

NRN_EXPORT int nrn_op_binary(struct nrn_stream *s, enum nisa_binary op,
			     const struct nrn_tensor_desc *dst,
			     const struct nrn_tensor_desc *a,
			     const struct nrn_tensor_desc *b, double alpha)
{
	const struct nrn_tensor_desc *srcs[2] = { a, b };
	struct nisa_insn in = { .opcode = NISA_INSN_BINARY, .subop = (uint16_t)op,
			       .alpha = nrn_bits(alpha) };

	if ((unsigned int)op >= NISA_NUM_BINARY)
		return -EINVAL;
	return nrn_elementwise(s, &in, dst, srcs, 2);
}

NRN_EXPORT int nrn_op_binary_scalar(struct nrn_stream *s, enum nisa_binary op,
				    const struct nrn_tensor_desc *dst,
				    const struct nrn_tensor_desc *a, double scalar,
				    double alpha, int reverse)
{
	struct nisa_insn in = { .opcode = NISA_INSN_BINARY, .subop = (uint16_t)op,
			       .flags = NISA_IF_SCALAR | (reverse ? NISA_IF_REVERSE : 0),
			       .scalar = nrn_bits(scalar), .alpha = nrn_bits(alpha) };

	if ((unsigned int)op >= NISA_NUM_BINARY)
		return -EINVAL;
	return nrn_elementwise(s, &in, dst, &a, 1);
}

NRN_EXPORT int nrn_op_compare(struct nrn_stream *s, enum nisa_compare cmp,
			      const struct nrn_tensor_desc *dst,
			      const struct nrn_tensor_desc *a,
			      const struct nrn_tensor_desc *b)
{
	const struct nrn_tensor_desc *srcs[2] = { a, b };
	struct nisa_insn in = { .opcode = NISA_INSN_COMPARE, .subop = (uint16_t)cmp };

	if ((unsigned int)cmp >= NISA_NUM_COMPARE)
		return -EINVAL;
	return nrn_elementwise(s, &in, dst, srcs, 2);
}

NRN_EXPORT int nrn_op_compare_scalar(struct nrn_stream *s, enum nisa_compare cmp,
				     const struct nrn_tensor_desc *dst,
				     const struct nrn_tensor_desc *a, double scalar)
{
	struct nisa_insn in = { .opcode = NISA_INSN_COMPARE, .subop = (uint16_t)cmp,
			       .flags = NISA_IF_SCALAR, .scalar = nrn_bits(scalar) };

	if ((unsigned int)cmp >= NISA_NUM_COMPARE)
		return -EINVAL;
	return nrn_elementwise(s, &in, dst, &a, 1);
}

NRN_EXPORT int nrn_op_where(struct nrn_stream *s, const struct nrn_tensor_desc *dst,
			    const struct nrn_tensor_desc *cond,
			    const struct nrn_tensor_desc *a,
			    const struct nrn_tensor_desc *b)
{
	const struct nrn_tensor_desc *srcs[3] = { cond, a, b };
	struct nisa_insn in = { .opcode = NISA_INSN_WHERE };

	return nrn_elementwise(s, &in, dst, srcs, 3);
}

/* Resolve a possibly negative @axis of an @ndim-dim tensor. */
static int nrn_axis(int axis, unsigned int ndim, unsigned int *out)
{
	int n = (int)(ndim ? ndim : 1);

	if (axis < -n || axis >= n)
		return -EINVAL;
	*out = (unsigned int)(axis < 0 ? axis + n : axis);
	return 0;
}

/*
 * An axis operation (reduce, softmax): @dst is @src's shape, with the axis
 * of extent 1 (kept or dropped) when @reduce. The axis stays a dimension of
 * its own; the others merge where they can.
 */
static int nrn_axis_op(struct nrn_stream *s, struct nisa_insn *in,
		       const struct nrn_tensor_desc *dst,
		       const struct nrn_tensor_desc *src, int axis, bool reduce)
{
	struct nrn_tensor_desc d = *dst;
	struct nrn_space sp;
	unsigned int ax, i;
	int ret;

	if (!s)
		return -EINVAL;
	ret = nrn_check_tensor(s, dst);
	if (!ret)
		ret = nrn_check_tensor(s, src);
	if (!ret)
		ret = nrn_axis(axis, src->ndim, &ax);
	if (ret)
		return ret;
	if (reduce && dst->ndim + 1 == src->ndim) {
		/* Without the reduced dim: put it back, extent 1. */
		if (src->ndim > MAXD)
			return -EINVAL;
		for (i = src->ndim - 1; i > ax; i--) {
			d.shape[i] = dst->shape[i - 1];
			d.strides[i] = dst->strides[i - 1];
		}
		d.shape[ax] = 1;
		d.strides[ax] = 0;
		d.ndim = src->ndim;
	}
	if (d.ndim != src->ndim)
		return -EINVAL;
	if (!nrn_numel(dst->shape, dst->ndim))
		return 0;
	for (i = 0; i < src->ndim; i++) {
		int64_t want = reduce && i == ax ? 1 : src->shape[i];

		if (d.shape[i] != want)
			return -EINVAL;
	}
	if (!src->ndim) {
		/* A scalar: the axis is a dimension of extent 1. */
		nrn_space_init(&sp, src);
		sp.ndim = 1;
		sp.shape[0] = 1;
		sp.nop = 2;
		sp.op[0] = (struct nrn_opnd){ .t = dst, .access = NISA_ACCESS_WRITE,
					      .offset = dst->offset };
		sp.op[1] = (struct nrn_opnd){ .t = src, .access = NISA_ACCESS_READ,
					      .offset = src->offset };
		in->axis = 0;
		return nrn_emit(s, &sp, in);
	}
	nrn_space_init(&sp, src);
	ret = nrn_space_add(&sp, &d, NISA_ACCESS_WRITE);
	if (!ret)
		ret = nrn_space_add(&sp, src, NISA_ACCESS_READ);
	if (ret)
		return ret;
	sp.op[0].t = dst;
	{
		unsigned int pos[MAXD] = { 0 };

		nrn_space_coalesce(&sp, 1u << ax, pos);
		i = pos[ax];
	}
	if (sp.ndim > NISA_MAX_DIMS && i < sp.ndim - NISA_MAX_DIMS)
		return -E2BIG; /* the axis must be among the last four dims */
	if (reduce)
		sp.reduce_axis = (int)i;
	/* Counted from the end: the same in the space and in the operand. */
	in->axis = (int32_t)i - (int32_t)sp.ndim;
	return nrn_emit(s, &sp, in);
}

NRN_EXPORT int nrn_op_reduce(struct nrn_stream *s, enum nisa_reduce red,
			     const struct nrn_tensor_desc *dst,
			     const struct nrn_tensor_desc *src, int axis)
{
	struct nisa_insn in = { .opcode = NISA_INSN_REDUCE, .subop = (uint16_t)red };

	if ((unsigned int)red >= NISA_NUM_REDUCE)
		return -EINVAL;
	return nrn_axis_op(s, &in, dst, src, axis, true);
}

NRN_EXPORT int nrn_op_softmax(struct nrn_stream *s, enum nisa_softmax variant,
			      const struct nrn_tensor_desc *dst,
			      const struct nrn_tensor_desc *src, int axis)
{
	struct nisa_insn in = { .opcode = NISA_INSN_SOFTMAX, .subop = (uint16_t)variant };

	if ((unsigned int)variant >= NISA_NUM_SOFTMAX)
		return -EINVAL;
	return nrn_axis_op(s, &in, dst, src, axis, false);
}

/* An operand exactly as given (at most NISA_MAX_DIMS dims). */
static struct nisa_tensor nrn_isa_plain(const struct nrn_tensor_desc *t,
				       unsigned int slot)
{
	struct nisa_tensor r = { .slot = (uint8_t)slot, .dtype = (uint8_t)t->dtype,
				.ndim = (uint8_t)t->ndim, .offset = t->buf ? t->offset : 0 };

	for (unsigned int d = 0; d < t->ndim; d++) {
		r.shape[d] = (uint32_t)t->shape[d];
		r.strides[d] = t->strides[d];
	}
	return r;
}

/* Encode one instruction whose operands need no reshaping. */
int nrn_emit_plain_if(struct nrn_stream *s, struct nisa_insn *in,
		      const struct nrn_tensor_desc *const *ts,
		      const uint32_t *access, unsigned int n, unsigned int empty_ok)
{
	unsigned int slots[MAX_OPERANDS];
	struct nrn_space sp = { .nop = n };
	int ret;

	for (unsigned int i = 0; i < n; i++) {
		ret = nrn_check_tensor(s, ts[i]);
		if (ret)
			return ret;
		if (ts[i]->ndim > NISA_MAX_DIMS)
			return -E2BIG;
		sp.op[i] = (struct nrn_opnd){ .t = ts[i], .access = access[i] };
	}
	for (unsigned int i = 0; i < n; i++)
		if ((empty_ok & (1u << i)) && !nrn_numel(ts[i]->shape, ts[i]->ndim))
			return 0; /* nothing to compute */
	if (nrn_inherited(s->dev))
		return -EBADFD;
	pthread_mutex_lock(&s->lock);
	ret = nrn_bind_locked(s, &sp, 1, slots);
	if (!ret) {
		in->dst = nrn_isa_plain(ts[0], slots[0]);
		for (unsigned int i = 1; i < n; i++)
			in->src[i - 1] = nrn_isa_plain(ts[i], slots[i]);
		ret = nrn_stream_push_locked(s, in);
	}
	pthread_mutex_unlock(&s->lock);
	return ret;
}

int nrn_emit_plain(struct nrn_stream *s, struct nisa_insn *in,
		   const struct nrn_tensor_desc *const *ts,
		   const uint32_t *access, unsigned int n)
{
	return nrn_emit_plain_if(s, in, ts, access, n, (1u << n) - 1);
}

/*
 * GATHER, SCATTER_ADD and SCATTER (@ts: dst, src, index) of more than
 * NISA_MAX_DIMS dims: one instruction per index of a dim other than the
 * axis, taken in the operands of full rank (not a 1-D select-form index),
 * over the smallest of their extents there (the index's, which bounds the
 * others'). A dim of extent 1 goes first: it costs no extra instruction.
 */
int nrn_emit_indexed(struct nrn_stream *s, struct nisa_insn *in,
		     const struct nrn_tensor_desc *const *ts, const uint32_t *access)
{
	unsigned int nd = ts[0]->ndim, d, i, cut = nd;
	struct nrn_tensor_desc sub[3];
	const struct nrn_tensor_desc *subp[3] = { &sub[0], &sub[1], &sub[2] };
	int32_t axis = in->axis < 0 ? in->axis + (int32_t)nd : in->axis;
	unsigned int moving = in->opcode == NISA_INSN_GATHER ? 0 : 1;
	int64_t ext[MAXD], total = 1;
	int ret = 0;

	for (i = 0; i < 3; i++) {
		ret = nrn_check_tensor(s, ts[i]);
		if (ret)
			return ret;
	}
	/*
	 * Nothing to do without an index, or without what moves (GATHER's dst,
	 * the scatters' src); an empty axis to index is the card's BAD_INDEX.
	 */
	if (!nrn_numel(ts[2]->shape, ts[2]->ndim) ||
	    !nrn_numel(ts[moving]->shape, ts[moving]->ndim))
		return 0;
	if (nd <= NISA_MAX_DIMS || ts[1]->ndim != nd || axis < 0 || axis >= (int32_t)nd)
		return nrn_emit_plain_if(s, in, ts, access, 3, 0);
	for (d = 0; d < nd; d++) {
		ext[d] = INT64_MAX;
		for (i = 0; i < 3; i++)
			if (ts[i]->ndim == nd && ts[i]->shape[d] < ext[d])
				ext[d] = ts[i]->shape[d];
		if ((int32_t)d != axis && (cut == nd || (ext[d] == 1 && ext[cut] != 1)))
			cut = d;
	}
	for (d = 0; d + NISA_MAX_DIMS < nd; d++)
		total *= ext[d] ? ext[d] : 1;
	if (total > NRN_BATCH_MAX_OPS * 64)
		return -E2BIG;
	for (int64_t k = 0; !ret && k < ext[cut]; k++) {
		struct nisa_insn one = *in;

		for (i = 0; i < 3; i++) {
			sub[i] = *ts[i];
			if (ts[i]->ndim != nd)
				continue;
			sub[i].offset += (uint64_t)(k * ts[i]->strides[cut] *
						    (int64_t)nisa_dtype_size(ts[i]->dtype));
			for (d = cut; d + 1 < nd; d++) {
				sub[i].shape[d] = ts[i]->shape[d + 1];
				sub[i].strides[d] = ts[i]->strides[d + 1];
			}
			sub[i].ndim = nd - 1;
		}
		one.axis = axis - ((int32_t)cut < axis);
		ret = nrn_emit_indexed(s, &one, subp, access);
	}
	return ret;
}

NRN_EXPORT int nrn_op_gather(struct nrn_stream *s, enum nisa_index_mode mode,
			     const struct nrn_tensor_desc *dst,
			     const struct nrn_tensor_desc *src,
			     const struct nrn_tensor_desc *index, int axis)
{
	const struct nrn_tensor_desc *ts[3] = { dst, src, index };
	const uint32_t access[3] = { NISA_ACCESS_WRITE, NISA_ACCESS_READ, NISA_ACCESS_READ };
	struct nisa_insn in = { .opcode = NISA_INSN_GATHER, .subop = (uint16_t)mode,
			       .axis = axis };

	if (!s || (unsigned int)mode >= NISA_NUM_IDX)
		return -EINVAL;
	return nrn_emit_indexed(s, &in, ts, access);
}

NRN_EXPORT int nrn_op_scatter_add(struct nrn_stream *s, enum nisa_index_mode mode,
				  const struct nrn_tensor_desc *dst,
				  const struct nrn_tensor_desc *src,
				  const struct nrn_tensor_desc *index, int axis)
{
	const struct nrn_tensor_desc *ts[3] = { dst, src, index };
	const uint32_t access[3] = { NISA_ACCESS_READ | NISA_ACCESS_WRITE,
				     NISA_ACCESS_READ, NISA_ACCESS_READ };
	struct nisa_insn in = { .opcode = NISA_INSN_SCATTER_ADD, .subop = (uint16_t)mode,
			       .axis = axis };

	if (!s || (unsigned int)mode >= NISA_NUM_IDX)
		return -EINVAL;
	return nrn_emit_indexed(s, &in, ts, access);
}

/*
 * Matmul: the last two dims are the matrices; the batch dims of a, b and
 * the bias broadcast to dst's, then merge where they can (the ISA has two
 * batch dims; beyond that, one instruction per leading index).
 */
NRN_EXPORT int nrn_op_matmul(struct nrn_stream *s, const struct nrn_tensor_desc *dst,
			     const struct nrn_tensor_desc *a,
			     const struct nrn_tensor_desc *b,
			     const struct nrn_tensor_desc *bias, int accumulate)
{
	struct nisa_insn in = { .opcode = NISA_INSN_MATMUL };
	struct nrn_tensor_desc av, bv;
	struct nrn_space sp;
	unsigned int nd;
	int ret;

	if (!s)
		return -EINVAL;
	ret = nrn_check_tensor(s, dst);
	if (!ret)
		ret = nrn_check_tensor(s, a);
	if (!ret)
		ret = nrn_check_tensor(s, b);
	if (!ret && bias)
		ret = nrn_check_tensor(s, bias);
	if (ret)
		return ret;
	nd = dst->ndim;
	if (nd < 2 || a->ndim < 2 || b->ndim < 2 || a->ndim > nd || b->ndim > nd)
		return -EINVAL;
	if (a->shape[a->ndim - 2] != dst->shape[nd - 2] ||
	    b->shape[b->ndim - 1] != dst->shape[nd - 1] ||
	    a->shape[a->ndim - 1] != b->shape[b->ndim - 2])
		return -EINVAL;
	if (!nrn_numel(dst->shape, dst->ndim))
		return 0;

	/* Broadcast a's and b's batch dims by giving them dst's matrix dims. */
	av = *a;
	bv = *b;
	av.shape[a->ndim - 1] = dst->shape[nd - 1];
	av.strides[a->ndim - 1] = 0;
	bv.shape[b->ndim - 2] = dst->shape[nd - 2];
	bv.strides[b->ndim - 2] = 0;
	nrn_space_init(&sp, dst);
	ret = nrn_space_add(&sp, dst, NISA_ACCESS_WRITE |
			    (accumulate ? NISA_ACCESS_READ : 0));
	if (!ret)
		ret = nrn_space_add(&sp, &av, NISA_ACCESS_READ);
	if (!ret)
		ret = nrn_space_add(&sp, &bv, NISA_ACCESS_READ);
	if (!ret && bias)
		ret = nrn_space_add(&sp, bias, NISA_ACCESS_READ);
	if (ret)
		return ret;
	/* Restore the real matrix strides of a ([M, K]) and b ([K, N]). */
	sp.op[1].t = a;
	sp.op[2].t = b;
	sp.op[1].strides[nd - 2] = a->strides[a->ndim - 2];
	sp.op[1].strides[nd - 1] = a->strides[a->ndim - 1];
	sp.op[2].strides[nd - 2] = b->strides[b->ndim - 2];
	sp.op[2].strides[nd - 1] = b->strides[b->ndim - 1];
	/* a's shape in the space is [.., M, N]; the ISA needs [.., M, K]. */
	sp.matmul = true;
	sp.k = a->shape[a->ndim - 1];
	if (!sp.k && !bias && !accumulate)
		return nrn_op_fill(s, dst, 0); /* an empty product: zeros */
	nrn_space_coalesce(&sp, (1u << (nd - 1)) | (1u << (nd - 2)), NULL);
	in.flags = (accumulate ? NISA_IF_ACCUMULATE : 0) | (bias ? NISA_IF_BIAS : 0);
	return nrn_emit(s, &sp, &in);
}

/* The distributions each dtype takes (docs/hardware.md, "Random numbers"). */
static bool nrn_random_dtype_ok(enum nisa_random dist, enum nisa_dtype dtype)
{
	bool floating = nisa_dtype_is_float(dtype);

	switch (dist) {
	case NISA_RNG_UNIFORM:
	case NISA_RNG_NORMAL:
		return floating;
	case NISA_RNG_BITS:
		return dtype == NISA_I32 || dtype == NISA_I64 ||
		       dtype == NISA_BOOL || dtype == NISA_U8 ||
		       dtype == NISA_I8 || dtype == NISA_I16;
	default:
		return false;
	}
}

/*
 * Random numbers: dst's dimensions merge in row-major order (so element
 * i stays element i); an operand of more than NISA_MAX_DIMS dims becomes
 * one instruction per leading index, each with the counter of its first
 * element.
 */
NRN_EXPORT int nrn_op_random(struct nrn_stream *s, enum nisa_random dist,
			     const struct nrn_tensor_desc *dst, uint64_t seed,
			     uint64_t offset)
{
	struct nisa_insn in = { .opcode = NISA_INSN_RANDOM, .subop = (uint16_t)dist,
			       .scalar = seed, .alpha = offset };
	struct nrn_space sp;
	int ret;

	if (!s || (unsigned int)dist >= NISA_NUM_RANDOM)
		return -EINVAL;
	ret = nrn_check_tensor(s, dst);
	if (ret)
		return ret;
	if (!nrn_random_dtype_ok(dist, dst->dtype))
		return -EINVAL;
	if (!nrn_numel(dst->shape, dst->ndim))
		return 0;
	nrn_space_init(&sp, dst);
	ret = nrn_space_add(&sp, dst, NISA_ACCESS_WRITE);
	if (ret)
		return ret;
	nrn_space_coalesce(&sp, 0, NULL);
	sp.counter = true;
	return nrn_emit(s, &sp, &in);
}

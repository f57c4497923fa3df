// SPDX-License-Identifier: MIT
/*
 * Stream capture: while a stream captures, stream.c hands each instruction
 * the operations encode to nrn_capture_record() instead of the batch, and
 * copy.c, kernel.c, graph.c record copies, kernels and graph launches here.
 * Nothing is submitted. A capture owns a reference to each buffer it names
 * and a pool of constants (bytes copied from user memory).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"

int nrn_capture_fail(struct nrn_capture *c, int err)
{
	if (c && err && !c->error)
		c->error = err;
	return err;
}

/* The index of @buf in the capture's table, adding it (with a reference). */
static int nrn_capture_buf(struct nrn_capture *c, struct nrn_buffer *buf,
			   uint32_t *idx)
{
	unsigned int i;

	for (i = c->nbufs; i-- > 0;) {
		if (c->bufs[i] == buf) {
			*idx = i;
			return 0;
		}
	}
	if (c->nbufs == c->bufs_cap) {
		unsigned int cap = c->bufs_cap ? 2 * c->bufs_cap : 16;
		struct nrn_buffer **n = realloc(c->bufs, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		c->bufs = n;
		c->bufs_cap = cap;
	}
	nrn_buffer_get(buf);
	c->bufs[c->nbufs] = buf;
	*idx = c->nbufs++;
	return 0;
}

int nrn_capture_record(struct nrn_capture *c, const struct nisa_insn *insn,
		       struct nrn_buffer *const *bufs, const bool *is_const,
		       const uint32_t *access)
{
	struct nrn_capture_insn r = { .insn = *insn };
	int ret;

	if (c->error)
		return 0;	/* failed already: nothing more is kept */
	if (insn->opcode == NISA_INSN_RANDOM ||
	    (insn->opcode == NISA_INSN_TIMESTAMP && !(c->flags & NRN_CAPTURE_TIMESTAMPS)))
		return nrn_capture_fail(c, -ENOTSUP);
	if (c->count == c->cap) {
		unsigned int cap = c->cap ? 2 * c->cap : 64;
		struct nrn_capture_insn *n = realloc(c->insns, cap * sizeof(*n));

		if (!n)
			return nrn_capture_fail(c, -ENOMEM);
		c->insns = n;
		c->cap = cap;
	}
	for (unsigned int i = 0; i < NRN_GRAPH_OPNDS; i++) {
		struct nisa_tensor *t = i ? &r.insn.src[i - 1] : &r.insn.dst;

		r.buf[i] = NRN_GRAPH_NONE;
		r.access[i] = 0;
		if (is_const && is_const[i]) {
			r.buf[i] = NRN_CAPTURE_CONST;
		} else if (bufs[i]) {
			if (bufs[i]->dev != c->dev || bufs[i]->mem != NRN_MEM_DEVICE)
				return nrn_capture_fail(c, -EINVAL);
			ret = nrn_capture_buf(c, bufs[i], &r.buf[i]);
			if (ret)
				return nrn_capture_fail(c, ret);
		} else {
			continue;	/* untouched: maybe not a tensor (EXPR steps) */
		}
		t->slot = 0;
		r.access[i] = access[i];
	}
	if (r.buf[0] == NRN_GRAPH_NONE)
		return nrn_capture_fail(c, -EINVAL); /* every instruction writes */
	c->insns[c->count++] = r;
	return 0;
}

int nrn_capture_add_const(struct nrn_capture *c, const void *p, uint64_t len,
			  uint64_t *off)
{
	uint64_t start = (c->const_size + 63) & ~(uint64_t)63;

	if (c->error) {
		*off = 0;
		return 0;
	}
	if (start + len > c->const_cap) {
		uint64_t cap = c->const_cap ? 2 * c->const_cap : 4096;
		uint8_t *n;

		while (cap < start + len)
			cap *= 2;
		n = realloc(c->consts, cap);
		if (!n)
			return nrn_capture_fail(c, -ENOMEM);
		c->consts = n;
		c->const_cap = cap;
	}
	memset(c->consts + c->const_size, 0, start - c->const_size);
	memcpy(c->consts + start, p, len);
	c->const_size = start + len;
	*off = start;
	return 0;
}

/*
 * A byte copy as COPY instructions of the widest integer type the offsets
 * and the length allow (integer copies are exact), each at most 2^30 bytes.
 */
int nrn_capture_copy(struct nrn_capture *c, struct nrn_buffer *dst,
		     uint64_t dst_off, struct nrn_buffer *src, bool src_const,
		     uint64_t src_off, uint64_t len)
{
	const uint32_t access[NRN_GRAPH_OPNDS] = { NISA_ACCESS_WRITE, NISA_ACCESS_READ };
	const bool is_const[NRN_GRAPH_OPNDS] = { false, src_const };
	struct nrn_buffer *bufs[NRN_GRAPH_OPNDS] = { dst, src_const ? NULL : src };
	uint64_t all = dst_off | src_off | len;
	unsigned int dtype = !(all % 8) ? NISA_I64 : !(all % 4) ? NISA_I32 : NISA_U8;
	unsigned int esize = nisa_dtype_size(dtype);
	int ret = 0;

	while (!ret && len) {
		uint64_t n = len < (1u << 30) ? len : (1u << 30);
		struct nisa_insn in = { .opcode = NISA_INSN_COPY };

		in.dst = (struct nisa_tensor){ .dtype = (uint8_t)dtype, .ndim = 1,
					      .offset = dst_off,
					      .shape = { (uint32_t)(n / esize) },
					      .strides = { 1 } };
		in.src[0] = in.dst;
		in.src[0].offset = src_off;
		ret = nrn_capture_record(c, &in, bufs, is_const, access);
		dst_off += n;
		src_off += n;
		len -= n;
	}
	return ret;
}

static void nrn_capture_free(struct nrn_capture *c)
{
	for (unsigned int i = 0; i < c->nbufs; i++)
		nrn_buffer_put(c->bufs[i]);
	free(c->bufs);
	free(c->insns);
	free(c->consts);
	free(c);
}

NRN_EXPORT void nrn_capture_destroy(struct nrn_capture *c)
{
	if (c)
		nrn_capture_free(c);
}

NRN_EXPORT unsigned int nrn_capture_count(const struct nrn_capture *c)
{
	return c ? c->count : 0;
}

NRN_EXPORT unsigned int nrn_capture_buffers(const struct nrn_capture *c,
					    struct nrn_buffer **bufs, unsigned int n)
{
	if (!c)
		return 0;
	for (unsigned int i = 0; i < n && i < c->nbufs; i++)
		bufs[i] = c->bufs[i];
	return c->nbufs;
}

NRN_EXPORT int nrn_stream_begin_capture(struct nrn_stream *s)
{
	return nrn_stream_begin_capture_flags(s, 0);
}

NRN_EXPORT int nrn_stream_begin_capture_flags(struct nrn_stream *s, unsigned int flags)
{
	struct nrn_capture *c;
	int ret;

	if (!s || (flags & ~NRN_CAPTURE_TIMESTAMPS))
		return -EINVAL;
	if (nrn_inherited(s->dev))
		return -EBADFD;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->dev = s->dev;
	c->flags = flags;
	pthread_mutex_lock(&s->lock);
	ret = s->capture ? -EBUSY : 0;
	/* Work batched before the capture is not part of it. */
	if (!ret)
		ret = nrn_stream_flush_locked(s);
	if (!ret)
		s->capture = c;
	pthread_mutex_unlock(&s->lock);
	if (ret)
		free(c);
	return ret;
}

NRN_EXPORT int nrn_stream_end_capture(struct nrn_stream *s, struct nrn_capture **cp)
{
	struct nrn_capture *c;
	int ret;

	if (!s || !cp)
		return -EINVAL;
	*cp = NULL;
	if (nrn_inherited(s->dev))
		return -EBADFD;
	pthread_mutex_lock(&s->lock);
	c = s->capture;
	if (c)
		nrn_stream_flush_locked(s); /* releases bindings left by a failed op */
	s->capture = NULL;
	pthread_mutex_unlock(&s->lock);
	if (!c)
		return -EINVAL;
	ret = c->error;
	if (ret) {
		nrn_capture_free(c);
		return ret;
	}
	*cp = c;
	return 0;
}

NRN_EXPORT int nrn_stream_capture_count(struct nrn_stream *s, unsigned int *count)
{
	int ret = 0;

	if (!s || !count)
		return -EINVAL;
	if (nrn_inherited(s->dev))
		return -EBADFD;
	pthread_mutex_lock(&s->lock);
	if (!s->capture)
		ret = -EINVAL;
	else if (s->capture->error)
		ret = s->capture->error;
	else
		*count = s->capture->count;
	pthread_mutex_unlock(&s->lock);
	return ret;
}

NRN_EXPORT int nrn_stream_is_capturing(struct nrn_stream *s)
{
	int ret;

	if (!s || nrn_inherited(s->dev))
		return 0;
	pthread_mutex_lock(&s->lock);
	ret = s->capture != NULL;
	pthread_mutex_unlock(&s->lock);
	return ret;
}

/*
 * The access of operand @i of a kernel's instruction, whose slot has the
 * rights @slot: what the instruction does with it (the ISA's roles),
 * within those rights (the rights themselves for an unknown opcode, or an
 * instruction that writes where it may not: the device refuses it).
 */
static uint32_t nrn_kernel_opnd_access(const struct nisa_insn *in, unsigned int i,
				       uint32_t slot)
{
	const uint32_t r = NISA_ACCESS_READ, w = NISA_ACCESS_WRITE;
	uint32_t acc = nisa_operand_access(in->opcode, in->subop, in->flags, in->axis, i);

	if (!acc || ((acc & w) && !(slot & w)))
		return slot;
	return acc & w ? w | (acc & slot & r) : r;
}

/* Record a kernel launch: operand access from the slot's access. */
int nrn_capture_kernel(struct nrn_capture *c, const struct nrn_kernel *k,
		       struct nrn_buffer *const *bufs, const uint32_t *access)
{
	int ret = 0;

	for (unsigned int n = 0; !ret && n < k->count; n++) {
		const struct nisa_insn *in = &k->insns[n];
		const struct nisa_tensor *t[NRN_GRAPH_OPNDS] = {
			&in->dst, &in->src[0], &in->src[1], &in->src[2] };
		struct nrn_buffer *b[NRN_GRAPH_OPNDS] = { NULL };
		uint32_t acc[NRN_GRAPH_OPNDS] = { 0 };

		if (in->opcode == NISA_INSN_NOP)
			continue;
		/* An EXPR's STEPS continuation: the dst, then step data. */
		if (in->opcode == NISA_INSN_EXPR_DATA && in->subop == NISA_EXPR_DATA_STEPS) {
			b[0] = bufs[in->dst.slot];
			acc[0] = NISA_ACCESS_WRITE;
			ret = nrn_capture_record(c, in, b, NULL, acc);
			continue;
		}
		for (unsigned int i = 0; i < NRN_GRAPH_OPNDS; i++) {
			/* The kernel format's rule: a source is used if ndim > 0. */
			if (i && !t[i]->ndim) {
				if (t[i]->slot || t[i]->offset || t[i]->dtype)
					return nrn_capture_fail(c, -ENOTSUP);
				continue;
			}
			b[i] = bufs[t[i]->slot];
			acc[i] = nrn_kernel_opnd_access(in, i, access[t[i]->slot]);
		}
		ret = nrn_capture_record(c, in, b, NULL, acc);
	}
	return ret;
}

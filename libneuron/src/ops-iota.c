// SPDX-License-Identifier: MIT
/*
 * NISA_INSN_IOTA: a ramp written by the card, dst[i] = start + i * step, i
 * the row-major index (docs/hardware.md, "IOTA").
 */
#include <errno.h>
#include <string.h>

#include "internal.h"

static uint64_t nrn_iota_bits(double d)
{
	uint64_t u;

	memcpy(&u, &d, sizeof(u));
	return u;
}

NRN_EXPORT int nrn_op_iota(struct nrn_stream *s, const struct nrn_tensor_desc *dst,
			   double start, double step)
{
	struct nisa_insn in = { .opcode = NISA_INSN_IOTA,
			       .scalar = nrn_iota_bits(start),
			       .alpha = nrn_iota_bits(step) };
	unsigned int slot;
	uint64_t numel = 1;
	int ret;

	if (!s || !dst || dst->ndim > NISA_MAX_DIMS ||
	    (unsigned int)dst->dtype >= NISA_NUM_DTYPES)
		return -EINVAL;
	for (unsigned int d = 0; d < dst->ndim; d++) {
		if (dst->shape[d] < 0 || dst->shape[d] > UINT32_MAX)
			return -EINVAL;
		numel *= (uint64_t)dst->shape[d];
	}
	if (!numel)
		return 0;
	if (!dst->buf || dst->offset % nisa_dtype_size(dst->dtype))
		return -EINVAL;
	if (dst->buf->dev != s->dev)
		return -EXDEV;
	if (dst->buf->mem != NRN_MEM_DEVICE)
		return -EINVAL;
	in.dst.dtype = (uint8_t)dst->dtype;
	in.dst.ndim = (uint8_t)dst->ndim;
	in.dst.offset = dst->offset;
	for (unsigned int d = 0; d < dst->ndim; d++) {
		in.dst.shape[d] = (uint32_t)dst->shape[d];
		in.dst.strides[d] = dst->strides[d];
	}
	if (nrn_inherited(s->dev))
		return -EBADFD;
	pthread_mutex_lock(&s->lock);
	ret = 0;
	if (s->batch.nslots == DRM_NEURON_MAX_BOS)
		ret = nrn_stream_flush_locked(s);
	if (!ret)
		ret = nrn_stream_slot_locked(s, dst->buf, NISA_ACCESS_WRITE, &slot);
	if (!ret) {
		in.dst.slot = (uint8_t)slot;
		ret = nrn_stream_push_locked(s, &in);
	}
	pthread_mutex_unlock(&s->lock);
	return ret;
}

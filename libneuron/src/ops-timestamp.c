// SPDX-License-Identifier: MIT
/*
 * NISA_INSN_TIMESTAMP as an operation: the card's clock into 8 bytes of
 * device memory when the stream reaches that point of its batch, in the
 * same job as the operations around it (docs/hardware.md, "Timestamps").
 * A timing event's record ends its job instead, so the card's idle time
 * before the next job falls between two events; two of these around some
 * operations of one batch time just those operations. Profilers use it.
 */
#include <errno.h>

#include "internal.h"

NRN_EXPORT int nrn_op_timestamp(struct nrn_stream *s, struct nrn_buffer *buf,
				uint64_t offset)
{
	struct nisa_insn in = { .opcode = NISA_INSN_TIMESTAMP };
	unsigned int slot;
	int ret;

	if (!s || !buf || offset % sizeof(uint64_t) || buf->size < sizeof(uint64_t) ||
	    offset > buf->size - sizeof(uint64_t))
		return -EINVAL;
	if (buf->dev != s->dev)
		return -EXDEV;
	if (buf->mem != NRN_MEM_DEVICE)
		return -EINVAL;
	/* One I64 element (ndim 0). */
	in.dst = (struct nisa_tensor){ .dtype = NISA_I64, .offset = offset };
	if (nrn_inherited(s->dev))
		return -EBADFD;
	pthread_mutex_lock(&s->lock);
	ret = 0;
	if (s->batch.nslots == DRM_NEURON_MAX_BOS)
		ret = nrn_stream_flush_locked(s);
	if (!ret)
		ret = nrn_stream_slot_locked(s, buf, NISA_ACCESS_WRITE, &slot);
	if (!ret) {
		in.dst.slot = (uint8_t)slot;
		ret = nrn_stream_push_locked(s, &in);
	}
	pthread_mutex_unlock(&s->lock);
	return ret;
}

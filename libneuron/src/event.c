// SPDX-License-Identifier: MIT
/*
 * Events: a point of a stream, captured in a binary syncobj of its own (a
 * transfer of the stream's timeline point), so it outlives the stream and
 * other streams can wait for it.
 *
 * A timing event (NRN_EVENT_TIMING) also owns 8 bytes of device memory
 * (instruction operands are device memory only, docs/hardware.md):
 * recording it appends a TIMESTAMP instruction writing them to the
 * stream's batch, as the last instruction of the job whose point the event
 * captures, so the card writes its clock when the stream reaches the
 * point. The card's clock is one for all its cores (docs/hardware.md,
 * "Timestamps"): events recorded on any streams of one card compare.
 *
 * Re-recording: the event's syncobj takes the new point at once, and the
 * card overwrites the timestamp only when it reaches the new point; until
 * then the old value stays. Timestamps land in the order of the records:
 * on one stream by the stream's order; a timing event re-recorded on
 * another stream while its previous point is pending makes the new point
 * wait for the previous one (else the old TIMESTAMP could land last, and
 * the event report the old point's time as the new one's).
 * nrn_event_elapsed_ns() reads the timestamps after seeing both events
 * complete, so it returns -EBUSY while a new point is pending; a re-record
 * racing with it (recorded after its check) makes it return the old or
 * the new recording's time -- each the time of a point that was reached,
 * never a torn or unwritten value.
 */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <xf86drm.h>

#include "graph.h"

struct nrn_event {
	struct nrn_device *dev;
	uint32_t syncobj;
	atomic_int recorded;
	unsigned int flags;
	/* Timing events: the card's clock at the recorded point. */
	struct nrn_buffer *stamp;
	const volatile uint64_t *stamp_map;
	/* The stream of the last record (compared, never dereferenced). */
	const struct nrn_stream *_Atomic last;
};

NRN_EXPORT int nrn_event_create_flags(struct nrn_device *dev, unsigned int flags,
				      struct nrn_event **evp)
{
	struct nrn_event *ev;
	void *map;
	int ret;

	if (!dev || !evp || (flags & ~NRN_EVENT_TIMING))
		return -EINVAL;
	if (nrn_inherited(dev))
		return -EBADFD;
	ev = calloc(1, sizeof(*ev));
	if (!ev)
		return -ENOMEM;
	ev->dev = dev;
	ev->flags = flags;
	if (flags & NRN_EVENT_TIMING) {
		ret = nrn_buffer_alloc(dev, sizeof(uint64_t), NRN_MEM_DEVICE,
				       &ev->stamp);
		if (!ret)
			ret = nrn_buffer_map(ev->stamp, &map);
		if (ret)
			goto err;
		ev->stamp_map = map;
	}
	ret = drmSyncobjCreate(dev->fd, 0, &ev->syncobj);
	if (ret)
		goto err;
	*evp = ev;
	return 0;

err:
	nrn_buffer_free(ev->stamp);
	free(ev);
	return ret;
}

NRN_EXPORT int nrn_event_create(struct nrn_device *dev, struct nrn_event **evp)
{
	return nrn_event_create_flags(dev, 0, evp);
}

NRN_EXPORT void nrn_event_destroy(struct nrn_event *ev)
{
	if (!ev || nrn_inherited(ev->dev))
		return; /* a forked child's: its syncobj is the parent's */
	drmSyncobjDestroy(ev->dev->fd, ev->syncobj);
	/* A TIMESTAMP still queued holds its own reference to the buffer. */
	nrn_buffer_free(ev->stamp);
	free(ev);
}

/* Append a TIMESTAMP into @ev's buffer to @s's batch. */
static int nrn_event_stamp_locked(struct nrn_event *ev, struct nrn_stream *s)
{
	struct nisa_insn in = { .opcode = NISA_INSN_TIMESTAMP };
	unsigned int slot, i;
	bool bound = false;
	int ret;

	for (i = 0; i < s->batch.nslots && !bound; i++)
		bound = s->slots[i] == ev->stamp;
	if (!bound && s->batch.nslots == DRM_NEURON_MAX_BOS) {
		ret = nrn_stream_flush_locked(s);
		if (ret)
			return ret;
	}
	ret = nrn_stream_slot_locked(s, ev->stamp, NISA_ACCESS_WRITE, &slot);
	if (ret)
		return ret;
	/* One I64 element (ndim 0) at offset 0. */
	in.dst = (struct nisa_tensor){ .slot = (uint8_t)slot, .dtype = NISA_I64 };
	return nrn_stream_push_locked(s, &in);
}

NRN_EXPORT int nrn_event_record(struct nrn_event *ev, struct nrn_stream *s)
{
	int ret = 0;

	if (!ev || !s || ev->dev != s->dev)
		return -EINVAL;
	if (nrn_inherited(s->dev))
		return -EBADFD;
	/*
	 * A timing event still pending on another stream: its TIMESTAMP
	 * could run after the new one and overwrite it. The new one waits
	 * for it (on the same stream, the order holds already; a destroyed
	 * stream's work is done, so a reused address is harmless).
	 */
	if ((ev->flags & NRN_EVENT_TIMING) && ev->recorded && ev->last != s &&
	    nrn_event_query(ev) == -EBUSY) {
		ret = nrn_stream_wait_event(s, ev);
		if (ret)
			return ret;
	}
	pthread_mutex_lock(&s->lock);
	/* A capturing stream's point would never be reached. */
	if (s->capture)
		ret = nrn_stream_refuse_locked(s, -EBUSY);
	if (!ret && (ev->flags & NRN_EVENT_TIMING))
		ret = nrn_event_stamp_locked(ev, s);
	if (!ret)
		ret = nrn_stream_flush_locked(s);
	if (!ret && s->point) {
		/* The stream's last job (point), into the event's syncobj. */
		ret = drmSyncobjTransfer(s->dev->fd, ev->syncobj, 0, s->timeline,
					 s->point, 0);
	} else if (!ret) {
		/* Nothing issued yet: the event is complete at once. */
		ret = drmSyncobjSignal(s->dev->fd, &ev->syncobj, 1);
	}
	if (!ret)
		ev->last = s;
	pthread_mutex_unlock(&s->lock);
	if (!ret)
		ev->recorded = 1;
	return ret;
}

NRN_EXPORT int nrn_event_wait(struct nrn_event *ev, int64_t timeout_ns)
{
	struct drm_neuron_wait w = { .timeout_ns = timeout_ns };
	int ret;

	if (!ev || !ev->recorded)
		return -EINVAL;
	if (nrn_inherited(ev->dev))
		return -EBADFD;
	w.handle = ev->syncobj;
	ret = nrn_ioctl(ev->dev->fd, DRM_IOCTL_NEURON_WAIT, &w);
	return ret ? ret : w.status;
}

NRN_EXPORT int nrn_event_query(struct nrn_event *ev)
{
	int ret = nrn_event_wait(ev, 0);

	return ret == -ETIME ? -EBUSY : ret;
}

NRN_EXPORT int nrn_event_elapsed_ns(struct nrn_event *start, struct nrn_event *end,
				    int64_t *ns)
{
	int ret;

	if (!start || !end || !ns || !(start->flags & NRN_EVENT_TIMING) ||
	    !(end->flags & NRN_EVENT_TIMING) || !start->recorded ||
	    !end->recorded || start->dev->info.minor != end->dev->info.minor)
		return -EINVAL;
	ret = nrn_event_query(start);
	if (!ret)
		ret = nrn_event_query(end);
	if (ret)
		return ret;
	/* Both points reached: their TIMESTAMPs were written (8-byte loads). */
	*ns = (int64_t)(le64toh(*end->stamp_map) - le64toh(*start->stamp_map));
	return 0;
}

NRN_EXPORT int nrn_stream_wait_event(struct nrn_stream *s, struct nrn_event *ev)
{
	uint32_t copy;
	int ret;

	if (!s || !ev || !ev->recorded || ev->dev != s->dev)
		return -EINVAL;
	if (nrn_inherited(s->dev))
		return -EBADFD;
	/* A copy of the event's fence: re-recording it must not change this. */
	ret = drmSyncobjCreate(s->dev->fd, 0, &copy);
	if (ret)
		return ret;
	ret = drmSyncobjTransfer(s->dev->fd, copy, 0, ev->syncobj, 0, 0);
	if (ret) {
		drmSyncobjDestroy(s->dev->fd, copy);
		return ret;
	}
	pthread_mutex_lock(&s->lock);
	/* A graph cannot depend on other streams' work: not recordable. */
	ret = s->capture ? nrn_stream_refuse_locked(s, -EBUSY) : 0;
	/* Work already batched was issued before the wait: it goes first. */
	if (!ret)
		ret = nrn_stream_flush_locked(s);
	if (!ret && s->nwaits == NRN_ARRAY_SIZE(s->waits))
		ret = -ENOSPC;
	if (!ret)
		s->waits[s->nwaits++] = copy;
	pthread_mutex_unlock(&s->lock);
	if (ret)
		drmSyncobjDestroy(s->dev->fd, copy);
	return ret;
}

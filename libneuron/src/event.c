// SPDX-License-Identifier: MIT
/*
 * Events: a point of a stream, captured in a binary syncobj of its own (a
 * transfer of the stream's timeline point), so it outlives the stream and
 * other streams can wait for it.
 */
#include <errno.h>
#include <stdlib.h>
#include <xf86drm.h>

#include "internal.h"

struct nrn_event {
	struct nrn_device *dev;
	uint32_t syncobj;
	int recorded;
};

NRN_EXPORT int nrn_event_create(struct nrn_device *dev, struct nrn_event **evp)
{
	struct nrn_event *ev;
	int ret;

	if (!dev || !evp)
		return -EINVAL;
	ev = calloc(1, sizeof(*ev));
	if (!ev)
		return -ENOMEM;
	ret = drmSyncobjCreate(dev->fd, 0, &ev->syncobj);
	if (ret) {
		free(ev);
		return ret;
	}
	ev->dev = dev;
	*evp = ev;
	return 0;
}

NRN_EXPORT void nrn_event_destroy(struct nrn_event *ev)
{
	if (!ev)
		return;
	drmSyncobjDestroy(ev->dev->fd, ev->syncobj);
	free(ev);
}

NRN_EXPORT int nrn_event_record(struct nrn_event *ev, struct nrn_stream *s)
{
	int ret;

	if (!ev || !s || ev->dev != s->dev)
		return -EINVAL;
	pthread_mutex_lock(&s->lock);
	ret = nrn_stream_flush_locked(s);
	if (!ret && s->point) {
		/* The stream's last job (point), into the event's syncobj. */
		ret = drmSyncobjTransfer(s->dev->fd, ev->syncobj, 0, s->timeline,
					 s->point, 0);
	} else if (!ret) {
		/* Nothing issued yet: the event is complete at once. */
		ret = drmSyncobjSignal(s->dev->fd, &ev->syncobj, 1);
	}
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
	w.handle = ev->syncobj;
	ret = nrn_ioctl(ev->dev->fd, DRM_IOCTL_NEURON_WAIT, &w);
	return ret ? ret : w.status;
}

NRN_EXPORT int nrn_event_query(struct nrn_event *ev)
{
	int ret = nrn_event_wait(ev, 0);

	return ret == -ETIME ? -EBUSY : ret;
}

NRN_EXPORT int nrn_stream_wait_event(struct nrn_stream *s, struct nrn_event *ev)
{
	uint32_t copy;
	int ret;

	if (!s || !ev || !ev->recorded || ev->dev != s->dev)
		return -EINVAL;
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
	/* Work already batched was issued before the wait: it goes first. */
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

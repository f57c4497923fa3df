// SPDX-License-Identifier: MIT
/*
 * Streams: in-order queues of work. Every job of a stream signals the next
 * point of the stream's timeline syncobj and waits for the previous one, so
 * order holds across the DMA and NeuronCore queues; a failed job's error
 * passes down the chain (the driver does not run a job whose input failed)
 * and is reported by the next synchronisation, which then starts a fresh
 * chain. Compute operations are batched into one kernel per submission.
 *
 * A capturing stream (graph-capture.c) submits nothing: each operand an
 * operation binds gets a slot of its own (so its access is exact), and
 * each instruction pushed is recorded with its operands' buffers, after
 * which the bindings end (as after a flush: callers bind again).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <xf86drm.h>

#include "graph.h"

#define NRN_CODE_RING_SIZE (4u << 20)

int nrn_ring_init(struct nrn_device *dev, struct nrn_ring *r, size_t size,
		  enum nrn_mem where)
{
	void *map;
	int ret;

	memset(r, 0, sizeof(*r));
	ret = nrn_buffer_alloc(dev, size, where, &r->buf);
	if (ret)
		return ret;
	ret = nrn_buffer_map(r->buf, &map);
	if (ret) {
		nrn_buffer_free(r->buf);
		r->buf = NULL;
		return ret;
	}
	r->map = map;
	r->size = size;
	return 0;
}

NRN_EXPORT __cold int nrn_stream_create(struct nrn_device *dev,
					struct nrn_stream **sp)
{
	struct nrn_stream *s;
	unsigned int n;
	int ret;

	if (!dev || !sp)
		return -EINVAL;
	if (nrn_inherited(dev))
		return -EBADFD;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->dev = dev;
	n = atomic_fetch_add(&dev->next_queue, 1);
	s->core = n % dev->info.num_cores;
	s->dma = n % dev->info.num_dma_queues;
	s->batch_max = NRN_BATCH_MAX_OPS;
	ret = nrn_kernel_init(&s->batch, 0);
	if (ret)
		goto err_free;
	ret = drmSyncobjCreate(dev->fd, 0, &s->timeline);
	if (ret)
		goto err_kernel;
	ret = nrn_ring_init(dev, &s->code, NRN_CODE_RING_SIZE, NRN_MEM_DEVICE);
	if (ret)
		goto err_syncobj;
	pthread_mutex_init(&s->lock, NULL);
	*sp = s;
	return 0;

err_syncobj:
	drmSyncobjDestroy(dev->fd, s->timeline);
err_kernel:
	nrn_kernel_fini(&s->batch);
err_free:
	free(s);
	return ret;
}

NRN_EXPORT __cold void nrn_stream_destroy(struct nrn_stream *s)
{
	if (!s || nrn_inherited(s->dev))
		return; /* a forked child's: the parent's objects, left as they are */
	pthread_mutex_lock(&s->lock);
	if (s->capture) {
		struct nrn_capture *c = s->capture;

		/* An unfinished capture is abandoned. */
		nrn_stream_flush_locked(s);
		s->capture = NULL;
		nrn_capture_destroy(c);
	}
	nrn_stream_sync_locked(s);
	pthread_mutex_unlock(&s->lock);
	nrn_buffer_free(s->code.buf);
	nrn_buffer_free(s->staging.buf);
	drmSyncobjDestroy(s->dev->fd, s->timeline);
	nrn_kernel_fini(&s->batch);
	nrn_sites_fini(s);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

NRN_EXPORT int nrn_device_stream(struct nrn_device *dev, struct nrn_stream **sp)
{
	int ret = 0;

	if (nrn_inherited(dev))
		return -EBADFD;
	pthread_mutex_lock(&dev->lock);
	if (!dev->stream)
		ret = nrn_stream_create(dev, &dev->stream);
	*sp = dev->stream;
	pthread_mutex_unlock(&dev->lock);
	return ret;
}

/*
 * Wait for @point of the timeline; the job's status, or a wait error. With
 * @w, the wait's answer (the device's error and its site) goes there.
 */
static int nrn_wait_point(struct nrn_stream *s, uint64_t point,
			  int64_t timeout_ns, struct drm_neuron_wait *w)
{
	struct drm_neuron_wait mine;
	int ret;

	if (!w)
		w = &mine;
	/* A driver before 0.2 leaves the site's fields as they are sent. */
	*w = (struct drm_neuron_wait){
		.handle = s->timeline, .point = point, .timeout_ns = timeout_ns,
		.error_insn = DRM_NEURON_NO_INSN,
	};
	ret = nrn_ioctl(s->dev->fd, DRM_IOCTL_NEURON_WAIT, w);
	return ret ? ret : w->status;
}

int nrn_stream_wait_point_locked(struct nrn_stream *s, uint64_t point)
{
	return nrn_wait_point(s, point, -1, NULL);
}

int nrn_stream_submit_locked(struct nrn_stream *s,
			     struct drm_neuron_submit *submit)
{
	const struct drm_neuron_sync *extra = (const void *)(uintptr_t)submit->in_syncs;
	struct drm_neuron_sync in[DRM_NEURON_MAX_SYNCS];
	unsigned int n = 0, i;
	int ret;

	if (s->capture)	/* every submitting path records instead */
		return nrn_stream_refuse_locked(s, -EBUSY);
	/* In-syncs of the caller's own (comm-run.c), then the stream's. */
	if (submit->in_sync_count > DRM_NEURON_MAX_SYNCS - 1 - s->nwaits)
		return -ENOSPC;
	for (i = 0; i < submit->in_sync_count; i++)
		in[n++] = extra[i];
	if (s->dep)
		in[n++] = (struct drm_neuron_sync){ .handle = s->timeline,
						    .point = s->dep };
	for (i = 0; i < s->nwaits; i++)
		in[n++] = (struct drm_neuron_sync){ .handle = s->waits[i] };
	submit->in_syncs = (uintptr_t)in;
	submit->in_sync_count = n;
	submit->out_sync = (struct drm_neuron_sync){ .handle = s->timeline,
						     .point = s->point + 1 };
	submit->cookie = nrn_sites_next_cookie(s);
	ret = nrn_ioctl(s->dev->fd, DRM_IOCTL_NEURON_SUBMIT, submit);
	if (ret)
		return ret;
	s->submits++;
	s->point++;
	s->dep = s->point;
	for (i = 0; i < s->nwaits; i++)
		drmSyncobjDestroy(s->dev->fd, s->waits[i]);
	s->nwaits = 0;
	return 0;
}

static bool nrn_overlaps(const struct nrn_ring_use *u, size_t start, size_t end)
{
	return u->start < end && start < u->end;
}

int nrn_ring_alloc_locked(struct nrn_stream *s, struct nrn_ring *r,
			  size_t len, size_t align, size_t *off)
{
	size_t start = (r->head + align - 1) / align * align;
	uint64_t wait = 0;
	unsigned int i;
	int ret;

	if (len > r->size)
		return -E2BIG;
	if (start + len > r->size)
		start = 0;
	/* The newest region in the way, and everything before it, must go. */
	for (i = 0; i < r->count; i++) {
		const struct nrn_ring_use *u = &r->uses[(r->first + i) % NRN_RING_USES];

		if (nrn_overlaps(u, start, start + len) || r->count == NRN_RING_USES)
			wait = u->point > wait ? u->point : wait;
	}
	if (wait) {
		ret = nrn_stream_wait_point_locked(s, wait);
		if (ret < 0 && ret != -EIO && ret != -ETIMEDOUT && ret != -ECANCELED)
			return ret;
		while (r->count && r->uses[r->first].point <= wait) {
			r->first = (r->first + 1) % NRN_RING_USES;
			r->count--;
		}
	}
	*off = start;
	return 0;
}

void nrn_ring_commit_locked(struct nrn_stream *s, struct nrn_ring *r,
			    size_t off, size_t len)
{
	r->uses[(r->first + r->count) % NRN_RING_USES] = (struct nrn_ring_use){
		.start = off, .end = off + len, .point = s->point + 1,
	};
	r->count++;
	r->head = off + len;
}

int nrn_stream_flush_locked(struct nrn_stream *s)
{
	struct drm_neuron_bo_ref refs[DRM_NEURON_MAX_BOS];
	size_t len = s->batch.count * sizeof(struct nisa_insn), off;
	struct drm_neuron_submit submit = { .engine = DRM_NEURON_ENGINE_CORE };
	unsigned int i;
	int ret;

	if (s->capture) {
		/* Nothing to submit: end the bindings (and any open group). */
		for (i = 0; i < s->batch.nslots; i++)
			nrn_buffer_put(s->slots[i]);
		s->batch.nslots = 0;
		s->batch.count = 0;
		s->cap_group = 0;
		s->cap_claimed = 0;
		return 0;
	}
	if (!s->batch.count)
		return 0;
	ret = nrn_ring_alloc_locked(s, &s->code, len, 64, &off);
	if (ret)
		return ret;
	memcpy(s->code.map + off, s->batch.insns, len);
	for (i = 0; i < s->batch.nslots; i++)
		refs[i] = (struct drm_neuron_bo_ref){ .handle = s->slots[i]->handle,
						      .access = s->access[i] };
	submit.index = s->core;
	submit.kernel_handle = s->code.buf->handle;
	submit.kernel_offset = off;
	submit.kernel_size = len;
	submit.bos = (uintptr_t)refs;
	submit.bo_count = s->batch.nslots;
	nrn_ring_commit_locked(s, &s->code, off, len);
	ret = nrn_stream_submit_locked(s, &submit);
	if (ret) {
		/* Not submitted: forget the region (it was the newest). */
		s->code.count--;
	}
	/* The graph-issued runs of the batch are this job's (or gone). */
	nrn_sites_commit_locked(s, ret ? 0 : submit.cookie);
	/* Submitted or not, the batch is over: its buffers are released. */
	for (i = 0; i < s->batch.nslots; i++)
		nrn_buffer_put(s->slots[i]);
	s->batch.nslots = 0;
	s->batch.count = 0;
	s->batch_work = 0;
	return ret;
}

int nrn_stream_sync_locked(struct nrn_stream *s)
{
	struct drm_neuron_wait w = { 0 };
	int ret;

	if (s->capture)
		return nrn_stream_refuse_locked(s, -EBUSY);
	ret = nrn_stream_flush_locked(s);
	if (ret)
		return ret;
	if (!s->dep) {
		/* Nothing since the last synchronisation, but maybe an error. */
		ret = s->error;
		s->error = 0;
		return ret;
	}
	ret = nrn_wait_point(s, s->dep, -1, &w);
	/* Reported once; the next job starts a fresh chain. */
	s->dep = 0;
	if (ret < 0)
		s->device_error = w.device_error;
	nrn_sites_sync_locked(s, ret, w.device_error, w.error_insn, w.error_cookie);
	if (!ret)
		ret = s->error;
	s->error = 0;
	return ret;
}

NRN_EXPORT int nrn_stream_flush(struct nrn_stream *s)
{
	int ret;

	if (nrn_inherited(s->dev))
		return -EBADFD;
	pthread_mutex_lock(&s->lock);
	ret = nrn_stream_flush_locked(s);
	pthread_mutex_unlock(&s->lock);
	return ret;
}

NRN_EXPORT int nrn_stream_sync(struct nrn_stream *s)
{
	int ret;

	if (!s)
		return -EINVAL;
	if (nrn_inherited(s->dev))
		return -EBADFD;
	pthread_mutex_lock(&s->lock);
	ret = nrn_stream_sync_locked(s);
	pthread_mutex_unlock(&s->lock);
	return ret;
}

NRN_EXPORT unsigned int nrn_stream_device_error(struct nrn_stream *s)
{
	unsigned int e;

	if (nrn_inherited(s->dev))
		return 0;
	pthread_mutex_lock(&s->lock);
	e = s->device_error;
	pthread_mutex_unlock(&s->lock);
	return e;
}

int nrn_stream_slot_locked(struct nrn_stream *s, struct nrn_buffer *buf,
			   uint32_t access, unsigned int *slot)
{
	unsigned int i;

	for (i = 0; i < s->batch.nslots && !s->capture; i++) {
		if (s->slots[i] == buf) {
			s->access[i] |= access;
			*slot = i;
			return 0;
		}
	}
	if (s->batch.nslots == DRM_NEURON_MAX_BOS)
		return -ENOSPC;
	i = s->batch.nslots;
	nrn_buffer_get(buf);
	s->slots[i] = buf;
	s->access[i] = access;
	s->batch.nslots++;
	*slot = i;
	return 0;
}

int nrn_stream_refuse_locked(struct nrn_stream *s, int err)
{
	return nrn_capture_fail(s->capture, err);
}

/*
 * Record @insn: operand i (dst, src0..2) uses the slot bound for it. The
 * operations bind their operands in operand order, one slot each, so a used
 * operand's slot is the first unclaimed one it names; an unused source
 * (zero: slot 0) names a claimed one. An EXPR and its continuations (a
 * group, which is never split) share the bindings made before the EXPR;
 * a STEPS continuation's only operand is its dst, the EXPR's again. When
 * the instruction (group) is recorded, every binding must have been
 * claimed, and the bindings end.
 */
static int nrn_capture_push_locked(struct nrn_stream *s,
				   const struct nisa_insn *insn)
{
	const struct nisa_tensor *t[NRN_GRAPH_OPNDS] = {
		&insn->dst, &insn->src[0], &insn->src[1], &insn->src[2] };
	bool steps = insn->opcode == NISA_INSN_EXPR_DATA &&
		     insn->subop == NISA_EXPR_DATA_STEPS;
	struct nrn_buffer *bufs[NRN_GRAPH_OPNDS] = { NULL };
	uint32_t access[NRN_GRAPH_OPNDS] = { 0 };
	unsigned int i;
	int ret = 0;

	if (insn->opcode == NISA_INSN_EXPR) {
		if (s->cap_group || !insn->subop || insn->subop > NISA_EXPR_MAX_STEPS ||
		    insn->axis < 0 || insn->axis > NISA_EXPR_MAX_INPUTS)
			ret = -EINVAL;
		else
			s->cap_group = nisa_expr_length(insn->subop, insn->axis);
	} else if (insn->opcode == NISA_INSN_EXPR_DATA ? !s->cap_group : !!s->cap_group) {
		ret = -EINVAL;	/* a continuation alone, or a group cut short */
	}
	if (!ret && s->cap_group)
		s->cap_group--;
	if (insn->opcode == NISA_INSN_EXPR)
		s->cap_claimed = 0;
	for (i = 0; !ret && i < (steps ? 1u : NRN_GRAPH_OPNDS); i++) {
		unsigned int slot = t[i]->slot;

		if (steps) {
			if (slot >= s->batch.nslots)
				ret = -EINVAL;
			else
				bufs[0] = s->slots[slot];
			access[0] = NISA_ACCESS_WRITE;
			continue;
		}
		if (slot >= s->batch.nslots || (s->cap_claimed >> slot & 1)) {
			if (!i)
				ret = -EINVAL;
			continue;
		}
		s->cap_claimed |= 1ull << slot;
		bufs[i] = s->slots[slot];
		access[i] = s->access[slot];
	}
	if (!ret && !s->cap_group && s->batch.nslots &&
	    s->cap_claimed != (~0ull >> (64 - s->batch.nslots)))
		ret = -EINVAL;	/* a binding no operand names */
	if (ret)
		nrn_capture_fail(s->capture, ret);
	else
		ret = nrn_capture_record(s->capture, insn, bufs, NULL, access);
	if (ret || !s->cap_group)
		nrn_stream_flush_locked(s);	/* the bindings end */
	return ret;
}

uint64_t nrn_insn_work(const struct nisa_insn *insn)
{
	const struct nisa_tensor *d = &insn->dst;
	uint64_t n = 1;
	unsigned int i;

	for (i = 0; i < d->ndim && i < NISA_MAX_DIMS; i++)
		n *= d->shape[i] ? d->shape[i] : 1;
	if (insn->opcode == NISA_INSN_MATMUL && insn->src[0].ndim &&
	    insn->src[0].ndim <= NISA_MAX_DIMS)
		n *= insn->src[0].shape[insn->src[0].ndim - 1] ?: 1;
	return n;
}

bool nrn_stream_batch_full_locked(const struct nrn_stream *s, unsigned int len)
{
	return s->batch.count + len > s->batch_max ||
	       (s->batch.count && s->batch_work >= NRN_BATCH_MAX_WORK);
}

/* Whether @in reads or writes a complex operand it does not take. */
static bool nrn_insn_complex_refused(const struct nisa_insn *in)
{
	const struct nisa_tensor *t[4] = { &in->dst, &in->src[0], &in->src[1],
					   &in->src[2] };

	for (unsigned int i = 0; i < 4; i++)
		if (nisa_dtype_is_complex(t[i]->dtype) &&
		    nisa_operand_access(in->opcode, in->subop, in->flags, in->axis, i) &&
		    !nisa_takes_complex(in->opcode, in->subop))
			return true;
	return false;
}

int nrn_stream_push_locked(struct nrn_stream *s, const struct nisa_insn *insn)
{
	int ret;

	if (nrn_insn_complex_refused(insn))
		return -EDOM;
	if (s->capture)
		return nrn_capture_push_locked(s, insn);
	ret = nrn_kernel_push(&s->batch, insn);
	if (!ret)
		s->batch_work += nrn_insn_work(insn);

	if (!ret && s->batch.count >= s->batch_max)
		ret = nrn_stream_flush_locked(s);
	return ret;
}

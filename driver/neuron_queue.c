// SPDX-License-Identifier: GPL-2.0-only
/*
 * Hardware queues: each has a descriptor ring in DMA-coherent memory, an
 * MSI-X vector and a drm_sched instance (neuron_sched.c). A job's
 * descriptors are copied into the ring and the doorbell rung, by run_job or,
 * for a direct submission, by SUBMIT itself; the interrupt handler (or a
 * poller) retires jobs in ring order by reading the status words the device
 * writes back, and signals their hardware fences (neuron_fence.c). Resets and
 * the watchdog of direct jobs are in neuron_reset.c.
 *
 * Direct submission: a job that has nothing to wait for, from a context
 * with nothing left in the scheduler for that queue, is written to the ring
 * by SUBMIT itself, skipping the scheduler's work item; so is a job whose
 * only unfinished input is the last job on the ring, chained behind it
 * (NHW_DESC_F_AFTER: the device skips it if that job failed). The ring is split
 * so that both kinds fit (NEURON_SCHED_SLOTS), such jobs are timed out by
 * the queue's watchdog instead of the scheduler, and the device's reaper
 * frees them once completed.
 *
 * Locking: q->lock (a spinlock, taken in the interrupt handler) protects
 * the ring (@tail, @written, @retired, IRQ_AT), the in-flight list, the
 * direct-slot count, @stopped and the busy-time fields; it is also the lock
 * of the queue's hardware fences.
 */
#include <linux/dma-mapping.h>
#include <linux/interrupt.h>
#include <linux/slab.h>
#include <drm/drm_drv.h>
#include <drm/drm_managed.h>
#include <drm/drm_print.h>

#include "neuron_drv.h"
#include "neuron_fence.h"
#include "neuron_job.h"
#include "neuron_queue.h"
#include "neuron_reset.h"
#include "neuron_trace.h"

/* Completed direct jobs are freed in batches, this long after the first. */
#define NEURON_REAP_DELAY	msecs_to_jiffies(10)

static union nhw_desc *neuron_ring_slot(struct neuron_queue *q, u32 slot)
{
	return (union nhw_desc *)q->ring + slot;
}

/* Point the device at the (empty) ring and enable the queue. */
void neuron_queue_hw_start(struct neuron_queue *q)
{
	struct neuron_device *ndev = q->ndev;

	q->tail = 0;
	q->written = 0;
	q->retired = 0;
	q->irq_armed = false;
	memset(q->ring, 0, NEURON_RING_ENTRIES * NHW_DESC_SIZE);
	neuron_wr(ndev, neuron_qreg(q, NHW_QREG_RING_LO), lower_32_bits(q->ring_dma));
	neuron_wr(ndev, neuron_qreg(q, NHW_QREG_RING_HI), upper_32_bits(q->ring_dma));
	neuron_wr(ndev, neuron_qreg(q, NHW_QREG_RING_SIZE), NEURON_RING_ENTRIES);
	neuron_wr(ndev, neuron_qreg(q, NHW_QREG_CTRL), NHW_QCTRL_ENABLE);
}

/*
 * Write @job's descriptors at the tail. Caller holds q->lock. The last one
 * raises the completion interrupt, unless the job is a direct one on a card
 * that can raise it on demand: its submitter usually polls for it, and the
 * fence asks for the interrupt only if somebody ends up waiting.
 */
void neuron_queue_write_job_locked(struct neuron_queue *q,
				   struct neuron_job *job)
{
	struct neuron_fence *f = to_neuron_fence(job->hw_fence);
	u32 i;

	lockdep_assert_held(&q->lock);
	f->on_demand = job->direct && (q->ndev->caps & NHW_CAP_IRQ_AT);
	job->started = ktime_get();
	if (list_empty(&q->inflight)) {
		q->busy_since = job->started;
		q->head_since = job->started;
	}
	job->first_slot = q->tail;
	for (i = 0; i < job->ndesc; i++) {
		union nhw_desc *d = neuron_ring_slot(q, q->tail);

		*d = job->descs[i];
		d->flags = i == job->ndesc - 1 && !f->on_demand ? NHW_DESC_F_IRQ : 0;
		/* Each: behind a failed input, none of them runs. */
		if (job->chained)
			d->flags |= NHW_DESC_F_AFTER;
		d->copy.status = 0;
		if (d->launch.op == NHW_OP_LAUNCH && job->nslots) {
			u32 first = q->tail * NHW_MAX_SLOTS;

			memcpy(&q->tables[first], job->table,
			       job->nslots * sizeof(*job->table));
			d->launch.table_addr = cpu_to_le64(q->tables_dma +
							   first * sizeof(*q->tables));
		}
		q->tail = (q->tail + 1) % NEURON_RING_ENTRIES;
	}
	q->written += job->ndesc;
	f->done_at = q->written;
	list_add_tail(&job->link, &q->inflight);
	trace_neuron_push(dev_name(q->ndev->drm.dev), q->name, job->hw_fence->seqno,
			  job->first_slot, job->ndesc);
	/* Scheduler credits and the direct share keep the ring from overfilling. */
	drm_WARN_ON(&q->ndev->drm, q->written - q->retired > NEURON_RING_ENTRIES - 1);
	drm_WARN_ON(&q->ndev->drm, q->direct_slots > NEURON_DIRECT_SLOTS);
}

void neuron_queue_doorbell(struct neuron_queue *q)
{
	/* Descriptors must be in memory before the device sees the new tail. */
	dma_wmb();
	neuron_wr(q->ndev, neuron_qreg(q, NHW_QREG_TAIL), q->tail);
}

/*
 * A direct job whose input @job->after has not signalled goes on the ring
 * right behind that input's job, chained to it (NHW_DESC_F_AFTER), if that
 * job is still the last one there. Caller holds q->lock.
 *
 * Return: true if @job can go on the ring now (chained or not).
 */
static bool neuron_queue_chain_locked(struct neuron_queue *q, struct neuron_job *job)
{
	struct neuron_job *last;

	lockdep_assert_held(&q->lock);
	job->chained = false;
	if (!job->after)
		return true;
	/* Retired meanwhile: ready, unless it failed (the scheduler's case). */
	if (dma_fence_is_signaled_locked(job->after))
		return job->after->error >= 0;
	if (list_empty(&q->inflight))
		return false;
	last = list_last_entry(&q->inflight, struct neuron_job, link);
	job->chained = last->hw_fence == job->after;
	return job->chained;
}

/**
 * neuron_queue_push() - put a job on the hardware
 * @q: queue
 * @job: job whose descriptors are built
 * @direct: from SUBMIT itself, not from the scheduler's run_job
 *
 * run_job is serialised per queue by drm_sched and only runs when the
 * scheduler's share of the ring has room (credits). A direct job's inputs
 * have signalled and its caller keeps the context's jobs in order (none is
 * waiting in the scheduler for this queue); it takes the ring's other share.
 *
 * Return: the hardware fence; for a direct job, NULL if the queue cannot
 * take it now (reset under way, direct share full): the scheduler must; or
 * an ERR_PTR.
 */
struct dma_fence *neuron_queue_push(struct neuron_queue *q,
				    struct neuron_job *job, bool direct)
{
	struct neuron_fence *f;
	unsigned long flags;

	f = neuron_fence_alloc();
	if (!f)
		return ERR_PTR(-ENOMEM);
	spin_lock_irqsave(&q->lock, flags);
	/* Retire what completed without an interrupt, which makes room. */
	neuron_queue_complete_locked(q);
	if (direct) {
		if (q->stopped || q->direct_slots + job->ndesc > NEURON_DIRECT_SLOTS ||
		    !neuron_queue_chain_locked(q, job)) {
			spin_unlock_irqrestore(&q->lock, flags);
			neuron_fence_free(f);
			return NULL;
		}
		q->direct_slots += job->ndesc;
		job->direct = true;
		/* Accepted: SUBMIT's event, before the job reaches the ring. */
		trace_neuron_submit(dev_name(q->ndev->drm.dev), q->name, job->ndesc, true);
	}
	neuron_fence_start_locked(q, f, job);
	neuron_queue_write_job_locked(q, job);
	neuron_queue_doorbell(q);
	/* A small job may be done already: the doorbell can run it. */
	neuron_queue_complete_locked(q);
	spin_unlock_irqrestore(&q->lock, flags);
	if (direct)
		neuron_queue_watchdog_arm(q);
	return &f->base;
}

/**
 * neuron_queue_fail() - end a job without running it
 * @q: its queue
 * @job: the job
 * @err: negative errno for its fence
 * @site: the device error to report with it (an input's), or NULL for none
 *
 * Return: the job's hardware fence, already signalled, or an ERR_PTR.
 */
struct dma_fence *neuron_queue_fail(struct neuron_queue *q,
				    struct neuron_job *job, int err,
				    const struct neuron_error_site *site)
{
	struct neuron_fence *f;
	unsigned long flags;

	f = neuron_fence_alloc();
	if (!f)
		return ERR_PTR(-ENOMEM);
	if (site)
		f->site = *site;
	atomic64_inc(&q->ndev->stats.completed);
	atomic64_inc(&q->ndev->stats.errors);
	spin_lock_irqsave(&q->lock, flags);
	neuron_fence_start_locked(q, f, job);
	dma_fence_set_error(&f->base, err);
	trace_neuron_complete(dev_name(q->ndev->drm.dev), q->name, f->base.seqno, err,
			      f->site.code);
	dma_fence_signal_locked(&f->base);
	spin_unlock_irqrestore(&q->lock, flags);
	return &f->base;
}

/* Signal @job's hardware fence with @err (0 for success). Under q->lock. */
void neuron_queue_retire_locked(struct neuron_queue *q,
				struct neuron_job *job, int err)
{
	struct neuron_counters *st = &q->ndev->stats;
	bool head = list_first_entry_or_null(&q->inflight, struct neuron_job,
					     link) == job;
	bool direct = job->direct;
	ktime_t now = ktime_get();

	lockdep_assert_held(&q->lock);
	list_del_init(&job->link);
	if (list_empty(&q->inflight))
		q->busy_ns += ktime_to_ns(ktime_sub(now, q->busy_since));
	/* Engine time: since it reached the head (0 if taken off elsewhere). */
	if (head) {
		if (job->stats)
			atomic64_add(ktime_to_ns(ktime_sub(now, q->head_since)),
				     &job->stats->busy_ns[q->engine]);
		q->head_since = now;
	}
	atomic64_inc(&st->completed);
	neuron_job_unbudget(job);
	neuron_job_done_locked(job);
	if (err) {
		atomic64_inc(&st->errors);
		dma_fence_set_error(job->hw_fence, err);
	}
	/* What a job chained behind this one fails with, if skipped. */
	q->last_err = err;
	q->last_site = to_neuron_fence(job->hw_fence)->site;
	/* Before the signal: a scheduled job may be freed as soon as it is. */
	trace_neuron_complete(dev_name(q->ndev->drm.dev), q->name, job->hw_fence->seqno,
			      err, to_neuron_fence(job->hw_fence)->site.code);
	dma_fence_signal_timestamp_locked(job->hw_fence, now);
	/* Only a direct job, which only the reaper frees, is still ours. */
	if (direct) {
		drm_WARN_ON(&q->ndev->drm, q->direct_slots < job->ndesc);
		q->direct_slots -= job->ndesc;
		q->direct_retired++;
		llist_add(&job->reap, &q->ndev->reap_list);
		/* Pending: it has not started, and will find this job too. */
		if (!delayed_work_pending(&q->ndev->reap_work))
			queue_delayed_work(system_wq, &q->ndev->reap_work,
					   NEURON_REAP_DELAY);
	}
}

/**
 * neuron_queue_busy_ns() - time the queue has had jobs on its ring
 * @q: queue
 *
 * Return: nanoseconds, including the current busy period.
 */
u64 neuron_queue_busy_ns(struct neuron_queue *q)
{
	unsigned long flags;
	u64 ns;

	spin_lock_irqsave(&q->lock, flags);
	ns = q->busy_ns;
	if (!list_empty(&q->inflight))
		ns += ktime_to_ns(ktime_sub(ktime_get(), q->busy_since));
	spin_unlock_irqrestore(&q->lock, flags);
	return ns;
}

/**
 * neuron_queue_inflight() - jobs on the queue's ring
 * @q: queue
 *
 * Return: the number of jobs.
 */
int neuron_queue_inflight(struct neuron_queue *q)
{
	struct neuron_job *job;
	unsigned long flags;
	int n = 0;

	spin_lock_irqsave(&q->lock, flags);
	list_for_each_entry(job, &q->inflight, link)
		n++;
	spin_unlock_irqrestore(&q->lock, flags);
	return n;
}

/*
 * Ask the device for an interrupt when its DONE count reaches @done_at,
 * unless one already comes at or before it. Caller holds q->lock.
 */
void neuron_queue_want_irq_locked(struct neuron_queue *q, u32 done_at)
{
	lockdep_assert_held(&q->lock);
	if (q->irq_armed && (s32)(q->irq_at - q->retired) > 0 &&
	    (s32)(q->irq_at - done_at) <= 0)
		return;
	q->irq_at = done_at;
	q->irq_armed = true;
	/* Fires at once if the device is already there. */
	neuron_wr(q->ndev, neuron_qreg(q, NHW_QREG_IRQ_AT), done_at);
}

/*
 * After an interrupt: the oldest job somebody waits for, if it asked for
 * no interrupt of its own, needs the next one. Caller holds q->lock.
 */
void neuron_queue_rearm_locked(struct neuron_queue *q)
{
	struct neuron_job *job;

	lockdep_assert_held(&q->lock);
	if (!q->direct_slots)
		return;
	list_for_each_entry(job, &q->inflight, link) {
		struct neuron_fence *f = to_neuron_fence(job->hw_fence);

		if (f->on_demand &&
		    test_bit(DMA_FENCE_FLAG_ENABLE_SIGNAL_BIT, &f->base.flags)) {
			neuron_queue_want_irq_locked(q, f->done_at);
			return;
		}
	}
}

/* Retire every job whose last descriptor the device has completed. */
void neuron_queue_complete_locked(struct neuron_queue *q)
{
	struct neuron_job *job, *tmp;

	lockdep_assert_held(&q->lock);
	list_for_each_entry_safe(job, tmp, &q->inflight, link) {
		u32 last = (job->first_slot + job->ndesc - 1) % NEURON_RING_ENTRIES;
		u32 status, i, code = 0, insn = DRM_NEURON_NO_INSN;

		status = le32_to_cpu(READ_ONCE(neuron_ring_slot(q, last)->copy.status));
		if (!(status & NHW_DESC_DONE))
			break;
		/* Read the other status words only after seeing DONE. */
		dma_rmb();
		status = le32_to_cpu(neuron_ring_slot(q, job->first_slot)->copy.status);
		if (job->chained && (status & NHW_DESC_SKIPPED)) {
			/* Not run: the job before it failed, with this error. */
			to_neuron_fence(job->hw_fence)->site = q->last_site;
			q->retired = to_neuron_fence(job->hw_fence)->done_at;
			neuron_queue_retire_locked(q, job, q->last_err ?: -EIO);
			continue;
		}
		for (i = 0; i < job->ndesc && !code; i++) {
			u32 slot = (job->first_slot + i) % NEURON_RING_ENTRIES;
			union nhw_desc *d = neuron_ring_slot(q, slot);

			code = NHW_DESC_ERR(le32_to_cpu(d->copy.status));
			/* The device wrote it before the status word. */
			if (code && d->op == NHW_OP_LAUNCH)
				insn = le32_to_cpu(d->launch.err_insn);
		}
		if (code) {
			neuron_dbg(q->ndev, "%s: job failed, device error %u at instruction %d\n",
				   q->name, code, (int)insn);
			to_neuron_fence(job->hw_fence)->site = (struct neuron_error_site){
				.code = code, .insn = insn, .cookie = job->cookie,
			};
		}
		q->retired = to_neuron_fence(job->hw_fence)->done_at;
		/* A link whose peer card is absent or went away: -ENODEV. */
		neuron_queue_retire_locked(q, job, !code ? 0 :
					   code == NISA_ERR_PEER ? -ENODEV : -EIO);
	}
	neuron_queue_rearm_locked(q);
}

static irqreturn_t neuron_queue_irq(int irq, void *arg)
{
	struct neuron_queue *q = arg;

	spin_lock(&q->lock);
	neuron_queue_complete_locked(q);
	spin_unlock(&q->lock);
	return IRQ_HANDLED;
}

/**
 * neuron_queues_poll() - retire what the device has completed, now
 * @ndev: device
 *
 * What the interrupt handler does, for a waiter that polls rather than
 * sleeping until the interrupt arrives.
 */
void neuron_queues_poll(struct neuron_device *ndev)
{
	unsigned long flags;
	u32 i;

	for (i = 0; i < ndev->num_queues; i++) {
		struct neuron_queue *q = &ndev->queues[i];

		if (list_empty_careful(&q->inflight))
			continue;
		spin_lock_irqsave(&q->lock, flags);
		neuron_queue_complete_locked(q);
		spin_unlock_irqrestore(&q->lock, flags);
	}
}

static void neuron_queues_fini(struct drm_device *drm, void *arg)
{
	struct neuron_device *ndev = arg;
	u32 i;

	for (i = 0; i < ndev->num_queues; i++) {
		cancel_delayed_work_sync(&ndev->queues[i].watchdog);
		cancel_work_sync(&ndev->queues[i].peer_gone);
		drm_sched_fini(&ndev->queues[i].sched);
	}
	flush_delayed_work(&ndev->reap_work);
}

static int neuron_queue_init(struct neuron_device *ndev, u32 idx)
{
	struct neuron_queue *q = &ndev->queues[idx];
	struct device *dev = ndev->drm.dev;
	struct drm_sched_init_args args = {
		.ops = &neuron_sched_ops,
		.num_rqs = DRM_SCHED_PRIORITY_COUNT,
		.credit_limit = NEURON_SCHED_SLOTS,
		.timeout = msecs_to_jiffies(neuron_job_timeout_ms),
		.timeout_wq = ndev->reset_wq,
		.name = q->name,
		.dev = dev,
	};
	int ret;

	q->ndev = ndev;
	q->idx = idx;
	if (idx < ndev->num_dma) {
		q->engine = NEURON_ENGINE_DMA;
		snprintf(q->name, sizeof(q->name), "dma%u", idx);
	} else if (idx < ndev->num_dma + ndev->num_cores) {
		q->engine = NEURON_ENGINE_CORE;
		snprintf(q->name, sizeof(q->name), "core%u", idx - ndev->num_dma);
	} else {
		q->engine = NEURON_ENGINE_LINK;
		snprintf(q->name, sizeof(q->name), "link%u",
			 idx - ndev->num_dma - ndev->num_cores);
	}
	spin_lock_init(&q->lock);
	INIT_LIST_HEAD(&q->inflight);
	INIT_DELAYED_WORK(&q->watchdog, neuron_queue_watchdog);
	INIT_WORK(&q->peer_gone, neuron_queue_peer_gone);
	q->fence_context = dma_fence_context_alloc(1);

	q->ring = dmam_alloc_coherent(dev, NEURON_RING_ENTRIES * NHW_DESC_SIZE,
				      &q->ring_dma, GFP_KERNEL);
	if (!q->ring)
		return -ENOMEM;
	if (q->engine == NEURON_ENGINE_CORE) {
		q->tables = dmam_alloc_coherent(dev, NEURON_RING_ENTRIES * NHW_MAX_SLOTS *
						sizeof(*q->tables),
						&q->tables_dma, GFP_KERNEL);
		if (!q->tables)
			return -ENOMEM;
	}
	neuron_queue_hw_start(q);

	ret = devm_request_irq(dev, pci_irq_vector(ndev->pdev, idx),
			       neuron_queue_irq, 0, q->name, q);
	if (ret) {
		neuron_err(ndev, "%s: cannot request its interrupt: %d\n", q->name, ret);
		return ret;
	}
	ret = drm_sched_init(&q->sched, &args);
	if (ret)
		neuron_err(ndev, "%s: cannot create its scheduler: %d\n", q->name, ret);
	return ret;
}

static void neuron_reset_wq_fini(struct drm_device *drm, void *arg)
{
	destroy_workqueue(((struct neuron_device *)arg)->reset_wq);
}

/**
 * neuron_queues_init() - set up every hardware queue of the card
 * @ndev: device, with MSI-X vectors allocated
 *
 * Return: 0 or a negative errno.
 */
int neuron_queues_init(struct neuron_device *ndev)
{
	u32 i;
	int ret;

	init_llist_head(&ndev->reap_list);
	init_waitqueue_head(&ndev->jobs_wq);
	INIT_DELAYED_WORK(&ndev->reap_work, neuron_job_reap);
	/* One ordered queue for every queue's timeout: resets never overlap. */
	ndev->reset_wq = alloc_ordered_workqueue("neuron-reset", 0);
	if (!ndev->reset_wq)
		return -ENOMEM;
	ret = drmm_add_action_or_reset(&ndev->drm, neuron_reset_wq_fini, ndev);
	if (ret)
		return ret;

	for (i = 0; i < ndev->num_queues; i++) {
		ret = neuron_queue_init(ndev, i);
		if (ret) {
			while (i--)
				drm_sched_fini(&ndev->queues[i].sched);
			return ret;
		}
	}
	return drmm_add_action_or_reset(&ndev->drm, neuron_queues_fini, ndev);
}

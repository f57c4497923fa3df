// SPDX-License-Identifier: GPL-2.0-only
/*
 * Hardware queues: each has a descriptor ring in DMA-coherent memory, an
 * MSI-X vector and a drm_sched instance. run_job copies a job's descriptors
 * into the ring and rings the doorbell; the interrupt handler retires jobs
 * in ring order by reading the status words the device writes back.
 */
#include <linux/dma-mapping.h>
#include <linux/interrupt.h>
#include <linux/iopoll.h>
#include <linux/slab.h>
#include <drm/drm_managed.h>
#include <drm/drm_print.h>

#include "neuron_drv.h"
#include "neuron_job.h"
#include "neuron_queue.h"

static unsigned int job_timeout_ms = 10000;
module_param(job_timeout_ms, uint, 0444);
MODULE_PARM_DESC(job_timeout_ms, "Time a job may run before its queue is reset (ms)");

static const char *neuron_fence_driver_name(struct dma_fence *f)
{
	return DRIVER_NAME;
}

static const char *neuron_fence_timeline_name(struct dma_fence *f)
{
	return container_of(f, struct neuron_fence, base)->queue->name;
}

static const struct dma_fence_ops neuron_fence_ops = {
	.get_driver_name = neuron_fence_driver_name,
	.get_timeline_name = neuron_fence_timeline_name,
};

/**
 * neuron_fence_device_error() - the device's error code for a job
 * @hw_fence: a job's hardware fence, or any other fence
 *
 * Return: NRN_ERR_* the device reported, or 0 (also for foreign fences).
 */
u32 neuron_fence_device_error(struct dma_fence *hw_fence)
{
	if (!hw_fence || hw_fence->ops != &neuron_fence_ops)
		return 0;
	return READ_ONCE(container_of(hw_fence, struct neuron_fence, base)->device_error);
}

static union nrn_desc *neuron_ring_slot(struct neuron_queue *q, u32 slot)
{
	return (union nrn_desc *)q->ring + slot;
}

static u32 neuron_qreg(struct neuron_queue *q, u32 reg)
{
	return NRN_QREG_BASE(q->idx) + reg;
}

/* Point the device at the (empty) ring and enable the queue. */
static void neuron_queue_hw_start(struct neuron_queue *q)
{
	struct neuron_device *ndev = q->ndev;

	q->tail = 0;
	memset(q->ring, 0, NEURON_RING_ENTRIES * NRN_DESC_SIZE);
	neuron_wr(ndev, neuron_qreg(q, NRN_QREG_RING_LO), lower_32_bits(q->ring_dma));
	neuron_wr(ndev, neuron_qreg(q, NRN_QREG_RING_HI), upper_32_bits(q->ring_dma));
	neuron_wr(ndev, neuron_qreg(q, NRN_QREG_RING_SIZE), NEURON_RING_ENTRIES);
	neuron_wr(ndev, neuron_qreg(q, NRN_QREG_CTRL), NRN_QCTRL_ENABLE);
}

/* Write @job's descriptors at the tail. Caller holds q->lock. */
static void neuron_queue_write_job_locked(struct neuron_queue *q,
					  struct neuron_job *job)
{
	u32 i;

	lockdep_assert_held(&q->lock);
	if (list_empty(&q->inflight))
		q->busy_since = ktime_get();
	job->started = ktime_get();
	job->first_slot = q->tail;
	for (i = 0; i < job->ndesc; i++) {
		union nrn_desc *d = neuron_ring_slot(q, q->tail);

		*d = job->descs[i];
		d->flags = i == job->ndesc - 1 ? NRN_DESC_F_IRQ : 0;
		d->copy.status = 0;
		q->tail = (q->tail + 1) % NEURON_RING_ENTRIES;
	}
	list_add_tail(&job->link, &q->inflight);
}

static void neuron_queue_doorbell(struct neuron_queue *q)
{
	/* Descriptors must be in memory before the device sees the new tail. */
	dma_wmb();
	neuron_wr(q->ndev, neuron_qreg(q, NRN_QREG_TAIL), q->tail);
}

/* The next fence of @q, made @job's hardware fence. Caller holds q->lock. */
static void neuron_fence_start_locked(struct neuron_queue *q,
				      struct neuron_fence *f,
				      struct neuron_job *job)
{
	lockdep_assert_held(&q->lock);
	f->queue = q;
	dma_fence_init(&f->base, &neuron_fence_ops, &q->lock, q->fence_context,
		       ++q->fence_seqno);
	job->hw_fence = dma_fence_get(&f->base);
}

/**
 * neuron_queue_push() - put a job on the hardware
 * @q: queue
 * @job: job whose descriptors are built
 *
 * Called from run_job, which drm_sched serialises per queue and which only
 * runs when the ring has room (credits).
 *
 * Return: the hardware fence, or an ERR_PTR.
 */
struct dma_fence *neuron_queue_push(struct neuron_queue *q,
				    struct neuron_job *job)
{
	struct neuron_fence *f;
	unsigned long flags;

	f = kzalloc(sizeof(*f), GFP_KERNEL);
	if (!f)
		return ERR_PTR(-ENOMEM);
	spin_lock_irqsave(&q->lock, flags);
	neuron_fence_start_locked(q, f, job);
	neuron_queue_write_job_locked(q, job);
	neuron_queue_doorbell(q);
	spin_unlock_irqrestore(&q->lock, flags);
	return &f->base;
}

/**
 * neuron_queue_fail() - end a job without running it
 * @q: its queue
 * @job: the job
 * @err: negative errno for its fence
 * @device_error: device error code to report with it
 *
 * Return: the job's hardware fence, already signalled, or an ERR_PTR.
 */
struct dma_fence *neuron_queue_fail(struct neuron_queue *q,
				    struct neuron_job *job, int err,
				    u32 device_error)
{
	struct neuron_fence *f;
	unsigned long flags;

	f = kzalloc(sizeof(*f), GFP_KERNEL);
	if (!f)
		return ERR_PTR(-ENOMEM);
	f->device_error = device_error;
	atomic64_inc(&q->ndev->stats.completed);
	atomic64_inc(&q->ndev->stats.errors);
	spin_lock_irqsave(&q->lock, flags);
	neuron_fence_start_locked(q, f, job);
	dma_fence_set_error(&f->base, err);
	dma_fence_signal_locked(&f->base);
	spin_unlock_irqrestore(&q->lock, flags);
	return &f->base;
}

/* Signal @job's hardware fence with @err (0 for success). Under q->lock. */
static void neuron_job_retire_locked(struct neuron_queue *q,
				     struct neuron_job *job, int err)
{
	struct neuron_counters *st = &q->ndev->stats;
	ktime_t now = ktime_get();

	lockdep_assert_held(&q->lock);
	list_del_init(&job->link);
	if (list_empty(&q->inflight))
		q->busy_ns += ktime_to_ns(ktime_sub(now, q->busy_since));
	if (job->stats)
		atomic64_add(ktime_to_ns(ktime_sub(now, job->started)),
			     &job->stats->busy_ns[q->is_core ? NEURON_ENGINE_CORE :
						  NEURON_ENGINE_DMA]);
	atomic64_inc(&st->completed);
	if (err) {
		atomic64_inc(&st->errors);
		dma_fence_set_error(job->hw_fence, err);
	}
	dma_fence_signal_locked(job->hw_fence);
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

/* Retire every job whose last descriptor the device has completed. */
static void neuron_queue_complete_locked(struct neuron_queue *q)
{
	struct neuron_job *job, *tmp;

	lockdep_assert_held(&q->lock);
	list_for_each_entry_safe(job, tmp, &q->inflight, link) {
		u32 last = (job->first_slot + job->ndesc - 1) % NEURON_RING_ENTRIES;
		u32 status, i, code = 0;

		status = le32_to_cpu(READ_ONCE(neuron_ring_slot(q, last)->copy.status));
		if (!(status & NRN_DESC_DONE))
			break;
		/* Read the other status words only after seeing DONE. */
		dma_rmb();
		for (i = 0; i < job->ndesc && !code; i++) {
			u32 slot = (job->first_slot + i) % NEURON_RING_ENTRIES;

			code = NRN_DESC_ERR(le32_to_cpu(neuron_ring_slot(q, slot)->copy.status));
		}
		if (code) {
			drm_dbg_driver(&q->ndev->drm, "%s: job failed, device error %u\n",
				       q->name, code);
			container_of(job->hw_fence, struct neuron_fence,
				     base)->device_error = code;
		}
		neuron_job_retire_locked(q, job, code ? -EIO : 0);
	}
}

static irqreturn_t neuron_queue_irq(int irq, void *arg)
{
	struct neuron_queue *q = arg;

	spin_lock(&q->lock);
	neuron_queue_complete_locked(q);
	spin_unlock(&q->lock);
	return IRQ_HANDLED;
}

/*
 * After the queue's hardware was reset: retire the jobs that completed
 * before it, fail @victim with @err (with @cancel_head, the first job not
 * completed, whichever it is, fails with -ECANCELED: it may have been
 * running), and write the others again into the fresh ring.
 */
static void neuron_queue_restart(struct neuron_queue *q, struct neuron_job *victim,
				 int err, bool cancel_head)
{
	struct neuron_job *job, *tmp;
	unsigned long flags;
	LIST_HEAD(requeue);

	spin_lock_irqsave(&q->lock, flags);
	neuron_queue_complete_locked(q);
	if (cancel_head && !list_empty(&q->inflight)) {
		victim = list_first_entry(&q->inflight, struct neuron_job, link);
		err = -ECANCELED;
	}
	list_splice_init(&q->inflight, &requeue);
	neuron_queue_hw_start(q);
	list_for_each_entry_safe(job, tmp, &requeue, link) {
		if (job == victim) {
			neuron_job_retire_locked(q, job, err);
			continue;
		}
		list_del_init(&job->link);
		neuron_queue_write_job_locked(q, job);
	}
	neuron_queue_doorbell(q);
	spin_unlock_irqrestore(&q->lock, flags);
}

/*
 * The escalation of a queue reset that did not take: reset the whole card.
 * @hung's scheduler is stopped by the caller; the others are stopped here.
 * On the other queues, the job that may have been running is cancelled
 * (it may have half-run), the ones behind it run again.
 */
static void neuron_device_reset(struct neuron_device *ndev,
				struct neuron_queue *hung,
				struct neuron_job *guilty)
{
	u32 i;

	atomic64_inc(&ndev->stats.device_resets);
	neuron_err(ndev, "%s: the queue reset did not complete, resetting the device\n",
		   hung->name);
	for (i = 0; i < ndev->num_queues; i++)
		if (&ndev->queues[i] != hung)
			drm_sched_wqueue_stop(&ndev->queues[i].sched);
	neuron_wr(ndev, NRN_REG_CTRL, NRN_CTRL_RESET);
	for (i = 0; i < ndev->num_queues; i++) {
		struct neuron_queue *q = &ndev->queues[i];

		if (q == hung)
			neuron_queue_restart(q, guilty, -ETIMEDOUT, false);
		else
			neuron_queue_restart(q, NULL, 0, true);
	}
	for (i = 0; i < ndev->num_queues; i++)
		if (&ndev->queues[i] != hung)
			drm_sched_wqueue_start(&ndev->queues[i].sched);
}

/**
 * neuron_queue_reset() - reset a queue after @guilty hung
 * @q: queue, its scheduler stopped
 * @guilty: the job that timed out
 *
 * Jobs that completed before the reset retire normally, @guilty fails with
 * -ETIMEDOUT, and the jobs queued behind it are written again into the
 * fresh ring: they had not started, so they run as if nothing happened.
 * If the queue does not come back, the whole device is reset. Runs on the
 * device's ordered reset workqueue (all queues' timeouts), so resets never
 * overlap.
 */
void neuron_queue_reset(struct neuron_queue *q, struct neuron_job *guilty)
{
	struct neuron_device *ndev = q->ndev;
	u32 status;

	atomic64_inc(&ndev->stats.queue_resets);
	neuron_wr(ndev, neuron_qreg(q, NRN_QREG_CTRL), NRN_QCTRL_RESET);
	if (readl_poll_timeout(ndev->regs + neuron_qreg(q, NRN_QREG_STATUS),
			       status, !(status & NRN_QSTATUS_BUSY), 100,
			       100 * USEC_PER_MSEC)) {
		neuron_device_reset(ndev, q, guilty);
		return;
	}
	neuron_queue_restart(q, guilty, -ETIMEDOUT, false);
}

/* Fail everything on the ring with @err: the device is going away. */
static void neuron_queue_cancel(struct neuron_queue *q, int err)
{
	struct neuron_job *job, *tmp;
	unsigned long flags;

	spin_lock_irqsave(&q->lock, flags);
	neuron_queue_complete_locked(q);
	list_for_each_entry_safe(job, tmp, &q->inflight, link)
		neuron_job_retire_locked(q, job, err);
	spin_unlock_irqrestore(&q->lock, flags);
}

/**
 * neuron_queues_stop() - quiesce all queues on removal
 * @ndev: device
 *
 * Resets the device so that it touches no memory any more, fails whatever
 * was in flight with -ENODEV, and lets the schedulers drain what is left
 * (run_job fails it once the device is unplugged).
 */
void neuron_queues_stop(struct neuron_device *ndev)
{
	u32 i;

	for (i = 0; i < ndev->num_queues; i++)
		drm_sched_wqueue_stop(&ndev->queues[i].sched);
	neuron_wr(ndev, NRN_REG_CTRL, NRN_CTRL_RESET);
	for (i = 0; i < ndev->num_queues; i++) {
		neuron_queue_cancel(&ndev->queues[i], -ENODEV);
		/*
		 * Let the scheduler free the jobs it ran, and end the queued
		 * ones: run_job refuses them now (drm_dev_enter fails).
		 */
		drm_sched_wqueue_start(&ndev->queues[i].sched);
	}
}

static void neuron_queues_fini(struct drm_device *drm, void *arg)
{
	struct neuron_device *ndev = arg;
	u32 i;

	for (i = 0; i < ndev->num_queues; i++)
		drm_sched_fini(&ndev->queues[i].sched);
}

static int neuron_queue_init(struct neuron_device *ndev, u32 idx)
{
	struct neuron_queue *q = &ndev->queues[idx];
	struct device *dev = ndev->drm.dev;
	struct drm_sched_init_args args = {
		.ops = &neuron_sched_ops,
		.num_rqs = DRM_SCHED_PRIORITY_COUNT,
		.credit_limit = NEURON_RING_ENTRIES - 1,
		.timeout = msecs_to_jiffies(job_timeout_ms),
		.timeout_wq = ndev->reset_wq,
		.name = q->name,
		.dev = dev,
	};
	int ret;

	q->ndev = ndev;
	q->idx = idx;
	q->is_core = idx >= ndev->num_dma;
	if (q->is_core)
		snprintf(q->name, sizeof(q->name), "core%u", idx - ndev->num_dma);
	else
		snprintf(q->name, sizeof(q->name), "dma%u", idx);
	spin_lock_init(&q->lock);
	INIT_LIST_HEAD(&q->inflight);
	q->fence_context = dma_fence_context_alloc(1);

	q->ring = dmam_alloc_coherent(dev, NEURON_RING_ENTRIES * NRN_DESC_SIZE,
				      &q->ring_dma, GFP_KERNEL);
	if (!q->ring)
		return -ENOMEM;
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

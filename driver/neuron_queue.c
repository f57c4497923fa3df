// SPDX-License-Identifier: GPL-2.0-only
/*
 * Hardware queues: each has a descriptor ring in DMA-coherent memory, an
 * MSI-X vector and a drm_sched instance. run_job copies a job's descriptors
 * into the ring and rings the doorbell; the interrupt handler retires jobs
 * in ring order by reading the status words the device writes back.
 *
 * Direct submission: a job that has nothing to wait for, from a context
 * with nothing left in the scheduler for that queue, is written to the ring
 * by SUBMIT itself, skipping the scheduler's work item. The ring is split
 * so that both kinds fit (NEURON_SCHED_SLOTS), such jobs are timed out by
 * the queue's watchdog instead of the scheduler, and the device's reaper
 * frees them once completed.
 */
#include <linux/dma-mapping.h>
#include <linux/interrupt.h>
#include <linux/iopoll.h>
#include <linux/slab.h>
#include <drm/drm_drv.h>
#include <drm/drm_managed.h>
#include <drm/drm_print.h>

#include "neuron_drv.h"
#include "neuron_job.h"
#include "neuron_queue.h"

static unsigned int job_timeout_ms = 10000;
module_param(job_timeout_ms, uint, 0444);
MODULE_PARM_DESC(job_timeout_ms, "Time a job may run before its queue is reset (ms)");

/* Completed direct jobs are freed in batches, this long after the first. */
#define NEURON_REAP_DELAY	msecs_to_jiffies(10)

/* For neuron_queue_restart(): whichever job is at the head of the ring. */
#define NEURON_HEAD		U64_MAX

static const char *neuron_fence_driver_name(struct dma_fence *f)
{
	return DRIVER_NAME;
}

static const char *neuron_fence_timeline_name(struct dma_fence *f)
{
	return container_of(f, struct neuron_fence, base)->queue->name;
}

static void neuron_queue_want_irq_locked(struct neuron_queue *q, u32 done_at);
static void neuron_queue_complete_locked(struct neuron_queue *q);

/*
 * Somebody waits for the fence (a callback, a sleeping waiter): a job that
 * asked for no interrupt needs one now. Called with the fence's lock, the
 * queue's lock, held.
 */
static bool neuron_fence_enable_signaling(struct dma_fence *f)
{
	struct neuron_fence *nf = container_of(f, struct neuron_fence, base);

	lockdep_assert_held(f->lock);
	if (nf->on_demand)
		neuron_queue_want_irq_locked(nf->queue, nf->done_at);
	return true;
}

/*
 * Hardware fences come from a SLAB_TYPESAFE_BY_RCU cache, as i915's
 * requests do: a fence may be reused as soon as it is released (RCU readers
 * take references with dma_fence_get_rcu_safe(), which checks), so it is
 * freed at once instead of after a grace period, and is not cleared on
 * allocation (init_on_alloc spares such caches): dma_fence_init() and
 * neuron_fence_alloc() set every field.
 */
static struct kmem_cache *neuron_fence_cache;

static void neuron_fence_release(struct dma_fence *f)
{
	kmem_cache_free(neuron_fence_cache, container_of(f, struct neuron_fence, base));
}

static const struct dma_fence_ops neuron_fence_ops = {
	.get_driver_name = neuron_fence_driver_name,
	.get_timeline_name = neuron_fence_timeline_name,
	.enable_signaling = neuron_fence_enable_signaling,
	.release = neuron_fence_release,
};

/**
 * neuron_fence_cache_init() - create the slab cache of hardware fences
 *
 * Return: 0 or -ENOMEM.
 */
int neuron_fence_cache_init(void)
{
	neuron_fence_cache = kmem_cache_create("neuron_fence",
					       sizeof(struct neuron_fence), 0,
					       SLAB_TYPESAFE_BY_RCU, NULL);
	return neuron_fence_cache ? 0 : -ENOMEM;
}

/** neuron_fence_cache_fini() - destroy it, every fence having been released */
void neuron_fence_cache_fini(void)
{
	kmem_cache_destroy(neuron_fence_cache);
}

/**
 * neuron_fence_device_error() - the device's error code for a job
 * @hw_fence: a job's hardware fence, or any other fence
 *
 * Return: NISA_ERR_* the device reported, or 0 (also for foreign fences).
 */
u32 neuron_fence_device_error(struct dma_fence *hw_fence)
{
	if (!hw_fence || hw_fence->ops != &neuron_fence_ops)
		return 0;
	return READ_ONCE(container_of(hw_fence, struct neuron_fence, base)->device_error);
}

static union nhw_desc *neuron_ring_slot(struct neuron_queue *q, u32 slot)
{
	return (union nhw_desc *)q->ring + slot;
}

static u32 neuron_qreg(struct neuron_queue *q, u32 reg)
{
	return NHW_QREG_BASE(q->idx) + reg;
}

/* Point the device at the (empty) ring and enable the queue. */
static void neuron_queue_hw_start(struct neuron_queue *q)
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
static void neuron_queue_write_job_locked(struct neuron_queue *q,
					  struct neuron_job *job)
{
	struct neuron_fence *f = container_of(job->hw_fence, struct neuron_fence, base);
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
}

static void neuron_queue_doorbell(struct neuron_queue *q)
{
	/* Descriptors must be in memory before the device sees the new tail. */
	dma_wmb();
	neuron_wr(q->ndev, neuron_qreg(q, NHW_QREG_TAIL), q->tail);
}

/* A hardware fence, its own fields set, before dma_fence_init(). */
static struct neuron_fence *neuron_fence_alloc(void)
{
	struct neuron_fence *f = kmem_cache_alloc(neuron_fence_cache, GFP_KERNEL);

	if (f) {
		f->device_error = 0;
		f->done_at = 0;
		f->on_demand = false;
	}
	return f;
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

/* While direct jobs are on the ring, the watchdog looks at it this often. */
#define NEURON_WATCHDOG_TICK	msecs_to_jiffies(20)

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
		if (q->stopped || q->direct_slots + job->ndesc > NEURON_DIRECT_SLOTS) {
			spin_unlock_irqrestore(&q->lock, flags);
			kmem_cache_free(neuron_fence_cache, f);
			return NULL;
		}
		q->direct_slots += job->ndesc;
		job->direct = true;
	}
	neuron_fence_start_locked(q, f, job);
	neuron_queue_write_job_locked(q, job);
	neuron_queue_doorbell(q);
	/* A small job may be done already: the doorbell can run it. */
	neuron_queue_complete_locked(q);
	spin_unlock_irqrestore(&q->lock, flags);
	/* Once armed, it re-arms itself while direct jobs are on the ring. */
	if (direct && !delayed_work_pending(&q->watchdog))
		queue_delayed_work(q->ndev->reset_wq, &q->watchdog, NEURON_WATCHDOG_TICK);
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

	f = neuron_fence_alloc();
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
	bool head = list_first_entry_or_null(&q->inflight, struct neuron_job,
					     link) == job;
	ktime_t now = ktime_get();

	lockdep_assert_held(&q->lock);
	list_del_init(&job->link);
	if (list_empty(&q->inflight))
		q->busy_ns += ktime_to_ns(ktime_sub(now, q->busy_since));
	/* Engine time: since it reached the head (0 if taken off elsewhere). */
	if (head) {
		if (job->stats)
			atomic64_add(ktime_to_ns(ktime_sub(now, q->head_since)),
				     &job->stats->busy_ns[q->is_core ? NEURON_ENGINE_CORE :
							  NEURON_ENGINE_DMA]);
		q->head_since = now;
	}
	atomic64_inc(&st->completed);
	neuron_job_unbudget(job);
	if (err) {
		atomic64_inc(&st->errors);
		dma_fence_set_error(job->hw_fence, err);
	}
	dma_fence_signal_timestamp_locked(job->hw_fence, now);
	if (job->direct) {
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
static void neuron_queue_want_irq_locked(struct neuron_queue *q, u32 done_at)
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
static void neuron_queue_rearm_locked(struct neuron_queue *q)
{
	struct neuron_job *job;

	lockdep_assert_held(&q->lock);
	if (!q->direct_slots)
		return;
	list_for_each_entry(job, &q->inflight, link) {
		struct neuron_fence *f = container_of(job->hw_fence,
						      struct neuron_fence, base);

		if (f->on_demand &&
		    test_bit(DMA_FENCE_FLAG_ENABLE_SIGNAL_BIT, &f->base.flags)) {
			neuron_queue_want_irq_locked(q, f->done_at);
			return;
		}
	}
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
		if (!(status & NHW_DESC_DONE))
			break;
		/* Read the other status words only after seeing DONE. */
		dma_rmb();
		for (i = 0; i < job->ndesc && !code; i++) {
			u32 slot = (job->first_slot + i) % NEURON_RING_ENTRIES;

			code = NHW_DESC_ERR(le32_to_cpu(neuron_ring_slot(q, slot)->copy.status));
		}
		if (code) {
			drm_dbg_driver(&q->ndev->drm, "%s: job failed, device error %u\n",
				       q->name, code);
			container_of(job->hw_fence, struct neuron_fence,
				     base)->device_error = code;
		}
		q->retired = container_of(job->hw_fence, struct neuron_fence,
					  base)->done_at;
		neuron_job_retire_locked(q, job, code ? -EIO : 0);
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

/* Take direct submissions away from @q while it is being reset. */
static void neuron_queue_set_stopped(struct neuron_queue *q, bool stopped)
{
	unsigned long flags;

	spin_lock_irqsave(&q->lock, flags);
	q->stopped = stopped;
	spin_unlock_irqrestore(&q->lock, flags);
}

/*
 * After the queue's hardware was reset: retire the jobs that completed
 * before it, fail the job whose hardware fence has seqno @victim with @err
 * (NEURON_HEAD: the first job not completed, whichever it is: it was
 * running), write the others again into the fresh ring, and take direct
 * submissions again.
 */
static void neuron_queue_restart(struct neuron_queue *q, u64 victim, int err)
{
	struct neuron_job *job, *tmp;
	unsigned long flags;
	LIST_HEAD(requeue);

	spin_lock_irqsave(&q->lock, flags);
	neuron_queue_complete_locked(q);
	job = list_first_entry_or_null(&q->inflight, struct neuron_job, link);
	if (victim == NEURON_HEAD && job)
		victim = neuron_job_seqno(job);
	list_splice_init(&q->inflight, &requeue);
	neuron_queue_hw_start(q);
	list_for_each_entry_safe(job, tmp, &requeue, link) {
		if (victim && neuron_job_seqno(job) == victim) {
			neuron_job_retire_locked(q, job, err);
			continue;
		}
		list_del_init(&job->link);
		neuron_queue_write_job_locked(q, job);
	}
	neuron_queue_doorbell(q);
	neuron_queue_rearm_locked(q);
	q->stopped = false;
	spin_unlock_irqrestore(&q->lock, flags);
}

/*
 * The escalation of a queue reset that did not take: reset the whole card.
 * @hung's scheduler is stopped by the caller; the others are stopped here.
 * On the other queues, the job that may have been running is cancelled
 * (it may have half-run), the ones behind it run again.
 */
static void neuron_device_reset(struct neuron_device *ndev,
				struct neuron_queue *hung, u64 guilty)
{
	u32 i;

	atomic64_inc(&ndev->stats.device_resets);
	neuron_err(ndev, "%s: the queue reset did not complete, resetting the device\n",
		   hung->name);
	for (i = 0; i < ndev->num_queues; i++) {
		if (&ndev->queues[i] == hung)
			continue;
		drm_sched_wqueue_stop(&ndev->queues[i].sched);
		neuron_queue_set_stopped(&ndev->queues[i], true);
	}
	neuron_wr(ndev, NHW_REG_CTRL, NHW_CTRL_RESET);
	for (i = 0; i < ndev->num_queues; i++) {
		struct neuron_queue *q = &ndev->queues[i];

		if (q == hung)
			neuron_queue_restart(q, guilty, -ETIMEDOUT);
		else
			neuron_queue_restart(q, NEURON_HEAD, -ECANCELED);
	}
	for (i = 0; i < ndev->num_queues; i++)
		if (&ndev->queues[i] != hung)
			drm_sched_wqueue_start(&ndev->queues[i].sched);
}

/**
 * neuron_queue_reset() - reset a queue after a job hung
 * @q: queue, its scheduler stopped
 * @guilty: seqno of the hardware fence of the job that timed out
 *
 * Jobs that completed before the reset retire normally, @guilty fails with
 * -ETIMEDOUT, and the jobs queued behind it are written again into the
 * fresh ring: they had not started, so they run as if nothing happened.
 * If the queue does not come back, the whole device is reset. Runs on the
 * device's ordered reset workqueue (all queues' timeouts), so resets never
 * overlap.
 */
void neuron_queue_reset(struct neuron_queue *q, u64 guilty)
{
	struct neuron_device *ndev = q->ndev;
	u32 status;

	atomic64_inc(&ndev->stats.queue_resets);
	neuron_queue_set_stopped(q, true);
	neuron_wr(ndev, neuron_qreg(q, NHW_QREG_CTRL), NHW_QCTRL_RESET);
	if (readl_poll_timeout(ndev->regs + neuron_qreg(q, NHW_QREG_STATUS),
			       status, !(status & NHW_QSTATUS_BUSY), 100,
			       100 * USEC_PER_MSEC)) {
		neuron_device_reset(ndev, q, guilty);
		return;
	}
	neuron_queue_restart(q, guilty, -ETIMEDOUT);
}

/*
 * The scheduler times out the jobs it ran; this looks after the others,
 * every NEURON_WATCHDOG_TICK while there are any: it retires those that
 * completed without an interrupt (nobody waited for them), and if the
 * oldest job on the ring is a direct one that has been there (so, running)
 * for longer than job_timeout_ms, resets the queue with it as the guilty
 * job. The
 * scheduler's timeout runs from when its job reached the ring, and restarts
 * when one of its jobs completes, not when a direct one does: while direct
 * jobs ahead complete, the queue is making progress, and the scheduler's
 * timeout is restarted too. Runs on the reset queue (the scheduler's
 * timeout queue), so it never overlaps with a reset or a timeout handler.
 */
static void neuron_queue_watchdog(struct work_struct *work)
{
	struct neuron_queue *q = container_of(to_delayed_work(work),
					      struct neuron_queue, watchdog);
	unsigned long flags, delay = 0;
	struct neuron_job *head;
	bool progress;
	u64 guilty = 0;
	int idx;

	spin_lock_irqsave(&q->lock, flags);
	neuron_queue_complete_locked(q);
	progress = q->direct_retired != q->watchdog_seen;
	q->watchdog_seen = q->direct_retired;
	head = list_first_entry_or_null(&q->inflight, struct neuron_job, link);
	if (head && head->direct &&
	    ktime_ms_delta(ktime_get(), q->head_since) >= job_timeout_ms)
		guilty = neuron_job_seqno(head);
	else if (q->direct_slots)
		delay = NEURON_WATCHDOG_TICK;
	spin_unlock_irqrestore(&q->lock, flags);

	if (progress)
		drm_sched_resume_timeout(&q->sched, q->sched.timeout);
	if (delay) {
		queue_delayed_work(q->ndev->reset_wq, &q->watchdog, delay);
		return;
	}
	if (!guilty || !drm_dev_enter(&q->ndev->drm, &idx))
		return;
	neuron_warn(q->ndev, "%s: job timed out, resetting the queue\n", q->name);
	drm_sched_wqueue_stop(&q->sched);
	neuron_queue_reset(q, guilty);
	drm_sched_wqueue_start(&q->sched);
	drm_dev_exit(idx);
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

	for (i = 0; i < ndev->num_queues; i++) {
		drm_sched_wqueue_stop(&ndev->queues[i].sched);
		/* For good: no ioctl is past drm_dev_enter() any more. */
		neuron_queue_set_stopped(&ndev->queues[i], true);
	}
	neuron_wr(ndev, NHW_REG_CTRL, NHW_CTRL_RESET);
	for (i = 0; i < ndev->num_queues; i++) {
		neuron_queue_cancel(&ndev->queues[i], -ENODEV);
		/*
		 * Let the scheduler free the jobs it ran, and end the queued
		 * ones: run_job refuses them now (drm_dev_enter fails).
		 */
		drm_sched_wqueue_start(&ndev->queues[i].sched);
	}
	/* The direct jobs just cancelled: free them now. */
	mod_delayed_work(system_wq, &ndev->reap_work, 0);
}

static void neuron_queues_fini(struct drm_device *drm, void *arg)
{
	struct neuron_device *ndev = arg;
	u32 i;

	for (i = 0; i < ndev->num_queues; i++) {
		cancel_delayed_work_sync(&ndev->queues[i].watchdog);
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
	INIT_DELAYED_WORK(&q->watchdog, neuron_queue_watchdog);
	q->fence_context = dma_fence_context_alloc(1);

	q->ring = dmam_alloc_coherent(dev, NEURON_RING_ENTRIES * NHW_DESC_SIZE,
				      &q->ring_dma, GFP_KERNEL);
	if (!q->ring)
		return -ENOMEM;
	if (q->is_core) {
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

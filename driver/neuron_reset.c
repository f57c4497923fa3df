// SPDX-License-Identifier: GPL-2.0-only
/*
 * Recovery: resetting a queue whose job hung (escalating to a device reset
 * when the queue does not come back), the per-queue watchdog that times out
 * directly submitted jobs, and quiescing every queue on removal. All of it
 * runs on the device's ordered reset workqueue (the schedulers' timeout
 * queue) or on removal, with the queue's scheduler stopped, so resets never
 * overlap. q->lock protects the ring and the in-flight list as in
 * neuron_queue.c; q->stopped, under it, keeps direct submission off a queue
 * while it is being reset.
 */
#include <linux/iopoll.h>
#include <linux/moduleparam.h>
#include <drm/drm_drv.h>
#include <drm/drm_print.h>

#include "neuron_drv.h"
#include "neuron_job.h"
#include "neuron_queue.h"
#include "neuron_reset.h"
#include "neuron_trace.h"

unsigned int neuron_job_timeout_ms = 10000;
module_param_named(job_timeout_ms, neuron_job_timeout_ms, uint, 0444);
MODULE_PARM_DESC(job_timeout_ms, "Time a job may run before its queue is reset (ms)");

/* For neuron_queue_restart(): whichever job is at the head of the ring. */
#define NEURON_HEAD		U64_MAX
/* For neuron_queue_restart(): every job on the ring. */
#define NEURON_ALL		(U64_MAX - 1)

/* While direct jobs are on the ring, the watchdog looks at it this often. */
#define NEURON_WATCHDOG_TICK	msecs_to_jiffies(20)

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
 * running; NEURON_ALL: every job not completed), write the others again
 * into the fresh ring, and take direct submissions again.
 */
static void neuron_queue_restart(struct neuron_queue *q, u64 victim, int err)
{
	struct neuron_job *job, *tmp;
	unsigned long flags;
	LIST_HEAD(requeue);
	int before;

	spin_lock_irqsave(&q->lock, flags);
	neuron_queue_complete_locked(q);
	job = list_first_entry_or_null(&q->inflight, struct neuron_job, link);
	if (victim == NEURON_HEAD && job)
		victim = neuron_job_seqno(job);
	list_splice_init(&q->inflight, &requeue);
	neuron_queue_hw_start(q);
	/*
	 * @before: how the job ahead of this one ended, 0 if it is written
	 * again (the device then judges). The fresh ring forgets it, so a
	 * job chained behind a failed one fails here, as the device would
	 * have failed it.
	 */
	before = q->last_err;
	list_for_each_entry_safe(job, tmp, &requeue, link) {
		if (victim == NEURON_ALL ||
		    (victim && neuron_job_seqno(job) == victim)) {
			neuron_queue_retire_locked(q, job, err);
			before = err;
			continue;
		}
		if (job->chained && before) {
			to_neuron_fence(job->hw_fence)->site = q->last_site;
			neuron_queue_retire_locked(q, job, before);
			continue;
		}
		list_del_init(&job->link);
		neuron_queue_write_job_locked(q, job);
		before = 0;
	}
	neuron_queue_doorbell(q);
	neuron_queue_rearm_locked(q);
	q->stopped = false;
	spin_unlock_irqrestore(&q->lock, flags);
}

/*
 * The escalation of a queue reset that did not take: reset the whole card.
 * @hung's scheduler is stopped by the caller; the others are stopped here.
 * On @hung, @victim fails with @err; on the other queues, the job that may
 * have been running is cancelled (it may have half-run), the ones behind
 * it run again.
 */
static void neuron_device_reset(struct neuron_device *ndev,
				struct neuron_queue *hung, u64 victim, int err)
{
	u32 i;

	atomic64_inc(&ndev->stats.device_resets);
	trace_neuron_reset(dev_name(ndev->drm.dev), hung->name, victim, true);
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
			neuron_queue_restart(q, victim, err);
		else
			neuron_queue_restart(q, NEURON_HEAD, -ECANCELED);
	}
	for (i = 0; i < ndev->num_queues; i++)
		if (&ndev->queues[i] != hung)
			drm_sched_wqueue_start(&ndev->queues[i].sched);
}

/* Reset @q's hardware, then fail @victim (or NEURON_ALL) with @err. */
static void neuron_queue_reset_fail(struct neuron_queue *q, u64 victim, int err)
{
	struct neuron_device *ndev = q->ndev;
	u32 status;

	atomic64_inc(&ndev->stats.queue_resets);
	trace_neuron_reset(dev_name(ndev->drm.dev), q->name, victim, false);
	neuron_queue_set_stopped(q, true);
	neuron_wr(ndev, neuron_qreg(q, NHW_QREG_CTRL), NHW_QCTRL_RESET);
	if (readl_poll_timeout(ndev->regs + neuron_qreg(q, NHW_QREG_STATUS),
			       status, !(status & NHW_QSTATUS_BUSY), 100,
			       100 * USEC_PER_MSEC)) {
		neuron_device_reset(ndev, q, victim, err);
		return;
	}
	neuron_queue_restart(q, victim, err);
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
	neuron_queue_reset_fail(q, guilty, -ETIMEDOUT);
}

/**
 * neuron_queue_peer_gone() - fail a link queue's jobs, its peer removed
 * @work: the queue's peer_gone work, queued by neuron_link_unregister()
 *
 * Every job on the ring writes into the memory of the card that is going
 * away (a link has one peer): the queue is reset and they fail with
 * -ENODEV, whether the device would have failed them or not -- the card
 * may come back, with other buffers where these were. The jobs still in
 * the scheduler fail when they reach run_job (their peer is unplugged).
 * Runs on the reset queue, so it never overlaps with a reset.
 */
void neuron_queue_peer_gone(struct work_struct *work)
{
	struct neuron_queue *q = container_of(work, struct neuron_queue, peer_gone);
	int idx;

	/* A card being removed itself fails everything on its rings. */
	if (!drm_dev_enter(&q->ndev->drm, &idx))
		return;
	neuron_warn(q->ndev, "%s: peer card removed, failing its jobs\n", q->name);
	drm_sched_wqueue_stop(&q->sched);
	neuron_queue_reset_fail(q, NEURON_ALL, -ENODEV);
	drm_sched_wqueue_start(&q->sched);
	drm_dev_exit(idx);
}

/*
 * The scheduler times out the jobs it ran; this looks after the others,
 * every NEURON_WATCHDOG_TICK while there are any: it retires those that
 * completed without an interrupt (nobody waited for them), and if the
 * oldest job on the ring is a direct one that has been there (so, running)
 * for longer than job_timeout_ms, resets the queue with it as the guilty
 * job. The scheduler's timeout runs from when its job reached the ring, and
 * restarts when one of its jobs completes, not when a direct one does:
 * while direct jobs ahead complete, the queue is making progress, and the
 * scheduler's timeout is restarted too. Runs on the reset queue (the scheduler's
 * timeout queue), so it never overlaps with a reset or a timeout handler.
 */
void neuron_queue_watchdog(struct work_struct *work)
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
	    ktime_ms_delta(ktime_get(), q->head_since) >= neuron_job_timeout_ms)
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
	trace_neuron_timeout(dev_name(q->ndev->drm.dev), q->name, guilty);
	neuron_warn(q->ndev, "%s: job timed out, resetting the queue\n", q->name);
	drm_sched_wqueue_stop(&q->sched);
	neuron_queue_reset(q, guilty);
	drm_sched_wqueue_start(&q->sched);
	drm_dev_exit(idx);
}

/**
 * neuron_queue_watchdog_arm() - start the watchdog, unless it is pending
 * @q: queue that just took a direct job
 *
 * Once armed, it re-arms itself while direct jobs are on the ring.
 */
void neuron_queue_watchdog_arm(struct neuron_queue *q)
{
	if (!delayed_work_pending(&q->watchdog))
		queue_delayed_work(q->ndev->reset_wq, &q->watchdog, NEURON_WATCHDOG_TICK);
}

/* Fail everything on the ring with @err: the device is going away. */
static void neuron_queue_cancel(struct neuron_queue *q, int err)
{
	struct neuron_job *job, *tmp;
	unsigned long flags;

	spin_lock_irqsave(&q->lock, flags);
	neuron_queue_complete_locked(q);
	list_for_each_entry_safe(job, tmp, &q->inflight, link)
		neuron_queue_retire_locked(q, job, err);
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

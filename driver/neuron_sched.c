// SPDX-License-Identifier: GPL-2.0-only
/**
 * DOC: neuron scheduling
 *
 * Each hardware queue has a drm_sched instance, and each open file an
 * entity on each queue, so a context's jobs for a queue run in the order
 * it submitted them. A job that depends on something -- an in-sync that
 * has not signalled, or an earlier job of its context still waiting in the
 * scheduler for that queue -- is handed to the scheduler by SUBMIT, with
 * its in-syncs' fences as dependencies (so is one that finds the direct
 * share of the ring full, or its queue being reset). Once they have
 * signalled, run_job writes its descriptors into the ring
 * (neuron_queue_push()), within the scheduler's share of the ring: one
 * credit per descriptor, at most NEURON_SCHED_SLOTS. The hardware fence
 * run_job returns signals when the job is retired (interrupt handler or
 * poller); the scheduler then signals the job's finished fence, which is
 * what syncobjs hold, and calls free_job.
 *
 * A job whose input failed does not run: run_job ends it at once with the
 * same error and device error code, so an error travels down a chain of
 * dependent jobs, across cards too (an in-sync may hold another card's
 * fence). A link job whose peer card has been removed fails with -ENODEV
 * there too (neuron_link.c). A job that does not complete within job_timeout_ms (the
 * scheduler's timeout, which restarts while jobs ahead of it on the ring,
 * direct ones included, complete) is timed out: timedout_job resets its
 * queue (neuron_reset.c), which fails it with -ETIMEDOUT and writes the
 * jobs behind it into the fresh ring again. All timeouts run on the
 * device's ordered reset workqueue, so resets never overlap.
 *
 * Jobs with nothing to wait for skip all this (direct submission, see
 * neuron_submit.c), and so do jobs waiting only for the last job on their
 * queue's ring, chained behind it: they share the ring with the
 * scheduler's, are timed out by the queue's watchdog and freed by the
 * device's reaper.
 *
 * Locking: drm_sched serialises run_job per queue; the ring is under
 * q->lock (neuron_queue.c); stats->queued, the context's count of jobs in
 * the scheduler per queue, is atomic.
 */
#include <linux/dma-fence-chain.h>
#include <drm/drm_drv.h>
#include <drm/drm_print.h>
#include <drm/gpu_scheduler.h>

#include "neuron_drv.h"
#include "neuron_fence.h"
#include "neuron_job.h"
#include "neuron_queue.h"
#include "neuron_reset.h"
#include "neuron_trace.h"

static struct dma_fence *neuron_job_start(struct neuron_job *job)
{
	struct dma_fence *fence, *in;
	int idx, pidx = 0, err;
	bool link;
	u32 i;

	if (unlikely(job->base.s_fence->finished.error))
		return NULL;
	if (!drm_dev_enter(&job->queue->ndev->drm, &idx))
		return ERR_PTR(-ENODEV);
	/* An input failed: the job does not run, the error passes on. */
	for (i = 0; i < job->in_fence_count; i++) {
		in = dma_fence_chain_contained(job->in_fences[i]);
		err = dma_fence_get_status(in);
		if (err < 0) {
			struct neuron_error_site site = neuron_fence_sync_site(in);

			fence = neuron_queue_fail(job->queue, job, err, &site);
			drm_dev_exit(idx);
			return fence;
		}
	}
	/* A link job whose peer card has been removed does not run. */
	link = job->peer;
	if (link && !drm_dev_enter(&job->peer->drm, &pidx)) {
		fence = neuron_queue_fail(job->queue, job, -ENODEV, NULL);
		drm_dev_exit(idx);
		return fence;
	}
	fence = neuron_queue_push(job->queue, job, false);
	if (link)
		drm_dev_exit(pidx);
	drm_dev_exit(idx);
	return fence;
}

static struct dma_fence *neuron_run_job(struct drm_sched_job *sched_job)
{
	struct neuron_job *job = to_neuron_job(sched_job);
	struct dma_fence *fence = neuron_job_start(job);

	/* On the ring (or ended): the context may submit directly again. */
	atomic_dec(&job->stats->queued[job->queue->idx]);
	return fence;
}

static enum drm_gpu_sched_stat neuron_timedout_job(struct drm_sched_job *sched_job)
{
	struct neuron_job *job = to_neuron_job(sched_job);
	struct neuron_queue *q = job->queue;
	int idx;

	if (!drm_dev_enter(&q->ndev->drm, &idx))
		return DRM_GPU_SCHED_STAT_ENODEV;
	trace_neuron_timeout(dev_name(q->ndev->drm.dev), q->name, neuron_job_seqno(job));
	neuron_warn(q->ndev, "%s: job timed out, resetting the queue\n", q->name);
	drm_sched_wqueue_stop(&q->sched);
	neuron_queue_reset(q, neuron_job_seqno(job));
	drm_sched_wqueue_start(&q->sched);
	/*
	 * drm_sched took the job off its pending list before calling us, and
	 * its hardware fence has signalled now (failed by the reset, or
	 * completed just before it): let the scheduler free it on return.
	 */
	q->sched.free_guilty = true;
	drm_dev_exit(idx);
	return DRM_GPU_SCHED_STAT_NOMINAL;
}

static void neuron_free_job(struct drm_sched_job *sched_job)
{
	struct neuron_job *job = to_neuron_job(sched_job);

	drm_sched_job_cleanup(sched_job);
	neuron_job_free(job);
}

const struct drm_sched_backend_ops neuron_sched_ops = {
	.run_job = neuron_run_job,
	.timedout_job = neuron_timedout_job,
	.free_job = neuron_free_job,
};

// SPDX-License-Identifier: GPL-2.0-only
/*
 * The SUBMIT and WAIT ioctls. SUBMIT checks its arguments, builds the job
 * (neuron_job.c) and either writes it into the queue's ring itself, when it
 * has nothing to wait for but the last job on that ring (direct submission,
 * chained behind that job if need be), or hands it to the queue's
 * scheduler (neuron_sched.c); its fence goes into the out-syncobj. WAIT
 * polls the rings for a moment before sleeping: a short job then costs two
 * system calls, not a round of work items, interrupts and wake-ups.
 *
 * Locking: the context's submit_lock keeps the choice between the two
 * paths and the push of its jobs in order; stats->queued (atomic) counts
 * its jobs still in the scheduler, per queue.
 */
#include <linux/dma-fence-chain.h>
#include <linux/moduleparam.h>
#include <linux/sched/signal.h>
#include <drm/drm_drv.h>
#include <drm/drm_syncobj.h>
#include <drm/gpu_scheduler.h>
#include <drm/neuron_accel.h>

#include "neuron_drv.h"
#include "neuron_fence.h"
#include "neuron_job.h"
#include "neuron_queue.h"
#include "neuron_trace.h"

static unsigned int wait_poll_us = 20;
module_param(wait_poll_us, uint, 0644);
MODULE_PARM_DESC(wait_poll_us, "Time WAIT polls the rings before sleeping (us, 0: never)");

/* The in-fences become the scheduler job's dependencies. */
static int neuron_job_add_deps(struct neuron_job *job)
{
	u32 i;
	int ret;

	for (i = 0; i < job->in_fence_count; i++) {
		/* The scheduler takes a reference of its own. */
		ret = drm_sched_job_add_dependency(&job->base,
						   dma_fence_get(job->in_fences[i]));
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * May @job skip the scheduler? Only if every input has signalled without
 * error (a failed one is the scheduler path's to pass on) -- or has not
 * signalled but is the hardware fence of a job on the same queue: the ring
 * runs that one first, and neuron_queue_push() chains this one behind it
 * (NHW_DESC_F_AFTER) if it is still the last on the ring -- and none of the
 * context's earlier jobs for this queue is still in the scheduler, which
 * would otherwise run after it. Caller holds the context's submit_lock.
 */
static bool neuron_job_input_ok(struct neuron_job *job, struct dma_fence *in)
{
	if (dma_fence_is_signaled(in))
		return dma_fence_get_status(in) >= 0;
	if (!(job->queue->ndev->caps & NHW_CAP_AFTER) ||
	    !neuron_fence_on_queue(in, job->queue) || (job->after && job->after != in))
		return false;
	/* A reference: a timeline may drop the point once it signals. */
	job->after = job->after ?: dma_fence_get(in);
	return true;
}

static bool neuron_job_inputs_done(struct neuron_job *job)
{
	struct dma_fence *iter;
	u32 i;

	dma_fence_put(job->after);
	job->after = NULL;
	for (i = 0; i < job->in_fence_count; i++) {
		/* Each point of a timeline not signalled yet, from the newest. */
		dma_fence_chain_for_each(iter, job->in_fences[i]) {
			if (!neuron_job_input_ok(job, dma_fence_chain_contained(iter))) {
				dma_fence_put(iter);
				dma_fence_put(job->after);
				job->after = NULL;
				return false;
			}
		}
	}
	return true;
}

static bool neuron_job_ready(struct neuron_job *job)
{
	if (atomic_read(&job->stats->queued[job->queue->idx]))
		return false;
	if (neuron_job_inputs_done(job))
		return true;
	/*
	 * An input may have completed without an interrupt (a direct job
	 * nobody waited for yet): retire what is done, and look again.
	 */
	neuron_queues_poll(job->queue->ndev);
	return neuron_job_inputs_done(job);
}

/* Hand @job to its queue's scheduler; its finished fence. Under submit_lock. */
static struct dma_fence *neuron_job_push_sched(struct neuron_job *job,
					       struct neuron_file_priv *fpriv,
					       struct drm_file *file)
{
	struct dma_fence *finished;
	int ret;

	lockdep_assert_held(&fpriv->submit_lock);
	memset(&job->base, 0, sizeof(job->base));
	ret = drm_sched_job_init(&job->base, &fpriv->entities[job->queue->idx],
				 job->ndesc, fpriv, file->client_id);
	if (ret)
		return ERR_PTR(ret);
	ret = neuron_job_add_deps(job);
	if (ret) {
		drm_sched_job_cleanup(&job->base);
		return ERR_PTR(ret);
	}
	drm_sched_job_arm(&job->base);
	finished = dma_fence_get(&job->base.s_fence->finished);
	atomic_inc(&job->stats->queued[job->queue->idx]);
	/* Accepted: SUBMIT's event, before run_job may take the job. */
	trace_neuron_submit(dev_name(job->queue->ndev->drm.dev), job->queue->name,
			    job->ndesc, false);
	drm_sched_entity_push_job(&job->base);
	return finished;
}

static_assert(DRM_NEURON_MAX_BOS <= NHW_MAX_SLOTS);

/* Cheap checks of the arguments, before any lookup or allocation. */
static int neuron_submit_checks(struct neuron_device *ndev,
				struct drm_neuron_submit *args)
{
	if (args->flags || args->pad || args->out_sync.pad)
		return -EINVAL;
	if (args->in_sync_count > DRM_NEURON_MAX_SYNCS)
		return -EINVAL;
	switch (args->engine) {
	case DRM_NEURON_ENGINE_DMA:
	case DRM_NEURON_ENGINE_LINK:
		if (args->index >= (args->engine == DRM_NEURON_ENGINE_DMA ?
				    ndev->num_dma : ndev->num_links))
			return -EINVAL;
		if (!args->copy_count || args->copy_count > DRM_NEURON_MAX_COPIES)
			return -EINVAL;
		if (args->kernel_handle || args->kernel_offset || args->kernel_size ||
		    args->bos || args->bo_count)
			return -EINVAL;
		return 0;
	case DRM_NEURON_ENGINE_CORE:
		if (args->index >= ndev->num_cores)
			return -EINVAL;
		if (args->copies || args->copy_count)
			return -EINVAL;
		if (args->bo_count > DRM_NEURON_MAX_BOS || !args->kernel_size ||
		    args->kernel_size % NISA_INSN_SIZE ||
		    args->kernel_size / NISA_INSN_SIZE > NISA_MAX_INSNS)
			return -EINVAL;
		return 0;
	}
	return -EINVAL;
}

static struct neuron_queue *neuron_submit_queue(struct neuron_device *ndev,
						struct drm_neuron_submit *args)
{
	if (args->engine == DRM_NEURON_ENGINE_CORE)
		return &ndev->queues[ndev->num_dma + args->index];
	if (args->engine == DRM_NEURON_ENGINE_LINK)
		return neuron_link_queue(ndev, args->index);
	return &ndev->queues[args->index];
}

int neuron_submit_ioctl(struct drm_device *drm, void *data,
			struct drm_file *file)
{
	struct neuron_device *ndev = to_neuron_device(drm);
	struct neuron_file_priv *fpriv = file->driver_priv;
	struct drm_neuron_submit *args = data;
	struct drm_syncobj *out_syncobj = NULL;
	struct dma_fence_chain *chain = NULL;
	struct dma_fence *fence = NULL;
	struct neuron_queue *q;
	struct neuron_job *job;
	int ret, idx, pidx = 0;
	bool link;

	ret = neuron_submit_checks(ndev, args);
	if (ret)
		return ret;
	q = neuron_submit_queue(ndev, args);

	if (!drm_dev_enter(drm, &idx))
		return -ENODEV;
	job = neuron_job_alloc(args);
	if (!job) {
		ret = -ENOMEM;
		goto out_exit;
	}
	job->queue = q;
	atomic64_inc(&ndev->stats.jobs);
	kref_get(&fpriv->stats->ref);
	job->stats = fpriv->stats;

	ret = neuron_job_build(job, file, args);
	if (ret)
		goto out_free;

	if (args->out_sync.handle) {
		out_syncobj = drm_syncobj_find(file, args->out_sync.handle);
		if (!out_syncobj) {
			ret = -ENOENT;
			goto out_free;
		}
		if (args->out_sync.point) {
			chain = dma_fence_chain_alloc();
			if (!chain) {
				ret = -ENOMEM;
				goto out_put_syncobj;
			}
		}
	}

	ret = neuron_job_get_in_syncs(job, file, args);
	if (ret)
		goto out_free_chain;

	/* A link job: its peer card stays until the job is on its way. */
	link = job->peer;
	if (link) {
		ret = neuron_link_enter(job, &pidx);
		if (ret)
			goto out_free_chain;
	}
	/* One job at a time per context, so its jobs stay ordered. */
	mutex_lock(&fpriv->submit_lock);
	if (neuron_job_ready(job))
		fence = neuron_queue_push(q, job, true);
	if (!fence)
		fence = neuron_job_push_sched(job, fpriv, file);
	mutex_unlock(&fpriv->submit_lock);
	/* The job may be freed already: not to be touched. */
	if (link)
		drm_dev_exit(pidx);
	if (IS_ERR(fence)) {
		ret = PTR_ERR(fence);
		goto out_free_chain;
	}
	/* From here on, the job belongs to the queue or its scheduler. */
	atomic64_inc(&ndev->stats.submitted);

	if (out_syncobj) {
		if (chain)
			drm_syncobj_add_point(out_syncobj, chain, fence,
					      args->out_sync.point);
		else
			drm_syncobj_replace_fence(out_syncobj, fence);
		drm_syncobj_put(out_syncobj);
	}
	dma_fence_put(fence);
	drm_dev_exit(idx);
	return 0;

out_free_chain:
	dma_fence_chain_free(chain);
out_put_syncobj:
	if (out_syncobj)
		drm_syncobj_put(out_syncobj);
out_free:
	neuron_job_free(job);
out_exit:
	drm_dev_exit(idx);
	return ret;
}

/*
 * Poll the rings for up to wait_poll_us (at most the caller's timeout, and
 * at least once) before sleeping: a job that is about to complete is
 * retired here, without waiting for its interrupt and the wake-up behind
 * it. Jobs that asked for no interrupt are seen at once this way.
 */
static void neuron_wait_poll(struct neuron_device *ndev, struct dma_fence *fence,
			     s64 timeout_ns)
{
	u64 poll_ns = wait_poll_us * NSEC_PER_USEC, end;

	if (dma_fence_is_signaled(fence))
		return;
	if (timeout_ns >= 0)
		poll_ns = min_t(u64, poll_ns, timeout_ns);
	end = ktime_get_ns() + poll_ns;
	do {
		neuron_queues_poll(ndev);
		if (dma_fence_is_signaled(fence))
			return;
		cpu_relax();
	} while (ktime_get_ns() < end && !signal_pending(current));
}

int neuron_wait_ioctl(struct drm_device *drm, void *data,
		      struct drm_file *file)
{
	struct drm_neuron_wait *args = data;
	struct neuron_error_site site;
	struct dma_fence *fence, *f;
	long timeout, ret;
	int status;

	if (args->flags)
		return -EINVAL;
	ret = drm_syncobj_find_fence(file, args->handle, args->point, 0, &fence);
	if (ret)
		return ret;
	neuron_wait_poll(to_neuron_device(drm), fence, args->timeout_ns);
	timeout = args->timeout_ns < 0 ? MAX_SCHEDULE_TIMEOUT :
		  nsecs_to_jiffies(args->timeout_ns);
	ret = dma_fence_is_signaled(fence) ? 1 :
	      dma_fence_wait_timeout(fence, true, timeout);
	if (ret == 0 && args->timeout_ns != 0)
		ret = -ETIME;
	else if (ret == 0)
		ret = dma_fence_is_signaled(fence) ? 1 : -ETIME;
	if (ret > 0) {
		f = dma_fence_chain_contained(fence);
		status = dma_fence_get_status(f);
		args->status = status < 0 ? status : 0;
		site = status == -EIO ? neuron_fence_sync_site(f) : NEURON_NO_ERROR_SITE;
		args->device_error = site.code;
		args->error_insn = site.insn;
		args->pad = 0;
		args->error_cookie = site.cookie;
		ret = 0;
	}
	dma_fence_put(fence);
	return ret;
}

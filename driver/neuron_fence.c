// SPDX-License-Identifier: GPL-2.0-only
/*
 * Hardware fences: the dma_fence ops of a job's hardware fence, their slab
 * cache, giving a job its fence when it reaches a queue, and reading back
 * the device's error code. A fence's lock is its queue's lock (q->lock),
 * which also protects @done_at and @on_demand; @site is written under it
 * before the fence signals and read without it afterwards.
 */
#include <linux/slab.h>
#include <drm/gpu_scheduler.h>

#include "neuron_drv.h"
#include "neuron_fence.h"
#include "neuron_job.h"
#include "neuron_queue.h"

static const char *neuron_fence_driver_name(struct dma_fence *f)
{
	return DRIVER_NAME;
}

static const char *neuron_fence_timeline_name(struct dma_fence *f)
{
	return to_neuron_fence(f)->queue->name;
}

/*
 * Somebody waits for the fence (a callback, a sleeping waiter): a job that
 * asked for no interrupt needs one now. Called with the fence's lock, the
 * queue's lock, held.
 */
static bool neuron_fence_enable_signaling(struct dma_fence *f)
{
	struct neuron_fence *nf = to_neuron_fence(f);

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
	kmem_cache_free(neuron_fence_cache, to_neuron_fence(f));
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
 * neuron_fence_alloc() - a hardware fence, before dma_fence_init()
 *
 * Return: the fence, its own fields set, or NULL.
 */
struct neuron_fence *neuron_fence_alloc(void)
{
	struct neuron_fence *f = kmem_cache_alloc(neuron_fence_cache, GFP_KERNEL);

	if (f) {
		f->site = NEURON_NO_ERROR_SITE;
		f->done_at = 0;
		f->on_demand = false;
	}
	return f;
}

/**
 * neuron_fence_free() - free a fence that was never started
 * @f: from neuron_fence_alloc(), not passed to neuron_fence_start_locked()
 */
void neuron_fence_free(struct neuron_fence *f)
{
	kmem_cache_free(neuron_fence_cache, f);
}

/**
 * neuron_fence_start_locked() - make @f the next fence of @q, @job's
 * @q: the queue, its lock held
 * @f: from neuron_fence_alloc()
 * @job: gets a reference in job->hw_fence
 */
void neuron_fence_start_locked(struct neuron_queue *q, struct neuron_fence *f,
			       struct neuron_job *job)
{
	lockdep_assert_held(&q->lock);
	f->queue = q;
	dma_fence_init(&f->base, &neuron_fence_ops, &q->lock, q->fence_context,
		       ++q->fence_seqno);
	job->hw_fence = dma_fence_get(&f->base);
}

/**
 * neuron_fence_on_queue() - is @fence the hardware fence of a job on @q?
 * @fence: any fence
 * @q: a queue
 *
 * Return: true if it is one of @q's hardware fences.
 */
bool neuron_fence_on_queue(struct dma_fence *fence, struct neuron_queue *q)
{
	return fence->ops == &neuron_fence_ops && to_neuron_fence(fence)->queue == q;
}

/*
 * The device's error and its site for a job, or none (also for foreign
 * fences), read once the fence has signalled.
 */
static struct neuron_error_site neuron_fence_site(struct dma_fence *hw_fence)
{
	if (!hw_fence || hw_fence->ops != &neuron_fence_ops ||
	    !dma_fence_is_signaled(hw_fence))
		return NEURON_NO_ERROR_SITE;
	/*
	 * @site was written before the signal's test_and_set_bit(), a full
	 * barrier; this pairs with it, after the signalled bit was seen.
	 */
	smp_rmb();
	return to_neuron_fence(hw_fence)->site;
}

/**
 * neuron_fence_sync_site() - the device's error for a job's fence, and where
 * @fence: the fence of a job as syncobjs hold it (unwrapped from a timeline
 *	chain): the hardware fence itself for a direct job, the finished fence
 *	for a scheduled one
 *
 * Return: the site; its code is NISA_ERR_* the device reported, or 0.
 */
struct neuron_error_site neuron_fence_sync_site(struct dma_fence *fence)
{
	struct drm_sched_fence *s_fence = to_drm_sched_fence(fence);

	if (s_fence)
		return neuron_fence_site(s_fence->parent);
	return neuron_fence_site(fence);
}

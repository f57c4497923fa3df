// SPDX-License-Identifier: GPL-2.0-only
/*
 * Jobs: the SUBMIT ioctl builds a job's descriptors from user-described
 * copies, takes its dependencies from syncobjs and hands it to the queue's
 * scheduler; the scheduler callbacks run, time out and free it. A job with
 * nothing to wait for goes straight to the ring instead (see
 * neuron_queue.c), and WAIT polls the ring for a moment before sleeping:
 * a short job then costs two system calls, not a round of work items,
 * interrupts and wake-ups.
 */
#include <linux/dma-mapping.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <drm/drm_drv.h>
#include <drm/drm_gem.h>
#include <drm/drm_print.h>
#include <drm/drm_syncobj.h>
#include <linux/dma-fence-chain.h>
#include <drm/neuron_accel.h>
#include <drm/neuron_isa.h>

#include "neuron_drv.h"
#include "neuron_fence.h"
#include "neuron_gem.h"
#include "neuron_job.h"
#include "neuron_reset.h"

static unsigned int wait_poll_us = 20;
module_param(wait_poll_us, uint, 0644);
MODULE_PARM_DESC(wait_poll_us, "Time WAIT polls the rings before sleeping (us, 0: never)");

/*
 * Jobs of the common shape -- one descriptor, a few buffers and in-syncs --
 * come from a slab cache whose objects keep their array pointers, set once
 * by the constructor; the others are sized to their submission. Neither is
 * cleared as a whole (neuron_job_alloc() sets every field): with the
 * kernel's init_on_alloc, clearing is what an allocation mostly costs.
 */
#define NEURON_JOB_SMALL_BOS	16
#define NEURON_JOB_SMALL_SYNCS	8

struct neuron_job_small {
	struct neuron_job job;
	union nhw_desc desc;
	struct drm_gem_object *bos[NEURON_JOB_SMALL_BOS];
	struct dma_fence *in_fences[NEURON_JOB_SMALL_SYNCS];
	/* One buffer is the kernel's, the others have table slots. */
	struct nhw_slot table[NEURON_JOB_SMALL_BOS - 1];
	/* A copy's two operands. */
	struct neuron_pin pins[2];
};

static struct kmem_cache *neuron_job_cache;

static void neuron_job_ctor(void *p)
{
	struct neuron_job_small *s = p;

	s->job.descs = &s->desc;
	s->job.bos = s->bos;
	s->job.in_fences = s->in_fences;
	s->job.table = s->table;
	s->job.pins = s->pins;
	s->job.small = true;
}

/**
 * neuron_job_cache_init() - create the slab cache of small jobs
 *
 * Return: 0 or -ENOMEM.
 */
int neuron_job_cache_init(void)
{
	neuron_job_cache = kmem_cache_create("neuron_job",
					     sizeof(struct neuron_job_small), 0,
					     SLAB_HWCACHE_ALIGN, neuron_job_ctor);
	return neuron_job_cache ? 0 : -ENOMEM;
}

/** neuron_job_cache_fini() - destroy it, every job having been freed */
void neuron_job_cache_fini(void)
{
	kmem_cache_destroy(neuron_job_cache);
}

/* A job with room for what @args describes, its fields set, or NULL. */
static struct neuron_job *neuron_job_alloc(struct drm_neuron_submit *args)
{
	bool dma = args->engine == DRM_NEURON_ENGINE_DMA;
	size_t ndesc = dma ? args->copy_count : 1;
	size_t nbos = dma ? 2 * args->copy_count : args->bo_count + 1;
	size_t size = sizeof(struct neuron_job);
	struct neuron_job *job;

	if (ndesc == 1 && nbos <= NEURON_JOB_SMALL_BOS &&
	    args->in_sync_count <= NEURON_JOB_SMALL_SYNCS) {
		job = kmem_cache_alloc(neuron_job_cache, GFP_KERNEL);
		if (!job)
			return NULL;
	} else {
		size_t npins = dma ? 2 * args->copy_count : 0;

		/* Bounded by neuron_submit_checks(): no overflow. */
		size += ndesc * sizeof(union nhw_desc) + nbos * sizeof(void *) +
			args->in_sync_count * sizeof(void *) +
			args->bo_count * sizeof(struct nhw_slot) +
			npins * sizeof(struct neuron_pin);
		job = kvmalloc(size, GFP_KERNEL_ACCOUNT);
		if (!job)
			return NULL;
		job->descs = (union nhw_desc *)(job + 1);
		job->bos = (struct drm_gem_object **)(job->descs + ndesc);
		job->in_fences = (struct dma_fence **)(job->bos + nbos);
		job->table = (struct nhw_slot *)(job->in_fences + args->in_sync_count);
		job->pins = (struct neuron_pin *)(job->table + args->bo_count);
		job->small = false;
	}
	/* The scheduler's part is cleared by neuron_job_push_sched(). */
	job->queue = NULL;
	job->bo_count = 0;
	job->npins = 0;
	job->pinned = 0;
	job->budget = 0;
	job->ndesc = 0;
	job->nslots = 0;
	job->in_fence_count = 0;
	job->hw_fence = NULL;
	job->first_slot = 0;
	job->started = 0;
	job->stats = NULL;
	INIT_LIST_HEAD(&job->link);
	job->direct = false;
	return job;
}

static void neuron_job_free(struct neuron_job *job)
{
	struct neuron_device *ndev = job->queue->ndev;
	u32 i;

	for (i = 0; i < job->npins; i++)
		neuron_bo_unpin(ndev->drm.dev, &job->pins[i]);
	neuron_job_unbudget(job);
	if (job->pinned)
		atomic64_sub(job->pinned, &ndev->stats.pinned);
	for (i = 0; i < job->bo_count; i++)
		drm_gem_object_put(job->bos[i]);
	for (i = 0; i < job->in_fence_count; i++)
		dma_fence_put(job->in_fences[i]);
	if (job->stats)
		neuron_file_stats_put(job->stats);
	dma_fence_put(job->hw_fence);
	/* Removal waits for the last one (wq_has_sleeper() orders the two). */
	if (!atomic64_dec_return(&ndev->stats.jobs) && wq_has_sleeper(&ndev->jobs_wq))
		wake_up_all(&ndev->jobs_wq);
	if (job->small)
		kmem_cache_free(neuron_job_cache, job);
	else
		kvfree(job);
}

/**
 * neuron_job_unbudget() - give a job's pinned memory back to its context
 * @job: a job that completed (or is being freed)
 *
 * The budget counts jobs in flight: a job's share is returned when it
 * completes, so that a context that waited for its jobs may pin again at
 * once; the pages themselves are unpinned when the job is freed, shortly
 * after. Any context, its queue's lock may be held.
 */
void neuron_job_unbudget(struct neuron_job *job)
{
	if (job->budget) {
		atomic64_sub(job->budget, &job->stats->pinned);
		job->budget = 0;
	}
}

/**
 * neuron_job_reap() - free the direct jobs that have completed
 * @work: the device's reap_work
 */
void neuron_job_reap(struct work_struct *work)
{
	struct neuron_device *ndev = container_of(to_delayed_work(work),
						  struct neuron_device, reap_work);
	struct neuron_job *job, *tmp;

	llist_for_each_entry_safe(job, tmp, llist_del_all(&ndev->reap_list), reap)
		neuron_job_free(job);
}

static struct dma_fence *neuron_job_start(struct neuron_job *job)
{
	struct dma_fence *fence, *in;
	int idx, err;
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
			fence = neuron_queue_fail(job->queue, job, err,
						  neuron_fence_sync_device_error(in));
			drm_dev_exit(idx);
			return fence;
		}
	}
	fence = neuron_queue_push(job->queue, job, false);
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

/*
 * Pin the pages of (@bo, @offset, @size) for @job, within the context's
 * budget of pinned memory: -E2BIG if the job alone pins more than it,
 * -ENOMEM if the context's jobs in flight (not completed) already hold too
 * much of it.
 */
static int neuron_job_pin(struct neuron_job *job, struct neuron_bo *bo,
			  u64 offset, u64 size, bool write,
			  struct neuron_pin **pinp)
{
	u64 limit = neuron_max_pinned(), bytes;
	struct neuron_pin *pin = &job->pins[job->npins];
	int ret;

	bytes = ((((offset + size - 1) >> PAGE_SHIFT) - (offset >> PAGE_SHIFT)) + 1)
		<< PAGE_SHIFT;
	if (job->pinned + bytes > limit)
		return -E2BIG;
	if (atomic64_add_return(bytes, &job->stats->pinned) > limit) {
		atomic64_sub(bytes, &job->stats->pinned);
		return -ENOMEM;
	}
	/* Counted from now on: retiring or freeing the job uncounts it. */
	job->budget += bytes;
	job->pinned += bytes;
	atomic64_add(bytes, &job->queue->ndev->stats.pinned);
	ret = neuron_bo_pin(bo, offset, size,
			    write ? DMA_FROM_DEVICE : DMA_TO_DEVICE, pin);
	if (ret)
		return ret;
	job->npins++;
	*pinp = pin;
	return 0;
}

/*
 * Resolve (handle, offset, size) to a descriptor operand. The object is
 * kept in job->bos, so it lives as long as the job; of a host buffer, only
 * the pages of the range are pinned, for as long as the job lives.
 */
static int neuron_job_operand(struct neuron_job *job, struct drm_file *file,
			      u32 handle, u64 offset, u64 size, bool write,
			      u8 *space, __le64 *addr, __le32 *nseg,
			      __le64 *off)
{
	struct drm_gem_object *obj;
	struct neuron_pin *pin;
	struct neuron_bo *bo;
	u64 end;
	int ret;

	obj = drm_gem_object_lookup(file, handle);
	if (!obj)
		return -ENOENT;
	job->bos[job->bo_count++] = obj;
	if (check_add_overflow(offset, size, &end) || end > obj->size)
		return -EINVAL;

	bo = to_neuron_bo(obj);
	if (bo->placement == DRM_NEURON_BO_DEVICE) {
		*space = NHW_SPACE_DEV;
		*addr = cpu_to_le64(bo->node.start);
		*nseg = 0;
		*off = cpu_to_le64(offset);
		return 0;
	}
	ret = neuron_job_pin(job, bo, offset, size, write, &pin);
	if (ret)
		return ret;
	*space = pin->sgl ? NHW_SPACE_SGL : NHW_SPACE_HOST;
	*addr = cpu_to_le64(pin->addr);
	*nseg = cpu_to_le32(pin->sgl ? pin->nseg : 0);
	*off = cpu_to_le64(pin->offset);
	return 0;
}

static int neuron_job_build_copies(struct neuron_job *job,
				   struct drm_file *file,
				   struct drm_neuron_submit *args)
{
	struct drm_neuron_copy __user *ucopies = u64_to_user_ptr(args->copies);
	struct drm_neuron_copy c;
	u32 i;
	int ret;

	for (i = 0; i < args->copy_count; i++) {
		struct nhw_copy_desc *d = &job->descs[i].copy;

		memset(d, 0, sizeof(job->descs[i]));
		if (copy_from_user(&c, &ucopies[i], sizeof(c)))
			return -EFAULT;
		if (!c.size)
			return -EINVAL;
		d->op = NHW_OP_COPY;
		d->tag = cpu_to_le32(i);
		d->len = cpu_to_le64(c.size);
		ret = neuron_job_operand(job, file, c.src_handle, c.src_offset,
					 c.size, false, &d->src_space, &d->src_addr,
					 &d->src_nseg, &d->src_off);
		if (ret)
			return ret;
		ret = neuron_job_operand(job, file, c.dst_handle, c.dst_offset,
					 c.size, true, &d->dst_space, &d->dst_addr,
					 &d->dst_nseg, &d->dst_off);
		if (ret)
			return ret;
	}
	job->ndesc = args->copy_count;
	return 0;
}

/* Look up a device-memory buffer of this file, kept in job->bos. */
static struct neuron_bo *neuron_job_dev_bo(struct neuron_job *job,
					   struct drm_file *file, u32 handle)
{
	struct drm_gem_object *obj = drm_gem_object_lookup(file, handle);

	if (!obj)
		return ERR_PTR(-ENOENT);
	job->bos[job->bo_count++] = obj;
	if (to_neuron_bo(obj)->placement != DRM_NEURON_BO_DEVICE)
		return ERR_PTR(-EINVAL);
	return to_neuron_bo(obj);
}

static int neuron_job_build_launch(struct neuron_job *job,
				   struct drm_file *file,
				   struct drm_neuron_submit *args)
{
	struct drm_neuron_bo_ref __user *urefs = u64_to_user_ptr(args->bos);
	struct nhw_launch_desc *d;
	struct drm_neuron_bo_ref ref;
	struct neuron_bo *bo;
	u64 end;
	u32 i;

	job->ndesc = 1;
	d = &job->descs[0].launch;
	memset(d, 0, sizeof(job->descs[0]));

	bo = neuron_job_dev_bo(job, file, args->kernel_handle);
	if (IS_ERR(bo))
		return PTR_ERR(bo);
	if (check_add_overflow(args->kernel_offset, args->kernel_size, &end) ||
	    end > bo->base.base.size)
		return -EINVAL;
	d->op = NHW_OP_LAUNCH;
	d->code_off = cpu_to_le64(bo->node.start + args->kernel_offset);
	d->code_len = cpu_to_le64(args->kernel_size);
	d->nslots = cpu_to_le16(args->bo_count);
	/* d->table_addr: where the ring entry's table is, once written. */
	for (i = 0; i < args->bo_count; i++) {
		if (copy_from_user(&ref, &urefs[i], sizeof(ref)))
			return -EFAULT;
		if (!ref.access ||
		    ref.access & ~(DRM_NEURON_ACCESS_READ | DRM_NEURON_ACCESS_WRITE))
			return -EINVAL;
		bo = neuron_job_dev_bo(job, file, ref.handle);
		if (IS_ERR(bo))
			return PTR_ERR(bo);
		job->table[i].base = cpu_to_le64(bo->node.start);
		job->table[i].size = cpu_to_le64(bo->base.base.size);
		/* The uAPI's access bits are the ISA's, which the device reads. */
		job->table[i].access = cpu_to_le32(ref.access);
		job->table[i].rsvd = 0;
		job->nslots++;
	}
	return 0;
}

static int neuron_job_get_in_syncs(struct neuron_job *job,
				   struct drm_file *file,
				   struct drm_neuron_submit *args)
{
	struct drm_neuron_sync __user *usyncs = u64_to_user_ptr(args->in_syncs);
	struct drm_neuron_sync s;
	u32 i;
	int ret;

	for (i = 0; i < args->in_sync_count; i++) {
		struct dma_fence *fence;

		if (copy_from_user(&s, &usyncs[i], sizeof(s)))
			return -EFAULT;
		if (s.pad)
			return -EINVAL;
		ret = drm_syncobj_find_fence(file, s.handle, s.point, 0, &fence);
		if (ret)
			return ret;
		job->in_fences[job->in_fence_count++] = fence;
	}
	return 0;
}

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
 * error (a failed one is the scheduler path's to pass on) and none of the
 * context's earlier jobs for this queue is still in the scheduler, which
 * would otherwise run after it. Caller holds the context's submit_lock.
 */
static bool neuron_job_inputs_done(struct neuron_job *job)
{
	u32 i;

	for (i = 0; i < job->in_fence_count; i++) {
		struct dma_fence *in = job->in_fences[i];

		if (!dma_fence_is_signaled(in) ||
		    dma_fence_get_status(dma_fence_chain_contained(in)) < 0)
			return false;
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
		if (args->index >= ndev->num_dma)
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
		    args->kernel_size % sizeof(struct nisa_insn) ||
		    args->kernel_size / sizeof(struct nisa_insn) > NISA_MAX_INSNS)
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
	int ret, idx;

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

	if (args->engine == DRM_NEURON_ENGINE_DMA)
		ret = neuron_job_build_copies(job, file, args);
	else
		ret = neuron_job_build_launch(job, file, args);
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

	/* One job at a time per context, so its jobs stay ordered. */
	mutex_lock(&fpriv->submit_lock);
	if (neuron_job_ready(job))
		fence = neuron_queue_push(q, job, true);
	if (!fence)
		fence = neuron_job_push_sched(job, fpriv, file);
	mutex_unlock(&fpriv->submit_lock);
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
		args->device_error = status == -EIO ? neuron_fence_sync_device_error(f) : 0;
		ret = 0;
	}
	dma_fence_put(fence);
	return ret;
}

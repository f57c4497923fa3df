// SPDX-License-Identifier: GPL-2.0-only
/*
 * Jobs: their allocation (a slab cache of the common shape), freeing and
 * the reaper of completed direct jobs, and building a job from a SUBMIT's
 * arguments: the descriptors of its copies or launch, the buffers they
 * name (host ranges pinned within the context's budget) and the fences of
 * its in-syncs. A job being built belongs to its SUBMIT call alone; once
 * pushed, to its queue (neuron_queue.c) or scheduler (neuron_sched.c). The
 * budget of pinned memory is atomic (file stats->pinned); job->budget is
 * cleared by whoever retires or frees the job, under q->lock or not.
 */
#include <linux/dma-mapping.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <drm/drm_gem.h>
#include <drm/drm_syncobj.h>
#include <drm/neuron_accel.h>

#include "neuron_drv.h"
#include "neuron_gem.h"
#include "neuron_job.h"

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

/**
 * neuron_job_alloc() - a job with room for what a submission describes
 * @args: the SUBMIT arguments, checked by neuron_submit_checks()
 *
 * Return: the job, its fields set, or NULL.
 */
struct neuron_job *neuron_job_alloc(struct drm_neuron_submit *args)
{
	bool dma = args->engine == DRM_NEURON_ENGINE_DMA;
	bool copies = args->engine != DRM_NEURON_ENGINE_CORE;
	size_t ndesc = copies ? args->copy_count : 1;
	size_t nbos = copies ? 2 * args->copy_count : args->bo_count + 1;
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
	job->cookie = args->cookie;
	job->hw_fence = NULL;
	job->after = NULL;
	job->chained = false;
	job->first_slot = 0;
	job->started = 0;
	job->stats = NULL;
	INIT_LIST_HEAD(&job->link);
	job->direct = false;
	job->done = false;
	job->peer = NULL;
	return job;
}

/**
 * neuron_job_free() - release what a job holds, and the job
 * @job: a job that is off its queue's ring and out of the scheduler
 */
void neuron_job_free(struct neuron_job *job)
{
	struct neuron_device *ndev = job->queue->ndev;
	u32 i;

	for (i = 0; i < job->npins; i++)
		neuron_bo_unpin(ndev->drm.dev, &job->pins[i]);
	neuron_job_unbudget(job);
	if (job->pinned)
		atomic64_sub(job->pinned, &ndev->stats.pinned);
	for (i = 0; i < job->bo_count; i++) {
		struct neuron_bo *bo = to_neuron_bo(job->bos[i]);

		if (job->done && bo->placement == DRM_NEURON_BO_DEVICE)
			neuron_bo_done_put(job->bos[i]);
		/* As unmapping a job's own pin would (when the DMA API must). */
		if (neuron_bo_is_pinned(bo))
			dma_sync_sgtable_for_cpu(ndev->drm.dev, bo->base.sgt,
						 DMA_BIDIRECTIONAL);
		drm_gem_object_put(job->bos[i]);
	}
	for (i = 0; i < job->in_fence_count; i++)
		dma_fence_put(job->in_fences[i]);
	dma_fence_put(job->after);
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
 * neuron_job_done_locked() - a job completed: count it in its device buffers
 * @job: a job being retired, under its queue's lock (any context)
 *
 * Until it is freed, the job holds them: neuron_bo_close() waits for that.
 */
void neuron_job_done_locked(struct neuron_job *job)
{
	u32 i;

	for (i = 0; i < job->bo_count; i++)
		if (to_neuron_bo(job->bos[i])->placement == DRM_NEURON_BO_DEVICE)
			atomic_inc(&to_neuron_bo(job->bos[i])->done_jobs);
	job->done = true;
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
 * the pages of the range are pinned, for as long as the job lives (none of
 * a pinned buffer's: they are pinned already).
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
	u32 seg;
	int ret;

	obj = drm_gem_object_lookup(file, handle);
	if (!obj)
		return -ENOENT;
	job->bos[job->bo_count++] = obj;
	bo = to_neuron_bo(obj);
	/* Another card's buffer: only a link job reaches it. */
	if (bo->exporter)
		return -EXDEV;
	if (check_add_overflow(offset, size, &end) || end > obj->size)
		return -EINVAL;

	if (bo->placement == DRM_NEURON_BO_DEVICE) {
		*space = NHW_SPACE_DEV;
		*addr = cpu_to_le64(bo->node.start);
		*nseg = 0;
		*off = cpu_to_le64(offset);
		return 0;
	}
	if (neuron_bo_is_pinned(bo)) {
		/*
		 * Pinned and mapped since its creation, for the whole buffer:
		 * the job pins nothing. (A no-op where DMA is coherent, as
		 * the sync for the CPU in neuron_job_free().)
		 */
		dma_sync_sgtable_for_device(obj->dev->dev, bo->base.sgt,
					    DMA_BIDIRECTIONAL);
		if (!bo->pin.sgl) {
			*space = NHW_SPACE_HOST;
			*addr = cpu_to_le64(bo->pin.addr);
			*nseg = 0;
			*off = cpu_to_le64(offset);
			return 0;
		}
		/* The list from the segment holding the first byte on. */
		seg = neuron_bo_pinned_seg(bo, offset);
		*space = NHW_SPACE_SGL;
		*addr = cpu_to_le64(bo->pin.addr + seg * sizeof(*bo->pin.sgl));
		*nseg = cpu_to_le32(bo->pin.nseg - seg);
		*off = cpu_to_le64(offset - bo->seg_start[seg]);
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
	/* Another card's buffer: only a link job reaches it. */
	if (to_neuron_bo(obj)->exporter)
		return ERR_PTR(-EXDEV);
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

/**
 * neuron_job_get_in_syncs() - take the fences of a job's in-syncs
 * @job: the job, which keeps a reference to each in job->in_fences
 * @file: the submitter, whose syncobjs @args names
 * @args: the SUBMIT arguments
 *
 * Return: 0 or a negative errno.
 */
int neuron_job_get_in_syncs(struct neuron_job *job, struct drm_file *file,
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

/**
 * neuron_job_build() - the descriptors of a job and the buffers they name
 * @job: from neuron_job_alloc(), its queue and stats set
 * @file: the submitter, whose handles @args names
 * @args: the SUBMIT arguments
 *
 * Return: 0 or a negative errno (the job is then freed by the caller).
 */
int neuron_job_build(struct neuron_job *job, struct drm_file *file,
		     struct drm_neuron_submit *args)
{
	switch (args->engine) {
	case DRM_NEURON_ENGINE_DMA:
		return neuron_job_build_copies(job, file, args);
	case DRM_NEURON_ENGINE_LINK:
		return neuron_link_build(job, file, args);
	}
	return neuron_job_build_launch(job, file, args);
}

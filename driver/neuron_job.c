// SPDX-License-Identifier: GPL-2.0-only
/*
 * Jobs: the SUBMIT ioctl builds a job's descriptors from user-described
 * copies, takes its dependencies from syncobjs and hands it to the queue's
 * scheduler; the scheduler callbacks run, time out and free it.
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
#include "neuron_gem.h"
#include "neuron_job.h"

static void neuron_job_free(struct neuron_job *job)
{
	u32 i;

	if (job->table)
		dma_free_coherent(job->queue->ndev->drm.dev, job->table_size,
				  job->table, job->table_dma);
	for (i = 0; i < job->bo_count; i++)
		drm_gem_object_put(job->bos[i]);
	for (i = 0; i < job->in_fence_count; i++)
		dma_fence_put(job->in_fences[i]);
	if (job->stats)
		neuron_file_stats_put(job->stats);
	atomic64_dec(&job->queue->ndev->stats.jobs);
	dma_fence_put(job->hw_fence);
	kvfree(job->bos);
	kvfree(job->descs);
	kfree(job);
}

static u32 neuron_wait_device_error(struct dma_fence *fence);

static struct dma_fence *neuron_run_job(struct drm_sched_job *sched_job)
{
	struct neuron_job *job = to_neuron_job(sched_job);
	struct dma_fence *fence, *in;
	int idx, err;
	u32 i;

	if (unlikely(sched_job->s_fence->finished.error))
		return NULL;
	if (!drm_dev_enter(&job->queue->ndev->drm, &idx))
		return ERR_PTR(-ENODEV);
	/* An input failed: the job does not run, the error passes on. */
	for (i = 0; i < job->in_fence_count; i++) {
		in = dma_fence_chain_contained(job->in_fences[i]);
		err = dma_fence_get_status(in);
		if (err < 0) {
			fence = neuron_queue_fail(job->queue, job, err,
						  neuron_wait_device_error(in));
			drm_dev_exit(idx);
			return fence;
		}
	}
	fence = neuron_queue_push(job->queue, job);
	drm_dev_exit(idx);
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
	neuron_queue_reset(q, job);
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
 * Resolve (handle, offset, size) to a descriptor operand. The object is
 * kept in job->bos, so it lives as long as the job.
 */
static int neuron_job_operand(struct neuron_job *job, struct drm_file *file,
			      u32 handle, u64 offset, u64 size, u8 *space,
			      __le64 *addr, __le32 *nseg, __le64 *off)
{
	struct drm_gem_object *obj;
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
		*space = NRN_SPACE_DEV;
		*addr = cpu_to_le64(bo->node.start);
		*nseg = 0;
	} else {
		ret = neuron_bo_prepare_dma(bo);
		if (ret)
			return ret;
		*space = NRN_SPACE_SGL;
		*addr = cpu_to_le64(bo->sgl_dma);
		*nseg = cpu_to_le32(bo->nseg);
	}
	*off = cpu_to_le64(offset);
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

	job->descs = kvcalloc(args->copy_count, sizeof(*job->descs), GFP_KERNEL);
	job->bos = kvcalloc(2 * args->copy_count, sizeof(*job->bos), GFP_KERNEL);
	if (!job->descs || !job->bos)
		return -ENOMEM;

	for (i = 0; i < args->copy_count; i++) {
		struct nrn_copy_desc *d = &job->descs[i].copy;

		if (copy_from_user(&c, &ucopies[i], sizeof(c)))
			return -EFAULT;
		if (!c.size)
			return -EINVAL;
		d->op = NRN_OP_COPY;
		d->tag = cpu_to_le32(i);
		d->len = cpu_to_le64(c.size);
		ret = neuron_job_operand(job, file, c.src_handle, c.src_offset,
					 c.size, &d->src_space, &d->src_addr,
					 &d->src_nseg, &d->src_off);
		if (ret)
			return ret;
		ret = neuron_job_operand(job, file, c.dst_handle, c.dst_offset,
					 c.size, &d->dst_space, &d->dst_addr,
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
	struct device *dev = job->queue->ndev->drm.dev;
	struct nrn_launch_desc *d;
	struct drm_neuron_bo_ref ref;
	struct neuron_bo *bo;
	u64 end;
	u32 i;

	job->descs = kvcalloc(1, sizeof(*job->descs), GFP_KERNEL);
	job->bos = kvcalloc(args->bo_count + 1, sizeof(*job->bos), GFP_KERNEL);
	if (!job->descs || !job->bos)
		return -ENOMEM;
	job->ndesc = 1;
	d = &job->descs[0].launch;

	bo = neuron_job_dev_bo(job, file, args->kernel_handle);
	if (IS_ERR(bo))
		return PTR_ERR(bo);
	if (check_add_overflow(args->kernel_offset, args->kernel_size, &end) ||
	    end > bo->base.base.size)
		return -EINVAL;
	d->op = NRN_OP_LAUNCH;
	d->code_off = cpu_to_le64(bo->node.start + args->kernel_offset);
	d->code_len = cpu_to_le64(args->kernel_size);
	d->nslots = cpu_to_le16(args->bo_count);
	if (!args->bo_count)
		return 0;

	job->table_size = args->bo_count * sizeof(*job->table);
	job->table = dma_alloc_coherent(dev, job->table_size, &job->table_dma,
					GFP_KERNEL);
	if (!job->table)
		return -ENOMEM;
	d->table_addr = cpu_to_le64(job->table_dma);
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
	}
	return 0;
}

static int neuron_job_add_in_syncs(struct neuron_job *job,
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
		/* The scheduler takes a reference of its own. */
		ret = drm_sched_job_add_dependency(&job->base, dma_fence_get(fence));
		if (ret)
			return ret;
	}
	return 0;
}

static_assert(DRM_NEURON_MAX_BOS <= NRN_MAX_SLOTS);

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
		    args->kernel_size % sizeof(struct nrn_insn) ||
		    args->kernel_size / sizeof(struct nrn_insn) > NRN_MAX_INSNS)
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
	struct dma_fence *finished;
	struct neuron_queue *q;
	struct neuron_job *job;
	int ret, idx;

	ret = neuron_submit_checks(ndev, args);
	if (ret)
		return ret;
	q = neuron_submit_queue(ndev, args);

	if (!drm_dev_enter(drm, &idx))
		return -ENODEV;
	job = kzalloc(sizeof(*job), GFP_KERNEL);
	if (!job) {
		ret = -ENOMEM;
		goto out_exit;
	}
	job->queue = q;
	INIT_LIST_HEAD(&job->link);
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

	ret = drm_sched_job_init(&job->base, &fpriv->entities[q->idx], job->ndesc,
				 fpriv, file->client_id);
	if (ret)
		goto out_free_chain;
	ret = neuron_job_add_in_syncs(job, file, args);
	if (ret)
		goto out_cleanup;

	/* Arm and push in one step per context, so its jobs stay ordered. */
	mutex_lock(&fpriv->submit_lock);
	drm_sched_job_arm(&job->base);
	finished = dma_fence_get(&job->base.s_fence->finished);
	drm_sched_entity_push_job(&job->base);
	mutex_unlock(&fpriv->submit_lock);
	atomic64_inc(&ndev->stats.submitted);

	if (out_syncobj) {
		if (chain)
			drm_syncobj_add_point(out_syncobj, chain, finished,
					      args->out_sync.point);
		else
			drm_syncobj_replace_fence(out_syncobj, finished);
		drm_syncobj_put(out_syncobj);
	}
	dma_fence_put(finished);
	drm_dev_exit(idx);
	return 0;

out_cleanup:
	drm_sched_job_cleanup(&job->base);
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
 * The hardware fence behind a job's finished fence (what syncobjs hold,
 * possibly inside a timeline chain), to read the device's error code.
 */
static u32 neuron_wait_device_error(struct dma_fence *fence)
{
	struct drm_sched_fence *s_fence = to_drm_sched_fence(fence);

	return s_fence ? neuron_fence_device_error(s_fence->parent) : 0;
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
	timeout = args->timeout_ns < 0 ? MAX_SCHEDULE_TIMEOUT :
		  nsecs_to_jiffies(args->timeout_ns);
	ret = dma_fence_wait_timeout(fence, true, timeout);
	if (ret == 0 && args->timeout_ns != 0)
		ret = -ETIME;
	else if (ret == 0)
		ret = dma_fence_is_signaled(fence) ? 1 : -ETIME;
	if (ret > 0) {
		f = dma_fence_chain_contained(fence);
		status = dma_fence_get_status(f);
		args->status = status < 0 ? status : 0;
		args->device_error = status == -EIO ? neuron_wait_device_error(f) : 0;
		ret = 0;
	}
	dma_fence_put(fence);
	return ret;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Jobs: the SUBMIT ioctl builds a job's descriptors from user-described
 * copies, takes its dependencies from syncobjs and hands it to the queue's
 * scheduler; the scheduler callbacks run, time out and free it.
 */
#include <linux/overflow.h>
#include <linux/slab.h>
#include <drm/drm_drv.h>
#include <drm/drm_gem.h>
#include <drm/drm_print.h>
#include <drm/drm_syncobj.h>
#include <drm/neuron_accel.h>

#include "neuron_drv.h"
#include "neuron_gem.h"
#include "neuron_job.h"

static void neuron_job_free(struct neuron_job *job)
{
	u32 i;

	for (i = 0; i < job->bo_count; i++)
		drm_gem_object_put(job->bos[i]);
	dma_fence_put(job->hw_fence);
	kvfree(job->bos);
	kvfree(job->descs);
	kfree(job);
}

static struct dma_fence *neuron_run_job(struct drm_sched_job *sched_job)
{
	struct neuron_job *job = to_neuron_job(sched_job);
	struct dma_fence *fence;
	int idx;

	/* A dependency failed: the job does not run, the error propagates. */
	if (unlikely(sched_job->s_fence->finished.error))
		return NULL;
	if (!drm_dev_enter(&job->queue->ndev->drm, &idx))
		return ERR_PTR(-ENODEV);
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
		struct nrn_copy_desc *d = &job->descs[i];

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

static int neuron_job_add_in_syncs(struct neuron_job *job,
				   struct drm_file *file,
				   struct drm_neuron_submit *args)
{
	struct drm_neuron_sync __user *usyncs = u64_to_user_ptr(args->in_syncs);
	struct drm_neuron_sync s;
	u32 i;
	int ret;

	for (i = 0; i < args->in_sync_count; i++) {
		if (copy_from_user(&s, &usyncs[i], sizeof(s)))
			return -EFAULT;
		if (s.pad)
			return -EINVAL;
		ret = drm_sched_job_add_syncobj_dependency(&job->base, file,
							   s.handle, s.point);
		if (ret)
			return ret;
	}
	return 0;
}

static int neuron_submit_checks(struct neuron_device *ndev,
				struct drm_neuron_submit *args)
{
	if (args->flags || args->pad || args->out_sync.pad)
		return -EINVAL;
	if (args->engine != DRM_NEURON_ENGINE_DMA || args->index >= ndev->num_dma)
		return -EINVAL;
	if (!args->copy_count || args->copy_count > DRM_NEURON_MAX_COPIES)
		return -EINVAL;
	if (args->in_sync_count > DRM_NEURON_MAX_SYNCS)
		return -EINVAL;
	return 0;
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
	q = &ndev->queues[args->index];

	if (!drm_dev_enter(drm, &idx))
		return -ENODEV;
	job = kzalloc(sizeof(*job), GFP_KERNEL);
	if (!job) {
		ret = -ENOMEM;
		goto out_exit;
	}
	job->queue = q;
	INIT_LIST_HEAD(&job->link);

	ret = neuron_job_build_copies(job, file, args);
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

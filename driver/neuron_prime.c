// SPDX-License-Identifier: GPL-2.0-only
/**
 * DOC: neuron PRIME
 *
 * A device buffer is exported as a dma-buf whose operations are the DRM
 * PRIME helpers' except attachment: device memory has no pages another
 * driver could map, so only neuron cards use it. Imported by a file of the
 * same card, it is the same object (as the PRIME helpers do). Imported by
 * a file of another card, it becomes a peer buffer: a GEM object of the
 * importing card that records the exporter's buffer (and through it its
 * card, device offset and size), holding a reference to that object and to
 * its drm_device (not to the dma-buf: the last reference of a dma-buf
 * dropped by a kernel thread is released a tick later, and the buffer's
 * memory with it). So the memory stays allocated, and the exporting card's
 * structure valid, as long as a handle or a job of the importer names the
 * peer buffer -- even after that card is removed (link jobs then fail with
 * -ENOLINK or -ENODEV, see neuron_link.c) -- and no longer: the last handle
 * closed (neuron_bo_close() first frees the completed jobs that name it),
 * the exporter's buffer is freed at once unless its card still has a
 * handle or a job naming it.
 *
 * A peer buffer is only a link copy's destination: DMA and compute jobs
 * naming it fail with -EXDEV, and it cannot be mapped (-EOPNOTSUPP): the
 * peer card's memory is reached through that card's own file. Host
 * buffers are exported and imported as before (the shmem helpers), and
 * dma-bufs of other drivers are refused as before.
 */
#include <linux/dma-buf.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <drm/drm_drv.h>
#include <drm/drm_gem.h>
#include <drm/drm_prime.h>
#include <drm/neuron_accel.h>

#include "neuron_drv.h"
#include "neuron_gem.h"

MODULE_IMPORT_NS(DMA_BUF);

static int neuron_dmabuf_attach(struct dma_buf *dma_buf,
				struct dma_buf_attachment *attach)
{
	/* Device memory has no pages: only neuron cards import it. */
	return -EOPNOTSUPP;
}

static struct sg_table *neuron_dmabuf_map(struct dma_buf_attachment *attach,
					  enum dma_data_direction dir)
{
	return ERR_PTR(-EOPNOTSUPP);
}

static void neuron_dmabuf_unmap(struct dma_buf_attachment *attach,
				struct sg_table *sgt,
				enum dma_data_direction dir)
{
}

static const struct dma_buf_ops neuron_dmabuf_ops = {
	.attach = neuron_dmabuf_attach,
	.map_dma_buf = neuron_dmabuf_map,
	.unmap_dma_buf = neuron_dmabuf_unmap,
	.release = drm_gem_dmabuf_release,
	.mmap = drm_gem_dmabuf_mmap,
};

/**
 * neuron_dev_bo_export() - export a device buffer as a dma-buf
 * @obj: a device buffer of this card
 * @flags: the file flags of the dma-buf (O_CLOEXEC, O_RDWR)
 *
 * Return: the dma-buf, which holds @obj and its drm_device, or an ERR_PTR.
 */
struct dma_buf *neuron_dev_bo_export(struct drm_gem_object *obj, int flags)
{
	struct dma_buf_export_info exp_info = {
		.exp_name = KBUILD_MODNAME,
		.owner = obj->dev->driver->fops->owner,
		.ops = &neuron_dmabuf_ops,
		.size = obj->size,
		.flags = flags,
		.priv = obj,
		.resv = obj->resv,
	};

	return drm_gem_dmabuf_export(obj->dev, &exp_info);
}

static void neuron_peer_bo_free(struct drm_gem_object *obj)
{
	struct neuron_bo *bo = to_neuron_bo(obj);
	struct neuron_device *ndev = to_neuron_device(obj->dev);
	struct drm_device *exp_drm = bo->exporter->base.base.dev;

	drm_gem_object_release(obj);
	/*
	 * May free the exporter's buffer, at once and in this context (a
	 * dma-buf's last reference dropped by a kernel thread, the
	 * scheduler's clean-up, is released a tick later), then drop its
	 * card's last reference.
	 */
	drm_gem_object_put(&bo->exporter->base.base);
	drm_dev_put(exp_drm);
	kfree(bo);
	atomic64_dec(&ndev->stats.bos);
}

static int neuron_peer_bo_mmap(struct drm_gem_object *obj,
			       struct vm_area_struct *vma)
{
	/* The memory is another card's: map it through that card's file. */
	return -EOPNOTSUPP;
}

static const struct drm_gem_object_funcs neuron_peer_bo_funcs = {
	.free = neuron_peer_bo_free,
	.close = neuron_bo_close,
	.mmap = neuron_peer_bo_mmap,
};

/* A peer buffer of @ndev for @exp, another card's device buffer. */
static struct drm_gem_object *neuron_peer_bo_create(struct neuron_device *ndev,
						    struct neuron_bo *exp)
{
	struct neuron_bo *bo;

	bo = kzalloc(sizeof(*bo), GFP_KERNEL_ACCOUNT);
	if (!bo)
		return ERR_PTR(-ENOMEM);
	bo->placement = DRM_NEURON_BO_DEVICE;
	bo->exporter = exp;
	drm_gem_object_get(&exp->base.base);
	drm_dev_get(exp->base.base.dev);
	bo->base.base.funcs = &neuron_peer_bo_funcs;
	drm_gem_private_object_init(&ndev->drm, &bo->base.base, exp->base.base.size);
	atomic64_inc(&ndev->stats.bos);
	return &bo->base.base;
}

/**
 * neuron_gem_prime_import() - drm_driver.gem_prime_import
 * @drm: the importing card
 * @dma_buf: the dma-buf
 *
 * Return: the object itself for a buffer of this card, a peer buffer for
 * a device buffer of another neuron card (-ENODEV if that card is gone),
 * what the PRIME helpers make of anything else, or an ERR_PTR.
 */
struct drm_gem_object *neuron_gem_prime_import(struct drm_device *drm,
					       struct dma_buf *dma_buf)
{
	struct drm_gem_object *obj = dma_buf->priv;

	if (dma_buf->ops != &neuron_dmabuf_ops)
		return drm_gem_prime_import(drm, dma_buf);
	if (obj->dev == drm) {
		drm_gem_object_get(obj);
		return obj;
	}
	if (drm_dev_is_unplugged(obj->dev))
		return ERR_PTR(-ENODEV);
	return neuron_peer_bo_create(to_neuron_device(drm), to_neuron_bo(obj));
}

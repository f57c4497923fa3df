// SPDX-License-Identifier: GPL-2.0-only
/*
 * Buffer objects: device memory (drm_mm over BAR2) and host memory (GEM
 * shmem, pinned and DMA-mapped on first use by a job).
 */
#include <linux/dma-mapping.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/sizes.h>
#include <drm/drm_gem.h>
#include <drm/drm_print.h>
#include <drm/neuron_accel.h>

#include "neuron_drv.h"
#include "neuron_gem.h"

/* Largest buffer of either placement; keeps size arithmetic far from overflow. */
#define NEURON_MAX_BO_SIZE	(SZ_1G * 1024ULL)

/* ---- Host placement (GEM shmem) ---- */

static void neuron_host_bo_free(struct drm_gem_object *obj)
{
	struct neuron_bo *bo = to_neuron_bo(obj);

	if (bo->sgl)
		dma_free_coherent(obj->dev->dev, bo->nseg * sizeof(*bo->sgl),
				  bo->sgl, bo->sgl_dma);
	mutex_destroy(&bo->sgl_lock);
	atomic64_dec(&to_neuron_device(obj->dev)->stats.bos);
	drm_gem_shmem_free(&bo->base);
}

static const struct drm_gem_object_funcs neuron_host_bo_funcs = {
	.free = neuron_host_bo_free,
	.print_info = drm_gem_shmem_object_print_info,
	.pin = drm_gem_shmem_object_pin,
	.unpin = drm_gem_shmem_object_unpin,
	.get_sg_table = drm_gem_shmem_object_get_sg_table,
	.vmap = drm_gem_shmem_object_vmap,
	.vunmap = drm_gem_shmem_object_vunmap,
	.mmap = drm_gem_shmem_object_mmap,
	.vm_ops = &drm_gem_shmem_vm_ops,
};

/*
 * drm_driver.gem_create_object: shmem objects are allocated as neuron_bo.
 * Not counted yet: the shmem helper frees the object without .free if it
 * fails later (no mmap offset left, say); neuron_host_bo_create() counts.
 */
struct drm_gem_object *neuron_gem_create_object(struct drm_device *drm,
						size_t size)
{
	struct neuron_bo *bo = kzalloc(sizeof(*bo), GFP_KERNEL);

	if (!bo)
		return ERR_PTR(-ENOMEM);
	bo->placement = DRM_NEURON_BO_HOST;
	mutex_init(&bo->sgl_lock);
	bo->base.map_wc = false;
	bo->base.base.funcs = &neuron_host_bo_funcs;
	return &bo->base.base;
}

/**
 * neuron_bo_prepare_dma() - make a host buffer reachable by the device
 * @bo: host buffer object
 *
 * Pins and DMA-maps the pages (kept until the object is freed) and builds
 * the segment list the DMA engine walks. Idempotent.
 *
 * Return: 0 or a negative errno.
 */
int neuron_bo_prepare_dma(struct neuron_bo *bo)
{
	struct device *dev = bo->base.base.dev->dev;
	struct scatterlist *sg;
	struct sg_table *sgt;
	u32 i, n = 0;
	int ret = 0;

	mutex_lock(&bo->sgl_lock);
	if (bo->sgl)
		goto out;
	sgt = drm_gem_shmem_get_pages_sgt(&bo->base);
	if (IS_ERR(sgt)) {
		ret = PTR_ERR(sgt);
		goto out;
	}
	for_each_sgtable_dma_sg(sgt, sg, i)
		n++;
	bo->sgl = dma_alloc_coherent(dev, n * sizeof(*bo->sgl), &bo->sgl_dma,
				     GFP_KERNEL);
	if (!bo->sgl) {
		ret = -ENOMEM;
		goto out;
	}
	for_each_sgtable_dma_sg(sgt, sg, i) {
		bo->sgl[i].addr = cpu_to_le64(sg_dma_address(sg));
		bo->sgl[i].len = cpu_to_le64(sg_dma_len(sg));
	}
	bo->nseg = n;
out:
	mutex_unlock(&bo->sgl_lock);
	return ret;
}

static struct drm_gem_object *neuron_host_bo_create(struct neuron_device *ndev,
						    u64 size)
{
	struct drm_gem_shmem_object *shmem = drm_gem_shmem_create(&ndev->drm, size);

	if (IS_ERR(shmem))
		return ERR_CAST(shmem);
	/* Complete: from here on, .free uncounts it. */
	atomic64_inc(&ndev->stats.bos);
	return &shmem->base;
}

/* ---- Device placement (drm_mm over device memory) ---- */

static void neuron_dev_bo_free(struct drm_gem_object *obj)
{
	struct neuron_device *ndev = to_neuron_device(obj->dev);
	struct neuron_bo *bo = to_neuron_bo(obj);

	mutex_lock(&ndev->mm_lock);
	ndev->mem_used -= bo->node.size;
	drm_mm_remove_node(&bo->node);
	mutex_unlock(&ndev->mm_lock);
	drm_gem_object_release(obj);
	mutex_destroy(&bo->sgl_lock);
	kfree(bo);
	atomic64_dec(&ndev->stats.bos);
}

static const struct vm_operations_struct neuron_dev_bo_vm_ops = {
	.open = drm_gem_vm_open,
	.close = drm_gem_vm_close,
};

/* Map the buffer's window of BAR2, write-combined, into user space. */
static int neuron_dev_bo_mmap(struct drm_gem_object *obj,
			      struct vm_area_struct *vma)
{
	struct neuron_device *ndev = to_neuron_device(obj->dev);
	struct neuron_bo *bo = to_neuron_bo(obj);
	unsigned long pgoff = vma->vm_pgoff - drm_vma_node_start(&obj->vma_node);
	unsigned long len = vma->vm_end - vma->vm_start;

	if (pgoff > (obj->size >> PAGE_SHIFT) ||
	    len > obj->size - (pgoff << PAGE_SHIFT))
		return -EINVAL;
	vm_flags_set(vma, VM_IO | VM_PFNMAP | VM_DONTEXPAND | VM_DONTDUMP);
	vma->vm_page_prot = pgprot_writecombine(vm_get_page_prot(vma->vm_flags));
	return io_remap_pfn_range(vma, vma->vm_start,
				  ((ndev->mem_base + bo->node.start) >> PAGE_SHIFT)
				  + pgoff, len, vma->vm_page_prot);
}

static const struct drm_gem_object_funcs neuron_dev_bo_funcs = {
	.free = neuron_dev_bo_free,
	.mmap = neuron_dev_bo_mmap,
	.vm_ops = &neuron_dev_bo_vm_ops,
};

static struct neuron_bo *neuron_dev_bo_create(struct neuron_device *ndev,
					      u64 size)
{
	struct neuron_bo *bo;
	int ret;

	bo = kzalloc(sizeof(*bo), GFP_KERNEL);
	if (!bo)
		return ERR_PTR(-ENOMEM);
	bo->placement = DRM_NEURON_BO_DEVICE;
	mutex_init(&bo->sgl_lock);
	bo->base.base.funcs = &neuron_dev_bo_funcs;

	mutex_lock(&ndev->mm_lock);
	ret = drm_mm_insert_node_in_range(&ndev->mm, &bo->node, size, PAGE_SIZE,
					  0, 0, U64_MAX, DRM_MM_INSERT_BEST);
	if (!ret)
		ndev->mem_used += size;
	mutex_unlock(&ndev->mm_lock);
	if (ret) {
		mutex_destroy(&bo->sgl_lock);
		kfree(bo);
		return ERR_PTR(ret == -ENOSPC ? -ENOMEM : ret);
	}
	drm_gem_private_object_init(&ndev->drm, &bo->base.base, size);
	atomic64_inc(&ndev->stats.bos);
	return bo;
}

int neuron_bo_create_ioctl(struct drm_device *drm, void *data,
			   struct drm_file *file)
{
	struct neuron_device *ndev = to_neuron_device(drm);
	struct drm_neuron_bo_create *args = data;
	struct drm_gem_object *obj;
	struct neuron_bo *bo;
	u64 size;
	int ret;

	if (args->flags || args->pad || args->handle)
		return -EINVAL;
	if (!args->size || args->size > NEURON_MAX_BO_SIZE)
		return -EINVAL;
	size = PAGE_ALIGN(args->size);

	switch (args->placement) {
	case DRM_NEURON_BO_DEVICE:
		if (size > ndev->mem_size)
			return -ENOMEM;
		bo = neuron_dev_bo_create(ndev, size);
		if (IS_ERR(bo))
			return PTR_ERR(bo);
		obj = &bo->base.base;
		break;
	case DRM_NEURON_BO_HOST:
		obj = neuron_host_bo_create(ndev, size);
		if (IS_ERR(obj))
			return PTR_ERR(obj);
		break;
	default:
		return -EINVAL;
	}

	ret = drm_gem_handle_create(file, obj, &args->handle);
	/* The handle holds the reference now (or the object goes). */
	drm_gem_object_put(obj);
	return ret;
}

int neuron_bo_info_ioctl(struct drm_device *drm, void *data,
			 struct drm_file *file)
{
	struct drm_neuron_bo_info *args = data;
	struct drm_gem_object *obj;
	int ret;

	obj = drm_gem_object_lookup(file, args->handle);
	if (!obj)
		return -ENOENT;
	ret = drm_gem_create_mmap_offset(obj);
	if (!ret) {
		args->placement = to_neuron_bo(obj)->placement;
		args->size = obj->size;
		args->mmap_offset = drm_vma_node_offset_addr(&obj->vma_node);
	}
	drm_gem_object_put(obj);
	return ret;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Buffer objects: device memory (drm_mm over BAR2) and host memory (GEM
 * shmem: pages allocated when touched, and only the ranges a job names
 * pinned and DMA-mapped, for as long as the job lives -- or, created with
 * DRM_NEURON_BO_PINNED, all of them pinned and mapped once, at creation,
 * until the buffer is freed).
 */
#include <linux/dma-mapping.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/pagemap.h>
#include <linux/pagevec.h>
#include <linux/sched/signal.h>
#include <linux/shmem_fs.h>
#include <linux/sizes.h>
#include <drm/drm_gem.h>
#include <drm/drm_print.h>
#include <drm/neuron_accel.h>

#include "neuron_drv.h"
#include "neuron_gem.h"

/*
 * Largest buffer of either placement; keeps size arithmetic far from
 * overflow. Host buffers are bounded further by what the system can back.
 */
#define NEURON_MAX_BO_SIZE	(SZ_1G * 1024ULL)

static unsigned int max_host_bo_mb;
module_param(max_host_bo_mb, uint, 0644);
MODULE_PARM_DESC(max_host_bo_mb, "Largest host buffer, MiB (0: the system's RAM)");

static unsigned int max_pinned_mb;
module_param(max_pinned_mb, uint, 0644);
MODULE_PARM_DESC(max_pinned_mb,
		 "Host memory the jobs in flight of one context may pin, MiB (0: half the RAM)");

static u64 neuron_ram_bytes(void)
{
	return (u64)totalram_pages() << PAGE_SHIFT;
}

/**
 * neuron_max_host_bo() - the largest host buffer BO_CREATE accepts
 *
 * Return: bytes, a multiple of the page size: max_host_bo_mb if set, else
 * the system's RAM, and never more than 1 TiB.
 */
u64 neuron_max_host_bo(void)
{
	u64 mb = READ_ONCE(max_host_bo_mb);

	return min(mb ? mb << 20 : neuron_ram_bytes(), NEURON_MAX_BO_SIZE);
}

/**
 * neuron_max_pinned() - host memory one context's jobs in flight may pin
 *
 * Return: bytes: max_pinned_mb if set, else half the system's RAM.
 */
u64 neuron_max_pinned(void)
{
	u64 mb = READ_ONCE(max_pinned_mb);

	return mb ? mb << 20 : neuron_ram_bytes() / 2;
}

/* ---- Host placement (GEM shmem) ---- */

static void neuron_pin_unmap_list(struct device *dev, struct neuron_pin *pin);

/*
 * A pinned buffer gives its share of the budget back, and its pages go with
 * the shmem object (drm_gem_shmem_free() unmaps base.sgt and unpins them).
 */
static void neuron_host_bo_free(struct drm_gem_object *obj)
{
	struct neuron_device *ndev = to_neuron_device(obj->dev);
	struct neuron_bo *bo = to_neuron_bo(obj);

	if (bo->pin_stats) {
		kvfree(bo->seg_start);
		neuron_pin_unmap_list(obj->dev->dev, &bo->pin);
		atomic64_sub(obj->size, &bo->pin_stats->pinned);
		atomic64_sub(obj->size, &ndev->stats.pinned);
		neuron_file_stats_put(bo->pin_stats);
	}
	atomic64_dec(&ndev->stats.bos);
	drm_gem_shmem_free(&bo->base);
}

/*
 * Map the buffer's shmem file itself: its pages are allocated on fault,
 * charged to the faulting process's memory cgroup and stay swappable, where
 * the shmem helper's mmap would pin every page of the buffer first. The
 * mapping holds the file, not the object: drop the reference
 * drm_gem_mmap_obj() took for it (as the helper does for imported buffers).
 */
static int neuron_host_bo_mmap(struct drm_gem_object *obj,
			       struct vm_area_struct *vma)
{
	int ret;

	/* From the fake offset of the device file to the page in the buffer. */
	vma->vm_pgoff -= drm_vma_node_start(&obj->vma_node);
	vma_set_file(vma, obj->filp);
	vm_flags_set(vma, VM_DONTEXPAND);
	ret = call_mmap(obj->filp, vma);
	if (ret)
		return ret;
	vma->vm_private_data = NULL;
	drm_gem_object_put(obj);
	return 0;
}

static const struct drm_gem_object_funcs neuron_host_bo_funcs = {
	.free = neuron_host_bo_free,
	.print_info = drm_gem_shmem_object_print_info,
	.pin = drm_gem_shmem_object_pin,
	.unpin = drm_gem_shmem_object_unpin,
	.get_sg_table = drm_gem_shmem_object_get_sg_table,
	.vmap = drm_gem_shmem_object_vmap,
	.vunmap = drm_gem_shmem_object_vunmap,
	.mmap = neuron_host_bo_mmap,
};

/*
 * drm_driver.gem_create_object: shmem objects are allocated as neuron_bo.
 * Not counted yet: the shmem helper frees the object without .free if it
 * fails later (no mmap offset left, say); neuron_host_bo_create() counts.
 */
struct drm_gem_object *neuron_gem_create_object(struct drm_device *drm,
						size_t size)
{
	struct neuron_bo *bo = kzalloc(sizeof(*bo), GFP_KERNEL_ACCOUNT);

	if (!bo)
		return ERR_PTR(-ENOMEM);
	bo->placement = DRM_NEURON_BO_HOST;
	bo->base.map_wc = false;
	bo->base.base.funcs = &neuron_host_bo_funcs;
	return &bo->base.base;
}

static int neuron_pin_map_list(struct device *dev, struct sg_table *sgt,
			       struct neuron_pin *pin);

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

/*
 * A host buffer pinned for its lifetime, charged to @stats's budget of
 * pinned memory: -E2BIG if it alone is larger than the budget, -ENOMEM if
 * it does not fit beside what the context holds. Its pages are allocated
 * (charged to the caller's memory cgroup), pinned and DMA-mapped by the
 * shmem helper (base.sgt), and the device's list of their segments is
 * built and mapped once; jobs naming the buffer use it as it is.
 */
static struct drm_gem_object *
neuron_pinned_bo_create(struct neuron_device *ndev, u64 size,
			struct neuron_file_stats *stats)
{
	struct drm_gem_object *obj;
	struct neuron_bo *bo;
	struct sg_table *sgt;
	int ret;

	if (size > neuron_max_pinned())
		return ERR_PTR(-E2BIG);
	if (atomic64_add_return(size, &stats->pinned) > neuron_max_pinned()) {
		atomic64_sub(size, &stats->pinned);
		return ERR_PTR(-ENOMEM);
	}
	obj = neuron_host_bo_create(ndev, size);
	if (IS_ERR(obj)) {
		atomic64_sub(size, &stats->pinned);
		return obj;
	}
	/* Charged: from here on, .free gives the budget back. */
	bo = to_neuron_bo(obj);
	kref_get(&stats->ref);
	bo->pin_stats = stats;
	atomic64_add(size, &ndev->stats.pinned);

	/* The device writes them behind the CPU's back: keep them on release. */
	bo->base.pages_mark_dirty_on_put = true;
	sgt = drm_gem_shmem_get_pages_sgt(&bo->base);
	if (IS_ERR(sgt)) {
		ret = PTR_ERR(sgt);
		goto err_put;
	}
	bo->pin.dir = DMA_BIDIRECTIONAL;
	ret = neuron_pin_map_list(obj->dev->dev, sgt, &bo->pin);
	if (ret)
		goto err_put;
	if (bo->pin.sgl) {
		struct scatterlist *sg;
		u64 at = 0;
		u32 i;

		bo->seg_start = kvmalloc_array(bo->pin.nseg, sizeof(*bo->seg_start),
					       GFP_KERNEL_ACCOUNT);
		if (!bo->seg_start) {
			ret = -ENOMEM;
			goto err_put;
		}
		for_each_sgtable_dma_sg(sgt, sg, i) {
			bo->seg_start[i] = at;
			at += sg_dma_len(sg);
		}
	}
	return obj;

err_put:
	drm_gem_object_put(obj);
	return ERR_PTR(ret);
}

/*
 * Take a reference on each page of [@first, @first + @n) of a shmem
 * mapping, into @pages. Pages already there come in batches, without
 * taking their lock; holes (and pages out in swap, or being set up) are
 * read one by one, which allocates, swaps in or waits for them. Return:
 * pages taken, or a negative errno with none held.
 */
static int neuron_get_pages(struct address_space *mapping, pgoff_t first,
			    u32 n, struct page **pages)
{
	struct folio_batch fbatch;
	pgoff_t last = first + n - 1;
	u32 got = 0;
	int ret;

	folio_batch_init(&fbatch);
	while (got < n) {
		pgoff_t index = first + got;
		unsigned int i, nr;

		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			goto err;
		}
		nr = filemap_get_folios_contig(mapping, &index, last, &fbatch);
		for (i = 0; i < nr; i++) {
			struct folio *folio = fbatch.folios[i];
			pgoff_t at = first + got;

			/*
			 * shmem clears a new folio after adding it to the
			 * cache, under its lock: one not up to date yet is
			 * read the slow way, which waits for that.
			 */
			if (!folio_test_uptodate(folio))
				break;
			/* Each page of the range holds a reference of its own. */
			for (; at < folio_next_index(folio) && at <= last; at++) {
				folio_get(folio);
				pages[got++] = folio_page(folio, at - folio->index);
			}
		}
		folio_batch_release(&fbatch);
		if (i < nr || (!nr && got < n)) {
			struct page *page = shmem_read_mapping_page(mapping, first + got);

			if (IS_ERR(page)) {
				ret = PTR_ERR(page);
				goto err;
			}
			pages[got++] = page;
		}
		cond_resched();
	}
	return got;

err:
	release_pages(pages, got);
	return ret;
}

/* Drop the references, marking the pages dirty first if the device wrote them. */
static void neuron_put_pages(struct page **pages, u32 n, bool dirty)
{
	u32 i;

	/* As drm_gem_put_pages() does: shmem folios need no lock for this. */
	for (i = 0; dirty && i < n; i++)
		folio_mark_dirty(page_folio(pages[i]));
	release_pages(pages, n);
}

/*
 * How the device reaches @sgt, DMA-mapped: at @pin->addr directly if it is
 * one segment, else through a list of its @pin->nseg segments, built here
 * and mapped at @pin->addr. Return: 0, -E2BIG (more segments than the
 * device's lists hold) or -ENOMEM (also for a list larger than kmalloc
 * gives); @pin->sgl is NULL unless there is a list to unmap.
 */
static int neuron_pin_map_list(struct device *dev, struct sg_table *sgt,
			       struct neuron_pin *pin)
{
	struct scatterlist *sg;
	u32 i;

	pin->sgl = NULL;
	pin->nseg = sgt->nents;
	if (pin->nseg == 1) {
		pin->addr = sg_dma_address(sgt->sgl);
		return 0;
	}
	if (pin->nseg > NHW_SGL_MAX_SEGS)
		return -E2BIG;
	/* Written once, read by the device: a streaming mapping will do. */
	pin->sgl = kmalloc_array(pin->nseg, sizeof(*pin->sgl),
				 GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!pin->sgl)
		return -ENOMEM;
	for_each_sgtable_dma_sg(sgt, sg, i) {
		pin->sgl[i].addr = cpu_to_le64(sg_dma_address(sg));
		pin->sgl[i].len = cpu_to_le64(sg_dma_len(sg));
	}
	pin->addr = dma_map_single(dev, pin->sgl, pin->nseg * sizeof(*pin->sgl),
				   DMA_TO_DEVICE);
	if (dma_mapping_error(dev, pin->addr)) {
		kfree(pin->sgl);
		pin->sgl = NULL;
		return -ENOMEM;
	}
	return 0;
}

/* Undo neuron_pin_map_list(). */
static void neuron_pin_unmap_list(struct device *dev, struct neuron_pin *pin)
{
	if (!pin->sgl)
		return;
	dma_unmap_single(dev, pin->addr, pin->nseg * sizeof(*pin->sgl),
			 DMA_TO_DEVICE);
	kfree(pin->sgl);
	pin->sgl = NULL;
}

/**
 * neuron_bo_pin() - pin and DMA-map a range of a host buffer for a job
 * @bo: host buffer object
 * @offset: first byte of the range
 * @size: bytes, > 0, the range within @bo (checked by the caller)
 * @dir: DMA_TO_DEVICE if the device only reads it, else DMA_FROM_DEVICE
 * @pin: filled in; released with neuron_bo_unpin()
 *
 * Takes a reference on each page the range spans, allocating the pages not
 * yet there (charged to the caller's memory cgroup, as a fault would be),
 * so that they stay put while the device works on them; the rest of the
 * buffer is left alone. A fatal signal stops the walk over a large range.
 *
 * Return: 0, -ENOMEM (also for a list of segments larger than kmalloc
 * gives: over 1 GiB of scattered pages), -EINTR, -E2BIG (more segments
 * than the device's lists hold), or another negative errno from shmem or
 * the DMA API.
 */
int neuron_bo_pin(struct neuron_bo *bo, u64 offset, u64 size,
		  enum dma_data_direction dir, struct neuron_pin *pin)
{
	struct drm_gem_object *obj = &bo->base.base;
	struct address_space *mapping = obj->filp->f_mapping;
	struct device *dev = obj->dev->dev;
	pgoff_t first = offset >> PAGE_SHIFT;
	u32 n;
	int ret;

	pin->npages = ((offset + size - 1) >> PAGE_SHIFT) - first + 1;
	pin->offset = offset & ~PAGE_MASK;
	pin->dir = dir;
	pin->sgl = NULL;
	pin->pages = kvmalloc_array(pin->npages, sizeof(*pin->pages),
				    GFP_KERNEL_ACCOUNT);
	if (!pin->pages)
		return -ENOMEM;
	ret = neuron_get_pages(mapping, first, pin->npages, pin->pages);
	if (ret < 0)
		goto err_free;
	n = ret;

	ret = sg_alloc_table_from_pages_segment(&pin->sgt, pin->pages, n, 0,
						(unsigned long)n << PAGE_SHIFT,
						dma_get_max_seg_size(dev),
						GFP_KERNEL_ACCOUNT);
	if (ret)
		goto err_put;
	ret = dma_map_sgtable(dev, &pin->sgt, dir, 0);
	if (ret)
		goto err_free_sgt;
	ret = neuron_pin_map_list(dev, &pin->sgt, pin);
	if (ret)
		goto err_unmap;
	return 0;

err_unmap:
	dma_unmap_sgtable(dev, &pin->sgt, dir, 0);
err_free_sgt:
	sg_free_table(&pin->sgt);
err_put:
	neuron_put_pages(pin->pages, n, false);
err_free:
	kvfree(pin->pages);
	pin->pages = NULL;
	return ret;
}

/**
 * neuron_bo_unpin() - release what neuron_bo_pin() took
 * @dev: the device the range was mapped for
 * @pin: a pinned range, the device done with it
 *
 * Pages the device may have written are marked dirty, so that reclaim
 * writes them to swap instead of dropping them.
 */
void neuron_bo_unpin(struct device *dev, struct neuron_pin *pin)
{
	neuron_pin_unmap_list(dev, pin);
	dma_unmap_sgtable(dev, &pin->sgt, pin->dir, 0);
	sg_free_table(&pin->sgt);
	neuron_put_pages(pin->pages, pin->npages, pin->dir != DMA_TO_DEVICE);
	kvfree(pin->pages);
	pin->pages = NULL;
}

/**
 * neuron_bo_pinned_seg() - the segment of a pinned buffer's list holding a byte
 * @bo: a pinned host buffer reached through a list (@bo->pin.sgl set)
 * @offset: a byte of the buffer, < its size
 *
 * Return: the index of the last segment starting at or before @offset.
 */
u32 neuron_bo_pinned_seg(struct neuron_bo *bo, u64 offset)
{
	u32 lo = 0, hi = bo->pin.nseg - 1;

	while (lo < hi) {
		u32 mid = lo + (hi - lo + 1) / 2;

		if (bo->seg_start[mid] <= offset)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/* ---- Device placement (drm_mm over device memory) ---- */

/**
 * neuron_bo_close() - drm_gem_object_funcs.close of device and peer buffers
 * @obj: a device buffer of this card, or a peer buffer it imported
 * @file: the file whose handle goes
 *
 * A job holds a reference to each buffer it names until it is freed:
 * direct jobs by the device's reaper, in batches up to NEURON_REAP_DELAY
 * after they complete, scheduled ones by the scheduler's clean-up work. A
 * buffer whose last handle closes right after its jobs completed would keep
 * its device memory until then -- a peer buffer, the memory of another
 * card. So free those jobs first (the reaper, run now and waited for) and
 * wait for the scheduler to free the others that have completed
 * (@done_jobs; bounded, in case its work is held up): the handle still
 * holds @obj, and the object goes with it unless a job still in flight
 * names it (its memory then comes back when that job has completed).
 */
void neuron_bo_close(struct drm_gem_object *obj, struct drm_file *file)
{
	struct neuron_device *ndev = to_neuron_device(obj->dev);
	struct neuron_bo *bo = to_neuron_bo(obj);

	if (!atomic_read(&bo->done_jobs))
		return;
	if (!llist_empty(&ndev->reap_list))
		flush_delayed_work(&ndev->reap_work);
	wait_var_event_timeout(&bo->done_jobs, !atomic_read(&bo->done_jobs), HZ);
}

/**
 * neuron_bo_done_put() - a completed job that named @obj is being freed
 * @obj: a buffer the job counted in its @done_jobs when it completed
 *
 * Called before the job drops its reference to @obj.
 */
void neuron_bo_done_put(struct drm_gem_object *obj)
{
	struct neuron_bo *bo = to_neuron_bo(obj);

	if (atomic_dec_and_test(&bo->done_jobs))
		wake_up_var(&bo->done_jobs);
}

static void neuron_dev_bo_free(struct drm_gem_object *obj)
{
	struct neuron_device *ndev = to_neuron_device(obj->dev);
	struct neuron_bo *bo = to_neuron_bo(obj);

	mutex_lock(&ndev->mm_lock);
	ndev->mem_used -= bo->node.size;
	drm_mm_remove_node(&bo->node);
	mutex_unlock(&ndev->mm_lock);
	drm_gem_object_release(obj);
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
	.close = neuron_bo_close,
	.export = neuron_dev_bo_export,
	.mmap = neuron_dev_bo_mmap,
	.vm_ops = &neuron_dev_bo_vm_ops,
};

static struct neuron_bo *neuron_dev_bo_create(struct neuron_device *ndev,
					      u64 size)
{
	struct neuron_bo *bo;
	int ret;

	bo = kzalloc(sizeof(*bo), GFP_KERNEL_ACCOUNT);
	if (!bo)
		return ERR_PTR(-ENOMEM);
	bo->placement = DRM_NEURON_BO_DEVICE;
	bo->base.base.funcs = &neuron_dev_bo_funcs;

	mutex_lock(&ndev->mm_lock);
	ret = drm_mm_insert_node_in_range(&ndev->mm, &bo->node, size, PAGE_SIZE,
					  0, 0, U64_MAX, DRM_MM_INSERT_BEST);
	if (!ret)
		ndev->mem_used += size;
	mutex_unlock(&ndev->mm_lock);
	if (ret) {
		kfree(bo);
		return ERR_PTR(ret == -ENOSPC ? -ENOMEM : ret);
	}
	drm_gem_private_object_init(&ndev->drm, &bo->base.base, size);
	atomic64_inc(&ndev->stats.bos);
	return bo;
}

/*
 * BO_CREATE. @handle is output only: a nonzero value on input is refused
 * (-EINVAL), so that the field stays free for a later extension. Limits:
 * a device buffer at most the card's memory (else -ENOMEM, as when the
 * memory is full), a host buffer at most neuron_max_host_bo() (else
 * -E2BIG); a pinned one also within the context's budget of pinned memory
 * (neuron_pinned_bo_create()).
 */
int neuron_bo_create_ioctl(struct drm_device *drm, void *data,
			   struct drm_file *file)
{
	struct neuron_device *ndev = to_neuron_device(drm);
	struct neuron_file_priv *fpriv = file->driver_priv;
	struct drm_neuron_bo_create *args = data;
	struct drm_gem_object *obj;
	struct neuron_bo *bo;
	int ret;

	if (args->flags & ~DRM_NEURON_BO_PINNED || args->pad || args->handle ||
	    !args->size)
		return -EINVAL;

	switch (args->placement) {
	case DRM_NEURON_BO_DEVICE:
		if (args->flags)
			return -EINVAL;
		if (args->size > ndev->mem_size)
			return -ENOMEM;
		bo = neuron_dev_bo_create(ndev, PAGE_ALIGN(args->size));
		if (IS_ERR(bo))
			return PTR_ERR(bo);
		obj = &bo->base.base;
		break;
	case DRM_NEURON_BO_HOST:
		/* A multiple of the page size: no rounding past it. */
		if (args->size > neuron_max_host_bo())
			return -E2BIG;
		if (args->flags & DRM_NEURON_BO_PINNED)
			obj = neuron_pinned_bo_create(ndev, PAGE_ALIGN(args->size),
						      fpriv->stats);
		else
			obj = neuron_host_bo_create(ndev, PAGE_ALIGN(args->size));
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

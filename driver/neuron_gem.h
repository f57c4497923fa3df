/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef __NEURON_GEM_H__
#define __NEURON_GEM_H__

#include <linux/dma-direction.h>
#include <linux/scatterlist.h>
#include <drm/drm_gem_shmem_helper.h>
#include <drm/drm_mm.h>
#include <drm/neuron_accel.h>

#include "neuron_hw.h"

struct dma_buf;
struct drm_device;
struct drm_file;
struct neuron_device;
struct neuron_file_stats;

/**
 * struct neuron_pin - pages of a host buffer range, pinned for one job
 *
 * The device reaches the range either directly (one DMA segment: @sgl is
 * NULL, @addr is its bus address) or through a scatter-gather list of
 * @nseg entries at @addr. The range starts @offset bytes into its first
 * page.
 */
struct neuron_pin {
	/** @pages: the pinned pages (a reference each), @npages of them */
	struct page **pages;
	u32 npages;
	/** @dir: DMA direction: the device reads (TO_DEVICE) or writes them */
	enum dma_data_direction dir;
	struct sg_table sgt;
	/** @sgl: the device's list of @sgt's DMA segments, or NULL */
	struct nhw_sg_entry *sgl;
	u32 nseg;
	dma_addr_t addr;
	u32 offset;
};

/**
 * struct neuron_bo - a buffer object in device or host memory
 *
 * Host buffers are GEM shmem objects; device buffers are private GEM objects
 * backed by a range of device memory. Both embed the same structure so that
 * a handle resolves to one type. A host buffer's pages are ordinary shmem
 * pages: allocated when first touched (a CPU fault or a job), charged then
 * to the toucher's memory cgroup, swappable, and pinned only while a job
 * that names them is in flight (struct neuron_pin) -- except those of a
 * buffer created with DRM_NEURON_BO_PINNED, all pinned and DMA-mapped
 * from its creation until it is freed (@pin_stats set).
 */
struct neuron_bo {
	struct drm_gem_shmem_object base;
	/** @placement: DRM_NEURON_BO_DEVICE or DRM_NEURON_BO_HOST */
	u32 placement;
	/** @node: device placement: the range of device memory */
	struct drm_mm_node node;
	/**
	 * @exporter: a peer buffer (neuron_prime.c): the device buffer of
	 * another card it stands for, held (a reference to it and to that
	 * card's drm_device) until the peer buffer is freed; NULL for the
	 * others
	 */
	struct neuron_bo *exporter;
	/**
	 * @done_jobs: device and peer buffers: jobs that have completed and
	 * still hold a reference to it, until they are freed (shortly after:
	 * by the reaper or the scheduler); neuron_bo_close() waits for them
	 */
	atomic_t done_jobs;
	/**
	 * @pin_stats: a pinned host buffer: the counters of the context that
	 * created it (a reference), whose budget of pinned memory it is
	 * charged to until it is freed; NULL for the others
	 */
	struct neuron_file_stats *pin_stats;
	/**
	 * @pin: a pinned host buffer: the whole buffer as the device reaches
	 * it (@addr, @sgl and @nseg of it; the pages themselves are
	 * base.pages, DMA-mapped as base.sgt)
	 */
	struct neuron_pin pin;
	/**
	 * @seg_start: a pinned host buffer reached through a list: the
	 * offset in the buffer of each of its @pin.nseg segments, ascending,
	 * so that a job's operand starts at the segment holding its first
	 * byte (neuron_bo_pinned_seg()) and the device does not walk the
	 * segments before it
	 */
	u64 *seg_start;
};

static inline struct neuron_bo *to_neuron_bo(struct drm_gem_object *obj)
{
	return container_of(obj, struct neuron_bo, base.base);
}

/* A host buffer pinned for its lifetime (DRM_NEURON_BO_PINNED)? */
static inline bool neuron_bo_is_pinned(struct neuron_bo *bo)
{
	return bo->pin_stats;
}

/* A device buffer of this card (not a peer buffer, not host memory)? */
static inline bool neuron_bo_is_local_dev(struct neuron_bo *bo)
{
	return bo->placement == DRM_NEURON_BO_DEVICE && !bo->exporter;
}

struct drm_gem_object *neuron_gem_create_object(struct drm_device *drm,
						size_t size);
u64 neuron_max_host_bo(void);
u64 neuron_max_pinned(void);
int neuron_bo_pin(struct neuron_bo *bo, u64 offset, u64 size,
		  enum dma_data_direction dir, struct neuron_pin *pin);
void neuron_bo_unpin(struct device *dev, struct neuron_pin *pin);
u32 neuron_bo_pinned_seg(struct neuron_bo *bo, u64 offset);
void neuron_bo_close(struct drm_gem_object *obj, struct drm_file *file);
void neuron_bo_done_put(struct drm_gem_object *obj);

/* neuron_prime.c */
struct dma_buf *neuron_dev_bo_export(struct drm_gem_object *obj, int flags);
struct drm_gem_object *neuron_gem_prime_import(struct drm_device *drm,
					       struct dma_buf *dma_buf);

int neuron_bo_create_ioctl(struct drm_device *drm, void *data,
			   struct drm_file *file);
int neuron_bo_info_ioctl(struct drm_device *drm, void *data,
			 struct drm_file *file);

#endif /* __NEURON_GEM_H__ */

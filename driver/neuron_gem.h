/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef __NEURON_GEM_H__
#define __NEURON_GEM_H__

#include <drm/drm_gem_shmem_helper.h>
#include <drm/drm_mm.h>

struct drm_device;
struct drm_file;
struct neuron_device;

/**
 * struct neuron_bo - a buffer object in device or host memory
 *
 * Host buffers are GEM shmem objects; device buffers are private GEM objects
 * backed by a range of device memory. Both embed the same structure so that
 * a handle resolves to one type.
 */
struct neuron_bo {
	struct drm_gem_shmem_object base;
	/** @placement: DRM_NEURON_BO_DEVICE or DRM_NEURON_BO_HOST */
	u32 placement;
	/** @node: device placement: the range of device memory */
	struct drm_mm_node node;

	/** @sgl_lock: protects the host placement's DMA list below */
	struct mutex sgl_lock;
	/** @sgl: host placement: segment list the device walks, or NULL */
	struct nrn_sg_entry *sgl;
	dma_addr_t sgl_dma;
	u32 nseg;
};

static inline struct neuron_bo *to_neuron_bo(struct drm_gem_object *obj)
{
	return container_of(obj, struct neuron_bo, base.base);
}

struct drm_gem_object *neuron_gem_create_object(struct drm_device *drm,
						size_t size);
int neuron_bo_prepare_dma(struct neuron_bo *bo);

int neuron_bo_create_ioctl(struct drm_device *drm, void *data,
			   struct drm_file *file);
int neuron_bo_info_ioctl(struct drm_device *drm, void *data,
			 struct drm_file *file);

#endif /* __NEURON_GEM_H__ */

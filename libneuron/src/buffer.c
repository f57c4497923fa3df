// SPDX-License-Identifier: MIT
/* Buffers: allocation in device or host memory, mapping, free. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <xf86drm.h>

#include "internal.h"

/* Wrap the GEM handle @handle of @dev, filling in size and mmap offset. */
static int nrn_buffer_wrap(struct nrn_device *dev, uint32_t handle,
			   struct nrn_buffer **bufp)
{
	struct drm_neuron_bo_info info = { .handle = handle };
	struct nrn_buffer *buf;
	int ret;

	ret = nrn_ioctl(dev->fd, DRM_IOCTL_NEURON_BO_INFO, &info);
	if (ret)
		return ret;
	buf = calloc(1, sizeof(*buf));
	if (!buf)
		return -ENOMEM;
	buf->dev = dev;
	buf->handle = handle;
	buf->mem = info.placement == DRM_NEURON_BO_HOST ? NRN_MEM_HOST : NRN_MEM_DEVICE;
	buf->size = info.size;
	buf->mmap_offset = info.mmap_offset;
	atomic_init(&buf->refs, 1);
	pthread_mutex_init(&buf->map_lock, NULL);
	*bufp = buf;
	return 0;
}

NRN_EXPORT int nrn_buffer_alloc(struct nrn_device *dev, size_t size,
				enum nrn_mem where, struct nrn_buffer **bufp)
{
	struct drm_neuron_bo_create create = {
		.size = size,
		.placement = where == NRN_MEM_HOST ? DRM_NEURON_BO_HOST :
						     DRM_NEURON_BO_DEVICE,
	};
	int ret;

	if (!dev || !bufp || !size || (where != NRN_MEM_DEVICE && where != NRN_MEM_HOST))
		return -EINVAL;
	ret = nrn_ioctl(dev->fd, DRM_IOCTL_NEURON_BO_CREATE, &create);
	if (ret)
		return ret;
	ret = nrn_buffer_wrap(dev, create.handle, bufp);
	if (ret) {
		drmCloseBufferHandle(dev->fd, create.handle);
		return ret;
	}
	/* The size asked for, not the page-rounded one: copies check it. */
	(*bufp)->size = size;
	return 0;
}

NRN_EXPORT int nrn_buffer_export(struct nrn_buffer *buf, int *fd)
{
	int ret;

	if (!buf || !fd)
		return -EINVAL;
	ret = drmPrimeHandleToFD(buf->dev->fd, buf->handle, DRM_CLOEXEC | DRM_RDWR, fd);
	return ret ? -errno : 0;
}

NRN_EXPORT int nrn_buffer_import(struct nrn_device *dev, int fd,
				 struct nrn_buffer **bufp)
{
	uint32_t handle;
	int ret;

	if (!dev || !bufp || fd < 0)
		return -EINVAL;
	if (drmPrimeFDToHandle(dev->fd, fd, &handle))
		return -errno;
	ret = nrn_buffer_wrap(dev, handle, bufp);
	if (ret)
		drmCloseBufferHandle(dev->fd, handle);
	return ret;
}

void nrn_buffer_get(struct nrn_buffer *buf)
{
	atomic_fetch_add_explicit(&buf->refs, 1, memory_order_relaxed);
}

/*
 * The last reference unmaps and closes the handle. Jobs already submitted
 * keep the memory alive in the kernel until they complete.
 */
void nrn_buffer_put(struct nrn_buffer *buf)
{
	if (atomic_fetch_sub_explicit(&buf->refs, 1, memory_order_acq_rel) != 1)
		return;
	if (buf->map)
		munmap(buf->map, buf->size);
	drmCloseBufferHandle(buf->dev->fd, buf->handle);
	pthread_mutex_destroy(&buf->map_lock);
	free(buf);
}

NRN_EXPORT void nrn_buffer_free(struct nrn_buffer *buf)
{
	if (buf)
		nrn_buffer_put(buf);
}

NRN_EXPORT size_t nrn_buffer_size(const struct nrn_buffer *buf)
{
	return buf->size;
}

NRN_EXPORT enum nrn_mem nrn_buffer_mem(const struct nrn_buffer *buf)
{
	return buf->mem;
}

NRN_EXPORT int nrn_buffer_map(struct nrn_buffer *buf, void **ptr)
{
	int ret = 0;
	void *p;

	if (!buf || !ptr)
		return -EINVAL;
	pthread_mutex_lock(&buf->map_lock);
	if (!buf->map) {
		p = mmap(NULL, buf->size, PROT_READ | PROT_WRITE, MAP_SHARED,
			 buf->dev->fd, (off_t)buf->mmap_offset);
		if (p == MAP_FAILED)
			ret = -errno;
		else
			buf->map = p;
	}
	*ptr = buf->map;
	pthread_mutex_unlock(&buf->map_lock);
	return ret;
}

// SPDX-License-Identifier: MIT
/* Buffers: allocation in device or host memory, mapping, free. */
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <xf86drm.h>

#include "internal.h"

NRN_EXPORT int nrn_buffer_alloc(struct nrn_device *dev, size_t size,
				enum nrn_mem where, struct nrn_buffer **bufp)
{
	struct drm_neuron_bo_create create = {
		.size = size,
		.placement = where == NRN_MEM_HOST ? DRM_NEURON_BO_HOST :
						     DRM_NEURON_BO_DEVICE,
	};
	struct drm_neuron_bo_info info = { 0 };
	struct nrn_buffer *buf;
	int ret;

	if (!dev || !bufp || !size || (where != NRN_MEM_DEVICE && where != NRN_MEM_HOST))
		return -EINVAL;
	buf = calloc(1, sizeof(*buf));
	if (!buf)
		return -ENOMEM;
	ret = nrn_ioctl(dev->fd, DRM_IOCTL_NEURON_BO_CREATE, &create);
	if (ret)
		goto err_free;
	info.handle = create.handle;
	ret = nrn_ioctl(dev->fd, DRM_IOCTL_NEURON_BO_INFO, &info);
	if (ret)
		goto err_close;
	buf->dev = dev;
	buf->handle = create.handle;
	buf->mem = where;
	buf->size = size;
	buf->mmap_offset = info.mmap_offset;
	atomic_init(&buf->refs, 1);
	pthread_mutex_init(&buf->map_lock, NULL);
	*bufp = buf;
	return 0;

err_close:
	drmCloseBufferHandle(dev->fd, create.handle);
err_free:
	free(buf);
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

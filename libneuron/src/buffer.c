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
		.placement = where == NRN_MEM_DEVICE ? DRM_NEURON_BO_DEVICE :
						       DRM_NEURON_BO_HOST,
		.flags = where == NRN_MEM_HOST_PINNED ? DRM_NEURON_BO_PINNED : 0,
	};
	int ret;

	if (!dev || !bufp || !size ||
	    (where != NRN_MEM_DEVICE && where != NRN_MEM_HOST && where != NRN_MEM_HOST_PINNED &&
	     where != NRN_MEM_HOST_PREFER_PINNED))
		return -EINVAL;
	if (nrn_inherited(dev))
		return -EBADFD;
	if (where == NRN_MEM_HOST_PREFER_PINNED) {
		/* Past the budget (-E2BIG, -ENOMEM) or not pinning (-EINVAL). */
		ret = nrn_buffer_alloc(dev, size, NRN_MEM_HOST_PINNED, bufp);
		if (ret == -ENOMEM || ret == -E2BIG || ret == -EINVAL)
			ret = nrn_buffer_alloc(dev, size, NRN_MEM_HOST, bufp);
		return ret;
	}
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

/*
 * Shared buffers. A dma-buf imported into the file that exported it, or
 * imported twice, gives the GEM handle the file already has for that
 * object: the buffer with that handle is found on the device's shared list
 * and taken once more, so the handle is closed once, by its last reference.
 * Their references are counted under the device's shared_lock, which
 * orders a last put (removal, handle closed) against an import's lookup.
 */
static void nrn_buffer_share_locked(struct nrn_buffer *buf)
{
	if (atomic_load_explicit(&buf->shared, memory_order_relaxed))
		return;
	atomic_store_explicit(&buf->shared, true, memory_order_relaxed);
	buf->next_shared = buf->dev->shared;
	buf->dev->shared = buf;
}

static struct nrn_buffer *nrn_shared_find_locked(struct nrn_device *dev,
						 uint32_t handle)
{
	struct nrn_buffer *b;

	for (b = dev->shared; b; b = b->next_shared)
		if (b->handle == handle)
			return b;
	return NULL;
}

NRN_EXPORT int nrn_buffer_export(struct nrn_buffer *buf, int *fd)
{
	int ret;

	if (!buf || !fd)
		return -EINVAL;
	if (nrn_inherited(buf->dev))
		return -EBADFD;
	pthread_mutex_lock(&buf->dev->shared_lock);
	ret = drmPrimeHandleToFD(buf->dev->fd, buf->handle, DRM_CLOEXEC | DRM_RDWR, fd);
	ret = ret ? -errno : 0;
	if (!ret)
		nrn_buffer_share_locked(buf);
	pthread_mutex_unlock(&buf->dev->shared_lock);
	return ret;
}

NRN_EXPORT int nrn_buffer_import(struct nrn_device *dev, int fd,
				 struct nrn_buffer **bufp)
{
	struct nrn_buffer *buf;
	uint32_t handle;
	int ret = 0;

	if (!dev || !bufp || fd < 0)
		return -EINVAL;
	if (nrn_inherited(dev))
		return -EBADFD;
	pthread_mutex_lock(&dev->shared_lock);
	if (drmPrimeFDToHandle(dev->fd, fd, &handle)) {
		ret = -errno;
		goto out;
	}
	buf = nrn_shared_find_locked(dev, handle);
	if (buf) {
		atomic_fetch_add_explicit(&buf->refs, 1, memory_order_relaxed);
		*bufp = buf;
		goto out;
	}
	ret = nrn_buffer_wrap(dev, handle, bufp);
	if (ret)
		drmCloseBufferHandle(dev->fd, handle);
	else
		nrn_buffer_share_locked(*bufp);
out:
	pthread_mutex_unlock(&dev->shared_lock);
	return ret;
}

void nrn_buffer_get(struct nrn_buffer *buf)
{
	atomic_fetch_add_explicit(&buf->refs, 1, memory_order_relaxed);
}

static void nrn_buffer_release(struct nrn_buffer *buf)
{
	if (buf->map)
		munmap(buf->map, buf->size);
	drmCloseBufferHandle(buf->dev->fd, buf->handle);
	pthread_mutex_destroy(&buf->map_lock);
	free(buf);
}

/*
 * The last reference unmaps and closes the handle. Jobs already submitted
 * keep the memory alive in the kernel until they complete. In a forked
 * child, a buffer of the parent's device closes nothing (fork.c).
 */
void nrn_buffer_put(struct nrn_buffer *buf)
{
	struct nrn_device *dev = buf->dev;
	struct nrn_buffer **p;
	bool last;

	if (nrn_inherited(dev))
		return;
	if (!atomic_load_explicit(&buf->shared, memory_order_relaxed)) {
		if (atomic_fetch_sub_explicit(&buf->refs, 1, memory_order_acq_rel) == 1)
			nrn_buffer_release(buf);
		return;
	}
	pthread_mutex_lock(&dev->shared_lock);
	last = atomic_fetch_sub_explicit(&buf->refs, 1, memory_order_acq_rel) == 1;
	if (last) {
		for (p = &dev->shared; *p != buf; p = &(*p)->next_shared)
			;
		*p = buf->next_shared;
		/* Closed before the lock drops: an import then makes a new handle. */
		drmCloseBufferHandle(dev->fd, buf->handle);
		buf->handle = 0;
	}
	pthread_mutex_unlock(&dev->shared_lock);
	if (last) {
		if (buf->map)
			munmap(buf->map, buf->size);
		pthread_mutex_destroy(&buf->map_lock);
		free(buf);
	}
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
	if (nrn_inherited(buf->dev))
		return -EBADFD;
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

// SPDX-License-Identifier: MIT
/*
 * Synchronous copies. Copies from ordinary user memory go through a host
 * staging buffer per device, in chunks; buffer-to-buffer copies run on the
 * DMA engine directly.
 */
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>
#include <linux/sync_file.h>
#include <xf86drm.h>

#include "internal.h"

#define NRN_STAGING_SIZE (4u << 20)

/* The error a signalled syncobj's fence carries (0 if it succeeded). */
static int nrn_syncobj_error(int fd, uint32_t handle)
{
	struct sync_file_info info = { 0 };
	int sfd, ret;

	ret = drmSyncobjExportSyncFile(fd, handle, &sfd);
	if (ret)
		return ret;
	ret = nrn_ioctl(sfd, SYNC_IOC_FILE_INFO, &info);
	close(sfd);
	if (ret)
		return ret;
	return info.status < 0 ? info.status : 0;
}

int nrn_dma_run(struct nrn_device *dev, const struct drm_neuron_copy *copies,
		unsigned int count)
{
	struct drm_neuron_submit submit = {
		.engine = DRM_NEURON_ENGINE_DMA,
		.index = 0,
		.copy_count = count,
		.copies = (uintptr_t)copies,
	};
	uint32_t syncobj;
	int ret;

	ret = drmSyncobjCreate(dev->fd, 0, &syncobj);
	if (ret)
		return ret;
	submit.out_sync.handle = syncobj;
	ret = nrn_ioctl(dev->fd, DRM_IOCTL_NEURON_SUBMIT, &submit);
	if (!ret)
		ret = drmSyncobjWait(dev->fd, &syncobj, 1, INT64_MAX,
				     DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT, NULL);
	if (!ret)
		ret = nrn_syncobj_error(dev->fd, syncobj);
	drmSyncobjDestroy(dev->fd, syncobj);
	return ret;
}

static int nrn_check_range(const struct nrn_buffer *buf, size_t off, size_t len)
{
	if (!buf || off > buf->size || len > buf->size - off)
		return -EINVAL;
	return 0;
}

/* The device's staging buffer, allocated on first use. Holds staging_lock. */
static int nrn_staging_get(struct nrn_device *dev, void **map)
{
	int ret;

	if (!dev->staging) {
		ret = nrn_buffer_alloc(dev, NRN_STAGING_SIZE, NRN_MEM_HOST,
				       &dev->staging);
		if (ret)
			return ret;
	}
	return nrn_buffer_map(dev->staging, map);
}

NRN_EXPORT int nrn_copy_buffer(struct nrn_buffer *dst, size_t dst_off,
			       struct nrn_buffer *src, size_t src_off, size_t len)
{
	struct drm_neuron_copy c = {
		.src_offset = src_off, .dst_offset = dst_off, .size = len,
	};
	int ret;

	ret = nrn_check_range(dst, dst_off, len);
	if (!ret)
		ret = nrn_check_range(src, src_off, len);
	if (ret)
		return ret;
	if (dst->dev != src->dev)
		return -EXDEV;
	if (!len)
		return 0;
	c.src_handle = src->handle;
	c.dst_handle = dst->handle;
	return nrn_dma_run(dst->dev, &c, 1);
}

/* Copy between user memory and @buf through staging; @to_dev picks the way. */
static int nrn_copy_user(struct nrn_buffer *buf, size_t off, void *user,
			 size_t len, int to_dev)
{
	struct nrn_device *dev = buf->dev;
	void *map;
	int ret;

	if (buf->mem == NRN_MEM_HOST) {
		/* Host buffers are plain cached memory: no DMA needed. */
		ret = nrn_buffer_map(buf, &map);
		if (ret)
			return ret;
		if (to_dev)
			memcpy((char *)map + off, user, len);
		else
			memcpy(user, (char *)map + off, len);
		return 0;
	}

	pthread_mutex_lock(&dev->staging_lock);
	ret = nrn_staging_get(dev, &map);
	while (!ret && len) {
		size_t n = len < NRN_STAGING_SIZE ? len : NRN_STAGING_SIZE;
		struct drm_neuron_copy c = { .size = n };

		if (to_dev) {
			memcpy(map, user, n);
			c.src_handle = dev->staging->handle;
			c.dst_handle = buf->handle;
			c.dst_offset = off;
		} else {
			c.src_handle = buf->handle;
			c.src_offset = off;
			c.dst_handle = dev->staging->handle;
		}
		ret = nrn_dma_run(dev, &c, 1);
		if (!ret && !to_dev)
			memcpy(user, map, n);
		user = (char *)user + n;
		off += n;
		len -= n;
	}
	pthread_mutex_unlock(&dev->staging_lock);
	return ret;
}

NRN_EXPORT int nrn_copy_h2d(struct nrn_buffer *dst, size_t dst_off,
			    const void *src, size_t len)
{
	int ret = nrn_check_range(dst, dst_off, len);

	if (ret)
		return ret;
	if (!src && len)
		return -EFAULT;
	return nrn_copy_user(dst, dst_off, (void *)src, len, 1);
}

NRN_EXPORT int nrn_copy_d2h(void *dst, struct nrn_buffer *src, size_t src_off,
			    size_t len)
{
	int ret = nrn_check_range(src, src_off, len);

	if (ret)
		return ret;
	if (!dst && len)
		return -EFAULT;
	return nrn_copy_user(src, src_off, dst, len, 0);
}

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers of the neuron kselftests: find the card's node, and thin
 * wrappers around the driver's and DRM's ioctls that return 0 or -errno.
 */
#ifndef NEURON_TEST_H
#define NEURON_TEST_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <drm.h>
#include <drm/neuron_accel.h>

static inline int nt_ioctl(int fd, unsigned long req, void *arg)
{
	int ret;

	do {
		ret = ioctl(fd, req, arg);
	} while (ret == -1 && (errno == EINTR || errno == EAGAIN));
	return ret == -1 ? -errno : 0;
}

/* Open the first /dev/accel/accelN whose driver is neuron; -1 if none. */
static inline int nt_open(void)
{
	for (int i = 0; i < 64; i++) {
		char path[32], name[32] = "";
		struct drm_version v = { .name = name, .name_len = sizeof(name) - 1 };
		int fd;

		snprintf(path, sizeof(path), "/dev/accel/accel%d", i);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (!nt_ioctl(fd, DRM_IOCTL_VERSION, &v) && !strcmp(name, "neuron"))
			return fd;
		close(fd);
	}
	return -1;
}

static inline int nt_param(int fd, uint32_t param, uint64_t *value)
{
	struct drm_neuron_get_param gp = { .param = param };
	int ret = nt_ioctl(fd, DRM_IOCTL_NEURON_GET_PARAM, &gp);

	*value = gp.value;
	return ret;
}

static inline int nt_bo_create(int fd, uint64_t size, uint32_t placement,
			       uint32_t *handle)
{
	struct drm_neuron_bo_create c = { .size = size, .placement = placement };
	int ret = nt_ioctl(fd, DRM_IOCTL_NEURON_BO_CREATE, &c);

	*handle = c.handle;
	return ret;
}

static inline int nt_bo_close(int fd, uint32_t handle)
{
	struct drm_gem_close c = { .handle = handle };

	return nt_ioctl(fd, DRM_IOCTL_GEM_CLOSE, &c);
}

/* Map a whole buffer; NULL on failure. */
static inline void *nt_bo_map(int fd, uint32_t handle, uint64_t *size)
{
	struct drm_neuron_bo_info info = { .handle = handle };
	void *p;

	if (nt_ioctl(fd, DRM_IOCTL_NEURON_BO_INFO, &info))
		return NULL;
	p = mmap(NULL, info.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 (off_t)info.mmap_offset);
	if (p == MAP_FAILED)
		return NULL;
	*size = info.size;
	return p;
}

static inline int nt_syncobj_create(int fd, uint32_t *handle)
{
	struct drm_syncobj_create c = { 0 };
	int ret = nt_ioctl(fd, DRM_IOCTL_SYNCOBJ_CREATE, &c);

	*handle = c.handle;
	return ret;
}

static inline int nt_syncobj_destroy(int fd, uint32_t handle)
{
	struct drm_syncobj_destroy d = { .handle = handle };

	return nt_ioctl(fd, DRM_IOCTL_SYNCOBJ_DESTROY, &d);
}

/* Wait up to @ms for a binary syncobj (submitted or not yet). */
static inline int nt_syncobj_wait(int fd, uint32_t handle, int64_t ms)
{
	struct timespec now;
	struct drm_syncobj_wait w = {
		.handles = (uintptr_t)&handle,
		.count_handles = 1,
		.flags = DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT,
	};

	clock_gettime(CLOCK_MONOTONIC, &now);
	w.timeout_nsec = now.tv_sec * 1000000000ll + now.tv_nsec + ms * 1000000ll;
	return nt_ioctl(fd, DRM_IOCTL_SYNCOBJ_WAIT, &w);
}

/* Submit @n copies on DMA queue @queue, signalling @out (0 for none). */
static inline int nt_submit_copies(int fd, uint32_t queue,
				   const struct drm_neuron_copy *copies,
				   uint32_t n, const struct drm_neuron_sync *in,
				   uint32_t nin, uint32_t out)
{
	struct drm_neuron_submit s = {
		.engine = DRM_NEURON_ENGINE_DMA,
		.index = queue,
		.copy_count = n,
		.copies = (uintptr_t)copies,
		.in_syncs = (uintptr_t)in,
		.in_sync_count = nin,
		.out_sync.handle = out,
	};

	return nt_ioctl(fd, DRM_IOCTL_NEURON_SUBMIT, &s);
}

#endif /* NEURON_TEST_H */

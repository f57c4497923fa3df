/* SPDX-License-Identifier: MIT */
/* libneuron internals: object layouts and helpers shared by src/. */
#ifndef NRN_INTERNAL_H
#define NRN_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <drm/neuron_accel.h>
#include "libneuron.h"

#define NRN_EXPORT __attribute__((visibility("default")))
#define __cold __attribute__((cold))

struct nrn_device {
	int fd;
	struct nrn_device_info info;
	/* Protects the staging buffer used by copies from user memory. */
	pthread_mutex_t staging_lock;
	struct nrn_buffer *staging;
};

struct nrn_buffer {
	struct nrn_device *dev;
	uint32_t handle;
	enum nrn_mem mem;
	size_t size;
	uint64_t mmap_offset;
	/* Mapped once on demand; @map_lock makes that once. */
	pthread_mutex_t map_lock;
	void *map;
};

/* ioctl() that retries EINTR/EAGAIN and returns 0 or -errno. */
int nrn_ioctl(int fd, unsigned long request, void *arg);

/* Submit copies on DMA queue 0 and wait for them; 0 or -errno. */
int nrn_dma_run(struct nrn_device *dev, const struct drm_neuron_copy *copies,
		unsigned int count);

#endif /* NRN_INTERNAL_H */

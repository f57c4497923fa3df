/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers of the link kselftests (neuron_link.c, neuron_link_unplug.c):
 * the cards and their topology, PRIME and syncobj sharing between cards,
 * link job submission.
 */
#ifndef NEURON_LINK_H
#define NEURON_LINK_H

#include "neuron_test.h"

#define MAX_CARDS	8
/* NHW_FAULT_FAIL_NEXT of hw/neuron_hw.h, for debugfs fault_inject */
#define FAULT_FAIL_NEXT	2

struct card {
	int fd;
	uint64_t fabric, nlinks, peers, queues_dma, cores;
};

/* The fabric rank of a card. */
static inline unsigned int rank_of(const struct card *c)
{
	return c->fabric & 0xff;
}

static inline int card_open_minor(int minor, struct card *c)
{
	char path[32];

	snprintf(path, sizeof(path), "/dev/accel/accel%d", minor);
	c->fd = open(path, O_RDWR | O_CLOEXEC);
	if (c->fd < 0)
		return -errno;
	if (nt_param(c->fd, DRM_NEURON_PARAM_FABRIC, &c->fabric) ||
	    nt_param(c->fd, DRM_NEURON_PARAM_NUM_LINKS, &c->nlinks) ||
	    nt_param(c->fd, DRM_NEURON_PARAM_LINK_PEERS, &c->peers) ||
	    nt_param(c->fd, DRM_NEURON_PARAM_NUM_DMA_QUEUES, &c->queues_dma) ||
	    nt_param(c->fd, DRM_NEURON_PARAM_NUM_CORES, &c->cores)) {
		close(c->fd);
		c->fd = -1;
		return -EINVAL;
	}
	return 0;
}

/* Open every neuron card; their number. */
static inline int open_cards(struct card *cards)
{
	int n = 0;

	for (int i = 0; i < 64 && n < MAX_CARDS; i++) {
		char name[32] = "";
		struct drm_version v = { .name = name, .name_len = sizeof(name) - 1 };

		if (card_open_minor(i, &cards[n]))
			continue;
		if (nt_ioctl(cards[n].fd, DRM_IOCTL_VERSION, &v) || strcmp(name, "neuron")) {
			close(cards[n].fd);
			continue;
		}
		n++;
	}
	return n;
}

/* The first link of @a whose other end is @b; -1 if none. */
static inline int link_to(const struct card *a, const struct card *b)
{
	if (!a->fabric || (a->fabric >> 16) != (b->fabric >> 16))
		return -1;
	for (unsigned int l = 0; l < a->nlinks; l++)
		if (((a->peers >> (8 * l)) & 0xff) == rank_of(b))
			return (int)l;
	return -1;
}

static inline int export_bo(int fd, uint32_t handle)
{
	struct drm_prime_handle p = { .handle = handle, .flags = DRM_CLOEXEC | DRM_RDWR };
	int ret = nt_ioctl(fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &p);

	return ret ? ret : p.fd;
}

/* Import a dma-buf into @fd: the handle, or -errno. */
static inline int64_t import_bo(int fd, int dmabuf)
{
	struct drm_prime_handle p = { .fd = dmabuf };
	int ret = nt_ioctl(fd, DRM_IOCTL_PRIME_FD_TO_HANDLE, &p);

	return ret ? ret : p.handle;
}

/* Export @handle of card @from and import it into @to: the peer handle. */
static inline int64_t share_bo(int from, int to, uint32_t handle)
{
	int dmabuf = export_bo(from, handle);
	int64_t h;

	if (dmabuf < 0)
		return dmabuf;
	h = import_bo(to, dmabuf);
	close(dmabuf);
	return h;
}

static inline int link_submit(int fd, uint32_t link, const struct drm_neuron_link_copy *c,
		       uint32_t n, const struct drm_neuron_sync *in, uint32_t nin,
		       uint32_t out)
{
	struct drm_neuron_submit s = {
		.engine = DRM_NEURON_ENGINE_LINK, .index = link,
		.copies = (uintptr_t)c, .copy_count = n,
		.in_syncs = (uintptr_t)in, .in_sync_count = nin,
		.out_sync.handle = out,
	};

	return nt_ioctl(fd, DRM_IOCTL_NEURON_SUBMIT, &s);
}

/* One link copy, waited for: the fence's status (or the ioctl's error). */
static inline int link_copy_wait(int fd, uint32_t link, const struct drm_neuron_link_copy *c)
{
	uint32_t sync;
	int32_t status = 0;
	int ret;

	ret = nt_syncobj_create(fd, &sync);
	if (ret)
		return ret;
	ret = link_submit(fd, link, c, 1, NULL, 0, sync);
	if (!ret)
		ret = nt_wait(fd, sync, 0, 20000, &status, NULL);
	nt_syncobj_destroy(fd, sync);
	return ret ? ret : status;
}

/* Two cards, @a's link (the return value, -1 if none) ending at @b. */
static inline int find_pair(struct card *cards, int n, struct card **a, struct card **b)
{
	*a = *b = NULL;
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++) {
			int l = i == j ? -1 : link_to(&cards[i], &cards[j]);

			if (l >= 0) {
				*a = &cards[i];
				*b = &cards[j];
				return l;
			}
		}
	return -1;
}

/* Share a syncobj of card @from with card @to: its handle there. */
static inline int64_t share_syncobj(int from, uint32_t handle, int to)
{
	struct drm_syncobj_handle h = { .handle = handle };
	int ret = nt_ioctl(from, DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &h);

	if (ret)
		return ret;
	h.handle = 0;
	ret = nt_ioctl(to, DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE, &h);
	close(h.fd);
	return ret ? ret : h.handle;
}

#endif /* NEURON_LINK_H */

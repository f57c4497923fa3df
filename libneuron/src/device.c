// SPDX-License-Identifier: MIT
/* Devices: enumeration from sysfs, open/close, info. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <xf86drm.h>

#include "internal.h"

#define ACCEL_CLASS "/sys/class/accel"
#define NRN_MAX_DEVICES 64

int nrn_ioctl(int fd, unsigned long request, void *arg)
{
	int ret;

	do {
		ret = ioctl(fd, request, arg);
	} while (ret == -1 && (errno == EINTR || errno == EAGAIN));
	return ret == -1 ? -errno : 0;
}

static int cmp_uint(const void *a, const void *b)
{
	unsigned int x = *(const unsigned int *)a, y = *(const unsigned int *)b;

	return (x > y) - (x < y);
}

/* Is /sys/class/accel/accel<minor> driven by neuron.ko? */
static bool nrn_is_ours(unsigned int minor)
{
	char path[PATH_MAX], target[PATH_MAX];
	const char *base;
	ssize_t n;

	snprintf(path, sizeof(path), ACCEL_CLASS "/accel%u/device/driver", minor);
	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0)
		return false;
	target[n] = '\0';
	base = strrchr(target, '/');
	return base && strcmp(base + 1, "neuron") == 0;
}

/* The accel minors of our cards, ascending: libneuron's device order. */
static int nrn_scan(unsigned int *minors, unsigned int max)
{
	struct dirent *de;
	unsigned int n = 0, minor;
	DIR *d;

	d = opendir(ACCEL_CLASS);
	if (!d)
		return 0;
	while ((de = readdir(d)) && n < max) {
		if (sscanf(de->d_name, "accel%u", &minor) == 1 && nrn_is_ours(minor))
			minors[n++] = minor;
	}
	closedir(d);
	qsort(minors, n, sizeof(*minors), cmp_uint);
	return (int)n;
}

NRN_EXPORT int nrn_device_count(void)
{
	unsigned int minors[NRN_MAX_DEVICES];

	return nrn_scan(minors, NRN_MAX_DEVICES);
}

static int nrn_get_param(int fd, uint32_t param, uint64_t *value)
{
	struct drm_neuron_get_param gp = { .param = param };
	int ret = nrn_ioctl(fd, DRM_IOCTL_NEURON_GET_PARAM, &gp);

	if (!ret)
		*value = gp.value;
	return ret;
}

/*
 * The link/fabric parameters (11-14). A driver that predates them
 * (-EINVAL) means a card without links: the fields stay 0.
 */
static int nrn_fill_links(int fd, struct nrn_device_info *info)
{
	uint64_t links, fabric = 0, peers = 0, up = 0;
	int ret;

	ret = nrn_get_param(fd, DRM_NEURON_PARAM_NUM_LINKS, &links);
	if (ret == -EINVAL)
		return 0;
	if (!ret)
		ret = nrn_get_param(fd, DRM_NEURON_PARAM_FABRIC, &fabric);
	if (!ret)
		ret = nrn_get_param(fd, DRM_NEURON_PARAM_LINK_PEERS, &peers);
	if (!ret)
		ret = nrn_get_param(fd, DRM_NEURON_PARAM_LINKS_UP, &up);
	if (ret)
		return ret;
	if (links > NRN_ARRAY_SIZE(info->link_peer))
		links = NRN_ARRAY_SIZE(info->link_peer);
	info->num_links = (uint32_t)links;
	info->fabric_id = (uint32_t)(fabric >> 16) & 0xffff;
	info->fabric_size = (uint32_t)(fabric >> 8) & 0xff;
	info->fabric_rank = (uint32_t)fabric & 0xff;
	for (unsigned int l = 0; l < links; l++)
		info->link_peer[l] = (uint8_t)(peers >> (8 * l));
	info->links_up = (uint32_t)up;
	return 0;
}

static int nrn_fill_info(struct nrn_device *dev)
{
	struct nrn_device_info *info = &dev->info;
	char path[PATH_MAX], target[PATH_MAX];
	const char *base;
	drmVersionPtr ver;
	uint64_t v[9];
	ssize_t n;
	int ret;

	for (unsigned int i = 0; i < 9; i++) {
		ret = nrn_get_param(dev->fd, i, &v[i]);
		if (ret)
			return ret;
	}
	info->device_id = (uint32_t)v[DRM_NEURON_PARAM_DEVICE_ID];
	info->revision = (uint32_t)v[DRM_NEURON_PARAM_REVISION];
	info->model_version = (uint32_t)v[DRM_NEURON_PARAM_MODEL_VERSION];
	info->capabilities = v[DRM_NEURON_PARAM_CAPABILITIES];
	info->num_cores = (uint32_t)v[DRM_NEURON_PARAM_NUM_CORES];
	info->num_dma_queues = (uint32_t)v[DRM_NEURON_PARAM_NUM_DMA_QUEUES];
	info->mem_size = v[DRM_NEURON_PARAM_MEM_SIZE];
	info->mem_free = v[DRM_NEURON_PARAM_MEM_FREE];
	info->isa_version = (uint32_t)v[DRM_NEURON_PARAM_ISA_VERSION];
	ret = nrn_fill_links(dev->fd, info);
	if (ret)
		return ret;

	ver = drmGetVersion(dev->fd);
	if (!ver)
		return -ENOMEM;
	snprintf(info->driver, sizeof(info->driver), "%s", ver->name);
	snprintf(info->driver_version, sizeof(info->driver_version), "%d.%d.%d",
		 ver->version_major, ver->version_minor, ver->version_patchlevel);
	drmFreeVersion(ver);

	snprintf(path, sizeof(path), ACCEL_CLASS "/accel%u/device", info->minor);
	n = readlink(path, target, sizeof(target) - 1);
	if (n > 0) {
		target[n] = '\0';
		base = strrchr(target, '/');
		snprintf(info->pci_address, sizeof(info->pci_address), "%.*s",
			 (int)sizeof(info->pci_address) - 1, base ? base + 1 : target);
	}
	return 0;
}

NRN_EXPORT __cold int nrn_device_open(unsigned int index,
				      struct nrn_device **devp)
{
	unsigned int minors[NRN_MAX_DEVICES];
	struct nrn_device *dev;
	char node[64];
	int n, ret;

	n = nrn_scan(minors, NRN_MAX_DEVICES);
	if (index >= (unsigned int)n)
		return -ENODEV;
	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return -ENOMEM;
	snprintf(node, sizeof(node), "/dev/accel/accel%u", minors[index]);
	dev->fd = open(node, O_RDWR | O_CLOEXEC);
	if (dev->fd < 0) {
		ret = -errno;
		free(dev);
		return ret;
	}
	dev->info.index = index;
	dev->info.minor = minors[index];
	ret = nrn_fill_info(dev);
	if (ret) {
		close(dev->fd);
		free(dev);
		return ret;
	}
	pthread_mutex_init(&dev->lock, NULL);
	pthread_mutex_init(&dev->shared_lock, NULL);
	atomic_init(&dev->next_queue, 0);
	dev->fork_gen = atomic_load(&nrn_fork_generation);
	atomic_fetch_add(&nrn_devices_open, 1);
	*devp = dev;
	return 0;
}

NRN_EXPORT __cold void nrn_device_close(struct nrn_device *dev)
{
	if (!dev)
		return;
	atomic_fetch_sub(&nrn_devices_open, 1);
	if (nrn_inherited(dev)) {
		/*
		 * The parent's device, in a forked child: only this process's
		 * descriptor goes; its objects (streams, buffers still freed
		 * later) keep the structure, which is the parent's image.
		 */
		close(dev->fd);
		return;
	}
	nrn_stream_destroy(dev->stream);
	pthread_mutex_destroy(&dev->lock);
	pthread_mutex_destroy(&dev->shared_lock);
	close(dev->fd);
	free(dev);
}

NRN_EXPORT int nrn_device_info(struct nrn_device *dev,
			       struct nrn_device_info *info)
{
	uint64_t free_bytes;
	int ret;

	if (nrn_inherited(dev))
		return -EBADFD;
	/* Free memory changes; refresh it. */
	ret = nrn_get_param(dev->fd, DRM_NEURON_PARAM_MEM_FREE, &free_bytes);
	if (ret)
		return ret;
	*info = dev->info;
	info->mem_free = free_bytes;
	/* A peer card comes and goes; refresh which links are up. */
	if (info->num_links &&
	    !nrn_get_param(dev->fd, DRM_NEURON_PARAM_LINKS_UP, &free_bytes))
		info->links_up = (uint32_t)free_bytes;
	return 0;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * What the driver shows of itself: device memory in sysfs and, per open
 * file, in DRM fdinfo; engine time that is time on the engine (pipelined
 * jobs do not count the time they waited behind each other); every queue
 * in debugfs.
 */
#include "kselftest_harness.h"
#include "neuron_test.h"

FIXTURE(obs) {
	int fd;
};

FIXTURE_SETUP(obs)
{
	self->fd = nt_open();
	if (self->fd < 0)
		SKIP(return, "no neuron device (is neuron.ko loaded?)");
}

FIXTURE_TEARDOWN(obs)
{
	if (self->fd >= 0)
		close(self->fd);
}

/* A number after "@key:" in this file's fdinfo; -1 if absent. */
static long long fdinfo_value(int fd, const char *key)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	return nt_keyed_number(path, key);
}

TEST_F(obs, memory_in_sysfs_and_fdinfo)
{
	long long used = nt_counter(self->fd, "mem_used");
	uint32_t dev, host;

	ASSERT_GE(used, 0);
	EXPECT_EQ(0, fdinfo_value(self->fd, "drm-memory-device"));
	ASSERT_EQ(0, nt_bo_create(self->fd, 1 << 20, DRM_NEURON_BO_DEVICE, &dev));
	ASSERT_EQ(0, nt_bo_create(self->fd, 2 << 20, DRM_NEURON_BO_HOST, &host));
	/* Device memory is the card's; host buffers are not counted there. */
	EXPECT_EQ(used + (1 << 20), nt_counter(self->fd, "mem_used"));
	EXPECT_EQ(1024, fdinfo_value(self->fd, "drm-memory-device"));
	EXPECT_EQ(2048, fdinfo_value(self->fd, "drm-memory-host"));
	ASSERT_EQ(0, nt_bo_close(self->fd, dev));
	ASSERT_EQ(0, nt_bo_close(self->fd, host));
	EXPECT_EQ(used, nt_counter(self->fd, "mem_used"));
	EXPECT_EQ(0, fdinfo_value(self->fd, "drm-memory-device"));
	EXPECT_EQ(0, fdinfo_value(self->fd, "drm-memory-host"));
}

/*
 * Sixteen copies issued back to back on one queue run one after the
 * other: together they cannot have used the engine for longer than the
 * wall time they took. (Counting each job from its submission, they would
 * add up to about eight times that.)
 */
TEST_F(obs, engine_time_is_time_on_the_engine)
{
	struct drm_neuron_copy c = { .size = 8 << 20 };
	long long e0 = fdinfo_value(self->fd, "drm-engine-dma"), e1;
	uint32_t host, dev, sync;
	double t0, wall_ms;
	int32_t status;

	ASSERT_GE(e0, 0);
	EXPECT_EQ(0, e0);
	ASSERT_EQ(0, nt_bo_create(self->fd, c.size, DRM_NEURON_BO_HOST, &host));
	ASSERT_EQ(0, nt_bo_create(self->fd, c.size, DRM_NEURON_BO_DEVICE, &dev));
	ASSERT_EQ(0, nt_syncobj_create(self->fd, &sync));
	c.src_handle = host;
	c.dst_handle = dev;
	t0 = nt_now_ms();
	for (int i = 0; i < 16; i++)
		ASSERT_EQ(0, nt_submit_copies(self->fd, 0, &c, 1, NULL, 0,
					      i == 15 ? sync : 0));
	ASSERT_EQ(0, nt_wait(self->fd, sync, 0, 30000, &status, NULL));
	wall_ms = nt_now_ms() - t0;
	ASSERT_EQ(0, status);
	e1 = fdinfo_value(self->fd, "drm-engine-dma");
	TH_LOG("16 copies of 8 MiB: %.1f ms wall, %.1f ms on the engine",
	       wall_ms, (e1 - e0) / 1e6);
	EXPECT_GT(e1, e0);
	EXPECT_LE(e1 - e0, wall_ms * 1e6);
	nt_syncobj_destroy(self->fd, sync);
	nt_bo_close(self->fd, host);
	nt_bo_close(self->fd, dev);
}

TEST_F(obs, debugfs_lists_every_queue)
{
	uint64_t ndma, ncores;
	char pci[64], path[128], line[256];
	unsigned int dma = 0, core = 0;
	FILE *f;

	ASSERT_EQ(0, nt_param(self->fd, DRM_NEURON_PARAM_NUM_DMA_QUEUES, &ndma));
	ASSERT_EQ(0, nt_param(self->fd, DRM_NEURON_PARAM_NUM_CORES, &ncores));
	ASSERT_EQ(0, nt_pci_address(self->fd, pci, sizeof(pci)));
	snprintf(path, sizeof(path), "/sys/kernel/debug/accel/%s/queues", pci);
	f = fopen(path, "r");
	if (!f)
		SKIP(return, "no %s (debugfs mounted?)", path);
	while (fgets(line, sizeof(line), f)) {
		dma += !strncmp(line, "dma", 3);
		core += !strncmp(line, "core", 4);
	}
	fclose(f);
	EXPECT_EQ(ndma, dma);
	EXPECT_EQ(ncores, core);
}

TEST_HARNESS_MAIN

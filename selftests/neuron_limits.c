// SPDX-License-Identifier: GPL-2.0
/*
 * Resource limits of neuron.ko: the buffer counter stays exact when a host
 * BO_CREATE fails.
 */
#include "kselftest_harness.h"
#include "neuron_test.h"

#define TiB (1ULL << 40)

FIXTURE(lim) {
	int fd;
};

FIXTURE_SETUP(lim)
{
	self->fd = nt_open();
	if (self->fd < 0)
		SKIP(return, "no neuron device (is neuron.ko loaded?)");
}

FIXTURE_TEARDOWN(lim)
{
	if (self->fd >= 0)
		close(self->fd);
}

/*
 * The shmem helper frees a half-made object without our .free when it
 * fails after allocating it: here because the card's mmap offset space
 * (just under 1 TiB in all) cannot hold the buffer. The count of buffers
 * must not move.
 */
TEST_F(lim, failed_host_create_keeps_bo_count_exact)
{
	long long base = nt_counter(self->fd, "bos");
	uint32_t h = 0;

	ASSERT_GE(base, 0);
	EXPECT_EQ(-ENOSPC, nt_bo_create(self->fd, TiB, DRM_NEURON_BO_HOST, &h));
	EXPECT_EQ(base, nt_counter(self->fd, "bos"));
	EXPECT_EQ(-ENOSPC, nt_bo_create(self->fd, TiB, DRM_NEURON_BO_HOST, &h));
	EXPECT_EQ(base, nt_counter(self->fd, "bos"));
	/* And a buffer that does fit counts once, uncounted at close. */
	ASSERT_EQ(0, nt_bo_create(self->fd, 1 << 20, DRM_NEURON_BO_HOST, &h));
	EXPECT_EQ(base + 1, nt_counter(self->fd, "bos"));
	ASSERT_EQ(0, nt_bo_close(self->fd, h));
	EXPECT_EQ(base, nt_counter(self->fd, "bos"));
}

TEST_HARNESS_MAIN

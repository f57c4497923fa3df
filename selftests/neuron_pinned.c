// SPDX-License-Identifier: GPL-2.0
/*
 * Host buffers created with DRM_NEURON_BO_PINNED: refused where they mean
 * nothing, allocated and pinned whole at creation, counted in the
 * context's budget of pinned memory for as long as they exist (and not
 * again by the jobs that name them), correct as copy operands at any
 * offset, and kept until a job in flight that names them is done when
 * their handle is closed.
 *
 * Needs root (it sets max_pinned_mb, and restores it); the job held in
 * flight uses the fault-injection hook when there is one.
 */
#include <stdbool.h>

#include "kselftest_harness.h"
#include "neuron_test.h"

#define KiB (1ULL << 10)
#define MiB (1ULL << 20)

/* What allocating a few pages more or less may cost in Shmem. */
#define SLACK_KB (1024)

FIXTURE(pin) {
	int fd;
	long long max_pinned_mb;
};

FIXTURE_SETUP(pin)
{
	self->fd = nt_open();
	if (self->fd < 0)
		SKIP(return, "no neuron device (is neuron.ko loaded?)");
	self->max_pinned_mb = nt_module_param("max_pinned_mb");
	NT_NEED_CARD_ALONE(self->fd);
}

FIXTURE_TEARDOWN(pin)
{
	if (self->max_pinned_mb >= 0)
		nt_set_module_param("max_pinned_mb", self->max_pinned_mb);
	if (self->fd >= 0) {
		nt_fault(self->fd, 0, 0);
		close(self->fd);
	}
}

static int bo_create(int fd, uint64_t size, uint32_t placement,
		     uint32_t flags, uint32_t *handle)
{
	struct drm_neuron_bo_create c = {
		.size = size, .placement = placement, .flags = flags,
	};
	int ret = nt_ioctl(fd, DRM_IOCTL_NEURON_BO_CREATE, &c);

	*handle = c.handle;
	return ret;
}

/* The flag is for host buffers only; other bits stay reserved. */
TEST_F(pin, flags_checked)
{
	long long bos = nt_counter(self->fd, "bos");
	uint32_t h = 0;
	uint64_t caps;

	ASSERT_EQ(0, nt_param(self->fd, DRM_NEURON_PARAM_CAPABILITIES, &caps));
	EXPECT_TRUE(caps & DRM_NEURON_CAP_PINNED_BO);
	EXPECT_EQ(-EINVAL, bo_create(self->fd, MiB, DRM_NEURON_BO_DEVICE,
				     DRM_NEURON_BO_PINNED, &h));
	EXPECT_EQ(-EINVAL, bo_create(self->fd, MiB, DRM_NEURON_BO_HOST, 0x2, &h));
	EXPECT_EQ(-EINVAL, bo_create(self->fd, MiB, DRM_NEURON_BO_HOST,
				     DRM_NEURON_BO_PINNED | 0x80000000u, &h));
	EXPECT_EQ(-EINVAL, bo_create(self->fd, 0, DRM_NEURON_BO_HOST,
				     DRM_NEURON_BO_PINNED, &h));
	EXPECT_EQ(bos, nt_counter(self->fd, "bos"));
	ASSERT_EQ(0, bo_create(self->fd, MiB, DRM_NEURON_BO_HOST,
			       DRM_NEURON_BO_PINNED, &h));
	EXPECT_EQ(bos + 1, nt_counter(self->fd, "bos"));
	EXPECT_EQ(0, nt_bo_close(self->fd, h));
	EXPECT_EQ(bos, nt_counter(self->fd, "bos"));
}

/*
 * A pinned buffer's pages are there from its creation (Shmem grows by its
 * size before anything touches it) and pinned until it is freed (the
 * card's "pinned" counter); a job naming it pins nothing more.
 */
TEST_F(pin, pages_pinned_at_creation)
{
	uint64_t size = 32 * MiB;
	long long pinned = nt_counter(self->fd, "pinned"), before, after;
	uint32_t h, dev, sync;

	ASSERT_GE(pinned, 0);
	before = nt_meminfo_kb("Shmem");
	ASSERT_EQ(0, bo_create(self->fd, size, DRM_NEURON_BO_HOST,
			       DRM_NEURON_BO_PINNED, &h));
	after = nt_meminfo_kb("Shmem");
	TH_LOG("a pinned buffer of %llu MiB: Shmem %+lld KiB",
	       (unsigned long long)(size >> 20), after - before);
	EXPECT_GT(after - before, (long long)(size >> 10) - SLACK_KB);
	EXPECT_EQ(pinned + (long long)size, nt_counter(self->fd, "pinned"));

	ASSERT_EQ(0, bo_create(self->fd, size, DRM_NEURON_BO_DEVICE, 0, &dev));
	ASSERT_EQ(0, nt_syncobj_create(self->fd, &sync));
	ASSERT_EQ(0, nt_copy1(self->fd, h, 0, dev, 0, size, sync));
	ASSERT_EQ(0, nt_wait_status(self->fd, sync));
	ASSERT_EQ(0, nt_copy1(self->fd, dev, 0, h, 0, size, sync));
	ASSERT_EQ(0, nt_wait_status(self->fd, sync));
	EXPECT_EQ(pinned + (long long)size,
		  nt_counter_settle(self->fd, "pinned", pinned + size, 2000));

	/* Freed (and unpinned) once the jobs that named it are freed too. */
	EXPECT_EQ(0, nt_bo_close(self->fd, h));
	EXPECT_EQ(pinned, nt_counter_settle(self->fd, "pinned", pinned, 2000));
	/* Its pages go when the shmem file does (a deferred fput). */
	for (int i = 0; i < 200; i++) {
		after = nt_meminfo_kb("Shmem");
		if (after - before < SLACK_KB)
			break;
		usleep(10000);
	}
	EXPECT_LT(after - before, SLACK_KB);
	EXPECT_EQ(0, nt_bo_close(self->fd, dev));
	EXPECT_EQ(0, nt_syncobj_destroy(self->fd, sync));
}

/*
 * The budget (max_pinned_mb = 1 here): a pinned buffer of 1 MiB fits, one
 * byte more is -E2BIG; while it exists nothing else of the context fits
 * (-ENOMEM: another pinned buffer, a job pinning a plain buffer's page),
 * though jobs naming it run; once it is freed, they fit again. Another
 * context has a budget of its own.
 */
TEST_F(pin, budget)
{
	long long pinned = nt_counter(self->fd, "pinned");
	uint32_t pbo, small, plain, dev, sync;
	uint64_t v;
	int fd2;

	ASSERT_LE(0, self->max_pinned_mb);
	ASSERT_EQ(0, nt_set_module_param("max_pinned_mb", 1));
	ASSERT_EQ(0, nt_param(self->fd, DRM_NEURON_PARAM_MAX_PINNED, &v));
	EXPECT_EQ(MiB, v);
	ASSERT_EQ(0, nt_bo_create(self->fd, MiB, DRM_NEURON_BO_HOST, &plain));
	ASSERT_EQ(0, nt_bo_create(self->fd, MiB, DRM_NEURON_BO_DEVICE, &dev));
	ASSERT_EQ(0, nt_syncobj_create(self->fd, &sync));

	EXPECT_EQ(-E2BIG, bo_create(self->fd, MiB + 1, DRM_NEURON_BO_HOST,
				    DRM_NEURON_BO_PINNED, &pbo));
	EXPECT_EQ(pinned, nt_counter(self->fd, "pinned"));
	ASSERT_EQ(0, bo_create(self->fd, MiB, DRM_NEURON_BO_HOST,
			       DRM_NEURON_BO_PINNED, &pbo));
	EXPECT_EQ(pinned + (long long)MiB, nt_counter(self->fd, "pinned"));
	EXPECT_EQ(-ENOMEM, bo_create(self->fd, 4 * KiB, DRM_NEURON_BO_HOST,
				     DRM_NEURON_BO_PINNED, &small));
	EXPECT_EQ(-ENOMEM, nt_copy1(self->fd, plain, 0, dev, 0, 4 * KiB, sync));
	/* Jobs naming it pin nothing: they fit. */
	EXPECT_EQ(0, nt_copy1(self->fd, pbo, 0, dev, 0, MiB, sync));
	EXPECT_EQ(0, nt_wait_status(self->fd, sync));
	EXPECT_EQ(0, nt_copy1(self->fd, dev, 0, pbo, 0, MiB, sync));
	EXPECT_EQ(0, nt_wait_status(self->fd, sync));

	/* Another file's budget is its own. */
	fd2 = nt_open();
	ASSERT_LE(0, fd2);
	EXPECT_EQ(0, bo_create(fd2, MiB, DRM_NEURON_BO_HOST,
			       DRM_NEURON_BO_PINNED, &small));
	EXPECT_EQ(pinned + 2 * (long long)MiB, nt_counter(self->fd, "pinned"));
	close(fd2);
	EXPECT_EQ(pinned + (long long)MiB, nt_counter(self->fd, "pinned"));

	/* Its share comes back once it and the jobs that named it are freed. */
	EXPECT_EQ(0, nt_bo_close(self->fd, pbo));
	EXPECT_EQ(pinned, nt_counter_settle(self->fd, "pinned", pinned, 2000));
	EXPECT_EQ(0, nt_copy1(self->fd, plain, 0, dev, 0, 4 * KiB, sync));
	EXPECT_EQ(0, nt_wait_status(self->fd, sync));
	ASSERT_EQ(0, bo_create(self->fd, 4 * KiB, DRM_NEURON_BO_HOST,
			       DRM_NEURON_BO_PINNED, &small));
	EXPECT_EQ(0, nt_bo_close(self->fd, small));
	EXPECT_EQ(pinned, nt_counter_settle(self->fd, "pinned", pinned, 2000));
}

/*
 * Data through pinned buffers, at offsets inside pages and across them:
 * pinned -> device -> pinned, pinned -> plain host and back, each byte
 * where it belongs and nothing written outside the ranges.
 */
TEST_F(pin, copies_at_offsets)
{
	uint64_t size = 8 * MiB, msize, n = 3 * MiB + 123;
	uint32_t a, b, plain, dev, sync;
	uint8_t *pa, *pb, *pp;

	ASSERT_EQ(0, bo_create(self->fd, size, DRM_NEURON_BO_HOST,
			       DRM_NEURON_BO_PINNED, &a));
	ASSERT_EQ(0, bo_create(self->fd, size, DRM_NEURON_BO_HOST,
			       DRM_NEURON_BO_PINNED, &b));
	ASSERT_EQ(0, nt_bo_create(self->fd, size, DRM_NEURON_BO_HOST, &plain));
	ASSERT_EQ(0, nt_bo_create(self->fd, size, DRM_NEURON_BO_DEVICE, &dev));
	ASSERT_EQ(0, nt_syncobj_create(self->fd, &sync));
	pa = nt_bo_map(self->fd, a, &msize);
	ASSERT_NE(NULL, pa);
	pb = nt_bo_map(self->fd, b, &msize);
	ASSERT_NE(NULL, pb);
	pp = nt_bo_map(self->fd, plain, &msize);
	ASSERT_NE(NULL, pp);
	for (uint64_t i = 0; i < size; i++)
		pa[i] = (uint8_t)(i * 131 + (i >> 12));
	memset(pb, 0xee, size);

	ASSERT_EQ(0, nt_copy1(self->fd, a, 100, dev, 5000, n, sync));
	ASSERT_EQ(0, nt_wait_status(self->fd, sync));
	ASSERT_EQ(0, nt_copy1(self->fd, dev, 5000, b, 4097, n, sync));
	ASSERT_EQ(0, nt_wait_status(self->fd, sync));
	EXPECT_EQ(0, memcmp(pa + 100, pb + 4097, n));
	EXPECT_EQ(0xee, pb[4096]);
	EXPECT_EQ(0xee, pb[4097 + n]);

	/* Host to host, pinned to plain and back. */
	ASSERT_EQ(0, nt_copy1(self->fd, a, 7, plain, MiB + 1, n, sync));
	ASSERT_EQ(0, nt_wait_status(self->fd, sync));
	EXPECT_EQ(0, memcmp(pa + 7, pp + MiB + 1, n));
	memset(pb, 0, size);
	ASSERT_EQ(0, nt_copy1(self->fd, plain, MiB + 1, b, size - n, n, sync));
	ASSERT_EQ(0, nt_wait_status(self->fd, sync));
	EXPECT_EQ(0, memcmp(pa + 7, pb + size - n, n));
	EXPECT_EQ(0, pb[size - n - 1]);

	/* Out of range is still refused. */
	EXPECT_EQ(-EINVAL, nt_copy1(self->fd, a, size - 4, dev, 0, 8, sync));

	EXPECT_EQ(0, munmap(pa, size));
	EXPECT_EQ(0, munmap(pb, size));
	EXPECT_EQ(0, munmap(pp, size));
	EXPECT_EQ(0, nt_syncobj_destroy(self->fd, sync));
}

/*
 * The handle of a pinned buffer closed while a job naming it is in flight:
 * the buffer (its pages, its share of the budget) stays until the job is
 * done, then goes. With the fault hook, the job hangs until its timeout;
 * without, it is a large copy that is likely still running.
 */
TEST_F(pin, closed_while_in_flight)
{
	uint64_t size = 16 * MiB;
	long long pinned = nt_counter(self->fd, "pinned");
	long long bos = nt_counter(self->fd, "bos");
	uint32_t h, dev, sync;
	bool hook;

	ASSERT_EQ(0, bo_create(self->fd, size, DRM_NEURON_BO_HOST,
			       DRM_NEURON_BO_PINNED, &h));
	ASSERT_EQ(0, nt_bo_create(self->fd, size, DRM_NEURON_BO_DEVICE, &dev));
	ASSERT_EQ(0, nt_syncobj_create(self->fd, &sync));
	hook = !nt_fault(self->fd, 0, 0);
	if (hook)
		ASSERT_EQ(0, nt_fault(self->fd, 0, 1 /* NHW_FAULT_HANG */));
	ASSERT_EQ(0, nt_copy1(self->fd, h, 0, dev, 0, size, sync));
	ASSERT_EQ(0, nt_bo_close(self->fd, h));
	if (hook) {
		EXPECT_EQ(pinned + (long long)size, nt_counter(self->fd, "pinned"));
		EXPECT_EQ(bos + 2, nt_counter(self->fd, "bos"));
		EXPECT_EQ(-ETIMEDOUT, nt_wait_status(self->fd, sync));
		ASSERT_EQ(0, nt_fault(self->fd, 0, 0));
	} else {
		TH_LOG("no fault-injection hook: the job is not held in flight");
		EXPECT_EQ(0, nt_wait_status(self->fd, sync));
	}
	EXPECT_EQ(pinned, nt_counter_settle(self->fd, "pinned", pinned, 2000));
	EXPECT_EQ(bos + 1, nt_counter_settle(self->fd, "bos", bos + 1, 2000));
	/* The card works on. */
	ASSERT_EQ(0, bo_create(self->fd, size, DRM_NEURON_BO_HOST,
			       DRM_NEURON_BO_PINNED, &h));
	EXPECT_EQ(0, nt_copy1(self->fd, dev, 0, h, 0, size, sync));
	EXPECT_EQ(0, nt_wait_status(self->fd, sync));
	EXPECT_EQ(0, nt_bo_close(self->fd, h));
	EXPECT_EQ(0, nt_bo_close(self->fd, dev));
	EXPECT_EQ(pinned, nt_counter_settle(self->fd, "pinned", pinned, 2000));
}

TEST_HARNESS_MAIN

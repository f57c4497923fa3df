// SPDX-License-Identifier: GPL-2.0
/*
 * Resource limits of neuron.ko, as the "resource limits" section of
 * uapi/drm/neuron_accel.h states them: each bound passes at the limit and
 * fails one past it with the documented errno. Host buffers cost memory
 * only for the pages touched, a job pins only the pages its copies name,
 * and the buffer counter stays exact when a host BO_CREATE fails.
 *
 * Needs root (it sets neuron.ko's parameters, and restores them) and, for
 * the pinned budget with a job in flight, the fault-injection hook and a
 * short job_timeout_ms.
 */
#include <stdbool.h>

#include "kselftest_harness.h"
#include "neuron_test.h"

#define KiB (1ULL << 10)
#define MiB (1ULL << 20)
#define GiB (1ULL << 30)
#define TiB (1ULL << 40)

/* What touching one page or a few may cost, at most, in Shmem. */
#define SLACK_KB (64 * 1024)

FIXTURE(lim) {
	int fd;
	long long max_host_bo_mb, max_pinned_mb;
};

FIXTURE_SETUP(lim)
{
	self->fd = nt_open();
	if (self->fd < 0)
		SKIP(return, "no neuron device (is neuron.ko loaded?)");
	self->max_host_bo_mb = nt_module_param("max_host_bo_mb");
	self->max_pinned_mb = nt_module_param("max_pinned_mb");
	NT_NEED_CARD_ALONE(self->fd);
}

FIXTURE_TEARDOWN(lim)
{
	if (self->max_host_bo_mb >= 0)
		nt_set_module_param("max_host_bo_mb", self->max_host_bo_mb);
	if (self->max_pinned_mb >= 0)
		nt_set_module_param("max_pinned_mb", self->max_pinned_mb);
	if (self->fd >= 0) {
		nt_fault(self->fd, 0, 0);
		close(self->fd);
	}
}

/* The largest host buffer; 1 TiB, the old fixed bound, if not reported. */
static uint64_t max_host_bo(int fd)
{
	uint64_t v;

	return nt_param(fd, DRM_NEURON_PARAM_MAX_HOST_BO, &v) ? TiB : v;
}

/* A big host buffer this machine may create: 1 GiB, or half the limit. */
static uint64_t big_size(int fd)
{
	uint64_t max = max_host_bo(fd) / 2;

	return (max < GiB ? max : GiB) & ~(MiB - 1);
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
	if (self->max_host_bo_mb >= 0)
		ASSERT_EQ(0, nt_set_module_param("max_host_bo_mb", TiB / MiB));
	EXPECT_EQ(-ENOSPC, nt_bo_create(self->fd, TiB, DRM_NEURON_BO_HOST, &h));
	EXPECT_EQ(base, nt_counter(self->fd, "bos"));
	EXPECT_EQ(-ENOSPC, nt_bo_create(self->fd, TiB, DRM_NEURON_BO_HOST, &h));
	EXPECT_EQ(base, nt_counter(self->fd, "bos"));
	/* And a buffer that does fit counts once, uncounted at close. */
	ASSERT_EQ(0, nt_bo_create(self->fd, MiB, DRM_NEURON_BO_HOST, &h));
	EXPECT_EQ(base + 1, nt_counter(self->fd, "bos"));
	ASSERT_EQ(0, nt_bo_close(self->fd, h));
	EXPECT_EQ(base, nt_counter(self->fd, "bos"));
}

/* A big host buffer, mapped and written to in two places, costs two pages. */
TEST_F(lim, host_bo_costs_only_touched_pages)
{
	uint64_t size = big_size(self->fd), mapped;
	long long before, after;
	volatile uint8_t *p;
	uint32_t h;

	ASSERT_GE(size, 64 * MiB);
	ASSERT_EQ(0, nt_bo_create(self->fd, size, DRM_NEURON_BO_HOST, &h));
	before = nt_meminfo_kb("Shmem");
	p = nt_bo_map(self->fd, h, &mapped);
	ASSERT_NE(NULL, p);
	p[0] = 1;
	p[size / 2 + 7] = 2;
	after = nt_meminfo_kb("Shmem");
	TH_LOG("%llu MiB buffer, two bytes written: Shmem %+lld KiB",
	       (unsigned long long)(size >> 20), after - before);
	EXPECT_LT(after - before, SLACK_KB);
	EXPECT_EQ(2, p[size / 2 + 7]);
	/* The mapping holds the memory, not the handle: it outlives it. */
	ASSERT_EQ(0, nt_bo_close(self->fd, h));
	EXPECT_EQ(1, p[0]);
	p[4096] = 3;
	EXPECT_EQ(3, p[4096]);
	EXPECT_EQ(0, munmap((void *)p, mapped));
}

/* Host buffers: up to DRM_NEURON_PARAM_MAX_HOST_BO, -E2BIG past it. */
TEST_F(lim, host_bo_size_limit)
{
	uint64_t max;
	uint32_t h;

	ASSERT_EQ(0, nt_param(self->fd, DRM_NEURON_PARAM_MAX_HOST_BO, &max));
	ASSERT_GT(max, 0);
	ASSERT_EQ(0, max % 4096);
	/* As large as the RAM: creating it costs nothing yet. */
	ASSERT_EQ(0, nt_bo_create(self->fd, max, DRM_NEURON_BO_HOST, &h));
	ASSERT_EQ(0, nt_bo_close(self->fd, h));
	EXPECT_EQ(-E2BIG, nt_bo_create(self->fd, max + 1, DRM_NEURON_BO_HOST, &h));
	EXPECT_EQ(-E2BIG, nt_bo_create(self->fd, max + 4096, DRM_NEURON_BO_HOST, &h));
	EXPECT_EQ(-E2BIG, nt_bo_create(self->fd, UINT64_MAX, DRM_NEURON_BO_HOST, &h));
	EXPECT_EQ(-EINVAL, nt_bo_create(self->fd, 0, DRM_NEURON_BO_HOST, &h));

	/* The administrator's bound. */
	ASSERT_EQ(0, nt_set_module_param("max_host_bo_mb", 16));
	ASSERT_EQ(0, nt_param(self->fd, DRM_NEURON_PARAM_MAX_HOST_BO, &max));
	EXPECT_EQ(16 * MiB, max);
	ASSERT_EQ(0, nt_bo_create(self->fd, 16 * MiB, DRM_NEURON_BO_HOST, &h));
	ASSERT_EQ(0, nt_bo_close(self->fd, h));
	EXPECT_EQ(-E2BIG, nt_bo_create(self->fd, 16 * MiB + 1, DRM_NEURON_BO_HOST, &h));
}

/* Device buffers: up to the card's memory, -ENOMEM past it. */
TEST_F(lim, device_bo_size_limit)
{
	uint64_t mem, free;
	uint32_t h;

	ASSERT_EQ(0, nt_param(self->fd, DRM_NEURON_PARAM_MEM_SIZE, &mem));
	ASSERT_EQ(0, nt_param(self->fd, DRM_NEURON_PARAM_MEM_FREE, &free));
	if (free == mem) {
		ASSERT_EQ(0, nt_bo_create(self->fd, mem, DRM_NEURON_BO_DEVICE, &h));
		ASSERT_EQ(0, nt_bo_close(self->fd, h));
	}
	EXPECT_EQ(-ENOMEM, nt_bo_create(self->fd, mem + 1, DRM_NEURON_BO_DEVICE, &h));
	EXPECT_EQ(-ENOMEM, nt_bo_create(self->fd, UINT64_MAX, DRM_NEURON_BO_DEVICE, &h));
	EXPECT_EQ(-EINVAL, nt_bo_create(self->fd, 0, DRM_NEURON_BO_DEVICE, &h));
}

/* BO_CREATE's handle is output only: nonzero on input is refused. */
TEST_F(lim, bo_create_handle_is_output_only)
{
	struct drm_neuron_bo_create c = {
		.size = 4096, .placement = DRM_NEURON_BO_HOST, .handle = 1,
	};
	long long bos = nt_counter(self->fd, "bos");

	EXPECT_EQ(-EINVAL, nt_ioctl(self->fd, DRM_IOCTL_NEURON_BO_CREATE, &c));
	EXPECT_EQ(bos, nt_counter(self->fd, "bos"));
	c.handle = 0;
	ASSERT_EQ(0, nt_ioctl(self->fd, DRM_IOCTL_NEURON_BO_CREATE, &c));
	EXPECT_NE(0, c.handle);
	EXPECT_EQ(0, nt_bo_close(self->fd, c.handle));
}

/*
 * A 4 KiB copy out of the middle of a big host buffer pins (and allocates)
 * the two pages it spans, not the buffer; they are unpinned once the job
 * is done, and the data arrives.
 */
TEST_F(lim, small_copy_from_big_bo_pins_its_pages_only)
{
	uint64_t size = big_size(self->fd), off = size / 2 + 100, msize;
	long long pinned = nt_counter(self->fd, "pinned"), before, after;
	uint32_t big, dev, back, sync;
	uint8_t *pb, *pk;

	ASSERT_GE(size, 64 * MiB);
	ASSERT_EQ(0, nt_bo_create(self->fd, size, DRM_NEURON_BO_HOST, &big));
	ASSERT_EQ(0, nt_bo_create(self->fd, MiB, DRM_NEURON_BO_DEVICE, &dev));
	ASSERT_EQ(0, nt_bo_create(self->fd, MiB, DRM_NEURON_BO_HOST, &back));
	ASSERT_EQ(0, nt_syncobj_create(self->fd, &sync));
	pk = nt_bo_map(self->fd, back, &msize);
	ASSERT_NE(NULL, pk);

	before = nt_meminfo_kb("Shmem");
	ASSERT_EQ(0, nt_copy1(self->fd, big, off, dev, 0, 4096, sync));
	ASSERT_EQ(0, nt_wait_status(self->fd, sync));
	ASSERT_EQ(0, nt_copy1(self->fd, dev, 0, back, 0, 4096, sync));
	ASSERT_EQ(0, nt_wait_status(self->fd, sync));
	after = nt_meminfo_kb("Shmem");
	TH_LOG("4 KiB copied out of %llu MiB: Shmem %+lld KiB",
	       (unsigned long long)(size >> 20), after - before);
	EXPECT_LT(after - before, SLACK_KB);
	EXPECT_EQ(pinned, nt_counter_settle(self->fd, "pinned", pinned, 2000));

	/* Written through a mapping: the job sees it. */
	pb = nt_bo_map(self->fd, big, &msize);
	ASSERT_NE(NULL, pb);
	for (int i = 0; i < 4096; i++)
		pb[off + i] = (uint8_t)(i * 7 + 1);
	ASSERT_EQ(0, nt_copy1(self->fd, big, off, dev, 0, 4096, sync));
	ASSERT_EQ(0, nt_wait_status(self->fd, sync));
	ASSERT_EQ(0, nt_copy1(self->fd, dev, 0, back, 4000, 4096, sync));
	ASSERT_EQ(0, nt_wait_status(self->fd, sync));
	EXPECT_EQ(0, memcmp(pb + off, pk + 4000, 4096));
	after = nt_meminfo_kb("Shmem");
	EXPECT_LT(after - before, SLACK_KB);
	EXPECT_EQ(0, munmap(pb, size));
	EXPECT_EQ(0, munmap(pk, MiB));
	EXPECT_EQ(pinned, nt_counter_settle(self->fd, "pinned", pinned, 2000));
}

/*
 * The pinned budget of a context (max_pinned_mb = 1 here): a job may pin
 * 1 MiB, not one page more (-E2BIG); with a job holding it in flight, the
 * next one does not fit (-ENOMEM) until that job is done.
 */
TEST_F(lim, pinned_budget)
{
	struct drm_neuron_copy two[2] = {
		{ .size = 512 * KiB },
		{ .src_offset = 512 * KiB, .dst_offset = 512 * KiB, .size = 512 * KiB },
	};
	long long pinned = nt_counter(self->fd, "pinned");
	uint32_t host, dev, sync, sync2;
	uint64_t v;
	bool hook;

	ASSERT_LE(0, self->max_pinned_mb);
	ASSERT_EQ(0, nt_set_module_param("max_pinned_mb", 1));
	ASSERT_EQ(0, nt_param(self->fd, DRM_NEURON_PARAM_MAX_PINNED, &v));
	EXPECT_EQ(MiB, v);
	ASSERT_EQ(0, nt_bo_create(self->fd, 4 * MiB, DRM_NEURON_BO_HOST, &host));
	ASSERT_EQ(0, nt_bo_create(self->fd, 4 * MiB, DRM_NEURON_BO_DEVICE, &dev));
	ASSERT_EQ(0, nt_syncobj_create(self->fd, &sync));
	ASSERT_EQ(0, nt_syncobj_create(self->fd, &sync2));

	/* One copy: 1 MiB at a page boundary fits, 1 byte off it spans a page more. */
	EXPECT_EQ(0, nt_copy1(self->fd, host, 0, dev, 0, MiB, sync));
	EXPECT_EQ(0, nt_wait_status(self->fd, sync));
	EXPECT_EQ(-E2BIG, nt_copy1(self->fd, host, 1, dev, 0, MiB, sync));
	EXPECT_EQ(-E2BIG, nt_copy1(self->fd, host, 0, dev, 0, MiB + 1, sync));
	/* Host to host: both operands count. */
	EXPECT_EQ(0, nt_copy1(self->fd, host, 0, host, 2 * MiB, 512 * KiB, sync));
	EXPECT_EQ(0, nt_wait_status(self->fd, sync));
	EXPECT_EQ(-E2BIG, nt_copy1(self->fd, host, 0, host, 2 * MiB, 512 * KiB + 1, sync));
	/* Two copies of a job add up. */
	for (int i = 0; i < 2; i++) {
		two[i].src_handle = host;
		two[i].dst_handle = dev;
	}
	EXPECT_EQ(0, nt_submit_copies(self->fd, 0, two, 2, NULL, 0, sync));
	EXPECT_EQ(0, nt_wait_status(self->fd, sync));
	two[1].size += 1;
	EXPECT_EQ(-E2BIG, nt_submit_copies(self->fd, 0, two, 2, NULL, 0, sync));
	EXPECT_EQ(pinned, nt_counter_settle(self->fd, "pinned", pinned, 2000));

	hook = !nt_fault(self->fd, 0, 0);
	if (hook) {
		/* A job that hangs keeps its megabyte until its timeout. */
		ASSERT_EQ(0, nt_fault(self->fd, 0, 1 /* NHW_FAULT_HANG */));
		ASSERT_EQ(0, nt_copy1(self->fd, host, 0, dev, 0, MiB, sync));
		EXPECT_EQ(pinned + (long long)MiB, nt_counter(self->fd, "pinned"));
		EXPECT_EQ(-ENOMEM, nt_copy1(self->fd, host, 0, dev, 0, 4096, sync2));
		EXPECT_EQ(-ETIMEDOUT, nt_wait_status(self->fd, sync));
		ASSERT_EQ(0, nt_fault(self->fd, 0, 0));
		EXPECT_EQ(pinned, nt_counter_settle(self->fd, "pinned", pinned, 2000));
		EXPECT_EQ(0, nt_copy1(self->fd, host, 0, dev, 0, 4096, sync2));
		EXPECT_EQ(0, nt_wait_status(self->fd, sync2));
	} else {
		TH_LOG("no fault-injection hook: the budget with a job in flight is not tested");
	}
	EXPECT_EQ(pinned, nt_counter_settle(self->fd, "pinned", pinned, 2000));
}

/* Copies per job: 1..DRM_NEURON_MAX_COPIES; in-syncs: up to DRM_NEURON_MAX_SYNCS. */
TEST_F(lim, submit_copy_and_sync_counts)
{
	static struct drm_neuron_copy c[DRM_NEURON_MAX_COPIES + 1];
	struct drm_neuron_sync in[DRM_NEURON_MAX_SYNCS + 1];
	struct drm_syncobj_create sc = { .flags = DRM_SYNCOBJ_CREATE_SIGNALED };
	uint32_t dev, sync;

	ASSERT_EQ(0, nt_bo_create(self->fd, MiB, DRM_NEURON_BO_DEVICE, &dev));
	ASSERT_EQ(0, nt_syncobj_create(self->fd, &sync));
	ASSERT_EQ(0, nt_ioctl(self->fd, DRM_IOCTL_SYNCOBJ_CREATE, &sc));
	for (int i = 0; i <= DRM_NEURON_MAX_COPIES; i++)
		c[i] = (struct drm_neuron_copy){
			.src_handle = dev, .dst_handle = dev, .size = 4096,
			.src_offset = (uint64_t)i * 4096 % (512 * KiB),
			.dst_offset = 512 * KiB + (uint64_t)i * 4096 % (512 * KiB),
		};
	for (int i = 0; i <= DRM_NEURON_MAX_SYNCS; i++)
		in[i] = (struct drm_neuron_sync){ .handle = sc.handle };

	EXPECT_EQ(0, nt_submit_copies(self->fd, 0, c, DRM_NEURON_MAX_COPIES, NULL, 0, sync));
	EXPECT_EQ(0, nt_wait_status(self->fd, sync));
	EXPECT_EQ(-EINVAL, nt_submit_copies(self->fd, 0, c, DRM_NEURON_MAX_COPIES + 1,
					    NULL, 0, sync));
	EXPECT_EQ(-EINVAL, nt_submit_copies(self->fd, 0, c, 0, NULL, 0, sync));

	EXPECT_EQ(0, nt_submit_copies(self->fd, 0, c, 1, in, DRM_NEURON_MAX_SYNCS, sync));
	EXPECT_EQ(0, nt_wait_status(self->fd, sync));
	EXPECT_EQ(-EINVAL, nt_submit_copies(self->fd, 0, c, 1, in, DRM_NEURON_MAX_SYNCS + 1,
					    sync));
}

/*
 * Compute jobs: up to DRM_NEURON_MAX_BOS buffer-table entries and
 * NISA_MAX_INSNS instructions; one more of either is -EINVAL.
 */
TEST_F(lim, submit_bo_list_and_kernel_size)
{
	const uint64_t kmax = (uint64_t)NISA_MAX_INSNS * sizeof(struct nisa_insn);
	struct drm_neuron_bo_ref refs[DRM_NEURON_MAX_BOS + 1];
	struct drm_neuron_sync out = { 0 };
	uint32_t kbo, buf, zero;
	uint64_t caps;

	ASSERT_EQ(0, nt_param(self->fd, DRM_NEURON_PARAM_CAPABILITIES, &caps));
	if (!(caps & DRM_NEURON_CAP_COMPUTE))
		SKIP(return, "no NeuronCores");
	ASSERT_EQ(0, nt_bo_create(self->fd, kmax + 4096, DRM_NEURON_BO_DEVICE, &kbo));
	ASSERT_EQ(0, nt_bo_create(self->fd, 4096, DRM_NEURON_BO_DEVICE, &buf));
	/* NOPs: zeroes, from a fresh host buffer. */
	ASSERT_EQ(0, nt_bo_create(self->fd, kmax + 4096, DRM_NEURON_BO_HOST, &zero));
	ASSERT_EQ(0, nt_syncobj_create(self->fd, &out.handle));
	ASSERT_EQ(0, nt_copy1(self->fd, zero, 0, kbo, 0, kmax + 4096, out.handle));
	ASSERT_EQ(0, nt_wait_status(self->fd, out.handle));
	for (int i = 0; i <= DRM_NEURON_MAX_BOS; i++)
		refs[i] = (struct drm_neuron_bo_ref){ buf, DRM_NEURON_ACCESS_READ };

	EXPECT_EQ(0, nt_submit_kernel(self->fd, 0, kbo, 0, sizeof(struct nisa_insn), refs,
				      DRM_NEURON_MAX_BOS, NULL, 0, &out));
	EXPECT_EQ(0, nt_wait_status(self->fd, out.handle));
	EXPECT_EQ(-EINVAL, nt_submit_kernel(self->fd, 0, kbo, 0, sizeof(struct nisa_insn),
					    refs, DRM_NEURON_MAX_BOS + 1, NULL, 0, &out));

	EXPECT_EQ(0, nt_submit_kernel(self->fd, 0, kbo, 0, kmax, NULL, 0, NULL, 0, &out));
	EXPECT_EQ(0, nt_wait_status(self->fd, out.handle));
	EXPECT_EQ(-EINVAL, nt_submit_kernel(self->fd, 0, kbo, 0,
					    kmax + sizeof(struct nisa_insn), NULL, 0,
					    NULL, 0, &out));
	EXPECT_EQ(-EINVAL, nt_submit_kernel(self->fd, 0, kbo, 0, 0, NULL, 0, NULL, 0, &out));
	EXPECT_EQ(-EINVAL, nt_submit_kernel(self->fd, 0, kbo, 0, sizeof(struct nisa_insn) + 1,
					    NULL, 0, NULL, 0, &out));
	/* Past the end of its buffer. */
	EXPECT_EQ(-EINVAL, nt_submit_kernel(self->fd, 0, kbo, 8192, kmax, NULL, 0,
					    NULL, 0, &out));
}

TEST_HARNESS_MAIN

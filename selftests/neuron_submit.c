// SPDX-License-Identifier: GPL-2.0
/*
 * The two submission paths: a job with nothing to wait for goes straight
 * to the ring, any other through the scheduler; a context's jobs on a queue
 * keep their order across both. A direct job asks for no interrupt: one is
 * armed only when somebody sleeps on its fence, and the jobs nobody waits
 * for are retired all the same.
 */
#include <math.h>

#include "kselftest_harness.h"
#include "neuron_test.h"

#define BIG	(8u << 20)

FIXTURE(sub) {
	int fd;
	uint32_t host, dev, sync_a, sync_b;
	uint8_t *ph;
};

FIXTURE_SETUP(sub)
{
	uint64_t sz;

	self->fd = nt_open();
	if (self->fd < 0)
		SKIP(return, "no neuron device (is neuron.ko loaded?)");
	NT_NEED_CARD_ALONE(self->fd);
	ASSERT_EQ(0, nt_bo_create(self->fd, 2 * BIG, DRM_NEURON_BO_HOST, &self->host));
	ASSERT_EQ(0, nt_bo_create(self->fd, BIG, DRM_NEURON_BO_DEVICE, &self->dev));
	ASSERT_EQ(0, nt_syncobj_create(self->fd, &self->sync_a));
	ASSERT_EQ(0, nt_syncobj_create(self->fd, &self->sync_b));
	self->ph = nt_bo_map(self->fd, self->host, &sz);
	ASSERT_NE(NULL, self->ph);
}

FIXTURE_TEARDOWN(sub)
{
	if (self->fd >= 0) {
		nt_fault(self->fd, 1, 0);
		close(self->fd);
	}
}

/*
 * Job A waits in the scheduler for a job held on another queue; job B, with
 * no input of its own, is submitted after A on A's queue and reads what A
 * writes: it must not overtake A by going straight to the ring.
 */
TEST_F(sub, order_holds_across_paths)
{
	struct drm_neuron_copy gate = { .src_handle = self->host, .dst_handle = self->dev,
					.size = 4096, .dst_offset = BIG - 4096 };
	struct drm_neuron_copy a = { .src_handle = self->host, .dst_handle = self->dev,
				     .size = 65536 };
	struct drm_neuron_copy b = { .src_handle = self->dev, .dst_handle = self->host,
				     .size = 65536, .dst_offset = BIG };
	struct drm_neuron_sync in = { 0 };
	uint32_t sync_g;
	int32_t status;

	if (nt_fault(self->fd, 1, 0))
		SKIP(return, "no fault-injection hook (debugfs? fault-injection=on?)");
	ASSERT_EQ(0, nt_syncobj_create(self->fd, &sync_g));
	for (int i = 0; i < 65536; i++)
		self->ph[i] = (uint8_t)(i * 13 + 1);
	memset(self->ph + BIG, 0, 65536);

	/* Old contents at the destination, which B must not see. */
	ASSERT_EQ(0, nt_submit_copies(self->fd, 0, &(struct drm_neuron_copy){
		.src_handle = self->host, .dst_handle = self->dev, .size = 65536,
		.src_offset = BIG + 65536 }, 1, NULL, 0, self->sync_a));
	ASSERT_EQ(0, nt_wait(self->fd, self->sync_a, 0, 10000, &status, NULL));
	ASSERT_EQ(0, status);

	/* The gate: a job held by queue 1 until the hook lets it go. */
	ASSERT_EQ(0, nt_fault(self->fd, 1, 1 /* NHW_FAULT_HANG */));
	ASSERT_EQ(0, nt_submit_copies(self->fd, 1, &gate, 1, NULL, 0, sync_g));
	in.handle = sync_g;
	ASSERT_EQ(0, nt_submit_copies(self->fd, 0, &a, 1, &in, 1, self->sync_a));
	ASSERT_EQ(0, nt_submit_copies(self->fd, 0, &b, 1, NULL, 0, self->sync_b));
	usleep(100 * 1000);
	/* Neither may have run: A waits for the gate, B for A. */
	ASSERT_EQ(-ETIME, nt_wait(self->fd, self->sync_b, 0, 0, &status, NULL));
	ASSERT_EQ(0, nt_fault(self->fd, 1, 0));
	ASSERT_EQ(0, nt_wait(self->fd, self->sync_b, 0, 10000, &status, NULL));
	EXPECT_EQ(0, status);
	ASSERT_EQ(0, nt_wait(self->fd, self->sync_a, 0, 10000, &status, NULL));
	EXPECT_EQ(0, status);
	EXPECT_EQ(0, memcmp(self->ph, self->ph + BIG, 65536));
	nt_syncobj_destroy(self->fd, sync_g);
}

/*
 * A job whose one unfinished input is the job last on its own queue goes
 * on the ring behind it at once (NHW_DESC_F_AFTER), not through the
 * scheduler after its completion: it runs after that job, and if that job
 * fails, it does not run and fails with the same error and site.
 */
TEST_F(sub, chained_behind_input_on_the_ring)
{
	struct drm_neuron_copy a = { .src_handle = self->host, .dst_handle = self->dev,
				     .size = 65536 };
	/* B: two copies, A's bytes back in two halves. */
	struct drm_neuron_copy b[2] = {
		{ .src_handle = self->dev, .dst_handle = self->host, .size = 32768,
		  .dst_offset = BIG },
		{ .src_handle = self->dev, .dst_handle = self->host, .size = 32768,
		  .src_offset = 32768, .dst_offset = BIG + 32768 },
	};
	struct drm_neuron_sync in = { .handle = self->sync_a };
	struct drm_neuron_submit sa = { .engine = DRM_NEURON_ENGINE_DMA,
		.copies = (uintptr_t)&a, .copy_count = 1,
		.out_sync.handle = self->sync_a, .cookie = 0x5a };
	struct drm_neuron_submit sb = { .engine = DRM_NEURON_ENGINE_DMA,
		.copies = (uintptr_t)b, .copy_count = 2, .in_syncs = (uintptr_t)&in,
		.in_sync_count = 1, .out_sync.handle = self->sync_b, .cookie = 0x5b };
	struct drm_neuron_wait w = { .handle = self->sync_b, .timeout_ns = 10000000000ll };
	int32_t status;
	int touched = 0;

	if (nt_fault(self->fd, 0, 0))
		SKIP(return, "no fault-injection hook (debugfs? fault-injection=on?)");
	if (nt_queue_inflight(self->fd, "dma0") != 0)
		SKIP(return, "no debugfs queues file, or dma0 busy");
	for (int i = 0; i < 65536; i++)
		self->ph[i] = (uint8_t)(i * 7 + 3);
	memset(self->ph + BIG, 0, 65536);

	/* A held by the hook; B, waiting for A, is on the ring beside it. */
	ASSERT_EQ(0, nt_fault(self->fd, 0, 1 /* NHW_FAULT_HANG */));
	ASSERT_EQ(0, nt_ioctl(self->fd, DRM_IOCTL_NEURON_SUBMIT, &sa));
	ASSERT_EQ(0, nt_ioctl(self->fd, DRM_IOCTL_NEURON_SUBMIT, &sb));
	EXPECT_EQ(2, nt_queue_inflight(self->fd, "dma0"));
	ASSERT_EQ(-ETIME, nt_wait(self->fd, self->sync_b, 0, 0, &status, NULL));
	ASSERT_EQ(0, nt_fault(self->fd, 0, 0));
	ASSERT_EQ(0, nt_wait(self->fd, self->sync_b, 0, 10000, &status, NULL));
	EXPECT_EQ(0, status);
	EXPECT_EQ(0, memcmp(self->ph, self->ph + BIG, 65536));

	/* Again, and A fails: neither of B's copies runs; B reports A's error. */
	memset(self->ph + BIG, 0, 65536);
	ASSERT_EQ(0, nt_fault(self->fd, 0, 1 /* NHW_FAULT_HANG */));
	ASSERT_EQ(0, nt_ioctl(self->fd, DRM_IOCTL_NEURON_SUBMIT, &sa));
	ASSERT_EQ(0, nt_ioctl(self->fd, DRM_IOCTL_NEURON_SUBMIT, &sb));
	EXPECT_EQ(2, nt_queue_inflight(self->fd, "dma0"));
	ASSERT_EQ(0, nt_fault(self->fd, 0, 2 /* NHW_FAULT_FAIL_NEXT */));
	ASSERT_EQ(0, nt_ioctl(self->fd, DRM_IOCTL_NEURON_WAIT, &w));
	EXPECT_EQ(-EIO, w.status);
	EXPECT_EQ(10, w.device_error); /* NISA_ERR_INJECTED, A's */
	EXPECT_EQ(0x5a, w.error_cookie);
	ASSERT_EQ(0, nt_wait(self->fd, self->sync_a, 0, 10000, &status, NULL));
	EXPECT_EQ(-EIO, status);
	for (int i = 0; i < 65536; i++)
		touched += self->ph[BIG + i] != 0;
	EXPECT_EQ(0, touched);

	/* The queue goes on: the next job runs. */
	ASSERT_EQ(0, nt_fault(self->fd, 0, 0));
	sb.in_sync_count = 0;
	ASSERT_EQ(0, nt_ioctl(self->fd, DRM_IOCTL_NEURON_SUBMIT, &sb));
	ASSERT_EQ(0, nt_wait(self->fd, self->sync_b, 0, 10000, &status, NULL));
	EXPECT_EQ(0, status);
}

/*
 * Small jobs waited for with WAIT complete without an interrupt; a sleeper
 * (here the generic syncobj wait, which never polls) gets one.
 */
TEST_F(sub, interrupts_only_for_sleepers)
{
	struct drm_neuron_copy small = { .src_handle = self->host,
					 .dst_handle = self->dev, .size = 4096 };
	struct drm_neuron_copy big = { .src_handle = self->host,
				       .dst_handle = self->dev, .size = BIG };
	struct drm_neuron_copy bigs[64];
	long long before = nt_irq_count(self->fd, "dma0"), after;
	int32_t status;

	ASSERT_GE(before, 0);
	for (int i = 0; i < 100; i++) {
		ASSERT_EQ(0, nt_submit_copies(self->fd, 0, &small, 1, NULL, 0,
					      self->sync_a));
		ASSERT_EQ(0, nt_wait(self->fd, self->sync_a, 0, 10000, &status, NULL));
		ASSERT_EQ(0, status);
	}
	after = nt_irq_count(self->fd, "dma0");
	/* Without interrupts on demand this would be 100. */
	EXPECT_LT(after - before, 10);

	/*
	 * A job long enough (64 copies of 8 MiB, ~0.1 s or more) that the
	 * waiter is asleep before it completes, whatever the accelerator:
	 * a job done before anyone sleeps rightly needs no interrupt.
	 */
	before = after;
	for (int i = 0; i < 64; i++)
		bigs[i] = big;
	ASSERT_EQ(0, nt_submit_copies(self->fd, 0, bigs, 64, NULL, 0, self->sync_a));
	ASSERT_EQ(0, nt_syncobj_wait(self->fd, self->sync_a, 10000));
	EXPECT_GE(nt_irq_count(self->fd, "dma0") - before, 1);
	ASSERT_EQ(0, nt_wait(self->fd, self->sync_a, 0, 0, &status, NULL));
	EXPECT_EQ(0, status);
}

/* Jobs nobody waits for are retired, and freed, all the same. */
TEST_F(sub, unwaited_jobs_are_retired)
{
	struct drm_neuron_copy c = { .src_handle = self->host,
				     .dst_handle = self->dev, .size = 4096 };
	long long jobs = nt_counter(self->fd, "jobs");
	long long done = nt_counter(self->fd, "completed");

	ASSERT_GE(jobs, 0);
	for (int i = 0; i < 50; i++)
		ASSERT_EQ(0, nt_submit_copies(self->fd, i % 2, &c, 1, NULL, 0, 0));
	for (int i = 0; i < 100 && (nt_counter(self->fd, "jobs") != jobs ||
				    nt_counter(self->fd, "completed") < done + 50); i++)
		usleep(20 * 1000);
	EXPECT_EQ(jobs, nt_counter(self->fd, "jobs"));
	EXPECT_EQ(done + 50, nt_counter(self->fd, "completed"));
}

#define GEMM	1024

/*
 * A job the scheduler ran waits on the ring behind direct jobs that, one
 * after the other, take longer than the job timeout (each well within it):
 * the queue is making progress all along, so the scheduled job is not
 * timed out. Its timeout counts from when the jobs ahead stop completing.
 */
TEST_F(sub, long_direct_work_ahead_is_not_a_hang)
{
	const uint64_t mat = (uint64_t)GEMM * GEMM * sizeof(float);
	long long timeout = nt_module_param("job_timeout_ms");
	long long resets = nt_counter(self->fd, "queue_resets");
	struct drm_neuron_bo_ref bos[3];
	struct drm_neuron_sync first = { 0 };
	struct nisa_insn *code, mm = {
		.opcode = NISA_INSN_MATMUL,
		.dst = nt_tensor(2, NISA_F32, 0, GEMM, GEMM),
		.src = { nt_tensor(0, NISA_F32, 0, GEMM, GEMM),
			 nt_tensor(1, NISA_F32, 0, GEMM, GEMM) },
	};
	uint32_t kbo, m[3], sync_s;
	double t0, one, job_ms;
	unsigned int per_job, jobs;
	uint64_t sz;
	int32_t status;

	if (timeout <= 0 || timeout > 5000)
		SKIP(return, "needs neuron.ko with job_timeout_ms <= 5000 (now %lld)", timeout);
	ASSERT_EQ(0, nt_bo_create(self->fd, 64 * sizeof(mm), DRM_NEURON_BO_DEVICE, &kbo));
	code = nt_bo_map(self->fd, kbo, &sz);
	ASSERT_NE(NULL, code);
	for (int i = 0; i < 3; i++) {
		ASSERT_EQ(0, nt_bo_create(self->fd, mat, DRM_NEURON_BO_DEVICE, &m[i]));
		bos[i] = (struct drm_neuron_bo_ref){ m[i], DRM_NEURON_ACCESS_READ |
						     DRM_NEURON_ACCESS_WRITE };
	}
	for (int i = 0; i < 64; i++)
		code[i] = mm;
	ASSERT_EQ(0, nt_syncobj_create(self->fd, &sync_s));
	first.handle = self->sync_a;

	/* How long a product takes on this machine, once warmed up. */
	for (int i = 0; i < 2; i++) {
		t0 = nt_now_ms();
		ASSERT_EQ(0, nt_submit_kernel(self->fd, 0, kbo, 0, 8 * sizeof(mm), bos, 3,
					      NULL, 0, &first));
		ASSERT_EQ(0, nt_wait(self->fd, self->sync_a, 0, 60000, &status, NULL));
		ASSERT_EQ(0, status);
		one = (nt_now_ms() - t0) / 8;
	}
	/* Jobs of about a fifth of the timeout, together one and a half. */
	per_job = (unsigned int)fmin(64, fmax(1, timeout / 5.0 / one));
	job_ms = per_job * one;
	jobs = (unsigned int)fmin(60, 1.5 * timeout / job_ms + 1);
	TH_LOG("%.1f ms per product: %u jobs of %u, %.0f ms each, timeout %lld ms",
	       one, jobs, per_job, job_ms, timeout);
	if (job_ms * (jobs - 1) <= timeout)
		SKIP(return, "the card is too fast for jobs of this size");

	/* Direct: nothing to wait for. */
	t0 = nt_now_ms();
	for (unsigned int i = 0; i < jobs; i++)
		ASSERT_EQ(0, nt_submit_kernel(self->fd, 0, kbo, 0, per_job * sizeof(mm),
					      bos, 3, NULL, 0, i ? NULL : &first));
	/* Scheduled: it waits for the first, then for the others on the ring. */
	ASSERT_EQ(0, nt_submit_kernel(self->fd, 0, kbo, 0, sizeof(mm), bos, 3,
				      &first, 1,
				      &(struct drm_neuron_sync){ .handle = sync_s }));
	ASSERT_EQ(0, nt_wait(self->fd, sync_s, 0, (int64_t)(job_ms * jobs + 30000),
			     &status, NULL));
	TH_LOG("the last job completed %.0f ms after the first was submitted",
	       nt_now_ms() - t0);
	EXPECT_EQ(0, status);
	EXPECT_EQ(resets, nt_counter(self->fd, "queue_resets"));
	nt_syncobj_destroy(self->fd, sync_s);
	munmap(code, sz);
	for (int i = 0; i < 3; i++)
		nt_bo_close(self->fd, m[i]);
	nt_bo_close(self->fd, kbo);
}

TEST_HARNESS_MAIN

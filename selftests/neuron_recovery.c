// SPDX-License-Identifier: GPL-2.0
/*
 * Recovery: a hung queue (the card's fault injection) times out, its job
 * fails with -ETIMEDOUT (and so does a job waiting for it, chained behind
 * it on the ring), the queue is reset and the other jobs queued behind it
 * still run, whether the hung job went straight to the ring (the queue's
 * watchdog catches it) or through the scheduler (its timeout does); an
 * injected job failure is reported with its device code; a process killed
 * with jobs in flight leaves no buffer or job behind.
 *
 * Needs debugfs and neuron.ko loaded with a short job_timeout_ms (the test
 * waits 15 s at most).
 */
#include <signal.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "neuron_test.h"

FIXTURE(rec) {
	int fd;
	uint32_t host, dev, sync_a, sync_b;
	uint8_t *ph;
};

FIXTURE_SETUP(rec)
{
	uint64_t sz;

	self->fd = nt_open();
	if (self->fd < 0)
		SKIP(return, "no neuron device (is neuron.ko loaded?)");
	NT_NEED_CARD_ALONE(self->fd);
	if (nt_fault(self->fd, 0, 0))
		SKIP(return, "no fault-injection hook (debugfs mounted? card with fault-injection=on?)");
	ASSERT_EQ(0, nt_bo_create(self->fd, 1 << 20, DRM_NEURON_BO_HOST, &self->host));
	ASSERT_EQ(0, nt_bo_create(self->fd, 1 << 20, DRM_NEURON_BO_DEVICE, &self->dev));
	ASSERT_EQ(0, nt_syncobj_create(self->fd, &self->sync_a));
	ASSERT_EQ(0, nt_syncobj_create(self->fd, &self->sync_b));
	self->ph = nt_bo_map(self->fd, self->host, &sz);
	ASSERT_NE(NULL, self->ph);
}

FIXTURE_TEARDOWN(rec)
{
	if (self->fd >= 0) {
		nt_fault(self->fd, 0, 0);
		close(self->fd);
	}
}

TEST_F(rec, hang_times_out_and_queue_recovers)
{
	struct drm_neuron_copy h2d = { .src_handle = self->host, .dst_handle = self->dev,
				       .size = 4096 };
	struct drm_neuron_copy d2h = { .src_handle = self->dev, .dst_handle = self->host,
				       .size = 4096, .dst_offset = 8192 };
	struct drm_neuron_copy d2h_after = { .src_handle = self->dev,
					     .dst_handle = self->host, .size = 4096,
					     .dst_offset = 16384 };
	long long resets = nt_counter(self->fd, "queue_resets");
	struct drm_neuron_sync in = { .handle = self->sync_a };
	uint32_t sync_c;
	int32_t status;
	int touched = 0;

	memset(self->ph, 0x77, 4096);
	memset(self->ph + 8192, 0, 4096);
	memset(self->ph + 16384, 0, 4096);
	ASSERT_EQ(0, nt_syncobj_create(self->fd, &sync_c));
	ASSERT_EQ(0, nt_fault(self->fd, 0, 1 /* NHW_FAULT_HANG */));
	ASSERT_EQ(0, nt_submit_copies(self->fd, 0, &h2d, 1, NULL, 0, self->sync_a));
	/* Waits for the first: on the ring right behind it (chained). */
	ASSERT_EQ(0, nt_submit_copies(self->fd, 0, &d2h_after, 1, &in, 1, sync_c));
	ASSERT_EQ(0, nt_submit_copies(self->fd, 0, &h2d, 1, NULL, 0, self->sync_b));
	/* The first job hangs, and is failed by the timeout. */
	ASSERT_EQ(0, nt_wait(self->fd, self->sync_a, 0, 15000, &status, NULL));
	EXPECT_EQ(-ETIMEDOUT, status);
	/* The one waiting for it does not run: its input's error. */
	ASSERT_EQ(0, nt_wait(self->fd, sync_c, 0, 15000, &status, NULL));
	EXPECT_EQ(-ETIMEDOUT, status);
	for (int i = 0; i < 4096; i++)
		touched += self->ph[16384 + i] != 0;
	EXPECT_EQ(0, touched);
	nt_syncobj_destroy(self->fd, sync_c);
	/* The one behind it ran after the reset. */
	ASSERT_EQ(0, nt_wait(self->fd, self->sync_b, 0, 15000, &status, NULL));
	EXPECT_EQ(0, status);
	EXPECT_EQ(resets + 1, nt_counter(self->fd, "queue_resets"));
	/* And the queue works as before. */
	ASSERT_EQ(0, nt_submit_copies(self->fd, 0, &d2h, 1, NULL, 0, self->sync_a));
	ASSERT_EQ(0, nt_wait(self->fd, self->sync_a, 0, 10000, &status, NULL));
	EXPECT_EQ(0, status);
	EXPECT_EQ(0, memcmp(self->ph, self->ph + 8192, 4096));
}

/*
 * The same through the scheduler: the hung job waited for another queue's
 * job (held by the hook until released), so the scheduler ran it, and the
 * scheduler's timeout catches it; the job behind it still runs.
 */
TEST_F(rec, hang_of_scheduled_job_times_out)
{
	struct drm_neuron_copy c = { .src_handle = self->host, .dst_handle = self->dev,
				     .size = 4096 };
	long long resets = nt_counter(self->fd, "queue_resets");
	struct drm_neuron_sync in = { 0 };
	uint32_t sync_g;
	int32_t status;

	ASSERT_EQ(0, nt_syncobj_create(self->fd, &sync_g));
	ASSERT_EQ(0, nt_fault(self->fd, 1, 1 /* NHW_FAULT_HANG */));
	ASSERT_EQ(0, nt_submit_copies(self->fd, 1, &c, 1, NULL, 0, sync_g));
	in.handle = sync_g;
	ASSERT_EQ(0, nt_submit_copies(self->fd, 0, &c, 1, &in, 1, self->sync_a));
	ASSERT_EQ(0, nt_submit_copies(self->fd, 0, &c, 1, NULL, 0, self->sync_b));
	ASSERT_EQ(0, nt_fault(self->fd, 0, 1 /* NHW_FAULT_HANG */));
	ASSERT_EQ(0, nt_fault(self->fd, 1, 0));
	ASSERT_EQ(0, nt_wait(self->fd, sync_g, 0, 10000, &status, NULL));
	EXPECT_EQ(0, status);
	ASSERT_EQ(0, nt_wait(self->fd, self->sync_a, 0, 15000, &status, NULL));
	EXPECT_EQ(-ETIMEDOUT, status);
	ASSERT_EQ(0, nt_wait(self->fd, self->sync_b, 0, 15000, &status, NULL));
	EXPECT_EQ(0, status);
	EXPECT_EQ(resets + 1, nt_counter(self->fd, "queue_resets"));
	nt_syncobj_destroy(self->fd, sync_g);
}

/* A queue that does not come back from its reset: the device is reset. */
TEST_F(rec, stuck_queue_escalates_to_device_reset)
{
	struct drm_neuron_copy c = { .src_handle = self->host, .dst_handle = self->dev,
				     .size = 4096 };
	long long dresets = nt_counter(self->fd, "device_resets");
	int32_t status;

	/* Work on another queue, finished before the trouble: untouched. */
	ASSERT_EQ(0, nt_submit_copies(self->fd, 1, &c, 1, NULL, 0, self->sync_b));
	ASSERT_EQ(0, nt_wait(self->fd, self->sync_b, 0, 10000, &status, NULL));
	ASSERT_EQ(0, status);
	ASSERT_EQ(0, nt_fault(self->fd, 0, 1 | 4 /* NHW_FAULT_HANG | NHW_FAULT_STUCK */));
	ASSERT_EQ(0, nt_submit_copies(self->fd, 0, &c, 1, NULL, 0, self->sync_a));
	ASSERT_EQ(0, nt_wait(self->fd, self->sync_a, 0, 15000, &status, NULL));
	EXPECT_EQ(-ETIMEDOUT, status);
	EXPECT_EQ(dresets + 1, nt_counter(self->fd, "device_resets"));
	/* Every queue works again. */
	for (unsigned int q = 0; q < 2; q++) {
		ASSERT_EQ(0, nt_submit_copies(self->fd, q, &c, 1, NULL, 0, self->sync_a));
		ASSERT_EQ(0, nt_wait(self->fd, self->sync_a, 0, 10000, &status, NULL));
		EXPECT_EQ(0, status);
	}
}

TEST_F(rec, injected_failure_is_reported)
{
	struct drm_neuron_copy c = { .src_handle = self->host, .dst_handle = self->dev,
				     .size = 4096 };
	uint32_t code;
	int32_t status;

	ASSERT_EQ(0, nt_fault(self->fd, 1, 2 /* NHW_FAULT_FAIL_NEXT */));
	ASSERT_EQ(0, nt_submit_copies(self->fd, 1, &c, 1, NULL, 0, self->sync_a));
	ASSERT_EQ(0, nt_wait(self->fd, self->sync_a, 0, 10000, &status, &code));
	EXPECT_EQ(-EIO, status);
	EXPECT_EQ(10, code); /* NISA_ERR_INJECTED */
	ASSERT_EQ(0, nt_submit_copies(self->fd, 1, &c, 1, NULL, 0, self->sync_a));
	ASSERT_EQ(0, nt_wait(self->fd, self->sync_a, 0, 10000, &status, &code));
	EXPECT_EQ(0, status);
	EXPECT_EQ(0, code);
	EXPECT_EQ(-EINVAL, nt_fault(self->fd, 99, 1));
}

/* A child queues many jobs and is killed; everything it had goes away. */
TEST_F(rec, killed_process_leaks_nothing)
{
	long long bos, jobs;
	int wstatus;
	pid_t pid;

	/* The jobs of the tests before (and their buffers) are freed lazily. */
	nt_counter_settle(self->fd, "jobs", 0, 5000);
	bos = nt_counter(self->fd, "bos");
	jobs = nt_counter(self->fd, "jobs");
	ASSERT_GE(bos, 0);
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		int fd = nt_open();
		uint32_t a, b;
		struct drm_neuron_copy c = { .size = 8 << 20 };

		if (fd < 0 || nt_bo_create(fd, 8 << 20, DRM_NEURON_BO_HOST, &a) ||
		    nt_bo_create(fd, 8 << 20, DRM_NEURON_BO_DEVICE, &b))
			_exit(1);
		c.src_handle = a;
		c.dst_handle = b;
		for (int i = 0; i < 200; i++)
			nt_submit_copies(fd, i % 2, &c, 1, NULL, 0, 0);
		pause(); /* killed with the jobs in flight */
		_exit(2);
	}
	usleep(300 * 1000);
	kill(pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, &wstatus, 0));
	EXPECT_TRUE(WIFSIGNALED(wstatus));
	for (int i = 0; i < 300 && (nt_counter(self->fd, "bos") != bos ||
				    nt_counter(self->fd, "jobs") != jobs); i++)
		usleep(50 * 1000);
	EXPECT_EQ(bos, nt_counter(self->fd, "bos"));
	EXPECT_EQ(jobs, nt_counter(self->fd, "jobs"));
}

TEST_HARNESS_MAIN

// SPDX-License-Identifier: GPL-2.0
/*
 * neuron.ko compute jobs: kernels of a few instructions checked against the
 * CPU, the bad inputs of a compute SUBMIT, device errors reported through
 * WAIT, error propagation along syncobj chains, and a chain that crosses
 * the DMA and NeuronCore queues; where an error happened (instruction,
 * job) reported through WAIT.
 */
#include <math.h>
#include <stddef.h>

#include "kselftest_harness.h"
#include "neuron_test.h"

#define N 256

FIXTURE(core) {
	int fd;
	uint32_t kbo, a, b, c, host, timeline;
	struct nisa_insn *code;
	float *pa, *pb, *pc;
	uint64_t ksize_map;
};

FIXTURE_SETUP(core)
{
	uint64_t sz;

	self->fd = nt_open();
	if (self->fd < 0)
		SKIP(return, "no neuron device (is neuron.ko loaded?)");
	ASSERT_EQ(0, nt_bo_create(self->fd, 1 << 16, DRM_NEURON_BO_DEVICE, &self->kbo));
	ASSERT_EQ(0, nt_bo_create(self->fd, N * N * 4, DRM_NEURON_BO_DEVICE, &self->a));
	ASSERT_EQ(0, nt_bo_create(self->fd, N * N * 4, DRM_NEURON_BO_DEVICE, &self->b));
	ASSERT_EQ(0, nt_bo_create(self->fd, N * N * 4, DRM_NEURON_BO_DEVICE, &self->c));
	ASSERT_EQ(0, nt_bo_create(self->fd, N * N * 4, DRM_NEURON_BO_HOST, &self->host));
	ASSERT_EQ(0, nt_syncobj_create(self->fd, &self->timeline));
	self->code = nt_bo_map(self->fd, self->kbo, &self->ksize_map);
	self->pa = nt_bo_map(self->fd, self->a, &sz);
	self->pb = nt_bo_map(self->fd, self->b, &sz);
	self->pc = nt_bo_map(self->fd, self->c, &sz);
	ASSERT_NE(NULL, self->code);
	ASSERT_NE(NULL, self->pa);
	for (int i = 0; i < N * N; i++) {
		self->pa[i] = (float)((i * 37) % 101) / 50.0f - 1.0f;
		self->pb[i] = (float)((i * 53) % 89) / 44.0f - 1.0f;
	}
}

FIXTURE_TEARDOWN(core)
{
	if (self->fd >= 0)
		close(self->fd);
}

/* Run @n instructions with slots a (r), b (r), c (rw); wait; return status. */
static int run(struct __test_metadata *_metadata, FIXTURE_DATA(core) *self,
	       const struct nisa_insn *insns, unsigned int n, uint32_t *dev_err)
{
	struct drm_neuron_bo_ref bos[3] = {
		{ self->a, DRM_NEURON_ACCESS_READ }, { self->b, DRM_NEURON_ACCESS_READ },
		{ self->c, DRM_NEURON_ACCESS_READ | DRM_NEURON_ACCESS_WRITE },
	};
	struct drm_neuron_sync out = { .handle = self->timeline };
	uint32_t sync;
	int32_t status;

	memcpy(self->code, insns, n * sizeof(*insns));
	EXPECT_EQ(0, nt_syncobj_create(self->fd, &sync));
	out.handle = sync;
	EXPECT_EQ(0, nt_submit_kernel(self->fd, 0, self->kbo, 0, n * sizeof(*insns),
				      bos, 3, NULL, 0, &out));
	EXPECT_EQ(0, nt_wait(self->fd, sync, 0, 10000, &status, dev_err));
	nt_syncobj_destroy(self->fd, sync);
	return status;
}

TEST_F(core, elementwise_and_matmul)
{
	struct nisa_insn k[2] = {
		{ .opcode = NISA_INSN_BINARY, .subop = NISA_BIN_ADD, .alpha = nt_f64(2.0),
		  .dst = nt_tensor(2, NISA_F32, 0, N, 0),
		  .src = { nt_tensor(0, NISA_F32, 0, N, 0), nt_tensor(1, NISA_F32, 0, N, 0) } },
		{ .opcode = NISA_INSN_MATMUL,
		  .dst = nt_tensor(2, NISA_F32, 4 * N, 16, 16),
		  .src = { nt_tensor(0, NISA_F32, 0, 16, 16), nt_tensor(1, NISA_F32, 0, 16, 16) } },
	};

	ASSERT_EQ(0, run(_metadata, self, k, 2, NULL));
	for (int i = 0; i < N; i++)
		ASSERT_EQ((float)((double)self->pa[i] + 2.0 * self->pb[i]), self->pc[i]);
	for (int i = 0; i < 16; i++)
		for (int j = 0; j < 16; j++) {
			double s = 0;

			for (int x = 0; x < 16; x++)
				s += (double)self->pa[i * 16 + x] * self->pb[x * 16 + j];
			ASSERT_LT(fabs(self->pc[N + i * 16 + j] - s), 1e-4 * fmax(1, fabs(s)));
		}
}

TEST_F(core, submit_bad)
{
	struct drm_neuron_bo_ref ok = { self->a, DRM_NEURON_ACCESS_READ };
	struct drm_neuron_bo_ref bad_access = { self->a, 4 };
	struct drm_neuron_bo_ref host = { self->host, DRM_NEURON_ACCESS_READ };
	struct drm_neuron_bo_ref nobo = { 0xdead, DRM_NEURON_ACCESS_READ };
	struct drm_neuron_bo_ref many[DRM_NEURON_MAX_BOS + 1];
	struct drm_neuron_submit s;
	size_t isz = sizeof(struct nisa_insn);
	uint64_t ncores;

	ASSERT_EQ(0, nt_param(self->fd, DRM_NEURON_PARAM_NUM_CORES, &ncores));
	for (int i = 0; i <= DRM_NEURON_MAX_BOS; i++)
		many[i] = ok;
	EXPECT_EQ(-EINVAL, nt_submit_kernel(self->fd, 0, self->kbo, 0, isz + 1, &ok, 1, NULL, 0, NULL));
	EXPECT_EQ(-EINVAL, nt_submit_kernel(self->fd, 0, self->kbo, 0, 0, &ok, 1, NULL, 0, NULL));
	EXPECT_EQ(-EINVAL, nt_submit_kernel(self->fd, 0, self->kbo, 1 << 16, isz, &ok, 1, NULL, 0, NULL));
	EXPECT_EQ(-EINVAL, nt_submit_kernel(self->fd, 0, self->kbo, ~0ull - 8, isz, &ok, 1, NULL, 0, NULL));
	EXPECT_EQ(-EINVAL, nt_submit_kernel(self->fd, (uint32_t)ncores, self->kbo, 0, isz, &ok, 1, NULL, 0, NULL));
	EXPECT_EQ(-EINVAL, nt_submit_kernel(self->fd, 0, self->kbo, 0, isz, &bad_access, 1, NULL, 0, NULL));
	EXPECT_EQ(-EINVAL, nt_submit_kernel(self->fd, 0, self->kbo, 0, isz, &host, 1, NULL, 0, NULL));
	EXPECT_EQ(-EINVAL, nt_submit_kernel(self->fd, 0, self->host, 0, isz, &ok, 1, NULL, 0, NULL));
	EXPECT_EQ(-ENOENT, nt_submit_kernel(self->fd, 0, self->kbo, 0, isz, &nobo, 1, NULL, 0, NULL));
	EXPECT_EQ(-ENOENT, nt_submit_kernel(self->fd, 0, 0xdead, 0, isz, &ok, 1, NULL, 0, NULL));
	EXPECT_EQ(-EINVAL, nt_submit_kernel(self->fd, 0, self->kbo, 0, isz, many,
					    DRM_NEURON_MAX_BOS + 1, NULL, 0, NULL));
	EXPECT_EQ(-EFAULT, nt_submit_kernel(self->fd, 0, self->kbo, 0, isz, (void *)8, 1, NULL, 0, NULL));
	/* Copies on a compute job, kernel fields on a DMA job. */
	s = (struct drm_neuron_submit){ .engine = DRM_NEURON_ENGINE_CORE, .kernel_handle = self->kbo,
		.kernel_size = isz, .copy_count = 1 };
	EXPECT_EQ(-EINVAL, nt_ioctl(self->fd, DRM_IOCTL_NEURON_SUBMIT, &s));
	s = (struct drm_neuron_submit){ .engine = DRM_NEURON_ENGINE_DMA, .copy_count = 1,
		.copies = 8, .kernel_size = isz };
	EXPECT_EQ(-EINVAL, nt_ioctl(self->fd, DRM_IOCTL_NEURON_SUBMIT, &s));
	/* WAIT's own bad input. */
	{
		struct drm_neuron_wait w = { .handle = self->timeline, .flags = 1 };

		EXPECT_EQ(-EINVAL, nt_ioctl(self->fd, DRM_IOCTL_NEURON_WAIT, &w));
		w = (struct drm_neuron_wait){ .handle = 0xdead };
		EXPECT_EQ(-ENOENT, nt_ioctl(self->fd, DRM_IOCTL_NEURON_WAIT, &w));
	}
}

/* The device's verdict on a bad instruction reaches WAIT, with its code. */
TEST_F(core, device_errors)
{
	struct nisa_insn bad_slot = { .opcode = NISA_INSN_FILL,
				     .dst = nt_tensor(5, NISA_F32, 0, 4, 0) };
	struct nisa_insn past_end = { .opcode = NISA_INSN_FILL,
				     .dst = nt_tensor(2, NISA_F32, N * N * 4 - 4, 4, 0) };
	struct nisa_insn ro = { .opcode = NISA_INSN_FILL, .dst = nt_tensor(0, NISA_F32, 0, 4, 0) };
	struct nisa_insn nop = { .opcode = NISA_INSN_NOP };
	uint32_t code;

	EXPECT_EQ(-EIO, run(_metadata, self, &bad_slot, 1, &code));
	EXPECT_EQ(6, code); /* NISA_ERR_BAD_SLOT */
	EXPECT_EQ(-EIO, run(_metadata, self, &past_end, 1, &code));
	EXPECT_EQ(8, code); /* NISA_ERR_SLOT_RANGE */
	EXPECT_EQ(-EIO, run(_metadata, self, &ro, 1, &code));
	EXPECT_EQ(7, code); /* NISA_ERR_ACCESS */
	EXPECT_EQ(0, run(_metadata, self, &nop, 1, &code));
	EXPECT_EQ(0, code);
}

/*
 * host -> device (DMA), add on core 0, device -> host (DMA): three queues,
 * chained by timeline points; then a failed job's error passes down a chain.
 */
TEST_F(core, chains_across_queues)
{
	struct drm_neuron_bo_ref bos[2] = {
		{ self->a, DRM_NEURON_ACCESS_READ | DRM_NEURON_ACCESS_WRITE },
		{ self->b, DRM_NEURON_ACCESS_READ },
	};
	struct nisa_insn k = { .opcode = NISA_INSN_BINARY, .subop = NISA_BIN_MUL,
			      .dst = nt_tensor(0, NISA_F32, 0, N, 0),
			      .src = { nt_tensor(0, NISA_F32, 0, N, 0), nt_tensor(1, NISA_F32, 0, N, 0) } };
	struct nisa_insn bad = { .opcode = 200 };
	struct drm_neuron_copy in = { .src_handle = self->host, .dst_handle = self->a, .size = N * 4 };
	struct drm_neuron_copy out = { .src_handle = self->a, .dst_handle = self->host, .size = N * 4 };
	struct drm_neuron_sync p[4];
	uint64_t hsz;
	float *h = nt_bo_map(self->fd, self->host, &hsz), want[N];
	int32_t status;
	uint32_t code;

	ASSERT_NE(NULL, h);
	for (int i = 0; i < N; i++) {
		h[i] = (float)i;
		want[i] = (float)i * self->pb[i];
	}
	for (int i = 0; i < 4; i++)
		p[i] = (struct drm_neuron_sync){ .handle = self->timeline, .point = 100 + i };
	memcpy(self->code, &k, sizeof(k));
	memcpy(self->code + 1, &bad, sizeof(bad));
	{
		struct drm_neuron_submit s = { .engine = DRM_NEURON_ENGINE_DMA, .index = 1,
			.copies = (uintptr_t)&in, .copy_count = 1, .out_sync = p[0] };

		ASSERT_EQ(0, nt_ioctl(self->fd, DRM_IOCTL_NEURON_SUBMIT, &s));
	}
	ASSERT_EQ(0, nt_submit_kernel(self->fd, 0, self->kbo, 0, sizeof(k), bos, 2,
				      &p[0], 1, &p[1]));
	{
		struct drm_neuron_submit s = { .engine = DRM_NEURON_ENGINE_DMA, .index = 0,
			.copies = (uintptr_t)&out, .copy_count = 1, .in_syncs = (uintptr_t)&p[1],
			.in_sync_count = 1, .out_sync = p[2] };

		ASSERT_EQ(0, nt_ioctl(self->fd, DRM_IOCTL_NEURON_SUBMIT, &s));
	}
	ASSERT_EQ(0, nt_wait(self->fd, self->timeline, 102, 10000, &status, NULL));
	ASSERT_EQ(0, status);
	ASSERT_EQ(0, memcmp(h, want, sizeof(want)));

	/* A failing kernel, then a copy that depends on it: it fails too. */
	p[0].point = 200;
	p[1].point = 201;
	ASSERT_EQ(0, nt_submit_kernel(self->fd, 0, self->kbo, sizeof(k), sizeof(bad), bos, 2,
				      NULL, 0, &p[0]));
	{
		struct drm_neuron_submit s = { .engine = DRM_NEURON_ENGINE_DMA, .index = 0,
			.copies = (uintptr_t)&out, .copy_count = 1, .in_syncs = (uintptr_t)&p[0],
			.in_sync_count = 1, .out_sync = p[1] };

		ASSERT_EQ(0, nt_ioctl(self->fd, DRM_IOCTL_NEURON_SUBMIT, &s));
	}
	ASSERT_EQ(0, nt_wait(self->fd, self->timeline, 201, 10000, &status, &code));
	EXPECT_EQ(-EIO, status);
	EXPECT_EQ(9, code); /* NISA_ERR_BAD_INSN, passed on from the kernel */
}

/*
 * The instruction that failed and the job it failed in reach WAIT: for the
 * job itself and for a job its failure passed on to. The 32-byte WAIT and
 * the SUBMIT without a cookie of driver version 0.1 still work.
 */
TEST_F(core, error_site)
{
	/* The third instruction has an opcode the card does not know. */
	struct nisa_insn k[4] = {
		{ .opcode = NISA_INSN_NOP }, { .opcode = NISA_INSN_NOP },
		{ .opcode = 200 }, { .opcode = NISA_INSN_NOP },
	};
	struct drm_neuron_bo_ref bos[1] = { { self->c, DRM_NEURON_ACCESS_WRITE } };
	struct drm_neuron_copy out = { .src_handle = self->a, .dst_handle = self->host, .size = 4 };
	/*
	 * The kernel signals a binary syncobj: a timeline point that signalled
	 * before a later one was added may be looked up as a stub fence,
	 * which has no error.
	 */
	struct drm_neuron_sync p0 = { 0 };
	struct drm_neuron_sync p1 = { .handle = self->timeline, .point = 301 };
	struct drm_neuron_submit s = {
		.engine = DRM_NEURON_ENGINE_CORE, .kernel_handle = self->kbo,
		.kernel_size = sizeof(k), .bos = (uintptr_t)bos, .bo_count = 1,
		.cookie = 0x1234abcd5678ull,
	};
	struct drm_neuron_wait w = { .timeout_ns = 10000000000ll };
	unsigned long wait_v1 = _IOC(_IOC_READ | _IOC_WRITE, DRM_IOCTL_BASE,
				     DRM_COMMAND_BASE + DRM_NEURON_WAIT, 32);
	unsigned long submit_v1 = _IOC(_IOC_WRITE, DRM_IOCTL_BASE,
				       DRM_COMMAND_BASE + DRM_NEURON_SUBMIT,
				       offsetof(struct drm_neuron_submit, cookie));

	ASSERT_EQ(48, sizeof(struct drm_neuron_wait));
	ASSERT_EQ(0, nt_syncobj_create(self->fd, &p0.handle));
	s.out_sync = p0;
	w.handle = p0.handle;
	memcpy(self->code, k, sizeof(k));
	ASSERT_EQ(0, nt_ioctl(self->fd, DRM_IOCTL_NEURON_SUBMIT, &s));
	{
		struct drm_neuron_submit d = { .engine = DRM_NEURON_ENGINE_DMA,
			.copies = (uintptr_t)&out, .copy_count = 1, .in_syncs = (uintptr_t)&p0,
			.in_sync_count = 1, .out_sync = p1, .cookie = 77 };

		ASSERT_EQ(0, nt_ioctl(self->fd, DRM_IOCTL_NEURON_SUBMIT, &d));
	}
	ASSERT_EQ(0, nt_ioctl(self->fd, DRM_IOCTL_NEURON_WAIT, &w));
	EXPECT_EQ(-EIO, w.status);
	EXPECT_EQ(9, w.device_error); /* NISA_ERR_BAD_INSN */
	EXPECT_EQ(2, w.error_insn);
	EXPECT_EQ(0x1234abcd5678ull, w.error_cookie);
	nt_syncobj_destroy(self->fd, p0.handle);
	/* The copy did not run: the kernel's failure, and its site, passed on. */
	w.handle = self->timeline;
	w.point = 301;
	ASSERT_EQ(0, nt_ioctl(self->fd, DRM_IOCTL_NEURON_WAIT, &w));
	EXPECT_EQ(-EIO, w.status);
	EXPECT_EQ(9, w.device_error);
	EXPECT_EQ(2, w.error_insn);
	EXPECT_EQ(0x1234abcd5678ull, w.error_cookie);

	/* Version 0.1's structs: the SUBMIT has cookie 0, WAIT writes 32 bytes. */
	s.out_sync = (struct drm_neuron_sync){ .handle = self->timeline, .point = 302 };
	s.cookie = 0x5555;
	ASSERT_EQ(0, nt_ioctl(self->fd, submit_v1, &s));
	memset(&w, 0xa5, sizeof(w));
	w = (struct drm_neuron_wait){ .handle = self->timeline, .point = 302,
				      .timeout_ns = 10000000000ll,
				      .error_insn = 0xa5a5a5a5, .pad = 0xa5a5a5a5,
				      .error_cookie = 0xa5a5a5a5a5a5a5a5ull };
	ASSERT_EQ(0, nt_ioctl(self->fd, wait_v1, &w));
	EXPECT_EQ(-EIO, w.status);
	EXPECT_EQ(9, w.device_error);
	EXPECT_EQ(0xa5a5a5a5, w.error_insn);
	EXPECT_EQ(0xa5a5a5a5a5a5a5a5ull, w.error_cookie);
	ASSERT_EQ(0, nt_ioctl(self->fd, DRM_IOCTL_NEURON_WAIT, &w));
	EXPECT_EQ(2, w.error_insn);
	EXPECT_EQ(0, w.error_cookie);

	/* Success: no site. */
	k[2].opcode = NISA_INSN_NOP;
	memcpy(self->code, k, sizeof(k));
	s.out_sync.point = 303;
	s.cookie = 9;
	ASSERT_EQ(0, nt_ioctl(self->fd, DRM_IOCTL_NEURON_SUBMIT, &s));
	w.point = 303;
	ASSERT_EQ(0, nt_ioctl(self->fd, DRM_IOCTL_NEURON_WAIT, &w));
	EXPECT_EQ(0, w.status);
	EXPECT_EQ(0, w.device_error);
	EXPECT_EQ(DRM_NEURON_NO_INSN, w.error_insn);
	EXPECT_EQ(0, w.error_cookie);
	EXPECT_EQ(0, w.pad);

	/* An error of no instruction (the card's fault hook): the job, no index. */
	{
		uint64_t ndma;
		int ret;

		ASSERT_EQ(0, nt_param(self->fd, DRM_NEURON_PARAM_NUM_DMA_QUEUES, &ndma));
		ret = nt_fault(self->fd, (unsigned int)ndma, 2 /* NHW_FAULT_FAIL_NEXT */);
		if (ret == -EOPNOTSUPP || ret == -ENOENT)
			SKIP(return, "no fault injection (%d)", ret);
		ASSERT_EQ(0, ret);
	}
	s.out_sync.point = 304;
	ASSERT_EQ(0, nt_ioctl(self->fd, DRM_IOCTL_NEURON_SUBMIT, &s));
	w.point = 304;
	ASSERT_EQ(0, nt_ioctl(self->fd, DRM_IOCTL_NEURON_WAIT, &w));
	EXPECT_EQ(-EIO, w.status);
	EXPECT_EQ(10, w.device_error); /* NISA_ERR_INJECTED */
	EXPECT_EQ(DRM_NEURON_NO_INSN, w.error_insn);
	EXPECT_EQ(9, w.error_cookie);
}

TEST_HARNESS_MAIN

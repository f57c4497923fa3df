// SPDX-License-Identifier: GPL-2.0
/*
 * Concurrency: 8 processes x 4 threads, each thread running its own
 * host -> device -> kernel -> host pipelines on every queue, every result
 * checked.
 */
#include <pthread.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "neuron_test.h"

#define PROCS 8
#define THREADS 4
#define ITERS 12
#define ELEMS 4096

struct worker {
	int fd;
	int id;
	uint32_t ndma, ncores;
	int failures;
};

static int one_round(struct worker *w, uint32_t host, uint32_t dev, uint32_t kbo,
		     float *ph, struct nisa_insn *code, int iter)
{
	struct drm_neuron_copy in = { .src_handle = host, .dst_handle = dev,
				      .size = ELEMS * 4 };
	struct drm_neuron_copy out = { .src_handle = dev, .dst_handle = host,
				       .size = ELEMS * 4, .dst_offset = ELEMS * 4 };
	struct drm_neuron_bo_ref bo = { dev, DRM_NEURON_ACCESS_READ | DRM_NEURON_ACCESS_WRITE };
	struct nisa_insn k = { .opcode = NISA_INSN_BINARY, .subop = NISA_BIN_MUL,
			      .flags = NISA_IF_SCALAR, .scalar = nt_f64(3.0),
			      .dst = nt_tensor(0, NISA_F32, 0, ELEMS, 0),
			      .src = { nt_tensor(0, NISA_F32, 0, ELEMS, 0) } };
	struct drm_neuron_sync p[3];
	uint32_t tl;
	int32_t status;
	int bad = 0;

	if (nt_syncobj_create(w->fd, &tl))
		return 1;
	for (int i = 0; i < 3; i++)
		p[i] = (struct drm_neuron_sync){ .handle = tl, .point = i + 1 };
	for (int i = 0; i < ELEMS; i++)
		ph[i] = (float)(w->id * 100000 + iter * 1000 + i % 1000);
	*code = k;
	{
		struct drm_neuron_submit s = { .engine = DRM_NEURON_ENGINE_DMA,
			.index = (w->id + iter) % w->ndma, .copies = (uintptr_t)&in,
			.copy_count = 1, .out_sync = p[0] };

		bad |= nt_ioctl(w->fd, DRM_IOCTL_NEURON_SUBMIT, &s);
	}
	bad |= nt_submit_kernel(w->fd, (w->id + iter) % w->ncores, kbo, 0, sizeof(k), &bo, 1,
				&p[0], 1, &p[1]);
	{
		struct drm_neuron_submit s = { .engine = DRM_NEURON_ENGINE_DMA,
			.index = (w->id + iter + 1) % w->ndma, .copies = (uintptr_t)&out,
			.copy_count = 1, .in_syncs = (uintptr_t)&p[1], .in_sync_count = 1,
			.out_sync = p[2] };

		bad |= nt_ioctl(w->fd, DRM_IOCTL_NEURON_SUBMIT, &s);
	}
	bad |= nt_wait(w->fd, tl, 3, 60000, &status, NULL) || status;
	for (int i = 0; i < ELEMS && !bad; i++)
		bad = ph[ELEMS + i] != ph[i] * 3;
	nt_syncobj_destroy(w->fd, tl);
	return bad;
}

static void *worker_thread(void *arg)
{
	struct worker *w = arg;
	uint32_t host, dev, kbo;
	uint64_t sz;
	float *ph;
	struct nisa_insn *code;

	if (nt_bo_create(w->fd, 2 * ELEMS * 4, DRM_NEURON_BO_HOST, &host) ||
	    nt_bo_create(w->fd, ELEMS * 4, DRM_NEURON_BO_DEVICE, &dev) ||
	    nt_bo_create(w->fd, 4096, DRM_NEURON_BO_DEVICE, &kbo)) {
		w->failures++;
		return NULL;
	}
	ph = nt_bo_map(w->fd, host, &sz);
	code = nt_bo_map(w->fd, kbo, &sz);
	if (!ph || !code) {
		w->failures++;
		return NULL;
	}
	for (int it = 0; it < ITERS; it++)
		w->failures += one_round(w, host, dev, kbo, ph, code, it);
	return NULL;
}

static int child(int proc)
{
	struct worker w[THREADS];
	pthread_t th[THREADS];
	uint64_t ndma, ncores;
	int fd = nt_open(), failures = 0;

	if (fd < 0 || nt_param(fd, DRM_NEURON_PARAM_NUM_DMA_QUEUES, &ndma) ||
	    nt_param(fd, DRM_NEURON_PARAM_NUM_CORES, &ncores))
		return 1;
	for (int t = 0; t < THREADS; t++) {
		w[t] = (struct worker){ .fd = fd, .id = proc * THREADS + t,
					.ndma = (uint32_t)ndma, .ncores = (uint32_t)ncores };
		pthread_create(&th[t], NULL, worker_thread, &w[t]);
	}
	for (int t = 0; t < THREADS; t++) {
		pthread_join(th[t], NULL);
		failures += w[t].failures;
	}
	close(fd);
	return failures ? 1 : 0;
}

TEST(processes_and_threads)
{
	pid_t pids[PROCS];
	int fd = nt_open(), st;

	if (fd < 0)
		SKIP(return, "no neuron device (is neuron.ko loaded?)");
	close(fd);
	for (int p = 0; p < PROCS; p++) {
		pids[p] = fork();
		ASSERT_GE(pids[p], 0);
		if (pids[p] == 0)
			_exit(child(p));
	}
	for (int p = 0; p < PROCS; p++) {
		ASSERT_EQ(pids[p], waitpid(pids[p], &st, 0));
		EXPECT_TRUE(WIFEXITED(st));
		EXPECT_EQ(0, WEXITSTATUS(st));
	}
}

TEST_HARNESS_MAIN

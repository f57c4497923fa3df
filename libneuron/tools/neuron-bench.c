// SPDX-License-Identifier: MIT
/*
 * neuron-bench: measure the card through libneuron -- ioctl and job round
 * trips, jobs per second, DMA bandwidth by size and direction, copies from
 * ordinary user memory against memcpy, GEMM, small operations batched or
 * synchronised one by one, and the card's engine by its own clock: what an
 * instruction costs before its first element and per element. A human
 * table, or --json (name -> number).
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <drm/drm.h>

#include <drm/neuron_accel.h>
#include "libneuron.h"

static int json, quick;
static int nfig;

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void fig(const char *name, double value, const char *unit, const char *what)
{
	if (json)
		printf("%s\n  \"%s\": %.6g", nfig ? "," : "{", name, value);
	else
		printf("%-34s %12.3f %-8s %s\n", name, value, unit, what);
	nfig++;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double pct(double *v, int n, double p)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return v[(int)fmin(n - 1, floor(p * n))];
}

#define CHECK(expr) do {						\
	int ret_ = (expr);						\
	if (ret_ < 0) {							\
		fprintf(stderr, "neuron-bench: %s: %s\n", #expr,	\
			nrn_strerror(ret_));				\
		exit(1);						\
	}								\
} while (0)

static int open_node(void)
{
	int fd = open("/dev/accel/accel0", O_RDWR | O_CLOEXEC);

	if (fd < 0) {
		perror("/dev/accel/accel0");
		exit(1);
	}
	return fd;
}

static void xioctl(int fd, unsigned long req, void *arg, const char *what)
{
	int ret;

	do {
		ret = ioctl(fd, req, arg);
	} while (ret && (errno == EINTR || errno == EAGAIN));
	if (ret) {
		fprintf(stderr, "neuron-bench: %s: %s\n", what, strerror(errno));
		exit(1);
	}
}

/* GET_PARAM through the raw ioctl: the cheapest round trip into the driver. */
static double getparam_us(int fd)
{
	struct drm_neuron_get_param gp = { .param = DRM_NEURON_PARAM_MEM_FREE };
	double t0 = now_us();

	xioctl(fd, DRM_IOCTL_NEURON_GET_PARAM, &gp, "GET_PARAM");
	return now_us() - t0;
}

/*
 * The driver's null job: SUBMIT of a kernel of one NOP to core 0 with a
 * binary out-syncobj, then WAIT on it; each round trip is measured next to
 * one of GET_PARAM, on the same file, so that both see the same conditions.
 * Then the same job issued back to back, waiting once at the end.
 */
static void bench_null_job(int fd)
{
	int n = quick ? 200 : 2000, burst = quick ? 1000 : 10000;
	struct drm_neuron_bo_create bo = {
		.size = 4096, .placement = DRM_NEURON_BO_DEVICE,
	};
	struct drm_neuron_bo_info info = { 0 };
	struct drm_syncobj_create sync = { 0 };
	struct drm_syncobj_destroy destroy = { 0 };
	struct drm_gem_close close_bo = { 0 };
	struct drm_neuron_submit submit = {
		.engine = DRM_NEURON_ENGINE_CORE,
		.kernel_size = sizeof(struct nisa_insn),
	};
	struct drm_neuron_wait wait = { .timeout_ns = -1 };
	double *t = calloc((size_t)n, sizeof(double)), t0, p50, getparam;
	double *g = calloc((size_t)n, sizeof(double));
	struct nisa_insn *code;

	if (!t || !g)
		exit(1);
	xioctl(fd, DRM_IOCTL_NEURON_BO_CREATE, &bo, "BO_CREATE");
	info.handle = bo.handle;
	xioctl(fd, DRM_IOCTL_NEURON_BO_INFO, &info, "BO_INFO");
	code = mmap(NULL, bo.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		    (off_t)info.mmap_offset);
	if (code == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	*code = (struct nisa_insn){ .opcode = NISA_INSN_NOP };
	xioctl(fd, DRM_IOCTL_SYNCOBJ_CREATE, &sync, "SYNCOBJ_CREATE");
	submit.kernel_handle = bo.handle;
	submit.out_sync.handle = sync.handle;
	wait.handle = sync.handle;

	for (int i = 0; i < n + n / 10; i++) {
		t0 = now_us();
		xioctl(fd, DRM_IOCTL_NEURON_SUBMIT, &submit, "SUBMIT");
		xioctl(fd, DRM_IOCTL_NEURON_WAIT, &wait, "WAIT");
		if (wait.status) {
			fprintf(stderr, "neuron-bench: null job failed: %d\n", wait.status);
			exit(1);
		}
		/* The first tenth warms up. */
		if (i >= n / 10) {
			t[i - n / 10] = now_us() - t0;
			g[i - n / 10] = getparam_us(fd);
		}
	}
	getparam = pct(g, n, 0.5);
	fig("get_param_p50_us", getparam, "us", "GET_PARAM ioctl round trip, median");
	p50 = pct(t, n, 0.5);
	fig("null_job_p50_us", p50, "us", "SUBMIT + WAIT of an empty kernel, median");
	fig("null_job_p99_us", pct(t, n, 0.99), "us", "same, 99th percentile");
	fig("null_job_vs_ioctl_p50", p50 / getparam, "x", "null job / GET_PARAM round trip");
	t0 = now_us();
	for (int i = 0; i < burst; i++)
		xioctl(fd, DRM_IOCTL_NEURON_SUBMIT, &submit, "SUBMIT");
	xioctl(fd, DRM_IOCTL_NEURON_WAIT, &wait, "WAIT");
	fig("jobs_per_s", burst / ((now_us() - t0) / 1e6), "jobs/s",
	    "empty kernels submitted back to back");

	munmap(code, bo.size);
	destroy.handle = sync.handle;
	xioctl(fd, DRM_IOCTL_SYNCOBJ_DESTROY, &destroy, "SYNCOBJ_DESTROY");
	close_bo.handle = bo.handle;
	xioctl(fd, DRM_IOCTL_GEM_CLOSE, &close_bo, "GEM_CLOSE");
	free(g);
	free(t);
}

static struct nrn_kernel *nop_kernel(void)
{
	struct nisa_insn nop = { .opcode = NISA_INSN_NOP };
	struct nrn_kernel *k;

	CHECK(nrn_kernel_create(0, &k));
	CHECK(nrn_kernel_append(k, &nop));
	return k;
}

/* The null job through libneuron: a launch on a stream, then its sync. */
static void bench_stream_jobs(struct nrn_stream *s)
{
	int n = quick ? 100 : 1000;
	struct nrn_kernel *k = nop_kernel();
	double *t = calloc((size_t)n, sizeof(double)), t0;

	for (int i = 0; i < n; i++) {
		t0 = now_us();
		CHECK(nrn_kernel_launch(s, k, NULL, NULL));
		CHECK(nrn_stream_sync(s));
		t[i] = now_us() - t0;
	}
	fig("stream_null_job_p50_us", pct(t, n, 0.5), "us",
	    "empty kernel launched on a stream + sync, median");
	nrn_kernel_destroy(k);
	free(t);
}

/* Bandwidth of a DMA copy of @size bytes between two buffers, GB/s. */
static double dma_gbps(struct nrn_stream *s, struct nrn_buffer *dst,
		       struct nrn_buffer *src, size_t size)
{
	int reps = size >= (16u << 20) ? 4 : size >= (1u << 20) ? 16 : 64;
	double best = 0;

	for (int r = 0; r < reps; r++) {
		double t0 = now_us(), gbps;

		CHECK(nrn_stream_copy_buffer(s, dst, 0, src, 0, size));
		CHECK(nrn_stream_sync(s));
		gbps = size / ((now_us() - t0) * 1e3);
		best = gbps > best ? gbps : best;
	}
	return best;
}

/*
 * Host buffers as pin_memory() makes them (NRN_MEM_HOST_PINNED: pinned once,
 * at allocation), then the plain kind, whose pages each copy pins for
 * itself (dma_*_perjob_pin_gbps).
 */
static void bench_dma(struct nrn_device *dev, struct nrn_stream *s)
{
	size_t big = 64u << 20;
	struct nrn_buffer *host, *plain, *devb, *devb2;
	void *map;
	char name[64];

	CHECK(nrn_buffer_alloc(dev, big, NRN_MEM_HOST_PINNED, &host));
	CHECK(nrn_buffer_alloc(dev, big, NRN_MEM_HOST, &plain));
	CHECK(nrn_buffer_alloc(dev, big, NRN_MEM_DEVICE, &devb));
	CHECK(nrn_buffer_alloc(dev, big, NRN_MEM_DEVICE, &devb2));
	CHECK(nrn_buffer_map(host, &map));
	memset(map, 1, big);
	CHECK(nrn_buffer_map(plain, &map));
	memset(map, 1, big); /* fault the pages in */
	for (size_t size = 4096; size <= big; size *= quick ? 64 : 16) {
		snprintf(name, sizeof(name), "dma_h2d_%zuk_gbps", size >> 10);
		fig(name, dma_gbps(s, devb, host, size), "GB/s", "pinned host buffer -> device");
		snprintf(name, sizeof(name), "dma_d2h_%zuk_gbps", size >> 10);
		fig(name, dma_gbps(s, host, devb, size), "GB/s", "device -> pinned host buffer");
	}
	fig("dma_h2d_gbps", dma_gbps(s, devb, host, big), "GB/s", "64 MiB pinned host -> device");
	fig("dma_d2h_gbps", dma_gbps(s, host, devb, big), "GB/s", "64 MiB device -> pinned host");
	fig("dma_h2d_perjob_pin_gbps", dma_gbps(s, devb, plain, big), "GB/s",
	    "64 MiB host -> device, pages pinned by the copy");
	fig("dma_d2h_perjob_pin_gbps", dma_gbps(s, plain, devb, big), "GB/s",
	    "64 MiB device -> host, pages pinned by the copy");
	fig("dma_d2d_gbps", dma_gbps(s, devb2, devb, big), "GB/s", "64 MiB device -> device");
	nrn_buffer_free(host);
	nrn_buffer_free(plain);
	nrn_buffer_free(devb);
	nrn_buffer_free(devb2);
}

/*
 * Copies from and to pageable (malloc) memory go through the driver's
 * staging ring: a guest memcpy plus a DMA. The baseline is a plain memcpy
 * of the same 64 MiB between the same two buffers, warm (both touched
 * before), best of the same number of rounds, each round measuring the
 * memcpy next to the two copies.
 */
static void bench_pageable(struct nrn_device *dev, struct nrn_stream *s)
{
	size_t big = 64u << 20;
	char *a = malloc(big), *b = malloc(big);
	struct nrn_buffer *devb;
	double memcpy_gbps = 0, h2d = 0, d2h = 0;

	if (!a || !b) {
		fprintf(stderr, "neuron-bench: out of memory\n");
		exit(1);
	}
	memset(a, 3, big);
	memset(b, 4, big);
	CHECK(nrn_buffer_alloc(dev, big, NRN_MEM_DEVICE, &devb));
	for (int r = 0; r < (quick ? 2 : 4); r++) {
		double t0 = now_us();

		memcpy(b, a, big);
		memcpy_gbps = fmax(memcpy_gbps, big / ((now_us() - t0) * 1e3));
		memset(b, 4, big);
		t0 = now_us();
		CHECK(nrn_stream_copy_h2d(s, devb, 0, a, big));
		CHECK(nrn_stream_sync(s));
		h2d = fmax(h2d, big / ((now_us() - t0) * 1e3));
		t0 = now_us();
		CHECK(nrn_stream_copy_d2h(s, b, devb, 0, big));
		d2h = fmax(d2h, big / ((now_us() - t0) * 1e3));
	}
	if (memcmp(a, b, big)) {
		fprintf(stderr, "neuron-bench: pageable round trip corrupted data\n");
		exit(1);
	}
	fig("memcpy_64m_gbps", memcpy_gbps, "GB/s", "warm memcpy in this process, best of N");
	fig("copy_h2d_pageable_gbps", h2d, "GB/s", "64 MiB from malloc() memory");
	fig("copy_d2h_pageable_gbps", d2h, "GB/s", "64 MiB to malloc() memory");
	fig("copy_h2d_pageable_vs_memcpy", h2d / memcpy_gbps, "x", "h2d / memcpy");
	fig("copy_d2h_pageable_vs_memcpy", d2h / memcpy_gbps, "x", "d2h / memcpy");
	nrn_buffer_free(devb);
	free(a);
	free(b);
}

static void bench_gemm(struct nrn_device *dev, struct nrn_stream *s)
{
	const int64_t n = 1024;
	int64_t shape[2] = { n, n };
	struct nrn_buffer *a, *b, *c;
	struct nrn_tensor_desc ta, tb, tc;
	double best = 0;

	CHECK(nrn_buffer_alloc(dev, n * n * 4, NRN_MEM_DEVICE, &a));
	CHECK(nrn_buffer_alloc(dev, n * n * 4, NRN_MEM_DEVICE, &b));
	CHECK(nrn_buffer_alloc(dev, n * n * 4, NRN_MEM_DEVICE, &c));
	nrn_tensor_contiguous(&ta, a, 0, NISA_F32, 2, shape);
	nrn_tensor_contiguous(&tb, b, 0, NISA_F32, 2, shape);
	nrn_tensor_contiguous(&tc, c, 0, NISA_F32, 2, shape);
	CHECK(nrn_op_fill(s, &ta, 0.5));
	CHECK(nrn_op_fill(s, &tb, 0.25));
	CHECK(nrn_stream_sync(s));
	for (int r = 0; r < (quick ? 2 : 5); r++) {
		double t0 = now_us(), g;

		CHECK(nrn_op_matmul(s, &tc, &ta, &tb, NULL, 0));
		CHECK(nrn_stream_sync(s));
		g = 2.0 * n * n * n / ((now_us() - t0) * 1e3);
		best = g > best ? g : best;
	}
	fig("gemm_1024_gflops", best, "GFLOP/s", "float32 1024^3 on a NeuronCore");
	nrn_buffer_free(a);
	nrn_buffer_free(b);
	nrn_buffer_free(c);
}

static void bench_small_ops(struct nrn_device *dev, struct nrn_stream *s)
{
	int64_t shape[1] = { 1024 };
	int n = quick ? 200 : 1000;
	struct nrn_buffer *buf;
	struct nrn_tensor_desc x, y;
	double *t = calloc((size_t)n, sizeof(double)), t0, synced, batched, null_p50;
	struct nrn_kernel *k = nop_kernel();

	CHECK(nrn_buffer_alloc(dev, 8192, NRN_MEM_DEVICE, &buf));
	nrn_tensor_contiguous(&x, buf, 0, NISA_F32, 1, shape);
	nrn_tensor_contiguous(&y, buf, 4096, NISA_F32, 1, shape);
	CHECK(nrn_op_fill(s, &x, 1));
	CHECK(nrn_op_fill(s, &y, 2));
	CHECK(nrn_stream_sync(s));
	/* Null job again, interleaved, so both see the same conditions. */
	for (int i = 0; i < n; i++) {
		t0 = now_us();
		CHECK(nrn_kernel_launch(s, k, NULL, NULL));
		CHECK(nrn_stream_sync(s));
		t[i] = now_us() - t0;
	}
	null_p50 = pct(t, n, 0.5);
	for (int i = 0; i < n; i++) {
		t0 = now_us();
		CHECK(nrn_op_binary(s, NISA_BIN_ADD, &x, &x, &y, 1.0));
		CHECK(nrn_stream_sync(s));
		t[i] = now_us() - t0;
	}
	synced = 0;
	for (int i = 0; i < n; i++)
		synced += t[i];
	fig("op_add_1024_p50_us", pct(t, n, 0.5), "us", "1024-element add + sync, median");
	fig("small_op_vs_null_job", pct(t, n, 0.5) / null_p50, "x",
	    "that / null job round trip");
	t0 = now_us();
	for (int i = 0; i < n; i++)
		CHECK(nrn_op_binary(s, NISA_BIN_ADD, &x, &x, &y, 1.0));
	CHECK(nrn_stream_sync(s));
	batched = now_us() - t0;
	fig("ops_1000_synced_ms", synced / 1e3 * 1000 / n, "ms", "1000 adds, each synchronised");
	fig("ops_1000_batched_ms", batched / 1e3 * 1000 / n, "ms", "1000 adds back to back");
	fig("batched_vs_synced_ops", batched / synced, "x", "batched / synchronised");
	nrn_kernel_destroy(k);
	nrn_buffer_free(buf);
	free(t);
}

/*
 * The engine by the card's own clock (NISA_INSN_TIMESTAMP): @n issues of
 * one operation between two timestamps in one job -- the stream's batch,
 * which holds them all (n + 2 <= NRN_BATCH_MAX_OPS, and the caller keeps
 * their work within a batch's) -- so that neither a submission nor the
 * wait for a job falls between the two. The card's time per operation in
 * microseconds, the median of @reps rounds.
 */
struct engine {
	struct nrn_tensor_desc dst, a, b;
	struct nrn_expr expr;
	int (*op)(struct nrn_stream *s, const struct engine *e);
};

static double card_us_per_op(struct nrn_stream *s, struct nrn_buffer *clk,
			     const struct engine *e, int n, int reps)
{
	double v[16];
	int64_t t[2];

	if (n + 2 > NRN_BATCH_MAX_OPS || reps > 16) {
		fprintf(stderr, "neuron-bench: %d operations do not fit a batch\n", n);
		exit(1);
	}
	CHECK(nrn_stream_sync(s));
	for (int r = 0; r < reps; r++) {
		CHECK(nrn_op_timestamp(s, clk, 0));
		for (int i = 0; i < n; i++)
			CHECK(e->op(s, e));
		CHECK(nrn_op_timestamp(s, clk, 8));
		CHECK(nrn_stream_sync(s));
		CHECK(nrn_copy_d2h(t, clk, 0, sizeof(t)));
		v[r] = (double)(t[1] - t[0]) / 1e3 / n;
	}
	return pct(v, reps, 0.5);
}

static int eng_copy(struct nrn_stream *s, const struct engine *e)
{
	return nrn_op_copy(s, &e->dst, &e->a);
}

static int eng_add(struct nrn_stream *s, const struct engine *e)
{
	return nrn_op_binary(s, NISA_BIN_ADD, &e->dst, &e->a, &e->b, 1.0);
}

static int eng_exp(struct nrn_stream *s, const struct engine *e)
{
	return nrn_op_unary(s, NISA_UN_EXP, &e->dst, &e->a);
}

static int eng_sum_rows(struct nrn_stream *s, const struct engine *e)
{
	return nrn_op_reduce(s, NISA_RED_SUM, &e->dst, &e->a, 1);
}

static int eng_matmul(struct nrn_stream *s, const struct engine *e)
{
	return nrn_op_matmul(s, &e->dst, &e->a, &e->b, NULL, 0);
}

static int eng_expr(struct nrn_stream *s, const struct engine *e)
{
	const struct nrn_tensor_desc *in[1] = { &e->a };

	return nrn_op_expr(s, &e->dst, in, 1, &e->expr);
}

/* A [rows, cols] float32 tensor at @off of @buf, row-major. */
static struct nrn_tensor_desc f32_2d(struct nrn_buffer *buf, uint64_t off,
				     int64_t rows, int64_t cols)
{
	int64_t shape[2] = { rows, cols };
	struct nrn_tensor_desc t;

	nrn_tensor_contiguous(&t, buf, off, NISA_F32, 2, shape);
	return t;
}

/*
 * What an instruction costs before its first element (1-element COPY, a
 * 1024-element two-step EXPR, a 16x16 MATMUL, 200 of each in a job), and
 * per element at 2^20 float32 elements (8 of each in a job: add, exp, a
 * row sum of [1024, 1024], a contiguous and a transposing COPY), as GB/s
 * of the bytes each reads and writes: scripts/bench sets these against the
 * host's memcpy.
 */
static void bench_engine(struct nrn_device *dev, struct nrn_stream *s)
{
	const int64_t m = 1024, big = m * m;
	int reps = quick ? 3 : 9, nsmall = 200, nbig = 8;
	struct nrn_buffer *clk, *x, *y, *z;
	struct engine e = { 0 };
	struct {
		const char *name, *what;
		double bytes;	/* per element */
	} per_elem[] = {
		{ "card_add_f32", "float32 add, 2^20 elements", 12 },
		{ "card_exp_f32", "float32 exp, 2^20 elements", 8 },
		{ "card_sum_rows_f32", "row sums of a float32 [1024, 1024]", 4 },
		{ "card_copy_f32", "float32 contiguous COPY, 2^20 elements", 8 },
		{ "card_copy_strided_f32", "float32 transposing COPY, [1024, 1024]", 8 },
	};
	int (*per_elem_op[])(struct nrn_stream *, const struct engine *) = {
		eng_add, eng_exp, eng_sum_rows, eng_copy, eng_copy,
	};
	char name[64], what[96];
	double us;

	CHECK(nrn_buffer_alloc(dev, 4096, NRN_MEM_DEVICE, &clk));
	CHECK(nrn_buffer_alloc(dev, big * 4, NRN_MEM_DEVICE, &x));
	CHECK(nrn_buffer_alloc(dev, big * 4, NRN_MEM_DEVICE, &y));
	CHECK(nrn_buffer_alloc(dev, big * 4, NRN_MEM_DEVICE, &z));
	e.a = f32_2d(x, 0, m, m);
	CHECK(nrn_op_fill(s, &e.a, 0.5));
	e.b = f32_2d(y, 0, m, m);
	CHECK(nrn_op_fill(s, &e.b, 0.25));

	/* Fixed costs. */
	e.dst = f32_2d(z, 0, 1, 1);
	e.a = f32_2d(x, 0, 1, 1);
	e.op = eng_copy;
	us = card_us_per_op(s, clk, &e, nsmall, reps);
	fig("card_insn_fixed_us", us, "us",
	    "the card's time for an instruction of 1 element (COPY), median");
	e.dst = f32_2d(z, 0, 1, m);
	e.a = f32_2d(x, 0, 1, m);
	nrn_expr_init(&e.expr);
	CHECK(nrn_expr_binary_scalar(&e.expr, NISA_BIN_MUL, 1, NISA_F32, 0, 2.0, 1.0, 0));
	CHECK(nrn_expr_binary_scalar(&e.expr, NISA_BIN_ADD, 1, NISA_F32, 1, 1.0, 1.0, 0));
	e.op = eng_expr;
	fig("card_insn_expr1024_us", card_us_per_op(s, clk, &e, nsmall, reps), "us",
	    "EXPR x * 2 + 1 of 1024 float32 elements, median");
	e.dst = f32_2d(z, 0, 16, 16);
	e.a = f32_2d(x, 0, 16, 16);
	e.b = f32_2d(y, 0, 16, 16);
	e.op = eng_matmul;
	fig("card_insn_matmul16_us", card_us_per_op(s, clk, &e, nsmall, reps), "us",
	    "MATMUL 16x16 @ 16x16 float32, median");

	/* Per element. */
	for (size_t i = 0; i < sizeof(per_elem) / sizeof(per_elem[0]); i++) {
		e.a = f32_2d(x, 0, m, m);
		e.b = f32_2d(y, 0, m, m);
		e.dst = f32_2d(z, 0, m, m);
		if (per_elem_op[i] == eng_sum_rows)
			e.dst = f32_2d(z, 0, m, 1);
		if (strstr(per_elem[i].name, "strided")) {
			/* dst[i][j] = a[j][i] */
			e.a.strides[0] = 1;
			e.a.strides[1] = m;
		}
		e.op = per_elem_op[i];
		us = card_us_per_op(s, clk, &e, nbig, reps);
		snprintf(name, sizeof(name), "%s_ns_per_elem", per_elem[i].name);
		snprintf(what, sizeof(what), "%s: the card's time", per_elem[i].what);
		fig(name, us * 1e3 / big, "ns", what);
		snprintf(name, sizeof(name), "%s_gbps", per_elem[i].name);
		snprintf(what, sizeof(what), "%s: bytes read and written", per_elem[i].what);
		fig(name, per_elem[i].bytes * big / (us * 1e3), "GB/s", what);
	}
	nrn_buffer_free(clk);
	nrn_buffer_free(x);
	nrn_buffer_free(y);
	nrn_buffer_free(z);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "quick", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ }
	};
	struct nrn_device *dev;
	struct nrn_stream *s;
	int c, fd;

	while ((c = getopt_long(argc, argv, "jqh", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = 1;
			break;
		case 'q':
			quick = 1;
			break;
		case 'h':
			printf("usage: neuron-bench [--json] [--quick]\n");
			return 0;
		default:
			fprintf(stderr, "usage: neuron-bench [--json] [--quick]\n");
			return 2;
		}
	}
	CHECK(nrn_device_open(0, &dev));
	CHECK(nrn_stream_create(dev, &s));
	if (!json)
		printf("%-34s %12s %-8s %s\n", "figure", "value", "unit", "what");
	fd = open_node();
	bench_null_job(fd);
	close(fd);
	bench_stream_jobs(s);
	bench_small_ops(dev, s);
	bench_dma(dev, s);
	bench_pageable(dev, s);
	bench_gemm(dev, s);
	bench_engine(dev, s);
	if (json)
		printf("\n}\n");
	nrn_stream_destroy(s);
	nrn_device_close(dev);
	return 0;
}

// SPDX-License-Identifier: MIT
/*
 * neuron-comm-bench: bandwidth of the card-to-card paths, one JSON line per
 * figure, medians of several runs (docs/collectives.md "Figures").
 *
 *   allreduce  an f32 all-reduce (sum) over the first N cards, one thread
 *              per rank: algbw = bytes / time, busbw = algbw * 2(N-1)/N
 *              (the NCCL tests' definition); the time spans issue to the
 *              last rank's sync.
 *   alltoall   an all-to-all of the same bytes per rank (N blocks), one thread
 *              per rank: busbw = algbw * (N-1)/N (the NCCL tests'
 *              definition: the share of the data that leaves the card).
 *   link_copy  the same bytes from card 0 to card 1 over their link
 *              (nrn_send / nrn_recv).
 *   dma_h2d    the same bytes from a pinned host buffer to card 0 (DMA
 *              engine), as neuron-bench's dma_h2d.
 *
 *   neuron-comm-bench [--cards N] [--mib M] [--runs R]
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "libneuron.h"

struct rank {
	struct nrn_comm *comm;
	struct nrn_stream *s;
	struct nrn_buffer *buf, *out;
	int r, n;
	int what;		/* 0: all-reduce, 1: link copy 0 -> 1, 2: all-to-all */
	int ret;
};

static pthread_barrier_t start, stop;
static uint64_t bytes;
static int runs = 5;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int one(struct rank *R)
{
	int ret = 0;

	if (R->what == 0)
		ret = nrn_all_reduce(R->comm, R->s, R->buf, 0, R->buf, 0, bytes / 4,
				     NISA_F32, NRN_REDUCE_SUM);
	else if (R->what == 2)
		ret = nrn_all_to_all(R->comm, R->s, R->buf, 0, R->out, 0,
				     bytes / 4 / (uint64_t)R->n, NISA_F32);
	else if (R->r == 0)
		ret = nrn_send(R->comm, R->s, R->buf, 0, bytes, 1);
	else if (R->r == 1)
		ret = nrn_recv(R->comm, R->s, R->buf, 0, bytes, 0);
	return ret ? ret : nrn_stream_sync(R->s);
}

static void *rank_main(void *p)
{
	struct rank *R = p;

	/* One warm-up (imports the peers' buffers), then the timed runs. */
	for (int i = 0; i <= runs; i++) {
		pthread_barrier_wait(&start);
		int ret = one(R);

		if (ret && !R->ret)
			R->ret = ret;
		pthread_barrier_wait(&stop);
	}
	return NULL;
}

/* Median seconds of @what over @n ranks (threads), or a negative errno. */
static double run(struct rank *ranks, int n, int what)
{
	pthread_t th[16];
	double t[64];

	pthread_barrier_init(&start, NULL, (unsigned int)n + 1);
	pthread_barrier_init(&stop, NULL, (unsigned int)n + 1);
	for (int i = 0; i < n; i++) {
		ranks[i].what = what;
		pthread_create(&th[i], NULL, rank_main, &ranks[i]);
	}
	for (int i = 0; i <= runs; i++) {
		pthread_barrier_wait(&start);
		double t0 = now();

		pthread_barrier_wait(&stop);
		if (i)
			t[i - 1] = now() - t0;
	}
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&start);
	pthread_barrier_destroy(&stop);
	for (int i = 0; i < n; i++)
		if (ranks[i].ret)
			return ranks[i].ret;
	return median(t, runs);
}

static double h2d(struct nrn_device *dev, struct nrn_stream *s, struct nrn_buffer *dst)
{
	struct nrn_buffer *host;
	double t[64];
	void *p;
	int ret;

	ret = nrn_buffer_alloc(dev, bytes, NRN_MEM_HOST_PINNED, &host);
	if (!ret)
		ret = nrn_buffer_map(host, &p);
	if (ret)
		return ret;
	memset(p, 1, bytes);	/* pages present: no faults in the timing */
	for (int i = 0; i <= runs && !ret; i++) {
		double t0 = now();

		ret = nrn_stream_copy_buffer(s, dst, 0, host, 0, bytes);
		if (!ret)
			ret = nrn_stream_sync(s);
		if (i)
			t[i - 1] = now() - t0;
	}
	nrn_buffer_free(host);
	return ret ? ret : median(t, runs);
}

int main(int argc, char **argv)
{
	struct nrn_device *devs[16];
	struct nrn_comm *comms[16];
	struct rank ranks[16];
	int n = 2, mib = 64, ret;
	double sec;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--cards"))
			n = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--mib"))
			mib = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--runs"))
			runs = atoi(argv[i + 1]);
	}
	if (n < 2 || n > 16 || n > nrn_device_count() || mib < 1 || runs < 1 || runs > 64) {
		fprintf(stderr, "usage: %s [--cards N (2..cards present)] [--mib M] [--runs R (1..64)]\n",
			argv[0]);
		return 2;
	}
	bytes = (uint64_t)mib << 20;
	for (int i = 0; i < n; i++) {
		ret = nrn_device_open((unsigned int)i, &devs[i]);
		if (ret)
			goto fail;
	}
	ret = nrn_comm_init_all(devs, n, comms);
	if (ret)
		goto fail;
	for (int i = 0; i < n; i++) {
		ranks[i] = (struct rank){ .comm = comms[i], .r = i, .n = n };
		ret = nrn_stream_create(devs[i], &ranks[i].s);
		if (!ret)
			ret = nrn_buffer_alloc(devs[i], bytes, NRN_MEM_DEVICE, &ranks[i].buf);
		if (!ret)
			ret = nrn_buffer_alloc(devs[i], bytes, NRN_MEM_DEVICE, &ranks[i].out);
		if (ret)
			goto fail;
	}
	sec = run(ranks, n, 0);
	if (sec < 0) {
		ret = (int)sec;
		goto fail;
	}
	printf("{\"name\": \"allreduce_%dm_f32\", \"cards\": %d, \"runs\": %d, \"seconds\": %.6f, "
	       "\"algbw_gbs\": %.3f, \"busbw_gbs\": %.3f}\n", mib, n, runs, sec,
	       bytes / sec / 1e9, bytes / sec / 1e9 * 2 * (n - 1) / n);
	sec = run(ranks, n, 2);
	if (sec < 0) {
		ret = (int)sec;
		goto fail;
	}
	printf("{\"name\": \"alltoall_%dm_f32\", \"cards\": %d, \"runs\": %d, \"seconds\": %.6f, "
	       "\"algbw_gbs\": %.3f, \"busbw_gbs\": %.3f}\n", mib, n, runs, sec,
	       bytes / sec / 1e9, bytes / sec / 1e9 * (n - 1) / n);
	sec = run(ranks, n, 1);
	if (sec < 0) {
		ret = (int)sec;
		goto fail;
	}
	printf("{\"name\": \"link_copy_%dm\", \"runs\": %d, \"seconds\": %.6f, \"gbs\": %.3f}\n",
	       mib, runs, sec, bytes / sec / 1e9);
	sec = h2d(devs[0], ranks[0].s, ranks[0].buf);
	if (sec < 0) {
		ret = (int)sec;
		goto fail;
	}
	printf("{\"name\": \"dma_h2d_%dm\", \"runs\": %d, \"seconds\": %.6f, \"gbs\": %.3f}\n",
	       mib, runs, sec, bytes / sec / 1e9);
	fflush(stdout);
	for (int i = 0; i < n; i++) {
		nrn_buffer_free(ranks[i].buf);
		nrn_buffer_free(ranks[i].out);
		nrn_stream_destroy(ranks[i].s);
		nrn_comm_destroy(comms[i]);
		nrn_device_close(devs[i]);
	}
	return 0;
fail:
	fprintf(stderr, "neuron-comm-bench: %s\n", nrn_strerror(ret));
	return 1;
}

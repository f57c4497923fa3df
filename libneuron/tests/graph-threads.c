// SPDX-License-Identifier: MIT
/*
 * Description: one compiled graph (with constants, uploaded on its first
 * launch) launched by several threads at once, each on its own stream,
 * arguments and arena, many times: every launch gives its own right
 * answer. A stream capturing in one thread does not disturb the others.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>

#include "t_helpers.h"

#define LEN 1024
#define THREADS 4
#define ROUNDS 20

static struct nrn_device *dev;
static struct nrn_graph *graph;
static uint64_t arena_size;
static pthread_barrier_t start;

/* y = x * c + 1, c an h2d constant (c[i] = i % 7). */
static int build(void)
{
	struct nrn_buffer *x, *y, *cb;
	struct nrn_tensor_desc tx, ty, tc;
	int64_t shape[1] = { LEN };
	struct nrn_graph_arg args[2];
	struct nrn_graph_info info;
	struct nrn_capture *c = NULL;
	struct nrn_stream *s;
	static float cv[LEN];
	int ret;

	for (int i = 0; i < LEN; i++)
		cv[i] = (float)(i % 7);
	t_check_ret(nrn_stream_create(dev, &s), 0);
	t_check_ret(nrn_buffer_alloc(dev, LEN * 4, NRN_MEM_DEVICE, &x), 0);
	t_check_ret(nrn_buffer_alloc(dev, LEN * 4, NRN_MEM_DEVICE, &y), 0);
	t_check_ret(nrn_buffer_alloc(dev, LEN * 4, NRN_MEM_DEVICE, &cb), 0);
	nrn_tensor_contiguous(&tx, x, 0, NISA_F32, 1, shape);
	nrn_tensor_contiguous(&ty, y, 0, NISA_F32, 1, shape);
	nrn_tensor_contiguous(&tc, cb, 0, NISA_F32, 1, shape);
	t_check_ret(nrn_stream_begin_capture(s), 0);
	t_check_ret(nrn_stream_copy_h2d(s, cb, 0, cv, sizeof(cv)), 0);
	t_check_ret(nrn_op_binary(s, NISA_BIN_MUL, &ty, &tx, &tc, 1), 0);
	t_check_ret(nrn_op_binary_scalar(s, NISA_BIN_ADD, &ty, &ty, 1, 1, 0), 0);
	t_check_ret(nrn_stream_end_capture(s, &c), 0);
	args[0] = (struct nrn_graph_arg){ x, 0, LEN * 4, 0 };
	args[1] = (struct nrn_graph_arg){ y, 0, LEN * 4, 0 };
	ret = nrn_graph_compile(c, args, 2, 0, &graph);
	t_check_ret(ret, 0);
	if (!ret) {
		t_check_ret(nrn_graph_info(graph, &info), 0);
		arena_size = info.arena_size;
		t_check(info.const_size == LEN * 4 && arena_size == LEN * 4);
	}
	nrn_capture_destroy(c);
	nrn_buffer_free(x);
	nrn_buffer_free(y);
	nrn_buffer_free(cb);
	nrn_stream_destroy(s);
	return ret;
}

static void *worker(void *arg)
{
	unsigned int id = (unsigned int)(uintptr_t)arg;
	struct nrn_buffer *io = NULL, *arena = NULL, *other = NULL;
	struct nrn_stream *s, *cap;
	struct nrn_tensor_desc t;
	int64_t shape[1] = { 64 };
	struct nrn_capture *c = NULL;
	static _Thread_local float xv[LEN], yv[LEN];
	long bad = 0;

	t_check_ret(nrn_stream_create(dev, &s), 0);
	t_check_ret(nrn_stream_create(dev, &cap), 0);
	t_check_ret(nrn_buffer_alloc(dev, 3 * LEN * 4, NRN_MEM_DEVICE, &io), 0);
	t_check_ret(nrn_buffer_alloc(dev, arena_size, NRN_MEM_DEVICE, &arena), 0);
	t_check_ret(nrn_buffer_alloc(dev, 4096, NRN_MEM_DEVICE, &other), 0);
	nrn_tensor_contiguous(&t, other, 0, NISA_F32, 1, shape);
	pthread_barrier_wait(&start);
	/* Another stream of this thread captures all along. */
	t_check_ret(nrn_stream_begin_capture(cap), 0);
	for (int r = 0; r < ROUNDS; r++) {
		struct nrn_graph_arg args[2] = { { io, 0, LEN * 4, 0 },
						 { io, 2 * LEN * 4, LEN * 4, 0 } };

		for (int i = 0; i < LEN; i++)
			xv[i] = (float)(i + r * 3 + id * 1000);
		t_check_ret(nrn_op_fill(cap, &t, r), 0);
		t_check_ret(nrn_stream_copy_h2d(s, io, 0, xv, sizeof(xv)), 0);
		t_check_ret(nrn_graph_launch(s, graph, args, arena, 0), 0);
		t_check_ret(nrn_stream_copy_d2h(s, yv, io, 2 * LEN * 4, sizeof(yv)), 0);
		for (int i = 0; i < LEN; i++)
			bad += yv[i] != xv[i] * (float)(i % 7) + 1;
	}
	t_check_ret(nrn_stream_end_capture(cap, &c), 0);
	t_check(nrn_capture_count(c) == ROUNDS);
	t_check(bad == 0);
	nrn_capture_destroy(c);
	nrn_buffer_free(io);
	nrn_buffer_free(arena);
	nrn_buffer_free(other);
	nrn_stream_destroy(s);
	nrn_stream_destroy(cap);
	return NULL;
}

int main(void)
{
	pthread_t th[THREADS];

	dev = t_open_device();
	if (build()) {
		nrn_device_close(dev);
		return T_EXIT_FAIL;
	}
	pthread_barrier_init(&start, NULL, THREADS);
	for (unsigned int i = 0; i < THREADS; i++)
		pthread_create(&th[i], NULL, worker, (void *)(uintptr_t)i);
	for (unsigned int i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&start);
	nrn_graph_destroy(graph);
	nrn_device_close(dev);
	return t_exit();
}

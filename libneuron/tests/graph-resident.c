// SPDX-License-Identifier: MIT
/*
 * Description: a graph launched again with the same operands runs as its
 * resident job (graph-resident.c), and every launch computes what the
 * graph says: y = 2 x + 1 over launches with the same buffers (the first
 * issued, the second kept, the others resident), after an operation still
 * in the stream's batch that writes x (it runs first), with other buffers
 * (the resident job's y is not written), back again, with buffers made
 * after others were freed, alternating between two streams and two sets
 * of buffers, and with the graph destroyed while its launch runs.
 */
#include <stdbool.h>
#include <stdint.h>

#include "t_helpers.h"

#define N 4096	/* floats per operand */

static struct nrn_device *dev;

static struct nrn_graph *compile_graph(struct nrn_stream *s)
{
	struct nrn_buffer *x = t_buffer(dev, N * 4), *y = t_buffer(dev, N * 4);
	struct nrn_graph_arg args[2] = { { x, 0, N * 4, 0 }, { y, 0, N * 4, 0 } };
	struct nrn_tensor_desc xt, yt;
	struct nrn_capture *c = NULL;
	struct nrn_graph *g = NULL;
	int64_t shape[1] = { N };

	nrn_tensor_contiguous(&xt, x, 0, NISA_F32, 1, shape);
	nrn_tensor_contiguous(&yt, y, 0, NISA_F32, 1, shape);
	t_check_ret(nrn_stream_begin_capture(s), 0);
	t_check_ret(nrn_op_binary_scalar(s, NISA_BIN_MUL, &yt, &xt, 2, 1, 0), 0);
	t_check_ret(nrn_op_binary_scalar(s, NISA_BIN_ADD, &yt, &yt, 1, 1, 0), 0);
	t_check_ret(nrn_stream_end_capture(s, &c), 0);
	t_check_ret(nrn_graph_compile(c, args, 2, 0, &g), 0);
	nrn_capture_destroy(c);
	nrn_buffer_free(x);
	nrn_buffer_free(y);
	return g;
}

static void put(struct nrn_buffer *b, float base)
{
	static float v[N];

	for (int j = 0; j < N; j++)
		v[j] = base + (float)j;
	t_check_ret(nrn_copy_h2d(b, 0, v, sizeof(v)), 0);
}

/* Whether @b holds 2 (base + j) + 1 (or, @raw, base + j) at every j. */
static bool holds(struct nrn_stream *s, struct nrn_buffer *b, float base, bool raw)
{
	static float v[N];
	bool ok = true;

	t_check_ret(nrn_stream_copy_d2h(s, v, b, 0, sizeof(v)), 0);
	for (int j = 0; j < N; j++)
		ok &= v[j] == (raw ? base + (float)j : 2 * (base + (float)j) + 1);
	return ok;
}

static int launch(struct nrn_stream *s, struct nrn_graph *g, struct nrn_buffer *x,
		  struct nrn_buffer *y)
{
	struct nrn_graph_arg args[2] = { { x, 0, N * 4, 0 }, { y, 0, N * 4, 0 } };

	return nrn_graph_launch(s, g, args, NULL, 0);
}

int main(void)
{
	struct nrn_buffer *x0, *y0, *x1, *y1, *x2, *y2;
	struct nrn_graph_info info;
	struct nrn_tensor_desc xt;
	struct nrn_stream *s, *t;
	struct nrn_graph *g;
	int64_t shape[1] = { N };

	dev = t_open_device();
	t_check_ret(nrn_stream_create(dev, &s), 0);
	t_check_ret(nrn_stream_create(dev, &t), 0);
	g = compile_graph(s);
	if (!g)
		return t_exit();
	x0 = t_buffer(dev, N * 4);
	y0 = t_buffer(dev, N * 4);
	x1 = t_buffer(dev, N * 4);
	y1 = t_buffer(dev, N * 4);

	/* The same operands, new inputs each time: issued, kept, resident. */
	for (int i = 0; i < 6; i++) {
		t_check_ret(nrn_graph_info(g, &info), 0);
		t_check(info.resident == (i >= 2));
		put(x0, (float)(i * 10));
		t_check_ret(launch(s, g, x0, y0), 0);
		t_check(holds(s, y0, (float)(i * 10), false));
	}
	t_check_ret(nrn_graph_info(g, &info), 0);
	t_check(info.resident == 1);
	t_check(info.work == 2 * N);

	/* An operation still in the batch writes x: it runs first. */
	nrn_tensor_contiguous(&xt, x0, 0, NISA_F32, 1, shape);
	t_check_ret(nrn_op_iota(s, &xt, 5, 1), 0);
	t_check_ret(launch(s, g, x0, y0), 0);
	t_check(holds(s, y0, 5, false));

	/* Other buffers: the resident job's y is left alone. */
	put(x1, 100);
	put(y0, -1);
	t_check_ret(launch(s, g, x1, y1), 0);
	t_check(holds(s, y1, 100, false));
	t_check(holds(s, y0, -1, true));
	for (int i = 0; i < 3; i++) {
		put(x0, (float)i);
		t_check_ret(launch(s, g, x0, y0), 0);
		t_check(holds(s, y0, (float)i, false));
	}

	/* Buffers made after others were freed (their handles may come back). */
	nrn_buffer_free(x1);
	nrn_buffer_free(y1);
	x2 = t_buffer(dev, N * 4);
	y2 = t_buffer(dev, N * 4);
	for (int i = 0; i < 3; i++) {
		put(x2, (float)(7 + i));
		put(y0, -2);
		t_check_ret(launch(s, g, x2, y2), 0);
		t_check(holds(s, y2, (float)(7 + i), false));
		t_check(holds(s, y0, -2, true));
	}

	/* Two streams, two sets of buffers, alternately. */
	put(x0, 1);
	put(x2, 2);
	for (int i = 0; i < 4; i++) {
		t_check_ret(launch(s, g, x0, y0), 0);
		t_check_ret(launch(t, g, x2, y2), 0);
	}
	t_check(holds(s, y0, 1, false));
	t_check(holds(t, y2, 2, false));
	for (int i = 0; i < 4; i++) {
		t_check_ret(launch(t, g, x0, y0), 0);
		t_check(holds(t, y0, 1, false));
	}

	/* Destroyed while its launch may still run: the job holds its own. */
	put(x0, 3);
	t_check_ret(launch(s, g, x0, y0), 0);
	nrn_graph_destroy(g);
	t_check_ret(nrn_stream_sync(s), 0);
	t_check(holds(s, y0, 3, false));

	nrn_buffer_free(x0);
	nrn_buffer_free(y0);
	nrn_buffer_free(x2);
	nrn_buffer_free(y2);
	nrn_stream_destroy(t);
	nrn_stream_destroy(s);
	nrn_device_close(dev);
	return t_exit();
}

// SPDX-License-Identifier: MIT
/*
 * Description: a graph launch binds its arguments however the caller
 * placed them -- 100 arguments in 100 buffers (more than a submission's 64
 * buffers: the launch spans batches), all in one buffer, or some sharing
 * one buffer while a pending operation already holds a slot of the
 * stream's batch -- over 300 instructions (more than one batch's 256), and
 * every result is the graph's.
 */
#include <stdbool.h>
#include <stdint.h>

#include "t_helpers.h"

#define NP 50		/* pairs x_i -> y_i: 2 * NP arguments */
#define N 16		/* floats per argument */
#define STEPS 6		/* y = x + 1, then y += 1 five times */

static struct nrn_device *dev;

static struct nrn_graph *compile_graph(struct nrn_stream *s)
{
	struct nrn_buffer *cb[2 * NP];
	struct nrn_graph_arg args[2 * NP];
	struct nrn_capture *c = NULL;
	struct nrn_graph *g = NULL;
	int64_t shape[1] = { N };

	for (int i = 0; i < 2 * NP; i++) {
		cb[i] = t_buffer(dev, N * 4);
		args[i] = (struct nrn_graph_arg){ cb[i], 0, N * 4, 0 };
	}
	t_check_ret(nrn_stream_begin_capture(s), 0);
	for (int i = 0; i < NP; i++) {
		struct nrn_tensor_desc x, y;

		nrn_tensor_contiguous(&x, cb[2 * i], 0, NISA_F32, 1, shape);
		nrn_tensor_contiguous(&y, cb[2 * i + 1], 0, NISA_F32, 1, shape);
		t_check_ret(nrn_op_binary_scalar(s, NISA_BIN_ADD, &y, &x, 1, 1, 0), 0);
		for (int k = 1; k < STEPS; k++)
			t_check_ret(nrn_op_binary_scalar(s, NISA_BIN_ADD, &y, &y, 1, 1, 0), 0);
	}
	t_check_ret(nrn_stream_end_capture(s, &c), 0);
	t_check_ret(nrn_graph_compile(c, args, 2 * NP, 0, &g), 0);
	nrn_capture_destroy(c);
	for (int i = 0; i < 2 * NP; i++)
		nrn_buffer_free(cb[i]);
	return g;
}

/*
 * Launch @g with argument k in bufs[k] at offs[k] (x_i filled with
 * i * 100 + j first; @pending: a fill of another buffer is left in the
 * stream's batch before the launch) and check every y_i.
 */
static void launch_check(struct nrn_stream *s, struct nrn_graph *g,
			 struct nrn_buffer **bufs, const size_t *offs, bool pending)
{
	struct nrn_graph_arg args[2 * NP];
	struct nrn_buffer *z = t_buffer(dev, N * 4);
	struct nrn_tensor_desc zt;
	int64_t shape[1] = { N };
	float v[N];

	for (int i = 0; i < NP; i++) {
		for (int j = 0; j < N; j++)
			v[j] = (float)(i * 100 + j);
		t_check_ret(nrn_copy_h2d(bufs[2 * i], offs[2 * i], v, sizeof(v)), 0);
	}
	for (int k = 0; k < 2 * NP; k++)
		args[k] = (struct nrn_graph_arg){ bufs[k], offs[k], N * 4, 0 };
	nrn_tensor_contiguous(&zt, z, 0, NISA_F32, 1, shape);
	if (pending)
		t_check_ret(nrn_op_fill(s, &zt, 7), 0);
	t_check_ret(nrn_graph_launch(s, g, args, NULL, 0), 0);
	for (int i = 0; i < NP; i++) {
		t_check_ret(nrn_stream_copy_d2h(s, v, bufs[2 * i + 1], offs[2 * i + 1],
						sizeof(v)), 0);
		for (int j = 0; j < N; j++)
			t_check(v[j] == (float)(i * 100 + j + STEPS));
	}
	if (pending) {
		t_check_ret(nrn_stream_copy_d2h(s, v, z, 0, sizeof(v)), 0);
		for (int j = 0; j < N; j++)
			t_check(v[j] == 7);
	}
	nrn_buffer_free(z);
}

int main(void)
{
	struct nrn_buffer *own[2 * NP], *bufs[2 * NP], *big, *shared;
	size_t offs[2 * NP];
	struct nrn_graph_info info;
	struct nrn_stream *s;
	struct nrn_graph *g;

	dev = t_open_device();
	t_check_ret(nrn_stream_create(dev, &s), 0);
	g = compile_graph(s);
	if (!g)
		return t_exit();
	t_check_ret(nrn_graph_info(g, &info), 0);
	t_check(info.nargs == 2 * NP && info.insns == NP * STEPS);
	big = t_buffer(dev, 2 * NP * 256);
	shared = t_buffer(dev, NP * 256);
	for (int k = 0; k < 2 * NP; k++)
		own[k] = t_buffer(dev, N * 4);
	/* Every argument in a buffer of its own: 100 buffers. */
	for (int k = 0; k < 2 * NP; k++)
		offs[k] = 0;
	launch_check(s, g, own, offs, false);
	/* All in one buffer. */
	for (int k = 0; k < 2 * NP; k++) {
		bufs[k] = big;
		offs[k] = (size_t)k * 256;
	}
	launch_check(s, g, bufs, offs, true);
	/* The x_i in one buffer, the y_i in their own, after a pending op; twice. */
	for (int rep = 0; rep < 2; rep++) {
		for (int i = 0; i < NP; i++) {
			bufs[2 * i] = shared;
			offs[2 * i] = (size_t)i * 256;
			bufs[2 * i + 1] = own[2 * i + 1];
			offs[2 * i + 1] = 0;
		}
		launch_check(s, g, bufs, offs, true);
	}
	nrn_graph_destroy(g);
	for (int k = 0; k < 2 * NP; k++)
		nrn_buffer_free(own[k]);
	nrn_buffer_free(big);
	nrn_buffer_free(shared);
	nrn_stream_destroy(s);
	nrn_device_close(dev);
	return t_exit();
}

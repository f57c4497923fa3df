// SPDX-License-Identifier: MIT
/*
 * Description: captured graphs over views -- an operand with negative
 * strides (a reversed tensor) and a broadcast one (stride 0) are assigned
 * to their arguments by their true byte extents and relocated; a scratch
 * tensor of which only half was written before it is read makes the
 * compilation fail (-EINVAL), and compiles once both halves are written.
 */
#include <errno.h>
#include <stdint.h>

#include "t_helpers.h"

#define LEN 256

static struct nrn_device *dev;

/* y [2, LEN] = x reversed [LEN] (broadcast over rows) + b [2, 1]. */
static void test_reversed_broadcast(struct nrn_stream *s)
{
	struct nrn_buffer *in = t_buffer(dev, 8192), *out = t_buffer(dev, 8192), *big = t_buffer(dev, 65536);
	struct nrn_graph_arg args[3] = { { in, 512, LEN * 4, 0 }, { in, 4096, 8, 0 },
					 { out, 0, 2 * LEN * 4, 0 } };
	struct nrn_graph_arg largs[3] = { { big, 20000, LEN * 4, 0 }, { big, 128, 8, 0 },
					  { big, 32768, 2 * LEN * 4, 0 } };
	struct nrn_tensor_desc x = { .buf = in, .offset = 512 + (LEN - 1) * 4,
				     .dtype = NISA_F32, .ndim = 1, .shape = { LEN },
				     .strides = { -1 } };
	struct nrn_tensor_desc b = { .buf = in, .offset = 4096, .dtype = NISA_F32,
				     .ndim = 2, .shape = { 2, 1 }, .strides = { 1, 0 } };
	struct nrn_tensor_desc y;
	int64_t yshape[2] = { 2, LEN };
	struct nrn_capture *c = NULL;
	struct nrn_graph *g = NULL;
	struct nrn_graph_info info;
	float xv[LEN], bv[2] = { 1000, -1000 }, yv[2 * LEN];

	nrn_tensor_contiguous(&y, out, 0, NISA_F32, 2, yshape);
	t_check_ret(nrn_stream_begin_capture(s), 0);
	t_check_ret(nrn_op_binary(s, NISA_BIN_ADD, &y, &x, &b, 1), 0);
	t_check_ret(nrn_stream_end_capture(s, &c), 0);
	/* Without the true extents, x would straddle its argument. */
	t_check_ret(nrn_graph_compile(c, args, 3, 0, &g), 0);
	nrn_capture_destroy(c);
	if (!g)
		goto out;
	t_check_ret(nrn_graph_info(g, &info), 0);
	t_check(info.arena_size == 0 && info.const_size == 0);
	for (int i = 0; i < LEN; i++)
		xv[i] = (float)i;
	t_check_ret(nrn_copy_h2d(big, 20000, xv, sizeof(xv)), 0);
	t_check_ret(nrn_copy_h2d(big, 128, bv, sizeof(bv)), 0);
	t_check_ret(nrn_graph_launch(s, g, largs, NULL, 0), 0);
	t_check_ret(nrn_stream_copy_d2h(s, yv, big, 32768, sizeof(yv)), 0);
	for (int r = 0; r < 2; r++)
		for (int i = 0; i < LEN; i++)
			t_check(yv[r * LEN + i] == (float)(LEN - 1 - i) + bv[r]);
out:
	nrn_graph_destroy(g);
	nrn_buffer_free(in);
	nrn_buffer_free(out);
	nrn_buffer_free(big);
}

/*
 * A fresh argument (new memory at each launch) written only in half, or
 * read before it is written, is refused; written whole it compiles. Unknown
 * argument flags are refused.
 */
static void test_fresh_argument(struct nrn_stream *s)
{
	struct nrn_buffer *out = t_buffer(dev, LEN * 4);
	struct nrn_graph_arg arg = { out, 0, LEN * 4, NRN_GRAPH_ARG_FRESH };
	struct nrn_tensor_desc whole, half;
	int64_t shape[1] = { LEN }, hshape[1] = { LEN / 2 };
	struct nrn_capture *c = NULL;
	struct nrn_graph *g = NULL;

	nrn_tensor_contiguous(&whole, out, 0, NISA_F32, 1, shape);
	nrn_tensor_contiguous(&half, out, 0, NISA_F32, 1, hshape);
	for (int how = 0; how < 4; how++) {
		/* 0: half written; 1: read, then written; 2, 3: written whole */
		int want = how < 2 ? -EINVAL : 0;

		t_check_ret(nrn_stream_begin_capture(s), 0);
		if (how == 1)
			t_check_ret(nrn_op_unary(s, NISA_UN_NEG, &whole, &whole), 0);
		t_check_ret(nrn_op_fill(s, how ? &whole : &half, 1), 0);
		t_check_ret(nrn_stream_end_capture(s, &c), 0);
		arg.flags = how == 3 ? 0 : NRN_GRAPH_ARG_FRESH;
		t_check_ret(nrn_graph_compile(c, &arg, 1, 0, &g), want);
		nrn_graph_destroy(g);
		g = NULL;
		if (how == 3) {
			arg.flags = 0x80;
			t_check_ret(nrn_graph_compile(c, &arg, 1, 0, &g), -EINVAL);
		}
		nrn_capture_destroy(c);
	}
	nrn_buffer_free(out);
}

/* A scratch tensor read whole after only its first half was written. */
static void test_half_written_scratch(struct nrn_stream *s)
{
	struct nrn_buffer *scr = t_buffer(dev, LEN * 4), *out = t_buffer(dev, LEN * 4);
	struct nrn_graph_arg arg = { out, 0, LEN * 4, 0 };
	struct nrn_tensor_desc whole, half, rest, y;
	int64_t shape[1] = { LEN }, hshape[1] = { LEN / 2 };
	struct nrn_capture *c = NULL;
	struct nrn_graph *g = NULL;

	nrn_tensor_contiguous(&whole, scr, 0, NISA_F32, 1, shape);
	nrn_tensor_contiguous(&half, scr, 0, NISA_F32, 1, hshape);
	nrn_tensor_contiguous(&rest, scr, LEN * 2, NISA_F32, 1, hshape);
	nrn_tensor_contiguous(&y, out, 0, NISA_F32, 1, shape);
	for (int both = 0; both < 2; both++) {
		t_check_ret(nrn_stream_begin_capture(s), 0);
		t_check_ret(nrn_op_fill(s, &half, 1), 0);
		if (both)
			t_check_ret(nrn_op_fill(s, &rest, 2), 0);
		t_check_ret(nrn_op_unary(s, NISA_UN_NEG, &y, &whole), 0);
		t_check_ret(nrn_stream_end_capture(s, &c), 0);
		t_check_ret(nrn_graph_compile(c, &arg, 1, 0, &g), both ? 0 : -EINVAL);
		nrn_capture_destroy(c);
		if (g) {
			struct nrn_graph_info info;
			struct nrn_buffer *arena;
			float yv[LEN];

			t_check_ret(nrn_graph_info(g, &info), 0);
			t_check(info.arena_size == LEN * 4);
			arena = t_buffer(dev, info.arena_size);
			t_check_ret(nrn_graph_launch(s, g, &arg, arena, 0), 0);
			t_check_ret(nrn_stream_copy_d2h(s, yv, out, 0, sizeof(yv)), 0);
			t_check(yv[0] == -1 && yv[LEN / 2 - 1] == -1 && yv[LEN / 2] == -2 &&
				yv[LEN - 1] == -2);
			nrn_buffer_free(arena);
			nrn_graph_destroy(g);
			g = NULL;
		}
	}
	nrn_buffer_free(scr);
	nrn_buffer_free(out);
}

int main(void)
{
	struct nrn_stream *s;

	dev = t_open_device();
	t_check_ret(nrn_stream_create(dev, &s), 0);
	test_reversed_broadcast(s);
	test_half_written_scratch(s);
	test_fresh_argument(s);
	nrn_stream_destroy(s);
	nrn_device_close(dev);
	return t_exit();
}

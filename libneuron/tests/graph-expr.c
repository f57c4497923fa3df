// SPDX-License-Identifier: MIT
/*
 * Description: EXPR groups (an EXPR and its continuations, nrn_op_expr) in
 * captured graphs -- recorded with their operands, relocated onto other
 * buffers and offsets (the STEPS continuations' dst with the EXPR's), and
 * never split by a launch even when one starts three instructions before
 * a batch is full: the launch gives the eager bits.
 */
#include <errno.h>
#include <stdint.h>

#include "t_helpers.h"

#define N 16
#define MAT (N * N * 4)

static struct nrn_device *dev;

struct loc {
	struct nrn_buffer *buf;
	uint64_t off;
};

/* t = relu((a*b + c - d) * e) + 1) * 0.5, y = t*a + b - c + d after 253 fills. */
static void expr_program(struct nrn_stream *s, struct nrn_buffer *in, uint64_t in_off,
			 struct loc t, struct loc y, struct loc y2)
{
	struct nrn_tensor_desc x[5], tt, ty, ty2;
	const struct nrn_tensor_desc *i1[5] = { &x[0], &x[1], &x[2], &x[3], &x[4] };
	const struct nrn_tensor_desc *i2[5] = { &tt, &x[0], &x[1], &x[2], &x[3] };
	int64_t shape[1] = { N * N };
	struct nrn_expr e1, e2;

	for (int i = 0; i < 5; i++)
		nrn_tensor_contiguous(&x[i], in, in_off + (uint64_t)i * MAT, NISA_F32, 1, shape);
	nrn_tensor_contiguous(&tt, t.buf, t.off, NISA_F32, 1, shape);
	nrn_tensor_contiguous(&ty, y.buf, y.off, NISA_F32, 1, shape);
	nrn_tensor_contiguous(&ty2, y2.buf, y2.off, NISA_F32, 1, shape);
	nrn_expr_init(&e1);
	nrn_expr_binary(&e1, NISA_BIN_MUL, 5, NISA_F32, 0, 1, 1);
	nrn_expr_binary(&e1, NISA_BIN_ADD, 6, NISA_F32, 5, 2, 1);
	nrn_expr_binary(&e1, NISA_BIN_SUB, 7, NISA_F32, 6, 3, 1);
	nrn_expr_binary(&e1, NISA_BIN_MUL, 8, NISA_F32, 7, 4, 1);
	nrn_expr_unary(&e1, NISA_UN_RELU, 9, NISA_F32, 8, 0, 0);
	nrn_expr_binary_scalar(&e1, NISA_BIN_ADD, 10, NISA_F32, 9, 1, 1, 0);
	nrn_expr_binary_scalar(&e1, NISA_BIN_MUL, 11, NISA_F32, 10, 0.5, 1, 0);
	nrn_expr_init(&e2);
	nrn_expr_binary(&e2, NISA_BIN_MUL, 5, NISA_F32, 0, 1, 1);
	nrn_expr_binary(&e2, NISA_BIN_ADD, 6, NISA_F32, 5, 2, 1);
	nrn_expr_binary(&e2, NISA_BIN_SUB, 7, NISA_F32, 6, 3, 1);
	nrn_expr_binary(&e2, NISA_BIN_ADD, 8, NISA_F32, 7, 4, 1);
	for (int k = 0; k < 253; k++)
		t_check_ret(nrn_op_fill(s, &ty2, k), 0);
	t_check_ret(nrn_op_expr(s, &tt, i1, 5, &e1), 0);	/* 4 instructions */
	t_check_ret(nrn_op_expr(s, &ty, i2, 5, &e2), 0);	/* 3 instructions */
}

/* EXPR groups captured, relocated, and never split by a launch's batches. */
static void test_expr_groups(struct nrn_stream *s)
{
	struct nrn_buffer *in = t_buffer(dev, 5 * MAT), *out = t_buffer(dev, 2 * MAT);
	struct nrn_buffer *scr = t_buffer(dev, MAT), *big = t_buffer(dev, 16 * MAT);
	struct nrn_buffer *arena = NULL;
	struct nrn_graph_arg args[3] = { { in, 0, 5 * MAT, 0 }, { out, 0, MAT, 0 },
					 { out, MAT, MAT, 0 } };
	struct nrn_graph_arg largs[3] = { { big, 8 * MAT + 64, 5 * MAT, 0 },
					  { big, 64, MAT, 0 }, { big, 2 * MAT, MAT, 0 } };
	struct nrn_capture *c = NULL;
	struct nrn_graph *g = NULL;
	struct nrn_graph_info info;
	static float v[5 * N * N], want[2][N * N], got[2][N * N];

	for (int i = 0; i < 5 * N * N; i++)
		v[i] = (float)((i * 37) % 101) / 16 - 3;
	t_check_ret(nrn_copy_h2d(in, 0, v, sizeof(v)), 0);
	t_check_ret(nrn_copy_h2d(big, 8 * MAT + 64, v, sizeof(v)), 0);
	t_check_ret(nrn_stream_begin_capture(s), 0);
	expr_program(s, in, 0, (struct loc){ scr, 0 }, (struct loc){ out, 0 },
		     (struct loc){ out, MAT });
	t_check_ret(nrn_stream_end_capture(s, &c), 0);
	t_check(nrn_capture_count(c) == 253 + 4 + 3);
	t_check_ret(nrn_graph_compile(c, args, 3, 0, &g), 0);
	nrn_capture_destroy(c);
	/* Eagerly, for the bits to compare with. */
	expr_program(s, in, 0, (struct loc){ scr, 0 }, (struct loc){ out, 0 },
		     (struct loc){ out, MAT });
	t_check_ret(nrn_stream_copy_d2h(s, want, out, 0, sizeof(want)), 0);
	t_check(want[1][0] == 252);
	if (!g)
		goto out;
	t_check_ret(nrn_graph_info(g, &info), 0);
	t_check(info.insns == 260 && info.arena_size == MAT);
	arena = t_buffer(dev, info.arena_size);
	t_check_ret(nrn_graph_launch(s, g, largs, arena, 0), 0);
	t_check_ret(nrn_stream_copy_d2h(s, got[0], big, 64, MAT), 0);
	t_check_ret(nrn_stream_copy_d2h(s, got[1], big, 2 * MAT, MAT), 0);
	t_check(!memcmp(got, want, sizeof(got)));
out:
	nrn_graph_destroy(g);
	nrn_buffer_free(arena);
	nrn_buffer_free(in);
	nrn_buffer_free(out);
	nrn_buffer_free(scr);
	nrn_buffer_free(big);
}

int main(void)
{
	struct nrn_stream *s;

	dev = t_open_device();
	t_check_ret(nrn_stream_create(dev, &s), 0);
	test_expr_groups(s);
	nrn_stream_destroy(s);
	nrn_device_close(dev);
	return t_exit();
}

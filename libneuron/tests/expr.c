// SPDX-License-Identifier: MIT
/*
 * Description: nrn_op_expr (one EXPR instruction per chain) gives the same
 * bits as the unfused operations: float32 with broadcast inputs over five
 * dimensions and a transposed input, bf16/f16/bool intermediates, eight
 * inputs and twelve steps issued 120 times (groups across batch
 * boundaries), a captured and compiled EXPR; malformed programs are
 * -EINVAL / -E2BIG; an integer division by zero fails the job; the
 * disassembler prints programs.
 */
#include <errno.h>
#include <math.h>

#include "t_helpers.h"

static struct nrn_device *dev;
static struct nrn_stream *s;

/* A device buffer of @n elements of @dtype, filled with values in [-4, 4). */
static struct nrn_buffer *mkbuf(size_t n, enum nisa_dtype dtype, unsigned int seed)
{
	size_t es = nisa_dtype_size(dtype), bytes = n * es;
	struct nrn_buffer *b;
	float *f = malloc(n * sizeof(float));

	for (size_t i = 0; i < n; i++)
		f[i] = (float)((int)((i * 2654435761u + seed * 7919u) % 4001) - 2000) / 500.0f;
	t_check_ret(nrn_buffer_alloc(dev, bytes ? bytes : 4, NRN_MEM_DEVICE, &b), 0);
	if (dtype == NISA_F32)
		t_check_ret(nrn_copy_h2d(b, 0, f, bytes), 0);
	free(f);
	return b;
}

/* The bytes of two device regions are equal (and @bytes long). */
static int same_bytes(struct nrn_buffer *a, size_t aoff, struct nrn_buffer *b,
		      size_t boff, size_t bytes)
{
	unsigned char *x = malloc(bytes), *y = malloc(bytes);
	int same;

	t_check_ret(nrn_stream_copy_d2h(s, x, a, aoff, bytes), 0);
	t_check_ret(nrn_stream_copy_d2h(s, y, b, boff, bytes), 0);
	same = !memcmp(x, y, bytes);
	free(x);
	free(y);
	return same;
}

/* silu(x * w + b), x transposed [2,3,4,5,6], w [4,1,1], b [6]. */
static void test_f32_broadcast_5d(void)
{
	const int64_t xs[5] = { 2, 3, 4, 6, 5 }, ds[5] = { 2, 3, 4, 5, 6 };
	const int64_t ws[3] = { 4, 1, 1 }, bs[1] = { 6 };
	size_t n = 2 * 3 * 4 * 5 * 6;
	struct nrn_buffer *bx = mkbuf(n, NISA_F32, 1), *bw = mkbuf(4, NISA_F32, 2);
	struct nrn_buffer *bb = mkbuf(6, NISA_F32, 3), *bo = mkbuf(n, NISA_F32, 4);
	struct nrn_buffer *br = mkbuf(3 * n, NISA_F32, 5);
	struct nrn_tensor_desc x, w, b, out, ref, t1, t2;
	const struct nrn_tensor_desc *in[3] = { &x, &w, &b };
	struct nrn_expr e;
	float xh[720], oh[720], wh[4], bh[6];

	nrn_tensor_contiguous(&x, bx, 0, NISA_F32, 5, xs);
	x.shape[3] = 5;		/* the transpose of the last two dims */
	x.shape[4] = 6;
	x.strides[3] = 1;
	x.strides[4] = 5;
	nrn_tensor_contiguous(&w, bw, 0, NISA_F32, 3, ws);
	nrn_tensor_contiguous(&b, bb, 0, NISA_F32, 1, bs);
	nrn_tensor_contiguous(&out, bo, 0, NISA_F32, 5, ds);
	nrn_tensor_contiguous(&ref, br, 0, NISA_F32, 5, ds);
	nrn_tensor_contiguous(&t1, br, n * 4, NISA_F32, 5, ds);
	nrn_tensor_contiguous(&t2, br, 2 * n * 4, NISA_F32, 5, ds);

	nrn_expr_init(&e);
	t_check_ret(nrn_expr_binary(&e, NISA_BIN_MUL, 3, NISA_F32, 0, 1, 1.0), 0);
	t_check_ret(nrn_expr_binary(&e, NISA_BIN_ADD, 3, NISA_F32, 3, 2, 1.0), 0);
	t_check_ret(nrn_expr_unary(&e, NISA_UN_SILU, 4, NISA_F32, 3, 0, 0), 0);
	t_check_ret(nrn_op_expr(s, &out, in, 3, &e), 0);

	t_check_ret(nrn_op_binary(s, NISA_BIN_MUL, &t1, &x, &w, 1.0), 0);
	t_check_ret(nrn_op_binary(s, NISA_BIN_ADD, &t2, &t1, &b, 1.0), 0);
	t_check_ret(nrn_op_unary(s, NISA_UN_SILU, &ref, &t2), 0);
	t_check(same_bytes(bo, 0, br, 0, n * 4));

	/* And it is the expression, on the CPU to float32's precision. */
	t_check_ret(nrn_stream_copy_d2h(s, xh, bx, 0, n * 4), 0);
	t_check_ret(nrn_stream_copy_d2h(s, oh, bo, 0, n * 4), 0);
	t_check_ret(nrn_stream_copy_d2h(s, wh, bw, 0, 16), 0);
	t_check_ret(nrn_stream_copy_d2h(s, bh, bb, 0, 24), 0);
	for (size_t i = 0; i < n; i++) {
		size_t j = i % 6, k = (i / 6) % 5, c = (i / 30) % 4, lead = i / 30;
		double v = xh[lead * 30 + j * 5 + k] * wh[c] + bh[j];
		double want = v / (1 + exp(-v));

		if (fabs(oh[i] - want) > 1e-5 * fmax(1, fabs(want))) {
			t_check(!"silu(x * w + b)");
			break;
		}
	}
	nrn_buffer_free(bx);
	nrn_buffer_free(bw);
	nrn_buffer_free(bb);
	nrn_buffer_free(bo);
	nrn_buffer_free(br);
}

/*
 * where(a > 0, tanh(f16(bf16(a * b) + c)), 0.5): bf16, f16 and bool
 * intermediates, rounded inside the program as the temporaries round.
 */
static void test_low_precision(void)
{
	const int64_t sh[1] = { 1000 };
	struct nrn_buffer *ba = mkbuf(1000, NISA_F32, 6), *bb = mkbuf(1000, NISA_F32, 7);
	struct nrn_buffer *bc = mkbuf(1000, NISA_F32, 8), *bo = mkbuf(1000, NISA_F32, 9);
	struct nrn_buffer *bt = mkbuf(8000, NISA_F32, 10);
	struct nrn_tensor_desc a, b, c, out, t1, t2, t3, t4, t5, ref;
	const struct nrn_tensor_desc *in[3] = { &a, &b, &c };
	struct nrn_expr e;

	nrn_tensor_contiguous(&a, ba, 0, NISA_F32, 1, sh);
	nrn_tensor_contiguous(&b, bb, 0, NISA_F32, 1, sh);
	nrn_tensor_contiguous(&c, bc, 0, NISA_F32, 1, sh);
	nrn_tensor_contiguous(&out, bo, 0, NISA_F32, 1, sh);
	nrn_tensor_contiguous(&t1, bt, 0, NISA_BF16, 1, sh);
	nrn_tensor_contiguous(&t2, bt, 4096, NISA_F16, 1, sh);
	nrn_tensor_contiguous(&t3, bt, 8192, NISA_F32, 1, sh);
	nrn_tensor_contiguous(&t4, bt, 12288, NISA_BOOL, 1, sh);
	nrn_tensor_contiguous(&t5, bt, 16384, NISA_F32, 1, sh);
	nrn_tensor_contiguous(&ref, bt, 20480, NISA_F32, 1, sh);

	nrn_expr_init(&e);
	nrn_expr_binary(&e, NISA_BIN_MUL, 3, NISA_BF16, 0, 1, 1.0);
	nrn_expr_binary(&e, NISA_BIN_ADD, 3, NISA_F16, 3, 2, 1.0);
	nrn_expr_unary(&e, NISA_UN_TANH, 3, NISA_F32, 3, 0, 0);
	nrn_expr_compare_scalar(&e, NISA_CMP_GT, 4, NISA_BOOL, 0, 0.0);
	nrn_expr_fill(&e, 5, NISA_F32, 0.5);
	t_check_ret(nrn_expr_where(&e, 6, NISA_F32, 4, 3, 5), 0);
	t_check_ret(nrn_op_expr(s, &out, in, 3, &e), 0);

	t_check_ret(nrn_op_binary(s, NISA_BIN_MUL, &t1, &a, &b, 1.0), 0);
	t_check_ret(nrn_op_binary(s, NISA_BIN_ADD, &t2, &t1, &c, 1.0), 0);
	t_check_ret(nrn_op_unary(s, NISA_UN_TANH, &t3, &t2), 0);
	t_check_ret(nrn_op_compare_scalar(s, NISA_CMP_GT, &t4, &a, 0.0), 0);
	t_check_ret(nrn_op_fill(s, &t5, 0.5), 0);
	t_check_ret(nrn_op_where(s, &ref, &t4, &t3, &t5), 0);
	t_check(same_bytes(bo, 0, bt, 20480, 4000));

	/* Without the bf16 and f16 roundings the bits differ. */
	e.steps[0].dtype = NISA_F32;
	e.steps[1].dtype = NISA_F32;
	t_check_ret(nrn_op_expr(s, &out, in, 3, &e), 0);
	t_check(!same_bytes(bo, 0, bt, 20480, 4000));
	nrn_buffer_free(ba);
	nrn_buffer_free(bb);
	nrn_buffer_free(bc);
	nrn_buffer_free(bo);
	nrn_buffer_free(bt);
}

/* Eight inputs, twelve steps: the unfused chain, step by step. */
static void build_long(struct nrn_expr *e)
{
	nrn_expr_init(e);
	nrn_expr_binary(e, NISA_BIN_ADD, 8, NISA_F32, 0, 1, 0.5);
	nrn_expr_binary(e, NISA_BIN_MUL, 8, NISA_F32, 8, 2, 1.0);
	nrn_expr_binary(e, NISA_BIN_SUB, 8, NISA_F32, 8, 3, 2.0);
	nrn_expr_binary(e, NISA_BIN_MAX, 8, NISA_F32, 8, 4, 1.0);
	nrn_expr_binary(e, NISA_BIN_MIN, 8, NISA_F32, 8, 5, 1.0);
	nrn_expr_unary(e, NISA_UN_SIGMOID, 9, NISA_F32, 6, 0, 0);
	nrn_expr_binary(e, NISA_BIN_MUL, 8, NISA_F32, 8, 9, 1.0);
	nrn_expr_binary(e, NISA_BIN_DIV, 8, NISA_F32, 8, 7, 1.0);
	nrn_expr_unary(e, NISA_UN_ABS, 8, NISA_F32, 8, 0, 0);
	nrn_expr_unary(e, NISA_UN_SQRT, 8, NISA_F32, 8, 0, 0);
	nrn_expr_binary_scalar(e, NISA_BIN_SUB, 8, NISA_F32, 8, 1.0, 1.0, 1);
	nrn_expr_unary(e, NISA_UN_LEAKY_RELU, 15, NISA_F32, 8, 0.125, 0);
}

static void unfused_long(const struct nrn_tensor_desc *in, const struct nrn_tensor_desc *t,
			 const struct nrn_tensor_desc *ref)
{
	t_check_ret(nrn_op_binary(s, NISA_BIN_ADD, &t[0], &in[0], &in[1], 0.5), 0);
	t_check_ret(nrn_op_binary(s, NISA_BIN_MUL, &t[1], &t[0], &in[2], 1.0), 0);
	t_check_ret(nrn_op_binary(s, NISA_BIN_SUB, &t[2], &t[1], &in[3], 2.0), 0);
	t_check_ret(nrn_op_binary(s, NISA_BIN_MAX, &t[3], &t[2], &in[4], 1.0), 0);
	t_check_ret(nrn_op_binary(s, NISA_BIN_MIN, &t[4], &t[3], &in[5], 1.0), 0);
	t_check_ret(nrn_op_unary(s, NISA_UN_SIGMOID, &t[5], &in[6]), 0);
	t_check_ret(nrn_op_binary(s, NISA_BIN_MUL, &t[6], &t[4], &t[5], 1.0), 0);
	t_check_ret(nrn_op_binary(s, NISA_BIN_DIV, &t[7], &t[6], &in[7], 1.0), 0);
	t_check_ret(nrn_op_unary(s, NISA_UN_ABS, &t[8], &t[7]), 0);
	t_check_ret(nrn_op_unary(s, NISA_UN_SQRT, &t[9], &t[8]), 0);
	t_check_ret(nrn_op_binary_scalar(s, NISA_BIN_SUB, &t[10], &t[9], 1.0, 1.0, 1), 0);
	t_check_ret(nrn_op_unary_param(s, NISA_UN_LEAKY_RELU, ref, &t[10], 0.125, 0), 0);
}

/* 120 groups of five instructions each: batches end inside none of them. */
static void test_many_inputs_batches(void)
{
	enum { REPS = 120, LEN = 37 };
	const int64_t sh[1] = { LEN };
	struct nrn_buffer *bi = mkbuf(8 * REPS * LEN, NISA_F32, 11);
	struct nrn_buffer *bo = mkbuf(REPS * LEN, NISA_F32, 12);
	struct nrn_buffer *br = mkbuf(REPS * LEN, NISA_F32, 13);
	struct nrn_buffer *bt = mkbuf(11 * LEN, NISA_F32, 14);
	struct nrn_tensor_desc in[8], t[11], out, ref;
	const struct nrn_tensor_desc *ip[8];
	struct nrn_expr e;

	build_long(&e);
	t_check_ret(e.nsteps, 12);
	for (unsigned int i = 0; i < 11; i++)
		nrn_tensor_contiguous(&t[i], bt, i * LEN * 4, NISA_F32, 1, sh);
	for (unsigned int r = 0; r < REPS; r++) {
		for (unsigned int i = 0; i < 8; i++) {
			nrn_tensor_contiguous(&in[i], bi, (r * 8 + i) * LEN * 4, NISA_F32, 1, sh);
			ip[i] = &in[i];
		}
		nrn_tensor_contiguous(&out, bo, r * LEN * 4, NISA_F32, 1, sh);
		t_check_ret(nrn_op_expr(s, &out, ip, 8, &e), 0);
	}
	for (unsigned int r = 0; r < REPS; r++) {
		for (unsigned int i = 0; i < 8; i++)
			nrn_tensor_contiguous(&in[i], bi, (r * 8 + i) * LEN * 4, NISA_F32, 1, sh);
		nrn_tensor_contiguous(&ref, br, r * LEN * 4, NISA_F32, 1, sh);
		unfused_long(in, t, &ref);
	}
	t_check_ret(nrn_stream_sync(s), 0);
	t_check(same_bytes(bo, 0, br, 0, REPS * LEN * 4));
	nrn_buffer_free(bi);
	nrn_buffer_free(bo);
	nrn_buffer_free(br);
	nrn_buffer_free(bt);
}

/* An EXPR captured, compiled and launched on other buffers: same bits. */
static void test_capture(void)
{
	const int64_t sh[2] = { 8, 40 };
	struct nrn_buffer *bx = mkbuf(320, NISA_F32, 15), *by = mkbuf(320, NISA_F32, 16);
	struct nrn_buffer *bx2 = mkbuf(400, NISA_F32, 17), *by2 = mkbuf(400, NISA_F32, 18);
	struct nrn_buffer *be = mkbuf(400, NISA_F32, 19);
	struct nrn_tensor_desc x, y, x2, y2;
	const struct nrn_tensor_desc *in[1] = { &x }, *in2[1] = { &x2 };
	struct nrn_graph_arg args[2] = { { bx, 0, 1280, 0 }, { by, 0, 1280, 0 } };
	struct nrn_capture *c = NULL;
	struct nrn_graph *g = NULL;
	struct nrn_expr e;

	nrn_tensor_contiguous(&x, bx, 0, NISA_F32, 2, sh);
	nrn_tensor_contiguous(&y, by, 0, NISA_F32, 2, sh);
	nrn_tensor_contiguous(&x2, bx2, 256, NISA_F32, 2, sh);
	nrn_tensor_contiguous(&y2, be, 256, NISA_F32, 2, sh);
	nrn_expr_init(&e);
	nrn_expr_unary(&e, NISA_UN_EXP, 1, NISA_BF16, 0, 0, 0);
	nrn_expr_binary(&e, NISA_BIN_MUL, 1, NISA_F32, 1, 0, 1.0);
	t_check_ret(nrn_stream_begin_capture(s), 0);
	t_check_ret(nrn_op_expr(s, &y, in, 1, &e), 0);
	t_check_ret(nrn_stream_end_capture(s, &c), 0);
	if (c) {
		t_check_ret(nrn_graph_compile(c, args, 2, 0, &g), 0);
		nrn_capture_destroy(c);
	}
	if (g) {
		args[0] = (struct nrn_graph_arg){ bx2, 256, 1280, 0 };
		args[1] = (struct nrn_graph_arg){ by2, 256, 1280, 0 };
		t_check_ret(nrn_graph_launch(s, g, args, NULL, 0), 0);
		nrn_graph_destroy(g);
	}
	t_check_ret(nrn_op_expr(s, &y2, in2, 1, &e), 0);
	t_check(same_bytes(by2, 256, be, 256, 1280));
	nrn_buffer_free(bx);
	nrn_buffer_free(by);
	nrn_buffer_free(bx2);
	nrn_buffer_free(by2);
	nrn_buffer_free(be);
}

static void test_errors(void)
{
	const int64_t sh[1] = { 16 }, sh2[1] = { 15 };
	struct nrn_buffer *b = mkbuf(64, NISA_F32, 20);
	struct nrn_tensor_desc x, o, bad;
	const struct nrn_tensor_desc *in[9] = { &x, &x, &x, &x, &x, &x, &x, &x, &x };
	const struct nrn_tensor_desc *inb[1] = { &bad };
	struct nrn_expr e;

	nrn_tensor_contiguous(&x, b, 0, NISA_F32, 1, sh);
	nrn_tensor_contiguous(&o, b, 128, NISA_F32, 1, sh);
	nrn_tensor_contiguous(&bad, b, 0, NISA_F32, 1, sh2);
	nrn_expr_init(&e);
	t_check_ret(nrn_op_expr(s, &o, in, 1, &e), -EINVAL);	/* no steps */
	t_check_ret(nrn_expr_unary(&e, NISA_UN_EXP, 16, NISA_F32, 0, 0, 0), -EINVAL);
	t_check_ret(nrn_op_expr(s, &o, in, 1, &e), -EINVAL);	/* remembered */
	nrn_expr_init(&e);
	t_check_ret(nrn_expr_unary(&e, NISA_NUM_UNARY, 1, NISA_F32, 0, 0, 0), -EINVAL);
	nrn_expr_init(&e);
	t_check_ret(nrn_expr_unary(&e, NISA_UN_EXP, 1, NISA_NUM_DTYPES, 0, 0, 0), -EINVAL);
	nrn_expr_init(&e);
	t_check_ret(nrn_expr_binary(&e, NISA_BIN_ADD, 2, NISA_F32, 0, 5, 1.0), 0);
	t_check_ret(nrn_op_expr(s, &o, in, 1, &e), -EINVAL);	/* r5 not set */
	t_check_ret(nrn_op_expr(s, &o, in, 6, &e), 0);
	t_check_ret(nrn_op_expr(s, &o, in, 9, &e), -E2BIG);
	nrn_expr_init(&e);
	t_check_ret(nrn_expr_unary(&e, NISA_UN_EXP, 1, NISA_BF16, 0, 0, 0), 0);
	t_check_ret(nrn_op_expr(s, &o, in, 1, &e), -EINVAL);	/* dst f32 */
	nrn_expr_init(&e);
	t_check_ret(nrn_expr_unary(&e, NISA_UN_EXP, 1, NISA_F32, 0, 0, 0), 0);
	t_check_ret(nrn_op_expr(s, &o, inb, 1, &e), -EINVAL);	/* 15 vs 16 */
	for (unsigned int i = 1; i < NISA_EXPR_MAX_STEPS; i++)
		t_check_ret(nrn_expr_unary(&e, NISA_UN_NEG, 1, NISA_F32, 1, 0, 0), 0);
	t_check_ret(nrn_expr_unary(&e, NISA_UN_NEG, 1, NISA_F32, 1, 0, 0), -E2BIG);
	t_check_ret(nrn_stream_sync(s), 0);
	nrn_buffer_free(b);
}

/*
 * Integer division by zero fails the job with NISA_ERR_DIV_ZERO: an
 * integer floor-divide step of an EXPR, and the unfused BINARY (which
 * writes nothing); a divisor with no zero computes.
 */
static void test_int_div_zero(void)
{
	const int64_t sh[1] = { 4 };
	const int64_t x[4] = { 7, -7, 9, 10 }, y[4] = { 2, 3, 0, 5 }, y1[4] = { 2, 3, 4, 5 };
	int64_t out[4], keep[4] = { 1, 2, 3, 4 };
	struct nrn_buffer *b;
	struct nrn_tensor_desc tx, ty, to;
	const struct nrn_tensor_desc *in[2] = { &tx, &ty };
	struct nrn_expr e;

	t_check_ret(nrn_buffer_alloc(dev, 4096, NRN_MEM_DEVICE, &b), 0);
	nrn_tensor_contiguous(&tx, b, 0, NISA_I64, 1, sh);
	nrn_tensor_contiguous(&ty, b, 64, NISA_I64, 1, sh);
	nrn_tensor_contiguous(&to, b, 128, NISA_I64, 1, sh);
	t_check_ret(nrn_stream_copy_h2d(s, b, 0, x, sizeof(x)), 0);
	t_check_ret(nrn_stream_copy_h2d(s, b, 64, y, sizeof(y)), 0);
	nrn_expr_init(&e);
	t_check_ret(nrn_expr_binary(&e, NISA_BIN_FLOORDIV, 2, NISA_I64, 0, 1, 1.0), 0);
	t_check_ret(nrn_expr_binary_scalar(&e, NISA_BIN_ADD, 3, NISA_I64, 2, 1, 1.0, 0), 0);
	t_check_ret(nrn_op_expr(s, &to, in, 2, &e), 0);
	t_check_ret(nrn_stream_sync(s), -EIO);
	t_check(nrn_stream_device_error(s) == NISA_ERR_DIV_ZERO);
	t_check_ret(nrn_stream_copy_h2d(s, b, 128, keep, sizeof(keep)), 0);
	t_check_ret(nrn_op_binary(s, NISA_BIN_REM, &to, &tx, &ty, 1.0), 0);
	t_check_ret(nrn_stream_sync(s), -EIO);
	t_check(nrn_stream_device_error(s) == NISA_ERR_DIV_ZERO);
	t_check_ret(nrn_stream_copy_d2h(s, out, b, 128, sizeof(out)), 0);
	t_check(!memcmp(out, keep, sizeof(out)));
	t_check_ret(nrn_stream_copy_h2d(s, b, 64, y1, sizeof(y1)), 0);
	t_check_ret(nrn_op_expr(s, &to, in, 2, &e), 0);
	t_check_ret(nrn_stream_copy_d2h(s, out, b, 128, sizeof(out)), 0);
	t_check(out[0] == 4 && out[1] == -2 && out[2] == 3 && out[3] == 3);
	nrn_buffer_free(b);
}

/* The disassembler prints the program. */
static void test_format(void)
{
	struct nisa_insn code[2] = { { .opcode = NISA_INSN_EXPR, .subop = 2, .axis = 1 } };
	struct nisa_expr_steps st = { .opcode = NISA_INSN_EXPR_DATA,
				      .subop = NISA_EXPR_DATA_STEPS };
	char text[512];

	code[0].dst = (struct nisa_tensor){ .dtype = NISA_F32, .ndim = 1, .shape = { 8 },
					    .strides = { 1 } };
	code[0].src[0] = code[0].dst;
	st.dst = code[0].dst;
	st.step[0] = (struct nisa_expr_step){ .op = NISA_INSN_UNARY, .subop = NISA_UN_EXP,
					      .dtype = NISA_BF16, .dst = 1 };
	st.step[1] = (struct nisa_expr_step){ .op = NISA_INSN_BINARY, .subop = NISA_BIN_MUL,
					      .dtype = NISA_F32, .dst = 2, .src = { 1, 0 } };
	memcpy(&code[1], &st, sizeof(st));
	t_check_ret(nrn_insn_format(&code[0], text, sizeof(text)), 0);
	t_check(strstr(text, "expr steps=2 inputs=1") && strstr(text, "in0=s0+0:f32[8]"));
	t_check_ret(nrn_insn_format(&code[1], text, sizeof(text)), 0);
	t_check(strstr(text, "r1=unary.exp(r0)->bf16;") &&
		strstr(text, "r2=binary.mul(r1,r0)->f32;"));
	if (t_failures)
		fprintf(stderr, "format: %s\n", text);
}

int main(void)
{
	dev = t_open_device();
	t_check_ret(nrn_stream_create(dev, &s), 0);
	test_f32_broadcast_5d();
	test_low_precision();
	test_many_inputs_batches();
	test_capture();
	test_errors();
	test_int_div_zero();
	test_format();
	t_check_ret(nrn_stream_sync(s), 0);
	nrn_stream_destroy(s);
	nrn_device_close(dev);
	return t_exit();
}

// SPDX-License-Identifier: MIT
/*
 * Description: the fusion pass (nrn_graph_compile with NRN_GRAPH_FUSE): a
 * captured elementwise chain (broadcast inputs, a bf16 intermediate)
 * compiles to fewer instructions and less arena and gives the bits of the
 * unfused graph and of the eager operations; a chain whose intermediate is
 * an argument, or is read after the chain, keeps that intermediate
 * (written, with the right values); a long chain (five inputs, eight
 * steps, a temporary's memory written twice) fuses into one group; an
 * intermediate written through a self-overlapping (stride 0) dst stays.
 */
#include <errno.h>
#include <math.h>

#include "t_helpers.h"

#define R 64
#define C 50
#define N (R * C)

static struct nrn_device *dev;
static struct nrn_stream *s;

enum variant { CHAIN, ARG_INTERMEDIATE, READ_LATER, LONG, SELF_OVERLAP };

/* Inputs x [R,C], w [C], b [R,1], v [R,C], in @in; outputs in @out. */
struct bufs {
	struct nrn_buffer *in, *out, *scr;
};

#define X_OFF 0
#define W_OFF (N * 4)
#define B_OFF (W_OFF + C * 4)
#define V_OFF (B_OFF + R * 4)
#define IN_SIZE (V_OFF + N * 4)
#define Y_OFF 0
#define T2_OFF (N * 4)		/* ARG_INTERMEDIATE: t2 in the outputs */
#define S_OFF (2 * N * 4)	/* READ_LATER: sum(t1) per row */
#define OUT_SIZE (S_OFF + R * 4)

static void issue(enum variant v, const struct bufs *b)
{
	const int64_t rc[2] = { R, C }, c1[1] = { C }, r1[2] = { R, 1 };
	struct nrn_tensor_desc x, w, bb, vv, y, t1, t2, t3, t4, sum;

	nrn_tensor_contiguous(&x, b->in, X_OFF, NISA_F32, 2, rc);
	nrn_tensor_contiguous(&w, b->in, W_OFF, NISA_F32, 1, c1);
	nrn_tensor_contiguous(&bb, b->in, B_OFF, NISA_F32, 2, r1);
	nrn_tensor_contiguous(&vv, b->in, V_OFF, NISA_F32, 2, rc);
	nrn_tensor_contiguous(&y, b->out, Y_OFF, NISA_F32, 2, rc);
	nrn_tensor_contiguous(&t1, b->scr, 0, NISA_BF16, 2, rc);
	if (v == SELF_OVERLAP)
		t1.strides[0] = 0;	/* every row into one: the last stays */
	if (v == ARG_INTERMEDIATE)
		nrn_tensor_contiguous(&t2, b->out, T2_OFF, NISA_F32, 2, rc);
	else
		nrn_tensor_contiguous(&t2, b->scr, 65536, NISA_F32, 2, rc);
	nrn_tensor_contiguous(&t3, b->scr, 2 * 65536, NISA_F32, 2, rc);
	nrn_tensor_contiguous(&t4, b->scr, 3 * 65536, NISA_F32, 2, rc);
	nrn_tensor_contiguous(&sum, b->out, S_OFF, NISA_F32, 2, r1);

	/* t1 = bf16(x * w); t2 = t1 + 0.5 b; t3 = gelu(t2); y = max(t3, x) */
	t_check_ret(nrn_op_binary(s, NISA_BIN_MUL, &t1, &x, &w, 1.0), 0);
	t_check_ret(nrn_op_binary(s, NISA_BIN_ADD, &t2, &t1, &bb, 0.5), 0);
	t_check_ret(nrn_op_unary(s, NISA_UN_GELU_TANH, &t3, &t2), 0);
	if (v == LONG) {
		/* ... t4 = t3 * v; t4 = where(t4 > 0, t4, x); y = t4 - w, sigmoid */
		struct nrn_tensor_desc t5 = t3, t6 = t1;

		t5.offset = 4 * 65536;
		t6.offset = 5 * 65536;
		t6.dtype = NISA_BOOL;
		t_check_ret(nrn_op_binary(s, NISA_BIN_MUL, &t4, &t3, &vv, 1.0), 0);
		t_check_ret(nrn_op_compare_scalar(s, NISA_CMP_GT, &t6, &t4, 0.0), 0);
		t_check_ret(nrn_op_where(s, &t5, &t6, &t4, &x), 0);
		t_check_ret(nrn_op_binary(s, NISA_BIN_SUB, &t4, &t5, &w, 1.0), 0);
		t_check_ret(nrn_op_unary(s, NISA_UN_SIGMOID, &y, &t4), 0);
		return;
	}
	t_check_ret(nrn_op_binary(s, NISA_BIN_MAX, &y, &t3, &x, 1.0), 0);
	if (v == READ_LATER)
		t_check_ret(nrn_op_reduce(s, NISA_RED_SUM, &sum, &t1, 1), 0);
}

static unsigned int args_of(enum variant v, const struct bufs *b, struct nrn_graph_arg *a)
{
	unsigned int n = 0;

	a[n++] = (struct nrn_graph_arg){ b->in, 0, IN_SIZE, 0 };
	a[n++] = (struct nrn_graph_arg){ b->out, Y_OFF, N * 4, 0 };
	if (v == ARG_INTERMEDIATE)
		a[n++] = (struct nrn_graph_arg){ b->out, T2_OFF, N * 4, 0 };
	if (v == READ_LATER)
		a[n++] = (struct nrn_graph_arg){ b->out, S_OFF, R * 4, 0 };
	return n;
}

static struct nrn_buffer *zeroed(size_t size)
{
	struct nrn_buffer *buf;
	void *z = calloc(1, size);

	t_check_ret(nrn_buffer_alloc(dev, size, NRN_MEM_DEVICE, &buf), 0);
	t_check_ret(nrn_copy_h2d(buf, 0, z, size), 0);
	free(z);
	return buf;
}

/* Compile @v's capture with @flags, launch it; its outputs in *@outp. */
static void run_graph(enum variant v, unsigned int flags, struct nrn_buffer *in,
		      struct nrn_graph_info *info, void *outp)
{
	struct bufs b = { in, zeroed(OUT_SIZE), zeroed(6 * 65536) };
	struct nrn_graph_arg args[4];
	unsigned int n = args_of(v, &b, args);
	struct nrn_capture *c = NULL;
	struct nrn_graph *g = NULL;
	struct nrn_buffer *arena = NULL;

	memset(info, 0, sizeof(*info));
	t_check_ret(nrn_stream_begin_capture(s), 0);
	issue(v, &b);
	t_check_ret(nrn_stream_end_capture(s, &c), 0);
	if (c) {
		t_check_ret(nrn_graph_compile(c, args, n, flags, &g), 0);
		nrn_capture_destroy(c);
	}
	if (g) {
		t_check_ret(nrn_graph_info(g, info), 0);
		/* A zeroed arena: an intermediate fused away would read zeros. */
		if (info->arena_size)
			arena = zeroed(info->arena_size);
		t_check_ret(nrn_graph_launch(s, g, args, arena, 0), 0);
		nrn_graph_destroy(g);
	}
	t_check_ret(nrn_stream_copy_d2h(s, outp, b.out, 0, OUT_SIZE), 0);
	nrn_buffer_free(arena);
	nrn_buffer_free(b.out);
	nrn_buffer_free(b.scr);
}

static void check_variant(enum variant v, struct nrn_buffer *in)
{
	struct bufs eb = { in, zeroed(OUT_SIZE), zeroed(6 * 65536) };
	unsigned char *eager = malloc(OUT_SIZE), *plain = malloc(OUT_SIZE);
	unsigned char *fused = malloc(OUT_SIZE);
	struct nrn_graph_info ip, fi;

	issue(v, &eb);
	t_check_ret(nrn_stream_copy_d2h(s, eager, eb.out, 0, OUT_SIZE), 0);
	run_graph(v, 0, in, &ip, plain);
	run_graph(v, NRN_GRAPH_FUSE, in, &fi, fused);
	t_check(!memcmp(eager, plain, OUT_SIZE));
	t_check(!memcmp(eager, fused, OUT_SIZE));
	t_check(ip.fused == 0 && ip.insns == ip.captured_insns);
	t_check(fi.captured_insns == ip.captured_insns);
	switch (v) {
	case CHAIN:	/* four instructions, three inputs: EXPR + STEPS */
		t_check(fi.insns == 2 && fi.fused == 2);
		t_check(fi.arena_size < ip.arena_size);
		break;
	case LONG:	/* eight instructions: EXPR + INPUTS + 2 STEPS */
		t_check(fi.insns == 4 && fi.fused == 4);
		t_check(fi.arena_size < ip.arena_size);
		break;
	case ARG_INTERMEDIATE:
		/* t2 stays (its values checked above): two groups of two. */
		t_check(fi.insns == fi.captured_insns && fi.fused == 0);
		break;
	case SELF_OVERLAP:
		/* t1 is no register (one value per column): add/gelu/max fuse. */
		t_check(fi.insns == 3 && fi.fused == 1);
		break;
	case READ_LATER:
		/*
		 * t1 stays (the sum read it from a zeroed arena: checked above):
		 * MUL, then add/gelu/max as EXPR + STEPS, then the sum.
		 */
		t_check(fi.insns == 4 && fi.fused == 1);
		break;
	}
	if (t_failures)
		fprintf(stderr, "variant %d: insns %u/%u fused %u arena %llu/%llu\n", v,
			fi.insns, ip.insns, fi.fused, (unsigned long long)fi.arena_size,
			(unsigned long long)ip.arena_size);
	nrn_buffer_free(eb.out);
	nrn_buffer_free(eb.scr);
	free(eager);
	free(plain);
	free(fused);
}

int main(void)
{
	struct nrn_buffer *in;
	float *h = malloc(IN_SIZE);

	dev = t_open_device();
	t_check_ret(nrn_stream_create(dev, &s), 0);
	for (size_t i = 0; i < IN_SIZE / 4; i++)
		h[i] = (float)((int)((i * 2654435761u) % 4001) - 2000) / 700.0f;
	t_check_ret(nrn_buffer_alloc(dev, IN_SIZE, NRN_MEM_DEVICE, &in), 0);
	t_check_ret(nrn_copy_h2d(in, 0, h, IN_SIZE), 0);
	check_variant(CHAIN, in);
	check_variant(ARG_INTERMEDIATE, in);
	check_variant(READ_LATER, in);
	check_variant(LONG, in);
	check_variant(SELF_OVERLAP, in);
	t_check_ret(nrn_stream_sync(s), 0);
	nrn_buffer_free(in);
	free(h);
	nrn_stream_destroy(s);
	nrn_device_close(dev);
	return t_exit();
}

// SPDX-License-Identifier: MIT
/*
 * Description: the scheduling passes of nrn_graph_compile with
 * NRN_GRAPH_FUSE (graph-sched.c). A foreach SGD-with-momentum step as
 * AOTAutograd captures it (every tensor's mul, then every add, then the
 * copies back into parameters and buffers) compiles to one EXPR and one
 * BINARY per tensor, in place, no COPY; a copy whose destination is read
 * before it stays; a ReLU backward's compare and where fuse across the
 * FILL of their scalar; a consumer ordered behind an instruction that
 * cannot move stays behind it. Every variant gives the bits of the eager
 * operations and of the unfused graph.
 */
#include "t_helpers.h"

#define N0 3000
#define N1 700
#define NT (N0 + N1)
#define SCR (8 * 65536)

static struct nrn_device *dev;
static struct nrn_stream *s;

enum variant { SGD, READ_BETWEEN, RELU_BWD, ORDERED };

/*
 * The argument @st: parameters p (NT floats), momentum buffers b, grads g,
 * then outputs (4 floats at OUT_OFF). Scratch @scr is no argument.
 */
#define P_OFF 0
#define B_OFF (NT * 4)
#define G_OFF (2 * NT * 4)
#define OUT_OFF (3 * NT * 4)
#define ST_SIZE (OUT_OFF + 64)

static void vec(struct nrn_tensor_desc *t, struct nrn_buffer *buf, uint64_t off,
		uint8_t dtype, int64_t n)
{
	nrn_tensor_contiguous(t, buf, off, dtype, 1, &n);
}

static void issue(enum variant v, struct nrn_buffer *st, struct nrn_buffer *scr)
{
	const int64_t n[2] = { N0, N1 }, o[2] = { 0, N0 * 4 };
	struct nrn_tensor_desc p[2], b[2], g[2], t[2], u[2], w[2], out, z, m;

	for (int i = 0; i < 2; i++) {
		vec(&p[i], st, P_OFF + o[i], NISA_F32, n[i]);
		vec(&b[i], st, B_OFF + o[i], NISA_F32, n[i]);
		vec(&g[i], st, G_OFF + o[i], NISA_F32, n[i]);
		vec(&t[i], scr, 0 + (uint64_t)i * 65536, NISA_F32, n[i]);
		vec(&u[i], scr, 2 * 65536 + (uint64_t)i * 65536, NISA_F32, n[i]);
		vec(&w[i], scr, 4 * 65536 + (uint64_t)i * 65536, NISA_F32, n[i]);
	}
	vec(&out, st, OUT_OFF, NISA_F32, 1);
	switch (v) {
	case SGD:
	case READ_BETWEEN:
		for (int i = 0; i < 2; i++)	/* t = b * 0.9 */
			t_check_ret(nrn_op_binary_scalar(s, NISA_BIN_MUL, &t[i], &b[i], 0.9, 1, 0), 0);
		for (int i = 0; i < 2; i++)	/* u = t + g */
			t_check_ret(nrn_op_binary(s, NISA_BIN_ADD, &u[i], &t[i], &g[i], 1), 0);
		for (int i = 0; i < 2; i++)	/* w = p - 0.01 u */
			t_check_ret(nrn_op_binary(s, NISA_BIN_ADD, &w[i], &p[i], &u[i], -0.01), 0);
		if (v == READ_BETWEEN)	/* the old p0, read before its copy */
			t_check_ret(nrn_op_reduce(s, NISA_RED_SUM, &out, &p[0], 0), 0);
		for (int i = 0; i < 2; i++)
			t_check_ret(nrn_op_copy(s, &p[i], &w[i]), 0);
		for (int i = 0; i < 2; i++)
			t_check_ret(nrn_op_copy(s, &b[i], &u[i]), 0);
		break;
	case RELU_BWD:
		/* b = where(p > 0, g, 0): compare, the scalar's FILL, where */
		vec(&m, scr, 6 * 65536, NISA_BOOL, NT);
		vec(&z, scr, 7 * 65536, NISA_F32, 1);
		vec(&p[0], st, P_OFF, NISA_F32, NT);
		vec(&b[0], st, B_OFF, NISA_F32, NT);
		vec(&g[0], st, G_OFF, NISA_F32, NT);
		t_check_ret(nrn_op_compare_scalar(s, NISA_CMP_GT, &m, &p[0], 0.0), 0);
		t_check_ret(nrn_op_fill(s, &z, 0.0), 0);
		z.shape[0] = NT;
		z.strides[0] = 0;
		t_check_ret(nrn_op_where(s, &b[0], &m, &g[0], &z), 0);
		break;
	case ORDERED:
		/*
		 * t = p * 0.5; p = p + 1 (in place); b = t + p: the add reads the
		 * new p, and p's update cannot go before t's producer, which reads
		 * the old one -- nothing may move.
		 */
		t_check_ret(nrn_op_binary_scalar(s, NISA_BIN_MUL, &t[0], &p[0], 0.5, 1, 0), 0);
		t_check_ret(nrn_op_binary_scalar(s, NISA_BIN_ADD, &p[0], &p[0], 1.0, 1, 0), 0);
		t_check_ret(nrn_op_binary(s, NISA_BIN_ADD, &b[0], &t[0], &p[0], 1), 0);
		break;
	}
}

static struct nrn_buffer *state(const float *h)
{
	struct nrn_buffer *buf;

	t_check_ret(nrn_buffer_alloc(dev, ST_SIZE, NRN_MEM_DEVICE, &buf), 0);
	t_check_ret(nrn_copy_h2d(buf, 0, h, ST_SIZE), 0);
	return buf;
}

/* @v compiled with @flags and launched on a state from @h; the state after. */
static void run_graph(enum variant v, unsigned int flags, const float *h,
		      struct nrn_graph_info *info, void *after)
{
	struct nrn_buffer *st = state(h), *scr, *arena = NULL;
	struct nrn_graph_arg arg = { NULL, 0, ST_SIZE, 0 };
	struct nrn_capture *c = NULL;
	struct nrn_graph *g = NULL;

	t_check_ret(nrn_buffer_alloc(dev, SCR, NRN_MEM_DEVICE, &scr), 0);
	arg.buf = st;
	memset(info, 0, sizeof(*info));
	t_check_ret(nrn_stream_begin_capture(s), 0);
	issue(v, st, scr);
	t_check_ret(nrn_stream_end_capture(s, &c), 0);
	if (c) {
		t_check_ret(nrn_graph_compile(c, &arg, 1, flags, &g), 0);
		nrn_capture_destroy(c);
	}
	if (g) {
		t_check_ret(nrn_graph_info(g, info), 0);
		if (info->arena_size)
			t_check_ret(nrn_buffer_alloc(dev, info->arena_size, NRN_MEM_DEVICE,
						     &arena), 0);
		t_check_ret(nrn_graph_launch(s, g, &arg, arena, 0), 0);
		nrn_graph_destroy(g);
	}
	t_check_ret(nrn_stream_copy_d2h(s, after, st, 0, ST_SIZE), 0);
	nrn_buffer_free(arena);
	nrn_buffer_free(scr);
	nrn_buffer_free(st);
}

static void check_variant(enum variant v, const float *h)
{
	unsigned char *eager = malloc(ST_SIZE), *plain = malloc(ST_SIZE);
	unsigned char *fused = malloc(ST_SIZE);
	struct nrn_buffer *st = state(h), *scr;
	struct nrn_graph_info ip, fi;

	t_check_ret(nrn_buffer_alloc(dev, SCR, NRN_MEM_DEVICE, &scr), 0);
	issue(v, st, scr);
	t_check_ret(nrn_stream_copy_d2h(s, eager, st, 0, ST_SIZE), 0);
	run_graph(v, 0, h, &ip, plain);
	run_graph(v, NRN_GRAPH_FUSE, h, &fi, fused);
	t_check(memcmp(eager, h, ST_SIZE) != 0);	/* it did something */
	t_check(!memcmp(eager, plain, ST_SIZE));
	t_check(!memcmp(eager, fused, ST_SIZE));
	t_check(ip.fused == 0 && ip.insns == ip.captured_insns);
	switch (v) {
	case SGD:
		/* 10 captured: per tensor EXPR + STEPS (b in place) and a BINARY (p) */
		t_check(fi.captured_insns == 10 && fi.insns == 6 && fi.fused == 4);
		t_check(fi.arena_size == 0);
		break;
	case READ_BETWEEN:
		/* p0's copy stays (w0 with it); the other three go */
		t_check(fi.captured_insns == 11 && fi.insns == 8 && fi.fused == 3);
		break;
	case RELU_BWD:
		/* FILL, then EXPR + STEPS: the mask is a register, no arena for it */
		t_check(fi.insns == 3 && fi.arena_size < ip.arena_size);
		break;
	case ORDERED:
		t_check(fi.insns == 3 && fi.fused == 0);
		break;
	}
	if (t_failures)
		fprintf(stderr, "variant %d: insns %u/%u fused %u arena %llu/%llu\n", v,
			fi.insns, ip.insns, fi.fused, (unsigned long long)fi.arena_size,
			(unsigned long long)ip.arena_size);
	nrn_buffer_free(st);
	nrn_buffer_free(scr);
	free(eager);
	free(plain);
	free(fused);
}

int main(void)
{
	float *h = calloc(1, ST_SIZE);

	dev = t_open_device();
	t_check_ret(nrn_stream_create(dev, &s), 0);
	for (size_t i = 0; i < OUT_OFF / 4; i++)
		h[i] = (float)((int)((i * 2654435761u) % 4001) - 2000) / 700.0f;
	check_variant(SGD, h);
	check_variant(READ_BETWEEN, h);
	check_variant(RELU_BWD, h);
	check_variant(ORDERED, h);
	t_check_ret(nrn_stream_sync(s), 0);
	free(h);
	nrn_stream_destroy(s);
	nrn_device_close(dev);
	return t_exit();
}

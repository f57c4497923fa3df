// SPDX-License-Identifier: MIT
/*
 * Description: captured graphs -- a capture of fill/binary/unary/matmul/
 * buffer copy/h2d constant runs nothing, compiles onto arguments and an
 * arena, and launched on other buffers and offsets gives exactly what the
 * ops give eagerly; sync/d2h/RANDOM/events during a capture fail and poison
 * it; reading scratch before writing it, overlapping or straddled
 * arguments, a wrong argument size at launch are -EINVAL; the arena reuses
 * dead temporaries; serialize/deserialize round trip, a flipped byte or a
 * truncated blob is -EBADMSG; a graph of > 64 buffers and > 256
 * instructions launches in several batches; kernels and graphs launched
 * during a capture are recorded (nesting); a capture compiled onto its own
 * buffers (nrn_capture_buffers) replays in place. EXPR groups: graph-expr.c.
 */
#include <errno.h>
#include <stdint.h>
#include <unistd.h>

#include "t_helpers.h"

#define N 16
#define MAT (N * N * 4)

static struct nrn_device *dev;

struct loc {
	struct nrn_buffer *buf;
	uint64_t off;
};

static struct nrn_tensor_desc mat(struct loc l)
{
	struct nrn_tensor_desc t;
	int64_t shape[2] = { N, N };

	nrn_tensor_contiguous(&t, l.buf, l.off, NISA_F32, 2, shape);
	return t;
}

/*
 * y = relu(x * 2 - c) @ w, y2 = the bytes of relu(...), with temporaries in
 * @scr: the fill, the h2d constant c, binaries, a unary, a matmul, a copy.
 */
static void program(struct nrn_stream *s, struct loc x, struct loc w, struct loc y,
		    struct loc y2, struct nrn_buffer *scr)
{
	struct nrn_tensor_desc X = mat(x), W = mat(w), Y = mat(y);
	struct nrn_tensor_desc T0 = mat((struct loc){ scr, 0 });
	struct nrn_tensor_desc C = mat((struct loc){ scr, MAT });
	struct nrn_tensor_desc T1 = mat((struct loc){ scr, 2 * MAT });
	struct nrn_tensor_desc T2 = mat((struct loc){ scr, 3 * MAT });
	float c[N * N];

	for (int i = 0; i < N * N; i++)
		c[i] = (float)i * 0.25f - 10;
	t_check_ret(nrn_op_fill(s, &T0, 2), 0);
	t_check_ret(nrn_stream_copy_h2d(s, scr, MAT, c, sizeof(c)), 0);
	t_check_ret(nrn_op_binary(s, NISA_BIN_MUL, &T1, &X, &T0, 1), 0);
	t_check_ret(nrn_op_binary(s, NISA_BIN_SUB, &T1, &T1, &C, 1), 0);
	t_check_ret(nrn_op_unary(s, NISA_UN_RELU, &T2, &T1), 0);
	t_check_ret(nrn_op_matmul(s, &Y, &T2, &W, NULL, 0), 0);
	t_check_ret(nrn_stream_copy_buffer(s, y2.buf, y2.off, scr, 3 * MAT, MAT), 0);
}

static void put(struct loc l, const void *p, size_t len)
{
	t_check_ret(nrn_copy_h2d(l.buf, l.off, p, len), 0);
}

static void get(void *p, struct loc l, size_t len)
{
	t_check_ret(nrn_copy_d2h(p, l.buf, l.off, len), 0);
}

static struct nrn_graph_arg arg(struct loc l, uint64_t size)
{
	return (struct nrn_graph_arg){ .buf = l.buf, .offset = l.off, .size = size };
}

static void test_capture_compile_launch(struct nrn_stream *s)
{
	struct nrn_buffer *in = t_buffer(dev, 4 * MAT), *out = t_buffer(dev, 4 * MAT);
	struct nrn_buffer *scr = t_buffer(dev, 4 * MAT), *big = t_buffer(dev, 64 * MAT);
	struct loc x = { in, 0 }, w = { in, MAT }, y = { out, 0 }, y2 = { out, MAT };
	/* At launch: other buffers, other offsets (keeping f32 alignment). */
	struct loc lx = { big, 20 * MAT + 4 }, lw = { big, 3 * MAT + 8 };
	struct loc ly = { big, 40 * MAT + 12 }, ly2 = { big, 50 * MAT };
	struct loc ex = { big, 0 }, ew = { big, MAT }, ey = { big, 5 * MAT };
	struct loc ey2 = { big, 6 * MAT };
	struct nrn_buffer *arena = NULL, *escr = t_buffer(dev, 4 * MAT);
	float xv[N * N], wv[N * N], got[N * N], want[N * N], got2[N * N], want2[N * N];
	unsigned char before[MAT], after[MAT];
	struct nrn_graph_arg args[4], largs[4];
	struct nrn_graph_info info;
	struct nrn_capture *c = NULL;
	struct nrn_graph *g = NULL;
	uint32_t access;

	for (int i = 0; i < N * N; i++) {
		xv[i] = (float)(i % 37) - 11;
		wv[i] = (float)((i * 7) % 13) * 0.5f - 3;
	}
	put(x, xv, MAT);
	put(w, wv, MAT);
	memset(before, 0xab, sizeof(before));
	put(y, before, MAT);
	put(y2, before, MAT);
	put((struct loc){ scr, 0 }, before, MAT);

	t_check_ret(nrn_stream_begin_capture(s), 0);
	t_check_ret(nrn_stream_begin_capture(s), -EBUSY);
	t_check(nrn_stream_is_capturing(s) == 1);
	t_check_ret(nrn_stream_flush(s), 0);
	program(s, x, w, y, y2, scr);
	t_check_ret(nrn_stream_end_capture(s, &c), 0);
	t_check(nrn_stream_is_capturing(s) == 0);
	t_check(c && nrn_capture_count(c) >= 7);
	/* Nothing ran: outputs and scratch hold their old bytes. */
	get(after, y, MAT);
	t_check(!memcmp(before, after, MAT));
	get(after, y2, MAT);
	t_check(!memcmp(before, after, MAT));
	get(after, (struct loc){ scr, 0 }, MAT);
	t_check(!memcmp(before, after, MAT));

	args[0] = arg(x, MAT);
	args[1] = arg(w, MAT);
	args[2] = arg(y, MAT);
	args[3] = arg(y2, MAT);
	t_check_ret(nrn_graph_compile(c, args, 4, 0, &g), 0);
	if (!g)
		goto out;
	t_check_ret(nrn_graph_info(g, &info), 0);
	t_check(info.nargs == 4 && info.insns == nrn_capture_count(c) && !info.fused);
	/* T0, C, T1, T2 but T0 and C die when T2 is born: less than 4 of them. */
	t_check(info.arena_size >= 2 * MAT && info.arena_size < 4 * MAT);
	t_check(info.const_size == MAT);
	t_check_ret(nrn_graph_arg_access(g, 0, &access, NULL), 0);
	t_check(access == NISA_ACCESS_READ);
	t_check_ret(nrn_graph_arg_access(g, 2, &access, NULL), 0);
	t_check(access == NISA_ACCESS_WRITE);
	t_check_ret(nrn_graph_arg_access(g, 4, &access, NULL), -EINVAL);
	nrn_capture_destroy(c);	/* the graph does not need it */
	c = NULL;

	/* The same program eagerly, on other buffers. */
	put(ex, xv, MAT);
	put(ew, wv, MAT);
	program(s, ex, ew, ey, ey2, escr);
	t_check_ret(nrn_stream_sync(s), 0);
	get(want, ey, MAT);
	get(want2, ey2, MAT);

	put(lx, xv, MAT);
	put(lw, wv, MAT);
	largs[0] = arg(lx, MAT);
	largs[1] = arg(lw, MAT);
	largs[2] = arg(ly, MAT);
	largs[3] = arg(ly2, MAT);
	arena = t_buffer(dev, info.arena_size + 128);
	t_check_ret(nrn_graph_launch(s, g, largs, arena, 64), 0);
	t_check_ret(nrn_stream_sync(s), 0);
	get(got, ly, MAT);
	get(got2, ly2, MAT);
	t_check(!memcmp(got, want, MAT));
	t_check(!memcmp(got2, want2, MAT));
	/* And what it is: relu(2x - c) @ w, computed here in double. */
	for (int i = 0; i < N; i++) {
		for (int j = 0; j < N; j++) {
			double acc = 0;

			for (int k = 0; k < N; k++) {
				double t = 2.0 * xv[i * N + k] - ((i * N + k) * 0.25 - 10);

				acc += (t > 0 ? t : 0) * wv[k * N + j];
			}
			t_check(got[i * N + j] > acc - 1e-3 && got[i * N + j] < acc + 1e-3);
		}
	}
	/* A second launch sees new inputs: the graph reads its arguments. */
	for (int i = 0; i < N * N; i++)
		xv[i] = -xv[i];
	put(lx, xv, MAT);
	put(ex, xv, MAT);
	program(s, ex, ew, ey, ey2, escr);
	t_check_ret(nrn_graph_launch(s, g, largs, arena, 64), 0);
	t_check_ret(nrn_stream_sync(s), 0);
	get(want, ey, MAT);
	get(got, ly, MAT);
	t_check(!memcmp(got, want, MAT));

	/* A launch is submitted at once: its results land with no sync. */
	put(ly, before, MAT);
	t_check_ret(nrn_graph_launch(s, g, largs, arena, 64), 0);
	for (int i = 0; i < 10000; i++) {
		get(got, ly, MAT);
		if (!memcmp(got, want, MAT))
			break;
		usleep(1000);
	}
	t_check(!memcmp(got, want, MAT));
	t_check_ret(nrn_stream_sync(s), 0);

	/* Launch-time checks. */
	largs[0].size = MAT - 4;
	t_check_ret(nrn_graph_launch(s, g, largs, arena, 64), -EINVAL);
	largs[0].size = MAT;
	largs[0].offset += 2;	/* f32 operands, misaligned */
	t_check_ret(nrn_graph_launch(s, g, largs, arena, 64), -EINVAL);
	largs[0].offset -= 2;
	t_check_ret(nrn_graph_launch(s, g, largs, arena, 32), -EINVAL);
	t_check_ret(nrn_graph_launch(s, g, largs, NULL, 0), -EINVAL);
	largs[2] = arg((struct loc){ arena, 64 }, MAT); /* output over the arena */
	t_check_ret(nrn_graph_launch(s, g, largs, arena, 64), -EINVAL);
	largs[2] = arg(ly, MAT);
	largs[1] = arg((struct loc){ arena, 128 }, MAT); /* input under the arena */
	t_check_ret(nrn_graph_launch(s, g, largs, arena, 64), -EINVAL);
	largs[1] = arg(lw, MAT);
	largs[2] = arg(lw, MAT);	/* output over an input */
	t_check_ret(nrn_graph_launch(s, g, largs, arena, 64), -EINVAL);

	/* Compile-time checks on a fresh capture of the same program. */
	t_check_ret(nrn_stream_begin_capture(s), 0);
	program(s, x, w, y, y2, scr);
	t_check_ret(nrn_stream_end_capture(s, &c), 0);
	{
		struct nrn_graph *bad = NULL;
		struct nrn_graph_arg ov[4] = { args[0], args[1], args[2], args[3] };

		ov[1] = arg((struct loc){ in, MAT / 2 }, MAT);	/* overlaps x */
		t_check_ret(nrn_graph_compile(c, ov, 4, 0, &bad), -EINVAL);
		ov[1] = arg((struct loc){ in, MAT + MAT / 2 }, MAT / 2); /* w straddles */
		t_check_ret(nrn_graph_compile(c, ov, 4, 0, &bad), -EINVAL);
		/* w not an argument: the graph reads memory it never wrote. */
		t_check_ret(nrn_graph_compile(c, args, 1, 0, &bad), -EINVAL);
		t_check_ret(nrn_graph_compile(c, args, 4, 0x100, &bad), -EINVAL);
		t_check(!bad);
	}
out:
	nrn_capture_destroy(c);
	nrn_graph_destroy(g);
	nrn_buffer_free(arena);
	nrn_buffer_free(in);
	nrn_buffer_free(out);
	nrn_buffer_free(scr);
	nrn_buffer_free(escr);
	nrn_buffer_free(big);
}

/* Each call that needs results refuses, and the capture reports it. */
static void test_refusals(struct nrn_stream *s)
{
	struct nrn_buffer *b = t_buffer(dev, 4096);
	struct nrn_tensor_desc t = mat((struct loc){ b, 0 });
	struct nrn_stream *ds;
	struct nrn_event *ev;
	struct nrn_capture *c = (struct nrn_capture *)1;
	float f[4] = { 0 };

	t_check_ret(nrn_event_create(dev, &ev), 0);
	t_check_ret(nrn_device_stream(dev, &ds), 0);

	t_check_ret(nrn_stream_begin_capture(s), 0);
	t_check_ret(nrn_op_fill(s, &t, 1), 0);
	t_check_ret(nrn_stream_sync(s), -EBUSY);
	t_check_ret(nrn_op_fill(s, &t, 2), 0);
	t_check_ret(nrn_stream_end_capture(s, &c), -EBUSY);
	t_check(c == NULL);
	t_check_ret(nrn_stream_end_capture(s, &c), -EINVAL); /* not capturing */

	t_check_ret(nrn_stream_begin_capture(s), 0);
	t_check_ret(nrn_stream_copy_d2h(s, f, b, 0, sizeof(f)), -EBUSY);
	t_check_ret(nrn_stream_end_capture(s, &c), -EBUSY);

	t_check_ret(nrn_stream_begin_capture(s), 0);
	t_check_ret(nrn_op_random(s, NISA_RNG_UNIFORM, &t, 1, 0), -ENOTSUP);
	t_check_ret(nrn_stream_end_capture(s, &c), -ENOTSUP);

	t_check_ret(nrn_stream_begin_capture(s), 0);
	t_check_ret(nrn_event_record(ev, s), -EBUSY);
	t_check_ret(nrn_stream_end_capture(s, &c), -EBUSY);

	t_check_ret(nrn_event_record(ev, ds), 0);
	t_check_ret(nrn_stream_begin_capture(s), 0);
	t_check_ret(nrn_stream_wait_event(s, ev), -EBUSY);
	t_check_ret(nrn_stream_end_capture(s, &c), -EBUSY);

	/* The synchronous helpers on a capturing device stream. */
	t_check_ret(nrn_stream_begin_capture(ds), 0);
	t_check_ret(nrn_copy_h2d(b, 0, f, sizeof(f)), -EBUSY);
	t_check_ret(nrn_stream_end_capture(ds, &c), -EBUSY);

	/* After all that, the stream works. */
	t_check_ret(nrn_op_fill(s, &t, 5), 0);
	t_check_ret(nrn_stream_copy_d2h(s, f, b, 0, sizeof(f)), 0);
	t_check(f[0] == 5 && f[3] == 5);
	nrn_event_destroy(ev);
	nrn_buffer_free(b);
}

/* x + 9 through 8 temporaries of 64 KiB: the arena holds two, not eight. */
static void test_arena_reuse(struct nrn_stream *s)
{
	enum { T = 8, LEN = 16384 };
	struct nrn_buffer *x = t_buffer(dev, LEN * 4), *y = t_buffer(dev, LEN * 4);
	struct nrn_buffer *scr = t_buffer(dev, T * LEN * 4), *arena = NULL;
	struct nrn_tensor_desc tx, ty, tt[T];
	int64_t shape[1] = { LEN };
	struct nrn_graph_arg args[2] = { { x, 0, LEN * 4, 0 }, { y, 0, LEN * 4, 0 } };
	struct nrn_capture *c = NULL;
	struct nrn_graph *g = NULL, *back = NULL;
	struct nrn_graph_info info;
	static float xv[LEN], yv[LEN];
	void *blob = NULL;
	size_t len = 0;

	nrn_tensor_contiguous(&tx, x, 0, NISA_F32, 1, shape);
	nrn_tensor_contiguous(&ty, y, 0, NISA_F32, 1, shape);
	for (int i = 0; i < T; i++)
		nrn_tensor_contiguous(&tt[i], scr, (uint64_t)i * LEN * 4, NISA_F32, 1, shape);
	t_check_ret(nrn_stream_begin_capture(s), 0);
	for (int i = 0; i < T; i++)
		t_check_ret(nrn_op_binary_scalar(s, NISA_BIN_ADD, &tt[i],
						 i ? &tt[i - 1] : &tx, 1, 1, 0), 0);
	t_check_ret(nrn_op_binary_scalar(s, NISA_BIN_ADD, &ty, &tt[T - 1], 1, 1, 0), 0);
	t_check_ret(nrn_stream_end_capture(s, &c), 0);
	t_check_ret(nrn_graph_compile(c, args, 2, 0, &g), 0);
	nrn_capture_destroy(c);
	if (!g)
		goto out;
	t_check_ret(nrn_graph_info(g, &info), 0);
	t_check(info.arena_size == 2 * LEN * 4);

	/* Serialized and back: the same graph. */
	t_check_ret(nrn_graph_serialize(g, &blob, &len), 0);
	t_check_ret(nrn_graph_deserialize(blob, len, &back), 0);
	for (size_t at = 0; at < len; at += len / 7 + 1) {
		struct nrn_graph *bad = NULL;

		((unsigned char *)blob)[at] ^= 0x10;
		t_check_ret(nrn_graph_deserialize(blob, len, &bad), -EBADMSG);
		((unsigned char *)blob)[at] ^= 0x10;
		t_check(!bad);
	}
	{
		struct nrn_graph *bad = NULL;

		((unsigned char *)blob)[len - 1] ^= 1;
		t_check_ret(nrn_graph_deserialize(blob, len, &bad), -EBADMSG);
		((unsigned char *)blob)[len - 1] ^= 1;
		((uint32_t *)blob)[3] = 99; /* the ISA version */
		t_check_ret(nrn_graph_deserialize(blob, len, &bad), -EBADMSG);
		((uint32_t *)blob)[3] = NISA_ISA_VERSION;

		t_check_ret(nrn_graph_deserialize(blob, len - 1, &bad), -EBADMSG);
		t_check_ret(nrn_graph_deserialize(blob, 10, &bad), -EBADMSG);
		t_check(!bad);
	}
	if (!back || !g)
		goto out;
	for (int i = 0; i < LEN; i++)
		xv[i] = (float)i * 0.5f;
	t_check_ret(nrn_copy_h2d(x, 0, xv, sizeof(xv)), 0);
	arena = t_buffer(dev, info.arena_size);
	t_check_ret(nrn_graph_launch(s, back, args, arena, 0), 0);
	t_check_ret(nrn_stream_copy_d2h(s, yv, y, 0, sizeof(yv)), 0);
	for (int i = 0; i < LEN; i += 97)
		t_check(yv[i] == xv[i] + 9);
	t_check(yv[LEN - 1] == xv[LEN - 1] + 9);
out:
	free(blob);
	nrn_graph_destroy(g);
	nrn_graph_destroy(back);
	nrn_buffer_free(arena);
	nrn_buffer_free(x);
	nrn_buffer_free(y);
	nrn_buffer_free(scr);
}

/*
 * 100 inputs in 100 buffers, three instructions each (two temporaries):
 * more buffers than one batch's table, more instructions than one batch.
 */
static void test_big_graph(struct nrn_stream *s)
{
	enum { K = 100, LEN = 64 };
	struct nrn_buffer *in[K], *lin[K], *out = t_buffer(dev, K * LEN * 4);
	struct nrn_buffer *lout = t_buffer(dev, K * LEN * 4 + 256), *scr = t_buffer(dev, 2 * K * LEN * 4);
	struct nrn_buffer *arena = NULL;
	struct nrn_graph_arg args[K + 1], largs[K + 1];
	int64_t shape[1] = { LEN };
	struct nrn_capture *c = NULL;
	struct nrn_graph *g = NULL;
	struct nrn_graph_info info;
	static float v[K][LEN], got[K * LEN];

	for (int k = 0; k < K; k++) {
		struct nrn_tensor_desc ti, t1, t2, to;

		in[k] = t_buffer(dev, LEN * 4);
		lin[k] = t_buffer(dev, LEN * 4 + 128);
		args[k] = (struct nrn_graph_arg){ in[k], 0, LEN * 4, 0 };
		largs[k] = (struct nrn_graph_arg){ lin[k], 128, LEN * 4, 0 };
		for (int i = 0; i < LEN; i++)
			v[k][i] = (float)(k - i);
		t_check_ret(nrn_copy_h2d(lin[k], 128, v[k], LEN * 4), 0);
		if (!k)
			t_check_ret(nrn_stream_begin_capture(s), 0);
		nrn_tensor_contiguous(&ti, in[k], 0, NISA_F32, 1, shape);
		nrn_tensor_contiguous(&t1, scr, (uint64_t)2 * k * LEN * 4, NISA_F32, 1, shape);
		nrn_tensor_contiguous(&t2, scr, (uint64_t)(2 * k + 1) * LEN * 4, NISA_F32, 1,
				      shape);
		nrn_tensor_contiguous(&to, out, (uint64_t)k * LEN * 4, NISA_F32, 1, shape);
		t_check_ret(nrn_op_binary_scalar(s, NISA_BIN_MUL, &t1, &ti, 3, 1, 0), 0);
		t_check_ret(nrn_op_binary_scalar(s, NISA_BIN_ADD, &t2, &t1, 1, 1, 0), 0);
		t_check_ret(nrn_op_binary(s, NISA_BIN_MUL, &to, &t2, &t1, 1), 0);
	}
	args[K] = (struct nrn_graph_arg){ out, 0, K * LEN * 4, 0 };
	largs[K] = (struct nrn_graph_arg){ lout, 256, K * LEN * 4, 0 };
	t_check_ret(nrn_stream_end_capture(s, &c), 0);
	t_check(nrn_capture_count(c) == 3 * K);
	t_check_ret(nrn_graph_compile(c, args, K + 1, 0, &g), 0);
	nrn_capture_destroy(c);
	if (!g)
		goto out;
	t_check_ret(nrn_graph_info(g, &info), 0);
	t_check(info.insns == 3 * K && info.arena_size == 2 * LEN * 4);
	arena = t_buffer(dev, info.arena_size);
	t_check_ret(nrn_graph_launch(s, g, largs, arena, 0), 0);
	t_check_ret(nrn_stream_copy_d2h(s, got, lout, 256, sizeof(got)), 0);
	for (int k = 0; k < K; k++)
		for (int i = 0; i < LEN; i++)
			t_check(got[k * LEN + i] == (v[k][i] * 3 + 1) * (v[k][i] * 3));
out:
	nrn_graph_destroy(g);
	nrn_buffer_free(arena);
	for (int k = 0; k < K; k++) {
		nrn_buffer_free(in[k]);
		nrn_buffer_free(lin[k]);
	}
	nrn_buffer_free(out);
	nrn_buffer_free(lout);
	nrn_buffer_free(scr);
}

/* A kernel and a graph launched while capturing are recorded. */
static void test_nesting(struct nrn_stream *s)
{
	struct nrn_buffer *a = t_buffer(dev, 4096), *b = t_buffer(dev, 4096), *o = t_buffer(dev, 4096);
	struct nrn_tensor_desc ta = mat((struct loc){ a, 0 }), tb = mat((struct loc){ b, 0 });
	struct nrn_graph_arg inner[2] = { { a, 0, MAT, 0 }, { b, 0, MAT, 0 } };
	struct nrn_graph_arg outer[2] = { { a, 0, MAT, 0 }, { o, 0, MAT, 0 } };
	struct nisa_tensor t1 = { .slot = 1, .dtype = NISA_F32, .ndim = 1,
				  .shape = { N * N }, .strides = { 1 } };
	struct nisa_insn neg = { .opcode = NISA_INSN_UNARY, .subop = NISA_UN_NEG,
				 .dst = t1, .src = { t1 } };
	struct nrn_buffer *kb[2] = { a, o };
	uint32_t kacc[2] = { NISA_ACCESS_READ, NISA_ACCESS_READ | NISA_ACCESS_WRITE };
	struct nrn_capture *c = NULL;
	struct nrn_graph *gi = NULL, *go = NULL;
	struct nrn_kernel *k = NULL;
	float av[N * N], ov[N * N];

	/* inner: b = a * 3 + constant 1 (an h2d into b, then an add). */
	t_check_ret(nrn_stream_begin_capture(s), 0);
	for (int i = 0; i < N * N; i++)
		av[i] = 1;
	t_check_ret(nrn_stream_copy_h2d(s, b, 0, av, MAT), 0);
	t_check_ret(nrn_op_binary(s, NISA_BIN_ADD, &tb, &tb, &ta, 3), 0);
	t_check_ret(nrn_stream_end_capture(s, &c), 0);
	t_check_ret(nrn_graph_compile(c, inner, 2, 0, &gi), 0);
	nrn_capture_destroy(c);
	/* outer: the inner graph onto (a, o), then a kernel negating o. */
	t_check_ret(nrn_kernel_create(2, &k), 0);
	t_check_ret(nrn_kernel_append(k, &neg), 0);
	t_check_ret(nrn_stream_begin_capture(s), 0);
	if (gi)
		t_check_ret(nrn_graph_launch(s, gi, outer, NULL, 0), 0);
	t_check_ret(nrn_kernel_launch(s, k, kb, kacc), 0);
	t_check_ret(nrn_stream_end_capture(s, &c), 0);
	t_check_ret(nrn_graph_compile(c, outer, 2, 0, &go), 0);
	nrn_capture_destroy(c);
	for (int i = 0; i < N * N; i++)
		av[i] = (float)i;
	t_check_ret(nrn_copy_h2d(a, 0, av, MAT), 0);
	if (go)
		t_check_ret(nrn_graph_launch(s, go, outer, NULL, 0), 0);
	t_check_ret(nrn_stream_copy_d2h(s, ov, o, 0, MAT), 0);
	for (int i = 0; i < N * N; i++)
		t_check(ov[i] == -(1 + 3 * av[i]));
	nrn_kernel_destroy(k);
	nrn_graph_destroy(gi);
	nrn_graph_destroy(go);
	nrn_buffer_free(a);
	nrn_buffer_free(b);
	nrn_buffer_free(o);
}

/*
 * In place: nrn_capture_buffers() names every buffer the capture touched,
 * once each; compiled with each as a whole argument (no scratch, no arena)
 * and launched on the same buffers, the graph replays the program exactly.
 */
static void test_in_place(struct nrn_stream *s)
{
	struct nrn_buffer *in = t_buffer(dev, 4 * MAT), *out = t_buffer(dev, 4 * MAT);
	struct nrn_buffer *scr = t_buffer(dev, 4 * MAT), *seen[3] = { NULL, NULL, NULL };
	struct nrn_buffer *mine[3] = { in, out, scr }, *bufs[4] = { NULL, NULL, NULL, NULL };
	struct loc x = { in, 0 }, w = { in, MAT }, y = { out, 0 }, y2 = { out, MAT };
	float xv[N * N], wv[N * N], want[2 * N * N], got[2 * N * N];
	struct nrn_graph_arg args[3];
	struct nrn_graph_info info;
	struct nrn_capture *c = NULL;
	struct nrn_graph *g = NULL;
	unsigned int n;

	for (int i = 0; i < N * N; i++) {
		xv[i] = (float)(i % 5) - 2;
		wv[i] = (float)(i % 3);
	}
	put(x, xv, MAT);
	put(w, wv, MAT);
	program(s, x, w, y, y2, scr);
	t_check_ret(nrn_stream_sync(s), 0);
	get(want, y, 2 * MAT);
	memset(got, 0x5a, sizeof(got));
	put(y, got, 2 * MAT);

	t_check(nrn_capture_buffers(NULL, NULL, 0) == 0);
	t_check_ret(nrn_stream_begin_capture(s), 0);
	program(s, x, w, y, y2, scr);
	t_check_ret(nrn_stream_end_capture(s, &c), 0);
	t_check(nrn_capture_buffers(c, NULL, 0) == 3);
	n = nrn_capture_buffers(c, bufs, 2);
	t_check(n == 3 && bufs[0] && bufs[1] && bufs[1] != bufs[0] && !bufs[2]);
	t_check(nrn_capture_buffers(c, bufs, 4) == 3 && !bufs[3]);
	for (unsigned int i = 0; i < 3; i++) {
		for (unsigned int j = 0; j < 3; j++)
			if (bufs[i] == mine[j])
				seen[j] = bufs[i];
		args[i] = (struct nrn_graph_arg){ .buf = bufs[i], .size = 4 * MAT };
	}
	t_check(seen[0] == in && seen[1] == out && seen[2] == scr);
	t_check_ret(nrn_graph_compile(c, args, 3, NRN_GRAPH_FUSE, &g), 0);
	if (g) {
		t_check_ret(nrn_graph_info(g, &info), 0);
		t_check(info.arena_size == 0 && info.insns == nrn_capture_count(c));
		for (int round = 0; round < 2; round++) {
			t_check_ret(nrn_graph_launch(s, g, args, NULL, 0), 0);
			t_check_ret(nrn_stream_sync(s), 0);
			get(got, y, 2 * MAT);
			t_check(!memcmp(got, want, sizeof(got)));
			memset(got, 0x5a, sizeof(got));
			put(y, got, 2 * MAT);
		}
	}
	nrn_graph_destroy(g);
	nrn_capture_destroy(c);
	nrn_buffer_free(in);
	nrn_buffer_free(out);
	nrn_buffer_free(scr);
}

int main(void)
{
	struct nrn_stream *s;

	dev = t_open_device();
	t_check_ret(nrn_stream_create(dev, &s), 0);
	test_capture_compile_launch(s);
	test_refusals(s);
	test_arena_reuse(s);
	test_big_graph(s);
	test_nesting(s);
	test_in_place(s);
	nrn_stream_destroy(s);
	nrn_device_close(dev);
	return t_exit();
}

// SPDX-License-Identifier: MIT
/*
 * Description: where a card-side error happened (nrn_stream_error_site):
 * nothing before an error; an eager operation's failing instruction is
 * named by its index in the job, with no graph; a compiled graph whose
 * third captured instruction (a GATHER with an index out of its axis, read
 * from a tensor) fails names the graph (nrn_graph_id), the instruction's
 * index among the launch's and its origin 2 -- after eager work in the same
 * job (a graph's first launch with its operands) or in a job of its own (a
 * later launch: the resident job), with fusion merging and moving
 * instructions, after
 * serialize/deserialize (a new
 * id), when the failure passed on to later jobs, and in the second job of
 * a graph too big for one; an old-format blob is -EBADMSG.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "t_helpers.h"

#define V 6	/* rows of the table */
#define E 5	/* its columns */
#define L 2	/* indices */
#define X 8	/* elements of x, y */

static struct nrn_device *dev;
/*
 * tab [V, E] f32, idx [L] i32, out [L, E] f32, x [4, X], y [X] f32; scr the
 * capture's scratch, arena the launches'.
 */
static struct nrn_buffer *tab, *idx, *out, *x, *y, *scr, *other, *arena;

static struct nrn_tensor_desc tensor(struct nrn_buffer *b, uint64_t off,
				     enum nisa_dtype dt, int64_t d0, int64_t d1)
{
	struct nrn_tensor_desc t;
	int64_t shape[2] = { d0, d1 };

	nrn_tensor_contiguous(&t, b, off, dt, d1 ? 2 : 1, shape);
	return t;
}

static void set_index(int32_t second)
{
	int32_t ids[L] = { 1, second };

	t_check_ret(nrn_copy_h2d(idx, 0, ids, sizeof(ids)), 0);
}

static int gather(struct nrn_stream *s)
{
	struct nrn_tensor_desc o = tensor(out, 0, NISA_F32, L, E);
	struct nrn_tensor_desc t = tensor(tab, 0, NISA_F32, V, E);
	struct nrn_tensor_desc i = tensor(idx, 0, NISA_I32, L, 0);

	return nrn_op_gather(s, NISA_IDX_SELECT, &o, &t, &i, 0);
}

/*
 * The captured program, on x's four rows x0..x3: 0 t1 = -x0, 1 t2 = t1 *
 * x1, 2 the GATHER, 3 t3 = t2 + x2, 4 t4 = exp(t3), 5 y = t4 - x3 (t1..t4
 * scratch). With fusion, 3 moves up next to 1, and 0, 1, 3, 4, 5 become
 * one EXPR group of three instructions (four inputs) before the GATHER.
 */
#define PROGRAM_INSNS 6
static void program(struct nrn_stream *s)
{
	struct nrn_tensor_desc yt = tensor(y, 0, NISA_F32, X, 0);
	struct nrn_tensor_desc t[4], xr[4];

	for (int i = 0; i < 4; i++) {
		t[i] = tensor(scr, 64 * i, NISA_F32, X, 0);
		xr[i] = tensor(x, X * 4 * i, NISA_F32, X, 0);
	}
	t_check_ret(nrn_op_unary(s, NISA_UN_NEG, &t[0], &xr[0]), 0);
	t_check_ret(nrn_op_binary(s, NISA_BIN_MUL, &t[1], &t[0], &xr[1], 1), 0);
	t_check_ret(gather(s), 0);
	t_check_ret(nrn_op_binary(s, NISA_BIN_ADD, &t[2], &t[1], &xr[2], 1), 0);
	t_check_ret(nrn_op_unary(s, NISA_UN_EXP, &t[3], &t[2]), 0);
	t_check_ret(nrn_op_binary(s, NISA_BIN_SUB, &yt, &t[3], &xr[3], 1), 0);
}

static struct nrn_graph *compile(struct nrn_stream *s, unsigned int flags)
{
	struct nrn_graph_arg args[5] = {
		{ .buf = x, .size = 4 * X * 4 }, { .buf = y, .size = X * 4 },
		{ .buf = tab, .size = V * E * 4 }, { .buf = idx, .size = L * 4 },
		{ .buf = out, .size = L * E * 4 },
	};
	struct nrn_capture *c = NULL;
	struct nrn_graph *g = NULL;
	unsigned int n = 0;

	t_check_ret(nrn_stream_begin_capture(s), 0);
	program(s);
	t_check_ret(nrn_stream_capture_count(s, &n), 0);
	t_check(n == PROGRAM_INSNS);
	t_check_ret(nrn_stream_end_capture(s, &c), 0);
	if (c)
		t_check_ret(nrn_graph_compile(c, args, 5, flags, &g), 0);
	nrn_capture_destroy(c);
	return g;
}

static int launch(struct nrn_stream *s, const struct nrn_graph *g)
{
	struct nrn_graph_arg args[5] = {
		{ .buf = x, .size = 4 * X * 4 }, { .buf = y, .size = X * 4 },
		{ .buf = tab, .size = V * E * 4 }, { .buf = idx, .size = L * 4 },
		{ .buf = out, .size = L * E * 4 },
	};

	return nrn_graph_launch(s, g, args, arena, 0);
}

/* One eager instruction on a buffer of its own. */
static void eager(struct nrn_stream *s)
{
	struct nrn_tensor_desc o = tensor(other, 0, NISA_F32, X, 0);

	t_check_ret(nrn_op_fill(s, &o, 1), 0);
}

static struct nrn_error_site site_of(struct nrn_stream *s)
{
	struct nrn_error_site e = { 0 };

	t_check_ret(nrn_stream_error_site(s, &e), 0);
	fprintf(stderr, "site: code %u job_insn %u graph %llu graph_insn %u origin %u\n",
		e.code, e.job_insn, (unsigned long long)e.graph_id, e.graph_insn,
		e.origin);
	return e;
}

static void test_eager(struct nrn_stream *s)
{
	struct nrn_error_site e;

	t_check_ret(nrn_stream_error_site(s, &e), -ENOENT);
	t_check_ret(nrn_stream_error_site(NULL, &e), -EINVAL);
	t_check_ret(nrn_stream_error_site(s, NULL), -EINVAL);
	set_index(V);
	eager(s);
	t_check_ret(gather(s), 0);
	t_check_ret(nrn_stream_sync(s), -EIO);
	t_check(nrn_stream_device_error(s) == NISA_ERR_BAD_INDEX);
	e = site_of(s);
	t_check(e.code == NISA_ERR_BAD_INDEX);
	t_check(e.job_insn == 1);
	t_check(e.graph_id == 0);
	t_check(e.graph_insn == UINT_MAX);
	t_check(e.origin == UINT_MAX);
	/* A successful sync keeps it; a good index runs. */
	set_index(V - 1);
	t_check_ret(gather(s), 0);
	t_check_ret(nrn_stream_sync(s), 0);
	t_check_ret(nrn_stream_error_site(s, &e), 0);
	t_check(e.code == NISA_ERR_BAD_INDEX);
}

/*
 * @g fails at its GATHER (origin 2) after @before eager instructions. Its
 * @first launch with these operands joins the stream's batch, after the
 * eager instructions; a later one is a job of its own (the graph's
 * resident job, or the launch that makes it).
 */
static void check_graph(struct nrn_stream *s, const struct nrn_graph *g,
			unsigned int before, unsigned int graph_insn, bool first)
{
	struct nrn_error_site e;

	set_index(V + 3);
	for (unsigned int i = 0; i < before; i++)
		eager(s);
	t_check_ret(launch(s, g), 0);
	t_check_ret(nrn_stream_sync(s), -EIO);
	e = site_of(s);
	t_check(e.code == NISA_ERR_BAD_INDEX);
	t_check(nrn_graph_id(g) != 0);
	t_check(e.graph_id == nrn_graph_id(g));
	t_check(e.graph_insn == graph_insn);
	t_check(e.job_insn == (first ? before : 0) + graph_insn);
	t_check(e.origin == 2);

	/* The failure passes on to later jobs: the site is still the graph's. */
	t_check_ret(launch(s, g), 0);
	eager(s);
	t_check_ret(nrn_stream_flush(s), 0);
	eager(s);
	t_check_ret(nrn_stream_sync(s), -EIO);
	e = site_of(s);
	t_check(e.graph_id == nrn_graph_id(g));
	t_check(e.graph_insn == graph_insn);
	t_check(e.job_insn == graph_insn);
	t_check(e.origin == 2);

	/* A good index: the graph runs, and an eager failure is no graph's. */
	set_index(0);
	t_check_ret(launch(s, g), 0);
	t_check_ret(nrn_stream_sync(s), 0);
	set_index(V);
	t_check_ret(gather(s), 0);
	t_check_ret(nrn_stream_sync(s), -EIO);
	e = site_of(s);
	t_check(e.graph_id == 0 && e.job_insn == 0 && e.origin == UINT_MAX);
}

static void test_graphs(struct nrn_stream *s)
{
	struct nrn_graph *g = compile(s, 0), *f = compile(s, NRN_GRAPH_FUSE), *back = NULL;
	struct nrn_graph_info info;
	unsigned int fgi = UINT_MAX;
	size_t len = 0;
	void *blob = NULL;

	if (!g || !f)
		goto out;
	t_check(nrn_graph_id(g) != nrn_graph_id(f));
	t_check(nrn_graph_id(NULL) == 0);
	/* As captured: the GATHER is the third launch instruction. */
	check_graph(s, g, 0, 2, true);
	check_graph(s, g, 3, 2, false);

	/* Fused: one EXPR group, then the GATHER (the last instruction). */
	t_check_ret(nrn_graph_info(f, &info), 0);
	t_check(info.fused > 0);
	t_check(info.captured_insns == PROGRAM_INSNS);
	fprintf(stderr, "fused graph: %u instructions, %u captured, %u fused\n",
		info.insns, info.captured_insns, info.fused);
	{
		struct nrn_error_site e;

		set_index(V);
		t_check_ret(launch(s, f), 0);
		t_check_ret(nrn_stream_sync(s), -EIO);
		e = site_of(s);
		t_check(e.graph_id == nrn_graph_id(f) && e.origin == 2);
		t_check(e.graph_insn == info.insns - 1);
		t_check(e.graph_insn == 3);	/* not where it was captured */
		fgi = e.graph_insn;
	}
	check_graph(s, f, 1, fgi, false);

	/* Serialized and back: a new graph object, the same origins. */
	t_check_ret(nrn_graph_serialize(f, &blob, &len), 0);
	t_check_ret(nrn_graph_deserialize(blob, len, &back), 0);
	if (back) {
		t_check(nrn_graph_id(back) != nrn_graph_id(f));
		check_graph(s, back, 2, fgi, true);
	}
	/* A format 1 blob (before origins) is refused like any other version. */
	if (blob) {
		struct nrn_graph *old = NULL;

		((uint32_t *)blob)[2] = 1;
		t_check_ret(nrn_graph_deserialize(blob, len, &old), -EBADMSG);
		t_check(!old);
	}
out:
	free(blob);
	nrn_graph_destroy(back);
	nrn_graph_destroy(g);
	nrn_graph_destroy(f);
}

/*
 * A graph of more than NRN_BATCH_MAX_OPS instructions goes out in several
 * jobs at its first launch: its instruction K (captured K) fails in the
 * second one. Launched again with the same operands, it goes whole into
 * one job (kept, then its resident job: NRN_GRAPH_RESIDENT_MAX_INSNS):
 * instruction K is the job's K.
 */
static void test_split(struct nrn_stream *s)
{
	enum { K = NRN_BATCH_MAX_OPS + 44 };
	struct nrn_tensor_desc xt = tensor(x, 0, NISA_F32, X, 0);
	struct nrn_graph_arg args[4] = {
		{ .buf = x, .size = X * 4 }, { .buf = tab, .size = V * E * 4 },
		{ .buf = idx, .size = L * 4 }, { .buf = out, .size = L * E * 4 },
	};
	struct nrn_capture *c = NULL;
	struct nrn_graph *g = NULL;
	struct nrn_graph_info info;
	struct nrn_error_site e;

	t_check_ret(nrn_stream_begin_capture(s), 0);
	for (int i = 0; i < K; i++)
		t_check_ret(nrn_op_unary(s, NISA_UN_NEG, &xt, &xt), 0);
	t_check_ret(gather(s), 0);
	t_check_ret(nrn_stream_end_capture(s, &c), 0);
	if (c)
		t_check_ret(nrn_graph_compile(c, args, 4, 0, &g), 0);
	nrn_capture_destroy(c);
	if (!g)
		return;
	set_index(V);
	for (int i = 0; i < 4; i++) {
		t_check_ret(nrn_graph_launch(s, g, args, NULL, 0), 0);
		t_check_ret(nrn_stream_sync(s), -EIO);
		e = site_of(s);
		t_check(e.graph_id == nrn_graph_id(g));
		t_check(e.graph_insn == K);
		t_check(e.origin == K);
		t_check(e.job_insn == (i ? K : K - NRN_BATCH_MAX_OPS));
	}
	t_check_ret(nrn_graph_info(g, &info), 0);
	t_check(info.resident == 1);
	nrn_graph_destroy(g);
}

int main(void)
{
	struct nrn_stream *s = NULL;
	float table[V * E], xs[4 * X];

	dev = t_open_device();
	tab = t_buffer(dev, V * E * 4);
	idx = t_buffer(dev, 64);
	out = t_buffer(dev, L * E * 4);
	x = t_buffer(dev, 4 * X * 4);
	y = t_buffer(dev, X * 4);
	scr = t_buffer(dev, 4096);
	other = t_buffer(dev, X * 4);
	arena = t_buffer(dev, 1 << 16);
	t_check_ret(nrn_stream_create(dev, &s), 0);
	if (!s || !tab || !idx || !out || !x || !y || !scr || !other || !arena)
		return T_EXIT_FAIL;
	for (int i = 0; i < V * E; i++)
		table[i] = (float)i;
	t_check_ret(nrn_copy_h2d(tab, 0, table, sizeof(table)), 0);
	for (int i = 0; i < 4 * X; i++)
		xs[i] = (float)(i % 7) * 0.125f;
	t_check_ret(nrn_copy_h2d(x, 0, xs, sizeof(xs)), 0);
	test_eager(s);
	test_graphs(s);
	test_split(s);
	nrn_stream_destroy(s);
	nrn_buffer_free(tab);
	nrn_buffer_free(idx);
	nrn_buffer_free(out);
	nrn_buffer_free(x);
	nrn_buffer_free(y);
	nrn_buffer_free(scr);
	nrn_buffer_free(other);
	nrn_buffer_free(arena);
	nrn_device_close(dev);
	return t_exit();
}

// SPDX-License-Identifier: MIT
/*
 * Description: the operations layer against the same computation on the
 * CPU: elementwise with broadcasting and scalars, matmul (batched,
 * transposed, bias, accumulate), reductions, softmax, gather/scatter, casts,
 * complex64 (and what it refuses), random numbers; operands of more than four dimensions and non-contiguous
 * views; empty operands without memory; bad descriptors.
 */
#include <errno.h>
#include <math.h>

#include "t_helpers.h"

static struct nrn_device *dev;
static struct nrn_stream *s;

/* A device tensor with its contents, contiguous. */
struct dt {
	struct nrn_buffer *buf;
	struct nrn_tensor_desc d;
	float *host;
	size_t n;
};

static struct dt mk(unsigned int ndim, const int64_t *shape, unsigned int seed)
{
	struct dt t = { 0 };

	t.n = 1;
	for (unsigned int i = 0; i < ndim; i++)
		t.n *= (size_t)shape[i];
	t.host = calloc(t.n ? t.n : 1, sizeof(float));
	for (size_t i = 0; i < t.n; i++)
		t.host[i] = (float)((int)((i * 2654435761u + seed * 97) % 2001) - 1000) / 250.0f;
	t_check_ret(nrn_buffer_alloc(dev, (t.n ? t.n : 1) * 4, NRN_MEM_DEVICE, &t.buf), 0);
	nrn_tensor_contiguous(&t.d, t.buf, 0, NISA_F32, ndim, shape);
	t_check_ret(nrn_copy_h2d(t.buf, 0, t.host, t.n * 4), 0);
	return t;
}

static void rd(struct dt *t)
{
	t_check_ret(nrn_stream_copy_d2h(s, t->host, t->buf, 0, t->n * 4), 0);
}

static void rm_dt(struct dt *t)
{
	nrn_buffer_free(t->buf);
	free(t->host);
}

static int close_enough(float got, double want, double rel)
{
	if (isnan(want))
		return isnan(got);
	return fabs(got - want) <= rel * fmax(1.0, fabs(want));
}

static void test_broadcast(void)
{
	int64_t sa[3] = { 2, 3, 4 }, sb[2] = { 1, 4 };
	struct dt a = mk(3, sa, 1), b = mk(2, sb, 2), o = mk(3, sa, 3);

	t_check_ret(nrn_op_binary(s, NISA_BIN_ADD, &o.d, &a.d, &b.d, 0.5), 0);
	rd(&o);
	for (size_t i = 0; i < o.n; i++)
		t_check(o.host[i] == (float)(a.host[i] + 0.5 * b.host[i % 4]));
	t_check_ret(nrn_op_binary_scalar(s, NISA_BIN_DIV, &o.d, &a.d, 2.0, 1, 1), 0);
	rd(&o);
	for (size_t i = 0; i < o.n; i++)
		t_check(o.host[i] == (float)(2.0 / a.host[i]));
	/* Shapes that do not broadcast. */
	{
		int64_t bad[1] = { 3 };
		struct dt c = mk(1, bad, 4);

		t_check_ret(nrn_op_binary(s, NISA_BIN_ADD, &o.d, &a.d, &c.d, 1), -EINVAL);
		rm_dt(&c);
	}
	rm_dt(&a);
	rm_dt(&b);
	rm_dt(&o);
}

static void test_high_rank_and_views(void)
{
	/* 6-D, with a transposed (non-contiguous) source: no dims merge. */
	int64_t sh[6] = { 2, 3, 2, 2, 3, 2 };
	struct dt a = mk(6, sh, 5), o = mk(6, sh, 6);
	struct nrn_tensor_desc at = a.d;
	size_t idx[6];

	/* Swap the last two dims of a (viewed as [..,2,3] read as [..,3,2]). */
	at.shape[4] = 3;
	at.shape[5] = 2;
	at.strides[4] = 1;
	at.strides[5] = 3;
	t_check_ret(nrn_op_unary(s, NISA_UN_NEG, &o.d, &at), 0);
	rd(&o);
	for (size_t i = 0; i < o.n; i++) {
		size_t r = i, src = 0;

		for (int d = 5; d >= 0; d--) {
			idx[d] = r % (size_t)sh[d];
			r /= (size_t)sh[d];
		}
		for (int d = 0; d < 6; d++)
			src += idx[d] * (size_t)at.strides[d];
		t_check(o.host[i] == -a.host[src]);
	}
	rm_dt(&a);
	rm_dt(&o);
}

static void test_matmul(void)
{
	int64_t sa[3] = { 2, 5, 7 }, sb[2] = { 7, 3 }, so[3] = { 2, 5, 3 }, sbias[1] = { 3 };
	struct dt a = mk(3, sa, 7), b = mk(2, sb, 8), o = mk(3, so, 9), bias = mk(1, sbias, 10);

	/* b broadcasts over a's batch; bias over rows. */
	t_check_ret(nrn_op_matmul(s, &o.d, &a.d, &b.d, &bias.d, 0), 0);
	rd(&o);
	for (int bt = 0; bt < 2; bt++)
		for (int i = 0; i < 5; i++)
			for (int j = 0; j < 3; j++) {
				double w = bias.host[j];

				for (int k = 0; k < 7; k++)
					w += (double)a.host[bt * 35 + i * 7 + k] * b.host[k * 3 + j];
				t_check(close_enough(o.host[bt * 15 + i * 3 + j], w, 1e-5));
			}
	/* Transposed b: a [5,7] @ (bT viewed from a [3,7] tensor). */
	{
		int64_t s2[2] = { 5, 7 }, st[2] = { 3, 7 }, s3[2] = { 5, 3 };
		struct dt x = mk(2, s2, 11), y = mk(2, st, 12), z = mk(2, s3, 13);
		struct nrn_tensor_desc yt = y.d;

		yt.shape[0] = 7;
		yt.shape[1] = 3;
		yt.strides[0] = 1;
		yt.strides[1] = 7;
		t_check_ret(nrn_op_matmul(s, &z.d, &x.d, &yt, NULL, 0), 0);
		rd(&z);
		for (int i = 0; i < 5; i++)
			for (int j = 0; j < 3; j++) {
				double w = 0;

				for (int k = 0; k < 7; k++)
					w += (double)x.host[i * 7 + k] * y.host[j * 7 + k];
				t_check(close_enough(z.host[i * 3 + j], w, 1e-5));
			}
		/* Mismatched inner dimension. */
		t_check_ret(nrn_op_matmul(s, &z.d, &x.d, &x.d, NULL, 0), -EINVAL);
		rm_dt(&x);
		rm_dt(&y);
		rm_dt(&z);
	}
	rm_dt(&a);
	rm_dt(&b);
	rm_dt(&o);
	rm_dt(&bias);
}

/*
 * Empty operands without memory (buf NULL): a product over an empty inner
 * dimension is 0 (+ bias, + dst), a reduction over an empty axis writes
 * its identity; neither reads the missing operand. A gather from an empty
 * axis is the card's BAD_INDEX, not a result left unwritten.
 */
static void test_empty_operands(void)
{
	int64_t sa[2] = { 3, 0 }, sb[2] = { 0, 4 }, so[2] = { 3, 4 }, sbias[1] = { 4 };
	int64_t sr[1] = { 3 };
	struct dt o = mk(2, so, 20), bias = mk(1, sbias, 21), r = mk(1, sr, 22);
	struct nrn_tensor_desc a, b, x;
	float before[12];

	nrn_tensor_contiguous(&a, NULL, 0, NISA_F32, 2, sa);
	nrn_tensor_contiguous(&b, NULL, 0, NISA_F32, 2, sb);
	nrn_tensor_contiguous(&x, NULL, 0, NISA_F32, 2, sa);
	memcpy(before, o.host, sizeof(before));
	/* dst += 0: unchanged */
	t_check_ret(nrn_op_matmul(s, &o.d, &a, &b, NULL, 1), 0);
	rd(&o);
	t_check(!memcmp(o.host, before, sizeof(before)));
	/* dst += 0 + bias */
	t_check_ret(nrn_op_matmul(s, &o.d, &a, &b, &bias.d, 1), 0);
	rd(&o);
	for (int i = 0; i < 12; i++)
		t_check(o.host[i] == before[i] + bias.host[i % 4]);
	/* dst = 0 + bias */
	t_check_ret(nrn_op_matmul(s, &o.d, &a, &b, &bias.d, 0), 0);
	rd(&o);
	for (int i = 0; i < 12; i++)
		t_check(o.host[i] == bias.host[i % 4]);
	/* dst = 0 */
	t_check_ret(nrn_op_matmul(s, &o.d, &a, &b, NULL, 0), 0);
	rd(&o);
	for (int i = 0; i < 12; i++)
		t_check(o.host[i] == 0.0f && !signbit(o.host[i]));
	/* sum, prod and mean over an empty axis: 0, 1, NaN */
	t_check_ret(nrn_op_reduce(s, NISA_RED_SUM, &r.d, &x, 1), 0);
	rd(&r);
	for (int i = 0; i < 3; i++)
		t_check(r.host[i] == 0.0f);
	t_check_ret(nrn_op_reduce(s, NISA_RED_PROD, &r.d, &x, 1), 0);
	rd(&r);
	for (int i = 0; i < 3; i++)
		t_check(r.host[i] == 1.0f);
	t_check_ret(nrn_op_reduce(s, NISA_RED_MEAN, &r.d, &x, 1), 0);
	rd(&r);
	for (int i = 0; i < 3; i++)
		t_check(isnan(r.host[i]));
	/* a gather from an empty axis: every index is out of range */
	{
		int64_t ids[3] = { 0, 0, 0 }, si[2] = { 3, 1 };
		struct nrn_buffer *ib;
		struct nrn_tensor_desc id, rv;

		t_check_ret(nrn_buffer_alloc(dev, sizeof(ids), NRN_MEM_DEVICE, &ib), 0);
		t_check_ret(nrn_copy_h2d(ib, 0, ids, sizeof(ids)), 0);
		nrn_tensor_contiguous(&id, ib, 0, NISA_I64, 2, si);
		nrn_tensor_contiguous(&rv, r.buf, 0, NISA_F32, 2, si);
		t_check_ret(nrn_op_gather(s, NISA_IDX_ELEMENT, &rv, &x, &id, 1), 0);
		t_check_ret(nrn_stream_sync(s), -EIO);
		t_check(nrn_stream_device_error(s) == NISA_ERR_BAD_INDEX);
		nrn_buffer_free(ib);
	}
	rm_dt(&o);
	rm_dt(&bias);
	rm_dt(&r);
}

static void test_reduce_softmax(void)
{
	int64_t sx[3] = { 4, 6, 5 }, sr[2] = { 4, 5 }, si[3] = { 4, 1, 5 };
	struct dt x = mk(3, sx, 14), r = mk(2, sr, 15), sm = mk(3, sx, 16);
	struct nrn_buffer *ib;
	struct nrn_tensor_desc id;
	int64_t idx[20];

	/* sum over the middle axis, the result without it */
	t_check_ret(nrn_op_reduce(s, NISA_RED_SUM, &r.d, &x.d, 1), 0);
	rd(&r);
	for (int i = 0; i < 4; i++)
		for (int k = 0; k < 5; k++) {
			double w = 0;

			for (int j = 0; j < 6; j++)
				w += x.host[i * 30 + j * 5 + k];
			t_check(close_enough(r.host[i * 5 + k], w, 1e-6));
		}
	/* argmax over the middle axis, kept as extent 1, into int64 */
	t_check_ret(nrn_buffer_alloc(dev, sizeof(idx), NRN_MEM_DEVICE, &ib), 0);
	nrn_tensor_contiguous(&id, ib, 0, NISA_I64, 3, si);
	t_check_ret(nrn_op_reduce(s, NISA_RED_ARGMAX, &id, &x.d, -2), 0);
	t_check_ret(nrn_stream_copy_d2h(s, idx, ib, 0, sizeof(idx)), 0);
	for (int i = 0; i < 4; i++)
		for (int k = 0; k < 5; k++) {
			int best = 0;

			for (int j = 1; j < 6; j++)
				if (x.host[i * 30 + j * 5 + k] > x.host[i * 30 + best * 5 + k])
					best = j;
			t_check(idx[i * 5 + k] == best);
		}
	/* log_softmax over the last axis */
	t_check_ret(nrn_op_softmax(s, NISA_SM_LOG_SOFTMAX, &sm.d, &x.d, -1), 0);
	rd(&sm);
	for (int row = 0; row < 24; row++) {
		double m = -INFINITY, z = 0;

		for (int j = 0; j < 5; j++)
			m = fmax(m, x.host[row * 5 + j]);
		for (int j = 0; j < 5; j++)
			z += exp(x.host[row * 5 + j] - m);
		for (int j = 0; j < 5; j++)
			t_check(close_enough(sm.host[row * 5 + j],
					     x.host[row * 5 + j] - m - log(z), 1e-6));
	}
	t_check_ret(nrn_op_reduce(s, NISA_RED_SUM, &r.d, &x.d, 3), -EINVAL);
	nrn_buffer_free(ib);
	rm_dt(&x);
	rm_dt(&r);
	rm_dt(&sm);
}

static void test_gather_scatter(void)
{
	int64_t sw[2] = { 10, 4 }, so[2] = { 3, 4 }, sl[1] = { 3 };
	struct dt w = mk(2, sw, 17), o = mk(2, so, 18), g = mk(2, sw, 19);
	int64_t ids[3] = { 9, 0, 9 };
	struct nrn_buffer *ib;
	struct nrn_tensor_desc id;

	t_check_ret(nrn_buffer_alloc(dev, sizeof(ids), NRN_MEM_DEVICE, &ib), 0);
	t_check_ret(nrn_copy_h2d(ib, 0, ids, sizeof(ids)), 0);
	nrn_tensor_contiguous(&id, ib, 0, NISA_I64, 1, sl);
	t_check_ret(nrn_op_gather(s, NISA_IDX_SELECT, &o.d, &w.d, &id, 0), 0);
	rd(&o);
	for (int l = 0; l < 3; l++)
		t_check(!memcmp(&o.host[l * 4], &w.host[ids[l] * 4], 16));
	t_check_ret(nrn_op_fill(s, &g.d, 0), 0);
	t_check_ret(nrn_op_scatter_add(s, NISA_IDX_SELECT, &g.d, &o.d, &id, 0), 0);
	rd(&g);
	for (int c = 0; c < 4; c++) {
		t_check(close_enough(g.host[9 * 4 + c], 2.0 * w.host[9 * 4 + c], 1e-6));
		t_check(g.host[0 * 4 + c] == w.host[0 * 4 + c]);
		t_check(g.host[5 * 4 + c] == 0);
	}
	nrn_buffer_free(ib);
	rm_dt(&w);
	rm_dt(&o);
	rm_dt(&g);
}

/*
 * Element-form GATHER and SCATTER_ADD of six dims (the card takes four):
 * one instruction per leading index, against the CPU. src is larger than
 * the index off the axis, as torch.gather allows.
 */
static void test_gather_scatter_6d(void)
{
	int64_t ss[6] = { 2, 3, 1, 2, 2, 5 }, si[6] = { 2, 2, 1, 2, 2, 3 };
	struct dt src = mk(6, ss, 30), out = mk(6, si, 31), acc = mk(6, ss, 32);
	int64_t ids[48];
	struct nrn_buffer *ib;
	struct nrn_tensor_desc id;
	float before[120];

	for (int k = 0; k < 48; k++)
		ids[k] = (k * 7 + 3) % 5;
	t_check_ret(nrn_buffer_alloc(dev, sizeof(ids), NRN_MEM_DEVICE, &ib), 0);
	t_check_ret(nrn_copy_h2d(ib, 0, ids, sizeof(ids)), 0);
	nrn_tensor_contiguous(&id, ib, 0, NISA_I64, 6, si);
	/* out[a][b][0][d][e][f] = src[a][b][0][d][e][ids[a][b][0][d][e][f]] */
	t_check_ret(nrn_op_gather(s, NISA_IDX_ELEMENT, &out.d, &src.d, &id, -1), 0);
	rd(&out);
	for (int k = 0; k < 48; k++) {
		int f = k % 3, e = k / 3 % 2, d = k / 6 % 2, b = k / 12 % 2, a = k / 24;
		int row = (((a * 3 + b) * 1 + 0) * 2 + d) * 2 + e;

		(void)f;
		t_check(out.host[k] == src.host[row * 5 + ids[k]]);
	}
	/* acc[a][b][0][d][e][ids[...]] += out[...] along axis 5 */
	memcpy(before, acc.host, sizeof(before));
	t_check_ret(nrn_op_scatter_add(s, NISA_IDX_ELEMENT, &acc.d, &out.d, &id, 5), 0);
	rd(&acc);
	for (int k = 0; k < 48; k++) {
		int e = k / 3 % 2, d = k / 6 % 2, b = k / 12 % 2, a = k / 24;
		int row = (((a * 3 + b) * 1 + 0) * 2 + d) * 2 + e;

		before[row * 5 + ids[k]] += out.host[k];
	}
	for (int k = 0; k < 120; k++)
		t_check(close_enough(acc.host[k], before[k], 1e-6));
	nrn_buffer_free(ib);
	rm_dt(&src);
	rm_dt(&out);
	rm_dt(&acc);
}

static void test_casts_compare_where(void)
{
	int64_t sh[1] = { 8 };
	struct dt a = mk(1, sh, 20), o = mk(1, sh, 21);
	struct nrn_buffer *bb, *hb;
	struct nrn_tensor_desc bf, mask;
	uint8_t m[8];

	t_check_ret(nrn_buffer_alloc(dev, 16, NRN_MEM_DEVICE, &bb), 0);
	t_check_ret(nrn_buffer_alloc(dev, 8, NRN_MEM_DEVICE, &hb), 0);
	nrn_tensor_contiguous(&bf, bb, 0, NISA_BF16, 1, sh);
	nrn_tensor_contiguous(&mask, hb, 0, NISA_BOOL, 1, sh);
	t_check_ret(nrn_op_copy(s, &bf, &a.d), 0);
	t_check_ret(nrn_op_copy(s, &o.d, &bf), 0);
	rd(&o);
	for (int i = 0; i < 8; i++)
		t_check(close_enough(o.host[i], a.host[i], 1.0 / 128));
	t_check_ret(nrn_op_compare_scalar(s, NISA_CMP_GE, &mask, &a.d, 0.0), 0);
	t_check_ret(nrn_stream_copy_d2h(s, m, hb, 0, 8), 0);
	for (int i = 0; i < 8; i++)
		t_check(m[i] == (a.host[i] >= 0));
	t_check_ret(nrn_op_unary(s, NISA_UN_RELU, &o.d, &a.d), 0);
	rd(&o);
	for (int i = 0; i < 8; i++)
		t_check(o.host[i] == (a.host[i] > 0 ? a.host[i] : 0));
	/* Host buffers are not operands of compute. */
	{
		struct nrn_buffer *host;
		struct nrn_tensor_desc h;

		t_check_ret(nrn_buffer_alloc(dev, 32, NRN_MEM_HOST, &host), 0);
		nrn_tensor_contiguous(&h, host, 0, NISA_F32, 1, sh);
		t_check_ret(nrn_op_fill(s, &h, 1), -EINVAL);
		nrn_buffer_free(host);
	}
	nrn_buffer_free(bb);
	nrn_buffer_free(hb);
	rm_dt(&a);
	rm_dt(&o);
}

/*
 * complex64: what the card computes on it runs (a product, an FFT round
 * trip), anything else is refused before it is encoded (-EDOM).
 */
static void test_complex(void)
{
	int64_t sh[1] = { 8 }, one[1] = { 1 };
	struct nrn_buffer *zb, *ob;
	struct nrn_tensor_desc z, w, r, sum;
	float host[16], back[16];

	for (int i = 0; i < 16; i++)
		host[i] = (float)(i % 5) - 2.0f;
	t_check_ret(nrn_buffer_alloc(dev, 3 * 64, NRN_MEM_DEVICE, &zb), 0);
	t_check_ret(nrn_buffer_alloc(dev, 8, NRN_MEM_DEVICE, &ob), 0);
	nrn_tensor_contiguous(&z, zb, 0, NISA_C64, 1, sh);
	nrn_tensor_contiguous(&w, zb, 64, NISA_C64, 1, sh);
	nrn_tensor_contiguous(&r, zb, 128, NISA_C64, 1, sh);
	nrn_tensor_contiguous(&sum, ob, 0, NISA_C64, 1, one);
	t_check_ret(nrn_copy_h2d(zb, 0, host, 64), 0);
	t_check_ret(nrn_op_fft(s, NISA_FFT_FORWARD, &w, &z, 0, 1.0), 0);
	t_check_ret(nrn_op_fft(s, NISA_FFT_BACKWARD, &r, &w, 0, 1.0 / 8), 0);
	t_check_ret(nrn_op_binary(s, NISA_BIN_MUL, &r, &r, &z, 1.0), 0);
	t_check_ret(nrn_stream_copy_d2h(s, back, zb, 128, 64), 0);
	for (int i = 0; i < 8; i++) {
		float a = host[2 * i], b = host[2 * i + 1];

		t_check(close_enough(back[2 * i], a * a - b * b, 1e-5));
		t_check(close_enough(back[2 * i + 1], 2 * a * b, 1e-5));
	}
	t_check_ret(nrn_op_unary(s, NISA_UN_ERF, &r, &z), -EDOM);
	t_check_ret(nrn_op_reduce(s, NISA_RED_MAX, &sum, &z, 0), -EDOM);
	t_check_ret(nrn_op_softmax(s, NISA_SM_SOFTMAX, &r, &z, 0), -EDOM);
	nrn_buffer_free(zb);
	nrn_buffer_free(ob);
}

/* A device buffer of @n int64 random bits: element i from counter off + i. */
static int64_t *draw_bits(struct nrn_tensor_desc *d, size_t n, uint64_t seed,
			  uint64_t off)
{
	int64_t *h = calloc(n, 8);

	t_check_ret(nrn_op_random(s, NISA_RNG_BITS, d, seed, off), 0);
	t_check_ret(nrn_stream_copy_d2h(s, h, d->buf, d->offset, n * 8), 0);
	return h;
}

/*
 * Random numbers: the Random123 known answer, element i made from counter
 * offset + i whatever the layout (halves, a >4-D transposed view), the
 * uniform recipe against the raw bits, and bad arguments.
 */
static void test_random(void)
{
	enum { N = 2 * 3 * 2 * 3 * 2 * 5 };
	int64_t shape6[6] = { 2, 3, 2, 3, 2, 5 }, n1[1] = { N }, half[1] = { N / 2 };
	struct nrn_tensor_desc d, v;
	struct nrn_buffer *buf, *fb;
	int64_t *all, *halves, *tr;
	float f[N];

	t_check_ret(nrn_buffer_alloc(dev, 3 * N * 8, NRN_MEM_DEVICE, &buf), 0);
	t_check_ret(nrn_buffer_alloc(dev, N * 4, NRN_MEM_DEVICE, &fb), 0);
	nrn_tensor_contiguous(&d, buf, 0, NISA_I64, 1, (int64_t[]){ 1 });
	all = draw_bits(&d, 1, 0, 0);
	t_check((uint64_t)all[0] == 0xe169c58d6627e8d5ull); /* key 0, counter 0 */
	free(all);

	nrn_tensor_contiguous(&d, buf, 0, NISA_I64, 1, n1);
	all = draw_bits(&d, N, 99, 1000);
	/* The same seed and offset: the same numbers; two halves too. */
	halves = draw_bits(&d, N, 99, 1000);
	t_check(memcmp(all, halves, N * 8) == 0);
	free(halves);
	nrn_tensor_contiguous(&d, buf, N * 8, NISA_I64, 1, half);
	free(draw_bits(&d, N / 2, 99, 1000));
	d.offset += N / 2 * 8;
	free(draw_bits(&d, N / 2, 99, 1000 + N / 2));
	halves = calloc(N, 8);
	t_check_ret(nrn_stream_copy_d2h(s, halves, buf, N * 8, N * 8), 0);
	t_check(memcmp(all, halves, N * 8) == 0);
	free(halves);

	/* A 6-D view with reversed strides: nothing merges, 6 instructions. */
	memset(&v, 0, sizeof(v));
	v.buf = buf;
	v.offset = 2 * N * 8;
	v.dtype = NISA_I64;
	v.ndim = 6;
	{
		int64_t st = 1;

		for (int k = 0; k < 6; k++) {
			v.shape[k] = shape6[k];
			v.strides[k] = st;
			st *= shape6[k];
		}
	}
	tr = calloc(N, 8);
	t_check_ret(nrn_op_random(s, NISA_RNG_BITS, &v, 99, 1000), 0);
	t_check_ret(nrn_stream_copy_d2h(s, tr, buf, 2 * N * 8, N * 8), 0);
	for (int64_t i = 0, ok = 1; i < N && ok; i++) {
		int64_t rem = i, at = 0;

		for (int k = 5; k >= 0; k--) {
			at += rem % shape6[k] * v.strides[k];
			rem /= shape6[k];
		}
		ok = tr[at] == all[i];
		t_check(ok);
	}
	free(tr);

	/* Uniform float32: the top 24 bits of word 0, times 2^-24. */
	nrn_tensor_contiguous(&d, fb, 0, NISA_F32, 1, n1);
	t_check_ret(nrn_op_random(s, NISA_RNG_UNIFORM, &d, 99, 1000), 0);
	t_check_ret(nrn_stream_copy_d2h(s, f, fb, 0, sizeof(f)), 0);
	for (int i = 0; i < N; i++)
		t_check(f[i] == ldexpf((float)(((uint64_t)all[i] & 0xffffffffu) >> 8), -24));
	free(all);

	/* Bad arguments. */
	t_check_ret(nrn_op_random(s, NISA_RNG_BITS, &d, 0, 0), -EINVAL);
	t_check_ret(nrn_op_random(s, NISA_NUM_RANDOM, &d, 0, 0), -EINVAL);
	nrn_tensor_contiguous(&d, buf, 0, NISA_I32, 1, n1);
	t_check_ret(nrn_op_random(s, NISA_RNG_UNIFORM, &d, 0, 0), -EINVAL);
	t_check_ret(nrn_op_random(s, NISA_RNG_NORMAL, &d, 0, 0), -EINVAL);
	t_check_ret(nrn_op_random(NULL, NISA_RNG_BITS, &d, 0, 0), -EINVAL);
	t_check_ret(nrn_op_random(s, NISA_RNG_BITS, NULL, 0, 0), -EINVAL);
	nrn_buffer_free(buf);
	nrn_buffer_free(fb);
}

int main(void)
{
	dev = t_open_device();
	t_check_ret(nrn_stream_create(dev, &s), 0);
	test_broadcast();
	test_high_rank_and_views();
	test_matmul();
	test_empty_operands();
	test_reduce_softmax();
	test_gather_scatter();
	test_gather_scatter_6d();
	test_casts_compare_where();
	test_complex();
	test_random();
	t_check_ret(nrn_stream_sync(s), 0);
	nrn_stream_destroy(s);
	nrn_device_close(dev);
	return t_exit();
}

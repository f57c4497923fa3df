// SPDX-License-Identifier: MIT
/*
 * Description: nrn_op_scatter (NISA_INSN_SCATTER) against host loops --
 * scatter_reduce max/mul with duplicate indices, index_copy rows (the last
 * duplicate wins), an out-of-range index failing the stream with
 * NISA_ERR_BAD_INDEX and nothing written, bad arguments, and the
 * disassembler's text.
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "t_helpers.h"

static struct nrn_device *dev;

static struct nrn_buffer *up(const void *p, size_t n)
{
	struct nrn_buffer *b;

	t_check_ret(nrn_buffer_alloc(dev, n, NRN_MEM_DEVICE, &b), 0);
	t_check_ret(nrn_copy_h2d(b, 0, p, n), 0);
	return b;
}

static void test_reduce(struct nrn_stream *s)
{
	float self[6] = { 1, 2, 3, 4, 5, 6 }, src[6] = { 7, -1, 0.5f, 9, 2, 3 };
	int64_t idx[6] = { 0, 0, 2, 1, 1, 1 }, sh[2] = { 2, 3 };
	struct nrn_buffer *bs = up(self, sizeof(self)), *bv = up(src, sizeof(src)),
			  *bi = up(idx, sizeof(idx));
	struct nrn_tensor_desc ds, dv, di;
	float o[6];

	nrn_tensor_contiguous(&ds, bs, 0, NISA_F32, 2, sh);
	nrn_tensor_contiguous(&dv, bv, 0, NISA_F32, 2, sh);
	nrn_tensor_contiguous(&di, bi, 0, NISA_I64, 2, sh);
	/* scatter_reduce_(1, idx, src, 'amax') */
	t_check_ret(nrn_op_scatter(s, NISA_SCAT_MAX, NISA_IDX_ELEMENT, &ds, &dv, &di, 1), 0);
	t_check_ret(nrn_stream_copy_d2h(s, o, bs, 0, sizeof(o)), 0);
	t_check(o[0] == 7 && o[1] == 2 && o[2] == 3);
	t_check(o[3] == 4 && o[4] == 9 && o[5] == 6);
	/* then 'prod' along axis 0 with the same index rows 0 and 1 */
	{
		int64_t i0[6] = { 1, 1, 1, 1, 1, 1 };

		t_check_ret(nrn_copy_h2d(bi, 0, i0, sizeof(i0)), 0);
		t_check_ret(nrn_op_scatter(s, NISA_SCAT_MUL, NISA_IDX_ELEMENT, &ds, &dv, &di, 0), 0);
		t_check_ret(nrn_stream_copy_d2h(s, o, bs, 0, sizeof(o)), 0);
		t_check(o[0] == 7 && o[3] == 4 * 7 * 9);
		t_check(o[4] == 9 * -1 * 2 && o[5] == 6 * 0.5f * 3);
	}
	/* index_copy_(0, [1, 1], rows): the last duplicate wins */
	{
		int64_t two[1] = { 2 }, rows[2] = { 1, 1 };
		struct nrn_tensor_desc dr;

		t_check_ret(nrn_copy_h2d(bi, 0, rows, sizeof(rows)), 0);
		nrn_tensor_contiguous(&dr, bi, 0, NISA_I64, 1, two);
		t_check_ret(nrn_copy_h2d(bs, 0, self, sizeof(self)), 0);
		t_check_ret(nrn_op_scatter(s, NISA_SCAT_ASSIGN, NISA_IDX_SELECT, &ds, &dv, &dr, 0), 0);
		t_check_ret(nrn_stream_copy_d2h(s, o, bs, 0, sizeof(o)), 0);
		t_check(!memcmp(o, self, 12) && !memcmp(&o[3], &src[3], 12));
	}
	/* bad arguments */
	t_check_ret(nrn_op_scatter(s, NISA_NUM_SCATTER, NISA_IDX_ELEMENT, &ds, &dv, &di, 0), -EINVAL);
	t_check_ret(nrn_op_scatter(s, NISA_SCAT_ADD, NISA_NUM_IDX, &ds, &dv, &di, 0), -EINVAL);
	t_check_ret(nrn_op_scatter(s, NISA_SCAT_ADD, NISA_IDX_ELEMENT, &ds, &dv, &dv, 0), -EINVAL);
	t_check_ret(nrn_op_scatter(NULL, NISA_SCAT_ADD, NISA_IDX_ELEMENT, &ds, &dv, &di, 0), -EINVAL);
	t_check_ret(nrn_op_scatter(s, NISA_SCAT_ADD, NISA_IDX_ELEMENT, &ds, NULL, &di, 0), -EINVAL);
	nrn_buffer_free(bs);
	nrn_buffer_free(bv);
	nrn_buffer_free(bi);
}

/* An index outside the axis fails the work with -EIO and writes nothing. */
static void test_bad_index(void)
{
	struct nrn_stream *s;
	float self[3] = { 1, 2, 3 }, src[2] = { 5, 6 }, o[3];
	int64_t idx[2] = { 0, 3 }, n3[1] = { 3 }, n2[1] = { 2 };
	struct nrn_buffer *bs = up(self, sizeof(self)), *bv = up(src, sizeof(src)),
			  *bi = up(idx, sizeof(idx));
	struct nrn_tensor_desc ds, dv, di;

	t_check_ret(nrn_stream_create(dev, &s), 0);
	nrn_tensor_contiguous(&ds, bs, 0, NISA_F32, 1, n3);
	nrn_tensor_contiguous(&dv, bv, 0, NISA_F32, 1, n2);
	nrn_tensor_contiguous(&di, bi, 0, NISA_I64, 1, n2);
	t_check_ret(nrn_op_scatter(s, NISA_SCAT_ASSIGN, NISA_IDX_ELEMENT, &ds, &dv, &di, 0), 0);
	t_check(nrn_stream_sync(s) == -EIO);
	nrn_stream_destroy(s);
	t_check_ret(nrn_copy_d2h(o, bs, 0, sizeof(o)), 0);
	t_check(!memcmp(o, self, sizeof(o)));
	nrn_buffer_free(bs);
	nrn_buffer_free(bv);
	nrn_buffer_free(bi);
}

static void test_format(void)
{
	struct nisa_insn in = { .opcode = NISA_INSN_SCATTER, .axis = 1,
		.subop = NISA_SCATTER_SUBOP(NISA_SCAT_MAX, NISA_IDX_ELEMENT) };
	char text[512];

	t_check_ret(nrn_insn_format(&in, text, sizeof(text)), 0);
	t_check(!strncmp(text, "scatter.max.element dst=", 24));
	t_check(strstr(text, " src1=") && strstr(text, " axis=1"));
}

int main(void)
{
	struct nrn_stream *s;

	dev = t_open_device();
	t_check_ret(nrn_stream_create(dev, &s), 0);
	test_reduce(s);
	t_check_ret(nrn_stream_sync(s), 0);
	nrn_stream_destroy(s);
	test_bad_index();
	test_format();
	nrn_device_close(dev);
	return t_exit();
}

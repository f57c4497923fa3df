// SPDX-License-Identifier: MIT
/*
 * Description: nrn_op_sort and nrn_op_scan (NISA_INSN_SORT, NISA_INSN_SCAN)
 * and the REDUCE product against host loops -- a stable sort with NaN and
 * ties along each axis of a matrix, descending, cumsum/cummax with indices,
 * an exact int64 product, bad arguments, and the disassembler's text.
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

static void test_sort(struct nrn_stream *s)
{
	/* [2, 4]: rows {3, NaN, 1, 1} and {-0.0, 0.0, -2, 5} */
	float x[8] = { 3, NAN, 1, 1, -0.0f, 0.0f, -2, 5 }, v[8];
	int64_t i[8], sh[2] = { 2, 4 };
	const int64_t row_i[8] = { 2, 3, 0, 1, 2, 0, 1, 3 };
	const int64_t col_desc_i[8] = { 0, 0, 0, 1, 1, 1, 1, 0 };
	struct nrn_buffer *bx = up(x, sizeof(x)), *bv = up(x, sizeof(x)), *bi = up(i, sizeof(i));
	struct nrn_tensor_desc dx, dv, di;

	nrn_tensor_contiguous(&dx, bx, 0, NISA_F32, 2, sh);
	nrn_tensor_contiguous(&dv, bv, 0, NISA_F32, 2, sh);
	nrn_tensor_contiguous(&di, bi, 0, NISA_I64, 2, sh);
	t_check_ret(nrn_op_sort(s, &dv, &di, &dx, -1, 0), 0);
	t_check_ret(nrn_stream_copy_d2h(s, v, bv, 0, sizeof(v)), 0);
	t_check_ret(nrn_stream_copy_d2h(s, i, bi, 0, sizeof(i)), 0);
	t_check(!memcmp(i, row_i, sizeof(i)));
	t_check(v[0] == 1 && v[2] == 3 && isnan(v[3]));
	t_check(signbit(v[5]) && !signbit(v[6]) && v[4] == -2);
	/* along axis 0, descending: NaN first, a tie keeps its order */
	t_check_ret(nrn_op_sort(s, &dv, &di, &dx, 0, 1), 0);
	t_check_ret(nrn_stream_copy_d2h(s, i, bi, 0, sizeof(i)), 0);
	t_check(!memcmp(i, col_desc_i, sizeof(i)));
	/* bad arguments */
	t_check_ret(nrn_op_sort(s, &dv, &di, &dx, 2, 0), -EINVAL);
	t_check_ret(nrn_op_sort(s, &dv, &dx, &dx, 0, 0), -EINVAL);
	t_check_ret(nrn_op_sort(NULL, &dv, &di, &dx, 0, 0), -EINVAL);
	t_check_ret(nrn_op_sort(s, &di, NULL, &dx, 0, 0), -EINVAL);
	nrn_buffer_free(bx);
	nrn_buffer_free(bv);
	nrn_buffer_free(bi);
}

static void test_scan(struct nrn_stream *s)
{
	float x[6] = { 1, 4, 4, -1, 2, 0.5f }, v[6];
	int64_t i[6], n6[1] = { 6 }, n3[2] = { 2, 3 };
	int64_t big[3] = { 1ll << 31, 1ll << 31, -3 }, p[1];
	struct nrn_buffer *bx = up(x, sizeof(x)), *bv = up(x, sizeof(x)), *bi = up(i, sizeof(i));
	struct nrn_buffer *bb = up(big, sizeof(big)), *bp = up(p, sizeof(p));
	struct nrn_tensor_desc dx, dv, di, db, dp;
	const int64_t one[1] = { 1 }, three[1] = { 3 };

	nrn_tensor_contiguous(&dx, bx, 0, NISA_F32, 1, n6);
	nrn_tensor_contiguous(&dv, bv, 0, NISA_F32, 1, n6);
	nrn_tensor_contiguous(&di, bi, 0, NISA_I64, 1, n6);
	t_check_ret(nrn_op_scan(s, NISA_SCAN_SUM, &dv, NULL, &dx, 0), 0);
	t_check_ret(nrn_stream_copy_d2h(s, v, bv, 0, sizeof(v)), 0);
	t_check(v[0] == 1 && v[2] == 9 && v[3] == 8 && v[5] == 10.5f);
	t_check_ret(nrn_op_scan(s, NISA_SCAN_MAX, &dv, &di, &dx, 0), 0);
	t_check_ret(nrn_stream_copy_d2h(s, i, bi, 0, sizeof(i)), 0);
	t_check(i[0] == 0 && i[1] == 1 && i[2] == 2 && i[5] == 2); /* the last tie */
	/* along the rows of [2, 3] */
	nrn_tensor_contiguous(&dx, bx, 0, NISA_F32, 2, n3);
	nrn_tensor_contiguous(&dv, bv, 0, NISA_F32, 2, n3);
	t_check_ret(nrn_op_scan(s, NISA_SCAN_PROD, &dv, NULL, &dx, 1), 0);
	t_check_ret(nrn_stream_copy_d2h(s, v, bv, 0, sizeof(v)), 0);
	t_check(v[2] == 16 && v[3] == -1 && v[5] == -1);
	/* an exact int64 product, wrapping: 2^31 * 2^31 * -3 */
	nrn_tensor_contiguous(&db, bb, 0, NISA_I64, 1, three);
	nrn_tensor_contiguous(&dp, bp, 0, NISA_I64, 1, one);
	t_check_ret(nrn_op_reduce(s, NISA_RED_PROD, &dp, &db, 0), 0);
	t_check_ret(nrn_stream_copy_d2h(s, p, bp, 0, sizeof(p)), 0);
	t_check(p[0] == 1ll << 62); /* -3 * 2^62 wraps to 2^62 */
	/* bad arguments: indices only for MAX/MIN, a bad op */
	nrn_tensor_contiguous(&dx, bx, 0, NISA_F32, 1, n6);
	nrn_tensor_contiguous(&dv, bv, 0, NISA_F32, 1, n6);
	t_check_ret(nrn_op_scan(s, NISA_SCAN_SUM, &dv, &di, &dx, 0), -EINVAL);
	t_check_ret(nrn_op_scan(s, NISA_NUM_SCAN, &dv, NULL, &dx, 0), -EINVAL);
	nrn_buffer_free(bx);
	nrn_buffer_free(bv);
	nrn_buffer_free(bi);
	nrn_buffer_free(bb);
	nrn_buffer_free(bp);
}

static void test_format(void)
{
	struct nisa_insn in = { .opcode = NISA_INSN_SORT, .axis = -1,
				.flags = NISA_IF_DESCENDING | NISA_IF_INDICES };
	char text[512];

	t_check_ret(nrn_insn_format(&in, text, sizeof(text)), 0);
	t_check(!strncmp(text, "sort dst=", 9));
	t_check(strstr(text, " src1=") && strstr(text, " axis=-1") &&
		strstr(text, " descending"));
	in = (struct nisa_insn){ .opcode = NISA_INSN_SCAN, .subop = NISA_SCAN_LOGSUMEXP };
	t_check_ret(nrn_insn_format(&in, text, sizeof(text)), 0);
	t_check(!strncmp(text, "scan.logsumexp dst=", 19) && !strstr(text, " src1="));
}

int main(void)
{
	struct nrn_stream *s;

	dev = t_open_device();
	t_check_ret(nrn_stream_create(dev, &s), 0);
	test_sort(s);
	test_scan(s);
	t_check_ret(nrn_stream_sync(s), 0);
	nrn_stream_destroy(s);
	test_format();
	nrn_device_close(dev);
	return t_exit();
}

// SPDX-License-Identifier: MIT
/*
 * Description: nrn_op_linalg on the card: a batch of LU factorizations and
 * solves checked against the CPU (A x = b), a Cholesky factor (L L^T = A)
 * with its info, a singular matrix reported in info, the operand rules
 * (-EINVAL for a missing or extra source, an unknown subop) and the
 * disassembler's names.
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "t_helpers.h"

static struct nrn_device *dev;
static struct nrn_stream *s;

/* A contiguous device tensor of @n elements of @dtype, from @host. */
static struct nrn_buffer *up(const void *host, size_t bytes)
{
	struct nrn_buffer *b;

	t_check_ret(nrn_buffer_alloc(dev, bytes, NRN_MEM_DEVICE, &b), 0);
	t_check_ret(nrn_copy_h2d(b, 0, host, bytes), 0);
	return b;
}

static void down(void *host, struct nrn_buffer *b, size_t bytes)
{
	t_check_ret(nrn_stream_copy_d2h(s, host, b, 0, bytes), 0);
}

#define N 3
#define B 2

static void test_lu_solve(void)
{
	/* Two 3x3 systems; the second one needs row exchanges. */
	float a[B][N][N] = { { { 4, 1, 2 }, { 1, 5, 1 }, { 2, 1, 6 } },
			     { { 0, 2, 1 }, { 3, 1, 4 }, { 1, 7, 2 } } };
	float b[B][N][1] = { { { 1 }, { 2 }, { 3 } }, { { -1 }, { 0 }, { 5 } } };
	float x[B][N][1], lu[B][N][N];
	int32_t piv[B][N], info[B] = { -1, -1 };
	int64_t ms[3] = { B, N, N }, vs[3] = { B, 1, N }, is[3] = { B, 1, 1 };
	int64_t bs[3] = { B, N, 1 };
	struct nrn_buffer *ba = up(a, sizeof(a)), *bb = up(b, sizeof(b));
	struct nrn_buffer *blu = up(lu, sizeof(lu)), *bp = up(piv, sizeof(piv));
	struct nrn_buffer *bi = up(info, sizeof(info)), *bx = up(x, sizeof(x));
	struct nrn_tensor_desc da, db, dlu, dp, di, dx;

	nrn_tensor_contiguous(&da, ba, 0, NISA_F32, 3, ms);
	nrn_tensor_contiguous(&dlu, blu, 0, NISA_F32, 3, ms);
	nrn_tensor_contiguous(&dp, bp, 0, NISA_I32, 3, vs);
	nrn_tensor_contiguous(&di, bi, 0, NISA_I32, 3, is);
	nrn_tensor_contiguous(&db, bb, 0, NISA_F32, 3, bs);
	nrn_tensor_contiguous(&dx, bx, 0, NISA_F32, 3, bs);
	t_check_ret(nrn_op_linalg(s, NISA_LA_GETRF, 0, 0, &dlu, &da, &dp, &di), 0);
	t_check_ret(nrn_op_linalg(s, NISA_LA_GETRS, 0, 0, &dx, &dlu, &dp, &db), 0);
	down(x, bx, sizeof(x));
	down(info, bi, sizeof(info));
	down(piv, bp, sizeof(piv));
	for (int k = 0; k < B; k++) {
		t_check(info[k] == 0);
		for (int i = 0; i < N; i++) {
			double r = 0;

			t_check(piv[k][i] >= 1 && piv[k][i] <= N);
			for (int j = 0; j < N; j++)
				r += (double)a[k][i][j] * x[k][j][0];
			t_check(fabs(r - b[k][i][0]) < 1e-4);
		}
	}
	t_check(piv[1][0] == 2);	/* |3| is the largest of column 0 */

	/* Singular: info names the zero pivot, no error. */
	memset(a[0], 0, sizeof(a[0]));
	a[0][0][0] = 1;
	t_check_ret(nrn_copy_h2d(ba, 0, a, sizeof(a)), 0);
	t_check_ret(nrn_op_linalg(s, NISA_LA_GETRF, 0, 0, &dlu, &da, &dp, &di), 0);
	down(info, bi, sizeof(info));
	t_check(info[0] == 2 && info[1] == 0);

	/* Operand rules. */
	t_check_ret(nrn_op_linalg(s, NISA_LA_GETRF, 0, 0, &dlu, &da, &dp, NULL), -EINVAL);
	t_check_ret(nrn_op_linalg(s, NISA_LA_POTRF, 0, 0, &dlu, &da, &di, &dp), -EINVAL);
	t_check_ret(nrn_op_linalg(s, NISA_NUM_LINALG, 0, 0, &dlu, &da, NULL, NULL), -EINVAL);
	t_check_ret(nrn_op_linalg(s, NISA_LA_GESDD, NISA_IF_LA_NOVEC, 0, &dp, &da, &dlu, NULL),
		    -EINVAL);
	t_check_ret(nrn_stream_sync(s), 0);
	nrn_buffer_free(ba);
	nrn_buffer_free(bb);
	nrn_buffer_free(blu);
	nrn_buffer_free(bp);
	nrn_buffer_free(bi);
	nrn_buffer_free(bx);
}

static void test_cholesky(void)
{
	float a[N][N] = { { 4, 2, 0.4f }, { 2, 5, 1 }, { 0.4f, 1, 3 } }, l[N][N];
	int32_t info = -1;
	int64_t ms[2] = { N, N }, is[2] = { 1, 1 };
	struct nrn_buffer *ba = up(a, sizeof(a)), *bl = up(a, sizeof(a));
	struct nrn_buffer *bi = up(&info, 4);
	struct nrn_tensor_desc da, dl, di;

	nrn_tensor_contiguous(&da, ba, 0, NISA_F32, 2, ms);
	nrn_tensor_contiguous(&dl, bl, 0, NISA_F32, 2, ms);
	nrn_tensor_contiguous(&di, bi, 0, NISA_I32, 2, is);
	t_check_ret(nrn_op_linalg(s, NISA_LA_POTRF, 0, 0, &dl, &da, &di, NULL), 0);
	down(l, bl, sizeof(l));
	down(&info, bi, 4);
	t_check(info == 0);
	for (int i = 0; i < N; i++) {
		for (int j = 0; j < N; j++) {
			double r = 0;

			for (int k = 0; k < N; k++)
				r += (double)l[i][k] * l[j][k];
			t_check(fabs(r - a[i][j]) < 1e-5);
			if (j > i)
				t_check(l[i][j] == 0);
		}
	}
	nrn_buffer_free(ba);
	nrn_buffer_free(bl);
	nrn_buffer_free(bi);
}

static void test_disasm(void)
{
	struct nisa_insn in = { .opcode = NISA_INSN_LINALG, .subop = NISA_LA_TRSM,
			       .flags = NISA_IF_LA_UPPER | NISA_IF_LA_RIGHT };
	char text[512];

	in.dst.ndim = in.src[0].ndim = in.src[1].ndim = 2;
	t_check_ret(nrn_insn_format(&in, text, sizeof(text)), 0);
	t_check(strstr(text, "linalg.trsm") != NULL);
	t_check(strstr(text, "src1") != NULL && strstr(text, "src2") == NULL);
	t_check(strstr(text, " upper") != NULL && strstr(text, " right") != NULL);
}

int main(void)
{
	dev = t_open_device();
	t_check_ret(nrn_stream_create(dev, &s), 0);
	test_lu_solve();
	test_cholesky();
	test_disasm();
	t_check_ret(nrn_stream_sync(s), 0);
	nrn_stream_destroy(s);
	nrn_device_close(dev);
	return t_exit();
}

/*
 * qtest for the LINALG instruction of the virtual Trainium card
 * (docs/hardware.md, "LINALG"): known factorizations and solutions, the
 * identities the results must satisfy (Q^T Q = I, U S Vh = A), singular
 * and indefinite matrices reported in info (never a device error),
 * batching, and the malformed instructions the card refuses.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "trainium-core-qtest.h"

#define EPS 1e-5

static struct nisa_insn la(unsigned subop, uint32_t flags, struct nisa_tensor dst,
                           struct nisa_tensor s0, struct nisa_tensor s1,
                           struct nisa_tensor s2)
{
    return (struct nisa_insn){ .opcode = NISA_INSN_LINALG, .subop = subop,
                               .flags = flags, .dst = dst,
                               .src = { s0, s1, s2 } };
}

static const struct nisa_tensor none;

/* An F32 matrix [r, c] at @off of slot 0, filled from @v (row-major). */
static struct nisa_tensor mat(Core *c, uint64_t off, uint32_t r, uint32_t cols,
                              const float *v)
{
    if (v) {
        put(c, 0, off, v, r * cols * sizeof(float));
    }
    return tn(0, NISA_F32, off, r, cols, 0, 0);
}

static void getf(Core *c, uint64_t off, float *v, size_t n)
{
    get(c, 0, off, v, n * sizeof(float));
}

static int32_t geti(Core *c, uint64_t off)
{
    int32_t x;

    get(c, 0, off, &x, 4);
    return x;
}

static void test_potrf(void)
{
    Core *c = core_start();
    const float a[4] = { 4, 2, 2, 3 }, bad[4] = { 1, 2, 2, 1 };
    struct nisa_tensor info = tn(0, NISA_I32, 0x3000, 1, 1, 0, 0);
    float l[4];

    g_assert_cmphex(run1(c, la(NISA_LA_POTRF, 0, mat(c, 0x100, 2, 2, NULL),
                               mat(c, 0, 2, 2, a), info, none)), ==, OK);
    getf(c, 0x100, l, 4);
    g_assert_cmpfloat_with_epsilon(l[0], 2, EPS);
    g_assert_cmpfloat(l[1], ==, 0);
    g_assert_cmpfloat_with_epsilon(l[2], 1, EPS);
    g_assert_cmpfloat_with_epsilon(l[3], sqrt(2), EPS);
    g_assert_cmpint(geti(c, 0x3000), ==, 0);
    /* Upper: U = L^T, the lower part zero. */
    g_assert_cmphex(run1(c, la(NISA_LA_POTRF, NISA_IF_LA_UPPER,
                               mat(c, 0x100, 2, 2, NULL), mat(c, 0, 2, 2, a),
                               info, none)), ==, OK);
    getf(c, 0x100, l, 4);
    g_assert_cmpfloat_with_epsilon(l[1], 1, EPS);
    g_assert_cmpfloat(l[2], ==, 0);
    /* Not positive definite: info names the minor, the job succeeds. */
    g_assert_cmphex(run1(c, la(NISA_LA_POTRF, 0, mat(c, 0x100, 2, 2, NULL),
                               mat(c, 0, 2, 2, bad), info, none)), ==, OK);
    g_assert_cmpint(geti(c, 0x3000), ==, 2);
    core_stop(c);
}

/* GETRF, then GETRS and LUDET from its factors. */
static void test_lu(void)
{
    Core *c = core_start();
    const float a[4] = { 1, 2, 3, 4 }, b[2] = { 5, 6 }, sing[4] = { 1, 2, 2, 4 };
    struct nisa_tensor lu = mat(c, 0x100, 2, 2, NULL);
    struct nisa_tensor piv = tn(0, NISA_I32, 0x3000, 1, 2, 0, 0);
    struct nisa_tensor info = tn(0, NISA_I32, 0x3100, 1, 1, 0, 0);
    struct nisa_tensor one = tn(0, NISA_F32, 0x3200, 1, 1, 0, 0);
    struct nisa_tensor sign = tn(0, NISA_F32, 0x3300, 1, 1, 0, 0);
    struct nisa_insn k[4] = {
        la(NISA_LA_GETRF, 0, lu, mat(c, 0, 2, 2, a), piv, info),
        la(NISA_LA_GETRS, 0, mat(c, 0x200, 2, 1, NULL), lu, piv,
           mat(c, 0x300, 2, 1, b)),
        la(NISA_LA_LUDET, 0, one, lu, piv, none),
        la(NISA_LA_LUDET, NISA_IF_LA_LOG, tn(0, NISA_F32, 0x3400, 1, 1, 0, 0),
           lu, piv, sign),
    };
    float f[4];
    int32_t bad = 7;

    g_assert_cmphex(run_kernel(c, k, 4), ==, OK);
    getf(c, 0x100, f, 4);
    g_assert_cmpfloat_with_epsilon(f[0], 3, EPS);
    g_assert_cmpfloat_with_epsilon(f[1], 4, EPS);
    g_assert_cmpfloat_with_epsilon(f[2], 1.0 / 3, EPS);
    g_assert_cmpfloat_with_epsilon(f[3], 2.0 / 3, EPS);
    g_assert_cmpint(geti(c, 0x3000), ==, 2);
    g_assert_cmpint(geti(c, 0x3004), ==, 2);
    g_assert_cmpint(geti(c, 0x3100), ==, 0);
    getf(c, 0x200, f, 2);    /* [1 2; 3 4] x = [5 6] */
    g_assert_cmpfloat_with_epsilon(f[0], -4, 1e-4);
    g_assert_cmpfloat_with_epsilon(f[1], 4.5, 1e-4);
    getf(c, 0x3200, f, 1);
    g_assert_cmpfloat_with_epsilon(f[0], -2, 1e-5);
    getf(c, 0x3300, f, 1);
    g_assert_cmpfloat(f[0], ==, -1);
    getf(c, 0x3400, f, 1);
    g_assert_cmpfloat_with_epsilon(f[0], log(2), 1e-5);

    /* Singular: info 2, and a determinant of 0. */
    k[0] = la(NISA_LA_GETRF, 0, lu, mat(c, 0, 2, 2, sing), piv, info);
    g_assert_cmphex(run_kernel(c, k, 4), ==, OK);
    g_assert_cmpint(geti(c, 0x3100), ==, 2);
    getf(c, 0x3200, f, 1);
    g_assert_cmpfloat(f[0], ==, 0);
    getf(c, 0x3300, f, 1);
    g_assert_cmpfloat(f[0], ==, 0);

    /* A pivot out of range is an index error, not a wild read. */
    put(c, 0, 0x3000, &bad, 4);
    g_assert_cmphex(run_kernel(c, k + 1, 1), ==, OK | NISA_ERR_BAD_INDEX);
    g_assert_cmphex(run_kernel(c, k + 2, 1), ==, OK | NISA_ERR_BAD_INDEX);
    core_stop(c);
}

/*
 * F64 operands compute in float64 (LAPACK's d routines): the 6 x 6
 * Hilbert matrix (condition number 1.5e7) solved through GETRF and GETRS,
 * and factored by POTRF, to float64's accuracy -- in float32 the solution
 * would be off by about 0.1.
 */
static void test_f64(void)
{
    Core *c = core_start();
    enum { N = 6 };
    double h[N * N], b[N], x[N], l[N * N];
    struct nisa_tensor a = tn(0, NISA_F64, 0, N, N, 0, 0);
    struct nisa_tensor lu = tn(0, NISA_F64, 0x400, N, N, 0, 0);
    struct nisa_tensor piv = tn(0, NISA_I32, 0x3000, 1, N, 0, 0);
    struct nisa_tensor info = tn(0, NISA_I32, 0x3100, 1, 1, 0, 0);
    struct nisa_tensor rhs = tn(0, NISA_F64, 0x800, N, 1, 0, 0);
    struct nisa_tensor sol = tn(0, NISA_F64, 0x900, N, 1, 0, 0);
    struct nisa_insn k[2] = {
        la(NISA_LA_GETRF, 0, lu, a, piv, info),
        la(NISA_LA_GETRS, 0, sol, lu, piv, rhs),
    };

    for (int i = 0; i < N; i++) {
        b[i] = 0;
        for (int j = 0; j < N; j++) {
            h[i * N + j] = 1.0 / (i + j + 1);
            b[i] += h[i * N + j];       /* the solution is all ones */
        }
    }
    put(c, 0, 0, h, sizeof(h));
    put(c, 0, 0x800, b, sizeof(b));
    g_assert_cmphex(run_kernel(c, k, 2), ==, OK);
    g_assert_cmpint(geti(c, 0x3100), ==, 0);
    get(c, 0, 0x900, x, sizeof(x));
    for (int i = 0; i < N; i++) {
        g_assert_cmpfloat_with_epsilon(x[i], 1.0, 1e-7);
    }
    /* POTRF: L L^T = H to float64's rounding. */
    g_assert_cmphex(run1(c, la(NISA_LA_POTRF, 0, lu, a, info, none)), ==, OK);
    g_assert_cmpint(geti(c, 0x3100), ==, 0);
    get(c, 0, 0x400, l, sizeof(l));
    for (int i = 0; i < N; i++) {
        for (int j = 0; j < N; j++) {
            double v = 0;

            for (int q = 0; q < N; q++) {
                v += l[i * N + q] * l[j * N + q];
            }
            g_assert_cmpfloat_with_epsilon(v, h[i * N + j], 1e-15);
        }
    }
    core_stop(c);
}

static void test_trsm(void)
{
    Core *c = core_start();
    const float l[4] = { 2, 0, 1, 1 }, b[2] = { 2, 3 }, r[2] = { 2, 3 };
    float x[2];

    /* [2 0; 1 1] x = [2 3] */
    g_assert_cmphex(run1(c, la(NISA_LA_TRSM, 0, mat(c, 0x100, 2, 1, NULL),
                               mat(c, 0, 2, 2, l), mat(c, 0x200, 2, 1, b),
                               none)), ==, OK);
    getf(c, 0x100, x, 2);
    g_assert_cmpfloat_with_epsilon(x[0], 1, EPS);
    g_assert_cmpfloat_with_epsilon(x[1], 2, EPS);
    /* x [2 0; 1 1] = [2 3] (RIGHT): x1 = 3, 2 x0 + x1 = 2 */
    g_assert_cmphex(run1(c, la(NISA_LA_TRSM, NISA_IF_LA_RIGHT,
                               mat(c, 0x100, 1, 2, NULL), mat(c, 0, 2, 2, l),
                               mat(c, 0x200, 1, 2, r), none)), ==, OK);
    getf(c, 0x100, x, 2);
    g_assert_cmpfloat_with_epsilon(x[0], -0.5, EPS);
    g_assert_cmpfloat_with_epsilon(x[1], 3, EPS);
    /* Transposed, unit diagonal: [1 1; 0 1] x = [2 3] */
    g_assert_cmphex(run1(c, la(NISA_LA_TRSM, NISA_IF_LA_TRANS | NISA_IF_LA_UNIT,
                               mat(c, 0x100, 2, 1, NULL), mat(c, 0, 2, 2, l),
                               mat(c, 0x200, 2, 1, b), none)), ==, OK);
    getf(c, 0x100, x, 2);
    g_assert_cmpfloat_with_epsilon(x[0], -1, EPS);
    g_assert_cmpfloat_with_epsilon(x[1], 3, EPS);
    core_stop(c);
}

/* GEQRF + ORGQR: Q orthonormal, Q R = A; ORMQR applies Q^T to A: R. */
static void test_qr(void)
{
    Core *c = core_start();
    float a[12], f[12], q[12];
    struct nisa_tensor qr = mat(c, 0x100, 4, 3, NULL);
    struct nisa_tensor tau = tn(0, NISA_F32, 0x3000, 1, 3, 0, 0);
    struct nisa_insn k[3];

    randf(a, 12, 1);
    k[0] = la(NISA_LA_GEQRF, 0, qr, mat(c, 0, 4, 3, a), tau, none);
    k[1] = la(NISA_LA_ORGQR, 0, mat(c, 0x200, 4, 3, NULL), qr, tau, none);
    k[2] = la(NISA_LA_ORMQR, NISA_IF_LA_TRANS, mat(c, 0x300, 4, 3, NULL), qr,
              tau, mat(c, 0, 4, 3, NULL));
    g_assert_cmphex(run_kernel(c, k, 3), ==, OK);
    getf(c, 0x100, f, 12);
    getf(c, 0x200, q, 12);
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++) {
            double dot = 0;

            for (int r = 0; r < 4; r++) {
                dot += q[r * 3 + i] * q[r * 3 + j];
            }
            g_assert_cmpfloat_with_epsilon(dot, i == j, 1e-5);
        }
    }
    for (int r = 0; r < 4; r++) {
        for (int j = 0; j < 3; j++) {
            double s = 0;

            for (int i = 0; i <= j; i++) {
                s += q[r * 3 + i] * f[i * 3 + j];   /* R = triu(f) */
            }
            g_assert_cmpfloat_with_epsilon(s, a[r * 3 + j], 1e-4);
        }
    }
    /* Q^T A = [R; 0] */
    getf(c, 0x300, f + 0, 12);
    for (int r = 0; r < 4; r++) {
        for (int j = 0; j < 3; j++) {
            if (r > j) {
                g_assert_cmpfloat_with_epsilon(f[r * 3 + j], 0, 1e-4);
            }
        }
    }
    core_stop(c);
}

static void test_svd_eigh(void)
{
    Core *c = core_start();
    const float d[4] = { 3, 0, 0, -2 }, sym[4] = { 2, 1, 1, 2 };
    float a[6], s[3], u[9], vh[4], w[2], v[4];
    struct nisa_tensor S = tn(0, NISA_F32, 0x3000, 1, 2, 0, 0);

    g_assert_cmphex(run1(c, la(NISA_LA_GESDD, NISA_IF_LA_NOVEC, S,
                               mat(c, 0, 2, 2, d), none, none)), ==, OK);
    getf(c, 0x3000, s, 2);
    g_assert_cmpfloat_with_epsilon(s[0], 3, EPS);
    g_assert_cmpfloat_with_epsilon(s[1], 2, EPS);
    /* A 3x2: U [3, 2] S Vh [2, 2] = A, S descending. */
    randf(a, 6, 2);
    g_assert_cmphex(run1(c, la(NISA_LA_GESDD, 0, S, mat(c, 0, 3, 2, a),
                               mat(c, 0x100, 3, 2, NULL),
                               mat(c, 0x200, 2, 2, NULL))), ==, OK);
    getf(c, 0x3000, s, 2);
    getf(c, 0x100, u, 6);
    getf(c, 0x200, vh, 4);
    g_assert_cmpfloat(s[0], >=, s[1]);
    for (int r = 0; r < 3; r++) {
        for (int j = 0; j < 2; j++) {
            double x = 0;

            for (int i = 0; i < 2; i++) {
                x += u[r * 2 + i] * s[i] * vh[i * 2 + j];
            }
            g_assert_cmpfloat_with_epsilon(x, a[r * 2 + j], 1e-4);
        }
    }
    /* FULL: U is [3, 3]. */
    g_assert_cmphex(run1(c, la(NISA_LA_GESDD, NISA_IF_LA_FULL, S,
                               mat(c, 0, 3, 2, a), mat(c, 0x100, 3, 3, NULL),
                               mat(c, 0x200, 2, 2, NULL))), ==, OK);
    getf(c, 0x100, u, 9);
    for (int i = 0; i < 3; i++) {
        double n2 = 0;

        for (int r = 0; r < 3; r++) {
            n2 += u[r * 3 + i] * u[r * 3 + i];
        }
        g_assert_cmpfloat_with_epsilon(n2, 1, 1e-5);
    }
    /* A non-finite matrix: NaN, not an error. */
    a[0] = NAN;
    g_assert_cmphex(run1(c, la(NISA_LA_GESDD, NISA_IF_LA_NOVEC, S,
                               mat(c, 0, 3, 2, a), none, none)), ==, OK);
    getf(c, 0x3000, s, 2);
    g_assert_true(isnan(s[0]) && isnan(s[1]));

    /* eigh of [2 1; 1 2]: 1 and 3, vectors (1, -1) and (1, 1) / sqrt 2. */
    g_assert_cmphex(run1(c, la(NISA_LA_SYEVD, 0, tn(0, NISA_F32, 0x3000, 1, 2, 0, 0),
                               mat(c, 0, 2, 2, sym), mat(c, 0x100, 2, 2, NULL),
                               none)), ==, OK);
    getf(c, 0x3000, w, 2);
    getf(c, 0x100, v, 4);
    g_assert_cmpfloat_with_epsilon(w[0], 1, EPS);
    g_assert_cmpfloat_with_epsilon(w[1], 3, EPS);
    g_assert_cmpfloat_with_epsilon(fabs(v[0]), M_SQRT1_2, EPS);
    g_assert_cmpfloat_with_epsilon(v[0] + v[2], 0, EPS);
    g_assert_cmpfloat_with_epsilon(v[1] - v[3], 0, EPS);
    core_stop(c);
}

/* PERM from GETRF's pivots; SYTRF + SYTRS, with 1x1 and 2x2 blocks. */
static void test_perm_ldl(void)
{
    Core *c = core_start();
    const int32_t piv[2] = { 2, 2 }, bad[2] = { -2, 1 };
    const float spd[4] = { 4, 1, 1, 3 }, swap[4] = { 0, 1, 1, 0 }, b[2] = { 1, 2 };
    struct nisa_tensor P = tn(0, NISA_I32, 0x3000, 1, 2, 0, 0);
    struct nisa_tensor info = tn(0, NISA_I32, 0x3100, 1, 1, 0, 0);
    struct nisa_tensor ld = mat(c, 0x100, 2, 2, NULL);
    struct nisa_insn k[2];
    float f[4];
    int32_t p[2];

    put(c, 0, 0x3000, piv, sizeof(piv));
    g_assert_cmphex(run1(c, la(NISA_LA_PERM, 0, mat(c, 0x200, 2, 2, NULL), P, none,
                               none)), ==, OK);
    getf(c, 0x200, f, 4);
    g_assert_cmpfloat(f[0], ==, 0);
    g_assert_cmpfloat(f[1], ==, 1);
    g_assert_cmpfloat(f[2], ==, 1);
    g_assert_cmpfloat(f[3], ==, 0);

    k[0] = la(NISA_LA_SYTRF, 0, ld, mat(c, 0, 2, 2, spd), P, info);
    k[1] = la(NISA_LA_SYTRS, 0, mat(c, 0x300, 2, 1, NULL), ld, P,
              mat(c, 0x400, 2, 1, b));
    g_assert_cmphex(run_kernel(c, k, 2), ==, OK);
    getf(c, 0x100, f, 4);
    get(c, 0, 0x3000, p, 8);
    g_assert_cmpint(p[0], ==, 1);
    g_assert_cmpint(p[1], ==, 2);
    g_assert_cmpint(geti(c, 0x3100), ==, 0);
    g_assert_cmpfloat_with_epsilon(f[0], 4, EPS);
    g_assert_cmpfloat(f[1], ==, 0);
    g_assert_cmpfloat_with_epsilon(f[2], 0.25, EPS);
    g_assert_cmpfloat_with_epsilon(f[3], 2.75, EPS);
    getf(c, 0x300, f, 2);
    g_assert_cmpfloat_with_epsilon(f[0], 1.0 / 11, EPS);
    g_assert_cmpfloat_with_epsilon(f[1], 7.0 / 11, EPS);

    /* [0 1; 1 0] needs a 2x2 block: pivots (-2, -2). */
    k[0] = la(NISA_LA_SYTRF, 0, ld, mat(c, 0, 2, 2, swap), P, info);
    g_assert_cmphex(run_kernel(c, k, 2), ==, OK);
    get(c, 0, 0x3000, p, 8);
    g_assert_cmpint(p[0], ==, -2);
    g_assert_cmpint(p[1], ==, -2);
    getf(c, 0x300, f, 2);
    g_assert_cmpfloat_with_epsilon(f[0], 2, EPS);
    g_assert_cmpfloat_with_epsilon(f[1], 1, EPS);
    /* Pivots not of SYTRF's form, or out of range for PERM. */
    put(c, 0, 0x3000, bad, sizeof(bad));
    g_assert_cmphex(run_kernel(c, k + 1, 1), ==, OK | NISA_ERR_BAD_INDEX);
    g_assert_cmphex(run1(c, la(NISA_LA_PERM, 0, mat(c, 0x200, 2, 2, NULL), P, none,
                               none)), ==, OK | NISA_ERR_BAD_INDEX);
    core_stop(c);
}

/* GELS and GELSY: a least squares fit, its residual, a rank. */
static void test_lstsq(void)
{
    Core *c = core_start();
    const float a[6] = { 1, 0, 0, 1, 1, 1 }, b[3] = { 1, 2, 2 };
    const float ones[6] = { 1, 1, 1, 1, 1, 1 }, b1[3] = { 1, 1, 1 };
    struct nisa_tensor rank = tn(0, NISA_I64, 0x3000, 1, 1, 0, 0);
    struct nisa_insn gelsy = la(NISA_LA_GELSY, 0, mat(c, 0x100, 3, 1, NULL),
                                mat(c, 0, 3, 2, a), mat(c, 0x200, 3, 1, b), rank);
    float x[3];
    int64_t r;

    g_assert_cmphex(run1(c, la(NISA_LA_GELS, 0, mat(c, 0x100, 3, 1, NULL),
                               mat(c, 0, 3, 2, a), mat(c, 0x200, 3, 1, b), none)),
                    ==, OK);
    getf(c, 0x100, x, 3);
    g_assert_cmpfloat_with_epsilon(x[0], 2.0 / 3, EPS);
    g_assert_cmpfloat_with_epsilon(x[1], 5.0 / 3, EPS);
    g_assert_cmpfloat_with_epsilon(x[2] * x[2], 1.0 / 3, EPS);   /* |A x - b|^2 */
    gelsy.scalar = f64bits(1e-6);
    g_assert_cmphex(run1(c, gelsy), ==, OK);
    getf(c, 0x100, x, 2);
    get(c, 0, 0x3000, &r, 8);
    g_assert_cmpint(r, ==, 2);
    g_assert_cmpfloat_with_epsilon(x[0], 2.0 / 3, EPS);
    g_assert_cmpfloat_with_epsilon(x[1], 5.0 / 3, EPS);
    /* Rank 1: the minimum norm solution. */
    put(c, 0, 0, ones, sizeof(ones));
    put(c, 0, 0x200, b1, sizeof(b1));
    g_assert_cmphex(run1(c, gelsy), ==, OK);
    getf(c, 0x100, x, 2);
    get(c, 0, 0x3000, &r, 8);
    g_assert_cmpint(r, ==, 1);
    g_assert_cmpfloat_with_epsilon(x[0], 0.5, EPS);
    g_assert_cmpfloat_with_epsilon(x[1], 0.5, EPS);
    /* rcond must be finite, and only GELSY takes one; rank is I64. */
    gelsy.scalar = f64bits(NAN);
    g_assert_cmphex(run1(c, gelsy), ==, OK | NISA_ERR_BAD_INSN);
    gelsy.scalar = 0;
    gelsy.src[2] = tn(0, NISA_I32, 0x3000, 1, 1, 0, 0);
    g_assert_cmphex(run1(c, gelsy), ==, OK | NISA_ERR_BAD_INSN);
    gelsy = la(NISA_LA_GELS, 0, mat(c, 0x100, 3, 1, NULL), mat(c, 0, 3, 2, a),
               mat(c, 0x200, 3, 1, b), none);
    gelsy.scalar = f64bits(1e-6);
    g_assert_cmphex(run1(c, gelsy), ==, OK | NISA_ERR_BAD_INSN);
    core_stop(c);
}

/* Two matrices in one instruction, strided (the second one transposed). */
static void test_batch(void)
{
    Core *c = core_start();
    const float a[8] = { 4, 2, 2, 3, 9, 0, 0, 16 };
    struct nisa_tensor info = tn(0, NISA_I32, 0x3000, 2, 1, 1, 0);
    float l[8];

    {
        struct nisa_tensor A = tn(0, NISA_F32, 0, 2, 2, 2, 0);
        struct nisa_tensor L = tn(0, NISA_F32, 0x100, 2, 2, 2, 0);

        put(c, 0, 0, a, sizeof(a));
        L.strides[1] = 1;    /* store each factor transposed */
        L.strides[2] = 2;
        g_assert_cmphex(run1(c, la(NISA_LA_POTRF, 0, L, A, info, none)), ==, OK);
    }
    getf(c, 0x100, l, 8);
    g_assert_cmpfloat_with_epsilon(l[0], 2, EPS);
    g_assert_cmpfloat_with_epsilon(l[1], 1, EPS);   /* L[1][0], transposed */
    g_assert_cmpfloat(l[2], ==, 0);
    g_assert_cmpfloat_with_epsilon(l[4], 3, EPS);
    g_assert_cmpfloat_with_epsilon(l[7], 4, EPS);
    g_assert_cmpint(geti(c, 0x3000), ==, 0);
    g_assert_cmpint(geti(c, 0x3004), ==, 0);
    core_stop(c);
}

static void test_errors(void)
{
    Core *c = core_start();
    struct nisa_tensor a = mat(c, 0, 2, 2, NULL), d = mat(c, 0x100, 2, 2, NULL);
    struct nisa_tensor info = tn(0, NISA_I32, 0x3000, 1, 1, 0, 0);
    struct nisa_tensor finfo = tn(0, NISA_F32, 0x3000, 1, 1, 0, 0);
    struct nisa_tensor piv = tn(0, NISA_I32, 0x3100, 1, 2, 0, 0);
    struct nisa_tensor big = tn(0, NISA_F32, 0, NISA_LINALG_MAX_DIM + 1, 1, 0, 0);
    struct nisa_insn axis = la(NISA_LA_POTRF, 0, d, a, info, none);
    const float guard = 42;
    float back;

    put(c, 0, 0x100, &guard, 4);
    axis.axis = 1;
    g_assert_cmphex(run1(c, la(NISA_NUM_LINALG, 0, d, a, info, none)), ==,
                    OK | NISA_ERR_BAD_INSN);
    g_assert_cmphex(run1(c, la(NISA_LA_POTRF, NISA_IF_LA_FULL, d, a, info, none)),
                    ==, OK | NISA_ERR_BAD_INSN);
    g_assert_cmphex(run1(c, axis), ==, OK | NISA_ERR_BAD_INSN);
    /* A non-square Cholesky, an info that is not I32, a stray operand. */
    g_assert_cmphex(run1(c, la(NISA_LA_POTRF, 0, mat(c, 0x100, 2, 3, NULL),
                               mat(c, 0, 2, 3, NULL), info, none)), ==,
                    OK | NISA_ERR_BAD_INSN);
    g_assert_cmphex(run1(c, la(NISA_LA_POTRF, 0, d, a, finfo, none)), ==,
                    OK | NISA_ERR_BAD_INSN);
    g_assert_cmphex(run1(c, la(NISA_LA_POTRF, 0, d, a, info, info)), ==,
                    OK | NISA_ERR_BAD_INSN);
    /* Shapes that do not agree. */
    g_assert_cmphex(run1(c, la(NISA_LA_GETRF, 0, d, a,
                               tn(0, NISA_I32, 0x3100, 1, 3, 0, 0), info)), ==,
                    OK | NISA_ERR_BAD_INSN);
    g_assert_cmphex(run1(c, la(NISA_LA_GETRS, 0, mat(c, 0x200, 3, 1, NULL), a, piv,
                               mat(c, 0x300, 3, 1, NULL))), ==,
                    OK | NISA_ERR_BAD_INSN);
    g_assert_cmphex(run1(c, la(NISA_LA_ORGQR, 0, mat(c, 0x100, 2, 3, NULL),
                               mat(c, 0, 2, 3, NULL),
                               tn(0, NISA_F32, 0x3000, 1, 2, 0, 0), none)), ==,
                    OK | NISA_ERR_BAD_INSN);
    g_assert_cmphex(run1(c, la(NISA_LA_GESDD, 0, tn(0, NISA_F32, 0x3000, 1, 2, 0, 0),
                               a, mat(c, 0x100, 2, 2, NULL), none)), ==,
                    OK | NISA_ERR_BAD_INSN);
    /* Integer matrices, matrices beyond the cap. */
    g_assert_cmphex(run1(c, la(NISA_LA_POTRF, 0, d, tn(0, NISA_I32, 0, 2, 2, 0, 0),
                               info, none)), ==, OK | NISA_ERR_BAD_INSN);
    g_assert_cmphex(run1(c, la(NISA_LA_GEQRF, 0, big, big,
                               tn(0, NISA_F32, 0x3000, 1, 1, 0, 0), none)), ==,
                    OK | NISA_ERR_BAD_INSN);
    /* Operands outside their slot, or read-only ones written. */
    g_assert_cmphex(run1(c, la(NISA_LA_POTRF, 0, tn(0, NISA_F32, SLOT_SIZE, 2, 2, 0, 0),
                               a, info, none)), ==, OK | NISA_ERR_SLOT_RANGE);
    c->slots[1].access = NISA_ACCESS_READ;
    g_assert_cmphex(run1(c, la(NISA_LA_POTRF, 0, d, a,
                               tn(1, NISA_I32, 0, 1, 1, 0, 0), none)), ==,
                    OK | NISA_ERR_ACCESS);
    get(c, 0, 0x100, &back, 4);
    g_assert_cmpfloat(back, ==, guard);
    core_stop(c);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/trainium/linalg/potrf", test_potrf);
    qtest_add_func("/trainium/linalg/lu", test_lu);
    qtest_add_func("/trainium/linalg/f64", test_f64);
    qtest_add_func("/trainium/linalg/trsm", test_trsm);
    qtest_add_func("/trainium/linalg/qr", test_qr);
    qtest_add_func("/trainium/linalg/svd-eigh", test_svd_eigh);
    qtest_add_func("/trainium/linalg/perm-ldl", test_perm_ldl);
    qtest_add_func("/trainium/linalg/lstsq", test_lstsq);
    qtest_add_func("/trainium/linalg/batch", test_batch);
    qtest_add_func("/trainium/linalg/errors", test_errors);
    return g_test_run();
}

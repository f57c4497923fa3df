/*
 * qtest for the SORT and SCAN instructions and the REDUCE product of the
 * virtual Trainium card (docs/hardware.md, "SORT", "SCAN"): stability, NaN
 * and -0.0 order, descending, indices, strided lanes, in place, exact
 * integers, every scan against a host reference, and the errors.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "trainium-core-qtest.h"

static struct nisa_insn sort_insn(struct nisa_tensor dst, struct nisa_tensor src,
                                  struct nisa_tensor idx, int axis, uint32_t flags)
{
    return (struct nisa_insn){ .opcode = NISA_INSN_SORT, .flags = flags,
                               .axis = axis, .dst = dst, .src = { src, idx } };
}

static struct nisa_insn scan_insn(unsigned op, struct nisa_tensor dst,
                                  struct nisa_tensor src, struct nisa_tensor idx,
                                  int axis, uint32_t flags)
{
    return (struct nisa_insn){ .opcode = NISA_INSN_SCAN, .subop = op,
                               .flags = flags, .axis = axis, .dst = dst,
                               .src = { src, idx } };
}

static const struct nisa_tensor none;

/* NaN last (first descending), equal values (-0.0 and 0.0 too) in order. */
static void test_sort_floats(void)
{
    Core *c = core_start();
    const float in[8] = { 3, NAN, -0.0f, 1, 0.0f, -INFINITY, 1, NAN };
    const int64_t asc_i[8] = { 5, 2, 4, 3, 6, 0, 1, 7 };
    const int64_t desc_i[8] = { 1, 7, 0, 3, 6, 2, 4, 5 };
    float out[8];
    int64_t idx[8];

    put(c, 0, 0, in, sizeof(in));
    g_assert_cmphex(run1(c, sort_insn(tn(1, NISA_F32, 0, 8, 0, 0, 0),
                                      tn(0, NISA_F32, 0, 8, 0, 0, 0),
                                      tn(2, NISA_I64, 0, 8, 0, 0, 0), 0,
                                      NISA_IF_INDICES)), ==, OK);
    get(c, 1, 0, out, sizeof(out));
    get(c, 2, 0, idx, sizeof(idx));
    for (int i = 0; i < 8; i++) {
        g_assert_cmpint(idx[i], ==, asc_i[i]);
        g_assert(!memcmp(&out[i], &in[asc_i[i]], 4) || isnan(out[i]));
    }
    g_assert(signbit(out[1]) && !signbit(out[2]));
    g_assert(isnan(out[6]) && isnan(out[7]));

    g_assert_cmphex(run1(c, sort_insn(tn(1, NISA_F32, 0, 8, 0, 0, 0),
                                      tn(0, NISA_F32, 0, 8, 0, 0, 0),
                                      tn(2, NISA_I64, 0, 8, 0, 0, 0), -1,
                                      NISA_IF_INDICES | NISA_IF_DESCENDING)),
                    ==, OK);
    get(c, 2, 0, idx, sizeof(idx));
    for (int i = 0; i < 8; i++) {
        g_assert_cmpint(idx[i], ==, desc_i[i]);
    }
    core_stop(c);
}

/* Along axis 0 of a [R, C] matrix (strided lanes), in place, int32 indices. */
static void test_sort_axis0_inplace(void)
{
    Core *c = core_start();
    enum { R = 300, C = 7 };
    static float m[R * C], out[R * C];
    static int32_t idx[R * C];

    randf(m, R * C, 5);
    put(c, 0, 0, m, sizeof(m));
    g_assert_cmphex(run1(c, sort_insn(tn(0, NISA_F32, 0, R, C, 0, 0),
                                      tn(0, NISA_F32, 0, R, C, 0, 0),
                                      tn(1, NISA_I32, 0, R, C, 0, 0), 0,
                                      NISA_IF_INDICES)), ==, OK);
    get(c, 0, 0, out, sizeof(out));
    get(c, 1, 0, idx, sizeof(idx));
    for (int j = 0; j < C; j++) {
        for (int i = 0; i < R; i++) {
            g_assert(out[i * C + j] == m[idx[i * C + j] * C + j]);
            if (i) {
                g_assert(out[(i - 1) * C + j] <= out[i * C + j]);
            }
        }
    }
    core_stop(c);
}

/* int64 beyond 2^53 compares exactly; values only, descending. */
static void test_sort_int64(void)
{
    Core *c = core_start();
    const int64_t in[4] = { (1ll << 60) + 1, (1ll << 60), -5, (1ll << 60) + 3 };
    const int64_t want[4] = { (1ll << 60) + 3, (1ll << 60) + 1, (1ll << 60), -5 };
    int64_t out[4];

    put(c, 0, 0, in, sizeof(in));
    g_assert_cmphex(run1(c, sort_insn(tn(1, NISA_I64, 0, 4, 0, 0, 0),
                                      tn(0, NISA_I64, 0, 4, 0, 0, 0), none, 0,
                                      NISA_IF_DESCENDING)), ==, OK);
    get(c, 1, 0, out, sizeof(out));
    g_assert(!memcmp(out, want, sizeof(out)));
    core_stop(c);
}

/* Every float scan against a host reference in double, along each axis. */
static void test_scan_floats(void)
{
    Core *c = core_start();
    enum { R = 5, C = 40 };
    float x[R * C], out[R * C];
    int64_t idx[R * C];

    randf(x, R * C, 9);
    x[7] = NAN;
    x[3 * C + 2] = x[3 * C + 1];
    put(c, 0, 0, x, sizeof(x));
    for (unsigned op = 0; op < NISA_NUM_SCAN; op++) {
        for (int axis = 0; axis < 2; axis++) {
            bool ind = op == NISA_SCAN_MAX || op == NISA_SCAN_MIN;
            uint64_t lanes = axis ? R : C, len = axis ? C : R;

            g_assert_cmphex(run1(c, scan_insn(op, tn(1, NISA_F32, 0, R, C, 0, 0),
                                              tn(0, NISA_F32, 0, R, C, 0, 0),
                                              ind ? tn(2, NISA_I64, 0, R, C, 0, 0) : none,
                                              axis, ind ? NISA_IF_INDICES : 0)), ==, OK);
            get(c, 1, 0, out, sizeof(out));
            get(c, 2, 0, idx, sizeof(idx));
            for (uint64_t l = 0; l < lanes; l++) {
                double acc = 0;
                int64_t at = 0;

                for (uint64_t i = 0; i < len; i++) {
                    uint64_t e = axis ? l * C + i : i * C + l;
                    double v = x[e];

                    if (!i) {
                        acc = v;
                    } else if (op == NISA_SCAN_SUM) {
                        acc += v;
                    } else if (op == NISA_SCAN_PROD) {
                        acc *= v;
                    } else if (op == NISA_SCAN_LOGSUMEXP) {
                        acc = isnan(acc) || isnan(v) ? NAN :
                              fmax(acc, v) + log1p(exp(fmin(acc, v) - fmax(acc, v)));
                    }
                    if (ind && (!i || isnan(v) || (!isnan(acc) &&
                        (op == NISA_SCAN_MAX ? v >= acc : v <= acc)))) {
                        acc = v;
                        at = i;
                    }
                    if (isnan(acc)) {
                        g_assert(isnan(out[e]));
                    } else {
                        g_assert(out[e] == (float)acc);
                    }
                    if (ind) {
                        g_assert_cmpint(idx[e], ==, at);
                    }
                }
            }
        }
    }
    core_stop(c);
}

/* Integer scans: exact on int64, wrapping; cummax takes the last tie. */
static void test_scan_ints(void)
{
    Core *c = core_start();
    const int64_t x[5] = { INT64_MAX, 1, 7, 7, -3 };
    const int64_t sum[5] = { INT64_MAX, INT64_MIN, INT64_MIN + 7, INT64_MIN + 14,
                             INT64_MIN + 11 };
    const int64_t mx[5] = { INT64_MAX, INT64_MAX, INT64_MAX, INT64_MAX, INT64_MAX };
    const int32_t y[4] = { 2, 5, 5, 1 }, ymx_i[4] = { 0, 1, 2, 2 };
    const int32_t yprod[4] = { 2, 10, 50, 50 };
    int64_t out[5], i64[5];
    int32_t o32[4];

    put(c, 0, 0, x, sizeof(x));
    put(c, 0, 64, y, sizeof(y));
    g_assert_cmphex(run1(c, scan_insn(NISA_SCAN_SUM, tn(1, NISA_I64, 0, 5, 0, 0, 0),
                                      tn(0, NISA_I64, 0, 5, 0, 0, 0), none, 0, 0)),
                    ==, OK);
    get(c, 1, 0, out, sizeof(out));
    g_assert(!memcmp(out, sum, sizeof(sum)));
    g_assert_cmphex(run1(c, scan_insn(NISA_SCAN_MAX, tn(1, NISA_I64, 0, 5, 0, 0, 0),
                                      tn(0, NISA_I64, 0, 5, 0, 0, 0),
                                      tn(2, NISA_I64, 0, 5, 0, 0, 0), 0,
                                      NISA_IF_INDICES)), ==, OK);
    get(c, 1, 0, out, sizeof(out));
    get(c, 2, 0, i64, sizeof(i64));
    g_assert(!memcmp(out, mx, sizeof(mx)));
    g_assert_cmpint(i64[4], ==, 0);
    g_assert_cmphex(run1(c, scan_insn(NISA_SCAN_MAX, tn(1, NISA_I32, 0, 4, 0, 0, 0),
                                      tn(0, NISA_I32, 64, 4, 0, 0, 0),
                                      tn(2, NISA_I32, 0, 4, 0, 0, 0), 0,
                                      NISA_IF_INDICES)), ==, OK);
    get(c, 2, 0, o32, sizeof(o32));
    g_assert(!memcmp(o32, ymx_i, sizeof(o32)));
    g_assert_cmphex(run1(c, scan_insn(NISA_SCAN_PROD, tn(1, NISA_I32, 0, 4, 0, 0, 0),
                                      tn(0, NISA_I32, 64, 4, 0, 0, 0), none, 0, 0)),
                    ==, OK);
    get(c, 1, 0, o32, sizeof(o32));
    g_assert(!memcmp(o32, yprod, sizeof(o32)));
    core_stop(c);
}

/* REDUCE PROD: floats in double, integers exact and wrapping, empty is 1. */
static void test_reduce_prod(void)
{
    Core *c = core_start();
    const int64_t x[6] = { 1ll << 40, 1ll << 20, 3, -1, 2, 5 };
    const float f[6] = { 1.5f, 2, -1, 4, 0.5f, 3 };
    int64_t out[2];
    float fo[3];
    struct nisa_insn in = { .opcode = NISA_INSN_REDUCE, .subop = NISA_RED_PROD,
                            .axis = 1, .dst = tn(1, NISA_I64, 0, 2, 1, 0, 0),
                            .src = { tn(0, NISA_I64, 0, 2, 3, 0, 0) } };

    put(c, 0, 0, x, sizeof(x));
    put(c, 0, 64, f, sizeof(f));
    g_assert_cmphex(run1(c, in), ==, OK);
    get(c, 1, 0, out, sizeof(out));
    g_assert_cmpint(out[0], ==, (int64_t)(3ull << 60));
    g_assert_cmpint(out[1], ==, -10);
    in.axis = 0;
    in.dst = tn(1, NISA_F32, 0, 1, 3, 0, 0);
    in.src[0] = tn(0, NISA_F32, 64, 2, 3, 0, 0);
    g_assert_cmphex(run1(c, in), ==, OK);
    get(c, 1, 0, fo, sizeof(fo));
    g_assert(fo[0] == 6 && fo[1] == 1 && fo[2] == -3);
    in.dst = tn(1, NISA_F32, 0, 1, 3, 0, 0);
    in.src[0] = tn(0, NISA_F32, 64, 0, 3, 0, 0);
    in.src[0].ndim = 2;
    in.src[0].shape[1] = 3;
    g_assert_cmphex(run1(c, in), ==, OK);
    get(c, 1, 0, fo, sizeof(fo));
    g_assert(fo[0] == 1 && fo[1] == 1 && fo[2] == 1);
    core_stop(c);
}

static void test_errors(void)
{
    Core *c = core_start();
    struct nisa_tensor v = tn(0, NISA_F32, 0, 8, 0, 0, 0);
    struct nisa_tensor long_ax = tn(0, NISA_F32, 0, 8, 0, 0, 0);
    struct nisa_insn bad;

    long_ax.shape[0] = NISA_SORT_MAX_LEN + 1;
    long_ax.strides[0] = 0;
    g_assert_cmphex(run1(c, sort_insn(v, v, none, 0, 0x40)), ==, OK | NISA_ERR_BAD_INSN);
    g_assert_cmphex(run1(c, sort_insn(v, v, tn(1, NISA_F32, 0, 8, 0, 0, 0), 0,
                                      NISA_IF_INDICES)), ==, OK | NISA_ERR_BAD_INSN);
    g_assert_cmphex(run1(c, sort_insn(v, v, tn(1, NISA_I64, 0, 7, 0, 0, 0), 0,
                                      NISA_IF_INDICES)), ==, OK | NISA_ERR_BAD_INSN);
    g_assert_cmphex(run1(c, sort_insn(v, v, tn(1, NISA_I64, 0, 8, 0, 0, 0), 0, 0)),
                    ==, OK | NISA_ERR_BAD_INSN);
    g_assert_cmphex(run1(c, sort_insn(tn(1, NISA_I32, 0, 8, 0, 0, 0), v, none, 0, 0)),
                    ==, OK | NISA_ERR_BAD_INSN);
    g_assert_cmphex(run1(c, sort_insn(v, v, none, 1, 0)), ==, OK | NISA_ERR_BAD_INSN);
    g_assert_cmphex(run1(c, sort_insn(long_ax, long_ax, none, 0, 0)), ==,
                    OK | NISA_ERR_BAD_INSN);
    g_assert_cmphex(run1(c, scan_insn(NISA_NUM_SCAN, v, v, none, 0, 0)), ==,
                    OK | NISA_ERR_BAD_INSN);
    g_assert_cmphex(run1(c, scan_insn(NISA_SCAN_SUM, v, v,
                                      tn(1, NISA_I64, 0, 8, 0, 0, 0), 0,
                                      NISA_IF_INDICES)), ==, OK | NISA_ERR_BAD_INSN);
    bad = scan_insn(NISA_SCAN_SUM, v, v, none, 0, 0);
    bad.scalar = 1;
    g_assert_cmphex(run1(c, bad), ==, OK | NISA_ERR_BAD_INSN);
    g_assert_cmphex(run1(c, sort_insn(v, tn(7, NISA_F32, 0, 8, 0, 0, 0), none, 0, 0)),
                    ==, OK | NISA_ERR_BAD_SLOT);
    g_assert_cmphex(run1(c, scan_insn(NISA_SCAN_MAX, v, v,
                                      tn(1, NISA_I64, SLOT_SIZE - 8, 8, 0, 0, 0), 0,
                                      NISA_IF_INDICES)), ==, OK | NISA_ERR_SLOT_RANGE);
    c->slots[1].access = NISA_ACCESS_READ;
    g_assert_cmphex(run1(c, sort_insn(v, v, tn(1, NISA_I64, 0, 8, 0, 0, 0), 0,
                                      NISA_IF_INDICES)), ==, OK | NISA_ERR_ACCESS);
    core_stop(c);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/trainium/sort/floats", test_sort_floats);
    qtest_add_func("/trainium/sort/axis0-inplace", test_sort_axis0_inplace);
    qtest_add_func("/trainium/sort/int64", test_sort_int64);
    qtest_add_func("/trainium/scan/floats", test_scan_floats);
    qtest_add_func("/trainium/scan/ints", test_scan_ints);
    qtest_add_func("/trainium/reduce/prod", test_reduce_prod);
    qtest_add_func("/trainium/sort/errors", test_errors);
    return g_test_run();
}

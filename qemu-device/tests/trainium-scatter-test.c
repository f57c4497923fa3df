/*
 * qtest of SCATTER (docs/hardware.md, "SCATTER"): the reductions in both
 * index forms against host loops, duplicates applied in row-major order,
 * integer exactness, NaN in MAX/MIN, and the refusals.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "trainium-core-qtest.h"

static struct nisa_insn scat(unsigned red, unsigned mode, int axis,
                             struct nisa_tensor dst, struct nisa_tensor src,
                             struct nisa_tensor idx)
{
    return (struct nisa_insn){ .opcode = NISA_INSN_SCATTER,
        .subop = NISA_SCATTER_SUBOP(red, mode), .axis = axis, .dst = dst,
        .src = { src, idx } };
}

static double host_red(unsigned red, double d, double s)
{
    switch (red) {
    case NISA_SCAT_ASSIGN:
        return s;
    case NISA_SCAT_ADD:
        return d + s;
    case NISA_SCAT_MUL:
        return d * s;
    case NISA_SCAT_MAX:
        return isnan(d) || isnan(s) ? NAN : fmax(d, s);
    default:
        return isnan(d) || isnan(s) ? NAN : fmin(d, s);
    }
}

/* scatter_reduce along axis 1 of a [R, C] float32 tensor, duplicates. */
static void test_element(void)
{
    Core *c = core_start();
    enum { R = 3, C = 5, K = 4 };
    float self[R * C], src[R * K], o[R * C];
    int64_t idx[R * K] = { 1, 1, 4, 1,  0, 2, 2, 2,  3, 3, 3, 3 };

    randf(self, R * C, 3);
    randf(src, R * K, 4);
    src[5] = NAN;   /* row 1, index 2: MAX/MIN give NaN there */
    put(c, 1, 0, src, sizeof(src));
    put(c, 2, 0, idx, sizeof(idx));
    for (unsigned red = 0; red < NISA_NUM_SCATTER; red++) {
        float want[R * C];

        memcpy(want, self, sizeof(self));
        for (int r = 0; r < R; r++) {
            for (int k = 0; k < K; k++) {
                float *d = &want[r * C + idx[r * K + k]];

                *d = (float)host_red(red, *d, src[r * K + k]);
            }
        }
        put(c, 0, 0, self, sizeof(self));
        g_assert_cmphex(run1(c, scat(red, NISA_IDX_ELEMENT, 1,
                                     tn(0, NISA_F32, 0, R, C, 0, 0),
                                     tn(1, NISA_F32, 0, R, K, 0, 0),
                                     tn(2, NISA_I64, 0, R, K, 0, 0))), ==, OK);
        get(c, 0, 0, o, sizeof(o));
        for (int i = 0; i < R * C; i++) {
            g_assert(o[i] == want[i] || (isnan(o[i]) && isnan(want[i])));
        }
        if (red == NISA_SCAT_ASSIGN) {
            /* the last of the duplicates wins */
            g_assert(o[0 * C + 1] == src[3]);
            g_assert(o[2 * C + 3] == src[2 * K + 3]);
        }
        if (red == NISA_SCAT_MAX || red == NISA_SCAT_MIN) {
            g_assert(isnan(o[1 * C + 2]));
        }
    }
    core_stop(c);
}

/* index_copy / index_reduce: rows of a [V, E] tensor, bfloat16 too. */
static void test_select(void)
{
    Core *c = core_start();
    enum { V = 4, E = 3, L = 3 };
    float self[V * E], src[L * E], o[V * E];
    int32_t ids[L] = { 2, 0, 2 };

    for (int i = 0; i < V * E; i++) {
        self[i] = (float)(i + 1);
    }
    for (int i = 0; i < L * E; i++) {
        src[i] = (float)(10 * (i + 1));
    }
    put(c, 1, 0, src, sizeof(src));
    put(c, 2, 0, ids, sizeof(ids));
    put(c, 0, 0, self, sizeof(self));
    g_assert_cmphex(run1(c, scat(NISA_SCAT_ASSIGN, NISA_IDX_SELECT, 0,
                                 tn(0, NISA_F32, 0, V, E, 0, 0),
                                 tn(1, NISA_F32, 0, L, E, 0, 0),
                                 tn(2, NISA_I32, 0, L, 0, 0, 0))), ==, OK);
    get(c, 0, 0, o, sizeof(o));
    for (int e = 0; e < E; e++) {
        g_assert_cmpfloat(o[0 * E + e], ==, src[1 * E + e]);
        g_assert_cmpfloat(o[1 * E + e], ==, self[1 * E + e]);
        g_assert_cmpfloat(o[2 * E + e], ==, src[2 * E + e]); /* last wins */
        g_assert_cmpfloat(o[3 * E + e], ==, self[3 * E + e]);
    }
    put(c, 0, 0, self, sizeof(self));
    g_assert_cmphex(run1(c, scat(NISA_SCAT_MUL, NISA_IDX_SELECT, 0,
                                 tn(0, NISA_F32, 0, V, E, 0, 0),
                                 tn(1, NISA_F32, 0, L, E, 0, 0),
                                 tn(2, NISA_I32, 0, L, 0, 0, 0))), ==, OK);
    get(c, 0, 0, o, sizeof(o));
    for (int e = 0; e < E; e++) {
        g_assert_cmpfloat(o[2 * E + e], ==,
                          self[2 * E + e] * src[e] * src[2 * E + e]);
        g_assert_cmpfloat(o[0 * E + e], ==, self[e] * src[E + e]);
    }
    /* along axis 1 with a broadcast (stride 0) source: index_fill_ */
    {
        struct nisa_tensor fill = tn(1, NISA_F32, 0, V, 2, 0, 0);
        int64_t cols[2] = { 2, 0 };

        fill.strides[0] = fill.strides[1] = 0;
        put(c, 3, 0, cols, sizeof(cols));
        put(c, 0, 0, self, sizeof(self));
        g_assert_cmphex(run1(c, scat(NISA_SCAT_ASSIGN, NISA_IDX_SELECT, 1,
                                     tn(0, NISA_F32, 0, V, E, 0, 0), fill,
                                     tn(3, NISA_I64, 0, 2, 0, 0, 0))), ==, OK);
        get(c, 0, 0, o, sizeof(o));
        for (int v = 0; v < V; v++) {
            g_assert_cmpfloat(o[v * E + 0], ==, src[0]);
            g_assert_cmpfloat(o[v * E + 1], ==, self[v * E + 1]);
            g_assert_cmpfloat(o[v * E + 2], ==, src[0]);
        }
    }
    core_stop(c);
}

/* Integers are exact on int64 and wrap at the store. */
static void test_integer(void)
{
    Core *c = core_start();
    int64_t self[2] = { 3, INT64_C(1) << 40 }, src[3] = {
        INT64_C(1) << 40, 7, -5 }, o[2];
    int64_t idx[3] = { 0, 1, 1 };
    int32_t s32[2] = { INT32_MAX, -3 }, v32[2] = { 2, 9 }, o32[2];

    put(c, 0, 0, self, sizeof(self));
    put(c, 1, 0, src, sizeof(src));
    put(c, 2, 0, idx, sizeof(idx));
    g_assert_cmphex(run1(c, scat(NISA_SCAT_MUL, NISA_IDX_ELEMENT, 0,
                                 tn(0, NISA_I64, 0, 2, 0, 0, 0),
                                 tn(1, NISA_I64, 0, 3, 0, 0, 0),
                                 tn(2, NISA_I64, 0, 3, 0, 0, 0))), ==, OK);
    get(c, 0, 0, o, sizeof(o));
    g_assert_cmpint(o[0], ==, 3 * (INT64_C(1) << 40));
    g_assert_cmpint(o[1], ==, (INT64_C(1) << 40) * 7 * -5);
    /* int32 ADD wraps */
    put(c, 0, 0, s32, sizeof(s32));
    put(c, 1, 0, v32, sizeof(v32));
    g_assert_cmphex(run1(c, scat(NISA_SCAT_ADD, NISA_IDX_ELEMENT, 0,
                                 tn(0, NISA_I32, 0, 2, 0, 0, 0),
                                 tn(1, NISA_I32, 0, 2, 0, 0, 0),
                                 tn(2, NISA_I64, 0, 2, 0, 0, 0))), ==, OK);
    get(c, 0, 0, o32, sizeof(o32));
    g_assert_cmpint(o32[0], ==, INT32_MIN + 1);
    g_assert_cmpint(o32[1], ==, 6);
    /* MIN */
    put(c, 0, 0, self, sizeof(self));
    put(c, 1, 0, src, sizeof(src));
    g_assert_cmphex(run1(c, scat(NISA_SCAT_MIN, NISA_IDX_ELEMENT, 0,
                                 tn(0, NISA_I64, 0, 2, 0, 0, 0),
                                 tn(1, NISA_I64, 0, 3, 0, 0, 0),
                                 tn(2, NISA_I64, 0, 3, 0, 0, 0))), ==, OK);
    get(c, 0, 0, o, sizeof(o));
    g_assert_cmpint(o[0], ==, 3);
    g_assert_cmpint(o[1], ==, -5);
    core_stop(c);
}

/* Bad indices write nothing; malformed instructions are refused. */
static void test_errors(void)
{
    Core *c = core_start();
    float self[4] = { 1, 2, 3, 4 }, src[3] = { 9, 9, 9 }, o[4];
    int64_t idx[3] = { 0, 4, 1 }, neg[3] = { 0, -1, 1 };
    struct nisa_insn in = scat(NISA_SCAT_ADD, NISA_IDX_ELEMENT, 0,
                               tn(0, NISA_F32, 0, 4, 0, 0, 0),
                               tn(1, NISA_F32, 0, 3, 0, 0, 0),
                               tn(2, NISA_I64, 0, 3, 0, 0, 0));

    put(c, 0, 0, self, sizeof(self));
    put(c, 1, 0, src, sizeof(src));
    put(c, 2, 0, idx, sizeof(idx));
    g_assert_cmphex(run1(c, in), ==, OK | NISA_ERR_BAD_INDEX);
    put(c, 2, 0, neg, sizeof(neg));
    g_assert_cmphex(run1(c, in), ==, OK | NISA_ERR_BAD_INDEX);
    get(c, 0, 0, o, sizeof(o));
    g_assert_cmpmem(o, sizeof(o), self, sizeof(self));

    in.subop = NISA_SCATTER_SUBOP(NISA_NUM_SCATTER, NISA_IDX_ELEMENT);
    g_assert_cmphex(run1(c, in), ==, OK | NISA_ERR_BAD_INSN);
    in.subop = NISA_SCATTER_SUBOP(NISA_SCAT_ADD, NISA_NUM_IDX);
    g_assert_cmphex(run1(c, in), ==, OK | NISA_ERR_BAD_INSN);
    in.subop = NISA_SCATTER_SUBOP(NISA_SCAT_ADD, NISA_IDX_ELEMENT);
    in.flags = NISA_IF_SCALAR;
    g_assert_cmphex(run1(c, in), ==, OK | NISA_ERR_BAD_INSN);
    in.flags = 0;
    in.scalar = f64bits(1.0);
    g_assert_cmphex(run1(c, in), ==, OK | NISA_ERR_BAD_INSN);
    in.scalar = 0;
    in.src[1].dtype = NISA_F32;     /* float indices */
    g_assert_cmphex(run1(c, in), ==, OK | NISA_ERR_BAD_INSN);
    in.src[1] = tn(2, NISA_I64, 0, 2, 0, 0, 0);  /* index shape differs */
    g_assert_cmphex(run1(c, in), ==, OK | NISA_ERR_BAD_INSN);
    get(c, 0, 0, o, sizeof(o));
    g_assert_cmpmem(o, sizeof(o), self, sizeof(self));
    core_stop(c);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/trainium/scatter/element", test_element);
    qtest_add_func("/trainium/scatter/select", test_select);
    qtest_add_func("/trainium/scatter/integer", test_integer);
    qtest_add_func("/trainium/scatter/errors", test_errors);
    return g_test_run();
}

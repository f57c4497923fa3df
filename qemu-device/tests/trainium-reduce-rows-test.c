/*
 * QTest of the float32 row paths of trainium-reduce.c: SOFTMAX's
 * (test_softmax_rows and test_softmax_scores below; the vector kernel of
 * trainium-ew-fast.c among them) and REDUCE's (trn_reduce_rows_f32: SUM,
 * MEAN, MAX, MIN, ARGMAX, ARGMIN, LOGSUMEXP along an axis with nothing
 * after it, rows read straight from memory; contiguous LOGSUMEXP rows by
 * the vector kernel of trainium-ew-fast.c where it proves them): every output
 * (for ARGMAX and ARGMIN: every int64 index, the first NaN else the first
 * extreme, ties included) has the bits of
 *   - the same reduction of the transposed tensor along axis 0 (columns:
 *     the general fold over double buffers, in the same order; for SUM and
 *     MEAN of the contiguous copy, trn_reduce_cols_f32), and
 *   - the test's own fold in double, in order, rounded once (but for the
 *     sign of a zero max or min, which is the card's fmax()'s),
 * over rows with a NaN (either sign), infinities of both signs, zeros of
 * both signs, subnormals, and a strided, permuted source; and, for rows
 * enough that the card's threads share them and rows longer than a chunk,
 * the bits of the columns' general fold.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "trainium-core-qtest.h"

#define R 24
#define L 300

static const unsigned reds[] = {
    NISA_RED_SUM, NISA_RED_MEAN, NISA_RED_MAX, NISA_RED_MIN,
};

static uint32_t bits_stored(double g)
{
    float f = (float)g;
    uint32_t u;

    memcpy(&u, &f, 4);
    return isnan(f) ? (u & 0x80000000u) | 0x7fc00000u : u;
}

static double host_fold(unsigned red, const float *row, int64_t stride)
{
    bool sum = red == NISA_RED_SUM || red == NISA_RED_MEAN;
    double acc = sum ? 0 : red == NISA_RED_MAX ? -INFINITY : INFINITY;

    for (unsigned i = 0; i < L; i++) {
        double v = row[i * stride];

        acc = sum ? acc + v
            : isnan(acc) || isnan(v) ? NAN
            : red == NISA_RED_MAX ? fmax(acc, v) : fmin(acc, v);
    }
    return red == NISA_RED_MEAN ? acc / L : acc;
}

static void check(const char *what, unsigned red, const uint32_t *got,
                  const uint32_t *want)
{
    for (unsigned r = 0; r < R; r++) {
        if (got[r] != want[r]) {
            g_test_message("%s, reduction %u, row %u: want 0x%08x, got 0x%08x",
                           what, red, r, want[r], got[r]);
            g_assert_cmphex(got[r], ==, want[r]);
        }
    }
}

static void fill(float *x)
{
    GRand *g = g_rand_new_with_seed(7);

    for (unsigned i = 0; i < R * L; i++) {
        x[i] = (float)g_rand_double_range(g, -3, 3);
    }
    x[1 * L + 17] = NAN;
    x[2 * L + 250] = -NAN;
    x[3 * L + 4] = INFINITY;
    x[4 * L + 9] = -INFINITY;
    x[5 * L + 0] = INFINITY;
    x[5 * L + 1] = -INFINITY;               /* inf - inf: NaN */
    x[11 * L + 5] = x[11 * L + 200] = 7;    /* ties: the first extreme */
    x[11 * L + 6] = x[11 * L + 201] = -7;
    for (unsigned i = 0; i < L; i++) {
        x[6 * L + i] = -0.0f;                /* sum +0, max and min -0 */
        x[7 * L + i] = i % 2 ? 0.0f : -0.0f;
        x[8 * L + i] = i % 3 ? 1e-40f : -1e-40f;   /* subnormals */
        x[9 * L + i] = i % 2 ? 1.5f : -1.5f;        /* sums to exactly 0 */
        x[10 * L + i] = 2.0f;                       /* all equal */
    }
    g_rand_free(g);
}

/*
 * The rows x as [R][L] in slot 0 (@tr), a transposed copy xt as [L][R] in
 * slot 1 read as the same rows through a permuted view (@tp) and as
 * columns reduced along axis 0 (@tc).
 */
typedef struct Rows {
    struct nisa_tensor tr, tp, tc;
} Rows;

static Rows put_rows(Core *c, float *x, float *xt)
{
    Rows t = {
        .tr = tn(0, NISA_F32, 0, R, L, 0, 0),
        .tp = tn(1, NISA_F32, 0, R, L, 0, 0),
        .tc = tn(1, NISA_F32, 0, L, R, 0, 0),
    };

    t.tp.strides[0] = 1;
    t.tp.strides[1] = R;
    fill(x);
    for (unsigned r = 0; r < R; r++) {
        for (unsigned i = 0; i < L; i++) {
            xt[i * R + r] = x[r * L + i];
        }
    }
    put(c, 0, 0, x, R * L * 4);
    put(c, 1, 0, xt, R * L * 4);
    return t;
}

/* ARGMAX and ARGMIN: the index of the first NaN, else of the first extreme. */
static int64_t host_arg(unsigned red, const float *row)
{
    double acc = red == NISA_RED_ARGMAX ? -INFINITY : INFINITY;
    int64_t arg = 0;

    for (unsigned i = 0; i < L; i++) {
        double v = row[i];

        if (!isnan(acc) &&
            (isnan(v) || (red == NISA_RED_ARGMAX ? v > acc : v < acc))) {
            acc = v;
            arg = i;
        }
    }
    return arg;
}

static void test_arg_rows(void)
{
    static const unsigned args[] = { NISA_RED_ARGMAX, NISA_RED_ARGMIN };
    static const struct { unsigned row; int64_t argmax, argmin; } known[] = {
        { 1, 17, 17 }, { 2, 250, 250 }, { 10, 0, 0 }, { 11, 5, 6 },
    };
    Core *c = core_start();
    g_autofree float *x = g_new(float, R * L);
    g_autofree float *xt = g_new(float, R * L);
    int64_t rows[R], cols[R], want[R];
    Rows t = put_rows(c, x, xt);

    for (unsigned k = 0; k < ARRAY_SIZE(args); k++) {
        struct nisa_insn in = { .opcode = NISA_INSN_REDUCE, .subop = args[k] };

        for (unsigned r = 0; r < R; r++) {
            want[r] = host_arg(args[k], x + r * L);
        }
        for (unsigned j = 0; j < ARRAY_SIZE(known); j++) {
            g_assert_cmpint(want[known[j].row], ==, args[k] == NISA_RED_ARGMAX ?
                            known[j].argmax : known[j].argmin);
        }
        in.src[0] = t.tc;             /* the general fold: columns */
        in.axis = 0;
        in.dst = tn(2, NISA_I64, 0, 1, R, 0, 0);
        g_assert_cmphex(run1(c, in), ==, OK);
        get(c, 2, 0, cols, sizeof(cols));
        in.src[0] = t.tr;             /* the rows */
        in.axis = 1;
        in.dst = tn(2, NISA_I64, 0, R, 1, 0, 0);
        g_assert_cmphex(run1(c, in), ==, OK);
        get(c, 2, 0, rows, sizeof(rows));
        for (unsigned r = 0; r < R; r++) {
            g_assert_cmpint(cols[r], ==, want[r]);
            g_assert_cmpint(rows[r], ==, want[r]);
        }
        in.src[0] = t.tp;             /* strided rows */
        g_assert_cmphex(run1(c, in), ==, OK);
        get(c, 2, 0, rows, sizeof(rows));
        for (unsigned r = 0; r < R; r++) {
            g_assert_cmpint(rows[r], ==, want[r]);
        }
    }
    core_stop(c);
}

/*
 * Many short rows (a max pooling's 3x3 windows), more than one store's
 * worth (TRN_CHUNK_ELEMS = 1024 results): MAX and ARGMAX of each row, as
 * the columns' general fold and the host give them; SUM of each, as the
 * columns' float32 path gives it in chunks of 1024 lanes and a tail.
 */
#define NR 2500
#define NL 9

static void test_short_rows(void)
{
    Core *c = core_start();
    g_autofree float *x = g_new(float, NR * NL);
    g_autofree float *xt = g_new(float, NR * NL);
    g_autofree float *vals = g_new(float, NR);
    g_autofree int64_t *idx = g_new(int64_t, NR);
    GRand *g = g_rand_new_with_seed(11);
    struct nisa_insn in = { .opcode = NISA_INSN_REDUCE };

    for (unsigned i = 0; i < NR * NL; i++) {
        x[i] = (float)g_rand_int_range(g, -4, 5);   /* ties in most rows */
    }
    g_rand_free(g);
    for (unsigned r = 0; r < NR; r++) {
        for (unsigned i = 0; i < NL; i++) {
            xt[i * NR + r] = x[r * NL + i];
        }
    }
    put(c, 0, 0, x, NR * NL * 4);
    put(c, 1, 0, xt, NR * NL * 4);
    for (int col = 0; col < 2; col++) {
        in.src[0] = col ? tn(1, NISA_F32, 0, NL, NR, 0, 0) : tn(0, NISA_F32, 0, NR, NL, 0, 0);
        in.axis = col ? 0 : 1;
        in.subop = NISA_RED_MAX;
        in.dst = col ? tn(2, NISA_F32, 0, 1, NR, 0, 0) : tn(2, NISA_F32, 0, NR, 1, 0, 0);
        g_assert_cmphex(run1(c, in), ==, OK);
        get(c, 2, 0, vals, NR * 4);
        in.subop = NISA_RED_ARGMAX;
        in.dst = col ? tn(2, NISA_I64, 0, 1, NR, 0, 0) : tn(2, NISA_I64, 0, NR, 1, 0, 0);
        g_assert_cmphex(run1(c, in), ==, OK);
        get(c, 2, 0, idx, NR * 8);
        for (unsigned r = 0; r < NR; r++) {
            int64_t first = 0;

            for (unsigned i = 1; i < NL; i++) {
                if (x[r * NL + i] > x[r * NL + first]) {
                    first = i;
                }
            }
            g_assert_cmpint(idx[r], ==, first);
            g_assert_cmpfloat(vals[r], ==, x[r * NL + first]);
        }
        in.subop = NISA_RED_SUM;
        in.dst = col ? tn(2, NISA_F32, 0, 1, NR, 0, 0)
                     : tn(2, NISA_F32, 0, NR, 1, 0, 0);
        g_assert_cmphex(run1(c, in), ==, OK);
        get(c, 2, 0, vals, NR * 4);
        for (unsigned r = 0; r < NR; r++) {
            float sum = 0;

            for (unsigned i = 0; i < NL; i++) {
                sum += x[r * NL + i];           /* small integers: exact */
            }
            g_assert_cmpfloat(vals[r], ==, sum);
        }
    }
    core_stop(c);
}

static void test_rows(void)
{
    Core *c = core_start();
    g_autofree float *x = g_new(float, R * L);
    g_autofree float *xt = g_new(float, R * L);
    uint32_t rows[R], cols[R], want[R];
    Rows t = put_rows(c, x, xt);

    for (unsigned k = 0; k < ARRAY_SIZE(reds); k++) {
        struct nisa_insn in = { .opcode = NISA_INSN_REDUCE, .subop = reds[k] };

        for (unsigned r = 0; r < R; r++) {
            want[r] = bits_stored(host_fold(reds[k], x + r * L, 1));
        }
        /* the general fold: columns of the transposed copy */
        in.src[0] = t.tc;
        in.axis = 0;
        in.dst = tn(2, NISA_F32, 0, 1, R, 0, 0);
        g_assert_cmphex(run1(c, in), ==, OK);
        get(c, 2, 0, cols, sizeof(cols));
        if (reds[k] == NISA_RED_MAX || reds[k] == NISA_RED_MIN) {
            /* the sign of a zero max or min is the card's fmax()'s */
            for (unsigned r = 0; r < R; r++) {
                if ((want[r] & 0x7fffffff) == 0) {
                    want[r] = cols[r];
                }
            }
        }
        check("columns", reds[k], cols, want);

        /* strided columns (x read as [L][R]): the general fold */
        in.src[0] = tn(0, NISA_F32, 0, L, R, 0, 0);
        in.src[0].strides[0] = 1;
        in.src[0].strides[1] = L;
        g_assert_cmphex(run1(c, in), ==, OK);
        get(c, 2, 0, cols, sizeof(cols));
        check("strided columns", reds[k], cols, want);

        /* the rows */
        in.src[0] = t.tr;
        in.axis = 1;
        in.dst = tn(2, NISA_F32, 0, R, 1, 0, 0);
        g_assert_cmphex(run1(c, in), ==, OK);
        get(c, 2, 0, rows, sizeof(rows));
        check("rows", reds[k], rows, want);

        /* strided rows (a permuted view of the transposed copy) */
        in.src[0] = t.tp;
        g_assert_cmphex(run1(c, in), ==, OK);
        get(c, 2, 0, rows, sizeof(rows));
        check("strided rows", reds[k], rows, want);
    }
    /* something real was computed: row 0's min is not 0, row 1's is NaN */
    {
        float s0, s1;

        memcpy(&s0, &want[0], 4);
        memcpy(&s1, &want[1], 4);
        g_assert_cmpfloat(fabsf(s0), >, 0);
        g_assert_true(isnan(s1));
    }
    core_stop(c);
}

/*
 * Rows enough for the card's threads to share them (R * L >= 2^18
 * elements; the card started with 3 helper threads), and long rows (more
 * than one chunk of 1024, an odd tail), for every reduction: each row's
 * result has the bits of the general fold of the transposed copy's
 * columns. Rows of each kind: plain, a NaN at a position that moves along
 * the row, a -NaN last, zeros of both signs, all -inf, all +inf, the
 * extremes in the last two elements, infinities of both signs.
 */
static void fill_many(float *x, unsigned nr, unsigned nl, unsigned seed)
{
    GRand *g = g_rand_new_with_seed(seed);

    for (unsigned r = 0; r < nr; r++) {
        float *row = x + (uint64_t)r * nl;

        for (unsigned i = 0; i < nl; i++) {
            row[i] = (float)g_rand_double_range(g, -3, 3);
        }
        switch (r % 8) {
        case 1:
            row[(r * 7) % nl] = NAN;
            break;
        case 2:
            row[nl - 1] = -NAN;
            break;
        case 3:
            for (unsigned i = 0; i < nl; i++) {
                row[i] = (i * 5 + r) % 7 ? -0.0f : 0.0f;
            }
            break;
        case 4:
            for (unsigned i = 0; i < nl; i++) {
                row[i] = -INFINITY;
            }
            break;
        case 5:
            for (unsigned i = 0; i < nl; i++) {
                row[i] = INFINITY;
            }
            break;
        case 6:
            row[nl - 1] = 10;
            row[nl - 2] = -10;
            break;
        case 7:
            row[r % nl] = INFINITY;
            row[(r + 3) % nl] = -INFINITY;
            break;
        }
    }
    g_rand_free(g);
}

static void test_shared_rows(void)
{
    static const struct { unsigned nr, nl; } shapes[] = {
        { 2048, 128 }, { 4, 100003 }, { 700, 375 },
    };
    static const unsigned all[] = {
        NISA_RED_MAX, NISA_RED_MIN, NISA_RED_SUM, NISA_RED_MEAN,
        NISA_RED_ARGMAX, NISA_RED_ARGMIN, NISA_RED_LOGSUMEXP,
    };
    Core *c = core_start_with("mem-size=64M,blas-threads=4");

    for (unsigned s = 0; s < ARRAY_SIZE(shapes); s++) {
        unsigned nr = shapes[s].nr, nl = shapes[s].nl;
        uint64_t ne = (uint64_t)nr * nl;
        g_autofree float *x = g_new(float, ne);
        g_autofree float *xt = g_new(float, ne);
        g_autofree uint64_t *rows = g_new(uint64_t, nr);
        g_autofree uint64_t *cols = g_new(uint64_t, nr);

        g_assert_cmpuint(ne, >=, 1u << 18);
        fill_many(x, nr, nl, 13 + s);
        for (unsigned r = 0; r < nr; r++) {
            for (unsigned i = 0; i < nl; i++) {
                xt[(uint64_t)i * nr + r] = x[(uint64_t)r * nl + i];
            }
        }
        put(c, 0, 0, x, ne * 4);
        put(c, 1, 0, xt, ne * 4);
        for (unsigned k = 0; k < ARRAY_SIZE(all); k++) {
            bool arg = all[k] == NISA_RED_ARGMAX || all[k] == NISA_RED_ARGMIN;
            unsigned dt = arg ? NISA_I64 : NISA_F32, es = arg ? 8 : 4;
            struct nisa_insn in = { .opcode = NISA_INSN_REDUCE,
                                    .subop = all[k] };

            memset(cols, 0, nr * 8);
            in.src[0] = tn(1, NISA_F32, 0, nl, nr, 0, 0);
            in.axis = 0;
            in.dst = tn(2, dt, 0, 1, nr, 0, 0);
            g_assert_cmphex(run1(c, in), ==, OK);
            get(c, 2, 0, cols, nr * es);
            memset(rows, 0xa5, nr * 8);         /* no stale result */
            put(c, 2, 0, rows, nr * es);
            in.src[0] = tn(0, NISA_F32, 0, nr, nl, 0, 0);
            in.axis = 1;
            in.dst = tn(2, dt, 0, nr, 1, 0, 0);
            g_assert_cmphex(run1(c, in), ==, OK);
            get(c, 2, 0, rows, nr * es);
            for (unsigned r = 0; r < nr; r++) {
                uint64_t w = es == 8 ? cols[r] : ((uint32_t *)cols)[r];
                uint64_t got = es == 8 ? rows[r] : ((uint32_t *)rows)[r];

                if (got != w) {
                    g_test_message("%u x %u, reduction %u, row %u: "
                                   "want 0x%" PRIx64 ", got 0x%" PRIx64,
                                   nr, nl, all[k], r, w, got);
                }
                g_assert_cmphex(got, ==, w);
            }
            /* something real: the kinds of rows give what they should */
            if (all[k] == NISA_RED_MAX && nr >= 8) {
                float *v = (float *)rows;

                g_assert_true(isnan(v[1]) && isnan(v[2]));
                g_assert_cmpfloat(v[4], ==, -INFINITY);
                g_assert_cmpfloat(v[5], ==, INFINITY);
                g_assert_cmpfloat(v[6], ==, 10);
                g_assert_cmpfloat(v[3], ==, 0);
                g_assert_cmpfloat(v[0], >, 2.5);
            }
        }
    }
    core_stop(c);
}

/*
 * SOFTMAX and LOG_SOFTMAX of float32 rows (trn_softmax_rows_f32: each row
 * read straight from memory, exp(x - m) kept between passes or the row
 * computed by the vector kernel, rows shared by the card's threads when
 * there are TRN_ITER_SHARE_MIN elements or more) have the
 * bits of the general three-pass loop, which takes the transposed copy's
 * columns (softmax along axis 0: lanes, not rows); out of place and in
 * place; rows of every kind fill_many() makes, a row longer than a chunk,
 * and rows longer than the rows path takes (the general loop on both
 * sides). Plain rows' softmax sums to 1 and log-softmax is below 0.
 */
static void softmax_case(Core *c, const float *x, unsigned nr, unsigned nl,
                         bool plain_row0)
{
    uint64_t ne = (uint64_t)nr * nl;
    g_autofree float *xt = g_new(float, ne);
    g_autofree uint32_t *cols = g_new(uint32_t, ne);
    g_autofree uint32_t *rows = g_new(uint32_t, ne);

    for (unsigned v = 0; v < NISA_NUM_SOFTMAX; v++) {
        for (int inplace = 0; inplace < 2; inplace++) {
            struct nisa_insn in = { .opcode = NISA_INSN_SOFTMAX, .subop = v };

            for (unsigned r = 0; r < nr; r++) {
                for (unsigned i = 0; i < nl; i++) {
                    xt[(uint64_t)i * nr + r] = x[(uint64_t)r * nl + i];
                }
            }
            put(c, 0, 0, x, ne * 4);
            put(c, 1, 0, xt, ne * 4);
            in.src[0] = tn(1, NISA_F32, 0, nl, nr, 0, 0);
            in.axis = 0;
            in.dst = tn(2, NISA_F32, 0, nl, nr, 0, 0);
            g_assert_cmphex(run1(c, in), ==, OK);
            get(c, 2, 0, xt, ne * 4);       /* the columns' results */
            for (unsigned r = 0; r < nr; r++) {
                for (unsigned i = 0; i < nl; i++) {
                    memcpy(&cols[(uint64_t)r * nl + i],
                           &xt[(uint64_t)i * nr + r], 4);
                }
            }
            memset(rows, 0xa5, ne * 4);     /* no stale result */
            put(c, 2, 0, rows, ne * 4);
            in.src[0] = tn(0, NISA_F32, 0, nr, nl, 0, 0);
            in.axis = 1;
            in.dst = tn(inplace ? 0 : 2, NISA_F32, 0, nr, nl, 0, 0);
            g_assert_cmphex(run1(c, in), ==, OK);
            get(c, inplace ? 0 : 2, 0, rows, ne * 4);
            for (uint64_t e = 0; e < ne; e++) {
                if (rows[e] != cols[e]) {
                    g_test_message("%u x %u, variant %u%s, element %"
                                   PRIu64 ": want 0x%08x, got 0x%08x",
                                   nr, nl, v, inplace ? " in place" : "",
                                   e, cols[e], rows[e]);
                }
                g_assert_cmphex(rows[e], ==, cols[e]);
            }
            if (plain_row0) {           /* something real */
                const float *r0 = (const float *)rows;
                double sum = 0;

                for (unsigned i = 0; i < nl; i++) {
                    sum += v == NISA_SM_SOFTMAX ? r0[i] : exp(r0[i]);
                    g_assert_true(v == NISA_SM_SOFTMAX ? r0[i] > 0 : r0[i] < 0);
                }
                g_assert_cmpfloat(fabs(sum - 1), <, 1e-3);
            }
        }
    }
}

static void test_softmax_rows(void)
{
    static const struct { unsigned nr, nl; } shapes[] = {
        { R, L }, { 2048, 128 }, { 4, 100003 }, { 700, 375 }, { 3, 70001 },
    };
    Core *c = core_start_with("mem-size=64M,blas-threads=4");

    for (unsigned s = 0; s < ARRAY_SIZE(shapes); s++) {
        unsigned nr = shapes[s].nr, nl = shapes[s].nl;
        g_autofree float *x = g_new(float, (uint64_t)nr * nl);

        fill_many(x, nr, nl, 31 + s);
        softmax_case(c, x, nr, nl, true);
    }
    core_stop(c);
}

/*
 * Attention scores, as the vector kernel of float32 softmax rows
 * (trn_fast_softmax_row()) meets them: rows of every scale from 0.01 to
 * 1000 (results from about 1 down to subnormal and zero), causal masks
 * (-inf after the row's position), elements 100 to 104 below the row's
 * max (the kernel's domain edges), ties at the max; row lengths of a
 * vector and a tail, and one of 2^16 elements (the longest the rows path
 * takes). Every row's results have the bits of the general loop's.
 */
static void test_softmax_scores(void)
{
    static const struct { unsigned nr, nl; } shapes[] = {
        { 4096, 32 }, { 257, 7 }, { 64, 1027 }, { 3, 1u << 16 },
    };
    Core *c = core_start_with("mem-size=64M,blas-threads=4");

    for (unsigned s = 0; s < ARRAY_SIZE(shapes); s++) {
        unsigned nr = shapes[s].nr, nl = shapes[s].nl;
        g_autofree float *x = g_new(float, (uint64_t)nr * nl);
        GRand *g = g_rand_new_with_seed(71 + s);

        for (unsigned r = 0; r < nr; r++) {
            float *row = x + (uint64_t)r * nl;
            double scale = pow(10, g_rand_double_range(g, -2, 3));

            for (unsigned i = 0; i < nl; i++) {
                /* Box-Muller: a normal score */
                double u = g_rand_double_range(g, 1e-12, 1);
                double w = g_rand_double(g);

                row[i] = (float)(scale * sqrt(-2 * log(u)) * cos(2 * M_PI * w));
            }
            switch (r % 4) {
            case 1:                     /* causal */
                for (unsigned i = r % nl + 1; i < nl; i++) {
                    row[i] = -INFINITY;
                }
                break;
            case 2:                     /* the domain's edges */
                row[0] = 50;
                for (unsigned i = 1; i < nl; i++) {
                    row[i] = 50 - (float)g_rand_double_range(g, 99, 105);
                }
                break;
            case 3:                     /* ties at the max */
                row[nl / 2] = row[nl - 1] = 1000;
                break;
            }
        }
        g_rand_free(g);
        softmax_case(c, x, nr, nl, false);
    }
    core_stop(c);
}

/*
 * LOGSUMEXP along rows (the general fold, one lane at a time) and along
 * columns (lanes): the bits of the spec's streaming fold in double
 * (m, the largest so far; s, the sum of exp(x - m); m + log(s) at the
 * end), within 1e-12 of the two-pass max-then-sum, +inf where a row has
 * one (row 5 also has -inf), NaN where it has a NaN; an empty axis gives
 * -inf where MAX is refused.
 */
static double host_lse(const float *row, int64_t stride, unsigned n)
{
    double m = -INFINITY, s = 0;

    for (unsigned i = 0; i < n; i++) {
        double v = row[i * stride];

        if (isnan(m) || v == -INFINITY) {
            continue;
        }
        if (isnan(v) || v == INFINITY) {
            m = v;
        } else if (m == INFINITY) {
            continue;
        } else if (v > m) {
            s = s * exp(m - v) + 1;
            m = v;
        } else {
            s += exp(v - m);
        }
    }
    return isfinite(m) ? m + log(s) : m;
}

static void test_logsumexp(void)
{
    Core *c = core_start();
    g_autofree float *x = g_new(float, R * L);
    g_autofree float *xt = g_new(float, R * L);
    uint32_t rows[R], cols[R], want[R];
    Rows t = put_rows(c, x, xt);
    struct nisa_insn in = { .opcode = NISA_INSN_REDUCE,
                            .subop = NISA_RED_LOGSUMEXP };
    float got;

    for (unsigned r = 0; r < R; r++) {
        const float *row = x + r * L;
        double lse = host_lse(row, 1, L), mx = -INFINITY, s = 0;

        want[r] = bits_stored(lse);
        for (unsigned i = 0; i < L; i++) {
            mx = isnan(mx) || isnan(row[i]) ? NAN : fmax(mx, row[i]);
        }
        for (unsigned i = 0; i < L && isfinite(mx); i++) {
            s += exp(row[i] - mx);
        }
        if (isfinite(mx)) {
            g_assert_cmpfloat(fabs(lse - (mx + log(s))), <=, 1e-12 * fabs(lse));
        }
    }
    in.src[0] = t.tr;
    in.axis = 1;
    in.dst = tn(2, NISA_F32, 0, R, 1, 0, 0);
    g_assert_cmphex(run1(c, in), ==, OK);
    get(c, 2, 0, rows, sizeof(rows));
    check("rows", NISA_RED_LOGSUMEXP, rows, want);
    in.src[0] = t.tc;
    in.axis = 0;
    in.dst = tn(2, NISA_F32, 0, 1, R, 0, 0);
    g_assert_cmphex(run1(c, in), ==, OK);
    get(c, 2, 0, cols, sizeof(cols));
    check("columns", NISA_RED_LOGSUMEXP, cols, want);
    memcpy(&got, &rows[3], 4);
    g_assert_cmpfloat(got, ==, INFINITY);
    memcpy(&got, &rows[5], 4);
    g_assert_cmpfloat(got, ==, INFINITY);
    memcpy(&got, &rows[1], 4);
    g_assert_true(isnan(got));
    memcpy(&got, &rows[10], 4);
    g_assert_cmpfloat(got, ==, (float)(2 + log(L)));

    /* an empty axis: -inf; MAX has no value for it */
    in.src[0] = tn(0, NISA_F32, 0, R, 1, 0, 0);
    in.src[0].shape[1] = 0;
    in.axis = 1;
    in.dst = tn(2, NISA_F32, 0, R, 1, 0, 0);
    g_assert_cmphex(run1(c, in), ==, OK);
    get(c, 2, 0, rows, sizeof(rows));
    memcpy(&got, &rows[R - 1], 4);
    g_assert_cmpfloat(got, ==, -INFINITY);
    in.subop = NISA_RED_MAX;
    g_assert_cmphex(run1(c, in), ==, OK | NISA_ERR_BAD_INSN);
    core_stop(c);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/trainium/reduce-rows/same-bits", test_rows);
    qtest_add_func("/trainium/reduce-rows/arg-indices", test_arg_rows);
    qtest_add_func("/trainium/reduce-rows/short-rows", test_short_rows);
    qtest_add_func("/trainium/reduce-rows/shared-rows", test_shared_rows);
    qtest_add_func("/trainium/reduce-rows/softmax-rows", test_softmax_rows);
    qtest_add_func("/trainium/reduce-rows/softmax-scores", test_softmax_scores);
    qtest_add_func("/trainium/reduce-rows/logsumexp", test_logsumexp);
    return g_test_run();
}

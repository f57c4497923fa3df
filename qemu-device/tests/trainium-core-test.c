/*
 * qtest for the NeuronCores of the virtual Trainium card: the instruction
 * set (docs/hardware.md, "Instruction set") checked against host
 * computations, buffer-table isolation, and every error path of LAUNCH.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "trainium-core-qtest.h"

static void test_elementwise(void)
{
    Core *c = core_start();
    enum { N = 3000 };
    float a[N], b[N], o[N];
    struct nisa_insn in;

    randf(a, N, 1);
    randf(b, N, 2);
    b[7] = 0; /* division by zero gives an IEEE infinity */
    put(c, 0, 0, a, sizeof(a));
    put(c, 1, 0, b, sizeof(b));

    /* add with alpha: exactly the float of a + 2b computed in double. */
    in = (struct nisa_insn){ .opcode = NISA_INSN_BINARY, .subop = NISA_BIN_ADD,
        .alpha = f64bits(2.0), .dst = tn(2, NISA_F32, 0, N, 0, 0, 0),
        .src = { tn(0, NISA_F32, 0, N, 0, 0, 0), tn(1, NISA_F32, 0, N, 0, 0, 0) } };
    g_assert_cmphex(run1(c, in), ==, OK);
    get(c, 2, 0, o, sizeof(o));
    for (int i = 0; i < N; i++) {
        g_assert(o[i] == (float)((double)a[i] + 2.0 * b[i]));
    }

    /* div, max with NaN, pow */
    for (unsigned op = NISA_BIN_MUL; op <= NISA_BIN_POW; op++) {
        in.subop = op;
        g_assert_cmphex(run1(c, in), ==, OK);
        get(c, 2, 0, o, sizeof(o));
        for (int i = 0; i < N; i++) {
            double x = a[i], y = b[i];
            double want = op == NISA_BIN_MUL ? x * y : op == NISA_BIN_DIV ? x / y :
                          op == NISA_BIN_MAX ? fmax(x, y) :
                          op == NISA_BIN_MIN ? fmin(x, y) : pow(x, y);
            float w = (float)want;

            g_assert(o[i] == w || (isnan(o[i]) && isnan(w)));
        }
    }
    get(c, 2, 0, o, sizeof(o));

    /* scalar form and reverse: 1.5 - x */
    in = (struct nisa_insn){ .opcode = NISA_INSN_BINARY, .subop = NISA_BIN_SUB,
        .flags = NISA_IF_SCALAR | NISA_IF_REVERSE, .scalar = f64bits(1.5),
        .alpha = f64bits(1.0), .dst = tn(2, NISA_F32, 0, N, 0, 0, 0),
        .src = { tn(0, NISA_F32, 0, N, 0, 0, 0) } };
    g_assert_cmphex(run1(c, in), ==, OK);
    get(c, 2, 0, o, sizeof(o));
    for (int i = 0; i < N; i++) {
        g_assert(o[i] == (float)(1.5 - a[i]));
    }

    /* Unary functions against the same formulas in double. */
    for (unsigned fn = 0; fn < NISA_UN_BITNOT; fn++) {
        in = (struct nisa_insn){ .opcode = NISA_INSN_UNARY, .subop = fn,
            .dst = tn(2, NISA_F32, 0, N, 0, 0, 0),
            .src = { tn(0, NISA_F32, 0, N, 0, 0, 0) } };
        g_assert_cmphex(run1(c, in), ==, OK);
        get(c, 2, 0, o, sizeof(o));
        for (int i = 0; i < N; i++) {
            double x = a[i], w;

            switch (fn) {
            case NISA_UN_NEG: w = -x; break;
            case NISA_UN_ABS: w = fabs(x); break;
            case NISA_UN_EXP: w = exp(x); break;
            case NISA_UN_LOG: w = log(x); break;
            case NISA_UN_SQRT: w = sqrt(x); break;
            case NISA_UN_RSQRT: w = 1 / sqrt(x); break;
            case NISA_UN_RECIP: w = 1 / x; break;
            case NISA_UN_RELU: w = x > 0 ? x : 0; break;
            case NISA_UN_GELU_ERF: w = 0.5 * x * (1 + erf(x / sqrt(2))); break;
            case NISA_UN_GELU_TANH:
                w = 0.5 * x * (1 + tanh(sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
                break;
            case NISA_UN_SILU: w = x / (1 + exp(-x)); break;
            case NISA_UN_SIGMOID: w = 1 / (1 + exp(-x)); break;
            case NISA_UN_TANH: w = tanh(x); break;
            case NISA_UN_SIN: w = sin(x); break;
            case NISA_UN_COS: w = cos(x); break;
            case NISA_UN_SQUARE: w = x * x; break;
            case NISA_UN_SIGN: w = (x > 0) - (x < 0); break;
            case NISA_UN_ERF: w = erf(x); break;
            case NISA_UN_FLOOR: w = floor(x); break;
            case NISA_UN_GELU_ERF_GRAD:
                w = 0.5 * (1 + erf(x / sqrt(2))) + x * exp(-x * x / 2) / sqrt(2 * M_PI);
                break;
            case NISA_UN_GELU_TANH_GRAD: {
                /* numerically, against the function above */
                double h = 1e-5, f1, f0, xp = x + h, xm = x - h, k = sqrt(2 / M_PI);

                f1 = 0.5 * xp * (1 + tanh(k * (xp + 0.044715 * xp * xp * xp)));
                f0 = 0.5 * xm * (1 + tanh(k * (xm + 0.044715 * xm * xm * xm)));
                w = (f1 - f0) / (2 * h);
                break;
            }
            default: { /* SILU_GRAD */
                double sg = 1 / (1 + exp(-x));

                w = sg * (1 + x * (1 - sg));
                break;
            }
            }
            if (isnan(w)) {
                g_assert(isnan(o[i]));
            } else {
                g_assert_cmpfloat_with_epsilon(o[i], w, 2e-6 * fmax(1, fabs(w)));
            }
        }
    }
    core_stop(c);
}

/*
 * Integer instructions compute exactly on int64 (docs/hardware.md,
 * "Numerics"), values above 2^53 included; a division with a divisor of 0
 * fails with DIV_ZERO and writes nothing; INT64_MIN / -1 wraps; bitwise
 * functions take integers only.
 */
static void test_integer_exact(void)
{
    Core *c = core_start();
    enum { N = 8 };
    const int64_t big = (1ll << 53) + 1;
    int64_t x[N] = { big, -big, INT64_MAX, INT64_MIN, 7, -7, 0, INT64_MIN };
    int64_t y[N] = { 3, big + 2, -1, -1, -2, 2, 5, 0 };
    int64_t y1[N] = { 3, big + 2, -1, -1, -2, 2, 5, 9 };
    int64_t o[N], keep[N];
    uint8_t m[N];
    struct nisa_insn in;

    put(c, 0, 0, x, sizeof(x));
    put(c, 1, 0, y, sizeof(y));
    /* add .. rem; the later operators: trainium-elementwise-test.c */
    for (unsigned op = 0; op <= NISA_BIN_REM; op++) {
        bool division = op == NISA_BIN_DIV || op == NISA_BIN_FLOORDIV ||
                        op == NISA_BIN_REM;

        if (op == NISA_BIN_POW) {
            continue;
        }

        in = (struct nisa_insn){ .opcode = NISA_INSN_BINARY, .subop = op,
            .alpha = f64bits(1.0), .dst = tn(2, NISA_I64, 0, N, 0, 0, 0),
            .src = { tn(0, NISA_I64, 0, N, 0, 0, 0), tn(1, NISA_I64, 0, N, 0, 0, 0) } };
        put(c, 1, 0, y, sizeof(y));
        if (division) {
            memset(keep, 0x5a, sizeof(keep));
            put(c, 2, 0, keep, sizeof(keep));
            g_assert_cmphex(run1(c, in), ==, OK | NISA_ERR_DIV_ZERO);
            get(c, 2, 0, o, sizeof(o));
            g_assert_cmpmem(o, sizeof(o), keep, sizeof(keep));
            put(c, 1, 0, y1, sizeof(y1));
        }
        g_assert_cmphex(run1(c, in), ==, OK);
        get(c, 2, 0, o, sizeof(o));
        for (int i = 0; i < N; i++) {
            uint64_t a = x[i], b = division ? y1[i] : y[i];
            int64_t yi = division ? y1[i] : y[i];
            int64_t w;

            switch (op) {
            case NISA_BIN_ADD: w = (int64_t)(a + b); break;
            case NISA_BIN_SUB: w = (int64_t)(a - b); break;
            case NISA_BIN_MUL: w = (int64_t)(a * b); break;
            case NISA_BIN_DIV:
                w = yi == -1 ? (int64_t)(0 - a) : x[i] / yi;
                break;
            case NISA_BIN_MAX: w = MAX(x[i], y[i]); break;
            case NISA_BIN_MIN: w = MIN(x[i], y[i]); break;
            case NISA_BIN_AND: w = x[i] & y[i]; break;
            case NISA_BIN_OR: w = x[i] | y[i]; break;
            case NISA_BIN_XOR: w = x[i] ^ y[i]; break;
            case NISA_BIN_FLOORDIV:
                if (yi == -1) {
                    w = (int64_t)(0 - a);
                } else {
                    w = x[i] / yi - (x[i] % yi && (x[i] < 0) != (yi < 0));
                }
                break;
            default: /* REM */
                if (yi == -1) {
                    w = 0;
                } else {
                    w = x[i] % yi;
                    w += w && (w < 0) != (yi < 0) ? yi : 0;
                }
                break;
            }
            g_assert_cmpint(o[i], ==, w);
        }
    }
    /* pow: wrapping, and PyTorch's rule for negative exponents */
    {
        int64_t px[N] = { 2, 3, -1, -1, 1, 0, 7, -2 };
        int64_t py[N] = { 62, 41, -3, -4, -9, -1, 0, 63 };
        int64_t pw[N] = { 1ll << 62, 0, -1, 1, 1, 0, 1, INT64_MIN };
        uint64_t p3 = 1;

        for (int k = 0; k < 41; k++) {
            p3 *= 3;
        }
        pw[1] = (int64_t)p3;
        put(c, 0, 0, px, sizeof(px));
        put(c, 1, 0, py, sizeof(py));
        in = (struct nisa_insn){ .opcode = NISA_INSN_BINARY, .subop = NISA_BIN_POW,
            .alpha = f64bits(1.0), .dst = tn(2, NISA_I64, 0, N, 0, 0, 0),
            .src = { tn(0, NISA_I64, 0, N, 0, 0, 0), tn(1, NISA_I64, 0, N, 0, 0, 0) } };
        g_assert_cmphex(run1(c, in), ==, OK);
        get(c, 2, 0, o, sizeof(o));
        g_assert_cmpmem(o, sizeof(o), pw, sizeof(pw));
        put(c, 0, 0, x, sizeof(x));
    }
    put(c, 1, 0, y, sizeof(y));
    /* neg, abs, bitwise not; comparisons */
    for (unsigned fn = NISA_UN_NEG; fn <= NISA_UN_BITNOT; fn++) {
        if (fn != NISA_UN_NEG && fn != NISA_UN_ABS && fn != NISA_UN_BITNOT) {
            continue;
        }
        g_assert_cmphex(run1(c, (struct nisa_insn){ .opcode = NISA_INSN_UNARY,
            .subop = fn, .dst = tn(2, NISA_I64, 0, N, 0, 0, 0),
            .src = { tn(0, NISA_I64, 0, N, 0, 0, 0) } }), ==, OK);
        get(c, 2, 0, o, sizeof(o));
        for (int i = 0; i < N; i++) {
            uint64_t a = x[i];
            int64_t w = fn == NISA_UN_NEG ? (int64_t)(0 - a) :
                        fn == NISA_UN_ABS ? (x[i] < 0 ? (int64_t)(0 - a) : x[i]) :
                        ~x[i];

            g_assert_cmpint(o[i], ==, w);
        }
    }
    g_assert_cmphex(run1(c, (struct nisa_insn){ .opcode = NISA_INSN_COMPARE,
        .subop = NISA_CMP_LT, .dst = tn(2, NISA_BOOL, 0, N, 0, 0, 0),
        .src = { tn(0, NISA_I64, 0, N, 0, 0, 0), tn(1, NISA_I64, 0, N, 0, 0, 0) } }),
        ==, OK);
    get(c, 2, 0, m, sizeof(m));
    for (int i = 0; i < N; i++) {
        g_assert_cmpuint(m[i], ==, x[i] < y[i]);
    }
    /* 2^53 + 1 == 2^53 + 2 in double, not here. */
    {
        int64_t p[2] = { big, big + 1 };

        put(c, 3, 0, p, sizeof(p));
        g_assert_cmphex(run1(c, (struct nisa_insn){ .opcode = NISA_INSN_COMPARE,
            .subop = NISA_CMP_EQ, .dst = tn(2, NISA_BOOL, 0, 1, 0, 0, 0),
            .src = { tn(3, NISA_I64, 0, 1, 0, 0, 0), tn(3, NISA_I64, 8, 1, 0, 0, 0) } }),
            ==, OK);
        get(c, 2, 0, m, 1);
        g_assert_cmpuint(m[0], ==, 0);
        /* A strided int64 copy is exact too. */
        {
            struct nisa_tensor rev = tn(3, NISA_I64, 8, 2, 0, 0, 0);

            rev.strides[0] = -1;
            g_assert_cmphex(run1(c, (struct nisa_insn){ .opcode = NISA_INSN_COPY,
                .dst = tn(2, NISA_I64, 0, 2, 0, 0, 0), .src = { rev } }), ==, OK);
            get(c, 2, 0, o, 16);
            g_assert_cmpint(o[0], ==, big + 1);
            g_assert_cmpint(o[1], ==, big);
        }
    }
    /* int32 arithmetic wraps modulo 2^32, a conversion saturates. */
    {
        int32_t a[2] = { INT32_MAX, INT32_MIN }, r[2];

        put(c, 3, 0, a, sizeof(a));
        g_assert_cmphex(run1(c, (struct nisa_insn){ .opcode = NISA_INSN_BINARY,
            .subop = NISA_BIN_ADD, .flags = NISA_IF_SCALAR, .scalar = f64bits(1),
            .alpha = f64bits(1), .dst = tn(2, NISA_I32, 0, 2, 0, 0, 0),
            .src = { tn(3, NISA_I32, 0, 2, 0, 0, 0) } }), ==, OK);
        get(c, 2, 0, r, sizeof(r));
        g_assert_cmpint(r[0], ==, INT32_MIN);
        g_assert_cmpint(r[1], ==, INT32_MIN + 1);
        g_assert_cmphex(run1(c, (struct nisa_insn){ .opcode = NISA_INSN_COPY,
            .dst = tn(2, NISA_I32, 0, 2, 0, 0, 0),
            .src = { tn(0, NISA_I64, 16, 2, 0, 0, 0) } }), ==, OK);
        get(c, 2, 0, r, sizeof(r));
        g_assert_cmpint(r[0], ==, INT32_MAX);
        g_assert_cmpint(r[1], ==, INT32_MIN);
    }
    /* Bitwise operators take integers only; floats get floor-div and rem. */
    g_assert_cmphex(run1(c, (struct nisa_insn){ .opcode = NISA_INSN_BINARY,
        .subop = NISA_BIN_XOR, .dst = tn(2, NISA_F32, 0, 2, 0, 0, 0),
        .src = { tn(0, NISA_F32, 0, 2, 0, 0, 0), tn(1, NISA_F32, 0, 2, 0, 0, 0) } }),
        ==, OK | NISA_ERR_BAD_INSN);
    {
        float a[3] = { 7.5f, -7.5f, 1 }, b[3] = { 2, 2, 0 }, r[3];

        put(c, 3, 0, a, sizeof(a));
        put(c, 3, 64, b, sizeof(b));
        g_assert_cmphex(run1(c, (struct nisa_insn){ .opcode = NISA_INSN_BINARY,
            .subop = NISA_BIN_REM, .dst = tn(2, NISA_F32, 0, 3, 0, 0, 0),
            .src = { tn(3, NISA_F32, 0, 3, 0, 0, 0), tn(3, NISA_F32, 64, 3, 0, 0, 0) } }),
            ==, OK);
        get(c, 2, 0, r, sizeof(r));
        g_assert_cmpfloat(r[0], ==, 1.5f);
        g_assert_cmpfloat(r[1], ==, 0.5f);
        g_assert(isnan(r[2]));
        g_assert_cmphex(run1(c, (struct nisa_insn){ .opcode = NISA_INSN_BINARY,
            .subop = NISA_BIN_FLOORDIV, .dst = tn(2, NISA_F32, 0, 3, 0, 0, 0),
            .src = { tn(3, NISA_F32, 0, 3, 0, 0, 0), tn(3, NISA_F32, 64, 3, 0, 0, 0) } }),
            ==, OK);
        get(c, 2, 0, r, sizeof(r));
        g_assert_cmpfloat(r[0], ==, 3);
        g_assert_cmpfloat(r[1], ==, -4);
        g_assert(isinf(r[2]));
    }
    /* GATHER of int64 values is exact. */
    {
        int64_t v[2] = { big, -big }, ids[2] = { 1, 0 };

        put(c, 3, 0, v, sizeof(v));
        put(c, 1, 0, ids, sizeof(ids));
        g_assert_cmphex(run1(c, (struct nisa_insn){ .opcode = NISA_INSN_GATHER,
            .subop = NISA_IDX_SELECT, .axis = 0, .dst = tn(2, NISA_I64, 0, 2, 0, 0, 0),
            .src = { tn(3, NISA_I64, 0, 2, 0, 0, 0), tn(1, NISA_I64, 0, 2, 0, 0, 0) } }),
            ==, OK);
        get(c, 2, 0, o, 16);
        g_assert_cmpint(o[0], ==, -big);
        g_assert_cmpint(o[1], ==, big);
    }
    core_stop(c);
}

static void test_broadcast_compare_where(void)
{
    Core *c = core_start();
    float a[12], row[4] = { 1, -2, 3, -4 }, o[12];
    uint8_t mask[12];
    struct nisa_insn in;
    struct nisa_tensor bcast = tn(1, NISA_F32, 0, 3, 4, 0, 0);

    for (int i = 0; i < 12; i++) {
        a[i] = (float)i - 5;
    }
    put(c, 0, 0, a, sizeof(a));
    put(c, 1, 0, row, sizeof(row));
    bcast.strides[0] = 0; /* the row repeated over 3 rows */

    in = (struct nisa_insn){ .opcode = NISA_INSN_BINARY, .subop = NISA_BIN_MUL,
        .dst = tn(2, NISA_F32, 0, 3, 4, 0, 0),
        .src = { tn(0, NISA_F32, 0, 3, 4, 0, 0), bcast } };
    g_assert_cmphex(run1(c, in), ==, OK);
    get(c, 2, 0, o, sizeof(o));
    for (int i = 0; i < 12; i++) {
        g_assert_cmpfloat(o[i], ==, a[i] * row[i % 4]);
    }

    /* mask = a > row (broadcast), then where(mask, a, row) */
    in = (struct nisa_insn){ .opcode = NISA_INSN_COMPARE, .subop = NISA_CMP_GT,
        .dst = tn(3, NISA_BOOL, 0, 3, 4, 0, 0),
        .src = { tn(0, NISA_F32, 0, 3, 4, 0, 0), bcast } };
    g_assert_cmphex(run1(c, in), ==, OK);
    get(c, 3, 0, mask, sizeof(mask));
    for (int i = 0; i < 12; i++) {
        g_assert_cmpuint(mask[i], ==, a[i] > row[i % 4]);
    }
    in = (struct nisa_insn){ .opcode = NISA_INSN_WHERE,
        .dst = tn(2, NISA_F32, 0, 3, 4, 0, 0),
        .src = { tn(3, NISA_BOOL, 0, 3, 4, 0, 0), tn(0, NISA_F32, 0, 3, 4, 0, 0),
                 bcast } };
    g_assert_cmphex(run1(c, in), ==, OK);
    get(c, 2, 0, o, sizeof(o));
    for (int i = 0; i < 12; i++) {
        g_assert_cmpfloat(o[i], ==, fmaxf(a[i], row[i % 4]));
    }
    core_stop(c);
}

/* bf16 stores round to nearest even through float32; NaN stays NaN. */
static void test_bf16_and_casts(void)
{
    Core *c = core_start();
    /* 1 + 2^-8 is a tie between 1 and 1 + 2^-7: it rounds to even (1). */
    float in_f[6] = { 1.0f + 1.0f / 256, 1.0f + 3.0f / 256, -2.5f, NAN,
                      INFINITY, 3.99999976f };
    uint16_t want_bf[6] = { 0x3f80, 0x3f82, 0xc020, 0x7fc0, 0x7f80, 0x4080 };
    int32_t want_i[6] = { 1, 1, -2, 0, INT32_MAX, 3 };
    uint16_t bf[6];
    int32_t iv[6];
    float back[6];

    put(c, 0, 0, in_f, sizeof(in_f));
    g_assert_cmphex(run1(c, (struct nisa_insn){ .opcode = NISA_INSN_COPY,
        .dst = tn(1, NISA_BF16, 0, 6, 0, 0, 0),
        .src = { tn(0, NISA_F32, 0, 6, 0, 0, 0) } }), ==, OK);
    get(c, 1, 0, bf, sizeof(bf));
    for (int i = 0; i < 6; i++) {
        g_assert_cmphex(bf[i], ==, want_bf[i]);
    }
    g_assert_cmphex(run1(c, (struct nisa_insn){ .opcode = NISA_INSN_COPY,
        .dst = tn(2, NISA_F32, 0, 6, 0, 0, 0),
        .src = { tn(1, NISA_BF16, 0, 6, 0, 0, 0) } }), ==, OK);
    get(c, 2, 0, back, sizeof(back));
    g_assert_cmpfloat(back[2], ==, -2.5f);
    g_assert(isnan(back[3]));
    g_assert_cmphex(run1(c, (struct nisa_insn){ .opcode = NISA_INSN_COPY,
        .dst = tn(3, NISA_I32, 0, 6, 0, 0, 0),
        .src = { tn(0, NISA_F32, 0, 6, 0, 0, 0) } }), ==, OK);
    get(c, 3, 0, iv, sizeof(iv));
    for (int i = 0; i < 6; i++) {
        g_assert_cmpint(iv[i], ==, want_i[i]);
    }
    /* FILL of an int64 tensor, and a strided (transposing) copy. */
    {
        int64_t l[4];
        float m[6] = { 1, 2, 3, 4, 5, 6 }, mt[6];
        struct nisa_tensor src = tn(0, NISA_F32, 0, 3, 2, 0, 0);

        g_assert_cmphex(run1(c, (struct nisa_insn){ .opcode = NISA_INSN_FILL,
            .scalar = f64bits(-7), .dst = tn(1, NISA_I64, 0, 4, 0, 0, 0) }),
            ==, OK);
        get(c, 1, 0, l, sizeof(l));
        g_assert_cmpint(l[3], ==, -7);
        put(c, 0, 0, m, sizeof(m));
        /* src viewed as the transpose of a 2x3 matrix */
        src.strides[0] = 1;
        src.strides[1] = 3;
        g_assert_cmphex(run1(c, (struct nisa_insn){ .opcode = NISA_INSN_COPY,
            .dst = tn(2, NISA_F32, 0, 3, 2, 0, 0), .src = { src } }), ==, OK);
        get(c, 2, 0, mt, sizeof(mt));
        g_assert_cmpfloat(mt[0], ==, 1);
        g_assert_cmpfloat(mt[1], ==, 4);
        g_assert_cmpfloat(mt[2], ==, 2);
        g_assert_cmpfloat(mt[5], ==, 6);
    }
    core_stop(c);
}

static void test_reduce_softmax(void)
{
    Core *c = core_start();
    enum { R = 5, C = 7 };
    float x[R * C], o[R * C];
    int64_t idx[C];

    randf(x, R * C, 3);
    x[2 * C + 3] = NAN;
    put(c, 0, 0, x, sizeof(x));

    /* sum along the last axis */
    g_assert_cmphex(run1(c, (struct nisa_insn){ .opcode = NISA_INSN_REDUCE,
        .subop = NISA_RED_SUM, .axis = -1, .dst = tn(1, NISA_F32, 0, R, 1, 0, 0),
        .src = { tn(0, NISA_F32, 0, R, C, 0, 0) } }), ==, OK);
    get(c, 1, 0, o, R * sizeof(float));
    for (int r = 0; r < R; r++) {
        double s = 0;

        for (int j = 0; j < C; j++) {
            s += x[r * C + j];
        }
        if (r == 2) {
            g_assert(isnan(o[r]));
        } else {
            g_assert_cmpfloat(o[r], ==, (float)s);
        }
    }
    /* max along axis 0: column 3 has a NaN, which propagates */
    g_assert_cmphex(run1(c, (struct nisa_insn){ .opcode = NISA_INSN_REDUCE,
        .subop = NISA_RED_MAX, .axis = 0, .dst = tn(1, NISA_F32, 0, 1, C, 0, 0),
        .src = { tn(0, NISA_F32, 0, R, C, 0, 0) } }), ==, OK);
    get(c, 1, 0, o, C * sizeof(float));
    for (int j = 0; j < C; j++) {
        float m = -INFINITY;

        for (int r = 0; r < R; r++) {
            m = fmaxf(m, x[r * C + j]);
        }
        if (j == 3) {
            g_assert(isnan(o[j]));
        } else {
            g_assert_cmpfloat(o[j], ==, m);
        }
    }
    /* argmax along axis 0: the first maximum; the NaN counts as the max */
    g_assert_cmphex(run1(c, (struct nisa_insn){ .opcode = NISA_INSN_REDUCE,
        .subop = NISA_RED_ARGMAX, .axis = 0, .dst = tn(1, NISA_I64, 0, 1, C, 0, 0),
        .src = { tn(0, NISA_F32, 0, R, C, 0, 0) } }), ==, OK);
    get(c, 1, 0, idx, sizeof(idx));
    g_assert_cmpint(idx[3], ==, 2);
    for (int j = 0; j < C; j++) {
        int best = 0;

        if (j == 3) {
            continue;
        }
        for (int r = 1; r < R; r++) {
            if (x[r * C + j] > x[best * C + j]) {
                best = r;
            }
        }
        g_assert_cmpint(idx[j], ==, best);
    }

    /* softmax and log-softmax along the last axis, without the NaN row */
    x[2 * C + 3] = 100; /* large: stability matters */
    put(c, 0, 0, x, sizeof(x));
    for (unsigned v = 0; v < NISA_NUM_SOFTMAX; v++) {
        g_assert_cmphex(run1(c, (struct nisa_insn){ .opcode = NISA_INSN_SOFTMAX,
            .subop = v, .axis = 1, .dst = tn(1, NISA_F32, 0, R, C, 0, 0),
            .src = { tn(0, NISA_F32, 0, R, C, 0, 0) } }), ==, OK);
        get(c, 1, 0, o, sizeof(o));
        for (int r = 0; r < R; r++) {
            double m = -INFINITY, s = 0;

            for (int j = 0; j < C; j++) {
                m = fmax(m, x[r * C + j]);
            }
            for (int j = 0; j < C; j++) {
                s += exp(x[r * C + j] - m);
            }
            for (int j = 0; j < C; j++) {
                double w = v == NISA_SM_SOFTMAX ? exp(x[r * C + j] - m) / s :
                           x[r * C + j] - m - log(s);

                g_assert(isfinite(o[r * C + j]));
                g_assert_cmpfloat_with_epsilon(o[r * C + j], w,
                                               1e-6 * fmax(1, fabs(w)));
            }
        }
    }
    core_stop(c);
}

static void ref_matmul(const float *a, const float *b, float *o, int M, int N,
                       int K, bool ta, bool tb)
{
    for (int i = 0; i < M; i++) {
        for (int j = 0; j < N; j++) {
            double s = 0;

            for (int k = 0; k < K; k++) {
                s += (double)(ta ? a[k * M + i] : a[i * K + k]) *
                     (tb ? b[j * K + k] : b[k * N + j]);
            }
            o[i * N + j] = (float)s;
        }
    }
}

static void test_matmul(void)
{
    Core *c = core_start();
    enum { B = 3, M = 17, N = 9, K = 33 };
    static float a[B * M * K], b[B * K * N], bias[N], o[B * M * N], w[M * N];

    randf(a, B * M * K, 4);
    randf(b, B * K * N, 5);
    randf(bias, N, 6);
    put(c, 0, 0, a, sizeof(a));
    put(c, 1, 0, b, sizeof(b));
    put(c, 3, 0, bias, sizeof(bias));

    for (int variant = 0; variant < 4; variant++) {
        bool ta = variant & 1, tb = variant & 2;
        struct nisa_tensor ta_t = tn(0, NISA_F32, 0, B, M, K, 0);
        struct nisa_tensor tb_t = tn(1, NISA_F32, 0, B, K, N, 0);

        /* A transposed operand: the memory holds A^T, strides swapped. */
        if (ta) {
            ta_t.strides[1] = 1;
            ta_t.strides[2] = M;
        }
        if (tb) {
            tb_t.strides[1] = 1;
            tb_t.strides[2] = K;
        }
        g_assert_cmphex(run1(c, (struct nisa_insn){ .opcode = NISA_INSN_MATMUL,
            .dst = tn(2, NISA_F32, 0, B, M, N, 0), .src = { ta_t, tb_t } }),
            ==, OK);
        get(c, 2, 0, o, sizeof(o));
        for (int bi = 0; bi < B; bi++) {
            ref_matmul(a + bi * M * K, b + bi * K * N, w, M, N, K, ta, tb);
            for (int i = 0; i < M * N; i++) {
                g_assert_cmpfloat_with_epsilon(o[bi * M * N + i], w[i], 1e-4);
            }
        }
    }

    /* bias broadcast over rows, then accumulate: o = 2 * (a@b) + bias */
    {
        struct nisa_tensor bt = tn(3, NISA_F32, 0, B, M, N, 0);

        bt.strides[0] = bt.strides[1] = 0;
        bt.strides[2] = 1;
        g_assert_cmphex(run1(c, (struct nisa_insn){ .opcode = NISA_INSN_MATMUL,
            .flags = NISA_IF_BIAS, .dst = tn(2, NISA_F32, 0, B, M, N, 0),
            .src = { tn(0, NISA_F32, 0, B, M, K, 0),
                     tn(1, NISA_F32, 0, B, K, N, 0), bt } }), ==, OK);
        g_assert_cmphex(run1(c, (struct nisa_insn){ .opcode = NISA_INSN_MATMUL,
            .flags = NISA_IF_ACCUMULATE, .dst = tn(2, NISA_F32, 0, B, M, N, 0),
            .src = { tn(0, NISA_F32, 0, B, M, K, 0),
                     tn(1, NISA_F32, 0, B, K, N, 0) } }), ==, OK);
        get(c, 2, 0, o, sizeof(o));
        ref_matmul(a, b, w, M, N, K, false, false);
        for (int i = 0; i < M * N; i++) {
            g_assert_cmpfloat_with_epsilon(o[i], 2 * w[i] + bias[i % N], 2e-4);
        }
    }

    /* bf16 operands and output: float32 accumulation, one rounding. */
    {
        uint16_t ab[4] = { 0x3f80, 0x4000, 0x4040, 0x4080 }; /* 1 2 3 4 */
        uint16_t ob[4];

        put(c, 0, 0, ab, sizeof(ab));
        g_assert_cmphex(run1(c, (struct nisa_insn){ .opcode = NISA_INSN_MATMUL,
            .dst = tn(2, NISA_BF16, 0, 2, 2, 0, 0),
            .src = { tn(0, NISA_BF16, 0, 2, 2, 0, 0),
                     tn(0, NISA_BF16, 0, 2, 2, 0, 0) } }), ==, OK);
        get(c, 2, 0, ob, sizeof(ob));
        /* [[1,2],[3,4]]^2 = [[7,10],[15,22]] */
        g_assert_cmphex(ob[0], ==, 0x40e0);
        g_assert_cmphex(ob[1], ==, 0x4120);
        g_assert_cmphex(ob[2], ==, 0x4170);
        g_assert_cmphex(ob[3], ==, 0x41b0);
    }
    core_stop(c);
}

/*
 * A product large enough to be shared between the card's threads (output
 * blocks taken as they come): odd sizes, a transposed operand, bias and
 * accumulation, a bf16 destination (through a tile); the same numbers, bit
 * for bit, as with one thread (blas-threads=1), and the reference's.
 */
static void matmul_shared_run(const char *props, const float *a,
                              const float *b, const float *bias, float *o,
                              uint16_t *ob, int B, int M, int N, int K)
{
    Core *c = core_start_with(props);
    struct nisa_tensor bt = tn(1, NISA_F32, 0, B, K, N, 0);
    struct nisa_tensor biast = tn(3, NISA_F32, 0, B, M, N, 0);
    size_t osz = sizeof(float) * B * M * N;

    /* B is stored transposed: [B, N, K] with the last two strides swapped. */
    bt.strides[1] = 1;
    bt.strides[2] = K;
    biast.strides[0] = 0;           /* one bias for every batch entry */
    put(c, 0, 0, a, sizeof(float) * B * M * K);
    put(c, 1, 0, b, sizeof(float) * B * K * N);
    put(c, 3, 0, bias, sizeof(float) * M * N);
    g_assert_cmphex(run1(c, (struct nisa_insn){ .opcode = NISA_INSN_MATMUL,
        .flags = NISA_IF_BIAS, .dst = tn(2, NISA_F32, 0, B, M, N, 0),
        .src = { tn(0, NISA_F32, 0, B, M, K, 0), bt, biast } }), ==, OK);
    g_assert_cmphex(run1(c, (struct nisa_insn){ .opcode = NISA_INSN_MATMUL,
        .flags = NISA_IF_ACCUMULATE, .dst = tn(2, NISA_F32, 0, B, M, N, 0),
        .src = { tn(0, NISA_F32, 0, B, M, K, 0), bt } }), ==, OK);
    get(c, 2, 0, o, osz);
    g_assert_cmphex(run1(c, (struct nisa_insn){ .opcode = NISA_INSN_MATMUL,
        .dst = tn(2, NISA_BF16, 0, B, M, N, 0),
        .src = { tn(0, NISA_F32, 0, B, M, K, 0), bt } }), ==, OK);
    get(c, 2, 0, ob, sizeof(uint16_t) * B * M * N);
    core_stop(c);
}

static void test_matmul_shared(void)
{
    enum { B = 2, M = 203, N = 301, K = 517 };
    g_autofree float *a = g_new(float, B * M * K);
    g_autofree float *b = g_new(float, B * K * N);
    g_autofree float *bias = g_new(float, M * N);
    g_autofree float *o1 = g_new(float, B * M * N);
    g_autofree float *o2 = g_new(float, B * M * N);
    g_autofree float *w = g_new(float, M * N);
    g_autofree uint16_t *ob1 = g_new(uint16_t, B * M * N);
    g_autofree uint16_t *ob2 = g_new(uint16_t, B * M * N);

    randf(a, B * M * K, 7);
    randf(b, B * K * N, 8);
    randf(bias, M * N, 9);
    matmul_shared_run("mem-size=64M,blas-threads=1", a, b, bias, o1, ob1,
                      B, M, N, K);
    matmul_shared_run("mem-size=64M,blas-threads=3", a, b, bias, o2, ob2,
                      B, M, N, K);
    g_assert_cmpmem(o1, sizeof(float) * B * M * N, o2,
                    sizeof(float) * B * M * N);
    g_assert_cmpmem(ob1, sizeof(uint16_t) * B * M * N, ob2,
                    sizeof(uint16_t) * B * M * N);
    for (int bi = 0; bi < B; bi++) {
        ref_matmul(a + bi * M * K, b + bi * K * N, w, M, N, K, false, true);
        for (int i = 0; i < M * N; i++) {
            g_assert_cmpfloat_with_epsilon(o2[bi * M * N + i],
                                           2 * w[i] + bias[i], 2e-3);
        }
    }
}

/*
 * Elementwise instructions of at least 2^18 elements are shared between
 * the card's threads in pieces (trn_iter_runs_shared()): an in-place add
 * with alpha, exp (the vector kernel), a subtraction of a broadcast row
 * from a transposed source and a bit copy give the same bits with one
 * thread and with three, and the add and the subtraction the reference's.
 */
enum { EWS_N = (1 << 19) - 37, EWS_R = 300, EWS_C = 1000 };

static void ew_shared_run(const char *props, const float *a, const float *b,
                          float *o0, float *o2, float *o3, float *o1)
{
    Core *c = core_start_with(props);
    struct nisa_tensor at = tn(0, NISA_F32, 0, EWS_R, EWS_C, 0, 0);
    struct nisa_tensor row = tn(1, NISA_F32, 0, EWS_R, EWS_C, 0, 0);

    put(c, 0, 0, a, sizeof(float) * EWS_N);
    put(c, 1, 0, b, sizeof(float) * EWS_N);
    /* slot 3 = a viewed as [C, R] transposed - b[0:C] broadcast over rows */
    at.strides[0] = 1;
    at.strides[1] = EWS_R;
    row.strides[0] = 0;
    g_assert_cmphex(run1(c, (struct nisa_insn){ .opcode = NISA_INSN_BINARY,
        .subop = NISA_BIN_SUB, .alpha = f64bits(1.0),
        .dst = tn(3, NISA_F32, 0, EWS_R, EWS_C, 0, 0), .src = { at, row } }), ==, OK);
    /* slot 2 = exp(b) */
    g_assert_cmphex(run1(c, (struct nisa_insn){ .opcode = NISA_INSN_UNARY,
        .subop = NISA_UN_EXP, .dst = tn(2, NISA_F32, 0, EWS_N, 0, 0, 0),
        .src = { tn(1, NISA_F32, 0, EWS_N, 0, 0, 0) } }), ==, OK);
    /* slot 0 += 2 * b, in place */
    g_assert_cmphex(run1(c, (struct nisa_insn){ .opcode = NISA_INSN_BINARY,
        .subop = NISA_BIN_ADD, .alpha = f64bits(2.0),
        .dst = tn(0, NISA_F32, 0, EWS_N, 0, 0, 0),
        .src = { tn(0, NISA_F32, 0, EWS_N, 0, 0, 0),
                 tn(1, NISA_F32, 0, EWS_N, 0, 0, 0) } }), ==, OK);
    /* slot 1 = the bits of slot 0, as int32, reversed (a negative stride) */
    {
        struct nisa_tensor rev = tn(0, NISA_I32, 4ull * (EWS_N - 1), EWS_N, 0, 0, 0);

        rev.strides[0] = -1;
        g_assert_cmphex(run1(c, (struct nisa_insn){ .opcode = NISA_INSN_COPY,
            .dst = tn(1, NISA_I32, 0, EWS_N, 0, 0, 0), .src = { rev } }), ==, OK);
    }
    get(c, 0, 0, o0, sizeof(float) * EWS_N);
    get(c, 1, 0, o1, sizeof(float) * EWS_N);
    get(c, 2, 0, o2, sizeof(float) * EWS_N);
    get(c, 3, 0, o3, sizeof(float) * EWS_R * EWS_C);
    core_stop(c);
}

static void test_elementwise_shared(void)
{
    g_autofree float *a = g_new(float, EWS_N);
    g_autofree float *b = g_new(float, EWS_N);
    float *o[2][4];

    randf(a, EWS_N, 11);
    randf(b, EWS_N, 12);
    for (int r = 0; r < 2; r++) {
        for (int i = 0; i < 4; i++) {
            o[r][i] = g_new(float, EWS_N);
        }
        ew_shared_run(r ? "mem-size=64M,blas-threads=3" : "mem-size=64M,blas-threads=1",
                      a, b, o[r][0], o[r][1], o[r][2], o[r][3]);
    }
    g_assert_cmpmem(o[0][0], sizeof(float) * EWS_N, o[1][0], sizeof(float) * EWS_N);
    g_assert_cmpmem(o[0][1], sizeof(float) * EWS_N, o[1][1], sizeof(float) * EWS_N);
    g_assert_cmpmem(o[0][2], sizeof(float) * EWS_R * EWS_C, o[1][2],
                    sizeof(float) * EWS_R * EWS_C);
    g_assert_cmpmem(o[0][3], sizeof(float) * EWS_N, o[1][3], sizeof(float) * EWS_N);
    for (int i = 0; i < EWS_N; i++) {
        float want = (float)((double)a[i] + 2.0 * (double)b[i]);

        g_assert_cmpmem(&o[1][0][i], 4, &want, 4);
        g_assert_cmpmem(&o[1][3][EWS_N - 1 - i], 4, &want, 4);
    }
    for (int i = 0; i < EWS_R; i++) {
        for (int j = 0; j < EWS_C; j++) {
            float want = a[j * EWS_R + i] - b[j];

            g_assert_cmpmem(&o[1][2][i * EWS_C + j], 4, &want, 4);
        }
    }
    for (int r = 0; r < 2; r++) {
        for (int i = 0; i < 4; i++) {
            g_free(o[r][i]);
        }
    }
}

static void test_gather_scatter(void)
{
    Core *c = core_start();
    enum { V = 6, E = 5, L = 4 };
    float table[V * E], o[L * E], acc[V * E];
    int64_t ids[L] = { 5, 0, 5, 2 };
    int32_t bad[2] = { 1, 6 };

    randf(table, V * E, 7);
    put(c, 0, 0, table, sizeof(table));
    put(c, 1, 0, ids, sizeof(ids));

    /* embedding lookup: index_select along axis 0 */
    g_assert_cmphex(run1(c, (struct nisa_insn){ .opcode = NISA_INSN_GATHER,
        .subop = NISA_IDX_SELECT, .axis = 0, .dst = tn(2, NISA_F32, 0, L, E, 0, 0),
        .src = { tn(0, NISA_F32, 0, V, E, 0, 0), tn(1, NISA_I64, 0, L, 0, 0, 0) } }),
        ==, OK);
    get(c, 2, 0, o, sizeof(o));
    for (int l = 0; l < L; l++) {
        g_assert_cmpmem(&o[l * E], E * 4, &table[ids[l] * E], E * 4);
    }
    /* its backward: index_add of ones rows into zeros; row 5 gets 2 */
    {
        float ones[L * E], zero[V * E] = { 0 };

        for (int i = 0; i < L * E; i++) {
            ones[i] = 1;
        }
        put(c, 2, 0, ones, sizeof(ones));
        put(c, 3, 0, zero, sizeof(zero));
        g_assert_cmphex(run1(c, (struct nisa_insn){ .opcode = NISA_INSN_SCATTER_ADD,
            .subop = NISA_IDX_SELECT, .axis = 0, .dst = tn(3, NISA_F32, 0, V, E, 0, 0),
            .src = { tn(2, NISA_F32, 0, L, E, 0, 0), tn(1, NISA_I64, 0, L, 0, 0, 0) } }),
            ==, OK);
        get(c, 3, 0, acc, sizeof(acc));
        g_assert_cmpfloat(acc[5 * E], ==, 2);
        g_assert_cmpfloat(acc[0], ==, 1);
        g_assert_cmpfloat(acc[1 * E], ==, 0);
        g_assert_cmpfloat(acc[2 * E + 4], ==, 1);
    }
    /* torch.gather along axis 1 (picking one element per row, as nll_loss) */
    {
        int64_t pick[V] = { 4, 0, 1, 2, 3, 4 };
        float got[V];

        put(c, 1, 0, pick, sizeof(pick));
        g_assert_cmphex(run1(c, (struct nisa_insn){ .opcode = NISA_INSN_GATHER,
            .subop = NISA_IDX_ELEMENT, .axis = 1, .dst = tn(2, NISA_F32, 0, V, 1, 0, 0),
            .src = { tn(0, NISA_F32, 0, V, E, 0, 0), tn(1, NISA_I64, 0, V, 1, 0, 0) } }),
            ==, OK);
        get(c, 2, 0, got, sizeof(got));
        for (int r = 0; r < V; r++) {
            g_assert_cmpfloat(got[r], ==, table[r * E + pick[r]]);
        }
    }
    /* An index out of range fails the instruction and writes nothing. */
    put(c, 1, 0, bad, sizeof(bad));
    memset(o, 0x5a, sizeof(o));
    put(c, 2, 0, o, sizeof(o));
    g_assert_cmphex(run1(c, (struct nisa_insn){ .opcode = NISA_INSN_GATHER,
        .subop = NISA_IDX_SELECT, .axis = 0, .dst = tn(2, NISA_F32, 0, 2, E, 0, 0),
        .src = { tn(0, NISA_F32, 0, V, E, 0, 0), tn(1, NISA_I32, 0, 2, 0, 0, 0) } }),
        ==, OK | NISA_ERR_BAD_INDEX);
    {
        float chk[2 * E];

        get(c, 2, 0, chk, sizeof(chk));
        g_assert_cmpmem(chk, sizeof(chk), o, sizeof(chk));
    }
    core_stop(c);
}

/* Every operand is confined to its slot, with its access rights. */
static void test_isolation(void)
{
    Core *c = core_start();
    struct nisa_tensor neg = tn(0, NISA_F32, 8, 4, 0, 0, 0);
    struct {
        const char *what;
        struct nisa_insn in;
        uint32_t err;
    } cases[] = {
        { "slot past the table", { .opcode = NISA_INSN_FILL,
          .dst = tn(9, NISA_F32, 0, 4, 0, 0, 0) }, NISA_ERR_BAD_SLOT },
        { "write to a read-only slot", { .opcode = NISA_INSN_FILL,
          .dst = tn(3, NISA_F32, 0, 4, 0, 0, 0) }, NISA_ERR_ACCESS },
        { "read from a write-only slot", { .opcode = NISA_INSN_COPY,
          .dst = tn(0, NISA_F32, 0, 4, 0, 0, 0),
          .src = { tn(2, NISA_F32, 0, 4, 0, 0, 0) } }, NISA_ERR_ACCESS },
        { "past the end of the slot", { .opcode = NISA_INSN_FILL,
          .dst = tn(0, NISA_F32, SLOT_SIZE - 8, 4, 0, 0, 0) }, NISA_ERR_SLOT_RANGE },
        { "huge offset", { .opcode = NISA_INSN_FILL,
          .dst = tn(0, NISA_F32, 1ull << 62, 4, 0, 0, 0) }, NISA_ERR_SLOT_RANGE },
        { "negative stride below the slot", { .opcode = NISA_INSN_FILL,
          .dst = neg }, NISA_ERR_SLOT_RANGE },
        { "misaligned offset", { .opcode = NISA_INSN_FILL,
          .dst = tn(0, NISA_F32, 2, 4, 0, 0, 0) }, NISA_ERR_BAD_INSN },
        { "unknown opcode", { .opcode = 200 }, NISA_ERR_BAD_INSN },
        /* (99 was unknown until CONJ took it: the first past the table.) */
        { "unknown unary", { .opcode = NISA_INSN_UNARY,
          .subop = NISA_NUM_UNARY,
          .dst = tn(0, NISA_F32, 0, 4, 0, 0, 0),
          .src = { tn(0, NISA_F32, 0, 4, 0, 0, 0) } }, NISA_ERR_BAD_INSN },
        { "shape mismatch", { .opcode = NISA_INSN_COPY,
          .dst = tn(0, NISA_F32, 0, 4, 0, 0, 0),
          .src = { tn(1, NISA_F32, 0, 5, 0, 0, 0) } }, NISA_ERR_BAD_INSN },
        { "bad dtype", { .opcode = NISA_INSN_FILL,
          .dst = tn(0, NISA_NUM_DTYPES, 0, 4, 0, 0, 0) }, NISA_ERR_BAD_INSN },
        { "reserved field", { .opcode = NISA_INSN_NOP, .rsvd = 1 },
          NISA_ERR_BAD_INSN },
        { "matmul shapes", { .opcode = NISA_INSN_MATMUL,
          .dst = tn(0, NISA_F32, 0, 2, 2, 0, 0),
          .src = { tn(1, NISA_F32, 0, 2, 3, 0, 0), tn(1, NISA_F32, 0, 2, 2, 0, 0) } },
          NISA_ERR_BAD_INSN },
        { "broadcast of 2^60 elements", { .opcode = NISA_INSN_FILL,
          .dst = { .slot = 0, .ndim = 4, .shape = { 1u << 15, 1u << 15, 1u << 15, 1u << 15 } } },
          NISA_ERR_BAD_INSN },
    };
    float guard[4] = { 1, 2, 3, 4 }, back[4];

    neg.strides[0] = -4; /* 4 elements going down from byte 8: to -4 */
    cases[5].in.dst = neg;
    c->slots[2].access = NISA_ACCESS_WRITE;
    c->slots[3].access = NISA_ACCESS_READ;
    put(c, 0, 0, guard, sizeof(guard));
    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        g_test_message("%s", cases[i].what);
        g_assert_cmphex(run1(c, cases[i].in), ==, OK | cases[i].err);
    }
    get(c, 0, 0, back, sizeof(back));
    g_assert_cmpmem(back, sizeof(back), guard, sizeof(guard));
    core_stop(c);
}

/* LAUNCH descriptor errors; the queue keeps working after each. */
static void test_launch_errors(void)
{
    Core *c = core_start();
    struct nisa_insn nop = { .opcode = NISA_INSN_NOP };
    struct nhw_launch_desc d;

    qpci_memwrite(c->t->dev, c->t->mem, CODE_OFF, &nop, sizeof(nop));
    qtest_memwrite(c->t->qts, c->table, c->slots, sizeof(c->slots));
    d = (struct nhw_launch_desc){ .op = NHW_OP_LAUNCH, .nslots = 4,
        .code_len = sizeof(nop) + 1, .table_addr = c->table };
    g_assert_cmphex(submit_q(c->t, c->q, &d), ==, OK | NISA_ERR_BAD_DESC);
    d.code_len = sizeof(nop);
    d.code_off = MEM_SIZE - 100;
    g_assert_cmphex(submit_q(c->t, c->q, &d), ==, OK | NISA_ERR_DEV_RANGE);
    d.code_off = 0;
    d.nslots = NHW_MAX_SLOTS + 1;
    g_assert_cmphex(submit_q(c->t, c->q, &d), ==, OK | NISA_ERR_BAD_DESC);
    d.nslots = 4;
    d.table_addr = 0xfffffff00000ull;
    g_assert_cmphex(submit_q(c->t, c->q, &d), ==, OK | NISA_ERR_HOST_DMA);
    /* The table in the card's own BAR2: not host memory. */
    d.table_addr = c->t->mem.addr;
    g_assert_cmphex(submit_q(c->t, c->q, &d), ==, OK | NISA_ERR_HOST_DMA);
    /* An empty kernel: its table is still checked. */
    d.table_addr = c->table;
    d.code_len = 0;
    g_assert_cmphex(submit_q(c->t, c->q, &d), ==, OK);
    c->slots[2].rsvd = 1;
    qtest_memwrite(c->t->qts, c->table, c->slots, sizeof(c->slots));
    g_assert_cmphex(submit_q(c->t, c->q, &d), ==, OK | NISA_ERR_BAD_DESC);
    c->slots[2].rsvd = 0;
    c->slots[2].access = 4;
    qtest_memwrite(c->t->qts, c->table, c->slots, sizeof(c->slots));
    g_assert_cmphex(submit_q(c->t, c->q, &d), ==, OK | NISA_ERR_BAD_DESC);
    c->slots[2].access = NISA_ACCESS_READ | NISA_ACCESS_WRITE;
    qtest_memwrite(c->t->qts, c->table, c->slots, sizeof(c->slots));
    d.code_len = sizeof(nop);
    /* More than 65536 instructions (checked before the code's range). */
    d.code_len = (NISA_MAX_INSNS + 1ull) * sizeof(nop);
    g_assert_cmphex(submit_q(c->t, c->q, &d), ==, OK | NISA_ERR_BAD_DESC);
    d.code_len = sizeof(nop);
    d.rsvd[1] = 1;
    g_assert_cmphex(submit_q(c->t, c->q, &d), ==, OK | NISA_ERR_BAD_DESC);
    d.rsvd[1] = 0;
    /* A slot beyond device memory. */
    c->slots[1].base = MEM_SIZE - 4096;
    c->slots[1].size = 8192;
    qtest_memwrite(c->t->qts, c->table, c->slots, sizeof(c->slots));
    g_assert_cmphex(submit_q(c->t, c->q, &d), ==, OK | NISA_ERR_DEV_RANGE);
    c->slots[1].size = 4096;
    qtest_memwrite(c->t->qts, c->table, c->slots, sizeof(c->slots));
    g_assert_cmphex(submit_q(c->t, c->q, &d), ==, OK);
    /* A COPY descriptor on a core queue is the wrong opcode. */
    {
        struct nhw_copy_desc cp = { .op = NHW_OP_COPY };

        g_assert_cmphex(submit_q(c->t, c->q, &cp), ==, OK | NISA_ERR_BAD_OP);
    }
    core_stop(c);
}

/* A queue reset during a long kernel abandons it; the core works after. */
static void test_reset_while_running(void)
{
    Core *c = core_start();
    enum { N = 400 };
    g_autofree struct nisa_insn *k = g_new0(struct nisa_insn, N);
    struct nhw_launch_desc d = { .op = NHW_OP_LAUNCH, .nslots = 4,
        .code_len = N * sizeof(*k), .table_addr = c->table };
    uint32_t slot;

    for (int i = 0; i < N; i++) {
        k[i] = (struct nisa_insn){ .opcode = NISA_INSN_MATMUL,
            .dst = tn(2, NISA_F32, 0, 256, 256, 0, 0),
            .src = { tn(0, NISA_F32, 0, 256, 256, 0, 0),
                     tn(1, NISA_F32, 0, 256, 256, 0, 0) } };
    }
    qpci_memwrite(c->t->dev, c->t->mem, CODE_OFF, k, N * sizeof(*k));
    qtest_memwrite(c->t->qts, c->table, c->slots, sizeof(c->slots));
    slot = post_q(c->t, c->q, &d);
    wait_qreg(c->t, c->q, NHW_QREG_STATUS, NHW_QSTATUS_BUSY, NHW_QSTATUS_BUSY);
    qwr(c->t, c->q, NHW_QREG_CTRL, NHW_QCTRL_RESET);
    g_assert_cmphex(qrd(c->t, c->q, NHW_QREG_STATUS), ==, 0);
    g_assert_cmphex(desc_status_q(c->t, c->q, slot), ==, 0);
    ring_setup_q(c->t, c->q);
    g_assert_cmphex(run1(c, (struct nisa_insn){ .opcode = NISA_INSN_NOP }), ==, OK);
    core_stop(c);
}

/*
 * A LAUNCH whose instruction fails names it: the index written back next
 * to the status word, whatever the submitter left there; NHW_INSN_NONE
 * when no instruction failed.
 */
static void test_error_insn(void)
{
    Core *c = core_start();
    int32_t bad[2] = { 1, 6 };
    float x[8] = { 1, 2, 3, 4, 5, 6, 7, 8 }, y[8];
    struct nisa_insn k[4] = {
        { .opcode = NISA_INSN_NOP },
        { .opcode = NISA_INSN_UNARY, .subop = NISA_UN_NEG,
          .dst = tn(3, NISA_F32, 0, 8, 0, 0, 0),
          .src = { tn(3, NISA_F32, 0, 8, 0, 0, 0) } },
        /* The third instruction: index 6 of an axis of 6. */
        { .opcode = NISA_INSN_GATHER, .subop = NISA_IDX_SELECT, .axis = 0,
          .dst = tn(2, NISA_F32, 0, 2, 5, 0, 0),
          .src = { tn(0, NISA_F32, 0, 6, 5, 0, 0),
                   tn(1, NISA_I32, 0, 2, 0, 0, 0) } },
        { .opcode = NISA_INSN_UNARY, .subop = NISA_UN_NEG,
          .dst = tn(3, NISA_F32, 0, 8, 0, 0, 0),
          .src = { tn(3, NISA_F32, 0, 8, 0, 0, 0) } },
    };
    struct nhw_launch_desc d = { .op = NHW_OP_LAUNCH, .nslots = 4,
        .code_len = sizeof(k), .table_addr = c->table,
        .err_insn = 12345 };
    uint32_t slot;

    put(c, 1, 0, bad, sizeof(bad));
    put(c, 3, 0, x, sizeof(x));
    qpci_memwrite(c->t->dev, c->t->mem, CODE_OFF, k, sizeof(k));
    qtest_memwrite(c->t->qts, c->table, c->slots, sizeof(c->slots));
    slot = post_q(c->t, c->q, &d);
    wait_qreg(c->t, c->q, NHW_QREG_HEAD, ~0u, c->t->tail[c->q]);
    g_assert_cmphex(desc_status_q(c->t, c->q, slot), ==, OK | NISA_ERR_BAD_INDEX);
    g_assert_cmpuint(desc_err_insn_q(c->t, c->q, slot), ==, 2);
    /* The instructions before it ran, the one after it did not. */
    get(c, 3, 0, y, sizeof(y));
    g_assert_cmpfloat(y[0], ==, -1);
    g_assert_cmpfloat(y[7], ==, -8);

    /* The first instruction failing is index 0. */
    qpci_memwrite(c->t->dev, c->t->mem, CODE_OFF, &k[2], sizeof(k[2]));
    d.code_len = sizeof(k[2]);
    slot = post_q(c->t, c->q, &d);
    wait_qreg(c->t, c->q, NHW_QREG_HEAD, ~0u, c->t->tail[c->q]);
    g_assert_cmphex(desc_status_q(c->t, c->q, slot), ==, OK | NISA_ERR_BAD_INDEX);
    g_assert_cmpuint(desc_err_insn_q(c->t, c->q, slot), ==, 0);

    /* Success, a bad descriptor, the fault hook: no instruction failed. */
    bad[1] = 5;
    put(c, 1, 0, bad, sizeof(bad));
    slot = post_q(c->t, c->q, &d);
    wait_qreg(c->t, c->q, NHW_QREG_HEAD, ~0u, c->t->tail[c->q]);
    g_assert_cmphex(desc_status_q(c->t, c->q, slot), ==, OK);
    g_assert_cmphex(desc_err_insn_q(c->t, c->q, slot), ==, NHW_INSN_NONE);
    d.rsvd[0] = 1;
    slot = post_q(c->t, c->q, &d);
    wait_qreg(c->t, c->q, NHW_QREG_HEAD, ~0u, c->t->tail[c->q]);
    g_assert_cmphex(desc_status_q(c->t, c->q, slot), ==, OK | NISA_ERR_BAD_DESC);
    g_assert_cmphex(desc_err_insn_q(c->t, c->q, slot), ==, NHW_INSN_NONE);
    d.rsvd[0] = 0;
    qwr(c->t, c->q, NHW_QREG_FAULT, NHW_FAULT_FAIL_NEXT);
    slot = post_q(c->t, c->q, &d);
    wait_qreg(c->t, c->q, NHW_QREG_HEAD, ~0u, c->t->tail[c->q]);
    g_assert_cmphex(desc_status_q(c->t, c->q, slot), ==, OK | NISA_ERR_INJECTED);
    g_assert_cmphex(desc_err_insn_q(c->t, c->q, slot), ==, NHW_INSN_NONE);
    core_stop(c);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/trainium/core/elementwise", test_elementwise);
    qtest_add_func("/trainium/core/broadcast-compare-where",
                   test_broadcast_compare_where);
    qtest_add_func("/trainium/core/bf16-and-casts", test_bf16_and_casts);
    qtest_add_func("/trainium/core/integer-exact", test_integer_exact);
    qtest_add_func("/trainium/core/reduce-softmax", test_reduce_softmax);
    qtest_add_func("/trainium/core/matmul", test_matmul);
    qtest_add_func("/trainium/core/matmul-shared", test_matmul_shared);
    qtest_add_func("/trainium/core/elementwise-shared", test_elementwise_shared);
    qtest_add_func("/trainium/core/gather-scatter", test_gather_scatter);
    qtest_add_func("/trainium/core/isolation", test_isolation);
    qtest_add_func("/trainium/core/launch-errors", test_launch_errors);
    qtest_add_func("/trainium/core/error-insn", test_error_insn);
    qtest_add_func("/trainium/core/reset-while-running",
                   test_reset_while_running);
    return g_test_run();
}

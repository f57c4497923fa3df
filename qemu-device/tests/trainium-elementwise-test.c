/*
 * qtest for the elementwise functions of the ISA's tables
 * (isa/neuron_isa.h): each function on known values -- ties, signed
 * zeros, NaN and the infinities -- its parameters, the predicates' bool
 * results, the integer forms' exactness, and the refusal of a bitwise
 * function on floating operands.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "trainium-core-qtest.h"

typedef struct Case {
    unsigned fn;
    double p, q;
    float x, want;
} Case;

/* One UNARY on one F32 element; the result's bits must be want's. */
static float unary1(Core *c, unsigned fn, double p, double q, float x)
{
    float o = 12345;
    struct nisa_insn in = { .opcode = NISA_INSN_UNARY, .subop = fn,
        .scalar = f64bits(p), .alpha = f64bits(q),
        .dst = tn(1, NISA_F32, 0, 1, 0, 0, 0),
        .src = { tn(0, NISA_F32, 0, 1, 0, 0, 0) } };

    put(c, 0, 0, &x, 4);
    g_assert_cmphex(run1(c, in), ==, OK);
    get(c, 1, 0, &o, 4);
    return o;
}

static void same_bits(float got, float want, const char *what, float x)
{
    if (isnan(want) ? !isnan(got) : memcmp(&got, &want, 4) != 0) {
        g_error("%s(%a): got %a, want %a", what, x, got, want);
    }
}

static void test_unary_values(void)
{
    Core *c = core_start();
    const Case cases[] = {
        { NISA_UN_ROUND, 0, 0, 2.5f, 2.0f }, { NISA_UN_ROUND, 0, 0, 3.5f, 4.0f },
        { NISA_UN_ROUND, 0, 0, -0.5f, -0.0f }, { NISA_UN_ROUND, 0, 0, -1.5f, -2.0f },
        { NISA_UN_ROUND, 0, 0, 0.49999997f, 0.0f },
        { NISA_UN_ROUND, 0, 0, INFINITY, INFINITY },
        { NISA_UN_ROUND_DEC, 2, 0, 0.125f, 0.12f },
        { NISA_UN_ROUND_DEC, -1, 0, 25.0f, 20.0f },
        { NISA_UN_ROUND_DEC, -1, 0, 35.0f, 40.0f },
        { NISA_UN_CEIL, 0, 0, -0.5f, -0.0f }, { NISA_UN_CEIL, 0, 0, 1.25f, 2.0f },
        { NISA_UN_TRUNC, 0, 0, -2.75f, -2.0f }, { NISA_UN_TRUNC, 0, 0, -0.25f, -0.0f },
        { NISA_UN_FRAC, 0, 0, -2.75f, -0.75f }, { NISA_UN_FRAC, 0, 0, INFINITY, NAN },
        { NISA_UN_EXPM1, 0, 0, 1e-10f, 1e-10f }, { NISA_UN_EXPM1, 0, 0, -0.0f, -0.0f },
        { NISA_UN_LOG1P, 0, 0, 1e-10f, 1e-10f }, { NISA_UN_LOG1P, 0, 0, -1.0f, -INFINITY },
        { NISA_UN_LOG2, 0, 0, 8.0f, 3.0f }, { NISA_UN_LOG10, 0, 0, 1000.0f, 3.0f },
        { NISA_UN_TAN, 0, 0, 0.5f, (float)tan(0.5f) },
        { NISA_UN_ASIN, 0, 0, 1.0f, (float)M_PI_2 }, { NISA_UN_ASIN, 0, 0, 1.5f, NAN },
        { NISA_UN_ACOS, 0, 0, -1.0f, (float)M_PI }, { NISA_UN_ATAN, 0, 0, INFINITY, (float)M_PI_2 },
        { NISA_UN_SINH, 0, 0, 1.0f, (float)sinh(1.0) },
        { NISA_UN_COSH, 0, 0, -1.0f, (float)cosh(1.0) },
        { NISA_UN_ASINH, 0, 0, -2.0f, (float)asinh(-2.0) },
        { NISA_UN_ACOSH, 0, 0, 1.0f, 0.0f }, { NISA_UN_ACOSH, 0, 0, 0.5f, NAN },
        { NISA_UN_ATANH, 0, 0, 1.0f, INFINITY }, { NISA_UN_ATANH, 0, 0, -0.0f, -0.0f },
        { NISA_UN_ERFC, 0, 0, 5.0f, (float)erfc(5.0) },
        { NISA_UN_ERFINV, 0, 0, 0.5f, 0.47693627620446987f },
        { NISA_UN_ERFINV, 0, 0, 1.0f, INFINITY }, { NISA_UN_ERFINV, 0, 0, 1.5f, NAN },
        { NISA_UN_LGAMMA, 0, 0, 5.0f, (float)log(24.0) },
        { NISA_UN_LGAMMA, 0, 0, 0.0f, INFINITY },
        { NISA_UN_HARDSWISH, 0, 0, 1.0f, (float)(4.0 / 6) },
        { NISA_UN_HARDSWISH, 0, 0, -4.0f, -0.0f }, { NISA_UN_HARDSWISH, 0, 0, NAN, NAN },
        { NISA_UN_HARDSWISH_GRAD, 0, 0, 1.5f, 1.0f },
        { NISA_UN_HARDSWISH_GRAD, 0, 0, 4.0f, 1.0f },
        { NISA_UN_HARDSIGMOID, 0, 0, 0.0f, 0.5f }, { NISA_UN_HARDSIGMOID, 0, 0, 9.0f, 1.0f },
        { NISA_UN_HARDSIGMOID_GRAD, 0, 0, 1.0f, (float)(1.0 / 6) },
        { NISA_UN_HARDSIGMOID_GRAD, 0, 0, 3.0f, 0.0f },
        { NISA_UN_MISH, 0, 0, 1.0f, (float)tanh(log1p(exp(1.0))) },
        { NISA_UN_MISH, 0, 0, 100.0f, 100.0f },
        { NISA_UN_LOG_SIGMOID, 0, 0, 0.0f, (float)-M_LN2 },
        { NISA_UN_LOG_SIGMOID, 0, 0, -200.0f, -200.0f },
        { NISA_UN_LOG_SIGMOID_GRAD, 0, 0, 0.0f, 0.5f },
        { NISA_UN_ELU, 2, 3, -1.0f, (float)(2 * expm1(-1.0)) },
        { NISA_UN_ELU, 2, 3, 2.0f, 6.0f },
        { NISA_UN_ELU_GRAD, 2, 3, -1.0f, (float)(2 * exp(-1.0)) },
        { NISA_UN_ELU_GRAD, 2, 3, 1.0f, 3.0f },
        { NISA_UN_CELU, 2, 0.5, -1.0f, (float)(2 * expm1(-0.5)) },
        { NISA_UN_CELU_GRAD, 2, 0.5, -1.0f, (float)exp(-0.5) },
        { NISA_UN_LEAKY_RELU, 0.1, 0, -2.0f, -0.2f },
        { NISA_UN_LEAKY_RELU, 0.1, 0, 2.0f, 2.0f },
        { NISA_UN_LEAKY_RELU_GRAD, 0.1, 0, -2.0f, 0.1f },
        { NISA_UN_SOFTPLUS, 1, 20, 0.0f, (float)M_LN2 },
        { NISA_UN_SOFTPLUS, 2, 20, 30.0f, 30.0f },
        { NISA_UN_SOFTPLUS, 2, 20, 1.0f, (float)(log1p(exp(2.0)) / 2) },
        { NISA_UN_SOFTPLUS_GRAD, 2, 20, 0.0f, 0.5f },
        { NISA_UN_HARDSHRINK, 0.5, 0, 0.3f, 0.0f }, { NISA_UN_HARDSHRINK, 0.5, 0, -0.7f, -0.7f },
        { NISA_UN_SOFTSHRINK, 0.5, 0, 0.75f, 0.25f },
        { NISA_UN_SOFTSHRINK, 0.5, 0, -0.75f, -0.25f },
        { NISA_UN_SOFTSHRINK, 0.5, 0, NAN, NAN },
        { NISA_UN_SHRINK_GRAD, 0.5, 0, 0.5f, 0.0f }, { NISA_UN_SHRINK_GRAD, 0.5, 0, 0.6f, 1.0f },
        { NISA_UN_ISNAN, 0, 0, NAN, 1.0f }, { NISA_UN_ISNAN, 0, 0, INFINITY, 0.0f },
        { NISA_UN_ISINF, 0, 0, -INFINITY, 1.0f }, { NISA_UN_ISPOSINF, 0, 0, -INFINITY, 0.0f },
        { NISA_UN_ISNEGINF, 0, 0, -INFINITY, 1.0f }, { NISA_UN_ISFINITE, 0, 0, NAN, 0.0f },
        { NISA_UN_ISFINITE, 0, 0, 3.0f, 1.0f }, { NISA_UN_SIGNBIT, 0, 0, -0.0f, 1.0f },
        { NISA_UN_SIGNBIT, 0, 0, 0.0f, 0.0f }, { NISA_UN_LOGICAL_NOT, 0, 0, NAN, 0.0f },
        { NISA_UN_LOGICAL_NOT, 0, 0, -0.0f, 1.0f },
    };

    /* erfinv inverts erf to within the rounding of its float result */
    for (float y = -0.9999f; y < 1.0f; y += 0.0731f) {
        double x = unary1(c, NISA_UN_ERFINV, 0, 0, y);
        double slope = 2 / sqrt(M_PI) * exp(-x * x);

        g_assert_cmpfloat(fabs(erf(x) - y), <=, slope * fabs(x) * 0x1p-24 + 1e-12);
    }

    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        char what[32];

        snprintf(what, sizeof(what), "unary %u", cases[i].fn);
        same_bits(unary1(c, cases[i].fn, cases[i].p, cases[i].q, cases[i].x),
                  cases[i].want, what, cases[i].x);
    }
    core_stop(c);
}

/* A predicate writes 0/1 bytes into a bool destination. */
static void test_predicate_bool(void)
{
    Core *c = core_start();
    float x[6] = { NAN, INFINITY, -INFINITY, -0.0f, 1.0f, -2.0f };
    uint8_t o[6];
    const struct { unsigned fn; uint8_t want[6]; } cases[] = {
        { NISA_UN_ISNAN, { 1, 0, 0, 0, 0, 0 } },
        { NISA_UN_ISINF, { 0, 1, 1, 0, 0, 0 } },
        { NISA_UN_ISFINITE, { 0, 0, 0, 1, 1, 1 } },
        { NISA_UN_SIGNBIT, { 0, 0, 1, 1, 0, 1 } },
    };

    put(c, 0, 0, x, sizeof(x));
    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        struct nisa_insn in = { .opcode = NISA_INSN_UNARY, .subop = cases[i].fn,
            .dst = tn(1, NISA_BOOL, 0, 6, 0, 0, 0),
            .src = { tn(0, NISA_F32, 0, 6, 0, 0, 0) } };

        g_assert_cmphex(run1(c, in), ==, OK);
        get(c, 1, 0, o, sizeof(o));
        g_assert_cmpmem(o, sizeof(o), cases[i].want, sizeof(o));
    }
    core_stop(c);
}

static void binary_f32(Core *c, unsigned op, const float *x, const float *y,
                       float *o, unsigned n)
{
    struct nisa_insn in = { .opcode = NISA_INSN_BINARY, .subop = op,
        .alpha = f64bits(1.0), .dst = tn(2, NISA_F32, 0, n, 0, 0, 0),
        .src = { tn(0, NISA_F32, 0, n, 0, 0, 0), tn(1, NISA_F32, 0, n, 0, 0, 0) } };

    put(c, 0, 0, x, n * 4);
    put(c, 1, 0, y, n * 4);
    g_assert_cmphex(run1(c, in), ==, OK);
    get(c, 2, 0, o, n * 4);
}

static void test_binary_values(void)
{
    Core *c = core_start();
    const struct { unsigned op; float x, y, want; } cases[] = {
        { NISA_BIN_FMOD, -7.0f, 2.0f, -1.0f }, { NISA_BIN_FMOD, 7.0f, -2.0f, 1.0f },
        { NISA_BIN_FMOD, -4.0f, 2.0f, -0.0f }, { NISA_BIN_FMOD, 1.0f, 0.0f, NAN },
        { NISA_BIN_FMOD, 5.5f, INFINITY, 5.5f },
        { NISA_BIN_DIV_TRUNC, -7.0f, 2.0f, -3.0f }, { NISA_BIN_DIV_TRUNC, 1.0f, -4.0f, -0.0f },
        { NISA_BIN_DIV_TRUNC, 1.0f, 0.0f, INFINITY },
        { NISA_BIN_ATAN2, 1.0f, -1.0f, (float)(3 * M_PI_4) },
        { NISA_BIN_ATAN2, -0.0f, -1.0f, (float)-M_PI },
        { NISA_BIN_HYPOT, 3.0f, 4.0f, 5.0f }, { NISA_BIN_HYPOT, NAN, INFINITY, INFINITY },
        { NISA_BIN_COPYSIGN, 2.0f, -0.0f, -2.0f }, { NISA_BIN_COPYSIGN, -2.0f, NAN, 2.0f },
        { NISA_BIN_LOGADDEXP, 0.0f, 0.0f, (float)M_LN2 },
        { NISA_BIN_LOGADDEXP, INFINITY, INFINITY, INFINITY },
        { NISA_BIN_LOGADDEXP, -INFINITY, -INFINITY, -INFINITY },
        { NISA_BIN_LOGADDEXP, 1000.0f, 0.0f, 1000.0f },
        { NISA_BIN_LOGADDEXP, NAN, INFINITY, NAN },
        { NISA_BIN_LOGADDEXP2, 3.0f, 3.0f, 4.0f },
        { NISA_BIN_XLOGY, 0.0f, 0.0f, 0.0f }, { NISA_BIN_XLOGY, 0.0f, NAN, NAN },
        { NISA_BIN_XLOGY, 2.0f, 8.0f, (float)(2 * log(8.0)) },
    };
    float x[ARRAY_SIZE(cases)], y[ARRAY_SIZE(cases)], o[ARRAY_SIZE(cases)];

    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        x[i] = cases[i].x;
        y[i] = cases[i].y;
        binary_f32(c, cases[i].op, &x[i], &y[i], &o[i], 1);
        same_bits(o[i], cases[i].want, "binary", x[i]);
    }
    core_stop(c);
}

/*
 * Integer division by zero (div, div_trunc, floor-divide, remainder,
 * fmod): DIV_ZERO, nothing written -- a divisor tensor with a 0, a scalar
 * 0, the divisor on the left (REVERSE), an I32 one broadcast; a float
 * division by zero is IEEE's, no error.
 */
static void test_integer_div_zero(void)
{
    Core *c = core_start();
    const int32_t x[4] = { 7, -7, 3, 0 }, y[4] = { 2, 0, 5, 1 };
    const unsigned ops[] = { NISA_BIN_DIV, NISA_BIN_DIV_TRUNC, NISA_BIN_FLOORDIV,
                             NISA_BIN_REM, NISA_BIN_FMOD };
    int32_t keep[4] = { 11, 12, 13, 14 }, o[4];
    float f[2] = { 1, 0 }, fo[2];

    put(c, 0, 0, x, sizeof(x));
    put(c, 1, 0, y, sizeof(y));
    for (size_t i = 0; i < ARRAY_SIZE(ops); i++) {
        struct nisa_insn in = { .opcode = NISA_INSN_BINARY, .subop = ops[i],
            .alpha = f64bits(1.0), .dst = tn(2, NISA_I32, 0, 4, 0, 0, 0),
            .src = { tn(0, NISA_I32, 0, 4, 0, 0, 0), tn(1, NISA_I32, 0, 4, 0, 0, 0) } };

        g_test_message("binary %u", ops[i]);
        put(c, 2, 0, keep, sizeof(keep));
        g_assert_cmphex(run1(c, in), ==, OK | NISA_ERR_DIV_ZERO);
        in.flags = NISA_IF_REVERSE;         /* y / x: x[3] is 0 */
        g_assert_cmphex(run1(c, in), ==, OK | NISA_ERR_DIV_ZERO);
        in.flags = NISA_IF_SCALAR;          /* x / 0 */
        in.src[1] = (struct nisa_tensor){ 0 };
        in.scalar = f64bits(0.0);
        g_assert_cmphex(run1(c, in), ==, OK | NISA_ERR_DIV_ZERO);
        get(c, 2, 0, o, sizeof(o));
        g_assert_cmpmem(o, sizeof(o), keep, sizeof(keep));
        in.scalar = f64bits(2.0);           /* a non-zero scalar runs */
        g_assert_cmphex(run1(c, in), ==, OK);
        in.flags = NISA_IF_SCALAR | NISA_IF_REVERSE;  /* 2 / x: x[3] is 0 */
        g_assert_cmphex(run1(c, in), ==, OK | NISA_ERR_DIV_ZERO);
    }
    /* a broadcast divisor (stride 0) of 0 */
    put(c, 1, 12, &x[3], 4);
    g_assert_cmphex(run1(c, (struct nisa_insn){ .opcode = NISA_INSN_BINARY,
        .subop = NISA_BIN_FLOORDIV, .alpha = f64bits(1.0),
        .dst = tn(2, NISA_I32, 0, 4, 0, 0, 0),
        .src = { tn(0, NISA_I32, 0, 4, 0, 0, 0),
                 { .slot = 1, .dtype = NISA_I32, .offset = 12, .ndim = 1,
                   .shape = { 4 }, .strides = { 0 } } } }), ==,
        OK | NISA_ERR_DIV_ZERO);
    /* floats: 1 / 0 is inf, no error */
    put(c, 0, 0, f, sizeof(f));
    g_assert_cmphex(run1(c, (struct nisa_insn){ .opcode = NISA_INSN_BINARY,
        .subop = NISA_BIN_DIV, .alpha = f64bits(1.0), .flags = NISA_IF_REVERSE,
        .dst = tn(2, NISA_F32, 0, 2, 0, 0, 0),
        .src = { tn(0, NISA_F32, 0, 2, 0, 0, 0), tn(0, NISA_F32, 0, 2, 0, 0, 0) } }),
        ==, OK);
    get(c, 2, 0, fo, sizeof(fo));
    g_assert(fo[0] == 1 && isnan(fo[1]));
    core_stop(c);
}

/* Integer forms: exact on int64, I32 results wrapped. */
static void test_integer_forms(void)
{
    Core *c = core_start();
    const int64_t x[] = { -7, 7, -7, INT64_MIN, 5, -1, 1, -8 };
    const int64_t y[] = { 2, -2, 4, -1, 3, 63, 64, -1 };
    const struct { unsigned op; int64_t want[8]; } cases[] = {
        { NISA_BIN_FMOD, { -1, 1, -3, 0, 2, -1, 1, 0 } },
        { NISA_BIN_DIV_TRUNC, { -3, -3, -1, INT64_MIN, 1, 0, 0, 8 } },
        { NISA_BIN_FLOORDIV, { -4, -4, -2, INT64_MIN, 1, -1, 0, 8 } },
        { NISA_BIN_SHL, { -28, 0, -112, 0, 40, INT64_MIN, 0, 0 } },
        { NISA_BIN_SHR, { -2, 0, -1, -1, 0, -1, 0, -1 } },
    };
    int64_t o[8];

    put(c, 0, 0, x, sizeof(x));
    put(c, 1, 0, y, sizeof(y));
    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        struct nisa_insn in = { .opcode = NISA_INSN_BINARY, .subop = cases[i].op,
            .alpha = f64bits(1.0), .dst = tn(2, NISA_I64, 0, 8, 0, 0, 0),
            .src = { tn(0, NISA_I64, 0, 8, 0, 0, 0), tn(1, NISA_I64, 0, 8, 0, 0, 0) } };

        g_test_message("binary %u", cases[i].op);
        g_assert_cmphex(run1(c, in), ==, OK);
        get(c, 2, 0, o, sizeof(o));
        g_assert_cmpmem(o, sizeof(o), cases[i].want, sizeof(o));
    }

    /* round/ceil/trunc keep an integer beyond 2^53 exactly */
    for (unsigned fn = NISA_UN_CEIL; fn <= NISA_UN_TRUNC; fn++) {
        int64_t big = (1LL << 62) + 1, r = 0;
        struct nisa_insn in = { .opcode = NISA_INSN_UNARY, .subop = fn,
            .dst = tn(2, NISA_I64, 0, 1, 0, 0, 0),
            .src = { tn(0, NISA_I64, 0, 1, 0, 0, 0) } };

        if (fn == NISA_UN_ROUND_DEC) {
            continue;
        }
        put(c, 0, 0, &big, 8);
        g_assert_cmphex(run1(c, in), ==, OK);
        get(c, 2, 0, &r, 8);
        g_assert_cmpint(r, ==, big);
    }

    /* I32 shift: the low 32 bits, as a 32-bit shift */
    {
        int32_t a[3] = { 1, -1, 0x40000000 }, s[3] = { 31, 33, 1 }, r[3];
        int32_t want[3] = { INT32_MIN, 0, INT32_MIN };
        struct nisa_insn in = { .opcode = NISA_INSN_BINARY, .subop = NISA_BIN_SHL,
            .alpha = f64bits(1.0), .dst = tn(2, NISA_I32, 0, 3, 0, 0, 0),
            .src = { tn(0, NISA_I32, 0, 3, 0, 0, 0), tn(1, NISA_I32, 0, 3, 0, 0, 0) } };

        put(c, 0, 0, a, sizeof(a));
        put(c, 1, 0, s, sizeof(s));
        g_assert_cmphex(run1(c, in), ==, OK);
        get(c, 2, 0, r, sizeof(r));
        g_assert_cmpmem(r, sizeof(r), want, sizeof(want));
    }
    core_stop(c);
}

static void test_logical(void)
{
    Core *c = core_start();
    float x[4] = { 0.0f, NAN, -0.0f, 2.0f }, y[4] = { 1.0f, 1.0f, 0.0f, 0.0f };
    const struct { unsigned cmp; uint8_t want[4]; } cases[] = {
        { NISA_CMP_LAND, { 0, 1, 0, 0 } },
        { NISA_CMP_LOR, { 1, 1, 0, 1 } },
        { NISA_CMP_LXOR, { 1, 0, 0, 1 } },
    };
    uint8_t o[4];

    put(c, 0, 0, x, sizeof(x));
    put(c, 1, 0, y, sizeof(y));
    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        struct nisa_insn in = { .opcode = NISA_INSN_COMPARE, .subop = cases[i].cmp,
            .dst = tn(2, NISA_BOOL, 0, 4, 0, 0, 0),
            .src = { tn(0, NISA_F32, 0, 4, 0, 0, 0), tn(1, NISA_F32, 0, 4, 0, 0, 0) } };

        g_assert_cmphex(run1(c, in), ==, OK);
        get(c, 2, 0, o, sizeof(o));
        g_assert_cmpmem(o, sizeof(o), cases[i].want, sizeof(o));
    }
    core_stop(c);
}

/* Bitwise functions refuse floating operands; a subop past a table too. */
static void test_refusals(void)
{
    Core *c = core_start();
    struct nisa_insn in = { .opcode = NISA_INSN_BINARY, .subop = NISA_BIN_SHL,
        .alpha = f64bits(1.0), .dst = tn(2, NISA_F32, 0, 4, 0, 0, 0),
        .src = { tn(0, NISA_F32, 0, 4, 0, 0, 0), tn(1, NISA_F32, 0, 4, 0, 0, 0) } };

    g_assert_cmphex(run1(c, in), ==, OK | NISA_ERR_BAD_INSN);
    in.subop = NISA_NUM_BINARY;
    in.dst.dtype = in.src[0].dtype = in.src[1].dtype = NISA_I32;
    g_assert_cmphex(run1(c, in), ==, OK | NISA_ERR_BAD_INSN);
    in = (struct nisa_insn){ .opcode = NISA_INSN_UNARY, .subop = NISA_NUM_UNARY,
        .dst = tn(2, NISA_F32, 0, 4, 0, 0, 0), .src = { tn(0, NISA_F32, 0, 4, 0, 0, 0) } };
    g_assert_cmphex(run1(c, in), ==, OK | NISA_ERR_BAD_INSN);
    in.opcode = NISA_INSN_COMPARE;
    in.subop = NISA_NUM_COMPARE;
    in.src[1] = in.src[0];
    g_assert_cmphex(run1(c, in), ==, OK | NISA_ERR_BAD_INSN);
    core_stop(c);
}

/* Within a few float32 ulps (the special functions are not bit-exact). */
static void close_to(float got, double want, const char *what, double x)
{
    if (isnan(want) ? !isnan(got) :
        isinf(want) ? got != want :
        fabs(got - want) > 4e-7 * fabs(want) + 1e-30) {
        g_error("%s(%g): got %.9g, want %.9g", what, x, got, want);
    }
}

typedef struct SpCase {
    unsigned fn;
    double p, q, x, want;
} SpCase;

#define EULER_GAMMA 0.57721566490153286

static void test_special_unary(void)
{
    Core *c = core_start();
    const SpCase cases[] = {
        { NISA_UN_DIGAMMA, 0, 0, 1, -EULER_GAMMA },
        { NISA_UN_DIGAMMA, 0, 0, 0.5, -EULER_GAMMA - 2 * M_LN2 },
        { NISA_UN_DIGAMMA, 0, 0, 0.0, -INFINITY },
        { NISA_UN_DIGAMMA, 0, 0, -0.0, INFINITY },
        { NISA_UN_DIGAMMA, 0, 0, -2, NAN },
        { NISA_UN_DIGAMMA, 0, 0, -0.5, 0.03648997397857652 },
        { NISA_UN_POLYGAMMA, 1, 0, 1, M_PI * M_PI / 6 },
        { NISA_UN_POLYGAMMA, 2, 0, 1, -2.4041138063191885 },
        { NISA_UN_POLYGAMMA, 3, 0, 0.5, M_PI * M_PI * M_PI * M_PI },
        { NISA_UN_POLYGAMMA, 1, 0, -0.5, M_PI * M_PI / 2 + 4 },
        { NISA_UN_I0, 0, 0, 1, 1.2660658777520082 },
        { NISA_UN_I0, 0, 0, -30, 7.816722978239774e11 },
        { NISA_UN_I0E, 0, 0, 0, 1 },
        { NISA_UN_I0E, 0, 0, INFINITY, 0 },
        { NISA_UN_I1, 0, 0, 1, 0.5651591039924851 },
        { NISA_UN_I1E, 0, 0, -1, -0.5651591039924851 / M_E },
        { NISA_UN_BESSEL_K0, 0, 0, 1, 0.42102443824070834 },
        { NISA_UN_BESSEL_K1, 0, 0, 1, 0.6019072301972346 },
        { NISA_UN_BESSEL_K0E, 0, 0, 1, 0.42102443824070834 * M_E },
        { NISA_UN_BESSEL_K1E, 0, 0, 700, 0.047396186739206314 },
        { NISA_UN_BESSEL_K1, 0, 0, 0, INFINITY },
        { NISA_UN_BESSEL_K0, 0, 0, -1, NAN },
        { NISA_UN_NDTRI, 0, 0, 0.975, 1.959963984540054 },
        { NISA_UN_NDTRI, 0, 0, 0.5, 0 },
        { NISA_UN_NDTRI, 0, 0, 0, -INFINITY },
        { NISA_UN_NDTRI, 0, 0, 1.5, NAN },
        { NISA_UN_LOG_NDTR, 0, 0, 0, -M_LN2 },
        { NISA_UN_LOG_NDTR, 0, 0, -40, -804.6084420137538 },
        { NISA_UN_ERFCX, 0, 0, 1, 0.42758357615580705 },
        { NISA_UN_ERFCX, 0, 0, -30, INFINITY },
        { NISA_UN_AIRY_AI, 0, 0, 0, 0.3550280538878172 },
        { NISA_UN_AIRY_AI, 0, 0, 1, 0.13529241631288141 },
        { NISA_UN_AIRY_AI, 0, 0, -1, 0.5355608832923521 },
        { NISA_UN_AIRY_AI, 0, 0, 10, 1.1047532552898687e-10 },
        { NISA_UN_AIRY_AI, 0, 0, -10, 0.04024123848644319 },
        { NISA_UN_AIRY_AI, 0, 0, INFINITY, NAN },
        { NISA_UN_BESSEL_J0, 0, 0, 0, 1 },
        { NISA_UN_BESSEL_J1, 0, 0, -2, -0.5767248077568734 },
        { NISA_UN_BESSEL_Y0, 0, 0, 0, -INFINITY },
        { NISA_UN_BESSEL_Y1, 0, 0, -1, NAN },
        { NISA_UN_SPHERICAL_J0, 0, 0, 0, 1 },
        { NISA_UN_SPHERICAL_J0, 0, 0, -INFINITY, 0 },
        { NISA_UN_ENTR, 0, 0, 0.5, 0.5 * M_LN2 },
        { NISA_UN_ENTR, 0, 0, 0, 0 },
        { NISA_UN_ENTR, 0, 0, -1, -INFINITY },
        { NISA_UN_SINC, 0, 0, 0, 1 },
        { NISA_UN_SINC, 0, 0, 0.5, 2 / M_PI },
        { NISA_UN_EXP2, 0, 0, 10, 1024 },
        { NISA_UN_LOGIT, 0, 0, 0.75, log(3.0) },
        { NISA_UN_LOGIT, 0.25, 1, 0, -log(3.0) },
        { NISA_UN_LOGIT, 0, 0, 1, INFINITY },
        { NISA_UN_ANGLE, 0, 0, -2, M_PI },
        { NISA_UN_ANGLE, 0, 0, -0.0, 0 },
        { NISA_UN_ANGLE, 0, 0, NAN, NAN },
        { NISA_UN_FREXP_MANT, 0, 0, 8, 0.5 },
        { NISA_UN_FREXP_EXP, 0, 0, 8, 4 },
        { NISA_UN_FREXP_MANT, 0, 0, -INFINITY, -INFINITY },
        { NISA_UN_FREXP_EXP, 0, 0, 0.375, -1 },
        { NISA_UN_NAN_TO, 5, 0, NAN, 5 },
        { NISA_UN_NAN_TO, 5, 0, INFINITY, INFINITY },
        { NISA_UN_INF_TO, 7, -6, -INFINITY, -6 },
        { NISA_UN_INF_TO, 7, -6, INFINITY, 7 },
        { NISA_UN_THRESHOLD, 1, -5, 1, -5 },
        { NISA_UN_THRESHOLD, 1, -5, 2, 2 },
        { NISA_UN_THRESHOLD, 1, -5, NAN, NAN },
    };

    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        char what[32];

        snprintf(what, sizeof(what), "unary %u", cases[i].fn);
        close_to(unary1(c, cases[i].fn, cases[i].p, cases[i].q, cases[i].x),
                 cases[i].want, what, cases[i].x);
    }
    core_stop(c);
}

static void test_special_binary(void)
{
    Core *c = core_start();
    const struct { unsigned op; float x, y; double want; } cases[] = {
        { NISA_BIN_FMAX, NAN, 1, 1 }, { NISA_BIN_FMIN, 1, NAN, 1 },
        { NISA_BIN_FMAX, NAN, NAN, NAN }, { NISA_BIN_FMIN, -1, 2, -1 },
        { NISA_BIN_HEAVISIDE, 0, 0.5f, 0.5 }, { NISA_BIN_HEAVISIDE, -2, 0.5f, 0 },
        { NISA_BIN_HEAVISIDE, 3, 0.5f, 1 },
        { NISA_BIN_NEXTAFTER, 1, 2, 1 + 0x1p-23 },
        { NISA_BIN_NEXTAFTER, 0, -1, -0x1p-149 },
        { NISA_BIN_ZETA, 2, 1, M_PI * M_PI / 6 },
        { NISA_BIN_ZETA, 4, 2, M_PI * M_PI * M_PI * M_PI / 90 - 1 },
        { NISA_BIN_ZETA, 1, 1, INFINITY }, { NISA_BIN_ZETA, 0.5f, 1, NAN },
        { NISA_BIN_ZETA, 2, -1, INFINITY }, { NISA_BIN_ZETA, 2.5f, -1.5f, NAN },
        { NISA_BIN_XLOG1PY, 0, NAN, NAN }, { NISA_BIN_XLOG1PY, 0, -1, 0 },
        { NISA_BIN_XLOG1PY, 2, (float)(M_E - 1), 2 },
        { NISA_BIN_IGAMMA, 1, 1, 1 - 1 / M_E },
        { NISA_BIN_IGAMMAC, 1, 1, 1 / M_E },
        { NISA_BIN_IGAMMA, 0.5f, 2, 0.9544997361036416 },
        { NISA_BIN_IGAMMAC, 3, 10, 0.0027693957155115775 },
        { NISA_BIN_IGAMMA, 0, 0, NAN }, { NISA_BIN_IGAMMA, 0, 1, 1 },
        { NISA_BIN_IGAMMAC, 2, INFINITY, 0 }, { NISA_BIN_IGAMMA, -1, 1, NAN },
        { NISA_BIN_CHEB_T, 0.5f, 3, -1 }, { NISA_BIN_CHEB_U, 0.5f, 2, 0 },
        { NISA_BIN_CHEB_V, -1, 3, -7 }, { NISA_BIN_CHEB_W, 1, 3, 7 },
        { NISA_BIN_SCHEB_T, 0.75f, 3, -1 }, { NISA_BIN_SCHEB_U, 0, 2, 3 },
        { NISA_BIN_HERMITE_H, 1, 3, -4 }, { NISA_BIN_HERMITE_HE, 2, 3, 2 },
        { NISA_BIN_LAGUERRE_L, 1, 2, -0.5 }, { NISA_BIN_LEGENDRE_P, 0.5f, 2, -0.125 },
        { NISA_BIN_LEGENDRE_P, 0.5f, 2.7f, -0.125 },
        { NISA_BIN_CHEB_T, 0.5f, -1, 0 }, { NISA_BIN_HERMITE_H, 3, 0, 1 },
        { NISA_BIN_CHEB_T, 0.5f, 1e6f, NAN },       /* beyond the card's degree */
        { NISA_BIN_PRELU, -2, 0.25f, -0.5 }, { NISA_BIN_PRELU, 3, 0.25f, 3 },
        { NISA_BIN_LOGIT_GRAD, 1, 0.5f, 4 }, { NISA_BIN_LOGIT_GRAD, -3, 0.25f, -16 },
        { NISA_BIN_LOGIT_GRAD, 1, 0, INFINITY }, { NISA_BIN_LOGIT_GRAD, 0, 0, NAN },
        { NISA_BIN_LOGIT_GRAD, 0, 1e-40f, 0 }, { NISA_BIN_LOGIT_GRAD, 2, 2, -1 },
        { NISA_BIN_LOGIT_GRAD, 1, NAN, NAN },
    };

    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        float o;
        char what[32];

        snprintf(what, sizeof(what), "binary %u", cases[i].op);
        binary_f32(c, cases[i].op, &cases[i].x, &cases[i].y, &o, 1);
        close_to(o, cases[i].want, what, cases[i].x);
    }
    core_stop(c);
}

/* IOTA: row-major ramps, any strides; integers exact; bad forms refused. */
static void test_iota(void)
{
    Core *c = core_start();
    float f[6], fwant[6] = { 1.5f, 2.0f, 2.5f, 3.0f, 3.5f, 4.0f };
    int64_t l[3], lwant[3] = { 1LL << 62, (1LL << 62) - 3, (1LL << 62) - 6 };
    int32_t s[8] = { 0 }, swant[8] = { 10, 0, 7, 0, 4, 0, 1, 0 };
    struct nisa_insn in = { .opcode = NISA_INSN_IOTA, .scalar = f64bits(1.5),
        .alpha = f64bits(0.5), .dst = tn(0, NISA_F32, 0, 2, 3, 0, 0) };

    g_assert_cmphex(run1(c, in), ==, OK);
    get(c, 0, 0, f, sizeof(f));
    g_assert_cmpmem(f, sizeof(f), fwant, sizeof(fwant));

    /* 2^62 - 3 is no double: the integer ramp is exact */
    in.scalar = f64bits(0x1p62);
    in.alpha = f64bits(-3);
    in.dst = tn(1, NISA_I64, 0, 3, 0, 0, 0);
    g_assert_cmphex(run1(c, in), ==, OK);
    get(c, 1, 0, l, sizeof(l));
    g_assert_cmpmem(l, sizeof(l), lwant, sizeof(lwant));

    /* a strided destination: every other element, values in row-major order */
    put(c, 2, 0, s, sizeof(s));
    in.scalar = f64bits(10);
    in.alpha = f64bits(-3);
    in.dst = tn(2, NISA_I32, 0, 4, 0, 0, 0);
    in.dst.strides[0] = 2;
    g_assert_cmphex(run1(c, in), ==, OK);
    get(c, 2, 0, s, sizeof(s));
    g_assert_cmpmem(s, sizeof(s), swant, sizeof(swant));

    in.flags = NISA_IF_SCALAR;
    g_assert_cmphex(run1(c, in), ==, OK | NISA_ERR_BAD_INSN);
    in.flags = 0;
    in.src[0] = tn(0, NISA_F32, 0, 4, 0, 0, 0);
    g_assert_cmphex(run1(c, in), ==, OK | NISA_ERR_BAD_INSN);
    core_stop(c);
}

/* What a float32 WHERE stores: the chosen value, a NaN quiet with its sign. */
static uint32_t where_bits(bool cond, float x, float y)
{
    float v = cond ? x : y;
    uint32_t u;

    memcpy(&u, &v, 4);
    return isnan(v) ? (u & 0x80000000u) | 0x7fc00000u : u;
}

/*
 * WHERE into float32 in each of its loops: contiguous rows in blocks of 8
 * (both values tensors, or either a broadcast scalar), the tail of a row,
 * a strided destination; the condition BOOL and F32 (-0 false, NaN true);
 * values with NaN payloads of both signs. Random conditions, as a ReLU's
 * mask is, so that every block mixes both values.
 */
static void test_where_forms(void)
{
    enum { W = 1003 };          /* not a multiple of 8: a tail in each row */
    Core *c = core_start();
    static float x[W], y[W], cf[W], o[2 * W];
    static uint8_t cb[W];
    const uint32_t nans[] = { 0x7fc00000u, 0xffc00001u, 0x7f800123u,
                              0xff812345u };
    const float scal[2] = { -0.0f, 2.5f };
    GRand *r = g_rand_new_with_seed(7);

    randf(x, W, 1);
    randf(y, W, 2);
    for (int i = 0; i < W; i++) {
        cb[i] = g_rand_boolean(r) ? (uint8_t)g_rand_int_range(r, 1, 256) : 0;
        cf[i] = cb[i] ? (i % 5 ? 1.5f : NAN) : (i % 3 ? 0.0f : -0.0f);
        if (i % 17 == 0) {
            memcpy(&x[i], &nans[i / 17 % 4], 4);
        }
        if (i % 19 == 0) {
            memcpy(&y[i], &nans[(i / 19 + 1) % 4], 4);
        }
    }
    g_rand_free(r);
    /* slot 0: the conditions and the scalars; 1: x, 2: y, 3: dst */
    put(c, 0, 0, cb, sizeof(cb));
    put(c, 0, 4096, cf, sizeof(cf));
    put(c, 0, 8192, scal, sizeof(scal));
    put(c, 1, 0, x, sizeof(x));
    put(c, 2, 0, y, sizeof(y));

    /* form: 0 both tensors, 1 y a scalar, 2 x a scalar; strided: dst by 2 */
    for (unsigned cond = 0; cond < 2; cond++) {
        for (unsigned form = 0; form < 3; form++) {
            for (unsigned strided = 0; strided < 2; strided++) {
                struct nisa_insn in = { .opcode = NISA_INSN_WHERE,
                    .dst = tn(3, NISA_F32, 0, W, 0, 0, 0),
                    .src = { cond ? tn(0, NISA_F32, 4096, W, 0, 0, 0)
                                  : tn(0, NISA_BOOL, 0, W, 0, 0, 0),
                             tn(1, NISA_F32, 0, W, 0, 0, 0),
                             tn(2, NISA_F32, 0, W, 0, 0, 0) } };
                const float *cx = x, *cy = y;

                if (form) {
                    unsigned v = form == 1 ? 2 : 1;

                    in.src[v] = tn(0, NISA_F32, 8192 + 4 * (form - 1), W, 0, 0,
                                   0);
                    in.src[v].strides[0] = 0;
                }
                in.dst.strides[0] = strided ? 2 : 1;
                memset(o, 0x55, sizeof(o));
                put(c, 3, 0, o, sizeof(o));
                g_assert_cmphex(run1(c, in), ==, OK);
                get(c, 3, 0, o, sizeof(o));
                for (int i = 0; i < W; i++) {
                    float xv = form == 2 ? scal[1] : cx[i];
                    float yv = form == 1 ? scal[0] : cy[i];
                    uint32_t got;

                    memcpy(&got, &o[i * (strided ? 2 : 1)], 4);
                    if (got != where_bits(cb[i] != 0, xv, yv)) {
                        g_test_message("cond %u form %u strided %u: "
                                       "element %d", cond, form, strided, i);
                    }
                    g_assert_cmphex(got, ==, where_bits(cb[i] != 0, xv, yv));
                }
            }
        }
    }
    core_stop(c);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/trainium/elementwise/unary-values", test_unary_values);
    qtest_add_func("/trainium/elementwise/predicate-bool", test_predicate_bool);
    qtest_add_func("/trainium/elementwise/binary-values", test_binary_values);
    qtest_add_func("/trainium/elementwise/integer-forms", test_integer_forms);
    qtest_add_func("/trainium/elementwise/integer-div-zero", test_integer_div_zero);
    qtest_add_func("/trainium/elementwise/logical", test_logical);
    qtest_add_func("/trainium/elementwise/refusals", test_refusals);
    qtest_add_func("/trainium/elementwise/special-unary", test_special_unary);
    qtest_add_func("/trainium/elementwise/special-binary", test_special_binary);
    qtest_add_func("/trainium/elementwise/iota", test_iota);
    qtest_add_func("/trainium/elementwise/where-forms", test_where_forms);
    return g_test_run();
}

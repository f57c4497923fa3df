/*
 * QTest of complex64 operands (docs/hardware.md, "Complex numbers";
 * qemu-device/trainium-ew-complex.c): each function against a reference
 * the test computes in double complex and rounds once per part; real
 * operands as complex numbers of imaginary part 0; broadcast, strided, in
 * place, @scalar and REVERSE forms; COPY between real and complex; UNARY
 * CONJ of real operands; and the gate: every function that does not take
 * complex (REDUCE, MATMUL, EXPR, an unlisted UNARY...) refusing a complex
 * operand with BAD_INSN.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "trainium-core-qtest.h"
#include <complex.h>

#define N 256

typedef struct C32 {
    float re, im;
} C32;

/* Inputs: special values first, then random ones in [-4, 4]^2. */
static void inputs(C32 *z, unsigned n, unsigned seed)
{
    static const C32 special[] = {
        { 0, 0 }, { -0.0f, 0 }, { 1, 0 }, { 0, 1 }, { -1, 0 }, { 0, -1 },
        { INFINITY, 0 }, { 0, INFINITY }, { -INFINITY, 1 }, { NAN, 0 },
        { 1, NAN }, { 3, 4 }, { 1e-30f, 1e-30f }, { 1e30f, -1e30f },
    };
    GRand *r = g_rand_new_with_seed(seed);

    for (unsigned i = 0; i < n; i++) {
        if (i < ARRAY_SIZE(special) && seed == 1) {
            z[i] = special[i];
        } else {
            z[i].re = (float)g_rand_double_range(r, -4, 4);
            z[i].im = (float)g_rand_double_range(r, -4, 4);
        }
    }
    g_rand_free(r);
}

/*
 * @got is @want (double parts) rounded to float32, within @ulps float32
 * ulps of the larger part (complex functions are accurate in norm, not
 * per part); NaN parts must be NaN.
 */
static bool close_part(float got, double want, double scale, double ulps)
{
    float w = (float)want;

    if (isnan(w) || isnan(got)) {
        return isnan(w) && isnan(got);
    }
    if (isinf(w) || isinf(got)) {
        return got == w;
    }
    return got == w || fabs(got - w) <= ulps * 0x1p-24 * scale;
}

static void check_c(const char *what, unsigned i, C32 got, double complex w,
                    double ulps)
{
    double scale = fmax(fabs(creal(w)), fabs(cimag(w)));

    if (!close_part(got.re, creal(w), scale, ulps) ||
        !close_part(got.im, cimag(w), scale, ulps)) {
        g_test_message("%s [%u]: got %a%+ai, want %a%+ai", what, i,
                       got.re, got.im, creal(w), cimag(w));
        g_assert_not_reached();
    }
}

static double complex cz(C32 z)
{
    return CMPLX(z.re, z.im);
}

/* Plain complex division, in double. */
static double complex cdiv(double complex x, double complex y)
{
    double a = creal(x), b = cimag(x), c = creal(y), d = cimag(y);
    double den = c * c + d * d;

    return CMPLX((a * c + b * d) / den, (b * c - a * d) / den);
}

/*
 * The functions added in a second set, in long double: a reference more
 * precise than the device's double, and for log1p and expm1 the identities
 * written out (log|1 + z|^2 = log1p(2a + a^2 + b^2), exp(z) - 1 =
 * expm1(a) cos b - 2 sin^2(b / 2) + i exp(a) sin b), exact near 0.
 */
static bool ref_unary_l(unsigned fn, double complex z, double complex *w)
{
    long double complex x = CMPLXL(creal(z), cimag(z)), r;
    long double a = creal(z), b = cimag(z), l2 = logl(2.0L);

    switch (fn) {
    case NISA_UN_TAN:
        r = ctanl(x);
        break;
    case NISA_UN_ASIN:
        r = casinl(x);
        break;
    case NISA_UN_ACOS:
        r = cacosl(x);
        break;
    case NISA_UN_ATAN:
        r = catanl(x);
        break;
    case NISA_UN_SINH:
        r = csinhl(x);
        break;
    case NISA_UN_COSH:
        r = ccoshl(x);
        break;
    case NISA_UN_ASINH:
        r = casinhl(x);
        break;
    case NISA_UN_ACOSH:
        r = cacoshl(x);
        break;
    case NISA_UN_ATANH:
        r = catanhl(x);
        break;
    case NISA_UN_LOG2:
        r = clogl(x);
        r = CMPLXL(creall(r) / l2, cimagl(r) / l2);
        break;
    case NISA_UN_LOG10:
        r = clogl(x);
        r = CMPLXL(creall(r) / logl(10.0L), cimagl(r) / logl(10.0L));
        break;
    case NISA_UN_LOG1P:
        r = CMPLXL(0.5L * log1pl(a * (2 + a) + b * b), atan2l(b, 1 + a));
        break;
    case NISA_UN_EXPM1:
        r = CMPLXL(expm1l(a) * cosl(b) - 2 * sinl(b / 2) * sinl(b / 2),
                   expl(a) * sinl(b));
        break;
    case NISA_UN_RSQRT: {
        long double complex s = csqrtl(x);
        long double c = creall(s), d = cimagl(s), den = c * c + d * d;

        r = CMPLXL(c / den, -d / den);
        break;
    }
    case NISA_UN_EXP2:
        r = cexpl(l2 * x);
        break;
    default:
        return false;
    }
    *w = CMPLX((double)creall(r), (double)cimagl(r));
    return true;
}

static double complex ref_unary(unsigned fn, double complex z)
{
    double a = creal(z), b = cimag(z);
    double complex w;

    if (ref_unary_l(fn, z, &w)) {
        return w;
    }
    switch (fn) {
    case NISA_UN_NEG:
        return CMPLX(-a, -b);
    case NISA_UN_CONJ:
        return CMPLX(a, -b);
    case NISA_UN_ABS:
        return hypot(a, b);
    case NISA_UN_ANGLE:
        return atan2(b, a);
    case NISA_UN_SQUARE:
        return CMPLX(a * a - b * b, 2 * a * b);
    case NISA_UN_RECIP:
        return cdiv(1, z);
    case NISA_UN_EXP:
        return cexp(z);
    case NISA_UN_LOG:
        return clog(z);
    case NISA_UN_SQRT:
        return csqrt(z);
    case NISA_UN_SIN:
        return csin(z);
    case NISA_UN_COS:
        return ccos(z);
    case NISA_UN_TANH:
        return ctanh(z);
    case NISA_UN_SIGMOID:
        return cdiv(1, 1 + cexp(-z));
    case NISA_UN_ISNAN:
        return isnan(a) || isnan(b);
    case NISA_UN_ISINF:
        return isinf(a) || isinf(b);
    case NISA_UN_ISFINITE:
        return isfinite(a) && isfinite(b);
    }
    g_assert_not_reached();
}

static const struct {
    unsigned fn;
    const char *name;
    uint8_t dst;        /* dst dtype */
} unaries[] = {
    { NISA_UN_NEG, "neg", NISA_C64 }, { NISA_UN_CONJ, "conj", NISA_C64 },
    { NISA_UN_ABS, "abs", NISA_F32 }, { NISA_UN_ANGLE, "angle", NISA_F32 },
    { NISA_UN_SQUARE, "square", NISA_C64 },
    { NISA_UN_RECIP, "recip", NISA_C64 }, { NISA_UN_EXP, "exp", NISA_C64 },
    { NISA_UN_LOG, "log", NISA_C64 }, { NISA_UN_SQRT, "sqrt", NISA_C64 },
    { NISA_UN_SIN, "sin", NISA_C64 }, { NISA_UN_COS, "cos", NISA_C64 },
    { NISA_UN_TANH, "tanh", NISA_C64 },
    { NISA_UN_SIGMOID, "sigmoid", NISA_C64 },
    { NISA_UN_ISNAN, "isnan", NISA_BOOL },
    { NISA_UN_ISINF, "isinf", NISA_BOOL },
    { NISA_UN_ISFINITE, "isfinite", NISA_BOOL },
    { NISA_UN_TAN, "tan", NISA_C64 }, { NISA_UN_ASIN, "asin", NISA_C64 },
    { NISA_UN_ACOS, "acos", NISA_C64 }, { NISA_UN_ATAN, "atan", NISA_C64 },
    { NISA_UN_SINH, "sinh", NISA_C64 }, { NISA_UN_COSH, "cosh", NISA_C64 },
    { NISA_UN_ASINH, "asinh", NISA_C64 },
    { NISA_UN_ACOSH, "acosh", NISA_C64 },
    { NISA_UN_ATANH, "atanh", NISA_C64 },
    { NISA_UN_LOG2, "log2", NISA_C64 }, { NISA_UN_LOG10, "log10", NISA_C64 },
    { NISA_UN_LOG1P, "log1p", NISA_C64 },
    { NISA_UN_EXPM1, "expm1", NISA_C64 },
    { NISA_UN_RSQRT, "rsqrt", NISA_C64 }, { NISA_UN_EXP2, "exp2", NISA_C64 },
};

/* Read @n elements of dtype @dt at (@slot, 0) as complex numbers. */
static void get_as_c(Core *c, unsigned slot, uint8_t dt, C32 *o, unsigned n)
{
    g_autofree uint8_t *raw = g_malloc(n * 8);

    get(c, slot, 0, raw, n * nisa_dtype_size(dt));
    for (unsigned i = 0; i < n; i++) {
        if (dt == NISA_C64) {
            memcpy(&o[i], raw + 8 * i, 8);
        } else if (dt == NISA_F32) {
            memcpy(&o[i].re, raw + 4 * i, 4);
            o[i].im = 0;
        } else {
            g_assert(dt == NISA_BOOL);
            o[i] = (C32){ raw[i], 0 };
        }
    }
}

static void test_unary(void)
{
    Core *c = core_start();
    C32 x[N], got[N];

    inputs(x, N, 1);
    put(c, 0, 0, x, sizeof(x));
    for (unsigned f = 0; f < ARRAY_SIZE(unaries); f++) {
        uint8_t dt = unaries[f].dst;
        struct nisa_insn in = { .opcode = NISA_INSN_UNARY,
                                .subop = unaries[f].fn,
                                .dst = tn(1, dt, 0, N, 0, 0, 0),
                                .src = { tn(0, NISA_C64, 0, N, 0, 0, 0) } };

        g_assert_cmphex(run1(c, in), ==, OK);
        get_as_c(c, 1, dt, got, N);
        for (unsigned i = 0; i < N; i++) {
            double complex w = ref_unary(unaries[f].fn, cz(x[i]));

            /* Special values: only where C99 and PyTorch agree. */
            if (i < 14 && !isfinite(creal(w) + cimag(w)) &&
                unaries[f].fn != NISA_UN_NEG &&
                unaries[f].fn != NISA_UN_CONJ &&
                unaries[f].fn != NISA_UN_ABS) {
                continue;
            }
            check_c(unaries[f].name, i, got[i], w, 2);
        }
    }
    /* A real source, complex dst: sqrt(-4) = 2i, conj(3) = 3. */
    {
        float r[2] = { -4, 3 };
        struct nisa_insn in = { .opcode = NISA_INSN_UNARY,
                                .subop = NISA_UN_SQRT,
                                .dst = tn(1, NISA_C64, 0, 2, 0, 0, 0),
                                .src = { tn(0, NISA_F32, 0, 2, 0, 0, 0) } };

        put(c, 0, 0, r, sizeof(r));
        g_assert_cmphex(run1(c, in), ==, OK);
        get(c, 1, 0, got, 2 * sizeof(C32));
        check_c("sqrt real", 0, got[0], CMPLX(0, 2), 0);
        check_c("sqrt real", 1, got[1], CMPLX(sqrt(3), 0), 1);
        in.subop = NISA_UN_CONJ;
        g_assert_cmphex(run1(c, in), ==, OK);
        get(c, 1, 0, got, 2 * sizeof(C32));
        check_c("conj real", 1, got[1], CMPLX(3, 0), 0);
    }
    /* log1p and expm1 near 0, where log(1 + z) and exp(z) - 1 cancel. */
    for (unsigned i = 0; i < N; i++) {
        x[i].re = x[i].re * 0x1p-20f * (i % 3 ? 1 : 0x1p-60f);
        x[i].im = x[i].im * 0x1p-20f * (i % 5 ? 1 : 0x1p-60f);
    }
    put(c, 0, 0, x, sizeof(x));
    for (unsigned f = 0; f < 2; f++) {
        unsigned fn = f ? NISA_UN_EXPM1 : NISA_UN_LOG1P;
        struct nisa_insn in = { .opcode = NISA_INSN_UNARY, .subop = fn,
                                .dst = tn(1, NISA_C64, 0, N, 0, 0, 0),
                                .src = { tn(0, NISA_C64, 0, N, 0, 0, 0) } };

        g_assert_cmphex(run1(c, in), ==, OK);
        get(c, 1, 0, got, sizeof(got));
        for (unsigned i = 0; i < N; i++) {
            check_c(f ? "expm1 small" : "log1p small", i, got[i],
                    ref_unary(fn, cz(x[i])), 2);
        }
    }
    core_stop(c);
}

static double complex ref_binary(unsigned op, double complex x,
                                 double complex y, double alpha)
{
    double a = creal(x), b = cimag(x), cc = creal(y), d = cimag(y);

    switch (op) {
    case NISA_BIN_ADD:
        return CMPLX(a + alpha * cc, b + alpha * d);
    case NISA_BIN_SUB:
        return CMPLX(a - alpha * cc, b - alpha * d);
    case NISA_BIN_MUL:
        return CMPLX(a * cc - b * d, a * d + b * cc);
    case NISA_BIN_DIV:
        return cdiv(x, y);
    }
    g_assert_not_reached();
}

/*
 * BINARY on [R, C] operands: src0 C64 row-major, src1 C64 transposed (a
 * strided view) or F32 broadcast along the rows (stride 0) or @scalar,
 * REVERSE, and in place (dst = src0).
 */
#define R 8
#define C 24

static void test_binary(void)
{
    static const unsigned ops[] = { NISA_BIN_ADD, NISA_BIN_SUB, NISA_BIN_MUL,
                                    NISA_BIN_DIV };
    Core *c = core_start();
    C32 x[R * C], y[R * C], got[R * C];
    float yr[C];

    inputs(x, R * C, 2);
    inputs(y, R * C, 3);
    for (unsigned j = 0; j < C; j++) {
        yr[j] = y[j].re;
    }
    put(c, 0, 0, x, sizeof(x));
    put(c, 1, 0, y, sizeof(y));
    put(c, 3, 0, yr, sizeof(yr));
    for (unsigned o = 0; o < ARRAY_SIZE(ops); o++) {
        for (unsigned form = 0; form < 5; form++) {
            double alpha = ops[o] <= NISA_BIN_SUB ? 0.5 : 0;
            struct nisa_insn in = {
                .opcode = NISA_INSN_BINARY, .subop = ops[o],
                .alpha = f64bits(alpha), .scalar = f64bits(1.5),
                .dst = tn(2, NISA_C64, 0, R, C, 0, 0),
                .src = { tn(0, NISA_C64, 0, R, C, 0, 0),
                         tn(1, NISA_C64, 0, R, C, 0, 0) },
            };

            switch (form) {
            case 0:     /* src1 transposed: element (r, c) at c * R + r */
                in.src[1].strides[0] = 1;
                in.src[1].strides[1] = R;
                break;
            case 1:     /* a real row broadcast along the rows */
                in.src[1] = tn(3, NISA_F32, 0, R, C, 0, 0);
                in.src[1].strides[0] = 0;
                break;
            case 2:     /* @scalar */
                in.flags = NISA_IF_SCALAR;
                memset(&in.src[1], 0, sizeof(in.src[1]));
                break;
            case 3:     /* @scalar, reversed: scalar op (alpha src0) */
                in.flags = NISA_IF_SCALAR | NISA_IF_REVERSE;
                memset(&in.src[1], 0, sizeof(in.src[1]));
                break;
            case 4:     /* in place: dst is src0 */
                put(c, 2, 0, x, sizeof(x));
                in.src[0] = in.dst;
                break;
            }
            g_assert_cmphex(run1(c, in), ==, OK);
            get(c, 2, 0, got, sizeof(got));
            for (unsigned r = 0; r < R; r++) {
                for (unsigned j = 0; j < C; j++) {
                    unsigned i = r * C + j;
                    double complex a = cz(x[i]), b = cz(y[i]), w;
                    double al = alpha ? alpha : 1;

                    b = form == 0 ? cz(y[j * R + r]) : form == 1 ? yr[j] :
                        form == 2 || form == 3 ? 1.5 : b;
                    w = form == 3 ? ref_binary(ops[o], b, a, al) :
                        ref_binary(ops[o], a, b, al);
                    check_c("binary", o * 10000 + form * 1000 + i, got[i],
                            w, ops[o] >= NISA_BIN_MUL ? 1 : 0);
                }
            }
        }
    }
    core_stop(c);
}

static void test_compare_where_fill(void)
{
    Core *c = core_start();
    C32 x[N], y[N], got[N];
    uint8_t b[N], cond[N];
    float yr[N];

    inputs(x, N, 4);
    inputs(y, N, 5);
    for (unsigned i = 0; i < N; i++) {
        if (i % 3 == 0) {
            y[i] = x[i];
        } else if (i % 3 == 1) {
            y[i].re = x[i].re;  /* equal real parts only */
        }
        yr[i] = i % 5 ? y[i].re : x[i].re;
        x[i].im = i % 5 ? x[i].im : 0;
        cond[i] = i % 2;
    }
    put(c, 0, 0, x, sizeof(x));
    put(c, 1, 0, y, sizeof(y));
    put(c, 3, 0, yr, sizeof(yr));
    for (unsigned sub = NISA_CMP_EQ; sub <= NISA_CMP_NE; sub++) {
        struct nisa_insn in = { .opcode = NISA_INSN_COMPARE, .subop = sub,
                                .dst = tn(2, NISA_BOOL, 0, N, 0, 0, 0),
                                .src = { tn(0, NISA_C64, 0, N, 0, 0, 0),
                                         tn(1, NISA_C64, 0, N, 0, 0, 0) } };

        g_assert(sub == NISA_CMP_EQ || sub == NISA_CMP_NE);
        g_assert_cmphex(run1(c, in), ==, OK);
        get(c, 2, 0, b, sizeof(b));
        for (unsigned i = 0; i < N; i++) {
            bool eq = x[i].re == y[i].re && x[i].im == y[i].im;

            g_assert_cmpuint(b[i], ==, sub == NISA_CMP_EQ ? eq : !eq);
        }
        /* A real src1: equal when the imaginary part is 0. */
        in.src[1] = tn(3, NISA_F32, 0, N, 0, 0, 0);
        g_assert_cmphex(run1(c, in), ==, OK);
        get(c, 2, 0, b, sizeof(b));
        for (unsigned i = 0; i < N; i++) {
            bool eq = x[i].re == yr[i] && x[i].im == 0;

            g_assert_cmpuint(b[i], ==, sub == NISA_CMP_EQ ? eq : !eq);
        }
    }
    /* WHERE: a bool condition, a C64 and an F32 source, a C64 dst. */
    {
        struct nisa_insn in = { .opcode = NISA_INSN_WHERE,
                                .dst = tn(2, NISA_C64, 0, N, 0, 0, 0),
                                .src = { tn(3, NISA_BOOL, 4096, N, 0, 0, 0),
                                         tn(0, NISA_C64, 0, N, 0, 0, 0),
                                         tn(3, NISA_F32, 0, N, 0, 0, 0) } };

        put(c, 3, 4096, cond, sizeof(cond));
        g_assert_cmphex(run1(c, in), ==, OK);
        get(c, 2, 0, got, sizeof(got));
        for (unsigned i = 0; i < N; i++) {
            check_c("where", i, got[i], cond[i] ? cz(x[i]) : yr[i], 0);
        }
    }
    /* FILL: @scalar + i @alpha, into every other element (strided). */
    {
        struct nisa_insn in = { .opcode = NISA_INSN_FILL,
                                .scalar = f64bits(0.1), .alpha = f64bits(-2.5),
                                .dst = tn(2, NISA_C64, 0, N / 2, 0, 0, 0) };

        in.dst.strides[0] = 2;
        put(c, 2, 0, x, sizeof(x));
        g_assert_cmphex(run1(c, in), ==, OK);
        get(c, 2, 0, got, sizeof(got));
        for (unsigned i = 0; i < N; i++) {
            check_c("fill", i, got[i], i % 2 ? cz(x[i]) : CMPLX(0.1, -2.5), 0);
        }
    }
    core_stop(c);
}

/* COPY between complex and real types, and complex to complex (bits). */
static void test_copy(void)
{
    Core *c = core_start();
    C32 x[N], got[N];
    float f[N];
    int32_t i32[N];
    uint8_t bl[N];

    inputs(x, N, 6);
    for (unsigned i = 0; i < N; i++) {
        f[i] = x[i].re;
        i32[i] = (int32_t)(i * 7919) - 1000000;
        bl[i] = i % 3 == 0;
    }
    put(c, 0, 0, x, sizeof(x));
    put(c, 1, 0, f, sizeof(f));
    put(c, 1, 8192, i32, sizeof(i32));
    put(c, 1, 16384, bl, sizeof(bl));
    /* Real to complex: imaginary part 0. */
    {
        struct nisa_insn in = { .opcode = NISA_INSN_COPY,
                                .dst = tn(2, NISA_C64, 0, N, 0, 0, 0),
                                .src = { tn(1, NISA_F32, 0, N, 0, 0, 0) } };

        g_assert_cmphex(run1(c, in), ==, OK);
        get(c, 2, 0, got, sizeof(got));
        for (unsigned i = 0; i < N; i++) {
            check_c("copy f32", i, got[i], f[i], 0);
        }
        in.src[0] = tn(1, NISA_I32, 8192, N, 0, 0, 0);
        g_assert_cmphex(run1(c, in), ==, OK);
        get(c, 2, 0, got, sizeof(got));
        for (unsigned i = 0; i < N; i++) {
            check_c("copy i32", i, got[i], i32[i], 0);
        }
        in.src[0] = tn(1, NISA_BOOL, 16384, N, 0, 0, 0);
        g_assert_cmphex(run1(c, in), ==, OK);
        get(c, 2, 0, got, sizeof(got));
        for (unsigned i = 0; i < N; i++) {
            check_c("copy bool", i, got[i], bl[i], 0);
        }
    }
    /* Complex to real: the real part, converted as a real COPY would. */
    {
        struct nisa_insn in = { .opcode = NISA_INSN_COPY,
                                .dst = tn(2, NISA_F32, 0, N, 0, 0, 0),
                                .src = { tn(0, NISA_C64, 0, N, 0, 0, 0) } };

        g_assert_cmphex(run1(c, in), ==, OK);
        get(c, 2, 0, f, sizeof(f));
        for (unsigned i = 0; i < N; i++) {
            g_assert(f[i] == x[i].re || (isnan(f[i]) && isnan(x[i].re)));
        }
        in.dst = tn(2, NISA_I32, 0, N, 0, 0, 0);
        g_assert_cmphex(run1(c, in), ==, OK);
        get(c, 2, 0, i32, sizeof(i32));
        for (unsigned i = 0; i < N; i++) {
            g_assert_cmpint(i32[i], ==, (int32_t)truncf(x[i].re));
        }
        /* To bool: either part non-zero (PyTorch's cast), not the real. */
        x[0] = (C32){ 0, 0 };
        x[1] = (C32){ 0, -2 };
        x[2] = (C32){ -0.0f, 0 };
        x[3] = (C32){ NAN, 0 };
        put(c, 0, 0, x, 4 * sizeof(C32));
        in.dst = tn(2, NISA_BOOL, 0, N, 0, 0, 0);
        g_assert_cmphex(run1(c, in), ==, OK);
        get(c, 2, 0, bl, sizeof(bl));
        for (unsigned i = 0; i < N; i++) {
            g_assert_cmpuint(bl[i], ==, x[i].re != 0 || x[i].im != 0);
        }
    }
    /* Complex to complex, transposing [16, 16]: the same bits. */
    {
        struct nisa_insn in = { .opcode = NISA_INSN_COPY,
                                .dst = tn(2, NISA_C64, 0, 16, 16, 0, 0),
                                .src = { tn(0, NISA_C64, 0, 16, 16, 0, 0) } };

        in.src[0].strides[0] = 1;
        in.src[0].strides[1] = 16;
        g_assert_cmphex(run1(c, in), ==, OK);
        get(c, 2, 0, got, sizeof(got));
        for (unsigned i = 0; i < N; i++) {
            g_assert(!memcmp(&got[i], &x[(i % 16) * 16 + i / 16], 8));
        }
    }
    core_stop(c);
}

/* 2^17 elements: shared by the card's threads, out of place and in place. */
static void test_large(void)
{
    enum { L = 1 << 17 };
    Core *c = core_start();
    g_autofree C32 *x = g_new(C32, L);
    g_autofree C32 *y = g_new(C32, L);
    g_autofree C32 *got = g_new(C32, L);
    struct nisa_insn in = { .opcode = NISA_INSN_BINARY, .subop = NISA_BIN_DIV,
                            .dst = tn(2, NISA_C64, 0, L, 0, 0, 0),
                            .src = { tn(0, NISA_C64, 0, L, 0, 0, 0),
                                     tn(1, NISA_C64, 0, L, 0, 0, 0) } };

    inputs(x, L, 8);
    inputs(y, L, 9);
    put(c, 0, 0, x, L * sizeof(C32));
    put(c, 1, 0, y, L * sizeof(C32));
    for (unsigned form = 0; form < 3; form++) {
        if (form == 1) {
            put(c, 2, 0, x, L * sizeof(C32));
            in.src[0] = in.dst;                 /* in place */
        } else if (form == 2) {
            in.subop = NISA_UN_EXP;             /* a transcendental */
            in.opcode = NISA_INSN_UNARY;
            in.src[0] = tn(0, NISA_C64, 0, L, 0, 0, 0);
            memset(&in.src[1], 0, sizeof(in.src[1]));
        }
        g_assert_cmphex(run1(c, in), ==, OK);
        get(c, 2, 0, got, L * sizeof(C32));
        for (unsigned i = 0; i < L; i++) {
            double complex w = form == 2 ? cexp(cz(x[i])) :
                               cdiv(cz(x[i]), cz(y[i]));

            check_c("large", form * L + i, got[i], w, form == 2 ? 2 : 1);
        }
    }
    core_stop(c);
}

/* UNARY CONJ of a real operand is the identity (float and integer forms). */
static void test_conj_real(void)
{
    Core *c = core_start();
    float f[N], fo[N];
    int64_t l[N], lo[N];
    struct nisa_insn in = { .opcode = NISA_INSN_UNARY, .subop = NISA_UN_CONJ,
                            .dst = tn(1, NISA_F32, 0, N, 0, 0, 0),
                            .src = { tn(0, NISA_F32, 0, N, 0, 0, 0) } };

    randf(f, N, 7);
    for (unsigned i = 0; i < N; i++) {
        l[i] = (int64_t)i * 0x123456789ll - 77;
    }
    put(c, 0, 0, f, sizeof(f));
    put(c, 0, 8192, l, sizeof(l));
    g_assert_cmphex(run1(c, in), ==, OK);
    get(c, 1, 0, fo, sizeof(fo));
    g_assert(!memcmp(f, fo, sizeof(f)));
    in.dst = tn(1, NISA_I64, 0, N, 0, 0, 0);
    in.src[0] = tn(0, NISA_I64, 8192, N, 0, 0, 0);
    g_assert_cmphex(run1(c, in), ==, OK);
    get(c, 1, 0, lo, sizeof(lo));
    g_assert(!memcmp(l, lo, sizeof(l)));
    core_stop(c);
}

/* An EXPR of @nin inputs (three in the EXPR, the rest in one INPUTS). */
static unsigned expr_encode(struct nisa_insn *code, struct nisa_tensor dst,
                            const struct nisa_tensor *in, unsigned nin,
                            struct nisa_expr_step st)
{
    struct nisa_expr_steps rec = { .opcode = NISA_INSN_EXPR_DATA,
                                   .subop = NISA_EXPR_DATA_STEPS,
                                   .dst = dst };
    unsigned len = nisa_expr_length(1, nin), at = 1;

    g_assert(nin <= 7);
    memset(code, 0, len * sizeof(*code));
    code[0] = (struct nisa_insn){ .opcode = NISA_INSN_EXPR, .subop = 1,
                                  .axis = nin, .dst = dst };
    for (unsigned i = 0; i < nin && i < 3; i++) {
        code[0].src[i] = in[i];
    }
    if (nin > 3) {
        code[at].opcode = NISA_INSN_EXPR_DATA;
        code[at].subop = NISA_EXPR_DATA_INPUTS;
        for (unsigned j = 0; j < 4 && 3 + j < nin; j++) {
            *(j ? &code[at].src[j - 1] : &code[at].dst) = in[3 + j];
        }
        at++;
    }
    rec.step[0] = st;
    memcpy(&code[at], &rec, sizeof(rec));
    g_assert_cmpuint(at + 1, ==, len);
    return len;
}

/*
 * GATHER, SCATTER_ADD and SCATTER (assign, add) on complex64, both index
 * forms: the moves exact to the bit (a signalling NaN's payload, -0
 * included), the adds part by part as float32 adds, in the iteration's
 * order (duplicate indices accumulate, resp. the last one wins).
 */
#define IR 6
#define IC 5
#define IL 4

static bool same_c(C32 a, C32 b, bool exact)
{
    if (!exact && (isnan(a.re) || isnan(a.im))) {
        return isnan(a.re) == isnan(b.re) && isnan(a.im) == isnan(b.im) &&
               (isnan(a.re) || a.re == b.re) && (isnan(a.im) || a.im == b.im);
    }
    return !memcmp(&a, &b, sizeof(a));
}

static void check_same(const char *what, const C32 *got, const C32 *want,
                       unsigned n, bool exact)
{
    for (unsigned i = 0; i < n; i++) {
        if (!same_c(got[i], want[i], exact)) {
            g_test_message("%s [%u]: got %a%+ai, want %a%+ai", what, i,
                           got[i].re, got[i].im, want[i].re, want[i].im);
            g_assert_not_reached();
        }
    }
}

static void test_index(void)
{
    Core *c = core_start();
    C32 a[IR * IC], d0[IR * IC], s[IL * IC], got[IR * IC], want[IR * IC];
    int64_t sel[IL] = { 5, 0, 2, 2 }, el[IL * IC];
    uint32_t snan_bits = 0x7fa00001;
    float snan;
    GRand *r = g_rand_new_with_seed(11);
    struct nisa_tensor at = tn(0, NISA_C64, 0, IR, IC, 0, 0);

    memcpy(&snan, &snan_bits, 4);
    inputs(a, IR * IC, 7);
    inputs(d0, IR * IC, 8);
    inputs(s, IL * IC, 9);
    a[3].im = snan;
    a[4].re = -0.0f;
    a[20].re = snan;        /* row 4 of the transposed view's column 3 */
    s[6].re = snan;
    for (unsigned i = 0; i < IL * IC; i++) {
        el[i] = g_rand_int_range(r, 0, IR);
    }
    el[IC + 1] = el[1];     /* a duplicate in column 1 */
    g_rand_free(r);
    put(c, 0, 0, a, sizeof(a));
    put(c, 1, 0, s, sizeof(s));
    put(c, 3, 0, sel, sizeof(sel));
    put(c, 3, 256, el, sizeof(el));

    /* GATHER select along axis 0. */
    {
        struct nisa_insn in = { .opcode = NISA_INSN_GATHER,
                                .subop = NISA_IDX_SELECT,
                                .dst = tn(2, NISA_C64, 0, IL, IC, 0, 0),
                                .src = { at,
                                         tn(3, NISA_I64, 0, IL, 0, 0, 0) } };

        g_assert_cmphex(run1(c, in), ==, OK);
        get(c, 2, 0, got, IL * IC * sizeof(C32));
        for (unsigned l = 0; l < IL; l++) {
            for (unsigned j = 0; j < IC; j++) {
                want[l * IC + j] = a[sel[l] * IC + j];
            }
        }
        check_same("gather select", got, want, IL * IC, true);
    }
    /* GATHER element along axis 0 of a transposed view: (r, j) at jR + r. */
    {
        struct nisa_insn in = { .opcode = NISA_INSN_GATHER,
                                .subop = NISA_IDX_ELEMENT,
                                .dst = tn(2, NISA_C64, 0, IL, IC, 0, 0),
                                .src = { at, tn(3, NISA_I64, 256, IL, IC,
                                                0, 0) } };

        in.src[0].strides[0] = 1;
        in.src[0].strides[1] = IR;
        g_assert_cmphex(run1(c, in), ==, OK);
        get(c, 2, 0, got, IL * IC * sizeof(C32));
        for (unsigned i = 0; i < IL * IC; i++) {
            want[i] = a[(i % IC) * IR + el[i]];
        }
        check_same("gather element", got, want, IL * IC, true);
    }
    /* SCATTER_ADD, SCATTER add and SCATTER assign, both forms, axis 0. */
    for (unsigned v = 0; v < 6; v++) {
        bool elem = v & 1, assign = v >= 4;
        unsigned mode = elem ? NISA_IDX_ELEMENT : NISA_IDX_SELECT;
        struct nisa_insn in = {
            .opcode = v < 2 ? NISA_INSN_SCATTER_ADD : NISA_INSN_SCATTER,
            .subop = v < 2 ? mode :
                     NISA_SCATTER_SUBOP(assign ? NISA_SCAT_ASSIGN :
                                        NISA_SCAT_ADD, mode),
            .dst = tn(2, NISA_C64, 0, IR, IC, 0, 0),
            .src = { tn(1, NISA_C64, 0, IL, IC, 0, 0),
                     elem ? tn(3, NISA_I64, 256, IL, IC, 0, 0) :
                            tn(3, NISA_I64, 0, IL, 0, 0, 0) } };

        g_test_message("scatter form %u", v);
        put(c, 2, 0, d0, sizeof(d0));
        memcpy(want, d0, sizeof(want));
        for (unsigned i = 0; i < IL * IC; i++) {
            C32 *w = &want[(elem ? el[i] : sel[i / IC]) * IC + i % IC];

            if (assign) {
                *w = s[i];
            } else {
                w->re += s[i].re;   /* float32 adds: one rounding each */
                w->im += s[i].im;
            }
        }
        g_assert_cmphex(run1(c, in), ==, OK);
        get(c, 2, 0, got, sizeof(got));
        check_same("scatter", got, want, IR * IC, assign);
    }
    /* Refused: another reduction, a real src0 or dst against a complex. */
    {
        struct nisa_insn in = {
            .opcode = NISA_INSN_SCATTER,
            .subop = NISA_SCATTER_SUBOP(NISA_SCAT_MUL, NISA_IDX_SELECT),
            .dst = tn(2, NISA_C64, 0, IR, IC, 0, 0),
            .src = { tn(1, NISA_C64, 0, IL, IC, 0, 0),
                     tn(3, NISA_I64, 0, IL, 0, 0, 0) } };

        g_assert_cmphex(run1(c, in), ==, OK | NISA_ERR_BAD_INSN);
        in.subop = NISA_SCATTER_SUBOP(NISA_SCAT_MAX, NISA_IDX_ELEMENT);
        g_assert_cmphex(run1(c, in), ==, OK | NISA_ERR_BAD_INSN);
        in.opcode = NISA_INSN_SCATTER_ADD;
        in.subop = NISA_IDX_SELECT;
        in.src[0].dtype = NISA_F32;
        g_assert_cmphex(run1(c, in), ==, OK | NISA_ERR_BAD_INSN);
        in.opcode = NISA_INSN_GATHER;
        in.dst = tn(2, NISA_F32, 0, IL, IC, 0, 0);
        in.src[0] = at;
        g_assert_cmphex(run1(c, in), ==, OK | NISA_ERR_BAD_INSN);
        /* Still alive. */
        in.dst.dtype = NISA_C64;
        g_assert_cmphex(run1(c, in), ==, OK);
    }
    core_stop(c);
}

/*
 * SCAN SUM (cumsum) on complex64: each part summed in double, each prefix
 * rounded once, as PyTorch's CPU (complex<double> accumulator); along the
 * last axis, and along the first in place.
 */
#define SR 3
#define SC 50

static void test_scan(void)
{
    Core *c = core_start();
    C32 x[SR * SC], got[SR * SC], want[SR * SC];

    inputs(x, SR * SC, 12);
    put(c, 0, 0, x, sizeof(x));
    for (unsigned v = 0; v < 2; v++) {
        struct nisa_insn in = { .opcode = NISA_INSN_SCAN,
                                .subop = NISA_SCAN_SUM, .axis = v ? 0 : -1,
                                .dst = tn(v ? 0 : 1, NISA_C64, 0, SR, SC, 0, 0),
                                .src = { tn(0, NISA_C64, 0, SR, SC, 0, 0) } };
        unsigned lanes = v ? SC : SR, len = v ? SR : SC;

        g_assert_cmphex(run1(c, in), ==, OK);
        get(c, v ? 0 : 1, 0, got, sizeof(got));
        for (unsigned ln = 0; ln < lanes; ln++) {
            double re = 0, im = 0;

            for (unsigned i = 0; i < len; i++) {
                unsigned at = v ? i * SC + ln : ln * SC + i;

                re += x[at].re;
                im += x[at].im;
                want[at] = (C32){ (float)re, (float)im };
            }
        }
        check_same(v ? "cumsum axis 0 in place" : "cumsum", got, want,
                   SR * SC, true);
    }
    /* The other scans stay refused. */
    {
        struct nisa_insn in = { .opcode = NISA_INSN_SCAN,
                                .subop = NISA_SCAN_PROD, .axis = 1,
                                .dst = tn(1, NISA_C64, 0, SR, SC, 0, 0),
                                .src = { tn(0, NISA_C64, 0, SR, SC, 0, 0) } };

        g_assert_cmphex(run1(c, in), ==, OK | NISA_ERR_BAD_INSN);
        in.subop = NISA_SCAN_MAX;
        g_assert_cmphex(run1(c, in), ==, OK | NISA_ERR_BAD_INSN);
        in.subop = NISA_SCAN_LOGSUMEXP;
        g_assert_cmphex(run1(c, in), ==, OK | NISA_ERR_BAD_INSN);
    }
    core_stop(c);
}

/* The gate: complex operands of functions that do not take them. */
static void test_gate(void)
{
    Core *c = core_start();
    struct nisa_tensor z = tn(0, NISA_C64, 0, 4, 4, 0, 0);
    struct nisa_tensor f = tn(1, NISA_F32, 0, 4, 4, 0, 0);
    struct nisa_tensor ops[5] = { f, f, f, f, f };
    struct nisa_insn code[4];
    struct nisa_expr_step st = { .op = NISA_INSN_UNARY, .subop = NISA_UN_NEG,
                                 .dtype = NISA_F32, .dst = 5 };
    static const struct {
        const char *what;
        struct nisa_insn in;
    } bad[] = {
        { "reduce", { .opcode = NISA_INSN_REDUCE, .subop = NISA_RED_SUM,
                      .axis = 1, .dst = { .slot = 2, .dtype = NISA_C64,
                                          .ndim = 1, .shape = { 4 },
                                          .strides = { 1 } },
                      .src = { { .slot = 0, .dtype = NISA_C64, .ndim = 2,
                                 .shape = { 4, 4 }, .strides = { 4, 1 } } } } },
        { "matmul", { .opcode = NISA_INSN_MATMUL,
                      .dst = { .slot = 2, .dtype = NISA_F32, .ndim = 2,
                               .shape = { 4, 4 }, .strides = { 4, 1 } },
                      .src = { { .slot = 0, .dtype = NISA_C64, .ndim = 2,
                                 .shape = { 4, 4 }, .strides = { 4, 1 } },
                               { .slot = 1, .dtype = NISA_F32, .ndim = 2,
                                 .shape = { 4, 4 }, .strides = { 4, 1 } } } } },
        { "erf", { .opcode = NISA_INSN_UNARY, .subop = NISA_UN_ERF,
                   .dst = { .slot = 2, .dtype = NISA_C64, .ndim = 1,
                            .shape = { 4 }, .strides = { 1 } },
                   .src = { { .slot = 0, .dtype = NISA_C64, .ndim = 1,
                              .shape = { 4 }, .strides = { 1 } } } } },
        { "max", { .opcode = NISA_INSN_BINARY, .subop = NISA_BIN_MAX,
                   .dst = { .slot = 2, .dtype = NISA_F32, .ndim = 1,
                            .shape = { 4 }, .strides = { 1 } },
                   .src = { { .slot = 1, .dtype = NISA_F32, .ndim = 1,
                              .shape = { 4 }, .strides = { 1 } },
                            { .slot = 0, .dtype = NISA_C64, .ndim = 1,
                              .shape = { 4 }, .strides = { 1 } } } } },
        { "lt", { .opcode = NISA_INSN_COMPARE, .subop = NISA_CMP_LT,
                  .dst = { .slot = 2, .dtype = NISA_BOOL, .ndim = 1,
                           .shape = { 4 }, .strides = { 1 } },
                  .src = { { .slot = 0, .dtype = NISA_C64, .ndim = 1,
                             .shape = { 4 }, .strides = { 1 } } },
                  .flags = NISA_IF_SCALAR } },
        /* Taken by the gate, refused by the engine: real-valued results. */
        { "abs into c64", { .opcode = NISA_INSN_UNARY, .subop = NISA_UN_ABS,
                            .dst = { .slot = 2, .dtype = NISA_C64, .ndim = 1,
                                     .shape = { 4 }, .strides = { 1 } },
                            .src = { { .slot = 0, .dtype = NISA_C64,
                                       .ndim = 1, .shape = { 4 },
                                       .strides = { 1 } } } } },
        { "exp into f32", { .opcode = NISA_INSN_UNARY, .subop = NISA_UN_EXP,
                            .dst = { .slot = 2, .dtype = NISA_F32, .ndim = 1,
                                     .shape = { 4 }, .strides = { 1 } },
                            .src = { { .slot = 0, .dtype = NISA_C64,
                                       .ndim = 1, .shape = { 4 },
                                       .strides = { 1 } } } } },
        { "where c64 cond", { .opcode = NISA_INSN_WHERE,
                              .dst = { .slot = 2, .dtype = NISA_C64, .ndim = 1,
                                       .shape = { 4 }, .strides = { 1 } },
                              .src = { { .slot = 0, .dtype = NISA_C64,
                                         .ndim = 1, .shape = { 4 },
                                         .strides = { 1 } },
                                       { .slot = 0, .dtype = NISA_C64,
                                         .ndim = 1, .shape = { 4 },
                                         .strides = { 1 } },
                                       { .slot = 0, .dtype = NISA_C64,
                                         .ndim = 1, .shape = { 4 },
                                         .strides = { 1 } } } } },
    };
    unsigned n;

    for (unsigned i = 0; i < ARRAY_SIZE(bad); i++) {
        g_test_message("%s", bad[i].what);
        g_assert_cmphex(run1(c, bad[i].in), ==, OK | NISA_ERR_BAD_INSN);
    }
    /* A scalar-form BINARY with a complex src1 it does not read: fine. */
    {
        struct nisa_insn in = bad[3].in;

        in.flags = NISA_IF_SCALAR;
        g_assert_cmphex(run1(c, in), ==, OK);
    }
    /* EXPR: a complex input (EXPR's own, then an INPUTS one), a step. */
    n = expr_encode(code, f, ops, 5, st);
    g_assert_cmphex(run_kernel(c, code, n), ==, OK);
    ops[0] = z;
    n = expr_encode(code, f, ops, 5, st);
    g_assert_cmphex(run_kernel(c, code, n), ==, OK | NISA_ERR_BAD_INSN);
    ops[0] = f;
    ops[4] = z;
    n = expr_encode(code, f, ops, 5, st);
    g_assert_cmphex(run_kernel(c, code, n), ==, OK | NISA_ERR_BAD_INSN);
    ops[4] = f;
    st.dtype = NISA_C64;
    n = expr_encode(code, f, ops, 5, st);
    g_assert_cmphex(run_kernel(c, code, n), ==, OK | NISA_ERR_BAD_INSN);
    /* Still alive. */
    st.dtype = NISA_F32;
    n = expr_encode(code, f, ops, 5, st);
    g_assert_cmphex(run_kernel(c, code, n), ==, OK);
    core_stop(c);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/trainium/complex/unary", test_unary);
    qtest_add_func("/trainium/complex/binary", test_binary);
    qtest_add_func("/trainium/complex/compare-where-fill",
                   test_compare_where_fill);
    qtest_add_func("/trainium/complex/copy", test_copy);
    qtest_add_func("/trainium/complex/large", test_large);
    qtest_add_func("/trainium/complex/conj-real", test_conj_real);
    qtest_add_func("/trainium/complex/index", test_index);
    qtest_add_func("/trainium/complex/scan", test_scan);
    qtest_add_func("/trainium/complex/gate", test_gate);
    return g_test_run();
}

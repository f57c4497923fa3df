/*
 * qtest for the element types F16, U8, I8, I16 and F64 of the virtual
 * Trainium card (docs/hardware.md, "Element types", "Numerics"): every
 * binary16 pattern loaded exactly, float32 to binary16 rounding (ties to
 * even, overflow, subnormals, NaN), the small integers' sign or zero
 * extension, their wrapping stores from integers and floats, their exact
 * integer arithmetic, RANDOM into them; float64 stored exactly, computed
 * in float64 (elementwise, MATMUL on dgemm) and drawn with 53 bits.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "trainium-core-qtest.h"

/* Host reference: binary16 bits to float, written from the format. */
static float ref_f16(uint16_t h)
{
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    float mag = e == 31 ? (m ? NAN : INFINITY) :
                e == 0 ? ldexpf((float)m, -24) : ldexpf((float)(m + 1024), e - 25);

    return (h & 0x8000) ? -mag : mag;
}

static struct nisa_insn copy(unsigned ddt, unsigned sdt, uint32_t n)
{
    return (struct nisa_insn){ .opcode = NISA_INSN_COPY,
        .dst = tn(1, ddt, 0, n, 0, 0, 0), .src = { tn(0, sdt, 0, n, 0, 0, 0) } };
}

/* All 65536 binary16 patterns load exactly (COPY F16 -> F32). */
static void test_f16_load_all(void)
{
    Core *c = core_start();
    enum { N = 65536 };
    g_autofree uint16_t *h = g_new(uint16_t, N);
    g_autofree float *f = g_new(float, N);

    for (unsigned i = 0; i < N; i++) {
        h[i] = i;
    }
    put(c, 0, 0, h, N * 2);
    g_assert_cmphex(run1(c, copy(NISA_F32, NISA_F16, N)), ==, OK);
    get(c, 1, 0, f, N * 4);
    for (unsigned i = 0; i < N; i++) {
        float want = ref_f16(i);

        if (isnan(want)) {
            uint32_t u;

            memcpy(&u, &f[i], 4);
            /* A NaN is the quiet NaN with its sign. */
            g_assert_cmphex(u, ==, (i & 0x8000 ? 0xffc00000u : 0x7fc00000u));
        } else if (memcmp(&f[i], &want, 4)) {
            g_error("f16 %04x: got %a, want %a", i, f[i], want);
        }
    }
    core_stop(c);
}

/* float32 -> binary16: rounding to nearest even, overflow, subnormals. */
static void test_f16_store(void)
{
    static const struct {
        float x;
        uint16_t want;
    } cases[] = {
        { 0.0f, 0x0000 }, { -0.0f, 0x8000 }, { 1.0f, 0x3c00 }, { -2.0f, 0xc000 },
        { 65504.0f, 0x7bff },                   /* the largest finite */
        { 65519.996f, 0x7bff },                 /* just below the tie */
        { 65520.0f, 0x7c00 },                   /* tie to even: inf */
        { 1e6f, 0x7c00 }, { -1e6f, 0xfc00 },
        { INFINITY, 0x7c00 }, { -INFINITY, 0xfc00 },
        { NAN, 0x7e00 }, { -NAN, 0xfe00 },
        { 2049.0f, 0x6800 },                    /* tie: 2048 (even) */
        { 2051.0f, 0x6802 },                    /* tie: 2052 (even) */
        { 2050.0f, 0x6801 },                    /* exact */
        { 1.0f + 0x1p-11f, 0x3c00 },            /* tie down to even */
        { 1.0f + 3 * 0x1p-11f, 0x3c02 },        /* tie up to even */
        { 1.0f + 0x1p-11f + 0x1p-20f, 0x3c01 }, /* above the tie */
        { 0.1f, 0x2e66 },
        { 0x1p-14f, 0x0400 },                   /* the smallest normal */
        { 0x1p-14f - 0x1p-25f, 0x0400 },        /* tie, rounds up to normal */
        { 0x1p-24f, 0x0001 },                   /* the smallest subnormal */
        { 0x1p-25f, 0x0000 },                   /* tie to even: 0 */
        { 0x1p-25f + 0x1p-40f, 0x0001 },        /* above the tie */
        { 3 * 0x1p-25f, 0x0002 },               /* tie to even: 2 */
        { -5 * 0x1p-25f, 0x8002 },              /* tie to even: -2 */
        { 0x1p-30f, 0x0000 }, { -0x1p-30f, 0x8000 },
        { 0x1p-140f, 0x0000 },                  /* f32 subnormal */
        { 1023 * 0x1p-24f, 0x03ff },            /* the largest subnormal */
    };
    enum { N = ARRAY_SIZE(cases) };
    Core *c = core_start();
    float in[N];
    uint16_t out[N];

    for (unsigned i = 0; i < N; i++) {
        in[i] = cases[i].x;
    }
    put(c, 0, 0, in, sizeof(in));
    g_assert_cmphex(run1(c, copy(NISA_F16, NISA_F32, N)), ==, OK);
    get(c, 1, 0, out, sizeof(out));
    for (unsigned i = 0; i < N; i++) {
        if (out[i] != cases[i].want) {
            g_error("f32 %a -> f16: got %04x, want %04x", cases[i].x, out[i],
                    cases[i].want);
        }
    }
    core_stop(c);
}

/* Every binary16 pattern survives F16 -> F32 -> F16 (NaNs canonical). */
static void test_f16_round_trip(void)
{
    Core *c = core_start();
    enum { N = 65536 };
    g_autofree uint16_t *h = g_new(uint16_t, N);
    g_autofree uint16_t *o = g_new(uint16_t, N);
    struct nisa_insn k[2] = { copy(NISA_F32, NISA_F16, N) };

    k[1] = (struct nisa_insn){ .opcode = NISA_INSN_COPY,
        .dst = tn(2, NISA_F16, 0, N, 0, 0, 0), .src = { tn(1, NISA_F32, 0, N, 0, 0, 0) } };
    for (unsigned i = 0; i < N; i++) {
        h[i] = i;
    }
    put(c, 0, 0, h, N * 2);
    g_assert_cmphex(run_kernel(c, k, 2), ==, OK);
    get(c, 2, 0, o, N * 2);
    for (unsigned i = 0; i < N; i++) {
        bool nan = (i & 0x7c00) == 0x7c00 && (i & 0x3ff);
        uint16_t want = nan ? (i & 0x8000) | 0x7e00 : i;

        if (o[i] != want) {
            g_error("f16 %04x round trip: got %04x", i, o[i]);
        }
    }
    core_stop(c);
}

/* F16 arithmetic rounds once to binary16: 2048 + 1 ties to 2048. */
static void test_f16_arith(void)
{
    Core *c = core_start();
    uint16_t a[4] = { 0x6800, 0x6800, 0x3c00, 0x7bff }; /* 2048 2048 1 65504 */
    uint16_t b[4] = { 0x3c00, 0x4200, 0x1400, 0x5000 }; /* 1 3 2^-10 32 */
    uint16_t o[4];
    struct nisa_insn in = { .opcode = NISA_INSN_BINARY, .subop = NISA_BIN_ADD,
        .alpha = f64bits(1.0), .dst = tn(2, NISA_F16, 0, 4, 0, 0, 0),
        .src = { tn(0, NISA_F16, 0, 4, 0, 0, 0), tn(1, NISA_F16, 0, 4, 0, 0, 0) } };

    put(c, 0, 0, a, sizeof(a));
    put(c, 1, 0, b, sizeof(b));
    g_assert_cmphex(run1(c, in), ==, OK);
    get(c, 2, 0, o, sizeof(o));
    g_assert_cmphex(o[0], ==, 0x6800);  /* 2049: tie to 2048 */
    g_assert_cmphex(o[1], ==, 0x6802);  /* 2051: tie to 2052 */
    g_assert_cmphex(o[2], ==, 0x3c01);  /* 1 + 2^-10 exact */
    g_assert_cmphex(o[3], ==, 0x7c00);  /* 65536: overflow to inf */
    core_stop(c);
}

/* U8 zero-extends, I8 and I16 sign-extend; F32 stores wrap like PyTorch. */
static void test_small_int_convert(void)
{
    Core *c = core_start();
    uint8_t b[4] = { 0x00, 0x7f, 0x80, 0xff };
    int16_t s[4] = { 0, 32767, -32768, -1 };
    int32_t o[4];
    float fo[4];
    /* 3000000256 (the float): beyond int32; its low 16 bits are 0x5f00. */
    static const float fx[11] = { 2.9f, -2.9f, 300.0f, -1.0f, 255.5f,
                                  NAN, INFINITY, -INFINITY, 1e30f, 65537.0f,
                                  3000000259.0f };
    uint8_t u8[11];
    int8_t i8[11];
    int16_t i16[11];
    static const uint8_t want_u8[11] = { 2, 254, 44, 255, 255, 0, 0, 0, 0, 1,
                                         (uint8_t)3000000256ll };
    static const int8_t want_i8[11] = { 2, -2, 44, -1, -1, 0, 0, 0, 0, 1, 0 };
    static const int16_t want_i16[11] = { 2, -2, 300, -1, 255, 0, 0, 0, 0, 1, 0 };
    static const float zeros[2] = { 0.0f, -0.0f };

    put(c, 0, 0, b, 4);
    g_assert_cmphex(run1(c, copy(NISA_I32, NISA_U8, 4)), ==, OK);
    get(c, 1, 0, o, sizeof(o));
    g_assert_cmpint(o[0], ==, 0);
    g_assert_cmpint(o[1], ==, 127);
    g_assert_cmpint(o[2], ==, 128);
    g_assert_cmpint(o[3], ==, 255);
    g_assert_cmphex(run1(c, copy(NISA_I32, NISA_I8, 4)), ==, OK);
    get(c, 1, 0, o, sizeof(o));
    g_assert_cmpint(o[2], ==, -128);
    g_assert_cmpint(o[3], ==, -1);
    g_assert_cmphex(run1(c, copy(NISA_F32, NISA_I8, 4)), ==, OK);
    get(c, 1, 0, fo, sizeof(fo));
    g_assert(fo[1] == 127.0f && fo[2] == -128.0f && fo[3] == -1.0f);
    put(c, 0, 0, s, sizeof(s));
    g_assert_cmphex(run1(c, copy(NISA_I32, NISA_I16, 4)), ==, OK);
    get(c, 1, 0, o, sizeof(o));
    g_assert_cmpint(o[1], ==, 32767);
    g_assert_cmpint(o[2], ==, -32768);
    g_assert_cmpint(o[3], ==, -1);

    /* From floats: truncate to int64, wrap; NaN, inf, beyond int64 -> 0. */
    put(c, 0, 0, fx, sizeof(fx));
    g_assert_cmphex(run1(c, copy(NISA_U8, NISA_F32, 11)), ==, OK);
    get(c, 1, 0, u8, sizeof(u8));
    g_assert(!memcmp(u8, want_u8, sizeof(u8)));
    g_assert_cmphex(run1(c, copy(NISA_I8, NISA_F32, 11)), ==, OK);
    get(c, 1, 0, i8, sizeof(i8));
    g_assert(!memcmp(i8, want_i8, sizeof(i8)));
    g_assert_cmphex(run1(c, copy(NISA_I16, NISA_F32, 11)), ==, OK);
    get(c, 1, 0, i16, sizeof(i16));
    g_assert(!memcmp(i16, want_i16, sizeof(i16)));
    /* To bool: not zero (NaN is not zero). */
    g_assert_cmphex(run1(c, copy(NISA_BOOL, NISA_F32, 11)), ==, OK);
    get(c, 1, 0, u8, sizeof(u8));
    for (unsigned i = 0; i < 11; i++) {
        g_assert_cmpint(u8[i], ==, 1);
    }
    put(c, 0, 0, zeros, sizeof(zeros));
    g_assert_cmphex(run1(c, copy(NISA_BOOL, NISA_F32, 2)), ==, OK);
    get(c, 1, 0, u8, 2);
    g_assert(u8[0] == 0 && u8[1] == 0);
    core_stop(c);
}

/* From integers (COPY, FILL): always modulo 2^width, even where I32 saturates. */
static void test_small_int_wrap_copy(void)
{
    Core *c = core_start();
    int64_t q[4] = { 256 + 44, -1, 65536 + 7, INT64_MIN + 3 };
    uint8_t u8[4];
    int16_t i16[4];
    struct nisa_insn fill = { .opcode = NISA_INSN_FILL, .scalar = f64bits(-3.0),
        .dst = tn(1, NISA_U8, 0, 4, 0, 0, 0) };

    put(c, 0, 0, q, sizeof(q));
    g_assert_cmphex(run1(c, copy(NISA_U8, NISA_I64, 4)), ==, OK);
    get(c, 1, 0, u8, sizeof(u8));
    g_assert_cmpint(u8[0], ==, 44);
    g_assert_cmpint(u8[1], ==, 255);
    g_assert_cmpint(u8[2], ==, 7);
    g_assert_cmpint(u8[3], ==, 3);
    g_assert_cmphex(run1(c, copy(NISA_I16, NISA_I64, 4)), ==, OK);
    get(c, 1, 0, i16, sizeof(i16));
    g_assert_cmpint(i16[0], ==, 300);
    g_assert_cmpint(i16[1], ==, -1);
    g_assert_cmpint(i16[2], ==, 7);
    g_assert_cmpint(i16[3], ==, 3);
    g_assert_cmphex(run1(c, fill), ==, OK);
    get(c, 1, 0, u8, sizeof(u8));
    g_assert_cmpint(u8[0], ==, 253);
    core_stop(c);
}

static void binop(Core *c, unsigned op, unsigned dt, const void *a, const void *b,
                  void *o, unsigned n)
{
    unsigned es = nisa_dtype_size(dt);
    struct nisa_insn in = { .opcode = NISA_INSN_BINARY, .subop = op,
        .alpha = f64bits(1.0), .dst = tn(2, dt, 0, n, 0, 0, 0),
        .src = { tn(0, dt, 0, n, 0, 0, 0), tn(1, dt, 0, n, 0, 0, 0) } };

    put(c, 0, 0, a, n * es);
    put(c, 1, 0, b, n * es);
    g_assert_cmphex(run1(c, in), ==, OK);
    get(c, 2, 0, o, n * es);
}

/* Integer arithmetic on the small types is exact and wraps. */
static void test_small_int_arith(void)
{
    Core *c = core_start();
    uint8_t ua[4] = { 200, 16, 0x80, 3 }, ub[4] = { 100, 16, 1, 5 }, uo[4];
    int8_t sa[4] = { 100, -128, -7, 127 }, sb[4] = { 100, 1, 2, 1 }, so[4];
    int16_t ha[3] = { 30000, -32768, 300 }, hb[3] = { 30000, 2, 300 }, ho[3];
    bool bo[4];
    struct nisa_insn in;

    binop(c, NISA_BIN_ADD, NISA_U8, ua, ub, uo, 4);
    g_assert_cmpint(uo[0], ==, 44);     /* 300 mod 256 */
    g_assert_cmpint(uo[1], ==, 32);
    binop(c, NISA_BIN_SUB, NISA_U8, ua, ub, uo, 4);
    g_assert_cmpint(uo[3], ==, 254);    /* 3 - 5 */
    binop(c, NISA_BIN_MUL, NISA_U8, ua, ub, uo, 4);
    g_assert_cmpint(uo[0], ==, (200 * 100) % 256);
    g_assert_cmpint(uo[1], ==, 0);
    binop(c, NISA_BIN_SHR, NISA_U8, ua, ub, uo, 4);
    g_assert_cmpint(uo[2], ==, 0x40);   /* unsigned: zeros shift in */
    binop(c, NISA_BIN_ADD, NISA_I8, sa, sb, so, 4);
    g_assert_cmpint(so[0], ==, -56);    /* 200 - 256 */
    g_assert_cmpint(so[3], ==, -128);
    binop(c, NISA_BIN_SUB, NISA_I8, sa, sb, so, 4);
    g_assert_cmpint(so[1], ==, 127);
    binop(c, NISA_BIN_SHR, NISA_I8, sa, sb, so, 4);
    g_assert_cmpint(so[2], ==, -2);     /* arithmetic: -7 >> 2 */
    binop(c, NISA_BIN_FLOORDIV, NISA_I8, sa, sb, so, 4);
    g_assert_cmpint(so[2], ==, -4);
    binop(c, NISA_BIN_MUL, NISA_I16, ha, hb, ho, 3);
    g_assert_cmpint(ho[0], ==, (int16_t)(uint16_t)(30000 * 30000));
    g_assert_cmpint(ho[2], ==, (int16_t)(uint16_t)90000);
    binop(c, NISA_BIN_MUL, NISA_I16, ha + 1, hb + 1, ho, 1);
    g_assert_cmpint(ho[0], ==, 0);      /* -65536 */

    /* ~x on U8 and I8 (sign and width matter). */
    in = (struct nisa_insn){ .opcode = NISA_INSN_UNARY, .subop = NISA_UN_BITNOT,
        .dst = tn(2, NISA_U8, 0, 4, 0, 0, 0), .src = { tn(0, NISA_U8, 0, 4, 0, 0, 0) } };
    put(c, 0, 0, ua, 4);
    g_assert_cmphex(run1(c, in), ==, OK);
    get(c, 2, 0, uo, 4);
    g_assert_cmpint(uo[0], ==, 55);
    in.subop = NISA_UN_NEG;
    g_assert_cmphex(run1(c, in), ==, OK);
    get(c, 2, 0, uo, 4);
    g_assert_cmpint(uo[0], ==, 56);     /* -200 mod 256 */

    /* Comparisons see the values, not the bytes: U8 255 > I8 -1. */
    put(c, 0, 0, (uint8_t[]){ 255 }, 1);
    put(c, 1, 0, (int8_t[]){ -1 }, 1);
    in = (struct nisa_insn){ .opcode = NISA_INSN_COMPARE, .subop = NISA_CMP_GT,
        .dst = tn(2, NISA_BOOL, 0, 1, 0, 0, 0),
        .src = { tn(0, NISA_U8, 0, 1, 0, 0, 0), tn(1, NISA_I8, 0, 1, 0, 0, 0) } };
    g_assert_cmphex(run1(c, in), ==, OK);
    get(c, 2, 0, bo, 1);
    g_assert_true(bo[0]);
    core_stop(c);
}

/* RANDOM: F16 uniform on the 2^-11 grid; bits into U8/I8/I16. */
static void test_random(void)
{
    Core *c = core_start();
    enum { N = 4096 };
    g_autofree uint16_t *h = g_new(uint16_t, N);
    g_autofree uint8_t *b = g_new(uint8_t, N);
    struct nisa_insn in = { .opcode = NISA_INSN_RANDOM, .subop = NISA_RNG_UNIFORM,
        .scalar = 42, .dst = tn(1, NISA_F16, 0, N, 0, 0, 0) };
    unsigned hist[256] = { 0 };
    double sum = 0;

    g_assert_cmphex(run1(c, in), ==, OK);
    get(c, 1, 0, h, N * 2);
    for (unsigned i = 0; i < N; i++) {
        float x = ref_f16(h[i]);

        g_assert(x >= 0.0f && x < 1.0f);
        g_assert(x * 2048.0f == floorf(x * 2048.0f));
        sum += x;
    }
    g_assert_cmpfloat(fabs(sum / N - 0.5), <, 0.03);
    in.subop = NISA_RNG_BITS;
    g_assert_cmphex(run1(c, in), ==, OK | NISA_ERR_BAD_INSN);
    in.dst.dtype = NISA_U8;
    g_assert_cmphex(run1(c, in), ==, OK);
    get(c, 1, 0, b, N);
    for (unsigned i = 0; i < N; i++) {
        hist[b[i]]++;
    }
    for (unsigned i = 0; i < 256; i++) {
        g_assert_cmpuint(hist[i], >, 0);  /* all 256 values, ~16 each */
        g_assert_cmpuint(hist[i], <, 50);
    }
    in.dst.dtype = NISA_I16;
    g_assert_cmphex(run1(c, in), ==, OK);
    in.subop = NISA_RNG_UNIFORM;
    g_assert_cmphex(run1(c, in), ==, OK | NISA_ERR_BAD_INSN);
    core_stop(c);
}

/*
 * F64 is stored exactly: every bit pattern survives COPY F64 -> F64 (NaN
 * payloads included: a COPY of one type moves its bits), and F64 -> F32
 * rounds once, to nearest even.
 */
static void test_f64_copy(void)
{
    static const double vals[] = {
        0.1, -0.0, 1.0 + 0x1p-52, 0x1p-1074, -0x1.fffffffffffffp1023,
        INFINITY, 1.0 + 0x1p-24, 1.0 + 0x1p-24 + 0x1p-52, 1.0 + 3 * 0x1p-24,
    };
    enum { N = ARRAY_SIZE(vals) };
    Core *c = core_start();
    double out[N];
    float f[N];

    put(c, 0, 0, vals, sizeof(vals));
    g_assert_cmphex(run1(c, copy(NISA_F64, NISA_F64, N)), ==, OK);
    get(c, 1, 0, out, sizeof(out));
    g_assert(memcmp(out, vals, sizeof(vals)) == 0);
    g_assert_cmphex(run1(c, copy(NISA_F32, NISA_F64, N)), ==, OK);
    get(c, 1, 0, f, sizeof(f));
    for (unsigned i = 0; i < N; i++) {
        if (f[i] != (float)vals[i]) {
            g_error("f64 %a -> f32: got %a, want %a", vals[i], f[i], (float)vals[i]);
        }
    }
    g_assert(f[6] == 1.0f && f[7] == 1.0f + 0x1p-23f && f[8] == 1.0f + 0x1p-22f);
    core_stop(c);
}

/*
 * F64 arithmetic is float64's: 0.1 + 0.2 is 0.30000000000000004, a
 * quotient has float64's bits, floor division and round(decimals) are
 * computed in float64 (not through float32), nextafter steps one float64
 * ulp; an int64 beyond 2^24 converts exactly.
 */
static void test_f64_arith(void)
{
    Core *c = core_start();
    double a[3] = { 0.1, 1.0, 1e10 + 3 }, b[3] = { 0.2, 3.0, 2.0 }, o[3];
    double r[3] = { 0.123456789012, -2.5, 1234.5 };
    int64_t big = (1LL << 40) + 1;
    struct nisa_insn in;

    binop(c, NISA_BIN_ADD, NISA_F64, a, b, o, 3);
    g_assert(o[0] == 0.1 + 0.2 && o[0] != 0.3);
    binop(c, NISA_BIN_DIV, NISA_F64, a, b, o, 3);
    g_assert(o[1] == 1.0 / 3.0);
    /* float32 would hold 1e10 + 3 as 1e10 and give 5e9 */
    binop(c, NISA_BIN_FLOORDIV, NISA_F64, a, b, o, 3);
    g_assert(o[2] == 5000000001.0 && o[1] == 0.0);
    binop(c, NISA_BIN_DIV_TRUNC, NISA_F64, a, b, o, 3);
    g_assert(o[2] == 5000000001.0);
    binop(c, NISA_BIN_NEXTAFTER, NISA_F64, a, b, o, 3);
    g_assert(o[1] == 1.0 + 0x1p-52);
    in = (struct nisa_insn){ .opcode = NISA_INSN_UNARY, .subop = NISA_UN_ROUND_DEC,
        .scalar = f64bits(10.0), .dst = tn(2, NISA_F64, 0, 3, 0, 0, 0),
        .src = { tn(0, NISA_F64, 0, 3, 0, 0, 0) } };
    put(c, 0, 0, r, sizeof(r));
    g_assert_cmphex(run1(c, in), ==, OK);
    get(c, 2, 0, o, sizeof(o));
    g_assert(o[0] == nearbyint(0.123456789012 * 1e10) / 1e10);
    g_assert(o[1] == -2.5 && o[2] == 1234.5);
    in.scalar = f64bits(-1.0);          /* tens: half to even */
    g_assert_cmphex(run1(c, in), ==, OK);
    get(c, 2, 0, o, sizeof(o));
    g_assert(o[0] == 0.0 && o[2] == 1230.0);
    put(c, 0, 0, &big, 8);
    g_assert_cmphex(run1(c, copy(NISA_F64, NISA_I64, 1)), ==, OK);
    get(c, 1, 0, o, 8);
    g_assert(o[0] == (double)big);
    core_stop(c);
}

/*
 * MATMUL into F64 accumulates in float64 (dgemm): [1 + 2^-30, 1] @ [1, 1]^T
 * keeps the 2^-30 that a float32 product would drop; with a bias and
 * ACCUMULATE, and from F32 operands (converted exactly).
 */
static void test_f64_matmul(void)
{
    Core *c = core_start();
    enum { M = 3, K = 70, N = 5 };
    double a[M * K], b[K * N], bias[M * N], o[M * N];
    float af[M * K];
    GRand *r = g_rand_new_with_seed(7);

    for (unsigned i = 0; i < M * K; i++) {
        a[i] = g_rand_double_range(r, -1, 1);
        af[i] = (float)a[i];
    }
    for (unsigned i = 0; i < K * N; i++) {
        b[i] = g_rand_double_range(r, -1, 1);
    }
    for (unsigned i = 0; i < M * N; i++) {
        bias[i] = g_rand_double_range(r, -1, 1);
    }
    g_rand_free(r);
    a[0] = 1.0 + 0x1p-30;
    put(c, 0, 0, a, sizeof(a));
    put(c, 1, 0, b, sizeof(b));
    put(c, 3, 0, bias, sizeof(bias));
    put(c, 2, 0, bias, sizeof(bias));   /* the accumulated old value */
    g_assert_cmphex(run1(c, (struct nisa_insn){ .opcode = NISA_INSN_MATMUL,
        .flags = NISA_IF_BIAS | NISA_IF_ACCUMULATE,
        .dst = tn(2, NISA_F64, 0, M, N, 0, 0),
        .src = { tn(0, NISA_F64, 0, M, K, 0, 0), tn(1, NISA_F64, 0, K, N, 0, 0),
                 tn(3, NISA_F64, 0, M, N, 0, 0) } }), ==, OK);
    get(c, 2, 0, o, sizeof(o));
    for (unsigned i = 0; i < M; i++) {
        for (unsigned j = 0; j < N; j++) {
            double w = 0;

            for (unsigned k = 0; k < K; k++) {
                w += a[i * K + k] * b[k * N + j];
            }
            w += 2 * bias[i * N + j];
            g_assert_cmpfloat_with_epsilon(o[i * N + j], w, 1e-13);
        }
    }
    /* float32 operands into float64: each product of two floats is exact. */
    put(c, 0, 0, af, sizeof(af));
    g_assert_cmphex(run1(c, (struct nisa_insn){ .opcode = NISA_INSN_MATMUL,
        .dst = tn(2, NISA_F64, 0, M, N, 0, 0),
        .src = { tn(0, NISA_F32, 0, M, K, 0, 0), tn(1, NISA_F64, 0, K, N, 0, 0) } }),
        ==, OK);
    get(c, 2, 0, o, sizeof(o));
    for (unsigned j = 0; j < N; j++) {
        double w = 0;

        for (unsigned k = 0; k < K; k++) {
            w += (double)af[k] * b[k * N + j];
        }
        g_assert_cmpfloat_with_epsilon(o[j], w, 1e-13);
    }
    core_stop(c);
}

/* RANDOM uniform into F64: 53 random bits, on the 2^-53 grid, in [0, 1). */
static void test_f64_random(void)
{
    Core *c = core_start();
    enum { N = 4096 };
    g_autofree double *d = g_new(double, N);
    struct nisa_insn in = { .opcode = NISA_INSN_RANDOM, .subop = NISA_RNG_UNIFORM,
        .scalar = 42, .dst = tn(1, NISA_F64, 0, N, 0, 0, 0) };
    unsigned beyond_f32 = 0;
    double sum = 0;

    g_assert_cmphex(run1(c, in), ==, OK);
    get(c, 1, 0, d, N * 8);
    for (unsigned i = 0; i < N; i++) {
        g_assert(d[i] >= 0 && d[i] < 1);
        g_assert(ldexp(d[i], 53) == floor(ldexp(d[i], 53)));
        beyond_f32 += ldexp(d[i], 24) != floor(ldexp(d[i], 24));
        sum += d[i];
    }
    g_assert_cmpuint(beyond_f32, >, N - 10);
    g_assert_cmpfloat(fabs(sum / N - 0.5), <, 0.03);
    core_stop(c);
}

/* An I16 operand at an odd byte offset is malformed; unknown dtype too. */
static void test_refusals(void)
{
    Core *c = core_start();
    struct nisa_insn in = copy(NISA_I16, NISA_U8, 4);

    in.dst.offset = 1;
    g_assert_cmphex(run1(c, in), ==, OK | NISA_ERR_BAD_INSN);
    in = copy(NISA_F16, NISA_F32, 4);
    in.dst.dtype = NISA_NUM_DTYPES;
    g_assert_cmphex(run1(c, in), ==, OK | NISA_ERR_BAD_INSN);
    core_stop(c);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/trainium/dtype/f16-load-all", test_f16_load_all);
    qtest_add_func("/trainium/dtype/f16-store", test_f16_store);
    qtest_add_func("/trainium/dtype/f16-round-trip", test_f16_round_trip);
    qtest_add_func("/trainium/dtype/f16-arith", test_f16_arith);
    qtest_add_func("/trainium/dtype/small-int-convert", test_small_int_convert);
    qtest_add_func("/trainium/dtype/small-int-wrap-copy", test_small_int_wrap_copy);
    qtest_add_func("/trainium/dtype/small-int-arith", test_small_int_arith);
    qtest_add_func("/trainium/dtype/random", test_random);
    qtest_add_func("/trainium/dtype/f64-copy", test_f64_copy);
    qtest_add_func("/trainium/dtype/f64-arith", test_f64_arith);
    qtest_add_func("/trainium/dtype/f64-matmul", test_f64_matmul);
    qtest_add_func("/trainium/dtype/f64-random", test_f64_random);
    qtest_add_func("/trainium/dtype/refusals", test_refusals);
    return g_test_run();
}

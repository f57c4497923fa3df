/*
 * QTest of FFT (docs/hardware.md, "FFT"; qemu-device/trainium-fft.c):
 * FORWARD and BACKWARD against a naive O(n^2) DFT in long double for
 * lengths with every kind of factor (1, 2, a prime, mixed radix, 1009,
 * a power of two), R2C one-sided and with both halves, C2R (its round
 * trip, the imaginary parts it ignores), a strided axis that is not the
 * last with a batch, in place, @scalar, empty operands, and the malformed
 * instructions it refuses.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "trainium-core-qtest.h"
#include <complex.h>

typedef struct C32 {
    float re, im;
} C32;

static void randc(C32 *z, unsigned n, unsigned seed)
{
    GRand *r = g_rand_new_with_seed(seed);

    for (unsigned i = 0; i < n; i++) {
        z[i].re = (float)g_rand_double_range(r, -1, 1);
        z[i].im = (float)g_rand_double_range(r, -1, 1);
    }
    g_rand_free(r);
}

/*
 * The DFT of @x (@n elements, @xs apart) with sign @sign, times @scale,
 * into @out, in long double: the twiddles by their exact index jk mod n.
 */
static void dft(const C32 *x, unsigned xs, unsigned n, int sign,
                long double scale, long double complex *out)
{
    g_autofree long double complex *w = g_new(long double complex, n);

    for (unsigned j = 0; j < n; j++) {
        long double t = 2 * 3.14159265358979323846264338327950288L * j / n;

        w[j] = cosl(t) + sign * I * sinl(t);
    }
    for (unsigned k = 0; k < n; k++) {
        long double complex s = 0;

        for (unsigned j = 0; j < n; j++) {
            s += (x[j * xs].re + I * (long double)x[j * xs].im) *
                 w[(uint64_t)j * k % n];
        }
        out[k] = s * scale;
    }
}

/* ||got - want|| <= 1e-6 ||want|| over @n elements (@gs apart in @got). */
static void check_norm(const char *what, const C32 *got, unsigned gs,
                       const long double complex *want, unsigned n)
{
    long double err = 0, norm = 0;

    for (unsigned k = 0; k < n; k++) {
        long double complex d = got[k * gs].re + I * (long double)got[k * gs].im
                                - want[k];

        err += creall(d) * creall(d) + cimagl(d) * cimagl(d);
        norm += creall(want[k]) * creall(want[k]) +
                cimagl(want[k]) * cimagl(want[k]);
    }
    if (!(sqrtl(err) <= 1e-6L * sqrtl(norm))) {
        g_test_message("%s: error %Lg of norm %Lg", what, sqrtl(err),
                       sqrtl(norm));
        g_assert_not_reached();
    }
}

static struct nisa_insn fft(unsigned sub, struct nisa_tensor dst,
                            struct nisa_tensor src, double scalar)
{
    return (struct nisa_insn){ .opcode = NISA_INSN_FFT, .subop = sub,
                               .axis = -1, .scalar = f64bits(scalar),
                               .dst = dst, .src = { src } };
}

static void test_lengths(void)
{
    static const unsigned lens[] = { 1, 2, 7, 12, 97, 360, 1009, 1024 };
    Core *c = core_start();

    for (unsigned l = 0; l < ARRAY_SIZE(lens); l++) {
        unsigned n = lens[l];
        g_autofree C32 *x = g_new(C32, n);
        g_autofree C32 *got = g_new(C32, n);
        g_autofree long double complex *want = g_new(long double complex, n);

        randc(x, n, n);
        put(c, 0, 0, x, n * sizeof(C32));
        for (int b = 0; b < 2; b++) {
            unsigned sub = b ? NISA_FFT_BACKWARD : NISA_FFT_FORWARD;
            double scale = b ? 1.0 / n : 1.0;

            g_test_message("n = %u, %s", n, b ? "backward" : "forward");
            g_assert_cmphex(run1(c, fft(sub, tn(1, NISA_C64, 0, n, 0, 0, 0),
                                        tn(0, NISA_C64, 0, n, 0, 0, 0),
                                        scale)), ==, OK);
            get(c, 1, 0, got, n * sizeof(C32));
            dft(x, 1, n, b ? 1 : -1, scale, want);
            check_norm("fft", got, 1, want, n);
        }
    }
    core_stop(c);
}

/*
 * A long prime length (FFTW's Bluestein or Rader; the call runs on a
 * thread of its own): a few bins against the DFT's sums, and the round
 * trip back.
 */
static void test_long_prime(void)
{
    enum { n = 262147 };
    static const unsigned bins[] = { 0, 1, 1000, 131073, n - 1 };
    Core *c = core_start();
    g_autofree C32 *x = g_new(C32, n);
    g_autofree C32 *got = g_new(C32, n);
    g_autofree long double complex *want = g_new(long double complex, n);
    long double complex one[ARRAY_SIZE(bins)];
    C32 gbin[ARRAY_SIZE(bins)];

    randc(x, n, 5);
    put(c, 0, 0, x, n * sizeof(C32));
    g_assert_cmphex(run1(c, fft(NISA_FFT_FORWARD,
                                tn(1, NISA_C64, 0, n, 0, 0, 0),
                                tn(0, NISA_C64, 0, n, 0, 0, 0), 1)), ==, OK);
    get(c, 1, 0, got, n * sizeof(C32));
    for (unsigned b = 0; b < ARRAY_SIZE(bins); b++) {
        long double complex sum = 0;

        for (unsigned j = 0; j < n; j++) {
            long double t = -2 * 3.14159265358979323846264338327950288L *
                            (long double)((uint64_t)j * bins[b] % n) / n;

            sum += (x[j].re + I * (long double)x[j].im) *
                   (cosl(t) + I * sinl(t));
        }
        one[b] = sum;
        gbin[b] = got[bins[b]];
    }
    /* Each bin is about sqrt(n) in size: 1e-6 of the transform's norm. */
    check_norm("long prime bins", gbin, 1, one, ARRAY_SIZE(bins));
    g_assert_cmphex(run1(c, fft(NISA_FFT_BACKWARD,
                                tn(2, NISA_C64, 0, n, 0, 0, 0),
                                tn(1, NISA_C64, 0, n, 0, 0, 0), 1.0 / n)),
                    ==, OK);
    get(c, 2, 0, got, n * sizeof(C32));
    for (unsigned j = 0; j < n; j++) {
        want[j] = x[j].re + I * (long double)x[j].im;
    }
    check_norm("long prime round trip", got, 1, want, n);
    core_stop(c);
}

/* R2C one-sided and full, C2R back, scaled by 1/n. */
static void test_real(void)
{
    static const unsigned lens[] = { 1, 2, 12, 97 };
    Core *c = core_start();

    for (unsigned l = 0; l < ARRAY_SIZE(lens); l++) {
        unsigned n = lens[l], h = n / 2 + 1;
        g_autofree C32 *xc = g_new0(C32, n);
        g_autofree float *x = g_new(float, n);
        g_autofree float *back = g_new(float, n);
        g_autofree C32 *got = g_new(C32, n);
        g_autofree long double complex *want = g_new(long double complex, n);

        randc(xc, n, 100 + n);
        for (unsigned i = 0; i < n; i++) {
            x[i] = xc[i].re;
            xc[i].im = 0;
        }
        dft(xc, 1, n, -1, 1, want);
        put(c, 0, 0, x, n * sizeof(float));
        for (unsigned full = 0; full < 2; full++) {
            unsigned m = full ? n : h;

            g_test_message("r2c n = %u, %u bins", n, m);
            g_assert_cmphex(run1(c, fft(NISA_FFT_R2C,
                                        tn(1, NISA_C64, 0, m, 0, 0, 0),
                                        tn(0, NISA_F32, 0, n, 0, 0, 0), 1)),
                            ==, OK);
            get(c, 1, 0, got, m * sizeof(C32));
            check_norm("r2c", got, 1, want, m);
        }
        /*
         * C2R of the one-sided half, with garbage in the imaginary parts
         * it ignores (bin 0, and n / 2 for an even n): x again.
         */
        g_assert_cmphex(run1(c, fft(NISA_FFT_R2C,
                                    tn(1, NISA_C64, 0, h, 0, 0, 0),
                                    tn(0, NISA_F32, 0, n, 0, 0, 0), 1)),
                        ==, OK);
        get(c, 1, 0, got, h * sizeof(C32));
        got[0].im = 5;
        if (n % 2 == 0) {
            got[n / 2].im = -7;
        }
        put(c, 1, 0, got, h * sizeof(C32));
        g_assert_cmphex(run1(c, fft(NISA_FFT_C2R,
                                    tn(2, NISA_F32, 0, n, 0, 0, 0),
                                    tn(1, NISA_C64, 0, h, 0, 0, 0),
                                    1.0 / n)), ==, OK);
        get(c, 2, 0, back, n * sizeof(float));
        for (unsigned i = 0; i < n; i++) {
            want[i] = x[i];
            got[i] = (C32){ back[i], 0 };
        }
        check_norm("c2r", got, 1, want, n);
        /* A longer source: only the first n / 2 + 1 bins are read. */
        put(c, 1, h * sizeof(C32), xc, sizeof(C32));
        g_assert_cmphex(run1(c, fft(NISA_FFT_C2R,
                                    tn(2, NISA_F32, 0, n, 0, 0, 0),
                                    tn(1, NISA_C64, 0, h + 1, 0, 0, 0),
                                    1.0 / n)), ==, OK);
        get(c, 2, 0, back, n * sizeof(float));
        for (unsigned i = 0; i < n; i++) {
            got[i] = (C32){ back[i], 0 };
        }
        check_norm("c2r longer", got, 1, want, n);
    }
    core_stop(c);
}

/*
 * Along axis 1 of [3, 12, 5] (axis -2 too), from a source laid out as
 * [5, 12, 3] transposed (every stride unusual), into a contiguous dst;
 * then in place, scaled by 2.5.
 */
static void test_strided(void)
{
    enum { A = 3, L = 12, B = 5 };
    Core *c = core_start();
    C32 x[A * L * B], got[A * L * B], line[L];
    long double complex want[L];
    struct nisa_tensor src = tn(0, NISA_C64, 0, A, L, B, 0);

    randc(x, A * L * B, 9);
    put(c, 0, 0, x, sizeof(x));
    /* Element (a, j, b) of src at b * L * A + j * A + a. */
    src.strides[0] = 1;
    src.strides[1] = A;
    src.strides[2] = L * A;
    for (int axis = 1; axis >= -2; axis -= 3) {
        struct nisa_insn in = fft(NISA_FFT_FORWARD,
                                  tn(1, NISA_C64, 0, A, L, B, 0), src, 1);

        in.axis = axis;
        g_assert_cmphex(run1(c, in), ==, OK);
        get(c, 1, 0, got, sizeof(got));
        for (unsigned a = 0; a < A; a++) {
            for (unsigned b = 0; b < B; b++) {
                for (unsigned j = 0; j < L; j++) {
                    line[j] = x[b * L * A + j * A + a];
                }
                dft(line, 1, L, -1, 1, want);
                check_norm("strided", &got[a * L * B + b], B, want, L);
            }
        }
    }
    /* In place (the same strided operand), scaled. */
    {
        struct nisa_insn in = fft(NISA_FFT_BACKWARD, src, src, 2.5);

        in.axis = 1;
        g_assert_cmphex(run1(c, in), ==, OK);
        get(c, 0, 0, got, sizeof(got));
        for (unsigned a = 0; a < A; a++) {
            for (unsigned b = 0; b < B; b++) {
                for (unsigned j = 0; j < L; j++) {
                    line[j] = x[b * L * A + j * A + a];
                }
                dft(line, 1, L, 1, 2.5, want);
                check_norm("in place", &got[b * L * A + a], A, want, L);
            }
        }
    }
    core_stop(c);
}

/*
 * 2^12 lines of 32 (2^17 elements: shared by the card's threads), along
 * the last axis and, R2C, along the first (lines 2^12 elements apart).
 */
static void test_batched(void)
{
    enum { NL = 1 << 12, L = 32, H = L / 2 + 1 };
    Core *c = core_start();
    g_autofree C32 *x = g_new(C32, NL * L);
    g_autofree C32 *got = g_new(C32, NL * L);
    g_autofree float *r = g_new(float, NL * L);
    C32 line[L];
    long double complex want[L];

    randc(x, NL * L, 11);
    for (unsigned i = 0; i < NL * L; i++) {
        r[i] = x[i].im;
    }
    put(c, 0, 0, x, NL * L * sizeof(C32));
    put(c, 3, 0, r, NL * L * sizeof(float));
    g_assert_cmphex(run1(c, fft(NISA_FFT_FORWARD,
                                tn(1, NISA_C64, 0, NL, L, 0, 0),
                                tn(0, NISA_C64, 0, NL, L, 0, 0), 0.5)), ==, OK);
    get(c, 1, 0, got, NL * L * sizeof(C32));
    for (unsigned l = 0; l < NL; l++) {
        dft(&x[l * L], 1, L, -1, 0.5, want);
        check_norm("batched", &got[l * L], 1, want, L);
    }
    {
        struct nisa_insn in = fft(NISA_FFT_R2C, tn(1, NISA_C64, 0, H, NL, 0, 0),
                                  tn(3, NISA_F32, 0, L, NL, 0, 0), 1);

        in.axis = 0;
        g_assert_cmphex(run1(c, in), ==, OK);
        get(c, 1, 0, got, H * NL * sizeof(C32));
        for (unsigned l = 0; l < NL; l++) {
            for (unsigned j = 0; j < L; j++) {
                line[j] = (C32){ r[j * NL + l], 0 };
            }
            dft(line, 1, L, -1, 1, want);
            check_norm("batched r2c", &got[l], NL, want, H);
        }
    }
    core_stop(c);
}

/*
 * The shared paths give the same bits on one thread and on three: a
 * batched FFT, and (the complex elementwise engine's) a complex multiply
 * of 2^17 elements.
 */
static void run_on(const char *props, const C32 *x, C32 *fft_out,
                   C32 *mul_out, unsigned n)
{
    Core *c = core_start_with(props);

    put(c, 0, 0, x, n * sizeof(C32));
    g_assert_cmphex(run1(c, fft(NISA_FFT_BACKWARD,
                                tn(1, NISA_C64, 0, n / 64, 64, 0, 0),
                                tn(0, NISA_C64, 0, n / 64, 64, 0, 0), 1)),
                    ==, OK);
    get(c, 1, 0, fft_out, n * sizeof(C32));
    g_assert_cmphex(run1(c, (struct nisa_insn){ .opcode = NISA_INSN_BINARY,
                         .subop = NISA_BIN_MUL,
                         .dst = tn(2, NISA_C64, 0, n, 0, 0, 0),
                         .src = { tn(0, NISA_C64, 0, n, 0, 0, 0),
                                  tn(1, NISA_C64, 0, n, 0, 0, 0) } }), ==, OK);
    get(c, 2, 0, mul_out, n * sizeof(C32));
    core_stop(c);
}

static void test_threads(void)
{
    enum { n = 1 << 17 };
    g_autofree C32 *x = g_new(C32, n);
    g_autofree C32 *f1 = g_new(C32, n), *f3 = g_new(C32, n);
    g_autofree C32 *m1 = g_new(C32, n), *m3 = g_new(C32, n);

    randc(x, n, 13);
    run_on("mem-size=64M,blas-threads=1", x, f1, m1, n);
    run_on("mem-size=64M,blas-threads=3", x, f3, m3, n);
    g_assert(!memcmp(f1, f3, n * sizeof(C32)));
    g_assert(!memcmp(m1, m3, n * sizeof(C32)));
}

/* Malformed instructions are BAD_INSN; empty operands do nothing. */
static void test_bad(void)
{
    Core *c = core_start();
    struct nisa_tensor z8 = tn(0, NISA_C64, 0, 8, 0, 0, 0);
    struct nisa_tensor d8 = tn(1, NISA_C64, 0, 8, 0, 0, 0);
    struct nisa_tensor f8 = tn(0, NISA_F32, 0, 8, 0, 0, 0);
    struct nisa_insn in, good = fft(NISA_FFT_FORWARD, d8, z8, 1);

#define BAD(mutate)                                                         \
    do {                                                                    \
        in = good;                                                          \
        mutate;                                                             \
        g_assert_cmphex(run1(c, in), ==, OK | NISA_ERR_BAD_INSN);          \
    } while (0)

    g_assert_cmphex(run1(c, good), ==, OK);
    BAD(in.subop = NISA_NUM_FFT);
    BAD(in.flags = NISA_IF_SCALAR);
    BAD(in.alpha = f64bits(1));
    BAD(in.src[1] = z8);
    BAD(in.axis = 1);
    BAD(in.axis = -2);
    BAD(in.src[0] = f8);                             /* FORWARD of F32 */
    BAD(in.dst = tn(1, NISA_F32, 0, 8, 0, 0, 0));
    BAD(in.dst = tn(1, NISA_C64, 0, 7, 0, 0, 0));
    BAD(in.dst = tn(1, NISA_C64, 0, 1, 8, 0, 0));    /* ndim differs */
    BAD(in.dst = tn(0, NISA_C64, 8, 8, 0, 0, 0));    /* overlaps src0 */
    BAD((in.subop = NISA_FFT_R2C));                  /* R2C of C64 */
    BAD((in.subop = NISA_FFT_R2C, in.src[0] = f8,
         in.dst = tn(1, NISA_C64, 0, 6, 0, 0, 0)));  /* 5 or 8 bins */
    BAD((in.subop = NISA_FFT_R2C, in.src[0] = f8,
         in.dst = tn(1, NISA_F32, 0, 5, 0, 0, 0)));
    BAD((in.subop = NISA_FFT_C2R,
         in.src[0] = tn(0, NISA_C64, 0, 4, 0, 0, 0),
         in.dst = tn(1, NISA_F32, 0, 8, 0, 0, 0)));  /* 4 < 8 / 2 + 1 */
    BAD((in.subop = NISA_FFT_C2R, in.dst = tn(1, NISA_C64, 0, 8, 0, 0, 0)));
    /* Longer than NISA_FFT_MAX_LEN: one element repeated (stride 0). */
    BAD((in.src[0].shape[0] = NISA_FFT_MAX_LEN + 1, in.src[0].strides[0] = 0,
         in.dst.shape[0] = NISA_FFT_MAX_LEN + 1, in.dst.strides[0] = 0));
    /* A complex operand of another opcode is the gate's. */
    BAD(in.opcode = NISA_INSN_SORT);
    /* Empty: nothing to do. */
    in = fft(NISA_FFT_FORWARD, tn(1, NISA_C64, 0, 0, 8, 0, 0),
             tn(0, NISA_C64, 0, 0, 8, 0, 0), 1);
    in.dst.ndim = in.src[0].ndim = 2;
    in.dst.shape[1] = in.src[0].shape[1] = 8;
    in.dst.strides[0] = in.src[0].strides[0] = 8;
    in.dst.strides[1] = in.src[0].strides[1] = 1;
    g_assert_cmphex(run1(c, in), ==, OK);
    in.axis = 0;
    g_assert_cmphex(run1(c, in), ==, OK);
    /* R2C of n = 0 into one bin per line: a sum of nothing, 0. */
    {
        C32 junk[8] = { { 1, 2 }, { 3, 4 } }, got[8];

        put(c, 1, 0, junk, sizeof(junk));
        in = fft(NISA_FFT_R2C, tn(1, NISA_C64, 0, 8, 1, 0, 0),
                 tn(0, NISA_F32, 0, 8, 1, 0, 0), 1);
        in.src[0].shape[1] = 0;
        g_assert_cmphex(run1(c, in), ==, OK);
        get(c, 1, 0, got, sizeof(got));
        for (unsigned i = 0; i < 8; i++) {
            g_assert(got[i].re == 0 && got[i].im == 0);
        }
        /* C2R of n = 0: nothing to write, whatever src0's extent. */
        in = fft(NISA_FFT_C2R, tn(1, NISA_F32, 0, 8, 1, 0, 0),
                 tn(0, NISA_C64, 0, 8, 3, 0, 0), 1);
        in.dst.shape[1] = 0;
        g_assert_cmphex(run1(c, in), ==, OK);
    }
    /* Still alive. */
    g_assert_cmphex(run1(c, good), ==, OK);
#undef BAD
    core_stop(c);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/trainium/fft/lengths", test_lengths);
    qtest_add_func("/trainium/fft/long-prime", test_long_prime);
    qtest_add_func("/trainium/fft/real", test_real);
    qtest_add_func("/trainium/fft/strided", test_strided);
    qtest_add_func("/trainium/fft/batched", test_batched);
    qtest_add_func("/trainium/fft/threads", test_threads);
    qtest_add_func("/trainium/fft/bad", test_bad);
    return g_test_run();
}

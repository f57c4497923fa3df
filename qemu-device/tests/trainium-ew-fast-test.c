/*
 * QTest of the float32 UNARY functions that have a vector kernel
 * (qemu-device/trainium-ew-fast.c: exp, SiLU, sigmoid, the tanh GELU and
 * its gradient):
 * over NaNs (payloads, signs), infinities, zeros, subnormals, the largest
 * floats, the edges of the kernels' domains and a dense sweep, every path
 * gives the general engine's bits:
 *   - UNARY on contiguous float32 (the kernel, rows straight from memory),
 *   - UNARY on strided float32 (the kernel through a local block), in place,
 *   - EXPR with float32 registers (the kernel, NaN payloads kept to the store),
 * against
 *   - EXPR with double registers (a dead bf16 step keeps the program off
 *     the float32 path): the general engine's trn_ew_apply_f64() and libm,
 *   - the test's own double evaluation of the same expression, rounded once.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "trainium-core-qtest.h"

#define N 65536

static const struct {
    unsigned fn;
    const char *name;
} fns[] = {
    { NISA_UN_EXP, "exp" },
    { NISA_UN_SILU, "silu" },
    { NISA_UN_SIGMOID, "sigmoid" },
    { NISA_UN_GELU_TANH, "gelu_tanh" },
    { NISA_UN_GELU_TANH_GRAD, "gelu_tanh_grad" },
};

/*
 * The general engine's expressions (trainium-ew-ops.h), computed out of
 * line: @g hidden from the compiler so that the sign of a NaN result
 * (exp(-NaN) is -NaN in glibc) is not folded.
 */
static double __attribute__((noinline)) host_ref(unsigned fn, double x)
{
    double g;

    if (fn == NISA_UN_EXP) {
        g = exp(x);
    } else if (fn == NISA_UN_SILU) {
        g = x / (1.0 + exp(-x));
    } else if (fn == NISA_UN_SIGMOID) {
        g = 1.0 / (1.0 + exp(-x));
    } else {
        double t = tanh(0.7978845608028654 * (x + 0.044715 * x * x * x));

        g = fn == NISA_UN_GELU_TANH
            ? 0.5 * x * (1.0 + t)
            : 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * 0.7978845608028654 *
              (1.0 + 3 * 0.044715 * x * x);
    }
    asm("" : "+m"(g));
    return g;
}

/* Rounded as the card stores a float32: a NaN is the quiet NaN, signed. */
static uint32_t host_bits(double g)
{
    float f = (float)g;
    uint32_t u;

    memcpy(&u, &f, 4);
    return isnan(f) ? (u & 0x80000000u) | 0x7fc00000u : u;
}

/* The inputs: special values, then edges, then a sweep of [-12, 12]. */
static void inputs(float *x)
{
    static const uint32_t special[] = {
        0x7fc00000, 0xffc00000, 0x7fc01234, 0xffc05678, 0x7f800001,
        0xff800001, 0x7fa00000, 0x7f800000, 0xff800000, 0x00000000,
        0x80000000, 0x00000001, 0x80000001, 0x007fffff, 0x807fffff,
        0x00800000, 0x80800000, 0x7f7fffff, 0xff7fffff, 0x34000000,
        0xb4000000,
    };
    static const float edge[] = {
        8.0f, -8.0f, 100.0f, -100.0f, 88.72f, 88.7228f, 88.73f, -87.33f,
        -103.97f, -103.28f, -104.0f, -4.5f, -5.0f, -6.0f, -7.5f, 12.0f,
        -0.7518f, 50.0f, -50.0f, 1e-20f, -1e-20f, 1e-38f, 1e30f, -1e30f,
    };
    GRand *r = g_rand_new_with_seed(23);
    unsigned n = 0;

    for (unsigned i = 0; i < ARRAY_SIZE(special); i++) {
        memcpy(&x[n++], &special[i], 4);
    }
    for (unsigned i = 0; i < ARRAY_SIZE(edge); i++) {
        /* the value and its neighbours, a few ulps each way */
        for (int d = -3; d <= 3; d++) {
            uint32_t u;

            memcpy(&u, &edge[i], 4);
            u += d;
            memcpy(&x[n++], &u, 4);
        }
    }
    /* Half the rest evenly spaced, half random: the cancelling region
     * below -4 and the rounding boundaries all over are hit. */
    for (unsigned i = n; i < N; i++) {
        x[i] = i % 2 ? (float)(-12.0 + 24.0 * i / N)
                     : (float)g_rand_double_range(r, -12, 12);
    }
    g_rand_free(r);
}

static struct nisa_insn unary(unsigned fn, struct nisa_tensor d,
                              struct nisa_tensor a)
{
    return (struct nisa_insn){ .opcode = NISA_INSN_UNARY, .subop = fn,
                               .dst = d, .src = { a } };
}

/* EXPR out = fn(in); with @dead, a first step COPY to bf16 nobody reads. */
static uint32_t run_expr(Core *c, unsigned fn, struct nisa_tensor out,
                         struct nisa_tensor in, bool dead)
{
    struct nisa_insn code[2] = { { .opcode = NISA_INSN_EXPR,
                                   .subop = dead ? 2 : 1, .axis = 1,
                                   .dst = out, .src = { in } } };
    struct nisa_expr_steps rec = { .opcode = NISA_INSN_EXPR_DATA,
                                   .subop = NISA_EXPR_DATA_STEPS, .dst = out };
    unsigned s = 0;

    if (dead) {
        rec.step[s++] = (struct nisa_expr_step){ .op = NISA_INSN_COPY,
            .dtype = NISA_BF16, .dst = 2, .src = { 0 } };
    }
    rec.step[s] = (struct nisa_expr_step){ .op = NISA_INSN_UNARY,
        .subop = fn, .dtype = NISA_F32, .dst = 1, .src = { 0 } };
    memcpy(&code[1], &rec, sizeof(rec));
    return run_kernel(c, code, 2);
}

static void check_same(const char *what, const char *fn, const float *x,
                       const uint32_t *want, const uint32_t *got)
{
    for (unsigned i = 0; i < N; i++) {
        if (want[i] != got[i]) {
            uint32_t xb;

            memcpy(&xb, &x[i], 4);
            g_test_message("%s %s: x = %a (0x%08x): want 0x%08x, got 0x%08x",
                           what, fn, x[i], xb, want[i], got[i]);
            g_assert_cmphex(got[i], ==, want[i]);
        }
    }
}

static void test_same_bits(void)
{
    Core *c = core_start();
    g_autofree float *x = g_new(float, N);
    g_autofree float *spread = g_new0(float, 2 * N);
    g_autofree uint32_t *host = g_new(uint32_t, N);
    g_autofree uint32_t *gen = g_new(uint32_t, N);
    g_autofree uint32_t *got = g_new(uint32_t, 3 * N);
    struct nisa_tensor tx = tn(0, NISA_F32, 0, N, 0, 0, 0);
    struct nisa_tensor tgen = tn(1, NISA_F32, 0, N, 0, 0, 0);
    struct nisa_tensor tout = tn(1, NISA_F32, 1 * MiB, N, 0, 0, 0);
    /* x at every other float of slot 2; dst every third float of slot 3 */
    struct nisa_tensor ts = tn(2, NISA_F32, 0, N, 0, 0, 0);
    struct nisa_tensor td = tn(3, NISA_F32, 0, N, 0, 0, 0);

    ts.strides[0] = 2;
    td.strides[0] = 3;
    inputs(x);
    for (unsigned i = 0; i < N; i++) {
        spread[2 * i] = x[i];
    }
    put(c, 0, 0, x, N * 4);
    for (unsigned f = 0; f < ARRAY_SIZE(fns); f++) {
        unsigned fn = fns[f].fn;

        for (unsigned i = 0; i < N; i++) {
            host[i] = host_bits(host_ref(fn, x[i]));
        }
        /* The general engine: EXPR with double registers. */
        g_assert_cmphex(run_expr(c, fn, tgen, tx, true), ==, OK);
        get(c, 1, 0, gen, N * 4);
        check_same("general engine vs host", fns[f].name, x, host, gen);

        /* UNARY, contiguous. */
        g_assert_cmphex(run1(c, unary(fn, tout, tx)), ==, OK);
        get(c, 1, 1 * MiB, got, N * 4);
        check_same("unary contiguous", fns[f].name, x, gen, got);

        /* UNARY, strided source and destination. */
        put(c, 2, 0, spread, 2 * N * 4);
        g_assert_cmphex(run1(c, unary(fn, td, ts)), ==, OK);
        get(c, 3, 0, got, 3 * N * 4);
        for (unsigned i = 0; i < N; i++) {
            got[i] = got[3 * i];
        }
        check_same("unary strided", fns[f].name, x, gen, got);

        /* UNARY in place, strided. */
        g_assert_cmphex(run1(c, unary(fn, ts, ts)), ==, OK);
        get(c, 2, 0, got, 2 * N * 4);
        for (unsigned i = 0; i < N; i++) {
            got[i] = got[2 * i];
        }
        check_same("unary in place", fns[f].name, x, gen, got);

        /* EXPR with float32 registers. */
        g_assert_cmphex(run_expr(c, fn, tout, tx, false), ==, OK);
        get(c, 1, 1 * MiB, got, N * 4);
        check_same("expr float32", fns[f].name, x, gen, got);
    }
    core_stop(c);
}

/* A non-trivial result: the kernels ran (not a copy, not all NaN). */
static void test_values(void)
{
    Core *c = core_start();
    float x[8] = { 0.5f, -1.0f, 2.0f, -3.0f, 0.0f, 1.0f, -0.25f, 3.5f };
    float o[8];

    put(c, 0, 0, x, sizeof(x));
    for (unsigned f = 0; f < ARRAY_SIZE(fns); f++) {
        g_assert_cmphex(run1(c, unary(fns[f].fn, tn(1, NISA_F32, 0, 8, 0, 0, 0),
                                      tn(0, NISA_F32, 0, 8, 0, 0, 0))), ==, OK);
        get(c, 1, 0, o, sizeof(o));
        for (unsigned i = 0; i < 8; i++) {
            double w = fns[f].fn == NISA_UN_EXP ? exp(x[i])
                     : fns[f].fn == NISA_UN_SILU ? x[i] / (1 + exp(-x[i]))
                     : fns[f].fn == NISA_UN_SIGMOID ? 1 / (1 + exp(-x[i]))
                     : fns[f].fn == NISA_UN_GELU_TANH
                     ? 0.5 * x[i] * (1 + erf(x[i] / sqrt(2.0)))
                     : 0.5 * (1 + erf(x[i] / sqrt(2.0))) +
                       x[i] * exp(-0.5 * x[i] * x[i]) / sqrt(2 * M_PI);

            /* tanh GELU within 1e-3 of the erf one over this range */
            g_assert_cmpfloat(fabs(o[i] - w), <=, 1e-3 * (1 + fabs(w)));
        }
    }
    core_stop(c);
}

/*
 * Every length from 1 to 40 and a few offsets, so that the kernels' groups
 * (16 elements, then 4, then one by one) end everywhere, with elements
 * the vector path leaves to the general expression (NaN, infinities,
 * large and cancelling values) at every position of a group: the host's
 * bits, element by element.
 */
static void test_lengths(void)
{
    static const float odd[] = {
        NAN, -INFINITY, INFINITY, 1e30f, -1e30f, -5.5f, -7.25f, 99.0f,
        -104.5f, -100.5f, 88.73f, -0.0f,
    };
    Core *c = core_start();
    float x[64], o[64];
    GRand *r = g_rand_new_with_seed(5);

    for (unsigned i = 0; i < 64; i++) {
        x[i] = i % 5 == 2 ? odd[(i / 5) % ARRAY_SIZE(odd)]
                          : (float)g_rand_double_range(r, -6, 6);
    }
    g_rand_free(r);
    put(c, 0, 0, x, sizeof(x));
    for (unsigned f = 0; f < ARRAY_SIZE(fns); f++) {
        for (unsigned n = 1; n <= 40; n++) {
            for (unsigned off = 0; off < 24; off += 7) {
                struct nisa_tensor ti = tn(0, NISA_F32, off * 4, n, 0, 0, 0);
                struct nisa_tensor to = tn(1, NISA_F32, 0, n, 0, 0, 0);

                g_assert_cmphex(run1(c, unary(fns[f].fn, to, ti)), ==, OK);
                get(c, 1, 0, o, n * 4);
                for (unsigned i = 0; i < n; i++) {
                    uint32_t got;

                    memcpy(&got, &o[i], 4);
                    if (got != host_bits(host_ref(fns[f].fn, x[off + i]))) {
                        g_test_message("%s, %u elements from %u: x = %a",
                                       fns[f].name, n, off, x[off + i]);
                    }
                    g_assert_cmphex(got, ==,
                                    host_bits(host_ref(fns[f].fn, x[off + i])));
                }
            }
        }
    }
    core_stop(c);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/trainium/ew-fast/same-bits", test_same_bits);
    qtest_add_func("/trainium/ew-fast/values", test_values);
    qtest_add_func("/trainium/ew-fast/lengths", test_lengths);
    return g_test_run();
}

/*
 * qtest for the RANDOM and TIMESTAMP instructions of the virtual Trainium
 * card (docs/hardware.md, "Random numbers", "Timestamps"): Philox4x32-10
 * against the published Random123 known answers and a host reference,
 * independence from chunking and strides, the distributions' recipes and
 * moments, the card's clock, and the errors.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "trainium-core-qtest.h"

/* ---- a host reference of Philox4x32-10 (Random123's philox4x32) ---- */

static void philox(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4])
{
    uint32_t c[4] = { ctr[0], ctr[1], ctr[2], ctr[3] }, k[2] = { key[0], key[1] };

    for (int r = 0; r < 10; r++) {
        uint64_t a = (uint64_t)0xD2511F53u * c[0], b = (uint64_t)0xCD9E8D57u * c[2];
        uint32_t n[4] = { (uint32_t)(b >> 32) ^ c[1] ^ k[0], (uint32_t)b,
                          (uint32_t)(a >> 32) ^ c[3] ^ k[1], (uint32_t)a };

        memcpy(c, n, sizeof(c));
        k[0] += 0x9E3779B9u;
        k[1] += 0xBB67AE85u;
    }
    memcpy(out, c, sizeof(c));
}

/* The words of element @i of a RANDOM with @seed and @offset. */
static void words(uint64_t seed, uint64_t offset, uint64_t i, uint32_t w[4])
{
    uint64_t ctr = offset + i;
    uint32_t c[4] = { (uint32_t)ctr, (uint32_t)(ctr >> 32), 0, 0 };
    uint32_t k[2] = { (uint32_t)seed, (uint32_t)(seed >> 32) };

    philox(c, k, w);
}

static struct nisa_insn rng(unsigned dist, struct nisa_tensor dst, uint64_t seed,
                            uint64_t offset)
{
    return (struct nisa_insn){ .opcode = NISA_INSN_RANDOM, .subop = dist,
                               .scalar = seed, .alpha = offset, .dst = dst };
}

/* The reference itself against Random123's published known answers. */
static void test_reference_kat(void)
{
    static const struct {
        uint32_t ctr[4], key[2], out[4];
    } kat[] = {
        { { 0, 0, 0, 0 }, { 0, 0 },
          { 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8 } },
        { { ~0u, ~0u, ~0u, ~0u }, { ~0u, ~0u },
          { 0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd } },
        { { 0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344 },
          { 0xa4093822, 0x299f31d0 },
          { 0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1 } },
    };
    uint32_t out[4];

    for (size_t i = 0; i < ARRAY_SIZE(kat); i++) {
        philox(kat[i].ctr, kat[i].key, out);
        g_assert(!memcmp(out, kat[i].out, sizeof(out)));
    }
}

/* The card: the KAT, and bits of every integer type against the reference. */
static void test_bits(void)
{
    Core *c = core_start();
    enum { N = 3000 };
    g_autofree int64_t *q = g_new(int64_t, N);
    g_autofree int32_t *l = g_new(int32_t, N);
    g_autofree uint8_t *b = g_new(uint8_t, N);
    const uint64_t seed = 0x0123456789abcdefull, off = 0xfffffffffffff000ull;
    uint32_t w[4];

    /* Key 0, counter 0: w0 = 6627e8d5, w1 = e169c58d (Random123). */
    g_assert_cmphex(run1(c, rng(NISA_RNG_BITS, tn(0, NISA_I64, 0, 1, 0, 0, 0),
                                0, 0)), ==, OK);
    get(c, 0, 0, q, 8);
    g_assert_cmphex((uint64_t)q[0], ==, 0xe169c58d6627e8d5ull);

    /* Across chunks and the counter's wrap past 2^64 - 1. */
    g_assert_cmphex(run1(c, rng(NISA_RNG_BITS, tn(0, NISA_I64, 0, N, 0, 0, 0),
                                seed, off)), ==, OK);
    g_assert_cmphex(run1(c, rng(NISA_RNG_BITS, tn(1, NISA_I32, 0, N, 0, 0, 0),
                                seed, off)), ==, OK);
    g_assert_cmphex(run1(c, rng(NISA_RNG_BITS, tn(2, NISA_BOOL, 0, N, 0, 0, 0),
                                seed, off)), ==, OK);
    get(c, 0, 0, q, N * 8);
    get(c, 1, 0, l, N * 4);
    get(c, 2, 0, b, N);
    for (uint64_t i = 0; i < N; i++) {
        words(seed, off, i, w);
        g_assert_cmphex((uint64_t)q[i], ==, (uint64_t)w[1] << 32 | w[0]);
        g_assert_cmphex((uint32_t)l[i], ==, w[0]);
        g_assert_cmpuint(b[i], ==, w[0] & 1);
    }
    core_stop(c);
}

/*
 * Element i depends on (seed, offset + i) only: one draw of N equals two
 * of N/2 at offsets 0 and N/2, and a transposed destination gets the
 * values by its own row-major index.
 */
static void test_determinism(void)
{
    Core *c = core_start();
    enum { R = 70, C = 50, N = R * C };
    g_autofree int64_t *whole = g_new(int64_t, N);
    g_autofree int64_t *halves = g_new(int64_t, N);
    g_autofree int64_t *tr = g_new(int64_t, N);
    struct nisa_tensor t;

    g_assert_cmphex(run1(c, rng(NISA_RNG_BITS, tn(0, NISA_I64, 0, N, 0, 0, 0),
                                42, 0)), ==, OK);
    g_assert_cmphex(run1(c, rng(NISA_RNG_BITS, tn(1, NISA_I64, 0, N / 2, 0, 0, 0),
                                42, 0)), ==, OK);
    g_assert_cmphex(run1(c, rng(NISA_RNG_BITS,
                                tn(1, NISA_I64, N / 2 * 8, N / 2, 0, 0, 0),
                                42, N / 2)), ==, OK);
    get(c, 0, 0, whole, N * 8);
    get(c, 1, 0, halves, N * 8);
    g_assert(!memcmp(whole, halves, N * 8));

    /* dst [R, C] stored column-major: element (r, col) at col * R + r. */
    t = tn(2, NISA_I64, 0, R, C, 0, 0);
    t.strides[0] = 1;
    t.strides[1] = R;
    g_assert_cmphex(run1(c, rng(NISA_RNG_BITS, t, 42, 0)), ==, OK);
    get(c, 2, 0, tr, N * 8);
    for (int r = 0; r < R; r++) {
        for (int col = 0; col < C; col++) {
            g_assert_cmphex(tr[col * R + r], ==, whole[r * C + col]);
        }
    }
    /* Another seed gives other numbers. */
    g_assert_cmphex(run1(c, rng(NISA_RNG_BITS, tn(1, NISA_I64, 0, N, 0, 0, 0),
                                43, 0)), ==, OK);
    get(c, 1, 0, halves, N * 8);
    g_assert(memcmp(whole, halves, N * 8));
    core_stop(c);
}

/* UNIFORM: the exact recipe per dtype, in [0, 1), mean 1/2. */
static void test_uniform(void)
{
    Core *c = core_start();
    enum { N = 100000 };
    g_autofree float *f = g_new(float, N);
    g_autofree uint16_t *h = g_new(uint16_t, N);
    double sf = 0, sh = 0;
    uint32_t w[4];

    g_assert_cmphex(run1(c, rng(NISA_RNG_UNIFORM, tn(0, NISA_F32, 0, N, 0, 0, 0),
                                7, 100)), ==, OK);
    g_assert_cmphex(run1(c, rng(NISA_RNG_UNIFORM, tn(1, NISA_BF16, 0, N, 0, 0, 0),
                                7, 100)), ==, OK);
    get(c, 0, 0, f, N * 4);
    get(c, 1, 0, h, N * 2);
    for (uint64_t i = 0; i < N; i++) {
        uint32_t hb = (uint32_t)h[i] << 16;
        float hf;

        memcpy(&hf, &hb, 4);
        words(7, 100, i, w);
        g_assert(f[i] == (float)ldexp(w[0] >> 8, -24));
        g_assert(hf == (float)ldexp(w[0] >> 24, -8));
        g_assert(f[i] >= 0 && f[i] < 1 && hf >= 0 && hf < 1);
        sf += f[i];
        sh += hf;
    }
    /* The mean's standard error is 1 / sqrt(12 N) < 0.001. */
    g_assert_cmpfloat(fabs(sf / N - 0.5), <, 0.005);
    g_assert_cmpfloat(fabs(sh / N - 0.5 + 1.0 / 512), <, 0.005);
    core_stop(c);
}

/* NORMAL: Box-Muller as specified; mean 0, variance 1. */
static void test_normal(void)
{
    Core *c = core_start();
    enum { N = 100000 };
    g_autofree float *f = g_new(float, N);
    double s = 0, s2 = 0;
    uint32_t w[4];

    g_assert_cmphex(run1(c, rng(NISA_RNG_NORMAL, tn(0, NISA_F32, 0, N, 0, 0, 0),
                                2024, 1ull << 40)), ==, OK);
    get(c, 0, 0, f, N * 4);
    for (uint64_t i = 0; i < N; i++) {
        double u1, u2, want;

        words(2024, 1ull << 40, i, w);
        u1 = ((double)w[0] + 1) * 0x1p-32;
        u2 = w[1] * 0x1p-32;
        want = sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
        g_assert_cmpfloat_with_epsilon(f[i], want, 1e-6 * fmax(1, fabs(want)));
        s += f[i];
        s2 += (double)f[i] * f[i];
    }
    /* Standard errors: mean 0.003, variance 0.0045. */
    g_assert_cmpfloat(fabs(s / N), <, 0.02);
    g_assert_cmpfloat(fabs(s2 / N - (s / N) * (s / N) - 1), <, 0.03);
    core_stop(c);
}

static void test_random_errors(void)
{
    Core *c = core_start();
    struct nisa_insn with_src = rng(NISA_RNG_UNIFORM, tn(0, NISA_F32, 0, 4, 0, 0, 0),
                                    1, 0);
    struct nisa_insn flags = with_src, axis = with_src;
    const float guard[4] = { 5, 6, 7, 8 };
    float back[4];

    with_src.src[1] = tn(1, NISA_F32, 0, 4, 0, 0, 0);
    flags.flags = NISA_IF_SCALAR;
    axis.axis = 1;
    put(c, 0, 0, guard, sizeof(guard));
    g_assert_cmphex(run1(c, rng(NISA_RNG_UNIFORM, tn(0, NISA_I32, 0, 4, 0, 0, 0),
                                1, 0)), ==, OK | NISA_ERR_BAD_INSN);
    g_assert_cmphex(run1(c, rng(NISA_RNG_NORMAL, tn(0, NISA_I64, 0, 4, 0, 0, 0),
                                1, 0)), ==, OK | NISA_ERR_BAD_INSN);
    g_assert_cmphex(run1(c, rng(NISA_RNG_BITS, tn(0, NISA_F32, 0, 4, 0, 0, 0),
                                1, 0)), ==, OK | NISA_ERR_BAD_INSN);
    g_assert_cmphex(run1(c, rng(NISA_RNG_BITS, tn(0, NISA_BF16, 0, 4, 0, 0, 0),
                                1, 0)), ==, OK | NISA_ERR_BAD_INSN);
    g_assert_cmphex(run1(c, rng(NISA_NUM_RANDOM, tn(0, NISA_F32, 0, 4, 0, 0, 0),
                                1, 0)), ==, OK | NISA_ERR_BAD_INSN);
    g_assert_cmphex(run1(c, with_src), ==, OK | NISA_ERR_BAD_INSN);
    g_assert_cmphex(run1(c, flags), ==, OK | NISA_ERR_BAD_INSN);
    g_assert_cmphex(run1(c, axis), ==, OK | NISA_ERR_BAD_INSN);
    c->slots[0].access = NISA_ACCESS_READ;
    g_assert_cmphex(run1(c, rng(NISA_RNG_UNIFORM, tn(0, NISA_F32, 0, 4, 0, 0, 0),
                                1, 0)), ==, OK | NISA_ERR_ACCESS);
    /* Nothing was written by the failed instructions. */
    get(c, 0, 0, back, sizeof(back));
    g_assert(!memcmp(back, guard, sizeof(back)));
    core_stop(c);
}

static struct nisa_insn stamp(struct nisa_tensor dst)
{
    return (struct nisa_insn){ .opcode = NISA_INSN_TIMESTAMP, .dst = dst };
}

/*
 * The card's clock is QEMU_CLOCK_VIRTUAL. Under qtest that clock moves only
 * when the test steps it, which makes it exact here: a TIMESTAMP reads
 * the value qtest_clock_step() reports, and a step of d moves it by d.
 */
static void test_timestamp(void)
{
    Core *c = core_start();
    struct nisa_insn k[3] = {
        stamp(tn(0, NISA_I64, 0, 1, 0, 0, 0)),
        rng(NISA_RNG_NORMAL, tn(1, NISA_F32, 0, 500000, 0, 0, 0), 1, 0),
        stamp(tn(0, NISA_I64, 8, 1, 1, 0, 0)),
    };
    int64_t now, t[2], later;

    now = qtest_clock_step(c->t->qts, 1000);
    g_assert_cmphex(run_kernel(c, k, 3), ==, OK);
    get(c, 0, 0, t, sizeof(t));
    g_assert_cmpint(t[0], ==, now);
    g_assert_cmpint(t[1], >=, t[0]);
    now = qtest_clock_step(c->t->qts, 123456789);
    g_assert_cmphex(run1(c, k[0]), ==, OK);
    get(c, 0, 0, &later, 8);
    g_assert_cmpint(later, ==, now);
    g_assert_cmpint(later - t[1], ==, 123456789);
    core_stop(c);
}

static void test_timestamp_errors(void)
{
    Core *c = core_start();
    struct nisa_insn f32 = stamp(tn(0, NISA_F32, 0, 1, 0, 0, 0));
    struct nisa_insn two = stamp(tn(0, NISA_I64, 0, 2, 0, 0, 0));
    struct nisa_insn sub = stamp(tn(0, NISA_I64, 0, 1, 0, 0, 0));
    struct nisa_insn src = sub, scalar = sub, bcast = sub;
    const int64_t guard = 77;
    int64_t back;

    sub.subop = 1;
    src.src[0] = tn(1, NISA_I64, 0, 1, 0, 0, 0);
    scalar.scalar = 1;
    bcast.dst.shape[0] = 4;     /* four elements, all at one address */
    bcast.dst.strides[0] = 0;
    put(c, 0, 0, &guard, 8);
    g_assert_cmphex(run1(c, f32), ==, OK | NISA_ERR_BAD_INSN);
    g_assert_cmphex(run1(c, two), ==, OK | NISA_ERR_BAD_INSN);
    g_assert_cmphex(run1(c, sub), ==, OK | NISA_ERR_BAD_INSN);
    g_assert_cmphex(run1(c, src), ==, OK | NISA_ERR_BAD_INSN);
    g_assert_cmphex(run1(c, scalar), ==, OK | NISA_ERR_BAD_INSN);
    g_assert_cmphex(run1(c, bcast), ==, OK | NISA_ERR_BAD_INSN);
    g_assert_cmphex(run1(c, stamp(tn(7, NISA_I64, 0, 1, 0, 0, 0))), ==,
                    OK | NISA_ERR_BAD_SLOT);
    g_assert_cmphex(run1(c, stamp(tn(0, NISA_I64, SLOT_SIZE, 1, 0, 0, 0))), ==,
                    OK | NISA_ERR_SLOT_RANGE);
    c->slots[0].access = NISA_ACCESS_READ;
    g_assert_cmphex(run1(c, stamp(tn(0, NISA_I64, 0, 1, 0, 0, 0))), ==,
                    OK | NISA_ERR_ACCESS);
    get(c, 0, 0, &back, 8);
    g_assert_cmpint(back, ==, guard);
    core_stop(c);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/trainium/random/reference-kat", test_reference_kat);
    qtest_add_func("/trainium/random/bits", test_bits);
    qtest_add_func("/trainium/random/determinism", test_determinism);
    qtest_add_func("/trainium/random/uniform", test_uniform);
    qtest_add_func("/trainium/random/normal", test_normal);
    qtest_add_func("/trainium/random/errors", test_random_errors);
    qtest_add_func("/trainium/timestamp/clock", test_timestamp);
    qtest_add_func("/trainium/timestamp/errors", test_timestamp_errors);
    return g_test_run();
}

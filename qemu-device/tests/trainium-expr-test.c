/*
 * QTest of the EXPR instruction: a program gives the bits of its steps run
 * as separate instructions (float32, bf16 and f16 intermediates, integer
 * steps, broadcast inputs, a strided dst, more inputs and steps than one
 * instruction holds), and malformed programs are BAD_INSN, not a crash.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "trainium-core-qtest.h"

#define R 3
#define C 301              /* R * C crosses several 256-element blocks */
#define N (R * C)

/* Encode an EXPR of @nin inputs and @nst steps into @code; its length. */
static unsigned expr_encode(struct nisa_insn *code, struct nisa_tensor dst,
                            const struct nisa_tensor *in, unsigned nin,
                            const struct nisa_expr_step *st, unsigned nst)
{
    unsigned len = nisa_expr_length(nst, nin), at = 1;

    memset(code, 0, len * sizeof(*code));
    code[0].opcode = NISA_INSN_EXPR;
    code[0].subop = nst;
    code[0].axis = nin;
    code[0].dst = dst;
    for (unsigned i = 0; i < nin && i < 3; i++) {
        code[0].src[i] = in[i];
    }
    for (unsigned i = 3; i < nin; i += 4, at++) {
        code[at].opcode = NISA_INSN_EXPR_DATA;
        code[at].subop = NISA_EXPR_DATA_INPUTS;
        for (unsigned j = 0; j < 4 && i + j < nin; j++) {
            if (j == 0) {
                code[at].dst = in[i];
            } else {
                code[at].src[j - 1] = in[i + j];
            }
        }
    }
    for (unsigned s = 0; s < nst; s += NISA_EXPR_STEPS_PER_DATA, at++) {
        struct nisa_expr_steps rec = { .opcode = NISA_INSN_EXPR_DATA,
                                       .subop = NISA_EXPR_DATA_STEPS,
                                       .dst = dst };

        for (unsigned j = 0; j < NISA_EXPR_STEPS_PER_DATA && s + j < nst;
             j++) {
            rec.step[j] = st[s + j];
        }
        memcpy(&code[at], &rec, sizeof(rec));
    }
    g_assert_cmpuint(at, ==, len);
    return len;
}

static struct nisa_expr_step step(uint8_t op, uint16_t subop, uint8_t dtype,
                                  uint8_t dst, uint8_t a, uint8_t b, uint8_t c)
{
    return (struct nisa_expr_step){ .op = op, .subop = subop, .dtype = dtype,
                                    .dst = dst, .src = { a, b, c } };
}

static struct nisa_insn insn(uint16_t op, uint16_t subop, struct nisa_tensor d,
                             struct nisa_tensor a, struct nisa_tensor b)
{
    return (struct nisa_insn){ .opcode = op, .subop = subop, .dst = d,
                               .src = { a, b } };
}

/* @t with dim @d broadcast (stride 0) to @n. */
static struct nisa_tensor bcast(struct nisa_tensor t, unsigned d, uint32_t n)
{
    t.shape[d] = n;
    t.strides[d] = 0;
    return t;
}

/* The bytes of @n elements at slot 2 offsets @a and @b are the same. */
static void assert_same(Core *c, uint64_t a, uint64_t b, size_t bytes)
{
    g_autofree uint8_t *x = g_malloc(bytes);
    g_autofree uint8_t *y = g_malloc(bytes);

    get(c, 2, a, x, bytes);
    get(c, 2, b, y, bytes);
    g_assert_cmpmem(x, bytes, y, bytes);
}

/*
 * gelu_tanh(x * 0.7 + 0.5 * b), float32, b a row [C] broadcast over the
 * rows: against MUL, ADD, GELU through float32 temporaries.
 */
static void test_f32_chain(void)
{
    Core *c = core_start();
    float x[N], b[C];
    struct nisa_tensor tx = tn(0, NISA_F32, 0, R, C, 0, 0);
    struct nisa_tensor tb = tn(1, NISA_F32, 0, C, 0, 0, 0);
    struct nisa_tensor out = tn(2, NISA_F32, 0, R, C, 0, 0);
    struct nisa_tensor ref = tn(2, NISA_F32, 1 * MiB, R, C, 0, 0);
    struct nisa_tensor t1 = tn(3, NISA_F32, 0, R, C, 0, 0);
    struct nisa_tensor t2 = tn(3, NISA_F32, 1 * MiB, R, C, 0, 0);
    struct nisa_tensor rb = tn(1, NISA_F32, 0, 1, C, 0, 0);
    struct nisa_tensor in[2] = { tx, tb };
    struct nisa_expr_step st[3];
    struct nisa_insn code[8], seq[3];
    unsigned n;

    randf(x, N, 1);
    randf(b, C, 2);
    put(c, 0, 0, x, sizeof(x));
    put(c, 1, 0, b, sizeof(b));
    st[0] = step(NISA_INSN_BINARY, NISA_BIN_MUL, NISA_F32, 2, 0, 0, 0);
    st[0].flags = NISA_IF_SCALAR;
    st[0].scalar = f64bits(0.7);
    st[1] = step(NISA_INSN_BINARY, NISA_BIN_ADD, NISA_F32, 2, 2, 1, 0);
    st[1].alpha = f64bits(0.5);
    st[2] = step(NISA_INSN_UNARY, NISA_UN_GELU_TANH, NISA_F32, 3, 2, 0, 0);
    n = expr_encode(code, out, in, 2, st, 3);
    g_assert_cmpuint(n, ==, 2);
    g_assert_cmphex(run_kernel(c, code, n), ==, OK);

    seq[0] = insn(NISA_INSN_BINARY, NISA_BIN_MUL, t1, tx, (struct nisa_tensor){});
    seq[0].flags = NISA_IF_SCALAR;
    seq[0].scalar = f64bits(0.7);
    seq[1] = insn(NISA_INSN_BINARY, NISA_BIN_ADD, t2, t1, bcast(rb, 0, R));
    seq[1].alpha = f64bits(0.5);
    seq[2] = insn(NISA_INSN_UNARY, NISA_UN_GELU_TANH, ref, t2,
                  (struct nisa_tensor){});
    g_assert_cmphex(run_kernel(c, seq, 3), ==, OK);
    assert_same(c, 0, 1 * MiB, sizeof(x));

    /* Not a copy of an input: the program really ran. */
    {
        float o[N];

        get(c, 2, 0, o, sizeof(o));
        g_assert_cmpfloat(o[5], !=, x[5]);
        g_assert_true(fabsf(o[5] - 0.5f * (x[5] * 0.7f + 0.5f * b[5]) *
                      (1 + tanhf(0.7978845608f * (x[5] * 0.7f + 0.5f * b[5] +
                      0.044715f * powf(x[5] * 0.7f + 0.5f * b[5], 3))))) <
                      1e-4f);
    }
    core_stop(c);
}

/*
 * Each of +, -, *, / in every form float32 registers compute in double
 * (alpha not 1, a scalar float32 cannot hold, reversed, and the exact
 * forms beside them): one-step programs against the instruction itself.
 */
static void test_f32_arith_forms(void)
{
    static const uint16_t ops[] = { NISA_BIN_ADD, NISA_BIN_SUB, NISA_BIN_MUL,
                                    NISA_BIN_DIV };
    static const struct {
        uint32_t flags;
        double scalar, alpha;
    } forms[] = {
        { 0, 0, 1.0 }, { 0, 0, 0.3 }, { NISA_IF_REVERSE, 0, 0.3 },
        { NISA_IF_SCALAR, 0.9, 1.0 }, { NISA_IF_SCALAR, 0.5, 1.0 },
        { NISA_IF_SCALAR, 0.9, -0.1 },
        { NISA_IF_SCALAR | NISA_IF_REVERSE, 0.9, 1.0 },
        { NISA_IF_SCALAR | NISA_IF_REVERSE, 1e-3, 0.7 },
    };
    Core *c = core_start();
    float x[N], y[N];
    struct nisa_tensor tx = tn(0, NISA_F32, 0, R, C, 0, 0);
    struct nisa_tensor ty = tn(1, NISA_F32, 0, R, C, 0, 0);
    struct nisa_tensor out = tn(2, NISA_F32, 0, R, C, 0, 0);
    struct nisa_tensor ref = tn(2, NISA_F32, 1 * MiB, R, C, 0, 0);

    randf(x, N, 5);
    randf(y, N, 6);
    put(c, 0, 0, x, sizeof(x));
    put(c, 1, 0, y, sizeof(y));
    for (unsigned o = 0; o < ARRAY_SIZE(ops); o++) {
        for (unsigned f = 0; f < ARRAY_SIZE(forms); f++) {
            bool scalar = forms[f].flags & NISA_IF_SCALAR;
            struct nisa_tensor in[2] = { tx, ty };
            struct nisa_expr_step st = step(NISA_INSN_BINARY, ops[o], NISA_F32,
                                            2, 0, scalar ? 0 : 1, 0);
            struct nisa_insn code[4], one;
            unsigned n;

            if (ops[o] == NISA_BIN_MUL || ops[o] == NISA_BIN_DIV) {
                if (forms[f].alpha != 1.0) {
                    continue;   /* alpha is +'s and -'s */
                }
            }
            st.flags = forms[f].flags;
            st.scalar = f64bits(forms[f].scalar);
            st.alpha = f64bits(forms[f].alpha);
            n = expr_encode(code, out, in, scalar ? 1 : 2, &st, 1);
            g_assert_cmphex(run_kernel(c, code, n), ==, OK);
            one = insn(NISA_INSN_BINARY, ops[o], ref, tx,
                       scalar ? (struct nisa_tensor){} : ty);
            one.flags = forms[f].flags;
            one.scalar = f64bits(forms[f].scalar);
            one.alpha = f64bits(forms[f].alpha);
            g_assert_cmphex(run_kernel(c, &one, 1), ==, OK);
            assert_same(c, 0, 1 * MiB, sizeof(x));
        }
    }
    core_stop(c);
}

/*
 * exp rounded to bf16, times a row rounded to f16, plus x into float32:
 * the intermediates' roundings happen inside the program too. The dst is
 * strided (every other element of a transposed buffer).
 */
static void test_low_precision_strided(void)
{
    Core *c = core_start();
    float x[N], w[C];
    struct nisa_tensor tx = tn(0, NISA_F32, 0, R, C, 0, 0);
    struct nisa_tensor tw = tn(1, NISA_F32, 0, 1, C, 0, 0);
    struct nisa_tensor out = tn(2, NISA_F32, 0, R, C, 0, 0);
    struct nisa_tensor ref = tn(2, NISA_F32, 1 * MiB, R, C, 0, 0);
    struct nisa_tensor t1 = tn(3, NISA_BF16, 0, R, C, 0, 0);
    struct nisa_tensor t2 = tn(3, NISA_F16, 1 * MiB, R, C, 0, 0);
    struct nisa_tensor in[2] = { tx, tw };
    struct nisa_expr_step st[3];
    struct nisa_insn code[8], seq[3];
    unsigned n;

    /* dst[i][j] at (j * R + i) * 2: transposed, every other element. */
    out.strides[0] = 2;
    out.strides[1] = 2 * R;
    ref.strides[0] = 2;
    ref.strides[1] = 2 * R;
    randf(x, N, 3);
    randf(w, C, 4);
    put(c, 0, 0, x, sizeof(x));
    put(c, 1, 0, w, sizeof(w));
    st[0] = step(NISA_INSN_UNARY, NISA_UN_EXP, NISA_BF16, 5, 0, 0, 0);
    st[1] = step(NISA_INSN_BINARY, NISA_BIN_MUL, NISA_F16, 5, 5, 1, 0);
    st[2] = step(NISA_INSN_BINARY, NISA_BIN_ADD, NISA_F32, 9, 5, 0, 0);
    st[2].alpha = f64bits(1.0);
    n = expr_encode(code, out, in, 2, st, 3);
    g_assert_cmphex(run_kernel(c, code, n), ==, OK);

    seq[0] = insn(NISA_INSN_UNARY, NISA_UN_EXP, t1, tx, (struct nisa_tensor){});
    seq[1] = insn(NISA_INSN_BINARY, NISA_BIN_MUL, t2, t1, bcast(tw, 0, R));
    seq[2] = insn(NISA_INSN_BINARY, NISA_BIN_ADD, ref, t2, tx);
    seq[2].alpha = f64bits(1.0);
    g_assert_cmphex(run_kernel(c, seq, 3), ==, OK);
    assert_same(c, 0, 1 * MiB, 2 * N * sizeof(float));

    /* Without the bf16 rounding, the result differs somewhere. */
    st[0].dtype = NISA_F32;
    st[1].dtype = NISA_F32;
    n = expr_encode(code, out, in, 2, st, 3);
    g_assert_cmphex(run_kernel(c, code, n), ==, OK);
    {
        g_autofree float *a = g_new(float, 2 * N);
        g_autofree float *b = g_new(float, 2 * N);

        get(c, 2, 0, a, 2 * N * sizeof(float));
        get(c, 2, 1 * MiB, b, 2 * N * sizeof(float));
        g_assert_true(memcmp(a, b, 2 * N * sizeof(float)) != 0);
    }
    core_stop(c);
}

/*
 * Integer and boolean steps: where(a > b, float(a + 3 b), 0.25) * x, with
 * a + 3 b wrapping in int32 as the integer BINARY does.
 */
static void test_integer_where(void)
{
    Core *c = core_start();
    int32_t a[N], b[N];
    float x[N];
    struct nisa_tensor ta = tn(0, NISA_I32, 0, N, 0, 0, 0);
    struct nisa_tensor tb = tn(0, NISA_I32, 1 * MiB, N, 0, 0, 0);
    struct nisa_tensor tx = tn(1, NISA_F32, 0, N, 0, 0, 0);
    struct nisa_tensor out = tn(2, NISA_F32, 0, N, 0, 0, 0);
    struct nisa_tensor ref = tn(2, NISA_F32, 1 * MiB, N, 0, 0, 0);
    struct nisa_tensor tc = tn(3, NISA_BOOL, 0, N, 0, 0, 0);
    struct nisa_tensor ti = tn(3, NISA_I32, 64 * KiB, N, 0, 0, 0);
    struct nisa_tensor tf = tn(3, NISA_F32, 128 * KiB, N, 0, 0, 0);
    struct nisa_tensor tk = tn(3, NISA_F32, 192 * KiB, N, 0, 0, 0);
    struct nisa_tensor tw = tn(3, NISA_F32, 256 * KiB, N, 0, 0, 0);
    struct nisa_tensor in[3] = { ta, tb, tx };
    struct nisa_expr_step st[6];
    struct nisa_insn code[8], seq[6];
    unsigned n;

    randf(x, N, 5);
    for (unsigned i = 0; i < N; i++) {
        a[i] = (int32_t)(i * 2654435761u);      /* large: the sum wraps */
        b[i] = (int32_t)(i * 40503u) - 20000000;
    }
    put(c, 0, 0, a, sizeof(a));
    put(c, 0, 1 * MiB, b, sizeof(b));
    put(c, 1, 0, x, sizeof(x));
    st[0] = step(NISA_INSN_COMPARE, NISA_CMP_GT, NISA_BOOL, 3, 0, 1, 0);
    st[1] = step(NISA_INSN_BINARY, NISA_BIN_ADD, NISA_I32, 4, 0, 1, 0);
    st[1].alpha = f64bits(3);
    st[2] = step(NISA_INSN_COPY, 0, NISA_F32, 4, 4, 0, 0);
    st[3] = step(NISA_INSN_FILL, 0, NISA_F32, 5, 0, 0, 0);
    st[3].scalar = f64bits(0.25);
    st[4] = step(NISA_INSN_WHERE, 0, NISA_F32, 6, 3, 4, 5);
    st[5] = step(NISA_INSN_BINARY, NISA_BIN_MUL, NISA_F32, 6, 6, 2, 0);
    n = expr_encode(code, out, in, 3, st, 6);
    g_assert_cmphex(run_kernel(c, code, n), ==, OK);

    seq[0] = insn(NISA_INSN_COMPARE, NISA_CMP_GT, tc, ta, tb);
    seq[1] = insn(NISA_INSN_BINARY, NISA_BIN_ADD, ti, ta, tb);
    seq[1].alpha = f64bits(3);
    seq[2] = insn(NISA_INSN_COPY, 0, tf, ti, (struct nisa_tensor){});
    seq[3] = insn(NISA_INSN_FILL, 0, tk, (struct nisa_tensor){},
                  (struct nisa_tensor){});
    seq[3].scalar = f64bits(0.25);
    seq[4] = insn(NISA_INSN_WHERE, 0, tw, tc, tf);
    seq[4].src[2] = tk;
    seq[5] = insn(NISA_INSN_BINARY, NISA_BIN_MUL, ref, tw, tx);
    g_assert_cmphex(run_kernel(c, seq, 6), ==, OK);
    assert_same(c, 0, 1 * MiB, sizeof(x));
    core_stop(c);
}

/* Five inputs (an INPUTS continuation) and ten steps (two STEPS records). */
static void test_long_program(void)
{
    Core *c = core_start();
    float v[5][N];
    struct nisa_tensor in[5], t[10];
    struct nisa_tensor out = tn(2, NISA_F32, 0, R, C, 0, 0);
    struct nisa_tensor ref = tn(2, NISA_F32, 1 * MiB, R, C, 0, 0);
    struct nisa_expr_step st[10];
    struct nisa_insn code[8], seq[10];
    unsigned n;

    for (unsigned i = 0; i < 5; i++) {
        static const uint32_t special[] = {
            0x7fc00000, 0xffc01234, 0x7fa00001, 0x7f800000, 0xff800000,
            0x80000000, 0x00000001, 0x00800000, 0x7f7fffff,
        };

        randf(v[i], N, 10 + i);
        /* NaNs with payloads and signs, infinities, -0, subnormals. */
        for (unsigned k = 0; k < ARRAY_SIZE(special); k++) {
            memcpy(&v[i][(k * 37 + i * 11) % N], &special[k], 4);
        }
        in[i] = tn(i % 2, NISA_F32, (i / 2) * MiB, R, C, 0, 0);
        put(c, i % 2, (i / 2) * MiB, v[i], sizeof(v[i]));
    }
    for (unsigned i = 0; i < 10; i++) {
        t[i] = tn(3, NISA_F32, i * 64 * KiB, R, C, 0, 0);
    }
    /* r5 = in0 + in1; r5 = r5 * in2; r5 -= in3; r5 = max(r5, in4); ... */
    st[0] = step(NISA_INSN_BINARY, NISA_BIN_ADD, NISA_F32, 5, 0, 1, 0);
    st[1] = step(NISA_INSN_BINARY, NISA_BIN_MUL, NISA_F32, 5, 5, 2, 0);
    st[2] = step(NISA_INSN_BINARY, NISA_BIN_SUB, NISA_F32, 5, 5, 3, 0);
    st[3] = step(NISA_INSN_BINARY, NISA_BIN_MAX, NISA_F32, 5, 5, 4, 0);
    st[4] = step(NISA_INSN_UNARY, NISA_UN_TANH, NISA_F32, 6, 5, 0, 0);
    st[5] = step(NISA_INSN_UNARY, NISA_UN_SIGMOID, NISA_F32, 7, 0, 0, 0);
    st[6] = step(NISA_INSN_BINARY, NISA_BIN_MUL, NISA_F32, 8, 6, 7, 0);
    st[7] = step(NISA_INSN_UNARY, NISA_UN_SQUARE, NISA_F32, 8, 8, 0, 0);
    st[8] = step(NISA_INSN_BINARY, NISA_BIN_DIV, NISA_F32, 8, 8, 1, 0);
    st[9] = step(NISA_INSN_UNARY, NISA_UN_ABS, NISA_F32, 15, 8, 0, 0);
    st[0].alpha = st[2].alpha = f64bits(1.0);
    n = expr_encode(code, out, in, 5, st, 10);
    g_assert_cmpuint(n, ==, 4);
    g_assert_cmphex(run_kernel(c, code, n), ==, OK);

    seq[0] = insn(NISA_INSN_BINARY, NISA_BIN_ADD, t[0], in[0], in[1]);
    seq[1] = insn(NISA_INSN_BINARY, NISA_BIN_MUL, t[1], t[0], in[2]);
    seq[2] = insn(NISA_INSN_BINARY, NISA_BIN_SUB, t[2], t[1], in[3]);
    seq[3] = insn(NISA_INSN_BINARY, NISA_BIN_MAX, t[3], t[2], in[4]);
    seq[4] = insn(NISA_INSN_UNARY, NISA_UN_TANH, t[4], t[3], (struct nisa_tensor){});
    seq[5] = insn(NISA_INSN_UNARY, NISA_UN_SIGMOID, t[5], in[0], (struct nisa_tensor){});
    seq[6] = insn(NISA_INSN_BINARY, NISA_BIN_MUL, t[6], t[4], t[5]);
    seq[7] = insn(NISA_INSN_UNARY, NISA_UN_SQUARE, t[7], t[6], (struct nisa_tensor){});
    seq[8] = insn(NISA_INSN_BINARY, NISA_BIN_DIV, t[8], t[7], in[1]);
    seq[9] = insn(NISA_INSN_UNARY, NISA_UN_ABS, ref, t[8], (struct nisa_tensor){});
    seq[0].alpha = seq[2].alpha = f64bits(1.0);
    g_assert_cmphex(run_kernel(c, seq, 10), ==, OK);
    assert_same(c, 0, 1 * MiB, sizeof(v[0]));

    /* In place: dst is input 0. */
    n = expr_encode(code, in[0], in, 5, st, 10);
    g_assert_cmphex(run_kernel(c, code, n), ==, OK);
    {
        g_autofree float *a = g_new(float, N);
        g_autofree float *b = g_new(float, N);

        get(c, 0, 0, a, N * sizeof(float));
        get(c, 2, 1 * MiB, b, N * sizeof(float));
        g_assert_cmpmem(a, N * sizeof(float), b, N * sizeof(float));
    }
    core_stop(c);
}

/* A malformed program is BAD_INSN; the card goes on working. */
static void test_malformed(void)
{
    Core *c = core_start();
    struct nisa_tensor tx = tn(0, NISA_F32, 0, R, C, 0, 0);
    struct nisa_tensor out = tn(2, NISA_F32, 0, R, C, 0, 0);
    struct nisa_expr_step good[2], st[2];
    struct nisa_insn code[8], nop = { .opcode = NISA_INSN_NOP };
    struct nisa_tensor in[2] = { tx, tx };
    unsigned n;

    good[0] = step(NISA_INSN_UNARY, NISA_UN_EXP, NISA_F32, 2, 0, 0, 0);
    good[1] = step(NISA_INSN_BINARY, NISA_BIN_MUL, NISA_F32, 2, 2, 1, 0);
#define BAD(mutate)                                                         \
    do {                                                                    \
        memcpy(st, good, sizeof(st));                                       \
        n = expr_encode(code, out, in, 2, st, 2);                           \
        mutate;                                                             \
        g_assert_cmphex(run_kernel(c, code, n), ==, OK | NISA_ERR_BAD_INSN); \
    } while (0)

    n = expr_encode(code, out, in, 2, good, 2);
    g_assert_cmphex(run_kernel(c, code, n), ==, OK);
    BAD(((struct nisa_expr_steps *)&code[1])->step[1].src[0] = 16);
    BAD(((struct nisa_expr_steps *)&code[1])->step[1].src[1] = 7);
    BAD(((struct nisa_expr_steps *)&code[1])->step[1].dst = 200);
    BAD(((struct nisa_expr_steps *)&code[1])->step[0].op = NISA_INSN_MATMUL);
    BAD(((struct nisa_expr_steps *)&code[1])->step[0].subop = NISA_NUM_UNARY);
    BAD(((struct nisa_expr_steps *)&code[1])->step[0].flags = NISA_IF_REVERSE);
    BAD(((struct nisa_expr_steps *)&code[1])->step[0].dtype = NISA_NUM_DTYPES);
    BAD(((struct nisa_expr_steps *)&code[1])->step[0].src[2] = 1);
    BAD(((struct nisa_expr_steps *)&code[1])->step[0].rsvd = 1);
    BAD(((struct nisa_expr_steps *)&code[1])->step[1].dtype = NISA_BF16);
    BAD(((struct nisa_expr_steps *)&code[1])->step[2].op = NISA_INSN_UNARY);
    BAD(((struct nisa_expr_steps *)&code[1])->step[0] =
        step(NISA_INSN_UNARY, NISA_UN_BITNOT, NISA_F32, 2, 0, 0, 0));
    BAD(((struct nisa_expr_steps *)&code[1])->rsvd[1] = 1);
    BAD(((struct nisa_expr_steps *)&code[1])->dst.offset = 4);
    BAD(code[1].subop = NISA_EXPR_DATA_INPUTS);
    BAD(code[0].subop = 0);
    BAD(code[0].subop = NISA_EXPR_MAX_STEPS + 1);
    BAD(code[0].axis = NISA_EXPR_MAX_INPUTS + 1);
    BAD(code[0].axis = -1);
    BAD(code[0].axis = 1);           /* src[1] set past the count */
    BAD(code[0].flags = NISA_IF_SCALAR);
    BAD(code[0].alpha = f64bits(1));
    BAD(code[0].src[1] = tn(1, NISA_F32, 0, 2, C, 0, 0));  /* 2 vs 3 rows */
    BAD(code[0].src[1] = tn(1, NISA_F32, 0, C + 1, 0, 0, 0));
    BAD(n = 1);                      /* the STEPS record is missing */
    BAD((code[0] = nop, code[1].opcode = NISA_INSN_EXPR_DATA)); /* stray */
    BAD(code[1].opcode = NISA_INSN_NOP);
    /* An input count that needs an INPUTS record the kernel lacks. */
    BAD((code[0].axis = 5, n = 2));
    /* Out of its slot is SLOT_RANGE, as for any operand. */
    n = expr_encode(code, out, in, 2, good, 2);
    code[0].src[0].offset = SLOT_SIZE - 4;
    g_assert_cmphex(run_kernel(c, code, n), ==, OK | NISA_ERR_SLOT_RANGE);
    /* Still alive. */
    n = expr_encode(code, out, in, 2, good, 2);
    g_assert_cmphex(run_kernel(c, code, n), ==, OK);
#undef BAD
    core_stop(c);
}

/*
 * A ReLU backward, where(x > 0, g, 0), and a mask used as a number,
 * (x != g) * x, over more than TRN_ITER_SHARE_MIN elements (NaNs among
 * them): the float path holds the COMPARE's bool as 0.0 or 1.0 and the
 * card's threads share the instruction. Against COMPARE and WHERE / MUL
 * through a bool temporary, bit for bit, with one thread and with three.
 */
#define NB ((1 << 18) + 4096)

static void mask_run(const char *props, const float *x, const float *g,
                     float *out, float *out2)
{
    Core *c = core_start_with(props);
    struct nisa_tensor tx = tn(0, NISA_F32, 0, NB, 0, 0, 0);
    struct nisa_tensor tg = tn(1, NISA_F32, 0, NB, 0, 0, 0);
    struct nisa_tensor zero = bcast(tn(1, NISA_F32, 4 * NB, 1, 0, 0, 0), 0, NB);
    struct nisa_tensor o = tn(2, NISA_F32, 0, NB, 0, 0, 0);
    struct nisa_tensor ref = tn(2, NISA_F32, 2 * MiB, NB, 0, 0, 0);
    struct nisa_tensor m = tn(3, NISA_BOOL, 0, NB, 0, 0, 0);
    struct nisa_tensor in[3] = { tx, tg, zero };
    struct nisa_expr_step st[2];
    struct nisa_insn code[4], seq[2];
    float z = 0;
    unsigned n;

    put(c, 0, 0, x, 4 * NB);
    put(c, 1, 0, g, 4 * NB);
    put(c, 1, 4 * NB, &z, 4);
    st[0] = step(NISA_INSN_COMPARE, NISA_CMP_GT, NISA_BOOL, 3, 0, 0, 0);
    st[0].flags = NISA_IF_SCALAR;
    st[1] = step(NISA_INSN_WHERE, 0, NISA_F32, 3, 3, 1, 2);
    n = expr_encode(code, o, in, 3, st, 2);
    g_assert_cmphex(run_kernel(c, code, n), ==, OK);
    seq[0] = insn(NISA_INSN_COMPARE, NISA_CMP_GT, m, tx, (struct nisa_tensor){});
    seq[0].flags = NISA_IF_SCALAR;
    seq[1] = (struct nisa_insn){ .opcode = NISA_INSN_WHERE, .dst = ref,
                                 .src = { m, tg, zero } };
    g_assert_cmphex(run_kernel(c, seq, 2), ==, OK);
    assert_same(c, 0, 2 * MiB, 4 * NB);
    get(c, 2, 0, out, 4 * NB);

    st[0] = step(NISA_INSN_COMPARE, NISA_CMP_NE, NISA_BOOL, 3, 0, 1, 0);
    st[1] = step(NISA_INSN_BINARY, NISA_BIN_MUL, NISA_F32, 3, 3, 0, 0);
    n = expr_encode(code, o, in, 2, st, 2);
    g_assert_cmphex(run_kernel(c, code, n), ==, OK);
    seq[0] = insn(NISA_INSN_COMPARE, NISA_CMP_NE, m, tx, tg);
    seq[1] = insn(NISA_INSN_BINARY, NISA_BIN_MUL, ref, m, tx);
    g_assert_cmphex(run_kernel(c, seq, 2), ==, OK);
    assert_same(c, 0, 2 * MiB, 4 * NB);
    get(c, 2, 0, out2, 4 * NB);
    core_stop(c);
}

static void test_mask_shared(void)
{
    g_autofree float *x = g_new(float, NB);
    g_autofree float *g = g_new(float, NB);
    g_autofree float *o1 = g_new(float, NB);
    g_autofree float *o3 = g_new(float, NB);
    g_autofree float *p1 = g_new(float, NB);
    g_autofree float *p3 = g_new(float, NB);

    randf(x, NB, 21);
    randf(g, NB, 22);
    for (unsigned i = 0; i < NB; i += 997) {
        x[i] = NAN;
        g[i + 1] = x[i + 1];    /* equal: the mask is 0 there */
    }
    mask_run("mem-size=64M,blas-threads=1", x, g, o1, p1);
    mask_run("mem-size=64M,blas-threads=3", x, g, o3, p3);
    g_assert_cmpmem(o1, 4 * NB, o3, 4 * NB);
    g_assert_cmpmem(p1, 4 * NB, p3, 4 * NB);
    for (unsigned i = 0; i < NB; i++) {
        float want = x[i] > 0 ? g[i] : 0.0f;
        float want2 = x[i] != g[i] ? x[i] : 0.0f * x[i];

        g_assert_cmpmem(&o3[i], 4, &want, 4);
        if (!isnan(want2)) {
            g_assert_cmpmem(&p3[i], 4, &want2, 4);
        } else {
            g_assert_true(isnan(p3[i]));
        }
    }
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/trainium/expr/f32-chain", test_f32_chain);
    qtest_add_func("/trainium/expr/f32-arith-forms", test_f32_arith_forms);
    qtest_add_func("/trainium/expr/low-precision-strided",
                   test_low_precision_strided);
    qtest_add_func("/trainium/expr/integer-where", test_integer_where);
    qtest_add_func("/trainium/expr/long-program", test_long_program);
    qtest_add_func("/trainium/expr/malformed", test_malformed);
    qtest_add_func("/trainium/expr/mask-shared", test_mask_shared);
    return g_test_run();
}

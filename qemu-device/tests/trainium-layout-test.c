/*
 * qtest for the float32 elementwise path over operand layouts: BINARY
 * (tensor, REVERSE, SCALAR, SCALAR | REVERSE), COPY, FILL, UNARY, COMPARE
 * (into bool), WHERE (a bool or float32 condition), and the element forms
 * of GATHER and SCATTER_ADD along each axis, with
 * every pairing of contiguous, transposed, broadcast and windowed operands,
 * and in place; and a COPY of a transposed source of every element size. Each result must be bit for bit what docs/hardware.md
 * ("Numerics") defines -- the operation in double on the loaded values,
 * rounded once to float32, a NaN stored as the quiet NaN with its sign; a
 * COPY's source bits, NaN payloads included -- and a windowed
 * destination's gaps must be left alone.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "trainium-core-qtest.h"

#define D0 6    /* the longest: walked as the rows (trainium-iter.c) */
#define D1 3
#define D2 4
#define D3 5
#define NEL (D0 * D1 * D2 * D3)
#define BACKING 1600            /* elements: the largest layout's extent */
#define SENTINEL 1234.5f

typedef struct Layout {
    const char *name;
    uint64_t off;               /* elements */
    int64_t st[4];
} Layout;

static const Layout layouts[] = {
    { "contiguous", 0, { D1 * D2 * D3, D2 * D3, D3, 1 } },
    { "transposed", 0, { 1, D0, D0 * D1, D0 * D1 * D2 } },
    { "broadcast", 0, { 0, D3, 0, 1 } },          /* dims 0 and 2 */
    { "per-channel", 0, { D1, 1, 0, 0 } },         /* one value per run */
    { "window", 12, { 3 * 8 * 11, 8 * 11, 2 * 11, 2 } },
    /* contiguous runs of D3 = 5 in rows of 7: a block of 4 and a tail */
    { "padded rows", 3, { D1 * D2 * 7, D2 * 7, 7, 1 } },
};

/*
 * For each element of the operands' shape, in row-major order: its
 * coordinates i, j, k, m and its index e.
 */
#define FOR_EACH_ELEMENT(i, j, k, m, e)                                     \
    for (unsigned e = 0, i, j, k, m;                                        \
         e < NEL && (i = e / (D1 * D2 * D3), j = e / (D2 * D3) % D1,        \
                     k = e / D3 % D2, m = e % D3, true);                    \
         e++)

static uint64_t at(const Layout *l, unsigned i, unsigned j, unsigned k,
                   unsigned m)
{
    return l->off + i * l->st[0] + j * l->st[1] + k * l->st[2] +
           m * l->st[3];
}

/* A broadcast (a stride of 0) is a source only. */
static bool writable(const Layout *l)
{
    return l->st[0] && l->st[1] && l->st[2] && l->st[3];
}

static struct nisa_tensor view_of(unsigned slot, unsigned dtype,
                                  const Layout *l)
{
    struct nisa_tensor t = { .slot = slot, .dtype = dtype, .ndim = 4,
                             .offset = l->off * (dtype == NISA_F32 ? 4 : 1),
                             .shape = { D0, D1, D2, D3 } };

    for (unsigned d = 0; d < 4; d++) {
        t.strides[d] = l->st[d];
    }
    return t;
}

static struct nisa_tensor view(unsigned slot, const Layout *l)
{
    return view_of(slot, NISA_F32, l);
}

static float round_f32(double x)
{
    float f = (float)x;

    return isnan(f) ? (signbit(f) ? -NAN : NAN) : f;
}

static double binary(unsigned op, double x, double y, double alpha)
{
    switch (op) {
    case NISA_BIN_ADD:
        return x + alpha * y;
    case NISA_BIN_SUB:
        return x - alpha * y;
    case NISA_BIN_MUL:
        return x * y;
    case NISA_BIN_DIV:
        return x / y;
    default:
        return isnan(x) || isnan(y) ? NAN : fmax(x, y);   /* MAX */
    }
}

/*
 * Random values with signed zeros, infinities, a NaN of each sign, and NaNs
 * with payloads (a signaling one, a negative quiet one): stored, every NaN
 * is the quiet NaN with its sign.
 */
static void fill_values(float *p, unsigned seed)
{
    static const uint32_t nan_bits[] = { 0x7fa00001u, 0xffc12345u };
    float special[] = { 0.0f, -0.0f, INFINITY, -INFINITY, NAN, -NAN, 1e-40f,
                        3.0e38f, 0.0f, 0.0f };

    memcpy(&special[8], nan_bits, sizeof(nan_bits));
    randf(p, BACKING, seed);
    for (unsigned i = 0; i < BACKING; i += 37) {
        p[i] = special[(i / 37 + seed) % ARRAY_SIZE(special)];
    }
}

/*
 * Bit for bit; but which operand's sign a NaN from two NaN-carrying operands
 * keeps, and which zero max(0, -0) is, are the host's choice (IEEE and C
 * leave them open), so with @loose a NaN may be the quiet NaN of either
 * sign and a zero either zero.
 */
static void same_bits(float got, float want, const char *what, bool loose)
{
    if (loose && (isnan(want) || (want == 0 && got == 0))) {
        want = isnan(want) ? (signbit(got) ? -NAN : NAN) : got;
    }
    if (memcmp(&got, &want, 4) != 0) {
        g_error("%s: got %a (0x%08x), want %a (0x%08x)", what, got,
                *(uint32_t *)&got, want, *(uint32_t *)&want);
    }
}

typedef struct Run {
    Core *c;
    float x[BACKING], y[BACKING], o[BACKING];
} Run;

/*
 * Run @in with src0 in slot 0 (@lx), src1 in slot 1 (@ly), dst in slot 2
 * (@lo), and check each element against @want(i) and the gaps.
 */
static void check_dst(Run *r, const Layout *lo, const float *want,
                      const char *what, bool loose)
{
    g_autofree bool *hit = g_new0(bool, BACKING);

    get(r->c, 2, 0, r->o, sizeof(r->o));
    FOR_EACH_ELEMENT(i, j, k, m, e) {
        uint64_t p = at(lo, i, j, k, m);

        hit[p] = true;
        same_bits(r->o[p], want[e], what, loose);
    }
    for (unsigned p = 0; p < BACKING; p++) {
        if (!hit[p]) {
            same_bits(r->o[p], SENTINEL, "a destination gap", false);
        }
    }
}

static void reset_dst(Run *r)
{
    for (unsigned p = 0; p < BACKING; p++) {
        r->o[p] = SENTINEL;
    }
    put(r->c, 2, 0, r->o, sizeof(r->o));
}

/* Run @in over a sentinel-filled destination and check it. */
static void run_check(Run *r, struct nisa_insn in, const Layout *ld,
                      const float *want, const char *what, bool loose)
{
    reset_dst(r);
    g_assert_cmphex(run1(r->c, in), ==, OK);
    check_dst(r, ld, want, what, loose);
}

static void test_binary_layouts(void)
{
    static const unsigned ops[] = { NISA_BIN_ADD, NISA_BIN_SUB, NISA_BIN_MUL,
                                    NISA_BIN_DIV, NISA_BIN_MAX };
    static const uint32_t forms[] = { 0, NISA_IF_REVERSE, NISA_IF_SCALAR,
                                      NISA_IF_SCALAR | NISA_IF_REVERSE };
    g_autofree Run *r = g_new0(Run, 1);
    float want[NEL];

    r->c = core_start();
    fill_values(r->x, 1);
    fill_values(r->y, 2);
    put(r->c, 0, 0, r->x, sizeof(r->x));
    put(r->c, 1, 0, r->y, sizeof(r->y));
    for (unsigned o = 0; o < ARRAY_SIZE(ops); o++) {
        for (unsigned f = 0; f < ARRAY_SIZE(forms); f++) {
            bool sc = forms[f] & NISA_IF_SCALAR, rev = forms[f] & NISA_IF_REVERSE;
            /*
             * alpha 1 and a float32 scalar take the device's float32
             * arithmetic, the others its double arithmetic: same bits.
             */
            double alpha = ops[o] == NISA_BIN_SUB ? 1.0 : -0.75;
            double scalar = rev ? 0.1 : 2.5;

            for (unsigned a = 0; a < ARRAY_SIZE(layouts); a++) {
                for (unsigned b = 0; b < (sc ? 1 : ARRAY_SIZE(layouts)); b++) {
                    for (unsigned d = 0; d < ARRAY_SIZE(layouts); d++) {
                        const Layout *la = &layouts[a], *lb = &layouts[b];
                        const Layout *ld = &layouts[d];
                        struct nisa_insn in = {
                            .opcode = NISA_INSN_BINARY, .subop = ops[o],
                            .flags = forms[f], .scalar = f64bits(scalar),
                            .alpha = f64bits(alpha), .dst = view(2, ld),
                            .src = { view(0, la), view(1, lb) } };
                        bool al = ops[o] == NISA_BIN_ADD || ops[o] == NISA_BIN_SUB;
                        g_autofree char *what = g_strdup_printf(
                            "op %u form %u: %s, %s -> %s", ops[o], forms[f],
                            la->name, sc ? "scalar" : lb->name, ld->name);

                        if (!writable(ld)) {
                            continue;
                        }
                        FOR_EACH_ELEMENT(i, j, k, m, e) {
                            double x = r->x[at(la, i, j, k, m)];
                            double y = sc ? scalar :
                                       r->y[at(lb, i, j, k, m)];

                            want[e] = round_f32(rev ?
                                binary(ops[o], y, x, al ? alpha : 1) :
                                binary(ops[o], x, y, al ? alpha : 1));
                        }
                        run_check(r, in, ld, want, what, true);
                    }
                }
            }
        }
    }
    core_stop(r->c);
}

/* COPY, FILL and UNARY (relu, neg, square) from each layout; in place. */
static void test_unary_layouts(void)
{
    g_autofree Run *r = g_new0(Run, 1);
    float want[NEL];

    r->c = core_start();
    fill_values(r->x, 3);
    put(r->c, 0, 0, r->x, sizeof(r->x));
    for (unsigned a = 0; a < ARRAY_SIZE(layouts); a++) {
        for (unsigned d = 0; d < ARRAY_SIZE(layouts); d++) {
            const Layout *la = &layouts[a], *ld = &layouts[d];
            static const struct { unsigned op, fn; } kinds[] = {
                { NISA_INSN_COPY, 0 }, { NISA_INSN_FILL, 0 },
                { NISA_INSN_UNARY, NISA_UN_RELU }, { NISA_INSN_UNARY, NISA_UN_NEG },
                { NISA_INSN_UNARY, NISA_UN_SQUARE },
            };

            if (!writable(ld)) {
                continue;
            }
            for (unsigned w = 0; w < ARRAY_SIZE(kinds); w++) {
                struct nisa_insn in = { .opcode = kinds[w].op,
                    .subop = kinds[w].fn, .scalar = f64bits(-0.1),
                    .dst = view(2, ld), .src = { view(0, la) } };
                g_autofree char *what = g_strdup_printf("opcode %u fn %u: %s -> %s",
                    kinds[w].op, kinds[w].fn, la->name, ld->name);

                if (kinds[w].op == NISA_INSN_FILL) {
                    memset(&in.src[0], 0, sizeof(in.src[0]));
                }
                FOR_EACH_ELEMENT(i, j, k, m, e) {
                    double x = r->x[at(la, i, j, k, m)];

                    if (kinds[w].op == NISA_INSN_COPY) {
                        memcpy(&want[e], &r->x[at(la, i, j, k, m)], 4);
                        continue;
                    }
                    want[e] = round_f32(
                        kinds[w].op == NISA_INSN_FILL ? -0.1 :
                        kinds[w].fn == NISA_UN_RELU ? (x <= 0 ? 0.0 : x) :
                        kinds[w].fn == NISA_UN_NEG ? -x : x * x);
                }
                run_check(r, in, ld, want, what, kinds[w].fn == NISA_UN_SQUARE);
            }
        }
    }
    core_stop(r->c);
}

/*
 * COPY of a transposed source into rows, which the device walks 8 rows at
 * a time (trainium-elementwise.c): every element size, row counts that
 * are and are not multiples of 8, runs short and long, and a destination
 * whose rows have gaps (left alone). The source's bits, every one.
 */
static void test_transpose_copy(void)
{
    static const struct { unsigned nr, nc, gap; } shapes[] = {
        { 8, 8, 0 }, { 9, 17, 0 }, { 37, 1029, 3 }, { 64, 3, 1 },
        { 512, 512, 0 },
    };
    static const unsigned dtypes[] = { NISA_U8, NISA_I16, NISA_F32, NISA_I64 };
    Core *c = core_start();

    for (unsigned s = 0; s < ARRAY_SIZE(shapes); s++) {
        for (unsigned t = 0; t < ARRAY_SIZE(dtypes); t++) {
            unsigned nr = shapes[s].nr, nc = shapes[s].nc, es;
            unsigned ld = nc + shapes[s].gap;
            uint64_t sbytes, dbytes;
            g_autofree uint8_t *src = NULL, *dst = NULL, *want = NULL;
            struct nisa_insn in = { .opcode = NISA_INSN_COPY };
            GRand *g = g_rand_new_with_seed(s * 16 + t);

            es = dtypes[t] == NISA_U8 ? 1 : dtypes[t] == NISA_I16 ? 2 :
                 dtypes[t] == NISA_F32 ? 4 : 8;
            sbytes = (uint64_t)nr * nc * es;
            dbytes = (uint64_t)nr * ld * es;
            src = g_malloc(sbytes);
            dst = g_malloc(dbytes);
            want = g_malloc(dbytes);
            for (uint64_t b = 0; b < sbytes; b++) {
                src[b] = g_rand_int(g);
            }
            g_rand_free(g);
            memset(dst, 0x5a, dbytes);
            memcpy(want, dst, dbytes);
            /* src holds [nc, nr]; dst[r][q] = src[q][r] */
            for (unsigned r = 0; r < nr; r++) {
                for (unsigned q = 0; q < nc; q++) {
                    memcpy(want + ((uint64_t)r * ld + q) * es,
                           src + ((uint64_t)q * nr + r) * es, es);
                }
            }
            put(c, 0, 0, src, sbytes);
            put(c, 1, 0, dst, dbytes);
            in.src[0] = tn(0, dtypes[t], 0, nr, nc, 0, 0);
            in.src[0].strides[0] = 1;
            in.src[0].strides[1] = nr;
            in.dst = tn(1, dtypes[t], 0, nr, nc, 0, 0);
            in.dst.strides[0] = ld;
            g_assert_cmphex(run1(c, in), ==, OK);
            get(c, 1, 0, dst, dbytes);
            if (memcmp(dst, want, dbytes)) {
                g_test_message("%u x %u (+%u), element size %u", nr, nc,
                               shapes[s].gap, es);
            }
            g_assert_true(memcmp(dst, want, dbytes) == 0);
        }
    }
    core_stop(c);
}

/* dst is src0 (exact aliasing): x = x * 3 + alpha * y over a window. */
static void test_in_place(void)
{
    g_autofree Run *r = g_new0(Run, 1);
    const Layout *lw = &layouts[4], *lt = &layouts[1];
    struct nisa_insn in = { .opcode = NISA_INSN_BINARY, .subop = NISA_BIN_ADD,
                            .alpha = f64bits(0.5), .dst = view(2, lw),
                            .src = { view(2, lw), view(1, lt) } };
    float want[NEL];

    r->c = core_start();
    fill_values(r->x, 4);
    fill_values(r->y, 5);
    for (unsigned p = 0; p < BACKING; p++) {
        r->o[p] = SENTINEL;
    }
    FOR_EACH_ELEMENT(i, j, k, m, e) {
        uint64_t p = at(lw, i, j, k, m);

        r->o[p] = r->x[p];
        want[e] = round_f32((double)r->x[p] +
                            0.5 * r->y[at(lt, i, j, k, m)]);
    }
    put(r->c, 2, 0, r->o, sizeof(r->o));
    put(r->c, 1, 0, r->y, sizeof(r->y));
    g_assert_cmphex(run1(r->c, in), ==, OK);
    check_dst(r, lw, want, "in place", true);
    core_stop(r->c);
}

static bool compare(unsigned cmp, double x, double y)
{
    switch (cmp) {
    case NISA_CMP_EQ:
        return x == y;
    case NISA_CMP_LT:
        return x < y;
    case NISA_CMP_GE:
        return x >= y;
    default:
        return x != 0 || y != 0;        /* LOR: NaN is true */
    }
}

/* COMPARE of float32 operands in every layout into a bool dst. */
static void test_compare_layouts(void)
{
    static const unsigned cmps[] = { NISA_CMP_EQ, NISA_CMP_LT, NISA_CMP_GE,
                                     NISA_CMP_LOR };
    g_autofree Run *r = g_new0(Run, 1);
    uint8_t got[BACKING], want[BACKING];

    r->c = core_start();
    fill_values(r->x, 6);
    fill_values(r->y, 7);
    for (unsigned p = 0; p < BACKING; p += 5) {
        r->y[p] = r->x[p];              /* some equal pairs */
    }
    put(r->c, 0, 0, r->x, sizeof(r->x));
    put(r->c, 1, 0, r->y, sizeof(r->y));
    for (unsigned w = 0; w < ARRAY_SIZE(cmps); w++) {
        for (unsigned sc = 0; sc < 2; sc++) {
            for (unsigned a = 0; a < ARRAY_SIZE(layouts); a++) {
                for (unsigned b = 0; b < (sc ? 1 : ARRAY_SIZE(layouts)); b++) {
                    for (unsigned d = 0; d < ARRAY_SIZE(layouts); d++) {
                        const Layout *la = &layouts[a], *lb = &layouts[b];
                        const Layout *ld = &layouts[d];
                        struct nisa_insn in = {
                            .opcode = NISA_INSN_COMPARE, .subop = cmps[w],
                            .flags = sc ? NISA_IF_SCALAR : 0,
                            .scalar = f64bits(0.25),
                            .dst = view_of(2, NISA_BOOL, ld),
                            .src = { view(0, la), view(1, lb) } };

                        if (!writable(ld)) {
                            continue;
                        }
                        memset(want, 0xa5, sizeof(want));
                        put(r->c, 2, 0, want, sizeof(want));
                        FOR_EACH_ELEMENT(i, j, k, m, e) {
                            double x = r->x[at(la, i, j, k, m)];
                            double y = sc ? 0.25 :
                                       r->y[at(lb, i, j, k, m)];

                            want[at(ld, i, j, k, m)] =
                                compare(cmps[w], x, y);
                        }
                        g_assert_cmphex(run1(r->c, in), ==, OK);
                        get(r->c, 2, 0, got, sizeof(got));
                        if (memcmp(got, want, sizeof(got))) {
                            g_error("compare %u%s: %s, %s -> %s differs", cmps[w],
                                    sc ? " scalar" : "", la->name, lb->name,
                                    ld->name);
                        }
                    }
                }
            }
        }
    }
    core_stop(r->c);
}

/* WHERE between float32 operands, the condition bool or float32. */
static void test_where_layouts(void)
{
    g_autofree Run *r = g_new0(Run, 1);
    uint8_t cb[BACKING];
    float cf[BACKING], want[NEL];

    r->c = core_start();
    fill_values(r->x, 8);
    fill_values(r->y, 9);
    fill_values(cf, 10);
    for (unsigned p = 0; p < BACKING; p++) {
        cb[p] = (p * 7) % 3 == 0;
        if (p % 4 == 0) {
            cf[p] = p % 8 ? 0.0f : -0.0f;       /* false, either sign */
        }
    }
    put(r->c, 0, 0, r->x, sizeof(r->x));
    put(r->c, 1, 0, r->y, sizeof(r->y));
    for (unsigned cd = 0; cd < 2; cd++) {
        if (cd) {
            put(r->c, 3, 0, cf, sizeof(cf));
        } else {
            put(r->c, 3, 0, cb, sizeof(cb));
        }
        for (unsigned c = 0; c < ARRAY_SIZE(layouts); c++) {
            for (unsigned a = 0; a < ARRAY_SIZE(layouts); a++) {
                for (unsigned d = 0; d < ARRAY_SIZE(layouts); d++) {
                    const Layout *lc = &layouts[c], *la = &layouts[a];
                    const Layout *ld = &layouts[d], *lb = &layouts[(a + 1) % 5];
                    struct nisa_insn in = { .opcode = NISA_INSN_WHERE,
                        .dst = view(2, ld),
                        .src = { view_of(3, cd ? NISA_F32 : NISA_BOOL, lc),
                                 view(0, la), view(1, lb) } };
                    g_autofree char *what = g_strdup_printf(
                        "where (%s %s) %s : %s -> %s", cd ? "f32" : "bool",
                        lc->name, la->name, lb->name, ld->name);

                    if (!writable(ld)) {
                        continue;
                    }
                    FOR_EACH_ELEMENT(i, j, k, m, e) {
                        uint64_t pc = at(lc, i, j, k, m);
                        bool t = cd ? cf[pc] != 0 : cb[pc] != 0;

                        want[e] = round_f32(t ?
                            r->x[at(la, i, j, k, m)] :
                            r->y[at(lb, i, j, k, m)]);
                    }
                    run_check(r, in, ld, want, what, false);
                }
            }
        }
    }
    core_stop(r->c);
}

/*
 * GATHER and SCATTER_ADD, element form (torch.gather, scatter_add_), along
 * each axis, the tensors in every layout and the indices int64.
 */
static void test_gather_scatter_layouts(void)
{
    g_autofree Run *r = g_new0(Run, 1);
    g_autofree int64_t *ix = g_new(int64_t, NEL);
    const unsigned ext[4] = { D0, D1, D2, D3 };
    GRand *g = g_rand_new_with_seed(11);
    float want[NEL];

    r->c = core_start();
    fill_values(r->x, 12);
    put(r->c, 0, 0, r->x, sizeof(r->x));
    for (unsigned axis = 0; axis < 4; axis++) {
        for (unsigned e = 0; e < NEL; e++) {
            ix[e] = g_rand_int_range(g, 0, (int32_t)ext[axis]);
        }
        put(r->c, 3, 0, ix, NEL * sizeof(int64_t));
        for (unsigned a = 0; a < ARRAY_SIZE(layouts); a++) {
            for (unsigned d = 0; d < ARRAY_SIZE(layouts); d++) {
                const Layout *la = &layouts[a], *ld = &layouts[d];
                struct nisa_insn in = { .opcode = NISA_INSN_GATHER,
                    .subop = NISA_IDX_ELEMENT, .axis = axis,
                    .dst = view(2, ld),
                    .src = { view(0, la), view_of(3, NISA_I64, &layouts[0]) } };
                g_autofree char *what = g_strdup_printf("gather axis %u: %s -> %s",
                                                        axis, la->name, ld->name);

                if (!writable(ld)) {
                    continue;
                }
                FOR_EACH_ELEMENT(i, j, k, m, e) {
                    unsigned c[4] = { i, j, k, m };

                    c[axis] = (unsigned)ix[e];
                    want[e] = round_f32(r->x[at(la, c[0], c[1], c[2], c[3])]);
                }
                run_check(r, in, ld, want, what, false);
            }
        }
        /* scatter_add_ into a zeroed contiguous dst from a windowed src. */
        {
            const Layout *ls = &layouts[4], *ld = &layouts[0];
            struct nisa_insn in = { .opcode = NISA_INSN_SCATTER_ADD,
                .subop = NISA_IDX_ELEMENT, .axis = axis, .dst = view(2, ld),
                .src = { view(0, ls), view_of(3, NISA_I64, &layouts[0]) } };
            double acc[NEL] = { 0 };

            for (unsigned p = 0; p < BACKING; p++) {
                r->o[p] = p < NEL ? 0.0f : SENTINEL;    /* ld is contiguous */
            }
            put(r->c, 2, 0, r->o, sizeof(r->o));
            FOR_EACH_ELEMENT(i, j, k, m, e) {
                unsigned c[4] = { i, j, k, m };
                float v = r->x[at(ls, i, j, k, m)];

                c[axis] = (unsigned)ix[e];
                /* the device adds in row-major order, rounding each sum */
                acc[at(ld, c[0], c[1], c[2], c[3])] = round_f32(
                    acc[at(ld, c[0], c[1], c[2], c[3])] + v);
            }
            for (unsigned e = 0; e < NEL; e++) {
                want[e] = (float)acc[e];
            }
            g_assert_cmphex(run1(r->c, in), ==, OK);
            check_dst(r, ld, want, "scatter_add", true);
        }
    }
    g_rand_free(g);
    core_stop(r->c);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/trainium/layout/binary", test_binary_layouts);
    qtest_add_func("/trainium/layout/unary-copy-fill", test_unary_layouts);
    qtest_add_func("/trainium/layout/in-place", test_in_place);
    qtest_add_func("/trainium/layout/transpose-copy", test_transpose_copy);
    qtest_add_func("/trainium/layout/compare", test_compare_layouts);
    qtest_add_func("/trainium/layout/where", test_where_layouts);
    qtest_add_func("/trainium/layout/gather-scatter", test_gather_scatter_layouts);
    return g_test_run();
}

/*
 * Virtual Trainium accelerator: EXPR, an elementwise program in one pass
 * over memory (docs/hardware.md, "EXPR"). The inputs broadcast to dst's
 * shape; blocks of TRN_EXPR_BLOCK elements are loaded into a register
 * file, every step of the program runs over the block through the very
 * arithmetic of its elementwise instruction (trn_ew_apply_*() of
 * trainium-elementwise.c) and is rounded to its dtype as that instruction's
 * store would round it, and the last step's register is stored to dst.
 * So a program gives the bits of the unfused instructions, intermediate
 * roundings included.
 *
 * A register holds doubles and, when its dtype is an integer type, the
 * same values as int64 (what the integer instructions compute on).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "trainium-isa.h"
#include "trainium-ew.h"
#include "trainium-ew-fast.h"
#include "trainium-ew-ops.h"
#include "trainium-iter.h"

/* Elements per block: the registers of a block stay in the host's cache. */
#define TRN_EXPR_BLOCK 256

QEMU_BUILD_BUG_ON(sizeof(struct nisa_expr_step) != 32);
QEMU_BUILD_BUG_ON(sizeof(struct nisa_expr_steps) != sizeof(struct nisa_insn));
/* A shared piece is whole blocks (trn_expr_piece()). */
QEMU_BUILD_BUG_ON(TRN_ITER_SHARE_PIECE % TRN_EXPR_BLOCK);

typedef struct TrnExprStep {
    TrnEw e;            /* the step as an instruction; views: dtypes only */
    uint8_t dst, src[3];
} TrnExprStep;

typedef struct TrnExpr {
    unsigned nsteps, ninputs;
    bool f32;           /* every input and step float32: float registers */
    TrnView dst;
    TrnView in[NISA_EXPR_MAX_INPUTS];
    TrnExprStep step[NISA_EXPR_MAX_STEPS];
} TrnExpr;

typedef struct TrnExprRegs {
    double d[NISA_EXPR_NUM_REGS][TRN_EXPR_BLOCK];
    int64_t i[NISA_EXPR_NUM_REGS][TRN_EXPR_BLOCK];
    double od[TRN_EXPR_BLOCK], sd[TRN_EXPR_BLOCK];
    int64_t oi[TRN_EXPR_BLOCK], si[TRN_EXPR_BLOCK];
    float f[NISA_EXPR_NUM_REGS][TRN_EXPR_BLOCK];  /* the float32 path's */
    bool div_zero;        /* an integer step divided by zero */
} TrnExprRegs;

static bool trn_tensor_unset(const struct nisa_tensor *t)
{
    static const struct nisa_tensor zero;

    return !memcmp(t, &zero, sizeof(zero));
}

/* Input @i from @t, broadcast to dst's shape (extents of 1 repeat). */
static uint32_t trn_expr_input(TrnKernel *k, TrnExpr *x, unsigned i,
                               const struct nisa_tensor *t)
{
    TrnView *v = &x->in[i];
    uint32_t err = trn_view_init(k, t, TRN_READ, v);

    if (err) {
        return err;
    }
    /* No step takes complex operands (docs/hardware.md, "Complex numbers"). */
    if (nisa_dtype_is_complex(v->dtype)) {
        return trn_bad_insn(k, "EXPR: complex64 input: EXPR does not take "
                            "complex");
    }
    for (unsigned d = 0; d < NISA_MAX_DIMS; d++) {
        if (v->shape[d] == x->dst.shape[d]) {
            continue;
        }
        if (v->shape[d] != 1) {
            return trn_bad_insn(k, "EXPR: an input does not broadcast to "
                                "dst's shape");
        }
        v->shape[d] = x->dst.shape[d];
        v->stride[d] = 0;
        v->contiguous = false;
    }
    v->numel = x->dst.numel;
    return NISA_ERR_NONE;
}

/* The inputs: src[0..2] of the EXPR, then four per INPUTS continuation. */
static uint32_t trn_expr_inputs(TrnKernel *k, TrnExpr *x,
                                const struct nisa_insn *code)
{
    unsigned nrec = x->ninputs > 3 ? (x->ninputs - 3 + 3) / 4 : 0;
    uint32_t err;

    for (unsigned i = x->ninputs; i < 3; i++) {
        if (!trn_tensor_unset(&code[0].src[i])) {
            return trn_bad_insn(k, "EXPR: an unused source is set");
        }
    }
    for (unsigned r = 1; r <= nrec; r++) {
        const struct nisa_insn *c = &code[r];

        if (le16_to_cpu(c->opcode) != NISA_INSN_EXPR_DATA ||
            le16_to_cpu(c->subop) != NISA_EXPR_DATA_INPUTS || c->flags ||
            c->axis || c->rsvd || c->scalar || c->alpha) {
            return trn_bad_insn(k, "EXPR: malformed INPUTS continuation");
        }
        for (unsigned j = 0; j < 4; j++) {
            unsigned i = 3 + 4 * (r - 1) + j;
            const struct nisa_tensor *t = j ? &c->src[j - 1] : &c->dst;

            if (i >= x->ninputs && !trn_tensor_unset(t)) {
                return trn_bad_insn(k, "EXPR: an unused input of an INPUTS "
                                    "continuation is set");
            }
        }
    }
    for (unsigned i = 0; i < x->ninputs; i++) {
        const struct nisa_insn *c = i < 3 ? &code[0] : &code[1 + (i - 3) / 4];
        unsigned j = i < 3 ? i + 1 : (i - 3) % 4;
        const struct nisa_tensor *t = j ? &c->src[j - 1] : &c->dst;

        err = trn_expr_input(k, x, i, t);
        if (err) {
            return err;
        }
    }
    return NISA_ERR_NONE;
}

/*
 * Step @n of the program: an elementwise instruction checked as the
 * instruction itself would be, reading registers already set.
 */
static uint32_t trn_expr_step(TrnKernel *k, TrnExpr *x, unsigned n,
                              const struct nisa_expr_step *st,
                              uint8_t *dtype, bool *set)
{
    struct nisa_insn as = { .opcode = cpu_to_le16(st->op),
                            .subop = st->subop, .flags = st->flags };
    TrnExprStep *s = &x->step[n];
    TrnEw *e = &s->e;
    uint32_t err;

    if (st->rsvd) {
        return trn_bad_insn(k, "EXPR: a step's reserved field is set");
    }
    if (st->op < NISA_INSN_FILL || st->op > NISA_INSN_WHERE) {
        return trn_bad_insn(k, "EXPR: a step is not FILL, COPY, UNARY, "
                            "BINARY, COMPARE or WHERE");
    }
    err = trn_ew_check(k, &as, &e->nsrc);
    if (err) {
        return err;
    }
    if (st->dtype >= NISA_NUM_DTYPES || st->dst >= NISA_EXPR_NUM_REGS) {
        return trn_bad_insn(k, "EXPR: a step's dtype or register is invalid");
    }
    if (nisa_dtype_is_complex(st->dtype)) {
        return trn_bad_insn(k, "EXPR: complex64 step: EXPR does not take "
                            "complex");
    }
    e->op = st->op;
    e->sub = le16_to_cpu(st->subop);
    e->flags = le32_to_cpu(st->flags);
    e->scalar = trn_f64(le64_to_cpu(st->scalar));
    e->alpha = trn_f64(le64_to_cpu(st->alpha));
    e->dst.dtype = st->dtype;
    for (unsigned j = 0; j < 3; j++) {
        if (j >= e->nsrc) {
            if (st->src[j]) {
                return trn_bad_insn(k, "EXPR: a step names a source it "
                                    "does not take");
            }
            continue;
        }
        if (st->src[j] >= NISA_EXPR_NUM_REGS || !set[st->src[j]]) {
            return trn_bad_insn(k, "EXPR: a step reads a register not set");
        }
        e->src[j].dtype = dtype[st->src[j]];
    }
    e->integer = trn_ew_integer(e);
    if (trn_ew_bitwise(e) && !e->integer) {
        return trn_bad_insn(k, "EXPR: bitwise step on a non-integer operand");
    }
    s->dst = st->dst;
    memcpy(s->src, st->src, sizeof(s->src));
    dtype[st->dst] = st->dtype;
    set[st->dst] = true;
    return NISA_ERR_NONE;
}

/* The program, from the STEPS continuations at @code. */
static uint32_t trn_expr_program(TrnKernel *k, TrnExpr *x,
                                 const struct nisa_tensor *dst,
                                 const struct nisa_insn *code)
{
    uint8_t dtype[NISA_EXPR_NUM_REGS] = { 0 };
    bool set[NISA_EXPR_NUM_REGS] = { false };
    unsigned nrec = (x->nsteps + NISA_EXPR_STEPS_PER_DATA - 1) /
                    NISA_EXPR_STEPS_PER_DATA;
    uint32_t err;

    for (unsigned i = 0; i < x->ninputs; i++) {
        dtype[i] = x->in[i].dtype;
        set[i] = true;
    }
    for (unsigned r = 0; r < nrec; r++) {
        static const struct nisa_expr_step none;
        struct nisa_expr_steps rec;

        memcpy(&rec, &code[r], sizeof(rec));
        if (le16_to_cpu(rec.opcode) != NISA_INSN_EXPR_DATA ||
            le16_to_cpu(rec.subop) != NISA_EXPR_DATA_STEPS || rec.rsvd0 ||
            rec.rsvd[0] || rec.rsvd[1] || rec.rsvd[2]) {
            return trn_bad_insn(k, "EXPR: malformed STEPS continuation");
        }
        if (memcmp(&rec.dst, dst, sizeof(rec.dst))) {
            return trn_bad_insn(k, "EXPR: a STEPS continuation's dst is not "
                                "the EXPR's");
        }
        for (unsigned j = 0; j < NISA_EXPR_STEPS_PER_DATA; j++) {
            unsigned n = r * NISA_EXPR_STEPS_PER_DATA + j;

            if (n >= x->nsteps) {
                if (memcmp(&rec.step[j], &none, sizeof(none))) {
                    return trn_bad_insn(k, "EXPR: a step past the count "
                                        "is set");
                }
                continue;
            }
            err = trn_expr_step(k, x, n, &rec.step[j], dtype, set);
            if (err) {
                return err;
            }
        }
    }
    if (x->step[x->nsteps - 1].e.dst.dtype != x->dst.dtype) {
        return trn_bad_insn(k, "EXPR: dst's dtype is not the last step's");
    }
    return NISA_ERR_NONE;
}

/*
 * A computed block into register @r of @dtype, as an instruction storing
 * it into a tensor of @dtype and the next loading it: in double (@od)
 * or, for an integer step, in int64 (@oi, @wrap as its store).
 */
/*
 * To float32, in blocks of 8 that vectorize. A NaN keeps its payload here
 * (trn_to_f32() would make it the quiet NaN, with its sign): no result
 * but a NaN depends on a payload, the sign is kept, and dst's store makes
 * every NaN the quiet NaN -- the bits of the unfused instructions.
 */
static TRN_CLONES void trn_expr_round_f32(double *restrict d,
                                          const double *restrict o,
                                          uint64_t n)
{
    uint64_t j = 0;

    for (; j + 8 <= n; j += 8) {
        double t[8];

        for (unsigned u = 0; u < 8; u++) {
            t[u] = (float)o[j + u];
        }
        for (unsigned u = 0; u < 8; u++) {
            d[j + u] = t[u];
        }
    }
    for (; j < n; j++) {
        d[j] = (float)o[j];
    }
}

static void trn_expr_round(TrnExprRegs *g, unsigned r, uint8_t dtype,
                           bool integer, bool wrap, uint64_t n)
{
    double *d = g->d[r];
    int64_t *i = g->i[r];
    uint8_t tmp[8];

    if (!integer && dtype == NISA_F32) {
        trn_expr_round_f32(d, g->od, n);
        return;
    }
    for (uint64_t j = 0; j < n; j++) {
        if (integer) {
            trn_store_i64(dtype, tmp, g->oi[j], wrap);
        } else {
            trn_store(dtype, tmp, g->od[j]);
        }
        d[j] = trn_load(dtype, tmp);
        if (trn_is_int(dtype)) {
            i[j] = trn_load_i64(dtype, tmp);
        }
    }
}

static void trn_expr_block(const TrnExpr *x, TrnExprRegs *g, uint64_t start,
                           uint64_t n)
{
    const TrnExprStep *last = &x->step[x->nsteps - 1];

    for (unsigned r = 0; r < x->ninputs; r++) {
        if (trn_is_int(x->in[r].dtype)) {
            trn_gather_i64(&x->in[r], start, n, g->i[r]);
            for (uint64_t j = 0; j < n; j++) {
                g->d[r][j] = (double)g->i[r][j];  /* as trn_load() */
            }
        } else {
            trn_gather(&x->in[r], start, n, g->d[r]);
        }
    }
    for (unsigned s = 0; s < x->nsteps; s++) {
        const TrnExprStep *st = &x->step[s];
        const TrnEw *e = &st->e;

        if (e->integer) {
            const int64_t *src[3] = { g->i[st->src[0]], g->i[st->src[1]],
                                      g->i[st->src[2]] };

            trn_ew_apply_i64(e, g->d[st->src[0]], src, g->si, g->oi, n);
            g->div_zero |= trn_ew_divides_by_zero(e, src, n);
        } else {
            const double *src[3] = { g->d[st->src[0]], g->d[st->src[1]],
                                     g->d[st->src[2]] };

            trn_ew_apply_f64(e, src, g->sd, g->od, n);
        }
        trn_expr_round(g, st->dst, e->dst.dtype, e->integer, e->wrap, n);
    }
    /* Already of dst's dtype: storing it rounds nothing. */
    if (trn_is_int(x->dst.dtype)) {
        trn_scatter_i64(&x->dst, start, n, g->i[last->dst], true);
    } else {
        trn_scatter(&x->dst, start, n, g->d[last->dst]);
    }
}

/*
 * The float32 path: registers of floats. +, -, *, / of float32 values
 * (alpha 1, a scalar float32 holds) are computed in float32, eight at a
 * time: the same bits as in double rounded once (as trainium-ew-f32.c's
 * trn_f32_exact()), the other +, -, *, / in double lanes, in the same
 * pass (trn_expr_f32_op()); the UNARY functions with a vector kernel
 * (trainium-ew-fast.h) through it, with the same bits too; every other
 * step goes through double as above.
 */
static bool trn_expr_arith(const TrnEw *e)
{
    return e->op == NISA_INSN_BINARY &&
           (e->sub == NISA_BIN_ADD || e->sub == NISA_BIN_SUB ||
            e->sub == NISA_BIN_MUL || e->sub == NISA_BIN_DIV);
}

/* Of those, the steps computed in float32 itself: the same bits. */
static bool trn_expr_f32_fast(const TrnEw *e)
{
    bool additive = e->sub == NISA_BIN_ADD || e->sub == NISA_BIN_SUB;

    if (!trn_expr_arith(e) || (additive && e->alpha != 1.0)) {
        return false;
    }
    return !(e->flags & NISA_IF_SCALAR) ||
           (double)(float)e->scalar == e->scalar;
}

/* d[j] = @VAL for j < @nn (a multiple of 8), through a local block. */
#define TRN_EXPR_F32_BLOCKS(VAL)                                            \
    for (uint64_t j = 0; j < nn; j += 8) {                                  \
        float t_[8];                                                        \
        for (unsigned u = 0; u < 8; u++) {                                  \
            t_[u] = (VAL);                                                  \
        }                                                                   \
        for (unsigned u = 0; u < 8; u++) {                                  \
            d[j + u] = t_[u];                                               \
        }                                                                   \
    }
/* The three forms of a step: tensor op tensor, op scalar, scalar op. */
#define TRN_EXPR_FORMS(EXPR_T, EXPR_S, EXPR_R)                              \
    do {                                                                    \
        if (!scalar) {                                                      \
            TRN_EXPR_F32_BLOCKS(EXPR_T);                                    \
        } else if (!rev) {                                                  \
            TRN_EXPR_F32_BLOCKS(EXPR_S);                                    \
        } else {                                                            \
            TRN_EXPR_F32_BLOCKS(EXPR_R);                                    \
        }                                                                   \
    } while (0)
#define TRN_EXPR_F32_FORMS(OP)                                              \
    TRN_EXPR_FORMS(x[j + u] OP y[j + u], x[j + u] OP fs, fs OP x[j + u])
#define TRN_EXPR_F64_FORMS(EXPR_T, EXPR_S, EXPR_R)                          \
    TRN_EXPR_FORMS((float)(EXPR_T), (float)(EXPR_S), (float)(EXPR_R))

/*
 * A +, -, *, / step over @n elements (rounded up to 8: the registers hold
 * TRN_EXPR_BLOCK, the lanes past @n are never stored): in float32 when
 * trn_expr_f32_fast() admits it; else in double lanes, as trn_bin_add()
 * and its kin compute, rounded to float32 as trn_expr_f32_narrow() rounds
 * -- the bits of the widen/apply/narrow path below, in one pass.
 */
static TRN_CLONES void trn_expr_f32_op(const TrnEw *e, const float *x,
                                       const float *y, float *d,
                                       uint64_t n)
{
    bool scalar = e->flags & NISA_IF_SCALAR, rev = e->flags & NISA_IF_REVERSE;
    uint64_t nn = (n + 7) & ~(uint64_t)7;
    double sc = e->scalar, al = e->alpha;
    float fs = (float)e->scalar;

    if (rev && !scalar) {       /* src1 op src0 */
        const float *t = x;

        x = y;
        y = t;
    }
    if (trn_expr_f32_fast(e)) {
        switch (e->sub) {
        case NISA_BIN_ADD:
            TRN_EXPR_F32_FORMS(+);
            break;
        case NISA_BIN_SUB:
            TRN_EXPR_F32_FORMS(-);
            break;
        case NISA_BIN_MUL:
            TRN_EXPR_F32_FORMS(*);
            break;
        default:
            TRN_EXPR_F32_FORMS(/);
            break;
        }
        return;
    }
    switch (e->sub) {
    case NISA_BIN_ADD:
        TRN_EXPR_F64_FORMS((double)x[j + u] + al * (double)y[j + u],
                           (double)x[j + u] + al * sc,
                           sc + al * (double)x[j + u]);
        break;
    case NISA_BIN_SUB:
        TRN_EXPR_F64_FORMS((double)x[j + u] - al * (double)y[j + u],
                           (double)x[j + u] - al * sc,
                           sc - al * (double)x[j + u]);
        break;
    case NISA_BIN_MUL:
        TRN_EXPR_F64_FORMS((double)x[j + u] * (double)y[j + u],
                           (double)x[j + u] * sc, sc * (double)x[j + u]);
        break;
    default:
        TRN_EXPR_F64_FORMS((double)x[j + u] / (double)y[j + u],
                           (double)x[j + u] / sc, sc / (double)x[j + u]);
        break;
    }
}

/*
 * A COMPARE step (its bool as 1.0 or 0.0) or a WHERE on float registers
 * (its condition true when not 0, as trn_f32_where_run() has it), in
 * blocks of 8 that do not branch: the values of the double path.
 */
#define TRN_EXPR_CMP(NAME, name)                                            \
    case NISA_CMP_##NAME:                                                   \
        if (scalar) {                                                       \
            TRN_EXPR_F32_BLOCKS(trn_cmp_##name(x[j + u], sc) != 0 ? 1.0f : 0.0f); \
        } else {                                                            \
            TRN_EXPR_F32_BLOCKS(trn_cmp_##name(x[j + u], y[j + u]) != 0 ? 1.0f \
                                                                : 0.0f);    \
        }                                                                   \
        return;
#define TRN_EXPR_CMPCASE(N, n, kind) TRN_EXPR_CMP(N, n)

static TRN_CLONES void trn_expr_f32_compare(const TrnEw *e, const float *x,
                                            const float *y, float *d,
                                            uint64_t n)
{
    bool scalar = e->flags & NISA_IF_SCALAR;
    uint64_t nn = (n + 7) & ~(uint64_t)7;
    double sc = e->scalar;

    switch ((enum nisa_compare)e->sub) {
    NISA_COMPARE_OPS(TRN_EXPR_CMPCASE)
    case NISA_NUM_COMPARE:
        break;
    }
    g_assert_not_reached();     /* trn_expr_step() bounded the subop */
}

/*
 * Eight lanes at a time in vector registers: a mask from the condition
 * (!= 0, so a NaN is true, as in C) selects the bits of x or y. No local
 * arrays: filled through memory lane by lane (and zeroed first, as QEMU
 * builds with -ftrivial-auto-var-init=zero), they cost the core a stalled
 * store-to-load forward per block -- a quarter of a masked attention's
 * EXPR was that. d may be x or y (the same lanes): each block is loaded
 * before it is stored.
 */
typedef float TrnV8f __attribute__((vector_size(32)));
typedef int32_t TrnV8i __attribute__((vector_size(32)));

static TRN_CLONES void trn_expr_f32_where(const float *c, const float *x,
                                          const float *y, float *d,
                                          uint64_t n)
{
    uint64_t nn = (n + 7) & ~(uint64_t)7;

    for (uint64_t j = 0; j < nn; j += 8) {
        TrnV8f cv, xv, yv;
        TrnV8i m, r;

        memcpy(&cv, c + j, sizeof(cv));
        memcpy(&xv, x + j, sizeof(xv));
        memcpy(&yv, y + j, sizeof(yv));
        m = cv != (TrnV8f){ 0 };
        r = (m & (TrnV8i)xv) | (~m & (TrnV8i)yv);
        memcpy(d + j, &r, sizeof(r));
    }
}

static TRN_CLONES void trn_expr_f32_widen(double *restrict d,
                                          const float *restrict f,
                                          uint64_t n)
{
    uint64_t nn = (n + 7) & ~(uint64_t)7;

    for (uint64_t j = 0; j < nn; j++) {
        d[j] = f[j];
    }
}

static TRN_CLONES void trn_expr_f32_narrow(float *restrict f,
                                           const double *restrict d,
                                           uint64_t n)
{
    uint64_t nn = (n + 7) & ~(uint64_t)7;

    for (uint64_t j = 0; j < nn; j++) {
        f[j] = (float)d[j];     /* NaN payloads: see trn_expr_round_f32() */
    }
}

static void trn_expr_block_f32(const TrnExpr *x, TrnExprRegs *g,
                               uint64_t start, uint64_t n)
{
    const TrnExprStep *last = &x->step[x->nsteps - 1];

    for (unsigned r = 0; r < x->ninputs; r++) {
        trn_gather_f32(&x->in[r], start, n, g->f[r]);
    }
    for (unsigned s = 0; s < x->nsteps; s++) {
        const TrnExprStep *st = &x->step[s];
        const double *src[3] = { g->d[0], g->d[1], g->d[2] };

        if (trn_expr_arith(&st->e)) {
            trn_expr_f32_op(&st->e, g->f[st->src[0]], g->f[st->src[1]],
                            g->f[st->dst], n);
            continue;
        }
        if (st->e.op == NISA_INSN_COMPARE) {
            trn_expr_f32_compare(&st->e, g->f[st->src[0]], g->f[st->src[1]],
                                 g->f[st->dst], n);
            continue;
        }
        if (st->e.op == NISA_INSN_WHERE) {
            trn_expr_f32_where(g->f[st->src[0]], g->f[st->src[1]],
                               g->f[st->src[2]], g->f[st->dst], n);
            continue;
        }
        if (st->e.op == NISA_INSN_UNARY && trn_ew_fast_unary(st->e.sub)) {
            /* A cast, as trn_expr_f32_narrow(): NaN payloads kept. */
            trn_ew_fast_unary(st->e.sub)(g->f[st->src[0]], g->f[st->dst], n,
                                         false);
            continue;
        }
        for (unsigned j = 0; j < st->e.nsrc; j++) {
            trn_expr_f32_widen(g->d[j], g->f[st->src[j]], n);
        }
        trn_ew_apply_f64(&st->e, src, g->sd, g->od, n);
        trn_expr_f32_narrow(g->f[st->dst], g->od, n);
    }
    trn_scatter_f32(&x->dst, start, n, g->f[last->dst]);
}

/*
 * Every register float32: inputs, steps (none exact on int64), dst; or a
 * COMPARE's bool, which the float path holds as 0.0 or 1.0 -- the values
 * the double path's bool register holds, so every later step sees the
 * same (a WHERE its condition, arithmetic its operand).
 */
static bool trn_expr_all_f32(const TrnExpr *x)
{
    for (unsigned i = 0; i < x->ninputs; i++) {
        if (x->in[i].dtype != NISA_F32) {
            return false;
        }
    }
    for (unsigned s = 0; s < x->nsteps; s++) {
        const TrnEw *e = &x->step[s].e;

        if (e->integer || (e->dst.dtype != NISA_F32 &&
                           !(e->op == NISA_INSN_COMPARE &&
                             e->dst.dtype == NISA_BOOL))) {
            return false;
        }
    }
    return x->dst.dtype == NISA_F32;
}

static void trn_expr_range(const TrnExpr *x, TrnExprRegs *g, uint64_t start,
                           uint64_t end)
{
    for (; start < end; start += TRN_EXPR_BLOCK) {
        uint64_t n = MIN(TRN_EXPR_BLOCK, end - start);

        if (x->f32) {
            trn_expr_block_f32(x, g, start, n);
        } else {
            trn_expr_block(x, g, start, n);
        }
    }
}

/*
 * A large EXPR is shared by the card's threads (trn_pool_run()) in pieces
 * of TRN_ITER_SHARE_PIECE elements of dst's order, each walked block by
 * block as on one thread: an element's value does not depend on the
 * piece it falls in. Only when dst writes each byte once and every input
 * is dst exactly (in place) or apart from it, so that the order of the
 * pieces cannot change a result.
 */
typedef struct TrnExprShare {
    const TrnExpr *x;
    TrnExprRegs **regs;   /* per worker; the worker's own is k's */
} TrnExprShare;

static void trn_expr_piece(void *arg, unsigned w, uint64_t i)
{
    TrnExprShare *sh = arg;
    uint64_t start = i * TRN_ITER_SHARE_PIECE;

    if (!sh->regs[w]) {
        sh->regs[w] = g_new0(TrnExprRegs, 1);
    }
    trn_expr_range(sh->x, sh->regs[w], start,
                   MIN(start + TRN_ITER_SHARE_PIECE, sh->x->dst.numel));
}

static bool trn_expr_independent(const TrnExpr *x)
{
    if (!trn_strides_nest(x->dst.shape, x->dst.stride, NISA_MAX_DIMS)) {
        return false;
    }
    for (unsigned i = 0; i < x->ninputs; i++) {
        const TrnView *v = &x->in[i];
        bool same = v->data == x->dst.data && v->esize == x->dst.esize;

        for (unsigned d = 0; same && d < NISA_MAX_DIMS; d++) {
            same = v->shape[d] == x->dst.shape[d] &&
                   v->stride[d] == x->dst.stride[d];
        }
        if (!same && trn_overlap(v, &x->dst)) {
            return false;
        }
    }
    return true;
}

/*
 * The kernel's TrnExpr for a program of @nsteps steps and @ninputs
 * inputs, zeroed as far as they reach: made once per launch. Zeroing the
 * whole of it (32 steps of four views each) for every EXPR cost about a
 * quarter of a 1024-element EXPR (neuron-bench's card_insn_expr1024_us:
 * 1.46-2.09 us, 1.19-1.44 without).
 */
static TrnExpr *trn_expr_scratch(TrnKernel *k, unsigned nsteps,
                                 unsigned ninputs)
{
    TrnExpr *x = k->expr;

    if (!x) {
        x = k->expr = g_new(TrnExpr, 1);
    }
    memset(x, 0, offsetof(TrnExpr, in));
    memset(x->in, 0, ninputs * sizeof(x->in[0]));
    memset(x->step, 0, nsteps * sizeof(x->step[0]));
    x->nsteps = nsteps;
    x->ninputs = ninputs;
    return x;
}

uint32_t trn_insn_expr(TrnKernel *k, uint64_t at, uint64_t *len)
{
    const struct nisa_insn *in = &k->code[at];
    unsigned nsteps = le16_to_cpu(in->subop);
    TrnExpr *x;
    TrnExprRegs *g;
    int32_t ninputs = (int32_t)le32_to_cpu(in->axis);
    unsigned nin_rec;
    uint32_t err;

    if (in->flags || in->scalar || in->alpha) {
        return trn_bad_insn(k, "EXPR: flags, scalar or alpha set");
    }
    if (nsteps < 1 || nsteps > NISA_EXPR_MAX_STEPS ||
        ninputs < 0 || ninputs > NISA_EXPR_MAX_INPUTS) {
        return trn_bad_insn(k, "EXPR: step or input count out of range");
    }
    x = trn_expr_scratch(k, nsteps, ninputs);
    *len = nisa_expr_length(x->nsteps, x->ninputs);
    if (*len > k->ninsns - at) {
        return trn_bad_insn(k, "EXPR: its continuations run past the kernel");
    }
    nin_rec = x->ninputs > 3 ? (x->ninputs - 3 + 3) / 4 : 0;
    err = trn_view_init(k, &in->dst, TRN_WRITE, &x->dst);
    if (!err) {
        err = trn_expr_inputs(k, x, in);
    }
    if (!err) {
        err = trn_expr_program(k, x, &in->dst, in + 1 + nin_rec);
    }
    if (err || !x->dst.numel) {
        return err;
    }
    if (!k->expr_regs) {
        k->expr_regs = g_new0(TrnExprRegs, 1);
    }
    g = k->expr_regs;
    x->f32 = trn_expr_all_f32(x);
    if (x->dst.numel >= TRN_ITER_SHARE_MIN && trn_expr_independent(x)) {
        unsigned workers = trn_pool_workers(k->s->pool);
        TrnExprShare sh = { x, g_new0(TrnExprRegs *, workers) };

        sh.regs[0] = g;
        g->div_zero = false;
        err = trn_pool_run(k, DIV_ROUND_UP(x->dst.numel, TRN_ITER_SHARE_PIECE),
                           trn_expr_piece, &sh);
        for (unsigned w = 1; w < workers; w++) {
            g->div_zero |= sh.regs[w] && sh.regs[w]->div_zero;
            g_free(sh.regs[w]);
        }
        g_free(sh.regs);
        return err ? err : g->div_zero ? NISA_ERR_DIV_ZERO : NISA_ERR_NONE;
    }
    g->div_zero = false;
    for (uint64_t start = 0; start < x->dst.numel; start += TRN_EXPR_BLOCK) {
        uint64_t n = MIN(TRN_EXPR_BLOCK, x->dst.numel - start);

        if (trn_tick(k, n * x->nsteps)) {
            return NISA_ERR_ABORTED;
        }
        trn_expr_range(x, g, start, start + n);
    }
    /* What dst holds is then unspecified (docs/hardware.md, "Numerics"). */
    return g->div_zero ? NISA_ERR_DIV_ZERO : NISA_ERR_NONE;
}

/*
 * Virtual Trainium accelerator: the elementwise instructions on float32
 * operands (and COMPARE's bool result, WHERE's condition), computed
 * straight from device memory. Same arithmetic as the
 * general engine (trainium-elementwise.c): each element is converted to
 * double, goes through the same inline function of trainium-ew-ops.h and is
 * rounded once by trn_to_f32(); only the double buffers are skipped. The
 * operands are walked together as runs (trainium-iter.h); a run whose
 * operands are all contiguous goes in blocks of 8 that the compiler turns
 * into vector instructions.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "trainium-ew.h"
#include "trainium-ew-ops.h"
#include "trainium-ew-fast.h"
#include "trainium-iter.h"

/*
 * The run functions are TRN_CLONES; their helpers, QEMU_ALWAYS_INLINE, are
 * inlined into both clones.
 */

/*
 * The runs of one call: row r of operand o starts at o + r * ro (elements);
 * in a row, element j of d, a, b is d[j * sd], a[j * sa], b[j * sb]. A
 * BINARY's @b may be broadcast along the row (@bcast: its first element is
 * the row's scalar), or absent (the instruction's scalar @s).
 */
typedef struct TrnF32Run {
    float *d;
    const float *a, *b;
    int64_t sd, sa, sb, rd, ra, rb;
    uint64_t n, rows;
    bool contig, bcast;
    double s;
} TrnF32Run;

/*
 * For each row, and each j < n of it: d[j] = @VAL_C when the rows are
 * contiguous, else d[j * sd] = @VAL_S; @VAL_* read the row's a, b and s.
 * The contiguous form goes in blocks of 8, then one of 4 (a row of a 2x2
 * or 4x4 window is short), each computed into a local array before it is
 * stored: with no possible overlap between loads and stores, -O2 turns the
 * block into vector instructions (and an exactly aliased in-place operand
 * stays correct).
 */
#define TRN_F32_FOR(r, VAL_C, VAL_S)                                        \
    for (uint64_t row_ = 0; row_ < (r)->rows; row_++) {                     \
        float *d_ = (r)->d + (int64_t)row_ * (r)->rd;                       \
        const float *a = (r)->a + (int64_t)row_ * (r)->ra;                  \
        const float *b = (r)->b + (int64_t)row_ * (r)->rb;                  \
        double s = (r)->bcast ? (double)b[0] : (r)->s;                      \
        uint64_t j_ = 0;                                                    \
                                                                            \
        (void)a, (void)b, (void)s;                                          \
        if ((r)->contig) {                                                  \
            for (; j_ + 8 <= (r)->n; j_ += 8) {                             \
                float t_[8];                                                \
                for (unsigned u_ = 0; u_ < 8; u_++) {                       \
                    uint64_t j = j_ + u_;                                   \
                    t_[u_] = (VAL_C);                                       \
                }                                                           \
                for (unsigned u_ = 0; u_ < 8; u_++) {                       \
                    d_[j_ + u_] = t_[u_];                                   \
                }                                                           \
            }                                                               \
            if (j_ + 4 <= (r)->n) {                                         \
                float t_[4];                                                \
                                                                            \
                for (unsigned u_ = 0; u_ < 4; u_++) {                       \
                    uint64_t j = j_ + u_;                                   \
                    t_[u_] = (VAL_C);                                       \
                }                                                           \
                for (unsigned u_ = 0; u_ < 4; u_++) {                       \
                    d_[j_ + u_] = t_[u_];                                   \
                }                                                           \
                j_ += 4;                                                    \
            }                                                               \
            for (; j_ < (r)->n; j_++) {                                     \
                uint64_t j = j_;                                            \
                d_[j] = (VAL_C);                                            \
            }                                                               \
        } else {                                                            \
            for (; j_ < (r)->n; j_++) {                                     \
                int64_t j = (int64_t)j_;                                    \
                d_[j * (r)->sd] = (VAL_S);                                  \
            }                                                               \
        }                                                                   \
    }

#define TRN_F32_UN(NAME, name)                                               \
    case NISA_UN_##NAME:                                                     \
        TRN_F32_FOR(r, trn_to_f32(trn_un_##name(a[j], p, q)),               \
                    trn_to_f32(trn_un_##name(a[j * r->sa], p, q)));          \
        return;
#define TRN_F32_UN_EXACT(N, n) TRN_F32_UN(N, n)
#define TRN_F32_UN_REAL(N, n) TRN_F32_UN(N, n)
#define TRN_F32_UN_BITS(N, n) case NISA_UN_##N: break;
#define TRN_F32_UNCASE(N, n, kind) TRN_F32_UN_##kind(N, n)

static inline QEMU_ALWAYS_INLINE
void trn_f32_unary(const TrnF32Run *r, enum nisa_unary fn,
                   double p, double q)
{
    switch (fn) {
    NISA_UNARY_OPS(TRN_F32_UNCASE)
    case NISA_NUM_UNARY:
        break;
    }
    g_assert_not_reached();     /* checked: a float bits function is refused */
}

/*
 * A UNARY with a vector kernel (trainium-ew-fast.h): contiguous rows
 * straight, strided ones through a local block.
 */
static void trn_f32_unary_fast(const TrnF32Run *r, TrnF32UnaryFn *fast)
{
    float xb[256], db[256];

    for (uint64_t row = 0; row < r->rows; row++) {
        float *d = r->d + (int64_t)row * r->rd;
        const float *a = r->a + (int64_t)row * r->ra;

        if (r->contig) {
            fast(a, d, r->n, true);
            continue;
        }
        for (uint64_t j0 = 0; j0 < r->n; j0 += ARRAY_SIZE(xb)) {
            uint64_t m = MIN(ARRAY_SIZE(xb), r->n - j0);

            for (uint64_t j = 0; j < m; j++) {
                xb[j] = a[(int64_t)(j0 + j) * r->sa];
            }
            fast(xb, db, m, true);
            for (uint64_t j = 0; j < m; j++) {
                d[(int64_t)(j0 + j) * r->sd] = db[j];
            }
        }
    }
}

/*
 * Forms: 0 tensor op tensor, 1 tensor op s, 2 s op tensor; the tensor is
 * @a, s the instruction's scalar or the broadcast @b's value in the row.
 */
#define TRN_F32_BIN(NAME, name)                                              \
    case NISA_BIN_##NAME:                                                    \
        if (form == 0) {                                                     \
            TRN_F32_FOR(r, trn_to_f32(trn_bin_##name(a[j], b[j], al)),      \
                        trn_to_f32(trn_bin_##name(a[j * r->sa], b[j * r->sb], \
                                                  al)));                     \
        } else if (form == 1) {                                              \
            TRN_F32_FOR(r, trn_to_f32(trn_bin_##name(a[j], s, al)),         \
                        trn_to_f32(trn_bin_##name(a[j * r->sa], s, al)));    \
        } else {                                                             \
            TRN_F32_FOR(r, trn_to_f32(trn_bin_##name(s, a[j], al)),         \
                        trn_to_f32(trn_bin_##name(s, a[j * r->sa], al)));    \
        }                                                                    \
        return;
#define TRN_F32_BIN_EXACT(N, n) TRN_F32_BIN(N, n)
#define TRN_F32_BIN_REAL(N, n) TRN_F32_BIN(N, n)
#define TRN_F32_BIN_BITS(N, n) case NISA_BIN_##N: break;
#define TRN_F32_BINCASE(N, n, kind, ...) TRN_F32_BIN_##kind(N, n)

static inline QEMU_ALWAYS_INLINE
void trn_f32_binary(const TrnF32Run *r, enum nisa_binary op,
                    unsigned form, double al)
{
    switch (op) {
    NISA_BINARY_OPS(TRN_F32_BINCASE)
    case NISA_NUM_BINARY:
        break;
    }
    g_assert_not_reached();     /* checked: a float bits function is refused */
}

/* A float32 result stored as trn_to_f32() stores it (a NaN made quiet). */
static inline float trn_f32_quiet(float f)
{
    return isnan(f) ? (signbit(f) ? -NAN : NAN) : f;
}

/* One of +, -, *, / in float32, in each form (see trn_f32_exact()). */
#define TRN_F32_EXACT(r, form, OP)                                           \
    do {                                                                     \
        if ((form) == 0) {                                                   \
            TRN_F32_FOR(r, trn_f32_quiet(a[j] OP b[j]),                      \
                        trn_f32_quiet(a[j * (r)->sa] OP b[j * (r)->sb]));    \
        } else if ((form) == 1) {                                            \
            TRN_F32_FOR(r, trn_f32_quiet(a[j] OP (float)s),                  \
                        trn_f32_quiet(a[j * (r)->sa] OP (float)s));          \
        } else {                                                             \
            TRN_F32_FOR(r, trn_f32_quiet((float)s OP a[j]),                  \
                        trn_f32_quiet((float)s OP a[j * (r)->sa]));          \
        }                                                                    \
    } while (0)

/*
 * x + y, x - y, x * y and x / y of float32 values (the scalar, if any, a
 * float32 value too, and alpha 1 for + and -) computed in float32: the same
 * bits as in double rounded once to float32, since double's 53 bits are at
 * least 2 * 24 + 2 (double rounding is then innocuous for these operations,
 * S. A. Figueroa, 1995), with twice the elements per vector instruction
 * and no conversions. False for anything else (computed in double).
 */
static inline QEMU_ALWAYS_INLINE
bool trn_f32_exact(const TrnF32Run *r, enum nisa_binary op,
                   unsigned form, double al)
{
    if (form != 0 && !r->bcast && (double)(float)r->s != r->s) {
        return false;           /* a scalar float32 cannot hold */
    }
    if ((op == NISA_BIN_ADD || op == NISA_BIN_SUB) && al != 1.0) {
        return false;
    }
    if (op == NISA_BIN_ADD) {
        TRN_F32_EXACT(r, form, +);
    } else if (op == NISA_BIN_SUB) {
        TRN_F32_EXACT(r, form, -);
    } else if (op == NISA_BIN_MUL) {
        TRN_F32_EXACT(r, form, *);
    } else if (op == NISA_BIN_DIV) {
        TRN_F32_EXACT(r, form, /);
    } else {
        return false;
    }
    return true;
}

/* A BINARY's runs: a source with stride 0 along the rows is a scalar. */
static inline QEMU_ALWAYS_INLINE
void trn_f32_binary_runs(const TrnEw *e, TrnF32Run *r)
{
    bool scalar = e->flags & NISA_IF_SCALAR, rev = e->flags & NISA_IF_REVERSE;
    unsigned form;

    if (scalar) {
        form = rev ? 2 : 1;
        r->b = r->a;            /* unused */
        r->sb = r->rb = 0;
    } else {
        if (rev) {              /* x is src1, y is src0 */
            const float *t = r->a;
            int64_t ts = r->sa, tr = r->ra;

            r->a = r->b;
            r->sa = r->sb;
            r->ra = r->rb;
            r->b = t;
            r->sb = ts;
            r->rb = tr;
        }
        if (r->sb == 0 && r->n > 1) {
            form = 1;           /* x op y[0] */
            r->bcast = true;
        } else if (r->sa == 0 && r->n > 1) {
            const float *t = r->a;
            int64_t tr = r->ra;

            form = 2;           /* x[0] op y: y is the tensor */
            r->bcast = true;
            r->a = r->b;
            r->sa = r->sb;
            r->ra = r->rb;
            r->b = t;
            r->sb = 0;
            r->rb = tr;
        } else {
            form = 0;
        }
    }
    r->contig = r->sd == 1 && r->sa == 1 && (form != 0 || r->sb == 1);
    if (!trn_f32_exact(r, e->sub, form, e->alpha)) {
        trn_f32_binary(r, e->sub, form, e->alpha);
    }
}

static TRN_CLONES void trn_f32_run(void *opaque, const TrnRuns *runs)
{
    const TrnEw *e = opaque;
    TrnF32Run r = {
        .d = (float *)runs->p[0], .sd = runs->st[0], .rd = runs->row[0] / 4,
        .n = runs->n, .rows = runs->rows, .s = e->scalar,
    };

    /* An operand the instruction lacks reads as dst (never dereferenced). */
    r.a = e->nsrc >= 1 ? (const float *)runs->p[1] : r.d;
    r.b = e->nsrc >= 2 ? (const float *)runs->p[2] : r.a;
    if (e->nsrc >= 1) {
        r.sa = runs->st[1];
        r.ra = runs->row[1] / 4;
    }
    if (e->nsrc >= 2) {
        r.sb = runs->st[2];
        r.rb = runs->row[2] / 4;
    }
    r.contig = r.sd == 1 && (e->nsrc < 1 || r.sa == 1);
    if (e->op == NISA_INSN_FILL) {
        float v = trn_to_f32(e->scalar);

        TRN_F32_FOR(&r, ((void)j, v), ((void)j, v));
    } else if (e->op == NISA_INSN_UNARY) {
        TrnF32UnaryFn *fast = trn_ew_fast_unary(e->sub);

        if (fast) {
            trn_f32_unary_fast(&r, fast);
        } else {
            trn_f32_unary(&r, e->sub, e->scalar, e->alpha);
        }
    } else {                    /* BINARY: trn_ew_f32() admitted only these */
        trn_f32_binary_runs(e, &r);
    }
}

/* Operand @i's row @r in a block of runs, as a @type pointer. */
#define TRN_ROW(runs, i, r, type)                                            \
    ((type *)((runs)->p[i] + (int64_t)(r) * (runs)->row[i]))

#define TRN_F32_CMP(NAME, name)                                              \
    case NISA_CMP_##NAME:                                                    \
        for (uint64_t r = 0; r < runs->rows; r++) {                          \
            uint8_t *d = TRN_ROW(runs, 0, r, uint8_t);                       \
            const float *a = TRN_ROW(runs, 1, r, const float);               \
                                                                             \
            if (scalar && sd == 1 && sa == 1) {    /* unit strides */      \
                for (int64_t j = 0; j < n; j++) {                            \
                    d[j] = trn_cmp_##name(a[j], s) != 0;                     \
                }                                                            \
            } else if (scalar) {                                             \
                for (int64_t j = 0; j < n; j++) {                            \
                    d[j * sd] = trn_cmp_##name(a[j * sa], s) != 0;           \
                }                                                            \
            } else if (sd == 1 && sa == 1 && sb == 1) {                      \
                const float *b = TRN_ROW(runs, 2, r, const float);           \
                                                                             \
                for (int64_t j = 0; j < n; j++) {                            \
                    d[j] = trn_cmp_##name(a[j], b[j]) != 0;                  \
                }                                                            \
            } else {                                                         \
                const float *b = TRN_ROW(runs, 2, r, const float);           \
                                                                             \
                for (int64_t j = 0; j < n; j++) {                            \
                    d[j * sd] = trn_cmp_##name(a[j * sa], b[j * sb]) != 0;   \
                }                                                            \
            }                                                                \
        }                                                                    \
        return;
#define TRN_F32_CMPCASE(N, n, kind) TRN_F32_CMP(N, n)

/* COMPARE of float32 sources (or one and the scalar) into a BOOL dst. */
static TRN_CLONES void trn_f32_compare_run(void *opaque,
                                           const TrnRuns *runs)
{
    const TrnEw *e = opaque;
    bool scalar = e->flags & NISA_IF_SCALAR;
    int64_t n = (int64_t)runs->n, sd = runs->st[0], sa = runs->st[1];
    int64_t sb = scalar ? 0 : runs->st[2];
    double s = e->scalar;

    switch ((enum nisa_compare)e->sub) {
    NISA_COMPARE_OPS(TRN_F32_CMPCASE)
    case NISA_NUM_COMPARE:
        break;
    }
    g_assert_not_reached();     /* trn_ew_check() bounded the subop */
}

/*
 * One row of WHERE. Both values are loaded and one is kept, so the loop
 * does not branch on the condition (a ReLU's mask is random: the branch
 * missed half the time, 5.8 ns an element). A row whose destination,
 * condition and values are contiguous, or a value a broadcast scalar, goes
 * in blocks of 8 that vectorize, with the strides as constants.
 */
#define TRN_F32_WHERE_ROW(name, ctype)                                       \
static inline QEMU_ALWAYS_INLINE                                             \
void name(float *d, const ctype *c, const float *x,                          \
          const float *y, int64_t n, int64_t sd, int64_t sc,                 \
          int64_t sx, int64_t sy)                                            \
{                                                                            \
    int64_t j = 0;                                                           \
                                                                             \
    if (sd == 1 && sc == 1) {                                                \
        for (; j + 8 <= n; j += 8) {                                         \
            float t[8];                                                      \
                                                                             \
            for (int64_t u = 0; u < 8; u++) {                                \
                float xv = x[(j + u) * sx], yv = y[(j + u) * sy];            \
                                                                             \
                t[u] = trn_to_f32(c[j + u] != 0 ? xv : yv);                  \
            }                                                                \
            for (int64_t u = 0; u < 8; u++) {                                \
                d[j + u] = t[u];                                             \
            }                                                                \
        }                                                                    \
    }                                                                        \
    for (; j < n; j++) {                                                     \
        float xv = x[j * sx], yv = y[j * sy];                                \
                                                                             \
        d[j * sd] = trn_to_f32(c[j * sc] != 0 ? xv : yv);                    \
    }                                                                        \
}
TRN_F32_WHERE_ROW(trn_f32_where_row_f32, float)
TRN_F32_WHERE_ROW(trn_f32_where_row_u8, uint8_t)

/* The value strides as constants where they are 0 or 1. */
#define TRN_F32_WHERE_STRIDES(fn, d, c, x, y, n, sd, sc, sx, sy)             \
    do {                                                                     \
        if ((sx) == 1 && (sy) == 1) {                                        \
            fn(d, c, x, y, n, sd, sc, 1, 1);                                 \
        } else if ((sx) == 1 && (sy) == 0) {                                 \
            fn(d, c, x, y, n, sd, sc, 1, 0);                                 \
        } else if ((sx) == 0 && (sy) == 1) {                                 \
            fn(d, c, x, y, n, sd, sc, 0, 1);                                 \
        } else {                                                             \
            fn(d, c, x, y, n, sd, sc, sx, sy);                               \
        }                                                                    \
    } while (0)

/* WHERE into float32: the condition BOOL, U8 or F32 (true if not 0). */
static TRN_CLONES void trn_f32_where_run(void *opaque, const TrnRuns *runs)
{
    const TrnEw *e = opaque;
    int64_t n = (int64_t)runs->n, sd = runs->st[0], sc = runs->st[1];
    int64_t sx = runs->st[2], sy = runs->st[3];

    for (uint64_t r = 0; r < runs->rows; r++) {
        float *d = TRN_ROW(runs, 0, r, float);
        const float *x = TRN_ROW(runs, 2, r, const float);
        const float *y = TRN_ROW(runs, 3, r, const float);

        if (e->src[0].dtype == NISA_F32) {
            TRN_F32_WHERE_STRIDES(trn_f32_where_row_f32, d,
                                  TRN_ROW(runs, 1, r, const float), x, y, n,
                                  sd, sc, sx, sy);
        } else {
            TRN_F32_WHERE_STRIDES(trn_f32_where_row_u8, d,
                                  TRN_ROW(runs, 1, r, const uint8_t), x, y, n,
                                  sd, sc, sx, sy);
        }
    }
}

/* Which run function takes @e, if any. */
static TrnRunFn *trn_f32_kind(const TrnEw *e)
{
    uint8_t c = e->nsrc ? e->src[0].dtype : NISA_F32;

    for (unsigned i = e->op == NISA_INSN_WHERE ? 1 : 0; i < e->nsrc; i++) {
        if (e->src[i].dtype != NISA_F32) {
            return NULL;
        }
    }
    switch (e->op) {
    case NISA_INSN_FILL:
    case NISA_INSN_UNARY:
    case NISA_INSN_BINARY:
        return e->dst.dtype == NISA_F32 ? trn_f32_run : NULL;
    case NISA_INSN_COPY:        /* within float32: bits, trn_ew_run() */
        return NULL;
    case NISA_INSN_COMPARE:
        return e->dst.dtype == NISA_BOOL ? trn_f32_compare_run : NULL;
    case NISA_INSN_WHERE:
        return e->dst.dtype == NISA_F32 &&
               (c == NISA_F32 || c == NISA_BOOL || c == NISA_U8)
               ? trn_f32_where_run : NULL;
    TRN_NOT_ELEMENTWISE:
    default:
        return NULL;
    }
}

bool trn_ew_f32(TrnKernel *k, const TrnEw *e, uint32_t *err)
{
    const TrnView *views[TRN_ITER_OPS] = { &e->dst };
    TrnRunFn *fn = trn_f32_kind(e);
    TrnIter it;

    if (!fn) {
        return false;
    }
    for (unsigned i = 0; i < e->nsrc; i++) {
        views[1 + i] = &e->src[i];
    }
    trn_iter_init(&it, views, 1 + e->nsrc);
    *err = trn_iter_runs_shared(k, &it, fn, (void *)e);
    return true;
}

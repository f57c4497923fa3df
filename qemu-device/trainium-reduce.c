/*
 * Virtual Trainium accelerator: reductions along an axis (sum, mean, max,
 * min, argmax, argmin, prod) and softmax / log-softmax.
 *
 * The source is seen as (outer, L, inner) around the axis, which is its
 * row-major order, so element (o, i, j) is linear index (o * L + i) * inner
 * + j and the destination's (o, j) is o * inner + j. Sums accumulate in
 * double; max/min propagate NaN; arg* return the first extreme (a NaN counts
 * as the extreme), like PyTorch; an integer product is exact on int64.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "trainium-isa.h"
#include "trainium-iter.h"
#include "trainium-ew-fast.h"

typedef struct TrnAxis {
    uint64_t outer, len, inner;
} TrnAxis;

/* Resolve @axis (negative counts from the end) of a source with @ndim dims. */
static uint32_t trn_axis(TrnKernel *k, const TrnView *v, int32_t axis,
                         unsigned ndim, TrnAxis *ax)
{
    unsigned a, d;

    if (ndim == 0 && (axis == 0 || axis == -1)) {
        *ax = (TrnAxis){ 1, 1, 1 };
        return NISA_ERR_NONE;
    }
    if (axis < -(int32_t)ndim || axis >= (int32_t)ndim) {
        return trn_bad_insn(k, "axis out of range");
    }
    a = NISA_MAX_DIMS - ndim + (axis < 0 ? axis + ndim : axis);
    *ax = (TrnAxis){ 1, v->shape[a], 1 };
    for (d = 0; d < a; d++) {
        ax->outer *= v->shape[d];
    }
    for (d = a + 1; d < NISA_MAX_DIMS; d++) {
        ax->inner *= v->shape[d];
    }
    return NISA_ERR_NONE;
}

/*
 * One element @x into a log-sum-exp's running max *@m and sum *@s of
 * exp(x - m), rescaling the sum when the max grows; NaN and +inf stick.
 */
static inline void trn_lse_fold(double *m, double *s, double x)
{
    if (isnan(*m) || x == -INFINITY) {
        return;
    }
    if (isnan(x) || x == INFINITY) {
        *m = x;
    } else if (*m == INFINITY) {
        return;
    } else if (x > *m) {
        *s = *s * exp(*m - x) + 1;
        *m = x;
    } else {
        *s += exp(x - *m);
    }
}

/* Fold @x (n lanes) into the accumulators. */
static void trn_fold(enum nisa_reduce red, double *acc, double *arg, const double *x,
                     uint64_t n, uint64_t i)
{
    uint64_t j;

    switch (red) {
    case NISA_RED_SUM:
    case NISA_RED_MEAN:
        for (j = 0; j < n; j++) {
            acc[j] += x[j];
        }
        break;
    case NISA_RED_PROD:
        for (j = 0; j < n; j++) {
            acc[j] *= x[j];
        }
        break;
    case NISA_RED_MAX:
        for (j = 0; j < n; j++) {
            acc[j] = isnan(acc[j]) || isnan(x[j]) ? NAN : fmax(acc[j], x[j]);
        }
        break;
    case NISA_RED_MIN:
        for (j = 0; j < n; j++) {
            acc[j] = isnan(acc[j]) || isnan(x[j]) ? NAN : fmin(acc[j], x[j]);
        }
        break;
    case NISA_RED_LOGSUMEXP:
        /* acc: the largest so far, m; arg: the sum of exp(x - m). */
        for (j = 0; j < n; j++) {
            trn_lse_fold(&acc[j], &arg[j], x[j]);
        }
        break;
    case NISA_RED_ARGMAX:
    case NISA_RED_ARGMIN:
        for (j = 0; j < n; j++) {
            bool better = red == NISA_RED_ARGMAX ? x[j] > acc[j] : x[j] < acc[j];

            if (!isnan(acc[j]) && (isnan(x[j]) || better)) {
                acc[j] = x[j];
                arg[j] = (double)i;
            }
        }
        break;
    case NISA_NUM_REDUCE:
        break; /* refused by trn_insn_reduce() */
    }
}

static bool trn_red_is_arg(unsigned red)
{
    return red == NISA_RED_ARGMAX || red == NISA_RED_ARGMIN;
}

/*
 * The folded lanes' results, in @acc: a mean's division by @len, and
 * log-sum-exp's m + log(s) (-inf when every element was -inf or there was
 * none; +inf and NaN as they came).
 */
static void trn_fold_end(unsigned red, double *acc, const double *arg,
                         uint64_t n, uint64_t len)
{
    for (uint64_t j = 0; j < n && red == NISA_RED_MEAN; j++) {
        acc[j] /= (double)len;
    }
    for (uint64_t j = 0; j < n && red == NISA_RED_LOGSUMEXP; j++) {
        if (isfinite(acc[j])) {
            acc[j] += log(arg[j]);
        }
    }
}

static void trn_fold_init(unsigned red, double *acc, double *arg, uint64_t n)
{
    double init = red == NISA_RED_MAX || red == NISA_RED_ARGMAX ||
                  red == NISA_RED_LOGSUMEXP ? -INFINITY :
                  red == NISA_RED_MIN || red == NISA_RED_ARGMIN ? INFINITY :
                  red == NISA_RED_PROD ? 1 : 0;

    for (uint64_t j = 0; j < n; j++) {
        acc[j] = init;
        arg[j] = 0;
    }
}

/* An integer product, exactly on int64 (two's complement), wrapping at the store. */
static uint32_t trn_prod_int(TrnKernel *k, const TrnView *src, const TrnView *dst,
                             const TrnAxis *ax)
{
    int64_t x;

    for (uint64_t o = 0; o < ax->outer; o++) {
        for (uint64_t j = 0; j < ax->inner; j++) {
            uint64_t acc = 1;

            for (uint64_t i = 0; i < ax->len; i++) {
                if (i % TRN_CHUNK_ELEMS == 0 && trn_tick(k, TRN_CHUNK_ELEMS)) {
                    return NISA_ERR_ABORTED;
                }
                trn_gather_i64(src, (o * ax->len + i) * ax->inner + j, 1, &x);
                acc *= (uint64_t)x;
            }
            x = (int64_t)acc;
            trn_scatter_i64(dst, o * ax->inner + j, 1, &x, true);
        }
    }
    return NISA_ERR_NONE;
}

typedef float TrnRowV4f __attribute__((vector_size(16)));
typedef int32_t TrnRowV4i __attribute__((vector_size(16)));

/*
 * The largest float of @f[0..@n) with each one's sign flipped by @neg
 * (0, or the sign bit: then it is minus the smallest), folded into *@m;
 * *@nan set if one is a NaN (*@m then means nothing). The largest value
 * is exact whatever the order the floats are compared in; only the sign
 * of a zero result depends on it, and the caller does not use that.
 * Eight lanes in two vectors of 4 (one xmm each, AVX2 or not).
 */
static TRN_CLONES void trn_row_max_f32(const float *f, uint64_t n,
                                       uint32_t neg, float *m, bool *nan)
{
    TrnRowV4i sg = { neg, neg, neg, neg }, bad = { 0 };
    TrnRowV4f m0 = { *m, *m, *m, *m }, m1 = m0;
    uint64_t i = 0;
    float r;

    for (; i + 8 <= n; i += 8) {
        TrnRowV4f a, b;
        TrnRowV4i ga, gb;

        memcpy(&a, f + i, sizeof(a));
        memcpy(&b, f + i + 4, sizeof(b));
        a = (TrnRowV4f)((TrnRowV4i)a ^ sg);
        b = (TrnRowV4f)((TrnRowV4i)b ^ sg);
        bad |= (a != a) | (b != b);
        ga = a > m0;
        gb = b > m1;
        m0 = (TrnRowV4f)(((TrnRowV4i)a & ga) | ((TrnRowV4i)m0 & ~ga));
        m1 = (TrnRowV4f)(((TrnRowV4i)b & gb) | ((TrnRowV4i)m1 & ~gb));
    }
    r = *m;
    for (unsigned u = 0; u < 4; u++) {
        r = m0[u] > r ? m0[u] : r;
        r = m1[u] > r ? m1[u] : r;
        if (bad[u]) {
            *nan = true;
        }
    }
    for (; i < n; i++) {
        uint32_t u;
        float v;

        memcpy(&u, &f[i], 4);
        u ^= neg;
        memcpy(&v, &u, 4);
        if (isnan(v)) {
            *nan = true;
        }
        r = v > r ? v : r;
    }
    *m = r;
}

/*
 * A float32 source reduced by SUM, MEAN, MAX, MIN, ARGMAX, ARGMIN or
 * LOGSUMEXP along an axis with nothing after it (one row per output: a
 * layer norm's mean, a softmax's max, a max pooling's windows): each row
 * read straight from memory and folded in order, in double, by the same
 * operations as trn_fold() -- the same bits, without the double buffer
 * and a call per element (a SUM or MEAN four rows at a time,
 * trn_sum_rows4_f32()). A contiguous MAX or MIN row is folded by
 * trn_row_max_f32() instead, in float lanes: the extreme of floats is one
 * of them, exactly, as the double fold's is. A SUM, MEAN, MAX or MIN row
 * that comes out NaN
 * or zero (or, in float lanes, has a NaN) is folded again through
 * trn_gather() and trn_fold() (@x, TRN_CHUNK_ELEMS doubles), so that even
 * the sign of its NaN or zero is theirs (an index has no sign). A
 * contiguous LOGSUMEXP row into float32 is the vector kernel's
 * (trn_fast_logsumexp_row()) when it proves its result is the fold's;
 * any other LOGSUMEXP row is folded element by element by trn_lse_fold(),
 * as the general loop folds it, and ends as trn_fold_end() ends it. The
 * results are stored TRN_CHUNK_ELEMS at a time (@out).
 *
 * Rows [@o0, @o1); @k NULL in a shared piece (trn_reduce_rows_piece()),
 * which accounts no work: the pool checks for a reset between pieces.
 * Returns false if the queue is being reset.
 */
typedef struct TrnRows {
    unsigned red;
    const TrnView *src, *dst;
    const TrnAxis *ax;
    int a;                      /* the reduced dimension of src */
} TrnRows;

/* The first element of row @o of @src (the rows along dimension @a). */
static const float *trn_row_f32(const TrnView *src, int a, uint64_t o)
{
    const uint8_t *p = src->data;

    for (int d = a - 1; d >= 0; d--) {
        p += (int64_t)(o % src->shape[d]) * src->stride[d] * 4;
        o /= src->shape[d];
    }
    return (const float *)p;
}

/*
 * SUM (MEAN) of rows [@o, @o + 4) into @acc: each row added in its own
 * order into its own accumulator, the four chains of dependent adds
 * interleaved so that the core overlaps them -- each row's operations,
 * and so its bits, are those of one row at a time. False if the queue is
 * being reset.
 */
static bool trn_sum_rows4_f32(TrnKernel *k, const TrnRows *rw, uint64_t o,
                              double acc[4])
{
    const float *f[4];
    int64_t st = rw->src->stride[rw->a];
    uint64_t len = rw->ax->len;

    for (unsigned q = 0; q < 4; q++) {
        f[q] = trn_row_f32(rw->src, rw->a, o + q);
        acc[q] = 0;
    }
    for (uint64_t i0 = 0; i0 < len; i0 += TRN_CHUNK_ELEMS) {
        uint64_t n = MIN(TRN_CHUNK_ELEMS, len - i0);
        double a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];

        if (k && trn_tick(k, 4 * (n + 1))) {
            return false;
        }
        for (uint64_t i = i0; i < i0 + n; i++) {
            int64_t at = (int64_t)i * st;

            a0 += f[0][at];
            a1 += f[1][at];
            a2 += f[2][at];
            a3 += f[3][at];
        }
        acc[0] = a0;
        acc[1] = a1;
        acc[2] = a2;
        acc[3] = a3;
    }
    return true;
}

static bool trn_reduce_rows_range(TrnKernel *k, const TrnRows *rw,
                                  uint64_t o0, uint64_t o1, double *x,
                                  double *out)
{
    const TrnView *src = rw->src;
    const TrnAxis *ax = rw->ax;
    unsigned red = rw->red;
    int a = rw->a;
    bool sum = red == NISA_RED_SUM || red == NISA_RED_MEAN;
    bool arg = trn_red_is_arg(red);
    bool max = red == NISA_RED_MAX || red == NISA_RED_ARGMAX;
    bool lse = red == NISA_RED_LOGSUMEXP;
    bool lanes = !sum && !arg && !lse && src->stride[a] == 1;
    /* A contiguous row into float32: the vector kernel, if it proves it. */
    bool lse_fast = lse && src->stride[a] == 1 && rw->dst->dtype == NISA_F32;
    double sums[4];
    uint64_t sums_o = o1;       /* the first row of sums[], none yet */

    for (uint64_t o = o0; o < o1; o++) {
        const float *f = trn_row_f32(src, a, o);
        double acc = sum ? 0 : max || lse ? -INFINITY : INFINITY;
        double g = 0;
        float fm = -INFINITY;
        bool nan = false, summed;

        if (sum && (o < sums_o || o >= sums_o + 4) && o + 4 <= o1) {
            if (!trn_sum_rows4_f32(k, rw, o, sums)) {
                return false;
            }
            sums_o = o;
        }
        summed = sum && o >= sums_o && o < sums_o + 4;
        if (summed) {
            acc = sums[o - sums_o];
        }
        if (lse_fast) {
            float fr;

            if (k && trn_tick(k, ax->len + 1)) {
                return false;
            }
            if (trn_fast_logsumexp_row(f, ax->len, &fr)) {
                out[(o - o0) % TRN_CHUNK_ELEMS] = fr;
                goto store;
            }
        }
        for (uint64_t i0 = summed ? ax->len : 0; i0 < ax->len;
             i0 += TRN_CHUNK_ELEMS) {
            uint64_t n = MIN(TRN_CHUNK_ELEMS, ax->len - i0);

            /* as the general loop: a reset is seen within a chunk */
            if (k && trn_tick(k, n + 1)) {
                return false;
            }
            if (lanes) {
                trn_row_max_f32(f + i0, n, max ? 0 : 0x80000000u, &fm, &nan);
                continue;
            }
            /*
             * A loop of its own for each fold, its accumulators in locals:
             * in one loop with the others, LOGSUMEXP's took acc's address
             * and kept it in memory (a SUM of [1024, 1024] rows 4x slower).
             */
            if (lse) {
                double lm = acc, lg = g;

                for (uint64_t i = i0; i < i0 + n; i++) {
                    trn_lse_fold(&lm, &lg, f[(int64_t)i * src->stride[a]]);
                }
                acc = lm;
                g = lg;
                continue;
            }
            if (sum) {
                double sa = acc;

                for (uint64_t i = i0; i < i0 + n; i++) {
                    sa += f[(int64_t)i * src->stride[a]];
                }
                acc = sa;
                continue;
            }
            for (uint64_t i = i0; i < i0 + n; i++) {
                double v = f[(int64_t)i * src->stride[a]];

                if (arg) {      /* the first NaN, else the first extreme */
                    if (!isnan(acc) && (isnan(v) || (max ? v > acc : v < acc))) {
                        acc = v;
                        g = (double)i;
                    }
                    continue;
                }
                acc = isnan(acc) || isnan(v) ? NAN
                    : max ? fmax(acc, v) : fmin(acc, v);
            }
        }
        if (lanes) {
            acc = nan ? NAN : max ? fm : -(double)fm;
        }
        if (lse) {
            if (isfinite(acc)) {
                acc += log(g);
            }
        } else if (!arg && (isnan(acc) || acc == 0)) {
            trn_fold_init(red, &acc, &g, 1);
            for (uint64_t i0 = 0; i0 < ax->len; i0 += TRN_CHUNK_ELEMS) {
                uint64_t n = MIN(TRN_CHUNK_ELEMS, ax->len - i0);

                if (k && trn_tick(k, n)) {
                    return false;
                }
                trn_gather(src, o * ax->len + i0, n, x);
                for (uint64_t j = 0; j < n; j++) {
                    trn_fold(red, &acc, &g, &x[j], 1, i0 + j);
                }
            }
        }
        if (red == NISA_RED_MEAN) {
            acc /= (double)ax->len;
        }
        out[(o - o0) % TRN_CHUNK_ELEMS] = arg ? g : acc;
store:
        if ((o - o0) % TRN_CHUNK_ELEMS == TRN_CHUNK_ELEMS - 1 || o == o1 - 1) {
            uint64_t c = (o - o0) % TRN_CHUNK_ELEMS + 1;

            trn_scatter(rw->dst, o + 1 - c, c, out);
        }
    }
    return true;
}

/*
 * A large source's rows are shared by the card's threads (trn_pool_run())
 * in pieces of whole rows, about TRN_ITER_SHARE_PIECE elements each: a
 * row's result does not depend on the piece it falls in, nor on the
 * thread. Only when dst writes each byte once and apart from src.
 */
typedef struct TrnRowsShare {
    const TrnRows *rw;
    uint64_t rows;              /* per piece */
} TrnRowsShare;

static void trn_reduce_rows_piece(void *arg, unsigned w, uint64_t i)
{
    TrnRowsShare *sh = arg;
    g_autofree double *x = g_new(double, 2 * TRN_CHUNK_ELEMS);
    uint64_t o0 = i * sh->rows;

    trn_reduce_rows_range(NULL, sh->rw, o0,
                          MIN(o0 + sh->rows, sh->rw->ax->outer), x,
                          x + TRN_CHUNK_ELEMS);
}

/* False (nothing done) for any reduction but the ones above. */
static bool trn_reduce_rows_f32(TrnKernel *k, unsigned red,
                                const TrnView *src, const TrnView *dst,
                                const TrnAxis *ax, double *x, double *out,
                                uint32_t *err)
{
    TrnRows rw = { red, src, dst, ax, NISA_MAX_DIMS - 1 };
    bool sum = red == NISA_RED_SUM || red == NISA_RED_MEAN;

    if (src->dtype != NISA_F32 || ax->inner != 1 || ax->len < 2 ||
        (!sum && !trn_red_is_arg(red) && red != NISA_RED_MAX &&
         red != NISA_RED_MIN && red != NISA_RED_LOGSUMEXP)) {
        return false;
    }
    while (src->shape[rw.a] == 1) {     /* the axis: the last extent > 1 */
        rw.a--;
    }
    if (ax->outer * ax->len >= TRN_ITER_SHARE_MIN && ax->outer >= 2 &&
        ax->len <= TRN_ITER_SHARE_PIECE && !trn_overlap(src, dst) &&
        trn_strides_nest(dst->shape, dst->stride, NISA_MAX_DIMS)) {
        TrnRowsShare sh = { &rw, TRN_ITER_SHARE_PIECE / ax->len };

        *err = trn_pool_run(k, DIV_ROUND_UP(ax->outer, sh.rows),
                            trn_reduce_rows_piece, &sh);
        return true;
    }
    *err = trn_reduce_rows_range(k, &rw, 0, ax->outer, x, out) ?
           NISA_ERR_NONE : NISA_ERR_ABORTED;
    return true;
}

/*
 * A sum or mean of a contiguous float32 source along an axis that is not
 * its last (a bias's gradient: the batch summed for each feature). Each
 * destination lane adds its column in double, in the general loop's order,
 * so the bits are its bits; the rows are read straight from device memory,
 * TRN_CHUNK_ELEMS lanes at a time, rather than through trn_gather() (2.6
 * ns an element for a 256 x 1024 source). False
 * (nothing done) for any other reduction.
 */
/*
 * acc[j] += row[j], j < n: blocks of 8 (a count -O2's cost model vectorizes),
 * then the tail.
 */
static TRN_CLONES void trn_add_row(double *restrict acc,
                                   const float *restrict row, uint64_t n)
{
    uint64_t j = 0;

    for (; j + 8 <= n; j += 8) {
        for (unsigned u = 0; u < 8; u++) {
            acc[j + u] += row[j + u];
        }
    }
    for (; j < n; j++) {
        acc[j] += row[j];
    }
}

static bool trn_reduce_cols_f32(TrnKernel *k, unsigned red,
                                const TrnView *src, const TrnView *dst,
                                const TrnAxis *ax, double *acc, uint32_t *err)
{
    const float *f = (const float *)src->data;

    if (src->dtype != NISA_F32 || !src->contiguous || ax->inner == 1 ||
        (red != NISA_RED_SUM && red != NISA_RED_MEAN)) {
        return false;
    }
    for (uint64_t o = 0; o < ax->outer; o++) {
        for (uint64_t j0 = 0; j0 < ax->inner; j0 += TRN_CHUNK_ELEMS) {
            uint64_t n = MIN(TRN_CHUNK_ELEMS, ax->inner - j0);

            for (uint64_t j = 0; j < n; j++) {
                acc[j] = 0;
            }
            for (uint64_t i = 0; i < ax->len; i++) {
                const float *row = f + (o * ax->len + i) * ax->inner + j0;

                if (trn_tick(k, n)) {
                    *err = NISA_ERR_ABORTED;
                    return true;
                }
                trn_add_row(acc, row, n);
            }
            if (red == NISA_RED_MEAN) {
                for (uint64_t j = 0; j < n; j++) {
                    acc[j] /= (double)ax->len;
                }
            }
            trn_scatter(dst, o * ax->inner + j0, n, acc);
        }
    }
    *err = NISA_ERR_NONE;
    return true;
}

uint32_t trn_insn_reduce(TrnKernel *k, const struct nisa_insn *in)
{
    unsigned red = le16_to_cpu(in->subop), d;
    g_autofree double *acc = g_new(double, TRN_CHUNK_ELEMS);
    g_autofree double *arg = g_new(double, TRN_CHUNK_ELEMS);
    g_autofree double *x = g_new(double, TRN_CHUNK_ELEMS);
    TrnView src, dst;
    TrnAxis ax;
    uint32_t err;

    if (red >= NISA_NUM_REDUCE || in->flags) {
        return trn_bad_insn(k, "bad reduction or flags");
    }
    err = trn_view_init(k, &in->src[0], TRN_READ, &src);
    if (!err) {
        err = trn_view_init(k, &in->dst, TRN_WRITE, &dst);
    }
    if (!err) {
        err = trn_axis(k, &src, (int32_t)le32_to_cpu(in->axis),
                       in->src[0].ndim, &ax);
    }
    if (err) {
        return err;
    }
    /* dst is src with the axis' extent 1. */
    if (dst.numel != ax.outer * ax.inner) {
        return trn_bad_insn(k, "reduction destination has the wrong shape");
    }
    for (d = 0; d < NISA_MAX_DIMS; d++) {
        if (dst.shape[d] != src.shape[d] && dst.shape[d] != 1) {
            return trn_bad_insn(k, "reduction destination has the wrong shape");
        }
    }
    if (ax.len == 0 && !nisa_reduce_takes_empty(red)) {
        return trn_bad_insn(k, "a reduction with no value for an empty axis");
    }
    if (!dst.numel) {
        return NISA_ERR_NONE;
    }
    if (red == NISA_RED_PROD && trn_is_int(src.dtype) && trn_is_int(dst.dtype)) {
        return trn_prod_int(k, &src, &dst, &ax);
    }
    if (trn_reduce_rows_f32(k, red, &src, &dst, &ax, x, acc, &err) ||
        trn_reduce_cols_f32(k, red, &src, &dst, &ax, acc, &err)) {
        return err;
    }

    for (uint64_t o = 0; o < ax.outer; o++) {
        if (trn_tick(k, 1)) {
            return NISA_ERR_ABORTED;
        }
        if (ax.inner == 1) {
            /* Along the last axis: a row, folded chunk by chunk. */
            double a = 0, g = 0;

            trn_fold_init(red, &a, &g, 1);
            for (uint64_t i0 = 0; i0 < ax.len; i0 += TRN_CHUNK_ELEMS) {
                uint64_t n = MIN(TRN_CHUNK_ELEMS, ax.len - i0);

                if (trn_tick(k, n)) {
                    return NISA_ERR_ABORTED;
                }
                trn_gather(&src, o * ax.len + i0, n, x);
                for (uint64_t j = 0; j < n; j++) {
                    trn_fold(red, &a, &g, &x[j], 1, i0 + j);
                }
            }
            acc[0] = a;
            arg[0] = g;
            trn_fold_end(red, acc, arg, 1, ax.len);
            trn_scatter(&dst, o, 1, trn_red_is_arg(red) ? arg : acc);
            continue;
        }
        for (uint64_t j0 = 0; j0 < ax.inner; j0 += TRN_CHUNK_ELEMS) {
            uint64_t n = MIN(TRN_CHUNK_ELEMS, ax.inner - j0);

            trn_fold_init(red, acc, arg, n);
            for (uint64_t i = 0; i < ax.len; i++) {
                if (trn_tick(k, n)) {
                    return NISA_ERR_ABORTED;
                }
                trn_gather(&src, (o * ax.len + i) * ax.inner + j0, n, x);
                trn_fold(red, acc, arg, x, n, i);
            }
            trn_fold_end(red, acc, arg, n, ax.len);
            trn_scatter(&dst, o * ax.inner + j0, n,
                        trn_red_is_arg(red) ? arg : acc);
        }
    }
    return NISA_ERR_NONE;
}

/*
 * Softmax or log-softmax of float32 rows along their last axis (inner 1),
 * with the same double operations in the same order as the general loop
 * of trn_insn_softmax() -- so the same bits -- but each row read straight
 * from memory and exp(x - m) computed once: pass 2 keeps it in @e (the
 * row's length) for pass 3 instead of computing it again, and log(s)
 * once per row (the same value for each element). m is the general
 * fold's: a contiguous row's extreme in float lanes (trn_row_max_f32();
 * exact), NaN when the row has a NaN as the fold gives, and a zero
 * folded again in order (its sign reaches x - m). Results go out
 * through trn_scatter(), TRN_CHUNK_ELEMS at a time (@out). Only when dst
 * is src exactly or apart from it: pass 3 then reads x as pass 2 did.
 *
 * Rows [@o0, @o1); @k NULL in a shared piece (no ticks: the pool checks
 * for a reset between pieces). False if the queue is being reset.
 */
#define TRN_SOFTMAX_ROW_MAX (1u << 16)

typedef struct TrnSmRows {
    unsigned variant;
    const TrnView *src, *dst;
    const TrnAxis *ax;
    int a;                      /* the softmax dimension of src */
    bool fast;                  /* rows contiguous, dst float32 */
} TrnSmRows;

static bool trn_softmax_rows_range(TrnKernel *k, const TrnSmRows *sr,
                                   uint64_t o0, uint64_t o1, double *e,
                                   double *out)
{
    const TrnView *src = sr->src;
    uint64_t len = sr->ax->len;
    int64_t st = src->stride[sr->a];

    for (uint64_t o = o0; o < o1; o++) {
        const float *f = trn_row_f32(src, sr->a, o);
        double m = -INFINITY, s = 0, ls;
        float fm = -INFINITY;
        bool nan = false;

        /* Pass 1: max (NaN propagates). */
        if (st == 1) {
            for (uint64_t i0 = 0; i0 < len; i0 += TRN_CHUNK_ELEMS) {
                uint64_t n = MIN(TRN_CHUNK_ELEMS, len - i0);

                if (k && trn_tick(k, n)) {
                    return false;
                }
                trn_row_max_f32(f + i0, n, 0, &fm, &nan);
            }
            m = nan ? NAN : fm;
        }
        if (st != 1 || m == 0) {
            m = -INFINITY;
            for (uint64_t i = 0; i < len; i++) {
                double x = f[(int64_t)i * st];

                if (k && i % TRN_CHUNK_ELEMS == 0 &&
                    trn_tick(k, MIN(TRN_CHUNK_ELEMS, len - i))) {
                    return false;
                }
                m = isnan(m) || isnan(x) ? NAN : fmax(m, x);
            }
        }
        /*
         * Passes 2 and 3 by the vector kernel, which gives these bits
         * or leaves the row to the passes below.
         */
        if (sr->fast && isfinite(m) &&
            trn_fast_softmax_row(f, len, m,
                                 sr->variant == NISA_SM_LOG_SOFTMAX, e)) {
            for (uint64_t i0 = 0; i0 < len; i0 += TRN_CHUNK_ELEMS) {
                uint64_t n = MIN(TRN_CHUNK_ELEMS, len - i0);

                if (k && trn_tick(k, 2 * n)) {
                    return false;
                }
                trn_scatter(sr->dst, o * len + i0, n, e + i0);
            }
            continue;
        }
        /* Pass 2: sum of exp, kept. */
        for (uint64_t i = 0; i < len; i++) {
            if (k && i % TRN_CHUNK_ELEMS == 0 &&
                trn_tick(k, MIN(TRN_CHUNK_ELEMS, len - i))) {
                return false;
            }
            e[i] = exp(f[(int64_t)i * st] - m);
            s += e[i];
        }
        /* Pass 3: write. */
        ls = sr->variant == NISA_SM_SOFTMAX ? 0 : log(s);
        for (uint64_t i0 = 0; i0 < len; i0 += TRN_CHUNK_ELEMS) {
            uint64_t n = MIN(TRN_CHUNK_ELEMS, len - i0);

            if (k && trn_tick(k, n)) {
                return false;
            }
            if (sr->variant == NISA_SM_SOFTMAX) {
                for (uint64_t j = 0; j < n; j++) {
                    out[j] = e[i0 + j] / s;
                }
            } else {
                for (uint64_t j = 0; j < n; j++) {
                    out[j] = (double)f[(int64_t)(i0 + j) * st] - m - ls;
                }
            }
            trn_scatter(sr->dst, o * len + i0, n, out);
        }
    }
    return true;
}

/*
 * A large softmax's rows are shared by the card's threads in pieces of
 * whole rows (about TRN_ITER_SHARE_PIECE elements): a row's results do
 * not depend on the piece or the thread.
 */
typedef struct TrnSmShare {
    const TrnSmRows *sr;
    uint64_t rows;              /* per piece */
} TrnSmShare;

static void trn_softmax_rows_piece(void *arg, unsigned w, uint64_t i)
{
    TrnSmShare *sh = arg;
    g_autofree double *e = g_new(double, sh->sr->ax->len + TRN_CHUNK_ELEMS);
    uint64_t o0 = i * sh->rows;

    trn_softmax_rows_range(NULL, sh->sr, o0,
                           MIN(o0 + sh->rows, sh->sr->ax->outer), e,
                           e + sh->sr->ax->len);
}

/* dst is src exactly (in place) or apart from it, each byte written once. */
static bool trn_softmax_apart(const TrnView *src, const TrnView *dst)
{
    bool same = src->data == dst->data && src->dtype == dst->dtype;

    for (unsigned d = 0; same && d < NISA_MAX_DIMS; d++) {
        same = src->shape[d] == dst->shape[d] &&
               src->stride[d] == dst->stride[d];
    }
    return trn_strides_nest(dst->shape, dst->stride, NISA_MAX_DIMS) &&
           (same || !trn_overlap(src, dst));
}

/*
 * The rows path above for a float32 source along its last axis; false
 * (nothing done) for any other softmax.
 */
static bool trn_softmax_rows_f32(TrnKernel *k, unsigned variant,
                                 const TrnView *src, const TrnView *dst,
                                 const TrnAxis *ax, uint32_t *err)
{
    TrnSmRows sr = { variant, src, dst, ax, NISA_MAX_DIMS - 1, false };

    if (src->dtype != NISA_F32 || ax->inner != 1 || ax->len < 2 ||
        ax->len > TRN_SOFTMAX_ROW_MAX || !trn_softmax_apart(src, dst)) {
        return false;
    }
    while (src->shape[sr.a] == 1) {     /* the axis: the last extent > 1 */
        sr.a--;
    }
    sr.fast = src->stride[sr.a] == 1 && dst->dtype == NISA_F32;
    if (src->numel >= TRN_ITER_SHARE_MIN && ax->outer >= 2) {
        TrnSmShare sh = { &sr, MAX(1, TRN_ITER_SHARE_PIECE / ax->len) };

        *err = trn_pool_run(k, DIV_ROUND_UP(ax->outer, sh.rows),
                            trn_softmax_rows_piece, &sh);
    } else {
        g_autofree double *e = g_new(double, ax->len + TRN_CHUNK_ELEMS);

        *err = trn_softmax_rows_range(k, &sr, 0, ax->outer, e, e + ax->len) ?
               NISA_ERR_NONE : NISA_ERR_ABORTED;
    }
    return true;
}

/*
 * Softmax along the axis, numerically stable: m = max(x), s = sum(exp(x -
 * m)), softmax = exp(x - m) / s, log-softmax = x - m - log(s). Three passes
 * over the source.
 */
uint32_t trn_insn_softmax(TrnKernel *k, const struct nisa_insn *in)
{
    unsigned variant = le16_to_cpu(in->subop);
    g_autofree double *m = g_new(double, TRN_CHUNK_ELEMS);
    g_autofree double *s = g_new(double, TRN_CHUNK_ELEMS);
    g_autofree double *x = g_new(double, TRN_CHUNK_ELEMS);
    TrnView src, dst;
    TrnAxis ax;
    uint32_t err;
    uint64_t step;

    if (variant >= NISA_NUM_SOFTMAX || in->flags) {
        return trn_bad_insn(k, "bad softmax variant or flags");
    }
    err = trn_view_init(k, &in->src[0], TRN_READ, &src);
    if (!err) {
        err = trn_view_init(k, &in->dst, TRN_WRITE, &dst);
    }
    if (!err && !trn_same_shape(&src, &dst)) {
        err = trn_bad_insn(k, "softmax destination shape differs");
    }
    if (!err) {
        err = trn_axis(k, &src, (int32_t)le32_to_cpu(in->axis),
                       in->src[0].ndim, &ax);
    }
    if (err || !src.numel) {
        return err;
    }
    if (trn_softmax_rows_f32(k, variant, &src, &dst, &ax, &err)) {
        return err;
    }
    /* Lanes are inner positions; along the last axis one lane per row. */
    step = ax.inner == 1 ? 1 : TRN_CHUNK_ELEMS;

    for (uint64_t o = 0; o < ax.outer; o++) {
        for (uint64_t j0 = 0; j0 < ax.inner; j0 += step) {
            uint64_t n = MIN(step, ax.inner - j0), j, i;

            for (j = 0; j < n; j++) {
                m[j] = -INFINITY;
                s[j] = 0;
            }
            /* Pass 1: max (NaN propagates). Pass 2: sum of exp. */
            for (int pass = 0; pass < 2; pass++) {
                for (i = 0; i < ax.len;) {
                    uint64_t cnt = ax.inner == 1 ?
                                   MIN(TRN_CHUNK_ELEMS, ax.len - i) : 1;
                    uint64_t lin = (o * ax.len + i) * ax.inner + j0;

                    if (trn_tick(k, cnt * n)) {
                        return NISA_ERR_ABORTED;
                    }
                    trn_gather(&src, lin, ax.inner == 1 ? cnt : n, x);
                    for (uint64_t c = 0; c < cnt; c++) {
                        const double *xr = ax.inner == 1 ? &x[c] : x;

                        for (j = 0; j < n; j++) {
                            if (pass == 0) {
                                m[j] = isnan(m[j]) || isnan(xr[j]) ? NAN :
                                       fmax(m[j], xr[j]);
                            } else {
                                s[j] += exp(xr[j] - m[j]);
                            }
                        }
                    }
                    i += cnt;
                }
            }
            /* Pass 3: write. */
            for (i = 0; i < ax.len;) {
                uint64_t cnt = ax.inner == 1 ? MIN(TRN_CHUNK_ELEMS, ax.len - i) : 1;
                uint64_t lin = (o * ax.len + i) * ax.inner + j0;
                uint64_t tot = ax.inner == 1 ? cnt : n;

                if (trn_tick(k, tot)) {
                    return NISA_ERR_ABORTED;
                }
                trn_gather(&src, lin, tot, x);
                for (uint64_t e = 0; e < tot; e++) {
                    uint64_t lane = ax.inner == 1 ? 0 : e;

                    x[e] = variant == NISA_SM_SOFTMAX ?
                           exp(x[e] - m[lane]) / s[lane] :
                           x[e] - m[lane] - log(s[lane]);
                }
                trn_scatter(&dst, lin, tot, x);
                i += cnt;
            }
        }
    }
    return NISA_ERR_NONE;
}

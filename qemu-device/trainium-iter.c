/*
 * Virtual Trainium accelerator: walking same-shaped operands together
 * (trainium-iter.h).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "trainium-iter.h"

/*
 * When the rows and runs of a call hold few elements (a 2x2 window of
 * each of 256 channels: a call per 4 elements), make the longest outer
 * dimension the rows (dimension ndim - 2) instead: one call per 256 rows.
 * Larger blocks keep their order, which is kinder to the caches. The
 * order does not matter to an elementwise instruction (exact aliasing
 * only).
 */
static void trn_iter_longest_rows(TrnIter *it)
{
    unsigned nd = it->ndim, best = nd - 2;

    for (unsigned d = 0; d + 2 < nd; d++) {
        if (it->shape[d] > it->shape[best]) {
            best = d;
        }
    }
    if (best == nd - 2 ||
        it->shape[nd - 2] * it->shape[nd - 1] >= TRN_ITER_BLOCK) {
        return;
    }
    for (unsigned d = best; d < nd - 2; d++) {
        uint64_t ext = it->shape[d];

        it->shape[d] = it->shape[d + 1];
        it->shape[d + 1] = ext;
        for (unsigned i = 0; i < it->nops; i++) {
            int64_t st = it->stride[i][d];

            it->stride[i][d] = it->stride[i][d + 1];
            it->stride[i][d + 1] = st;
        }
    }
}

void trn_iter_init(TrnIter *it, const TrnView *const views[], unsigned n)
{
    unsigned nd = 0;

    assert(n >= 1 && n <= TRN_ITER_OPS);
    memset(it, 0, sizeof(*it));
    it->nops = n;
    for (unsigned i = 0; i < n; i++) {
        it->data[i] = views[i]->data;
        it->esize[i] = views[i]->esize;
    }
    /* Outermost first: drop extents of 1, merge into the previous kept. */
    for (unsigned d = 0; d < NISA_MAX_DIMS; d++) {
        uint64_t ext = views[0]->shape[d];
        bool merge = nd > 0;

        if (ext == 1) {
            continue;
        }
        for (unsigned i = 0; merge && i < n; i++) {
            merge = it->stride[i][nd - 1] ==
                    views[i]->stride[d] * (int64_t)ext;
        }
        if (merge) {
            it->shape[nd - 1] *= ext;
            for (unsigned i = 0; i < n; i++) {
                it->stride[i][nd - 1] = views[i]->stride[d];
            }
            continue;
        }
        it->shape[nd] = ext;
        for (unsigned i = 0; i < n; i++) {
            it->stride[i][nd] = views[i]->stride[d];
        }
        nd++;
    }
    if (nd == 0) {              /* a single element */
        it->shape[0] = 1;
        nd = 1;
    }
    it->ndim = nd;
    if (nd >= 3) {
        trn_iter_longest_rows(it);
    }
}

bool trn_iter_runs(TrnKernel *k, const TrnIter *it, TrnRunFn *fn,
                   void *opaque)
{
    unsigned nd = it->ndim, in = nd - 1, n = it->nops;
    /* Dimension in - 1 (if any) is walked by @fn as rows; the rest here. */
    unsigned outer = nd >= 2 ? nd - 2 : 0;
    uint64_t idx[NISA_MAX_DIMS] = { 0 }, len = it->shape[in];
    uint64_t nrows = nd >= 2 ? it->shape[in - 1] : 1, per;
    int64_t step[TRN_ITER_OPS][NISA_MAX_DIMS];
    uint8_t *p[TRN_ITER_OPS] = { 0 };
    TrnRuns r = { .n = len };

    for (unsigned d = 0; d < nd; d++) {
        if (!it->shape[d]) {
            return false;       /* no element */
        }
    }
    for (unsigned i = 0; i < n; i++) {
        p[i] = it->data[i];
        r.st[i] = it->stride[i][in];
        for (unsigned d = 0; d < nd; d++) {
            step[i][d] = it->stride[i][d] * (int64_t)it->esize[i];
        }
        r.row[i] = nd >= 2 ? step[i][in - 1] : 0;
    }
    /* Rows per call: about TRN_ITER_RUN_MAX elements, for reset checks. */
    per = MAX(1, TRN_ITER_RUN_MAX / len);
    for (;;) {
        if (len > TRN_ITER_RUN_MAX) {
            /* Long runs: one row at a time, in pieces. */
            for (uint64_t row = 0; row < nrows; row++) {
                for (uint64_t at = 0; at < len; at += TRN_ITER_RUN_MAX) {
                    r.n = MIN(TRN_ITER_RUN_MAX, len - at);
                    r.rows = 1;
                    for (unsigned i = 0; i < n; i++) {
                        r.p[i] = p[i] + (int64_t)row * r.row[i] +
                                 (int64_t)at * step[i][in];
                    }
                    fn(opaque, &r);
                    if (k && trn_tick(k, r.n)) {
                        return true;
                    }
                }
            }
        } else {
            for (uint64_t row = 0; row < nrows; row += per) {
                r.rows = MIN(per, nrows - row);
                for (unsigned i = 0; i < n; i++) {
                    r.p[i] = p[i] + (int64_t)row * r.row[i];
                }
                fn(opaque, &r);
                if (k && trn_tick(k, r.rows * len)) {
                    return true;
                }
            }
        }
        /* The next block: an odometer over the dimensions before the rows. */
        for (unsigned d = outer;; ) {
            if (d == 0) {
                return false;
            }
            d--;
            for (unsigned i = 0; i < n; i++) {
                p[i] += step[i][d];
            }
            if (++idx[d] < it->shape[d]) {
                break;
            }
            idx[d] = 0;
            for (unsigned i = 0; i < n; i++) {
                p[i] -= step[i][d] * (int64_t)it->shape[d];
            }
        }
    }
}

/* Bytes [*lo, *hi) operand @i touches. */
static void trn_iter_extent(const TrnIter *it, unsigned i, uint8_t **lo,
                            uint8_t **hi)
{
    trn_byte_span(it->data[i], it->esize[i], it->shape, it->stride[i],
                  it->ndim, lo, hi);
}

/*
 * Operand 0 writes each of its bytes once (trn_strides_nest()) and every source is it exactly or lies
 * apart from it: the order of the elements cannot change a result.
 */
static bool trn_iter_independent(const TrnIter *it)
{
    uint8_t *lo, *hi;

    if (!trn_strides_nest(it->shape, it->stride[0], it->ndim)) {
        return false;
    }
    trn_iter_extent(it, 0, &lo, &hi);
    for (unsigned i = 1; i < it->nops; i++) {
        uint8_t *l, *h;
        bool same = it->data[i] == it->data[0] &&
                    it->esize[i] == it->esize[0];

        for (unsigned d = 0; same && d < it->ndim; d++) {
            same = it->stride[i][d] == it->stride[0][d];
        }
        trn_iter_extent(it, i, &l, &h);
        if (!same && l < hi && lo < h) {
            return false;
        }
    }
    return true;
}

typedef struct TrnIterShare {
    const TrnIter *it;
    TrnRunFn *fn;
    void *opaque;
    uint64_t rows;              /* of the outermost dimension, per piece */
} TrnIterShare;

static void trn_iter_piece(void *arg, unsigned worker, uint64_t i)
{
    const TrnIterShare *sh = arg;
    TrnIter sub = *sh->it;
    uint64_t r0 = i * sh->rows;

    sub.shape[0] = MIN(sh->rows, sh->it->shape[0] - r0);
    for (unsigned j = 0; j < sub.nops; j++) {
        sub.data[j] += (int64_t)r0 * sub.stride[j][0] * (int64_t)sub.esize[j];
    }
    trn_iter_runs(NULL, &sub, sh->fn, sh->opaque);
}

uint32_t trn_iter_runs_shared(TrnKernel *k, const TrnIter *it, TrnRunFn *fn,
                              void *opaque)
{
    uint64_t numel = 1, inner;
    TrnIterShare sh = { it, fn, opaque };

    for (unsigned d = 0; d < it->ndim; d++) {
        numel *= it->shape[d];
    }
    inner = numel / MAX(it->shape[0], 1);
    /*
     * Pieces of whole rows of dimension 0; a one-dimensional walk in
     * pieces that are multiples of trn_iter_runs()'s own, so that every
     * element is reached by the same call shape as on one thread.
     */
    sh.rows = MAX(TRN_ITER_SHARE_PIECE / MAX(inner, 1), 1);
    if (numel < TRN_ITER_SHARE_MIN ||
        sh.rows * inner > 4 * TRN_ITER_SHARE_PIECE ||
        it->shape[0] < 2 * sh.rows || !trn_iter_independent(it)) {
        return trn_iter_runs(k, it, fn, opaque) ? NISA_ERR_ABORTED
                                                : NISA_ERR_NONE;
    }
    return trn_pool_run(k, DIV_ROUND_UP(it->shape[0], sh.rows),
                        trn_iter_piece, &sh);
}

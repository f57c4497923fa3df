/*
 * Virtual Trainium accelerator: indexed instructions.
 *
 * GATHER, @subop NISA_IDX_SELECT (index_select, embedding):
 *   dst[.., l, ..] = src0[.., src1[l], ..] along @axis, src1 1-D;
 * GATHER, NISA_IDX_ELEMENT (torch.gather):
 *   dst[c] = src0[c with c[axis] = src1[c]], src1 of dst's shape;
 * SCATTER_ADD, NISA_IDX_SELECT (index_add_, the backward of index_select):
 *   dst[.., src1[l], ..] += src0[.., l, ..];
 * SCATTER_ADD, NISA_IDX_ELEMENT (scatter_add_, the backward of gather):
 *   dst[c with c[axis] = src1[c]] += src0[c].
 * Indices are int32 or int64 and must lie in [0, extent of the axis); every
 * index is checked before anything is written (NISA_ERR_BAD_INDEX).
 * complex64 dst and src0 (both or neither): GATHER moves the 8 bytes
 * exactly, SCATTER_ADD adds the real parts, then the imaginary parts, each
 * as float32 operands (trn_indexed_parts()).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/log.h"
#include "trainium-isa.h"
#include "trainium-index.h"
#include "trace.h"

/*
 * Check the operands of an indexed instruction of index form @mode (the
 * caller has decoded it from @subop); @scatter: dst is read and written,
 * src0 is the iterated tensor.
 */
uint32_t trn_indexed_init(TrnKernel *k, const struct nisa_insn *in,
                          unsigned mode, bool scatter, TrnIndexed *x)
{
    unsigned ndim = in->dst.ndim, d;
    int32_t axis = (int32_t)le32_to_cpu(in->axis);
    uint32_t err;

    if (mode >= NISA_NUM_IDX || in->flags) {
        return trn_bad_insn(k, "bad index mode or flags");
    }
    err = trn_view_init(k, &in->dst, scatter ? TRN_READ | TRN_WRITE :
                        TRN_WRITE, &x->dst);
    if (!err) {
        err = trn_view_init(k, &in->src[0], TRN_READ, &x->src);
    }
    if (!err) {
        err = trn_view_init(k, &in->src[1], TRN_READ, &x->idx);
    }
    if (err) {
        return err;
    }
    if (x->idx.dtype != NISA_I32 && x->idx.dtype != NISA_I64) {
        return trn_bad_insn(k, "indices must be int32 or int64");
    }
    if (nisa_dtype_is_complex(x->dst.dtype) !=
        nisa_dtype_is_complex(x->src.dtype)) {
        return trn_bad_insn(k, "complex64 indexed instruction: dst and src0 "
                            "are both complex64 or neither");
    }
    if (in->src[0].ndim != ndim || ndim == 0 ||
        axis < -(int32_t)ndim || axis >= (int32_t)ndim) {
        return trn_bad_insn(k, "bad ranks or axis for an indexed instruction");
    }
    x->axis = NISA_MAX_DIMS - ndim + (axis < 0 ? axis + ndim : axis);
    if (mode == NISA_IDX_SELECT) {
        const TrnView *big = scatter ? &x->dst : &x->src;
        const TrnView *small = scatter ? &x->src : &x->dst;

        if (in->src[1].ndim != 1 || small->shape[x->axis] != x->idx.numel) {
            return trn_bad_insn(k, "index length differs from the axis");
        }
        for (d = 0; d < NISA_MAX_DIMS; d++) {
            if (d != x->axis && big->shape[d] != small->shape[d]) {
                return trn_bad_insn(k, "shapes differ off the axis");
            }
        }
    } else {
        const TrnView *it = scatter ? &x->src : &x->dst;
        const TrnView *other = scatter ? &x->dst : &x->src;

        if (!trn_same_shape(&x->idx, it)) {
            return trn_bad_insn(k, "index shape differs");
        }
        for (d = 0; d < NISA_MAX_DIMS; d++) {
            if (d != x->axis && it->shape[d] > other->shape[d]) {
                return trn_bad_insn(k, "index larger than the tensor off the axis");
            }
        }
    }
    x->outer = x->inner = 1;
    for (d = 0; d < x->axis; d++) {
        x->outer *= x->dst.shape[d];
    }
    for (d = x->axis + 1; d < NISA_MAX_DIMS; d++) {
        x->inner *= x->dst.shape[d];
    }
    return NISA_ERR_NONE;
}

/*
 * Index @pos of the index tensor, checked against @limit. Indices are read
 * where they are used, not kept: nothing is allocated by their number.
 * They were all checked before anything was written (trn_check_indices());
 * checking again at use keeps a guest that rewrites them meanwhile inside
 * the tensor (the instruction then fails with NISA_ERR_BAD_INDEX).
 */
bool trn_index(const TrnView *idx, const uint8_t *p, uint64_t limit,
               uint64_t *out)
{
    int64_t v = trn_load_i64(idx->dtype, p);

    if (v < 0 || (uint64_t)v >= limit) {
        return false;
    }
    *out = v;
    return true;
}

/* Check every index against @limit before anything is written. */
static uint32_t trn_check_indices(TrnKernel *k, const TrnView *idx,
                                  uint64_t limit)
{
    int64_t buf[TRN_CHUNK_ELEMS];

    for (uint64_t s = 0; s < idx->numel; s += TRN_CHUNK_ELEMS) {
        uint64_t n = MIN(TRN_CHUNK_ELEMS, idx->numel - s);

        if (trn_tick(k, n)) {
            return NISA_ERR_ABORTED;
        }
        trn_gather_i64(idx, s, n, buf);
        for (uint64_t j = 0; j < n; j++) {
            if (buf[j] < 0 || (uint64_t)buf[j] >= limit) {
                return NISA_ERR_BAD_INDEX;
            }
        }
    }
    return NISA_ERR_NONE;
}

void trn_step(const TrnView *v, uint64_t c[NISA_MAX_DIMS])
{
    for (unsigned d = NISA_MAX_DIMS; d-- > 0;) {
        if (++c[d] < v->shape[d] || d == 0) {
            return;
        }
        c[d] = 0;
    }
}

/* Move @n elements: dst[dpos..] (+)= src[spos..], exactly for integers. */
static void trn_move_row(TrnIndexed *x, bool scatter, uint64_t dpos,
                         uint64_t spos, uint64_t n, double *a, double *b,
                         int64_t *ia, int64_t *ib)
{
    bool integer = trn_is_int(x->dst.dtype) && trn_is_int(x->src.dtype);

    if (integer) {
        trn_gather_i64(&x->src, spos, n, ib);
        if (scatter) {
            trn_gather_i64(&x->dst, dpos, n, ia);
            for (uint64_t e = 0; e < n; e++) {
                ib[e] = (int64_t)((uint64_t)ia[e] + (uint64_t)ib[e]);
            }
        }
        trn_scatter_i64(&x->dst, dpos, n, ib, scatter);
        return;
    }
    trn_gather(&x->src, spos, n, b);
    if (scatter) {
        trn_gather(&x->dst, dpos, n, a);
        for (uint64_t e = 0; e < n; e++) {
            b[e] += a[e];
        }
    }
    trn_scatter(&x->dst, dpos, n, b);
}

uint32_t trn_index_rows(TrnKernel *k, TrnIndexed *x, uint64_t limit,
                        TrnRowFn *row, void *opaque)
{
    uint64_t L = x->idx.numel;
    g_autofree double *a = g_new(double, TRN_CHUNK_ELEMS);
    g_autofree double *b = g_new(double, TRN_CHUNK_ELEMS);
    g_autofree int64_t *ia = g_new(int64_t, TRN_CHUNK_ELEMS);
    g_autofree int64_t *ib = g_new(int64_t, TRN_CHUNK_ELEMS);
    TrnRowBufs bufs = { a, b, ia, ib };

    for (uint64_t o = 0; o < x->outer; o++) {
        for (uint64_t l = 0; l < L; l++) {
            const uint8_t *ip = x->idx.data + (int64_t)l * x->idx.stride[3] *
                                (int64_t)x->idx.esize;
            uint64_t ix, bigpos, smallpos = (o * L + l) * x->inner;

            if (trn_tick(k, 1)) {
                return NISA_ERR_ABORTED;
            }
            if (!trn_index(&x->idx, ip, limit, &ix)) {
                return NISA_ERR_BAD_INDEX;
            }
            bigpos = (o * limit + ix) * x->inner;
            for (uint64_t j = 0; j < x->inner; j += TRN_CHUNK_ELEMS) {
                uint64_t n = MIN(TRN_CHUNK_ELEMS, x->inner - j);

                if (trn_tick(k, n)) {
                    return NISA_ERR_ABORTED;
                }
                row(x, bigpos + j, smallpos + j, n, &bufs, opaque);
            }
        }
    }
    return NISA_ERR_NONE;
}

/* index_add moves small into big, index_select big into small. */
static void trn_select_row(TrnIndexed *x, uint64_t big, uint64_t small,
                           uint64_t n, TrnRowBufs *r, void *opaque)
{
    bool scatter = *(bool *)opaque;

    trn_move_row(x, scatter, scatter ? big : small, scatter ? small : big,
                 n, r->a, r->b, r->ia, r->ib);
}

/*
 * gather / scatter_add: element by element over the index tensor, a row
 * (its last dimension) at a time: the row's pointers are computed once and
 * stepped by the strides. @at is the tensor addressed at the index
 * tensor's own coordinates, @ix the one addressed with the index along
 * the axis.
 */
static uint32_t trn_element(TrnKernel *k, TrnIndexed *x, bool scatter,
                            uint64_t limit)
{
    const TrnView *it = &x->idx;
    const TrnView *at = scatter ? &x->src : &x->dst;
    const TrnView *ix = scatter ? &x->dst : &x->src;
    bool integer = trn_is_int(x->dst.dtype) && trn_is_int(x->src.dtype);
    uint64_t c[NISA_MAX_DIMS] = { 0 }, t[NISA_MAX_DIMS], w = it->shape[3];
    int64_t ist = it->stride[3] * (int64_t)it->esize;
    int64_t ast = at->stride[3] * (int64_t)at->esize;
    int64_t xst = x->axis == 3 ? 0 : ix->stride[3] * (int64_t)ix->esize;
    int64_t xax = ix->stride[x->axis] * (int64_t)ix->esize;

    for (uint64_t e = 0; e < it->numel; e += w) {
        const uint8_t *ip = trn_elem(it, c);
        uint8_t *ap = trn_elem(at, c), *xp;

        memcpy(t, c, sizeof(t));
        t[x->axis] = 0;
        xp = trn_elem(ix, t);
        for (uint64_t j = 0; j < w; j++) {
            uint8_t *p = ap + (int64_t)j * ast, *q, *dp, *sp;
            uint64_t v;

            if (j % TRN_CHUNK_ELEMS == 0 &&
                trn_tick(k, MIN(TRN_CHUNK_ELEMS, w - j))) {
                return NISA_ERR_ABORTED;
            }
            if (!trn_index(it, ip + (int64_t)j * ist, limit, &v)) {
                return NISA_ERR_BAD_INDEX;
            }
            q = xp + (int64_t)j * xst + (int64_t)v * xax;
            dp = scatter ? q : p;
            sp = scatter ? p : q;
            if (integer) {
                int64_t val = trn_load_i64(x->src.dtype, sp);

                if (scatter) {
                    val = (int64_t)((uint64_t)val +
                                    (uint64_t)trn_load_i64(x->dst.dtype, dp));
                }
                trn_store_i64(x->dst.dtype, dp, val, scatter);
            } else {
                double val = trn_load(x->src.dtype, sp);

                if (scatter) {
                    val += trn_load(x->dst.dtype, dp);
                }
                trn_store(x->dst.dtype, dp, val);
            }
        }
        c[3] = w - 1;           /* the next row */
        trn_step(it, c);
    }
    return NISA_ERR_NONE;
}

uint32_t trn_indexed_parts(TrnKernel *k, const TrnIndexed *x, bool add,
                           TrnPartFn *fn, void *opaque)
{
    TrnIndexed p = *x;
    uint32_t err = NISA_ERR_NONE;

    if (!add) {
        /* Moves: the 8 bytes as int64, exactly (NaN payloads included). */
        p.dst.dtype = p.src.dtype = NISA_I64;
        return fn(k, &p, opaque);
    }
    for (unsigned part = 0; part < 2 && !err; part++) {
        p = *x;
        trn_view_c64_part(&p.dst, part);
        trn_view_c64_part(&p.src, part);
        err = fn(k, &p, opaque);
    }
    return err;
}

typedef struct TrnIndexedRun {
    unsigned mode;
    bool scatter;
    uint64_t limit;
} TrnIndexedRun;

static uint32_t trn_indexed_run(TrnKernel *k, TrnIndexed *x, void *opaque)
{
    TrnIndexedRun *r = opaque;

    if (r->mode == NISA_IDX_SELECT) {
        return trn_index_rows(k, x, r->limit, trn_select_row, &r->scatter);
    }
    return trn_element(k, x, r->scatter, r->limit);
}

/* Check every index against @limit, logging a bad one. */
uint32_t trn_indexed_check(TrnKernel *k, const TrnIndexed *x, uint64_t limit)
{
    uint32_t err = trn_check_indices(k, &x->idx, limit);

    if (err == NISA_ERR_BAD_INDEX) {
        TRN_GUEST_ERR(index, "queue %u: an index outside [0, %" PRIu64 ")",
                      k->q->idx, limit);
    }
    return err;
}

static uint32_t trn_indexed(TrnKernel *k, const struct nisa_insn *in,
                            bool scatter)
{
    TrnIndexed x;
    uint32_t err;
    uint64_t limit;

    err = trn_indexed_init(k, in, le16_to_cpu(in->subop), scatter, &x);
    if (err) {
        return err;
    }
    limit = scatter ? x.dst.shape[x.axis] : x.src.shape[x.axis];
    err = trn_indexed_check(k, &x, limit);
    if (err || !x.dst.numel || !x.src.numel) {
        return err;
    }
    if (nisa_dtype_is_complex(x.dst.dtype)) {
        TrnIndexedRun r = { le16_to_cpu(in->subop), scatter, limit };

        return trn_indexed_parts(k, &x, scatter, trn_indexed_run, &r);
    }
    if (le16_to_cpu(in->subop) == NISA_IDX_SELECT) {
        return trn_index_rows(k, &x, limit, trn_select_row, &scatter);
    }
    return trn_element(k, &x, scatter, limit);
}

uint32_t trn_insn_gather(TrnKernel *k, const struct nisa_insn *in)
{
    return trn_indexed(k, in, false);
}

uint32_t trn_insn_scatter_add(TrnKernel *k, const struct nisa_insn *in)
{
    return trn_indexed(k, in, true);
}

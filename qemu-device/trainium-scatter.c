/*
 * Virtual Trainium accelerator: SCATTER, the reducing scatter.
 *
 * @subop = NISA_SCATTER_SUBOP(reduction, index form):
 *   NISA_IDX_SELECT (index_copy_, index_fill_, index_reduce_):
 *     dst[.., src1[l], ..] op= src0[.., l, ..], src1 1-D;
 *   NISA_IDX_ELEMENT (scatter_, scatter_reduce_):
 *     dst[c with c[axis] = src1[c]] op= src0[c], src1 of src0's shape.
 * The updates apply one at a time in row-major order of the iteration
 * (src0's rows, resp. the index's elements), each rounded at its store, so
 * duplicate indices give a defined result: ASSIGN keeps the last, ADD and
 * MUL accumulate in that order as a sequential CPU loop does. Integer
 * operands are exact on int64 and wrap at the store; MAX and MIN keep a
 * NaN of either side. Every index is checked before anything is written
 * (NISA_ERR_BAD_INDEX). complex64 dst and src0: ASSIGN moves the 8 bytes
 * exactly, ADD adds part by part as float32 operands (trn_indexed_parts());
 * the other reductions are not taken (nisa_takes_complex()).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/log.h"
#include "trainium-isa.h"
#include "trainium-index.h"
#include "trace.h"

static double trn_scat_f(unsigned red, double d, double s)
{
    switch ((enum nisa_scatter)red) {
    case NISA_SCAT_ASSIGN:
        return s;
    case NISA_SCAT_ADD:
        return d + s;
    case NISA_SCAT_MUL:
        return d * s;
    case NISA_SCAT_MAX:
        return isnan(d) ? d : isnan(s) ? s : (s > d ? s : d);
    case NISA_SCAT_MIN:
        return isnan(d) ? d : isnan(s) ? s : (s < d ? s : d);
    case NISA_NUM_SCATTER:
        break;
    }
    g_assert_not_reached();
}

static int64_t trn_scat_i(unsigned red, int64_t d, int64_t s)
{
    switch ((enum nisa_scatter)red) {
    case NISA_SCAT_ASSIGN:
        return s;
    case NISA_SCAT_ADD:
        return (int64_t)((uint64_t)d + (uint64_t)s);
    case NISA_SCAT_MUL:
        return (int64_t)((uint64_t)d * (uint64_t)s);
    case NISA_SCAT_MAX:
        return s > d ? s : d;
    case NISA_SCAT_MIN:
        return s < d ? s : d;
    case NISA_NUM_SCATTER:
        break;
    }
    g_assert_not_reached();
}

typedef struct TrnScatRow {
    unsigned red;
    bool integer;
} TrnScatRow;

/* index_* form: dst[big..] = dst[big..] red src[small..], in order. */
static void trn_scatter_row(TrnIndexed *x, uint64_t big, uint64_t small,
                            uint64_t n, TrnRowBufs *r, void *opaque)
{
    const TrnScatRow *op = opaque;

    if (op->integer) {
        trn_gather_i64(&x->dst, big, n, r->ia);
        trn_gather_i64(&x->src, small, n, r->ib);
        for (uint64_t e = 0; e < n; e++) {
            r->ia[e] = trn_scat_i(op->red, r->ia[e], r->ib[e]);
        }
        trn_scatter_i64(&x->dst, big, n, r->ia, true);
    } else {
        trn_gather(&x->dst, big, n, r->a);
        trn_gather(&x->src, small, n, r->b);
        for (uint64_t e = 0; e < n; e++) {
            r->a[e] = trn_scat_f(op->red, r->a[e], r->b[e]);
        }
        trn_scatter(&x->dst, big, n, r->a);
    }
}

/* scatter_* form: element by element over the index tensor. */
static uint32_t trn_scatter_elems(TrnKernel *k, TrnIndexed *x, unsigned red,
                                  bool integer, uint64_t limit)
{
    const TrnView *it = &x->idx;
    uint64_t c[NISA_MAX_DIMS] = { 0 }, t[NISA_MAX_DIMS];

    for (uint64_t e = 0; e < it->numel; e++, trn_step(it, c)) {
        void *dp;
        const void *sp;

        if (trn_tick(k, 1)) {
            return NISA_ERR_ABORTED;
        }
        memcpy(t, c, sizeof(t));
        if (!trn_index(it, trn_elem(it, c), limit, &t[x->axis])) {
            return NISA_ERR_BAD_INDEX;
        }
        dp = trn_elem(&x->dst, t);
        sp = trn_elem(&x->src, c);
        if (integer) {
            trn_store_i64(x->dst.dtype, dp,
                          trn_scat_i(red, trn_load_i64(x->dst.dtype, dp),
                                     trn_load_i64(x->src.dtype, sp)), true);
        } else {
            trn_store(x->dst.dtype, dp,
                      trn_scat_f(red, trn_load(x->dst.dtype, dp),
                                 trn_load(x->src.dtype, sp)));
        }
    }
    return NISA_ERR_NONE;
}

typedef struct TrnScatRun {
    unsigned red, mode;
    uint64_t limit;
} TrnScatRun;

/* A complex64 SCATTER on the real views trn_indexed_parts() makes. */
static uint32_t trn_scatter_run(TrnKernel *k, TrnIndexed *x, void *opaque)
{
    TrnScatRun *r = opaque;
    bool integer = trn_is_int(x->dst.dtype) && trn_is_int(x->src.dtype);

    if (r->mode == NISA_IDX_SELECT) {
        TrnScatRow op = { r->red, integer };

        return trn_index_rows(k, x, r->limit, trn_scatter_row, &op);
    }
    return trn_scatter_elems(k, x, r->red, integer, r->limit);
}

uint32_t trn_insn_scatter(TrnKernel *k, const struct nisa_insn *in)
{
    unsigned subop = le16_to_cpu(in->subop);
    unsigned red = NISA_SCATTER_RED(subop), mode = NISA_SCATTER_MODE(subop);
    TrnIndexed x;
    uint64_t limit;
    bool integer;
    uint32_t err;

    if (red >= NISA_NUM_SCATTER) {
        return trn_bad_insn(k, "bad scatter reduction");
    }
    if (in->scalar || in->alpha) {
        return trn_bad_insn(k, "scatter takes no scalar");
    }
    err = trn_indexed_init(k, in, mode, true, &x);
    if (err) {
        return err;
    }
    limit = x.dst.shape[x.axis];
    err = trn_indexed_check(k, &x, limit);
    if (err || !x.dst.numel || !x.src.numel) {
        return err;
    }
    if (nisa_dtype_is_complex(x.dst.dtype)) {
        TrnScatRun r = { red, mode, limit };

        if (red != NISA_SCAT_ASSIGN && red != NISA_SCAT_ADD) {
            /* trn_insn_exec()'s gate lets no other through. */
            return trn_bad_insn(k, "complex64 SCATTER: assign or add only");
        }
        return trn_indexed_parts(k, &x, red == NISA_SCAT_ADD,
                                 trn_scatter_run, &r);
    }
    integer = trn_is_int(x.dst.dtype) && trn_is_int(x.src.dtype);
    if (mode == NISA_IDX_SELECT) {
        TrnScatRow op = { red, integer };

        return trn_index_rows(k, &x, limit, trn_scatter_row, &op);
    }
    return trn_scatter_elems(k, &x, red, integer, limit);
}

/*
 * Virtual Trainium accelerator: SORT and SCAN along an axis.
 *
 * Both see their operands as lanes: every position of the dimensions other
 * than the axis is one lane, walked along the axis with the operand's own
 * stride. A lane is read whole before any of it is written, so dst may be
 * src0 itself (in place).
 *
 * SORT orders a lane stably, ascending or descending, with NaN greater than
 * every number (so last ascending, first descending) and -0.0 equal to 0.0
 * (equal elements keep their order), as PyTorch's CPU sort; integer lanes
 * compare exactly on int64. SCAN is an inclusive prefix along the lane:
 * integer SUM/PROD/MAX/MIN exactly on int64 (wrapping at the store), the
 * rest in double, rounded at each store (docs/hardware.md, SORT and SCAN).
 * A complex64 SCAN is SUM only, of each part as a float32 lane's.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "trainium-isa.h"

typedef struct TrnLanes {
    TrnView src, dst, idx;
    bool indices;
    unsigned axis;          /* right-aligned dimension of the axis */
    uint64_t len;           /* extent of the axis */
    uint64_t nlanes;
} TrnLanes;

/* Check the operands: dst (and src[1] with @indices) have src0's shape. */
static uint32_t trn_lanes_init(TrnKernel *k, const struct nisa_insn *in,
                               TrnLanes *l)
{
    unsigned ndim = in->src[0].ndim, d;
    int32_t axis = (int32_t)le32_to_cpu(in->axis);
    uint32_t err;

    err = trn_view_init(k, &in->src[0], TRN_READ, &l->src);
    if (!err) {
        err = trn_view_init(k, &in->dst, TRN_WRITE, &l->dst);
    }
    if (!err && l->indices) {
        err = trn_view_init(k, &in->src[1], TRN_WRITE, &l->idx);
    }
    if (err) {
        return err;
    }
    if (!l->indices && (in->src[1].ndim || in->src[1].slot ||
                        in->src[1].dtype || in->src[1].offset)) {
        return trn_bad_insn(k, "src[1] set without NISA_IF_INDICES");
    }
    if (in->src[2].ndim || in->src[2].slot || in->src[2].dtype ||
        in->src[2].offset) {
        return trn_bad_insn(k, "src[2] set");
    }
    if (in->dst.ndim != ndim || !trn_same_shape(&l->dst, &l->src) ||
        l->dst.dtype != l->src.dtype) {
        return trn_bad_insn(k, "dst differs from src0 in shape or dtype");
    }
    if (l->indices && (in->src[1].ndim != ndim ||
                       !trn_same_shape(&l->idx, &l->src) ||
                       (l->idx.dtype != NISA_I32 && l->idx.dtype != NISA_I64))) {
        return trn_bad_insn(k, "indices are not I32/I64 of src0's shape");
    }
    if (ndim == 0 && (axis == 0 || axis == -1)) {
        axis = -1;
    } else if (axis < -(int32_t)ndim || axis >= (int32_t)ndim) {
        return trn_bad_insn(k, "axis out of range");
    }
    l->axis = ndim == 0 ? NISA_MAX_DIMS - 1 :
              NISA_MAX_DIMS - ndim + (axis < 0 ? axis + ndim : axis);
    l->len = l->src.shape[l->axis];
    l->nlanes = 1;
    for (d = 0; d < NISA_MAX_DIMS; d++) {
        if (d != l->axis) {
            l->nlanes *= l->src.shape[d];
        }
    }
    return NISA_ERR_NONE;
}

/* Element offset (in elements) of lane @lane's first element in @v. */
static int64_t trn_lane_base(const TrnLanes *l, const TrnView *v, uint64_t lane)
{
    int64_t e = 0;

    for (unsigned d = NISA_MAX_DIMS; d-- > 0;) {
        if (d == l->axis) {
            continue;
        }
        e += (int64_t)(lane % v->shape[d]) * v->stride[d];
        lane /= v->shape[d];
    }
    return e;
}

static inline uint8_t *trn_lane_at(const TrnView *v, int64_t base,
                                   unsigned axis, uint64_t i)
{
    return v->data + (base + (int64_t)i * v->stride[axis]) * (int64_t)v->esize;
}

/* ---- SORT ---- */

typedef struct TrnKey {
    union {
        double f;
        int64_t i;
    };
    int64_t pos;
} TrnKey;

/* NaN greater than everything, equal to NaN; ties by position (stable). */
static int trn_cmp_f(const void *pa, const void *pb)
{
    const TrnKey *a = pa, *b = pb;
    bool na = isnan(a->f), nb = isnan(b->f);

    if (na != nb) {
        return na ? 1 : -1;
    }
    if (!na && a->f != b->f) {
        return a->f < b->f ? -1 : 1;
    }
    return a->pos < b->pos ? -1 : a->pos > b->pos;
}

static int trn_cmp_f_desc(const void *pa, const void *pb)
{
    const TrnKey *a = pa, *b = pb;
    bool na = isnan(a->f), nb = isnan(b->f);

    if (na != nb) {
        return na ? -1 : 1;
    }
    if (!na && a->f != b->f) {
        return a->f > b->f ? -1 : 1;
    }
    return a->pos < b->pos ? -1 : a->pos > b->pos;
}

static int trn_cmp_i(const void *pa, const void *pb)
{
    const TrnKey *a = pa, *b = pb;

    if (a->i != b->i) {
        return a->i < b->i ? -1 : 1;
    }
    return a->pos < b->pos ? -1 : a->pos > b->pos;
}

static int trn_cmp_i_desc(const void *pa, const void *pb)
{
    const TrnKey *a = pa, *b = pb;

    if (a->i != b->i) {
        return a->i > b->i ? -1 : 1;
    }
    return a->pos < b->pos ? -1 : a->pos > b->pos;
}

uint32_t trn_insn_sort(TrnKernel *k, const struct nisa_insn *in)
{
    uint32_t flags = le32_to_cpu(in->flags), err;
    bool desc = flags & NISA_IF_DESCENDING, integer;
    g_autofree TrnKey *key = NULL;
    TrnLanes l = { .indices = flags & NISA_IF_INDICES };
    uint64_t lg = 1;

    if (in->subop || (flags & ~(NISA_IF_DESCENDING | NISA_IF_INDICES)) ||
        in->scalar || in->alpha) {
        return trn_bad_insn(k, "SORT: bad subop, flags or scalars");
    }
    err = trn_lanes_init(k, in, &l);
    if (err) {
        return err;
    }
    if (l.len > NISA_SORT_MAX_LEN) {
        return trn_bad_insn(k, "SORT: axis longer than NISA_SORT_MAX_LEN");
    }
    if (!l.src.numel) {
        return NISA_ERR_NONE;
    }
    integer = trn_is_int(l.src.dtype);
    key = g_new(TrnKey, l.len);
    while ((1ull << lg) < l.len) {
        lg++;
    }
    for (uint64_t lane = 0; lane < l.nlanes; lane++) {
        int64_t sb = trn_lane_base(&l, &l.src, lane);
        int64_t db = trn_lane_base(&l, &l.dst, lane);
        int64_t ib = l.indices ? trn_lane_base(&l, &l.idx, lane) : 0;

        if (trn_tick(k, l.len * lg)) {
            return NISA_ERR_ABORTED;
        }
        for (uint64_t i = 0; i < l.len; i++) {
            const uint8_t *p = trn_lane_at(&l.src, sb, l.axis, i);

            if (integer) {
                key[i].i = trn_load_i64(l.src.dtype, p);
            } else {
                key[i].f = trn_load(l.src.dtype, p);
            }
            key[i].pos = (int64_t)i;
        }
        qsort(key, l.len, sizeof(*key),
              integer ? (desc ? trn_cmp_i_desc : trn_cmp_i) :
                        (desc ? trn_cmp_f_desc : trn_cmp_f));
        for (uint64_t i = 0; i < l.len; i++) {
            uint8_t *p = trn_lane_at(&l.dst, db, l.axis, i);

            if (integer) {
                trn_store_i64(l.dst.dtype, p, key[i].i, true);
            } else {
                trn_store(l.dst.dtype, p, key[i].f);
            }
            if (l.indices) {
                trn_store_i64(l.idx.dtype, trn_lane_at(&l.idx, ib, l.axis, i),
                              key[i].pos, true);
            }
        }
    }
    return NISA_ERR_NONE;
}

/* ---- SCAN ---- */

/* log(exp(x) + exp(y)); NaN propagates, equal infinities stay. */
static double trn_log_add_exp(double x, double y)
{
    double lo = MIN(x, y), hi = MAX(x, y);

    if (isnan(x) || isnan(y)) {
        return NAN;
    }
    if (lo == hi && !isfinite(lo)) {
        return x;
    }
    return log1p(exp(lo - hi)) + hi;
}

/* One lane of an integer scan, exactly on int64 (two's complement). */
static bool trn_scan_int(TrnKernel *k, const TrnLanes *l, unsigned op,
                         int64_t sb, int64_t db, int64_t ib)
{
    uint64_t acc = 0;
    int64_t best = 0, at = 0, x, out;

    for (uint64_t i = 0; i < l->len; i++) {
        if (i % TRN_CHUNK_ELEMS == 0 && trn_tick(k, TRN_CHUNK_ELEMS)) {
            return true;
        }
        x = trn_load_i64(l->src.dtype, trn_lane_at(&l->src, sb, l->axis, i));

        switch (op) {
        case NISA_SCAN_SUM:
            acc = i ? acc + (uint64_t)x : (uint64_t)x;
            out = (int64_t)acc;
            break;
        case NISA_SCAN_PROD:
            acc = i ? acc * (uint64_t)x : (uint64_t)x;
            out = (int64_t)acc;
            break;
        default: /* MAX, MIN: the last of equal extremes */
            if (!i || (op == NISA_SCAN_MAX ? x >= best : x <= best)) {
                best = x;
                at = (int64_t)i;
            }
            out = best;
            break;
        }
        trn_store_i64(l->dst.dtype, trn_lane_at(&l->dst, db, l->axis, i), out, true);
        if (l->indices) {
            trn_store_i64(l->idx.dtype, trn_lane_at(&l->idx, ib, l->axis, i), at, true);
        }
    }
    return false;
}

/* One lane of a floating scan, in double. */
static bool trn_scan_real(TrnKernel *k, const TrnLanes *l, unsigned op,
                          int64_t sb, int64_t db, int64_t ib)
{
    double acc = 0, x;
    int64_t at = 0;

    for (uint64_t i = 0; i < l->len; i++) {
        if (i % TRN_CHUNK_ELEMS == 0 && trn_tick(k, TRN_CHUNK_ELEMS)) {
            return true;
        }
        x = trn_load(l->src.dtype, trn_lane_at(&l->src, sb, l->axis, i));

        switch (op) {
        case NISA_SCAN_SUM:
            acc = i ? acc + x : x;
            break;
        case NISA_SCAN_PROD:
            acc = i ? acc * x : x;
            break;
        case NISA_SCAN_LOGSUMEXP:
            acc = i ? trn_log_add_exp(x, acc) : x;
            break;
        default:
            /* A NaN is always taken; else the last of equal extremes. */
            if (!i || isnan(x) ||
                (!isnan(acc) && (op == NISA_SCAN_MAX ? x >= acc : x <= acc))) {
                acc = x;
                at = (int64_t)i;
            }
            break;
        }
        trn_store(l->dst.dtype, trn_lane_at(&l->dst, db, l->axis, i), acc);
        if (l->indices) {
            trn_store_i64(l->idx.dtype, trn_lane_at(&l->idx, ib, l->axis, i), at, true);
        }
    }
    return false;
}

static uint32_t trn_scan_lanes(TrnKernel *k, const TrnLanes *l, unsigned op,
                               bool integer)
{
    for (uint64_t lane = 0; lane < l->nlanes; lane++) {
        int64_t sb = trn_lane_base(l, &l->src, lane);
        int64_t db = trn_lane_base(l, &l->dst, lane);
        int64_t ib = l->indices ? trn_lane_base(l, &l->idx, lane) : 0;

        if (integer ? trn_scan_int(k, l, op, sb, db, ib) :
                      trn_scan_real(k, l, op, sb, db, ib)) {
            return NISA_ERR_ABORTED;
        }
    }
    return NISA_ERR_NONE;
}

uint32_t trn_insn_scan(TrnKernel *k, const struct nisa_insn *in)
{
    unsigned op = le16_to_cpu(in->subop);
    uint32_t flags = le32_to_cpu(in->flags), err;
    TrnLanes l = { .indices = flags & NISA_IF_INDICES };
    bool integer;

    if (op >= NISA_NUM_SCAN || (flags & ~NISA_IF_INDICES) || in->scalar ||
        in->alpha) {
        return trn_bad_insn(k, "SCAN: bad subop, flags or scalars");
    }
    if (l.indices && op != NISA_SCAN_MAX && op != NISA_SCAN_MIN) {
        return trn_bad_insn(k, "SCAN: indices only for MAX and MIN");
    }
    err = trn_lanes_init(k, in, &l);
    if (err || !l.src.numel) {
        return err;
    }
    if (nisa_dtype_is_complex(l.src.dtype)) {
        if (op != NISA_SCAN_SUM) {
            /* trn_insn_exec()'s gate lets no other through. */
            return trn_bad_insn(k, "complex64 SCAN: sum only");
        }
        /* Part by part: each a float32 lane's sum, in double. */
        for (unsigned part = 0; part < 2; part++) {
            TrnLanes p = l;

            trn_view_c64_part(&p.src, part);
            trn_view_c64_part(&p.dst, part);
            err = trn_scan_lanes(k, &p, op, false);
            if (err) {
                return err;
            }
        }
        return NISA_ERR_NONE;
    }
    integer = trn_is_int(l.src.dtype) && op != NISA_SCAN_LOGSUMEXP;
    return trn_scan_lanes(k, &l, op, integer);
}

/*
 * Virtual Trainium accelerator: indexed instructions.
 *
 * GATHER, @subop NRN_IDX_SELECT (index_select, embedding):
 *   dst[.., l, ..] = src0[.., src1[l], ..] along @axis, src1 1-D;
 * GATHER, NRN_IDX_ELEMENT (torch.gather):
 *   dst[c] = src0[c with c[axis] = src1[c]], src1 of dst's shape;
 * SCATTER_ADD, NRN_IDX_SELECT (index_add_, the backward of index_select):
 *   dst[.., src1[l], ..] += src0[.., l, ..];
 * SCATTER_ADD, NRN_IDX_ELEMENT (scatter_add_, the backward of gather):
 *   dst[c with c[axis] = src1[c]] += src0[c].
 * Indices are int32 or int64 and must lie in [0, extent of the axis); every
 * index is checked before anything is written (NRN_ERR_BAD_INDEX).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/log.h"
#include "trainium-isa.h"

typedef struct TrnIndexed {
    TrnView dst, src, idx;
    unsigned axis;          /* right-aligned dimension of the axis */
    uint64_t outer, inner;  /* around the axis, in the iterated tensor */
} TrnIndexed;

static uint32_t trn_indexed_init(TrnKernel *k, const struct nrn_insn *in,
                                 bool scatter, TrnIndexed *x)
{
    unsigned mode = le16_to_cpu(in->subop), ndim = in->dst.ndim, d;
    int32_t axis = (int32_t)le32_to_cpu(in->axis);
    uint32_t err;

    if (mode >= NRN_NUM_IDX || in->flags) {
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
    if (x->idx.dtype != NRN_I32 && x->idx.dtype != NRN_I64) {
        return trn_bad_insn(k, "indices must be int32 or int64");
    }
    if (in->src[0].ndim != ndim || ndim == 0 ||
        axis < -(int32_t)ndim || axis >= (int32_t)ndim) {
        return trn_bad_insn(k, "bad ranks or axis for an indexed instruction");
    }
    x->axis = NRN_MAX_DIMS - ndim + (axis < 0 ? axis + ndim : axis);
    if (mode == NRN_IDX_SELECT) {
        const TrnView *big = scatter ? &x->dst : &x->src;
        const TrnView *small = scatter ? &x->src : &x->dst;

        if (in->src[1].ndim != 1 || small->shape[x->axis] != x->idx.numel) {
            return trn_bad_insn(k, "index length differs from the axis");
        }
        for (d = 0; d < NRN_MAX_DIMS; d++) {
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
        for (d = 0; d < NRN_MAX_DIMS; d++) {
            if (d != x->axis && it->shape[d] > other->shape[d]) {
                return trn_bad_insn(k, "index larger than the tensor off the axis");
            }
        }
    }
    x->outer = x->inner = 1;
    for (d = 0; d < x->axis; d++) {
        x->outer *= x->dst.shape[d];
    }
    for (d = x->axis + 1; d < NRN_MAX_DIMS; d++) {
        x->inner *= x->dst.shape[d];
    }
    return NRN_ERR_NONE;
}

/* All indices, checked against @limit. */
static uint32_t trn_load_indices(const TrnView *idx, uint64_t limit,
                                 uint64_t **out)
{
    g_autofree uint64_t *v = g_new(uint64_t, MAX(idx->numel, 1));
    double buf[TRN_CHUNK_ELEMS];

    for (uint64_t s = 0; s < idx->numel; s += TRN_CHUNK_ELEMS) {
        uint64_t n = MIN(TRN_CHUNK_ELEMS, idx->numel - s);

        trn_gather(idx, s, n, buf);
        for (uint64_t j = 0; j < n; j++) {
            if (!(buf[j] >= 0 && buf[j] < (double)limit)) {
                return NRN_ERR_BAD_INDEX;
            }
            v[s + j] = (uint64_t)buf[j];
        }
    }
    *out = g_steal_pointer(&v);
    return NRN_ERR_NONE;
}

static void trn_step(const TrnView *v, uint64_t c[NRN_MAX_DIMS])
{
    for (unsigned d = NRN_MAX_DIMS; d-- > 0;) {
        if (++c[d] < v->shape[d] || d == 0) {
            return;
        }
        c[d] = 0;
    }
}

/* index_select / index_add: whole rows of @inner elements at a time. */
static uint32_t trn_select(TrnKernel *k, TrnIndexed *x, bool scatter,
                           const uint64_t *ix)
{
    const TrnView *big = scatter ? &x->dst : &x->src;
    uint64_t len = big->shape[x->axis], L = x->idx.numel;
    g_autofree double *a = g_new(double, TRN_CHUNK_ELEMS);
    g_autofree double *b = g_new(double, TRN_CHUNK_ELEMS);

    for (uint64_t o = 0; o < x->outer; o++) {
        if (trn_queue_aborting(k->q)) {
            return NRN_ERR_ABORTED;
        }
        for (uint64_t l = 0; l < L; l++) {
            uint64_t bigpos = (o * len + ix[l]) * x->inner;
            uint64_t smallpos = (o * L + l) * x->inner;

            for (uint64_t j = 0; j < x->inner; j += TRN_CHUNK_ELEMS) {
                uint64_t n = MIN(TRN_CHUNK_ELEMS, x->inner - j);

                if (!scatter) {
                    trn_gather(&x->src, bigpos + j, n, a);
                    trn_scatter(&x->dst, smallpos + j, n, a);
                    continue;
                }
                trn_gather(&x->dst, bigpos + j, n, a);
                trn_gather(&x->src, smallpos + j, n, b);
                for (uint64_t e = 0; e < n; e++) {
                    a[e] += b[e];
                }
                trn_scatter(&x->dst, bigpos + j, n, a);
            }
        }
    }
    return NRN_ERR_NONE;
}

/* gather / scatter_add: element by element over the index tensor. */
static uint32_t trn_element(TrnKernel *k, TrnIndexed *x, bool scatter,
                            const uint64_t *ix)
{
    const TrnView *it = &x->idx;
    uint64_t c[NRN_MAX_DIMS] = { 0 }, t[NRN_MAX_DIMS];

    for (uint64_t e = 0; e < it->numel; e++, trn_step(it, c)) {
        if ((e & 0xffff) == 0 && trn_queue_aborting(k->q)) {
            return NRN_ERR_ABORTED;
        }
        memcpy(t, c, sizeof(t));
        t[x->axis] = ix[e];
        if (scatter) {
            void *dp = trn_elem(&x->dst, t);
            double v = trn_load(x->dst.dtype, dp) +
                       trn_load(x->src.dtype, trn_elem(&x->src, c));

            trn_store(x->dst.dtype, dp, v);
        } else {
            trn_store(x->dst.dtype, trn_elem(&x->dst, c),
                      trn_load(x->src.dtype, trn_elem(&x->src, t)));
        }
    }
    return NRN_ERR_NONE;
}

static uint32_t trn_indexed(TrnKernel *k, const struct nrn_insn *in,
                            bool scatter)
{
    g_autofree uint64_t *ix = NULL;
    TrnIndexed x;
    uint32_t err;
    uint64_t limit;

    err = trn_indexed_init(k, in, scatter, &x);
    if (err) {
        return err;
    }
    limit = scatter ? x.dst.shape[x.axis] : x.src.shape[x.axis];
    err = trn_load_indices(&x.idx, limit, &ix);
    if (err) {
        qemu_log_mask(LOG_GUEST_ERROR, "trainium: queue %u: index out of "
                      "range [0, %" PRIu64 ")\n", k->q->idx, limit);
        return err;
    }
    if (le16_to_cpu(in->subop) == NRN_IDX_SELECT) {
        return trn_select(k, &x, scatter, ix);
    }
    return trn_element(k, &x, scatter, ix);
}

uint32_t trn_insn_gather(TrnKernel *k, const struct nrn_insn *in)
{
    return trn_indexed(k, in, false);
}

uint32_t trn_insn_scatter_add(TrnKernel *k, const struct nrn_insn *in)
{
    return trn_indexed(k, in, true);
}

/*
 * Virtual Trainium accelerator: MATMUL, on OpenBLAS's sgemm.
 *
 * dst[b] = src0[b] @ src1[b] (+ src2[b] with NRN_IF_BIAS) (+ dst[b] with
 * NRN_IF_ACCUMULATE), for the batch dimensions b (all but the last two;
 * broadcast by zero strides). Products accumulate in float32. A transposed
 * operand is just swapped strides: float32 operands whose strides BLAS can
 * express (one of them 1) are used in place, anything else is packed into a
 * float32 copy first; bf16 is converted. The result goes straight into a
 * float32 destination with a unit inner stride, else through a temporary.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include <cblas.h>
#include "trainium-isa.h"

typedef struct TrnMat {
    const float *p;
    CBLAS_TRANSPOSE trans;
    int ld;
    float *packed;     /* owned when the operand had to be packed */
} TrnMat;

/* The (rows x cols) matrix at @data with strides @sr, @sc, for BLAS. */
static void trn_mat(const TrnView *v, uint8_t *data, uint64_t rows,
                    uint64_t cols, TrnMat *m)
{
    int64_t sr = v->stride[2], sc = v->stride[3];

    m->packed = NULL;
    if (v->dtype == NRN_F32 && rows <= INT_MAX && cols <= INT_MAX) {
        if (sc == 1 && sr >= (int64_t)MAX(cols, 1) && sr <= INT_MAX) {
            m->p = (const float *)data;
            m->trans = CblasNoTrans;
            m->ld = (int)sr;
            return;
        }
        if (sr == 1 && sc >= (int64_t)MAX(rows, 1) && sc <= INT_MAX) {
            m->p = (const float *)data;
            m->trans = CblasTrans;
            m->ld = (int)sc;
            return;
        }
    }
    m->packed = g_new(float, rows * cols);
    for (uint64_t r = 0; r < rows; r++) {
        for (uint64_t c = 0; c < cols; c++) {
            m->packed[r * cols + c] = (float)trn_load(
                v->dtype, data + ((int64_t)r * sr + (int64_t)c * sc) *
                          (int64_t)v->esize);
        }
    }
    m->p = m->packed;
    m->trans = CblasNoTrans;
    m->ld = (int)MAX(cols, 1);
}

/* One batch entry of @v as a 2-D view. */
static TrnView trn_batch(const TrnView *v, uint64_t b0, uint64_t b1)
{
    TrnView m = *v;

    m.data += ((int64_t)b0 * v->stride[0] + (int64_t)b1 * v->stride[1]) *
              (int64_t)v->esize;
    m.shape[0] = m.shape[1] = 1;
    m.numel = m.shape[2] * m.shape[3];
    return m;
}

static void trn_span(const TrnView *v, uint8_t **lo, uint8_t **hi)
{
    int64_t l = 0, h = 0;

    for (unsigned d = 0; d < NRN_MAX_DIMS; d++) {
        int64_t e = (int64_t)(v->shape[d] - 1) * v->stride[d];

        if (e > 0) {
            h += e;
        } else {
            l += e;
        }
    }
    *lo = v->data + l * (int64_t)v->esize;
    *hi = v->data + (h + 1) * (int64_t)v->esize;
}

static bool trn_overlap(const TrnView *a, const TrnView *b)
{
    uint8_t *alo, *ahi, *blo, *bhi;

    trn_span(a, &alo, &ahi);
    trn_span(b, &blo, &bhi);
    return alo < bhi && blo < ahi;
}

/* dst = extra(dst) + bias + t, elementwise over the batch view. */
static void trn_epilogue(const TrnView *dst, const TrnView *bias, bool acc,
                         const float *t, double *x, double *y)
{
    for (uint64_t s = 0; s < dst->numel; s += TRN_CHUNK_ELEMS) {
        uint64_t n = MIN(TRN_CHUNK_ELEMS, dst->numel - s);

        for (uint64_t j = 0; j < n; j++) {
            x[j] = t ? t[s + j] : 0;
        }
        if (bias) {
            trn_gather(bias, s, n, y);
            for (uint64_t j = 0; j < n; j++) {
                x[j] += y[j];
            }
        }
        if (acc) {
            trn_gather(dst, s, n, y);
            for (uint64_t j = 0; j < n; j++) {
                x[j] += y[j];
            }
        }
        trn_scatter(dst, s, n, x);
    }
}

uint32_t trn_insn_matmul(TrnKernel *k, const struct nrn_insn *in)
{
    uint32_t flags = le32_to_cpu(in->flags), err;
    bool acc = flags & NRN_IF_ACCUMULATE, has_bias = flags & NRN_IF_BIAS;
    g_autofree double *x = g_new(double, TRN_CHUNK_ELEMS);
    g_autofree double *y = g_new(double, TRN_CHUNK_ELEMS);
    TrnView a, b, c, bias;
    uint64_t M, N, K;

    if (flags & ~(NRN_IF_ACCUMULATE | NRN_IF_BIAS) || in->subop) {
        return trn_bad_insn(k, "bad matmul flags");
    }
    err = trn_view_init(k, &in->src[0], TRN_READ, &a);
    if (!err) {
        err = trn_view_init(k, &in->src[1], TRN_READ, &b);
    }
    if (!err) {
        err = trn_view_init(k, &in->dst, TRN_WRITE | (acc ? TRN_READ : 0), &c);
    }
    if (!err && has_bias) {
        err = trn_view_init(k, &in->src[2], TRN_READ, &bias);
        if (!err && !trn_same_shape(&bias, &c)) {
            err = trn_bad_insn(k, "bias shape differs from the destination's");
        }
    }
    if (err) {
        return err;
    }
    M = c.shape[2];
    N = c.shape[3];
    K = a.shape[3];
    if (a.shape[2] != M || b.shape[2] != K || b.shape[3] != N ||
        a.shape[0] != c.shape[0] || a.shape[1] != c.shape[1] ||
        b.shape[0] != c.shape[0] || b.shape[1] != c.shape[1] ||
        M > INT_MAX || N > INT_MAX || K > INT_MAX) {
        return trn_bad_insn(k, "matmul shapes do not match");
    }
    if (!c.numel) {
        return NRN_ERR_NONE;
    }

    for (uint64_t b0 = 0; b0 < c.shape[0]; b0++) {
        for (uint64_t b1 = 0; b1 < c.shape[1]; b1++) {
            TrnView cb = trn_batch(&c, b0, b1);
            TrnView ab = trn_batch(&a, b0, b1), bb = trn_batch(&b, b0, b1);
            TrnView biasb = has_bias ? trn_batch(&bias, b0, b1) : cb;
            bool direct = c.dtype == NRN_F32 && cb.stride[3] == 1 &&
                          cb.stride[2] >= (int64_t)N && cb.stride[2] <= INT_MAX &&
                          !trn_overlap(&cb, &ab) && !trn_overlap(&cb, &bb) &&
                          !(has_bias && trn_overlap(&cb, &biasb));
            g_autofree float *t = NULL;
            TrnMat am, bm;

            if (trn_queue_aborting(k->q)) {
                return NRN_ERR_ABORTED;
            }
            if (K == 0) {
                trn_epilogue(&cb, has_bias ? &biasb : NULL, acc, NULL, x, y);
                continue;
            }
            trn_mat(&ab, ab.data, M, K, &am);
            trn_mat(&bb, bb.data, K, N, &bm);
            if (direct) {
                float beta = acc ? 1.0f : 0.0f;

                if (has_bias) {
                    /* Fold the bias (and the old value) in first. */
                    trn_epilogue(&cb, &biasb, acc, NULL, x, y);
                    beta = 1.0f;
                }
                cblas_sgemm(CblasRowMajor, am.trans, bm.trans, (int)M, (int)N,
                            (int)K, 1.0f, am.p, am.ld, bm.p, bm.ld, beta,
                            (float *)cb.data, (int)cb.stride[2]);
            } else {
                t = g_new(float, M * N);
                cblas_sgemm(CblasRowMajor, am.trans, bm.trans, (int)M, (int)N,
                            (int)K, 1.0f, am.p, am.ld, bm.p, bm.ld, 0.0f, t,
                            (int)N);
                trn_epilogue(&cb, has_bias ? &biasb : NULL, acc, t, x, y);
            }
            g_free(am.packed);
            g_free(bm.packed);
        }
    }
    return NRN_ERR_NONE;
}

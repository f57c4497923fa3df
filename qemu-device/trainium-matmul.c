/*
 * Virtual Trainium accelerator: MATMUL, on OpenBLAS's sgemm.
 *
 * dst[b] = src0[b] @ src1[b] (+ src2[b] with NISA_IF_BIAS) (+ dst[b] with
 * NISA_IF_ACCUMULATE), for the batch dimensions b (the first two of four;
 * broadcast by zero strides). Products accumulate in float32.
 *
 * The work is split into tiles of at most TRN_TILE rows, columns and inner
 * length, so that every sgemm call is bounded (a reset waits for one call
 * at most, docs/hardware.md "Reset") and so is all the memory the card
 * allocates, whatever the operands' sizes. A float32 operand whose strides
 * BLAS can express (one of them 1) is used in place, anything else is
 * packed tile by tile into a float32 buffer; bf16 is converted. The result
 * goes straight into a float32 destination with a unit inner stride that
 * overlaps no source, else through a float32 tile and a conversion.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include <cblas.h>
#include "hw/boards.h"
#include "trainium-isa.h"

/*
 * A MATMUL's sgemm uses the "blas-threads" property's host threads, by
 * default the host's CPUs that the machine's vCPUs leave (at least one):
 * the common case is one busy NeuronCore (one stream), which then has the
 * rest of the host. Not more: OpenBLAS splits a product evenly between its
 * threads, so a thread sharing a core with a busy vCPU holds the whole
 * product back (measured under TCG, one vCPU on 2 host CPUs: a compiled MLP
 * step 24.9 ms with one thread, 32.5 with two; docs/benchmarks.md).
 * OpenBLAS serialises concurrent level-3 callers, so two cores' products
 * take turns, each with every thread, rather than oversubscribing the host.
 * OpenBLAS's setting is per process: the last card realized sets it.
 *
 * A small product runs on the calling thread alone: waking OpenBLAS's
 * sleeping workers costs more than they save below about 2^24
 * multiply-adds, and on a loaded host a wake-up waits for a time slice
 * (measured under load: a GPT step's 512x64x192 addmm took 10 ms on the
 * card, its single-threaded bmm of the same size class 30 us).
 */
#define TRN_SGEMM_SMALL (1ull << 24)

static int trn_blas_threads = 1;  /* the process-wide setting, as OpenBLAS's */

void trn_matmul_set_threads(TrnState *s)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    long vcpus = MACHINE(qdev_get_machine())->smp.cpus;
    uint32_t n = s->blas_threads;

    if (!n) {
        n = cpus > vcpus ? (uint32_t)(cpus - vcpus) : 1;
    }
    qatomic_set(&trn_blas_threads, (int)n);
    openblas_set_num_threads((int)n);
}

/*
 * cblas_sgemm, single-threaded when small. The thread count is OpenBLAS's
 * process-wide setting: a concurrent caller on another core may see 1 for
 * one product (slower, same result).
 */
static void trn_sgemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, uint64_t m,
                      uint64_t n, uint64_t k, const float *a, int lda,
                      const float *b, int ldb, float beta, float *c, int ldc)
{
    int threads = qatomic_read(&trn_blas_threads);
    bool one = threads > 1 && m * n * k < TRN_SGEMM_SMALL;

    if (one) {
        openblas_set_num_threads(1);
    }
    cblas_sgemm(CblasRowMajor, ta, tb, (int)m, (int)n, (int)k, 1.0f, a, lda,
                b, ldb, beta, c, ldc);
    if (one) {
        openblas_set_num_threads(threads);
    }
}

/* Rows, columns and inner length of one tile: 2^27 multiply-adds. */
#define TRN_TILE 512

typedef struct TrnMat {
    const float *p;
    CBLAS_TRANSPOSE trans;
    int ld;
} TrnMat;

/* Tile buffers, allocated once per instruction (3 MiB). */
typedef struct TrnTiles {
    float a[TRN_TILE * TRN_TILE];
    float b[TRN_TILE * TRN_TILE];
    float c[TRN_TILE * TRN_TILE];
    double x[TRN_CHUNK_ELEMS];
    double y[TRN_CHUNK_ELEMS];
} TrnTiles;

/*
 * The (rows x cols) block at (@r0, @c0) of the 2-D view @v, for BLAS: in
 * place if its strides allow, else packed into @buf.
 */
static void trn_mat(const TrnView *v, uint64_t r0, uint64_t c0, uint64_t rows,
                    uint64_t cols, float *buf, TrnMat *m)
{
    int64_t sr = v->stride[2], sc = v->stride[3];
    uint8_t *data = v->data + ((int64_t)r0 * sr + (int64_t)c0 * sc) *
                    (int64_t)v->esize;

    if (v->dtype == NISA_F32) {
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
    for (uint64_t r = 0; r < rows; r++) {
        for (uint64_t c = 0; c < cols; c++) {
            buf[r * cols + c] = (float)trn_load(
                v->dtype, data + ((int64_t)r * sr + (int64_t)c * sc) *
                          (int64_t)v->esize);
        }
    }
    m->p = buf;
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

/* The (rows x cols) block at (@r0, @c0) of the 2-D view @v, as a view. */
static TrnView trn_block(const TrnView *v, uint64_t r0, uint64_t c0,
                         uint64_t rows, uint64_t cols)
{
    TrnView m = *v;

    m.data += ((int64_t)r0 * v->stride[2] + (int64_t)c0 * v->stride[3]) *
              (int64_t)v->esize;
    m.shape[2] = rows;
    m.shape[3] = cols;
    m.numel = rows * cols;
    return m;
}

static void trn_span(const TrnView *v, uint8_t **lo, uint8_t **hi)
{
    int64_t l = 0, h = 0;

    for (unsigned d = 0; d < NISA_MAX_DIMS; d++) {
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

/* dst = t (a dense tile, or 0) + bias + (dst if @acc), over the block. */
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

/*
 * One (m x n) output tile at (@m0, @n0) of one batch entry: the inner
 * dimension in steps of TRN_TILE, each one bounded sgemm call.
 */
static uint32_t trn_matmul_tile(TrnKernel *k, const TrnView *ab,
                                const TrnView *bb, const TrnView *cb,
                                const TrnView *biasb, bool acc, bool direct,
                                uint64_t m0, uint64_t n0, uint64_t m,
                                uint64_t n, uint64_t K, TrnTiles *t)
{
    TrnView cblk = trn_block(cb, m0, n0, m, n);
    TrnView bblk = biasb ? trn_block(biasb, m0, n0, m, n) : cblk;
    float *out = t->c;
    int ldc = (int)n;
    float beta = 0.0f;

    if (direct) {
        out = (float *)cblk.data;
        ldc = (int)cb->stride[2];
        if (biasb) {
            /* Fold the bias (and the old value) in first. */
            trn_epilogue(&cblk, &bblk, acc, NULL, t->x, t->y);
            beta = 1.0f;
        } else {
            beta = acc ? 1.0f : 0.0f;
        }
    }
    if (K == 0) {
        if (!direct) {
            trn_epilogue(&cblk, biasb ? &bblk : NULL, acc, NULL, t->x, t->y);
        } else if (!biasb && !acc) {
            trn_epilogue(&cblk, NULL, false, NULL, t->x, t->y);
        }
        return trn_tick(k, m * n) ? NISA_ERR_ABORTED : NISA_ERR_NONE;
    }
    for (uint64_t k0 = 0; k0 < K; k0 += TRN_TILE) {
        uint64_t kk = MIN(TRN_TILE, K - k0);
        TrnMat am, bm;

        if (trn_tick(k, m * n * kk)) {
            return NISA_ERR_ABORTED;
        }
        trn_mat(ab, m0, k0, m, kk, t->a, &am);
        trn_mat(bb, k0, n0, kk, n, t->b, &bm);
        trn_sgemm(am.trans, bm.trans, m, n, kk, am.p, am.ld, bm.p, bm.ld,
                  beta, out, ldc);
        beta = 1.0f;
    }
    if (!direct) {
        trn_epilogue(&cblk, biasb ? &bblk : NULL, acc, t->c, t->x, t->y);
    }
    return NISA_ERR_NONE;
}

uint32_t trn_insn_matmul(TrnKernel *k, const struct nisa_insn *in)
{
    uint32_t flags = le32_to_cpu(in->flags), err;
    bool acc = flags & NISA_IF_ACCUMULATE, has_bias = flags & NISA_IF_BIAS;
    g_autofree TrnTiles *tiles = NULL;
    TrnView a, b, c, bias;
    uint64_t M, N, K;

    if (flags & ~(NISA_IF_ACCUMULATE | NISA_IF_BIAS) || in->subop) {
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
        b.shape[0] != c.shape[0] || b.shape[1] != c.shape[1]) {
        return trn_bad_insn(k, "matmul shapes do not match");
    }
    if (!c.numel) {
        return NISA_ERR_NONE;
    }

    tiles = g_new(TrnTiles, 1);
    for (uint64_t b0 = 0; b0 < c.shape[0]; b0++) {
        for (uint64_t b1 = 0; b1 < c.shape[1]; b1++) {
            TrnView cb = trn_batch(&c, b0, b1);
            TrnView ab = trn_batch(&a, b0, b1), bb = trn_batch(&b, b0, b1);
            TrnView biasb = has_bias ? trn_batch(&bias, b0, b1) : cb;
            bool direct = c.dtype == NISA_F32 && cb.stride[3] == 1 &&
                          cb.stride[2] >= (int64_t)N && cb.stride[2] <= INT_MAX &&
                          !trn_overlap(&cb, &ab) && !trn_overlap(&cb, &bb) &&
                          !(has_bias && trn_overlap(&cb, &biasb));

            for (uint64_t m0 = 0; m0 < M; m0 += TRN_TILE) {
                for (uint64_t n0 = 0; n0 < N; n0 += TRN_TILE) {
                    err = trn_matmul_tile(k, &ab, &bb, &cb,
                                          has_bias ? &biasb : NULL, acc,
                                          direct, m0, n0,
                                          MIN(TRN_TILE, M - m0),
                                          MIN(TRN_TILE, N - n0), K, tiles);
                    if (err) {
                        return err;
                    }
                }
            }
        }
    }
    return NISA_ERR_NONE;
}

/*
 * Virtual Trainium accelerator: MATMUL, on OpenBLAS's sgemm (dgemm for a
 * float64 destination).
 *
 * dst[b] = src0[b] @ src1[b] (+ src2[b] with NISA_IF_BIAS) (+ dst[b] with
 * NISA_IF_ACCUMULATE), for the batch dimensions b (the first two of four;
 * broadcast by zero strides). Products accumulate in float32, or in
 * float64 into a float64 destination.
 *
 * The work is split into tiles of at most TRN_TILE rows, columns and inner
 * length, so that every sgemm call is bounded (a reset waits for one call
 * at most, docs/hardware.md "Reset") and so is all the memory the card
 * allocates, whatever the operands' sizes. A float32 operand whose strides
 * BLAS can express (one of them 1) is used in place, anything else is
 * packed tile by tile into a float32 buffer; bf16 is converted. The result
 * goes straight into a float32 destination with a unit inner stride that
 * overlaps no source, else through a float32 tile and a conversion. A
 * large product is cut into output blocks that the card's threads share
 * (trn_matmul_split(), trainium-pool.c); each memory bound holds per
 * thread.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include <cblas.h>
#include "hw/boards.h"
#include "trainium-isa.h"

/*
 * A MATMUL runs on the "blas-threads" property's host threads: its queue
 * worker and the device's helper threads (trainium-pool.c), each calling a
 * single-threaded sgemm on chunks of the product that it takes as it
 * comes. OpenBLAS's own threads are not used:
 * it splits a product evenly between them, so one sharing a core with a
 * busy vCPU held the whole product back (measured under TCG, one vCPU on
 * 2 host CPUs: a compiled MLP step took 32.5 ms with two OpenBLAS threads,
 * 24.9 with one; docs/benchmarks.md). With chunks taken dynamically, a
 * helper on a busy core takes fewer of them. The helpers serve one
 * instruction at a time: another core's product meanwhile runs on its
 * worker alone.
 */
#define TRN_MAX_BLAS_THREADS 64

unsigned trn_matmul_threads(TrnState *s)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    long vcpus = MACHINE(qdev_get_machine())->smp.cpus;

    /* Every sgemm runs on the thread that calls it. */
    openblas_set_num_threads(1);
    if (s->blas_threads) {
        return s->blas_threads;
    }
    /*
     * By default the worker and a helper for each host CPU the vCPUs
     * leave. One vCPU on 2 host CPUs: two threads (an eager ResNet-18 step
     * 340 ms, 420 with one). Two vCPUs on 2 (make check): the worker
     * alone, as a helper would take its time from the busy guest
     * (torch_neuron's tests took 998 s with one; without, 849 and 928 s:
     * within this host's noise, so a precaution, not a measured gain).
     */
    return 1 + (unsigned)MIN(MAX(cpus - vcpus, 0), TRN_MAX_BLAS_THREADS - 1);
}

bool trn_matmul_check_threads(TrnState *s, Error **errp)
{
    if (s->blas_threads > TRN_MAX_BLAS_THREADS) {
        error_setg(errp, "blas-threads must be at most %d (0: one per host "
                   "CPU)", TRN_MAX_BLAS_THREADS);
        return false;
    }
    return true;
}

/*
 * A product of fewer multiply-adds than this runs on its worker alone:
 * handing chunks to a helper costs more than it saves. The helpers spin
 * between instructions (trainium-pool.c), so a GPT's products of 2^21 to
 * 2^23 gain: [512, 64] x [64, 192] 84 -> 44-49 us, [512, 64] x [64, 64]
 * 31-35 -> 18-23 us a replayed MATMUL on a 2-core host (2^24 before).
 */
#define TRN_SGEMM_SMALL (1ull << 21)
/*
 * Multiply-adds of one chunk: about 0.3 ms on one host core, so that the
 * last chunks of the threads end close together; a chunk is never more
 * than TRN_CHUNK_MAX, the bound on what a reset waits for.
 */
#define TRN_CHUNK_MACS (1ull << 25)
#define TRN_CHUNK_MAX  (1ull << 28)
/* The smallest chunk's rows and columns; the fewest chunks of a product. */
#define TRN_CHUNK_MIN 64
#define TRN_CHUNK_COUNT 8

static void trn_sgemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, uint64_t m,
                      uint64_t n, uint64_t k, const float *a, int lda,
                      const float *b, int ldb, float beta, float *c, int ldc)
{
    cblas_sgemm(CblasRowMajor, ta, tb, (int)m, (int)n, (int)k, 1.0f, a, lda,
                b, ldb, beta, c, ldc);
}

/* Rows, columns and inner length of one tile: 2^27 multiply-adds. */
#define TRN_TILE 512

typedef struct TrnMat {
    const float *p;
    CBLAS_TRANSPOSE trans;
    int ld;
} TrnMat;

/* The same for dgemm (a float64 destination). */
typedef struct TrnMatF64 {
    const double *p;
    CBLAS_TRANSPOSE trans;
    int ld;
} TrnMatF64;

/*
 * Tile buffers, allocated once per instruction (3 MiB; float64 ones for a
 * float64 destination, 6 MiB, touched only then).
 */
typedef struct TrnTiles {
    union {
        struct {
            float a[TRN_TILE * TRN_TILE];
            float b[TRN_TILE * TRN_TILE];
            float c[TRN_TILE * TRN_TILE];
        } f;
        struct {
            double a[TRN_TILE * TRN_TILE];
            double b[TRN_TILE * TRN_TILE];
            double c[TRN_TILE * TRN_TILE];
        } d;
    };
    double x[TRN_CHUNK_ELEMS];
    double y[TRN_CHUNK_ELEMS];
} TrnTiles;

/*
 * The (rows x cols) block at (@r0, @c0) of the 2-D view @v, for BLAS: in
 * place if it is of @NISA_T and its strides allow, else converted and
 * packed into @buf. TRN_MAT_FN(name, element type, its dtype, matrix).
 */
#define TRN_MAT_FN(NAME, T, NISA_T, MAT)                                    \
static void NAME(const TrnView *v, uint64_t r0, uint64_t c0, uint64_t rows, \
                 uint64_t cols, T *buf, MAT *m)                             \
{                                                                           \
    int64_t sr = v->stride[2], sc = v->stride[3];                           \
    uint8_t *data = v->data + ((int64_t)r0 * sr + (int64_t)c0 * sc) *       \
                    (int64_t)v->esize;                                      \
                                                                            \
    if (v->dtype == NISA_T) {                                               \
        if (sc == 1 && sr >= (int64_t)MAX(cols, 1) && sr <= INT_MAX) {      \
            m->p = (const T *)data;                                         \
            m->trans = CblasNoTrans;                                        \
            m->ld = (int)sr;                                                \
            return;                                                         \
        }                                                                   \
        if (sr == 1 && sc >= (int64_t)MAX(rows, 1) && sc <= INT_MAX) {      \
            m->p = (const T *)data;                                         \
            m->trans = CblasTrans;                                          \
            m->ld = (int)sc;                                                \
            return;                                                         \
        }                                                                   \
    }                                                                       \
    for (uint64_t r = 0; r < rows; r++) {                                   \
        for (uint64_t c = 0; c < cols; c++) {                               \
            buf[r * cols + c] = (T)trn_load(                                \
                v->dtype, data + ((int64_t)r * sr + (int64_t)c * sc) *      \
                          (int64_t)v->esize);                               \
        }                                                                   \
    }                                                                       \
    m->p = buf;                                                             \
    m->trans = CblasNoTrans;                                                \
    m->ld = (int)MAX(cols, 1);                                              \
}
TRN_MAT_FN(trn_mat, float, NISA_F32, TrnMat)
TRN_MAT_FN(trn_mat_f64, double, NISA_F64, TrnMatF64)

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

/*
 * dst = t (a dense tile: float @t, or double @td; or 0) + bias + (dst if
 * @acc), over the block. float32 throughout and no @acc: in float32 (a sum
 * of two floats rounded once is the double sum rounded), through float
 * buffers in @x and @y.
 */
static void trn_epilogue_any(const TrnView *dst, const TrnView *bias, bool acc,
                             const float *t, const double *td, double *x,
                             double *y)
{
    if (dst->dtype == NISA_F32 && !acc && (!bias || bias->dtype == NISA_F32)) {
        float *xf = (float *)x, *yf = (float *)y;

        for (uint64_t s = 0; s < dst->numel; s += TRN_CHUNK_ELEMS) {
            uint64_t n = MIN(TRN_CHUNK_ELEMS, dst->numel - s);

            for (uint64_t j = 0; j < n; j++) {
                xf[j] = t ? t[s + j] : 0.0f;
            }
            if (bias) {
                trn_gather_f32(bias, s, n, yf);
                for (uint64_t j = 0; j < n; j++) {
                    xf[j] += yf[j];
                }
            }
            trn_scatter_f32(dst, s, n, xf);
        }
        return;
    }
    for (uint64_t s = 0; s < dst->numel; s += TRN_CHUNK_ELEMS) {
        uint64_t n = MIN(TRN_CHUNK_ELEMS, dst->numel - s);

        for (uint64_t j = 0; j < n; j++) {
            x[j] = t ? t[s + j] : td ? td[s + j] : 0;
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

static void trn_epilogue(const TrnView *dst, const TrnView *bias, bool acc,
                         const float *t, double *x, double *y)
{
    trn_epilogue_any(dst, bias, acc, t, NULL, x, y);
}

/*
 * trn_matmul_tile() for a float64 destination: each operand converted to
 * float64 (a float64 one used in place), dgemm, products accumulated in
 * float64, then the epilogue.
 */
static uint32_t trn_matmul_tile_f64(TrnKernel *k, const TrnView *ab,
                                    const TrnView *bb, const TrnView *cb,
                                    const TrnView *biasb, bool acc,
                                    uint64_t m0, uint64_t n0, uint64_t m,
                                    uint64_t n, uint64_t K, TrnTiles *t)
{
    TrnView cblk = trn_block(cb, m0, n0, m, n);
    TrnView bblk = biasb ? trn_block(biasb, m0, n0, m, n) : cblk;

    for (uint64_t k0 = 0; k0 < K; k0 += TRN_TILE) {
        uint64_t kk = MIN(TRN_TILE, K - k0);
        TrnMatF64 am, bm;

        if (k && trn_tick(k, m * n * kk)) {
            return NISA_ERR_ABORTED;
        }
        trn_mat_f64(ab, m0, k0, m, kk, t->d.a, &am);
        trn_mat_f64(bb, k0, n0, kk, n, t->d.b, &bm);
        cblas_dgemm(CblasRowMajor, am.trans, bm.trans, (int)m, (int)n,
                    (int)kk, 1.0, am.p, am.ld, bm.p, bm.ld, k0 ? 1.0 : 0.0,
                    t->d.c, (int)n);
    }
    if (K == 0 && k && trn_tick(k, m * n)) {
        return NISA_ERR_ABORTED;
    }
    trn_epilogue_any(&cblk, biasb ? &bblk : NULL, acc, NULL,
                     K ? t->d.c : NULL, t->x, t->y);
    return NISA_ERR_NONE;
}

/*
 * One (m x n) output tile at (@m0, @n0) of one batch entry: the inner
 * dimension in steps of TRN_TILE, each one bounded sgemm call, with a
 * check for a reset between them (none with a NULL @k: a chunk of
 * trn_pool_run(), bounded as a whole).
 */
static uint32_t trn_matmul_tile(TrnKernel *k, const TrnView *ab,
                                const TrnView *bb, const TrnView *cb,
                                const TrnView *biasb, bool acc, bool direct,
                                uint64_t m0, uint64_t n0, uint64_t m,
                                uint64_t n, uint64_t K, TrnTiles *t)
{
    TrnView cblk, bblk;
    float *out = t->f.c;
    int ldc = (int)n;
    float beta = 0.0f;

    if (cb->dtype == NISA_F64) {
        return trn_matmul_tile_f64(k, ab, bb, cb, biasb, acc, m0, n0, m, n,
                                   K, t);
    }
    cblk = trn_block(cb, m0, n0, m, n);
    bblk = biasb ? trn_block(biasb, m0, n0, m, n) : cblk;
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
        return k && trn_tick(k, m * n) ? NISA_ERR_ABORTED : NISA_ERR_NONE;
    }
    for (uint64_t k0 = 0; k0 < K; k0 += TRN_TILE) {
        uint64_t kk = MIN(TRN_TILE, K - k0);
        TrnMat am, bm;

        if (k && trn_tick(k, m * n * kk)) {
            return NISA_ERR_ABORTED;
        }
        trn_mat(ab, m0, k0, m, kk, t->f.a, &am);
        trn_mat(bb, k0, n0, kk, n, t->f.b, &bm);
        trn_sgemm(am.trans, bm.trans, m, n, kk, am.p, am.ld, bm.p, bm.ld,
                  beta, out, ldc);
        beta = 1.0f;
    }
    if (!direct) {
        trn_epilogue(&cblk, biasb ? &bblk : NULL, acc, t->f.c, t->x, t->y);
    }
    return NISA_ERR_NONE;
}

/* A MATMUL's operands, one batch entry at a time. */
typedef struct TrnMatmul {
    TrnView a, b, c, bias;
    bool has_bias, acc;
    uint64_t M, N, K;
    /* The parallel split: chunks of tm x tn outputs, mt x nt per entry. */
    uint64_t tm, tn, mt, nt;
    TrnTiles **tiles;     /* per worker, allocated by it */
} TrnMatmul;

typedef struct TrnMatmulBatch {
    TrnView a, b, c, bias;
    bool direct;          /* the product goes straight into c */
} TrnMatmulBatch;

static void trn_matmul_batch(const TrnMatmul *mm, uint64_t b0, uint64_t b1,
                             TrnMatmulBatch *e)
{
    e->c = trn_batch(&mm->c, b0, b1);
    e->a = trn_batch(&mm->a, b0, b1);
    e->b = trn_batch(&mm->b, b0, b1);
    e->bias = mm->has_bias ? trn_batch(&mm->bias, b0, b1) : e->c;
    e->direct = mm->c.dtype == NISA_F32 && e->c.stride[3] == 1 &&
                e->c.stride[2] >= (int64_t)mm->N &&
                e->c.stride[2] <= INT_MAX &&
                !trn_overlap(&e->c, &e->a) && !trn_overlap(&e->c, &e->b) &&
                !(mm->has_bias && trn_overlap(&e->c, &e->bias));
}

static uint32_t trn_matmul_serial(TrnKernel *k, const TrnMatmul *mm)
{
    g_autofree TrnTiles *tiles = g_new(TrnTiles, 1);

    for (uint64_t b0 = 0; b0 < mm->c.shape[0]; b0++) {
        for (uint64_t b1 = 0; b1 < mm->c.shape[1]; b1++) {
            TrnMatmulBatch e;

            trn_matmul_batch(mm, b0, b1, &e);
            for (uint64_t m0 = 0; m0 < mm->M; m0 += TRN_TILE) {
                for (uint64_t n0 = 0; n0 < mm->N; n0 += TRN_TILE) {
                    uint32_t err = trn_matmul_tile(
                        k, &e.a, &e.b, &e.c, mm->has_bias ? &e.bias : NULL,
                        mm->acc, e.direct, m0, n0, MIN(TRN_TILE, mm->M - m0),
                        MIN(TRN_TILE, mm->N - n0), mm->K, tiles);

                    if (err) {
                        return err;
                    }
                }
            }
        }
    }
    return NISA_ERR_NONE;
}

/* Chunk @i of the parallel split, on worker @w. */
static void trn_matmul_chunk(void *arg, unsigned w, uint64_t i)
{
    TrnMatmul *mm = arg;
    uint64_t per = mm->mt * mm->nt, entry = i / per, r = i % per;
    uint64_t m0 = r / mm->nt * mm->tm, n0 = r % mm->nt * mm->tn;
    TrnMatmulBatch e;

    if (!mm->tiles[w]) {
        mm->tiles[w] = g_new(TrnTiles, 1);
    }
    trn_matmul_batch(mm, entry / mm->c.shape[1], entry % mm->c.shape[1], &e);
    trn_matmul_tile(NULL, &e.a, &e.b, &e.c, mm->has_bias ? &e.bias : NULL,
                    mm->acc, e.direct, m0, n0, MIN(mm->tm, mm->M - m0),
                    MIN(mm->tn, mm->N - n0), mm->K, mm->tiles[w]);
}

/*
 * Split the product into chunks: output blocks of about TRN_CHUNK_MACS
 * multiply-adds, and at least TRN_CHUNK_COUNT of them, halving the longer
 * side down to TRN_CHUNK_MIN. The split does not depend on the threads, so
 * neither do the numbers (sgemm's rounding depends on the block shapes).
 * False if the product stays in TRN_TILE tiles on the worker: small, a
 * chunk would exceed TRN_CHUNK_MAX (a long inner dimension, where the
 * serial path checks for a reset inside the tile), or the destination
 * overlaps a source (chunks would read what others wrote).
 */
static bool trn_matmul_split(TrnMatmul *mm)
{
    uint64_t entries = mm->c.shape[0] * mm->c.shape[1];

    if (entries * mm->M * mm->N * mm->K < TRN_SGEMM_SMALL ||
        trn_overlap(&mm->c, &mm->a) || trn_overlap(&mm->c, &mm->b) ||
        (mm->has_bias && trn_overlap(&mm->c, &mm->bias))) {
        return false;
    }
    mm->tm = MIN(mm->M, TRN_TILE);
    mm->tn = MIN(mm->N, TRN_TILE);
    for (;;) {
        mm->mt = DIV_ROUND_UP(mm->M, mm->tm);
        mm->nt = DIV_ROUND_UP(mm->N, mm->tn);
        if ((mm->tm * mm->tn * mm->K <= TRN_CHUNK_MACS &&
             entries * mm->mt * mm->nt >= TRN_CHUNK_COUNT) ||
            (mm->tm <= TRN_CHUNK_MIN && mm->tn <= TRN_CHUNK_MIN)) {
            break;
        }
        if (mm->tn >= mm->tm) {
            mm->tn = ROUND_UP(DIV_ROUND_UP(mm->tn, 2), 16);
        } else {
            mm->tm = ROUND_UP(DIV_ROUND_UP(mm->tm, 2), 16);
        }
    }
    return mm->tm * mm->tn * mm->K <= TRN_CHUNK_MAX;
}

uint32_t trn_insn_matmul(TrnKernel *k, const struct nisa_insn *in)
{
    uint32_t flags = le32_to_cpu(in->flags), err;
    TrnMatmul mm = {
        .acc = flags & NISA_IF_ACCUMULATE,
        .has_bias = flags & NISA_IF_BIAS,
    };
    unsigned workers = trn_pool_workers(k->s->pool);

    if (flags & ~(NISA_IF_ACCUMULATE | NISA_IF_BIAS) || in->subop) {
        return trn_bad_insn(k, "bad matmul flags");
    }
    err = trn_view_init(k, &in->src[0], TRN_READ, &mm.a);
    if (!err) {
        err = trn_view_init(k, &in->src[1], TRN_READ, &mm.b);
    }
    if (!err) {
        err = trn_view_init(k, &in->dst,
                            TRN_WRITE | (mm.acc ? TRN_READ : 0), &mm.c);
    }
    if (!err && mm.has_bias) {
        err = trn_view_init(k, &in->src[2], TRN_READ, &mm.bias);
        if (!err && !trn_same_shape(&mm.bias, &mm.c)) {
            err = trn_bad_insn(k, "bias shape differs from the destination's");
        }
    }
    if (err) {
        return err;
    }
    mm.M = mm.c.shape[2];
    mm.N = mm.c.shape[3];
    mm.K = mm.a.shape[3];
    if (mm.a.shape[2] != mm.M || mm.b.shape[2] != mm.K ||
        mm.b.shape[3] != mm.N || mm.a.shape[0] != mm.c.shape[0] ||
        mm.a.shape[1] != mm.c.shape[1] || mm.b.shape[0] != mm.c.shape[0] ||
        mm.b.shape[1] != mm.c.shape[1]) {
        return trn_bad_insn(k, "matmul shapes do not match");
    }
    if (!mm.c.numel) {
        return NISA_ERR_NONE;
    }
    if (!trn_matmul_split(&mm)) {
        return trn_matmul_serial(k, &mm);
    }
    mm.tiles = g_new0(TrnTiles *, workers);
    err = trn_pool_run(k, mm.c.shape[0] * mm.c.shape[1] * mm.mt * mm.nt,
                       trn_matmul_chunk, &mm);
    for (unsigned w = 0; w < workers; w++) {
        g_free(mm.tiles[w]);
    }
    g_free(mm.tiles);
    return err;
}

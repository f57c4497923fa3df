/*
 * Virtual Trainium accelerator: FFT along an axis (docs/hardware.md,
 * "FFT"; NISA_FFT_OPS in isa/neuron_isa.h). Every index of the other axes
 * is one line; lines are gathered into contiguous double buffers, a batch
 * at a time, transformed by FFTW in double (any length in O(n log n):
 * mixed radix, Rader and Bluestein for primes), multiplied by @scalar and
 * scattered back, each part rounded once to float32. The operands' own
 * strides never reach FFTW, so any layout works.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/host-utils.h"
#include "qemu/atomic.h"
#include "qemu/thread.h"
#include <fftw3.h>
#include "trainium-isa.h"
#include "trainium-iter.h"
#include "trace.h"

/* Elements gathered per FFTW call, about: enough to amortise the call. */
#define TRN_FFT_BATCH_ELEMS (1u << 15)

/*
 * An FFTW call of more work than this (5 n log2 n, about 2^17 elements
 * and up) runs on a thread of its own while the worker watches for a
 * reset: FFTW cannot be interrupted, and a line of 2^26 elements takes
 * seconds, beyond the bound a reset may wait (docs/hardware.md, "Reset").
 */
#define TRN_FFT_ASYNC_WORK (1ull << 24)

/*
 * Plans cached per (subop, n, log2 of the lines per call); past this many
 * a plan is made for the call and destroyed after it, so that a guest
 * cycling through lengths cannot grow the cache without bound.
 */
#define TRN_FFT_MAX_PLANS 256

/* One FFT, its operands checked. */
typedef struct TrnFft {
    unsigned sub;
    double scale;
    TrnView src, dst;
    unsigned axis;          /* right-aligned dimension of the axis */
    uint64_t n;             /* the transform's length */
    uint64_t nin, nout;     /* elements per line in FFTW's buffers */
    uint64_t ndst;          /* dst's extent along the axis */
    uint64_t nlines;
} TrnFft;

/*
 * FFTW's planner is not thread-safe (fftw_execute_*() is): every plan is
 * made and destroyed under this lock. The cached plans live until QEMU
 * exits. (A static GMutex needs no initialisation.)
 */
static GMutex trn_fft_lock;
static GHashTable *trn_fft_plans;   /* guint64 key -> fftw_plan */

static fftw_plan trn_fft_make_plan(unsigned sub, int n, int howmany,
                                   void *in, void *out)
{
    switch (sub) {
    case NISA_FFT_FORWARD:
    case NISA_FFT_BACKWARD:
        return fftw_plan_many_dft(1, &n, howmany, in, NULL, 1, n, out, NULL,
                                  1, n, sub == NISA_FFT_FORWARD ?
                                  FFTW_FORWARD : FFTW_BACKWARD,
                                  FFTW_ESTIMATE);
    case NISA_FFT_R2C:
        return fftw_plan_many_dft_r2c(1, &n, howmany, in, NULL, 1, n, out,
                                      NULL, 1, n / 2 + 1, FFTW_ESTIMATE);
    default:
        return fftw_plan_many_dft_c2r(1, &n, howmany, in, NULL, 1, n / 2 + 1,
                                      out, NULL, 1, n, FFTW_ESTIMATE);
    }
}

/*
 * A plan for @howmany (a power of two) lines of @f, made on the buffers
 * it will run on (fftw_malloc()'d: every such buffer has the alignment
 * the plan assumes). *@cached false: the caller destroys it.
 */
static fftw_plan trn_fft_plan(const TrnFft *f, uint64_t howmany, void *in,
                              void *out, bool *cached)
{
    guint64 key = ((guint64)f->sub << 40) | ((guint64)ctz64(howmany) << 32) |
                  f->n;
    fftw_plan p;

    g_mutex_lock(&trn_fft_lock);
    if (!trn_fft_plans) {
        trn_fft_plans = g_hash_table_new_full(g_int64_hash, g_int64_equal,
                                              g_free, NULL);
    }
    p = g_hash_table_lookup(trn_fft_plans, &key);
    *cached = true;
    if (!p) {
        p = trn_fft_make_plan(f->sub, f->n, howmany, in, out);
        if (p && g_hash_table_size(trn_fft_plans) < TRN_FFT_MAX_PLANS) {
            g_hash_table_insert(trn_fft_plans, g_memdup2(&key, sizeof(key)),
                                p);
        } else {
            *cached = false;
        }
        trace_trainium_fft_plan(f->sub, f->n, howmany, *cached);
    }
    g_mutex_unlock(&trn_fft_lock);
    return p;
}

static void trn_fft_drop_plan(fftw_plan p, bool cached)
{
    if (p && !cached) {
        g_mutex_lock(&trn_fft_lock);
        fftw_destroy_plan(p);
        g_mutex_unlock(&trn_fft_lock);
    }
}

/*
 * FFTW's buffers and the call on them, shared by the worker and, for a
 * long call, the thread running it: the last of the two to let go frees
 * them, so that a worker giving up on a reset leaves the call to finish
 * on buffers nobody else touches.
 */
typedef struct TrnFftCall {
    int refs;
    uint64_t bytes;         /* of in and out */
    QemuSemaphore done;
    unsigned sub;
    fftw_plan plan;
    bool cached;
    double *in, *out;
} TrnFftCall;

/*
 * Bytes of FFTW buffers alive, on every card: a call abandoned on a reset
 * keeps its buffers until it ends, and a long one may take 2 GiB
 * (NISA_FFT_MAX_LEN), so a new one waits while they would exceed
 * TRN_FFT_MAX_LIVE (trn_fft_wait_memory()).
 */
#define TRN_FFT_MAX_LIVE (4ull << 30)
static uint64_t trn_fft_live;

static void trn_fft_call_unref(TrnFftCall *c)
{
    if (qatomic_fetch_dec(&c->refs) == 1) {
        qatomic_sub(&trn_fft_live, c->bytes);
        fftw_free(c->in);
        fftw_free(c->out);
        qemu_sem_destroy(&c->done);
        g_free(c);
    }
}

static void trn_fft_execute(TrnFftCall *c)
{
    switch (c->sub) {
    case NISA_FFT_FORWARD:
    case NISA_FFT_BACKWARD:
        fftw_execute_dft(c->plan, (fftw_complex *)c->in,
                         (fftw_complex *)c->out);
        break;
    case NISA_FFT_R2C:
        fftw_execute_dft_r2c(c->plan, c->in, (fftw_complex *)c->out);
        break;
    default:
        fftw_execute_dft_c2r(c->plan, (fftw_complex *)c->in, c->out);
        break;
    }
    trn_fft_drop_plan(c->plan, c->cached);
}

static void *trn_fft_thread(void *opaque)
{
    TrnFftCall *c = opaque;

    trn_fft_execute(c);
    qemu_sem_post(&c->done);
    trn_fft_call_unref(c);
    return NULL;
}

/*
 * Run the call, on a thread of its own when it is long, checking for a
 * reset every millisecond meanwhile: NISA_ERR_ABORTED if there is one
 * (the call then finishes unwatched and frees what it holds).
 */
static uint32_t trn_fft_call_run(TrnKernel *k, TrnFftCall *c, uint64_t n,
                                 uint64_t work)
{
    QemuThread thread;

    if (work < TRN_FFT_ASYNC_WORK) {
        trn_fft_execute(c);
        return NISA_ERR_NONE;
    }
    qatomic_inc(&c->refs);
    qemu_thread_create(&thread, "trn-fft", trn_fft_thread, c,
                       QEMU_THREAD_DETACHED);
    while (qemu_sem_timedwait(&c->done, 1) < 0) {
        if (trn_queue_aborting(k->q)) {
            trace_trainium_fft_abandon(k->q->idx, n);
            return NISA_ERR_ABORTED;
        }
    }
    return NISA_ERR_NONE;
}

/* Element offset (in elements) of line @line's first element in @v. */
static int64_t trn_fft_line_base(const TrnFft *f, const TrnView *v,
                                 uint64_t line)
{
    int64_t e = 0;

    for (unsigned d = NISA_MAX_DIMS; d-- > 0;) {
        if (d == f->axis) {
            continue;
        }
        e += (int64_t)(line % v->shape[d]) * v->stride[d];
        line /= v->shape[d];
    }
    return e;
}

static inline uint8_t *trn_fft_at(const TrnFft *f, const TrnView *v,
                                  int64_t base, uint64_t i)
{
    return v->data +
           (base + (int64_t)i * v->stride[f->axis]) * (int64_t)v->esize;
}

/* Elements a line's gather or scatter moves between checks for a reset. */
#define TRN_FFT_MOVE_PIECE (1u << 16)

/*
 * Line @line of src into @buf: f->nin reals or complex numbers. True if
 * the queue is being reset meanwhile (a line may be 2^26 elements).
 */
static bool trn_fft_gather(TrnKernel *k, const TrnFft *f, uint64_t line,
                           double *buf)
{
    int64_t base = trn_fft_line_base(f, &f->src, line);

    for (uint64_t i = 0; i < f->nin; i++) {
        const uint8_t *p = trn_fft_at(f, &f->src, base, i);

        if (k && i % TRN_FFT_MOVE_PIECE == TRN_FFT_MOVE_PIECE - 1 &&
            trn_tick(k, TRN_FFT_MOVE_PIECE)) {
            return true;
        }
        if (f->sub == NISA_FFT_R2C) {
            buf[i] = trn_load(NISA_F32, p);
        } else {
            buf[2 * i] = trn_load(NISA_F32, p);
            buf[2 * i + 1] = trn_load(NISA_F32, p + 4);
        }
    }
    if (f->sub == NISA_FFT_C2R) {
        /*
         * A real signal's bin 0 and Nyquist bin are real: their imaginary
         * parts are ignored (as FFTW and pocketfft ignore them), set to 0
         * here so that the result does not depend on what FFTW does.
         */
        buf[1] = 0.0;
        if (f->n % 2 == 0) {
            buf[2 * (f->n / 2) + 1] = 0.0;
        }
    }
    return false;
}

/*
 * FFTW's line @buf, times the scale, into line @line of dst. True if the
 * queue is being reset meanwhile (the line is then written in part).
 */
static bool trn_fft_scatter(TrnKernel *k, const TrnFft *f, uint64_t line,
                            const double *buf)
{
    int64_t base = trn_fft_line_base(f, &f->dst, line);
    double s = f->scale;

    for (uint64_t i = 0; i < f->ndst; i++) {
        uint8_t *p = trn_fft_at(f, &f->dst, base, i);
        double re, im;

        if (k && i % TRN_FFT_MOVE_PIECE == TRN_FFT_MOVE_PIECE - 1 &&
            trn_tick(k, TRN_FFT_MOVE_PIECE)) {
            return true;
        }
        if (f->sub == NISA_FFT_C2R) {
            trn_store(NISA_F32, p, s * buf[i]);
            continue;
        }
        if (i < f->nout) {
            re = buf[2 * i];
            im = buf[2 * i + 1];
        } else {
            /* R2C, both halves: X[k] = conj(X[n - k]) for a real signal. */
            re = buf[2 * (f->n - i)];
            im = -buf[2 * (f->n - i) + 1];
        }
        trn_store(NISA_F32, p, s * re);
        trn_store(NISA_F32, p + 4, s * im);
    }
    return false;
}

/* Doubles per line element in FFTW's input and output buffers. */
static unsigned trn_fft_in_width(unsigned sub)
{
    return sub == NISA_FFT_R2C ? 1 : 2;
}

static unsigned trn_fft_out_width(unsigned sub)
{
    return sub == NISA_FFT_C2R ? 1 : 2;
}

/* About 5 n log2 n operations for a line of n, in elementwise elements. */
static uint64_t trn_fft_line_work(uint64_t n)
{
    return n * (5 * (64 - clz64(n | 1)));
}

/*
 * Lines [@first, @first + @howmany) through one FFTW call. @k NULL: on a
 * helper thread of trn_fft_shared(), whose lines are short (no checks for
 * a reset within them, no call of its own thread) and whose errors the
 * caller logs.
 */
static uint32_t trn_fft_batch(TrnKernel *k, const TrnFft *f, uint64_t first,
                              uint64_t howmany, TrnFftCall *c)
{
    uint64_t win = f->nin * trn_fft_in_width(f->sub);
    uint64_t wout = f->nout * trn_fft_out_width(f->sub);
    uint64_t work = howmany * trn_fft_line_work(f->n);
    uint32_t err;

    for (uint64_t l = 0; l < howmany; l++) {
        if (trn_fft_gather(k, f, first + l, c->in + l * win)) {
            return NISA_ERR_ABORTED;
        }
    }
    c->plan = trn_fft_plan(f, howmany, c->in, c->out, &c->cached);
    if (!c->plan) {
        return k ? trn_bad_insn(k, "FFT: FFTW has no plan for this length")
                 : NISA_ERR_BAD_INSN;
    }
    if (!k) {
        trn_fft_execute(c);
    } else if (trn_tick(k, work)) {
        trn_fft_drop_plan(c->plan, c->cached);
        return NISA_ERR_ABORTED;
    } else {
        err = trn_fft_call_run(k, c, f->n, work);
        if (err) {
            return err;
        }
    }
    for (uint64_t l = 0; l < howmany; l++) {
        if (trn_fft_scatter(k, f, first + l, c->out + l * wout)) {
            return NISA_ERR_ABORTED;
        }
    }
    return NISA_ERR_NONE;
}

/* Lines [@first, @end) in calls of @batch lines, the tail in fewer. */
static uint32_t trn_fft_lines(TrnKernel *k, const TrnFft *f, uint64_t first,
                              uint64_t end, uint64_t batch, TrnFftCall *c)
{
    uint32_t err = NISA_ERR_NONE;

    while (!err && first < end) {
        while (batch > end - first) {
            batch /= 2;         /* the tail: smaller powers of two */
        }
        err = trn_fft_batch(k, f, first, batch, c);
        first += batch;
    }
    return err;
}

/* Buffers for calls of @batch lines; NULL if the host has no memory. */
static TrnFftCall *trn_fft_call_new(const TrnFft *f, uint64_t batch)
{
    TrnFftCall *c = g_new0(TrnFftCall, 1);

    uint64_t in = batch * f->nin * trn_fft_in_width(f->sub) * sizeof(double);
    uint64_t out = batch * f->nout * trn_fft_out_width(f->sub) *
                   sizeof(double);

    c->refs = 1;
    c->sub = f->sub;
    c->bytes = in + out;
    qatomic_add(&trn_fft_live, c->bytes);
    qemu_sem_init(&c->done, 0);
    c->in = fftw_malloc(in);
    c->out = fftw_malloc(out);
    if (!c->in || !c->out) {
        trn_fft_call_unref(c);
        return NULL;
    }
    return c;
}

/*
 * Many short lines are shared by the card's threads (trn_pool_run()),
 * @batch lines a piece, each worker with buffers of its own. The pieces
 * depend on the shape alone and every line is computed alike, so the
 * results are the same bits with any number of threads.
 */
typedef struct TrnFftShare {
    const TrnFft *f;
    uint64_t batch;
    TrnFftCall **calls;     /* per worker, made by the worker */
    uint32_t err;           /* the first error of a piece (atomic) */
} TrnFftShare;

static void trn_fft_piece(void *arg, unsigned w, uint64_t i)
{
    TrnFftShare *sh = arg;
    uint64_t first = i * sh->batch;
    uint32_t err;

    if (!sh->calls[w]) {
        sh->calls[w] = trn_fft_call_new(sh->f, sh->batch);
    }
    err = sh->calls[w] ? trn_fft_lines(NULL, sh->f, first,
                                       MIN(first + sh->batch, sh->f->nlines),
                                       sh->batch, sh->calls[w])
                       : NISA_ERR_BAD_INSN;
    if (err) {
        qatomic_cmpxchg(&sh->err, NISA_ERR_NONE, err);
    }
}

static uint32_t trn_fft_shared(TrnKernel *k, const TrnFft *f, uint64_t batch)
{
    unsigned workers = trn_pool_workers(k->s->pool);
    TrnFftShare sh = { f, batch, g_new0(TrnFftCall *, workers) };
    uint32_t err;

    err = trn_pool_run(k, DIV_ROUND_UP(f->nlines, batch), trn_fft_piece, &sh);
    for (unsigned w = 0; w < workers; w++) {
        if (sh.calls[w]) {
            trn_fft_call_unref(sh.calls[w]);
        }
    }
    g_free(sh.calls);
    if (!err && sh.err) {
        err = trn_bad_insn(k, "FFT: no host memory or no FFTW plan");
    }
    return err;
}

/*
 * Wait, checking for a reset every millisecond, until @bytes more of
 * buffers fit under TRN_FFT_MAX_LIVE, or none are alive (one call of any
 * length always runs).
 */
static uint32_t trn_fft_wait_memory(TrnKernel *k, uint64_t bytes)
{
    for (;;) {
        uint64_t live = qatomic_read(&trn_fft_live);

        if (!live || live + bytes <= TRN_FFT_MAX_LIVE) {
            return NISA_ERR_NONE;
        }
        if (trn_queue_aborting(k->q)) {
            return NISA_ERR_ABORTED;
        }
        g_usleep(1000);
    }
}

static uint32_t trn_fft_run(TrnKernel *k, const TrnFft *f)
{
    uint64_t per = MAX(f->nin, f->nout), batch = 1;
    TrnFftCall *c;
    uint32_t err;

    /* A power of two of lines per call: few distinct plans to cache. */
    while (batch * 2 * per <= TRN_FFT_BATCH_ELEMS && batch * 2 <= f->nlines) {
        batch *= 2;
    }
    if (per <= TRN_FFT_BATCH_ELEMS && f->nlines > batch &&
        f->nlines * per >= TRN_ITER_SHARE_MIN &&
        trn_strides_nest(f->dst.shape, f->dst.stride, NISA_MAX_DIMS)) {
        return trn_fft_shared(k, f, batch);
    }
    err = trn_fft_wait_memory(k, batch * per * 4 * sizeof(double));
    if (err) {
        return err;
    }
    c = trn_fft_call_new(f, batch);
    if (!c) {
        return trn_bad_insn(k, "FFT: no host memory for lines this long");
    }
    err = trn_fft_lines(k, f, 0, f->nlines, batch, c);
    trn_fft_call_unref(c);
    return err;
}

/*
 * R2C of an empty signal into one bin per line (n / 2 + 1 is 1): each
 * bin is a sum of no terms, 0.
 */
static uint32_t trn_fft_empty_sum(TrnKernel *k, const TrnFft *f)
{
    for (uint64_t l = 0; l < f->nlines; l++) {
        uint8_t *p = trn_fft_at(f, &f->dst, trn_fft_line_base(f, &f->dst, l),
                                0);

        if (trn_tick(k, 1)) {
            return NISA_ERR_ABORTED;
        }
        trn_store(NISA_F32, p, 0.0);
        trn_store(NISA_F32, p + 4, 0.0);
    }
    return NISA_ERR_NONE;
}

/* The operands' dtypes, as the subop wants them. */
static uint32_t trn_fft_check_dtypes(TrnKernel *k, const TrnFft *f)
{
    uint8_t want_src = f->sub == NISA_FFT_R2C ? NISA_F32 : NISA_C64;
    uint8_t want_dst = f->sub == NISA_FFT_C2R ? NISA_F32 : NISA_C64;

    if (f->src.dtype != want_src) {
        return trn_bad_insn(k, f->sub == NISA_FFT_R2C ?
                            "FFT R2C: src0 is not F32" :
                            "FFT: src0 is not C64");
    }
    if (f->dst.dtype != want_dst) {
        return trn_bad_insn(k, f->sub == NISA_FFT_C2R ?
                            "FFT C2R: dst is not F32" :
                            "FFT: dst is not C64");
    }
    return NISA_ERR_NONE;
}

/*
 * The extents along the axis: n, and the elements FFTW reads and writes
 * per line; every other extent the same in src0 and dst.
 */
static uint32_t trn_fft_check_shapes(TrnKernel *k, TrnFft *f)
{
    uint64_t ns = f->src.shape[f->axis], nd = f->dst.shape[f->axis];

    for (unsigned d = 0; d < NISA_MAX_DIMS; d++) {
        if (d != f->axis && f->src.shape[d] != f->dst.shape[d]) {
            return trn_bad_insn(k, "FFT: src0 and dst differ off the axis");
        }
    }
    f->n = f->sub == NISA_FFT_C2R ? nd : ns;
    f->ndst = nd;
    if (f->n > NISA_FFT_MAX_LEN) {
        return trn_bad_insn(k, "FFT: longer than NISA_FFT_MAX_LEN");
    }
    switch (f->sub) {
    case NISA_FFT_FORWARD:
    case NISA_FFT_BACKWARD:
        if (nd != ns) {
            return trn_bad_insn(k, "FFT: dst's extent along the axis is "
                                "not src0's");
        }
        f->nin = f->nout = f->n;
        break;
    case NISA_FFT_R2C:
        if (nd != f->n / 2 + 1 && nd != f->n) {
            return trn_bad_insn(k, "FFT R2C: dst's extent along the axis "
                                "is neither n / 2 + 1 nor n");
        }
        f->nin = f->n;
        f->nout = f->n / 2 + 1;
        break;
    default:
        if (f->n && ns < f->n / 2 + 1) {
            return trn_bad_insn(k, "FFT C2R: src0's extent along the axis "
                                "is less than n / 2 + 1");
        }
        f->nin = f->n / 2 + 1;
        f->nout = f->n;
        break;
    }
    return NISA_ERR_NONE;
}

/*
 * dst may be src0 itself (FORWARD or BACKWARD in place: each batch of
 * lines is read before it is written), but no other overlap: a line
 * written would be read later as another line's input.
 */
static bool trn_fft_overlap_ok(const TrnFft *f)
{
    return !trn_overlap(&f->dst, &f->src) ||
           (f->dst.data == f->src.data && f->dst.dtype == f->src.dtype &&
            trn_same_shape(&f->dst, &f->src) &&
            !memcmp(f->dst.stride, f->src.stride, sizeof(f->dst.stride)) &&
            trn_strides_nest(f->dst.shape, f->dst.stride, NISA_MAX_DIMS));
}

uint32_t trn_insn_fft(TrnKernel *k, const struct nisa_insn *in)
{
    static const struct nisa_tensor zero;
    unsigned ndim = in->src[0].ndim;
    int32_t axis = (int32_t)le32_to_cpu(in->axis);
    TrnFft f = { .sub = le16_to_cpu(in->subop) };
    uint32_t err;

    if (f.sub >= NISA_NUM_FFT) {
        return trn_bad_insn(k, "FFT: unknown subop");
    }
    if (in->flags || in->alpha || memcmp(&in->src[1], &zero, sizeof(zero)) ||
        memcmp(&in->src[2], &zero, sizeof(zero))) {
        return trn_bad_insn(k, "FFT: flags, alpha, src1 or src2 set");
    }
    f.scale = trn_f64(le64_to_cpu(in->scalar));
    err = trn_view_init(k, &in->src[0], TRN_READ, &f.src);
    if (!err) {
        err = trn_view_init(k, &in->dst, TRN_WRITE, &f.dst);
    }
    if (!err) {
        err = trn_fft_check_dtypes(k, &f);
    }
    if (err) {
        return err;
    }
    if (in->dst.ndim != ndim) {
        return trn_bad_insn(k, "FFT: dst's ndim is not src0's");
    }
    /* As SORT and SCAN: a 0-d operand is one line of one element. */
    if (ndim == 0 && (axis == 0 || axis == -1)) {
        axis = -1;
    } else if (axis < -(int32_t)ndim || axis >= (int32_t)ndim) {
        return trn_bad_insn(k, "FFT: axis out of range");
    }
    f.axis = ndim == 0 ? NISA_MAX_DIMS - 1 :
             NISA_MAX_DIMS - ndim + (axis < 0 ? axis + ndim : axis);
    err = trn_fft_check_shapes(k, &f);
    if (err) {
        return err;
    }
    if (!trn_fft_overlap_ok(&f)) {
        return trn_bad_insn(k, "FFT: dst overlaps src0 (but as src0 itself)");
    }
    f.nlines = 1;
    for (unsigned d = 0; d < NISA_MAX_DIMS; d++) {
        if (d != f.axis) {
            f.nlines *= f.dst.shape[d];
        }
    }
    if (!f.dst.numel) {
        return NISA_ERR_NONE;   /* empty: nothing to do */
    }
    if (!f.n) {
        return trn_fft_empty_sum(k, &f);
    }
    return trn_fft_run(k, &f);
}

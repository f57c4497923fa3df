/*
 * Virtual Trainium accelerator: the card's helper threads, which share the
 * chunks of one large instruction with the queue worker that runs it.
 *
 * A job is @n independent chunks, each bounded work. The worker publishes
 * it and takes chunks itself; the helpers take the others as they come,
 * one at a time from a shared counter. So a helper that shares its host
 * core with a busy vCPU takes fewer chunks instead of holding the whole
 * instruction back, as an even split between threads does (OpenBLAS's):
 * the instruction ends at most one chunk after the worker's own last one.
 *
 * Reset and pause are checked by the worker between its chunks. On either
 * the job is cancelled: the helpers take no new chunk, the worker waits
 * for the ones they are running, and the chunks done so far are a prefix
 * [0, done) of the job (chunks are taken in order and every chunk taken is
 * finished). A pause then parks the worker as any instruction does
 * (trn_queue_aborting()); on resume the job goes on from @done. So
 * nothing writes device memory while the queue is parked, which migration
 * relies on.
 *
 * A helper that has run a job spins for TRN_POOL_SPIN_NS before it sleeps,
 * and so does the worker waiting for a busy helper: the next instruction
 * of a launch comes a few microseconds later, and a futex wake-up on a
 * loaded host takes longer than that (a shared 2^18-element BINARY then
 * ran on the worker alone, as the helper woke too late to take its half).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/processor.h"
#include "qemu/timer.h"
#include "trainium-isa.h"

#define TRN_POOL_SPIN_NS (50 * SCALE_US)

struct TrnPool {
    QemuMutex owner;      /* held by the worker whose job the pool runs */
    QemuMutex lock;       /* protects what follows, except @next */
    QemuCond work;        /* helpers wait here for a job or teardown */
    QemuCond done;        /* the worker waits here for busy helpers */
    unsigned nthreads;
    QemuThread *threads;
    /* Written under @lock; read without it (atomic) while spinning. */
    bool stop;
    bool open;            /* a job is published */
    uint64_t gen;         /* counts jobs, so a helper joins each one once */
    unsigned busy;        /* helpers inside the job */
    TrnChunkFn *fn;
    void *arg;
    uint64_t n;
    uint64_t next;        /* the next chunk to take (atomic) */
    bool cancel;          /* take no new chunk (atomic) */
};

typedef struct TrnHelper {
    TrnPool *p;
    unsigned id;          /* 1..nthreads; the worker is 0 */
} TrnHelper;

/* Take and run chunks of the published job until none is left. */
static void trn_pool_take(TrnPool *p, unsigned id)
{
    while (!qatomic_read(&p->cancel)) {
        uint64_t i = qatomic_fetch_inc(&p->next);

        if (i >= p->n) {
            break;
        }
        p->fn(p->arg, id, i);
    }
}

/* Has a helper that joined job @seen something to do? */
static bool trn_pool_called(TrnPool *p, uint64_t seen)
{
    return qatomic_read(&p->stop) ||
           (qatomic_read(&p->open) && qatomic_read(&p->gen) != seen);
}

/* Spin until @cond(@p, @arg) or TRN_POOL_SPIN_NS have passed. */
static void trn_pool_spin(TrnPool *p, bool (*cond)(TrnPool *, uint64_t),
                          uint64_t arg)
{
    int64_t end = get_clock() + TRN_POOL_SPIN_NS;

    while (!cond(p, arg) && get_clock() < end) {
        cpu_relax();
    }
}

static bool trn_pool_idle(TrnPool *p, uint64_t unused)
{
    return !qatomic_read(&p->busy);
}

static void *trn_pool_thread(void *opaque)
{
    TrnHelper *h = opaque;
    TrnPool *p = h->p;
    uint64_t seen = 0;

    qemu_mutex_lock(&p->lock);
    for (;;) {
        if (seen && !trn_pool_called(p, seen)) {
            qemu_mutex_unlock(&p->lock);
            trn_pool_spin(p, trn_pool_called, seen);
            qemu_mutex_lock(&p->lock);
        }
        while (!p->stop && !(p->open && p->gen != seen)) {
            qemu_cond_wait(&p->work, &p->lock);
        }
        if (p->stop) {
            break;
        }
        seen = p->gen;
        qatomic_set(&p->busy, p->busy + 1);
        qemu_mutex_unlock(&p->lock);
        trn_pool_take(p, h->id);
        qemu_mutex_lock(&p->lock);
        qatomic_set(&p->busy, p->busy - 1);
        if (!p->busy) {
            qemu_cond_signal(&p->done);
        }
    }
    qemu_mutex_unlock(&p->lock);
    g_free(h);
    return NULL;
}

TrnPool *trn_pool_new(const char *name, unsigned nthreads)
{
    TrnPool *p = g_new0(TrnPool, 1);

    qemu_mutex_init(&p->owner);
    qemu_mutex_init(&p->lock);
    qemu_cond_init(&p->work);
    qemu_cond_init(&p->done);
    p->nthreads = nthreads;
    p->threads = g_new0(QemuThread, nthreads);
    for (unsigned i = 0; i < nthreads; i++) {
        TrnHelper *h = g_new(TrnHelper, 1);
        g_autofree char *tname = g_strdup_printf("%s/h%u", name, i + 1);

        h->p = p;
        h->id = i + 1;
        qemu_thread_create(&p->threads[i], tname, trn_pool_thread, h,
                           QEMU_THREAD_JOINABLE);
    }
    return p;
}

void trn_pool_free(TrnPool *p)
{
    if (!p) {
        return;
    }
    qemu_mutex_lock(&p->lock);
    qatomic_set(&p->stop, true);
    qemu_cond_broadcast(&p->work);
    qemu_mutex_unlock(&p->lock);
    for (unsigned i = 0; i < p->nthreads; i++) {
        qemu_thread_join(&p->threads[i]);
    }
    g_free(p->threads);
    qemu_cond_destroy(&p->done);
    qemu_cond_destroy(&p->work);
    qemu_mutex_destroy(&p->lock);
    qemu_mutex_destroy(&p->owner);
    g_free(p);
}

unsigned trn_pool_workers(TrnPool *p)
{
    return p ? p->nthreads + 1 : 1;
}

/* Must the worker stop taking chunks (reset, teardown or pause)? */
static bool trn_pool_interrupted(TrnQueue *q)
{
    return qatomic_read(&q->abort) || qatomic_read(&q->stop) ||
           qatomic_read(&q->paused);
}

/* Run chunks [@from, @n) on the worker alone, checking between chunks. */
static uint32_t trn_pool_serial(TrnKernel *k, uint64_t from, uint64_t n,
                                TrnChunkFn *fn, void *arg)
{
    for (uint64_t i = from; i < n; i++) {
        if (trn_pool_interrupted(k->q) && trn_queue_aborting(k->q)) {
            return NISA_ERR_ABORTED;
        }
        fn(arg, 0, i);
    }
    return NISA_ERR_NONE;
}

uint32_t trn_pool_run(TrnKernel *k, uint64_t n, TrnChunkFn *fn, void *arg)
{
    TrnPool *p = k->s->pool;
    uint64_t from = 0;
    uint32_t err = NISA_ERR_NONE;

    /* Another core's instruction has the helpers: this one runs alone. */
    if (!p || !p->nthreads || n < 2 || qemu_mutex_trylock(&p->owner)) {
        return trn_pool_serial(k, 0, n, fn, arg);
    }
    while (from < n) {
        qemu_mutex_lock(&p->lock);
        p->fn = fn;
        p->arg = arg;
        p->n = n;
        qatomic_set(&p->next, from);
        qatomic_set(&p->cancel, false);
        qatomic_set(&p->gen, p->gen + 1);
        qatomic_set(&p->open, true);
        qemu_cond_broadcast(&p->work);
        qemu_mutex_unlock(&p->lock);

        while (!qatomic_read(&p->cancel)) {
            uint64_t i;

            if (trn_pool_interrupted(k->q)) {
                qatomic_set(&p->cancel, true);
                break;
            }
            i = qatomic_fetch_inc(&p->next);
            if (i >= n) {
                break;
            }
            fn(arg, 0, i);
        }

        qemu_mutex_lock(&p->lock);
        qatomic_set(&p->open, false);
        if (p->busy) {
            qemu_mutex_unlock(&p->lock);
            trn_pool_spin(p, trn_pool_idle, 0);
            qemu_mutex_lock(&p->lock);
        }
        while (p->busy) {
            qemu_cond_wait(&p->done, &p->lock);
        }
        qemu_mutex_unlock(&p->lock);

        from = MIN(qatomic_read(&p->next), n);
        if (from < n && trn_queue_aborting(k->q)) {
            err = NISA_ERR_ABORTED;
            break;
        }
    }
    qemu_mutex_unlock(&p->owner);
    return err;
}

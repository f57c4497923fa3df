/*
 * Virtual Trainium accelerator: hardware queues.
 *
 * Each queue owns a worker thread. The vCPU rings the doorbell (TAIL); the
 * worker copies each descriptor out of the ring, executes it without the
 * BQL, writes the status word back into the ring entry, advances HEAD and
 * asks a bottom half (which runs under the BQL) to raise the interrupt.
 * Small work on an idle queue is executed by the doorbell write itself
 * (trn_queue_doorbell_locked()), by the same trn_queue_run_one().
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/main-loop.h"
#include "hw/pci/msix.h"
#include "trainium-isa.h"
#include "trace.h"

static const char *trn_qname(TrnQueue *q)
{
    return q->is_core ? "core" : q->link >= 0 ? "link" : "dma";
}

/* Called with q->lock held. The queue stops taking descriptors. */
static void trn_queue_halt(TrnQueue *q, uint32_t err)
{
    q->status |= NHW_QSTATUS_HALTED;
    q->error = err;
    q->err_pending = true;
    qemu_bh_schedule(q->bh);
    trace_trainium_queue_halt(q->idx, err);
}

/* Execute a descriptor; a LAUNCH's failing instruction goes to *@insn. */
static uint32_t trn_exec(TrnQueue *q, const uint8_t *raw, TrnKernel *k,
                         uint32_t *insn)
{
    const struct nhw_copy_desc *c = (const void *)raw;

    switch ((enum nhw_desc_op)raw[0]) {
    case NHW_OP_NOP:
        return NISA_ERR_NONE;
    case NHW_OP_COPY:
        if (q->is_core || q->link >= 0) {
            break;
        }
        return trn_exec_copy(q, c);
    case NHW_OP_LINK:
        if (q->link < 0) {
            break;
        }
        return trn_exec_link(q, (const struct nhw_link_desc *)raw);
    case NHW_OP_LAUNCH:
        if (!q->is_core) {
            break;
        }
        return k ? trn_kernel_run(k, (const struct nhw_launch_desc *)raw, insn) :
               NISA_ERR_BAD_DESC;
    }
    return NISA_ERR_BAD_OP;
}

/* Has DONE reached the IRQ_AT mark? Called with q->lock held. */
static bool trn_queue_irq_due(TrnQueue *q)
{
    return q->irq_armed && (int32_t)((uint32_t)q->done - q->irq_at) >= 0;
}

/* Can the descriptor at HEAD be taken? Called with q->lock held. */
static bool trn_queue_ready(TrnQueue *q)
{
    return !q->abort && !q->paused && (q->ctrl & NHW_QCTRL_ENABLE) &&
           !(q->status & NHW_QSTATUS_HALTED) && q->head != q->tail;
}

/*
 * Work of a descriptor, in elements, for the inline path's budget: a COPY
 * or LINK len / 4 (a COPY plus one per scatter-gather entry it may read), a LAUNCH its
 * kernel's estimate (computed on the copy that will run).
 */
static uint64_t trn_desc_cost(const uint8_t *raw, const TrnKernel *k,
                              uint64_t limit)
{
    const struct nhw_copy_desc *c = (const void *)raw;
    uint64_t cost;

    switch ((enum nhw_desc_op)raw[0]) {
    case NHW_OP_NOP:
        return 0;
    case NHW_OP_COPY:
        cost = le64_to_cpu(c->len) / 4;
        if (c->src_space == NHW_SPACE_SGL) {
            cost += le32_to_cpu(c->src_nseg);
        }
        if (c->dst_space == NHW_SPACE_SGL) {
            cost += le32_to_cpu(c->dst_nseg);
        }
        return cost;
    case NHW_OP_LAUNCH:
        return k ? trn_kernel_cost(k, limit) : UINT64_MAX;
    case NHW_OP_LINK:
        return le64_to_cpu(((const struct nhw_link_desc *)raw)->len) / 4;
    }
    return 0;
}

/*
 * Execute the descriptor at HEAD: called with q->lock held and the queue
 * ready, drops the lock while the descriptor runs. With a @budget (the
 * inline path), a descriptor costing more is left for the worker: returns
 * false, having changed nothing. Otherwise returns true and takes its cost
 * off *@budget.
 */
static bool trn_queue_run_one(TrnQueue *q, uint64_t *budget)
{
    TrnState *s = q->s;
    uint8_t raw[NHW_DESC_SIZE];
    uint32_t slot = q->head, err, status, kerr = NISA_ERR_NONE;
    uint32_t insn = NHW_INSN_NONE;
    uint64_t entry = q->ring_base_latched + (uint64_t)slot * NHW_DESC_SIZE;
    uint32_t before = q->last_err;
    g_autoptr(TrnKernel) k = NULL;
    bool skip;

    q->running = true;
    q->status |= NHW_QSTATUS_BUSY;
    qemu_mutex_unlock(&q->lock);

    /* Copy the descriptor out of guest memory before looking at it. */
    err = trn_host_rw(s, entry, raw, sizeof(raw), false);
    if (err) {
        qemu_mutex_lock(&q->lock);
        q->running = false;
        if (!q->abort) {
            TRN_GUEST_ERR(ring_entry, "queue %u: ring entry %u at 0x%"
                          PRIx64 " is not readable memory", q->idx, slot,
                          entry);
            trn_queue_halt(q, NISA_ERR_RING);
        }
        return true;
    }
    /* NHW_DESC_F_AFTER behind a failed descriptor: not run, its error. */
    skip = (raw[1] & NHW_DESC_F_AFTER) && before != NISA_ERR_NONE;
    if (raw[0] == NHW_OP_LAUNCH && q->is_core && !skip) {
        /*
         * Copy the kernel out once. Inline, a kernel of more instructions
         * than the budget is over it (each costs at least 1): not copied.
         */
        k = trn_kernel_load(q, (const struct nhw_launch_desc *)raw,
                            budget ? *budget : UINT64_MAX, &kerr);
    }
    if (budget && !kerr && !skip) {
        uint64_t cost = trn_desc_cost(raw, k, *budget);

        if (cost > *budget) {
            qemu_mutex_lock(&q->lock);
            q->running = false;
            return false;
        }
        *budget -= cost;
    }
    trace_trainium_desc_start(q->idx, slot, raw[0], ldl_le_p(raw + 4));
    if (skip) {
        err = before;
        trace_trainium_desc_skipped(q->idx, slot, err);
    } else if (qatomic_read(&q->fault) & NHW_FAULT_FAIL_NEXT) {
        qatomic_and(&q->fault, ~NHW_FAULT_FAIL_NEXT);
        err = NISA_ERR_INJECTED;
    } else if (kerr) {
        err = kerr;
    } else {
        err = trn_exec(q, raw, k, &insn);
    }
    if (err != NISA_ERR_ABORTED) {
        /* A link descriptor's migrated progress was its alone. */
        qatomic_set(&q->link_done, 0);
    }
    if (err && err != NISA_ERR_ABORTED && !skip) {
        TRN_GUEST_ERR(desc_failed, "queue %u: descriptor %u (op %u, tag %u) "
                      "failed with error %u", q->idx, slot, raw[0],
                      ldl_le_p(raw + 4), err);
    }

    qemu_mutex_lock(&q->lock);
    q->running = false;
    if (q->abort) {
        /* A reset took the queue away; it owns head and tail now. */
        return true;
    }
    if (raw[0] == NHW_OP_LAUNCH && q->is_core) {
        /* A LAUNCH's failing instruction, written before the status. */
        insn = cpu_to_le32(insn);
        if (trn_host_rw(s, entry + NHW_DESC_ERR_INSN_OFF, &insn, 4, true)) {
            trn_queue_halt(q, NISA_ERR_RING);
            return true;
        }
    }
    q->last_err = err;
    status = cpu_to_le32(NHW_DESC_DONE | (skip ? NHW_DESC_SKIPPED : 0) | err);
    if (trn_host_rw(s, entry + NHW_DESC_STATUS_OFF, &status, 4, true)) {
        trn_queue_halt(q, NISA_ERR_RING);
        return true;
    }
    /*
     * The status word is in guest memory before HEAD moves past it, and
     * q->lock orders both before the interrupt that follows.
     */
    q->head = (slot + 1) & (q->ring_size_latched - 1);
    q->done++;
    trace_trainium_desc_done(q->idx, slot, err);
    if ((raw[1] & NHW_DESC_F_IRQ) || trn_queue_irq_due(q)) {
        q->irq_armed = false;
        q->irq_pending = true;
    }
    return true;
}

static void *trn_queue_thread(void *opaque)
{
    TrnQueue *q = opaque;

    qemu_mutex_lock(&q->lock);
    while (!q->stop) {
        if (q->running) {
            /* The doorbell is executing descriptors inline. */
            qemu_cond_wait(&q->kick, &q->lock);
            continue;
        }
        if (!trn_queue_ready(q)) {
            q->hung = false;
            q->status &= ~NHW_QSTATUS_BUSY;
            qemu_cond_broadcast(&q->idle);
            qemu_cond_wait(&q->kick, &q->lock);
            continue;
        }
        q->status |= NHW_QSTATUS_BUSY;
        if (q->fault & NHW_FAULT_HANG) {
            /* Hold the descriptor until a reset or the hook lets go. */
            if (!q->hung) {
                trace_trainium_desc_hang(q->idx, q->head);
            }
            q->hung = true;
            qemu_cond_wait(&q->kick, &q->lock);
            continue;
        }
        q->hung = false;
        trn_queue_run_one(q, NULL);
        if (q->irq_pending) {
            qemu_bh_schedule(q->bh);
        }
    }
    q->running = false;
    qemu_cond_broadcast(&q->idle);
    qemu_mutex_unlock(&q->lock);
    return NULL;
}

/* Under the BQL and q->lock: raise the interrupts the queue asked for. */
static void trn_queue_raise_locked(TrnQueue *q)
{
    TrnState *s = q->s;
    bool irq = q->irq_pending, err = q->err_pending;

    q->irq_pending = q->err_pending = false;
    if (err) {
        s->err_queue = q->idx;
        s->err_code = q->error;
    }
    if (irq) {
        s->int_status |= 1u << q->idx;
        if (!(s->int_mask & (1u << q->idx)) && msix_enabled(PCI_DEVICE(s))) {
            trace_trainium_irq(q->idx);
            msix_notify(PCI_DEVICE(s), q->idx);
        }
    }
    if (err) {
        s->int_status |= NHW_INT_ERROR;
        if (!(s->int_mask & NHW_INT_ERROR) && msix_enabled(PCI_DEVICE(s))) {
            trace_trainium_irq(s->nqueues);
            msix_notify(PCI_DEVICE(s), s->nqueues);
        }
    }
}

/* Under the BQL: raise what the worker asked for. */
static void trn_queue_bh(void *opaque)
{
    TrnQueue *q = opaque;

    qemu_mutex_lock(&q->lock);
    trn_queue_raise_locked(q);
    qemu_mutex_unlock(&q->lock);
}

/* Wait, with q->lock held, until the worker is not inside a descriptor. */
static void trn_queue_quiesce_locked(TrnQueue *q)
{
    q->abort = true;
    qemu_cond_broadcast(&q->kick);
    while (q->running) {
        qemu_cond_wait(&q->idle, &q->lock);
    }
}

void trn_queue_reset(TrnQueue *q, bool device)
{
    qemu_mutex_lock(&q->lock);
    if (!device && (q->fault & NHW_FAULT_STUCK)) {
        /* Test hook: only a device reset gets this queue back. */
        qemu_mutex_unlock(&q->lock);
        trace_trainium_queue_stuck(q->idx);
        return;
    }
    trn_queue_quiesce_locked(q);
    q->ring_base = q->ring_base_latched = 0;
    q->ring_size = q->ring_size_latched = 0;
    q->ctrl = q->head = q->tail = q->status = q->error = q->fault = 0;
    q->done = 0;
    q->last_err = 0;
    q->link_done = 0;
    q->irq_pending = q->err_pending = q->irq_armed = false;
    q->irq_at = 0;
    q->hung = false;
    q->abort = false;
    qemu_mutex_unlock(&q->lock);
    trace_trainium_queue_reset(q->idx);
}

/*
 * Pause (the VM stopped) or resume the queue. A descriptor executing stops
 * at its next check (trn_queue_aborting(), the same points where a reset
 * stops it), so this returns within the same bound as a reset; it resumes
 * where it stopped. The worker takes no new descriptor while paused.
 */
void trn_queue_pause(TrnQueue *q, bool pause)
{
    qemu_mutex_lock(&q->lock);
    qatomic_set(&q->paused, pause);
    if (pause) {
        /* No kick: a worker held by NHW_FAULT_HANG stays hung. */
        while (q->running && !q->parked) {
            qemu_cond_wait(&q->idle, &q->lock);
        }
    } else {
        qemu_cond_broadcast(&q->kick);
    }
    qemu_mutex_unlock(&q->lock);
}

bool trn_queue_aborting(TrnQueue *q)
{
    bool abort;

    if (qatomic_read(&q->abort) || qatomic_read(&q->stop)) {
        return true;
    }
    if (!qatomic_read(&q->paused)) {
        return false;
    }
    qemu_mutex_lock(&q->lock);
    q->parked = true;
    qemu_cond_broadcast(&q->idle);
    while (q->paused && !q->abort && !q->stop) {
        qemu_cond_wait(&q->kick, &q->lock);
    }
    q->parked = false;
    abort = q->abort || q->stop;
    qemu_mutex_unlock(&q->lock);
    return abort;
}

bool trn_queue_hung(TrnQueue *q)
{
    bool hung;

    qemu_mutex_lock(&q->lock);
    hung = q->hung;
    qemu_mutex_unlock(&q->lock);
    return hung;
}

/* ENABLE latches the ring registers, after checking them. */
static void trn_queue_enable(TrnQueue *q)
{
    if (q->ring_size < 2 || q->ring_size > NHW_RING_MAX ||
        !is_power_of_2(q->ring_size)) {
        TRN_GUEST_ERR(ring, "queue %u: ring at 0x%" PRIx64 " of %u entries: "
                      "the size is not a power of two in [2, 4096]", q->idx,
                      q->ring_base, q->ring_size);
        trn_queue_halt(q, NISA_ERR_RING);
        return;
    }
    if (q->ring_base & (NHW_RING_ALIGN - 1)) {
        TRN_GUEST_ERR(ring, "queue %u: ring at 0x%" PRIx64 " of %u entries: "
                      "the base is not 64-byte aligned", q->idx,
                      q->ring_base, q->ring_size);
        trn_queue_halt(q, NISA_ERR_RING);
        return;
    }
    q->ring_base_latched = q->ring_base;
    q->ring_size_latched = q->ring_size;
    q->last_err = 0;
    q->ctrl |= NHW_QCTRL_ENABLE;
    q->status |= NHW_QSTATUS_ENABLED;
    qemu_cond_broadcast(&q->kick);
}

/*
 * A doorbell on an idle queue: small descriptors run right here, on the
 * vCPU thread that rang it, under the BQL, and their interrupt is raised
 * before the doorbell write returns; no thread hand-off. The first
 * descriptor over the remaining budget (the "inline-budget" property, in
 * elements of work) and everything behind it go to the worker. Called with
 * q->lock held.
 */
static void trn_queue_doorbell_locked(TrnQueue *q)
{
    uint64_t budget = q->s->inline_budget;
    unsigned n = 0;

    if (budget && !q->running && !(q->status & NHW_QSTATUS_BUSY) &&
        !(q->fault & NHW_FAULT_HANG) && bql_locked()) {
        while (trn_queue_ready(q) && trn_queue_run_one(q, &budget)) {
            n++;
        }
        if (n) {
            trace_trainium_doorbell_inline(q->idx, n);
            if (!trn_queue_ready(q)) {
                q->status &= ~NHW_QSTATUS_BUSY;
            }
            qemu_cond_broadcast(&q->idle);
            trn_queue_raise_locked(q);
        }
    }
    if (trn_queue_ready(q)) {
        /* Left for the worker (woken only then: a wake-up costs more). */
        qemu_cond_broadcast(&q->kick);
    }
}

uint64_t trn_queue_read(TrnQueue *q, hwaddr reg)
{
    uint64_t val = 0;

    qemu_mutex_lock(&q->lock);
    switch (reg) {
    case NHW_QREG_RING_LO:
        val = (uint32_t)q->ring_base;
        break;
    case NHW_QREG_RING_HI:
        val = q->ring_base >> 32;
        break;
    case NHW_QREG_RING_SIZE:
        val = q->ring_size;
        break;
    case NHW_QREG_CTRL:
        val = q->ctrl;
        break;
    case NHW_QREG_HEAD:
        val = q->head;
        break;
    case NHW_QREG_TAIL:
        val = q->tail;
        break;
    case NHW_QREG_STATUS:
        val = q->status | (q->irq_armed ? NHW_QSTATUS_IRQ_ARMED : 0);
        break;
    case NHW_QREG_ERROR:
        val = q->error;
        break;
    case NHW_QREG_DONE_LO:
        val = (uint32_t)q->done;
        break;
    case NHW_QREG_DONE_HI:
        val = q->done >> 32;
        break;
    case NHW_QREG_FAULT:
        val = q->s->fault_injection ? q->fault : 0;
        break;
    case NHW_QREG_IRQ_AT:
        val = q->irq_at;
        break;
    default:
        TRN_GUEST_ERR(qreg_read, "queue %u: read of unknown register 0x%"
                      HWADDR_PRIx, q->idx, reg);
        break;
    }
    qemu_mutex_unlock(&q->lock);
    return val;
}

void trn_queue_write(TrnQueue *q, hwaddr reg, uint32_t val)
{
    if (reg == NHW_QREG_CTRL && (val & NHW_QCTRL_RESET)) {
        trn_queue_reset(q, false);
        return;
    }
    qemu_mutex_lock(&q->lock);
    switch (reg) {
    case NHW_QREG_RING_LO:
    case NHW_QREG_RING_HI:
    case NHW_QREG_RING_SIZE:
        if (q->ctrl & NHW_QCTRL_ENABLE) {
            TRN_GUEST_ERR(qreg_write, "queue %u: ring register 0x%"
                          HWADDR_PRIx " written while enabled: 0x%x",
                          q->idx, reg, val);
            break;
        }
        if (reg == NHW_QREG_RING_LO) {
            q->ring_base = deposit64(q->ring_base, 0, 32, val);
        } else if (reg == NHW_QREG_RING_HI) {
            q->ring_base = deposit64(q->ring_base, 32, 32, val);
        } else {
            q->ring_size = val;
        }
        break;
    case NHW_QREG_CTRL:
        if ((val & NHW_QCTRL_ENABLE) && !(q->ctrl & NHW_QCTRL_ENABLE)) {
            trn_queue_enable(q);
        } else if (!(val & NHW_QCTRL_ENABLE)) {
            /* Disabling stops taking descriptors; HEAD/TAIL stay. */
            q->ctrl &= ~NHW_QCTRL_ENABLE;
            q->status &= ~NHW_QSTATUS_ENABLED;
        }
        break;
    case NHW_QREG_TAIL:
        if (!(q->ctrl & NHW_QCTRL_ENABLE) || val >= q->ring_size_latched) {
            TRN_GUEST_ERR(doorbell, "queue %u: doorbell %u with the ring "
                          "disabled or of %u entries", q->idx, val,
                          q->ring_size_latched);
            break;
        }
        trace_trainium_doorbell(q->idx, val);
        q->tail = val;
        trn_queue_doorbell_locked(q);
        break;
    case NHW_QREG_IRQ_AT:
        q->irq_at = val;
        q->irq_armed = true;
        trace_trainium_irq_at(q->idx, val, (uint32_t)q->done);
        if (trn_queue_irq_due(q)) {
            q->irq_armed = false;
            q->irq_pending = true;
            trn_queue_raise_locked(q);
        }
        break;
    case NHW_QREG_FAULT:
        if (!q->s->fault_injection) {
            TRN_GUEST_ERR(fault, "queue %u: FAULT 0x%x written, but "
                          "fault-injection=off", q->idx, val);
            break;
        }
        q->fault = val & (NHW_FAULT_HANG | NHW_FAULT_FAIL_NEXT | NHW_FAULT_STUCK);
        trace_trainium_fault(q->idx, q->fault);
        qemu_cond_broadcast(&q->kick);
        break;
    default:
        TRN_GUEST_ERR(qreg_write, "queue %u: write to read-only or unknown "
                      "register 0x%" HWADDR_PRIx ": 0x%x", q->idx, reg, val);
        break;
    }
    qemu_mutex_unlock(&q->lock);
}

void trn_queue_init(TrnState *s, TrnQueue *q, unsigned idx, bool is_core)
{
    char name[32];

    q->s = s;
    q->idx = idx;
    q->is_core = is_core;
    q->link = idx >= s->dma_queues + s->cores ?
              (int)(idx - s->dma_queues - s->cores) : -1;
    qemu_mutex_init(&q->lock);
    qemu_cond_init(&q->kick);
    qemu_cond_init(&q->idle);
    q->bh = qemu_bh_new_guarded(trn_queue_bh, q,
                                &DEVICE(s)->mem_reentrancy_guard);
    snprintf(name, sizeof(name), "trn-%s%u", trn_qname(q), idx);
    qemu_thread_create(&q->thread, name, trn_queue_thread, q,
                       QEMU_THREAD_JOINABLE);
}

void trn_queue_fini(TrnQueue *q)
{
    qemu_mutex_lock(&q->lock);
    q->stop = true;
    q->abort = true;
    qemu_cond_broadcast(&q->kick);
    qemu_mutex_unlock(&q->lock);
    qemu_thread_join(&q->thread);
    qemu_bh_delete(q->bh);
    qemu_cond_destroy(&q->idle);
    qemu_cond_destroy(&q->kick);
    qemu_mutex_destroy(&q->lock);
}

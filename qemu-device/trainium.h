/*
 * Virtual Trainium accelerator: internal state of the device model.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef HW_MISC_TRAINIUM_H
#define HW_MISC_TRAINIUM_H

#include "hw/pci/pci_device.h"
#include "qemu/thread.h"
#include "system/runstate.h"
#include "neuron_hw.h"

/*
 * Every switch of the device on an enum names each enumerator (an opcode
 * added to the ISA but not to the device is a build error, not stale
 * data); the unknown values a guest can send go to the sentinel's or the
 * default case, which fail the instruction. A pragma rather than a meson
 * c_args: QEMU's source sets take no per-file flags, and only the device's
 * own code, after QEMU's headers, is held to it.
 */
#pragma GCC diagnostic error "-Wswitch-enum"

#define TYPE_TRAINIUM "trainium"
OBJECT_DECLARE_SIMPLE_TYPE(TrnState, TRAINIUM)

typedef struct TrnQueue TrnQueue;
typedef struct TrnPool TrnPool;

#define TYPE_TRAINIUM_FABRIC "trainium-fabric"
OBJECT_DECLARE_SIMPLE_TYPE(TrnFabric, TRAINIUM_FABRIC)

/*
 * One hardware queue: a ring in guest memory and a worker thread that
 * executes its descriptors. The guest-visible registers and the worker's
 * state are protected by @lock; the worker never takes the BQL, so a vCPU
 * holding the BQL may wait for it (queue and device reset do).
 */
struct TrnQueue {
    TrnState *s;
    unsigned idx;
    bool is_core;
    int link;             /* link engine of link @link, or -1 */

    QemuMutex lock;       /* protects everything below */
    QemuCond kick;        /* worker waits here for work, reset, stop */
    QemuCond idle;        /* reset and migration wait here for the worker */
    QemuThread thread;

    /* Registers */
    uint64_t ring_base;
    uint32_t ring_size;
    uint32_t ctrl;
    uint32_t head;
    uint32_t tail;
    uint32_t status;
    uint32_t error;
    uint64_t done;
    uint32_t fault;
    uint32_t irq_at;      /* IRQ_AT: DONE_LO value that raises the interrupt */
    uint32_t last_err;    /* the last descriptor's error (NHW_DESC_F_AFTER) */

    /* Worker state */
    bool stop;            /* device teardown */
    bool abort;           /* reset in progress: drop the current descriptor */
    bool paused;          /* VM stopped: take no new descriptor, park */
    bool parked;          /* the running descriptor waits for un-pause */
    bool running;         /* a descriptor is executing, @lock dropped */
    bool hung;            /* NHW_FAULT_HANG holds a descriptor */
    bool irq_armed;       /* IRQ_AT written and not reached yet */
    bool irq_pending;     /* completion interrupt to raise from the BH */
    bool err_pending;     /* error interrupt to raise from the BH */
    uint32_t ring_size_latched;
    uint64_t ring_base_latched;
    /*
     * A link queue: bytes of the descriptor at HEAD already moved, while
     * it runs (0 otherwise). Migrated, so that the destination goes on
     * where the source stopped instead of reducing twice.
     */
    uint64_t link_done;
    QEMUBH *bh;
};

struct TrnState {
    PCIDevice parent_obj;

    MemoryRegion regs;
    MemoryRegion mem;
    uint8_t *mem_ptr;     /* host mapping of @mem, for the workers */
    AddressSpace *dma_as; /* the bus-master address space */

    /* Properties */
    uint32_t cores;
    uint32_t dma_queues;
    uint64_t mem_size;
    bool fault_injection;
    uint64_t inline_budget;  /* work a doorbell may execute itself */
    uint32_t blas_threads;   /* host threads of one MATMUL; 0: default */
    TrnPool *pool;           /* helper threads of large instructions */
    TrnFabric *fabric;       /* the fabric this card is a member of */
    uint32_t fabric_rank;

    uint32_t links;          /* link engines: queues dma + cores + l */
    uint32_t fabric_reg;     /* NHW_REG_FABRIC, 0 in no fabric */
    bool joined;             /* a member of @fabric (realized) */

    /* Global registers, under the BQL */
    uint32_t scratch;
    uint32_t int_status;
    uint32_t int_mask;
    uint32_t err_queue;
    uint32_t err_code;

    uint32_t nqueues;
    TrnQueue queues[NHW_MAX_QUEUES];
    VMChangeStateEntry *vmse;  /* pauses the queues while the VM is stopped */
};

/* trainium-queue.c */
void trn_queue_init(TrnState *s, TrnQueue *q, unsigned idx, bool is_core);
void trn_queue_fini(TrnQueue *q);
uint64_t trn_queue_read(TrnQueue *q, hwaddr reg);
void trn_queue_write(TrnQueue *q, hwaddr reg, uint32_t val);
void trn_queue_reset(TrnQueue *q, bool device);
void trn_queue_pause(TrnQueue *q, bool pause);
bool trn_queue_hung(TrnQueue *q);
void trn_irq_update(TrnState *s);

/*
 * trainium-pool.c: @nthreads helper threads (named @name/hN) that share
 * the chunks of a large instruction with its queue worker; see
 * trn_pool_run() in trainium-isa.h.
 */
TrnPool *trn_pool_new(const char *name, unsigned nthreads);
void trn_pool_free(TrnPool *p);
/* Threads that may run one job's chunks: the helpers and the worker. */
unsigned trn_pool_workers(TrnPool *p);

/* trainium-fabric.c: the cards joined by links (docs/hardware.md "Links") */
#define TRN_FABRIC_MAX 16
/* Links of each member card. */
unsigned trn_fabric_links(TrnFabric *f);
/* The rank at the other end of link @l of rank @rank. */
unsigned trn_fabric_peer(TrnFabric *f, unsigned rank, unsigned l);
/* NHW_REG_FABRIC of rank @rank. */
uint32_t trn_fabric_reg(TrnFabric *f, unsigned rank);
/* Is a card at @rank now? */
bool trn_fabric_present(TrnFabric *f, unsigned rank);
/* Make @s the card at @rank: fails (with @errp) if the rank is taken. */
bool trn_fabric_join(TrnFabric *f, TrnState *s, unsigned rank, Error **errp);
/*
 * Take the card at @rank out of the fabric, after waiting for every
 * access into it that trn_fabric_get() granted: afterwards nothing
 * touches its memory.
 */
void trn_fabric_leave(TrnFabric *f, unsigned rank);
/*
 * The card at @rank, held (it cannot leave) until trn_fabric_put(), or
 * NULL if there is none. *@gen identifies its membership: a card that
 * left and came back (or another one) has another.
 */
TrnState *trn_fabric_get(TrnFabric *f, unsigned rank, uint64_t *gen);
void trn_fabric_put(TrnFabric *f, unsigned rank);

/* trainium-link.c: the link engines' NHW_OP_LINK */
uint32_t trn_exec_link(TrnQueue *q, const struct nhw_link_desc *d);

/* trainium-dma.c: host and device memory access for the workers */
uint32_t trn_host_rw(TrnState *s, uint64_t addr, void *buf, uint64_t len,
                     bool to_host);
uint32_t trn_exec_copy(TrnQueue *q, const struct nhw_copy_desc *d);

/*
 * Where a running descriptor checks whether it must give up (reset,
 * teardown: returns true) or stop for a while (VM stopped: waits, without
 * the BQL, until resumed, then returns whether it must give up).
 */
bool trn_queue_aborting(TrnQueue *q);

/*
 * A guest mistake, ignored or failed as docs/hardware.md says: traced as
 * trainium_ub_<event> and logged with -d guest_errors, from the same
 * arguments (the idiom of hw/nvme's NVME_GUEST_ERR). The file using it
 * includes "qemu/log.h" and "trace.h".
 */
#define TRN_GUEST_ERR(event, fmt, ...)                                      \
    do {                                                                    \
        trace_trainium_ub_##event(__VA_ARGS__);                             \
        qemu_log_mask(LOG_GUEST_ERROR, "trainium: " fmt "\n", __VA_ARGS__); \
    } while (0)

#endif /* HW_MISC_TRAINIUM_H */

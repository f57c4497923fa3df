/*
 * Helpers shared by the trainium qtests: start QEMU with a card, reach its
 * registers, set up queue rings in guest memory, submit descriptors.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TRAINIUM_QTEST_H
#define TRAINIUM_QTEST_H

#include "qemu/osdep.h"
#include "qemu/units.h"
#include "qobject/qdict.h"
#include "libqtest.h"
#include "libqos/pci-pc.h"
#include "libqos/malloc-pc.h"
#include "hw/pci/pci_regs.h"
#include "../../hw/misc/trainium/neuron_hw.h"
#include "../../hw/misc/trainium/neuron_isa.h"

#define TRN_SLOT 4
#define RING_ENTRIES 16
#define WAIT_US (10 * G_USEC_PER_SEC)

typedef struct Trn {
    QTestState *qts;
    QPCIBus *bus;
    QGuestAllocator alloc;
    QPCIDevice *dev;
    QPCIBar regs, mem;
    uint64_t mem_size;
    uint64_t ring[NHW_MAX_QUEUES];  /* guest address of each queue's ring */
    uint32_t tail[NHW_MAX_QUEUES];
} Trn;

/*
 * Start QEMU with one card. libqos maps BARs into a 512 MiB window, so the
 * card's memory is kept small unless @props sets it.
 */
static inline Trn *trn_start(const char *props)
{
    Trn *t = g_new0(Trn, 1);

    t->qts = qtest_initf("-machine q35 -device trainium,addr=%x.0,%s",
                         TRN_SLOT, props ? props : "mem-size=64M");
    pc_alloc_init(&t->alloc, t->qts, ALLOC_NO_FLAGS);
    t->bus = qpci_new_pc(t->qts, &t->alloc);
    t->dev = qpci_device_find(t->bus, QPCI_DEVFN(TRN_SLOT, 0));
    g_assert(t->dev);
    qpci_device_enable(t->dev);
    t->regs = qpci_iomap(t->dev, NHW_BAR_REGS, NULL);
    t->mem = qpci_iomap(t->dev, NHW_BAR_MEM, &t->mem_size);
    return t;
}

static inline void trn_stop(Trn *t)
{
    g_free(t->dev);
    qpci_free_pc(t->bus);
    alloc_destroy(&t->alloc);
    qtest_quit(t->qts);
    g_free(t);
}

static inline uint32_t rd(Trn *t, uint32_t off)
{
    return qpci_io_readl(t->dev, t->regs, off);
}

static inline void wr(Trn *t, uint32_t off, uint32_t val)
{
    qpci_io_writel(t->dev, t->regs, off, val);
}

static inline uint32_t qrd(Trn *t, unsigned q, uint32_t reg)
{
    return rd(t, NHW_QREG_BASE(q) + reg);
}

static inline void qwr(Trn *t, unsigned q, uint32_t reg, uint32_t val)
{
    wr(t, NHW_QREG_BASE(q) + reg, val);
}

/*
 * Set up queue @q with a ring of RING_ENTRIES in guest memory, allocated
 * the first time (again after a reset reuses it).
 */
static inline void ring_setup_q(Trn *t, unsigned q)
{
    if (!t->ring[q]) {
        t->ring[q] = guest_alloc(&t->alloc,
                                 RING_ENTRIES * NHW_DESC_SIZE + 64);
        t->ring[q] = ROUND_UP(t->ring[q], NHW_RING_ALIGN);
    }
    qtest_memset(t->qts, t->ring[q], 0, RING_ENTRIES * NHW_DESC_SIZE);
    qwr(t, q, NHW_QREG_RING_LO, (uint32_t)t->ring[q]);
    qwr(t, q, NHW_QREG_RING_HI, t->ring[q] >> 32);
    qwr(t, q, NHW_QREG_RING_SIZE, RING_ENTRIES);
    qwr(t, q, NHW_QREG_CTRL, NHW_QCTRL_ENABLE);
    g_assert_cmphex(qrd(t, q, NHW_QREG_STATUS), ==, NHW_QSTATUS_ENABLED);
    t->tail[q] = 0;
}

static inline void ring_setup(Trn *t)
{
    ring_setup_q(t, 0);
}

static inline uint32_t desc_status_q(Trn *t, unsigned q, uint32_t slot)
{
    return qtest_readl(t->qts, t->ring[q] + slot * NHW_DESC_SIZE +
                       NHW_DESC_STATUS_OFF);
}

static inline uint32_t desc_status(Trn *t, uint32_t slot)
{
    return desc_status_q(t, 0, slot);
}

/* A LAUNCH's write-back: the index of the instruction that failed. */
static inline uint32_t desc_err_insn_q(Trn *t, unsigned q, uint32_t slot)
{
    return qtest_readl(t->qts, t->ring[q] + slot * NHW_DESC_SIZE +
                       NHW_DESC_ERR_INSN_OFF);
}

/* Poll a queue register until it reads @want or WAIT_US passes. */
static inline void wait_qreg(Trn *t, unsigned q, uint32_t reg, uint32_t mask,
                      uint32_t want)
{
    gint64 deadline = g_get_monotonic_time() + WAIT_US;

    while ((qrd(t, q, reg) & mask) != want) {
        g_assert(g_get_monotonic_time() < deadline);
        g_usleep(200);
    }
}

/* Queue a 64-byte descriptor on queue @q without waiting; its ring slot. */
static inline uint32_t post_q(Trn *t, unsigned q, const void *desc)
{
    uint32_t slot = t->tail[q];

    qtest_memwrite(t->qts, t->ring[q] + slot * NHW_DESC_SIZE, desc,
                   NHW_DESC_SIZE);
    qtest_writel(t->qts, t->ring[q] + slot * NHW_DESC_SIZE +
                 NHW_DESC_STATUS_OFF, 0);
    t->tail[q] = (t->tail[q] + 1) % RING_ENTRIES;
    qwr(t, q, NHW_QREG_TAIL, t->tail[q]);
    return slot;
}

/* Queue one descriptor on queue @q, ring the doorbell, wait, return status. */
static inline uint32_t submit_q(Trn *t, unsigned q, const void *desc)
{
    uint32_t slot = post_q(t, q, desc);

    wait_qreg(t, q, NHW_QREG_HEAD, ~0u, t->tail[q]);
    return desc_status_q(t, q, slot);
}

static inline uint32_t submit(Trn *t, struct nhw_copy_desc *d)
{
    return submit_q(t, 0, d);
}

static inline struct nhw_copy_desc copy_desc(uint8_t ss, uint64_t sa, uint64_t so,
                                      uint8_t ds, uint64_t da, uint64_t dof,
                                      uint64_t len)
{
    return (struct nhw_copy_desc){
        .op = NHW_OP_COPY, .flags = NHW_DESC_F_IRQ,
        .src_space = ss, .src_addr = sa, .src_off = so,
        .dst_space = ds, .dst_addr = da, .dst_off = dof, .len = len,
        .tag = 0x1234,
    };
}

static inline void fill_pattern(uint8_t *buf, size_t len, unsigned seed)
{
    for (size_t i = 0; i < len; i++) {
        buf[i] = (uint8_t)(i * 7 + seed + (i >> 8));
    }
}

/* Wait for the migration of @src to end; its final status. */
static inline char *migrate_wait(QTestState *src)
{
    gint64 deadline = g_get_monotonic_time() + WAIT_US;
    char *status = NULL;

    while (g_get_monotonic_time() < deadline) {
        QDict *rsp = qtest_qmp(src, "{'execute': 'query-migrate'}");
        QDict *ret = qdict_get_qdict(rsp, "return");

        g_free(status);
        status = g_strdup(qdict_get_try_str(ret, "status"));
        qobject_unref(rsp);
        if (status && (!strcmp(status, "completed") ||
                       !strcmp(status, "failed"))) {
            break;
        }
        g_usleep(10 * 1000);
    }
    return status;
}

/* Migrate @src to @dst (listening on @uri); the final status. */
static inline char *migrate(QTestState *src, QTestState *dst, const char *uri)
{
    qtest_qmp_assert_success(src, "{'execute': 'migrate', 'arguments': "
                             "{'uri': %s}}", uri);
    return migrate_wait(src);
}

#endif /* TRAINIUM_QTEST_H */

/*
 * Virtual Trainium accelerator: the DMA engine.
 *
 * Host memory is reached through the device's bus-master address space, and
 * only where it is RAM: the workers never take the BQL, so MMIO targets are
 * refused (NISA_ERR_HOST_DMA) rather than dispatched. Every operand is
 * validated in full before the first byte moves, so a bad descriptor fails
 * without touching memory.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/rcu.h"
#include "qemu/units.h"
#include "exec/memory.h"
#include "hw/pci/pci.h"
#include "trainium.h"
#include "trace.h"

/* Data moves in chunks of at most this size, checking for reset between. */
#define TRN_CHUNK (1 * MiB)

/* Does [addr, addr + len) meet BAR @bar where it is mapped now? */
static bool trn_hits_bar(TrnState *s, int bar, uint64_t addr, uint64_t len)
{
    PCIDevice *pdev = PCI_DEVICE(s);
    pcibus_t base = pci_get_bar_addr(pdev, bar);
    uint64_t size = pdev->io_regions[bar].size;

    return base != PCI_BAR_UNMAPPED && size &&
           addr < base + size && base < addr + len;
}

/*
 * Copy between @buf and guest memory at bus address @addr, or, with @buf
 * NULL, only check that the whole range is directly accessible RAM. The
 * card's own BARs are never a host address (docs/hardware.md, COPY): BAR0
 * is MMIO anyway, and BAR2, RAM though it is, is refused by its current
 * address and by identity (wherever it is mapped).
 */
static uint32_t trn_host_access(TrnState *s, uint64_t addr, void *buf,
                                uint64_t len, bool to_host)
{
    MemTxAttrs attrs = MEMTXATTRS_UNSPECIFIED;

    if (addr + len < addr) {
        return NISA_ERR_HOST_DMA;
    }
    if (len && (trn_hits_bar(s, NHW_BAR_REGS, addr, len) ||
                trn_hits_bar(s, NHW_BAR_MEM, addr, len))) {
        return NISA_ERR_HOST_DMA;
    }
    while (len) {
        hwaddr xlat, l = len;
        MemoryRegion *mr;

        RCU_READ_LOCK_GUARD();
        mr = address_space_translate(s->dma_as, addr, &xlat, &l, to_host,
                                     attrs);
        if (!l || !memory_access_is_direct(mr, to_host, attrs) ||
            mr == &s->mem) {
            return NISA_ERR_HOST_DMA;
        }
        if (buf) {
            uint8_t *ram = (uint8_t *)memory_region_get_ram_ptr(mr) + xlat;

            if (to_host) {
                memcpy(ram, buf, l);
                memory_region_set_dirty(mr, xlat, l);
            } else {
                memcpy(buf, ram, l);
            }
            buf = (uint8_t *)buf + l;
        }
        addr += l;
        len -= l;
    }
    return NISA_ERR_NONE;
}

uint32_t trn_host_rw(TrnState *s, uint64_t addr, void *buf, uint64_t len,
                     bool to_host)
{
    return trn_host_access(s, addr, buf, len, to_host);
}

/*
 * A copy operand walked as a sequence of contiguous chunks: device memory
 * and contiguous host memory are one chunk; a scatter-gather list is one
 * chunk per segment, read from guest memory as the walk reaches it.
 */
typedef struct TrnCursor {
    TrnState *s;
    uint8_t space;
    uint64_t base;     /* DEV: offset, HOST: bus address, SGL: list address */
    uint32_t nseg;
    uint32_t seg;      /* SGL: index of the current segment */
    uint64_t addr;     /* current chunk: device offset or bus address */
    uint64_t left;     /* bytes left in the current chunk */
} TrnCursor;

static uint32_t trn_sgl_entry(TrnCursor *c, uint32_t i, uint64_t *addr,
                              uint64_t *len)
{
    struct nhw_sg_entry e;
    uint32_t err;

    err = trn_host_rw(c->s, c->base + (uint64_t)i * sizeof(e), &e, sizeof(e),
                      false);
    if (err) {
        return NISA_ERR_BAD_SGL;
    }
    *addr = le64_to_cpu(e.addr);
    *len = le64_to_cpu(e.len);
    if (!*len || *addr + *len < *addr) {
        return NISA_ERR_BAD_SGL;
    }
    return NISA_ERR_NONE;
}

/*
 * Validate the operand (@off, @len) completely and position the cursor at
 * @off. On error nothing has been accessed but the operand's own metadata.
 */
static uint32_t trn_cursor_init(TrnCursor *c, TrnQueue *q, uint8_t space,
                                uint64_t base, uint32_t nseg, uint64_t off,
                                uint64_t len, bool write)
{
    TrnState *s = q->s;
    uint64_t end = off + len, pos = 0, a, l;
    bool positioned = false;
    uint32_t i, err;

    *c = (TrnCursor){ .s = s, .space = space, .base = base, .nseg = nseg };
    if (end < off) {
        return NISA_ERR_BAD_DESC;
    }
    switch (space) {
    case NHW_SPACE_DEV:
        if (base + off < base || base + end < base ||
            base + end > s->mem_size) {
            return NISA_ERR_DEV_RANGE;
        }
        c->addr = base + off;
        c->left = len;
        return NISA_ERR_NONE;
    case NHW_SPACE_HOST:
        if (base + end < base) {
            return NISA_ERR_HOST_DMA;
        }
        err = trn_host_access(s, base + off, NULL, len, write);
        c->addr = base + off;
        c->left = len;
        return err;
    case NHW_SPACE_SGL:
        if (!nseg || nseg > NHW_SGL_MAX_SEGS ||
            base + (uint64_t)nseg * sizeof(struct nhw_sg_entry) < base) {
            return NISA_ERR_BAD_SGL;
        }
        for (i = 0; i < nseg && pos < end; i++) {
            if ((i & 0xfff) == 0xfff && trn_queue_aborting(q)) {
                return NISA_ERR_ABORTED;
            }
            err = trn_sgl_entry(c, i, &a, &l);
            if (err) {
                return err;
            }
            if (pos + l > off) {
                /* The part of this segment inside [off, end). */
                uint64_t from = pos < off ? off - pos : 0;
                uint64_t to = MIN(l, end - pos);

                err = trn_host_access(s, a + from, NULL, to - from, write);
                if (err) {
                    return err;
                }
                if (!positioned) {
                    c->seg = i;
                    c->addr = a + from;
                    c->left = l - from;
                    positioned = true;
                }
            }
            pos += l;
        }
        if (pos < end) {
            return NISA_ERR_BAD_SGL; /* the list is shorter than the copy */
        }
        return NISA_ERR_NONE;
    default:
        return NISA_ERR_BAD_DESC;
    }
}

/* Consume @n bytes (at most the current chunk) and load the next segment. */
static uint32_t trn_cursor_advance(TrnCursor *c, uint64_t n)
{
    c->addr += n;
    c->left -= n;
    if (c->left || c->space != NHW_SPACE_SGL || c->seg + 1 >= c->nseg) {
        return NISA_ERR_NONE;
    }
    c->seg++;
    return trn_sgl_entry(c, c->seg, &c->addr, &c->left);
}

static uint32_t trn_move(TrnState *s, TrnCursor *src, TrnCursor *dst,
                         uint64_t n, uint8_t *bounce)
{
    bool sdev = src->space == NHW_SPACE_DEV, ddev = dst->space == NHW_SPACE_DEV;
    uint32_t err;

    if (sdev && ddev) {
        memmove(s->mem_ptr + dst->addr, s->mem_ptr + src->addr, n);
        memory_region_set_dirty(&s->mem, dst->addr, n);
        return NISA_ERR_NONE;
    }
    if (sdev) {
        return trn_host_rw(s, dst->addr, s->mem_ptr + src->addr, n, true);
    }
    if (ddev) {
        /* Written without the memory API: tell migration. */
        err = trn_host_rw(s, src->addr, s->mem_ptr + dst->addr, n, false);
        memory_region_set_dirty(&s->mem, dst->addr, n);
        return err;
    }
    err = trn_host_rw(s, src->addr, bounce, n, false);
    return err ? err : trn_host_rw(s, dst->addr, bounce, n, true);
}

uint32_t trn_exec_copy(TrnQueue *q, const struct nhw_copy_desc *d)
{
    TrnState *s = q->s;
    uint64_t len = le64_to_cpu(d->len);
    g_autofree uint8_t *bounce = NULL;
    TrnCursor src, dst;
    uint32_t err;

    if (d->rsvd) {
        return NISA_ERR_BAD_DESC;
    }
    if (!len) {
        return NISA_ERR_NONE;
    }
    err = trn_cursor_init(&src, q, d->src_space, le64_to_cpu(d->src_addr),
                          le32_to_cpu(d->src_nseg), le64_to_cpu(d->src_off),
                          len, false);
    if (!err) {
        err = trn_cursor_init(&dst, q, d->dst_space,
                              le64_to_cpu(d->dst_addr),
                              le32_to_cpu(d->dst_nseg),
                              le64_to_cpu(d->dst_off), len, true);
    }
    if (err) {
        return err;
    }
    if (src.space != NHW_SPACE_DEV && dst.space != NHW_SPACE_DEV) {
        bounce = g_malloc(TRN_CHUNK);
    }
    while (len) {
        uint64_t n = MIN(MIN(src.left, dst.left), MIN(len, TRN_CHUNK));

        if (trn_queue_aborting(q)) {
            return NISA_ERR_ABORTED;
        }
        if (!n) {
            /* The guest shortened its list after validation. */
            return NISA_ERR_BAD_SGL;
        }
        err = trn_move(s, &src, &dst, n, bounce);
        if (!err) {
            err = trn_cursor_advance(&src, n);
        }
        if (!err) {
            err = trn_cursor_advance(&dst, n);
        }
        if (err) {
            return err;
        }
        len -= n;
    }
    return NISA_ERR_NONE;
}

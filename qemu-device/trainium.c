/*
 * Virtual Trainium accelerator: PCI device, global registers, reset,
 * properties and migration state. docs/hardware.md is the specification;
 * neuron_hw.h holds the layouts shared with the kernel driver.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/units.h"
#include "qemu/module.h"
#include "qapi/error.h"
#include "hw/pci/pci.h"
#include "hw/pci/pcie.h"
#include "hw/pci/msix.h"
#include "hw/qdev-properties.h"
#include "migration/vmstate.h"
#include "trainium-isa.h"
#include "trace.h"

#define TRN_MAX_CORES 16
#define TRN_MAX_DMA_QUEUES 8

static uint32_t trn_caps(TrnState *s)
{
    return NHW_CAP_DMA | NHW_CAP_DMA_SGL | NHW_CAP_COMPUTE | NHW_CAP_BF16 |
           NHW_CAP_IRQ_AT | NHW_CAP_AFTER |
           (s->fault_injection ? NHW_CAP_FAULT_INJECT : 0) |
           (s->links ? NHW_CAP_LINK : 0);
}

/* NHW_REG_LINK(l): the rank at the other end, and whether a card is there. */
static uint32_t trn_link_reg(TrnState *s, unsigned l)
{
    unsigned peer;

    if (l >= s->links) {
        return 0;
    }
    peer = trn_fabric_peer(s->fabric, s->fabric_rank, l);
    return peer | (trn_fabric_present(s->fabric, peer) ? NHW_LINK_UP : 0);
}

static uint64_t trn_global_read(TrnState *s, hwaddr addr)
{
    switch (addr) {
    case NHW_REG_ID:
        return NHW_ID_MAGIC;
    case NHW_REG_VERSION:
        return NHW_MODEL_VERSION;
    case NHW_REG_CAPS:
        return trn_caps(s);
    case NHW_REG_QUEUES:
        return s->dma_queues | (s->cores << 8) | (s->links << 16);
    case NHW_REG_MEM_SIZE_LO:
        return (uint32_t)s->mem_size;
    case NHW_REG_MEM_SIZE_HI:
        return s->mem_size >> 32;
    case NHW_REG_SCRATCH:
        return s->scratch;
    case NHW_REG_ISA_VERSION:
        return NISA_ISA_VERSION;
    case NHW_REG_CTRL:
        return 0;
    case NHW_REG_STATUS:
        return NHW_STATUS_READY;
    case NHW_REG_INT_STATUS:
        return s->int_status;
    case NHW_REG_INT_MASK:
        return s->int_mask;
    case NHW_REG_ERR_QUEUE:
        return s->err_queue;
    case NHW_REG_ERR_CODE:
        return s->err_code;
    case NHW_REG_FABRIC:
        return s->fabric_reg;
    }
    if (addr >= NHW_REG_LINK(0) && addr < NHW_REG_LINK(NHW_MAX_LINKS) &&
        !(addr & 3)) {
        return trn_link_reg(s, (addr - NHW_REG_LINK(0)) / 4);
    }
    TRN_GUEST_ERR(mmio_read, "read of unknown register 0x%" HWADDR_PRIx,
                  addr);
    return 0;
}

static uint64_t trn_mmio_read(void *opaque, hwaddr addr, unsigned size)
{
    TrnState *s = opaque;
    uint64_t val;

    if (addr >= NHW_QREG_BASE(0) && addr < NHW_QREG_BASE(s->nqueues)) {
        unsigned q = (addr - NHW_QREG_BASE(0)) / 0x100;

        val = trn_queue_read(&s->queues[q], addr - NHW_QREG_BASE(q));
    } else {
        val = trn_global_read(s, addr);
    }
    trace_trainium_mmio_read(addr, val);
    return val;
}

static void trn_reset_all(TrnState *s)
{
    unsigned i;

    for (i = 0; i < s->nqueues; i++) {
        trn_queue_reset(&s->queues[i], true);
    }
    s->scratch = 0;
    s->int_status = 0;
    s->int_mask = 0;
    s->err_queue = 0;
    s->err_code = 0;
}

static void trn_global_write(TrnState *s, hwaddr addr, uint32_t val)
{
    switch (addr) {
    case NHW_REG_SCRATCH:
        s->scratch = val;
        return;
    case NHW_REG_CTRL:
        if (val & NHW_CTRL_RESET) {
            trace_trainium_reset("register");
            trn_reset_all(s);
        }
        return;
    case NHW_REG_INT_STATUS:
        s->int_status &= ~val;
        return;
    case NHW_REG_INT_MASK:
        s->int_mask = val;
        return;
    }
    TRN_GUEST_ERR(mmio_write, "write to read-only or unknown register 0x%"
                  HWADDR_PRIx ": 0x%x", addr, val);
}

static void trn_mmio_write(void *opaque, hwaddr addr, uint64_t val,
                           unsigned size)
{
    TrnState *s = opaque;

    trace_trainium_mmio_write(addr, val);
    if (addr >= NHW_QREG_BASE(0) && addr < NHW_QREG_BASE(s->nqueues)) {
        unsigned q = (addr - NHW_QREG_BASE(0)) / 0x100;

        trn_queue_write(&s->queues[q], addr - NHW_QREG_BASE(q), val);
    } else {
        trn_global_write(s, addr, val);
    }
}

static const MemoryRegionOps trn_mmio_ops = {
    .read = trn_mmio_read,
    .write = trn_mmio_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    /* 64-bit accesses are split into the LO/HI register pairs. */
    .valid = { .min_access_size = 4, .max_access_size = 8 },
    .impl = { .min_access_size = 4, .max_access_size = 4 },
};

/* The fabric properties, and the queues the links add. */
static bool trn_check_fabric(TrnState *s, Error **errp)
{
    const char *name;
    unsigned size;

    s->links = 0;
    if (!s->fabric) {
        if (s->fabric_rank != UINT32_MAX) {
            error_setg(errp, "fabric-rank needs fabric (a trainium-fabric "
                       "device)");
            return false;
        }
        return true;
    }
    name = object_get_canonical_path_component(OBJECT(s->fabric));
    size = NHW_FABRIC_SIZE(trn_fabric_reg(s->fabric, 0));
    if (s->fabric_rank == UINT32_MAX) {
        error_setg(errp, "fabric %s: fabric-rank (0 to %u) is required",
                   name, size - 1);
        return false;
    }
    if (s->fabric_rank >= size) {
        error_setg(errp, "fabric %s: fabric-rank %u out of range: the fabric "
                   "has %u ranks (0 to %u)", name, s->fabric_rank, size,
                   size - 1);
        return false;
    }
    if (trn_fabric_present(s->fabric, s->fabric_rank)) {
        error_setg(errp, "fabric %s: rank %u is already taken by another "
                   "card", name, s->fabric_rank);
        return false;
    }
    s->links = trn_fabric_links(s->fabric);
    if (s->links > NHW_MAX_LINKS) {
        error_setg(errp, "fabric %s: its topology gives a card %u links; a "
                   "card has at most %d (use topology=ring)", name, s->links,
                   NHW_MAX_LINKS);
        return false;
    }
    if (s->dma_queues + s->cores + s->links > NHW_MAX_QUEUES) {
        error_setg(errp, "dma-queues (%u) + cores (%u) + links (%u) exceed "
                   "the card's %d queues", s->dma_queues, s->cores,
                   s->links, NHW_MAX_QUEUES);
        return false;
    }
    return true;
}

static bool trn_check_params(TrnState *s, Error **errp)
{
    if (s->cores < 1 || s->cores > TRN_MAX_CORES) {
        error_setg(errp, "cores must be between 1 and %d", TRN_MAX_CORES);
        return false;
    }
    if (s->dma_queues < 1 || s->dma_queues > TRN_MAX_DMA_QUEUES) {
        error_setg(errp, "dma-queues must be between 1 and %d",
                   TRN_MAX_DMA_QUEUES);
        return false;
    }
    if (s->mem_size < 16 * MiB || s->mem_size > 64 * GiB ||
        !is_power_of_2(s->mem_size)) {
        error_setg(errp, "mem-size must be a power of two between 16M and "
                   "64G");
        return false;
    }
    return trn_matmul_check_threads(s, errp) && trn_check_fabric(s, errp);
}

/*
 * The card's engines stop while the VM is stopped (and so before migration
 * saves RAM and the device state): a running descriptor parks at its next
 * check, within the bound of a reset, and resumes where it was.
 */
static void trn_vm_state_change(void *opaque, bool running, RunState state)
{
    TrnState *s = opaque;

    for (unsigned i = 0; i < s->nqueues; i++) {
        trn_queue_pause(&s->queues[i], !running);
    }
}

static void trn_realize(PCIDevice *pdev, Error **errp)
{
    TrnState *s = TRAINIUM(pdev);
    unsigned i;

    if (!trn_check_params(s, errp)) {
        return;
    }
    s->nqueues = s->dma_queues + s->cores + s->links;

    /* Interrupts are MSI-X only: no INTx pin is advertised. */
    pci_config_set_interrupt_pin(pdev->config, 0);
    if (pcie_endpoint_cap_init(pdev, 0) < 0) {
        error_setg(errp, "cannot add the PCI Express capability");
        return;
    }

    memory_region_init_io(&s->regs, OBJECT(s), &trn_mmio_ops, s,
                          "trainium-regs", NHW_BAR_REGS_SIZE);
    pci_register_bar(pdev, NHW_BAR_REGS, PCI_BASE_ADDRESS_SPACE_MEMORY,
                     &s->regs);

    if (!memory_region_init_ram(&s->mem, OBJECT(s), "trainium-mem",
                                s->mem_size, errp)) {
        return;
    }
    s->mem_ptr = memory_region_get_ram_ptr(&s->mem);
    pci_register_bar(pdev, NHW_BAR_MEM, PCI_BASE_ADDRESS_SPACE_MEMORY |
                     PCI_BASE_ADDRESS_MEM_TYPE_64 |
                     PCI_BASE_ADDRESS_MEM_PREFETCH, &s->mem);

    /* One vector per queue, then the error vector. */
    if (msix_init_exclusive_bar(pdev, s->nqueues + 1, NHW_BAR_MSIX, errp)) {
        return;
    }
    for (i = 0; i <= s->nqueues; i++) {
        msix_vector_use(pdev, i);
    }

    s->dma_as = pci_get_address_space(pdev);
    if (s->fabric) {
        /* Checked free above; from now on peers' links reach @mem. */
        if (!trn_fabric_join(s->fabric, s, s->fabric_rank, errp)) {
            msix_uninit_exclusive_bar(pdev);
            vmstate_unregister_ram(&s->mem, DEVICE(s));
            return;
        }
        s->joined = true;
        s->fabric_reg = trn_fabric_reg(s->fabric, s->fabric_rank);
    }
    s->pool = trn_pool_new("trn-pool", trn_matmul_threads(s) - 1);
    for (i = 0; i < s->nqueues; i++) {
        trn_queue_init(s, &s->queues[i], i, i >= s->dma_queues &&
                       i < s->dma_queues + s->cores);
        /* A card realized while the VM is stopped starts paused. */
        trn_queue_pause(&s->queues[i], !runstate_is_running());
    }
    s->vmse = qemu_add_vm_change_state_handler(trn_vm_state_change, s);
}

static void trn_exit(PCIDevice *pdev)
{
    TrnState *s = TRAINIUM(pdev);
    unsigned i;

    if (s->vmse) {
        qemu_del_vm_change_state_handler(s->vmse);
        s->vmse = NULL;
    }

    /*
     * First out of the fabric (waiting for the chunks other cards' links
     * are writing into @mem), then the own engines stop.
     */
    if (s->joined) {
        trn_fabric_leave(s->fabric, s->fabric_rank);
        s->joined = false;
    }
    for (i = 0; i < s->nqueues; i++) {
        trn_queue_fini(&s->queues[i]);
    }
    trn_pool_free(s->pool);
    s->pool = NULL;
    msix_uninit_exclusive_bar(pdev);
    /*
     * The RAM's migration id is the device path: free it now, or a card
     * device_add-ed at the same place before this one is finalized would
     * clash with it (QEMU aborts on duplicate RAM ids).
     */
    vmstate_unregister_ram(&s->mem, DEVICE(s));
}

static void trn_reset_hold(Object *obj, ResetType type)
{
    TrnState *s = TRAINIUM(obj);

    trace_trainium_reset("bus");
    trn_reset_all(s);
}

/*
 * Migration: registers and the rings' positions move; device memory is RAM
 * and moves with the guest's (the engines mark what they write dirty). The
 * queues are paused since the VM stopped (trn_vm_state_change()), so the
 * state saved is between two checks of a descriptor; one that was running
 * is not complete (HEAD stays on it) and runs again from its start at the
 * destination. A queue held by NHW_FAULT_HANG refuses migration.
 */
static int trn_pre_save(void *opaque)
{
    TrnState *s = opaque;
    unsigned i;

    for (i = 0; i < s->nqueues; i++) {
        if (trn_queue_hung(&s->queues[i])) {
            error_report("trainium: queue %u is hung (fault injection); "
                         "reset it before migrating", i);
            return -EBUSY;
        }
    }
    for (i = 0; i < s->nqueues; i++) {
        trn_queue_pause(&s->queues[i], true);
    }
    return 0;
}

static int trn_post_save(void *opaque)
{
    TrnState *s = opaque;
    unsigned i;

    for (i = 0; i < s->nqueues; i++) {
        trn_queue_pause(&s->queues[i], !runstate_is_running());
    }
    return 0;
}

/*
 * Every value of the stream that sizes or indexes something is checked
 * against the device's own configuration: a stream is guest-influenced
 * input (and may come from another build).
 */
static int trn_queue_post_load(void *opaque, int version_id)
{
    TrnQueue *q = opaque;
    uint32_t n = q->ring_size_latched;

    if (n > NHW_RING_MAX || (n && !is_power_of_2(n)) ||
        (n && (q->head >= n || q->tail >= n)) ||
        ((q->ctrl & NHW_QCTRL_ENABLE) && n < 2) ||
        (q->ring_base_latched & (NHW_RING_ALIGN - 1)) ||
        (q->ctrl & ~NHW_QCTRL_ENABLE) ||
        (q->fault & ~(NHW_FAULT_HANG | NHW_FAULT_FAIL_NEXT | NHW_FAULT_STUCK)) ||
        (!q->s->fault_injection && q->fault) ||
        (q->link_done && q->link < 0) || q->last_err > 0xffff) {
        error_report("trainium: queue %u: invalid migration state", q->idx);
        return -EINVAL;
    }
    qemu_mutex_lock(&q->lock);
    qemu_cond_broadcast(&q->kick);
    qemu_mutex_unlock(&q->lock);
    return 0;
}

static int trn_post_load(void *opaque, int version_id)
{
    TrnState *s = opaque;

    if (s->err_queue >= s->nqueues) {
        error_report("trainium: invalid migration state: error queue %u",
                     s->err_queue);
        return -EINVAL;
    }
    return 0;
}

/* A link descriptor stopped in mid-transfer: how far it went. */
static bool trn_queue_link_needed(void *opaque)
{
    TrnQueue *q = opaque;

    return q->link_done != 0;
}

static const VMStateDescription trn_queue_link_vmstate = {
    .name = "trainium-queue/link",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = trn_queue_link_needed,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT64(link_done, TrnQueue),
        VMSTATE_END_OF_LIST()
    },
};

/* The last descriptor failed: an NHW_DESC_F_AFTER one behind it is skipped. */
static bool trn_queue_after_needed(void *opaque)
{
    TrnQueue *q = opaque;

    return q->last_err != 0;
}

static const VMStateDescription trn_queue_after_vmstate = {
    .name = "trainium-queue/after",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = trn_queue_after_needed,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32(last_err, TrnQueue),
        VMSTATE_END_OF_LIST()
    },
};

static const VMStateDescription trn_queue_vmstate = {
    .name = "trainium-queue",
    .version_id = 2,
    .minimum_version_id = 2,
    .post_load = trn_queue_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT64(ring_base, TrnQueue),
        VMSTATE_UINT32(ring_size, TrnQueue),
        VMSTATE_UINT64(ring_base_latched, TrnQueue),
        VMSTATE_UINT32(ring_size_latched, TrnQueue),
        VMSTATE_UINT32(ctrl, TrnQueue),
        VMSTATE_UINT32(head, TrnQueue),
        VMSTATE_UINT32(tail, TrnQueue),
        VMSTATE_UINT32(status, TrnQueue),
        VMSTATE_UINT32(error, TrnQueue),
        VMSTATE_UINT64(done, TrnQueue),
        VMSTATE_UINT32(fault, TrnQueue),
        VMSTATE_UINT32(irq_at, TrnQueue),
        VMSTATE_BOOL(irq_armed, TrnQueue),
        VMSTATE_END_OF_LIST()
    },
    .subsections = (const VMStateDescription * const []) {
        &trn_queue_link_vmstate,
        &trn_queue_after_vmstate,
        NULL
    },
};

/* The fabric and rank: the destination's must be the same. */
static bool trn_fabric_needed(void *opaque)
{
    TrnState *s = opaque;

    return s->fabric_reg != 0;
}

static const VMStateDescription trn_fabric_vmstate = {
    .name = "trainium/fabric",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = trn_fabric_needed,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32_EQUAL(fabric_reg, TrnState,
                             "the fabric (fabric-id, size) and fabric-rank "
                             "must match the source's"),
        VMSTATE_END_OF_LIST()
    },
};

static const VMStateDescription trn_vmstate = {
    .name = "trainium",
    .version_id = 1,
    .minimum_version_id = 1,
    .pre_save = trn_pre_save,
    .post_save = trn_post_save,
    .post_load = trn_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_PCI_DEVICE(parent_obj, TrnState),
        VMSTATE_MSIX(parent_obj, TrnState),
        VMSTATE_UINT32(scratch, TrnState),
        VMSTATE_UINT32(int_status, TrnState),
        VMSTATE_UINT32(int_mask, TrnState),
        VMSTATE_UINT32(err_queue, TrnState),
        VMSTATE_UINT32(err_code, TrnState),
        /* Sizes the array below: must be this card's own (-EINVAL). */
        VMSTATE_UINT32_EQUAL(nqueues, TrnState,
                             "cores, dma-queues and the fabric's links must "
                             "match the source's"),
        VMSTATE_STRUCT_VARRAY_UINT32(queues, TrnState, nqueues, 1,
                                     trn_queue_vmstate, TrnQueue),
        VMSTATE_END_OF_LIST()
    },
    .subsections = (const VMStateDescription * const []) {
        &trn_fabric_vmstate,
        NULL
    },
};

static const Property trn_props[] = {
    DEFINE_PROP_UINT32("cores", TrnState, cores, 2),
    DEFINE_PROP_UINT32("dma-queues", TrnState, dma_queues, 4),
    DEFINE_PROP_SIZE("mem-size", TrnState, mem_size, 512 * MiB),
    DEFINE_PROP_BOOL("fault-injection", TrnState, fault_injection, true),
    DEFINE_PROP_UINT64("inline-budget", TrnState, inline_budget, 16384),
    DEFINE_PROP_UINT32("blas-threads", TrnState, blas_threads, 0),
    DEFINE_PROP_LINK("fabric", TrnState, fabric, TYPE_TRAINIUM_FABRIC,
                     TrnFabric *),
    DEFINE_PROP_UINT32("fabric-rank", TrnState, fabric_rank, UINT32_MAX),
};

static void trn_class_init(ObjectClass *oc, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(oc);
    PCIDeviceClass *pc = PCI_DEVICE_CLASS(oc);
    ResettableClass *rc = RESETTABLE_CLASS(oc);

    pc->realize = trn_realize;
    pc->exit = trn_exit;
    pc->vendor_id = NHW_PCI_VENDOR_ID;
    pc->device_id = NHW_PCI_DEVICE_ID;
    pc->subsystem_vendor_id = NHW_PCI_VENDOR_ID;
    pc->subsystem_id = NHW_PCI_SUBSYS_ID;
    pc->revision = NHW_PCI_REVISION;
    pc->class_id = NHW_PCI_CLASS;
    rc->phases.hold = trn_reset_hold;
    dc->desc = "Virtual Trainium accelerator";
    dc->vmsd = &trn_vmstate;
    device_class_set_props(dc, trn_props);
    set_bit(DEVICE_CATEGORY_MISC, dc->categories);
}

static const TypeInfo trn_types[] = {
    {
        .name = TYPE_TRAINIUM,
        .parent = TYPE_PCI_DEVICE,
        .instance_size = sizeof(TrnState),
        .class_init = trn_class_init,
        .interfaces = (InterfaceInfo[]) {
            { INTERFACE_PCIE_DEVICE },
            { },
        },
    },
};

DEFINE_TYPES(trn_types)

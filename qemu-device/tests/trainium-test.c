/*
 * qtest for the virtual Trainium card: registers, the DMA queue, errors,
 * interrupts, reset and fault injection, driven with no guest kernel.
 * docs/hardware.md is the specification these tests check.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "trainium-qtest.h"

static void test_identity(void)
{
    Trn *t = trn_start("cores=3,dma-queues=2,mem-size=32M");
    QTestState *qts;
    QDict *resp;

    g_assert_cmphex(qpci_config_readw(t->dev, PCI_VENDOR_ID), ==,
                    NHW_PCI_VENDOR_ID);
    g_assert_cmphex(qpci_config_readw(t->dev, PCI_DEVICE_ID), ==,
                    NHW_PCI_DEVICE_ID);
    g_assert_cmphex(qpci_config_readw(t->dev, PCI_CLASS_DEVICE), ==,
                    NHW_PCI_CLASS);
    g_assert_cmphex(qpci_config_readb(t->dev, PCI_REVISION_ID), ==,
                    NHW_PCI_REVISION);
    g_assert(qpci_find_capability(t->dev, PCI_CAP_ID_EXP, 0));
    g_assert(qpci_find_capability(t->dev, PCI_CAP_ID_MSIX, 0));
    /* MSI-X only: no INTx pin is advertised. */
    g_assert_cmpuint(qpci_config_readb(t->dev, PCI_INTERRUPT_PIN), ==, 0);

    g_assert_cmphex(rd(t, NHW_REG_ID), ==, NHW_ID_MAGIC);
    g_assert_cmphex(rd(t, NHW_REG_VERSION), ==, NHW_MODEL_VERSION);
    g_assert_cmphex(rd(t, NHW_REG_CAPS) & NHW_CAP_DMA, ==, NHW_CAP_DMA);
    g_assert_cmpuint(NHW_QUEUES_DMA(rd(t, NHW_REG_QUEUES)), ==, 2);
    g_assert_cmpuint(NHW_QUEUES_CORES(rd(t, NHW_REG_QUEUES)), ==, 3);
    g_assert_cmphex(rd(t, NHW_REG_MEM_SIZE_LO), ==, 32 * MiB);
    g_assert_cmphex(rd(t, NHW_REG_MEM_SIZE_HI), ==, 0);
    g_assert_cmpuint(t->mem_size, ==, 32 * MiB);
    g_assert_cmphex(rd(t, NHW_REG_STATUS) & NHW_STATUS_READY, ==,
                    NHW_STATUS_READY);
    /* One vector per queue plus the error vector. */
    qpci_msix_enable(t->dev);
    g_assert_cmpuint(qpci_msix_table_size(t->dev), ==, 2 + 3 + 1);
    trn_stop(t);

    /* Defaults: 2 cores, 4 DMA queues, 512 MiB. */
    qts = qtest_init("-machine q35 -device trainium,id=trn0");
    resp = qtest_qmp(qts, "{'execute': 'qom-get', 'arguments': "
                     "{'path': 'trn0', 'property': 'mem-size'}}");
    g_assert_cmpuint(qdict_get_int(resp, "return"), ==, 512 * MiB);
    qobject_unref(resp);
    resp = qtest_qmp(qts, "{'execute': 'qom-get', 'arguments': "
                     "{'path': 'trn0', 'property': 'cores'}}");
    g_assert_cmpuint(qdict_get_int(resp, "return"), ==, 2);
    qobject_unref(resp);
    qtest_quit(qts);
}

static void test_registers(void)
{
    Trn *t = trn_start(NULL);

    wr(t, NHW_REG_SCRATCH, 0xdeadbeef);
    g_assert_cmphex(rd(t, NHW_REG_SCRATCH), ==, 0xdeadbeef);
    /* Read-only registers ignore writes; unknown ones read as zero. */
    wr(t, NHW_REG_ID, 0);
    g_assert_cmphex(rd(t, NHW_REG_ID), ==, NHW_ID_MAGIC);
    wr(t, NHW_QREG_BASE(0) + NHW_QREG_HEAD, 5);
    g_assert_cmphex(qrd(t, 0, NHW_QREG_HEAD), ==, 0);
    g_assert_cmphex(rd(t, 0x0ffc), ==, 0);
    g_assert_cmphex(qrd(t, 0, 0xfc), ==, 0);
    /* A 64-bit access reads the LO/HI pair. */
    g_assert_cmphex(qpci_io_readq(t->dev, t->regs, NHW_REG_MEM_SIZE_LO), ==,
                    64 * MiB);
    /*
     * Elsewhere it is two 32-bit accesses, low address first: SCRATCH is
     * written, ISA_VERSION (read-only) ignores the high word.
     */
    qpci_io_writeq(t->dev, t->regs, NHW_REG_SCRATCH, 0x1234567800c0ffeeull);
    g_assert_cmphex(rd(t, NHW_REG_SCRATCH), ==, 0x00c0ffee);
    g_assert_cmphex(rd(t, NHW_REG_ISA_VERSION), ==, NISA_ISA_VERSION);
    g_assert_cmphex(qpci_io_readq(t->dev, t->regs, NHW_REG_SCRATCH), ==,
                    ((uint64_t)NISA_ISA_VERSION << 32) | 0x00c0ffee);
    /* Device reset clears the scratch register and the queues. */
    ring_setup(t);
    wr(t, NHW_REG_CTRL, NHW_CTRL_RESET);
    g_assert_cmphex(rd(t, NHW_REG_SCRATCH), ==, 0);
    g_assert_cmphex(qrd(t, 0, NHW_QREG_STATUS), ==, 0);
    g_assert_cmphex(qrd(t, 0, NHW_QREG_RING_SIZE), ==, 0);
    trn_stop(t);
}

static void test_bad_properties(void)
{
    static const struct {
        const char *prop;
        int64_t value;
    } bad[] = {
        { "cores", 0 }, { "cores", 17 }, { "dma-queues", 0 },
        { "dma-queues", 9 }, { "mem-size", 1000000 }, { "mem-size", 8 * MiB },
        { "mem-size", 128 * GiB },
    };
    QTestState *qts = qtest_init("-machine q35 -device "
                                 "pcie-root-port,id=rp0,chassis=1");

    for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
        QDict *args = qdict_new();
        QDict *resp;

        qdict_put_str(args, "driver", "trainium");
        qdict_put_str(args, "bus", "rp0");
        qdict_put_int(args, bad[i].prop, bad[i].value);
        resp = qtest_qmp(qts, "{'execute': 'device_add', 'arguments': %p}",
                         args);
        g_test_message("%s=%" PRId64, bad[i].prop, bad[i].value);
        g_assert(qdict_haskey(resp, "error"));
        qobject_unref(resp);
    }
    /* A good card hot-plugs into the same port. */
    {
        QDict *resp = qtest_qmp(qts, "{'execute': 'device_add', 'arguments':"
                                " {'driver': 'trainium', 'bus': 'rp0', "
                                "'mem-size': 16777216}}");

        g_assert(!qdict_haskey(resp, "error"));
        qobject_unref(resp);
    }
    qtest_quit(qts);
}

static void test_dma_roundtrip(void)
{
    Trn *t = trn_start(NULL);
    const size_t len = 3 * 4096 + 123;
    g_autofree uint8_t *src = g_malloc(len);
    g_autofree uint8_t *back = g_malloc0(len);
    g_autofree uint8_t *bar = g_malloc0(len);
    uint64_t hsrc = guest_alloc(&t->alloc, len);
    uint64_t hdst = guest_alloc(&t->alloc, len);
    struct nhw_copy_desc d;

    qpci_msix_enable(t->dev);
    ring_setup(t);
    fill_pattern(src, len, 1);
    qtest_memwrite(t->qts, hsrc, src, len);

    d = copy_desc(NHW_SPACE_HOST, hsrc, 0, NHW_SPACE_DEV, 0x10000, 5, len);
    g_assert_cmphex(submit(t, &d), ==, NHW_DESC_DONE);
    /* The data is in device memory, as seen through BAR2. */
    qpci_memread(t->dev, t->mem, 0x10005, bar, len);
    g_assert_cmpmem(bar, len, src, len);

    d = copy_desc(NHW_SPACE_DEV, 0x10000, 5, NHW_SPACE_HOST, hdst, 0, len);
    g_assert_cmphex(submit(t, &d), ==, NHW_DESC_DONE);
    qtest_memread(t->qts, hdst, back, len);
    g_assert_cmpmem(back, len, src, len);

    /* Device to device, overlapping ranges behave like memmove. */
    d = copy_desc(NHW_SPACE_DEV, 0x10005, 0, NHW_SPACE_DEV, 0x10005, 100,
                  len);
    g_assert_cmphex(submit(t, &d), ==, NHW_DESC_DONE);
    qpci_memread(t->dev, t->mem, 0x10005 + 100, bar, len);
    g_assert_cmpmem(bar, len, src, len);

    g_assert_cmpuint(qrd(t, 0, NHW_QREG_DONE_LO), ==, 3);
    /* Completions raised queue 0's vector (masked, so it is pending). */
    g_assert(qpci_msix_pending(t->dev, 0));
    g_assert_cmphex(rd(t, NHW_REG_INT_STATUS) & 1, ==, 1);
    wr(t, NHW_REG_INT_STATUS, 1);
    g_assert_cmphex(rd(t, NHW_REG_INT_STATUS) & 1, ==, 0);
    trn_stop(t);
}

static void test_dma_sgl(void)
{
    Trn *t = trn_start(NULL);
    static const uint64_t seg_len[] = { 100, 4096, 1, 3000, 777 };
    const size_t total = 100 + 4096 + 1 + 3000 + 777, off = 150;
    const size_t len = total - off - 10;
    struct nhw_sg_entry sgl[ARRAY_SIZE(seg_len)];
    g_autofree uint8_t *data = g_malloc(total);
    g_autofree uint8_t *back = g_malloc0(len);
    uint64_t list = guest_alloc(&t->alloc, sizeof(sgl));
    uint64_t out = guest_alloc(&t->alloc, len);
    struct nhw_copy_desc d;
    size_t pos = 0;

    ring_setup(t);
    fill_pattern(data, total, 9);
    for (size_t i = 0; i < ARRAY_SIZE(seg_len); i++) {
        uint64_t a = guest_alloc(&t->alloc, seg_len[i] + 64) + 3;

        sgl[i] = (struct nhw_sg_entry){ .addr = a, .len = seg_len[i] };
        qtest_memwrite(t->qts, a, data + pos, seg_len[i]);
        pos += seg_len[i];
    }
    qtest_memwrite(t->qts, list, sgl, sizeof(sgl));

    /* Gather from the scattered list into device memory... */
    d = copy_desc(NHW_SPACE_SGL, list, off, NHW_SPACE_DEV, 0, 0, len);
    d.src_nseg = ARRAY_SIZE(sgl);
    g_assert_cmphex(submit(t, &d), ==, NHW_DESC_DONE);
    /* ...and back out into contiguous host memory. */
    d = copy_desc(NHW_SPACE_DEV, 0, 0, NHW_SPACE_HOST, out, 0, len);
    g_assert_cmphex(submit(t, &d), ==, NHW_DESC_DONE);
    qtest_memread(t->qts, out, back, len);
    g_assert_cmpmem(back, len, data + off, len);

    /* Scatter into the list at an offset: host to SGL, both host. */
    memset(back, 0xab, len);
    qtest_memwrite(t->qts, out, back, 200);
    d = copy_desc(NHW_SPACE_HOST, out, 0, NHW_SPACE_SGL, list, 99, 200);
    d.dst_nseg = ARRAY_SIZE(sgl);
    g_assert_cmphex(submit(t, &d), ==, NHW_DESC_DONE);
    g_assert_cmphex(qtest_readb(t->qts, sgl[0].addr + 98), ==, data[98]);
    g_assert_cmphex(qtest_readb(t->qts, sgl[0].addr + 99), ==, 0xab);
    g_assert_cmphex(qtest_readb(t->qts, sgl[1].addr + 198), ==, 0xab);
    g_assert_cmphex(qtest_readb(t->qts, sgl[1].addr + 199), ==,
                    data[100 + 199]);
    trn_stop(t);
}

/* Each bad descriptor fails with its error and the queue goes on. */
static void test_dma_errors(void)
{
    Trn *t = trn_start("mem-size=16M");
    uint64_t host = guest_alloc(&t->alloc, 4096);
    uint64_t list = guest_alloc(&t->alloc, 64);
    struct nhw_sg_entry bad_sgl[2] = {
        { .addr = host, .len = 64 }, { .addr = host, .len = 0 },
    };
    struct {
        const char *what;
        struct nhw_copy_desc d;
        uint32_t nseg;
        uint32_t err;
    } cases[] = {
        { "device range past the end",
          copy_desc(NHW_SPACE_HOST, host, 0, NHW_SPACE_DEV, 16 * MiB - 8, 0,
                    16), 0, NISA_ERR_DEV_RANGE },
        { "offset + length overflows",
          copy_desc(NHW_SPACE_DEV, 8, UINT64_MAX - 4, NHW_SPACE_HOST, host,
                    0, 16), 0, NISA_ERR_BAD_DESC },
        { "device offset far past the end",
          copy_desc(NHW_SPACE_DEV, 8, 1ull << 62, NHW_SPACE_HOST, host, 0,
                    16), 0, NISA_ERR_DEV_RANGE },
        { "device base + offset overflows",
          copy_desc(NHW_SPACE_DEV, UINT64_MAX - 8, 16, NHW_SPACE_HOST, host,
                    0, 16), 0, NISA_ERR_DEV_RANGE },
        { "host range wraps around",
          copy_desc(NHW_SPACE_HOST, host, 0, NHW_SPACE_DEV, 0, 0,
                    UINT64_MAX), 0, NISA_ERR_HOST_DMA },
        { "host address not memory",
          copy_desc(NHW_SPACE_HOST, 0xfffffff00000ull, 0, NHW_SPACE_DEV, 0,
                    0, 16), 0, NISA_ERR_HOST_DMA },
        { "host address is MMIO (the card's own registers)",
          copy_desc(NHW_SPACE_HOST, t->regs.addr, 0, NHW_SPACE_DEV, 0, 0, 16),
          0, NISA_ERR_HOST_DMA },
        { "host source is the card's own BAR2 (RAM, refused)",
          copy_desc(NHW_SPACE_HOST, t->mem.addr, 0x1000, NHW_SPACE_DEV, 0, 0,
                    16), 0, NISA_ERR_HOST_DMA },
        { "host destination is the card's own BAR2",
          copy_desc(NHW_SPACE_DEV, 0, 0, NHW_SPACE_HOST, t->mem.addr, 0, 16),
          0, NISA_ERR_HOST_DMA },
        { "host range running into BAR2",
          copy_desc(NHW_SPACE_DEV, 0, 0, NHW_SPACE_HOST, t->mem.addr - 8, 0,
                    16), 0, NISA_ERR_HOST_DMA },
        { "bad space", copy_desc(7, host, 0, NHW_SPACE_DEV, 0, 0, 16), 0,
          NISA_ERR_BAD_DESC },
        { "SGL with a zero-length segment",
          copy_desc(NHW_SPACE_SGL, list, 0, NHW_SPACE_DEV, 0, 0, 100), 2,
          NISA_ERR_BAD_SGL },
        { "SGL shorter than the copy",
          copy_desc(NHW_SPACE_SGL, list, 0, NHW_SPACE_DEV, 0, 0, 65), 1,
          NISA_ERR_BAD_SGL },
        { "SGL with no segments",
          copy_desc(NHW_SPACE_SGL, list, 0, NHW_SPACE_DEV, 0, 0, 1), 0,
          NISA_ERR_BAD_SGL },
    };
    struct nhw_copy_desc d;

    ring_setup(t);
    qtest_memwrite(t->qts, list, bad_sgl, sizeof(bad_sgl));
    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        cases[i].d.src_nseg = cases[i].nseg;
        g_test_message("%s", cases[i].what);
        g_assert_cmphex(submit(t, &cases[i].d), ==,
                        NHW_DESC_DONE | cases[i].err);
    }
    d = copy_desc(NHW_SPACE_HOST, host, 0, NHW_SPACE_DEV, 0, 0, 16);
    d.rsvd = 1;
    g_assert_cmphex(submit(t, &d), ==, NHW_DESC_DONE | NISA_ERR_BAD_DESC);
    /* Zero length: done, nothing checked but the reserved word. */
    d = copy_desc(77, 0xfffffff00000ull, UINT64_MAX, NHW_SPACE_SGL, 0, 0, 0);
    g_assert_cmphex(submit(t, &d), ==, NHW_DESC_DONE);
    d.rsvd = 1;
    g_assert_cmphex(submit(t, &d), ==, NHW_DESC_DONE | NISA_ERR_BAD_DESC);
    d = (struct nhw_copy_desc){ .op = NHW_OP_LAUNCH };
    g_assert_cmphex(submit(t, &d), ==, NHW_DESC_DONE | NISA_ERR_BAD_OP);
    d = (struct nhw_copy_desc){ .op = 0x77 };
    g_assert_cmphex(submit(t, &d), ==, NHW_DESC_DONE | NISA_ERR_BAD_OP);
    /* The queue is still healthy. */
    d = copy_desc(NHW_SPACE_HOST, host, 0, NHW_SPACE_DEV, 0, 0, 4096);
    g_assert_cmphex(submit(t, &d), ==, NHW_DESC_DONE);
    g_assert_cmphex(qrd(t, 0, NHW_QREG_STATUS) & NHW_QSTATUS_HALTED, ==, 0);
    trn_stop(t);
}

/*
 * With bus mastering off the card reaches no host memory: the ring cannot
 * be read, so the queue halts with RING (docs/hardware.md, "Bus mastering").
 */
static void test_bus_master_off(void)
{
    Trn *t = trn_start("mem-size=16M");
    uint64_t host = guest_alloc(&t->alloc, 64);
    struct nhw_copy_desc d = copy_desc(NHW_SPACE_HOST, host, 0, NHW_SPACE_DEV,
                                       0, 0, 64);
    uint16_t cmd;

    ring_setup(t);
    cmd = qpci_config_readw(t->dev, PCI_COMMAND);
    qpci_config_writew(t->dev, PCI_COMMAND, cmd & ~PCI_COMMAND_MASTER);
    post_q(t, 0, &d);
    wait_qreg(t, 0, NHW_QREG_STATUS, NHW_QSTATUS_HALTED, NHW_QSTATUS_HALTED);
    g_assert_cmpuint(qrd(t, 0, NHW_QREG_ERROR), ==, NISA_ERR_RING);
    qpci_config_writew(t->dev, PCI_COMMAND, cmd);
    qwr(t, 0, NHW_QREG_CTRL, NHW_QCTRL_RESET);
    ring_setup(t);
    g_assert_cmphex(submit(t, &d), ==, NHW_DESC_DONE);
    trn_stop(t);
}

static void test_ring_errors(void)
{
    Trn *t = trn_start(NULL);
    unsigned errvec = 4 + 2;

    qpci_msix_enable(t->dev);
    /* Not a power of two: the queue halts and raises the error vector. */
    qwr(t, 1, NHW_QREG_RING_SIZE, 3);
    qwr(t, 1, NHW_QREG_CTRL, NHW_QCTRL_ENABLE);
    wait_qreg(t, 1, NHW_QREG_STATUS, NHW_QSTATUS_HALTED, NHW_QSTATUS_HALTED);
    g_assert_cmpuint(qrd(t, 1, NHW_QREG_ERROR), ==, NISA_ERR_RING);
    g_assert_cmphex(rd(t, NHW_REG_INT_STATUS) & NHW_INT_ERROR, ==,
                    NHW_INT_ERROR);
    g_assert_cmpuint(rd(t, NHW_REG_ERR_QUEUE), ==, 1);
    g_assert(qpci_msix_pending(t->dev, errvec));
    /* A queue reset clears it. */
    qwr(t, 1, NHW_QREG_CTRL, NHW_QCTRL_RESET);
    g_assert_cmphex(qrd(t, 1, NHW_QREG_STATUS), ==, 0);

    /* Misaligned base. */
    qwr(t, 2, NHW_QREG_RING_LO, 0x1008);
    qwr(t, 2, NHW_QREG_RING_SIZE, 8);
    qwr(t, 2, NHW_QREG_CTRL, NHW_QCTRL_ENABLE);
    wait_qreg(t, 2, NHW_QREG_STATUS, NHW_QSTATUS_HALTED, NHW_QSTATUS_HALTED);

    /* A ring that is not memory halts the queue when it is read. */
    qwr(t, 3, NHW_QREG_RING_LO, 0);
    qwr(t, 3, NHW_QREG_RING_HI, 0xffff);
    qwr(t, 3, NHW_QREG_RING_SIZE, 8);
    qwr(t, 3, NHW_QREG_CTRL, NHW_QCTRL_ENABLE);
    qwr(t, 3, NHW_QREG_TAIL, 1);
    wait_qreg(t, 3, NHW_QREG_STATUS, NHW_QSTATUS_HALTED, NHW_QSTATUS_HALTED);
    g_assert_cmpuint(qrd(t, 3, NHW_QREG_ERROR), ==, NISA_ERR_RING);

    /* Ring registers are locked while enabled; doorbells are checked. */
    ring_setup(t);
    qwr(t, 0, NHW_QREG_RING_SIZE, 4);
    g_assert_cmpuint(qrd(t, 0, NHW_QREG_RING_SIZE), ==, RING_ENTRIES);
    qwr(t, 0, NHW_QREG_TAIL, RING_ENTRIES);
    g_assert_cmpuint(qrd(t, 0, NHW_QREG_TAIL), ==, 0);
    trn_stop(t);
}

static void test_fault_injection(void)
{
    Trn *t = trn_start(NULL);
    uint64_t host = guest_alloc(&t->alloc, 64);
    struct nhw_copy_desc d = copy_desc(NHW_SPACE_HOST, host, 0, NHW_SPACE_DEV,
                                       0, 0, 64);
    uint32_t slot;

    g_assert(rd(t, NHW_REG_CAPS) & NHW_CAP_FAULT_INJECT);
    ring_setup(t);
    qwr(t, 0, NHW_QREG_FAULT, NHW_FAULT_FAIL_NEXT);
    g_assert_cmphex(submit(t, &d), ==, NHW_DESC_DONE | NISA_ERR_INJECTED);
    g_assert_cmphex(submit(t, &d), ==, NHW_DESC_DONE);

    /* A hung queue takes the descriptor and never completes it... */
    qwr(t, 0, NHW_QREG_FAULT, NHW_FAULT_HANG);
    slot = post_q(t, 0, &d);
    wait_qreg(t, 0, NHW_QREG_STATUS, NHW_QSTATUS_BUSY, NHW_QSTATUS_BUSY);
    g_usleep(50 * 1000);
    g_assert_cmpuint(qrd(t, 0, NHW_QREG_HEAD), ==, slot);
    g_assert_cmphex(desc_status(t, slot), ==, 0);
    /* ...until a queue reset takes it away; the queue then works again. */
    qwr(t, 0, NHW_QREG_CTRL, NHW_QCTRL_RESET);
    g_assert_cmphex(qrd(t, 0, NHW_QREG_STATUS), ==, 0);
    g_assert_cmphex(qrd(t, 0, NHW_QREG_FAULT), ==, 0);
    ring_setup(t);
    g_assert_cmphex(submit(t, &d), ==, NHW_DESC_DONE);

    /* A stuck queue ignores its own reset; a device reset frees it. */
    qwr(t, 0, NHW_QREG_FAULT, NHW_FAULT_HANG | NHW_FAULT_STUCK);
    post_q(t, 0, &d);
    wait_qreg(t, 0, NHW_QREG_STATUS, NHW_QSTATUS_BUSY, NHW_QSTATUS_BUSY);
    qwr(t, 0, NHW_QREG_CTRL, NHW_QCTRL_RESET);
    g_assert_cmphex(qrd(t, 0, NHW_QREG_STATUS) & NHW_QSTATUS_BUSY, ==,
                    NHW_QSTATUS_BUSY);
    wr(t, NHW_REG_CTRL, NHW_CTRL_RESET);
    g_assert_cmphex(qrd(t, 0, NHW_QREG_STATUS), ==, 0);
    g_assert_cmphex(qrd(t, 0, NHW_QREG_FAULT), ==, 0);
    ring_setup(t);
    g_assert_cmphex(submit(t, &d), ==, NHW_DESC_DONE);
    trn_stop(t);

    /* With the hooks off, the register reads zero and does nothing. */
    t = trn_start("mem-size=16M,fault-injection=off");
    g_assert(!(rd(t, NHW_REG_CAPS) & NHW_CAP_FAULT_INJECT));
    ring_setup(t);
    qwr(t, 0, NHW_QREG_FAULT, NHW_FAULT_FAIL_NEXT);
    g_assert_cmphex(qrd(t, 0, NHW_QREG_FAULT), ==, 0);
    g_assert_cmphex(submit(t, &d), ==, NHW_DESC_DONE);
    trn_stop(t);
}

/* NHW_DESC_F_AFTER: run only if the descriptor before succeeded. */
static void test_after(void)
{
    Trn *t = trn_start(NULL);
    uint8_t src[64], got[64], zero[64] = { 0 };
    uint64_t host = guest_alloc(&t->alloc, sizeof(src));
    struct nhw_copy_desc d = copy_desc(NHW_SPACE_HOST, host, 0, NHW_SPACE_DEV,
                                       0, 0, sizeof(src));
    struct nhw_copy_desc a = d;

    g_assert(rd(t, NHW_REG_CAPS) & NHW_CAP_AFTER);
    fill_pattern(src, sizeof(src), 3);
    qtest_memwrite(t->qts, host, src, sizeof(src));
    ring_setup(t);
    a.flags = NHW_DESC_F_AFTER;

    /* Behind a success it runs. */
    g_assert_cmphex(submit(t, &d), ==, NHW_DESC_DONE);
    a.dst_addr = cpu_to_le64(0x1000);
    g_assert_cmphex(submit(t, &a), ==, NHW_DESC_DONE);
    qpci_memread(t->dev, t->mem, 0x1000, got, sizeof(got));
    g_assert_cmpmem(got, sizeof(got), src, sizeof(src));

    /* Behind a failure it does not, and takes its error; so does the next. */
    qwr(t, 0, NHW_QREG_FAULT, NHW_FAULT_FAIL_NEXT);
    g_assert_cmphex(submit(t, &d), ==, NHW_DESC_DONE | NISA_ERR_INJECTED);
    a.dst_addr = cpu_to_le64(0x2000);
    g_assert_cmphex(submit(t, &a), ==,
                    NHW_DESC_DONE | NHW_DESC_SKIPPED | NISA_ERR_INJECTED);
    g_assert_cmphex(submit(t, &a), ==,
                    NHW_DESC_DONE | NHW_DESC_SKIPPED | NISA_ERR_INJECTED);
    qpci_memread(t->dev, t->mem, 0x2000, got, sizeof(got));
    g_assert_cmpmem(got, sizeof(got), zero, sizeof(zero));
    /* One without the flag runs, and clears the way. */
    g_assert_cmphex(submit(t, &d), ==, NHW_DESC_DONE);
    g_assert_cmphex(submit(t, &a), ==, NHW_DESC_DONE);
    qpci_memread(t->dev, t->mem, 0x2000, got, sizeof(got));
    g_assert_cmpmem(got, sizeof(got), src, sizeof(src));

    /* A queue reset forgets a failure: the fresh ring's first runs. */
    qwr(t, 0, NHW_QREG_FAULT, NHW_FAULT_FAIL_NEXT);
    g_assert_cmphex(submit(t, &d), ==, NHW_DESC_DONE | NISA_ERR_INJECTED);
    qwr(t, 0, NHW_QREG_CTRL, NHW_QCTRL_RESET);
    ring_setup(t);
    g_assert_cmphex(submit(t, &a), ==, NHW_DESC_DONE);
    trn_stop(t);
}

static void test_two_cards(void)
{
    QTestState *qts = qtest_init("-machine q35 "
                                 "-device trainium,addr=4.0,mem-size=16M "
                                 "-device trainium,addr=5.0,mem-size=32M");
    QGuestAllocator alloc;
    QPCIBus *bus;
    uint64_t sizes[2];

    pc_alloc_init(&alloc, qts, ALLOC_NO_FLAGS);
    bus = qpci_new_pc(qts, &alloc);
    for (int i = 0; i < 2; i++) {
        QPCIDevice *dev = qpci_device_find(bus, QPCI_DEVFN(4 + i, 0));
        QPCIBar bar;

        qpci_device_enable(dev);
        bar = qpci_iomap(dev, NHW_BAR_REGS, NULL);
        qpci_io_writel(dev, bar, NHW_REG_SCRATCH, 100 + i);
        sizes[i] = qpci_io_readl(dev, bar, NHW_REG_MEM_SIZE_LO);
        g_assert_cmpuint(qpci_io_readl(dev, bar, NHW_REG_SCRATCH), ==, 100 + i);
        g_free(dev);
    }
    g_assert_cmpuint(sizes[0], ==, 16 * MiB);
    g_assert_cmpuint(sizes[1], ==, 32 * MiB);
    qpci_free_pc(bus);
    alloc_destroy(&alloc);
    qtest_quit(qts);
}

/*
 * An idle card (and one with descriptors pending) migrates: registers, ring
 * positions and device memory arrive, and the queue goes on working on the
 * destination. A card whose queue is held by the HANG hook refuses.
 */
static void test_migration(void)
{
    g_autofree char *sock = g_strdup_printf("/tmp/trainium-mig-%d.sock", getpid());
    g_autofree char *uri = g_strdup_printf("unix:%s", sock);
    g_autofree char *status = NULL;
    Trn *src = trn_start("mem-size=16M"), *dst;
    uint64_t host = guest_alloc(&src->alloc, 4096);
    struct nhw_copy_desc d = copy_desc(NHW_SPACE_HOST, host, 0, NHW_SPACE_DEV,
                                       0x2000, 0, 64);
    uint8_t pat[64], back[64];

    fill_pattern(pat, sizeof(pat), 5);
    qtest_memwrite(src->qts, host, pat, sizeof(pat));
    wr(src, NHW_REG_SCRATCH, 0x5a5a1234);
    ring_setup(src);
    g_assert_cmphex(submit(src, &d), ==, NHW_DESC_DONE);

    dst = g_new0(Trn, 1);
    dst->qts = qtest_initf("-machine q35 -device trainium,addr=%x.0,mem-size=16M "
                           "-incoming %s", TRN_SLOT, uri);
    status = migrate(src->qts, dst->qts, uri);
    g_assert_cmpstr(status, ==, "completed");
    qtest_qmp_eventwait(dst->qts, "RESUME");

    /* Same guest RAM layout: the allocator and BARs are set up again. */
    pc_alloc_init(&dst->alloc, dst->qts, ALLOC_NO_FLAGS);
    dst->bus = qpci_new_pc(dst->qts, &dst->alloc);
    dst->dev = qpci_device_find(dst->bus, QPCI_DEVFN(TRN_SLOT, 0));
    dst->regs = qpci_iomap(dst->dev, NHW_BAR_REGS, NULL);
    dst->mem = qpci_iomap(dst->dev, NHW_BAR_MEM, &dst->mem_size);
    dst->ring[0] = src->ring[0];
    dst->tail[0] = src->tail[0];
    g_assert_cmphex(rd(dst, NHW_REG_SCRATCH), ==, 0x5a5a1234);
    g_assert_cmphex(qrd(dst, 0, NHW_QREG_STATUS), ==, NHW_QSTATUS_ENABLED);
    g_assert_cmpuint(qrd(dst, 0, NHW_QREG_DONE_LO), ==, 1);
    g_assert_cmpuint(qrd(dst, 0, NHW_QREG_HEAD), ==, 1);
    qpci_memread(dst->dev, dst->mem, 0x2000, back, sizeof(back));
    g_assert_cmpmem(back, sizeof(back), pat, sizeof(pat));
    /* The queue carries on at the destination. */
    d.dst_addr = 0x3000;
    g_assert_cmphex(submit(dst, &d), ==, NHW_DESC_DONE);
    qpci_memread(dst->dev, dst->mem, 0x3000, back, sizeof(back));
    g_assert_cmpmem(back, sizeof(back), pat, sizeof(pat));
    trn_stop(dst);
    trn_stop(src);

    /* A hung queue cannot be paused: the migration fails, the source lives. */
    src = trn_start("mem-size=16M");
    host = guest_alloc(&src->alloc, 4096);
    ring_setup(src);
    qwr(src, 0, NHW_QREG_FAULT, NHW_FAULT_HANG);
    d = copy_desc(NHW_SPACE_HOST, host, 0, NHW_SPACE_DEV, 0, 0, 64);
    post_q(src, 0, &d);
    wait_qreg(src, 0, NHW_QREG_STATUS, NHW_QSTATUS_BUSY, NHW_QSTATUS_BUSY);
    dst = g_new0(Trn, 1);
    dst->qts = qtest_initf("-machine q35 -device trainium,addr=%x.0,mem-size=16M "
                           "-incoming %s", TRN_SLOT, uri);
    g_free(status);
    status = migrate(src->qts, dst->qts, uri);
    g_assert_cmpstr(status, ==, "failed");
    /*
     * The destination gives up by itself when the stream breaks off
     * (exit-on-error): wait for that, rather than kill it first and see
     * the exit status of a SIGTERM.
     */
    for (int i = 0; i < 1000 && qtest_probe_child(dst->qts); i++) {
        g_usleep(10 * 1000);
    }
    qtest_set_expected_status(dst->qts, EXIT_FAILURE);
    qtest_quit(dst->qts);
    g_free(dst);
    qwr(src, 0, NHW_QREG_CTRL, NHW_QCTRL_RESET);
    ring_setup(src);
    g_assert_cmphex(submit(src, &d), ==, NHW_DESC_DONE);
    trn_stop(src);
    unlink(sock);
}

/*
 * A small descriptor on an idle queue completes within its doorbell write;
 * with inline-budget=0 the worker runs it. A descriptor without its own
 * IRQ flag interrupts only when IRQ_AT asks: at once if DONE is already
 * there, else when DONE reaches it; a queue reset disarms it.
 */
static void test_doorbell_and_irq_at(void)
{
    const char *props[] = { "mem-size=16M", "mem-size=16M,inline-budget=0" };

    for (unsigned i = 0; i < ARRAY_SIZE(props); i++) {
        Trn *t = trn_start(props[i]);
        uint64_t host = guest_alloc(&t->alloc, 4096);
        struct nhw_copy_desc d = copy_desc(NHW_SPACE_HOST, host, 0,
                                           NHW_SPACE_DEV, 0, 0, 4096);
        uint32_t slot;

        g_assert(rd(t, NHW_REG_CAPS) & NHW_CAP_IRQ_AT);
        ring_setup(t);
        d.flags = 0;
        slot = post_q(t, 0, &d);
        if (i == 0) {
            /* Inline: done before the doorbell write returned. */
            g_assert_cmphex(desc_status(t, slot), ==, NHW_DESC_DONE);
        }
        wait_qreg(t, 0, NHW_QREG_DONE_LO, ~0u, 1);
        g_assert_cmphex(desc_status(t, slot), ==, NHW_DESC_DONE);
        g_assert_cmphex(rd(t, NHW_REG_INT_STATUS) & 1, ==, 0);

        /* Already reached: the interrupt comes at once. */
        qwr(t, 0, NHW_QREG_IRQ_AT, 1);
        g_assert_cmphex(rd(t, NHW_REG_INT_STATUS) & 1, ==, 1);
        g_assert_cmphex(qrd(t, 0, NHW_QREG_STATUS) & NHW_QSTATUS_IRQ_ARMED,
                        ==, 0);
        wr(t, NHW_REG_INT_STATUS, 1);

        /* Two descriptors ahead: the first does not interrupt, the second does. */
        qwr(t, 0, NHW_QREG_IRQ_AT, 3);
        g_assert_cmpuint(qrd(t, 0, NHW_QREG_IRQ_AT), ==, 3);
        g_assert_cmphex(qrd(t, 0, NHW_QREG_STATUS) & NHW_QSTATUS_IRQ_ARMED,
                        ==, NHW_QSTATUS_IRQ_ARMED);
        g_assert_cmphex(submit(t, &d), ==, NHW_DESC_DONE);
        g_assert_cmphex(rd(t, NHW_REG_INT_STATUS) & 1, ==, 0);
        g_assert_cmphex(submit(t, &d), ==, NHW_DESC_DONE);
        g_assert_cmphex(rd(t, NHW_REG_INT_STATUS) & 1, ==, 1);
        g_assert_cmphex(qrd(t, 0, NHW_QREG_STATUS) & NHW_QSTATUS_IRQ_ARMED,
                        ==, 0);
        wr(t, NHW_REG_INT_STATUS, 1);

        /* Once fired, it stays quiet; a reset disarms a pending one. */
        g_assert_cmphex(submit(t, &d), ==, NHW_DESC_DONE);
        g_assert_cmphex(rd(t, NHW_REG_INT_STATUS) & 1, ==, 0);
        qwr(t, 0, NHW_QREG_IRQ_AT, 100);
        qwr(t, 0, NHW_QREG_CTRL, NHW_QCTRL_RESET);
        g_assert_cmphex(qrd(t, 0, NHW_QREG_STATUS), ==, 0);
        g_assert_cmpuint(qrd(t, 0, NHW_QREG_IRQ_AT), ==, 0);
        trn_stop(t);
    }
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/trainium/identity", test_identity);
    qtest_add_func("/trainium/registers", test_registers);
    qtest_add_func("/trainium/bad-properties", test_bad_properties);
    qtest_add_func("/trainium/dma/roundtrip", test_dma_roundtrip);
    qtest_add_func("/trainium/dma/sgl", test_dma_sgl);
    qtest_add_func("/trainium/dma/errors", test_dma_errors);
    qtest_add_func("/trainium/dma/bus-master-off", test_bus_master_off);
    qtest_add_func("/trainium/queue/ring-errors", test_ring_errors);
    qtest_add_func("/trainium/queue/fault-injection", test_fault_injection);
    qtest_add_func("/trainium/queue/after", test_after);
    qtest_add_func("/trainium/queue/doorbell-and-irq-at",
                   test_doorbell_and_irq_at);
    qtest_add_func("/trainium/two-cards", test_two_cards);
    qtest_add_func("/trainium/migration", test_migration);
    return g_test_run();
}

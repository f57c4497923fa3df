/*
 * qtest for the card's limits (docs/hardware.md, "Resource limits" and
 * "Reset"): operands whose element count overflows, work and allocations
 * sized by guest values, a reset during the longest instructions the spec
 * allows, and a kernel that rewrites itself while it runs.
 *
 * Device memory is 64 MiB here (libqos maps BARs into a 512 MiB window);
 * the largest operands are reached by broadcasting (stride 0), which the
 * spec allows up to NISA_MAX_ELEMS elements whatever the memory size.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "trainium-core-qtest.h"

/* A reset must complete within this (docs/hardware.md, "Reset"). */
#define RESET_BOUND_US (1 * G_USEC_PER_SEC)

/* A 4-D operand with explicit shape and strides. */
static struct nisa_tensor t4(unsigned slot, unsigned dtype, unsigned ndim,
                            const uint32_t *shape, const int64_t *strides)
{
    struct nisa_tensor t = { .slot = slot, .dtype = dtype, .ndim = ndim };

    for (unsigned i = 0; i < ndim; i++) {
        t.shape[i] = shape[i];
        t.strides[i] = strides[i];
    }
    return t;
}

/* The card still answers, and its core queue still runs a kernel. */
static void assert_alive(Core *c)
{
    g_assert_cmphex(rd(c->t, NHW_REG_ID), ==, NHW_ID_MAGIC);
    g_assert_cmphex(run1(c, (struct nisa_insn){ .opcode = NISA_INSN_NOP }),
                    ==, OK);
}

/*
 * Element counts that wrap to 0 modulo 2^64 (2^17 * 2^17 * 2^30) are too
 * many, not empty: before anything is read or written, BAD_INSN.
 */
static void test_count_overflow(void)
{
    Core *c = core_start();
    const uint32_t wrap3[] = { 1u << 17, 1u << 17, 1u << 30 };
    const int64_t far3[] = { 1ll << 40, 1ll << 40, 1 };
    const uint32_t dsh3[] = { 1u << 17, 1u << 17, 1 };
    const int64_t zero[] = { 0, 0, 0, 0 };
    const uint32_t dst4[] = { 1u << 17, 1u << 17, 4, 1u << 30 };
    const uint32_t src4[] = { 1u << 17, 1u << 17, 1, 1u << 30 };
    const int64_t row4[] = { 0, 0, 0, 1 };
    const uint32_t empty[] = { 0, 1u << 31, 1u << 31 };
    const int64_t one3[] = { 1, 1, 1 };
    int64_t idx = 0;

    put(c, 1, 0, &idx, sizeof(idx));
    /* REDUCE along the last axis of a "0-element" source. */
    g_assert_cmphex(run1(c, (struct nisa_insn){ .opcode = NISA_INSN_REDUCE,
        .subop = NISA_RED_SUM, .axis = -1,
        .dst = t4(2, NISA_F32, 3, dsh3, zero),
        .src = { t4(0, NISA_F32, 3, wrap3, far3) } }), ==, OK | NISA_ERR_BAD_INSN);
    /* index_add into a "0-element" destination. */
    g_assert_cmphex(run1(c, (struct nisa_insn){ .opcode = NISA_INSN_SCATTER_ADD,
        .subop = NISA_IDX_SELECT, .axis = 2,
        .dst = t4(2, NISA_F32, 4, dst4, row4),
        .src = { t4(0, NISA_F32, 4, src4, row4),
                 tn(1, NISA_I64, 0, 1, 0, 0, 0) } }), ==, OK | NISA_ERR_BAD_INSN);
    /* Empty, but its other extents multiply to 2^62: over the bound. */
    g_assert_cmphex(run1(c, (struct nisa_insn){ .opcode = NISA_INSN_FILL,
        .dst = t4(0, NISA_F32, 3, empty, one3) }), ==, OK | NISA_ERR_BAD_INSN);
    /* An empty operand ([0]) still lies inside its slot. */
    {
        struct nisa_tensor e = tn(0, NISA_F32, SLOT_SIZE, 0, 0, 0, 0);

        e.ndim = 1;
        g_assert_cmphex(run1(c, (struct nisa_insn){ .opcode = NISA_INSN_FILL,
            .dst = e }), ==, OK);
        e.offset = SLOT_SIZE + 4;
        g_assert_cmphex(run1(c, (struct nisa_insn){ .opcode = NISA_INSN_FILL,
            .dst = e }), ==, OK | NISA_ERR_SLOT_RANGE);
    }
    assert_alive(c);
    core_stop(c);
}

/*
 * The longest single instructions the spec allows, by broadcasting: each
 * is started, then the card is reset while it runs; the reset must return
 * within RESET_BOUND_US, the descriptor is abandoned, the card works after.
 * Two of them (a packed MATMUL of 2^20 x 2^20 operands and a GATHER of
 * 2^40 indices) also once had QEMU allocate by their size, and abort.
 */
static void test_reset_bound(void)
{
    static const uint32_t row[] = { 0xffffffffu };
    static const uint32_t sq20[] = { 1u << 20, 1u << 20 };
    static const uint32_t sq14[] = { 1u << 14, 1u << 14 };
    static const uint32_t cube10[] = { 1u << 10, 1u << 10, 1u << 10, 1u << 10 };
    static const uint32_t cube10_1[] = { 1u << 10, 1u << 10, 1u << 10, 1 };
    static const uint32_t wide[] = { 4, 1u << 30 };
    static const uint32_t sel[] = { 1u << 10, 1u << 30 };
    static const uint32_t idx1[] = { 1u << 10 };
    static const uint32_t cube8[] = { 1u << 8, 1u << 8, 1u << 8, 1u << 16 };
    static const uint32_t line22[] = { 1u << 10, 1u << 22 };
    static const int64_t z[] = { 0, 0, 0, 0 };
    static const int64_t r1[] = { 0, 1 };
    struct {
        const char *what;
        struct nisa_insn in;
    } cases[] = {
        { "softmax of one row of 2^32-1", { .opcode = NISA_INSN_SOFTMAX,
          .axis = 0, .dst = t4(2, NISA_F32, 1, row, z),
          .src = { t4(0, NISA_F32, 1, row, z) } } },
        { "softmax across 2^20 rows of 2^20", { .opcode = NISA_INSN_SOFTMAX,
          .axis = 0, .dst = t4(2, NISA_F32, 2, sq20, z),
          .src = { t4(0, NISA_F32, 2, sq20, z) } } },
        { "log-softmax along rows", { .opcode = NISA_INSN_SOFTMAX,
          .subop = NISA_SM_LOG_SOFTMAX, .axis = 1,
          .dst = t4(2, NISA_F32, 2, sq20, z),
          .src = { t4(0, NISA_F32, 2, sq20, z) } } },
        { "sum of 2^40 along the last axis", { .opcode = NISA_INSN_REDUCE,
          .axis = -1, .dst = t4(2, NISA_F32, 4, cube10_1, z),
          .src = { t4(0, NISA_F32, 4, cube10, z) } } },
        { "argmax of 2^40 along the first axis", { .opcode = NISA_INSN_REDUCE,
          .subop = NISA_RED_ARGMAX, .axis = 0,
          .dst = t4(2, NISA_I64, 4, (const uint32_t[]){ 1, 1u << 10, 1u << 10,
                                                      1u << 10 }, z),
          .src = { t4(0, NISA_F32, 4, cube10, z) } } },
        { "matmul 2^20 x 2^20 x 2^20, packed", { .opcode = NISA_INSN_MATMUL,
          .dst = t4(2, NISA_F32, 2, sq20, z),
          .src = { t4(0, NISA_F32, 2, sq20, z), t4(1, NISA_BF16, 2, sq20, z) } } },
        { "matmul 2^14 x 2^14 x 2^12, shared by the card's threads",
          { .opcode = NISA_INSN_MATMUL,
          .dst = t4(2, NISA_F32, 2, sq14, z),
          .src = { t4(0, NISA_F32, 2, (const uint32_t[]){ 1u << 14, 1u << 12 }, z),
                   t4(1, NISA_F32, 2, (const uint32_t[]){ 1u << 12, 1u << 14 }, z) } } },
        { "matmul into dst in place, inner 2^30", { .opcode = NISA_INSN_MATMUL,
          .flags = NISA_IF_ACCUMULATE,
          .dst = tn(2, NISA_F32, 0, 1024, 1024, 0, 0),
          .src = { t4(0, NISA_F32, 2, (const uint32_t[]){ 1024, 1u << 30 }, z),
                   t4(1, NISA_F32, 2, (const uint32_t[]){ 1u << 30, 1024 }, r1) } } },
        { "gather of 2^40 indices", { .opcode = NISA_INSN_GATHER,
          .subop = NISA_IDX_ELEMENT, .axis = 3,
          .dst = t4(2, NISA_F32, 4, cube10, z),
          .src = { t4(0, NISA_F32, 4, cube10, z), t4(1, NISA_I64, 4, cube10, z) } } },
        { "index_select of 2^10 rows of 2^30", { .opcode = NISA_INSN_GATHER,
          .subop = NISA_IDX_SELECT, .axis = 0,
          .dst = t4(2, NISA_F32, 2, sel, z),
          .src = { t4(0, NISA_F32, 2, wide, z),
                   t4(1, NISA_I64, 1, idx1, z) } } },
        { "index_add of 2^10 rows of 2^30", { .opcode = NISA_INSN_SCATTER_ADD,
          .subop = NISA_IDX_SELECT, .axis = 0,
          .dst = t4(2, NISA_F32, 2, wide, z),
          .src = { t4(0, NISA_F32, 2, sel, z), t4(1, NISA_I64, 1, idx1, z) } } },
        { "scatter_add of 2^40", { .opcode = NISA_INSN_SCATTER_ADD,
          .subop = NISA_IDX_ELEMENT, .axis = 0,
          .dst = t4(2, NISA_F32, 4, cube10, z),
          .src = { t4(0, NISA_F32, 4, cube10, z), t4(1, NISA_I32, 4, cube10, z) } } },
        { "binary of 2^40 broadcast elements", { .opcode = NISA_INSN_BINARY,
          .subop = NISA_BIN_POW, .dst = t4(2, NISA_BF16, 4, cube8, z),
          .src = { t4(0, NISA_F32, 4, cube8, z), t4(1, NISA_I64, 4, cube8, z) } } },
        { "integer binary of 2^40", { .opcode = NISA_INSN_BINARY,
          .subop = NISA_BIN_MUL, .dst = t4(2, NISA_I64, 4, cube8, z),
          .src = { t4(0, NISA_I64, 4, cube8, z), t4(1, NISA_I32, 4, cube8, z) } } },
        { "normal random numbers into 2^40", { .opcode = NISA_INSN_RANDOM,
          .subop = NISA_RNG_NORMAL, .dst = t4(2, NISA_BF16, 4, cube8, z) } },
        { "random bits into 2^40", { .opcode = NISA_INSN_RANDOM,
          .subop = NISA_RNG_BITS, .dst = t4(2, NISA_I64, 4, cube8, z) } },
        /* One FFTW call of seconds: run beside the worker, which returns. */
        { "fft of 2^10 lines of 2^22", { .opcode = NISA_INSN_FFT,
          .subop = NISA_FFT_FORWARD, .axis = -1, .scalar = 0x3ff0000000000000,
          .dst = t4(2, NISA_C64, 2, line22, z),
          .src = { t4(0, NISA_C64, 2, line22, z) } } },
        { "fft of 2^30 lines of 2^4", { .opcode = NISA_INSN_FFT,
          .subop = NISA_FFT_R2C, .axis = -1, .scalar = 0x3ff0000000000000,
          .dst = t4(2, NISA_C64, 2, (const uint32_t[]){ 1u << 30, 9 }, z),
          .src = { t4(0, NISA_F32, 2, (const uint32_t[]){ 1u << 30, 16 },
                      z) } } },
    };
    Core *c = core_start();

    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        struct nhw_launch_desc d = { .op = NHW_OP_LAUNCH, .nslots = 4,
            .code_off = CODE_OFF, .code_len = sizeof(struct nisa_insn),
            .table_addr = c->table };
        gint64 t0, dt;
        uint32_t slot;

        g_test_message("%s", cases[i].what);
        qpci_memwrite(c->t->dev, c->t->mem, CODE_OFF, &cases[i].in,
                      sizeof(cases[i].in));
        qtest_memwrite(c->t->qts, c->table, c->slots, sizeof(c->slots));
        slot = post_q(c->t, c->q, &d);
        wait_qreg(c->t, c->q, NHW_QREG_STATUS, NHW_QSTATUS_BUSY,
                  NHW_QSTATUS_BUSY);
        g_usleep(100 * 1000);
        /* Still running: none of these ends in 100 ms. */
        g_assert_cmphex(desc_status_q(c->t, c->q, slot), ==, 0);
        t0 = g_get_monotonic_time();
        if (i & 1) {
            qwr(c->t, c->q, NHW_QREG_CTRL, NHW_QCTRL_RESET);
        } else {
            wr(c->t, NHW_REG_CTRL, NHW_CTRL_RESET);
        }
        dt = g_get_monotonic_time() - t0;
        g_test_message("  %s reset took %" G_GINT64_FORMAT " us",
                       i & 1 ? "queue" : "device", dt);
        g_assert_cmpint(dt, <, RESET_BOUND_US);
        g_assert_cmphex(qrd(c->t, c->q, NHW_QREG_STATUS), ==, 0);
        g_assert_cmphex(desc_status_q(c->t, c->q, slot), ==, 0);
        ring_setup_q(c->t, c->q);
        assert_alive(c);
    }
    core_stop(c);
}

/*
 * The kernel is copied out once, and what runs is that copy: here its
 * first instruction overwrites its second (a NOP) with a softmax over
 * 2^32-1 elements. Were the second read again from device memory, the
 * doorbell, which runs this small kernel itself on the vCPU, would run
 * the huge one too, holding the BQL for minutes.
 */
static void test_kernel_copied_once(void)
{
    Core *c = core_start();
    static const uint32_t row[] = { 0xffffffffu };
    static const int64_t z[] = { 0 };
    struct nisa_insn huge = { .opcode = NISA_INSN_SOFTMAX, .axis = 0,
        .dst = t4(2, NISA_F32, 1, row, z), .src = { t4(0, NISA_F32, 1, row, z) } };
    struct nisa_insn k[2] = {
        { .opcode = NISA_INSN_COPY,
          .dst = tn(4, NISA_I32, CODE_OFF + sizeof(struct nisa_insn),
                    sizeof(struct nisa_insn) / 4, 0, 0, 0),
          .src = { tn(1, NISA_I32, 0, sizeof(struct nisa_insn) / 4, 0, 0, 0) } },
        { .opcode = NISA_INSN_NOP },
    };
    struct nisa_insn back;
    gint64 t0;

    /* Slot 4: the kernel's own code, read-write. */
    c->slots[4] = (struct nhw_slot){ .base = 0, .size = SLOT_BASE(0),
        .access = NISA_ACCESS_READ | NISA_ACCESS_WRITE };
    c->nslots = 5;
    put(c, 1, 0, &huge, sizeof(huge));
    t0 = g_get_monotonic_time();
    g_assert_cmphex(run_kernel(c, k, 2), ==, OK);
    g_assert_cmpint(g_get_monotonic_time() - t0, <, 5 * G_USEC_PER_SEC);
    /* The code in memory was rewritten; the run did not see it. */
    qpci_memread(c->t->dev, c->t->mem, CODE_OFF + sizeof(back), &back,
                 sizeof(back));
    g_assert_cmpmem(&back, sizeof(back), &huge, sizeof(huge));
    assert_alive(c);
    core_stop(c);
}

/*
 * Unplugging a card stops what it runs as a reset does. The card sits
 * behind a PCIe root port (the root complex's own slots are not
 * hot-pluggable), which the test programs as firmware would: bus 1,
 * memory windows over libqos' BAR range, bus mastering. device_del plus
 * a system reset completes the removal with no guest to acknowledge it.
 */
static void test_unplug_bound(void)
{
    static const uint32_t row[] = { 0xffffffffu };
    static const int64_t z[] = { 0 };
    struct nisa_insn huge = { .opcode = NISA_INSN_SOFTMAX, .axis = 0,
        .dst = t4(2, NISA_F32, 1, row, z), .src = { t4(0, NISA_F32, 1, row, z) } };
    struct nhw_launch_desc d;
    Core *c = g_new0(Core, 1);
    QPCIDevice *rp;
    QTestState *qts;
    gint64 t0, dt;

    c->t = g_new0(Trn, 1);
    qts = c->t->qts = qtest_init("-machine q35 "
        "-device pcie-root-port,id=rp0,addr=5.0,chassis=1 "
        "-device trainium,id=trn0,bus=rp0,mem-size=64M");
    pc_alloc_init(&c->t->alloc, qts, ALLOC_NO_FLAGS);
    c->t->bus = qpci_new_pc(qts, &c->t->alloc);
    rp = qpci_device_find(c->t->bus, QPCI_DEVFN(5, 0));
    g_assert(rp);
    qpci_config_writeb(rp, PCI_SECONDARY_BUS, 1);
    qpci_config_writeb(rp, PCI_SUBORDINATE_BUS, 1);
    qpci_config_writew(rp, PCI_MEMORY_BASE, 0xe000);
    qpci_config_writew(rp, PCI_MEMORY_LIMIT, 0xfff0);
    qpci_config_writew(rp, PCI_PREF_MEMORY_BASE, 0xe000);
    qpci_config_writew(rp, PCI_PREF_MEMORY_LIMIT, 0xfff0);
    qpci_config_writel(rp, PCI_PREF_BASE_UPPER32, 0);
    qpci_config_writel(rp, PCI_PREF_LIMIT_UPPER32, 0);
    qpci_config_writew(rp, PCI_COMMAND,
                       PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER);
    /* Bus 1, device 0: the bus number goes above devfn in CONFIG_ADDRESS. */
    c->t->dev = qpci_device_find(c->t->bus, (1 << 8) | QPCI_DEVFN(0, 0));
    g_assert(c->t->dev);
    qpci_device_enable(c->t->dev);
    c->t->regs = qpci_iomap(c->t->dev, NHW_BAR_REGS, NULL);
    c->t->mem = qpci_iomap(c->t->dev, NHW_BAR_MEM, &c->t->mem_size);
    g_assert_cmphex(rd(c->t, NHW_REG_ID), ==, NHW_ID_MAGIC);
    core_setup(c);
    g_assert_cmphex(run1(c, (struct nisa_insn){ .opcode = NISA_INSN_NOP }),
                    ==, OK);

    qpci_memwrite(c->t->dev, c->t->mem, CODE_OFF, &huge, sizeof(huge));
    d = (struct nhw_launch_desc){ .op = NHW_OP_LAUNCH, .nslots = 4,
        .code_off = CODE_OFF, .code_len = sizeof(huge), .table_addr = c->table };
    post_q(c->t, c->q, &d);
    wait_qreg(c->t, c->q, NHW_QREG_STATUS, NHW_QSTATUS_BUSY, NHW_QSTATUS_BUSY);
    g_usleep(100 * 1000);
    t0 = g_get_monotonic_time();
    qtest_qmp_device_del_send(qts, "trn0");
    qtest_system_reset_nowait(qts);
    for (;;) {
        QDict *ev = qtest_qmp_eventwait_ref(qts, "DEVICE_DELETED");
        QDict *data = qdict_get_qdict(ev, "data");
        bool ours = data && qdict_haskey(data, "device") &&
                    !strcmp(qdict_get_str(data, "device"), "trn0");

        qobject_unref(ev);
        if (ours) {
            break;
        }
    }
    dt = g_get_monotonic_time() - t0;
    g_test_message("unplug of a busy card took %" G_GINT64_FORMAT " us", dt);
    g_assert_cmpint(dt, <, 2 * RESET_BOUND_US);
    g_free(c->t->dev);
    g_free(rp);
    qpci_free_pc(c->t->bus);
    alloc_destroy(&c->t->alloc);
    qtest_quit(qts);
    g_free(c->t);
    g_free(c);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/trainium/limits/count-overflow", test_count_overflow);
    qtest_add_func("/trainium/limits/reset-bound", test_reset_bound);
    qtest_add_func("/trainium/limits/kernel-copied-once",
                   test_kernel_copied_once);
    qtest_add_func("/trainium/limits/unplug-bound", test_unplug_bound);
    return g_test_run();
}

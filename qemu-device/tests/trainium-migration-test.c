/*
 * qtest for the card's migration beyond the basics of trainium-test:
 * a kernel running when the VM stops (the pause is bounded, the kernel
 * runs again at the destination), and a stream whose queue count is not
 * the card's (refused, not trusted as an array bound).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "trainium-core-qtest.h"
#include "qobject/qjson.h"

/* Attach to the card of a destination QEMU, as the source's @c was. */
static Core *core_attach(QTestState *qts, const Core *c)
{
    Core *d = g_new0(Core, 1);

    *d = *c;
    d->t = g_new0(Trn, 1);
    *d->t = *c->t;
    d->t->qts = qts;
    pc_alloc_init(&d->t->alloc, qts, ALLOC_NO_FLAGS);
    d->t->bus = qpci_new_pc(qts, &d->t->alloc);
    d->t->dev = qpci_device_find(d->t->bus, QPCI_DEVFN(TRN_SLOT, 0));
    g_assert(d->t->dev);
    d->t->regs = qpci_iomap(d->t->dev, NHW_BAR_REGS, NULL);
    d->t->mem = qpci_iomap(d->t->dev, NHW_BAR_MEM, &d->t->mem_size);
    return d;
}

/*
 * A softmax over 2^32-1 elements is running when migration stops the VM:
 * the engines park within the bound of a reset, so the migration
 * completes (it used to wait for the kernel, holding the BQL). At the
 * destination the descriptor, not complete, runs again from its start.
 */
static void test_running_kernel(void)
{
    g_autofree char *sock = g_strdup_printf("/tmp/trainium-migk-%d.sock",
                                            getpid());
    g_autofree char *uri = g_strdup_printf("unix:%s", sock);
    g_autofree char *status = NULL;
    static const uint32_t row[] = { 0xffffffffu };
    struct nisa_insn huge = { .opcode = NISA_INSN_SOFTMAX, .axis = 0,
        .dst = { .slot = 2, .ndim = 1, .shape = { row[0] } },
        .src = { { .slot = 0, .ndim = 1, .shape = { row[0] } } } };
    struct nhw_launch_desc d;
    Core *c = core_start(), *cd;
    QTestState *dst;
    uint32_t slot;
    gint64 t0;

    qpci_memwrite(c->t->dev, c->t->mem, CODE_OFF, &huge, sizeof(huge));
    qtest_memwrite(c->t->qts, c->table, c->slots, sizeof(c->slots));
    d = (struct nhw_launch_desc){ .op = NHW_OP_LAUNCH, .nslots = 4,
        .code_off = CODE_OFF, .code_len = sizeof(huge), .table_addr = c->table };
    slot = post_q(c->t, c->q, &d);
    wait_qreg(c->t, c->q, NHW_QREG_STATUS, NHW_QSTATUS_BUSY, NHW_QSTATUS_BUSY);

    dst = qtest_initf("-machine q35 -device trainium,addr=%x.0,mem-size=64M "
                      "-incoming %s", TRN_SLOT, uri);
    t0 = g_get_monotonic_time();
    status = migrate(c->t->qts, dst, uri);
    g_assert_cmpstr(status, ==, "completed");
    g_test_message("migration took %" G_GINT64_FORMAT " us",
                   g_get_monotonic_time() - t0);
    qtest_qmp_eventwait(dst, "RESUME");

    cd = core_attach(dst, c);
    /* Not complete: no status, HEAD on it, running again. */
    g_assert_cmphex(desc_status_q(cd->t, cd->q, slot), ==, 0);
    g_assert_cmpuint(qrd(cd->t, cd->q, NHW_QREG_HEAD), ==, slot);
    wait_qreg(cd->t, cd->q, NHW_QREG_STATUS, NHW_QSTATUS_BUSY,
              NHW_QSTATUS_BUSY);
    t0 = g_get_monotonic_time();
    qwr(cd->t, cd->q, NHW_QREG_CTRL, NHW_QCTRL_RESET);
    g_assert_cmpint(g_get_monotonic_time() - t0, <, G_USEC_PER_SEC);
    ring_setup_q(cd->t, cd->q);
    g_assert_cmphex(run1(cd, (struct nisa_insn){ .opcode = NISA_INSN_NOP }),
                    ==, OK);
    core_stop(cd);
    core_stop(c);
    unlink(sock);
}

/* Bytes of one queue's state in the stream (trn_queue_vmstate). */
#define QSTATE (8 + 4 + 8 + 4 + 4 * 5 + 8 + 4 + 4 + 1)

/* Big-endian, as the migration stream has it. */
static void put_be32(uint8_t *p, uint32_t v)
{
    p[0] = v >> 24;
    p[1] = v >> 16;
    p[2] = v >> 8;
    p[3] = v;
}

/*
 * The stream's nqueues sized the array of queue states it loaded into
 * and became the card's queue count: a stream saying 200 wrote past the
 * card's 30 queues, one saying 5 (with five queue states, a consistent
 * stream) left a 6-queue card with queue 5 cut off and its error vector
 * on a queue's. It must equal the card's own: the destination refuses.
 */
static void test_bad_nqueues(void)
{
    g_autofree char *file = g_strdup_printf("/tmp/trainium-migq-%d.bin",
                                            getpid());
    g_autofree char *uri = g_strdup_printf("file:%s", file);
    g_autofree char *status = NULL;
    g_autofree uint8_t *buf = NULL;
    uint8_t pat[12];
    gsize len, at;
    QTestState *dst;
    Trn *src = trn_start("mem-size=16M");

    wr(src, NHW_REG_SCRATCH, 0x5eedc0de);
    wr(src, NHW_REG_INT_MASK, 0x0badf00d);
    status = migrate(src->qts, src->qts, uri);
    g_assert_cmpstr(status, ==, "completed");
    trn_stop(src);

    /* scratch, int_status, int_mask, err_queue, err_code, nqueues */
    g_assert(g_file_get_contents(file, (gchar **)&buf, &len, NULL));
    put_be32(pat, 0x5eedc0de);
    put_be32(pat + 4, 0);
    put_be32(pat + 8, 0x0badf00d);
    for (at = 0; at + 24 <= len && memcmp(buf + at, pat, 12); at++) {
    }
    g_assert_cmpuint(at + 24, <=, len);
    put_be32(pat, 6); /* 4 DMA queues + 2 cores */
    g_assert_cmpmem(buf + at + 20, 4, pat, 4);
    /* Say 5 and drop the last queue's state (61 bytes, at 24 + 5 * 61). */
    put_be32(buf + at + 20, 5);
    memmove(buf + at + 24 + 5 * QSTATE, buf + at + 24 + 6 * QSTATE,
            len - (at + 24 + 6 * QSTATE));
    g_assert(g_file_set_contents(file, (gchar *)buf, len - QSTATE, NULL));


    dst = qtest_initf("-machine q35 -device trainium,addr=%x.0,mem-size=16M "
                      "-incoming defer", TRN_SLOT);
    qtest_set_expected_status(dst, EXIT_FAILURE);
    qtest_qmp_assert_success(dst, "{'execute': 'migrate-incoming', "
                             "'arguments': {'uri': %s}}", uri);
    qtest_wait_qemu(dst);
    qtest_quit(dst);
    unlink(file);
}

/* The source's dirty-sync-count, 0 until the migration reports RAM. */
static int64_t dirty_syncs(QTestState *qts)
{
    QDict *rsp = qtest_qmp(qts, "{'execute': 'query-migrate'}");
    QDict *ret = qdict_get_qdict(rsp, "return");
    QDict *ram = ret ? qdict_get_qdict(ret, "ram") : NULL;
    int64_t n = ram && qdict_haskey(ram, "dirty-sync-count") ?
                qdict_get_int(ram, "dirty-sync-count") : 0;

    qobject_unref(rsp);
    return n;
}

/*
 * Device memory the engines write while migration copies RAM reaches the
 * destination: the card writes it directly, not through the memory API,
 * so it marks what it writes dirty. A kernel (FILL) and a COPY write
 * after the first pass over RAM has sent those pages.
 */
static void test_dirty_device_memory(void)
{
    g_autofree char *sock = g_strdup_printf("/tmp/trainium-migd-%d.sock",
                                            getpid());
    g_autofree char *uri = g_strdup_printf("unix:%s", sock);
    g_autofree char *status = NULL;
    Core *c = core_start_with("mem-size=32M"), *cd;
    uint64_t host = guest_alloc(&c->t->alloc, 4096);
    uint64_t churn = guest_alloc(&c->t->alloc, 16 * MiB);
    struct nhw_copy_desc cp = copy_desc(NHW_SPACE_HOST, host, 0,
                                        NHW_SPACE_DEV, 20 * MiB, 0, 4096);
    uint8_t pat[4096], back[4096];
    float f[1024];
    gint64 deadline;
    QTestState *dst;

    fill_pattern(pat, sizeof(pat), 9);
    qtest_memwrite(c->t->qts, host, pat, sizeof(pat));
    ring_setup_q(c->t, 0);
    dst = qtest_initf("-machine q35 -device trainium,addr=%x.0,mem-size=32M "
                      "-incoming %s", TRN_SLOT, uri);
    /*
     * Keep the migration from converging (slow, a tiny downtime, guest RAM
     * written meanwhile) until a pass over all RAM is done and the next
     * one started: the pages written then were sent already.
     */
    qtest_qmp_assert_success(c->t->qts, "{'execute': "
        "'migrate-set-parameters', 'arguments': {'max-bandwidth': %d, "
        "'downtime-limit': 1}}", 32 * 1024 * 1024);
    /* Non-zero RAM first, so that the first pass takes its time too. */
    qtest_memset(c->t->qts, churn, 0x10, 16 * MiB);
    qtest_qmp_assert_success(c->t->qts, "{'execute': 'migrate', "
                             "'arguments': {'uri': %s}}", uri);
    deadline = g_get_monotonic_time() + 60 * G_USEC_PER_SEC;
    while (dirty_syncs(c->t->qts) < 3) {
        if (g_get_monotonic_time() > deadline) {
            QDict *rsp = qtest_qmp(c->t->qts, "{'execute': 'query-migrate'}");
            g_autoptr(GString) js = qobject_to_json(QOBJECT(rsp));
            g_test_message("the migration converged too early: %s", js->str);
            g_assert_not_reached();
        }
        /* Not zero pages: those cost the migration nothing. */
        qtest_memset(c->t->qts, churn, 0x11 + (dirty_syncs(c->t->qts) & 1),
                     16 * MiB);
        g_usleep(10 * 1000);
    }
    {
        QDict *rsp = qtest_qmp(c->t->qts, "{'execute': 'query-migrate'}");
        g_test_message("writing during migration: %s, dirty syncs %" PRId64
                       ", queue status 0x%x",
                       qdict_get_try_str(qdict_get_qdict(rsp, "return"), "status"),
                       dirty_syncs(c->t->qts), qrd(c->t, c->q, NHW_QREG_STATUS));
        qobject_unref(rsp);
    }
    g_assert_cmphex(run1(c, (struct nisa_insn){ .opcode = NISA_INSN_FILL,
        .scalar = f64bits(7.0), .dst = tn(0, NISA_F32, 0, 1024, 0, 0, 0) }),
        ==, OK);
    g_assert_cmphex(submit_q(c->t, 0, &cp), ==, NHW_DESC_DONE);
    qtest_qmp_assert_success(c->t->qts, "{'execute': "
        "'migrate-set-parameters', 'arguments': {'max-bandwidth': %" PRId64
        ", 'downtime-limit': 10000}}", (int64_t)1 << 40);
    status = migrate_wait(c->t->qts);
    g_assert_cmpstr(status, ==, "completed");
    qtest_qmp_eventwait(dst, "RESUME");

    cd = core_attach(dst, c);
    get(cd, 0, 0, f, sizeof(f));
    for (unsigned i = 0; i < 1024; i++) {
        g_assert_cmpfloat(f[i], ==, 7.0f);
    }
    qpci_memread(cd->t->dev, cd->t->mem, 20 * MiB, back, sizeof(back));
    g_assert_cmpmem(back, sizeof(back), pat, sizeof(pat));
    core_stop(cd);
    core_stop(c);
    unlink(sock);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/trainium/migration/running-kernel", test_running_kernel);
    qtest_add_func("/trainium/migration/bad-nqueues", test_bad_nqueues);
    qtest_add_func("/trainium/migration/dirty-device-memory",
                   test_dirty_device_memory);
    return g_test_run();
}

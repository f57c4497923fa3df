/*
 * QTest of the card-to-card links (docs/hardware.md "Links"): several
 * cards of one trainium-fabric in one machine; their registers for ring
 * and mesh, link copies and reductions (bit-exact against the same BINARY
 * run on a core), bounds on both sides, malformed descriptors, an absent
 * peer, a peer unplugged in mid-transfer and plugged again, queue and
 * device reset during a transfer, and the property errors.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "trainium-core-qtest.h"

#define MAX_CARDS 4
#define RESET_BOUND_US (1 * G_USEC_PER_SEC)

typedef struct Fab {
    QTestState *qts;
    QPCIBus *bus;
    QGuestAllocator alloc;
    unsigned n;
    Trn *t[MAX_CARDS];
} Fab;

/*
 * A machine with a fabric (@fabric: its properties) and @n cards at slots
 * 4, 5, ..., card i of rank @ranks[i] (i if NULL), @mem bytes each.
 */
static Fab *fab_start(const char *fabric, unsigned n, const unsigned *ranks,
                      const char *mem)
{
    GString *cmd = g_string_new("-machine q35 ");
    Fab *f = g_new0(Fab, 1);

    g_string_append_printf(cmd, "-device trainium-fabric,id=nl0,%s", fabric);
    for (unsigned i = 0; i < n; i++) {
        g_string_append_printf(cmd, " -device trainium,id=trn%u,addr=%x.0,"
                               "mem-size=%s,fabric=nl0,fabric-rank=%u", i,
                               4 + i, mem, ranks ? ranks[i] : i);
    }
    f->qts = qtest_init(cmd->str);
    g_string_free(cmd, true);
    pc_alloc_init(&f->alloc, f->qts, ALLOC_NO_FLAGS);
    f->bus = qpci_new_pc(f->qts, &f->alloc);
    f->n = n;
    for (unsigned i = 0; i < n; i++) {
        Trn *t = f->t[i] = g_new0(Trn, 1);

        t->qts = f->qts;
        t->bus = f->bus;
        t->dev = qpci_device_find(f->bus, QPCI_DEVFN(4 + i, 0));
        g_assert(t->dev);
        qpci_device_enable(t->dev);
        t->regs = qpci_iomap(t->dev, NHW_BAR_REGS, NULL);
        t->mem = qpci_iomap(t->dev, NHW_BAR_MEM, &t->mem_size);
    }
    return f;
}

static void fab_stop(Fab *f)
{
    for (unsigned i = 0; i < f->n; i++) {
        g_free(f->t[i]->dev);
        g_free(f->t[i]);
    }
    qpci_free_pc(f->bus);
    alloc_destroy(&f->alloc);
    qtest_quit(f->qts);
    g_free(f);
}

static unsigned link_q(Trn *t, unsigned l)
{
    uint32_t v = rd(t, NHW_REG_QUEUES);

    return NHW_QUEUES_DMA(v) + NHW_QUEUES_CORES(v) + l;
}

/* Queue @q of card @t ready (its ring allocated once, from @f). */
static void fab_ring(Fab *f, Trn *t, unsigned q)
{
    if (!t->ring[q]) {
        t->ring[q] = ROUND_UP(guest_alloc(&f->alloc, RING_ENTRIES *
                                          NHW_DESC_SIZE + 64), NHW_RING_ALIGN);
    }
    ring_setup_q(t, q);
}

static struct nhw_link_desc link_desc(uint8_t reduce, uint8_t dtype,
                                      uint64_t src, uint64_t dst, uint64_t len)
{
    return (struct nhw_link_desc){ .op = NHW_OP_LINK, .flags = NHW_DESC_F_IRQ,
        .reduce = reduce, .dtype = dtype, .tag = 0x4c4e,
        .src_off = src, .dst_off = dst, .len = len };
}

/* Run @d on link @l of card @t; the status word. */
static uint32_t link_run(Fab *f, Trn *t, unsigned l, struct nhw_link_desc d)
{
    unsigned q = link_q(t, l);

    if (!(qrd(t, q, NHW_QREG_STATUS) & NHW_QSTATUS_ENABLED)) {
        fab_ring(f, t, q);
    }
    return submit_q(t, q, &d);
}

static void mem_put(Trn *t, uint64_t off, const void *p, size_t n)
{
    qtest_bufwrite(t->qts, t->mem.addr + off, p, n);
}

static void mem_get(Trn *t, uint64_t off, void *p, size_t n)
{
    qtest_bufread(t->qts, t->mem.addr + off, p, n);
}

#define ST(err) (NHW_DESC_DONE | (err))

/* ---- Registers --------------------------------------------------------- */

static void check_links(Trn *t, unsigned rank, unsigned size, unsigned id,
                        unsigned nlinks, const unsigned *peers)
{
    uint32_t fab = rd(t, NHW_REG_FABRIC);

    g_assert_cmpuint(NHW_QUEUES_LINKS(rd(t, NHW_REG_QUEUES)), ==, nlinks);
    g_assert_cmpuint(NHW_FABRIC_RANK(fab), ==, rank);
    g_assert_cmpuint(NHW_FABRIC_SIZE(fab), ==, size);
    g_assert_cmpuint(NHW_FABRIC_ID(fab), ==, id);
    g_assert_cmphex(rd(t, NHW_REG_CAPS) & NHW_CAP_LINK, ==,
                    nlinks ? NHW_CAP_LINK : 0);
    for (unsigned l = 0; l < NHW_MAX_LINKS; l++) {
        g_assert_cmphex(rd(t, NHW_REG_LINK(l)), ==,
                        l < nlinks ? peers[l] | NHW_LINK_UP : 0);
    }
}

static void test_regs_ring(void)
{
    Fab *f = fab_start("fabric-id=7,size=3", 3, NULL, "16M");

    g_assert_cmphex(rd(f->t[0], NHW_REG_VERSION), ==, NHW_MODEL_VERSION);
    for (unsigned r = 0; r < 3; r++) {
        unsigned peers[2] = { (r + 1) % 3, (r + 2) % 3 };

        check_links(f->t[r], r, 3, 7, 2, peers);
        /* Queue numbering: the link queues follow the cores' and work. */
        g_assert_cmpuint(link_q(f->t[r], 0), ==, 4 + 2);
    }
    fab_stop(f);

    /* Two cards: both links of each reach the other one. */
    f = fab_start("size=2", 2, NULL, "16M");
    check_links(f->t[0], 0, 2, 1, 2, (const unsigned[]){ 1, 1 });
    check_links(f->t[1], 1, 2, 1, 2, (const unsigned[]){ 0, 0 });
    fab_stop(f);

    /* One card: a fabric of one has no links. */
    f = fab_start("size=1", 1, NULL, "16M");
    check_links(f->t[0], 0, 1, 1, 0, NULL);
    fab_stop(f);
}

static void test_regs_mesh(void)
{
    Fab *f = fab_start("fabric-id=65535,size=4,topology=mesh", 4, NULL,
                       "16M");

    for (unsigned r = 0; r < 4; r++) {
        unsigned peers[3] = { (r + 1) % 4, (r + 2) % 4, (r + 3) % 4 };

        check_links(f->t[r], r, 4, 65535, 3, peers);
    }
    fab_stop(f);
}

/* A card in no fabric: no link queue, FABRIC 0, no CAP_LINK. */
static void test_regs_alone(void)
{
    Trn *t = trn_start("mem-size=16M");

    g_assert_cmpuint(NHW_QUEUES_LINKS(rd(t, NHW_REG_QUEUES)), ==, 0);
    g_assert_cmphex(rd(t, NHW_REG_FABRIC), ==, 0);
    g_assert_cmphex(rd(t, NHW_REG_CAPS) & NHW_CAP_LINK, ==, 0);
    g_assert_cmphex(rd(t, NHW_REG_LINK(0)), ==, 0);
    trn_stop(t);
}

/* ---- Copies ------------------------------------------------------------ */

static void test_copy(void)
{
    Fab *f = fab_start("size=3", 3, NULL, "16M");
    const size_t len = 3 * MiB + 5;      /* several chunks, odd length */
    g_autofree uint8_t *pat = g_malloc(len);
    g_autofree uint8_t *back = g_malloc(len + 2);
    uint8_t guard[2] = { 0xa5, 0x5a };

    fill_pattern(pat, len, 3);
    mem_put(f->t[0], 0x100000, pat, len);
    for (unsigned r = 1; r < 3; r++) {
        mem_put(f->t[r], 0x200000 - 1, guard, 1);
        mem_put(f->t[r], 0x200000 + len, guard + 1, 1);
    }
    /* Link 0 of rank 0 reaches rank 1, link 1 rank 2. */
    g_assert_cmphex(link_run(f, f->t[0], 0, link_desc(NISA_REDUCE_NONE, 0,
                    0x100000, 0x200000, len)), ==, ST(0));
    g_assert_cmphex(link_run(f, f->t[0], 1, link_desc(NISA_REDUCE_NONE, 0,
                    0x100001, 0x200000, len - 1)), ==, ST(0));
    mem_get(f->t[1], 0x200000 - 1, back, len + 2);
    g_assert_cmphex(back[0], ==, 0xa5);
    g_assert(!memcmp(back + 1, pat, len));
    g_assert_cmphex(back[len + 1], ==, 0x5a);
    mem_get(f->t[2], 0x200000 - 1, back, len + 2);
    g_assert_cmphex(back[0], ==, 0xa5);
    g_assert(!memcmp(back + 1, pat + 1, len - 1));
    g_assert_cmphex(back[len], ==, 0);              /* not written */
    g_assert_cmphex(back[len + 1], ==, 0x5a);

    /* Rank 2's link 0 wraps around to rank 0. */
    g_assert_cmphex(link_run(f, f->t[2], 0, link_desc(NISA_REDUCE_NONE, 0,
                    0x200000, 0x800000, 4096)), ==, ST(0));
    mem_get(f->t[0], 0x800000, back, 4096);
    g_assert(!memcmp(back, pat + 1, 4096));

    /* Length 0 completes at once; so does a NOP on a link queue. */
    g_assert_cmphex(link_run(f, f->t[1], 0, link_desc(NISA_REDUCE_NONE, 0,
                    0, 0, 0)), ==, ST(0));
    {
        struct nhw_link_desc nop = { .op = NHW_OP_NOP };

        g_assert_cmphex(link_run(f, f->t[1], 1, nop), ==, ST(0));
    }
    /* The link queue's interrupt bit is its own. */
    g_assert(rd(f->t[0], NHW_REG_INT_STATUS) & (1u << link_q(f->t[0], 1)));
    fab_stop(f);
}

/* ---- Reductions ---------------------------------------------------------- */

static const struct {
    uint8_t reduce;
    uint16_t binary;
} reduces[] = {
    { NISA_REDUCE_SUM, NISA_BIN_ADD }, { NISA_REDUCE_PROD, NISA_BIN_MUL },
    { NISA_REDUCE_MAX, NISA_BIN_MAX }, { NISA_REDUCE_MIN, NISA_BIN_MIN },
};

/*
 * Random bit patterns (every class: NaNs, infinities, subnormals, zeros)
 * mixed with ordinary values of either sign, so that sums and products
 * round, overflow and propagate NaN.
 */
static void rand_elems(uint8_t *p, size_t n, unsigned esize, GRand *r)
{
    for (size_t i = 0; i < n; i++) {
        float x = (float)g_rand_double_range(r, -300, 300);
        uint32_t bits;

        memcpy(&bits, &x, 4);
        if (g_rand_int_range(r, 0, 4) == 0) {
            bits = g_rand_int(r);
        }
        if (esize == 4) {
            memcpy(p + i * 4, &bits, 4);
        } else {
            uint16_t h = esize == 2 && g_rand_boolean(r) ? bits >> 16 :
                         (uint16_t)g_rand_int(r);

            memcpy(p + i * 2, &h, 2);
        }
    }
}

/*
 * dst (rank 1) = dst op src (rank 0) over the link, against a core of
 * rank 1 computing BINARY op of the same operands: the same bits.
 * 140000 elements: more than one reduction chunk.
 */
static void test_reduce(void)
{
    static const uint8_t dtypes[] = { NISA_F32, NISA_BF16, NISA_F16 };
    const uint64_t n = 140000;
    Fab *f = fab_start("size=2", 2, NULL, "32M");
    Core c = { .t = f->t[1] };
    GRand *r = g_rand_new_with_seed(14);

    c.q = NHW_QUEUES_DMA(rd(c.t, NHW_REG_QUEUES));
    fab_ring(f, c.t, c.q);
    c.table = guest_alloc(&f->alloc, sizeof(c.slots));
    for (unsigned i = 0; i < 4; i++) {
        c.slots[i] = (struct nhw_slot){ .base = SLOT_BASE(i),
            .size = SLOT_SIZE, .access = NISA_ACCESS_READ | NISA_ACCESS_WRITE };
    }
    c.nslots = 4;

    for (size_t d = 0; d < ARRAY_SIZE(dtypes); d++) {
        unsigned es = nisa_dtype_size(dtypes[d]);
        size_t bytes = n * es;
        g_autofree uint8_t *a = g_malloc(bytes);
        g_autofree uint8_t *b = g_malloc(bytes);
        g_autofree uint8_t *want = g_malloc(bytes);
        g_autofree uint8_t *got = g_malloc(bytes);

        for (size_t o = 0; o < ARRAY_SIZE(reduces); o++) {
            struct nisa_insn in = { .opcode = NISA_INSN_BINARY,
                .subop = reduces[o].binary, .alpha = f64bits(1.0),
                .dst = tn(2, dtypes[d], 0, n, 0, 0, 0),
                .src = { tn(0, dtypes[d], 0, n, 0, 0, 0),
                         tn(1, dtypes[d], 0, n, 0, 0, 0) } };

            g_test_message("reduce %u dtype %u", reduces[o].reduce,
                           dtypes[d]);
            rand_elems(a, n, es, r);
            rand_elems(b, n, es, r);
            mem_put(c.t, SLOT_BASE(0), a, bytes);
            mem_put(c.t, SLOT_BASE(1), b, bytes);
            g_assert_cmphex(run1(&c, in), ==, OK);
            mem_get(c.t, SLOT_BASE(2), want, bytes);

            /* src at an offset that is not SLOT_BASE: any aligned one. */
            mem_put(f->t[0], 0x30000 + es, b, bytes);
            g_assert_cmphex(link_run(f, f->t[0], 0, link_desc(
                            reduces[o].reduce, dtypes[d], 0x30000 + es,
                            SLOT_BASE(0), bytes)), ==, ST(0));
            mem_get(c.t, SLOT_BASE(0), got, bytes);
            for (size_t i = 0; i < bytes; i++) {
                if (got[i] != want[i]) {
                    g_test_message("element %zu differs", i / es);
                    g_assert_cmphex(got[i], ==, want[i]);
                }
            }
        }
    }
    g_rand_free(r);
    fab_stop(f);
}

/* ---- Errors -------------------------------------------------------------- */

static void test_bounds(void)
{
    /* Rank 0 has 32 MiB, rank 1 16 MiB. */
    QTestState *qts = qtest_init("-machine q35 "
        "-device trainium-fabric,id=nl0,size=2 "
        "-device trainium,addr=4.0,mem-size=32M,fabric=nl0,fabric-rank=0 "
        "-device trainium,addr=5.0,mem-size=16M,fabric=nl0,fabric-rank=1");
    Fab *f = g_new0(Fab, 1);
    const uint64_t m16 = 16 * MiB, m32 = 32 * MiB;
    uint8_t guard[8] = { 1, 2, 3, 4, 5, 6, 7, 8 }, back[8];

    f->qts = qts;
    pc_alloc_init(&f->alloc, qts, ALLOC_NO_FLAGS);
    f->bus = qpci_new_pc(qts, &f->alloc);
    f->n = 2;
    for (unsigned i = 0; i < 2; i++) {
        Trn *t = f->t[i] = g_new0(Trn, 1);

        t->qts = qts;
        t->bus = f->bus;
        t->dev = qpci_device_find(f->bus, QPCI_DEVFN(4 + i, 0));
        qpci_device_enable(t->dev);
        t->regs = qpci_iomap(t->dev, NHW_BAR_REGS, NULL);
        t->mem = qpci_iomap(t->dev, NHW_BAR_MEM, &t->mem_size);
    }
    mem_put(f->t[1], m16 - 8, guard, 8);
    /* Destination past the peer's (smaller) memory: nothing written. */
    g_assert_cmphex(link_run(f, f->t[0], 0, link_desc(NISA_REDUCE_NONE, 0,
                    0, m16 - 4, 8)), ==, ST(NISA_ERR_DEV_RANGE));
    g_assert_cmphex(link_run(f, f->t[0], 0, link_desc(NISA_REDUCE_SUM,
                    NISA_F32, 0, m16 - 4, 8)), ==, ST(NISA_ERR_DEV_RANGE));
    g_assert_cmphex(link_run(f, f->t[0], 0, link_desc(NISA_REDUCE_NONE, 0,
                    0, UINT64_MAX - 3, 8)), ==, ST(NISA_ERR_DEV_RANGE));
    mem_get(f->t[1], m16 - 8, back, 8);
    g_assert(!memcmp(back, guard, 8));
    /* The last bytes of both are fine. */
    g_assert_cmphex(link_run(f, f->t[0], 0, link_desc(NISA_REDUCE_NONE, 0,
                    m32 - 8, m16 - 8, 8)), ==, ST(0));
    /* Source past this card's memory, or wrapping. */
    g_assert_cmphex(link_run(f, f->t[0], 0, link_desc(NISA_REDUCE_NONE, 0,
                    m32 - 4, 0, 8)), ==, ST(NISA_ERR_DEV_RANGE));
    g_assert_cmphex(link_run(f, f->t[0], 1, link_desc(NISA_REDUCE_NONE, 0,
                    UINT64_MAX - 3, 0, 8)), ==, ST(NISA_ERR_DEV_RANGE));
    /* Rank 1's (16 MiB) source bound, into rank 0's larger memory. */
    g_assert_cmphex(link_run(f, f->t[1], 0, link_desc(NISA_REDUCE_NONE, 0,
                    m16 - 4, m16, 8)), ==, ST(NISA_ERR_DEV_RANGE));
    g_assert_cmphex(link_run(f, f->t[1], 0, link_desc(NISA_REDUCE_NONE, 0,
                    m16 - 8, m32 - 8, 8)), ==, ST(0));
    fab_stop(f);
}

static void test_bad_desc(void)
{
    Fab *f = fab_start("size=2", 2, NULL, "16M");
    Trn *t = f->t[0];
    struct nhw_link_desc d;
    struct nhw_copy_desc copy = copy_desc(NHW_SPACE_DEV, 0, 0, NHW_SPACE_DEV,
                                          0, 4096, 64);
    struct nhw_launch_desc launch = { .op = NHW_OP_LAUNCH };
    uint8_t ones[64], back[64];

    /* Source bytes that a descriptor executing would leave at 0..63. */
    memset(ones, 0x40, sizeof(ones));
    mem_put(t, 0, ones, sizeof(ones));
#define BAD(field, val, err) do {                                           \
        d = link_desc(NISA_REDUCE_SUM, NISA_F32, 0, 0, 64);                  \
        d.field = (val);                                                     \
        g_test_message("%s = %s", #field, #val);                            \
        g_assert_cmphex(link_run(f, t, 0, d), ==, ST(err));                  \
    } while (0)
    BAD(rsvd[0], 1, NISA_ERR_BAD_DESC);
    BAD(rsvd[1], 1, NISA_ERR_BAD_DESC);
    BAD(rsvd[2], 1ull << 63, NISA_ERR_BAD_DESC);
    BAD(rsvd2, 1, NISA_ERR_BAD_DESC);
    BAD(flags, 0x80, NISA_ERR_BAD_DESC);
    BAD(reduce, NISA_NUM_LINK_REDUCE, NISA_ERR_BAD_DESC);
    BAD(reduce, 0xff, NISA_ERR_BAD_DESC);
    BAD(dtype, NISA_I32, NISA_ERR_BAD_DESC);
    BAD(dtype, NISA_I64, NISA_ERR_BAD_DESC);
    BAD(dtype, NISA_BOOL, NISA_ERR_BAD_DESC);
    BAD(dtype, 0xff, NISA_ERR_BAD_DESC);
    BAD(len, 62, NISA_ERR_BAD_DESC);          /* not whole elements */
    BAD(src_off, 2, NISA_ERR_BAD_DESC);
    BAD(dst_off, 6, NISA_ERR_BAD_DESC);
    /* A store names no dtype. */
    d = link_desc(NISA_REDUCE_NONE, NISA_BF16, 0, 0, 64);
    g_assert_cmphex(link_run(f, t, 0, d), ==, ST(NISA_ERR_BAD_DESC));
    /* A misaligned store is fine: bytes. */
    g_assert_cmphex(link_run(f, t, 0, link_desc(NISA_REDUCE_NONE, 0, 3, 5,
                    7)), ==, ST(0));
    /* bf16 alignment is 2. */
    g_assert_cmphex(link_run(f, t, 0, link_desc(NISA_REDUCE_MAX, NISA_BF16,
                    2, 6, 2)), ==, ST(0));
#undef BAD
    /* Nothing of the bad ones; the good ones wrote 5..11 only. */
    mem_get(f->t[1], 0, back, 64);
    for (unsigned i = 0; i < 64; i++) {
        g_assert_cmphex(back[i], ==, i >= 5 && i < 12 ? 0x40 : 0);
    }

    /* LINK on a DMA or core queue, COPY or LAUNCH on a link queue. */
    fab_ring(f, t, 0);
    d = link_desc(NISA_REDUCE_NONE, 0, 0, 0, 64);
    g_assert_cmphex(submit_q(t, 0, &d), ==, ST(NISA_ERR_BAD_OP));
    fab_ring(f, t, 4);
    g_assert_cmphex(submit_q(t, 4, &d), ==, ST(NISA_ERR_BAD_OP));
    g_assert_cmphex(submit_q(t, link_q(t, 0), &copy), ==,
                    ST(NISA_ERR_BAD_OP));
    g_assert_cmphex(submit_q(t, link_q(t, 0), &launch), ==,
                    ST(NISA_ERR_BAD_OP));
    /* A failed descriptor does not halt the link queue. */
    g_assert_cmphex(link_run(f, t, 0, link_desc(NISA_REDUCE_NONE, 0, 0, 0,
                    8)), ==, ST(0));
    fab_stop(f);
}

/* Ranks 0 and 1 of a fabric of 3: rank 0's link 1 (to rank 2) is down. */
static void test_peer_absent(void)
{
    Fab *f = fab_start("size=3", 2, NULL, "16M");
    uint32_t l1 = rd(f->t[0], NHW_REG_LINK(1));

    g_assert_cmphex(l1, ==, 2);                       /* peer 2, not UP */
    g_assert_cmphex(rd(f->t[0], NHW_REG_LINK(0)), ==, 1 | NHW_LINK_UP);
    g_assert_cmphex(rd(f->t[1], NHW_REG_LINK(0)), ==, 2);
    g_assert_cmphex(link_run(f, f->t[0], 1, link_desc(NISA_REDUCE_NONE, 0,
                    0, 0, 64)), ==, ST(NISA_ERR_PEER));
    g_assert_cmphex(link_run(f, f->t[1], 0, link_desc(NISA_REDUCE_SUM,
                    NISA_F16, 0, 0, 64)), ==, ST(NISA_ERR_PEER));
    /* Checks of the descriptor come first. */
    g_assert_cmphex(link_run(f, f->t[0], 1, link_desc(NISA_REDUCE_SUM,
                    NISA_F16, 0, 0, 3)), ==, ST(NISA_ERR_BAD_DESC));
    /* And the link that is up still works. */
    g_assert_cmphex(link_run(f, f->t[0], 0, link_desc(NISA_REDUCE_NONE, 0,
                    0, 0, 64)), ==, ST(0));
    /* The error register names the queue and the error. */
    fab_stop(f);
}

/* ---- Reset and unplug ------------------------------------------------- */

static void test_queue_reset(void)
{
    Fab *f = fab_start("size=2", 2, NULL, "128M");
    Trn *t = f->t[0];
    unsigned q = link_q(t, 0);
    struct nhw_link_desc big = link_desc(NISA_REDUCE_SUM, NISA_F32, 0, 0,
                                         128 * MiB);
    uint8_t pat[256], back[256];
    gint64 t0, dt;

    fab_ring(f, t, q);
    post_q(t, q, &big);
    post_q(t, q, &big);
    wait_qreg(t, q, NHW_QREG_STATUS, NHW_QSTATUS_BUSY, NHW_QSTATUS_BUSY);
    t0 = g_get_monotonic_time();
    qwr(t, q, NHW_QREG_CTRL, NHW_QCTRL_RESET);
    dt = g_get_monotonic_time() - t0;
    g_test_message("queue reset during a link reduce took %" G_GINT64_FORMAT
                   " us", dt);
    g_assert_cmpint(dt, <, RESET_BOUND_US);
    g_assert_cmphex(qrd(t, q, NHW_QREG_STATUS), ==, 0);
    g_assert_cmphex(qrd(t, q, NHW_QREG_HEAD), ==, 0);
    /* The queue works again once set up. */
    fill_pattern(pat, sizeof(pat), 9);
    mem_put(t, 0x1000, pat, sizeof(pat));
    g_assert_cmphex(link_run(f, t, 0, link_desc(NISA_REDUCE_NONE, 0, 0x1000,
                    0x2000, sizeof(pat))), ==, ST(0));
    mem_get(f->t[1], 0x2000, back, sizeof(back));
    g_assert(!memcmp(back, pat, sizeof(pat)));

    /*
     * A reset of the card at the far end does not stop a transfer into
     * it: device memory is no part of a reset, and the engine is the
     * sender's.
     */
    post_q(t, q, &big);
    wait_qreg(t, q, NHW_QREG_STATUS, NHW_QSTATUS_BUSY, NHW_QSTATUS_BUSY);
    wr(f->t[1], NHW_REG_CTRL, NHW_CTRL_RESET);
    {
        gint64 deadline = g_get_monotonic_time() + 60 * G_USEC_PER_SEC;

        while (qrd(t, q, NHW_QREG_HEAD) != t->tail[q]) {
            g_assert(g_get_monotonic_time() < deadline);
            g_usleep(1000);
        }
    }
    g_assert_cmphex(desc_status_q(t, q, t->tail[q] - 1), ==, ST(0));
    fab_stop(f);
}

/* The PCIe capability of root port @rp, and its slot control value. */
static void slot_power(QPCIDevice *rp, bool on)
{
    uint8_t cap = qpci_find_capability(rp, PCI_CAP_ID_EXP, 0);
    uint16_t ctl = qpci_config_readw(rp, cap + PCI_EXP_SLTCTL);

    ctl &= ~(PCI_EXP_SLTCTL_PCC | PCI_EXP_SLTCTL_PIC);
    ctl |= on ? PCI_EXP_SLTCTL_PWR_ON | PCI_EXP_SLTCTL_PWR_IND_ON
              : PCI_EXP_SLTCTL_PWR_OFF | PCI_EXP_SLTCTL_PWR_IND_OFF;
    qpci_config_writew(rp, cap + PCI_EXP_SLTCTL, ctl);
}

static void wait_deleted(QTestState *qts, const char *id)
{
    for (;;) {
        QDict *ev = qtest_qmp_eventwait_ref(qts, "DEVICE_DELETED");
        QDict *data = qdict_get_qdict(ev, "data");
        bool ours = data && qdict_haskey(data, "device") &&
                    !strcmp(qdict_get_str(data, "device"), id);

        qobject_unref(ev);
        if (ours) {
            return;
        }
    }
}

/*
 * Rank 1 sits behind a hot-plug root port; rank 0 reduces 256 MiB into it,
 * and rank 1 is unplugged (device_del, the slot powered off as a guest
 * does) while that runs: the descriptor ends with PEER, so do the ones
 * queued behind it, and QEMU goes on. A card plugged back at rank 1 brings
 * the link up, and a copy over it arrives.
 */
static void test_unplug(void)
{
    /* Native PCIe hot-plug (q35 defaults to ACPI's, which needs a guest). */
    QTestState *qts = qtest_init("-machine q35 "
        "-global ICH9-LPC.acpi-pci-hotplug-with-bridge-support=off "
        "-device trainium-fabric,id=nl0,size=2 "
        "-device trainium,id=trn0,addr=4.0,mem-size=256M,fabric=nl0,"
        "fabric-rank=0 "
        "-device pcie-root-port,id=rp0,addr=5.0,chassis=1 "
        "-device trainium,id=trn1,bus=rp0,mem-size=256M,fabric=nl0,"
        "fabric-rank=1");
    Fab *f = g_new0(Fab, 1);
    Trn *t = g_new0(Trn, 1), *p = g_new0(Trn, 1);
    struct nhw_link_desc big = link_desc(NISA_REDUCE_SUM, NISA_F32, 0, 0,
                                         256 * MiB);
    QPCIDevice *rp;
    uint32_t slot[3];
    unsigned q;
    uint8_t pat[4096], back[4096];
    uint64_t host;
    struct nhw_copy_desc c;

    f->qts = t->qts = p->qts = qts;
    pc_alloc_init(&f->alloc, qts, ALLOC_NO_FLAGS);
    f->bus = t->bus = p->bus = qpci_new_pc(qts, &f->alloc);
    f->t[0] = t;
    f->n = 1;
    t->dev = qpci_device_find(f->bus, QPCI_DEVFN(4, 0));
    qpci_device_enable(t->dev);
    t->regs = qpci_iomap(t->dev, NHW_BAR_REGS, NULL);  /* BAR2 unmapped */
    g_assert_cmphex(rd(t, NHW_REG_LINK(0)), ==, 1 | NHW_LINK_UP);

    q = link_q(t, 0);
    fab_ring(f, t, q);
    for (unsigned i = 0; i < 3; i++) {
        slot[i] = post_q(t, q, &big);
    }
    wait_qreg(t, q, NHW_QREG_STATUS, NHW_QSTATUS_BUSY, NHW_QSTATUS_BUSY);
    rp = qpci_device_find(f->bus, QPCI_DEVFN(5, 0));
    g_assert(rp);
    qtest_qmp_device_del_send(qts, "trn1");
    slot_power(rp, false);
    wait_deleted(qts, "trn1");
    {
        gint64 deadline = g_get_monotonic_time() + WAIT_US;

        while (qrd(t, q, NHW_QREG_HEAD) != t->tail[q]) {
            g_assert(g_get_monotonic_time() < deadline);
            g_usleep(1000);
        }
    }
    /* The one running when the peer left, and those behind it. */
    for (unsigned i = 0; i < 3; i++) {
        g_assert_cmphex(desc_status_q(t, q, slot[i]), ==,
                        ST(NISA_ERR_PEER));
    }
    g_assert_cmphex(rd(t, NHW_REG_LINK(0)), ==, 1);
    g_assert_cmphex(rd(t, NHW_REG_ERR_CODE), ==, 0);   /* no queue halted */
    qtest_qmp_assert_success(qts, "{'execute': 'query-status'}");

    /* Plug a card back at rank 1, power the slot on as a guest would. */
    qtest_qmp_assert_success(qts, "{'execute': 'device_add', 'arguments': {"
        "'driver': 'trainium', 'id': 'trn1b', 'bus': 'rp0', "
        "'mem-size': 16777216, 'fabric': 'nl0', 'fabric-rank': 1}}");
    slot_power(rp, true);
    g_assert_cmphex(rd(t, NHW_REG_LINK(0)), ==, 1 | NHW_LINK_UP);
    /* Bus 1 behind the port, its windows at 0xf0000000. */
    qpci_config_writeb(rp, PCI_SECONDARY_BUS, 1);
    qpci_config_writeb(rp, PCI_SUBORDINATE_BUS, 1);
    qpci_config_writew(rp, PCI_MEMORY_BASE, 0xf000);
    qpci_config_writew(rp, PCI_MEMORY_LIMIT, 0xfff0);
    qpci_config_writew(rp, PCI_PREF_MEMORY_BASE, 0xf000);
    qpci_config_writew(rp, PCI_PREF_MEMORY_LIMIT, 0xfff0);
    qpci_config_writel(rp, PCI_PREF_BASE_UPPER32, 0);
    qpci_config_writel(rp, PCI_PREF_LIMIT_UPPER32, 0);
    qpci_config_writew(rp, PCI_COMMAND,
                       PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER);
    p->dev = qpci_device_find(f->bus, (1 << 8) | QPCI_DEVFN(0, 0));
    g_assert(p->dev);
    qpci_device_enable(p->dev);
    f->bus->mmio_alloc_ptr = MAX(f->bus->mmio_alloc_ptr, 0xf0000000);
    p->regs = qpci_iomap(p->dev, NHW_BAR_REGS, NULL);
    p->mem = qpci_iomap(p->dev, NHW_BAR_MEM, &p->mem_size);
    g_assert_cmphex(rd(p, NHW_REG_FABRIC), ==, 1 | (2 << 8) | (1 << 16));
    g_assert_cmphex(rd(p, NHW_REG_LINK(0)), ==, 0 | NHW_LINK_UP);

    /* A pattern into rank 0 by its DMA engine, then over the link. */
    fill_pattern(pat, sizeof(pat), 21);
    host = guest_alloc(&f->alloc, sizeof(pat));
    qtest_memwrite(qts, host, pat, sizeof(pat));
    c = copy_desc(NHW_SPACE_HOST, host, 0, NHW_SPACE_DEV, 0, 0x10000,
                  sizeof(pat));
    fab_ring(f, t, 0);
    g_assert_cmphex(submit_q(t, 0, &c), ==, ST(0));
    g_assert_cmphex(link_run(f, t, 0, link_desc(NISA_REDUCE_NONE, 0, 0x10000,
                    0x3000, sizeof(pat))), ==, ST(0));
    mem_get(p, 0x3000, back, sizeof(back));
    g_assert(!memcmp(back, pat, sizeof(pat)));
    /* The plugged card's own link back to rank 0 works too. */
    g_assert_cmphex(link_run(f, p, 1, link_desc(NISA_REDUCE_NONE, 0, 0x3000,
                    0x20000, sizeof(pat))), ==, ST(0));
    c = copy_desc(NHW_SPACE_DEV, 0, 0x20000, NHW_SPACE_HOST, host, 0,
                  sizeof(pat));
    qtest_memset(qts, host, 0, sizeof(pat));
    g_assert_cmphex(submit_q(t, 0, &c), ==, ST(0));
    qtest_memread(qts, host, back, sizeof(back));
    g_assert(!memcmp(back, pat, sizeof(pat)));

    g_free(p->dev);
    g_free(p);
    g_free(rp);
    fab_stop(f);
}

/*
 * Migration while link reductions run: 15 SUMs of 32 MiB of 1.0 into
 * zeros are queued, the VM stops in the middle of them and migrates, and
 * the destination finishes them. Every element must read exactly 15: a
 * descriptor re-run from its start at the destination would have added
 * its first part twice.
 */
static void test_migration(void)
{
    g_autofree char *sock = g_strdup_printf("/tmp/trainium-migl-%d.sock",
                                            getpid());
    g_autofree char *uri = g_strdup_printf("unix:%s", sock);
    g_autofree char *status = NULL;
    const uint64_t len = 32 * MiB, piece = 4 * MiB;
    g_autofree float *buf = g_new(float, piece / 4);
    Fab *f = fab_start("size=2", 2, NULL, "64M"), *g = g_new0(Fab, 1);
    Trn *t = f->t[0];
    unsigned q = link_q(t, 0), n = RING_ENTRIES - 1;
    struct nhw_link_desc d = link_desc(NISA_REDUCE_SUM, NISA_F32, 0, 0, len);
    uint32_t done;

    for (uint64_t i = 0; i < piece / 4; i++) {
        buf[i] = 1.0f;
    }
    for (uint64_t off = 0; off < len; off += piece) {
        mem_put(t, off, buf, piece);
    }
    fab_ring(f, t, q);
    for (unsigned i = 0; i < n; i++) {
        post_q(t, q, &d);
    }
    wait_qreg(t, q, NHW_QREG_STATUS, NHW_QSTATUS_BUSY, NHW_QSTATUS_BUSY);
    qtest_qmp_assert_success(f->qts, "{'execute': 'stop'}");
    done = qrd(t, q, NHW_QREG_DONE_LO);
    g_test_message("stopped after %u of %u reductions", done, n);
    g_assert_cmpuint(done, <, n);

    g->qts = qtest_initf("-machine q35 -device trainium-fabric,id=nl0,size=2 "
        "-device trainium,id=trn0,addr=4.0,mem-size=64M,fabric=nl0,"
        "fabric-rank=0 -device trainium,id=trn1,addr=5.0,mem-size=64M,"
        "fabric=nl0,fabric-rank=1 -incoming %s", uri);
    status = migrate(f->qts, g->qts, uri);
    g_assert_cmpstr(status, ==, "completed");
    pc_alloc_init(&g->alloc, g->qts, ALLOC_NO_FLAGS);
    g->bus = qpci_new_pc(g->qts, &g->alloc);
    g->n = 2;
    for (unsigned i = 0; i < 2; i++) {
        Trn *u = g->t[i] = g_new0(Trn, 1);

        *u = *f->t[i];
        u->qts = g->qts;
        u->bus = g->bus;
        u->dev = qpci_device_find(g->bus, QPCI_DEVFN(4 + i, 0));
        g_assert(u->dev);
        /* The same order as fab_start(): the same addresses. */
        u->regs = qpci_iomap(u->dev, NHW_BAR_REGS, NULL);
        u->mem = qpci_iomap(u->dev, NHW_BAR_MEM, &u->mem_size);
    }
    fab_stop(f);
    qtest_qmp_assert_success(g->qts, "{'execute': 'cont'}");
    t = g->t[0];
    {
        gint64 deadline = g_get_monotonic_time() + 60 * G_USEC_PER_SEC;

        while (qrd(t, q, NHW_QREG_HEAD) != t->tail[q]) {
            g_assert(g_get_monotonic_time() < deadline);
            g_usleep(1000);
        }
    }
    g_assert_cmpuint(qrd(t, q, NHW_QREG_DONE_LO), ==, n);
    for (unsigned i = 0; i < n; i++) {
        g_assert_cmphex(desc_status_q(t, q, i), ==, ST(0));
    }
    for (uint64_t off = 0; off < len; off += piece) {
        mem_get(g->t[1], off, buf, piece);
        for (uint64_t i = 0; i < piece / 4; i++) {
            if (buf[i] != (float)n) {
                g_test_message("element %" PRIu64 ": %g", off / 4 + i,
                               buf[i]);
                g_assert_cmpfloat(buf[i], ==, (float)n);
            }
        }
    }
    fab_stop(g);
    unlink(sock);
}

/* ---- Properties ------------------------------------------------------- */

static void expect_error(QTestState *qts, const char *what, QDict *args,
                         const char *cmd, const char *needle)
{
    QDict *resp = qtest_qmp(qts, "{'execute': %s, 'arguments': %p}", cmd,
                            args);
    QDict *err = qdict_get_qdict(resp, "error");

    g_test_message("%s", what);
    g_assert(err);
    g_test_message("  -> %s", qdict_get_str(err, "desc"));
    g_assert(strstr(qdict_get_str(err, "desc"), needle));
    qobject_unref(resp);
}

static QDict *card_args(const char *fabric, int64_t rank)
{
    QDict *args = qdict_new();

    qdict_put_str(args, "driver", "trainium");
    qdict_put_str(args, "bus", "rp0");
    qdict_put_int(args, "mem-size", 16 * MiB);
    if (fabric) {
        qdict_put_str(args, "fabric", fabric);
    }
    if (rank >= 0) {
        qdict_put_int(args, "fabric-rank", rank);
    }
    return args;
}

/*
 * QEMU started with @args must refuse them: exit with an error whose
 * message has @needle.
 */
static void expect_cli_error(const char *args, const char *needle)
{
    g_autofree char *cmd = g_strdup_printf("%s -machine q35 -display none "
                                           "-nodefaults %s",
                                           g_getenv("QTEST_QEMU_BINARY"), args);
    g_autofree char *out = NULL, *err = NULL;
    g_autoptr(GError) gerr = NULL;
    gchar **argv = NULL;
    int status;

    g_test_message("%s", args);
    g_assert(g_shell_parse_argv(cmd, NULL, &argv, NULL));
    g_assert(g_spawn_sync(NULL, argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL,
                          &out, &err, &status, &gerr));
    g_strfreev(argv);
    g_test_message("  -> %s", err);
    g_assert(WIFEXITED(status) && WEXITSTATUS(status) != 0);
    g_assert(strstr(err, needle));
}

static void test_properties(void)
{
    QTestState *qts = qtest_init("-machine q35 "
        "-device trainium-fabric,id=nl0,size=2 "
        "-device trainium-fabric,id=mesh8,size=8,topology=mesh "
        "-device trainium-fabric,id=mesh7,size=7,topology=mesh "
        "-device trainium,addr=4.0,mem-size=16M,fabric=nl0,fabric-rank=0 "
        "-device pcie-root-port,id=rp0,addr=5.0,chassis=1");
    QDict *args, *resp;

    expect_error(qts, "rank out of range", card_args("nl0", 2), "device_add",
                 "fabric-rank 2 out of range");
    expect_error(qts, "duplicate rank", card_args("nl0", 0), "device_add",
                 "rank 0 is already taken");
    expect_error(qts, "rank without fabric", card_args(NULL, 0),
                 "device_add", "fabric-rank needs fabric");
    expect_error(qts, "fabric without rank", card_args("nl0", -1),
                 "device_add", "fabric-rank (0 to 1) is required");
    expect_error(qts, "no such fabric", card_args("nl9", 0), "device_add",
                 "nl9");
    expect_error(qts, "mesh of 8: 7 links", card_args("mesh8", 0),
                 "device_add", "at most 6");
    /* A mesh of 7 (6 links) with every queue: exactly NHW_MAX_QUEUES. */
    args = card_args("mesh7", 0);
    qdict_put_int(args, "cores", 16);
    qdict_put_int(args, "dma-queues", 8);
    qtest_qmp_assert_success(qts, "{'execute': 'device_add', 'arguments': %p}",
                             args);

    /* A fabric is made at start-up, and stays. */
    args = qdict_new();
    qdict_put_str(args, "driver", "trainium-fabric");
    qdict_put_str(args, "id", "f1");
    qdict_put_int(args, "size", 2);
    expect_error(qts, "fabric hot-plug", args, "device_add", "hotplug");
    resp = qtest_qmp(qts, "{'execute': 'device_del', 'arguments': "
                     "{'id': 'nl0'}}");
    g_assert(qdict_haskey(resp, "error"));
    qobject_unref(resp);
    qtest_quit(qts);

    expect_cli_error("-device trainium-fabric,id=f", "size (the number of "
                     "ranks) must be between 1 and 16; it is required");
    expect_cli_error("-device trainium-fabric,id=f,size=17",
                     "must be between 1 and 16");
    expect_cli_error("-device trainium-fabric,id=f,size=2,fabric-id=0",
                     "fabric-id must be between 1 and 65535");
    expect_cli_error("-device trainium-fabric,id=f,size=2,fabric-id=65536",
                     "fabric-id");
    expect_cli_error("-device trainium-fabric,id=f,size=2,topology=torus",
                     "topology 'torus' is not 'ring' or 'mesh'");
    /* The fabric comes before the cards that name it. */
    expect_cli_error("-device trainium,fabric=f,fabric-rank=0 "
                     "-device trainium-fabric,id=f,size=2", "'f'");
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/trainium/link/registers/ring", test_regs_ring);
    qtest_add_func("/trainium/link/registers/mesh", test_regs_mesh);
    qtest_add_func("/trainium/link/registers/alone", test_regs_alone);
    qtest_add_func("/trainium/link/copy", test_copy);
    qtest_add_func("/trainium/link/reduce", test_reduce);
    qtest_add_func("/trainium/link/bounds", test_bounds);
    qtest_add_func("/trainium/link/bad-desc", test_bad_desc);
    qtest_add_func("/trainium/link/peer-absent", test_peer_absent);
    qtest_add_func("/trainium/link/queue-reset", test_queue_reset);
    qtest_add_func("/trainium/link/unplug", test_unplug);
    qtest_add_func("/trainium/link/migration", test_migration);
    qtest_add_func("/trainium/link/properties", test_properties);
    return g_test_run();
}

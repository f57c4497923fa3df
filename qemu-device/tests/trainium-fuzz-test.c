/*
 * A seeded, bounded fuzzer for the trainium card, run as a qtest.
 *
 * Each step builds something valid from the ISA (isa/neuron_isa.h)
 * and the hardware header -- a kernel of instructions with consistent
 * operands, a COPY descriptor, a register write -- then mutates some of
 * its fields (opcodes, subops, flags, dtypes, ranks, extents, strides,
 * offsets, slots, lengths, addresses, ring registers; a LINK to a second
 * card of the fabric) toward the values
 * that break things: 0, 1, powers of two, all ones, the card's own BARs.
 * Queue resets, device resets and VM stop/cont (the migration pause) are
 * mixed in. After every step QEMU must answer (the ID register reads back)
 * and every reset must complete within RESET_BOUND_US.
 *
 *   TRN_FUZZ_SEED     seed (default: from the clock; printed either way)
 *   TRN_FUZZ_ITERS    steps (default: no limit, the time limit decides)
 *   TRN_FUZZ_SECONDS  wall-clock limit (default 20)
 *
 * Replay a failure with the seed it printed (and the same ITERS): the
 * steps are a function of the seed alone. docs/fuzzing.md has more.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "trainium-qtest.h"

#define MEM (64 * MiB)
#define SLOT_BASE(i) ((1 + 4 * (uint64_t)(i)) * MiB)
#define SLOT_SIZE (4 * MiB)
#define NSLOTS 4
#define RESET_BOUND_US (1 * G_USEC_PER_SEC)
/* How long a descriptor may run before the fuzzer resets its queue. */
#define SETTLE_US (50 * 1000)

typedef struct Fuzz {
    Trn *t;
    GRand *r;
    unsigned ndma, ncores, nq;  /* nq: DMA + cores + links */
    uint64_t host;        /* 64 KiB of guest RAM for COPY and SGLs */
    uint64_t table;       /* the buffer table, in guest RAM */
    bool stale[NHW_MAX_QUEUES];  /* ring registers no longer ours */
    unsigned long steps, resets, launches, copies, links;
} Fuzz;

static uint32_t rnd(Fuzz *f, uint32_t n)
{
    return n ? g_rand_int_range(f->r, 0, n) : 0;
}

static bool chance(Fuzz *f, unsigned percent)
{
    return rnd(f, 100) < percent;
}

/* A value from those that break things, or a small one. */
static uint64_t nasty64(Fuzz *f)
{
    static const uint64_t v[] = {
        0, 1, 2, 3, 4, 7, 8, 63, 64, 255, 256, 4095, 4096, 65535, 65536,
        1ull << 20, 1ull << 30, 1ull << 31, 1ull << 32, (1ull << 32) - 1,
        1ull << 40, (1ull << 40) + 1, 1ull << 53, 1ull << 62, 1ull << 63,
        UINT64_MAX, UINT64_MAX - 1, UINT64_MAX - 287, INT64_MAX, MEM,
        MEM - 1, SLOT_SIZE, SLOT_SIZE - 4, 16 * MiB, 288, 289, 576,
    };
    uint64_t x = v[rnd(f, ARRAY_SIZE(v))];

    switch (rnd(f, 4)) {
    case 0:
        return x;
    case 1:
        return -x;
    case 2:
        return x + rnd(f, 16) - 8;
    default:
        return rnd(f, 1024);
    }
}

static uint32_t nasty32(Fuzz *f)
{
    static const uint32_t v[] = {
        0, 1, 2, 3, 4, 16, 17, 255, 1024, 65535, 1u << 17, 1u << 20,
        1u << 30, 1u << 31, 0x7fffffff, 0xffffffff, 0xfffffffe,
    };

    return chance(f, 50) ? v[rnd(f, ARRAY_SIZE(v))] : rnd(f, 64);
}

/* ---- valid things --------------------------------------------------- */

/* A contiguous operand of @nd dims with the given extents. */
static struct nisa_tensor tensor(unsigned slot, unsigned dtype, unsigned nd,
                                const uint32_t *ext, uint64_t off)
{
    struct nisa_tensor t = { .slot = slot, .dtype = dtype, .ndim = nd,
                            .offset = off };
    int64_t st = 1;

    for (int i = nd - 1; i >= 0; i--) {
        t.shape[i] = ext[i];
        t.strides[i] = st;
        st *= ext[i];
    }
    return t;
}

static void valid_insn(Fuzz *f, struct nisa_insn *in)
{
    unsigned nd = rnd(f, NISA_MAX_DIMS + 1), dt = rnd(f, NISA_NUM_DTYPES);
    uint32_t ext[NISA_MAX_DIMS], red[NISA_MAX_DIMS];
    uint64_t off = rnd(f, 64) * 8;

    for (unsigned i = 0; i < NISA_MAX_DIMS; i++) {
        ext[i] = i < nd ? 1 + rnd(f, 12) : 0;
    }
    memset(in, 0, sizeof(*in));
    in->opcode = rnd(f, NISA_NUM_OPCODES);
    in->dst = tensor(0, dt, nd, ext, off);
    in->src[0] = tensor(1, chance(f, 50) ? dt : rnd(f, NISA_NUM_DTYPES), nd,
                        ext, off);
    in->src[1] = tensor(1, dt, nd, ext, off + 4096);
    in->src[2] = tensor(2, dt, nd, ext, off);
    in->alpha = 0x3ff0000000000000ull;  /* 1.0 */
    in->scalar = 0x4000000000000000ull; /* 2.0 */
    switch (in->opcode) {
    case NISA_INSN_UNARY:
        in->subop = rnd(f, NISA_NUM_UNARY);
        break;
    case NISA_INSN_BINARY:
        in->subop = rnd(f, NISA_NUM_BINARY);
        in->flags = rnd(f, 2) ? NISA_IF_SCALAR : 0;
        break;
    case NISA_INSN_COMPARE:
        in->subop = rnd(f, NISA_NUM_COMPARE);
        break;
    case NISA_INSN_REDUCE:
    case NISA_INSN_SOFTMAX:
        in->subop = rnd(f, in->opcode == NISA_INSN_REDUCE ? NISA_NUM_REDUCE :
                        NISA_NUM_SOFTMAX);
        in->axis = nd ? (int32_t)rnd(f, nd) : 0;
        if (in->opcode == NISA_INSN_REDUCE && nd) {
            memcpy(red, ext, sizeof(red));
            red[in->axis] = 1;
            in->dst = tensor(0, dt, nd, red, off);
        }
        break;
    case NISA_INSN_MATMUL: {
        uint32_t m = 1 + rnd(f, 40), n = 1 + rnd(f, 40), k = 1 + rnd(f, 40);
        uint32_t b = 1 + rnd(f, 3);

        in->dst = tensor(0, dt == NISA_BF16 ? dt : NISA_F32, 3,
                         (uint32_t[]){ b, m, n }, off);
        in->src[0] = tensor(1, NISA_F32, 3, (uint32_t[]){ b, m, k }, off);
        in->src[1] = tensor(1, NISA_BF16, 3, (uint32_t[]){ b, k, n }, 1 * MiB);
        in->flags = rnd(f, 4) << 1;
        in->src[2] = tensor(2, NISA_F32, 3, (uint32_t[]){ b, m, n }, 0);
        break;
    }
    case NISA_INSN_GATHER:
    case NISA_INSN_SCATTER_ADD:
        /* Slot 3 is zeros: every index is 0, in range. */
        in->subop = rnd(f, NISA_NUM_IDX);
        nd = MAX(nd, 1);
        for (unsigned i = 0; i < nd; i++) {
            ext[i] = MAX(ext[i], 1);
        }
        in->axis = rnd(f, nd);
        in->dst = tensor(0, NISA_F32, nd, ext, off);
        in->src[0] = tensor(1, NISA_F32, nd, ext, off);
        if (in->subop == NISA_IDX_SELECT) {
            in->src[1] = tensor(3, NISA_I64, 1, &ext[in->axis], 0);
        } else {
            in->src[1] = tensor(3, NISA_I32, nd, ext, 0);
        }
        break;
    case NISA_INSN_FFT: {
        /* The shapes each transform takes (docs/hardware.md, "FFT"). */
        unsigned ax = nd ? rnd(f, nd) : 0;
        bool r2c, c2r;

        in->subop = rnd(f, NISA_NUM_FFT);
        r2c = in->subop == NISA_FFT_R2C;
        c2r = in->subop == NISA_FFT_C2R;
        in->axis = ax;
        in->alpha = 0;
        memcpy(red, ext, sizeof(red));
        if (nd && (r2c || c2r)) {
            red[ax] = ext[ax] / 2 + 1;
        }
        in->dst = tensor(0, c2r ? NISA_F32 : NISA_C64, nd, r2c ? red : ext,
                         off);
        in->src[0] = tensor(1, r2c ? NISA_F32 : NISA_C64, nd,
                            c2r ? red : ext, off);
        memset(&in->src[1], 0, 2 * sizeof(in->src[1]));
        break;
    }
    case NISA_INSN_TIMESTAMP:
        in->dst = tensor(0, NISA_I64, nd, (uint32_t[]){ 1, 1, 1, 1 }, off);
        memset(in->src, 0, sizeof(in->src));
        in->scalar = in->alpha = 0;
        break;
    case NISA_INSN_RANDOM:
        in->subop = rnd(f, NISA_NUM_RANDOM);
        if (in->subop == NISA_RNG_BITS) {
            in->dst.dtype = NISA_I32 + rnd(f, 3);       /* I32, I64, BOOL */
        } else {
            in->dst.dtype = rnd(f, 2) ? NISA_F32 : NISA_BF16;
        }
        memset(in->src, 0, sizeof(in->src));
        in->scalar = nasty64(f);                        /* the seed */
        in->alpha = nasty64(f);                         /* the counter */
        break;
    default:
        break;
    }
}

/* ---- mutations ------------------------------------------------------ */

static void mutate_tensor(Fuzz *f, struct nisa_tensor *t)
{
    unsigned d = rnd(f, NISA_MAX_DIMS);

    switch (rnd(f, 10)) {
    case 0:
        t->shape[d] = nasty32(f);
        break;
    case 1:
        t->strides[d] = (int64_t)nasty64(f);
        break;
    case 2:
        t->offset = nasty64(f);
        break;
    case 3:
        t->slot = rnd(f, 2) ? rnd(f, NSLOTS + 2) : rnd(f, 256);
        break;
    case 4:
        t->dtype = rnd(f, NISA_NUM_DTYPES + 2);
        break;
    case 5:
        t->ndim = rnd(f, NISA_MAX_DIMS + 2);
        break;
    case 6:
        /* Broadcast hugely: big extents, zero strides. */
        for (unsigned i = 0; i < NISA_MAX_DIMS; i++) {
            t->shape[i] = 1u << rnd(f, 32);
            t->strides[i] = 0;
        }
        t->ndim = NISA_MAX_DIMS;
        break;
    case 7:
        /* Extents whose product is 2^64: 0 if computed carelessly. */
        t->ndim = 3;
        d = 3 + rnd(f, 29);
        t->shape[0] = 1u << d;
        t->shape[1] = 1u << (34 - d);
        t->shape[2] = 1u << 30;
        t->shape[3] = 0;
        t->strides[rnd(f, 3)] = (int64_t)nasty64(f);
        t->strides[3] = 0;
        break;
    case 8:
        t->rsvd0 = rnd(f, 2);
        break;
    default:
        t->shape[d] = 0;
        break;
    }
}

/*
 * Scale a valid instruction up by broadcasting: every operand's extents
 * times 2^e (per dimension, the same for all operands), strides 0. The
 * work becomes huge while every operand stays inside its slot.
 */
static void broadcast_insn(Fuzz *f, struct nisa_insn *in)
{
    struct nisa_tensor *ts[4] = { &in->dst, &in->src[0], &in->src[1],
                                 &in->src[2] };
    unsigned e[NISA_MAX_DIMS], budget = 36 + rnd(f, 10);

    for (unsigned d = 0; d < NISA_MAX_DIMS; d++) {
        e[d] = rnd(f, MIN(budget, 28) + 1);
        budget -= e[d];
    }
    for (unsigned i = 0; i < 4; i++) {
        for (unsigned d = 0; d < ts[i]->ndim && d < NISA_MAX_DIMS; d++) {
            if (ts[i]->shape[d] > 1) {
                ts[i]->shape[d] = MIN((uint64_t)ts[i]->shape[d] << e[d],
                                      0xffffffffu);
            }
            ts[i]->strides[d] = 0;
        }
    }
}

static void mutate_insn(Fuzz *f, struct nisa_insn *in)
{
    switch (rnd(f, 8)) {
    case 0:
        in->opcode = rnd(f, 2) ? rnd(f, NISA_NUM_OPCODES + 2) : nasty32(f);
        break;
    case 1:
        in->subop = rnd(f, 2) ? rnd(f, 32) : nasty32(f);
        break;
    case 2:
        in->flags = rnd(f, 2) ? rnd(f, 16) : nasty32(f);
        break;
    case 3:
        in->axis = (int32_t)nasty32(f);
        break;
    case 4:
        in->scalar = nasty64(f);
        in->alpha = nasty64(f);
        break;
    case 5:
        mutate_tensor(f, &in->dst);
        break;
    default:
        mutate_tensor(f, &in->src[rnd(f, 3)]);
        break;
    }
}

/* ---- steps ---------------------------------------------------------- */

static void setup_queue(Fuzz *f, unsigned q)
{
    ring_setup_q(f->t, q);
    f->stale[q] = false;
}

/* Reset queue @q (or the device) and time it. */
static void timed_reset(Fuzz *f, int q)
{
    gint64 t0 = g_get_monotonic_time(), dt;

    if (q < 0) {
        wr(f->t, NHW_REG_CTRL, NHW_CTRL_RESET);
    } else {
        qwr(f->t, q, NHW_QREG_CTRL, NHW_QCTRL_RESET);
    }
    dt = g_get_monotonic_time() - t0;
    if (dt >= RESET_BOUND_US) {
        g_error("step %lu: %s reset took %" G_GINT64_FORMAT " us",
                f->steps, q < 0 ? "device" : "queue", dt);
    }
    f->resets++;
    if (q < 0) {
        for (unsigned i = 0; i < f->nq; i++) {
            setup_queue(f, i);
        }
    } else if (qrd(f->t, q, NHW_QREG_STATUS) == 0) {
        setup_queue(f, q);
    } else {
        /* STUCK ignores a queue reset: only a device reset helps. */
        timed_reset(f, -1);
    }
}

/* Make queue @q ready for one descriptor. */
static void ready_queue(Fuzz *f, unsigned q)
{
    uint32_t st = qrd(f->t, q, NHW_QREG_STATUS);

    if (f->stale[q] || (st & NHW_QSTATUS_HALTED) ||
        !(st & NHW_QSTATUS_ENABLED) ||
        qrd(f->t, q, NHW_QREG_HEAD) != f->t->tail[q]) {
        timed_reset(f, q);
    }
}

/* Post @desc on @q and give it a moment; what runs longer is reset. */
static void run_desc(Fuzz *f, unsigned q, const void *desc)
{
    gint64 until = g_get_monotonic_time() + SETTLE_US;

    ready_queue(f, q);
    post_q(f->t, q, desc);
    while (qrd(f->t, q, NHW_QREG_HEAD) != f->t->tail[q] &&
           !(qrd(f->t, q, NHW_QREG_STATUS) & NHW_QSTATUS_HALTED)) {
        if (g_get_monotonic_time() > until) {
            timed_reset(f, q);
            return;
        }
        g_usleep(500);
    }
}

static void step_launch(Fuzz *f)
{
    unsigned n = 1 + rnd(f, 4), q = f->ndma + rnd(f, f->ncores);
    struct nisa_insn k[4];
    struct nhw_slot slots[NSLOTS + 2];
    struct nhw_launch_desc d = { .op = NHW_OP_LAUNCH, .nslots = NSLOTS,
        .code_off = 0, .code_len = n * sizeof(k[0]), .table_addr = f->table };

    for (unsigned i = 0; i < NSLOTS + 2; i++) {
        slots[i] = (struct nhw_slot){ .base = SLOT_BASE(i % NSLOTS),
            .size = SLOT_SIZE, .access = i == 2 ? NISA_ACCESS_READ :
                                         NISA_ACCESS_READ | NISA_ACCESS_WRITE };
    }
    for (unsigned i = 0; i < n; i++) {
        valid_insn(f, &k[i]);
        if (chance(f, 8)) {
            broadcast_insn(f, &k[i]);
        }
        for (unsigned m = rnd(f, 3); m; m--) {
            mutate_insn(f, &k[i]);
        }
    }
    if (chance(f, 15)) {
        unsigned s = rnd(f, NSLOTS + 2);

        switch (rnd(f, 4)) {
        case 0:
            slots[s].base = nasty64(f);
            break;
        case 1:
            slots[s].size = nasty64(f);
            break;
        case 2:
            slots[s].access = nasty32(f);
            break;
        default:
            slots[s].rsvd = 1;
            break;
        }
    }
    if (chance(f, 15)) {
        switch (rnd(f, 6)) {
        case 0:
            d.nslots = rnd(f, 2) ? rnd(f, NSLOTS + 3) : nasty32(f);
            break;
        case 1:
            d.code_len = rnd(f, 2) ? nasty64(f) : d.code_len + rnd(f, 8);
            break;
        case 2:
            d.code_off = nasty64(f);
            break;
        case 3:
            d.table_addr = rnd(f, 2) ? nasty64(f) : f->t->mem.addr;
            break;
        case 4:
            d.rsvd[rnd(f, 3)] = 1;
            break;
        default:
            d.op = rnd(f, 4);
            break;
        }
    }
    qpci_memwrite(f->t->dev, f->t->mem, 0, k, n * sizeof(k[0]));
    qtest_memwrite(f->t->qts, f->table, slots, sizeof(slots));
    f->launches++;
    run_desc(f, q, &d);
}

static uint64_t copy_addr(Fuzz *f, uint8_t space, uint32_t *nseg)
{
    switch (space) {
    case NHW_SPACE_DEV:
        return rnd(f, 2) ? rnd(f, MEM / 4096) * 4096 : nasty64(f);
    case NHW_SPACE_HOST:
        switch (rnd(f, 4)) {
        case 0:
            return f->t->mem.addr + rnd(f, 4096);
        case 1:
            return f->t->regs.addr;
        case 2:
            return nasty64(f);
        default:
            return f->host + rnd(f, 32 * 1024);
        }
    default: {
        /* A list in the second half of the host buffer. */
        struct nhw_sg_entry e[8];
        uint64_t list = f->host + 48 * 1024 + rnd(f, 8) * sizeof(e);

        *nseg = rnd(f, 2) ? 1 + rnd(f, 8) : nasty32(f);
        for (unsigned i = 0; i < 8; i++) {
            e[i].addr = rnd(f, 4) ? f->host + rnd(f, 32 * 1024) :
                        rnd(f, 2) ? f->t->mem.addr : nasty64(f);
            e[i].len = rnd(f, 4) ? 1 + rnd(f, 4096) : nasty64(f);
        }
        qtest_memwrite(f->t->qts, list, e, sizeof(e));
        return list;
    }
    }
}

static void step_copy(Fuzz *f)
{
    struct nhw_copy_desc d = { .op = NHW_OP_COPY, .flags = rnd(f, 2) };
    uint32_t sn = 0, dn = 0;

    d.src_space = rnd(f, 3);
    d.dst_space = rnd(f, 3);
    d.src_addr = copy_addr(f, d.src_space, &sn);
    d.dst_addr = copy_addr(f, d.dst_space, &dn);
    d.src_nseg = sn;
    d.dst_nseg = dn;
    d.src_off = rnd(f, 4) ? rnd(f, 4096) : nasty64(f);
    d.dst_off = rnd(f, 4) ? rnd(f, 4096) : nasty64(f);
    d.len = rnd(f, 4) ? rnd(f, 16384) : nasty64(f);
    if (chance(f, 10)) {
        d.src_space = rnd(f, 256);
    }
    if (chance(f, 5)) {
        d.rsvd = 1;
    }
    f->copies++;
    run_desc(f, rnd(f, f->ndma), &d);
}

/*
 * A LINK into the other card of the fabric (rank 1): valid reduce/dtype
 * pairs mostly, then any; offsets and lengths small or nasty.
 */
static void step_link(Fuzz *f)
{
    static const uint8_t dtypes[] = { NISA_F32, NISA_BF16, NISA_F16 };
    struct nhw_link_desc d = { .op = NHW_OP_LINK, .flags = rnd(f, 2) };
    unsigned nlinks = f->nq - f->ndma - f->ncores;

    d.reduce = chance(f, 90) ? rnd(f, NISA_NUM_LINK_REDUCE) : nasty32(f);
    d.dtype = d.reduce == NISA_REDUCE_NONE ? 0 :
              dtypes[rnd(f, ARRAY_SIZE(dtypes))];
    if (chance(f, 10)) {
        d.dtype = nasty32(f);
    }
    d.src_off = rnd(f, 4) ? rnd(f, 4096) * 2 : nasty64(f);
    d.dst_off = rnd(f, 4) ? rnd(f, 4096) * 2 : nasty64(f);
    d.len = rnd(f, 4) ? rnd(f, 16384) * 2 : nasty64(f);
    if (chance(f, 5)) {
        d.rsvd[rnd(f, 3)] = nasty64(f);
    }
    f->links++;
    run_desc(f, f->ndma + f->ncores + rnd(f, nlinks), &d);
}

static void step_register(Fuzz *f)
{
    static const uint32_t qregs[] = {
        NHW_QREG_RING_LO, NHW_QREG_RING_HI, NHW_QREG_RING_SIZE,
        NHW_QREG_CTRL, NHW_QREG_TAIL, NHW_QREG_IRQ_AT, NHW_QREG_FAULT,
        NHW_QREG_HEAD, NHW_QREG_STATUS, 0x30, 0xfc,
    };
    static const uint32_t gregs[] = {
        NHW_REG_SCRATCH, NHW_REG_INT_STATUS, NHW_REG_INT_MASK, NHW_REG_ID,
        NHW_REG_QUEUES, 0x40, 0xffc, 0x8000,
    };
    unsigned q = rnd(f, f->nq);

    if (chance(f, 70)) {
        uint32_t reg = qregs[rnd(f, ARRAY_SIZE(qregs))], val = nasty32(f);

        if (reg == NHW_QREG_FAULT) {
            val &= NHW_FAULT_HANG | NHW_FAULT_FAIL_NEXT | NHW_FAULT_STUCK;
        }
        if (reg == NHW_QREG_CTRL) {
            val &= ~NHW_QCTRL_RESET;  /* resets are timed elsewhere */
        }
        qwr(f->t, q, reg, val);
        f->stale[q] = true;
    } else {
        wr(f->t, gregs[rnd(f, ARRAY_SIZE(gregs))], nasty32(f));
    }
}

/* Stop and continue the VM: the queues pause as for migration. */
static void step_stop_cont(Fuzz *f)
{
    gint64 t0 = g_get_monotonic_time(), dt;

    qtest_qmp_assert_success(f->t->qts, "{'execute': 'stop'}");
    dt = g_get_monotonic_time() - t0;
    if (dt >= RESET_BOUND_US) {
        g_error("step %lu: stop took %" G_GINT64_FORMAT " us", f->steps, dt);
    }
    qtest_qmp_assert_success(f->t->qts, "{'execute': 'cont'}");
}

/* After a device reset a plain kernel and a plain copy must work. */
static void sanity(Fuzz *f)
{
    struct nisa_insn fill = { .opcode = NISA_INSN_FILL,
        .scalar = 0x4008000000000000ull, /* 3.0 */
        .dst = tensor(0, NISA_F32, 1, (uint32_t[]){ 4 }, 0) };
    struct nhw_slot slots[NSLOTS] = {
        { .base = SLOT_BASE(0), .size = SLOT_SIZE,
          .access = NISA_ACCESS_READ | NISA_ACCESS_WRITE },
    };
    struct nhw_launch_desc d = { .op = NHW_OP_LAUNCH, .nslots = 1,
        .code_len = sizeof(fill), .table_addr = f->table };
    struct nhw_copy_desc c = { .op = NHW_OP_COPY, .src_space = NHW_SPACE_DEV,
        .src_addr = SLOT_BASE(0), .dst_space = NHW_SPACE_HOST,
        .dst_addr = f->host, .len = 16 };
    float got[4];

    timed_reset(f, -1);
    qpci_memwrite(f->t->dev, f->t->mem, 0, &fill, sizeof(fill));
    qtest_memwrite(f->t->qts, f->table, slots, sizeof(slots));
    g_assert_cmphex(submit_q(f->t, f->ndma, &d), ==, NHW_DESC_DONE);
    g_assert_cmphex(submit_q(f->t, 0, &c), ==, NHW_DESC_DONE);
    qtest_memread(f->t->qts, f->host, got, sizeof(got));
    for (unsigned i = 0; i < 4; i++) {
        g_assert_cmpfloat(got[i], ==, 3.0f);
    }
}

/*
 * The card (as trn_start() would start it) in a fabric of two: the
 * second card, not fuzzed, is the links' peer.
 */
static Trn *fuzz_start(void)
{
    Trn *t = g_new0(Trn, 1);

    t->qts = qtest_initf("-machine q35 -device trainium-fabric,id=nl0,size=2 "
                         "-device trainium,addr=%x.0,mem-size=64M,cores=2,"
                         "dma-queues=2,inline-budget=16384,fabric=nl0,"
                         "fabric-rank=0 -device trainium,addr=%x.0,"
                         "mem-size=16M,fabric=nl0,fabric-rank=1", TRN_SLOT,
                         TRN_SLOT + 1);
    pc_alloc_init(&t->alloc, t->qts, ALLOC_NO_FLAGS);
    t->bus = qpci_new_pc(t->qts, &t->alloc);
    t->dev = qpci_device_find(t->bus, QPCI_DEVFN(TRN_SLOT, 0));
    g_assert(t->dev);
    qpci_device_enable(t->dev);
    t->regs = qpci_iomap(t->dev, NHW_BAR_REGS, NULL);
    t->mem = qpci_iomap(t->dev, NHW_BAR_MEM, &t->mem_size);
    return t;
}

static void test_fuzz(void)
{
    const char *s_seed = g_getenv("TRN_FUZZ_SEED");
    const char *s_iters = g_getenv("TRN_FUZZ_ITERS");
    const char *s_secs = g_getenv("TRN_FUZZ_SECONDS");
    guint32 seed = s_seed ? (guint32)g_ascii_strtoull(s_seed, NULL, 0) :
                   (guint32)g_get_real_time();
    unsigned long iters = s_iters ? g_ascii_strtoull(s_iters, NULL, 0) :
                          ULONG_MAX;
    double secs = s_secs ? g_ascii_strtod(s_secs, NULL) : 20;
    gint64 end = g_get_monotonic_time() + (gint64)(secs * G_USEC_PER_SEC);
    Fuzz f = { 0 };

    g_test_message("TRN_FUZZ_SEED=%u TRN_FUZZ_ITERS=%lu TRN_FUZZ_SECONDS=%g",
                   seed, iters, secs);
    fprintf(stderr, "trainium fuzz: TRN_FUZZ_SEED=%u\n", seed);
    f.r = g_rand_new_with_seed(seed);
    f.t = fuzz_start();
    f.ndma = NHW_QUEUES_DMA(rd(f.t, NHW_REG_QUEUES));
    f.ncores = NHW_QUEUES_CORES(rd(f.t, NHW_REG_QUEUES));
    f.nq = f.ndma + f.ncores + NHW_QUEUES_LINKS(rd(f.t, NHW_REG_QUEUES));
    g_assert_cmpuint(f.nq, ==, f.ndma + f.ncores + 2);
    f.host = guest_alloc(&f.t->alloc, 64 * 1024);
    f.table = guest_alloc(&f.t->alloc, 4096);
    qpci_msix_enable(f.t->dev);
    /* Device memory starts zeroed: slot 3 holds valid indices (0). */
    qtest_memset(f.t->qts, f.host, 0, 64 * 1024);
    for (unsigned i = 0; i < f.nq; i++) {
        setup_queue(&f, i);
    }

    for (f.steps = 0; f.steps < iters && g_get_monotonic_time() < end;
         f.steps++) {
        unsigned what = rnd(&f, 100);

        if (what < 50) {
            step_launch(&f);
        } else if (what < 70) {
            step_copy(&f);
        } else if (what < 80) {
            step_link(&f);
        } else if (what < 90) {
            step_register(&f);
        } else if (what < 94) {
            timed_reset(&f, rnd(&f, f.nq));
        } else if (what < 97) {
            timed_reset(&f, -1);
        } else {
            step_stop_cont(&f);
        }
        if (rd(f.t, NHW_REG_ID) != NHW_ID_MAGIC) {
            g_error("step %lu: the card stopped answering (seed %u)",
                    f.steps, seed);
        }
        if (f.steps % 200 == 199) {
            /* Clear slot 3 (indices) again, check the card still works. */
            g_autofree uint8_t *zero = g_malloc0(64 * 1024);

            qpci_memwrite(f.t->dev, f.t->mem, SLOT_BASE(3), zero, 64 * 1024);
            sanity(&f);
        }
    }
    sanity(&f);
    g_test_message("seed %u: %lu steps, %lu launches, %lu copies, %lu links, "
                   "%lu resets", seed, f.steps, f.launches, f.copies, f.links,
                   f.resets);
    fprintf(stderr, "trainium fuzz: seed %u: %lu steps, %lu launches, "
            "%lu copies, %lu links, %lu resets\n", seed, f.steps, f.launches,
            f.copies, f.links, f.resets);
    g_rand_free(f.r);
    trn_stop(f.t);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/trainium/fuzz", test_fuzz);
    return g_test_run();
}

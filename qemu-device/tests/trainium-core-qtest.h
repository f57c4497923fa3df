/*
 * Helpers of the NeuronCore qtests: a card with its first core queue set
 * up, four 4 MiB read-write slots, tensor operands and kernel launches.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TRAINIUM_CORE_QTEST_H
#define TRAINIUM_CORE_QTEST_H

#include "trainium-qtest.h"
#include <math.h>

#define MEM_SIZE (64 * MiB)
#define CODE_OFF 0
#define SLOT_BASE(i) ((1 + 4 * (uint64_t)(i)) * MiB)
#define SLOT_SIZE (4 * MiB)

typedef struct Core {
    Trn *t;
    unsigned q;
    uint64_t table;
    struct nhw_slot slots[NHW_MAX_SLOTS];
    unsigned nslots;
} Core;

/* The first core queue's ring, and slots 0..3 as 4 MiB read-write windows. */
static inline void core_setup(Core *c)
{
    c->q = NHW_QUEUES_DMA(rd(c->t, NHW_REG_QUEUES));
    ring_setup_q(c->t, c->q);
    c->table = guest_alloc(&c->t->alloc, sizeof(c->slots));
    for (unsigned i = 0; i < 4; i++) {
        c->slots[i] = (struct nhw_slot){ .base = SLOT_BASE(i),
            .size = SLOT_SIZE, .access = NISA_ACCESS_READ | NISA_ACCESS_WRITE };
    }
    c->nslots = 4;
}

static inline Core *core_start_with(const char *props)
{
    Core *c = g_new0(Core, 1);

    c->t = trn_start(props);
    core_setup(c);
    return c;
}

static inline Core *core_start(void)
{
    return core_start_with("mem-size=64M");
}

static inline void core_stop(Core *c)
{
    trn_stop(c->t);
    g_free(c);
}

static inline void put(Core *c, unsigned slot, uint64_t off, const void *p, size_t n)
{
    qpci_memwrite(c->t->dev, c->t->mem, SLOT_BASE(slot) + off, p, n);
}

static inline void get(Core *c, unsigned slot, uint64_t off, void *p, size_t n)
{
    qpci_memread(c->t->dev, c->t->mem, SLOT_BASE(slot) + off, p, n);
}

/* A contiguous tensor operand of up to 4 dims (trailing zeros end it). */
static inline struct nisa_tensor tn(unsigned slot, unsigned dtype, uint64_t off,
                            uint32_t d0, uint32_t d1, uint32_t d2, uint32_t d3)
{
    struct nisa_tensor t = { .slot = slot, .dtype = dtype, .offset = off };
    uint32_t dims[4] = { d0, d1, d2, d3 };
    int64_t stride = 1;
    unsigned n = 0;

    while (n < 4 && dims[n]) {
        n++;
    }
    t.ndim = n;
    for (int i = n - 1; i >= 0; i--) {
        t.shape[i] = dims[i];
        t.strides[i] = stride;
        stride *= dims[i];
    }
    return t;
}

static inline uint64_t f64bits(double d)
{
    uint64_t u;

    memcpy(&u, &d, 8);
    return u;
}

/* Run a kernel of @n instructions with the current slot table. */
static inline uint32_t run_kernel(Core *c, const struct nisa_insn *insns, unsigned n)
{
    struct nhw_launch_desc d = {
        .op = NHW_OP_LAUNCH, .nslots = c->nslots, .code_off = CODE_OFF,
        .code_len = n * sizeof(*insns), .table_addr = c->table,
    };

    qpci_memwrite(c->t->dev, c->t->mem, CODE_OFF, insns, n * sizeof(*insns));
    qtest_memwrite(c->t->qts, c->table, c->slots, sizeof(c->slots));
    return submit_q(c->t, c->q, &d);
}

static inline uint32_t run1(Core *c, struct nisa_insn in)
{
    return run_kernel(c, &in, 1);
}

static inline void randf(float *p, size_t n, unsigned seed)
{
    GRand *r = g_rand_new_with_seed(seed);

    for (size_t i = 0; i < n; i++) {
        p[i] = (float)g_rand_double_range(r, -4, 4);
    }
    g_rand_free(r);
}

#define OK NHW_DESC_DONE

#endif /* TRAINIUM_CORE_QTEST_H */

/*
 * Virtual Trainium accelerator: NeuronCores. A LAUNCH descriptor names a
 * kernel -- instructions in device memory -- and a buffer table in host
 * memory; the core copies the table out, checks it, then copies out and
 * executes one instruction at a time. Each operand is checked against its
 * slot before the instruction touches memory; the first failing instruction
 * ends the job with its error (earlier instructions' results stay).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/host-utils.h"
#include "qemu/timer.h"
#include "trainium-isa.h"
#include "trace.h"

uint32_t trn_bad_insn(TrnKernel *k, const char *why)
{
    TRN_GUEST_ERR(insn, "queue %u: bad instruction: %s", k->q->idx, why);
    return NISA_ERR_BAD_INSN;
}

static uint32_t trn_load_table(TrnKernel *k, const struct nhw_launch_desc *d)
{
    struct nhw_slot raw[NHW_MAX_SLOTS];
    uint32_t err;

    k->nslots = le16_to_cpu(d->nslots);
    if (k->nslots > NHW_MAX_SLOTS) {
        return NISA_ERR_BAD_DESC;
    }
    if (!k->nslots) {
        return NISA_ERR_NONE;
    }
    err = trn_host_rw(k->s, le64_to_cpu(d->table_addr), raw,
                      k->nslots * sizeof(raw[0]), false);
    if (err) {
        return err;
    }
    for (unsigned i = 0; i < k->nslots; i++) {
        uint64_t base = le64_to_cpu(raw[i].base), size = le64_to_cpu(raw[i].size);
        uint32_t access = le32_to_cpu(raw[i].access);

        if (raw[i].rsvd || access & ~(NISA_ACCESS_READ | NISA_ACCESS_WRITE)) {
            return NISA_ERR_BAD_DESC;
        }
        if (base > k->s->mem_size || size > k->s->mem_size - base) {
            return NISA_ERR_DEV_RANGE;
        }
        k->slots[i] = (TrnSlot){ .base = base, .size = size, .access = access };
    }
    return NISA_ERR_NONE;
}

/*
 * TIMESTAMP: dst, one I64 element, = the card's clock in nanoseconds
 * (docs/hardware.md, "Timestamps"). The clock is QEMU_CLOCK_VIRTUAL, one
 * for the whole card: it stops while the VM is stopped and migrates with
 * it, so a time between two timestamps counts only time the VM ran.
 */
static uint32_t trn_insn_timestamp(TrnKernel *k, const struct nisa_insn *in)
{
    TrnView dst;
    uint32_t err;

    if (in->subop || in->flags || in->axis || in->scalar || in->alpha ||
        !trn_sources_unset(in)) {
        return trn_bad_insn(k, "TIMESTAMP: a field other than dst is set");
    }
    err = trn_view_init(k, &in->dst, TRN_WRITE, &dst);
    if (err) {
        return err;
    }
    if (dst.dtype != NISA_I64 || dst.numel != 1) {
        return trn_bad_insn(k, "TIMESTAMP: dst is not one I64 element");
    }
    stq_le_p(dst.data, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL));
    return NISA_ERR_NONE;
}

/* The name of @op (and of @sub for the elementwise functions), for logs. */
static const char *trn_insn_name(enum nisa_opcode op, unsigned sub)
{
#define TRN_NAME_(NAME, name, ...) #name,
    static const char *const ops[] = { NISA_OPCODES(TRN_NAME_) };
    static const char *const un[] = { NISA_UNARY_OPS(TRN_NAME_) };
    static const char *const bin[] = { NISA_BINARY_OPS(TRN_NAME_) };
    static const char *const cmp[] = { NISA_COMPARE_OPS(TRN_NAME_) };
#undef TRN_NAME_

    if (op == NISA_INSN_UNARY && sub < ARRAY_SIZE(un)) {
        return un[sub];
    }
    if (op == NISA_INSN_BINARY && sub < ARRAY_SIZE(bin)) {
        return bin[sub];
    }
    if (op == NISA_INSN_COMPARE && sub < ARRAY_SIZE(cmp)) {
        return cmp[sub];
    }
    return op < ARRAY_SIZE(ops) ? ops[op] : "?";
}

/*
 * Complex operands reach only the functions nisa_takes_complex() lists
 * (docs/hardware.md, "Complex numbers"): checked here, once, so that no
 * other engine ever sees NISA_C64 (their conversions know only real
 * types). EXPR's program and its extra inputs are checked by EXPR.
 */
static uint32_t trn_check_complex(TrnKernel *k, const struct nisa_insn *in)
{
    enum nisa_opcode op = le16_to_cpu(in->opcode);
    unsigned sub = le16_to_cpu(in->subop);
    uint32_t flags = le32_to_cpu(in->flags);
    int32_t axis = (int32_t)le32_to_cpu(in->axis);
    g_autofree char *why = NULL;
    bool cplx = false;

    /* The dtypes first: the common case, no complex operand, costs 4 loads. */
    for (unsigned i = 0; i < 4; i++) {
        const struct nisa_tensor *t = i ? &in->src[i - 1] : &in->dst;

        if (nisa_dtype_is_complex(t->dtype) &&
            nisa_operand_access(op, sub, flags, axis, i)) {
            cplx = true;
        }
    }
    if (!cplx || nisa_takes_complex(op, sub)) {
        return NISA_ERR_NONE;
    }
    why = g_strdup_printf("complex64 operand: %s does not take complex",
                          trn_insn_name(op, sub));
    return trn_bad_insn(k, why);
}

/* Instruction @at; *@len is how many instructions it took (EXPR: more). */
static uint32_t trn_insn_exec(TrnKernel *k, uint64_t at, uint64_t *len)
{
    const struct nisa_insn *in = &k->code[at];
    enum nisa_opcode op = le16_to_cpu(in->opcode);

    if (in->rsvd) {
        return trn_bad_insn(k, "reserved field set");
    }
    if (trn_check_complex(k, in)) {
        return NISA_ERR_BAD_INSN;
    }
    switch (op) {
    /* One case per line of NISA_OPCODES, by its class (isa/neuron_isa.h). */
#define TRN_EXEC_(NAME, name, cls, ...) \
    case NISA_INSN_##NAME:              \
        return TRN_EXEC_##cls(name);
#define TRN_EXEC_NONE(name)   NISA_ERR_NONE
#define TRN_EXEC_EW(name)     trn_insn_elementwise(k, in)
#define TRN_EXEC_AXIS(name)   trn_insn_##name(k, in)
#define TRN_EXEC_INDEX(name)  trn_insn_##name(k, in)
#define TRN_EXEC_MATMUL(name) trn_insn_##name(k, in)
#define TRN_EXEC_LINALG(name) trn_insn_##name(k, in)
#define TRN_EXEC_GEN(name)    trn_insn_##name(k, in)
#define TRN_EXEC_CLOCK(name)  trn_insn_##name(k, in)
#define TRN_EXEC_GROUP(name)  trn_insn_##name(k, at, len)
#define TRN_EXEC_CONT(name)   trn_bad_insn(k, #name " not after the " \
                                           "instruction it continues")
    NISA_OPCODES(TRN_EXEC_)
    case NISA_NUM_OPCODES:
        break;
    }
    return trn_bad_insn(k, "unknown opcode");
}

/* Elements of @t, saturated: its shape is not checked yet. */
static uint64_t trn_numel(const struct nisa_tensor *t)
{
    uint64_t n = 1;

    for (unsigned i = 0; i < MIN(t->ndim, NISA_MAX_DIMS); i++) {
        if (umul64_overflow(n, le32_to_cpu(t->shape[i]), &n)) {
            return UINT64_MAX;
        }
    }
    return n;
}

/*
 * Check a LAUNCH descriptor and copy its kernel out of device memory, once:
 * the cost estimate and the execution both see this copy, whatever the
 * host or the kernel itself writes to device memory meanwhile. A kernel of
 * more than @max_insns instructions is not copied (returns NULL, *@err 0):
 * the caller (the doorbell's inline path) leaves it to the worker.
 */
TrnKernel *trn_kernel_load(TrnQueue *q, const struct nhw_launch_desc *d,
                           uint64_t max_insns, uint32_t *err)
{
    uint64_t off = le64_to_cpu(d->code_off), len = le64_to_cpu(d->code_len);
    uint64_t n = len / sizeof(struct nisa_insn);
    TrnKernel *k;

    *err = NISA_ERR_NONE;
    if (d->rsvd[0] || d->rsvd[1] || d->rsvd[2] ||
        len % sizeof(struct nisa_insn) || n > NISA_MAX_INSNS ||
        le16_to_cpu(d->nslots) > NHW_MAX_SLOTS) {
        *err = NISA_ERR_BAD_DESC;
        return NULL;
    }
    if (off > q->s->mem_size || len > q->s->mem_size - off) {
        *err = NISA_ERR_DEV_RANGE;
        return NULL;
    }
    if (n > max_insns) {
        return NULL;
    }
    k = g_new0(TrnKernel, 1);
    k->q = q;
    k->s = q->s;
    k->ninsns = n;
    /* At most NISA_MAX_INSNS * 288 bytes (18 MiB): a bound of the spec. */
    k->code = g_new(struct nisa_insn, MAX(n, 1));
    memcpy(k->code, q->s->mem_ptr + off, len);
    return k;
}

void trn_kernel_free(TrnKernel *k)
{
    if (k) {
        g_free(k->expr_regs);
        g_free(k->expr);
        g_free(k->code);
        g_free(k);
    }
}

/*
 * An upper estimate of a kernel's work, in elements: per instruction, its
 * largest operand (times the inner dimension for MATMUL, times the cost
 * of one random number for RANDOM, times 5 log2 of itself for FFT), at
 * least 1 (TIMESTAMP: 1).
 * Stops counting past @limit.
 */
uint64_t trn_kernel_cost(const TrnKernel *k, uint64_t limit)
{
    uint64_t cost = 0;

    for (uint64_t i = 0; i < k->ninsns && cost <= limit; i++) {
        const struct nisa_insn *in = &k->code[i];
        uint64_t c = trn_numel(&in->dst);

        if (le16_to_cpu(in->opcode) == NISA_INSN_EXPR_DATA &&
            le16_to_cpu(in->subop) == NISA_EXPR_DATA_STEPS) {
            c = 1;      /* program steps, no tensors */
        }
        if (le16_to_cpu(in->opcode) == NISA_INSN_EXPR &&
            umul64_overflow(c, MAX(MIN(le16_to_cpu(in->subop),
                                       NISA_EXPR_MAX_STEPS), 1), &c)) {
            return UINT64_MAX;
        }

        for (unsigned j = 0; j < ARRAY_SIZE(in->src); j++) {
            c = MAX(c, trn_numel(&in->src[j]));
        }
        if ((le16_to_cpu(in->opcode) == NISA_INSN_MATMUL ||
             le16_to_cpu(in->opcode) == NISA_INSN_LINALG) && in->src[0].ndim &&
            in->src[0].ndim <= NISA_MAX_DIMS &&
            umul64_overflow(c, le32_to_cpu(in->src[0].shape[in->src[0].ndim - 1]),
                            &c)) {
            return UINT64_MAX;
        }
        if (le16_to_cpu(in->opcode) == NISA_INSN_RANDOM) {
            c = trn_random_cost(c);
        }
        /*
         * FFT: about 5 n log2 n per line of n, so 5 log2 n per element;
         * log2 of the whole operand bounds log2 n.
         */
        if (le16_to_cpu(in->opcode) == NISA_INSN_FFT &&
            umul64_overflow(c, 5 * (64 - clz64(c | 1)), &c)) {
            return UINT64_MAX;
        }
        if (uadd64_overflow(cost, MAX(c, 1), &cost)) {
            return UINT64_MAX;
        }
    }
    return cost;
}

/*
 * Run a loaded kernel: copy out and check its buffer table, then execute.
 * The index of an instruction that fails goes to *@insn.
 */
uint32_t trn_kernel_run(TrnKernel *k, const struct nhw_launch_desc *d,
                        uint32_t *insn)
{
    TrnQueue *q = k->q;
    uint32_t err;

    err = trn_load_table(k, d);
    if (err) {
        return err;
    }
    for (uint64_t i = 0, len = 1; i < k->ninsns; i += len) {
        const struct nisa_insn *in = &k->code[i];

        if (trn_queue_aborting(q)) {
            return NISA_ERR_ABORTED;
        }
        trace_trainium_insn(q->idx, i, le16_to_cpu(in->opcode),
                            le16_to_cpu(in->subop));
        k->dirty_lo = k->dirty_hi = 0;
        len = 1;
        err = trn_insn_exec(k, i, &len);
        if (k->dirty_hi > k->dirty_lo) {
            /* Written without the memory API: tell migration. */
            memory_region_set_dirty(&k->s->mem, k->dirty_lo,
                                    k->dirty_hi - k->dirty_lo);
        }
        if (err) {
            trace_trainium_insn_fail(q->idx, i, err);
            if (err != NISA_ERR_ABORTED) {
                *insn = i;  /* i < NISA_MAX_INSNS: fits */
            }
            return err;
        }
    }
    return NISA_ERR_NONE;
}

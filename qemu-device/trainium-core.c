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
#include "trainium-isa.h"
#include "trace.h"

uint32_t trn_bad_insn(TrnKernel *k, const char *why)
{
    qemu_log_mask(LOG_GUEST_ERROR, "trainium: core queue %u: bad "
                  "instruction: %s\n", k->q->idx, why);
    return NRN_ERR_BAD_INSN;
}

static uint32_t trn_load_table(TrnKernel *k, const struct nrn_launch_desc *d)
{
    struct nrn_slot raw[NRN_MAX_SLOTS];
    uint32_t err;

    k->nslots = le16_to_cpu(d->nslots);
    if (k->nslots > NRN_MAX_SLOTS) {
        return NRN_ERR_BAD_DESC;
    }
    if (!k->nslots) {
        return NRN_ERR_NONE;
    }
    err = trn_host_rw(k->s, le64_to_cpu(d->table_addr), raw,
                      k->nslots * sizeof(raw[0]), false);
    if (err) {
        return err;
    }
    for (unsigned i = 0; i < k->nslots; i++) {
        uint64_t base = le64_to_cpu(raw[i].base), size = le64_to_cpu(raw[i].size);
        uint32_t access = le32_to_cpu(raw[i].access);

        if (raw[i].rsvd || access & ~(NRN_ACCESS_READ | NRN_ACCESS_WRITE)) {
            return NRN_ERR_BAD_DESC;
        }
        if (base > k->s->mem_size || size > k->s->mem_size - base) {
            return NRN_ERR_DEV_RANGE;
        }
        k->slots[i] = (TrnSlot){ .base = base, .size = size, .access = access };
    }
    return NRN_ERR_NONE;
}

static uint32_t trn_insn_exec(TrnKernel *k, const struct nrn_insn *in)
{
    if (in->rsvd) {
        return trn_bad_insn(k, "reserved field set");
    }
    switch (le16_to_cpu(in->opcode)) {
    case NRN_INSN_NOP:
        return NRN_ERR_NONE;
    case NRN_INSN_FILL:
    case NRN_INSN_COPY:
    case NRN_INSN_UNARY:
    case NRN_INSN_BINARY:
    case NRN_INSN_COMPARE:
    case NRN_INSN_WHERE:
        return trn_insn_elementwise(k, in);
    case NRN_INSN_REDUCE:
        return trn_insn_reduce(k, in);
    case NRN_INSN_SOFTMAX:
        return trn_insn_softmax(k, in);
    case NRN_INSN_MATMUL:
        return trn_insn_matmul(k, in);
    case NRN_INSN_GATHER:
        return trn_insn_gather(k, in);
    case NRN_INSN_SCATTER_ADD:
        return trn_insn_scatter_add(k, in);
    }
    return trn_bad_insn(k, "unknown opcode");
}

/* Elements of @t, saturated: its shape is not checked yet. */
static uint64_t trn_numel(const struct nrn_tensor *t)
{
    uint64_t n = 1;

    for (unsigned i = 0; i < MIN(t->ndim, NRN_MAX_DIMS); i++) {
        if (umul64_overflow(n, le32_to_cpu(t->shape[i]), &n)) {
            return UINT64_MAX;
        }
    }
    return n;
}

/*
 * An upper estimate of a kernel's work, in elements: per instruction, its
 * largest operand (times the inner dimension for MATMUL). Stops counting
 * past @limit. A malformed descriptor costs nothing: it fails at once.
 */
uint64_t trn_launch_cost(TrnQueue *q, const struct nrn_launch_desc *d,
                         uint64_t limit)
{
    uint64_t off = le64_to_cpu(d->code_off), len = le64_to_cpu(d->code_len);
    uint64_t n = len / sizeof(struct nrn_insn), cost = 0;
    struct nrn_insn insn;

    if (off > q->s->mem_size || len > q->s->mem_size - off) {
        return 0;
    }
    for (uint64_t i = 0; i < n && cost <= limit; i++) {
        uint64_t c = 0;

        memcpy(&insn, q->s->mem_ptr + off + i * sizeof(insn), sizeof(insn));
        c = trn_numel(&insn.dst);
        for (unsigned j = 0; j < ARRAY_SIZE(insn.src); j++) {
            c = MAX(c, trn_numel(&insn.src[j]));
        }
        if (le16_to_cpu(insn.opcode) == NRN_INSN_MATMUL && insn.src[0].ndim &&
            insn.src[0].ndim <= NRN_MAX_DIMS &&
            umul64_overflow(c, le32_to_cpu(insn.src[0].shape[insn.src[0].ndim - 1]),
                            &c)) {
            return UINT64_MAX;
        }
        /* Every instruction costs at least one element. */
        if (uadd64_overflow(cost, MAX(c, 1), &cost)) {
            return UINT64_MAX;
        }
    }
    return cost;
}

uint32_t trn_exec_launch(TrnQueue *q, const struct nrn_launch_desc *d)
{
    g_autofree TrnKernel *k = g_new0(TrnKernel, 1);
    uint64_t off = le64_to_cpu(d->code_off), len = le64_to_cpu(d->code_len);
    uint64_t n = len / sizeof(struct nrn_insn);
    struct nrn_insn insn;
    uint32_t err;

    k->q = q;
    k->s = q->s;
    if (d->rsvd[0] || d->rsvd[1] || d->rsvd[2] || d->rsvd2 ||
        len % sizeof(struct nrn_insn) || n > NRN_MAX_INSNS) {
        return NRN_ERR_BAD_DESC;
    }
    if (off > q->s->mem_size || len > q->s->mem_size - off) {
        return NRN_ERR_DEV_RANGE;
    }
    err = trn_load_table(k, d);
    if (err) {
        return err;
    }
    for (uint64_t i = 0; i < n; i++) {
        if (trn_queue_aborting(q)) {
            return NRN_ERR_ABORTED;
        }
        /* Copied out: the host may rewrite device memory meanwhile. */
        memcpy(&insn, q->s->mem_ptr + off + i * sizeof(insn), sizeof(insn));
        trace_trainium_insn(q->idx, i, le16_to_cpu(insn.opcode),
                            le16_to_cpu(insn.subop));
        err = trn_insn_exec(k, &insn);
        if (err) {
            trace_trainium_insn_fail(q->idx, i, err);
            return err;
        }
    }
    return NRN_ERR_NONE;
}

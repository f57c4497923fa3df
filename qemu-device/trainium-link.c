/*
 * Virtual Trainium accelerator: the link engines (docs/hardware.md
 * "Links"). Link l's engine is queue dma-queues + cores + l; its
 * NHW_OP_LINK moves bytes from this card's device memory into the memory
 * of the card at the link's other end, stored or combined with what is
 * there by the elementwise engine's BINARY arithmetic (trn_ew_run()), so
 * a reduction over a link computes what a core computes.
 *
 * The peer is held (trn_fabric_get()) for one chunk at a time, never
 * across a check for reset or pause: a peer unplugged between two chunks
 * fails the descriptor with NISA_ERR_PEER, and its unplug waits at most
 * for the chunk in flight.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/error-report.h"
#include "qemu/units.h"
#include "exec/memory.h"
#include "trainium-isa.h"
#include "trainium-ew.h"
#include "trainium-iter.h"
#include "trace.h"

/*
 * Bytes per chunk: 1 MiB for a copy; for a reduction fewer elements than
 * TRN_ABORT_GRAIN and than TRN_ITER_SHARE_MIN, so that the elementwise
 * engine never reaches its own check for a reset (which may park), nor
 * shares the chunk with the pool (which checks between pieces), while the
 * peer is held: a chunk is applied whole or not at all, and a migrated
 * LINK resumes after the chunks it finished without reducing any twice.
 */
#define TRN_LINK_CHUNK (1 * MiB)
#define TRN_LINK_REDUCE_ELEMS (MIN(TRN_ABORT_GRAIN, TRN_ITER_SHARE_MIN) / 2)

static const uint16_t trn_link_binary[NISA_NUM_LINK_REDUCE] = {
    [NISA_REDUCE_SUM] = NISA_BIN_ADD,
    [NISA_REDUCE_PROD] = NISA_BIN_MUL,
    [NISA_REDUCE_MAX] = NISA_BIN_MAX,
    [NISA_REDUCE_MIN] = NISA_BIN_MIN,
};

/* A contiguous 1-D view of @n elements of @dtype at @data. */
static void trn_link_view(TrnView *v, uint8_t *data, uint8_t dtype,
                          uint64_t n)
{
    memset(v, 0, sizeof(*v));
    v->data = data;
    v->dtype = dtype;
    v->esize = nisa_dtype_size(dtype);
    for (unsigned d = 0; d < NISA_MAX_DIMS; d++) {
        v->shape[d] = 1;
        v->stride[d] = 0;
    }
    v->shape[NISA_MAX_DIMS - 1] = n;
    v->stride[NISA_MAX_DIMS - 1] = 1;
    v->numel = n;
    v->contiguous = true;
}

/* dst = dst op src on @n bytes, as BINARY @op of @dtype does it. */
static uint32_t trn_link_reduce(TrnQueue *q, uint8_t *dst, const uint8_t *src,
                                uint64_t n, uint8_t red, uint8_t dtype)
{
    TrnKernel k = { .q = q, .s = q->s };
    TrnEw e = {
        .op = NISA_INSN_BINARY,
        .sub = trn_link_binary[red],
        .nsrc = 2,
        .alpha = 1.0,
    };
    uint64_t elems = n / nisa_dtype_size(dtype);

    trn_link_view(&e.dst, dst, dtype, elems);
    trn_link_view(&e.src[0], dst, dtype, elems);
    trn_link_view(&e.src[1], (uint8_t *)src, dtype, elems);
    e.integer = trn_ew_integer(&e);
    assert(!e.integer);
    return trn_ew_run(&k, &e);
}

/* Everything checked before the first byte moves. */
static uint32_t trn_link_check(TrnQueue *q, const struct nhw_link_desc *d,
                               unsigned *esize)
{
    uint64_t len = le64_to_cpu(d->len), off = le64_to_cpu(d->src_off);

    if (d->rsvd[0] || d->rsvd[1] || d->rsvd[2] || d->rsvd2 ||
        (d->flags & ~(NHW_DESC_F_IRQ | NHW_DESC_F_AFTER))) {
        TRN_GUEST_ERR(link_rsvd, "link queue %u: reserved field set "
                      "(tag %u)", q->idx, le32_to_cpu(d->tag));
        return NISA_ERR_BAD_DESC;
    }
    *esize = 1;
    if (d->reduce >= NISA_NUM_LINK_REDUCE ||
        (d->reduce == NISA_REDUCE_NONE && d->dtype) ||
        (d->reduce != NISA_REDUCE_NONE && !nisa_link_reduces_dtype(d->dtype))) {
        TRN_GUEST_ERR(link_op, "link queue %u: reduce %u of dtype %u is "
                      "not a link operation (tag %u)", q->idx, d->reduce,
                      d->dtype, le32_to_cpu(d->tag));
        return NISA_ERR_BAD_DESC;
    }
    if (d->reduce != NISA_REDUCE_NONE) {
        *esize = nisa_dtype_size(d->dtype);
        if (len % *esize || off % *esize ||
            le64_to_cpu(d->dst_off) % *esize) {
            TRN_GUEST_ERR(link_align, "link queue %u: length or offset not a "
                          "multiple of the dtype's %u bytes (tag %u)",
                          q->idx, *esize, le32_to_cpu(d->tag));
            return NISA_ERR_BAD_DESC;
        }
    }
    if (off + len < off || off + len > q->s->mem_size) {
        TRN_GUEST_ERR(link_src_range, "link queue %u: source [0x%" PRIx64
                      ", +0x%" PRIx64 ") outside device memory", q->idx,
                      off, len);
        return NISA_ERR_DEV_RANGE;
    }
    return NISA_ERR_NONE;
}

/*
 * Move bytes @done.. of @d to @rank (the membership @gen0), a chunk at a
 * time, recording the progress in q->link_done at each check for a reset
 * or pause (where migration may take it).
 */
static uint32_t trn_link_move(TrnQueue *q, const struct nhw_link_desc *d,
                              unsigned rank, uint64_t gen0, unsigned esize,
                              uint64_t done)
{
    TrnState *s = q->s, *peer;
    uint64_t len = le64_to_cpu(d->len), gen;
    uint64_t src = le64_to_cpu(d->src_off), dst = le64_to_cpu(d->dst_off);
    uint32_t err = NISA_ERR_NONE;

    while (done < len) {
        uint64_t n = MIN(len - done, d->reduce == NISA_REDUCE_NONE ?
                         TRN_LINK_CHUNK : TRN_LINK_REDUCE_ELEMS * esize);

        qatomic_set(&q->link_done, done);
        if (trn_queue_aborting(q)) {
            return NISA_ERR_ABORTED;
        }
        peer = trn_fabric_get(s->fabric, rank, &gen);
        if (peer && gen != gen0) {
            trn_fabric_put(s->fabric, rank);
            peer = NULL;
        }
        if (!peer) {
            TRN_GUEST_ERR(link_gone, "link queue %u: rank %u went away after "
                          "0x%" PRIx64 " of 0x%" PRIx64 " bytes", q->idx,
                          rank, done, len);
            return NISA_ERR_PEER;
        }
        if (d->reduce == NISA_REDUCE_NONE) {
            memcpy(peer->mem_ptr + dst + done, s->mem_ptr + src + done, n);
        } else {
            err = trn_link_reduce(q, peer->mem_ptr + dst + done,
                                  s->mem_ptr + src + done, n, d->reduce,
                                  d->dtype);
        }
        /* Written without the memory API: tell migration. */
        memory_region_set_dirty(&peer->mem, dst + done, n);
        trn_fabric_put(s->fabric, rank);
        if (err) {
            return err;
        }
        done += n;
    }
    return NISA_ERR_NONE;
}

uint32_t trn_exec_link(TrnQueue *q, const struct nhw_link_desc *d)
{
    TrnState *s = q->s, *peer;
    uint64_t len = le64_to_cpu(d->len), dst = le64_to_cpu(d->dst_off);
    uint64_t gen0, done;
    unsigned rank, esize;
    uint32_t err;

    err = trn_link_check(q, d, &esize);
    if (err || !len) {
        qatomic_set(&q->link_done, 0);
        return err;
    }
    rank = trn_fabric_peer(s->fabric, s->fabric_rank, q->link);
    peer = trn_fabric_get(s->fabric, rank, &gen0);
    if (!peer) {
        qatomic_set(&q->link_done, 0);
        TRN_GUEST_ERR(link_down, "link queue %u: link %d is down (no card "
                      "at rank %u)", q->idx, q->link, rank);
        return NISA_ERR_PEER;
    }
    if (dst + len < dst || dst + len > peer->mem_size) {
        trn_fabric_put(s->fabric, rank);
        qatomic_set(&q->link_done, 0);
        TRN_GUEST_ERR(link_dst_range, "link queue %u: destination [0x%" PRIx64
                      ", +0x%" PRIx64 ") outside the memory of rank %u",
                      q->idx, dst, len, rank);
        return NISA_ERR_DEV_RANGE;
    }
    trn_fabric_put(s->fabric, rank);

    /* A descriptor migrated while it ran goes on where it stopped. */
    done = qatomic_read(&q->link_done);
    if (done && (done >= len || done % esize)) {
        error_report("trainium: link queue %u: migrated progress 0x%" PRIx64
                     " of 0x%" PRIx64 " bytes is invalid: descriptor failed",
                     q->idx, done, len);
        qatomic_set(&q->link_done, 0);
        return NISA_ERR_BAD_DESC;
    }
    trace_trainium_link_start(q->idx, rank, d->reduce, d->dtype, len, done);
    err = trn_link_move(q, d, rank, gen0, esize, done);
    if (err != NISA_ERR_ABORTED) {
        qatomic_set(&q->link_done, 0);
    }
    return err;
}

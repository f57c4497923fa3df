/*
 * Virtual Trainium accelerator: what the indexed instructions (GATHER,
 * SCATTER_ADD in trainium-index.c, SCATTER in trainium-scatter.c) share --
 * their operand checks and the walk over an index tensor.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef HW_MISC_TRAINIUM_INDEX_H
#define HW_MISC_TRAINIUM_INDEX_H

#include "trainium-isa.h"

typedef struct TrnIndexed {
    TrnView dst, src, idx;
    unsigned axis;          /* right-aligned dimension of the axis */
    uint64_t outer, inner;  /* around the axis, in the iterated tensor */
} TrnIndexed;

uint32_t trn_indexed_init(TrnKernel *k, const struct nisa_insn *in,
                          unsigned mode, bool scatter, TrnIndexed *x);
/* Every index in [0, @limit) (else NISA_ERR_BAD_INDEX, logged). */
uint32_t trn_indexed_check(TrnKernel *k, const TrnIndexed *x, uint64_t limit);
/* The index at @p, checked again against @limit where it is used. */
bool trn_index(const TrnView *idx, const uint8_t *p, uint64_t limit,
               uint64_t *out);
/* The next coordinates of @v in row-major order. */
void trn_step(const TrnView *v, uint64_t c[NISA_MAX_DIMS]);

/* Chunk buffers of TRN_CHUNK_ELEMS elements for a row function. */
typedef struct TrnRowBufs {
    double *a, *b;
    int64_t *ia, *ib;
} TrnRowBufs;

/*
 * A row function: @n elements at @big in the tensor the index addresses
 * (dst of a scatter, src of a select) and at @small in the other one.
 */
typedef void TrnRowFn(TrnIndexed *x, uint64_t big, uint64_t small,
                      uint64_t n, TrnRowBufs *bufs, void *opaque);

/*
 * The index_* forms' walk: for each position around the axis and each
 * index l, the row of @inner elements at index idx[l] (checked against
 * @limit) and at l, a chunk at a time, checking for a reset as it goes.
 */
uint32_t trn_index_rows(TrnKernel *k, TrnIndexed *x, uint64_t limit,
                        TrnRowFn *row, void *opaque);

/*
 * A complex64 instruction (dst and src0 complex64) run by @fn on real
 * views: @add false, once with both as int64 views of the same bytes
 * (exact moves); @add true, once per part with both as float32 views of
 * the real parts, then of the imaginary parts (stride doubled, contiguous
 * false), so that each part adds as float32 operands do.
 */
typedef uint32_t TrnPartFn(TrnKernel *k, TrnIndexed *x, void *opaque);
uint32_t trn_indexed_parts(TrnKernel *k, const TrnIndexed *x, bool add,
                           TrnPartFn *fn, void *opaque);

#endif /* HW_MISC_TRAINIUM_INDEX_H */

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

#endif /* HW_MISC_TRAINIUM_INDEX_H */

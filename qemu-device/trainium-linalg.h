/*
 * Virtual Trainium accelerator: LINALG internals shared by its two files --
 * trainium-linalg.c (the operand contract, checked before anything runs,
 * and the batch loop) and trainium-linalg-lapack.c (one batch entry on
 * LAPACK).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef HW_MISC_TRAINIUM_LINALG_H
#define HW_MISC_TRAINIUM_LINALG_H

#include "trainium-isa.h"

typedef struct La {
    TrnKernel *k;
    uint32_t flags;
    TrnView d, s[3];
    uint64_t b0, b1;         /* the current batch entry */
    double rcond;            /* GELSY */
} La;

/*
 * One batch entry of a checked instruction, in float32 or (an F64
 * operand) float64. @a (as many elements as the check asked for) receives
 * src0's matrix, column-major with leading dim m. Returns an NISA_ERR_*.
 */
uint32_t trn_la_entry_f32(La *la, uint16_t op, float *a);
uint32_t trn_la_entry_f64(La *la, uint16_t op, double *a);

#endif /* HW_MISC_TRAINIUM_LINALG_H */

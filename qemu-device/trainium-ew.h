/*
 * Virtual Trainium accelerator: an elementwise instruction (FILL, COPY,
 * UNARY, BINARY, COMPARE, WHERE) once its operands are checked, shared by
 * the general engine (trainium-elementwise.c) and the float32 one
 * (trainium-ew-f32.c).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef HW_MISC_TRAINIUM_EW_H
#define HW_MISC_TRAINIUM_EW_H

#include "trainium-isa.h"

/* One elementwise instruction, its operands checked. */
typedef struct TrnEw {
    enum nisa_opcode op;
    unsigned sub;
    uint32_t flags;
    unsigned nsrc;
    double scalar, alpha;
    int64_t iscalar, ialpha;
    bool integer;      /* computed exactly on int64 */
    bool wrap;         /* an I32 result wraps (arithmetic) or saturates */
    TrnView dst, src[3];
} TrnEw;

/*
 * Run @e straight from device memory when it is a FILL, COPY, UNARY or
 * BINARY whose destination and sources are all float32, with the same
 * arithmetic as the general engine (trainium-ew-ops.h, rounded once by
 * trn_to_f32()): true with *@err set if it did, false (nothing written)
 * when the instruction is not of that form.
 */
bool trn_ew_f32(TrnKernel *k, const TrnEw *e, uint32_t *err);

#endif

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

/* The opcodes trn_insn_elementwise() is never called with. */
#define TRN_NOT_ELEMENTWISE                                                 \
    case NISA_INSN_NOP:                                                      \
    case NISA_INSN_REDUCE:                                                   \
    case NISA_INSN_SOFTMAX:                                                  \
    case NISA_INSN_MATMUL:                                                   \
    case NISA_INSN_GATHER:                                                   \
    case NISA_INSN_SCATTER_ADD:                                              \
    case NISA_INSN_TIMESTAMP:                                                \
    case NISA_INSN_RANDOM:                                                   \
    case NISA_INSN_LINALG:                                                   \
    case NISA_INSN_SORT:                                                     \
    case NISA_INSN_SCAN:                                                     \
    case NISA_INSN_SCATTER:                                                  \
    case NISA_INSN_IOTA:                                                     \
    case NISA_NUM_OPCODES

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
 * BINARY whose destination and sources are all float32, a COMPARE of
 * float32 sources, or a WHERE choosing between float32 sources (its
 * condition BOOL, U8 or F32) into float32, with the same
 * arithmetic as the general engine (trainium-ew-ops.h, rounded once by
 * trn_to_f32()): true with *@err set if it did, false (nothing written)
 * when the instruction is not of that form.
 */
bool trn_ew_f32(TrnKernel *k, const TrnEw *e, uint32_t *err);

#endif

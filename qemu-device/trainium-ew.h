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

/*
 * The opcodes trn_insn_elementwise() is never called with: every line of
 * NISA_OPCODES whose class is not EW, as case labels.
 */
#define TRN_NOT_EW_(NAME, name, cls, ...) TRN_NOT_EW_##cls(NAME)
#define TRN_NOT_EW_EW(NAME)
#define TRN_NOT_EW_CASE(NAME) case NISA_INSN_##NAME:
#define TRN_NOT_EW_NONE   TRN_NOT_EW_CASE
#define TRN_NOT_EW_AXIS   TRN_NOT_EW_CASE
#define TRN_NOT_EW_INDEX  TRN_NOT_EW_CASE
#define TRN_NOT_EW_MATMUL TRN_NOT_EW_CASE
#define TRN_NOT_EW_LINALG TRN_NOT_EW_CASE
#define TRN_NOT_EW_GEN    TRN_NOT_EW_CASE
#define TRN_NOT_EW_CLOCK  TRN_NOT_EW_CASE
#define TRN_NOT_EW_GROUP  TRN_NOT_EW_CASE
#define TRN_NOT_EW_CONT   TRN_NOT_EW_CASE
#define TRN_NOT_ELEMENTWISE                                                 \
    NISA_OPCODES(TRN_NOT_EW_)                                               \
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

/*
 * Execute @e, its operands checked and e->integer decided
 * (trn_ew_integer()): what trn_insn_elementwise() does once it has
 * checked the instruction; also the link engine's reduction
 * (trainium-link.c), so that it computes what BINARY computes.
 */
uint32_t trn_ew_run(TrnKernel *k, TrnEw *e);

/*
 * The pieces of trn_insn_elementwise() that EXPR (trainium-expr.c) runs
 * each step of its program through, so that a step computes exactly what
 * the instruction would:
 * trn_ew_check() checks @in's opcode, subop and flags and says how many
 * tensor sources it takes; trn_ew_integer() makes e->alpha 1.0 where the
 * instruction ignores it, then decides (from @e's op, sub, flags, scalar,
 * alpha, nsrc and the dtypes of e->dst and e->src[]) whether it computes
 * exactly on int64, setting e->iscalar, e->ialpha and e->wrap;
 * trn_ew_bitwise() is true for a function of kind BITS.
 */
uint32_t trn_ew_check(TrnKernel *k, const struct nisa_insn *in,
                      unsigned *nsrc);
bool trn_ew_integer(TrnEw *e);
bool trn_ew_bitwise(const TrnEw *e);
/*
 * @e's arithmetic on @n elements, in double: @src[0..e->nsrc) in, @o out
 * (not yet rounded to a dtype); @sbuf (n elements) holds the scalar of a
 * SCALAR form. The int64 form likewise (e->integer), WHERE's condition
 * in @cond as doubles.
 */
/*
 * Whether integer division @e by the divisors of its @n elements (its
 * operands @src, after the scalar and REVERSE) divides by zero.
 */
bool trn_ew_divides_by_zero(const TrnEw *e, const int64_t *const src[3],
                            uint64_t n);
void trn_ew_apply_f64(const TrnEw *e, const double *const src[3],
                      double *sbuf, double *o, uint64_t n);
void trn_ew_apply_i64(const TrnEw *e, const double *cond,
                      const int64_t *const src[3], int64_t *sbuf,
                      int64_t *o, uint64_t n);

/*
 * trainium-ew-complex.c: whether an operand of @e is complex64, and the
 * engine that then runs @e (its operands checked, e->alpha as the
 * instruction gives it).
 */
bool trn_ew_is_complex(const TrnEw *e);
uint32_t trn_ew_complex(TrnKernel *k, TrnEw *e);

#endif

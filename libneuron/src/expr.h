/* SPDX-License-Identifier: MIT */
/*
 * EXPR groups inside libneuron (expr.c): an EXPR instruction and its
 * EXPR_DATA continuations (docs/hardware.md, "EXPR") must reach the card
 * in one kernel, in order. Shared by the eager path (nrn_op_expr), the
 * graph launch and the fusion pass (graph-fuse.c).
 */
#ifndef NRN_EXPR_H
#define NRN_EXPR_H

#include "internal.h"

/* Buffers one group names at most: dst and the inputs. */
#define NRN_EXPR_MAX_BUFS (1 + NISA_EXPR_MAX_INPUTS)

/* Instructions of the group starting at @in: an EXPR's length, else 1. */
unsigned int nrn_insn_group_length(const struct nisa_insn *in);

/*
 * With @s's lock held, before issuing a group of @len instructions: flush
 * the batch unless the whole group (and NRN_EXPR_MAX_BUFS more buffers)
 * fits, so that no flush falls inside it. 0 or the flush's error.
 */
int nrn_stream_group_room_locked(struct nrn_stream *s, unsigned int len);

/*
 * Check @e for inputs of @in_dtypes[0..n) into a dst of @dst_dtype, as the
 * card will: 0 or -EINVAL (-E2BIG: too many inputs).
 */
int nrn_expr_check(const struct nrn_expr *e, const uint8_t *in_dtypes,
		   unsigned int n, unsigned int dst_dtype);

/*
 * The group computing @e into @dst from @in[0..n) (checked), into @out
 * (room for nisa_expr_length(e->nsteps, n) instructions); its length.
 * Operand slots and offsets are copied from the tensors given.
 */
unsigned int nrn_expr_encode(const struct nrn_expr *e,
			     const struct nisa_tensor *dst,
			     const struct nisa_tensor *in, unsigned int n,
			     struct nisa_insn *out);

/*
 * The step computing what elementwise instruction @in (FILL, COPY, UNARY,
 * BINARY, COMPARE, WHERE) computes, registers 0, into @st: its number of
 * sources, or -1 if @in cannot be a step.
 */
int nrn_expr_step_from_insn(const struct nisa_insn *in, struct nisa_expr_step *st);

/*
 * Where input @i of an EXPR group lives: instruction @*rec of the group
 * (0: the EXPR), operand @*opnd (0 dst, 1..3 src[0..2]).
 */
void nrn_expr_input_pos(unsigned int i, unsigned int *rec, unsigned int *opnd);

/*
 * ops.c: @ts[0] (dst) and @ts[1..n) broadcast to its shape, shaped as the
 * elementwise operations shape theirs (broadcast, size-1 dims dropped,
 * contiguous neighbours merged): *@ndim dims of @shape, operand i's
 * strides in @strides[i]. -EINVAL if one does not broadcast.
 */
int nrn_shape_elementwise(const struct nrn_tensor_desc *const *ts, unsigned int n,
			  unsigned int *ndim, int64_t *shape,
			  int64_t (*strides)[NRN_TENSOR_MAX_DIMS]);

#endif /* NRN_EXPR_H */

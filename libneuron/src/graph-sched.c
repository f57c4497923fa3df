// SPDX-License-Identifier: MIT
/*
 * The scheduling passes of graph compilation (NRN_GRAPH_FUSE), run before
 * fusion on the IR of a capture; graph.h describes both.
 *
 * Copy forwarding. AOTAutograd functionalizes an in-place update (an
 * optimizer's p.add_(...), its momentum buffers) into an out-of-place
 * result and a copy back into the input: COPY p <- t. When t is scratch,
 * made by one elementwise instruction P that wrote exactly what the COPY
 * reads, and nothing between P and the COPY touches p's bytes or reads t
 * other than exactly as written, P writes p itself, those reads read p,
 * and the COPY goes -- if t is dead after it. The copy maps element i of t
 * to element i of p (same shape), as P's walk over its dst does: the same
 * values, in the same place, one pass less.
 *
 * Clustering. A foreach operation issues one instruction per tensor, then
 * the next operation's: mul(b0), mul(b1), .., add(b0), add(b1), .. The
 * fusion pass fuses consecutive instructions only, so each elementwise
 * instruction with a scratch dst gets its first consumer moved next to it,
 * when nothing in between is ordered against the consumer; an elementwise
 * instruction in between that the consumer depends on (the FILL of a
 * scalar it reads) is moved before the producer instead, when it can be.
 * Two instructions are ordered when they touch common bytes and one of
 * them writes them; a TIMESTAMP is never crossed. A consumer is looked for
 * within NRN_CLUSTER_WINDOW instructions, which bounds the pass's cost.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "expr.h"
#include "graph.h"

#define NRN_CLUSTER_WINDOW 48
/* Reads of a forwarded copy's source between its producer and it. */
#define NRN_FORWARD_READS 64

static unsigned int nrn_unit_len(const struct nrn_graph_ir *ir, unsigned int n)
{
	unsigned int len = nrn_insn_group_length(&ir->insns[n].insn);

	return len < ir->ninsns - n ? len : ir->ninsns - n;
}

/* Operand @i of @x and operand @j of @y touch common bytes. */
static bool nrn_opnds_meet(const struct nrn_graph_insn *x, unsigned int i,
			   const struct nrn_graph_insn *y, unsigned int j)
{
	return x->region[i] != NRN_GRAPH_NONE && x->region[i] == y->region[j] &&
	       nrn_overlap(nrn_fopnd(&x->insn, i), nrn_fopnd(&y->insn, j));
}

/* @x and @y touch common bytes and one of them writes them. */
static bool nrn_ordered(const struct nrn_graph_insn *x, const struct nrn_graph_insn *y)
{
	if (nisa_opcode_class(x->insn.opcode) == NISA_CLASS_CLOCK ||
	    nisa_opcode_class(y->insn.opcode) == NISA_CLASS_CLOCK)
		return true;
	for (unsigned int i = 0; i < NRN_GRAPH_OPNDS; i++)
		for (unsigned int j = 0; j < NRN_GRAPH_OPNDS; j++)
			if (((x->access[i] | y->access[j]) & NISA_ACCESS_WRITE) &&
			    nrn_opnds_meet(x, i, y, j))
				return true;
	return false;
}

/* The unit at @u (@len instructions) is ordered against instruction @y. */
static bool nrn_unit_ordered(const struct nrn_graph_ir *ir, unsigned int u,
			     unsigned int len, const struct nrn_graph_insn *y)
{
	for (unsigned int k = 0; k < len; k++)
		if (nrn_ordered(&ir->insns[u + k], y))
			return true;
	return false;
}

/* Move the instruction at @from to @to (< @from), shifting those between. */
static void nrn_move_up(struct nrn_graph_ir *ir, unsigned int from, unsigned int to)
{
	struct nrn_graph_insn t = ir->insns[from];

	memmove(&ir->insns[to + 1], &ir->insns[to], (from - to) * sizeof(t));
	ir->insns[to] = t;
}

static bool nrn_single(const struct nrn_graph_insn *gi)
{
	enum nisa_class c = nisa_opcode_class(gi->insn.opcode);

	return c != NISA_CLASS_GROUP && c != NISA_CLASS_CONT;
}

/* ---- copy forwarding ---- */

static bool nrn_plain_copy(const struct nrn_graph_ir *ir, const struct nrn_graph_insn *gi)
{
	const struct nisa_tensor *d = &gi->insn.dst, *s = &gi->insn.src[0];

	if (gi->insn.opcode != NISA_INSN_COPY || s->dtype != d->dtype ||
	    gi->region[0] == NRN_GRAPH_NONE || gi->region[1] == NRN_GRAPH_NONE ||
	    ir->regions[gi->region[1]].kind != NRN_REGION_SCRATCH ||
	    ir->regions[gi->region[0]].kind == NRN_REGION_CONST || d->ndim != s->ndim)
		return false;
	for (unsigned int k = 0; k < d->ndim && k < NISA_MAX_DIMS; k++)
		if (d->shape[k] != s->shape[k])
			return false;
	return nrn_no_self_overlap(d) && nrn_no_self_overlap(s);
}

/* @gi writes operand 0 only, and is an elementwise walk over it. */
static bool nrn_producer(const struct nrn_graph_insn *gi)
{
	if (nisa_opcode_class(gi->insn.opcode) != NISA_CLASS_EW)
		return false;
	for (unsigned int i = 1; i < NRN_GRAPH_OPNDS; i++)
		if (gi->region[i] != NRN_GRAPH_NONE && (gi->access[i] & NISA_ACCESS_WRITE))
			return false;
	return gi->region[0] != NRN_GRAPH_NONE;
}

/* After @c, nothing reads the bytes @c's source names before all are written. */
static bool nrn_src_dead_after(const struct nrn_graph_ir *ir, unsigned int c)
{
	const struct nrn_graph_insn *gc = &ir->insns[c];

	for (unsigned int n = c + 1; n < ir->ninsns; n++) {
		const struct nrn_graph_insn *gi = &ir->insns[n];
		bool covered = false;

		for (unsigned int i = 0; i < NRN_GRAPH_OPNDS; i++) {
			if (!nrn_opnds_meet(gi, i, gc, 1))
				continue;
			if (gi->access[i] & NISA_ACCESS_READ)
				return false;
			if (nrn_covers(nrn_fopnd(&gi->insn, i), &gc->insn.src[0]))
				covered = true;
		}
		/* An EXPR's continuations are read before it writes: go on. */
		if (covered && nrn_single(gi))
			return true;
	}
	return true;
}

/*
 * Forward the COPY at @c if it can be (see the top): rewrites the
 * producer and the reads between; the COPY is then to be dropped.
 */
static bool nrn_forward_copy(struct nrn_graph_ir *ir, unsigned int c, unsigned int *reads)
{
	struct nrn_graph_insn *gc = &ir->insns[c];
	unsigned int nreads = 0, p;

	for (p = c; p-- > 0;) {
		struct nrn_graph_insn *gi = &ir->insns[p];
		bool touches_t = false, writes_t = false;

		for (unsigned int i = 0; i < NRN_GRAPH_OPNDS; i++) {
			if (nrn_opnds_meet(gi, i, gc, 1)) {
				touches_t = true;
				if (gi->access[i] & NISA_ACCESS_WRITE)
					writes_t = true;
				else if (!nrn_single(gi) || !nrn_same_opnd(gi, i, gc, 1))
					return false;	/* reads part of it, or in a group */
			}
		}
		if (writes_t)
			break;
		for (unsigned int i = 0; i < NRN_GRAPH_OPNDS; i++)
			if (nrn_opnds_meet(gi, i, gc, 0))
				return false;	/* the copy's dst is used before it */
		if (touches_t) {
			if (nreads == NRN_FORWARD_READS)
				return false;
			reads[nreads++] = p;
		}
	}
	if (p >= c)
		return false;	/* t holds what the graph was called with */
	{
		struct nrn_graph_insn *gp = &ir->insns[p];

		if (!nrn_single(gp) || !nrn_producer(gp) || !nrn_same_opnd(gp, 0, gc, 1))
			return false;
		/* A source of p in p's new dst: only exactly it (in place). */
		for (unsigned int i = 1; i < NRN_GRAPH_OPNDS; i++)
			if (nrn_opnds_meet(gp, i, gc, 0) && !nrn_same_opnd(gp, i, gc, 0))
				return false;
	}
	if (!nrn_src_dead_after(ir, c))
		return false;
	for (unsigned int r = 0; r < nreads; r++) {
		struct nrn_graph_insn *gi = &ir->insns[reads[r]];

		for (unsigned int i = 1; i < NRN_GRAPH_OPNDS; i++)
			if (nrn_opnds_meet(gi, i, gc, 1)) {
				gi->region[i] = gc->region[0];
				gi->insn.src[i - 1] = gc->insn.dst;
			}
	}
	ir->insns[p].region[0] = gc->region[0];
	ir->insns[p].insn.dst = gc->insn.dst;
	return true;
}

int nrn_graph_forward_copies(struct nrn_graph_ir *ir)
{
	unsigned int *reads = malloc(NRN_FORWARD_READS * sizeof(*reads));
	bool *drop = calloc(ir->ninsns ? ir->ninsns : 1, sizeof(*drop));
	unsigned int n, no = 0, removed = 0;

	if (!reads || !drop) {
		free(reads);
		free(drop);
		return -ENOMEM;
	}
	for (n = 0; n < ir->ninsns; n += nrn_unit_len(ir, n))
		if (nrn_plain_copy(ir, &ir->insns[n]) && nrn_forward_copy(ir, n, reads)) {
			/* Later copies see the rewritten producer; this one reads nothing now. */
			ir->insns[n].region[0] = ir->insns[n].region[1] = NRN_GRAPH_NONE;
			drop[n] = true;
			removed++;
		}
	for (n = 0; n < ir->ninsns; n++)
		if (!drop[n])
			ir->insns[no++] = ir->insns[n];
	ir->ninsns = no;
	ir->fused += removed;
	free(reads);
	free(drop);
	return 0;
}

/* ---- clustering ---- */

/*
 * The first unit after @i that touches the bytes @i wrote, if it reads
 * them, within the window; else UINT32_MAX.
 */
static unsigned int nrn_first_reader(const struct nrn_graph_ir *ir, unsigned int i)
{
	const struct nrn_graph_insn *p = &ir->insns[i];
	unsigned int end = ir->ninsns - i - 1 > NRN_CLUSTER_WINDOW ?
			   i + 1 + NRN_CLUSTER_WINDOW : ir->ninsns;

	for (unsigned int u = i + 1; u < end; u += nrn_unit_len(ir, u)) {
		for (unsigned int k = 0; k < nrn_unit_len(ir, u); k++) {
			const struct nrn_graph_insn *gi = &ir->insns[u + k];
			bool met = false;

			for (unsigned int j = 0; j < NRN_GRAPH_OPNDS; j++) {
				if (!nrn_opnds_meet(gi, j, p, 0))
					continue;
				if (gi->access[j] & NISA_ACCESS_READ)
					return k ? UINT32_MAX : u;
				met = true;
			}
			if (met)
				return UINT32_MAX;	/* written over unread */
		}
	}
	return UINT32_MAX;
}

/* The unit at @k can go before the instruction at @i: ordered with none between. */
static bool nrn_hoistable(const struct nrn_graph_ir *ir, unsigned int i, unsigned int k)
{
	const struct nrn_graph_insn *gk = &ir->insns[k];

	if (!nrn_single(gk) || !nrn_fusable(gk))
		return false;
	for (unsigned int u = i; u < k; u += nrn_unit_len(ir, u))
		if (nrn_unit_ordered(ir, u, nrn_unit_len(ir, u), gk))
			return false;
	return true;
}

/*
 * Bring the first consumer of the instruction at @i next to it; the
 * producer's index afterwards (instructions may have gone before it).
 */
static unsigned int nrn_cluster_one(struct nrn_graph_ir *ir, unsigned int i)
{
	unsigned int j = nrn_first_reader(ir, i), at = i, k;
	const struct nrn_graph_insn *gj;

	if (j == UINT32_MAX || j == i + 1)
		return i;
	gj = &ir->insns[j];
	if (!nrn_single(gj) || !nrn_fusable(gj) ||
	    nrn_numel(&gj->insn.dst) != nrn_numel(&ir->insns[i].insn.dst))
		return i;
	/* A dry run first: nothing moves unless the consumer can. */
	for (k = at + 1; k < j; k += nrn_unit_len(ir, k))
		if (nrn_unit_ordered(ir, k, nrn_unit_len(ir, k), gj) &&
		    !nrn_hoistable(ir, i, k))
			return i;
	for (k = at + 1; k < j;) {
		unsigned int len = nrn_unit_len(ir, k);

		if (!nrn_unit_ordered(ir, k, len, &ir->insns[j])) {
			k += len;
			continue;
		}
		/* Still hoistable: what it was checked against only shrank. */
		nrn_move_up(ir, k, at);
		at++;
		k++;
	}
	nrn_move_up(ir, j, at + 1);
	return at;
}

int nrn_graph_cluster(struct nrn_graph_ir *ir)
{
	for (unsigned int i = 0; i + 1 < ir->ninsns; i += nrn_unit_len(ir, i)) {
		const struct nrn_graph_insn *gi = &ir->insns[i];

		if (nrn_single(gi) && nrn_fusable(gi) &&
		    ir->regions[gi->region[0]].kind == NRN_REGION_SCRATCH)
			i = nrn_cluster_one(ir, i);
	}
	return 0;
}

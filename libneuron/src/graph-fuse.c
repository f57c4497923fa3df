// SPDX-License-Identifier: MIT
/*
 * The fusion pass of graph compilation (NRN_GRAPH_FUSE): each maximal run
 * of consecutive elementwise instructions (FILL, UNARY, BINARY, COMPARE,
 * WHERE, COPY converting a dtype) over one dst shape whose intermediate
 * results are dead outside it becomes one EXPR group (docs/hardware.md,
 * "EXPR"): one pass over memory, the intermediates in the card's registers,
 * each rounded to its dtype as its temporary was -- the same bits.
 *
 * An intermediate (the dst of a run's instruction but the last) may be
 * dropped only if it is SCRATCH, later instructions of the run read it
 * exactly as it was written (the same tensor: then it is a register; a
 * read overlapping it otherwise stops the run), and it is dead after the
 * run: a later instruction of the run writes all of it again, or after the
 * run nothing reads its bytes before something writes them all (a caching
 * allocator's temporaries share memory: liveness is per byte extent and
 * per value, not per region).
 * Everything else the run reads is an input; the run's last dst is the
 * EXPR's dst, which may be exactly one of the inputs but overlap none
 * otherwise. A run fuses only if it fits the EXPR (8 inputs, 32 steps, 16
 * registers) and takes no more instructions than it replaces; else the
 * longest prefix that does, and the search goes on after it.
 *
 * Matmul epilogues: MATMUL writes its product once (with its bias, if the
 * IF_BIAS form was used); the elementwise chain after it (bias add,
 * activation, residual add, scale) becomes one EXPR reading the product,
 * so an epilogue of k operations costs one pass instead of k. Folding the
 * epilogue into the MATMUL itself would need a MATMUL with a program,
 * which the card does not have (sgemm writes the product first anyway).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "expr.h"
#include "graph.h"

#define MAXG NISA_EXPR_MAX_STEPS	/* instructions one group replaces */
#define MAXV (NISA_EXPR_MAX_INPUTS + MAXG) /* values: inputs, then steps */

/* The instructions that use each region, in order (CSR). */
struct nrn_fuse_uses {
	unsigned int *start;	/* [nregions + 1] */
	unsigned int *insn;
};

struct nrn_fuse_plan {
	struct nisa_tensor dst;		/* the last dst, in the run's shape */
	unsigned int nin;
	struct nisa_tensor in[NISA_EXPR_MAX_INPUTS];
	uint32_t in_region[NISA_EXPR_MAX_INPUTS];
	struct nrn_expr e;
};

const struct nisa_tensor *nrn_fopnd(const struct nisa_insn *in, unsigned int i)
{
	return i ? &in->src[i - 1] : &in->dst;
}

bool nrn_same_opnd(const struct nrn_graph_insn *x, unsigned int i,
		   const struct nrn_graph_insn *y, unsigned int j)
{
	struct nisa_tensor a = *nrn_fopnd(&x->insn, i), b = *nrn_fopnd(&y->insn, j);

	a.slot = b.slot = 0;
	return x->region[i] == y->region[j] && !memcmp(&a, &b, sizeof(a));
}

bool nrn_overlap(const struct nisa_tensor *a, const struct nisa_tensor *b)
{
	int64_t alo, ahi, blo, bhi;

	if (!nrn_tensor_extent(a, &alo, &ahi) || !nrn_tensor_extent(b, &blo, &bhi))
		return false;
	return alo < bhi && blo < ahi;
}

bool nrn_covers(const struct nisa_tensor *a, const struct nisa_tensor *b)
{
	int64_t alo, ahi, blo, bhi;

	if (!nrn_tensor_extent(a, &alo, &ahi) || !nrn_tensor_extent(b, &blo, &bhi))
		return false;
	return alo <= blo && bhi <= ahi;
}

bool nrn_fusable(const struct nrn_graph_insn *gi)
{
	struct nisa_expr_step st;

	if (gi->region[0] == NRN_GRAPH_NONE)
		return false;
	if (gi->insn.opcode == NISA_INSN_COPY &&
	    gi->insn.src[0].dtype == gi->insn.dst.dtype)
		return false;	/* a plain copy keeps NaN payloads: not a step */
	/* An EXPR computes in real arithmetic only. */
	if (nisa_dtype_is_complex(gi->insn.dst.dtype))
		return false;
	for (unsigned int i = 0; i < 3; i++)
		if (nisa_dtype_is_complex(gi->insn.src[i].dtype))
			return false;
	return nrn_expr_step_from_insn(&gi->insn, &st) >= 0;
}

uint64_t nrn_numel(const struct nisa_tensor *t)
{
	uint64_t n = 1;

	for (unsigned int d = 0; d < t->ndim && d < NISA_MAX_DIMS; d++)
		n *= t->shape[d];
	return n;
}

/*
 * The operations shape each instruction's operands on their own (merging
 * the dimensions contiguous in all of them), so the instructions of a
 * chain may see one row-major element order through different shapes
 * ([64, 50] beside [3200]). The run's shape is their common refinement:
 * every instruction's dims split into it (a split is always possible; a
 * merge is not). False if there is none within four dims.
 */
static bool nrn_refine(const struct nrn_graph_ir *ir, unsigned int a, unsigned int b,
		       uint32_t *shape, unsigned int *nd)
{
	uint64_t v[MAXG * NISA_MAX_DIMS], t;
	unsigned int n = 0, k, m;

	for (unsigned int q = a; q <= b; q++) {
		const struct nisa_tensor *d = &ir->insns[q].insn.dst;
		uint64_t p = 1;

		for (unsigned int i = d->ndim < NISA_MAX_DIMS ? d->ndim : NISA_MAX_DIMS; i-- > 0;) {
			if (d->shape[i] == 1)
				continue;
			p *= d->shape[i];
			v[n++] = p;	/* an inner size */
		}
	}
	for (k = 1; k < n; k++)		/* sort (few values) */
		for (m = k; m > 0 && v[m - 1] > v[m]; m--) {
			t = v[m];
			v[m] = v[m - 1];
			v[m - 1] = t;
		}
	for (k = 0, m = 0; k < n; k++)	/* unique */
		if (!m || v[m - 1] != v[k])
			v[m++] = v[k];
	if (m > NISA_MAX_DIMS)
		return false;
	*nd = m ? m : 1;
	shape[*nd - 1] = 1;
	for (k = 0; k < m; k++) {
		uint64_t inner = k ? v[k - 1] : 1;

		if (v[k] % inner)
			return false;
		shape[m - 1 - k] = (uint32_t)(v[k] / inner);
	}
	return true;
}

/* @t (of an instruction's shape) in the run's shape @S (@nd dims). */
static bool nrn_reshape(const struct nisa_tensor *t, const uint32_t *S, unsigned int nd,
			struct nisa_tensor *out)
{
	int k = (int)nd - 1;

	*out = *t;
	out->ndim = (uint8_t)nd;
	memset(out->shape, 0, sizeof(out->shape));
	memset(out->strides, 0, sizeof(out->strides));
	for (unsigned int d = t->ndim < NISA_MAX_DIMS ? t->ndim : NISA_MAX_DIMS; d-- > 0;) {
		uint64_t need = t->shape[d], have = 1;

		if (need == 1)
			continue;
		while (have < need) {
			if (k < 0)
				return false;
			out->shape[k] = S[k];
			out->strides[k] = t->strides[d] * (int64_t)have;
			have *= S[k--];
		}
		if (have != need)
			return false;
	}
	for (; k >= 0; k--) {
		if (S[k] != 1)
			return false;
		out->shape[k] = 1;
	}
	return true;
}

/* A register holds one value per element: see graph.h. */
bool nrn_no_self_overlap(const struct nisa_tensor *t)
{
	int64_t st[NISA_MAX_DIMS], ex[NISA_MAX_DIMS];
	unsigned int n = 0;
	int64_t span = 0;

	for (unsigned int d = 0; d < t->ndim && d < NISA_MAX_DIMS; d++) {
		if (t->shape[d] <= 1)
			continue;
		st[n] = t->strides[d] < 0 ? -t->strides[d] : t->strides[d];
		ex[n++] = t->shape[d];
	}
	for (unsigned int k = 1; k < n; k++)		/* by stride */
		for (unsigned int m = k; m > 0 && st[m - 1] > st[m]; m--) {
			int64_t a = st[m], b = ex[m];

			st[m] = st[m - 1];
			ex[m] = ex[m - 1];
			st[m - 1] = a;
			ex[m - 1] = b;
		}
	for (unsigned int k = 0; k < n; k++) {
		if (st[k] <= span)
			return false;
		span += st[k] * (ex[k] - 1);
	}
	return true;
}

/* Instruction @gi with its operands in the run's shape. */
static bool nrn_normalize(const struct nrn_graph_insn *gi, const uint32_t *S,
			  unsigned int nd, struct nrn_graph_insn *out)
{
	*out = *gi;
	if (!nrn_reshape(&gi->insn.dst, S, nd, &out->insn.dst))
		return false;
	for (unsigned int j = 0; j < 3; j++)
		if (gi->region[1 + j] != NRN_GRAPH_NONE &&
		    !nrn_reshape(&gi->insn.src[j], S, nd, &out->insn.src[j]))
			return false;
	return true;
}

/*
 * The value instruction @s wrote (dst) is dead after @b: from b + 1 on,
 * nothing reads its bytes before something writes them all.
 */
static bool nrn_dead_after(const struct nrn_graph_ir *ir, const struct nrn_fuse_uses *u,
			   unsigned int s, unsigned int b)
{
	const struct nrn_graph_insn *p = &ir->insns[s];
	uint32_t r = p->region[0];

	for (unsigned int k = u->start[r]; k < u->start[r + 1]; k++) {
		const struct nrn_graph_insn *gi = &ir->insns[u->insn[k]];
		bool covered = false;

		if (u->insn[k] <= b)
			continue;
		for (unsigned int i = 0; i < NRN_GRAPH_OPNDS; i++)
			if (gi->region[i] == r && (gi->access[i] & NISA_ACCESS_READ) &&
			    nrn_overlap(nrn_fopnd(&gi->insn, i), &p->insn.dst))
				return false;
		for (unsigned int i = 0; i < NRN_GRAPH_OPNDS; i++)
			if (gi->region[i] == r && (gi->access[i] & NISA_ACCESS_WRITE) &&
			    nrn_covers(nrn_fopnd(&gi->insn, i), &p->insn.dst))
				covered = true;
		/* An EXPR reads its continuations' inputs before it writes. */
		for (unsigned int c = 1; covered &&
		     c < nrn_insn_group_length(&gi->insn) && u->insn[k] + c < ir->ninsns; c++) {
			const struct nrn_graph_insn *ci = &ir->insns[u->insn[k] + c];

			for (unsigned int i = 0; i < NRN_GRAPH_OPNDS; i++)
				if (ci->region[i] == r && (ci->access[i] & NISA_ACCESS_READ) &&
				    nrn_overlap(nrn_fopnd(&ci->insn, i), &p->insn.dst))
					return false;
		}
		if (covered)
			return true;
	}
	return true;
}

/* Registers for the values of @p's steps; false if 16 do not suffice. */
static bool nrn_fuse_regs(struct nrn_fuse_plan *p, const int (*src)[3],
			  const int *nsrc, unsigned int nsteps)
{
	int last[MAXV], reg[MAXV];
	bool busy[NISA_EXPR_NUM_REGS] = { false };

	for (unsigned int v = 0; v < MAXV; v++)
		last[v] = -1;
	for (unsigned int s = 0; s < nsteps; s++)
		for (int j = 0; j < nsrc[s]; j++)
			last[src[s][j]] = (int)s;
	for (unsigned int i = 0; i < p->nin; i++) {
		reg[i] = (int)i;
		busy[i] = true;
	}
	for (unsigned int s = 0; s < nsteps; s++) {
		unsigned int v = NISA_EXPR_MAX_INPUTS + s, r;

		for (int j = 0; j < nsrc[s]; j++) {
			p->e.steps[s].src[j] = (uint8_t)reg[src[s][j]];
			if (last[src[s][j]] == (int)s)
				busy[reg[src[s][j]]] = false;
		}
		for (r = 0; r < NISA_EXPR_NUM_REGS && busy[r]; r++)
			;
		if (r == NISA_EXPR_NUM_REGS)
			return false;
		reg[v] = (int)r;
		p->e.steps[s].dst = (uint8_t)r;
		busy[r] = last[v] > (int)s;	/* a dead value frees it at once */
	}
	return true;
}

/* Plan instructions a..b as one EXPR group; false if they cannot be. */
static bool nrn_fuse_plan(const struct nrn_graph_ir *ir, const struct nrn_fuse_uses *u,
			  unsigned int a, unsigned int b, struct nrn_fuse_plan *p)
{
	struct nrn_graph_insn norm[MAXG];
	const struct nrn_graph_insn *fin = &norm[b - a];
	unsigned int nsteps = b - a + 1, nd;
	int src[MAXG][3], nsrc[MAXG];
	uint8_t dtypes[NISA_EXPR_MAX_INPUTS];
	uint32_t S[NISA_MAX_DIMS];

	memset(p, 0, sizeof(*p));
	if (!nrn_refine(ir, a, b, S, &nd))
		return false;
	for (unsigned int m = a; m <= b; m++)
		if (!nrn_normalize(&ir->insns[m], S, nd, &norm[m - a]))
			return false;
	for (unsigned int m = a; m <= b; m++) {
		const struct nrn_graph_insn *gi = &norm[m - a];
		unsigned int s = m - a;

		nsrc[s] = nrn_expr_step_from_insn(&gi->insn, &p->e.steps[s]);
		for (int j = 0; j < nsrc[s]; j++) {
			const struct nisa_tensor *t = &gi->insn.src[j];
			int v = -1;

			if (gi->region[1 + j] == NRN_GRAPH_NONE)
				return false;
			/* The latest intermediate it touches: that value, exactly. */
			for (unsigned int q = m; q-- > a && v < 0;) {
				const struct nrn_graph_insn *pq = &norm[q - a];

				if (pq->region[0] != gi->region[1 + j] ||
				    !nrn_overlap(&pq->insn.dst, t))
					continue;
				if (!nrn_same_opnd(pq, 0, gi, 1 + j))
					return false;
				v = NISA_EXPR_MAX_INPUTS + (int)(q - a);
			}
			for (unsigned int k = 0; v < 0 && k < p->nin; k++) {
				struct nisa_tensor x = p->in[k], y = *t;

				x.slot = y.slot = 0;
				if (p->in_region[k] == gi->region[1 + j] &&
				    !memcmp(&x, &y, sizeof(x)))
					v = (int)k;
			}
			if (v < 0) {
				if (p->nin == NISA_EXPR_MAX_INPUTS)
					return false;
				p->in[p->nin] = *t;
				p->in[p->nin].slot = 0;
				p->in_region[p->nin] = gi->region[1 + j];
				dtypes[p->nin] = t->dtype;
				v = (int)p->nin++;
			}
			src[s][j] = v;
		}
	}
	/*
	 * Intermediates: scratch, and dead after the run -- written over by
	 * a later instruction of the run (a temporary reusing the memory:
	 * reads in between took this value from its register), or not read
	 * after the run before something writes all of it.
	 */
	for (unsigned int q = a; q < b; q++) {
		const struct nrn_graph_insn *pq = &norm[q - a];
		bool dead = false;

		if (ir->regions[pq->region[0]].kind != NRN_REGION_SCRATCH ||
		    !nrn_no_self_overlap(&pq->insn.dst))
			return false;
		for (unsigned int m = q + 1; m <= b && !dead; m++)
			dead = norm[m - a].region[0] == pq->region[0] &&
			       nrn_covers(&norm[m - a].insn.dst, &pq->insn.dst);
		if (!dead && !nrn_dead_after(ir, u, q, b))
			return false;
	}
	/*
	 * dst: not self-overlapping (which of its writes stays would depend
	 * on the order an engine walks it), and exactly an input (in place)
	 * or apart from all of them.
	 */
	if (!nrn_no_self_overlap(&fin->insn.dst))
		return false;
	for (unsigned int k = 0; k < p->nin; k++) {
		struct nisa_tensor x = p->in[k], y = fin->insn.dst;

		x.slot = y.slot = 0;
		if (p->in_region[k] == fin->region[0] && nrn_overlap(&x, &y) &&
		    memcmp(&x, &y, sizeof(x)))
			return false;
	}
	p->dst = fin->insn.dst;
	p->dst.slot = 0;
	p->e.nsteps = nsteps;
	if (!nrn_fuse_regs(p, (const int (*)[3])src, nsrc, nsteps))
		return false;
	if (nisa_expr_length(nsteps, p->nin) > nsteps)
		return false;	/* no fewer instructions */
	return !nrn_expr_check(&p->e, dtypes, p->nin, fin->insn.dst.dtype);
}

/*
 * The group of @p, replacing a..b, into @out: its length. Each of its
 * instructions comes from the chain's first captured instruction.
 */
static unsigned int nrn_fuse_emit(const struct nrn_graph_ir *ir, unsigned int a,
				  unsigned int b, const struct nrn_fuse_plan *p,
				  struct nrn_graph_insn *out)
{
	const struct nrn_graph_insn *fin = &ir->insns[b];
	struct nisa_insn code[1 + 2 + MAXG / NISA_EXPR_STEPS_PER_DATA + 1];
	unsigned int len = nrn_expr_encode(&p->e, &p->dst, p->in, p->nin, code);
	unsigned int steps_at = len - (p->e.nsteps + NISA_EXPR_STEPS_PER_DATA - 1) /
				NISA_EXPR_STEPS_PER_DATA;
	uint32_t origin = ir->insns[a].origin;

	for (unsigned int m = a + 1; m <= b; m++)
		if (ir->insns[m].origin < origin)
			origin = ir->insns[m].origin;
	for (unsigned int r = 0; r < len; r++) {
		out[r].insn = code[r];
		out[r].origin = origin;
		for (unsigned int i = 0; i < NRN_GRAPH_OPNDS; i++) {
			out[r].region[i] = NRN_GRAPH_NONE;
			out[r].access[i] = 0;
		}
		if (r == 0 || r >= steps_at) {
			out[r].region[0] = fin->region[0];
			out[r].access[0] = fin->access[0];
		}
	}
	for (unsigned int k = 0; k < p->nin; k++) {
		unsigned int rec, opnd;

		nrn_expr_input_pos(k, &rec, &opnd);
		out[rec].region[opnd] = p->in_region[k];
		out[rec].access[opnd] = NISA_ACCESS_READ;
	}
	return len;
}

/* Operand @i names a region an earlier operand of @gi names (counted once). */
static bool nrn_fuse_named_before(const struct nrn_graph_insn *gi, unsigned int i)
{
	for (unsigned int j = 0; j < i; j++)
		if (gi->region[j] == gi->region[i])
			return true;
	return false;
}

static int nrn_fuse_uses_build(const struct nrn_graph_ir *ir, struct nrn_fuse_uses *u)
{
	unsigned int total = 0;

	u->start = calloc(ir->nregions + 1, sizeof(*u->start));
	if (!u->start)
		return -ENOMEM;
	/* Count an instruction once per region it names. */
	for (unsigned int n = 0; n < ir->ninsns; n++)
		for (unsigned int i = 0; i < NRN_GRAPH_OPNDS; i++) {
			uint32_t r = ir->insns[n].region[i];

			if (r == NRN_GRAPH_NONE || nrn_fuse_named_before(&ir->insns[n], i))
				continue;
			u->start[r + 1]++;
			total++;
		}
	for (unsigned int r = 0; r < ir->nregions; r++)
		u->start[r + 1] += u->start[r];
	u->insn = malloc((total ? total : 1) * sizeof(*u->insn));
	if (!u->insn)
		return -ENOMEM;
	{
		unsigned int *fill = calloc(ir->nregions + 1, sizeof(*fill));

		if (!fill)
			return -ENOMEM;
		for (unsigned int n = 0; n < ir->ninsns; n++)
			for (unsigned int i = 0; i < NRN_GRAPH_OPNDS; i++) {
				uint32_t r = ir->insns[n].region[i];

				if (r == NRN_GRAPH_NONE ||
				    nrn_fuse_named_before(&ir->insns[n], i))
					continue;
				u->insn[u->start[r] + fill[r]++] = n;
			}
		free(fill);
	}
	return 0;
}

int nrn_graph_fuse(struct nrn_graph_ir *ir)
{
	struct nrn_fuse_uses u = { NULL, NULL };
	struct nrn_graph_insn *out = malloc((ir->ninsns ? ir->ninsns : 1) * sizeof(*out));
	struct nrn_fuse_plan *p = malloc(sizeof(*p));
	unsigned int no = 0, a = 0;
	int ret = out && p ? nrn_fuse_uses_build(ir, &u) : -ENOMEM;

	while (!ret && a < ir->ninsns) {
		unsigned int end = a, b, len = nrn_insn_group_length(&ir->insns[a].insn);

		if (!nrn_fusable(&ir->insns[a])) {
			/* Anything else (an EXPR group too) stays as it is. */
			len = len < ir->ninsns - a ? len : ir->ninsns - a;
			memcpy(&out[no], &ir->insns[a], len * sizeof(*out));
			no += len;
			a += len;
			continue;
		}
		/* Only a run's last dst may be other than scratch. */
		while (end + 1 < ir->ninsns && end + 1 - a < MAXG &&
		       ir->regions[ir->insns[end].region[0]].kind == NRN_REGION_SCRATCH &&
		       nrn_fusable(&ir->insns[end + 1]) &&
		       nrn_numel(&ir->insns[end + 1].insn.dst) ==
		       nrn_numel(&ir->insns[a].insn.dst))
			end++;
		for (b = end; b > a && !nrn_fuse_plan(ir, &u, a, b, p); b--)
			;
		if (b == a) {
			out[no++] = ir->insns[a++];
			continue;
		}
		len = nrn_fuse_emit(ir, a, b, p, &out[no]);
		no += len;
		ir->fused += b - a + 1 - len;
		a = b + 1;
	}
	if (!ret) {
		memcpy(ir->insns, out, no * sizeof(*out));
		ir->ninsns = no;
	}
	free(u.start);
	free(u.insn);
	free(out);
	free(p);
	return ret;
}

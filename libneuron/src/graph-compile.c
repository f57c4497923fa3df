// SPDX-License-Identifier: MIT
/*
 * Graph compilation: a capture becomes the IR (graph.h) -- each operand's
 * byte extent assigned to an argument region (relocated to the region's
 * start), to the constants, or to a scratch object (overlapping scratch
 * extents of a buffer, united) -- is checked (no operand straddles an
 * argument, scratch is written before it is read), optionally fused, and
 * its scratch objects are placed in an arena by liveness: first fit, the
 * largest first, objects whose lives overlap never share bytes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"

#define NRN_ALIGN64(x) (((x) + 63) & ~(uint64_t)63)

/* A scratch operand's extent, before objects are formed. */
struct nrn_sextent {
	uint32_t buf;
	int64_t lo, hi;
	unsigned int insn, opnd;
};

static struct nisa_tensor *nrn_ir_opnd(struct nisa_insn *in, unsigned int i)
{
	return i ? &in->src[i - 1] : &in->dst;
}

void nrn_graph_ir_liveness(struct nrn_graph_ir *ir)
{
	for (unsigned int r = 0; r < ir->nregions; r++) {
		ir->regions[r].first = ir->regions[r].last = -1;
		ir->regions[r].uses = 0;
		ir->regions[r].access = 0;
	}
	for (unsigned int u = 0; u < ir->ninsns;) {
		unsigned int len = nrn_insn_unit(&ir->insns[u].insn, ir->ninsns - u);

		/* A group's operands are all live from its first to its last. */
		for (unsigned int n = u; n < u + len; n++) {
			for (unsigned int i = 0; i < NRN_GRAPH_OPNDS; i++) {
				uint32_t r = ir->insns[n].region[i];
				struct nrn_graph_region *rg;

				if (r == NRN_GRAPH_NONE)
					continue;
				rg = &ir->regions[r];
				if (rg->first < 0)
					rg->first = (int)u;
				rg->last = (int)(u + len - 1);
				rg->uses++;
				rg->access |= ir->insns[n].access[i];
			}
		}
		u += len;
	}
}

static int nrn_check_args(const struct nrn_capture *c,
			  const struct nrn_graph_arg *args, unsigned int nargs)
{
	if (nargs && !args)
		return -EINVAL;
	for (unsigned int i = 0; i < nargs; i++) {
		const struct nrn_graph_arg *a = &args[i];

		if (a->flags & ~(uint32_t)NRN_GRAPH_ARG_FRESH)
			return -EINVAL;
		if (!a->size)
			continue;
		if (!a->buf || a->buf->dev != c->dev || a->offset > a->buf->size ||
		    a->size > a->buf->size - a->offset)
			return -EINVAL;
		for (unsigned int j = 0; j < i; j++)
			if (args[j].buf == a->buf && args[j].size &&
			    a->offset < args[j].offset + args[j].size &&
			    args[j].offset < a->offset + a->size)
				return -EINVAL; /* overlapping arguments */
	}
	return 0;
}

static int nrn_sextent_cmp(const void *pa, const void *pb)
{
	const struct nrn_sextent *a = pa, *b = pb;

	if (a->buf != b->buf)
		return a->buf < b->buf ? -1 : 1;
	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	return 0;
}

/* Assign operand @i of instruction @n to an argument, or note it as scratch. */
static int nrn_ir_assign(struct nrn_graph_ir *ir, const struct nrn_capture *c,
			 const struct nrn_graph_arg *args, unsigned int nargs,
			 unsigned int n, unsigned int i, uint32_t const_region,
			 struct nrn_sextent *sx, unsigned int *nsx)
{
	const struct nrn_capture_insn *ci = &c->insns[n];
	struct nrn_graph_insn *gi = &ir->insns[n];
	struct nisa_tensor *t = nrn_ir_opnd(&gi->insn, i);
	const struct nrn_buffer *buf;
	int64_t lo, hi;

	gi->region[i] = NRN_GRAPH_NONE;
	gi->access[i] = ci->access[i];
	if (ci->buf[i] == NRN_GRAPH_NONE)
		return 0;
	if (!nrn_tensor_extent(t, &lo, &hi))
		return -EINVAL; /* empty or malformed operand: never captured */
	if (ci->buf[i] == NRN_CAPTURE_CONST) {
		if (lo < 0 || (uint64_t)hi > c->const_size)
			return -EINVAL;
		gi->region[i] = const_region;
		return 0;
	}
	buf = c->bufs[ci->buf[i]];
	for (unsigned int a = 0; a < nargs; a++) {
		int64_t alo = (int64_t)args[a].offset, ahi = alo + (int64_t)args[a].size;

		if (args[a].buf != buf || !args[a].size || hi <= alo || lo >= ahi)
			continue;
		if (lo < alo || hi > ahi)
			return -EINVAL;	/* straddles the argument's boundary */
		gi->region[i] = a;
		t->offset -= args[a].offset;
		return 0;
	}
	sx[*nsx] = (struct nrn_sextent){ .buf = ci->buf[i], .lo = lo, .hi = hi,
					 .insn = n, .opnd = i };
	(*nsx)++;
	return 0;
}

/* Unite overlapping scratch extents into objects (regions). */
static void nrn_ir_objects(struct nrn_graph_ir *ir, struct nrn_sextent *sx,
			   unsigned int nsx)
{
	unsigned int k = 0;

	qsort(sx, nsx, sizeof(*sx), nrn_sextent_cmp);
	while (k < nsx) {
		unsigned int end = k + 1, r = ir->nregions++;
		int64_t start = sx[k].lo & ~(int64_t)63, hi = sx[k].hi;

		while (end < nsx && sx[end].buf == sx[k].buf && sx[end].lo < hi) {
			if (sx[end].hi > hi)
				hi = sx[end].hi;
			end++;
		}
		ir->regions[r] = (struct nrn_graph_region){
			.kind = NRN_REGION_SCRATCH,
			.size = NRN_ALIGN64((uint64_t)(hi - start)),
		};
		for (; k < end; k++) {
			struct nrn_graph_insn *gi = &ir->insns[sx[k].insn];

			gi->region[sx[k].opnd] = r;
			nrn_ir_opnd(&gi->insn, sx[k].opnd)->offset -= (uint64_t)start;
		}
	}
}

/* Written byte intervals of a scratch object: sorted, disjoint. */
struct nrn_ivals {
	int64_t (*iv)[2];
	unsigned int n, cap;
};

static bool nrn_ivals_cover(const struct nrn_ivals *v, int64_t lo, int64_t hi)
{
	for (unsigned int k = 0; k < v->n; k++)
		if (v->iv[k][0] <= lo && hi <= v->iv[k][1])
			return true;
	return false;
}

static int nrn_ivals_add(struct nrn_ivals *v, int64_t lo, int64_t hi)
{
	unsigned int k = 0, j;

	if (v->n == v->cap) {
		unsigned int cap = v->cap ? 2 * v->cap : 4;
		int64_t (*n)[2] = realloc(v->iv, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		v->iv = n;
		v->cap = cap;
	}
	while (k < v->n && v->iv[k][1] < lo)
		k++;
	/* Merge every interval touching [lo, hi) into it. */
	for (j = k; j < v->n && v->iv[j][0] <= hi; j++) {
		lo = v->iv[j][0] < lo ? v->iv[j][0] : lo;
		hi = v->iv[j][1] > hi ? v->iv[j][1] : hi;
	}
	memmove(&v->iv[k + 1], &v->iv[j], (v->n - j) * sizeof(*v->iv));
	v->n = v->n - (j - k) + 1;
	v->iv[k][0] = lo;
	v->iv[k][1] = hi;
	return 0;
}

/*
 * Every read of scratch, or of a fresh argument, must read bytes an
 * earlier instruction wrote, and a fresh argument must be written whole
 * (by extents: a strided write counts for its whole span). -EINVAL if not.
 */
/* Region @r holds what the graph produces: scratch, or a fresh argument. */
static bool nrn_ir_produced(const struct nrn_graph_ir *ir,
			    const struct nrn_graph_arg *args, uint32_t r)
{
	if (ir->regions[r].kind == NRN_REGION_ARG)
		return args[ir->regions[r].arg].flags & NRN_GRAPH_ARG_FRESH;
	return ir->regions[r].kind == NRN_REGION_SCRATCH;
}

static int nrn_ir_check_scratch(struct nrn_graph_ir *ir,
				const struct nrn_graph_arg *args)
{
	struct nrn_ivals *w = calloc(ir->nregions, sizeof(*w));
	int ret = w ? 0 : -ENOMEM;

	for (unsigned int u = 0; !ret && u < ir->ninsns;) {
		unsigned int len = nrn_insn_unit(&ir->insns[u].insn, ir->ninsns - u);

		/* A unit (an EXPR group) reads all its inputs, then writes. */
		for (unsigned int pass = 0; pass < 2 && !ret; pass++) {
			uint32_t bit = pass ? NISA_ACCESS_WRITE : NISA_ACCESS_READ;

			for (unsigned int k = 0; k < len * NRN_GRAPH_OPNDS && !ret; k++) {
				struct nrn_graph_insn *gi = &ir->insns[u + k / NRN_GRAPH_OPNDS];
				unsigned int i = k % NRN_GRAPH_OPNDS;
				uint32_t r = gi->region[i];
				int64_t lo, hi;

				if (r == NRN_GRAPH_NONE || !(gi->access[i] & bit) ||
				    !nrn_ir_produced(ir, args, r))
					continue;
				nrn_tensor_extent(nrn_ir_opnd(&gi->insn, i), &lo, &hi);
				if (!pass && !nrn_ivals_cover(&w[r], lo, hi))
					ret = -EINVAL; /* reads memory the graph never wrote */
				else if (pass)
					ret = nrn_ivals_add(&w[r], lo, hi);
			}
		}
		u += len;
	}
	for (unsigned int a = 0; !ret && a < ir->nargs; a++)
		if (nrn_ir_produced(ir, args, a) && ir->regions[a].size &&
		    !nrn_ivals_cover(&w[a], 0, (int64_t)ir->regions[a].size))
			ret = -EINVAL; /* a fresh argument the graph leaves unwritten */
	for (unsigned int r = 0; w && r < ir->nregions; r++)
		free(w[r].iv);
	free(w);
	return ret;
}

static int nrn_ir_build(const struct nrn_capture *c, const struct nrn_graph_arg *args,
			unsigned int nargs, struct nrn_graph_ir *ir)
{
	struct nrn_sextent *sx;
	unsigned int nsx = 0;
	uint32_t const_region = NRN_GRAPH_NONE;
	int ret = 0;

	memset(ir, 0, sizeof(*ir));
	ir->insns = calloc(c->count ? c->count : 1, sizeof(*ir->insns));
	ir->regions = calloc((size_t)nargs + 1 + (size_t)c->count * NRN_GRAPH_OPNDS,
			     sizeof(*ir->regions));
	sx = calloc((size_t)c->count * NRN_GRAPH_OPNDS + 1, sizeof(*sx));
	if (!ir->insns || !ir->regions || !sx) {
		free(sx);
		return -ENOMEM;
	}
	ir->ninsns = ir->captured = c->count;
	ir->nargs = nargs;
	for (unsigned int a = 0; a < nargs; a++)
		ir->regions[a] = (struct nrn_graph_region){
			.kind = NRN_REGION_ARG, .arg = a, .size = args[a].size };
	ir->nregions = nargs;
	if (c->const_size) {
		const_region = ir->nregions++;
		ir->regions[const_region] = (struct nrn_graph_region){
			.kind = NRN_REGION_CONST, .size = c->const_size };
	}
	for (unsigned int n = 0; !ret && n < c->count; n++) {
		ir->insns[n].insn = c->insns[n].insn;
		ir->insns[n].origin = n;
		for (unsigned int i = 0; !ret && i < NRN_GRAPH_OPNDS; i++)
			ret = nrn_ir_assign(ir, c, args, nargs, n, i, const_region,
					    sx, &nsx);
	}
	if (!ret)
		nrn_ir_objects(ir, sx, nsx);
	free(sx);
	return ret;
}

static int nrn_region_size_cmp(const void *pa, const void *pb, void *ctx)
{
	const struct nrn_graph_region *rg = ctx;
	const struct nrn_graph_region *a = &rg[*(const uint32_t *)pa];
	const struct nrn_graph_region *b = &rg[*(const uint32_t *)pb];

	if (a->size != b->size)
		return a->size > b->size ? -1 : 1;
	return a->first - b->first;
}

/* Place the live scratch objects; the arena's size into *@size. */
static int nrn_ir_plan(struct nrn_graph_ir *ir, uint64_t *size)
{
	uint32_t *order = malloc((ir->nregions + 1) * sizeof(*order));
	uint32_t *near = malloc((ir->nregions + 1) * sizeof(*near));
	unsigned int n = 0, placed;

	*size = 0;
	if (!order || !near) {
		free(order);
		free(near);
		return -ENOMEM;
	}
	for (uint32_t r = 0; r < ir->nregions; r++)
		if (ir->regions[r].kind == NRN_REGION_SCRATCH && ir->regions[r].uses)
			order[n++] = r;
	qsort_r(order, n, sizeof(*order), nrn_region_size_cmp, ir->regions);
	for (placed = 0; placed < n; placed++) {
		struct nrn_graph_region *me = &ir->regions[order[placed]];
		unsigned int nn = 0;
		uint64_t off = 0;
		bool moved = true;

		/* Objects already placed whose lives overlap this one's. */
		for (unsigned int k = 0; k < placed; k++) {
			const struct nrn_graph_region *o = &ir->regions[order[k]];

			if (!(o->last < me->first || me->last < o->first))
				near[nn++] = order[k];
		}
		/* First fit: the lowest offset clear of all of them. */
		while (moved) {
			moved = false;
			for (unsigned int k = 0; k < nn; k++) {
				const struct nrn_graph_region *o = &ir->regions[near[k]];

				if (off < o->arena_off + o->size && o->arena_off < off + me->size) {
					off = o->arena_off + o->size;
					moved = true;
				}
			}
		}
		me->arena_off = off;
		if (off + me->size > *size)
			*size = off + me->size;
	}
	free(order);
	free(near);
	return 0;
}

/* The compiled graph of planned IR @ir. */
static int nrn_ir_emit(const struct nrn_graph_ir *ir, const struct nrn_capture *c,
		       const struct nrn_graph_arg *args, uint64_t arena_size,
		       struct nrn_graph **gp)
{
	struct nrn_graph *g = nrn_graph_alloc(ir->nargs, ir->ninsns, c->const_size);

	if (!g)
		return -ENOMEM;
	g->captured = ir->captured;
	g->fused = ir->fused;
	g->arena_size = arena_size;
	if (c->const_size)
		memcpy(g->consts, c->consts, c->const_size);
	for (unsigned int a = 0; a < ir->nargs; a++)
		g->args[a] = (struct nrn_graph_argi){ .size = args[a].size,
						      .access = ir->regions[a].access,
						      .align = 1 };
	for (unsigned int n = 0; n < ir->ninsns; n++) {
		const struct nrn_graph_insn *gi = &ir->insns[n];

		g->insns[n] = gi->insn;
		g->origins->idx[n] = gi->origin;
		for (unsigned int i = 0; i < NRN_GRAPH_OPNDS; i++) {
			uint32_t r = gi->region[i];
			const struct nrn_graph_region *rg;
			struct nisa_tensor *t = nrn_ir_opnd(&g->insns[n], i);
			uint32_t es = nisa_dtype_size(t->dtype);

			g->ops[n].base[i] = NRN_GRAPH_NONE;
			g->ops[n].access[i] = gi->access[i];
			if (r == NRN_GRAPH_NONE)
				continue;	/* untouched: maybe not a tensor */
			t->slot = 0;
			rg = &ir->regions[r];
			if (rg->kind == NRN_REGION_SCRATCH) {
				g->ops[n].base[i] = NRN_GRAPH_BASE_ARENA;
				t->offset += rg->arena_off;
			} else if (rg->kind == NRN_REGION_CONST) {
				g->ops[n].base[i] = NRN_GRAPH_BASE_CONST;
			} else {
				g->ops[n].base[i] = rg->arg;
				if (es > g->args[rg->arg].align)
					g->args[rg->arg].align = es;
			}
		}
	}
	for (unsigned int a = 0; a < ir->nargs; a++)
		g->args[a].phase = (uint32_t)(args[a].offset % g->args[a].align);
	*gp = g;
	return 0;
}

NRN_EXPORT int nrn_graph_compile(const struct nrn_capture *c,
				 const struct nrn_graph_arg *args, unsigned int nargs,
				 unsigned int flags, struct nrn_graph **gp)
{
	struct nrn_graph_ir ir;
	uint64_t arena_size = 0;
	int ret;

	if (!c || !gp || (flags & ~(unsigned int)NRN_GRAPH_FUSE) || c->error ||
	    nargs > (1u << 20))
		return -EINVAL;
	*gp = NULL;
	ret = nrn_check_args(c, args, nargs);
	if (ret)
		return ret;
	ret = nrn_ir_build(c, args, nargs, &ir);
	if (!ret)
		ret = nrn_ir_check_scratch(&ir, args);
	if (!ret) {
		nrn_graph_ir_liveness(&ir);
		if (flags & NRN_GRAPH_FUSE) {
			ret = nrn_graph_forward_copies(&ir);
			if (!ret) {
				nrn_graph_ir_liveness(&ir);
				ret = nrn_graph_cluster(&ir);
			}
			if (!ret) {
				nrn_graph_ir_liveness(&ir);
				ret = nrn_graph_fuse(&ir);
			}
			nrn_graph_ir_liveness(&ir);
		}
	}
	if (!ret)
		ret = nrn_ir_plan(&ir, &arena_size);
	if (!ret)
		ret = nrn_ir_emit(&ir, c, args, arena_size, gp);
	free(ir.insns);
	free(ir.regions);
	return ret;
}

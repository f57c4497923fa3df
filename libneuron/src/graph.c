// SPDX-License-Identifier: MIT
/*
 * Compiled graphs: their lifetime, what they tell about themselves, and
 * LAUNCH. A launch relocates each instruction's operands (bases: an
 * argument, the arena, the constants) onto the caller's buffers and issues
 * it through the stream's batching, like an operation would; on a
 * capturing stream it is recorded instead (graphs nest).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"

bool nrn_tensor_extent(const struct nisa_tensor *t, int64_t *lo, int64_t *hi)
{
	int64_t e = nisa_dtype_size(t->dtype), l = (int64_t)t->offset, h;

	if (t->offset > INT64_MAX / 2 || !e)
		return false;
	h = l + e;
	for (unsigned int d = 0; d < t->ndim && d < NISA_MAX_DIMS; d++) {
		int64_t span;

		if (!t->shape[d])
			return false;
		span = (int64_t)(t->shape[d] - 1) * t->strides[d] * e;
		if (span < 0)
			l += span;
		else
			h += span;
	}
	*lo = l;
	*hi = h;
	return true;
}

/* The last graph id given out; ids start at 1. */
static atomic_uint_fast64_t nrn_graph_last_id;

void nrn_graph_origins_put(struct nrn_graph_origins *o)
{
	if (o && atomic_fetch_sub_explicit(&o->refs, 1, memory_order_acq_rel) == 1)
		free(o);
}

struct nrn_graph *nrn_graph_alloc(unsigned int nargs, unsigned int ninsns,
				  uint64_t const_size)
{
	struct nrn_graph *g = calloc(1, sizeof(*g));

	if (!g)
		return NULL;
	g->id = atomic_fetch_add_explicit(&nrn_graph_last_id, 1, memory_order_relaxed) + 1;
	g->origins = calloc(1, sizeof(*g->origins) + (size_t)ninsns * sizeof(uint32_t));
	if (g->origins) {
		atomic_init(&g->origins->refs, 1);
		g->origins->n = ninsns;
	}
	g->nargs = nargs;
	g->ninsns = ninsns;
	g->const_size = const_size;
	g->args = calloc(nargs ? nargs : 1, sizeof(*g->args));
	g->insns = calloc(ninsns ? ninsns : 1, sizeof(*g->insns));
	g->ops = calloc(ninsns ? ninsns : 1, sizeof(*g->ops));
	g->consts = const_size ? malloc(const_size) : NULL;
	pthread_mutex_init(&g->lock, NULL);
	if (!g->origins || !g->args || !g->insns || !g->ops || (const_size && !g->consts)) {
		nrn_graph_destroy(g);
		return NULL;
	}
	return g;
}

NRN_EXPORT void nrn_graph_destroy(struct nrn_graph *g)
{
	struct nrn_graph_cbuf *cb, *next;

	if (!g)
		return;
	/* Work in flight holds its own references to the constants. */
	for (cb = g->cbufs; cb; cb = next) {
		next = cb->next;
		nrn_buffer_free(cb->buf);
		free(cb);
	}
	nrn_graph_job_free(g->job);
	pthread_mutex_destroy(&g->lock);
	nrn_graph_origins_put(g->origins);
	free(g->args);
	free(g->insns);
	free(g->ops);
	free(g->consts);
	free(g);
}

/* The element operations of a launch (as NRN_BATCH_MAX_WORK counts them). */
static uint64_t nrn_graph_work(const struct nrn_graph *g)
{
	uint64_t work = 0;

	for (unsigned int n = 0; n < g->ninsns; n++)
		work += nrn_insn_work(&g->insns[n]);
	return work;
}

NRN_EXPORT int nrn_graph_info(const struct nrn_graph *g, struct nrn_graph_info *info)
{
	if (!g || !info)
		return -EINVAL;
	*info = (struct nrn_graph_info){
		.nargs = g->nargs, .insns = g->ninsns, .captured_insns = g->captured,
		.fused = g->fused, .arena_size = g->arena_size,
		.const_size = g->const_size, .work = nrn_graph_work(g),
		.resident = nrn_graph_job_resident(g),
	};
	return 0;
}

NRN_EXPORT uint64_t nrn_graph_id(const struct nrn_graph *g)
{
	return g ? g->id : 0;
}

NRN_EXPORT int nrn_graph_arg_access(const struct nrn_graph *g, unsigned int i,
				    uint32_t *access, uint64_t *size)
{
	if (!g || !access || i >= g->nargs)
		return -EINVAL;
	*access = g->args[i].access;
	if (size)
		*size = g->args[i].size;
	return 0;
}

int nrn_graph_validate(const struct nrn_graph *g)
{
	for (unsigned int i = 0; i < g->nargs; i++) {
		const struct nrn_graph_argi *a = &g->args[i];

		if (!a->align || a->align > 64 || (a->align & (a->align - 1)) ||
		    a->phase >= a->align || a->rsvd ||
		    (a->access & ~(uint32_t)(NISA_ACCESS_READ | NISA_ACCESS_WRITE)))
			return -EBADMSG;
	}
	for (unsigned int n = 0; n < g->ninsns; n++) {
		const struct nisa_insn *in = &g->insns[n];
		const struct nisa_tensor *t[NRN_GRAPH_OPNDS] = {
			&in->dst, &in->src[0], &in->src[1], &in->src[2] };
		const struct nrn_graph_op *op = &g->ops[n];

		if (op->base[0] == NRN_GRAPH_NONE || g->origins->idx[n] >= g->captured)
			return -EBADMSG;
		for (unsigned int i = 0; i < NRN_GRAPH_OPNDS; i++) {
			uint32_t b = op->base[i];
			uint64_t limit, phase = 0;
			int64_t lo, hi;

			if (b == NRN_GRAPH_NONE)
				continue;
			if (b == NRN_GRAPH_BASE_ARENA) {
				limit = g->arena_size;
			} else if (b == NRN_GRAPH_BASE_CONST) {
				limit = g->const_size;
			} else if (b < g->nargs) {
				limit = g->args[b].size;
				phase = g->args[b].phase;
				if (nisa_dtype_size(t[i]->dtype) > g->args[b].align)
					return -EBADMSG;
			} else {
				return -EBADMSG;
			}
			if (!op->access[i] || (op->access[i] &
			    ~(uint32_t)(NISA_ACCESS_READ | NISA_ACCESS_WRITE)))
				return -EBADMSG;
			if (!nrn_tensor_extent(t[i], &lo, &hi) || lo < 0 ||
			    (uint64_t)hi > limit ||
			    (t[i]->offset + phase) % nisa_dtype_size(t[i]->dtype))
				return -EBADMSG;
		}
	}
	return 0;
}

/* The constants on @dev, uploaded on first use. */
static int nrn_graph_consts(const struct nrn_graph *cg, struct nrn_device *dev,
			    struct nrn_buffer **bufp)
{
	struct nrn_graph *g = (struct nrn_graph *)cg; /* the cache only */
	struct nrn_graph_cbuf *cb;
	void *map;
	int ret = 0;

	pthread_mutex_lock(&g->lock);
	for (cb = g->cbufs; cb && cb->dev != dev; cb = cb->next)
		;
	if (!cb) {
		cb = calloc(1, sizeof(*cb));
		ret = cb ? nrn_buffer_alloc(dev, g->const_size, NRN_MEM_DEVICE,
					    &cb->buf) : -ENOMEM;
		if (!ret)
			ret = nrn_buffer_map(cb->buf, &map);
		if (!ret) {
			memcpy(map, g->consts, g->const_size);
			/* The writes land before any job that reads them. */
			__atomic_thread_fence(__ATOMIC_SEQ_CST);
			cb->dev = dev;
			cb->next = g->cbufs;
			g->cbufs = cb;
		} else if (cb) {
			nrn_buffer_free(cb->buf);
			free(cb);
			cb = NULL;
		}
	}
	pthread_mutex_unlock(&g->lock);
	if (cb)
		*bufp = cb->buf;
	return ret;
}

static bool nrn_ranges_overlap(const struct nrn_buffer *a, uint64_t aoff,
			       uint64_t alen, const struct nrn_buffer *b,
			       uint64_t boff, uint64_t blen)
{
	return a && a == b && alen && blen && aoff < boff + blen && boff < aoff + alen;
}

static int nrn_graph_check_launch(struct nrn_stream *s, const struct nrn_graph *g,
				  const struct nrn_graph_arg *args,
				  struct nrn_buffer *arena, uint64_t arena_off)
{
	if (g->nargs && !args)
		return -EINVAL;
	if (g->arena_size && (!arena || arena->dev != s->dev ||
			      arena->mem != NRN_MEM_DEVICE || arena_off % 64 ||
			      arena_off > arena->size ||
			      g->arena_size > arena->size - arena_off))
		return -EINVAL;
	for (unsigned int i = 0; i < g->nargs; i++) {
		const struct nrn_graph_arg *a = &args[i];
		const struct nrn_graph_argi *ai = &g->args[i];

		if (a->size != ai->size)
			return -EINVAL;
		if (!a->size)
			continue;
		if (!a->buf || a->buf->dev != s->dev || a->buf->mem != NRN_MEM_DEVICE ||
		    a->offset > a->buf->size || a->size > a->buf->size - a->offset ||
		    a->offset % ai->align != ai->phase)
			return -EINVAL;
		/* What the graph writes must not change what else it touches. */
		if (g->arena_size && nrn_ranges_overlap(a->buf, a->offset, a->size,
							arena, arena_off, g->arena_size))
			return -EINVAL;	/* the arena is written */
		if (!(ai->access & NISA_ACCESS_WRITE))
			continue;
		for (unsigned int j = 0; j < g->nargs; j++)
			if (j != i && nrn_ranges_overlap(a->buf, a->offset, a->size,
							 args[j].buf, args[j].offset,
							 args[j].size))
				return -EINVAL;
	}
	return 0;
}

/* Operand @i of instruction @n, relocated: its buffer and offset. */
static void nrn_graph_bind(const struct nrn_graph *g, unsigned int n, unsigned int i,
			   const struct nrn_graph_arg *args, struct nrn_buffer *arena,
			   uint64_t arena_off, struct nrn_buffer *consts,
			   uint64_t const_off, struct nrn_buffer **buf, uint64_t *off)
{
	uint32_t b = g->ops[n].base[i];

	if (b == NRN_GRAPH_BASE_ARENA) {
		*buf = arena;
		*off = arena_off;
	} else if (b == NRN_GRAPH_BASE_CONST) {
		*buf = consts;
		*off = const_off;
	} else {
		*buf = args[b].buf;
		*off = args[b].offset;
	}
}

static struct nisa_tensor *nrn_opnd(struct nisa_insn *in, unsigned int i)
{
	return i ? &in->src[i - 1] : &in->dst;
}

/* Record the launch into @s's capture. */
static int nrn_graph_record_locked(struct nrn_stream *s, const struct nrn_graph *g,
				   const struct nrn_graph_arg *args,
				   struct nrn_buffer *arena, uint64_t arena_off)
{
	uint64_t coff = 0;
	int ret = 0;

	if (g->const_size)
		ret = nrn_capture_add_const(s->capture, g->consts, g->const_size, &coff);
	for (unsigned int n = 0; !ret && n < g->ninsns; n++) {
		struct nrn_buffer *bufs[NRN_GRAPH_OPNDS] = { NULL };
		bool is_const[NRN_GRAPH_OPNDS] = { false };
		struct nisa_insn in = g->insns[n];

		for (unsigned int i = 0; i < NRN_GRAPH_OPNDS; i++) {
			uint64_t off;

			if (g->ops[n].base[i] == NRN_GRAPH_NONE)
				continue;
			nrn_graph_bind(g, n, i, args, arena, arena_off, NULL, coff,
				       &bufs[i], &off);
			is_const[i] = g->ops[n].base[i] == NRN_GRAPH_BASE_CONST;
			nrn_opnd(&in, i)->offset += off;
		}
		ret = nrn_capture_record(s->capture, &in, bufs, is_const,
					 g->ops[n].access);
	}
	return ret;
}

unsigned int nrn_insn_unit(const struct nisa_insn *in, unsigned int left)
{
	unsigned int len = 1;

	if (in->opcode == NISA_INSN_EXPR && in->subop <= NISA_EXPR_MAX_STEPS &&
	    in->axis >= 0 && in->axis <= NISA_EXPR_MAX_INPUTS)
		len = nisa_expr_length(in->subop, (unsigned int)in->axis);
	return len < left ? len : left;
}

/*
 * A launch's operand bases, resolved once: base b (an argument index,
 * g->nargs for the arena, g->nargs + 1 for the constants) lies in @buf at
 * @off; @id is the first base on the same buffer, whose @slot is that
 * buffer's slot in the stream's current batch (-1: not bound yet).
 */
struct nrn_graph_base {
	struct nrn_buffer *buf;
	uint64_t off;
	uint32_t id;
	int32_t slot;
};

static uint32_t nrn_graph_base_index(const struct nrn_graph *g, uint32_t b)
{
	if (b == NRN_GRAPH_BASE_ARENA)
		return g->nargs;
	if (b == NRN_GRAPH_BASE_CONST)
		return g->nargs + 1;
	return b;
}

/* Fill @bases; bases on one buffer share an id (an open-addressed table). */
static int nrn_graph_bases(const struct nrn_graph *g, const struct nrn_graph_arg *args,
			   struct nrn_buffer *arena, uint64_t arena_off,
			   struct nrn_buffer *consts, struct nrn_graph_base *bases)
{
	unsigned int nb = g->nargs + 2, size = 16, i;
	uint32_t *table;

	while (size < 2 * nb)
		size *= 2;
	table = malloc(size * sizeof(*table));
	if (!table)
		return -ENOMEM;
	memset(table, 0xff, size * sizeof(*table));
	for (i = 0; i < nb; i++) {
		struct nrn_graph_base *b = &bases[i];
		uintptr_t h;

		if (i < g->nargs)
			*b = (struct nrn_graph_base){ args[i].buf, args[i].offset, i, -1 };
		else if (i == g->nargs)
			*b = (struct nrn_graph_base){ arena, arena_off, i, -1 };
		else
			*b = (struct nrn_graph_base){ consts, 0, i, -1 };
		if (!b->buf)
			continue;
		h = ((uintptr_t)b->buf >> 6) * 0x9e3779b1u;
		for (h &= size - 1; table[h] != UINT32_MAX; h = (h + 1) & (size - 1))
			if (bases[table[h]].buf == b->buf)
				break;
		if (table[h] == UINT32_MAX)
			table[h] = i;
		b->id = table[h];
	}
	free(table);
	return 0;
}

/*
 * Issue @g's instructions through @s's batching. An operand costs a table
 * lookup of its base's slot in the current batch (bound once per buffer
 * and batch), not a search of the batch's slots; the bindings are
 * forgotten when the batch is submitted.
 */
static int nrn_graph_issue_locked(struct nrn_stream *s, const struct nrn_graph *g,
				  const struct nrn_graph_arg *args,
				  struct nrn_buffer *arena, uint64_t arena_off,
				  struct nrn_buffer *consts)
{
	enum { MAXU = 1 + NISA_EXPR_MAX_INPUTS + NISA_EXPR_MAX_STEPS };
	struct nrn_graph_base *bases = malloc((g->nargs + 2) * sizeof(*bases));
	uint32_t bound[DRM_NEURON_MAX_BOS];
	unsigned int nbound = 0;
	int ret = bases ? 0 : -ENOMEM;

	if (!ret)
		ret = nrn_graph_bases(g, args, arena, arena_off, consts, bases);
	for (unsigned int n = 0; !ret && n < g->ninsns;) {
		unsigned int len = nrn_insn_unit(&g->insns[n], g->ninsns - n), fresh = 0;
		uint32_t seen[MAXU * NRN_GRAPH_OPNDS];
		unsigned int u, i, j;

		/* The buffers of the unit the batch lacks (an upper bound). */
		for (u = 0; u < len; u++) {
			for (i = 0; i < NRN_GRAPH_OPNDS; i++) {
				uint32_t b = g->ops[n + u].base[i], id;

				if (b == NRN_GRAPH_NONE)
					continue;
				id = bases[nrn_graph_base_index(g, b)].id;
				if (bases[id].slot >= 0)
					continue;
				for (j = 0; j < fresh && seen[j] != id; j++)
					;
				if (j == fresh)
					seen[fresh++] = id;
			}
		}
		/* A unit is never split between two submissions. */
		if (s->batch.nslots + fresh > DRM_NEURON_MAX_BOS ||
		    s->batch.count + len > s->batch_max)
			ret = nrn_stream_flush_locked(s);
		if (!s->batch.nslots) {
			/* A new batch: no buffer is bound in it. */
			for (j = 0; j < nbound; j++)
				bases[bound[j]].slot = -1;
			nbound = 0;
		}
		for (u = 0; !ret && u < len; u++) {
			struct nisa_insn in = g->insns[n + u];

			for (i = 0; !ret && i < NRN_GRAPH_OPNDS; i++) {
				uint32_t b = g->ops[n + u].base[i], access = g->ops[n + u].access[i];
				struct nrn_graph_base *base, *rep;
				struct nisa_tensor *t = nrn_opnd(&in, i);
				unsigned int slot;

				if (b == NRN_GRAPH_NONE)
					continue;
				base = &bases[nrn_graph_base_index(g, b)];
				rep = &bases[base->id];
				if (rep->slot < 0) {
					ret = nrn_stream_slot_locked(s, rep->buf, access, &slot);
					if (ret)
						break;
					rep->slot = (int32_t)slot;
					bound[nbound++] = base->id;
				} else {
					s->access[rep->slot] |= access;
				}
				t->offset += base->off;
				t->slot = (uint8_t)rep->slot;
			}
			/* Where it lands in the job, for an error's site. */
			if (!ret)
				ret = nrn_sites_note_locked(s, g->id, g->origins, n + u);
			if (!ret) {
				ret = nrn_stream_push_locked(s, &in);
				if (ret)
					nrn_sites_unnote_locked(s);
			}
		}
		n += len;
	}
	free(bases);
	return ret;
}

/* Whether @g may run as one resident job: NRN_GRAPH_RESIDENT_MAX_INSNS. */
static bool nrn_graph_resident_fits(const struct nrn_graph *g)
{
	return g->ninsns <= NRN_GRAPH_RESIDENT_MAX_INSNS &&
	       nrn_graph_work(g) <= NRN_BATCH_MAX_WORK;
}

NRN_EXPORT int nrn_graph_launch(struct nrn_stream *s, const struct nrn_graph *g,
				const struct nrn_graph_arg *args,
				struct nrn_buffer *arena, uint64_t arena_off)
{
	struct nrn_buffer *consts = NULL;
	bool snapshot = false;
	uint64_t submits = 0;
	int ret;

	if (!s || !g)
		return -EINVAL;
	if (nrn_inherited(s->dev))
		return -EBADFD;
	ret = nrn_graph_check_launch(s, g, args, arena, arena_off);
	if (ret)
		return ret;
	/* Before the stream's lock: it may allocate (once per device). */
	if (g->const_size) {
		ret = nrn_graph_consts(g, s->dev, &consts);
		if (ret)
			return ret;
	}
	pthread_mutex_lock(&s->lock);
	ret = nrn_graph_job_launch_locked(s, g, args, arena, arena_off, &snapshot);
	if (ret != -EAGAIN) {
		pthread_mutex_unlock(&s->lock);
		return ret;
	}
	ret = 0;
	if (snapshot) {
		/*
		 * The graph alone in a batch, to be kept as it is issued: one
		 * longer than a batch goes whole into this one if it may be
		 * resident (its instructions, and a batch's work at most, so
		 * that its job's time stays a batch's).
		 */
		ret = nrn_stream_flush_locked(s);
		submits = s->submits;
		if (g->ninsns >= NRN_BATCH_MAX_OPS && nrn_graph_resident_fits(g))
			s->batch_max = g->ninsns + 1;
	}
	if (!ret && s->capture)
		ret = nrn_graph_record_locked(s, g, args, arena, arena_off);
	else if (!ret)
		ret = nrn_graph_issue_locked(s, g, args, arena, arena_off, consts);
	if (!ret && snapshot && s->submits == submits)
		nrn_graph_job_snapshot_locked(s, g, args, arena, arena_off);
	s->batch_max = NRN_BATCH_MAX_OPS;
	/*
	 * A graph is a unit of work worth starting at once: submitted now, the
	 * card runs it while the caller prepares what follows (else it would
	 * wait in the batch for the next sync).
	 */
	if (!ret && !s->capture)
		ret = nrn_stream_flush_locked(s);
	pthread_mutex_unlock(&s->lock);
	if (snapshot)
		nrn_graph_job_upload(g, s->dev);
	return ret;
}

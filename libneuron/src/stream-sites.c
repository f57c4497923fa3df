// SPDX-License-Identifier: MIT
/*
 * Where a card-side error happened: every job a stream submits carries a
 * cookie (the stream's serial and a count of its submissions), which the
 * driver reports with a device error -- for the failing job and for every
 * job its failure passes on to -- together with the index of the failing
 * instruction in that job. The stream keeps, for the jobs submitted since
 * its last synchronisation, the runs of instructions that graph launches
 * issued into them, so that a sync failing with -EIO can name the graph,
 * its launch instruction and the captured instruction that one was
 * compiled from (nrn_stream_error_site()).
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"

/* Runs kept between two synchronisations: past it, the oldest half goes. */
#define NRN_SITE_MAX_RUNS (1u << 16)
#define NRN_COOKIE_SERIAL_SHIFT 40

static atomic_uint_fast64_t nrn_stream_serials;

uint64_t nrn_sites_next_cookie(struct nrn_stream *s)
{
	if (!s->serial)
		s->serial = (atomic_fetch_add_explicit(&nrn_stream_serials, 1,
						       memory_order_relaxed) + 1) &
			    ((1ull << (64 - NRN_COOKIE_SERIAL_SHIFT)) - 1);
	return s->serial << NRN_COOKIE_SERIAL_SHIFT |
	       ((s->submits + 1) & ((1ull << NRN_COOKIE_SERIAL_SHIFT) - 1));
}

static void nrn_sites_drop(struct nrn_stream *s, unsigned int from, unsigned int n)
{
	for (unsigned int i = from; i < from + n; i++)
		nrn_graph_origins_put(s->runs[i].origins);
	memmove(&s->runs[from], &s->runs[from + n],
		(s->nruns - from - n) * sizeof(*s->runs));
	s->nruns -= n;
	if (s->runs_pending >= from + n)
		s->runs_pending -= n;
	else if (s->runs_pending > from)
		s->runs_pending = from;
}

int nrn_sites_note_locked(struct nrn_stream *s, uint64_t id,
			  struct nrn_graph_origins *origins, unsigned int graph_insn)
{
	unsigned int at = s->batch.count;
	struct nrn_site_run *r = s->nruns > s->runs_pending ? &s->runs[s->nruns - 1] : NULL;

	/* The common case: the next instruction of the batch's last run. */
	if (r && r->graph_id == id && r->job_insn + r->len == at &&
	    r->graph_insn + r->len == graph_insn) {
		r->len++;
		return 0;
	}
	if (s->nruns == NRN_SITE_MAX_RUNS && s->runs_pending) {
		/* Forget the oldest submitted runs (never the batch's). */
		nrn_sites_drop(s, 0, s->runs_pending < NRN_SITE_MAX_RUNS / 2 ?
				     s->runs_pending : NRN_SITE_MAX_RUNS / 2);
	}
	if (s->nruns == s->runs_cap) {
		unsigned int cap = s->runs_cap ? 2 * s->runs_cap : 16;
		struct nrn_site_run *n = realloc(s->runs, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		s->runs = n;
		s->runs_cap = cap;
	}
	atomic_fetch_add_explicit(&origins->refs, 1, memory_order_relaxed);
	s->runs[s->nruns++] = (struct nrn_site_run){
		.graph_id = id, .job_insn = at, .len = 1, .graph_insn = graph_insn,
		.origins = origins,
	};
	return 0;
}

int nrn_sites_note_run_locked(struct nrn_stream *s, uint64_t id,
			      struct nrn_graph_origins *origins, unsigned int n)
{
	int ret = nrn_sites_note_locked(s, id, origins, 0);

	if (!ret)
		s->runs[s->nruns - 1].len = n;
	return ret;
}

void nrn_sites_unnote_locked(struct nrn_stream *s)
{
	struct nrn_site_run *r = s->nruns > s->runs_pending ? &s->runs[s->nruns - 1] : NULL;

	/* Not if a failed flush dropped the batch, and its runs, already. */
	if (r && r->job_insn + r->len == s->batch.count + 1 && !--r->len)
		nrn_sites_drop(s, s->nruns - 1, 1);
}

void nrn_sites_commit_locked(struct nrn_stream *s, uint64_t cookie)
{
	if (!cookie) {
		nrn_sites_drop(s, s->runs_pending, s->nruns - s->runs_pending);
		return;
	}
	for (unsigned int i = s->runs_pending; i < s->nruns; i++)
		s->runs[i].cookie = cookie;
	s->runs_pending = s->nruns;
}

void nrn_sites_sync_locked(struct nrn_stream *s, int ret, unsigned int code,
			   uint32_t insn, uint64_t cookie)
{
	if (ret < 0) {
		s->has_site = ret == -EIO && code;
		s->site = (struct nrn_error_site){
			.code = code,
			.job_insn = insn == DRM_NEURON_NO_INSN ? UINT_MAX : insn,
			.graph_insn = UINT_MAX, .origin = UINT_MAX,
		};
	}
	for (unsigned int i = 0; s->has_site && ret == -EIO && cookie &&
	     insn != DRM_NEURON_NO_INSN && i < s->runs_pending; i++) {
		const struct nrn_site_run *r = &s->runs[i];
		unsigned int gi;

		if (r->cookie != cookie || insn < r->job_insn || insn - r->job_insn >= r->len)
			continue;
		gi = r->graph_insn + (insn - r->job_insn);
		s->site.graph_id = r->graph_id;
		s->site.graph_insn = gi;
		s->site.origin = gi < r->origins->n ? r->origins->idx[gi] : UINT_MAX;
		break;
	}
	/* Every submitted job has completed: a fresh chain starts. */
	nrn_sites_drop(s, 0, s->runs_pending);
}

void nrn_sites_fini(struct nrn_stream *s)
{
	nrn_sites_drop(s, 0, s->nruns);
	free(s->runs);
	s->runs = NULL;
	s->runs_cap = 0;
}

NRN_EXPORT int nrn_stream_error_site(struct nrn_stream *s, struct nrn_error_site *site)
{
	int ret = 0;

	if (!s || !site)
		return -EINVAL;
	if (nrn_inherited(s->dev))
		return -EBADFD;
	pthread_mutex_lock(&s->lock);
	if (s->has_site)
		*site = s->site;
	else
		ret = -ENOENT;
	pthread_mutex_unlock(&s->lock);
	return ret;
}

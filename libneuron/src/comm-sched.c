// SPDX-License-Identifier: MIT
/*
 * Schedules of the collectives (docs/collectives.md "Algorithms"): every
 * rank builds the whole collective's link jobs, every rank's, in the same
 * order, so that each knows which of a peer's jobs it waits for. The order
 * is a topological order of the dependencies (a job's @dep comes before
 * it), which is what lets each rank submit its jobs in order while waiting
 * for its peers' submissions without a deadlock.
 *
 * Ranks stand on a ring by position (c->ring); all algorithms but the
 * direct all-to-all copies move data to the next position over its link.
 * Data is cut into pieces of at most NRN_COMM_PIECE bytes, one link job
 * each, so that a piece's next step overlaps the next piece's step.
 * Empty jobs (a block of 0 elements) are left out; nothing depends on one
 * but the same block's next step, which is empty too.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "comm.h"

/* Append a job; -1 (no job) when it is empty, else its index. */
static int nrn_job(struct nrn_comm_sched *sc, int rank, int dst_rank,
		   int src_buf, uint64_t src_off, int dst_buf, uint64_t dst_off,
		   uint64_t size, int reduce, int dep)
{
	struct nrn_comm_job *j;

	if (!size)
		return -1;
	if (sc->njobs == sc->cap) {
		unsigned int cap = sc->cap ? sc->cap * 2 : 64;
		void *p = realloc(sc->jobs, cap * sizeof(*sc->jobs));

		if (!p)
			return -ENOMEM;
		sc->jobs = p;
		sc->cap = cap;
	}
	j = &sc->jobs[sc->njobs];
	*j = (struct nrn_comm_job){
		.rank = (uint8_t)rank, .dst_rank = (uint8_t)dst_rank,
		.src_buf = (uint8_t)src_buf, .dst_buf = (uint8_t)dst_buf,
		.reduce = (uint8_t)reduce, .src_off = src_off, .dst_off = dst_off,
		.size = size, .dep = dep,
	};
	return (int)sc->njobs++;
}

static void nrn_local(struct nrn_comm_sched *sc, int src_buf, uint64_t src_off,
		      int dst_buf, uint64_t dst_off, uint64_t size)
{
	if (size)
		sc->local[sc->nlocal++] = (struct nrn_comm_local){
			.src_buf = (uint8_t)src_buf, .dst_buf = (uint8_t)dst_buf,
			.src_off = src_off, .dst_off = dst_off, .size = size };
}

/* A local copy that no link job touches: beside them (comm.h). */
static void nrn_local_beside(struct nrn_comm_sched *sc, int src_buf, uint64_t src_off,
			     int dst_buf, uint64_t dst_off, uint64_t size)
{
	nrn_local(sc, src_buf, src_off, dst_buf, dst_off, size);
	if (size)
		sc->local[sc->nlocal - 1].beside = true;
}

/* [start, end) of element block @b of @n over [0, len). */
static uint64_t nrn_split(uint64_t len, int b, int n)
{
	return (uint64_t)((unsigned __int128)len * (unsigned)b / (unsigned)n);
}

#define RING(p) c->ring[((p) % n + n) % n]

/*
 * All-reduce in RECV: reduce-scatter then all-gather around the ring, per
 * piece of n blocks. Step s < n-1: position p reduces block p-s into the
 * next's; step n-1+t: position p copies (complete) block p+1-t to the next.
 */
static int nrn_sched_all_reduce(const struct nrn_comm *c, const struct nrn_comm_call *a,
				struct nrn_comm_sched *sc, uint64_t es)
{
	int n = c->nranks, steps = 2 * (n - 1), *id;
	uint64_t pe = (uint64_t)n * (NRN_COMM_PIECE / es);
	uint64_t npieces = (a->count + pe - 1) / pe;
	int ret = 0;

	if (a->buf[NRN_CB_SEND] != a->buf[NRN_CB_RECV] ||
	    a->off[NRN_CB_SEND] != a->off[NRN_CB_RECV])
		nrn_local(sc, NRN_CB_SEND, 0, NRN_CB_RECV, 0, a->count * es);
	if (n == 1 || !npieces)
		return 0;
	id = malloc(sizeof(int) * npieces * (size_t)steps * (size_t)n);
	if (!id)
		return -ENOMEM;
	/* Wavefront: piece k's step s after piece k+1's step s-1. */
	for (uint64_t d = 0; d < npieces + (uint64_t)steps - 1 && ret >= -1; d++) {
		for (uint64_t k = d < (uint64_t)steps ? 0 : d - steps + 1;
		     k <= d && k < npieces && ret >= -1; k++) {
			int s = (int)(d - k);
			uint64_t start = k * pe;
			uint64_t len = a->count - start < pe ? a->count - start : pe;

			for (int p = 0; p < n && ret >= -1; p++) {
				int blk = s < n - 1 ? p - s : p + 1 - (s - (n - 1));
				int b = (blk % n + n) % n;
				uint64_t b0 = start + nrn_split(len, b, n);
				uint64_t b1 = start + nrn_split(len, b + 1, n);
				int dep = s ? id[(k * steps + s - 1) * n + (p + n - 1) % n] : -1;

				ret = nrn_job(sc, RING(p), RING(p + 1), NRN_CB_RECV, b0 * es,
					      NRN_CB_RECV, b0 * es, (b1 - b0) * es,
					      s < n - 1 ? (int)a->reduce : NISA_REDUCE_NONE, dep);
				id[(k * steps + s) * n + p] = ret;
			}
		}
	}
	free(id);
	return ret < -1 ? ret : 0;
}

/*
 * Reduce-scatter: rank R's block is reduced along the chain of positions
 * pos(R)+1 .. pos(R)-1 into each one's SCRATCH (a copy of its send), the
 * last step into R's RECV (which holds R's own block).
 */
static int nrn_sched_reduce_scatter(const struct nrn_comm *c, const struct nrn_comm_call *a,
				    struct nrn_comm_sched *sc, uint64_t es)
{
	int n = c->nranks, prev = -1, ret = 0;
	uint64_t pe = NRN_COMM_PIECE / es, bytes = a->count * es;

	if (a->buf[NRN_CB_SEND] != a->buf[NRN_CB_RECV] ||
	    a->off[NRN_CB_SEND] + (uint64_t)c->rank * bytes != a->off[NRN_CB_RECV])
		nrn_local(sc, NRN_CB_SEND, (uint64_t)c->rank * bytes, NRN_CB_RECV, 0, bytes);
	if (n == 1)
		return 0;
	if (n > 2) {
		nrn_local(sc, NRN_CB_SEND, 0, NRN_CB_SCRATCH, 0, (uint64_t)n * bytes);
		sc->scratch = (uint64_t)n * bytes;
	}
	for (uint64_t k = 0; k * pe < a->count && ret >= -1; k++) {
		uint64_t e0 = k * pe, e1 = e0 + pe < a->count ? e0 + pe : a->count;

		for (int s = 0; s < n - 1 && ret >= -1; s++) {
			/* Step s: position p sends the block of position p-1-s. */
			int first = sc->njobs;

			for (int p = 0; p < n && ret >= -1; p++) {
				int owner = RING(p - 1 - s);
				uint64_t off = ((uint64_t)owner * a->count + e0) * es;
				bool last = s == n - 2;
				int dep = s ? prev + ((p + n - 1) % n) : -1;

				ret = nrn_job(sc, RING(p), RING(p + 1),
					      s ? NRN_CB_SCRATCH : NRN_CB_SEND, off,
					      last ? NRN_CB_RECV : NRN_CB_SCRATCH,
					      last ? e0 * es : off, (e1 - e0) * es,
					      (int)a->reduce, dep);
			}
			prev = first;
		}
	}
	return ret < -1 ? ret : 0;
}

/* All-gather: rank R's block travels pos(R) -> pos(R)+1 -> ... in RECV. */
static int nrn_sched_all_gather(const struct nrn_comm *c, const struct nrn_comm_call *a,
				struct nrn_comm_sched *sc, uint64_t es)
{
	int n = c->nranks, prev = -1, ret = 0;
	uint64_t pe = NRN_COMM_PIECE / es, bytes = a->count * es;

	if (a->buf[NRN_CB_SEND] != a->buf[NRN_CB_RECV] ||
	    a->off[NRN_CB_SEND] != a->off[NRN_CB_RECV] + (uint64_t)c->rank * bytes)
		nrn_local(sc, NRN_CB_SEND, 0, NRN_CB_RECV, (uint64_t)c->rank * bytes, bytes);
	for (uint64_t k = 0; k * pe < a->count && ret >= -1 && n > 1; k++) {
		uint64_t e0 = k * pe, e1 = e0 + pe < a->count ? e0 + pe : a->count;

		for (int s = 0; s < n - 1 && ret >= -1; s++) {
			int first = sc->njobs;

			for (int p = 0; p < n && ret >= -1; p++) {
				uint64_t off = ((uint64_t)RING(p - s) * a->count + e0) * es;
				int dep = s ? prev + ((p + n - 1) % n) : -1;

				ret = nrn_job(sc, RING(p), RING(p + 1), NRN_CB_RECV, off,
					      NRN_CB_RECV, off, (e1 - e0) * es,
					      NISA_REDUCE_NONE, dep);
			}
			prev = first;
		}
	}
	return ret < -1 ? ret : 0;
}

/* Broadcast: a chain from the root's position, piece after piece. */
static int nrn_sched_broadcast(const struct nrn_comm *c, const struct nrn_comm_call *a,
			       struct nrn_comm_sched *sc, uint64_t es)
{
	int n = c->nranks, rp = 0, ret = 0;
	uint64_t pe = NRN_COMM_PIECE / es;

	while (c->ring[rp] != a->root)
		rp++;
	for (uint64_t k = 0; k * pe < a->count && ret >= -1; k++) {
		uint64_t e0 = k * pe, e1 = e0 + pe < a->count ? e0 + pe : a->count;

		for (int h = 0; h < n - 1 && ret >= -1; h++)
			ret = nrn_job(sc, RING(rp + h), RING(rp + h + 1), NRN_CB_RECV,
				      e0 * es, NRN_CB_RECV, e0 * es, (e1 - e0) * es,
				      NISA_REDUCE_NONE, h ? ret : -1);
	}
	return ret < -1 ? ret : 0;
}

/*
 * Reduce to the root: the chain of positions pos(root)+1 .. pos(root)-1
 * reduces piece by piece into each one's SCRATCH (a copy of its send),
 * the last step into the root's RECV (which holds the root's send). The
 * other ranks' send ranges are only read.
 */
static int nrn_sched_reduce(const struct nrn_comm *c, const struct nrn_comm_call *a,
			    struct nrn_comm_sched *sc, uint64_t es)
{
	int n = c->nranks, rp = 0, ret = 0;
	uint64_t pe = NRN_COMM_PIECE / es, bytes = a->count * es;

	while (c->ring[rp] != a->root)
		rp++;
	if (c->rank == a->root) {
		if (a->buf[NRN_CB_SEND] != a->buf[NRN_CB_RECV] ||
		    a->off[NRN_CB_SEND] != a->off[NRN_CB_RECV])
			nrn_local(sc, NRN_CB_SEND, 0, NRN_CB_RECV, 0, bytes);
	} else if (n > 2 && c->rank != RING(rp + 1)) {
		nrn_local(sc, NRN_CB_SEND, 0, NRN_CB_SCRATCH, 0, bytes);
	}
	if (n > 2)
		sc->scratch = bytes;
	for (uint64_t k = 0; k * pe < a->count && ret >= -1; k++) {
		uint64_t e0 = k * pe, e1 = e0 + pe < a->count ? e0 + pe : a->count;

		ret = -1;
		for (int s = 0; s < n - 1 && ret >= -1; s++) {
			bool last = s == n - 2;

			ret = nrn_job(sc, RING(rp + 1 + s), RING(rp + 2 + s),
				      s ? NRN_CB_SCRATCH : NRN_CB_SEND, e0 * es,
				      last ? NRN_CB_RECV : NRN_CB_SCRATCH, e0 * es,
				      (e1 - e0) * es, (int)a->reduce, ret);
		}
	}
	return ret < -1 ? ret : 0;
}

/* Elements rank @S sends rank @D in an all-to-all. */
static uint64_t nrn_cnt(const struct nrn_comm_call *a, int S, int D)
{
	return a->split ? (*a->split)[S][D] : a->count;
}

/*
 * All-to-all (and gather, scatter, all-to-allv): block D of S's send to
 * block S of D's recv, directly over S's link to D when there is one,
 * else forwarded along the ring through the intermediate ranks' SCRATCH
 * (one slot per distance and hop, as large as the largest block
 * forwarded that far).
 */
static int nrn_sched_all_to_all(const struct nrn_comm *c, const struct nrn_comm_call *a,
				struct nrn_comm_sched *sc, uint64_t es)
{
	int n = c->nranks, r = c->rank, ret = 0;
	uint64_t pe = NRN_COMM_PIECE / es, scr = 0;
	/* Element offsets of block (S, D) in S's send and in D's recv. */
	uint64_t soff[NRN_COMM_MAX_RANKS][NRN_COMM_MAX_RANKS];
	uint64_t roff[NRN_COMM_MAX_RANKS][NRN_COMM_MAX_RANKS];

	for (int i = 0; i < n; i++) {
		uint64_t so = 0, ro = 0;

		for (int j = 0; j < n; j++) {
			soff[i][j] = so;
			so += nrn_cnt(a, i, j);
			roff[j][i] = ro;
			ro += nrn_cnt(a, j, i);
		}
	}
	/* Our own block: no link job reads or writes it. */
	nrn_local_beside(sc, NRN_CB_SEND, soff[r][r] * es, NRN_CB_RECV, roff[r][r] * es,
			 nrn_cnt(a, r, r) * es);
	for (int d = 1; d < n && ret >= -1; d++) {
		uint64_t blk = 0;

		for (int p = 0; p < n; p++)
			if (c->link_of[RING(p)][RING(p + d)] < 0 &&
			    nrn_cnt(a, RING(p), RING(p + d)) * es > blk)
				blk = nrn_cnt(a, RING(p), RING(p + d)) * es;
		for (int p = 0; p < n && ret >= -1; p++) {
			int S = RING(p), D = RING(p + d);
			uint64_t cnt = nrn_cnt(a, S, D);
			uint64_t so = soff[S][D] * es, ro = roff[S][D] * es;

			for (uint64_t k = 0; k * pe < cnt && ret >= -1; k++) {
				uint64_t e0 = k * pe, e1 = e0 + pe < cnt ? e0 + pe : cnt;
				uint64_t sz = (e1 - e0) * es, o = e0 * es;

				if (c->link_of[S][D] >= 0) {
					ret = nrn_job(sc, S, D, NRN_CB_SEND, so + o, NRN_CB_RECV,
						      ro + o, sz, NISA_REDUCE_NONE, -1);
					continue;
				}
				ret = -1;
				for (int h = 0; h < d && ret >= -1; h++) {
					bool lasth = h == d - 1;

					ret = nrn_job(sc, RING(p + h), RING(p + h + 1),
						      h ? NRN_CB_SCRATCH : NRN_CB_SEND,
						      h ? scr + (uint64_t)(h - 1) * blk + o : so + o,
						      lasth ? NRN_CB_RECV : NRN_CB_SCRATCH,
						      lasth ? ro + o : scr + (uint64_t)h * blk + o,
						      sz, NISA_REDUCE_NONE, ret);
				}
			}
		}
		scr += (uint64_t)(d - 1) * blk;
	}
	sc->scratch = scr;
	return ret < -1 ? ret : 0;
}

int nrn_comm_schedule(const struct nrn_comm *c, const struct nrn_comm_call *a,
		      struct nrn_comm_sched *sc)
{
	uint64_t es = nisa_dtype_size(a->dtype);
	int ret = 0;

	memset(sc, 0, sizeof(*sc));
	switch (a->coll) {
	case NRN_COLL_ALL_REDUCE:
		ret = nrn_sched_all_reduce(c, a, sc, es);
		break;
	case NRN_COLL_REDUCE_SCATTER:
		ret = nrn_sched_reduce_scatter(c, a, sc, es);
		break;
	case NRN_COLL_ALL_GATHER:
		ret = nrn_sched_all_gather(c, a, sc, es);
		break;
	case NRN_COLL_BROADCAST:
		ret = nrn_sched_broadcast(c, a, sc, es);
		break;
	case NRN_COLL_ALL_TO_ALL:
	case NRN_COLL_GATHER:
	case NRN_COLL_SCATTER:
	case NRN_COLL_ALL_TO_ALLV:
		ret = nrn_sched_all_to_all(c, a, sc, es);
		break;
	case NRN_COLL_REDUCE:
		ret = nrn_sched_reduce(c, a, sc, es);
		break;
	case NRN_COLL_SEND:
		for (uint64_t o = 0; o < a->count && ret >= -1; o += NRN_COMM_PIECE) {
			uint64_t sz = a->count - o < NRN_COMM_PIECE ? a->count - o : NRN_COMM_PIECE;

			ret = nrn_job(sc, a->root, a->peer, NRN_CB_SEND, o, NRN_CB_RECV, o,
				      sz, NISA_REDUCE_NONE, -1);
		}
		ret = ret < -1 ? ret : 0;
		break;
	case NRN_COLL_BARRIER:
		break;
	}
	if (ret) {
		nrn_comm_sched_fini(sc);
		return ret;
	}
	/* Each job's index among its rank's jobs (its timeline point). */
	unsigned int per[NRN_COMM_MAX_RANKS] = { 0 };

	for (unsigned int i = 0; i < sc->njobs; i++) {
		sc->jobs[i].idx = per[sc->jobs[i].rank]++;
		if (sc->jobs[i].idx >= NRN_COMM_MAX_JOBS) {
			nrn_comm_sched_fini(sc);
			return -E2BIG;
		}
	}
	return 0;
}

void nrn_comm_sched_fini(struct nrn_comm_sched *sc)
{
	free(sc->jobs);
	sc->jobs = NULL;
	sc->njobs = sc->cap = 0;
}

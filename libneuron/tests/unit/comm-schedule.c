// SPDX-License-Identifier: MIT
/*
 * Description: host unit test, no device needed -- the collectives'
 * schedules (src/comm-sched.c) executed on the CPU: for 1..6 ranks on a
 * ring and on a mesh, every collective, in place and not, sizes around
 * the pipeline's piece, each schedule run in many random orders that
 * respect only the dependencies the submission gives the jobs (the rank's
 * previous job, the job it names, the destination's local copies): every
 * order must give the CPU reference, so a missing dependency (a block
 * read before it is complete, or overwritten while still needed) shows up
 * as a wrong result. Also every job stays inside the ranges the ranks
 * describe to each other.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/comm.h"

static int failures;

#define CHECK(cond) do {						\
	if (!(cond)) {							\
		fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #cond); \
		failures++;						\
	}								\
} while (0)

#define MAXR 6

struct sim {
	int n;
	struct nrn_comm c[MAXR];
	struct nrn_comm_call call[MAXR];
	struct nrn_comm_sched sc[MAXR];
	float *mem[MAXR][NRN_CB_NUM];
	uint64_t len[MAXR][NRN_CB_NUM];	/* floats of each buffer */
};

static float gen(int r, uint64_t i)
{
	return (float)((int)((i * 7 + (uint64_t)r * 13) % 17) - 8);
}

static float apply(int red, float d, float s)
{
	switch (red) {
	case NISA_REDUCE_SUM: return d + s;
	case NISA_REDUCE_MAX: return d > s ? d : s;
	case NISA_REDUCE_MIN: return d < s ? d : s;
	case NISA_REDUCE_PROD: return d * s;
	default: return s;
	}
}

/* Ranks on a ring (links 0: next, 1: previous) or a mesh. */
static void topo(struct sim *S, bool mesh)
{
	for (int r = 0; r < S->n; r++) {
		struct nrn_comm *c = &S->c[r];

		memset(c, 0, sizeof(*c));
		c->rank = r;
		c->nranks = S->n;
		c->pos = r;
		for (int q = 0; q < S->n; q++) {
			int d = ((q - r) % S->n + S->n) % S->n;

			c->ring[q] = q;
			c->link_of[r][q] = -1;
			if (d && mesh)
				c->link_of[r][q] = (int8_t)(d - 1);
			else if (d == 1)
				c->link_of[r][q] = 0;
			else if (d == S->n - 1 && d)
				c->link_of[r][q] = 1;
		}
	}
	for (int r = 0; r < S->n; r++)
		for (int a = 0; a < S->n; a++)
			memcpy(S->c[r].link_of[a], S->c[a].link_of[a], sizeof(S->c[a].link_of[a]));
}

static float *bufp(struct sim *S, int r, int b, uint64_t byte_off)
{
	/* In place: SEND and RECV share memory at the call's offsets. */
	struct nrn_comm_call *a = &S->call[r];

	if (b == NRN_CB_SEND || b == NRN_CB_RECV)
		return (float *)((char *)S->mem[r][NRN_CB_SEND] + a->off[b] + byte_off);
	return (float *)((char *)S->mem[r][b] + byte_off);
}

/* Run every rank's schedule in a random order allowed by the dependencies. */
static void execute(struct sim *S, unsigned int seed)
{
	struct nrn_comm_sched *g = &S->sc[0];
	bool *done = calloc(g->njobs + 1, 1);
	unsigned int left = g->njobs;

	srand(seed);
	for (int r = 0; r < S->n; r++) {
		for (unsigned int i = 0; i < S->sc[r].nlocal; i++) {
			const struct nrn_comm_local *l = &S->sc[r].local[i];

			memmove(bufp(S, r, l->dst_buf, l->dst_off), bufp(S, r, l->src_buf, l->src_off),
				l->size);
		}
	}
	while (left) {
		unsigned int ready[4096], nready = 0;
		int seen[MAXR];

		for (int r = 0; r < S->n; r++)
			seen[r] = 0;
		for (unsigned int j = 0; j < g->njobs && nready < 4096; j++) {
			const struct nrn_comm_job *J = &g->jobs[j];

			if (done[j] || seen[J->rank]++)
				continue;	/* a rank's jobs run in its order */
			if (J->dep < 0 || done[J->dep])
				ready[nready++] = j;
		}
		if (!nready) {
			CHECK(!"deadlock: no job ready");
			break;
		}
		unsigned int j = ready[rand() % nready];
		const struct nrn_comm_job *J = &g->jobs[j];
		float *src = bufp(S, J->rank, J->src_buf, J->src_off);
		float *dst = bufp(S, J->dst_rank, J->dst_buf, J->dst_off);

		CHECK(J->rank != J->dst_rank && S->c[J->rank].link_of[J->rank][J->dst_rank] >= 0);
		CHECK(J->dep < 0 || g->jobs[J->dep].dst_rank == J->rank);
		for (uint64_t k = 0; k < J->size / 4; k++)
			dst[k] = apply(J->reduce, dst[k], src[k]);
		done[j] = true;
		left--;
	}
	free(done);
}

/* Set up rank r's call and buffers (floats), then schedule. */
static void setup(struct sim *S, enum nrn_comm_coll coll, uint64_t count, bool in_place,
		  int red, int root)
{
	int n = S->n;

	for (int r = 0; r < n; r++) {
		struct nrn_comm_call *a = &S->call[r];
		uint64_t send_n = count, recv_n = count;

		if (coll == NRN_COLL_REDUCE_SCATTER || coll == NRN_COLL_ALL_TO_ALL)
			send_n = count * (uint64_t)n;
		if (coll == NRN_COLL_ALL_GATHER || coll == NRN_COLL_ALL_TO_ALL)
			recv_n = count * (uint64_t)n;
		memset(a, 0, sizeof(*a));
		a->coll = coll;
		a->dtype = NISA_F32;
		a->count = count;
		a->reduce = (uint32_t)red;
		a->root = root;
		/* One allocation: SEND at 0, RECV after it (or in place). */
		a->buf[NRN_CB_SEND] = a->buf[NRN_CB_RECV] = (struct nrn_buffer *)S;
		a->off[NRN_CB_SEND] = 0;
		a->off[NRN_CB_RECV] = (send_n + 8) * 4;
		if (in_place && coll == NRN_COLL_REDUCE_SCATTER)
			a->off[NRN_CB_RECV] = (uint64_t)r * count * 4;
		else if (in_place && coll == NRN_COLL_ALL_GATHER)
			a->off[NRN_CB_SEND] = a->off[NRN_CB_RECV] + (uint64_t)r * count * 4;
		else if (in_place || coll == NRN_COLL_BROADCAST)
			a->off[NRN_CB_RECV] = a->off[NRN_CB_SEND];
		a->len[NRN_CB_SEND] = send_n * 4;
		a->len[NRN_CB_RECV] = recv_n * 4;
		S->mem[r][NRN_CB_SEND] = calloc(2 * (send_n + recv_n) + 64, 4);
		CHECK(nrn_comm_schedule(&S->c[r], a, &S->sc[r]) == 0);
		S->mem[r][NRN_CB_SCRATCH] = calloc(S->sc[r].scratch / 4 + 1, 4);
		for (uint64_t i = 0; i < send_n; i++)
			bufp(S, r, NRN_CB_SEND, 0)[i] = gen(r, i);
		if (coll == NRN_COLL_BROADCAST)
			continue;
		if (!in_place)
			for (uint64_t i = 0; i < recv_n; i++)
				bufp(S, r, NRN_CB_RECV, 0)[i] = 999;
	}
	/* Every rank built the same jobs. */
	for (int r = 1; r < n; r++) {
		CHECK(S->sc[r].njobs == S->sc[0].njobs &&
		      !memcmp(S->sc[r].jobs, S->sc[0].jobs, S->sc[0].njobs * sizeof(*S->sc[0].jobs)));
		CHECK(S->sc[r].scratch == S->sc[0].scratch);
	}
	/* Each job stays inside the receiver's described range. */
	for (unsigned int j = 0; j < S->sc[0].njobs; j++) {
		const struct nrn_comm_job *J = &S->sc[0].jobs[j];
		uint64_t lim = J->dst_buf == NRN_CB_SCRATCH ? S->sc[0].scratch
							     : S->call[J->dst_rank].len[NRN_CB_RECV];

		CHECK(J->dst_off + J->size <= lim && J->size % 4 == 0 && J->size);
	}
}

static void teardown(struct sim *S)
{
	for (int r = 0; r < S->n; r++) {
		free(S->mem[r][NRN_CB_SEND]);
		free(S->mem[r][NRN_CB_SCRATCH]);
		nrn_comm_sched_fini(&S->sc[r]);
	}
}

static float expect(struct sim *S, enum nrn_comm_coll coll, int r, uint64_t i,
		    uint64_t count, int red, int root)
{
	float acc;

	switch (coll) {
	case NRN_COLL_ALL_REDUCE:
	case NRN_COLL_REDUCE_SCATTER:
		if (coll == NRN_COLL_REDUCE_SCATTER)
			i += (uint64_t)r * count;
		acc = gen(0, i);
		for (int q = 1; q < S->n; q++)
			acc = apply(red, acc, gen(q, i));
		return acc;
	case NRN_COLL_ALL_GATHER:
		return gen((int)(i / count), i % count);
	case NRN_COLL_BROADCAST:
		return gen(root, i);
	case NRN_COLL_ALL_TO_ALL:
		return gen((int)(i / count), (uint64_t)r * count + i % count);
	default:
		return 0;
	}
}

static void one(int n, bool mesh, enum nrn_comm_coll coll, uint64_t count, bool in_place,
		int red, unsigned int orders)
{
	static struct sim S;
	int root = (int)(count % (uint64_t)n);

	for (unsigned int o = 0; o < orders; o++) {
		uint64_t recv_n = coll == NRN_COLL_ALL_GATHER || coll == NRN_COLL_ALL_TO_ALL ?
				  count * (uint64_t)n : count;
		unsigned int bad = 0;

		S.n = n;
		topo(&S, mesh);
		setup(&S, coll, count, in_place, red, root);
		execute(&S, o * 7919 + (unsigned int)count);
		for (int r = 0; r < n; r++)
			for (uint64_t i = 0; i < recv_n; i++) {
				float got = bufp(&S, r, NRN_CB_RECV, 0)[i];
				float want = expect(&S, coll, r, i, count, red, root);

				if (got != want && bad++ < 3)
					fprintf(stderr, "n %d %s coll %d count %llu%s order %u: rank %d [%llu] = %g, want %g\n",
						n, mesh ? "mesh" : "ring", coll,
						(unsigned long long)count, in_place ? " in place" : "",
						o, r, (unsigned long long)i, got, want);
			}
		CHECK(bad == 0);
		teardown(&S);
	}
}

int main(void)
{
	static const uint64_t counts[] = { 1, 2, 5, 1000 };
	static const enum nrn_comm_coll colls[] = {
		NRN_COLL_ALL_REDUCE, NRN_COLL_REDUCE_SCATTER, NRN_COLL_ALL_GATHER,
		NRN_COLL_BROADCAST, NRN_COLL_ALL_TO_ALL,
	};
	const uint64_t piece = NRN_COMM_PIECE / 4;

	for (int n = 1; n <= MAXR; n++)
		for (int mesh = 0; mesh < 2; mesh++)
			for (unsigned int c = 0; c < 5; c++)
				for (unsigned int k = 0; k < 4; k++) {
					bool ip = k & 1 && colls[c] != NRN_COLL_ALL_TO_ALL &&
						  colls[c] != NRN_COLL_BROADCAST;

					one(n, mesh, colls[c], counts[k], ip,
					    k == 2 ? NISA_REDUCE_MAX : NISA_REDUCE_SUM, 8);
				}
	/* Several pieces: the pipeline's wavefront and the chains per piece. */
	for (int n = 2; n <= 4; n++) {
		one(n, false, NRN_COLL_ALL_REDUCE, 2 * piece * (uint64_t)n + 3, false, NISA_REDUCE_SUM, 3);
		one(n, false, NRN_COLL_ALL_REDUCE, 2 * piece * (uint64_t)n + 3, true, NISA_REDUCE_MIN, 1);
		one(n, false, NRN_COLL_REDUCE_SCATTER, piece + 7, false, NISA_REDUCE_SUM, 2);
		one(n, false, NRN_COLL_ALL_GATHER, piece + 7, true, NISA_REDUCE_NONE, 2);
		one(n, false, NRN_COLL_BROADCAST, 2 * piece + 1, false, NISA_REDUCE_NONE, 2);
		one(n, false, NRN_COLL_ALL_TO_ALL, piece + 3, false, NISA_REDUCE_NONE, 2);
	}
	printf("comm-schedule: %s\n", failures ? "FAILED" : "ok");
	return failures ? 1 : 0;
}

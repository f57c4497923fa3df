// SPDX-License-Identifier: MIT
/*
 * Description: communicator errors -- bad arguments (-EINVAL, nothing
 * issued), float reductions only, a rank that never joins (-ETIMEDOUT in
 * bounded time), a rank that never takes part in a collective (the
 * others' stream syncs fail with -ETIMEDOUT in bounded time, the
 * communicator stays failed, the late rank is told), all-to-allv counts
 * that do not match (every rank's stream fails with -EINVAL), point to point
 * between cards without a direct link (-ENOLINK) and a communicator over
 * cards the ring cannot join (-EXDEV), a capturing stream refused.
 */
#include <errno.h>
#include <pthread.h>
#include <time.h>

#include "t_comm.h"

static double t_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void t_bad_args(struct nrn_comm *c, struct nrn_stream *s, struct nrn_device *dev)
{
	struct nrn_buffer *a = t_buffer(dev, 4096), *b = t_buffer(dev, 4096), *h = NULL;
	int n = nrn_comm_size(c);

	t_check_ret(nrn_buffer_alloc(dev, 4096, NRN_MEM_HOST, &h), 0);
	/* Reductions: f32, bf16, f16 only; known ops. */
	t_check_ret(nrn_all_reduce(c, s, a, 0, b, 0, 16, NISA_I32, NRN_REDUCE_SUM), -EINVAL);
	t_check_ret(nrn_all_reduce(c, s, a, 0, b, 0, 16, NISA_I64, NRN_REDUCE_MAX), -EINVAL);
	t_check_ret(nrn_reduce_scatter(c, s, a, 0, b, 0, 4, NISA_I32, NRN_REDUCE_SUM), -EINVAL);
	t_check_ret(nrn_all_reduce(c, s, a, 0, b, 0, 16, NISA_F32, (enum nrn_reduce_op)5), -EINVAL);
	t_check_ret(nrn_all_reduce(c, s, a, 0, b, 0, 16, (enum nisa_dtype)99, NRN_REDUCE_SUM), -EINVAL);
	/* Ranges: outside the buffer, misaligned, host memory, overlapping. */
	t_check_ret(nrn_all_reduce(c, s, a, 0, b, 0, 1025, NISA_F32, NRN_REDUCE_SUM), -EINVAL);
	t_check_ret(nrn_all_reduce(c, s, a, 2, b, 0, 16, NISA_F32, NRN_REDUCE_SUM), -EINVAL);
	t_check_ret(nrn_all_reduce(c, s, a, UINT64_MAX - 3, b, 0, 1, NISA_F32, NRN_REDUCE_SUM), -EINVAL);
	t_check_ret(nrn_all_reduce(c, s, h, 0, b, 0, 16, NISA_F32, NRN_REDUCE_SUM), -EINVAL);
	t_check_ret(nrn_all_reduce(c, s, a, 0, a, 4, 16, NISA_F32, NRN_REDUCE_SUM), -EINVAL);
	t_check_ret(nrn_all_reduce(c, s, NULL, 0, b, 0, 16, NISA_F32, NRN_REDUCE_SUM), -EINVAL);
	t_check_ret(nrn_all_reduce(c, s, a, 0, b, 0, UINT64_MAX / 2, NISA_F32, NRN_REDUCE_SUM), -EINVAL);
	t_check_ret(nrn_reduce_scatter(c, s, a, 0, b, 0, 4096 / 4 / (uint64_t)n + 1, NISA_F32,
				       NRN_REDUCE_SUM), -EINVAL);
	t_check_ret(nrn_all_gather(c, s, a, 0, b, 0, 4096 / 4 / (uint64_t)n + 1, NISA_F32), -EINVAL);
	t_check_ret(nrn_all_gather(c, s, a, 4, a, 0, 16, NISA_F32), -EINVAL);
	t_check_ret(nrn_all_to_all(c, s, a, 0, a, 0, 16, NISA_F32), -EINVAL);	/* not in place */
	t_check_ret(nrn_broadcast(c, s, a, 0, 16, NISA_F32, n), -EINVAL);
	t_check_ret(nrn_broadcast(c, s, a, 0, 16, NISA_F32, -1), -EINVAL);
	t_check_ret(nrn_send(c, s, a, 0, 16, nrn_comm_rank(c)), -EINVAL);
	t_check_ret(nrn_send(c, s, a, 0, 16, n), -EINVAL);
	t_check_ret(nrn_recv(c, s, a, 4090, 16, 0), -EINVAL);
	{
		int src = -1;

		t_check_ret(nrn_recv_any(c, s, a, 0, 16, NULL), -EINVAL);
		t_check_ret(nrn_recv_any(c, s, a, 4090, 16, &src), -EINVAL);
		t_check_ret(nrn_recv_any(NULL, s, a, 0, 16, &src), -EINVAL);
		t_check(src == -1);
	}
	t_check_ret(nrn_barrier(NULL, s), -EINVAL);
	t_check_ret(nrn_barrier(c, NULL), -EINVAL);
	/* Rooted: a root among the ranks; reduce reduces what all-reduce does. */
	t_check_ret(nrn_reduce(c, s, a, 0, b, 0, 16, NISA_F32, NRN_REDUCE_SUM, n), -EINVAL);
	t_check_ret(nrn_reduce(c, s, a, 0, b, 0, 16, NISA_I32, NRN_REDUCE_SUM, 0), -EINVAL);
	t_check_ret(nrn_reduce(c, s, a, 0, a, 4, 16, NISA_F32, NRN_REDUCE_SUM, 0), -EINVAL);
	t_check_ret(nrn_gather(c, s, a, 0, b, 0, 16, NISA_F32, -1), -EINVAL);
	t_check_ret(nrn_gather(c, s, a, 0, NULL, 0, 16, NISA_F32, 0), -EINVAL);	/* the root's */
	t_check_ret(nrn_gather(c, s, a, 0, a, 0, 16, NISA_F32, 0), -EINVAL);	/* overlap */
	t_check_ret(nrn_scatter(c, s, NULL, 0, b, 0, 16, NISA_F32, 0), -EINVAL);
	t_check_ret(nrn_scatter(c, s, a, 0, b, 0, 4096, NISA_F32, 0), -EINVAL);
	{
		uint64_t cnt[1] = { 16 }, big[1] = { 2048 };

		t_check_ret(nrn_all_to_allv(c, s, a, 0, NULL, b, 0, cnt, NISA_F32), -EINVAL);
		t_check_ret(nrn_all_to_allv(c, s, a, 0, cnt, b, 0, NULL, NISA_F32), -EINVAL);
		t_check_ret(nrn_all_to_allv(c, s, a, 0, cnt, a, 0, cnt, NISA_F32), -EINVAL);
		t_check_ret(nrn_all_to_allv(c, s, a, 0, big, b, 0, cnt, NISA_F32), -EINVAL);
	}
	/* Nothing was issued: the stream has no error to report. */
	t_check_ret(nrn_stream_sync(s), 0);
	nrn_buffer_free(a);
	nrn_buffer_free(b);
	nrn_buffer_free(h);
}

struct t_late {
	struct nrn_comm *c;
	struct nrn_stream *s;
	struct nrn_buffer *buf;
	int sync_ret;
	double seconds;
};

/* The late rank issues the all-reduce after the others gave up. */
static void *t_late_rank(void *p)
{
	struct t_late *L = p;
	struct timespec pause = { .tv_sec = 3 };

	nanosleep(&pause, NULL);
	t_check_ret(nrn_all_reduce(L->c, L->s, L->buf, 0, L->buf, 0, 256, NISA_F32,
				   NRN_REDUCE_SUM), 0);
	L->sync_ret = nrn_stream_sync(L->s);
	return NULL;
}

static void *t_prompt_rank(void *p)
{
	struct t_late *L = p;
	double t0 = t_now();

	t_check_ret(nrn_all_reduce(L->c, L->s, L->buf, 0, L->buf, 0, 256, NISA_F32,
				   NRN_REDUCE_SUM), 0);
	L->sync_ret = nrn_stream_sync(L->s);
	L->seconds = t_now() - t0;
	return NULL;
}

struct t_init {
	struct nrn_device *dev;
	int rank, n;
	const struct nrn_comm_id *id;
	int64_t timeout_ns;
	struct nrn_comm *comm;
	int ret;
};

static void *t_init_rank(void *p)
{
	struct t_init *I = p;

	I->ret = nrn_comm_init_rank(I->dev, I->n, I->rank, I->id, I->timeout_ns, &I->comm);
	return NULL;
}

/* Every rank joins on its own thread; 0 when all did. */
static int t_join(struct nrn_device **devs, int n, int64_t timeout_ns,
		  struct nrn_comm **comms)
{
	struct t_init I[8];
	pthread_t th[8];
	struct nrn_comm_id id;
	int ret = nrn_comm_id_new(&id);

	for (int i = 0; i < n && !ret; i++) {
		I[i] = (struct t_init){ devs[i], i, n, &id, timeout_ns, NULL, 0 };
		pthread_create(&th[i], NULL, t_init_rank, &I[i]);
	}
	for (int i = 0; i < n && !ret; i++) {
		pthread_join(th[i], NULL);
		comms[i] = I[i].comm;
	}
	for (int i = 0; i < n && !ret; i++)
		ret = I[i].ret;
	return ret;
}

/* A rank that never joins; a rank that skips a collective (1 s timeout). */
static void t_no_show(struct nrn_device **devs, int n)
{
	struct nrn_comm *comms[8] = { NULL }, *lone = NULL;
	struct t_late L[8];
	pthread_t th[8];
	struct nrn_comm_id id;
	double t0;

	t_check_ret(nrn_comm_id_new(&id), 0);
	t0 = t_now();
	t_check_ret(nrn_comm_init_rank(devs[0], n, 0, &id, 500 * 1000 * 1000, &lone), -ETIMEDOUT);
	t_check(t_now() - t0 >= 0.45 && t_now() - t0 < 3);

	t_check_ret(t_join(devs, n, 1000 * 1000 * 1000, comms), 0);
	if (t_failures)
		return;
	for (int i = 0; i < n; i++) {
		L[i] = (struct t_late){ .c = comms[i], .sync_ret = 1 };
		t_check_ret(nrn_stream_create(devs[i], &L[i].s), 0);
		t_check_ret(nrn_buffer_alloc(devs[i], 1024, NRN_MEM_DEVICE, &L[i].buf), 0);
		pthread_create(&th[i], NULL, i == n - 1 ? t_late_rank : t_prompt_rank, &L[i]);
	}
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < n; i++) {
		/* The prompt ranks fail at the timeout (1 s), before the late one comes. */
		t_check_ret(L[i].sync_ret, -ETIMEDOUT);
		if (i < n - 1)
			t_check(L[i].seconds >= 0.9 && L[i].seconds < 2.9);
	}
	/* The communicator stays failed: at once, at the next sync. */
	t0 = t_now();
	t_check_ret(nrn_all_reduce(comms[0], L[0].s, L[0].buf, 0, L[0].buf, 0, 4, NISA_F32,
				   NRN_REDUCE_SUM), 0);
	t_check_ret(nrn_stream_sync(L[0].s), -ETIMEDOUT);
	t_check(t_now() - t0 < 0.5);
	/* The stream itself works on. */
	t_check_ret(nrn_stream_copy_buffer(L[0].s, L[0].buf, 512, L[0].buf, 0, 256), 0);
	t_check_ret(nrn_stream_sync(L[0].s), 0);
	for (int i = 0; i < n; i++) {
		nrn_buffer_free(L[i].buf);
		nrn_stream_destroy(L[i].s);
		nrn_comm_destroy(comms[i]);
	}
}

struct t_allv {
	struct nrn_comm *c;
	struct nrn_stream *s;
	struct nrn_buffer *a, *b;
	int rank, n, sync_ret;
};

/* Rank 0 sends rank 1 one element more than rank 1 expects. */
static void *t_allv_rank(void *p)
{
	struct t_allv *V = p;
	uint64_t sc[8], rc[8];

	for (int q = 0; q < V->n; q++)
		sc[q] = rc[q] = 4;
	if (V->rank == 0)
		sc[1] = 5;
	t_check_ret(nrn_all_to_allv(V->c, V->s, V->a, 0, sc, V->b, 0, rc, NISA_F32), 0);
	V->sync_ret = nrn_stream_sync(V->s);
	return NULL;
}

/* Mismatched all-to-allv counts fail every rank's stream, promptly. */
static void t_allv_mismatch(struct nrn_device **devs, int n)
{
	struct nrn_comm *comms[8] = { NULL };
	struct t_allv V[8];
	pthread_t th[8];
	double t0 = t_now();

	t_check_ret(t_join(devs, n, 5ll * 1000 * 1000 * 1000, comms), 0);
	if (t_failures)
		return;
	for (int i = 0; i < n; i++) {
		V[i] = (struct t_allv){ .c = comms[i], .rank = i, .n = n, .sync_ret = 1 };
		t_check_ret(nrn_stream_create(devs[i], &V[i].s), 0);
		V[i].a = t_buffer(devs[i], 4096);
		V[i].b = t_buffer(devs[i], 4096);
		pthread_create(&th[i], NULL, t_allv_rank, &V[i]);
	}
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < n; i++) {
		t_check_ret(V[i].sync_ret, -EINVAL);
		nrn_buffer_free(V[i].a);
		nrn_buffer_free(V[i].b);
		nrn_stream_destroy(V[i].s);
		nrn_comm_destroy(comms[i]);
	}
	t_check(t_now() - t0 < 4);
}

/* Ring of 4 or more: ranks 0 and 2 are not linked. */
static void t_no_link(struct nrn_device **devs, int n)
{
	struct nrn_comm *comms[8] = { NULL }, *pair[2] = { NULL };
	struct nrn_device *two[2] = { devs[0], devs[2] };
	struct nrn_stream *s;
	struct nrn_buffer *b = t_buffer(devs[0], 4096);

	t_check_ret(nrn_comm_init_all(devs, n, comms), 0);
	t_check_ret(nrn_stream_create(devs[0], &s), 0);
	if (comms[0]) {
		t_check_ret(nrn_send(comms[0], s, b, 0, 64, 2), -ENOLINK);
		t_check_ret(nrn_recv(comms[0], s, b, 0, 64, 2), -ENOLINK);
	}
	t_check_ret(nrn_stream_sync(s), 0);
	t_check_ret(nrn_comm_init_all(two, 2, pair), -EXDEV);
	for (int i = 0; i < n; i++)
		nrn_comm_destroy(comms[i]);
	nrn_stream_destroy(s);
	nrn_buffer_free(b);
}

/* A capturing stream cannot hold a collective (a graph replays alone). */
static void t_capture(struct nrn_comm *c, struct nrn_stream *s, struct nrn_device *dev)
{
	struct nrn_buffer *b = t_buffer(dev, 4096);
	struct nrn_capture *cap = NULL;

	t_check_ret(nrn_stream_begin_capture(s), 0);
	t_check_ret(nrn_all_reduce(c, s, b, 0, b, 0, 16, NISA_F32, NRN_REDUCE_SUM), -EBUSY);
	t_check_ret(nrn_stream_end_capture(s, &cap), -EBUSY);
	t_check(cap == NULL);
	nrn_buffer_free(b);
}

int main(void)
{
	struct nrn_device *devs[8];
	struct nrn_comm *comms[8];
	struct nrn_stream *s;
	struct nrn_device_info info;
	int n = nrn_device_count();

	if (n < 1)
		return T_EXIT_SKIP;
	if (n > 8)
		n = 8;
	for (int i = 0; i < n; i++)
		t_check_ret(nrn_device_open((unsigned int)i, &devs[i]), 0);
	t_check_ret(nrn_device_info(devs[0], &info), 0);
	/* Argument checks of the set-up. */
	t_check_ret(nrn_comm_init_all(devs, 0, comms), -EINVAL);
	t_check_ret(nrn_comm_init_rank(devs[0], 2, 2, NULL, -1, &comms[0]), -EINVAL);
	t_check_ret(nrn_comm_id_new(NULL), -EINVAL);
	t_check(nrn_comm_rank(NULL) == -EINVAL && nrn_comm_size(NULL) == -EINVAL);
	/* One rank alone needs no links: argument checks on it. */
	t_check_ret(nrn_comm_init_all(devs, 1, comms), 0);
	t_check_ret(nrn_stream_create(devs[0], &s), 0);
	t_bad_args(comms[0], s, devs[0]);
	t_capture(comms[0], s, devs[0]);
	nrn_stream_destroy(s);
	nrn_comm_destroy(comms[0]);
	if (n >= 2 && info.fabric_id) {
		t_no_show(devs, n);
		t_allv_mismatch(devs, n);
	}
	/* A ring (2 links per card) of 4 or more cards. */
	if (n >= 4 && info.fabric_id && info.num_links == 2)
		t_no_link(devs, n);
	for (int i = 0; i < n; i++)
		nrn_device_close(devs[i]);
	return t_exit();
}

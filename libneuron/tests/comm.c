// SPDX-License-Identifier: MIT
/*
 * Description: collectives across every card present (2, 3 or 4), the
 * ranks as threads of this process (nrn_comm_init_all) and then as forked
 * processes (nrn_comm_init_rank): every collective x f32/bf16/f16 x every
 * reduction against a CPU reference (t_comm.h: exact, AVG on a number of
 * ranks that is not a power of two within 1 ulp), in place and not, at
 * offsets, from 1 element to 64 MiB (NRN_COMM_TEST_FULL=1: to 256 MiB);
 * the rooted ones (reduce, gather, scatter) from every root; all-to-all
 * of unequal blocks (empty ones too); stream order (a kernel before and
 * after the collective); send/recv, and recv from any source.
 * As processes a subset (bf16, two sizes, 16 MiB): see t_rank_main().
 */
#include <errno.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t_comm.h"

#define MIB (1ull << 20)
#define NRN_COMM_TEST_RANKS 8

struct rank {
	int r, n;
	struct nrn_device *dev;
	struct nrn_comm *comm;
	struct nrn_stream *s;
	bool big;
};

static bool full;

static struct nrn_buffer *t_dev_buf(struct rank *R, uint64_t bytes)
{
	return t_buffer(R->dev, bytes < 64 ? 64 : bytes);
}

/* Write t_gen-derived values: @count elements at @off, value f(i). */
#define T_UPLOAD(R, buf, off, dt, count, expr) do {				\
	size_t es_ = t_esize(dt);						\
	char *h_ = malloc((count) * es_ + 1);					\
	for (uint64_t i = 0; i < (count); i++)					\
		t_store(dt, h_, i, (expr));					\
	t_check_ret(nrn_stream_copy_h2d((R)->s, buf, off, h_, (count) * es_), 0); \
	free(h_);								\
} while (0)

/* Compare @count elements at @off with expr (within 1 ulp if @approx). */
#define T_VERIFY(R, what, buf, off, dt, count, approx, expr) do {		\
	size_t es_ = t_esize(dt);						\
	char *h_ = malloc((count) * es_ + 1);					\
	unsigned int bad_ = 0;							\
	t_check_ret(nrn_stream_copy_d2h((R)->s, h_, buf, off, (count) * es_), 0); \
	for (uint64_t i = 0; i < (count); i++) {				\
		float w_ = (expr), g_ = t_load(dt, h_, i);			\
		if (!t_close(dt, g_, w_, approx) && bad_++ < 3)			\
			fprintf(stderr, "rank %d %s %s count %llu: [%llu] = %g, want %g\n", \
				(R)->r, what, t_dtype_name(dt),			\
				(unsigned long long)(count), (unsigned long long)i, \
				(double)g_, (double)w_);			\
	}									\
	t_check(bad_ == 0);							\
	free(h_);								\
} while (0)

/* Round @v to @dt, as the card stores it. */
static float t_rnd(enum nisa_dtype dt, float v)
{
	char tmp[4];

	t_store(dt, tmp, 0, v);
	return t_load(dt, tmp, 0);
}

static bool t_avg_approx(struct rank *R, enum nrn_reduce_op op)
{
	return op == NRN_REDUCE_AVG && (R->n & (R->n - 1));
}

static void t_all_reduce(struct rank *R, enum nisa_dtype dt, enum nrn_reduce_op op,
			 uint64_t count, bool in_place)
{
	uint64_t es = t_esize(dt), off = count > 1000 ? 0 : 128, bytes = count * es;
	struct nrn_buffer *a = t_dev_buf(R, bytes + off), *b = in_place ? a : t_dev_buf(R, bytes);
	int n = R->n;

	T_UPLOAD(R, a, off, dt, count, t_gen(op, R->r, i));
	if (!in_place)
		T_UPLOAD(R, b, 0, dt, count, 1234.0f);
	t_check_ret(nrn_all_reduce(R->comm, R->s, a, off, b, in_place ? off : 0, count, dt, op), 0);
	t_check_ret(nrn_stream_sync(R->s), 0);
	T_VERIFY(R, "all_reduce", b, in_place ? off : 0, dt, count, t_avg_approx(R, op),
		 t_ref(op, dt, n, i));
	nrn_buffer_free(a);
	if (!in_place)
		nrn_buffer_free(b);
}

static void t_reduce_scatter(struct rank *R, enum nisa_dtype dt, enum nrn_reduce_op op,
			     uint64_t count, bool in_place)
{
	uint64_t es = t_esize(dt), bytes = count * es, roff = in_place ? (uint64_t)R->r * bytes : 0;
	struct nrn_buffer *a = t_dev_buf(R, bytes * (uint64_t)R->n);
	struct nrn_buffer *b = in_place ? a : t_dev_buf(R, bytes);
	int n = R->n, r = R->r;

	T_UPLOAD(R, a, 0, dt, count * (uint64_t)n, t_gen(op, r, i));
	t_check_ret(nrn_reduce_scatter(R->comm, R->s, a, 0, b, roff, count, dt, op), 0);
	t_check_ret(nrn_stream_sync(R->s), 0);
	T_VERIFY(R, "reduce_scatter", b, roff, dt, count, t_avg_approx(R, op),
		 t_ref(op, dt, n, (uint64_t)r * count + i));
	nrn_buffer_free(a);
	if (!in_place)
		nrn_buffer_free(b);
}

static void t_all_gather(struct rank *R, enum nisa_dtype dt, uint64_t count, bool in_place)
{
	uint64_t es = t_esize(dt), bytes = count * es, soff = in_place ? (uint64_t)R->r * bytes : 0;
	struct nrn_buffer *b = t_dev_buf(R, bytes * (uint64_t)R->n);
	struct nrn_buffer *a = in_place ? b : t_dev_buf(R, bytes);
	int r = R->r, n = R->n;

	T_UPLOAD(R, a, soff, dt, count, t_gen(NRN_REDUCE_SUM, r, i));
	t_check_ret(nrn_all_gather(R->comm, R->s, a, soff, b, 0, count, dt), 0);
	t_check_ret(nrn_stream_sync(R->s), 0);
	T_VERIFY(R, "all_gather", b, 0, dt, count * (uint64_t)n, false,
		 t_rnd(dt, t_gen(NRN_REDUCE_SUM, (int)(i / count), i % count)));
	nrn_buffer_free(b);
	if (!in_place)
		nrn_buffer_free(a);
}

static void t_broadcast(struct rank *R, enum nisa_dtype dt, uint64_t count, int root)
{
	struct nrn_buffer *a = t_dev_buf(R, count * t_esize(dt) + 256);

	T_UPLOAD(R, a, 256, dt, count, t_gen(NRN_REDUCE_SUM, R->r, i));
	t_check_ret(nrn_broadcast(R->comm, R->s, a, 256, count, dt, root), 0);
	t_check_ret(nrn_stream_sync(R->s), 0);
	T_VERIFY(R, "broadcast", a, 256, dt, count, false,
		 t_rnd(dt, t_gen(NRN_REDUCE_SUM, root, i)));
	nrn_buffer_free(a);
}

static void t_all_to_all(struct rank *R, enum nisa_dtype dt, uint64_t count)
{
	uint64_t total = count * (uint64_t)R->n, es = t_esize(dt);
	struct nrn_buffer *a = t_dev_buf(R, total * es), *b = t_dev_buf(R, total * es);
	int r = R->r;

	T_UPLOAD(R, a, 0, dt, total, t_gen(NRN_REDUCE_SUM, r, i));
	t_check_ret(nrn_all_to_all(R->comm, R->s, a, 0, b, 0, count, dt), 0);
	t_check_ret(nrn_stream_sync(R->s), 0);
	/* Block q of ours is block r of rank q's send. */
	T_VERIFY(R, "all_to_all", b, 0, dt, total, false,
		 t_rnd(dt, t_gen(NRN_REDUCE_SUM, (int)(i / count),
				 (uint64_t)r * count + i % count)));
	nrn_buffer_free(a);
	nrn_buffer_free(b);
}

/* Reduce to @root; the other ranks' sends are left as they were. */
static void t_reduce(struct rank *R, enum nisa_dtype dt, enum nrn_reduce_op op,
		     uint64_t count, int root, bool in_place)
{
	uint64_t es = t_esize(dt), bytes = count * es;
	struct nrn_buffer *a = t_dev_buf(R, bytes + 64), *b = NULL;
	bool me = R->r == root;
	int n = R->n, r = R->r;

	T_UPLOAD(R, a, 64, dt, count, t_gen(op, r, i));
	if (me && !in_place)
		b = t_dev_buf(R, bytes);
	t_check_ret(nrn_reduce(R->comm, R->s, a, 64, in_place ? a : b, in_place ? 64 : 0,
			       count, dt, op, root), 0);
	t_check_ret(nrn_stream_sync(R->s), 0);
	if (me)
		T_VERIFY(R, "reduce", in_place ? a : b, in_place ? 64 : 0, dt, count,
			 t_avg_approx(R, op), t_ref(op, dt, n, i));
	else
		T_VERIFY(R, "reduce's send", a, 64, dt, count, false, t_rnd(dt, t_gen(op, r, i)));
	nrn_buffer_free(a);
	nrn_buffer_free(b);
}

/* Gather to @root: block q of its recv is rank q's send. */
static void t_gather(struct rank *R, enum nisa_dtype dt, uint64_t count, int root)
{
	uint64_t es = t_esize(dt), total = count * (uint64_t)R->n;
	struct nrn_buffer *a = t_dev_buf(R, count * es), *b = NULL;
	int r = R->r;

	T_UPLOAD(R, a, 0, dt, count, t_gen(NRN_REDUCE_SUM, r, i));
	if (r == root)
		b = t_dev_buf(R, total * es + 128);
	t_check_ret(nrn_gather(R->comm, R->s, a, 0, b, 128, count, dt, root), 0);
	t_check_ret(nrn_stream_sync(R->s), 0);
	if (r == root)
		T_VERIFY(R, "gather", b, 128, dt, total, false,
			 t_rnd(dt, t_gen(NRN_REDUCE_SUM, (int)(i / count), i % count)));
	nrn_buffer_free(a);
	nrn_buffer_free(b);
}

/* Scatter from @root: rank q's recv is block q of its send. */
static void t_scatter(struct rank *R, enum nisa_dtype dt, uint64_t count, int root)
{
	uint64_t es = t_esize(dt), total = count * (uint64_t)R->n;
	struct nrn_buffer *a = NULL, *b = t_dev_buf(R, count * es);
	int r = R->r;

	if (r == root) {
		a = t_dev_buf(R, total * es);
		T_UPLOAD(R, a, 0, dt, total, t_gen(NRN_REDUCE_SUM, root, i));
	}
	t_check_ret(nrn_scatter(R->comm, R->s, a, 0, b, 0, count, dt, root), 0);
	t_check_ret(nrn_stream_sync(R->s), 0);
	T_VERIFY(R, "scatter", b, 0, dt, count, false,
		 t_rnd(dt, t_gen(NRN_REDUCE_SUM, root, (uint64_t)r * count + i)));
	nrn_buffer_free(a);
	nrn_buffer_free(b);
}

/* Elements rank @S sends @D in t_all_to_allv: empty blocks, tiny and big. */
static uint64_t t_split(int S, int D, uint64_t scale)
{
	static const uint64_t f[] = { 0, 1, 5, 0, 1000, 3, 77 };

	return f[(unsigned int)(S * 3 + D * 5) % 7] * scale + (S == D ? 2 : 0);
}

/* Unequal all-to-all: S's send index e holds t_gen(SUM, S, e). */
static void t_all_to_allv(struct rank *R, enum nisa_dtype dt, uint64_t scale)
{
	uint64_t sc[NRN_COMM_TEST_RANKS], rc[NRN_COMM_TEST_RANKS], soff[NRN_COMM_TEST_RANKS];
	uint64_t es = t_esize(dt), ns = 0, nr = 0;
	int r = R->r, n = R->n;
	struct nrn_buffer *a, *b;
	char *h;

	for (int q = 0; q < n; q++) {
		uint64_t o = 0;

		sc[q] = t_split(r, q, scale);
		rc[q] = t_split(q, r, scale);
		/* Where q's block for us starts in q's send. */
		for (int d = 0; d < r; d++)
			o += t_split(q, d, scale);
		soff[q] = o;
		ns += sc[q];
		nr += rc[q];
	}
	a = t_dev_buf(R, ns * es);
	b = t_dev_buf(R, nr * es);
	T_UPLOAD(R, a, 0, dt, ns, t_gen(NRN_REDUCE_SUM, r, i));
	t_check_ret(nrn_all_to_allv(R->comm, R->s, a, 0, sc, b, 0, rc, dt), 0);
	t_check_ret(nrn_stream_sync(R->s), 0);
	h = malloc(nr * es + 1);
	t_check_ret(nrn_stream_copy_d2h(R->s, h, b, 0, nr * es), 0);
	for (int q = 0, bad = 0, o = 0; q < n; o += (int)rc[q], q++)
		for (uint64_t i = 0; i < rc[q]; i++) {
			float want = t_rnd(dt, t_gen(NRN_REDUCE_SUM, q, soff[q] + i));
			float got = t_load(dt, h, (uint64_t)o + i);

			if (got != want && bad++ < 3)
				fprintf(stderr, "rank %d all_to_allv %s scale %llu: from %d [%llu] = %g, want %g\n",
					r, t_dtype_name(dt), (unsigned long long)scale, q,
					(unsigned long long)i, (double)got, (double)want);
			t_check(got == want);
		}
	free(h);
	nrn_buffer_free(a);
	nrn_buffer_free(b);
}

/* A kernel before (send = rank + 1) and after (recv *= 2) the all-reduce. */
static void t_stream_order(struct rank *R)
{
	uint64_t count = 1 << 20;
	struct nrn_buffer *a = t_dev_buf(R, count * 4), *b = t_dev_buf(R, count * 4);
	struct nrn_tensor_desc ta, tb;
	int64_t shape = (int64_t)count;
	int n = R->n;

	nrn_tensor_contiguous(&ta, a, 0, NISA_F32, 1, &shape);
	nrn_tensor_contiguous(&tb, b, 0, NISA_F32, 1, &shape);
	t_check_ret(nrn_op_fill(R->s, &ta, R->r + 1), 0);
	t_check_ret(nrn_all_reduce(R->comm, R->s, a, 0, b, 0, count, NISA_F32, NRN_REDUCE_SUM), 0);
	t_check_ret(nrn_op_binary_scalar(R->s, NISA_BIN_MUL, &tb, &tb, 2, 1, 0), 0);
	T_VERIFY(R, "ordered all_reduce", b, 0, NISA_F32, count, false,
		 (float)(n * (n + 1)));
	nrn_buffer_free(a);
	nrn_buffer_free(b);
}

/* Rank 0 sends to rank 1 (ring neighbours: always linked). */
static void t_send_recv(struct rank *R)
{
	uint64_t count = 3 * MIB + 5;
	struct nrn_buffer *a = t_dev_buf(R, count * 4);

	T_UPLOAD(R, a, 0, NISA_F32, count, t_gen(NRN_REDUCE_SUM, R->r, i));
	if (R->r == 0)
		t_check_ret(nrn_send(R->comm, R->s, a, 0, count * 4, 1), 0);
	else if (R->r == 1)
		t_check_ret(nrn_recv(R->comm, R->s, a, 0, count * 4, 0), 0);
	t_check_ret(nrn_barrier(R->comm, R->s), 0);
	t_check_ret(nrn_stream_sync(R->s), 0);
	T_VERIFY(R, "send/recv", a, 0, NISA_F32, count, false,
		 t_gen(NRN_REDUCE_SUM, R->r == 1 ? 0 : R->r, i));
	nrn_buffer_free(a);
}

/*
 * Receive from any source: ranks 1 and n - 1 (rank 0's ring neighbours)
 * each send rank 0 their own data, rank 0 takes them in whichever order
 * they come, each into the block of the rank nrn_recv_any() names.
 */
static void t_recv_any(struct rank *R)
{
	uint64_t count = MIB + 3;
	int senders = R->n == 2 ? 1 : 2, got[2] = { -1, -1 };
	struct nrn_buffer *a = t_dev_buf(R, count * 4 * 2);

	T_UPLOAD(R, a, 0, NISA_F32, count, t_gen(NRN_REDUCE_PROD, R->r, i));
	if (R->r == 0) {
		for (int k = 0; k < senders; k++) {
			int src = -1;

			t_check_ret(nrn_recv_any(R->comm, R->s, a, (uint64_t)k * count * 4,
						 count * 4, &src), 0);
			got[k] = src;
		}
		/* each sender named once */
		t_check(senders == 1 ? got[0] == 1 :
			(got[0] == 1 && got[1] == R->n - 1) || (got[0] == R->n - 1 && got[1] == 1));
	} else if (R->r == 1 || R->r == R->n - 1) {
		t_check_ret(nrn_send(R->comm, R->s, a, 0, count * 4, 0), 0);
	}
	t_check_ret(nrn_barrier(R->comm, R->s), 0);
	t_check_ret(nrn_stream_sync(R->s), 0);
	for (int k = 0; R->r == 0 && k < senders; k++)
		T_VERIFY(R, "recv_any", a, (uint64_t)k * count * 4, NISA_F32, count, false,
			 t_gen(NRN_REDUCE_PROD, got[k] < 0 ? 0 : got[k], i));
	nrn_buffer_free(a);
}

/*
 * Threads: the whole matrix and the large sizes. Processes (the same code
 * across address spaces: fd passing, separate files): bf16, two sizes,
 * 16 MiB -- the run stays within run-tests' 300 s on 4 cards under TCG.
 */
static void *t_rank_main(void *p)
{
	static const enum nisa_dtype dts[] = { NISA_F32, NISA_BF16, NISA_F16 };
	static const uint64_t counts[] = { 1, 3, 1000, 70001 };
	struct rank *R = p;

	/*
	 * 256 MiB first, on fresh cards: freed buffers a peer imported may
	 * keep their memory (docs/collectives.md "Limits").
	 */
	if (full && R->big)
		t_all_reduce(R, NISA_F32, NRN_REDUCE_SUM, 64 * MIB, true);
	for (unsigned int d = R->big ? 0 : 1; d < (R->big ? 3u : 2u); d++) {
		enum nisa_dtype dt = dts[d];

		for (int op = NRN_REDUCE_SUM; op <= NRN_REDUCE_AVG; op++) {
			for (unsigned int k = R->big ? 0 : 1; k < 4; k += R->big ? 1 : 2) {
				t_all_reduce(R, dt, op, counts[k], k == 1);
				t_reduce_scatter(R, dt, op, counts[k], k == 2);
			}
		}
		for (unsigned int k = R->big ? 0 : 1; k < 4; k += R->big ? 1 : 2) {
			int root = (int)(counts[k] % (uint64_t)R->n);

			t_all_gather(R, dt, counts[k], k == 2);
			t_broadcast(R, dt, counts[k], root);
			t_all_to_all(R, dt, counts[k]);
			t_reduce(R, dt, (enum nrn_reduce_op)(k % 5), counts[k], root, k == 1);
			t_gather(R, dt, counts[k], R->n - 1 - root);
			t_scatter(R, dt, counts[k], root);
		}
		t_all_to_allv(R, dt, 1);
	}
	t_stream_order(R);
	t_send_recv(R);
	t_recv_any(R);
	/* 64 MiB (and 256 MiB with NRN_COMM_TEST_FULL=1). */
	t_all_reduce(R, NISA_F32, NRN_REDUCE_SUM, (R->big ? 16 : 4) * MIB, false);
	if (R->big) {
		t_all_reduce(R, NISA_BF16, NRN_REDUCE_AVG, 32 * MIB, true);
		t_reduce_scatter(R, NISA_F32, NRN_REDUCE_MAX, 16 * MIB / (uint64_t)R->n, false);
		t_all_gather(R, NISA_F16, 32 * MIB / (uint64_t)R->n, false);
		t_broadcast(R, NISA_F32, 16 * MIB, R->n - 1);
		t_all_to_all(R, NISA_F32, 16 * MIB / (uint64_t)R->n);
		/* Pieces of 4 MiB, forwarded where two cards have no link. */
		t_reduce(R, NISA_F32, NRN_REDUCE_SUM, 5 * MIB, R->n - 1, false);
		t_gather(R, NISA_BF16, 3 * MIB, 0);
		t_scatter(R, NISA_F32, 3 * MIB, 1);
		t_all_to_allv(R, NISA_F32, 1500);
	}
	return NULL;
}

static void t_threads(int n)
{
	struct nrn_device *devs[8];
	struct nrn_comm *comms[8];
	struct rank ranks[8];
	pthread_t th[8];

	for (int i = 0; i < n; i++)
		t_check_ret(nrn_device_open((unsigned int)i, &devs[i]), 0);
	t_check_ret(nrn_comm_init_all(devs, n, comms), 0);
	if (t_failures)
		return;
	for (int i = 0; i < n; i++) {
		ranks[i] = (struct rank){ .r = i, .n = n, .dev = devs[i], .comm = comms[i],
					  .big = true };
		t_check(nrn_comm_rank(comms[i]) == i && nrn_comm_size(comms[i]) == n);
		t_check_ret(nrn_stream_create(devs[i], &ranks[i].s), 0);
		pthread_create(&th[i], NULL, t_rank_main, &ranks[i]);
	}
	for (int i = 0; i < n; i++) {
		pthread_join(th[i], NULL);
		nrn_stream_destroy(ranks[i].s);
		nrn_comm_destroy(comms[i]);
		nrn_device_close(devs[i]);
	}
}

static void t_processes(int n)
{
	struct nrn_comm_id id;
	pid_t pids[8];
	int status;

	t_check_ret(nrn_comm_id_new(&id), 0);
	fflush(NULL);
	for (int i = 0; i < n; i++) {
		pids[i] = fork();
		if (pids[i] == 0) {
			struct rank R = { .r = i, .n = n };

			t_failures = 0;
			t_check_ret(nrn_device_open((unsigned int)i, &R.dev), 0);
			t_check_ret(nrn_comm_init_rank(R.dev, n, i, &id, -1, &R.comm), 0);
			t_check_ret(nrn_stream_create(R.dev, &R.s), 0);
			if (!t_failures)
				t_rank_main(&R);
			nrn_stream_destroy(R.s);
			nrn_comm_destroy(R.comm);
			nrn_device_close(R.dev);
			_exit(t_exit());
		}
	}
	for (int i = 0; i < n; i++) {
		t_check(waitpid(pids[i], &status, 0) == pids[i]);
		t_check(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
}

int main(void)
{
	struct nrn_device *dev = t_open_device();
	struct nrn_device_info info;
	int n = nrn_device_count();

	full = getenv("NRN_COMM_TEST_FULL") && atoi(getenv("NRN_COMM_TEST_FULL"));
	t_check_ret(nrn_device_info(dev, &info), 0);
	nrn_device_close(dev);
	if (n < 2 || !info.fabric_id) {
		fprintf(stderr, "%d card(s), fabric %u: collectives need 2 linked cards: skipped\n",
			n, info.fabric_id);
		return T_EXIT_SKIP;
	}
	if (n > 8)
		n = 8;
	printf("# %d cards, fabric %u, %u links\n", n, info.fabric_id, info.num_links);
	t_threads(n);
	printf("# threads: %s\n", t_failures ? "FAILED" : "ok");
	if (!t_failures) {
		t_processes(n);
		printf("# processes: %s\n", t_failures ? "FAILED" : "ok");
	}
	return t_exit();
}

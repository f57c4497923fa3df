// SPDX-License-Identifier: MIT
/*
 * Description: device memory of buffers freed after they took part in
 * collectives comes back (docs/collectives.md "Receive buffers"). Every
 * card present (2 to 4) is a rank, as threads and then as processes; each
 * rank, several times over: allocate, all-reduce (in place, then into a
 * separate receive buffer), check a few results, free the buffers, then a
 * barrier -- after which the card's free memory must equal its value
 * before the first allocation. A peer's import of a receive buffer keeps
 * its memory allocated: the owner names the freed buffer in its next
 * message to that peer (the barrier's) and the peer drops the import
 * before its part of the barrier is issued, so the memory is back when the
 * owner's barrier has completed.
 *
 * The card's free memory is the figure compared, so no other process may
 * use the cards meanwhile: one that does is named and the test fails (it
 * must run alone -- `make check` runs it with comm-unplug, after the rest).
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t_comm.h"

#define MIB (1ull << 20)
#define ITERS 3
#define BYTES (16 * MIB)
#define CHECKED 256	/* elements uploaded and verified */
#define T_MAX_RANKS 4

struct rank {
	int r, n;
	struct nrn_device *dev;
	struct nrn_comm *comm;
	struct nrn_stream *s;
	const char *mode;
};

static pid_t t_main_pid;

/*
 * Another process with a card open (the test's own: this process and the
 * ranks it forked): named on stderr. Return: true when there is one.
 */
static bool t_foreign_users(void)
{
	DIR *proc = opendir("/proc"), *fds;
	struct dirent *p, *f;
	bool found = false;

	if (!proc)
		return false;
	while ((p = readdir(proc))) {
		char path[PATH_MAX], link[64], stat[512];
		pid_t pid = (pid_t)atoi(p->d_name);
		FILE *st;
		int ppid = 0;

		if (pid <= 0 || pid == t_main_pid)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/stat", pid);
		st = fopen(path, "r");
		if (st) {
			if (fgets(stat, sizeof(stat), st) && strrchr(stat, ')'))
				sscanf(strrchr(stat, ')') + 1, " %*c %d", &ppid);
			fclose(st);
		}
		if (ppid == t_main_pid)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/fd", pid);
		fds = opendir(path);
		while (fds && (f = readdir(fds))) {
			ssize_t n;

			snprintf(path, sizeof(path), "/proc/%d/fd/%s", pid, f->d_name);
			n = readlink(path, link, sizeof(link) - 1);
			if (n > 0 && (link[n] = 0, !strncmp(link, "/dev/accel/", 11))) {
				fprintf(stderr, "process %d has %s open: this test compares the "
					"cards' free memory and needs them to itself\n", pid, link);
				found = true;
				break;
			}
		}
		if (fds)
			closedir(fds);
	}
	closedir(proc);
	return found;
}

static uint64_t t_mem_free(struct rank *R)
{
	struct nrn_device_info info;

	t_check_ret(nrn_device_info(R->dev, &info), 0);
	return info.mem_free;
}

/* all-reduce SUM of @count f32 from @send into @recv; checks CHECKED. */
static void t_reduce(struct rank *R, struct nrn_buffer *send, struct nrn_buffer *recv,
		     uint64_t count)
{
	float h[CHECKED];
	unsigned int bad = 0;

	for (unsigned int i = 0; i < CHECKED; i++)
		h[i] = t_gen(NRN_REDUCE_SUM, R->r, i);
	t_check_ret(nrn_stream_copy_h2d(R->s, send, 0, h, sizeof(h)), 0);
	t_check_ret(nrn_all_reduce(R->comm, R->s, send, 0, recv, 0, count, NISA_F32,
				   NRN_REDUCE_SUM), 0);
	t_check_ret(nrn_stream_copy_d2h(R->s, h, recv, 0, sizeof(h)), 0);
	t_check_ret(nrn_stream_sync(R->s), 0);
	for (unsigned int i = 0; i < CHECKED; i++)
		if (h[i] != t_ref(NRN_REDUCE_SUM, NISA_F32, R->n, i) && bad++ < 3)
			fprintf(stderr, "%s rank %d: [%u] = %g, want %g\n", R->mode, R->r, i,
				(double)h[i], (double)t_ref(NRN_REDUCE_SUM, NISA_F32, R->n, i));
	t_check(bad == 0);
}

static void t_rank_run(struct rank *R)
{
	uint64_t before, after;

	t_check_ret(nrn_stream_create(R->dev, &R->s), 0);
	if (!R->s)
		return;
	t_check_ret(nrn_barrier(R->comm, R->s), 0);
	t_check_ret(nrn_stream_sync(R->s), 0);
	before = t_mem_free(R);
	for (int it = 0; it < ITERS; it++) {
		struct nrn_buffer *send = t_buffer(R->dev, BYTES), *recv = send;

		if (it % 2)
			recv = t_buffer(R->dev, BYTES);
		if (!send || !recv)
			break;
		t_reduce(R, send, recv, BYTES / 4);
		if (recv != send)
			nrn_buffer_free(recv);
		nrn_buffer_free(send);
		t_check_ret(nrn_barrier(R->comm, R->s), 0);
		t_check_ret(nrn_stream_sync(R->s), 0);
		after = t_mem_free(R);
		if (after != before && t_foreign_users())
			t_check(!"the cards were used by another process");
		else if (after != before)
			fprintf(stderr, "%s rank %d, round %d: %llu bytes still allocated after "
				"the barrier\n", R->mode, R->r, it,
				(unsigned long long)(before - after));
		t_check(after == before);
	}
	nrn_stream_destroy(R->s);
}

static void *t_thread(void *p)
{
	t_rank_run(p);
	return NULL;
}

static void t_threads(int n)
{
	struct nrn_device *devs[T_MAX_RANKS];
	struct nrn_comm *comms[T_MAX_RANKS];
	struct rank R[T_MAX_RANKS];
	pthread_t th[T_MAX_RANKS];

	for (int i = 0; i < n; i++)
		t_check_ret(nrn_device_open((unsigned int)i, &devs[i]), 0);
	t_check_ret(nrn_comm_init_all(devs, n, comms), 0);
	if (t_failures)
		return;
	for (int i = 0; i < n; i++) {
		R[i] = (struct rank){ .r = i, .n = n, .dev = devs[i], .comm = comms[i],
				      .mode = "threads" };
		t_check(pthread_create(&th[i], NULL, t_thread, &R[i]) == 0);
	}
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < n; i++) {
		nrn_comm_destroy(comms[i]);
		nrn_device_close(devs[i]);
	}
}

static int t_process(int r, int n, const struct nrn_comm_id *id)
{
	struct rank R = { .r = r, .n = n, .mode = "processes" };

	if (nrn_device_open((unsigned int)r, &R.dev) ||
	    nrn_comm_init_rank(R.dev, n, r, id, -1, &R.comm))
		return 2;
	t_rank_run(&R);
	nrn_comm_destroy(R.comm);
	nrn_device_close(R.dev);
	return t_exit();
}

static void t_processes(int n)
{
	struct nrn_comm_id id;
	int status;

	t_check_ret(nrn_comm_id_new(&id), 0);
	fflush(NULL);
	for (int i = 0; i < n; i++)
		if (!fork())
			_exit(t_process(i, n, &id));
	for (int i = 0; i < n; i++) {
		t_check(wait(&status) > 0);
		t_check(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
}

int main(void)
{
	struct nrn_device *dev;
	struct nrn_device_info info;
	int n = nrn_device_count();

	if (n < 2)
		return T_EXIT_SKIP;
	if (n > T_MAX_RANKS)
		n = T_MAX_RANKS;
	t_check_ret(nrn_device_open(0, &dev), 0);
	t_check_ret(nrn_device_info(dev, &info), 0);
	nrn_device_close(dev);
	if (!info.fabric_id) {
		fprintf(stderr, "cards not linked: skipped\n");
		return T_EXIT_SKIP;
	}
	t_main_pid = getpid();
	if (t_foreign_users())
		return T_EXIT_FAIL;
	t_threads(n);
	t_processes(n);
	return t_exit();
}

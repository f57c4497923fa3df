// SPDX-License-Identifier: MIT
/*
 * Description: device memory of buffers freed after they took part in
 * collectives comes back (docs/collectives.md "Receive buffers and their
 * memory"). Every
 * card present (2 to 4) is a rank, as threads and then as processes; each
 * rank, several times over: allocate, all-reduce (in place, then into a
 * separate receive buffer), check a few results, free the buffers, then a
 * barrier -- after which the card's free memory must equal its value
 * before the first allocation. A peer's import of a receive buffer keeps
 * its memory allocated: the owner names the freed buffer in its next
 * message to that peer (the barrier's) and the peer drops the import
 * before its part of the barrier is issued; the driver frees the completed
 * jobs that still name a buffer when its last handle closes. So the memory
 * is back when the owner's barrier has completed (before, it came back
 * 10-20 ms later: completed jobs held the buffers until reaped).
 *
 * The card's free memory is the figure compared: a card that another
 * process has open (other tests running beside this one) is not
 * compared -- named on stderr -- but the collectives still run on it; at
 * least one card must be compared, else the test fails.
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
	char pci[16];
	bool compared;		/* its card's free memory was compared */
};

static pid_t t_main_pid;

/* Is /dev/accel/accel<minor> the card at PCI address @pci? */
static bool t_minor_is(const char *minor, const char *pci)
{
	char path[96], target[PATH_MAX];
	ssize_t n;

	snprintf(path, sizeof(path), "/sys/class/accel/accel%s/device", minor);
	n = readlink(path, target, sizeof(target) - 1);
	if (n <= 0)
		return false;
	target[n] = 0;
	return strrchr(target, '/') && !strcmp(strrchr(target, '/') + 1, pci);
}

/*
 * Does a process other than the test's own (this one and the ranks it
 * forked) have the card at @pci open? Named on stderr.
 */
static bool t_card_used(const char *pci)
{
	DIR *proc = opendir("/proc"), *fds;
	struct dirent *p, *f;
	bool found = false;

	while (proc && !found && (p = readdir(proc))) {
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
		while (fds && !found && (f = readdir(fds))) {
			ssize_t n;

			snprintf(path, sizeof(path), "/proc/%d/fd/%s", pid, f->d_name);
			n = readlink(path, link, sizeof(link) - 1);
			if (n <= 11)
				continue;
			link[n] = 0;
			found = !strncmp(link, "/dev/accel/accel", 16) && t_minor_is(link + 16, pci);
			if (found)
				fprintf(stderr, "# card %s is open in process %d too: its free "
					"memory is not compared\n", pci, pid);
		}
		if (fds)
			closedir(fds);
	}
	if (proc)
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
	struct nrn_device_info info;
	uint64_t before, after;
	bool alone;

	t_check_ret(nrn_device_info(R->dev, &info), 0);
	memcpy(R->pci, info.pci_address, sizeof(R->pci));
	t_check_ret(nrn_stream_create(R->dev, &R->s), 0);
	if (!R->s)
		return;
	t_check_ret(nrn_barrier(R->comm, R->s), 0);
	t_check_ret(nrn_stream_sync(R->s), 0);
	alone = !t_card_used(R->pci);
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
		alone = alone && !t_card_used(R->pci);
		if (!alone)
			continue;
		if (after != before)
			fprintf(stderr, "%s rank %d, round %d: %llu bytes still allocated after "
				"the barrier\n", R->mode, R->r, it,
				(unsigned long long)(before - after));
		t_check(after == before);
	}
	R->compared = alone;
	nrn_stream_destroy(R->s);
}

static void *t_thread(void *p)
{
	t_rank_run(p);
	return NULL;
}

/* Return: the number of cards whose free memory was compared. */
static int t_threads(int n)
{
	int compared = 0;

	struct nrn_device *devs[T_MAX_RANKS];
	struct nrn_comm *comms[T_MAX_RANKS];
	struct rank R[T_MAX_RANKS];
	pthread_t th[T_MAX_RANKS];

	for (int i = 0; i < n; i++)
		t_check_ret(nrn_device_open((unsigned int)i, &devs[i]), 0);
	t_check_ret(nrn_comm_init_all(devs, n, comms), 0);
	if (t_failures)
		return 0;
	for (int i = 0; i < n; i++) {
		R[i] = (struct rank){ .r = i, .n = n, .dev = devs[i], .comm = comms[i],
				      .mode = "threads" };
		t_check(pthread_create(&th[i], NULL, t_thread, &R[i]) == 0);
	}
	for (int i = 0; i < n; i++) {
		pthread_join(th[i], NULL);
		compared += R[i].compared;
	}
	for (int i = 0; i < n; i++) {
		nrn_comm_destroy(comms[i]);
		nrn_device_close(devs[i]);
	}
	return compared;
}

static int t_process(int r, int n, const struct nrn_comm_id *id)
{
	struct rank R = { .r = r, .n = n, .mode = "processes" };

	t_failures = 0;		/* the parent's, counted there */
	if (nrn_device_open((unsigned int)r, &R.dev) ||
	    nrn_comm_init_rank(R.dev, n, r, id, -1, &R.comm))
		return 2;
	t_rank_run(&R);
	nrn_comm_destroy(R.comm);
	nrn_device_close(R.dev);
	if (t_failures)
		return 1;
	return R.compared ? 0 : 3;
}

/* Return: the number of cards whose free memory was compared. */
static int t_processes(int n)
{
	struct nrn_comm_id id;
	int status, compared = 0;

	t_check_ret(nrn_comm_id_new(&id), 0);
	fflush(NULL);
	for (int i = 0; i < n; i++)
		if (!fork())
			_exit(t_process(i, n, &id));
	for (int i = 0; i < n; i++) {
		t_check(wait(&status) > 0);
		t_check(WIFEXITED(status) &&
			(WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == 3));
		compared += WIFEXITED(status) && WEXITSTATUS(status) == 0;
	}
	return compared;
}

int main(void)
{
	struct nrn_device *dev;
	struct nrn_device_info info;
	int n = nrn_device_count(), compared;

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
	/* A card another process uses is not compared; one card at least. */
	compared = t_threads(n);
	printf("# threads: free memory compared on %d of %d cards\n", compared, n);
	t_check(compared > 0);
	compared = t_processes(n);
	printf("# processes: free memory compared on %d of %d cards\n", compared, n);
	t_check(compared > 0);
	return t_exit();
}

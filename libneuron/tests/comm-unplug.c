// SPDX-License-Identifier: MIT
/*
 * Description: a card removed (sysfs PCI remove) while every rank runs
 * all-reduces in a loop: each rank's collective ends with an error
 * (-ENODEV, -ETIMEDOUT, or another failure of the card/peer) within a
 * bounded time -- no rank hangs -- then the card comes back (bus rescan)
 * and a new communicator over all cards works. Ranks are processes, as
 * torchrun runs them; the last card is removed.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "t_comm.h"

#define COUNT (4u << 20)	/* 16 MiB of f32 per all-reduce */

static double t_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int t_write(const char *path)
{
	int fd = open(path, O_WRONLY), ok;

	if (fd < 0)
		return -errno;
	ok = write(fd, "1", 1) == 1;
	close(fd);
	return ok ? 0 : -EIO;
}

/* A rank: all-reduce until a sync fails; exit 0 when it failed as expected. */
static int t_rank(int r, int n, const struct nrn_comm_id *id, int ready_fd)
{
	struct nrn_device *dev;
	struct nrn_comm *c;
	struct nrn_stream *s;
	struct nrn_buffer *b;
	int ret, iters = 0;

	if (nrn_device_open((unsigned int)r, &dev) ||
	    nrn_comm_init_rank(dev, n, r, id, 3ll * 1000 * 1000 * 1000, &c) ||
	    nrn_stream_create(dev, &s) ||
	    nrn_buffer_alloc(dev, COUNT * 4, NRN_MEM_DEVICE, &b))
		return 2;
	for (;;) {
		ret = nrn_all_reduce(c, s, b, 0, b, 0, COUNT, NISA_F32, NRN_REDUCE_SUM);
		if (!ret)
			ret = nrn_stream_sync(s);
		if (ret)
			break;
		if (++iters == 2 && write(ready_fd, "r", 1) != 1)
			return 3;
	}
	fprintf(stderr, "rank %d: after %d all-reduces: %s (%d)\n", r, iters,
		nrn_strerror(ret), ret);
	/* Teardown must not hang either (the parent's clock runs). */
	nrn_buffer_free(b);
	nrn_stream_destroy(s);
	nrn_comm_destroy(c);
	nrn_device_close(dev);
	return ret == -ENODEV || ret == -ETIMEDOUT || ret == -EIO ||
	       ret == -ECONNRESET || ret == -ECANCELED ? 0 : 4;
}

int main(void)
{
	struct nrn_device *dev;
	struct nrn_device_info info;
	struct nrn_comm_id id;
	char path[128], c;
	pid_t pids[8];
	int n = nrn_device_count(), pipefd[2], status, left;
	double t0;

	if (n < 2)
		return T_EXIT_SKIP;
	if (n > 8)
		n = 8;
	t_check_ret(nrn_device_open((unsigned int)(n - 1), &dev), 0);
	t_check_ret(nrn_device_info(dev, &info), 0);
	nrn_device_close(dev);
	if (!info.fabric_id) {
		fprintf(stderr, "cards not linked: skipped\n");
		return T_EXIT_SKIP;
	}
	t_check_ret(nrn_comm_id_new(&id), 0);
	t_check(pipe(pipefd) == 0);
	fflush(NULL);
	for (int i = 0; i < n; i++) {
		pids[i] = fork();
		if (!pids[i])
			_exit(t_rank(i, n, &id, pipefd[1]));
	}
	/* Every rank has done two all-reduces: the next ones are in flight. */
	for (int i = 0; i < n; i++)
		t_check(read(pipefd[0], &c, 1) == 1);
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/remove", info.pci_address);
	t0 = t_now();
	t_check_ret(t_write(path), 0);
	/* Bounded: the comm timeout (3 s) and teardown, well within 30 s. */
	for (left = n; left && t_now() - t0 < 30;) {
		pid_t p = waitpid(-1, &status, WNOHANG);

		if (p > 0) {
			t_check(WIFEXITED(status) && WEXITSTATUS(status) == 0);
			left--;
		} else {
			usleep(50 * 1000);
		}
	}
	printf("# all ranks ended %.2f s after the removal\n", t_now() - t0);
	t_check(left == 0);
	for (int i = 0; left && i < n; i++)
		kill(pids[i], SIGKILL);
	while (wait(NULL) > 0)
		;
	/* Back on the bus, and the cards work together again. */
	t_check_ret(t_write("/sys/bus/pci/rescan"), 0);
	for (int i = 0; i < 100 && nrn_device_count() < n; i++)
		usleep(100 * 1000);
	t_check(nrn_device_count() == n);
	if (!t_failures) {
		struct nrn_device *devs[8];
		struct nrn_comm *comms[8];

		for (int i = 0; i < n; i++)
			t_check_ret(nrn_device_open((unsigned int)i, &devs[i]), 0);
		t_check_ret(nrn_comm_init_all(devs, n, comms), 0);
		for (int i = 0; i < n && !t_failures; i++)
			nrn_comm_destroy(comms[i]);
		for (int i = 0; i < n; i++)
			nrn_device_close(devs[i]);
	}
	return t_exit();
}

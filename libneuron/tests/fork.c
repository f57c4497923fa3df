// SPDX-License-Identifier: MIT
/*
 * Description: fork() without exec. A child of a process with no device
 * open is not "forked" (nrn_forked() 0). A child forked after the parent
 * opened the card gets -EBADFD at once from every call on the parent's
 * objects -- even a stream whose lock a parent thread held at the fork --
 * and its frees close nothing of the parent's; a device the child opens
 * itself works; the parent's buffer, stream and device still work after.
 */
#include <errno.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"
#include "t_helpers.h"

#define LEN 8192

/* Run @child in a forked process with a 20 s alarm; its exit status. */
static int in_child(int (*child)(void *), void *arg)
{
	int status = 0;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		alarm(20); /* a hang is a failure, not a stuck test */
		_exit(child(arg));
	}
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	if (WIFSIGNALED(status)) {
		fprintf(stderr, "child killed by signal %d\n", WTERMSIG(status));
		return -1;
	}
	return WEXITSTATUS(status);
}

static int child_unopened(void *arg)
{
	(void)arg;
	t_check(nrn_forked() == 0);
	return t_exit();
}

struct parent_objs {
	struct nrn_device *dev;
	struct nrn_buffer *buf;
	struct nrn_stream *stream;
	unsigned char *data;
};

static int child_inherited(void *arg)
{
	struct parent_objs *p = arg;
	unsigned char *back = malloc(LEN);
	struct nrn_buffer *b = NULL;
	struct nrn_stream *s = NULL;
	struct nrn_event *ev = NULL;
	struct nrn_device_info info;
	struct nrn_device *own;
	void *map;
	int fd;

	t_check(nrn_forked() == 1);
	/* The parent's objects: refused, without waiting for the held lock. */
	t_check_ret(nrn_stream_sync(p->stream), -EBADFD);
	t_check_ret(nrn_stream_copy_h2d(p->stream, p->buf, 0, p->data, LEN), -EBADFD);
	t_check_ret(nrn_copy_d2h(back, p->buf, 0, LEN), -EBADFD);
	t_check_ret(nrn_buffer_alloc(p->dev, 4096, NRN_MEM_DEVICE, &b), -EBADFD);
	t_check_ret(nrn_buffer_map(p->buf, &map), -EBADFD);
	t_check_ret(nrn_buffer_export(p->buf, &fd), -EBADFD);
	t_check_ret(nrn_stream_create(p->dev, &s), -EBADFD);
	t_check_ret(nrn_event_create(p->dev, &ev), -EBADFD);
	t_check_ret(nrn_device_info(p->dev, &info), -EBADFD);
	t_check(strstr(nrn_strerror(-EBADFD), "fork") != NULL);
	/* Frees release nothing of the parent's (the parent checks). */
	nrn_buffer_free(p->buf);
	nrn_stream_destroy(p->stream);
	nrn_device_close(p->dev);

	/* A device of its own works. */
	t_check_ret(nrn_device_open(0, &own), 0);
	b = t_buffer(own, LEN);
	if (b) {
		memset(back, 0, LEN);
		t_check_ret(nrn_copy_h2d(b, 0, p->data, LEN), 0);
		t_check_ret(nrn_copy_d2h(back, b, 0, LEN), 0);
		t_check(memcmp(back, p->data, LEN) == 0);
		nrn_buffer_free(b);
	}
	nrn_device_close(own);
	free(back);
	return t_exit();
}

int main(void)
{
	struct parent_objs p = { 0 };
	unsigned char *back = malloc(LEN);

	if (nrn_device_count() < 1) {
		fprintf(stderr, "no neuron device: skipped\n");
		return T_EXIT_SKIP;
	}
	t_check(nrn_forked() == 0);
	t_check_ret(in_child(child_unopened, NULL), 0);

	p.dev = t_open_device();
	p.data = malloc(LEN);
	t_fill(p.data, LEN, 7);
	p.buf = t_buffer(p.dev, LEN);
	t_check_ret(nrn_stream_create(p.dev, &p.stream), 0);
	if (!p.buf || !p.stream)
		return T_EXIT_FAIL;
	t_check_ret(nrn_stream_copy_h2d(p.stream, p.buf, 0, p.data, LEN), 0);
	t_check_ret(nrn_stream_sync(p.stream), 0);

	/* As if another thread were inside the stream when fork() ran. */
	pthread_mutex_lock(&p.stream->lock);
	t_check_ret(in_child(child_inherited, &p), 0);
	pthread_mutex_unlock(&p.stream->lock);
	t_check(nrn_forked() == 0);

	/* The parent's objects are intact. */
	memset(back, 0, LEN);
	t_check_ret(nrn_stream_copy_d2h(p.stream, back, p.buf, 0, LEN), 0);
	t_check(memcmp(back, p.data, LEN) == 0);
	t_check_ret(nrn_copy_d2h(back, p.buf, 0, LEN), 0);
	t_check(memcmp(back, p.data, LEN) == 0);
	nrn_stream_destroy(p.stream);
	nrn_buffer_free(p.buf);
	nrn_device_close(p.dev);
	free(p.data);
	free(back);
	return t_exit();
}

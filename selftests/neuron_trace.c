// SPDX-License-Identifier: GPL-2.0
/*
 * The driver's tracepoints (events/neuron/ in tracefs): a job's SUBMIT,
 * push to the ring and completion are recorded as one pair, matched by the
 * job's seqno; a hung job gives a timeout and a reset naming that seqno.
 * Each test records into a tracefs instance of its own.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "neuron_test.h"

static const char *const events[] = {
	"neuron_submit", "neuron_push", "neuron_complete", "neuron_timeout", "neuron_reset",
};

/* The tracefs mount, mounting it if nothing has. */
static const char *tracefs(void)
{
	static const char *const dirs[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	struct stat st;

	for (int i = 0; i < 2; i++) {
		char path[96];

		snprintf(path, sizeof(path), "%s/events", dirs[i]);
		if (!stat(path, &st))
			return dirs[i];
	}
	if (!mount("nodev", dirs[0], "tracefs", 0, NULL))
		return dirs[0];
	return NULL;
}

static int write_file(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_TRUNC), ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) != (ssize_t)strlen(val))
		ret = -errno;
	close(fd);
	return ret;
}

/* The instance's recorded events, as text (malloc'd), or NULL. */
static char *read_trace(const char *dir)
{
	char path[160], *buf;
	size_t len = 0, cap = 1 << 16;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/trace", dir);
	fd = open(path, O_RDONLY);
	buf = malloc(cap);
	if (fd < 0 || !buf) {
		free(buf);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	while ((n = read(fd, buf + len, cap - len - 1)) > 0) {
		len += (size_t)n;
		if (cap - len < 4096) {
			char *b = realloc(buf, cap * 2);

			if (!b)
				break;
			buf = b;
			cap *= 2;
		}
	}
	close(fd);
	buf[len] = 0;
	return buf;
}

/* The seqno of the first @event line after @from naming @queue; -1 if none. */
static long long find_event(const char *text, const char **from, const char *event,
			    const char *queue)
{
	char key[64], q[48];
	const char *p = *from;

	snprintf(key, sizeof(key), " %s: ", event);
	snprintf(q, sizeof(q), "queue=%s ", queue);
	while ((p = strstr(p, key))) {
		const char *eol = strchr(p, '\n'), *s, *qq = strstr(p, q);

		if (!eol)
			eol = p + strlen(p);
		if (qq && qq < eol) {
			*from = eol;
			s = strstr(p, "seqno=");
			return s && s < eol ? strtoll(s + 6, NULL, 10) : 0;
		}
		p = eol;
	}
	return -1;
}

FIXTURE(trace) {
	int fd;
	char dir[128];
	uint32_t host, dev, sync;
};

FIXTURE_SETUP(trace)
{
	const char *t;
	char path[192];

	self->fd = nt_open();
	self->dir[0] = 0;
	if (self->fd < 0)
		SKIP(return, "no neuron device (is neuron.ko loaded?)");
	NT_NEED_CARD_ALONE(self->fd);
	t = tracefs();
	if (!t)
		SKIP(return, "no tracefs");
	snprintf(self->dir, sizeof(self->dir), "%s/instances/neuron_test_%d", t, getpid());
	ASSERT_EQ(0, mkdir(self->dir, 0700));
	snprintf(path, sizeof(path), "%s/events/neuron/enable", self->dir);
	ASSERT_EQ(0, write_file(path, "1"));
	ASSERT_EQ(0, nt_bo_create(self->fd, 1 << 20, DRM_NEURON_BO_HOST, &self->host));
	ASSERT_EQ(0, nt_bo_create(self->fd, 1 << 20, DRM_NEURON_BO_DEVICE, &self->dev));
	ASSERT_EQ(0, nt_syncobj_create(self->fd, &self->sync));
}

FIXTURE_TEARDOWN(trace)
{
	if (self->dir[0])
		rmdir(self->dir);
	if (self->fd >= 0) {
		nt_fault(self->fd, 0, 0);
		close(self->fd);
	}
}

TEST_F(trace, every_event_is_there)
{
	char path[192];
	struct stat st;

	for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++) {
		snprintf(path, sizeof(path), "%s/events/neuron/%s/format", self->dir, events[i]);
		EXPECT_EQ(0, stat(path, &st)) TH_LOG("no event %s", events[i]);
	}
}

TEST_F(trace, submit_push_complete_of_one_job)
{
	struct drm_neuron_copy c = { .src_handle = self->host, .dst_handle = self->dev,
				     .size = 4096 };
	long long pushed, done;
	const char *p;
	char *text;
	int32_t status;

	ASSERT_EQ(0, nt_submit_copies(self->fd, 0, &c, 1, NULL, 0, self->sync));
	ASSERT_EQ(0, nt_wait(self->fd, self->sync, 0, 10000, &status, NULL));
	ASSERT_EQ(0, status);
	text = read_trace(self->dir);
	ASSERT_NE(NULL, text);
	p = text;
	/* In this order: the ioctl, the ring, the completion of the same job. */
	EXPECT_LE(0, find_event(text, &p, "neuron_submit", "dma0")) TH_LOG("%s", text);
	pushed = find_event(text, &p, "neuron_push", "dma0");
	done = find_event(text, &p, "neuron_complete", "dma0");
	EXPECT_LT(0, pushed) TH_LOG("%s", text);
	EXPECT_EQ(pushed, done) TH_LOG("%s", text);
	EXPECT_NE(NULL, strstr(text, "error=0 device_error=0")) TH_LOG("%s", text);
	free(text);
}

TEST_F(trace, a_hang_gives_timeout_and_reset)
{
	struct drm_neuron_copy c = { .src_handle = self->host, .dst_handle = self->dev,
				     .size = 4096 };
	long long pushed, timed_out, reset;
	const char *p;
	char *text;
	int32_t status;

	if (nt_fault(self->fd, 0, 0))
		SKIP(return, "no fault-injection hook");
	ASSERT_EQ(0, nt_fault(self->fd, 0, 1 /* HANG */));
	ASSERT_EQ(0, nt_submit_copies(self->fd, 0, &c, 1, NULL, 0, self->sync));
	ASSERT_EQ(0, nt_wait(self->fd, self->sync, 0, 15000, &status, NULL));
	EXPECT_EQ(-ETIMEDOUT, status);
	text = read_trace(self->dir);
	ASSERT_NE(NULL, text);
	p = text;
	pushed = find_event(text, &p, "neuron_push", "dma0");
	timed_out = find_event(text, &p, "neuron_timeout", "dma0");
	reset = find_event(text, &p, "neuron_reset", "dma0");
	EXPECT_LT(0, pushed) TH_LOG("%s", text);
	EXPECT_EQ(pushed, timed_out) TH_LOG("%s", text);
	EXPECT_EQ(pushed, reset) TH_LOG("%s", text);
	free(text);
}

TEST_HARNESS_MAIN

// SPDX-License-Identifier: MIT
/*
 * Communicators: set-up and teardown (docs/collectives.md).
 *
 * Rendezvous: rank r listens on the abstract Unix socket
 * "@neuron-comm-<id in hex>-<r>" (SOCK_SEQPACKET), connects to every lower
 * rank (retrying until the timeout) and accepts every higher one, so any
 * two ranks share one connection whether they are threads of one process
 * or separate processes. Over it they exchange what the collectives need:
 * the card's fabric id, rank and link peers, and the rank's timeline
 * syncobj as an fd (SCM_RIGHTS), imported into the other's file. Every rank
 * then derives the same ring (ranks ordered by fabric rank, each joined to
 * the next by a link), or fails with -EXDEV everywhere.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <xf86drm.h>

#include "comm.h"

#define NRN_COMM_MAGIC 0x4e52434dU	/* "NRCM" */

struct nrn_comm_hello {
	uint32_t magic;
	int32_t rank;
	int32_t nranks;
	uint32_t pad;
	unsigned char id[32];
};

struct nrn_comm_info {
	uint32_t magic;
	uint32_t fabric_id;
	uint32_t fabric_rank;
	uint32_t num_links;
	uint8_t link_peer[8];
};

static int64_t nrn_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

int64_t nrn_comm_deadline(const struct nrn_comm *c)
{
	return nrn_now_ns() + c->timeout_ns;
}

/* Wait until @sock is readable; -ETIMEDOUT past @deadline. */
static int nrn_wait_readable(int sock, int64_t deadline)
{
	struct pollfd p = { .fd = sock, .events = POLLIN };
	int64_t left;
	int ret;

	for (;;) {
		left = deadline - nrn_now_ns();
		if (left <= 0)
			return -ETIMEDOUT;
		ret = poll(&p, 1, (int)(left / 1000000 + 1));
		if (ret > 0)
			return 0;
		if (ret < 0 && errno != EINTR)
			return -errno;
	}
}

int nrn_comm_send_msg(int sock, const void *msg, size_t len,
		      const int *fds, unsigned int nfds)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * 4)];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = (void *)msg, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cm;
	ssize_t n;

	if (nfds > 4)
		return -EINVAL;
	if (nfds) {
		memset(&u, 0, sizeof(u));
		mh.msg_control = u.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(cm), fds, sizeof(int) * nfds);
	}
	do {
		n = sendmsg(sock, &mh, MSG_NOSIGNAL);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EPIPE ? -ECONNRESET : -errno;
	return (size_t)n == len ? 0 : -EPROTO;
}

int nrn_comm_recv_msg(int sock, void *msg, size_t len, int *fds,
		      unsigned int maxfds, unsigned int *nfds, int64_t deadline)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * 4)];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = msg, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = u.buf, .msg_controllen = sizeof(u.buf) };
	unsigned int got = 0, i;
	struct cmsghdr *cm;
	ssize_t n;
	int ret;

	ret = nrn_wait_readable(sock, deadline);
	if (ret)
		return ret;
	do {
		n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		unsigned int k = (unsigned int)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
		int tmp[4];

		memcpy(tmp, CMSG_DATA(cm), sizeof(int) * (k > 4 ? 4 : k));
		for (i = 0; i < k && i < 4; i++) {
			if (got < maxfds)
				fds[got++] = tmp[i];
			else
				close(tmp[i]);
		}
	}
	if (nfds)
		*nfds = got;
	if (n == 0 || (size_t)n != len || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC))) {
		for (i = 0; i < got; i++)
			close(fds[i]);
		/* An orderly shutdown: the peer's communicator is gone. */
		return n == 0 ? -ECONNRESET : -EPROTO;
	}
	return 0;
}

NRN_EXPORT int nrn_comm_id_new(struct nrn_comm_id *id)
{
	size_t got = 0;
	ssize_t n;

	if (!id)
		return -EINVAL;
	while (got < sizeof(id->bytes)) {
		n = getrandom(id->bytes + got, sizeof(id->bytes) - got, 0);
		if (n < 0 && errno != EINTR)
			return -errno;
		if (n > 0)
			got += (size_t)n;
	}
	return 0;
}

static socklen_t nrn_comm_addr(const struct nrn_comm_id *id, int rank,
			       struct sockaddr_un *sa)
{
	char *p = sa->sun_path;
	int len;

	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	p[0] = '\0';		/* abstract namespace */
	len = 1 + sprintf(p + 1, "neuron-comm-");
	for (unsigned int i = 0; i < sizeof(id->bytes); i++)
		len += sprintf(p + len, "%02x", id->bytes[i]);
	len += sprintf(p + len, "-%d", rank);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + (size_t)len);
}

/* Connect to rank @q's socket, retrying until it listens or @deadline. */
static int nrn_comm_connect(const struct nrn_comm_id *id, int q, int64_t deadline)
{
	struct sockaddr_un sa;
	socklen_t len = nrn_comm_addr(id, q, &sa);
	struct timespec pause = { .tv_nsec = 5 * 1000 * 1000 };
	int sock, err;

	for (;;) {
		sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
		if (sock < 0)
			return -errno;
		if (!connect(sock, (struct sockaddr *)&sa, len))
			return sock;
		err = errno;
		close(sock);
		if (err != ECONNREFUSED && err != ENOENT && err != EAGAIN && err != EINTR)
			return -err;
		if (nrn_now_ns() >= deadline)
			return -ETIMEDOUT;
		nanosleep(&pause, NULL);
	}
}

/* Connect to lower ranks, accept higher ones: c->peer[q].sock for all q. */
static int nrn_comm_rendezvous(struct nrn_comm *c, const struct nrn_comm_id *id,
			       int64_t deadline)
{
	struct nrn_comm_hello hello = { .magic = NRN_COMM_MAGIC, .rank = c->rank,
					.nranks = c->nranks }, h;
	struct sockaddr_un sa;
	socklen_t len = nrn_comm_addr(id, c->rank, &sa);
	int lsock, sock, q, accepted = 0, ret = 0;

	memcpy(hello.id, id->bytes, sizeof(hello.id));
	lsock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (lsock < 0)
		return -errno;
	if (bind(lsock, (struct sockaddr *)&sa, len) || listen(lsock, c->nranks)) {
		ret = -errno;	/* -EADDRINUSE: this rank of @id is taken */
		goto out;
	}
	for (q = 0; q < c->rank; q++) {
		sock = nrn_comm_connect(id, q, deadline);
		if (sock < 0) {
			ret = sock;
			goto out;
		}
		c->peer[q].sock = sock;
		ret = nrn_comm_send_msg(sock, &hello, sizeof(hello), NULL, 0);
		if (ret)
			goto out;
	}
	while (accepted < c->nranks - 1 - c->rank) {
		ret = nrn_wait_readable(lsock, deadline);
		if (ret)
			goto out;
		sock = accept4(lsock, NULL, NULL, SOCK_CLOEXEC);
		if (sock < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			ret = -errno;
			goto out;
		}
		ret = nrn_comm_recv_msg(sock, &h, sizeof(h), NULL, 0, NULL, deadline);
		if (!ret && (h.magic != NRN_COMM_MAGIC || h.nranks != c->nranks ||
			     memcmp(h.id, id->bytes, sizeof(h.id)) ||
			     h.rank <= c->rank || h.rank >= c->nranks ||
			     c->peer[h.rank].sock >= 0))
			ret = -EPROTO;	/* another communicator, or a rank twice */
		if (ret) {
			close(sock);
			goto out;
		}
		c->peer[h.rank].sock = sock;
		accepted++;
	}
out:
	close(lsock);
	return ret;
}

/*
 * Every rank's view of the fabric, exchanged; then the ring: ranks by
 * fabric rank, each with a link to the next (checked for every rank, so
 * all ranks agree on -EXDEV).
 */
static int nrn_comm_exchange(struct nrn_comm *c, int64_t deadline)
{
	struct nrn_comm_info all[NRN_COMM_MAX_RANKS], *me = &all[c->rank];
	const struct nrn_device_info *di = &c->dev->info;
	int fd = -1, q, i, j, ret;
	unsigned int nfds;

	memset(all, 0, sizeof(all));
	me->magic = NRN_COMM_MAGIC;
	me->fabric_id = di->fabric_id;
	me->fabric_rank = di->fabric_rank;
	me->num_links = di->num_links;
	memcpy(me->link_peer, di->link_peer, sizeof(me->link_peer));
	ret = drmSyncobjHandleToFD(c->dev->fd, c->timeline, &fd);
	if (ret)
		return -errno;
	for (q = 0; q < c->nranks && !ret; q++)
		if (q != c->rank)
			ret = nrn_comm_send_msg(c->peer[q].sock, me, sizeof(*me), &fd, 1);
	close(fd);
	for (q = 0; q < c->nranks && !ret; q++) {
		if (q == c->rank)
			continue;
		ret = nrn_comm_recv_msg(c->peer[q].sock, &all[q], sizeof(all[q]),
					&fd, 1, &nfds, deadline);
		if (!ret && (nfds != 1 || all[q].magic != NRN_COMM_MAGIC))
			ret = -EPROTO;
		if (!ret && drmSyncobjFDToHandle(c->dev->fd, fd, &c->peer[q].timeline))
			ret = -errno;
		if (nfds == 1)
			close(fd);
	}
	if (ret)
		return ret;
	c->peer[c->rank].timeline = c->timeline;
	for (q = 0; q < c->nranks; q++) {
		c->peer[q].fabric_rank = all[q].fabric_rank;
		c->ring[q] = q;
	}
	/* Order by fabric rank (insertion sort, a handful of ranks). */
	for (i = 1; i < c->nranks; i++)
		for (j = i; j > 0 && all[c->ring[j - 1]].fabric_rank >
				     all[c->ring[j]].fabric_rank; j--) {
			int t = c->ring[j];

			c->ring[j] = c->ring[j - 1];
			c->ring[j - 1] = t;
		}
	for (i = 0; i < c->nranks; i++) {
		const struct nrn_comm_info *a = &all[c->ring[i]];
		const struct nrn_comm_info *b = &all[c->ring[(i + 1) % c->nranks]];
		bool linked = false;

		if (c->ring[i] == c->rank)
			c->pos = i;
		if (c->nranks == 1)
			break;
		if (!a->fabric_id || a->fabric_id != b->fabric_id ||
		    a->fabric_rank == b->fabric_rank)
			return -EXDEV;
		for (unsigned int l = 0; l < a->num_links && l < 8; l++)
			linked |= a->link_peer[l] == b->fabric_rank;
		if (!linked)
			return -EXDEV;
	}
	/* Every rank's direct links (link l reaches the rank at its other end). */
	for (i = 0; i < c->nranks; i++) {
		for (q = 0; q < c->nranks; q++) {
			c->link_of[i][q] = -1;
			for (unsigned int l = all[i].num_links; q != i && l-- > 0;)
				if (l < 8 && all[i].link_peer[l] == all[q].fabric_rank)
					c->link_of[i][q] = (int8_t)l;
		}
	}
	for (q = 0; q < c->nranks; q++)
		c->peer[q].link = c->link_of[c->rank][q];
	return 0;
}

NRN_EXPORT __cold int nrn_comm_init_rank(struct nrn_device *dev, int nranks, int rank,
					 const struct nrn_comm_id *id,
					 int64_t timeout_ns, struct nrn_comm **commp)
{
	struct nrn_comm *c;
	int64_t deadline;
	int ret, q;

	if (!dev || !id || !commp || nranks < 1 || nranks > NRN_COMM_MAX_RANKS ||
	    rank < 0 || rank >= nranks)
		return -EINVAL;
	if (nrn_inherited(dev))
		return -EBADFD;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->dev = dev;
	c->rank = rank;
	c->nranks = nranks;
	c->timeout_ns = timeout_ns < 0 ? NRN_COMM_DEFAULT_TIMEOUT_NS : timeout_ns;
	pthread_mutex_init(&c->lock, NULL);
	for (q = 0; q < NRN_COMM_MAX_RANKS; q++)
		c->peer[q].sock = -1;
	deadline = nrn_comm_deadline(c);
	ret = drmSyncobjCreate(dev->fd, 0, &c->timeline) ? -errno : 0;
	if (!ret && drmSyncobjCreate(dev->fd, DRM_SYNCOBJ_CREATE_SIGNALED, &c->done))
		ret = -errno;
	if (!ret)
		ret = nrn_buffer_alloc(dev, 64, NRN_MEM_DEVICE, &c->tick);
	if (!ret && nranks > 1)
		ret = nrn_comm_rendezvous(c, id, deadline);
	if (!ret)
		ret = nrn_comm_exchange(c, deadline);
	if (ret) {
		nrn_comm_destroy(c);
		return ret;
	}
	*commp = c;
	return 0;
}

struct nrn_comm_init_arg {
	struct nrn_device *dev;
	int nranks, rank;
	const struct nrn_comm_id *id;
	struct nrn_comm *comm;
	int ret;
};

static void *nrn_comm_init_thread(void *p)
{
	struct nrn_comm_init_arg *a = p;

	a->ret = nrn_comm_init_rank(a->dev, a->nranks, a->rank, a->id, -1, &a->comm);
	return NULL;
}

NRN_EXPORT __cold int nrn_comm_init_all(struct nrn_device *const *devs, int ndevs,
					struct nrn_comm **comms)
{
	struct nrn_comm_init_arg args[NRN_COMM_MAX_RANKS];
	pthread_t threads[NRN_COMM_MAX_RANKS];
	struct nrn_comm_id id;
	int i, started, ret;

	if (!devs || !comms || ndevs < 1 || ndevs > NRN_COMM_MAX_RANKS)
		return -EINVAL;
	for (i = 0; i < ndevs; i++)
		if (!devs[i])
			return -EINVAL;
	ret = nrn_comm_id_new(&id);
	if (ret)
		return ret;
	for (started = 0; started < ndevs; started++) {
		args[started] = (struct nrn_comm_init_arg){
			.dev = devs[started], .nranks = ndevs, .rank = started, .id = &id };
		ret = -pthread_create(&threads[started], NULL, nrn_comm_init_thread,
				      &args[started]);
		if (ret)
			break;
	}
	for (i = 0; i < started; i++) {
		pthread_join(threads[i], NULL);
		if (!ret)
			ret = args[i].ret;
	}
	for (i = 0; i < started; i++) {
		if (ret)
			nrn_comm_destroy(args[i].ret ? NULL : args[i].comm);
		else
			comms[i] = args[i].comm;
	}
	return ret;
}

NRN_EXPORT __cold void nrn_comm_destroy(struct nrn_comm *c)
{
	struct drm_neuron_wait w = { .timeout_ns = -1 };
	int fd;

	if (!c || nrn_inherited(c->dev))
		return; /* a forked child's: its objects are the parent's */
	fd = c->dev->fd;
	pthread_mutex_lock(&c->lock);
	/* The last collective's final job covers all its jobs and writes. */
	if (c->done) {
		w.handle = c->done;
		nrn_ioctl(fd, DRM_IOCTL_NEURON_WAIT, &w);
	}
	pthread_mutex_unlock(&c->lock);
	for (int q = 0; q < NRN_COMM_MAX_RANKS; q++) {
		struct nrn_comm_peer *p = &c->peer[q];

		if (p->sock >= 0)
			close(p->sock);
		if (p->timeline && q != c->rank)
			drmSyncobjDestroy(fd, p->timeline);
		for (int k = 0; k < NRN_COMM_CACHE; k++)
			if (p->got_handle[k])
				drmCloseBufferHandle(fd, p->got_handle[k]);
	}
	nrn_buffer_free(c->tick);
	nrn_buffer_free(c->scratch);
	if (c->done)
		drmSyncobjDestroy(fd, c->done);
	if (c->timeline)
		drmSyncobjDestroy(fd, c->timeline);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

NRN_EXPORT int nrn_comm_rank(const struct nrn_comm *c)
{
	return c ? c->rank : -EINVAL;
}

NRN_EXPORT int nrn_comm_size(const struct nrn_comm *c)
{
	return c ? c->nranks : -EINVAL;
}

// SPDX-License-Identifier: MIT
/*
 * Issuing a rank's part of a collective (docs/collectives.md "Ordering").
 *
 * 1. Messages: the rank tells each partner (a rank it writes into or that
 *    writes into it) its ready point and, to those writing into it, its
 *    receive buffers: a slot of the owner's cache, and the dma-buf fd when
 *    the peer has not imported that buffer yet. The messages also carry
 *    the call's arguments, checked against the partner's, and the slots
 *    whose buffers the owner has freed since: the partner drops those
 *    imports, which were keeping the memory allocated.
 * 2. Prologue on the stream: the local copies (or one 8-byte copy of the
 *    comm's tick buffer), after the stream's prior work and the previous
 *    collective's end; then a tick copy after it signals our timeline's
 *    ready point. A local copy no link job touches (an all-to-all's own
 *    block) is queued after that instead, so that it runs beside the
 *    links.
 * 3. Our link jobs, in schedule order, each waiting for our previous
 *    point, the destination's ready point and the peer job it depends on.
 *    A peer's point is waited for as available (submitted, not done)
 *    before the job naming it is submitted: no host copy, no host wait
 *    for data.
 * 4. Epilogue on the stream: an 8-byte tick copy waiting for our last
 *    point and for the last point of every rank that writes into us; the
 *    stream's later work waits for it, and so does the next collective.
 *
 * A failure after the call was accepted (a peer that does not take part,
 * a card gone, a mismatched call) breaks the communicator: peers are told
 * (an abort message), the stream's next sync reports the error, and every
 * later collective fails with it.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <xf86drm.h>

#include "comm.h"

#define NRN_MSG_MAGIC	0x4e52434fU
#define NRN_MSG_ABORT	0x4e524341U
#define NRN_MSG_SPLIT	0x4e525350U
#define NRN_WAIT_SLICE_NS (20 * 1000 * 1000)

struct nrn_comm_msg_buf {
	uint64_t key;
	uint64_t off;
	uint64_t len;
	uint32_t slot;
	uint32_t has_fd;
};

struct nrn_comm_msg {
	uint32_t magic;
	int32_t error;
	uint32_t coll, dtype, reduce;
	int32_t root, peer;
	uint32_t pad;
	uint64_t count;
	uint64_t seq;
	uint64_t base;		/* the sender's ready point */
	uint64_t njobs;		/* its link jobs */
	uint32_t drop;		/* slots of its buffers to forget (freed) */
	uint32_t pad2;
	struct nrn_comm_msg_buf buf[2];	/* its RECV and SCRATCH */
	/* NRN_MSG_SPLIT: its send and its receive counts, by rank. */
	uint64_t split[2][NRN_COMM_MAX_RANKS];
};

/* A partner's side of this collective. */
struct nrn_comm_side {
	uint64_t base;
	uint32_t handle[2];	/* its RECV/SCRATCH imported (0: none) */
	uint64_t off[2], len[2];
};

struct nrn_comm_ctx {
	struct nrn_comm *c;
	struct nrn_stream *s;
	struct nrn_comm_call *a;
	struct nrn_comm_sched sc;
	int64_t deadline;
	bool partner[NRN_COMM_MAX_RANKS];
	bool writer[NRN_COMM_MAX_RANKS];
	uint64_t njobs[NRN_COMM_MAX_RANKS];
	struct nrn_comm_side side[NRN_COMM_MAX_RANKS];
};

static int64_t nrn_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static struct nrn_buffer *nrn_cbuf(struct nrn_comm_ctx *x, unsigned int b)
{
	if (b == NRN_CB_SCRATCH)
		return x->c->scratch;
	if (b == NRN_CB_TICK)
		return x->c->tick;
	return x->a->buf[b];
}

static uint64_t nrn_coff(struct nrn_comm_ctx *x, unsigned int b)
{
	return b == NRN_CB_SCRATCH || b == NRN_CB_TICK ? 0 : x->a->off[b];
}

/* Describe @buf to peer @q, exporting it unless @q has it imported. */
static int nrn_comm_offer(struct nrn_comm *c, int q, struct nrn_buffer *buf,
			  uint64_t off, uint64_t len, struct nrn_comm_msg_buf *m,
			  int *fd)
{
	struct nrn_comm_peer *p = &c->peer[q];
	unsigned int k, lru = 0;
	struct stat st;

	*fd = -1;
	if (drmPrimeHandleToFD(c->dev->fd, buf->handle, DRM_CLOEXEC | DRM_RDWR, fd))
		return -errno;
	if (fstat(*fd, &st)) {
		close(*fd);
		*fd = -1;
		return -errno;
	}
	/*
	 * The dma-buf's inode names it while it exists, and it exists as
	 * long as the peer holds its import: a key in our table is never
	 * another buffer's.
	 */
	for (k = 0; k < NRN_COMM_CACHE; k++) {
		if (p->sent_key[k] == (uint64_t)st.st_ino)
			break;
		if (p->sent_use[k] < p->sent_use[lru])
			lru = k;
	}
	m->has_fd = k == NRN_COMM_CACHE;
	if (m->has_fd) {
		k = lru;
		p->sent_key[k] = (uint64_t)st.st_ino;
		p->sent_handle[k] = buf->handle;
	} else {
		close(*fd);
		*fd = -1;
	}
	p->sent_use[k] = ++c->use_clock;
	m->key = (uint64_t)st.st_ino;
	m->slot = k;
	m->off = off;
	m->len = len;
	return 0;
}

/*
 * Slots of peer @q's cache whose buffer we have freed since (its handle
 * closed, or reused by another buffer: its export is another dma-buf), to
 * be dropped by @q so that the memory returns: a peer's import keeps it.
 * Slots in use by this message (@keep) are alive.
 */
static uint32_t nrn_comm_stale(struct nrn_comm *c, int q, uint32_t keep)
{
	struct nrn_comm_peer *p = &c->peer[q];
	uint32_t drop = 0;
	struct stat st;
	int fd;

	for (unsigned int k = 0; k < NRN_COMM_CACHE; k++) {
		bool alive;

		if (!p->sent_key[k] || (keep >> k & 1))
			continue;
		alive = !drmPrimeHandleToFD(c->dev->fd, p->sent_handle[k], DRM_CLOEXEC, &fd);
		if (alive) {
			alive = !fstat(fd, &st) && (uint64_t)st.st_ino == p->sent_key[k];
			close(fd);
		}
		if (!alive) {
			drop |= 1u << k;
			p->sent_key[k] = 0;
			p->sent_use[k] = 0;
		}
	}
	return drop;
}

/* Take peer @q's buffer description, importing a new dma-buf. */
static int nrn_comm_take(struct nrn_comm *c, int q, const struct nrn_comm_msg_buf *m,
			 int fd, uint32_t *handle)
{
	struct nrn_comm_peer *p = &c->peer[q];
	uint32_t h;

	if (m->slot >= NRN_COMM_CACHE)
		return -EPROTO;
	if (m->has_fd) {
		if (fd < 0)
			return -EPROTO;
		if (drmPrimeFDToHandle(c->dev->fd, fd, &h))
			return -errno;
		if (p->got_handle[m->slot] && p->got_handle[m->slot] != h)
			drmCloseBufferHandle(c->dev->fd, p->got_handle[m->slot]);
		p->got_handle[m->slot] = h;
		p->got_key[m->slot] = m->key;
	} else if (p->got_key[m->slot] != m->key || !p->got_handle[m->slot]) {
		return -EPROTO;
	}
	*handle = p->got_handle[m->slot];
	return 0;
}

static int nrn_comm_exchange_msgs(struct nrn_comm_ctx *x)
{
	struct nrn_comm *c = x->c;
	struct nrn_comm_call *a = x->a;
	int q, ret = 0;

	for (q = 0; q < c->nranks && !ret; q++) {
		struct nrn_comm_msg m = {
			.magic = NRN_MSG_MAGIC, .coll = a->coll, .dtype = a->dtype,
			.reduce = a->reduce, .root = a->root, .peer = a->peer,
			.count = a->count, .seq = c->peer[q].seq, .base = c->point + 1,
			.njobs = x->njobs[c->rank],
		};
		int fds[2], nfds = 0;

		if (!x->partner[q])
			continue;
		for (unsigned int i = 0; x->writer[q] && i < 2 && !ret; i++) {
			unsigned int b = i ? NRN_CB_SCRATCH : NRN_CB_RECV;
			struct nrn_buffer *buf = nrn_cbuf(x, b);
			int fd;

			if (!buf || (b == NRN_CB_SCRATCH && !x->sc.scratch))
				continue;
			ret = nrn_comm_offer(c, q, buf, nrn_coff(x, b),
					     b == NRN_CB_SCRATCH ? x->sc.scratch : a->len[b],
					     &m.buf[i], &fd);
			if (!ret && fd >= 0)
				fds[nfds++] = fd;
		}
		if (!ret)
			m.drop = nrn_comm_stale(c, q, (m.buf[0].len ? 1u << m.buf[0].slot : 0) |
						      (m.buf[1].len ? 1u << m.buf[1].slot : 0));
		if (!ret)
			ret = nrn_comm_send_msg(c->peer[q].sock, &m, sizeof(m), fds,
						(unsigned int)nfds);
		while (nfds)
			close(fds[--nfds]);
	}
	for (q = 0; q < c->nranks && !ret; q++) {
		struct nrn_comm_msg m;
		unsigned int nfds = 0, used = 0;
		int fds[2] = { -1, -1 };

		if (!x->partner[q])
			continue;
		ret = nrn_comm_recv_msg(c->peer[q].sock, &m, sizeof(m), fds, 2, &nfds,
					x->deadline);
		if (!ret && m.magic == NRN_MSG_ABORT)
			ret = m.error ? m.error : -ECONNRESET;
		else if (!ret && (m.magic != NRN_MSG_MAGIC || m.seq != c->peer[q].seq))
			ret = -EPROTO;
		else if (!ret && (m.coll != a->coll || m.dtype != (uint32_t)a->dtype ||
				  m.reduce != a->reduce || m.root != a->root ||
				  m.peer != a->peer || m.count != a->count ||
				  m.njobs != x->njobs[q]))
			ret = -EINVAL;	/* the ranks' calls do not match */
		x->side[q].base = ret ? 0 : m.base;
		for (unsigned int k = 0; !ret && k < NRN_COMM_CACHE; k++) {
			struct nrn_comm_peer *p = &c->peer[q];

			if (!(m.drop >> k & 1) || !p->got_handle[k])
				continue;
			drmCloseBufferHandle(c->dev->fd, p->got_handle[k]);
			p->got_handle[k] = 0;
			p->got_key[k] = 0;
		}
		for (unsigned int i = 0; !ret && i < 2; i++) {
			if (!m.buf[i].len)
				continue;
			ret = nrn_comm_take(c, q, &m.buf[i],
					    m.buf[i].has_fd && used < nfds ? fds[used] : -1,
					    &x->side[q].handle[i]);
			used += m.buf[i].has_fd;
			x->side[q].off[i] = m.buf[i].off;
			x->side[q].len[i] = m.buf[i].len;
		}
		for (unsigned int i = 0; i < nfds; i++)
			close(fds[i]);
		c->peer[q].seq++;
	}
	return ret;
}

/*
 * All-to-allv: every rank tells every other its send and receive counts;
 * each then holds the whole matrix of block sizes, checked (what S sends
 * D is what D expects from S: -EINVAL on every rank otherwise), and makes
 * the same schedule from it. @a->count becomes the matrix's total, which
 * the messages that follow compare.
 */
static int nrn_comm_exchange_split(struct nrn_comm_ctx *x, nrn_comm_split *split)
{
	struct nrn_comm *c = x->c;
	struct nrn_comm_call *a = x->a;
	uint64_t want[NRN_COMM_MAX_RANKS][NRN_COMM_MAX_RANKS];
	struct nrn_comm_msg m = { .magic = NRN_MSG_SPLIT, .coll = a->coll, .dtype = a->dtype };
	int n = c->nranks, q, ret = 0;
	uint64_t total = 0;

	for (int j = 0; j < n; j++) {
		m.split[0][j] = (*split)[c->rank][j] = a->send_counts[j];
		m.split[1][j] = want[c->rank][j] = a->recv_counts[j];
	}
	for (q = 0; q < n && !ret; q++) {
		if (q == c->rank)
			continue;
		m.seq = c->peer[q].seq;
		ret = nrn_comm_send_msg(c->peer[q].sock, &m, sizeof(m), NULL, 0);
	}
	for (q = 0; q < n && !ret; q++) {
		struct nrn_comm_msg g;

		if (q == c->rank)
			continue;
		ret = nrn_comm_recv_msg(c->peer[q].sock, &g, sizeof(g), NULL, 0, NULL,
					x->deadline);
		if (!ret && g.magic == NRN_MSG_ABORT)
			ret = g.error ? g.error : -ECONNRESET;
		else if (!ret && (g.magic != NRN_MSG_SPLIT || g.seq != c->peer[q].seq))
			ret = -EPROTO;
		else if (!ret && (g.coll != a->coll || g.dtype != (uint32_t)a->dtype))
			ret = -EINVAL;	/* the ranks' calls do not match */
		for (int j = 0; !ret && j < n; j++) {
			(*split)[q][j] = g.split[0][j];
			want[q][j] = g.split[1][j];
		}
		c->peer[q].seq++;
	}
	for (int i = 0; i < n && !ret; i++)
		for (int j = 0; j < n; j++) {
			if ((*split)[i][j] != want[j][i] || (*split)[i][j] > UINT64_MAX / 4 - total)
				ret = -EINVAL;
			total += (*split)[i][j];
		}
	a->count = total;
	a->split = split;
	return ret;
}

/*
 * Peer @q failed visibly: an abort message waits on its socket (peeked:
 * any other message is its next collective's, left for it), or the
 * socket was closed (its communicator is gone).
 */
static int nrn_comm_peer_failed(struct nrn_comm *c, int q)
{
	struct nrn_comm_msg m;
	ssize_t n;

	if (q == c->rank)
		return 0;
	n = recv(c->peer[q].sock, &m, sizeof(m), MSG_PEEK | MSG_DONTWAIT);
	if (n == 0)
		return -ECONNRESET;
	if (n != (ssize_t)sizeof(m) || m.magic != NRN_MSG_ABORT)
		return 0;
	n = recv(c->peer[q].sock, &m, sizeof(m), MSG_DONTWAIT);
	return m.error ? m.error : -ECONNRESET;
}

/* Wait until rank @q has submitted the job of @point (not for its end). */
static int nrn_comm_wait_avail(struct nrn_comm_ctx *x, int q, uint64_t point)
{
	struct nrn_comm *c = x->c;
	uint32_t h = c->peer[q].timeline;
	struct drm_syncobj_timeline_wait w = {
		.handles = (uintptr_t)&h, .points = (uintptr_t)&point,
		.count_handles = 1,
		.flags = DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT |
			 DRM_SYNCOBJ_WAIT_FLAGS_WAIT_AVAILABLE,
	};
	int ret;

	if (q == c->rank)
		return 0;	/* ours: submitted before */
	for (;;) {
		int64_t now = nrn_mono_ns();

		w.timeout_nsec = now + NRN_WAIT_SLICE_NS < x->deadline ?
				 now + NRN_WAIT_SLICE_NS : x->deadline;
		ret = nrn_ioctl(c->dev->fd, DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT, &w);
		if (ret != -ETIME)
			return ret;
		if (nrn_mono_ns() >= x->deadline)
			return -ETIMEDOUT;
		ret = nrn_comm_peer_failed(c, q);
		if (ret)
			return ret;
	}
}

/* A DMA job on the stream: a local copy, or the 8-byte tick copy. */
static int nrn_comm_stream_job(struct nrn_comm_ctx *x, const struct nrn_comm_local *l,
			       const struct drm_neuron_sync *in, unsigned int nin)
{
	static const struct nrn_comm_local tick = {
		.src_buf = NRN_CB_TICK, .dst_buf = NRN_CB_TICK,
		.src_off = 0, .dst_off = 32, .size = 8,
	};
	struct drm_neuron_copy cp;
	struct drm_neuron_submit sub = {
		.engine = DRM_NEURON_ENGINE_DMA, .index = x->s->dma,
		.copies = (uintptr_t)&cp, .copy_count = 1,
		.in_syncs = (uintptr_t)in, .in_sync_count = nin,
	};

	if (!l)
		l = &tick;
	cp = (struct drm_neuron_copy){
		.src_handle = nrn_cbuf(x, l->src_buf)->handle,
		.dst_handle = nrn_cbuf(x, l->dst_buf)->handle,
		.src_offset = nrn_coff(x, l->src_buf) + l->src_off,
		.dst_offset = nrn_coff(x, l->dst_buf) + l->dst_off,
		.size = l->size,
	};
	return nrn_stream_submit_locked(x->s, &sub);
}

/* The 8-byte tick copy after the stream's last job, signalling @point. */
static int nrn_comm_ready_job(struct nrn_comm_ctx *x, uint64_t point)
{
	struct drm_neuron_sync in = { .handle = x->s->timeline, .point = x->s->point };
	struct drm_neuron_copy cp = {
		.src_handle = x->c->tick->handle, .dst_handle = x->c->tick->handle,
		.src_offset = 0, .dst_offset = 32, .size = 8,
	};
	struct drm_neuron_submit sub = {
		.engine = DRM_NEURON_ENGINE_DMA, .index = x->s->dma,
		.copies = (uintptr_t)&cp, .copy_count = 1,
		.in_syncs = (uintptr_t)&in, .in_sync_count = 1,
		.out_sync = { .handle = x->c->timeline, .point = point },
	};

	return nrn_ioctl(x->c->dev->fd, DRM_IOCTL_NEURON_SUBMIT, &sub);
}

static int nrn_comm_link_job(struct nrn_comm_ctx *x, const struct nrn_comm_job *j)
{
	struct nrn_comm *c = x->c;
	struct nrn_comm_side *d = &x->side[j->dst_rank];
	unsigned int di = j->dst_buf == NRN_CB_SCRATCH;
	struct drm_neuron_sync in[3];
	struct drm_neuron_link_copy cp = {
		.src_handle = nrn_cbuf(x, j->src_buf)->handle,
		.dst_handle = d->handle[di],
		.src_offset = nrn_coff(x, j->src_buf) + j->src_off,
		.dst_offset = d->off[di] + j->dst_off,
		.size = j->size,
		.reduce = j->reduce,
		.dtype = j->reduce ? (uint32_t)x->a->dtype : 0,
	};
	struct drm_neuron_submit sub = {
		.engine = DRM_NEURON_ENGINE_LINK, .index = (uint32_t)c->peer[j->dst_rank].link,
		.copies = (uintptr_t)&cp, .copy_count = 1,
		.in_syncs = (uintptr_t)in, .in_sync_count = 2,
	};
	int ret;

	/* The destination range is the one its owner described. */
	if (!d->handle[di] || j->dst_off > d->len[di] || j->size > d->len[di] - j->dst_off ||
	    c->peer[j->dst_rank].link < 0)
		return -EPROTO;
	in[0] = (struct drm_neuron_sync){ .handle = c->timeline, .point = c->point };
	in[1] = (struct drm_neuron_sync){ .handle = c->peer[j->dst_rank].timeline,
					  .point = d->base };
	ret = nrn_comm_wait_avail(x, j->dst_rank, d->base);
	if (!ret && j->dep >= 0) {
		const struct nrn_comm_job *p = &x->sc.jobs[j->dep];

		in[2] = (struct drm_neuron_sync){ .handle = c->peer[p->rank].timeline,
						  .point = x->side[p->rank].base + 1 + p->idx };
		sub.in_sync_count = 3;
		ret = nrn_comm_wait_avail(x, p->rank, in[2].point);
	}
	if (ret)
		return ret;
	sub.out_sync = (struct drm_neuron_sync){ .handle = c->timeline, .point = c->point + 1 };
	ret = nrn_ioctl(c->dev->fd, DRM_IOCTL_NEURON_SUBMIT, &sub);
	if (ret == -ENOLINK)
		ret = -ENODEV;	/* the link's peer card is gone */
	if (!ret)
		c->point++;
	return ret;
}

static int nrn_comm_scratch(struct nrn_comm *c, uint64_t bytes)
{
	struct nrn_buffer *b;
	int ret;

	if (!bytes || (c->scratch && nrn_buffer_size(c->scratch) >= bytes))
		return 0;
	ret = nrn_buffer_alloc(c->dev, bytes, NRN_MEM_DEVICE, &b);
	if (ret)
		return ret;
	/* Jobs in flight keep the old one's memory until they end. */
	nrn_buffer_free(c->scratch);
	c->scratch = b;
	return 0;
}

static int nrn_comm_run_locked(struct nrn_comm_ctx *x)
{
	struct nrn_comm *c = x->c;
	struct nrn_stream *s = x->s;
	struct drm_neuron_sync in[NRN_COMM_MAX_RANKS + 2];
	struct drm_neuron_sync done = { .handle = c->done };
	unsigned int nin = 0, i;
	uint64_t base;
	int ret, q;

	ret = nrn_comm_scratch(c, x->sc.scratch);
	if (!ret)
		ret = nrn_comm_exchange_msgs(x);
	if (!ret)
		ret = nrn_stream_flush_locked(s);
	/* Prologue: the copies before the ready point (or a tick). */
	for (i = 0, nin = 0; !ret && i < x->sc.nlocal; i++)
		if (!x->sc.local[i].beside)
			ret = nrn_comm_stream_job(x, &x->sc.local[i], &done, nin++ ? 0 : 1);
	if (!ret && !nin)
		ret = nrn_comm_stream_job(x, NULL, &done, 1);
	nin = 0;
	/*
	 * The ready point is a job of its own after the prologue's: the
	 * driver sees an in-fence's error one chain level deep, so a point
	 * transferred from the stream's timeline would hide a failure.
	 */
	base = c->point + 1;
	if (!ret)
		ret = nrn_comm_ready_job(x, base);
	if (ret)
		return ret;
	c->point = base;
	x->side[c->rank].base = base;
	/* After the ready job on the stream's DMA queue, beside the links. */
	for (i = 0; !ret && i < x->sc.nlocal; i++)
		if (x->sc.local[i].beside)
			ret = nrn_comm_stream_job(x, &x->sc.local[i], NULL, 0);
	for (i = 0; i < x->sc.njobs && !ret; i++)
		if (x->sc.jobs[i].rank == c->rank)
			ret = nrn_comm_link_job(x, &x->sc.jobs[i]);
	/* Epilogue: our last point, and the last of all who write into us. */
	in[nin++] = (struct drm_neuron_sync){ .handle = c->timeline, .point = c->point };
	for (q = 0; q < c->nranks && !ret; q++) {
		bool barrier = x->a->coll == NRN_COLL_BARRIER && q != c->rank;

		if (!x->writer[q] && !barrier)
			continue;
		in[nin] = (struct drm_neuron_sync){
			.handle = c->peer[q].timeline,
			.point = x->side[q].base + (barrier ? 0 : x->njobs[q]) };
		ret = nrn_comm_wait_avail(x, q, in[nin].point);
		nin++;
	}
	if (!ret)
		ret = nrn_comm_stream_job(x, NULL, in, nin);
	if (!ret && drmSyncobjTransfer(c->dev->fd, c->done, 0, s->timeline, s->point, 0))
		ret = -errno;
	return ret;
}

/* The schedule, and who writes into us and whom we exchange with. */
static int nrn_comm_plan(struct nrn_comm_ctx *x)
{
	struct nrn_comm *c = x->c;
	int ret, q;

	ret = nrn_comm_schedule(c, x->a, &x->sc);
	if (ret)
		return ret;
	for (unsigned int i = 0; i < x->sc.njobs; i++) {
		const struct nrn_comm_job *j = &x->sc.jobs[i];

		x->njobs[j->rank]++;
		if (j->dst_rank == c->rank)
			x->partner[j->rank] = x->writer[j->rank] = true;
		if (j->rank == c->rank)
			x->partner[j->dst_rank] = true;
	}
	/* The barrier's and all-to-allv's messages go to every rank. */
	for (q = 0; q < c->nranks; q++)
		if (x->a->coll == NRN_COLL_BARRIER || x->a->coll == NRN_COLL_ALL_TO_ALLV)
			x->partner[q] |= q != c->rank;
	return 0;
}

/*
 * The rank whose next message to us is a send to us (or an abort), for
 * nrn_recv_any(): the linked peers' sockets polled and their first
 * message peeked, never taken (nrn_recv() then takes it). A peer whose
 * next message is another collective's is not the sender: it is left out
 * until the deadline, since it is waiting for us in that collective.
 */
int nrn_comm_probe_send(struct nrn_comm *c, int *srcp)
{
	int64_t deadline;
	bool other[NRN_COMM_MAX_RANKS] = { false };
	int ret;

	pthread_mutex_lock(&c->lock);
	deadline = nrn_mono_ns() + c->timeout_ns;
	ret = c->error;
	while (!ret) {
		struct pollfd pfd[NRN_COMM_MAX_RANKS];
		int qs[NRN_COMM_MAX_RANKS], n = 0, linked = 0, r;
		int64_t left = deadline - nrn_mono_ns();

		for (int q = 0; q < c->nranks; q++) {
			if (q == c->rank || c->link_of[q][c->rank] < 0)
				continue;
			linked++;
			if (other[q])
				continue;
			pfd[n] = (struct pollfd){ .fd = c->peer[q].sock, .events = POLLIN };
			qs[n++] = q;
		}
		if (!linked) {
			ret = -ENOLINK;
			break;
		}
		if (left <= 0) {
			ret = -ETIMEDOUT;
			break;
		}
		left = left < NRN_WAIT_SLICE_NS ? left : NRN_WAIT_SLICE_NS;
		r = poll(pfd, (nfds_t)n, (int)(left / 1000000) + 1);
		if (r < 0 && errno != EINTR) {
			ret = -errno;
			break;
		}
		for (int i = 0; i < n && r > 0; i++) {
			struct nrn_comm_msg m;
			ssize_t k;

			if (!pfd[i].revents)
				continue;
			k = recv(pfd[i].fd, &m, sizeof(m), MSG_PEEK | MSG_DONTWAIT);
			if (k == 0 || (k < 0 && errno != EAGAIN && errno != EINTR)) {
				ret = -ECONNRESET;	/* its communicator is gone */
				break;
			}
			if (k != (ssize_t)sizeof(m))
				continue;
			if (m.magic == NRN_MSG_ABORT ||
			    (m.magic == NRN_MSG_MAGIC && m.coll == NRN_COLL_SEND &&
			     m.root == qs[i] && m.peer == c->rank)) {
				*srcp = qs[i];
				pthread_mutex_unlock(&c->lock);
				return 0;
			}
			other[qs[i]] = true;
		}
	}
	pthread_mutex_unlock(&c->lock);
	return ret;
}

int nrn_comm_run(struct nrn_comm *c, struct nrn_stream *s, struct nrn_comm_call *a)
{
	struct nrn_comm_ctx x = { .c = c, .s = s, .a = a };
	bool allv = a->coll == NRN_COLL_ALL_TO_ALLV;
	nrn_comm_split split;
	int ret, q;

	if (nrn_inherited(c->dev) || nrn_inherited(s->dev))
		return -EBADFD;
	/* All-to-allv's schedule needs the other ranks' counts: made below. */
	if (!allv) {
		ret = nrn_comm_plan(&x);
		if (ret)
			return ret;
	}
	pthread_mutex_lock(&c->lock);
	pthread_mutex_lock(&s->lock);
	if (s->capture) {
		/* A graph cannot hold a collective: refused, nothing sent. */
		ret = nrn_stream_refuse_locked(s, -EBUSY);
		goto out;
	}
	x.deadline = nrn_mono_ns() + c->timeout_ns;
	ret = c->error;
	if (!ret && allv) {
		for (q = 0; q < c->nranks; q++)
			x.partner[q] = q != c->rank;
		ret = nrn_comm_exchange_split(&x, &split);
		if (!ret)
			ret = nrn_comm_plan(&x);
	}
	if (!ret)
		ret = nrn_comm_run_locked(&x);
	if (ret) {
		struct nrn_comm_msg m = { .magic = NRN_MSG_ABORT, .error = ret };

		/* Tell the partners once, so they fail now, not at the timeout. */
		for (q = 0; q < c->nranks; q++)
			if (x.partner[q])
				nrn_comm_send_msg(c->peer[q].sock, &m, sizeof(m), NULL, 0);
		c->error = ret;
		if (!s->error)
			s->error = ret;
		ret = 0;	/* reported by the stream's next sync */
	}
out:
	pthread_mutex_unlock(&s->lock);
	pthread_mutex_unlock(&c->lock);
	nrn_comm_sched_fini(&x.sc);
	return ret;
}

// SPDX-License-Identifier: MIT
/*
 * The collectives' public functions: argument checks, then the schedule
 * (comm-sched.c) issued by comm-run.c. AVG is SUM followed by a division
 * by the ranks on each card (one elementwise kernel on the stream).
 */
#include <errno.h>

#include "comm.h"

/* @len bytes at @off of @buf: a device buffer of the comm's card. */
static bool nrn_range_ok(const struct nrn_comm *c, const struct nrn_buffer *buf,
			 uint64_t off, uint64_t len, uint64_t align)
{
	return buf && buf->dev == c->dev && buf->mem == NRN_MEM_DEVICE &&
	       off % align == 0 && off <= buf->size && len <= buf->size - off;
}

static bool nrn_overlap(const struct nrn_buffer *a, uint64_t aoff, uint64_t alen,
			const struct nrn_buffer *b, uint64_t boff, uint64_t blen)
{
	return a == b && aoff < boff + blen && boff < aoff + alen;
}

static int nrn_check(struct nrn_comm *c, struct nrn_stream *s, enum nisa_dtype dtype,
		     uint64_t count)
{
	if (!c || !s || s->dev != c->dev || (unsigned int)dtype >= NISA_NUM_DTYPES ||
	    count > (UINT64_MAX >> 8) / NRN_COMM_MAX_RANKS)
		return -EINVAL;
	return 0;
}

/* The link engine's reduction of @op (AVG: SUM, divided after); -EINVAL. */
static int nrn_link_reduce(enum nrn_reduce_op op, enum nisa_dtype dtype, uint32_t *red)
{
	static const uint32_t map[] = {
		[NRN_REDUCE_SUM] = NISA_REDUCE_SUM, [NRN_REDUCE_PROD] = NISA_REDUCE_PROD,
		[NRN_REDUCE_MAX] = NISA_REDUCE_MAX, [NRN_REDUCE_MIN] = NISA_REDUCE_MIN,
		[NRN_REDUCE_AVG] = NISA_REDUCE_SUM,
	};

	/* The links reduce floating point of these types only. */
	if ((unsigned int)op >= NRN_ARRAY_SIZE(map) ||
	    !nisa_link_reduces_dtype(dtype))
		return -EINVAL;
	*red = map[op];
	return 0;
}

static int nrn_avg(struct nrn_comm *c, struct nrn_stream *s, struct nrn_buffer *buf,
		   uint64_t off, uint64_t count, enum nisa_dtype dtype)
{
	struct nrn_tensor_desc t;
	int64_t shape = (int64_t)count;

	if (!count || c->nranks == 1)
		return 0;
	nrn_tensor_contiguous(&t, buf, off, dtype, 1, &shape);
	return nrn_op_binary_scalar(s, NISA_BIN_DIV, &t, &t, (double)c->nranks, 1.0, 0);
}

/* Two ranges of one call: the same (in place) or apart. */
static int nrn_in_place_or_apart(struct nrn_comm_call *a, uint64_t in_place_recv_off)
{
	const struct nrn_buffer *sb = a->buf[NRN_CB_SEND], *rb = a->buf[NRN_CB_RECV];

	if (sb == rb && a->off[NRN_CB_RECV] == in_place_recv_off)
		return 0;
	return nrn_overlap(sb, a->off[NRN_CB_SEND], a->len[NRN_CB_SEND],
			   rb, a->off[NRN_CB_RECV], a->len[NRN_CB_RECV]) ? -EINVAL : 0;
}

static int nrn_call(struct nrn_comm *c, struct nrn_stream *s, struct nrn_comm_call *a,
		    uint64_t in_place_recv_off, bool check_send)
{
	uint64_t es = nisa_dtype_size(a->dtype);

	if (check_send && !nrn_range_ok(c, a->buf[NRN_CB_SEND], a->off[NRN_CB_SEND],
					a->len[NRN_CB_SEND], es))
		return -EINVAL;
	if (!nrn_range_ok(c, a->buf[NRN_CB_RECV], a->off[NRN_CB_RECV], a->len[NRN_CB_RECV], es))
		return -EINVAL;
	if (check_send && nrn_in_place_or_apart(a, in_place_recv_off))
		return -EINVAL;
	return nrn_comm_run(c, s, a);
}

NRN_EXPORT int nrn_all_reduce(struct nrn_comm *c, struct nrn_stream *s,
			      struct nrn_buffer *send, uint64_t send_off,
			      struct nrn_buffer *recv, uint64_t recv_off,
			      uint64_t count, enum nisa_dtype dtype, enum nrn_reduce_op op)
{
	struct nrn_comm_call a = {
		.coll = NRN_COLL_ALL_REDUCE, .dtype = dtype, .count = count,
		.buf = { send, recv }, .off = { send_off, recv_off },
	};
	int ret = nrn_check(c, s, dtype, count);

	if (!ret)
		ret = nrn_link_reduce(op, dtype, &a.reduce);
	if (ret)
		return ret;
	a.len[NRN_CB_SEND] = a.len[NRN_CB_RECV] = count * nisa_dtype_size(dtype);
	ret = nrn_call(c, s, &a, send_off, true);
	if (!ret && op == NRN_REDUCE_AVG)
		ret = nrn_avg(c, s, recv, recv_off, count, dtype);
	return ret;
}

NRN_EXPORT int nrn_reduce_scatter(struct nrn_comm *c, struct nrn_stream *s,
				  struct nrn_buffer *send, uint64_t send_off,
				  struct nrn_buffer *recv, uint64_t recv_off,
				  uint64_t count, enum nisa_dtype dtype, enum nrn_reduce_op op)
{
	struct nrn_comm_call a = {
		.coll = NRN_COLL_REDUCE_SCATTER, .dtype = dtype, .count = count,
		.buf = { send, recv }, .off = { send_off, recv_off },
	};
	int ret = nrn_check(c, s, dtype, count);
	uint64_t bytes;

	if (!ret)
		ret = nrn_link_reduce(op, dtype, &a.reduce);
	if (ret)
		return ret;
	bytes = count * nisa_dtype_size(dtype);
	a.len[NRN_CB_SEND] = bytes * (uint64_t)c->nranks;
	a.len[NRN_CB_RECV] = bytes;
	ret = nrn_call(c, s, &a, send_off + (uint64_t)c->rank * bytes, true);
	if (!ret && op == NRN_REDUCE_AVG)
		ret = nrn_avg(c, s, recv, recv_off, count, dtype);
	return ret;
}

NRN_EXPORT int nrn_all_gather(struct nrn_comm *c, struct nrn_stream *s,
			      struct nrn_buffer *send, uint64_t send_off,
			      struct nrn_buffer *recv, uint64_t recv_off,
			      uint64_t count, enum nisa_dtype dtype)
{
	struct nrn_comm_call a = {
		.coll = NRN_COLL_ALL_GATHER, .dtype = dtype, .count = count,
		.buf = { send, recv }, .off = { send_off, recv_off },
	};
	int ret = nrn_check(c, s, dtype, count);
	uint64_t bytes;

	if (ret)
		return ret;
	bytes = count * nisa_dtype_size(dtype);
	a.len[NRN_CB_SEND] = bytes;
	a.len[NRN_CB_RECV] = bytes * (uint64_t)c->nranks;
	/* In place: send is block @rank of recv. */
	if (send == recv && send_off >= (uint64_t)c->rank * bytes &&
	    send_off - (uint64_t)c->rank * bytes == recv_off)
		return nrn_call(c, s, &a, recv_off, true);
	return nrn_call(c, s, &a, UINT64_MAX, true);
}

NRN_EXPORT int nrn_broadcast(struct nrn_comm *c, struct nrn_stream *s,
			     struct nrn_buffer *buf, uint64_t off, uint64_t count,
			     enum nisa_dtype dtype, int root)
{
	struct nrn_comm_call a = {
		.coll = NRN_COLL_BROADCAST, .dtype = dtype, .count = count, .root = root,
		.buf = { NULL, buf }, .off = { 0, off },
	};
	int ret = nrn_check(c, s, dtype, count);

	if (ret || root < 0 || root >= c->nranks)
		return ret ? ret : -EINVAL;
	a.len[NRN_CB_RECV] = count * nisa_dtype_size(dtype);
	return nrn_call(c, s, &a, 0, false);
}

NRN_EXPORT int nrn_all_to_all(struct nrn_comm *c, struct nrn_stream *s,
			      struct nrn_buffer *send, uint64_t send_off,
			      struct nrn_buffer *recv, uint64_t recv_off,
			      uint64_t count, enum nisa_dtype dtype)
{
	struct nrn_comm_call a = {
		.coll = NRN_COLL_ALL_TO_ALL, .dtype = dtype, .count = count,
		.buf = { send, recv }, .off = { send_off, recv_off },
	};
	int ret = nrn_check(c, s, dtype, count);

	if (ret)
		return ret;
	a.len[NRN_CB_SEND] = a.len[NRN_CB_RECV] =
		count * nisa_dtype_size(dtype) * (uint64_t)c->nranks;
	/* Not in place: a peer would overwrite a block not yet sent. */
	return nrn_call(c, s, &a, UINT64_MAX, true);
}

NRN_EXPORT int nrn_reduce(struct nrn_comm *c, struct nrn_stream *s,
			  struct nrn_buffer *send, uint64_t send_off,
			  struct nrn_buffer *recv, uint64_t recv_off,
			  uint64_t count, enum nisa_dtype dtype, enum nrn_reduce_op op, int root)
{
	struct nrn_comm_call a = {
		.coll = NRN_COLL_REDUCE, .dtype = dtype, .count = count, .root = root,
		.buf = { send, NULL }, .off = { send_off, 0 },
	};
	int ret = nrn_check(c, s, dtype, count);

	if (!ret)
		ret = nrn_link_reduce(op, dtype, &a.reduce);
	if (ret || root < 0 || root >= c->nranks)
		return ret ? ret : -EINVAL;
	a.len[NRN_CB_SEND] = count * nisa_dtype_size(dtype);
	if (c->rank != root) {
		if (!nrn_range_ok(c, send, send_off, a.len[NRN_CB_SEND], nisa_dtype_size(dtype)))
			return -EINVAL;
		return nrn_comm_run(c, s, &a);
	}
	a.buf[NRN_CB_RECV] = recv;
	a.off[NRN_CB_RECV] = recv_off;
	a.len[NRN_CB_RECV] = a.len[NRN_CB_SEND];
	ret = nrn_call(c, s, &a, send_off, true);
	if (!ret && op == NRN_REDUCE_AVG)
		ret = nrn_avg(c, s, recv, recv_off, count, dtype);
	return ret;
}

/*
 * Gather and scatter: the all-to-alls whose blocks are all in the root's
 * column (row); the root's own block is a local copy. The ranges a rank
 * does not use (the receive range off the root for gather, the send
 * range off it for scatter) are not looked at: NULL is fine.
 */
static int nrn_rooted(struct nrn_comm *c, struct nrn_stream *s, enum nrn_comm_coll coll,
		      struct nrn_buffer *send, uint64_t send_off,
		      struct nrn_buffer *recv, uint64_t recv_off,
		      uint64_t count, enum nisa_dtype dtype, int root)
{
	struct nrn_comm_call a = {
		.coll = coll, .dtype = dtype, .count = count, .root = root,
		.buf = { send, recv }, .off = { send_off, recv_off },
	};
	int ret = nrn_check(c, s, dtype, count);
	uint64_t es = nisa_dtype_size(dtype), bytes = count * es;
	nrn_comm_split split = { { 0 } };
	bool many = c && c->rank == root;	/* the root's side: nranks blocks */

	if (ret || root < 0 || root >= c->nranks)
		return ret ? ret : -EINVAL;
	for (int q = 0; q < c->nranks; q++) {
		if (coll == NRN_COLL_GATHER)
			split[q][root] = count;
		else
			split[root][q] = count;
	}
	a.split = &split;
	a.len[NRN_CB_SEND] = coll == NRN_COLL_SCATTER && many ? bytes * (uint64_t)c->nranks : bytes;
	a.len[NRN_CB_RECV] = coll == NRN_COLL_GATHER && many ? bytes * (uint64_t)c->nranks : bytes;
	if (!many) {
		int used = coll == NRN_COLL_GATHER ? NRN_CB_SEND : NRN_CB_RECV;

		a.buf[!used] = NULL;
		a.off[!used] = 0;
		a.len[!used] = 0;
		if (!nrn_range_ok(c, a.buf[used], a.off[used], a.len[used], es))
			return -EINVAL;
		return nrn_comm_run(c, s, &a);
	}
	/* Not in place: the root's own block is a copy within its buffers. */
	return nrn_call(c, s, &a, UINT64_MAX, true);
}

NRN_EXPORT int nrn_gather(struct nrn_comm *c, struct nrn_stream *s,
			  struct nrn_buffer *send, uint64_t send_off,
			  struct nrn_buffer *recv, uint64_t recv_off,
			  uint64_t count, enum nisa_dtype dtype, int root)
{
	return nrn_rooted(c, s, NRN_COLL_GATHER, send, send_off, recv, recv_off, count,
			  dtype, root);
}

NRN_EXPORT int nrn_scatter(struct nrn_comm *c, struct nrn_stream *s,
			   struct nrn_buffer *send, uint64_t send_off,
			   struct nrn_buffer *recv, uint64_t recv_off,
			   uint64_t count, enum nisa_dtype dtype, int root)
{
	return nrn_rooted(c, s, NRN_COLL_SCATTER, send, send_off, recv, recv_off, count,
			  dtype, root);
}

NRN_EXPORT int nrn_all_to_allv(struct nrn_comm *c, struct nrn_stream *s,
			       struct nrn_buffer *send, uint64_t send_off,
			       const uint64_t *send_counts,
			       struct nrn_buffer *recv, uint64_t recv_off,
			       const uint64_t *recv_counts, enum nisa_dtype dtype)
{
	struct nrn_comm_call a = {
		.coll = NRN_COLL_ALL_TO_ALLV, .dtype = dtype,
		.send_counts = send_counts, .recv_counts = recv_counts,
		.buf = { send, recv }, .off = { send_off, recv_off },
	};
	uint64_t es, nsend = 0, nrecv = 0;
	int ret = nrn_check(c, s, dtype, 0);

	if (ret || !send_counts || !recv_counts)
		return ret ? ret : -EINVAL;
	for (int q = 0; q < c->nranks; q++) {
		if (send_counts[q] > (UINT64_MAX >> 8) / NRN_COMM_MAX_RANKS ||
		    recv_counts[q] > (UINT64_MAX >> 8) / NRN_COMM_MAX_RANKS)
			return -EINVAL;
		nsend += send_counts[q];
		nrecv += recv_counts[q];
	}
	es = nisa_dtype_size(dtype);
	a.len[NRN_CB_SEND] = nsend * es;
	a.len[NRN_CB_RECV] = nrecv * es;
	/* Not in place: a peer would overwrite a block not yet sent. */
	return nrn_call(c, s, &a, UINT64_MAX, true);
}

static int nrn_p2p(struct nrn_comm *c, struct nrn_stream *s, struct nrn_buffer *buf,
		   uint64_t off, uint64_t bytes, int sender, int receiver)
{
	struct nrn_comm_call a = {
		.coll = NRN_COLL_SEND, .dtype = NISA_U8, .count = bytes,
		.root = sender, .peer = receiver,
	};
	int ret = nrn_check(c, s, NISA_U8, bytes);
	int me = sender == c->rank ? NRN_CB_SEND : NRN_CB_RECV;

	if (ret || sender < 0 || receiver < 0 || sender >= c->nranks ||
	    receiver >= c->nranks || sender == receiver)
		return ret ? ret : -EINVAL;
	/* Point to point needs a direct link (no forwarding: -ENOLINK). */
	if (c->link_of[sender][receiver] < 0)
		return -ENOLINK;
	a.buf[me] = buf;
	a.off[me] = off;
	a.len[me] = bytes;
	if (!nrn_range_ok(c, buf, off, bytes, 1))
		return -EINVAL;
	return nrn_comm_run(c, s, &a);
}

NRN_EXPORT int nrn_send(struct nrn_comm *c, struct nrn_stream *s, struct nrn_buffer *buf,
			uint64_t off, uint64_t bytes, int peer)
{
	return nrn_p2p(c, s, buf, off, bytes, c ? c->rank : -1, peer);
}

NRN_EXPORT int nrn_recv(struct nrn_comm *c, struct nrn_stream *s, struct nrn_buffer *buf,
			uint64_t off, uint64_t bytes, int peer)
{
	return nrn_p2p(c, s, buf, off, bytes, peer, c ? c->rank : -1);
}

NRN_EXPORT int nrn_recv_any(struct nrn_comm *c, struct nrn_stream *s, struct nrn_buffer *buf,
			    uint64_t off, uint64_t bytes, int *src)
{
	int ret = nrn_check(c, s, NISA_U8, bytes), q;

	if (ret || !src)
		return ret ? ret : -EINVAL;
	if (!nrn_range_ok(c, buf, off, bytes, 1))
		return -EINVAL;
	ret = nrn_comm_probe_send(c, &q);
	if (ret)
		return ret;
	*src = q;
	return nrn_p2p(c, s, buf, off, bytes, q, c->rank);
}

NRN_EXPORT int nrn_barrier(struct nrn_comm *c, struct nrn_stream *s)
{
	struct nrn_comm_call a = { .coll = NRN_COLL_BARRIER };

	if (!c || !s || s->dev != c->dev)
		return -EINVAL;
	return nrn_comm_run(c, s, &a);
}

/* SPDX-License-Identifier: MIT */
/*
 * Communicators (docs/collectives.md): comm.c sets them up (rendezvous
 * over abstract Unix sockets, syncobj and dma-buf fd passing),
 * comm-sched.c builds each collective's schedule of link jobs (the ring
 * algorithms), comm-run.c submits a rank's part of it, comm-coll.c has the
 * public collectives.
 */
#ifndef NRN_COMM_H
#define NRN_COMM_H

#include "internal.h"

#define NRN_COMM_MAX_RANKS	16
/* Buffers of one owner a peer keeps imported (owner-managed slots). */
#define NRN_COMM_CACHE		16
/* Link jobs of one rank in one collective, at most. */
#define NRN_COMM_MAX_JOBS	(1u << 20)
/* Bytes one link job moves at most: the pipeline's piece. */
#define NRN_COMM_PIECE		(4u << 20)
#define NRN_COMM_DEFAULT_TIMEOUT_NS	(30ll * 1000 * 1000 * 1000)

struct nrn_comm_peer {
	int sock;			/* the connection to that rank (-1: self) */
	uint32_t fabric_rank;
	uint32_t timeline;		/* its timeline, imported into our file */
	int link;			/* our link to it, -1 when none */
	/* Messages exchanged with it (both sides count the same). */
	uint64_t seq;
	/* Our buffers it has imported, by slot: dma-buf inode, last use. */
	uint64_t sent_key[NRN_COMM_CACHE];
	uint64_t sent_use[NRN_COMM_CACHE];
	uint32_t sent_handle[NRN_COMM_CACHE];	/* our GEM handle of it */
	/* Its buffers we imported, by slot (its slots): inode, our handle. */
	uint64_t got_key[NRN_COMM_CACHE];
	uint32_t got_handle[NRN_COMM_CACHE];
};

struct nrn_comm {
	struct nrn_device *dev;
	int rank;
	int nranks;
	int64_t timeout_ns;
	/* Serialises the collectives' submission (one at a time per rank). */
	pthread_mutex_t lock;
	/*
	 * Our timeline: per collective a ready point (the stream's prior
	 * work and our local copies), then one point per link job.
	 */
	uint32_t timeline;
	uint64_t point;
	/* Binary syncobj: the fence of our last collective's final job. */
	uint32_t done;
	/* Sticky: once a collective failed, every later one fails with it. */
	int error;
	/* 64 bytes the prologue/epilogue jobs copy within (fence joins). */
	struct nrn_buffer *tick;
	/* Scratch device memory of the forwarding collectives, grown on demand. */
	struct nrn_buffer *scratch;
	uint64_t use_clock;
	/* Ring order: ring[pos] is a rank; pos is this rank's position. */
	int ring[NRN_COMM_MAX_RANKS];
	int pos;
	/* link_of[a][b]: rank a's link to rank b, -1 when none. */
	int8_t link_of[NRN_COMM_MAX_RANKS][NRN_COMM_MAX_RANKS];
	struct nrn_comm_peer peer[NRN_COMM_MAX_RANKS];
};

/* What a rank's buffers are in a collective (job operands). */
enum nrn_comm_buf {
	NRN_CB_SEND = 0,
	NRN_CB_RECV = 1,
	NRN_CB_SCRATCH = 2,
	NRN_CB_TICK = 3,		/* never remote */
	NRN_CB_NUM
};

/* One link job of a schedule: @rank's link to @dst_rank. */
struct nrn_comm_job {
	uint8_t rank;
	uint8_t dst_rank;
	uint8_t src_buf;		/* enum nrn_comm_buf of @rank */
	uint8_t dst_buf;		/* enum nrn_comm_buf of @dst_rank (RECV/SCRATCH) */
	uint8_t reduce;			/* enum nisa_link_reduce */
	uint64_t src_off;		/* bytes from the buffer's base offset */
	uint64_t dst_off;
	uint64_t size;
	int32_t dep;			/* index of the job it waits for, -1: none */
	uint32_t idx;			/* its index among @rank's jobs */
};

/*
 * A local DMA copy, before the ready point (stream order), or @beside the
 * link jobs, after it, when no link job touches its ranges (the all-to-
 * alls' own block): the DMA engine copies while the links move.
 */
struct nrn_comm_local {
	uint8_t src_buf, dst_buf;
	bool beside;
	uint64_t src_off, dst_off, size;
};

enum nrn_comm_coll {
	NRN_COLL_ALL_REDUCE = 1,
	NRN_COLL_REDUCE_SCATTER,
	NRN_COLL_ALL_GATHER,
	NRN_COLL_BROADCAST,
	NRN_COLL_ALL_TO_ALL,
	NRN_COLL_SEND,			/* the sender's view of a send/recv pair */
	NRN_COLL_BARRIER,
	NRN_COLL_REDUCE,		/* to @root */
	NRN_COLL_GATHER,		/* to @root */
	NRN_COLL_SCATTER,		/* from @root */
	NRN_COLL_ALL_TO_ALLV,		/* blocks of every size: @split */
};

/*
 * Elements rank S sends rank D in an all-to-all of any block sizes, rank
 * S's blocks packed in D order in its send range and rank D's in S order
 * in its receive range. Gather and scatter are the all-to-alls whose only
 * non-empty column (row) is the root's.
 */
typedef uint64_t nrn_comm_split[NRN_COMM_MAX_RANKS][NRN_COMM_MAX_RANKS];

/* A collective as one rank issues it. */
struct nrn_comm_call {
	enum nrn_comm_coll coll;
	enum nisa_dtype dtype;
	uint32_t reduce;		/* enum nisa_link_reduce */
	uint64_t count;
	int root;			/* broadcast: root; send/recv: sender */
	int peer;			/* send/recv: the receiver */
	/* Gather, scatter, all-to-all (NULL: @count each); all-to-allv's
	 * is only known once the ranks exchanged their rows (comm-run.c). */
	nrn_comm_split *split;
	/* All-to-allv: this rank's send and receive counts, by rank. */
	const uint64_t *send_counts, *recv_counts;
	struct nrn_buffer *buf[NRN_CB_NUM];
	uint64_t off[NRN_CB_NUM];
	uint64_t len[NRN_CB_NUM];	/* bytes of each buffer's range */
};

struct nrn_comm_sched {
	struct nrn_comm_job *jobs;
	unsigned int njobs;
	unsigned int cap;
	/* This rank's local copies, before its ready point. */
	struct nrn_comm_local local[2];
	unsigned int nlocal;
	/* Scratch bytes every rank needs. */
	uint64_t scratch;
};

/* comm-sched.c: the whole collective's jobs, every rank's, in a
 * submission order that is a topological order of the dependencies. */
int nrn_comm_schedule(const struct nrn_comm *c, const struct nrn_comm_call *call,
		      struct nrn_comm_sched *sc);
void nrn_comm_sched_fini(struct nrn_comm_sched *sc);

/* comm-run.c: issue this rank's part of @call on @s. */
/* nrn_recv_any()'s sender: the linked rank whose next message is a send to us. */
int nrn_comm_probe_send(struct nrn_comm *c, int *srcp);
int nrn_comm_run(struct nrn_comm *c, struct nrn_stream *s,
		 struct nrn_comm_call *call);

/* comm.c: socket messages with fds, bounded by an absolute deadline. */
int64_t nrn_comm_deadline(const struct nrn_comm *c);
int nrn_comm_send_msg(int sock, const void *msg, size_t len,
		      const int *fds, unsigned int nfds);
int nrn_comm_recv_msg(int sock, void *msg, size_t len, int *fds,
		      unsigned int maxfds, unsigned int *nfds, int64_t deadline);

#endif /* NRN_COMM_H */

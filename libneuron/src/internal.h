/* SPDX-License-Identifier: MIT */
/* libneuron internals: object layouts and helpers shared by src/. */
#ifndef NRN_INTERNAL_H
#define NRN_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <drm/neuron_accel.h>
#include "libneuron.h"

#define NRN_EXPORT __attribute__((visibility("default")))
#define __cold __attribute__((cold))
#define NRN_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))


struct nrn_device {
	int fd;
	/* nrn_fork_generation when opened (fork.c). */
	unsigned int fork_gen;
	struct nrn_device_info info;
	/* Picks the queues of new streams, round robin. */
	atomic_uint next_queue;
	/* Protects the lazily created default stream. */
	pthread_mutex_t lock;
	struct nrn_stream *stream;
	/*
	 * Buffers exported or imported (buffer.c), by GEM handle: importing
	 * a dma-buf of one of them gives the same handle, so the same buffer.
	 */
	pthread_mutex_t shared_lock;
	struct nrn_buffer *shared;
};

struct nrn_buffer {
	struct nrn_device *dev;
	/* The user's reference plus one per unsubmitted batch using it. */
	atomic_int refs;
	uint32_t handle;
	enum nrn_mem mem;
	size_t size;
	uint64_t mmap_offset;
	/* Mapped once on demand; @map_lock makes that once. */
	pthread_mutex_t map_lock;
	void *map;
	/* On @dev->shared (under its shared_lock, as are @refs then). */
	atomic_bool shared;
	struct nrn_buffer *next_shared;
};

struct nrn_graph_origins;

struct nrn_kernel {
	unsigned int nslots;
	unsigned int count;
	unsigned int cap;
	struct nisa_insn *insns;
};

/* A region of a stream's ring buffer in use until its point completes. */
struct nrn_ring_use {
	size_t start;
	size_t end;
	uint64_t point;
};

#define NRN_RING_USES 64

/* Device memory for kernel code, or host memory for staging, as a ring. */
struct nrn_ring {
	struct nrn_buffer *buf;
	uint8_t *map;
	size_t size;
	size_t head;
	struct nrn_ring_use uses[NRN_RING_USES];
	unsigned int first;
	unsigned int count;
};

/*
 * A run of consecutive instructions of a job that a graph launch issued
 * (stream-sites.c): job instructions @job_insn .. + @len are the graph's
 * launch instructions @graph_insn .. + @len.
 */
struct nrn_site_run {
	uint64_t cookie;		/* the job's SUBMIT cookie; 0 until submitted */
	uint64_t graph_id;
	unsigned int job_insn, len, graph_insn;
	struct nrn_graph_origins *origins;	/* a reference */
};

struct nrn_stream {
	struct nrn_device *dev;
	/* Serialises everything below: the stream is in order. */
	pthread_mutex_t lock;
	uint32_t core;
	uint32_t dma;
	/* Timeline syncobj: job i of the stream signals point i. */
	uint32_t timeline;
	uint64_t point;
	/* The point the next job waits for (0 for none: after an error). */
	uint64_t dep;
	/* Binary syncobjs of events the next job must also wait for. */
	uint32_t waits[DRM_NEURON_MAX_SYNCS - 1];
	unsigned int nwaits;
	unsigned int device_error;
	/* Where the error behind the last -EIO of a sync happened, if known. */
	struct nrn_error_site site;
	bool has_site;
	/*
	 * Cookies of its jobs: @serial (unique in the process) in the top 24
	 * bits, a count of its submissions below (stream-sites.c).
	 */
	uint64_t serial;
	uint64_t submits;
	/*
	 * Runs of graph-issued instructions in the jobs submitted since the
	 * last synchronisation, then those of the batch being built (from
	 * @runs_pending on, cookie 0).
	 */
	struct nrn_site_run *runs;
	unsigned int nruns, runs_cap, runs_pending;
	/*
	 * An error of work issued that never reached the card (a collective
	 * whose peers did not take part, comm-run.c): the next sync returns it.
	 */
	int error;

	/*
	 * Operations not yet submitted: one kernel, and its buffers; and the
	 * element operations of its instructions (nrn_stream_batch_full_locked).
	 */
	struct nrn_kernel batch;
	uint64_t batch_work;
	/* Instructions the batch takes before it is submitted: NRN_BATCH_MAX_OPS,
	 * more while a resident graph is issued alone (graph.c). */
	unsigned int batch_max;
	struct nrn_buffer *slots[DRM_NEURON_MAX_BOS];
	uint32_t access[DRM_NEURON_MAX_BOS];

	struct nrn_ring code;
	struct nrn_ring staging;

	/*
	 * While capturing (graph.h): instructions and copies are recorded
	 * here, nothing is submitted; the batch's slots are bound one per
	 * operand (not shared) and released at each recorded instruction.
	 */
	struct nrn_capture *capture;
	/* Instructions of the EXPR group being recorded still to come. */
	unsigned int cap_group;
	/* Bindings (slots) an operand of the instruction/group has named. */
	uint64_t cap_claimed;
};

/* fork.c: bumped in each child fork() makes; devices open in this process. */
extern atomic_uint nrn_fork_generation;
extern atomic_int nrn_devices_open;

/*
 * Was @dev opened before a fork() that made this process? Its file, locks
 * and mappings are then the parent's: every call on it fails with -EBADFD.
 */
static inline bool nrn_inherited(const struct nrn_device *dev)
{
	return dev->fork_gen !=
	       atomic_load_explicit(&nrn_fork_generation, memory_order_relaxed);
}

/* ioctl() that retries EINTR/EAGAIN and returns 0 or -errno. */
int nrn_ioctl(int fd, unsigned long request, void *arg);

void nrn_buffer_get(struct nrn_buffer *buf);
void nrn_buffer_put(struct nrn_buffer *buf);

int nrn_kernel_init(struct nrn_kernel *k, unsigned int nslots);
void nrn_kernel_fini(struct nrn_kernel *k);
int nrn_kernel_push(struct nrn_kernel *k, const struct nisa_insn *insn);

/* A ring of @size bytes of mapped memory. */
int nrn_ring_init(struct nrn_device *dev, struct nrn_ring *r, size_t size,
		  enum nrn_mem where);

/* stream.c, all with s->lock held. */
int nrn_stream_flush_locked(struct nrn_stream *s);
int nrn_stream_sync_locked(struct nrn_stream *s);
/* @submit's own in-syncs (if any) are kept, the stream's added. */
int nrn_stream_submit_locked(struct nrn_stream *s,
			     struct drm_neuron_submit *submit);
int nrn_stream_wait_point_locked(struct nrn_stream *s, uint64_t point);
/* A region of @len bytes of @ring, waiting for its previous user if needed. */
int nrn_ring_alloc_locked(struct nrn_stream *s, struct nrn_ring *ring,
			  size_t len, size_t align, size_t *off);
/* Mark the region just allocated as used by the next submitted point. */
void nrn_ring_commit_locked(struct nrn_stream *s, struct nrn_ring *ring,
			    size_t off, size_t len);
/* The batch slot bound to @buf with @access, adding it (flushing if full). */
int nrn_stream_slot_locked(struct nrn_stream *s, struct nrn_buffer *buf,
			   uint32_t access, unsigned int *slot);
/* Append one instruction to the batch (flushing when it is full). */
int nrn_stream_push_locked(struct nrn_stream *s, const struct nisa_insn *insn);
/* Element operations of @insn: its result's elements, times the inner
 * dimension of a MATMUL (what NRN_BATCH_MAX_WORK counts). */
uint64_t nrn_insn_work(const struct nisa_insn *insn);
/*
 * Whether the batch has no room for an operation of @len instructions
 * (NRN_BATCH_MAX_OPS) or carries NRN_BATCH_MAX_WORK already: the caller
 * flushes it before binding the operation's buffers.
 */
bool nrn_stream_batch_full_locked(const struct nrn_stream *s, unsigned int len);
/*
 * A call that cannot be recorded on a capturing stream: remembers @err as
 * the capture's error (graph.h) and returns it.
 */
int nrn_stream_refuse_locked(struct nrn_stream *s, int err);

/* stream-sites.c, all with s->lock held. */
/* The cookie of @s's next submission. */
uint64_t nrn_sites_next_cookie(struct nrn_stream *s);
/* The batch's next instruction is graph @id's launch instruction @graph_insn. */
int nrn_sites_note_locked(struct nrn_stream *s, uint64_t id,
			  struct nrn_graph_origins *origins, unsigned int graph_insn);
/* An empty batch's job is graph @id's launch instructions 0..@n-1. */
int nrn_sites_note_run_locked(struct nrn_stream *s, uint64_t id,
			      struct nrn_graph_origins *origins, unsigned int n);
/* The instruction just noted was not pushed after all. */
void nrn_sites_unnote_locked(struct nrn_stream *s);
/* The batch was submitted with @cookie (0: it was not: its runs go). */
void nrn_sites_commit_locked(struct nrn_stream *s, uint64_t cookie);
/*
 * A sync's wait returned @ret with the device's @code, @insn and @cookie:
 * record the site of an -EIO, then forget the submitted jobs' runs.
 */
void nrn_sites_sync_locked(struct nrn_stream *s, int ret, unsigned int code,
			   uint32_t insn, uint64_t cookie);
void nrn_sites_fini(struct nrn_stream *s);

/*
 * ops.c, for the other ops-*.c files: check a descriptor against @s, and
 * encode one instruction whose @n operands (dst first) need no reshaping
 * (at most NISA_MAX_DIMS dims each; nothing is emitted if one is empty).
 */
int nrn_check_tensor(struct nrn_stream *s, const struct nrn_tensor_desc *t);
int nrn_emit_plain(struct nrn_stream *s, struct nisa_insn *in,
		   const struct nrn_tensor_desc *const *ts,
		   const uint32_t *access, unsigned int n);
/* nrn_emit_plain, emitting nothing if an operand in @empty_ok (a mask) is empty. */
int nrn_emit_plain_if(struct nrn_stream *s, struct nisa_insn *in,
		      const struct nrn_tensor_desc *const *ts,
		      const uint32_t *access, unsigned int n, unsigned int empty_ok);
/* nrn_emit_plain for GATHER/SCATTER_ADD/SCATTER, splitting operands of more dims. */
int nrn_emit_indexed(struct nrn_stream *s, struct nisa_insn *in,
		     const struct nrn_tensor_desc *const *ts, const uint32_t *access);

#endif /* NRN_INTERNAL_H */

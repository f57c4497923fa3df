/* SPDX-License-Identifier: MIT */
/*
 * Captured graphs inside libneuron: the capture a stream records, the IR
 * between capture and emission (what passes such as fusion work on), and
 * the compiled graph a launch issues.
 *
 * Pipeline (graph-compile.c): capture -> IR (every operand assigned to a
 * REGION: an argument, the constants, or a scratch object) -> checks ->
 * optional nrn_graph_fuse() -> liveness -> arena planning -> graph.
 */
#ifndef NRN_GRAPH_H
#define NRN_GRAPH_H

#include <stdint.h>

#include "internal.h"

/* Operands of an instruction: 0 = dst, 1..3 = src[0..2]. */
#define NRN_GRAPH_OPNDS 4
/* Region / buffer index of an operand the instruction does not use. */
#define NRN_GRAPH_NONE UINT32_MAX

/* ---- The capture (graph-capture.c) ---- */

/* Buffer index of a captured operand that reads the capture's constants. */
#define NRN_CAPTURE_CONST (UINT32_MAX - 1)

struct nrn_capture_insn {
	/* Operand offsets are offsets into their buffer; slots unused (0). */
	struct nisa_insn insn;
	/* Index into nrn_capture.bufs, NRN_CAPTURE_CONST or NRN_GRAPH_NONE. */
	uint32_t buf[NRN_GRAPH_OPNDS];
	uint32_t access[NRN_GRAPH_OPNDS];	/* NISA_ACCESS_* */
};

struct nrn_capture {
	struct nrn_device *dev;
	unsigned int flags;		/* NRN_CAPTURE_* */
	int error;			/* the first error of a refused call */
	struct nrn_capture_insn *insns;
	unsigned int count, cap;
	struct nrn_buffer **bufs;	/* each holds a reference */
	unsigned int nbufs, bufs_cap;
	uint8_t *consts;		/* constants, each 64-byte aligned */
	uint64_t const_size, const_cap;
};

/* All with the capturing stream's lock held. */
/* Remember @err as the capture's error (the first one wins); returns @err. */
int nrn_capture_fail(struct nrn_capture *c, int err);
/*
 * Record @insn with its operands' buffers (NULL: unused, or @is_const[i]
 * set: the operand's offset is into the capture's constants), access.
 */
int nrn_capture_record(struct nrn_capture *c, const struct nisa_insn *insn,
		       struct nrn_buffer *const *bufs, const bool *is_const,
		       const uint32_t *access);
/* Append @len bytes of constants; their offset in the pool into *@off. */
int nrn_capture_add_const(struct nrn_capture *c, const void *p, uint64_t len,
			  uint64_t *off);
/* Record a byte copy (COPY instructions of U8 elements). */
int nrn_capture_copy(struct nrn_capture *c, struct nrn_buffer *dst,
		     uint64_t dst_off, struct nrn_buffer *src, bool src_const,
		     uint64_t src_off, uint64_t len);
/* Record the instructions of kernel @k launched with @bufs / @access. */
int nrn_capture_kernel(struct nrn_capture *c, const struct nrn_kernel *k,
		       struct nrn_buffer *const *bufs, const uint32_t *access);

/* ---- The IR (graph-compile.c builds it, passes rewrite it) ---- */

enum nrn_region_kind {
	NRN_REGION_ARG = 0,	/* argument @arg: bound at launch */
	NRN_REGION_CONST,	/* the graph's constants */
	NRN_REGION_SCRATCH,	/* produced and consumed by the graph: arena */
};

struct nrn_graph_region {
	enum nrn_region_kind kind;
	unsigned int arg;	/* NRN_REGION_ARG: the argument index */
	/*
	 * Bytes of the region. ARG: the argument's size; CONST: the pool's;
	 * SCRATCH: the object's size, a multiple of 64.
	 */
	uint64_t size;
	/*
	 * Liveness, recomputed by nrn_graph_ir_liveness(): the first and last
	 * instruction (index into ir->insns) with an operand in the region
	 * (-1 when none; an EXPR group counts as a whole: from its EXPR to its
	 * last continuation), the number of such operands, and the union of
	 * their access.
	 */
	int first, last;
	unsigned int uses;
	uint32_t access;
	/* SCRATCH after planning: the object's offset in the arena. */
	uint64_t arena_off;
};

/*
 * An EXPR and its EXPR_DATA continuations are consecutive instructions (a
 * group: launch never splits it between submissions). An INPUTS
 * continuation's dst and sources are inputs (access READ); a STEPS
 * continuation's only operand is its dst -- the EXPR's dst again, same
 * region, offset and access -- and its sources' bytes are step data, never
 * touched by relocation (region NRN_GRAPH_NONE).
 */
struct nrn_graph_insn {
	/*
	 * The instruction. Each used operand's @offset is relative to the
	 * start of its region (which, for an argument, is the argument's
	 * offset; for scratch, the object's first byte; for constants, the
	 * pool's start); a used operand's @slot is meaningless here (0).
	 */
	struct nisa_insn insn;
	/* Region index per operand (dst, src0..2), NRN_GRAPH_NONE if unused. */
	uint32_t region[NRN_GRAPH_OPNDS];
	uint32_t access[NRN_GRAPH_OPNDS];	/* NISA_ACCESS_* per operand */
	/*
	 * The captured instruction this one comes from (its index in capture
	 * order): passes that move or rewrite an instruction keep it; an
	 * EXPR group fusion makes takes its chain's first captured one.
	 */
	uint32_t origin;
};

struct nrn_graph_ir {
	struct nrn_graph_insn *insns;	/* malloc()ed (realloc()able), @ninsns */
	unsigned int ninsns;
	unsigned int captured;		/* instructions captured */
	struct nrn_graph_region *regions;
	unsigned int nregions;
	unsigned int nargs;		/* regions 0 .. nargs-1 are the arguments */
	/* Captured instructions merged away by passes (fusion sets it). */
	unsigned int fused;
};

/* Recompute every region's first/last/uses/access from ir->insns. */
void nrn_graph_ir_liveness(struct nrn_graph_ir *ir);

/*
 * The fusion pass (graph-fuse.c), run when NRN_GRAPH_FUSE is given:
 * replaces chains of elementwise instructions whose intermediates are
 * SCRATCH regions used only inside the chain with EXPR groups. It may
 * rewrite, remove and insert instructions (ir->insns may be realloc()ed,
 * ir->ninsns changes) and must set each operand's region and access (the
 * offsets relative to the regions, as above); it adds the number of
 * captured instructions it merged into EXPRs to ir->fused. Liveness is valid on entry (nrn_graph_ir_liveness() was
 * called) and recomputed after the pass, before the arena is planned; a
 * scratch region left without uses takes no arena space. 0 or -errno (the
 * compilation then fails with it).
 */
int nrn_graph_fuse(struct nrn_graph_ir *ir);

/*
 * The scheduling passes (graph-sched.c), run before fusion when
 * NRN_GRAPH_FUSE is given; each keeps every value the graph computes and
 * may move, rewrite and remove instructions as nrn_graph_fuse() may.
 * nrn_graph_forward_copies(): a plain COPY of a scratch value into its
 * final place (AOTAutograd's copy-back of an in-place update) goes: the
 * instruction that made the value writes the place itself. Adds the
 * copies removed to ir->fused.
 * nrn_graph_cluster(): each elementwise instruction's first consumer is
 * moved next to it when nothing between them orders them (a foreach
 * operation's per-tensor chains are interleaved), so that fusion finds
 * the chain as one run.
 */
int nrn_graph_forward_copies(struct nrn_graph_ir *ir);
int nrn_graph_cluster(struct nrn_graph_ir *ir);

/* ---- Operand helpers the passes share (graph-fuse.c) ---- */

/* Operand @i of @in: 0 the dst, 1..3 src[0..2]. */
const struct nisa_tensor *nrn_fopnd(const struct nisa_insn *in, unsigned int i);
/* Operand @i of @x and operand @j of @y: the same region and tensor. */
bool nrn_same_opnd(const struct nrn_graph_insn *x, unsigned int i,
		   const struct nrn_graph_insn *y, unsigned int j);
/* The byte extents of @a and @b intersect; @a's contains @b's. */
bool nrn_overlap(const struct nisa_tensor *a, const struct nisa_tensor *b);
bool nrn_covers(const struct nisa_tensor *a, const struct nisa_tensor *b);
/*
 * No two elements of @t share bytes (sufficient test: with its dims of
 * extent > 1 sorted by stride, each stride exceeds the span of the inner
 * ones). Memory written through a self-overlapping dst holds the last
 * value written to each byte.
 */
bool nrn_no_self_overlap(const struct nisa_tensor *t);
/* An elementwise instruction an EXPR step can express (no plain COPY). */
bool nrn_fusable(const struct nrn_graph_insn *gi);
uint64_t nrn_numel(const struct nisa_tensor *t);

/* ---- The compiled graph (graph.c launches, graph-file.c serializes) ---- */

/* Operand bases of a compiled instruction besides argument indices. */
#define NRN_GRAPH_BASE_ARENA (UINT32_MAX - 1)
#define NRN_GRAPH_BASE_CONST (UINT32_MAX - 2)

struct nrn_graph_argi {
	uint64_t size;
	uint32_t access;	/* NISA_ACCESS_* union */
	uint32_t align;		/* launch offsets must be == phase mod align */
	uint32_t phase;
	uint32_t rsvd;
};

struct nrn_graph_op {
	/* Per operand: an argument index, NRN_GRAPH_BASE_*, or NRN_GRAPH_NONE. */
	uint32_t base[NRN_GRAPH_OPNDS];
	uint32_t access[NRN_GRAPH_OPNDS];
};

/* A device's copy of the constants. */
struct nrn_graph_cbuf {
	struct nrn_device *dev;
	struct nrn_buffer *buf;
	struct nrn_graph_cbuf *next;
};

/*
 * Per launch instruction, the captured instruction it was compiled from
 * (struct nrn_graph_insn's @origin). Reference counted: the graph holds
 * one, and so does each record of a submitted job it issued instructions
 * into (stream-sites.c), which may outlive the graph.
 */
struct nrn_graph_origins {
	atomic_uint refs;
	unsigned int n;
	uint32_t idx[];
};

void nrn_graph_origins_put(struct nrn_graph_origins *o);

struct nrn_graph {
	/* nrn_graph_id(): unique in the process, never 0. */
	uint64_t id;
	unsigned int nargs, ninsns, captured, fused;
	struct nrn_graph_origins *origins;
	uint64_t arena_size;
	struct nrn_graph_argi *args;
	/* Operand offsets relative to their base (argument, arena, pool). */
	struct nisa_insn *insns;
	struct nrn_graph_op *ops;
	uint8_t *consts;
	uint64_t const_size;
	/* Protects @cbufs, created on first launch on a device, and @job. */
	pthread_mutex_t lock;
	struct nrn_graph_cbuf *cbufs;
	/* The last launch's operands, and its resident kernel (graph-resident.c). */
	struct nrn_graph_job *job;
};

/*
 * Resident launches (graph-resident.c), with @s's lock held: 0 when @g ran
 * as its resident job, -EAGAIN when it is to be issued (with *@snapshot
 * set when this launch repeats the last one's operands: issue it into a
 * batch of its own and call nrn_graph_job_snapshot_locked() before the
 * batch is submitted), another -errno when the submission failed.
 */
int nrn_graph_job_launch_locked(struct nrn_stream *s, const struct nrn_graph *g,
				const struct nrn_graph_arg *args, struct nrn_buffer *arena,
				uint64_t arena_off, bool *snapshot);
void nrn_graph_job_snapshot_locked(struct nrn_stream *s, const struct nrn_graph *g,
				   const struct nrn_graph_arg *args,
				   struct nrn_buffer *arena, uint64_t arena_off);
/* Write a snapshot's kernel to device memory; without the stream's lock. */
void nrn_graph_job_upload(const struct nrn_graph *g, struct nrn_device *dev);
void nrn_graph_job_free(struct nrn_graph_job *j);
/* Whether a launch of @g like its last one runs as its resident job. */
bool nrn_graph_job_resident(const struct nrn_graph *g);

/*
 * Instructions from @in on (at most @left) that act as one: an EXPR and its
 * continuations, else 1. A unit is issued in one submission and its
 * operands are live over all of it.
 */
unsigned int nrn_insn_unit(const struct nisa_insn *in, unsigned int left);
/* Byte extent [*lo, *hi) an operand touches; false if it touches nothing. */
bool nrn_tensor_extent(const struct nisa_tensor *t, int64_t *lo, int64_t *hi);
/* An empty graph of these sizes (arrays allocated, zeroed); NULL: -ENOMEM. */
struct nrn_graph *nrn_graph_alloc(unsigned int nargs, unsigned int ninsns,
				  uint64_t const_size);
/*
 * Check a graph's contents (every operand's extent within its base, bases
 * valid, origins captured instructions): -EBADMSG if not. Used on
 * deserialized graphs.
 */
int nrn_graph_validate(const struct nrn_graph *g);

#endif /* NRN_GRAPH_H */

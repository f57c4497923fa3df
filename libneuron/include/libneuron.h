/* SPDX-License-Identifier: MIT */
/*
 * libneuron: the user-space HAL of the virtual Trainium card.
 *
 * Conventions: every function that can fail returns 0 (or a count) on
 * success and a negative errno on failure; nrn_strerror() explains it.
 * Objects are opaque; all functions are thread-safe unless a comment says
 * otherwise. Each nrn_device is independent and devices are enumerated
 * from sysfs on each call; the only process-wide state is what fork()
 * needs (nrn_forked()).
 */
#ifndef LIBNEURON_H
#define LIBNEURON_H

#include <stddef.h>
#include <stdint.h>

#include <neuron_isa.h>	/* enum nisa_dtype, nisa_unary, ... (the ISA) */

#ifdef __cplusplus
extern "C" {
#endif

#define NRN_VERSION_MAJOR 0
#define NRN_VERSION_MINOR 1

struct nrn_device;
struct nrn_buffer;
struct nrn_stream;
struct nrn_event;
struct nrn_kernel;

/* ---- Devices ---------------------------------------------------------- */

/* Everything GET_PARAM reports, plus where the card is. */
struct nrn_device_info {
	unsigned int index;		/* libneuron's device index */
	unsigned int minor;		/* N of /dev/accel/accelN */
	char pci_address[16];		/* "0000:01:00.0" */
	char driver[16];		/* kernel driver name */
	char driver_version[16];	/* "major.minor.patch" */
	uint32_t device_id;		/* PCI device ID */
	uint32_t revision;		/* PCI revision */
	uint32_t model_version;		/* major << 16 | minor */
	uint64_t capabilities;		/* DRM_NEURON_CAP_* */
	uint32_t num_cores;
	uint32_t num_dma_queues;
	uint64_t mem_size;		/* device memory, bytes */
	uint64_t mem_free;		/* device memory not allocated, bytes */
	uint32_t isa_version;
	/* Links (docs/hardware.md "Links"); all 0 when the card has none. */
	uint32_t num_links;
	uint32_t fabric_id;		/* non-zero: cards sharing it are linked */
	uint32_t fabric_rank;		/* this card's rank in the fabric */
	uint32_t fabric_size;		/* ranks in the fabric */
	uint8_t link_peer[8];		/* fabric rank at link l's other end */
	uint32_t links_up;		/* bit l: link l's peer is present */
};

/* Number of cards driven by neuron.ko (0 when none or no driver). */
int nrn_device_count(void);

/* Open card @index (0 .. nrn_device_count() - 1). */
int nrn_device_open(unsigned int index, struct nrn_device **devp);
void nrn_device_close(struct nrn_device *dev);
int nrn_device_info(struct nrn_device *dev, struct nrn_device_info *info);

/*
 * fork() without exec: the child's copies of devices opened before the
 * fork (and of their buffers, streams, events...) share the parent's
 * device file, mappings and locks. In the child every call on them fails
 * at once with -EBADFD (never waiting for a lock), and freeing them
 * releases nothing of the parent's; devices the child opens itself work.
 * nrn_forked() is 1 in a process forked (at any depth, without exec) from
 * one that had a device open at the time, else 0. (This is the library's
 * only process-wide state: a pthread_atfork() handler keeps it.)
 */
int nrn_forked(void);

/* ---- Buffers ---------------------------------------------------------- */

enum nrn_mem {
	NRN_MEM_DEVICE = 0,		/* the card's memory */
	NRN_MEM_HOST = 1,		/* system memory the card reaches by DMA */
	NRN_MEM_HOST_PINNED = 2,	/* the same, pinned while it exists */
	NRN_MEM_HOST_PREFER_PINNED = 3,	/* pinned if the budget allows, else HOST */
};

/*
 * NRN_MEM_HOST: pages allocated when first touched, pinned only while a
 * copy is in flight (each copy pins the pages it names). NRN_MEM_HOST_PINNED
 * (only for nrn_buffer_alloc(); nrn_buffer_mem() reports NRN_MEM_HOST):
 * all pages allocated and pinned at allocation, until the buffer is freed,
 * so that copies to and from it pin nothing (they run at the DMA engine's
 * speed); counted in the device file's budget of pinned memory
 * (DRM_NEURON_PARAM_MAX_PINNED), -E2BIG when larger than the budget,
 * -ENOMEM when it does not fit beside what is pinned already.
 * NRN_MEM_HOST_PREFER_PINNED (only for nrn_buffer_alloc()): a pinned buffer
 * when it fits in the budget, else (or with a driver that does not pin) an
 * NRN_MEM_HOST one, whose copies pin their pages each -- the staging
 * buffers of pageable copies and PyTorch's pinned memory are made so.
 */
int nrn_buffer_alloc(struct nrn_device *dev, size_t size, enum nrn_mem where,
		     struct nrn_buffer **bufp);
/* Frees the buffer; work issued on it still completes (it holds a reference). */
void nrn_buffer_free(struct nrn_buffer *buf);
size_t nrn_buffer_size(const struct nrn_buffer *buf);
enum nrn_mem nrn_buffer_mem(const struct nrn_buffer *buf);
/*
 * CPU address of the buffer's contents (mapped on first call, unmapped at
 * free). Device memory is mapped write-combined: fine to write, slow to
 * read; copy it out with nrn_copy_d2h() instead.
 */
int nrn_buffer_map(struct nrn_buffer *buf, void **ptr);
/*
 * Share a buffer with another process or device file: export it as a
 * dma-buf file descriptor (the caller closes it), and import such a
 * descriptor as a buffer of @dev (the same memory). Importing, into the
 * same device, a buffer that device already has (one it exported, or
 * imported before) returns that buffer with one more reference: free it
 * once per import; the memory lives while any process holds a buffer or
 * a descriptor of it.
 */
int nrn_buffer_export(struct nrn_buffer *buf, int *fd);
int nrn_buffer_import(struct nrn_device *dev, int fd, struct nrn_buffer **bufp);

/* ---- Streams and events ------------------------------------------------ */

/*
 * A stream is an in-order queue of work on one card: copies and compute run
 * in the order they were issued, whichever hardware queue executes them
 * (several streams may share a queue). Issuing is asynchronous; errors of
 * the work surface at the next synchronisation (nrn_stream_sync(),
 * nrn_event_wait(), a copy to user memory) as -EIO, -ETIMEDOUT, ...; after
 * reporting it the stream is usable again. A stream may be used from
 * several threads; the order is then the order the calls took its lock.
 *
 * Small operations are batched: consecutive compute operations on a stream
 * are gathered into one kernel and submitted together when the batch is
 * full (NRN_BATCH_MAX_OPS), when work of another kind (a copy, an event)
 * must follow them, or when the stream is synchronised or flushed.
 */
#define NRN_BATCH_MAX_OPS 256
/*
 * A graph launched again with the operands of its last launch runs, from
 * its third launch on, as one resident job (nrn_graph_launch: its
 * instructions kept on the card, a launch one submission) when it binds
 * at most 64 buffers and has fewer than NRN_BATCH_MAX_OPS instructions,
 * or at most this many carrying NRN_BATCH_MAX_WORK at most (so that its
 * job's time stays a batch's); another is issued in batches at every
 * launch. nrn_graph_info() tells whether it does.
 */
#define NRN_GRAPH_RESIDENT_MAX_INSNS 4096
/*
 * Element operations a batch may carry before an operation starts a new
 * one (nrn_graph_info()'s work counts them: an instruction's result
 * elements, times the inner dimension of a MATMUL): a job's run time
 * follows the work it carries, and the driver's job timeout
 * (job_timeout_ms: 10 s by default, 3 s in make check) must catch only
 * hangs, not a batch of many large operations on a busy host. 2^24 element
 * operations are milliseconds to tens of milliseconds of a NeuronCore: a
 * submission's cost is lost in them, and small operations still share a job.
 */
#define NRN_BATCH_MAX_WORK (1ull << 24)

int nrn_stream_create(struct nrn_device *dev, struct nrn_stream **sp);
/* Waits for the stream's work, then frees it. */
void nrn_stream_destroy(struct nrn_stream *s);
/* Submit batched work now (does not wait). */
int nrn_stream_flush(struct nrn_stream *s);
/* Wait for everything issued so far; returns the first error, if any. */
int nrn_stream_sync(struct nrn_stream *s);
/* The device's stream used by the synchronous helpers below. */
int nrn_device_stream(struct nrn_device *dev, struct nrn_stream **sp);
/*
 * The NeuronCore that runs @s's compute and the DMA queue that runs its
 * copies (0 .. num_cores - 1, 0 .. num_dma_queues - 1 of nrn_device_info),
 * fixed for the stream's life; 0 or -EINVAL.
 */
int nrn_stream_queues(const struct nrn_stream *s, unsigned int *core,
		      unsigned int *dma);

int nrn_event_create(struct nrn_device *dev, struct nrn_event **evp);
/*
 * With NRN_EVENT_TIMING, recording the event also has the card write its
 * clock when the stream reaches that point (NISA_INSN_TIMESTAMP), so that
 * nrn_event_elapsed_ns() can measure the work between two events. Such an
 * event owns a small device buffer and adds one instruction per record;
 * nrn_event_create() (flags 0) makes a plain event, without either.
 * Unknown flags: -EINVAL.
 */
#define NRN_EVENT_TIMING 0x1
int nrn_event_create_flags(struct nrn_device *dev, unsigned int flags,
			   struct nrn_event **evp);
/*
 * Card time from @start's point to @end's (both recorded timing events of
 * one card, both complete): 0, -EINVAL (not timing events, not recorded,
 * different cards), -EBUSY (not complete yet) or the work's error. The
 * card has one clock for all its cores: events of any streams of the card
 * compare; *@ns is negative when @end's point came first. Re-recording
 * an event replaces its point at once (-EBUSY until the new one is
 * reached) and its timestamp when the new point is reached; a call racing
 * with a re-record returns the old or the new recording's time. A timing
 * event re-recorded on another stream while its previous point is still
 * pending makes the new point wait for the previous one, so that the
 * timestamps land in the order of the records.
 */
int nrn_event_elapsed_ns(struct nrn_event *start, struct nrn_event *end,
			 int64_t *ns);
void nrn_event_destroy(struct nrn_event *ev);
/* Mark the point of @s reached when the work issued so far is done. */
int nrn_event_record(struct nrn_event *ev, struct nrn_stream *s);
/* 0 if done, -EBUSY if not yet, another negative errno if the work failed. */
int nrn_event_query(struct nrn_event *ev);
/* Wait (timeout_ns < 0: forever) ; 0, -ETIME, or the work's error. */
int nrn_event_wait(struct nrn_event *ev, int64_t timeout_ns);
/* Work issued to @s after this call starts after @ev's point. */
int nrn_stream_wait_event(struct nrn_stream *s, struct nrn_event *ev);

/* ---- Copies ------------------------------------------------------------- */

/*
 * On a stream, in order. From user memory, the data is taken before the call
 * returns; to user memory, the call waits for the stream (it synchronises).
 */
int nrn_stream_copy_h2d(struct nrn_stream *s, struct nrn_buffer *dst,
			size_t dst_off, const void *src, size_t len);
int nrn_stream_copy_d2h(struct nrn_stream *s, void *dst, struct nrn_buffer *src,
			size_t src_off, size_t len);
/* Buffer to buffer on the card's DMA engine: asynchronous. */
int nrn_stream_copy_buffer(struct nrn_stream *s, struct nrn_buffer *dst,
			   size_t dst_off, struct nrn_buffer *src,
			   size_t src_off, size_t len);

/* Synchronous versions on the device's stream. */
int nrn_copy_h2d(struct nrn_buffer *dst, size_t dst_off, const void *src,
		 size_t len);
int nrn_copy_d2h(void *dst, struct nrn_buffer *src, size_t src_off,
		 size_t len);
int nrn_copy_buffer(struct nrn_buffer *dst, size_t dst_off,
		    struct nrn_buffer *src, size_t src_off, size_t len);

/* ---- Compiled kernels ---------------------------------------------------- */

/*
 * A kernel is a sequence of ISA instructions (struct nisa_insn) whose tensor
 * operands name slots 0 .. nslots-1, bound to buffers at launch. It can be
 * built instruction by instruction, saved in the compiled-kernel format
 * (a header with magic, version, checksum and slot count, then the
 * instructions) and loaded back.
 */
int nrn_kernel_create(unsigned int nslots, struct nrn_kernel **kp);
void nrn_kernel_destroy(struct nrn_kernel *k);
/* Append one instruction; it is checked against the slot count. */
int nrn_kernel_append(struct nrn_kernel *k, const struct nisa_insn *insn);
unsigned int nrn_kernel_count(const struct nrn_kernel *k);
unsigned int nrn_kernel_slots(const struct nrn_kernel *k);
const struct nisa_insn *nrn_kernel_insns(const struct nrn_kernel *k);
/* Serialized form: *bufp is malloc()ed, the caller frees it. */
int nrn_kernel_serialize(const struct nrn_kernel *k, void **bufp, size_t *lenp);
int nrn_kernel_deserialize(const void *buf, size_t len, struct nrn_kernel **kp);
int nrn_kernel_save(const struct nrn_kernel *k, const char *path);
int nrn_kernel_load(const char *path, struct nrn_kernel **kp);
/* A kernel's access to a slot's buffer: NISA_ACCESS_* of the ISA header. */
/* Run @k on @s with @bufs[i] as slot i, with access NISA_ACCESS_* in @access. */
int nrn_kernel_launch(struct nrn_stream *s, const struct nrn_kernel *k,
		      struct nrn_buffer *const *bufs, const uint32_t *access);
/* One instruction as text (for neuron-objdump), into @out. */
int nrn_insn_format(const struct nisa_insn *insn, char *out, size_t size);

/* ---- Operations ----------------------------------------------------------- */

/*
 * A tensor: @ndim dimensions (up to NRN_TENSOR_MAX_DIMS), strides in
 * elements (0 broadcasts), @offset in bytes into @buf, which must be in
 * device memory. Operations take descriptors of any strides; operands of
 * elementwise operations broadcast to the destination's shape the NumPy
 * way. Each call encodes one or more instructions into the stream's batch.
 * An instruction with a NISA_C64 operand that is not one of the functions
 * nisa_takes_complex() lists is refused before it is encoded: -EDOM (the
 * function's domain is the reals).
 */
#define NRN_TENSOR_MAX_DIMS 8

struct nrn_tensor_desc {
	struct nrn_buffer *buf;
	uint64_t offset;
	enum nisa_dtype dtype;
	unsigned int ndim;
	int64_t shape[NRN_TENSOR_MAX_DIMS];
	int64_t strides[NRN_TENSOR_MAX_DIMS];
};

/* Fill in a contiguous (row-major) descriptor. */
void nrn_tensor_contiguous(struct nrn_tensor_desc *t, struct nrn_buffer *buf,
			   uint64_t offset, enum nisa_dtype dtype,
			   unsigned int ndim, const int64_t *shape);

int nrn_op_fill(struct nrn_stream *s, const struct nrn_tensor_desc *dst,
		double value);
/* dst (NISA_C64) = @re + i @im. */
int nrn_op_fill_complex(struct nrn_stream *s, const struct nrn_tensor_desc *dst,
			double re, double im);
/* dst = src, converting the element type; any strides. */
int nrn_op_copy(struct nrn_stream *s, const struct nrn_tensor_desc *dst,
		const struct nrn_tensor_desc *src);
int nrn_op_unary(struct nrn_stream *s, enum nisa_unary fn,
		 const struct nrn_tensor_desc *dst,
		 const struct nrn_tensor_desc *src);
/* A parameterised function (elu, softplus, ...): p and q as in the ISA. */
int nrn_op_unary_param(struct nrn_stream *s, enum nisa_unary fn,
		       const struct nrn_tensor_desc *dst,
		       const struct nrn_tensor_desc *src, double p, double q);
/* dst = a op (alpha * b); alpha only matters for add and sub. */
int nrn_op_binary(struct nrn_stream *s, enum nisa_binary op,
		  const struct nrn_tensor_desc *dst,
		  const struct nrn_tensor_desc *a,
		  const struct nrn_tensor_desc *b, double alpha);
/* dst = a op (alpha * scalar), or with @reverse: (alpha * scalar) op a. */
int nrn_op_binary_scalar(struct nrn_stream *s, enum nisa_binary op,
			 const struct nrn_tensor_desc *dst,
			 const struct nrn_tensor_desc *a, double scalar,
			 double alpha, int reverse);
int nrn_op_compare(struct nrn_stream *s, enum nisa_compare cmp,
		   const struct nrn_tensor_desc *dst,
		   const struct nrn_tensor_desc *a,
		   const struct nrn_tensor_desc *b);
int nrn_op_compare_scalar(struct nrn_stream *s, enum nisa_compare cmp,
			  const struct nrn_tensor_desc *dst,
			  const struct nrn_tensor_desc *a, double scalar);
/* dst = cond ? a : b */
int nrn_op_where(struct nrn_stream *s, const struct nrn_tensor_desc *dst,
		 const struct nrn_tensor_desc *cond,
		 const struct nrn_tensor_desc *a,
		 const struct nrn_tensor_desc *b);
/*
 * dst = a @ b (+ bias) (+ dst if @accumulate); a [..., M, K], b [..., K, N],
 * dst [..., M, N], batch dimensions broadcast; bias broadcasts to dst.
 * A transposed operand is a descriptor with swapped strides.
 */
int nrn_op_matmul(struct nrn_stream *s, const struct nrn_tensor_desc *dst,
		  const struct nrn_tensor_desc *a,
		  const struct nrn_tensor_desc *b,
		  const struct nrn_tensor_desc *bias, int accumulate);
/*
 * Dense linear algebra (NISA_INSN_LINALG): one instruction, @op and @flags
 * (NISA_IF_LA_*) as in the ISA, operands exactly as given (at most
 * NISA_MAX_DIMS dims each, batch dims leading and equal). The sources the
 * subop does not take are NULL, the others not (else -EINVAL); which ones
 * the card writes (pivots, info, tau, U, Vh, ...) follows from @op and
 * @flags. @scalar is GELSY's rcond (0 for the other subops). Shapes and
 * results: docs/hardware.md, "LINALG". Nothing is issued when an operand
 * is empty.
 */
int nrn_op_linalg(struct nrn_stream *s, enum nisa_linalg op, uint32_t flags,
		  double scalar, const struct nrn_tensor_desc *dst,
		  const struct nrn_tensor_desc *src0,
		  const struct nrn_tensor_desc *src1,
		  const struct nrn_tensor_desc *src2);
/* Reduce @src along @axis into @dst (with or without the reduced dim). */
int nrn_op_reduce(struct nrn_stream *s, enum nisa_reduce red,
		  const struct nrn_tensor_desc *dst,
		  const struct nrn_tensor_desc *src, int axis);
int nrn_op_softmax(struct nrn_stream *s, enum nisa_softmax variant,
		   const struct nrn_tensor_desc *dst,
		   const struct nrn_tensor_desc *src, int axis);
/*
 * Sort @src along @axis into @dst, stably (NISA_INSN_SORT): ascending with
 * NaN last, or with @descending largest first and NaN first. @indices (I32
 * or I64, or NULL) receives each value's position in @src. All three have
 * one shape of at most NISA_MAX_DIMS dims (else -E2BIG), dst src's dtype;
 * an axis longer than NISA_SORT_MAX_LEN is -E2BIG.
 */
int nrn_op_sort(struct nrn_stream *s, const struct nrn_tensor_desc *dst,
		const struct nrn_tensor_desc *indices,
		const struct nrn_tensor_desc *src, int axis, int descending);
/*
 * Inclusive scan of @src along @axis into @dst (NISA_INSN_SCAN): cumsum,
 * cumprod, cummax/cummin (@indices, I32 or I64, gets the extreme's position;
 * NULL or only with MAX/MIN), logcumsumexp. Shapes as nrn_op_sort.
 */
int nrn_op_scan(struct nrn_stream *s, enum nisa_scan op,
		const struct nrn_tensor_desc *dst,
		const struct nrn_tensor_desc *indices,
		const struct nrn_tensor_desc *src, int axis);
/*
 * A discrete Fourier transform of @src along @axis into @dst, times @scale
 * (NISA_INSN_FFT, docs/hardware.md "FFT"): FORWARD and BACKWARD C64 -> C64
 * of one shape; R2C F32 -> C64 of extent n / 2 + 1 (or n) along @axis;
 * C2R C64 (extent at least n / 2 + 1) -> F32 of extent n. The other
 * extents equal; at most NISA_MAX_DIMS dims (else -E2BIG), n at most
 * NISA_FFT_MAX_LEN (else -E2BIG).
 */
int nrn_op_fft(struct nrn_stream *s, enum nisa_fft op,
	       const struct nrn_tensor_desc *dst,
	       const struct nrn_tensor_desc *src, int axis, double scale);
/* index_select (NISA_IDX_SELECT) or gather (NISA_IDX_ELEMENT) along @axis. */
int nrn_op_gather(struct nrn_stream *s, enum nisa_index_mode mode,
		  const struct nrn_tensor_desc *dst,
		  const struct nrn_tensor_desc *src,
		  const struct nrn_tensor_desc *index, int axis);
/* index_add_ (NISA_IDX_SELECT) or scatter_add_ (NISA_IDX_ELEMENT) into dst. */
int nrn_op_scatter_add(struct nrn_stream *s, enum nisa_index_mode mode,
		       const struct nrn_tensor_desc *dst,
		       const struct nrn_tensor_desc *src,
		       const struct nrn_tensor_desc *index, int axis);
/*
 * dst op= src at the positions @index names along @axis (NISA_INSN_SCATTER):
 * NISA_IDX_SELECT as index_copy_/index_reduce_ (@index 1-D), NISA_IDX_ELEMENT
 * as scatter_/scatter_reduce_ (@index of src's shape). Updates apply in
 * row-major order: with NISA_SCAT_ASSIGN the last duplicate wins.
 */
int nrn_op_scatter(struct nrn_stream *s, enum nisa_scatter red,
		   enum nisa_index_mode mode, const struct nrn_tensor_desc *dst,
		   const struct nrn_tensor_desc *src,
		   const struct nrn_tensor_desc *index, int axis);

/*
 * Random numbers on the card (NISA_INSN_RANDOM): element i of @dst, in
 * row-major order, is drawn from Philox4x32-10 with key @seed and counter
 * @offset + i. A caller advances its offset by the element count.
 * NISA_RNG_UNIFORM and NISA_RNG_NORMAL take an F32 or BF16 @dst,
 * NISA_RNG_BITS an I32, I64 or BOOL one (else -EINVAL); @dst may have any
 * strides and up to NRN_TENSOR_MAX_DIMS dims, the values depend only on
 * (@seed, @offset, row-major index). Exact recipes: docs/hardware.md,
 * "Random numbers".
 */
int nrn_op_random(struct nrn_stream *s, enum nisa_random dist,
		  const struct nrn_tensor_desc *dst, uint64_t seed,
		  uint64_t offset);

/*
 * A ramp on the card (NISA_INSN_IOTA): element i of @dst, in row-major
 * order, is @start + i * @step; exact for an integer @dst when @start and
 * @step are integers, else computed in double and rounded once. @dst has at
 * most NISA_MAX_DIMS dims, any strides.
 */
int nrn_op_iota(struct nrn_stream *s, const struct nrn_tensor_desc *dst,
		double start, double step);

/*
 * The card's clock in ns (NISA_INSN_TIMESTAMP) into the int64 at @offset
 * (8-byte aligned) of @buf (device memory) when @s reaches this point: one
 * instruction of the stream's batch, executed in the same job as the
 * operations around it (a timing event's record ends the job instead, so
 * the card's wait for the next job falls between two events). The value is
 * read once the stream's work is known complete. For profilers. -EINVAL,
 * -EXDEV (another card's buffer); a capturing stream refuses it.
 */
int nrn_op_timestamp(struct nrn_stream *s, struct nrn_buffer *buf,
		     uint64_t offset);

/* ---- Expressions ---------------------------------------------------------- */

/*
 * An elementwise expression: one NISA_INSN_EXPR (docs/hardware.md, "EXPR")
 * computes a chain of elementwise operations in one pass over memory, with
 * the bits of the separate operations (each step's result is rounded to its
 * dtype, as a temporary of that dtype would be). A program of up to
 * NISA_EXPR_MAX_STEPS steps over NISA_EXPR_NUM_REGS registers; register i
 * starts as input i (its dtype). Each nrn_expr_* call appends one step:
 * register @dst = the operation on registers, rounded to @dtype. The
 * result is the last step's register. The builders return 0, or -EINVAL
 * (a register out of range or not set before, an unknown function or
 * dtype) / -E2BIG (more than NISA_EXPR_MAX_STEPS steps); the register
 * file's input dtypes are only known at nrn_op_expr(), which checks the
 * whole program again. Not thread-safe (a plain value the caller owns).
 */
struct nrn_expr {
	unsigned int nsteps;
	unsigned int error;		/* first builder error, as -errno's value */
	struct nisa_expr_step steps[NISA_EXPR_MAX_STEPS];
};

void nrn_expr_init(struct nrn_expr *e);
int nrn_expr_fill(struct nrn_expr *e, unsigned int dst, enum nisa_dtype dtype,
		  double value);
int nrn_expr_copy(struct nrn_expr *e, unsigned int dst, enum nisa_dtype dtype,
		  unsigned int src);
/* p and q as nrn_op_unary_param() (0 for the functions without). */
int nrn_expr_unary(struct nrn_expr *e, enum nisa_unary fn, unsigned int dst,
		   enum nisa_dtype dtype, unsigned int src, double p, double q);
int nrn_expr_binary(struct nrn_expr *e, enum nisa_binary op, unsigned int dst,
		    enum nisa_dtype dtype, unsigned int a, unsigned int b,
		    double alpha);
int nrn_expr_binary_scalar(struct nrn_expr *e, enum nisa_binary op,
			   unsigned int dst, enum nisa_dtype dtype,
			   unsigned int a, double scalar, double alpha,
			   int reverse);
int nrn_expr_compare(struct nrn_expr *e, enum nisa_compare cmp,
		     unsigned int dst, enum nisa_dtype dtype, unsigned int a,
		     unsigned int b);
int nrn_expr_compare_scalar(struct nrn_expr *e, enum nisa_compare cmp,
			    unsigned int dst, enum nisa_dtype dtype,
			    unsigned int a, double scalar);
/* dst = cond ? a : b */
int nrn_expr_where(struct nrn_expr *e, unsigned int dst, enum nisa_dtype dtype,
		   unsigned int cond, unsigned int a, unsigned int b);

/*
 * dst = @expr(inputs[0..n)) elementwise, every input broadcast to dst's
 * shape the NumPy way, any strides (dst may be exactly one of the inputs).
 * -EINVAL: a builder failed, an empty program, a register read before it
 * is set, dst's dtype not the last step's, an input that does not
 * broadcast; -E2BIG: more than NISA_EXPR_MAX_INPUTS inputs. A bitwise
 * function on a floating register is refused by the card (-EIO, BAD_INSN).
 */
int nrn_op_expr(struct nrn_stream *s, const struct nrn_tensor_desc *dst,
		const struct nrn_tensor_desc *const *inputs, unsigned int n,
		const struct nrn_expr *expr);

/* ---- Captured graphs ------------------------------------------------------ */

/*
 * Compiled mode: CAPTURE the instructions a sequence of operations encodes,
 * COMPILE them into a graph whose operands are relocated onto ARGUMENTS
 * (byte regions the caller names) and a planned scratch ARENA, and LAUNCH
 * the graph on other buffers, many times, with one call.
 *
 * While a stream captures, the instructions that work issued on it encodes
 * (nrn_op_*, nrn_kernel_launch, nrn_graph_launch, and buffer-to-buffer
 * copies, which become byte COPY instructions) are recorded, not submitted:
 * nothing runs and no buffer changes. Bytes copied from user memory with
 * nrn_stream_copy_h2d() are taken into the capture as CONSTANTS (the graph
 * owns them and carries them in its serialized form). Anything that would
 * observe or depend on results that do not exist yet, or that cannot be
 * replayed, fails with the error below AND is remembered as the capture's
 * error, which nrn_stream_end_capture() returns:
 *   -EBUSY    nrn_stream_sync(), nrn_stream_copy_d2h(), nrn_event_record()
 *             and nrn_stream_wait_event() on the capturing stream, the
 *             synchronous nrn_copy_*() helpers when the device's stream
 *             captures, an h2d copy into host memory; "the stream is
 *             capturing: this call cannot be recorded";
 *   -ENOTSUP  RANDOM instructions (a replay would repeat the seed),
 *             TIMESTAMP instructions unless the capture was begun with
 *             NRN_CAPTURE_TIMESTAMPS (the clock is not a result of a
 *             graph's operations), copies touching host memory.
 * After such an error the capture keeps nothing more: later work on the
 * stream is accepted (0) and dropped until nrn_stream_end_capture().
 * nrn_stream_flush() of a capturing stream is a no-op that returns 0.
 * Work issued on other streams runs as usual. The capture holds a reference
 * to every buffer it names until nrn_capture_destroy().
 */
struct nrn_capture;
struct nrn_graph;

/*
 * Start capturing on @s (work batched before the call is submitted first).
 * -EBUSY if @s already captures.
 */
int nrn_stream_begin_capture(struct nrn_stream *s);
/*
 * The same, with @flags: NRN_CAPTURE_TIMESTAMPS keeps TIMESTAMP
 * instructions (nrn_op_timestamp()) in the capture -- a kernel that reads
 * the card's clock at points of its own, each launch writing the clock
 * anew (the scheduling passes never move an instruction across one).
 * Other flags: -EINVAL.
 */
#define NRN_CAPTURE_TIMESTAMPS	0x1
int nrn_stream_begin_capture_flags(struct nrn_stream *s, unsigned int flags);
/*
 * Stop capturing. On success *@cp is the capture (the caller destroys it);
 * if any call failed during the capture, that first error is returned, the
 * capture is discarded and *@cp is NULL. -EINVAL if @s does not capture.
 * Either way @s is an ordinary stream again.
 */
int nrn_stream_end_capture(struct nrn_stream *s, struct nrn_capture **cp);
/* 1 if @s captures, 0 if not. */
int nrn_stream_is_capturing(struct nrn_stream *s);
/*
 * Instructions @s's open capture has recorded so far, in *@count: what a
 * caller that records where each instruction came from (the kernel
 * language's source lines) reads between its calls. -EINVAL if @s does not
 * capture; the capture's error if it failed already.
 */
int nrn_stream_capture_count(struct nrn_stream *s, unsigned int *count);
void nrn_capture_destroy(struct nrn_capture *c);
/* Instructions recorded. */
unsigned int nrn_capture_count(const struct nrn_capture *c);
/*
 * The buffers the capture's instructions name, in the order of their first
 * use: the first min(@n, count) into @bufs (NULL when @n is 0); returns the
 * count. They stay valid while @c exists (it holds a reference to each).
 * A caller that replays the capture in place compiles it with each of them
 * as a whole argument and keeps @c alive as long as the graph.
 */
unsigned int nrn_capture_buffers(const struct nrn_capture *c, struct nrn_buffer **bufs,
				 unsigned int n);

/* A byte region of a buffer: a graph's argument. */
struct nrn_graph_arg {
	struct nrn_buffer *buf;		/* may be NULL only when @size is 0 */
	uint64_t offset;
	uint64_t size;
	/* nrn_graph_compile(): NRN_GRAPH_ARG_* (nrn_graph_launch() ignores it) */
	uint32_t flags;
};

/*
 * An argument the graph produces: each launch binds it to new memory, so
 * the graph must write every byte of it, and write before it reads.
 */
#define NRN_GRAPH_ARG_FRESH	0x1

/* nrn_graph_compile() flags. */
#define NRN_GRAPH_FUSE	0x1	/* fuse elementwise chains into EXPR instructions */

/*
 * Compile capture @c. @args are the byte regions, at capture time, of the
 * graph's inputs and outputs (in an order of the caller's choice; the same
 * order at launch). Every operand of every instruction must lie within one
 * argument region (it is relocated: offset - region offset) or touch memory
 * of no argument: SCRATCH, which the graph produces itself and which is
 * placed in an arena planned by liveness (scratch extents that overlap in
 * a buffer form one object, live from its first to its last use, 64-byte
 * aligned; objects whose lives do not overlap share bytes). -EINVAL: an
 * operand straddles an argument's boundary, argument regions overlap, or
 * scratch memory is read before the graph wrote it (the graph would read
 * memory that is neither an argument nor its own result), or likewise a
 * NRN_GRAPH_ARG_FRESH argument is read before written or not written
 * whole (unknown argument flags: -EINVAL too). With
 * NRN_GRAPH_FUSE, chains of elementwise instructions whose intermediates
 * are scratch used only inside the chain become one EXPR instruction each
 * (before arena planning: fused-away intermediates take no arena space);
 * other flags: -EINVAL. The graph does not refer to @c or its buffers.
 */
int nrn_graph_compile(const struct nrn_capture *c, const struct nrn_graph_arg *args,
		      unsigned int nargs, unsigned int flags, struct nrn_graph **gp);
void nrn_graph_destroy(struct nrn_graph *g);

struct nrn_graph_info {
	unsigned int nargs;		/* arguments */
	unsigned int insns;		/* instructions a launch issues */
	unsigned int captured_insns;	/* instructions captured */
	unsigned int fused;		/* captured instructions fusion merged or removed */
	uint64_t arena_size;		/* bytes of scratch arena a launch needs */
	uint64_t const_size;		/* bytes of constants the graph owns */
	uint64_t work;			/* element operations a launch carries */
	unsigned int resident;		/* 1: a launch like its last runs as its resident job */
};
int nrn_graph_info(const struct nrn_graph *g, struct nrn_graph_info *info);
/*
 * The graph's id: unique among the graph objects this process has made
 * (compiled or deserialized; a deserialized copy is a new object with an
 * id of its own), never 0; 0 for a NULL @g. nrn_stream_error_site() names
 * a launched graph by it.
 */
uint64_t nrn_graph_id(const struct nrn_graph *g);
/*
 * How the graph accesses argument @i: NISA_ACCESS_READ and/or
 * NISA_ACCESS_WRITE (0: not at all), in *@access. -EINVAL if i >= nargs.
 * The size of argument @i as compiled goes to *@size if not NULL.
 */
int nrn_graph_arg_access(const struct nrn_graph *g, unsigned int i,
			 uint32_t *access, uint64_t *size);

/*
 * Issue @g on @s: argument i is bound to (@args[i].buf, @args[i].offset)
 * (@args[i].size must equal the compiled size; device memory of @s's card;
 * the offset must keep the compiled operands' element alignment), the arena
 * to (@arena, @arena_off) (64-byte aligned, at least arena_size bytes; NULL
 * when arena_size is 0); else -EINVAL. An argument overlapping the arena,
 * or a written argument overlapping another argument: -EINVAL. Every instruction goes through
 * the stream's normal batching (flushing at NRN_BATCH_MAX_OPS instructions
 * or when the batch's buffer table is full), in order after earlier work,
 * and the batch holding the graph's end is submitted before the call
 * returns: the card starts on it while the caller goes on. Asynchronous
 * like any operation. An arena may serve one launch at a time
 * (in stream order). Launching on a capturing stream records the launch
 * (graphs nest; the constants go into the outer capture).
 */
int nrn_graph_launch(struct nrn_stream *s, const struct nrn_graph *g,
		     const struct nrn_graph_arg *args, struct nrn_buffer *arena,
		     uint64_t arena_off);

/*
 * The graph's disk format: a header (magic, format version,
 * NISA_ISA_VERSION, total length, checksum over everything), the argument
 * table, arena size, constants and instructions. *@bufp is malloc()ed, the
 * caller frees it. A corrupt, truncated or other-version blob is -EBADMSG
 * (nothing is loaded).
 */
/*
 * Launch instruction @i of @g as text into @out (at most @size bytes, NUL
 * included): nrn_insn_format()'s text (operand offsets relative to their
 * base), each used operand's base ("dst@arg0", "src1@arena", "@const")
 * and the captured instruction it was compiled from. -EINVAL (@i out of
 * range, a NULL argument), -ENOSPC when @out is too small.
 */
int nrn_graph_insn_format(const struct nrn_graph *g, unsigned int i, char *out, size_t size);
int nrn_graph_serialize(const struct nrn_graph *g, void **bufp, size_t *lenp);
int nrn_graph_deserialize(const void *buf, size_t len, struct nrn_graph **gp);

/* ---- Collectives across cards ------------------------------------------ */

/*
 * A communicator joins one card per rank, the ranks being threads of one
 * process or separate processes (one card each, as torchrun runs them), on
 * cards of one fabric (nrn_device_info.fabric_id). Its collectives move
 * data card to card over the links and reduce on the cards; the host only
 * submits. Every rank must call the same collectives in the same order
 * with matching arguments (as with NCCL or MPI).
 *
 * A collective is issued on a stream @s of the rank's card: it starts
 * after the work issued on @s before it and work issued on @s after it
 * waits for it; it returns once issued (the data moves later). Issuing
 * waits (at most the timeout) until the ranks it exchanges data with have
 * issued theirs, so each rank calls from its own thread or process. Its
 * errors surface at the stream's next synchronisation like any work's:
 * -ENODEV when a peer card went away, -ETIMEDOUT when a peer did not take
 * part within the communicator's timeout, -ECONNRESET when a peer's
 * communicator was destroyed (its process exited), -EINVAL when the ranks'
 * calls did not match. After such an error the receive buffers hold
 * undefined data and the communicator is failed: its later collectives
 * fail the same way (destroy it). Buffers are device buffers of the
 * rank's card, offsets multiples of the element size; @count counts
 * elements of @dtype (NISA_F32, NISA_BF16 or NISA_F16 where a collective
 * reduces, any dtype elsewhere); the send and receive ranges may be the
 * same (in place; not for all-to-all) but may not otherwise overlap. Bad
 * arguments: -EINVAL, returned at once (nothing issued). A capturing
 * stream refuses collectives (-EBUSY). docs/collectives.md has the rest.
 */
struct nrn_comm;

/* Names a communicator while its ranks rendezvous; made by one rank and
 * passed to the others (e.g. through torch.distributed's store). */
struct nrn_comm_id {
	unsigned char bytes[32];
};

enum nrn_reduce_op {
	NRN_REDUCE_SUM = 0,
	NRN_REDUCE_PROD = 1,
	NRN_REDUCE_MAX = 2,
	NRN_REDUCE_MIN = 3,
	NRN_REDUCE_AVG = 4,		/* sum, then divided by the ranks, on the cards */
};

int nrn_comm_id_new(struct nrn_comm_id *id);
/*
 * Join communicator @id as @rank of @nranks with card @dev; returns when all
 * ranks have joined (-ETIMEDOUT after @timeout_ns; negative: 30 s). -EXDEV
 * when the ranks' cards are not in one fabric or not joined by links the
 * algorithms need.
 */
int nrn_comm_init_rank(struct nrn_device *dev, int nranks, int rank,
		       const struct nrn_comm_id *id, int64_t timeout_ns,
		       struct nrn_comm **commp);
/* All ranks in this process: comms[i] is rank i, on devs[i]. */
int nrn_comm_init_all(struct nrn_device *const *devs, int ndevs,
		      struct nrn_comm **comms);
/* Waits for the communicator's collectives in flight, then frees it. */
void nrn_comm_destroy(struct nrn_comm *c);
int nrn_comm_rank(const struct nrn_comm *c);
int nrn_comm_size(const struct nrn_comm *c);

/* recv[i] = op over ranks of send[i], on every rank; @count elements. */
int nrn_all_reduce(struct nrn_comm *c, struct nrn_stream *s,
		   struct nrn_buffer *send, uint64_t send_off,
		   struct nrn_buffer *recv, uint64_t recv_off,
		   uint64_t count, enum nisa_dtype dtype, enum nrn_reduce_op op);
/* Rank r gets block r (@count elements) of op over ranks of send (nranks blocks). */
int nrn_reduce_scatter(struct nrn_comm *c, struct nrn_stream *s,
		       struct nrn_buffer *send, uint64_t send_off,
		       struct nrn_buffer *recv, uint64_t recv_off,
		       uint64_t count, enum nisa_dtype dtype, enum nrn_reduce_op op);
/* recv (nranks blocks of @count) gets rank r's send in block r. */
int nrn_all_gather(struct nrn_comm *c, struct nrn_stream *s,
		   struct nrn_buffer *send, uint64_t send_off,
		   struct nrn_buffer *recv, uint64_t recv_off,
		   uint64_t count, enum nisa_dtype dtype);
/* Every rank's (@buf, @off) gets @root's. */
int nrn_broadcast(struct nrn_comm *c, struct nrn_stream *s,
		  struct nrn_buffer *buf, uint64_t off, uint64_t count,
		  enum nisa_dtype dtype, int root);
/* Block j of rank i's send goes to block i of rank j's recv (@count each). */
int nrn_all_to_all(struct nrn_comm *c, struct nrn_stream *s,
		   struct nrn_buffer *send, uint64_t send_off,
		   struct nrn_buffer *recv, uint64_t recv_off,
		   uint64_t count, enum nisa_dtype dtype);
/*
 * Root's recv gets op over ranks of send (@count elements); the others'
 * sends are only read and their @recv is not used (may be NULL).
 */
int nrn_reduce(struct nrn_comm *c, struct nrn_stream *s,
	       struct nrn_buffer *send, uint64_t send_off,
	       struct nrn_buffer *recv, uint64_t recv_off,
	       uint64_t count, enum nisa_dtype dtype, enum nrn_reduce_op op, int root);
/* Root's recv (nranks blocks of @count) gets rank r's send in block r;
 * only the root's @recv is used (the others' may be NULL). */
int nrn_gather(struct nrn_comm *c, struct nrn_stream *s,
	       struct nrn_buffer *send, uint64_t send_off,
	       struct nrn_buffer *recv, uint64_t recv_off,
	       uint64_t count, enum nisa_dtype dtype, int root);
/* Rank r's recv (@count) gets block r of root's send (nranks blocks);
 * only the root's @send is used (the others' may be NULL). */
int nrn_scatter(struct nrn_comm *c, struct nrn_stream *s,
		struct nrn_buffer *send, uint64_t send_off,
		struct nrn_buffer *recv, uint64_t recv_off,
		uint64_t count, enum nisa_dtype dtype, int root);
/*
 * All-to-all of blocks of any size: rank i sends @send_counts[j] elements
 * to rank j, its blocks packed in rank order in send; it receives
 * @recv_counts[j] from rank j, packed in rank order in recv. Both arrays
 * have nranks entries; what rank i sends j must be what j expects from i
 * (else every rank's stream fails with -EINVAL). The ranks tell each
 * other their counts when they issue it.
 */
int nrn_all_to_allv(struct nrn_comm *c, struct nrn_stream *s,
		    struct nrn_buffer *send, uint64_t send_off,
		    const uint64_t *send_counts,
		    struct nrn_buffer *recv, uint64_t recv_off,
		    const uint64_t *recv_counts, enum nisa_dtype dtype);
/*
 * Point to point: @bytes from this rank to @peer, which calls nrn_recv().
 * Only between cards joined by a link: -ENOLINK otherwise (no forwarding).
 */
int nrn_send(struct nrn_comm *c, struct nrn_stream *s, struct nrn_buffer *buf,
	     uint64_t off, uint64_t bytes, int peer);
int nrn_recv(struct nrn_comm *c, struct nrn_stream *s, struct nrn_buffer *buf,
	     uint64_t off, uint64_t bytes, int peer);
/*
 * nrn_recv() from whichever linked rank sends to this one first; *@src is
 * set to it. Waits up to the communicator's timeout (-ETIMEDOUT), e.g.
 * while every other rank waits in another collective; -ENOLINK when no
 * rank is linked to this one. @bytes must be the sender's (-EINVAL).
 */
int nrn_recv_any(struct nrn_comm *c, struct nrn_stream *s, struct nrn_buffer *buf,
		 uint64_t off, uint64_t bytes, int *src);
/*
 * Work issued on @s after it waits until every rank has issued its barrier
 * and the work each rank issued on its stream before it is done.
 */
int nrn_barrier(struct nrn_comm *c, struct nrn_stream *s);

/* ---- Errors ----------------------------------------------------------- */

/* A message for a negative errno returned by libneuron (never NULL). */
const char *nrn_strerror(int err);
/*
 * The device's error code (NISA_ERR_*, docs/hardware.md) behind the last -EIO
 * that a synchronisation of @s returned, and its name; 0 / "none" if none.
 */
unsigned int nrn_stream_device_error(struct nrn_stream *s);
const char *nrn_device_error_name(unsigned int code);

/*
 * Where a card-side error happened. @job_insn is the failing instruction's
 * index in the job (the submitted kernel) that ran it, UINT_MAX when the
 * card named no instruction (an error of a copy, of the job's descriptor,
 * or injected by the card's fault hook). When a graph launch issued that
 * instruction (nrn_graph_launch, on this stream since its previous
 * synchronisation), @graph_id is the graph's nrn_graph_id(), @graph_insn
 * the instruction's index among the graph's launch instructions (0 = the
 * first a launch issues) and @origin the index, in capture order (0 = the
 * first instruction the capture recorded), of the captured instruction it
 * was compiled from: the first of its chain for an EXPR that fusion made
 * of several. Otherwise (an eager operation, nrn_kernel_launch, or a
 * graph-issued instruction whose record was dropped: more than 65536
 * graph runs in jobs between two synchronisations) @graph_id is 0 and
 * @graph_insn and @origin are UINT_MAX.
 */
struct nrn_error_site {
	unsigned int code;		/* NISA_ERR_*, 0 if none */
	unsigned int job_insn;		/* index of the failing instruction in its job */
	uint64_t graph_id;		/* nrn_graph_id() of the launched graph, 0 if none */
	unsigned int graph_insn;	/* its index among the graph's launch instructions */
	unsigned int origin;		/* captured instruction it came from, UINT_MAX if unknown */
};
/*
 * The site of the card-side error behind the last -EIO a synchronisation
 * of @s returned, into *@site: 0, or -ENOENT when that sync returned no
 * -EIO from the card (or none has failed yet), -EINVAL for a NULL
 * argument, -EBADFD in a forked child. Like nrn_stream_device_error(),
 * it stays until a later synchronisation of @s returns an error: another
 * -EIO replaces it, any other error clears it.
 */
int nrn_stream_error_site(struct nrn_stream *s, struct nrn_error_site *site);

#ifdef __cplusplus
}
#endif

#endif /* LIBNEURON_H */

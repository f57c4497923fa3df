/*
 * Virtual Trainium accelerator: walking several same-shaped operands
 * together (an instruction's destination and its sources), as runs along
 * the innermost dimension. Dimensions of extent 1 are dropped and adjacent
 * dimensions that every operand lays out as one are merged, so a
 * contiguous, in-place or broadcast instruction is a few long runs, and a
 * strided one (a window, a transpose) advances pointers between runs
 * instead of recomputing coordinates. Runs stay in row-major order of
 * the innermost dimension; when the rows (the next dimension) and runs
 * are small, the longest outer dimension is walked as the rows instead.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef HW_MISC_TRAINIUM_ITER_H
#define HW_MISC_TRAINIUM_ITER_H

#include "trainium-isa.h"

#define TRN_ITER_OPS 4          /* dst and up to three sources */

/* Fewer elements than this per call: the longest outer dim is the rows. */
#define TRN_ITER_BLOCK 64

/* A run cut into pieces of at most this many elements (reset checks). */
#define TRN_ITER_RUN_MAX (1u << 16)

typedef struct TrnIter {
    unsigned nops;
    unsigned ndim;                              /* after merging, >= 1 */
    uint64_t shape[NISA_MAX_DIMS];              /* [ndim - 1] innermost */
    int64_t stride[TRN_ITER_OPS][NISA_MAX_DIMS]; /* in elements */
    uint8_t *data[TRN_ITER_OPS];
    unsigned esize[TRN_ITER_OPS];
} TrnIter;

/*
 * @rows runs of @n elements: in run r, element j of operand i is at
 * @p[i] + r * @row[i] bytes, @st[i] elements apart. Walking the rows in
 * the callee keeps short runs (a window, a channel's plane) cheap.
 */
typedef struct TrnRuns {
    uint8_t *p[TRN_ITER_OPS];
    int64_t st[TRN_ITER_OPS];       /* elements */
    int64_t row[TRN_ITER_OPS];      /* bytes */
    uint64_t n, rows;
} TrnRuns;

typedef void TrnRunFn(void *opaque, const TrnRuns *runs);

/* @views[0..@n) have the same shape (trn_same_shape). */
void trn_iter_init(TrnIter *it, const TrnView *const views[], unsigned n);

/*
 * Call @fn on every block of runs (every element once),
 * accounting the work with trn_tick(). Returns true if the queue is being
 * reset (the walk stopped part way), false when every element was visited.
 */
bool trn_iter_runs(TrnKernel *k, const TrnIter *it, TrnRunFn *fn,
                   void *opaque);

/*
 * An elementwise walk of at least this many elements is shared between
 * the card's threads (trn_pool_run()), in pieces of about
 * TRN_ITER_SHARE_PIECE elements along the outermost dimension. A hand-off
 * to the pool costs microseconds, a piece of 2^15 float32 elements tens of
 * them (0.1 ns an element for an add, 1 ns for an exp: neuron-bench's
 * card_*_ns_per_elem); a GPT step's replay (examples/bench_step.py gpt
 * --graph, 2 card threads) took 18-19 ms with 2^18 and 2^17, 15-16 ms with
 * 2^16 and 2^15 or 2^14 and 2^13.
 */
#define TRN_ITER_SHARE_MIN   (1u << 16)
#define TRN_ITER_SHARE_PIECE (1u << 15)

/*
 * trn_iter_runs() for an instruction whose elements are independent
 * (elementwise; @fn must not change @opaque): a walk of at least
 * TRN_ITER_SHARE_MIN elements whose destination (operand 0) overlaps
 * neither itself nor any source except exactly (in place) is cut into
 * pieces that the card's threads take as they come. The pieces depend on
 * the shape only, never on the thread count, and each piece is walked as
 * trn_iter_runs() walks those elements, so the results do not change
 * either. Returns NISA_ERR_ABORTED if the queue is reset meanwhile.
 */
uint32_t trn_iter_runs_shared(TrnKernel *k, const TrnIter *it, TrnRunFn *fn,
                              void *opaque);

#endif

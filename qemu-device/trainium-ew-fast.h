/*
 * Virtual Trainium accelerator: vector kernels for the float32 UNARY
 * functions whose libm evaluation dominated a training step (the tanh
 * GELU and its gradient; exp, SiLU and sigmoid), used by the float32
 * elementwise path
 * (trainium-ew-f32.c) and EXPR's float32 registers (trainium-expr.c), and
 * for float32 softmax and log-sum-exp rows (trainium-reduce.c).
 *
 * They change no result: each element is computed four at a time by a
 * polynomial, with a bound on its distance to the general engine's double
 * evaluation (trn_un_<name>() of trainium-ew-ops.h, glibc's tanh inside);
 * when the whole interval of that bound rounds to one float32, that float
 * is the one the double evaluation rounds to. Any other element -- NaN,
 * infinities, large magnitudes, a value too close to a rounding boundary
 * -- is computed by trn_un_<name>() itself.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef HW_MISC_TRAINIUM_EW_FAST_H
#define HW_MISC_TRAINIUM_EW_FAST_H

/*
 * d[j] = f(x[j]) for j < @n, rounded as trn_to_f32() rounds (a NaN
 * made the quiet NaN with its sign) when @quiet, else by a C cast (EXPR's
 * registers keep a NaN's payload until dst's store). @d may be @x
 * (in place); no other overlap.
 */
typedef void TrnF32UnaryFn(const float *x, float *d, uint64_t n, bool quiet);

/* The kernel of UNARY function @fn, NULL if it has none. */
TrnF32UnaryFn *trn_ew_fast_unary(unsigned fn);

/*
 * A float32 softmax (@logsm false) or log-softmax row: @x[0..@n)
 * contiguous, its largest element @m finite (so no NaN, no +inf; -inf
 * may be), results to @e[0..@n) as float32 values in double -- those the
 * general engine's double evaluation rounds to, proven as above. False
 * when some element could not be proven (then @e holds nothing of use).
 */
bool trn_fast_softmax_row(const float *x, uint64_t n, double m, bool logsm,
                          double *e);

/*
 * A float32 row's log-sum-exp: @x[0..@n) contiguous, to *@r as the float32
 * the general engine's double evaluation (its online fold) rounds to,
 * proven as above. False when the row has a NaN or +inf, only -inf, or
 * could not be proven (then *@r is untouched).
 */
bool trn_fast_logsumexp_row(const float *x, uint64_t n, float *r);

#endif

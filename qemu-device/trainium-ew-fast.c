/*
 * Virtual Trainium accelerator: vector kernels of float32 UNARY functions
 * that give the general engine's bits (see trainium-ew-fast.h).
 *
 * Why the results are the same. For an element x, the general engine
 * computes g = trn_un_f(x) in double and stores round32(g). A kernel
 * computes r by the same expression, in the same order, with glibc's
 * tanh(u) replaced by t = 1 - 2 / (exp(2u) + 1) and exp by a polynomial;
 * then |r - g| <= b, a bound that follows from |t - tanh_glibc(u)| <=
 * TRN_FAST_ET (below) and an ulp for each rounding after it. round32 is
 * monotonic: if round32(r - b) == round32(r) == round32(r + b), then
 * round32(g) == round32(r). The test is done in vectors; an element that
 * fails it (about one in 10^5 of a GPT's activations; all those below
 * -4.5, whose result cancels) is computed by trn_un_f(x) itself.
 *
 * The kernels are built for the host's AVX2 and for the baseline (GCC
 * vector extensions: one ymm register or two xmm per 4 doubles); neither
 * contracts into FMA, so both compute the same r. The domain masks are
 * taken on the float32 inputs (|x| <= 100.0f is |(double)x| <= 100.0:
 * the bounds are exact in both).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "trainium-isa.h"
#include "trainium-ew-ops.h"
#include "trainium-ew-fast.h"

typedef double TrnV4d __attribute__((vector_size(32)));
typedef int64_t TrnV4l __attribute__((vector_size(32)));
typedef float TrnV4f __attribute__((vector_size(16)));
typedef int32_t TrnV4i __attribute__((vector_size(16)));
typedef int64_t TrnV2l __attribute__((vector_size(16)));

#define TRN_V(c) ((TrnV4d){ (c), (c), (c), (c) })

/*
 * |t - tanh_glibc(u)|, bounded: the polynomial exp is within 2^-50.8 of
 * glibc's (relative, measured over |y| <= 100), which makes t within
 * 2^-49.5 of tanh(u); glibc's tanh is within 2 ulps (2^-52). 2^-46 leaves
 * a factor 8.
 */
#define TRN_FAST_ET 0x1p-46

/* The largest |x| a kernel computes (|2u| <= 50 for the GELU's u). */
#define TRN_FAST_GELU_MAX 8.0

static inline QEMU_ALWAYS_INLINE TrnV4d trn_v_abs(TrnV4d x)
{
    return (TrnV4d)((TrnV4l)x & (TrnV4l){ INT64_MAX, INT64_MAX, INT64_MAX,
                                          INT64_MAX });
}

/* |x|, float32 lanes. */
static inline QEMU_ALWAYS_INLINE TrnV4f trn_vf_abs(TrnV4f x)
{
    return (TrnV4f)((TrnV4i)x & (TrnV4i){ INT32_MAX, INT32_MAX, INT32_MAX,
                                          INT32_MAX });
}

/* m ? x : +0, lane by lane (m all ones or all zeros). */
static inline QEMU_ALWAYS_INLINE TrnV4f trn_vf_or0(TrnV4i m, TrnV4f x)
{
    return (TrnV4f)((TrnV4i)x & m);
}

/*
 * @x in double (exactly), lane by lane: written out, as GCC 12 converts
 * a whole vector (__builtin_convertvector) in halves, through memory.
 */
static inline QEMU_ALWAYS_INLINE TrnV4d trn_v_widen(TrnV4f x)
{
    return (TrnV4d){ x[0], x[1], x[2], x[3] };
}

/*
 * e^y for |y| <= 100: y = k ln2 + r with |r| <= ln2 / 2 (ln2 in two
 * parts, k ln2's high part exact), e^r by its Taylor series to r^12
 * (truncation below 2^-52 relative), times 2^k built in the exponent
 * field. k is y / ln2 rounded by adding 1.5 * 2^52, whose low bits are
 * then k. The series is summed by Estrin's scheme -- pairs, then pairs
 * of pairs in r^2, r^4 and r^8 -- rather than Horner's: a chain of 5
 * dependent multiply-adds instead of 13, so that the core keeps more
 * elements in flight (the exp kernel 30% faster); its rounding errors are
 * of the same size (within 2^-50.8 of glibc's exp, against Horner's
 * 2^-50.9, measured on 10^8 random y in [-100, 100]).
 */
static inline QEMU_ALWAYS_INLINE TrnV4d trn_v_exp(TrnV4d y)
{
    TrnV4d kd = y * TRN_V(0x1.71547652b82fep0) + TRN_V(0x1.8p52), r, r2, r4;
    TrnV4d p;
    TrnV4l kb = (TrnV4l)kd;

    kd -= TRN_V(0x1.8p52);
    r = y - kd * TRN_V(0x1.62e42feep-1) - kd * TRN_V(0x1.a39ef35793c76p-33);
    r2 = r * r;
    r4 = r2 * r2;
    p = (TRN_V(1.0) + r + (TRN_V(0.5) + TRN_V(1.0 / 6) * r) * r2) +
        ((TRN_V(1.0 / 24) + TRN_V(1.0 / 120) * r) +
         (TRN_V(1.0 / 720) + TRN_V(1.0 / 5040) * r) * r2) * r4 +
        (((TRN_V(1.0 / 40320) + TRN_V(1.0 / 362880) * r) +
          (TRN_V(1.0 / 3628800) + TRN_V(1.0 / 39916800) * r) * r2) +
         TRN_V(1.0 / 479001600) * r4) * (r4 * r4);
    return p * (TrnV4d)((kb + 1023) << 52);
}

/* tanh(u) to within TRN_FAST_ET, absolutely (|2u| <= 100). */
static inline QEMU_ALWAYS_INLINE TrnV4d trn_v_tanh_abs(TrnV4d u)
{
    return TRN_V(1.0) - TRN_V(2.0) / (trn_v_exp(TRN_V(2.0) * u) + TRN_V(1.0));
}

/*
 * The lanes whose interval [r - b, r + b] rounds to one float32 (and
 * that are @in the kernel's domain); *@f = r rounded.
 */
static inline QEMU_ALWAYS_INLINE
TrnV4i trn_v_proven(TrnV4d r, TrnV4d b, TrnV4i in, TrnV4f *f)
{
    TrnV4f fr = __builtin_convertvector(r, TrnV4f);
    TrnV4f lo = __builtin_convertvector(r - b, TrnV4f);
    TrnV4f hi = __builtin_convertvector(r + b, TrnV4f);

    *f = fr;
    return (lo == fr) & (hi == fr) & in;
}

/*
 * trn_un_gelu_tanh(): 0.5 * x * (1 + t). Only t differs from the double
 * evaluation: |dr| <= 0.5 |x| (ET + 2^-52) + ulp(r).
 */
static inline QEMU_ALWAYS_INLINE TrnV4i trn_v_gelu_tanh(TrnV4f x, TrnV4f *f)
{
    TrnV4i in = trn_vf_abs(x) <= TRN_FAST_GELU_MAX;
    TrnV4d xs = trn_v_widen(trn_vf_or0(in, x));
    TrnV4d u = TRN_V(TRN_SQRT_2_PI) * (xs + TRN_V(0.044715) * xs * xs * xs);
    TrnV4d t = trn_v_tanh_abs(u);
    TrnV4d r = TRN_V(0.5) * xs * (TRN_V(1.0) + t);
    TrnV4d b = trn_v_abs(xs) * TRN_V(TRN_FAST_ET) +
               trn_v_abs(r) * TRN_V(0x1p-48) + TRN_V(0x1p-1000);

    return trn_v_proven(r, b, in, f);
}

/*
 * trn_un_silu(): x / (1 + e) and trn_un_sigmoid(): 1 / (1 + e), e = exp(-x).
 * The polynomial's e is within e 2^-46 of glibc's (as trn_v_exp_f()
 * assumes), so 1 + e is within 2^-46 of the double evaluation's,
 * relatively, plus a rounding on each side (2^-52), and the quotient
 * within |r| (2^-46 + 2^-51) of its: |dr| <= |r| 2^-45. |x| <= 100.
 */
static inline QEMU_ALWAYS_INLINE TrnV4i trn_v_silu(TrnV4f x, TrnV4f *f)
{
    TrnV4i in = trn_vf_abs(x) <= 100.0f;
    TrnV4d xs = trn_v_widen(trn_vf_or0(in, x));
    TrnV4d r = xs / (TRN_V(1.0) + trn_v_exp(-xs));

    return trn_v_proven(r, trn_v_abs(r) * TRN_V(0x1p-45) + TRN_V(0x1p-1000),
                        in, f);
}

static inline QEMU_ALWAYS_INLINE TrnV4i trn_v_sigmoid(TrnV4f x, TrnV4f *f)
{
    TrnV4i in = trn_vf_abs(x) <= 100.0f;
    TrnV4d xs = trn_v_widen(trn_vf_or0(in, x));
    TrnV4d r = TRN_V(1.0) / (TRN_V(1.0) + trn_v_exp(-xs));

    return trn_v_proven(r, r * TRN_V(0x1p-45) + TRN_V(0x1p-1000), in, f);
}

/*
 * trn_un_gelu_tanh_grad(): 0.5 (1 + t) + 0.5 x (1 - t t) c P, P = 1 +
 * 3 * 0.044715 x x: |dr| <= 0.5 (ET + 2^-52) + 0.5 |x| c P (2 ET + 2^-50)
 * + an ulp of each product (|x| c P <= 32) and of r.
 */
static inline QEMU_ALWAYS_INLINE
TrnV4i trn_v_gelu_tanh_grad(TrnV4f x, TrnV4f *f)
{
    TrnV4i in = trn_vf_abs(x) <= TRN_FAST_GELU_MAX;
    TrnV4d xs = trn_v_widen(trn_vf_or0(in, x));
    TrnV4d u = TRN_V(TRN_SQRT_2_PI) * (xs + TRN_V(0.044715) * xs * xs * xs);
    TrnV4d t = trn_v_tanh_abs(u);
    TrnV4d pp = TRN_V(1.0) + TRN_V(3 * 0.044715) * xs * xs;
    TrnV4d r = TRN_V(0.5) * (TRN_V(1.0) + t) +
               TRN_V(0.5) * xs * (TRN_V(1.0) - t * t) * TRN_V(TRN_SQRT_2_PI) *
               pp;
    TrnV4d b = (TRN_V(1.0) + TRN_V(2.0) * trn_v_abs(xs) * pp) *
               TRN_V(TRN_FAST_ET) + trn_v_abs(r) * TRN_V(0x1p-48) +
               TRN_V(0x1p-1000);

    return trn_v_proven(r, b, in, f);
}

/*
 * trn_un_exp(): glibc's exp is within an ulp of e^x, the polynomial within
 * 2^-50.8 of it: |dr| <= |r| 2^-46. |x| <= 100 (results from subnormal
 * to overflowing float32; the bound test sorts out those near its edges).
 */
static inline QEMU_ALWAYS_INLINE TrnV4i trn_v_exp_f(TrnV4f x, TrnV4f *f)
{
    TrnV4i in = trn_vf_abs(x) <= 100.0f;
    TrnV4i zero = x <= -104.0f;
    TrnV4d r = trn_v_exp(trn_v_widen(trn_vf_or0(in, x)));
    TrnV4i ok = trn_v_proven(r, r * TRN_V(0x1p-46) + TRN_V(0x1p-1000), in,
                             f);

    /*
     * From -104 down (-inf included, a softmax's masked lanes), e^x is
     * below 2^-150, glibc's result too: float32 +0.
     */
    *f = trn_vf_or0(~zero, *f);
    return ok | zero;
}

/*
 * @g rounded. The empty asm hides where @g came from: knowing exp() is
 * never negative, GCC would otherwise fold the sign of exp(-NaN) (glibc's
 * -NaN) to +, unlike the general engine, whose store does not see the
 * function.
 */
static inline QEMU_ALWAYS_INLINE float trn_fast_round(double g, bool quiet)
{
    asm("" : "+m"(g));
    return quiet ? trn_to_f32(g) : (float)g;
}

/* Every lane of @m (all ones or all zeros each) is set; no memory. */
static inline QEMU_ALWAYS_INLINE bool trn_v_all(TrnV4i m)
{
    TrnV2l q = (TrnV2l)m;

    return (q[0] & q[1]) == -1;
}

/*
 * A kernel: TRN_FAST_N vectors of 4 elements at a time through @VEC,
 * unrolled (independent chains of dependent operations that the core
 * overlaps), their proofs and-ed and tested once, in registers; then 4 at
 * a time; the last n % 4 through @REF (trainium-ew-ops.h), as is an
 * element @VEC does not prove. An element's operations do not depend on
 * the group it falls in, nor on its neighbours.
 */
#define TRN_FAST_N 4

/*
 * exp is built for x86-64-v3 (AVX2 with FMA) and the baseline: GCC
 * contracts the polynomial's multiply-adds, each then rounded once, well
 * within the bound its proof assumes (25% faster than AVX2 alone here).
 * The GELU kernels' bounds assume separate roundings (with FMA, 1405 of
 * 2^32 / 13 gradients differ): AVX2 without FMA (TRN_CLONES).
 * scripts/check-ew-fast tests the clone the loader picks and the baseline.
 */
#if defined(__x86_64__) && defined(__GNUC__)
#define TRN_FMA_CLONES \
    __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define TRN_FMA_CLONES
#endif

/*
 * A group whose results are all +0 without computing them (@ZERO of its
 * inputs): exp's of lanes all at or below -104, as trn_v_exp_f() gives
 * them -- the masked half of a causal softmax's scores, -inf, skips the
 * polynomial.
 */
static inline QEMU_ALWAYS_INLINE bool trn_v_exp_zero(const TrnV4f *xf)
{
    TrnV4i z = xf[0] <= -104.0f;

    for (unsigned v = 1; v < TRN_FAST_N; v++) {
        z &= xf[v] <= -104.0f;
    }
    return trn_v_all(z);
}

static inline QEMU_ALWAYS_INLINE bool trn_v_never(const TrnV4f *xf)
{
    return false;
}

#define TRN_FAST_KERNEL(NAME, VEC, REF, ZERO, CLONES)                        \
    static CLONES void NAME(const float *x, float *d, uint64_t n,            \
                                bool quiet)                                  \
    {                                                                        \
        uint64_t j = 0;                                                      \
                                                                             \
        for (; j + 4 * TRN_FAST_N <= n; j += 4 * TRN_FAST_N) {               \
            TrnV4f xf[TRN_FAST_N], f[TRN_FAST_N];                            \
            TrnV4i ok[TRN_FAST_N], all;                                      \
                                                                             \
            memcpy(xf, x + j, sizeof(xf));                                   \
            if (ZERO(xf)) {                                                  \
                memset(d + j, 0, sizeof(f));                                 \
                continue;                                                    \
            }                                                                \
            _Pragma("GCC unroll 4")                                          \
            for (unsigned v = 0; v < TRN_FAST_N; v++) {                      \
                ok[v] = VEC(xf[v], &f[v]);                                   \
            }                                                                \
            all = ok[0];                                                     \
            for (unsigned v = 1; v < TRN_FAST_N; v++) {                      \
                all &= ok[v];                                                \
            }                                                                \
            if (unlikely(!trn_v_all(all))) {                                 \
                for (unsigned u = 0; u < 4 * TRN_FAST_N; u++) {              \
                    if (!ok[u / 4][u % 4]) {                                 \
                        f[u / 4][u % 4] =                                    \
                            trn_fast_round(REF((double)xf[u / 4][u % 4],     \
                                               0, 0), quiet);                \
                    }                                                        \
                }                                                            \
            }                                                                \
            memcpy(d + j, f, sizeof(f));                                     \
        }                                                                    \
        for (; j + 4 <= n; j += 4) {                                         \
            TrnV4f xf, f;                                                    \
            TrnV4i ok;                                                       \
                                                                             \
            memcpy(&xf, x + j, sizeof(xf));                                  \
            ok = VEC(xf, &f);                                                \
            if (unlikely(!trn_v_all(ok))) {                                  \
                for (unsigned u = 0; u < 4; u++) {                           \
                    if (!ok[u]) {                                            \
                        f[u] = trn_fast_round(REF((double)xf[u], 0, 0),      \
                                              quiet);                        \
                    }                                                        \
                }                                                            \
            }                                                                \
            memcpy(d + j, &f, sizeof(f));                                    \
        }                                                                    \
        for (; j < n; j++) {                                                 \
            d[j] = trn_fast_round(REF((double)x[j], 0, 0), quiet);           \
        }                                                                    \
    }

TRN_FAST_KERNEL(trn_fast_exp, trn_v_exp_f, trn_un_exp, trn_v_exp_zero,
                TRN_FMA_CLONES)
TRN_FAST_KERNEL(trn_fast_silu, trn_v_silu, trn_un_silu, trn_v_never,
                TRN_FMA_CLONES)
TRN_FAST_KERNEL(trn_fast_sigmoid, trn_v_sigmoid, trn_un_sigmoid, trn_v_never,
                TRN_FMA_CLONES)
TRN_FAST_KERNEL(trn_fast_gelu_tanh, trn_v_gelu_tanh, trn_un_gelu_tanh,
                trn_v_never, TRN_CLONES)
TRN_FAST_KERNEL(trn_fast_gelu_tanh_grad, trn_v_gelu_tanh_grad,
                trn_un_gelu_tanh_grad, trn_v_never, TRN_CLONES)

/*
 * A float32 softmax or log-softmax row (trn_fast_softmax_row(), see
 * trainium-ew-fast.h). The general engine computes in double y = x - m,
 * e = exp(y) by glibc, s = e's sum in order, then e / s or y - log(s),
 * rounded to float32. Here e' is the polynomial's for y >= -100 (within
 * 2^-46 of e, relatively, as trn_v_exp_f() assumes), glibc's own below
 * that down to -104, and 0 from -104 down (e < 2^-150 there: its softmax
 * rounds to +0 whatever s >= 1 is, and its share of s is below 2^-134
 * for any row the rows path takes). s' sums e' in 4 lanes: each sum of n
 * positive terms is within (n + 4) 2^-53 of their exact sum, so with
 * s >= 1 (the max's e is exp(0) = 1 on both sides)
 *   |s' - s| <= s rs,  rs = 2^-46 + 2 (n + 4) 2^-53 + 2^-120.
 * A softmax element e' / s' is then within r 2 (2^-46 + rs) of e / s (the
 * ulps of both divisions inside the factor 2); a log-softmax element
 * y - log(s') within 2 rs + 2^-50 |log s'| (glibc's log within an ulp on
 * each side) plus an ulp of the result. An element whose interval rounds
 * to one float32 has the general engine's bits; the row's results are
 * all proven or it is left to the general code.
 */
#define TRN_SM_POLY_MIN (-100.0)
#define TRN_SM_ZERO     (-104.0)

static inline QEMU_ALWAYS_INLINE TrnV4d trn_v_sm_exp(TrnV4d y)
{
    TrnV4l lo = y < TRN_V(TRN_SM_POLY_MIN);
    TrnV4l z = y <= TRN_V(TRN_SM_ZERO);
    TrnV4d ev;

    if ((z[0] & z[1] & z[2] & z[3]) == -1) {
        return TRN_V(0.0);      /* a masked group: -inf scores */
    }
    ev = trn_v_exp((TrnV4d)((TrnV4l)y & ~lo));
    if (unlikely(lo[0] | lo[1] | lo[2] | lo[3])) {
        for (unsigned u = 0; u < 4; u++) {
            if (lo[u]) {
                ev[u] = y[u] <= TRN_SM_ZERO ? 0.0 : exp(y[u]);
            }
        }
    }
    return ev;
}

/* The float32 values of @n lanes of @x from @p, the rest @pad. */
static inline QEMU_ALWAYS_INLINE TrnV4d trn_v_load(const float *p,
                                                   unsigned n, double pad)
{
    TrnV4f xf;

    if (n == 4) {
        memcpy(&xf, p, sizeof(xf));
        return trn_v_widen(xf);
    }
    return (TrnV4d){ p[0], n > 1 ? p[1] : pad, n > 2 ? p[2] : pad, pad };
}

/* @n lanes of @v to @p (a constant size for a whole vector: no call). */
static inline QEMU_ALWAYS_INLINE void trn_v_store(double *p, unsigned n,
                                                 TrnV4d v)
{
    if (n == 4) {
        memcpy(p, &v, sizeof(v));
    } else {
        memcpy(p, &v, n * sizeof(double));
    }
}

TRN_FMA_CLONES bool trn_fast_softmax_row(const float *x, uint64_t n,
                                         double m, bool logsm, double *e)
{
    TrnV4d sv = TRN_V(0.0), kv, lv;
    double s, rs, ls = 0;

    for (uint64_t j = 0; j < n; j += 4) {
        unsigned w = MIN(4, n - j);
        TrnV4d ev = trn_v_sm_exp(trn_v_load(x + j, w, -INFINITY) - TRN_V(m));

        trn_v_store(e + j, w, ev);
        sv += ev;
    }
    s = (sv[0] + sv[1]) + (sv[2] + sv[3]);
    rs = 0x1p-46 + 2 * (double)(n + 4) * 0x1p-53 + 0x1p-120;
    if (logsm) {
        ls = log(s);
    }
    kv = TRN_V(logsm ? 0x1p-51 : 2 * (0x1p-46 + rs));
    lv = TRN_V(logsm ? 2 * rs + fabs(ls) * 0x1p-50 + 0x1p-1000 : 0x1p-1000);
    for (uint64_t j = 0; j < n; j += 4) {
        unsigned w = MIN(4, n - j);
        TrnV4d r = TRN_V(0.0), a;
        TrnV4f f;
        TrnV4i ok;

        if (logsm) {
            r = (trn_v_load(x + j, w, 0.0) - TRN_V(m)) - TRN_V(ls);
        } else {
            if (w == 4) {
                memcpy(&r, e + j, sizeof(r));
            } else {
                memcpy(&r, e + j, w * sizeof(double));
            }
            r /= TRN_V(s);
        }
        /* |r|, 0 for an infinite one (a masked lane's -inf) */
        a = trn_v_abs(r);
        a = (TrnV4d)((TrnV4l)a & (a < TRN_V(INFINITY)));
        ok = trn_v_proven(r, a * kv + lv, (TrnV4i){ -1, -1, -1, -1 }, &f);
        if (!trn_v_all(ok)) {
            return false;
        }
        trn_v_store(e + j, w, trn_v_widen(f));
    }
    return true;
}

/*
 * A float32 log-sum-exp row (trn_fast_logsumexp_row(), see
 * trainium-ew-fast.h). The general engine folds the row online in double
 * (trainium-reduce.c's trn_lse_fold(): s rescaled by exp(m - x) at each
 * new maximum, else s += exp(x - m), glibc's exp), then m + log(s). Here
 * m is the row's maximum and s' the sum of trn_v_sm_exp(x - m) in 4
 * lanes, as the softmax row's: |s' - S| <= S rs against the exact sum S
 * of exp(x - m) (see above). The online fold's s is within S rg,
 * rg = (4 n + 8) 2^-52: each term's exp within an ulp, and on its way at
 * most n rescalings (an exp, a product and an addition, an ulp and two
 * half ulps) and n additions of positive terms. With S >= 1, the logs
 * differ by at most 1.01 (rs + rg), glibc's log adds an ulp on each side
 * and the final addition half an ulp of the result on each, so
 *   |r' - r| <= 1.01 (rs + rg) + 2^-51 |log s'| + 2^-51 |r'|
 * with room for the interval's own roundings. A row with a NaN, a +inf,
 * or only -inf is left to the general code, as is one not proven.
 */
TRN_FMA_CLONES bool trn_fast_logsumexp_row(const float *x, uint64_t n,
                                           float *r)
{
    TrnV4d sv = TRN_V(0.0);
    double s, ls, rr, rs, rg, b;
    float m = -INFINITY, lo, hi, fr;

    for (uint64_t j = 0; j < n; j++) {
        if (isnan(x[j]) || x[j] == INFINITY) {
            return false;
        }
        m = x[j] > m ? x[j] : m;
    }
    if (m == -INFINITY) {
        return false;
    }
    for (uint64_t j = 0; j < n; j += 4) {
        unsigned w = MIN(4, n - j);

        sv += trn_v_sm_exp(trn_v_load(x + j, w, -INFINITY) - TRN_V(m));
    }
    s = (sv[0] + sv[1]) + (sv[2] + sv[3]);
    ls = log(s);
    rr = (double)m + ls;
    rs = 0x1p-46 + 2 * (double)(n + 4) * 0x1p-53 + 0x1p-120;
    rg = (4 * (double)n + 8) * 0x1p-52;
    b = 1.01 * (rs + rg) + 0x1p-51 * fabs(ls) + 0x1p-51 * fabs(rr) + 0x1p-1000;
    fr = (float)rr;
    lo = (float)(rr - b);
    hi = (float)(rr + b);
    if (lo != fr || hi != fr) {
        return false;
    }
    *r = fr;
    return true;
}

TrnF32UnaryFn *trn_ew_fast_unary(unsigned fn)
{
    switch (fn) {
    case NISA_UN_EXP:
        return trn_fast_exp;
    case NISA_UN_SILU:
        return trn_fast_silu;
    case NISA_UN_SIGMOID:
        return trn_fast_sigmoid;
    case NISA_UN_GELU_TANH:
        return trn_fast_gelu_tanh;
    case NISA_UN_GELU_TANH_GRAD:
        return trn_fast_gelu_tanh_grad;
    default:
        return NULL;
    }
}

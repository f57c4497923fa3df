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
 * contracts into FMA, so both compute the same r.
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

#define TRN_V(c) ((TrnV4d){ (c), (c), (c), (c) })

/*
 * |t - tanh_glibc(u)|, bounded: the polynomial exp is within 2^-50.9 of
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

/* m ? a : b, lane by lane (m all ones or all zeros). */
static inline QEMU_ALWAYS_INLINE TrnV4d trn_v_sel(TrnV4l m, TrnV4d a, TrnV4d b)
{
    return (TrnV4d)(((TrnV4l)a & m) | ((TrnV4l)b & ~m));
}

/*
 * e^y for |y| <= 100: y = k ln2 + r with |r| <= ln2 / 2 (ln2 in two
 * parts, k ln2's high part exact), e^r by its Taylor series to r^12
 * (truncation below 2^-52 relative), times 2^k built in the exponent
 * field. k is y / ln2 rounded by adding 1.5 * 2^52, whose low bits are
 * then k.
 */
static inline QEMU_ALWAYS_INLINE TrnV4d trn_v_exp(TrnV4d y)
{
    TrnV4d kd = y * TRN_V(0x1.71547652b82fep0) + TRN_V(0x1.8p52), r, p;
    TrnV4l kb = (TrnV4l)kd;

    kd -= TRN_V(0x1.8p52);
    r = y - kd * TRN_V(0x1.62e42feep-1) - kd * TRN_V(0x1.a39ef35793c76p-33);
    p = TRN_V(1.0 / 479001600);
    p = p * r + TRN_V(1.0 / 39916800);
    p = p * r + TRN_V(1.0 / 3628800);
    p = p * r + TRN_V(1.0 / 362880);
    p = p * r + TRN_V(1.0 / 40320);
    p = p * r + TRN_V(1.0 / 5040);
    p = p * r + TRN_V(1.0 / 720);
    p = p * r + TRN_V(1.0 / 120);
    p = p * r + TRN_V(1.0 / 24);
    p = p * r + TRN_V(1.0 / 6);
    p = p * r + TRN_V(0.5);
    p = p * r + TRN_V(1.0);
    p = p * r + TRN_V(1.0);
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
TrnV4i trn_v_proven(TrnV4d r, TrnV4d b, TrnV4l in, TrnV4f *f)
{
    TrnV4f fr = __builtin_convertvector(r, TrnV4f);
    TrnV4f lo = __builtin_convertvector(r - b, TrnV4f);
    TrnV4f hi = __builtin_convertvector(r + b, TrnV4f);

    *f = fr;
    return (lo == fr) & (hi == fr) & __builtin_convertvector(in, TrnV4i);
}

/*
 * trn_un_gelu_tanh(): 0.5 * x * (1 + t). Only t differs from the double
 * evaluation: |dr| <= 0.5 |x| (ET + 2^-52) + ulp(r).
 */
static inline QEMU_ALWAYS_INLINE TrnV4i trn_v_gelu_tanh(TrnV4d x, TrnV4f *f)
{
    TrnV4l in = trn_v_abs(x) <= TRN_V(TRN_FAST_GELU_MAX);
    TrnV4d xs = trn_v_sel(in, x, TRN_V(0.0));
    TrnV4d u = TRN_V(TRN_SQRT_2_PI) * (xs + TRN_V(0.044715) * xs * xs * xs);
    TrnV4d t = trn_v_tanh_abs(u);
    TrnV4d r = TRN_V(0.5) * xs * (TRN_V(1.0) + t);
    TrnV4d b = trn_v_abs(xs) * TRN_V(TRN_FAST_ET) +
               trn_v_abs(r) * TRN_V(0x1p-48) + TRN_V(0x1p-1000);

    return trn_v_proven(r, b, in, f);
}

/*
 * trn_un_gelu_tanh_grad(): 0.5 (1 + t) + 0.5 x (1 - t t) c P, P = 1 +
 * 3 * 0.044715 x x: |dr| <= 0.5 (ET + 2^-52) + 0.5 |x| c P (2 ET + 2^-50)
 * + an ulp of each product (|x| c P <= 32) and of r.
 */
static inline QEMU_ALWAYS_INLINE
TrnV4i trn_v_gelu_tanh_grad(TrnV4d x, TrnV4f *f)
{
    TrnV4l in = trn_v_abs(x) <= TRN_V(TRN_FAST_GELU_MAX);
    TrnV4d xs = trn_v_sel(in, x, TRN_V(0.0));
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
 * 2^-50.9 of it: |dr| <= |r| 2^-46. |x| <= 100 (results from subnormal
 * to overflowing float32; the bound test sorts out those near its edges).
 */
static inline QEMU_ALWAYS_INLINE TrnV4i trn_v_exp_f(TrnV4d x, TrnV4f *f)
{
    TrnV4l in = trn_v_abs(x) <= TRN_V(100.0);
    TrnV4l zero = x <= TRN_V(-104.0);
    TrnV4d r = trn_v_exp(trn_v_sel(in, x, TRN_V(0.0)));

    /*
     * From -104 down (-inf included, a softmax's masked lanes), e^x is
     * below 2^-150, glibc's result too: float32 +0.
     */
    r = trn_v_sel(zero, TRN_V(0.0), r);
    return trn_v_proven(r, r * TRN_V(0x1p-46) + TRN_V(0x1p-1000), in | zero,
                        f);
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

/*
 * A kernel: 4 elements at a time through @VEC; an element it does not
 * prove, and the last n % 4, through @REF (trainium-ew-ops.h).
 */
#define TRN_FAST_KERNEL(NAME, VEC, REF)                                      \
    static TRN_CLONES void NAME(const float *x, float *d, uint64_t n,        \
                                bool quiet)                                  \
    {                                                                        \
        uint64_t j = 0;                                                      \
                                                                             \
        for (; j + 4 <= n; j += 4) {                                         \
            TrnV4f xf, f;                                                    \
            TrnV4i ok;                                                       \
            uint64_t w[2];                                                   \
                                                                             \
            memcpy(&xf, x + j, sizeof(xf));                                  \
            ok = VEC(__builtin_convertvector(xf, TrnV4d), &f);               \
            memcpy(w, &ok, sizeof(w));                                       \
            if (unlikely((w[0] & w[1]) != UINT64_MAX)) {                     \
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

TRN_FAST_KERNEL(trn_fast_exp, trn_v_exp_f, trn_un_exp)
TRN_FAST_KERNEL(trn_fast_gelu_tanh, trn_v_gelu_tanh, trn_un_gelu_tanh)
TRN_FAST_KERNEL(trn_fast_gelu_tanh_grad, trn_v_gelu_tanh_grad,
                trn_un_gelu_tanh_grad)

TrnF32UnaryFn *trn_ew_fast_unary(unsigned fn)
{
    switch (fn) {
    case NISA_UN_EXP:
        return trn_fast_exp;
    case NISA_UN_GELU_TANH:
        return trn_fast_gelu_tanh;
    case NISA_UN_GELU_TANH_GRAD:
        return trn_fast_gelu_tanh_grad;
    default:
        return NULL;
    }
}

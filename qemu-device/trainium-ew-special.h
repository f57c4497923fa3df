/*
 * Virtual Trainium accelerator: the elementwise forms (trainium-ew-ops.h
 * conventions) of the special functions and the other functions appended
 * to the ISA's tables after LOGICAL_NOT (unary) and SHR (binary). The
 * longer algorithms are in trainium-special.c.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TRAINIUM_EW_SPECIAL_H
#define TRAINIUM_EW_SPECIAL_H

#include "trainium-special.h"

/* ---- unary, double ---- */

static inline double trn_un_digamma(double x, double p, double q)
{
    return trn_sf_digamma(x);
}
static inline double trn_un_polygamma(double x, double p, double q)
{
    return trn_sf_polygamma(p, x);
}
static inline double trn_un_i0(double x, double p, double q)
{
    return trn_sf_i0(x, false);
}
static inline double trn_un_i0e(double x, double p, double q)
{
    return trn_sf_i0(x, true);
}
static inline double trn_un_i1(double x, double p, double q)
{
    return trn_sf_i1(x, false);
}
static inline double trn_un_i1e(double x, double p, double q)
{
    return trn_sf_i1(x, true);
}
static inline double trn_un_ndtri(double x, double p, double q)
{
    return trn_sf_ndtri(x);
}
static inline double trn_un_log_ndtr(double x, double p, double q)
{
    return trn_sf_log_ndtr(x);
}
static inline double trn_un_erfcx(double x, double p, double q)
{
    return trn_sf_erfcx(x);
}
static inline double trn_un_airy_ai(double x, double p, double q)
{
    return trn_sf_airy_ai(x);
}
static inline double trn_un_bessel_j0(double x, double p, double q)
{
    return trn_sf_bessel_j(x, 0);
}
static inline double trn_un_bessel_j1(double x, double p, double q)
{
    return trn_sf_bessel_j(x, 1);
}
static inline double trn_un_bessel_y0(double x, double p, double q)
{
    return trn_sf_bessel_y(x, 0);
}
static inline double trn_un_bessel_y1(double x, double p, double q)
{
    return trn_sf_bessel_y(x, 1);
}
static inline double trn_un_bessel_k0(double x, double p, double q)
{
    return trn_sf_k0(x, false);
}
static inline double trn_un_bessel_k1(double x, double p, double q)
{
    return trn_sf_k1(x, false);
}
static inline double trn_un_bessel_k0e(double x, double p, double q)
{
    return trn_sf_k0(x, true);
}
static inline double trn_un_bessel_k1e(double x, double p, double q)
{
    return trn_sf_k1(x, true);
}
/* sin(x) / x, 1 at 0, 0 at the infinities */
static inline double trn_un_spherical_j0(double x, double p, double q)
{
    return isinf(x) ? 0.0 : x == 0 ? 1.0 : sin(x) / x;
}
/* -x log x; 0 at 0, -inf below */
static inline double trn_un_entr(double x, double p, double q)
{
    return isnan(x) ? x : x > 0 ? -x * log(x) : x == 0 ? 0.0 : -INFINITY;
}
static inline double trn_un_sinc(double x, double p, double q)
{
    return x == 0 ? 1.0 : sin(M_PI * x) / (M_PI * x);
}
static inline double trn_un_exp2(double x, double p, double q) { return exp2(x); }
static inline double trn_un_logit(double x, double p, double q)
{
    if (q != 0) {
        x = x < p ? p : x > 1 - p ? 1 - p : x;
    }
    return log(x / (1 - x));
}
static inline double trn_un_angle(double x, double p, double q)
{
    return isnan(x) ? x : x < 0 ? M_PI : 0.0;
}
/* x = m 2^e, 0.5 <= |m| < 1; 0, inf, NaN: m = x, e = 0 */
static inline double trn_un_frexp_mant(double x, double p, double q)
{
    int e;

    return isfinite(x) ? frexp(x, &e) : x;
}
static inline double trn_un_frexp_exp(double x, double p, double q)
{
    int e = 0;

    if (isfinite(x)) {
        frexp(x, &e);
    }
    return e;
}
static inline double trn_un_nan_to(double x, double p, double q)
{
    return isnan(x) ? p : x;
}
static inline double trn_un_inf_to(double x, double p, double q)
{
    return x == INFINITY ? p : x == -INFINITY ? q : x;
}
static inline double trn_un_threshold(double x, double p, double q)
{
    return x <= p ? q : x;
}

/* ---- binary, double ---- */

/* The number one; NaN only if both are */
static inline double trn_bin_fmax(double x, double y, double a) { return fmax(x, y); }
static inline double trn_bin_fmin(double x, double y, double a) { return fmin(x, y); }
static inline double trn_bin_heaviside(double x, double y, double a)
{
    return x == 0 ? y : (double)(x > 0);
}
/* The next float32 after x toward y. */
static inline double trn_bin_nextafter(double x, double y, double a)
{
    return nextafterf((float)x, (float)y);
}
/* The next float64 after x toward y (a float64 destination). */
static inline double trn_bin_nextafter_f64(double x, double y, double a)
{
    return nextafter(x, y);
}
static inline double trn_bin_zeta(double x, double y, double a)
{
    return trn_sf_zeta(x, y);
}
/* x * log1p(y), 0 where x is 0 (unless y is NaN). */
static inline double trn_bin_xlog1py(double x, double y, double a)
{
    return isnan(y) ? NAN : x == 0 ? 0.0 : x * log1p(y);
}
static inline double trn_bin_igamma(double x, double y, double a)
{
    return trn_sf_igamma(x, y);
}
static inline double trn_bin_igammac(double x, double y, double a)
{
    return trn_sf_igammac(x, y);
}
#define TRN_POLY_BIN(name, KIND, X)                                          \
    static inline double trn_bin_##name(double x, double y, double a)        \
    {                                                                        \
        return trn_sf_poly(KIND, X, y);                                      \
    }
TRN_POLY_BIN(cheb_t, TRN_POLY_CHEB_T, x)
TRN_POLY_BIN(cheb_u, TRN_POLY_CHEB_U, x)
TRN_POLY_BIN(cheb_v, TRN_POLY_CHEB_V, x)
TRN_POLY_BIN(cheb_w, TRN_POLY_CHEB_W, x)
TRN_POLY_BIN(scheb_t, TRN_POLY_CHEB_T, 2 * x - 1)
TRN_POLY_BIN(scheb_u, TRN_POLY_CHEB_U, 2 * x - 1)
TRN_POLY_BIN(scheb_v, TRN_POLY_CHEB_V, 2 * x - 1)
TRN_POLY_BIN(scheb_w, TRN_POLY_CHEB_W, 2 * x - 1)
TRN_POLY_BIN(hermite_h, TRN_POLY_HERMITE_H, x)
TRN_POLY_BIN(hermite_he, TRN_POLY_HERMITE_HE, x)
TRN_POLY_BIN(laguerre_l, TRN_POLY_LAGUERRE_L, x)
TRN_POLY_BIN(legendre_p, TRN_POLY_LEGENDRE_P, x)
static inline double trn_bin_prelu(double x, double y, double a)
{
    return x > 0 ? x : y * x;
}
/* logit's backward: the gradient x over logit's derivative's inverse */
static inline double trn_bin_logit_grad(double x, double y, double a)
{
    return x / (y * (1.0 - y));
}

/* ---- binary, int64 ---- */

static inline int64_t trn_bini_fmax(int64_t x, int64_t y, int64_t a) { return MAX(x, y); }
static inline int64_t trn_bini_fmin(int64_t x, int64_t y, int64_t a) { return MIN(x, y); }
static inline int64_t trn_bini_heaviside(int64_t x, int64_t y, int64_t a)
{
    return x == 0 ? y : x > 0;
}

#endif

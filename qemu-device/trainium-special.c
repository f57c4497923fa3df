/*
 * Virtual Trainium accelerator: special functions in double (see
 * trainium-special.h). Textbook methods: recurrences into the range of an
 * asymptotic expansion (digamma, trigamma), Euler-Maclaurin summation
 * (Hurwitz zeta), power series and continued fractions (incomplete gamma),
 * Halley's iteration on erfc (ndtri), three-term recurrences (the
 * orthogonal polynomials); Bessel and Airy are in trainium-bessel.c. The
 * special values (poles, infinities, NaN, out-of-domain arguments) are
 * PyTorch's documented ones (docs/hardware.md, "Instructions").
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include <math.h>
#include "trainium-special.h"

#define TRN_SQRT_PI 1.7724538509055160273
#define TRN_EPS 1e-17

/* ---- gamma family ---- */

double trn_sf_digamma(double x)
{
    double r = 0, y;

    if (x == 0) {
        return copysign(INFINITY, -x);
    }
    if (isnan(x)) {
        return x;
    }
    if (x < 0) {
        if (x == trunc(x)) {
            return NAN;     /* the poles, and -inf */
        }
        /* reflection; tan(pi frac(x)) is the accurate form */
        return trn_sf_digamma(1 - x) - M_PI / tan(M_PI * (x - trunc(x)));
    }
    if (isinf(x)) {
        return x;
    }
    for (; x < 10; x += 1) {
        r -= 1 / x;
    }
    /* ln x - 1/(2x) - sum B_2k / (2k x^2k) */
    y = 1 / (x * x);
    return r + log(x) - 0.5 / x -
           y * (1.0 / 12 - y * (1.0 / 120 - y * (1.0 / 252 - y * (1.0 / 240 -
           y * (1.0 / 132)))));
}

double trn_sf_trigamma(double x)
{
    double r = 0, y, s;

    if (isnan(x) || x == -INFINITY) {
        return NAN;
    }
    if (x <= 0 && x == trunc(x)) {
        return INFINITY;    /* the poles */
    }
    if (x < 0.5) {
        /* psi1(x) + psi1(1 - x) = pi^2 / sin^2(pi x) */
        s = sin(M_PI * (x - trunc(x)));
        return M_PI * M_PI / (s * s) - trn_sf_trigamma(1 - x);
    }
    if (isinf(x)) {
        return 0;
    }
    for (; x < 10; x += 1) {
        r += 1 / (x * x);
    }
    /* 1/x + 1/(2x^2) + sum B_2k / x^(2k+1) */
    y = 1 / (x * x);
    return r + 1 / x + 0.5 * y +
           y / x * (1.0 / 6 - y * (1.0 / 30 - y * (1.0 / 42 - y * (1.0 / 30 -
           y * (5.0 / 66)))));
}

/* B_2k / (2k)!, k = 1.. */
static const double trn_bern_fact[] = {
    1.0 / 12, -1.0 / 720, 1.0 / 30240, -1.0 / 1209600, 1.0 / 47900160,
    -691.0 / 1307674368000.0, 1.0 / 74724249600.0,
    -3617.0 / 10670622842880000.0, 43867.0 / 5109094217170944000.0,
    -174611.0 / 802857662698291200000.0,
};

/*
 * Hurwitz zeta, sum over k >= 0 of (q + k)^-s: the terms directly until
 * q + k >= 10 (and >= s), then the Euler-Maclaurin tail.
 */
double trn_sf_zeta(double s, double q)
{
    double sum = 0, a = q, t, f, term;
    unsigned i;

    if (isnan(s) || isnan(q)) {
        return NAN;
    }
    if (s == 1) {
        return INFINITY;
    }
    if (s < 1) {
        return NAN;
    }
    if (q <= 0) {
        if (q == floor(q)) {
            return INFINITY;
        }
        if (s != floor(s)) {
            return NAN;     /* a negative base to a fractional power */
        }
    }
    if (isinf(q)) {
        return NAN;         /* as PyTorch: its tail is 0 * inf */
    }
    for (i = 0; a < 10 || a < s; i++, a += 1) {
        term = pow(a, -s);
        sum += term;
        if (a > 1 && fabs(term) * a <= TRN_EPS * fabs(sum) * (s - 1)) {
            return sum;
        }
        if (i >= TRN_SF_MAX_DEGREE * 16) {
            return NAN;
        }
    }
    t = pow(a, -s);
    sum += a * t / (s - 1) + 0.5 * t;
    f = s / a * t;              /* s a^(-s-1) */
    for (i = 0; i < ARRAY_SIZE(trn_bern_fact); i++) {
        term = trn_bern_fact[i] * f;
        sum += term;
        if (fabs(term) <= TRN_EPS * fabs(sum)) {
            break;
        }
        f *= (s + 2 * i + 1) * (s + 2 * i + 2) / (a * a);
    }
    return sum;
}

/* psi^(n)(x): digamma, trigamma, else (-1)^(n+1) n! zeta(n + 1, x). */
double trn_sf_polygamma(double n, double x)
{
    if (n == 0) {
        return trn_sf_digamma(x);
    }
    if (n == 1) {
        return trn_sf_trigamma(x);
    }
    if (!(n > 1) || n != trunc(n)) {
        return NAN;
    }
    return (fmod(n, 2) != 0 ? 1 : -1) * exp(lgamma(n + 1)) *
           trn_sf_zeta(n + 1, x);
}

/* x^a e^-x / Gamma(a + @shift), in logs */
static double trn_igam_front(double a, double x, double shift)
{
    return exp(a * log(x) - x - lgamma(a + shift));
}

/* P(a, x) by its power series, for x < a + 1. */
static double trn_igam_series(double a, double x)
{
    double term = 1, sum = 1;

    for (unsigned n = 1; n < TRN_SF_MAX_DEGREE * 16; n++) {
        term *= x / (a + n);
        sum += term;
        if (term <= TRN_EPS * sum) {
            break;
        }
    }
    return trn_igam_front(a, x, 1) * sum;
}

/* Q(a, x) by its continued fraction (modified Lentz), for x >= a + 1. */
static double trn_igamc_cf(double a, double x)
{
    const double tiny = 1e-300;
    double b = x + 1 - a, c = 1 / tiny, d = 1 / b, h = d;

    for (unsigned i = 1; i < TRN_SF_MAX_DEGREE * 16; i++) {
        double an = -(double)i * (i - a), del;

        b += 2;
        d = an * d + b;
        d = fabs(d) < tiny ? tiny : d;
        c = b + an / c;
        c = fabs(c) < tiny ? tiny : c;
        d = 1 / d;
        del = d * c;
        h *= del;
        if (fabs(del - 1) <= TRN_EPS * 10) {
            break;
        }
    }
    return trn_igam_front(a, x, 0) * h;
}

/*
 * The regularized incomplete gamma functions, P (lower) if @upper is
 * false, else Q; their boundary values. Returns -1 when not at one.
 */
static double trn_igam_edge(double a, double x, bool upper)
{
    if (isnan(a) || isnan(x) || a < 0 || x < 0) {
        return NAN;
    }
    if (a == 0) {
        return x > 0 ? (upper ? 0 : 1) : NAN;
    }
    if (x == 0) {
        return upper ? 1 : 0;
    }
    if (isinf(a)) {
        return isinf(x) ? NAN : (upper ? 1 : 0);
    }
    if (isinf(x)) {
        return upper ? 0 : 1;
    }
    return -1;
}

double trn_sf_igamma(double a, double x)
{
    double e = trn_igam_edge(a, x, false);

    if (e != -1) {
        return e;
    }
    return x < a + 1 ? trn_igam_series(a, x) : 1 - trn_igamc_cf(a, x);
}

double trn_sf_igammac(double a, double x)
{
    double e = trn_igam_edge(a, x, true);

    if (e != -1) {
        return e;
    }
    return x < a + 1 ? 1 - trn_igam_series(a, x) : trn_igamc_cf(a, x);
}

/* ---- the normal distribution ---- */

/*
 * The inverse of Phi(x) = erfc(-x / sqrt 2) / 2: a rational start
 * (Abramowitz-Stegun 26.2.23, error < 4.5e-4) on the upper tail q, then
 * Halley steps on erfc(z / sqrt 2) / 2 - q.
 */
double trn_sf_ndtri(double p)
{
    double q, t, z;

    if (isnan(p) || p < 0 || p > 1) {
        return NAN;
    }
    if (p == 0 || p == 1 || p == 0.5) {
        return p == 0 ? -INFINITY : p == 1 ? INFINITY : 0;
    }
    q = p < 0.5 ? p : 1 - p;
    t = sqrt(-2 * log(q));
    z = t - (2.515517 + 0.802853 * t + 0.010328 * t * t) /
            (1 + 1.432788 * t + 0.189269 * t * t + 0.001308 * t * t * t);
    for (int i = 0; i < 4; i++) {
        double f = 0.5 * erfc(z * M_SQRT1_2) - q;
        double r = f / (exp(-0.5 * z * z) / (TRN_SQRT_PI * M_SQRT2));

        z += r / (1 - 0.5 * z * r);
    }
    return p < 0.5 ? -z : z;
}

/* exp(x^2) erfc(x); beyond 26, its asymptotic series. */
double trn_sf_erfcx(double x)
{
    double y, term, sum;

    if (isnan(x)) {
        return x;
    }
    if (x < 26) {
        return exp(x * x) * erfc(x);
    }
    if (isinf(x)) {
        return 0;
    }
    y = 1 / (2 * x * x);
    term = sum = 1;
    for (int k = 1; k < 20; k++) {
        term *= -(2 * k - 1) * y;
        sum += term;
    }
    return sum / (x * TRN_SQRT_PI);
}

double trn_sf_log_ndtr(double x)
{
    double t = x * M_SQRT1_2;

    if (x < -1) {
        return log(trn_sf_erfcx(-t) / 2) - t * t;
    }
    return log1p(-erfc(t) / 2);
}

/* ---- orthogonal polynomials ---- */

double trn_sf_poly(enum trn_sf_poly kind, double x, double n)
{
    double p = 1, q, r, t = trunc(n);
    int64_t deg;

    /* The degree is n truncated; negative (or NaN) degrees give 0. */
    if (isnan(n) || t < 0 || t >= 9223372036854775808.0) {
        return 0;
    }
    if (t > TRN_SF_MAX_DEGREE) {
        return NAN;
    }
    deg = (int64_t)t;
    switch (kind) {
    case TRN_POLY_CHEB_T:
    case TRN_POLY_HERMITE_HE:
    case TRN_POLY_LEGENDRE_P:
        q = x;
        break;
    case TRN_POLY_CHEB_U:
    case TRN_POLY_HERMITE_H:
        q = 2 * x;
        break;
    case TRN_POLY_CHEB_V:
        q = 2 * x - 1;
        break;
    case TRN_POLY_CHEB_W:
        q = 2 * x + 1;
        break;
    case TRN_POLY_LAGUERRE_L:
        q = 1 - x;
        break;
    default:
        g_assert_not_reached();
    }
    if (deg == 0) {
        return 1;
    }
    /* q = P_k, p = P_(k-1) */
    for (int64_t k = 1; k < deg; k++) {
        switch (kind) {
        case TRN_POLY_CHEB_T:
        case TRN_POLY_CHEB_U:
        case TRN_POLY_CHEB_V:
        case TRN_POLY_CHEB_W:
            r = 2 * x * q - p;
            break;
        case TRN_POLY_HERMITE_H:
            r = 2 * x * q - 2.0 * k * p;
            break;
        case TRN_POLY_HERMITE_HE:
            r = x * q - (double)k * p;
            break;
        case TRN_POLY_LAGUERRE_L:
            r = ((2.0 * k + 1 - x) * q - (double)k * p) / (k + 1);
            break;
        case TRN_POLY_LEGENDRE_P:
            r = ((2.0 * k + 1) * x * q - (double)k * p) / (k + 1);
            break;
        default:
            g_assert_not_reached();
        }
        p = q;
        q = r;
    }
    return q;
}

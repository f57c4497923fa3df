/*
 * Virtual Trainium accelerator: Bessel and Airy functions in double (see
 * trainium-special.h): power series and the large-argument expansion
 * (I_0, I_1), the trapezoidal rule on an integral representation (K_0,
 * K_1), the Maclaurin series and DLMF 9.7's asymptotic expansions (Ai), the
 * C library's j0/j1/y0/y1. Special values as PyTorch's (docs/hardware.md,
 * "Instructions").
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include <math.h>
#include "trainium-special.h"

#define TRN_SQRT_PI 1.7724538509055160273
#define TRN_EPS 1e-17

/* ---- Bessel and Airy ---- */

double trn_sf_bessel_ie(double x, int nu)
{
    double mu = 4.0 * nu * nu, term, sum;

    if (x <= 20) {
        double t = 0.25 * x * x;

        term = nu ? 0.5 * x : 1.0;
        sum = term;
        for (int k = 1; k < 500 && term > TRN_EPS * sum; k++) {
            term *= t / (k * (double)(k + nu));
            sum += term;
        }
        return sum * exp(-x);
    }
    /* e^x / sqrt(2 pi x) sum (-1)^k a_k(nu) / x^k */
    term = sum = 1;
    for (int k = 1; k < 60; k++) {
        double next = term * -(mu - (2 * k - 1) * (2 * k - 1)) / (8.0 * k * x);

        if (fabs(next) >= fabs(term) || fabs(next) <= TRN_EPS) {
            break;
        }
        term = next;
        sum += term;
    }
    return sum / sqrt(2 * M_PI * x);
}

double trn_sf_i0(double x, bool scaled)
{
    double ax = fabs(x);

    if (isinf(x)) {
        return scaled ? 0 : NAN;    /* PyTorch's (inf / inf) */
    }
    return scaled ? trn_sf_bessel_ie(ax, 0) : trn_sf_bessel_ie(ax, 0) * exp(ax);
}

double trn_sf_i1(double x, bool scaled)
{
    double ax = fabs(x), r;

    if (isinf(x)) {
        return scaled ? copysign(0, x) : NAN;
    }
    r = trn_sf_bessel_ie(ax, 1) * (scaled ? 1 : exp(ax));
    return x < 0 ? -r : r;
}

/*
 * e^x K_nu(x) = integral over t >= 0 of exp(-x (cosh t - 1)) cosh(nu t),
 * by the trapezoidal rule: its error falls as exp(-pi^2 / (2h)) for an
 * integrand analytic in a strip, 1e-17 at h = 1/8; for large x the peak
 * at t = 0 is 1/sqrt(x) wide, and h = 1/(2 sqrt x) keeps the error at
 * exp(-8 pi^2).
 */
double trn_sf_bessel_ke(double x, int nu)
{
    const double h = MIN(0.125, 0.5 / sqrt(x));
    double sum = 0.5;

    for (int k = 1; k < 8192; k++) {
        double t = k * h, sh = sinh(0.5 * t);
        double g = -2 * x * sh * sh;
        double f;

        if (nu) {
            g += t + log1p(exp(-2 * t)) - M_LN2;    /* log cosh t */
        }
        f = exp(g);
        sum += f;
        if (f <= TRN_EPS * sum) {
            break;
        }
    }
    return sum * h;
}

static double trn_sf_k(double x, bool scaled, int nu)
{
    if (isnan(x)) {
        return x;
    }
    if (x == 0) {
        return INFINITY;
    }
    if (x < 0) {
        return NAN;
    }
    if (isinf(x)) {
        return 0;
    }
    return trn_sf_bessel_ke(x, nu) * (scaled ? 1 : exp(-x));
}

double trn_sf_k0(double x, bool scaled)
{
    return trn_sf_k(x, scaled, 0);
}

double trn_sf_k1(double x, bool scaled)
{
    return trn_sf_k(x, scaled, 1);
}

/* u_k of the Airy asymptotic expansions (DLMF 9.7.2), k <= 20. */
static double trn_airy_u(int k)
{
    double u = 1;

    for (int j = 1; j <= k; j++) {
        u *= (6.0 * j - 5) * (6.0 * j - 3) * (6.0 * j - 1) /
             ((2.0 * j - 1) * 216 * j);
    }
    return u;
}

double trn_sf_airy_ai(double x)
{
    double z, zeta, sum, term, f, g, a, b;

    if (isnan(x)) {
        return x;
    }
    if (isinf(x)) {
        return NAN;
    }
    if (x > 103.892) {
        return 0;
    }
    if (x >= 6) {                           /* DLMF 9.7.5 */
        zeta = 2.0 / 3 * x * sqrt(x);
        sum = 0;
        for (int k = 0; k < 20; k++) {
            term = trn_airy_u(k) / pow(-zeta, k);
            sum += term;
        }
        return exp(-zeta) / (2 * TRN_SQRT_PI * sqrt(sqrt(x))) * sum;
    }
    if (x <= -8) {                          /* DLMF 9.7.9 */
        z = -x;
        zeta = 2.0 / 3 * z * sqrt(z);
        f = g = 0;
        for (int k = 0; k < 10; k++) {
            double sg = k % 2 ? -1 : 1;

            f += sg * trn_airy_u(2 * k) / pow(zeta, 2 * k);
            g += sg * trn_airy_u(2 * k + 1) / pow(zeta, 2 * k + 1);
        }
        return (cos(zeta - M_PI / 4) * f + sin(zeta - M_PI / 4) * g) /
               (TRN_SQRT_PI * sqrt(sqrt(z)));
    }
    /* Maclaurin series: Ai(x) = Ai(0) f(x) + Ai'(0) g(x) */
    a = f = 1;
    b = g = x;
    for (int k = 1; k < 200; k++) {
        a *= x * x * x / ((3.0 * k) * (3.0 * k - 1));
        b *= x * x * x / ((3.0 * k) * (3.0 * k + 1));
        f += a;
        g += b;
        if (fabs(a) + fabs(b) <= TRN_EPS * (fabs(f) + fabs(g))) {
            break;
        }
    }
    return 0.355028053887817239260 * f - 0.258819403792806798405 * g;
}

/* J_nu, Y_nu (nu 0 or 1) of the C library; not finite: NaN. */
double trn_sf_bessel_j(double x, int nu)
{
    if (!isfinite(x)) {
        return NAN;
    }
    return nu ? j1(x) : j0(x);
}

double trn_sf_bessel_y(double x, int nu)
{
    if (isnan(x) || x < 0) {
        return NAN;
    }
    if (x == 0) {
        return -INFINITY;
    }
    if (isinf(x)) {
        return NAN;
    }
    return nu ? y1(x) : y0(x);
}

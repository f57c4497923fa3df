/*
 * Virtual Trainium accelerator: the special functions of the elementwise
 * tables (gamma family, Bessel and Airy functions, the normal
 * distribution, orthogonal polynomials), in double. trainium-ew-ops.h
 * wraps them as the ISA functions; docs/hardware.md, "Instructions",
 * gives each one's definition and special values.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TRAINIUM_SPECIAL_H
#define TRAINIUM_SPECIAL_H

/*
 * The largest degree of a polynomial, and the most terms of a series or
 * continued fraction, the card evaluates for one element; a degree beyond
 * it gives NaN.
 */
#define TRN_SF_MAX_DEGREE 65536

double trn_sf_digamma(double x);
double trn_sf_trigamma(double x);
double trn_sf_polygamma(double n, double x);
double trn_sf_zeta(double s, double q);
double trn_sf_igamma(double a, double x);
double trn_sf_igammac(double a, double x);

/* exp(-|x|) I_nu(|x|), nu 0 or 1, x >= 0 */
double trn_sf_bessel_ie(double x, int nu);
/* exp(x) K_nu(x), nu 0 or 1 */
double trn_sf_bessel_ke(double x, int nu);
double trn_sf_i0(double x, bool scaled);
double trn_sf_i1(double x, bool scaled);
double trn_sf_k0(double x, bool scaled);
double trn_sf_k1(double x, bool scaled);
double trn_sf_airy_ai(double x);
double trn_sf_bessel_j(double x, int nu);
double trn_sf_bessel_y(double x, int nu);

double trn_sf_ndtri(double p);
double trn_sf_log_ndtr(double x);
double trn_sf_erfcx(double x);

/* The polynomial families of the BINARY table, (x, degree n). */
enum trn_sf_poly {
    TRN_POLY_CHEB_T, TRN_POLY_CHEB_U, TRN_POLY_CHEB_V, TRN_POLY_CHEB_W,
    TRN_POLY_HERMITE_H, TRN_POLY_HERMITE_HE, TRN_POLY_LAGUERRE_L,
    TRN_POLY_LEGENDRE_P,
};
double trn_sf_poly(enum trn_sf_poly kind, double x, double n);

#endif

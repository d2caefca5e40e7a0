/* The GDP residue updates (RF Thm 5; RF Thm 1 with approximate-GDP budgets
 * and budgets given as curves): the searches for the residue G_mu' (+)
 * R_{0,d} over the certified test of filter_dominance.c.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The update (dpa_f_residue_update) searches mu' above the naive end
 * sqrt(M^2 - mu0^2 - nu^2) (nu: rest_nu), which is sound without a test, so
 * the result is never below the naive filter's (where the test cannot
 * resolve the curves, e.g. M >> 1, it is the naive end); the residue's delta
 * keeps what the query's own delta leaves (residue_delta, RF Cor 6).  Under
 * a budget curve (dpa_f_residue_update_curve) the residue keeps half of it
 * and mu' is searched from 0 (docs/filters.md). */
#include <math.h>
#include "filter/filter_internal.h"
#include "filter/filter_bcurve.h"
#include "num/num.h"

/* Bisection of the residue update: stops at a bracket of RES_TOL * M
 * (docs/filters.md: the grid test's own slack is larger). */
#define RES_TOL 1e-8

typedef dpa_f_bspec bspec;

/* m = sqrt(mu'^2 + mu0^2), rounded up */
static double gauss_total(double mu_prime, double mu0)
{
    if (mu0 == 0) return mu_prime;
    if (mu_prime == 0) return mu0;
    return dpa_f_up(hypot(mu_prime, mu0) * (1 + 4 * DPA_UNIT_ROUNDOFF));
}

/* G_mu' (+) R_{0,d} (+) L <= the budget b (certified): the rest's test
 * with the Gaussian part m = sqrt(mu'^2 + mu0^2). */
static int residue_ok(const dpa_f_query *fq, double mu_prime, const bspec *b)
{
    double mu0;
    dpa_f_query_is_gaussian(fq, &mu0);
    return dpa_f_rest_ok(fq, gauss_total(mu_prime, mu0), b);
}

int dpa_f_residue_ok(const dpa_f_query *fq, double mu_prime, double M)
{
    bspec b = {M, 0.0, 0.0, NULL};
    return residue_ok(fq, mu_prime, &b);
}

/* Relative stop of the bisection for the rest's GDP parameter (rest_nu):
 * it only sets the naive lower end of the residue search. */
#define NU_TOL 1e-7


/* A certified upper bound on the smallest GDP parameter nu of the query's
 * non-Gaussian rest R with R <= G_nu (+) R_{0,a}, a = rest_inf (a = 0: R <=
 * G_nu): the finite part is eps-DP with eps its largest |loss| (the largest
 * w of the law of W under A and of the law of -W under B, both rounded up;
 * a symmetric rest has one law), so R <= RR_eps (+) R_{0,a} <= G_nu(eps)
 * (+) R_{0,a} (dpa_f_nu_pure, rounded up); then bisection on nu with the
 * certified m = 0 test against G_nu (+) R_{0,a}, keeping a value that
 * passed.  INFINITY if a >= 1. */
static double rest_nu(const dpa_f_query *fq)
{
    double mu0;
    if (dpa_f_query_is_gaussian(fq, &mu0)) return 0;
    double a = dpa_f_query_rest_inf(fq);
    if (!(a < 1)) return INFINITY;
    double hi = dpa_f_nu_pure(dpa_f_query_rest_eps(fq)), lo = 0;
    if (!(hi > 0) || !isfinite(hi)) return hi;
    /* nu(eps) is exact for randomized response: a first test 1e-3 below it
     * spares the bisection when no gain is to be had */
    double probe = hi * (1 - 1e-3);
    bspec b = {probe, a, 0.0, NULL};
    if (!dpa_f_rest_ok(fq, 0.0, &b)) return hi;
    hi = probe;
    for (int it = 0; it < 100 && hi - lo > NU_TOL * hi; it++) {
        double mid = 0.5 * (lo + hi);
        if (!(mid > lo && mid < hi)) break;
        b.M = mid;
        if (dpa_f_rest_ok(fq, 0.0, &b)) hi = mid;
        else lo = mid;
    }
    return hi;
}

/* The residue's delta for a query whose laws carry the mass a > 0 at +inf,
 * under the budget delta D: below d* = 1 - (1 - D)/(1 - a) (the product
 * rule of RF Cor 6: R_{0,d} (+) R_{0,a} = R_{0, 1 - (1-d)(1-a)}), moved down
 * by an absolute margin (DELTA_MARGIN, doubled until enough) until the
 * offset c0 = 1 - a - (1 - D)/(1 - d) is certified >= 0 (bprof_make: c0 is
 * a difference of numbers near 1, so its rounding is a few units of 1e-16
 * absolute).  -1 if none (a >= D). */
#define DELTA_MARGIN 4e-16
static double residue_delta(double M, double D, double a)
{
    if (a == 0) return D;
    if (!(a < D)) return -1;
    double d0 = (D - a) / (1 - a), d = d0, mg = DELTA_MARGIN;
    for (int it = 0; it < 40; it++, mg *= 2) {
        d = dpa_f_dn(d0 - mg);
        if (!(d >= 0)) d = 0;
        bspec b = {M, D, d, NULL};
        if (dpa_f_bspec_offset_ok(&b, a)) return d;
        if (d == 0) break;
    }
    return -1;
}

dpa_status dpa_f_residue_update(const dpa_f_query *fq, double M, double D, int *accepted, double *mu_new,
                                double *d_new, dpa_error *err)
{
    (void)err;
    *accepted = 0;
    *mu_new = M;
    *d_new = D;
    double mu0;
    if (dpa_f_query_is_gaussian(fq, &mu0)) {
        /* Gaussian query: G_mu' (+) G_mu0 = G_sqrt(mu'^2 + mu0^2) <= G_M iff
         * mu'^2 <= M^2 - mu0^2 (RF: the residue filter equals the naive one);
         * the budget's R_{0,D} is kept whole */
        if (!(mu0 <= M)) return DPA_OK;
        *accepted = 1;
        double r = sqrt((M - mu0) * (M + mu0)) * (1 - 8 * DPA_UNIT_ROUNDOFF);
        *mu_new = dpa_f_dn(fmin(r, M));
        return DPA_OK;
    }
    double a = dpa_f_query_rest_inf(fq), d = residue_delta(M, D, a);
    if (d < 0) return DPA_OK; /* the query's delta exceeds the budget's */
    bspec b = {M, D, d, NULL};
    /* The naive end: L <= G_mu0 (+) G_nu (+) R_{0,a} = G_n (+) R_{0,a},
     * n^2 = mu0^2 + nu^2, so G_mu' (+) R_{0,d} (+) L <= G_M (+) R_{0,D} for
     * mu'^2 = M^2 - n^2 and (1 - d)(1 - a) >= 1 - D (RF Remark 2: the naive
     * filter's update, sound without a test).  n rounded up, the residue
     * down. */
    double nu = rest_nu(fq), lo = -1;
    double n = isfinite(nu) ? gauss_total(nu, mu0) : INFINITY;
    if (n <= M) {
        double r = sqrt((M - n) * (M + n)) * (1 - 8 * DPA_UNIT_ROUNDOFF);
        lo = dpa_f_dn(fmin(r, M));
        if (lo < 0) lo = 0;
    } else if (residue_ok(fq, 0.0, &b)) {
        lo = 0;
    }
    if (lo < 0) return DPA_OK;
    *accepted = 1;
    *d_new = d;
    /* the upper end: no mu' with mu'^2 + mu0^2 > M^2 passes */
    double hi = mu0 > 0 ? fmin(M, dpa_f_up(sqrt((M - mu0) * (M + mu0)) * (1 + 8 * DPA_UNIT_ROUNDOFF))) : M;
    if (hi <= lo) {
        *mu_new = lo;
        return DPA_OK;
    }
    if (residue_ok(fq, hi, &b)) {
        *mu_new = hi;
        return DPA_OK;
    }
    for (int it = 0; it < 200 && hi - lo > RES_TOL * M; it++) {
        double mid = 0.5 * (lo + hi);
        if (!(mid > lo && mid < hi)) break;
        if (residue_ok(fq, mid, &b)) lo = mid;
        else hi = mid;
    }
    *mu_new = lo; /* a value that passed (or the naive end): less remaining budget */
    return DPA_OK;
}

/* Largest mu' of a residue searched against a budget curve (bisection
 * range; a budget that admits more is cut to it, which is sound). */
#define CURVE_MU_MAX 64.0

dpa_status dpa_f_residue_update_curve(const dpa_f_query *fq, const dpa_f_bcurve *cv, int *accepted, double *mu_new,
                                      double *d_new, dpa_error *err)
{
    (void)err;
    *accepted = 0;
    *mu_new = 0;
    *d_new = 0;
    /* the residue's delta: half of what the query leaves of the budget's
     * mass at +inf (any d <= d* = 1 - (1 - D_B)/(1 - a) gives a residue,
     * RF Thm 1; the other half leaves room for G_mu') */
    double a = dpa_f_query_rest_inf(fq), DB = dpa_f_bcurve_floor(cv), d = 0;
    if (!(a <= DB)) return DPA_OK;
    if (a < DB) d = dpa_f_dn(0.5 * dpa_f_dn(dpa_f_dn(DB - a) / dpa_f_up(1 - a)));
    if (!(d >= 0)) d = 0;
    bspec b = {1.0, 0.0, d, cv};
    if (!residue_ok(fq, 0.0, &b)) {
        b.d = 0; /* all of the budget's delta for the query */
        if (d == 0 || !residue_ok(fq, 0.0, &b)) return DPA_OK;
    }
    *accepted = 1;
    *d_new = b.d;
    double lo = 0, hi = CURVE_MU_MAX;
    if (residue_ok(fq, hi, &b)) {
        *mu_new = hi;
        return DPA_OK;
    }
    for (int it = 0; it < 200 && hi - lo > RES_TOL * fmax(lo, 1e-3); it++) {
        double mid = 0.5 * (lo + hi);
        if (!(mid > lo && mid < hi)) break;
        if (residue_ok(fq, mid, &b)) lo = mid;
        else hi = mid;
    }
    *mu_new = lo; /* a value that passed */
    return DPA_OK;
}

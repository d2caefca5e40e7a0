/* Closed-form accountant for compositions of Gaussians (see exact.h).
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <math.h>
#include "acct/exact.h"
#include "num/num.h"

#define UNIT_ROUNDOFF 1.1102230246251565e-16
/* Relative error of one log Phi evaluation (test_num: <= 4e-16) plus the
 * exp/log of the difference, with margin. */
#define EVAL_REL (64 * UNIT_ROUNDOFF)
/* Bisection stops at this relative width of the eps bracket. */
#define EPS_REL_TOL 1e-13

void dpa_exact_delta(double mu, double eps, double *up, double *lo)
{
    if (mu == 0) {
        double v = eps < 0 ? -expm1(eps) : 0.0;
        *up = *lo = v;
        return;
    }
    double a = dpa_log_ndtr(-eps / mu + 0.5 * mu);
    double b = eps + dpa_log_ndtr(-eps / mu - 0.5 * mu);
    if (!(a > b)) {
        /* the terms agree to round-off: delta is below their error */
        *lo = 0;
        *up = fmin(1.0, exp(a) * 4 * EVAL_REL * (1 + fabs(a) + fabs(b)));
        return;
    }
    double v = exp(dpa_log_sub_exp(a, b));
    /* cancellation factor 1/(1 - e^{b - a}), times the error of each term;
     * log Phi's relative error becomes an absolute error |a| u in log space */
    double rel = (EVAL_REL * (1 + fabs(a) + fabs(b))) / -expm1(b - a);
    *up = fmin(1.0, v * (1 + rel));
    *lo = v * (1 - rel);
    if (*lo < 0) *lo = 0;
}

/* smallest eps >= 0 with delta_side(eps) <= target (side 0: upper evaluation,
 * 1: lower evaluation) */
static double solve(double mu, double target, int side)
{
    double up, lo;
    dpa_exact_delta(mu, 0.0, &up, &lo);
    if ((side ? lo : up) <= target) return 0.0;
    double a = 0, b = mu * mu / 2 + mu + 1;
    for (int i = 0; i < 2000; i++) {
        dpa_exact_delta(mu, b, &up, &lo);
        if ((side ? lo : up) <= target) break;
        a = b;
        b *= 2;
    }
    for (int i = 0; i < 400 && b - a > EPS_REL_TOL * b; i++) {
        double m = 0.5 * (a + b);
        dpa_exact_delta(mu, m, &up, &lo);
        if ((side ? lo : up) <= target) b = m;
        else a = m;
    }
    return side ? a : b;
}

void dpa_exact_epsilon(double mu, double delta, double *up, double *lo)
{
    if (mu == 0) {
        *up = *lo = 0;
        return;
    }
    *up = solve(mu, delta, 0);
    *lo = solve(mu, delta, 1);
}

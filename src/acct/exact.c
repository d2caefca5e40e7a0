/* Closed-form accountant for compositions of Gaussians (see exact.h).
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <float.h>
#include <math.h>
#include "acct/exact.h"
#include "num/num.h"
#include "mech/pair.h"

/* Relative error of one log Phi evaluation (test_num: <= 4e-16) plus the
 * exp/log of the difference, with margin. */
#define EVAL_REL (64 * DPA_UNIT_ROUNDOFF)
/* Bisection stops at this relative width of the eps bracket. */
#define EPS_REL_TOL 1e-13

void dpa_exact_delta(double mu, double eps, double *up, double *lo)
{
    if (mu > DPA_MU_NONPRIVATE) { /* non-private limit (pair.h) */
        *up = *lo = 1.0;
        return;
    }
    if (mu == 0) {
        double v = eps < 0 ? -expm1(eps) : 0.0;
        *up = *lo = v;
        return;
    }
    double xa = -eps / mu + 0.5 * mu, xb = -eps / mu - 0.5 * mu;
    double a = dpa_log_ndtr(xa);
    double b = eps + dpa_log_ndtr(xb);
    /* Forming the arguments costs an absolute error ex ~ 2 u (|eps/mu| +
     * mu/2) in x, which log Phi turns into about ex (1 + |x|) (its slope is
     * below 1 + |x|); eps + ... adds u |eps|. */
    double ex = 2 * DPA_UNIT_ROUNDOFF * (fabs(eps / mu) + 0.5 * mu);
    double da = ex * (1 + fabs(xa)) + 4 * DPA_UNIT_ROUNDOFF * fabs(a);
    double db = ex * (1 + fabs(xb)) + 4 * DPA_UNIT_ROUNDOFF * (fabs(eps) + fabs(b));
    if (!(a > b)) {
        /* the terms agree to round-off: delta is below their error */
        *lo = 0;
        double w = exp(a) * (4 * EVAL_REL * (1 + fabs(a) + fabs(b)) + 4 * expm1(da + db));
        *up = isnan(w) ? 1.0 : fmin(1.0, fmax(w, DBL_TRUE_MIN)); /* 0 * inf: no information */
        return;
    }
    double v = exp(dpa_log_sub_exp(a, b));
    /* cancellation factor 1/(1 - e^{b - a}), times the error of each term;
     * log Phi's relative error becomes an absolute error |a| u in log space,
     * and the arguments' errors da, db are relative errors of e^a, e^b */
    double r = exp(b - a);
    double rel = (EVAL_REL * (1 + fabs(a) + fabs(b)) + 2 * (expm1(da) + r * expm1(db))) / -expm1(b - a);
    *up = fmin(1.0, v * (1 + rel));
    /* delta > 0 here: never report an upper bound of 0 when it underflows */
    if (!(*up > 0)) *up = DBL_TRUE_MIN;
    if (isnan(*up)) *up = 1.0;
    *lo = v * (1 - rel);
    if (!(*lo > 0)) *lo = 0; /* also -0 and NaN */
}

/* f(eps) = delta_side(eps) - target, decreasing in eps */
typedef struct solve_ctx { double mu, target; int side; } solve_ctx;

static double excess_delta(double eps, void *ctx)
{
    const solve_ctx *c = ctx;
    double up, lo;
    dpa_exact_delta(c->mu, eps, &up, &lo);
    return (c->side ? lo : up) - c->target;
}

/* smallest eps >= 0 with delta_side(eps) <= target (side 0: upper
 * evaluation, 1: lower evaluation): scan up from 0 for the first sign change,
 * then bisect; the infeasible end is a lower bound on the true eps, the
 * feasible end an upper bound */
static double solve(double mu, double target, int side)
{
    solve_ctx c = {mu, target, side};
    if (excess_delta(0.0, &c) <= 0) return 0.0;
    double a, b, lo, hi;
    if (dpa_scan_bracket(excess_delta, &c, 0.0, 0.5 * mu * mu + mu + 1, +1, 0.0, 1e300, &a, &b) ||
        dpa_bisect(excess_delta, &c, a, b, 0.0, EPS_REL_TOL, &lo, &hi))
        return side ? 0.0 : INFINITY; /* cannot happen for finite mu: delta -> 0 */
    return side ? lo : hi;
}

void dpa_exact_epsilon(double mu, double delta, double *up, double *lo)
{
    if (mu > DPA_MU_NONPRIVATE) {
        *up = *lo = INFINITY;
        return;
    }
    if (mu == 0) {
        *up = *lo = 0;
        return;
    }
    *up = solve(mu, delta, 0);
    *lo = solve(mu, delta, 1);
}

/* eps(delta) of an (eps, delta) composition: a bracketing search on the
 * certified evaluations of delta (dpa_rr_epsilon).
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * 5. eps(delta): a bracketing search (dpa_bisect, then steps to adjacent
 *    doubles) on the certified evaluations, compared with delta without
 *    rounding their sums (dpa_rr_sum3: TwoSum with a bound on the rest): the upper end has delta_up <= delta (so eps <= it), the lower
 *    end delta_lo > delta (so eps > it, delta being non-increasing).  +inf
 *    for both only when delta < the lower end of the +inf mass.
 */
#include "exact/exact_rr_internal.h"

/* a + b - c with an error bound *err: TwoSum(a, -c) = s1 + e1 and
 * TwoSum(s1, b) = s2 + e2 are exact, so a + b - c = s2 + e1 + e2 and the two
 * remaining roundings cost at most u^2 (|s1| + |s2|) (1 + u) + u |r| */
long double dpa_rr_sum3(long double a, long double b, long double c, long double *err)
{
    long double s1 = a - c, z = s1 - a, e1 = (a - (s1 - z)) + (-c - z);
    long double s2 = s1 + b;
    z = s2 - s1;
    long double e2 = (s1 - (s2 - z)) + (b - z);
    long double r = s2 + (e1 + e2);
    *err = 2 * U * U * (fabsl(s1) + fabsl(s2)) + 2 * U * fabsl(r);
    return r;
}

/* ---------------- eps(delta) ---------------- */

typedef struct sctx { const dpa_rr_comp *c; double target; int side; } sctx;

/* side 0: delta_up(t) - target (< 0: t >= eps certified);
 * side 1: delta_lo(t) - target (> 0: t < eps certified) */
static double g_side(double t, void *p)
{
    const sctx *s = p;
    dparts d;
    dpa_rr_delta_parts(s->c, t, s->side ? 2 : 1, &d);
    /* compared with the target without rounding the bounds: near the +inf
     * mass, delta exceeds it by a tiny P F, which an ulp of the sum would
     * swamp; the sign is certified by dpa_rr_sum3's error bound */
    long double v, e;
    if (s->side == 0) {
        v = dpa_rr_sum3(d.inf_up, d.y_up, s->target, &e) + e;
    } else {
        v = dpa_rr_sum3(d.inf_lo, d.y_lo, s->target, &e) - e;
        long double f = d.fl_ - s->target; /* sign exact */
        if (f > v) v = f;
    }
    if (v > 0) return fmax((double)v, DBL_MIN);
    return fmin((double)v, -DBL_MIN); /* no exact zeros: dpa_bisect keeps strict signs */
}

static double solve(const dpa_rr_comp *c, double target, int side)
{
    sctx s = {c, target, side};
    double tmax = fmin(c->tmax, DBL_MAX);
    if (g_side(0.0, &s) <= 0) return 0.0;
    if (g_side(tmax, &s) > 0) return INFINITY; /* side 1: delta > 1 - P >= ... > target everywhere */
    double a, b;
    if (dpa_bisect(g_side, &s, 0.0, tmax, 0.0, EPS_XTOL_REL, &a, &b)) return side ? 0.0 : tmax;
    /* the search stops within two ulps: step to adjacent doubles where the
     * certified evaluation allows it (a few evaluations) */
    for (int i = 0; i < 4; i++) {
        double n = side ? nextafter(a, INFINITY) : nextafter(b, 0.0);
        if (!(n > a && n < b)) break;
        double v = g_side(n, &s);
        if (side ? !(v > 0) : !(v <= 0)) break;
        if (side) a = n;
        else b = n;
    }
    return side ? a : b;
}

void dpa_rr_epsilon(const dpa_rr_comp *c, double delta, double *up, double *lo)
{
    if (!(delta >= 0) || (long double)delta < c->inf_lo) { /* certainly below the +inf mass */
        *up = *lo = INFINITY;
        return;
    }
    *up = solve(c, delta, 0);
    *lo = solve(c, delta, 1);
    if (*lo > *up) *lo = *up;
    *lo += 0.0;
}

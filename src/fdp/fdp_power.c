/* The tradeoff function of an accountant's spec at one point, bracketed on
 * both sides: beta(alpha), the smallest type II error of a test with type I
 * error alpha, and so the power 1 - beta (docs/fdp.md §9).
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * From the privacy profile delta(eps) (both directions, the larger), GDP
 * Prop 2.12 gives the tradeoff function
 *   f(alpha) = sup_{eps >= 0} max(0, 1 - delta(eps) - e^eps alpha,
 *                                   e^-eps (1 - delta(eps) - alpha)),
 * the largest f the profile implies (the tradeoff function itself for a
 * symmetric pair).  Lower bound: any evaluated eps with delta's certified
 * upper bound.  Upper bound: on [eps_i, eps_{i+1}] delta is at least its
 * lower bound at eps_{i+1} (delta is non-increasing) and e^eps >= e^eps_i,
 * so each term is at most its value with delta_lower(eps_{i+1}) and eps_i;
 * beyond the last point E >= -log alpha the first term is <= 1 - e^E alpha
 * and the second <= e^-E (1 - alpha).  The interval of the largest upper
 * bound is subdivided until the bracket is tol wide. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "dpacct/tradeoff.h"
#include "num/num.h"

#define BETA_FIRST 257   /* points of the first grid */
#define BETA_SPLIT 8     /* subintervals of each refined interval */
#define BETA_ROUNDS 30   /* refinement rounds at most */
#define BETA_BUDGET 1024 /* new points per round at most */
#define BETA_EPS_MAX 700 /* the profile's domain */

typedef struct pt { double e, dlo, dup; } pt;

/* e^x rounded down / up: libm's exp is within 1 ulp; 4u covers it */
static double exp_dn(double x) { return exp(x) * (1 - 4 * DPA_UNIT_ROUNDOFF); }
static double exp_up(double x) { return exp(x) * (1 + 4 * DPA_UNIT_ROUNDOFF); }

/* each bound below is a few operations on numbers in [0, 1] (and alpha
 * e^eps, clamped there): 4u absolute covers their rounding */
#define BETA_ROUND (4 * DPA_UNIT_ROUNDOFF)

static double lower_at(const pt *p, double alpha)
{
    double t1 = 1 - p->dup - exp_up(p->e) * alpha;
    double t2 = exp_dn(-p->e) * (1 - p->dup - alpha);
    return fmax(t1, t2) - BETA_ROUND;
}

static double upper_on(const pt *a, const pt *b, double alpha)
{
    double t1 = 1 - b->dlo - exp_dn(a->e) * alpha;
    double t2 = exp_up(-a->e) * (1 - b->dlo - alpha);
    return fmax(t1, t2) + BETA_ROUND;
}

static dpa_status eval(dpa_accountant *a, pt *p, size_t n, double *buf, dpa_error *err)
{
    double *e = buf, *up = buf + n, *lo = buf + 2 * n;
    for (size_t i = 0; i < n; i++) e[i] = p[i].e;
    dpa_status st = dpa_accountant_profile(a, e, n, up, lo, err);
    if (st) return st;
    for (size_t i = 0; i < n; i++) {
        p[i].dup = fmin(1.0, up[i]);
        p[i].dlo = fmax(0.0, lo[i]);
    }
    return DPA_OK;
}

dpa_status dpa_tf_beta_at(dpa_accountant *a, double alpha, double tol, double *beta_lo, double *beta_hi,
                          dpa_error *err)
{
    if (!a || !beta_lo || !beta_hi) return dpa_error_set(err, DPA_EINVAL, "beta_at: NULL argument");
    if (!(alpha > 0 && alpha <= 1)) return dpa_error_set(err, DPA_EINVAL, "beta_at: alpha must be in (0, 1], got %g", alpha);
    if (tol == 0) tol = 1e-9;
    if (!(tol >= 1e-15 && tol <= 0.1)) return dpa_error_set(err, DPA_EINVAL, "beta_at: tol must be in [1e-15, 0.1], got %g", tol);
    if (alpha == 1) { /* reject always: beta = 0 */
        *beta_lo = *beta_hi = 0;
        return DPA_OK;
    }
    /* E: beyond -log alpha the first term is <= 0; 40 more make the second
     * at most e^-40 */
    double E = fmin(BETA_EPS_MAX, -log(alpha) + 40);
    size_t n = BETA_FIRST, cap = BETA_FIRST + BETA_ROUNDS * BETA_BUDGET;
    pt *p = malloc(cap * sizeof *p), *q = malloc(cap * sizeof *q), *fresh = malloc(BETA_BUDGET * sizeof *fresh);
    double *buf = malloc(3 * BETA_BUDGET * sizeof *buf), *u = malloc(cap * sizeof *u);
    dpa_status st = DPA_OK;
    if (!p || !q || !fresh || !buf || !u) st = dpa_error_set(err, DPA_ENOMEM, "beta_at: out of memory");
    if (!st) {
        for (size_t i = 0; i < n; i++) p[i].e = E * (double)i / (double)(n - 1);
        p[n - 1].e = E;
        st = eval(a, p, n, buf, err);
    }
    double flo = 0, fhi = 1, prev_bu = INFINITY;
    /* the tail beyond E (alpha e^E rounded down) */
    double tail = fmax(1 - exp_dn(E) * alpha, exp_up(-E) * (1 - alpha)) + BETA_ROUND;
    for (int round = 0; st == DPA_OK; round++) {
        double bu = -INFINITY;
        flo = 0;
        for (size_t i = 0; i < n; i++) flo = fmax(flo, lower_at(&p[i], alpha));
        for (size_t i = 0; i + 1 < n; i++) bu = fmax(bu, u[i] = upper_on(&p[i], &p[i + 1], alpha));
        fhi = fmax(flo, fmax(bu, tail));
        if (fhi - flo <= tol || round == BETA_ROUNDS || bu <= tail + tol / 2) break;
        /* stalled: the profile's own bracket (the method's accuracy) bounds
         * the width, not the grid */
        if (round >= 10 && prev_bu - bu < 0.01 * (bu - flo)) break;
        prev_bu = bu;
        /* subdivide every interval whose bound is above flo + tol/2 (the
         * threshold raised until the new points fit the budget) */
        double thr = flo + tol / 2;
        for (;;) {
            size_t cnt = 0;
            for (size_t i = 0; i + 1 < n; i++) cnt += u[i] > thr;
            if (cnt * (BETA_SPLIT - 1) <= BETA_BUDGET) break;
            thr = 0.5 * (thr + bu);
        }
        size_t m = 0, k = 0;
        for (size_t i = 0; i + 1 < n; i++) {
            q[k++] = p[i];
            if (!(u[i] > thr)) continue;
            double e0 = p[i].e, e1 = p[i + 1].e;
            for (size_t j = 1; j < BETA_SPLIT; j++) {
                double e = e0 + (e1 - e0) * (double)j / BETA_SPLIT;
                if (!(e > q[k - 1].e && e < e1)) continue; /* no room in double */
                q[k].e = e;
                q[k].dlo = NAN; /* marks a new point */
                fresh[m++].e = e;
                k++;
            }
        }
        q[k++] = p[n - 1];
        if (m == 0) break; /* nothing can be split further */
        st = eval(a, fresh, m, buf, err);
        for (size_t i = 0, j = 0; !st && i < k; i++)
            if (isnan(q[i].dlo)) q[i] = fresh[j++];
        pt *t = p;
        p = q, q = t, n = k;
    }
    free(p), free(q), free(fresh), free(buf), free(u);
    if (st) return st;
    *beta_lo = fmin(fmax(flo, 0.0), 1 - alpha);
    *beta_hi = fmin(fmax(fhi, 0.0), 1.0);
    /* f(alpha) <= 1 - alpha always (the trivial test): the upper bound too,
     * up to the rounding of 1 - alpha */
    *beta_hi = fmin(*beta_hi, (1 - alpha) + DPA_UNIT_ROUNDOFF);
    if (*beta_lo > *beta_hi) *beta_lo = *beta_hi;
    return DPA_OK;
}

/* Certified GDP dominance G_m (+) L <= G_M for the GDP residue filter.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * RF Thm 5 needs, for a query L and a budget G_M, (i) whether L <= G_M and
 * (ii) the largest m' with G_m' (+) L <= G_M.  Both are instances of one
 * certified test, "G_m (+) L <= G_M" (m = 0 for (i)), where <= is the
 * Blackwell order of RF (h_C(x) <= h_B(x) for every x > 0, RF §2).  For
 * the symmetric budget G_M this is: in both directions of C (remove and
 * add), delta_C(t) <= delta_M(t) for every t >= 0 (the x < 1 half of one
 * direction is the x > 1 half of the other, LT eq 7; as in
 * src/acct/gdp_mu.c).
 *
 * The query (its Gaussian part mu0 and the discrete laws of the rest) is
 * built in filter_law.c (filter_law.h).
 *
 * The test.  With the law (w_j, p_j) and m > 0,
 *   delta_C(t) = sum_j p_j delta_m(t - w_j)                       (LT Thm 4.2, with delta2(+inf))
 * evaluated with certified upper bounds from log Phi (gdelta_up); with m = 0,
 * delta_C(t) = sum_{w_j > t} p_j (1 - e^{t - w_j}).  On a grid
 * 0 = t_0 < ... < t_n = E, in x = e^t both hockey-stick curves are convex
 * and non-increasing, so on [x_j, x_{j+1}]
 *   h_C <= the chord through (x_j, up C(t_j)) and (x_{j+1}, up C(t_{j+1})),
 *   h_B >= the tangent at x_{j+1}: lo B(t_{j+1}) + S (x_{j+1} - x), S =
 *          -h_B'(x_{j+1}) = Phi(-t_{j+1}/M - M/2) (the Q-mass beyond t),
 * and chord <= tangent holds on the interval iff it holds at both ends:
 *   up C(t_{j+1}) <= lo B(t_{j+1})  and  up C(t_j) <= lo B(t_{j+1}) + lo S lo(x_{j+1} - x_j).
 * The slack is second order in the step (not first order as with the step
 * test up C(t_j) <= lo B(t_{j+1}) of gdp_mu.c).  Beyond E: for m = 0,
 * delta_C = 0 from the largest atom on (E = that atom); for m > 0, the tail
 * lemma below.  Every rounding goes toward "not dominated".  Each comparison
 * "up C(t) <= x" is made first on a coarse copy of the law (law_coarsen:
 * W rounded up and masses summed up, so its bound is certified and above
 * the law's) and on the law only where the coarse bound exceeds x (comp_le):
 * the outcome is the law's (up to roundings of a few ulp between the two
 * sums; both are certified), the cost mostly the copy's.
 *
 * The updates that search the residue over this test are in
 * filter_residue.c.
 *
 * Tail lemma (t >= E, m <= M): see tail_ok (Mills-ratio bounds on both
 * profiles; the log-ratio bound at E is non-increasing beyond it).
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "filter/filter_internal.h"
#include "filter/filter_bcurve.h"
#include "event/event_internal.h"
#include "model/leaves.h"
#include "mech/pair.h"
#include "exact/exact.h"
#include "num/num.h"
#include "filter/filter_law.h"

/* Relative margin on S = Phi(z) from exp(dpa_log_ndtr(z)) with z rounded
 * down (log Phi relative error < 4e-16, exp < 1 ulp): 1e-12. */
#define SLOPE_REL 1e-12
/* Intervals of the dominance test on [0, E] (failing intervals are
 * subdivided, see seg_ok). */
#define GRID_N 256
/* Steps of the tail search (E = wmax + M 1.25^k / 2, k < E_STEPS: up to
 * 1e19 M, far beyond the M^2/2 + O(M) the lemma needs for M <= 1e6). */
#define E_STEPS 200

/* ---- certified evaluations ---- */

/* Cheap certified bounds on the Gaussian profile
 *   delta_m(s) = Phi(x1) - e^s Phi(x2),  x1 = m/2 - s/m,  x2 = -m/2 - s/m
 * (LT Thm 2.4), from two dpa_log_ndtr calls: -e^{l1} expm1(l2 - l1) with
 * l1 = log Phi(x1), l2 = s + log Phi(x2).  dpa_exact_delta certifies the
 * same quantity by quadrature (~30 times slower); here the difference is
 * taken in log space, which loses only the digits of log(Phi(x1)/delta)
 * (a few in the far tail, where delta/Phi(x1) falls like m/|x1|).
 * Margins: x1, x2 carry at most 2u (|x| + |s/m|) (one division, one
 * addition); log Phi is accurate to 1e-15 relative (num.h), widened to
 * LOGPHI_REL; exp, expm1 and the product a few ulp (8u); results in the
 * subnormal range carry an absolute 2 DBL_TRUE_MIN. */
#define LOGPHI_REL 8e-15
static void gauss_logs(double m, double s, int upper, double *l1, double *l2)
{
    double r = s / m;
    double x1 = 0.5 * m - r, x2 = -0.5 * m - r;
    double e1 = 2 * DPA_UNIT_ROUNDOFF * (fabs(x1) + fabs(r)) + 1e-300;
    double e2 = 2 * DPA_UNIT_ROUNDOFF * (fabs(x2) + fabs(r)) + 1e-300;
    /* upper bound of delta: x1 up, x2 down; lower bound: the reverse */
    double a = dpa_log_ndtr(upper ? x1 + e1 : x1 - e1);
    double b = dpa_log_ndtr(upper ? x2 - e2 : x2 + e2);
    double ea = LOGPHI_REL * fabs(a) + 1e-300, eb = LOGPHI_REL * fabs(b) + 2 * DPA_UNIT_ROUNDOFF * fabs(s) + 1e-300;
    *l1 = upper ? a + ea : a - ea;
    *l2 = upper ? s + b - eb : s + b + eb;
}

static double gdelta_up(double m, double s)
{
    double l1, l2;
    gauss_logs(m, s, 1, &l1, &l2);
    if (!(l2 < l1)) return 2 * DBL_TRUE_MIN; /* the bound is <= 0 (delta >= 0) */
    double d = l2 - l1;
    d -= 2 * DPA_UNIT_ROUNDOFF * fabs(d); /* -expm1 is decreasing: d rounded down */
    double v = exp(fmin(l1, 0.0)) * -expm1(d);
    return fmin(1.0, v * (1 + 8 * DPA_UNIT_ROUNDOFF) + 2 * DBL_TRUE_MIN);
}

static double gdelta_lo(double m, double s)
{
    double l1, l2;
    gauss_logs(m, s, 0, &l1, &l2);
    if (!(l2 < l1)) return 0;
    double d = l2 - l1;
    d += 2 * DPA_UNIT_ROUNDOFF * fabs(d);
    if (!(d < 0)) return 0;
    double v = exp(l1) * -expm1(d);
    return fmax(0.0, fmin(1.0, v * (1 - 8 * DPA_UNIT_ROUNDOFF) - 2 * DBL_TRUE_MIN));
}

/* Upper bound on delta_C(t) for the law and G_m (m >= 0). */
static double comp_up(const law *l, double m, double t)
{
    double s = 0;
    if (m > 0) {
        for (size_t j = 0; j < l->n; j++) {
            s += l->p[j] * gdelta_up(m, dpa_f_dn(t - l->w[j]));
        }
    } else {
        for (size_t j = l->n; j-- > 0 && l->w[j] > t;) {
            /* 1 - e^{t - w}, t - w rounded up (smaller value: no, larger t-w
             * gives a smaller term; round t - w down for an upper bound) */
            double v = -expm1(dpa_f_dn(t - l->w[j]));
            s += l->p[j] * fmin(1.0, v * (1 + 4 * DPA_UNIT_ROUNDOFF));
        }
    }
    return dpa_f_up(s * (1 + SUM_REL(l->n)));
}

/* The budget's profile on one direction, bounded below: c0 + s delta_M(t)
 * (docs/filters.md, "Approximate GDP budgets").  For the budget
 * B = G_M (+) R_{0,D}, a residue G_m (+) R_{0,d} and a query whose law has
 * the mass a at +inf in this direction (h_{X (+) R_{0,d}} = d + (1 - d) h_X,
 * RF Def 5), the residue condition (RF Thm 1) in this direction reads
 *   d + (1 - d) (a + C_m(t)) <= D + (1 - D) delta_M(t),
 * i.e. C_m(t) <= c0 + s delta_M(t) with s = (1 - D)/(1 - d) and
 * c0 = 1 - a - s, C_m the profile of G_m (+) the law's finite atoms.  plain:
 * c0 = 0, s = 1 exactly (d = D, a = 0: the GDP test of RF Thm 5, evaluated
 * exactly as before approximate budgets); else s and c0 are lower bounds
 * (c0 < 0: the test fails). */
typedef struct bprof {
    double M, c0, s;
    int plain;
    const dpa_f_bcurve *cv; /* a budget given as a tradeoff curve, or NULL */
} bprof;

typedef dpa_f_bspec bspec;

/* A budget given as a curve (filter_bcurve.c): d + (1 - d)(a + C_m(t)) <=
 * h_B(t) reads C_m(t) <= c0 + s h_B(t) with s = 1/(1 - d) and c0 = -d/(1 -
 * d) - a (negative: the comparison also needs h_B above d + (1 - d) a);
 * M only spaces the grid. */
static bprof bprof_curve(const bspec *b, double a)
{
    bprof p = {b->M, 0.0, 1.0, 0, b->cv};
    double one_d_lo = dpa_f_dn(1 - b->d), one_d_up = dpa_f_up(1 - b->d);
    p.s = b->d == 0 ? 1.0 : dpa_f_dn(1 / one_d_up);
    p.c0 = dpa_f_dn(-dpa_f_up(b->d / one_d_lo) - a);
    return p;
}

static bprof bprof_make(const bspec *b, double a)
{
    if (b->cv) return bprof_curve(b, a);
    bprof p = {b->M, 0.0, 1.0, 1, NULL};
    if (a == 0 && b->d == b->D) return p; /* s = 1, c0 = 0 exactly */
    p.plain = 0;
    double one_D_lo = dpa_f_dn(1 - b->D), one_D_up = dpa_f_up(1 - b->D);
    double one_d_lo = dpa_f_dn(1 - b->d), one_d_up = dpa_f_up(1 - b->d);
    if (b->d == b->D) {
        p.s = 1;
        p.c0 = -a; /* a > 0: never passes (the budget's delta is all the residue's) */
        return p;
    }
    p.s = dpa_f_dn(one_D_lo / one_d_up);
    double s_up = dpa_f_up(one_D_up / one_d_lo);
    p.c0 = dpa_f_dn(dpa_f_dn(1 - a) - s_up);
    return p;
}

static double budget_lo(const bprof *b, double t)
{
    if (b->cv) return dpa_f_dn(b->c0 + dpa_f_dn(b->s * dpa_f_bcurve_lo(b->cv, t, NULL))); /* may be < 0 */
    double g = gdelta_lo(b->M, t);
    if (b->plain) return g;
    return fmax(0.0, dpa_f_dn(b->c0 + dpa_f_dn(b->s * g)));
}

/* The composition's upper bound at t, evaluated lazily: first on the law's
 * coarse copy (c), which is larger, and on the law itself (f) only when the
 * coarse value does not settle a comparison; NAN: not computed. */
typedef struct cval {
    double t, c, f;
} cval;

static cval comp_at(const law *l, double m, double t)
{
    cval v = {t, NAN, NAN};
    if (l->coarse) v.c = comp_up(l->coarse, m, t);
    else v.f = comp_up(l, m, t);
    return v;
}

/* 1 if the composition's upper bound at v->t is <= x: the coarse bound
 * decides when it is (the law's own bound is below it, both are certified
 * upper bounds), else the law's own bound (computed once). */
static int comp_le(const law *l, double m, cval *v, double x)
{
    if (v->c <= x) return 1;
    if (isnan(v->f)) v->f = comp_up(l, m, v->t);
    return v->f <= x;
}

/* Tail lemma at E (see the top): 1 if it certifies [E, inf).  With
 * a0 = (t - w_max)/m - m/2 and b0 = t/M - M/2 (phi the normal density),
 * Mills' ratio bounds x/(x^2+1) phi(x) <= Phibar(x) <= phi(x)/x (x > 0) and
 * e^t phi(b0 + M) = phi(b0) give
 *   delta_M(t) >= phi(b0) (b0 M - 1) / ((b0^2 + 1)(b0 + M))          (b0 > 1/M),
 *   delta_m(s) <= phi(a0) (m (a0 + m) + 1) / (a0 ((a0 + m)^2 + 1))     (a0 > 0),
 * and delta_C(t) <= P delta_m(t - w_max).  The second rational factor
 * decreases in a0, so with a0 >= b0 the log-ratio log(delta_C/delta_M) is
 * at most log P - (a0^2 - b0^2)/2 + G(b0), G(b) = log[(1 + (m^2+1)/(m b))
 * (1 + M/b) m / (M - 1/b)], G decreasing in b.  When m <= M, a0 - b0 is
 * non-decreasing in t and a0 + b0 increasing, so the bound at E holds for
 * every t >= E.  Rounding: a0 down, b0 up for the Gaussian term, b0 down
 * in G, then TAIL_LOG_ABS. */
#define TAIL_LOG_ABS 1e-9
static int tail_ok(const law *l, double m, const bprof *bp, double E)
{
    double M = bp->M;
    /* the budget is >= s delta_M (c0 >= 0): the log-ratio must stay below
     * log s (0 when plain), rounded down by a few ulp of log */
    double logs = bp->plain ? 0.0 : log(bp->s) * (1 + 1e-15) - 1e-300;
    if (!(m <= M) || l->n == 0) return l->n == 0;
    double P = 0;
    for (size_t j = 0; j < l->n; j++) P += l->p[j];
    P = dpa_f_up(P * (1 + SUM_REL(l->n)));
    double wmax = l->w[l->n - 1];
    double a = (E - wmax) / m - 0.5 * m, b = E / M - 0.5 * M;
    double ea = 8 * DPA_UNIT_ROUNDOFF * (fabs(a) + fabs(E - wmax) / m + m) + 1e-300;
    double eb = 8 * DPA_UNIT_ROUNDOFF * (fabs(b) + E / M + M) + 1e-300;
    double alo = a - ea, bhi = b + eb, blo = b - eb;
    if (!(alo >= bhi) || !(blo > 1.0 / M) || !(alo > 0)) return 0;
    double G = log1p((m * m + 1) / (m * blo)) + log1p(M / blo) + log(m) - log(M - 1.0 / blo);
    double gauss = -0.5 * (alo - bhi) * (alo + bhi);
    double tot = log(P) + gauss + G;
    return tot + TAIL_LOG_ABS + 1e-12 * (fabs(gauss) + fabs(G)) <= logs;
}

/* Lower bound on the budget's tangent at t_b evaluated at t_a < t_b:
 * lo B(t_b) + lo S lo(e^{t_b} - e^{t_a}).  The product S (e^{t_b} - e^{t_a})
 * is formed in log space (e^{t} overflows beyond t = 709 while the product
 * stays below 1 for large M); its log carries the log Phi error (relative
 * 1e-15 of |log S|, from dpa_log_ndtr) and a few roundings of t_a and
 * log expm1: TANGENT_LOG_REL covers them with a factor > 10. */
#define TANGENT_LOG_REL 1e-13
static double tangent_lo(const bprof *bp, double ta, double tb, double bb)
{
    if (bp->cv) { /* the line that gives the budget's bound at tb, at ta */
        size_t j;
        dpa_f_bcurve_lo(bp->cv, tb, &j);
        return dpa_f_dn(bp->c0 + dpa_f_dn(bp->s * dpa_f_bcurve_line(bp->cv, j, ta)));
    }
    double M = bp->M;
    double d = dpa_f_dn(tb - ta);
    if (!(d > 0)) return bb;
    double z = -tb / M - 0.5 * M;
    z = z - 4 * DPA_UNIT_ROUNDOFF * fabs(z) - 1e-300;
    double ls = dpa_log_ndtr(z), lx = log(expm1(d));
    double lg = ls + ta + lx;
    lg -= TANGENT_LOG_REL * (fabs(ls) + fabs(ta) + fabs(lx) + 1);
    if (bp->plain) return bb + exp(lg) * (1 - SLOPE_REL);
    return dpa_f_dn(bb + dpa_f_dn(bp->s * (exp(lg) * (1 - SLOPE_REL)))); /* the slope scaled by s */
}

/* Largest subdivision depth of one grid interval whose chord/tangent test
 * fails (the slack falls 4-fold per level), and the most evaluations a
 * whole test may spend on subdivisions. */
#define REFINE_DEPTH 8
#define REFINE_WORK 4096
/* Nodes at the far end of the grid point-tested first (grid_ok_n). */
#define PRECHECK 16

/* The chord/tangent test on [ta, tb] (c the composition's upper bounds, b
 * the budget's lower bound at tb): 1 proven.  A failing interval is halved
 * (up to REFINE_DEPTH levels, *work evaluations in all); a node whose point
 * test fails ends the test (no refinement can help there). */
static int seg_ok(const law *l, double m, const bprof *bp, double ta, cval *ca, double tb, cval *cb, double bb, int depth,
                  int *work)
{
    if (comp_le(l, m, ca, tangent_lo(bp, ta, tb, bb))) return 1;
    if (depth <= 0 || *work <= 0) return 0;
    double tm = ta + 0.5 * (tb - ta);
    if (!(tm > ta && tm < tb)) return 0;
    (*work)--;
    cval cm = comp_at(l, m, tm);
    double bm = budget_lo(bp, tm);
    if (!comp_le(l, m, &cm, bm)) return 0;
    return seg_ok(l, m, bp, ta, ca, tm, &cm, bm, depth - 1, work) && seg_ok(l, m, bp, tm, &cm, tb, cb, bb, depth - 1, work);
}

/* The grid of the test on [0, E] for one direction: n intervals uniform
 * in u = t + t^2/(2 M^2) (steps shrink like M^2/t where log delta_M falls
 * like t/M^2, keeping the test's second-order slack even along the curve),
 * with the body [0, E1], E1 = 4M + max(w_max, 0), where the binding points
 * of small queries lie, given half of them when E > E1.  Each interval
 * whose chord/tangent test fails is subdivided (seg_ok). */
static int grid_ok_n(const law *l, double m, const bprof *bp, double E, int n)
{
    double M = bp->M;
    if (!(E > 0)) {
        cval c0 = comp_at(l, m, 0.0);
        return comp_le(l, m, &c0, budget_lo(bp, 0.0));
    }
    double wmax = l->n ? fmax(l->w[l->n - 1], 0.0) : 0.0;
    double E1 = fmin(E, 4 * M + wmax);
    int n1 = E1 < E ? n / 2 : n, n2 = n - n1;
    double M2 = M * M, U1 = E1 + E1 * E1 / (2 * M2), UE = E + E * E / (2 * M2);
#define GRID_T(j)                                                                                       \
    ((j) <= n1 ? ((j) == n1 ? E1 : E1 * ((double)(j) / n1))                                             \
               : ((j) == n ? E : 2 * (U1 + (UE - U1) * ((double)((j) - n1) / n2)) /                      \
                                     (1 + sqrt(1 + 2 * (U1 + (UE - U1) * ((double)((j) - n1) / n2)) / M2))))
    /* a failing test usually fails either near t = 0 (the body) or at the
     * far end (where both profiles approach the underflow threshold): the
     * point test at the last PRECHECK nodes first, so that it fails early */
    for (int j = n; j > n - PRECHECK && j > 0; j--) {
        double t = GRID_T(j);
        cval c = comp_at(l, m, t);
        if (!comp_le(l, m, &c, budget_lo(bp, t))) return 0;
    }
    double tprev = 0;
    cval cprev = comp_at(l, m, 0.0);
    int work = REFINE_WORK;
    for (int j = 1; j <= n; j++) {
        double t = GRID_T(j);
        if (!(t > tprev)) continue;
        cval c = comp_at(l, m, t);
        double b = budget_lo(bp, t);
        if (!comp_le(l, m, &c, b)) return 0;
        if (!seg_ok(l, m, bp, tprev, &cprev, t, &c, b, REFINE_DEPTH, &work)) return 0;
        tprev = t;
        cprev = c;
    }
    return 1;
}

static int grid_ok(const law *l, double m, const bprof *bp, double E)
{
    return grid_ok_n(l, m, bp, E, GRID_N);
}

/* The test against a budget given as a curve: h_B >= its floor h_B(+inf)
 * everywhere and C_m is non-increasing, so [E, inf) is settled by C_m(E) <=
 * c0 + s floor (the first E = wmax+ + (m + 1) 1.25^k / 2 where it holds);
 * the grid test covers [0, E].  m = 0: C_0 = 0 beyond the largest atom. */
static int dir_ok_curve(const law *l, double m, bprof *bp)
{
    double fl = dpa_f_dn(bp->c0 + dpa_f_dn(bp->s * dpa_f_bcurve_floor(bp->cv)));
    double wmax = l->n ? fmax(l->w[l->n - 1], 0.0) : 0.0;
    if (l->n == 0) return fl >= 0;
    bp->M = m + 1; /* the grid's spacing */
    if (m == 0) return fl >= 0 && grid_ok(l, 0.0, bp, wmax);
    double E = -1, s = 0.5 * (m + 1);
    for (int k = 0; k < E_STEPS && isfinite(s); k++, s *= 1.25) {
        cval c = comp_at(l, m, wmax + s);
        if (comp_le(l, m, &c, fl)) {
            E = wmax + s;
            break;
        }
    }
    return E > 0 && grid_ok(l, m, bp, E);
}

/* The test in one direction against the budget b (the law's own mass at
 * +inf enters the budget's offset, bprof_make). */
static int dir_ok(const law *l, double m, const bspec *b)
{
    bprof bp = bprof_make(b, l->inf);
    double M = b->M;
    if (bp.cv) return dir_ok_curve(l, m, &bp);
    if (bp.plain && l->inf > 0) return 0; /* a mass at +inf is never below a Gaussian */
    if (!(bp.c0 >= 0)) return 0;          /* the residue's delta leaves less than the query's mass at +inf */
    if (l->n == 0) return m <= M;
    double wmax = l->w[l->n - 1];
    if (m == 0) {
        if (wmax <= 0) return 1; /* delta_C(t) = 0 for t >= 0 */
        return grid_ok(l, 0.0, &bp, wmax);
    }
    if (m > M) return 0;
    /* E: the first of wmax+ + M 1.25^k / 2 (k = 0, 1, ..., E_STEPS) where the
     * tail lemma holds (the lemma needs E/M - M/2 > 1/M: E grows with M^2) */
    double E = -1, s = 0.5 * M;
    for (int k = 0; k < E_STEPS && isfinite(s); k++, s *= 1.25) {
        double e = fmax(wmax, 0.0) + s;
        if (tail_ok(l, m, &bp, e)) {
            E = e;
            break;
        }
    }
    if (E < 0) return 0;
    return grid_ok(l, m, &bp, E);
}

int dpa_f_rest_ok(const dpa_f_query *fq, double m, const dpa_f_bspec *b)
{
    if (!fq->has_rest && b->cv) { /* a Gaussian query: the rest is Id, one atom at 0 */
        double w = 0, p = 1;
        law id = {1, &w, &p, 0, NULL};
        return dir_ok(&id, m, b);
    }
    if (!fq->has_rest) return m <= b->M;
    if (!dir_ok(&fq->fwd, m, b)) return 0;
    return fq->sym ? 1 : dir_ok(&fq->rev, m, b);
}

int dpa_f_bspec_offset_ok(const dpa_f_bspec *b, double a)
{
    bprof p = bprof_make(b, a);
    return p.c0 >= 0;
}

/* Closed-form accountant for compositions of (eps, delta)-DP steps
 * (exact_rr.h).  LT Thm 4.6 / Cor 4.7: the composition of RR_{eps_i, delta_i}
 * has loss +inf with probability 1 - P and otherwise S = sum eps_i (2 Y_i - k_i)
 * with independent binomial Y_i, so
 *   delta(t) = 1 - P + P sum_{y: S(y) > t} prod_i Bin(y_i; k_i, p_i) (1 - e^{t - S(y)}).
 * Every term is positive and is formed in log space, so delta keeps its
 * relative accuracy however small it is, and the floor 1 - P is computed as
 * -expm1(sum k_j log1p(-delta_j)) (MATH.md §3: in naive double precision
 * (0.1, 1e-10)^100 looks infeasible at 1e-8; it is not).
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <math.h>
#include <stdlib.h>
#include "acct/exact_rr.h"
#include "acct/leaves.h"
#include "num/num.h"

/* Relative round-off of the +inf mass -expm1(sum k log1p(-delta)). */
#define INF_MARGIN (16 * DPA_UNIT_ROUNDOFF)
/* Bisection of eps(delta) stops at this relative bracket width. */
#define EPS_REL_TOL 1e-13

/* log Bin(y; k, p) with log p = lp, log(1 - p) = lq. */
static double log_binom_pmf(double k, double y, double lp, double lq)
{
    return lgamma(k + 1) - lgamma(y + 1) - lgamma(k - y + 1) + y * lp + (k - y) * lq;
}

/* log sum over the lattice of pmf * (1 - e^{t - S})_+, by recursion over the
 * distinct eps values; *terms counts the summed terms, *mag the largest
 * |log-term| (for the error bound). */
typedef struct walk { const dpa_rr_comp *c; double t; double acc; double mag; double terms; } walk;

static void rec(walk *w, size_t i, double S, double lw)
{
    const dpa_rr_comp *c = w->c;
    if (i == c->m) {
        if (S > w->t) {
            double lt = lw + log(-expm1(w->t - S));
            w->acc = dpa_log_add_exp(w->acc, lt);
            w->terms += 1;
            if (fabs(lw) > w->mag) w->mag = fabs(lw);
        }
        return;
    }
    double e = c->eps[i], k = c->count[i];
    const double *lpmf = c->lpmf[i];
    /* the remaining eps can add at most rest to S */
    double rest = 0;
    for (size_t j = i + 1; j < c->m; j++) rest += c->eps[j] * c->count[j];
    for (double y = k; y >= 0; y--) {
        double Si = S + e * (2 * y - k);
        if (Si + rest <= w->t) break; /* smaller y only lowers S */
        rec(w, i + 1, Si, lw + lpmf[(size_t)y]);
    }
}

dpa_status dpa_rr_prepare(dpa_rr_comp *c, dpa_error *err)
{
    c->lpmf = calloc(c->m ? c->m : 1, sizeof *c->lpmf);
    if (!c->lpmf) return dpa_error_set(err, DPA_ENOMEM, "out of memory");
    for (size_t i = 0; i < c->m; i++) {
        double k = c->count[i], e = c->eps[i];
        double lp = -log1p(exp(-e)), lq = -log1p(exp(e));
        c->lpmf[i] = malloc(((size_t)k + 1) * sizeof **c->lpmf);
        if (!c->lpmf[i]) return dpa_error_set(err, DPA_ENOMEM, "out of memory");
        for (size_t y = 0; y <= (size_t)k; y++) c->lpmf[i][y] = log_binom_pmf(k, (double)y, lp, lq);
    }
    return DPA_OK;
}

void dpa_rr_free(dpa_rr_comp *c)
{
    if (!c) return;
    if (c->lpmf)
        for (size_t i = 0; i < c->m; i++) free(c->lpmf[i]);
    free(c->lpmf);
    free(c->eps);
    free(c->count);
    c->lpmf = NULL;
    c->eps = c->count = NULL;
    c->m = 0;
}

void dpa_rr_delta(const dpa_rr_comp *c, double t, double *up, double *lo)
{
    walk w = {c, t, -INFINITY, 0, 0};
    rec(&w, 0, 0.0, 0.0);
    double inf_mass = -expm1(c->log_keep);
    double fin = exp(c->log_keep + w.acc);
    /* relative error of the finite part: lgamma and the products carry an
     * absolute error ~ (|log term| + 4) u in log space per term, the log-sum
     * adds ~ log2(terms) u; margin 16 */
    double rel = 16 * DPA_UNIT_ROUNDOFF * (w.mag + 8 + log2(w.terms + 1) + fabs(c->log_keep));
    double v_up = inf_mass * (1 + 4 * DPA_UNIT_ROUNDOFF) + fin * (1 + rel);
    double v_lo = inf_mass * (1 - 4 * DPA_UNIT_ROUNDOFF) + fin * (1 - rel);
    double floor_ = t < 0 ? -expm1(t) : 0.0;
    *up = fmin(1.0, v_up);
    *lo = fmax(floor_, fmin(v_lo, *up));
}

typedef struct solve_ctx { const dpa_rr_comp *c; double target; int side; } solve_ctx;

/* delta_side(t) - target, non-increasing in t */
static double excess_delta(double t, void *ctx)
{
    const solve_ctx *s = ctx;
    double up, lo;
    dpa_rr_delta(s->c, t, &up, &lo);
    return (s->side ? lo : up) - s->target;
}

/* smallest t in [0, tmax] with delta_side(t) <= target, by bisection: the
 * infeasible end bounds the true eps from below, the feasible end from above */
static double solve(const dpa_rr_comp *c, double target, int side, double tmax)
{
    solve_ctx s = {c, target, side};
    if (excess_delta(0.0, &s) <= 0) return 0.0;
    if (excess_delta(tmax, &s) > 0) return INFINITY;
    double lo, hi;
    if (dpa_bisect(excess_delta, &s, 0.0, tmax, 0.0, EPS_REL_TOL, &lo, &hi)) return side ? 0.0 : INFINITY;
    return side ? lo : hi;
}

void dpa_rr_epsilon(const dpa_rr_comp *c, double delta, double *up, double *lo)
{
    double tmax = 0;
    for (size_t i = 0; i < c->m; i++) tmax += c->eps[i] * c->count[i];
    /* above the largest finite loss only the +inf mass remains */
    tmax *= 1 + 1e-12;
    /* truly infinite only when delta is below the +inf mass (at equality
     * eps is the largest finite loss); the margin covers the mass's own
     * round-off.  Within the margin the search below returns an infinite
     * upper bound and a finite lower one. */
    if (delta < -expm1(c->log_keep) * (1 - INF_MARGIN)) {
        *up = *lo = INFINITY;
        return;
    }
    *up = solve(c, delta, 0, tmax);
    *lo = solve(c, delta, 1, tmax);
    if (*lo > *up) *lo = *up;
}

/* Lattice size prod (k_i + 1) over the distinct nonzero eps of an
 * (eps, delta) composition. */
static double rr_lattice(const dpa_leafset *L)
{
    double prod = 1;
    for (size_t i = 0; i < L->n; i++) {
        double e = L->v[i].rr_eps;
        if (!(e > 0)) continue;
        int seen = 0;
        for (size_t j = 0; j < i; j++) seen |= (L->v[j].rr_eps == e);
        if (seen) continue;
        double k = 0;
        for (size_t j = i; j < L->n; j++)
            if (L->v[j].rr_eps == e) k += L->v[j].count;
        prod *= k + 1;
    }
    return prod;
}

int dpa_rr_applicable(const dpa_leafset *L)
{
    return L->all_rr && rr_lattice(L) <= DPA_RR_MAX_LATTICE;
}

dpa_status dpa_rr_build(dpa_rr_comp *c, const dpa_leafset *L, dpa_error *err)
{
    c->eps = malloc((L->n ? L->n : 1) * sizeof *c->eps);
    c->count = malloc((L->n ? L->n : 1) * sizeof *c->count);
    if (!c->eps || !c->count) return dpa_error_set(err, DPA_ENOMEM, "out of memory");
    c->m = 0;
    c->log_keep = 0;
    for (size_t i = 0; i < L->n; i++) {
        const dpa_leaf *l = &L->v[i];
        c->log_keep += l->count * log1p(-l->rr_delta);
        if (!(l->rr_eps > 0)) continue;
        size_t j = 0;
        while (j < c->m && c->eps[j] != l->rr_eps) j++;
        if (j == c->m) {
            c->eps[c->m] = l->rr_eps;
            c->count[c->m++] = 0;
        }
        c->count[j] += l->count;
    }
    return dpa_rr_prepare(c, err);
}

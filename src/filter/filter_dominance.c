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
 * The query.  Its Gaussian leaves (gaussian, gdp) compose exactly with
 * G_m: G_m (+) G_mu0 = G_sqrt(m^2 + mu0^2) (GDP Cor 3.3).  A subsampled
 * Gaussian leaf is dominated by its unsampled Gaussian (subsampling is a
 * post-processing of the pair by the kernel y -> q delta_y + (1-q) Q), so it
 * is counted as G_mu0: sound, and tight for the residue update because the
 * tail of the subsampled Gaussian's PLD is Gaussian with the same variance
 * (so no G_m with m^2 + mu0^2 > M^2 passes anyway).  Every other leaf must
 * have a bounded privacy loss; it is described, per direction, by a
 * discrete law of its loss W under the first distribution: atoms exactly
 * (pure, randomized response, approx, tables, subsampled atoms), continuous
 * parts (Laplace) by bins whose mass is put at the bin's upper end (W
 * rounded up).  Rounding W up can only raise delta_C(t) = E[delta_m(t - W)]
 * (delta_m is non-increasing), so the law's profile is an upper bound.
 * Leaves are composed by convolving the laws (rounding W up on a grid when
 * the atoms exceed LAW_CAP).
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

/* Most atoms a law keeps; beyond, W is rounded up onto a uniform grid of
 * this many points (sound; the step is (range)/LAW_CAP). */
#define LAW_CAP 2048
/* Bins of a continuous part (Laplace): W is rounded up by at most
 * (wmax - wmin)/LAW_BINS. */
#define LAW_BINS 64
/* Relative margin on the pair tails A(W > t) (closed forms in log space,
 * src/mech, accurate to a few ulp): 1e-12 is > 1000 times that. */
#define TAIL_REL 1e-12
/* Relative margin on a sum of n products of upper bounds: (n + 8) * 4 u
 * bounds the accumulated rounding of the sum of non-negative terms. */
#define SUM_REL(n) (((double)(n) + 8.0) * 4.0 * DPA_UNIT_ROUNDOFF)
/* Relative margin on S = Phi(z) from exp(dpa_log_ndtr(z)) with z rounded
 * down (log Phi relative error < 4e-16, exp < 1 ulp): 1e-12. */
#define SLOPE_REL 1e-12
/* Intervals of the dominance test on [0, E] (failing intervals are
 * subdivided, see seg_ok). */
#define GRID_N 256
/* Steps of the tail search (E = wmax + M 1.25^k / 2, k < E_STEPS: up to
 * 1e19 M, far beyond the M^2/2 + O(M) the lemma needs for M <= 1e6). */
#define E_STEPS 200

typedef struct law {
    size_t n;
    double *w, *p; /* ascending w, p upper bounds on the masses */
    double inf;    /* upper bound on the mass at +inf */
    struct law *coarse; /* the query's laws: a coarse copy (law_coarsen), or NULL */
} law;

struct dpa_f_query {
    double mu0;   /* upper bound on the Gaussian part's mu */
    int has_rest; /* a non-Gaussian part exists */
    int sym;      /* rest symmetric: rev == fwd */
    law fwd, rev;
};

static void law_free(law *l)
{
    free(l->w);
    free(l->p);
    if (l->coarse) {
        law_free(l->coarse);
        free(l->coarse);
    }
    l->w = l->p = NULL;
    l->coarse = NULL;
    l->n = 0;
}

static int law_alloc(law *l, size_t n)
{
    l->w = malloc((n ? n : 1) * sizeof *l->w);
    l->p = malloc((n ? n : 1) * sizeof *l->p);
    l->n = n;
    l->inf = 0;
    l->coarse = NULL;
    if (!l->w || !l->p) {
        law_free(l);
        return 0;
    }
    return 1;
}

static double up_m(double x) { return dpa_f_up(x * (1 + 4 * DPA_UNIT_ROUNDOFF)); }

/* Sort by w (insertion-merge via qsort of indices) and merge equal w. */
typedef struct { double w, p; } wp;
static int cmp_wp(const void *a, const void *b)
{
    double x = ((const wp *)a)->w, y = ((const wp *)b)->w;
    return x < y ? -1 : x > y;
}

/* Build a law from n (w, p) items: sorted, merged, regridded to LAW_CAP
 * points (W rounded up) if needed.  Takes the item array. */
static int law_from_items(law *out, wp *it, size_t n, double inf)
{
    qsort(it, n, sizeof *it, cmp_wp);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(it[i].p > 0)) continue;
        if (k > 0 && it[k - 1].w == it[i].w)
            it[k - 1].p = dpa_f_up(it[k - 1].p + it[i].p);
        else
            it[k++] = it[i];
    }
    n = k;
    if (n > LAW_CAP) {
        double wmin = it[0].w, wmax = it[n - 1].w, h = (wmax - wmin) / (LAW_CAP - 1);
        if (!law_alloc(out, LAW_CAP)) return 0;
        for (size_t i = 0; i < LAW_CAP; i++) {
            out->w[i] = i == LAW_CAP - 1 ? wmax : wmin + (double)i * h;
            out->p[i] = 0;
        }
        for (size_t i = 0; i < n; i++) {
            double f = ceil((it[i].w - wmin) / h);
            size_t j = f < 0 ? 0 : f > LAW_CAP - 1 ? LAW_CAP - 1 : (size_t)f;
            while (j < LAW_CAP - 1 && out->w[j] < it[i].w) j++; /* grid point >= w */
            out->p[j] = dpa_f_up(out->p[j] + it[i].p);
        }
        /* drop empty points */
        size_t m = 0;
        for (size_t i = 0; i < LAW_CAP; i++)
            if (out->p[i] > 0) {
                out->w[m] = out->w[i];
                out->p[m++] = out->p[i];
            }
        out->n = m;
    } else {
        if (!law_alloc(out, n)) return 0;
        for (size_t i = 0; i < n; i++) {
            out->w[i] = it[i].w;
            out->p[i] = it[i].p;
        }
    }
    out->inf = fmin(1.0, inf);
    return 1;
}

/* The law of W under A of pair p (dir 0) or of -W under B (dir 1). */
static dpa_status law_of_pair(const dpa_pair *p, int dir, law *out, dpa_error *err)
{
    if (p->slack_hi > 0 || p->slack_lo > 0)
        return dpa_error_set(err, DPA_EUNSUPPORTED,
                             "gdp-residue filter: the query's privacy loss has unbounded support (a truncated atom list, "
                             "e.g. a discrete Gaussian); not supported");
    if (p->kind == DPA_PAIR_ATOMS && p->lca == -INFINITY && p->lcb == -INFINITY) {
        wp *it = malloc((p->natoms ? p->natoms : 1) * sizeof *it);
        if (!it) return dpa_error_set(err, DPA_ENOMEM, "out of memory");
        size_t k = 0;
        double inf = 0;
        for (size_t i = 0; i < p->natoms; i++) {
            const dpa_atom *a = &p->atoms[i];
            double w = dir ? -a->w : a->w, l = dir ? a->lb : a->la;
            if (l == -INFINITY) continue;
            if (w == INFINITY) {
                inf = up_m(inf + up_m(exp(l)));
                continue;
            }
            if (!isfinite(w)) continue;
            it[k].w = w;
            it[k++].p = up_m(exp(l));
        }
        int ok = law_from_items(out, it, k, inf);
        free(it);
        return ok ? DPA_OK : dpa_error_set(err, DPA_ENOMEM, "out of memory");
    }
    /* continuous part: bins over the loss range, mass at the upper end */
    dpa_pair *q = NULL;
    const dpa_pair *src = p;
    if (dir) {
        dpa_pair *c = dpa_pair_copy(p, err);
        if (!c) return err ? err->status : DPA_ENOMEM;
        q = dpa_pair_reverse(c, err);
        if (!q) return err ? err->status : DPA_ENOMEM;
        src = q;
    }
    double wmin, wmax;
    dpa_pair_loss_range(src, &wmin, &wmax);
    if (!isfinite(wmin) || !isfinite(wmax)) {
        dpa_pair_free(q);
        return dpa_error_set(err, DPA_EUNSUPPORTED, "gdp-residue filter: a non-Gaussian leaf with unbounded privacy loss "
                                                    "is not supported");
    }
    wp *it = malloc((LAW_BINS + 1) * sizeof *it);
    if (!it) {
        dpa_pair_free(q);
        return dpa_error_set(err, DPA_ENOMEM, "out of memory");
    }
    double inf = dpa_pair_inf_bound(src), tl[2];
    size_t k = 0;
    double prev_lo; /* lower bound of A(W > t_{i-1}) */
    dpa_pair_tail_gt(src, wmin, tl);
    prev_lo = exp(tl[0]) * (1 - TAIL_REL);
    double prev_up = fmin(1.0, exp(tl[0]) * (1 + TAIL_REL));
    it[k].w = wmin;
    it[k++].p = up_m(fmax(0.0, 1.0 - prev_lo));
    for (int i = 1; i <= LAW_BINS && wmax > wmin; i++) {
        double t = i == LAW_BINS ? wmax : wmin + (wmax - wmin) * ((double)i / LAW_BINS);
        dpa_pair_tail_gt(src, t, tl);
        double lo = exp(tl[0]) * (1 - TAIL_REL), up = fmin(1.0, exp(tl[0]) * (1 + TAIL_REL));
        /* mass in (t_{i-1}, t] <= up A(W > t_{i-1}) - lo A(W > t) */
        it[k].w = t;
        it[k++].p = up_m(fmax(0.0, prev_up - lo));
        prev_up = up;
        (void)prev_lo;
    }
    dpa_pair_free(q);
    int ok = law_from_items(out, it, k, inf);
    free(it);
    return ok ? DPA_OK : dpa_error_set(err, DPA_ENOMEM, "out of memory");
}

/* Convolution of two laws (independent sum of losses), W rounded up. */
static int law_conv(const law *a, const law *b, law *out)
{
    size_t n = a->n * b->n;
    wp *it = malloc((n ? n : 1) * sizeof *it);
    if (!it) return 0;
    size_t k = 0;
    for (size_t i = 0; i < a->n; i++)
        for (size_t j = 0; j < b->n; j++) {
            it[k].w = dpa_f_up(a->w[i] + b->w[j]);
            it[k++].p = up_m(a->p[i] * b->p[j]);
        }
    int ok = law_from_items(out, it, k, dpa_f_up(a->inf + b->inf));
    free(it);
    return ok;
}

static int law_copy(const law *a, law *out)
{
    if (!law_alloc(out, a->n)) return 0;
    memcpy(out->w, a->w, a->n * sizeof *a->w);
    memcpy(out->p, a->p, a->n * sizeof *a->p);
    out->inf = a->inf;
    return 1;
}

/* a^(*count) by binary powering; count a positive integer. */
static int law_pow(const law *a, double count, law *out)
{
    law base, acc = {0, NULL, NULL, 0, NULL}, t;
    int have = 0;
    if (!law_copy(a, &base)) return 0;
    double c = count;
    for (;;) {
        double half = floor(c / 2);
        if (c - 2 * half == 1) {
            if (!have) {
                if (!law_copy(&base, &acc)) goto fail;
                have = 1;
            } else {
                if (!law_conv(&acc, &base, &t)) goto fail;
                law_free(&acc);
                acc = t;
            }
        }
        c = half;
        if (c < 1) break;
        if (!law_conv(&base, &base, &t)) goto fail;
        law_free(&base);
        base = t;
    }
    law_free(&base);
    *out = acc;
    return 1;
fail:
    law_free(&base);
    law_free(&acc);
    return 0;
}

/* Atoms of a law's coarse copy. */
#define COARSE_N 128

/* Attach to l a coarse copy: consecutive atoms merged in COARSE_N blocks,
 * each at its largest w with its masses summed (rounded up), as LAW_CAP's
 * regridding does: W rounded up, so its profile bounds l's from above and
 * is itself a certified upper bound, at a fraction of the cost (comp_le).
 * 1, or 0 when out of memory (l is left without). */
static int law_coarsen(law *l)
{
    if (l->n <= 2 * COARSE_N) return 1;
    law *c = malloc(sizeof *c);
    if (!c || !law_alloc(c, COARSE_N)) {
        free(c);
        return 0;
    }
    size_t per = (l->n + COARSE_N - 1) / COARSE_N, k = 0;
    for (size_t i = 0; i < l->n; i += per, k++) {
        size_t e = i + per < l->n ? i + per : l->n;
        double sum = 0;
        for (size_t j = i; j < e; j++) sum += l->p[j];
        c->w[k] = l->w[e - 1];
        c->p[k] = dpa_f_up(sum * (1 + SUM_REL(e - i)));
    }
    c->n = k;
    c->inf = l->inf;
    l->coarse = c;
    return 1;
}

void dpa_f_query_free(dpa_f_query *fq)
{
    if (!fq) return;
    law_free(&fq->fwd);
    law_free(&fq->rev);
    free(fq);
}

/* Compose law l (count times) into *acc (or set it). */
static dpa_status absorb(law *acc, int *have, const law *l, double count, dpa_error *err)
{
    law pw, t;
    if (!law_pow(l, count, &pw)) return dpa_error_set(err, DPA_ENOMEM, "out of memory");
    if (!*have) {
        *acc = pw;
        *have = 1;
        return DPA_OK;
    }
    int ok = law_conv(acc, &pw, &t);
    law_free(&pw);
    if (!ok) return dpa_error_set(err, DPA_ENOMEM, "out of memory");
    law_free(acc);
    *acc = t;
    return DPA_OK;
}

dpa_status dpa_f_query_new(const dpa_spec *q, dpa_f_query **out, char *remark, size_t remlen, dpa_error *err)
{
    *out = NULL;
    if (remark && remlen) remark[0] = 0;
    dpa_leafset ls;
    dpa_status st = dpa_leaves_build(q, &ls, err);
    if (st) return st;
    dpa_f_query *fq = calloc(1, sizeof *fq);
    if (!fq) {
        dpa_leaves_free(&ls);
        return dpa_error_set(err, DPA_ENOMEM, "out of memory");
    }
    long double s2 = 0;
    int havef = 0, haver = 0, sym = 1, sampled_gauss = 0;
    for (size_t i = 0; i < ls.n && st == DPA_OK; i++) {
        const dpa_leaf *lf = &ls.v[i];
        if (lf->zcdp) {
            st = dpa_error_set(err, DPA_EUNSUPPORTED,
                               "%s: a zCDP guarantee is not a PLD; the gdp-residue filter cannot account it (use the "
                               "\"zcdp\" or \"rdp\" filter)", ls.zcdp_path);
            break;
        }
        if (lf->rdp_only) {
            st = dpa_error_set(err, DPA_EUNSUPPORTED,
                               "%s: a Renyi bound (repeat_and_select, laplace_svt, gaussian_svt) is not a PLD; the "
                               "gdp-residue filter cannot account it (use the \"rdp\" filter)", ls.zcdp_path);
            break;
        }
        if (!lf->pair) {
            st = dpa_error_set(err, DPA_EUNSUPPORTED,
                               "gdp-residue filter: a subsampled composition (one batch shared by several mechanisms) "
                               "is not supported; subsample each mechanism separately or use the \"rdp\" filter");
            break;
        }
        if (lf->kind == DPA_EV_GAUSSIAN || lf->kind == DPA_EV_GDP) {
            long double m = lf->kind == DPA_EV_GAUSSIAN ? (long double)lf->par[1] / lf->par[0] : (long double)lf->par[0];
            s2 += (long double)lf->count * m * m;
            if (!isnan(lf->rate)) sampled_gauss = 1;
            continue;
        }
        law f, r;
        st = law_of_pair(lf->pair, 0, &f, err);
        if (st) break;
        int psym = lf->pair->symmetric;
        if (!psym) {
            st = law_of_pair(lf->pair, 1, &r, err);
            if (st) {
                law_free(&f);
                break;
            }
        }
        if (!psym && sym && havef) {
            /* the rest so far was symmetric: its rev law is its fwd law */
            if (!law_copy(&fq->fwd, &fq->rev)) st = dpa_error_set(err, DPA_ENOMEM, "out of memory");
            else haver = 1;
        }
        if (!st) st = absorb(&fq->fwd, &havef, &f, lf->count, err);
        if (!st && (!psym || !sym)) st = absorb(&fq->rev, &haver, psym ? &f : &r, lf->count, err);
        if (!psym) sym = 0;
        law_free(&f);
        if (!psym) law_free(&r);
    }
    dpa_leaves_free(&ls);
    if (st) {
        dpa_f_query_free(fq);
        return st;
    }
    fq->has_rest = havef;
    fq->sym = sym;
    if ((havef && !law_coarsen(&fq->fwd)) || (haver && !sym && !law_coarsen(&fq->rev))) {
        dpa_f_query_free(fq);
        return dpa_error_set(err, DPA_ENOMEM, "out of memory");
    }
    double m0 = (double)sqrtl(s2);
    fq->mu0 = m0 > 0 ? dpa_f_up(m0 * (1 + 1e-15)) : 0; /* GAUSS_REL of filter_cost.c */
    if (!isfinite(fq->mu0)) {
        dpa_f_query_free(fq);
        return dpa_error_set(err, DPA_EUNSUPPORTED, "gdp-residue filter: the query's Gaussian part has mu = inf");
    }
    if (remark && sampled_gauss)
        snprintf(remark, remlen, "subsampled Gaussian leaves accounted as their unsampled Gaussian (sound; tight in the "
                                 "tail of the PLD)");
    *out = fq;
    return DPA_OK;
}

int dpa_f_query_is_gaussian(const dpa_f_query *fq, double *mu0_up)
{
    *mu0_up = fq->mu0;
    return !fq->has_rest;
}

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

double dpa_f_query_rest_inf(const dpa_f_query *fq)
{
    if (!fq->has_rest) return 0;
    return fq->sym ? fq->fwd.inf : fmax(fq->fwd.inf, fq->rev.inf);
}

double dpa_f_query_rest_eps(const dpa_f_query *fq)
{
    double e = fq->fwd.n ? fq->fwd.w[fq->fwd.n - 1] : 0;
    if (!fq->sym && fq->rev.n) e = fmax(e, fq->rev.w[fq->rev.n - 1]);
    return fmax(e, 0.0);
}

int dpa_f_bspec_offset_ok(const dpa_f_bspec *b, double a)
{
    bprof p = bprof_make(b, a);
    return p.c0 >= 0;
}

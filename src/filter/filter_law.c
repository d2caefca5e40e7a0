/* The query of the GDP residue filter: its Gaussian part and the discrete
 * laws of its privacy loss (filter_law.h), for the dominance test of
 * filter_dominance.c.
 * SPDX-License-Identifier: GPL-3.0-or-later
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

/* Most atoms a law keeps; beyond, W is rounded up onto a uniform grid of
 * this many points (sound; the step is (range)/LAW_CAP). */
#define LAW_CAP 2048
/* Bins of a continuous part (Laplace): W is rounded up by at most
 * (wmax - wmin)/LAW_BINS. */
#define LAW_BINS 64
/* Relative margin on the pair tails A(W > t) (closed forms in log space,
 * src/mech, accurate to a few ulp): 1e-12 is > 1000 times that. */
#define TAIL_REL 1e-12

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

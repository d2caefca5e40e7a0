/* The RDP accountant: a composition's Rényi curve over a grid of orders,
 * composed by adding count_i * D_alpha(leaf_i) per order and direction
 * (Mironov 2017, Prop 1; adaptive composition), and the conversion to
 * (eps, delta) minimized over orders with a continuous refinement.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * This file holds the accountant's state and its construction: the order
 * grid, the terms (pairs, zCDP curves, composite leaves, Renyi-only leaves)
 * and the emptying of the evaluation cache when a term is added.  A term's
 * D_alpha and the cache are in rdp_eval.c, the queries in rdp_query.c; the
 * types are in rdp_acct.h.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "dpacct/event.h"
#include "rdp/rdp.h"
#include "rdp/rdp_acct.h"
#include "num/num.h"
#include "model/method.h"

/* ---------------- orders ---------------- */

size_t dpa_rdp_default_orders(double *out, size_t cap)
{
    size_t k = 0;
#define PUSH(v)                        \
    do {                               \
        if (out && k < cap) out[k] = (v); \
        k++;                           \
    } while (0)
    for (int i = 1; i <= 99; i++) PUSH(1.0 + i / 100.0);
    for (int i = 0; i <= 56; i++) PUSH(2.0 + i / 4.0);
    for (int i = 1; i <= 96; i++) PUSH(16.0 + i / 2.0);
    double x = 64, last = 64;
    for (;;) {
        x *= 1.05;
        double v = round(x);
        if (v >= 10000) break;
        if (v > last) {
            PUSH(v);
            last = v;
        }
    }
    PUSH(10000.0);
#undef PUSH
    return k;
}

/* ---------------- construction ---------------- */

void dpa_rdp_invalidate(dpa_rdp *a)
{
    free(a->cache);
    a->cache = NULL;
    a->ccap = a->ccount = 0;
}

static void comp_clear(dpa_rdp_comp *c);

static void term_free(dpa_rdp_term *t)
{
    dpa_rdp_free(t->sub);
    dpa_pair_free(t->pair);
    if (t->comp) {
        comp_clear(t->comp);
        free(t->comp);
    }
}

static void comp_clear(dpa_rdp_comp *c)
{
    for (size_t i = 0; i < c->n; i++) term_free(&c->t[i]);
    free(c->t);
    free(c->logm);
    memset(c, 0, sizeof *c);
}

static dpa_status comp_push(dpa_rdp_comp *c, dpa_rdp_term t, dpa_error *err)
{
    if (c->n == c->cap) {
        size_t nc = c->cap ? 2 * c->cap : 8;
        dpa_rdp_term *nv = realloc(c->t, nc * sizeof *nv);
        if (!nv) {
            term_free(&t);
            return dpa_error_set(err, DPA_ENOMEM, "out of memory");
        }
        c->t = nv;
        c->cap = nc;
    }
    c->t[c->n++] = t;
    free(c->logm); /* the moments change */
    c->logm = NULL;
    c->nlogm = 0;
    return DPA_OK;
}

dpa_rdp *dpa_rdp_new(const double *orders, size_t n, dpa_error *err)
{
    dpa_rdp *a = calloc(1, sizeof *a);
    if (!a) {
        dpa_error_set(err, DPA_ENOMEM, "out of memory");
        return NULL;
    }
    if (!orders) {
        n = dpa_rdp_default_orders(NULL, 0);
        a->orders = malloc(n * sizeof *a->orders);
        if (a->orders) dpa_rdp_default_orders(a->orders, n);
    } else {
        if (n == 0) {
            free(a);
            dpa_error_set(err, DPA_EINVAL, "RDP accountant: empty order list");
            return NULL;
        }
        for (size_t i = 0; i < n; i++) {
            if (!(orders[i] > 1 && isfinite(orders[i])) || (i > 0 && !(orders[i] > orders[i - 1]))) {
                free(a);
                dpa_error_set(err, DPA_EINVAL,
                              "RDP accountant: orders must be finite, > 1 and strictly increasing (order %zu = %g)",
                              i, orders[i]);
                return NULL;
            }
        }
        a->orders = malloc(n * sizeof *a->orders);
        if (a->orders) memcpy(a->orders, orders, n * sizeof *a->orders);
    }
    if (!a->orders) {
        free(a);
        dpa_error_set(err, DPA_ENOMEM, "out of memory");
        return NULL;
    }
    a->n = n;
    return a;
}

void dpa_rdp_free(dpa_rdp *a)
{
    if (!a) return;
    comp_clear(&a->top);
    dpa_rdp_invalidate(a);
    free(a->orders);
    free(a);
}

static int count_ok(double c) { return c >= 0 && isfinite(c); }

static dpa_status add_pair_to(dpa_rdp_comp *c, const dpa_pair *p, double count, int *asym, dpa_error *err)
{
    if (!p) return dpa_error_set(err, DPA_EINVAL, "RDP accountant: NULL pair");
    if (!count_ok(count))
        return dpa_error_set(err, DPA_EINVAL, "RDP accountant: count must be finite and >= 0, got %g", count);
    /* refuse now (not at the first query) what cannot be bounded */
    double d[2];
    dpa_status st = dpa_rdp_divergence(p, 2.0, 0, &d[0], err);
    d[1] = d[0];
    if (!st && !p->symmetric) st = dpa_rdp_divergence(p, 2.0, 1, &d[1], err);
    if (st) return st;
    dpa_pair *cp = dpa_pair_copy(p, err);
    if (!cp) return err ? err->status : DPA_ENOMEM;
    if (!cp->symmetric && asym) *asym = 1;
    /* D_2 is kept: the queries start from the curve at order 2 */
    return comp_push(c, (dpa_rdp_term){DPA_RDP_T_PAIR, count, cp, 0, 0, NULL, {d[0], d[1]}, 0, {0, 0, 0, 0}, NULL}, err);
}

dpa_status dpa_rdp_add_pair(dpa_rdp *a, const dpa_pair *p, double count, dpa_error *err)
{
    dpa_rdp_invalidate(a);
    return add_pair_to(&a->top, p, count, &a->asym, err);
}

dpa_status dpa_rdp_add_dg_conditioned(dpa_rdp *a, double sigma, double s, double T, double count, dpa_error *err)
{
    if (!(sigma > 0 && isfinite(sigma)) || !(s >= 1 && s == floor(s)) || !(T >= 0 && 2 * T >= s && T == floor(T)) ||
        !count_ok(count))
        return dpa_error_set(err, DPA_EINVAL, "RDP accountant: conditioned discrete_gaussian sigma %g, s %g, T %g, "
                             "count %g", sigma, s, T, count);
    dpa_rdp_invalidate(a);
    return comp_push(&a->top,
                     (dpa_rdp_term){DPA_RDP_T_DG, count, NULL, 0, 0, NULL, {NAN, NAN}, 1, {sigma, s, 1, T}, NULL}, err);
}

dpa_status dpa_rdp_add_zcdp(dpa_rdp *a, double rho, double xi, double count, dpa_error *err)
{
    if (!(rho >= 0 && isfinite(rho)) || !(xi >= 0 && isfinite(xi)) || !count_ok(count))
        return dpa_error_set(err, DPA_EINVAL,
                             "RDP accountant: zcdp needs finite rho >= 0, xi >= 0 and count >= 0 (got %g, %g, %g)",
                             rho, xi, count);
    dpa_rdp_invalidate(a);
    return comp_push(&a->top,
                     (dpa_rdp_term){DPA_RDP_T_ZCDP, count, NULL, rho, xi, NULL, {NAN, NAN}, 0, {0, 0, 0, 0}, NULL},
                     err);
}

/* The truncated negative binomial's halting parameter gamma for a mean
 * (Papernot & Steinke 2022, Def 1): mean(gamma) = shape (1/gamma - 1) /
 * (1 - gamma^shape) (shape > 0), (1/gamma - 1) / log(1/gamma) (shape 0),
 * decreasing in gamma from +inf to 1.  Returned: an upper bound on
 * log(1/gamma) (the bound's term grows with it), from a bisection that
 * keeps mean(g) >= mean at its lower end g, widened by REPSEL_GAMMA_REL for
 * the rounding of the mean's evaluation (a few ulps relative: its error in
 * gamma is a few ulps times mean'(gamma) gamma / mean = O(1) for shape <= 1e6). */
#define REPSEL_GAMMA_REL 1e-12
static long double tnb_mean(long double g, double shape)
{
    long double lg = logl(g); /* < 0 */
    if (shape == 0) return (1 / g - 1) / -lg;
    return shape * (1 / g - 1) / -expm1l(shape * lg);
}

static double repsel_log_inv_gamma(double mean, double shape)
{
    if (mean <= 1) return 0; /* one run: gamma = 1 */
    if (shape == 1) return dpa_rdp_up((double)logl(mean) * (1 + REPSEL_GAMMA_REL), 4);
    long double lo = 0, hi = fminl(1, 2 * (shape + 1) / mean);
    if (tnb_mean(hi, shape) >= mean) lo = hi; /* the bracket's own end already qualifies */
    else
        for (int it = 0; it < 200 && hi - lo > 1e-19L * hi; it++) {
            long double g = 0.5L * (lo + hi);
            if (tnb_mean(g, shape) >= mean) lo = g;
            else hi = g;
        }
    if (!(lo > 0)) return INFINITY;
    return dpa_rdp_up((double)-logl(lo * (1 - REPSEL_GAMMA_REL)), 4);
}

/* A Renyi-only leaf (src/model/leaves.h) as a term. */
static dpa_status add_rdp_only(dpa_rdp_comp *c, const dpa_leaf *l, int depth, dpa_error *err)
{
    if (depth > 0 || !count_ok(l->count))
        return dpa_error_set(err, DPA_EINVAL, "RDP accountant: a Renyi-only leaf at depth %d, count %g", depth,
                             l->count);
    dpa_rdp_term t = {DPA_RDP_T_SVT, l->count, NULL, 0, 0, NULL, {NAN, NAN}, l->rdp_only,
                      {l->rpar[0], l->rpar[1], l->rpar[2], NAN}, NULL};
    if (l->rdp_only == DPA_EV_REPEAT_AND_SELECT) {
        t.kind = DPA_RDP_T_REPSEL;
        if (l->rpar[1] != DPA_REPSEL_POISSON) {
            t.fpar[2] = repsel_log_inv_gamma(l->rpar[0], l->rpar[1]);
            if (!isfinite(t.fpar[2]))
                return dpa_error_set(err, DPA_EUNSUPPORTED,
                                     "RDP accountant: repeat_and_select: no halting parameter found for mean %g, "
                                     "shape %g", l->rpar[0], l->rpar[1]);
        }
        t.sub = dpa_rdp_new(NULL, 0, err);
        if (!t.sub) return err ? err->status : DPA_ENOMEM;
        dpa_status st = dpa_rdp_add_leafset(t.sub, l->inner, err);
        if (st) {
            dpa_rdp_free(t.sub);
            return st;
        }
    }
    return comp_push(c, t, err);
}

static dpa_status add_leafset_to(dpa_rdp_comp *c, const dpa_leafset *s, int *asym, int depth, dpa_error *err)
{
    if (depth > 64) return dpa_error_set(err, DPA_EUNSUPPORTED, "RDP accountant: subsampling nested too deeply");
    for (size_t i = 0; i < s->n; i++) {
        const dpa_leaf *l = &s->v[i];
        dpa_status st;
        if (l->rdp_only) {
            st = add_rdp_only(c, l, depth, err);
        } else if (l->zcdp) {
            /* a zcdp leaf (rho = par[0], xi = par[1]); never inside a
             * subsampled composition (src/model/leaves.c refuses that) */
            if (!count_ok(l->count) || !(l->par[0] >= 0 && isfinite(l->par[0])) ||
                !(l->par[1] >= 0 && isfinite(l->par[1])))
                return dpa_error_set(err, DPA_EINVAL, "RDP accountant: zcdp leaf rho %g, xi %g, count %g", l->par[0],
                                     l->par[1], l->count);
            st = comp_push(c,
                           (dpa_rdp_term){DPA_RDP_T_ZCDP, l->count, NULL, l->par[0], l->par[1], NULL, {NAN, NAN}, 0,
                                          {0, 0, 0, 0}, NULL},
                           err);
        } else if (l->pair && depth == 0 && l->kind == DPA_EV_DISCRETE_GAUSSIAN && isnan(l->rate) &&
                   dpa_pair_log_inf(l->pair) == -INFINITY) {
            /* (untruncated: a truncated one has mass at +inf, no zCDP; its
             * pair's divergences are +inf above order 1) */
            /* the discrete Gaussian's atom list is truncated (its pair has
             * slack), so its exact divergence cannot be certified; it is
             * rho-zCDP with rho = s^2 / (2 sigma^2) (Canonne-Kamath-Steinke
             * 2020, Prop 5; par = sigma, sensitivity), rounded up: two
             * products and a quotient, 4 u relative */
            double r = l->par[1] / l->par[0];
            double rho = 0.5 * r * r * (1 + 4 * DBL_EPSILON);
            if (!count_ok(l->count) || !isfinite(rho))
                return dpa_error_set(err, DPA_EINVAL, "RDP accountant: discrete_gaussian rho %g, count %g", rho, l->count);
            st = comp_push(c, (dpa_rdp_term){DPA_RDP_T_ZCDP, l->count, NULL, rho, 0, NULL, {NAN, NAN}, 0, {0, 0, 0, 0}, NULL},
                           err);
        } else if (l->pair && depth == 0 && l->kind == DPA_EV_DISCRETE_GAUSSIAN && !isnan(l->rate) && !l->sample &&
                   l->rpar[2] < 0 && l->rate > 0 && l->rate < 1) {
            /* Poisson-subsampled, untruncated: its atom list's omitted atoms
             * leave its pair's divergence unbounded; the direct sum of
             * renyi_dg_tail.c bounds it per order (rdp_eval.c) */
            if (!count_ok(l->count))
                return dpa_error_set(err, DPA_EINVAL, "RDP accountant: count must be finite and >= 0, got %g", l->count);
            if (asym) *asym = 1;
            st = comp_push(c,
                           (dpa_rdp_term){DPA_RDP_T_DG, l->count, NULL, 0, 0, NULL, {NAN, NAN}, 0,
                                          {l->par[0], l->par[1], l->rate, -1}, NULL},
                           err);
        } else if (l->pair && depth == 0 && l->kind == DPA_EV_EXPONENTIAL_MECHANISM && isnan(l->rate)) {
            /* an eps-bounded-range mechanism is (eps^2 / 8)-zCDP (Cesar &
             * Rogers 2021): the term's RDP is the smaller of its
             * pair's and alpha eps^2 / 8 (docs/mechanisms.md §4); rho
             * rounded up (two products, 4 u); the cap is an extra bound, so
             * the curve stays certified */
            st = add_pair_to(c, l->pair, l->count, asym, err);
            if (!st) c->t[c->n - 1].rho = l->par[0] * l->par[0] / 8 * (1 + 4 * DBL_EPSILON);
        } else if (l->pair) {
            st = add_pair_to(c, l->pair, l->count, asym, err);
        } else if (l->inner) {
            if (!(l->rate > 0 && l->rate <= 1))
                return dpa_error_set(err, DPA_EINVAL, "RDP accountant: composite leaf with rate %g", l->rate);
            if (!count_ok(l->count))
                return dpa_error_set(err, DPA_EINVAL, "RDP accountant: count %g", l->count);
            dpa_rdp_comp *in = calloc(1, sizeof *in);
            if (!in) return dpa_error_set(err, DPA_ENOMEM, "out of memory");
            in->rate = l->rate;
            in->sample = l->sample;
            int inner_asym = 0;
            st = add_leafset_to(in, l->inner, &inner_asym, depth + 1, err);
            if (st) {
                comp_clear(in);
                free(in);
                return st;
            }
            if (!l->sample && asym) *asym = 1;
            st = comp_push(
                c, (dpa_rdp_term){DPA_RDP_T_COMPOSITE, l->count, NULL, 0, 0, in, {NAN, NAN}, 0, {0, 0, 0, 0}, NULL}, err);
        } else {
            return dpa_error_set(err, DPA_EINVAL, "RDP accountant: leaf %zu has neither a pair nor an inner set", i);
        }
        if (st) return st;
    }
    return DPA_OK;
}

dpa_status dpa_rdp_add_leafset(dpa_rdp *a, const dpa_leafset *s, dpa_error *err)
{
    if (!s) return dpa_error_set(err, DPA_EINVAL, "RDP accountant: NULL leaf set");
    if (s->ra_path[0]) return dpa_method_refuse_ra(s, "rdp", err);
    dpa_rdp_invalidate(a);
    dpa_status st = add_leafset_to(&a->top, s, &a->asym, 0, err);
    /* composite terms, Renyi-only terms and capped pairs need not give a
     * unimodal key along the grid: scan it in full (the bound is valid at
     * any order; this is for tightness) */
    for (size_t i = 0; i < a->top.n; i++)
        if (a->top.t[i].kind == DPA_RDP_T_COMPOSITE || a->top.t[i].kind == DPA_RDP_T_SVT ||
            a->top.t[i].kind == DPA_RDP_T_REPSEL || (a->top.t[i].kind == DPA_RDP_T_PAIR && a->top.t[i].rho > 0))
            a->irregular = 1;
    return st;
}

size_t dpa_rdp_norders(const dpa_rdp *a) { return a->n; }
const double *dpa_rdp_orders(const dpa_rdp *a) { return a->orders; }

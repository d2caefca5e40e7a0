/* The RDP accountant: a composition's Rényi curve over a grid of orders,
 * composed by adding count_i * D_alpha(leaf_i) per order and direction
 * (Mironov 2017, Prop 1; adaptive composition), and the conversion to
 * (eps, delta) minimized over orders with a continuous refinement.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Composite leaves (a Poisson/sample-subsampled composition, leaves.h) are
 * bounded through the inner composition (P, Q) = product of the inner
 * leaves' remove pairs, whose moments M_k = E_Q[(dP/dQ)^k] =
 * exp((k-1) D_k(P||Q)) are bounded by sum_i count_i (k-1) D_k(leaf_i)
 * (docs/rdp.md §2.7):
 *  - remove (qP + (1-q)Q, Q), integer alpha = n (binomial expansion of
 *    (1 - q + q x)^n, x = dP/dQ, all coefficients positive; MTZ19 §3.1 /
 *    Zhu & Wang 2019 for general bases):
 *        E = 1 + sum_{k=2}^n C(n,k) q^k (1-q)^{n-k} (M_k - 1)   (the k = 1 term,
 *        alpha q (1-q)^{n-1} (M_1 - 1) <= 0, is dropped);
 *    fractional alpha: log E(lambda) is convex in lambda = alpha - 1 (a log
 *    moment generating function), so it is below the chord between the
 *    neighbouring integer orders (log E(0) <= 0);
 *  - add (Q, qP + (1-q)Q): E = E_Q[f(x)], f(x) = (1 - q + q x)^{-beta},
 *    beta = alpha - 1, is completely monotone, so its degree-2 Taylor
 *    polynomial at 0 is above it on x >= 0 (remainder f'''(xi) x^3/6 <= 0):
 *        E <= (1-q)^{-beta} [1 - beta rho M_1 + beta(beta+1)/2 rho^2 M_2],  rho = q/(1-q),
 *    with M_1 = 1 (when M_2 is finite, P << Q); also E <= (1-q)^{-beta}.
 *  - sample (replace-one; the symmetrized pair S of R): E_S <= E_R + E_R' - 1
 *    (docs/rdp.md §2.6: S differs from R only on W <= 0, where the integrand
 *    difference b (e^{-theta W} - 1)(1 - e^{(1+theta)W}) is >= 0).
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "rdp/rdp.h"
#include "num/num.h"

#define U DPA_UNIT_ROUNDOFF

/* Golden-section steps of the continuous refinement over alpha (the
 * bracket between two grid neighbours shrinks by 0.618^30 ~ 5e-7). */
#define RDP_REFINE_STEPS 30
/* Grid orders on each side of the improved conversion's best order at
 * which the optimal conversion is evaluated (it is within a few percent of
 * the improved one near the optimum; elsewhere it cannot win). */
#define RDP_OPT_WINDOW 4
/* Largest integer order for composite leaves (O(alpha) inner moments). */
#define RDP_COMPOSITE_MAX_ORDER 1e6

typedef enum { T_PAIR, T_ZCDP, T_COMPOSITE } term_kind;

struct composite;

typedef struct rdp_term {
    term_kind kind;
    double count;
    dpa_pair *pair;           /* T_PAIR, owned */
    double rho, xi;           /* T_ZCDP */
    struct composite *comp;   /* T_COMPOSITE, owned */
} rdp_term;

typedef struct composite {
    double rate;
    int sample;
    rdp_term *t;
    size_t n, cap;
    double *logm; /* cached upper bounds on log M_k, k = 0.. */
    size_t nlogm;
} composite;

struct dpa_rdp {
    double *orders;
    size_t n;
    composite top; /* the terms of the composition (rate, sample unused) */
    int asym;      /* some term differs between the directions */
    double *curve[2];
};

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

static void comp_clear(composite *c);

static void term_free(rdp_term *t)
{
    dpa_pair_free(t->pair);
    if (t->comp) {
        comp_clear(t->comp);
        free(t->comp);
    }
}

static void comp_clear(composite *c)
{
    for (size_t i = 0; i < c->n; i++) term_free(&c->t[i]);
    free(c->t);
    free(c->logm);
    memset(c, 0, sizeof *c);
}

static dpa_status comp_push(composite *c, rdp_term t, dpa_error *err)
{
    if (c->n == c->cap) {
        size_t nc = c->cap ? 2 * c->cap : 8;
        rdp_term *nv = realloc(c->t, nc * sizeof *nv);
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

static void invalidate(dpa_rdp *a)
{
    for (int d = 0; d < 2; d++) {
        free(a->curve[d]);
        a->curve[d] = NULL;
    }
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
    invalidate(a);
    free(a->orders);
    free(a);
}

static int count_ok(double c) { return c >= 0 && isfinite(c); }

static dpa_status add_pair_to(composite *c, const dpa_pair *p, double count, int *asym, dpa_error *err)
{
    if (!p) return dpa_error_set(err, DPA_EINVAL, "RDP accountant: NULL pair");
    if (!count_ok(count))
        return dpa_error_set(err, DPA_EINVAL, "RDP accountant: count must be finite and >= 0, got %g", count);
    /* refuse now (not at the first query) what cannot be bounded */
    double d;
    dpa_status st = dpa_rdp_divergence(p, 2.0, 0, &d, err);
    if (!st && !p->symmetric) st = dpa_rdp_divergence(p, 2.0, 1, &d, err);
    if (st) return st;
    dpa_pair *cp = dpa_pair_copy(p, err);
    if (!cp) return err ? err->status : DPA_ENOMEM;
    if (!cp->symmetric && asym) *asym = 1;
    return comp_push(c, (rdp_term){T_PAIR, count, cp, 0, 0, NULL}, err);
}

dpa_status dpa_rdp_add_pair(dpa_rdp *a, const dpa_pair *p, double count, dpa_error *err)
{
    invalidate(a);
    return add_pair_to(&a->top, p, count, &a->asym, err);
}

dpa_status dpa_rdp_add_zcdp(dpa_rdp *a, double rho, double xi, double count, dpa_error *err)
{
    if (!(rho >= 0 && isfinite(rho)) || !(xi >= 0 && isfinite(xi)) || !count_ok(count))
        return dpa_error_set(err, DPA_EINVAL,
                             "RDP accountant: zcdp needs finite rho >= 0, xi >= 0 and count >= 0 (got %g, %g, %g)",
                             rho, xi, count);
    invalidate(a);
    return comp_push(&a->top, (rdp_term){T_ZCDP, count, NULL, rho, xi, NULL}, err);
}

static dpa_status add_leafset_to(composite *c, const dpa_leafset *s, int *asym, int depth, dpa_error *err)
{
    if (depth > 64) return dpa_error_set(err, DPA_EUNSUPPORTED, "RDP accountant: subsampling nested too deeply");
    for (size_t i = 0; i < s->n; i++) {
        const dpa_leaf *l = &s->v[i];
        dpa_status st;
        if (l->zcdp) {
            /* a zcdp leaf (rho = par[0]); never inside a subsampled
             * composition (src/acct/leaves.c refuses that) */
            if (!count_ok(l->count) || !(l->par[0] >= 0 && isfinite(l->par[0])))
                return dpa_error_set(err, DPA_EINVAL, "RDP accountant: zcdp leaf rho %g, count %g", l->par[0], l->count);
            st = comp_push(c, (rdp_term){T_ZCDP, l->count, NULL, l->par[0], 0, NULL}, err);
        } else if (l->pair && depth == 0 && l->kind == DPA_EV_DISCRETE_GAUSSIAN && isnan(l->rate)) {
            /* the discrete Gaussian's atom list is truncated (its pair has
             * slack), so its exact divergence cannot be certified; it is
             * rho-zCDP with rho = s^2 / (2 sigma^2) (Canonne-Kamath-Steinke
             * 2020, Prop 5; par = sigma, sensitivity), rounded up: two
             * products and a quotient, 4 u relative */
            double r = l->par[1] / l->par[0];
            double rho = 0.5 * r * r * (1 + 4 * DBL_EPSILON);
            if (!count_ok(l->count) || !isfinite(rho))
                return dpa_error_set(err, DPA_EINVAL, "RDP accountant: discrete_gaussian rho %g, count %g", rho, l->count);
            st = comp_push(c, (rdp_term){T_ZCDP, l->count, NULL, rho, 0, NULL}, err);
        } else if (l->pair) {
            st = add_pair_to(c, l->pair, l->count, asym, err);
        } else if (l->inner) {
            if (!(l->rate > 0 && l->rate <= 1))
                return dpa_error_set(err, DPA_EINVAL, "RDP accountant: composite leaf with rate %g", l->rate);
            if (!count_ok(l->count))
                return dpa_error_set(err, DPA_EINVAL, "RDP accountant: count %g", l->count);
            composite *in = calloc(1, sizeof *in);
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
            st = comp_push(c, (rdp_term){T_COMPOSITE, l->count, NULL, 0, 0, in}, err);
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
    invalidate(a);
    return add_leafset_to(&a->top, s, &a->asym, 0, err);
}

size_t dpa_rdp_norders(const dpa_rdp *a) { return a->n; }
const double *dpa_rdp_orders(const dpa_rdp *a) { return a->orders; }

/* ---------------- evaluation ---------------- */

static dpa_status comp_total(composite *c, double alpha, int dir, double *out, dpa_error *err);

/* log C(n, k) for integers 0 <= k <= n and its absolute error */
static double log_choose(double n, double k, double *e)
{
    int s;
    double a = lgamma_r(n + 1, &s), b = lgamma_r(k + 1, &s), d = lgamma_r(n - k + 1, &s);
    /* 16u (|lgamma| + 1) per call: see rdp_subsampled.c, RDP_LGAMMA_ERR */
    *e = 16 * U * (fabs(a) + fabs(b) + fabs(d) + 3);
    return a - b - d;
}

/* Upper bound on log M_k = (k-1) D_k(P||Q) of c's inner composition
 * (k >= 2), cached. */
static dpa_status comp_logm(composite *c, size_t k, double *out, dpa_error *err)
{
    if (k >= c->nlogm) {
        size_t nn = k + 1 > 2 * c->nlogm ? k + 1 : 2 * c->nlogm;
        double *v = realloc(c->logm, nn * sizeof *v);
        if (!v) return dpa_error_set(err, DPA_ENOMEM, "out of memory");
        for (size_t i = c->nlogm; i < nn; i++) v[i] = NAN;
        c->logm = v;
        c->nlogm = nn;
    }
    if (isnan(c->logm[k])) {
        double d;
        dpa_status st = comp_total(c, (double)k, 0, &d, err);
        if (st) return st;
        c->logm[k] = d == INFINITY ? INFINITY : dpa_rdp_up(d * (double)(k - 1), 2);
    }
    *out = c->logm[k];
    return DPA_OK;
}

/* log E of the Poisson remove pair of c at integer order n >= 2 */
static dpa_status comp_remove_int(composite *c, double n, double *out, dpa_error *err)
{
    double q = c->rate, lq = log(q), l1q = log1p(-q);
    dpa_rdp_acc acc;
    dpa_rdp_acc_init(&acc);
    for (double k = 2; k <= n; k++) {
        double lm;
        dpa_status st = comp_logm(c, (size_t)k, &lm, err);
        if (st || lm == INFINITY) {
            dpa_rdp_acc_free(&acc);
            if (!st) *out = INFINITY;
            return st;
        }
        if (!(lm > 0)) continue; /* M_k - 1 <= 0 */
        double ec, lc = log_choose(n, k, &ec);
        double lx = lm > 1 ? lm + dpa_log1mexp(-lm) : log(expm1(lm)); /* log(M_k - 1) */
        double e = ec + 4 * U * (fabs(lc) + fabs(k * lq) + fabs((n - k) * l1q) + fabs(lx) + lm + 2) +
                   k * U * fabs(lq) + (n - k) * 2 * U * fabs(l1q);
        dpa_rdp_acc_add(&acc, lc + k * lq + (n - k) * l1q + lx, 1, expm1(e));
    }
    double l = dpa_rdp_acc_log_upper(&acc, -INFINITY);
    dpa_rdp_acc_free(&acc);
    if (isnan(l)) return dpa_error_set(err, DPA_ENOMEM, "out of memory");
    double le = l == -INFINITY ? 0.0 : (l > 30 ? dpa_log_add_exp(0.0, l) : log1p(exp(l)));
    *out = le * (1 + 4 * U);
    return DPA_OK;
}

/* log E, Poisson remove direction of c, any alpha > 1 (chord between the
 * integer orders for fractional alpha) */
static dpa_status comp_remove(composite *c, double alpha, double *out, dpa_error *err)
{
    if (c->rate == 1) {
        /* no subsampling: the inner composition itself */
        double d;
        dpa_status st = comp_total(c, alpha, 0, &d, err);
        if (st) return st;
        *out = d == INFINITY ? INFINITY : dpa_rdp_up(d * (alpha - 1), 2);
        return DPA_OK;
    }
    if (alpha > RDP_COMPOSITE_MAX_ORDER)
        return dpa_error_set(err, DPA_EUNSUPPORTED,
                             "RDP accountant: order %g above %g for a subsampled composition", alpha,
                             RDP_COMPOSITE_MAX_ORDER);
    double lo = floor(alpha), hi = ceil(alpha);
    double llo = 0, lhi;
    dpa_status st;
    if (lo == hi) return comp_remove_int(c, alpha, out, err);
    if (lo >= 2) {
        st = comp_remove_int(c, lo, &llo, err);
        if (st) return st;
    }
    st = comp_remove_int(c, hi, &lhi, err);
    if (st) return st;
    if (llo == INFINITY || lhi == INFINITY) {
        *out = INFINITY;
        return DPA_OK;
    }
    double w = alpha - lo; /* weight of the upper end; lambda = alpha - 1 */
    *out = dpa_rdp_up((1 - w) * llo + w * lhi, 6) + 4 * U * (llo + lhi);
    return DPA_OK;
}

/* log E, Poisson add direction of c (degree-2 Taylor bound) */
static dpa_status comp_add(composite *c, double alpha, double *out, dpa_error *err)
{
    double q = c->rate, beta = alpha - 1;
    if (q == 1) {
        /* the inner composition reversed: the inner terms' add direction */
        double d;
        dpa_status st = comp_total(c, alpha, 1, &d, err);
        if (st) return st;
        *out = d == INFINITY ? INFINITY : dpa_rdp_up(d * beta, 2);
        return DPA_OK;
    }
    double crude = -beta * log1p(-q); /* (1-q)^{-beta} */
    crude += 4 * U * (fabs(crude) + 1);
    double lm2;
    dpa_status st = comp_logm(c, 2, &lm2, err);
    if (st) return st;
    if (lm2 == INFINITY) {
        *out = crude;
        return DPA_OK;
    }
    double rho = q / (1 - q);
    double v1 = -beta * rho, v2 = 0.5 * beta * (beta + 1) * rho * rho * exp(lm2);
    double v = v1 + v2;
    double ev = 8 * U * (fabs(v1) + fabs(v2) * (1 + lm2)) + 4 * U;
    if (!(v + ev > -1)) {
        *out = crude;
        return DPA_OK;
    }
    double l = -beta * log1p(-q) + log1p(v + ev);
    l += 4 * U * (fabs(beta * log1p(-q)) + fabs(log1p(v + ev)) + 1);
    *out = fmin(l, crude);
    return DPA_OK;
}

/* D_alpha of one term in direction dir (0 remove, 1 add) */
static dpa_status term_rdp(rdp_term *t, double alpha, int dir, double *out, dpa_error *err)
{
    switch (t->kind) {
    case T_PAIR:
        return dpa_rdp_divergence(t->pair, alpha, dir && !t->pair->symmetric, out, err);
    case T_ZCDP:
        *out = dpa_rdp_zcdp(t->rho, t->xi, alpha);
        return DPA_OK;
    case T_COMPOSITE: {
        composite *c = t->comp;
        double l, l2;
        dpa_status st;
        if (c->sample) {
            st = comp_remove(c, alpha, &l, err);
            if (!st) st = comp_add(c, alpha, &l2, err);
            if (st) return st;
            if (l == INFINITY || l2 == INFINITY) {
                l = INFINITY;
            } else {
                /* E_S <= E_R + E_R' - 1 */
                double s = expm1(fmax(l, 0.0)) + expm1(fmax(l2, 0.0));
                l = log1p(s) * (1 + 4 * U);
            }
        } else {
            st = dir ? comp_add(c, alpha, &l, err) : comp_remove(c, alpha, &l, err);
            if (st) return st;
        }
        if (l == INFINITY) *out = INFINITY;
        else *out = l > 0 ? dpa_rdp_up(l / (alpha - 1), 4) : 0.0;
        return DPA_OK;
    }
    }
    return dpa_error_set(err, DPA_EINVAL, "RDP accountant: unknown term");
}

static dpa_status comp_total(composite *c, double alpha, int dir, double *out, dpa_error *err)
{
    double s = 0;
    for (size_t i = 0; i < c->n; i++) {
        if (c->t[i].count == 0) continue;
        double d;
        dpa_status st = term_rdp(&c->t[i], alpha, dir, &d, err);
        if (st) return st;
        if (d == INFINITY) {
            *out = INFINITY;
            return DPA_OK;
        }
        s += c->t[i].count * d;
    }
    /* n products and n additions of non-negative values: relative (2n + 2) u */
    *out = dpa_rdp_up(s, 2.0 * (double)c->n + 4);
    return DPA_OK;
}

dpa_status dpa_rdp_eval(dpa_rdp *a, double alpha, int dir, double *out, dpa_error *err)
{
    if (!(alpha > 1 && isfinite(alpha)))
        return dpa_error_set(err, DPA_EINVAL, "RDP accountant: order %g must be finite and > 1", alpha);
    return comp_total(&a->top, alpha, a->asym ? dir : 0, out, err);
}

dpa_status dpa_rdp_curve(dpa_rdp *a, int dir, double *out, dpa_error *err)
{
    int d = a->asym ? (dir ? 1 : 0) : 0;
    if (!a->curve[d]) {
        double *v = malloc(a->n * sizeof *v);
        if (!v) return dpa_error_set(err, DPA_ENOMEM, "out of memory");
        for (size_t i = 0; i < a->n; i++) {
            dpa_status st = comp_total(&a->top, a->orders[i], d, &v[i], err);
            if (st) {
                free(v);
                return st;
            }
        }
        a->curve[d] = v;
    }
    if (out) memcpy(out, a->curve[d], a->n * sizeof *out);
    return DPA_OK;
}

/* ---------------- queries ---------------- */

typedef struct {
    int want_eps; /* 1: eps(delta), 0: delta(eps) */
    double x;     /* delta or eps */
    dpa_rdp_conversion conv;
} query;

static double convert(const query *qy, dpa_rdp_conversion c, double alpha, double r)
{
    return qy->want_eps ? dpa_rdp_eps_from(c, alpha, r, qy->x) : dpa_rdp_delta_from(c, alpha, r, qy->x);
}

/* Golden-section refinement over alpha in (lo, hi) of conversion c;
 * returns the best value found (and its order) or best_in. */
static dpa_status refine(dpa_rdp *a, int dir, const query *qy, dpa_rdp_conversion c, double lo, double hi,
                         double *best, double *best_alpha, dpa_error *err)
{
    double g = 0.6180339887498949;
    double x1 = hi - g * (hi - lo), x2 = lo + g * (hi - lo), r, f1, f2;
    dpa_status st;
    if ((st = dpa_rdp_eval(a, x1, dir, &r, err))) return st;
    f1 = convert(qy, c, x1, r);
    if ((st = dpa_rdp_eval(a, x2, dir, &r, err))) return st;
    f2 = convert(qy, c, x2, r);
    for (int i = 0; i < RDP_REFINE_STEPS; i++) {
        if (f1 < *best) { *best = f1; *best_alpha = x1; }
        if (f2 < *best) { *best = f2; *best_alpha = x2; }
        if (f1 <= f2) {
            hi = x2; x2 = x1; f2 = f1;
            x1 = hi - g * (hi - lo);
            if ((st = dpa_rdp_eval(a, x1, dir, &r, err))) return st;
            f1 = convert(qy, c, x1, r);
        } else {
            lo = x1; x1 = x2; f1 = f2;
            x2 = lo + g * (hi - lo);
            if ((st = dpa_rdp_eval(a, x2, dir, &r, err))) return st;
            f2 = convert(qy, c, x2, r);
        }
    }
    if (f1 < *best) { *best = f1; *best_alpha = x1; }
    if (f2 < *best) { *best = f2; *best_alpha = x2; }
    return DPA_OK;
}

static dpa_status query_dir(dpa_rdp *a, int dir, const query *qy, double *value, double *alpha,
                            double *grid_value, dpa_error *err)
{
    dpa_status st = dpa_rdp_curve(a, dir, NULL, err);
    if (st) return st;
    const double *cur = a->curve[a->asym ? dir : 0];
    size_t n = a->n, bi = 0;
    /* the improved (or classical) conversion on the whole grid */
    dpa_rdp_conversion grid_conv = qy->conv == DPA_RDP_OPTIMAL ? DPA_RDP_IMPROVED : qy->conv;
    double best = INFINITY;
    for (size_t i = 0; i < n; i++) {
        double v = convert(qy, grid_conv, a->orders[i], cur[i]);
        if (v < best) {
            best = v;
            bi = i;
        }
    }
    double balpha = a->orders[bi];
    if (best == INFINITY || (!qy->want_eps && best == 1.0 && cur[bi] == INFINITY)) {
        *value = qy->want_eps ? INFINITY : 1.0;
        *alpha = balpha;
        *grid_value = *value;
        return DPA_OK;
    }
    /* continuous refinement between the neighbours of the best grid order */
    double lo = bi > 0 ? a->orders[bi - 1] : 1 + 0.5 * (a->orders[0] - 1);
    double hi = bi + 1 < n ? a->orders[bi + 1] : a->orders[bi] * 1.5;
    double rbest = best, ralpha = balpha;
    st = refine(a, dir, qy, grid_conv, lo, hi, &rbest, &ralpha, err);
    if (st) return st;
    if (qy->conv != DPA_RDP_OPTIMAL) {
        *grid_value = best;
        *value = rbest;
        *alpha = ralpha;
        return DPA_OK;
    }
    /* optimal: the window of grid orders around the improved optimum, and
     * the refined order */
    double obest = best, oalpha = balpha;
    size_t i0 = bi > RDP_OPT_WINDOW ? bi - RDP_OPT_WINDOW : 0, i1 = bi + RDP_OPT_WINDOW < n ? bi + RDP_OPT_WINDOW : n - 1;
    for (size_t i = i0; i <= i1; i++) {
        double v = convert(qy, DPA_RDP_OPTIMAL, a->orders[i], cur[i]);
        if (v < obest) {
            obest = v;
            oalpha = a->orders[i];
        }
    }
    *grid_value = obest;
    double r;
    if ((st = dpa_rdp_eval(a, ralpha, dir, &r, err))) return st;
    double v = convert(qy, DPA_RDP_OPTIMAL, ralpha, r);
    v = fmin(v, rbest);
    if (v < obest) {
        obest = v;
        oalpha = ralpha;
    }
    *value = obest;
    *alpha = oalpha;
    return DPA_OK;
}

static dpa_status run_query(dpa_rdp *a, const query *qy, dpa_rdp_result *out, dpa_error *err)
{
    memset(out, 0, sizeof *out);
    double gv[2];
    for (int d = 0; d < 2; d++) {
        if (d == 1 && !a->asym) {
            out->value_dir[1] = out->value_dir[0];
            out->alpha_dir[1] = out->alpha_dir[0];
            gv[1] = gv[0];
            break;
        }
        dpa_status st = query_dir(a, d, qy, &out->value_dir[d], &out->alpha_dir[d], &gv[d], err);
        if (st) return st;
    }
    out->binding = out->value_dir[1] > out->value_dir[0] ? 1 : 0;
    out->value = out->value_dir[out->binding];
    out->grid_value = fmax(gv[0], gv[1]);
    return DPA_OK;
}

dpa_status dpa_rdp_epsilon(dpa_rdp *a, double delta, dpa_rdp_conversion c, dpa_rdp_result *out, dpa_error *err)
{
    if (!a || !out) return dpa_error_set(err, DPA_EINVAL, "RDP accountant: NULL argument");
    if (!(delta > 0 && delta < 1))
        return dpa_error_set(err, DPA_EINVAL, "RDP accountant: delta must be in (0, 1), got %g", delta);
    if (!dpa_rdp_conversion_name(c)) return dpa_error_set(err, DPA_EINVAL, "RDP accountant: unknown conversion");
    query qy = {1, delta, c};
    return run_query(a, &qy, out, err);
}

dpa_status dpa_rdp_delta(dpa_rdp *a, double eps, dpa_rdp_conversion c, dpa_rdp_result *out, dpa_error *err)
{
    if (!a || !out) return dpa_error_set(err, DPA_EINVAL, "RDP accountant: NULL argument");
    if (!isfinite(eps)) return dpa_error_set(err, DPA_EINVAL, "RDP accountant: eps must be finite, got %g", eps);
    if (!dpa_rdp_conversion_name(c)) return dpa_error_set(err, DPA_EINVAL, "RDP accountant: unknown conversion");
    query qy = {0, eps, c};
    return run_query(a, &qy, out, err);
}

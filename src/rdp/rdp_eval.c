/* The RDP accountant's evaluation: D_alpha of each term (pairs, zCDP curves,
 * the sparse vector technique, repeat-and-select, composite leaves) and of
 * the composition (Mironov 2017, Prop 1: count_i * D_alpha(term_i) add),
 * per order and direction, through a cache of (alpha, direction) -> RDP.
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
#include <stdint.h>
#include <string.h>
#include "dpacct/event.h"
#include "rdp/rdp.h"
#include "rdp/rdp_acct.h"
#include "num/num.h"

#define U DPA_UNIT_ROUNDOFF

/* Evaluation cache: initial slots, and the entry count at which it is
 * emptied instead of grown (memory stays bounded over many queries). */
#define RDP_CACHE_INIT 64
#define RDP_CACHE_MAX 65536
/* Largest integer order for composite leaves (O(alpha) inner moments). */
#define RDP_COMPOSITE_MAX_ORDER 1e6

/* x rounded up, with an absolute allowance for the terms it was summed from */
static double up_from(long double x, long double mag)
{
    return dpa_ld_up(x + 64 * LDBL_EPSILON * mag);
}

/* log cosh(x) in long double, no overflow */
static long double log_cosh(long double x)
{
    x = fabsl(x);
    return x + log1pl(expl(-2 * x)) - logl(2.0L);
}

/* D_alpha of the sparse vector technique (autodp rdp_bank's RDP_svt_laplace
 * and RDP_gaussian_svt_cgreater1; Zhu & Wang 2020), alpha > 1:
 *  Laplace, b = scale / sensitivity, t = (c + 1) / b, e1 the Laplace
 *  mechanism's D_alpha at scale b (Mironov 2017, Prop 6):
 *    min{ c / b + e1, c log(k / c) / (alpha - 1) + (c + 1) e1,
 *         alpha t^2 / 2, log[(sinh(alpha t) - sinh((alpha - 1) t)) / sinh t] / (alpha - 1) },
 *  the last as [log cosh((alpha - 1/2) t) - log cosh(t / 2)] / (alpha - 1)
 *  (sinh a - sinh b = 2 cosh((a + b)/2) sinh((a - b)/2));
 *  Gaussian, c > 1: c log(k / c) / (alpha - 1) + alpha (c + 1) / (2 sigma^2);
 *  c = 1: log k / (alpha - 1) + (5/3) alpha / sigma^2 (Thm 8, query noise
 *  sqrt(3) sigma).
 * Each candidate is evaluated in long double and rounded up with an
 * allowance for its terms' magnitudes. */
static double svt_rdp(const dpa_rdp_term *t, double alpha)
{
    long double a = alpha, b = t->fpar[0], k = t->fpar[1], c = t->fpar[2];
    long double sel = c * logl(k / c) / (a - 1);
    if (t->fn == DPA_EV_GAUSSIAN_SVT) {
        /* c = 1: Zhu & Wang 2020 Thm 8 (autodp's RDP_gaussian_svt_c1, general
         * case) with threshold noise sigma and query noise sqrt(3) sigma:
         * log k / (a - 1) + a / sigma^2 + 2 a / (3 sigma^2); the c > 1 form
         * below is autodp's RDP_gaussian_svt_cgreater1 */
        long double g = c == 1 ? a / (b * b) + 2 * a / (3 * b * b) : a * (c + 1) / (2 * b * b);
        return up_from(sel + g, sel + g);
    }
    /* e1 = log(a/(2a-1) e^{(a-1)/b} + (a-1)/(2a-1) e^{-a/b}) / (a - 1) */
    long double x1 = logl(a / (2 * a - 1)) + (a - 1) / b, x2 = logl((a - 1) / (2 * a - 1)) - a / b;
    long double mx = fmaxl(x1, x2), e1 = (mx + log1pl(expl(fminl(x1, x2) - mx))) / (a - 1);
    long double e1m = (fabsl(mx) + 1) / (a - 1);
    long double tt = (c + 1) / b;
    double best = up_from(c / b + e1, c / b + e1m);
    best = fmin(best, up_from(sel + (c + 1) * e1, sel + (c + 1) * e1m));
    best = fmin(best, up_from(a * tt * tt / 2, a * tt * tt / 2));
    long double lc1 = log_cosh((a - 0.5L) * tt), lc0 = log_cosh(tt / 2);
    best = fmin(best, up_from((lc1 - lc0) / (a - 1), (lc1 + lc0 + 1) / (a - 1)));
    return best;
}

/* The repeated event's D at alpha, both directions (the bound is applied to
 * the larger: Papernot & Steinke's theorems are stated for RDP, a property
 * of every ordered pair of neighbours) */
static dpa_status sub_rdp(dpa_rdp_term *t, double alpha, double *out, dpa_error *err)
{
    double r0, r1;
    dpa_status st = dpa_rdp_eval(t->sub, alpha, 0, &r0, err);
    if (!st) st = dpa_rdp_eval(t->sub, alpha, 1, &r1, err);
    if (!st) *out = fmax(r0, r1);
    return st;
}

/* D_alpha of repeat-and-select (Papernot & Steinke 2022; dp_accounting's
 * _compute_rdp_repeat_and_select), alpha > 1, e(.) the repeated event's:
 *  truncated negative binomial (Thm 2): for every order l > 1
 *    e(alpha) + (1 + shape) [(1 - 1/l) e(l) + log(1/gamma) / l] + log(mean) / (alpha - 1),
 *  minimised over the sub-accountant's grid orders l (any l is valid);
 *  Poisson (Thm 6): e(alpha) + mean delta(e^) + log(mean) / (alpha - 1), with
 *  delta(e^) an upper bound on the event's delta at e^ = log(1 + 1/(alpha - 1))
 *  (rounded down; delta decreases in eps) from the improved conversion at
 *  every grid order, both directions. */
static dpa_status repsel_rdp(dpa_rdp_term *t, double alpha, double *out, dpa_error *err)
{
    double mean = t->fpar[0], shape = t->fpar[1], e;
    dpa_status st = sub_rdp(t, alpha, &e, err);
    if (st) return st;
    if (e == INFINITY) {
        *out = INFINITY;
        return DPA_OK;
    }
    long double lm = logl(mean) / (alpha - 1);
    size_t n = dpa_rdp_norders(t->sub);
    const double *ord = dpa_rdp_orders(t->sub);
    if (shape == DPA_REPSEL_POISSON) {
        double eh = nextafter((double)log1pl(1.0L / (alpha - 1)), -INFINITY), dh = 1;
        for (size_t i = 0; i < n && dh > 0; i++) {
            for (int dir = 0; dir < 2; dir++) {
                double r;
                st = dpa_rdp_eval(t->sub, ord[i], dir, &r, err);
                if (st) return st;
                /* the larger of the two directions' bounds at this order */
                double d = dpa_rdp_delta_from(DPA_RDP_IMPROVED, ord[i], r, eh);
                if (dir == 0) t->fpar[3] = d;
                else dh = fmin(dh, fmax(d, t->fpar[3]));
            }
        }
        long double md = (long double)mean * dh;
        *out = up_from(e + md + lm, e + md + lm);
        return DPA_OK;
    }
    if (isnan(t->fpar[3])) { /* the constant term, once */
        double best = INFINITY;
        for (size_t i = 0; i < n; i++) {
            double r;
            st = sub_rdp(t, ord[i], &r, err);
            if (st) return st;
            long double v = (1 - 1.0L / ord[i]) * r + t->fpar[2] / ord[i];
            best = fmin(best, up_from(v, v));
        }
        t->fpar[3] = up_from((1 + (long double)shape) * best, (1 + (long double)shape) * best);
    }
    *out = up_from(e + t->fpar[3] + lm, e + t->fpar[3] + lm);
    return DPA_OK;
}

/* ---------------- evaluation ---------------- */

static dpa_status comp_total(dpa_rdp_comp *c, double alpha, int dir, double *out, dpa_error *err);

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
static dpa_status comp_logm(dpa_rdp_comp *c, size_t k, double *out, dpa_error *err)
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
static dpa_status comp_remove_int(dpa_rdp_comp *c, double n, double *out, dpa_error *err)
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
static dpa_status comp_remove(dpa_rdp_comp *c, double alpha, double *out, dpa_error *err)
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
static dpa_status comp_add(dpa_rdp_comp *c, double alpha, double *out, dpa_error *err)
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
static dpa_status term_rdp(dpa_rdp_term *t, double alpha, int dir, double *out, dpa_error *err)
{
    switch (t->kind) {
    case DPA_RDP_T_PAIR: {
        dpa_status st = DPA_OK;
        if (alpha == 2.0 && !isnan(t->d2[dir ? 1 : 0])) *out = t->d2[dir ? 1 : 0];
        else st = dpa_rdp_divergence(t->pair, alpha, dir && !t->pair->symmetric, out, err);
        /* a zCDP cap (rho > 0: bounded-range leaves, see add_leafset_to in rdp_acct.c) */
        if (!st && t->rho > 0) *out = fmin(*out, dpa_rdp_zcdp(t->rho, 0, alpha));
        return st;
    }
    case DPA_RDP_T_ZCDP:
        *out = dpa_rdp_zcdp(t->rho, t->xi, alpha);
        return DPA_OK;
    case DPA_RDP_T_COMPOSITE: {
        dpa_rdp_comp *c = t->comp;
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
    case DPA_RDP_T_SVT:
        (void)dir; /* the SVT bounds hold for every ordered pair of neighbours */
        *out = svt_rdp(t, alpha);
        return DPA_OK;
    case DPA_RDP_T_REPSEL:
        return repsel_rdp(t, alpha, out, err);
    case DPA_RDP_T_DG: {
        /* D_alpha <= (upper bound on log E(theta')) / (alpha - 1), theta' =
         * alpha - 1 (remove) or -alpha (add); E >= 1 above order 1 */
        double lo, hi;
        int r = dpa_renyi_dg_log_e(t->fpar[0], t->fpar[1], t->fpar[2], t->fpar[3], t->fn, dir ? -alpha : alpha - 1,
                                   &lo, &hi);
        /* r < 0: the sum would exceed its 4e6 terms at this order (large
         * sigma or order): +inf, a valid bound that the queries pass over */
        *out = r != 0 ? INFINITY : hi > 0 ? dpa_rdp_up(hi / (alpha - 1), 4) : 0.0;
        return DPA_OK;
    }
    }
    return dpa_error_set(err, DPA_EINVAL, "RDP accountant: unknown term");
}

static dpa_status comp_total(dpa_rdp_comp *c, double alpha, int dir, double *out, dpa_error *err)
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

/* ---------------- the evaluation cache ---------------- */

static size_t cache_slot(double alpha, int d, size_t cap)
{
    uint64_t u;
    memcpy(&u, &alpha, sizeof u);
    u = (u ^ (uint64_t)(unsigned)d) * 0x9E3779B97F4A7C15ULL; /* Fibonacci hashing */
    return (size_t)(u >> 32) & (cap - 1);
}

static const dpa_rdp_cache_ent *cache_find(const dpa_rdp *a, double alpha, int d)
{
    if (!a->cache) return NULL;
    for (size_t i = cache_slot(alpha, d, a->ccap);; i = (i + 1) & (a->ccap - 1)) {
        const dpa_rdp_cache_ent *e = &a->cache[i];
        if (e->d < 0) return NULL;
        if (e->d == d && e->alpha == alpha) return e;
    }
}

/* insert (alpha, d) -> val; a failed allocation only loses the entry */
static void cache_put(dpa_rdp *a, double alpha, int d, double val)
{
    if (a->ccount + 1 >= RDP_CACHE_MAX) dpa_rdp_invalidate(a);
    if (2 * (a->ccount + 1) > a->ccap) {
        size_t nc = a->ccap ? 2 * a->ccap : RDP_CACHE_INIT;
        dpa_rdp_cache_ent *nv = malloc(nc * sizeof *nv);
        if (!nv) return;
        for (size_t i = 0; i < nc; i++) nv[i].d = -1;
        for (size_t i = 0; i < a->ccap; i++) {
            if (a->cache[i].d < 0) continue;
            size_t j = cache_slot(a->cache[i].alpha, a->cache[i].d, nc);
            while (nv[j].d >= 0) j = (j + 1) & (nc - 1);
            nv[j] = a->cache[i];
        }
        free(a->cache);
        a->cache = nv;
        a->ccap = nc;
    }
    size_t j = cache_slot(alpha, d, a->ccap);
    while (a->cache[j].d >= 0) j = (j + 1) & (a->ccap - 1);
    a->cache[j] = (dpa_rdp_cache_ent){alpha, val, d};
    a->ccount++;
}

/* the composition's RDP at alpha in curve d (0, or 1 for the add direction
 * of an asymmetric composition), computed once */
dpa_status dpa_rdp_at(dpa_rdp *a, double alpha, int d, double *out, dpa_error *err)
{
    const dpa_rdp_cache_ent *e = cache_find(a, alpha, d);
    if (e) {
        *out = e->val;
        return DPA_OK;
    }
    dpa_status st = comp_total(&a->top, alpha, d, out, err);
    if (!st) cache_put(a, alpha, d, *out);
    return st;
}

dpa_status dpa_rdp_eval(dpa_rdp *a, double alpha, int dir, double *out, dpa_error *err)
{
    if (!(alpha > 1 && isfinite(alpha)))
        return dpa_error_set(err, DPA_EINVAL, "RDP accountant: order %g must be finite and > 1", alpha);
    return dpa_rdp_at(a, alpha, a->asym && dir ? 1 : 0, out, err);
}

dpa_status dpa_rdp_curve(dpa_rdp *a, int dir, double *out, dpa_error *err)
{
    int d = a->asym && dir ? 1 : 0;
    for (size_t i = 0; i < a->n; i++) {
        double v;
        dpa_status st = dpa_rdp_at(a, a->orders[i], d, &v, err);
        if (st) return st;
        if (out) out[i] = v;
    }
    return DPA_OK;
}

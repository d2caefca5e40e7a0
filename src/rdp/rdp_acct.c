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
 *
 * Queries (docs/rdp.md §3.1).  Per direction: the best grid order bi for
 * the improved (or classical) conversion, then Brent's method over real
 * alpha between bi's grid neighbours, then (optimal conversion) the
 * optimal conversion at the grid orders bi - 4 .. bi + 4 and at the refined
 * order.  The composition's curve is evaluated lazily, only at the orders
 * these steps visit, through a cache of (alpha, direction) -> RDP:
 *  - bi is found by a galloping binary search from a zCDP-style guess on the
 *    predicate key(i) <= key(i+1), which is false then true along the grid
 *    when the key is unimodal in alpha.  For pairs and zCDP terms it is: the
 *    composition's log E(lambda), lambda = alpha - 1, is convex with
 *    log E(0) = 0, and eps_classical = (L + c)/lambda and log of the
 *    classical or improved delta are quasi-convex in lambda for every convex
 *    L (docs/rdp.md §3.1).  Composite terms are bounded by chords and Taylor
 *    bounds that need not be convex, and short custom order lists are cheap:
 *    both are scanned in full, as before;
 *  - delta queries search the log of the delta bound before it is capped at
 *    1 (the capped value has plateaus);
 *  - an order of the optimal window is skipped when a lower bound on what
 *    the optimal conversion can give there (dpa_rdp_opt_eps_lower/_delta_lower,
 *    from binary pairs) is not below the best value found: it could not
 *    change the result.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include "dpacct/event.h"
#include "rdp/rdp.h"
#include "num/num.h"

#define U DPA_UNIT_ROUNDOFF

/* Brent's refinement over real alpha between two grid neighbours: it stops
 * once its bracket is within ~4e-6 of the neighbours' distance around the
 * best point.  Near the minimum the key moves by f'' (d alpha)^2/2, and f''
 * is at most of the order of f/(alpha - 1)^2 while the grid spacing is at
 * most alpha - 1 (0.01 at 1.01, ~(alpha - 1)/20 above 2), so the value found
 * is within ~1e-12 relative of the bracket's minimum, far inside the 1e-9
 * this module promises against the former golden-section search (which
 * stopped at 0.618^30 ~ 5e-7 of the distance after 32 evaluations; Brent
 * takes ~10).  The cap is never reached in practice. */
#define RDP_REFINE_ATOL 1e-6
#define RDP_REFINE_MAXIT 200
/* Golden-section steps of the refinement for curves with composite terms
 * (the former search, kept for them). */
#define RDP_GOLDEN_STEPS 30
/* The local search of the optimal conversion around the refined order:
 * first step and tolerance (fractions of the grid neighbours' distance; the
 * step is doubled while the value falls) and an evaluation cap.  Near its
 * minimum the value moves by f'' (d alpha)^2/2; with d alpha below 1e-5 of
 * the neighbours' distance that is below ~1e-12 relative on every grid
 * spacing (f'' scales like f/(alpha - 1)^2 and the spacing like
 * (alpha - 1)/20 or less), while the values themselves carry ~1e-12
 * relative noise from the conversion's own search, which a tighter
 * tolerance would only chase.  Any point evaluated is a valid bound.  When
 * the three points around the refined order do not bracket a minimum, a
 * bracket search and at most RDP_OPT_LOCAL_MAXIT Brent steps follow. */
#define RDP_OPT_LOCAL_STEP 1e-3
#define RDP_OPT_LOCAL_TRUST 4.0
#define RDP_OPT_LOCAL_ATOL 1e-5
#define RDP_OPT_LOCAL_MAXIT 8
/* Steps of the search's starting guess (each one curve evaluation, at a
 * grid order the search then reuses). */
#define RDP_GUESS_STEPS 4
#define RDP_GUESS_RATIO 8.0
/* Order lists at most this long are scanned in full (cheaper than the
 * search's bookkeeping, and exact whatever the curve's shape). */
#define RDP_FULL_SCAN_MAX 24
/* Evaluation cache: initial slots, and the entry count at which it is
 * emptied instead of grown (memory stays bounded over many queries). */
#define RDP_CACHE_INIT 64
#define RDP_CACHE_MAX 65536
/* Grid orders on each side of the improved conversion's best order at
 * which the optimal conversion is evaluated (it is within a few percent of
 * the improved one near the optimum; elsewhere it cannot win). */
#define RDP_OPT_WINDOW 4
/* Largest integer order for composite leaves (O(alpha) inner moments). */
#define RDP_COMPOSITE_MAX_ORDER 1e6

typedef enum { T_PAIR, T_ZCDP, T_COMPOSITE, T_SVT, T_REPSEL } term_kind;

struct composite;

typedef struct rdp_term {
    term_kind kind;
    double count;
    dpa_pair *pair;           /* T_PAIR, owned */
    double rho, xi;           /* T_ZCDP; T_PAIR: rho > 0 caps the pair's RDP at rho alpha */
    struct composite *comp;   /* T_COMPOSITE, owned */
    double d2[2];             /* T_PAIR: D_2 per direction, computed when added (NAN: not known) */
    int fn;                   /* T_SVT: DPA_EV_LAPLACE_SVT or DPA_EV_GAUSSIAN_SVT */
    double fpar[4];           /* T_SVT: scale or sigma, k, c; T_REPSEL: mean, shape, log(1/gamma)
                               * (rounded up), the constant term (NAN until computed) */
    struct dpa_rdp *sub;      /* T_REPSEL, owned: the repeated event's composition */
} rdp_term;

typedef struct composite {
    double rate;
    int sample;
    rdp_term *t;
    size_t n, cap;
    double *logm; /* cached upper bounds on log M_k, k = 0.. */
    size_t nlogm;
} composite;

/* one cached value of the composition's RDP (d = -1: an empty slot) */
typedef struct {
    double alpha, val;
    int d;
} cache_ent;

struct dpa_rdp {
    double *orders;
    size_t n;
    composite top;   /* the terms of the composition (rate, sample unused) */
    int asym;        /* some term differs between the directions */
    int irregular;   /* some composite term: the grid is scanned in full */
    cache_ent *cache; /* (alpha, direction) -> RDP, open addressing */
    size_t ccap, ccount;
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
    dpa_rdp_free(t->sub);
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
    free(a->cache);
    a->cache = NULL;
    a->ccap = a->ccount = 0;
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
    double d[2];
    dpa_status st = dpa_rdp_divergence(p, 2.0, 0, &d[0], err);
    d[1] = d[0];
    if (!st && !p->symmetric) st = dpa_rdp_divergence(p, 2.0, 1, &d[1], err);
    if (st) return st;
    dpa_pair *cp = dpa_pair_copy(p, err);
    if (!cp) return err ? err->status : DPA_ENOMEM;
    if (!cp->symmetric && asym) *asym = 1;
    /* D_2 is kept: the queries start from the curve at order 2 */
    return comp_push(c, (rdp_term){T_PAIR, count, cp, 0, 0, NULL, {d[0], d[1]}, 0, {0, 0, 0, 0}, NULL}, err);
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
    return comp_push(&a->top, (rdp_term){T_ZCDP, count, NULL, rho, xi, NULL, {NAN, NAN}, 0, {0, 0, 0, 0}, NULL}, err);
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
static dpa_status add_rdp_only(composite *c, const dpa_leaf *l, int depth, dpa_error *err)
{
    if (depth > 0 || !count_ok(l->count))
        return dpa_error_set(err, DPA_EINVAL, "RDP accountant: a Renyi-only leaf at depth %d, count %g", depth,
                             l->count);
    rdp_term t = {T_SVT, l->count, NULL, 0, 0, NULL, {NAN, NAN}, l->rdp_only, {l->rpar[0], l->rpar[1], l->rpar[2], NAN},
                  NULL};
    if (l->rdp_only == DPA_EV_REPEAT_AND_SELECT) {
        t.kind = T_REPSEL;
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
static double svt_rdp(const rdp_term *t, double alpha)
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
static dpa_status sub_rdp(rdp_term *t, double alpha, double *out, dpa_error *err)
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
static dpa_status repsel_rdp(rdp_term *t, double alpha, double *out, dpa_error *err)
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

static dpa_status add_leafset_to(composite *c, const dpa_leafset *s, int *asym, int depth, dpa_error *err)
{
    if (depth > 64) return dpa_error_set(err, DPA_EUNSUPPORTED, "RDP accountant: subsampling nested too deeply");
    for (size_t i = 0; i < s->n; i++) {
        const dpa_leaf *l = &s->v[i];
        dpa_status st;
        if (l->rdp_only) {
            st = add_rdp_only(c, l, depth, err);
        } else if (l->zcdp) {
            /* a zcdp leaf (rho = par[0]); never inside a subsampled
             * composition (src/model/leaves.c refuses that) */
            if (!count_ok(l->count) || !(l->par[0] >= 0 && isfinite(l->par[0])))
                return dpa_error_set(err, DPA_EINVAL, "RDP accountant: zcdp leaf rho %g, count %g", l->par[0], l->count);
            st = comp_push(c, (rdp_term){T_ZCDP, l->count, NULL, l->par[0], 0, NULL, {NAN, NAN}, 0, {0, 0, 0, 0}, NULL}, err);
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
            st = comp_push(c, (rdp_term){T_ZCDP, l->count, NULL, rho, 0, NULL, {NAN, NAN}, 0, {0, 0, 0, 0}, NULL}, err);
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
            st = comp_push(c, (rdp_term){T_COMPOSITE, l->count, NULL, 0, 0, in, {NAN, NAN}, 0, {0, 0, 0, 0}, NULL}, err);
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
    dpa_status st = add_leafset_to(&a->top, s, &a->asym, 0, err);
    /* composite terms, Renyi-only terms and capped pairs need not give a
     * unimodal key along the grid: scan it in full (the bound is valid at
     * any order; this is for tightness) */
    for (size_t i = 0; i < a->top.n; i++)
        if (a->top.t[i].kind == T_COMPOSITE || a->top.t[i].kind == T_SVT || a->top.t[i].kind == T_REPSEL ||
            (a->top.t[i].kind == T_PAIR && a->top.t[i].rho > 0))
            a->irregular = 1;
    return st;
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
    case T_PAIR: {
        dpa_status st = DPA_OK;
        if (alpha == 2.0 && !isnan(t->d2[dir ? 1 : 0])) *out = t->d2[dir ? 1 : 0];
        else st = dpa_rdp_divergence(t->pair, alpha, dir && !t->pair->symmetric, out, err);
        /* a zCDP cap (rho > 0: bounded-range leaves, see add_leafset_to) */
        if (!st && t->rho > 0) *out = fmin(*out, dpa_rdp_zcdp(t->rho, 0, alpha));
        return st;
    }
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
    case T_SVT:
        (void)dir; /* the SVT bounds hold for every ordered pair of neighbours */
        *out = svt_rdp(t, alpha);
        return DPA_OK;
    case T_REPSEL:
        return repsel_rdp(t, alpha, out, err);
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

/* ---------------- the evaluation cache ---------------- */

static size_t cache_slot(double alpha, int d, size_t cap)
{
    uint64_t u;
    memcpy(&u, &alpha, sizeof u);
    u = (u ^ (uint64_t)(unsigned)d) * 0x9E3779B97F4A7C15ULL; /* Fibonacci hashing */
    return (size_t)(u >> 32) & (cap - 1);
}

static const cache_ent *cache_find(const dpa_rdp *a, double alpha, int d)
{
    if (!a->cache) return NULL;
    for (size_t i = cache_slot(alpha, d, a->ccap);; i = (i + 1) & (a->ccap - 1)) {
        const cache_ent *e = &a->cache[i];
        if (e->d < 0) return NULL;
        if (e->d == d && e->alpha == alpha) return e;
    }
}

/* insert (alpha, d) -> val; a failed allocation only loses the entry */
static void cache_put(dpa_rdp *a, double alpha, int d, double val)
{
    if (a->ccount + 1 >= RDP_CACHE_MAX) invalidate(a);
    if (2 * (a->ccount + 1) > a->ccap) {
        size_t nc = a->ccap ? 2 * a->ccap : RDP_CACHE_INIT;
        cache_ent *nv = malloc(nc * sizeof *nv);
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
    a->cache[j] = (cache_ent){alpha, val, d};
    a->ccount++;
}

/* the composition's RDP at alpha in curve d (0, or 1 for the add direction
 * of an asymmetric composition), computed once */
static dpa_status rdp_at(dpa_rdp *a, double alpha, int d, double *out, dpa_error *err)
{
    const cache_ent *e = cache_find(a, alpha, d);
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
    return rdp_at(a, alpha, a->asym && dir ? 1 : 0, out, err);
}

dpa_status dpa_rdp_curve(dpa_rdp *a, int dir, double *out, dpa_error *err)
{
    int d = a->asym && dir ? 1 : 0;
    for (size_t i = 0; i < a->n; i++) {
        double v;
        dpa_status st = rdp_at(a, a->orders[i], d, &v, err);
        if (st) return st;
        if (out) out[i] = v;
    }
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

/* The quantity minimized over orders with conversion c (classical or
 * improved): eps itself, or the log of the uncapped delta bound (a monotone
 * function of the delta reported, without its plateau at 1). */
static double key_of(const query *qy, dpa_rdp_conversion c, double alpha, double r)
{
    return qy->want_eps ? dpa_rdp_eps_from(c, alpha, r, qy->x) : dpa_rdp_log_delta_key(c, alpha, r, qy->x);
}

typedef struct {
    dpa_rdp *a;
    int d;
    const query *qy;
    dpa_rdp_conversion cs; /* the conversion searched */
    double *keys;          /* per grid order, NAN until computed */
    dpa_error *err;
} search;

static dpa_status grid_key(search *s, size_t i, double *out)
{
    if (isnan(s->keys[i])) {
        double r;
        dpa_status st = rdp_at(s->a, s->a->orders[i], s->d, &r, s->err);
        if (st) return st;
        s->keys[i] = key_of(s->qy, s->cs, s->a->orders[i], r);
    }
    *out = s->keys[i];
    return DPA_OK;
}

/* key(i) <= key(i + 1), i + 1 < n */
static dpa_status pred(search *s, long i, int *out)
{
    double k0, k1;
    dpa_status st = grid_key(s, (size_t)i, &k0);
    if (!st) st = grid_key(s, (size_t)i + 1, &k1);
    if (!st) *out = k0 <= k1;
    return st;
}

/* the order of the grid nearest to alpha (in log(alpha - 1)) */
static size_t nearest_order(const dpa_rdp *a, double alpha)
{
    size_t lo = 0, hi = a->n - 1;
    if (!(alpha > a->orders[0])) return 0;
    if (!(alpha < a->orders[hi])) return hi;
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (a->orders[mid] <= alpha) lo = mid;
        else hi = mid;
    }
    double l = log(alpha - 1);
    return l - log(a->orders[lo] - 1) <= log(a->orders[hi] - 1) - l ? lo : hi;
}

/* The best order of the curve D_alpha = rho alpha for the query (the
 * improved conversion; near alpha0, whose log alpha term it uses):
 * eps: d/dalpha [rho alpha + log(1 - 1/alpha) + (log(1/delta) - log alpha)/(alpha - 1)] = 0
 *      gives alpha = 1 + sqrt((log(1/delta) - log alpha)/rho);
 * delta: d/dalpha [(alpha - 1)(rho alpha - eps) - log alpha + (alpha - 1) log(1 - 1/alpha)] = 0
 *      gives alpha = (1 + (eps - log(1 - 1/alpha))/rho)/2.
 * Only a starting point for the search: any value is safe. */
static double zcdp_best_order(const query *qy, double rho, double alpha0, double amax)
{
    if (!(rho > 0 && isfinite(rho))) return amax;
    double v = qy->want_eps ? 1 + sqrt(fmax(-log(qy->x) - log(alpha0), 0.0) / rho)
                            : 0.5 * (1 + (qy->x - log1p(-1 / alpha0)) / rho);
    return isfinite(v) ? v : amax;
}

/* The first grid order with the smallest key (what a full scan with strict
 * comparisons finds), for a key that is unimodal along the grid: the first
 * i with key(i) <= key(i+1) (n - 1 if none), by galloping from a guess and
 * then bisecting on that predicate. */
static dpa_status grid_argmin(search *s, size_t *bi)
{
    dpa_rdp *a = s->a;
    size_t n = a->n;
    dpa_status st;
    if (a->irregular || n <= RDP_FULL_SCAN_MAX) {
        double best = INFINITY, k;
        *bi = 0;
        for (size_t i = 0; i < n; i++) {
            if ((st = grid_key(s, i, &k))) return st;
            if (k < best) {
                best = k;
                *bi = i;
            }
        }
        return DPA_OK;
    }
    /* the guess: the best order of the zCDP-like curve D = rho alpha through
     * the curve's value at order 2, then at the grid order guessed, until
     * the guess stays at the same grid order (a few steps) */
    double r, alpha = 2.0, moved = 0;
    if ((st = rdp_at(a, alpha, s->d, &r, s->err))) return st;
    long m = -1, last = (long)n - 2, lo, hi;
    for (int it = 0; it < RDP_GUESS_STEPS; it++) {
        /* each step moves alpha - 1 by at most a factor RDP_GUESS_RATIO, and
         * a step back (the curve is not zCDP-like) goes half way (in
         * log(alpha - 1)) */
        double g = zcdp_best_order(s->qy, r / alpha, alpha, a->orders[n - 1]) - 1, l = alpha - 1;
        g = fmin(fmax(g, l / RDP_GUESS_RATIO), l * RDP_GUESS_RATIO);
        double step = log(g / l);
        int back = moved != 0 && step * moved < 0;
        if (back) g = l * exp(0.5 * step);
        long gi = (long)nearest_order(a, 1 + g);
        if (gi == m) break;
        m = gi;
        moved = step;
        alpha = a->orders[m];
        if ((st = rdp_at(a, alpha, s->d, &r, s->err))) return st;
    }
    if (m > last) m = last;
    /* gallop to a bracket lo < hi with pred(lo) false (or lo = -1) and
     * pred(hi) true (or hi = n - 1) */
    int p;
    if ((st = pred(s, m, &p))) return st;
    if (p) {
        hi = m;
        for (long step = 1;; step *= 2) {
            lo = hi - step;
            if (lo < 0) {
                lo = -1;
                break;
            }
            if ((st = pred(s, lo, &p))) return st;
            if (!p) break;
            hi = lo;
        }
    } else {
        lo = m;
        for (long step = 1;; step *= 2) {
            hi = lo + step;
            if (hi > last) {
                hi = (long)n - 1;
                break;
            }
            if ((st = pred(s, hi, &p))) return st;
            if (p) break;
            lo = hi;
        }
    }
    while (hi - lo > 1) {
        long mid = lo + (hi - lo) / 2;
        if (mid > last) break;
        if ((st = pred(s, mid, &p))) return st;
        if (p) hi = mid;
        else lo = mid;
    }
    *bi = (size_t)hi;
    return DPA_OK;
}

static int key_at(double alpha, void *ctx, double *f)
{
    search *s = ctx;
    double r;
    dpa_status st = rdp_at(s->a, alpha, s->d, &r, s->err);
    if (!st) *f = key_of(s->qy, s->cs, alpha, r);
    return (int)st;
}

/* Golden-section search of the key over (lo, hi), RDP_GOLDEN_STEPS steps
 * (the bracket shrinks by 0.618^30 ~ 5e-7); the best point evaluated. */
static int golden(search *s, double lo, double hi, double *xbest, double *fbest)
{
    const double g = 0.6180339887498949;
    double x1 = hi - g * (hi - lo), x2 = lo + g * (hi - lo), f1, f2;
    int st = key_at(x1, s, &f1);
    if (!st) st = key_at(x2, s, &f2);
    if (st) return st;
    *fbest = INFINITY;
    for (int i = 0;; i++) {
        if (f1 < *fbest) {
            *fbest = f1;
            *xbest = x1;
        }
        if (f2 < *fbest) {
            *fbest = f2;
            *xbest = x2;
        }
        if (i == RDP_GOLDEN_STEPS) return 0;
        if (f1 <= f2) {
            hi = x2;
            x2 = x1;
            f2 = f1;
            x1 = hi - g * (hi - lo);
            st = key_at(x1, s, &f1);
        } else {
            lo = x1;
            x1 = x2;
            f1 = f2;
            x2 = lo + g * (hi - lo);
            st = key_at(x2, s, &f2);
        }
        if (st) return st;
    }
}

/* the optimal conversion's value at alpha */
static int opt_key_at(double alpha, void *ctx, double *f)
{
    search *s = ctx;
    double r;
    dpa_status st = rdp_at(s->a, alpha, s->d, &r, s->err);
    if (!st) *f = convert(s->qy, DPA_RDP_OPTIMAL, alpha, r);
    return (int)st;
}

/* eps queries: a lower bound on the optimal conversion at grid order i of
 * the window around bi, from the improved keys the grid search already
 * computed (no curve evaluation), or -INFINITY.  The keys are unimodal with
 * their minimum at bi, so key(i) >= k for the known key k nearest to i
 * between bi and i; key(i) is the improved eps, r + g(alpha_i) with
 * g = log(1 - 1/alpha) - (log delta + log alpha)/(alpha - 1), so
 * r >= k - g(alpha_i); and the optimal eps is at least the improved eps plus
 * log(1 - e^{-(alpha-1) r})/(alpha - 1), increasing in r (rdp_convert.c, when
 * alpha delta < 1). */
static double window_lower(const search *s, long i, long bi)
{
    const double *keys = s->keys;
    double k = NAN, al = s->a->orders[i], delta = s->qy->x;
    if (!keys || i == bi || !(al * delta < 1)) return -INFINITY;
    for (long j = i; j != bi; j += i > bi ? -1 : 1)
        if (!isnan(keys[j])) {
            k = keys[j];
            break;
        }
    if (!(k > 0 && isfinite(k))) return -INFINITY;
    double am1 = al - 1, g = log1p(-1 / al) - (log(delta) + log(al)) / am1;
    /* the key is the improved eps rounded up by ~6u (|r| + |g| + 1); take
     * 32u off everything to stay below the exact values */
    double slack = 32 * U * (fabs(k) + fabs(g) + 1);
    double rlo = k - g - slack;
    if (!(rlo > 0)) return -INFINITY;
    double lk = am1 * rlo, corr = (lk > 40 ? -exp(-lk) : log(-expm1(-lk))) / am1;
    return k - slack + corr - 32 * U * (fabs(corr) + 1);
}

/* the optimal conversion at grid order i unless a lower bound on it is not
 * below *best; updates *best, *balpha */
static dpa_status opt_at(search *s, double alpha, double *best, double *balpha)
{
    double r;
    dpa_status st = rdp_at(s->a, alpha, s->d, &r, s->err);
    if (st) return st;
    double lb = s->qy->want_eps ? dpa_rdp_opt_eps_lower(alpha, r, s->qy->x)
                                : dpa_rdp_opt_delta_lower(alpha, r, s->qy->x);
    if (lb >= *best) return DPA_OK; /* its value is >= lb: it cannot be smaller */
    double v = convert(s->qy, DPA_RDP_OPTIMAL, alpha, r);
    if (v < *best) {
        *best = v;
        *balpha = alpha;
    }
    return DPA_OK;
}

static dpa_status query_from(search *sp, size_t bi, double *value, double *alpha, double *grid_value);

static dpa_status query_dir(dpa_rdp *a, int dir, const query *qy, double *value, double *alpha,
                            double *grid_value, dpa_error *err)
{
    size_t n = a->n, bi;
    search s = {a, a->asym && dir ? 1 : 0, qy, qy->conv == DPA_RDP_OPTIMAL ? DPA_RDP_IMPROVED : qy->conv, NULL, err};
    s.keys = malloc(n * sizeof *s.keys);
    if (!s.keys) return dpa_error_set(err, DPA_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) s.keys[i] = NAN;
    dpa_status st = grid_argmin(&s, &bi);
    if (!st) st = query_from(&s, bi, value, alpha, grid_value);
    free(s.keys);
    return st;
}

/* the rest of query_dir, from the best grid order bi */
static dpa_status query_from(search *sp, size_t bi, double *value, double *alpha, double *grid_value)
{
    search s = *sp;
    dpa_rdp *a = s.a;
    const query *qy = s.qy;
    dpa_error *err = s.err;
    size_t n = a->n;
    dpa_status st;
    /* the improved (or classical) conversion at the best grid order */
    double rb;
    if ((st = rdp_at(a, a->orders[bi], s.d, &rb, err))) return st;
    double balpha = a->orders[bi], best = convert(qy, s.cs, balpha, rb);
    if (best == INFINITY || (!qy->want_eps && best == 1.0 && rb == INFINITY)) {
        *value = qy->want_eps ? INFINITY : 1.0;
        *alpha = balpha;
        *grid_value = *value;
        return DPA_OK;
    }
    if (best <= 0) {
        /* eps 0 or delta 0: nothing is smaller (the refinement would walk a
         * plateau) */
        *value = *grid_value = best;
        *alpha = balpha;
        return DPA_OK;
    }
    /* continuous refinement between the neighbours of the best grid order */
    double lo = bi > 0 ? a->orders[bi - 1] : 1 + 0.5 * (a->orders[0] - 1);
    double hi = bi + 1 < n ? a->orders[bi + 1] : a->orders[bi] * 1.5;
    double xk = balpha, fk = key_of(qy, s.cs, balpha, rb), rbest = best, ralpha = balpha;
    int at_end = 0;
    if (bi == 0 || bi + 1 == n) {
        /* at the ends of the grid the best order may be the end of the
         * bracket itself (a monotone curve), which Brent only approaches
         * (by golden-section steps, its value there linear, not quadratic,
         * in the distance): try the end, and just inside it */
        double xe = bi == 0 ? lo : hi, xi = xe + (bi == 0 ? 1 : -1) * RDP_REFINE_ATOL * (hi - lo), fe, fi;
        if ((st = (dpa_status)key_at(xe, &s, &fe)) || (st = (dpa_status)key_at(xi, &s, &fi))) return st;
        at_end = fe <= fi && fe <= fk; /* still falling at the end */
        if (fe < fk) {
            fk = fe;
            xk = xe;
        }
    }
    if (!at_end) {
        double xb, fb;
        if (a->irregular)
            /* composite terms: chords between integer orders put kinks in the
             * curve, where Brent's parabolas do not help; the former
             * golden-section search, unchanged */
            st = (dpa_status)golden(&s, lo, hi, &xb, &fb);
        else
            st = (dpa_status)dpa_rdp_brent(key_at, &s, lo, hi, balpha, key_of(qy, s.cs, balpha, rb), 0.0,
                                           RDP_REFINE_ATOL * (hi - lo), RDP_REFINE_MAXIT, &xb, &fb);
        if (st) return st;
        if (fb < fk) {
            fk = fb;
            xk = xb;
        }
    }
    if (xk != balpha) {
        double r;
        if ((st = rdp_at(a, xk, s.d, &r, err))) return st;
        double v = convert(qy, s.cs, xk, r);
        if (v < rbest) {
            rbest = v;
            ralpha = xk;
        }
    }
    if (qy->conv != DPA_RDP_OPTIMAL) {
        *grid_value = best;
        *value = rbest;
        *alpha = ralpha;
        return DPA_OK;
    }
    /* optimal: the window of grid orders around the improved optimum
     * (nearest first), skipping the orders that cannot beat the best value,
     * then the refined order */
    double obest = best, oalpha = balpha;
    for (size_t k = 0; k <= 2 * RDP_OPT_WINDOW; k++) {
        long i = (long)bi + (k % 2 ? -(long)(k + 1) / 2 : (long)k / 2);
        if (i < 0 || i >= (long)n) continue;
        if (qy->want_eps && window_lower(&s, i, (long)bi) >= obest) continue;
        if ((st = opt_at(&s, a->orders[i], &obest, &oalpha))) return st;
    }
    if (!qy->want_eps && best >= 1.0) {
        /* every improved delta is capped at 1: the capped values tie and a
         * full scan's best order would be the first; cover that window too */
        for (size_t i = 0; i <= RDP_OPT_WINDOW && i < n; i++)
            if ((st = opt_at(&s, a->orders[i], &obest, &oalpha))) return st;
    }
    *grid_value = obest;
    /* the refined order, then a local search of the optimal conversion
     * itself around it: its best order differs from the improved one's by a
     * little (their difference varies slowly), and where the improved
     * conversion is flat that little is worth more than its round-off */
    double xo = ralpha, fo, f1, f2, h = RDP_OPT_LOCAL_STEP * (hi - lo);
    double x1 = fmax(ralpha - h, 0.5 * (lo + ralpha)), x2 = fmin(ralpha + h, 0.5 * (ralpha + hi));
    if ((st = (dpa_status)opt_key_at(ralpha, &s, &fo))) return st;
    double ro = fmin(fo, rbest), roalpha = ralpha;
    if ((st = (dpa_status)opt_key_at(x1, &s, &f1)) || (st = (dpa_status)opt_key_at(x2, &s, &f2))) return st;
    /* one parabolic step through the three points (the conversion is
     * smooth and nearly quadratic on this scale), trusted when the parabola
     * is convex, its vertex within RDP_OPT_LOCAL_TRUST steps and its value
     * there no larger than the three */
    double p = (ralpha - x1) * (fo - f2), q = (ralpha - x2) * (fo - f1);
    double den = 2 * (p - q), xv = ralpha - ((ralpha - x1) * p - (ralpha - x2) * q) / den;
    int done = 0;
    if (den < 0 && isfinite(xv) && xv > lo && xv < hi && fabs(xv - ralpha) <= RDP_OPT_LOCAL_TRUST * h) {
        double fv;
        if ((st = (dpa_status)opt_key_at(xv, &s, &fv))) return st;
        done = fv <= fmin(fo, fmin(f1, f2));
        if (fv < fo) {
            fo = fv;
            xo = xv;
        }
    }
    if (!done && fo <= f1 && fo <= f2) {
        done = 1; /* bracketed by the three points, and the step did not help */
    }
    if (fmin(fo, fmin(f1, f2)) <= 0 || obest <= 0) done = 1; /* nothing is below 0 */
    if (!done) {
        /* the optimal conversion's best order is further away (it gains
         * much more at some orders than at others): bracket it from the
         * lower end and search (Brent), with few evaluations: the three
         * points already beat any order within h of ralpha, which is all
         * the former search's own refined order could differ by */
        double bl, bx, bh, bf, x0 = f1 < f2 ? x1 : x2;
        if ((st = (dpa_status)dpa_rdp_bracket(opt_key_at, &s, lo, hi, x0, h, &bl, &bx, &bh, &bf))) return st;
        xo = bx;
        fo = bf;
        /* a walk that reached a neighbour (falling all the way) ends there:
         * the window evaluated that grid order already */
        if (bx != lo && bx != hi &&
            (st = (dpa_status)dpa_rdp_brent(opt_key_at, &s, bl, bh, bx, bf, 0.0, RDP_OPT_LOCAL_ATOL * (hi - lo),
                                            RDP_OPT_LOCAL_MAXIT, &xo, &fo)))
            return st;
        if (f1 < fo) {
            fo = f1;
            xo = x1;
        }
        if (f2 < fo) {
            fo = f2;
            xo = x2;
        }
    }
    if (fo < ro) {
        ro = fo;
        roalpha = xo;
    }
    if (ro < obest) {
        obest = ro;
        oalpha = roalpha;
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

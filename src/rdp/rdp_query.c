/* The RDP accountant's queries: eps(delta) and delta(eps) of the
 * composition, minimized over orders (the grid, then a continuous
 * refinement, then the optimal conversion around the best order).
 * SPDX-License-Identifier: GPL-3.0-or-later
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
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "rdp/rdp.h"
#include "rdp/rdp_acct.h"
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
/* Grid orders on each side of the improved conversion's best order at
 * which the optimal conversion is evaluated (it is within a few percent of
 * the improved one near the optimum; elsewhere it cannot win). */
#define RDP_OPT_WINDOW 4

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
        dpa_status st = dpa_rdp_at(s->a, s->a->orders[i], s->d, &r, s->err);
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
    if ((st = dpa_rdp_at(a, alpha, s->d, &r, s->err))) return st;
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
        if ((st = dpa_rdp_at(a, alpha, s->d, &r, s->err))) return st;
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
    dpa_status st = dpa_rdp_at(s->a, alpha, s->d, &r, s->err);
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
    dpa_status st = dpa_rdp_at(s->a, alpha, s->d, &r, s->err);
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
    dpa_status st = dpa_rdp_at(s->a, alpha, s->d, &r, s->err);
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
    if ((st = dpa_rdp_at(a, a->orders[bi], s.d, &rb, err))) return st;
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
        if ((st = dpa_rdp_at(a, xk, s.d, &r, err))) return st;
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

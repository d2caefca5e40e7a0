/* A mechanism given by points of a tradeoff curve (tradeoff_curve leaves,
 * docs/fdp.md §11, docs/spec.md): the points checked, their lower convex
 * envelope f taken, and the leaf read as the privacy_profile event whose
 * pair accounts the symmetrization f^S = max{f, f^{-1}} exactly (up to
 * outward rounding).
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Meaning.  The points (alpha_i, beta_i) state that the mechanism is f-DP
 * (GDP Def 2.2: T(M(S), M(S')) >= f for every ORDERED pair of neighbours)
 * for f the lower convex envelope of the points, completed by
 * (0, beta_first) (f is non-increasing, so f(x) >= f(alpha_first) before the
 * first point) and (1, 0) (f >= 0).  Points sampled ON a curved tradeoff
 * function give the chords, which lie above it: the leaf then accounts the
 * chord curve (docs/fdp.md §11 measures the difference for G_mu).
 *
 * Symmetrization.  f-DP for every ordered pair gives T(P, Q) >= f and, from
 * the swapped pair, T(P, Q) >= f^{-1} (GDP eq 4: T(Q,P) = T(P,Q)^{-1}), so
 * T(P, Q) >= f^S = max{f, f^{-1}} (GDP Prop 2.1).  Its profile in
 * s = e^eps is the lower convex envelope of min(d_QP, d_PQ), where
 *   d_QP(eps) = 1 - inf_x (e^eps x + f(x)) = max_i (1 - beta_i) - e^eps alpha_i,
 *   d_PQ(eps) = 1 - inf_x (x + e^eps f(x)) = max_i (1 - alpha_i) - e^eps beta_i
 * (GDP Prop 2.12, RF Prop 9; the conjugate of a max is the closed convex hull
 * of the min of the conjugates, and the infimum of a linear function over a
 * convex envelope is attained at one of the points).  Both bound
 * H(P||Q) and H(Q||P) for every ordered pair, so the mechanism is
 * (eps, min(d_QP, d_PQ)(eps))-DP in both directions for every eps >= 0:
 * exactly what a privacy_profile event states.  The envelope in s has its
 * vertices at kinks of d_QP or d_PQ (a crossing of the two is a concave
 * corner of the min, never a vertex), i.e. at eps = |log s_k| for the
 * slopes -s_k of f's segments; the points are taken there (plus 0 and
 * DPA_MAX_PROFILE_EPS), so the privacy_profile pair's profile is that
 * envelope, i.e. the pair's tradeoff function is f^S.
 *
 * Soundness in floating point.  Any eps gives a true statement, so the eps
 * values need no care (a near-collinear hull only costs tightness); each
 * delta is an upper bound: e^eps rounded down (expl within 4 ulp of long
 * double), each term a - s b in long double with an allowance of 2^-61
 * (a + s b) for its three roundings (each within 2^-64 of its result), and
 * the max rounded up to a double.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include "event_internal.h"

typedef struct tc_pt {
    double a, b; /* alpha, beta */
} tc_pt;

static int cmp_alpha(const void *x, const void *y)
{
    double a = ((const tc_pt *)x)->a, b = ((const tc_pt *)y)->a;
    return (a > b) - (a < b);
}

/* 1 if a + b > 1 exactly (TwoSum: the rounded sum and its error). */
static int above_diagonal(double a, double b)
{
    double s = a + b, bb = s - a, e = (a - (s - bb)) + (b - bb);
    return s > 1 || (s == 1 && e > 0);
}

/* (q - p) x (r - p) <= 0: r does not turn left of p -> q (drop q). */
static int not_left(const tc_pt *p, const tc_pt *q, const tc_pt *r)
{
    long double c = ((long double)q->a - p->a) * ((long double)r->b - p->b) -
                    ((long double)q->b - p->b) * ((long double)r->a - p->a);
    return c <= 0;
}

/* An upper bound on max_i (u_i - s v_i) over the n points, where
 * (u, v) = (1 - beta, alpha) (qp = 1) or (1 - alpha, beta) (qp = 0), for
 * some s >= s_lo (the terms only decrease in s). */
static long double profile_upper(const tc_pt *v, size_t n, long double s_lo, int qp)
{
    long double best = 0; /* the point (1, 0) (qp) or (0, beta_0 <= 1) bounds it below by 0 */
    for (size_t i = 0; i < n; i++) {
        long double u = 1 - (long double)(qp ? v[i].b : v[i].a), w = s_lo * (qp ? v[i].a : v[i].b);
        long double t = u - w;
        t += 0x1p-61L * (u + w);
        if (t > best) best = t;
    }
    return best;
}

dpa_event *dpa_event_tradeoff_curve(const double *alpha, const double *beta, size_t n, dpa_error *err)
{
    if (!alpha || !beta || n == 0 || n > DPA_MAX_TRADEOFF_POINTS) {
        dpa_error_set(err, DPA_EINVAL, "tradeoff_curve: need 1 to %d points", DPA_MAX_TRADEOFF_POINTS);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        if (!(alpha[i] >= 0 && alpha[i] <= 1)) {
            dpa_error_set(err, DPA_EINVAL, "tradeoff_curve: point %zu: alpha must be in [0, 1], got %.17g", i,
                          alpha[i]);
            return NULL;
        }
        if (!(beta[i] >= 0 && beta[i] <= 1)) {
            dpa_error_set(err, DPA_EINVAL, "tradeoff_curve: point %zu: beta must be in [0, 1], got %.17g", i,
                          beta[i]);
            return NULL;
        }
        if (above_diagonal(alpha[i], beta[i])) {
            dpa_error_set(err, DPA_EINVAL,
                          "tradeoff_curve: point %zu: beta %.17g > 1 - alpha (alpha %.17g): a tradeoff function "
                          "lies on or below the diagonal 1 - alpha (GDP Prop 2.2)",
                          i, beta[i], alpha[i]);
            return NULL;
        }
    }
    /* room for the points, (0, beta_first) and (1, 0) */
    tc_pt *v = malloc((n + 2) * sizeof *v);
    double *eps = malloc((n + 4) * sizeof *eps), *del = malloc((n + 4) * sizeof *del);
    if (!v || !eps || !del) {
        free(v);
        free(eps);
        free(del);
        dpa_error_set(err, DPA_ENOMEM, "tradeoff_curve: out of memory");
        return NULL;
    }
    for (size_t i = 0; i < n; i++) v[i + 1] = (tc_pt){alpha[i] == 0 ? 0.0 : alpha[i], beta[i] == 0 ? 0.0 : beta[i]};
    qsort(v + 1, n, sizeof *v, cmp_alpha);
    /* equal alphas: the smallest beta (a lower curve claims less); then
     * non-increasing, as every tradeoff function is (GDP Prop 2.2) */
    size_t m = 1;
    for (size_t i = 1; i <= n; i++) {
        if (m > 1 && v[m - 1].a == v[i].a) {
            v[m - 1].b = fmin(v[m - 1].b, v[i].b);
            continue;
        }
        if (m > 1 && v[i].b > v[m - 1].b) {
            dpa_error_set(err, DPA_EINVAL,
                          "tradeoff_curve: beta must not increase with alpha (GDP Prop 2.2): beta %.17g at alpha "
                          "%.17g after beta %.17g at alpha %.17g",
                          v[i].b, v[i].a, v[m - 1].b, v[m - 1].a);
            free(v);
            free(eps);
            free(del);
            return NULL;
        }
        v[m++] = v[i];
    }
    size_t lo = 1;
    if (v[1].a > 0) v[lo = 0] = (tc_pt){0.0, v[1].b};
    if (v[m - 1].b > 0) v[m++] = (tc_pt){1.0, 0.0};
    tc_pt *p = v + lo;
    size_t np = m - lo;
    /* the lower convex hull (monotone chain), for the slopes only */
    tc_pt *h = malloc(np * sizeof *h);
    if (!h) {
        free(v);
        free(eps);
        free(del);
        dpa_error_set(err, DPA_ENOMEM, "tradeoff_curve: out of memory");
        return NULL;
    }
    size_t nh = 0;
    for (size_t i = 0; i < np; i++) {
        while (nh >= 2 && not_left(&h[nh - 2], &h[nh - 1], &p[i])) nh--;
        h[nh++] = p[i];
    }
    size_t ne = 0;
    eps[ne++] = 0;
    eps[ne++] = DPA_MAX_PROFILE_EPS;
    for (size_t k = 0; k + 1 < nh; k++) {
        double s = (h[k].b - h[k + 1].b) / (h[k + 1].a - h[k].a);
        if (s > 0 && isfinite(s)) eps[ne++] = fmin(fabs(log(s)), DPA_MAX_PROFILE_EPS);
    }
    free(h);
    for (size_t j = 0; j < ne; j++) {
        /* e^eps rounded down: expl within 4 ulp (2^-61 relative) */
        long double s_lo = expl((long double)eps[j]) * (1 - 0x1p-60L);
        long double dq = profile_upper(p, np, s_lo, 1), dp = profile_upper(p, np, s_lo, 0);
        long double d = dq < dp ? dq : dp;
        double x = (double)d;
        if ((long double)x < d) x = nextafter(x, INFINITY);
        del[j] = fmin(1.0, x);
    }
    free(v);
    dpa_event *e = dpa_event_privacy_profile(eps, del, ne, err);
    free(eps);
    free(del);
    return e;
}

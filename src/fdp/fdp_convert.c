/* Conversions between tradeoff functions and privacy profiles (GDP Prop 2.8,
 * Prop 2.12, Cor 2.13; RF Prop 8-9; MATH.md §2), among them the curve of
 * (eps, delta) pairs, and Gaussian DP.
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <stdlib.h>
#include <string.h>
#include "exact/exact.h"
#include "fdp/fdp.h"

#define MU_MAX 1e8
#define EPS_ABS_MAX 700.0
#define PROFILE_POINTS_MAX 1000000
/* eps searches: a PL curve's profile is constant beyond its steepest slope,
 * and every closed form's is below 1e-300 (or exactly d) long before 2^12 */
#define EPS_SEARCH_MAX 4096.0
/* relative width at which eps and mu bisections stop */
#define SEARCH_REL_TOL 1e-13

const char *dpa_tf_dir_name(dpa_tf_dir d)
{
    switch (d) {
    case DPA_TF_QP: return "qp";
    case DPA_TF_PQ: return "pq";
    case DPA_TF_BOTH: return "both";
    }
    return NULL;
}

/* e^eps v rounded down (v >= 0), without overflow: +inf when it exceeds
 * every double */
static double exp_times_dn(double eps, double v)
{
    if (!(v > 0)) return 0.0;
    double le = tf_dn(eps + tf_lower(log(v), 4));
    if (le > 709.0) return INFINITY;
    return tf_exp_dn(le);
}

/* delta of a PL curve in one direction: QP = max_k (1 - Y_k) - e^eps X_k,
 * PQ = max_k (1 - X_k) - e^eps Y_k (the infimum of a convex piecewise-linear
 * function plus a linear one is at a vertex); the complements are the
 * stored upper bounds, the products lower bounds */
static double pl_delta(const dpa_tf *f, double eps, int pq)
{
    double best = 0;
    for (size_t k = 0; k < f->n; k++) {
        const tf_pt *p = &f->v[k];
        double c = pq ? p->cx : p->cy;
        double t = exp_times_dn(eps, pq ? tf_y_lo(p) : tf_x_lo(p));
        if (isinf(t)) continue;
        double v = tf_up(c - t);
        if (v > best) best = v;
    }
    return best < 1 ? best : 1.0;
}

static double delta_any(const dpa_tf *f, double eps, dpa_tf_dir dir)
{
    if (f->kind != TF_PL) return dpa_fdp_closed_delta(f, eps); /* symmetric */
    if (dir == DPA_TF_QP) return pl_delta(f, eps, 0);
    if (dir == DPA_TF_PQ) return pl_delta(f, eps, 1);
    double a = pl_delta(f, eps, 0), b = pl_delta(f, eps, 1);
    return a > b ? a : b;
}

static dpa_status check_dir(dpa_tf_dir dir, dpa_error *err)
{
    if (dir != DPA_TF_QP && dir != DPA_TF_PQ && dir != DPA_TF_BOTH)
        return dpa_error_set(err, DPA_EINVAL, "tradeoff: unknown direction %d", (int)dir);
    return DPA_OK;
}

dpa_status dpa_tf_delta(const dpa_tf *f, double eps, dpa_tf_dir dir, double *delta_upper,
                        dpa_error *err)
{
    if (!f || !delta_upper) return dpa_error_set(err, DPA_EINVAL, "tradeoff delta: NULL argument");
    if (check_dir(dir, err)) return DPA_EINVAL;
    if (isnan(eps) || isinf(eps))
        return dpa_error_set(err, DPA_EINVAL, "tradeoff delta: eps must be finite, got %g", eps);
    *delta_upper = delta_any(f, eps, dir);
    return DPA_OK;
}

dpa_status dpa_tf_epsilon(const dpa_tf *f, double delta, dpa_tf_dir dir, double *eps_upper,
                          dpa_error *err)
{
    if (!f || !eps_upper) return dpa_error_set(err, DPA_EINVAL, "tradeoff epsilon: NULL argument");
    if (check_dir(dir, err)) return DPA_EINVAL;
    if (!(delta > 0) || !(delta < 1))
        return dpa_error_set(err, DPA_EINVAL, "tradeoff epsilon: delta must be in (0, 1), got %g",
                             delta);
    if (f->kind == TF_GAUSS) {
        /* d + (1 - d) delta_mu(eps) <= delta  <=  delta_mu(eps) <= (delta - d)/(1 - d) */
        double num = tf_dn(delta - f->d);
        if (!(num > 0)) {
            *eps_upper = INFINITY;
            return DPA_OK;
        }
        double t = f->d > 0 ? tf_dn(num / tf_up(1.0 - f->d)) : delta;
        if (f->mu == 0) {
            *eps_upper = 0;
            return DPA_OK;
        }
        double up, lo;
        dpa_exact_epsilon(f->mu, t, &up, &lo);
        *eps_upper = up;
        return DPA_OK;
    }
    if (delta_any(f, 0.0, dir) <= delta) {
        *eps_upper = 0;
        return DPA_OK;
    }
    if (delta_any(f, EPS_SEARCH_MAX, dir) > delta) {
        *eps_upper = INFINITY;
        return DPA_OK;
    }
    double a = 0, b = 1;
    while (delta_any(f, b, dir) > delta) {
        a = b;
        b *= 2;
    }
    /* a infeasible (or 0), b feasible: bisect, keep the feasible end */
    for (int i = 0; i < 200 && b - a > SEARCH_REL_TOL * b; i++) {
        double m = 0.5 * (a + b);
        if (m <= a || m >= b) break;
        if (delta_any(f, m, dir) <= delta) b = m;
        else a = m;
    }
    *eps_upper = b;
    return DPA_OK;
}

dpa_tf *dpa_tf_from_profile(const double *eps, const double *delta_upper, size_t n,
                            dpa_tf_dir dir, const dpa_tf_opts *opt, dpa_error *err)
{
    if (!eps || !delta_upper || n == 0) {
        dpa_error_set(err, DPA_EINVAL, "from_profile: need n >= 1 points");
        return NULL;
    }
    if (check_dir(dir, err) || dpa_fdp_opts_check(opt, err)) return NULL;
    for (size_t i = 0; i < n; i++) {
        if (!(fabs(eps[i]) <= EPS_ABS_MAX)) {
            dpa_error_set(err, DPA_EINVAL, "from_profile: eps[%zu] must be finite with |eps| <= 700, got %g",
                          i, eps[i]);
            return NULL;
        }
        if (!(delta_upper[i] >= 0) || !(delta_upper[i] <= 1)) {
            dpa_error_set(err, DPA_EINVAL, "from_profile: delta[%zu] must be in [0, 1], got %g", i,
                          delta_upper[i]);
            return NULL;
        }
    }
    dpa_tf_opts o;
    dpa_fdp_opts_resolve(opt, &o);
    tf_line *l = malloc(2 * n * sizeof *l);
    if (!l) {
        dpa_error_set(err, DPA_ENOMEM, "from_profile: out of memory (%zu points)", n);
        return NULL;
    }
    /* each point gives supporting-line bounds (docs/fdp.md §3):
     *   QP: f(x) >= 1 - delta - e^eps x,  PQ: f(x) >= e^-eps (1 - delta - x) */
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(delta_upper[i] < 1)) continue;
        if (dir != DPA_TF_PQ) dpa_fdp_qp_line(eps[i], delta_upper[i], &l[m++]);
        if (dir != DPA_TF_QP) dpa_fdp_pq_line(eps[i], delta_upper[i], &l[m++]);
    }
    dpa_tf *r = dpa_fdp_envelope(l, m, err);
    free(l);
    if (r && r->n > o.max_vertices) {
        dpa_tf *c = dpa_fdp_pl_coarsen(r, o.max_vertices, err);
        dpa_tf_free(r);
        r = c;
    }
    return r;
}

dpa_tf *dpa_tf_from_eps_delta(const double *eps, const double *delta, size_t n, dpa_error *err)
{
    if (!eps || !delta || n == 0) {
        dpa_error_set(err, DPA_EINVAL, "from_eps_delta: need n >= 1 pairs");
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        if (!(eps[i] >= 0)) {
            dpa_error_set(err, DPA_EINVAL, "from_eps_delta: eps[%zu] must be >= 0, got %g", i,
                          eps[i]);
            return NULL;
        }
    /* f_{eps,delta} = max{0, 1 - delta - e^eps x, e^-eps (1 - delta - x)}:
     * the QP and PQ lines of the same (eps, delta) (GDP Prop 2.8) */
    return dpa_tf_from_profile(eps, delta, n, DPA_TF_BOTH, NULL, err);
}

/* Adaptive refinement of a sampled profile (docs/fdp.md §3).  Adjacent
 * points eps_i < eps_j give the QP lines 1 - d - e^eps x, which meet at
 * x_v = (d_i - d_j)/(e^eps_j - e^eps_i); where they meet inside the unit
 * square, the midpoint eps is asked, and if its line passes above the
 * meeting point by more than FROM_PROFILE_CUT the two halves are refined
 * again (at most FROM_PROFILE_ROUNDS rounds, FROM_PROFILE_EXTRA points in
 * all).  A uniform eps grid misses the kinks of piecewise-linear curves
 * (k-fold pure DP: each kink costs up to ~3e-4) and the bend near eps = 0
 * of subsampled mechanisms; bisection converges to them.  Heuristic
 * placement only: every point added is another valid supporting line, so
 * the curve stays a lower bound whatever is chosen.  Points stay sorted. */
#define FROM_PROFILE_CUT 1e-7
#define FROM_PROFILE_ROUNDS 48
#define FROM_PROFILE_EXTRA 8192

static dpa_status refine_profile(dpa_tf_profile_fn fn, void *ctx, double **pe, double **pd, size_t *pm,
                                 dpa_error *err)
{
    size_t m = *pm, cap = m + FROM_PROFILE_EXTRA, added = 0;
    double *e = realloc(*pe, cap * sizeof *e), *d;
    if (!e) return dpa_error_set(err, DPA_ENOMEM, "from_profile_fn: out of memory");
    *pe = e;
    d = realloc(*pd, cap * sizeof *d);
    if (!d) return dpa_error_set(err, DPA_ENOMEM, "from_profile_fn: out of memory");
    *pd = d;
    /* active[i]: the interval (e[i], e[i+1]) is to be examined */
    unsigned char *active = malloc(cap), *nact = malloc(cap);
    double *me = malloc(cap * sizeof *me), *md = malloc(cap * sizeof *md), *ne = malloc(cap * sizeof *ne),
           *nd = malloc(cap * sizeof *nd);
    size_t *at = malloc(cap * sizeof *at);
    dpa_status st = DPA_OK;
    if (!active || !nact || !me || !md || !ne || !nd || !at) {
        st = dpa_error_set(err, DPA_ENOMEM, "from_profile_fn: out of memory");
        goto done;
    }
    memset(active, 1, m);
    for (int round = 0; round < FROM_PROFILE_ROUNDS && added < FROM_PROFILE_EXTRA; round++) {
        size_t k = 0;
        for (size_t i = 0; i + 1 < m && added + k < FROM_PROFILE_EXTRA; i++) {
            if (!active[i] || !(d[i] < 1) || !(d[i + 1] < 1)) continue;
            double si = exp(e[i]), sj = exp(e[i + 1]), mid = e[i] + 0.5 * (e[i + 1] - e[i]);
            if (!(sj > si) || !(mid > e[i] && mid < e[i + 1])) continue;
            double xv = (d[i] - d[i + 1]) / (sj - si), yv = 1 - d[i] - si * xv;
            if (!(xv > 0 && xv < 1 && yv > 0 && yv < 1)) continue;
            me[k] = mid;
            at[k++] = i;
        }
        if (k == 0) break;
        st = fn(ctx, me, k, md, err);
        if (st) goto done;
        /* merge, marking the halves of intervals whose cut exceeds the target */
        size_t j = 0, q = 0;
        for (size_t i = 0; i < m; i++) {
            ne[q] = e[i];
            nd[q] = d[i];
            nact[q] = 0;
            q++;
            if (j < k && at[j] == i) {
                double dm = md[j] > 1 ? 1 : md[j];
                double si = exp(e[i]), sj = exp(e[i + 1]);
                double xv = (d[i] - d[i + 1]) / (sj - si), yv = 1 - d[i] - si * xv;
                double cut = (1 - dm - exp(me[j]) * xv) - yv;
                int more = cut > FROM_PROFILE_CUT;
                nact[q - 1] = (unsigned char)more;
                ne[q] = me[j];
                nd[q] = dm;
                nact[q] = (unsigned char)more;
                q++;
                j++;
            }
        }
        added += k;
        m = q;
        memcpy(e, ne, m * sizeof *e);
        memcpy(d, nd, m * sizeof *d);
        memcpy(active, nact, m);
    }
    *pm = m;
done:
    free(active);
    free(nact);
    free(me);
    free(md);
    free(ne);
    free(nd);
    free(at);
    return st;
}

/* dpa_tf_from_profile_fn, and with `refine` the adaptive points above */
static dpa_tf *from_profile_fn(dpa_tf_profile_fn fn, void *ctx, double eps_min, double eps_max, size_t n,
                               dpa_tf_dir dir, const dpa_tf_opts *opt, int refine, dpa_error *err)
{
    if (!fn) {
        dpa_error_set(err, DPA_EINVAL, "from_profile_fn: NULL callback");
        return NULL;
    }
    if (!(fabs(eps_min) <= EPS_ABS_MAX) || !(fabs(eps_max) <= EPS_ABS_MAX) || !(eps_min < eps_max)) {
        dpa_error_set(err, DPA_EINVAL,
                      "from_profile_fn: need -700 <= eps_min < eps_max <= 700, got [%g, %g]", eps_min,
                      eps_max);
        return NULL;
    }
    if (n < 2 || n > PROFILE_POINTS_MAX) {
        dpa_error_set(err, DPA_EINVAL, "from_profile_fn: n must be in [2, 1e6], got %zu", n);
        return NULL;
    }
    double *e = malloc(n * sizeof *e), *d = malloc(n * sizeof *d);
    if (!e || !d) {
        free(e);
        free(d);
        dpa_error_set(err, DPA_ENOMEM, "from_profile_fn: out of memory");
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        e[i] = eps_min + (eps_max - eps_min) * ((double)i / (double)(n - 1));
    e[n - 1] = eps_max;
    dpa_tf *r = NULL;
    dpa_status st = fn(ctx, e, n, d, err);
    size_t m = n;
    if (st == DPA_OK) {
        for (size_t i = 0; i < n; i++) /* a bound above 1 carries no information */
            if (d[i] > 1) d[i] = 1;
        if (refine) st = refine_profile(fn, ctx, &e, &d, &m, err);
    }
    if (st == DPA_OK) {
        r = dpa_tf_from_profile(e, d, m, dir, opt, err);
    } else if (err && err->status == DPA_OK) {
        dpa_error_set(err, st, "from_profile_fn: the callback failed (%s)", dpa_status_string(st));
    }
    free(e);
    free(d);
    return r;
}

dpa_tf *dpa_tf_from_profile_fn(dpa_tf_profile_fn fn, void *ctx, double eps_min, double eps_max,
                               size_t n, dpa_tf_dir dir, const dpa_tf_opts *opt, dpa_error *err)
{
    return from_profile_fn(fn, ctx, eps_min, eps_max, n, dir, opt, 0, err);
}

typedef struct acct_ctx { dpa_accountant *a; } acct_ctx;

static dpa_status acct_profile(void *ctx, const double *eps, size_t n, double *up, dpa_error *err)
{
    acct_ctx *c = ctx;
    double *lo = malloc(n * sizeof *lo);
    if (!lo) return dpa_error_set(err, DPA_ENOMEM, "from_accountant: out of memory");
    dpa_status st = dpa_accountant_profile(c->a, eps, n, up, lo, err);
    free(lo);
    return st;
}

dpa_tf *dpa_tf_from_accountant(dpa_accountant *a, double eps_max, size_t n,
                               const dpa_tf_opts *opt, dpa_error *err)
{
    if (!a) {
        dpa_error_set(err, DPA_EINVAL, "from_accountant: NULL accountant");
        return NULL;
    }
    if (!(eps_max > 0) || !(eps_max <= EPS_ABS_MAX)) {
        dpa_error_set(err, DPA_EINVAL, "from_accountant: eps_max must be in (0, 700], got %g", eps_max);
        return NULL;
    }
    acct_ctx c = { a };
    /* the accountant's upper bound is the max over both directions of
     * add/remove (or the one direction of a symmetric pair): direction BOTH */
    return from_profile_fn(acct_profile, &c, 0.0, eps_max, n, DPA_TF_BOTH, opt, 1, err);
}

/* ---------- Gaussian DP ---------- */

dpa_status dpa_tf_gdp_mu(const dpa_tf *f, const dpa_tf_opts *opt, double *mu_upper, dpa_error *err)
{
    if (!f || !mu_upper) return dpa_error_set(err, DPA_EINVAL, "gdp_mu: NULL argument");
    if (dpa_fdp_opts_check(opt, err)) return DPA_EINVAL;
    if (f->kind == TF_GAUSS) {
        *mu_upper = f->d > 0 ? INFINITY : f->mu;
        return DPA_OK;
    }
    if (f->kind != TF_PL && f->d > 0) { /* f(0) = 1 - d < 1 = G_mu(0) */
        *mu_upper = INFINITY;
        return DPA_OK;
    }
    dpa_tf *F = dpa_fdp_as_pl(f, opt, err);
    if (!F) return err ? err->status : DPA_ENOMEM;
    /* G_mu <= F on a segment iff at its ends (G_mu convex, F linear):
     * mu >= Phi^{-1}(1 - X_k) - Phi^{-1}(Y_k) at every vertex (GDP eq 6) */
    double best = 0;
    for (size_t k = 0; k < F->n && best < INFINITY; k++) {
        const tf_pt *p = &F->v[k];
        int x0 = tf_xprim(p) && p->x == 0, x1 = !tf_xprim(p) && p->cx == 0;
        int y0 = tf_yprim(p) && p->y == 0, y1 = !tf_yprim(p) && p->cy == 0;
        if (x0) {
            if (!y1) best = INFINITY; /* f(0) < 1 */
            continue;
        }
        if (y0) {
            if (!x1) best = INFINITY; /* f reaches 0 before 1 */
            continue;
        }
        double zl, zh, wl, wh, z_hi, w_lo;
        if (tf_xprim(p)) {
            dpa_fdp_ndtri_bracket(p->x, &zl, &zh);
            z_hi = -zl;
        } else {
            dpa_fdp_ndtri_bracket(p->cx, &zl, &zh);
            z_hi = zh;
        }
        if (tf_yprim(p)) {
            dpa_fdp_ndtri_bracket(p->y, &wl, &wh);
            w_lo = wl;
        } else {
            dpa_fdp_ndtri_bracket(p->cy, &wl, &wh);
            w_lo = -wh;
        }
        double m = tf_up(z_hi - w_lo);
        if (m > best) best = m;
    }
    dpa_tf_free(F);
    *mu_upper = best;
    return DPA_OK;
}

dpa_status dpa_tf_gdp_mu_from_profile(const double *eps, const double *delta, size_t n,
                                      double *mu_upper, dpa_error *err)
{
    if (!eps || !delta || !mu_upper || n == 0)
        return dpa_error_set(err, DPA_EINVAL, "gdp_mu_from_profile: need n >= 1 points");
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(eps[i]))
            return dpa_error_set(err, DPA_EINVAL, "gdp_mu_from_profile: eps[%zu] is not finite", i);
        if (!(delta[i] >= 0) || !(delta[i] <= 1))
            return dpa_error_set(err, DPA_EINVAL,
                                 "gdp_mu_from_profile: delta[%zu] must be in [0, 1], got %g", i,
                                 delta[i]);
    }
    double best = 0;
    for (size_t i = 0; i < n && best < INFINITY; i++) {
        double t = delta[i], up, lo;
        if (t == 0) continue;
        if (t >= 1) {
            best = INFINITY;
            continue;
        }
        /* delta_mu(eps) increases in mu: the smallest mu whose certified
         * LOWER evaluation reaches t is >= the exact smallest mu */
        dpa_exact_delta(0.0, eps[i], &up, &lo);
        if (lo >= t) continue;
        dpa_exact_delta(MU_MAX, eps[i], &up, &lo);
        if (lo < t) {
            best = INFINITY;
            continue;
        }
        double a = 0, b = 1;
        for (;;) {
            dpa_exact_delta(b, eps[i], &up, &lo);
            if (lo >= t) break;
            a = b;
            b = b * 2 < MU_MAX ? b * 2 : MU_MAX;
        }
        for (int it = 0; it < 200 && b - a > SEARCH_REL_TOL * b; it++) {
            double m = 0.5 * (a + b);
            if (m <= a || m >= b) break;
            dpa_exact_delta(m, eps[i], &up, &lo);
            if (lo >= t) b = m;
            else a = m;
        }
        if (b > best) best = b;
    }
    *mu_upper = best;
    return DPA_OK;
}

dpa_status dpa_tf_gdp_delta(double mu, double eps, double *lo, double *hi, dpa_error *err)
{
    if (!lo || !hi) return dpa_error_set(err, DPA_EINVAL, "gdp_delta: NULL output");
    if (!(mu >= 0) || !(mu <= MU_MAX))
        return dpa_error_set(err, DPA_EINVAL, "gdp_delta: mu must be in [0, 1e8], got %g", mu);
    if (!isfinite(eps)) return dpa_error_set(err, DPA_EINVAL, "gdp_delta: eps must be finite");
    dpa_exact_delta(mu, eps, hi, lo);
    return DPA_OK;
}

dpa_status dpa_tf_gdp_epsilon(double mu, double delta, double *lo, double *hi, dpa_error *err)
{
    if (!lo || !hi) return dpa_error_set(err, DPA_EINVAL, "gdp_epsilon: NULL output");
    if (!(mu >= 0) || !(mu <= MU_MAX))
        return dpa_error_set(err, DPA_EINVAL, "gdp_epsilon: mu must be in [0, 1e8], got %g", mu);
    if (!(delta > 0) || !(delta < 1))
        return dpa_error_set(err, DPA_EINVAL, "gdp_epsilon: delta must be in (0, 1), got %g", delta);
    dpa_exact_epsilon(mu, delta, hi, lo);
    return DPA_OK;
}

/* Tradeoff functions: constructors, inspection, evaluation, validity and
 * symmetry checks, fixed point (include/dpacct/tradeoff.h).
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "fdp/fdp.h"

/* parameter domains (tradeoff.h) */
#define MU_MAX 1e8      /* as the exact Gaussian method (src/exact/exact.h) */
#define EPS_MAX 700.0   /* e^eps stays a finite double */

/* ---------- constructors ---------- */

static dpa_tf *closed(tf_kind kind, double mu, double eps, double d, dpa_error *err)
{
    dpa_tf *f = dpa_fdp_alloc(kind, 0, err);
    if (!f) return NULL;
    f->mu = mu;
    f->eps = eps;
    f->d = d;
    return f;
}

dpa_tf *dpa_tf_identity(dpa_error *err)
{
    return closed(TF_PURE, NAN, 0.0, 0.0, err);
}

dpa_tf *dpa_tf_gaussian(double mu, dpa_error *err)
{
    if (!(mu >= 0) || !(mu <= MU_MAX)) {
        dpa_error_set(err, DPA_EINVAL, "gaussian tradeoff: mu must be in [0, 1e8], got %g", mu);
        return NULL;
    }
    return closed(TF_GAUSS, mu, NAN, 0.0, err);
}

dpa_tf *dpa_tf_approx(double eps, double delta, dpa_error *err)
{
    if (!(eps >= 0) || !(eps <= EPS_MAX)) {
        dpa_error_set(err, DPA_EINVAL, "approx tradeoff: eps must be in [0, 700], got %g", eps);
        return NULL;
    }
    if (!(delta >= 0) || !(delta <= 1)) {
        dpa_error_set(err, DPA_EINVAL, "approx tradeoff: delta must be in [0, 1], got %g", delta);
        return NULL;
    }
    return closed(TF_PURE, NAN, eps, delta, err);
}

dpa_tf *dpa_tf_laplace(double mu, dpa_error *err)
{
    if (!(mu >= 0) || !(mu <= EPS_MAX)) {
        dpa_error_set(err, DPA_EINVAL, "laplace tradeoff: mu must be in [0, 700], got %g", mu);
        return NULL;
    }
    return closed(TF_LAPLACE, mu, NAN, 0.0, err);
}

/* an atom of exact masses p, q (relative error rel) */
static tf_atom atom_of(double p, double q, double rel)
{
    tf_atom a = { p, q, rel, NAN, 0.0 };
    if (p > 0 && q > 0) {
        double lq = log(q), lp = log(p);
        a.key = lq - lp;
        a.kerr = 2.02 * rel + TF_EPS_ELEM * (fabs(lq) + fabs(lp)) + 2 * TF_U * fabs(a.key) + 1e-300;
    }
    return a;
}

dpa_tf *dpa_tf_randomized_response(double p, double q, dpa_error *err)
{
    if (!(p >= 0) || !(p <= 1) || !(q >= 0) || !(q <= 1)) {
        dpa_error_set(err, DPA_EINVAL,
                      "randomized_response tradeoff: p and q must be in [0, 1], got p = %g, q = %g",
                      p, q);
        return NULL;
    }
    /* 1 - p is exact for p >= 1/2 (Sterbenz), else within u */
    tf_atom a[2] = { atom_of(p, q, TF_U), atom_of(1.0 - p, 1.0 - q, TF_U) };
    return dpa_fdp_from_atoms(a, 2, 0.0, 0.0, err);
}

/* points from raw arrays: X = x exactly, Y = min(y, 1 - x) (1 - x is exact
 * as a complement) */
static tf_pt *points_of(const double *x, const double *y, size_t n, dpa_error *err)
{
    tf_pt *v = malloc((n ? n : 1) * sizeof *v);
    if (!v) {
        dpa_error_set(err, DPA_ENOMEM, "tradeoff: out of memory (%zu points)", n);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        tf_pt p, c;
        tf_setx(&p, x[i]);
        double yi = y[i] > 1 ? 1.0 : y[i];
        if (yi < 0.5) { p.y = yi; p.cy = tf_one_minus_up(yi); }
        else tf_sety(&p, yi);
        /* the line 1 - X at X = x[i]: its Y is exactly 1 - x[i] */
        c = p;
        if (x[i] <= 0.5) tf_setcy(&c, x[i]);
        else tf_sety(&c, 1.0 - x[i]);
        if (tf_cmpy(&c, &p) < 0) { p.y = c.y; p.cy = c.cy; }
        v[i] = p;
    }
    return v;
}

static dpa_status check_x_structure(const double *x, const double *y, size_t n, dpa_error *err)
{
    if (!x || !y || n == 0)
        return dpa_error_set(err, DPA_EINVAL, "tradeoff points: need n >= 1 points, got %zu", n);
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(x[i]) || !isfinite(y[i]))
            return dpa_error_set(err, DPA_EINVAL, "tradeoff points: point %zu is not finite", i);
        if (x[i] < 0 || x[i] > 1)
            return dpa_error_set(err, DPA_EINVAL, "tradeoff points: x[%zu] = %g is outside [0, 1]",
                                 i, x[i]);
        if (i > 0 && !(x[i] > x[i - 1]))
            return dpa_error_set(err, DPA_EINVAL,
                                 "tradeoff points: x must increase strictly (x[%zu] = %.17g after %.17g)",
                                 i, x[i], x[i - 1]);
    }
    if (x[0] != 0)
        return dpa_error_set(err, DPA_EINVAL, "tradeoff points: x[0] must be 0, got %g", x[0]);
    if (y[n - 1] > 0 && x[n - 1] < 1)
        return dpa_error_set(err, DPA_EINVAL,
                             "tradeoff points: the last point must have y = 0 or x = 1 (got (%g, %g))",
                             x[n - 1], y[n - 1]);
    return DPA_OK;
}

dpa_status dpa_tf_check_points(const double *x, const double *y, size_t n, double tol,
                               dpa_error *err)
{
    dpa_status st = check_x_structure(x, y, n, err);
    if (st) return st;
    if (!(tol >= 0))
        return dpa_error_set(err, DPA_EINVAL, "tradeoff points: tol must be >= 0, got %g", tol);
    if (y[n - 1] > tol || y[n - 1] < -tol)
        return dpa_error_set(err, DPA_EINVAL, "tradeoff points: y[%zu] = %g must be 0", n - 1,
                             y[n - 1]);
    for (size_t i = 0; i < n; i++) {
        if (y[i] < -tol || y[i] > 1 + tol)
            return dpa_error_set(err, DPA_EINVAL, "tradeoff points: y[%zu] = %g is outside [0, 1]",
                                 i, y[i]);
        /* y <= 1 - x, exactly when tol = 0: x + y - 1 by TwoSum */
        double s = x[i] + y[i], bv = s - x[i], e = (x[i] - (s - bv)) + (y[i] - bv);
        double excess = (s - 1.0) + e;
        if (excess > tol)
            return dpa_error_set(err, DPA_EINVAL,
                                 "tradeoff points: y[%zu] = %.17g exceeds 1 - x = %.17g by %g "
                                 "(a tradeoff function has f(x) <= 1 - x)",
                                 i, y[i], 1 - x[i], excess);
        if (i > 0 && y[i] - y[i - 1] > tol)
            return dpa_error_set(err, DPA_EINVAL,
                                 "tradeoff points: not non-increasing at point %zu (y rises by %g)", i,
                                 y[i] - y[i - 1]);
    }
    for (size_t i = 1; i + 1 < n; i++) {
        tf_pt a, b, c;
        tf_setx(&a, x[i - 1]);
        tf_setx(&b, x[i]);
        tf_setx(&c, x[i + 1]);
        tf_sety(&a, y[i - 1] < 1 ? y[i - 1] : 1);
        tf_sety(&b, y[i] < 1 ? y[i] : 1);
        tf_sety(&c, y[i + 1] < 1 ? y[i + 1] : 1);
        if (y[i - 1] < 0.5) a.y = y[i - 1];
        if (y[i] < 0.5) b.y = y[i];
        if (y[i + 1] < 0.5) c.y = y[i + 1];
        if (dpa_fdp_below_chord(&a, &b, &c) >= 0) continue;
        double t = (x[i] - x[i - 1]) / (x[i + 1] - x[i - 1]);
        double above = y[i] - (y[i - 1] + t * (y[i + 1] - y[i - 1]));
        if (above > tol)
            return dpa_error_set(err, DPA_EINVAL,
                                 "tradeoff points: not convex at point %zu (%g above the chord of its "
                                 "neighbours)",
                                 i, above);
    }
    return DPA_OK;
}

dpa_tf *dpa_tf_lower_envelope(const double *x, const double *y, size_t n, dpa_error *err)
{
    if (check_x_structure(x, y, n, err)) return NULL;
    tf_pt *v = points_of(x, y, n, err);
    if (!v) return NULL;
    if (y[n - 1] > 0) tf_sety(&v[n - 1], 0.0); /* x = 1 there: clipped to 1 - x = 0 */
    n = dpa_fdp_normalize(v, n);
    return dpa_fdp_pl_take(v, n, err);
}

dpa_tf *dpa_tf_from_points(const double *x, const double *y, size_t n, double tol,
                           dpa_error *err)
{
    if (dpa_tf_check_points(x, y, n, tol, err)) return NULL;
    tf_pt *v = points_of(x, y, n, err);
    if (!v) return NULL;
    if (y[n - 1] > 0) tf_sety(&v[n - 1], 0.0); /* within tol of 0: lowered */
    n = dpa_fdp_normalize(v, n);
    return dpa_fdp_pl_take(v, n, err);
}

dpa_tf *dpa_fdp_as_pl(const dpa_tf *f, const dpa_tf_opts *opt, dpa_error *err)
{
    if (f->kind == TF_PL) return dpa_tf_copy(f, err);
    return dpa_fdp_closed_discretize(f, opt, err);
}

/* ---------- inspection ---------- */

const char *dpa_tf_kind_name(dpa_tf_kind k)
{
    switch (k) {
    case DPA_TF_PIECEWISE: return "piecewise";
    case DPA_TF_GAUSSIAN: return "gaussian";
    case DPA_TF_APPROX: return "approx";
    case DPA_TF_LAPLACE: return "laplace";
    }
    return NULL;
}

dpa_tf_kind dpa_tf_get_kind(const dpa_tf *f)
{
    switch (f->kind) {
    case TF_GAUSS: return DPA_TF_GAUSSIAN;
    case TF_PURE: return DPA_TF_APPROX;
    case TF_LAPLACE: return DPA_TF_LAPLACE;
    default: return DPA_TF_PIECEWISE;
    }
}

dpa_status dpa_tf_params(const dpa_tf *f, double *mu, double *eps, double *delta, dpa_error *err)
{
    if (!f) return dpa_error_set(err, DPA_EINVAL, "tradeoff params: NULL curve");
    if (f->kind == TF_PL)
        return dpa_error_set(err, DPA_EINVAL, "tradeoff params: a piecewise-linear curve has none");
    if (mu) *mu = f->kind == TF_PURE ? NAN : f->mu;
    if (eps) *eps = f->kind == TF_PURE ? f->eps : NAN;
    if (delta) *delta = f->d;
    return DPA_OK;
}

size_t dpa_tf_vertices(const dpa_tf *f, double *x, double *one_minus_x, double *y,
                       double *one_minus_y, size_t cap)
{
    if (!f || f->kind != TF_PL) return 0;
    for (size_t i = 0; i < f->n && i < cap; i++) {
        const tf_pt *p = &f->v[i];
        if (x) x[i] = tf_X(p);
        if (one_minus_x) one_minus_x[i] = tf_xprim(p) ? 1.0 - p->x : p->cx;
        if (y) y[i] = tf_Y(p);
        if (one_minus_y) one_minus_y[i] = tf_yprim(p) ? 1.0 - p->y : p->cy;
    }
    return f->n;
}

/* ---------- evaluation ---------- */

void dpa_fdp_eval_pt(const dpa_tf *f, const tf_pt *q, tf_pt *lo, tf_pt *hi)
{
    if (f->kind == TF_PL) dpa_fdp_pl_eval(f, q, lo, hi);
    else dpa_fdp_closed_eval(f, q, lo, hi);
}

/* Y of a lower (upper) result as a double rounded down (up), clamped to [0, 1] */
static double y_down(const tf_pt *p)
{
    double y = tf_yprim(p) ? p->y : tf_one_minus_dn(p->cy);
    return y < 0 ? 0 : (y > 1 ? 1 : y);
}
static double y_up(const tf_pt *p)
{
    double y = tf_yprim(p) ? p->y : tf_one_minus_up(p->cy);
    return y < 0 ? 0 : (y > 1 ? 1 : y);
}

dpa_status dpa_tf_eval_bounds(const dpa_tf *f, double x, double *lo, double *hi,
                              double *one_minus_lo, double *one_minus_hi, dpa_error *err)
{
    if (!f) return dpa_error_set(err, DPA_EINVAL, "tradeoff eval: NULL curve");
    if (!(x >= 0) || !(x <= 1))
        return dpa_error_set(err, DPA_EINVAL, "tradeoff eval: x must be in [0, 1], got %g", x);
    tf_pt q = { 0, 1, 0, 1 }, l, h;
    tf_setx(&q, x);
    dpa_fdp_eval_pt(f, &q, &l, &h);
    if (lo) *lo = y_down(&l);
    if (hi) *hi = y_up(&h);
    if (one_minus_lo) {
        double c = tf_yprim(&h) ? tf_one_minus_dn(h.y) : h.cy;
        *one_minus_lo = c < 0 ? 0 : (c > 1 ? 1 : c);
    }
    if (one_minus_hi) {
        double c = tf_yprim(&l) ? tf_one_minus_up(l.y) : l.cy;
        *one_minus_hi = c < 0 ? 0 : (c > 1 ? 1 : c);
    }
    return DPA_OK;
}

dpa_status dpa_tf_eval(const dpa_tf *f, double x, double *y, dpa_error *err)
{
    if (!y) return dpa_error_set(err, DPA_EINVAL, "tradeoff eval: NULL output");
    return dpa_tf_eval_bounds(f, x, y, NULL, NULL, NULL, err);
}

/* ---------- validity ---------- */

dpa_status dpa_tf_check(const dpa_tf *f, double tol, dpa_error *err)
{
    if (!f) return dpa_error_set(err, DPA_EINVAL, "tradeoff check: NULL curve");
    if (!(tol >= 0)) return dpa_error_set(err, DPA_EINVAL, "tradeoff check: tol must be >= 0");
    if (f->kind != TF_PL) return DPA_OK;
    const tf_pt *v = f->v;
    size_t n = f->n;
    if (n == 0) return dpa_error_set(err, DPA_EINVAL, "tradeoff check: no vertices");
    if (!(tf_xprim(&v[0]) && v[0].x == 0))
        return dpa_error_set(err, DPA_EINVAL, "tradeoff check: the first vertex is not at x = 0");
    if (tf_Y(&v[n - 1]) != 0)
        return dpa_error_set(err, DPA_EINVAL, "tradeoff check: the last vertex is not at y = 0");
    tf_pt one = { 0, 1, 0, 1 };
    tf_setcx(&one, 0.0); /* X = 1, Y = 0 */
    for (size_t i = 0; i < n; i++) {
        const tf_pt *p = &v[i];
        double X = tf_X(p), Y = tf_Y(p);
        if (!(X >= 0 && X <= 1) || !(Y >= -tol && Y <= 1 + tol))
            return dpa_error_set(err, DPA_EINVAL, "tradeoff check: vertex %zu (%g, %g) outside [0,1]^2",
                                 i, X, Y);
        /* Y <= 1 - X: X + Y <= 1 = the sum at (1, 0) */
        if (dpa_fdp_cmp_sum(p, &one) > 0) {
            double ex = (X + Y) - 1.0;
            if (ex > tol)
                return dpa_error_set(err, DPA_EINVAL,
                                     "tradeoff check: vertex %zu exceeds 1 - x by %g", i, ex);
        }
        if (i > 0) {
            if (tf_cmpx(&v[i - 1], p) >= 0)
                return dpa_error_set(err, DPA_EINVAL, "tradeoff check: x not increasing at vertex %zu",
                                     i);
            if (tf_cmpy(&v[i - 1], p) < 0 && tf_dy(&v[i - 1], p) > tol)
                return dpa_error_set(err, DPA_EINVAL,
                                     "tradeoff check: not non-increasing at vertex %zu (rises by %g)", i,
                                     tf_dy(&v[i - 1], p));
        }
        if (i > 0 && i + 1 < n && dpa_fdp_below_chord(&v[i - 1], p, &v[i + 1]) < 0) {
            double w1 = tf_dx(&v[i - 1], p), w = tf_dx(&v[i - 1], &v[i + 1]);
            double above = tf_dy(&v[i - 1], p) - tf_dy(&v[i - 1], &v[i + 1]) * (w1 / w);
            if (above > tol)
                return dpa_error_set(err, DPA_EINVAL,
                                     "tradeoff check: not convex at vertex %zu (%g above the chord)", i,
                                     above);
        }
    }
    return DPA_OK;
}

dpa_status dpa_tf_symmetry_defect(const dpa_tf *f, double *defect, dpa_error *err)
{
    if (!f || !defect) return dpa_error_set(err, DPA_EINVAL, "symmetry_defect: NULL argument");
    if (f->kind != TF_PL) {
        *defect = 0.0; /* G_mu, f_{eps,delta}, Laplace (x) f_{0,d} are symmetric */
        return DPA_OK;
    }
    dpa_tf *g = dpa_fdp_pl_inverse(f, err);
    if (!g) return err ? err->status : DPA_ENOMEM;
    /* |f - g| is piecewise linear with kinks at the vertices of f and g:
     * its maximum is at one of them */
    double worst = 0;
    for (int side = 0; side < 2; side++) {
        const dpa_tf *h = side ? g : f;
        for (size_t i = 0; i < h->n; i++) {
            tf_pt q = h->v[i], fl, fh, gl, gh;
            dpa_fdp_eval_pt(f, &q, &fl, &fh);
            dpa_fdp_eval_pt(g, &q, &gl, &gh);
            double a = tf_dy(&gl, &fh), b = tf_dy(&fl, &gh);
            double m = a > b ? a : b;
            if (m > worst) worst = m;
        }
    }
    dpa_tf_free(g);
    *defect = tf_raise(worst, 4);
    return DPA_OK;
}

int dpa_tf_is_symmetric(const dpa_tf *f, double tol)
{
    double d;
    if (dpa_tf_symmetry_defect(f, &d, NULL) != DPA_OK) return 0;
    return d <= tol;
}

dpa_status dpa_tf_fixed_point(const dpa_tf *f, double *lo, double *hi, dpa_error *err)
{
    if (!f || !lo || !hi) return dpa_error_set(err, DPA_EINVAL, "fixed_point: NULL argument");
    /* f(x) - x decreases strictly; x* <= 1/2 since f(x) <= 1 - x */
    tf_pt q = { 0, 1, 0, 1 }, l, h;
    /* lo: the largest x found with f_lo(x) > x (then x < x*) */
    double a = 0, b = 0.5;
    tf_setx(&q, 0.0);
    dpa_fdp_eval_pt(f, &q, &l, &h);
    if (!(y_down(&l) > 0)) a = b = 0; /* f(0) may be 0: x* = 0 */
    for (int i = 0; i < 200 && b - a > 0; i++) {
        double m = 0.5 * (a + b);
        if (m <= a || m >= b) break;
        tf_setx(&q, m);
        dpa_fdp_eval_pt(f, &q, &l, &h);
        if (y_down(&l) > m) a = m;
        else b = m;
    }
    *lo = a;
    /* hi: the smallest x found with f_hi(x) < x */
    a = 0;
    b = 0.5;
    tf_setcx(&q, 0.5);
    dpa_fdp_eval_pt(f, &q, &l, &h);
    if (!(y_up(&h) < 0.5)) a = b = 0.5;
    for (int i = 0; i < 200 && b - a > 0; i++) {
        double m = 0.5 * (a + b);
        if (m <= a || m >= b) break;
        tf_setx(&q, m);
        dpa_fdp_eval_pt(f, &q, &l, &h);
        if (y_up(&h) < m) b = m;
        else a = m;
    }
    *hi = b;
    if (*hi < *lo) *hi = *lo;
    return DPA_OK;
}

/* Closed-form tradeoff functions: G_mu (GDP eq 6), f_{eps,0} (GDP eq 5) and
 * the Laplace curve (GDP Lemma A.6), each possibly tensored with f_{0,d}
 * (GDP eq 13): certified evaluation, certified privacy profiles, and
 * discretization into supporting lines.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Error budgets (docs/fdp.md §6): elementary functions TF_EPS_ELEM = 4u,
 * dpa_log_ndtr TF_EPS_NDTR = 16u relative to the log, every other operation
 * one ulp (tf_up/tf_dn); the Gaussian profile is dpa_exact_delta's certified
 * bracket (src/exact/gaussian.c). */
#include <stdlib.h>
#include <string.h>
#include "exact/exact.h"
#include "fdp/fdp.h"

/* ---------- Phi and its inverse, bracketed ---------- */

/* Phi(a) as a point's Y, lower (upper = 0) or upper bound */
static void phi_point(double a, int upper, tf_pt *out)
{
    if (a == -INFINITY) { dpa_fdp_put_y(out, 0.0, 0, upper); return; }
    if (a == INFINITY) { dpa_fdp_put_y(out, 0.0, 1, upper); return; }
    if (a < 0) {
        double L = dpa_log_ndtr(a), e = TF_EPS_NDTR * fabs(L) + 1e-300;
        double y = upper ? tf_exp_up(tf_up(L + e)) : tf_exp_dn(tf_dn(L - e));
        dpa_fdp_put_y(out, y, 0, upper);
    } else {
        double L = dpa_log_ndtr(-a), e = TF_EPS_NDTR * fabs(L) + 1e-300; /* log(1 - Phi(a)) */
        double c = upper ? tf_exp_dn(tf_dn(L - e)) : tf_exp_up(tf_up(L + e));
        dpa_fdp_put_y(out, c, 1, upper);
    }
}

void dpa_fdp_ndtri_bracket(double p, double *lo, double *hi)
{
    if (!(p > 0)) { *lo = *hi = -INFINITY; return; }
    if (p >= 1) { *lo = *hi = INFINITY; return; }
    double lp = log(p), elp = TF_EPS_ELEM * fabs(lp) + 1e-300;
    double need_lo = tf_dn(lp - elp), need_hi = tf_up(lp + elp);
    double z0 = dpa_ndtri(p);
    if (!isfinite(z0)) z0 = dpa_ndtri_log(lp);
    double z = z0, step = 8 * TF_U * (fabs(z0) + 1) + 1e-300;
    for (int i = 0; i < 400; i++) {
        double L = dpa_log_ndtr(z), e = TF_EPS_NDTR * fabs(L) + 1e-300;
        if (tf_up(L + e) <= need_lo) break;
        z -= step;
        step *= 2;
    }
    *lo = z;
    z = z0;
    step = 8 * TF_U * (fabs(z0) + 1) + 1e-300;
    for (int i = 0; i < 400; i++) {
        double L = dpa_log_ndtr(z), e = TF_EPS_NDTR * fabs(L) + 1e-300;
        if (tf_dn(L - e) >= need_hi || L == 0.0) break;
        z += step;
        step *= 2;
    }
    *hi = z;
}

/* bounds on X and 1 - X of a point as doubles */
static void x_bounds(const tf_pt *q, double *xl, double *xh, double *cl, double *ch)
{
    if (tf_xprim(q)) {
        *xl = *xh = q->x;
        *cl = tf_one_minus_dn(q->x);
        *ch = q->cx;
    } else {
        *cl = *ch = q->cx;
        *xl = tf_one_minus_dn(q->cx);
        *xh = tf_one_minus_up(q->cx);
    }
    if (*xh > 1) *xh = 1;
    if (*ch > 1) *ch = 1;
}

/* ---------- the undecorated closed forms (d = 0) ---------- */

static void gauss_eval(double mu, const tf_pt *q, int upper, tf_pt *out)
{
    /* G_mu(X) = Phi(z - mu), z = Phi^{-1}(1 - X) (GDP eq 6); increasing in z */
    double zl, zh;
    if (tf_xprim(q)) {
        if (q->x <= 0) { dpa_fdp_put_y(out, 0.0, 1, upper); return; } /* G(0) = 1 */
        double wl, wh;
        dpa_fdp_ndtri_bracket(q->x, &wl, &wh); /* Phi^{-1}(1 - x) = -Phi^{-1}(x) */
        zl = -wh;
        zh = -wl;
    } else {
        if (q->cx <= 0) { dpa_fdp_put_y(out, 0.0, 0, upper); return; } /* G(1) = 0 */
        dpa_fdp_ndtri_bracket(q->cx, &zl, &zh);
    }
    if (upper) phi_point(tf_up(zh - mu), 1, out);
    else phi_point(tf_dn(zl - mu), 0, out);
}

static void pure_eval(double eps, const tf_pt *q, int upper, tf_pt *out)
{
    /* f_{eps,0}(X) = max{0, 1 - e^eps X, e^-eps (1 - X)} (GDP eq 5) */
    double xl, xh, cl, ch;
    x_bounds(q, &xl, &xh, &cl, &ch);
    tf_pt a, b;
    if (!upper) {
        double c1 = tf_up(tf_exp_up(eps) * xh); /* 1 - steep line */
        double y2 = tf_dn(tf_exp_dn(-eps) * cl);
        dpa_fdp_put_y(&a, c1, 1, 0);
        dpa_fdp_put_y(&b, y2, 0, 0);
    } else {
        double c1 = tf_dn(tf_exp_dn(eps) * xl);
        double y2 = tf_up(tf_exp_up(-eps) * ch);
        dpa_fdp_put_y(&a, c1, 1, 1);
        dpa_fdp_put_y(&b, y2, 0, 1);
    }
    *out = tf_cmpy(&a, &b) >= 0 ? a : b;
    if (tf_yprim(out) && out->y < 0) dpa_fdp_put_y(out, 0.0, 0, upper);
}

static void laplace_eval(double mu, const tf_pt *q, int upper, tf_pt *out)
{
    /* GDP Lemma A.6: 1 - e^mu x on [0, b], e^-mu/(4x) on [b, 1/2],
     * e^-mu (1 - x) on [1/2, 1], b = e^-mu/2.  Both lines support the curve
     * everywhere; the hyperbola only on [b, 1/2]. */
    double xl, xh, cl, ch;
    x_bounds(q, &xl, &xh, &cl, &ch);
    double blo = tf_exp_dn(-mu) * 0.5, bhi = tf_exp_up(-mu) * 0.5;
    tf_pt a, b, c;
    if (!upper) {
        dpa_fdp_put_y(&a, tf_up(tf_exp_up(mu) * xh), 1, 0);
        dpa_fdp_put_y(&b, tf_dn(tf_exp_dn(-mu) * cl), 0, 0);
        *out = tf_cmpy(&a, &b) >= 0 ? a : b;
        if (xl >= bhi && xh <= 0.5) {
            dpa_fdp_put_y(&c, tf_dn(tf_exp_dn(-mu) / (4 * xh)), 0, 0);
            if (tf_cmpy(&c, out) > 0) *out = c;
        }
        if (tf_yprim(out) && out->y < 0) dpa_fdp_put_y(out, 0.0, 0, 0);
        return;
    }
    int steep = xh <= blo, flat = xl >= 0.5, mid = xl >= bhi && xh <= 0.5;
    dpa_fdp_put_y(&a, tf_dn(tf_exp_dn(mu) * xl), 1, 1);
    dpa_fdp_put_y(&b, tf_up(tf_exp_up(-mu) * ch), 0, 1);
    if (xl > 0) dpa_fdp_put_y(&c, tf_up(tf_exp_up(-mu) / (4 * xl)), 0, 1);
    else dpa_fdp_put_y(&c, 1.0, 0, 1);
    if (steep) *out = a;
    else if (flat) *out = b;
    else if (mid) *out = c;
    else {
        /* near a junction (the curve is C^1 there): the largest candidate */
        *out = tf_cmpy(&a, &b) >= 0 ? a : b;
        if (tf_cmpy(&c, out) > 0) *out = c;
    }
}

static void base_eval(const dpa_tf *f, const tf_pt *q, int upper, tf_pt *out)
{
    switch (f->kind) {
    case TF_GAUSS: gauss_eval(f->mu, q, upper, out); break;
    case TF_PURE: pure_eval(f->eps, q, upper, out); break;
    case TF_LAPLACE: laplace_eval(f->mu, q, upper, out); break;
    default: dpa_fdp_put_y(out, 0.0, 0, upper); break;
    }
}

void dpa_fdp_closed_eval(const dpa_tf *f, const tf_pt *q, tf_pt *lo, tf_pt *hi)
{
    double d = f->d;
    if (d <= 0) {
        base_eval(f, q, 0, lo);
        base_eval(f, q, 1, hi);
        return;
    }
    if (d >= 1) {
        dpa_fdp_put_y(lo, 0.0, 0, 0);
        dpa_fdp_put_y(hi, 0.0, 0, 1);
        return;
    }
    /* (1 - d) g(X'), X' = X / (1 - d), 1 - X' = (1 - X - d)/(1 - d); g is
     * non-increasing: the lower value at an upper bound of X' */
    double omd_lo = tf_dn(1.0 - d), omd_hi = tf_up(1.0 - d);
    double xl, xh, cl, ch;
    x_bounds(q, &xl, &xh, &cl, &ch);
    tf_pt qa = { 0, 1, 0, 1 }, qb = { 0, 1, 0, 1 }, gl, gh;
    int zero_lo = 0, zero_hi = 0;
    {   /* qa: X~ >= X' */
        double xa = tf_up(xh / omd_lo), num = tf_dn(cl - d);
        double ca = num > 0 ? tf_dn(num / omd_hi) : 0.0;
        if (num <= 0) zero_lo = 1;
        else if (xa < 0.5) tf_setx(&qa, xa);
        else if (ca <= 0.5) tf_setcx(&qa, ca);
        else tf_setcx(&qa, 0.5);
    }
    {   /* qb: X~ <= X' */
        double xb = tf_dn(xl / omd_hi), num = tf_up(ch - d);
        double cb = tf_up(num / omd_lo);
        if (num <= 0) zero_hi = 1;
        else if (xb < 0.5) tf_setx(&qb, xb > 0 ? xb : 0.0);
        else if (cb <= 0.5) tf_setcx(&qb, cb);
        else tf_setcx(&qb, 0.5);
    }
    if (zero_lo) dpa_fdp_put_y(&gl, 0.0, 0, 0);
    else base_eval(f, &qa, 0, &gl);
    if (zero_hi) dpa_fdp_put_y(&gh, 0.0, 0, 1);
    else base_eval(f, &qb, 1, &gh);
    /* scale: Y = (1-d) G, 1 - Y = d + (1-d)(1 - G) */
    if (tf_yprim(&gl)) dpa_fdp_put_y(lo, tf_dn(omd_lo * gl.y), 0, 0);
    else dpa_fdp_put_y(lo, tf_up(d + tf_up(omd_hi * gl.cy)), 1, 0);
    if (tf_yprim(&gh)) dpa_fdp_put_y(hi, tf_up(omd_hi * gh.y), 0, 1);
    else dpa_fdp_put_y(hi, tf_dn(d + tf_dn(omd_lo * gh.cy)), 1, 1);
}

/* ---------- profiles ---------- */

/* upper bound on delta(eps) of the undecorated closed form (symmetric) */
static double base_delta(const dpa_tf *f, double eps)
{
    switch (f->kind) {
    case TF_GAUSS: {
        double up, lo;
        dpa_exact_delta(f->mu, eps, &up, &lo);
        return up;
    }
    case TF_PURE: {
        /* randomized response (LT Thm 3.4 with delta = 0): 0 for t >= eps0,
         * -expm1(t - eps0)/(1 + e^-eps0) on (-eps0, eps0), -expm1(t) below */
        double e0 = f->eps;
        if (eps >= e0) return 0.0;
        if (eps > -e0) {
            double num = tf_raise(-expm1(tf_dn(eps - e0)), 4);
            double den = tf_dn(1.0 + tf_exp_dn(-e0));
            return tf_up(num / den);
        }
        return tf_raise(-expm1(eps), 4);
    }
    case TF_LAPLACE: {
        /* 1 - inf_x (e^eps x + f(x)): the tangent point is on the hyperbola
         * for |eps| <= mu (value e^{(eps - mu)/2}), at x = 1 below */
        double mu = f->mu;
        if (eps >= mu) return 0.0;
        if (eps >= -mu) return tf_raise(-expm1(tf_dn(0.5 * tf_dn(eps - mu))), 4);
        return tf_raise(-expm1(eps), 4);
    }
    default:
        return 1.0;
    }
}

double dpa_fdp_closed_delta(const dpa_tf *f, double eps)
{
    double b = base_delta(f, eps), d = f->d;
    if (b > 1) b = 1;
    if (d <= 0) return b;
    /* the profile of g (x) f_{0,d}: d + (1 - d) delta_g (both directions) */
    double r = tf_up(d + tf_up(tf_up(1.0 - d) * b));
    return r < 1 ? r : 1.0;
}

/* ---------- discretization ---------- */

void dpa_fdp_qp_line(double eps, double delta, tf_line *l)
{
    l->has_b = 0;
    /* f(x) >= 1 - delta_QP(eps) - e^eps x: anchor (0, 1 - delta) */
    tf_setx(&l->a, 0.0);
    if (delta <= 0.5) tf_setcy(&l->a, delta);
    else tf_sety(&l->a, tf_dn(1.0 - delta));
    l->s_lo = tf_exp_dn(eps);
    l->s_hi = tf_exp_up(eps);
}

void dpa_fdp_pq_line(double eps, double delta, tf_line *l)
{
    l->has_b = 0;
    /* f(x) >= e^-eps (1 - delta_PQ(eps) - x): anchor (1 - delta, 0) */
    tf_sety(&l->a, 0.0);
    if (delta <= 0.5) tf_setcx(&l->a, delta);
    else {
        double x = tf_dn(1.0 - delta);
        tf_setx(&l->a, x > 0 ? x : 0.0);
    }
    l->s_lo = tf_exp_dn(-eps);
    l->s_hi = tf_exp_up(-eps);
}

static dpa_tf *identity_pl(dpa_error *err)
{
    dpa_tf *g = dpa_fdp_alloc(TF_PL, 2, err);
    if (!g) return NULL;
    tf_setx(&g->v[0], 0.0);
    tf_setcy(&g->v[0], 0.0);
    tf_setcx(&g->v[1], 0.0);
    tf_sety(&g->v[1], 0.0);
    return g;
}

static dpa_tf *pure_pl(double eps, dpa_error *err)
{
    if (eps == 0) return identity_pl(err);
    /* RR_eps: outcome 1 with P = 1/(1+e^eps), Q = e^eps/(1+e^eps) (ratio
     * e^eps), outcome 2 the reverse; the ratios are exact, the masses within
     * 6u (exp, one addition, one division) */
    tf_atom a[2];
    double p1 = 1.0 / (1.0 + exp(eps)), q1 = 1.0 / (1.0 + exp(-eps));
    a[0] = (tf_atom){ p1, q1, 6 * TF_U, eps, 0.0 };
    a[1] = (tf_atom){ q1, p1, 6 * TF_U, -eps, 0.0 };
    return dpa_fdp_from_atoms(a, 2, 0.0, 0.0, err);
}

/* How far the pair of tangent lines at eps a < b is from the target: the
 * gap between the true curve and the lines' intersection (the largest gap
 * between two tangents of a convex curve), divided by what the options
 * allow there: rel_tol times min(f, 1 - f) at the vertex, and (for the
 * mirror image on the other side of the diagonal, which a symmetric curve
 * shares) rel_tol times min(x, 1 - x) times the slope; or abs_tol.  At most
 * 1 means good enough. */
static double badness(const dpa_tf *base, double a, double b, const dpa_tf_opts *o)
{
    tf_line la, lb;
    dpa_fdp_qp_line(b, base_delta(base, b), &la); /* steeper */
    dpa_fdp_qp_line(a, base_delta(base, a), &lb);
    tf_pt w;
    if (!dpa_fdp_isect(&la, &lb, &w)) return 0;
    tf_pt ya, yb, fhi;
    dpa_fdp_line_eval(&la, &w, 0, &ya);
    dpa_fdp_line_eval(&lb, &w, 0, &yb);
    const tf_pt *v = tf_cmpy(&ya, &yb) <= 0 ? &ya : &yb;
    base_eval(base, &w, 1, &fhi);
    double gap = tf_dy(v, &fhi);
    if (!(gap > o->abs_tol)) return 0;
    double sy = tf_yprim(v) ? v->y : v->cy, sx = tf_xprim(&w) ? w.x : w.cx;
    double slope = exp(0.5 * (a + b));
    /* values below the tail are not refined (nor representable: x ~ 1e-300
     * is near the end of the normal doubles) */
    if (sy < o->tail || sx < o->tail) return 0;
    double ry = gap / (o->rel_tol * sy + 1e-300), rx = gap / (o->rel_tol * sx * slope + 1e-300);
    double r = ry > rx ? ry : rx;
    return isfinite(r) ? r : 1e300;
}

typedef struct ivl { double a, b, bad; } ivl;

/* max-heap of intervals by badness */
static void heap_push(ivl *h, size_t *n, ivl v)
{
    size_t i = (*n)++;
    h[i] = v;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (h[p].bad >= h[i].bad) break;
        ivl t = h[p];
        h[p] = h[i];
        h[i] = t;
        i = p;
    }
}

static ivl heap_pop(ivl *h, size_t *n)
{
    ivl top = h[0];
    h[0] = h[--(*n)];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < *n && h[l].bad > h[m].bad) m = l;
        if (r < *n && h[r].bad > h[m].bad) m = r;
        if (m == i) break;
        ivl t = h[m];
        h[m] = h[i];
        h[i] = t;
        i = m;
    }
    return top;
}

static int cmp_double(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return (a > b) - (a < b);
}

/* Tangent slopes e^eps, eps in [0, emax]: the interval whose tangent pair
 * is worst (relative to the target) is split first, until every pair meets
 * the target or the line budget is spent.  Returns the sorted eps values. */
static double *tangent_grid(const dpa_tf *base, double emax, size_t cap, const dpa_tf_opts *o,
                            size_t *ne)
{
    size_t n0 = 64 < cap ? 64 : cap - 1;
    ivl *h = malloc((cap + 1) * sizeof *h);
    if (!h) return NULL;
    size_t nh = 0;
    for (size_t i = 0; i < n0; i++) {
        ivl v = { emax * (double)i / (double)n0, emax * (double)(i + 1) / (double)n0, 0 };
        v.bad = badness(base, v.a, v.b, o);
        heap_push(h, &nh, v);
    }
    while (nh + 1 < cap && nh > 0 && h[0].bad > 1) {
        ivl w = heap_pop(h, &nh);
        double m = 0.5 * (w.a + w.b);
        /* an interval this narrow cannot improve (round-off of the lines) */
        if (!(m > w.a && m < w.b) || w.b - w.a <= 1e-9 * (1 + fabs(w.a))) {
            w.bad = 0;
            heap_push(h, &nh, w);
            continue;
        }
        ivl l = { w.a, m, 0 }, r = { m, w.b, 0 };
        l.bad = badness(base, l.a, l.b, o);
        r.bad = badness(base, r.a, r.b, o);
        heap_push(h, &nh, l);
        heap_push(h, &nh, r);
    }
    double *e = malloc((nh + 1) * sizeof *e);
    if (!e) {
        free(h);
        return NULL;
    }
    for (size_t i = 0; i < nh; i++) e[i] = h[i].a;
    e[nh] = emax;
    free(h);
    qsort(e, nh + 1, sizeof *e, cmp_double);
    *ne = nh + 1;
    return e;
}

dpa_tf *dpa_fdp_closed_discretize(const dpa_tf *f, const dpa_tf_opts *opt, dpa_error *err)
{
    dpa_tf_opts o;
    dpa_fdp_opts_resolve(opt, &o);
    dpa_tf *g = NULL;
    dpa_tf base = *f;
    base.d = 0;
    if (f->kind == TF_PURE) g = pure_pl(f->eps, err);
    else if (f->mu == 0) g = identity_pl(err);
    else {
        /* eps range: up to where delta falls below the tail (Laplace: mu,
         * where delta reaches 0 and the steep line is exact) */
        double emax;
        if (f->kind == TF_LAPLACE) emax = f->mu;
        else {
            emax = f->mu * (0.5 * f->mu + 1.0);
            while (base_delta(&base, emax) > o.tail && emax < 1e7) emax *= 1.5;
        }
        size_t cap = o.max_vertices / 2 > 8 ? o.max_vertices / 2 : 8, ne = 0;
        double *E = tangent_grid(&base, emax, cap, &o, &ne);
        if (!E) {
            dpa_error_set(err, DPA_ENOMEM, "tradeoff: out of memory (discretization)");
            return NULL;
        }
        tf_line *lines = malloc(2 * ne * sizeof *lines);
        if (!lines) {
            free(E);
            dpa_error_set(err, DPA_ENOMEM, "tradeoff: out of memory (discretization)");
            return NULL;
        }
        size_t nl = 0;
        for (size_t i = 0; i < ne; i++) {
            double dl = base_delta(&base, E[i]);
            if (!(dl < 1)) continue;
            dpa_fdp_qp_line(E[i], dl, &lines[nl++]);
            dpa_fdp_pq_line(E[i], dl, &lines[nl++]); /* symmetric: delta_PQ = delta_QP */
        }
        free(E);
        g = dpa_fdp_envelope(lines, nl, err);
        free(lines);
    }
    if (!g || f->d <= 0) return g;
    dpa_tf *s = dpa_fdp_pl_scale(g, f->d, err);
    dpa_tf_free(g);
    return s;
}

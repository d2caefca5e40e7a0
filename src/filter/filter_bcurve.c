/* A residue filter's budget given as a tradeoff curve: its hockey-stick
 * curve bounded below by supporting lines (RF Prop 9; docs/filters.md "The
 * general residue filter").
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * For a tradeoff function g, h_B(x) = 1 + g*(-x) = 1 - inf_a (x a + g(a))
 * (RF Prop 9 for the symmetric g: g^-1 = g), and for every a the value
 * x a + g(a) bounds the infimum from above, so (1 - g(a)) - x a is a line
 * below h_B.  For g = max(f, f^-1) with f piecewise linear the infimum is
 * attained at a vertex of g: a vertex of f or of f^-1 or a crossing of the
 * two; the crossings are left out (a lower bound still, only less tight).
 * 1 - g(a) = min(1 - f(a), 1 - f^-1(a)) is taken from the certified
 * complements of dpa_tf_eval_bounds (full relative accuracy near g = 1,
 * where the small deltas are), so every line is a certified lower bound. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "filter/filter_bcurve.h"
#include "filter/filter_internal.h"
#include "num/num.h"
#include "dpacct/tradeoff.h"
#include "dpacct/event.h"

void dpa_f_bcurve_free(dpa_f_bcurve *c)
{
    if (!c) return;
    free(c->a);
    free(c->om);
    free(c->px);
    free(c->py);
    free(c);
}

static int cmp_d(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

typedef struct { double a, b; } pt;
static int cmp_pt(const void *x, const void *y)
{
    const pt *p = x, *q = y;
    int c = (p->a > q->a) - (p->a < q->a);
    return c ? c : (p->b > q->b) - (p->b < q->b); /* equal alphas: the smallest beta first */
}

/* f from the points as the tradeoff_curve leaf reads them */
static dpa_tf *curve_of_points(const double *x, const double *y, size_t n, dpa_error *err)
{
    pt *v = malloc((n + 2) * sizeof *v);
    double *xs = malloc((n + 2) * sizeof *xs), *ys = malloc((n + 2) * sizeof *ys);
    dpa_tf *f = NULL;
    if (!v || !xs || !ys) {
        dpa_error_set(err, DPA_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        if (!(x[i] >= 0 && x[i] <= 1 && y[i] >= 0 && y[i] <= 1)) {
            dpa_error_set(err, DPA_EINVAL, "/budget/tradeoff/points/%zu: alpha and beta must be in [0, 1]", i);
            goto out;
        }
        if (x[i] + y[i] > 1) {
            dpa_error_set(err, DPA_EINVAL, "/budget/tradeoff/points/%zu: beta > 1 - alpha (a tradeoff function lies on or "
                                           "below the diagonal, GDP Prop 2.2)", i);
            goto out;
        }
        v[i].a = x[i];
        v[i].b = y[i];
    }
    qsort(v, n, sizeof *v, cmp_pt);
    size_t k = 0;
    if (v[0].a > 0) xs[k] = 0, ys[k++] = v[0].b; /* f is non-increasing: f(a) >= beta_first before it */
    for (size_t i = 0; i < n; i++) {
        if (k && xs[k - 1] == v[i].a) continue; /* the smallest beta of equal alphas (sorted first) */
        xs[k] = v[i].a, ys[k++] = v[i].b;
    }
    if (!(xs[k - 1] == 1 || ys[k - 1] == 0)) xs[k] = 1, ys[k++] = 0; /* f >= 0 */
    f = dpa_tf_lower_envelope(xs, ys, k, err);
out:
    free(v);
    free(xs);
    free(ys);
    return f;
}

dpa_f_bcurve *dpa_f_bcurve_new(const double *x, const double *y, size_t n, int eps_delta, dpa_error *err)
{
    if (n == 0 || n > DPA_MAX_TRADEOFF_POINTS) {
        dpa_error_set(err, DPA_EINVAL, "/budget/tradeoff: 1 to %d points", DPA_MAX_TRADEOFF_POINTS);
        return NULL;
    }
    dpa_f_bcurve *c = calloc(1, sizeof *c);
    dpa_tf *f = NULL, *fi = NULL;
    double *vx = NULL, *vy = NULL;
    if (!c) goto nomem;
    c->eps_delta = eps_delta;
    c->npts = n;
    c->px = malloc(n * sizeof *c->px);
    c->py = malloc(n * sizeof *c->py);
    if (!c->px || !c->py) goto nomem;
    memcpy(c->px, x, n * sizeof *x);
    memcpy(c->py, y, n * sizeof *y);
    if (eps_delta) {
        for (size_t i = 0; i < n; i++)
            if (!(x[i] >= 0 && x[i] <= 700 && y[i] >= 0 && y[i] <= 1)) {
                dpa_error_set(err, DPA_EINVAL, "/budget/tradeoff/eps_delta/%zu: eps must be in [0, 700] and delta in [0, 1]", i);
                goto fail;
            }
        f = dpa_tf_from_eps_delta(x, y, n, err);
    } else {
        f = curve_of_points(x, y, n, err);
    }
    if (!f || !(fi = dpa_tf_inverse(f, err))) goto fail;
    size_t nv = dpa_tf_vertices(f, NULL, NULL, NULL, NULL, 0);
    vx = malloc((nv ? nv : 1) * sizeof *vx);
    vy = malloc((nv ? nv : 1) * sizeof *vy);
    c->a = malloc((2 * nv + 1) * sizeof *c->a);
    c->om = malloc((2 * nv + 1) * sizeof *c->om);
    if (!vx || !vy || !c->a || !c->om) goto nomem;
    dpa_tf_vertices(f, vx, NULL, vy, NULL, nv);
    size_t k = 0;
    c->a[k++] = 0;
    for (size_t i = 0; i < nv; i++) {
        if (vx[i] > 0) c->a[k++] = vx[i]; /* vertices of f */
        if (vy[i] > 0) c->a[k++] = vy[i]; /* of f^-1 (the vertices swap) */
    }
    qsort(c->a, k, sizeof *c->a, cmp_d);
    size_t m = 0;
    for (size_t i = 0; i < k; i++)
        if (!m || c->a[i] != c->a[m - 1]) c->a[m++] = c->a[i];
    c->n = m;
    for (size_t j = 0; j < m; j++) {
        double o1, o2;
        if (dpa_tf_eval_bounds(f, c->a[j], NULL, NULL, &o1, NULL, err) ||
            dpa_tf_eval_bounds(fi, c->a[j], NULL, NULL, &o2, NULL, err))
            goto fail;
        c->om[j] = fmax(0.0, fmin(o1, o2));
    }
    dpa_tf_free(f);
    dpa_tf_free(fi);
    free(vx);
    free(vy);
    return c;
nomem:
    dpa_error_set(err, DPA_ENOMEM, "out of memory");
fail:
    dpa_tf_free(f);
    dpa_tf_free(fi);
    free(vx);
    free(vy);
    dpa_f_bcurve_free(c);
    return NULL;
}

double dpa_f_bcurve_line(const dpa_f_bcurve *c, size_t j, double t)
{
    if (c->a[j] == 0) return c->om[j];
    double x = dpa_f_up(exp(t) * (1 + 4 * DPA_UNIT_ROUNDOFF)); /* e^t rounded up (exp within 1 ulp) */
    return dpa_f_dn(c->om[j] - dpa_f_up(x * c->a[j]));
}

double dpa_f_bcurve_lo(const dpa_f_bcurve *c, double t, size_t *arg)
{
    double best = -INFINITY;
    size_t bj = 0;
    for (size_t j = 0; j < c->n; j++) {
        double v = dpa_f_bcurve_line(c, j, t);
        if (v > best) best = v, bj = j;
    }
    if (arg) *arg = bj;
    return best;
}

double dpa_f_bcurve_floor(const dpa_f_bcurve *c) { return c->om[0]; }

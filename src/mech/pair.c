/* Dominating pairs: tails, profile, transforms (reverse, Poisson, symmetrize).
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "mech/pair.h"
#include "num/num.h"

#define LOG2 0.69314718055994530942

/* log Phibar(x) and log Phi(x): the smaller one directly (accurate in the
 * tail), the other as log(1 - that), which is accurate where it is >= 1/2. */
static void ndtr_pair(double x, double *lbar, double *l)
{
    if (x > 0) {
        *lbar = dpa_log_ndtr_c(x);
        *l = dpa_log1mexp(*lbar);
    } else {
        *l = dpa_log_ndtr(x);
        *lbar = dpa_log1mexp(*l);
    }
}

static void gaussian_ctail(double mu, double t, double out[4])
{
    double m = 0.5 * mu * mu;
    ndtr_pair((t - m) / mu, &out[0], &out[1]);
    ndtr_pair((t + m) / mu, &out[2], &out[3]);
}

/* Continuous part of Laplace, eps0 = s/b (GDP Lemma A.6): on (-eps0, eps0) the
 * loss is (s - 2o)/b; with u = (eps0 - t)/2, v = (eps0 + t)/2:
 *   A_c(W>t) = (1 - e^{-u})/2,  A_c(W<t) = e^{-u}(1 - e^{-v})/2,
 *   B_c(W>t) = e^{-v}(1 - e^{-u})/2, B_c(W<t) = (1 - e^{-v})/2. */
static void laplace_ctail(double e0, double lc, double t, double out[4])
{
    if (t <= -e0) {
        out[0] = lc; out[1] = -INFINITY; out[2] = lc; out[3] = -INFINITY;
        return;
    }
    if (t >= e0) {
        out[0] = -INFINITY; out[1] = lc; out[2] = -INFINITY; out[3] = lc;
        return;
    }
    double u = 0.5 * (e0 - t), v = 0.5 * (e0 + t);
    double lu = log(-expm1(-u)), lv = log(-expm1(-v));
    out[0] = lu - LOG2;
    out[1] = -u + lv - LOG2;
    out[2] = -v + lu - LOG2;
    out[3] = lv - LOG2;
}

/* g(t) = log(1 + (e^t - 1)/q): base loss threshold of the Poisson map
 * W_q = log(q e^W + 1 - q) (LT Thm 5.1), for t > log(1-q). */
static double poisson_inverse(double q, double lq, double t)
{
    if (t > 30.0) return t - lq + log1p(-(1.0 - q) * exp(-t));
    return log(expm1(t) + q) - lq;
}

void dpa_pair_ctail(const dpa_pair *p, double t, double out[4])
{
    switch (p->kind) {
    case DPA_PAIR_ATOMS:
        out[0] = out[1] = out[2] = out[3] = -INFINITY;
        return;
    case DPA_PAIR_GAUSSIAN:
        gaussian_ctail(p->par[0], t, out);
        return;
    case DPA_PAIR_LAPLACE:
        laplace_ctail(p->par[0], p->lca, t, out);
        return;
    case DPA_PAIR_POISSON: {
        double q = p->par[0], lq = p->pre[0], l1q = p->pre[1];
        const dpa_pair *b = p->base;
        if (t <= l1q) {
            out[0] = dpa_log_add_exp(lq + b->lca, l1q + b->lcb);
            out[1] = -INFINITY;
            out[2] = b->lcb;
            out[3] = -INFINITY;
            return;
        }
        double r[4];
        dpa_pair_ctail(b, poisson_inverse(q, lq, t), r);
        out[0] = dpa_log_add_exp(lq + r[0], l1q + r[2]);
        out[1] = dpa_log_add_exp(lq + r[1], l1q + r[3]);
        out[2] = r[2];
        out[3] = r[3];
        return;
    }
    case DPA_PAIR_MIXGAUSS:
    case DPA_PAIR_LABELLED:
        p->ops->ctail(p, t, out);
        return;
    case DPA_PAIR_REVERSE: {
        double r[4];
        dpa_pair_ctail(p->base, -t, r);
        out[0] = r[3]; out[1] = r[2]; out[2] = r[1]; out[3] = r[0];
        return;
    }
    case DPA_PAIR_SYMMETRIZE: {
        /* S = R on W > 0, the reversal of R's W > 0 part on W < 0, and an
         * atom at 0 (held in the atom list).  ra0 = log A_R,c(W > 0),
         * rb0 = log B_R,c(W > 0). */
        double ra0 = p->par[0], rb0 = p->par[1], r[4];
        if (t > 0) {
            dpa_pair_ctail(p->base, t, r);
            out[0] = r[0];
            out[1] = dpa_log_add_exp(rb0, dpa_log_sub_exp_clamped(ra0, r[0]));
            out[2] = r[2];
            out[3] = dpa_log_add_exp(ra0, dpa_log_sub_exp_clamped(rb0, r[2]));
        } else if (t < 0) {
            dpa_pair_ctail(p->base, -t, r);
            out[0] = dpa_log_add_exp(ra0, dpa_log_sub_exp_clamped(rb0, r[2]));
            out[1] = r[2];
            out[2] = dpa_log_add_exp(rb0, dpa_log_sub_exp_clamped(ra0, r[0]));
            out[3] = r[0];
        } else {
            out[0] = ra0; out[1] = rb0; out[2] = rb0; out[3] = ra0;
        }
        return;
    }
    }
    out[0] = out[1] = out[2] = out[3] = -INFINITY;
}

void dpa_pair_tail_gt(const dpa_pair *p, double t, double out[2])
{
    double c[4];
    dpa_pair_ctail(p, t, c);
    double la = c[0], lb = c[2];
    for (size_t i = 0; i < p->natoms; i++) {
        const dpa_atom *a = &p->atoms[i];
        if (a->w > t) {
            la = dpa_log_add_exp(la, a->la);
            lb = dpa_log_add_exp(lb, a->lb);
        }
    }
    out[0] = la;
    out[1] = lb;
}

double dpa_pair_log_delta(const dpa_pair *p, double eps)
{
    double tl[2];
    dpa_pair_tail_gt(p, eps, tl);
    return dpa_log_sub_exp_clamped(tl[0], eps + tl[1]);
}

double dpa_pair_log_inf(const dpa_pair *p)
{
    double l = -INFINITY;
    for (size_t i = 0; i < p->natoms; i++)
        if (p->atoms[i].w == INFINITY) l = dpa_log_add_exp(l, p->atoms[i].la);
    return l;
}

void dpa_pair_free(dpa_pair *p)
{
    if (!p) return;
    dpa_pair_free(p->base);
    for (size_t i = 0; i < p->nparts; i++) dpa_pair_free(p->parts[i]);
    free(p->parts);
    free(p->lwpart);
    free(p->atoms);
    free(p->mix);
    free(p);
}

dpa_pair *dpa_pair_copy(const dpa_pair *p, dpa_error *err)
{
    dpa_pair *c = malloc(sizeof *c);
    if (!c) goto nomem;
    *c = *p;
    c->base = NULL;
    c->atoms = NULL;
    c->mix = NULL;
    c->parts = NULL;
    c->lwpart = NULL;
    c->nparts = 0;
    if (p->nmix) {
        c->mix = malloc(2 * p->nmix * sizeof *c->mix);
        if (!c->mix) { free(c); c = NULL; goto nomem; }
        memcpy(c->mix, p->mix, 2 * p->nmix * sizeof *c->mix);
    }
    if (p->natoms) {
        c->atoms = malloc(p->natoms * sizeof *c->atoms);
        if (!c->atoms) { free(c->mix); goto nomem; }
        memcpy(c->atoms, p->atoms, p->natoms * sizeof *c->atoms);
    }
    if (p->base) {
        c->base = dpa_pair_copy(p->base, err);
        if (!c->base) { dpa_pair_free(c); return NULL; }
    }
    if (p->nparts) {
        c->parts = calloc(p->nparts, sizeof *c->parts);
        c->lwpart = malloc(p->nparts * sizeof *c->lwpart);
        if (!c->parts || !c->lwpart) {
            dpa_pair_free(c);
            dpa_error_set(err, DPA_ENOMEM, "out of memory copying a dominating pair");
            return NULL;
        }
        memcpy(c->lwpart, p->lwpart, p->nparts * sizeof *c->lwpart);
        /* nparts counts the copies made: a partial copy frees cleanly */
        for (size_t i = 0; i < p->nparts; i++, c->nparts++) {
            c->parts[i] = dpa_pair_copy(p->parts[i], err);
            if (!c->parts[i]) { dpa_pair_free(c); return NULL; }
        }
    }
    return c;
nomem:
    if (c) free(c);
    dpa_error_set(err, DPA_ENOMEM, "out of memory copying a dominating pair");
    return NULL;
}

/* ---------------- transforms ---------------- */

dpa_pair *dpa_pair_alloc(dpa_pair_kind kind, size_t natoms, dpa_error *err)
{
    dpa_pair *p = calloc(1, sizeof *p);
    if (!p) {
        dpa_error_set(err, DPA_ENOMEM, "out of memory");
        return NULL;
    }
    p->kind = kind;
    p->lca = p->lcb = -INFINITY;
    if (natoms) {
        p->atoms = malloc(natoms * sizeof *p->atoms);
        if (!p->atoms) {
            free(p);
            dpa_error_set(err, DPA_ENOMEM, "out of memory (%zu atoms)", natoms);
            return NULL;
        }
    }
    p->natoms = natoms;
    return p;
}

dpa_pair *dpa_pair_nonprivate(dpa_error *err)
{
    dpa_pair *p = dpa_pair_alloc(DPA_PAIR_ATOMS, 2, err);
    if (!p) return NULL;
    p->atoms[0] = (dpa_atom){-INFINITY, -INFINITY, 0.0};
    p->atoms[1] = (dpa_atom){INFINITY, 0.0, -INFINITY};
    p->symmetric = 1;
    return p;
}

dpa_pair *dpa_pair_reverse(dpa_pair *base, dpa_error *err)
{
    if (!base) return NULL;
    if (base->symmetric) return base;
    dpa_pair *p = dpa_pair_alloc(base->kind == DPA_PAIR_ATOMS ? DPA_PAIR_ATOMS : DPA_PAIR_REVERSE,
                             base->natoms, err);
    if (!p) { dpa_pair_free(base); return NULL; }
    for (size_t i = 0; i < base->natoms; i++) {
        const dpa_atom *a = &base->atoms[base->natoms - 1 - i];
        p->atoms[i] = (dpa_atom){-a->w, a->lb, a->la};
    }
    p->lca = base->lcb;
    p->lcb = base->lca;
    p->slack_hi = base->slack_lo;
    p->slack_lo = base->slack_hi;
    if (p->kind == DPA_PAIR_ATOMS) dpa_pair_free(base);
    else p->base = base;
    return p;
}

/* W_q = log(q e^W + 1 - q) with a relative error of a few u also for
 * small |W| (log1p(q expm1(W)); the log-add-exp form loses the absolute
 * u |log q| there), for very negative W at rates near 1 (the direct form),
 * and without overflow for large W. */
double dpa_poisson_loss(double q, double w)
{
    if (w == INFINITY) return INFINITY;
    if (w == -INFINITY) return log1p(-q);
    if (w > 700) return w + log(q) + log1p((1 - q) / q * exp(-w));
    double x = q * expm1(w);
    if (x >= -0.5) return log1p(x);
    /* w < 0 and q > 1/2: log1p of a value near -1 loses accuracy; here
     * 1 - q is exact (Sterbenz) and q e^w + 1 - q has no cancellation */
    return log(q * exp(w) + (1 - q));
}

static double poisson_loss(double q, double w) { return dpa_poisson_loss(q, w); }

dpa_pair *dpa_pair_poisson(dpa_pair *base, double q, dpa_error *err)
{
    if (!base) return NULL;
    if (!(q > 0 && q <= 1)) {
        dpa_pair_free(base);
        dpa_error_set(err, DPA_EINVAL, "poisson: rate must be in (0, 1], got %g", q);
        return NULL;
    }
    if (q == 1) return base;
    double lq = log(q), l1q = log1p(-q);
    dpa_pair *p = dpa_pair_alloc(base->kind == DPA_PAIR_ATOMS ? DPA_PAIR_ATOMS : DPA_PAIR_POISSON,
                             base->natoms, err);
    if (!p) { dpa_pair_free(base); return NULL; }
    p->par[0] = q;
    p->pre[0] = lq;
    p->pre[1] = l1q;
    /* Atoms map through W_q = log(q e^W + 1 - q), a monotone map, so the
     * order is kept; A_q = qA + (1-q)B, B_q = B (LT Thm 5.1). */
    for (size_t i = 0; i < base->natoms; i++) {
        const dpa_atom *a = &base->atoms[i];
        double w = poisson_loss(q, a->w);
        p->atoms[i] = (dpa_atom){w, dpa_log_add_exp(lq + a->la, l1q + a->lb), a->lb};
    }
    p->lca = dpa_log_add_exp(lq + base->lca, l1q + base->lcb);
    p->lcb = base->lcb;
    p->slack_hi = base->slack_hi;
    p->slack_lo = base->slack_lo;
    p->symmetric = 0;
    if (p->kind == DPA_PAIR_ATOMS) dpa_pair_free(base);
    else p->base = base;
    return p;
}

dpa_pair *dpa_pair_symmetrize(dpa_pair *base, dpa_error *err)
{
    if (!base) return NULL;
    size_t npos = 0;
    for (size_t i = 0; i < base->natoms; i++)
        if (base->atoms[i].w > 0) npos++;
    dpa_pair *p = dpa_pair_alloc(base->kind == DPA_PAIR_ATOMS ? DPA_PAIR_ATOMS : DPA_PAIR_SYMMETRIZE,
                             2 * npos + 1, err);
    if (!p) { dpa_pair_free(base); return NULL; }
    double c[4];
    dpa_pair_ctail(base, 0.0, c);
    p->par[0] = c[0];
    p->par[1] = c[2];
    /* Mass at W = 0: 1 - A_R(W > 0) - B_R(W > 0) (>= 0 for a symmetric base
     * pair; see docs/sampling.md). */
    double tl[2];
    dpa_pair_tail_gt(base, 0.0, tl);
    double m0 = 1.0 - exp(tl[0]) - exp(tl[1]);
    if (m0 < 0) m0 = 0;
    size_t k = 0;
    for (size_t i = base->natoms; i-- > 0;) {
        const dpa_atom *a = &base->atoms[i];
        if (a->w > 0) p->atoms[k++] = (dpa_atom){-a->w, a->lb, a->la};
    }
    p->atoms[k++] = (dpa_atom){0.0, log(m0), log(m0)};
    for (size_t i = 0; i < base->natoms; i++) {
        const dpa_atom *a = &base->atoms[i];
        if (a->w > 0) p->atoms[k++] = *a;
    }
    p->lca = p->lcb = dpa_log_add_exp(c[0], c[2]);
    p->slack_hi = p->slack_lo = base->slack_hi + base->slack_lo;
    p->symmetric = 1;
    if (p->kind == DPA_PAIR_ATOMS) dpa_pair_free(base);
    else p->base = base;
    return p;
}

/* ---------------- support ---------------- */

typedef struct { const dpa_pair *p; int side; double ltau; } tail_ctx;

/* f(t) = log of the tail - log tau: side 0 A_c(W > t), 1 A_c(W < t),
 * 2 B_c(W > t), 3 B_c(W < t). */
static double tail_excess(const tail_ctx *c, double t)
{
    double o[4];
    dpa_pair_ctail(c->p, t, o);
    return o[c->side] - c->ltau;
}

/* Find t with tail(t) <= tau, scanning away from 0 geometrically, then
 * bisecting; for side 0 the result is an upper end, for side 1 a lower end. */
static int tail_point(const tail_ctx *c, double *out)
{
    double dir = (c->side == 0 || c->side == 2) ? 1.0 : -1.0;
    double bad = 0.0, good, step = 1.0;
    if (tail_excess(c, 0.0) <= 0) {
        /* already below: move back towards the bulk until above */
        good = 0.0;
        double t = 0.0;
        for (int i = 0; i < 2000; i++) {
            t -= dir * step;
            step *= 2;
            if (tail_excess(c, t) > 0) { bad = t; break; }
            good = t;
            if (fabs(t) > 1e15) { *out = good; return 0; }
        }
    } else {
        double t = 0.0;
        good = NAN;
        for (int i = 0; i < 2000; i++) {
            t += dir * step;
            step *= 2;
            if (tail_excess(c, t) <= 0) { good = t; break; }
            bad = t;
            if (fabs(t) > 1e15) return -1;
        }
        if (isnan(good)) return -1;
    }
    for (int i = 0; i < 200 && fabs(good - bad) > 1e-6 * (1 + fabs(good)); i++) {
        double mid = 0.5 * (good + bad);
        if (tail_excess(c, mid) <= 0) good = mid;
        else bad = mid;
    }
    *out = good;
    return 0;
}

/* Extreme finite atoms whose cumulative mass (A if which = 0, B if 1) is
 * at most half may be left out of [lo, hi]. */
static void atom_range(const dpa_pair *p, int which, double half, double *lo, double *hi)
{
    double cum = 0;
    size_t i = p->natoms;
    /* atoms beyond +-DPA_GRID_LOSS_MAX stay outside any grid (tail mass) */
    while (i > 0 && !(p->atoms[i - 1].w <= DPA_GRID_LOSS_MAX)) i--;
    while (i > 0) {
        double m = exp(which ? p->atoms[i - 1].lb : p->atoms[i - 1].la);
        if (cum + m > half && m > 0) break;
        cum += m;
        i--;
    }
    if (i > 0 && p->atoms[i - 1].w >= -DPA_GRID_LOSS_MAX) *hi = fmax(*hi, p->atoms[i - 1].w);
    cum = 0;
    size_t j = 0;
    while (j < p->natoms && !(p->atoms[j].w >= -DPA_GRID_LOSS_MAX)) j++;
    while (j < p->natoms && p->atoms[j].w <= DPA_GRID_LOSS_MAX) {
        double m = exp(which ? p->atoms[j].lb : p->atoms[j].la);
        if (cum + m > half && m > 0) break;
        cum += m;
        j++;
    }
    if (j < p->natoms && p->atoms[j].w <= DPA_GRID_LOSS_MAX) *lo = fmin(*lo, p->atoms[j].w);
}

dpa_status dpa_pair_support(const dpa_pair *p, double tau, int both, double *lo, double *hi, dpa_error *err)
{
    double l = INFINITY, h = -INFINITY;
    double half = 0.5 * tau;
    for (int which = 0; which <= (both ? 1 : 0); which++) {
        double lc = which ? p->lcb : p->lca;
        if (lc > -INFINITY) {
            tail_ctx c = {p, 2 * which, log(half)};
            double t;
            if (tail_point(&c, &t)) goto fail;
            h = fmax(h, t);
            c.side = 2 * which + 1;
            if (tail_point(&c, &t)) goto fail;
            l = fmin(l, t);
        }
        if (p->natoms) atom_range(p, which, half, &l, &h);
    }
    if (!(l <= h)) l = h = 0.0; /* no finite mass */
    *lo = l;
    *hi = h;
    return DPA_OK;
fail:
    return dpa_error_set(err, DPA_ENUMERIC, "could not bound the support of a privacy loss distribution");
}

double dpa_pair_var_estimate(const dpa_pair *p)
{
    switch (p->kind) {
    case DPA_PAIR_GAUSSIAN:
        return p->par[0] * p->par[0];
    case DPA_PAIR_LAPLACE:
        return p->par[0] * p->par[0];
    case DPA_PAIR_POISSON: {
        double v = dpa_pair_var_estimate(p->base), q = p->par[0];
        return (v > 30) ? v : q * q * expm1(v);
    }
    case DPA_PAIR_REVERSE:
    case DPA_PAIR_SYMMETRIZE:
        return dpa_pair_var_estimate(p->base);
    case DPA_PAIR_MIXGAUSS:
    case DPA_PAIR_LABELLED:
        return p->ops->var_estimate(p);
    case DPA_PAIR_ATOMS: {
        double m0 = 0, m1 = 0, m2 = 0;
        for (size_t i = 0; i < p->natoms; i++) {
            const dpa_atom *a = &p->atoms[i];
            if (!isfinite(a->w)) continue;
            double m = exp(a->la);
            m0 += m; m1 += m * a->w; m2 += m * a->w * a->w;
        }
        return m0 > 0 ? fmax(0.0, m2 / m0 - (m1 / m0) * (m1 / m0)) : 0.0;
    }
    }
    return 0;
}

/* ---------------- loss range ---------------- */

/* x rounded up by a few ulp (x may be negative or infinite). */
static double up_ulps(double x)
{
    return isfinite(x) ? x + 8 * DPA_UNIT_ROUNDOFF * (fabs(x) + 1e-300) : x;
}

void dpa_pair_loss_range(const dpa_pair *p, double *wmin, double *wmax)
{
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < p->natoms; i++) {
        const dpa_atom *a = &p->atoms[i];
        if (!isfinite(a->w) || (a->la == -INFINITY && a->lb == -INFINITY)) continue;
        lo = fmin(lo, a->w);
        hi = fmax(hi, a->w);
    }
    /* omitted atoms (slack) are not covered: dpa_pair_inf_bound counts the
     * mass above as if it were at +inf */
    double clo = INFINITY, chi = -INFINITY; /* the continuous part's range */
    switch (p->kind) {
    case DPA_PAIR_ATOMS: break;
    case DPA_PAIR_GAUSSIAN: clo = -INFINITY; chi = INFINITY; break;
    case DPA_PAIR_LAPLACE: clo = -p->par[0]; chi = p->par[0]; break;
    case DPA_PAIR_MIXGAUSS:
    case DPA_PAIR_LABELLED: p->ops->cont_range(p, &clo, &chi); break;
    case DPA_PAIR_POISSON: {
        double q = p->par[0], l1q = log1p(-q), blo, bhi;
        dpa_pair_loss_range(p->base, &blo, &bhi);
        /* W_q = log(q e^W + 1 - q) is increasing, > log(1 - q) */
        if (p->base->lca > -INFINITY || p->base->lcb > -INFINITY) {
            clo = blo == -INFINITY ? l1q : dpa_poisson_loss(q, blo);
            chi = dpa_poisson_loss(q, bhi);
        }
        break;
    }
    case DPA_PAIR_REVERSE: {
        double blo, bhi;
        dpa_pair_loss_range(p->base, &blo, &bhi);
        if (p->base->lca > -INFINITY || p->base->lcb > -INFINITY) { clo = -bhi; chi = -blo; }
        break;
    }
    case DPA_PAIR_SYMMETRIZE: {
        double blo, bhi;
        dpa_pair_loss_range(p->base, &blo, &bhi);
        if (p->base->lca > -INFINITY || p->base->lcb > -INFINITY) {
            double m = fmax(bhi, 0.0);
            clo = -m;
            chi = m;
        }
        break;
    }
    }
    lo = fmin(lo, clo);
    hi = fmax(hi, chi);
    /* the maps above round: widen by a few ulp */
    *wmin = -up_ulps(-lo);
    *wmax = up_ulps(hi);
}

double dpa_pair_inf_bound(const dpa_pair *p)
{
    /* A's atom at +inf, plus the omitted mass above the listed atoms */
    /* exp of a log mass l: the log carries ~u |l| of round-off from its own
     * computation (e.g. log(delta)), which exp turns into a relative error
     * of about u |l|; allow 4 u (|l| + 4) */
    double l = dpa_pair_log_inf(p);
    double m = (l == -INFINITY ? 0.0 : exp(l) * (1 + 4 * DPA_UNIT_ROUNDOFF * (fabs(l) + 4))) + p->slack_hi;
    return m * (1 + 4 * DPA_UNIT_ROUNDOFF);
}

void dpa_pair_sort_atoms(dpa_pair *p)
{
    for (size_t i = 1; i < p->natoms; i++) {
        dpa_atom t = p->atoms[i];
        size_t j = i;
        while (j > 0 && p->atoms[j - 1].w > t.w) {
            p->atoms[j] = p->atoms[j - 1];
            j--;
        }
        p->atoms[j] = t;
    }
}

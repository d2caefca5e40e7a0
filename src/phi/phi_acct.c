/* The phi accountant: composition state (CF Algorithm 1) and the delta and
 * eps queries, both directions of add/remove adjacency.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A composition is a list of leaves with integer counts, kept for both
 * directions (the add direction is the reversed pair, LT eq 7); adding a
 * leaf k times is O(1) (its count).  At the first query after a change each
 * direction is prepared:
 *   - no leaf has a continuous part: the atoms are composed exactly
 *     (phi_atoms.c) and H is an exact finite sum;
 *   - some leaf has a continuous part: every term of the mixture
 *       prod_i (alpha_i + gamma_i)^{*k_i}
 *     (alpha atoms, gamma continuous part) must contain a continuous factor
 *     whose characteristic function decays, which holds when at least one
 *     leaf is smooth (Gaussian, Poisson-subsampled Gaussian: alpha = 0, so
 *     the atoms-only term has mass 0).  Then the composed finite law is
 *     absolutely continuous, H(x) = sum_j a_j H_cont(x - w_j) summed over the
 *     atoms inside the quadrature (phi_invert.c), and the inversions apply.
 *     Otherwise (e.g. Laplace without a Gaussian: the term with one Laplace
 *     continuous factor has a phi decaying like 1/t) the spec is refused.
 * delta(eps) = H(eps) + (1 - prod_i (1 - inf_i)^{k_i})   (LT Thm 4.2, with the +inf mass). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "phi/phi.h"
#include "model/leaves.h"
#include "num/num.h"

#define U DPA_UNIT_ROUNDOFF
/* AUTO: Bromwich is tried when Gil-Pelaez's bracket is wider than this
 * fraction of its value (tiny deltas, where e^eps amplifies GP's absolute
 * error, docs/phi.md).  2e-5: the compensated sums (phi.h, dpa_phi_ks) made
 * GP's brackets about 5 times narrower than with the former 1e-4, so this
 * keeps Bromwich for about the same queries (measured on the 320 Gaussian
 * cases of tests/test_phi.c: the widest bracket went from 9.2e-5 to 1.7e-5
 * relative at the same run time). */
#define AUTO_BROMWICH_REL 2e-5
/* eps scan: first step, growth factor, and the largest eps scanned. */
#define SCAN_STEP0 0.05
#define SCAN_GROWTH 1.5
#define SCAN_EPS_MAX 1e6

typedef struct dirstate {
    int mode;                 /* 0 unprepared, 1 atoms, 2 continuous */
    const dpa_phi_leaf **ptrs;
    dpa_phi_atomset atoms;
    dpa_phi_gp *gp;           /* owned unless mirror */
    int mirror;               /* add direction: the remove direction's gp, reversed */
    double inf_lo, inf_up;    /* composed +inf mass bracket */
} dirstate;

struct dpa_phi {
    dpa_phi_options opt;
    size_t n, cap;
    dpa_phi_leaf *lv[2];      /* leaves per direction */
    int asym;
    int prepared;
    dirstate d[2];
};

void dpa_phi_options_init(dpa_phi_options *o)
{
    if (!o) return;
    o->inversion = DPA_PHI_AUTO;
    o->max_atoms = 100000;
    o->eps_rel_tol = 1e-10;
}

static void dir_clear(dirstate *d)
{
    free(d->ptrs);
    dpa_phi_atoms_free(&d->atoms);
    if (!d->mirror) dpa_phi_gp_free(d->gp);
    memset(d, 0, sizeof *d);
}

dpa_phi *dpa_phi_new(const dpa_phi_options *opt, dpa_error *err)
{
    dpa_phi *ph = calloc(1, sizeof *ph);
    if (!ph) {
        dpa_error_set(err, DPA_ENOMEM, "out of memory");
        return NULL;
    }
    dpa_phi_options_init(&ph->opt);
    if (opt) ph->opt = *opt;
    if (!(ph->opt.eps_rel_tol >= 1e-15 && ph->opt.eps_rel_tol <= 1e-2) || ph->opt.max_atoms < 1 ||
        ph->opt.inversion < DPA_PHI_AUTO || ph->opt.inversion > DPA_PHI_BOTH) {
        free(ph);
        dpa_error_set(err, DPA_EINVAL, "phi: options out of range (eps_rel_tol in [1e-15, 1e-2], max_atoms >= 1)");
        return NULL;
    }
    return ph;
}

void dpa_phi_free(dpa_phi *ph)
{
    if (!ph) return;
    for (int d = 0; d < 2; d++) {
        dir_clear(&ph->d[d]);
        for (size_t i = 0; i < ph->n; i++) dpa_phi_leaf_clear(&ph->lv[d][i]);
        free(ph->lv[d]);
    }
    free(ph);
}

const dpa_phi_leaf *dpa_phi_leaves(const dpa_phi *ph, int dir, size_t *n)
{
    *n = ph->n;
    return ph->lv[dir ? 1 : 0];
}

static void unprepare(dpa_phi *ph)
{
    dir_clear(&ph->d[0]);
    dir_clear(&ph->d[1]);
    ph->prepared = 0;
}

dpa_status dpa_phi_add_pair(dpa_phi *ph, const dpa_pair *pair, double count, dpa_error *err)
{
    if (!pair) return dpa_error_set(err, DPA_EINVAL, "phi: NULL pair");
    if (ph->n == ph->cap) {
        size_t nc = ph->cap ? 2 * ph->cap : 8;
        for (int d = 0; d < 2; d++) {
            dpa_phi_leaf *v = realloc(ph->lv[d], nc * sizeof *v);
            if (!v) return dpa_error_set(err, DPA_ENOMEM, "out of memory");
            ph->lv[d] = v;
        }
        ph->cap = nc;
    }
    dpa_phi_leaf a, b;
    dpa_status st = dpa_phi_leaf_init(&a, pair, 0, count, err);
    if (st) return st;
    st = dpa_phi_leaf_init(&b, pair, 1, count, err);
    if (st) {
        dpa_phi_leaf_clear(&a);
        return st;
    }
    ph->lv[0][ph->n] = a;
    ph->lv[1][ph->n] = b;
    ph->n++;
    if (!pair->symmetric) ph->asym = 1;
    unprepare(ph);
    return DPA_OK;
}

dpa_status dpa_phi_add_leafset(dpa_phi *ph, const dpa_leafset *L, dpa_error *err)
{
    for (size_t i = 0; i < L->n; i++) {
        const dpa_leaf *l = &L->v[i];
        if (l->inner || !l->pair)
            return dpa_error_set(err, DPA_EUNSUPPORTED,
                                 "phi: a subsampled composition (one batch shared by several mechanisms) is not "
                                 "supported by the phi method (use method pld)");
        dpa_status st = dpa_phi_add_pair(ph, l->pair, l->count, err);
        if (st) return st;
    }
    return DPA_OK;
}

/* composed +inf mass: 1 - prod (1 - inf_i)^{k_i} = -expm1(sum k_i log1p(-inf_i)) */
void dpa_phi_inf_mass(const dpa_phi_leaf *lv, size_t n, double *lo, double *up)
{
    double sl = 0, su = 0;
    for (size_t i = 0; i < n; i++) {
        sl += lv[i].count * log1p(-lv[i].inf_lo);
        su += lv[i].count * (lv[i].inf_up >= 1 ? -INFINITY : log1p(-lv[i].inf_up));
    }
    /* log1p, the products and the sum: (n + 4) u relative on the sum; expm1
     * keeps a relative error (its condition number is <= 1 for negative
     * arguments) */
    double rel = ((double)n + 6) * U;
    *lo = fmax(0.0, -expm1(sl * (1 - rel)) * (1 - 2 * U));
    *up = fmin(1.0, -expm1(su * (1 + rel)) * (1 + 2 * U));
}

static dpa_status prepare_dir(dpa_phi *ph, int d, dpa_error *err)
{
    dirstate *s = &ph->d[d];
    dpa_phi_leaf *lv = ph->lv[d];
    s->ptrs = malloc((ph->n ? ph->n : 1) * sizeof *s->ptrs);
    if (!s->ptrs) return dpa_error_set(err, DPA_ENOMEM, "out of memory");
    int cont = 0, smooth = 0;
    const char *why = NULL;
    for (size_t i = 0; i < ph->n; i++) {
        s->ptrs[i] = &lv[i];
        if (lv[i].cont != DPA_PHI_CONT_NONE) {
            cont = 1;
            if (!why) why = lv[i].cont == DPA_PHI_CONT_LAPLACE || lv[i].cont == DPA_PHI_CONT_QUAD_LAPLACE
                                ? "Laplace" : "continuous";
        }
        if (dpa_phi_leaf_smooth(&lv[i])) smooth = 1;
    }
    dpa_phi_inf_mass(lv, ph->n, &s->inf_lo, &s->inf_up);
    if (!cont) {
        dpa_status st = dpa_phi_atoms_compose(s->ptrs, ph->n, ph->opt.max_atoms, &s->atoms, err);
        if (st) return st;
        s->mode = 1;
        return DPA_OK;
    }
    if (!smooth)
        return dpa_error_set(err, DPA_EUNSUPPORTED,
                             "phi: a %s leaf's continuous part is composed without a Gaussian factor; the "
                             "mixture term with a single such factor has a characteristic function decaying like "
                             "1/t, which the quadrature cannot certify (use method pld)",
                             why);
    if (d == 1 && ph->d[0].mode == 2 && ph->d[0].gp) {
        /* the add direction's leaves are the remove direction's reversed:
         * per leaf (and so for the composition) M_add(z) = M_remove(-1 - z)
         * on the finite parts (E_B[e^{-zW}] = E_A[e^{-(1+z)W}]), so the
         * remove direction's Gil-Pelaez nodes serve both (phi_invert.c) */
        s->gp = ph->d[0].gp;
        s->mirror = 1;
        s->mode = 2;
        return DPA_OK;
    }
    dpa_phi_comp c = {ph->n, s->ptrs};
    s->gp = dpa_phi_gp_new(&c, err);
    if (!s->gp) return err ? err->status : DPA_ENOMEM;
    s->mode = 2;
    return DPA_OK;
}

dpa_status dpa_phi_prepare(dpa_phi *ph, dpa_error *err)
{
    if (ph->prepared) return DPA_OK;
    if (ph->n == 0) {
        ph->prepared = 1;
        return DPA_OK;
    }
    for (int d = 0; d < (ph->asym ? 2 : 1); d++) {
        dpa_status st = prepare_dir(ph, d, err);
        if (st) {
            unprepare(ph);
            return st;
        }
    }
    ph->prepared = 1;
    return DPA_OK;
}

/* ------------------------------------------------------------------ delta */

typedef struct dres {
    double lo, up;
    int certified;
    dpa_phi_how how;
    double quad, trunc, round;
    size_t nodes;
    const char *note;
} dres;

static void inv_bracket(const dpa_phi_inv *v, double *lo, double *up)
{
    double e = v->quad_err + v->trunc_err + v->round_err;
    *lo = fmax(0.0, v->value - e);
    *up = v->value + e;
}

/* delta(x) of direction d; xlev (finite, or NAN): evaluate with at least
 * the Gil-Pelaez node sets needed at xlev (dpa_phi_gp_H) */
static dpa_status delta_dir(dpa_phi *ph, int d, double x, double xlev, dres *r, dpa_error *err)
{
    dirstate *s = &ph->d[d];
    memset(r, 0, sizeof *r);
    double triv = fmax(0.0, -expm1(x));
    if (ph->n == 0) {
        r->lo = r->up = triv;
        r->certified = 1;
        r->how = DPA_PHI_HOW_ATOMS;
        return DPA_OK;
    }
    double hlo, hup;
    if (s->mode == 1) {
        dpa_phi_atoms_H(&s->atoms, x, &hlo, &hup);
        r->certified = 1;
        r->how = DPA_PHI_HOW_ATOMS;
    } else {
        dpa_phi_comp c = {ph->n, s->ptrs};
        dpa_phi_inv g, b;
        int have_g = 0, have_b = 0;
        dpa_phi_inversion mode = ph->opt.inversion;
        if (mode != DPA_PHI_BROMWICH) {
            dpa_status st = dpa_phi_gp_H(s->gp, x, s->mirror, xlev, &g, err);
            if (st) return st;
            have_g = g.certified;
        }
        int want_b = mode == DPA_PHI_BROMWICH || mode == DPA_PHI_BOTH;
        if (mode == DPA_PHI_AUTO) {
            double gl, gu;
            inv_bracket(&g, &gl, &gu);
            if (!have_g || gu - gl > AUTO_BROMWICH_REL * g.value) want_b = 1;
        }
        if (want_b) {
            dpa_status st = dpa_phi_bromwich_H(&c, x, &b, err);
            if (st) return st;
            have_b = b.certified;
        }
        double gl = 0, gu = 1, bl = 0, bu = 1;
        if (have_g) inv_bracket(&g, &gl, &gu);
        if (have_b) inv_bracket(&b, &bl, &bu);
        if (have_g && have_b) {
            hlo = fmax(gl, bl);
            hup = fmin(gu, bu);
            r->how = DPA_PHI_HOW_BOTH;
            const dpa_phi_inv *best = (gu - gl <= bu - bl) ? &g : &b;
            r->quad = best->quad_err; r->trunc = best->trunc_err; r->round = best->round_err;
            r->nodes = g.nodes + b.nodes;
            r->certified = 1;
            if (hlo > hup) {
                /* the two inversions disagree beyond their error estimates */
                hlo = fmin(gl, bl);
                hup = fmax(gu, bu);
                r->certified = 0;
                r->note = "Gil-Pelaez and Bromwich disagree beyond their error estimates";
            }
        } else if (have_g || have_b) {
            const dpa_phi_inv *v = have_g ? &g : &b;
            hlo = have_g ? gl : bl;
            hup = have_g ? gu : bu;
            r->how = have_g ? DPA_PHI_HOW_GP : DPA_PHI_HOW_BROMWICH;
            r->quad = v->quad_err; r->trunc = v->trunc_err; r->round = v->round_err;
            r->nodes = v->nodes;
            r->certified = 1;
        } else {
            r->lo = fmax(triv, s->inf_lo);
            r->up = 1;
            r->how = DPA_PHI_HOW_TRIVIAL;
            r->note = "the quadrature error estimates did not settle at this eps (phi decays too slowly or "
                      "e^eps amplifies the error); use method pld";
            return DPA_OK;
        }
    }
    r->lo = fmax(fmax(triv, s->inf_lo), fmin(1.0, hlo + s->inf_lo));
    r->up = fmin(1.0, hup + s->inf_up);
    if (r->up < r->lo) r->up = r->lo; /* only through rounding of the trivial bound */
    return DPA_OK;
}

static void put_note(dpa_phi_result *out, const char *note)
{
    if (note && !out->note[0]) snprintf(out->note, sizeof out->note, "%s", note);
}

dpa_status dpa_phi_delta(dpa_phi *ph, double eps, dpa_phi_result *out, dpa_error *err)
{
    memset(out, 0, sizeof *out);
    if (!isfinite(eps)) return dpa_error_set(err, DPA_EINVAL, "phi: eps must be finite, got %g", eps);
    dpa_status st = dpa_phi_prepare(ph, err);
    if (st) return st;
    dres r[2];
    int nd = ph->asym ? 2 : 1;
    for (int d = 0; d < nd; d++)
        if ((st = delta_dir(ph, d, eps, NAN, &r[d], err))) return st;
    if (nd == 1) r[1] = r[0];
    int b = (nd == 2 && r[1].up > r[0].up) ? 1 : 0;
    out->upper = fmax(r[0].up, r[1].up);
    out->lower = fmax(r[0].lo, r[1].lo);
    out->upper_remove = r[0].up;
    out->upper_add = r[1].up;
    out->lower_remove = r[0].lo;
    out->lower_add = r[1].lo;
    out->binding = nd == 1 ? 0 : b + 1;
    out->certified = r[0].certified && r[1].certified;
    out->how = r[b].how;
    out->quad_err = r[b].quad;
    out->trunc_err = r[b].trunc;
    out->round_err = r[b].round;
    out->nodes = r[0].nodes + (nd == 2 ? r[1].nodes : 0);
    put_note(out, r[0].note);
    put_note(out, r[1].note);
    return DPA_OK;
}

/* ------------------------------------------------------------------ epsilon */

/* Every evaluated point is used with its own bracket (an uncertified point
 * gives the trivial one), so upper(xr) <= delta certifies eps <= xr and
 * lower(xl) > delta certifies eps > xl, whatever rule chose the points: the
 * search below only decides where to look.  It keeps, per curve, a bracket
 * [a, b] with curve(a) > delta >= curve(b) and narrows it by regula falsi
 * on g = log(curve / delta) (Illinois variant: both ends move), with steps
 * kept at least half the tolerance from the ends (so a root estimate within
 * the tolerance closes the bracket at the next point) and a halving step
 * whenever the bracket failed to halve in SEARCH_SLOW steps.  The curves
 * are smooth in eps (log delta is nearly linear near the crossing), so a
 * few evaluations replace the ~35 halvings of plain bisection. */
#define SEARCH_SLOW 3
/* the first step from the start point: the Gaussian estimate's Newton step
 * times SEARCH_OVERSHOOT (to land beyond the crossing), at least
 * SEARCH_STEP_MIN max(1, x) */
#define SEARCH_OVERSHOOT 1.25
#define SEARCH_STEP_MIN 1e-3
/* the start's bracket search gives up (and the full scan from eps = 0 runs)
 * after this many steps */
#define SEARCH_MAX_STEPS 40

typedef struct esearch {
    dpa_phi *ph;
    int d;              /* direction */
    double delta;
    double xlev;        /* largest x evaluated (node sets for it are cached) */
    int fast;           /* 1: Gil-Pelaez with a level hint */
    /* every evaluated point (for the second curve's start) */
    size_t n, cap;
    double *x, *up, *lo;
} esearch;

static dpa_status es_eval(esearch *S, double x, dres *r, dpa_error *err)
{
    if (S->fast && x > S->xlev) S->xlev = x;
    dpa_status st = delta_dir(S->ph, S->d, x, S->fast ? S->xlev : NAN, r, err);
    if (st) return st;
    if (S->n == S->cap) {
        size_t nc = S->cap ? 2 * S->cap : 64;
        double *a = realloc(S->x, nc * sizeof *a);
        if (a) S->x = a;
        double *b = realloc(S->up, nc * sizeof *b);
        if (b) S->up = b;
        double *c = realloc(S->lo, nc * sizeof *c);
        if (c) S->lo = c;
        if (!a || !b || !c) return dpa_error_set(err, DPA_ENOMEM, "out of memory");
        S->cap = nc;
    }
    S->x[S->n] = x;
    S->up[S->n] = r->up;
    S->lo[S->n] = r->lo;
    S->n++;
    return DPA_OK;
}

static double es_g(const esearch *S, const dres *r, int which)
{
    double c = which ? r->up : r->lo;
    return c > S->delta ? log(c / S->delta) : (c > 0 ? -log(S->delta / c) : -INFINITY);
}

/* Narrow [*a, *b] (g(a) > 0 >= g(b), values ga, gb) to width
 * eps_rel_tol max(1, b); *at: the point evaluated at *b (unchanged if b
 * never moves). */
static dpa_status es_refine(esearch *S, int which, double *a, double ga, double *b, double gb, dres *at,
                            dpa_error *err)
{
    double fa = ga, fb = gb; /* Illinois: the stale end's value is halved */
    int last = 0, slow = 0;
    double tol = S->ph->opt.eps_rel_tol;
    while (*b - *a > tol * fmax(1.0, *b)) {
        double w = *b - *a, tw = tol * fmax(1.0, *b), x;
        if (slow >= SEARCH_SLOW || !isfinite(fa) || !isfinite(fb) || !(fa > fb)) {
            x = *a + 0.5 * w;
            slow = 0;
        } else {
            x = *a + w * (fa / (fa - fb));
            double m = fmin(0.5 * tw, 0.25 * w);
            x = fmin(fmax(x, *a + m), *b - m);
        }
        if (!(x > *a && x < *b)) break; /* adjacent doubles */
        dres r;
        dpa_status st = es_eval(S, x, &r, err);
        if (st) return st;
        double gx = es_g(S, &r, which);
        if (gx > 0) {
            *a = x;
            fa = gx;
            if (last < 0) fb *= 0.5;
            last = -1;
        } else {
            *b = x;
            fb = gx;
            *at = r;
            if (last > 0) fa *= 0.5;
            last = 1;
        }
        slow = (*b - *a > 0.5 * w) ? slow + 1 : 0;
    }
    return DPA_OK;
}

/* The old route: scan up from 0 (first step max(SCAN_STEP0, sd/4), growing
 * SCAN_GROWTH times), then narrow.  *found = 0 when the curve never reaches
 * delta where the method certifies (upper curve) or before SCAN_EPS_MAX. */
static dpa_status es_scan(esearch *S, int which, double *xl, double *xr, dres *at, dpa_error *err)
{
    dres r;
    dpa_status st;
    if ((st = es_eval(S, 0.0, &r, err))) return st;
    double g = es_g(S, &r, which);
    if (g <= 0) {
        *xl = -1;
        *xr = 0;
        *at = r;
        return DPA_OK;
    }
    dirstate *ds = &S->ph->d[S->d];
    double a = 0, ga = g, step = SCAN_STEP0;
    if (ds->mode == 2) step = fmax(SCAN_STEP0, 0.25 * dpa_phi_gp_sd(ds->gp));
    for (double x = step; x <= SCAN_EPS_MAX; x += step, step *= SCAN_GROWTH) {
        if ((st = es_eval(S, x, &r, err))) return st;
        /* an uncertified point has the trivial bracket [.., 1]: for the
         * upper curve nothing certified lies beyond (e^eps only grows) */
        if (!r.certified && which) break;
        g = es_g(S, &r, which);
        if (g <= 0) {
            double b = x;
            *at = r;
            if ((st = es_refine(S, which, &a, ga, &b, g, at, err))) return st;
            *xl = a;
            *xr = b;
            return DPA_OK;
        }
        a = x;
        ga = g;
    }
    *xl = a;
    *xr = INFINITY;
    return DPA_OK;
}

/* delta(eps) of a Gaussian pair of parameter mu (W ~ N(mu^2/2, mu^2)), in logs:
 * log(Phi(-x/mu + mu/2) - e^x Phi(-x/mu - mu/2)) (LT Thm 2.4) */
static double gauss_log_delta(double mu, double x)
{
    double a = dpa_log_ndtr(-x / mu + 0.5 * mu), b = x + dpa_log_ndtr(-x / mu - 0.5 * mu);
    return b < a ? a + dpa_log1mexp(b - a) : -INFINITY;
}

/* A start for the eps search of direction d (mode 2): the eps of the
 * Gaussian pair with the composed variance under A (the CLT limit of a long
 * composition, GDP §3), and the slope of log delta there,
 * d/dx log delta_G = -e^x Phi(-x/mu - mu/2) / delta_G.  0 if unusable. */
static int gauss_start(const esearch *S, double target, double *x0, double *slope)
{
    double lm[2], mean[2], var[2];
    dpa_phi_gp_moments(S->ph->d[S->d].gp, S->ph->d[S->d].mirror, lm, mean, var);
    double mu = sqrt(var[0]), lt = log(target);
    if (!(mu > 0) || !isfinite(mu) || !(target > 0)) return 0;
    double lo = 0, hi = 1;
    if (gauss_log_delta(mu, 0) <= lt) {
        *x0 = 0;
    } else {
        while (gauss_log_delta(mu, hi) > lt) {
            lo = hi;
            hi *= 2;
            if (hi > SCAN_EPS_MAX) return 0;
        }
        for (int i = 0; i < 60 && hi - lo > 1e-6 * fmax(1.0, hi); i++) {
            double m = 0.5 * (lo + hi);
            if (gauss_log_delta(mu, m) > lt) lo = m;
            else hi = m;
        }
        *x0 = 0.5 * (lo + hi);
    }
    double ld = gauss_log_delta(mu, *x0);
    *slope = -exp(*x0 + dpa_log_ndtr(-*x0 / mu - 0.5 * mu) - ld);
    return isfinite(*slope) && *slope < 0;
}

/* From a start x0 (g0 its value), step towards the crossing of `which`
 * until it is bracketed; first step from the slope estimate, then secant
 * extrapolation (overshooting), growing at least SEARCH_OVERSHOOT times.
 * Returns 1 (and the bracket, or xr = 0 when the curve is <= delta at 0)
 * or 0 when the caller should fall back to es_scan (an uncertified upper
 * point, or too many steps). */
static int es_bracket(esearch *S, int which, double x0, dres *r0, double slope, double *a, double *ga, double *b,
                      double *gb, dres *at, dpa_status *st, dpa_error *err)
{
    double g0 = es_g(S, r0, which);
    if (which && !r0->certified) return 0;
    int up = g0 > 0; /* the crossing lies above x0 */
    double xp = x0, gp = g0;
    double h = isfinite(g0) && slope < 0 ? SEARCH_OVERSHOOT * fabs(g0 / slope) : 0;
    h = fmax(h, SEARCH_STEP_MIN * fmax(1.0, x0));
    if (up) {
        *a = x0;
        *ga = g0;
    } else {
        *b = x0;
        *gb = g0;
        *at = *r0;
        if (x0 == 0) return 1; /* curve(0) <= delta: eps = 0 */
    }
    for (int i = 0; i < SEARCH_MAX_STEPS; i++) {
        double x = up ? xp + h : fmax(0.0, xp - h);
        if (up && x > SCAN_EPS_MAX) return 0;
        dres r;
        if ((*st = es_eval(S, x, &r, err))) return 1;
        if (which && !r.certified) return 0;
        double g = es_g(S, &r, which);
        if (up ? g <= 0 : g > 0) {
            if (up) {
                *b = x;
                *gb = g;
                *at = r;
            } else {
                *a = x;
                *ga = g;
            }
            return 1;
        }
        if (up) {
            *a = x;
            *ga = g;
        } else {
            *b = x;
            *gb = g;
            *at = r;
            if (x == 0) return 1; /* curve(0) <= delta: eps = 0 */
        }
        /* next step: secant extrapolation of g to 0, overshot; at least
         * SEARCH_OVERSHOOT times the last step */
        double hn = SEARCH_OVERSHOOT * h;
        if (isfinite(g) && isfinite(gp) && g != gp) {
            double dist = -g * (x - xp) / (g - gp); /* signed distance to the secant root */
            if (dist * (up ? 1 : -1) > 0) hn = fmax(hn, SEARCH_OVERSHOOT * fabs(dist));
        }
        xp = x;
        gp = g;
        h = hn;
    }
    return 0;
}

/* The crossing of curve `which` (0 lower, 1 upper) with delta, bracketed:
 * *xl a point with curve > delta (-1 when curve(0) <= delta already), *xr
 * one with curve <= delta (+inf if none was found where the method
 * certifies), *xr - *xl <= eps_rel_tol max(1, *xr).  With have_start the
 * search starts at x0 (the Gaussian estimate, or the upper crossing for the
 * lower curve) with the slope estimate `slope`; atom-only compositions, and
 * starts that meet an uncertified upper point, scan up from 0 (es_scan). */
static dpa_status crossing(esearch *S, int which, int have_start, double x0, double slope, double *xl, double *xr,
                           dres *at, dpa_error *err)
{
    dpa_status st = DPA_OK;
    if (have_start) {
        dres r0;
        if ((st = es_eval(S, x0, &r0, err))) return st;
        double a = 0, ga = 0, b = 0, gb = 0;
        if (es_bracket(S, which, x0, &r0, slope, &a, &ga, &b, &gb, at, &st, err)) {
            if (st) return st;
            if (b == 0 && gb <= 0) {
                *xl = -1;
                *xr = 0;
                return DPA_OK;
            }
            if ((st = es_refine(S, which, &a, ga, &b, gb, at, err))) return st;
            *xl = a;
            *xr = b;
            return DPA_OK;
        }
        if (st) return st;
    }
    return es_scan(S, which, xl, xr, at, err);
}

/* The lower curve's crossing, started from the points the upper search
 * evaluated: the upper crossing xr_up has lower <= upper <= delta, and the
 * largest evaluated point below it with lower > delta (if any) closes the
 * bracket. */
static dpa_status crossing_lower(esearch *S, double xr_up, double slope, double *xl, double *xr, dpa_error *err)
{
    dres at;
    memset(&at, 0, sizeof at);
    if (S->fast && isfinite(xr_up)) {
        double a = -1, ga = 0, b = xr_up, gb = 0;
        for (size_t i = 0; i < S->n; i++)
            if (S->x[i] < b && S->lo[i] > S->delta && S->x[i] > a) a = S->x[i];
        for (size_t i = 0; i < S->n; i++) {
            if (S->x[i] > a && S->x[i] <= b && S->lo[i] <= S->delta) b = S->x[i];
            if (S->x[i] == a) ga = log(S->lo[i] / S->delta);
        }
        for (size_t i = 0; i < S->n; i++)
            if (S->x[i] == b) {
                double c = S->lo[i];
                gb = c > 0 ? log(c / S->delta) : -INFINITY;
            }
        if (a >= 0) {
            dpa_status st = es_refine(S, 0, &a, ga, &b, gb, &at, err);
            if (st) return st;
            *xl = a;
            *xr = b;
            return DPA_OK;
        }
        /* no point with lower > delta yet: search down from xr_up */
        return crossing(S, 0, 1, xr_up, slope, xl, xr, &at, err);
    }
    return crossing(S, 0, 0, 0, 0, xl, xr, &at, err);
}

dpa_status dpa_phi_epsilon(dpa_phi *ph, double delta, dpa_phi_result *out, dpa_error *err)
{
    memset(out, 0, sizeof *out);
    if (!(delta > 0 && delta < 1)) return dpa_error_set(err, DPA_EINVAL, "phi: delta must be in (0, 1), got %g", delta);
    dpa_status st = dpa_phi_prepare(ph, err);
    if (st) return st;
    int nd = ph->asym ? 2 : 1;
    double up[2] = {0, 0}, lo[2] = {0, 0};
    int cert = 1;
    dres at[2];
    memset(at, 0, sizeof at);
    esearch S;
    memset(&S, 0, sizeof S);
    S.ph = ph;
    S.delta = delta;
    for (int d = 0; d < nd; d++) {
        dirstate *s = &ph->d[d];
        if (ph->n && delta <= s->inf_lo) { /* the +inf mass alone exceeds delta */
            up[d] = lo[d] = INFINITY;
            continue;
        }
        S.d = d;
        S.n = 0;
        double x0 = 0, slope = 0;
        S.fast = ph->n && s->mode == 2 && gauss_start(&S, delta - s->inf_lo, &x0, &slope);
        if (S.fast) S.xlev = fmax(S.xlev, x0);
        double xl, xr;
        if ((st = crossing(&S, 1, S.fast, x0, slope, &xl, &xr, &at[d], err))) goto done;
        up[d] = xr;
        if (xr == INFINITY) {
            cert = 0;
            put_note(out, ph->n && delta <= s->inf_up
                              ? "delta is within the round-off of the +inf mass"
                              : "the upper delta curve did not reach delta where the method can certify (use "
                                "method pld)");
        }
        if ((st = crossing_lower(&S, xr, slope, &xl, &xr, err))) goto done;
        /* every point left of xl had lower(x) > delta, so the true eps > xl;
         * uncertified points have a trivial lower curve, which only moves xl
         * left (safe) */
        lo[d] = xl < 0 ? 0 : xl;
        put_note(out, at[d].note);
    }
    if (nd == 1) {
        up[1] = up[0];
        lo[1] = lo[0];
        at[1] = at[0];
    }
    int b = (nd == 2 && up[1] > up[0]) ? 1 : 0;
    out->upper = fmax(up[0], up[1]);
    out->lower = fmin(out->upper, fmax(lo[0], lo[1]));
    out->upper_remove = up[0];
    out->upper_add = up[1];
    out->lower_remove = lo[0];
    out->lower_add = lo[1];
    out->binding = nd == 1 ? 0 : b + 1;
    out->certified = cert;
    out->how = at[b].how;
    out->quad_err = at[b].quad;
    out->trunc_err = at[b].trunc;
    out->round_err = at[b].round;
    out->nodes = at[b].nodes;
done:
    free(S.x);
    free(S.up);
    free(S.lo);
    return st;
}

/* ====================================================================== *
 * 7. Heterogeneous epsilons (dpa_rr_het, exact_rr.h): a certified bracket *
 *    from two lattice pairs, one dominating and one dominated.            *
 * ====================================================================== *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The two pairs: exact_rr_het_law.c; their evaluation by a finite Fourier
 * sum: exact_rr_het_fourier.c, which frequencies it drops:
 * exact_rr_het_certify.c.  Here: F and delta bounds from the laws, the eps
 * search, the choice and refinement of the lattice, the public functions.
 *
 * Both bounds are second order in h: the mixture adds about h^2 lam (1 - lam)
 *   of loss variance per step, the garbling loses the conditional spread of
 *   the residual sum of (eps - mhat h) X, about h^2 / 12 per step (h^2 / 4
 *   dithered); the eps bracket is about (v_up + v_lo) (1 + z / sd) / 2 for
 *   variances v and a Gaussian-like composition with standard deviation sd
 *   (z ~ 4.75 at delta 1e-6), the relative delta bracket (1 + z / sd) times
 *   that, so h is chosen from that estimate and reduced (a posteriori) until
 *   the bracket meets the target (DPA_RR_HET_REL or the accuracy option).
 */
#include <stdlib.h>
#include <string.h>
#include "exact/exact_rr_het_internal.h"

/* the largest eps the heterogeneous method takes.  Above about 2000 the
 * lattice step it settles on (thousands) leaves a useless bracket, and
 * near 8000 the step reached 2^15, where the mixture weight of dpa_het_law_types
 * overflowed to NaN (0 * inf) and the large step dropped out of the
 * dominating law (upper bound 0 for a delta near 1; found by an
 * independent lattice oracle, fixed there too); larger epsilons go to PLD */
#define HET_EPS_MAX 1e3
/* refinements of the lattice per query */
#define HET_REFINE_MAX 6

/* F bounds from the two laws (need: 1 upper, 2 lower, 3 both) */
static void het_F(dpa_rr_het *c, double t, int need, long double *fhi, long double *flo)
{
    long double X = -expm1l((long double)t);
    long double Xlo = X > 0 ? X * (1 - E_F - 4 * U) : 0, Xhi = X > 0 ? X * (1 + E_F + 4 * U) : 0;
    *fhi = 1;
    *flo = 0;
    if (t >= c->L) { *fhi = *flo = 0; return; }
    if (-(long double)t >= c->L) { *fhi = fminl(1, Xhi); *flo = Xlo; return; }
    if (need & 1) {
        long double h, l;
        dpa_het_law_sum(&c->up, 0, t, t, &h, &l);
        *fhi = h;
    }
    if (need & 2) {
        /* max over s0 of A_lo(S >= s0) - e^t B_lo(S >= s0), the second term
         * M E_{B_1}[e^{t - hS} 1{S >= s0}] (golden section on integers
         * around t / h, then the last few) */
        const het_law *L = &c->lo;
        long double Mup = expl(c->lmb) * (1 + E_F + U);
        long double sc = ceill((long double)t / L->h);
#define HET_LB(s0, out)                                                      \
        do {                                                                 \
            long double xh_, xl_, yh_, yl_;                                  \
            dpa_het_law_sum(L, 1, (s0), t, &xh_, &xl_);                              \
            dpa_het_law_sum(&c->lb, 3, (s0), t, &yh_, &yl_);                         \
            (out) = xl_ - Mup * yh_;                                         \
            (out) -= U * fabsl(out) * 2 + U * Mup * yh_ * 2;                 \
        } while (0)
        /* LB(s0) is unimodal (the garbled likelihood ratio increases in s0):
         * a pattern search from the last optimum's offset, steps doubling
         * while they improve, then halving; any s0 gives a valid bound */
        long double s = sc, best, v;
        HET_LB(s, best);
        if (c->s0off != 0) { /* the hint, if it starts better */
            HET_LB(sc + c->s0off, v);
            if (v > best) best = v, s = sc + c->s0off;
        }
        long double step = 1;
        int dir = 0;
        for (int it = 0; it < 200 && step >= 1; it++) {
            if (!dir) {
                HET_LB(s + 1, v);
                if (v > best) dir = 1;
                else {
                    HET_LB(s - 1, v);
                    if (v > best) dir = -1;
                    else break;
                }
                best = v;
                s += dir;
                continue;
            }
            HET_LB(s + dir * step, v);
            if (v > best) {
                best = v;
                s += dir * step;
                step *= 2;
            } else {
                step = floorl(step / 2);
                if (step < 1) { /* the neighbours: maybe the other side now */
                    step = 1;
                    HET_LB(s - dir, v);
                    if (v > best) {
                        best = v;
                        s -= dir;
                        dir = -dir;
                        continue;
                    }
                    break;
                }
            }
        }
#undef HET_LB
        /* remember the offset where the bound is informative */
        c->s0off = best > 0 && fabsl(s - sc) < 1e6L ? s - sc : 0;
        *flo = fmaxl(0, best);
        if (t < 0 && *flo < Xlo) *flo = Xlo; /* F >= 1 - e^t (a pair) */
    }
    if (!(*fhi <= 1)) *fhi = 1;
    if (*flo > *fhi) *flo = *fhi;
}

static void het_parts(dpa_rr_het *c, double t, int need, dparts *p)
{
    long double fhi = 1, flo = 0;
    het_F(c, t, need, &fhi, &flo);
    p->inf_up = c->inf_up;
    p->inf_lo = c->inf_lo;
    p->y_up = fhi > 0 ? c->keep_up * fhi * (1 + 4 * U) : 0;
    p->y_lo = flo > 0 ? c->keep_lo * flo * (1 - 4 * U) : 0;
    p->fl_ = t < 0 ? -expm1l((long double)t) * (1 - E_F - 4 * U) : 0;
}

static void het_delta_now(dpa_rr_het *c, double t, double *up, double *lo)
{
    dparts p;
    het_parts(c, t, 3, &p);
    long double u_ = p.y_up > 0 ? (p.inf_up + p.y_up) * (1 + 4 * U) : p.inf_up;
    long double l_ = p.y_lo > 0 ? (p.inf_lo + p.y_lo) * (1 - 4 * U) : p.inf_lo;
    *up = dpa_ld_up(fminl(1, u_));
    *lo = dpa_ld_dn(fmaxl(0, fmaxl(l_, p.fl_)));
    if (*lo > *up) *lo = *up;
    *lo += 0.0;
}

typedef struct hctx { dpa_rr_het *c; double target; int side; } hctx;

static double het_g(double t, void *pp)
{
    const hctx *s = pp;
    dparts d;
    het_parts(s->c, t, s->side ? 2 : 1, &d);
    long double v, e;
    if (s->side == 0) v = dpa_rr_sum3(d.inf_up, d.y_up, s->target, &e) + e;
    else {
        v = dpa_rr_sum3(d.inf_lo, d.y_lo, s->target, &e) - e;
        long double f = d.fl_ - s->target;
        if (f > v) v = f;
    }
    if (v > 0) return fmax((double)v, DBL_MIN);
    return fmin((double)v, -DBL_MIN);
}

/* the search stops at 1e-3 of the target width (at most 1e-10 relative):
 * the bracket's own width is of the order of the target */
static double het_solve(dpa_rr_het *c, double target, int side)
{
    hctx s = {c, target, side};
    double tmax = fmin(dpa_ld_up(c->L), DBL_MAX);
    if (het_g(0.0, &s) <= 0) return 0.0;
    if (het_g(tmax, &s) > 0) return INFINITY;
    double a, b;
    if (dpa_bisect(het_g, &s, 0.0, tmax, 0.0, fmax(EPS_XTOL_REL, fmin(1e-10, 1e-3 * c->rel)), &a, &b))
        return side ? 0.0 : tmax;
    return side ? a : b;
}

/* ---------------- building and refining ---------------- */

/* the eps bracket estimate of section 7 (the top of this file) for step h: (v_up + v_lo)/2
 * (1 + z/sd), z = 4.75 (delta ~ 1e-6); the relative delta bracket is about
 * (1 + z/sd) times it */
static double het_width_est(const dpa_rr_het *c, double h)
{
    double v = 0;
    for (size_t i = 0; i < c->m; i++) {
        double q = c->eps[i] / h, f = q - floor(q), r = q - floor(q + 0.5);
        double g = fmax(f * (1 - f), r * r); /* the garbling's residual variance (nearest or dithered) */
        v += c->k[i] * (f * (1 - f) + g) * h * h;
    }
    return 0.5 * v * (1 + 4.75 / fmax(c->sd, 1e-300));
}

/* build both laws at step h into c (replacing the old ones only on success) */
/* >= log M, M = E_B[e^{h S_lo}] = prod_t (cosh(eps/2 - r) / cosh(eps/2))^k,
 * r = eps - mhat h (exact): each factor is 1 + z, z = 2 sinh^2(r/2) -
 * tanh(eps/2) sinh r (cosh(b - r) / cosh b = cosh r - tanh b sinh r), both
 * terms within E_F + 4u of themselves; log1p adds E_F */
static long double log_tilt(const het_law *lb)
{
    long double s = 0, e = 0, sa = 0;
    for (size_t i = 0; i < lb->nt; i++) {
        const het_type *ty = &lb->ty[i];
        long double eps = ty->eps, r = ty->r, sh2 = sinhl(r / 2), a = 2 * sh2 * sh2, b = tanhl(eps / 2) * sinhl(r);
        long double z = a - b, ez = (E_F + 4 * U) * (fabsl(a) + fabsl(b)) + U * fabsl(z);
        long double l = log1pl(z), el = ez / (1 + z - ez) + (E_F + U) * fabsl(l);
        s += ty->k * l;
        sa += ty->k * fabsl(l);
        e += ty->k * el;
    }
    return s + (e + ((long double)lb->nt + 2) * U * sa) * ERRSLACK;
}

/* build the three laws at step h into c (replacing the old ones only on
 * success) */
static dpa_status het_build_at(dpa_rr_het *c, double h)
{
    het_law up, lo, lb;
    memset(&up, 0, sizeof up);
    memset(&lo, 0, sizeof lo);
    memset(&lb, 0, sizeof lb);
    double work = 0;
    dpa_status st = dpa_het_law_types(&up, c, h, 0);
    if (!st) st = dpa_het_law_types(&lo, c, h, 1);
    if (!st) st = dpa_het_law_types(&lb, c, h, 2);
    if (!st) st = dpa_het_law_window(&up);
    if (!st) st = dpa_het_law_window(&lo);
    if (!st) st = dpa_het_law_window(&lb);
    if (!st) st = dpa_het_law_freqs(&up, &work);
    if (!st) st = dpa_het_law_freqs(&lo, &work);
    if (!st) st = dpa_het_law_freqs(&lb, &work);
    if (st) {
        dpa_het_law_free(&up);
        dpa_het_law_free(&lo);
        dpa_het_law_free(&lb);
        return st;
    }
    dpa_het_law_free(&c->up);
    dpa_het_law_free(&c->lo);
    dpa_het_law_free(&c->lb);
    c->up = up;
    c->lo = lo;
    c->lb = lb;
    c->lmb = log_tilt(&c->lb);
    c->h = h;
    return DPA_OK;
}

/* the largest power of 2 not above x */
static double pow2_floor(double x)
{
    int e;
    frexp(x, &e);
    return ldexp(1.0, e - 1);
}

/* refine to step hn (a power of 2 below c->h); 0 on success */
static int het_refine(dpa_rr_het *c, double hn)
{
    if (!(hn >= c->hmin) || !(hn < c->h)) return -1;
    dpa_status st = het_build_at(c, hn);
    if (st == DPA_EUNSUPPORTED) c->hmin = 2 * hn; /* too costly: nothing finer */
    return st ? -1 : 0;
}

/* the next step for a bracket of width w against the target tg: the gap
 * scales like h^2 */
static double het_next_h(double h, double w, double tg)
{
    double f = sqrt(tg / w) * 0.7;
    if (!(f < 0.5)) f = 0.5;
    if (f < 1.0 / 64) f = 1.0 / 64;
    return pow2_floor(h * f);
}

void dpa_rr_het_epsilon(dpa_rr_het *c, double delta, double *up, double *lo)
{
    if (!(delta >= 0) || (long double)delta < c->inf_lo) {
        *up = *lo = INFINITY;
        return;
    }
    double pw = INFINITY;
    for (int it = 0;; it++) {
        *up = het_solve(c, delta, 0);
        *lo = het_solve(c, delta, 1);
        if (*lo > *up) *lo = *up;
        *lo += 0.0;
        if (isinf(*up) && isinf(*lo)) return;
        double w = *up - *lo, tg = c->rel * fmax(1.0, *up);
        if (w <= tg || it >= HET_REFINE_MAX || !(w < pw / 1.5)) return;
        pw = w;
        if (isinf(w)) return;
        if (het_refine(c, het_next_h(c->h, w, tg))) return;
    }
}

void dpa_rr_het_delta(dpa_rr_het *c, double t, double *up, double *lo)
{
    if (isnan(t)) { *up = 1; *lo = 0; return; }
    double pw = INFINITY;
    for (int it = 0;; it++) {
        het_delta_now(c, t, up, lo);
        double w = *up - *lo, tg = c->rel * *up + 1e-14;
        if (w <= tg || it >= HET_REFINE_MAX || !(w < pw / 1.5)) return;
        pw = w;
        if (het_refine(c, het_next_h(c->h, w, tg))) return;
    }
}

double dpa_rr_het_step(const dpa_rr_het *c)
{
    return c ? c->h : 0;
}

void dpa_rr_het_free(dpa_rr_het *c)
{
    if (!c) return;
    free(c->eps);
    free(c->k);
    dpa_het_law_free(&c->up);
    dpa_het_law_free(&c->lo);
    dpa_het_law_free(&c->lb);
    free(c);
}

/* the leaves as (distinct eps, count) and the +inf mass; 0 if outside the
 * domain (see dpa_rr_het_applicable) */
static int het_domain(const dpa_leafset *L)
{
    if (!L || !L->all_rr || L->zcdp_path[0]) return 0;
    int any = 0;
    for (size_t i = 0; i < L->n; i++) {
        const dpa_leaf *l = &L->v[i];
        double e = l->rr_eps, d = l->rr_delta, k = l->count;
        if (!(e >= 0 && e <= HET_EPS_MAX && d >= 0 && d <= 1 && k >= 1 && k <= DPA_MAX_COUNT && k == floor(k)))
            return 0;
        if (e > 0) any = 1;
    }
    return any;
}

int dpa_rr_het_applicable(const dpa_leafset *L)
{
    return het_domain(L);
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

dpa_status dpa_rr_het_new(const dpa_leafset *L, double rel, dpa_rr_het **out, dpa_error *err)
{
    *out = NULL;
    if (!het_domain(L)) return dpa_error_set(err, DPA_EUNSUPPORTED, "exact method: this composition is outside "
                                                                  "the heterogeneous (eps, delta) method's domain");
    dpa_rr_het *c = calloc(1, sizeof *c);
    double *e = malloc(2 * L->n * sizeof *e);
    int valid;
    fac *f = dpa_rr_collect(L, 0, 0, &valid);
    if (!c || !e || !f) {
        free(c);
        free(e);
        free(f);
        return dpa_error_set(err, DPA_ENOMEM, "out of memory");
    }
    /* distinct eps > 0 with total counts (pairs (eps, k) sorted by eps) */
    size_t n = 0;
    for (size_t i = 0; i < L->n; i++)
        if (L->v[i].rr_eps > 0) {
            e[2 * n] = L->v[i].rr_eps;
            e[2 * n + 1] = L->v[i].count;
            n++;
        }
    qsort(e, n, 2 * sizeof *e, cmp_d);
    c->eps = malloc((n ? n : 1) * sizeof *c->eps);
    c->k = malloc((n ? n : 1) * sizeof *c->k);
    if (!c->eps || !c->k) {
        free(e);
        free(f);
        dpa_rr_het_free(c);
        return dpa_error_set(err, DPA_ENOMEM, "out of memory");
    }
    size_t m = 0;
    long double Lsum = 0, mu = 0, var = 0;
    for (size_t i = 0; i < n; i++) {
        if (m && c->eps[m - 1] == e[2 * i]) c->k[m - 1] += e[2 * i + 1];
        else {
            c->eps[m] = e[2 * i];
            c->k[m] = e[2 * i + 1];
            m++;
        }
    }
    c->m = m;
    for (size_t i = 0; i < m; i++) {
        long double ep = c->eps[i], th = tanhl(ep / 2);
        Lsum = (Lsum + ep * c->k[i]) * (1 + 4 * U);
        mu += c->k[i] * ep * th;
        var += c->k[i] * ep * ep * (1 - th * th);
        c->ntot += c->k[i];
        if (c->eps[i] > c->emax) c->emax = c->eps[i];
    }
    c->L = Lsum;
    c->mu = (double)mu;
    c->sd = sqrt((double)var);
    /* the +inf mass exactly as for the lattice method (section 4) */
    dpa_rr_comp tmp;
    memset(&tmp, 0, sizeof tmp);
    dpa_rr_inf_mass(&tmp, f, L->n);
    c->inf_lo = tmp.inf_lo;
    c->inf_up = tmp.inf_up;
    c->keep_lo = tmp.keep_lo;
    c->keep_up = tmp.keep_up;
    free(e);
    free(f);
    c->rel = rel > 0 ? rel : DPA_RR_HET_REL;
    /* the finest step: positions below 2^61 with room */
    c->hmin = pow2_floor((double)(c->L / 0x1p56L)) * 2;
    if (!(c->hmin > 0)) c->hmin = 0x1p-1000;
    /* the first step from the estimate at delta ~ 1e-6, for eps and for
     * delta queries (the cost of a build hardly depends on h), then coarser
     * while a build is refused for its cost */
    double epsest = fmin((double)c->L, c->mu + 4.75 * c->sd);
    double tg = 0.5 * c->rel * fmin(fmax(1.0, epsest), 1 / (1 + 4.75 / fmax(c->sd, 1e-300)));
    double h = pow2_floor(fmax(2 * c->emax, 1e-300)) * 2;
    while (h / 2 >= c->hmin && het_width_est(c, h) > tg) h /= 2;
    if (h < c->hmin) h = c->hmin;
    dpa_status st;
    for (;;) {
        st = het_build_at(c, h);
        if (st != DPA_EUNSUPPORTED || h > 4 * c->emax + 1) break;
        c->hmin = 2 * h;
        h *= 2;
    }
    if (st) {
        dpa_rr_het_free(c);
        return dpa_error_set(err, st, st == DPA_ENOMEM ? "out of memory"
                                                        : "exact method: no lattice fits this composition");
    }
    *out = c;
    return DPA_OK;
}

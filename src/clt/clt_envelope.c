/* Sums of the functionals over a composition, the CLT's mu and the
 * Berry-Esseen envelope of the profile (see clt.h, docs/clt.md §3-§5).
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The envelope.  Let (X, Y) be a direction with loss W = log dX/dY summed
 * over the composition (independent summands under either measure).  By the
 * Berry-Esseen theorem (Shevtsova's constant 0.56, GDP Theorem D.4; for
 * i.i.d. summands Shevtsova's sharper 0.4748 and 0.33554 (L + 0.415/sqrt n),
 * clt.h)
 *   |X(W <= t) - Phi((t - M_X)/s_X)| <= g_X,   |Y(W <= t) - Phi((t - M_Y)/s_Y)| <= g_Y
 * for all t (also for W < t), with M, s^2 the mean and variance of W and
 * g = 0.56 sum E|W_i - E W_i|^3 / s^3 under that measure (dpa_clt_compose
 * adds the uncertainty of the centring moments).  The hockey-stick
 * divergence is attained by threshold tests on W (Neyman-Pearson), so
 *   delta_{X|Y}(eps) = sup_t X(W > t) - e^eps Y(W > t)
 *     <= sup_t min(1, Phibar_X(t) + g_X) - e^eps max(0, Phibar_Y(t) - g_Y)   (upper)
 *     >= sup_t max(0, Phibar_X(t) - g_X) - e^eps min(1, Phibar_Y(t) + g_Y)   (lower).
 * For symmetric pairs (M_Y = -M_X, s_Y = s_X, g_Y = g_X) these are the
 * profiles of GDP eq 10's envelope G_mu(a + g) - g <= f <= G_mu(a - g) + g,
 * mu = 2 M_X/s_X; in general they are the profiles of the same statement
 * with the two measures' own normals (docs/clt.md §4 derives it).
 *
 * Certifying the supremum.  In the upper bound U(t) = A(t) + C(t), A is
 * non-increasing and C non-positive and non-decreasing, so on a cell
 * [t1, t2] U <= A(t1) + C(t2); left of T1 (where A = 1) U <= 1 + C(T1),
 * right of T2 (where C = 0) U <= A(T2).  Branch and bound: cells whose
 * bound exceeds the best point value by more than the tolerance are halved;
 * the result is the maximum of the surviving bounds and best + tolerance,
 * whatever the cell budget: certified for every stopping point.  A and C
 * are evaluated with outward rounding (Phi at 16u relative, as in
 * src/exact/gaussian.c, its argument's round-off, e^eps at 4u). */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "clt/clt.h"
#include "exact/exact.h"
#include "num/num.h"

#define U DPA_UNIT_ROUNDOFF

/* Relative tolerance of the certified supremum: its bound exceeds the
 * envelope's supremum by at most this much (plus the absolute round-off
 * allowance).  The envelope itself is looser than the truth by at least
 * g_X (every upper bound is >= g_X), so 1e-7 of it is invisible. */
#define CLT_SUP_REL 1e-7
/* Cells of the branch and bound: 64 to start, at most 16384 alive, 80
 * halvings; past the budget the surviving cells' bounds are used (still
 * certified, only looser). */
#define CLT_BB_START 64
#define CLT_BB_MAX 16384
#define CLT_BB_LEVELS 80
/* e^eps is clamped at e^700: the upper bound is non-increasing in eps, so
 * its value at 700 bounds every larger eps. */
#define CLT_EPS_CLAMP 700.0
/* Phi evaluated by dpa_ndtr: 16u relative (src/exact/gaussian.c's
 * EPS_NDTR budget), plus 2u absolute for the round-off of its argument
 * (|dPhi| <= phi(z) 3u |z| <= u). */
#define CLT_NDTR_REL (16 * U)
#define CLT_NDTR_ABS (2 * U)

static double up(double x, double k) { return x + fabs(x) * k * U + DBL_TRUE_MIN; }
static double dn(double x, double k) { return x - fabs(x) * k * U - DBL_TRUE_MIN; }

/* ------------------------------------------------------------------ */
/* Composition                                                         */
/* ------------------------------------------------------------------ */

static void sum_add(dpa_clt_sum *s, const dpa_clt_side *x, double k, int gaussian)
{
    s->m += k * x->m;
    s->v += k * x->v;
    s->kappa2 += k * (x->v + x->m * x->m);
    s->m_lo = dn(s->m_lo + dn(k * x->m_lo, 2), 2);
    s->m_hi = up(s->m_hi + up(k * x->m_hi, 2), 2);
    s->v_lo = dn(s->v_lo + dn(k * x->v_lo, 2), 2);
    s->v_hi = up(s->v_hi + up(k * x->v_hi, 2), 2);
    s->r_hi = up(s->r_hi + up(k * x->r_hi, 2), 2);
    if (!gaussian && (x->v != 0 || x->m != 0)) {
        s->v_ng_lo = dn(s->v_ng_lo + dn(k * x->v_lo, 2), 2);
        s->r_ng_hi = up(s->r_ng_hi + up(k * x->r_hi, 2), 2);
        s->n_ng++;
        s->k_ng += k;
    }
}

/* -W under the other measure: the add direction's side */
static dpa_clt_side negate(const dpa_clt_side *x)
{
    dpa_clt_side y = *x;
    y.m = -x->m;
    y.m_lo = -x->m_hi;
    y.m_hi = -x->m_lo;
    return y;
}

/* 0.56 r / v^{3/2}, rounded up (+inf when v_lo is not positive) */
static double be_ratio(double r_hi, double v_lo)
{
    if (!(v_lo > 0)) return INFINITY;
    double s = dn(sqrt(v_lo), 2), d = dn(v_lo * s, 2);
    return up(up(DPA_CLT_BE_CONST, 2) * up(r_hi / d, 2), 2);
}

/* Kolmogorov distance of the law of W from N(s->m, s->v): Berry-Esseen
 * over all leaves, or over the non-Gaussian ones only (W = W_g + W_ng with
 * W_g exactly normal: convolving with N(M_g, V_g) keeps F_ng's distance from
 * N(M_ng, V_ng), and the result is the total normal), plus the distance
 * between the true centring normal and the estimated one:
 *   |Phi((x - m)/s) - Phi((x - m')/s)| <= |m - m'| / (s sqrt(2 pi)),
 *   sup_y |Phi(y) - Phi(l y)| <= |1 - l| / min(1, l) / sqrt(2 pi e). */
/* Shevtsova's i.i.d. bound on n = k summands with Lyapunov ratio
 * L = R / V^{3/2} (sums over the k copies): min(0.4748 L, 0.33554 (L + 0.415/sqrt(k))),
 * rounded up (+inf when v_lo is not positive). */
static double be_iid(double r_hi, double v_lo, double k)
{
    double l = be_ratio(r_hi, v_lo) / dn(DPA_CLT_BE_CONST, 2); /* >= L */
    if (!isfinite(l) || !(k >= 1)) return INFINITY;
    double a = up(up(DPA_CLT_BE_IID, 2) * l, 2);
    double b = up(up(DPA_CLT_BE_IID_A, 2) * up(l + up(DPA_CLT_BE_IID_B / dn(sqrt(k), 2), 2), 2), 2);
    return fmin(a, b);
}

/* sharp: also Shevtsova's i.i.d. constants when the non-Gaussian part is
 * k_ng copies of one leaf (n_ng == 1) */
static double gamma_of(const dpa_clt_sum *s, int sharp)
{
    double g;
    if (s->n_ng == 0) g = 0;
    else g = fmin(be_ratio(s->r_hi, s->v_lo), be_ratio(s->r_ng_hi, s->v_ng_lo));
    if (sharp && s->n_ng == 1) g = fmin(g, be_iid(s->r_ng_hi, s->v_ng_lo, s->k_ng));
    if (!isfinite(g) || !(s->v > 0) || !(s->v_lo > 0)) return INFINITY;
    double dm = fmax(s->m_hi - s->m, s->m - s->m_lo);
    double em = up(up(0.3989422804014328 * dm, 2) / dn(sqrt(s->v_lo), 2), 2);
    double l_lo = dn(sqrt(dn(s->v_lo / s->v, 2)), 2), l_hi = up(sqrt(up(s->v_hi / s->v, 2)), 2);
    double dl = 0;
    if (l_lo < 1) dl = up((1 - l_lo) / l_lo, 4);
    if (l_hi > 1) dl = fmax(dl, up(l_hi - 1, 2));
    double es = up(0.24197072451914337 * dl, 2);
    return up(up(g + em, 1) + es, 1);
}

void dpa_clt_compose(const dpa_clt_leaf *lv, const double *k, size_t n, dpa_clt_comp *out)
{
    memset(out, 0, sizeof *out);
    out->symmetric = 1;
    out->all_poisson_gauss = 1;
    double ls = 0, ls_lo = 0, ls_hi = 0, c54 = 0;
    int trivial = 1, npois = 0;
    for (size_t i = 0; i < n; i++) {
        const dpa_clt_leaf *l = &lv[i];
        if (!l->symmetric) out->symmetric = 0;
        if (!(l->x.m == 0 && l->x.v == 0 && l->y.m == 0 && l->y.v == 0)) trivial = 0;
        dpa_clt_side ax = negate(&l->y), ay = negate(&l->x);
        sum_add(&out->dir[0].x, &l->x, k[i], l->gaussian);
        sum_add(&out->dir[0].y, &l->y, k[i], l->gaussian);
        sum_add(&out->dir[1].x, &ax, k[i], l->gaussian);
        sum_add(&out->dir[1].y, &ay, k[i], l->gaussian);
        if (l->delta > 0) {
            double t = log1p(-l->delta); /* -inf for delta = 1 */
            ls += k[i] * t;
            ls_lo = dn(ls_lo + dn(k[i] * dn(t, 4), 2), 2);
            ls_hi = up(ls_hi + up(k[i] * up(t, 4), 2), 2);
        }
        if (l->poisson_gauss) {
            /* Bu, Dong, Long, Su 2020: q sqrt(T (e^{mu^2} - 1)) */
            c54 += k[i] * l->q * l->q * expm1(l->mu * l->mu);
            npois++;
            out->n_poisson++;
        } else if (l->sample_gauss) {
            /* GDP Cor 5.4 */
            double m = l->mu, chi = exp(m * m) * dpa_ndtr(1.5 * m) + 3 * dpa_ndtr(-m / 2) - 2;
            c54 += k[i] * 2 * l->q * l->q * chi;
            npois++;
            out->n_sample++;
        }
        else if (l->gaussian) c54 += k[i] * l->x.v;
        else out->all_poisson_gauss = 0;
    }
    out->delta0 = -expm1(ls);
    out->delta0_hi = fmin(1.0, up(-expm1(ls_lo), 4));
    out->delta0_lo = fmax(0.0, dn(-expm1(fmin(ls_hi, 0.0)), 4));
    if (npois == 0) out->all_poisson_gauss = 0;
    out->cor54_mu2 = out->all_poisson_gauss ? c54 : NAN;
    for (int d = 0; d < 2; d++) {
        dpa_clt_dir *dr = &out->dir[d];
        dr->identity = trivial;
        dr->gauss = dr->x.n_ng == 0 && dr->y.n_ng == 0;
        dr->gamma_x = trivial || dr->gauss ? 0 : gamma_of(&dr->x, 0);
        dr->gamma_y = trivial || dr->gauss ? 0 : gamma_of(&dr->y, 0);
        dr->gamma_env_x = trivial || dr->gauss ? 0 : gamma_of(&dr->x, 1);
        dr->gamma_env_y = trivial || dr->gauss ? 0 : gamma_of(&dr->y, 1);
    }
}

void dpa_clt_mu(const dpa_clt_dir *d, double *mu, double *lo, double *hi)
{
    if (d->identity) {
        *mu = *lo = *hi = 0;
        return;
    }
    double vs = (d->x.v + d->y.v) / 2;
    *mu = vs > 0 ? (d->x.m - d->y.m) / sqrt(vs) : INFINITY;
    double num_lo = fmax(0.0, dn(d->x.m_lo - d->y.m_hi, 2)), num_hi = up(d->x.m_hi - d->y.m_lo, 2);
    double den_lo = dn(sqrt(dn((d->x.v_lo + d->y.v_lo) / 2, 2)), 2);
    double den_hi = up(sqrt(up((d->x.v_hi + d->y.v_hi) / 2, 2)), 2);
    *lo = den_hi > 0 ? fmax(0.0, dn(num_lo / den_hi, 2)) : 0;
    *hi = den_lo > 0 ? up(num_hi / den_lo, 2) : INFINITY;
    if (*mu < *lo) *mu = *lo;
    if (*mu > *hi) *mu = *hi;
}

double dpa_clt_gamma_max(const dpa_clt_comp *c)
{
    double g = 0;
    for (int d = 0; d < (c->symmetric ? 1 : 2); d++) {
        const dpa_clt_dir *dr = &c->dir[d];
        if (dr->identity || dr->gauss) continue;
        g = fmax(g, fmax(dr->gamma_x, dr->gamma_y));
    }
    return g;
}

double dpa_clt_cor54_mu(const dpa_clt_comp *c)
{
    return c->all_poisson_gauss ? sqrt(c->cor54_mu2) : NAN;
}

double dpa_clt_with_delta0(double delta0, double x, int dir)
{
    if (delta0 <= 0) return x;
    x = fmin(fmax(x, 0.0), 1.0);
    double v = delta0 + (1 - delta0) * x;
    v = dir > 0 ? up(v, 4) : dn(v, 4);
    return fmin(fmax(v, 0.0), 1.0);
}

/* ------------------------------------------------------------------ */
/* The envelope                                                        */
/* ------------------------------------------------------------------ */

typedef struct env {
    double mx, sx, gx, my, sy, gy;
    double ee_lo, ee_hi; /* e^eps enclosed */
} env;

static double phibar(double t, double m, double s) { return dpa_ndtr(-(t - m) / s); }

/* A(t) = min(1, Phibar_X(t) + g_X), rounded up */
static double env_a(const env *e, double t)
{
    double p = phibar(t, e->mx, e->sx);
    return fmin(1.0, up(p * (1 + CLT_NDTR_REL) + CLT_NDTR_ABS + e->gx, 2));
}

/* -C(t) = e^eps max(0, Phibar_Y(t) - g_Y), rounded down */
static double env_c(const env *e, double t)
{
    double p = phibar(t, e->my, e->sy);
    double c = dn(p * (1 - CLT_NDTR_REL) - CLT_NDTR_ABS - e->gy, 2);
    return c > 0 ? dn(e->ee_lo * c, 2) : 0;
}

typedef struct cell { double t1, t2, a1, c2; } cell;

/* Upper bound on sup_t A(t) + C(t) (see the header comment). */
static double env_sup(const env *e)
{
    if (e->gx >= 1 || e->gy >= 1) return 1;
    double T1 = e->mx + e->sx * dpa_ndtri(e->gx);     /* Phibar_X(T1) = 1 - g_X */
    double T2 = e->my + e->sy * dpa_ndtri(1 - e->gy); /* Phibar_Y(T2) = g_Y */
    if (!isfinite(T1) || !isfinite(T2)) return 1;
    double bound = fmax(1 - env_c(e, T1), env_a(e, T2));
    if (!(T1 < T2)) return fmin(1.0, up(bound, 2));
    cell *cur = malloc(CLT_BB_MAX * sizeof *cur), *nxt = malloc(CLT_BB_MAX * sizeof *nxt);
    if (!cur || !nxt) {
        free(cur);
        free(nxt);
        return 1; /* the trivial bound */
    }
    size_t n = CLT_BB_START;
    double best = bound, prev_a = env_a(e, T1), prev_c = env_c(e, T1);
    best = fmax(best, prev_a - prev_c);
    for (size_t i = 0; i < n; i++) {
        double t2 = (i + 1 == n) ? T2 : T1 + (T2 - T1) * (double)(i + 1) / (double)n;
        double a2 = env_a(e, t2), c2 = env_c(e, t2);
        cur[i] = (cell){i == 0 ? T1 : cur[i - 1].t2, t2, prev_a, c2};
        best = fmax(best, a2 - c2);
        prev_a = a2;
    }
    double surv = -INFINITY;
    for (int level = 0; level < CLT_BB_LEVELS && n > 0; level++) {
        double tol = up(CLT_SUP_REL * fabs(best), 2);
        size_t m = 0;
        int full = 0;
        for (size_t i = 0; i < n; i++) {
            double ub = cur[i].a1 - cur[i].c2;
            if (ub <= best + tol) continue;
            if (full || m + 2 > CLT_BB_MAX || !(cur[i].t2 - cur[i].t1 > 4 * DBL_EPSILON * fabs(cur[i].t1))) {
                /* cannot split: keep its bound */
                surv = fmax(surv, ub);
                full = m + 2 > CLT_BB_MAX;
                continue;
            }
            double tm = cur[i].t1 + (cur[i].t2 - cur[i].t1) / 2;
            double am = env_a(e, tm), cm = env_c(e, tm);
            best = fmax(best, am - cm);
            nxt[m++] = (cell){cur[i].t1, tm, cur[i].a1, cm};
            nxt[m++] = (cell){tm, cur[i].t2, am, cur[i].c2};
        }
        cell *sw = cur;
        cur = nxt;
        nxt = sw;
        n = m;
    }
    for (size_t i = 0; i < n; i++) surv = fmax(surv, cur[i].a1 - cur[i].c2);
    free(cur);
    free(nxt);
    double r = fmax(up(best + up(CLT_SUP_REL * fabs(best), 2), 2), surv);
    return fmin(1.0, up(r, 2));
}

/* A lower bound: L(t) = max(0, Phibar_X(t) - g_X) - e^eps min(1, Phibar_Y(t) + g_Y)
 * rounded down, at the best of a grid and a golden-section refinement
 * (every t gives a valid bound). */
static double env_low_at(const env *e, double t)
{
    double px = phibar(t, e->mx, e->sx), py = phibar(t, e->my, e->sy);
    double a = dn(px * (1 - CLT_NDTR_REL) - CLT_NDTR_ABS - e->gx, 2);
    double c = fmin(1.0, up(py * (1 + CLT_NDTR_REL) + CLT_NDTR_ABS + e->gy, 2));
    return dn(fmax(a, 0.0) - up(e->ee_hi * c, 2), 2);
}

static double env_low(const env *e)
{
    if (e->gx >= 1) return -INFINITY;
    double lo = fmin(e->mx - 12 * e->sx, e->my - 12 * e->sy), hi = fmax(e->mx + 12 * e->sx, e->my + 12 * e->sy);
    const int n = 400;
    double best = -INFINITY, bt = lo;
    for (int i = 0; i <= n; i++) {
        double t = lo + (hi - lo) * i / n, v = env_low_at(e, t);
        if (v > best) best = v, bt = t;
    }
    double a = bt - (hi - lo) / n, b = bt + (hi - lo) / n;
    const double gr = 0.6180339887498949;
    double x1 = b - gr * (b - a), x2 = a + gr * (b - a), f1 = env_low_at(e, x1), f2 = env_low_at(e, x2);
    for (int it = 0; it < 80; it++) {
        if (f1 >= f2) {
            b = x2, x2 = x1, f2 = f1;
            x1 = b - gr * (b - a);
            f1 = env_low_at(e, x1);
        } else {
            a = x1, x1 = x2, f1 = f2;
            x2 = a + gr * (b - a);
            f2 = env_low_at(e, x2);
        }
    }
    return fmax(best, fmax(f1, f2));
}

/* delta >= max(0, 1 - e^eps) always; rounded down */
static double trivial_low(double eps) { return eps < 0 ? fmax(0.0, dn(-expm1(eps), 4)) : 0; }

void dpa_clt_envelope_delta(const dpa_clt_dir *d, double eps, double *upv, double *lov)
{
    if (d->identity) {
        /* W = 0: delta = max(0, 1 - e^eps) */
        *lov = trivial_low(eps);
        *upv = eps < 0 ? fmin(1.0, up(-expm1(eps), 4)) : 0;
        return;
    }
    if (d->gauss) {
        /* W normal with mean V/2 and variance V under X: mu = sqrt(V) exactly */
        double mlo = dn(sqrt(d->x.v_lo), 2), mhi = up(sqrt(d->x.v_hi), 2), t;
        dpa_exact_delta(mhi, eps, upv, &t);
        dpa_exact_delta(mlo, eps, &t, lov);
        return;
    }
    env e = {d->x.m, sqrt(d->x.v), d->gamma_env_x, d->y.m, sqrt(d->y.v), d->gamma_env_y, 0, 0};
    double ec = fmin(eps, CLT_EPS_CLAMP);
    e.ee_lo = dn(exp(ec), 4);
    e.ee_hi = up(exp(eps), 4);
    double u = (isfinite(e.sx) && isfinite(e.sy) && e.sx > 0 && e.sy > 0) ? env_sup(&e) : 1;
    *upv = fmin(1.0, fmax(u, trivial_low(eps)));
    double l = (isfinite(e.ee_hi) && e.sx > 0 && e.sy > 0) ? env_low(&e) : -INFINITY;
    *lov = fmin(*upv, fmax(l, trivial_low(eps)));
}

void dpa_clt_envelope_tradeoff(const dpa_clt_dir *d, double alpha, double *lo, double *hi)
{
    double cap = 1 - alpha;
    if (d->identity) {
        *lo = *hi = cap;
        return;
    }
    double mx = d->x.m, sx = sqrt(d->x.v), my = d->y.m, sy = sqrt(d->y.v);
    double gx = d->gauss ? 0 : d->gamma_env_x, gy = d->gauss ? 0 : d->gamma_env_y;
    /* f = T(Y, X): f(alpha) = X(W <= t) at the threshold t with Y(W > t) = alpha */
    double zl = dpa_ndtri(fmin(1.0, fmax(0.0, 1 - alpha - gy)));
    double zh = dpa_ndtri(fmin(1.0, fmax(0.0, 1 - alpha + gy)));
    double fl = dpa_ndtr((my + sy * zl - mx) / sx) - gx;
    double fh = dpa_ndtr((my + sy * zh - mx) / sx) + gx;
    if (isnan(fl)) fl = -gx; /* z = -inf */
    if (isnan(fh)) fh = 1 + gx;
    *lo = fmin(cap, fmax(0.0, fl));
    *hi = fmin(cap, fmax(0.0, fh));
}

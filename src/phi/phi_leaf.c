/* log phi of one leaf in one direction: closed forms (Gaussian, Laplace's
 * continuous part), exact atoms, and numerical integration over the base
 * mechanism's loss for Poisson-subsampled Gaussian and Laplace.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Everything is a function of the finite A-law of W (phi.h).  A leaf is
 * split into its atoms and its continuous part (docs/phi.md §3); at a tilt r
 * the law e^{rW} dA / M(r) is represented by
 *   - its atoms (exact points),
 *   - for the QUAD kinds, Gauss-Legendre nodes of the integral over the base
 *     loss w (points with weights), W = +-log(q e^w + 1 - q) (LT Thm 5.1),
 *   - for GAUSS and LAPLACE, the closed form of M_c (LT Thm 2.4; GDP Lemma A.6).
 * psi(t) = log M(r + it) - log M(r) - i t mean is evaluated as
 *   log1p( sum_k p_k (e^{i t d_k} - 1) + rho_c (M_c(r+it) e^{-it mean} / M_c(r) - 1) ),
 * with e^{iu} - 1 = -2 sin^2(u/2) + i sin u, which has no cancellation. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "phi/phi.h"
#include "num/num.h"

/* C11's CMPLX is missing from some toolchains (clang with older glibc) */
#ifndef CMPLX
#define CMPLX(x, y) __builtin_complex((double)(x), (double)(y))
#endif

#define U DPA_UNIT_ROUNDOFF
#define LOG_SQRT_2PI 0.91893853320467274178
#define LOG4 1.38629436111989061883
/* The inner integration range is cut where the (tilted) density is below
 * e^{-TRIM_LOG} of its maximum: the mass beyond is below ~e^{-TRIM_LOG} times
 * the range over the density's scale, far below DPA_PHI_INNER_TOL. */
#define TRIM_LOG 52.0
/* Gaussian base: the candidate range is +-RANGE_SD sd around both component
 * means, widened by the tilt (e^{r W} shifts a Gaussian's mean by up to r mu^2). */
#define RANGE_SD 14.0
/* Grid used to locate the trimmed range. */
#define TRIM_GRID 512
/* Largest phase change t * dW over one inner panel (one period: 16-point
 * Gauss-Legendre integrates e^{i theta} over 2 pi to ~1e-20). */
#define PANEL_PHASE (3 * M_PI)
/* Largest inner panel in the base loss w: 0.75 sd of a Gaussian base, and
 * at most 1.5 (the map log(q e^w + 1 - q) has poles at Im w = +-pi). */
#define PANEL_SD 1.5
#define PANEL_MAX 2.0
/* Inner panels per leaf at most (beyond: DPA_ENUMERIC, which the
 * inversions report as "not certified"): a cost cap.  Few-step subsampled
 * mechanisms at small rates have a nearly atomic loss law whose phi decays
 * only like exp(-c log^2 t); their range T, and the inner rules' panels
 * (proportional to T), grow beyond any reasonable budget. */
#define MAX_INNER_PANELS 4096
/* Halvings tried by dpa_phi_tilt_prepare before giving up. */
#define MAX_INNER_REFINE 6

/* ------------------------------------------------------------------ init */

static dpa_status leaf_from(dpa_phi_leaf *l, const dpa_pair *p, int dir, dpa_error *err)
{
    switch (p->kind) {
    case DPA_PAIR_REVERSE:
        /* (B, A) of base in direction dir is base in direction 1 - dir; the
         * reversed atom list and the base's agree (pair.c) */
        return leaf_from(l, p->base, 1 - dir, err);
    case DPA_PAIR_ATOMS:
        l->cont = DPA_PHI_CONT_NONE;
        break;
    case DPA_PAIR_GAUSSIAN:
        l->cont = DPA_PHI_CONT_GAUSS;
        l->par = p->par[0];
        l->q = 1;
        break;
    case DPA_PAIR_LAPLACE:
        /* symmetric: the add direction has the same law */
        l->cont = DPA_PHI_CONT_LAPLACE;
        l->par = p->par[0];
        l->q = 1;
        break;
    case DPA_PAIR_POISSON:
        if (p->base->kind == DPA_PAIR_GAUSSIAN) l->cont = DPA_PHI_CONT_QUAD_GAUSS;
        else if (p->base->kind == DPA_PAIR_LAPLACE) l->cont = DPA_PHI_CONT_QUAD_LAPLACE;
        else
            return dpa_error_set(err, DPA_EUNSUPPORTED,
                                 "phi: Poisson subsampling of this base pair is not supported (use method pld)");
        l->par = p->base->par[0];
        l->q = p->par[0];
        l->sign = dir ? -1 : 1;
        break;
    case DPA_PAIR_SYMMETRIZE:
        return dpa_error_set(err, DPA_EUNSUPPORTED,
                             "phi: sampling without replacement (symmetrized pairs) is not supported by the phi "
                             "method (use method pld)");
    default:
        return dpa_error_set(err, DPA_EUNSUPPORTED, "phi: unsupported pair kind (use method pld)");
    }
    if (l->sign == 0) l->sign = dir ? -1 : 1;
    /* atoms in this direction: remove (w, la); add (-w, lb) (LT eq 7) */
    size_t n = p->natoms, k = 0;
    l->w = malloc((n ? n : 1) * sizeof *l->w);
    l->la = malloc((n ? n : 1) * sizeof *l->la);
    if (!l->w || !l->la) return dpa_error_set(err, DPA_ENOMEM, "out of memory");
    double inf = 0;
    for (size_t i = 0; i < n; i++) {
        const dpa_atom *a = &p->atoms[dir ? n - 1 - i : i];
        double w = dir ? -a->w : a->w, la = dir ? a->lb : a->la;
        if (la == -INFINITY) continue;
        if (w == INFINITY) {
            inf += exp(la);
            continue;
        }
        if (w == -INFINITY) continue; /* carries no A-mass by construction */
        l->w[k] = w;
        l->la[k] = la;
        k++;
    }
    l->natoms = k;
    /* exp of a log mass: relative error about u (|la| + 2) */
    l->inf_lo = inf * (1 - 4 * U * 40);
    /* Omitted (slack) atoms are counted as +inf mass in the upper bound; for
     * the add direction this takes slack as a bound on the omitted B-mass too
     * (true for the discrete Gaussian, the only source of slack: both tails
     * below 1e-30, discrete_gaussian.c). */
    l->inf_up = fmin(1.0, inf * (1 + 4 * U * 40) + p->slack_hi + p->slack_lo);
    return DPA_OK;
}

dpa_status dpa_phi_leaf_init(dpa_phi_leaf *l, const dpa_pair *pair, int dir, double count, dpa_error *err)
{
    memset(l, 0, sizeof *l);
    if (!(count >= 1 && count <= 1e15 && count == floor(count)))
        return dpa_error_set(err, DPA_EINVAL, "phi: a leaf count must be an integer in [1, 1e15], got %g", count);
    l->count = count;
    dpa_status st = leaf_from(l, pair, dir, err);
    if (st) dpa_phi_leaf_clear(l);
    else l->count = count;
    return st;
}

void dpa_phi_leaf_clear(dpa_phi_leaf *l)
{
    if (!l) return;
    free(l->w);
    free(l->la);
    memset(l, 0, sizeof *l);
}

int dpa_phi_leaf_smooth(const dpa_phi_leaf *l)
{
    return l->natoms == 0 && (l->cont == DPA_PHI_CONT_GAUSS || l->cont == DPA_PHI_CONT_QUAD_GAUSS);
}

/* ------------------------------------------------------------------ closed forms */

/* log sinh(y) for complex y (any branch: only exp of integer multiples of
 * it is ever used, see phi.h) */
static double complex clog_sinh(double complex y)
{
    double a = creal(y);
    if (a > 20) return y - M_LN2 + clog(1 - cexp(-2 * y));
    if (a < -20) return clog_sinh(-y) + I * M_PI;
    return clog(csinh(y));
}

double complex dpa_phi_laplace_cont_logmgf(double e0, double complex z)
{
    double complex s = z + 0.5;
    if (cabs(s * e0) < 1e-6) /* sinh(s e0)/(2s) = (e0/2)(1 + (s e0)^2/6 + ...) */
        return -0.5 * e0 + log(0.5 * e0) + (s * e0) * (s * e0) / 6.0;
    return -0.5 * e0 + clog_sinh(s * e0) - clog(2 * s);
}

/* mean and variance of Laplace's continuous part tilted by r:
 * derivatives of log M_c at r: e0 (coth y - 1/y), e0^2 (1/y^2 - csch^2 y), y = (r + 1/2) e0 */
static void laplace_moments(double e0, double r, double *mean, double *var)
{
    double y = (r + 0.5) * e0;
    double c1, c2;
    if (fabs(y) < 0.05) {
        double y2 = y * y;
        c1 = y * (1.0 / 3 - y2 / 45 + 2 * y2 * y2 / 945);
        c2 = 1.0 / 3 - y2 / 15 + 2 * y2 * y2 / 189;
    } else {
        c1 = 1 / tanh(y) - 1 / y;
        double sh = sinh(y);
        c2 = fabs(y) > 300 ? 1 / (y * y) : 1 / (y * y) - 1 / (sh * sh);
    }
    *mean = e0 * c1;
    *var = e0 * e0 * c2;
}

/* ------------------------------------------------------------------ inner quadrature */

/* The continuous part's density with its per-leaf constants (log q,
 * log(1 - q), log mu) computed once per rule instead of once per point. */
typedef struct qdens {
    const dpa_phi_leaf *l;
    double lq, l1q, lmu;
} qdens;

static qdens qdens_of(const dpa_phi_leaf *l)
{
    qdens Q = {l, log(l->q), log1p(-l->q), l->cont == DPA_PHI_CONT_QUAD_GAUSS ? log(l->par) : 0};
    return Q;
}

static double base_logf(const qdens *Q, double w)
{
    const dpa_phi_leaf *l = Q->l;
    if (l->cont == DPA_PHI_CONT_QUAD_GAUSS) {
        double mu = l->par, z = (w - 0.5 * mu * mu) / mu;
        return -0.5 * z * z - Q->lmu - LOG_SQRT_2PI;
    }
    return -0.5 * (l->par - w) - LOG4; /* Laplace continuous part, w in (-e0, e0) */
}

/* log of the tilted A-density of the continuous part on the base loss w,
 * and the loss W there */
static double quad_logdens(const qdens *Q, double r, double w, double *W)
{
    const dpa_phi_leaf *l = Q->l;
    double q = l->q, g = q == 1 ? w : dpa_poisson_loss(q, w), ld = base_logf(Q, w);
    if (l->sign > 0) {
        /* (q A + (1-q) B)_c: density f_A(w) (q + (1-q) e^{-w}) */
        if (q < 1) ld += dpa_log_add_exp(Q->lq, Q->l1q - w);
        *W = g;
    } else {
        /* B_c: density f_A(w) e^{-w}; W = -g */
        ld -= w;
        *W = -g;
    }
    return ld + r * *W;
}

/* d W / d w in absolute value, an increasing function of w */
static double quad_slope(const dpa_phi_leaf *l, double w)
{
    double q = l->q;
    if (q == 1) return 1;
    return 1 / (1 + (1 - q) / q * exp(-w));
}

typedef struct pts {
    size_t n, cap;
    double *W, *lw;
} pts;

static int pts_push(pts *s, double W, double lw)
{
    if (s->n == s->cap) {
        size_t nc = s->cap ? 2 * s->cap : 256;
        double *a = realloc(s->W, nc * sizeof *a);
        if (a) s->W = a;
        double *b = realloc(s->lw, nc * sizeof *b);
        if (b) s->lw = b;
        if (!a || !b) return -1;
        s->cap = nc;
    }
    s->W[s->n] = W;
    s->lw[s->n] = lw;
    s->n++;
    return 0;
}

/* The trimmed range [*a_out, *b_out] of the base loss w for tilt r: where the
 * tilted density is within e^{-TRIM_LOG} of its maximum (on a TRIM_GRID
 * grid, widened by one grid step).  Independent of tmax and of the
 * refinement level, so dpa_phi_tilt_prepare computes it once per tilt and
 * keeps it in the tilt (trim_*) for later preparations at the same r. */
static dpa_status quad_range(const dpa_phi_leaf *l, double r, double *a_out, double *b_out, dpa_error *err)
{
    double lo, hi;
    if (l->cont == DPA_PHI_CONT_QUAD_GAUSS) {
        double mu = l->par, m2 = mu * mu;
        lo = -0.5 * m2 - RANGE_SD * mu - fabs(r) * m2;
        hi = 0.5 * m2 + RANGE_SD * mu + fabs(r) * m2;
    } else {
        lo = -l->par;
        hi = l->par;
    }
    /* trim where the tilted density is negligible */
    qdens Q = qdens_of(l);
    double best = -INFINITY, step = (hi - lo) / TRIM_GRID, W;
    double ld[TRIM_GRID + 1];
    for (int i = 0; i <= TRIM_GRID; i++) {
        ld[i] = quad_logdens(&Q, r, lo + i * step, &W);
        if (ld[i] > best) best = ld[i];
    }
    if (!(best > -INFINITY) || !isfinite(best))
        return dpa_error_set(err, DPA_ENUMERIC, "phi: the continuous part's density could not be evaluated");
    int i0 = 0, i1 = TRIM_GRID;
    while (i0 < TRIM_GRID && ld[i0] < best - TRIM_LOG) i0++;
    while (i1 > 0 && ld[i1] < best - TRIM_LOG) i1--;
    double a = lo + (i0 > 0 ? i0 - 1 : 0) * step, b = lo + (i1 < TRIM_GRID ? i1 + 1 : TRIM_GRID) * step;
    if (l->cont == DPA_PHI_CONT_QUAD_LAPLACE) {
        a = fmax(a, -l->par);
        b = fmin(b, l->par);
    }
    *a_out = a;
    *b_out = b;
    return DPA_OK;
}

/* The inner rule on [a, b] at refinement level `lev` (every panel halved lev
 * times), appended to out[j] for each of the nr tilts r[j]: the positions W
 * are the same for every tilt, the log weights are log f(w) + r_j W (the
 * tilt only reweights the nodes). */
static dpa_status quad_points(const dpa_phi_leaf *l, int nr, const double *r, double a, double b, double tmax,
                              int lev, const double *gx, const double *gw, pts *out, dpa_error *err)
{
    double wmax = l->cont == DPA_PHI_CONT_QUAD_GAUSS ? fmin(PANEL_SD * l->par, PANEL_MAX) : fmin(PANEL_MAX, l->par);
    double scale = ldexp(1.0, -lev), W;
    qdens Q = qdens_of(l);
    size_t npan = 0;
    while (a < b) {
        double h = wmax;
        if (tmax > 0) {
            double sl = quad_slope(l, fmin(a + h, b));
            if (tmax * sl * h > PANEL_PHASE) h = PANEL_PHASE / (tmax * sl);
        }
        h *= scale;
        double e = a + h;
        if (e > b || b - e < 0.25 * h) e = b;
        double mid = 0.5 * (a + e), half = 0.5 * (e - a);
        for (int i = 0; i < DPA_PHI_GL_N; i++) {
            double w = mid + half * gx[i];
            double ld0 = quad_logdens(&Q, 0.0, w, &W), lg = log(half * gw[i]);
            for (int j = 0; j < nr; j++)
                if (pts_push(&out[j], W, (ld0 + r[j] * W) + lg)) return dpa_error_set(err, DPA_ENOMEM, "out of memory");
        }
        a = e;
        if (++npan > MAX_INNER_PANELS)
            return dpa_error_set(err, DPA_ENUMERIC, "phi: the inner integral needs more than %d panels (use method pld)",
                                 MAX_INNER_PANELS);
    }
    return DPA_OK;
}

/* ------------------------------------------------------------------ tilt */

void dpa_phi_tilt_clear(dpa_phi_tilt *tl)
{
    if (!tl) return;
    free(tl->d);
    free(tl->p);
    memset(tl, 0, sizeof *tl);
}

/* Fill tl from the points (atoms + inner nodes) and the closed-form part. */
static dpa_status tilt_fill(const dpa_phi_leaf *l, double r, const pts *s, dpa_phi_tilt *tl, dpa_error *err)
{
    double lmp = s->n ? dpa_log_sum_exp(s->lw, s->n) : -INFINITY;
    double lmc = -INFINITY, mc = 0, vc = 0;
    if (l->cont == DPA_PHI_CONT_GAUSS) {
        double m2 = l->par * l->par;
        lmc = 0.5 * m2 * (r + r * r);
        mc = 0.5 * m2 * (1 + 2 * r);
        vc = m2;
    } else if (l->cont == DPA_PHI_CONT_LAPLACE) {
        lmc = creal(dpa_phi_laplace_cont_logmgf(l->par, r));
        laplace_moments(l->par, r, &mc, &vc);
    }
    double lm = dpa_log_add_exp(lmp, lmc);
    tl->shared = 0; /* set by dpa_phi_tilt_prepare_pair */
    tl->dshift = tl->ed_sh = tl->psum = 0;
    tl->r = r;
    tl->logM = lm;
    tl->logMc = lmc;
    if (lm == -INFINITY) { /* no finite mass */
        tl->n = 0;
        tl->mean = tl->var = tl->ed = 0;
        tl->lrho_c = -INFINITY;
        return DPA_OK;
    }
    if (!isfinite(lm)) return dpa_error_set(err, DPA_ENUMERIC, "phi: the tilted mass overflows at r = %g", r);
    free(tl->d);
    free(tl->p);
    tl->d = malloc((s->n ? s->n : 1) * sizeof *tl->d);
    tl->p = malloc((s->n ? s->n : 1) * sizeof *tl->p);
    if (!tl->d || !tl->p) return dpa_error_set(err, DPA_ENOMEM, "out of memory");
    tl->n = s->n;
    long double mean = 0;
    for (size_t k = 0; k < s->n; k++) {
        tl->p[k] = exp(s->lw[k] - lm);
        mean += (long double)tl->p[k] * s->W[k];
    }
    double rc = exp(lmc - lm);
    tl->lrho_c = lmc - lm;
    mean += (long double)rc * mc;
    tl->mean = (double)mean;
    double var = 0, ed = 0;
    for (size_t k = 0; k < s->n; k++) {
        tl->d[k] = s->W[k] - tl->mean;
        var += tl->p[k] * tl->d[k] * tl->d[k];
        ed += tl->p[k] * fabs(tl->d[k]);
    }
    tl->meanc_shift = mc - tl->mean;
    var += rc * (vc + tl->meanc_shift * tl->meanc_shift);
    ed += rc * (sqrt(vc) + fabs(tl->meanc_shift));
    tl->var = var;
    tl->ed = ed;
    return DPA_OK;
}

/* Build the tilts tl[j] at r[j] (j < nr) at refinement level lev on one
 * point set: the atoms, then (QUAD kinds) the inner rule on [a, b].  The
 * positions are the same for every tilt and in the same order. */
static dpa_status tilt_build(const dpa_phi_leaf *l, int nr, const double *r, double tmax, int lev, double a, double b,
                             const double *gx, const double *gw, dpa_phi_tilt *const *tl, dpa_error *err)
{
    pts s[2] = {{0, 0, NULL, NULL}, {0, 0, NULL, NULL}};
    dpa_status st = DPA_OK;
    for (int j = 0; j < nr; j++)
        for (size_t i = 0; i < l->natoms && !st; i++)
            if (pts_push(&s[j], l->w[i], l->la[i] + r[j] * l->w[i])) st = dpa_error_set(err, DPA_ENOMEM, "out of memory");
    size_t nc0 = s[0].n;
    if (!st && (l->cont == DPA_PHI_CONT_QUAD_GAUSS || l->cont == DPA_PHI_CONT_QUAD_LAPLACE))
        st = quad_points(l, nr, r, a, b, tmax, lev, gx, gw, s, err);
    for (int j = 0; j < nr; j++) {
        if (!st) st = tilt_fill(l, r[j], &s[j], tl[j], err);
        tl[j]->nc0 = nc0;
        tl[j]->tmax = tmax;
        free(s[j].W);
        free(s[j].lw);
    }
    return st;
}

/* S(t) = sum_k p_k (e^{i t (d_k + shift)} - 1) over points [k0, k1), with
 * compensated sums (dpa_phi_ks: the summation error is at most
 * (2u + 2n u^2) sum |terms|, sum |terms| <= |S_re| + |t| sum p_k |d_k + shift|) */
static double complex point_sum_shift(const dpa_phi_tilt *tl, size_t k0, size_t k1, double t, double shift)
{
    dpa_phi_ks re = {0, 0}, im = {0, 0};
    for (size_t k = k0; k < k1; k++) {
        double s, c;
        sincos(0.5 * t * (tl->d[k] + shift), &s, &c);
        dpa_phi_ks_add(&re, -2 * tl->p[k] * s * s);
        dpa_phi_ks_add(&im, 2 * tl->p[k] * s * c);
    }
    return CMPLX(re.s, im.s);
}

/* S(t) = sum_k p_k (e^{i t d_k} - 1) over points [k0, k1) (compensated sums) */
static double complex point_sum(const dpa_phi_tilt *tl, size_t k0, size_t k1, double t)
{
    dpa_phi_ks re = {0, 0}, im = {0, 0};
    for (size_t k = k0; k < k1; k++) {
        double s, c;
        sincos(0.5 * t * tl->d[k], &s, &c);
        dpa_phi_ks_add(&re, -2 * tl->p[k] * s * s);
        dpa_phi_ks_add(&im, 2 * tl->p[k] * s * c);
    }
    return CMPLX(re.s, im.s);
}

/* round-off bound of a point sum S over n points with spread sum p_k |d_k|
 * = ed: every term p_k (e^{i t d_k} - 1) has size <= p_k |t d_k| and a few
 * u relative error (p_k, the half-angle sine, t d_k rounded): 8u |t| ed;
 * the compensated sums add (2u + 2n u^2) sum |terms| with
 * sum |terms| <= |S| + |t| ed (the real terms have one sign) */
static double point_sum_err(double t, double ed, double absS, size_t n)
{
    double sum_abs = absS + fabs(t) * ed;
    return 8 * U * fabs(t) * ed + (2 * U + 2 * (double)n * U * U) * sum_abs;
}

static double complex clog1p(double complex S)
{
    double a = creal(S), b = cimag(S);
    double re = (fabs(a) < 0.5 && fabs(b) < 0.5) ? 0.5 * log1p(2 * a + a * a + b * b) : log(hypot(1 + a, b));
    return CMPLX(re, atan2(b, 1 + a));
}

/* e^z - 1 without cancellation */
static double complex cexpm1(double complex z)
{
    double x = creal(z), y = cimag(z), sh = sin(0.5 * y);
    double em = expm1(x);
    return CMPLX(em * cos(y) - 2 * sh * sh, (em + 1) * sin(y));
}

/* The closed-form part's term rho_c (M_c(r+it) e^{-it mean}/M_c(r) - 1) and
 * its absolute error bound */
static double complex closed_term(const dpa_phi_leaf *l, const dpa_phi_tilt *tl, double t, double *err)
{
    if (tl->lrho_c == -INFINITY) {
        *err = 0;
        return 0;
    }
    double rc = exp(tl->lrho_c);
    double complex delta;
    double e;
    if (l->cont == DPA_PHI_CONT_GAUSS) {
        double m2 = l->par * l->par;
        /* log M_c(r+it) - log M_c(r) - it mean = -mu^2 t^2 / 2 + i t (mean_c - mean) */
        delta = CMPLX(-0.5 * m2 * t * t, t * tl->meanc_shift);
        e = 4 * U * cabs(delta);
    } else {
        double complex L1 = dpa_phi_laplace_cont_logmgf(l->par, CMPLX(tl->r, t));
        delta = L1 - tl->logMc - I * t * tl->mean;
        e = 16 * U * (1 + cabs(L1) + fabs(tl->logMc) + fabs(t * tl->mean) + fabs(t * l->par));
    }
    double complex v = cexpm1(delta);
    *err = rc * (e * (cabs(v) + 1) + 4 * U * cabs(v));
    return rc * v;
}

double complex dpa_phi_psi(const dpa_phi_leaf *l, const dpa_phi_tilt *tl, double t, double *err)
{
    if (l->cont == DPA_PHI_CONT_GAUSS && tl->n == 0) {
        /* pure Gaussian: psi = -mu^2 t^2 / 2 exactly (LT Thm 2.4) */
        double v = -0.5 * l->par * l->par * t * t;
        if (err) *err = 2 * U * fabs(v);
        return v;
    }
    if (tl->logM == -INFINITY) {
        if (err) *err = 0;
        return 0;
    }
    double ec;
    double complex S = point_sum(tl, 0, tl->n, t) + closed_term(l, tl, t, &ec);
    double complex psi = clog1p(S);
    if (err) {
        /* the point sum (point_sum_err; ed bounds the points' spread, the
         * closed-form part's share included), the closed-form term (ec),
         * the inner rule (inner_err), and the addition of the two parts
         * and log1p's argument: 4u |S| */
        double es = point_sum_err(t, tl->ed, cabs(S), tl->n) + ec + tl->inner_err + 4 * U * cabs(S);
        double den = cabs(1 + S);
        *err = den > 0 ? es / den + 2 * U * cabs(psi) : INFINITY;
    }
    return psi;
}

void dpa_phi_psi_pair(const dpa_phi_leaf *l, const dpa_phi_tilt *t0, const dpa_phi_tilt *t1, double t,
                      double complex *psi0, double *err0, double complex *psi1, double *err1)
{
    if (!t1->shared) {
        *psi0 = dpa_phi_psi(l, t0, t, err0);
        *psi1 = dpa_phi_psi(l, t1, t, err1);
        return;
    }
    /* one sine per point for both tilts: with D_k = e^{i t d0_k} - 1 (d0 the
     * offsets from t0's mean) and Delta = mean0 - mean1,
     *   S0 = sum p0_k D_k,
     *   S1 = sum p1_k (e^{i t (d0_k + Delta)} - 1)
     *      = e^{i t Delta} sum p1_k D_k + (e^{i t Delta} - 1) sum p1_k
     *      = S1' + D_Delta (S1' + psum1),   D_Delta = e^{i t Delta} - 1,
     * every factor in the cancellation-free form (phi.h). */
    dpa_phi_ks a0 = {0, 0}, b0 = {0, 0}, a1 = {0, 0}, b1 = {0, 0};
    const double *d = t0->d, *p0 = t0->p, *p1 = t1->p;
    for (size_t k = 0; k < t0->n; k++) {
        double s, c;
        sincos(0.5 * t * d[k], &s, &c);
        double re = -2 * s * s, im = 2 * s * c;
        dpa_phi_ks_add(&a0, p0[k] * re);
        dpa_phi_ks_add(&b0, p0[k] * im);
        dpa_phi_ks_add(&a1, p1[k] * re);
        dpa_phi_ks_add(&b1, p1[k] * im);
    }
    double r0 = a0.s, i0 = b0.s, r1 = a1.s, i1 = b1.s;
    double sb, cb;
    sincos(0.5 * t * t1->dshift, &sb, &cb);
    double dr = -2 * sb * sb, di = 2 * sb * cb; /* D_Delta */
    double ar = r1 + t1->psum, ai = i1;       /* S1' + psum1 */
    double complex S0 = CMPLX(r0, i0), S1p = CMPLX(r1, i1);
    double complex S1 = CMPLX(r1 + (dr * ar - di * ai), i1 + (dr * ai + di * ar));
    *psi0 = clog1p(S0);
    *psi1 = clog1p(S1);
    if (err0) {
        /* as dpa_phi_psi (no closed-form part in the QUAD kinds) */
        double es = point_sum_err(t, t0->ed, cabs(S0), t0->n) + t0->inner_err + 4 * U * cabs(S0);
        double den = cabs(1 + S0);
        *err0 = den > 0 ? es / den + 2 * U * cabs(*psi0) : INFINITY;
    }
    if (err1) {
        /* S1' as S0 (terms of size p1_k |t d0_k|: point_sum_err with
         * ed_sh); it enters S1 with the factor e^{i t Delta} of modulus 1.
         * D_Delta is one such term (8u |t Delta|) multiplied by
         * |S1' + psum1|; psum1 (long double sum), the inner addition, the
         * complex product and the final addition add a few u of
         * |D_Delta| (|S1'| + psum1) <= |t Delta| (|S1'| + psum1) and of |S1|:
         * 16u |t Delta| (|S1'| + psum1) and 4u |S1| cover them. */
        double es = point_sum_err(t, t1->ed_sh, cabs(S1p), t1->n) + 4 * U * cabs(S1p) +
                    16 * U * fabs(t * t1->dshift) * (cabs(S1p) + t1->psum) + 4 * U * cabs(S1) + t1->inner_err;
        double den = cabs(1 + S1);
        *err1 = den > 0 ? es / den + 2 * U * cabs(*psi1) : INFINITY;
    }
}

double dpa_phi_log_env(const dpa_phi_leaf *l, const dpa_phi_tilt *tl, double t)
{
    if (tl->logM == -INFINITY) return 0;
    if (l->cont == DPA_PHI_CONT_GAUSS && tl->n == 0) return -0.5 * l->par * l->par * t * t;
    double env = 0;
    for (size_t k = 0; k < tl->nc0; k++) env += tl->p[k]; /* atoms: |sum| <= their mass */
    if (tl->n > tl->nc0) {
        /* quadrature nodes: the actual value (not an envelope) */
        double re = 0, im = 0;
        for (size_t k = tl->nc0; k < tl->n; k++) {
            double s, c;
            sincos(t * tl->d[k], &s, &c);
            re += tl->p[k] * c;
            im += tl->p[k] * s;
        }
        env += hypot(re, im);
    }
    if (tl->lrho_c > -INFINITY && l->cont == DPA_PHI_CONT_LAPLACE) {
        /* |M_c(r + it)| <= e^{-e0/2} cosh((r + 1/2) e0) / |2 (r + 1/2 + it)| */
        double e0 = l->par, a = tl->r + 0.5;
        double lb = -0.5 * e0 + fabs(a * e0) + log1p(exp(-2 * fabs(a * e0))) - M_LN2 - log(2 * hypot(a, t));
        env += exp(tl->lrho_c + lb - tl->logMc);
    }
    return log(env);
}

void dpa_phi_log_env_pair(const dpa_phi_leaf *l, const dpa_phi_tilt *t0, const dpa_phi_tilt *t1, double t,
                          double *e0, double *e1)
{
    if (!t1->shared) {
        *e0 = dpa_phi_log_env(l, t0, t);
        *e1 = dpa_phi_log_env(l, t1, t);
        return;
    }
    /* same points: |sum p1_k e^{i t d1_k}| = |e^{i t Delta} sum p1_k e^{i t d0_k}|
     * = |sum p1_k e^{i t d0_k}|, so one sine per point serves both (shared
     * tilts are QUAD kinds: atoms and nodes, no closed-form part) */
    double a0 = 0, a1 = 0, r0 = 0, i0 = 0, r1 = 0, i1 = 0;
    for (size_t k = 0; k < t0->nc0; k++) {
        a0 += t0->p[k];
        a1 += t1->p[k];
    }
    for (size_t k = t0->nc0; k < t0->n; k++) {
        double s, c;
        sincos(t * t0->d[k], &s, &c);
        r0 += t0->p[k] * c;
        i0 += t0->p[k] * s;
        r1 += t1->p[k] * c;
        i1 += t1->p[k] * s;
    }
    *e0 = log(a0 + (t0->n > t0->nc0 ? hypot(r0, i0) : 0));
    *e1 = log(a1 + (t0->n > t0->nc0 ? hypot(r1, i1) : 0));
}

/* Agreement of two inner rules (QUAD kinds: points only): the masses, and
 * max over the check points of |S_a(t) - S_b(t)|, both centred at a's mean
 * (so the difference keeps the relative accuracy of the small sums). */
static double rule_diff(const dpa_phi_tilt *a, const dpa_phi_tilt *b, double tmax)
{
    double dmax = fabs(a->logM - b->logM);
    const double f[3] = {1.0, 0.5, 0.125};
    for (int i = 0; i < 3; i++) {
        double t = tmax * f[i];
        double complex sa = point_sum(a, 0, a->n, t);
        double complex sb = point_sum_shift(b, 0, b->n, t, b->mean - a->mean);
        double dd = cabs(sa - sb);
        if (dd > dmax) dmax = dd;
    }
    return dmax;
}

static int is_quad(const dpa_phi_leaf *l)
{
    return l->cont == DPA_PHI_CONT_QUAD_GAUSS || l->cont == DPA_PHI_CONT_QUAD_LAPLACE;
}

/* The trimmed range at tilt r (QUAD kinds), from tl's cache when it holds
 * the range of this leaf at this r. */
static dpa_status tilt_range(const dpa_phi_leaf *l, double r, const dpa_phi_tilt *tl, double *a, double *b,
                             dpa_error *err)
{
    if (tl->trim_leaf == l && tl->trim_r == r && tl->trim_key[0] == l->par && tl->trim_key[1] == l->q &&
        tl->trim_key[2] == (double)l->sign && tl->trim_key[3] == (double)l->cont) {
        *a = tl->trim_a;
        *b = tl->trim_b;
        return DPA_OK;
    }
    return quad_range(l, r, a, b, err);
}

static void tilt_keep_range(const dpa_phi_leaf *l, double r, double a, double b, dpa_phi_tilt *tl)
{
    tl->trim_leaf = l;
    tl->trim_r = r;
    tl->trim_a = a;
    tl->trim_b = b;
    tl->trim_key[0] = l->par;
    tl->trim_key[1] = l->q;
    tl->trim_key[2] = (double)l->sign;
    tl->trim_key[3] = (double)l->cont;
}

/* Prepare the nr (1 or 2) tilts tl[j] at r[j] on one point set (for QUAD
 * kinds the inner rule covers the union of the tilts' trimmed ranges), with
 * the inner rule refined jointly by node doubling until every tilt's two
 * successive rules agree to DPA_PHI_INNER_TOL. */
static dpa_status tilt_prepare_n(const dpa_phi_leaf *l, int nr, const double *r, double tmax, dpa_phi_tilt *const *tl,
                                 dpa_error *err)
{
    double gx[DPA_PHI_GL_N], gw[DPA_PHI_GL_N];
    dpa_status st = dpa_phi_gl(gx, gw, err);
    if (st) return st;
    double rg[2][2] = {{0, 0}, {0, 0}}, a = 0, b = 0;
    for (int j = 0; j < nr; j++) {
        tl[j]->inner_err = 0;
        tl[j]->shared = 0;
        if (!is_quad(l)) continue;
        if ((st = tilt_range(l, r[j], tl[j], &rg[j][0], &rg[j][1], err))) return st;
        a = j ? fmin(a, rg[j][0]) : rg[j][0];
        b = j ? fmax(b, rg[j][1]) : rg[j][1];
    }
    st = tilt_build(l, nr, r, fmax(tmax, 0.0), 0, a, b, gx, gw, tl, err);
    int check = !st && tmax >= 0 && is_quad(l); /* tmax < 0: moments only, no error check */
    for (int j = 0; j < nr; j++)
        if (tl[j]->logM == -INFINITY) check = 0;
    if (check) {
        /* node doubling: compare with every panel halved; keep refining
         * while they disagree (the finer rule becomes the one used) */
        dpa_phi_tilt fine[2];
        memset(fine, 0, sizeof fine);
        dpa_phi_tilt *fp[2] = {&fine[0], &fine[1]};
        double tchk[2] = {0, 0};
        for (int j = 0; j < nr; j++) tchk[j] = tmax > 0 ? tmax : 1 / sqrt(fmax(tl[j]->var, 1e-300));
        for (int lev = 1; lev <= MAX_INNER_REFINE; lev++) {
            st = tilt_build(l, nr, r, tmax, lev, a, b, gx, gw, fp, err);
            if (st) break;
            double d[2] = {0, 0}, dm = 0;
            int ok = 1;
            for (int j = 0; j < nr; j++) {
                d[j] = rule_diff(tl[j], &fine[j], tchk[j]);
                if (!(d[j] <= DPA_PHI_INNER_TOL)) ok = 0;
                dm = fmax(dm, d[j]);
            }
            /* d estimates the error of the coarser rule: when it is small
             * the coarser rule is kept (half the cost) and charged
             * DPA_PHI_SAFETY d; otherwise the finer rule becomes the
             * candidate */
            if (ok) {
                for (int j = 0; j < nr; j++) tl[j]->inner_err = DPA_PHI_SAFETY * d[j] + 1e-21;
                break;
            }
            for (int j = 0; j < nr; j++) {
                dpa_phi_tilt tmp = *tl[j];
                *tl[j] = fine[j];
                fine[j] = tmp;
                tl[j]->inner_err = DPA_PHI_SAFETY * d[j] + 1e-21;
            }
            if (lev == MAX_INNER_REFINE)
                st = dpa_error_set(err, DPA_ENUMERIC,
                                   "phi: the numerical characteristic function did not converge (inner rules differ "
                                   "by %.3g after %d halvings; use method pld)",
                                   dm, lev);
        }
        for (int j = 0; j < nr; j++) dpa_phi_tilt_clear(&fine[j]);
    }
    if (is_quad(l))
        for (int j = 0; j < nr; j++) tilt_keep_range(l, r[j], rg[j][0], rg[j][1], tl[j]);
    return st;
}

dpa_status dpa_phi_tilt_prepare(const dpa_phi_leaf *l, double r, double tmax, dpa_phi_tilt *tl, dpa_error *err)
{
    dpa_phi_tilt *const tp[1] = {tl};
    return tilt_prepare_n(l, 1, &r, tmax, tp, err);
}

/* Mark t1 for evaluation with t0's sines (dpa_phi_psi_pair) when the two
 * tilts have the same points and their means are close enough that the
 * shifted evaluation costs at most a few percent in the round-off bound. */
static void tilt_share(dpa_phi_tilt *t0, dpa_phi_tilt *t1)
{
    if (t0->logM == -INFINITY || t1->logM == -INFINITY || t0->n != t1->n || t0->n == 0 ||
        t0->lrho_c > -INFINITY || t1->lrho_c > -INFINITY)
        return;
    double dm = t0->mean - t1->mean, e = 0;
    if (!(fabs(dm) <= DPA_PHI_SHARE_SHIFT * t1->ed)) return;
    long double ps = 0;
    for (size_t k = 0; k < t1->n; k++) {
        ps += t1->p[k];
        e += t1->p[k] * fabs(t0->d[k]);
    }
    t1->shared = 1;
    t1->dshift = dm;
    t1->psum = (double)ps;
    t1->ed_sh = e;
}

dpa_status dpa_phi_tilt_prepare_pair(const dpa_phi_leaf *l, double r0, double r1, double tmax, dpa_phi_tilt *t0,
                                     dpa_phi_tilt *t1, dpa_error *err)
{
    dpa_status st;
    if (!is_quad(l)) {
        /* closed forms and atoms: nothing to share (atoms are cheap) */
        if ((st = dpa_phi_tilt_prepare(l, r0, tmax, t0, err))) return st;
        return dpa_phi_tilt_prepare(l, r1, tmax, t1, err);
    }
    const double r[2] = {r0, r1};
    dpa_phi_tilt *const tp[2] = {t0, t1};
    st = tilt_prepare_n(l, 2, r, tmax, tp, err);
    if (!st) tilt_share(t0, t1);
    return st;
}

dpa_status dpa_phi_leaf_log_mgf(const dpa_phi_leaf *l, double r, double t, double complex *out, dpa_error *err)
{
    dpa_phi_tilt tl;
    memset(&tl, 0, sizeof tl);
    dpa_status st = dpa_phi_tilt_prepare(l, r, fabs(t), &tl, err);
    if (!st) {
        if (tl.logM == -INFINITY) *out = -INFINITY;
        else *out = tl.logM + I * t * tl.mean + dpa_phi_psi(l, &tl, t, NULL);
    }
    dpa_phi_tilt_clear(&tl);
    return st;
}

/* Certified quadrature for the continuous part of a Poisson-subsampled pair:
 *     I = int_{lo < x < hi} beta(x) g(x) dx,    g(x) = (1 - q + q e^x)^gamma,
 * beta the density of the base loss under B (rdp.h, dpa_rdp_mix_log_integral).
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Method.  The range is cut into panels [c - h, c + h]; each is integrated by
 * n = RDP_GL_N point Gauss-Legendre (GSL's tabulated nodes).  The integrand
 * f = beta g is analytic in the strip |Im x| < pi/2 (there Re(1 - q + q e^x) > 0,
 * so the principal power is analytic; beta is entire), so on the Bernstein
 * ellipse E_rho of the panel (semi-axes h (rho +- 1/rho)/2) the error is at
 * most (Trefethen 2008, "Is Gauss quadrature better than Clenshaw-Curtis?",
 * SIAM Review 50(1), Thm 4.5, scaled to half-width h)
 *     h * (64/15) M rho^{-2n} / (rho^2 - 1),      M = max_{E_rho} |f|.
 * We take rho = RDP_GL_RHO and h such that the ellipse's half-height
 * b = h (rho - 1/rho)/2 is <= RDP_STRIP (and <= mu for the Gaussian, which
 * keeps |beta| within e^{1/2} of its real-axis size).  M is bounded on the
 * ellipse's bounding box [c - a, c + a] x [-b, b], a = h (rho + 1/rho)/2:
 *   |beta| (Gaussian) <= phi(dist(-m, box)/mu)/mu * e^{b^2/(2 mu^2)},
 *   |beta| (Laplace)  <= e^{-(e0 + c - a)/2}/4,
 *   |g| <= (1 - q + q e^{c+a})^gamma                  for gamma >= 0,
 *   |g| <= (1 - q + q e^{c-a} cos b)^gamma            for gamma < 0
 *        (|1 - q + q e^{x+iy}| >= Re(.) >= 1 - q + q e^x cos b > 0).
 * Tails outside the panels (Gaussian only) are bounded analytically:
 * for x >= 0, 1 - q + q e^x <= e^x, and for x <= 0 it is >= e^x, so
 *   gamma >= 0:  int_{x > xr} beta g <= e^{gamma(gamma-1)m} Phibar((xr - (2 gamma - 1) m)/mu)   (xr >= 0),
 *                int_{x < xl} beta g <= Phi((xl + m)/mu)                                    (xl <= 0),
 *   gamma < 0:   int_{x < xl} beta g <= min((1-q)^gamma Phi((xl + m)/mu),
 *                                          e^{gamma(gamma-1)m} Phi((xl - (2 gamma - 1) m)/mu)),
 *                int_{x > xr} beta g <= g(xr) Phibar((xr + m)/mu)   (g decreasing).
 * For gamma < 0 the window's right end is pulled in to where that bound is
 * below e^{-70} (the integral is >= B(W < 0) >= 1/2 there, since g >= 1 for
 * x <= 0), which keeps the panels away from the region where g is
 * negligible but steep.
 * The range is widened (doubled) until the tails are below RDP_TAIL_REL of
 * the quadrature value or RDP_MAX_PANELS is reached; the tail bounds are
 * always added, so stopping early loosens but never breaks the bound.
 * Round-off: each node's log value is off by at most 4u times the sum of
 * the magnitudes it is built from, plus the node position's error (2u (|c| + h))
 * times |d log f / dx|; summation error as in dpa_rdp_acc_log_upper.
 *
 * The trapezoidal rule (Gaussian base, the whole line, gamma < 0: the add
 * direction of the Poisson-subsampled Gaussian; docs/rdp.md §2.5).  In
 * z = (x + m)/mu the integral is I = int phi(z) G(z) dz with
 * G(z) = (1 - q + q e^{w})^gamma, w = -m + mu z.  For |Im z| <= a < pi/mu:
 *   |phi(z + iy)| = phi(z) e^{y^2/2},
 *   |1 - q + q e^{w + i t}|^2 = (1 - q + q e^w)^2 [1 - 2 p (1 - p)(1 - cos t)],
 *       p = q e^w/(1 - q + q e^w) in (0, 1), so with p(1-p) <= 1/4 the bracket
 *       is >= (1 + cos t)/2 = cos^2(t/2) > 0 (|t| = mu |y| < pi: the power is
 *       analytic there, its base never on (-inf, 0]) and, gamma < 0,
 *   |G(z + iy)| <= G(z) cos(mu a/2)^gamma.
 * Hence sup_{|y|<a} int |f(x + iy)| dx <= M = e^{a^2/2} cos(mu a/2)^gamma I, and
 * (Trefethen & Weideman 2014, "The exponentially convergent trapezoidal
 * rule", SIAM Review 56(3), Thm 5.1) the rule h sum_k f(k h) over all
 * integers k is within 2M/(e^{2 pi a/h} - 1) = kappa I of I, so
 * I <= T/(1 - kappa).  a is chosen to make h largest for kappa <= e^{-RDP_TRAP_LOGERR}.
 * The nodes outside [zL, zR] (zL <= 0 <= zR) are bounded, not summed:
 * on the left G <= (1-q)^gamma and phi increases, so h sum_{z_k < zL} f(z_k)
 * <= (1-q)^gamma Phi(zL); on the right f decreases, so
 * h sum_{z_k > zR} f(z_k) <= G(zR) Phibar(zR).  Each node's value carries
 * its round-off (the terms of its log, the node position k h off by u |z|
 * times |d log f/dz| <= |z| + |gamma| mu) and the sum Neumaier's error bound.
 * At DP-SGD's orders this takes ~50-150 nodes where the panels took ~700.
 * gamma > 0 (the remove direction at fractional orders, where the series
 * converges slowly near gamma = 1): |1 - q + q e^{w+it}| <= 1 - q + q e^w,
 * so |G(z + iy)| <= G(z) and M = e^{a^2/2} I; the tails are bounded by
 * G(zL) Phi(zL) on the left and, where w >= 0 (1 - q + q e^w <= e^w), by
 * e^{gamma (gamma-1) m} Phibar(zR - gamma mu) on the right.
 */
#include <math.h>
#include <stdlib.h>
#include <gsl/gsl_integration.h>
#include "rdp/rdp.h"
#include "num/num.h"

#define U DPA_UNIT_ROUNDOFF

#define RDP_GL_N 32
#define RDP_GL_RHO 2.5
/* Half-height of the ellipse: pi/3 < pi/2 keeps cos(Im x) >= 1/2. */
#define RDP_STRIP (M_PI / 3.0)
/* Initial half-range of the Gaussian window in standard deviations:
 * Phi(-12) < 2e-33, below RDP_TAIL_REL of any integral that has at least
 * the mass of one side of the bulk (the window is widened otherwise). */
#define RDP_Z 12.0
/* Tails are acceptable once below this fraction of the integral. */
#define RDP_TAIL_REL 1e-25
#define RDP_MAX_PANELS 40000
/* Panel half-width times the integrand's log-slope: with the box reaching
 * (rho + 1/rho)/2 = 1.45 half-widths, M exceeds the integrand on the panel
 * by at most ~e^{2 * 1.45 * 6} = e^{17.4} while rho^{-64} = e^{-58.6}. */
#define RDP_SLOPE_H 6.0
#define RDP_BOX_REACH 1.45

#define LOG_SQRT_2PI 0.91893853320467274178032973640562
#define INV_SQRT_2PI 0.39894228040143267793994605993438

/* Trapezoidal rule: the discretization error kappa I is kept below
 * e^{-RDP_TRAP_LOGERR} I (~1e-20 relative, far below the round-off
 * allowances of ~1e-15), and the two tail bounds below e^{-RDP_TRAP_LOGTAIL}
 * of the sum (~2e-22 each). */
#define RDP_TRAP_LOGERR 46.0
#define RDP_TRAP_LOGTAIL 50.0
/* Strip half-widths a tried, as fractions of pi/mu (the largest strip the
 * bound allows); the one giving the widest step h is used. */
#define RDP_TRAP_NA 24
/* Window growth when a tail bound is not yet small enough, in standard
 * deviations, and how often. */
#define RDP_TRAP_WIDEN 4.0
#define RDP_TRAP_MAX_WIDEN 16
/* Beyond this many nodes the panels are used instead (a huge |gamma| mu^2
 * makes the strip, hence h, tiny). */
#define RDP_TRAP_MAX_NODES 200000
/* For gamma > 0 (the remove direction, fractional orders) the series is
 * tried first with a budget of terms: RDP_TERM_PER_NODE per node the rule
 * would need (a term costs two log Phi and two logs, a node one
 * dpa_poisson_loss and one exp: about 2.5 times as much, measured), and at
 * least RDP_SERIES_MIN_BUDGET past floor(gamma) + 2 (where its terms start
 * to alternate); when that does not converge, the rule, which then costs
 * about as much again at most. */
#define RDP_TERM_PER_NODE 0.4
#define RDP_SERIES_MIN_BUDGET 64

typedef struct {
    dpa_pair_kind base;
    double par, m, q, gamma;
    double xn[RDP_GL_N], lwn[RDP_GL_N]; /* nodes and log weights on [-1, 1] */
} quad_ctx;

/* log beta(x) on the real axis */
static double log_beta(const quad_ctx *c, double x)
{
    if (c->base == DPA_PAIR_GAUSSIAN) {
        double z = (x + c->m) / c->par;
        return -0.5 * z * z - log(c->par) - LOG_SQRT_2PI;
    }
    return -0.5 * (c->par + x) - 2 * M_LN2;
}

/* log g(x) = gamma log(1 - q + q e^x) (dpa_poisson_loss is accurate to a
 * few u relative for every x) */
static double log_g(const quad_ctx *c, double x)
{
    if (c->gamma == 0) return 0.0;
    return c->gamma * dpa_poisson_loss(c->q, x);
}

/* An upper bound on |d log f/dx| over [x0, x1] (and the ellipse's box
 * around it, which reaches RDP_BOX_REACH panel half-widths beyond):
 * |gamma| q e^x/(1 - q + q e^x), increasing in x, plus the Gaussian's
 * |x + m|/mu^2 (Laplace: 1/2). */
static double log_slope(const quad_ctx *c, double x0, double x1)
{
    double s = c->gamma == 0 ? 0.0 : fabs(c->gamma) * exp(log(c->q) + x1 - dpa_poisson_loss(c->q, x1));
    if (c->base == DPA_PAIR_GAUSSIAN)
        s += fmax(fabs(x0 + c->m), fabs(x1 + c->m)) / (c->par * c->par);
    else
        s += 0.5;
    return s;
}

/* Quadrature of [xa, xb] into acc (values) and errs (the Bernstein
 * bounds).  Panel half-widths are at most hmax (the strip) and at most
 * RDP_SLOPE_H / slope, so that the integrand varies by at most a factor
 * e^{~RDP_SLOPE_H (rho + 1/rho)/2} over the ellipse's box and M stays close
 * to the integrand's size on the panel.  Returns the number of panels. */
static size_t panels(const quad_ctx *c, double xa, double xb, dpa_rdp_acc *acc, dpa_rdp_acc *errs)
{
    double rho = RDP_GL_RHO;
    double hb = RDP_STRIP;
    if (c->base == DPA_PAIR_GAUSSIAN) hb = fmin(hb, c->par);
    double hmax = hb / (0.5 * (rho - 1.0 / rho));
    double hmin = (xb - xa) / (2.0 * RDP_MAX_PANELS);
    size_t np = 0;
    for (double lo = xa; lo < xb; np++) {
        double reach = RDP_BOX_REACH * hmax;
        double h = fmin(hmax, RDP_SLOPE_H / log_slope(c, lo - reach, fmin(lo + 2 * hmax, xb) + reach));
        h = fmax(h, hmin);
        double hi = lo + 2 * h >= xb ? xb : lo + 2 * h;
        double cen = 0.5 * (lo + hi), hp = 0.5 * (hi - lo), lh = log(hp);
        /* this panel's ellipse and its bounding box */
        double a = 0.5 * hp * (rho + 1.0 / rho), b = 0.5 * hp * (rho - 1.0 / rho);
        double lconst = lh + log(64.0 / 15.0) - 2.0 * RDP_GL_N * log(rho) - log(rho * rho - 1.0);
        double lcosb = log(cos(b));
        /* the Bernstein bound */
        double lm;
        if (c->base == DPA_PAIR_GAUSSIAN) {
            double mu = c->par, d = 0;
            if (-c->m < cen - a) d = cen - a + c->m;
            else if (-c->m > cen + a) d = -c->m - (cen + a);
            lm = -0.5 * (d / mu) * (d / mu) + 0.5 * (b / mu) * (b / mu) - log(mu) - LOG_SQRT_2PI;
        } else {
            lm = -0.5 * (c->par + cen - a) - 2 * M_LN2;
        }
        if (c->gamma >= 0) lm += c->gamma * dpa_poisson_loss(c->q, cen + a);
        else lm += c->gamma * dpa_poisson_loss(c->q, cen - a + lcosb);
        /* the bound is itself computed in floating point: inflate by 1e-6
         * relative (far more than its round-off) */
        dpa_rdp_acc_add(errs, lconst + lm + 1e-6, 1, 0.0);
        /* the nodes */
        double dx = 2 * U * (fabs(cen) + hp); /* node position error */
        for (size_t k = 0; k < RDP_GL_N; k++) {
            double x = cen + hp * c->xn[k], lw = lh + c->lwn[k];
            double lb = log_beta(c, x), lg = log_g(c, x);
            double slope = (c->base == DPA_PAIR_GAUSSIAN ? fabs(x + c->m) / (c->par * c->par) : 0.5) +
                           fabs(c->gamma) + 1;
            double e = 4 * U * (fabs(lb) + fabs(lg) + fabs(lw) + 4) + slope * dx;
            dpa_rdp_acc_add(acc, lw + lb + lg, 1, expm1(e));
        }
        lo = hi;
    }
    return np;
}

/* log of the tail bounds (Gaussian base) outside [xl, xr] within (lo, hi) */
static double log_tails(const quad_ctx *c, double lo, double hi, double xl, double xr)
{
    double mu = c->par, m = c->m, g = c->gamma, tl = -INFINITY, tr = -INFINITY;
    double pad = 1e-6; /* relative inflation of the closed-form tails (round-off of logs) */
    if (lo < xl) {
        if (g >= 0) {
            tl = dpa_log_ndtr((xl + m) / mu);
        } else {
            double t1 = c->q < 1 ? g * log1p(-c->q) + dpa_log_ndtr((xl + m) / mu) : INFINITY;
            double t2 = g * (g - 1) * m + dpa_log_ndtr((xl - (2 * g - 1) * m) / mu);
            tl = fmin(t1, t2);
        }
        tl += pad * (fabs(tl) + 1);
    }
    if (hi > xr) {
        if (g >= 0) tr = g * (g - 1) * m + dpa_log_ndtr_c((xr - (2 * g - 1) * m) / mu);
        else tr = fmin(0.0, g * dpa_poisson_loss(c->q, xr)) + dpa_log_ndtr_c((xr + m) / mu); /* g <= g(xr) */
        tr += pad * (fabs(tr) + 1);
    }
    return dpa_log_add_exp(tl, tr);
}


/* ---------------- the trapezoidal rule (see the header) ---------------- */

typedef struct {
    double mu, m, q, gamma, lq;
} trap_ctx;

/* log f(z) = log phi(z) + gamma log(1 - q + q e^{-m + mu z}) */
static double trap_logf(const trap_ctx *c, double z, double *lg)
{
    *lg = c->gamma * dpa_poisson_loss(c->q, -c->m + c->mu * z);
    return -0.5 * z * z - LOG_SQRT_2PI + *lg;
}

/* the maximum of log f (concave: (log f)'' = -1 + gamma mu^2 p (1-p) <= -1),
 * by safeguarded Newton on (log f)' = -z + gamma mu p(z) on [gamma mu, 0] */
static double trap_peak(const trap_ctx *c)
{
    double lo = c->gamma * c->mu, hi = 0.0, z = 0.0;
    for (int i = 0; i < 60 && hi - lo > 1e-9; i++) {
        double w = -c->m + c->mu * z, p = exp(c->lq + w - dpa_poisson_loss(c->q, w));
        double d1 = -z + c->gamma * c->mu * p, d2 = -1 + c->gamma * c->mu * c->mu * p * (1 - p);
        if (d1 > 0) lo = z;
        else hi = z;
        double nz = z - d1 / d2;
        z = nz > lo && nz < hi ? nz : 0.5 * (lo + hi);
    }
    return z;
}

/* log of the bound on the nodes left of zL (<= 0):
 *   gamma < 0: G <= (1-q)^gamma (its limit at -inf), phi increasing:
 *              h sum_{z_k < zL} f(z_k) <= (1-q)^gamma Phi(zL);
 *   gamma > 0: G increasing: <= G(zL) Phi(zL) */
static double trap_tail_left(const trap_ctx *c, double zl)
{
    double lg, l = dpa_log_ndtr(zl);
    if (c->gamma < 0) l += c->gamma * log1p(-c->q);
    else {
        trap_logf(c, zl, &lg);
        l += lg;
    }
    return l + 1e-6 * (fabs(l) + 1); /* the logs' round-off, generously */
}

/* ... and right of zR:
 *   gamma < 0 (zR >= 0): f decreasing, <= int_{zR}^inf f <= G(zR) Phibar(zR);
 *   gamma > 0 (zR >= gamma mu): 1 - q + q e^w = e^w (q + (1-q) e^{-w}) and
 *              the bracket decreases in w, so for z >= zR
 *              f(z) <= c0^gamma phi(z) e^{gamma w} = c0^gamma e^{gamma (gamma-1) m} phi(z - gamma mu),
 *              c0 = q + (1-q) e^{-w(zR)}, decreasing in z beyond gamma mu:
 *              <= c0^gamma e^{gamma (gamma - 1) m} Phibar(zR - gamma mu) */
static double trap_tail_right(const trap_ctx *c, double zr)
{
    double lg, l;
    if (c->gamma < 0) {
        l = dpa_log_ndtr_c(zr);
        trap_logf(c, zr, &lg);
        l += lg;
    } else {
        double w = -c->m + c->mu * zr; /* log c0 = log(1 - q + q e^w) - w */
        l = c->gamma * (dpa_poisson_loss(c->q, w) - w) + c->gamma * (c->gamma - 1) * c->m +
            dpa_log_ndtr_c(zr - c->gamma * c->mu);
    }
    return l + 1e-6 * (fabs(l) + 1);
}

/* The rule's step, strip, discretization error and first window. */
typedef struct {
    trap_ctx c;
    double h, kappa, zl, zr;
} trap_plan;

/* 1 if the rule does not apply (gamma = 0, q = 1) */
static int trap_setup(double mu, double q, double gamma, trap_plan *pl)
{
    if (!(gamma != 0) || !(q < 1) || !(mu > 0)) return 1;
    trap_ctx c = {mu, 0.5 * mu * mu, q, gamma, log(q)};
    /* the strip a and step h: kappa = 2 (M/I)/(e^{2 pi a/h} - 1) <= e^{-RDP_TRAP_LOGERR}
     * with log(M/I) = a^2/2 + gamma log cos(mu a/2) for gamma < 0 (header)
     * and a^2/2 for gamma > 0 (|1 - q + q e^{w+it}| <= 1 - q + q e^w); for
     * each a tried the largest such h, keep the best */
    double amax = M_PI / mu, ba = 0, bh = 0;
    for (int i = 1; i <= RDP_TRAP_NA; i++) {
        /* the last candidate: the unconstrained optimum for gamma > 0,
         * a^2/2 = RDP_TRAP_LOGERR + log 2, when inside the strip */
        double a = i < RDP_TRAP_NA ? amax * i / RDP_TRAP_NA : sqrt(2 * (RDP_TRAP_LOGERR + M_LN2));
        if (!(a < amax)) continue;
        double e = 0.5 * a * a + (gamma < 0 ? gamma * log(cos(0.5 * mu * a)) : 0.0); /* log M/I >= 0 */
        /* 2 pi a/h >= RDP_TRAP_LOGERR + log 2 + e + 1e-3 makes
         * log kappa <= -RDP_TRAP_LOGERR - 1e-3 + log(1/(1 - e^{-2 pi a/h})) */
        double h = 2 * M_PI * a / (RDP_TRAP_LOGERR + M_LN2 + e + 1e-3);
        if (h > bh) {
            bh = h;
            ba = a;
        }
    }
    double h = bh, a = ba;
    /* kappa itself, rounded up (cos, log, exp of moderate arguments: a
     * relative 1e-6 covers their round-off many times over) */
    double lk = M_LN2 + 0.5 * a * a + (gamma < 0 ? gamma * log(cos(0.5 * mu * a)) : 0.0) -
                log(expm1(2 * M_PI * a / h));
    double kappa = exp(lk) * (1 + 1e-6);
    if (!(kappa < 0.5)) return 1;
    /* the window: tails below e^{-RDP_TRAP_LOGTAIL} of an estimate of the
     * integrand's peak (checked against the sum below) */
    double lg, zl, zr, lest;
    if (gamma < 0) {
        double zp = trap_peak(&c);
        lest = trap_logf(&c, zp, &lg);
        zl = fmin(zp, 0.0) - 6;
        zr = fmax(zp, 0.0) + 6;
    } else {
        lest = fmax(trap_logf(&c, 0.0, &lg), trap_logf(&c, gamma * mu, &lg));
        zl = -6;
        zr = gamma * mu + 6;
    }
    for (int i = 0; i < 200 && trap_tail_left(&c, zl) > lest - RDP_TRAP_LOGTAIL; i++) zl -= 1;
    for (int i = 0; i < 200 && trap_tail_right(&c, zr) > lest - RDP_TRAP_LOGTAIL; i++) zr += 1;
    *pl = (trap_plan){c, h, kappa, zl, zr};
    return 0;
}

/* Upper bound on log I by the planned rule; 1 if it would take more than
 * max_nodes nodes (or memory fails): the caller then uses another method. */
static int trap_run(const trap_plan *pl, double max_nodes, double *out)
{
    trap_ctx c = pl->c;
    double h = pl->h, kappa = pl->kappa, zl = pl->zl, zr = pl->zr, gamma = c.gamma, lg;
    double *lf = NULL; /* per node: log f, then p = q e^w/(1 - q + q e^w) */
    size_t cap = 0;
    for (int widen = 0;; widen++) {
        double kl = floor(zl / h), kr = ceil(zr / h), nn = kr - kl + 1;
        if (!(nn <= max_nodes)) {
            free(lf);
            return 1;
        }
        size_t n = (size_t)nn;
        if (n > cap) {
            double *v = realloc(lf, 2 * n * sizeof *v);
            if (!v) {
                free(lf);
                return 1;
            }
            lf = v;
            cap = n;
        }
        double zfirst = kl * h, zlast = kr * h, lmax = -INFINITY;
        /* pass 1: per node log(f sqrt(2 pi)) = -z^2/2 + gamma log(.) (the
         * constant h/sqrt(2 pi) is applied once, to the sum) and p */
        double *pj = lf + n, l1q = log1p(-c.q);
        for (size_t j = 0; j < n; j++) {
            double z = (kl + (double)j) * h;
            trap_logf(&c, z, &lg);
            lf[j] = -0.5 * z * z + lg;
            lmax = fmax(lmax, lf[j]);
            /* p = 1 - (1 - q)/(1 - q + q e^w), for the error bounds only
             * (its own round-off, ~1e-16 absolute, covered by + 1e-12) */
            pj[j] = fmin(1.0, -expm1(l1q - lg / gamma) + 1e-12);
        }
        /* the terms are summed scaled by e^{-lref}: lref = 0 when that cannot
         * overflow, so that a sum near 1 (log I near 0, small divergences)
         * keeps its relative accuracy through the final log */
        double lref = fabs(lmax) < 500 ? 0.0 : lmax;
        /* pass 2: the sum, with each term's round-off (relative): the node
         * position k h, off by u |z|, times |d log f/dz| <= |z| + |gamma| mu p;
         * z^2 (u z^2/2); gamma log(.) (dpa_poisson_loss: a few u relative:
         * 5u |gamma log(.)|) and w's error u (mu |z| + |w| + m) <= 2u (mu |z| +
         * m) times d(gamma log(.))/dw = gamma p; the sum, -lref and exp:
         * u (|lf| + |x| + 1) */
        double sum = 0, comp = 0, abs = 0, err = 0;
        for (size_t j = 0; j < n; j++) {
            double z = (kl + (double)j) * h, az = fabs(z), gp = fabs(gamma) * pj[j];
            double lgz = lf[j] + 0.5 * z * z; /* gamma log(.) (only its size is used) */
            double x = lf[j] - lref, t = exp(x);
            double e = U * (0.5 * z * z + fabs(lf[j]) + fabs(x) + 1) + 5 * U * fabs(lgz) +
                       2 * U * gp * (c.mu * az + c.m + 1) + 1.01 * U * az * (az + gp * c.mu);
            double ns = sum + t;
            if (fabs(sum) >= t) comp += (sum - ns) + t;
            else comp += (t - ns) + sum;
            sum = ns;
            abs += t;
            err += t * e * (1 + e);
        }
        /* times h/sqrt(2 pi): its constant and the two products round by
         * u each */
        double cst = h * INV_SQRT_2PI;
        double up = ((sum + comp) + err * (1 + 4 * nn * U) + (4 * U + 32 * nn * U * U) * abs) * cst * (1 + 4 * U);
        double ls = lref + log(up);
        /* the nodes outside [zfirst, zlast] (zfirst <= 0 and zlast on the
         * side the right bound needs: the window was built so) */
        double tl = trap_tail_left(&c, zfirst), tr = trap_tail_right(&c, zlast);
        if ((tl > ls - RDP_TRAP_LOGTAIL || tr > ls - RDP_TRAP_LOGTAIL) && widen < RDP_TRAP_MAX_WIDEN) {
            if (tl > ls - RDP_TRAP_LOGTAIL) zl -= RDP_TRAP_WIDEN;
            if (tr > ls - RDP_TRAP_LOGTAIL) zr += RDP_TRAP_WIDEN;
            continue;
        }
        free(lf);
        /* T <= e^lref (up + tails), the tails' exp rounded up by 4u; then
         * I <= T/(1 - kappa); the logs and additions round by u of their
         * magnitudes each */
        double tails = (exp(tl - lref) + exp(tr - lref)) * (1 + 4 * U);
        double tot = (up + tails) * (1 + 2 * U), lt = log(tot), lk = -log1p(-kappa);
        double l = lref + lt + lk;
        *out = l + 2 * U * (fabs(lref) + fabs(lt) + fabs(l)) + 4 * U * lk + 1e-300;
        return 0;
    }
}

/* Upper bound on log I by the trapezoidal rule (the whole line, any
 * gamma != 0, q < 1); 1 if it does not apply or would take more than
 * max_nodes nodes. */
static int trap_gauss(double mu, double q, double gamma, double max_nodes, double *out)
{
    trap_plan pl;
    return trap_setup(mu, q, gamma, &pl) || trap_run(&pl, max_nodes, out);
}

int dpa_rdp_trap(double mu, double q, double gamma, double max_nodes, double *out)
{
    return trap_gauss(mu, q, gamma, max_nodes, out);
}

dpa_status dpa_rdp_quad(dpa_pair_kind base, double par, double q, double gamma, double lo, double hi,
                        double *out, dpa_error *err)
{
    if (!(base == DPA_PAIR_GAUSSIAN || base == DPA_PAIR_LAPLACE) || !(par > 0 && isfinite(par)) ||
        !(q > 0 && q <= 1) || !isfinite(gamma) || !(lo < hi))
        return dpa_error_set(err, DPA_EINVAL,
                             "Renyi quadrature: need a Gaussian or Laplace base with parameter > 0, q in "
                             "(0, 1], finite gamma and lo < hi");
    /* Gaussian, the whole line, gamma < 0: the trapezoidal rule */
    if (base == DPA_PAIR_GAUSSIAN && lo == -INFINITY && hi == INFINITY &&
        !trap_gauss(par, q, gamma, RDP_TRAP_MAX_NODES, out))
        return DPA_OK;
    quad_ctx c = {base, par, base == DPA_PAIR_GAUSSIAN ? 0.5 * par * par : 0, q, gamma, {0}, {0}};
    gsl_integration_glfixed_table *t = gsl_integration_glfixed_table_alloc(RDP_GL_N);
    if (!t) return dpa_error_set(err, DPA_ENOMEM, "out of memory (Gauss-Legendre table)");
    for (size_t k = 0; k < RDP_GL_N; k++) {
        double w;
        gsl_integration_glfixed_point(-1.0, 1.0, k, &c.xn[k], &w, t);
        c.lwn[k] = log(w);
    }
    gsl_integration_glfixed_table_free(t);
    dpa_rdp_acc acc, errs;
    if (base == DPA_PAIR_LAPLACE) {
        double a = fmax(lo, -par), b = fmin(hi, par);
        dpa_rdp_acc_init(&acc);
        dpa_rdp_acc_init(&errs);
        if (a < b) {
            double np = ceil((b - a) / 2.0);
            if (np > RDP_MAX_PANELS) {
                dpa_rdp_acc_free(&acc);
                dpa_rdp_acc_free(&errs);
                return dpa_error_set(err, DPA_EUNSUPPORTED,
                                     "Renyi quadrature: Laplace loss range %g too wide", b - a);
            }
            panels(&c, a, b, &acc, &errs);
        }
        *out = dpa_rdp_acc_log_upper(&acc, dpa_rdp_acc_log_upper(&errs, -INFINITY));
        dpa_rdp_acc_free(&acc);
        dpa_rdp_acc_free(&errs);
        if (isnan(*out)) return dpa_error_set(err, DPA_ENOMEM, "out of memory (Renyi quadrature)");
        return DPA_OK;
    }
    /* Gaussian: a window around the bulk, widened until the tails are
     * negligible; it contains 0 so that the tail bounds apply */
    double mu = par, m = c.m;
    double xl = -m - RDP_Z * mu, xr = -m + RDP_Z * mu;
    if (gamma > 0) xr = fmax(xr, (2 * gamma - 1) * m + RDP_Z * mu);
    xl = fmin(xl, 0.0);
    xr = fmax(xr, 0.0);
    if (gamma < 0) {
        /* smallest xr >= 0 (to 1e-3) with g(xr) Phibar((xr + m)/mu) <= e^{-70} */
        double glo = 0.0, ghi = xr;
        if (gamma * dpa_poisson_loss(q, 0.0) + dpa_log_ndtr_c(m / mu) <= -70) ghi = 0.0;
        while (ghi - glo > 1e-3) {
            double mid = 0.5 * (glo + ghi);
            if (gamma * dpa_poisson_loss(q, mid) + dpa_log_ndtr_c((mid + m) / mu) <= -70) ghi = mid;
            else glo = mid;
        }
        xr = ghi;
    }
    double hb = fmin(RDP_STRIP, mu), width = 2 * hb / (RDP_GL_RHO - 1.0 / RDP_GL_RHO);
    for (;;) {
        double a = fmax(lo, xl), b = fmin(hi, xr);
        dpa_rdp_acc_init(&acc);
        dpa_rdp_acc_init(&errs);
        if (a < b) panels(&c, a, b, &acc, &errs);
        double lt = log_tails(&c, lo, hi, xl, xr);
        double lq = dpa_rdp_acc_log_upper(&acc, -INFINITY);
        int more_l = lo < xl, more_r = hi > xr;
        double next = (xr - xl) * 2;
        if (lt <= lq + log(RDP_TAIL_REL) || (!more_l && !more_r) || next / width > RDP_MAX_PANELS) {
            double le = dpa_log_add_exp(dpa_rdp_acc_log_upper(&errs, -INFINITY), lt);
            *out = dpa_rdp_acc_log_upper(&acc, le);
            dpa_rdp_acc_free(&acc);
            dpa_rdp_acc_free(&errs);
            if (isnan(*out)) return dpa_error_set(err, DPA_ENOMEM, "out of memory (Renyi quadrature)");
            return DPA_OK;
        }
        dpa_rdp_acc_free(&acc);
        dpa_rdp_acc_free(&errs);
        /* widen: towards the side that has a tail, by the current width */
        double w = xr - xl;
        if (gamma < 0) {
            if (more_l) xl -= w;
            else xr += w;
        } else {
            if (more_r) xr += w;
            else xl -= w;
        }
    }
}

dpa_status dpa_rdp_mix_log_integral(dpa_pair_kind base, double par, double q, double gamma, double lo,
                                    double hi, double *out, dpa_error *err)
{
    if (base == DPA_PAIR_GAUSSIAN && gamma >= 0) {
        /* fractional orders on the whole line: the series while it
         * converges within a budget of terms (it sums the same terms as
         * before, to the same precision: when log E is tiny its absolute
         * round-off, a few u, is what the bound carries, and the rule's is
         * about twice that), else the trapezoidal rule (the series needs
         * up to 2e5 terms near gamma = 1 when q is not small against mu);
         * integer orders: the finite sum */
        if (lo == -INFINITY && hi == INFINITY && gamma != floor(gamma) && q < 1) {
            trap_plan pl;
            if (!trap_setup(par, q, gamma, &pl)) {
                double nodes = ceil(pl.zr / pl.h) - floor(pl.zl / pl.h) + 1, k0 = floor(gamma) + 2;
                double budget = fmax(RDP_SERIES_MIN_BUDGET, RDP_TERM_PER_NODE * nodes - k0);
                if (k0 <= RDP_TERM_PER_NODE * nodes + RDP_SERIES_MIN_BUDGET) {
                    int conv;
                    dpa_status st = dpa_rdp_sgm_series_n(par, q, gamma, lo, hi, budget, &conv, out, err);
                    if (st || conv) return st;
                }
                if (!trap_run(&pl, RDP_TRAP_MAX_NODES, out)) return DPA_OK;
            }
        }
        return dpa_rdp_sgm_series(par, q, gamma, lo, hi, out, err);
    }
    return dpa_rdp_quad(base, par, q, gamma, lo, hi, out, err);
}

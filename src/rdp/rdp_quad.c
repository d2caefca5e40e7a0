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
 */
#include <math.h>
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

dpa_status dpa_rdp_quad(dpa_pair_kind base, double par, double q, double gamma, double lo, double hi,
                        double *out, dpa_error *err)
{
    if (!(base == DPA_PAIR_GAUSSIAN || base == DPA_PAIR_LAPLACE) || !(par > 0 && isfinite(par)) ||
        !(q > 0 && q <= 1) || !isfinite(gamma) || !(lo < hi))
        return dpa_error_set(err, DPA_EINVAL,
                             "Renyi quadrature: need a Gaussian or Laplace base with parameter > 0, q in "
                             "(0, 1], finite gamma and lo < hi");
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
    if (base == DPA_PAIR_GAUSSIAN && gamma >= 0) return dpa_rdp_sgm_series(par, q, gamma, lo, hi, out, err);
    return dpa_rdp_quad(base, par, q, gamma, lo, hi, out, err);
}

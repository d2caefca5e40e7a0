/* Moment functionals of the privacy loss per leaf (see clt.h, docs/clt.md §2).
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Closed forms (outward-rounded enclosures):
 *  - Gaussian/GDP, mu: W ~ N(mu^2/2, mu^2) under A, N(-mu^2/2, mu^2) under B;
 *    E|N(0, s^2)|^3 = 2 sqrt(2/pi) s^3.  (kl = mu^2/2, kappa2 = mu^2 + mu^4/4.)
 *  - pure eps / randomized response / approx (eps, delta), t = tanh(eps/2)
 *    (GDP Lemma D.8): mean eps t, variance eps^2 (1 - t^2), kbar3 =
 *    eps^3 (1 - t^4); delta enters as the factor f_{0,delta} (GDP eq 11).
 *  - Laplace, eps0 = s/b (GDP Lemma A.6): under A the loss has an atom at
 *    eps0 (mass 1/2), one at -eps0 (mass e^-eps0/2), and W = eps0 - 2X on
 *    (-eps0, eps0), X with density e^-x/2 on (0, eps0).  Mean
 *    KL = eps0 - 1 + e^-eps0, so the centre c = (eps0 - KL)/2 =
 *    (1 - e^-eps0)/2 lies in (0, 1/2) and
 *      Var  = 2 c^2 + 2 e^-eps0 (eps0 - c)^2 + 2 [E_2(c) + e^-c G_2(eps0 - c)],
 *      kbar3 = 4 c^3 + 4 e^-eps0 (eps0 - c)^3 + 4 [E_3(c) + e^-c G_3(eps0 - c)],
 *    E_n(c) = int_0^c (c - x)^n e^-x dx = c^{n+1} sum_k e^-c c^k/k! / (n+1+k),
 *    G_n(L) = int_0^L s^n e^-s ds = n! P(Poisson(L) >= n+1): sums of
 *    positive terms, no cancellation.
 * Quadrature (the subsampled Gaussian, x in units of sigma, B = N(0,1)):
 *    z = mu x - mu^2/2, y = q (e^z - 1), W = log(1 + y) (the loss of the
 *    Poisson remove pair), dA/dB = 1 + y, so every moment is
 *    int g(x) phi(x) dx:
 *      E_B W = int (log1p(y) - y) phi,   E_A W = KL(A||B) = int ((1+y) log1p(y) - y) phi
 *    (E_B y = 0 subtracted: the integrands are O(q^2), like the results),
 *    central moments about the computed means, the third split at the
 *    point where W equals the centre.  The replace-one pair C_p(G_mu)
 *    (sampling without replacement, docs/sampling.md §2) has, on x > mu/2,
 *    the remove pair's part (W > 0), its mirror image, and an atom at W = 0
 *    of mass m0 = (1-p)(1 - 2 Phi(-mu/2)) (the slope -1 segment of C_p):
 *      kl    = int_{x > mu/2} y W phi                         (GDP Lemma 5.5)
 *      Var   = int_{x > mu/2} [(W - kl)^2 (1 + y) + (W + kl)^2] phi + m0 kl^2
 *      kbar3 = int_{x > mu/2} [|W - kl|^3 (1 + y) + (W + kl)^3] phi + m0 kl^3.
 *    GDP Lemma 5.5 prints kbar3 without m0 kl^3, the atom's term: the
 *    centred third moment of a loss that is 0 with probability m0.
 * Certified quadrature: n = CLT_GL_N point Gauss-Legendre on panels of
 * half-width h <= CLT_H_MAX with h (rho - 1/rho)/2 <= CLT_STRIP/mu; the
 * integrands are analytic in the strip |Im x| < pi/(2 mu) (there
 * Re(1 + y) > 1 - q > 0), so on the Bernstein ellipse E_rho of a panel the
 * error is at most (Trefethen 2008, SIAM Review 50(1), Thm 4.5, scaled to
 * half-width h)  (64/15) h M rho^{-2n} / (rho^2 - 1),  M >= max |f| on the
 * ellipse's bounding box (q_box below; |(W - c)^3| is bounded for the
 * analytic continuation of the polynomial on each side of the split).
 * Tails outside [-CLT_WIN, mu + CLT_WIN] are bounded analytically, the
 * node values carry their round-off bounds (q_eval), the sums are kept in
 * long double with n u_ld of the absolute sum added.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_integration.h>
#include "clt/clt.h"
#include "event/event_internal.h"
#include "num/num.h"

#define U DPA_UNIT_ROUNDOFF
#define INV_SQRT_2PI 0.39894228040143267794
#define LOG_SQRT_2PI 0.91893853320467274178

/* Gauss-Legendre points per panel, and the Bernstein ellipse parameter:
 * rho^{-2n} = 2.5^{-64} = 3e-26, far below round-off. */
#define CLT_GL_N 32
#define CLT_GL_RHO 2.5
/* mu b <= pi/3 keeps cos(mu Im x) >= 1/2 on the ellipse (Re(1+y) > 1 - q). */
#define CLT_STRIP (M_PI / 3.0)
/* Panels at most 1 wide: the Gaussian weight varies by at most e^{|x| a}
 * over an ellipse, a factor the error bound pays. */
#define CLT_H_MAX 0.5
/* Integration window [-CLT_WIN, mu + CLT_WIN]: the tails beyond are below
 * phi(40) ~ 1e-348 times a polynomial (bounded and added, q_tail). */
#define CLT_WIN 40.0
/* Relative error allowance of the closed forms (each a few elementary
 * functions at 4u and a few operations at u; the Laplace sums add at most
 * a few dozen positive terms): 64u is several times what they can lose. */
#define CLT_CLOSED_REL (64 * U)

/* x moved outward by k u relative (after its own rounding), and a
 * subnormal step for results that underflow. */
static double up(double x, double k) { return x + fabs(x) * k * U + DBL_TRUE_MIN; }
static double dn(double x, double k) { return x - fabs(x) * k * U - DBL_TRUE_MIN; }

/* The enclosures of a side from moments about a centre: |E W - centre| <= d,
 * vc = E (W - centre)^2 in [vc_lo, vc_hi], E|W - centre|^3 <= rc_hi.  Then
 * Var W = vc - (E W - centre)^2 and, by Minkowski's inequality,
 * E|W - E W|^3 <= ((rc_hi)^{1/3} + d)^3. */
static void side_set(dpa_clt_side *s, double m, double m_lo, double m_hi, double d, double vc, double vc_lo,
                     double vc_hi, double rc, double rc_hi)
{
    s->m = m;
    s->m_lo = m_lo;
    s->m_hi = m_hi;
    s->v = vc;
    s->v_lo = fmax(0.0, dn(vc_lo - up(d * d, 4), 4));
    s->v_hi = up(vc_hi, 2);
    s->r = rc;
    double t = up(up(cbrt(up(rc_hi, 2)), 4) + d, 2);
    s->r_hi = up(t * t * t, 4);
}

/* A symmetric leaf: under B the loss is -W under A. */
static void mirror(const dpa_clt_side *x, dpa_clt_side *y)
{
    *y = *x;
    y->m = -x->m;
    y->m_lo = -x->m_hi;
    y->m_hi = -x->m_lo;
}

/* A closed-form side with relative error rel on every quantity. */
static void side_closed(dpa_clt_side *s, double m, double v, double r, double rel)
{
    double k = rel / U;
    s->m = m;
    s->m_lo = dn(m, k);
    s->m_hi = up(m, k);
    s->v = v;
    s->v_lo = fmax(0.0, dn(v, k));
    s->v_hi = up(v, k);
    s->r = r;
    s->r_hi = up(r, k);
}

void dpa_clt_leaf_gaussian(double mu, double mu_rel, dpa_clt_leaf *out)
{
    memset(out, 0, sizeof *out);
    out->gaussian = out->symmetric = 1;
    /* mu within mu_rel relative: the moments (powers 2 and 3) within
     * 3 mu_rel plus their own rounding */
    double c3 = 1.5957691216057308; /* 2 sqrt(2/pi), within u */
    double m2 = mu * mu;
    side_closed(&out->x, m2 / 2, m2, c3 * m2 * mu, 3 * mu_rel + 16 * U);
    mirror(&out->x, &out->y);
}

void dpa_clt_leaf_rr(double eps, double delta, dpa_clt_leaf *out)
{
    memset(out, 0, sizeof *out);
    out->symmetric = 1;
    out->delta = delta;
    double t = tanh(eps / 2);
    /* 1 - t^2 = sech^2(eps/2) = 4 e^-eps / (1 + e^-eps)^2, no overflow or cancellation */
    double e = exp(-eps), s2 = 4 * e / ((1 + e) * (1 + e));
    side_closed(&out->x, eps * t, eps * eps * s2, eps * eps * eps * s2 * (1 + t * t), 32 * U);
    mirror(&out->x, &out->y);
}

/* E_n(c) = int_0^c (c - x)^n e^-x dx for 0 <= c <= 1/2 (positive series). */
static double laplace_e(int n, double c)
{
    if (c == 0) return 0;
    double w = exp(-c), s = 0;
    for (int k = 0; k < 60; k++) {
        s += w / (n + 1 + k);
        w *= c / (k + 1);
    }
    return pow(c, n + 1) * s; /* 0.5^60/60! is nothing */
}

/* G_n(L) = int_0^L s^n e^-s ds = n! P(Poisson(L) >= n + 1), n <= 3. */
static double laplace_g(int n, double L)
{
    double fact = 1, head = 0, w = exp(-L);
    for (int j = 1; j <= n; j++) fact *= j;
    for (int j = 0; j <= n; j++) {
        head += w;
        w *= L / (j + 1);
    }
    if (head <= 0.5) return fact * (1 - head);
    /* L small: the tail sum directly (w is now the term j = n + 1) */
    double s = 0;
    for (int j = n + 1; j < n + 80 && w > 0; j++) {
        s += w;
        w *= L / (j + 1);
    }
    return fact * s;
}

dpa_status dpa_clt_leaf_laplace(double eps0, dpa_clt_leaf *out, dpa_error *err)
{
    memset(out, 0, sizeof *out);
    out->symmetric = 1;
    if (!(eps0 > 0 && eps0 <= DPA_CLT_LAPLACE_EPS_MAX))
        return dpa_error_set(err, DPA_EUNSUPPORTED, "laplace: sensitivity/scale %g outside (0, %g]", eps0,
                             DPA_CLT_LAPLACE_EPS_MAX);
    double m;
    if (eps0 < 0.5) {
        /* eps0 - 1 + e^-eps0 = sum_{k>=2} (-eps0)^k/k!, alternating, decreasing */
        double term = eps0 * eps0 / 2;
        m = 0;
        for (int k = 2; k < 40; k++) {
            m += term;
            term *= -eps0 / (k + 1);
        }
    } else {
        m = eps0 + expm1(-eps0);
    }
    double ee = exp(-eps0);
    double c = -expm1(-eps0) / 2, L = eps0 - c, ec = exp(-c);
    double v = 2 * c * c + 2 * ee * L * L + 2 * (laplace_e(2, c) + ec * laplace_g(2, L));
    double r = 4 * c * c * c + 4 * ee * L * L * L + 4 * (laplace_e(3, c) + ec * laplace_g(3, L));
    /* centre eps0 - 2c is within 2 |c - true c| <= 8u c of the true mean */
    double d = 16 * U * c;
    side_set(&out->x, m, dn(m, CLT_CLOSED_REL / U), up(m, CLT_CLOSED_REL / U), d, v,
             dn(v, CLT_CLOSED_REL / U), up(v, CLT_CLOSED_REL / U), r, up(r, CLT_CLOSED_REL / U));
    mirror(&out->x, &out->y);
    return DPA_OK;
}

/* ------------------------------------------------------------------ */
/* Quadrature of the subsampled Gaussian                               */
/* ------------------------------------------------------------------ */

enum { P_MEANS, P_CENT_A, P_CENT_B, P_S_MEAN, P_S_CENT };

typedef struct qctx {
    double mu, q, hm2; /* hm2 = mu^2/2 */
    double l1q;        /* -log(1 - q) > 0 */
    int pass;
    double c;          /* centre of the central moments */
} qctx;

/* log1p(y) - y and (1 + y) log1p(y) - y for |y| <= 1/4 by their series
 * (sum_{k>=2} (-1)^{k+1} y^k/k and sum_{k>=2} (-1)^k y^k/(k(k-1))):
 * 32 terms leave 0.25^32 relative, below u. */
static void small_g(double y, double *g1, double *g2)
{
    double a = 0, b = 0;
    for (int k = 33; k >= 2; k--) {
        a = a * y + ((k & 1) ? 1.0 : -1.0) / k;
        b = b * y + ((k & 1) ? -1.0 : 1.0) / ((double)k * (k - 1));
    }
    *g1 = a * y * y;
    *g2 = b * y * y;
}

/* The node's building blocks with absolute error bounds: phi(x), phi (1+y)
 * (= dA/dB phi), phi y, W, phi (log1p(y) - y), phi ((1+y) log1p(y) - y).
 * Three regimes, chosen so that nothing overflows or cancels:
 *  (a) |y| <= 1/4: the series of small_g;
 *  (b) |y| > 1/4, z <= 1: direct;
 *  (c) z > 1, |y| > 1/4 (or z >= 700): through phi(x - mu) = phi(x) e^z:
 *      phi y = q phi(x - mu)(1 - e^-z), phi (1 + y) = (1 - q) phi(x) + q phi(x - mu),
 *      W = z + log(q + (1 - q) e^-z).
 * Every elementary function is budgeted at 4u, every operation at u, the
 * node position at 2u (|x| + 1); subnormal results add DBL_TRUE_MIN-sized
 * absolute errors. */
typedef struct node {
    double ph, phA, phy, W, g1h, g2h;
    double e_ph, e_phA, e_phy, dW, e_g1h, e_g2h;
} node;

static void q_node(const qctx *c, double x, node *n)
{
    double mu = c->mu, q = c->q, tm = 2 * DBL_TRUE_MIN;
    double dx = 2 * U * (fabs(x) + 1);
    n->ph = exp(-x * x / 2) * INV_SQRT_2PI;
    n->e_ph = n->ph * (fabs(x) * dx + 2 * U * x * x + 6 * U) + tm;
    double z = mu * x - c->hm2;
    double dz = mu * dx + 3 * U * (fabs(mu * x) + c->hm2);
    double em1 = z < 700 ? expm1(z) : INFINITY, y = q * em1;
    if (fabs(y) <= 0.25 || z <= 1) {
        double ez = em1 + 1;
        double dy = q * (ez * dz + 4 * U * fabs(em1)) + U * fabs(y);
        double wA = (1 - q) + q * ez;
        double dwA = q * ez * (dz + 4 * U) + 2 * U * wA;
        double W = log1p(y);
        double dW = dy / (wA - dy) + 4 * U * fabs(W) + DBL_TRUE_MIN;
        double g1, g2, e1, e2;
        if (fabs(y) <= 0.25) {
            small_g(y, &g1, &g2);
            /* Horner on 32 alternating terms: at most 128u of the sum of
             * their magnitudes, which is below 2 |g| for |y| <= 1/4 */
            e1 = 128 * U * fabs(g1);
            e2 = 128 * U * fabs(g2);
        } else {
            g1 = W - y;
            g2 = wA * W - y;
            e1 = 4 * U * (fabs(W) + fabs(y));
            e2 = 4 * U * (wA * fabs(W) + fabs(y));
        }
        /* the perturbation dy of y: |g1'| = |y|/(1+y), |g2'| = |log1p(y)| */
        e1 += (fabs(y) + dy) / (wA - dy) * dy + DBL_TRUE_MIN;
        e2 += (fabs(W) + dW) * dy + DBL_TRUE_MIN;
        n->W = W;
        n->dW = dW;
        n->phA = n->ph * wA;
        n->e_phA = n->e_ph * wA + n->ph * dwA + U * n->phA + tm;
        n->phy = n->ph * y;
        n->e_phy = n->e_ph * fabs(y) + n->ph * dy + U * fabs(n->phy) + tm;
        n->g1h = n->ph * g1;
        n->e_g1h = n->e_ph * fabs(g1) + n->ph * e1 + U * fabs(n->g1h) + tm;
        n->g2h = n->ph * g2;
        n->e_g2h = n->e_ph * fabs(g2) + n->ph * e2 + U * fabs(n->g2h) + tm;
        return;
    }
    double xm = x - mu;
    double pm = exp(-xm * xm / 2) * INV_SQRT_2PI;
    double e_pm = pm * (fabs(xm) * (dx + U * (fabs(x) + mu)) + 2 * U * xm * xm + 6 * U) + tm;
    double emz = exp(-z);
    n->phy = q * pm * -expm1(-z);
    n->e_phy = q * (e_pm + pm * (emz * dz + 4 * U)) + 3 * U * n->phy + tm;
    n->phA = (1 - q) * n->ph + q * pm;
    n->e_phA = (1 - q) * n->e_ph + q * e_pm + 3 * U * n->phA + tm;
    /* dW/dz = q e^z/(1 + y) is in (0, 1) */
    n->W = z + log(q + (1 - q) * emz);
    n->dW = dz + 6 * U * (fabs(z) + fabs(n->W)) + DBL_TRUE_MIN;
    double a = n->ph * n->W, b = n->phA * n->W;
    n->g1h = a - n->phy;
    n->e_g1h = n->e_ph * fabs(n->W) + n->ph * n->dW + n->e_phy + 2 * U * (fabs(a) + fabs(n->phy)) + tm;
    n->g2h = b - n->phy;
    n->e_g2h = n->e_phA * fabs(n->W) + n->phA * n->dW + n->e_phy + 2 * U * (fabs(b) + fabs(n->phy)) + tm;
}

/* |D|^k and its error for D = W - c (|dD| <= dW + u |D|), k = 2, 3. */
static void powk(double D, double dD, double *p2, double *e2, double *p3, double *e3)
{
    double a = fabs(D);
    *p2 = D * D;
    *p3 = *p2 * a;
    *e2 = 2 * a * dD + dD * dD + 2 * U * *p2;
    *e3 = 3 * *p2 * dD + 3 * a * dD * dD + dD * dD * dD + 3 * U * *p3;
}

/* The two integrands of a pass at a real node x and their round-off bounds. */
static void q_eval(const qctx *c, double x, double f[2], double e[2])
{
    node n;
    q_node(c, x, &n);
    const double tm = DBL_TRUE_MIN;
    f[0] = f[1] = e[0] = e[1] = 0;
    switch (c->pass) {
    case P_MEANS:
        f[0] = n.g1h;
        e[0] = n.e_g1h;
        f[1] = n.g2h;
        e[1] = n.e_g2h;
        return;
    case P_CENT_A:
    case P_CENT_B: {
        double D = n.W - c->c, p2, e2, p3, e3;
        powk(D, n.dW + U * fabs(D), &p2, &e2, &p3, &e3);
        double wt = c->pass == P_CENT_A ? n.phA : n.ph, ewt = c->pass == P_CENT_A ? n.e_phA : n.e_ph;
        f[0] = wt * p2;
        f[1] = wt * p3;
        e[0] = ewt * p2 + wt * e2 + U * f[0] + tm;
        e[1] = ewt * p3 + wt * e3 + U * f[1] + tm;
        return;
    }
    case P_S_MEAN:
        f[0] = n.phy * n.W;
        e[0] = n.e_phy * fabs(n.W) + fabs(n.phy) * n.dW + U * fabs(f[0]) + tm;
        return;
    case P_S_CENT: {
        double Dm = n.W - c->c, Dp = n.W + c->c, m2, em2, m3, em3, p2, ep2, p3, ep3;
        powk(Dm, n.dW + U * fabs(Dm), &m2, &em2, &m3, &em3);
        powk(Dp, n.dW + U * fabs(Dp), &p2, &ep2, &p3, &ep3);
        f[0] = n.phA * m2 + n.ph * p2;
        f[1] = n.phA * m3 + n.ph * p3;
        e[0] = n.e_phA * m2 + n.phA * em2 + n.e_ph * p2 + n.ph * ep2 + 2 * U * f[0] + tm;
        e[1] = n.e_phA * m3 + n.phA * em3 + n.e_ph * p3 + n.ph * ep3 + 2 * U * f[1] + tm;
        return;
    }
    }
}

/* log(e^a + e^b) */
static double lae(double a, double b) { return dpa_log_add_exp(a, b); }

/* Upper bounds on the logs of |f_j| over the complex box [u1, u2] x [-b, b]
 * (mu b <= pi/3, so cos(mu Im x) >= 1/2).  With Re z in [z1, z2]:
 *   |phi| <= phi(dist(0, [u1, u2])) e^{b^2/2};
 *   |y| = q |e^z - 1| <= q (max |expm1(z_i)| + e^{z2} mu b) =: Y;
 *   Lo := 1 - q + q e^{z1} cos(mu b) <= Re(1 + y) <= |1 + y| <= 1 - q + q e^{z2} =: Up;
 *   W = log|1 + y| + i arg(1 + y), log|1 + y| in [log Lo, log Up],
 *   |arg(1 + y)| <= min(mu b, (pi/2) |Im y| / |1 + y|) <= min(mu b, (pi/2) q e^{z2} mu b / Lo);
 *   so |W - c| <= max(|log Up - c|, |log Lo - c|) + |arg| for any real c;
 *   |log1p(y) - y| <= Y^2 and |(1+y) log1p(y) - y| <= Y^2 when Y <= 1/2
 *   (the series), else |W| + Y and Up |W| + Y. */
static void q_box(const qctx *c, double u1, double u2, double b, double lM[2])
{
    double mu = c->mu, q = c->q, lq = log(q);
    double d = (u1 > 0) ? u1 : (u2 < 0) ? -u2 : 0;
    double lph = -d * d / 2 - LOG_SQRT_2PI + b * b / 2;
    double z1 = mu * u1 - c->hm2, z2 = mu * u2 - c->hm2, mb = mu * b, cb = cos(mb) * (1 - 4 * U);
    double lY, lUp, lLo;
    if (z2 >= 0) {
        lY = lq + z2 + log1p(mb);
        lUp = z2 + log(q + (1 - q) * exp(-z2));
    } else {
        lY = lq + log(fmax(fabs(expm1(z1)), fabs(expm1(z2))) + exp(z2) * mb);
        lUp = log1p(q * expm1(z2));
    }
    if (z1 >= 0) lLo = z1 + log(q * cb + (1 - q) * exp(-z1));
    else lLo = log1p(q * (exp(z1) * cb - 1));
    lY += 4 * U * (fabs(lY) + 1);
    lUp += 4 * U * (fabs(lUp) + 1);
    lLo -= 4 * U * (fabs(lLo) + 1);
    double larg = lq + z2 + log(mb) + log(M_PI / 2) - lLo + 8 * U * (fabs(z2) + fabs(lq) + fabs(lLo) + 10);
    double arg = up(larg < log(mb) ? exp(larg) : mb, 4);
    double cc = c->c, sl = 4 * U * (fabs(cc) + fabs(lUp) + fabs(lLo));
    /* |W|, |W - c| and |W + c| on the box */
    double W0 = up(fmax(fabs(lUp), fabs(lLo)) + arg, 4);
    double Wm = up(fmax(fabs(lUp - cc), fabs(lLo - cc)) + arg + sl, 4);
    double Wp = up(fmax(fabs(lUp + cc), fabs(lLo + cc)) + arg + sl, 4);
    double lW = log(W0), lWm = log(Wm) + 4 * U, lWp = log(Wp) + 4 * U;
    double Y = exp(lY);
    double lg1 = (Y <= 0.5) ? 2 * lY : lae(lW, lY);
    double lg2 = (Y <= 0.5) ? 2 * lY : lae(lUp + lW, lY);
    lM[0] = lM[1] = INFINITY;
    switch (c->pass) {
    case P_MEANS:
        lM[0] = lph + lg1;
        lM[1] = lph + lg2;
        break;
    case P_CENT_A:
        lM[0] = lph + lUp + 2 * lWm;
        lM[1] = lph + lUp + 3 * lWm;
        break;
    case P_CENT_B:
        lM[0] = lph + 2 * lWm;
        lM[1] = lph + 3 * lWm;
        break;
    case P_S_MEAN:
        lM[0] = lph + lY + lW;
        lM[1] = -INFINITY;
        break;
    case P_S_CENT:
        lM[0] = lph + lae(lUp + 2 * lWm, 2 * lWp);
        lM[1] = lph + lae(lUp + 3 * lWm, 3 * lWp);
        break;
    }
    for (int j = 0; j < 2; j++) lM[j] += 16 * U * (fabs(lM[j]) + 1);
}

typedef struct qsum {
    long double s[2];  /* sum w f */
    double abs[2];     /* sum w |f| */
    double err[2];     /* quadrature error bounds plus node round-off */
    size_t nodes;
} qsum;

/* Integrate the pass's two integrands over [a, b] into acc. */
static void q_panels(const qctx *c, double a, double b, const gsl_integration_glfixed_table *tab, qsum *acc)
{
    if (!(b > a)) return;
    const double rho = CLT_GL_RHO, shape = (rho - 1 / rho) / 2, wide = (rho + 1 / rho) / 2;
    double hmax = fmin(CLT_H_MAX, CLT_STRIP / (c->mu * shape));
    double np = ceil((b - a) / (2 * hmax));
    size_t npan = np < 1 ? 1 : (size_t)np;
    double h = (b - a) / (2.0 * (double)npan);
    /* log of (64/15) rho^{-2n} / (rho^2 - 1), rounded up */
    double lconst = log(64.0 / 15.0) - 2.0 * CLT_GL_N * log(rho) - log(rho * rho - 1) + 1e-12;
    for (size_t p = 0; p < npan; p++) {
        double lo = a + 2.0 * h * (double)p, hi = (p + 1 == npan) ? b : lo + 2.0 * h;
        double hh = (hi - lo) / 2, mid = lo + hh;
        double lM[2];
        q_box(c, mid - wide * hh * (1 + 1e-12), mid + wide * hh * (1 + 1e-12), shape * hh * (1 + 1e-12), lM);
        for (int j = 0; j < 2; j++)
            if (lM[j] > -INFINITY) acc->err[j] += up(exp(lconst + log(hh) + lM[j]), 4);
        for (size_t i = 0; i < CLT_GL_N; i++) {
            double xi, wi, f[2], e[2];
            gsl_integration_glfixed_point(lo, hi, i, &xi, &wi, tab);
            q_eval(c, xi, f, e);
            for (int j = 0; j < 2; j++) {
                acc->s[j] += (long double)wi * f[j];
                acc->abs[j] += wi * fabs(f[j]);
                acc->err[j] += wi * e[j] * (1 + 4 * U);
            }
            acc->nodes++;
        }
    }
}

/* Final bounds of a pass: value and absolute error (quadrature, node
 * round-off, the weights' own rounding (2u) and long-double summation). */
static void q_finish(const qsum *acc, double tail[2], double val[2], double err[2])
{
    double uld = LDBL_EPSILON / 2;
    for (int j = 0; j < 2; j++) {
        val[j] = (double)acc->s[j];
        err[j] = up(acc->err[j] + acc->abs[j] * ((double)acc->nodes * uld + 4 * U) + U * fabs(val[j]) + tail[j], 8);
    }
}

/* Tail bounds beyond the window (see the header comment):
 * left of -K (Poisson only): |W| <= -log(1-q), |y| <= q, 1 + y <= 1, so
 *   every integrand <= (bound)^k Phi(-K);
 * right of mu + K, s = x - mu >= K >= 1: (1 + y) phi(x) <= phi(s) and
 *   phi(x) <= phi(s) (x >= mu/2), |W| <= -log(1-q) + mu (s + mu) <= C1 s,
 *   |y| phi(x) <= q phi(s), so int (C s)^k phi(s) ds = C^k J_k(K),
 *   J_1 = phi(K), J_2 <= (K + 1/K) phi(K), J_3 = (K^2 + 2) phi(K). */
static void q_tails(const qctx *c, int left, double tail[2])
{
    double K = CLT_WIN, lphK = -K * K / 2 - LOG_SQRT_2PI;
    double C1 = c->l1q + c->mu + c->mu * c->mu, cc = fabs(c->c);
    double lJ[4] = {0, lphK, lphK + log(K + 1 / K), lphK + log(K * K + 2)};
    double lPhiK = lphK - log(K); /* Phi(-K) <= phi(K)/K */
    int k0 = 1, k1 = 1;
    double Cr = C1 + 1 + cc, Cl = c->l1q + c->q + cc;
    switch (c->pass) {
    case P_MEANS: k0 = k1 = 1; break;
    case P_CENT_A:
    case P_CENT_B: k0 = 2; k1 = 3; break;
    case P_S_MEAN: k0 = 1; k1 = 0; Cr = C1 + 1; break; /* |y| phi(x) <= q phi(s), |W| <= C1 s */
    case P_S_CENT: k0 = 2; k1 = 3; Cr = 2 * (C1 + cc) + 1; break;
    }
    int ks[2] = {k0, k1};
    for (int j = 0; j < 2; j++) {
        if (ks[j] == 0) {
            tail[j] = 0;
            continue;
        }
        double t = exp(ks[j] * log(Cr) + lJ[ks[j]] + 1e-9) + DBL_TRUE_MIN;
        if (left) t += exp(ks[j] * log(fmax(Cl, DBL_MIN)) + lPhiK + 1e-9) + DBL_TRUE_MIN;
        tail[j] = t;
    }
}

/* The point where W = centre: x* = (log1p(r) + mu^2/2)/mu, r = expm1(centre)/q.
 * The panels are split at the computed x; on each side they integrate the
 * polynomial +-(W - c)^3, which equals |W - c|^3 except between x and x*,
 * where (W is increasing) |W - c| <= g = |W(x) - c| (plus its round-off).
 * There the rule and the integral each move by at most 2 g^3 times the
 * weights' total (the weight phi (1 + y) is below 1, the GL weights sum to
 * the range's length): allowance 4 (b - a) g^3.  Where the centre is not
 * above inf W = log(1 - q) (within round-off) there is no split, and
 * |W - c| <= max(0, c - log(1 - q)) on the part where W < c. */
static double kink(const qctx *c, double centre, double a, double b, double *allow)
{
    double r = expm1(centre) / c->q, dr = 6 * U * fabs(r), len = b - a;
    if (!(r - dr > -1)) {
        double g = fmax(0.0, centre + c->l1q) + 4 * U * (fabs(centre) + c->l1q) + DBL_TRUE_MIN;
        *allow = up(4 * len * g * g * g, 4) + DBL_TRUE_MIN;
        return -INFINITY;
    }
    double x = (log1p(r) + c->hm2) / c->mu;
    node n;
    q_node(c, x, &n);
    double g = fabs(n.W - centre) + n.dW + U * fabs(centre) + DBL_TRUE_MIN;
    *allow = up(4 * len * g * g * g, 4) + DBL_TRUE_MIN;
    return x;
}

typedef struct qres { double val[2], err[2]; } qres;

/* One pass over [a, b], split at `split` when it lies inside. */
static void q_pass(qctx *c, double a, double b, double split, double allow, int left_tail,
                   const gsl_integration_glfixed_table *tab, qres *r)
{
    qsum acc;
    memset(&acc, 0, sizeof acc);
    if (split > a && split < b) {
        q_panels(c, a, split, tab, &acc);
        q_panels(c, split, b, tab, &acc);
    } else {
        q_panels(c, a, b, tab, &acc);
    }
    double tail[2];
    q_tails(c, left_tail, tail);
    q_finish(&acc, tail, r->val, r->err);
    r->err[1] = up(r->err[1] + allow, 2);
}

static gsl_integration_glfixed_table *gl_table(dpa_error *err)
{
    dpa_gsl_guard g = dpa_gsl_guard_begin();
    gsl_integration_glfixed_table *t = gsl_integration_glfixed_table_alloc(CLT_GL_N);
    dpa_gsl_guard_end(g);
    if (!t) dpa_error_set(err, DPA_ENOMEM, "out of memory");
    return t;
}

static dpa_status check_subsampled(double mu, double q, dpa_error *err)
{
    if (!(mu > 0 && mu <= DPA_CLT_SUBSAMPLED_MU_MAX))
        return dpa_error_set(err, DPA_EUNSUPPORTED,
                             "subsampled Gaussian with sensitivity/sigma = %g: the CLT functionals are "
                             "computed for values in (0, %g] (use method pld)",
                             mu, DPA_CLT_SUBSAMPLED_MU_MAX);
    if (!(q > 0 && q < 1)) return dpa_error_set(err, DPA_EINVAL, "subsampled Gaussian: rate %g not in (0, 1)", q);
    return DPA_OK;
}

dpa_status dpa_clt_leaf_poisson_gaussian(double mu, double q, dpa_clt_leaf *out, dpa_error *err)
{
    memset(out, 0, sizeof *out);
    dpa_status st = check_subsampled(mu, q, err);
    if (st) return st;
    gsl_integration_glfixed_table *tab = gl_table(err);
    if (!tab) return DPA_ENOMEM;
    qctx c = {mu, q, mu * mu / 2, -log1p(-q), P_MEANS, 0};
    double a = -CLT_WIN, b = mu + CLT_WIN;
    qres r0, ra, rb;
    q_pass(&c, a, b, NAN, 0, 1, tab, &r0);
    double mB = r0.val[0], eB = r0.err[0], mA = r0.val[1], eA = r0.err[1];
    double allow;
    c.pass = P_CENT_A;
    c.c = mA;
    double xa = kink(&c, mA, a, b, &allow);
    q_pass(&c, a, b, xa, allow, 1, tab, &ra);
    c.pass = P_CENT_B;
    c.c = mB;
    double xb = kink(&c, mB, a, b, &allow);
    q_pass(&c, a, b, xb, allow, 1, tab, &rb);
    gsl_integration_glfixed_table_free(tab);
    side_set(&out->x, mA, dn(mA - eA, 2), up(mA + eA, 2), eA, ra.val[0], dn(ra.val[0] - ra.err[0], 2),
             up(ra.val[0] + ra.err[0], 2), ra.val[1], up(ra.val[1] + ra.err[1], 2));
    side_set(&out->y, mB, dn(mB - eB, 2), up(mB + eB, 2), eB, rb.val[0], dn(rb.val[0] - rb.err[0], 2),
             up(rb.val[0] + rb.err[0], 2), rb.val[1], up(rb.val[1] + rb.err[1], 2));
    out->poisson_gauss = 1;
    out->q = q;
    out->mu = mu;
    return DPA_OK;
}

dpa_status dpa_clt_leaf_sample_gaussian(double mu, double p, dpa_clt_leaf *out, dpa_error *err)
{
    memset(out, 0, sizeof *out);
    out->symmetric = 1;
    dpa_status st = check_subsampled(mu, p, err);
    if (st) return st;
    gsl_integration_glfixed_table *tab = gl_table(err);
    if (!tab) return DPA_ENOMEM;
    qctx c = {mu, p, mu * mu / 2, -log1p(-p), P_S_MEAN, 0};
    double a = mu / 2, b = mu + CLT_WIN;
    qres r0, r1;
    q_pass(&c, a, b, NAN, 0, 0, tab, &r0);
    double kl = r0.val[0], ekl = r0.err[0];
    double allow;
    c.pass = P_S_CENT;
    c.c = kl;
    double xs = kink(&c, kl, a, b, &allow);
    q_pass(&c, a, b, xs, allow, 0, tab, &r1);
    gsl_integration_glfixed_table_free(tab);
    /* the atom at W = 0: m0 = (1 - p)(1 - 2 Phi(-mu/2)) = (1 - p) erf(mu/(2 sqrt 2)) */
    double m0 = (1 - p) * erf(mu / (2 * M_SQRT2));
    double m0_hi = up(m0, 8), m0_lo = dn(m0, 8);
    double k2 = kl * kl, k3 = k2 * kl;
    double v = r1.val[0] + m0 * k2, r = r1.val[1] + m0 * k3;
    double v_lo = dn(dn(r1.val[0] - r1.err[0], 2) + dn(m0_lo * k2, 4), 2);
    double v_hi = up(up(r1.val[0] + r1.err[0], 2) + up(m0_hi * k2, 4), 2);
    double r_hi = up(up(r1.val[1] + r1.err[1], 2) + up(m0_hi * k3, 6), 2);
    side_set(&out->x, kl, dn(kl - ekl, 2), up(kl + ekl, 2), ekl, v, v_lo, v_hi, r, r_hi);
    mirror(&out->x, &out->y);
    out->sample_gauss = 1;
    out->q = p;
    out->mu = mu;
    return DPA_OK;
}

/* ------------------------------------------------------------------ */
/* Leaves                                                              */
/* ------------------------------------------------------------------ */

static int is_gauss_kind(int kind) { return kind == DPA_EV_GAUSSIAN || kind == DPA_EV_GDP; }

static double leaf_mu(const dpa_leaf *l)
{
    return l->kind == DPA_EV_GDP ? l->par[0] : l->par[1] / l->par[0];
}

/* subsampled at a rate below 1 (rate 1 leaves are the mechanism itself) */
static int sampled(const dpa_leaf *l) { return !isnan(l->rate) && l->rate < 1; }

dpa_status dpa_clt_leaf_supported(const dpa_leaf *l, const char *method, dpa_error *err)
{
    if (l->zcdp)
        return dpa_error_set(err, DPA_EUNSUPPORTED, "method %s cannot take zcdp leaves; use method rdp (or auto)", method);
    if (l->inner)
        return dpa_error_set(err, DPA_EUNSUPPORTED,
                             "method %s cannot take a subsampled composition of non-Gaussian mechanisms (one "
                             "batch shared by several): its loss moments have no closed form here; use method "
                             "pld (or auto)",
                             method);
    const char *kind = dpa_ev_kind_name((dpa_event_kind)l->kind);
    if (sampled(l)) {
        if (!is_gauss_kind(l->kind))
            return dpa_error_set(err, DPA_EUNSUPPORTED,
                                 "method %s takes subsampling of gaussian/gdp leaves only, not of a %s leaf "
                                 "(no CLT functionals here); use method pld (or auto)",
                                 method, kind);
        double mu = leaf_mu(l);
        if (!(mu <= DPA_CLT_SUBSAMPLED_MU_MAX))
            return dpa_error_set(err, DPA_EUNSUPPORTED,
                                 "method %s: a subsampled gaussian with sensitivity/sigma = %g above %g (the "
                                 "moment quadrature's limit; such a step is not private anyway); use method pld",
                                 method, mu, DPA_CLT_SUBSAMPLED_MU_MAX);
        return DPA_OK;
    }
    switch (l->kind) {
    case DPA_EV_RANDOMIZED_RESPONSE:
        if (l->par[1] != 2)
            return dpa_error_set(err, DPA_EUNSUPPORTED,
                                 "method %s takes binary randomized response only, not k = %g buckets (its "
                                 "functionals are those of RR_eps here); use method pld (or auto)",
                                 method, l->par[1]);
        return DPA_OK;
    case DPA_EV_GAUSSIAN:
    case DPA_EV_GDP:
    case DPA_EV_PURE:
    case DPA_EV_APPROX:
        return DPA_OK;
    case DPA_EV_LAPLACE: {
        double e0 = l->par[1] / l->par[0];
        if (!(e0 <= DPA_CLT_LAPLACE_EPS_MAX))
            return dpa_error_set(err, DPA_EUNSUPPORTED,
                                 "method %s: a laplace leaf with sensitivity/scale = %g above %g; use method pld",
                                 method, e0, DPA_CLT_LAPLACE_EPS_MAX);
        return DPA_OK;
    }
    default:
        break;
    }
    return dpa_error_set(err, DPA_EUNSUPPORTED,
                         "method %s takes gaussian, gdp, pure, randomized_response, approx and laplace leaves "
                         "and Poisson-subsampled or sampled gaussian/gdp leaves, not %s leaves (their CLT "
                         "functionals are not implemented); use method pld (or auto)",
                         method, kind ? kind : "these");
}

dpa_status dpa_clt_leaf_of(const dpa_leaf *l, dpa_clt_leaf *out, dpa_error *err)
{
    dpa_status st = dpa_clt_leaf_supported(l, "clt", err);
    if (st) return st;
    if (sampled(l)) {
        double mu = leaf_mu(l);
        return l->sample ? dpa_clt_leaf_sample_gaussian(mu, l->rate, out, err)
                         : dpa_clt_leaf_poisson_gaussian(mu, l->rate, out, err);
    }
    switch (l->kind) {
    case DPA_EV_GAUSSIAN:
        /* mu = sensitivity/sigma, rounded */
        dpa_clt_leaf_gaussian(l->par[1] / l->par[0], U, out);
        return DPA_OK;
    case DPA_EV_GDP: dpa_clt_leaf_gaussian(l->par[0], 0, out); return DPA_OK;
    case DPA_EV_PURE:
    case DPA_EV_RANDOMIZED_RESPONSE: dpa_clt_leaf_rr(l->par[0], 0, out); return DPA_OK;
    case DPA_EV_APPROX: dpa_clt_leaf_rr(l->par[0], l->par[1], out); return DPA_OK;
    case DPA_EV_LAPLACE: return dpa_clt_leaf_laplace(l->par[1] / l->par[0], out, err);
    default: break;
    }
    return dpa_error_set(err, DPA_EUNSUPPORTED, "clt: unsupported leaf");
}

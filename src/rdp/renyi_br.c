/* Certified lower bounds on the Rényi divergence of the epsilon-bounded-range
 * class (exponential_mechanism leaves, report_noisy_max with Gumbel noise),
 * unsampled or Poisson-subsampled, for dpa_renyi (docs/rdp.md, "The Rényi
 * divergence of a composition", bounded-range leaves).
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The leaf's pair (src/mech/bounded_range.c) is the envelope of the class's
 * privacy profiles: it dominates every member (so its divergence is a
 * certified upper bound, by Blackwell dominance and the data-processing
 * inequality), but no member attains it, and Rényi divergences are not
 * pointwise suprema of profiles.  A lower bound on the class's largest
 * divergence is the divergence of any member.  The two-point members
 * (Dong, Durfee & Rogers 2020; the KL case is Cesar & Rogers 2021, the
 * bounded-range KL formula) are, for t in (0, 1),
 *     P_t: mass p_t at loss (1 - t) eps, 1 - p_t at loss -t eps,
 *     p_t = (1 - e^{-t eps}) / (1 - e^{-eps}),
 *     Q_t: masses b_1 = p_t e^{-(1 - t) eps}, b_2 = (1 - p_t) e^{t eps}
 * (b_1 + b_2 = 1 exactly).  Its KL is eps (p_t - t), largest at
 * t* = -log((1 - e^{-eps}) / eps) / eps (0.123301561 at eps = 1).  Under
 * Poisson subsampling at rate q a member's remove pair is
 * (q P_t + (1 - q) Q_t, Q_t), its add pair the reverse.
 *
 * With m the first measure and l_i = log(m_i / m'_i) the log ratios
 * (l_i = w_i unsampled, log1p(q expm1(w_i)) subsampled, negated for the
 * add direction), and the true m summing to 1,
 *     E(theta) - 1 = sum_i m_i expm1(theta l_i),   D_A = log1p(E - 1) / theta,
 *     KL = sum_i m_i l_i,
 * evaluated in long double (relative accuracy also for small q and orders
 * near 1), or by log-sum-exp when |theta l_i| > 1.  t is chosen by a
 * golden-section search on the computed divergence (a heuristic: any t
 * gives a valid bound); the bound is then evaluated at that t with every
 * error allowed for and rounded down.
 */
#include <float.h>
#include <math.h>
#include "num/num.h"
#include "rdp/renyi_internal.h"

/* Relative error allowed on each long double quantity computed from eps, t
 * and q (p_t, the masses, the log ratios: at most ~6 operations, each
 * within a few ulp of long double for glibc's expm1l/log1pl/logl, which
 * are accurate to 1-2 ulp on x86_64); 64 ulp covers them with a margin
 * and is still ~7e-18, far below the double result's rounding. */
#define BR_REL (64 * LDBL_EPSILON)
/* golden-section iterations over t (0.618^90 ~ 1e-19: t to long double
 * resolution; only the choice of t, never the bound, depends on it) */
#define BR_GOLDEN_IT 90

/* The two atoms of member t in direction dir under Poisson rate q (q = 1:
 * unsampled): first-measure masses m[2] and log ratios l[2]. */
static void member(long double eps, long double t, long double q, int dir, long double m[2], long double l[2])
{
    long double p = expm1l(-t * eps) / expm1l(-eps);
    long double w[2] = {(1 - t) * eps, -t * eps};
    long double b[2] = {p * expl(-(1 - t) * eps), (1 - p) * expl(t * eps)};
    long double a[2] = {p, 1 - p};
    for (int i = 0; i < 2; i++) {
        long double lr = q == 1 ? w[i] : log1pl(q * expm1l(w[i]));
        m[i] = dir ? b[i] : q * a[i] + (1 - q) * b[i];
        l[i] = dir ? -lr : lr;
    }
}

/* D_A of the member (A > 0; KL at A = 1), with an absolute error bound *e */
static long double member_div(const long double m[2], const long double l[2], long double A, long double *e)
{
    long double th = A - 1;
    if (th == 0) {
        long double s = 0, mag = 0;
        for (int i = 0; i < 2; i++) {
            s += m[i] * l[i];
            mag += m[i] * fabsl(l[i]) * 2; /* m within BR_REL, l within BR_REL |l| */
        }
        *e = 4 * BR_REL * mag;
        return s;
    }
    long double big = fmaxl(fabsl(th * l[0]), fabsl(th * l[1]));
    long double v, ev;
    if (big <= 1) {
        long double s = 0, mag = 0;
        for (int i = 0; i < 2; i++) {
            long double x = m[i] * expm1l(th * l[i]);
            s += x;
            /* m within BR_REL relative; l within BR_REL |l| (each log
             * ratio is w_i = a product, or log1p(q expm1(w_i)): a few
             * operations, each relative), which moves m expm1(th l) by
             * m e^{th l} |th l| BR_REL */
            mag += fabsl(x) + m[i] * expl(th * l[i]) * fabsl(th * l[i]);
        }
        if (!(1 + s - 4 * BR_REL * mag > 0)) {
            *e = INFINITY;
            return NAN;
        }
        v = log1pl(s);
        ev = 4 * BR_REL * mag / (1 + s - 4 * BR_REL * mag) + BR_REL * fabsl(v);
    } else {
        long double x0 = logl(m[0]) + th * l[0], x1 = logl(m[1]) + th * l[1];
        long double mx = fmaxl(x0, x1);
        v = mx + log1pl(expl(fminl(x0, x1) - mx));
        ev = 4 * BR_REL * (fabsl(x0) + fabsl(x1) + fabsl(th) * (fabsl(l[0]) + fabsl(l[1])) + 2);
    }
    *e = ev / fabsl(th) + BR_REL * fabsl(v / th);
    return v / th;
}

/* the computed divergence at t (for the search only) */
static long double div_at(long double eps, long double t, long double q, int dir, long double A)
{
    long double m[2], l[2], e;
    member(eps, t, q, dir, m, l);
    long double v = member_div(m, l, A, &e);
    return isnan(v) ? -INFINITY : v;
}

double dpa_renyi_br_lower(double eps, double q, double A, int dir, double *t_best)
{
    if (!(eps > 0) || !isfinite(eps) || !(q > 0 && q <= 1) || !(A > 0) || !isfinite(A)) return 0.0;
    long double E = eps, Q = q, LA = A;
    /* golden section on (0, 1) */
    const long double g = 0.6180339887498948482L;
    long double lo = 0, hi = 1, x1 = hi - g * (hi - lo), x2 = lo + g * (hi - lo);
    long double f1 = div_at(E, x1, Q, dir, LA), f2 = div_at(E, x2, Q, dir, LA);
    for (int it = 0; it < BR_GOLDEN_IT; it++) {
        if (f1 >= f2) {
            hi = x2;
            x2 = x1;
            f2 = f1;
            x1 = hi - g * (hi - lo);
            f1 = div_at(E, x1, Q, dir, LA);
        } else {
            lo = x1;
            x1 = x2;
            f1 = f2;
            x2 = lo + g * (hi - lo);
            f2 = div_at(E, x2, Q, dir, LA);
        }
    }
    long double t = f1 >= f2 ? x1 : x2;
    if (!(t > 0 && t < 1)) t = 0.5L;
    if (t_best) *t_best = (double)t;
    long double m[2], l[2], e;
    member(E, t, Q, dir, m, l);
    long double v = member_div(m, l, LA, &e);
    if (!isfinite(v) || !isfinite(e)) return 0.0;
    return fmax(0.0, dpa_ld_dn(v - e));
}

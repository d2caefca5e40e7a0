/* Conversions from one Rényi bound D_alpha(A||B) <= r to (eps, delta):
 * classical, improved, and the tight single-order ("optimal") conversion.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * All three bound delta(eps) = H_{e^eps}(A||B) = E_A[(1 - e^{eps - W})_+]
 * (MATH.md §1) for every pair with E_A[e^{(alpha-1)W}] <= K = e^{(alpha-1) r}.
 *
 * The optimal conversion (docs/rdp.md §4.3).  The largest delta(eps) over all
 * such pairs is the value of the moment problem
 *     sup E_A[(1 - e^{eps - W})_+]  s.t.  E_A[1] = 1,  E_A[e^{-W}] <= 1,  E_A[e^{(alpha-1)W}] <= K
 * (the second constraint says B is a sub-probability; data processing onto
 * the test {W > eps} shows binary pairs attain it, which is the binary-test
 * region of CF Appendix F.1 / Balle et al. 2020 restricted to one direction).
 * Its Lagrange dual: for c1, c2 >= 0 and real c0 with
 *     h(x) = c0 + c1 x + c2 x^{1-alpha} >= (1 - e^eps x)_+   for all x = e^{-W} > 0,   (D)
 * delta(eps) <= E_A[h(e^{-W})] <= c0 + c1 + c2 K (weak duality: every dual
 * feasible point certifies a bound, no optimality needed for soundness).
 * min_x (c x + c2 x^{1-alpha}) = C c^{b} c2^{1/alpha} with b = 1 - 1/alpha,
 * C = (alpha-1)^{1/alpha} alpha/(alpha-1), so (D) holds iff
 *     c0 >= 1 - C (c1 + e^eps)^b c2^{1/alpha}   and   c0 >= -C c1^b c2^{1/alpha}.
 * Substituting c1 = e^eps t, sigma = C e^{eps b} c2^{1/alpha} (t, sigma >= 0):
 *     delta <= F(t, sigma) = max(1 - (1+t)^b sigma, -t^b sigma) + e^eps t + Delta sigma^alpha,
 *     Delta = e^{(alpha-1)(r - eps)} (1/alpha) (1 - 1/alpha)^{alpha-1}.
 * F(0, 1) = Delta is the improved conversion (CKS20 Prop 12), so the optimum
 * is never worse.  For fixed t the minimum over sigma is in closed form (the
 * max switches at sigma0 = 1/((1+t)^b - t^b); the two smooth pieces have their
 * minima at sigma1 = ((1+t)^b/(alpha Delta))^{1/(alpha-1)} and
 * sigma2 = (t^b/(alpha Delta))^{1/(alpha-1)}), and the result is convex in t
 * (a partial minimum of a convex function of (c1, c2): M is a weighted
 * geometric mean, concave), so golden-section search over log t finds it.
 * The reported bound is F evaluated, with its round-off bounded, at the
 * point found.  Optimality over one order is not optimality over all orders
 * jointly (CF App F combines orders and alpha < 1; not done here).
 */
#include <math.h>
#include "rdp/rdp.h"
#include "num/num.h"

#define U DPA_UNIT_ROUNDOFF
#define GOLDEN 0.6180339887498949
/* Scan points over log t, then golden-section steps within two scan steps
 * (width <= ~40 shrinks below 1e-7, far below the bound's flatness). */
#define RDP_OPT_SCAN 40
#define RDP_OPT_T_STEPS 50
/* Bisection steps of eps_opt(delta) (relative width 1e-12 is reached well
 * before on every bracket we use). */
#define RDP_OPT_EPS_STEPS 80
#define RDP_OPT_EPS_RTOL 1e-12

const char *dpa_rdp_conversion_name(dpa_rdp_conversion c)
{
    switch (c) {
    case DPA_RDP_CLASSICAL: return "classical";
    case DPA_RDP_IMPROVED: return "improved";
    case DPA_RDP_OPTIMAL: return "optimal";
    }
    return NULL;
}

/* exp(l) rounded up given l's absolute error e, capped at 1 */
static double exp_up(double l, double e)
{
    if (l + e >= 0) return 1.0;
    double v = exp(l + e);
    return fmin(1.0, v * (1 + 2 * U));
}

/* log Delta (improved conversion's delta) and its absolute error */
static double log_cks(double alpha, double r, double eps, double *e)
{
    double am1 = alpha - 1, t1 = am1 * (r - eps), t2 = log(alpha), t3 = am1 * log1p(-1 / alpha);
    *e = 4 * U * (fabs(t1) + fabs(t2) + fabs(t3) + fabs(r) * am1 + fabs(eps) * am1 + 1);
    return t1 - t2 + t3;
}

/* log((1+t)^b - t^b), t = e^{lt} (0 at t = 0) */
static double log_d(double b, double lt)
{
    if (lt == -INFINITY) return 0.0;
    double lp = b * log1p(exp(lt));
    if (lt > 0) return b * lt + log(expm1(b * log1p(exp(-lt))));
    return dpa_log_sub_exp(lp, b * lt);
}

/* log of the upper bound on F(t, sigma) at t = e^{lt} (lt = -inf: t = 0),
 * sigma = e^{ls}, with its round-off bounded (dpa_rdp_acc).  The max in F
 * is decided robustly where possible: sigma ((1+t)^b - t^b) >= 1 exactly
 * when branch B (-t^b sigma) is the larger, and computing only that branch
 * avoids the cancellation of 1 - (1+t)^b sigma. */
static double log_f_cert(double a, double b, double lD, double eD, double eps, double lt, double ls)
{
    double l1 = b * log1p(exp(lt)) + ls;                    /* (1+t)^b sigma */
    double e1 = 4 * U * (fabs(b * log1p(exp(lt))) + fabs(ls) + 1);
    double l2 = lt == -INFINITY ? -INFINITY : b * lt + ls;  /* t^b sigma */
    double e2 = 4 * U * (fabs(b * lt) + fabs(ls) + 1);
    double l3 = lt == -INFINITY ? -INFINITY : eps + lt;     /* e^eps t */
    double e3 = 4 * U * (fabs(eps) + fabs(lt) + 1);
    double l4 = lD + a * ls;                                /* Delta sigma^a */
    double e4 = eD + 4 * U * (fabs(lD) + fabs(a * ls) + 1);
    double sw = ls + log_d(b, lt);                          /* >= 0 iff branch B */
    double esw = 16 * U * (fabs(ls) + fabs(b * lt) + 2);
    int use_a = !(sw > esw), use_b = !(sw < -esw);
    dpa_rdp_acc A, B;
    dpa_rdp_acc_init(&A);
    dpa_rdp_acc_init(&B);
    /* branch A: 1 - (1+t)^b sigma + P; branch B: -t^b sigma + P */
    dpa_rdp_acc_add(&A, 0.0, 1, 0.0);
    dpa_rdp_acc_add(&A, l1, -1, expm1(e1));
    dpa_rdp_acc_add(&B, l2, -1, expm1(e2));
    dpa_rdp_acc_add(&A, l3, 1, expm1(e3));
    dpa_rdp_acc_add(&B, l3, 1, expm1(e3));
    dpa_rdp_acc_add(&A, l4, 1, expm1(e4));
    dpa_rdp_acc_add(&B, l4, 1, expm1(e4));
    double va = use_a ? dpa_rdp_acc_log_upper(&A, -INFINITY) : -INFINITY;
    double vb = use_b ? dpa_rdp_acc_log_upper(&B, -INFINITY) : -INFINITY;
    dpa_rdp_acc_free(&A);
    dpa_rdp_acc_free(&B);
    return fmax(va, vb); /* 4 terms each: inline storage, no allocation can fail */
}

/* The best sigma for t = e^{lt} (closed form, see the header comment). */
static double best_ls(double a, double b, double lD, double lt)
{
    double lp = b * log1p(exp(lt));
    double ls1 = (lp - log(a) - lD) / (a - 1);
    if (lt == -INFINITY) return fmin(ls1, 0.0); /* sigma0 = 1 at t = 0 */
    double ld = log_d(b, lt);
    /* sigma0, nudged up so that branch B is decided robustly (costs a
     * relative ~1e-11 alpha in the Delta sigma^a term) */
    double ls0 = -ld + 1e-12 * (1 + fabs(ld)) + 32 * U * (fabs(b * lt) + 2);
    if (ls1 <= ls0) return ls1;
    double ls2 = (b * lt - log(a) - lD) / (a - 1);
    if (ls2 >= ls0) return ls2;
    return ls0;
}

/* log of the optimal-conversion bound on delta(eps) for (alpha, r) */
static double log_delta_opt(double a, double r, double eps)
{
    double b = (a - 1) / a, eD, lD = log_cks(a, r, eps, &eD);
    double best = log_f_cert(a, b, lD, eD, eps, -INFINITY, best_ls(a, b, lD, -INFINITY));
    best = fmin(best, lD + eD); /* the improved conversion itself */
    /* u = log t: a coarse scan (the bound is convex in t, hence unimodal
     * in u, but nearly flat over a wide range where round-off could mislead
     * a bare golden-section search), then golden section around the best
     * scanned point */
    double ulo = fmax(-740.0, fmin(-eps, (lD - 40) / b) - 5), uhi = fmin(700.0, -eps + 5);
    if (!(ulo < uhi)) return best;
    double step = (uhi - ulo) / RDP_OPT_SCAN, bu = ulo, bf = INFINITY;
    for (int i = 0; i <= RDP_OPT_SCAN; i++) {
        double u = ulo + step * i, f = log_f_cert(a, b, lD, eD, eps, u, best_ls(a, b, lD, u));
        if (f < bf) {
            bf = f;
            bu = u;
        }
    }
    best = fmin(best, bf);
    double lo = bu - step, hi = bu + step;
    double x1 = hi - GOLDEN * (hi - lo), x2 = lo + GOLDEN * (hi - lo);
    double f1 = log_f_cert(a, b, lD, eD, eps, x1, best_ls(a, b, lD, x1));
    double f2 = log_f_cert(a, b, lD, eD, eps, x2, best_ls(a, b, lD, x2));
    for (int i = 0; i < RDP_OPT_T_STEPS; i++) {
        if (f1 <= f2) {
            hi = x2;
            x2 = x1;
            f2 = f1;
            x1 = hi - GOLDEN * (hi - lo);
            f1 = log_f_cert(a, b, lD, eD, eps, x1, best_ls(a, b, lD, x1));
        } else {
            lo = x1;
            x1 = x2;
            f1 = f2;
            x2 = lo + GOLDEN * (hi - lo);
            f2 = log_f_cert(a, b, lD, eD, eps, x2, best_ls(a, b, lD, x2));
        }
        best = fmin(best, fmin(f1, f2));
    }
    return best;
}

double dpa_rdp_delta_from(dpa_rdp_conversion c, double alpha, double r, double eps)
{
    if (!(alpha > 1) || isnan(r) || isnan(eps)) return 1.0;
    if (r == INFINITY) return 1.0;
    if (!isfinite(alpha)) return 1.0;
    if (r <= 0) {
        /* D_alpha = 0 means A = B: delta(eps) = max(0, 1 - e^eps) */
        return eps >= 0 ? 0.0 : fmin(1.0, -expm1(eps) * (1 + 2 * U));
    }
    double e, l;
    switch (c) {
    case DPA_RDP_CLASSICAL:
        /* Mironov 2017 Prop 3: delta = e^{(alpha-1)(r - eps)} */
        l = (alpha - 1) * (r - eps);
        e = 4 * U * (fabs(l) + (alpha - 1) * (fabs(r) + fabs(eps)) + 1);
        return exp_up(l, e);
    case DPA_RDP_IMPROVED:
        l = log_cks(alpha, r, eps, &e);
        return exp_up(l, e);
    case DPA_RDP_OPTIMAL: {
        l = log_delta_opt(alpha, r, eps);
        double v = l == -INFINITY ? 0.0 : exp_up(l, 2 * U * (fabs(l) + 1));
        double li = log_cks(alpha, r, eps, &e);
        return fmin(v, exp_up(li, e)); /* never above the improved conversion */
    }
    }
    return 1.0;
}

/* improved conversion's eps (CKS20 Prop 12 solved for eps), rounded up */
static double eps_improved(double alpha, double r, double delta)
{
    double am1 = alpha - 1, t1 = log1p(-1 / alpha), t2 = (log(delta) + log(alpha)) / am1;
    double v = r + t1 - t2;
    return v + 6 * U * (fabs(r) + fabs(t1) + fabs(t2) + 1);
}

double dpa_rdp_eps_from(dpa_rdp_conversion c, double alpha, double r, double delta)
{
    if (!(alpha > 1) || !isfinite(alpha) || isnan(r) || !(delta > 0 && delta < 1)) return INFINITY;
    if (r == INFINITY) return INFINITY;
    if (r <= 0) return 0.0; /* A = B: delta(0) = 0 */
    double v;
    switch (c) {
    case DPA_RDP_CLASSICAL: {
        double t = -log(delta) / (alpha - 1);
        v = r + t + 6 * U * (fabs(r) + fabs(t) + 1);
        return fmax(v, 0.0);
    }
    case DPA_RDP_IMPROVED:
        return fmax(eps_improved(alpha, r, delta), 0.0);
    case DPA_RDP_OPTIMAL: {
        double hi = fmax(eps_improved(alpha, r, delta), 0.0);
        double ld = log(delta) - 2 * U * fabs(log(delta)); /* compare against delta rounded down */
        if (log_delta_opt(alpha, r, 0.0) <= ld) return 0.0;
        if (!(hi > 0)) return hi;
        /* the optimum is within a fraction of a percent of the improved
         * conversion's eps: start the bracket just below it, widening if not */
        double lo = hi * (1 - 1e-3);
        while (lo > 0 && !(log_delta_opt(alpha, r, lo) > ld)) {
            hi = lo;
            lo = lo > 1e-3 ? lo - 2 * (hi * 1e-3 + 1e-3) : 0.0;
            if (lo < 0) lo = 0;
        }
        for (int i = 0; i < RDP_OPT_EPS_STEPS && hi - lo > RDP_OPT_EPS_RTOL * hi; i++) {
            double mid = 0.5 * (lo + hi);
            if (log_delta_opt(alpha, r, mid) <= ld) hi = mid;
            else lo = mid;
        }
        return hi;
    }
    }
    return INFINITY;
}

/* Conversions from one Rényi bound D_alpha(A||B) <= r to (eps, delta):
 * classical, improved, and the tight single-order ("optimal") conversion.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * All three bound delta(eps) = H_{e^eps}(A||B) = E_A[(1 - e^{eps - W})_+]
 * (LT Def 2.2) for every pair with E_A[e^{(alpha-1)W}] <= K = e^{(alpha-1) r}.
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
 *
 * Speed (docs/rdp.md §4.4).  The search for the best t uses F in plain
 * floating point (no error bookkeeping): a bracket from an asymptotic guess,
 * then Brent's method; only the point found is evaluated with its round-off
 * bounded (log_f_cert), so the search can be approximate without the bound
 * being so.  eps(delta) is a Newton iteration (safeguarded by bisection) on
 * log D(eps) = log delta, D(eps) = min_t F, whose derivative is
 * dF/deps = e^eps t - (alpha - 1) Delta sigma^alpha at the minimizing point
 * (the envelope theorem); it starts from the lower bound of
 * dpa_rdp_opt_eps_lower, within 1/K of the answer when K is large, and the
 * eps returned is certified by F at the final point (nudged up until it is;
 * the former bisection remains as a fallback).
 *
 * Lower bounds (used by the accountant only to skip orders that cannot win,
 * never as bounds on privacy).  Every binary pair A = (p, 1-p), B = (x, 1-x)
 * with x <= p and p^alpha x^{1-alpha} <= K - 1 + p has D_alpha <= r (the
 * other outcome contributes (1-p)((1-p)/(1-x))^{alpha-1} <= 1 - p), and
 * delta(eps) >= p - e^eps x.  Taking x = (p^alpha/(K - 1 + p))^{1/(alpha-1)}
 * and bounding (K - 1 + p) below by K - 1,
 *     delta_opt(eps) >= phi(p) = p - e^eps p^{alpha/(alpha-1)} (K-1)^{-1/(alpha-1)},
 * maximal at p_* = (1-1/alpha)^{alpha-1} e^{-(alpha-1) eps} (K - 1) with
 * phi(p_*) = p_* / alpha = Delta (1 - 1/K) whenever p_* <= 1.  p = 1 gives
 * delta_opt >= 1 - e^{eps - r}.  For eps queries: at eps_L = eps_improved +
 * log(1 - 1/K)/(alpha - 1) the bound equals delta with p_* = alpha delta; when
 * alpha delta < 1, every eps < eps_L has delta_opt(eps) >= delta_opt(eps') >=
 * Delta(eps')(1 - 1/K) > delta for some eps' in (eps, eps_L) with p_* <= 1
 * (p_* decreases continuously in eps), so eps_opt >= eps_L.
 */
#include <float.h>
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
/* Fast path.  Brent's tolerance on u = log t: near its minimum F changes by
 * O(F (du)^2) (its second derivative in u is at most of the order of F), so
 * du = 1e-8 moves the bound by ~1e-16 relative, below its own round-off. */
#define RDP_OPT_U_ATOL 1e-8
/* First step of the bracket search in u (then doubled). */
#define RDP_OPT_U_STEP 1.0
/* Evaluations allowed per Brent search (it needs ~15-25 here). */
#define RDP_OPT_BRENT_MAXIT 100
/* Newton iterations on log D(eps) = log delta, and when they stop: a step
 * below this fraction of eps (the answer's own round-off is ~1e-16). */
#define RDP_OPT_NEWTON_MAXIT 60
#define RDP_OPT_NEWTON_RTOL 1e-14
/* ... or once |log D(eps) - log delta| is below this: the plain log D is
 * only reproducible to ~1e-12 where the minimum over sigma sits on the
 * switch sigma0 (best_ls nudges sigma0 by ~1e-12 relative), and Newton steps
 * below that chase noise; the remaining ~1e-12/(alpha-1) in eps is taken
 * up by the certification's nudges. */
#define RDP_OPT_PHI_TOL 2e-12
/* The eps found is nudged up by this fraction (times 4^j on the j-th retry)
 * until F certifies delta there: D falls by a relative ~(alpha-1) eps times
 * this per nudge, more than the certified F exceeds the plain one (~1e-15). */
#define RDP_OPT_NUDGE 1e-14
#define RDP_OPT_NUDGE_TRIES 8
/* Bisection steps between the last eps that failed to certify and the
 * first that did, once the nudges overshoot (each step one certified F). */
#define RDP_OPT_CERT_BISECT 40

const char *dpa_rdp_conversion_name(dpa_rdp_conversion c)
{
    switch (c) {
    case DPA_RDP_CLASSICAL: return "classical";
    case DPA_RDP_IMPROVED: return "improved";
    case DPA_RDP_OPTIMAL: return "optimal";
    }
    return NULL;
}

/* exp(l) rounded up given l's absolute error e, capped at 1.  l = -inf is
 * an exact 0.  Below DBL_MIN the relative rounding bound no longer holds
 * (subnormals carry an absolute error of up to half of DBL_TRUE_MIN, and
 * exp underflows to 0 for arguments below about -745 although the value is
 * positive): there the result is moved up by two subnormal steps, so an
 * underflowing positive value is reported as at least DBL_TRUE_MIN, never 0. */
static double exp_up(double l, double e)
{
    if (l == -INFINITY) return 0.0;
    if (l + e >= 0) return 1.0;
    double v = exp(l + e);
    if (v < DBL_MIN)
        return v + 2 * DBL_TRUE_MIN;
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

/* ---------------- fast path (see the header) ---------------- */

typedef struct {
    double a, b, lD, eD, eps;
} opt_ctx;

/* the range of u = log t searched (as the scan of log_delta_opt) */
static void u_range(const opt_ctx *c, double *ulo, double *uhi)
{
    *ulo = fmax(-740.0, fmin(-c->eps, (c->lD - 40) / c->b) - 5);
    *uhi = fmin(700.0, -c->eps + 5);
}

/* log F(t, sigma) in plain floating point (no error bound): the search
 * objective.  NAN where the plain sum is not positive (the caller then uses
 * the certified value). */
static double log_f_plain(const opt_ctx *c, double lt, double ls)
{
    double l4 = c->lD + c->a * ls;                              /* Delta sigma^a */
    double l3 = lt == -INFINITY ? -INFINITY : c->eps + lt;     /* e^eps t */
    double v, mx;
    if (ls + log_d(c->b, lt) >= 0) {
        /* branch B: -t^b sigma + e^eps t + Delta sigma^a */
        double l2 = lt == -INFINITY ? -INFINITY : c->b * lt + ls;
        mx = fmax(l2, fmax(l3, l4));
        if (mx == -INFINITY) return -INFINITY;
        v = exp(l3 - mx) + exp(l4 - mx) - exp(l2 - mx);
    } else {
        /* branch A: 1 - (1+t)^b sigma + e^eps t + Delta sigma^a */
        double l1 = c->b * log1p(exp(lt)) + ls;
        mx = 0.0;
        v = -expm1(l1) + exp(l3) + exp(l4);
    }
    return v > 0 && isfinite(v) ? mx + log(v) : NAN;
}

/* G(u) = log F at t = e^u and the best sigma for it */
static int g_of_u(double u, void *ctx, double *f)
{
    const opt_ctx *c = ctx;
    double ls = best_ls(c->a, c->b, c->lD, u);
    double v = log_f_plain(c, u, ls);
    *f = isnan(v) ? log_f_cert(c->a, c->b, c->lD, c->eD, c->eps, u, ls) : v;
    return 0;
}

/* The minimum of G over the searched range (a bracket from u0 by doubling
 * steps, then Brent); *ub its point, *gb its plain value. */
static void opt_min_u(const opt_ctx *c, double u0, double step, double *ub, double *gb)
{
    double ulo, uhi;
    u_range(c, &ulo, &uhi);
    if (!(ulo < uhi)) {
        *ub = -INFINITY;
        g_of_u(-INFINITY, (void *)c, gb);
        return;
    }
    u0 = fmin(fmax(u0, ulo), uhi);
    double a, x, cc, fx;
    dpa_rdp_bracket(g_of_u, (void *)c, ulo, uhi, u0, step, &a, &x, &cc, &fx);
    dpa_rdp_brent(g_of_u, (void *)c, a, cc, x, fx, 0.0, RDP_OPT_U_ATOL, RDP_OPT_BRENT_MAXIT, ub, gb);
}

/* first guess of the best log t: in the regime eps > r the minimum over
 * sigma sits on the switch sigma0, where F ~ Delta - t^b (1 - alpha Delta)
 * + e^eps t, minimal at t = (b (1 - alpha Delta) e^{-eps})^alpha */
static double u_guess(const opt_ctx *c)
{
    double ad = fmin(c->a * exp(c->lD), 0.5);
    return c->a * (log(c->b) + log1p(-ad) - c->eps);
}

/* The certified bound (log) at eps from a fast search started at u0
 * (NAN: the guess): min of F at t = 0, the improved conversion and F at the
 * point found, each with its round-off bounded.  *ub, *lsb: the point; *gb
 * the plain value there. */
static double log_delta_opt_fast(double a, double r, double eps, double u0, double step, double *ub, double *lsb,
                                 double *gb)
{
    opt_ctx c;
    c.a = a;
    c.b = (a - 1) / a;
    c.eps = eps;
    c.lD = log_cks(a, r, eps, &c.eD);
    if (isnan(u0)) u0 = u_guess(&c);
    double u, g;
    opt_min_u(&c, u0, step, &u, &g);
    double ls = best_ls(a, c.b, c.lD, u);
    double best = log_f_cert(a, c.b, c.lD, c.eD, eps, u, ls);
    best = fmin(best, log_f_cert(a, c.b, c.lD, c.eD, eps, -INFINITY, best_ls(a, c.b, c.lD, -INFINITY)));
    best = fmin(best, c.lD + c.eD);
    if (ub) *ub = u;
    if (lsb) *lsb = ls;
    if (gb) *gb = g;
    return best;
}

/* improved conversion's eps (CKS20 Prop 12 solved for eps), rounded up */
static double eps_improved(double alpha, double r, double delta);

/* eps_opt by the former bisection on log_delta_opt (the fallback) */
static double eps_opt_bisect(double alpha, double r, double delta, double hi, double ld)
{
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
    (void)delta;
    return hi;
}

/* 1 if F at (t = e^u, best sigma) certifies delta(eps) <= delta */
static int cert_at(double a, double b, double r, double eps, double u, double ld)
{
    double eD, lD = log_cks(a, r, eps, &eD);
    return log_f_cert(a, b, lD, eD, eps, u, best_ls(a, b, lD, u)) <= ld;
}

/* eps_opt(delta) by Newton's method on the plain log D(eps) (see the
 * header), certified at the end */
static double eps_opt_fast(double a, double r, double delta)
{
    double hi = fmax(eps_improved(a, r, delta), 0.0), hi0 = hi;
    double ld = log(delta) - 2 * U * fabs(log(delta)); /* compare against delta rounded down */
    double lo = dpa_rdp_opt_eps_lower(a, r, delta);
    double u = NAN, step = RDP_OPT_U_STEP;
    if (!(lo > 0)) {
        lo = 0;
        if (log_delta_opt_fast(a, r, 0.0, NAN, step, &u, NULL, NULL) <= ld) return 0.0;
    }
    if (!(hi > 0)) return hi;
    if (!(lo < hi)) lo = 0;
    /* from the lower end (within ~1/K of the root when K is large): log D
     * decreases in eps, and the steps are safeguarded by the bracket [lo, hi] */
    double b = (a - 1) / a, x = lo, xc = NAN, uc = NAN, dlc = NAN;
    for (int it = 0; it < RDP_OPT_NEWTON_MAXIT; it++) {
        opt_ctx c = {a, b, 0, 0, x};
        c.lD = log_cks(a, r, x, &c.eD);
        double ux, gx;
        opt_min_u(&c, isnan(u) ? u_guess(&c) : u, step, &ux, &gx);
        u = ux;
        step = 0.25; /* warm start: the best u moves little with eps */
        double ls = best_ls(a, b, c.lD, ux), phi = gx - ld;
        /* d log F / d eps at the point (envelope theorem) */
        double d1 = ux == -INFINITY ? 0.0 : exp(x + ux), d2 = (a - 1) * exp(c.lD + a * ls);
        double dl = (d1 - d2) * exp(-gx);
        if (phi > 0) lo = fmax(lo, x);
        else {
            hi = fmin(hi, x);
            xc = x;
            uc = ux;
        }
        if (dl < 0 && isfinite(dl)) dlc = dl;
        double nx = dl < 0 && isfinite(dl) ? x - phi / dl : NAN;
        if (fabs(phi) <= RDP_OPT_PHI_TOL || (!isnan(nx) && fabs(nx - x) <= RDP_OPT_NEWTON_RTOL * fabs(x))) {
            /* converged: x itself if it met delta, else the Newton point */
            if (phi > 0 && (isnan(xc) || nx < xc)) {
                xc = nx;
                uc = ux;
            }
            break;
        }
        if (!(nx > lo && nx < hi)) nx = 0.5 * (lo + hi);
        if (hi - lo <= RDP_OPT_NEWTON_RTOL * hi) break; /* xc = hi if it was evaluated */
        x = nx;
    }
    if (!isnan(xc) && xc != x) {
        /* the best t at xc itself (warm start) */
        opt_ctx c = {a, b, 0, 0, xc};
        c.lD = log_cks(a, r, xc, &c.eD);
        double g;
        opt_min_u(&c, uc, step, &uc, &g);
    }
    if (!isnan(xc)) {
        /* certify: F at (uc, best sigma) must be <= delta at the eps returned
         * (first at xc itself, then nudged up) */
        double e = xc, efail = NAN;
        for (int j = 0; j <= RDP_OPT_NUDGE_TRIES; j++) {
            if (!(e < hi0)) break;
            if (cert_at(a, b, r, e, uc, ld)) {
                if (!isnan(efail)) {
                    /* the largest step overshoots: bisect between the last
                     * failure and e, certifying each candidate */
                    for (int i = 0; i < RDP_OPT_CERT_BISECT && e - efail > RDP_OPT_NUDGE * fabs(e); i++) {
                        double mid = 0.5 * (efail + e);
                        if (cert_at(a, b, r, mid, uc, ld)) e = mid;
                        else efail = mid;
                    }
                }
                return e;
            }
            /* the certified F exceeds delta by fc - ld in log: where its
             * terms cancel the margin is nearly constant while F falls at
             * the rate -dl, so step by that excess over |dl| (with 25%
             * to spare), at least the geometric nudge */
            double eD, lD = log_cks(a, r, e, &eD);
            double fc = log_f_cert(a, b, lD, eD, e, uc, best_ls(a, b, lD, uc));
            double step = fabs(e) * RDP_OPT_NUDGE * ldexp(1.0, 2 * j);
            if (isfinite(dlc)) step = fmax(step, 1.25 * (fc - ld) / -dlc);
            efail = e;
            e += step;
        }
    }
    /* nothing certified below the improved eps: that is the answer when it
     * is within the bisection's own tolerance of the lower end */
    if (hi0 - lo <= RDP_OPT_EPS_RTOL * hi0) return hi0;
    /* the former bisection on the scanned bound (where F's terms cancel so
     * much, or e^eps is so large, that the plain search cannot place the
     * root: (alpha - 1) r far below 1, or eps in the hundreds at orders
     * near 1; never in the accountant's tests) */
    return eps_opt_bisect(a, r, delta, hi0, ld);
}

double dpa_rdp_opt_eps_lower(double alpha, double r, double delta)
{
    if (!(alpha > 1) || !isfinite(alpha) || isnan(r) || !(delta > 0 && delta < 1)) return 0.0;
    if (r == INFINITY) return INFINITY;
    if (!(r > 0)) return 0.0;
    double am1 = alpha - 1, v = 0.0;
    /* the p = 1 pair: delta_opt(eps) >= 1 - e^{eps - r} */
    v = fmax(v, r + log1p(-delta));
    if (alpha * delta < 1) {
        double lk = am1 * r; /* log K */
        double t1 = log1p(-1 / alpha), t2 = (log(delta) + log(alpha)) / am1;
        double corr = (lk > 40 ? -exp(-lk) : log(-expm1(-lk))) / am1;
        v = fmax(v, r + t1 - t2 + corr);
    }
    /* rounded down: a few operations on values of size |r|, |t1|, |t2| */
    return fmax(v - 16 * U * (fabs(v) + fabs(r) + 1) - 1e-300, 0.0);
}

double dpa_rdp_opt_delta_lower(double alpha, double r, double eps)
{
    if (!(alpha > 1) || !isfinite(alpha) || isnan(r) || isnan(eps)) return 0.0;
    if (r == INFINITY) return 0.0; /* no information used here */
    double triv = eps < 0 ? -expm1(eps) * (1 - 2 * U) : 0.0;
    if (!(r > 0)) return triv;
    double am1 = alpha - 1, lk = am1 * r, v = triv;
    /* p = 1: 1 - e^{eps - r} */
    v = fmax(v, -expm1(eps - r));
    /* p*: Delta (1 - 1/K) if alpha Delta (1 - 1/K) <= 1 */
    double e, lD = log_cks(alpha, r, eps, &e);
    double l = lD + (lk > 40 ? -exp(-lk) : log(-expm1(-lk)));
    if (log(alpha) + l <= 0) v = fmax(v, exp(l));
    return v * (1 - 1e-12) - 1e-300 > 0 ? v * (1 - 1e-12) : 0.0;
}

double dpa_rdp_log_delta_key(dpa_rdp_conversion c, double alpha, double r, double eps)
{
    if (!(alpha > 1) || !isfinite(alpha) || isnan(r) || isnan(eps)) return INFINITY;
    if (r == INFINITY) return INFINITY;
    if (r <= 0) return eps >= 0 ? -INFINITY : log(-expm1(eps));
    double e, l;
    if (c == DPA_RDP_CLASSICAL) {
        l = (alpha - 1) * (r - eps);
        e = 4 * U * (fabs(l) + (alpha - 1) * (fabs(r) + fabs(eps)) + 1);
    } else {
        l = log_cks(alpha, r, eps, &e);
    }
    return l + e;
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
        l = log_delta_opt_fast(alpha, r, eps, NAN, RDP_OPT_U_STEP, NULL, NULL, NULL);
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
    case DPA_RDP_OPTIMAL:
        return eps_opt_fast(alpha, r, delta);
    }
    return INFINITY;
}

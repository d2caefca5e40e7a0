/* The Poisson-subsampled Gaussian: exact series for
 *     I = int_J beta(x) (1 - q + q e^x)^gamma dx,    gamma >= 0,
 * beta the density of the Gaussian loss under B, W ~ N(-m, 2m), m = mu^2/2,
 * J = (lo, hi).  With gamma = alpha this is E(alpha - 1) of the remove pair
 * (qA + (1-q)B, B) over J (J = R: its Rényi divergence, Mironov, Talwar &
 * Zhang 2019, "Rényi differential privacy of the sampled Gaussian
 * mechanism", §3.1-3.2, there with sigma = 1/mu).
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Tilted moments (completing the square): for real j,
 *     int_J beta(x) e^{j x} dx = e^{j (j - 1) m} P(N((2j - 1) m, 2m) in J).      (T)
 *
 * Integer gamma = n: (1 - q + q e^x)^n = sum_k C(n,k) q^k (1-q)^{n-k} e^{kx},
 * a finite sum of positive terms (MTZ19 §3.1).  For J = R the terms k = 0, 1
 * integrate to 1 exactly, so E - 1 = sum_{k>=2} C(n,k) q^k (1-q)^{n-k}
 * (e^{k(k-1)m} - 1) is summed directly (no cancellation for small q).
 *
 * Fractional gamma (MTZ19 §3.2): split J at x* = log((1-q)/q), where
 * q e^x = 1 - q.  Below x*, expand in powers of q e^x/(1-q) < 1; above, in
 * powers of (1-q)/(q e^x) < 1 (generalized binomial series, convergent):
 *   I = sum_k C(gamma,k) [ (1-q)^{gamma-k} q^k   int_{J1} beta e^{kx}
 *                        + (1-q)^k q^{gamma-k}   int_{J2} beta e^{(gamma-k)x} ],
 * J1 = J n (-inf, x*], J2 = J n (x*, inf), each integral by (T).  The signs of
 * C(gamma,k) are kept (docs/rdp.md: dropping them gives a looser value).
 * Certified tail: for k > gamma, C(gamma,k) alternates in sign and
 * |C(gamma,k+1)/C(gamma,k)| = |gamma-k|/(k+1) <= 1 once k >= (gamma-1)/2; both
 * integrals are non-increasing in k (their integrands carry the k-th power
 * of a ratio <= 1).  So from k0 = floor(gamma) + 2 on the terms alternate with
 * non-increasing magnitude and (Leibniz) the tail sum_{k>=K} t_k lies between
 * 0 and t_K.  We stop at the first K >= k0 with |t_K| <= RDP_SERIES_TOL |S|
 * (or K = RDP_SERIES_MAXTERMS past k0) and add max(t_K, 0).
 */
#include <math.h>
#include <stdlib.h>
#include "rdp/rdp.h"
#include "num/num.h"

#define U DPA_UNIT_ROUNDOFF

/* Relative size of the first omitted term at which the fractional series
 * stops: far below the other error allowances (which are ~1e-13 and up). */
#define RDP_SERIES_TOL 1e-17
/* Terms past k0 before the series gives up converging further (the bound
 * is still certified, only looser by the Leibniz term).  Terms decay like
 * k^{-gamma-2} e^{-x*^2/(4m)} (MTZ19 §3.2), slowest for gamma near 1 and
 * q near 1/2, where 2e5 terms reach ~1e-15 relative. */
#define RDP_SERIES_MAXTERMS 200000
/* Error of glibc's lgamma for positive arguments: a few ulp of the result
 * (glibc manual, "Known Maximum Errors": <= 4 ulp on x86_64); 16u (|lgamma| + 1)
 * allows a factor 4. */
#define RDP_LGAMMA_ERR 16.0
/* Integer orders above this use the fractional path (a sum of this many
 * terms is the most the finite expansion is allowed to cost). */
#define RDP_MAX_INTEGER_TERMS 1e7

/* Terms more than e^{RDP_PRUNE} below the largest are replaced by a bound
 * on their sum (relative size e^{-60} ~ 1e-26). */
#define RDP_PRUNE 60.0
/* Largest integer order whose lgamma values are tabulated (8 MB). */
#define RDP_LGAMMA_TABLE_MAX 1e6

/* Standardized end (x - (2j - 1) m)/mu = x/mu - (j - 1/2) mu and its error. */
static double std_end(double x, double mu, double j, double *e)
{
    if (!isfinite(x)) return x;
    double a = x / mu, b = (j - 0.5) * mu;
    *e = fmax(*e, 4 * U * (fabs(a) + fabs(b) + 1));
    return a - b;
}

/* log int_{(lo,hi)} beta(x) e^{j x} dx by (T), with relative error *r. */
static double log_tilted(double mu, double m, double j, double lo, double hi, double *r)
{
    double ae = 0;
    double a = std_end(lo, mu, j, &ae), b = std_end(hi, mu, j, &ae);
    double pr;
    double lp = dpa_rdp_log_gauss_interval(a, b, ae, &pr);
    if (lp == -INFINITY) {
        *r = 0;
        return -INFINITY;
    }
    double ex = j * (j - 1) * m;
    /* j(j-1)m: three roundings (relative 3u) */
    double e = 4 * U * fabs(ex);
    *r = pr + expm1(e) * (1 + pr);
    return ex + lp;
}

/* log C(n, k) for integers 0 <= k <= n (lg1 = lgamma(n + 1)) and its
 * absolute error (the integer orders beyond the lgamma table) */
static double log_choose_int(double n, double lg1, double k, double *e)
{
    int s;
    /* C(n, 0) = 1 and C(n, 1) = n exactly (the dominant terms for small q:
     * keep them free of lgamma's error) */
    if (k == 0 || k == 1) {
        *e = k == 0 ? 0.0 : U * fabs(log(n));
        return k == 0 ? 0.0 : log(n);
    }
    double lk = lgamma_r(k + 1, &s), lx = lgamma_r(n - k + 1, &s);
    *e = RDP_LGAMMA_ERR * U * (fabs(lg1) + fabs(lk) + fabs(lx) + 3);
    return lg1 - lk - lx;
}

/* log(e^y - 1), y > 0, and its absolute error given y's relative error 4u */
static double log_expm1_pos(double y, double *e)
{
    *e = 4 * U * (y + 1) + 2 * U;
    if (y > 1) return y + dpa_log1mexp(-y);
    return log(expm1(y));
}

dpa_status dpa_rdp_sgm_series(double mu, double q, double gamma, double lo, double hi, double *out,
                              dpa_error *err)
{
    return dpa_rdp_sgm_series_n(mu, q, gamma, lo, hi, RDP_SERIES_MAXTERMS, NULL, out, err);
}

dpa_status dpa_rdp_sgm_series_n(double mu, double q, double gamma, double lo, double hi, double maxterms,
                                int *converged, double *out, dpa_error *err)
{
    if (converged) *converged = 1;
    if (!(mu > 0 && isfinite(mu)) || !(q > 0 && q <= 1) || !(gamma >= 0 && isfinite(gamma)) || !(lo < hi))
        return dpa_error_set(err, DPA_EINVAL,
                             "subsampled Gaussian series: need mu > 0, q in (0, 1], gamma >= 0, lo < hi "
                             "(got mu=%g q=%g gamma=%g lo=%g hi=%g)", mu, q, gamma, lo, hi);
    double m = 0.5 * mu * mu;
    double r;
    if (q == 1) {
        /* no subsampling: one tilted moment, e^{gamma x} */
        double l = log_tilted(mu, m, gamma, lo, hi, &r);
        *out = l == -INFINITY ? l : l + log1p(r) + 2 * U * (fabs(l) + 1);
        return DPA_OK;
    }
    double lq = log(q), l1q = log1p(-q);
    double elq = U * fabs(lq), el1q = 2 * U * fabs(l1q); /* their own errors */
    double xs = l1q - lq; /* x* */
    dpa_rdp_acc a;
    dpa_rdp_acc_init(&a);
    int s;

    if (gamma == floor(gamma) && gamma <= RDP_MAX_INTEGER_TERMS) {
        double n = gamma, lg1 = lgamma_r(n + 1, &s);
        int full = lo == -INFINITY && hi == INFINITY;
        if (full && n < 2) {
            *out = 0.0; /* E = 1 exactly: sum_k C(n,k) q^k (1-q)^{n-k} */
            return DPA_OK;
        }
        /* lgamma(j + 1), j = 0..n, tabulated once (two look-ups per term
         * instead of three lgamma calls); same error allowance */
        double *lg = n <= RDP_LGAMMA_TABLE_MAX ? malloc(((size_t)n + 1) * sizeof *lg) : NULL;
        if (lg)
            for (size_t j = 0; j <= (size_t)n; j++) lg[j] = lgamma_r((double)j + 1, &s);
        /* descending k: the terms grow like e^{k(k-1)m} at large orders, so
         * the top ones dominate; once the bound on everything below k,
         *   sum_{j<=k} t_j <= (M_k - 1) sum_j C(n,j) q^j (1-q)^{n-j} <= M_k - 1   (full line),
         *   sum_{j<=k} t_j <= e^{k(k-1)m}                                       (else),
         * (M_j = e^{j(j-1)m} increasing, P <= 1) is below e^{-RDP_PRUNE} of the
         * largest term, it is added instead of the terms */
        double kmin = full ? 2 : 0, top = -INFINITY;
        for (double k = n; k >= kmin; k--) {
            double eb1, lbnd = full ? log_expm1_pos(k * (k - 1) * m, &eb1) : k * (k - 1) * m;
            if (!full) eb1 = 4 * U * lbnd;
            if (top > -INFINITY && lbnd < top - RDP_PRUNE) {
                dpa_rdp_acc_add(&a, lbnd, 1, expm1(eb1));
                break;
            }
            double eb, lc;
            if (lg) {
                double x1 = lg[(size_t)n], x2 = lg[(size_t)k], x3 = lg[(size_t)(n - k)];
                lc = x1 - x2 - x3;
                eb = RDP_LGAMMA_ERR * U * (fabs(x1) + fabs(x2) + fabs(x3) + 3);
            } else {
                lc = log_choose_int(n, lg1, k, &eb);
            }
            double lw = lc + k * lq + (n - k) * l1q;
            double ew = eb + k * elq + (n - k) * el1q + 4 * U * (fabs(lc) + fabs(k * lq) + fabs((n - k) * l1q));
            double lt, et;
            if (full) {
                lt = log_expm1_pos(k * (k - 1) * m, &et);
                r = expm1(ew + et);
            } else {
                double rp;
                lt = log_tilted(mu, m, k, lo, hi, &rp);
                r = rp + expm1(ew) * (1 + rp);
            }
            dpa_rdp_acc_add(&a, lw + lt, 1, r);
            top = fmax(top, lw + lt);
        }
        free(lg);
        double l = dpa_rdp_acc_log_upper(&a, -INFINITY);
        dpa_rdp_acc_free(&a);
        if (isnan(l)) return dpa_error_set(err, DPA_ENOMEM, "out of memory");
        if (full) {
            /* log E = log(1 + (E - 1)): log1p is accurate to an ulp or two */
            double le = l == -INFINITY ? 0.0 : (l > 30 ? dpa_log_add_exp(0.0, l) : log1p(exp(l)));
            l = le * (1 + 4 * U);
        }
        *out = l;
        return DPA_OK;
    }

    /* fractional gamma: the two-sided series */
    double fl = floor(gamma);
    double j1lo = lo, j1hi = fmin(hi, xs), j2lo = fmax(lo, xs), j2hi = hi;
    int has1 = j1lo < j1hi, has2 = j2lo < j2hi;
    double k0 = fl + 2, kmax = k0 + fmin(fmax(maxterms, 0.0), RDP_SERIES_MAXTERMS);
    double tail_l = -INFINITY; /* log |t_K| * (1 + r_K) of the first omitted term, if positive */
    /* a running (uncertified) partial sum for the stopping rule only */
    double run_scale = -INFINITY, run_sum = 0;
    /* log |C(gamma, k)| by the recurrence C(gamma, k+1) = C(gamma, k) (gamma - k)/(k + 1)
     * (two logs per term instead of lgamma calls), its sign, and its
     * accumulated absolute error: per step the two logs (u each, plus u for
     * the rounding of gamma - k, a relative u) and the two additions */
    double lc = 0.0, eb = 0.0;
    int sg = 1;
    for (double k = 0;; k++) {
        if (k == 1) {
            lc = log(gamma); /* C(gamma, 1) = gamma exactly */
            eb = U * fabs(lc);
        } else if (k > 1) {
            double d = gamma - (k - 1), la = log(fabs(d)), lb = log(k), ln = lc + la - lb;
            eb += 2 * U * (fabs(lc) + fabs(ln) + fabs(la) + fabs(lb) + 1);
            lc = ln;
            if (d < 0) sg = -sg;
        }
        double l1 = -INFINITY, l2 = -INFINITY, r1 = 0, r2 = 0;
        if (has1) {
            double rp, lt = log_tilted(mu, m, k, j1lo, j1hi, &rp);
            double ew = eb + k * elq + fabs(gamma - k) * el1q +
                        4 * U * (fabs(lc) + fabs(k * lq) + fabs((gamma - k) * l1q) + fabs(lt));
            l1 = lc + k * lq + (gamma - k) * l1q + lt;
            r1 = rp + expm1(ew) * (1 + rp);
        }
        if (has2) {
            double rp, lt = log_tilted(mu, m, gamma - k, j2lo, j2hi, &rp);
            double ew = eb + k * el1q + fabs(gamma - k) * elq +
                        4 * U * (fabs(lc) + fabs(k * l1q) + fabs((gamma - k) * lq) + fabs(lt) + fabs(gamma - k));
            l2 = lc + k * l1q + (gamma - k) * lq + lt;
            r2 = rp + expm1(ew) * (1 + rp);
        }
        double lt = dpa_log_add_exp(l1, l2);
        /* relative error of the sum: the errors weighted by the parts */
        double rt = lt == -INFINITY ? 0.0 : r1 * exp(l1 - lt) + r2 * exp(l2 - lt);
        if (k >= k0) {
            double cur = run_scale == -INFINITY ? -INFINITY : run_scale + log(fabs(run_sum));
            if (lt == -INFINITY || (cur > -INFINITY && lt <= cur + log(RDP_SERIES_TOL)) || k >= kmax) {
                if (converged && !(lt == -INFINITY || (cur > -INFINITY && lt <= cur + log(RDP_SERIES_TOL))))
                    *converged = 0;
                /* t_k is the first omitted term: the tail is between 0 and t_k */
                if (sg > 0 && lt > -INFINITY) tail_l = lt + log1p(rt);
                break;
            }
        }
        dpa_rdp_acc_add(&a, lt, sg, rt);
        if (lt > -INFINITY) {
            if (lt > run_scale) {
                run_sum = run_scale == -INFINITY ? 0.0 : run_sum * exp(run_scale - lt);
                run_scale = lt;
            }
            run_sum += sg * exp(lt - run_scale);
        }
    }
    double l = dpa_rdp_acc_log_upper(&a, tail_l);
    size_t nterms = a.n;
    dpa_rdp_acc_free(&a);
    if (isnan(l)) return dpa_error_set(err, DPA_ENOMEM, "out of memory");
    if (l == -INFINITY && nterms > 0)
        return dpa_error_set(err, DPA_ENUMERIC,
                             "subsampled Gaussian series (mu=%g q=%g alpha=%g): the partial sums did not "
                             "certify a positive value", mu, q, gamma);
    *out = l;
    return DPA_OK;
}

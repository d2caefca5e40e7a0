/* The standard normal distribution: log Phi(x) accurate in both tails, Phi,
 * and the quantile Phi^{-1} given p or log p.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * log Phi(x) is computed on three ranges:
 *   x >= 0            log1p(-Phibar(x)), Phibar(x) = erfc(x/sqrt2)/2 with the
 *                     rounding of x/sqrt2 corrected (erfc_x_over_sqrt2), so
 *                     Phibar is accurate to a few ulp relative even where
 *                     erfc is steep, and log1p(-q) is well
 *                     conditioned for q <= 1/2; far out (x > ~38.5) Phibar
 *                     underflows and the result is -0.0 (the exact value,
 *                     -Phibar(x), is below the smallest subnormal).
 *   -20 <= x < 0      log(erfc(-x/sqrt2)/2) (same corrected erfc); Phi(x) >=
 *                     2.7e-89 is a normal number, accurate to a few ulp.
 *   x < -20           the asymptotic expansion
 *                       Phi(x) = phi(x)/|x| * S(x),
 *                       S(x) = sum_k (-1)^k (2k-1)!! / x^{2k},
 *                     so log Phi(x) = -x^2/2 - log|x| - log sqrt(2 pi)
 *                     + log1p(S - 1), free of underflow down to
 *                     x ~ -1.9e154 (where -x^2/2 itself overflows to -inf).
 * Measured against mpmath (50 digits, ~4000 points) the relative error is
 * below 4e-16 on [-1e150, 37] (above 37 the result is subnormal and only
 * absolutely accurate), and continuous across both switch points
 * (tests/test_num.c).
 *
 * Phi^{-1}: GSL's gsl_cdf_ugaussian_Pinv (Wichura's AS241, ~1e-16) as the
 * start when p is a normal double, or the asymptotic inversion of log Phi
 * when it is not, then Newton steps on the residual that is accurate in the
 * region (p - 1/2 in the centre, log Phi(x) - log p in the tails). */
#include <float.h>
#include <math.h>
#include <gsl/gsl_cdf.h>
#include "num/num.h"

/* 1/sqrt(2) = SQRT1_2 + SQRT1_2_LO (SQRT1_2 correctly rounded, SQRT1_2_LO the
 * rounding error, from mpmath), 2/sqrt(pi), log(sqrt(2 pi)), log(2 pi), ln 2,
 * correctly rounded. */
static const double SQRT1_2 = 0.707106781186547524400844362104849039;
static const double SQRT1_2_LO = -4.833646656726457e-17;
static const double TWO_OVER_SQRTPI = 1.12837916709551257389615890312154517;
static const double LOG_SQRT_2PI = 0.918938533204672741780329736405617640;
static const double LOG_2PI = 1.83787706640934548356065947281123528;
static const double LN2 = 0.693147180559945309417232121458176568;

/* Below this x log Phi uses the asymptotic series.  At x = -20 the series
 * terms (2k-1)!!/400^k drop below 2^-56 after 10 terms (and keep shrinking
 * until k ~ 400), so the truncation error is negligible; above it erfc still
 * returns a normal double (Phi(-20) = 2.8e-89) so the direct form has no
 * underflow.  Both forms agree to ~1e-16 relative at the switch. */
#define DPA_NDTR_ASYM_X (-20.0)
/* Stop the asymptotic series once a term is below this (the remainder of
 * this alternating series is bounded by the first omitted term). */
#define DPA_NDTR_ASYM_TERM_TOL (0.25 * DBL_EPSILON)
/* Hard cap on series terms; at x <= -20 fewer than 12 are ever used. */
#define DPA_NDTR_ASYM_MAX_TERMS 40

/* Central region of dpa_ndtri: for p in [1/4, 3/4], p - 1/2 is exact
 * (Sterbenz) and Phi(x) - 1/2 = erf(x/sqrt2)/2 is accurate relative to x, so
 * the Newton residual keeps full relative accuracy even for x near 0. */
#define DPA_NDTRI_CENTRAL_LO 0.25
#define DPA_NDTRI_CENTRAL_HI 0.75
/* Newton stops when the step is below this fraction of |x| (a few ulp: the
 * residual is itself only accurate to an ulp or so, so asking for less
 * would just chase rounding noise). */
#define DPA_NDTRI_XTOL (4.0 * DBL_EPSILON)
/* Newton iteration caps.  From AS241 (already ~1e-16) one or two steps are
 * taken; from the asymptotic start at p < DBL_MIN the iteration converges
 * monotonically (log Phi is concave) in a handful of steps. */
#define DPA_NDTRI_MAX_NEWTON 60
#define DPA_NDTRI_CENTRAL_NEWTON 2

/* erfc(x / sqrt 2) to a few ulp relative for every x.  Plain erfc(x*SQRT1_2)
 * is not: the argument's rounding error e (|e| <= ~1.2e-16 |z|) changes
 * erfc(z) by the relative amount ~2 z e ~ x^2 * 1.2e-16, 1.5e-13 at x = 37.
 * e is recovered exactly enough with fma plus the low part of 1/sqrt 2, and
 * removed with the first-order Taylor term erfc(z + e) = erfc(z) -
 * (2/sqrt pi) exp(-z^2) e; the neglected second-order term is ~(z e)^2
 * relative, below 1e-26. */
static double erfc_x_over_sqrt2(double x)
{
    double z = x * SQRT1_2;
    if (!isfinite(z))
        return erfc(z);             /* +-inf (NaN propagates) */
    double e = fma(x, SQRT1_2, -z) + x * SQRT1_2_LO;
    return erfc(z) - TWO_OVER_SQRTPI * exp(-z * z) * e;
}

/* 1 + S(x) - 1: the sum of the k >= 1 terms of the asymptotic series of
 * Phi(x) |x| / phi(x), for x <= DPA_NDTR_ASYM_X. */
static double asym_tail_sum(double x)
{
    double u = (1.0 / x) * (1.0 / x);   /* no overflow of x*x */
    double t = 1.0, s = 0.0;
    for (int k = 1; k <= DPA_NDTR_ASYM_MAX_TERMS; k++) {
        t *= -(2.0 * k - 1.0) * u;
        s += t;
        if (fabs(t) < DPA_NDTR_ASYM_TERM_TOL)
            break;
    }
    return s;
}

double dpa_log_ndtr(double x)
{
    if (isnan(x))
        return NAN;
    if (x >= 0.0)
        return log1p(-0.5 * erfc_x_over_sqrt2(x));   /* +inf: -0.0 */
    if (x >= DPA_NDTR_ASYM_X)
        return log(0.5 * erfc_x_over_sqrt2(-x));
    if (x == -INFINITY)
        return -INFINITY;
    /* -(x/2)*x rather than -x*x/2: x/2 is exact and the product does not
     * overflow until -x^2/2 itself does. */
    return -(0.5 * x) * x - log(-x) - LOG_SQRT_2PI + log1p(asym_tail_sum(x));
}

double dpa_log_ndtr_c(double x)
{
    return dpa_log_ndtr(-x);
}

double dpa_ndtr(double x)
{
    return 0.5 * erfc_x_over_sqrt2(-x);
}

/* phi(x)/Phi(x) = d/dx log Phi(x), for Newton on log Phi. */
static double ndtr_hazard(double x)
{
    if (x < DPA_NDTR_ASYM_X)
        return -x / (1.0 + asym_tail_sum(x));   /* avoids -x^2/2 cancelling */
    return exp(-(0.5 * x) * x - LOG_SQRT_2PI - dpa_log_ndtr(x));
}

/* Start of the tail iteration for log p very small:
 * x ~ -sqrt(-2 logp - log(-2 logp) - log(2 pi)), written with t = -logp so
 * nothing overflows for t up to DBL_MAX. */
static double ndtri_asym_start(double logp)
{
    double t = -logp;
    double lead = 2.0 - (LN2 + log(t) + LOG_2PI) / t;
    if (!(lead > 0.0))        /* cannot happen for t > 708 (where this is
                                 * used); guard against sqrt of a negative */
        lead = 2.0;
    return -sqrt(t) * sqrt(lead);
}

static double gsl_pinv(double p)
{
    dpa_gsl_guard g = dpa_gsl_guard_begin();
    double x = gsl_cdf_ugaussian_Pinv(p);
    dpa_gsl_guard_end(g);
    return x;
}

/* Phi^{-1}(p) for 0 < p <= 1/2 given p and logp = log p (p may underflow to 0
 * while logp is finite).  Newton on log Phi(x) - logp: every step is
 * relative to |x| and well conditioned for all tail p. */
static double ndtri_tail(double p, double logp)
{
    double x = p >= DBL_MIN ? gsl_pinv(p) : ndtri_asym_start(logp);
    for (int i = 0; i < DPA_NDTRI_MAX_NEWTON; i++) {
        double g = dpa_log_ndtr(x) - logp;
        double h = ndtr_hazard(x);
        if (!isfinite(g) || !isfinite(h) || h <= 0.0)
            break;       /* |x| beyond ~1.9e154: the start is exact already */
        double dx = g / h;
        x -= dx;
        if (fabs(dx) <= DPA_NDTRI_XTOL * fabs(x))
            break;
    }
    return x;
}

double dpa_ndtri(double p)
{
    if (isnan(p) || p < 0.0 || p > 1.0)
        return NAN;
    if (p == 0.0)
        return -INFINITY;
    if (p == 1.0)
        return INFINITY;
    if (p >= DPA_NDTRI_CENTRAL_LO && p <= DPA_NDTRI_CENTRAL_HI) {
        double x = gsl_pinv(p);
        double r0 = p - 0.5;      /* exact on [1/4, 3/4] */
        for (int i = 0; i < DPA_NDTRI_CENTRAL_NEWTON; i++) {
            double r = 0.5 * erf(x * SQRT1_2) - r0;
            double phi = exp(-(0.5 * x) * x - LOG_SQRT_2PI);
            x -= r / phi;
        }
        return x;
    }
    if (p < 0.5)
        return ndtri_tail(p, log(p));
    double q = 1.0 - p;           /* exact for p >= 1/2 (Sterbenz) */
    return -ndtri_tail(q, log(q));
}

double dpa_ndtri_log(double logp)
{
    if (isnan(logp) || logp > 0.0)
        return NAN;
    if (logp == 0.0)
        return INFINITY;
    if (logp == -INFINITY)
        return -INFINITY;
    if (logp >= -LN2)             /* p >= 1/2: complement without cancellation */
        return -dpa_ndtri(-expm1(logp));
    return ndtri_tail(exp(logp), logp);
}

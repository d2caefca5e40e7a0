/* Tests of the internal numerics (src/num): log-space arithmetic, the normal
 * distribution in the tails, root finding, the GSL guard and the FFT cache.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Reference values marked "mpmath" were computed with mpmath 1.3 at 50-60
 * significant digits from the exact double arguments, e.g.
 *   mp.dps = 50; log(ncdf(mpf(-38)))  ->  -726.5572160188201301...
 * (log Phi(x) for x > 0 as log1p(-ncdf(-x)) so 50 digits are enough). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <float.h>
#include <math.h>
#include <string.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_sf_log.h>
#include "num/num.h"

static const double LN2 = 0.693147180559945309417232121458176568;
static const double LOG_2PI = 1.83787706640934548356065947281123528;

static double rel_err(double got, double want)
{
    if (got == want)
        return 0.0;            /* also equal infinities */
    if (want == 0.0)
        return fabs(got);
    return fabs(got - want) / fabs(want);
}

#define ASSERT_REL(got, want, tol)                                              \
    do {                                                                        \
        double g_ = (got), w_ = (want), r_ = rel_err(g_, w_);                   \
        if (!(r_ <= (tol)))                                                     \
            fail_msg("%s = %.17g, want %.17g (rel err %.3g > %.3g)", #got, g_, \
                     w_, r_, (double)(tol));                                    \
    } while (0)

#define ASSERT_ABS(got, want, tol)                                              \
    do {                                                                        \
        double g_ = (got), w_ = (want);                                         \
        if (!(fabs(g_ - w_) <= (tol)))                                          \
            fail_msg("%s = %.17g, want %.17g (abs err %.3g > %.3g)", #got, g_, \
                     w_, fabs(g_ - w_), (double)(tol));                         \
    } while (0)

/* ------------------------------------------------------------------ */
/* log-space arithmetic */

static void test_log_add_exp(void **state)
{
    (void)state;
    assert_true(dpa_log_add_exp(-INFINITY, -INFINITY) == -INFINITY);
    assert_true(dpa_log_add_exp(-INFINITY, 3.0) == 3.0);
    assert_true(dpa_log_add_exp(3.0, -INFINITY) == 3.0);
    assert_true(dpa_log_add_exp(INFINITY, 3.0) == INFINITY);
    assert_true(isnan(dpa_log_add_exp(NAN, 3.0)));
    ASSERT_REL(dpa_log_add_exp(0.0, 0.0), LN2, 1e-16);
    ASSERT_REL(dpa_log_add_exp(-2.5, -2.5), -2.5 + LN2, 1e-16);
    ASSERT_REL(dpa_log_add_exp(1000.0, 1000.0), 1000.0 + LN2, 1e-16);  /* no overflow */
    ASSERT_REL(dpa_log_add_exp(-1000.0, -1000.0), -1000.0 + LN2, 1e-16); /* no underflow */
    assert_true(dpa_log_add_exp(0.0, -800.0) == 0.0);
    ASSERT_REL(dpa_log_add_exp(0.0, -40.0), 4.2483542552915889863e-18, 1e-15); /* mpmath */
    ASSERT_REL(dpa_log_add_exp(-40.0, 0.0), 4.2483542552915889863e-18, 1e-15);
}

static void test_log_sub_exp(void **state)
{
    (void)state;
    assert_true(dpa_log_sub_exp(2.0, 2.0) == -INFINITY);
    assert_true(dpa_log_sub_exp(-INFINITY, -INFINITY) == -INFINITY);
    assert_true(dpa_log_sub_exp(2.0, -INFINITY) == 2.0);
    assert_true(isnan(dpa_log_sub_exp(1.0, 2.0)));
    assert_true(isnan(dpa_log_sub_exp(NAN, 2.0)));
    ASSERT_ABS(dpa_log_sub_exp(log(3.0), log(2.0)), 0.0, 4e-16);
    ASSERT_REL(dpa_log_sub_exp(1000.0, 999.0), 999.54132485461291811, 1e-16); /* mpmath */
    /* large difference: log(1 - e^-800) rounds to 0 */
    double r = dpa_log_sub_exp(0.0, -800.0);
    assert_true(r == 0.0);
    ASSERT_REL(dpa_log_sub_exp(0.0, -40.0), -4.2483542552915890044e-18, 1e-15);
    /* nearly equal: log(1 - e^{-1e-20}) = log(1e-20) */
    ASSERT_REL(dpa_log_sub_exp(0.0, -1e-20), -46.05170185988091368, 1e-15);
    /* b one ulp below a: d = 2^-50, log(1 - e^-d) = -50 ln 2 - d/2 + ... */
    ASSERT_REL(dpa_log_sub_exp(5.0, nextafter(5.0, 0.0)), 5.0 - 50.0 * LN2, 1e-15);
}

static void test_log1mexp(void **state)
{
    (void)state;
    assert_true(dpa_log1mexp(0.0) == -INFINITY);
    assert_true(dpa_log1mexp(-INFINITY) == 0.0);
    assert_true(isnan(dpa_log1mexp(1.0)));
    assert_true(isnan(dpa_log1mexp(NAN)));
    ASSERT_REL(dpa_log1mexp(-1e-20), -46.05170185988091368, 1e-15);   /* log(1e-20) */
    ASSERT_REL(dpa_log1mexp(-1e-300), log(1e-300), 1e-15);
    ASSERT_REL(dpa_log1mexp(-40.0), -4.2483542552915890044e-18, 1e-15);
    assert_true(dpa_log1mexp(-800.0) == 0.0);
    /* at and around the switch point -ln 2: log(1/2) = -ln 2 */
    ASSERT_REL(dpa_log1mexp(-LN2), -LN2, 2e-16);
    double below = dpa_log1mexp(nextafter(-LN2, -INFINITY));
    double above = dpa_log1mexp(nextafter(-LN2, 0.0));
    ASSERT_REL(below, -LN2, 1e-15);
    ASSERT_REL(above, -LN2, 1e-15);
    assert_true(below >= above);   /* decreasing in a */
}

static void test_log_sum_exp(void **state)
{
    (void)state;
    assert_true(dpa_log_sum_exp(NULL, 0) == -INFINITY);
    double allneg[3] = { -INFINITY, -INFINITY, -INFINITY };
    assert_true(dpa_log_sum_exp(allneg, 3) == -INFINITY);
    double a[3] = { 0.0, -INFINITY, 0.0 };
    ASSERT_REL(dpa_log_sum_exp(a, 3), LN2, 1e-16);
    double b[2] = { -800.0, -800.0 };
    ASSERT_REL(dpa_log_sum_exp(b, 2), -800.0 + LN2, 1e-16);
    double c[3] = { 1000.0, 1000.0, 1000.0 };
    ASSERT_REL(dpa_log_sum_exp(c, 3), 1001.0986122886681097, 1e-16); /* 1000 + log 3 */
    double d[3] = { -40.0, 0.0, -40.0 };
    ASSERT_REL(dpa_log_sum_exp(d, 3), 8.4967085105831779546e-18, 1e-15); /* mpmath */
    double e[1] = { -7.25 };
    assert_true(dpa_log_sum_exp(e, 1) == -7.25);
    double f[2] = { 1.0, NAN };
    assert_true(isnan(dpa_log_sum_exp(f, 2)));
}

/* ------------------------------------------------------------------ */
/* normal distribution */

static void test_log_ndtr_values(void **state)
{
    (void)state;
    ASSERT_REL(dpa_log_ndtr(0.0), log(0.5), 1e-16);
    ASSERT_REL(dpa_log_ndtr(-1.0), log(0.15865525393145705), 1e-15);
    ASSERT_REL(dpa_log_ndtr(-1.0), -1.8410216450092635058, 1e-15);      /* mpmath */
    ASSERT_REL(dpa_log_ndtr(-10.0), -53.23128515051247, 1e-15);
    /* -726.5572160188201 (mpmath, also -722 - log 38 - log sqrt(2 pi) - 1/1444
     * + ... by the asymptotic series).  Phi(-38) = 2.9e-316 is subnormal, so
     * the erfc route would lose digits here. */
    ASSERT_REL(dpa_log_ndtr(-38.0), -726.5572160188201301, 1e-15);
    ASSERT_REL(dpa_log_ndtr(-20.0), -203.91715537109726394, 1e-15);     /* mpmath */
    ASSERT_REL(dpa_log_ndtr(-30.0), -454.32124395634319711, 1e-15);
    ASSERT_REL(dpa_log_ndtr(-100.0), -5005.5242086942050886, 1e-15);
    ASSERT_REL(dpa_log_ndtr(-0.5), -1.1759117615936186089, 1e-15);
    ASSERT_REL(dpa_log_ndtr(0.5), -0.36894641528865639307, 1e-15);
    ASSERT_REL(dpa_log_ndtr(3.0), -0.0013508099647481937988, 1e-15);
    ASSERT_REL(dpa_log_ndtr(8.0), -6.2209605742717860585e-16, 1e-15);
    /* x = 5: log1p(-Phibar(5)), Phibar(5) = 2.866515718791939e-07 */
    ASSERT_REL(dpa_log_ndtr(5.0), log1p(-2.866515718791939e-07), 1e-15);
    ASSERT_REL(dpa_log_ndtr(5.0), -2.8665161296376359338e-7, 1e-15);    /* mpmath */
    /* x = -1e5 against -x^2/2 - log(-x) - log(2 pi)/2 - 1/x^2 (next term
     * 2.5/x^4 = 2.5e-20 is far below an ulp) */
    double x = -1e5;
    ASSERT_REL(dpa_log_ndtr(x), -x * x / 2 - log(-x) - 0.5 * LOG_2PI - 1 / (x * x), 1e-15);
    ASSERT_REL(dpa_log_ndtr(x), -5000000012.431863998274901, 1e-15);    /* mpmath */
    ASSERT_REL(dpa_log_ndtr(-1e10), -5.0000000000000000024e19, 1e-15);
    /* no underflow to -inf far out */
    ASSERT_REL(dpa_log_ndtr(-1e150), -5e299, 1e-15);
    assert_true(isfinite(dpa_log_ndtr(-1.5e154)));
    /* x = 40: Phibar = 3.7e-350 is below the smallest subnormal, so the
     * exact result rounds to -0; anything in [-tiny, 0] is right, NaN not. */
    double r40 = dpa_log_ndtr(40.0);
    assert_false(isnan(r40));
    assert_true(r40 <= 0.0 && r40 >= -1e-320);
    /* a subnormal -Phibar(38) = -2.9e-316 is still returned, not 0 */
    assert_true(dpa_log_ndtr(38.0) < 0.0 && dpa_log_ndtr(38.0) > -1e-315);
    /* limits */
    assert_true(dpa_log_ndtr(INFINITY) == 0.0);
    assert_true(dpa_log_ndtr(-INFINITY) == -INFINITY);
    assert_true(isnan(dpa_log_ndtr(NAN)));
}

static void test_log_ndtr_c_and_ndtr(void **state)
{
    (void)state;
    ASSERT_REL(dpa_log_ndtr_c(1.0), -1.8410216450092635058, 1e-15);
    ASSERT_REL(dpa_log_ndtr_c(38.0), -726.5572160188201301, 1e-15);
    ASSERT_REL(dpa_log_ndtr_c(-5.0), -2.8665161296376359338e-7, 1e-15);
    ASSERT_REL(dpa_ndtr(-1.0), 0.15865525393145705141, 1e-15);
    ASSERT_REL(dpa_ndtr(-37.0), 5.7255712225245768227e-300, 1e-15);    /* mpmath */
    ASSERT_REL(dpa_ndtr(0.0), 0.5, 0.0);
    assert_true(dpa_ndtr(-INFINITY) == 0.0);
    assert_true(dpa_ndtr(INFINITY) == 1.0);
}

/* Continuity at each switch point: the values at the adjacent doubles on
 * either side differ by less than 1e-13 relative (the exact change across
 * one ulp is ~1e-16 relative or less). */
static void check_continuous_at(double t)
{
    double lo = nextafter(t, -INFINITY), hi = nextafter(t, INFINITY);
    double flo = dpa_log_ndtr(lo), ft = dpa_log_ndtr(t), fhi = dpa_log_ndtr(hi);
    ASSERT_REL(flo, ft, 1e-13);
    ASSERT_REL(fhi, ft, 1e-13);
    assert_true(flo <= ft && ft <= fhi);   /* monotone across the switch */
    /* and a little further out, against the exact derivative phi/Phi */
    for (double h = 1e-9; h <= 1e-3; h *= 1e3) {
        double d = exp(-0.5 * t * t - 0.5 * LOG_2PI - ft);   /* d/dx log Phi */
        double approx_lo = ft - d * h, approx_hi = ft + d * h;
        double curv = (1.0 + fabs(t)) * (1.0 + fabs(t)) * h * h;  /* 2nd order */
        ASSERT_ABS(dpa_log_ndtr(t - h), approx_lo, 1e-14 * fabs(ft) + curv);
        ASSERT_ABS(dpa_log_ndtr(t + h), approx_hi, 1e-14 * fabs(ft) + curv);
    }
}

static void test_log_ndtr_continuity(void **state)
{
    (void)state;
    check_continuous_at(0.0);     /* log(erfc) | log1p(-Phibar) */
    check_continuous_at(-20.0);   /* asymptotic series | log(erfc) */
    /* sweep across the asymptotic switch: the second difference must match
     * h^2 (log Phi)'' = -h^2 r (x + r), r = phi/Phi.  Rounding of the three
     * values (|f| ~ 204, ~4e-16 relative) allows ~3e-13; a jump of 1e-13
     * relative (2e-11 absolute) at the switch would fail by far. */
    double h = 1e-3;
    for (double x = -20.01; x < -19.99; x += 0.0013) {
        double f0 = dpa_log_ndtr(x - h), f1 = dpa_log_ndtr(x), f2 = dpa_log_ndtr(x + h);
        double r = exp(-0.5 * x * x - 0.5 * LOG_2PI - f1);
        ASSERT_ABS(f0 - 2 * f1 + f2, -h * h * r * (x + r), 6e-13);
    }
}

/* Phi(ndtri(p)) == p, checked in log space (well conditioned: 1e-15) and
 * in p space (conditioning x^2 eps: the ulp of x moves Phi by |x| phi/Phi
 * * ulp(x) ~ x^2 * 1.1e-16 relative). */
static void check_round_trip(double p)
{
    double x = dpa_ndtri(p);
    assert_true(isfinite(x));
    double tol = 4e-16 * (1.0 + x * x);
    if (p > 0.5) {
        /* upper tail: log Phi ~ -Phibar, so the relative sensitivity to the
         * rounding of x is that of Phibar, x^2 eps */
        ASSERT_REL(dpa_log_ndtr(x), log(p), tol);
        ASSERT_ABS(dpa_ndtr(x), p, tol * (1.0 - p) + DBL_EPSILON);
    } else {
        ASSERT_REL(dpa_log_ndtr(x), log(p), 1e-15);
        ASSERT_REL(dpa_ndtr(x), p, tol);
    }
}

static void test_ndtri(void **state)
{
    (void)state;
    const double ps[] = { 1e-300, 1e-20, 1e-5, 0.3, 0.5, 0.9, 1.0 - 1e-12 };
    for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++)
        check_round_trip(ps[i]);
    ASSERT_REL(dpa_ndtri(0.975), 1.959963984540054, 1e-15);
    /* mpmath at the exact doubles (0.975 as a double is 0.975 - 2.2e-17,
     * which moves the quantile by -3.8e-16 from 1.95996398454005424) */
    ASSERT_REL(dpa_ndtri(0.975), 1.9599639845400538556, 2e-16);
    ASSERT_REL(dpa_ndtri(1e-20), -9.2623400897984075796, 2e-16);
    ASSERT_REL(dpa_ndtri(1e-5), -4.2648907939228246102, 2e-16);
    ASSERT_REL(dpa_ndtri(0.3), -0.52440051270804081597, 2e-16);
    ASSERT_REL(dpa_ndtri(0.9), 1.2815515655446005935, 2e-16);
    assert_true(dpa_ndtri(0.5) == 0.0);
    /* relative accuracy right next to 1/2 (x ~ -2.5e-16 * sqrt(2 pi)) */
    double pn = nextafter(0.5, 0.0);
    ASSERT_REL(dpa_ndtri(pn), -(0.5 - pn) * 2.50662827463100050242, 1e-15); /* sqrt(2 pi) */
    /* subnormal p */
    double xs = dpa_ndtri(4.9406564584124654e-324);
    assert_true(isfinite(xs) && xs < -38.0);
    ASSERT_REL(dpa_log_ndtr(xs), log(4.9406564584124654e-324), 1e-15);
    /* symmetry */
    ASSERT_REL(dpa_ndtri(0.25), -dpa_ndtri(0.75), 1e-16);
    assert_true(dpa_ndtri(0.0) == -INFINITY);
    assert_true(dpa_ndtri(1.0) == INFINITY);
    assert_true(isnan(dpa_ndtri(-0.1)));
    assert_true(isnan(dpa_ndtri(1.1)));
    assert_true(isnan(dpa_ndtri(NAN)));
}

static void test_ndtri_log(void **state)
{
    (void)state;
    /* logp = -1e4: mpmath root of log Phi(x) = -1e4 */
    double x = dpa_ndtri_log(-1e4);
    ASSERT_REL(x, -141.3798398731271637, 1e-15);
    ASSERT_REL(dpa_log_ndtr(x), -1e4, 1e-15);
    /* vs the leading asymptotic inversion (its own error is O(log t / t^1.5)) */
    double t = 1e4;
    double xa = -sqrt(2 * t - log(2 * t) - LOG_2PI);
    ASSERT_REL(x, xa, 1e-6);
    /* p underflows (e^-800 = 3.6e-348): mpmath */
    ASSERT_REL(dpa_ndtri_log(-800.0), -39.884694838256677568, 1e-15);
    ASSERT_REL(dpa_ndtri_log(-1e6), -1414.207782991017327, 1e-15);
    /* far out: the residual in log space is at rounding level */
    double xf = dpa_ndtri_log(-1e300);
    assert_true(isfinite(xf) && xf < 0.0);
    ASSERT_REL(dpa_log_ndtr(xf), -1e300, 1e-15);
    double xm = dpa_ndtri_log(-DBL_MAX);
    assert_true(isfinite(xm) && xm < -1e154);
    /* p near 1 through the complement -expm1(logp) */
    ASSERT_REL(dpa_ndtri_log(log(0.975)), 1.9599639845400538556, 1e-15);
    ASSERT_REL(dpa_ndtri_log(-1e-20), 9.2623400897984075796, 1e-15);      /* mpmath */
    /* agreement with dpa_ndtri in the body */
    const double ps[] = { 1e-300, 1e-20, 1e-5, 0.3, 0.45 };
    for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++)
        ASSERT_REL(dpa_ndtri_log(log(ps[i])), dpa_ndtri(ps[i]), 1e-15);
    ASSERT_ABS(dpa_ndtri_log(-LN2), 0.0, 1e-16);
    assert_true(dpa_ndtri_log(0.0) == INFINITY);
    assert_true(dpa_ndtri_log(-INFINITY) == -INFINITY);
    assert_true(isnan(dpa_ndtri_log(0.5)));
    assert_true(isnan(dpa_ndtri_log(NAN)));
}

/* ------------------------------------------------------------------ */
/* root finding */

static double cube_minus_2(double x, void *ctx)
{
    int *calls = ctx;
    if (calls)
        (*calls)++;
    return x * x * x - 2.0;
}

static double two_minus_cube(double x, void *ctx)
{
    (void)ctx;
    return 2.0 - x * x * x;
}

static double nan_fn(double x, void *ctx)
{
    (void)x;
    (void)ctx;
    return NAN;
}

static double nan_above(double x, void *ctx)
{
    (void)ctx;
    return x > 1.2 ? NAN : x - 1.5;   /* f(1) < 0, f(2) NaN */
}

static double nan_inside(double x, void *ctx)
{
    (void)ctx;
    if (x > 1.2 && x < 1.8)
        return NAN;
    return x - 1.5;
}

static double identity(double x, void *ctx)
{
    (void)ctx;
    return x;
}

static double three_roots(double x, void *ctx)
{
    (void)ctx;
    return (x - 1.0) * (x - 5.0) * (x - 6.0);
}

static double positive(double x, void *ctx)
{
    (void)ctx;
    return x * x + 1.0;
}

static double zero_on_grid(double x, void *ctx)
{
    (void)ctx;
    return x - 0.75;   /* 0.75 = 0.25 + 0.5: hit exactly by the scan */
}

static void test_bisect(void **state)
{
    (void)state;
    const double root = cbrt(2.0);
    double lo, hi;
    int calls = 0;
    assert_int_equal(dpa_bisect(cube_minus_2, &calls, 1.0, 2.0, 0.0, 1e-15, &lo, &hi), DPA_OK);
    assert_true(hi - lo <= 1e-15 * lo);
    /* the bracket holds the root, or is an exact zero of the computed f */
    assert_true((lo <= root && root <= hi) || (lo == hi && cube_minus_2(lo, NULL) == 0.0));
    ASSERT_REL(lo, root, 2e-15);
    ASSERT_REL(hi, root, 2e-15);
    /* signs of f(1), f(2) kept, or an exact zero returned as both ends
     * (num.h: the zero convention; Brent can land on cbrt(2)^3 == 2) */
    assert_true(cube_minus_2(lo, NULL) < 0.0 || (lo == hi && cube_minus_2(lo, NULL) == 0.0));
    assert_true(cube_minus_2(hi, NULL) > 0.0 || (lo == hi && cube_minus_2(hi, NULL) == 0.0));
    assert_true(calls < 60);
    /* reversed sign: f(lo) > 0 stays on the low side */
    assert_int_equal(dpa_bisect(two_minus_cube, NULL, 1.0, 2.0, 0.0, 1e-15, &lo, &hi), DPA_OK);
    assert_true(two_minus_cube(lo, NULL) > 0.0 || (lo == hi && two_minus_cube(lo, NULL) == 0.0));
    assert_true(two_minus_cube(hi, NULL) < 0.0 || (lo == hi && two_minus_cube(hi, NULL) == 0.0));
    ASSERT_REL(lo, root, 2e-15);
    /* absolute tolerance */
    assert_int_equal(dpa_bisect(cube_minus_2, NULL, 0.0, 4.0, 1e-6, 0.0, &lo, &hi), DPA_OK);
    assert_true(hi - lo <= 1e-6 && ((lo <= root && root <= hi) || (lo == hi && cube_minus_2(lo, NULL) == 0.0)));
    /* zero at an end: that point is both ends */
    assert_int_equal(dpa_bisect(identity, NULL, 0.0, 1.0, 0.0, 0.0, &lo, &hi), DPA_OK);
    assert_true(lo == 0.0 && hi == 0.0);
    /* zero hit at a midpoint */
    assert_int_equal(dpa_bisect(identity, NULL, -1.0, 1.0, 0.0, 0.0, &lo, &hi), DPA_OK);
    assert_true(lo == 0.0 && hi == 0.0);
    /* tolerance 0: stops at adjacent doubles or at an exact zero (x^3 - 2
     * rounds to 0 at the double nearest cbrt 2) */
    assert_int_equal(dpa_bisect(cube_minus_2, NULL, 1.0, 2.0, 0.0, 0.0, &lo, &hi), DPA_OK);
    if (lo == hi)
        assert_true(cube_minus_2(lo, NULL) == 0.0);
    else
        assert_true(nextafter(lo, INFINITY) == hi && cube_minus_2(lo, NULL) < 0.0 &&
                    cube_minus_2(hi, NULL) > 0.0);
    assert_int_equal(dpa_bisect(cube_minus_2, NULL, 1.0, 2.0, 0.0, 0.0, &lo, &hi), DPA_OK);
    /* within one ulp (2.3e-16 relative here): an exact zero of the computed
     * x^3 - 2 may sit an ulp from cbrt's result */
    ASSERT_REL(lo, root, 2.3e-16);
    /* failures */
    assert_int_equal(dpa_bisect(nan_fn, NULL, 1.0, 2.0, 0.0, 1e-15, &lo, &hi), DPA_ENUMERIC);
    assert_int_equal(dpa_bisect(nan_above, NULL, 1.0, 2.0, 0.0, 1e-15, &lo, &hi), DPA_ENUMERIC);
    assert_int_equal(dpa_bisect(nan_inside, NULL, 1.0, 2.0, 0.0, 1e-15, &lo, &hi), DPA_ENUMERIC);
    assert_int_equal(dpa_bisect(cube_minus_2, NULL, 2.0, 3.0, 0.0, 1e-15, &lo, &hi), DPA_ENUMERIC);
    assert_int_equal(dpa_bisect(cube_minus_2, NULL, 2.0, 1.0, 0.0, 1e-15, &lo, &hi), DPA_EINVAL);
}

static void test_scan_bracket(void **state)
{
    (void)state;
    double a, b, lo, hi;
    /* scanning up from 0 must stop at the first root (1), not 5 or 6 */
    assert_int_equal(dpa_scan_bracket(three_roots, NULL, 0.0, 0.3, +1, 0.0, 100.0, &a, &b),
                     DPA_OK);
    assert_true(a < b);
    assert_true(a < 1.0 && 1.0 < b && b < 5.0);
    assert_true(three_roots(a, NULL) * three_roots(b, NULL) < 0.0);
    assert_int_equal(dpa_bisect(three_roots, NULL, a, b, 0.0, 1e-14, &lo, &hi), DPA_OK);
    ASSERT_REL(lo, 1.0, 2e-14);
    ASSERT_REL(hi, 1.0, 2e-14);
    /* scanning down from 10 finds 6 first */
    assert_int_equal(dpa_scan_bracket(three_roots, NULL, 10.0, 0.3, -1, 0.0, 10.0, &a, &b),
                     DPA_OK);
    assert_true(a < b && 5.0 < a && a < 6.0 && 6.0 < b);
    /* the range limit is evaluated: a root right at the end is found */
    assert_int_equal(dpa_scan_bracket(three_roots, NULL, 0.0, 0.3, +1, 0.0, 1.0, &a, &b),
                     DPA_OK);
    assert_true(b == 1.0);
    /* an exact zero on the grid (0.25, 0.75, ...) closes the bracket */
    assert_int_equal(dpa_scan_bracket(zero_on_grid, NULL, 0.0, 0.25, +1, 0.0, 10.0, &a, &b),
                     DPA_OK);
    assert_true(a == 0.25 && b == 0.75);
    /* no sign change within the range */
    assert_int_equal(dpa_scan_bracket(positive, NULL, 0.0, 0.3, +1, 0.0, 1e6, &a, &b),
                     DPA_ENUMERIC);
    assert_int_equal(dpa_scan_bracket(three_roots, NULL, 0.0, 0.3, +1, 0.0, 0.9, &a, &b),
                     DPA_ENUMERIC);
    assert_int_equal(dpa_scan_bracket(nan_fn, NULL, 0.0, 0.3, +1, 0.0, 10.0, &a, &b),
                     DPA_ENUMERIC);
    assert_int_equal(dpa_scan_bracket(three_roots, NULL, 0.0, 0.3, 0, 0.0, 10.0, &a, &b),
                     DPA_EINVAL);
    assert_int_equal(dpa_scan_bracket(three_roots, NULL, 0.0, -1.0, 1, 0.0, 10.0, &a, &b),
                     DPA_EINVAL);
}

/* ------------------------------------------------------------------ */
/* GSL guard */

static int handler_calls;   /* test-only: counts calls of the handler below */

static void counting_handler(const char *reason, const char *file, int line, int gsl_errno)
{
    (void)reason;
    (void)file;
    (void)line;
    (void)gsl_errno;
    handler_calls++;
}

static void test_gsl_guard(void **state)
{
    (void)state;
    gsl_sf_result res;
    gsl_error_handler_t *orig = gsl_set_error_handler(counting_handler);
    handler_calls = 0;

    dpa_gsl_guard g = dpa_gsl_guard_begin();
    /* inside: errors are returned, the handler is not called */
    assert_int_equal(gsl_sf_log_e(-1.0, &res), GSL_EDOM);
    assert_int_equal(handler_calls, 0);
    dpa_gsl_guard inner = dpa_gsl_guard_begin();   /* nesting */
    dpa_gsl_guard_end(inner);
    assert_int_equal(gsl_sf_log_e(-1.0, &res), GSL_EDOM);
    assert_int_equal(handler_calls, 0);
    dpa_gsl_guard_end(g);

    /* after: the caller's handler is back */
    assert_int_equal(gsl_sf_log_e(-1.0, &res), GSL_EDOM);
    assert_int_equal(handler_calls, 1);
    gsl_error_handler_t *now = gsl_set_error_handler(orig);
    assert_true(now == counting_handler);

    /* the normal-distribution code uses the guard: handler untouched */
    gsl_set_error_handler(counting_handler);
    (void)dpa_ndtri(1e-10);
    now = gsl_set_error_handler(orig);
    assert_true(now == counting_handler);
}

/* ------------------------------------------------------------------ */
/* FFT */

static double lcg_uniform(uint64_t *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(*s >> 11) / 9007199254740992.0 - 0.5;
}

/* r2c against the naive DFT, then c2r(r2c(x)) = n x. */
static void check_fft_round_trip(dpa_fft *f, size_t n, uint64_t seed)
{
    double *x = dpa_fft_alloc_real(n), *y = dpa_fft_alloc_real(n);
    fftw_complex *c = dpa_fft_alloc_complex(n / 2 + 1);
    fftw_complex *c2 = dpa_fft_alloc_complex(n / 2 + 1);
    assert_non_null(x);
    assert_non_null(y);
    assert_non_null(c);
    assert_non_null(c2);
    double sumabs = 0.0;
    for (size_t i = 0; i < n; i++) {
        x[i] = lcg_uniform(&seed);
        sumabs += fabs(x[i]);
    }
    double x0 = x[0], xl = x[n - 1];
    assert_int_equal(dpa_fft_r2c(f, n, x, c), DPA_OK);
    assert_true(x[0] == x0 && x[n - 1] == xl);    /* input preserved */
    /* naive DFT at a few frequencies (all of them for small n) */
    for (size_t j = 0; j <= n / 2; j += (n <= 64 ? 1 : 37)) {
        long double re = 0, im = 0;
        for (size_t m = 0; m < n; m++) {
            long double ang = -2.0L * 3.14159265358979323846264338327950288L *
                              (long double)((j * m) % n) / (long double)n;
            re += x[m] * cosl(ang);
            im += x[m] * sinl(ang);
        }
        ASSERT_ABS(creal(c[j]), (double)re, 1e-14 * sumabs);
        ASSERT_ABS(cimag(c[j]), (double)im, 1e-14 * sumabs);
    }
    memcpy(c2, c, (n / 2 + 1) * sizeof(fftw_complex));
    assert_int_equal(dpa_fft_c2r(f, n, c, y), DPA_OK);
    for (size_t i = 0; i < n; i++)
        ASSERT_ABS(y[i], (double)n * x[i], 1e-12 * (double)n * 0.5);
    /* same n again: cached plan, identical results */
    fftw_complex *c3 = dpa_fft_alloc_complex(n / 2 + 1);
    double *y2 = dpa_fft_alloc_real(n);
    assert_int_equal(dpa_fft_r2c(f, n, x, c3), DPA_OK);
    assert_memory_equal(c3, c2, (n / 2 + 1) * sizeof(fftw_complex));
    assert_int_equal(dpa_fft_c2r(f, n, c3, y2), DPA_OK);
    assert_memory_equal(y2, y, n * sizeof(double));
    fftw_free(x);
    fftw_free(y);
    fftw_free(y2);
    fftw_free(c);
    fftw_free(c2);
    fftw_free(c3);
}

static void test_fft_round_trip(void **state)
{
    (void)state;
    dpa_fft *f = dpa_fft_new(NULL);
    assert_non_null(f);
    check_fft_round_trip(f, 48, 1);
    check_fft_round_trip(f, 1000, 2);
    check_fft_round_trip(f, 48, 3);       /* back to a cached length */
    /* more lengths than cache slots: entries are replaced, still correct */
    for (size_t n = 2; n <= 24; n += 2)
        check_fft_round_trip(f, n, n);
    check_fft_round_trip(f, 1000, 4);
    check_fft_round_trip(f, 7, 5);        /* odd lengths work too */
    /* aliasing in/out is refused (plans are out of place) */
    double *buf = dpa_fft_alloc_real(64);
    assert_int_equal(dpa_fft_r2c(f, 16, buf, (fftw_complex *)buf), DPA_EINVAL);
    assert_int_equal(dpa_fft_r2c(f, 0, buf, (fftw_complex *)(buf + 32)), DPA_EINVAL);
    fftw_free(buf);
    dpa_fft_free(f);
    dpa_fft_free(NULL);
}

static int is_7smooth(size_t m)
{
    const size_t pr[4] = { 2, 3, 5, 7 };
    for (int i = 0; i < 4; i++)
        while (m % pr[i] == 0)
            m /= pr[i];
    return m == 1;
}

static void test_fft_good_size(void **state)
{
    (void)state;
    assert_true(dpa_fft_good_size(1000) == 1000);
    assert_true(dpa_fft_good_size(1021) == 1024);
    assert_true(dpa_fft_good_size(1025) == 1050);   /* 2 * 3 * 5^2 * 7 */
    assert_true(dpa_fft_good_size(1) == 2);
    assert_true(dpa_fft_good_size(0) == 2);
    assert_true(dpa_fft_good_size(2) == 2);
    assert_true(dpa_fft_good_size(97) == 98);       /* 2 * 7^2 */
    /* brute force on 1..5000 */
    for (size_t n = 1; n <= 5000; n++) {
        size_t want = n < 2 ? 2 : n;
        while (want % 2 != 0 || !is_7smooth(want))
            want++;
        assert_true(dpa_fft_good_size(n) == want);
    }
    if (SIZE_MAX > ((uint64_t)1 << 41)) {
        size_t lim = (size_t)((uint64_t)1 << 40);
        assert_true(dpa_fft_good_size(lim) == lim);
        assert_true(dpa_fft_good_size(lim + 1) == 0);
        size_t big = dpa_fft_good_size(lim - 12345);
        assert_true(big >= lim - 12345 && big <= lim && big % 2 == 0 && is_7smooth(big));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_log_add_exp),
        cmocka_unit_test(test_log_sub_exp),
        cmocka_unit_test(test_log1mexp),
        cmocka_unit_test(test_log_sum_exp),
        cmocka_unit_test(test_log_ndtr_values),
        cmocka_unit_test(test_log_ndtr_c_and_ndtr),
        cmocka_unit_test(test_log_ndtr_continuity),
        cmocka_unit_test(test_ndtri),
        cmocka_unit_test(test_ndtri_log),
        cmocka_unit_test(test_bisect),
        cmocka_unit_test(test_scan_bracket),
        cmocka_unit_test(test_gsl_guard),
        cmocka_unit_test(test_fft_round_trip),
        cmocka_unit_test(test_fft_good_size),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

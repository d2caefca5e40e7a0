/* The exact Gaussian method (src/exact/gaussian.c) against an independent
 * high-precision evaluation.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The reference evaluates the closed form as written (GDP Cor 2.13),
 *   delta(eps) = Phi(xa) - e^eps Phi(xb),  xa = (mu^2/2 - eps)/mu,  xb = xa - mu,
 * with MPFR (correctly rounded operations, exponent range widened to MPFR's
 * maximum) at a working precision raised until the cancellation leaves more
 * than 230 correct bits: a different formula from the library's (which
 * never subtracts nearly equal terms), evaluated with no double rounding.
 * Where xa < -1e4 (delta < Phi(-1e4) < e^{-5e7}) the reference is "below
 * DBL_TRUE_MIN" and the bounds must be [0, DBL_TRUE_MIN].
 *
 * The sweep: 65 values of mu, 10^(k/4) for k = -32..32 (1e-8 to 1e8), and for
 * each about 150 values of eps: +-0, subnormals, a logarithmic grid up to
 * 1e300 and DBL_MAX, and the points where xa = z for z from -40 to 40 (the
 * transition of delta), with both signs.  Checks at every point:
 *   - order: 0 <= lower <= upper <= 1, nothing NaN;
 *   - the bracket: lower <= reference <= upper (to 2^-200 relative);
 *   - width: upper - lower <= 4e-12 * reference + 8 DBL_TRUE_MIN (the
 *     measured worst case is below 2e-12 (printed); about 8u |xa| (|xa| + 2),
 *     the condition number of delta in eps, is the floor);
 *   - monotonicity in eps: both bounds are non-increasing along the sorted
 *     eps values (which are at least 2^-30 relative apart), up to 64u
 *     relative (round-off: near eps = 0 the truth moves by less than that).
 * A second sweep draws 7000 pseudo-random (mu, eps) (fixed seed) between the
 * grid's points, 1000 of them with mu down to 1e-320 (subnormal), with the
 * same checks except monotonicity.
 * The eps queries: for the same mu and delta from DBL_TRUE_MIN to 0.9, the
 * reference delta at the returned upper bound is <= delta, at the returned
 * lower bound > delta, and the bracket is narrow (1e-11 relative for normal
 * deltas; for subnormal ones, where delta itself has few digits, 0.06 mu).
 * dpa_exact_total_mu is checked against MPFR sums.
 * The budget EPS_NDTR = 16u that exact.c allots to dpa_ndtr is checked too
 * (the measured error must stay below half of it). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <mpfr.h>
#include "exact/exact.h"
#include "num/num.h"

#define U DPA_UNIT_ROUNDOFF
#define WIDTH_TOL 4e-12

static int failures;
#define FAILF(...)                      \
    do {                                \
        if (failures < 40) {            \
            printf("FAIL: ");           \
            printf(__VA_ARGS__);        \
            printf("\n");               \
        }                               \
        failures++;                     \
    } while (0)

static void wide_exponents(void)
{
    mpfr_set_emin(mpfr_get_emin_min());
    mpfr_set_emax(mpfr_get_emax_max());
}

/* Phi(x) = erfc(-x / sqrt 2) / 2 at the precision of out */
static void mp_ndtr(mpfr_t out, const mpfr_t x)
{
    mpfr_t t;
    mpfr_init2(t, mpfr_get_prec(out) + 32);
    mpfr_sqrt_ui(t, 2, MPFR_RNDN);
    mpfr_div(t, x, t, MPFR_RNDN);
    mpfr_neg(t, t, MPFR_RNDN);
    mpfr_erfc(out, t, MPFR_RNDN);
    mpfr_div_2ui(out, out, 1, MPFR_RNDN);
    mpfr_clear(t);
}

/* The reference delta(eps) into ref (precision 256).  Returns 1 when
 * delta < Phi(-1e4) (then ref is unset), 0 otherwise. */
static int ref_delta(double mu, double eps, mpfr_t ref)
{
    mpfr_t m, e, xa, xb, a, b;
    /* xa < -1e4 exactly when eps > mu^2/2 + 1e4 mu; decided in MPFR below */
    for (mpfr_prec_t p = 320;; p *= 2) {
        mpfr_inits2(p, m, e, xa, xb, a, b, (mpfr_ptr)0);
        mpfr_set_d(m, mu, MPFR_RNDN);       /* exact */
        mpfr_set_d(e, eps, MPFR_RNDN);      /* exact */
        mpfr_sqr(xa, m, MPFR_RNDN);
        mpfr_div_2ui(xa, xa, 1, MPFR_RNDN); /* mu^2/2 */
        mpfr_add(xb, xa, e, MPFR_RNDN);     /* mu^2/2 + eps */
        mpfr_sub(xa, xa, e, MPFR_RNDN);     /* mu^2/2 - eps */
        mpfr_div(xa, xa, m, MPFR_RNDN);
        mpfr_div(xb, xb, m, MPFR_RNDN);
        mpfr_neg(xb, xb, MPFR_RNDN);
        if (mpfr_cmp_si(xa, -10000) < 0) {
            mpfr_clears(m, e, xa, xb, a, b, (mpfr_ptr)0);
            return 1;
        }
        mp_ndtr(a, xa);
        mp_ndtr(b, xb);
        mpfr_exp(e, e, MPFR_RNDN);          /* 0 for eps < -3e18: fine */
        mpfr_mul(b, b, e, MPFR_RNDN);
        mpfr_sub(e, a, b, MPFR_RNDN);
        /* cancelled bits: the exponent of a minus that of the difference */
        long lost = mpfr_sgn(e) > 0 ? (long)mpfr_get_exp(a) - (long)mpfr_get_exp(e) : (long)p;
        if (lost + 230 < (long)p || p >= 65536) {
            mpfr_set(ref, e, MPFR_RNDN);
            mpfr_clears(m, e, xa, xb, a, b, (mpfr_ptr)0);
            return 0;
        }
        mpfr_clears(m, e, xa, xb, a, b, (mpfr_ptr)0);
    }
}

/* lower <= ref <= upper up to 2^-200 relative */
static int brackets(double lo, double up, const mpfr_t ref)
{
    mpfr_t t, slack;
    mpfr_inits2(256, t, slack, (mpfr_ptr)0);
    mpfr_mul_2si(slack, ref, -200, MPFR_RNDN);
    mpfr_add(t, ref, slack, MPFR_RNDN);
    int ok = mpfr_cmp_d(t, lo) >= 0;
    mpfr_sub(t, ref, slack, MPFR_RNDN);
    ok = ok && mpfr_cmp_d(t, up) <= 0;
    mpfr_clears(t, slack, (mpfr_ptr)0);
    return ok;
}

/* monotonicity is checked up to round-off: 64u relative plus 4 subnormal
 * steps (where the true values differ by less than that, e.g. at eps = 0
 * and eps = -1e-300, the two brackets come from different formulas) */
static double grow_mono(double v)
{
    return v * (1 + 64 * U) + 4 * DBL_TRUE_MIN;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* the eps values of the sweep for one mu, sorted, at least 2^-30 apart */
static size_t eps_grid(double mu, double *out, size_t cap)
{
    size_t n = 0;
#define PUT(v) do { if (n < cap) out[n++] = (v); } while (0)
    const double fixed[] = {0.0, DBL_TRUE_MIN, 1e-320, 1e-300, 1e-100, 1e-20, 1e300, DBL_MAX};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
        PUT(fixed[i]);
        if (fixed[i] != 0) PUT(-fixed[i]);
    }
    for (int j = -16; j <= 300; j += 4) {
        PUT(pow(10.0, j));
        PUT(-pow(10.0, j));
    }
    const double z[] = {-40, -38.7, -38, -30, -20, -15, -10.5, -10, -9.5, -7, -5, -3, -2, -1,
                        -0.5, -0.1, 0, 0.1, 0.5, 1, 2, 3, 5, 7, 9.5, 10, 10.5, 15, 20, 30, 38, 38.7, 40};
    for (size_t i = 0; i < sizeof z / sizeof z[0]; i++) {
        double e = mu * (0.5 * mu - z[i]);    /* xa = z (to rounding) */
        if (isfinite(e)) {
            PUT(e);
            PUT(-e);
        }
    }
#undef PUT
    qsort(out, n, sizeof *out, cmp_double);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (m > 0) {
            double a = out[m - 1], b = out[i];
            if (b == a || fabs(b - a) <= 0x1p-30 * fmax(fabs(a), fabs(b))) continue;
        }
        out[m++] = out[i];
    }
    return m;
}

/* order, bracket and width at one point; *worst tracks the widest bracket
 * (relative to the reference) */
static void check_point(double mu, double eps, double lo, double up, mpfr_t ref, mpfr_t w, double *worst,
                        double *worst_mu, double *worst_eps)
{
    if (!(lo >= 0 && lo <= up && up <= 1)) {
        FAILF("mu %.17g eps %.17g: bounds [%.17g, %.17g] out of order", mu, eps, lo, up);
        return;
    }
    if (ref_delta(mu, eps, ref)) {
        if (lo != 0 || up != DBL_TRUE_MIN)
            FAILF("mu %.17g eps %.17g: delta < Phi(-1e4) but bounds [%.17g, %.17g]", mu, eps, lo, up);
        return;
    }
    if (!brackets(lo, up, ref)) {
        FAILF("mu %.17g eps %.17g: [%.17g, %.17g] misses the reference %.20g", mu, eps, lo, up,
              mpfr_get_d(ref, MPFR_RNDN));
        return;
    }
    /* width relative to the reference, beyond 8 subnormal steps (each route
     * moves a subnormal result out by up to 2, the eps < 0 reduction by 2 more) */
    mpfr_set_d(w, up, MPFR_RNDN);
    mpfr_sub_d(w, w, lo, MPFR_RNDN);
    mpfr_sub_d(w, w, 8 * DBL_TRUE_MIN, MPFR_RNDN);
    if (mpfr_sgn(w) <= 0) return;
    mpfr_div(w, w, ref, MPFR_RNDN);
    double rw = mpfr_get_d(w, MPFR_RNDU);
    if (rw > *worst) {
        *worst = rw;
        *worst_mu = mu;
        *worst_eps = eps;
    }
    if (!(rw <= WIDTH_TOL))
        FAILF("mu %.17g eps %.17g: [%.17g, %.17g] is %.3g wide relative to %.20g", mu, eps, lo, up, rw,
              mpfr_get_d(ref, MPFR_RNDN));
}

static void test_delta_sweep(void **state)
{
    (void)state;
    failures = 0;
    wide_exponents();
    mpfr_t ref, w;
    mpfr_inits2(256, ref, w, (mpfr_ptr)0);
    double worst = 0, worst_mu = 0, worst_eps = 0;
    size_t points = 0;
    double eps[512];
    for (int k = -32; k <= 32; k++) {
        double mu = pow(10.0, k / 4.0);
        size_t n = eps_grid(mu, eps, 512);
        double prev_up = INFINITY, prev_lo = INFINITY;
        for (size_t i = 0; i < n; i++) {
            double up, lo;
            dpa_exact_delta(mu, eps[i], &up, &lo);
            points++;
            if (i > 0 && (up > grow_mono(prev_up) || lo > grow_mono(prev_lo)))
                FAILF("mu %.17g eps %.17g: bounds [%.17g, %.17g] above those at the smaller eps %.17g: [%.17g, %.17g]",
                      mu, eps[i], lo, up, eps[i - 1], prev_lo, prev_up);
            prev_up = up;
            prev_lo = lo;
            check_point(mu, eps[i], lo, up, ref, w, &worst, &worst_mu, &worst_eps);
        }
    }
    printf("exact Gaussian delta, grid: %zu points, widest bracket %.3g relative (mu %.4g, eps %.6g)\n", points,
           worst, worst_mu, worst_eps);
    mpfr_clears(ref, w, (mpfr_ptr)0);
    assert_int_equal(failures, 0);
}

/* a fixed pseudo-random sequence in [0, 1) (64-bit LCG, top 53 bits) */
static uint64_t lcg_state = 0x2545F4914F6CDD1Dull;
static double unif(void)
{
    lcg_state = lcg_state * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(lcg_state >> 11) * 0x1p-53;
}

/* Random points between the grid's: mu log-uniform on [1e-8, 1e8] (and,
 * for the last 1000, on [1e-320, 1e-8]), xa
 * uniform on [-42, 42] (every route and both route boundaries, x = -10 and
 * r = 1/2), eps of both signs; and eps log-uniform up to 1e300. */
static void test_delta_random(void **state)
{
    (void)state;
    failures = 0;
    wide_exponents();
    mpfr_t ref, w;
    mpfr_inits2(256, ref, w, (mpfr_ptr)0);
    double worst = 0, worst_mu = 0, worst_eps = 0;
    for (int i = 0; i < 7000; i++) {
        /* the last 1000: mu from 1e-320 (subnormal) to 1e-8 */
        double mu = i < 6000 ? pow(10.0, -8 + 16 * unif()) : pow(10.0, -320 + 312 * unif());
        double eps = i % 3 == 2 ? pow(10.0, -20 + 320 * unif()) : mu * (0.5 * mu - (-42 + 84 * unif()));
        if (i % 2) eps = -eps;
        double up, lo;
        dpa_exact_delta(mu, eps, &up, &lo);
        check_point(mu, eps, lo, up, ref, w, &worst, &worst_mu, &worst_eps);
    }
    printf("exact Gaussian delta, random: 7000 points, widest bracket %.3g relative (mu %.4g, eps %.6g)\n", worst,
           worst_mu, worst_eps);
    mpfr_clears(ref, w, (mpfr_ptr)0);
    assert_int_equal(failures, 0);
}

/* The extreme points of the audit, spelled out. */
static void test_delta_extremes(void **state)
{
    (void)state;
    double up, lo;
    dpa_exact_delta(1.0, 1e300, &up, &lo);
    assert_true(lo == 0 && up == DBL_TRUE_MIN);
    dpa_exact_delta(1.0, -1e300, &up, &lo);
    assert_true(up == 1 && lo >= 1 - 16 * U);
    dpa_exact_delta(1e-8, 1e300, &up, &lo);
    assert_true(lo == 0 && up == DBL_TRUE_MIN);
    dpa_exact_delta(1e8, -1e300, &up, &lo);
    assert_true(up == 1 && lo >= 1 - 16 * U);
    dpa_exact_delta(1e150, 0.0, &up, &lo);
    assert_true(up == 1 && lo >= 1 - 64 * U);
    dpa_exact_delta(1e-300, 0.0, &up, &lo);
    /* delta(0) = erf(mu / (2 sqrt 2)) = mu / sqrt(2 pi) (1 - O(mu^2)) */
    assert_true(lo <= 0.3989422804014327e-300 * (1 + 1e-15) && up >= 0.3989422804014327e-300 * (1 - 1e-15));
    assert_true(up - lo <= 1e-13 * up);
    dpa_exact_delta(1.0, -DBL_MAX, &up, &lo);
    assert_true(up == 1 && lo >= 1 - 16 * U);
    dpa_exact_delta(1.0, DBL_MAX, &up, &lo);
    assert_true(lo == 0 && up == DBL_TRUE_MIN);
    dpa_exact_delta(DBL_TRUE_MIN, DBL_MAX, &up, &lo);
    assert_true(lo == 0 && up == DBL_TRUE_MIN);
    /* xa = 0 exactly at mu = 2^400, eps = mu^2/2: delta = 1/2 - phi(0) R(-mu) */
    dpa_exact_delta(0x1p400, 0x1p799, &up, &lo);
    assert_true(lo <= 0.5 && up >= 0.5 && lo >= 0.5 * (1 - 64 * U));
    dpa_exact_delta(1e9, 5e17 + 3e9, &up, &lo); /* xa = -3 exactly */
    /* mpmath: Phi(-3) - e^eps Phi(-3 - 1e9) = 0.001349898027198246128 */
    assert_true(lo <= 0.0013498980271982461 && up >= 0.0013498980271982461 && up - lo < 1e-13 * up);
    /* subnormal mu (a Gaussian with sigma 1e310 / sensitivity, as a gdp leaf):
     * at eps = 3 mu, xa = -3 - mu/2 and delta ~ mu phi(3) R'(-3) = 3.8e-314,
     * representable; it must not be mistaken for an underflow */
    for (int i = 0; i < 4; i++) {
        double mu = i == 0 ? 1e-310 : i == 1 ? 3e-320 : i == 2 ? 1e-305 : 2e-300;
        double x = -3, e = mu * (0.5 * mu - x);
        dpa_exact_delta(mu, e, &up, &lo);
        /* mpmath: phi(-3) = 0.0044318484119380072, R'(-3) = 1 - 3 R(-3) =
         * 0.0862291038696901128; delta = mu phi(-3) R'(-3) (1 + O(mu)) */
        double approx = mu * 0.0044318484119380072 * 0.0862291038696901128;
        if (!(lo <= approx * (1 + 1e-6) + DBL_TRUE_MIN && up >= approx * (1 - 1e-6) - DBL_TRUE_MIN &&
              up <= approx * (1 + 1e-6) + 4 * DBL_TRUE_MIN))
            fail_msg("mu %g eps %g: [%g, %g], expected about %g", mu, e, lo, up, approx);
    }
}

static void test_epsilon_sweep(void **state)
{
    (void)state;
    failures = 0;
    wide_exponents();
    mpfr_t ref;
    mpfr_init2(ref, 256);
    const double deltas[] = {DBL_TRUE_MIN, 1e-320, 1e-300, 1e-100, 1e-10, 1e-5, 0.1, 0.5, 0.9};
    double worst = 0;
    for (int k = -32; k <= 32; k += 2) {
        double mu = pow(10.0, k / 4.0);
        for (size_t j = 0; j < sizeof deltas / sizeof deltas[0]; j++) {
            double d = deltas[j], up, lo;
            dpa_exact_epsilon(mu, d, &up, &lo);
            if (!(lo >= 0 && lo <= up && isfinite(up))) {
                FAILF("mu %.17g delta %g: eps bracket [%.17g, %.17g]", mu, d, lo, up);
                continue;
            }
            /* the true delta at up is <= d, at lo (if > 0) > d */
            if (!ref_delta(mu, up, ref) && mpfr_cmp_d(ref, d) > 0)
                FAILF("mu %.17g delta %g: eps upper %.17g but delta there is %.20g", mu, d, up, mpfr_get_d(ref, MPFR_RNDN));
            if (lo > 0 && (ref_delta(mu, lo, ref) || mpfr_cmp_d(ref, d) <= 0))
                FAILF("mu %.17g delta %g: eps lower %.17g but delta there is <= delta", mu, d, lo);
            double rw = (up - lo) / fmax(up, 1e-300);
            if (rw > worst && d >= DBL_MIN) worst = rw;
            /* subnormal targets: the bounds resolve delta only to a few
             * subnormal steps (a factor ~4), and log delta moves by |xa|/mu ~
             * 38/mu per unit of eps: about 0.04 mu of eps */
            if (d < DBL_MIN && up - lo > 0.06 * fmax(mu, 1.0) + 1e-9 * up)
                FAILF("mu %.17g delta %g: eps bracket [%.17g, %.17g] too wide", mu, d, lo, up);
            /* the search stops at 1e-13 relative; the delta bracket adds
             * its width divided by the slope, well below that here */
            if (up > 0 && d >= DBL_MIN && !(rw <= 1e-11))
                FAILF("mu %.17g delta %g: eps bracket [%.17g, %.17g] is %.3g wide", mu, d, lo, up, rw);
        }
    }
    printf("exact Gaussian epsilon: widest bracket %.3g relative\n", worst);
    mpfr_clear(ref);
    assert_int_equal(failures, 0);
}

/* exact.c budgets dpa_ndtr at 16u relative where it uses it (x > -10):
 * measure it against MPFR on [-10, 10] and require half of that. */
static void test_ndtr_budget(void **state)
{
    (void)state;
    wide_exponents();
    mpfr_t x, r, g;
    mpfr_inits2(256, x, r, g, (mpfr_ptr)0);
    double worst = 0, wx = 0;
    for (int i = 0; i <= 4000; i++) {
        double xv = -10 + i * 0.005 + 0.00123 * sin(i);   /* irregular doubles */
        if (xv <= -10) continue;
        mpfr_set_d(x, xv, MPFR_RNDN);
        mp_ndtr(r, x);
        mpfr_sub_d(g, r, dpa_ndtr(xv), MPFR_RNDN);
        mpfr_div(g, g, r, MPFR_RNDN);
        double e = fabs(mpfr_get_d(g, MPFR_RNDN)) / U;
        if (e > worst) {
            worst = e;
            wx = xv;
        }
    }
    printf("dpa_ndtr on (-10, 10]: largest relative error %.2f u (at x = %.6g)\n", worst, wx);
    assert_true(worst <= 8);
    mpfr_clears(x, r, g, (mpfr_ptr)0);
}

/* dpa_exact_total_mu against MPFR: sqrt(sum k mu^2) of the given doubles
 * (mu_rel = 0) lies in the enclosure, which is narrow; with mu_rel = u the
 * enclosure also holds sqrt(sum k (mu (1 +- u))^2).  Values from 1e-320
 * (subnormal squares) to 1e300 (overflowing squares), counts to 1e15. */
static void test_total_mu(void **state)
{
    (void)state;
    failures = 0;
    mpfr_t s, t, m;
    mpfr_inits2(400, s, t, m, (mpfr_ptr)0);
    double k[8], mu[8];
    for (int c = 0; c < 3000; c++) {
        size_t n = 1 + c % 8;
        double scale = pow(10.0, -320 + 620 * unif());
        for (size_t i = 0; i < n; i++) {
            k[i] = floor(pow(10.0, 15 * unif() * unif()));
            mu[i] = scale * pow(10.0, -20 * unif() * unif());
        }
        if (c % 5 == 0) k[0] = 0;
        for (int r = 0; r < 2; r++) {
            double rel = r ? U : 0, lo, hi;
            dpa_exact_total_mu(k, mu, n, rel, &lo, &hi);
            for (int side = -1; side <= 1; side += 2) {
                mpfr_set_zero(s, 1);
                for (size_t i = 0; i < n; i++) {
                    mpfr_set_d(m, mu[i], MPFR_RNDN);
                    mpfr_mul_d(t, m, rel * side, MPFR_RNDN);
                    mpfr_add(m, m, t, MPFR_RNDN);
                    mpfr_sqr(m, m, MPFR_RNDN);
                    mpfr_mul_d(m, m, k[i], MPFR_RNDN);
                    mpfr_add(s, s, m, MPFR_RNDN);
                }
                mpfr_sqrt(s, s, MPFR_RNDN);
                if (mpfr_cmp_d(s, lo) < 0 || mpfr_cmp_d(s, hi) > 0)
                    FAILF("total mu case %d (rel %g): [%.17g, %.17g] misses %.17g", c, rel, lo, hi,
                          mpfr_get_d(s, MPFR_RNDN));
                else if (hi < 1e300 && lo > 1e-300 && (hi - lo) > (2 * rel + (2.0 * n + 40) * U) * hi)
                    FAILF("total mu case %d: [%.17g, %.17g] too wide", c, lo, hi);
            }
        }
    }
    double one = 1, z = 0, lo, hi;
    dpa_exact_total_mu(&one, &z, 1, 0, &lo, &hi);
    assert_true(lo == 0 && hi == 0);
    double inf = INFINITY;
    dpa_exact_total_mu(&one, &inf, 1, U, &lo, &hi);
    assert_true(isinf(lo) && isinf(hi));
    mpfr_clears(s, t, m, (mpfr_ptr)0);
    assert_int_equal(failures, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ndtr_budget),
        cmocka_unit_test(test_delta_extremes),
        cmocka_unit_test(test_delta_sweep),
        cmocka_unit_test(test_delta_random),
        cmocka_unit_test(test_epsilon_sweep),
        cmocka_unit_test(test_total_mu),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

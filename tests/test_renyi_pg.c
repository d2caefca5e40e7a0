/* The certified lower bound of dpa_renyi for the Poisson-subsampled
 * Gaussian at real orders >= 1, both directions (src/rdp/renyi_pg.c;
 * docs/rdp.md, "Lower bounds of the Poisson-subsampled Gaussian").
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Reference: D_A (KL at A = 1) by brute-force integration written here:
 * adaptive Simpson in long double, on panels of width 1/4 over
 * [-40 + min(0, c mu), 40 + max(mu, c mu)] (the integrand is below e^-700
 * of its peak outside), of E - 1 = int phi(x) [g^c - 1 - c (g - 1)] dx with
 * g = 1 + q expm1(mu x - mu^2/2), c = A (remove) or 1 - A (add)
 * (int phi (g - 1) = 0), and KL = int phi [g log g - g + 1] (remove) or
 * int phi [g - 1 - log g] (add); the integrand evaluated directly (expm1l,
 * log1pl), not through the library's series.  Over 40 generated cases
 * (q log-uniform in [1e-4, 0.5], sigma in [0.5, 20], A in {1} and
 * log-uniform in [1.1, 256]), both directions:
 *  - the reference lies in [lower, upper] (slack 1e-10 relative: the
 *    reference's own accuracy, Simpson at 1e-13 of the peak per panel, the long
 *    double sums);
 *  - the gap goal for the lower end: (reference - lower) <= 1e-6
 *    reference (the upper end is the RDP module's, or the loose D_{1.001}
 *    at A = 1: brackets wider than 1e-6 are counted and printed);
 *  - the lower bound is not the trivial 0 and its note says so.
 */
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
#include "check.h"
#include "dpacct/renyi.h"

typedef struct ref {
    long double mu, q, c, shift; /* shift: the log of the integrand's scale */
    int kl;                      /* 0 power, 1 KL remove, 2 KL add */
} ref;

/* log of the integrand */
static long double log_integrand(const ref *r, long double x)
{
    long double y = r->q * expm1l(r->mu * x - r->mu * r->mu / 2), L = log1pl(y), lf;
    if (r->kl == 1) lf = logl((1 + y) * L - y);
    else if (r->kl == 2) lf = logl(y - L);
    else if (r->c * L > 64) lf = r->c * L + log1pl(-(1 + r->c * y) * expl(-r->c * L));
    else lf = logl(expm1l(r->c * L) - r->c * y);
    return -x * x / 2 - 0.91893853320467274178L + lf;
}

static long double integrand(const ref *r, long double x)
{
    long double v = log_integrand(r, x);
    return isnan(v) ? 0 : expl(v - r->shift);
}

static long double simpson(const ref *r, long double a, long double b, long double fa, long double fm, long double fb,
                           long double whole, long double tol, int depth)
{
    long double m = (a + b) / 2, lm = (a + m) / 2, rm = (m + b) / 2;
    long double flm = integrand(r, lm), frm = integrand(r, rm);
    long double left = (m - a) / 6 * (fa + 4 * flm + fm), right = (b - m) / 6 * (fm + 4 * frm + fb);
    long double s = left + right;
    if (depth <= 0 || fabsl(s - whole) <= 15 * tol) return s + (s - whole) / 15;
    return simpson(r, a, m, fa, flm, fm, left, tol / 2, depth - 1) +
           simpson(r, m, b, fm, frm, fb, right, tol / 2, depth - 1);
}

/* D_A of the Poisson(q)-subsampled Gaussian (sigma), direction dir */
static long double brute(double q, double sigma, double A, int dir)
{
    ref r = {.mu = 1.0L / sigma, .q = q, .c = dir ? 1 - (long double)A : A, .shift = 0, .kl = A == 1 ? (dir ? 2 : 1) : 0};
    long double cm = r.c * r.mu;
    long double lo = -40 + fminl(0, cm), hi = 40 + fmaxl(r.mu, cm);
    /* the panels' scale: the peak's integrand, from a scan */
    r.shift = -INFINITY;
    for (long double x = lo; x <= hi; x += 0.25L) r.shift = fmaxl(r.shift, log_integrand(&r, x));
    long double peak = 1; /* the integrand is scaled by e^{-shift} */
    /* panels only where the scan sees the integrand above 1e-30 of its
     * peak, padded by 2 (the rest: below 1e-30 of the integral's scale) */
    long double a0 = hi, b0 = lo;
    for (long double x = lo; x <= hi; x += 0.25L)
        if (integrand(&r, x) >= 1e-30L * peak) a0 = fminl(a0, x - 2), b0 = fmaxl(b0, x + 2);
    lo = a0;
    hi = b0;
    long double sum = 0;
    for (long double a = lo; a < hi; a += 0.25L) {
        long double b = a + 0.25L, fa = integrand(&r, a), fb = integrand(&r, b), fm = integrand(&r, (a + b) / 2);
        long double whole = (b - a) / 6 * (fa + 4 * fm + fb);
        sum += simpson(&r, a, b, fa, fm, fb, whole, 1e-13L * peak, 22);
    }
    long double ls = r.shift + logl(sum); /* log(E - 1), log KL */
    if (A == 1) return expl(ls);
    return (ls > 40 ? ls + log1pl(expl(-ls)) : log1pl(expl(ls))) / ((long double)A - 1);
}

static void test_brute(void **state)
{
    (void)state;
    uint64_t st = 0x9e3779b97f4a7c15ull;
    int ncase = 0, nfar = 0;
    double worst_gap = 0;
    for (int i = 0; i < 40; i++) {
        st ^= st << 13, st ^= st >> 7, st ^= st << 17;
        double u1 = (double)(st % 1000003) / 1000003;
        st ^= st << 13, st ^= st >> 7, st ^= st << 17;
        double u2 = (double)(st % 1000003) / 1000003;
        st ^= st << 13, st ^= st >> 7, st ^= st << 17;
        double u3 = (double)(st % 1000003) / 1000003;
        double q = 1e-4 * pow(0.5 / 1e-4, u1), sigma = 0.5 * pow(40.0, u2);
        double A = i % 6 == 0 ? 1 : 1.1 * pow(256 / 1.1, u3);
        if (i % 6 == 3) A = floor(A) + 0.5; /* some half-integer orders */
        char js[200];
        snprintf(js, sizeof js, "{\"poisson\":{\"rate\":%.17g,\"event\":{\"gaussian\":{\"sigma\":%.17g}}}}", q, sigma);
        dpa_error err;
        dpa_spec *s = dpa_spec_from_json(js, &err);
        dpa_renyi_result r;
        if (!s || dpa_renyi(s, A, 0, &r, &err) != DPA_OK) fail_msg("%s at %g: %s", js, A, err.message);
        dpa_spec_free(s);
        for (int dir = 0; dir < 2; dir++) {
            const dpa_renyi_value *v = dir ? &r.add : &r.remove;
            long double t = brute(q, sigma, A, dir);
            ncase++;
            CHECK(v->lower <= t * (1 + 1e-10L) && t * (1 - 1e-10L) <= v->upper,
                  "%s A=%g dir %d: reference %.17Lg outside [%.17g, %.17g]", js, A, dir, t, v->lower, v->upper);
            /* the lower end's own gap, to the reference (the upper end is the
             * RDP module's, and not tight everywhere: counted, not asserted) */
            double gap = (double)((t - v->lower) / t), ugap = (v->upper - v->lower) / v->upper;
            if (gap > worst_gap) worst_gap = gap;
            if (A > 1 && ugap > 1e-6) nfar++;
            CHECK(gap <= 1e-6 && v->lower > 0,
                  "%s A=%g dir %d: gap %.3g: [%.17g, %.17g], reference %.17Lg (%s)", js, A, dir, gap, v->lower,
                  v->upper, t, v->note);
        }
    }
    print_message("  %d cases, worst relative gap of the lower end %.3g; %d of the A > 1 brackets wider than 1e-6 "
                  "(the upper end's)\n", ncase, worst_gap, nfar);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_brute, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* The f-DP operations on a spec's tradeoff curve, as `dpacct curve --kind
 * tradeoff --group K / --subsample P` computes them (src/cli/curve.c:
 * dpa_tf_from_accountant, then dpa_tf_group / dpa_tf_subsample;
 * docs/fdp.md §11.2).
 *
 * References, in long double, independent of the library:
 *   - group privacy of G_mu is G_{k mu} (GDP Thm 2.14), G_mu(x) =
 *     Phi(Phi^-1(1 - x) - mu), Phi^-1 by bisection on erfcl;
 *   - C_p(G_mu) by GDP eq 14: f_p = p G_mu + (1 - p) Id on [0, x*], the line
 *     x* + f_p(x*) - x on [x*, f_p(x*)], f_p^{-1} after (x* the fixed point
 *     of G_mu, f_p^{-1} by bisection).
 * Checked over generated mu, k, p and alphas: the curve is a lower bound
 * (below the reference, up to the reference's own error) and within 1e-6
 * of it (the profile grid of dpa_tf_from_accountant: docs/fdp.md §2.1).
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dpacct/accountant.h"
#include "dpacct/event.h"
#include "dpacct/tradeoff.h"
#include "check.h"

/* the references' own error: long-double erfcl and 200 bisection steps,
 * far below 1e-15 absolute */
#define REF_TOL 1e-15L
/* the accountant curve's discretization (docs/fdp.md §2.1: every case
 * tried within 6e-7 with the CLI's 512 points) */
#define CLOSE_TOL 2e-6

static long double G(long double mu, long double x) { return test_gauss_tradeoff(mu, x); }

static long double fp(long double mu, long double p, long double x) { return p * G(mu, x) + (1 - p) * (1 - x); }

/* C_p(G_mu)(x), GDP eq 14 */
static long double cp_ref(long double mu, long double p, long double x)
{
    long double lo = 0, hi = 0.5L;
    for (int i = 0; i < 200; i++) {
        long double m = 0.5L * (lo + hi);
        if (G(mu, m) > m) lo = m;
        else hi = m;
    }
    long double xs = 0.5L * (lo + hi), ys = fp(mu, p, xs);
    if (x <= xs) return fp(mu, p, x);
    if (x <= ys) return xs + ys - x;
    long double a = 0, b = 1; /* f_p^{-1}(x): the y with f_p(y) = x */
    for (int i = 0; i < 200; i++) {
        long double m = 0.5L * (a + b);
        if (fp(mu, p, m) > x) a = m;
        else b = m;
    }
    return 0.5L * (a + b);
}

/* The CLI's curve of {"gdp": {"mu": mu}}: 512 profile points up to the
 * eps where delta reaches 1e-12 (src/cli/curve.c). */
static dpa_tf *spec_curve(double mu)
{
    char j[128];
    snprintf(j, sizeof j, "{\"gdp\": {\"mu\": %.17g}}", mu);
    dpa_accountant *a = test_accountant(j, DPA_METHOD_AUTO);
    dpa_result r;
    dpa_error err;
    if (dpa_accountant_epsilon(a, 1e-12, &r, &err) != DPA_OK) fail_msg("%s", err.message);
    dpa_tf *f = dpa_tf_from_accountant(a, fmin(700, r.upper * 1.05), 512, NULL, &err);
    dpa_accountant_free(a);
    if (!f) fail_msg("from_accountant: %s", err.message);
    return f;
}

static void check_curve(const dpa_tf *f, double alpha, long double ref, const char *what)
{
    double lo, hi;
    dpa_error err;
    CHECK(dpa_tf_eval_bounds(f, alpha, &lo, &hi, NULL, NULL, &err) == DPA_OK, "%s", err.message);
    CHECK(lo <= ref + REF_TOL, "%s alpha %.17g: %.17g above the reference %.17Lg", what, alpha, lo, ref);
    CHECK(lo >= ref - CLOSE_TOL, "%s alpha %.17g: %.17g far below the reference %.17Lg", what, alpha, lo, ref);
}

static void test_group(void **state)
{
    (void)state;
    int cases = SANITIZED ? 2 : 8;
    for (int c = 0; c < cases; c++) {
        double mu = test_log_unif(0.1, 1.5);
        unsigned long k = 2 + (unsigned long)(test_unif() * 4);
        dpa_error err;
        dpa_tf *f = spec_curve(mu);
        dpa_tf *g = dpa_tf_group(f, k, NULL, &err);
        CHECK(g != NULL, "group: %s", err.message);
        char what[64];
        snprintf(what, sizeof what, "G_%g group %lu", mu, k);
        for (int i = 0; g && i < 10; i++) {
            double alpha = test_unif();
            check_curve(g, alpha, G((long double)k * mu, alpha), what);
        }
        dpa_tf_free(g);
        dpa_tf_free(f);
    }
}

static void test_subsample(void **state)
{
    (void)state;
    int cases = SANITIZED ? 2 : 8;
    for (int c = 0; c < cases; c++) {
        double mu = test_log_unif(0.2, 3), p = test_log_unif(0.01, 1);
        dpa_error err;
        dpa_tf *f = spec_curve(mu);
        dpa_tf *g = dpa_tf_subsample(f, p, NULL, &err);
        CHECK(g != NULL, "subsample: %s", err.message);
        char what[64];
        snprintf(what, sizeof what, "C_%g(G_%g)", p, mu);
        for (int i = 0; g && i < 10; i++) {
            double alpha = test_unif();
            check_curve(g, alpha, cp_ref(mu, p, alpha), what);
        }
        dpa_tf_free(g);
        dpa_tf_free(f);
    }
}

int main(void)
{
    test_seed_from_env();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_group, setup, teardown),
        cmocka_unit_test_setup_teardown(test_subsample, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* The tradeoff function at one point, bracketed (src/fdp/fdp_power.c,
 * dpa_tf_beta_at; docs/fdp.md §9).
 *
 * References, in long double, independent of the library's profiles:
 *   Gaussian (mu = s/sigma): G_mu(alpha) = Phi(Phi^-1(1 - alpha) - mu)
 *     (GDP Def 2.7), Phi^-1 by bisection on erfcl;
 *   pure eps (randomized response): f_{eps,0}(alpha) = max(0, 1 - e^eps alpha,
 *     e^-eps (1 - alpha)) (GDP eq 4);
 *   Laplace (eps = s/b): 1 - e^eps alpha for alpha < e^-eps / 2,
 *     e^-eps / (4 alpha) up to 1/2, e^-eps (1 - alpha) beyond (the tradeoff
 *     of Lap(0, 1) against Lap(eps, 1): the likelihood-ratio test's
 *     errors).
 * Checked over generated (parameter, alpha): the bracket contains the
 * reference (a tolerance of 1e-15 for the reference's own rounding), is at
 * most 1e-5 wide (the accountant's accuracy bounds it), and refusals.
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

static long double ref_gauss(long double mu, long double a) { return test_gauss_tradeoff(mu, a); }

static long double ref_pure(long double e, long double a)
{
    long double t1 = 1 - expl(e) * a, t2 = expl(-e) * (1 - a);
    return fmaxl(0, fmaxl(t1, t2));
}

static long double ref_laplace(long double e, long double a)
{
    if (a < expl(-e) / 2) return 1 - expl(e) * a;
    if (a <= 0.5L) return expl(-e) / (4 * a);
    return expl(-e) * (1 - a);
}

static void one(const char *json, dpa_method m, double alpha, long double ref, double width)
{
    dpa_accountant *a = test_accountant(json, m);
    double lo, hi;
    dpa_error err;
    dpa_status st = dpa_tf_beta_at(a, alpha, 0, &lo, &hi, &err);
    dpa_accountant_free(a);
    CHECK(st == DPA_OK, "%s alpha %g: %s", json, alpha, err.message);
    /* the reference's own error: a few long-double roundings and the
     * bisection of Phi^-1 (to 1e-18): 1e-15 absolute covers it */
    CHECK(lo <= ref + 1e-15L && ref - 1e-15L <= hi, "%s alpha %.17g: [%.17g, %.17g] misses %.17Lg", json, alpha, lo, hi,
          ref);
    CHECK(hi - lo <= width, "%s alpha %g: width %g", json, alpha, hi - lo);
}

static void test_references(void **state)
{
    (void)state;
    int n = SANITIZED ? 6 : 40;
    for (int i = 0; i < n; i++) {
        char j[256];
        double alpha = test_log_unif(1e-6, 0.99);
        double sigma = test_log_unif(0.3, 20);
        snprintf(j, sizeof j, "{\"gaussian\": {\"sigma\": %.17g}}", sigma);
        one(j, DPA_METHOD_EXACT, alpha, ref_gauss(1.0L / sigma, alpha), 1e-5);
        double e = test_log_unif(0.01, 5);
        snprintf(j, sizeof j, "{\"pure\": {\"epsilon\": %.17g}}", e);
        one(j, DPA_METHOD_EXACT, alpha, ref_pure(e, alpha), 1e-5);
        double b = test_log_unif(0.2, 50);
        snprintf(j, sizeof j, "{\"laplace\": {\"scale\": %.17g}}", b);
        one(j, DPA_METHOD_PLD, alpha, ref_laplace(1.0L / b, alpha), 1e-3);
    }
    /* a composition of Gaussians is the Gaussian of mu = sqrt(sum mu_i^2) */
    one("{\"repeat\": {\"count\": 100, \"event\": {\"gaussian\": {\"sigma\": 10}}}}", DPA_METHOD_EXACT, 0.05,
        ref_gauss(1.0L, 0.05L), 1e-5);
    one("{\"repeat\": {\"count\": 100, \"event\": {\"gaussian\": {\"sigma\": 10}}}}", DPA_METHOD_PLD, 0.05,
        ref_gauss(1.0L, 0.05L), 1e-3);
}

static void test_domain(void **state)
{
    (void)state;
    dpa_accountant *a = test_accountant("{\"gaussian\": {\"sigma\": 1}}", DPA_METHOD_AUTO);
    double lo, hi;
    dpa_error err;
    static const double bad[] = {0, -0.1, 1.5, NAN};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        memset(&err, 0, sizeof err);
        CHECK(dpa_tf_beta_at(a, bad[i], 0, &lo, &hi, &err) == DPA_EINVAL && strstr(err.message, "alpha must be in (0, 1]"),
              "alpha %g: %s", bad[i], err.message);
    }
    CHECK(dpa_tf_beta_at(a, 0.1, 1.0, &lo, &hi, &err) == DPA_EINVAL && strstr(err.message, "tol"), "tol 1: %s",
          err.message);
    CHECK(dpa_tf_beta_at(a, 1, 0, &lo, &hi, &err) == DPA_OK && lo == 0 && hi == 0, "alpha 1: [%g, %g]", lo, hi);
    CHECK(dpa_tf_beta_at(NULL, 0.1, 0, &lo, &hi, &err) == DPA_EINVAL, "NULL accountant accepted");
    dpa_accountant_free(a);
    /* a non-private step: f = 0 */
    a = test_accountant("{\"non_private\": {}}", DPA_METHOD_AUTO);
    CHECK(dpa_tf_beta_at(a, 0.3, 0, &lo, &hi, &err) == DPA_OK && lo == 0 && hi <= 1e-15, "non_private: [%g, %g]", lo,
          hi);
    dpa_accountant_free(a);
}

int main(void)
{
    test_seed_from_env();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_references, setup, teardown),
        cmocka_unit_test_setup_teardown(test_domain, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

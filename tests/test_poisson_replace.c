/* The Poisson-subsampled Gaussian under replace-one neighbours: the
 * bracket of docs/sampling.md §5 (src/mech/poisson_replace.c, the leaves in
 * src/model/leaves.c, combined by the pld method).
 *
 * References: a brute-force quadrature in long double (composite Simpson,
 * 2e6 panels on [-(m + 30), m + 30]) of the antipodal instance
 * P = (1-q) N(0) + q N(m), Q = (1-q) N(0) + q N(-m) — independent of the
 * library's binning and of its tails — which must lie inside the certified
 * bracket (lower <= quadrature <= upper, up to the quadrature's own error
 * QUAD_TOL); at eps 0 the upper bound is q TV(N(m), N(-m)) = q (2 Phi(m) - 1),
 * the instance's own value; dp_accounting's numbers (values only), from
 * dp_accounting/pld/privacy_loss_mechanism_test.py: test_gaussian_get_delta_for_epsilon
 * (its REPLACE rows with sampling_prob < 1) and test_gaussian_get_delta_for_epsilon_vectorized
 * (REPLACE, sampling_prob 0.2), and test_gaussian_from_privacy_parameters (the four
 * REPLACE rows with sampling_prob < 1).  Its sensitivity is the record's
 * norm C, dpacct's the replace-one sensitivity 2C.
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
#include "dpacct/calibrate.h"
#include "dpacct/event.h"
#include "check.h"

/* Simpson with 2e6 panels of width <= 6e-5 on a smooth integrand with one
 * kink (the positive part): error below 1e-10 absolute; the dp_accounting
 * values are given to 7 places or rounded to 8 digits */
#define QUAD_TOL 1e-9
#define PEER_TOL 5e-8

static char *spec(double sd, double C, double q)
{
    static char j[256];
    snprintf(j, sizeof j,
             "{\"poisson\": {\"rate\": %.17g, \"event\": {\"gaussian\": {\"sigma\": %.17g, \"sensitivity\": %.17g}}}, "
             "\"neighboring\": \"replace\"}",
             q, sd, 2 * C);
    return j;
}

static long double phi(long double x) { return expl(-x * x / 2) / sqrtl(2 * 3.14159265358979323846264338327950288L); }

/* H_{e^eps}(P || Q) of the antipodal instance, m = C / sd */
static double quad(double q, double m, double eps)
{
    long double R = m + 30, s = 0, ee = expl((long double)eps);
    const long n = 2000000;
    long double h = 2 * R / n;
    for (long i = 0; i <= n; i++) {
        long double y = -R + h * i;
        long double p = (1 - q) * phi(y) + q * phi(y - m), qq = (1 - q) * phi(y) + q * phi(y + m);
        long double f = p - ee * qq;
        if (f < 0) f = 0;
        s += f * (i == 0 || i == n ? 1 : i % 2 ? 4 : 2);
    }
    return (double)(s * h / 3);
}

static void test_one_step_against_quadrature(void **state)
{
    (void)state;
    int n = SANITIZED ? 2 : 4;
    for (int c = 0; c < n; c++) {
        double q = test_log_unif(0.01, 0.9), sd = test_log_unif(0.5, 5), eps = test_unif() * 2 - 0.3;
        const char *j = spec(sd, 1, q);
        dpa_result r = test_query_delta(j, DPA_METHOD_PLD, eps);
        double v = quad(q, 1 / sd, eps);
        CHECK(r.certified && r.lower <= v + QUAD_TOL && v <= r.upper + QUAD_TOL, "%s delta(%g): [%.17g, %.17g] vs %.17g", j,
              eps, r.lower, r.upper, v);
        /* the lower end is the instance up to the binning */
        CHECK(v - r.lower <= 1e-5 * v + 1e-9, "%s delta(%g): lower %.17g far below %.17g", j, eps, r.lower, v);
    }
    /* eps 0: the upper bound is the instance's q TV = q (2 Phi(m) - 1) */
    double q = 0.2, m = 1;
    dpa_result r = test_query_delta(spec(1, 1, q), DPA_METHOD_PLD, 0);
    double tv = q * erf(m / sqrt(2));
    CHECK(r.upper >= tv - 1e-15 && r.upper - tv <= 1e-9 && r.lower <= tv, "eps 0: [%.17g, %.17g] vs %.17g", r.lower,
          r.upper, tv);
}

static void test_dp_accounting_values(void **state)
{
    (void)state;
    /* sd, C, q, eps, delta: test_gaussian_get_delta_for_epsilon (REPLACE rows) */
    static const double v[][5] = {
        {2.0, 1.0, 0.8, 1.0, 0.05808665654484252},  {3.0, 2.0, 0.8, 1.0, 0.13711260900644096},
        {2.0, 3.0, 0.7, 1.0, 0.4013057526509164},   {3.0, 6.0, 0.4, 1.0, 0.20752885274183325},
        {2.0, 1.0, 0.3, 2.0, 2.4770380148941894e-09}, {10.0, 5.0, 0.2, -0.25, 0.22989794629827498},
        /* test_gaussian_get_delta_for_epsilon_vectorized, REPLACE, q 0.2 (a subset) */
        {1.0, 1.0, 0.2, -0.3, 0.29584154},          {1.0, 1.0, 0.2, 0.0, 0.13653790},
        {1.0, 1.0, 0.2, 1.0, 0.004734828},
    };
    int n = SANITIZED ? 3 : (int)(sizeof v / sizeof v[0]);
    for (int i = 0; i < n; i++) {
        dpa_result r = test_query_delta(spec(v[i][0], v[i][1], v[i][2]), DPA_METHOD_AUTO, v[i][3]);
        CHECK(r.lower <= v[i][4] + PEER_TOL && v[i][4] <= r.upper + PEER_TOL, "row %d: %.17g outside [%.17g, %.17g]", i,
              v[i][4], r.lower, r.upper);
    }
    /* test_gaussian_from_privacy_parameters (C, q, eps, delta -> sd, to 3
     * places): dpacct's certified sd is at least the peer's, and at the
     * peer's sd + 1e-3 the lower bound meets the target */
    dpa_error err;
    dpa_template *t = dpa_template_from_json(
        "{\"poisson\": {\"rate\": 0.1, \"event\": {\"gaussian\": {\"sigma\": \"?\", \"sensitivity\": 2}}}, "
        "\"neighboring\": \"replace\"}",
        &err);
    CHECK(t != NULL, "template: %s", err.message);
    if (t) {
        dpa_calibration cal;
        dpa_status st = dpa_calibrate(t, 2.0, 3.828e-06, NULL, 0, &cal, &err);
        CHECK(st == DPA_OK && cal.value >= 1.0 - 1e-3, "calibrate: %s %.17g", err.message, cal.value);
        dpa_template_free(t);
    }
    dpa_result r = test_query_delta(spec(1.0 + 1e-3, 1.0, 0.1), DPA_METHOD_PLD, 2.0);
    CHECK(r.lower <= 3.828e-06, "lower at the peer's sigma: %.17g", r.lower);
}

static void test_composition_and_refusals(void **state)
{
    (void)state;
    char j[300];
    snprintf(j, sizeof j,
             "{\"repeat\": {\"count\": 20, \"event\": {\"poisson\": {\"rate\": 0.05, \"event\": {\"gaussian\": "
             "{\"sigma\": 2, \"sensitivity\": 2}}}}}, \"neighboring\": \"replace\"}");
    dpa_result r = test_query_epsilon(j, DPA_METHOD_PLD, 1e-5);
    dpa_result one = test_query_epsilon(spec(2, 1, 0.05), DPA_METHOD_PLD, 1e-5);
    CHECK(r.certified && isfinite(r.upper) && r.lower <= r.upper && r.lower >= one.lower,
          "20 steps [%.17g, %.17g], one step lower %.17g", r.lower, r.upper, one.lower);
    dpa_error err;
    dpa_accountant *a = try_accountant(spec(2, 1, 0.05), DPA_METHOD_RDP, &err);
    CHECK(!a && strstr(err.message, "/poisson: method rdp cannot take Poisson subsampling under replace-one"), "rdp: %s",
          a ? "accepted" : err.message);
    dpa_accountant_free(a);
    a = try_accountant(spec(2, 1, 0.05), DPA_METHOD_EXACT, &err);
    CHECK(!a && strstr(err.message, "replace-one"), "exact: %s", a ? "accepted" : err.message);
    dpa_accountant_free(a);
    a = try_accountant("{\"poisson\": {\"rate\": 0.1, \"event\": {\"laplace\": {\"scale\": 1}}}, \"neighboring\": "
                       "\"replace\"}",
                       DPA_METHOD_PLD, &err);
    CHECK(!a && strstr(err.message, "/poisson: Poisson subsampling under replace-one neighbours is bracketed for a "
                                    "gaussian step only"),
          "laplace child: %s", a ? "accepted" : err.message);
    dpa_accountant_free(a);
    /* rate 1: the Gaussian itself under replace (sensitivity 2, sigma 2: mu 1) */
    r = test_query_delta("{\"poisson\": {\"rate\": 1, \"event\": {\"gaussian\": {\"sigma\": 2, \"sensitivity\": 2}}}, "
                         "\"neighboring\": \"replace\"}",
                         DPA_METHOD_AUTO, 1.0);
    CHECK(r.lower <= 0.12693673750664397 && 0.12693673750664397 <= r.upper && r.upper - r.lower < 1e-12,
          "rate 1: [%.17g, %.17g]", r.lower, r.upper);
}

int main(void)
{
    test_seed_from_env();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_one_step_against_quadrature, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dp_accounting_values, setup, teardown),
        cmocka_unit_test_setup_teardown(test_composition_and_refusals, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

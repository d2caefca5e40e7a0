/* Bounds that do not come from the PLD grid (docs/guarantees.md §3.14):
 * the largest finite loss of a composition caps eps wherever delta covers
 * the mass at +inf, and caps delta beyond it; each result says so in
 * upper_source.  Checked against closed forms (one Laplace step:
 * delta(eps) = 1 - e^{(eps - eps0)/2} on [0, eps0], so
 * eps(delta) = eps0 + 2 log(1 - delta)), exact sums for small compositions,
 * and the rule that no finite truth is ever reported as +inf where such a
 * bound exists.
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

#include "check.h"

static dpa_result eps_q(dpa_accountant *a, double delta)
{
    dpa_result r;
    dpa_error err;
    if (dpa_accountant_epsilon(a, delta, &r, &err)) fail_msg("epsilon(%g): %s", delta, err.message);
    return r;
}

static dpa_result delta_q(dpa_accountant *a, double eps)
{
    dpa_result r;
    dpa_error err;
    if (dpa_accountant_delta(a, eps, &r, &err)) fail_msg("delta(%g): %s", eps, err.message);
    return r;
}

/* One Laplace step at deltas down to 1e-300: the truth eps0 + 2 log1p(-delta)
 * is bracketed, the upper bound is finite and within a few ulp of eps0. */
static void test_laplace_tiny_delta(void **state)
{
    (void)state;
    const double scales[] = {0.4, 1, 3, 0.05};
    const double deltas[] = {1e-9, 1e-12, 1e-15, 1e-30, 1e-100, 1e-300};
    char json[128];
    for (size_t i = 0; i < sizeof scales / sizeof *scales; i++) {
        snprintf(json, sizeof json, "{\"laplace\":{\"scale\":%.17g}}", scales[i]);
        dpa_accountant *a = test_accountant(json, DPA_METHOD_AUTO);
        double eps0 = 1 / scales[i];
        for (size_t j = 0; j < sizeof deltas / sizeof *deltas; j++) {
            dpa_result r = eps_q(a, deltas[j]);
            double truth = eps0 + 2 * log1p(-deltas[j]);
            /* the truth is computed in double: allow 4 ulp of eps0 */
            double tol = 4 * 2.2e-16 * eps0;
            CHECK(isfinite(r.upper), "%s: eps(%g) upper is %g", json, deltas[j], r.upper);
            CHECK(r.lower <= truth + tol && truth - tol <= r.upper, "%s: eps(%g) in [%.17g, %.17g], truth %.17g", json,
                  deltas[j], r.lower, r.upper, truth);
            CHECK(r.upper <= eps0 * (1 + 1e-13), "%s: eps(%g) upper %.17g above eps0 %.17g", json, deltas[j], r.upper,
                  eps0);
            if (deltas[j] < 1e-13)
                CHECK(r.upper_source == DPA_SOURCE_MAX_LOSS, "%s: eps(%g) source %s", json, deltas[j],
                      dpa_bound_source_name(r.upper_source));
        }
        /* beyond the largest loss, delta is exactly 0 */
        dpa_result r = delta_q(a, eps0 * 1.001);
        CHECK(r.upper == 0 && r.lower == 0, "%s: delta(%.17g) in [%g, %g], truth 0", json, eps0 * 1.001, r.lower,
              r.upper);
        dpa_accountant_free(a);
    }
}

/* Compositions whose largest loss is a sum, with and without mass at +inf:
 * k Laplace steps, a Laplace with an (eps, delta) step, discrete Laplace,
 * Poisson-subsampled Laplace (add direction bounded by -log(1 - q)). */
static void test_compositions(void **state)
{
    (void)state;
    struct { const char *json; double wmax, inf; } cs[] = {
        {"{\"repeat\":{\"count\":30,\"event\":{\"laplace\":{\"scale\":1}}}}", 30, 0},
        {"{\"compose\":[{\"laplace\":{\"scale\":2}},{\"approx\":{\"epsilon\":0.25,\"delta\":1e-9}}]}", 0.75, 1e-9},
        {"{\"repeat\":{\"count\":5,\"event\":{\"discrete_laplace\":{\"scale\":2,\"sensitivity\":2}}}}", 5, 0},
        {"{\"poisson\":{\"rate\":0.1,\"event\":{\"laplace\":{\"scale\":1}}}}", 0, 0}, /* wmax set below */
    };
    cs[3].wmax = log(0.1 * exp(1.0) + 0.9);
    const double deltas[] = {1e-13, 1e-15, 1e-20, 1e-200};
    for (size_t i = 0; i < sizeof cs / sizeof *cs; i++) {
        dpa_accountant *a = test_accountant(cs[i].json, DPA_METHOD_AUTO);
        for (size_t j = 0; j < sizeof deltas / sizeof *deltas; j++) {
            dpa_result r = eps_q(a, deltas[j]);
            if (deltas[j] < cs[i].inf) {
                CHECK(isinf(r.upper) && isinf(r.lower), "%s: eps(%g) below the +inf mass: [%g, %g]", cs[i].json,
                      deltas[j], r.lower, r.upper);
                continue;
            }
            CHECK(isfinite(r.upper) && r.upper <= cs[i].wmax * (1 + 1e-12), "%s: eps(%g) upper %.17g, largest loss %.17g",
                  cs[i].json, deltas[j], r.upper, cs[i].wmax);
            CHECK(r.lower <= r.upper && r.lower >= 0, "%s: eps(%g) [%.17g, %.17g]", cs[i].json, deltas[j], r.lower,
                  r.upper);
        }
        /* delta beyond the largest loss is the +inf mass */
        dpa_result r = delta_q(a, cs[i].wmax * 1.01 + 1e-9);
        CHECK(r.upper <= cs[i].inf * (1 + 1e-12) && r.lower <= cs[i].inf, "%s: delta beyond the largest loss [%g, %g]",
              cs[i].json, r.lower, r.upper);
        dpa_accountant_free(a);
    }
}

/* Exact values for 2 Laplace steps (scale 1): the largest loss 2 is
 * attained with probability 1/4 (both outputs on the far side), so
 * delta(eps) -> 0 only at eps = 2, and eps(delta) <= 2 for every delta:
 * at tiny deltas the bracket must contain the truth just below 2. */
static void test_two_laplace(void **state)
{
    (void)state;
    dpa_accountant *a = test_accountant("{\"repeat\":{\"count\":2,\"event\":{\"laplace\":{\"scale\":1}}}}", DPA_METHOD_AUTO);
    for (double d = 1e-14; d > 1e-250; d *= 1e-17) {
        dpa_result r = eps_q(a, d);
        CHECK(isfinite(r.upper) && r.upper >= 2 - 1e-6 && r.upper <= 2 * (1 + 1e-13), "eps(%g) upper %.17g", d,
              r.upper);
        CHECK(r.lower <= 2, "eps(%g) lower %.17g above the largest loss", d, r.lower);
    }
    dpa_accountant_free(a);
}

/* Specs with a Gaussian part have no finite largest loss: below the floor
 * the upper bound may be +inf, never a wrong finite number, and the source
 * is the method. */
static void test_gaussian_no_cap(void **state)
{
    (void)state;
    dpa_accountant *a =
        test_accountant("{\"compose\":[{\"gaussian\":{\"sigma\":2}},{\"laplace\":{\"scale\":1}}]}", DPA_METHOD_PLD);
    dpa_result r = eps_q(a, 1e-200);
    CHECK(r.upper_source == DPA_SOURCE_METHOD, "source %s", dpa_bound_source_name(r.upper_source));
    CHECK(r.lower <= r.upper, "order");
    /* the truth exceeds the Gaussian's own eps(1e-200) ~ 2 sqrt(2 * 460) / 2 */
    CHECK(r.upper > 15, "eps(1e-200) upper %.17g", r.upper);
    dpa_accountant_free(a);
}

/* Cases an independent audit found on the wrong side of the truth (mpmath,
 * 300+ bits, for the double inputs): subsampled losses of tiny epsilons
 * (the Poisson map lost u |log q| absolutely), sample with m = n of a
 * composition, +inf masses rounded up, 1 - e^eps rounded up. */
static void test_audit_regressions(void **state)
{
    (void)state;
    static const struct { int is_eps; double x; const char *json; double truth; } cs[] = {
        {1, 7.000000000007002e-10,
         "{\"repeat\":{\"count\":1,\"event\":{\"sample\":{\"n\":10,\"m\":7,\"event\":{\"approx\":"
         "{\"epsilon\":3.1061e-13,\"delta\":1e-09}}}}},\"neighboring\":\"replace\"}",
         2.1742700000001011e-13},
        {1, 2.128000002126302e-12,
         "{\"repeat\":{\"count\":4,\"event\":{\"sample\":{\"n\":1000,\"m\":532,\"event\":{\"approx\":"
         "{\"epsilon\":2.4499e-09,\"delta\":1e-12}}}}},\"neighboring\":\"replace\"}",
         5.2133872029546649e-09},
        {0, 0.4981053121235155,
         "{\"repeat\":{\"count\":6,\"event\":{\"sample\":{\"n\":1,\"m\":1,\"event\":{\"compose\":["
         "{\"pure\":{\"epsilon\":0.2017}},{\"approx\":{\"epsilon\":0.5554,\"delta\":1e-06}}]}}}},"
         "\"neighboring\":\"replace\"}",
         0.41589811426441753114},
        {0, 4.941201387705368,
         "{\"poisson\":{\"rate\":0.003334,\"event\":{\"compose\":[{\"approx\":{\"epsilon\":0.0022024,"
         "\"delta\":1e-12}},{\"pure\":{\"epsilon\":0.0013554}}]}}}",
         3.3340000000000000908e-15},
        {0, -2.5,
         "{\"repeat\":{\"count\":2,\"event\":{\"sample\":{\"n\":4,\"m\":3,\"event\":{\"compose\":["
         "{\"pure\":{\"epsilon\":0.0070012}},{\"approx\":{\"epsilon\":0.69601,\"delta\":0.0}}]}}}},"
         "\"neighboring\":\"replace\"}",
         0.91791500137610120},
    };
    for (size_t i = 0; i < sizeof cs / sizeof *cs; i++) {
        dpa_accountant *a = test_accountant(cs[i].json, DPA_METHOD_AUTO);
        dpa_result r = cs[i].is_eps ? eps_q(a, cs[i].x) : delta_q(a, cs[i].x);
        /* the truth is given to 17+ digits: allow 2e-17 relative */
        double t = cs[i].truth, sl = 2e-17 * fabs(t);
        CHECK(r.lower <= t + sl && t - sl <= r.upper, "AUDIT %s: %s(%.17g) in [%.17g, %.17g], truth %.17g",
              cs[i].json, cs[i].is_eps ? "eps" : "delta", cs[i].x, r.lower, r.upper, t);
        dpa_accountant_free(a);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_laplace_tiny_delta, setup, teardown),
        cmocka_unit_test_setup_teardown(test_compositions, setup, teardown),
        cmocka_unit_test_setup_teardown(test_two_laplace, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gaussian_no_cap, setup, teardown),
        cmocka_unit_test_setup_teardown(test_audit_regressions, setup, teardown),
    };
    if (getenv("DPA_TEST_FILTER")) cmocka_set_test_filter(getenv("DPA_TEST_FILTER"));
    return cmocka_run_group_tests(tests, NULL, NULL);
}

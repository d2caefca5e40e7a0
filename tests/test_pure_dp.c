/* epsilon at delta = 0 (src/acct/pure_dp.c, docs/guarantees.md §3.16) and
 * Poisson rate 0 (the no-op).
 *
 * Reference: eps(0) is the essential supremum of the composed privacy loss,
 * the sum over the steps of each one's largest loss (every direction apart),
 * +inf when one is unbounded or +inf with positive probability.  Each step's
 * supremum is written here in closed form, in long double, independently of
 * the library's pairs:
 *   pure eps / randomized_response(eps, 2): eps;  laplace(b, s): s / b;
 *   poisson(q) of pure eps (or of laplace, eps = s/b): remove
 *     log(1 + q (e^eps - 1)), add -log(1 - q + q e^-eps) (the add pair
 *     (Q, qP + (1 - q)Q) has loss -log(q e^W + 1 - q), largest at W = -eps);
 *   gaussian, approx with delta > 0, non_private, zcdp: +inf.
 * Checked: the bracket contains the reference for generated compositions,
 * under every method; dp_accounting's values are kept (numbers only, from
 * dp_accounting/pld/pld_privacy_accountant_test.py test_epsilon_basic: 3
 * for pure 1 and 2, exact; test_exponential_mechanism_basic;
 * test_epsilon_delta_basic: 0.28; privacy_accountant_test.py test_no_op,
 * test_non_private; rdp/rdp_privacy_accountant_test.py
 * test_zero_fixed_batch_sample: 0); eps(0) is at least the lower bound of eps(delta) at delta > 0;
 * delta < 0 is refused; calibration at delta 0; rate 0 adds nothing.
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

static const dpa_method METHODS[] = {DPA_METHOD_AUTO, DPA_METHOD_PLD, DPA_METHOD_RDP, DPA_METHOD_PHI, DPA_METHOD_GDP};
#define NMETHODS (sizeof METHODS / sizeof *METHODS)

static void test_dp_accounting_basic(void **state)
{
    (void)state;
    /* dp_accounting pld_privacy_accountant_test.py, test_epsilon_basic:
     * EpsilonDelta(1, 0) then (2, 0): get_epsilon(0.0) == 3.0 */
    const char *j = "{\"compose\": [{\"pure\": {\"epsilon\": 1}}, {\"pure\": {\"epsilon\": 2}}]}";
    for (size_t m = 0; m < NMETHODS; m++) {
        dpa_result r = test_query_epsilon(j, METHODS[m], 0);
        CHECK(r.upper == 3 && r.lower == 3 && r.certified, "method %d: [%.17g, %.17g]", (int)m, r.lower, r.upper);
    }
    /* test_exponential_mechanism_basic: ExponentialMechanism(1) and (2):
     * get_delta(3.0) == 0 (and eps(0) = 3: each step's largest loss is its
     * eps, the bounded-range pair's atom) */
    const char *em = "{\"compose\": [{\"exponential_mechanism\": {\"epsilon\": 1}}, "
                     "{\"exponential_mechanism\": {\"epsilon\": 2}}]}";
    dpa_result e0 = test_query_epsilon(em, DPA_METHOD_AUTO, 0);
    CHECK(e0.lower <= 3 && 3 <= e0.upper && e0.upper - e0.lower < 1e-14, "exponential: [%.17g, %.17g]", e0.lower,
          e0.upper);
    e0 = test_query_delta(em, DPA_METHOD_AUTO, 3.0);
    CHECK(e0.lower == 0 && e0.upper < 1e-14, "exponential delta(3): [%g, %g]", e0.lower, e0.upper);
    /* test_epsilon_delta_basic: EpsilonDelta(1, 0.1) and (2, 0.2):
     * get_delta(3.0) == 0.28 = 1 - 0.9 * 0.8 (both +inf atoms; eps 3 covers
     * every finite loss) */
    e0 = test_query_delta("{\"compose\": [{\"approx\": {\"epsilon\": 1, \"delta\": 0.1}}, "
                          "{\"approx\": {\"epsilon\": 2, \"delta\": 0.2}}]}",
                          DPA_METHOD_AUTO, 3.0);
    CHECK(e0.lower <= 0.28 && 0.28 <= e0.upper && e0.upper - e0.lower < 1e-12, "approx delta(3): [%.17g, %.17g]",
          e0.lower, e0.upper);
    /* more distinct steps than the stack arrays hold (20 > 16): laplace
     * scales 1 .. 20, sum of 1/i = H_20 */
    {
        char j[2048];
        size_t off = (size_t)snprintf(j, sizeof j, "{\"compose\": [");
        long double h = 0;
        for (int i = 1; i <= 20; i++) {
            off += (size_t)snprintf(j + off, sizeof j - off, "%s{\"laplace\": {\"scale\": %d}}", i > 1 ? ", " : "", i);
            h += 1.0L / i;
        }
        snprintf(j + off, sizeof j - off, "]}");
        dpa_result hr = test_query_epsilon(j, DPA_METHOD_PLD, 0);
        CHECK(hr.lower <= h + 1e-15L && h - 1e-15L <= hr.upper && hr.upper - hr.lower < 1e-13, "H_20: [%.17g, %.17g]",
              hr.lower, hr.upper);
    }
    /* privacy_accountant_test.py test_no_op / test_non_private: 0 and inf */
    dpa_result r = test_query_epsilon("{\"no_op\": {}}", DPA_METHOD_AUTO, 0);
    CHECK(r.upper == 0 && r.lower == 0, "no_op: [%g, %g]", r.lower, r.upper);
    r = test_query_epsilon("{\"repeat\": {\"count\": 10, \"event\": {\"non_private\": {}}}}", DPA_METHOD_AUTO, 0);
    CHECK(r.upper == INFINITY && r.lower == INFINITY, "non_private: [%g, %g]", r.lower, r.upper);
    static const char *inf[] = {"{\"gaussian\": {\"sigma\": 5}}", "{\"approx\": {\"epsilon\": 1, \"delta\": 1e-9}}",
                                "{\"zcdp\": {\"rho\": 0.01}}",
                                "{\"compose\": [{\"pure\": {\"epsilon\": 1}}, {\"poisson\": {\"rate\": 0.01, \"event\": {\"gaussian\": {\"sigma\": 3}}}}]}"};
    for (size_t i = 0; i < sizeof inf / sizeof *inf; i++) {
        r = test_query_epsilon(inf[i], i == 2 ? DPA_METHOD_RDP : DPA_METHOD_AUTO, 0);
        CHECK(r.upper == INFINITY && r.lower == INFINITY && strstr(r.note, "not pure DP"), "%s: [%g, %g] %s", inf[i],
              r.lower, r.upper, r.note);
    }
}

/* A generated composition and its reference eps(0), both directions. */
static void generated(char *json, size_t n, long double *ref)
{
    size_t k = 1 + (size_t)(test_unif() * 4), off = 0;
    long double rem = 0, add = 0;
    off += (size_t)snprintf(json + off, n - off, "{\"compose\": [");
    for (size_t i = 0; i < k; i++) {
        int kind = (int)(test_unif() * 5);
        int count = 1 + (int)(test_unif() * 20);
        double e = test_log_unif(1e-3, 5), q = test_log_unif(1e-4, 0.9), b = test_log_unif(0.1, 100);
        const char *sep = i ? ", " : "";
        char ev[200];
        long double r = 0, a = 0;
        if (kind == 0) {
            snprintf(ev, sizeof ev, "{\"pure\": {\"epsilon\": %.17g}}", e);
            r = a = e;
        } else if (kind == 1) {
            snprintf(ev, sizeof ev, "{\"randomized_response\": {\"epsilon\": %.17g}}", e);
            r = a = e;
        } else if (kind == 2) {
            snprintf(ev, sizeof ev, "{\"laplace\": {\"scale\": %.17g, \"sensitivity\": 2}}", b);
            r = a = 2.0L / b;
        } else if (kind == 4) { /* a continuous base: Laplace */
            snprintf(ev, sizeof ev, "{\"poisson\": {\"rate\": %.17g, \"event\": {\"laplace\": {\"scale\": %.17g}}}}", q, b);
            r = log1pl(q * expm1l(1.0L / b));
            a = -log1pl(-q + q * expl(-1.0L / b));
        } else {
            snprintf(ev, sizeof ev, "{\"poisson\": {\"rate\": %.17g, \"event\": {\"pure\": {\"epsilon\": %.17g}}}}", q, e);
            r = log1pl(q * expm1l(e));
            a = -log1pl(-q + q * expl(-e));
        }
        off += (size_t)snprintf(json + off, n - off, "%s{\"repeat\": {\"count\": %d, \"event\": %s}}", sep, count, ev);
        rem += count * r;
        add += count * a;
    }
    snprintf(json + off, n - off, "]}");
    *ref = rem > add ? rem : add;
}

static void test_generated(void **state)
{
    (void)state;
    int n = SANITIZED ? 10 : 60;
    for (int c = 0; c < n; c++) {
        char json[2048];
        long double ref;
        generated(json, sizeof json, &ref);
        /* the reference's own error: a few long-double roundings per term,
         * far below 1e-15 relative (long double u = 5.4e-20) */
        long double tol = 1e-15L * ref;
        for (size_t m = 0; m < NMETHODS; m++) {
            if (METHODS[m] == DPA_METHOD_PHI && c % 10) continue; /* slow to build: a sample */
            dpa_error err;
            dpa_spec *s = dpa_spec_from_json(json, &err);
            dpa_options o;
            dpa_options_init(&o);
            o.method = METHODS[m];
            dpa_accountant *a = s ? dpa_accountant_new(s, &o, &err) : NULL;
            dpa_spec_free(s);
            if (!a) { /* phi refuses a Laplace part without a Gaussian factor */
                CHECK(err.status == DPA_EUNSUPPORTED, "%s method %d: %s", json, (int)m, err.message);
                continue;
            }
            dpa_result r;
            CHECK(dpa_accountant_epsilon(a, 0, &r, &err) == DPA_OK, "%s: %s", json, err.message);
            dpa_accountant_free(a);
            CHECK(r.lower <= ref + tol && ref - tol <= r.upper && r.certified,
                  "%s method %d: [%.17g, %.17g] misses %.17Lg", json, (int)m, r.lower, r.upper, ref);
            /* tight: every step here has a closed-form supremum */
            CHECK(r.upper - r.lower <= 1e-12 * ref, "%s: gap %g", json, r.upper - r.lower);
        }
        /* eps(0) >= eps(delta): the bracket at 0 is not below the lower
         * bound at a positive delta */
        dpa_result r0 = test_query_epsilon(json, DPA_METHOD_AUTO, 0);
        dpa_result r1 = test_query_epsilon(json, DPA_METHOD_AUTO, 1e-9);
        CHECK(r0.upper >= r1.lower, "%s: eps(0) <= %.17g < eps(1e-9) >= %.17g", json, r0.upper, r1.lower);
    }
}

static void test_refusals_and_calibration(void **state)
{
    (void)state;
    dpa_accountant *a = test_accountant("{\"pure\": {\"epsilon\": 1}}", DPA_METHOD_AUTO);
    dpa_result r;
    dpa_error err;
    memset(&err, 0, sizeof err);
    CHECK(dpa_accountant_epsilon(a, -1e-300, &r, &err) == DPA_EINVAL && strstr(err.message, "delta must be in [0, 1)"),
          "delta < 0: %s", err.message);
    CHECK(dpa_accountant_epsilon(a, NAN, &r, &err) == DPA_EINVAL, "delta NaN accepted");
    dpa_accountant_free(a);
    /* calibration to pure DP: 10 Laplace steps of sensitivity 1 at eps 1
     * need scale >= 10 (eps = 10 / scale) */
    dpa_template *t = dpa_template_from_json("{\"repeat\": {\"count\": 10, \"event\": {\"laplace\": {\"scale\": \"?\"}}}}", &err);
    assert_non_null(t);
    dpa_calibration c;
    CHECK(dpa_calibrate(t, 1, 0, NULL, 1e-6, &c, &err) == DPA_OK, "calibrate: %s", err.message);
    CHECK(c.value >= 10 && c.value <= 10 * (1 + 2e-6) && c.at_value.upper <= 1, "laplace scale %.17g (eps <= %.17g)",
          c.value, c.at_value.upper);
    CHECK(dpa_calibrate(t, 1, -0.5, NULL, 1e-6, &c, &err) == DPA_EINVAL, "calibrate delta < 0 accepted");
    dpa_template_free(t);
    /* a Gaussian is never pure: no sigma meets the target */
    t = dpa_template_from_json("{\"gaussian\": {\"sigma\": \"?\"}}", &err);
    assert_non_null(t);
    CHECK(dpa_calibrate(t, 1, 0, NULL, 0, &c, &err) == DPA_ENUMERIC, "gaussian at delta 0: %s", err.message);
    dpa_template_free(t);
}

static void test_poisson_rate_zero(void **state)
{
    (void)state;
    /* a Poisson event of rate 0 is the no-op: the same answers as without it */
    const char *with = "{\"compose\": [{\"laplace\": {\"scale\": 2}}, {\"poisson\": {\"rate\": 0, \"event\": "
                       "{\"repeat\": {\"count\": 5, \"event\": {\"gaussian\": {\"sigma\": 0.5}}}}}}, "
                       "{\"poisson\": {\"rate\": 0, \"event\": {\"gaussian\": {\"sigma\": 1}}}}]}";
    const char *without = "{\"laplace\": {\"scale\": 2}}";
    for (size_t m = 0; m < 3; m++) {
        dpa_result a = test_query_delta(with, METHODS[m], 0.1), b = test_query_delta(without, METHODS[m], 0.1);
        CHECK(a.upper == b.upper && a.lower == b.lower, "method %d: [%g, %g] vs [%g, %g]", (int)m, a.lower, a.upper,
              b.lower, b.upper);
        CHECK(strstr(a.note, "sampling rate 0 at /compose/1/poisson") != NULL, "note: %s", a.note);
        a = test_query_epsilon(with, METHODS[m], 0);
        CHECK(a.upper >= 0.5 && a.lower <= 0.5 && a.upper - a.lower < 1e-15, "eps(0): [%.17g, %.17g]", a.lower, a.upper);
    }
    dpa_result z = test_query_epsilon("{\"poisson\": {\"rate\": 0, \"event\": {\"gaussian\": {\"sigma\": 1}}}}",
                                      DPA_METHOD_AUTO, 1e-6);
    CHECK(z.upper == 0 && z.lower == 0 && strstr(z.note, "no-op"), "rate 0 alone: [%g, %g] %s", z.lower, z.upper, z.note);
    test_spec_refused("{\"poisson\": {\"rate\": -0.1, \"event\": {\"gaussian\": {\"sigma\": 1}}}}", "/poisson/rate");
    /* nested rates multiply: 0.5 * 0 = 0 */
    z = test_query_epsilon("{\"poisson\": {\"rate\": 0.5, \"event\": {\"poisson\": {\"rate\": 0, \"event\": {\"pure\": "
                           "{\"epsilon\": 1}}}}}}",
                           DPA_METHOD_AUTO, 0);
    CHECK(z.upper == 0 && z.lower == 0, "nested rate 0: [%g, %g]", z.lower, z.upper);
    /* sample m = 0 (dp_accounting rdp_privacy_accountant_test.py,
     * test_zero_fixed_batch_sample: eps and delta 0), under either relation */
    for (int nb = 0; nb < 2; nb++) {
        char j[200];
        snprintf(j, sizeof j, "{\"sample\": {\"n\": 1000, \"m\": 0, \"event\": {\"gaussian\": {\"sigma\": 1}}}, "
                 "\"neighboring\": \"%s\"}", nb ? "replace" : "add_remove");
        z = test_query_epsilon(j, DPA_METHOD_AUTO, 1e-10);
        CHECK(z.upper == 0 && z.lower == 0 && strstr(z.note, "sampling rate 0 at /sample"), "%s: [%g, %g] %s", j,
              z.lower, z.upper, z.note);
        z = test_query_delta(j, DPA_METHOD_RDP, 1e-10);
        CHECK(z.upper == 0, "%s: delta %g", j, z.upper);
    }
    /* a product of positive rates that underflows is not the no-op: refused */
    {
        dpa_error err;
        dpa_spec *s = dpa_spec_from_json("{\"poisson\": {\"rate\": 1e-200, \"event\": {\"poisson\": {\"rate\": "
                                         "1e-200, \"event\": {\"gaussian\": {\"sigma\": 1}}}}}}",
                                         &err);
        assert_non_null(s);
        dpa_accountant *a = dpa_accountant_new(s, NULL, &err);
        CHECK(!a && strstr(err.message, "rate"), "underflowing rate: %s", a ? "accepted" : err.message);
        dpa_accountant_free(a);
        dpa_spec_free(s);
    }
}

int main(void)
{
    test_seed_from_env();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_dp_accounting_basic, setup, teardown),
        cmocka_unit_test_setup_teardown(test_generated, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refusals_and_calibration, setup, teardown),
        cmocka_unit_test_setup_teardown(test_poisson_rate_zero, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

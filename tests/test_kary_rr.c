/* k-ary randomized response ({"randomized_response": {"epsilon": E, "k": K}},
 * dpa_event_randomized_response_k): parsing, serialization, errors, and the
 * accountants against an independent brute force.
 *
 * Reference: the composition of n steps has loss eps (a - b) with (a, b, c)
 * multinomial(n; p_t, p_o, (k - 2) p_o), p_t = e^eps / (e^eps + k - 1),
 * p_o = 1 / (e^eps + k - 1) (the true bucket, the neighbour's bucket, the
 * others), so delta(t) = sum P(a, b) (1 - e^{t - eps (a - b)})_+, summed here
 * over every (a, b) in long double with lgammal (n <= 60: at most 1891
 * terms, each with relative error below ~1e-16; REF_TOL covers the sum).
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
#include "dpacct/calibrate.h"
#include "check.h"

/* relative error allowance of the brute-force reference (see the header) */
#define REF_TOL 1e-12L

static long double brute_delta(int n, double eps, double k, double t)
{
    long double e = eps, D = expl(e) + (long double)k - 1;
    long double lpt = e - logl(D), lpo = -logl(D), lpz = k > 2 ? logl((long double)k - 2) - logl(D) : -INFINITY;
    long double sum = 0;
    for (int a = 0; a <= n; a++)
        for (int b = 0; a + b <= n; b++) {
            int c = n - a - b;
            if (c > 0 && k == 2) continue;
            long double s = e * (a - b);
            if (!(s > t)) continue;
            long double lp = lgammal(n + 1) - lgammal(a + 1) - lgammal(b + 1) - lgammal(c + 1) + a * lpt + b * lpo +
                             (c ? c * lpz : 0);
            sum += expl(lp) * -expm1l(t - s);
        }
    return sum;
}

static char *spec(int n, double eps, double k)
{
    char *s = malloc(256);
    assert_non_null(s);
    snprintf(s, 256, "{\"repeat\": {\"count\": %d, \"event\": {\"randomized_response\": {\"epsilon\": %.17g, \"k\": %.17g}}}}",
             n, eps, k);
    return s;
}

static void test_parse(void **state)
{
    (void)state;
    dpa_error err;
    /* k defaults to 2 and is not written back for binary RR */
    dpa_spec *s = dpa_spec_from_json("{\"randomized_response\": {\"epsilon\": 1}}", &err);
    assert_non_null(s);
    char *j = dpa_spec_to_json(s);
    CHECK(j && !strstr(j, "\"k\""), "binary RR serialized with k: %s", j ? j : "(null)");
    free(j);
    dpa_spec_free(s);
    s = dpa_spec_from_json("{\"randomized_response\": {\"epsilon\": 1, \"k\": 10}}", &err);
    assert_non_null(s);
    j = dpa_spec_to_json(s);
    CHECK(j && strstr(j, "\"k\":10"), "k-ary RR serialized without k: %s", j ? j : "(null)");
    dpa_spec *s2 = j ? dpa_spec_from_json(j, &err) : NULL;
    CHECK(s2 != NULL, "round trip of %s", j ? j : "(null)");
    dpa_spec_free(s2);
    free(j);
    dpa_spec_free(s);
    /* "p" with k: p = 0.5 of the true bucket among 3 is eps = log(0.5 * 2 / 0.5) = log 2 */
    dpa_accountant *a = try_accountant("{\"randomized_response\": {\"p\": 0.5, \"k\": 3}}", DPA_METHOD_PLD, &err);
    dpa_accountant *b = try_accountant("{\"randomized_response\": {\"epsilon\": 0.69314718055994531, \"k\": 3}}", DPA_METHOD_PLD, &err);
    assert_non_null(a);
    assert_non_null(b);
    dpa_result ra, rb;
    assert_int_equal(dpa_accountant_delta(a, 0.3, &ra, &err), DPA_OK);
    assert_int_equal(dpa_accountant_delta(b, 0.3, &rb, &err), DPA_OK);
    CHECK(fabs(ra.upper - rb.upper) <= 1e-15, "p form %.17g vs eps form %.17g", ra.upper, rb.upper);
    dpa_accountant_free(a);
    dpa_accountant_free(b);
    /* p = 1/k exactly: eps 0, the identity */
    a = try_accountant("{\"randomized_response\": {\"p\": 0.25, \"k\": 4}}", DPA_METHOD_AUTO, &err);
    assert_non_null(a);
    assert_int_equal(dpa_accountant_epsilon(a, 1e-6, &ra, &err), DPA_OK);
    CHECK(ra.upper == 0, "p = 1/k: eps %.17g", ra.upper);
    dpa_accountant_free(a);

    /* errors name the key */
    static const struct { const char *json, *want; } bad[] = {
        {"{\"randomized_response\": {\"epsilon\": 1, \"k\": 1}}", "/randomized_response/k: must be an integer >= 2"},
        {"{\"randomized_response\": {\"epsilon\": 1, \"k\": 2.5}}", "/randomized_response/k: must be an integer >= 2"},
        {"{\"randomized_response\": {\"epsilon\": 1, \"k\": -3}}", "/randomized_response/k"},
        {"{\"randomized_response\": {\"epsilon\": 1, \"k\": \"ten\"}}", "/randomized_response/k"},
        {"{\"randomized_response\": {\"epsilon\": 1, \"k\": 1e13}}", "must be an integer <= 1e+12"},
        {"{\"randomized_response\": {\"p\": 0.2, \"k\": 4}}", "/randomized_response/p: must be in [0.25, 1)"},
        {"{\"randomized_response\": {\"k\": 4}}", "missing key \"epsilon\" (or \"p\")"},
        {"{\"randomized_response\": {\"epsilon\": 1, \"buckets\": 4}}", "expected epsilon, k, p"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        memset(&err, 0, sizeof err);
        s = dpa_spec_from_json(bad[i].json, &err);
        CHECK(!s && err.status == DPA_EINVAL && strstr(err.message, bad[i].want),
              "%s: got \"%s\", want \"%s\"", bad[i].json, err.message, bad[i].want);
        dpa_spec_free(s);
    }
    /* the C constructor */
    dpa_event *e = dpa_event_randomized_response_k(1, 1, &err);
    CHECK(!e && err.status == DPA_EINVAL, "k = 1 accepted by the constructor");
    e = dpa_event_randomized_response_k(1, 5, &err);
    assert_non_null(e);
    dpa_event_free(e);
}

/* every method that takes it brackets the brute force (pld certified,
 * phi within its estimate's tolerance, rdp from above); clt and exact
 * refuse and say which method can; auto picks pld */
static void test_vs_brute(void **state)
{
    (void)state;
    static const struct { int n; double eps, k; } cs[] = {
        {1, 1, 3}, {1, 3, 100}, {5, 0.5, 4}, {20, 1, 10}, {40, 0.2, 1000}, {60, 0.7, 5}, {30, 2, 1e6},
    };
    double worst_pld = 0;
    for (size_t i = 0; i < sizeof cs / sizeof *cs; i++) {
        char *json = spec(cs[i].n, cs[i].eps, cs[i].k);
        dpa_error err;
        dpa_accountant *a = try_accountant(json, DPA_METHOD_AUTO, &err);
        assert_non_null(a);
        CHECK(dpa_accountant_method(a) == DPA_METHOD_PLD, "%s: auto picked %d", json, (int)dpa_accountant_method(a));
        dpa_accountant_free(a);
        for (int m = 0; m < 2; m++) {
            dpa_accountant *r = try_accountant(json, m ? DPA_METHOD_CLT : DPA_METHOD_EXACT, &err);
            CHECK(!r && err.status == DPA_EUNSUPPORTED && strstr(err.message, "pld"), "%s: method %s: %s", json,
                  m ? "clt" : "exact", r ? "accepted" : err.message);
            dpa_accountant_free(r);
        }
        const dpa_method ms[] = {DPA_METHOD_PLD, DPA_METHOD_PHI, DPA_METHOD_RDP};
        for (size_t j = 0; j < sizeof ms / sizeof *ms; j++) {
            a = try_accountant(json, ms[j], &err);
            assert_non_null(a);
            double L = cs[i].eps * cs[i].n;
            for (int q = 0; q <= 8; q++) {
                double t = q < 8 ? L * (q / 8.0 - 0.1) : 0.5 * cs[i].eps;
                dpa_result r;
                assert_int_equal(dpa_accountant_delta(a, t, &r, &err), DPA_OK);
                long double ref = brute_delta(cs[i].n, cs[i].eps, cs[i].k, t), tol = REF_TOL * ref + 1e-300L;
                if (ms[j] == DPA_METHOD_PLD) {
                    CHECK(r.lower <= ref + tol && r.upper >= ref - tol, "%s pld: delta(%g) [%.17g, %.17g], ref %.17Lg",
                          json, t, r.lower, r.upper, ref);
                    if (ref > 1e-12 && (r.upper - r.lower) / ref > worst_pld) worst_pld = (r.upper - r.lower) / ref;
                } else if (ms[j] == DPA_METHOD_PHI) {
                    /* an estimate: within 1e-6 relative (plus 1e-12) of the truth */
                    CHECK(fabsl(r.upper - ref) <= 1e-6L * ref + 1e-12L, "%s phi: delta(%g) %.17g, ref %.17Lg", json,
                          t, r.upper, ref);
                } else {
                    CHECK(r.upper >= ref - tol, "%s rdp: delta(%g) upper %.17g below ref %.17Lg", json, t, r.upper,
                          ref);
                }
            }
            dpa_accountant_free(a);
        }
        free(json);
    }
    print_message("k-ary RR: worst relative pld delta bracket %.3g\n", worst_pld);
}

/* one step in closed form: delta(t) = p_t - e^t p_o for 0 <= t < eps */
static void test_single_step(void **state)
{
    (void)state;
    static const double ks[] = {2, 3, 10, 1e4};
    for (size_t i = 0; i < sizeof ks / sizeof *ks; i++) {
        double eps = 1.5, k = ks[i];
        char *json = spec(1, eps, k);
        dpa_error err;
        dpa_accountant *a = try_accountant(json, DPA_METHOD_AUTO, &err);
        assert_non_null(a);
        for (double t = 0; t < eps; t += 0.25) {
            dpa_result r;
            assert_int_equal(dpa_accountant_delta(a, t, &r, &err), DPA_OK);
            double ref = (exp(eps) - exp(t)) / (exp(eps) + k - 1);
            CHECK(r.lower <= ref * (1 + 1e-12) && r.upper >= ref * (1 - 1e-12), "k %g: delta(%g) [%.17g, %.17g] vs %.17g",
                  k, t, r.lower, r.upper, ref);
        }
        dpa_result r;
        assert_int_equal(dpa_accountant_epsilon(a, 1e-9, &r, &err), DPA_OK);
        /* eps(delta) = log(e^eps - delta (e^eps + k - 1)) */
        double eref = log(exp(eps) - 1e-9 * (exp(eps) + k - 1));
        CHECK(r.upper >= eref - 1e-12 && r.lower <= eref + 1e-12 && r.upper - eref < 1e-3,
              "k %g: eps(1e-9) [%.17g, %.17g] vs %.17g", k, r.lower, r.upper, eref);
        dpa_accountant_free(a);
        free(json);
    }
}

/* regression (review): a huge eps made the rdp method report eps <= 0 and
 * delta <= 0 (the middle atom's weight underflowed, 0 * inf error = NaN,
 * read as log 0); a "?" for k is refused */
static void test_extremes(void **state)
{
    (void)state;
    dpa_error err;
    static const double es[] = {1e17, 1e20, 1e50, 1e300};
    for (size_t i = 0; i < sizeof es / sizeof *es; i++) {
        char json[256];
        snprintf(json, sizeof json, "{\"randomized_response\": {\"epsilon\": %.17g, \"k\": 3}}", es[i]);
        const dpa_method ms[] = {DPA_METHOD_AUTO, DPA_METHOD_PLD, DPA_METHOD_RDP};
        for (size_t m = 0; m < sizeof ms / sizeof *ms; m++) {
            dpa_accountant *a = try_accountant(json, ms[m], &err);
            assert_non_null(a);
            dpa_result r;
            assert_int_equal(dpa_accountant_delta(a, 1, &r, &err), DPA_OK);
            /* truth: (e^E - e) / (e^E + 2), 1 in double precision */
            CHECK(r.upper >= 1 - 1e-12, "%s method %d: delta(1) upper %.17g", json, (int)ms[m], r.upper);
            assert_int_equal(dpa_accountant_epsilon(a, 1e-6, &r, &err), DPA_OK);
            CHECK(r.upper >= es[i] * (1 - 1e-12), "%s method %d: eps(1e-6) upper %.17g", json, (int)ms[m], r.upper);
            dpa_accountant_free(a);
        }
    }
    dpa_spec *s = dpa_spec_from_json("{\"randomized_response\": {\"p\": 0.6, \"k\": \"?\"}}", &err);
    CHECK(!s, "a placeholder for k accepted as a spec");
    dpa_spec_free(s);
    dpa_template *t = dpa_template_from_json("{\"randomized_response\": {\"p\": 0.6, \"k\": \"?\"}}", &err);
    CHECK(!t && strstr(err.message, "/randomized_response/k: the number of buckets cannot be calibrated"),
          "a placeholder for k: %s", t ? "accepted" : err.message);
    dpa_template_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_parse, setup, teardown),
        cmocka_unit_test_setup_teardown(test_vs_brute, setup, teardown),
        cmocka_unit_test_setup_teardown(test_single_step, setup, teardown),
        cmocka_unit_test_setup_teardown(test_extremes, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

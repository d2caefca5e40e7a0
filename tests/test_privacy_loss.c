/* A mechanism given by its privacy loss distribution as data
 * ({"privacy_loss": {"loss": [...], "mass": [...]}}, dpa_event_privacy_loss):
 * parsing, errors, serialization, and the accountants against an
 * independent brute force.
 *
 * Reference: a table with finite atoms (w_i, a_i) (a_i the first
 * distribution's masses, b_i = a_i e^-w_i the second's) and first-
 * distribution mass r = 1 - sum a_i at +inf, composed n times, has
 *   delta_remove(t) = 1 - (1 - r)^n + sum_c M(c) prod a_i^c_i (1 - e^{t - sum c_i w_i})_+
 * over the count vectors c with sum c_i = n (M the multinomial
 * coefficient); the add direction is the same with the reversed table
 * (-w_i, b_i) and its +inf mass 1 - sum b_i.  The accountant reports the
 * larger.  Summed in long double over every count vector (3 atoms, n <= 30:
 * 496 terms; relative error far below REF_TOL).
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

#define REF_TOL 1e-12L

/* one direction of n-fold composition of 3 finite atoms plus +inf mass r */
static long double brute_dir(const long double w[3], const long double a[3], long double r, int n, long double t)
{
    long double sum = 1 - powl(1 - r, n);
    for (int c0 = 0; c0 <= n; c0++)
        for (int c1 = 0; c0 + c1 <= n; c1++) {
            int c2 = n - c0 - c1;
            long double L = c0 * w[0] + c1 * w[1] + c2 * w[2];
            if (!(L > t)) continue;
            long double lp = lgammal(n + 1) - lgammal(c0 + 1) - lgammal(c1 + 1) - lgammal(c2 + 1) +
                             (c0 ? c0 * logl(a[0]) : 0) + (c1 ? c1 * logl(a[1]) : 0) + (c2 ? c2 * logl(a[2]) : 0);
            sum += expl(lp) * -expm1l(t - L);
        }
    return sum;
}

static long double brute(const double w[3], const double a[3], int n, long double t)
{
    long double wr[3], ar[3], wa[3], aa[3], sa = 0, sb = 0;
    for (int i = 0; i < 3; i++) {
        wr[i] = w[i];
        ar[i] = a[i];
        sa += ar[i];
        /* the reversal, ascending */
        wa[2 - i] = -(long double)w[i];
        aa[2 - i] = a[i] * expl(-(long double)w[i]);
        sb += aa[2 - i];
    }
    long double d1 = brute_dir(wr, ar, 1 - sa, n, t), d2 = brute_dir(wa, aa, 1 - sb, n, t);
    return d1 > d2 ? d1 : d2;
}

static void test_parse(void **state)
{
    (void)state;
    dpa_error err;
    /* equal losses are merged, the table is sorted; round trip */
    dpa_spec *s = dpa_spec_from_json("{\"privacy_loss\": {\"loss\": [1, -1, 1], \"mass\": [0.5, 0.25, 0.25]}}", &err);
    assert_non_null(s);
    char *j = dpa_spec_to_json(s);
    CHECK(j && strstr(j, "\"loss\":[-1,1],\"mass\":[0.25,0.75]"), "canonical form %s", j ? j : "(null)");
    dpa_spec *s2 = j ? dpa_spec_from_json(j, &err) : NULL;
    CHECK(s2 != NULL, "round trip of %s", j ? j : "(null)");
    dpa_spec_free(s2);
    free(j);
    dpa_spec_free(s);
    static const struct { const char *json, *want; } bad[] = {
        {"{\"privacy_loss\": {\"loss\": [0, 1], \"mass\": [0.6, 0.6]}}", "not a privacy loss distribution"},
        {"{\"privacy_loss\": {\"loss\": [-3, 1], \"mass\": [0.5, 0.5]}}", "not a privacy loss distribution"},
        {"{\"privacy_loss\": {\"loss\": [0, 1], \"mass\": [0.5, -0.1]}}", "/privacy_loss/mass/1: must be in [0, 1]"},
        {"{\"privacy_loss\": {\"loss\": [0, 800], \"mass\": [0.5, 0.1]}}", "/privacy_loss/loss/1: must be finite"},
        {"{\"privacy_loss\": {\"loss\": [0, 1], \"mass\": [0.5]}}", "must have the same length"},
        {"{\"privacy_loss\": {\"loss\": [], \"mass\": []}}", "/privacy_loss/loss: expected a non-empty array"},
        {"{\"privacy_loss\": {\"loss\": [0, \"?\"], \"mass\": [0.5, 0.1]}}", "cannot stand in a privacy_loss table"},
        {"{\"privacy_loss\": {\"loss\": [0], \"mass\": [\"x\"]}}", "/privacy_loss/mass/0: expected a number"},
        {"{\"privacy_loss\": {\"loss\": [0], \"mass\": [1], \"delta\": 0}}", "unknown key \"delta\" (expected loss, mass)"},
        {"{\"privacy_loss\": {\"mass\": [1]}}", "missing key \"loss\""},
        /* above 1 beyond rounding (the exact method's bracket fell below the
         * literal table's truth for such sums: now refused) */
        {"{\"privacy_loss\": {\"loss\": [1.791759469228055, -0.7537718023763801], \"mass\": [0.6, 0.4000000009]}}",
         "renormalize the table"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        memset(&err, 0, sizeof err);
        s = dpa_spec_from_json(bad[i].json, &err);
        CHECK(!s && err.status == DPA_EINVAL && strstr(err.message, bad[i].want), "%s: got \"%s\", want \"%s\"",
              bad[i].json, err.message, bad[i].want);
        dpa_spec_free(s);
    }
    const double l[2] = {-1, 1}, m[2] = {0.25, 0.75}, mb[2] = {0.9, 0.9};
    dpa_event *e = dpa_event_privacy_loss(l, m, 2, &err);
    assert_non_null(e);
    dpa_event_free(e);
    e = dpa_event_privacy_loss(l, mb, 2, &err);
    CHECK(!e && err.status == DPA_EINVAL, "masses summing to 1.8 accepted");
    e = dpa_event_privacy_loss(l, m, 0, &err);
    CHECK(!e && err.status == DPA_EINVAL, "an empty table accepted");
}

/* the table of randomized response eps 1 accounts as randomized response */
static void test_rr_table(void **state)
{
    (void)state;
    const char *tab = "{\"repeat\": {\"count\": 100, \"event\": {\"privacy_loss\": {\"loss\": [-1, 1], \"mass\": "
                      "[0.2689414213699951, 0.7310585786300049]}}}}";
    const char *rr = "{\"repeat\": {\"count\": 100, \"event\": {\"randomized_response\": {\"epsilon\": 1}}}}";
    /* tables are data: the exact method leaves them to pld */
    {
        dpa_error err;
        dpa_accountant *x = try_accountant(tab, DPA_METHOD_EXACT, &err);
        CHECK(!x && err.status == DPA_EUNSUPPORTED, "exact took a privacy_loss table");
        dpa_accountant_free(x);
        x = try_accountant(tab, DPA_METHOD_AUTO, &err);
        assert_non_null(x);
        CHECK(dpa_accountant_method(x) == DPA_METHOD_PLD, "auto picked %d", (int)dpa_accountant_method(x));
        dpa_accountant_free(x);
    }
    const dpa_method ms[] = {DPA_METHOD_AUTO, DPA_METHOD_PLD, DPA_METHOD_PHI};
    for (size_t i = 0; i < sizeof ms / sizeof *ms; i++) {
        dpa_error err;
        dpa_accountant *a = try_accountant(tab, ms[i], &err), *b = try_accountant(rr, ms[i], &err);
        assert_non_null(a);
        assert_non_null(b);
        dpa_result ra, rb;
        assert_int_equal(dpa_accountant_epsilon(a, 1e-6, &ra, &err), DPA_OK);
        assert_int_equal(dpa_accountant_epsilon(b, 1e-6, &rb, &err), DPA_OK);
        /* the table's masses are RR's rounded to doubles: its second
         * distribution sums to 1 - 3.9e-17, a +inf mass of 3.9e-15 in the add
         * direction after 100 steps, which moves eps by ~4e-9 */
        CHECK(ra.lower <= rb.upper + 1e-7 && rb.lower <= ra.upper + 1e-7 &&
                  fabs(ra.upper - rb.upper) < (ms[i] == DPA_METHOD_PHI ? 1e-6 : 1e-3 * rb.upper),
              "method %d: table [%.17g, %.17g], rr [%.17g, %.17g]", (int)ms[i], ra.lower, ra.upper, rb.lower,
              rb.upper);
        dpa_accountant_free(a);
        dpa_accountant_free(b);
    }
    /* and under Poisson subsampling */
    const char *tabq = "{\"repeat\": {\"count\": 50, \"event\": {\"poisson\": {\"rate\": 0.1, \"event\": {\"privacy_loss\": "
                       "{\"loss\": [-1, 1], \"mass\": [0.2689414213699951, 0.7310585786300049]}}}}}}";
    const char *rrq = "{\"repeat\": {\"count\": 50, \"event\": {\"poisson\": {\"rate\": 0.1, \"event\": "
                      "{\"randomized_response\": {\"epsilon\": 1}}}}}}";
    dpa_error err;
    dpa_accountant *a = try_accountant(tabq, DPA_METHOD_AUTO, &err), *b = try_accountant(rrq, DPA_METHOD_AUTO, &err);
    assert_non_null(a);
    assert_non_null(b);
    dpa_result ra, rb;
    assert_int_equal(dpa_accountant_epsilon(a, 1e-6, &ra, &err), DPA_OK);
    assert_int_equal(dpa_accountant_epsilon(b, 1e-6, &rb, &err), DPA_OK);
    CHECK(ra.lower <= rb.upper + 1e-7 && rb.lower <= ra.upper + 1e-7, "subsampled: table [%.17g, %.17g], rr [%.17g, %.17g]",
          ra.lower, ra.upper, rb.lower, rb.upper);
    dpa_accountant_free(a);
    dpa_accountant_free(b);
}

/* an asymmetric table with a +inf mass against the brute force, both
 * directions */
static void test_vs_brute(void **state)
{
    (void)state;
    static const struct { double w[3], a[3]; int n; } cs[] = {
        {{-2, 0.5, 3}, {0.01, 0.5, 0.48}, 1},   /* +inf mass 0.01, B sums to 0.40 */
        {{-2, 0.5, 3}, {0.01, 0.5, 0.48}, 20},
        {{-0.4, 0.1, 0.7}, {0.2, 0.5, 0.3}, 30},  /* no +inf mass; B sums below 1 */
        {{-1.5, -0.2, 2.5}, {0.05, 0.6, 0.3}, 25},
    };
    for (size_t i = 0; i < sizeof cs / sizeof *cs; i++) {
        /* validity of the case: B's masses sum to at most 1 */
        double sb = 0;
        for (int j = 0; j < 3; j++) sb += cs[i].a[j] * exp(-cs[i].w[j]);
        assert_true(sb <= 1);
        char json[512];
        snprintf(json, sizeof json,
                 "{\"repeat\": {\"count\": %d, \"event\": {\"privacy_loss\": {\"loss\": [%.17g, %.17g, %.17g], "
                 "\"mass\": [%.17g, %.17g, %.17g]}}}}",
                 cs[i].n, cs[i].w[0], cs[i].w[1], cs[i].w[2], cs[i].a[0], cs[i].a[1], cs[i].a[2]);
        const dpa_method ms[] = {DPA_METHOD_AUTO, DPA_METHOD_PLD, DPA_METHOD_PHI, DPA_METHOD_RDP};
        for (size_t k = 0; k < sizeof ms / sizeof *ms; k++) {
            dpa_error err;
            dpa_accountant *a = try_accountant(json, ms[k], &err);
            assert_non_null(a);
            double L = 3.0 * cs[i].n;
            for (int q = 0; q <= 10; q++) {
                double t = L * (q / 10.0 - 0.2);
                dpa_result r;
                assert_int_equal(dpa_accountant_delta(a, t, &r, &err), DPA_OK);
                long double ref = brute(cs[i].w, cs[i].a, cs[i].n, t), tol = REF_TOL * ref + 1e-300L;
                if (ms[k] == DPA_METHOD_PHI)
                    CHECK(fabsl(r.upper - ref) <= 1e-6L * ref + 1e-12L, "%s phi: delta(%g) %.17g vs %.17Lg", json, t,
                          r.upper, ref);
                else if (ms[k] == DPA_METHOD_RDP)
                    CHECK(r.upper >= ref - tol, "%s rdp: delta(%g) %.17g below %.17Lg", json, t, r.upper, ref);
                else
                    CHECK(r.lower <= ref + tol && r.upper >= ref - tol, "%s method %d: delta(%g) [%.17g, %.17g] vs %.17Lg",
                          json, (int)ms[k], t, r.lower, r.upper, ref);
            }
            dpa_accountant_free(a);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_parse, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rr_table, setup, teardown),
        cmocka_unit_test_setup_teardown(test_vs_brute, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

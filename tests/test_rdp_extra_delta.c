/* (eps, delta) steps inside the rdp method: RR_eps in the Renyi curve and
 * the delta kept apart, delta <= (1 - P) + P delta_rest, P = prod (1 -
 * delta_i)^{k_i} (src/rdp/rdp_method.c, docs/rdp.md §4.3).
 *
 * References: the structure of dp_accounting's
 * rdp/rdp_privacy_accountant_test.py (numbers only): test_epsilon_delta_dp_event
 * (Gaussian sigma 1 with EpsilonDelta(0, 0.01): eps at 0.02 is the
 * Gaussian's at 1 - 0.98 / 0.99, delta at 1 is ref + 0.01 - 0.01 ref, eps at
 * 0.005 is inf) and test_epsilon_delta_dp_event_self_composed (10 x (0,
 * 0.001): extra delta 1 - 0.999^10); soundness against the pld method's
 * certified lower bounds (an independent computation: the exact pairs
 * RR_{eps,delta} composed on a grid) over generated compositions.
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

static void test_dp_accounting_structure(void **state)
{
    (void)state;
    const char *both = "{\"compose\": [{\"gaussian\": {\"sigma\": 1}}, {\"approx\": {\"epsilon\": 0, \"delta\": 0.01}}]}";
    const char *ref = "{\"gaussian\": {\"sigma\": 1}}";
    dpa_result a = test_query_epsilon(both, DPA_METHOD_RDP, 0.02);
    dpa_result r = test_query_epsilon(ref, DPA_METHOD_RDP, 1 - 0.98 / 0.99);
    /* the shifted target is rounded down by a few ulp: eps a hair larger */
    CHECK(a.upper >= r.upper && a.upper - r.upper <= 1e-9 * r.upper, "eps(0.02): %.17g vs ref %.17g", a.upper, r.upper);
    CHECK(strstr(a.note, "extra delta 0.01 kept apart") != NULL, "note: %s", a.note);
    a = test_query_delta(both, DPA_METHOD_RDP, 1.0);
    r = test_query_delta(ref, DPA_METHOD_RDP, 1.0);
    double want = r.upper + 0.01 - 0.01 * r.upper;
    CHECK(a.upper >= want && a.upper - want <= 1e-14, "delta(1): %.17g vs %.17g", a.upper, want);
    a = test_query_epsilon(both, DPA_METHOD_RDP, 0.005);
    CHECK(a.upper == INFINITY, "eps(0.005): %g", a.upper);
    /* 10 x (0, 0.001): delta at any eps >= 0 is the extra delta itself */
    a = test_query_delta("{\"repeat\": {\"count\": 10, \"event\": {\"approx\": {\"epsilon\": 0, \"delta\": 0.001}}}}",
                         DPA_METHOD_RDP, 0.5);
    want = 1 - pow(0.999, 10);
    CHECK(a.upper >= want && a.upper - want <= 1e-14, "10 x (0, 0.001): %.17g vs %.17g", a.upper, want);
}

static void test_sound_against_pld(void **state)
{
    (void)state;
    int n = SANITIZED ? 4 : 25;
    for (int c = 0; c < n; c++) {
        char j[512];
        double e = test_log_unif(0.01, 2), d = test_log_unif(1e-9, 1e-3), s = test_log_unif(0.5, 20);
        int k = 1 + (int)(test_unif() * 50);
        snprintf(j, sizeof j,
                 "{\"compose\": [{\"repeat\": {\"count\": %d, \"event\": {\"approx\": {\"epsilon\": %.17g, \"delta\": "
                 "%.17g}}}}, {\"repeat\": {\"count\": 10, \"event\": {\"gaussian\": {\"sigma\": %.17g}}}}]}",
                 k, e, d, s);
        double extra = 1 - pow(1 - d, k);
        double target = fmin(0.5, 10 * extra + 1e-6);
        dpa_result rr = test_query_epsilon(j, DPA_METHOD_RDP, target);
        dpa_result pl = test_query_epsilon(j, DPA_METHOD_PLD, target);
        CHECK(isfinite(rr.upper) && rr.upper >= pl.lower, "%s eps(%g): rdp %.17g below pld lower %.17g", j, target,
              rr.upper, pl.lower);
        double eps = test_unif() * 3;
        dpa_result dr = test_query_delta(j, DPA_METHOD_RDP, eps);
        dpa_result dp = test_query_delta(j, DPA_METHOD_PLD, eps);
        CHECK(dr.upper >= dp.lower && dr.upper >= extra, "%s delta(%g): rdp %.17g, pld lower %.17g, extra %g", j, eps,
              dr.upper, dp.lower, extra);
    }
}

int main(void)
{
    test_seed_from_env();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_dp_accounting_structure, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sound_against_pld, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

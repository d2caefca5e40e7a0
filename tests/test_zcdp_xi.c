/* The zcdp leaf with xi > 0, (xi, rho)-zCDP: D_alpha <= xi + rho alpha for
 * every alpha > 1 (Bun & Steinke 2016 Def 1.1), in the spec language, the C
 * API, the rdp method and the filters (docs/spec.md, docs/rdp.md §2 item 8).
 *
 * References (independent of the accountant's order search): the classical
 * conversion (M17 Prop 3) of the curve xi + rho alpha in closed form,
 *   eps(delta) = xi + rho + 2 sqrt(rho log(1/delta))  at alpha* = 1 + sqrt(log(1/delta)/rho),
 *   delta(eps) = exp(-(eps - xi - rho)^2 / (4 rho))    at alpha* = (eps - xi + rho)/(2 rho)
 * (valid while alpha* lies inside the order grid, which the sweep keeps);
 * the improved conversion (CKS20 Prop 12) minimized over alpha by a dense
 * scan with golden-section polish; composition: k steps of (xi, rho) are
 * (k xi, k rho)-zCDP (Bun-Steinke Lemma 1.7), so both specs give the same
 * bound.  Properties over generated (rho, xi, delta): the certified upper
 * bound is never below the closed form (rounded up; no tolerance on that
 * side), and within 1e-9 relative above it.
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
#include "dpacct/filter.h"
#include "check.h"

static dpa_result query(const char *json, int eps_query, double x, dpa_rdp_conv c)
{
    dpa_error err;
    dpa_spec *s = dpa_spec_from_json(json, &err);
    if (!s) fail_msg("spec %s: %s", json, err.message);
    dpa_options o;
    dpa_options_init(&o);
    o.method = DPA_METHOD_RDP;
    o.rdp_conversion = c;
    dpa_accountant *a = dpa_accountant_new(s, &o, &err);
    dpa_spec_free(s);
    if (!a) fail_msg("accountant for %s: %s", json, err.message);
    dpa_result r;
    dpa_status st = eps_query ? dpa_accountant_epsilon(a, x, &r, &err) : dpa_accountant_delta(a, x, &r, &err);
    if (st) fail_msg("%s: %s", json, err.message);
    dpa_accountant_free(a);
    return r;
}

/* the improved conversion's eps at order a of the curve xi + rho a (CKS20 Prop 12) */
static double improved_eps(double rho, double xi, double delta, double a)
{
    return xi + rho * a + log((a - 1) / a) - (log(delta) + log(a)) / (a - 1);
}

/* its minimum over a > 1: a scan on log(a - 1), then golden-section search */
static double improved_min(double rho, double xi, double delta)
{
    double best = INFINITY, bx = 0;
    for (int i = 0; i <= 4000; i++) {
        double x = -6 + 16 * i / 4000.0, v = improved_eps(rho, xi, delta, 1 + exp(x));
        if (v < best) best = v, bx = x;
    }
    double lo = bx - 0.004, hi = bx + 0.004, g = (sqrt(5) - 1) / 2;
    for (int i = 0; i < 100; i++) {
        double m1 = hi - g * (hi - lo), m2 = lo + g * (hi - lo);
        if (improved_eps(rho, xi, delta, 1 + exp(m1)) < improved_eps(rho, xi, delta, 1 + exp(m2))) hi = m2;
        else lo = m1;
    }
    return fmin(best, improved_eps(rho, xi, delta, 1 + exp(0.5 * (lo + hi))));
}

static void test_closed_form_conversions(void **state)
{
    (void)state;
    int n = SANITIZED ? 6 : 60;
    for (int c = 0; c < n; c++) {
        double rho = test_log_unif(1e-3, 2), xi = test_log_unif(1e-4, 3), delta = test_log_unif(1e-12, 1e-2);
        char j[256];
        snprintf(j, sizeof j, "{\"zcdp\": {\"rho\": %.17g, \"xi\": %.17g}}", rho, xi);
        double L = -log(delta), want = xi + rho + 2 * sqrt(rho * L), astar = 1 + sqrt(L / rho);
        if (astar > 1000) continue; /* outside the default order grid's dense part */
        dpa_result r = query(j, 1, delta, DPA_CONV_CLASSICAL);
        /* want is a sum of three doubles and a sqrt: 4 ulp */
        double slack = 4 * 1.2e-16 * want;
        CHECK(r.upper >= want - slack && r.upper <= want * (1 + 1e-9), "%s eps(%g) classical %.17g vs %.17g", j,
              delta, r.upper, want);
        double im = improved_min(rho, xi, delta);
        r = query(j, 1, delta, DPA_CONV_IMPROVED);
        /* the scan is at or above the infimum: the bound may sit below it
         * by what the scan misses (1e-9 relative), never far */
        CHECK(r.upper <= im * (1 + 1e-9) + 1e-12 && r.upper >= im * (1 - 1e-9) - 1e-12,
              "%s eps(%g) improved %.17g vs scan %.17g", j, delta, r.upper, im);
        dpa_result o = query(j, 1, delta, DPA_CONV_OPTIMAL);
        CHECK(o.upper <= r.upper * (1 + 1e-12) && o.upper >= xi, "%s optimal %.17g improved %.17g", j, o.upper, r.upper);
        /* delta(eps) at an eps whose optimal order is inside the grid */
        double eps = xi + rho + 2 * sqrt(rho * L); /* then delta(eps) = delta, alpha* as above */
        r = query(j, 0, eps, DPA_CONV_CLASSICAL);
        double dwant = exp(-(eps - xi - rho) * (eps - xi - rho) / (4 * rho));
        CHECK(r.upper >= dwant * (1 - 1e-13) && r.upper <= dwant * (1 + 1e-8), "%s delta(%.17g) %.17g vs %.17g", j, eps,
              r.upper, dwant);
    }
}

/* k x (xi, rho) = (k xi, k rho) (Bun-Steinke Lemma 1.7); xi 0 is the old leaf */
static void test_composition_and_xi_zero(void **state)
{
    (void)state;
    const char *k10 = "{\"repeat\": {\"count\": 10, \"event\": {\"zcdp\": {\"rho\": 0.01, \"xi\": 0.05}}}}";
    const char *one = "{\"zcdp\": {\"rho\": 0.1, \"xi\": 0.5}}";
    dpa_result a = query(k10, 1, 1e-6, DPA_CONV_OPTIMAL), b = query(one, 1, 1e-6, DPA_CONV_OPTIMAL);
    CHECK(fabs(a.upper - b.upper) <= 1e-12 * b.upper, "10 x (0.05, 0.01) %.17g vs (0.5, 0.1) %.17g", a.upper, b.upper);
    /* the classical value of (0.5, 0.1) at 1e-6: 0.6 + 2 sqrt(0.1 ln 1e6) */
    a = query(one, 1, 1e-6, DPA_CONV_CLASSICAL);
    CHECK(a.upper >= 2.9507880004767997 && a.upper <= 2.9507880004768 * (1 + 1e-12), "classical %.17g", a.upper);
    a = query("{\"zcdp\": {\"rho\": 0.1, \"xi\": 0}}", 1, 1e-6, DPA_CONV_OPTIMAL);
    b = query("{\"zcdp\": {\"rho\": 0.1}}", 1, 1e-6, DPA_CONV_OPTIMAL);
    CHECK(a.upper == b.upper, "xi 0 %.17g vs omitted %.17g", a.upper, b.upper);
    /* dp_accounting/rdp/rdp_privacy_accountant_test.py test_compute_rdp_multi_zcdp's
     * composition (xi 3.14159 + 1.23456, rho 2.71828 + 6.28319: its RDP at order 2
     * is xi1 + xi2 + 2 (rho1 + rho2)), through the classical conversion's closed form
     * (want: five roundings and a sqrt, within 1e-15 relative) */
    a = query("{\"compose\": [{\"zcdp\": {\"rho\": 2.71828, \"xi\": 3.14159}}, "
              "{\"zcdp\": {\"rho\": 6.28319, \"xi\": 1.23456}}]}",
              1, 1e-6, DPA_CONV_CLASSICAL);
    double rs = 2.71828 + 6.28319, want = 3.14159 + 1.23456 + rs + 2 * sqrt(rs * log(1e6));
    CHECK(a.upper >= want * (1 - 1e-15) && a.upper <= want * (1 + 1e-9), "multi zcdp %.17g vs %.17g", a.upper, want);
    /* the C constructor builds the same leaf; the writer omits xi 0 */
    dpa_error err;
    dpa_event *e = dpa_event_zcdp_xi(0.1, 0.5, &err);
    CHECK(e != NULL, "dpa_event_zcdp_xi: %s", err.message);
    dpa_spec *s = e ? dpa_spec_new(e, DPA_ADD_REMOVE, &err) : NULL;
    char *js = s ? dpa_spec_to_json(s) : NULL;
    CHECK(js && strstr(js, "\"xi\":0.5") && strstr(js, "\"rho\":0.10000000000000001"), "written %s", js ? js : "");
    free(js);
    dpa_spec_free(s);
    test_spec_round_trip("{\"zcdp\":{\"rho\":0.10000000000000001},\"neighboring\":\"add_remove\"}");
    test_spec_round_trip("{\"zcdp\":{\"rho\":0.10000000000000001,\"xi\":0.5},\"neighboring\":\"add_remove\"}");
    CHECK(!dpa_event_zcdp_xi(0.1, -1, &err) && strstr(err.message, "xi"), "negative xi: %s", err.message);
    CHECK(!dpa_event_zcdp_xi(0.1, NAN, &err) && strstr(err.message, "xi"), "NaN xi: %s", err.message);
}

static void test_refusals_and_filters(void **state)
{
    (void)state;
    test_spec_refused("{\"zcdp\": {\"rho\": 0.1, \"xi\": -0.5}}", "/zcdp/xi: must be >= 0");
    test_spec_refused("{\"zcdp\": {\"rho\": 0.1, \"xi\": \"x\"}}", "/zcdp/xi");
    dpa_error err;
    dpa_accountant *a = try_accountant("{\"zcdp\": {\"rho\": 0.1, \"xi\": 0.5}}", DPA_METHOD_PLD, &err);
    CHECK(!a && strstr(err.message, "/zcdp: method pld cannot take zcdp leaves"), "pld: %s", err.message);
    dpa_accountant_free(a);
    dpa_spec *q = dpa_spec_from_json("{\"zcdp\": {\"rho\": 0.1, \"xi\": 0.5}}", &err);
    dpa_filter_decision d;
    /* the zcdp filter budgets rho alone: refused, naming the field */
    dpa_filter *f = dpa_filter_new_json("{\"filter\": \"zcdp\", \"rho\": 1}", &err);
    CHECK(f && dpa_filter_request(f, q, &d, &err) == DPA_EUNSUPPORTED && strstr(err.message, "/zcdp/xi"),
          "zcdp filter: %s", err.message);
    dpa_filter_free(f);
    /* the rdp filter at order 4 with budget 1: (0.5, 0.1) costs 0.9 (accepted),
     * a second one 1.8 (rejected); at order 5 budget 1.2: 1.0 accepted */
    f = dpa_filter_new_json("{\"filter\": \"rdp\", \"rho\": 1, \"order\": 4}", &err);
    CHECK(f != NULL, "rdp filter: %s", err.message);
    if (f) {
        CHECK(dpa_filter_request(f, q, &d, &err) == DPA_OK && d.accepted, "rdp filter first: %s %s", err.message,
              d.reason);
        CHECK(dpa_filter_request(f, q, &d, &err) == DPA_OK && !d.accepted, "rdp filter second accepted");
        char *rem = dpa_filter_remaining_json(f);
        double left = rem && strstr(rem, "\"rho\"") ? strtod(strchr(strstr(rem, "\"rho\""), ':') + 1, NULL) : NAN;
        /* 1 - 0.9, the charge rounded up: at most a few ulp below 0.1 */
        CHECK(left <= 0.1 && left >= 0.1 - 1e-14, "remaining %s", rem ? rem : "");
        free(rem);
        dpa_filter_free(f);
    }
    dpa_spec_free(q);
}

int main(void)
{
    test_seed_from_env();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_closed_form_conversions, setup, teardown),
        cmocka_unit_test_setup_teardown(test_composition_and_xi_zero, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refusals_and_filters, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

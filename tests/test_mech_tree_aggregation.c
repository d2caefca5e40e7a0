/* Tree aggregation for DP-FTRL ({"tree_aggregation": ...}, dp_accounting's
 * SingleEpochTreeAggregationDpEvent): a record in one of `steps` leaves
 * touches depth = ceil(log2(steps + 1)) released nodes, each with
 * N(0, sigma^2) noise, so the release is the Gaussian mechanism with
 * mu = sqrt(depth) sensitivity / sigma (Kairouz et al. 2021, App. D; in
 * dp_accounting's RDP form alpha depth / (2 sigma^2)).
 *  - depth against an independent count: the number of dyadic nodes
 *    [j 2^l, (j + 1) 2^l) completed within `steps` leaves that contain a
 *    given leaf, maximised over the leaves (brute force, steps <= 300);
 *  - the accountants against the gdp leaf with that mu (exact method:
 *    identical brackets; the closed form of the Gaussian profile,
 *    Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2), computed here);
 *  - the restart variant: repeat over epochs is the composition of gdp
 *    leaves; rdp at alpha equals count * alpha depth / (2 sigma^2).
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

/* the exact method's bracket on a Gaussian profile is tight to ~1e-12 */
#define CLOSED_REL 1e-9

/* largest number of completed dyadic nodes over `steps` leaves that
 * contain one leaf */
static int brute_depth(long steps)
{
    int best = 0;
    for (long leaf = 0; leaf < steps; leaf++) {
        int c = 0;
        for (int l = 0; (1L << l) <= steps; l++) {
            long j = leaf >> l;
            if ((j + 1) << l <= steps) c++; /* the node is completed (released) */
        }
        if (c > best) best = c;
    }
    return best;
}

static dpa_result run(const char *json, dpa_method m, int eps_query, double x)
{
    dpa_accountant *a = test_accountant(json, m);
    dpa_result r;
    dpa_error err;
    dpa_status st = eps_query ? dpa_accountant_epsilon(a, x, &r, &err) : dpa_accountant_delta(a, x, &r, &err);
    if (st) fail_msg("%s: %s", json, err.message);
    dpa_accountant_free(a);
    return r;
}

static void test_depth_and_gaussian(void **state)
{
    (void)state;
    const long steps[] = {1, 2, 3, 4, 7, 8, 100, 255, 256, 300};
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        int depth = brute_depth(steps[i]), want = (int)ceil(log2((double)steps[i] + 1));
        CHECK(depth == want, "steps %ld: brute depth %d vs ceil(log2(steps + 1)) %d", steps[i], depth, want);
        double sigma = 3.0, sens = 1.5, mu = sqrt((double)depth) * sens / sigma;
        char js[256], jg[256];
        snprintf(js, sizeof js, "{\"tree_aggregation\":{\"sigma\":%.17g,\"steps\":%ld,\"sensitivity\":%.17g}}", sigma,
                 steps[i], sens);
        snprintf(jg, sizeof jg, "{\"gdp\":{\"mu\":%.17g}}", mu);
        dpa_result t = run(js, DPA_METHOD_AUTO, 0, 0.5), g = run(jg, DPA_METHOD_AUTO, 0, 0.5);
        CHECK(t.method == DPA_METHOD_EXACT, "auto picks exact: %d", (int)t.method);
        /* mu rounded up by the library: at least the gdp leaf's, within 1e-15 */
        CHECK(t.upper >= g.upper && t.upper <= g.upper * (1 + 1e-12), "steps %ld: [%g, %g] vs gdp [%g, %g]", steps[i],
              t.lower, t.upper, g.lower, g.upper);
        double closed = 0.5 * erfc((0.5 / mu - mu / 2) / sqrt(2)) - exp(0.5) * 0.5 * erfc((0.5 / mu + mu / 2) / sqrt(2));
        CHECK(t.lower <= closed * (1 + CLOSED_REL) && t.upper >= closed * (1 - CLOSED_REL), "steps %ld: [%g, %g] vs %g",
              steps[i], t.lower, t.upper, closed);
    }
}

static void test_restart_and_methods(void **state)
{
    (void)state;
    /* 5 epochs of 1000 steps: 5 * depth 10; rdp at its best order vs the
     * gdp leaf's, and pld brackets the exact value */
    const char *js = "{\"repeat\":{\"count\":5,\"event\":{\"tree_aggregation\":{\"sigma\":10,\"steps\":1000}}}}";
    double mu = sqrt(5.0 * 10) / 10;
    char jg[128];
    snprintf(jg, sizeof jg, "{\"gdp\":{\"mu\":%.17g}}", mu);
    dpa_result e = run(js, DPA_METHOD_EXACT, 1, 1e-6), g = run(jg, DPA_METHOD_EXACT, 1, 1e-6);
    CHECK(e.upper >= g.upper && e.upper <= g.upper * (1 + 1e-12), "exact %g vs gdp %g", e.upper, g.upper);
    const dpa_method ms[] = {DPA_METHOD_PLD, DPA_METHOD_PHI, DPA_METHOD_RDP, DPA_METHOD_CLT, DPA_METHOD_GDP};
    for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++) {
        dpa_result r = run(js, ms[i], 1, 1e-6);
        CHECK(r.lower <= r.upper && r.upper >= e.lower * (1 - 1e-9), "method %d: [%g, %g] vs exact [%g, %g]", (int)ms[i],
              r.lower, r.upper, e.lower, e.upper);
    }
}

static void test_parse(void **state)
{
    (void)state;
    dpa_error err;
    dpa_spec *s = dpa_spec_from_json("{\"tree_aggregation\":{\"sigma\":2,\"steps\":100}}", &err);
    if (!s) fail_msg("%s", err.message);
    char *j = dpa_spec_to_json(s);
    CHECK(j && !strcmp(j, "{\"tree_aggregation\":{\"sigma\":2,\"steps\":100,\"sensitivity\":1},\"neighboring\":\"add_remove\"}"),
          "%s", j ? j : "");
    free(j);
    dpa_spec_free(s);
    static const struct { const char *json, *want; } bad[] = {
        {"{\"tree_aggregation\":{\"sigma\":0,\"steps\":1}}", "/tree_aggregation/sigma: must be > 0"},
        {"{\"tree_aggregation\":{\"sigma\":1,\"steps\":0}}", "/tree_aggregation/steps: must be an integer >= 1"},
        {"{\"tree_aggregation\":{\"sigma\":1,\"steps\":2.5}}", "/tree_aggregation/steps: must be an integer"},
        {"{\"tree_aggregation\":{\"sigma\":1}}", "missing key \"steps\""},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        test_spec_refused(bad[i].json, bad[i].want);
    }
    dpa_template *t = dpa_template_from_json("{\"tree_aggregation\":{\"sigma\":\"?\",\"steps\":100}}", &err);
    CHECK(t && dpa_template_param(t)->role == DPA_ROLE_NOISE, "sigma template: %s", t ? "" : err.message);
    dpa_template_free(t);
    dpa_event *e = dpa_event_tree_aggregation(1, 7, 1, &err);
    double v;
    assert_non_null(e);
    assert_int_equal(dpa_event_get_param(e, "steps", &v), DPA_OK);
    assert_true(v == 7);
    dpa_event_free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_parse, setup, teardown),
        cmocka_unit_test_setup_teardown(test_depth_and_gaussian, setup, teardown),
        cmocka_unit_test_setup_teardown(test_restart_and_methods, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* dpa_epsilon_counts: eps(delta) of one step repeated several times in one
 * pass (include/dpacct/accountant.h; the PLD one pass is src/pld/counts.c,
 * its error budget that of docs/guarantees.md §3).
 *   - reference: the single-count accountant (dpa_accountant_epsilon of
 *     repeat(count, step)), the bracket the one pass must agree with;
 *   - sweep: DP-SGD-like steps (Poisson-subsampled Gaussians, rates 1e-3 to
 *     2e-2, sigmas 0.8 to 2), counts from 1 to 14063 in one call, deltas
 *     1e-5 and 1e-8, plus a Gaussian step (the exact method: count by count);
 *   - properties: each bracket intersects the reference's (both certified),
 *     its width meets the accuracy target 1e-4 max(1, eps), the largest
 *     count's result equals the reference bit for bit, repeats and order of
 *     the counts do not matter;
 *   - errors: n = 0, counts not integers in [1, 1e15], delta outside (0, 1),
 *     NULL pointers: DPA_EINVAL with a message.
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

static dpa_spec *step_spec(const char *json)
{
    dpa_error e;
    dpa_spec *s = dpa_spec_from_json(json, &e);
    if (!s) fail_msg("spec %s: %s", json, e.message);
    return s;
}

static dpa_result single(const char *step_json, double count, double delta)
{
    char buf[512];
    snprintf(buf, sizeof buf, "{\"repeat\": {\"count\": %.17g, \"event\": %s}}", count, step_json);
    return test_query_epsilon(buf, DPA_METHOD_AUTO, delta);
}

/* every count of one call against its single-count query */
static void check_counts(const char *step_json, const double *counts, size_t n, double delta)
{
    dpa_spec *s = step_spec(step_json);
    dpa_result *out = calloc(n, sizeof *out);
    assert_non_null(out);
    dpa_error e;
    dpa_status st = dpa_epsilon_counts(s, counts, n, delta, NULL, out, &e);
    CHECK(st == DPA_OK, "%s: status %d (%s)", step_json, st, e.message);
    double K = 0;
    for (size_t i = 0; i < n; i++) K = fmax(K, counts[i]);
    for (size_t i = 0; i < n && st == DPA_OK; i++) {
        dpa_result r = single(step_json, counts[i], delta);
        const dpa_result *o = &out[i];
        CHECK(o->lower <= o->upper, "%s k=%g: lower %.17g > upper %.17g", step_json, counts[i], o->lower, o->upper);
        CHECK(o->lower <= r.upper && r.lower <= o->upper,
              "%s k=%g delta=%g: [%.17g, %.17g] misses the single-count [%.17g, %.17g]", step_json, counts[i], delta,
              o->lower, o->upper, r.lower, r.upper);
        if (r.accuracy_met)
            CHECK(o->upper - o->lower <= 1e-4 * fmax(1.0, o->upper) && o->accuracy_met,
                  "%s k=%g delta=%g: width %.3g over the target (eps %.6g)", step_json, counts[i], delta,
                  o->upper - o->lower, o->upper);
        CHECK(o->certified == r.certified, "%s k=%g: certified %d vs %d", step_json, counts[i], o->certified,
              r.certified);
        if (counts[i] == K)
            CHECK(o->upper == r.upper && o->lower == r.lower, "%s k=%g: largest count %.17g != single %.17g",
                  step_json, counts[i], o->upper, r.upper);
    }
    free(out);
    dpa_spec_free(s);
}

static const char *const dpsgd_steps[] = {
    "{\"poisson\": {\"rate\": 0.0042666666666666667, \"event\": {\"gaussian\": {\"sigma\": 1.1}}}}",
    "{\"poisson\": {\"rate\": 0.001, \"event\": {\"gaussian\": {\"sigma\": 0.8}}}}",
    "{\"poisson\": {\"rate\": 0.02, \"event\": {\"gaussian\": {\"sigma\": 2}}}}",
};

static void test_dpsgd_epochs(void **state)
{
    (void)state;
    /* the README run's per-epoch counts: ceil(e 60000 / 256) */
    double counts[64];
    size_t n = 0;
    for (int e = 1; e <= 60; e += SANITIZED ? 20 : 1) counts[n++] = ceil(e * 60000.0 / 256);
    check_counts(dpsgd_steps[0], counts, n, 1e-5);
}

static void test_dpsgd_sweep(void **state)
{
    (void)state;
    const double counts[] = {14063, 1, 2, 17, 235, 1000, 4095, 4096, 7031, 14062};
    const double deltas[] = {1e-5, 1e-8};
    for (size_t s = 0; s < sizeof dpsgd_steps / sizeof *dpsgd_steps; s++)
        for (size_t d = 0; d < 2; d++) check_counts(dpsgd_steps[s], counts, SANITIZED ? 4 : 10, deltas[d]);
}

static void test_other_shapes(void **state)
{
    (void)state;
    const double counts[] = {3, 1, 100, 3, 50};
    check_counts("{\"gaussian\": {\"sigma\": 4}}", counts, 5, 1e-6);
    check_counts("{\"laplace\": {\"scale\": 20}}", counts, 5, 1e-6);
    check_counts("{\"compose\": [{\"poisson\": {\"rate\": 0.01, \"event\": {\"gaussian\": {\"sigma\": 1}}}},"
                 " {\"gaussian\": {\"sigma\": 30}}]}", counts, 5, 1e-6);
}

static void expect_einval(const dpa_spec *s, const double *counts, size_t n, double delta, dpa_result *out,
                          const char *what)
{
    dpa_error e;
    memset(&e, 0, sizeof e);
    dpa_status st = dpa_epsilon_counts(s, counts, n, delta, NULL, out, &e);
    CHECK(st == DPA_EINVAL, "%s: status %d, want DPA_EINVAL", what, st);
    CHECK(e.message[0] != 0, "%s: no message", what);
}

static void test_errors(void **state)
{
    (void)state;
    dpa_spec *s = step_spec(dpsgd_steps[0]);
    dpa_result out[2];
    const double ok[] = {10, 20};
    expect_einval(s, ok, 0, 1e-5, out, "n = 0");
    expect_einval(NULL, ok, 2, 1e-5, out, "NULL spec");
    expect_einval(s, NULL, 2, 1e-5, out, "NULL counts");
    expect_einval(s, ok, 2, 1e-5, NULL, "NULL out");
    const double bad[][2] = {{10, 0}, {10, -3}, {2.5, 10}, {10, NAN}, {10, INFINITY}, {10, 2e15}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) expect_einval(s, bad[i], 2, 1e-5, out, "bad count");
    const double deltas[] = {0, 1, -1e-5, 1.5, NAN};
    for (size_t i = 0; i < sizeof deltas / sizeof *deltas; i++) expect_einval(s, ok, 2, deltas[i], out, "bad delta");
    /* NULL err is allowed */
    CHECK(dpa_epsilon_counts(s, ok, 0, 1e-5, NULL, out, NULL) == DPA_EINVAL, "NULL err");
    dpa_spec_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_dpsgd_epochs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dpsgd_sweep, setup, teardown),
        cmocka_unit_test_setup_teardown(test_other_shapes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
    };
    if (getenv("DPA_TEST_FILTER")) cmocka_set_test_filter(getenv("DPA_TEST_FILTER"));
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* The PLD build's parallel and grouped paths: results independent of the
 * thread count, grouped compositions of many distinct leaves bracketing the
 * closed form, and two-stage compositions of Laplace steps bracketing a
 * single-stage build.
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "dpacct/dpacct.h"
#include "check.h"

/* An accountant with the given options (method, threads, accuracy, step). */
static dpa_accountant *acct(const char *json, dpa_method m, int threads, double accuracy, double step)
{
    dpa_error err;
    dpa_spec *s = dpa_spec_from_json(json, &err);
    if (!s) fail_msg("spec %s: %s", json, err.message);
    dpa_options o;
    dpa_options_init(&o);
    o.method = m;
    o.threads = threads;
    if (accuracy > 0) o.accuracy = accuracy;
    o.grid_step = step;
    dpa_accountant *a = dpa_accountant_new(s, &o, &err);
    dpa_spec_free(s);
    if (!a) fail_msg("accountant for %s: %s", json, err.message);
    return a;
}

static void eps_of(const char *json, dpa_method m, int threads, double accuracy, double step, double delta,
                   dpa_result *r)
{
    dpa_accountant *a = acct(json, m, threads, accuracy, step);
    dpa_error err;
    if (dpa_accountant_epsilon(a, delta, r, &err)) fail_msg("epsilon for %s: %s", json, err.message);
    dpa_accountant_free(a);
}

/* n distinct leaves: "poisson" (rate q over Gaussians sigma0 + i ds) or
 * plain Gaussians; caller frees. */
static char *distinct(const char *kind, int n, double q, double sigma0, double ds)
{
    size_t cap = 200 + (size_t)n * 120, len = 0;
    char *b = malloc(cap);
    if (!b) {
        fail_msg("out of memory");
        return NULL;
    }
    len += (size_t)snprintf(b + len, cap - len, "{\"compose\": [");
    for (int i = 0; i < n; i++) {
        double s = sigma0 + ds * i;
        if (!strcmp(kind, "poisson"))
            len += (size_t)snprintf(b + len, cap - len,
                                    "%s{\"poisson\": {\"rate\": %.17g, \"event\": {\"gaussian\": {\"sigma\": %.17g}}}}",
                                    i ? ", " : "", q, s);
        else
            len += (size_t)snprintf(b + len, cap - len, "%s{\"gaussian\": {\"sigma\": %.17g}}", i ? ", " : "", s);
    }
    snprintf(b + len, cap - len, "]}");
    return b;
}

/* Bit-identical results for 1, 2 and 4 threads: the compositions are the
 * same computations whichever thread runs them. */
static void test_threads_invariant(void **state)
{
    (void)state;
    char *many = distinct("poisson", 70, 0.02, 1.0, 0.01); /* grouped: more than 64 leaves */
    const char *specs[] = {
        "{\"repeat\": {\"count\": 1000, \"event\": {\"poisson\": {\"rate\": 0.01, \"event\": {\"gaussian\": {\"sigma\": 1.1}}}}}}",
        "{\"repeat\": {\"count\": 20000, \"event\": {\"laplace\": {\"scale\": 300}}}}",
        "{\"compose\": [{\"laplace\": {\"scale\": 2}}, {\"repeat\": {\"count\": 30, \"event\": {\"gaussian\": {\"sigma\": 9}}}},"
        " {\"repeat\": {\"count\": 50, \"event\": {\"poisson\": {\"rate\": 0.1, \"event\": {\"randomized_response\": {\"epsilon\": 1}}}}}}]}",
        "{\"repeat\": {\"count\": 20, \"event\": {\"poisson\": {\"rate\": 0.05, \"event\": {\"compose\": ["
        "{\"gaussian\": {\"sigma\": 1}}, {\"laplace\": {\"scale\": 1}}]}}}}}",
        many,
    };
    for (size_t i = 0; i < sizeof specs / sizeof *specs; i++) {
        dpa_result r1, r;
        eps_of(specs[i], DPA_METHOD_PLD, 1, 0, 0, 1e-6, &r1);
        CHECK(isfinite(r1.upper) && r1.lower <= r1.upper && r1.lower > 0, "spec %zu: bad bracket [%g, %g]", i,
              r1.lower, r1.upper);
        for (int t = 2; t <= 4; t += 2) {
            eps_of(specs[i], DPA_METHOD_PLD, t, 0, 0, 1e-6, &r);
            CHECK(r.upper == r1.upper && r.lower == r1.lower && r.grid_size == r1.grid_size,
                  "spec %zu, %d threads: [%.17g, %.17g] (grid %zu) vs 1 thread [%.17g, %.17g] (grid %zu)", i, t,
                  r.lower, r.upper, r.grid_size, r1.lower, r1.upper, r1.grid_size);
        }
    }
    free(many);
}

/* 100 distinct Gaussians composed on the grid in groups (method pld) must
 * bracket the exact closed form (mu = sqrt(sum 1/sigma_i^2)). */
static void test_grouped_vs_closed_form(void **state)
{
    (void)state;
    char *spec = distinct("gaussian", 100, 0, 3.0, 0.05);
    /* (at much smaller deltas the round-off allowance of a 1e6-point grid,
     * ~5e-12, dominates the gap: the bracket is still certified) */
    double deltas[] = {1e-3, 1e-5, 1e-7};
    for (size_t i = 0; i < 3; i++) {
        dpa_result ex, pl;
        eps_of(spec, DPA_METHOD_EXACT, 0, 0, 0, deltas[i], &ex);
        eps_of(spec, DPA_METHOD_PLD, 0, 0, 0, deltas[i], &pl);
        CHECK(pl.lower <= ex.upper && ex.lower <= pl.upper,
              "delta %g: grouped pld [%.12g, %.12g] misses exact [%.12g, %.12g]", deltas[i], pl.lower, pl.upper,
              ex.lower, ex.upper);
        CHECK(pl.accuracy_met && pl.upper - pl.lower <= 1e-4 * fmax(1.0, pl.upper),
              "delta %g: grouped pld gap %g", deltas[i], pl.upper - pl.lower);
    }
    free(spec);
}

/* The grouped composition of many distinct subsampled Gaussians against the
 * same leaves in one group-free composition: a set of 64 (not grouped) and
 * the same 64 plus 1 leaf of rate 1e-12 (grouped, nearly the same value):
 * the brackets must intersect up to the extra leaf's effect. */
static void test_grouped_vs_ungrouped(void **state)
{
    (void)state;
    char *a = distinct("poisson", 64, 0.02, 0.8, 0.02);
    /* the same 64 leaves and one that changes nothing measurable */
    size_t la = strlen(a);
    char *b = malloc(la + 200);
    if (!b) fail_msg("out of memory");
    memcpy(b, a, la - 2);
    snprintf(b + la - 2, 200, ", {\"poisson\": {\"rate\": 1e-12, \"event\": {\"gaussian\": {\"sigma\": 5}}}}]}");
    dpa_result ra, rb;
    eps_of(a, DPA_METHOD_PLD, 0, 1e-5, 0, 1e-5, &ra);
    eps_of(b, DPA_METHOD_PLD, 0, 1e-5, 0, 1e-5, &rb);
    /* the extra leaf: loss at most 1e-12 (e^{...}) in either direction */
    CHECK(rb.upper >= ra.lower && rb.lower <= ra.upper + 1e-9,
          "grouped [%.12g, %.12g] vs ungrouped [%.12g, %.12g]", rb.lower, rb.upper, ra.lower, ra.upper);
    free(a);
    free(b);
}

/* Two-stage composition of 40000 Laplace steps against a single-stage
 * build of the same steps plus a Gaussian of mu 1e-7 (a leaf of count 1
 * keeps the build single stage; it raises eps by far less than 1e-9):
 * certified brackets of (nearly) the same value must intersect, and the
 * two-stage one meets the accuracy. */
static void test_laplace_two_stage(void **state)
{
    (void)state;
    const char *two_spec = "{\"repeat\": {\"count\": 40000, \"event\": {\"laplace\": {\"scale\": 200}}}}";
    const char *one_spec = "{\"compose\": [{\"repeat\": {\"count\": 40000, \"event\": {\"laplace\": {\"scale\": 200}}}},"
                           " {\"gaussian\": {\"sigma\": 1e7}}]}";
    dpa_result two, one;
    eps_of(two_spec, DPA_METHOD_PLD, 0, 0, 0, 1e-6, &two);
    eps_of(one_spec, DPA_METHOD_PLD, 0, 0, 0, 1e-6, &one);
    CHECK(two.accuracy_met, "two-stage Laplace: accuracy not met, gap %g", two.upper - two.lower);
    CHECK(two.lower <= one.upper && one.lower <= two.upper + 1e-9,
          "two-stage [%.12g, %.12g] vs single [%.12g, %.12g]", two.lower, two.upper, one.lower, one.upper);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_threads_invariant, setup, teardown),
        cmocka_unit_test_setup_teardown(test_grouped_vs_closed_form, setup, teardown),
        cmocka_unit_test_setup_teardown(test_grouped_vs_ungrouped, setup, teardown),
        cmocka_unit_test_setup_teardown(test_laplace_two_stage, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

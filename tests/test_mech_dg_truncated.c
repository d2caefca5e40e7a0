/* The truncated discrete Gaussian ({"discrete_gaussian": {"sigma": S,
 * "sensitivity": s, "truncation": T}}, src/mech/discrete_gaussian.c;
 * docs/mechanisms.md, "Truncated discrete Gaussian"): parsing, errors, and
 * the accountants against an independent brute force and against
 * dp_accounting's own expected values.
 *
 * Reference: the noise pmf p(n) = exp(-n^2 / (2 S^2)) / Z_T on [-T, T],
 * A(o) = p(o - s), B(o) = p(o), and (with Poisson rate q) A_q = q A + (1 - q) B;
 *   delta_remove(eps) = sum_o (A_q(o) - e^eps B(o))_+,
 *   delta_add(eps)    = sum_o (B(o) - e^eps A_q(o))_+,
 * summed here over every o in [-T, s + T] in long double (the infinite
 * losses are the terms where one measure is 0); a two-fold composition sums
 * over every pair (o1, o2).  Each term has relative error below ~8 ulp of
 * long double; REF_TOL covers the sums (at most 10^4 terms).
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
#include "dpacct/renyi.h"
#include "check.h"

/* relative allowance of the brute-force reference (header), and the
 * tolerance of dp_accounting's values (assertAlmostEqual: 7 places) */
#define REF_TOL 1e-13L
#define PEER_TOL 0.5e-7

#define MAXO 4096
/* a[i], b[i]: A_q and B at o = -T + i, i < *n */
static void measures(double sigma, int s, int T, double q, long double *a, long double *b, int *n)
{
    long double z = 0, v2 = 2.0L * sigma * sigma;
    for (int k = -T; k <= T; k++) z += expl(-(long double)k * k / v2);
    *n = 2 * T + s + 1;
    assert_true(*n <= MAXO);
    for (int i = 0; i < *n; i++) {
        int o = -T + i;
        long double pa = (o - s >= -T && o - s <= T) ? expl(-(long double)(o - s) * (o - s) / v2) / z : 0;
        long double pb = (o >= -T && o <= T) ? expl(-(long double)o * o / v2) / z : 0;
        a[i] = q * pa + (1 - q) * pb;
        b[i] = pb;
    }
}

/* delta of `count` (1 or 2) steps in direction dir (0 remove, 1 add) */
static long double brute(double sigma, int s, int T, double q, int count, int dir, double eps)
{
    static long double a[MAXO], b[MAXO];
    int n;
    measures(sigma, s, T, q, a, b, &n);
    long double *x = dir ? b : a, *y = dir ? a : b, ee = expl((long double)eps), sum = 0;
    for (int i = 0; i < n; i++) {
        if (count == 1) {
            long double t = x[i] - ee * y[i];
            if (t > 0) sum += t;
            continue;
        }
        for (int j = 0; j < n; j++) {
            long double t = x[i] * x[j] - ee * y[i] * y[j];
            if (t > 0) sum += t;
        }
    }
    return sum;
}

static char *spec(double sigma, int s, int T, double q, int count)
{
    char *j = malloc(400);
    assert_non_null(j);
    char leaf[200];
    snprintf(leaf, sizeof leaf, "{\"discrete_gaussian\": {\"sigma\": %.17g, \"sensitivity\": %d, \"truncation\": %d}}",
             sigma, s, T);
    char sub[300];
    if (q < 1) snprintf(sub, sizeof sub, "{\"poisson\": {\"rate\": %.17g, \"event\": %s}}", q, leaf);
    else snprintf(sub, sizeof sub, "%s", leaf);
    if (count > 1) snprintf(j, 400, "{\"repeat\": {\"count\": %d, \"event\": %s}}", count, sub);
    else snprintf(j, 400, "%s", sub);
    return j;
}

static void test_parse_and_errors(void **state)
{
    (void)state;
    dpa_error err;
    dpa_spec *s = dpa_spec_from_json("{\"discrete_gaussian\": {\"sigma\": 2, \"truncation\": 7}}", &err);
    assert_non_null(s);
    char *j = dpa_spec_to_json(s);
    CHECK(j && strstr(j, "\"truncation\":7"), "truncation not written: %s", j ? j : "(null)");
    dpa_spec *s2 = j ? dpa_spec_from_json(j, &err) : NULL;
    CHECK(s2 != NULL, "round trip of %s", j ? j : "(null)");
    double v = 0;
    CHECK(s2 && dpa_event_get_param(dpa_spec_root(s2), "truncation", &v) == DPA_OK && v == 7, "truncation %g", v);
    dpa_spec_free(s2);
    free(j);
    dpa_spec_free(s);
    /* untruncated: not written, the sentinel read back */
    s = dpa_spec_from_json("{\"discrete_gaussian\": {\"sigma\": 2}}", &err);
    assert_non_null(s);
    j = dpa_spec_to_json(s);
    CHECK(j && !strstr(j, "truncation"), "untruncated written with truncation: %s", j ? j : "(null)");
    CHECK(dpa_event_get_param(dpa_spec_root(s), "truncation", &v) == DPA_OK && v == DPA_DG_UNTRUNCATED, "%g", v);
    free(j);
    dpa_spec_free(s);
    static const struct { const char *json, *want; } bad[] = {
        {"{\"discrete_gaussian\": {\"sigma\": 1, \"truncation\": -1}}", "/discrete_gaussian/truncation: must be an integer >= 0"},
        {"{\"discrete_gaussian\": {\"sigma\": 1, \"truncation\": -3}}", "/discrete_gaussian/truncation: must be an integer >= 0"},
        {"{\"discrete_gaussian\": {\"sigma\": 1, \"truncation\": 2.5}}", "/discrete_gaussian/truncation: must be an integer >= 0"},
        {"{\"discrete_gaussian\": {\"sigma\": 1, \"truncation\": 1e10}}", "/discrete_gaussian/truncation: must be an integer <= 1e+09"},
        {"{\"discrete_gaussian\": {\"sigma\": 1, \"truncation\": \"5\"}}", "/discrete_gaussian/truncation"},
        {"{\"discrete_gaussian\": {\"sigma\": 1, \"truncation\": \"?\"}}", "/discrete_gaussian/truncation"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        memset(&err, 0, sizeof err);
        s = dpa_spec_from_json(bad[i].json, &err);
        CHECK(!s && err.status == DPA_EINVAL && strstr(err.message, bad[i].want), "%s: got \"%s\", want \"%s\"",
              bad[i].json, err.message, bad[i].want);
        dpa_spec_free(s);
    }
    /* a template cannot calibrate the truncation */
    dpa_template *t = dpa_template_from_json("{\"discrete_gaussian\": {\"sigma\": 1, \"truncation\": \"?\"}}", &err);
    CHECK(!t && strstr(err.message, "/discrete_gaussian/truncation: the truncation cannot be calibrated"), "%s",
          t ? "accepted" : err.message);
    dpa_template_free(t);
    /* the C constructor names the field */
    dpa_event *e = dpa_event_discrete_gaussian_truncated(1, 1, -2, &err);
    CHECK(!e && err.status == DPA_EINVAL && strstr(err.message, "discrete_gaussian: truncation must be an integer"),
          "constructor: %s", e ? "accepted" : err.message);
    e = dpa_event_discrete_gaussian_truncated(1, 1, 3, &err);
    assert_non_null(e);
    dpa_event_free(e);
}

/* pld certifies a bracket containing the brute force (both directions: the
 * pair is symmetric, docs/mechanisms.md), for T = 0, T < s (disjoint and
 * overlapping supports), T beyond the enumeration window, sigma >> T */
static void test_vs_brute(void **state)
{
    (void)state;
    static const struct { double sigma; int s, T; double q; int count; } cs[] = {
        {1, 1, 2, 1, 1},   {10, 3, 5, 1, 1}, {1, 1, 0, 1, 1},   {1, 3, 1, 1, 1},   {1, 3, 2, 1, 1},
        {2, 2, 3, 1, 1},   {0.5, 1, 1, 1, 1}, {3, 1, 40, 1, 1}, {0.7, 5, 6, 1, 1}, {50, 1, 20, 1, 1},
        {1, 1, 2, 1, 2},   {2, 3, 4, 1, 2},  {1, 1, 2, 0.8, 1}, {5, 3, 5, 0.4, 1}, {2, 2, 2, 0.3, 2},
    };
    static const double eps[] = {-1, 0, 0.3, 1, 2, 5};
    for (size_t i = 0; i < sizeof cs / sizeof *cs; i++) {
        char *json = spec(cs[i].sigma, cs[i].s, cs[i].T, cs[i].q, cs[i].count);
        dpa_error err;
        dpa_accountant *a = try_accountant(json, DPA_METHOD_PLD, &err);
        CHECK(a != NULL, "%s: %s", json, err.message);
        for (size_t k = 0; a && k < sizeof eps / sizeof *eps; k++) {
            dpa_result r;
            if (dpa_accountant_delta(a, eps[k], &r, &err) != DPA_OK) {
                CHECK(0, "%s at %g: %s", json, eps[k], err.message);
                continue;
            }
            long double rem = brute(cs[i].sigma, cs[i].s, cs[i].T, cs[i].q, cs[i].count, 0, eps[k]);
            long double add = brute(cs[i].sigma, cs[i].s, cs[i].T, cs[i].q, cs[i].count, 1, eps[k]);
            long double ref = rem > add ? rem : add;
            if (cs[i].q == 1)
                CHECK(fabsl(rem - add) <= REF_TOL * (rem + 1e-300L), "%s: not symmetric at %g: %.17Lg vs %.17Lg",
                      json, eps[k], rem, add);
            CHECK(r.lower <= ref * (1 + REF_TOL) && ref <= r.upper * (1 + REF_TOL) + 1e-300,
                  "%s: delta(%g) = %.17Lg outside [%.17g, %.17g]", json, eps[k], ref, r.lower, r.upper);
            CHECK(r.upper_remove >= rem * (1 - REF_TOL) && r.upper_add >= add * (1 - REF_TOL),
                  "%s: per direction at %g: remove %.17g < %.17Lg or add %.17g < %.17Lg", json, eps[k],
                  r.upper_remove, rem, r.upper_add, add);
            /* unsampled losses lie on one lattice: the grid holds them exactly,
             * only round-off is left (subsampled ones are binned: accuracy) */
            if (cs[i].q == 1)
                CHECK(r.upper - r.lower <= 1e-9 + 1e-9 * r.upper, "%s: wide bracket at %g: [%.17g, %.17g]", json, eps[k],
                  r.lower, r.upper);
        }
        dpa_accountant_free(a);
        free(json);
    }
    /* disjoint supports (2T < s) and T = 0 are non-private: delta = 1 at every eps */
    static const char *np[] = {"{\"discrete_gaussian\": {\"sigma\": 1, \"truncation\": 0}}",
                               "{\"discrete_gaussian\": {\"sigma\": 4, \"sensitivity\": 5, \"truncation\": 2}}"};
    for (size_t i = 0; i < 2; i++) {
        dpa_error err;
        dpa_accountant *a = try_accountant(np[i], DPA_METHOD_AUTO, &err);
        assert_non_null(a);
        dpa_result r;
        assert_int_equal(dpa_accountant_delta(a, 3, &r, &err), DPA_OK);
        CHECK(r.lower == 1 && r.upper == 1, "%s: [%g, %g]", np[i], r.lower, r.upper);
        dpa_accountant_free(a);
    }
}

/* dp_accounting's expected deltas, pld/privacy_loss_mechanism_test.py,
 * DiscreteGaussianPrivacyLossTest.test_discrete_gaussian_get_delta_for_epsilon
 * and ..._vectorized (sampling_prob 1: ADD and REMOVE coincide; sampling_prob
 * < 1: the REMOVE row is dpacct's remove direction of poisson, the ADD row
 * its add direction, and the larger of the two is dpacct's delta) */
static void test_peer_values(void **state)
{
    (void)state;
    static const struct { double sigma; int s, T; double q, eps, add, rem; } pv[] = {
        /* test_discrete_gaussian_get_delta_for_epsilon */
        {1.0, 1, 2, 1.0, 1.0, 0.150574425, 0.150574425},
        {10.0, 3, 5, 1.0, 1.0, 0.263672394, 0.263672394},
        {1.0, 1, 2, 0.8, 1.0, 0.024865564, 0.101734157},
        {5.0, 3, 5, 0.4, 0.1, 0.085584980, 0.104486937},
        /* test_discrete_gaussian_get_delta_for_epsilon_vectorized */
        {1.0, 1, 2, 1.0, -2.0, 0.872038958, 0.872038958}, {1.0, 1, 2, 1.0, -1.0, 0.687513794, 0.687513794},
        {1.0, 1, 2, 1.0, 0.0, 0.402619947, 0.402619947},  {1.0, 1, 2, 1.0, 1.0, 0.150574425, 0.150574425},
        {1.0, 1, 2, 1.0, 2.0, 0.054488685, 0.054488685},
        {10.0, 3, 5, 1.0, -2.0, 0.900348895, 0.900348895}, {10.0, 3, 5, 1.0, -1.0, 0.729120212, 0.729120212},
        {10.0, 3, 5, 1.0, 0.0, 0.285480872, 0.285480872},  {10.0, 3, 5, 1.0, 1.0, 0.263672394, 0.263672394},
        {10.0, 3, 5, 1.0, 2.0, 0.263672394, 0.263672394},
        {1.0, 1, 2, 0.8, -2.0, 0.870564110, 0.864664717}, {1.0, 1, 2, 0.8, -1.0, 0.669546464, 0.641268089},
        {1.0, 1, 2, 0.8, 0.0, 0.322095958, 0.322095958},  {1.0, 1, 2, 0.8, 1.0, 0.024865564, 0.101734157},
        {1.0, 1, 2, 0.8, 2.0, 0.000000000, 0.043590948},
        {5.0, 3, 5, 0.4, -0.2, 0.258926845, 0.233136435}, {5.0, 3, 5, 0.4, -0.1, 0.189706273, 0.172603074},
        {5.0, 3, 5, 0.4, 0.0, 0.129522020, 0.129522020},  {5.0, 3, 5, 0.4, 0.1, 0.085584980, 0.104486937},
        {5.0, 3, 5, 0.4, 0.2, 0.063350727, 0.094851204},
    };
    for (size_t i = 0; i < sizeof pv / sizeof *pv; i++) {
        char *json = spec(pv[i].sigma, pv[i].s, pv[i].T, pv[i].q, 1);
        dpa_error err;
        dpa_accountant *a = try_accountant(json, DPA_METHOD_AUTO, &err);
        assert_non_null(a);
        dpa_result r;
        assert_int_equal(dpa_accountant_delta(a, pv[i].eps, &r, &err), DPA_OK);
        double want = fmax(pv[i].add, pv[i].rem);
        CHECK(r.lower - PEER_TOL <= want && want <= r.upper + PEER_TOL, "%s: dp_accounting %.9f at %g, dpacct [%.12g, %.12g]",
              json, want, pv[i].eps, r.lower, r.upper);
        CHECK(fabs(r.upper_remove - pv[i].rem) <= PEER_TOL && fabs(r.upper_add - pv[i].add) <= PEER_TOL,
              "%s at %g: remove %.12g (peer %.9f), add %.12g (peer %.9f)", json, pv[i].eps, r.upper_remove, pv[i].rem,
              r.upper_add, pv[i].add);
        dpa_accountant_free(a);
        free(json);
    }
}

/* rdp: +inf above order 1 (mass at +inf), certified, not a refusal; the
 * untruncated leaf keeps its zCDP bound.  calibrate: the sigma found meets
 * the target with a certified bound, and the nearest infeasible value not. */
static void test_rdp_and_calibrate(void **state)
{
    (void)state;
    dpa_error err;
    dpa_accountant *a = try_accountant("{\"discrete_gaussian\": {\"sigma\": 2, \"truncation\": 30}}", DPA_METHOD_RDP, &err);
    assert_non_null(a);
    dpa_result r;
    assert_int_equal(dpa_accountant_delta(a, 1, &r, &err), DPA_OK);
    /* (formerly delta 1, the mass at +inf making every order's bound +inf;
     * issue 26: that mass is kept apart as an extra delta, rdp_method.c) a
     * certified upper bound: at or above the brute-force delta, below 1 */
    long double bt = fmaxl(brute(2, 1, 30, 1, 1, 0, 1.0), brute(2, 1, 30, 1, 1, 1, 1.0));
    CHECK(r.upper < 1 && r.upper >= bt, "rdp of a truncated leaf: upper %g, brute force %Lg", r.upper, bt);
    dpa_accountant_free(a);
    /* renyi: D_2 = +inf in both directions; with T beyond the enumeration
     * window (omitted atoms) too */
    for (int T = 30; T <= 300; T += 270) {
        char js[160];
        snprintf(js, sizeof js, "{\"discrete_gaussian\": {\"sigma\": 2, \"truncation\": %d}}", T);
        dpa_spec *s = dpa_spec_from_json(js, &err);
        assert_non_null(s);
        dpa_renyi_result rr;
        dpa_status st = dpa_renyi(s, 2.0, 0, &rr, &err);
        CHECK(st == DPA_OK && isinf(rr.remove.lower) && isinf(rr.add.lower) && rr.remove.certified,
              "%s: renyi(2): %s [%g, %g]", js, st ? err.message : "", rr.remove.lower, rr.remove.upper);
        dpa_spec_free(s);
    }
    /* the untruncated leaf: its zCDP bound, finite */
    a = try_accountant("{\"discrete_gaussian\": {\"sigma\": 2}}", DPA_METHOD_RDP, &err);
    assert_non_null(a);
    assert_int_equal(dpa_accountant_delta(a, 1, &r, &err), DPA_OK);
    CHECK(r.upper < 0.2, "rdp of the untruncated leaf: %g", r.upper);
    dpa_accountant_free(a);

    dpa_template *t = dpa_template_from_json("{\"discrete_gaussian\": {\"sigma\": \"?\", \"truncation\": 5}}", &err);
    assert_non_null(t);
    dpa_calibration c;
    assert_int_equal(dpa_calibrate(t, 2.0, 0.1, NULL, 0, &c, &err), DPA_OK);
    CHECK(c.at_value.upper <= 2.0, "calibrated bound %g", c.at_value.upper);
    CHECK(c.infeasible < c.value && c.value <= c.infeasible * (1 + 2e-4), "sigma %g, infeasible %g", c.value,
          c.infeasible);
    /* at the infeasible neighbour the brute force delta at eps = 2 exceeds 0.1 */
    long double d = brute(c.infeasible, 1, 5, 1, 1, 0, 2.0);
    CHECK(d > 0.1L * (1 - REF_TOL), "delta at the infeasible sigma %g: %.17Lg", c.infeasible, d);
    d = brute(c.value, 1, 5, 1, 1, 0, 2.0);
    CHECK(d <= 0.1L * (1 + REF_TOL), "delta at the calibrated sigma %g: %.17Lg", c.value, d);
    dpa_template_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_parse_and_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_vs_brute, setup, teardown),
        cmocka_unit_test_setup_teardown(test_peer_values, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rdp_and_calibrate, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

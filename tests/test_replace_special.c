/* The neighbouring relation "replace_special" (dp_accounting's
 * REPLACE_SPECIAL: one record replaced by a special record; docs/spec.md):
 * parsing and serialization, the add_remove analysis for additive noise
 * (identical results), randomized response against the special record's
 * uniform report (src/mech/randomized_response.c, dpa_pair_rr_special)
 * against a brute force over its k outputs and against dp_accounting's RDP
 * values, and the refusals.
 *
 * Reference: R(x) reports x w.p. e^eps/(e^eps+k-1) and each other bucket
 * w.p. 1/(e^eps+k-1); the special record's report is uniform (1/k each).
 * delta(t) = sum over the k outputs of (A - e^t B)_+ in each direction, and
 * D_a(A||B) = log(sum A^a B^(1-a)) / (a - 1), in long double (two distinct
 * terms: relative error a few ulp; REF_TOL covers it).
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
#include "dpacct/renyi.h"
#include "check.h"

/* relative allowance of the brute-force reference (header) */
#define REF_TOL 1e-13L
/* dp_accounting's np.allclose(..., rtol=1e-4) of its RDP test */
#define PEER_RTOL 1e-4

/* masses of x and of one other bucket under R(x) and the uniform report */
static void rr(double eps, double k, long double *ax, long double *ao, long double *bx, long double *bo)
{
    long double e = expl((long double)eps), d = e + (long double)k - 1;
    *ax = e / d;
    *ao = 1 / d;
    *bx = *bo = 1 / (long double)k;
}

static long double brute_delta(double eps, double k, int dir, double t)
{
    long double ax, ao, bx, bo, et = expl((long double)t);
    rr(eps, k, &ax, &ao, &bx, &bo);
    if (dir) { /* add: (B, A) */
        long double u = ax, v = ao;
        ax = bx, ao = bo, bx = u, bo = v;
    }
    long double s = 0, tx = ax - et * bx, to = ao - et * bo;
    if (tx > 0) s += tx;
    if (to > 0) s += ((long double)k - 1) * to;
    return s;
}

static long double brute_renyi(double eps, double k, int dir, double a)
{
    long double ax, ao, bx, bo;
    rr(eps, k, &ax, &ao, &bx, &bo);
    if (dir) {
        long double u = ax, v = ao;
        ax = bx, ao = bo, bx = u, bo = v;
    }
    long double s = powl(ax, a) * powl(bx, 1 - a) + ((long double)k - 1) * powl(ao, a) * powl(bo, 1 - a);
    return logl(s) / (a - 1);
}

static void test_parse(void **state)
{
    (void)state;
    dpa_error err;
    dpa_spec *s = dpa_spec_from_json("{\"gaussian\": {\"sigma\": 2}, \"neighboring\": \"replace_special\"}", &err);
    assert_non_null(s);
    CHECK(dpa_spec_neighboring(s) == DPA_REPLACE_SPECIAL, "relation %d", (int)dpa_spec_neighboring(s));
    char *j = dpa_spec_to_json(s);
    CHECK(j && strstr(j, "\"neighboring\":\"replace_special\""), "written: %s", j ? j : "(null)");
    dpa_spec *s2 = j ? dpa_spec_from_json(j, &err) : NULL;
    CHECK(s2 && dpa_spec_neighboring(s2) == DPA_REPLACE_SPECIAL, "round trip of %s", j ? j : "(null)");
    dpa_spec_free(s2);
    free(j);
    dpa_spec_free(s);
    memset(&err, 0, sizeof err);
    s = dpa_spec_from_json("{\"gaussian\": {\"sigma\": 2}, \"neighboring\": \"special\"}", &err);
    CHECK(!s && strstr(err.message, "/neighboring: must be \"add_remove\" or \"replace\", got \"special\" (or \"replace_special\")"),
          "bad relation: %s", s ? "accepted" : err.message);
    dpa_spec_free(s);
    dpa_event *e = dpa_event_gaussian(1, 1, &err);
    s = dpa_spec_new(e, (dpa_neighboring)3, &err);
    CHECK(!s && strstr(err.message, "DPA_REPLACE_SPECIAL"), "relation 3: %s", s ? "accepted" : err.message);
    dpa_spec_free(s);
}

/* additive noise: the special record adds nothing, so the spec's results are
 * the add_remove ones, bit for bit */
static void test_additive_is_add_remove(void **state)
{
    (void)state;
    static const char *ev[] = {
        "{\"gaussian\": {\"sigma\": 1.3}",
        "{\"repeat\": {\"count\": 20, \"event\": {\"poisson\": {\"rate\": 0.05, \"event\": {\"gaussian\": {\"sigma\": 0.9}}}}}",
        "{\"laplace\": {\"scale\": 2}",
        "{\"tree_aggregation\": {\"sigma\": 3, \"steps\": 100}",
        "{\"compose\": [{\"discrete_gaussian\": {\"sigma\": 2, \"truncation\": 9}}, {\"pure\": {\"epsilon\": 0.2}}]",
        "{\"poisson\": {\"rate\": 0.1, \"event\": {\"laplace\": {\"scale\": 1}}}",
    };
    for (size_t i = 0; i < sizeof ev / sizeof *ev; i++) {
        char a[400], b[400];
        snprintf(a, sizeof a, "%s}", ev[i]);
        snprintf(b, sizeof b, "%s, \"neighboring\": \"replace_special\"}", ev[i]);
        dpa_error err;
        dpa_accountant *x = try_accountant(a, DPA_METHOD_AUTO, &err), *y = try_accountant(b, DPA_METHOD_AUTO, &err);
        CHECK(x && y, "%s: %s", b, err.message);
        if (x && y) {
            dpa_result rx, ry;
            assert_int_equal(dpa_accountant_epsilon(x, 1e-6, &rx, &err), DPA_OK);
            assert_int_equal(dpa_accountant_epsilon(y, 1e-6, &ry, &err), DPA_OK);
            CHECK(rx.upper == ry.upper && rx.lower == ry.lower, "%s: [%.17g, %.17g] vs add_remove [%.17g, %.17g]", b,
                  ry.lower, ry.upper, rx.lower, rx.upper);
        }
        dpa_accountant_free(x);
        dpa_accountant_free(y);
    }
}

/* randomized response: the pld bracket holds the brute force, per direction */
static void test_rr_vs_brute(void **state)
{
    (void)state;
    static const struct { double eps, k; } cs[] = {{1, 2}, {1, 4}, {0.3, 10}, {3.189, 10}, {5, 1000}, {0.01, 3}};
    static const double ts[] = {-0.5, 0, 0.2, 0.5, 1, 2.9};
    for (size_t i = 0; i < sizeof cs / sizeof *cs; i++) {
        char json[200];
        snprintf(json, sizeof json,
                 "{\"randomized_response\": {\"epsilon\": %.17g, \"k\": %.17g}, \"neighboring\": \"replace_special\"}",
                 cs[i].eps, cs[i].k);
        dpa_error err;
        dpa_accountant *a = try_accountant(json, DPA_METHOD_AUTO, &err);
        CHECK(a != NULL, "%s: %s", json, err.message);
        for (size_t j = 0; a && j < sizeof ts / sizeof *ts; j++) {
            dpa_result r;
            assert_int_equal(dpa_accountant_delta(a, ts[j], &r, &err), DPA_OK);
            long double rem = brute_delta(cs[i].eps, cs[i].k, 0, ts[j]), add = brute_delta(cs[i].eps, cs[i].k, 1, ts[j]);
            long double ref = rem > add ? rem : add;
            CHECK(r.lower <= ref * (1 + REF_TOL) && ref <= r.upper * (1 + REF_TOL) + 1e-300,
                  "%s: delta(%g) %.17Lg outside [%.17g, %.17g]", json, ts[j], ref, r.lower, r.upper);
            CHECK(r.upper_remove >= rem * (1 - REF_TOL) && r.upper_add >= add * (1 - REF_TOL),
                  "%s at %g: remove %.17g < %.17Lg or add %.17g < %.17Lg", json, ts[j], r.upper_remove, rem,
                  r.upper_add, add);
            /* the losses are off-lattice: binned to the default accuracy, a
             * few 1e-4 wide at most here (a regression guard, not a promise) */
            CHECK(r.upper - r.lower <= 5e-4, "%s: wide [%.17g, %.17g]", json, r.lower, r.upper);
        }
        dpa_accountant_free(a);
        /* Renyi divergences, both directions */
        dpa_spec *s = dpa_spec_from_json(json, &err);
        assert_non_null(s);
        static const double orders[] = {0.5, 1.5, 2.5, 5};
        for (size_t j = 0; j < sizeof orders / sizeof *orders; j++) {
            dpa_renyi_result rr;
            assert_int_equal(dpa_renyi(s, orders[j], 0, &rr, &err), DPA_OK);
            for (int d = 0; d < 2; d++) {
                const dpa_renyi_value *v = d ? &rr.add : &rr.remove;
                long double ref = brute_renyi(cs[i].eps, cs[i].k, d, orders[j]);
                CHECK(v->lower <= ref * (1 + REF_TOL) + 1e-300 && ref <= v->upper * (1 + REF_TOL) + 1e-300,
                      "%s: D_%g %s %.17Lg outside [%.17g, %.17g]", json, orders[j], d ? "add" : "remove", ref,
                      v->lower, v->upper);
            }
        }
        dpa_spec_free(s);
    }
}

/* dp_accounting's RDP of randomized response under REPLACE_SPECIAL
 * (rdp/rdp_privacy_accountant_test.py,
 * RdpPrivacyAccountantTest.test_compute_rdp_randomized_response_replace_special:
 * noise_parameter p (a uniform report w.p. p), k buckets, orders 1.5, 2.5, 5,
 * 50, 100; np.allclose rtol 1e-4): the larger direction of dpacct's renyi.
 * RR's epsilon is log((k (1 - p) + p) / p). */
static void test_peer_rdp(void **state)
{
    (void)state;
    static const struct { double p, k, v[5]; } pv[] = {
        {0.3, 10, {1.5030552584146897, 1.7801182478869704, 1.9091969256833639, 1.9814516798923105, 1.9846954517418232}},
        {0.05, 20, {2.8985312222056674, 2.9615414620514047, 2.982908949957726, 2.994685471627712, 2.9952141594692665}},
        {0.01, 3, {3.851345343526459, 4.334924907685137, 4.503803908976894, 4.596895387863428, 4.601074578835478}},
    };
    static const double orders[] = {1.5, 2.5, 5, 50, 100};
    for (size_t i = 0; i < sizeof pv / sizeof *pv; i++) {
        double eps = log((pv[i].k * (1 - pv[i].p) + pv[i].p) / pv[i].p);
        char json[200];
        snprintf(json, sizeof json,
                 "{\"randomized_response\": {\"epsilon\": %.17g, \"k\": %.17g}, \"neighboring\": \"replace_special\"}",
                 eps, pv[i].k);
        dpa_error err;
        dpa_spec *s = dpa_spec_from_json(json, &err);
        assert_non_null(s);
        for (size_t j = 0; j < 5; j++) {
            dpa_renyi_result rr;
            assert_int_equal(dpa_renyi(s, orders[j], 0, &rr, &err), DPA_OK);
            double up = fmax(rr.remove.upper, rr.add.upper), lo = fmax(rr.remove.lower, rr.add.lower);
            CHECK(lo <= pv[i].v[j] * (1 + PEER_RTOL) && pv[i].v[j] <= up * (1 + PEER_RTOL),
                  "p %g k %g: D_%g dp_accounting %.17g, dpacct [%.17g, %.17g]", pv[i].p, pv[i].k, orders[j], pv[i].v[j],
                  lo, up);
        }
        dpa_spec_free(s);
    }
}

/* refusals name the path and the relation */
static void test_refusals(void **state)
{
    (void)state;
    static const struct { const char *json, *want; } bad[] = {
        {"{\"poisson\": {\"rate\": 0.1, \"event\": {\"randomized_response\": {\"epsilon\": 1}}}, \"neighboring\": \"replace_special\"}",
         "/poisson/event/randomized_response: subsampled randomized response under replace_special"},
        {"{\"poisson\": {\"rate\": 0.1, \"event\": {\"compose\": [{\"randomized_response\": {\"epsilon\": 1}}]}}, \"neighboring\": \"replace_special\"}",
         "/poisson/event/compose/0/randomized_response: subsampled randomized response under replace_special"},
        {"{\"sample\": {\"n\": 10, \"m\": 2, \"event\": {\"gaussian\": {\"sigma\": 1}}}, \"neighboring\": \"replace_special\"}",
         "/sample: sampling without replacement is analysed under"},
        {"{\"sample_with_replacement\": {\"n\": 10, \"m\": 2, \"event\": {\"gaussian\": {\"sigma\": 1}}}, \"neighboring\": \"replace_special\"}",
         "under replace_special the dataset keeps its size n"},
        {"{\"random_allocation\": {\"steps\": 10, \"selected\": 1, \"event\": {\"gaussian\": {\"sigma\": 1}}}, \"neighboring\": \"replace_special\"}",
         "/random_allocation: random allocation is analysed under add_remove neighboring (docs/sampling.md §4); \"replace_special\" is not supported"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        dpa_error err;
        memset(&err, 0, sizeof err);
        dpa_accountant *a = try_accountant(bad[i].json, DPA_METHOD_AUTO, &err);
        CHECK(!a && err.status == DPA_EUNSUPPORTED && strstr(err.message, bad[i].want), "%s: got \"%s\"", bad[i].json,
              a ? "accepted" : err.message);
        dpa_accountant_free(a);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_parse, setup, teardown),
        cmocka_unit_test_setup_teardown(test_additive_is_add_remove, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rr_vs_brute, setup, teardown),
        cmocka_unit_test_setup_teardown(test_peer_rdp, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refusals, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

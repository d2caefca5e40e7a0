/* The two trivial events: {"no_op": {}} (reveals nothing: dropped from
 * compositions) and {"non_private": {}} (releases the data: eps = +inf,
 * said plainly in the result's note), alone, composed and subsampled.
 *
 * Reference for k Poisson(q)-subsampled non_private steps composed with a
 * Gaussian: in the remove direction each step's pair is (q d_a + (1-q) d_b,
 * d_b), loss +inf with A-mass q and log(1 - q) with A-mass 1 - q, so with
 * P = (1 - q)^k the +inf mass is 1 - P and the finite loss is the
 * Gaussian's shifted by log P:
 *   delta(t) = 1 - P + P delta_G(t - log P),
 * delta_G(t) = Phi(-t/mu + mu/2) - e^t Phi(-t/mu - mu/2) (GDP Cor 2.13); the
 * add direction gives the same (LT eq 7).  Evaluated in long double.
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

static long double Phi(long double x) { return 0.5L * erfcl(-x / sqrtl(2.0L)); }

static void test_parse(void **state)
{
    (void)state;
    dpa_error err;
    static const char *ok[] = {"{\"no_op\": {}}", "{\"non_private\": {}}",
                               "{\"compose\": [{\"no_op\": {}}, {\"repeat\": {\"count\": 3, \"event\": {\"non_private\": {}}}}]}"};
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        dpa_spec *s = dpa_spec_from_json(ok[i], &err);
        CHECK(s != NULL, "%s rejected: %s", ok[i], err.message);
        char *j = s ? dpa_spec_to_json(s) : NULL;
        dpa_spec *s2 = j ? dpa_spec_from_json(j, &err) : NULL;
        CHECK(s2 != NULL, "%s: round trip through %s", ok[i], j ? j : "(null)");
        free(j);
        dpa_spec_free(s2);
        dpa_spec_free(s);
    }
    static const struct { const char *json, *want; } bad[] = {
        {"{\"no_op\": {\"epsilon\": 1}}", "/no_op: unknown key \"epsilon\""},
        {"{\"non_private\": 1}", "/non_private: expected an object"},
        {"{\"non_privat\": {}}", "unknown event kind \"non_privat\""},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        memset(&err, 0, sizeof err);
        dpa_spec *s = dpa_spec_from_json(bad[i].json, &err);
        CHECK(!s && err.status == DPA_EINVAL && strstr(err.message, bad[i].want), "%s: got \"%s\", want \"%s\"",
              bad[i].json, err.message, bad[i].want);
        dpa_spec_free(s);
    }
    dpa_event *e = dpa_event_no_op(&err);
    assert_non_null(e);
    dpa_event_free(e);
    e = dpa_event_non_private(&err);
    assert_non_null(e);
    dpa_event_free(e);
}

/* no_op changes nothing, in every method */
static void test_no_op(void **state)
{
    (void)state;
    const char *with = "{\"compose\": [{\"no_op\": {}}, {\"repeat\": {\"count\": 50, \"event\": {\"laplace\": "
                       "{\"scale\": 10}}}}, {\"repeat\": {\"count\": 1000000, \"event\": {\"no_op\": {}}}}]}";
    const char *without = "{\"repeat\": {\"count\": 50, \"event\": {\"laplace\": {\"scale\": 10}}}}";
    /* (phi takes Laplace only beside a Gaussian factor) */
    const dpa_method ms[] = {DPA_METHOD_AUTO, DPA_METHOD_PLD, DPA_METHOD_RDP, DPA_METHOD_CLT};
    for (size_t i = 0; i < sizeof ms / sizeof *ms; i++) {
        dpa_error err;
        dpa_accountant *a = try_accountant(with, ms[i], &err), *b = try_accountant(without, ms[i], &err);
        assert_non_null(a);
        assert_non_null(b);
        dpa_result ra, rb;
        assert_int_equal(dpa_accountant_epsilon(a, 1e-6, &ra, &err), DPA_OK);
        assert_int_equal(dpa_accountant_epsilon(b, 1e-6, &rb, &err), DPA_OK);
        CHECK(ra.upper == rb.upper && ra.lower == rb.lower, "method %d: with no_op [%.17g, %.17g], without [%.17g, %.17g]",
              (int)ms[i], ra.lower, ra.upper, rb.lower, rb.upper);
        dpa_accountant_free(a);
        dpa_accountant_free(b);
    }
    /* only no_op: perfectly private */
    dpa_error err;
    dpa_accountant *a = try_accountant("{\"no_op\": {}}", DPA_METHOD_AUTO, &err);
    assert_non_null(a);
    dpa_result r;
    assert_int_equal(dpa_accountant_epsilon(a, 1e-9, &r, &err), DPA_OK);
    CHECK(r.upper == 0 && r.lower == 0, "no_op alone: eps [%g, %g]", r.lower, r.upper);
    dpa_accountant_free(a);
    /* ... in every method (the pld grid used to fail with "no factors") */
    const dpa_method all[] = {DPA_METHOD_EXACT, DPA_METHOD_PLD, DPA_METHOD_PHI, DPA_METHOD_RDP};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) {
        a = try_accountant("{\"repeat\": {\"count\": 7, \"event\": {\"no_op\": {}}}}", all[i], &err);
        assert_non_null(a);
        assert_int_equal(dpa_accountant_epsilon(a, 1e-3, &r, &err), DPA_OK);
        CHECK(r.upper == 0 && r.lower == 0, "method %d: no_op eps [%g, %g]", (int)all[i], r.lower, r.upper);
        assert_int_equal(dpa_accountant_delta(a, -1, &r, &err), DPA_OK);
        CHECK(fabs(r.upper - -expm1(-1.0)) < 1e-15 && r.lower == r.upper, "method %d: no_op delta(-1) [%g, %g]",
              (int)all[i], r.lower, r.upper);
        dpa_accountant_free(a);
    }
}

/* non_private: eps = +inf (both bounds) at every delta < 1 in every method
 * that takes it, and the note says why, naming the path */
static void test_non_private(void **state)
{
    (void)state;
    const char *json = "{\"compose\": [{\"gaussian\": {\"sigma\": 1}}, {\"non_private\": {}}]}";
    const dpa_method ms[] = {DPA_METHOD_AUTO, DPA_METHOD_PLD, DPA_METHOD_PHI, DPA_METHOD_RDP};
    for (size_t i = 0; i < sizeof ms / sizeof *ms; i++) {
        dpa_error err;
        dpa_accountant *a = try_accountant(json, ms[i], &err);
        assert_non_null(a);
        static const double ds[] = {1e-12, 1e-6, 0.5, 0.999};
        for (size_t j = 0; j < sizeof ds / sizeof *ds; j++) {
            dpa_result r;
            assert_int_equal(dpa_accountant_epsilon(a, ds[j], &r, &err), DPA_OK);
            CHECK(isinf(r.upper) && (ms[i] == DPA_METHOD_RDP || isinf(r.lower)), "method %d delta %g: eps [%g, %g]",
                  (int)ms[i], ds[j], r.lower, r.upper);
            CHECK(strstr(r.note, "non-private step at /compose/1/non_private") != NULL, "method %d: note \"%s\"",
                  (int)ms[i], r.note);
        }
        dpa_result r;
        assert_int_equal(dpa_accountant_delta(a, 3, &r, &err), DPA_OK);
        CHECK(r.upper >= 1 - 1e-12 && (ms[i] == DPA_METHOD_RDP || ms[i] == DPA_METHOD_PHI || r.lower >= 1 - 1e-12),
              "method %d: delta(3) [%g, %g]", (int)ms[i], r.lower, r.upper);
        dpa_accountant_free(a);
    }
    /* clt and gdp refuse, naming a method that can */
    for (int m = 0; m < 2; m++) {
        dpa_error err;
        dpa_accountant *a = try_accountant(json, m ? DPA_METHOD_GDP : DPA_METHOD_CLT, &err);
        CHECK(!a && err.status == DPA_EUNSUPPORTED && strstr(err.message, "pld"), "clt/gdp: %s",
              a ? "accepted" : err.message);
        dpa_accountant_free(a);
    }
}

/* a subsampled non_private step: +inf mass 1 - (1 - q)^k, composed with a
 * Gaussian in closed form (see the header) */
static void test_subsampled(void **state)
{
    (void)state;
    const double q = 0.01, k = 100, mu = 1;
    const char *json = "{\"compose\": [{\"gaussian\": {\"sigma\": 1}}, {\"repeat\": {\"count\": 100, \"event\": "
                       "{\"poisson\": {\"rate\": 0.01, \"event\": {\"non_private\": {}}}}}}]}";
    long double P = powl(1 - (long double)q, k);
    dpa_error err;
    dpa_accountant *a = try_accountant(json, DPA_METHOD_AUTO, &err);
    assert_non_null(a);
    for (double t = 0; t <= 4; t += 0.5) {
        dpa_result r;
        assert_int_equal(dpa_accountant_delta(a, t, &r, &err), DPA_OK);
        long double ts = t - logl(P);
        long double dg = Phi(-ts / mu + mu / 2.0L) - expl(ts) * Phi(-ts / mu - mu / 2.0L);
        long double ref = 1 - P + P * dg;
        CHECK(r.lower <= ref * (1 + 1e-12L) && r.upper >= ref * (1 - 1e-12L) && r.upper - r.lower <= 1e-3 * ref,
              "delta(%g) [%.17g, %.17g], ref %.17Lg", t, r.lower, r.upper, ref);
    }
    /* eps is finite once delta exceeds the +inf mass 0.634, infinite below */
    dpa_result r;
    assert_int_equal(dpa_accountant_epsilon(a, 0.6, &r, &err), DPA_OK);
    CHECK(isinf(r.upper) && isinf(r.lower), "eps(0.6) [%g, %g] (the +inf mass is %.6Lg)", r.lower, r.upper, 1 - P);
    assert_int_equal(dpa_accountant_epsilon(a, 0.7, &r, &err), DPA_OK);
    CHECK(isfinite(r.upper), "eps(0.7) [%g, %g] (the +inf mass is %.6Lg)", r.lower, r.upper, 1 - P);
    dpa_accountant_free(a);
    /* inside a subsampled composition (one batch), the note still names it */
    a = try_accountant("{\"repeat\": {\"count\": 3, \"event\": {\"poisson\": {\"rate\": 0.01, \"event\": {\"compose\": "
             "[{\"non_private\": {}}, {\"gaussian\": {\"sigma\": 1}}]}}}}}",
             DPA_METHOD_AUTO, &err);
    assert_non_null(a);
    assert_int_equal(dpa_accountant_epsilon(a, 0.01, &r, &err), DPA_OK);
    CHECK(isinf(r.upper) && strstr(r.note, "/repeat/event/poisson/event/compose/0/non_private"), "note \"%s\", eps %g",
          r.note, r.upper);
    dpa_accountant_free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_parse, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_op, setup, teardown),
        cmocka_unit_test_setup_teardown(test_non_private, setup, teardown),
        cmocka_unit_test_setup_teardown(test_subsampled, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Privacy filters: exact budgets and exact replay (include/dpacct/filter.h,
 * src/filter/, docs/filters.md "Exact budgets" and "States").
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 *  - exact budgets: a budget is filled exactly by queries whose costs sum
 *    to it in the decimals the JSON wrote (pure 1 = 4 x 0.25 = 100 x 0.01,
 *    0.1 = 10 x 0.01, 0.3 = 3 x 0.1; mu 1 = sqrt(4 x 0.5^2) under gdp,
 *    gdp-residue and natural; order-2 RDP 1 = 4 x 0.25; zCDP; both parts
 *    of basic; the (0, delta) natural filter), the next query is rejected,
 *    a no_op costs nothing, and a cost that is not a decimal (1/3) is
 *    rounded up (never accepted beyond the budget);
 *  - exact replay, a property over random query sequences for every filter
 *    kind: a run that saves its state at every step, restores a fresh
 *    filter (from the canonical configuration) and continues makes the same
 *    decisions (status, accepted, reason) and the same states byte for byte
 *    as a direct run; a rejected or refused query leaves the state byte for
 *    byte; no state holds "-0";
 *  - the case: natural-approx (1, 1e-3, 5 queries) with Laplace
 *    scales 3, 2, 5 (the third rejected, the state unchanged);
 *  - the GDP residue test's coarse copy of a law changes no decision or
 *    state (references from the build before it, byte for byte).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "check.h"
#include "dpacct/event.h"
#include "dpacct/filter.h"
#include "filter_replay.h"

/* ---------------- exact budgets ---------------- */
static void test_exact_budgets(void **state)
{
    (void)state;
#define GDP(m) "{\"gdp\":{\"mu\":" m "}}"
    static const struct { const char *cfg, *q; int count; } cases[] = {
        {"{\"filter\":\"pure\",\"epsilon\":1}", "{\"pure\":{\"epsilon\":0.25}}", 4},
        {"{\"filter\":\"pure\",\"epsilon\":0.1}", "{\"pure\":{\"epsilon\":0.01}}", 10},
        {"{\"filter\":\"pure\",\"epsilon\":1}", "{\"pure\":{\"epsilon\":0.01}}", 100},
        {"{\"filter\":\"pure\",\"epsilon\":0.3}", "{\"pure\":{\"epsilon\":0.1}}", 3},
        {"{\"filter\":\"pure\",\"epsilon\":1}", "{\"laplace\":{\"scale\":4}}", 4},
        {"{\"filter\":\"pure\",\"epsilon\":1}", "{\"repeat\":{\"count\":5,\"event\":{\"pure\":{\"epsilon\":0.02}}}}", 10},
        /* 1/3 is not a decimal: rounded up, so three do not fit (sound) */
        {"{\"filter\":\"pure\",\"epsilon\":1}", "{\"laplace\":{\"scale\":3}}", 2},
        {"{\"filter\":\"gdp\",\"mu\":1}", GDP("0.5"), 4},
        {"{\"filter\":\"gdp\",\"mu\":1}", "{\"gaussian\":{\"sigma\":2}}", 4},
        {"{\"filter\":\"gdp-residue\",\"mu\":1}", GDP("0.5"), 4},
        {"{\"filter\":\"gdp-residue\",\"mu\":1}", "{\"gaussian\":{\"sigma\":2}}", 4},
        {"{\"filter\":\"gdp-residue\",\"mu\":0.5}", GDP("0.3"), 2}, /* 0.09 + 0.09 <= 0.25 < 0.27 */
        {"{\"filter\":\"gdp-residue\",\"mu\":0.5}", "{\"compose\":[" GDP("0.3") "," GDP("0.4") "]}", 1},
        {"{\"filter\":\"natural\",\"mu\":1}", GDP("0.5"), 4},
        {"{\"filter\":\"rdp\",\"rho\":1,\"order\":2}", GDP("0.5"), 4},
        {"{\"filter\":\"rdp\",\"rho\":1,\"order\":2}", "{\"gaussian\":{\"sigma\":2}}", 4},
        {"{\"filter\":\"rdp\",\"rho\":[1,4],\"order\":[2,8]}", GDP("0.5"), 4},
        {"{\"filter\":\"zcdp\",\"rho\":1}", "{\"zcdp\":{\"rho\":0.25}}", 4},
        {"{\"filter\":\"zcdp\",\"rho\":1}", GDP("0.5"), 8},
        {"{\"filter\":\"zcdp\",\"rho\":0.1}", "{\"zcdp\":{\"rho\":0.01}}", 10},
        {"{\"filter\":\"basic\",\"epsilon\":1,\"delta\":1e-3}", "{\"approx\":{\"epsilon\":0.25,\"delta\":0}}", 4},
        {"{\"filter\":\"basic\",\"epsilon\":1,\"delta\":0.75}", "{\"approx\":{\"epsilon\":0.5,\"delta\":0.5}}", 2},
        {"{\"filter\":\"basic\",\"epsilon\":9,\"delta\":0.75}", "{\"approx\":{\"epsilon\":0.1,\"delta\":0.5}}", 2},
        {"{\"filter\":\"natural\",\"delta\":0.75}", "{\"approx\":{\"epsilon\":0,\"delta\":0.5}}", 2},
        {"{\"filter\":\"natural\",\"delta\":0.0199}", "{\"approx\":{\"epsilon\":0,\"delta\":0.01}}", 2},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        dpa_filter *f = mkfilter(cases[i].cfg);
        dpa_error err;
        dpa_filter_decision d;
        int k = 0, a;
        while (k < 1000 && (a = req(f, cases[i].q, &d, &err)) == 1) k++;
        char *s = dpa_filter_state_json(f);
        print_message("  %-55s %-45s %d accepted; %s\n", cases[i].cfg, cases[i].q, k, s);
        CHECK(k == cases[i].count, "%s with %s: %d accepted, expected %d (%s)", cases[i].cfg, cases[i].q, k,
              cases[i].count, a < 0 ? err.message : d.reason);
        free(s);
        dpa_filter_free(f);
    }
    /* a budget exactly filled is exhausted, and its remaining budget is 0 */
    dpa_filter *f = mkfilter("{\"filter\":\"gdp-residue\",\"mu\":1}");
    dpa_error err;
    CHECK(req(f, GDP("0.6"), NULL, &err) == 1, "gdp 0.6 rejected");
    char *r = dpa_filter_remaining_json(f);
    CHECK(r && !strncmp(r, "{\"mu\":0.80000000000000004,", 26), "sqrt(1 - 0.36) shown as %s", r);
    free(r);
    CHECK(req(f, GDP("0.8"), NULL, &err) == 1 && dpa_filter_exhausted(f), "gdp 0.8 does not fill the rest");
    r = dpa_filter_remaining_json(f);
    CHECK(r && !strncmp(r, "{\"mu\":0,", 8), "remaining %s", r);
    free(r);
    dpa_filter_free(f);
    /* a tiny cost is not lost: 1e-300 then the whole budget does not fit */
    f = mkfilter("{\"filter\":\"pure\",\"epsilon\":1}");
    CHECK(req(f, "{\"pure\":{\"epsilon\":1e-300}}", NULL, &err) == 1 && req(f, "{\"pure\":{\"epsilon\":1}}", NULL, &err) == 0,
          "1e-300 + 1 accepted under 1");
    dpa_filter_free(f);
}

/* no_op costs nothing under every filter (natural-approx still counts it
 * against max_queries, RF Thm 9's k) */
static const char *const all_cfgs[] = {
    "{\"filter\":\"pure\",\"epsilon\":1}",
    "{\"filter\":\"basic\",\"epsilon\":1,\"delta\":1e-3}",
    "{\"filter\":\"rdp\",\"rho\":[1,3],\"order\":[2,8]}",
    "{\"filter\":\"zcdp\",\"rho\":0.5}",
    "{\"filter\":\"gdp\",\"mu\":1}",
    "{\"filter\":\"gdp-residue\",\"mu\":1}",
    "{\"filter\":\"natural\",\"mu\":1}",
    "{\"filter\":\"natural\",\"delta\":1e-3}",
};
#define NCFGS (sizeof all_cfgs / sizeof all_cfgs[0])

static void test_no_op_free(void **state)
{
    (void)state;
    for (size_t i = 0; i < NCFGS; i++) {
        dpa_filter *f = mkfilter(all_cfgs[i]);
        char *r0 = dpa_filter_remaining_json(f);
        dpa_error err;
        for (int k = 0; k < 3; k++) CHECK(req(f, "{\"no_op\":{}}", NULL, &err) == 1, "%s: no_op refused", all_cfgs[i]);
        char *r1 = dpa_filter_remaining_json(f);
        CHECK(r0 && r1 && !strcmp(r0, r1), "%s: no_op charged: %s -> %s", all_cfgs[i], r0, r1);
        free(r0);
        free(r1);
        dpa_filter_free(f);
    }
}

/* ---------------- exact replay ---------------- */
/* queries drawn for the property test: short decimals, non-decimal costs,
 * sampling, selection mechanisms, and queries some filters refuse */
static void random_query(char *q, size_t n, int natural_approx)
{
    static const double dec[] = {0.01, 0.05, 0.1, 0.125, 0.25, 0.3, 0.5};
    double e = dec[(int)(test_unif() * 7)];
    int kind = (int)(test_unif() * (natural_approx ? 4 : 12));
    switch (kind) {
    case 0: snprintf(q, n, "{\"pure\":{\"epsilon\":%.17g}}", e); break;
    case 1: snprintf(q, n, "{\"laplace\":{\"scale\":%.17g}}", 1 + 9 * test_unif()); break;
    case 2: snprintf(q, n, "{\"randomized_response\":{\"epsilon\":%.17g}}", e); break;
    case 3: snprintf(q, n, "{\"no_op\":{}}"); break;
    case 4: snprintf(q, n, "{\"gdp\":{\"mu\":%.17g}}", e); break;
    case 5: snprintf(q, n, "{\"gaussian\":{\"sigma\":%.17g}}", 1 + 9 * test_unif()); break;
    case 6: snprintf(q, n, "{\"approx\":{\"epsilon\":%.17g,\"delta\":%.17g}}", e, 1e-5 * test_unif()); break;
    case 7: snprintf(q, n, "{\"approx\":{\"epsilon\":0,\"delta\":%.17g}}", 1e-4 * test_unif()); break;
    case 8: snprintf(q, n, "{\"zcdp\":{\"rho\":%.17g}}", e * e); break;
    case 9:
        snprintf(q, n, "{\"poisson\":{\"rate\":%.17g,\"event\":{\"pure\":{\"epsilon\":%.17g}}}}", 0.01 + 0.3 * test_unif(), e);
        break;
    case 10: snprintf(q, n, "{\"repeat\":{\"count\":%d,\"event\":{\"pure\":{\"epsilon\":%.17g}}}}", 1 + (int)(9 * test_unif()), e); break;
    default: snprintf(q, n, "{\"compose\":[{\"gdp\":{\"mu\":%.17g}},{\"gaussian\":{\"sigma\":4}}]}", e); break;
    }
}

/* one restore-and-replay step of the JSON query q (filter_replay.h) */
static void replay_json(dpa_filter *a, const char *cfg, const char *q, int *accepted)
{
    dpa_error err;
    char why[2048];
    int r = 0;
    dpa_spec *s = dpa_spec_from_json(q, &err);
    if (!s) fail_msg("spec %s: %s", q, err.message);
    CHECK(replay_step(a, cfg, s, &r, why, sizeof why), "%s, %s: %s", cfg, q, why);
    if (r == 1) (*accepted)++;
    dpa_spec_free(s);
}

static void test_replay_property(void **state)
{
    (void)state;
    static const char *const cfgs[] = {
        "{\"filter\":\"pure\",\"epsilon\":2}",
        "{\"filter\":\"pure\",\"epsilon\":0.1}",
        "{\"filter\":\"basic\",\"epsilon\":2,\"delta\":1e-4}",
        "{\"filter\":\"rdp\",\"rho\":0.75,\"order\":2}",
        "{\"filter\":\"rdp\",\"rho\":[1,3,10],\"order\":[2,8,32]}",
        "{\"filter\":\"zcdp\",\"rho\":0.3}",
        "{\"filter\":\"gdp\",\"mu\":1}",
        "{\"filter\":\"gdp-residue\",\"mu\":1}",
        "{\"filter\":\"gdp-residue\",\"mu\":0.3}",
        "{\"filter\":\"natural\",\"mu\":0.7}",
        "{\"filter\":\"natural\",\"delta\":3e-4}",
        "{\"filter\":\"natural-approx\",\"epsilon\":1,\"delta\":1e-3,\"allow_degraded\":true,\"max_queries\":5}",
    };
    for (size_t c = 0; c < sizeof cfgs / sizeof cfgs[0]; c++) {
        int na = strstr(cfgs[c], "natural-approx") != NULL, steps = 0, acc = 0;
        double t0 = (double)clock() / CLOCKS_PER_SEC;
        dpa_filter *f0 = mkfilter(cfgs[c]);
        char *cfg = dpa_filter_config_json(f0); /* the canonical configuration, as a ledger stores it */
        dpa_filter_free(f0);
        for (int seq = 0; seq < (na ? 2 : 8); seq++) {
            dpa_filter *a = mkfilter(cfg);
            int len = na ? 7 : 14;
            for (int k = 0; k < len; k++, steps++) {
                char q[300];
                random_query(q, sizeof q, na);
                replay_json(a, cfg, q, &acc);
            }
            dpa_filter_free(a);
        }
        print_message("  %-100s %d steps, %d accepted (%.2f s)\n", cfg, steps, acc, (double)clock() / CLOCKS_PER_SEC - t0);
        free(cfg);
    }
}

/* The case: natural-approx, Laplace scales 3, 2, 5: the third is
 * rejected, the state is unchanged (no -0 turning into 0), and a filter
 * restored from the saved state agrees with the direct one. */
static void test_natural_approx_replay(void **state)
{
    (void)state;
    const char *cfg = "{\"filter\":\"natural-approx\",\"epsilon\":1,\"delta\":1e-3,\"allow_degraded\":true,\"max_queries\":5}";
    static const char *const qs[] = {"{\"laplace\":{\"scale\":3}}", "{\"laplace\":{\"scale\":2}}",
                                     "{\"laplace\":{\"scale\":5}}"};
    static const int expect[] = {1, 1, 0};
    dpa_filter *a = mkfilter(cfg);
    int acc = 0;
    for (int i = 0; i < 3; i++) {
        dpa_error err;
        dpa_filter *probe = dpa_filter_copy(a, &err);
        CHECK(probe != NULL, "copy: %s", err.message);
        int r = probe ? req(probe, qs[i], NULL, &err) : -1;
        CHECK(r == expect[i], "query %d (%s): %d, expected %d", i + 1, qs[i], r, expect[i]);
        dpa_filter_free(probe);
        replay_json(a, cfg, qs[i], &acc);
    }
    char *s = filter_state(a);
    print_message("  state %s\n", s);
    CHECK(acc == 2, "%d accepted", acc);
    free(s);
    dpa_filter_free(a);
}

/* States written before exact budgets (doubles) still restore, rounded
 * toward less budget. */
static void test_old_states(void **state)
{
    (void)state;
    static const struct { const char *cfg, *st, *now; } cases[] = {
        {"{\"filter\":\"pure\",\"epsilon\":1}", "{\"filter\":\"pure\",\"accepted\":3,\"spent_epsilon\":0.75000000000000022}",
         "{\"filter\":\"pure\",\"accepted\":3,\"spent_epsilon\":\"0.750000000000000222044604925031308085\"}"},
        {"{\"filter\":\"gdp\",\"mu\":1}", "{\"filter\":\"gdp\",\"accepted\":0,\"mu_remaining\":1}",
         "{\"filter\":\"gdp\",\"accepted\":0,\"mu_squared_spent\":\"0\"}"},
        {"{\"filter\":\"gdp-residue\",\"mu\":1}", "{\"filter\":\"gdp-residue\",\"accepted\":1,\"mu_remaining\":0.5}",
         "{\"filter\":\"gdp-residue\",\"accepted\":1,\"mu_residue\":0.5,\"mu_squared_spent\":\"0\"}"},
        {"{\"filter\":\"natural\",\"mu\":1}", "{\"filter\":\"natural\",\"accepted\":1,\"mu_spent\":0.5}",
         "{\"filter\":\"natural\",\"accepted\":1,\"mu_squared_spent\":\"0.25\"}"},
        {"{\"filter\":\"natural\",\"delta\":0.1}", "{\"filter\":\"natural\",\"accepted\":0,\"log_keep\":0}",
         "{\"filter\":\"natural\",\"accepted\":0,\"keep\":\"1\"}"},
        {"{\"filter\":\"basic\",\"epsilon\":1,\"delta\":0.1}",
         "{\"filter\":\"basic\",\"accepted\":1,\"spent_epsilon\":0.5,\"log_keep\":-0.01}",
         "{\"filter\":\"basic\",\"accepted\":1,\"spent_epsilon\":\"0.5\",\"keep\":\"0.990049833749167107477262561587849631\"}"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        dpa_filter *f = mkfilter(cases[i].cfg);
        dpa_error err;
        CHECK(dpa_filter_set_state_json(f, cases[i].st, &err) == DPA_OK, "%s: %s", cases[i].st, err.message);
        char *s = filter_state(f);
        CHECK(!strcmp(s, cases[i].now), "%s restored as %s", cases[i].st, s);
        free(s);
        dpa_filter_free(f);
    }
}

/* Huge repeats of tiny pure queries under gdp-residue (issue: ~2 minutes
 * per decision): decided by the naive update when the residue search could
 * not gain more than its tolerance.  The decisions are asserted; the times
 * are printed, never asserted. */
static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void test_residue_fast_paths(void **state)
{
    (void)state;
    static const struct { const char *q; double mu_lo; } cases[] = {
        {"{\"repeat\":{\"count\":1e15,\"event\":{\"pure\":{\"epsilon\":1e-300}}}}", 0.99999999999999988},
        /* total eps 1e-5: nu(1e-5) = 1.2533e-5, remaining sqrt(1 - nu^2) */
        {"{\"repeat\":{\"count\":1e15,\"event\":{\"pure\":{\"epsilon\":1e-20}}}}", 0.99999999992146},
        {"{\"exponential_mechanism\":{\"epsilon\":0.5}}", 0.95},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        dpa_filter *f = mkfilter("{\"filter\":\"gdp-residue\",\"mu\":1}");
        dpa_error err;
        dpa_filter_decision d;
        double t0 = now();
        int a = req(f, cases[i].q, &d, &err);
        double t = now() - t0;
        char *r = dpa_filter_remaining_json(f);
        double mu = r ? strtod(r + 6, NULL) : -1;
        print_message("  %-70s %s in %.3f s, remaining %s\n", cases[i].q, a == 1 ? "accepted" : "rejected", t, r);
        CHECK(a == 1, "%s: %s", cases[i].q, a < 0 ? err.message : d.reason);
        CHECK(mu >= cases[i].mu_lo && mu <= 1, "%s: remaining mu %.17g", cases[i].q, mu);
        free(r);
        dpa_filter_free(f);
    }
}

/* The dominance test evaluates a coarse copy of the query's law first
 * (src/filter/filter_dominance.c, law_coarsen/comp_le; docs/filters.md):
 * the decisions and states must stay those of the law alone.  References:
 * the states of the build before the coarse copy (commit 813b257), three
 * requests each, byte for byte (17 significant digits of mu_residue). */
static void test_residue_coarse_same(void **state)
{
    (void)state;
#define RS(a, mu) "{\"filter\":\"gdp-residue\",\"accepted\":" a ",\"mu_residue\":" mu ",\"mu_squared_spent\":\"0\"}"
    static const struct { const char *cfg, *q, *st[3]; } cases[] = {
        {"{\"filter\":\"gdp-residue\",\"mu\":1}", "{\"exponential_mechanism\":{\"epsilon\":0.5}}",
         {RS("1", "0.95691439307290238"), RS("2", "0.91176332103567237"), RS("3", "0.86421485504253126")}},
        {"{\"filter\":\"gdp-residue\",\"mu\":1}",
         "{\"compose\":[{\"exponential_mechanism\":{\"epsilon\":0.3}},{\"gaussian\":{\"sigma\":3}}]}",
         {RS("1", "0.92658239083360483"), RS("2", "0.84682220182786094"), RS("3", "0.75871895955646673")}},
        {"{\"filter\":\"gdp-residue\",\"mu\":1}", "{\"poisson\":{\"rate\":0.1,\"event\":{\"laplace\":{\"scale\":0.5}}}}",
         {RS("1", "0.97153343111439661"), RS("2", "0.94219333288945961"), RS("3", "0.91189346866237009")}},
        /* the second and third rejected: the state unchanged */
        {"{\"filter\":\"gdp-residue\",\"mu\":0.4}", "{\"exponential_mechanism\":{\"epsilon\":0.5}}",
         {RS("1", "0.26507815409535579"), RS("1", "0.26507815409535579"), RS("1", "0.26507815409535579")}},
    };
#undef RS
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        dpa_filter *f = mkfilter(cases[i].cfg);
        for (int k = 0; k < 3; k++) {
            dpa_error err;
            dpa_filter_decision d;
            int a = req(f, cases[i].q, &d, &err);
            char *st = dpa_filter_state_json(f);
            CHECK(a >= 0, "%s: %s", cases[i].q, err.message);
            CHECK(st && !strcmp(st, cases[i].st[k]), "%s, request %d: state %s, expected %s", cases[i].q, k + 1,
                  st ? st : "(null)", cases[i].st[k]);
            free(st);
        }
        dpa_filter_free(f);
    }
}

int main(void)
{
    test_seed_from_env();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_exact_budgets, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_op_free, setup, teardown),
        cmocka_unit_test_setup_teardown(test_replay_property, setup, teardown),
        cmocka_unit_test_setup_teardown(test_natural_approx_replay, setup, teardown),
        cmocka_unit_test_setup_teardown(test_old_states, setup, teardown),
        cmocka_unit_test_setup_teardown(test_residue_fast_paths, setup, teardown),
        cmocka_unit_test_setup_teardown(test_residue_coarse_same, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

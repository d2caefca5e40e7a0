/* The residue filters with approximate-GDP budgets (src/filter/filter_budget.c,
 * filter_dominance.c, filter_gdp.c; docs/filters.md "Approximate GDP budgets",
 * "The general residue filter").
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 *  - delta = 0 is the GDP residue filter: {"mu": M, "delta": 0} and the
 *    general residue filter {"budget": {"tradeoff": {"mu": M}}} make the
 *    same decisions, reasons and states, byte for byte, as {"mu": M} on
 *    random sequences of pure, randomized-response, Laplace, Gaussian, GDP
 *    and (eps, delta) queries (a property over generated cases);
 *  - soundness against an independent computation: after a random
 *    sequence under a random budget G_M (+) R_{0,D}, the composition of
 *    the accepted queries with the remaining budget as shown (G_mu_rem (+)
 *    R_{0,delta_rem}, RF Thm 1: every residue composed with what was spent
 *    stays below the budget) is checked with the accountant at 13 eps: its
 *    certified LOWER delta never exceeds the budget's certified upper
 *    profile D + (1 - D) delta_M(eps) (dpa_tf_gdp_delta).  A lower bound
 *    above the upper one would prove a violation; no tolerance is needed.
 *    (The accountant's UPPER bound is not compared: the residues are tight,
 *    so the composition touches the budget where the accountant's own bracket
 *    width, about 1e-4 relative, would make the comparison fail without any
 *    violation.)
 *  - budgets given as curves (the general residue filter, RF Thm 1): after
 *    random sequences under random lists of (eps_i, delta_i), the accepted
 *    queries alone have a certified UPPER delta(eps_i) <= delta_i, and
 *    composed with the remaining G_mu (+) R_{0,delta} a certified LOWER one
 *    (no tolerance in either); the (eps, delta) reader and the points reader
 *    given the vertices of f_{eps,delta} (GDP eq 5) agree;
 *  - hand-checked cases: (0, delta) queries spend the delta by the product
 *    rule R_{0,a} (+) R_{0,b} = R_{0, 1 - (1-a)(1-b)} (RF Cor 6) and leave mu
 *    untouched; an (eps, delta) query leaves the delta 1 - (1 - D)/(1 -
 *    delta) and the same mu as the eps-DP query (its finite part is RR_eps);
 *    a query whose delta exceeds the remaining one is rejected;
 *  - exact replay (filter_replay.h) on random sequences under approximate
 *    budgets; bad configurations and states give DPA_EINVAL naming the field.
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
#include "check.h"
#include "dpacct/event.h"
#include "dpacct/filter.h"
#include "dpacct/tradeoff.h"
#include "filter_replay.h"

/* A random query (JSON) of the kinds the approximate-GDP filters take;
 * with_delta 0: no query with a delta (the GDP residue filter refuses none
 * of the others but rejects those). */
static void random_query(char *q, size_t n, int with_delta)
{
    double e = 0.05 + 0.55 * test_unif();
    int kind = (int)(test_unif() * (with_delta ? 8 : 6));
    switch (kind) {
    case 0: snprintf(q, n, "{\"pure\":{\"epsilon\":%.17g}}", e); break;
    case 1: snprintf(q, n, "{\"randomized_response\":{\"epsilon\":%.17g}}", e); break;
    case 2: snprintf(q, n, "{\"laplace\":{\"scale\":%.17g}}", 2 + 8 * test_unif()); break;
    case 3: snprintf(q, n, "{\"gaussian\":{\"sigma\":%.17g}}", 2 + 6 * test_unif()); break;
    case 4: snprintf(q, n, "{\"gdp\":{\"mu\":%.17g}}", 0.6 * e); break;
    case 5: snprintf(q, n, "{\"compose\":[{\"pure\":{\"epsilon\":%.17g}},{\"gaussian\":{\"sigma\":4}}]}", e); break;
    case 6: snprintf(q, n, "{\"approx\":{\"epsilon\":%.17g,\"delta\":%.17g}}", e, test_log_unif(1e-10, 3e-7)); break;
    default: snprintf(q, n, "{\"approx\":{\"epsilon\":0,\"delta\":%.17g}}", test_log_unif(1e-10, 3e-7)); break;
    }
}

/* the number after "key": in a JSON text (the first occurrence) */
static double json_num(const char *text, const char *key)
{
    char k[64];
    snprintf(k, sizeof k, "\"%s\":", key);
    const char *p = strstr(text, k);
    if (!p) fail_msg("no %s in %s", key, text);
    return strtod(p + strlen(k), NULL);
}

/* Runs `steps` random queries (all kinds) through f; comp gets the JSON of
 * a "compose" of the accepted ones, still open (no "]}"); returns how many
 * were accepted, *with_delta how many of them carry a delta. */
static int run_sequence(dpa_filter *f, int steps, char *comp, size_t cap, int *with_delta)
{
    size_t len = (size_t)snprintf(comp, cap, "{\"compose\":[");
    int nacc = 0;
    for (int k = 0; k < steps; k++) {
        char q[300];
        random_query(q, sizeof q, 1);
        dpa_error err;
        if (req(f, q, NULL, &err) == 1) {
            len += (size_t)snprintf(comp + len, cap - len, "%s%s", nacc ? "," : "", q);
            nacc++;
            if (with_delta) *with_delta += strstr(q, "delta") != NULL;
        }
    }
    if (len >= cap) fail_msg("composition text too long");
    return nacc;
}

/* The accountant of comp (from run_sequence) composed with f's remaining
 * budget as shown, G_mu (+) R_{0,delta} (RF Thm 1: spent (+) residue <= B). */
static dpa_accountant *with_residue(const dpa_filter *f, char *comp, size_t cap, int nacc)
{
    char *rem = dpa_filter_remaining_json(f);
    double mr = json_num(rem, "mu"), dr = strstr(rem, "\"delta\"") ? json_num(rem, "delta") : 0;
    free(rem);
    size_t len = strlen(comp);
    len += (size_t)snprintf(comp + len, cap - len, "%s{\"gdp\":{\"mu\":%.17g}},{\"approx\":{\"epsilon\":0,\"delta\":%.17g}}]}",
                            nacc ? "," : "", mr, dr);
    if (len >= cap) fail_msg("composition text too long");
    return test_accountant(comp, DPA_METHOD_AUTO);
}

/* ---------------- delta = 0 is the GDP residue filter ---------------- */
static void test_delta0_is_gdp_residue(void **state)
{
    (void)state;
    int seqs = SANITIZED ? 3 : 12, compared = 0, accepted = 0;
    for (int seq = 0; seq < seqs; seq++) {
        double M = test_log_unif(0.3, 3);
        char cfg[3][200];
        snprintf(cfg[0], sizeof cfg[0], "{\"filter\":\"gdp-residue\",\"mu\":%.17g}", M);
        snprintf(cfg[1], sizeof cfg[1], "{\"filter\":\"gdp-residue\",\"mu\":%.17g,\"delta\":0}", M);
        snprintf(cfg[2], sizeof cfg[2], "{\"filter\":\"residue\",\"budget\":{\"tradeoff\":{\"mu\":%.17g}}}", M);
        dpa_filter *f[3];
        for (int i = 0; i < 3; i++) f[i] = mkfilter(cfg[i]);
        for (int i = 1; i < 3; i++) {
            char *c0 = dpa_filter_config_json(f[0]), *ci = dpa_filter_config_json(f[i]);
            CHECK(!strcmp(c0, ci), "canonical configurations differ: %s / %s", c0, ci);
            free(c0);
            free(ci);
        }
        for (int k = 0; k < 6; k++) {
            char q[300];
            random_query(q, sizeof q, k % 3 == 2); /* some (eps, delta) queries: rejected by all three */
            dpa_filter_decision d[3];
            dpa_error e[3];
            int r[3];
            char *s[3];
            for (int i = 0; i < 3; i++) {
                r[i] = req(f[i], q, &d[i], &e[i]);
                s[i] = filter_state(f[i]);
            }
            for (int i = 1; i < 3; i++) {
                CHECK(r[i] == r[0] && (r[0] < 0 || !strcmp(d[i].reason, d[0].reason)),
                      "%s vs %s on %s: %d (%s) / %d (%s)", cfg[i], cfg[0], q, r[i], d[i].reason, r[0], d[0].reason);
                CHECK(!strcmp(s[i], s[0]), "%s vs %s on %s: states %s / %s", cfg[i], cfg[0], q, s[i], s[0]);
            }
            compared++;
            accepted += r[0] == 1;
            for (int i = 0; i < 3; i++) free(s[i]);
        }
        for (int i = 0; i < 3; i++) dpa_filter_free(f[i]);
    }
    print_message("  %d queries compared, %d accepted\n", compared, accepted);
    CHECK(accepted >= compared / 4, "too few accepted queries (%d of %d): the comparison is vacuous", accepted, compared);
}

/* ---------------- soundness: spent (+) residue <= budget ---------------- */
static void test_approx_gdp_sound(void **state)
{
    (void)state;
    static const double eps_grid[] = {0, 0.05, 0.1, 0.25, 0.5, 0.75, 1, 1.5, 2, 3, 4, 6, 8};
    int seqs = SANITIZED ? 2 : 8, with_delta_spent = 0, checks = 0;
    for (int seq = 0; seq < seqs; seq++) {
        double M = test_log_unif(0.5, 2), D = test_log_unif(1e-8, 1e-6);
        char cfg[200];
        snprintf(cfg, sizeof cfg, "{\"filter\":\"gdp-residue\",\"mu\":%.17g,\"delta\":%.17g}", M, D);
        dpa_filter *f = mkfilter(cfg);
        char comp[8192];
        int nacc = run_sequence(f, 7, comp, sizeof comp, &with_delta_spent);
        dpa_accountant *a = with_residue(f, comp, sizeof comp, nacc);
        for (size_t i = 0; i < sizeof eps_grid / sizeof eps_grid[0]; i++) {
            dpa_result r;
            dpa_error err;
            double lo, hi;
            if (dpa_accountant_delta(a, eps_grid[i], &r, &err)) fail_msg("%s: %s", comp, err.message);
            if (dpa_tf_gdp_delta(M, eps_grid[i], &lo, &hi, &err)) fail_msg("gdp delta: %s", err.message);
            double budget_hi = D + (1 - D) * hi;
            budget_hi = nextafter(budget_hi * (1 + 4e-16), INFINITY); /* the two roundings of this line */
            CHECK(r.lower <= budget_hi, "%s: composition %s at eps %g: delta >= %.17g > budget %.17g", cfg, comp,
                  eps_grid[i], r.lower, budget_hi);
            checks++;
        }
        dpa_accountant_free(a);
        dpa_filter_free(f);
    }
    print_message("  %d profile points checked, %d accepted queries with a delta\n", checks, with_delta_spent);
    CHECK(with_delta_spent > 0, "no accepted query spent delta: the sweep is vacuous");
}

/* ---------------- budgets given as curves ---------------- */
/* A random (eps, delta) budget list and sequence; after it (if anything was
 * accepted), the accepted queries composed with the remaining budget as
 * shown (G_mu (+) R_{0,delta}) must have a certified
 * LOWER delta at every eps_i at most delta_i (the budget requires
 * (eps_i, delta_i)-DP for every i; a lower bound above it is a proven
 * violation).  Also counted: where the accountant's UPPER bound exceeds
 * delta_i (the residues are tight, so its bracket can cross; reported). */
static void test_curve_budget_sound(void **state)
{
    (void)state;
    int seqs = SANITIZED ? 2 : 8, checks = 0, accepted = 0, over_upper = 0;
    for (int seq = 0; seq < seqs; seq++) {
        int np = 1 + (int)(3 * test_unif());
        double e[3], d[3];
        char cfg[600];
        size_t cl = (size_t)snprintf(cfg, sizeof cfg, "{\"filter\":\"residue\",\"budget\":{\"tradeoff\":{\"eps_delta\":[");
        for (int i = 0; i < np; i++) {
            e[i] = 0.5 + 2.5 * test_unif();
            d[i] = test_log_unif(1e-8, 1e-5);
            cl += (size_t)snprintf(cfg + cl, sizeof cfg - cl, "%s[%.17g,%.17g]", i ? "," : "", e[i], d[i]);
        }
        snprintf(cfg + cl, sizeof cfg - cl, "]}}}");
        dpa_filter *f = mkfilter(cfg);
        char comp[8192];
        int nacc = run_sequence(f, 5, comp, sizeof comp, NULL);
        accepted += nacc;
        if (nacc == 0) {
            dpa_filter_free(f);
            continue;
        }
        /* the accepted sequence alone: the accountant's certified UPPER delta
         * at every eps_i within delta_i (the task's criterion; the residue
         * left, G_mu (+) R_{0,delta}, is the room between them) */
        char spent[8200];
        if (snprintf(spent, sizeof spent, "%s]}", comp) >= (int)sizeof spent) fail_msg("composition text too long");
        dpa_accountant *sa = test_accountant(spent, DPA_METHOD_AUTO);
        for (int i = 0; i < np; i++) {
            dpa_result r;
            dpa_error err;
            if (dpa_accountant_delta(sa, e[i], &r, &err)) fail_msg("%s: %s", spent, err.message);
            CHECK(r.upper <= d[i], "%s: accepted %s at eps %.17g: certified delta %.17g > budget %.17g", cfg, spent, e[i],
                  r.upper, d[i]);
        }
        dpa_accountant_free(sa);
        dpa_accountant *a = with_residue(f, comp, sizeof comp, nacc);
        for (int i = 0; i < np; i++) {
            dpa_result r;
            dpa_error err;
            if (dpa_accountant_delta(a, e[i], &r, &err)) fail_msg("%s: %s", comp, err.message);
            CHECK(r.lower <= d[i], "%s: composition %s at eps %.17g: delta >= %.17g > budget %.17g", cfg, comp, e[i],
                  r.lower, d[i]);
            over_upper += r.upper > d[i];
            checks++;
        }
        dpa_accountant_free(a);
        dpa_filter_free(f);
    }
    print_message("  %d budget points checked, %d accepted queries; the accountant's upper bound above the budget at %d\n",
                  checks, accepted, over_upper);
    CHECK(checks >= seqs, "too few sequences accepted anything (%d checks)", checks);
}

/* The same budget as one (eps, delta) pair and as the points of its
 * tradeoff function f_{eps,delta} (vertices (0, 1 - delta), (x*, x*) with
 * x* = (1 - delta)/(1 + e^eps), (1 - delta, 0); GDP eq 5): the two readers
 * build the same curve (up to the rounding of x*), so the decisions agree
 * and the residues agree to 1e-6. */
static void test_curve_readers_agree(void **state)
{
    (void)state;
    int agree = 0, n = 0;
    for (int seq = 0; seq < (SANITIZED ? 2 : 6); seq++) {
        double e = 0.5 + 2 * test_unif(), d = test_log_unif(1e-8, 1e-4), xs = (1 - d) / (1 + exp(e));
        char c1[300], c2[400];
        snprintf(c1, sizeof c1, "{\"filter\":\"residue\",\"budget\":{\"tradeoff\":{\"eps_delta\":[[%.17g,%.17g]]}}}", e, d);
        snprintf(c2, sizeof c2,
                 "{\"filter\":\"residue\",\"budget\":{\"tradeoff\":{\"points\":[[0,%.17g],[%.17g,%.17g],[%.17g,0]]}}}",
                 1 - d, xs, xs, 1 - d);
        dpa_filter *f1 = mkfilter(c1), *f2 = mkfilter(c2);
        for (int k = 0; k < 3; k++) {
            char q[300];
            random_query(q, sizeof q, 1);
            dpa_error err;
            dpa_filter_decision d1, d2;
            int r1 = req(f1, q, &d1, &err), r2 = req(f2, q, &d2, &err);
            char *m1 = dpa_filter_remaining_json(f1), *m2 = dpa_filter_remaining_json(f2);
            int same = r1 == r2;
            if (same && r1 == 1)
                same = fabs(json_num(m1, "mu") - json_num(m2, "mu")) <= 1e-6 &&
                       fabs(json_num(m1, "delta") - json_num(m2, "delta")) <= 1e-6 * d;
            CHECK(same, "%s / %s on %s: %d %s / %d %s", c1, c2, q, r1, m1, r2, m2);
            agree += same && r1 == 1;
            n++;
            free(m1);
            free(m2);
        }
        dpa_filter_free(f1);
        dpa_filter_free(f2);
    }
    print_message("  %d decisions compared, %d accepted by both\n", n, agree);
    CHECK(agree > 0, "nothing accepted: the comparison is vacuous");
}

/* ---------------- hand-checked cases ---------------- */
static void test_hand_checked(void **state)
{
    (void)state;
    dpa_error err;
    dpa_filter_decision d;
    /* (0, 5e-7) twice under (1, 1e-6): 1 - d1 = (1 - 1e-6)/(1 - 5e-7), d1 =
     * 5e-7/(1 - 5e-7) = 5.00000250000125e-7; d2 = 1 - (1 - 1e-6)/(1 - 5e-7)^2 =
     * 2.5e-13/(1 - 5e-7)^2 = 2.500002500001875e-13; each rounded down (at most
     * a relative 1e-12 below: the 36-digit decimals) */
    dpa_filter *f = mkfilter("{\"filter\":\"gdp-residue\",\"mu\":1,\"delta\":1e-6}");
    const char *z = "{\"approx\":{\"epsilon\":0,\"delta\":5e-7}}";
    static const double want[] = {5.00000250000125e-7, 2.500002500001875e-13};
    for (int k = 0; k < 2; k++) {
        CHECK(req(f, z, &d, &err) == 1, "(0, 5e-7) query %d rejected: %s", k + 1, d.reason);
        char *rem = dpa_filter_remaining_json(f);
        double dr = json_num(rem, "delta");
        CHECK(json_num(rem, "mu") == 1, "mu changed by a (0, delta) query: %s", rem);
        CHECK(dr <= want[k] && dr >= want[k] * (1 - 1e-12), "delta after %d: %.17g, want %.17g (rounded down): %s", k + 1,
              dr, want[k], rem);
        free(rem);
    }
    CHECK(req(f, z, &d, &err) == 0, "a third (0, 5e-7) query was accepted with 2.5e-13 left");
    CHECK(strstr(d.reason, "RF Cor 6") != NULL, "reason: %s", d.reason);
    dpa_filter_free(f);

    /* approx(0.5, 1e-7) under (1, 1e-6): delta 1 - (1 - 1e-6)/(1 - 1e-7) =
     * 9.0000009000000900e-7 (below it by the search's margin, relative
     * < 1e-9), and the mu of pure 0.5 under mu = 1 (0.85999044, docs/filters.md)
     * within the bisection's bracket 1e-8 */
    dpa_filter *g = mkfilter("{\"filter\":\"gdp-residue\",\"mu\":1,\"delta\":1e-6}");
    dpa_filter *p = mkfilter("{\"filter\":\"gdp-residue\",\"mu\":1}");
    CHECK(req(g, "{\"approx\":{\"epsilon\":0.5,\"delta\":1e-7}}", &d, &err) == 1, "approx(0.5, 1e-7) rejected: %s",
          d.reason);
    CHECK(req(p, "{\"pure\":{\"epsilon\":0.5}}", &d, &err) == 1, "pure 0.5 rejected: %s", d.reason);
    char *rg = dpa_filter_remaining_json(g), *rp = dpa_filter_remaining_json(p);
    double dg = json_num(rg, "delta"), mg = json_num(rg, "mu"), mp = json_num(rp, "mu");
    const double d_exact = 9.00000090000009e-7; /* minus the margins of residue_delta: about 4e-15 */
    CHECK(dg <= d_exact && dg >= d_exact * (1 - 1e-9), "delta after approx(0.5, 1e-7): %.17g, want %.17g", dg, d_exact);
    CHECK(fabs(mg - mp) <= 2e-8 && mg <= 0.85999046, "mu after approx(0.5, 1e-7): %.17g, pure 0.5: %.17g", mg, mp);
    CHECK(fabs(mp - 0.85999044) < 1e-8, "pure 0.5 under mu 1: %.17g (docs/filters.md: 0.85999044)", mp);
    /* more delta than the remaining: rejected, state unchanged */
    char *s0 = filter_state(g);
    CHECK(req(g, "{\"approx\":{\"epsilon\":0.1,\"delta\":1e-6}}", &d, &err) == 0, "approx(0.1, 1e-6) accepted with 9e-7 left");
    char *s1 = filter_state(g);
    CHECK(!strcmp(s0, s1), "a rejected query changed the state: %s -> %s", s0, s1);
    /* the plain GDP residue filter rejects any query with a delta */
    CHECK(req(p, "{\"approx\":{\"epsilon\":0,\"delta\":1e-12}}", &d, &err) == 0, "mu-GDP budget took a (0, delta) query");
    free(s0);
    free(s1);
    free(rg);
    free(rp);
    dpa_filter_free(g);
    dpa_filter_free(p);
}

/* ---------------- replay ---------------- */
static void test_replay(void **state)
{
    (void)state;
    static const char *const cfgs[] = {
        "{\"filter\":\"gdp-residue\",\"mu\":1,\"delta\":1e-6}",
        "{\"filter\":\"residue\",\"budget\":{\"tradeoff\":{\"mu\":0.7,\"delta\":3e-7}},\"report_delta\":1e-5}",
        "{\"filter\":\"residue\",\"budget\":{\"tradeoff\":{\"eps_delta\":[[1,1e-6],[2,1e-9]]}}}",
        "{\"filter\":\"residue\",\"budget\":{\"tradeoff\":{\"points\":[[0,0.99],[0.2,0.3],[0.6,0]]}}}",
    };
    int steps = 0, acc = 0;
    for (size_t c = 0; c < sizeof cfgs / sizeof cfgs[0]; c++) {
        dpa_filter *f0 = mkfilter(cfgs[c]);
        char *cfg = dpa_filter_config_json(f0);
        dpa_filter_free(f0);
        for (int seq = 0; seq < (SANITIZED ? 1 : 4); seq++) {
            dpa_filter *a = mkfilter(cfg);
            for (int k = 0; k < 6; k++, steps++) {
                char q[300], why[2048];
                int r = 0;
                dpa_error err;
                random_query(q, sizeof q, 1);
                dpa_spec *s = dpa_spec_from_json(q, &err);
                if (!s) fail_msg("spec %s: %s", q, err.message);
                CHECK(replay_step(a, cfg, s, &r, why, sizeof why), "%s, %s: %s", cfg, q, why);
                acc += r == 1;
                dpa_spec_free(s);
            }
            dpa_filter_free(a);
        }
        free(cfg);
    }
    print_message("  %d steps replayed, %d accepted\n", steps, acc);
    CHECK(acc > 0, "nothing accepted: the replay is vacuous");
}

/* ---------------- bad input ---------------- */
static void test_bad_input(void **state)
{
    (void)state;
    static const struct { const char *cfg, *msg; } cases[] = {
        {"{\"filter\":\"gdp-residue\",\"mu\":1,\"delta\":1}", "/delta: must be in [0, 1)"},
        {"{\"filter\":\"gdp-residue\",\"mu\":1,\"delta\":-1e-9}", "/delta: must be in [0, 1]"},
        {"{\"filter\":\"gdp-residue\",\"mu\":1,\"delta\":\"x\"}", "/delta: must be a number"},
        {"{\"filter\":\"residue\",\"mu\":1}", "/mu: unknown key"},
        {"{\"filter\":\"residue\"}", "/budget: missing"},
        {"{\"filter\":\"residue\",\"budget\":{\"gdp\":1}}", "/budget/gdp: unknown key"},
        {"{\"filter\":\"residue\",\"budget\":{\"tradeoff\":3}}", "/budget/tradeoff: missing or not an object"},
        {"{\"filter\":\"residue\",\"budget\":{\"tradeoff\":{\"mu\":-1}}}", "/budget/tradeoff/mu: must be in [0"},
        {"{\"filter\":\"residue\",\"budget\":{\"tradeoff\":{\"mu\":1,\"delta\":2}}}", "/budget/tradeoff/delta: must be in"},
        {"{\"filter\":\"residue\",\"budget\":{\"tradeoff\":{\"mu\":1,\"sigma\":2}}}", "/budget/tradeoff/sigma: unknown key"},
        {"{\"filter\":\"residue\",\"budget\":{\"tradeoff\":{\"mu\":1,\"points\":[[0,1]]}}}", "/budget/tradeoff: exactly one of"},
        {"{\"filter\":\"residue\",\"budget\":{\"tradeoff\":{\"points\":[]}}}", "/budget/tradeoff/points: must be a non-empty"},
        {"{\"filter\":\"residue\",\"budget\":{\"tradeoff\":{\"points\":[[0.5,0.6]]}}}", "/budget/tradeoff/points/0: beta > 1 - alpha"},
        {"{\"filter\":\"residue\",\"budget\":{\"tradeoff\":{\"points\":[[0.5]]}}}", "/budget/tradeoff/points/0: must be a pair"},
        {"{\"filter\":\"residue\",\"budget\":{\"tradeoff\":{\"eps_delta\":[[-1,0.1]]}}}", "/budget/tradeoff/eps_delta/0: eps must be"},
        {"{\"filter\":\"residue\",\"budget\":{\"tradeoff\":{\"eps_delta\":[[1,2]]}}}", "/budget/tradeoff/eps_delta/0: eps must be"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char got[sizeof ((dpa_error *)0)->message + 16];
        CHECK(config_refused(cases[i].cfg, cases[i].msg, got, sizeof got), "%s: %s", cases[i].cfg, got);
    }
    static const struct { const char *cfg, *st, *msg; } states[] = {
        {"{\"filter\":\"gdp-residue\",\"mu\":1}",
         "{\"filter\":\"gdp-residue\",\"accepted\":0,\"delta_residue\":\"0\",\"mu_squared_spent\":\"0\"}",
         "/delta_residue: only with a delta budget"},
        {"{\"filter\":\"gdp-residue\",\"mu\":1,\"delta\":1e-6}", "{\"filter\":\"gdp-residue\",\"accepted\":0,\"mu_squared_spent\":\"0\"}",
         "/delta_residue: missing"},
        {"{\"filter\":\"gdp-residue\",\"mu\":1,\"delta\":1e-6}",
         "{\"filter\":\"gdp-residue\",\"accepted\":0,\"delta_residue\":\"0.000002\",\"mu_squared_spent\":\"0\"}",
         "/delta_residue: must be in [0, 0.000001]"},
    };
    for (size_t i = 0; i < sizeof states / sizeof states[0]; i++) {
        dpa_error err;
        dpa_filter *f = mkfilter(states[i].cfg);
        char *s0 = filter_state(f);
        dpa_status st = dpa_filter_set_state_json(f, states[i].st, &err);
        char *s1 = filter_state(f);
        CHECK(st == DPA_EINVAL && strstr(err.message, states[i].msg), "%s: %s", states[i].st, st ? err.message : "accepted");
        CHECK(!strcmp(s0, s1), "a bad state changed the filter");
        free(s0);
        free(s1);
        dpa_filter_free(f);
    }
}

int main(void)
{
    test_seed_from_env();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_delta0_is_gdp_residue, setup, teardown),
        cmocka_unit_test_setup_teardown(test_approx_gdp_sound, setup, teardown),
        cmocka_unit_test_setup_teardown(test_curve_budget_sound, setup, teardown),
        cmocka_unit_test_setup_teardown(test_curve_readers_agree, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hand_checked, setup, teardown),
        cmocka_unit_test_setup_teardown(test_replay, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_input, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

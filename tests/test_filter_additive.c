/* RF Alg 3, the additive discretized privacy-loss profile filter
 * (src/filter/filter_additive.c; docs/filters.md "The additive profile
 * filter (RF Alg 3)").
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 *  - the levels of RF eq (1) against an independent computation: n and eps_i
 *    by the formula, and each budget l_i = 8 max{l : H_{e^E}(RR_{eps_{i-1}}^(x)(l-1))
 *    <= 2D} with H summed directly over the binomial law of the composed
 *    randomized responses (long double, lgammal; not the exact method the
 *    filter uses): the filter's l_i is at most the reference, and equal to it
 *    unless H at the reference's l is within 1e-6 relative of 2D;
 *  - the charges: a pure eps query costs 1 at the level of eps (within the
 *    accountant's tail brackets, 1e-9) and nothing elsewhere; a Gaussian
 *    query costs at least its discretized profile p_i = P(eps_{i-1} <= |Z| <
 *    eps_i), Z ~ N(mu^2/2, mu^2) (erfc, long double), and at most 1e-6 more;
 *  - a level runs out: pure 0.3 queries fill their level's budget (48 under
 *    E = 1, D = 1e-6, k = 100; the last one may not fit, each charge is
 *    rounded up); the capacity k; the guarantee is RF Thm 15's (the same
 *    numbers as natural-approx's RF Thm 9 for the same E, D, k);
 *  - asymmetric queries refused, bad configurations, exact replay.
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
#include "filter_replay.h"

/* the numbers of the JSON array after "key":[ (at most cap) */
static size_t json_array_nums(const char *text, const char *key, double *out, size_t cap)
{
    char k[64];
    snprintf(k, sizeof k, "\"%s\":[", key);
    const char *p = strstr(text, k);
    if (!p) fail_msg("no %s in %s", key, text);
    p += strlen(k);
    size_t n = 0;
    while (*p && *p != ']' && n < cap) {
        char *end;
        out[n++] = strtod(p, &end);
        p = end;
        while (*p == ',' || *p == ' ') p++;
    }
    return n;
}

/* H_x of c-fold RR_e, by the binomial sum (j correct answers: P = C p^j q^(c-j),
 * Q = C q^j p^(c-j), p = e^e/(1 + e^e)) */
static long double rr_h(double e, int c, double E)
{
    long double lp = -log1pl(expl(-(long double)e)), lq = -log1pl(expl((long double)e)), h = 0;
    for (int j = 0; j <= c; j++) {
        long double lc = lgammal(c + 1.0L) - lgammal(j + 1.0L) - lgammal(c - j + 1.0L);
        long double a = expl(lc + j * lp + (c - j) * lq), b = expl(lc + j * lq + (c - j) * lp + E);
        if (a > b) h += a - b;
    }
    return h;
}

static void test_levels(void **state)
{
    (void)state;
    static const struct { double E, D, k; } cases[] = {{1, 1e-6, 100}, {0.5, 1e-5, 40}, {2, 1e-8, 200}};
    int compared = 0;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        double E = cases[c].E, D = cases[c].D, k = cases[c].k;
        char cfg[200];
        snprintf(cfg, sizeof cfg, "{\"filter\":\"additive-profile\",\"epsilon\":%.17g,\"delta\":%.17g,\"max_queries\":%.17g}", E, D, k);
        dpa_filter *f = mkfilter(cfg);
        char *rem = dpa_filter_remaining_json(f);
        double lev[64];
        size_t n = json_array_nums(rem, "levels", lev, 64);
        size_t n_ref = (size_t)(1 + ceil(log2(k * (E + 2) / E)));
        CHECK(n == n_ref, "%s: %zu levels, RF eq (1): %zu", cfg, n, n_ref);
        CHECK(lev[0] == k, "%s: l_1 = %.17g, want k", cfg, lev[0]);
        CHECK(fabs(lev[n - 1] - 4 * D) <= 1e-15 * D, "%s: l_n = %.17g, want 4D", cfg, lev[n - 1]);
        int cmax = (int)ceil(k / 8);
        for (size_t i = 2; i < n; i++) {
            double e = (E + 2) / ldexp(1.0, (int)(n - 1 - (i - 1))); /* eps_{i-1} */
            int l = 1; /* the reference: largest l <= cmax + 1 with H(l - 1) <= 2D */
            while (l <= cmax && rr_h(e, l, E) <= 2 * D) l++;
            double ref = 8.0 * l;
            int near = fabsl(rr_h(e, l - 1, E) - 2 * D) <= 1e-6 * 2 * D || (l <= cmax && fabsl(rr_h(e, l, E) - 2 * D) <= 1e-6 * 2 * D);
            CHECK(lev[i - 1] <= ref && (near || lev[i - 1] == ref), "%s: l_%zu = %.17g, reference %.17g", cfg, i, lev[i - 1], ref);
            compared++;
        }
        free(rem);
        dpa_filter_free(f);
    }
    print_message("  %d level budgets compared\n", compared);
}

static void test_charges(void **state)
{
    (void)state;
    const char *cfg = "{\"filter\":\"additive-profile\",\"epsilon\":1,\"delta\":1e-6,\"max_queries\":100}";
    double E = 1, before[64], after[64];
    dpa_error err;
    dpa_filter_decision d;
    /* pure 0.3: level 6 of 10 (eps_5 = 0.1875 <= 0.3 < eps_6 = 0.375) */
    dpa_filter *f = mkfilter(cfg);
    char *r0 = dpa_filter_remaining_json(f);
    size_t n = json_array_nums(r0, "levels", before, 64);
    CHECK(req(f, "{\"pure\":{\"epsilon\":0.3}}", &d, &err) == 1, "pure 0.3 rejected: %s", d.reason);
    char *r1 = dpa_filter_remaining_json(f);
    json_array_nums(r1, "levels", after, 64);
    for (size_t i = 0; i < n; i++) {
        double ch = before[i] - after[i], want = i == 5 ? 1 : 0;
        CHECK(ch >= want - 1e-12 && ch <= want + 1e-9, "pure 0.3: level %zu charged %.17g, want %g", i + 1, ch, want);
    }
    free(r0);
    free(r1);
    dpa_filter_free(f);
    /* Gaussian sigma: Z ~ N(mu^2/2, mu^2), mu = 1/sigma */
    static const double sig[] = {2, 3, 6}; /* P(|Z| >= 3) below l_10 = 4e-6 */
    for (size_t s = 0; s < 3; s++) {
        f = mkfilter(cfg);
        r0 = dpa_filter_remaining_json(f);
        json_array_nums(r0, "levels", before, 64);
        char q[100];
        snprintf(q, sizeof q, "{\"gaussian\":{\"sigma\":%.17g}}", sig[s]);
        CHECK(req(f, q, &d, &err) == 1, "%s rejected: %s", q, d.reason);
        r1 = dpa_filter_remaining_json(f);
        json_array_nums(r1, "levels", after, 64);
        long double mu = 1.0L / sig[s], m = mu * mu / 2;
        /* P(Z >= x) and P(Z <= -x) */
#define SF(x) (0.5L * erfcl(((long double)(x) - m) / (mu * sqrtl(2.0L))))
#define CDFN(x) (0.5L * erfcl(((long double)(x) + m) / (mu * sqrtl(2.0L))))
        for (size_t i = 0; i < n; i++) {
            long double lo = i == 0 ? 0 : (E + 2) / ldexp(1.0, (int)(n - 1 - i)), p;
            if (i == n - 1) p = SF(lo) + CDFN(lo);
            else {
                long double hi = (E + 2) / ldexp(1.0, (int)(n - 2 - i));
                p = i == 0 ? 1 - SF(hi) - CDFN(hi) : SF(lo) - SF(hi) + CDFN(lo) - CDFN(hi);
            }
            double ch = before[i] - after[i];
            CHECK(ch >= (double)p * (1 - 1e-12) - 1e-15 && ch <= (double)p + 1e-6, "%s: level %zu charged %.17g, p = %.17Lg", q,
                  i + 1, ch, p);
        }
        free(r0);
        free(r1);
        dpa_filter_free(f);
    }
}

static void test_fill_and_capacity(void **state)
{
    (void)state;
    dpa_error err;
    dpa_filter_decision d;
    dpa_filter *f = mkfilter("{\"filter\":\"additive-profile\",\"epsilon\":1,\"delta\":1e-6,\"max_queries\":100}");
    int n = 0;
    while (n < 60 && req(f, "{\"pure\":{\"epsilon\":0.3}}", &d, &err) == 1) n++;
    CHECK(n == 47 || n == 48, "pure 0.3 accepted %d times, level 6's budget is 48", n);
    CHECK(strstr(d.reason, "level 6") != NULL, "reason: %s", d.reason);
    char *rem = dpa_filter_remaining_json(f);
    /* RF Thm 15's guarantee is natural-approx's RF Thm 9 at the same (E, D, k) */
    dpa_filter *g = mkfilter("{\"filter\":\"natural-approx\",\"epsilon\":1,\"delta\":1e-6,\"allow_degraded\":true,\"max_queries\":100}");
    char *rg = dpa_filter_remaining_json(g);
    const char *a = strstr(rem, "\"guarantee\":{"), *b = strstr(rg, "\"degraded_guarantee\":{");
    CHECK(a && b && !strncmp(strchr(a, '{'), strchr(b, '{'), (size_t)(strstr(strchr(a, '{'), ",\"source\"") - strchr(a, '{'))),
          "guarantees differ: %s / %s", rem, rg);
    free(rem);
    free(rg);
    dpa_filter_free(g);
    dpa_filter_free(f);
    /* capacity: k = 3 Gaussian queries */
    f = mkfilter("{\"filter\":\"additive-profile\",\"epsilon\":1,\"delta\":1e-6,\"max_queries\":3}");
    for (int i = 0; i < 3; i++) CHECK(req(f, "{\"gaussian\":{\"sigma\":20}}", &d, &err) == 1, "query %d: %s", i + 1, d.reason);
    CHECK(req(f, "{\"gaussian\":{\"sigma\":20}}", &d, &err) == 0 && strstr(d.reason, "capacity"), "4th: %s", d.reason);
    CHECK(dpa_filter_exhausted(f), "not exhausted after k queries");
    dpa_filter_free(f);
}

static void test_bad_input_and_replay(void **state)
{
    (void)state;
    static const struct { const char *cfg, *msg; } cases[] = {
        {"{\"filter\":\"additive-profile\",\"epsilon\":1,\"delta\":0.25,\"max_queries\":10}", "/delta: must be in (0, 0.25)"},
        {"{\"filter\":\"additive-profile\",\"epsilon\":0,\"delta\":1e-6,\"max_queries\":10}", "/epsilon: must be in (0"},
        {"{\"filter\":\"additive-profile\",\"epsilon\":1,\"delta\":1e-6,\"max_queries\":1.5}", "/max_queries: must be an integer"},
        {"{\"filter\":\"additive-profile\",\"epsilon\":1,\"delta\":1e-6,\"max_queries\":1e6}", "/max_queries: must be in"},
        {"{\"filter\":\"additive-profile\",\"epsilon\":1,\"delta\":1e-6}", "/max_queries: missing"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char got[sizeof ((dpa_error *)0)->message + 16];
        CHECK(config_refused(cases[i].cfg, cases[i].msg, got, sizeof got), "%s: %s", cases[i].cfg, got);
    }
    dpa_error err;
    dpa_filter_decision d;
    const char *cfg = "{\"filter\":\"additive-profile\",\"epsilon\":1,\"delta\":1e-6,\"max_queries\":50}";
    dpa_filter *f = mkfilter(cfg);
    CHECK(req(f, "{\"poisson\":{\"rate\":0.1,\"event\":{\"pure\":{\"epsilon\":1}}}}", &d, &err) == -(int)DPA_EUNSUPPORTED &&
              strstr(err.message, "asymmetric"),
          "an asymmetric query: %s", err.message);
    CHECK(dpa_filter_set_state_json(f, "{\"filter\":\"additive-profile\",\"accepted\":0,\"spent\":[\"0\"]}", &err) == DPA_EINVAL &&
              strstr(err.message, "/spent"), "short state: %s", err.message);
    int acc = 0;
    for (int k = 0; k < 12; k++) {
        char q[200], why[2048];
        int r = 0;
        double e = 0.05 + 0.6 * test_unif();
        switch (k % 4) {
        case 0: snprintf(q, sizeof q, "{\"pure\":{\"epsilon\":%.17g}}", e); break;
        case 1: snprintf(q, sizeof q, "{\"gaussian\":{\"sigma\":%.17g}}", 1 + 5 * test_unif()); break;
        case 2: snprintf(q, sizeof q, "{\"approx\":{\"epsilon\":%.17g,\"delta\":1e-8}}", e); break;
        default: snprintf(q, sizeof q, "{\"laplace\":{\"scale\":%.17g}}", 1 + 5 * test_unif()); break;
        }
        dpa_spec *s = dpa_spec_from_json(q, &err);
        CHECK(replay_step(f, cfg, s, &r, why, sizeof why), "%s: %s", q, why);
        acc += r == 1;
        dpa_spec_free(s);
    }
    CHECK(acc > 0, "nothing accepted: the replay is vacuous");
    dpa_filter_free(f);
}

int main(void)
{
    test_seed_from_env();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_levels, setup, teardown),
        cmocka_unit_test_setup_teardown(test_charges, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fill_and_capacity, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_input_and_replay, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* dpa_accountant_gdp_mu: the smallest mu with the composition mu-GDP,
 * bracketed (include/dpacct/accountant.h, src/acct/gdp_mu.c, docs/fdp.md §8).
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Soundness first: lower <= mu* <= upper against references computed here
 * independently of the library's evaluation of the Gaussian profile:
 *  - compositions of Gaussians: mu* = sqrt(sum k_i mu_i^2) (GDP Cor 3.3), in
 *    long double;
 *  - one pure eps step (randomized response): mu* = 2 Phi^{-1}(1/(1 + e^-eps))
 *    (its tradeoff curve f_{eps,0} has one vertex, at the fixed point), with
 *    Phi^{-1} by bisection on erfcl;
 *  - k pure eps steps: a brute force in long double (the exact binomial
 *    privacy profile against Phi(-e/mu + mu/2) - e^e Phi(-e/mu - mu/2) on a
 *    fine grid: the largest pointwise requirement, which approaches mu* from
 *    below) and, independently, the tradeoff module: dpa_tf_gdp_mu of the
 *    exact tensor power f_{eps,0}^{(x) k} (an upper bound on mu*);
 *  - +inf for a positive mass at +inf (approx leaves with delta > 0);
 *  - DP-SGD: a finite lower bound near the CLT mu of method gdp, no upper;
 *  - generated specs: no NaN, lower <= upper, and every method's lower bound
 *    below every other method's certified upper bound.
 * Tightness (the bracket's width) is checked separately, more loosely.
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
#include "dpacct/accountant.h"
#include "dpacct/event.h"
#include "dpacct/tradeoff.h"

#define DPSGD "{\"repeat\": {\"count\": 14063, \"event\": {\"poisson\": {\"rate\": 0.0042666667, " \
              "\"event\": {\"gaussian\": {\"sigma\": 1.1}}}}}}"

static double seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* gdp_mu of a spec under a method; fails the test on an error. */
static dpa_gdp_mu mu_of(const char *json, dpa_method m)
{
    dpa_accountant *a = test_accountant(json, m);
    dpa_gdp_mu g;
    dpa_error err;
    dpa_status st = dpa_accountant_gdp_mu(a, &g, &err);
    dpa_accountant_free(a);
    if (st) fail_msg("gdp_mu of %s (%s): %s", json, dpa_method_name(m), err.message);
    return g;
}

/* The invariants of every result. */
static void check_invariants(const dpa_gdp_mu *g, const char *what)
{
    CHECK(!isnan(g->lower) && !isnan(g->upper), "%s: NaN bound [%g, %g]", what, g->lower, g->upper);
    CHECK(g->lower >= 0 && g->lower <= g->upper, "%s: bounds out of order [%g, %g]", what, g->lower, g->upper);
    CHECK(g->certified_upper == (g->source != DPA_GDP_MU_NONE), "%s: certified %d but source %d", what,
          g->certified_upper, (int)g->source);
    CHECK(g->certified_upper || isinf(g->upper), "%s: finite upper %g not certified", what, g->upper);
    CHECK(!isinf(g->lower) || g->source == DPA_GDP_MU_INFINITE, "%s: infinite lower bound from source %d", what,
          (int)g->source);
    CHECK(memchr(g->note, '\0', sizeof g->note) && g->note[0], "%s: no note", what);
}

/* ---------- long double references ---------- */

static long double Phi(long double x)
{
    return 0.5L * erfcl(-x / sqrtl(2.0L));
}

/* Phi^{-1}(p) by bisection (p in (0, 1)). */
static long double Phi_inv(long double p)
{
    long double a = -40, b = 40;
    for (int i = 0; i < 200; i++) {
        long double m = 0.5L * (a + b);
        if (Phi(m) < p) a = m;
        else b = m;
    }
    return 0.5L * (a + b);
}

/* The mu-GDP profile in long double (GDP Cor 2.13); loses relative accuracy
 * below ~1e-15, where the brute force does not look. */
static long double gdp_delta(long double mu, long double e)
{
    if (mu <= 0) return 0;
    return Phi(-e / mu + mu / 2) - expl(e) * Phi(-e / mu - mu / 2);
}

/* The smallest mu with gdp_delta(mu, e) >= t. */
static long double required_mu(long double e, long double t)
{
    long double a = 0, b = 64;
    for (int i = 0; i < 120; i++) {
        long double m = 0.5L * (a + b);
        if (gdp_delta(m, e) >= t) b = m;
        else a = m;
    }
    return b;
}

/* Profile of k pure eps steps (both directions coincide): the loss is
 * (2j - k) eps with P-mass C(k,j) p^j q^(k-j) and Q-mass C(k,j) q^j p^(k-j),
 * p = e^eps/(1 + e^eps), and delta(e) = sum over losses above e of
 * P_j - e^e Q_j. */
static long double pure_delta(int k, long double eps, long double e)
{
    long double p = 1 / (1 + expl(-eps)), q = 1 - p, s = 0;
    for (int j = 0; j <= k; j++) {
        long double L = (2 * j - k) * eps;
        if (L <= e) continue;
        long double lc = lgammal(k + 1) - lgammal(j + 1) - lgammal(k - j + 1);
        long double P = expl(lc + j * logl(p) + (k - j) * logl(q));
        long double Q = expl(lc + j * logl(q) + (k - j) * logl(p));
        s += P - expl(e) * Q;
    }
    return s;
}

/* The brute force: the largest pointwise requirement on a grid of n + 1
 * points of [0, k eps) where delta >= 1e-13. */
static long double brute_pure(int k, long double eps, int n)
{
    long double best = 0, L = k * eps;
    for (int i = 0; i < n; i++) {
        long double e = L * i / n, d = pure_delta(k, eps, e);
        if (d < 1e-13L) continue;
        long double m = required_mu(e, d);
        if (m > best) best = m;
    }
    return best;
}

/* ---------- tests ---------- */

static void test_gaussian(void **state)
{
    (void)state;
    static const struct {
        const char *json;
        long double mu;
    } cases[] = {
        /* the example: 3 steps of sigma 2 and gdp 0.5: sqrt(3/4 + 1/4) = 1 */
        {"{\"compose\": [{\"repeat\": {\"count\": 3, \"event\": {\"gaussian\": {\"sigma\": 2}}}}, "
         "{\"gdp\": {\"mu\": 0.5}}]}",
         1.0L},
        {"{\"gaussian\": {\"sigma\": 2, \"sensitivity\": 3}}", 1.5L},
        {"{\"repeat\": {\"count\": 1000, \"event\": {\"gaussian\": {\"sigma\": 50}}}}", 0.632455532033675866L},
        {"{\"gdp\": {\"mu\": 1e-6}}", 1e-6L},
        {"{\"gdp\": {\"mu\": 30}}", 30.0L},
        {"{\"compose\": [{\"repeat\": {\"count\": 7, \"event\": {\"gdp\": {\"mu\": 0.3}}}}, "
         "{\"gaussian\": {\"sigma\": 4}}]}",
         0.832165848854662L}, /* sqrt(7 * 0.09 + 1/16) */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *j = cases[i].json;
        long double mu = cases[i].mu;
        dpa_gdp_mu g = mu_of(j, DPA_METHOD_AUTO);
        check_invariants(&g, j);
        CHECK(g.source == DPA_GDP_MU_GAUSSIAN && g.certified_upper, "%s: source %d, certified %d (%s)", j,
              (int)g.source, g.certified_upper, g.note);
        CHECK(g.lower <= mu * (1 + 1e-15L) && mu * (1 - 1e-15L) <= g.upper, "%s: [%.17g, %.17g] misses %.17Lg", j,
              g.lower, g.upper, mu);
        CHECK(g.upper - g.lower <= 1e-10 * (double)mu, "%s: bracket [%.17g, %.17g] wider than 1e-10 relative", j,
              g.lower, g.upper);
        /* the pld and clt methods cannot tell the composition is Gaussian:
         * a lower bound only, still below mu */
        if (mu >= 0.1L && mu <= 5) {
            dpa_method ms[] = {DPA_METHOD_PLD, DPA_METHOD_CLT};
            for (int k = 0; k < 2; k++) {
                dpa_gdp_mu h = mu_of(j, ms[k]);
                check_invariants(&h, j);
                CHECK(h.source == DPA_GDP_MU_NONE && isinf(h.upper), "%s (%s): source %d", j,
                      dpa_method_name(ms[k]), (int)h.source);
                CHECK(h.lower <= mu, "%s (%s): lower %.17g above mu %.17Lg", j, dpa_method_name(ms[k]), h.lower,
                      mu);
                if (ms[k] == DPA_METHOD_PLD)
                    CHECK(h.lower >= 0.97 * (double)mu, "%s (pld): lower %.17g far below mu %.17Lg", j, h.lower,
                          mu);
            }
        }
    }
}

static void test_pure_closed_form(void **state)
{
    (void)state;
    static const double eps[] = {0.01, 0.1, 0.5, 1, 2, 4};
    char json[256];
    for (size_t i = 0; i < sizeof eps / sizeof *eps; i++) {
        long double nu = 2 * Phi_inv(1 / (1 + expl(-(long double)eps[i])));
        for (int kind = 0; kind < 2; kind++) {
            snprintf(json, sizeof json, kind ? "{\"randomized_response\": {\"epsilon\": %.17g}}"
                                             : "{\"pure\": {\"epsilon\": %.17g}}", eps[i]);
            dpa_gdp_mu g = mu_of(json, DPA_METHOD_AUTO);
            check_invariants(&g, json);
            CHECK(g.source == DPA_GDP_MU_BOUNDED, "%s: source %d (%s)", json, (int)g.source, g.note);
            CHECK(g.lower <= nu * (1 + 1e-12L) && nu <= g.upper * (1 + 1e-12L),
                  "%s: [%.17g, %.17g] misses 2 Phi^-1(1/(1+e^-eps)) = %.17Lg", json, g.lower, g.upper, nu);
            CHECK(g.upper - g.lower <= 1e-4 * (double)nu, "%s: bracket [%.17g, %.17g] wider than 1e-4 relative",
                  json, g.lower, g.upper);
        }
    }
    /* documented value (docs/fdp.md §2.2): nu(0.5) = 0.62389259 */
    dpa_gdp_mu g = mu_of("{\"pure\": {\"epsilon\": 0.5}}", DPA_METHOD_AUTO);
    CHECK(g.lower <= 0.623892595 && g.upper >= 0.623892585, "nu(0.5): [%.17g, %.17g]", g.lower, g.upper);
    /* the same through the pld grid: a lower bound only (the grid argument
     * for the upper bound is left to the exact method, docs/fdp.md §8) */
    long double nu = 2 * Phi_inv(1 / (1 + expl(-0.5L)));
    dpa_gdp_mu h = mu_of("{\"pure\": {\"epsilon\": 0.5}}", DPA_METHOD_PLD);
    check_invariants(&h, "pure 0.5 (pld)");
    CHECK(h.source == DPA_GDP_MU_NONE && h.lower <= nu && h.lower >= 0.8 * (double)nu && isinf(h.upper) &&
              !h.certified_upper && strstr(h.note, "method exact"),
          "pure 0.5 (pld): [%.17g, %.17g] source %d vs %.17Lg (%s)", h.lower, h.upper, (int)h.source, nu, h.note);
}

static void test_pure_compositions(void **state)
{
    (void)state;
    static const int ks[] = {2, 5, 10, 30};
    static const double eps[] = {0.1, 0.5, 1};
    char json[256];
    for (size_t a = 0; a < sizeof ks / sizeof *ks; a++)
        for (size_t b = 0; b < sizeof eps / sizeof *eps; b++) {
            int k = ks[a];
            snprintf(json, sizeof json, "{\"repeat\": {\"count\": %d, \"event\": {\"pure\": {\"epsilon\": %.17g}}}}",
                     k, eps[b]);
            dpa_gdp_mu g = mu_of(json, DPA_METHOD_AUTO);
            check_invariants(&g, json);
            CHECK(g.source == DPA_GDP_MU_BOUNDED, "%s: source %d (%s)", json, (int)g.source, g.note);
            long double brute = brute_pure(k, eps[b], 4000);
            CHECK(g.lower <= brute * (1 + 1e-6L), "%s: lower %.17g above the brute force %.17Lg", json, g.lower,
                  brute);
            CHECK(brute <= g.upper * (1 + 1e-12L), "%s: upper %.17g below the brute force %.17Lg", json, g.upper,
                  brute);
            /* the tradeoff module: G_mu below the exact f_{eps,0}^{(x) k} */
            dpa_error err;
            dpa_tf *f = dpa_tf_approx(eps[b], 0, &err), *fk = f ? dpa_tf_tensor_power(f, (unsigned long)k, NULL, &err)
                                                                  : NULL;
            double tf_mu = NAN;
            if (!fk || dpa_tf_gdp_mu(fk, NULL, &tf_mu, &err)) fail_msg("%s: tradeoff reference: %s", json, err.message);
            CHECK(g.lower <= tf_mu, "%s: lower %.17g above the tradeoff bound %.17g", json, g.lower, tf_mu);
            CHECK(tf_mu <= g.upper * (1 + 1e-9), "%s: upper %.17g below the tradeoff value %.17g", json, g.upper,
                  tf_mu);
            CHECK(g.upper - g.lower <= 1e-3 * g.upper, "%s: bracket [%.17g, %.17g] wider than 1e-3 relative", json,
                  g.lower, g.upper);
            dpa_tf_free(f);
            dpa_tf_free(fk);
        }
}

static void test_infinite(void **state)
{
    (void)state;
    static const char *specs[] = {
        "{\"approx\": {\"epsilon\": 1, \"delta\": 1e-3}}",
        "{\"approx\": {\"epsilon\": 0.5, \"delta\": 1e-9}}",
        "{\"repeat\": {\"count\": 10, \"event\": {\"approx\": {\"epsilon\": 0.1, \"delta\": 1e-14}}}}",
        "{\"compose\": [{\"gaussian\": {\"sigma\": 1}}, {\"approx\": {\"epsilon\": 1, \"delta\": 1e-9}}]}",
        "{\"compose\": [{\"laplace\": {\"scale\": 1}}, {\"approx\": {\"epsilon\": 1, \"delta\": 1e-6}}]}",
        "{\"gdp\": {\"mu\": 1e200}}", /* the non-private pair */
    };
    for (size_t i = 0; i < sizeof specs / sizeof *specs; i++) {
        dpa_gdp_mu g = mu_of(specs[i], DPA_METHOD_AUTO);
        check_invariants(&g, specs[i]);
        CHECK(g.source == DPA_GDP_MU_INFINITE && isinf(g.lower) && isinf(g.upper) && g.certified_upper,
              "%s: [%g, %g] source %d (%s)", specs[i], g.lower, g.upper, (int)g.source, g.note);
    }
    /* delta 0: pure, bounded */
    dpa_gdp_mu g = mu_of("{\"approx\": {\"epsilon\": 1, \"delta\": 0}}", DPA_METHOD_AUTO);
    CHECK(g.source == DPA_GDP_MU_BOUNDED && isfinite(g.upper), "approx delta 0: source %d", (int)g.source);
    /* the trivial composition is 0-GDP */
    g = mu_of("{\"gdp\": {\"mu\": 0}}", DPA_METHOD_AUTO);
    CHECK(g.lower == 0 && g.upper == 0 && g.certified_upper, "gdp 0: [%g, %g]", g.lower, g.upper);
}

/* mu of method gdp (the CLT approximation): its eps at delta 1e-5 inverted
 * through the Gaussian profile. */
static double clt_mu(const char *json)
{
    dpa_accountant *a = test_accountant(json, DPA_METHOD_GDP);
    dpa_result r;
    dpa_error err;
    if (dpa_accountant_delta(a, 1.0, &r, &err)) fail_msg("gdp method: %s", err.message);
    dpa_accountant_free(a);
    double e = 1.0, mu = NAN;
    if (dpa_tf_gdp_mu_from_profile(&e, &r.upper, 1, &mu, &err)) fail_msg("gdp mu: %s", err.message);
    return mu;
}

static void test_dpsgd(void **state)
{
    (void)state;
    dpa_accountant *a = test_accountant(DPSGD, DPA_METHOD_AUTO);
    dpa_result r;
    dpa_error err;
    if (dpa_accountant_epsilon(a, 1e-5, &r, &err)) fail_msg("dpsgd: %s", err.message);
    double t0 = seconds();
    dpa_gdp_mu g;
    dpa_status st = dpa_accountant_gdp_mu(a, &g, &err);
    double t = seconds() - t0;
    dpa_accountant_free(a);
    CHECK(st == DPA_OK, "dpsgd: %s", err.message);
    check_invariants(&g, "dpsgd");
    double mu = clt_mu(DPSGD);
    print_message("    DP-SGD: mu in [%.10g, %g] (%s), CLT mu %.6g, %.1f ms after the eps query\n", g.lower, g.upper,
                  g.certified_upper ? "certified" : "not certified", mu, 1e3 * t);
    CHECK(g.source == DPA_GDP_MU_NONE && !g.certified_upper && isinf(g.upper), "dpsgd: source %d", (int)g.source);
    CHECK(strstr(g.note, "--method gdp") != NULL, "dpsgd: the note should point to --method gdp: %s", g.note);
    /* a finite lower bound, near the CLT mu (which under-states DP-SGD's
     * tails a little, docs/clt.md) */
    CHECK(isfinite(g.lower) && g.lower >= 0.95 * mu && g.lower <= 1.1 * mu, "dpsgd: lower %.17g vs CLT mu %.17g",
          g.lower, mu);
    /* G_lower is not enough: at some delta of the ladder its eps is below
     * the composition's certified eps (else lower would not be a lower bound) */
    a = test_accountant(DPSGD, DPA_METHOD_AUTO);
    int below = 0;
    for (int k = 1; k <= 16 && !below; k++) {
        double d = pow(10.0, -0.5 * k), lo, hi;
        if (dpa_accountant_epsilon(a, d, &r, &err) || dpa_tf_gdp_epsilon(g.lower, d, &lo, &hi, &err))
            fail_msg("dpsgd eps: %s", err.message);
        below = lo <= r.upper;
    }
    dpa_accountant_free(a);
    CHECK(below, "dpsgd: G_%.17g is above the composition's certified eps at every delta", g.lower);
}

static void test_methods(void **state)
{
    (void)state;
    const char *j = "{\"repeat\": {\"count\": 5, \"event\": {\"gaussian\": {\"sigma\": 3}}}}";
    dpa_method ms[] = {DPA_METHOD_PHI, DPA_METHOD_GDP, DPA_METHOD_RDP};
    for (int k = 0; k < 3; k++) {
        dpa_gdp_mu g = mu_of(j, ms[k]);
        check_invariants(&g, dpa_method_name(ms[k]));
        CHECK(g.lower == 0 && isinf(g.upper) && !g.certified_upper && g.source == DPA_GDP_MU_NONE,
              "%s: [%g, %g] certified %d", dpa_method_name(ms[k]), g.lower, g.upper, g.certified_upper);
    }
    dpa_error err;
    dpa_gdp_mu g;
    CHECK(dpa_accountant_gdp_mu(NULL, &g, &err) == DPA_EINVAL && g.lower == 0 && isinf(g.upper),
          "NULL accountant");
    dpa_accountant *a = test_accountant(j, DPA_METHOD_AUTO);
    CHECK(dpa_accountant_gdp_mu(a, NULL, &err) == DPA_EINVAL, "NULL output");
    dpa_accountant_free(a);
}

/* A small generator (LCG): compositions of one to three parts, each a
 * repeated leaf, possibly Poisson-subsampled. */
static uint64_t rng = 0x9e3779b97f4a7c15ULL;
static double unif(void)
{
    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(rng >> 11) * 0x1p-53;
}

static void gen_leaf(char *buf, size_t n)
{
    int kind = (int)(unif() * 7);
    double x = 0.05 + 2 * unif();
    switch (kind) {
    case 0: snprintf(buf, n, "{\"gaussian\": {\"sigma\": %.3g}}", 0.5 + 4 * unif()); break;
    case 1: snprintf(buf, n, "{\"gdp\": {\"mu\": %.3g}}", x / 2); break;
    case 2: snprintf(buf, n, "{\"pure\": {\"epsilon\": %.3g}}", x); break;
    case 3: snprintf(buf, n, "{\"randomized_response\": {\"epsilon\": %.3g}}", x); break;
    case 4: snprintf(buf, n, "{\"laplace\": {\"scale\": %.3g}}", 0.5 + 4 * unif()); break;
    case 5: snprintf(buf, n, "{\"approx\": {\"epsilon\": %.3g, \"delta\": %s}}", x, unif() < 0.5 ? "0" : "1e-7"); break;
    default:
        if (unif() < 0.5)
            snprintf(buf, n, "{\"poisson\": {\"rate\": %.3g, \"event\": {\"pure\": {\"epsilon\": %.3g}}}}",
                     0.02 + 0.4 * unif(), x);
        else
            snprintf(buf, n, "{\"poisson\": {\"rate\": %.3g, \"event\": {\"gaussian\": {\"sigma\": %.3g}}}}",
                     0.02 + 0.4 * unif(), 0.5 + 4 * unif());
    }
}

static void test_generated(void **state)
{
    (void)state;
    char json[1024], leaf[256];
    int n_cert = 0;
    for (int t = 0; t < 24; t++) {
        int parts = 1 + (int)(unif() * 3);
        size_t len = (size_t)snprintf(json, sizeof json, "{\"compose\": [");
        for (int p = 0; p < parts; p++) {
            gen_leaf(leaf, sizeof leaf);
            len += (size_t)snprintf(json + len, sizeof json - len, "%s{\"repeat\": {\"count\": %d, \"event\": %s}}",
                                    p ? ", " : "", 1 + (int)(unif() * 20), leaf);
        }
        snprintf(json + len, sizeof json - len, "]}");
        dpa_gdp_mu g[2];
        dpa_method ms[2] = {DPA_METHOD_AUTO, DPA_METHOD_PLD};
        for (int k = 0; k < 2; k++) {
            double t0 = seconds();
            g[k] = mu_of(json, ms[k]);
            if (getenv("GDPMU_VERBOSE"))
                print_message("    %s %s: [%g, %g] %.2f s\n", json, dpa_method_name(ms[k]), g[k].lower, g[k].upper,
                              seconds() - t0);
            check_invariants(&g[k], json);
        }
        n_cert += g[0].certified_upper;
        /* both bracket the same mu* */
        for (int k = 0; k < 2; k++)
            CHECK(g[k].lower <= g[1 - k].upper * (1 + 1e-12), "%s: lower %.17g (%s) above upper %.17g (%s)", json,
                  g[k].lower, dpa_method_name(ms[k]), g[1 - k].upper, dpa_method_name(ms[1 - k]));
    }
    print_message("    %d of 24 generated specs with a certified upper bound\n", n_cert);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_gaussian, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pure_closed_form, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pure_compositions, setup, teardown),
        cmocka_unit_test_setup_teardown(test_infinite, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dpsgd, setup, teardown),
        cmocka_unit_test_setup_teardown(test_methods, setup, teardown),
        cmocka_unit_test_setup_teardown(test_generated, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

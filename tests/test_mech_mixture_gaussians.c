/* Mixtures of Gaussians ({"mixture_of_gaussians": ...}) and sampling with
 * replacement ({"sample_with_replacement": ...}): parsing, the pair's tails
 * against numerical integration, and the accountants against independent
 * identities:
 *  - one component of sensitivity c is the Gaussian mechanism c/sigma;
 *  - the mixture {0: 1 - q, c: q} is the Poisson-subsampled Gaussian at
 *    rate q (LT Thm 5.1: (q N(c) + (1 - q) N(0), N(0))), in both directions
 *    and under composition;
 *  - sampling with replacement with m = 1 is Poisson subsampling at 1/n
 *    (K ~ Bernoulli(1/n)); with m = 2, n = 2 it is the mixture
 *    {0: 1/4, c: 1/2, 2c: 1/4}.
 * Reference for one use: delta(eps) = int (a(y) - e^eps b(y))_+ dy by
 * composite Simpson in long double on [-40, 40 + max c] (sigma = 1) with
 * 400000 panels: the integrand is smooth except at the one crossing point,
 * where the kink costs O(h^2) = 1e-8 * (local scale) -- we compare with a
 * tolerance of 1e-7 absolute + 1e-6 relative, well above it.
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
#include "mech/pair.h"
#include "model/leaves.h"
#include "rdp/rdp.h"
#include "check.h"
#include "dpacct/renyi.h"
#include <time.h>

#define QUAD_ABS 1e-7
#define QUAD_REL 1e-6

static long double phi_ld(long double x) { return expl(-0.5L * x * x) / sqrtl(2 * acosl(-1.0L)); }

/* int (a - e^eps b)_+ (rev = 0) or (b - e^eps a)_+ (rev = 1) */
static long double quad_delta(const double *c, const double *p, int n, double eps, int rev)
{
    double cmax = 0;
    for (int i = 0; i < n; i++) cmax = fmax(cmax, c[i]);
    long double lo = -40, hi = 40 + cmax, s = 0, es = expl(eps);
    const int N = 400000;
    long double h = (hi - lo) / N;
    for (int k = 0; k <= N; k++) {
        long double y = lo + k * h, a = 0, b = phi_ld(y);
        for (int i = 0; i < n; i++) a += p[i] * phi_ld(y - c[i]);
        long double f = rev ? b - es * a : a - es * b;
        if (f < 0) f = 0;
        s += f * ((k == 0 || k == N) ? 1 : (k % 2 ? 4 : 2));
    }
    return s * h / 3;
}

static void test_parse(void **state)
{
    (void)state;
    dpa_error err;
    dpa_spec *s = dpa_spec_from_json("{\"mixture_of_gaussians\": {\"sigma\": 2, \"sensitivities\": [1, 0, 1], "
                                     "\"probabilities\": [0.25, 0.5, 0.25]}}",
                                     &err);
    if (!s) fail_msg("%s", err.message);
    char *j = dpa_spec_to_json(s);
    CHECK(j && strstr(j, "{\"mixture_of_gaussians\":{\"sigma\":2,\"sensitivities\":[0,1],\"probabilities\":[0.5,0.5]}"),
          "canonical %s", j ? j : "");
    dpa_spec *s2 = j ? dpa_spec_from_json(j, &err) : NULL;
    char *j2 = s2 ? dpa_spec_to_json(s2) : NULL;
    CHECK(j2 && !strcmp(j, j2), "round trip %s", j2 ? j2 : err.message);
    free(j);
    free(j2);
    dpa_spec_free(s);
    dpa_spec_free(s2);
    s = dpa_spec_from_json("{\"sample_with_replacement\": {\"n\": 10, \"m\": 20, \"event\": {\"gaussian\": {\"sigma\": 1}}}}",
                           &err);
    if (!s) fail_msg("%s", err.message);
    j = dpa_spec_to_json(s);
    CHECK(j && strstr(j, "{\"sample_with_replacement\":{\"n\":10,\"m\":20,\"event\":{\"gaussian\":"), "%s", j ? j : "");
    free(j);
    dpa_spec_free(s);
    static const struct { const char *json, *want; } bad[] = {
        {"{\"mixture_of_gaussians\": {\"sigma\": 1, \"sensitivities\": [1], \"probabilities\": [0.5]}}", "sum to"},
        {"{\"mixture_of_gaussians\": {\"sigma\": 0, \"sensitivities\": [1], \"probabilities\": [1]}}",
         "/mixture_of_gaussians/sigma: must be > 0"},
        {"{\"mixture_of_gaussians\": {\"sensitivities\": [1], \"probabilities\": [1]}}", "missing key \"sigma\""},
        {"{\"mixture_of_gaussians\": {\"sigma\": 1, \"sensitivities\": [-1], \"probabilities\": [1]}}",
         "sensitivities/0"},
        {"{\"sample_with_replacement\": {\"n\": 0, \"m\": 1, \"event\": {\"gaussian\": {\"sigma\": 1}}}}",
         "/sample_with_replacement/n"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        test_spec_refused(bad[i].json, bad[i].want);
    }
    /* refusals */
    dpa_accountant *a = try_accountant(
        "{\"sample_with_replacement\": {\"n\": 10, \"m\": 2, \"event\": {\"laplace\": {\"scale\": 1}}}}", DPA_METHOD_AUTO,
        &err);
    CHECK(!a && err.status == DPA_EUNSUPPORTED && strstr(err.message, "gaussian or gdp"), "%s", err.message);
    dpa_accountant_free(a);
    /* regression: under "sample" (replace-one) the add_remove-only check must
     * hold too, not only for a top-level sample_with_replacement */
    a = try_accountant("{\"sample\": {\"n\": 100, \"m\": 10, \"event\": {\"sample_with_replacement\": {\"n\": 10, "
                       "\"m\": 2, \"event\": {\"gaussian\": {\"sigma\": 1}}}}}, \"neighboring\": \"replace\"}",
                       DPA_METHOD_AUTO, &err);
    CHECK(!a && err.status == DPA_EUNSUPPORTED && strstr(err.message, "add_remove") &&
              strstr(err.message, "/sample/event/sample_with_replacement"),
          "sample over sample_with_replacement under replace must be refused: %s", a ? "accepted" : err.message);
    dpa_accountant_free(a);
    a = try_accountant("{\"mixture_of_gaussians\": {\"sigma\": 1, \"sensitivities\": [0, 1], \"probabilities\": [0.5, "
                       "0.5]}}",
                       DPA_METHOD_CLT, &err);
    CHECK(!a && strstr(err.message, "pld"), "clt must refuse naming pld: %s", a ? "accepted" : err.message);
    dpa_accountant_free(a);
    /* phi and exact refuse it too (at creation or at the first query), naming pld */
    const dpa_method others[2] = {DPA_METHOD_PHI, DPA_METHOD_EXACT};
    for (int i = 0; i < 2; i++) {
        a = try_accountant("{\"mixture_of_gaussians\": {\"sigma\": 1, \"sensitivities\": [0, 1], \"probabilities\": "
                           "[0.5, 0.5]}}",
                           others[i], &err);
        dpa_result r;
        dpa_status st = a ? dpa_accountant_delta(a, 1.0, &r, &err) : err.status;
        CHECK(st == DPA_EUNSUPPORTED && strstr(err.message, "pld"), "method %d: status %d, %s", (int)others[i], (int)st,
              st ? err.message : "accepted");
        dpa_accountant_free(a);
    }
}

/* The pair's profile (both directions) against quadrature. */
static void test_pair_vs_quadrature(void **state)
{
    (void)state;
    static const struct { int n; double c[3], p[3]; } cases[] = {
        {1, {1}, {1}},
        {2, {0, 1}, {0.7, 0.3}},
        {2, {0.5, 2}, {0.5, 0.5}},
        {3, {0, 1, 3}, {0.2, 0.5, 0.3}},
    };
    dpa_error err;
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        dpa_pair *p = dpa_pair_mixgauss(cases[k].c, cases[k].p, (size_t)cases[k].n, 0, &err);
        assert_non_null(p);
        dpa_pair *r = dpa_pair_reverse(dpa_pair_copy(p, &err), &err);
        assert_non_null(r);
        for (double eps = 0; eps <= 3; eps += 0.75) {
            for (int rev = 0; rev < 2; rev++) {
                double got = exp(dpa_pair_log_delta(rev ? r : p, eps));
                long double want = quad_delta(cases[k].c, cases[k].p, cases[k].n, eps, rev);
                CHECK(fabsl(got - want) <= QUAD_ABS + QUAD_REL * want,
                      "case %zu eps %g dir %d: pair %.17g, quadrature %.17Lg", k, eps, rev, got, want);
            }
        }
        dpa_pair_free(p);
        dpa_pair_free(r);
    }
}

/* One component: the Gaussian mechanism. */
static void test_one_component(void **state)
{
    (void)state;
    const char *mg = "{\"repeat\":{\"count\":10,\"event\":{\"mixture_of_gaussians\":{\"sigma\":2,\"sensitivities\":[1.5],"
                     "\"probabilities\":[1]}}}}";
    const char *g = "{\"repeat\":{\"count\":10,\"event\":{\"gaussian\":{\"sigma\":2,\"sensitivity\":1.5}}}}";
    for (double eps = 0.5; eps <= 4; eps += 1.5) {
        dpa_result a = test_query_delta(mg, DPA_METHOD_AUTO, eps), b = test_query_delta(g, DPA_METHOD_EXACT, eps);
        CHECK(a.method == DPA_METHOD_PLD && a.lower <= b.upper && a.upper >= b.lower,
              "eps %g: mixture [%.17g, %.17g], gaussian [%.17g, %.17g]", eps, a.lower, a.upper, b.lower, b.upper);
        /* rdp's Jensen bound is exact for one component */
        dpa_result c = test_query_delta(mg, DPA_METHOD_RDP, eps), d = test_query_delta(g, DPA_METHOD_RDP, eps);
        CHECK(fabs(c.upper - d.upper) <= 1e-9 * d.upper, "eps %g: rdp mixture %.17g, gaussian %.17g", eps, c.upper,
              d.upper);
    }
}

/* {0: 1 - q, c: q} is the Poisson-subsampled Gaussian. */
static void test_poisson_identity(void **state)
{
    (void)state;
    char mg[512], po[512];
    const double qs[2] = {0.01, 0.3};
    for (int i = 0; i < 2; i++) {
        double q = qs[i];
        int count = i == 0 ? 1000 : 20;
        snprintf(mg, sizeof mg,
                 "{\"repeat\":{\"count\":%d,\"event\":{\"mixture_of_gaussians\":{\"sigma\":1,\"sensitivities\":[0,1],"
                 "\"probabilities\":[%.17g,%.17g]}}}}",
                 count, 1 - q, q);
        snprintf(po, sizeof po,
                 "{\"repeat\":{\"count\":%d,\"event\":{\"poisson\":{\"rate\":%.17g,\"event\":{\"gaussian\":{\"sigma\":1}}}}}}",
                 count, q);
        for (double delta = 1e-8; delta <= 1e-3; delta *= 100) {
            dpa_result a = test_query_epsilon(mg, DPA_METHOD_PLD, delta), b = test_query_epsilon(po, DPA_METHOD_PLD, delta);
            CHECK(a.lower <= b.upper && a.upper >= b.lower, "q %g delta %g: mixture [%.17g, %.17g], poisson [%.17g, %.17g]",
                  q, delta, a.lower, a.upper, b.lower, b.upper);
            CHECK(a.upper - a.lower <= 1e-3 * fmax(1, a.upper), "q %g delta %g: mixture bracket [%.17g, %.17g] too wide", q,
                  delta, a.lower, a.upper);
            /* rdp: Jensen over {0, 1} is the subsampled-Gaussian bound itself */
            dpa_result c = test_query_epsilon(mg, DPA_METHOD_RDP, delta), d = test_query_epsilon(po, DPA_METHOD_RDP, delta);
            CHECK(c.upper >= b.lower && c.upper <= d.upper * (1 + 1e-6), "q %g delta %g: rdp mixture %.17g, poisson %.17g",
                  q, delta, c.upper, d.upper);
        }
    }
}

/* Sampling with replacement: m = 1 is Poisson at 1/n; n = m = 2 is the
 * mixture {0, 1, 2} with 1/4, 1/2, 1/4; Poisson over a mixture. */
static void test_sample_with_replacement(void **state)
{
    (void)state;
    const char *sw = "{\"repeat\":{\"count\":100,\"event\":{\"sample_with_replacement\":{\"n\":50,\"m\":1,\"event\":{"
                     "\"gaussian\":{\"sigma\":0.8}}}}}}";
    const char *po = "{\"repeat\":{\"count\":100,\"event\":{\"poisson\":{\"rate\":0.02,\"event\":{\"gaussian\":{\"sigma\":0.8}}}}}}";
    for (double delta = 1e-7; delta <= 1e-3; delta *= 100) {
        dpa_result a = test_query_epsilon(sw, DPA_METHOD_AUTO, delta), b = test_query_epsilon(po, DPA_METHOD_PLD, delta);
        CHECK(a.lower <= b.upper && a.upper >= b.lower, "delta %g: swr [%.17g, %.17g], poisson [%.17g, %.17g]", delta,
              a.lower, a.upper, b.lower, b.upper);
    }
    const char *s2 = "{\"sample_with_replacement\":{\"n\":2,\"m\":2,\"event\":{\"gaussian\":{\"sigma\":1}}}}";
    const double c[3] = {0, 1, 2}, p[3] = {0.25, 0.5, 0.25};
    for (double eps = 0; eps <= 3; eps += 1) {
        dpa_result a = test_query_delta(s2, DPA_METHOD_PLD, eps);
        long double want = fmaxl(quad_delta(c, p, 3, eps, 0), quad_delta(c, p, 3, eps, 1));
        CHECK(a.lower <= want + QUAD_ABS + QUAD_REL * want && a.upper >= want - QUAD_ABS - QUAD_REL * want,
              "eps %g: swr n = m = 2 [%.17g, %.17g], quadrature %.17Lg", eps, a.lower, a.upper, want);
    }
    /* a large m: K ~ Binomial(1000, 1e-3) ~ Poisson(1), truncated with its tail at +inf */
    const char *s3 = "{\"repeat\":{\"count\":10,\"event\":{\"sample_with_replacement\":{\"n\":1000,\"m\":1000,\"event\":{"
                     "\"gaussian\":{\"sigma\":4}}}}}}";
    dpa_result a = test_query_epsilon(s3, DPA_METHOD_PLD, 1e-6);
    CHECK(a.lower <= a.upper && isfinite(a.upper) && a.upper > 0, "swr m = n = 1000: [%.17g, %.17g]", a.lower, a.upper);
    /* rdp refuses the truncated mixture, naming pld */
    {
        dpa_error err;
        dpa_accountant *ac = try_accountant(s3, DPA_METHOD_RDP, &err);
        dpa_result r;
        dpa_status st = ac ? dpa_accountant_epsilon(ac, 1e-6, &r, &err) : err.status;
        CHECK(st == DPA_EUNSUPPORTED && strstr(err.message, "pld"), "rdp on a truncated mixture: status %d, %s", (int)st,
              st ? err.message : "accepted");
        dpa_accountant_free(ac);
        /* an untruncated one (m = 3) is taken */
        const char *s5 = "{\"sample_with_replacement\":{\"n\":10,\"m\":3,\"event\":{\"gaussian\":{\"sigma\":2}}}}";
        dpa_result x = test_query_epsilon(s5, DPA_METHOD_RDP, 1e-6), y = test_query_epsilon(s5, DPA_METHOD_PLD, 1e-6);
        CHECK(x.upper >= y.lower, "rdp %.17g below pld's lower bound %.17g", x.upper, y.lower);
    }
    /* monotone in m */
    const char *s4 = "{\"repeat\":{\"count\":10,\"event\":{\"sample_with_replacement\":{\"n\":1000,\"m\":500,\"event\":{"
                     "\"gaussian\":{\"sigma\":4}}}}}}";
    dpa_result b = test_query_epsilon(s4, DPA_METHOD_PLD, 1e-6);
    CHECK(b.lower <= a.upper && b.upper <= a.upper, "m = 500 [%.17g, %.17g] vs m = 1000 [%.17g, %.17g]", b.lower, b.upper,
          a.lower, a.upper);
}

/* Audit F1: the truncated binomial tail (and the components below e^-700)
 * of sample_with_replacement count at +inf for the upper bounds only
 * (slack_hi); the lower bound was 8.76e-31 at eps 40, the truth 9.74e-90
 * (remove, mpmath) and 0 (add). */
static void test_swr_lower_without_tail(void **state)
{
    (void)state;
    const char *s = "{\"sample_with_replacement\":{\"n\":1000,\"m\":1000,\"event\":{\"gaussian\":{\"sigma\":5}}}}";
    dpa_result r = test_query_delta(s, DPA_METHOD_PLD, 40);
    CHECK(r.lower <= 9.74e-90 && r.upper >= 9.75e-90, "swr eps 40: [%.17g, %.17g], truth 9.74e-90", r.lower, r.upper);
    r = test_query_delta(s, DPA_METHOD_AUTO, 8);
    CHECK(r.lower <= r.upper && r.upper < 1e-6, "swr eps 8: [%.17g, %.17g]", r.lower, r.upper);
}

/* Audit F2: binomials too wide for the component cap are refused before
 * any loop (m = 1e12 stepped through every k), and the window starts at
 * the first k of pmf >= e^-700. */
static void test_swr_window(void **state)
{
    (void)state;
    const char *bad[] = {
        "{\"sample_with_replacement\":{\"n\":2,\"m\":1e12,\"event\":{\"gaussian\":{\"sigma\":1}}}}",
        "{\"sample_with_replacement\":{\"n\":2,\"m\":1e15,\"event\":{\"gaussian\":{\"sigma\":1}}}}",
        "{\"sample_with_replacement\":{\"n\":3,\"m\":1e9,\"event\":{\"gaussian\":{\"sigma\":1}}}}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        clock_t t0 = clock();
        dpa_error err;
        dpa_accountant *ac = try_accountant(bad[i], DPA_METHOD_PLD, &err);
        dpa_result r;
        dpa_status st = ac ? dpa_accountant_delta(ac, 1.0, &r, &err) : err.status;
        double sec = (double)(clock() - t0) / CLOCKS_PER_SEC;
        CHECK(st == DPA_EUNSUPPORTED && strstr(err.message, "mixture component") && sec < 1.0,
              "%s: status %d in %.2f s: %s", bad[i], (int)st, sec, st ? err.message : "accepted");
        dpa_accountant_free(ac);
    }
    /* n = 2, m = 1e4: mean 5000, sd 50; the window starts far above 0 */
    dpa_error err;
    dpa_spec *sp = dpa_spec_from_json(
        "{\"sample_with_replacement\":{\"n\":2,\"m\":10000,\"event\":{\"gaussian\":{\"sigma\":1000}}}}", &err);
    assert_non_null(sp);
    clock_t t0 = clock();
    dpa_leafset ls;
    assert_int_equal(dpa_leaves_build(sp, &ls, &err), DPA_OK);
    CHECK((double)(clock() - t0) / CLOCKS_PER_SEC < 1.0, "leaves of swr m = 1e4 slow");
    const dpa_pair *p = ls.v[0].pair;
    assert_true(p->kind == DPA_PAIR_MIXGAUSS);
    size_t n = p->nmix;
    double k0 = p->mix[0] / 1e-3, tot = 0;
    CHECK(k0 > 1000 && k0 < 5000 && n < 10000, "window start %g, %zu components", k0, n);
    long double m = 10000, lg = lgammal(m + 1) - m * logl(2.0L);
    for (size_t i = 0; i < n; i++) {
        long double k = roundl(p->mix[i] / 1e-3);
        long double want = lg - lgammal(k + 1) - lgammal(m - k + 1);
        tot += exp(p->mix[n + i]);
        CHECK(fabsl(p->mix[n + i] - want) <= 1e-12 * (1 + fabsl(want)), "k %Lg: log pmf %.17g, lgamma %.17Lg", k,
              p->mix[n + i], want);
        CHECK(p->mix[n + i] >= -700, "k %Lg: component below e^-700 kept", k);
    }
    /* the first k below: under e^-700 */
    long double kb = k0 - 1, lb = lg - lgammal(kb + 1) - lgammal(m - kb + 1);
    CHECK(lb < -700, "k %Lg (log pmf %.17Lg) left out", kb, lb);
    CHECK(fabs(tot - 1) < 1e-12 && p->slack_hi > 0 && p->slack_hi < 1e-29, "weights sum %.17g, slack %g", tot,
          p->slack_hi);
    dpa_leaves_free(&ls);
    dpa_spec_free(sp);
}

/* Audit F3: the positive components' weight is their direct sum, not
 * 1 - w_0 (truths by mpmath quadrature, tmp/audit rdpchk.py). */
static void test_rdp_weight_near_one(void **state)
{
    (void)state;
    dpa_error err;
    const double mu1[2] = {0, 8}, w1[2] = {0.9999999999999999, 1.5e-16};
    dpa_pair *p = dpa_pair_mixgauss(mu1, w1, 2, 0, &err);
    assert_non_null(p);
    double d;
    assert_int_equal(dpa_rdp_divergence(p, 3, 0, &d, &err), DPA_OK);
    CHECK(d >= 41.34615543030515 && d < 41.3462, "order 3: %.17g, exact 41.34615543030515", d);
    dpa_pair_free(p);
    const double mu2[2] = {40, 0}, w2[2] = {1e-300, 1};
    p = dpa_pair_mixgauss(mu2, w2, 2, 0, &err);
    assert_non_null(p);
    dpa_status st = dpa_rdp_divergence(p, 2, 0, &d, &err);
    CHECK(st == DPA_OK && d >= 218.44894420357259 && d < 218.449, "order 2: status %d, %.17g (exact 218.448944203573)",
          (int)st, d);
    st = dpa_rdp_divergence(p, 3, 0, &d, &err);
    CHECK(st == DPA_OK && d >= 1363.8367081526794 && d < 1363.837, "order 3: status %d, %.17g (exact 1363.83670815268)",
          (int)st, d);
    dpa_pair_free(p);
    dpa_result r = test_query_epsilon("{\"mixture_of_gaussians\":{\"sigma\":1,\"sensitivities\":[40,0],\"probabilities\":[1e-300,1]}}",
                        DPA_METHOD_RDP, 1e-6);
    CHECK(isfinite(r.upper), "rdp of [1e-300, 1]: %.17g", r.upper);
}

/* A component with mu above DPA_MU_NONPRIVATE is non-private (mass at +inf). */
static void test_mixture_nonprivate_component(void **state)
{
    (void)state;
    dpa_result r = test_query_delta("{\"mixture_of_gaussians\":{\"sigma\":1,\"sensitivities\":[1e151,1],\"probabilities\":[0.5,0.5]}}",
                          DPA_METHOD_PLD, 1);
    CHECK(r.lower >= 0.5 && r.upper >= r.lower && r.upper <= 0.6, "mu 1e151: [%.17g, %.17g]", r.lower, r.upper);
}

/* Components with sensitivity/sigma in 1e3 .. 1e150 (DPA_MU_NONPRIVATE
 * included): pld answers soundly (the truth at eps = 1 is
 * 0.5 + 0.5 delta_G(1) ~ 0.519743 for mu <= 1e50: their mass is all at
 * loss > 1e9; beyond, the upper bound counts it at +inf). */
static void test_mixture_huge_components(void **state)
{
    (void)state;
    const char *mus[] = {"1e3", "1e5", "1e8", "1e50", "1e51", "1e100", "1e150"};
    for (size_t i = 0; i < sizeof mus / sizeof mus[0]; i++) {
        char json[256];
        snprintf(json, sizeof json,
                 "{\"mixture_of_gaussians\":{\"sigma\":1,\"sensitivities\":[%s,1],\"probabilities\":[0.5,0.5]}}",
                 mus[i]);
        dpa_result r = test_query_delta(json, DPA_METHOD_PLD, 1);
        CHECK(r.upper >= 0.5197 && r.upper <= 0.5199 && r.lower <= 0.51975 && r.lower >= 0,
              "mu %s: [%.17g, %.17g]", mus[i], r.lower, r.upper);
    }
}

/* dpacct renyi on a mixture (orders > 1, the RDP module's bound): one
 * component is the Gaussian (D_A = A mu^2 / 2). */
static void test_renyi_one_component(void **state)
{
    (void)state;
    dpa_error err;
    dpa_spec *s = dpa_spec_from_json(
        "{\"mixture_of_gaussians\":{\"sigma\":2,\"sensitivities\":[1],\"probabilities\":[1]}}", &err);
    assert_non_null(s);
    const double orders[] = {1.5, 2, 8.5, 64};
    for (size_t i = 0; i < 4; i++) {
        dpa_renyi_result r;
        assert_int_equal(dpa_renyi(s, orders[i], 0, &r, &err), DPA_OK);
        double g = orders[i] * 0.125;
        CHECK(r.remove.exists && r.remove.upper >= g && r.remove.upper <= g * (1 + 1e-12) && r.remove.lower <= g,
              "order %g: [%.17g, %.17g], Gaussian %.17g", orders[i], r.remove.lower, r.remove.upper, g);
        CHECK(r.add.upper >= g && r.add.upper <= g * (1 + 1e-12), "add, order %g: %.17g", orders[i], r.add.upper);
    }
    dpa_renyi_result r;
    assert_int_equal(dpa_renyi(s, 0.5, 0, &r, &err), DPA_EUNSUPPORTED);
    CHECK(strstr(err.message, "orders A > 1 only") != NULL, "%s", err.message);
    dpa_spec_free(s);
}

int main(void)
{
    test_seed_from_env();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_parse, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pair_vs_quadrature, setup, teardown),
        cmocka_unit_test_setup_teardown(test_one_component, setup, teardown),
        cmocka_unit_test_setup_teardown(test_poisson_identity, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sample_with_replacement, setup, teardown),
        cmocka_unit_test_setup_teardown(test_swr_lower_without_tail, setup, teardown),
        cmocka_unit_test_setup_teardown(test_swr_window, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rdp_weight_near_one, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mixture_nonprivate_component, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mixture_huge_components, setup, teardown),
        cmocka_unit_test_setup_teardown(test_renyi_one_component, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

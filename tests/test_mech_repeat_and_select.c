/* Repeat-and-select ({"repeat_and_select": ...}; Papernot & Steinke 2022,
 * dp_accounting's RepeatAndSelectDpEvent): a Renyi bound only.
 *  - Over a gaussian event (D_l = l / (2 sigma^2)), the rdp module's value
 *    against the theorems evaluated here independently:
 *      truncated negative binomial (Thm 2): D(a) + (1 + shape) min_l [(1 - 1/l) D(l)
 *        + log(1/gamma) / l] + log(mean) / (a - 1), the min over the default
 *        order grid, gamma from the mean by this test's own bisection (or
 *        1/mean, geometric);
 *      Poisson (Thm 6): D(a) + mean delta(e^) + log(mean) / (a - 1),
 *        e^ = log(1 + 1/(a - 1)): at least with the Gaussian's exact delta
 *        (closed form; the library bounds delta by a conversion, above it),
 *        at most with the improved conversion's delta over the grid;
 *    never below the reference (up to its own 1e-14 rounding), within
 *    REF_REL above;
 *  - mean 1 with shape 1 (always one run) is the event itself plus the
 *    constant's non-negative term: at least the gaussian's D;
 *  - the accountant: auto picks rdp, eps grows with the mean; other
 *    methods refuse naming rdp; a poisson child (a subsampled event inside)
 *    works; repeat_and_select under poisson is refused.
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
#include "model/leaves.h"
#include "rdp/rdp.h"
#include "check.h"

/* the library's gamma is widened by 1e-12 and its sums rounded up by long
 * double ulps: 1e-9 covers that and the reference's own rounding */
#define REF_REL 1e-9

static double lib_rdp(const char *json, double alpha)
{
    dpa_error err;
    dpa_spec *s = dpa_spec_from_json(json, &err);
    if (!s) fail_msg("%s: %s", json, err.message);
    dpa_leafset L;
    assert_int_equal(dpa_leaves_build(s, &L, &err), DPA_OK);
    dpa_rdp *a = dpa_rdp_new(NULL, 0, &err);
    assert_non_null(a);
    if (dpa_rdp_add_leafset(a, &L, &err)) fail_msg("%s", err.message);
    double r;
    if (dpa_rdp_eval(a, alpha, 0, &r, &err)) fail_msg("%s", err.message);
    dpa_rdp_free(a);
    dpa_leaves_free(&L);
    dpa_spec_free(s);
    return r;
}

static long double tnb_mean(long double g, double shape)
{
    if (shape == 0) return (1 / g - 1) / -logl(g);
    return shape * (1 / g - 1) / (1 - powl(g, shape));
}

static long double gamma_of(double mean, double shape)
{
    if (shape == 1) return 1.0L / mean;
    long double lo = 1e-300L, hi = 1;
    for (int i = 0; i < 400; i++) {
        long double g = sqrtl(lo * hi); /* geometric bisection: gamma may be tiny */
        if (tnb_mean(g, shape) >= mean) lo = g;
        else hi = g;
    }
    return lo;
}

static long double ref_tnb(double sigma, double mean, double shape, double alpha)
{
    size_t n = dpa_rdp_default_orders(NULL, 0);
    double *ord = malloc(n * sizeof *ord);
    dpa_rdp_default_orders(ord, n);
    long double lig = -logl(gamma_of(mean, shape)), best = INFINITY, s2 = 2.0L * sigma * sigma;
    for (size_t i = 0; i < n; i++) {
        long double v = (1 - 1.0L / ord[i]) * (ord[i] / s2) + lig / ord[i];
        if (v < best) best = v;
    }
    free(ord);
    return alpha / s2 + (1 + shape) * best + logl(mean) / (alpha - 1);
}

/* the Gaussian mechanism's exact delta at eps, mu = 1 / sigma */
static long double gauss_delta(double mu, double eps)
{
    long double m = mu;
    return 0.5L * erfcl((eps / m - m / 2) / sqrtl(2)) - expl(eps) * 0.5L * erfcl((eps / m + m / 2) / sqrtl(2));
}

static void test_tnb(void **state)
{
    (void)state;
    static const struct { double sigma, mean, shape; } c[] = {
        {2.0, 10, 1}, {1.0, 100, 0}, {3.0, 5, 0.5}, {1.5, 30, 2}, {2.0, 1, 1},
    };
    const double alphas[] = {1.5, 2, 4, 10, 40};
    char js[256];
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        snprintf(js, sizeof js,
                 "{\"repeat_and_select\":{\"mean\":%.17g,\"shape\":%.17g,\"event\":{\"gaussian\":{\"sigma\":%.17g}}}}",
                 c[i].mean, c[i].shape, c[i].sigma);
        for (size_t j = 0; j < sizeof alphas / sizeof alphas[0]; j++) {
            long double want = ref_tnb(c[i].sigma, c[i].mean, c[i].shape, alphas[j]);
            double got = lib_rdp(js, alphas[j]);
            CHECK(got >= want * (1 - 1e-14L) && got <= want * (1 + REF_REL), "%s alpha %g: %.17g vs %.17Lg", js, alphas[j],
                  got, want);
            CHECK(got >= alphas[j] / (2 * c[i].sigma * c[i].sigma), "%s alpha %g: below the event's own %g", js,
                  alphas[j], alphas[j] / (2 * c[i].sigma * c[i].sigma));
        }
    }
}

static void test_poisson(void **state)
{
    (void)state;
    const double sigma = 3.0, mean = 20;
    const double alphas[] = {1.5, 3, 8, 20};
    const char *js = "{\"repeat_and_select\":{\"mean\":20,\"event\":{\"gaussian\":{\"sigma\":3}}}}";
    size_t n = dpa_rdp_default_orders(NULL, 0);
    double *ord = malloc(n * sizeof *ord);
    dpa_rdp_default_orders(ord, n);
    for (size_t j = 0; j < sizeof alphas / sizeof alphas[0]; j++) {
        double a = alphas[j], eh = log1p(1 / (a - 1));
        long double d_exact = gauss_delta(1 / sigma, eh), d_conv = 1;
        for (size_t i = 0; i < n; i++) {
            double d = dpa_rdp_delta_from(DPA_RDP_IMPROVED, ord[i], ord[i] / (2 * sigma * sigma), eh);
            if (d < d_conv) d_conv = d;
        }
        long double base = a / (2 * sigma * sigma) + logl(mean) / (a - 1);
        long double lo = base + mean * d_exact, hi = base + mean * d_conv;
        double got = lib_rdp(js, a);
        CHECK(got >= lo && got <= hi * (1 + REF_REL), "alpha %g: %.12g not in [%.12Lg, %.12Lg]", a, got, lo, hi);
    }
    free(ord);
}

static void test_accountants(void **state)
{
    (void)state;
    dpa_error err;
    double prev = 0;
    char js[256];
    for (double m = 1; m <= 1000; m *= 10) {
        snprintf(js, sizeof js,
                 "{\"repeat_and_select\":{\"mean\":%g,\"shape\":1,\"event\":{\"repeat\":{\"count\":100,\"event\":{"
                 "\"poisson\":{\"rate\":0.01,\"event\":{\"gaussian\":{\"sigma\":1}}}}}}}}",
                 m);
        dpa_accountant *a = test_accountant(js, DPA_METHOD_AUTO);
        dpa_result r;
        assert_int_equal(dpa_accountant_epsilon(a, 1e-6, &r, &err), DPA_OK);
        CHECK(r.method == DPA_METHOD_RDP && isfinite(r.upper) && r.upper > prev, "mean %g: %s eps %g (previous %g)", m,
              dpa_method_name(r.method), r.upper, prev);
        print_message("  mean %g (geometric): eps(1e-6) = %.6g\n", m, r.upper);
        prev = r.upper;
        dpa_accountant_free(a);
    }
    const dpa_method others[] = {DPA_METHOD_PLD, DPA_METHOD_EXACT, DPA_METHOD_PHI, DPA_METHOD_CLT, DPA_METHOD_GDP};
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++) {
        dpa_accountant *a = try_accountant("{\"repeat_and_select\":{\"mean\":3,\"event\":{\"gaussian\":{\"sigma\":1}}}}",
                                           others[i], &err);
        CHECK(!a && err.status == DPA_EUNSUPPORTED && strstr(err.message, "/repeat_and_select") &&
                  strstr(err.message, "method rdp"),
              "method %d: %s", (int)others[i], a ? "accepted" : err.message);
        dpa_accountant_free(a);
    }
    dpa_accountant *a = try_accountant(
        "{\"poisson\":{\"rate\":0.1,\"event\":{\"repeat_and_select\":{\"mean\":3,\"event\":{\"gdp\":{\"mu\":1}}}}}}",
        DPA_METHOD_AUTO, &err);
    CHECK(!a && err.status == DPA_EUNSUPPORTED && strstr(err.message, "subsampled"), "%s", a ? "accepted" : err.message);
    dpa_accountant_free(a);
}

static void test_parse(void **state)
{
    (void)state;
    static const char *const ok[] = {
        "{\"repeat_and_select\":{\"mean\":10,\"event\":{\"gdp\":{\"mu\":1}}},\"neighboring\":\"add_remove\"}",
        "{\"repeat_and_select\":{\"mean\":10,\"shape\":0.5,\"event\":{\"gdp\":{\"mu\":1}}},\"neighboring\":\"add_remove\"}",
    };
    dpa_error err;
    for (size_t i = 0; i < 2; i++) {
        test_spec_round_trip(ok[i]);
    }
    static const struct { const char *json, *want; } bad[] = {
        {"{\"repeat_and_select\":{\"mean\":0.5,\"event\":{\"gdp\":{\"mu\":1}}}}", "/repeat_and_select/mean: must be >= 1"},
        {"{\"repeat_and_select\":{\"mean\":2,\"shape\":-1,\"event\":{\"gdp\":{\"mu\":1}}}}", "/repeat_and_select/shape: must be >= 0"},
        {"{\"repeat_and_select\":{\"mean\":2,\"shape\":-2,\"event\":{\"gdp\":{\"mu\":1}}}}", "/repeat_and_select/shape: must be >= 0"},
        {"{\"repeat_and_select\":{\"mean\":2}}", "missing key \"event\""},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        test_spec_refused(bad[i].json, bad[i].want);
    }
    dpa_template *t = dpa_template_from_json("{\"repeat_and_select\":{\"mean\":\"?\",\"event\":{\"gdp\":{\"mu\":1}}}}", &err);
    CHECK(t && dpa_template_param(t)->role == DPA_ROLE_BUDGET, "mean template: %s", t ? "" : err.message);
    dpa_template_free(t);
    dpa_event *e = dpa_event_repeat_and_select(5, DPA_REPSEL_POISSON, dpa_event_gdp(1, &err), &err);
    double v;
    assert_non_null(e);
    assert_int_equal(dpa_event_get_param(e, "shape", &v), DPA_OK);
    assert_true(v == DPA_REPSEL_POISSON);
    dpa_event_free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_parse, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tnb, setup, teardown),
        cmocka_unit_test_setup_teardown(test_poisson, setup, teardown),
        cmocka_unit_test_setup_teardown(test_accountants, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Tests of the bandmf spec leaf and dpa_event_bandmf (src/event/event_bandmf.c,
 * docs/bandmf.md): banded matrix factorization expanded into
 * Poisson-subsampled Gaussians (cyclic Poisson participation) or a
 * composition of Gaussians (fixed participation).
 * References and properties checked:
 * - b = 1, c = [1] is DP-SGD: bit-identical brackets to the dpsgd leaf
 *   (pld, rdp), and c = [c0] with noise c0 s equals c = [1] with noise s;
 * - the sensitivity against brute force over the explicit n x n matrix and
 *   every participation pattern (long double, small n), including the
 *   truncated columns at the end of the horizon; with separation >= b the
 *   worst case does not depend on the signs of the coefficients (disjoint
 *   column supports), with separation < b it can (why it is refused);
 * - fixed participation equals the Gaussian closed form (exact method) with
 *   an exactly representable sensitivity (c = [3, 4]: 5);
 * - generated cases: brackets consistent with monotonicity in the noise,
 *   the rate and the iterations (lower of the more private <= upper of the
 *   less private);
 * - the attained instance lower-bounds the dominating event, and equals it
 *   (same norm) when b divides n;
 * - calibration of noise_multiplier through a template;
 * - bad input: every field's error names its JSON path or field.
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "dpacct/accountant.h"
#include "dpacct/calibrate.h"
#include "dpacct/event.h"
#include "check.h"
#include "parse_check.h"

static dpa_result eps_spec(dpa_spec *s, dpa_method m, double delta)
{
    dpa_error err = {DPA_OK, ""};
    dpa_options opt;
    dpa_result r;
    dpa_options_init(&opt);
    opt.method = m;
    opt.threads = 1;
    dpa_accountant *a = dpa_accountant_new(s, &opt, &err);
    if (!a)
        fail_msg("accountant: %s", err.message);
    if (dpa_accountant_epsilon(a, delta, &r, &err) != DPA_OK)
        fail_msg("epsilon: %s", err.message);
    dpa_accountant_free(a);
    return r;
}

static dpa_result eps_of(const char *text, dpa_method m, double delta)
{
    dpa_spec *s = parse_ok(text);
    dpa_result r = eps_spec(s, m, delta);
    dpa_spec_free(s);
    return r;
}

static dpa_result eps_event(dpa_event *e, dpa_method m, double delta)
{
    dpa_error err = {DPA_OK, ""};
    dpa_spec *s;
    dpa_result r;
    if (!e)
        fail_msg("no event");
    s = dpa_spec_new(e, DPA_ADD_REMOVE, &err);
    if (!s)
        fail_msg("spec: %s", err.message);
    r = eps_spec(s, m, delta);
    dpa_spec_free(s);
    return r;
}

static void assert_bits(dpa_result a, dpa_result b, const char *what)
{
    if (memcmp(&a.upper, &b.upper, sizeof a.upper) || memcmp(&a.lower, &b.lower, sizeof a.lower))
        fail_msg("%s: [%.17g, %.17g] vs [%.17g, %.17g]", what, a.lower, a.upper, b.lower, b.upper);
}

/* b = 1 is DP-SGD with Poisson sampling: the same tree, so the same bits. */
static void test_b1_is_dpsgd(void **state)
{
    static const dpa_method methods[] = {DPA_METHOD_PLD, DPA_METHOD_RDP};
    (void)state;
    for (size_t i = 0; i < 2; i++) {
        dpa_result a = eps_of("{\"bandmf\":{\"coefficients\":[1],\"noise_multiplier\":1.1,\"iterations\":500,"
                              "\"participation\":{\"poisson\":{\"rate\":0.01}}}}",
                              methods[i], 1e-5);
        dpa_result b = eps_of("{\"dpsgd\":{\"dataset_size\":10000,\"batch_size\":100,\"steps\":500,\"noise\":1.1}}",
                              methods[i], 1e-5);
        /* c0 = 2 with noise 2.2: mu = 2/2.2 = 1/1.1 in exact arithmetic, but the
         * library divides sensitivity by sigma: the same double here */
        dpa_result c = eps_of("{\"bandmf\":{\"coefficients\":[2],\"noise_multiplier\":2.2,\"iterations\":500,"
                              "\"participation\":{\"poisson\":{\"rate\":0.01}}}}",
                              methods[i], 1e-5);
        assert_bits(a, b, "bandmf [1] vs dpsgd");
        if (2.0 / 2.2 == 1.0 / 1.1)
            assert_bits(a, c, "bandmf [2], noise 2.2 vs [1], noise 1.1");
        assert_true(a.upper > 0.5 && a.upper < 5 && a.lower <= a.upper);
    }
    {
        const double one = 1;
        dpa_error err = {DPA_OK, ""};
        dpa_result a = eps_event(dpa_event_bandmf(&one, 1, 1.1, 500, 0.01, 0, 0, &err), DPA_METHOD_PLD, 1e-5);
        dpa_result b = eps_event(dpa_event_dpsgd(10000, 100, 0, 500, 1.1, DPA_DPSGD_POISSON, &err), DPA_METHOD_PLD,
                                 1e-5);
        assert_bits(a, b, "dpa_event_bandmf [1] vs dpa_event_dpsgd");
    }
}

/* Brute force: max over participation patterns t_0 < ... < t_{k'-1} (k' <= k,
 * gaps >= sep) and signs g_i in {-1, 1} of ||sum_i g_i C e_{t_i}||^2, C the
 * explicit n x n banded Toeplitz matrix of c. */
static long double brute_sq(const double *c, size_t b, int n, int k, int sep, int pos, int left, long double *acc)
{
    long double best = 0;
    for (int r = 0; r < n; r++)
        best += acc[r] * acc[r];
    if (left == 0)
        return best;
    for (int t = pos; t < n; t++) {
        for (int g = -1; g <= 1; g += 2) {
            long double v;
            for (size_t l = 0; l < b && t + (int)l < n; l++)
                acc[t + l] += g * (long double)c[l];
            v = brute_sq(c, b, n, k, sep, t + sep, left - 1, acc);
            for (size_t l = 0; l < b && t + (int)l < n; l++)
                acc[t + l] -= g * (long double)c[l];
            if (v > best)
                best = v;
        }
    }
    return best;
}

static void test_sensitivity_brute_force(void **state)
{
    (void)state;
    /* the README-style example: 4 ones, n = 10, 3 participations 4 apart:
     * columns 0, 4, 8 with 4, 4, 2 entries: 10 */
    {
        const double c[] = {1, 1, 1, 1};
        double up = dpa_bandmf_sensitivity(c, 4, 10, 3, 4, 1), dn = dpa_bandmf_sensitivity(c, 4, 10, 3, 4, 0);
        assert_true(dn <= sqrtl(10.0L) && up >= sqrtl(10.0L) && up - dn < 1e-14);
        /* one column: the largest, truncated when n < b */
        up = dpa_bandmf_sensitivity(c, 4, 100, 0, 0, 1);
        dn = dpa_bandmf_sensitivity(c, 4, 100, 0, 0, 0);
        assert_true(up >= 2 && up - 2 < 1e-15 && dn <= 2 && 2 - dn < 1e-15);
        up = dpa_bandmf_sensitivity(c, 4, 3, 0, 0, 1);
        dn = dpa_bandmf_sensitivity(c, 4, 3, 0, 0, 0);
        assert_true(dn <= sqrtl(3.0L) && up >= sqrtl(3.0L));
    }
    /* generated: n <= 11, b <= 4, k <= 3, sep in [b, b + 2] */
    for (int it = 0; it < 300; it++) {
        size_t b = 1 + (size_t)(test_unif() * 4);
        int sep = (int)b + (int)(test_unif() * 3), k = 1 + (int)(test_unif() * 3), n;
        double c[4];
        long double acc[16] = {0}, truth;
        n = (k - 1) * sep + 1 + (int)(test_unif() * 5);
        c[0] = test_log_unif(0.1, 10);
        for (size_t l = 1; l < b; l++)
            c[l] = (test_unif() < 0.5 ? -1 : 1) * (test_unif() < 0.2 ? 0 : test_log_unif(0.01, 10));
        truth = sqrtl(brute_sq(c, b, n, k, sep, 0, k, acc));
        double up = dpa_bandmf_sensitivity(c, b, n, k, sep, 1), dn = dpa_bandmf_sensitivity(c, b, n, k, sep, 0);
        /* the brute force sums at most 16 long double terms: relative error
         * below 40 LDBL_EPSILON, far inside the 1e-15 allowance */
        if (!(up >= truth * (1 - 1e-15L) && dn <= truth * (1 + 1e-15L) && up - dn <= 1e-14 * up))
            fail_msg("b %zu n %d k %d sep %d: [%.17g, %.17g] vs brute force %.17Lg", b, n, k, sep, dn, up, truth);
    }
    /* separation < b: the signs matter (c = [1, 1], participations at 0 and 1
     * with equal signs give ||(1, 2, 1)||^2 = 6 > 2 + 2): refused */
    {
        const double c[] = {1, 1};
        long double acc[16] = {0};
        dpa_error err = {DPA_OK, ""};
        assert_true(fabsl(brute_sq(c, 2, 3, 2, 1, 0, 2, acc) - 6) < 1e-15L);
        assert_null(dpa_event_bandmf(c, 2, 1, 3, 0, 2, 1, &err));
        assert_non_null(strstr(err.message, "separation"));
    }
}

/* Fixed participation with sensitivity exactly 5 (c = [3, 4], one
 * participation) and sqrt(3) 5 (three, 2 apart, n = 6: m = (3, 3)) against
 * the Gaussian of that sensitivity: the exact method's brackets overlap and
 * are narrow. */
static void test_fixed_is_gaussian(void **state)
{
    (void)state;
    dpa_result a = eps_of("{\"bandmf\":{\"coefficients\":[3,4],\"noise_multiplier\":7,\"iterations\":50,"
                          "\"participation\":{\"fixed\":{\"epochs\":1}}}}",
                          DPA_METHOD_EXACT, 1e-6);
    dpa_result g = eps_of("{\"gaussian\":{\"sigma\":7,\"sensitivity\":5}}", DPA_METHOD_EXACT, 1e-6);
    assert_true(a.lower <= g.upper && g.lower <= a.upper);
    assert_true(a.upper - a.lower < 1e-9 * a.upper);
    a = eps_of("{\"bandmf\":{\"coefficients\":[3,4],\"noise_multiplier\":7,\"iterations\":6,"
               "\"participation\":{\"fixed\":{\"epochs\":3}}}}",
               DPA_METHOD_EXACT, 1e-6);
    g = eps_of("{\"repeat\":{\"count\":3,\"event\":{\"gaussian\":{\"sigma\":7,\"sensitivity\":5}}}}", DPA_METHOD_EXACT,
               1e-6);
    assert_true(a.lower <= g.upper && g.lower <= a.upper);
    /* truncated: n = 5, columns 0, 2, 4 keep 2, 2, 1 entries: 9+16+9+16+9 = 59 */
    a = eps_of("{\"bandmf\":{\"coefficients\":[3,4],\"noise_multiplier\":7,\"iterations\":5,"
               "\"participation\":{\"fixed\":{\"epochs\":3}}}}",
               DPA_METHOD_EXACT, 1e-6);
    g = eps_of("{\"compose\":[{\"repeat\":{\"count\":3,\"event\":{\"gaussian\":{\"sigma\":7,\"sensitivity\":3}}}},"
               "{\"repeat\":{\"count\":2,\"event\":{\"gaussian\":{\"sigma\":7,\"sensitivity\":4}}}}]}",
               DPA_METHOD_EXACT, 1e-6);
    assert_bits(a, g, "truncated fixed participation vs its composition");
    /* and the composition is the Gaussian of sensitivity sqrt(59): the closed
     * form delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) at the
     * bracket's ends straddles 1e-6 (long double; the ends differ by far more
     * than its error) */
    {
        long double mu = sqrtl(59.0L) / 7, d;
        d = 0.5L * erfcl((a.upper / mu - mu / 2) / sqrtl(2)) - expl(a.upper) * 0.5L * erfcl((a.upper / mu + mu / 2) / sqrtl(2));
        assert_true(d <= 1e-6L * (1 + 1e-6L));
        d = 0.5L * erfcl((a.lower / mu - mu / 2) / sqrtl(2)) - expl(a.lower) * 0.5L * erfcl((a.lower / mu + mu / 2) / sqrtl(2));
        assert_true(d >= 1e-6L * (1 - 1e-6L));
    }
}

static double eps_poisson(const double *c, size_t b, double s, double n, double q, int lower)
{
    dpa_error err = {DPA_OK, ""};
    dpa_result r = eps_event(dpa_event_bandmf(c, b, s, n, q, 0, 0, &err), DPA_METHOD_PLD, 1e-6);
    return lower ? r.lower : r.upper;
}

/* Generated cases: eps decreases with the noise, increases with the rate
 * and the iterations; a bracket of the less private run never lies below
 * one of the more private run (lower of more private <= upper of less). */
static void test_monotone(void **state)
{
    (void)state;
    int cases = SANITIZED ? 3 : 12;
    for (int it = 0; it < cases; it++) {
        double c[8];
        size_t b = 1 + (size_t)(test_unif() * 8);
        double s = test_log_unif(0.5, 4), q = test_log_unif(1e-3, 0.5), n = (double)b * (1 + (int)(test_unif() * 30));
        c[0] = 1;
        for (size_t l = 1; l < b; l++)
            c[l] = (test_unif() - 0.5) * 1.2;
        CHECK(eps_poisson(c, b, s * 1.3, n, q, 1) <= eps_poisson(c, b, s, n, q, 0), "noise: b %zu s %g", b, s);
        CHECK(eps_poisson(c, b, s, n, q, 1) <= eps_poisson(c, b, s, n, fmin(1, q * 1.5), 0), "rate: q %g", q);
        CHECK(eps_poisson(c, b, s, n, q, 1) <= eps_poisson(c, b, s, n + (double)b, q, 0), "iterations: n %g", n);
        /* n inside one group cycle: the same rounds, the same event */
        if (n - (double)b + 1 >= (double)b)
            CHECK(eps_poisson(c, b, s, n - (double)b + 1, q, 0) == eps_poisson(c, b, s, n, q, 0), "ceil(n/b) rounds");
    }
}

/* The attained instance (group 0, constant gradient) lower-bounds the
 * dominating event: equal norms when b | n, a truncated last round else. */
static void test_instance(void **state)
{
    (void)state;
    const double c[] = {1, 0.6, -0.3};
    dpa_error err = {DPA_OK, ""};
    dpa_result up = eps_event(dpa_event_bandmf(c, 3, 1.5, 30, 0.05, 0, 0, &err), DPA_METHOD_PLD, 1e-6);
    dpa_result lo = eps_event(dpa_event_bandmf_instance(c, 3, 1.5, 30, 0.05, 0, 0, &err), DPA_METHOD_PLD, 1e-6);
    assert_true(lo.lower <= up.upper && up.lower <= lo.upper); /* b | n: the same pair up to rounding */
    up = eps_event(dpa_event_bandmf(c, 3, 1.5, 31, 0.05, 0, 0, &err), DPA_METHOD_PLD, 1e-6);
    lo = eps_event(dpa_event_bandmf_instance(c, 3, 1.5, 31, 0.05, 0, 0, &err), DPA_METHOD_PLD, 1e-6);
    /* 31 = 10 b + 1: 10 full rounds and one at c0 only: strictly less */
    assert_true(lo.upper < up.lower);
    {
        dpa_result ten = eps_event(dpa_event_bandmf_instance(c, 3, 1.5, 30, 0.05, 0, 0, &err), DPA_METHOD_PLD, 1e-6);
        assert_true(ten.lower <= lo.upper); /* one more (partial) round */
    }
}

static void test_calibrate(void **state)
{
    (void)state;
    dpa_error err = {DPA_OK, ""};
    dpa_calibration cal;
    dpa_template *t = dpa_template_from_json(
        "{\"bandmf\":{\"coefficients\":[1,0.5,0.25,0.125],\"noise_multiplier\":\"?\",\"iterations\":400,"
        "\"participation\":{\"poisson\":{\"rate\":0.02}}}}",
        &err);
    if (!t)
        fail_msg("%s", err.message);
    assert_string_equal(dpa_template_param(t)->path, "/bandmf/noise_multiplier");
    assert_int_equal(dpa_calibrate(t, 2, 1e-6, NULL, 0, &cal, &err), DPA_OK);
    assert_true(cal.at_value.upper <= 2 && cal.value > 0.3 && cal.value < 5);
    dpa_template_free(t);
    t = dpa_template_from_json("{\"bandmf\":{\"coefficients\":[1,0.5],\"noise_multiplier\":1,\"iterations\":400,"
                               "\"participation\":{\"poisson\":{\"rate\":\"?\"}}}}",
                               &err);
    if (!t)
        fail_msg("%s", err.message);
    assert_string_equal(dpa_template_param(t)->path, "/bandmf/participation/poisson/rate");
    dpa_template_free(t);
    expect_template_err("{\"bandmf\":{\"coefficients\":[1],\"noise_multiplier\":1,\"iterations\":\"?\","
                        "\"participation\":{\"poisson\":{\"rate\":0.1}}}}",
                        "/bandmf/iterations", "cannot be calibrated");
}

#define BM(coef, noise, n, part)                                                                                   \
    "{\"bandmf\":{\"coefficients\":" coef ",\"noise_multiplier\":" noise ",\"iterations\":" n                     \
    ",\"participation\":" part "}}"
#define POI(q) "{\"poisson\":{\"rate\":" q "}}"
#define FIX(k) "{\"fixed\":{\"epochs\":" k "}}"

static void test_bad_input(void **state)
{
    (void)state;
    const double c[] = {1, 0.5}, nan_c[] = {1, NAN};
    dpa_error err = {DPA_OK, ""};
    expect_err(BM("[]", "1", "10", POI("0.1")), "/bandmf/coefficients", "must not be empty");
    expect_err(BM("[0, 1]", "1", "10", POI("0.1")), "/bandmf/coefficients/0", "c0");
    expect_err(BM("[-1]", "1", "10", POI("0.1")), "/bandmf/coefficients/0", "must be > 0");
    expect_err(BM("[1, 1e200]", "1", "10", POI("0.1")), "/bandmf/coefficients/1", "1e100");
    expect_err(BM("[1, \"?\"]", "1", "10", POI("0.1")), "/bandmf/coefficients/1", "cannot be calibrated");
    expect_err(BM("1", "1", "10", POI("0.1")), "/bandmf/coefficients", "expected an array");
    expect_err(BM("[1]", "0", "10", POI("0.1")), "/bandmf/noise_multiplier", "must be");
    expect_err(BM("[1]", "1", "10.5", POI("0.1")), "/bandmf/iterations", "integer");
    expect_err(BM("[1]", "1", "0", POI("0.1")), "/bandmf/iterations", "integer");
    expect_err(BM("[1, 1, 1]", "1", "2", POI("0.1")), "/bandmf/coefficients", "b <= n");
    expect_err(BM("[1]", "1", "10", POI("0")), "/bandmf/participation/poisson/rate", "must be");
    expect_err(BM("[1]", "1", "10", POI("1.5")), "/bandmf/participation/poisson/rate", "must be");
    expect_err(BM("[1]", "1", "10", FIX("2.5")), "/bandmf/participation/fixed/epochs", "integer");
    expect_err(BM("[1, 1]", "1", "10", FIX("6")), "/bandmf/participation/fixed/epochs", "(k - 1) sep + 1");
    expect_err(BM("[1, 1]", "1", "10", "{\"fixed\":{\"epochs\":2,\"separation\":1}}"),
               "/bandmf/participation/fixed/separation", ">= the number of bands");
    expect_err(BM("[1, 1]", "1", "10", "{\"fixed\":{\"epochs\":2,\"separation\":0}}"),
               "/bandmf/participation/fixed/separation", "got 0");
    expect_err(BM("[1]", "1", "10", "{\"fixed\":{\"epochs\":2},\"poisson\":{\"rate\":0.1}}"), "/bandmf/participation",
               "one key");
    expect_err(BM("[1]", "1", "10", "{\"cyclic\":{}}"), "/bandmf/participation", "unknown key");
    expect_err("{\"bandmf\":{\"coefficients\":[1],\"noise_multiplier\":1,\"iterations\":10}}", "/bandmf",
               "missing key \"participation\"");
    expect_err("{\"bandmf\":{\"coefficients\":[1],\"noise\":1,\"iterations\":10,\"participation\":" POI("0.1") "}}",
               "/bandmf", "unknown key");
    expect_err("{\"neighboring\":\"replace\",\"bandmf\":{\"coefficients\":[1],\"noise_multiplier\":1,"
               "\"iterations\":10,\"participation\":" FIX("1") "}}",
               "/bandmf", "add/remove");
    /* the C API names the field */
    assert_null(dpa_event_bandmf(nan_c, 2, 1, 10, 0.1, 0, 0, &err));
    assert_non_null(strstr(err.message, "coefficients[1]"));
    assert_null(dpa_event_bandmf(c, 0, 1, 10, 0.1, 0, 0, &err));
    assert_non_null(strstr(err.message, "coefficients must not be empty"));
    assert_null(dpa_event_bandmf(c, 2, NAN, 10, 0.1, 0, 0, &err));
    assert_non_null(strstr(err.message, "noise_multiplier"));
    assert_null(dpa_event_bandmf(c, 2, 1, 10, 0.1, 2, 0, &err));
    assert_non_null(strstr(err.message, "epochs"));
    assert_null(dpa_event_bandmf(c, 2, 1, 1e16, 0, 1, 0, &err));
    assert_non_null(strstr(err.message, "iterations"));
    assert_true(isnan(dpa_bandmf_sensitivity(c, 0, 10, 0, 0, 1)));
    assert_true(isnan(dpa_bandmf_sensitivity(c, 2, 10, 2.5, 0, 1)));
    assert_true(isnan(dpa_bandmf_sensitivity(c, 2, 10.5, 0, 0, 1)));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_b1_is_dpsgd),       cmocka_unit_test(test_sensitivity_brute_force),
        cmocka_unit_test(test_fixed_is_gaussian), cmocka_unit_test_setup_teardown(test_monotone, setup, teardown),
        cmocka_unit_test(test_instance),          cmocka_unit_test(test_calibrate),
        cmocka_unit_test(test_bad_input),
    };
    test_seed_from_env();
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* The exponential mechanism as a bounded-range mechanism
 * ({"exponential_mechanism": ...}), permute-and-flip and report-noisy-max:
 * parsing, the pair against independent computations, and the accountants.
 *  - The pair's profile against a brute-force supremum over the two-point
 *    pairs P_t (losses (1 - t) eps and -t eps, Dong, Durfee & Rogers 2020
 *    2020) on a grid of T_GRID values of t, computed atom by atom:
 *    at every e' in [-eps - 1, eps + 1] the pair must be at least the
 *    grid's supremum (a lower bound on the true one) and within CHORD_REL
 *    relative (+ CHORD_ABS) of it (the chords of DPA_BR_POINTS points plus
 *    the t grid's own gap).
 *  - Real exponential mechanisms: utilities u, u' with |u_i - u'_i| <= 1
 *    on 2 to 6 candidates (random), P(i) proportional to exp(eps u_i / 2):
 *    the exact delta of the two output laws is at most the pair's.
 *  - k-fold composition: the pld bracket's upper end is at least the
 *    optimal non-adaptive homogeneous composition of BR mechanisms
 *    evaluated on a t grid, sup_t of the binomial sum over k copies of P_t
 *    (DDR 2020), and below the pure eps-DP composition (exact method);
 *    rdp at most the zcdp eps^2/8 bound.
 *  - generated cases: pld lower <= upper, monotone in the count, epsilon and e';
 *  - permute_and_flip and report_noisy_max with laplace/exponential noise
 *    give exactly the pure eps-DP brackets; with gumbel noise those of the
 *    exponential mechanism.
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
#include "check.h"

#define T_GRID 20000
/* the t grid's gap below the supremum: O(1/T_GRID^2) relative at the
 * maximum (H is smooth in t there) */
#define CHORD_REL 1e-7 /* and the construction's margin, 4e-12 */
/* the chords' gap above the envelope (bounded_range.c), with 1% margin,
 * plus rounding */
static double chord_abs(double eps)
{
    double h = eps / (DPA_BR_POINTS - 1);
    return 1.01 * h * h / (16 * -expm1(-eps)) + 1e-14;
}

/* delta of the pair P_t at e' (both atoms, in long double) */
static long double pt_delta(double eps, long double t, double e1)
{
    long double w1 = (1 - t) * eps, w0 = -t * eps, s = expl(e1);
    long double ahi = -expm1l(-t * eps) / -expm1l(-(long double)eps), alo = 1 - ahi;
    long double d = 0;
    if (w1 > e1) d += ahi * (1 - s * expl(-w1));
    if (w0 > e1) d += alo * (1 - s * expl(-w0));
    return d;
}

static long double brute_sup(double eps, double e1)
{
    long double best = 0;
    for (int i = 0; i <= T_GRID; i++) {
        long double d = pt_delta(eps, (long double)i / T_GRID, e1);
        if (d > best) best = d;
    }
    return best;
}

static void test_pair(void **state)
{
    (void)state;
    const double eps[] = {0.01, 0.3, 1.0, 3.0, 10.0};
    for (size_t i = 0; i < sizeof eps / sizeof eps[0]; i++) {
        dpa_error err;
        dpa_pair *p = dpa_pair_bounded_range(eps[i], &err);
        if (!p) fail_msg("%s", err.message);
        CHECK(p->symmetric, "eps %g: symmetric", eps[i]);
        for (int j = 0; j <= 40; j++) {
            double e1 = -eps[i] - 1 + (2 * eps[i] + 2) * j / 40.0;
            long double want = brute_sup(eps[i], e1);
            double got = exp(dpa_pair_log_delta(p, e1));
            CHECK(got >= want && got <= want * (1 + CHORD_REL) + chord_abs(eps[i]),
                  "eps %g e' %g: pair %.15g vs sup over t %.15Lg", eps[i], e1, got, want);
        }
        /* the closed form at e' = 0: tanh(eps / 4) */
        double d0 = exp(dpa_pair_log_delta(p, 0.0));
        CHECK(d0 >= tanhl(eps[i] / 4.0L) && d0 <= tanh(eps[i] / 4) * (1 + CHORD_REL) + chord_abs(eps[i]), "eps %g: delta(0) %.15g vs tanh %.15g",
              eps[i], d0, tanh(eps[i] / 4));
        dpa_pair_free(p);
    }
}

/* exact delta of the exponential mechanism with utilities u, v */
static double em_delta(const double *u, const double *v, int m, double eps, double e1)
{
    long double zu = 0, zv = 0, d = 0;
    for (int i = 0; i < m; i++) {
        zu += expl(eps * u[i] / 2);
        zv += expl(eps * v[i] / 2);
    }
    for (int i = 0; i < m; i++) {
        long double a = expl(eps * u[i] / 2) / zu, b = expl(eps * v[i] / 2) / zv, x = a - expl(e1) * b;
        if (x > 0) d += x;
    }
    return (double)d;
}

static void test_real_mechanisms(void **state)
{
    (void)state;
    for (int trial = 0; trial < 300; trial++) {
        int m = 2 + (int)(test_unif() * 5);
        double eps = test_log_unif(0.05, 8), u[6], v[6];
        for (int i = 0; i < m; i++) {
            u[i] = 3 * test_unif();
            /* extreme neighbours: each utility moves by -1, 0 or +1 */
            v[i] = u[i] + (double)((int)(test_unif() * 3) - 1);
        }
        dpa_error err;
        dpa_pair *p = dpa_pair_bounded_range(eps, &err);
        assert_non_null(p);
        for (int j = 0; j <= 10; j++) {
            double e1 = -eps + 2 * eps * j / 10.0;
            double got = exp(dpa_pair_log_delta(p, e1)), d = em_delta(u, v, m, eps, e1), d2 = em_delta(v, u, m, eps, e1);
            CHECK(got >= d * (1 - 1e-13) && got >= d2 * (1 - 1e-13),
                  "trial %d eps %g e' %g: pair %.15g below the mechanism's %.15g / %.15g", trial, eps, e1, got, d, d2);
        }
        dpa_pair_free(p);
    }
}

/* sup over the t grid of the k-fold composition of P_t at e' */
static long double brute_kfold(double eps, int k, double e1)
{
    long double best = 0;
    for (int i = 0; i <= 2000; i++) {
        long double t = (long double)i / 2000, ahi = -expm1l(-t * eps) / -expm1l(-(long double)eps), s = 0;
        for (int j = 0; j <= k; j++) {
            long double L = j * (1 - t) * eps - (k - j) * t * eps;
            if (L <= e1) continue;
            long double pa = expl(lgammal(k + 1) - lgammal(j + 1) - lgammal(k - j + 1)) * powl(ahi, j) * powl(1 - ahi, k - j);
            s += pa * (1 - expl(e1 - L));
        }
        if (s > best) best = s;
    }
    return best;
}

static void test_composition(void **state)
{
    (void)state;
    static const struct { double eps; int k; double e1; } c[] = {
        {1.0, 10, 2.0}, {0.5, 40, 3.0}, {0.1, 100, 1.0}, {2.0, 5, 4.0},
    };
    char js[256];
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        snprintf(js, sizeof js, "{\"repeat\":{\"count\":%d,\"event\":{\"exponential_mechanism\":{\"epsilon\":%.17g}}}}",
                 c[i].k, c[i].eps);
        dpa_result r = test_query_delta(js, DPA_METHOD_AUTO, c[i].e1);
        long double opt = brute_kfold(c[i].eps, c[i].k, c[i].e1);
        snprintf(js, sizeof js, "{\"repeat\":{\"count\":%d,\"event\":{\"pure\":{\"epsilon\":%.17g}}}}", c[i].k, c[i].eps);
        dpa_result pure = test_query_delta(js, DPA_METHOD_EXACT, c[i].e1);
        print_message("  eps %g k %d e' %g: pld [%.6g, %.6g], optimal BR %.6Lg, pure DP %.6g\n", c[i].eps, c[i].k,
                      c[i].e1, r.lower, r.upper, opt, pure.upper);
        CHECK(r.method == DPA_METHOD_PLD, "auto picks pld, got %d", (int)r.method);
        CHECK(r.lower <= r.upper && r.upper >= opt * (1 - 1e-12), "case %zu: pld [%g, %g] vs optimal %Lg", i, r.lower,
              r.upper, opt);
        CHECK(r.upper <= pure.lower, "case %zu: BR %g not below pure DP %g", i, r.upper, pure.lower);
        snprintf(js, sizeof js, "{\"repeat\":{\"count\":%d,\"event\":{\"exponential_mechanism\":{\"epsilon\":%.17g}}}}",
                 c[i].k, c[i].eps);
        dpa_result rd = test_query_delta(js, DPA_METHOD_RDP, c[i].e1);
        CHECK(rd.upper >= r.lower, "case %zu: rdp %g below pld lower %g", i, rd.upper, r.lower);
        /* the zCDP cap eps^2/8: rdp at most the zcdp leaf's bound */
        snprintf(js, sizeof js, "{\"repeat\":{\"count\":%d,\"event\":{\"zcdp\":{\"rho\":%.17g}}}}", c[i].k,
                 c[i].eps * c[i].eps / 8 * (1 + 1e-12));
        dpa_result rz = test_query_delta(js, DPA_METHOD_RDP, c[i].e1);
        print_message("    rdp %.6g, zcdp eps^2/8 %.6g\n", rd.upper, rz.upper);
        CHECK(rd.upper <= rz.upper, "case %zu: rdp %g above the zcdp bound %g", i, rd.upper, rz.upper);
    }
}

/* generated cases: lower <= upper, delta non-decreasing in the count and
 * in epsilon, non-increasing in e' */
static void test_generated(void **state)
{
    (void)state;
    char js[256];
    for (int trial = 0; trial < 12; trial++) {
        double eps = test_log_unif(0.02, 3), e1 = test_unif() * 3;
        int k = 1 + (int)(test_unif() * 50);
        double prev = -1;
        for (int step = 0; step < 3; step++) {
            double ee = eps * (1 + 0.5 * step);
            snprintf(js, sizeof js, "{\"repeat\":{\"count\":%d,\"event\":{\"exponential_mechanism\":{\"epsilon\":%.17g}}}}",
                     k, ee);
            dpa_result r = test_query_delta(js, DPA_METHOD_PLD, e1), r2 = test_query_delta(js, DPA_METHOD_PLD, e1 + 0.5);
            snprintf(js, sizeof js, "{\"repeat\":{\"count\":%d,\"event\":{\"exponential_mechanism\":{\"epsilon\":%.17g}}}}",
                     k + 5, ee);
            dpa_result r3 = test_query_delta(js, DPA_METHOD_PLD, e1);
            CHECK(r.lower <= r.upper && r2.upper <= r.upper && r3.upper >= r.lower && r.upper >= prev,
                  "eps %g k %d e' %g: [%g, %g], at e'+0.5 %g, k+5 %g, smaller eps %g", ee, k, e1, r.lower, r.upper,
                  r2.upper, r3.upper, prev);
            prev = r.lower;
        }
    }
}

static void same(const char *a, const char *b, dpa_method m)
{
    dpa_accountant *x = test_accountant(a, m), *y = test_accountant(b, m);
    dpa_result rx, ry;
    dpa_error err;
    assert_int_equal(dpa_accountant_epsilon(x, 1e-6, &rx, &err), DPA_OK);
    assert_int_equal(dpa_accountant_epsilon(y, 1e-6, &ry, &err), DPA_OK);
    CHECK(rx.upper == ry.upper && rx.lower == ry.lower && rx.method == ry.method, "%s: [%g, %g] vs %s: [%g, %g]", a,
          rx.lower, rx.upper, b, ry.lower, ry.upper);
    dpa_accountant_free(x);
    dpa_accountant_free(y);
}

static void test_mappings(void **state)
{
    (void)state;
    const char *pure = "{\"repeat\":{\"count\":20,\"event\":{\"pure\":{\"epsilon\":0.7}}}}";
    same("{\"repeat\":{\"count\":20,\"event\":{\"permute_and_flip\":{\"epsilon\":0.7}}}}", pure, DPA_METHOD_AUTO);
    same("{\"repeat\":{\"count\":20,\"event\":{\"report_noisy_max\":{\"epsilon\":0.7,\"noise\":\"laplace\"}}}}", pure,
         DPA_METHOD_AUTO);
    same("{\"repeat\":{\"count\":20,\"event\":{\"report_noisy_max\":{\"epsilon\":0.7,\"noise\":\"exponential\"}}}}", pure,
         DPA_METHOD_AUTO);
    same("{\"repeat\":{\"count\":20,\"event\":{\"report_noisy_max\":{\"epsilon\":0.7,\"noise\":\"gumbel\"}}}}",
         "{\"repeat\":{\"count\":20,\"event\":{\"exponential_mechanism\":{\"epsilon\":0.7}}}}", DPA_METHOD_AUTO);
    /* under Poisson subsampling too */
    same("{\"poisson\":{\"rate\":0.1,\"event\":{\"permute_and_flip\":{\"epsilon\":2}}}}",
         "{\"poisson\":{\"rate\":0.1,\"event\":{\"pure\":{\"epsilon\":2}}}}", DPA_METHOD_PLD);
    /* epsilon 0 is the identity */
    dpa_accountant *a = test_accountant("{\"exponential_mechanism\":{\"epsilon\":0}}", DPA_METHOD_AUTO);
    dpa_result r;
    dpa_error err;
    assert_int_equal(dpa_accountant_delta(a, 0.0, &r, &err), DPA_OK);
    CHECK(r.upper == 0, "identity: delta(0) = %g", r.upper);
    dpa_accountant_free(a);
    /* phi takes the pair when its atom lattice stays small; clt and gdp
     * refuse naming pld */
    a = try_accountant("{\"repeat\":{\"count\":3,\"event\":{\"exponential_mechanism\":{\"epsilon\":0.5}}}}",
                       DPA_METHOD_PHI, &err);
    if (a && dpa_accountant_delta(a, 0.5, &r, &err) == DPA_OK) {
        dpa_result pl = test_query_delta("{\"repeat\":{\"count\":3,\"event\":{\"exponential_mechanism\":{\"epsilon\":0.5}}}}",
                               DPA_METHOD_PLD, 0.5);
        CHECK(r.lower <= pl.upper && pl.lower <= r.upper, "phi [%g, %g] vs pld [%g, %g]", r.lower, r.upper, pl.lower,
              pl.upper);
    } else {
        CHECK(strstr(err.message, "pld"), "phi must take it or refuse naming pld: %s", err.message);
    }
    dpa_accountant_free(a);
    const dpa_method others[] = {DPA_METHOD_CLT, DPA_METHOD_GDP};
    for (size_t i = 0; i < 2; i++) {
        a = try_accountant("{\"exponential_mechanism\":{\"epsilon\":1}}", others[i], &err);
        dpa_status st = a ? dpa_accountant_epsilon(a, 1e-6, &r, &err) : err.status;
        CHECK(st == DPA_EUNSUPPORTED && strstr(err.message, "pld"), "method %d: %s", (int)others[i],
              st ? err.message : "accepted");
        dpa_accountant_free(a);
    }
}

static void test_parse(void **state)
{
    (void)state;
    static const char *const ok[] = {
        "{\"exponential_mechanism\":{\"epsilon\":1.5},\"neighboring\":\"add_remove\"}",
        "{\"permute_and_flip\":{\"epsilon\":0.25},\"neighboring\":\"replace\"}",
        "{\"report_noisy_max\":{\"epsilon\":2,\"noise\":\"gumbel\"},\"neighboring\":\"add_remove\"}",
        "{\"report_noisy_max\":{\"epsilon\":2,\"noise\":\"laplace\"},\"neighboring\":\"add_remove\"}",
        "{\"report_noisy_max\":{\"epsilon\":2,\"noise\":\"exponential\"},\"neighboring\":\"add_remove\"}",
    };
    dpa_error err;
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        dpa_spec *s = dpa_spec_from_json(ok[i], &err);
        if (!s) fail_msg("%s: %s", ok[i], err.message);
        char *j = dpa_spec_to_json(s);
        CHECK(j && !strcmp(j, ok[i]), "round trip %s -> %s", ok[i], j ? j : "");
        free(j);
        dpa_spec_free(s);
    }
    static const struct { const char *json, *want; } bad[] = {
        {"{\"exponential_mechanism\":{\"epsilon\":-1}}", "/exponential_mechanism/epsilon: must be >= 0"},
        {"{\"report_noisy_max\":{\"epsilon\":1,\"noise\":\"cauchy\"}}", "/report_noisy_max/noise: must be \"gumbel\""},
        {"{\"report_noisy_max\":{\"epsilon\":1,\"noise\":1}}", "/report_noisy_max/noise: expected a string"},
        {"{\"report_noisy_max\":{\"epsilon\":1}}", "missing key \"noise\""},
        {"{\"permute_and_flip\":{\"eps\":1}}", "unknown key"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        test_spec_refused(bad[i].json, bad[i].want);
    }
    dpa_template *t = dpa_template_from_json("{\"report_noisy_max\":{\"epsilon\":\"?\",\"noise\":\"gumbel\"}}", &err);
    CHECK(t && !strcmp(dpa_template_param(t)->name, "epsilon"), "template: %s", t ? "" : err.message);
    dpa_template_free(t);
    dpa_event *e = dpa_event_report_noisy_max(1, DPA_RNM_LAPLACE, &err);
    double v;
    assert_non_null(e);
    assert_int_equal(dpa_event_get_param(e, "noise", &v), DPA_OK);
    assert_true(v == DPA_RNM_LAPLACE);
    dpa_event_free(e);
    e = dpa_event_report_noisy_max(1, (dpa_rnm_noise)7, &err);
    CHECK(!e && strstr(err.message, "noise"), "bad noise: %s", e ? "accepted" : err.message);
    dpa_event_free(e);
}

int main(void)
{
    test_seed_from_env();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_parse, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pair, setup, teardown),
        cmocka_unit_test_setup_teardown(test_real_mechanisms, setup, teardown),
        cmocka_unit_test_setup_teardown(test_composition, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mappings, setup, teardown),
        cmocka_unit_test_setup_teardown(test_generated, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* The Rényi divergence of discrete Gaussian leaves at real orders (issue 26;
 * src/rdp/renyi_dg_tail.c, docs/rdp.md "Discrete Gaussian leaves"): plain,
 * Poisson-subsampled and truncated, both directions.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * References (independent of the library's sum and its tail bound):
 *  - a long double sum of E(theta) = sum_o M2(o)^{-theta} M1(o)^{1+theta}
 *    over |o| <= 60 sigma + (|gamma| + 1) s (intersected with [-T, T]),
 *    normalized by the same sum of b(o) = e^{-o^2/(2 sigma^2)}, the terms
 *    beyond below e^{-1800} of the largest; M1 = q A + (1 - q) B, M2 = B;
 *  - CKS20 (Canonne, Kamath & Steinke 2020, Prop 5 and its proof): for an
 *    integer shift s and an integer order A, D_A = A s^2 / (2 sigma^2)
 *    exactly (the sum of e^{-(o - A s)^2 / (2 sigma^2)} over the integers is
 *    the normalizer itself);
 *  - dp_accounting's rdp_privacy_accountant_test.py
 *    test_poisson_sampled_discrete_gaussian_matches_gaussian (q 0.01, sigma
 *    2.5, 50 steps, orders 1.5, 2.5, 5, 50, 100), which charges the
 *    subsampled continuous Gaussian (an upper bound for the discrete one):
 *    dpacct's certified lower bound for the discrete one must not exceed
 *    it, the two brackets overlap, and the reference sum lies in the
 *    discrete one's.
 * Checked: lower <= reference <= upper (allowance REF_LOGE on the reference's
 * log E, divided by |A - 1|), the bracket's width (tight: round-off and a
 * tail below e^{-800}), over 60 generated (sigma, q, order, T) cases and the
 * fixed rows above.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "check.h"
#include "dpacct/renyi.h"
#include "rdp/rdp.h"

/* Absolute error allowed on the reference's log E: at most 2e4 terms, each
 * expl/logl within a few 2^-64 of its magnitude (<= 2e3 here), summed in
 * long double (2^-64 per addition): below 2e4 * 2^-63 + 2e3 * 2^-62 ~ 5e-15;
 * 1e-14 leaves a factor 2. */
#define REF_LOGE 1e-14
/* Width expected of a bracket on D_A (not a certified claim: the sum's
 * round-off allowances are ~1e-12 relative on log E here) */
#define WIDTH_REL 1e-9
/* and an absolute width on log E: the sum's allowance is 8u per unit of a
 * term's log magnitude (up to ~100 here), 1e-13, with a factor 10 */
#define WIDTH_LOGE 1e-12

static dpa_spec *spec_of(const char *json)
{
    dpa_error err;
    dpa_spec *s = dpa_spec_from_json(json, &err);
    if (!s) fail_msg("spec %s: %s", json, err.message);
    return s;
}

static dpa_status renyi_json(const char *json, double A, dpa_renyi_result *r, dpa_error *err)
{
    dpa_spec *s = spec_of(json);
    dpa_status st = dpa_renyi(s, A, 0, r, err);
    dpa_spec_free(s);
    return st;
}

/* log E of the remove pair at gamma = 1 + theta' (the add direction at
 * order A is gamma = 1 - A), the discrete Gaussian (sigma, s) truncated at T
 * (T < 0: not), Poisson rate q; +inf as HUGE_VALL */
static long double ref_log_e(double sigma, double s, double q, double T, double gamma)
{
    long double v2 = 2.0L * sigma * sigma, m = -INFINITY, m0 = -INFINITY;
    long K = (long)(60 * sigma + (fabs(gamma) + 1) * s) + 1, lo = -K, hi = K;
    if (T >= 0 && lo < -T) lo = (long)-T;
    if (T >= 0 && hi > T) hi = (long)T;
    for (int pass = 0; pass < 2; pass++) {
        long double sum = 0, sum0 = 0;
        for (long o = lo; o <= hi; o++) {
            long double lb = -(long double)o * o / v2, g;
            if (T >= 0 && o < s - T) g = 1 - (long double)q;
            else g = (1 - (long double)q) + q * expl((2.0L * o * s - (long double)s * s) / v2);
            if (g == 0 && gamma < 0) return HUGE_VALL;
            long double l = g == 0 ? -INFINITY : lb + gamma * logl(g);
            if (pass == 0) {
                if (l > m) m = l;
                if (lb > m0) m0 = lb;
            } else {
                sum += expl(l - m);
                sum0 += expl(lb - m0);
            }
        }
        if (pass == 1) return m + logl(sum) - m0 - logl(sum0);
    }
    return 0;
}

static long double ref_div(double sigma, double s, double q, double T, double A, int dir)
{
    long double l = ref_log_e(sigma, s, q, T, dir ? 1 - A : A);
    return l == HUGE_VALL ? HUGE_VALL : l / (A - 1);
}

static void spec_json(char *js, size_t n, double sigma, double s, double q, double T, int count)
{
    char dg[160], tr[48] = "";
    if (T >= 0) snprintf(tr, sizeof tr, ",\"truncation\":%.17g", T);
    snprintf(dg, sizeof dg, "{\"discrete_gaussian\":{\"sigma\":%.17g,\"sensitivity\":%.17g%s}}", sigma, s, tr);
    char ev[256];
    if (q < 1) snprintf(ev, sizeof ev, "{\"poisson\":{\"rate\":%.17g,\"event\":%s}}", q, dg);
    else snprintf(ev, sizeof ev, "%s", dg);
    if (count > 1) snprintf(js, n, "{\"repeat\":{\"count\":%d,\"event\":%s}}", count, ev);
    else snprintf(js, n, "%s", ev);
}

/* the bracket of one direction against the reference */
static void check_one(const dpa_renyi_value *v, long double ref, double A, int count, const char *what)
{
    double tol = count * REF_LOGE / fabs(A - 1);
    if (ref == HUGE_VALL) {
        CHECK(v->lower == INFINITY && v->upper == INFINITY, "%s: reference +inf, bracket [%.17g, %.17g]", what,
              v->lower, v->upper);
        return;
    }
    long double t = count * ref;
    CHECK(v->lower <= t + tol && t - tol <= v->upper && v->lower <= v->re && v->re <= v->upper,
          "%s: reference %.17Lg outside [%.17g, %.17g] (value %.17g)", what, t, v->lower, v->upper, v->re);
    CHECK(v->upper - v->lower <= WIDTH_REL * v->upper + count * WIDTH_LOGE / fabs(A - 1),
          "%s: bracket [%.17g, %.17g] too wide", what, v->lower, v->upper);
}

/* 60 generated cases: sigma log-uniform in [0.5, 20], sensitivity 1..3,
 * rate 1 or log-uniform in [1e-3, 0.9], order in (0, 1) or (1, 12],
 * untruncated or truncated at T (some within the 12-sigma atom window,
 * some beyond it); both directions against the reference sum */
static void test_generated(void **state)
{
    (void)state;
    test_seed_from_env();
    dpa_renyi_result r;
    dpa_error err;
    for (int i = 0; i < 60; i++) {
        double sigma = test_log_unif(0.5, 20), s = 1 + floor(3 * test_unif());
        double q = test_unif() < 0.3 ? 1.0 : test_log_unif(1e-3, 0.9);
        double A = test_unif() < 0.4 ? 0.05 + 0.9 * test_unif() : 1 + test_log_unif(0.05, 11);
        double T = -1, u = test_unif();
        if (u < 0.2) T = ceil(s / 2 + test_unif() * 4 * sigma); /* within the window */
        else if (u < 0.3) T = ceil(20 * sigma + 2 * s);       /* beyond it (slack) */
        char js[512];
        spec_json(js, sizeof js, sigma, s, q, T, 1);
        dpa_status st = renyi_json(js, A, &r, &err);
        CHECK(st == DPA_OK, "%s at %g: %s", js, A, err.message);
        if (st) continue;
        for (int dir = 0; dir < 2; dir++) {
            char what[640];
            snprintf(what, sizeof what, "%s at %g, %s", js, A, dir ? "add" : "remove");
            /* remove at A > 1 with truncation: mass at +inf */
            long double ref = (dir == 0 && A > 1 && T >= 0) ? HUGE_VALL : ref_div(sigma, s, q, T, A, dir);
            check_one(dir ? &r.add : &r.remove, ref, A, 1, what);
        }
        CHECK(r.symmetric == (q == 1), "%s: symmetric %d", js, r.symmetric);
    }
}

/* CKS20: integer s and integer A, plain discrete Gaussian: D_A = A s^2/(2 sigma^2)
 * in the bracket (within round-off: 4u relative on the closed form) */
static void test_cks20(void **state)
{
    (void)state;
    static const double sig[] = {0.5, 1, 2.5, 7, 30}, sens[] = {1, 2, 3}, ord[] = {2, 3, 5, 10};
    dpa_renyi_result r;
    dpa_error err;
    for (size_t i = 0; i < 5; i++)
        for (size_t j = 0; j < 3; j++)
            for (size_t k = 0; k < 4; k++) {
                char js[512];
                spec_json(js, sizeof js, sig[i], sens[j], 1, -1, 1);
                dpa_status st = renyi_json(js, ord[k], &r, &err);
                CHECK(st == DPA_OK, "%s: %s", js, err.message);
                if (st) continue;
                double rho = sens[j] * sens[j] / (2 * sig[i] * sig[i]), want = ord[k] * rho;
                double ra = 4 * 1.1102230246251565e-16 * want;
                CHECK(r.remove.lower <= want + ra && want - ra <= r.remove.upper &&
                          r.remove.upper - r.remove.lower <= WIDTH_REL * want + WIDTH_LOGE / (ord[k] - 1),
                      "%s at %g: [%.17g, %.17g] vs A rho %.17g", js, ord[k], r.remove.lower, r.remove.upper, want);
                CHECK(strstr(r.remove.note, "discrete Gaussian") != NULL, "%s: note %s", js, r.remove.note);
            }
    /* KL (A = 1): between D_{1-h} and D_{1+h}, the CKS20 rho above */
    renyi_json("{\"discrete_gaussian\":{\"sigma\":2}}", 1, &r, &err);
    CHECK(r.remove.lower > 0 && r.remove.lower <= 0.125 && 0.125 * (1 - 1e-15) <= r.remove.upper &&
              r.remove.upper <= 0.125 * (1 + 1e-14),
          "KL: [%.17g, %.17g]", r.remove.lower, r.remove.upper);
}

/* dp_accounting's test_poisson_sampled_discrete_gaussian_matches_gaussian */
static void test_dp_accounting_rows(void **state)
{
    (void)state;
    static const double ord[] = {1.5, 2.5, 5, 50, 100};
    dpa_renyi_result r, g;
    dpa_error err;
    for (size_t k = 0; k < 5; k++) {
        char js[512];
        spec_json(js, sizeof js, 2.5, 1, 0.01, -1, 50);
        dpa_status st = renyi_json(js, ord[k], &r, &err);
        CHECK(st == DPA_OK, "%s at %g: %s", js, ord[k], err.message);
        if (st) continue;
        st = renyi_json("{\"repeat\":{\"count\":50,\"event\":{\"poisson\":{\"rate\":0.01,\"event\":"
                        "{\"gaussian\":{\"sigma\":2.5}}}}}}",
                        ord[k], &g, &err);
        CHECK(st == DPA_OK, "gaussian at %g: %s", ord[k], err.message);
        if (st) continue;
        /* the peer's value (the continuous Gaussian's, dpacct's g.upper) is an
         * upper bound for the discrete one: not below its certified lower
         * bound; and the two brackets overlap (the divergences differ by
         * about e^{-2 pi^2 sigma^2} ~ 1e-54 relative: Poisson summation, far
         * below either bracket's width) */
        CHECK(isfinite(r.remove.upper) && r.remove.lower <= g.remove.upper && g.remove.lower <= r.remove.upper,
              "order %g: discrete [%.17g, %.17g] vs the continuous [%.17g, %.17g]", ord[k], r.remove.lower,
              r.remove.upper, g.remove.lower, g.remove.upper);
        char what[640];
        snprintf(what, sizeof what, "%s at %g", js, ord[k]);
        check_one(&r.remove, ref_div(2.5, 1, 0.01, -1, ord[k], 0), ord[k], 50, what);
    }
}

/* truncated: remove at A >= 1 is +inf (mass at +inf), the other cases finite */
static void test_truncated(void **state)
{
    (void)state;
    dpa_renyi_result r;
    dpa_error err;
    const char *js = "{\"discrete_gaussian\":{\"sigma\":2.5,\"truncation\":4}}";
    CHECK(renyi_json(js, 2, &r, &err) == DPA_OK && r.remove.upper == INFINITY && r.add.upper == INFINITY,
          "plain truncated at 2: [%g, %g] %s", r.remove.lower, r.remove.upper, err.message);
    CHECK(renyi_json(js, 0.5, &r, &err) == DPA_OK && isfinite(r.remove.upper), "plain truncated at 0.5: %s",
          err.message);
    check_one(&r.remove, ref_div(2.5, 1, 1, 4, 0.5, 0), 0.5, 1, "plain truncated at 0.5");
    js = "{\"poisson\":{\"rate\":0.1,\"event\":{\"discrete_gaussian\":{\"sigma\":2.5,\"truncation\":4}}}}";
    CHECK(renyi_json(js, 3, &r, &err) == DPA_OK && r.remove.upper == INFINITY && isfinite(r.add.upper),
          "poisson truncated at 3: %s", err.message);
    check_one(&r.add, ref_div(2.5, 1, 0.1, 4, 3, 1), 3, 1, "poisson truncated at 3, add");
    /* a sum too long (80 sigma > 4e6 terms): subsampled, refused naming the
     * leaf; plain, the CKS20 bracket [0, A s^2/(2 sigma^2)] */
    err.message[0] = 0;
    CHECK(renyi_json("{\"poisson\":{\"rate\":0.3,\"event\":{\"discrete_gaussian\":{\"sigma\":1e5}}}}", 2, &r,
                     &err) == DPA_EUNSUPPORTED &&
              strstr(err.message, "discrete_gaussian") && strstr(err.message, "4e6"),
          "too long: %s", err.message);
    CHECK(renyi_json("{\"discrete_gaussian\":{\"sigma\":1e5}}", 2, &r, &err) == DPA_OK && r.remove.lower == 0 &&
              r.remove.upper >= 1e-10 && r.remove.upper <= 1e-10 * (1 + 1e-14),
          "plain, too long: [%g, %g] %s", r.remove.lower, r.remove.upper, err.message);
}

/* The rdp method's Poisson-subsampled discrete Gaussian term (rdp_eval.c,
 * the same sum's upper end): its curve holds the reference at each order
 * in both directions (and is within the sum's width of it), and its
 * epsilon equals the subsampled continuous Gaussian's up to that width */
static void test_rdp_method(void **state)
{
    (void)state;
    static const double ord[] = {1.5, 2, 3.5, 8, 32};
    const char *js = "{\"repeat\":{\"count\":50,\"event\":{\"poisson\":{\"rate\":0.05,\"event\":"
                     "{\"discrete_gaussian\":{\"sigma\":1.5,\"sensitivity\":2}}}}}}";
    dpa_error err;
    dpa_spec *sp = spec_of(js);
    dpa_leafset L;
    assert_int_equal(dpa_leaves_build(sp, &L, &err), DPA_OK);
    dpa_rdp *a = dpa_rdp_new(ord, 5, &err);
    assert_non_null(a);
    assert_int_equal(dpa_rdp_add_leafset(a, &L, &err), DPA_OK);
    for (int dir = 0; dir < 2; dir++) {
        double c[5];
        assert_int_equal(dpa_rdp_curve(a, dir, c, &err), DPA_OK);
        for (int k = 0; k < 5; k++) {
            long double t = 50 * ref_div(1.5, 2, 0.05, -1, ord[k], dir);
            double tol = 50 * REF_LOGE / (ord[k] - 1);
            CHECK(t - tol <= c[k] && c[k] <= t * (1 + WIDTH_REL) + 50 * WIDTH_LOGE / (ord[k] - 1),
                  "rdp curve %s at %g: %.17g vs reference %.17Lg", dir ? "add" : "remove", ord[k], c[k], t);
        }
    }
    dpa_rdp_free(a);
    dpa_leaves_free(&L);
    dpa_spec_free(sp);
    dpa_accountant *ad = test_accountant(js, DPA_METHOD_RDP);
    dpa_accountant *ag = test_accountant("{\"repeat\":{\"count\":50,\"event\":{\"poisson\":{\"rate\":0.05,"
                                         "\"event\":{\"gaussian\":{\"sigma\":0.75}}}}}}",
                                         DPA_METHOD_RDP);
    dpa_result rd, rg;
    assert_int_equal(dpa_accountant_epsilon(ad, 1e-6, &rd, &err), DPA_OK);
    assert_int_equal(dpa_accountant_epsilon(ag, 1e-6, &rg, &err), DPA_OK);
    CHECK(isfinite(rd.upper) && fabs(rd.upper - rg.upper) <= 1e-6 * rg.upper,
          "rdp epsilon: discrete %.17g, continuous %.17g", rd.upper, rg.upper);
    dpa_accountant_free(ad);
    dpa_accountant_free(ag);
}

/* log E of the truncated discrete Gaussian conditioned on [s - T, T] (both
 * laws), gamma = 1 + theta: the reference for the rdp method's term */
static long double ref_cond_log_e(double sigma, double s, double T, double gamma)
{
    long double v2 = 2.0L * sigma * sigma, m = -INFINITY, sum = 0, sum0 = 0;
    for (int pass = 0; pass < 2; pass++)
        for (long o = (long)(s - T); o <= (long)T; o++) {
            long double lb = -(long double)o * o / v2, l = lb + gamma * (2.0L * o * s - (long double)s * s) / v2;
            if (pass == 0) m = l > m ? l : m;
            else sum += expl(l - m), sum0 += expl(lb);
        }
    return m + logl(sum) - logl(sum0);
}

/* The rdp method with truncated discrete Gaussian steps (formerly delta 1:
 * mass at +inf): the mass kept apart as an extra delta (rdp_method.c), the
 * conditioned pair's curve against the reference sum, and the rdp upper
 * bound on delta(eps) at or above the pld method's certified lower bound
 * over generated (sigma, s, T, count, eps) */
static void test_rdp_truncated(void **state)
{
    (void)state;
    static const double ord[] = {1.5, 3, 10};
    dpa_error err;
    dpa_rdp *a = dpa_rdp_new(ord, 3, &err);
    assert_non_null(a);
    assert_int_equal(dpa_rdp_add_dg_conditioned(a, 2.5, 2, 6, 3, &err), DPA_OK);
    double c[3];
    assert_int_equal(dpa_rdp_curve(a, 0, c, &err), DPA_OK);
    for (int k = 0; k < 3; k++) {
        long double t = 3 * ref_cond_log_e(2.5, 2, 6, ord[k]) / (ord[k] - 1);
        double tol = 3 * REF_LOGE / (ord[k] - 1);
        CHECK(t - tol <= c[k] && c[k] <= t * (1 + WIDTH_REL) + 3 * WIDTH_LOGE / (ord[k] - 1),
              "conditioned curve at %g: %.17g vs %.17Lg", ord[k], c[k], t);
    }
    dpa_rdp_free(a);
    for (int i = 0; i < 12; i++) {
        double sigma = test_log_unif(0.7, 6), sens = 1 + floor(2 * test_unif());
        double T = ceil(sens / 2 + test_unif() * 5 * sigma), eps = test_log_unif(0.1, 4);
        int count = 1 + (int)(20 * test_unif());
        char js[512];
        spec_json(js, sizeof js, sigma, sens, 1, T, count);
        dpa_accountant *ar = test_accountant(js, DPA_METHOD_RDP), *ap = test_accountant(js, DPA_METHOD_PLD);
        dpa_result rr, rp;
        assert_int_equal(dpa_accountant_delta(ar, eps, &rr, &err), DPA_OK);
        assert_int_equal(dpa_accountant_delta(ap, eps, &rp, &err), DPA_OK);
        CHECK(rr.upper >= rp.lower && (rp.upper >= 0.5 || rr.upper < 1), "%s at eps %g: rdp %.17g, pld [%.17g, %.17g]",
              js, eps, rr.upper, rp.lower, rp.upper);
        dpa_accountant_free(ar);
        dpa_accountant_free(ap);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_generated, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cks20, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dp_accounting_rows, setup, teardown),
        cmocka_unit_test_setup_teardown(test_truncated, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rdp_method, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rdp_truncated, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

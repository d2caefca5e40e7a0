/* The ends of dpa_renyi's bracket for leaves whose pair is not attained or
 * that have no pair (include/dpacct/renyi.h; src/rdp/renyi_br.c,
 * src/rdp/renyi_real.c; docs/rdp.md, "The Rényi divergence of a
 * composition").
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Every check compares with an independent computation, so each can fail:
 *  - exponential_mechanism (and report_noisy_max with Gumbel noise): the KL
 *    of dp_accounting (0.123301561 at eps = 1, Cesar & Rogers 2021's
 *    bounded-range KL) lies in the bracket; the lower end agrees with a
 *    golden-section search written here, in long double, over the two-point
 *    members P_t (a different formula: log-sum of P^A Q^{1-A} directly),
 *    never above it by more than its own rounding (1e-15 relative) and
 *    within 1e-9 below it, over eps, orders in (0, 256], both directions,
 *    unsampled and Poisson-subsampled; the upper end is the envelope pair's
 *    (>= the family's largest divergence);
 *  - zcdp: upper = xi + rho max(A, 1) (times the count), lower 0, the note;
 *  - repeat_and_select over a Gaussian with geometric repetition (shape 1):
 *    the upper end against Papernot & Steinke 2022 Thm 2 minimised over the
 *    continuous order l, in closed form (as in dp_accounting's tests):
 *    never below it (1e-12), within 1.5e-2 above it (the rdp method
 *    minimises over l on its default order grid, step 0.25 near the
 *    optimum: up to 0.8% above the continuous minimum here); lower 0.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "dpacct/renyi.h"

static void renyi_ok(const char *json, double re, dpa_renyi_result *r)
{
    dpa_error err;
    dpa_spec *s = dpa_spec_from_json(json, &err);
    if (!s) fail_msg("spec %s: %s", json, err.message);
    dpa_status st = dpa_renyi(s, re, 0, r, &err);
    dpa_spec_free(s);
    if (st != DPA_OK) fail_msg("renyi %s at %g: %s", json, re, err.message);
}

/* ------------------------------------------------------------------ bounded range */

/* D_A (KL at A = 1) of the member t of the eps-BR class, Poisson rate q
 * (q = 1 unsampled), direction dir, from the masses directly */
static long double member_div(long double eps, long double t, long double q, int dir, long double A)
{
    long double p = (1 - expl(-t * eps)) / (1 - expl(-eps));
    long double a[2] = {p, 1 - p}, b[2] = {p * expl(-(1 - t) * eps), (1 - p) * expl(t * eps)};
    long double s = 0;
    for (int i = 0; i < 2; i++) {
        long double x = q * a[i] + (1 - q) * b[i], y = b[i]; /* remove: (x, y) */
        long double m1 = dir ? y : x, m2 = dir ? x : y;
        /* r - 1 = m1/m2 - 1 without cancellation: q expm1(w) (remove) or
         * -q expm1(w) / (1 + q expm1(w)) (add), w the member's loss */
        long double w = i == 0 ? (1 - t) * eps : -t * eps, c = q * expm1l(w), r1 = dir ? -c / (1 + c) : c;
        if (A == 1) s += m1 * log1pl(r1);
        else if (fabsl(A * r1) < 0.1L) /* E - 1 = sum m2 (r^A - 1 - A (r - 1)): sum m2 (r - 1) = 0 */
            s += m2 * (expm1l(A * log1pl(r1)) - A * r1);
        else
            s += expl(A * logl(m1) + (1 - A) * logl(m2)) - m2 * (1 + A * r1);
    }
    return A == 1 ? s : log1pl(s) / (A - 1);
}

static long double family_max(double eps, double q, int dir, double A)
{
    long double lo = 0, hi = 1, g = 0.61803398874989484820L;
    for (int it = 0; it < 200; it++) {
        long double m1 = hi - g * (hi - lo), m2 = lo + g * (hi - lo);
        if (member_div(eps, m1, q, dir, A) >= member_div(eps, m2, q, dir, A)) hi = m2;
        else lo = m1;
    }
    return member_div(eps, (lo + hi) / 2, q, dir, A);
}

static void test_bounded_range(void **state)
{
    (void)state;
    dpa_renyi_result r;
    char js[256];
    /* dp_accounting's KL (Cesar & Rogers 2021), 9 digits */
    const double kl1 = 0.123301561;
    renyi_ok("{\"exponential_mechanism\":{\"epsilon\":1}}", 1, &r);
    CHECK(r.remove.lower <= kl1 + 1e-9 && kl1 - 1e-9 <= r.remove.upper && r.remove.lower > kl1 - 1e-9,
          "KL eps=1: [%.17g, %.17g] vs %.9f", r.remove.lower, r.remove.upper, kl1);
    CHECK(r.remove.certified && !r.remove.tight && strstr(r.remove.note, "bounded-range"), "note: %s",
          r.remove.note);
    long double ref = family_max(1, 1, 0, 1);
    CHECK(fabsl(ref - kl1) <= 1e-9, "the test's golden section %.17Lg vs %.9f", ref, kl1);
    /* report_noisy_max with Gumbel noise is the exponential mechanism */
    dpa_renyi_result r2;
    renyi_ok("{\"report_noisy_max\":{\"epsilon\":1,\"noise\":\"gumbel\"}}", 1, &r2);
    CHECK(r2.remove.lower == r.remove.lower && r2.remove.upper == r.remove.upper, "rnm gumbel [%.17g, %.17g]",
          r2.remove.lower, r2.remove.upper);
    const double eps[] = {0.05, 0.3, 1, 2, 5, 12};
    const double ord[] = {0.25, 0.5, 0.9, 1, 1.001, 1.5, 2, 3.7, 8, 32, 256};
    const double rate[] = {1, 0.5, 0.01};
    int n = 0;
    for (size_t i = 0; i < sizeof eps / sizeof eps[0]; i++)
        for (size_t qi = 0; qi < sizeof rate / sizeof rate[0]; qi++) {
            if (rate[qi] == 1)
                snprintf(js, sizeof js, "{\"exponential_mechanism\":{\"epsilon\":%.17g}}", eps[i]);
            else
                snprintf(js, sizeof js,
                         "{\"poisson\":{\"rate\":%.17g,\"event\":{\"exponential_mechanism\":{\"epsilon\":%.17g}}}}",
                         rate[qi], eps[i]);
            for (size_t j = 0; j < sizeof ord / sizeof ord[0]; j++) {
                renyi_ok(js, ord[j], &r);
                for (int dir = 0; dir < 2; dir++) {
                    const dpa_renyi_value *v = dir ? &r.add : &r.remove;
                    long double m = family_max(eps[i], rate[qi], dir, ord[j]);
                    /* the reference's own rounding: long double sums and logs,
                     * and near A = 1 the division by A - 1 (1e-3) of a log E
                     * of relative accuracy ~1e-18: 1e-13 relative covers both */
                    CHECK(v->lower <= m * (1 + 1e-13L) && v->lower >= m * (1 - 1e-9L) && v->upper >= m * (1 - 1e-13L),
                          "%s order %g dir %d: [%.17g, %.17g] vs family max %.17Lg", js, ord[j], dir, v->lower,
                          v->upper, m);
                    n++;
                }
            }
        }
    CHECK(n == 396, "%d cases", n);
}

/* ------------------------------------------------------------------ bound-only leaves */

static void test_zcdp(void **state)
{
    (void)state;
    dpa_renyi_result r;
    renyi_ok("{\"zcdp\":{\"rho\":0.5}}", 2, &r);
    CHECK(r.remove.lower == 0 && r.remove.upper >= 1 && r.remove.upper <= 1 + 1e-15 && r.remove.re == r.remove.upper &&
              r.remove.certified && r.symmetric,
          "zcdp 0.5 at 2: [%.17g, %.17g]", r.remove.lower, r.remove.upper);
    CHECK(!strcmp(r.remove.note, "upper: the leaf's RDP bound; lower: 0, the leaf is a bound, not a pair"), "note: %s",
          r.remove.note);
    const double ord[] = {0.3, 1, 1.5, 7, 1e4};
    for (size_t j = 0; j < sizeof ord / sizeof ord[0]; j++) {
        renyi_ok("{\"repeat\":{\"count\":3,\"event\":{\"zcdp\":{\"rho\":0.25,\"xi\":0.1}}}}", ord[j], &r);
        double want = 3 * (0.1 + 0.25 * fmax(ord[j], 1));
        CHECK(r.remove.lower == 0 && r.remove.upper >= want && r.remove.upper <= want * (1 + 1e-14),
              "3 x zcdp(0.25, 0.1) at %g: [%.17g, %.17g] vs %.17g", ord[j], r.remove.lower, r.remove.upper, want);
    }
    /* with a Gaussian: its exact share adds; the note says the mix */
    renyi_ok("{\"compose\":[{\"gaussian\":{\"sigma\":1}},{\"zcdp\":{\"rho\":0.1}}]}", 2, &r);
    CHECK(r.remove.lower >= 1 - 1e-14 && r.remove.lower <= 1 && r.remove.upper >= 1.2 &&
              r.remove.upper <= 1.2 * (1 + 1e-14) && strstr(r.remove.note, "bound-only leaves"),
          "gaussian + zcdp: [%.17g, %.17g] %s", r.remove.lower, r.remove.upper, r.remove.note);
}

/* Papernot & Steinke 2022 Thm 2 for a Gaussian (rho = 1/(2 sigma^2)) with
 * geometric repetition (shape 1, gamma = 1/mean), minimised over l in
 * closed form (dp_accounting's rdp_privacy_accountant_test) */
static double ps_geometric(double rho, double mean, double A)
{
    double shape = 1, lg = log(1 / mean);
    if (A <= 1 + sqrt(log(mean) / rho))
        return 2 * sqrt(rho * log(mean)) + 2 * (1 + shape) * sqrt(-rho * lg) - shape * rho;
    return rho * (A - 1) + log(mean) / (A - 1) + 2 * (1 + shape) * sqrt(-rho * lg) - shape * rho;
}

static void test_repeat_and_select(void **state)
{
    (void)state;
    dpa_renyi_result r;
    char js[256];
    const double sig[] = {1, 3, 10}, mean[] = {2, 10, 1000}, ord[] = {1.5, 2, 5, 20, 100};
    for (size_t i = 0; i < 3; i++)
        for (size_t m = 0; m < 3; m++) {
            snprintf(js, sizeof js,
                     "{\"repeat_and_select\":{\"mean\":%g,\"shape\":1,\"event\":{\"gaussian\":{\"sigma\":%g}}}}", mean[m],
                     sig[i]);
            double rho = 1 / (2 * sig[i] * sig[i]);
            for (size_t j = 0; j < sizeof ord / sizeof ord[0]; j++) {
                renyi_ok(js, ord[j], &r);
                double want = ps_geometric(rho, mean[m], ord[j]);
                CHECK(r.remove.lower == 0 && r.remove.upper >= want * (1 - 1e-12) && r.remove.upper <= want * (1 + 1.5e-2) &&
                          r.add.upper == r.remove.upper && strstr(r.remove.note, "a bound, not a pair"),
                      "%s at %g: [%.17g, %.17g] vs P&S %.17g", js, ord[j], r.remove.lower, r.remove.upper, want);
            }
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_bounded_range, setup, teardown),
        cmocka_unit_test_setup_teardown(test_zcdp, setup, teardown),
        cmocka_unit_test_setup_teardown(test_repeat_and_select, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* The representations out (src/acct/represent.c, src/pld/export.c,
 * src/phi/phi_cf.c; docs/guarantees.md §3.17, docs/phi.md §9, docs/rdp.md §7):
 *  - dpa_accountant_pld: each exported measure's total mass is 1 within
 *    its stated allowance; the delta bracket recomputed here from the masses
 *    (the formula of accountant.h) encloses the Gaussian's closed-form delta
 *    (long double, independent of the library) and the accountant's own
 *    delta query on the same grid; both directions of a Poisson-subsampled
 *    Gaussian; the totals and brackets over leaf kinds (truncated atom lists,
 *    Laplace, approx, subsampled Laplace, a mixed composition, an envelope
 *    mechanism whose lower measure is not certified); refusals;
 *  - dpa_characteristic: the Gaussian's closed form phi(t) = exp(i t mu^2/2 -
 *    t^2 mu^2/2) (W ~ N(mu^2/2, mu^2), mu = sqrt(k)/sigma) within the stated
 *    certified error over a sweep of t, sigma and counts up to 1e6;
 *    randomized response and approx (phi(0) = 1 - delta) in closed form; the
 *    subsampled Gaussian (quadrature, not certified) against the transform
 *    of the exported PLD, sum_i m_i e^{i t z_i};
 *  - dpa_lt_profile: the Bromwich estimate of LT eq 37 within ESTIMATE_TOL of
 *    the Gaussian closed form, its stated error estimate below the tolerance;
 *    the bound (rdp conversion) never below the pld method's lower bound nor
 *    the closed form, for Gaussians and subsampled Gaussians; atoms-only
 *    specs have a bound and no estimate (with the reason); refusals.
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dpacct/accountant.h"
#include "dpacct/event.h"

#define U (0x1p-53)
/* The long-double references (erfcl, expl, cosl, sinl: a few ulp of long
 * double, 64-bit mantissa) are within 1e-17 relative of the truth, after a
 * cancellation of at most 100 in the Gaussian delta (eps <= 4 mu + mu^2/2
 * below): a bracket may miss them by this much relative without missing
 * the truth. */
#define REF_REL 1e-15
/* The estimate of LT eq 37 against the closed form: the Bromwich quadrature
 * is converged to ~1e-12 relative for these Gaussians (its own error
 * estimate is checked to stay below this too); 1e-9 relative + 1e-15
 * absolute leaves room for the e^eps amplification at eps = 4. */
#define ESTIMATE_TOL 1e-9
#define ESTIMATE_ABS 1e-15

static dpa_spec *spec_of(const char *json)
{
    dpa_error err;
    dpa_spec *s = dpa_spec_from_json(json, &err);
    if (!s) fprintf(stderr, "%s\n", err.message);
    assert_non_null(s);
    return s;
}

static dpa_accountant *acct(const dpa_spec *s, dpa_method m)
{
    dpa_error err;
    dpa_options o;
    dpa_options_init(&o);
    o.method = m;
    o.threads = 1;
    dpa_accountant *a = dpa_accountant_new(s, &o, &err);
    if (!a) fprintf(stderr, "%s\n", err.message);
    assert_non_null(a);
    return a;
}

/* delta(eps) of mu-GDP (GDP Cor 2.13), long double */
static long double gauss_delta(long double mu, long double eps)
{
    long double a = -eps / mu + mu / 2, b = -eps / mu - mu / 2;
    return 0.5L * erfcl(-a / sqrtl(2)) - expl(eps) * 0.5L * erfcl(-b / sqrtl(2));
}

/* The bracket of delta(eps) from an exported measure (accountant.h): upper
 * for k = 0, lower for k = 1. */
static double delta_from(const dpa_pld_measure *m, int k, double eps)
{
    double s = 0;
    for (size_t i = 0; i < m->n; i++) {
        double z = (double)(m->offset + (long long)i) * m->step;
        if (z > eps) s += m->mass[i] * -expm1(eps - z);
    }
    s += m->inf;
    double f = 2 * (double)m->n * U + m->rel_err;
    return k == 0 ? s * (1 + f) + m->tail_above + m->roundoff : s * (1 - f) - m->tail_outside - m->roundoff;
}

/* sum + inf = 1 within tail_outside + n u + rel_err (the masses are
 * non-negative FFT outputs of probability measures) */
static void check_total(const dpa_pld_measure *m)
{
    double s = m->inf;
    assert_true(m->n > 0 && m->step > 0);
    for (size_t i = 0; i < m->n; i++) {
        assert_true(m->mass[i] >= 0);
        s += m->mass[i];
    }
    double allow = m->tail_outside + (4 * (double)m->n * U + m->rel_err) + m->roundoff;
    if (!(fabs(s - 1) <= allow)) fprintf(stderr, "total %.17g allowance %g\n", s, allow);
    assert_true(fabs(s - 1) <= allow);
}

static void test_pld_gaussian(void **st)
{
    (void)st;
    static const double sig[] = {0.8, 3.0, 30.0};
    static const int cnt[] = {1, 10, 1000};
    for (int c = 0; c < 3; c++) {
        char js[160];
        snprintf(js, sizeof js, "{\"repeat\": {\"count\": %d, \"event\": {\"gaussian\": {\"sigma\": %g}}}}", cnt[c], sig[c]);
        dpa_spec *s = spec_of(js);
        dpa_accountant *a = acct(s, DPA_METHOD_PLD);
        dpa_error err;
        dpa_result r;
        assert_int_equal(dpa_accountant_delta(a, 0.5, &r, &err), DPA_OK);
        dpa_pld_export x;
        assert_int_equal(dpa_accountant_pld(a, DPA_DIR_REMOVE, &x, &err), DPA_OK);
        assert_int_equal(x.direction, DPA_DIR_BOTH);
        assert_true(x.lower_certified);
        check_total(&x.upper);
        check_total(&x.lower);
        long double mu = sqrtl((long double)cnt[c]) / sig[c];
        for (double eps = 0; eps <= 4 * (double)mu + (double)(mu * mu) / 2; eps += 0.25 * (double)mu) {
            double up = delta_from(&x.upper, 0, eps), lo = delta_from(&x.lower, 1, eps);
            double ref = (double)gauss_delta(mu, eps);
            assert_true(lo <= ref * (1 + REF_REL) && ref * (1 - REF_REL) <= up);
            /* the accountant on the same grid (the export keeps it): the
             * same bracket up to the order of the sums */
            assert_int_equal(dpa_accountant_delta(a, eps, &r, &err), DPA_OK);
            assert_true(fabs(r.upper - up) <= 1e-12 * up + 1e-300 || r.upper < up);
            assert_true(lo <= r.upper && r.lower <= up);
        }
        dpa_accountant_free(a);
        dpa_spec_free(s);
    }
}

static void test_pld_subsampled(void **st)
{
    (void)st;
    dpa_spec *s = spec_of("{\"repeat\": {\"count\": 100, \"event\": {\"poisson\": {\"rate\": 0.05, \"event\": "
                          "{\"gaussian\": {\"sigma\": 1}}}}}}");
    dpa_accountant *a = acct(s, DPA_METHOD_PLD);
    dpa_error err;
    dpa_pld_export x[2];
    /* before any query: the export composes its own grid */
    assert_int_equal(dpa_accountant_pld(a, DPA_DIR_REMOVE, &x[0], &err), DPA_OK);
    assert_int_equal(x[0].direction, DPA_DIR_REMOVE);
    check_total(&x[0].upper);
    check_total(&x[0].lower);
    double rm = delta_from(&x[0].upper, 0, 1.0), rl = delta_from(&x[0].lower, 1, 1.0);
    assert_int_equal(dpa_accountant_pld(a, DPA_DIR_ADD, &x[1], &err), DPA_OK);
    assert_int_equal(x[1].direction, DPA_DIR_ADD);
    check_total(&x[1].upper);
    check_total(&x[1].lower);
    for (double eps = 0; eps <= 3; eps += 0.5) {
        dpa_result r;
        assert_int_equal(dpa_accountant_delta(a, eps, &r, &err), DPA_OK);
        assert_int_equal(dpa_accountant_pld(a, DPA_DIR_REMOVE, &x[0], &err), DPA_OK);
        assert_int_equal(dpa_accountant_pld(a, DPA_DIR_ADD, &x[1], &err), DPA_OK);
        for (int d = 0; d < 2; d++) {
            double up = delta_from(&x[d].upper, 0, eps), lo = delta_from(&x[d].lower, 1, eps);
            double qu = d ? r.upper_add : r.upper_remove;
            /* brackets of one true value intersect the accountant's */
            assert_true(lo <= qu && up >= (d ? r.lower_add : r.lower_remove));
            assert_true(lo <= up);
        }
        if (eps == 1.0) assert_true(rl <= r.upper && r.lower <= rm);
    }
    dpa_accountant_free(a);
    dpa_spec_free(s);
}

/* Totals and brackets over leaf kinds (atoms, truncated atom lists,
 * Laplace, Poisson subsampling, mixed compositions, an upper-envelope
 * mechanism): each measure's total within its allowance, and the bracket
 * from the masses meets the accountant's own at several eps. */
static void test_pld_kinds(void **st)
{
    (void)st;
    static const char *const specs[] = {
        "{\"discrete_gaussian\": {\"sigma\": 2}}",
        "{\"repeat\": {\"count\": 5, \"event\": {\"laplace\": {\"scale\": 1}}}}",
        "{\"exponential_mechanism\": {\"epsilon\": 1}}",
        "{\"repeat\": {\"count\": 3, \"event\": {\"approx\": {\"epsilon\": 1, \"delta\": 0.001}}}}",
        "{\"repeat\": {\"count\": 7, \"event\": {\"poisson\": {\"rate\": 0.3, \"event\": {\"laplace\": {\"scale\": 2}}}}}}",
        "{\"compose\": [{\"gaussian\": {\"sigma\": 2}}, {\"randomized_response\": {\"epsilon\": 0.5}}]}",
    };
    for (size_t j = 0; j < sizeof specs / sizeof *specs; j++) {
        dpa_spec *s = spec_of(specs[j]);
        dpa_accountant *a = acct(s, DPA_METHOD_PLD);
        dpa_error err;
        for (int d = 1; d <= 2; d++) {
            dpa_pld_export x;
            assert_int_equal(dpa_accountant_pld(a, (dpa_direction)d, &x, &err), DPA_OK);
            check_total(&x.upper);
            check_total(&x.lower);
            assert_int_equal(x.lower_certified, j != 2); /* the exponential mechanism's envelope */
            for (double eps = -0.5; eps <= 3; eps += 0.5) {
                dpa_result r;
                assert_int_equal(dpa_accountant_delta(a, eps, &r, &err), DPA_OK);
                assert_int_equal(dpa_accountant_pld(a, (dpa_direction)d, &x, &err), DPA_OK);
                double up = delta_from(&x.upper, 0, eps), lo = delta_from(&x.lower, 1, eps);
                double qu = x.direction == DPA_DIR_BOTH ? r.upper : d == 1 ? r.upper_remove : r.upper_add;
                double ql = x.direction == DPA_DIR_BOTH ? r.lower : d == 1 ? r.lower_remove : r.lower_add;
                assert_true(lo <= up && lo <= qu && up >= ql);
            }
        }
        dpa_accountant_free(a);
        dpa_spec_free(s);
    }
}

static void test_pld_refusals(void **st)
{
    (void)st;
    dpa_spec *s = spec_of("{\"gaussian\": {\"sigma\": 1}}");
    dpa_accountant *a = acct(s, DPA_METHOD_EXACT);
    dpa_error err;
    dpa_pld_export x;
    assert_int_equal(dpa_accountant_pld(a, DPA_DIR_REMOVE, &x, &err), DPA_EUNSUPPORTED);
    assert_non_null(strstr(err.message, "pld"));
    assert_int_equal(dpa_accountant_pld(NULL, DPA_DIR_REMOVE, &x, &err), DPA_EINVAL);
    assert_int_equal(dpa_accountant_pld(a, DPA_DIR_REMOVE, NULL, &err), DPA_EINVAL);
    dpa_accountant_free(a);
    a = acct(s, DPA_METHOD_PLD);
    assert_int_equal(dpa_accountant_pld(a, (dpa_direction)7, &x, &err), DPA_EINVAL);
    assert_non_null(strstr(err.message, "direction"));
    dpa_accountant_free(a);
    dpa_spec_free(s);
    /* no step: the unit mass at loss 0 */
    s = spec_of("{\"no_op\": {}}");
    a = acct(s, DPA_METHOD_PLD);
    assert_int_equal(dpa_accountant_pld(a, DPA_DIR_ADD, &x, &err), DPA_OK);
    assert_true(x.direction == DPA_DIR_BOTH && x.upper.n == 1 && x.upper.offset == 0 && x.upper.mass[0] == 1 &&
                x.lower.mass[0] == 1 && x.upper.inf == 0);
    dpa_accountant_free(a);
    dpa_spec_free(s);
}

/* |phi - ref| <= error (+ the reference's own error) */
static void expect_phi(double re, double im, double e, long double rr, long double ri)
{
    long double d = hypotl(re - rr, im - ri), ref = hypotl(rr, ri);
    if (!(d <= e + 1e-17L * ref + 1e-300L))
        fprintf(stderr, "phi %.17g%+.17gi ref %.17Lg%+.17Lgi diff %Lg error %g\n", re, im, rr, ri, d, e);
    assert_true(d <= e + 1e-17L * ref + 1e-300L);
}

static void test_phi_gaussian(void **st)
{
    (void)st;
    static const double sig[] = {0.5, 1.0, 7.0, 1000.0};
    static const double cnt[] = {1, 3, 100, 1e6};
    double t[41], re[41], im[41], e[41];
    for (int j = 0; j < 41; j++) t[j] = -10 + 0.5 * j;
    for (int c = 0; c < 4; c++) {
        char js[160];
        snprintf(js, sizeof js, "{\"repeat\": {\"count\": %.17g, \"event\": {\"gaussian\": {\"sigma\": %.17g}}}}", cnt[c], sig[c]);
        dpa_spec *s = spec_of(js);
        long double mu2 = (long double)cnt[c] / ((long double)sig[c] * sig[c]);
        for (int d = 1; d <= 2; d++) {
            dpa_error err;
            int cert = -1;
            assert_int_equal(dpa_characteristic(s, (dpa_direction)d, t, 41, re, im, e, &cert, &err), DPA_OK);
            assert_int_equal(cert, 1);
            for (int j = 0; j < 41; j++) {
                long double tt = t[j], m = expl(-tt * tt * mu2 / 2), ph = tt * mu2 / 2;
                expect_phi(re[j], im[j], e[j], m * cosl(ph), m * sinl(ph));
                if (!(e[j] <= 1e-11)) fprintf(stderr, "c %d t %g error %g\n", c, t[j], e[j]);
                assert_true(e[j] <= 1e-11); /* the bound is useful, not only true */
            }
        }
        dpa_spec_free(s);
    }
}

static void test_phi_atoms(void **st)
{
    (void)st;
    double t[7] = {-3, -1, 0, 0.25, 1, 2.5, 40}, re[7], im[7], e[7];
    int cert;
    dpa_error err;
    /* randomized response eps = 1: W = +-1 with P-masses p, 1 - p, p = e/(1+e) */
    dpa_spec *s = spec_of("{\"repeat\": {\"count\": 3, \"event\": {\"randomized_response\": {\"epsilon\": 1}}}}");
    assert_int_equal(dpa_characteristic(s, DPA_DIR_REMOVE, t, 7, re, im, e, &cert, &err), DPA_OK);
    assert_int_equal(cert, 1);
    long double p = expl(1) / (1 + expl(1));
    for (int j = 0; j < 7; j++) {
        long double complex one = p * cexpl(I * (long double)t[j]) + (1 - p) * cexpl(-I * (long double)t[j]);
        long double complex r = one * one * one;
        expect_phi(re[j], im[j], e[j], creall(r), cimagl(r));
    }
    dpa_spec_free(s);
    /* approx(0.5, 0.01): the finite part has mass 1 - delta; with W = +-eps */
    s = spec_of("{\"approx\": {\"epsilon\": 0.5, \"delta\": 0.01}}");
    assert_int_equal(dpa_characteristic(s, DPA_DIR_ADD, t, 7, re, im, e, &cert, &err), DPA_OK);
    assert_true(fabs(re[2] - 0.99) <= e[2] + 1e-16 && fabs(im[2]) <= e[2]);
    dpa_spec_free(s);
}

static void test_phi_subsampled(void **st)
{
    (void)st;
    /* the quadrature's phi against the exported PLD's transform: the
     * grid moves each loss by at most one step h, so
     * |phi - sum m_i e^{i t z_i}| <= |t| h + (mass differences, <= 1e-9) */
    dpa_spec *s = spec_of("{\"repeat\": {\"count\": 20, \"event\": {\"poisson\": {\"rate\": 0.1, \"event\": "
                          "{\"gaussian\": {\"sigma\": 0.9}}}}}}");
    dpa_accountant *a = acct(s, DPA_METHOD_PLD);
    dpa_error err;
    double t[9] = {0, 0.5, 1, 2, 3, 5, 8, -1, -4}, re[9], im[9], e[9];
    for (int d = 0; d < 2; d++) {
        dpa_pld_export x;
        dpa_direction dir = d ? DPA_DIR_ADD : DPA_DIR_REMOVE;
        assert_int_equal(dpa_accountant_pld(a, dir, &x, &err), DPA_OK);
        int cert = -1;
        assert_int_equal(dpa_characteristic(s, dir, t, 9, re, im, e, &cert, &err), DPA_OK);
        assert_int_equal(cert, 0); /* quadrature: an estimate */
        for (int j = 0; j < 9; j++) {
            for (int k = 0; k < 2; k++) {
                const dpa_pld_measure *m = k ? &x.lower : &x.upper;
                double complex f = 0;
                for (size_t i = 0; i < m->n; i++)
                    f += m->mass[i] * cexp(I * t[j] * (double)(m->offset + (long long)i) * m->step);
                double tol = fabs(t[j]) * m->step + 1e-9 + m->tail_outside;
                assert_true(cabs(f - (re[j] + I * im[j])) <= tol);
            }
            assert_true(e[j] < 1e-9);
        }
    }
    dpa_accountant_free(a);
    dpa_spec_free(s);
}

static void test_phi_refusals(void **st)
{
    (void)st;
    double t[2] = {0, NAN}, re[2], im[2], e[2];
    int cert;
    dpa_error err;
    dpa_spec *s = spec_of("{\"gaussian\": {\"sigma\": 1}}");
    assert_int_equal(dpa_characteristic(s, DPA_DIR_REMOVE, t, 2, re, im, e, &cert, &err), DPA_EINVAL);
    assert_non_null(strstr(err.message, "t[1]"));
    assert_int_equal(dpa_characteristic(s, DPA_DIR_REMOVE, t, 0, re, im, e, &cert, &err), DPA_EINVAL);
    assert_int_equal(dpa_characteristic(NULL, DPA_DIR_REMOVE, t, 1, re, im, e, &cert, &err), DPA_EINVAL);
    dpa_spec_free(s);
    s = spec_of("{\"zcdp\": {\"rho\": 0.5}}");
    assert_int_equal(dpa_characteristic(s, DPA_DIR_REMOVE, t, 1, re, im, e, &cert, &err), DPA_EUNSUPPORTED);
    assert_non_null(strstr(err.message, "rdp"));
    dpa_spec_free(s);
}

static void test_lt_gaussian(void **st)
{
    (void)st;
    static const double sig[] = {0.7, 2.0, 20.0};
    static const int cnt[] = {1, 5, 200};
    double eps[17];
    dpa_lt_point p[17];
    for (int c = 0; c < 3; c++) {
        char js[160];
        snprintf(js, sizeof js, "{\"repeat\": {\"count\": %d, \"event\": {\"gaussian\": {\"sigma\": %g}}}}", cnt[c], sig[c]);
        dpa_spec *s = spec_of(js);
        long double mu = sqrtl((long double)cnt[c]) / sig[c];
        for (int i = 0; i < 17; i++) eps[i] = -1 + 0.25 * i * (double)mu * 1.3;
        dpa_lt_info info;
        dpa_error err;
        assert_int_equal(dpa_lt_profile(s, NULL, eps, 17, p, &info, &err), DPA_OK);
        assert_true(info.has_estimate && info.has_bound);
        dpa_accountant *a = acct(s, DPA_METHOD_PLD);
        for (int i = 0; i < 17; i++) {
            double ref = (double)gauss_delta(mu, eps[i]);
            double tol = ESTIMATE_TOL * ref + ESTIMATE_ABS;
            if (!(fabs(p[i].estimate - ref) <= tol))
                fprintf(stderr, "eps %g estimate %.17g ref %.17g\n", eps[i], p[i].estimate, ref);
            assert_true(fabs(p[i].estimate - ref) <= tol);
            assert_true(p[i].error_estimate <= tol);
            assert_true(p[i].estimate_remove == p[i].estimate_add);
            dpa_result r;
            assert_int_equal(dpa_accountant_delta(a, eps[i], &r, &err), DPA_OK);
            assert_true(p[i].bound >= r.lower && p[i].bound >= ref * (1 - REF_REL));
        }
        dpa_accountant_free(a);
        dpa_spec_free(s);
    }
}

static void test_lt_subsampled_and_atoms(void **st)
{
    (void)st;
    double eps[6] = {0, 0.5, 1, 2, 3, 5};
    dpa_lt_point p[6];
    dpa_lt_info info;
    dpa_error err;
    dpa_spec *s = spec_of("{\"repeat\": {\"count\": 50, \"event\": {\"poisson\": {\"rate\": 0.05, \"event\": "
                          "{\"gaussian\": {\"sigma\": 0.8}}}}}}");
    assert_int_equal(dpa_lt_profile(s, NULL, eps, 6, p, &info, &err), DPA_OK);
    assert_true(info.has_estimate && info.has_bound);
    dpa_accountant *a = acct(s, DPA_METHOD_PLD);
    for (int i = 0; i < 6; i++) {
        dpa_result r;
        assert_int_equal(dpa_accountant_delta(a, eps[i], &r, &err), DPA_OK);
        /* the bound is certified: never below pld's lower bound */
        assert_true(p[i].bound >= r.lower);
        /* the estimate is the larger direction, and agrees with pld's
         * bracket to its accuracy target */
        assert_true(p[i].estimate == fmax(p[i].estimate_remove, p[i].estimate_add));
        assert_true(p[i].estimate >= r.lower - 1e-4 * r.upper - 1e-12 && p[i].estimate <= r.upper + 1e-4 * r.upper + 1e-12);
    }
    dpa_accountant_free(a);
    dpa_spec_free(s);
    /* atoms only: no estimate (the reason), the bound */
    s = spec_of("{\"repeat\": {\"count\": 4, \"event\": {\"randomized_response\": {\"epsilon\": 1}}}}");
    assert_int_equal(dpa_lt_profile(s, NULL, eps, 6, p, &info, &err), DPA_OK);
    assert_true(!info.has_estimate && info.has_bound);
    assert_non_null(strstr(info.estimate_note, "LT eq 37"));
    for (int i = 0; i < 6; i++) assert_true(isnan(p[i].estimate) && p[i].bound <= 1);
    dpa_spec_free(s);
    /* bad eps, n = 0 */
    double bad[2] = {1, INFINITY};
    s = spec_of("{\"gaussian\": {\"sigma\": 1}}");
    assert_int_equal(dpa_lt_profile(s, NULL, bad, 2, p, &info, &err), DPA_EINVAL);
    assert_non_null(strstr(err.message, "eps[1]"));
    assert_int_equal(dpa_lt_profile(s, NULL, bad, 0, p, &info, &err), DPA_EINVAL);
    dpa_spec_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pld_gaussian),   cmocka_unit_test(test_pld_subsampled),
        cmocka_unit_test(test_pld_kinds),      cmocka_unit_test(test_pld_refusals),
        cmocka_unit_test(test_phi_gaussian),
        cmocka_unit_test(test_phi_atoms),      cmocka_unit_test(test_phi_subsampled),
        cmocka_unit_test(test_phi_refusals),   cmocka_unit_test(test_lt_gaussian),
        cmocka_unit_test(test_lt_subsampled_and_atoms),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

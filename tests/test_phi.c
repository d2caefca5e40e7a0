/* The characteristic-function (phi) accountant, src/phi/.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Checks:
 *   - log phi per leaf (closed forms and the numerical integration of the
 *     subsampled kinds) against GSL integrals of e^{zW(o)} over the
 *     mechanism's *output* o (a different parametrization from the library's,
 *     which integrates over the base loss), at z = it (phi), it - 1 (phi')
 *     and 1/2 + it (the Bromwich line), both directions;
 *   - phi equals the transform of the profile: M(z) = z (z + 1) int e^{zx}
 *     delta(x) dx (LT Thm 3.3) with delta from dpa_pair_log_delta;
 *   - Gaussian compositions against the exact closed form (src/exact/exact.h)
 *     on 320 generated cases (delta and eps queries);
 *   - subsampled Gaussians (k >= 10) and Gaussian + randomized response
 *     mixtures against the PLD accountant on 320 generated cases: brackets
 *     must intersect;
 *   - the two inversions (Gil-Pelaez, Bromwich) against each other;
 *   - the shared evaluations (paired tilts, the add direction as the
 *     remove direction's mirror) against the plain computations, and the
 *     eps search's ends against delta queries;
 *   - CF Experiments 1-3 and the other phi-relevant values of
 *     high-precision reference values bracketed;
 *   - atom-only specs exact against the exact accountant and the reference
 *     values (LT Thm 4.6);
 *   - refusals name a method that can evaluate the spec;
 *   - a timing hook for the DP-SGD case (printed, never asserted).
 * Every check compares against an independent computation, so each can fail. */
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
#include <time.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_integration.h>
#include "dpacct/accountant.h"
#include "dpacct/event.h"
#include "exact/exact.h"
#include "model/leaves.h"
#include "mech/pair.h"
#include "phi/phi.h"

#include "check.h"

/* C11's CMPLX is missing from some toolchains (clang with older glibc) */
#ifndef CMPLX
#define CMPLX(x, y) __builtin_complex((double)(x), (double)(y))
#endif

/* ------------------------------------------------------------ helpers */


static dpa_phi *phi_from_json(const char *json, dpa_phi_inversion inv)
{
    dpa_error err;
    dpa_spec *s = dpa_spec_from_json(json, &err);
    if (!s) fail_msg("spec %s: %s", json, err.message);
    dpa_leafset L;
    if (dpa_leaves_build(s, &L, &err)) fail_msg("leaves %s: %s", json, err.message);
    dpa_spec_free(s);
    dpa_phi_options o;
    dpa_phi_options_init(&o);
    o.inversion = inv;
    dpa_phi *ph = dpa_phi_new(&o, &err);
    assert_non_null(ph);
    if (dpa_phi_add_leafset(ph, &L, &err)) fail_msg("phi add %s: %s", json, err.message);
    dpa_leaves_free(&L);
    return ph;
}

static int intersect(double lo1, double up1, double lo2, double up2) { return lo1 <= up2 && lo2 <= up1; }

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* ------------------------------------------------------------ output-space integrals */

/* A law over the mechanism's output o: density dA(o) (or point masses via
 * constant W on intervals) and the loss W(o).  kind: 0 Gaussian pair
 * N(mu, 1) vs N(0, 1); 1 Laplace Lap(0, b) vs Lap(s, b); each Poisson-
 * subsampled at rate q (q = 1: none), direction dir. */
typedef struct olaw {
    int kind, dir;
    double mu, b, s, q;
    double complex z;
    int part; /* 0 real, 1 imaginary */
} olaw;

static double lap_logdens(double o, double c, double b) { return -fabs(o - c) / b - log(2 * b); }

/* log dA_base/do, log dB_base/do */
static void base_logd(const olaw *L, double o, double *la, double *lb)
{
    if (L->kind == 0) {
        *la = -0.5 * (o - L->mu) * (o - L->mu) - 0.5 * log(2 * M_PI);
        *lb = -0.5 * o * o - 0.5 * log(2 * M_PI);
    } else {
        *la = lap_logdens(o, 0, L->b);
        *lb = lap_logdens(o, L->s, L->b);
    }
}

static double olaw_f(double o, void *ctx)
{
    const olaw *L = ctx;
    double la, lb;
    base_logd(L, o, &la, &lb);
    /* remove: A_q = q A + (1-q) B, B_q = B; add: the reversal (B_q, A_q) */
    double u = log(L->q) + la, v0 = log1p(-L->q) + lb, hi = fmax(u, v0);
    double lAq = L->q == 1 ? la : hi + log(exp(u - hi) + exp(v0 - hi));
    double W = lAq - lb, lmeas = L->dir ? lb : lAq;
    if (L->dir) W = -W;
    double complex v = cexp(L->z * W + lmeas);
    return L->part ? cimag(v) : creal(v);
}

/* int over o of e^{zW} dA (GSL, to 1e-13 relative) */
static double complex olaw_mgf(olaw L)
{
    gsl_integration_workspace *ws = gsl_integration_workspace_alloc(2000);
    gsl_function F = {olaw_f, &L};
    double res[2];
    for (int part = 0; part < 2; part++) {
        L.part = part;
        double r, e, total = 0;
        if (L.kind == 0) {
            double pts[2] = {-40, 40 + L.mu};
            gsl_integration_qagil(&F, pts[0], 0, 1e-13, 2000, ws, &r, &e);
            total += r;
            gsl_integration_qags(&F, pts[0], pts[1], 0, 1e-13, 2000, ws, &r, &e);
            total += r;
            gsl_integration_qagiu(&F, pts[1], 0, 1e-13, 2000, ws, &r, &e);
            total += r;
        } else {
            gsl_integration_qagil(&F, 0, 0, 1e-13, 2000, ws, &r, &e);
            total += r;
            gsl_integration_qags(&F, 0, L.s, 0, 1e-13, 2000, ws, &r, &e);
            total += r;
            gsl_integration_qagiu(&F, L.s, 0, 1e-13, 2000, ws, &r, &e);
            total += r;
        }
        res[part] = total;
    }
    gsl_integration_workspace_free(ws);
    return CMPLX(res[0], res[1]);
}

static dpa_pair *olaw_pair(const olaw *L)
{
    dpa_error err;
    dpa_pair *p = L->kind == 0 ? dpa_pair_gaussian(L->mu, &err) : dpa_pair_laplace(L->b, L->s, &err);
    assert_non_null(p);
    if (L->q < 1) p = dpa_pair_poisson(p, L->q, &err);
    assert_non_null(p);
    return p;
}

static void test_logphi_vs_density(void **state)
{
    (void)state;
    gsl_error_handler_t *old = gsl_set_error_handler_off();
    const olaw laws[] = {
        {0, 0, 0.3, 0, 0, 1, 0, 0}, {0, 0, 1.0, 0, 0, 1, 0, 0}, {0, 0, 2.5, 0, 0, 1, 0, 0},
        {1, 0, 0, 1.0, 1.0, 1, 0, 0}, {1, 0, 0, 0.5, 2.0, 1, 0, 0},
        {0, 0, 1.0, 0, 0, 0.1, 0, 0}, {0, 1, 1.0, 0, 0, 0.1, 0, 0},
        {0, 0, 1 / 1.1, 0, 0, 256.0 / 60000, 0, 0}, {0, 1, 1 / 1.1, 0, 0, 256.0 / 60000, 0, 0},
        {0, 0, 2.0, 0, 0, 0.5, 0, 0}, {0, 1, 2.0, 0, 0, 0.5, 0, 0},
        {1, 0, 0, 1.0, 1.0, 0.2, 0, 0}, {1, 1, 0, 1.0, 1.0, 0.2, 0, 0},
    };
    const double ts[] = {0, 0.1, 0.7, 2, 5};
    const double rs[] = {0, -1, 0.5};
    int n = 0;
    double worst = 0;
    for (size_t i = 0; i < sizeof laws / sizeof *laws; i++) {
        dpa_pair *p = olaw_pair(&laws[i]);
        dpa_phi_leaf l;
        dpa_error err;
        assert_int_equal(dpa_phi_leaf_init(&l, p, laws[i].dir, 1, &err), DPA_OK);
        for (size_t a = 0; a < 3; a++)
            for (size_t b = 0; b < 5; b++) {
                olaw L = laws[i];
                L.z = CMPLX(rs[a], ts[b]);
                double complex ref = olaw_mgf(L), got;
                dpa_status st = dpa_phi_leaf_log_mgf(&l, rs[a], ts[b], &got, &err);
                CHECK(st == DPA_OK, "law %zu: %s", i, err.message);
                double complex v = cexp(got);
                /* GSL's 1e-13 request (relative to the integral of |e^{zW}|,
                 * which is at least 1e-2 here) plus the library's ~1e-15 */
                double e = cabs(v - ref) / (cabs(ref) + 1e-4);
                worst = fmax(worst, e);
                CHECK(e < 1e-10, "law %zu (kind %d dir %d q %g) z = %g%+gi: M %.15g%+.15gi vs integral %.15g%+.15gi",
                      i, laws[i].kind, laws[i].dir, laws[i].q, rs[a], ts[b], creal(v), cimag(v), creal(ref),
                      cimag(ref));
                n++;
            }
        /* the closed forms against the library's own quadrature engine (q = 1) */
        if (laws[i].q == 1) {
            dpa_phi_leaf lq = l;
            lq.cont = laws[i].kind == 0 ? DPA_PHI_CONT_QUAD_GAUSS : DPA_PHI_CONT_QUAD_LAPLACE;
            lq.q = 1;
            lq.sign = 1;
            for (size_t b = 0; b < 5; b++) {
                double complex g1, g2;
                dpa_phi_leaf_log_mgf(&l, 0, ts[b], &g1, &err);
                CHECK(dpa_phi_leaf_log_mgf(&lq, 0, ts[b], &g2, &err) == DPA_OK, "quad: %s", err.message);
                CHECK(cabs(cexp(g1) - cexp(g2)) < 1e-13, "law %zu t %g: closed %.17g%+.17gi quad %.17g%+.17gi", i,
                      ts[b], creal(cexp(g1)), cimag(cexp(g1)), creal(cexp(g2)), cimag(cexp(g2)));
            }
        }
        dpa_phi_leaf_clear(&l);
        dpa_pair_free(p);
    }
    gsl_set_error_handler(old);
    print_message("log phi vs output-space integrals: %d comparisons, worst relative error %.2e\n", n, worst);
}

/* ------------------------------------------------------------ phi = transform of the profile */

typedef struct prof { const dpa_pair *p; double lam, t; int part; } prof;

static double prof_f(double x, void *ctx)
{
    const prof *P = ctx;
    double ld = dpa_pair_log_delta(P->p, x);
    double complex v = cexp(CMPLX(P->lam, P->t) * x + ld);
    return P->part ? cimag(v) : creal(v);
}

static void test_phi_is_profile_transform(void **state)
{
    (void)state;
    gsl_error_handler_t *old = gsl_set_error_handler_off();
    dpa_error err;
    dpa_pair *pairs[5];
    const char *names[5] = {"gaussian mu 1", "laplace b 1", "poisson 0.1 gaussian", "poisson 0.1 gaussian (add)",
                            "randomized response eps 1"};
    pairs[0] = dpa_pair_gaussian(1.0, &err);
    pairs[1] = dpa_pair_laplace(1.0, 1.0, &err);
    pairs[2] = dpa_pair_poisson(dpa_pair_gaussian(1.0, &err), 0.1, &err);
    pairs[3] = dpa_pair_reverse(dpa_pair_poisson(dpa_pair_gaussian(1.0, &err), 0.1, &err), &err);
    pairs[4] = dpa_pair_rr(1.0, 0.0, &err);
    gsl_integration_workspace *ws = gsl_integration_workspace_alloc(4000);
    const double ts[] = {0, 1, 3};
    for (int i = 0; i < 5; i++) {
        assert_non_null(pairs[i]);
        dpa_phi_leaf l;
        assert_int_equal(dpa_phi_leaf_init(&l, pairs[i], 0, 1, &err), DPA_OK);
        for (int j = 0; j < 3; j++) {
            prof P = {pairs[i], 0.5, ts[j], 0};
            gsl_function F = {prof_f, &P};
            double re, im, e;
            gsl_integration_qagi(&F, 0, 1e-12, 4000, ws, &re, &e);
            P.part = 1;
            gsl_integration_qagi(&F, 0, 1e-12, 4000, ws, &im, &e);
            double complex z = CMPLX(0.5, ts[j]);
            double complex ref = z * (z + 1) * CMPLX(re, im), got;
            CHECK(dpa_phi_leaf_log_mgf(&l, 0.5, ts[j], &got, &err) == DPA_OK, "%s", err.message);
            double d = cabs(cexp(got) - ref) / cabs(ref);
            CHECK(d < 1e-8, "%s, z = 0.5%+gi: M(z) %.15g%+.15gi, transform of the profile %.15g%+.15gi (rel %.2e)",
                  names[i], ts[j], creal(cexp(got)), cimag(cexp(got)), creal(ref), cimag(ref), d);
        }
        dpa_phi_leaf_clear(&l);
        dpa_pair_free(pairs[i]);
    }
    gsl_integration_workspace_free(ws);
    gsl_set_error_handler(old);
}

/* ------------------------------------------------------------ Gaussian vs exact */

static void test_gaussian_vs_exact(void **state)
{
    (void)state;
    int cases = 0, worst_case = -1;
    double worst = 0;
    for (int c = 0; c < 320; c++) {
        dpa_error err;
        dpa_phi *ph = dpa_phi_new(NULL, &err);
        assert_non_null(ph);
        int m = 1 + (int)(3 * test_unif());
        double mu_tot = test_log_unif(0.05, 6.0), ks[3], mus[3], w[3], ws = 0;
        for (int i = 0; i < m; i++) {
            w[i] = 0.2 + test_unif();
            ws += w[i];
        }
        for (int i = 0; i < m; i++) {
            ks[i] = floor(test_log_unif(1, 2000));
            /* split mu_tot^2 among the leaves */
            mus[i] = mu_tot * sqrt(w[i] / ws / ks[i]);
            dpa_pair *p = dpa_pair_gaussian(mus[i], &err);
            assert_int_equal(dpa_phi_add_pair(ph, p, ks[i], &err), DPA_OK);
            dpa_pair_free(p);
        }
        double mlo, mhi;
        dpa_exact_total_mu(ks, mus, (size_t)m, 0, &mlo, &mhi);
        /* eps around the bulk: mu^2/2 + z mu for z in [-3, 6] */
        double eps = 0.5 * mu_tot * mu_tot + (test_unif() * 9 - 3) * mu_tot;
        dpa_phi_result r;
        if (dpa_phi_delta(ph, eps, &r, &err)) fail_msg("case %d: %s", c, err.message);
        double up, lo, up2, lo2;
        dpa_exact_delta(mhi, eps, &up, &lo2);
        dpa_exact_delta(mlo, eps, &up2, &lo);
        CHECK(r.certified, "case %d mu %g eps %g: not certified (%s)", c, mu_tot, eps, r.note);
        CHECK(intersect(r.lower, r.upper, lo, up), "case %d mu %.17g eps %.17g: phi [%.17g, %.17g] exact [%.17g, %.17g]",
              c, mu_tot, eps, r.lower, r.upper, lo, up);
        double width = (r.upper - r.lower) / fmax(up, 1e-300);
        if (up > 1e-10 && width > worst) {
            worst = width;
            worst_case = c;
        }
        /* tightness: AUTO keeps Gil-Pelaez while its bracket is within 2e-5
         * relative (phi_acct.c), else Bromwich: 4e-5 where delta > 1e-10 */
        CHECK(up <= 1e-10 || width < 4e-5, "case %d: phi bracket [%.17g, %.17g] wider than 4e-5 relative of %.17g", c,
              r.lower, r.upper, up);
        double delta = c % 3 == 0 ? 1e-3 : (c % 3 == 1 ? 1e-5 : 1e-8);
        if (dpa_phi_epsilon(ph, delta, &r, &err)) fail_msg("case %d: %s", c, err.message);
        dpa_exact_epsilon(mhi, delta, &up, &lo2);
        dpa_exact_epsilon(mlo, delta, &up2, &lo);
        CHECK(intersect(r.lower, r.upper, lo, up), "case %d mu %.17g delta %g: phi eps [%.17g, %.17g] exact [%.17g, %.17g]",
              c, mu_tot, delta, r.lower, r.upper, lo, up);
        CHECK(r.upper - r.lower < 2e-4 * fmax(1, up), "case %d: phi eps bracket [%.17g, %.17g] too wide", c, r.lower,
              r.upper);
        dpa_phi_free(ph);
        cases++;
    }
    print_message("Gaussian vs exact: %d cases, widest delta bracket %.2e relative (case %d)\n", cases, worst,
                  worst_case);
}

/* ------------------------------------------------------------ vs PLD */

static void test_vs_pld(void **state)
{
    (void)state;
    int cases = 0, ok = 0;
    double gap_max = 0;
    char json[512];
    for (int c = 0; c < 320; c++) {
        int mix = c % 2;
        if (!mix) {
            /* at least 2 expected sampled steps (k q >= 2): with fewer the
             * loss law is nearly atomic and phi decays too slowly to certify
             * (docs/phi.md §7) */
            double q = test_log_unif(0.001, 0.3), sigma = test_log_unif(0.7, 3.0), k = floor(test_log_unif(fmax(10, 2 / q), 2000));
            snprintf(json, sizeof json,
                     "{\"repeat\": {\"count\": %.0f, \"event\": {\"poisson\": {\"rate\": %.17g, \"event\": "
                     "{\"gaussian\": {\"sigma\": %.17g}}}}}}",
                     k, q, sigma);
        } else {
            double sigma = test_log_unif(1, 20), kg = floor(test_log_unif(1, 200)), e = test_log_unif(0.01, 1.0), kr = floor(test_log_unif(1, 100));
            snprintf(json, sizeof json,
                     "{\"compose\": [{\"repeat\": {\"count\": %.0f, \"event\": {\"gaussian\": {\"sigma\": %.17g}}}}, "
                     "{\"repeat\": {\"count\": %.0f, \"event\": {\"randomized_response\": {\"epsilon\": %.17g}}}}]}",
                     kg, sigma, kr, e);
        }
        dpa_phi *ph = phi_from_json(json, DPA_PHI_AUTO);
        dpa_accountant *a = test_accountant(json, DPA_METHOD_PLD);
        dpa_error err;
        dpa_phi_result r;
        dpa_result pr;
        double delta = c % 4 < 2 ? 1e-5 : 1e-3;
        if (dpa_phi_epsilon(ph, delta, &r, &err)) fail_msg("%s: %s", json, err.message);
        if (dpa_accountant_epsilon(a, delta, &pr, &err)) fail_msg("%s: pld %s", json, err.message);
        int good = r.certified && intersect(r.lower, r.upper, pr.lower, pr.upper);
        CHECK(good, "%s eps(%g): phi [%.12g, %.12g] (cert %d: %s) pld [%.12g, %.12g]", json, delta, r.lower, r.upper,
              r.certified, r.note, pr.lower, pr.upper);
        if (r.upper > pr.upper) gap_max = fmax(gap_max, r.upper - pr.upper);
        /* a delta query at the PLD eps */
        double eps = 0.5 * (pr.lower + pr.upper);
        if (dpa_phi_delta(ph, eps, &r, &err)) fail_msg("%s: %s", json, err.message);
        if (dpa_accountant_delta(a, eps, &pr, &err)) fail_msg("%s: pld %s", json, err.message);
        int good2 = r.certified && intersect(r.lower, r.upper, pr.lower, pr.upper);
        CHECK(good2, "%s delta(%.12g): phi [%.12g, %.12g] (cert %d) pld [%.12g, %.12g]", json, eps, r.lower, r.upper,
              r.certified, pr.lower, pr.upper);
        ok += good && good2;
        cases++;
        dpa_phi_free(ph);
        dpa_accountant_free(a);
    }
    CHECK(ok >= 300, "only %d of %d cases intersect the PLD brackets", ok, cases);
    print_message("phi vs PLD: %d of %d generated cases intersect (eps and delta queries)\n", ok, cases);
}

/* Long DP-SGD-like repetitions (4096 <= k < 16384), which the PLD method
 * composes in two stages at the usual deltas (src/pld/build_compose.c, SPLIT_MIN):
 * phi's bracket (an independent method: the characteristic function and a
 * Fourier inversion, no grid) must meet PLD's, and PLD must meet its
 * accuracy target. */
static void test_vs_pld_two_stage(void **state)
{
    (void)state;
    char json[512];
    int ok = 0, cases = 24;
    for (int c = 0; c < cases; c++) {
        double q = test_log_unif(0.001, 0.05), sigma = test_log_unif(0.7, 3.0), k = floor(test_log_unif(4096, 16383));
        double delta = c % 3 == 0 ? 1e-6 : c % 3 == 1 ? 1e-5 : 1e-3;
        snprintf(json, sizeof json,
                 "{\"repeat\": {\"count\": %.0f, \"event\": {\"poisson\": {\"rate\": %.17g, \"event\": "
                 "{\"gaussian\": {\"sigma\": %.17g}}}}}}",
                 k, q, sigma);
        dpa_phi *ph = phi_from_json(json, DPA_PHI_AUTO);
        dpa_accountant *a = test_accountant(json, DPA_METHOD_PLD);
        dpa_error err;
        dpa_phi_result r;
        dpa_result pr;
        if (dpa_phi_epsilon(ph, delta, &r, &err)) fail_msg("%s: %s", json, err.message);
        if (dpa_accountant_epsilon(a, delta, &pr, &err)) fail_msg("%s: pld %s", json, err.message);
        int good = r.certified && intersect(r.lower, r.upper, pr.lower, pr.upper) && pr.accuracy_met;
        CHECK(good, "%s eps(%g): phi [%.12g, %.12g] (cert %d: %s) pld [%.12g, %.12g] (accuracy met %d)", json, delta,
              r.lower, r.upper, r.certified, r.note, pr.lower, pr.upper, pr.accuracy_met);
        ok += good;
        dpa_phi_free(ph);
        dpa_accountant_free(a);
    }
    CHECK(ok == cases, "%d of %d two-stage cases agree with phi", ok, cases);
}

/* ------------------------------------------------------------ GP vs Bromwich */

static void test_inversions_agree(void **state)
{
    (void)state;
    char json[512];
    int n = 0;
    int both = 0;
    for (int c = 0; c < 20; c++) {
        double q = test_log_unif(0.005, 0.2), sigma = test_log_unif(0.8, 2.5), k = floor(test_log_unif(fmax(10, 5 / q), 2000));
        snprintf(json, sizeof json,
                 "{\"compose\": [{\"repeat\": {\"count\": %.0f, \"event\": {\"poisson\": {\"rate\": %.17g, \"event\": "
                 "{\"gaussian\": {\"sigma\": %.17g}}}}}}, {\"laplace\": {\"scale\": %.17g}}]}",
                 k, q, sigma, test_log_unif(2, 20));
        dpa_phi *g = phi_from_json(json, DPA_PHI_GP), *b = phi_from_json(json, DPA_PHI_BROMWICH);
        for (int j = 0; j < 3; j++) {
            double eps = 0.3 + j * test_log_unif(0.2, 1.5);
            dpa_phi_result rg, rb;
            dpa_error err;
            if (dpa_phi_delta(g, eps, &rg, &err) || dpa_phi_delta(b, eps, &rb, &err)) fail_msg("%s", err.message);
            CHECK(intersect(rg.lower, rg.upper, rb.lower, rb.upper),
                  "%s eps %g: Gil-Pelaez [%.15g, %.15g] vs Bromwich [%.15g, %.15g]", json, eps, rg.lower, rg.upper,
                  rb.lower, rb.upper);
            if (rg.certified && rb.certified) {
                CHECK(rb.how == DPA_PHI_HOW_BROMWICH && rg.how == DPA_PHI_HOW_GP, "inversion labels");
                both++;
            }
            n++;
        }
        dpa_phi_free(g);
        dpa_phi_free(b);
    }
    CHECK(both >= n / 2, "only %d of %d comparisons had both inversions certified", both, n);
    print_message("Gil-Pelaez vs Bromwich: %d comparisons (subsampled Gaussian + Laplace), %d with both certified\n",
                  n, both);
}

/* ------------------------------------------------------------ reference values */

/* the reference (printed with `decimals` decimals) must lie in the bracket
 * widened by half a unit of its last printed decimal */
static void check_ref(const char *what, double lo, double up, double ref, int decimals, int certified)
{
    double ulp = 0.5 * pow(10, -decimals);
    CHECK(certified, "%s: not certified", what);
    CHECK(lo - ulp <= ref && ref <= up + ulp, "%s: [%.12g, %.12g] misses %.12g", what, lo, up, ref);
}

static void test_reference_values(void **state)
{
    (void)state;
    char json[768], what[128];
    dpa_error err;
    dpa_phi_result r;
    /* CF Experiment 1: k-fold Gaussian, eps at delta = 1e-4 */
    const double ks[3] = {100, 1000, 10000}, sig[2] = {50, 100};
    const double e1[3][2] = {{0.601565, 0.275924}, {2.225246, 1.008383}, {8.876869, 3.804436}};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 2; j++) {
            snprintf(json, sizeof json, "{\"repeat\": {\"count\": %.0f, \"event\": {\"gaussian\": {\"sigma\": %g}}}}",
                     ks[i], sig[j]);
            dpa_phi *ph = phi_from_json(json, DPA_PHI_AUTO);
            assert_int_equal(dpa_phi_epsilon(ph, 1e-4, &r, &err), DPA_OK);
            snprintf(what, sizeof what, "CF Exp 1 k %g sigma %g", ks[i], sig[j]);
            check_ref(what, r.lower, r.upper, e1[i][j], 6, r.certified);
            dpa_phi_free(ph);
        }
    /* CF Experiment 2: k pairs of (Gaussian sigma 5, RR p = 0.52), delta(2) */
    const double k2[5] = {5, 10, 20, 50, 100};
    const double d2[5] = {4.1684884e-6, 8.313639789e-4, 0.016475754, 0.150201642, 0.393180862};
    const int dig2[5] = {13, 13, 9, 9, 9};
    for (int i = 0; i < 5; i++) {
        snprintf(json, sizeof json,
                 "{\"repeat\": {\"count\": %.0f, \"event\": {\"compose\": [{\"gaussian\": {\"sigma\": 5}}, "
                 "{\"randomized_response\": {\"p\": 0.52}}]}}}",
                 k2[i]);
        dpa_phi *ph = phi_from_json(json, DPA_PHI_AUTO);
        assert_int_equal(dpa_phi_delta(ph, 2.0, &r, &err), DPA_OK);
        snprintf(what, sizeof what, "CF Exp 2 k %g", k2[i]);
        check_ref(what, r.lower, r.upper, d2[i], dig2[i], r.certified);
        dpa_phi_free(ph);
    }
    /* CF Experiment 3: Poisson(0.01) Gaussian sigma 2, eps(1e-5) per direction */
    const double k3[4] = {200, 500, 1000, 1500};
    const double rem[4] = {0.269126, 0.431982, 0.622030, 0.771645}, add[4] = {0.232468, 0.392264, 0.579691, 0.727605};
    for (int i = 0; i < 4; i++) {
        snprintf(json, sizeof json,
                 "{\"repeat\": {\"count\": %.0f, \"event\": {\"poisson\": {\"rate\": 0.01, \"event\": {\"gaussian\": "
                 "{\"sigma\": 2}}}}}}",
                 k3[i]);
        dpa_phi *ph = phi_from_json(json, DPA_PHI_AUTO);
        assert_int_equal(dpa_phi_epsilon(ph, 1e-5, &r, &err), DPA_OK);
        snprintf(what, sizeof what, "CF Exp 3 k %g remove", k3[i]);
        check_ref(what, r.lower_remove, r.upper_remove, rem[i], 6, r.certified);
        snprintf(what, sizeof what, "CF Exp 3 k %g add", k3[i]);
        check_ref(what, r.lower_add, r.upper_add, add[i], 6, r.certified);
        CHECK(r.binding == 1, "CF Exp 3: remove should bind");
        dpa_phi_free(ph);
    }
    /* Gaussian sigma 5 x3 + sigma 8 x5 */
    {
        dpa_phi *ph = phi_from_json("{\"compose\": [{\"repeat\": {\"count\": 3, \"event\": {\"gaussian\": {\"sigma\": "
                                    "5}}}}, {\"repeat\": {\"count\": 5, \"event\": {\"gaussian\": {\"sigma\": 8}}}}]}",
                                    DPA_PHI_AUTO);
        assert_int_equal(dpa_phi_epsilon(ph, 1e-6, &r, &err), DPA_OK);
        check_ref("sigma 5/8 mixture eps(1e-6)", r.lower, r.upper, 1.984273919801572, 15, r.certified);
        assert_int_equal(dpa_phi_epsilon(ph, 1e-4, &r, &err), DPA_OK);
        check_ref("sigma 5/8 mixture eps(1e-4)", r.lower, r.upper, 1.4867384204500813, 15, r.certified);
        dpa_phi_free(ph);
    }
    /* Gaussian mu = 1 profile and eps values */
    {
        dpa_phi *ph = phi_from_json("{\"gdp\": {\"mu\": 1}}", DPA_PHI_AUTO);
        const double xs[5] = {-1, 0, 0.5, 1, 2};
        const double ds[5] = {0.678817974886628, 0.382924922548026, 0.238421708134877, 0.126936737506644,
                              0.0209236358211137};
        for (int i = 0; i < 5; i++) {
            assert_int_equal(dpa_phi_delta(ph, xs[i], &r, &err), DPA_OK);
            snprintf(what, sizeof what, "Gaussian mu 1 delta(%g)", xs[i]);
            check_ref(what, r.lower, r.upper, ds[i], 15, r.certified);
        }
        assert_int_equal(dpa_phi_delta(ph, 0.277, &r, &err), DPA_OK);
        check_ref("Gaussian sigma 1 delta(0.277)", r.lower, r.upper, 0.29988967243682, 14, r.certified);
        dpa_phi_free(ph);
    }
    /* Poisson-subsampled Gaussian sigma 1, q 0.1, one step (k = 1: the
     * characteristic function decays slowly; certified or refused, never wrong) */
    {
        dpa_phi *ph = phi_from_json("{\"poisson\": {\"rate\": 0.1, \"event\": {\"gaussian\": {\"sigma\": 1}}}}",
                                    DPA_PHI_AUTO);
        const double xs[4] = {0, 0.05, 0.2, 1};
        const double rm[4] = {0.0382924922548, 0.0261436629589, 0.00988931448519, 0.000207121486021};
        int ncert = 0;
        for (int i = 0; i < 4; i++) {
            if (dpa_phi_delta(ph, xs[i], &r, &err)) fail_msg("%s", err.message);
            snprintf(what, sizeof what, "Poisson(0.1) one step remove delta(%g)", xs[i]);
            check_ref(what, r.lower_remove, r.upper_remove, rm[i], 13, 1);
            ncert += r.certified;
        }
        if (dpa_phi_delta(ph, 0.05, &r, &err)) fail_msg("%s", err.message);
        check_ref("Poisson(0.1) one step add delta(0.05)", r.lower_add, r.upper_add, 0.0105725813538, 13, 1);
        if (dpa_phi_delta(ph, -0.05, &r, &err)) fail_msg("%s", err.message);
        check_ref("Poisson(0.1) one step add delta(-0.05)", r.lower_add, r.upper_add, 0.0736391969701, 13, 1);
        ncert += r.certified;
        print_message("one Poisson(0.1) Gaussian step: %d of 5 certified (a single subsampled step is nearly "
                      "atomic; uncertified results are the trivial bracket)\n", ncert);
        dpa_phi_free(ph);
    }
    /* CF Fig 4: q 0.5, sigma 1, one step, H_a at a = 0.5, 1, 2 (eps = log a) */
    {
        dpa_phi *ph = phi_from_json("{\"poisson\": {\"rate\": 0.5, \"event\": {\"gaussian\": {\"sigma\": 1}}}}",
                                    DPA_PHI_AUTO);
        const double a[3] = {0.5, 1, 2}, rm[3] = {0.5, 0.191462, 0.054928}, ad[3] = {0.527464, 0.191462, 0};
        for (int i = 0; i < 3; i++) {
            if (dpa_phi_delta(ph, log(a[i]), &r, &err)) fail_msg("%s", err.message);
            /* one step at q = 0.5: certified or the trivial bracket, never wrong */
            snprintf(what, sizeof what, "CF Fig 4 remove a %g", a[i]);
            check_ref(what, r.lower_remove, r.upper_remove, rm[i], 6, 1);
            snprintf(what, sizeof what, "CF Fig 4 add a %g", a[i]);
            check_ref(what, r.lower_add, r.upper_add, ad[i], 6, 1);
        }
        dpa_phi_free(ph);
    }
    /* RR with p = e/(1+e) (eps 1): eps(0.3) = 0.4717504 (atoms only) */
    {
        dpa_phi *ph = phi_from_json("{\"randomized_response\": {\"epsilon\": 1}}", DPA_PHI_AUTO);
        assert_int_equal(dpa_phi_epsilon(ph, 0.3, &r, &err), DPA_OK);
        check_ref("RR eps 1 eps(0.3)", r.lower, r.upper, 0.4717504, 7, r.certified);
        CHECK(r.how == DPA_PHI_HOW_ATOMS, "RR: atoms path expected");
        dpa_phi_free(ph);
    }
}

/* ------------------------------------------------------------ atoms only */

static void test_atoms_exact(void **state)
{
    (void)state;
    char json[512], what[160];
    dpa_error err;
    dpa_phi_result r;
    dpa_result x;
    /* (0.1, 1e-8)^k, eps at delta 1e-6 (LT Thm 4.6 / Cor 4.7) */
    const double k1[8] = {1, 2, 5, 10, 20, 50, 99, 100};
    const double e1[8] = {0.0999981142092, 0.199996444156, 0.499976175798, 0.999433832902,
                          1.79282997463, 3.26413307878, 5.56619977567, 6.96961878374};
    for (int i = 0; i < 8; i++) {
        snprintf(json, sizeof json,
                 "{\"repeat\": {\"count\": %.0f, \"event\": {\"approx\": {\"epsilon\": 0.1, \"delta\": 1e-8}}}}", k1[i]);
        dpa_phi *ph = phi_from_json(json, DPA_PHI_AUTO);
        assert_int_equal(dpa_phi_epsilon(ph, 1e-6, &r, &err), DPA_OK);
        snprintf(what, sizeof what, "(0.1, 1e-8)^%g eps(1e-6)", k1[i]);
        check_ref(what, r.lower, r.upper, e1[i], 11, r.certified);
        dpa_accountant *a = test_accountant(json, DPA_METHOD_EXACT);
        assert_int_equal(dpa_accountant_epsilon(a, 1e-6, &x, &err), DPA_OK);
        CHECK(intersect(r.lower, r.upper, x.lower, x.upper), "%s: phi [%.15g, %.15g] exact [%.15g, %.15g]", what,
              r.lower, r.upper, x.lower, x.upper);
        dpa_accountant_free(a);
        dpa_phi_free(ph);
    }
    /* RR(1, 0.1) + RR(0.5, 0.05): profile including the +inf mass */
    {
        dpa_phi *ph = phi_from_json("{\"compose\": [{\"approx\": {\"epsilon\": 1, \"delta\": 0.1}}, {\"approx\": "
                                    "{\"epsilon\": 0.5, \"delta\": 0.05}}]}",
                                    DPA_PHI_AUTO);
        const double xs[4] = {-2, 0, 0.7, 2}, ds[4] = {0.884288332832696, 0.540110169457308, 0.359250334352719, 0.145};
        for (int i = 0; i < 4; i++) {
            assert_int_equal(dpa_phi_delta(ph, xs[i], &r, &err), DPA_OK);
            snprintf(what, sizeof what, "RR(1,0.1)+RR(0.5,0.05) delta(%g)", xs[i]);
            check_ref(what, r.lower, r.upper, ds[i], 15, r.certified);
            CHECK(r.upper - r.lower < 1e-13, "%s: width %g", what, r.upper - r.lower);
        }
        dpa_phi_free(ph);
    }
    /* heterogeneous (0.1, 1e-6), (0.5, 1e-5), (1.0, 0): delta(0.3) */
    {
        dpa_phi *ph = phi_from_json("{\"compose\": [{\"approx\": {\"epsilon\": 0.1, \"delta\": 1e-6}}, {\"approx\": "
                                    "{\"epsilon\": 0.5, \"delta\": 1e-5}}, {\"pure\": {\"epsilon\": 1.0}}]}",
                                    DPA_PHI_AUTO);
        assert_int_equal(dpa_phi_delta(ph, 0.3, &r, &err), DPA_OK);
        check_ref("heterogeneous delta(0.3)", r.lower, r.upper, 0.368032583983433134, 15, r.certified);
        dpa_phi_free(ph);
    }
    /* generated atom-only specs against the exact accountant: RR/pure/approx
     * mixtures, and Poisson-subsampled RR (two-point pairs, both directions) */
    int n = 0;
    for (int c = 0; c < 60; c++) {
        if (c % 2 == 0)
            snprintf(json, sizeof json,
                     "{\"compose\": [{\"repeat\": {\"count\": %.0f, \"event\": {\"approx\": {\"epsilon\": %.17g, "
                     "\"delta\": %.17g}}}}, {\"repeat\": {\"count\": %.0f, \"event\": {\"pure\": {\"epsilon\": %.17g}}}}]}",
                     floor(test_log_unif(1, 300)), test_log_unif(0.01, 2), test_log_unif(1e-12, 1e-4), floor(test_log_unif(1, 50)),
                     0.25 * floor(test_log_unif(1, 12)));
        else
            snprintf(json, sizeof json,
                     "{\"repeat\": {\"count\": %.0f, \"event\": {\"poisson\": {\"rate\": %.17g, \"event\": "
                     "{\"randomized_response\": {\"epsilon\": %.17g}}}}}}",
                     floor(test_log_unif(1, 2000)), test_log_unif(0.001, 0.5), test_log_unif(0.1, 5));
        dpa_phi *ph = phi_from_json(json, DPA_PHI_AUTO);
        dpa_accountant *a = test_accountant(json, DPA_METHOD_EXACT);
        double eps = test_log_unif(0.05, 5);
        assert_int_equal(dpa_phi_delta(ph, eps, &r, &err), DPA_OK);
        assert_int_equal(dpa_accountant_delta(a, eps, &x, &err), DPA_OK);
        CHECK(r.certified && r.how == DPA_PHI_HOW_ATOMS, "%s: atoms path", json);
        CHECK(intersect(r.lower, r.upper, x.lower, x.upper), "%s delta(%g): phi [%.17g, %.17g] exact [%.17g, %.17g]",
              json, eps, r.lower, r.upper, x.lower, x.upper);
        CHECK(r.upper - r.lower <= 1e-9 * r.upper + 1e-15, "%s: phi width %g", json, r.upper - r.lower);
        assert_int_equal(dpa_phi_epsilon(ph, 1e-6, &r, &err), DPA_OK);
        assert_int_equal(dpa_accountant_epsilon(a, 1e-6, &x, &err), DPA_OK);
        CHECK(intersect(r.lower, r.upper, x.lower, x.upper), "%s eps(1e-6): phi [%.17g, %.17g] exact [%.17g, %.17g]",
              json, r.lower, r.upper, x.lower, x.upper);
        dpa_accountant_free(a);
        dpa_phi_free(ph);
        n++;
    }
    /* discrete Laplace and discrete Gaussian (lattice atoms) against PLD */
    const char *disc[3] = {"{\"repeat\": {\"count\": 20, \"event\": {\"discrete_laplace\": {\"scale\": 3}}}}",
                           "{\"repeat\": {\"count\": 10, \"event\": {\"discrete_gaussian\": {\"sigma\": 3}}}}",
                           ("{\"compose\": [{\"discrete_laplace\": {\"scale\": 2, \"sensitivity\": 2}}, "
                            "{\"repeat\": {\"count\": 5, \"event\": {\"pure\": {\"epsilon\": 0.5}}}}]}")};
    for (int i = 0; i < 3; i++) {
        dpa_phi *ph = phi_from_json(disc[i], DPA_PHI_AUTO);
        dpa_accountant *a = test_accountant(disc[i], DPA_METHOD_PLD);
        assert_int_equal(dpa_phi_epsilon(ph, 1e-5, &r, &err), DPA_OK);
        assert_int_equal(dpa_accountant_epsilon(a, 1e-5, &x, &err), DPA_OK);
        CHECK(intersect(r.lower, r.upper, x.lower, x.upper), "%s: phi [%.15g, %.15g] pld [%.15g, %.15g]", disc[i],
              r.lower, r.upper, x.lower, x.upper);
        CHECK(r.how == DPA_PHI_HOW_ATOMS, "%s: atoms path", disc[i]);
        dpa_accountant_free(a);
        dpa_phi_free(ph);
    }
    print_message("atoms-only: %d generated specs against the exact accountant\n", n);
}

/* ------------------------------------------------------------ Laplace mixtures, huge counts */

static void test_mixed_and_huge(void **state)
{
    (void)state;
    dpa_error err;
    dpa_phi_result r;
    dpa_result x;
    /* Laplace (atoms + continuous part) with a Gaussian factor, vs PLD */
    const char *specs[3] = {
        "{\"compose\": [{\"repeat\": {\"count\": 10, \"event\": {\"laplace\": {\"scale\": 5}}}}, {\"gaussian\": "
        "{\"sigma\": 2}}]}",
        "{\"compose\": [{\"repeat\": {\"count\": 3, \"event\": {\"laplace\": {\"scale\": 1}}}}, {\"repeat\": "
        "{\"count\": 50, \"event\": {\"poisson\": {\"rate\": 0.05, \"event\": {\"gaussian\": {\"sigma\": 1}}}}}}]}",
        "{\"compose\": [{\"repeat\": {\"count\": 20, \"event\": {\"poisson\": {\"rate\": 0.1, \"event\": {\"laplace\": "
        "{\"scale\": 1}}}}}}, {\"repeat\": {\"count\": 20, \"event\": {\"gaussian\": {\"sigma\": 3}}}}]}"};
    for (int i = 0; i < 3; i++) {
        dpa_phi *ph = phi_from_json(specs[i], DPA_PHI_AUTO);
        dpa_accountant *a = test_accountant(specs[i], DPA_METHOD_PLD);
        assert_int_equal(dpa_phi_epsilon(ph, 1e-5, &r, &err), DPA_OK);
        assert_int_equal(dpa_accountant_epsilon(a, 1e-5, &x, &err), DPA_OK);
        CHECK(r.certified && intersect(r.lower, r.upper, x.lower, x.upper), "%s: phi [%.12g, %.12g] pld [%.12g, %.12g]",
              specs[i], r.lower, r.upper, x.lower, x.upper);
        dpa_accountant_free(a);
        dpa_phi_free(ph);
    }
    /* huge counts: 1e12 Gaussian steps of mu 1e-6 (total mu 1) and 1e15 of
     * mu 1e-7.5: the phase sum must stay exact (phi.h) */
    const double kk[2] = {1e12, 1e15};
    for (int i = 0; i < 2; i++) {
        double mu1 = 1 / sqrt(kk[i]);
        dpa_phi *ph = dpa_phi_new(NULL, &err);
        dpa_pair *p = dpa_pair_gaussian(mu1, &err);
        assert_int_equal(dpa_phi_add_pair(ph, p, kk[i], &err), DPA_OK);
        dpa_pair_free(p);
        double mlo, mhi, up, lo, t;
        dpa_exact_total_mu(&kk[i], &mu1, 1, 0, &mlo, &mhi);
        assert_int_equal(dpa_phi_delta(ph, 0.5, &r, &err), DPA_OK);
        dpa_exact_delta(mhi, 0.5, &up, &t);
        dpa_exact_delta(mlo, 0.5, &t, &lo);
        CHECK(intersect(r.lower, r.upper, lo, up), "k %g: phi [%.15g, %.15g] exact [%.15g, %.15g]", kk[i], r.lower,
              r.upper, lo, up);
        dpa_phi_free(ph);
    }
}

/* ------------------------------------------------------------ refusals */

static void test_refusals(void **state)
{
    (void)state;
    const char *specs[3] = {"{\"repeat\": {\"count\": 3, \"event\": {\"laplace\": {\"scale\": 1}}}}",
                            "{\"sample\": {\"n\": 100, \"m\": 10, \"event\": {\"gaussian\": {\"sigma\": 1}}}, "
                            "\"neighboring\": \"replace\"}",
                            "{\"poisson\": {\"rate\": 0.1, \"event\": {\"compose\": [{\"gaussian\": {\"sigma\": 1}}, "
                            "{\"laplace\": {\"scale\": 1}}]}}}"};
    for (int i = 0; i < 3; i++) {
        dpa_error err;
        dpa_spec *s = dpa_spec_from_json(specs[i], &err);
        assert_non_null(s);
        dpa_leafset L;
        assert_int_equal(dpa_leaves_build(s, &L, &err), DPA_OK);
        dpa_phi *ph = dpa_phi_new(NULL, &err);
        dpa_status st = dpa_phi_add_leafset(ph, &L, &err);
        dpa_phi_result r;
        if (!st) st = dpa_phi_delta(ph, 1.0, &r, &err);
        CHECK(st == DPA_EUNSUPPORTED, "%s: expected DPA_EUNSUPPORTED, got %d", specs[i], st);
        CHECK(strstr(err.message, "pld") != NULL, "%s: the reason should name a method that can: %s", specs[i],
              err.message);
        dpa_phi_free(ph);
        dpa_leaves_free(&L);
        dpa_spec_free(s);
    }
    /* bad counts */
    dpa_error err;
    dpa_phi *ph = dpa_phi_new(NULL, &err);
    dpa_pair *p = dpa_pair_gaussian(1, &err);
    CHECK(dpa_phi_add_pair(ph, p, 2.5, &err) == DPA_EINVAL, "non-integer count accepted");
    CHECK(dpa_phi_add_pair(ph, p, 0, &err) == DPA_EINVAL, "zero count accepted");
    dpa_phi_result r;
    CHECK(dpa_phi_epsilon(ph, 0, &r, &err) == DPA_EINVAL, "delta 0 accepted");
    CHECK(dpa_phi_delta(ph, NAN, &r, &err) == DPA_EINVAL, "NaN eps accepted");
    /* the empty composition: delta = max(0, 1 - e^eps) */
    assert_int_equal(dpa_phi_delta(ph, -1, &r, &err), DPA_OK);
    CHECK(fabs(r.upper - (1 - exp(-1))) < 1e-15 && fabs(r.lower - (1 - exp(-1))) < 1e-15, "empty composition");
    dpa_pair_free(p);
    dpa_phi_free(ph);
}

/* ------------------------------------------------------------ shared evaluations */

/* The evaluation shortcuts against the plain computations they replace:
 *   - a leaf's two tilts prepared together (shared points, one sine per
 *     point: dpa_phi_psi_pair, dpa_phi_log_env_pair) against each tilt
 *     prepared alone, within the sum of their error bounds;
 *   - the add direction evaluated from the remove direction's node sets
 *     (mirror: M_add(z) = M_remove(-1 - z)) against a Gil-Pelaez state built
 *     from the add direction's own leaves: brackets intersect;
 *   - the eps search's certificates: delta queries at the returned ends
 *     give upper(eps_upper) <= delta < lower(eps_lower). */
static void test_shared_evaluations(void **state)
{
    (void)state;
    dpa_error err;
    /* (kind, q, mu): kind 0 Gaussian base, 1 Laplace base (mu = eps0) */
    const double leaves[][3] = {{0, 256.0 / 60000, 1 / 1.1}, {0, 0.01, 0.5}, {0, 0.2, 1.2}, {0, 0.5, 2.0},
                                {1, 0.1, 1.0},           {0, 1.0, 0.8}};
    int nshared = 0, npts = 0;
    for (size_t i = 0; i < sizeof leaves / sizeof *leaves; i++)
        for (int dir = 0; dir < 2; dir++) {
            dpa_pair *p = leaves[i][0] == 0 ? dpa_pair_gaussian(leaves[i][2], &err)
                                            : dpa_pair_laplace(1.0 / leaves[i][2], 1.0, &err);
            assert_non_null(p);
            if (leaves[i][1] < 1) p = dpa_pair_poisson(p, leaves[i][1], &err);
            assert_non_null(p);
            dpa_phi_leaf l;
            assert_int_equal(dpa_phi_leaf_init(&l, p, dir, 1000, &err), DPA_OK);
            const double tmax = 8.0;
            dpa_phi_tilt a, b, sa, sb;
            memset(&a, 0, sizeof a);
            memset(&b, 0, sizeof b);
            memset(&sa, 0, sizeof sa);
            memset(&sb, 0, sizeof sb);
            dpa_status s1 = dpa_phi_tilt_prepare_pair(&l, 0, -1, tmax, &a, &b, &err);
            dpa_status s2 = dpa_phi_tilt_prepare(&l, 0, tmax, &sa, &err);
            dpa_status s3 = dpa_phi_tilt_prepare(&l, -1, tmax, &sb, &err);
            CHECK(s1 == DPA_OK && s2 == DPA_OK && s3 == DPA_OK, "leaf %zu dir %d: prepare %d %d %d", i, dir, s1, s2, s3);
            nshared += b.shared;
            for (int k = 0; k <= 16 && !s1 && !s2 && !s3; k++) {
                double t = tmax * k / 16.0, e[4], g[4];
                double complex z[2], y0, y1;
                dpa_phi_psi_pair(&l, &a, &b, t, &z[0], &e[0], &z[1], &e[1]);
                y0 = dpa_phi_psi(&l, &sa, t, &e[2]);
                y1 = dpa_phi_psi(&l, &sb, t, &e[3]);
                /* psi's mean term differs between the rules: compare log M */
                double complex m0 = a.logM + I * t * a.mean + z[0], m1 = b.logM + I * t * b.mean + z[1];
                double complex n0 = sa.logM + I * t * sa.mean + y0, n1 = sb.logM + I * t * sb.mean + y1;
                double tol0 = e[0] + e[2] + a.inner_err + sa.inner_err + 1e-15 * (1 + fabs(t * a.mean));
                double tol1 = e[1] + e[3] + b.inner_err + sb.inner_err + 1e-15 * (1 + fabs(t * b.mean));
                CHECK(cabs(cexp(m0) - cexp(n0)) <= tol0, "leaf %zu dir %d t %g: r = 0 pair %.17g%+.17gi single %.17g%+.17gi (tol %g)",
                      i, dir, t, creal(m0), cimag(m0), creal(n0), cimag(n0), tol0);
                CHECK(cabs(cexp(m1) - cexp(n1)) <= tol1, "leaf %zu dir %d t %g: r = -1 pair %.17g%+.17gi single %.17g%+.17gi (tol %g)",
                      i, dir, t, creal(m1), cimag(m1), creal(n1), cimag(n1), tol1);
                dpa_phi_log_env_pair(&l, &a, &b, t, &g[0], &g[1]);
                g[2] = dpa_phi_log_env(&l, &a, t);
                g[3] = dpa_phi_log_env(&l, &b, t);
                CHECK(fabs(g[0] - g[2]) <= 1e-12 && fabs(g[1] - g[3]) <= 1e-12, "leaf %zu dir %d t %g: envelopes %g %g vs %g %g",
                      i, dir, t, g[0], g[1], g[2], g[3]);
                npts++;
            }
            dpa_phi_tilt_clear(&a);
            dpa_phi_tilt_clear(&b);
            dpa_phi_tilt_clear(&sa);
            dpa_phi_tilt_clear(&sb);
            dpa_phi_leaf_clear(&l);
            dpa_pair_free(p);
        }
    CHECK(nshared >= 4, "only %d leaves had a shared tilt pair", nshared);

    /* mirror against the add direction's own state */
    const char *specs[3] = {
        "{\"repeat\": {\"count\": 14063, \"event\": {\"poisson\": {\"rate\": 0.0042666667, \"event\": {\"gaussian\": "
        "{\"sigma\": 1.1}}}}}}",
        "{\"compose\": [{\"repeat\": {\"count\": 300, \"event\": {\"poisson\": {\"rate\": 0.05, \"event\": "
        "{\"gaussian\": {\"sigma\": 1.3}}}}}}, {\"laplace\": {\"scale\": 4}}]}",
        "{\"compose\": [{\"repeat\": {\"count\": 500, \"event\": {\"poisson\": {\"rate\": 0.02, \"event\": "
        "{\"gaussian\": {\"sigma\": 0.9}}}}}}, {\"repeat\": {\"count\": 40, \"event\": {\"poisson\": {\"rate\": 0.1, "
        "\"event\": {\"laplace\": {\"scale\": 2}}}}}}, {\"repeat\": {\"count\": 3, \"event\": {\"randomized_response\": "
        "{\"epsilon\": 0.5}}}}]}"};
    int nmirror = 0;
    for (int i = 0; i < 3; i++) {
        dpa_spec *s = dpa_spec_from_json(specs[i], &err);
        assert_non_null(s);
        dpa_leafset L;
        assert_int_equal(dpa_leaves_build(s, &L, &err), DPA_OK);
        dpa_phi_leaf lv[2][4];
        const dpa_phi_leaf *ptr[2][4];
        assert_true(L.n <= 4);
        for (size_t j = 0; j < L.n; j++)
            for (int d = 0; d < 2; d++) {
                assert_int_equal(dpa_phi_leaf_init(&lv[d][j], L.v[j].pair, d, L.v[j].count, &err), DPA_OK);
                ptr[d][j] = &lv[d][j];
            }
        dpa_phi_comp cr = {L.n, ptr[0]}, ca = {L.n, ptr[1]};
        dpa_phi_gp *gr = dpa_phi_gp_new(&cr, &err), *ga = dpa_phi_gp_new(&ca, &err);
        assert_non_null(gr);
        assert_non_null(ga);
        for (int k = 0; k < 8; k++) {
            double x = -0.5 + 0.5 * k;
            dpa_phi_inv vm, va;
            assert_int_equal(dpa_phi_gp_H(gr, x, 1, NAN, &vm, &err), DPA_OK);
            assert_int_equal(dpa_phi_gp_H(ga, x, 0, NAN, &va, &err), DPA_OK);
            double em = vm.quad_err + vm.trunc_err + vm.round_err, ea = va.quad_err + va.trunc_err + va.round_err;
            CHECK(vm.certified == va.certified, "%s x %g: mirror certified %d, own %d", specs[i], x, vm.certified,
                  va.certified);
            if (vm.certified && va.certified) {
                CHECK(intersect(vm.value - em, vm.value + em, va.value - ea, va.value + ea),
                      "%s x %g: add direction by mirror %.17g +- %g, own state %.17g +- %g", specs[i], x, vm.value, em,
                      va.value, ea);
                nmirror++;
            }
        }
        dpa_phi_gp_free(gr);
        dpa_phi_gp_free(ga);
        for (size_t j = 0; j < L.n; j++)
            for (int d = 0; d < 2; d++) dpa_phi_leaf_clear(&lv[d][j]);
        dpa_leaves_free(&L);
        dpa_spec_free(s);

        /* the eps search's ends against delta queries */
        dpa_phi *ph = phi_from_json(specs[i], DPA_PHI_AUTO);
        const double ds[3] = {1e-3, 1e-5, 1e-8};
        for (int j = 0; j < 3; j++) {
            dpa_phi_result re, rd;
            assert_int_equal(dpa_phi_epsilon(ph, ds[j], &re, &err), DPA_OK);
            CHECK(re.certified && isfinite(re.upper), "%s eps(%g): not certified (%s)", specs[i], ds[j], re.note);
            if (!isfinite(re.upper)) continue;
            CHECK(re.upper - re.lower <= 1e-4 * fmax(1, re.upper), "%s eps(%g): [%.12g, %.12g] too wide", specs[i], ds[j],
                  re.lower, re.upper);
            assert_int_equal(dpa_phi_delta(ph, re.upper, &rd, &err), DPA_OK);
            CHECK(rd.upper <= ds[j], "%s eps(%g) <= %.17g: delta there has upper %.17g", specs[i], ds[j], re.upper,
                  rd.upper);
            if (re.lower > 0) {
                assert_int_equal(dpa_phi_delta(ph, re.lower, &rd, &err), DPA_OK);
                CHECK(rd.lower > ds[j], "%s eps(%g) > %.17g: delta there has lower %.17g", specs[i], ds[j], re.lower,
                      rd.lower);
            }
        }
        dpa_phi_free(ph);
    }
    CHECK(nmirror >= 20, "only %d mirror comparisons were certified", nmirror);
    print_message("shared evaluations: %d points on paired tilts (%d pairs shared), %d mirror comparisons\n", npts,
                  nshared, nmirror);
}

/* ------------------------------------------------------------ benchmark hook */

static void bench_dpsgd(void **state)
{
    (void)state;
    const char *json = "{\"repeat\": {\"count\": 14063, \"event\": {\"poisson\": {\"rate\": 0.0042666666666666667, "
                       "\"event\": {\"gaussian\": {\"sigma\": 1.1}}}}}}";
    dpa_error err;
    dpa_phi_result r;
    double t0 = now();
    dpa_phi *ph = phi_from_json(json, DPA_PHI_AUTO);
    assert_int_equal(dpa_phi_prepare(ph, &err), DPA_OK);
    double t1 = now();
    assert_int_equal(dpa_phi_delta(ph, 2.38168, &r, &err), DPA_OK);
    double t2 = now();
    print_message("DP-SGD phi: build %.2f ms; delta(2.38168) = [%.10g, %.10g] in %.2f ms (%zu nodes, %s)\n",
                  1e3 * (t1 - t0), r.lower, r.upper, 1e3 * (t2 - t1), r.nodes, r.certified ? "certified" : "NOT certified");
    t1 = now();
    assert_int_equal(dpa_phi_epsilon(ph, 1e-5, &r, &err), DPA_OK);
    t2 = now();
    print_message("DP-SGD phi: eps(1e-5) = [%.8g, %.8g] in %.2f ms; gap to the PLD bracket [2.38164, 2.38172]: "
                  "upper %+.2e, lower %+.2e\n",
                  r.lower, r.upper, 1e3 * (t2 - t1), r.upper - 2.38172, r.lower - 2.38164);
    dpa_phi_free(ph);
    /* a fresh accountant: build + one eps query */
    t0 = now();
    ph = phi_from_json(json, DPA_PHI_AUTO);
    assert_int_equal(dpa_phi_epsilon(ph, 1e-5, &r, &err), DPA_OK);
    t1 = now();
    print_message("DP-SGD phi: fresh build + eps(1e-5) %.2f ms\n", 1e3 * (t1 - t0));
    dpa_phi_free(ph);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_logphi_vs_density, setup, teardown),
        cmocka_unit_test_setup_teardown(test_phi_is_profile_transform, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gaussian_vs_exact, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reference_values, setup, teardown),
        cmocka_unit_test_setup_teardown(test_atoms_exact, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mixed_and_huge, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refusals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_inversions_agree, setup, teardown),
        cmocka_unit_test_setup_teardown(test_vs_pld, setup, teardown),
        cmocka_unit_test_setup_teardown(test_vs_pld_two_stage, setup, teardown),
        cmocka_unit_test_setup_teardown(test_shared_evaluations, setup, teardown),
        cmocka_unit_test_setup_teardown(bench_dpsgd, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

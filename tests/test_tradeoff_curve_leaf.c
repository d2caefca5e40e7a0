/* The tradeoff_curve leaf (src/event/event_tradeoff_curve.c,
 * docs/fdp.md §11): a mechanism given by points of its tradeoff curve.
 *
 * References, independent of the leaf's own profile computation:
 *   - the f-DP module (src/fdp/): dpa_tf_lower_envelope of the same points,
 *     dpa_tf_symmetrize_max (max{f, f^{-1}}, GDP Prop 2.1), and its profile
 *     dpa_tf_delta (from the curve's vertices, rounded up, about 1e-15
 *     relative);
 *   - the Gaussian's exact profile dpa_tf_gdp_delta (GDP Cor 2.13) for
 *     curves built from G_mu: points ON G_mu (chords above it: the leaf's
 *     profile is below G_mu's, by the sampling's discretization) and the
 *     vertices of dpa_tf_discretize(G_mu) (a curve below G_mu: the leaf's
 *     profile is above G_mu's, certified).
 * Checked: the accountant's bracket [lower, upper] of the leaf's delta at
 * generated eps contains the reference (certified side: upper >= the
 * reference; tightness: lower <= it), for symmetric and asymmetric
 * generated curves, in both directions of the composition; refusals of bad
 * points with messages that name the field.
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
#include "dpacct/tradeoff.h"
#include "check.h"

/* dpa_tf_delta's own outward rounding (docs/fdp.md §6: about 1e-15
 * relative where nothing cancels) and the leaf's (2^-61 absolute, one ulp
 * relative): 1e-12 relative plus 1e-16 absolute covers both with room. */
#define REF_REL 1e-12
#define REF_ABS 1e-16

static dpa_accountant *leaf_accountant(const double *x, const double *y, size_t n, dpa_method m)
{
    dpa_error err;
    dpa_event *e = dpa_event_tradeoff_curve(x, y, n, &err);
    if (!e) fail_msg("tradeoff_curve: %s", err.message);
    dpa_spec *s = dpa_spec_new(e, DPA_ADD_REMOVE, &err);
    if (!s) fail_msg("spec: %s", err.message);
    dpa_options o;
    dpa_options_init(&o);
    o.method = m;
    dpa_accountant *a = dpa_accountant_new(s, &o, &err);
    dpa_spec_free(s);
    if (!a) fail_msg("accountant: %s", err.message);
    return a;
}

/* The reference profile max{f, f^-1} of the points, at eps (an upper bound). */
static double ref_delta(const dpa_tf *fs, double eps)
{
    double d;
    dpa_error err;
    if (dpa_tf_delta(fs, eps, DPA_TF_QP, &d, &err) != DPA_OK) fail_msg("dpa_tf_delta: %s", err.message);
    return d;
}

static dpa_tf *ref_curve(const double *x, const double *y, size_t n)
{
    dpa_error err;
    dpa_tf *f = dpa_tf_lower_envelope(x, y, n, &err);
    if (!f) fail_msg("lower_envelope: %s", err.message);
    dpa_tf *fs = dpa_tf_symmetrize_max(f, NULL, &err);
    dpa_tf_free(f);
    if (!fs) fail_msg("symmetrize_max: %s", err.message);
    return fs;
}

/* The leaf's bracket at eps against the reference profile of fs. */
static void compare(dpa_accountant *a, const dpa_tf *fs, double eps, const char *what)
{
    dpa_result r;
    dpa_error err;
    CHECK(dpa_accountant_delta(a, eps, &r, &err) == DPA_OK, "%s eps %g: %s", what, eps, err.message);
    double ref = ref_delta(fs, eps);
    CHECK(r.upper >= ref * (1 - REF_REL) - REF_ABS, "%s eps %.17g: upper %.17g below the reference %.17g", what, eps,
          r.upper, ref);
    CHECK(r.lower <= ref * (1 + REF_REL) + REF_ABS, "%s eps %.17g: lower %.17g above the reference %.17g", what, eps,
          r.lower, ref);
    /* the PLD method's default accuracy (measured widths up to 1e-4
     * relative; 1e-3 leaves room) */
    CHECK(r.upper - r.lower <= 1e-3 * ref + 1e-10, "%s eps %g: bracket [%.17g, %.17g] wide", what, eps, r.lower,
          r.upper);
}

/* Generated curves: random points (convex or not) through (0, y0) and
 * (1, 0), beta non-increasing and below 1 - alpha; symmetric or not. */
static void test_generated(void **state)
{
    (void)state;
    int cases = SANITIZED ? 4 : 30;
    for (int c = 0; c < cases; c++) {
        size_t n = 3 + (size_t)(test_unif() * 40);
        double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
        x[0] = 0;
        y[0] = 1 - (test_unif() < 0.3 ? test_log_unif(1e-8, 0.1) : 0);
        for (size_t i = 1; i + 1 < n; i++) x[i] = x[i - 1] + test_unif() * (1 - x[i - 1]) * 0.3;
        x[n - 1] = 1;
        y[n - 1] = 0;
        for (size_t i = 1; i + 1 < n; i++) y[i] = fmin(y[i - 1], 1 - x[i]) * test_unif();
        char what[64];
        snprintf(what, sizeof what, "case %d (n %zu)", c, n);
        dpa_tf *fs = ref_curve(x, y, n);
        dpa_accountant *a = leaf_accountant(x, y, n, DPA_METHOD_PLD);
        for (int k = 0; k < 6; k++) compare(a, fs, k == 0 ? 0 : test_log_unif(1e-3, 8), what);
        dpa_accountant_free(a);
        dpa_tf_free(fs);
        free(x);
        free(y);
    }
}

/* G_mu: points on it (above: the leaf's profile below G_mu's) and the
 * vertices of a discretization below it (the leaf's profile above). */
static void test_gaussian(void **state)
{
    (void)state;
    static const double mus[] = {0.5, 1, 2};
    for (size_t t = 0; t < sizeof mus / sizeof *mus; t++) {
        double mu = mus[t];
        dpa_error err;
        /* on the curve: alpha log-spaced into both tails */
        enum { N = 801 };
        double x[N], y[N];
        dpa_tf *g = dpa_tf_gaussian(mu, &err);
        for (int i = 0; i < N; i++) {
            double u = -12 + 24.0 * i / (N - 1); /* alpha = logistic(u) */
            x[i] = i == 0 ? 0 : i == N - 1 ? 1 : 1 / (1 + exp(-u));
            double lo, hi;
            dpa_tf_eval_bounds(g, x[i], &lo, &hi, NULL, NULL, &err);
            y[i] = i == N - 1 ? 0 : hi; /* on (or above) G_mu */
        }
        y[0] = 1;
        dpa_accountant *a = leaf_accountant(x, y, N, DPA_METHOD_PLD);
        dpa_tf *fs = ref_curve(x, y, N);
        for (int k = 0; k < 8; k++) {
            double eps = 0.25 * k * mu, glo, ghi;
            compare(a, fs, eps, "sampled G_mu");
            dpa_result r;
            dpa_accountant_delta(a, eps, &r, &err);
            dpa_tf_gdp_delta(mu, eps, &glo, &ghi, &err);
            /* chords above G_mu: below its profile; the discretization (801
             * points, alpha spacing about 0.03 at the centre) within 2e-4 */
            CHECK(r.lower <= ghi * (1 + REF_REL) && r.upper >= glo - 2e-4, "sampled G_%g eps %g: [%.17g, %.17g] vs %.17g",
                  mu, eps, r.lower, r.upper, glo);
        }
        dpa_accountant_free(a);
        dpa_tf_free(fs);
        /* below the curve: the vertices of supporting lines */
        dpa_tf_opts o;
        dpa_tf_opts_init(&o);
        o.max_vertices = 4000;
        dpa_tf *d = dpa_tf_discretize(g, &o, &err);
        size_t nv = dpa_tf_vertices(d, NULL, NULL, NULL, NULL, 0);
        double *vx = malloc(nv * sizeof *vx), *vy = malloc(nv * sizeof *vy);
        dpa_tf_vertices(d, vx, NULL, vy, NULL, nv);
        /* the nearest doubles of the vertices, moved down and left (a
         * coordinate below 1/2 is exact, docs/fdp.md §5): the curve through
         * them stays below G_mu (R1 of docs/fdp.md §5); y near 1 is then
         * lowered below the diagonal and x = 1 given y = 0 */
        for (size_t i = 0; i < nv; i++) {
            if (vx[i] >= 0.5) vx[i] = nextafter(vx[i], 0);
            if (vy[i] >= 0.5) vy[i] = nextafter(vy[i], 0);
            if (vx[i] + vy[i] >= 1 && vx[i] > 0) vy[i] = nextafter(1 - vx[i], 0);
        }
        /* x values made equal by the move: keep the lowest y (the reference
         * takes strictly increasing x) */
        size_t m = 0;
        for (size_t i = 0; i < nv; i++) {
            if (m && vx[i] <= vx[m - 1]) vy[m - 1] = fmin(vy[m - 1], vy[i]);
            else vx[m] = vx[i], vy[m++] = vy[i];
        }
        nv = m;
        a = leaf_accountant(vx, vy, nv, DPA_METHOD_PLD);
        fs = ref_curve(vx, vy, nv);
        for (int k = 0; k < 8; k++) {
            compare(a, fs, 0.25 * k * mu, "tangent G_mu");
            double eps = 0.25 * k * mu, glo, ghi;
            dpa_result r;
            CHECK(dpa_accountant_delta(a, eps, &r, &err) == DPA_OK, "%s", err.message);
            dpa_tf_gdp_delta(mu, eps, &glo, &ghi, &err);
            /* certified: a curve below G_mu has a profile above G_mu's */
            CHECK(r.upper >= glo, "tangent G_%g eps %g: upper %.17g below G's %.17g", mu, eps, r.upper, glo);
            /* the 4000-vertex discretization (2000 tangents per side down
             * to the 1e-300 tail) lowers the curve: measured within 1.7e-3
             * relative in delta; 5e-3 leaves room */
            CHECK(r.lower <= ghi * 1.005 + 1e-9, "tangent G_%g eps %g: lower %.17g far above G's %.17g", mu, eps,
                  r.lower, ghi);
        }
        dpa_accountant_free(a);
        dpa_tf_free(fs);
        free(vx);
        free(vy);
        dpa_tf_free(d);
        dpa_tf_free(g);
    }
}

/* An asymmetric curve: the leaf accounts max{f, f^-1}, not f alone (the
 * reference checks that in compare), and under composition both
 * directions agree with the symmetric reference's tensor power. */
static void test_asymmetric_composed(void **state)
{
    (void)state;
    static const double x[] = {0, 0.05, 0.3, 1}, y[] = {0.9, 0.3, 0.05, 0};
    dpa_error err;
    dpa_tf *fs = ref_curve(x, y, 4);
    dpa_tf *f = dpa_tf_lower_envelope(x, y, 4, &err);
    double defect = 0;
    dpa_tf_symmetry_defect(f, &defect, &err);
    CHECK(defect > 0.05, "the example is meant to be asymmetric: defect %g", defect);
    dpa_tf_free(f);
    dpa_tf *f2 = dpa_tf_tensor_power(fs, 3, NULL, &err);
    dpa_event *e = dpa_event_tradeoff_curve(x, y, 4, &err);
    dpa_event *rep = dpa_event_repeat(3, e, &err);
    dpa_spec *s = dpa_spec_new(rep, DPA_ADD_REMOVE, &err);
    dpa_options o;
    dpa_options_init(&o);
    o.method = DPA_METHOD_PLD;
    dpa_accountant *a = dpa_accountant_new(s, &o, &err);
    dpa_spec_free(s);
    for (int k = 0; k < 6; k++) compare(a, f2, 0.4 * k, "3-fold asymmetric");
    dpa_accountant_free(a);
    dpa_tf_free(f2);
    dpa_tf_free(fs);
}

static void refused(const double *x, const double *y, size_t n, const char *want)
{
    dpa_error err;
    memset(&err, 0, sizeof err);
    dpa_event *e = dpa_event_tradeoff_curve(x, y, n, &err);
    CHECK(!e && err.status == DPA_EINVAL && strstr(err.message, want), "want \"%s\", got %s", want,
          e ? "an event" : err.message);
    dpa_event_free(e);
}

static void test_refusals(void **state)
{
    (void)state;
    refused((double[]){0, 0.5}, (double[]){1, 0.6}, 2, "point 1: beta 0.59999999999999998 > 1 - alpha");
    refused((double[]){0, 0.3}, (double[]){0.5, 0.52}, 2, "beta must not increase with alpha");
    refused((double[]){0, 1.5}, (double[]){1, 0}, 2, "point 1: alpha must be in [0, 1]");
    refused((double[]){0, NAN}, (double[]){1, 0}, 2, "point 1: alpha must be in [0, 1]");
    refused((double[]){0, 0.2}, (double[]){1, -1e-300}, 2, "point 1: beta must be in [0, 1]");
    refused((double[]){0}, (double[]){1}, 0, "need 1 to");
    /* exactly on the diagonal is allowed; 1e-300 above it is not */
    dpa_error err;
    dpa_event *e = dpa_event_tradeoff_curve((double[]){0.25}, (double[]){0.75}, 1, &err);
    CHECK(e != NULL, "on the diagonal: %s", err.message);
    dpa_event_free(e);
    refused((double[]){1}, (double[]){1e-300}, 1, "> 1 - alpha");
    /* JSON: the path of the offending value */
    test_spec_refused("{\"tradeoff_curve\": {\"points\": [[0, 1], [0.5, 0.7]]}}", "/tradeoff_curve/points: point 1: beta");
    test_spec_refused("{\"tradeoff_curve\": {\"points\": [[0, 1], [0.5, \"x\"]]}}", "/tradeoff_curve/points/1/1: beta: expected a number");
    test_spec_refused("{\"tradeoff_curve\": {\"points\": [[0, 1], [0.5]]}}", "/tradeoff_curve/points/1: expected a pair");
    test_spec_refused("{\"tradeoff_curve\": {\"points\": []}}", "/tradeoff_curve/points: expected a non-empty array");
    test_spec_refused("{\"tradeoff_curve\": {\"pts\": []}}", "unknown key \"pts\"");
    test_spec_refused("{\"tradeoff_curve\": {\"points\": [[0, 1.5]]}}", "/tradeoff_curve/points/0/1: beta must be in [0, 1]");
    /* one point (0.5, 0.5), completed by (0, 0.5) and (1, 0): the envelope
     * f = (1 - x)/2, f^{-1} = max(0, 1 - 2x), max{f, f^{-1}} has the vertex
     * (1/3, 1/3): delta(0) = 1 - 2/3 = 1/3 */
    dpa_result r = test_query_delta("{\"tradeoff_curve\": {\"points\": [[0.5, 0.5]]}}", DPA_METHOD_PLD, 0);
    CHECK(r.upper >= 1.0 / 3 && r.lower <= 1.0 / 3 + 1e-12 && r.upper - r.lower < 1e-3,
          "f = (1 - x)/2: delta(0) [%.17g, %.17g], want 1/3", r.lower, r.upper);
    /* (eps, delta)-DP as a curve: f_{1, 0.01} has vertex alpha = (1 - delta)/(1 + e) */
    double e1 = exp(1), av = 0.99 / (1 + e1);
    char j[256];
    snprintf(j, sizeof j, "{\"tradeoff_curve\": {\"points\": [[0, 0.99], [%.17g, %.17g], [0.99, 0]]}}", av, av);
    r = test_query_delta(j, DPA_METHOD_PLD, 1);
    CHECK(r.upper >= 0.01 && r.lower <= 0.01 * (1 + 1e-9), "f_{1,0.01}: delta(1) [%.17g, %.17g], want 0.01", r.lower,
          r.upper);
}

int main(void)
{
    test_seed_from_env();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_generated, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gaussian, setup, teardown),
        cmocka_unit_test_setup_teardown(test_asymmetric_composed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refusals, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

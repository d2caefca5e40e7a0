/* Generated cases (fixed-seed xorshift64*), each asserting that the certified
 * PLD bounds bracket an independent oracle, lower <= exact <= upper, plus
 * monotonicity of the bounds.
 *
 *  - Gaussian compositions: the exact accountant and a closed form written
 *    here (LT Thm 2.4 with GSL's log erfc, bisection for eps);
 *  - one-step Poisson-subsampled Gaussians: the exact profiles of the remove
 *    pair and its reversal (dpa_pair_log_delta), max over the directions;
 *  - homogeneous (eps, delta) compositions: LT Cor 4.7 / Kairouz in log space
 *    (profile on a random fixed grid step; delta and eps on the automatic grid);
 *  - monotonicity in eps, delta and the number of steps.
 *
 * 550 cases; accuracy 1e-3 and grids of at most 2^16..2^18 points keep them
 * cheap (bounds are certified at any grid, so small grids test soundness as
 * well as large ones).  accuracy_met = 0 is allowed (and counted in the log);
 * accuracy_met = 1 must mean the documented gap.
 *
 * Oracle round-off: the oracles are evaluated in double precision; a relative
 * slack of 1e-9 (eps) or 1e-10 (delta) covers their own error, far below the
 * requested accuracy 1e-3 of the bounds under test.
 *
 * Every failed case is printed (spec, query, bounds, oracle) and counted; a
 * test fails at its end if any case failed.
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
#include <gsl/gsl_sf_erf.h>
#include "dpacct/accountant.h"
#include "dpacct/event.h"
#include "mech/pair.h"

/* ------------------------------------------------------------------ */
/* infrastructure */

static int n_failed, n_cases, n_checks;
/* queries with accuracy_met = 0 (allowed: bounds stay certified; counted
 * and printed so that a loss of tightness shows up in the log) */
static int n_queries, n_unmet;

static void count_met(const dpa_result *r)
{
    n_queries++;
    if (!r->accuracy_met) n_unmet++;
}

#define MAX_PRINTED 40
#define CHECK(cond, ...)                                                        \
    do {                                                                        \
        n_checks++;                                                             \
        if (!(cond)) {                                                          \
            if (n_failed < MAX_PRINTED) {                                       \
                print_error(__VA_ARGS__);                                       \
                print_error("\n");                                              \
            }                                                                   \
            n_failed++;                                                         \
        }                                                                       \
    } while (0)

static int setup(void **state)
{
    (void)state;
    n_failed = n_cases = n_checks = n_queries = n_unmet = 0;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    print_message("    %d generated cases, %d checks; %d of %d automatic-grid queries with accuracy_met = 0\n",
                  n_cases, n_checks, n_unmet, n_queries);
    if (n_failed) fail_msg("%d of %d checks failed (first %d listed above)", n_failed, n_checks, MAX_PRINTED);
    return 0;
}

typedef struct { uint64_t s; } rng;

static uint64_t rng_next(rng *r)
{
    uint64_t x = r->s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    r->s = x;
    return x * 0x2545F4914F6CDD1DULL;
}

static double unif(rng *r) { return (double)(rng_next(r) >> 11) * 0x1.0p-53; }
static double unif_in(rng *r, double a, double b) { return a + (b - a) * unif(r); }
static double log_unif(rng *r, double a, double b) { return exp(unif_in(r, log(a), log(b))); }
/* integer in [a, b], log-uniform */
static double log_unif_int(rng *r, double a, double b)
{
    double k = floor(log_unif(r, a, b + 1.0));
    return fmin(b, fmax(a, k));
}

/* Generated cases use accuracy 1e-3 and a grid of at most 2^18 points: cheap,
 * and the bounds are certified at any step. */
static dpa_options cheap_options(void)
{
    dpa_options o;
    dpa_options_init(&o);
    o.method = DPA_METHOD_PLD;
    o.accuracy = 1e-3;
    o.max_grid = (size_t)1 << 18;
    return o;
}

static dpa_accountant *make(const char *json, const dpa_options *o)
{
    dpa_error err;
    dpa_spec *s = dpa_spec_from_json(json, &err);
    if (!s) fail_msg("spec %s: %s", json, err.message);
    dpa_accountant *a = dpa_accountant_new(s, o, &err);
    dpa_spec_free(s);
    if (!a) fail_msg("accountant for %s: %s", json, err.message);
    return a;
}

static dpa_result eps_query(dpa_accountant *a, const char *json, double delta)
{
    dpa_result r;
    dpa_error err;
    if (dpa_accountant_epsilon(a, delta, &r, &err) != DPA_OK) fail_msg("%s: epsilon(%g): %s", json, delta, err.message);
    return r;
}

static dpa_result delta_query(dpa_accountant *a, const char *json, double eps)
{
    dpa_result r;
    dpa_error err;
    if (dpa_accountant_delta(a, eps, &r, &err) != DPA_OK) fail_msg("%s: delta(%g): %s", json, eps, err.message);
    return r;
}

/* lower <= v <= upper with the oracle's relative slack */
static int brackets(double lo, double up, double v, double rel)
{
    double s = rel * fabs(v) + 1e-300;
    return lo <= v + s && v - s <= up && lo <= up;
}

/* ------------------------------------------------------------------ */
/* Gaussian closed form (LT Thm 2.4), written independently of src/num:
 * log Phi from erfc / GSL's log erfc, delta in log space. */

static double log_phi(double x)
{
    if (x < -20.0) return log(0.5) + gsl_sf_log_erfc(-x / M_SQRT2);
    if (x < 0.0) return log(0.5 * erfc(-x / M_SQRT2));
    return log1p(-0.5 * erfc(x / M_SQRT2));
}

/* log delta_mu(eps) = log(Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)) */
static double gauss_log_delta(double mu, double eps)
{
    double a = log_phi(-eps / mu + 0.5 * mu);
    double b = eps + log_phi(-eps / mu - 0.5 * mu);
    if (!(a > b)) return -INFINITY;
    return a + log(-expm1(b - a));
}

/* smallest eps >= 0 with delta(eps) <= delta, by bisection on a
 * non-increasing log profile */
typedef double (*log_profile)(const void *ctx, double eps);

static double eps_bisect(log_profile f, const void *ctx, double delta)
{
    double ld = log(delta);
    if (f(ctx, 0.0) <= ld) return 0.0;
    double lo = 0.0, hi = 1.0;
    while (f(ctx, hi) > ld) {
        lo = hi;
        hi *= 2;
        if (hi > 1e12) return INFINITY;
    }
    for (int i = 0; i < 200 && hi - lo > 1e-15 * hi; i++) {
        double m = 0.5 * (lo + hi);
        if (f(ctx, m) <= ld) hi = m;
        else lo = m;
    }
    return 0.5 * (lo + hi);
}

static double gauss_profile(const void *ctx, double eps)
{
    return gauss_log_delta(*(const double *)ctx, eps);
}

/* ------------------------------------------------------------------ */
/* 1. Gaussian compositions */

#define N_GAUSS 200

static void test_gaussian_compositions(void **state)
{
    (void)state;
    rng r = {0x9E3779B97F4A7C15ULL};
    dpa_options o = cheap_options();
    dpa_options oe;
    dpa_options_init(&oe);
    oe.method = DPA_METHOD_EXACT;
    char json[256];
    for (int c = 0; c < N_GAUSS; c++) {
        double sigma = log_unif(&r, 0.3, 50.0);
        double k = log_unif_int(&r, 1, 1e5);
        double delta = log_unif(&r, 1e-10, 1e-2);
        snprintf(json, sizeof json, "{\"repeat\":{\"count\":%.17g,\"event\":{\"gaussian\":{\"sigma\":%.17g}}}}", k, sigma);
        double mu = sqrt(k) / sigma;
        double eps_q = unif_in(&r, 0.0, 3.0 * mu * mu);
        n_cases++;

        dpa_accountant *a = make(json, &o), *x = make(json, &oe);
        /* eps */
        dpa_result p = eps_query(a, json, delta), e = eps_query(x, json, delta);
        double v = eps_bisect(gauss_profile, &mu, delta);
        CHECK(p.lower <= e.upper && e.lower <= p.upper,
              "case %d %s: eps(%.17g): pld [%.17g, %.17g] and exact [%.17g, %.17g] are disjoint", c, json, delta,
              p.lower, p.upper, e.lower, e.upper);
        CHECK(brackets(p.lower, p.upper, v, 1e-9), "case %d %s: eps(%.17g): pld [%.17g, %.17g], closed form %.17g",
              c, json, delta, p.lower, p.upper, v);
        CHECK(brackets(e.lower, e.upper, v, 1e-9), "case %d %s: eps(%.17g): exact [%.17g, %.17g], closed form %.17g",
              c, json, delta, e.lower, e.upper, v);
        count_met(&p);
        CHECK(!p.accuracy_met || p.upper - p.lower <= 1e-3 * fmax(1.0, p.upper),
              "case %d %s: eps(%.17g): accuracy_met = 1 with gap %.3g", c, json, delta, p.upper - p.lower);
        CHECK(p.upper_remove == p.upper && p.upper_add == p.upper && p.binding == DPA_DIR_BOTH,
              "case %d %s: a symmetric pair reports directions %.17g / %.17g (binding %d)", c, json,
              p.upper_remove, p.upper_add, (int)p.binding);
        /* delta */
        p = delta_query(a, json, eps_q);
        e = delta_query(x, json, eps_q);
        double dv = exp(gauss_log_delta(mu, eps_q));
        CHECK(p.lower <= e.upper && e.lower <= p.upper,
              "case %d %s: delta(%.17g): pld [%.17g, %.17g] and exact [%.17g, %.17g] are disjoint", c, json, eps_q,
              p.lower, p.upper, e.lower, e.upper);
        CHECK(brackets(p.lower, p.upper, dv, 1e-10), "case %d %s: delta(%.17g): pld [%.17g, %.17g], closed form %.17g",
              c, json, eps_q, p.lower, p.upper, dv);
        CHECK(brackets(e.lower, e.upper, dv, 1e-10),
              "case %d %s: delta(%.17g): exact [%.17g, %.17g], closed form %.17g", c, json, eps_q, e.lower, e.upper, dv);
        count_met(&p);
        CHECK(!p.accuracy_met || p.upper - p.lower <= 1e-3 * p.upper + 1e-14,
              "case %d %s: delta(%.17g): accuracy_met = 1 with gap %.3g", c, json, eps_q, p.upper - p.lower);
        dpa_accountant_free(a);
        dpa_accountant_free(x);
    }
}

/* ------------------------------------------------------------------ */
/* 2. One-step Poisson-subsampled Gaussian: max over the directions */

typedef struct { const dpa_pair *rem, *add; } dir_pairs;

static double max_profile(const void *ctx, double eps)
{
    const dir_pairs *d = ctx;
    return fmax(dpa_pair_log_delta(d->rem, eps), dpa_pair_log_delta(d->add, eps));
}

static double one_profile(const void *ctx, double eps)
{
    return dpa_pair_log_delta((const dpa_pair *)ctx, eps);
}

#define N_POISSON 150
#define N_POISSON_EPS 4

static void test_poisson_one_step(void **state)
{
    (void)state;
    rng r = {0xD1B54A32D192ED03ULL};
    dpa_options o = cheap_options();
    char json[256];
    for (int c = 0; c < N_POISSON; c++) {
        double sigma = log_unif(&r, 0.3, 50.0);
        double q = log_unif(&r, 1e-4, 1.0);
        if (c % 25 == 0) q = 1.0; /* no subsampling: the symmetric Gaussian */
        double delta = log_unif(&r, 1e-10, 1e-2);
        snprintf(json, sizeof json, "{\"poisson\":{\"rate\":%.17g,\"event\":{\"gaussian\":{\"sigma\":%.17g}}}}", q, sigma);
        n_cases++;
        dpa_error err;
        dpa_pair *rem = dpa_pair_poisson(dpa_pair_gaussian(1.0 / sigma, &err), q, &err);
        assert_non_null(rem);
        dpa_pair *cp = dpa_pair_copy(rem, &err);
        assert_non_null(cp);
        dpa_pair *add = dpa_pair_reverse(cp, &err);
        assert_non_null(add);
        dir_pairs dp = {rem, add};

        dpa_accountant *a = make(json, &o);
        for (int i = 0; i < N_POISSON_EPS; i++) {
            double eps = unif_in(&r, -1.0, 5.0);
            dpa_result p = delta_query(a, json, eps);
            double vr = exp(dpa_pair_log_delta(rem, eps)), va = exp(dpa_pair_log_delta(add, eps));
            double v = fmax(vr, va);
            CHECK(brackets(p.lower, p.upper, v, 1e-10),
                  "case %d %s: delta(%.17g): pld [%.17g, %.17g], exact max(remove %.17g, add %.17g)", c, json, eps,
                  p.lower, p.upper, vr, va);
            CHECK(p.upper_remove >= vr * (1 - 1e-10) && p.upper_add >= va * (1 - 1e-10),
                  "case %d %s: delta(%.17g): upper_remove %.17g (exact %.17g), upper_add %.17g (exact %.17g)", c, json,
                  eps, p.upper_remove, vr, p.upper_add, va);
            count_met(&p);
            CHECK(!p.accuracy_met || p.upper - p.lower <= 1e-3 * p.upper + 1e-14,
                  "case %d %s: delta(%.17g): accuracy_met = 1 with gap %.3g", c, json, eps, p.upper - p.lower);
        }
        dpa_result p = eps_query(a, json, delta);
        double v = eps_bisect(max_profile, &dp, delta);
        double vr = eps_bisect(one_profile, rem, delta), va = eps_bisect(one_profile, add, delta);
        CHECK(brackets(p.lower, p.upper, v, 1e-9), "case %d %s: eps(%.17g): pld [%.17g, %.17g], exact %.17g", c, json,
              delta, p.lower, p.upper, v);
        CHECK(p.upper_remove >= vr * (1 - 1e-9) && p.upper_add >= va * (1 - 1e-9),
              "case %d %s: eps(%.17g): upper_remove %.17g (exact %.17g), upper_add %.17g (exact %.17g)", c, json, delta,
              p.upper_remove, vr, p.upper_add, va);
        count_met(&p);
        CHECK(!p.accuracy_met || p.upper - p.lower <= 1e-3 * fmax(1.0, p.upper),
              "case %d %s: eps(%.17g): accuracy_met = 1 with gap %.3g", c, json, delta, p.upper - p.lower);
        dpa_accountant_free(a);
        dpa_pair_free(rem);
        dpa_pair_free(add);
    }
}

/* ------------------------------------------------------------------ */
/* 3. Homogeneous (eps0, delta0) compositions: LT Cor 4.7 / Kairouz
 *    D_k(t) = 1 - (1-d)^k + (1-d)^k E[(1 - e^{t - eps0 (2Y - k)})_+],
 *    Y ~ Bin(k, e^eps0 / (1 + e^eps0)), summed in log space. */

static double kairouz_delta(double e0, double d0, int k, double t)
{
    double lp = -log1p(exp(-e0)), lq = -log1p(exp(e0)); /* log p, log (1 - p) */
    double lk = lgamma(k + 1.0);
    long double E = 0;
    for (int y = 0; y <= k; y++) {
        double s = e0 * (2.0 * y - k);
        if (!(s > t)) continue;
        double lpmf = lk - lgamma(y + 1.0) - lgamma(k - y + 1.0) + y * lp + (k - y) * lq;
        E += (long double)exp(lpmf) * (long double)(-expm1(t - s));
    }
    double l1d = (double)k * log1p(-d0);
    return -expm1(l1d) + exp(l1d) * (double)E;
}

#define N_APPROX 150
#define N_APPROX_T 8

/* Two accountants per case: a fixed grid step (log-uniform, one build, no
 * refinement: the profile at the Kairouz lattice points, where no grid meets
 * a relative accuracy, stays cheap) for the profile, and the automatic grid
 * (accuracy 1e-3, at most 2^16 points) for one delta and one eps query. */
static void test_approx_compositions(void **state)
{
    (void)state;
    rng r = {0xBF58476D1CE4E5B9ULL};
    char json[256];
    for (int c = 0; c < N_APPROX; c++) {
        double e0 = log_unif(&r, 0.01, 2.0);
        double d0 = (c % 4 == 0) ? 0.0 : log_unif(&r, 1e-12, 1e-3);
        int k = (int)log_unif_int(&r, 1, 200);
        snprintf(json, sizeof json, "{\"repeat\":{\"count\":%d,\"event\":{\"approx\":{\"epsilon\":%.17g,\"delta\":%.17g}}}}",
                 k, e0, d0);
        n_cases++;
        /* t: Kairouz lattice points (k - 2i) e0, points between them, and
         * uniform points over the support and a bit beyond */
        double t[N_APPROX_T], up[N_APPROX_T], lo[N_APPROX_T];
        for (int j = 0; j < N_APPROX_T; j++) {
            int i = (int)floor(unif(&r) * (k + 1));
            if (j < 3) t[j] = e0 * (k - 2.0 * i);
            else if (j < 6) t[j] = e0 * (k - 2.0 * i + unif_in(&r, -1.0, 1.0));
            else t[j] = unif_in(&r, -k * e0 - 0.5, k * e0 + 0.5);
        }
        dpa_options fixed = cheap_options();
        /* the composed support is [-k e0, k e0]: keep it within 2^17 points */
        fixed.grid_step = fmax(log_unif(&r, 2e-4, 2e-2), 4.0 * k * e0 / (double)(1 << 17));
        dpa_accountant *a = make(json, &fixed);
        dpa_error err;
        if (dpa_accountant_profile(a, t, N_APPROX_T, up, lo, &err) != DPA_OK)
            fail_msg("%s (grid step %g): profile: %s", json, fixed.grid_step, err.message);
        for (int j = 0; j < N_APPROX_T; j++) {
            double v = kairouz_delta(e0, d0, k, t[j]);
            CHECK(brackets(lo[j], up[j], v, 1e-10), "case %d %s (grid step %.17g): delta(%.17g): pld [%.17g, %.17g], Kairouz %.17g",
                  c, json, fixed.grid_step, t[j], lo[j], up[j], v);
        }
        dpa_accountant_free(a);

        dpa_options o = cheap_options();
        o.max_grid = (size_t)1 << 16;
        a = make(json, &o);
        dpa_result p = delta_query(a, json, t[7]);
        double v = kairouz_delta(e0, d0, k, t[7]);
        CHECK(brackets(p.lower, p.upper, v, 1e-10), "case %d %s: delta(%.17g): pld [%.17g, %.17g], Kairouz %.17g", c,
              json, t[7], p.lower, p.upper, v);
        count_met(&p);
        CHECK(!p.accuracy_met || p.upper - p.lower <= 1e-3 * p.upper + 1e-14,
              "case %d %s: delta(%.17g): accuracy_met = 1 with gap %.3g", c, json, t[7], p.upper - p.lower);
        /* eps at a delta above the +inf mass 1 - (1 - d0)^k */
        double floor_ = -expm1(k * log1p(-d0));
        double dq = log_unif(&r, fmax(1e-9, 2.0 * floor_), fmax(1e-2, 4.0 * floor_));
        if (dq < 0.5) {
            p = eps_query(a, json, dq);
            /* oracle: bisection on the Kairouz profile */
            double lo_e = 0.0, hi_e = k * e0;
            double ve;
            if (kairouz_delta(e0, d0, k, 0.0) <= dq) ve = 0.0;
            else {
                for (int i = 0; i < 200 && hi_e - lo_e > 1e-15 * hi_e; i++) {
                    double m = 0.5 * (lo_e + hi_e);
                    if (kairouz_delta(e0, d0, k, m) <= dq) hi_e = m;
                    else lo_e = m;
                }
                ve = hi_e;
            }
            CHECK(brackets(p.lower, p.upper, ve, 1e-9), "case %d %s: eps(%.17g): pld [%.17g, %.17g], Kairouz %.17g", c,
                  json, dq, p.lower, p.upper, ve);
            count_met(&p);
            CHECK(!p.accuracy_met || p.upper - p.lower <= 1e-3 * fmax(1.0, p.upper),
                  "case %d %s: eps(%.17g): accuracy_met = 1 with gap %.3g", c, json, dq, p.upper - p.lower);
        }
        dpa_accountant_free(a);
    }
}

/* ------------------------------------------------------------------ */
/* 4. Monotonicity */

/* A few ulps of slack: the bounds are sums of rounded terms, and on a flat
 * stretch of the profile (e.g. only the +inf mass left) two equal true values
 * may come out one ulp apart. */
static int le_ulps(double a, double b)
{
    return a <= b || a - b <= 4e-16 * fabs(b) + 1e-300;
}

static void random_spec(rng *r, char *json, size_t n)
{
    switch (rng_next(r) % 5) {
    case 0:
        snprintf(json, n, "{\"repeat\":{\"count\":%.17g,\"event\":{\"gaussian\":{\"sigma\":%.17g}}}}",
                 log_unif_int(r, 1, 1e4), log_unif(r, 0.5, 20));
        break;
    case 1:
        snprintf(json, n, "{\"repeat\":{\"count\":%.17g,\"event\":{\"poisson\":{\"rate\":%.17g,\"event\":{\"gaussian\":{\"sigma\":%.17g}}}}}}",
                 log_unif_int(r, 1, 3000), log_unif(r, 1e-3, 0.5), log_unif(r, 0.5, 5));
        break;
    case 2:
        snprintf(json, n, "{\"repeat\":{\"count\":%.17g,\"event\":{\"approx\":{\"epsilon\":%.17g,\"delta\":%.17g}}}}",
                 log_unif_int(r, 1, 100), log_unif(r, 0.02, 1), log_unif(r, 1e-10, 1e-4));
        break;
    case 3:
        snprintf(json, n, "{\"compose\":[{\"repeat\":{\"count\":%.17g,\"event\":{\"laplace\":{\"scale\":%.17g}}}},"
                 "{\"repeat\":{\"count\":%.17g,\"event\":{\"randomized_response\":{\"epsilon\":%.17g}}}}]}",
                 log_unif_int(r, 1, 50), log_unif(r, 1, 20), log_unif_int(r, 1, 50), log_unif(r, 0.01, 1));
        break;
    default:
        snprintf(json, n, "{\"sample\":{\"n\":1000,\"m\":%.17g,\"event\":{\"gaussian\":{\"sigma\":%.17g}}},\"neighboring\":\"replace\"}",
                 log_unif_int(r, 1, 500), log_unif(r, 0.5, 5));
        break;
    }
}

#define N_MONO 30
#define N_MONO_EPS 40
#define N_MONO_DELTA 10

/* Within one build the bounds are exact functionals of fixed grid measures,
 * so they are monotone (up to ulps): the delta bounds of a profile (all
 * points are evaluated on the final build) over an eps grid, and the eps
 * upper bound over a delta grid queried in increasing order with a fixed grid
 * step (the first, smallest delta sets the smallest tail budget, later
 * queries reuse that build).  Across refinements (automatic grid, deltas in a
 * shuffled order) an earlier answer may come from a coarser grid, and only
 * what soundness implies is asserted: for delta_a < delta_b,
 *   upper(delta_b) <= true(delta_b) + gap(delta_b) <= upper(delta_a) + gap(delta_b),
 *   lower(delta_b) <= upper(delta_a). */
static void test_monotone_in_eps_and_delta(void **state)
{
    (void)state;
    rng r = {0x94D049BB133111EBULL};
    dpa_options o = cheap_options();
    o.max_grid = (size_t)1 << 16;
    char json[512];
    for (int c = 0; c < N_MONO; c++) {
        random_spec(&r, json, sizeof json);
        n_cases++;
        /* delta bounds over an eps grid, from one build (profile) */
        double eps[N_MONO_EPS], up[N_MONO_EPS], lo[N_MONO_EPS];
        for (int i = 0; i < N_MONO_EPS; i++) eps[i] = -2.0 + 12.0 * i / (N_MONO_EPS - 1);
        dpa_accountant *a = make(json, &o);
        dpa_error err;
        if (dpa_accountant_profile(a, eps, N_MONO_EPS, up, lo, &err) != DPA_OK) fail_msg("%s: profile: %s", json, err.message);
        for (int i = 0; i + 1 < N_MONO_EPS; i++) {
            CHECK(le_ulps(up[i + 1], up[i]), "case %d %s: delta upper increases: %.17g at eps %g, %.17g at eps %g", c,
                  json, up[i], eps[i], up[i + 1], eps[i + 1]);
            CHECK(le_ulps(lo[i + 1], lo[i]), "case %d %s: delta lower increases: %.17g at eps %g, %.17g at eps %g", c,
                  json, lo[i], eps[i], lo[i + 1], eps[i + 1]);
            CHECK(lo[i] <= up[i], "case %d %s: lower %.17g > upper %.17g at eps %g", c, json, lo[i], up[i], eps[i]);
        }
        dpa_accountant_free(a);

        double d[N_MONO_DELTA], eu[N_MONO_DELTA], el[N_MONO_DELTA];
        for (int i = 0; i < N_MONO_DELTA; i++) d[i] = pow(10.0, -10.0 + 8.0 * i / (N_MONO_DELTA - 1));

        /* fixed grid step, increasing delta: one build */
        dpa_options of = o;
        of.grid_step = 2e-3;
        of.max_grid = (size_t)1 << 20;
        a = make(json, &of);
        for (int i = 0; i < N_MONO_DELTA; i++) {
            dpa_result p = eps_query(a, json, d[i]);
            eu[i] = p.upper;
            el[i] = p.lower;
        }
        for (int i = 0; i + 1 < N_MONO_DELTA; i++) {
            CHECK(le_ulps(eu[i + 1], eu[i]), "case %d %s (grid step 2e-3): eps upper increases with delta: %.17g at %g, %.17g at %g",
                  c, json, eu[i], d[i], eu[i + 1], d[i + 1]);
            CHECK(le_ulps(el[i + 1], el[i]), "case %d %s (grid step 2e-3): eps lower increases with delta: %.17g at %g, %.17g at %g",
                  c, json, el[i], d[i], el[i + 1], d[i + 1]);
        }
        dpa_accountant_free(a);

        /* automatic grid, shuffled order */
        int order[N_MONO_DELTA];
        for (int i = 0; i < N_MONO_DELTA; i++) order[i] = i;
        for (int i = N_MONO_DELTA - 1; i > 0; i--) {
            int j = (int)(rng_next(&r) % (uint64_t)(i + 1)), t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        a = make(json, &o);
        for (int i = 0; i < N_MONO_DELTA; i++) {
            dpa_result p = eps_query(a, json, d[order[i]]);
            eu[order[i]] = p.upper;
            el[order[i]] = p.lower;
        }
        for (int i = 0; i < N_MONO_DELTA; i++)
            for (int j = i + 1; j < N_MONO_DELTA; j++) {
                double gap = eu[j] - el[j];
                CHECK(!(eu[j] > eu[i] + gap) || isinf(eu[j]),
                      "case %d %s: eps upper %.17g at delta %g exceeds upper %.17g at delta %g by more than its gap %.3g",
                      c, json, eu[j], d[j], eu[i], d[i], gap);
                CHECK(el[j] <= eu[i], "case %d %s: eps lower %.17g at delta %g above upper %.17g at delta %g", c, json,
                      el[j], d[j], eu[i], d[i]);
            }
        dpa_accountant_free(a);
    }
}

/* eps upper is non-decreasing in the number of steps of a subsampled
 * Gaussian (counts spaced by a factor 3, so that the true increase is far
 * above the accuracy 1e-3 the separate accountants work to) */
#define N_MONO_K 20

static void test_monotone_in_steps(void **state)
{
    (void)state;
    rng r = {0x2545F4914F6CDD1DULL};
    dpa_options o = cheap_options();
    static const double ks[] = {1, 3, 10, 30, 100, 300, 1000, 3000};
    const size_t nk = sizeof ks / sizeof *ks;
    char json[256];
    for (int c = 0; c < N_MONO_K; c++) {
        double sigma = log_unif(&r, 0.5, 10.0), q = log_unif(&r, 1e-3, 0.3), delta = log_unif(&r, 1e-9, 1e-3);
        n_cases++;
        double prev = 0, prev_lo = 0;
        for (size_t i = 0; i < nk; i++) {
            snprintf(json, sizeof json,
                     "{\"repeat\":{\"count\":%.17g,\"event\":{\"poisson\":{\"rate\":%.17g,\"event\":{\"gaussian\":{\"sigma\":%.17g}}}}}}",
                     ks[i], q, sigma);
            dpa_accountant *a = make(json, &o);
            dpa_result p = eps_query(a, json, delta);
            CHECK(p.upper >= prev, "case %d %s: eps(%g) upper %.17g below %.17g at count %g", c, json, delta, p.upper,
                  prev, ks[i - (i > 0)]);
            /* implied by soundness alone */
            CHECK(p.upper >= prev_lo, "case %d %s: eps(%g) upper %.17g below the lower bound %.17g at count %g", c,
                  json, delta, p.upper, prev_lo, ks[i - (i > 0)]);
            prev = p.upper;
            prev_lo = p.lower;
            dpa_accountant_free(a);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_gaussian_compositions, setup, teardown),
        cmocka_unit_test_setup_teardown(test_poisson_one_step, setup, teardown),
        cmocka_unit_test_setup_teardown(test_approx_compositions, setup, teardown),
        cmocka_unit_test_setup_teardown(test_monotone_in_eps_and_delta, setup, teardown),
        cmocka_unit_test_setup_teardown(test_monotone_in_steps, setup, teardown),
    };
    /* DPA_TEST_FILTER=pattern runs only the matching tests (cmocka wildcards) */
    const char *filter = getenv("DPA_TEST_FILTER");
    if (filter && *filter) cmocka_set_test_filter(filter);
    return cmocka_run_group_tests(tests, NULL, NULL);
}

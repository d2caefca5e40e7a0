/* Compositions of discrete Gaussians at small deltas (the tilted lattice
 * composition of src/pld/tilted.c, docs/guarantees.md §3.18): certified
 * brackets against an independent oracle (a long-double direct convolution
 * of the discrete Gaussian written here, not the library's pair), over a
 * generated grid of (sigma, count, delta) for eps queries and of
 * (sigma, count, eps) for delta queries, each bracket within the 1e-4
 * accuracy target; and the cases measured before the tilted composition
 * (brackets that missed the target), which must now meet it and intersect
 * the old brackets.
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "dpacct/dpacct.h"
#include "check.h"

/* Relative error allowed to the oracle's delta: every quantity it sums is
 * positive (masses, and the hockey-stick terms P(S)(1 - e^{eps - L})), so a
 * long-double sum of n terms is off by at most n 2^-64 relative, and the
 * direct convolution of N factors of m points by N m 2^-64 (< 3e-15 for
 * N = 50, m = 155 and the n <= 8000 terms of the final sum); expl and
 * expm1l add a few ulp; the truncation at |o| <= 15 sigma + 2 drops a
 * relative e^-112 per factor.  1e-12 covers all of it with room. */
#define ORACLE_REL 1e-12

static void query(const char *json, dpa_method m, int is_eps, double x, dpa_result *r)
{
    dpa_accountant *a = test_accountant(json, m);
    dpa_error err;
    dpa_status st = is_eps ? dpa_accountant_epsilon(a, x, r, &err) : dpa_accountant_delta(a, x, r, &err);
    if (st) fail_msg("%s %s: %s", is_eps ? "epsilon" : "delta", json, err.message);
    dpa_accountant_free(a);
}

/* The oracle: the A-law of the composed loss on the lattice unit Z, as
 * P[i] = A(loss = (i - off) unit), built by direct convolution of the
 * leaves' loss laws, each enumerated here from its output distribution. */
typedef struct oracle {
    double unit;
    long off;
    size_t n, cap;
    long double *P;
} oracle;

/* One leaf of the oracle: outputs o in [-lim, lim + s] with A-weights
 * (normalized here) and loss index idx(o) (loss = idx unit). */
typedef enum { DGAUSS, DLAPLACE } leaf_kind;

/* A-weight and loss index of output o.  Discrete Gaussian (sigma, integer
 * sensitivity s), A = N_Z(0, sigma^2), B = N_Z(s, sigma^2): weight
 * e^{-o^2 / (2 sigma^2)}, loss ((o - s)^2 - o^2) / (2 sigma^2) = s (s - 2 o) / (2 sigma^2).
 * Discrete Laplace (scale, s), A = DLap(0), B = DLap(s): weight e^{-|o| / scale},
 * loss (|o - s| - |o|) / scale. */
static long double leaf_weight(leaf_kind k, double par, int s, long o, double unit, long *idx)
{
    long double loss;
    if (k == DGAUSS) {
        loss = (long double)s * (s - 2 * o) / (2.0L * par * par);
        *idx = lroundl(loss / unit);
        return expl(-(long double)o * o / (2.0L * par * par));
    }
    loss = (long double)(labs(o - s) - labs(o)) / par;
    *idx = lroundl(loss / unit);
    return expl(-(long double)labs(o) / par);
}

/* Compose the loss law p1 (masses at indices imin .. imin + m - 1) count
 * times into o. */
static void oracle_power(oracle *o, const long double *p1, long imin, size_t m, int count)
{
    for (int j = 0; j < count; j++) {
        size_t n2 = o->n + m - 1;
        long double *t = calloc(n2, sizeof *t);
        for (size_t a = 0; a < o->n; a++)
            for (size_t b = 0; b < m; b++) t[a + b] += o->P[a] * p1[b];
        free(o->P);
        o->P = t;
        o->n = n2;
        o->off -= imin;
    }
}

/* Compose the leaf `count` times into o (o->P starts as the point mass at 0). */
static void oracle_add(oracle *o, leaf_kind k, double par, int s, int count)
{
    /* outputs beyond lim carry a relative weight below e^-112 */
    long lim = (long)ceil((k == DGAUSS ? 15 * par : 112 * par)) + 2;
    long imin = LONG_MAX, imax = LONG_MIN, idx;
    long double z = 0;
    for (long x = -lim; x <= lim + s; x++) {
        z += leaf_weight(k, par, s, x, o->unit, &idx);
        if (idx < imin) imin = idx;
        if (idx > imax) imax = idx;
    }
    size_t m = (size_t)(imax - imin + 1);
    long double *p1 = calloc(m, sizeof *p1);
    for (long x = -lim; x <= lim + s; x++) {
        long double w = leaf_weight(k, par, s, x, o->unit, &idx);
        p1[idx - imin] += w / z;
    }
    oracle_power(o, p1, imin, m, count);
    free(p1);
}

static void oracle_init(oracle *o, double unit)
{
    o->unit = unit;
    o->off = 0;
    o->n = 1;
    o->P = calloc(1, sizeof *o->P);
    o->P[0] = 1;
}

/* delta(eps) = sum over losses L > eps of A(L) (1 - e^{eps - L}) */
static long double oracle_delta(const oracle *o, double eps)
{
    long double d = 0;
    for (size_t i = 0; i < o->n; i++) {
        long double L = ((long double)i - o->off) * o->unit;
        if (L > eps) d += o->P[i] * -expm1l((long double)eps - L);
    }
    return d;
}

/* The N-fold composition of the discrete Gaussian (sensitivity 1; loss unit
 * 1 / (2 sigma^2)). */
static void oracle_build(oracle *o, double sigma, int N)
{
    oracle_init(o, 1 / (2 * sigma * sigma));
    oracle_add(o, DGAUSS, sigma, 1, N);
}

/* [*lo, *hi] containing the true eps(delta): delta(*lo) > delta and
 * delta(*hi) <= delta even with the oracle's error */
static void oracle_eps(const oracle *o, double delta, double *lo, double *hi)
{
    double a = 0, b = 1;
    while (oracle_delta(o, b) * (1 - ORACLE_REL) > delta) b *= 2;
    for (int it = 0; it < 100 && b - a > 1e-12 * fmax(1.0, b); it++) {
        double m = 0.5 * (a + b);
        long double d = oracle_delta(o, m);
        if (d * (1 - ORACLE_REL) > delta) a = m;
        else if (d * (1 + ORACLE_REL) <= delta) b = m;
        else break; /* within the oracle's error of delta: stop, [a, b] still holds */
    }
    *lo = a;
    *hi = b;
}

static void spec_of(char *buf, size_t len, double sigma, int N)
{
    snprintf(buf, len, "{\"repeat\": {\"count\": %d, \"event\": {\"discrete_gaussian\": {\"sigma\": %.17g}}}}", N, sigma);
}

/* eps and delta queries over a grid of (sigma, N) against the oracle */
static void test_against_oracle(void **state)
{
    (void)state;
    const double sigmas[] = {0.5, 0.8, 1.5, 3, 5};
    const int counts[] = {1, 4, 17, 50};
    const double deltas[] = {1e-6, 1e-10, 1e-12};
    int eps_cases = 0, delta_cases = 0;
    for (size_t i = 0; i < sizeof sigmas / sizeof *sigmas; i++)
        for (size_t j = 0; j < sizeof counts / sizeof *counts; j++) {
            if (SANITIZED && (i + j) % 3) continue; /* a third of the grid in sanitizer builds */
            oracle o;
            oracle_build(&o, sigmas[i], counts[j]);
            char spec[256];
            spec_of(spec, sizeof spec, sigmas[i], counts[j]);
            for (size_t k = 0; k < sizeof deltas / sizeof *deltas; k++) {
                double lo, hi;
                oracle_eps(&o, deltas[k], &lo, &hi);
                dpa_result r;
                query(spec, (eps_cases % 2) ? DPA_METHOD_AUTO : DPA_METHOD_PLD, 1, deltas[k], &r);
                CHECK(r.lower <= hi && lo <= r.upper,
                      "sigma %g N %d eps(%g): [%.17g, %.17g] misses the oracle's [%.17g, %.17g]", sigmas[i], counts[j],
                      deltas[k], r.lower, r.upper, lo, hi);
                CHECK(r.upper - r.lower <= 1e-4 * fmax(1.0, r.upper) && r.accuracy_met,
                      "sigma %g N %d eps(%g): gap %.3g of [%.17g, %.17g] above the target (met %d)", sigmas[i],
                      counts[j], deltas[k], r.upper - r.lower, r.lower, r.upper, r.accuracy_met);
                eps_cases++;
                /* delta at the oracle's eps for this delta (a lattice point
                 * or not: a quarter of the lattice spacing off) */
                double eps = 0.5 * (lo + hi) + (k == 1 ? 0.25 / (2 * sigmas[i] * sigmas[i]) : 0);
                long double d = oracle_delta(&o, eps);
                if (d < 1e-13L) continue;
                query(spec, DPA_METHOD_PLD, 0, eps, &r);
                CHECK(r.lower <= (double)(d * (1 + ORACLE_REL)) && (double)(d * (1 - ORACLE_REL)) <= r.upper,
                      "sigma %g N %d delta(%.17g): [%.17g, %.17g] misses the oracle's %.17Lg", sigmas[i], counts[j],
                      eps, r.lower, r.upper, d);
                CHECK(r.upper - r.lower <= 1e-4 * r.upper,
                      "sigma %g N %d delta(%.17g): gap %.3g of [%.17g, %.17g] above 1e-4 relative", sigmas[i],
                      counts[j], eps, r.upper - r.lower, r.lower, r.upper);
                delta_cases++;
            }
            free(o.P);
        }
    CHECK(eps_cases >= (SANITIZED ? 15 : 60) && delta_cases >= (SANITIZED ? 10 : 40), "only %d eps and %d delta cases",
          eps_cases, delta_cases);
}

/* Other lattice compositions against the oracle: discrete Laplace
 * (sensitivity 1 and 3) and a composition of two discrete Gaussians on a
 * common lattice (sigma 1, sensitivity 1: losses (1 - 2 o) / 2; sigma 2,
 * sensitivity 2: (1 - o) / 2; unit 1/2). */
static void test_other_lattices(void **state)
{
    (void)state;
    static const struct { const char *spec; double unit; leaf_kind k[2]; double par[2]; int s[2], n[2]; } c[] = {
        {"{\"repeat\": {\"count\": 40, \"event\": {\"discrete_laplace\": {\"scale\": 3}}}}", 1.0 / 3, {DLAPLACE, DLAPLACE},
         {3, 3}, {1, 1}, {40, 0}},
        {"{\"repeat\": {\"count\": 100, \"event\": {\"discrete_laplace\": {\"scale\": 2, \"sensitivity\": 3}}}}", 0.5,
         {DLAPLACE, DLAPLACE}, {2, 2}, {3, 3}, {100, 0}},
        {"{\"compose\": [{\"repeat\": {\"count\": 20, \"event\": {\"discrete_gaussian\": {\"sigma\": 1}}}},"
         " {\"repeat\": {\"count\": 15, \"event\": {\"discrete_gaussian\": {\"sigma\": 2, \"sensitivity\": 2}}}}]}",
         0.5, {DGAUSS, DGAUSS}, {1, 2}, {1, 2}, {20, 15}},
    };
    const double deltas[] = {1e-8, 1e-10, 1e-12};
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        oracle o;
        oracle_init(&o, c[i].unit);
        for (int j = 0; j < 2; j++)
            if (c[i].n[j]) oracle_add(&o, c[i].k[j], c[i].par[j], c[i].s[j], c[i].n[j]);
        for (size_t k = 0; k < sizeof deltas / sizeof *deltas; k++) {
            double lo, hi;
            oracle_eps(&o, deltas[k], &lo, &hi);
            dpa_result r;
            query(c[i].spec, DPA_METHOD_PLD, 1, deltas[k], &r);
            CHECK(r.lower <= hi && lo <= r.upper && r.upper - r.lower <= 1e-4 * fmax(1.0, r.upper),
                  "%s eps(%g): [%.17g, %.17g], oracle [%.17g, %.17g]", c[i].spec, deltas[k], r.lower, r.upper, lo, hi);
            double eps = 0.5 * (lo + hi) + 0.1 * c[i].unit;
            long double d = oracle_delta(&o, eps);
            if (d < 1e-13L) continue;
            query(c[i].spec, DPA_METHOD_PLD, 0, eps, &r);
            CHECK(r.lower <= (double)(d * (1 + ORACLE_REL)) && (double)(d * (1 - ORACLE_REL)) <= r.upper &&
                      r.upper - r.lower <= 1e-4 * r.upper,
                  "%s delta(%.17g): [%.17g, %.17g], oracle %.17Lg", c[i].spec, eps, r.lower, r.upper, d);
        }
        free(o.P);
    }
}

/* An asymmetric lattice pair (both directions composed): a privacy loss
 * table with A-masses m1, m2 at losses -1, 1/2, where m1 e + m2 e^-1/2
 * rounds to at least 1, so B has no mass left at -inf and the reversed
 * (add) pair has none at +inf: B-masses m1 e at loss +1 and m2 e^-1/2 at
 * -1/2.  The add direction binds. */
static void test_asymmetric(void **state)
{
    (void)state;
    const double m1 = 0.1863237232258477;
    char spec[256];
    snprintf(spec, sizeof spec,
             "{\"repeat\": {\"count\": 200, \"event\": {\"privacy_loss\": {\"loss\": [-1, 0.5], \"mass\": [%.17g, %.17g]}}}}",
             m1, 1 - m1);
    oracle o[2];
    for (int d = 0; d < 2; d++) {
        /* unit 1/2: remove -1 -> -2, 1/2 -> 1; add +1 -> 2, -1/2 -> -1 */
        long double p[4] = {0, 0, 0, 0};
        if (d == 0) { p[0] = m1; p[3] = 1 - m1; }
        else { p[3] = m1 * expl(1); p[0] = (1 - m1) * expl(-0.5L); }
        oracle_init(&o[d], 0.5);
        oracle_power(&o[d], p, d == 0 ? -2 : -1, 4, 200);
    }
    for (int k = 0; k < 2; k++) {
        double delta = k ? 1e-12 : 1e-10, lo[2], hi[2];
        for (int d = 0; d < 2; d++) oracle_eps(&o[d], delta, &lo[d], &hi[d]);
        dpa_result r;
        query(spec, DPA_METHOD_PLD, 1, delta, &r);
        CHECK(r.binding == DPA_DIR_ADD && r.lower <= hi[1] && lo[1] <= r.upper && r.upper_remove >= lo[0] &&
                  r.upper - r.lower <= 1e-4 * fmax(1.0, r.upper),
              "asymmetric table eps(%g): [%.17g, %.17g] (remove upper %.17g), oracle add [%.17g, %.17g], remove %.17g",
              delta, r.lower, r.upper, r.upper_remove, lo[1], hi[1], lo[0]);
    }
    free(o[0].P);
    free(o[1].P);
}

/* The cases measured on main before the tilted composition (eps at delta
 * 1e-10; the grid's round-off allowance was of the order of delta):
 * certified brackets then, so the new ones must intersect them, and meet
 * the target now. */
static void test_measured_cases(void **state)
{
    (void)state;
    static const struct { double sigma; int N; double lo, hi; } c[] = {
        {10, 1000, 24.535719353589904, 24.606375061633248},
        {2, 1000, 224.03696760209507, 225.72678680325581},
        {0.5, 1000, 2355.0766188141251, 29999.999999999931},
        {0.5, 10, 59.777143740719104, 59.875177746655645},
        {10, 10, 1.9089807459916717, 1.9094030518271685},
    };
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        char spec[256];
        spec_of(spec, sizeof spec, c[i].sigma, c[i].N);
        for (int m = 0; m < 2; m++) {
            dpa_result r;
            query(spec, m ? DPA_METHOD_AUTO : DPA_METHOD_PLD, 1, 1e-10, &r);
            CHECK(r.method == DPA_METHOD_PLD && r.upper - r.lower <= 1e-4 * fmax(1.0, r.upper) && r.accuracy_met &&
                      r.upper_source == DPA_SOURCE_METHOD,
                  "sigma %g N %d eps(1e-10): [%.17g, %.17g] (met %d, source %d)", c[i].sigma, c[i].N, r.lower, r.upper,
                  r.accuracy_met, (int)r.upper_source);
            CHECK(r.lower <= c[i].hi && c[i].lo <= r.upper,
                  "sigma %g N %d eps(1e-10): [%.17g, %.17g] does not meet the old bracket [%.17g, %.17g]", c[i].sigma,
                  c[i].N, r.lower, r.upper, c[i].lo, c[i].hi);
        }
    }
    /* delta 1e-12 (below every case above) and the delta query at the eps found */
    char spec[256];
    spec_of(spec, sizeof spec, 10, 1000);
    dpa_result r, rd;
    query(spec, DPA_METHOD_PLD, 1, 1e-12, &r);
    CHECK(r.upper - r.lower <= 1e-4 * r.upper && r.lower > 26.7 && r.upper < 26.75, "sigma 10 N 1000 eps(1e-12): [%.17g, %.17g]",
          r.lower, r.upper);
    query(spec, DPA_METHOD_PLD, 0, r.lower, &rd);
    CHECK(rd.lower > 1e-12 && rd.upper - rd.lower <= 1e-4 * rd.upper,
          "sigma 10 N 1000 delta(%.17g): [%.17g, %.17g], want above 1e-12 and within 1e-4", r.lower, rd.lower, rd.upper);
}

/* Where the grid meets the target (delta 1e-5) the tilted composition is not
 * used: the result is the grid's, with its FFT length. */
static void test_grid_kept(void **state)
{
    (void)state;
    char spec[256];
    spec_of(spec, sizeof spec, 10, 1000);
    dpa_result r;
    query(spec, DPA_METHOD_PLD, 1, 1e-5, &r);
    CHECK(r.accuracy_met && r.grid_step == 0.005 && r.grid_size == 12288 && r.roundoff > 1e-13,
          "sigma 10 N 1000 eps(1e-5): step %.17g size %zu roundoff %.3g, want the grid's (0.005, 12288)", r.grid_step,
          r.grid_size, r.roundoff);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_against_oracle, setup, teardown),
        cmocka_unit_test_setup_teardown(test_other_lattices, setup, teardown),
        cmocka_unit_test_setup_teardown(test_asymmetric, setup, teardown),
        cmocka_unit_test_setup_teardown(test_measured_cases, setup, teardown),
        cmocka_unit_test_setup_teardown(test_grid_kept, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

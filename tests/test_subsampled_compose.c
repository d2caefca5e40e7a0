/* Subsampling of a composition (one batch shared by several mechanisms):
 * {"poisson": {"rate": q, "event": {"compose": [...]}}} and "sample" over a
 * compose, through the public API, against
 *   - brute-force enumeration of the exact atoms for (eps, delta) leaves
 *     (the composed pair, its Poisson map, the replace-one symmetrization,
 *     k-fold products, both directions), in long double;
 *   - the closed form for Gaussian inner compositions (two Gaussians on one
 *     batch are one Gaussian with mu = sqrt(mu_1^2 + mu_2^2)), reached both
 *     through the composite machinery and through the collapsed Gaussian;
 *   - properties: sharing a batch never gives a smaller eps than subsampling
 *     each mechanism separately (brackets must allow that order), and the
 *     bounds are monotone in delta.
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

#include "check.h"

/* ------------------------------------------------------------ brute force */

/* An atom of a pair (A, B): loss w (+-inf allowed), masses a = A{w}, b = B{w}. */
typedef struct atom { long double w, a, b; } atom;
typedef struct alist { atom *v; size_t n; } alist;

static alist alist_new(size_t n)
{
    alist l = {calloc(n ? n : 1, sizeof(atom)), 0};
    assert_non_null(l.v);
    return l;
}

static void push(alist *l, long double w, long double a, long double b)
{
    if (a == 0 && b == 0) return;
    l->v[l->n++] = (atom){w, a, b};
}

/* RR_{eps, delta} (LT Thm 4.5), the pair of an (eps, delta) step */
static alist rr(long double eps, long double delta)
{
    alist l = alist_new(4);
    long double p = expl(eps) / (1 + expl(eps)), r = 1 / (1 + expl(eps));
    push(&l, -INFINITY, 0, delta);
    if (eps == 0) push(&l, 0, 1 - delta, 1 - delta);
    else {
        push(&l, -eps, (1 - delta) * r, (1 - delta) * p);
        push(&l, eps, (1 - delta) * p, (1 - delta) * r);
    }
    push(&l, INFINITY, delta, 0);
    return l;
}

/* product pair: losses add (+inf absorbing; +inf + -inf has mass 0) */
static alist product(const alist *x, const alist *y)
{
    alist l = alist_new(x->n * y->n);
    for (size_t i = 0; i < x->n; i++)
        for (size_t j = 0; j < y->n; j++) {
            long double a = x->v[i].a * y->v[j].a, b = x->v[i].b * y->v[j].b;
            long double w = x->v[i].w + y->v[j].w;
            if (isnan(w)) continue; /* +inf with -inf: a and b are both 0 */
            push(&l, w, a, b);
        }
    return l;
}

/* remove direction of Poisson subsampling: (qA + (1-q)B, B) */
static alist poisson(const alist *x, long double q)
{
    alist l = alist_new(x->n);
    for (size_t i = 0; i < x->n; i++) {
        long double w = x->v[i].w;
        long double wq = w == INFINITY ? INFINITY : (w == -INFINITY ? log1pl(-q) : logl(q * expl(w) + 1 - q));
        push(&l, wq, q * x->v[i].a + (1 - q) * x->v[i].b, x->v[i].b);
    }
    return l;
}

/* replace-one symmetrization (docs/sampling.md): W > 0 part, its mirror, an
 * atom at 0 holding 1 - A(W > 0) - B(W > 0) */
static alist symmetrize(const alist *x)
{
    alist l = alist_new(2 * x->n + 1);
    long double ap = 0, bp = 0;
    for (size_t i = 0; i < x->n; i++)
        if (x->v[i].w > 0) {
            push(&l, x->v[i].w, x->v[i].a, x->v[i].b);
            push(&l, -x->v[i].w, x->v[i].b, x->v[i].a);
            ap += x->v[i].a;
            bp += x->v[i].b;
        }
    push(&l, 0, 1 - ap - bp, 1 - ap - bp);
    return l;
}

static alist power(const alist *x, int k)
{
    alist acc = alist_new(1);
    push(&acc, 0, 1, 1);
    for (int i = 0; i < k; i++) {
        alist t = product(&acc, x);
        free(acc.v);
        acc = t;
    }
    return acc;
}

/* delta(eps) = max over directions of sum (A - e^eps B)_+ (remove) and
 * sum (B - e^eps A)_+ (add) */
static long double bf_delta(const alist *x, long double eps)
{
    long double r = 0, d = 0, e = expl(eps);
    for (size_t i = 0; i < x->n; i++) {
        long double v = x->v[i].a - e * x->v[i].b, u = x->v[i].b - e * x->v[i].a;
        if (v > 0) r += v;
        if (u > 0) d += u;
    }
    return r > d ? r : d;
}

/* brute-force reference vs accountant at many eps, and eps(delta) consistency */
static void compare(const char *json, const alist *ref)
{
    dpa_accountant *a = test_accountant(json, DPA_METHOD_AUTO);
    dpa_result res;
    dpa_error err;
    /* reference round-off (long double over a few thousand atoms) */
    const long double slack = 1e-16L;
    for (double eps = -3; eps <= 6; eps += 0.173) {
        assert_int_equal(dpa_accountant_delta(a, eps, &res, &err), DPA_OK);
        long double t = bf_delta(ref, eps);
        CHECK(res.lower <= t + slack && t - slack <= res.upper,
              "BRACKET %s: delta(%g) in [%.17g, %.17g], brute force %.17Lg", json, eps, res.lower, res.upper, t);
        /* the accuracy target (1e-4 relative) up to the PLD's absolute
         * round-off floor (~1e-12 here) */
        CHECK(res.upper - res.lower <= 1e-3 * res.upper + 1e-11,
              "LOOSE %s: delta(%g) in [%.17g, %.17g]", json, eps, res.lower, res.upper);
    }
    const double deltas[] = {0.3, 0.1, 1e-2, 1e-3, 1e-4, 1e-6};
    for (size_t i = 0; i < sizeof deltas / sizeof *deltas; i++) {
        double delta = deltas[i];
        assert_int_equal(dpa_accountant_epsilon(a, delta, &res, &err), DPA_OK);
        CHECK(res.lower <= res.upper, "%s: eps(%g) bounds out of order", json, delta);
        /* the true eps is the smallest with delta(eps) <= delta: at the
         * upper bound the profile is within delta, below the lower bound it
         * is above */
        if (isfinite(res.upper))
            CHECK(bf_delta(ref, res.upper) <= delta + slack, "BRACKET %s: eps(%g) upper %.17g: brute-force delta %.17Lg",
                  json, delta, res.upper, bf_delta(ref, res.upper));
        if (res.lower > 0 && isfinite(res.lower))
            CHECK(bf_delta(ref, nextafter(res.lower, 0)) >= delta - slack,
                  "BRACKET %s: eps(%g) lower %.17g: brute-force delta just below it %.17Lg", json, delta, res.lower,
                  bf_delta(ref, nextafter(res.lower, 0)));
    }
    dpa_accountant_free(a);
}

/* poisson(q, compose[RR(e1, d1), RR(e2, d2)]) repeated k times */
static void test_poisson_rr_pairs(void **state)
{
    (void)state;
    const struct { double e1, d1, e2, d2, q; int k; } cs[] = {
        {1.0, 0, 0.5, 0, 0.3, 1},  {1.0, 0, 0.5, 0, 0.3, 3},   {0.7, 1e-3, 0.2, 0, 0.1, 2},
        {2.0, 0, 2.0, 0, 0.5, 3},  {0.3, 1e-4, 1.5, 1e-5, 0.05, 4}, {1.0, 0, 0.5, 0, 1.0, 2},
    };
    char json[512];
    for (size_t i = 0; i < sizeof cs / sizeof *cs; i++) {
        snprintf(json, sizeof json,
                 "{\"repeat\":{\"count\":%d,\"event\":{\"poisson\":{\"rate\":%.17g,\"event\":{\"compose\":["
                 "{\"approx\":{\"epsilon\":%.17g,\"delta\":%.17g}},{\"approx\":{\"epsilon\":%.17g,\"delta\":%.17g}}]}}}}}",
                 cs[i].k, cs[i].q, cs[i].e1, cs[i].d1, cs[i].e2, cs[i].d2);
        alist x = rr(cs[i].e1, cs[i].d1), y = rr(cs[i].e2, cs[i].d2);
        alist in = product(&x, &y);
        alist s = poisson(&in, cs[i].q);
        alist all = power(&s, cs[i].k);
        compare(json, &all);
        free(x.v); free(y.v); free(in.v); free(s.v); free(all.v);
    }
}

/* poisson(q1, compose[poisson(q2, RR(e1)), RR(e2)]): an asymmetric inner
 * composition (its add direction differs from its remove direction) */
static void test_poisson_nested(void **state)
{
    (void)state;
    char json[512];
    const double q1 = 0.2, q2 = 0.4, e1 = 1.2, e2 = 0.4;
    snprintf(json, sizeof json,
             "{\"repeat\":{\"count\":3,\"event\":{\"poisson\":{\"rate\":%.17g,\"event\":{\"compose\":["
             "{\"poisson\":{\"rate\":%.17g,\"event\":{\"pure\":{\"epsilon\":%.17g}}}},{\"pure\":{\"epsilon\":%.17g}}]}}}}}",
             q1, q2, e1, e2);
    alist x = rr(e1, 0), xs = poisson(&x, q2), y = rr(e2, 0);
    alist in = product(&xs, &y);
    alist s = poisson(&in, q1);
    alist all = power(&s, 3);
    compare(json, &all);
    free(x.v); free(xs.v); free(y.v); free(in.v); free(s.v); free(all.v);
}

/* sample m of n over a composition, replace-one neighbouring */
static void test_sample_compose(void **state)
{
    (void)state;
    char json[512];
    snprintf(json, sizeof json,
             "{\"neighboring\":\"replace\",\"repeat\":{\"count\":2,\"event\":{\"sample\":{\"n\":10,\"m\":3,"
             "\"event\":{\"compose\":[{\"pure\":{\"epsilon\":0.5}},{\"randomized_response\":{\"epsilon\":1}}]}}}}}");
    alist x = rr(0.5, 0), y = rr(1, 0);
    alist in = product(&x, &y);
    alist p = poisson(&in, 0.3);
    alist s = symmetrize(&p);
    alist all = power(&s, 2);
    compare(json, &all);
    free(x.v); free(y.v); free(in.v); free(p.v); free(s.v); free(all.v);
}

/* Gaussian inner compositions: the composite machinery (forced by a rate-1
 * poisson wrapper, which makes the inner set not all-Gaussian) against the
 * collapsed Gaussian mu = sqrt(1/s1^2 + 1/s2^2): both brackets contain the
 * truth, so they must intersect; and the collapsed form must be what a
 * plain compose of Gaussians gives. */
static void test_gaussian_inner(void **state)
{
    (void)state;
    const struct { double s1, s2, q; int k; double delta; } cs[] = {
        {1.0, 1.0, 0.01, 1000, 1e-5}, {0.8, 2.0, 0.05, 200, 1e-6}, {1.5, 1.5, 0.2, 10, 1e-3}, {1.0, 3.0, 0.5, 1, 1e-5},
    };
    char j1[512], j2[512], j3[512];
    for (size_t i = 0; i < sizeof cs / sizeof *cs; i++) {
        double mu = sqrt(1 / (cs[i].s1 * cs[i].s1) + 1 / (cs[i].s2 * cs[i].s2));
        snprintf(j1, sizeof j1,
                 "{\"repeat\":{\"count\":%d,\"event\":{\"poisson\":{\"rate\":%.17g,\"event\":{\"compose\":["
                 "{\"gaussian\":{\"sigma\":%.17g}},{\"poisson\":{\"rate\":1,\"event\":{\"gaussian\":{\"sigma\":%.17g}}}}]}}}}}",
                 cs[i].k, cs[i].q, cs[i].s1, cs[i].s2);
        snprintf(j2, sizeof j2,
                 "{\"repeat\":{\"count\":%d,\"event\":{\"poisson\":{\"rate\":%.17g,\"event\":{\"gdp\":{\"mu\":%.17g}}}}}}",
                 cs[i].k, cs[i].q, mu);
        snprintf(j3, sizeof j3,
                 "{\"repeat\":{\"count\":%d,\"event\":{\"poisson\":{\"rate\":%.17g,\"event\":{\"compose\":["
                 "{\"gaussian\":{\"sigma\":%.17g}},{\"gaussian\":{\"sigma\":%.17g}}]}}}}}",
                 cs[i].k, cs[i].q, cs[i].s1, cs[i].s2);
        dpa_result r1, r2, r3;
        dpa_error err;
        dpa_accountant *a1 = test_accountant(j1, DPA_METHOD_PLD), *a2 = test_accountant(j2, DPA_METHOD_PLD), *a3 = test_accountant(j3, DPA_METHOD_PLD);
        assert_int_equal(dpa_accountant_epsilon(a1, cs[i].delta, &r1, &err), DPA_OK);
        assert_int_equal(dpa_accountant_epsilon(a2, cs[i].delta, &r2, &err), DPA_OK);
        assert_int_equal(dpa_accountant_epsilon(a3, cs[i].delta, &r3, &err), DPA_OK);
        CHECK(r1.lower <= r2.upper && r2.lower <= r1.upper,
              "DISJOINT %s: composite [%.17g, %.17g] vs closed form [%.17g, %.17g]", j1, r1.lower, r1.upper, r2.lower,
              r2.upper);
        CHECK(r1.accuracy_met && r1.upper - r1.lower <= 1e-4 * fmax(1, r1.upper), "LOOSE %s: [%.17g, %.17g]", j1,
              r1.lower, r1.upper);
        /* the collapsed inner Gaussian is the same pair as the gdp leaf */
        CHECK(r3.upper == r2.upper && r3.lower == r2.lower, "COLLAPSE %s: [%.17g, %.17g] vs gdp [%.17g, %.17g]", j3,
              r3.lower, r3.upper, r2.lower, r2.upper);
        for (double eps = 0; eps <= 3; eps += 0.5) {
            assert_int_equal(dpa_accountant_delta(a1, eps, &r1, &err), DPA_OK);
            assert_int_equal(dpa_accountant_delta(a2, eps, &r2, &err), DPA_OK);
            CHECK(r1.lower <= r2.upper && r2.lower <= r1.upper,
                  "DISJOINT %s: delta(%g) composite [%.17g, %.17g] vs closed form [%.17g, %.17g]", j1, eps, r1.lower,
                  r1.upper, r2.lower, r2.upper);
        }
        dpa_accountant_free(a1);
        dpa_accountant_free(a2);
        dpa_accountant_free(a3);
    }
}

/* One shared batch is less private than separate batches: the issue's
 * example: 200 rounds of a Gaussian and a Laplace mechanism at q = 0.01. */
static void test_shared_vs_separate(void **state)
{
    (void)state;
    const char *shared = "{\"repeat\":{\"count\":200,\"event\":{\"poisson\":{\"rate\":0.01,\"event\":{\"compose\":["
                         "{\"gaussian\":{\"sigma\":1}},{\"laplace\":{\"scale\":1}}]}}}}}";
    const char *separate = "{\"repeat\":{\"count\":200,\"event\":{\"compose\":["
                           "{\"poisson\":{\"rate\":0.01,\"event\":{\"gaussian\":{\"sigma\":1}}}},"
                           "{\"poisson\":{\"rate\":0.01,\"event\":{\"laplace\":{\"scale\":1}}}}]}}}";
    dpa_accountant *a = test_accountant(shared, DPA_METHOD_AUTO), *b = test_accountant(separate, DPA_METHOD_AUTO);
    dpa_result rs, rp;
    dpa_error err;
    double prev_up = INFINITY, prev_lo = INFINITY;
    const double deltas[] = {1e-3, 1e-5, 1e-7};
    for (size_t i = 0; i < sizeof deltas / sizeof *deltas; i++) {
        assert_int_equal(dpa_accountant_epsilon(a, deltas[i], &rs, &err), DPA_OK);
        assert_int_equal(dpa_accountant_epsilon(b, deltas[i], &rp, &err), DPA_OK);
        CHECK(rs.upper >= rp.lower, "ORDER delta %g: shared batch [%.17g, %.17g] below separate [%.17g, %.17g]",
              deltas[i], rs.lower, rs.upper, rp.lower, rp.upper);
        /* for these rates sharing costs real privacy: a clear gap */
        CHECK(rs.lower > rp.upper, "GAP delta %g: shared [%.17g, %.17g] vs separate [%.17g, %.17g]", deltas[i],
              rs.lower, rs.upper, rp.lower, rp.upper);
        CHECK(rs.lower <= rs.upper && isfinite(rs.upper), "shared eps(%g) [%.17g, %.17g]", deltas[i], rs.lower,
              rs.upper);
        /* eps grows as delta shrinks, for both bounds up to the bracket */
        CHECK(rs.upper >= rs.lower && rs.lower >= 0 && (i == 0 || (rs.upper >= prev_lo && prev_up <= rs.upper + 1e-3)),
              "MONOTONE delta %g", deltas[i]);
        prev_up = rs.upper;
        prev_lo = rs.lower;
    }
    dpa_accountant_free(a);
    dpa_accountant_free(b);
}

/* What is still refused says so, without suggesting a different mechanism. */
static void test_errors(void **state)
{
    (void)state;
    dpa_error err;
    dpa_spec *s = dpa_spec_from_json(
        "{\"poisson\":{\"rate\":0.1,\"event\":{\"compose\":[{\"gaussian\":{\"sigma\":1}},{\"zcdp\":{\"rho\":0.1}}]}}}", &err);
    assert_non_null(s);
    dpa_accountant *a = dpa_accountant_new(s, NULL, &err);
    assert_null(a);
    assert_int_equal(err.status, DPA_EUNSUPPORTED);
    assert_non_null(strstr(err.message, "/poisson/event/compose/1/zcdp"));
    assert_null(strstr(err.message, "subsample each"));
    dpa_spec_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_poisson_rr_pairs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_poisson_nested, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sample_compose, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gaussian_inner, setup, teardown),
        cmocka_unit_test_setup_teardown(test_shared_vs_separate, setup, teardown),
        cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
    };
    if (getenv("DPA_TEST_FILTER")) cmocka_set_test_filter(getenv("DPA_TEST_FILTER"));
    return cmocka_run_group_tests(tests, NULL, NULL);
}

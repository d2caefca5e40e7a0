/* A mechanism given by points of its privacy profile
 * ({"privacy_profile": {"epsilon": [...], "delta": [...]}}): parsing,
 * serialization, the pair against an independent construction, and the
 * accountants against brute force.
 *
 * Reference (independent of src/mech/privacy_profile.c, which works on the
 * profile side in s = e^eps): the tradeoff side.  f = max(0, L_i, M_i) with
 * L_i(x) = 1 - delta_i - e^{eps_i} x and M_i(x) = e^{-eps_i}(1 - delta_i - x)
 * (GDP Prop 2.8); its breakpoints are among the pairwise intersections of
 * these lines, so f is evaluated (long double) at all of them and is linear
 * in between.  Each piece [x_k, x_{k+1}] of f is an atom with B-mass
 * x_{k+1} - x_k and A-mass f(x_k) - f(x_{k+1}) at the loss of the line
 * active there (+eps_i for L_i, -eps_i for M_i, -inf for 0); A's mass
 * 1 - f(0) is at +inf.  Its profile r + sum (a - e^t b)_+ is the envelope E;
 * n-fold compositions are summed over all n-tuples of atoms.
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

/* Relative agreement of the pair's profile with the reference envelope:
 * both are sums of a few long-double (reference) or double (pair) terms
 * with cancellation at most ~1e3 for the generated cases (masses >= 1e-9,
 * eps <= 5), so 1e-12 leaves a margin of ~1e1 over the worst rounding. */
#define REL_TOL 1e-12
/* Soundness: the pair may exceed the envelope only by its upward rounding
 * (a few ulps), and may never fall below it by more than the reference's
 * own rounding (1e-15 relative). */
#define SOUND_TOL 1e-15

#define MAXP 8
#define MAXA (4 * MAXP + 4)

typedef struct ref {
    int n;                       /* finite atoms */
    long double w[MAXA], a[MAXA], b[MAXA];
    long double r;               /* A-mass at +inf */
} ref;

/* g = 1 - f as a min of lines c + m x (intercepts kept without
 * cancellation: 1 - f(0) = delta_i is exact): j even: L_i (c = delta_i,
 * m = e^{eps_i}); j odd: M_i (c = 1 - e^{-eps_i}(1 - delta_i), m = e^{-eps_i});
 * j = 2n: the line g = 1 (f = 0). */
static void line_cm(int j, int n, const double *eps, const double *del, long double *c, long double *m)
{
    if (j == 2 * n) {
        *c = 1;
        *m = 0;
    } else if (j % 2 == 0) {
        *c = del[j / 2];
        *m = expl((long double)eps[j / 2]);
    } else {
        long double t = expl(-(long double)eps[j / 2]);
        *c = -expm1l(-(long double)eps[j / 2]) + t * del[j / 2];
        *m = t;
    }
}

/* g(x) = 1 - f(x) and the index of the active line */
static long double gval(const double *eps, const double *del, int n, long double x, int *arg)
{
    long double best = INFINITY, c, m;
    *arg = 2 * n;
    for (int j = 0; j <= 2 * n; j++) {
        line_cm(j, n, eps, del, &c, &m);
        if (c + m * x < best) {
            best = c + m * x;
            *arg = j;
        }
    }
    return best;
}

static int cmp_ld(const void *x, const void *y)
{
    long double a = *(const long double *)x, b = *(const long double *)y;
    return (a > b) - (a < b);
}

static void build_ref(const double *eps, const double *del, int n, ref *R)
{
    /* candidate breakpoints: 0, 1, intersections of every two lines */
    long double xs[4 * MAXP * MAXP + 8], c[2 * MAXP + 1], m[2 * MAXP + 1];
    int nx = 0, nl = 2 * n + 1, dummy;
    for (int j = 0; j < nl; j++) line_cm(j, n, eps, del, &c[j], &m[j]);
    xs[nx++] = 0;
    xs[nx++] = 1;
    for (int i = 0; i < nl; i++)
        for (int j = i + 1; j < nl; j++) {
            if (m[i] == m[j]) continue;
            long double x = (c[j] - c[i]) / (m[i] - m[j]);
            if (x > 0 && x < 1) xs[nx++] = x;
        }
    qsort(xs, (size_t)nx, sizeof *xs, cmp_ld);
    memset(R, 0, sizeof *R);
    R->r = gval(eps, del, n, 0, &dummy);
    for (int k = 0; k + 1 < nx; k++) {
        if (!(xs[k + 1] > xs[k])) continue;
        int arg;
        gval(eps, del, n, (xs[k] + xs[k + 1]) / 2, &arg);
        if (arg == 2 * n) continue; /* f = 0: B-mass only, loss -inf, no part in A(W > t) */
        long double w = (arg % 2 == 0 ? 1 : -1) * (long double)eps[arg / 2];
        /* on the piece, g is the line arg: a = m dx, b = dx */
        long double b = xs[k + 1] - xs[k], a = m[arg] * b;
        int q = 0;
        while (q < R->n && R->w[q] != w) q++;
        if (q == R->n) {
            R->w[R->n++] = w;
            R->a[q] = R->b[q] = 0;
        }
        R->a[q] += a;
        R->b[q] += b;
    }
}

static long double ref_delta(const ref *R, long double t)
{
    long double d = R->r, s = expl(t);
    for (int j = 0; j < R->n; j++)
        if (R->w[j] > t) d += R->a[j] - s * R->b[j];
    return d;
}

/* delta of the n-fold composition: sum over n-tuples of finite atoms */
static long double tuple_sum(const ref *R, int left, long double L, long double lp, long double t)
{
    if (left == 0) return L > t ? expl(lp) * -expm1l(t - L) : 0;
    long double s = 0;
    for (int j = 0; j < R->n; j++)
        if (R->a[j] > 0) s += tuple_sum(R, left - 1, L + R->w[j], lp + logl(R->a[j]), t);
    return s;
}

static long double ref_compose(const ref *R, int n, long double t)
{
    return -expm1l(n * log1pl(-R->r)) + tuple_sum(R, n, 0, 0, t);
}

/* The pair's profile from its stored atoms, term by term in long double
 * (each atom's e^la - e^{t + lb} >= 0 above t: no cancellation between
 * atoms, unlike a difference of tails). */
static long double pair_delta(const dpa_pair *p, double t)
{
    long double d = 0;
    for (size_t i = 0; i < p->natoms; i++) {
        const dpa_atom *a = &p->atoms[i];
        if (!(a->w > t)) continue;
        d += a->w == INFINITY ? expl(a->la) : expl(a->la) - expl((long double)t + a->lb);
    }
    return d;
}

static void gen_points(int n, double *eps, double *del)
{
    for (int i = 0; i < n; i++) {
        eps[i] = i == 0 && test_unif() < 0.2 ? 0 : 5 * test_unif();
        del[i] = test_log_unif(1e-9, 0.5);
    }
}

static void test_parse(void **state)
{
    (void)state;
    dpa_error err;
    dpa_spec *s = dpa_spec_from_json(
        "{\"privacy_profile\": {\"epsilon\": [2, 1, 2, 0.5], \"delta\": [1e-6, 1e-3, 1e-5, 0.01]}}", &err);
    assert_non_null(s);
    char *j = dpa_spec_to_json(s);
    CHECK(j && strstr(j, "{\"privacy_profile\":{\"epsilon\":[0.5,1,2],\"delta\":[0.01,0.001,9.9999999999999995e-07]}"),
          "canonical form %s", j ? j : "(null)");
    dpa_spec *s2 = j ? dpa_spec_from_json(j, &err) : NULL;
    char *j2 = s2 ? dpa_spec_to_json(s2) : NULL;
    CHECK(j2 && !strcmp(j, j2), "round trip %s -> %s", j ? j : "", j2 ? j2 : "");
    free(j2);
    dpa_spec_free(s2);
    free(j);
    dpa_spec_free(s);
    static const struct { const char *json, *want; } bad[] = {
        {"{\"privacy_profile\": {\"epsilon\": [1, -1], \"delta\": [0.1, 0.1]}}", "/privacy_profile/epsilon/1: must be in [0, 700]"},
        {"{\"privacy_profile\": {\"epsilon\": [1], \"delta\": [1.5]}}", "/privacy_profile/delta/0: must be in [0, 1]"},
        {"{\"privacy_profile\": {\"epsilon\": [1, 2], \"delta\": [0.1]}}", "same length"},
        {"{\"privacy_profile\": {\"epsilon\": [], \"delta\": []}}", "non-empty array"},
        {"{\"privacy_profile\": {\"epsilon\": [1]}}", "missing key \"delta\""},
        {"{\"privacy_profile\": {\"eps\": [1], \"delta\": [0]}}", "unknown key \"eps\""},
        {"{\"privacy_profile\": {\"epsilon\": [\"?\"], \"delta\": [0]}}", "placeholder"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        test_spec_refused(bad[i].json, bad[i].want);
    }
    /* the C constructor */
    double e[2] = {1, 1}, d[2] = {0.1, 0.01};
    dpa_event *ev = dpa_event_privacy_profile(e, d, 2, &err);
    assert_non_null(ev);
    dpa_event_free(ev);
    d[1] = NAN;
    ev = dpa_event_privacy_profile(e, d, 2, &err);
    CHECK(!ev && strstr(err.message, "delta[1] must be in [0, 1]"), "%s", err.message);
}

/* The pair against the tradeoff-side reference, on generated point sets. */
static void test_pair_vs_reference(void **state)
{
    (void)state;
    double eps[MAXP], del[MAXP];
    dpa_error err;
    for (int c = 0; c < 400; c++) {
        int n = 1 + (int)(test_unif() * MAXP);
        if (n > MAXP) n = MAXP;
        gen_points(n, eps, del);
        ref R;
        build_ref(eps, del, n, &R);
        dpa_pair *p = dpa_pair_profile(eps, del, (size_t)n, &err);
        assert_non_null(p);
        /* the given points: D <= delta_i (up to the upward rounding) and D >= E */
        for (int i = 0; i < n; i++) {
            long double D = pair_delta(p, eps[i]);
            long double E = ref_delta(&R, eps[i]);
            CHECK(D <= del[i] * (1 + 1e-13L), "case %d point %d: D = %.17Lg above delta %.17g", c, i, D, del[i]);
            CHECK(D >= E * (1 - SOUND_TOL), "case %d point %d: D = %.17Lg below the envelope %.17Lg", c, i, D, E);
            CHECK(fabsl(D - E) <= REL_TOL * E, "case %d point %d: D = %.17Lg, envelope %.17Lg", c, i, D, E);
            if (E >= del[i] * (1 - 1e-12)) /* on the envelope: equal */
                CHECK(fabsl(D - del[i]) <= REL_TOL * del[i], "case %d point %d (on the envelope): D = %.17Lg, delta %.17g",
                      c, i, D, del[i]);
        }
        /* everywhere else, negative eps included */
        for (int k = 0; k < 20; k++) {
            double t = -6 + 12 * test_unif();
            long double D = pair_delta(p, t);
            long double E = ref_delta(&R, t);
            CHECK(D >= E * (1 - SOUND_TOL) && fabsl(D - E) <= REL_TOL * E + 1e-300L,
                  "case %d eps %g: D = %.17Lg, envelope %.17Lg", c, t, D, E);
        }
        dpa_pair_free(p);
    }
}

/* Points above the envelope are kept as given but do not bind. */
static void test_dominated_point(void **state)
{
    (void)state;
    /* (1, 0.1) lies above the chord between (0.5, 0.1) and (2, 1e-4)... and
     * at the same delta as (0.5, 0.1): it changes nothing */
    double e3[3] = {0.5, 1, 2}, d3[3] = {0.1, 0.1, 1e-4}, e2[2] = {0.5, 2}, d2[2] = {0.1, 1e-4};
    dpa_error err;
    dpa_pair *p3 = dpa_pair_profile(e3, d3, 3, &err), *p2 = dpa_pair_profile(e2, d2, 2, &err);
    assert_non_null(p3);
    assert_non_null(p2);
    for (double t = -3; t <= 3; t += 0.25) {
        double a = dpa_pair_log_delta(p3, t), b = dpa_pair_log_delta(p2, t);
        CHECK(fabs(a - b) <= 1e-14, "eps %g: %.17g vs %.17g", t, a, b);
    }
    double D1 = exp(dpa_pair_log_delta(p3, 1));
    CHECK(D1 < 0.1, "the dominated point's delta %.17g must be below 0.1", D1);
    dpa_pair_free(p3);
    dpa_pair_free(p2);
}

static void spec_json(char *buf, size_t cap, const double *eps, const double *del, int n, int count)
{
    size_t len = (size_t)snprintf(buf, cap, "{\"repeat\":{\"count\":%d,\"event\":{\"privacy_profile\":{\"epsilon\":[", count);
    for (int i = 0; i < n; i++) len += (size_t)snprintf(buf + len, cap - len, "%s%.17g", i ? "," : "", eps[i]);
    len += (size_t)snprintf(buf + len, cap - len, "],\"delta\":[");
    for (int i = 0; i < n; i++) len += (size_t)snprintf(buf + len, cap - len, "%s%.17g", i ? "," : "", del[i]);
    snprintf(buf + len, cap - len, "]}}}}");
}

/* One point is exactly (eps, delta)-DP: the same results as approx. */
static void test_one_point_is_approx(void **state)
{
    (void)state;
    const char *pp = "{\"repeat\":{\"count\":20,\"event\":{\"privacy_profile\":{\"epsilon\":[0.5],\"delta\":[1e-6]}}}}";
    const char *ap = "{\"repeat\":{\"count\":20,\"event\":{\"approx\":{\"epsilon\":0.5,\"delta\":1e-6}}}}";
    for (double t = 0; t <= 6; t += 1.5) {
        dpa_result a = test_query_delta(pp, DPA_METHOD_AUTO, t), b = test_query_delta(ap, DPA_METHOD_AUTO, t);
        CHECK(a.method == DPA_METHOD_EXACT && a.upper == b.upper && a.lower == b.lower,
              "eps %g: profile [%.17g, %.17g] (method %d), approx [%.17g, %.17g]", t, a.lower, a.upper, (int)a.method,
              b.lower, b.upper);
        /* the PLD method on the atom pair brackets the same value */
        dpa_result c = test_query_delta(pp, DPA_METHOD_PLD, t);
        CHECK(c.lower <= b.upper * (1 + 1e-12) && c.upper >= b.lower * (1 - 1e-12),
              "eps %g: pld [%.17g, %.17g] vs exact [%.17g, %.17g]", t, c.lower, c.upper, b.lower, b.upper);
    }
}

/* The accountant at the given points (one use) and for compositions
 * against brute force over atom tuples. */
static void test_accountant_vs_brute(void **state)
{
    (void)state;
    char json[2048];
    double eps[MAXP], del[MAXP];
    int ncases = SANITIZED ? 3 : 10;
    for (int c = 0; c < ncases; c++) {
        int n = 2 + (int)(test_unif() * 3); /* 2..4 points: up to ~10 atoms */
        gen_points(n, eps, del);
        ref R;
        build_ref(eps, del, n, &R);
        spec_json(json, sizeof json, eps, del, n, 1);
        for (int i = 0; i < n; i++) {
            dpa_result r = test_query_delta(json, DPA_METHOD_PLD, eps[i]);
            long double E = ref_delta(&R, eps[i]);
            CHECK(r.lower <= del[i] * (1 + 1e-12), "case %d: pld lower %.17g above the given delta %.17g", c, r.lower,
                  del[i]);
            CHECK(r.upper >= E * (1 - 1e-12), "case %d: pld upper %.17g below the envelope %.17Lg", c, r.upper, E);
        }
        for (int k = 2; k <= 4; k++) {
            spec_json(json, sizeof json, eps, del, n, k);
            for (int q = 0; q < 3; q++) {
                double t = q * 0.5 * k * eps[n - 1] / 2;
                long double B = ref_compose(&R, k, t);
                dpa_result r = test_query_delta(json, DPA_METHOD_PLD, t);
                CHECK(r.lower <= B * (1 + 1e-12) + 1e-18 && r.upper >= B * (1 - 1e-12),
                      "case %d, %d-fold, eps %g: pld [%.17g, %.17g], brute force %.17Lg", c, k, t, r.lower, r.upper, B);
                /* the default accuracy (1e-4, relative to delta) where the
                 * method says it met it (losses off a common lattice may
                 * stop the refinement early: accuracy_met = 0) */
                CHECK(!r.accuracy_met || r.upper - r.lower <= 1e-4 * r.upper + 1e-14, "case %d, %d-fold, eps %g: pld [%.17g, %.17g] too wide", c,
                      k, t, r.lower, r.upper);
                if (q == 1) {
                    dpa_result s = test_query_delta(json, DPA_METHOD_RDP, t);
                    CHECK(s.upper >= B * (1 - 1e-12), "case %d, %d-fold: rdp upper %.17g below brute force %.17Lg", c,
                          k, s.upper, B);
                }
            }
        }
    }
}

/* Sanity of the orientation on a known pair: the profile of the Laplace
 * mechanism at a few eps, given as data, is dominated by the Laplace pair
 * (its envelope lies above the true profile, below the given points). */
static void test_laplace_points(void **state)
{
    (void)state;
    dpa_error err;
    dpa_pair *lap = dpa_pair_laplace(1, 1, &err);
    assert_non_null(lap);
    double eps[6], del[6];
    for (int i = 0; i < 6; i++) {
        eps[i] = 0.2 * i;
        del[i] = exp(dpa_pair_log_delta(lap, eps[i]));
    }
    dpa_pair *p = dpa_pair_profile(eps, del, 6, &err);
    assert_non_null(p);
    for (double t = -2; t <= 2; t += 0.05) {
        double D = exp(dpa_pair_log_delta(p, t)), L = exp(dpa_pair_log_delta(lap, t));
        CHECK(D >= L * (1 - 1e-14), "eps %g: envelope %.17g below the Laplace profile %.17g", t, D, L);
    }
    dpa_pair_free(p);
    dpa_pair_free(lap);
}

/* Audit F5: the mass at +inf (min delta) is rounded up in the pair, and the
 * pld lower bound rounds the exp of an atom's log mass down (4 u (|l| + 4)):
 * lower <= truth <= upper where the profile is that mass alone. */
static void test_inf_mass_rounding(void **state)
{
    (void)state;
    struct { const char *json; double eps, truth; } c[] = {
        {"{\"privacy_profile\":{\"epsilon\":[1,0.5],\"delta\":[1e-300,0.1]}}", 5, 1e-300},
        {"{\"approx\":{\"epsilon\":1,\"delta\":1e-300}}", 1.5, 1e-300},
        {"{\"approx\":{\"epsilon\":1,\"delta\":1e-300}}", 3, 1e-300},
        {"{\"approx\":{\"epsilon\":0.5,\"delta\":3e-200}}", 2, 3e-200},
        {"{\"privacy_profile\":{\"epsilon\":[2],\"delta\":[7e-250]}}", 4, 7e-250},
    };
    dpa_method ms[] = {DPA_METHOD_AUTO, DPA_METHOD_PLD};
    for (size_t i = 0; i < sizeof c / sizeof *c; i++)
        for (int k = 0; k < 2; k++) {
            dpa_accountant *a = test_accountant(c[i].json, ms[k]);
            dpa_result r;
            dpa_error err;
            if (dpa_accountant_delta(a, c[i].eps, &r, &err) != DPA_OK) fail_msg("%s: %s", c[i].json, err.message);
            CHECK(r.lower <= c[i].truth && r.upper >= c[i].truth, "%s at eps %g (method %d): [%.17g, %.17g], truth %.17g",
                  c[i].json, c[i].eps, (int)ms[k], r.lower, r.upper, c[i].truth);
            dpa_accountant_free(a);
        }
    /* the pair itself: its +inf mass is at least min delta (random point sets) */
    for (int t = 0; t < 200; t++) {
        double e[3], d[3], dmin = 1;
        for (int j = 0; j < 3; j++) {
            e[j] = 5 * test_unif();
            d[j] = pow(10, -300 * test_unif());
            dmin = fmin(dmin, d[j]);
        }
        dpa_error err;
        dpa_pair *p = dpa_pair_profile(e, d, 3, &err);
        assert_non_null(p);
        const dpa_atom *top = &p->atoms[p->natoms - 1];
        CHECK(top->w == INFINITY && (long double)top->la >= logl(dmin), "min delta %.17g: +inf mass log %.17g < %.17Lg", dmin,
              top->la, logl(dmin));
        dpa_pair_free(p);
    }
}

int main(void)
{
    test_seed_from_env();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_parse, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pair_vs_reference, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dominated_point, setup, teardown),
        cmocka_unit_test_setup_teardown(test_one_point_is_approx, setup, teardown),
        cmocka_unit_test_setup_teardown(test_accountant_vs_brute, setup, teardown),
        cmocka_unit_test_setup_teardown(test_laplace_points, setup, teardown),
        cmocka_unit_test_setup_teardown(test_inf_mass_rounding, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Exact privacy profiles of single dominating pairs (src/mech/pair.h):
 * dpa_pair_log_delta against the high-precision values of
 * high-precision reference values, against the closed forms of LT Thm 2.4, 3.4 and 5.1
 * evaluated independently here, against direct summation over the pmf for the
 * discrete mechanisms, the reversal identity (LT eq 7), and the tradeoff curve
 * of the replace-one symmetrization against GDP's C_p(f).
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "mech/pair.h"

static double rel_err(double got, double want)
{
    if (got == want) return 0.0;
    if (want == 0.0) return fabs(got);
    return fabs(got - want) / fabs(want);
}

#define ASSERT_REL(got, want, tol)                                                   \
    do {                                                                             \
        double g_ = (got), w_ = (want), r_ = rel_err(g_, w_);                        \
        if (!(r_ <= (tol)))                                                          \
            fail_msg("%s = %.17g, want %.17g (rel err %.3g > %.3g)", #got, g_, w_,   \
                     r_, (double)(tol));                                             \
    } while (0)

#define ASSERT_ABS(got, want, tol)                                                   \
    do {                                                                             \
        double g_ = (got), w_ = (want);                                              \
        if (!(fabs(g_ - w_) <= (tol)))                                               \
            fail_msg("%s = %.17g, want %.17g (abs err %.3g > %.3g)", #got, g_, w_,   \
                     fabs(g_ - w_), (double)(tol));                                  \
    } while (0)

/* delta(eps) of a pair, linear scale */
static double pdelta(const dpa_pair *p, double eps)
{
    return exp(dpa_pair_log_delta(p, eps));
}

static dpa_pair *must(dpa_pair *p, const dpa_error *err)
{
    if (!p) fail_msg("pair constructor failed: %s", err->message);
    return p;
}

static dpa_pair *gaussian(double mu)
{
    dpa_error e;
    return must(dpa_pair_gaussian(mu, &e), &e);
}

static dpa_pair *poisson(dpa_pair *base, double q)
{
    dpa_error e;
    return must(dpa_pair_poisson(base, q, &e), &e);
}

static dpa_pair *reverse_copy(const dpa_pair *p)
{
    dpa_error e;
    dpa_pair *c = must(dpa_pair_copy(p, &e), &e);
    return must(dpa_pair_reverse(c, &e), &e);
}

static dpa_pair *rr(double eps, double delta)
{
    dpa_error e;
    return must(dpa_pair_rr(eps, delta, &e), &e);
}

static dpa_pair *laplace(double b, double s)
{
    dpa_error e;
    return must(dpa_pair_laplace(b, s, &e), &e);
}

static dpa_pair *dlaplace(double b, double s)
{
    dpa_error e;
    return must(dpa_pair_discrete_laplace(b, s, &e), &e);
}

static dpa_pair *dgauss(double sigma, double s)
{
    dpa_error e;
    return must(dpa_pair_discrete_gaussian(sigma, s, &e), &e);
}

/* ------------------------------------------------------------------ */
/* Gaussian mu = 1 (LT Thm 2.4, high-precision values) */

static void test_gaussian_reference(void **state)
{
    (void)state;
    dpa_pair *p = gaussian(1.0);
    static const double eps[] = {-1, 0, 0.5, 1, 2};
    static const double ref[] = {0.678817974886628, 0.382924922548026, 0.238421708134877,
                                 0.126936737506644, 0.0209236358211137};
    for (size_t i = 0; i < 5; i++) ASSERT_REL(pdelta(p, eps[i]), ref[i], 1e-9);
    /* sigma = 1: delta(0.277) (CF Fig 1) */
    ASSERT_REL(pdelta(p, 0.277), 0.29988967243682, 1e-9);
    /* the profile is >= 1 - e^eps and <= 1 */
    for (double t = -30; t <= 30; t += 0.37) {
        double d = pdelta(p, t);
        assert_true(d <= 1.0);
        assert_true(d >= -expm1(t) - 1e-15);
    }
    dpa_pair_free(p);
}

/* Gaussian against the closed form of LT Thm 2.4 evaluated with erfc, over a
 * range of mu and eps where the plain formula has no cancellation trouble. */
static double phi_c(double x) { return 0.5 * erfc(x / sqrt(2.0)); } /* Phibar */

static void test_gaussian_closed_form(void **state)
{
    (void)state;
    static const double mus[] = {0.05, 0.3, 1.0, 2.5, 6.0};
    for (size_t i = 0; i < 5; i++) {
        double mu = mus[i];
        dpa_pair *p = gaussian(mu);
        for (double t = -3.0; t <= 3.0; t += 0.25) {
            double want = phi_c(t / mu - mu / 2) - exp(t) * phi_c(t / mu + mu / 2);
            if (want < 1e-200) continue;
            /* 1e-10: erfc's own relative error reaches 2e-11 in the far tail
             * (mu = 0.05, eps = 1: delta = 1.1290332270977e-91, mpmath), the
             * pair's 4e-11 at delta ~ 1e-271; plus the cancellation of the
             * direct formula */
            double tol = 1e-10 + 1e-15 * exp(t) * phi_c(t / mu + mu / 2) / want;
            ASSERT_REL(pdelta(p, t), want, tol);
        }
        dpa_pair_free(p);
    }
}

/* ------------------------------------------------------------------ */
/* Poisson-subsampled Gaussian (LT Thm 5.1, high-precision values) */

static void test_poisson_gaussian_q01(void **state)
{
    (void)state;
    dpa_pair *rem = poisson(gaussian(1.0), 0.1);
    dpa_pair *add = reverse_copy(rem);
    assert_false(rem->symmetric);
    ASSERT_REL(pdelta(rem, 0.0), 0.0382924922548, 1e-9);
    ASSERT_REL(pdelta(rem, 0.05), 0.0261436629589, 1e-9);
    ASSERT_REL(pdelta(rem, 0.2), 0.00988931448519, 1e-9);
    ASSERT_REL(pdelta(rem, 1.0), 0.000207121486021, 1e-9);
    ASSERT_REL(pdelta(add, 0.05), 0.0105725813538, 1e-9);
    ASSERT_REL(pdelta(add, -0.05), 0.0736391969701, 1e-9);
    /* add direction at eps = 0 equals the remove direction (both q delta_G(0)) */
    ASSERT_REL(pdelta(add, 0.0), 0.0382924922548, 1e-9);
    /* remove: 1 - e^eps below log(1 - q); add: 0 from -log(1 - q) on */
    ASSERT_REL(pdelta(rem, log(0.9) - 0.01), -expm1(log(0.9) - 0.01), 1e-12);
    ASSERT_REL(pdelta(rem, -2.0), -expm1(-2.0), 1e-12);
    assert_true(pdelta(add, -log(0.9) + 1e-9) == 0.0);
    assert_true(pdelta(add, 3.0) == 0.0);
    dpa_pair_free(rem);
    dpa_pair_free(add);
}

/* CF Fig 4: sigma = 1, q = 0.5, H_a at a = 0.5, 1, 2 (6 decimals). */
static void test_poisson_gaussian_q05_cf_fig4(void **state)
{
    (void)state;
    dpa_pair *rem = poisson(gaussian(1.0), 0.5);
    dpa_pair *add = reverse_copy(rem);
    const double slack = 5e-7 + 1e-12;
    ASSERT_ABS(pdelta(rem, log(0.5)), 0.5, 1e-15);
    ASSERT_ABS(pdelta(add, log(0.5)), 0.527464, slack);
    ASSERT_ABS(pdelta(rem, 0.0), 0.191462, slack);
    ASSERT_ABS(pdelta(add, 0.0), 0.191462, slack);
    ASSERT_ABS(pdelta(rem, log(2.0)), 0.054928, slack);
    ASSERT_ABS(pdelta(add, log(2.0)), 0.0, 1e-15);
    dpa_pair_free(rem);
    dpa_pair_free(add);
}

/* The Poisson remove profile against LT Thm 5.1 on top of the erfc Gaussian,
 * q delta_G(log(1 + (e^eps - 1)/q)), and the add profile
 * 1 - e^eps + e^eps q delta_G(log(1 + (e^-eps - 1)/q)). */
static double gauss_cf(double mu, double t)
{
    return phi_c(t / mu - mu / 2) - exp(t) * phi_c(t / mu + mu / 2);
}

static void test_poisson_closed_form(void **state)
{
    (void)state;
    static const double mus[] = {0.5, 1.0, 2.0};
    static const double qs[] = {0.01, 0.1, 0.5, 0.9};
    for (size_t i = 0; i < 3; i++)
        for (size_t j = 0; j < 4; j++) {
            double mu = mus[i], q = qs[j];
            dpa_pair *rem = poisson(gaussian(mu), q);
            dpa_pair *add = reverse_copy(rem);
            for (double t = -1.5; t <= 2.0; t += 0.125) {
                double wr = (t > log1p(-q)) ? q * gauss_cf(mu, log1p(expm1(t) / q)) : -expm1(t);
                double wa = (t < -log1p(-q)) ? -expm1(t) + exp(t) * q * gauss_cf(mu, log1p(expm1(-t) / q)) : 0.0;
                if (wr > 1e-100) ASSERT_REL(pdelta(rem, t), wr, 1e-10);
                else assert_true(pdelta(rem, t) <= 1e-99);
                /* the add formula cancels near -log(1 - q): its own absolute
                 * error is ~1e-16 (1 - e^eps) */
                ASSERT_ABS(pdelta(add, t), wa, 1e-9 * wa + 1e-15 * fabs(expm1(t)) + 1e-300);
            }
            dpa_pair_free(rem);
            dpa_pair_free(add);
        }
}

/* ------------------------------------------------------------------ */
/* Randomized response: LT Thm 3.4 */

/* written without cancellation: 1 - (e^t + 1)(1 - d)/(e^eps + 1) =
 * (e^t expm1(eps - t) + d (e^t + 1)) / (e^eps + 1), 1 - e^t (1 - d) = -expm1(t) + d e^t */
static double rr_closed(double eps, double delta, double t)
{
    if (t > eps) return delta;
    if (t > -eps) return (exp(t) * expm1(eps - t) + delta * (exp(t) + 1.0)) / (exp(eps) + 1.0);
    return -expm1(t) + delta * exp(t);
}

static void test_rr_closed_form(void **state)
{
    (void)state;
    static const double pars[][2] = {{1.0, 0.1}, {0.5, 0.05}, {0.1, 1e-8}, {2.0, 0.0}, {0.0, 0.2}};
    for (size_t i = 0; i < sizeof pars / sizeof *pars; i++) {
        double e0 = pars[i][0], d0 = pars[i][1];
        dpa_pair *p = rr(e0, d0);
        for (double t = -3.0; t <= 3.0; t += 0.05) {
            double want = rr_closed(e0, d0, t);
            /* the pair forms A(W > t) - e^t B(W > t) in log space: absolute
             * error a few u times A(W > t) <= 1 */
            if (want == 0.0) assert_true(pdelta(p, t) == 0.0);
            else ASSERT_ABS(pdelta(p, t), want, 1e-13 * want + 4e-16);
        }
        /* at the atoms themselves (the profile is continuous) */
        ASSERT_REL(pdelta(p, e0), rr_closed(e0, d0, e0), 1e-13);
        ASSERT_REL(pdelta(p, -e0), rr_closed(e0, d0, -e0), 1e-13);
        /* +inf atom: delta(t) -> d0 as t -> inf */
        if (d0 > 0) ASSERT_REL(pdelta(p, 700.0), d0, 1e-14); /* exp(log d0): |log d0| u */
        else assert_true(pdelta(p, 700.0) == 0.0);
        ASSERT_REL(exp(dpa_pair_log_inf(p)), d0, 1e-14);
        dpa_pair_free(p);
    }
    /* RR with p = e/(1+e) (pure eps = 1): eps at delta 0.3 is 0.4717504 (CF Fig 1):
     * delta(0.4717504) = 0.3 to the reference's 7 digits. */
    dpa_pair *p = rr(1.0, 0.0);
    double lo = pdelta(p, 0.4717504 + 5e-8), hi = pdelta(p, 0.4717504 - 5e-8);
    assert_true(lo <= 0.3 && 0.3 <= hi);
    dpa_pair_free(p);
}

/* ------------------------------------------------------------------ */
/* Laplace: delta(eps) = 1 - e^{(eps - s/b)/2} on [0, s/b], 0 above. */

static void test_laplace(void **state)
{
    (void)state;
    static const double pars[][2] = {{1.0, 1.0}, {0.5, 1.0}, {2.0, 3.0}, {10.0, 1.0}, {0.1, 2.0}};
    for (size_t i = 0; i < sizeof pars / sizeof *pars; i++) {
        double b = pars[i][0], s = pars[i][1], e0 = s / b;
        dpa_pair *p = laplace(b, s);
        for (int k = 0; k <= 40; k++) {
            double t = e0 * k / 40.0;
            double want = -expm1(0.5 * (t - e0));
            if (k == 40) assert_true(pdelta(p, t) == 0.0);
            else ASSERT_REL(pdelta(p, t), want, 1e-12);
            /* negative side by the reversal of a symmetric pair */
            double wn = -expm1(-t) + exp(-t) * want;
            ASSERT_REL(pdelta(p, -t), wn, 1e-12);
        }
        assert_true(pdelta(p, e0 * 1.5) == 0.0);
        ASSERT_REL(pdelta(p, -e0 - 1.0), -expm1(-e0 - 1.0), 1e-13);
        dpa_pair_free(p);
    }
}

/* ------------------------------------------------------------------ */
/* Discrete mechanisms against direct summation over the pmf:
 * delta(eps) = sum_o (P(o) - e^eps Q(o))_+ with P = X + s, Q = X. */

static double dlap_logpmf(double b, long o)
{
    /* tanh(1/(2b)) e^{-|o|/b} */
    return log(tanh(0.5 / b)) - fabs((double)o) / b;
}

static double direct_delta(double (*lpmf)(double, long), double par, long s, long lim, double eps)
{
    long double sum = 0;
    for (long o = -lim; o <= lim + s; o++) {
        double lp = lpmf(par, o - s), lq = lpmf(par, o);
        double w = lp - lq;
        if (w > eps) sum += (long double)exp(lp) * (long double)(-expm1(eps - w));
    }
    return (double)sum;
}

static double dgauss_lz;
static double dgauss_logpmf(double sigma, long o)
{
    return -(double)o * (double)o / (2 * sigma * sigma) - dgauss_lz;
}

static void test_discrete_laplace(void **state)
{
    (void)state;
    static const double pars[][2] = {{1.0, 1.0}, {2.0, 3.0}, {0.5, 2.0}, {5.0, 4.0}};
    for (size_t i = 0; i < sizeof pars / sizeof *pars; i++) {
        double b = pars[i][0], s = pars[i][1];
        long lim = (long)ceil(60 * b) + 10; /* omitted mass < e^{-60} */
        dpa_pair *p = dlaplace(b, s);
        double e0 = s / b;
        static const double ts[] = {-4, -2, -1, -0.5, -0.1, 0, 0.05, 0.3, 0.7, 1, 1.9, 2.5, 4};
        for (size_t k = 0; k < sizeof ts / sizeof *ts; k++) {
            double t = ts[k] * e0 / 2;
            double want = direct_delta(dlap_logpmf, b, (long)s, lim, t);
            if (want == 0.0) assert_true(pdelta(p, t) == 0.0);
            else ASSERT_REL(pdelta(p, t), want, 1e-12);
        }
        assert_true(pdelta(p, e0 + 1e-9) == 0.0);
        dpa_pair_free(p);
    }
}

static void test_discrete_gaussian(void **state)
{
    (void)state;
    static const double pars[][2] = {{0.7, 1.0}, {1.0, 1.0}, {3.0, 2.0}, {10.0, 5.0}};
    for (size_t i = 0; i < sizeof pars / sizeof *pars; i++) {
        double sg = pars[i][0], s = pars[i][1];
        long lim = (long)ceil(40 * sg) + 5;
        long double z = 0;
        for (long o = -lim - 10; o <= lim + 10; o++) z += expl(-(long double)o * o / (2.0L * sg * sg));
        dgauss_lz = (double)logl(z);
        dpa_pair *p = dgauss(sg, s);
        double e0 = s * s / (2 * sg * sg);
        for (double f = -3.0; f <= 3.0; f += 0.25) {
            double t = f * (e0 + s / sg);
            double want = direct_delta(dgauss_logpmf, sg, (long)s, lim, t);
            if (want < 1e-250) assert_true(pdelta(p, t) < 1e-240);
            else ASSERT_REL(pdelta(p, t), want, 1e-11);
        }
        dpa_pair_free(p);
    }
}

/* ------------------------------------------------------------------ */
/* Reversal identity (LT eq 7): delta_{Q|P}(eps) = 1 - e^eps + e^eps delta_{P|Q}(-eps). */

static void check_reversal(const dpa_pair *p, const char *name)
{
    dpa_pair *r = reverse_copy(p);
    for (double t = -3.0; t <= 3.0; t += 0.1) {
        double lhs = pdelta(r, t);
        double rhs = -expm1(t) + exp(t) * pdelta(p, -t);
        double tol = 1e-12 * (1.0 + exp(t)) + 1e-10 * lhs;
        if (!(fabs(lhs - rhs) <= tol))
            fail_msg("%s: reversal at eps = %g: delta_rev = %.17g, 1 - e^eps + e^eps delta(-eps) = %.17g",
                     name, t, lhs, rhs);
    }
    /* reversing twice gives the pair back */
    dpa_pair *rr2 = reverse_copy(r);
    for (double t = -3.0; t <= 3.0; t += 0.3) ASSERT_REL(pdelta(rr2, t), pdelta(p, t), 1e-13);
    dpa_pair_free(r);
    dpa_pair_free(rr2);
}

static void test_reversal_identity(void **state)
{
    (void)state;
    struct { dpa_pair *p; const char *name; } cases[] = {
        {gaussian(1.3), "gaussian(1.3)"},
        {laplace(1.0, 1.0), "laplace(1, 1)"},
        {rr(1.0, 0.1), "rr(1, 0.1)"},
        {dlaplace(2.0, 3.0), "discrete_laplace(2, 3)"},
        {poisson(gaussian(1.0), 0.1), "poisson(gaussian(1), 0.1)"},
        {poisson(gaussian(0.5), 0.6), "poisson(gaussian(0.5), 0.6)"},
        {poisson(laplace(1.0, 2.0), 0.3), "poisson(laplace(1, 2), 0.3)"},
        {poisson(rr(1.0, 0.1), 0.2), "poisson(rr(1, 0.1), 0.2)"},
        {poisson(dlaplace(1.0, 2.0), 0.05), "poisson(discrete_laplace(1, 2), 0.05)"},
        {poisson(dgauss(2.0, 1.0), 0.5), "poisson(discrete_gaussian(2, 1), 0.5)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        check_reversal(cases[i].p, cases[i].name);
        dpa_pair_free(cases[i].p);
    }
}

/* ------------------------------------------------------------------ */
/* Tradeoff curves: f(a) = max(0, sup_eps e^{-eps} (1 - a - delta(eps)))
 * (GDP Prop 2.12), by a scan over [-20, 20] and a golden-section refinement
 * (the objective is unimodal in eps: tangent lines of a convex f evaluated at
 * a fixed a decrease as the tangency point moves away from a). */

/* r is the reverse of p: for t < 0, 1 - delta_p(t) = e^t (1 - delta_r(-t))
 * (LT eq 7) avoids the cancellation of 1 - delta_p(t) when t -> -inf. */
static double tradeoff_obj(const dpa_pair *p, const dpa_pair *r, double a, double t)
{
    if (t < 0) return (1.0 - pdelta(r, -t)) - a * exp(-t);
    return exp(-t) * (1.0 - a - pdelta(p, t));
}

static double tradeoff2(const dpa_pair *p, const dpa_pair *r, double a)
{
    const double h = 0.01;
    double best = -INFINITY, bt = 0;
    for (int i = 0; i <= 4000; i++) {
        double t = -20.0 + h * i;
        double v = tradeoff_obj(p, r, a, t);
        if (v > best) { best = v; bt = t; }
    }
    const double g = 0.5 * (sqrt(5.0) - 1.0);
    double lo = bt - h, hi = bt + h;
    double x1 = hi - g * (hi - lo), x2 = lo + g * (hi - lo);
    double f1 = tradeoff_obj(p, r, a, x1), f2 = tradeoff_obj(p, r, a, x2);
    for (int i = 0; i < 80; i++) {
        if (f1 < f2) { lo = x1; x1 = x2; f1 = f2; x2 = lo + g * (hi - lo); f2 = tradeoff_obj(p, r, a, x2); }
        else { hi = x2; x2 = x1; f2 = f1; x1 = hi - g * (hi - lo); f1 = tradeoff_obj(p, r, a, x1); }
    }
    best = fmax(best, fmax(f1, f2));
    return fmax(0.0, best);
}

static double tradeoff(const dpa_pair *p, double a)
{
    dpa_pair *r = reverse_copy(p);
    double v = tradeoff2(p, r, a);
    dpa_pair_free(r);
    return v;
}

/* The tradeoff routine itself on known curves (GDP paper values). */
static void test_tradeoff_known_curves(void **state)
{
    (void)state;
    const double slack = 5e-7 + 1e-9;
    dpa_pair *g = gaussian(1.0);
    ASSERT_ABS(tradeoff(g, 0.01), 0.907638, slack);
    ASSERT_ABS(tradeoff(g, 0.05), 0.740489, slack);
    ASSERT_ABS(tradeoff(g, 0.1), 0.610856, slack);
    ASSERT_ABS(tradeoff(g, 0.5), 0.158655, slack);
    dpa_pair_free(g);
    dpa_pair *l = laplace(1.0, 1.0);
    ASSERT_ABS(tradeoff(l, 0.1), 0.728172, slack);
    ASSERT_ABS(tradeoff(l, 0.3), 0.306566, slack);
    ASSERT_ABS(tradeoff(l, 0.7), 0.110364, slack);
    dpa_pair_free(l);
}

/* Replace-one sampling: symmetrize(poisson(G_mu, p)) has tradeoff C_p(G_mu)
 * (GDP Thm 4.2); GDP Fig 6 left: C_0.35(G_1.8). */
static void test_symmetrized_gdp_c_p(void **state)
{
    (void)state;
    dpa_error e;
    dpa_pair *s = must(dpa_pair_symmetrize(poisson(gaussian(1.8), 0.35), &e), &e);
    assert_true(s->symmetric);
    static const double a[] = {0.05, 0.1, 0.3, 0.5, 0.7, 0.9};
    static const double ref[] = {0.770924, 0.690725, 0.478842, 0.278842, 0.093234, 0.007975};
    for (size_t i = 0; i < 6; i++) ASSERT_ABS(tradeoff(s, a[i]), ref[i], 1e-5);
    /* x* = Phi(-mu/2) = 0.184060 is the fixed point of G_1.8; C_p(G)(x) is
     * f_p(x) = p G(x) + (1 - p)(1 - x) up to x*, then the segment of slope -1
     * x* + f_p(x*) - x (GDP Thm 4.2) */
    double xs = 0.5 * erfc(0.9 / sqrt(2.0)), fpx = 0.35 * xs + 0.65 * (1.0 - xs);
    ASSERT_ABS(xs, 0.184060, 5e-7);
    ASSERT_ABS(tradeoff(s, xs), fpx, 1e-9);
    ASSERT_ABS(tradeoff(s, 0.25), xs + fpx - 0.25, 1e-9);
    ASSERT_ABS(tradeoff(s, 0.45), xs + fpx - 0.45, 1e-9);
    /* the symmetrized profile is the remove profile for eps >= 0 and its
     * reversal below */
    dpa_pair *rem = poisson(gaussian(1.8), 0.35);
    for (double t = 0.0; t <= 4.0; t += 0.2) {
        double want = pdelta(rem, t);
        ASSERT_REL(pdelta(s, t), want, 1e-11);
        ASSERT_REL(pdelta(s, -t), -expm1(-t) + exp(-t) * want, 1e-11);
    }
    dpa_pair_free(rem);
    dpa_pair_free(s);
}

/* GDP Fig 6 right: C_0.2(f_{3, 0.1}) = f_{eps', delta'} with eps' = 1.572174,
 * delta' = 0.02; its middle segment of slope -1 is 0.817073 - a (the
 * intercept of GDP eq 14, not eq 15's 0.798970). */
static void test_symmetrized_rr_c_p(void **state)
{
    (void)state;
    dpa_error e;
    dpa_pair *s = must(dpa_pair_symmetrize(poisson(rr(3.0, 0.1), 0.2), &e), &e);
    const double slack = 5e-7 + 1e-9;
    ASSERT_ABS(tradeoff(s, 0.1), 0.717073, slack);
    ASSERT_ABS(tradeoff(s, 0.3), 0.517073, slack);
    /* eq 14's intercept in closed form, on the whole middle segment
     * [x*, f_p(x*)], x* = 0.9/(1 + e^3) = 0.042683 */
    double icpt = 1.0 - 0.2 * (exp(3.0) - 1.0 + 0.2) / (exp(3.0) + 1.0);
    ASSERT_ABS(icpt, 0.817073, 5e-7);
    for (double a = 0.05; a <= 0.75; a += 0.05) ASSERT_ABS(tradeoff(s, a), icpt - a, 1e-9);
    /* f_{eps', delta'}: 1 - delta' - e^{eps'} a near 0, e^{-eps'} (1 - delta' - a) near 1 */
    double ep = 1.572174;
    ASSERT_ABS(tradeoff(s, 0.0), 0.98, 1e-9);
    ASSERT_ABS(tradeoff(s, 0.01), 0.98 - exp(ep) * 0.01, 1e-7);
    ASSERT_ABS(tradeoff(s, 0.9), exp(-ep) * (0.98 - 0.9), 1e-7);
    /* 1 - f(0) = delta(+inf) = p * delta = 0.02 (delta' of GDP Fig 6) */
    ASSERT_REL(exp(dpa_pair_log_inf(s)), 0.02, 1e-14);
    dpa_pair_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gaussian_reference),
        cmocka_unit_test(test_gaussian_closed_form),
        cmocka_unit_test(test_poisson_gaussian_q01),
        cmocka_unit_test(test_poisson_gaussian_q05_cf_fig4),
        cmocka_unit_test(test_poisson_closed_form),
        cmocka_unit_test(test_rr_closed_form),
        cmocka_unit_test(test_laplace),
        cmocka_unit_test(test_discrete_laplace),
        cmocka_unit_test(test_discrete_gaussian),
        cmocka_unit_test(test_reversal_identity),
        cmocka_unit_test(test_tradeoff_known_curves),
        cmocka_unit_test(test_symmetrized_gdp_c_p),
        cmocka_unit_test(test_symmetrized_rr_c_p),
    };
    /* DPA_TEST_FILTER=pattern runs only the matching tests (cmocka wildcards) */
    const char *filter = getenv("DPA_TEST_FILTER");
    if (filter && *filter) cmocka_set_test_filter(filter);
    return cmocka_run_group_tests(tests, NULL, NULL);
}

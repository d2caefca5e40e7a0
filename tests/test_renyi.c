/* The Rényi divergence of a composition (include/dpacct/renyi.h,
 * src/rdp/renyi.c).
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Every check compares with an independent computation, so each can fail:
 *  - order parsing: accepted strings and their values, refused strings;
 *  - closed forms in MPFR at 256 bits: Gaussian compositions (A mu^2/2, real
 *    and complex A: the entire function's continuation), randomized
 *    response (Mironov 2017 Prop 5 / LT Thm 3.5) also as the direct sum
 *    over the composed atoms, Laplace (Mironov 2017 Table 2, for every real
 *    order A != 1/2: the formula is analytic), the Poisson-subsampled
 *    Gaussian at integer orders (binomial expansion, MTZ19 §3.1);
 *  - complex orders of atom and Laplace leaves against the continuous
 *    logarithm of the closed form, unwrapped here by dense stepping in long
 *    double (a different method from the library's Lipschitz-certified
 *    steps), and the subsampled Gaussian's complex orders against a
 *    Simpson integral over the base loss, unwrapped the same way;
 *  - orders in (0, 1] and the add direction of the subsampled Gaussian and
 *    Laplace against Simpson integrals over the output space written here;
 *  - existence: approx (delta > 0) is infinite at A >= 1, finite below;
 *  - monotonicity in A on generated compositions: lower(A1) <= upper(A2) for
 *    A1 < A2 (sound: D_A is non-decreasing in A), and values of closed-form
 *    compositions non-decreasing;
 *  - k-fold composition = k times one leaf (values and bounds);
 *  - errors: NULL, Re A <= 0, unsupported leaves, a zero of E on the path.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <complex.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <mpfr.h>
#include "check.h"
#include "dpacct/renyi.h"

#define U 1.1102230246251565e-16
#define P 256

/* ------------------------------------------------------------------ helpers */

static dpa_spec *spec_of(const char *json)
{
    dpa_error err;
    dpa_spec *s = dpa_spec_from_json(json, &err);
    if (!s) fail_msg("spec %s: %s", json, err.message);
    return s;
}

/* dpa_renyi on a JSON spec; the status is returned, the message in err */
static dpa_status renyi_json(const char *json, double re, double im, dpa_renyi_result *r, dpa_error *err)
{
    dpa_spec *s = spec_of(json);
    dpa_status st = dpa_renyi(s, re, im, r, err);
    dpa_spec_free(s);
    return st;
}

static void renyi_ok(const char *json, double re, double im, dpa_renyi_result *r)
{
    dpa_error err;
    if (renyi_json(json, re, im, r, &err) != DPA_OK) fail_msg("renyi %s at %g%+gi: %s", json, re, im, err.message);
}

static int close_rel(double a, double b, double tol) { return fabs(a - b) <= tol * fmax(fabs(b), 1e-300); }

/* a value within [lower, upper], and a reference inside with a slack of
 * `slack` relative (the reference's own rounding) */
static void check_bracket(const dpa_renyi_value *v, double ref, double slack, const char *what)
{
    CHECK(v->lower <= v->re && v->re <= v->upper, "%s: value %.17g outside [%.17g, %.17g]", what, v->re, v->lower,
          v->upper);
    CHECK(v->lower <= ref * (1 + slack) + 1e-300 && ref * (1 - slack) <= v->upper,
          "%s: reference %.17g outside [%.17g, %.17g]", what, ref, v->lower, v->upper);
}

/* ------------------------------------------------------------------ MPFR references */

/* D_A from log E */
static double mp_d(mpfr_t le, double alpha)
{
    mpfr_t a;
    mpfr_init2(a, P);
    mpfr_set_d(a, alpha, MPFR_RNDN);
    mpfr_sub_ui(a, a, 1, MPFR_RNDN);
    mpfr_div(le, le, a, MPFR_RNDN);
    mpfr_clear(a);
    return mpfr_get_d(le, MPFR_RNDN);
}

/* randomized response: D_A = log(p^A (1-p)^{1-A} + (1-p)^A p^{1-A})/(A-1),
 * p = e^eps/(1+e^eps) (Mironov 2017 Prop 5), any real A != 1 */
static double mp_rr(double eps, double alpha)
{
    mpfr_t p, p1, a, t, u, s;
    mpfr_inits2(P, p, p1, a, t, u, s, (mpfr_ptr)0);
    mpfr_set_d(p, eps, MPFR_RNDN);
    mpfr_exp(p, p, MPFR_RNDN);
    mpfr_add_ui(t, p, 1, MPFR_RNDN);
    mpfr_div(p, p, t, MPFR_RNDN);
    mpfr_ui_sub(p1, 1, p, MPFR_RNDN);
    mpfr_set_d(a, alpha, MPFR_RNDN);
    mpfr_pow(t, p, a, MPFR_RNDN);
    mpfr_ui_sub(u, 1, a, MPFR_RNDN);
    mpfr_pow(u, p1, u, MPFR_RNDN);
    mpfr_mul(s, t, u, MPFR_RNDN);
    mpfr_pow(t, p1, a, MPFR_RNDN);
    mpfr_ui_sub(u, 1, a, MPFR_RNDN);
    mpfr_pow(u, p, u, MPFR_RNDN);
    mpfr_mul(t, t, u, MPFR_RNDN);
    mpfr_add(s, s, t, MPFR_RNDN);
    mpfr_log(s, s, MPFR_RNDN);
    double d = mp_d(s, alpha);
    mpfr_clears(p, p1, a, t, u, s, (mpfr_ptr)0);
    return d;
}

/* k-fold randomized response as the direct sum over the composed losses
 * eps (2j - k), j ~ Bin(k, p): E = sum_j C(k,j) p^j (1-p)^{k-j} e^{(A-1) eps (2j-k)} */
static double mp_rr_sum(double eps, unsigned k, double alpha)
{
    mpfr_t p, p1, bin, s, t, x;
    mpfr_inits2(P, p, p1, bin, s, t, x, (mpfr_ptr)0);
    mpfr_set_d(p, eps, MPFR_RNDN);
    mpfr_exp(p, p, MPFR_RNDN);
    mpfr_add_ui(t, p, 1, MPFR_RNDN);
    mpfr_div(p, p, t, MPFR_RNDN);
    mpfr_ui_sub(p1, 1, p, MPFR_RNDN);
    mpfr_set_ui(bin, 1, MPFR_RNDN);
    mpfr_set_ui(s, 0, MPFR_RNDN);
    for (unsigned j = 0; j <= k; j++) {
        mpfr_pow_ui(t, p, j, MPFR_RNDN);
        mpfr_pow_ui(x, p1, k - j, MPFR_RNDN);
        mpfr_mul(t, t, x, MPFR_RNDN);
        mpfr_mul(t, t, bin, MPFR_RNDN);
        mpfr_set_d(x, alpha, MPFR_RNDN);
        mpfr_sub_ui(x, x, 1, MPFR_RNDN);
        mpfr_mul_d(x, x, eps, MPFR_RNDN);
        mpfr_mul_si(x, x, 2 * (long)j - (long)k, MPFR_RNDN);
        mpfr_exp(x, x, MPFR_RNDN);
        mpfr_mul(t, t, x, MPFR_RNDN);
        mpfr_add(s, s, t, MPFR_RNDN);
        mpfr_mul_ui(bin, bin, k - j, MPFR_RNDN);
        mpfr_div_ui(bin, bin, j + 1, MPFR_RNDN);
    }
    mpfr_log(s, s, MPFR_RNDN);
    double d = mp_d(s, alpha);
    mpfr_clears(p, p1, bin, s, t, x, (mpfr_ptr)0);
    return d;
}

/* Laplace, lambda = scale/sensitivity (Mironov 2017 Table 2):
 * D_A = log( A/(2A-1) e^{(A-1)/lambda} + (A-1)/(2A-1) e^{-A/lambda} )/(A-1) */
static double mp_laplace(double lambda, double alpha)
{
    mpfr_t a, l, t, u, s, d;
    mpfr_inits2(P, a, l, t, u, s, d, (mpfr_ptr)0);
    mpfr_set_d(a, alpha, MPFR_RNDN);
    mpfr_set_d(l, lambda, MPFR_RNDN);
    mpfr_mul_2ui(d, a, 1, MPFR_RNDN);
    mpfr_sub_ui(d, d, 1, MPFR_RNDN); /* 2A - 1 */
    mpfr_sub_ui(t, a, 1, MPFR_RNDN);
    mpfr_div(t, t, l, MPFR_RNDN);
    mpfr_exp(t, t, MPFR_RNDN);
    mpfr_mul(t, t, a, MPFR_RNDN);
    mpfr_div(t, t, d, MPFR_RNDN);
    mpfr_div(u, a, l, MPFR_RNDN);
    mpfr_neg(u, u, MPFR_RNDN);
    mpfr_exp(u, u, MPFR_RNDN);
    mpfr_sub_ui(s, a, 1, MPFR_RNDN);
    mpfr_mul(u, u, s, MPFR_RNDN);
    mpfr_div(u, u, d, MPFR_RNDN);
    mpfr_add(s, t, u, MPFR_RNDN);
    mpfr_log(s, s, MPFR_RNDN);
    double r = mp_d(s, alpha);
    mpfr_clears(a, l, t, u, s, d, (mpfr_ptr)0);
    return r;
}

/* the subsampled Gaussian at integer order n (remove direction):
 * sum_k C(n,k) q^k (1-q)^{n-k} e^{k(k-1) mu^2/2} */
static double mp_sgm_int(double mu, double q, unsigned n)
{
    mpfr_t s, t, c, qq, q1, m, x, bin;
    mpfr_inits2(P, s, t, c, qq, q1, m, x, bin, (mpfr_ptr)0);
    mpfr_set_ui(bin, 1, MPFR_RNDN);
    mpfr_set_d(qq, q, MPFR_RNDN);
    mpfr_ui_sub(q1, 1, qq, MPFR_RNDN);
    mpfr_set_d(m, mu, MPFR_RNDN);
    mpfr_sqr(m, m, MPFR_RNDN);
    mpfr_div_2ui(m, m, 1, MPFR_RNDN);
    mpfr_set_ui(s, 0, MPFR_RNDN);
    for (unsigned k = 0; k <= n; k++) {
        mpfr_set(c, bin, MPFR_RNDN);
        mpfr_mul_ui(bin, bin, n - k, MPFR_RNDN);
        mpfr_div_ui(bin, bin, k + 1, MPFR_RNDN);
        mpfr_pow_ui(t, qq, k, MPFR_RNDN);
        mpfr_mul(c, c, t, MPFR_RNDN);
        mpfr_pow_ui(t, q1, n - k, MPFR_RNDN);
        mpfr_mul(c, c, t, MPFR_RNDN);
        mpfr_mul_ui(x, m, (unsigned long)k * (k ? k - 1 : 0), MPFR_RNDN);
        mpfr_exp(x, x, MPFR_RNDN);
        mpfr_mul(c, c, x, MPFR_RNDN);
        mpfr_add(s, s, c, MPFR_RNDN);
    }
    mpfr_log(s, s, MPFR_RNDN);
    double d = mp_d(s, n);
    mpfr_clears(s, t, c, qq, q1, m, x, bin, (mpfr_ptr)0);
    return d;
}

/* ------------------------------------------------------------------ numerical references */

typedef long double (*ldfn)(long double x, const void *ctx);

/* composite Simpson on [a, b] with 2n panels */
static long double simpson(ldfn f, const void *ctx, long double a, long double b, int n)
{
    long double h = (b - a) / (2 * n), s = f(a, ctx) + f(b, ctx);
    for (int i = 1; i < 2 * n; i++) s += (i & 1 ? 4 : 2) * f(a + i * h, ctx);
    return s * h / 3;
}

/* the output-space densities of a Poisson-subsampled mechanism:
 * P = q N(s, sigma^2) + (1-q) N(0, sigma^2) (or Laplace), Q = N(0, sigma^2);
 * remove integrand P^A Q^{1-A}, add integrand Q^A P^{1-A}, kl integrands */
typedef struct sub_ctx {
    int laplace;    /* 0 Gaussian (scale = sigma), 1 Laplace (scale = b) */
    long double scale, q, alpha;
    int add, kl;
} sub_ctx;

static long double dens(const sub_ctx *c, long double x, long double m)
{
    if (c->laplace) return expl(-fabsl(x - m) / c->scale) / (2 * c->scale);
    long double z = (x - m) / c->scale;
    return expl(-0.5L * z * z) / (c->scale * sqrtl(2 * 3.14159265358979323846264338327950288L));
}

static long double sub_integrand(long double x, const void *vc)
{
    const sub_ctx *c = vc;
    long double b = dens(c, x, 0), a = c->q * dens(c, x, 1) + (1 - c->q) * b;
    if (c->add) {
        long double t = a;
        a = b;
        b = t;
    }
    if (!(a > 0) || !(b > 0)) return 0;
    if (c->kl) return a * logl(a / b);
    return expl(c->alpha * logl(a) + (1 - c->alpha) * logl(b));
}

/* D_A of the subsampled pair in one direction by Simpson over the output
 * (Laplace: split at the kinks 0 and 1, where the densities are smooth).
 * Gaussian: the integrand is a mixture of Gaussians of width scale
 * centred in [min(0, 1 - A), max(1, A)]; 14 widths beyond cost e^{-98}, and
 * steps of scale/200 leave a Simpson error ~ (1/200)^4/180 ~ 1e-12
 * relative.  Laplace: tails decay at least like e^{-min(A, 1)|x|/b} beyond
 * the kinks (40 b / min(A, 1) is e^{-40}... of the mass scale, far below
 * the checks' 1e-9), steps b/400. */
static double sub_ref(int laplace, double scale, double q, double alpha, int add)
{
    sub_ctx c = {laplace, scale, q, alpha, add, alpha == 1};
    long double in;
    if (laplace) {
        long double w = 40 * scale / fmin(alpha, 1.0);
        int n = (int)(w / (scale / 400)) / 2 + 1;
        in = simpson(sub_integrand, &c, -w, 0, n) + simpson(sub_integrand, &c, 0, 1, 4000) +
             simpson(sub_integrand, &c, 1, 1 + w, n);
    } else {
        long double lo = fmin(0.0, 1 - alpha) - 14 * scale, hi = fmax(1.0, alpha) + 14 * scale;
        int n = (int)((hi - lo) / (scale / 200)) / 2 + 1;
        in = simpson(sub_integrand, &c, lo, hi, n);
    }
    if (alpha == 1) return (double)in;
    return (double)(logl(in) / (alpha - 1));
}

/* ------------------------------------------------------------------ continuous logarithms (complex orders) */

typedef long double complex (*cfn)(long double complex z, const void *ctx);

/* log f(r + it) continued from the real value at t = 0 along t in [0, T]
 * by dense steps: each step takes the branch nearest the previous value
 * (steps so small that the phase moves far less than pi) */
static long double complex cont_log(cfn f, const void *ctx, double r, double T, int steps)
{
    long double complex prev = clogl(f(r, ctx));
    for (int i = 1; i <= steps; i++) {
        long double t = (long double)T * i / steps;
        long double complex v = clogl(f(r + I * t, ctx));
        long double d = cimagl(v) - cimagl(prev);
        long double k = roundl(d / (2 * 3.14159265358979323846264338327950288L));
        prev = creall(v) + I * (cimagl(v) - 2 * 3.14159265358979323846264338327950288L * k);
    }
    return prev;
}

/* atoms: f(z) = sum_j m_j e^{z w_j} */
typedef struct atoms_ctx {
    int n;
    long double m[4], w[4];
} atoms_ctx;

static long double complex atoms_mgf(long double complex z, const void *vc)
{
    const atoms_ctx *c = vc;
    long double complex s = 0;
    for (int j = 0; j < c->n; j++) s += c->m[j] * cexpl(z * c->w[j]);
    return s;
}

/* Laplace E(z) at A = 1 + z (Mironov's closed form, analytic in A) */
static long double complex laplace_mgf(long double complex z, const void *vc)
{
    long double lambda = *(const long double *)vc;
    long double complex A = 1 + z;
    return A / (2 * A - 1) * cexpl((A - 1) / lambda) + (A - 1) / (2 * A - 1) * cexpl(-A / lambda);
}

/* subsampled Gaussian E(z) = E_Q[(1 - q + q e^X)^{1+z}], X ~ N(-mu^2/2, mu^2)
 * (remove), or with exponent -z (add: E(-1-z)), by Simpson over x */
typedef struct sgm_ctx {
    long double mu, q;
    int add;
} sgm_ctx;

static long double complex sgm_mgf(long double complex z, const void *vc)
{
    const sgm_ctx *c = vc;
    long double complex g = c->add ? -z : 1 + z;
    long double m = -0.5L * c->mu * c->mu, lo = m - 30 * c->mu, hi = m + 30 * c->mu + 3 * c->mu * c->mu;
    int n = 4000;
    long double h = (hi - lo) / (2 * n);
    long double complex s = 0;
    for (int i = 0; i <= 2 * n; i++) {
        long double x = lo + i * h, u = (x - m) / c->mu;
        long double w = (i == 0 || i == 2 * n) ? 1 : (i & 1 ? 4 : 2);
        long double base = logl(1 - c->q + c->q * expl(x));
        s += w * expl(-0.5L * u * u) * cexpl(g * base);
    }
    return s * h / 3 / (c->mu * sqrtl(2 * 3.14159265358979323846264338327950288L));
}

/* ------------------------------------------------------------------ tests */

static void test_parse(void **state)
{
    (void)state;
    dpa_error err;
    struct { const char *s; double re, im; } good[] = {
        {"2", 2, 0},          {"0.5", 0.5, 0},     {"1e3", 1000, 0},       {".5", 0.5, 0},
        {"+2", 2, 0},         {"3.", 3, 0},        {"1.5+2i", 1.5, 2},     {"1.5-2i", 1.5, -2},
        {"1.5+i", 1.5, 1},    {"1.5-i", 1.5, -1},  {"2E-1+3.5e1i", 0.2, 35}, {"2+0i", 2, 0},
        {"1e-300", 1e-300, 0}, {"7+.25i", 7, 0.25},
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        double re = -1, im = -1;
        dpa_status st = dpa_renyi_parse_order(good[i].s, &re, &im, &err);
        CHECK(st == DPA_OK && re == good[i].re && im == good[i].im, "parse \"%s\": status %d, %g%+gi (%s)", good[i].s,
              (int)st, re, im, st ? err.message : "");
    }
    const char *bad[] = {"",      "abc",   "1.5+",   "inf",   "nan",   "2x",     " 2",   "2 ",   "1.5+2",
                         "1.5+2ii", "1e",  "0x10",   "-1",    "0",     "2i",     "i",    "-i",   "1.5++2i",
                         "1.5+-2i", "1..5", "1e999", "-0.5+2i", "0+1i", "1.5 + 2i", "infinity", "1.5+2j", "+",
                         ".",     "1e+",   "0.0",    "1,5"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        double re = 42, im = 43;
        err.message[0] = 0;
        dpa_status st = dpa_renyi_parse_order(bad[i], &re, &im, &err);
        CHECK(st == DPA_EINVAL && re == 42 && im == 43 && err.message[0], "parse \"%s\" should fail: status %d", bad[i],
              (int)st);
    }
    /* the refusals say why */
    dpa_renyi_parse_order("2i", &(double){0}, &(double){0}, &err);
    CHECK(strstr(err.message, "real part") != NULL, "pure imaginary message: %s", err.message);
    dpa_renyi_parse_order("-3", &(double){0}, &(double){0}, &err);
    CHECK(strstr(err.message, "> 0") != NULL, "negative message: %s", err.message);
    CHECK(dpa_renyi_parse_order(NULL, &(double){0}, &(double){0}, &err) == DPA_EINVAL, "NULL string");
}

static void test_gaussian(void **state)
{
    (void)state;
    /* sigma 2 (mu 0.5) x 1000, gdp 0.3 x 7, sigma 0.8 sensitivity 2 (mu 2.5) */
    const char *js = "{\"compose\":[{\"repeat\":{\"count\":1000,\"event\":{\"gaussian\":{\"sigma\":2}}}},"
                     "{\"repeat\":{\"count\":7,\"event\":{\"gdp\":{\"mu\":0.3}}}},"
                     "{\"gaussian\":{\"sigma\":0.8,\"sensitivity\":2}}]}";
    long double mu2 = 1000 * 0.25L + 7 * 0.09L + 6.25L;
    const double real[] = {0.01, 0.25, 0.5, 0.999, 1, 1.5, 2, 10, 1e3, 1e9};
    for (size_t i = 0; i < sizeof real / sizeof real[0]; i++) {
        dpa_renyi_result r;
        renyi_ok(js, real[i], 0, &r);
        double ref = (double)(real[i] * mu2 / 2);
        char what[64];
        snprintf(what, sizeof what, "gaussian A=%g", real[i]);
        check_bracket(&r.remove, ref, 2 * U, what);
        CHECK(close_rel(r.remove.re, ref, 1e-14) && r.remove.im == 0, "%s: %.17g vs %.17g", what, r.remove.re, ref);
        CHECK(r.remove.certified && r.remove.tight && r.remove.exists && r.symmetric && r.binding == 0,
              "%s: flags %d %d %d %d %d", what, r.remove.certified, r.remove.tight, r.remove.exists, r.symmetric,
              r.binding);
        CHECK(r.add.re == r.remove.re && r.add.upper == r.remove.upper, "%s: add = remove", what);
    }
    /* complex orders: D_A = A mu^2/2 and log E = (A-1) A mu^2/2 exactly
     * (the continuation of an entire function) */
    const double complex cplx[] = {1.5 + 2 * I, 0.3 - 4 * I, 5 + 0.5 * I, 1 + 1 * I, 0.01 + 100 * I};
    for (size_t i = 0; i < sizeof cplx / sizeof cplx[0]; i++) {
        dpa_renyi_result r;
        double complex A = cplx[i];
        renyi_ok(js, creal(A), cimag(A), &r);
        long double complex d = A * mu2 / 2, le = (A - 1) * A * mu2 / 2;
        CHECK(cabs(r.remove.re + I * r.remove.im - (double complex)d) <= 1e-14 * cabsl(d),
              "gaussian A=%g%+gi: %.17g%+.17gi vs %.17Lg%+.17Lgi", creal(A), cimag(A), r.remove.re, r.remove.im,
              creall(d), cimagl(d));
        CHECK(cabs(r.remove.log_e_re + I * r.remove.log_e_im - (double complex)le) <= 1e-14 * cabsl(le),
              "gaussian A=%g%+gi: log E %.17g%+.17gi", creal(A), cimag(A), r.remove.log_e_re, r.remove.log_e_im);
        CHECK(r.remove.certified && r.remove.exists && isnan(r.remove.lower), "gaussian complex flags");
    }
}

static void test_randomized_response(void **state)
{
    (void)state;
    const double eps[] = {0.1, 1, 3};
    const double real[] = {0.2, 0.5, 0.9, 1.1, 2, 7.5, 40};
    for (size_t e = 0; e < 3; e++) {
        char js[240], js1[80];
        snprintf(js1, sizeof js1, "{\"randomized_response\":{\"epsilon\":%.17g}}", eps[e]);
        snprintf(js, sizeof js, "{\"repeat\":{\"count\":25,\"event\":%s}}", js1);
        for (size_t i = 0; i < sizeof real / sizeof real[0]; i++) {
            dpa_renyi_result r;
            renyi_ok(js, real[i], 0, &r);
            double ref = 25 * mp_rr(eps[e], real[i]), sum = mp_rr_sum(eps[e], 25, real[i]);
            char what[80];
            snprintf(what, sizeof what, "rr eps=%g x25 A=%g", eps[e], real[i]);
            CHECK(close_rel(ref, sum, 1e-13), "%s: closed form %.17g vs direct sum %.17g", what, ref, sum);
            check_bracket(&r.remove, ref, 4 * U, what);
            CHECK(close_rel(r.remove.re, sum, 1e-12), "%s: %.17g vs %.17g", what, r.remove.re, sum);
            CHECK(r.remove.certified && r.remove.tight, "%s: not exact", what);
        }
        /* complex orders: exp(log E) against the direct sum over the 2^k
         * composed outcomes (binomial), and the branch against k times the
         * continuous log of one leaf's closed form */
        const double complex cplx[] = {1.5 + 2 * I, 0.3 - 4 * I, 3 + 0.7 * I, 0.8 + 0.2 * I};
        long double p = expl(eps[e]) / (1 + expl(eps[e]));
        atoms_ctx one = {2, {p, 1 - p}, {eps[e], -eps[e]}};
        for (size_t i = 0; i < sizeof cplx / sizeof cplx[0]; i++) {
            double complex A = cplx[i], z = A - 1;
            dpa_renyi_result r;
            renyi_ok(js, creal(A), cimag(A), &r);
            long double complex direct = 0, bin = 1;
            for (int j = 0; j <= 25; j++) {
                direct += bin * powl(p, j) * powl(1 - p, 25 - j) * cexpl(z * eps[e] * (2 * j - 25));
                bin = bin * (25 - j) / (j + 1);
            }
            double complex got = cexp(r.remove.log_e_re + I * r.remove.log_e_im);
            CHECK(cabsl(got - direct) <= 1e-11 * cabsl(direct) + 1e-300, "rr eps=%g A=%g%+gi: E %.12g%+.12gi vs %.12Lg%+.12Lgi",
                  eps[e], creal(A), cimag(A), creal(got), cimag(got), creall(direct), cimagl(direct));
            long double complex l1 = cimag(z) >= 0 ? cont_log(atoms_mgf, &one, creal(z), cimag(z), 20000)
                                                   : conjl(cont_log(atoms_mgf, &one, creal(z), -cimag(z), 20000));
            long double complex lref = 25 * l1;
            CHECK(cabsl(r.remove.log_e_re + I * r.remove.log_e_im - lref) <= 1e-10 * (1 + cabsl(lref)),
                  "rr eps=%g A=%g%+gi: branch %.15g%+.15gi vs %.15Lg%+.15Lgi", eps[e], creal(A), cimag(A),
                  r.remove.log_e_re, r.remove.log_e_im, creall(lref), cimagl(lref));
            long double complex dref = lref / z;
            CHECK(cabsl(r.remove.re + I * r.remove.im - dref) <= 1e-10 * (1 + cabsl(dref)), "rr complex D");
            CHECK(r.remove.exists && r.remove.certified, "rr complex flags: %s", r.remove.note);
        }
    }
    /* a large count: the imaginary part is count times one leaf's
     * continuation, far beyond (-pi, pi] */
    dpa_renyi_result r1, rk;
    renyi_ok("{\"randomized_response\":{\"epsilon\":1}}", 1.5, 20, &r1);
    renyi_ok("{\"repeat\":{\"count\":1000000,\"event\":{\"randomized_response\":{\"epsilon\":1}}}}", 1.5, 20, &rk);
    long double p = expl(1.0L) / (1 + expl(1.0L));
    atoms_ctx one = {2, {p, 1 - p}, {1, -1}};
    long double complex l1 = cont_log(atoms_mgf, &one, 0.5, 20, 200000);
    CHECK(fabs(rk.remove.log_e_im - 1e6 * (double)cimagl(l1)) <= 1e-7 * 1e6 * fabsl(cimagl(l1)) &&
              fabs(rk.remove.log_e_im) > 1e6,
          "rr x1e6 at 1.5+20i: Im log E %.17g vs %.17Lg", rk.remove.log_e_im, 1e6 * cimagl(l1));
    CHECK(close_rel(rk.remove.log_e_im, 1e6 * r1.remove.log_e_im, 1e-12), "rr x1e6 = 1e6 x rr");
}

static void test_laplace(void **state)
{
    (void)state;
    const double scale[] = {0.5, 2, 10};
    const double sens[] = {1, 3};
    const double real[] = {0.1, 0.3, 0.7, 0.999, 1.001, 1.5, 2, 3, 10, 100};
    for (size_t s = 0; s < 3; s++)
        for (size_t t = 0; t < 2; t++) {
            char js[160];
            snprintf(js, sizeof js, "{\"laplace\":{\"scale\":%.17g,\"sensitivity\":%.17g}}", scale[s], sens[t]);
            double lambda = scale[s] / sens[t];
            for (size_t i = 0; i < sizeof real / sizeof real[0]; i++) {
                dpa_renyi_result r;
                renyi_ok(js, real[i], 0, &r);
                double ref = mp_laplace(lambda, real[i]);
                char what[96];
                snprintf(what, sizeof what, "laplace b=%g s=%g A=%g", scale[s], sens[t], real[i]);
                check_bracket(&r.remove, ref, 4 * U, what);
                CHECK(close_rel(r.remove.re, ref, 1e-11), "%s: %.17g vs %.17g", what, r.remove.re, ref);
                CHECK(r.remove.certified && r.remove.tight && r.symmetric, "%s: flags", what);
            }
            /* KL: e0 + e^{-e0} - 1 */
            dpa_renyi_result r;
            renyi_ok(js, 1, 0, &r);
            double e0 = 1 / lambda, kl = e0 + expm1(-e0);
            check_bracket(&r.remove, kl, 4 * U, "laplace KL");
            /* complex orders against the continuation of Mironov's closed form */
            const double complex cplx[] = {1.5 + 2 * I, 0.4 + 3 * I, 4 - 1 * I, 0.9 + 0.1 * I};
            long double lam = lambda;
            for (size_t i = 0; i < 4; i++) {
                double complex A = cplx[i], z = A - 1;
                renyi_ok(js, creal(A), cimag(A), &r);
                long double complex lref = cimag(z) >= 0 ? cont_log(laplace_mgf, &lam, creal(z), cimag(z), 20000)
                                                         : conjl(cont_log(laplace_mgf, &lam, creal(z), -cimag(z), 20000));
                CHECK(cabsl(r.remove.log_e_re + I * r.remove.log_e_im - lref) <= 1e-10 * (1 + cabsl(lref)),
                      "laplace b=%g s=%g A=%g%+gi: log E %.15g%+.15gi vs %.15Lg%+.15Lgi", scale[s], sens[t], creal(A),
                      cimag(A), r.remove.log_e_re, r.remove.log_e_im, creall(lref), cimagl(lref));
            }
        }
}

static void test_subsampled_gaussian(void **state)
{
    (void)state;
    const double sig[] = {0.8, 1.1, 3};
    const double rate[] = {0.01, 0.2};
    for (size_t a = 0; a < 3; a++)
        for (size_t b = 0; b < 2; b++) {
            char js[200];
            snprintf(js, sizeof js,
                     "{\"repeat\":{\"count\":50,\"event\":{\"poisson\":{\"rate\":%.17g,\"event\":{\"gaussian\":"
                     "{\"sigma\":%.17g}}}}}}",
                     rate[b], sig[a]);
            const unsigned ints[] = {2, 3, 5, 8, 20, 64};
            for (size_t i = 0; i < 6; i++) {
                dpa_renyi_result r;
                renyi_ok(js, ints[i], 0, &r);
                double ref = 50 * mp_sgm_int(1 / sig[a], rate[b], ints[i]);
                char what[96];
                snprintf(what, sizeof what, "sgm sigma=%g q=%g A=%u", sig[a], rate[b], ints[i]);
                check_bracket(&r.remove, ref, 4 * U, what);
                CHECK(close_rel(r.remove.re, ref, 1e-9), "%s: %.17g vs %.17g", what, r.remove.re, ref);
                CHECK(r.remove.certified && r.remove.tight, "%s: remove not tight [%.17g, %.17g]", what,
                      r.remove.lower, r.remove.upper);
                /* asymmetric: the add direction differs and is smaller */
                CHECK(!r.symmetric && r.add.re < r.remove.re * (1 - 1e-6) && r.binding == 1,
                      "%s: add %.17g remove %.17g binding %d", what, r.add.re, r.remove.re, r.binding);
                if (ints[i] <= 8) {
                    double radd = 50 * sub_ref(0, sig[a], rate[b], ints[i], 1);
                    check_bracket(&r.add, radd, 1e-9, what);
                    CHECK(close_rel(r.add.upper, radd, 1e-7), "%s: add %.17g vs %.17g", what, r.add.upper, radd);
                }
            }
            /* orders in (0, 1] and fractional orders, both directions, against
             * Simpson integrals over the output (three of the six cases: the
             * series at orders below 1 costs ~0.1 s each) */
            if ((a + b) % 2) continue;
            const double fr[] = {0.2, 0.5, 0.8, 1, 1.5, 2.5};
            for (size_t i = 0; i < 6; i++) {
                dpa_renyi_result r;
                renyi_ok(js, fr[i], 0, &r);
                for (int dir = 0; dir < 2; dir++) {
                    const dpa_renyi_value *v = dir ? &r.add : &r.remove;
                    double ref = 50 * sub_ref(0, sig[a], rate[b], fr[i], dir);
                    char what[112];
                    snprintf(what, sizeof what, "sgm sigma=%g q=%g A=%g %s", sig[a], rate[b], fr[i],
                             dir ? "add" : "remove");
                    check_bracket(v, ref, 1e-9, what);
                    CHECK(close_rel(v->re, ref, 1e-7),
                          "%s: %.17g vs %.17g (%s)", what, v->re, ref, v->note);
                    CHECK(fr[i] > 1 ? v->certified : !v->certified, "%s: certified flag %d", what, v->certified);
                }
            }
        }
    /* complex orders: the phi module's quadrature against a Simpson integral
     * over the base loss, continued by dense steps, both directions */
    const double complex cplx[] = {2 + 1 * I, 0.5 + 3 * I, 3 - 2 * I};
    for (size_t i = 0; i < 3; i++) {
        double complex A = cplx[i], z = A - 1;
        dpa_renyi_result r;
        renyi_ok("{\"repeat\":{\"count\":10,\"event\":{\"poisson\":{\"rate\":0.3,\"event\":{\"gaussian\":{\"sigma\":"
                 "0.9}}}}}}",
                 creal(A), cimag(A), &r);
        for (int dir = 0; dir < 2; dir++) {
            sgm_ctx c = {1 / 0.9L, 0.3L, dir};
            long double complex l1 = cimag(z) >= 0 ? cont_log(sgm_mgf, &c, creal(z), cimag(z), 100)
                                                   : conjl(cont_log(sgm_mgf, &c, creal(z), -cimag(z), 100));
            const dpa_renyi_value *v = dir ? &r.add : &r.remove;
            CHECK(cabsl(v->log_e_re + I * v->log_e_im - 10 * l1) <= 1e-8 * (1 + cabsl(10 * l1)),
                  "sgm A=%g%+gi %s: log E %.15g%+.15gi vs %.15Lg%+.15Lgi", creal(A), cimag(A), dir ? "add" : "remove",
                  v->log_e_re, v->log_e_im, 10 * creall(l1), 10 * cimagl(l1));
            CHECK(v->exists && !v->certified, "sgm complex flags (estimate)");
        }
    }
}

static void test_subsampled_laplace(void **state)
{
    (void)state;
    const char *js = "{\"poisson\":{\"rate\":0.3,\"event\":{\"laplace\":{\"scale\":1.5}}}}";
    const double orders[] = {0.3, 0.7, 1, 2, 3, 4.5};
    for (size_t i = 0; i < 6; i++) {
        dpa_renyi_result r;
        renyi_ok(js, orders[i], 0, &r);
        for (int dir = 0; dir < 2; dir++) {
            const dpa_renyi_value *v = dir ? &r.add : &r.remove;
            double ref = sub_ref(1, 1.5, 0.3, orders[i], dir);
            char what[80];
            snprintf(what, sizeof what, "sub laplace A=%g %s", orders[i], dir ? "add" : "remove");
            check_bracket(v, ref, 1e-9, what);
            CHECK(close_rel(v->re, ref, 1e-7), "%s: %.17g vs %.17g", what, v->re, ref);
        }
    }
}

static void test_approx(void **state)
{
    (void)state;
    const char *js = "{\"compose\":[{\"approx\":{\"epsilon\":0.5,\"delta\":1e-6}},{\"gaussian\":{\"sigma\":3}},"
                     "{\"poisson\":{\"rate\":0.1,\"event\":{\"gaussian\":{\"sigma\":1}}}}]}";
    const double inf_orders[] = {1, 1.0001, 2, 50};
    for (size_t i = 0; i < 4; i++) {
        dpa_renyi_result r;
        renyi_ok(js, inf_orders[i], 0, &r);
        for (int dir = 0; dir < 2; dir++) {
            const dpa_renyi_value *v = dir ? &r.add : &r.remove;
            CHECK(!v->exists && v->re == INFINITY && v->lower == INFINITY && strstr(v->note, "+inf"),
                  "approx A=%g %s: %g [%g, %g] %s", inf_orders[i], dir ? "add" : "remove", v->re, v->lower, v->upper,
                  v->note);
        }
    }
    /* below 1 it is finite: (1 - delta) scales the finite part, so
     * D_A = log(1 - delta)/(A - 1) + D_A(RR_eps) for the approx leaf alone */
    const double fin[] = {0.1, 0.5, 0.99};
    for (size_t i = 0; i < 3; i++) {
        dpa_renyi_result r;
        renyi_ok("{\"approx\":{\"epsilon\":0.5,\"delta\":0.01}}", fin[i], 0, &r);
        double ref = log1p(-0.01) / (fin[i] - 1) + mp_rr(0.5, fin[i]);
        check_bracket(&r.remove, ref, 1e-14, "approx below 1");
        CHECK(r.remove.exists && close_rel(r.remove.re, ref, 1e-12), "approx A=%g: %.17g vs %.17g", fin[i],
              r.remove.re, ref);
        renyi_ok(js, fin[i], 0, &r);
        CHECK(r.remove.exists && isfinite(r.remove.upper) && r.add.exists, "approx mix finite at A=%g", fin[i]);
    }
    /* complex orders: does not exist for Re A >= 1, exists below */
    dpa_renyi_result r;
    renyi_ok(js, 1.5, 1, &r);
    CHECK(!r.remove.exists && isnan(r.remove.re) && strstr(r.remove.note, "does not exist"), "approx 1.5+i: %s",
          r.remove.note);
    renyi_ok(js, 1, 2, &r);
    CHECK(!r.remove.exists && !r.add.exists, "approx 1+2i");
    renyi_ok("{\"approx\":{\"epsilon\":0.5,\"delta\":0.01}}", 0.5, 1, &r);
    long double p = 0.99L * expl(0.5L) / (1 + expl(0.5L));
    atoms_ctx one = {2, {p, 0.99L - p}, {0.5L, -0.5L}};
    long double complex lref = cont_log(atoms_mgf, &one, -0.5, 1, 20000);
    CHECK(r.remove.exists && cabsl(r.remove.log_e_re + I * r.remove.log_e_im - lref) <= 1e-12,
          "approx 0.5+i: %.17g%+.17gi vs %.17Lg%+.17Lgi", r.remove.log_e_re, r.remove.log_e_im, creall(lref),
          cimagl(lref));
    /* the non-private pair (a Gaussian with mu beyond 1e150): mutually
     * singular, infinite at every real order */
    renyi_ok("{\"gdp\":{\"mu\":1e200}}", 0.5, 0, &r);
    CHECK(!r.remove.exists && r.remove.re == INFINITY, "non-private at 0.5: %g %s", r.remove.re, r.remove.note);
}

/* a small generator (LCG) of compositions */
static uint64_t rng_state;
static double rnd(void)
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(rng_state >> 11) / 9007199254740992.0;
}

static void gen_spec(char *buf, size_t n, int closed_only)
{
    int nleaves = 1 + (int)(rnd() * 3);
    size_t k = (size_t)snprintf(buf, n, "{\"compose\":[");
    for (int i = 0; i < nleaves; i++) {
        int kind = (int)(rnd() * (closed_only ? 3 : 5));
        int count = 1 + (int)(rnd() * 20);
        char leaf[160];
        switch (kind) {
        case 0: snprintf(leaf, sizeof leaf, "{\"gaussian\":{\"sigma\":%.6g}}", 0.5 + 5 * rnd()); break;
        case 1: snprintf(leaf, sizeof leaf, "{\"laplace\":{\"scale\":%.6g}}", 0.5 + 5 * rnd()); break;
        case 2: snprintf(leaf, sizeof leaf, "{\"randomized_response\":{\"epsilon\":%.6g}}", 0.05 + 2 * rnd()); break;
        case 3:
            snprintf(leaf, sizeof leaf, "{\"poisson\":{\"rate\":%.6g,\"event\":{\"gaussian\":{\"sigma\":%.6g}}}}",
                     0.005 + 0.3 * rnd(), 0.7 + 3 * rnd());
            break;
        default:
            snprintf(leaf, sizeof leaf, "{\"poisson\":{\"rate\":%.6g,\"event\":{\"laplace\":{\"scale\":%.6g}}}}",
                     0.005 + 0.3 * rnd(), 0.7 + 3 * rnd());
        }
        k += (size_t)snprintf(buf + k, n - k, "%s{\"repeat\":{\"count\":%d,\"event\":%s}}", i ? "," : "", count, leaf);
    }
    snprintf(buf + k, n - k, "]}");
}

static void test_monotone(void **state)
{
    (void)state;
    rng_state = 20260101;
    const double orders[] = {0.2, 0.5, 0.9, 1, 1.3, 2, 3.5, 8};
    enum { NO = sizeof orders / sizeof orders[0] };
    for (int c = 0; c < 24; c++) {
        char js[1024];
        int closed = c < 8;
        gen_spec(js, sizeof js, closed);
        dpa_renyi_result r[NO];
        for (int i = 0; i < NO; i++) renyi_ok(js, orders[i], 0, &r[i]);
        for (int dir = 0; dir < 2; dir++)
            for (int i = 0; i < NO; i++) {
                const dpa_renyi_value *a = dir ? &r[i].add : &r[i].remove;
                CHECK(a->lower >= 0 && a->lower <= a->re && a->re <= a->upper, "%s A=%g: %g [%g, %g]", js, orders[i],
                      a->re, a->lower, a->upper);
                for (int j = i + 1; j < NO; j++) {
                    const dpa_renyi_value *b = dir ? &r[j].add : &r[j].remove;
                    /* D non-decreasing in A: a certified lower bound at the
                     * smaller order cannot exceed a certified upper bound at
                     * the larger one */
                    CHECK(a->lower <= b->upper * (1 + 1e-13), "%s: lower(%g) %.17g > upper(%g) %.17g", js, orders[i],
                          a->lower, orders[j], b->upper);
                    if (a->tight && b->tight)
                        CHECK(a->re <= b->re * (1 + 1e-12), "%s: D(%g) %.17g > D(%g) %.17g", js, orders[i], a->re,
                              orders[j], b->re);
                }
            }
        if (closed)
            for (int i = 0; i < NO; i++)
                CHECK(r[i].remove.tight && r[i].remove.certified, "%s: closed forms not tight at %g", js, orders[i]);
    }
}

static void test_kfold(void **state)
{
    (void)state;
    const char *leaves[] = {
        "{\"laplace\":{\"scale\":1.3}}",
        "{\"randomized_response\":{\"epsilon\":0.7}}",
        "{\"discrete_laplace\":{\"scale\":2}}",
        "{\"poisson\":{\"rate\":0.05,\"event\":{\"gaussian\":{\"sigma\":1.2}}}}",
        "{\"sample\":{\"n\":100,\"m\":10,\"event\":{\"gaussian\":{\"sigma\":1.2}}},\"neighboring\":\"replace\"}",
    };
    const double complex orders[] = {0.4, 1, 2.5, 6, 1.7 + 0.8 * I};
    const double k = 1234;
    for (size_t l = 0; l < sizeof leaves / sizeof leaves[0]; l++) {
        char js1[300], jsk[400];
        const char *nb = strstr(leaves[l], ",\"neighboring\"");
        size_t len = nb ? (size_t)(nb - leaves[l]) : strlen(leaves[l]);
        snprintf(js1, sizeof js1, "%s", leaves[l]);
        snprintf(jsk, sizeof jsk, "{\"repeat\":{\"count\":%g,\"event\":%.*s}}%s", k, (int)len, leaves[l],
                 nb ? nb : "");
        for (size_t i = 0; i < sizeof orders / sizeof orders[0]; i++) {
            double complex A = orders[i];
            if (cimag(A) != 0 && nb) continue; /* sampling w/o replacement: real orders only */
            dpa_renyi_result r1, rk;
            renyi_ok(js1, creal(A), cimag(A), &r1);
            renyi_ok(jsk, creal(A), cimag(A), &rk);
            for (int dir = 0; dir < 2; dir++) {
                const dpa_renyi_value *a = dir ? &r1.add : &r1.remove, *b = dir ? &rk.add : &rk.remove;
                CHECK(close_rel(b->re, k * a->re, 1e-12) && close_rel(b->im, k * a->im, 1e-12),
                      "%s A=%g%+gi: %.17g%+.17gi vs k x %.17g%+.17gi", js1, creal(A), cimag(A), b->re, b->im, a->re,
                      a->im);
                if (cimag(A) == 0)
                    CHECK(b->upper >= k * a->upper * (1 - 1e-13) && b->upper <= k * a->upper * (1 + 1e-12) &&
                              b->lower <= k * a->lower * (1 + 1e-13),
                          "%s A=%g: bounds [%.17g, %.17g] vs k x [%.17g, %.17g]", js1, creal(A), b->lower, b->upper,
                          a->lower, a->upper);
            }
        }
    }
}

static void test_composite(void **state)
{
    (void)state;
    /* a subsampled composition whose second member is nearly trivial
     * (randomized response with eps 1e-9, whose own D_A is ~1e-19; eps 0
     * would be dropped as the identity): its true D is within ~1e-18 of the
     * subsampled Gaussian's (and above it: data processing), so the
     * certified bounds must contain the binomial sum */
    const char *js = "{\"repeat\":{\"count\":10,\"event\":{\"poisson\":{\"rate\":0.1,\"event\":{\"compose\":["
                     "{\"gaussian\":{\"sigma\":1}},{\"randomized_response\":{\"epsilon\":1e-9}}]}}}}}";
    for (unsigned n = 2; n <= 6; n++) {
        dpa_renyi_result r;
        renyi_ok(js, n, 0, &r);
        double ref = 10 * mp_sgm_int(1, 0.1, n);
        check_bracket(&r.remove, ref, 4 * U, "composite integer order");
        CHECK(r.remove.certified && r.remove.re == r.remove.upper && !r.symmetric, "composite flags");
        CHECK(close_rel(r.remove.upper, ref, 1e-9), "composite remove exact at integer order %u: %.17g vs %.17g", n,
              r.remove.upper, ref);
        double radd = 10 * sub_ref(0, 1, 0.1, n, 1);
        check_bracket(&r.add, radd, 1e-9, "composite add");
    }
    const double low[] = {0.3, 1};
    for (int i = 0; i < 2; i++) {
        dpa_renyi_result r;
        renyi_ok(js, low[i], 0, &r);
        for (int dir = 0; dir < 2; dir++) {
            double ref = 10 * sub_ref(0, 1, 0.1, low[i], dir);
            check_bracket(dir ? &r.add : &r.remove, ref, 1e-9, "composite below 1");
        }
    }
    dpa_error err;
    dpa_renyi_result r;
    CHECK(renyi_json(js, 2, 1, &r, &err) == DPA_EUNSUPPORTED && strstr(err.message, "subsampled composition"),
          "composite at a complex order: %s", err.message);
}

static void test_errors(void **state)
{
    (void)state;
    dpa_error err;
    dpa_renyi_result r;
    dpa_spec *s = spec_of("{\"gaussian\":{\"sigma\":1}}");
    CHECK(dpa_renyi(NULL, 2, 0, &r, &err) == DPA_EINVAL, "NULL spec");
    CHECK(dpa_renyi(s, 2, 0, NULL, &err) == DPA_EINVAL, "NULL out");
    CHECK(dpa_renyi(s, 0, 0, &r, &err) == DPA_EINVAL, "A = 0");
    CHECK(dpa_renyi(s, 0, 1, &r, &err) == DPA_EINVAL, "Re A = 0");
    CHECK(dpa_renyi(s, -1, 0, &r, &err) == DPA_EINVAL, "A < 0");
    CHECK(dpa_renyi(s, NAN, 0, &r, &err) == DPA_EINVAL, "NaN");
    CHECK(dpa_renyi(s, INFINITY, 0, &r, &err) == DPA_EINVAL, "inf");
    CHECK(dpa_renyi(s, 2, INFINITY, &r, &err) == DPA_EINVAL, "inf imaginary part");
    CHECK(dpa_renyi(s, 2, 0, &r, NULL) == DPA_OK, "err may be NULL");
    dpa_spec_free(s);
    struct { const char *js; double re, im; dpa_status st; const char *msg; } cases[] = {
        /* (real orders of zcdp and repeat_and_select: test_renyi_bounds.c, issue 24) */
        {"{\"zcdp\":{\"rho\":0.5}}", 2, 1, DPA_EUNSUPPORTED, "zcdp"},
        {"{\"compose\":[{\"gaussian\":{\"sigma\":1}},{\"zcdp\":{\"rho\":0.1}}]}", 0.5, -1, DPA_EUNSUPPORTED, "zcdp"},
        {"{\"repeat_and_select\":{\"mean\":10,\"shape\":1,\"event\":{\"gaussian\":{\"sigma\":2}}}}", 2, 1,
         DPA_EUNSUPPORTED, "repeat_and_select"},
        /* (real orders of discrete_gaussian: test_discrete_gaussian, issue 26) */
        {"{\"discrete_gaussian\":{\"sigma\":2}}", 0.5, 1, DPA_EUNSUPPORTED, "discrete_gaussian"},
        {"{\"sample\":{\"n\":100,\"m\":10,\"event\":{\"gaussian\":{\"sigma\":1}}},\"neighboring\":\"replace\"}", 2, 1,
         DPA_EUNSUPPORTED, "sample"},
        /* randomized response eps = 1 at Re A = 1/2: E(z) = cosh(z + 1/2)/cosh(1/2) has a zero at
         * Im A = pi/2 on the path to 0.5 + 2i */
        {"{\"randomized_response\":{\"epsilon\":1}}", 0.5, 2, DPA_ENUMERIC, "zero"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        err.message[0] = 0;
        dpa_status st = renyi_json(cases[i].js, cases[i].re, cases[i].im, &r, &err);
        CHECK(st == cases[i].st && strstr(err.message, cases[i].msg), "%s at %g%+gi: status %d (%s)", cases[i].js,
              cases[i].re, cases[i].im, (int)st, err.message);
    }
    /* just below that zero the value exists: E = cosh(1/2 + i t)/cosh(1/2) */
    renyi_ok("{\"randomized_response\":{\"epsilon\":1}}", 0.5, 1.5, &r);
    long double complex e = ccoshl(1.5L * I) / coshl(0.5L);
    CHECK(r.remove.exists && cabsl(r.remove.log_e_re + I * r.remove.log_e_im - clogl(e)) <= 1e-12,
          "rr at 0.5+1.5i: %.17g%+.17gi vs %.17Lg%+.17Lgi", r.remove.log_e_re, r.remove.log_e_im, creall(clogl(e)),
          cimagl(clogl(e)));
}

/* The discrete Gaussian at real orders (issue 26; formerly refused for its
 * truncated atom list, then bracketed by [0, max(A, 1) s^2/(2 sigma^2)]
 * (Canonne-Kamath-Steinke 2020, Prop 5)): now the direct sum of
 * src/rdp/renyi_dg_tail.c, a bracket within 1e-12 (relative) + 1e-13 of the truth, its upper
 * end still at most that bound (tests/test_renyi_dg.c has the sweeps).  Reference: D_A of
 * N_Z(s, sigma^2) vs N_Z(0, sigma^2) by direct summation in long double over
 * |k| <= 60 sigma + s (the rest below e^-1800 of the total): it must lie in
 * the bracket. */
static long double dg_div(double sigma, double s, double A)
{
    long double z = 0, e = 0, v = 2.0L * sigma * sigma;
    long K = (long)(60 * sigma + s) + 1;
    for (long k = -K; k <= K; k++) z += expl(-(long double)k * k / v);
    for (long k = -K; k <= K; k++) {
        long double lp = -((long double)k - s) * ((long double)k - s) / v, lq = -(long double)k * k / v;
        e += expl(A * lp + (1 - A) * lq);
    }
    e /= z; /* both normalizers are z (s is an integer) */
    return A == 1 ? NAN : logl(e) / (A - 1);
}

static void test_discrete_gaussian(void **state)
{
    (void)state;
    static const double sig[] = {0.5, 1, 2, 7}, ord[] = {0.5, 1.5, 2, 10};
    dpa_renyi_result r;
    for (size_t i = 0; i < 4; i++)
        for (size_t j = 0; j < 4; j++) {
            char js[128];
            snprintf(js, sizeof js, "{\"discrete_gaussian\":{\"sigma\":%.17g}}", sig[i]);
            renyi_ok(js, ord[j], 0, &r);
            double rho = 1 / (2 * sig[i] * sig[i]), want = fmax(ord[j], 1) * rho;
            long double t = dg_div(sig[i], 1, ord[j]);
            CHECK(r.remove.lower <= t && r.remove.upper <= want * (1 + 1e-14) && t <= r.remove.upper &&
                      r.remove.upper - r.remove.lower <= 1e-12 * want + 1e-13 && r.symmetric,
                  "%s at %g: [%.17g, %.17g], bound %.17g, truth %.17Lg", js, ord[j], r.remove.lower, r.remove.upper,
                  want, t);
        }
    /* composed with a Gaussian: the shares add (mu^2/2 A exact for the Gaussian,
     * and A s^2/(2 sigma^2) = 0.25 for the discrete one at the integer order 2) */
    renyi_ok("{\"compose\":[{\"discrete_gaussian\":{\"sigma\":2}},{\"gaussian\":{\"sigma\":1}}]}", 2, 0, &r);
    CHECK(r.remove.upper >= 0.25 + 1.0 && r.remove.upper <= 1.25 * (1 + 1e-14) && r.remove.lower >= 1.25 * (1 - 1e-12) &&
              r.remove.lower <= 1.25,
          "compose: [%.17g, %.17g]", r.remove.lower, r.remove.upper);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_parse, setup, teardown),
        cmocka_unit_test_setup_teardown(test_discrete_gaussian, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gaussian, setup, teardown),
        cmocka_unit_test_setup_teardown(test_randomized_response, setup, teardown),
        cmocka_unit_test_setup_teardown(test_laplace, setup, teardown),
        cmocka_unit_test_setup_teardown(test_subsampled_gaussian, setup, teardown),
        cmocka_unit_test_setup_teardown(test_subsampled_laplace, setup, teardown),
        cmocka_unit_test_setup_teardown(test_approx, setup, teardown),
        cmocka_unit_test_setup_teardown(test_monotone, setup, teardown),
        cmocka_unit_test_setup_teardown(test_kfold, setup, teardown),
        cmocka_unit_test_setup_teardown(test_composite, setup, teardown),
        cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

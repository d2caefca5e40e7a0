/* Operations on certified privacy profiles (include/dpacct/profile.h): evaluation at
 * any argument, tables, Poisson subsampling (LT Thm 5.1).
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Arithmetic in long double with explicit error bounds, results rounded
 * outwards to double.  Notation as in exact_rr_internal.h: u = 2^-64 (LDBL_EPSILON /
 * 2), E_F = 8u the bound assumed for glibc's expl, expm1l, logl, log1pl
 * (at most 4 ulp; tests/test_exact_rr.c measures them), basic operations
 * correctly rounded (u relative).
 *
 * Every operation here is monotone in the base profiles (non-negative
 * coefficients), and the base profiles are non-increasing in their
 * argument, so an upper bound is the upper base bound at an argument at or
 * below the true one, times an upper bound on the coefficient; a lower
 * bound likewise from the other ends.  Arguments are enclosed by relative
 * error bounds derived below, then rounded outwards to double. */
#include <float.h>
#include <math.h>
#include <stddef.h>
#include "dpacct/profile.h"
#include "num/num.h"

#if LDBL_MANT_DIG < 64
#error "profile_ops.c needs a long double with at least 64 mantissa bits"
#endif

#define U (0.5L * LDBL_EPSILON)
#define E_F (8 * U)

/* a base bracket clamped to 0 <= lo <= up <= 1 (NaN: the trivial side) */
static void clamp01(double *up, double *lo)
{
    if (!(*up <= 1)) *up = 1;
    if (!(*up >= 0)) *up = 0;
    if (!(*lo >= 0)) *lo = 0;
    if (*lo > *up) *lo = *up;
}

static void call_dir(const dpa_profile *p, int dir, double x, double *up, double *lo)
{
    if (dir && p->rev) p->rev(p->rev_ctx, x, up, lo);
    else if (dir) p->fwd(p->fwd_ctx, x, up, lo);
    else p->fwd(p->fwd_ctx, x, up, lo);
    clamp01(up, lo);
}

void dpa_profile_eval(const dpa_profile *p, int dir, double x, double *up, double *lo)
{
    if (isnan(x)) {
        *up = 1;
        *lo = 0;
        return;
    }
    if (x >= 0) {
        call_dir(p, dir, x, up, lo);
        return;
    }
    if (x == -INFINITY) {
        *up = *lo = 1;
        return;
    }
    /* LT eq 7: delta_dir(x) = (1 - e^x) + e^x delta_other(-x), both terms
     * >= 0: expm1l and expl E_F each, the product and the sum u each */
    double ou, ol;
    call_dir(p, 1 - dir, -x, &ou, &ol);
    long double a = -expm1l((long double)x), b = expl((long double)x);
    long double hi = (a * (1 + E_F) + b * (1 + E_F) * ou) * (1 + 3 * U);
    long double lw = (a * (1 - E_F) + b * (1 - E_F) * ol) * (1 - 3 * U);
    *up = dpa_ld_up(fminl(1, hi));
    *lo = dpa_ld_dn(fmaxl(0, lw));
    if (*lo > *up) *lo = *up;
}

/* ---------------- tables ---------------- */

void dpa_profile_table_eval(void *ctx, double x, double *up, double *lo)
{
    const dpa_profile_table *t = ctx;
    size_t n = t->n;
    *up = 1;
    *lo = 0;
    if (isnan(x) || n == 0) return;
    /* the first point >= x (n if none) */
    size_t a = 0, b = n;
    while (a < b) {
        size_t m = a + (b - a) / 2;
        if (t->x[m] < x) a = m + 1;
        else b = m;
    }
    size_t i = a;
    /* lower: non-increasing, so delta(x) >= delta(x_i) >= lo_i; and
     * delta >= 1 - e^x for every pair */
    long double l = 0;
    if (i < n && t->lo) l = t->lo[i];
    if (x < 0) l = fmaxl(l, -expm1l((long double)x) * (1 - E_F - U));
    /* upper */
    long double hu;
    if (i < n && t->x[i] == x) hu = t->up[i];
    else if (i == n) {
        hu = t->up[n - 1]; /* non-increasing beyond the last point */
    } else if (i == 0) {
        /* chord through (0, 1) and (a_0, up_0): 1 - (1 - up_0) e^{x - x_0},
         * decreasing in e^{x - x_0}: take its lower end (the difference
         * x - x_0 < 0 carries u, expl E_F) */
        long double d = (long double)x - t->x[0];
        long double e = expl(d) * (1 - E_F - U - U * fabsl(d));
        if (!(e > 0)) e = 0;
        long double w = 1 - (long double)t->up[0];
        if (w < 0) w = 0;
        hu = (1 - w * e * (1 - 2 * U)) * (1 + U);
    } else {
        /* chord in a = e^x between the neighbours x_{i-1} < x < x_i:
         * theta = expm1(x - x_{i-1}) / expm1(x_i - x_{i-1}) in [0, 1], with
         * relative error <= 2 E_F + 4u (two differences, two expm1l, the
         * quotient); the chord is monotone in theta */
        long double x0 = t->x[i - 1], x1 = t->x[i];
        long double th = expm1l((long double)x - x0) / expm1l(x1 - x0);
        long double eth = 2 * E_F + 4 * U;
        long double u0 = t->up[i - 1], u1 = t->up[i];
        long double thb = u1 <= u0 ? th * (1 - eth) : th * (1 + eth);
        if (thb > 1) thb = 1;
        if (thb < 0) thb = 0;
        hu = (u0 + thb * (u1 - u0)) * (1 + 2 * U) + 2 * U * (u0 > u1 ? u0 : u1);
        if (hu > u0) hu = u0; /* non-increasing */
    }
    *up = dpa_ld_up(fminl(1, hu));
    *lo = dpa_ld_dn(fmaxl(0, l));
    if (*lo > *up) *lo = *up;
}

/* ---------------- Poisson subsampling ---------------- */

/* remove direction, x >= 0 (or +inf) */
void dpa_profile_poisson_remove(const dpa_profile *base, double q, double x, double *up, double *lo)
{
    if (isnan(x) || !(q > 0 && q <= 1)) {
        *up = 1;
        *lo = 0;
        return;
    }
    if (x < 0) { /* the subsampled pair's reversal (LT eq 7) */
        dpa_profile_poisson_ctx c = {base, q};
        dpa_profile p;
        dpa_profile_poisson(base, q, &c, &p);
        dpa_profile_eval(&p, 0, x, up, lo);
        return;
    }
    double bu, bl;
    if (q == 1) {
        call_dir(base, 0, x, up, lo);
        return;
    }
    /* g = log1p(expm1(x) / q) >= x >= 0, enclosed in [glo, ghi] */
    long double glo, ghi;
    if (x == INFINITY) glo = ghi = INFINITY;
    else if (x <= 700) {
        /* expm1l E_F, the quotient u: y within E_F + 2u relative; log1p's
         * relative condition y / ((1 + y) log1p(y)) <= 1 for y >= 0; log1pl
         * E_F: g within 2 E_F + 4u relative */
        long double g = log1pl(expm1l((long double)x) / q), e = 2 * E_F + 4 * U;
        glo = g * (1 - e);
        ghi = g * (1 + e);
    } else {
        /* g = x - log q + log1p(-(1 - q) e^{-x}), the last term in
         * [-2 e^{-x}, 0] (below 1e-300 in magnitude); -log q >= 0 within
         * E_F, the sum u */
        long double lq = -logl((long double)q);
        glo = ((long double)x + lq * (1 - E_F)) * (1 - 2 * U) - 1e-300L;
        ghi = ((long double)x + lq * (1 + E_F)) * (1 + 2 * U);
    }
    double gl = dpa_ld_dn(glo), gh = dpa_ld_up(ghi);
    if (gl < 0) gl = 0;
    call_dir(base, 0, gl, &bu, &bl); /* upper bound at the argument below */
    double tu = bu;
    call_dir(base, 0, gh, &bu, &bl); /* lower bound at the argument above */
    /* q times the bound: one rounding each */
    *up = dpa_ld_up(fminl(1, (long double)q * tu * (1 + 2 * U)));
    *lo = dpa_ld_dn((long double)q * bl * (1 - 2 * U));
    if (*lo > *up) *lo = *up;
}

/* add direction, x >= 0 (or +inf) */
void dpa_profile_poisson_add(const dpa_profile *base, double q, double x, double *up, double *lo)
{
    if (isnan(x) || !(q > 0 && q <= 1)) {
        *up = 1;
        *lo = 0;
        return;
    }
    if (x < 0) {
        dpa_profile_poisson_ctx c = {base, q};
        dpa_profile p;
        dpa_profile_poisson(base, q, &c, &p);
        dpa_profile_eval(&p, 1, x, up, lo);
        return;
    }
    if (q == 1) {
        call_dir(base, 1, x, up, lo);
        return;
    }
    if (x == INFINITY) { /* the add direction has no mass at +inf */
        *up = *lo = 0;
        return;
    }
    /* d = x + log(1 - q) < 0 below the threshold x = -log(1 - q): log1pl
     * E_F, the sum u */
    long double L1 = log1pl(-(long double)q), d = (long double)x + L1;
    long double ed = E_F * fabsl(L1) + U * fabsl(d);
    long double dlo = d - ed, dhi = d + ed;
    if (dlo >= 0) { /* certainly at or beyond the threshold: no mass left */
        *up = *lo = 0;
        return;
    }
    /* the coefficient c = 1 - (1-q) e^x = -expm1(d), decreasing in d */
    long double cup = -expm1l(dlo) * (1 + E_F + U);
    long double clo = dhi >= 0 ? 0 : -expm1l(dhi) * (1 - E_F - U);
    /* the base argument xb = -log1p(expm1(-x) / q) = log(q / (1 - q)) -
     * log(expm1(-d)) >= 0, increasing in d */
    long double xlo, xhi;
    long double y = expm1l(-(long double)x) / q; /* in (-1, 0]: E_F + 2u relative */
    if (y >= -0.5L) {
        /* log1p's relative condition |y / ((1 + y) log1p(y))| <= 1.45 on
         * [-1/2, 0]: xb within 1.45 (E_F + 2u) + E_F + u <= 3 E_F relative */
        long double xb = -log1pl(y);
        xlo = xb * (1 - 3 * E_F);
        xhi = xb * (1 + 3 * E_F);
    } else {
        /* near the threshold: from the enclosure of d (logl, log1pl E_F
         * each; the difference u; expm1l and the outer logl E_F) */
        long double A = logl((long double)q) - L1;
        long double eA = E_F * (fabsl(logl((long double)q)) + fabsl(L1)) + U * fabsl(A);
        long double m1 = expm1l(-dlo) * (1 + E_F); /* >= expm1(-d) */
        long double B1 = logl(m1);
        xlo = A - eA - (B1 + E_F * fabsl(B1)) - U * (fabsl(A) + fabsl(B1)) * 2;
        if (dhi >= 0) xhi = INFINITY;
        else {
            long double m2 = expm1l(-dhi) * (1 - E_F);
            long double B2 = logl(m2);
            xhi = A + eA - (B2 - E_F * fabsl(B2)) + U * (fabsl(A) + fabsl(B2)) * 2;
        }
    }
    double xl = dpa_ld_dn(xlo), xh = dpa_ld_up(xhi);
    if (xl < 0) xl = 0;
    if (xh < xl) xh = xl;
    double bu, bl, tu;
    call_dir(base, 1, xl, &bu, &bl);
    tu = bu;
    call_dir(base, 1, xh, &bu, &bl);
    *up = dpa_ld_up(fminl(1, cup * tu * (1 + 2 * U)));
    *lo = dpa_ld_dn(fmaxl(0, clo * bl * (1 - 2 * U)));
    if (*lo > *up) *lo = *up;
}

void dpa_profile_poisson_max(const dpa_profile *base, double q, double x, double *up, double *lo, int *binding)
{
    double ru, rl, au, al;
    dpa_profile_poisson_remove(base, q, x, &ru, &rl);
    dpa_profile_poisson_add(base, q, x, &au, &al);
    *up = ru >= au ? ru : au;
    *lo = rl >= al ? rl : al;
    if (binding) *binding = ru >= au ? 0 : 1;
}

static void pois_fwd(void *ctx, double x, double *up, double *lo)
{
    const dpa_profile_poisson_ctx *c = ctx;
    dpa_profile_poisson_remove(c->base, c->q, x, up, lo);
}

static void pois_rev(void *ctx, double x, double *up, double *lo)
{
    const dpa_profile_poisson_ctx *c = ctx;
    dpa_profile_poisson_add(c->base, c->q, x, up, lo);
}

void dpa_profile_poisson(const dpa_profile *base, double q, dpa_profile_poisson_ctx *ctx, dpa_profile *out)
{
    ctx->base = base;
    ctx->q = q;
    out->fwd = pois_fwd;
    out->fwd_ctx = ctx;
    out->rev = pois_rev;
    out->rev_ctx = ctx;
}

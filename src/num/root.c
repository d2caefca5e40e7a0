/* Root finding: sign-preserving bracketing (GSL's Brent solver, finished by
 * halving) and a geometric scan for the first sign change (scan, then
 * bisect, as the eps(delta) searches of docs/guarantees.md §2.1 do).
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Zero convention (both functions): a point where f is exactly 0 is a root,
 * so it counts as a sign change.  dpa_bisect then returns that point as both
 * ends of the bracket (it satisfies "f <= 0" and "f >= 0" alike, so whichever
 * side the caller treats as safe is right); dpa_scan_bracket returns a bracket
 * with that point as one end. */
#include <float.h>
#include <math.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_roots.h>
#include "num/num.h"

/* Bisection step cap, as documented in num.h: 200 halvings shrink any finite
 * bracket by 2^-200, far below double resolution for all practical widths;
 * the loop also ends once no double lies strictly inside the bracket. */
#define DPA_BISECT_MAX_STEPS 200
/* Scan step cap: the step doubles each time, so 2200 doublings take even a
 * subnormal step (2^-1074) past DBL_MAX (2^1024); the scan always reaches
 * xmin/xmax long before. */
#define DPA_SCAN_MAX_STEPS 2200

static int sign_of(double v)
{
    return (v > 0.0) - (v < 0.0);
}

/* GSL's bracketing Brent solver (superlinear, so far fewer evaluations than
 * halving for smooth f) as the first attempt of dpa_bisect. */
typedef struct brent_ctx { dpa_fn f; void *ctx; int bad; } brent_ctx;

static double brent_f(double x, void *p)
{
    brent_ctx *b = p;
    double v = b->f(x, b->ctx);
    if (isnan(v)) b->bad = 1;
    return v;
}

/* Narrow [*lo, *hi] with Brent; 0 on success (the ends keep their signs:
 * checked), else nonzero and the bracket untouched. */
static int brent_narrow(dpa_fn f, void *ctx, int slo, double xtol_abs, double xtol_rel,
                        double *lo, double *hi)
{
    brent_ctx b = {f, ctx, 0};
    gsl_function F = {brent_f, &b};
    dpa_gsl_guard g = dpa_gsl_guard_begin();
    gsl_root_fsolver *s = gsl_root_fsolver_alloc(gsl_root_fsolver_brent);
    int fail = !s || gsl_root_fsolver_set(s, &F, *lo, *hi) != GSL_SUCCESS;
    double a = *lo, c = *hi;
    for (int i = 0; !fail && i < DPA_BISECT_MAX_STEPS; i++) {
        if (gsl_root_fsolver_iterate(s) != GSL_SUCCESS || b.bad) { fail = 1; break; }
        a = gsl_root_fsolver_x_lower(s);
        c = gsl_root_fsolver_x_upper(s);
        if (gsl_root_test_interval(a, c, xtol_abs, xtol_rel) == GSL_SUCCESS) break;
    }
    if (s) gsl_root_fsolver_free(s);
    dpa_gsl_guard_end(g);
    if (fail) return 1;
    /* the contract: f keeps the original sign at each end (or is 0) */
    double fa = f(a, ctx), fc = f(c, ctx);
    if (isnan(fa) || isnan(fc)) return 1;
    if (fa == 0.0) { *lo = *hi = a; return 0; }
    if (fc == 0.0) { *lo = *hi = c; return 0; }
    if (sign_of(fa) != slo || sign_of(fc) != -slo) return 1;
    *lo = a;
    *hi = c;
    return 0;
}

dpa_status dpa_bisect(dpa_fn f, void *ctx, double lo, double hi,
                      double xtol_abs, double xtol_rel,
                      double *out_lo, double *out_hi)
{
    if (!f || !out_lo || !out_hi || !isfinite(lo) || !isfinite(hi) || lo > hi ||
        !(xtol_abs >= 0.0) || !(xtol_rel >= 0.0))
        return DPA_EINVAL;
    double flo = f(lo, ctx);
    double fhi = f(hi, ctx);
    if (isnan(flo) || isnan(fhi))
        return DPA_ENUMERIC;
    if (flo == 0.0 || fhi == 0.0) {
        double r = flo == 0.0 ? lo : hi;
        *out_lo = *out_hi = r;
        return DPA_OK;
    }
    int slo = sign_of(flo);
    if (slo == sign_of(fhi))
        return DPA_ENUMERIC;
    /* Brent first; plain halving finishes (or replaces) it */
    if (brent_narrow(f, ctx, slo, xtol_abs, xtol_rel, &lo, &hi) == 0 && lo == hi) {
        *out_lo = *out_hi = lo;
        return DPA_OK;
    }
    for (int i = 0; i < DPA_BISECT_MAX_STEPS; i++) {
        /* relative tolerance against the smaller end: the root lies in the
         * bracket, so this bounds the error relative to the root itself. */
        double scale = fmin(fabs(lo), fabs(hi));
        if (hi - lo <= xtol_abs + xtol_rel * scale)
            break;
        double mid = 0.5 * lo + 0.5 * hi;   /* no overflow of hi - lo */
        if (!(mid > lo && mid < hi))
            break;                          /* adjacent doubles */
        double fm = f(mid, ctx);
        if (isnan(fm))
            return DPA_ENUMERIC;
        if (fm == 0.0) {
            lo = hi = mid;
            break;
        }
        if (sign_of(fm) == slo)
            lo = mid;
        else
            hi = mid;
    }
    *out_lo = lo;
    *out_hi = hi;
    return DPA_OK;
}

dpa_status dpa_scan_bracket(dpa_fn f, void *ctx, double x0, double step, int dir,
                            double xmin, double xmax, double *a, double *b)
{
    if (!f || !a || !b || (dir != 1 && dir != -1) || !(step > 0.0) ||
        !isfinite(step) || !isfinite(xmin) || !isfinite(xmax) ||
        !(xmin <= x0 && x0 <= xmax))
        return DPA_EINVAL;
    double xprev = x0;
    double fprev = f(x0, ctx);
    if (isnan(fprev))
        return DPA_ENUMERIC;
    double d = step;
    for (int i = 0; i < DPA_SCAN_MAX_STEPS; i++, d *= 2.0) {
        double limit = dir > 0 ? xmax : xmin;
        if (xprev == limit)
            return DPA_ENUMERIC;            /* whole range scanned */
        double x = xprev + dir * d;
        if (dir > 0 ? x > xmax : x < xmin)
            x = limit;
        if (x == xprev)
            continue;                       /* step below ulp(x): grow it */
        double fx = f(x, ctx);
        if (isnan(fx))
            return DPA_ENUMERIC;
        if (fprev == 0.0 || fx == 0.0 || sign_of(fx) != sign_of(fprev)) {
            *a = fmin(xprev, x);
            *b = fmax(xprev, x);
            return DPA_OK;
        }
        xprev = x;
        fprev = fx;
    }
    return DPA_ENUMERIC;
}

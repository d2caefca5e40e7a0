/* Calibration: the parameter value that meets a privacy target (calibrate.h).
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Feasibility f(v) = [eps_upper(delta; v) <= epsilon] is monotone in v:
 * increasing for noise parameters (more noise, more privacy), decreasing for
 * the others.  The search
 *   1. finds one feasible and one infeasible value by geometric steps of
 *      factor 2 from a starting point (1, clamped into the domain; the domain
 *      end first for bounded budgets such as rate <= 1 or m <= n),
 *   2. bisects the bracket (integers: until the ends are adjacent; reals:
 *      until it is narrower than rel_tol times the feasible end),
 * and returns the feasible end, so the certified bound at the returned value
 * meets the target. */
#include <float.h>
#include <math.h>
#include <string.h>
#include "dpacct/calibrate.h"

#define DEFAULT_REL_TOL 1e-4
/* Geometric search limits: values are not pushed beyond these. */
#define SEARCH_MIN 1e-12
#define SEARCH_MAX 1e12
#define MAX_STEPS 200

typedef struct calib {
    const dpa_template *t;
    const dpa_param_info *info;
    double eps, delta;
    const dpa_options *opt;
    int evals;
} calib;

/* *ok = 1 if the certified upper bound at v meets the target; the result is
 * kept in *r. */
static dpa_status feasible(calib *c, double v, int *ok, dpa_result *r, dpa_error *err)
{
    dpa_spec *s = dpa_template_instantiate(c->t, v, err);
    if (!s) return err ? err->status : DPA_EINVAL;
    dpa_accountant *a = dpa_accountant_new(s, c->opt, err);
    dpa_spec_free(s);
    if (!a) return err ? err->status : DPA_EINVAL;
    dpa_status st = dpa_accountant_epsilon(a, c->delta, r, err);
    dpa_accountant_free(a);
    c->evals++;
    if (st) return st;
    *ok = r->upper <= c->eps;
    return DPA_OK;
}

static double clamp_domain(const dpa_param_info *in, double v)
{
    double lo = in->lo, hi = in->hi;
    if (in->lo_open) lo = (lo == 0) ? SEARCH_MIN : nextafter(lo, INFINITY);
    if (in->hi_open) hi = nextafter(hi, -INFINITY);
    hi = fmin(hi, SEARCH_MAX);
    lo = fmax(lo, in->lo_open ? SEARCH_MIN : lo);
    if (v < lo) v = lo;
    if (v > hi) v = hi;
    if (in->is_integer) {
        v = round(v);
        if (v < in->lo) v = ceil(in->lo);
    }
    return v;
}

dpa_status dpa_calibrate(const dpa_template *t, double epsilon, double delta,
                         const dpa_options *opt, double rel_tol,
                         dpa_calibration *out, dpa_error *err)
{
    if (!t || !out) return dpa_error_set(err, DPA_EINVAL, "calibrate: NULL argument");
    if (!(epsilon > 0 && isfinite(epsilon)))
        return dpa_error_set(err, DPA_EINVAL, "calibrate: epsilon must be > 0 and finite, got %g", epsilon);
    if (!(delta > 0 && delta < 1)) return dpa_error_set(err, DPA_EINVAL, "calibrate: delta must be in (0, 1), got %g", delta);
    if (rel_tol == 0) rel_tol = DEFAULT_REL_TOL;
    if (!(rel_tol >= 1e-12 && rel_tol <= 0.1))
        return dpa_error_set(err, DPA_EINVAL, "calibrate: tolerance must be in [1e-12, 0.1], got %g", rel_tol);
    memset(out, 0, sizeof *out);
    calib c = {t, dpa_template_param(t), epsilon, delta, opt, 0};
    const dpa_param_info *in = c.info;
    int noise = (in->role == DPA_ROLE_NOISE);
    /* good: a feasible value; bad: an infeasible one (NAN until found) */
    double good = NAN, bad = NAN;
    dpa_result rgood, r;
    int ok;
    dpa_status st;

    double v = clamp_domain(in, 1.0);
    if (!noise && isfinite(in->hi) && in->hi <= SEARCH_MAX) v = clamp_domain(in, in->hi);
    if ((st = feasible(&c, v, &ok, &r, err))) return st;
    if (ok) { good = v; rgood = r; } else bad = v;
    /* grow or shrink geometrically until the other side is found */
    for (int i = 0; i < MAX_STEPS && (isnan(good) || isnan(bad)); i++) {
        /* noise: feasible -> go down, infeasible -> up; budget: the reverse */
        int up = noise ? isnan(good) : !isnan(good);
        double nv = clamp_domain(in, up ? v * 2 : v / 2);
        if (in->is_integer && nv == v) nv = clamp_domain(in, up ? v + 1 : v - 1);
        if (nv == v) break; /* domain end reached */
        v = nv;
        if ((st = feasible(&c, v, &ok, &r, err))) return st;
        if (ok) { good = v; rgood = r; } else bad = v;
    }
    if (isnan(good))
        return dpa_error_set(err, DPA_ENUMERIC,
                             "no value of %s (%s) meets epsilon <= %g at delta = %g: the %s value tried, %g, gives epsilon <= %g",
                             in->name, in->path, epsilon, delta, noise ? "largest" : "smallest", bad, r.upper);
    /* bisect */
    for (int i = 0; i < MAX_STEPS && !isnan(bad); i++) {
        double lo = fmin(good, bad), hi = fmax(good, bad);
        if (in->is_integer ? hi - lo <= 1 : hi - lo <= rel_tol * fabs(good)) break;
        double mid = in->is_integer ? floor(0.5 * (lo + hi)) : 0.5 * (lo + hi);
        if ((st = feasible(&c, mid, &ok, &r, err))) return st;
        if (ok) { good = mid; rgood = r; } else bad = mid;
    }
    out->value = good;
    out->at_value = rgood;
    out->infeasible = bad;
    out->evaluations = c.evals;
    return DPA_OK;
}

/* Calibration: the parameter value that meets a privacy target (calibrate.h).
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Feasibility f(v) = [eps_upper(delta; v) <= epsilon] is monotone in v:
 * increasing for noise parameters (more noise, more privacy), decreasing for
 * the others.  The search (docs/calibration.md)
 *   1. finds one feasible and one infeasible value by geometric steps of
 *      factor 2 from a starting point (1, clamped into the domain; the domain
 *      end first for bounded budgets such as rate <= 1 or m <= n),
 *   2. narrows the bracket by safeguarded interpolation of log eps_upper
 *      against log v (a power law is a straight line there), each new point
 *      aimed just inside the feasible side of the estimated root, and its
 *      mirror just across it, so that a good estimate closes the bracket in
 *      two evaluations; a step that would not shrink the bracket by a
 *      quarter falls back to bisection;
 * Both steps first run with a coarse accuracy (cheap grids; a coarse upper
 * bound <= epsilon certifies feasibility all the same), then the bracket is
 * finished with the caller's accuracy.  The feasible end is returned, so the
 * certified bound at the returned value meets the target. */
#include <float.h>
#include <math.h>
#include <string.h>
#include "dpacct/calibrate.h"

#define DEFAULT_REL_TOL 1e-4
/* Geometric search limits: values are not pushed beyond these. */
#define SEARCH_MIN 1e-12
#define SEARCH_MAX 1e12
#define MAX_STEPS 200
/* Largest factor of one bracketing step (extrapolated growth). */
#define GROWTH_MAX 1e3

typedef struct calib {
    const dpa_template *t;
    const dpa_param_info *info;
    double eps, delta;
    dpa_options opt;
    int evals;
} calib;

/* *ok = 1 if the certified upper bound at v, computed with accuracy acc,
 * meets the target; the result is kept in *r. */
static dpa_status feasible(calib *c, double v, double acc, int *ok, dpa_result *r, dpa_error *err)
{
    dpa_spec *s = dpa_template_instantiate(c->t, v, err);
    if (!s) return err ? err->status : DPA_EINVAL;
    dpa_options o = c->opt;
    o.accuracy = acc;
    dpa_accountant *a = dpa_accountant_new(s, &o, err);
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

/* The bracket of the search: a feasible value (with its result) and an
 * infeasible one (NAN until known). */
typedef struct bracket {
    double good, bad;
    dpa_result rgood, rbad;
} bracket;

/* A point strictly inside (lo, hi) for the interpolation step: for integers
 * an integer, for reals any double.  Returns NAN if there is none. */
static double inside(const dpa_param_info *in, double x, double lo, double hi)
{
    if (in->is_integer) {
        x = round(x);
        if (x <= lo) x = lo + 1;
        if (x >= hi) x = hi - 1;
        return (x > lo && x < hi) ? x : NAN;
    }
    return (x > lo && x < hi) ? x : NAN;
}

static int narrow_enough(const dpa_param_info *in, const bracket *b, double tol)
{
    double lo = fmin(b->good, b->bad), hi = fmax(b->good, b->bad);
    return in->is_integer ? hi - lo <= 1 : hi - lo <= tol * fabs(b->good);
}

/* Record the result at v in the bracket. */
static void record(bracket *b, double v, int ok, const dpa_result *r)
{
    if (ok) { b->good = v; b->rgood = *r; }
    else { b->bad = v; b->rbad = *r; }
}

/* Root estimate from the line through (log v, log upper) at the bracket's
 * ends (a power law is a straight line there); NAN where that does not
 * apply (an end at 0, or bounds not increasing towards the infeasible end). */
static double interpolated_root(const calib *c, const bracket *b)
{
    double ug = b->rgood.upper, ub = b->rbad.upper;
    if (!(b->good > 0 && b->bad > 0 && ug > 0 && ub > ug && isfinite(ub))) return NAN;
    double lg = log(b->good), lb = log(b->bad);
    double t = (log(c->eps) - log(ug)) / (log(ub) - log(ug));
    return exp(lg + t * (lb - lg));
}

/* Narrow [good, bad] until narrow_enough(tol), evaluating with accuracy acc.
 * Each round aims at the interpolated root moved a quarter of the tolerance
 * into the feasible side; if that is feasible, the point half a tolerance
 * across comes next, which closes the bracket when the estimate was good.
 * A round that does not shrink the bracket to 3/4 of its width is followed
 * by a bisection step, so the worst case stays close to bisection. */
static dpa_status narrow(calib *c, bracket *b, double acc, double tol, dpa_error *err)
{
    const dpa_param_info *in = c->info;
    int ok;
    dpa_result r;
    dpa_status st;
    for (int i = 0; i < MAX_STEPS && !narrow_enough(in, b, tol); i++) {
        double lo = fmin(b->good, b->bad), hi = fmax(b->good, b->bad), before = hi - lo;
        double dir = b->good < b->bad ? 1 : -1; /* towards the infeasible side */
        double root = interpolated_root(c, b), x = NAN;
        int probe = 0;
        if (!isnan(root)) {
            x = in->is_integer ? (dir > 0 ? floor(root) : ceil(root)) : root * (1 - 0.25 * tol * dir);
            /* an estimate at or behind the feasible end (noisy bounds, or a
             * root right next to it): probe just across that end instead,
             * which closes the bracket if the root is there */
            double gap = in->is_integer ? 1 : 0.25 * tol * fabs(b->good);
            if ((x - b->good) * dir < gap) {
                x = in->is_integer ? b->good + dir : b->good * (1 + 0.5 * tol * dir);
                probe = 1;
            }
            x = inside(in, x, lo, hi);
        }
        int interpolated = !isnan(x) && !probe;
        if (isnan(x)) x = inside(in, in->is_integer ? floor(0.5 * (lo + hi)) : 0.5 * (lo + hi), lo, hi);
        if (isnan(x)) break;
        if ((st = feasible(c, x, acc, &ok, &r, err))) return st;
        record(b, x, ok, &r);
        if (interpolated && ok && !narrow_enough(in, b, tol)) {
            double y = in->is_integer ? x + dir : x * (1 + 0.5 * tol * dir);
            y = inside(in, y, fmin(b->good, b->bad), fmax(b->good, b->bad));
            if (!isnan(y)) {
                if ((st = feasible(c, y, acc, &ok, &r, err))) return st;
                record(b, y, ok, &r);
            }
        }
        lo = fmin(b->good, b->bad);
        hi = fmax(b->good, b->bad);
        if (hi - lo > 0.75 * before && !narrow_enough(in, b, tol)) {
            x = inside(in, in->is_integer ? floor(0.5 * (lo + hi)) : 0.5 * (lo + hi), lo, hi);
            if (isnan(x)) break;
            if ((st = feasible(c, x, acc, &ok, &r, err))) return st;
            record(b, x, ok, &r);
        }
    }
    return DPA_OK;
}

/* Accuracy of the first, coarse pass: grids about 10 times coarser (the gap
 * grows like step^2); a coarse upper bound that meets the target certifies
 * feasibility as well as a fine one. */
#define COARSE_ACCURACY 1e-2
/* The coarse pass narrows the bracket to this relative width: about what
 * its accuracy can resolve. */
#define COARSE_TOL 2e-3

/* From the feasible end f->good, steps of growing size in direction dir
 * (towards less privacy) at accuracy acc until a value is infeasible (then
 * recorded as f->bad) or the domain ends (f->bad stays NAN: every value
 * on that side is feasible). */
static dpa_status search_beyond(calib *c, bracket *f, double acc, double tol, double dir,
                                dpa_error *err)
{
    const dpa_param_info *in = c->info;
    double step = in->is_integer ? fmax(1.0, round(tol * fabs(f->good))) : fmax(tol * fabs(f->good), SEARCH_MIN);
    for (int i = 0; i < MAX_STEPS; i++) {
        double x = clamp_domain(in, f->good + dir * step);
        dpa_result r;
        int ok;
        dpa_status st;
        if (x == f->good) return DPA_OK;
        if ((st = feasible(c, x, acc, &ok, &r, err))) return st;
        record(f, x, ok, &r);
        if (!ok) return DPA_OK;
        step *= 2;
    }
    return DPA_OK;
}

/* The fine pass: from the coarse bracket, a fine evaluation at the coarse
 * root estimate, then Newton steps on log upper against log v with the
 * coarse bracket's slope, each aimed a quarter tolerance into the feasible
 * side (and its mirror when feasible), until the fine results bracket the
 * root; then narrow() finishes.  The coarse ends stay in the bracket only
 * if the fine pass confirms them. */
static dpa_status fine_pass(calib *c, bracket *b, double acc, double tol, dpa_error *err)
{
    const dpa_param_info *in = c->info;
    double root = interpolated_root(c, b);
    double slope = NAN;
    if (b->good > 0 && b->bad > 0 && b->rgood.upper > 0 && b->rbad.upper > 0 && b->good != b->bad)
        slope = (log(b->rbad.upper) - log(b->rgood.upper)) / (log(b->bad) - log(b->good));
    double dir = b->good < b->bad ? 1 : -1;
    bracket f;
    memset(&f, 0, sizeof f);
    f.good = f.bad = NAN;
    double x = isnan(root) ? b->good : root * (1 - 0.25 * tol * dir);
    if (in->is_integer) x = dir > 0 ? floor(x) : ceil(x);
    x = clamp_domain(in, x);
    dpa_result r;
    int ok;
    dpa_status st;
    for (int i = 0; i < 6 && (isnan(f.good) || isnan(f.bad)); i++) {
        if ((st = feasible(c, x, acc, &ok, &r, err))) return st;
        record(&f, x, ok, &r);
        if (!isnan(f.good) && !isnan(f.bad)) break;
        double nx;
        if (isfinite(slope) && slope != 0 && r.upper > 0 && x > 0) {
            double rt = x * exp((log(c->eps) - log(r.upper)) / slope);
            nx = rt * (1 - 0.25 * tol * dir);
            /* feasible and already at the estimated root: step across */
            if (ok && (nx - x) * dir <= 0.25 * tol * fabs(x)) nx = x * (1 + 0.5 * tol * dir);
            /* infeasible: move at least half a tolerance back */
            if (!ok && (x - nx) * dir < 0.5 * tol * fabs(x)) nx = x * (1 - 0.5 * tol * dir);
        } else {
            nx = ok ? x * (1 + 2 * tol * dir) : x * (1 - 2 * tol * dir);
        }
        if (in->is_integer) nx = ok ? fmax(round(nx), x + 1) * (dir > 0) + fmin(round(nx), x - 1) * (dir < 0)
                                    : fmin(round(nx), x - 1) * (dir > 0) + fmax(round(nx), x + 1) * (dir < 0);
        nx = clamp_domain(in, nx);
        if (nx == x) break; /* domain end */
        x = nx;
    }
    if (isnan(f.good) || isnan(f.bad)) {
        /* not bracketed by the Newton steps: fall back to the coarse ends,
         * confirmed (or replaced) at the fine accuracy */
        if (isnan(f.good)) {
            if ((st = feasible(c, b->good, acc, &ok, &r, err))) return st;
            if (ok) record(&f, b->good, 1, &r);
            else { f.good = b->good; f.rgood = b->rgood; } /* the coarse certificate */
        }
        if (isnan(f.bad)) {
            if ((st = feasible(c, b->bad, acc, &ok, &r, err))) return st;
            if (!ok) {
                record(&f, b->bad, 0, &r);
            } else {
                /* the coarse infeasible end meets the target at the fine
                 * accuracy: it is a feasible value (keep the more extreme
                 * of the two), and the infeasible end lies further on */
                if (isnan(f.good) || (b->bad - f.good) * dir > 0) { f.good = b->bad; f.rgood = r; }
                if ((st = search_beyond(c, &f, acc, tol, dir, err))) return st;
            }
        }
    }
    /* keep whichever feasible end is more extreme: both are certified */
    if ((f.good - b->good) * dir < 0) { f.good = b->good; f.rgood = b->rgood; }
    *b = f;
    return narrow(c, b, acc, tol, err);
}

dpa_status dpa_calibrate(const dpa_template *t, double epsilon, double delta,
                         const dpa_options *opt, double rel_tol,
                         dpa_calibration *out, dpa_error *err)
{
    if (!t || !out) return dpa_error_set(err, DPA_EINVAL, "calibrate: NULL argument");
    if (!(epsilon > 0 && isfinite(epsilon)))
        return dpa_error_set(err, DPA_EINVAL, "calibrate: epsilon must be > 0 and finite, got %g", epsilon);
    if (!(delta >= 0 && delta < 1)) return dpa_error_set(err, DPA_EINVAL, "calibrate: delta must be in [0, 1), got %g", delta);
    if (rel_tol == 0) rel_tol = DEFAULT_REL_TOL;
    if (!(rel_tol >= 1e-12 && rel_tol <= 0.1))
        return dpa_error_set(err, DPA_EINVAL, "calibrate: tolerance must be in [1e-12, 0.1], got %g", rel_tol);
    memset(out, 0, sizeof *out);
    calib c;
    memset(&c, 0, sizeof c);
    c.t = t;
    c.info = dpa_template_param(t);
    c.eps = epsilon;
    c.delta = delta;
    if (opt) c.opt = *opt;
    else dpa_options_init(&c.opt);
    /* the phi method's bounds rest on error estimates that may fail
     * between the evaluated values: refused.  The gdp method's value is the
     * CLT approximation (GDP Thm 3.4), a smooth function of the parameter:
     * calibrating it gives the value Opacus' get_noise_multiplier gives with
     * its GDP accountant, an estimate (at_value.certified = 0) */
    if (c.opt.method == DPA_METHOD_PHI)
        return dpa_error_set(err, DPA_EUNSUPPORTED,
                             "calibrate: method phi gives estimated, not certified bounds; calibrate with "
                             "method auto, exact, pld, rdp or clt (or gdp, for the CLT estimate)");
    const dpa_param_info *in = c.info;
    int noise = (in->role == DPA_ROLE_NOISE);
    double acc = c.opt.accuracy, coarse = fmax(acc, COARSE_ACCURACY);
    bracket b;
    memset(&b, 0, sizeof b);
    b.good = b.bad = NAN;
    dpa_result r;
    int ok;
    dpa_status st;

    /* 1. bracket, with the coarse accuracy */
    double v = clamp_domain(in, 1.0);
    if (!noise && isfinite(in->hi) && in->hi <= SEARCH_MAX) v = clamp_domain(in, in->hi);
    if ((st = feasible(&c, v, coarse, &ok, &r, err))) return st;
    record(&b, v, ok, &r);
    double pv = NAN, pu = NAN; /* the previous point, for extrapolation */
    for (int i = 0; i < MAX_STEPS && (isnan(b.good) || isnan(b.bad)); i++) {
        /* noise: feasible -> go down, infeasible -> up; budget: the reverse */
        int up = noise ? isnan(b.good) : !isnan(b.good);
        /* factor 2, or more where a power law through the last two points
         * puts the target further away (aim 1.5 times past it, at most
         * GROWTH_MAX per step) */
        double f = 2;
        if (pv > 0 && v > 0 && pu > 0 && r.upper > 0 && isfinite(pu) && isfinite(r.upper) && pv != v) {
            double sl = (log(r.upper) - log(pu)) / (log(v) - log(pv));
            double lf = (log(epsilon) - log(r.upper)) / sl; /* log(root / v) */
            if (isfinite(lf) && (up ? lf > 0 : lf < 0)) f = fmin(GROWTH_MAX, fmax(2.0, exp(fabs(lf)) * 1.5));
        }
        pv = v;
        pu = r.upper;
        double nv = clamp_domain(in, up ? v * f : v / f);
        if (in->is_integer && nv == v) nv = clamp_domain(in, up ? v + 1 : v - 1);
        if (nv == v) break; /* domain end reached */
        v = nv;
        if ((st = feasible(&c, v, coarse, &ok, &r, err))) return st;
        record(&b, v, ok, &r);
    }
    if (isnan(b.good) && coarse > acc) {
        /* the coarse bound may miss a target the fine one meets: the most
         * private value tried, once more at the caller's accuracy */
        if ((st = feasible(&c, b.bad, acc, &ok, &r, err))) return st;
        record(&b, b.bad, ok, &r);
        if (ok) b.bad = NAN;
    }
    if (isnan(b.good))
        return dpa_error_set(err, DPA_ENUMERIC,
                             "no value of %s (%s) meets epsilon <= %g at delta = %g: the %s value tried, %g, gives epsilon <= %g",
                             in->name, in->path, epsilon, delta, noise ? "largest" : "smallest", b.bad, b.rbad.upper);
    if (!isnan(b.bad)) {
        /* 2. narrow: coarse, then with the caller's accuracy */
        if (coarse > acc) {
            if ((st = narrow(&c, &b, coarse, fmax(COARSE_TOL, rel_tol), err))) return st;
            if ((st = fine_pass(&c, &b, acc, rel_tol, err))) return st;
        } else if ((st = narrow(&c, &b, acc, rel_tol, err))) {
            return st;
        }
    } else if (coarse > acc) {
        /* the whole range is feasible: report the fine result at the value */
        if ((st = feasible(&c, b.good, acc, &ok, &r, err))) return st;
        if (ok) b.rgood = r;
    }
    out->value = b.good;
    out->at_value = b.rgood;
    out->infeasible = b.bad;
    out->evaluations = c.evals;
    return DPA_OK;
}

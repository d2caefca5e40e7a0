/* The PLD method: certified bounds from the composed pessimistic and
 * optimistic grid measures, refined adaptively until the accuracy target
 * holds, with the largest-finite-loss cap and the (eps, delta) domination
 * fallback (docs/guarantees.md §3).
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Error budget of a query (docs/guarantees.md):
 *   delta_upper(eps) = delta_pess(eps) + tail_above + roundoff
 *   delta_lower(eps) = delta_opt(eps)  - tail_outside - roundoff
 * where delta_pess/opt are the exact hockey-stick values of the composed
 * pessimistic/optimistic grid measures, tail_* bound the mass the FFT window
 * misses (Chernoff), and roundoff is the a-posteriori floating-point allowance.
 * eps bounds invert these.  Add/remove: both directions are composed (the add
 * direction from the reflected cells) and the max is reported.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "model/method.h"
#include "pld/pld_acct.h"

/* Window tail mass (each side) of composed PLDs for delta queries: far
 * below any delta anyone claims, and below the 1e-14 absolute floor of the
 * delta accuracy target. */
#define DEFAULT_TAIL 1e-16
/* For eps queries at delta the tails may take EPS_TAIL_SHARE * accuracy of
 * delta: they then move eps by ~1e-2 of the accuracy target at most (the
 * window is set by the tails: 1e-2 instead of 1e-3 shortens DP-SGD's FFT
 * from 147456 to 131072 points and changes its gap by 0.3 %). */
#define EPS_TAIL_SHARE 1e-2
#define EPS_TAIL_MAX 1e-10
/* Refinement: at most this many grid refinements per query. */
#define MAX_REFINE 6
/* Relative round-off of a composed +inf mass: a few exp/log1p/expm1, and
 * the exp of a log mass (an atom's mass stored as its logarithm l carries
 * about u |l| relative, 40 u for masses near 1e-17): 128 u. */
#define INF_MARGIN (128 * DPA_UNIT_ROUNDOFF)
/* A refinement aims at this fraction of the tolerance (gap ~ step^2). */
#define REFINE_AIM 0.7
/* A refinement that does not shrink the gap below this fraction of the
 * previous one is a stall; MAX_STALLS of them mean the grid no longer limits
 * the gap. */
#define STALL_RATIO 0.9
#define MAX_STALLS 2
/* The non-binding direction's upper composition is built on a grid this
 * many times coarser (its gap grows ~16-fold; it only has to stay below
 * the binding direction's upper bound, else it is rebuilt on the fine grid). */
#define COARSE_OTHER 4.0

/* ---------------- queries ---------------- */

/* Grid information of the result: the grid and allowances of direction
 * d's compositions (the binding direction, which sets the reported bounds:
 * the other one only has to stay below it, possibly with a coarser grid
 * or a rougher allowance). */
static void fill_pld_info(dpa_result *r, const dpa_pld_acct *a, int d)
{
    r->grid_step = a->comp[d][0].step;
    r->grid_size = a->comp[d][0].n;
    r->truncated_mass = 0;
    r->roundoff = 0;
    for (int k = 0; k < 2; k++) {
        if (!a->cstep[d][k]) continue;
        r->truncated_mass = fmax(r->truncated_mass, a->comp[d][k].tail_outside);
        r->roundoff = fmax(r->roundoff, a->comp[d][k].roundoff);
    }
}

/* delta bounds of direction d at eps (lower: the trivial one if direction
 * d has no lower composition) */
static void pld_delta_dir(dpa_pld_acct *a, int d, double eps, double *up, double *lo)
{
    dpa_composed *P = &a->comp[d][0], *O = &a->comp[d][1];
    int has_lo = a->cstep[d][1] > 0;
    double vp = dpa_composed_delta(P, eps);
    /* the query recurrences add positive terms: relative error <= 2 n u */
    double u = vp * (1 + 2 * (double)P->n * DPA_UNIT_ROUNDOFF + P->rel_err) + P->tail_above + P->roundoff;
    double l = 0;
    if (has_lo) {
        double vo = dpa_composed_delta(O, eps);
        /* a negative factor (rel_err >= 1) certifies nothing: l < 0, the floor applies */
        l = vo * fmax(0.0, 1 - 2 * (double)O->n * DPA_UNIT_ROUNDOFF - O->rel_err) - O->tail_outside - O->roundoff;
    }
    /* 1 - e^eps is a lower bound; -expm1 is rounded to nearest: round down */
    double floor_ = fmax(has_lo ? O->inf * (1 - INF_MARGIN) : 0.0,
                         eps < 0 ? -expm1(eps) * (1 - 2 * DPA_UNIT_ROUNDOFF) : 0.0);
    *up = fmin(1.0, u);
    *lo = fmax(l, floor_);
    if (*lo > *up) *lo = *up;
}

static void pld_eps_dir(dpa_pld_acct *a, int d, double delta, double *up, double *lo)
{
    dpa_composed *P = &a->comp[d][0], *O = &a->comp[d][1];
    int has_lo = a->cstep[d][1] > 0;
    double tp = (delta - P->tail_above - P->roundoff) / (1 + 2 * (double)P->n * DPA_UNIT_ROUNDOFF + P->rel_err);
    /* truly infinite: the +inf mass alone exceeds delta (O->inf is the exact
     * composition of the +inf masses up to a few ulp: keep a margin) */
    if (has_lo && delta < O->inf * (1 - INF_MARGIN)) {
        *up = *lo = INFINITY;
        return;
    }
    *up = dpa_composed_epsilon(P, tp);
    *lo = 0;
    /* the lower curve is scaled by (1 - 2 n u - rel_err); when the relative
     * allowance reaches 1 (rel_err grows with the total count: 16 u per
     * factor, so counts near 1e15) it certifies nothing: lower bound 0 */
    double shrink = 1 - 2 * (double)O->n * DPA_UNIT_ROUNDOFF - O->rel_err;
    if (has_lo && shrink > 0) {
        double to = (delta + O->tail_outside + O->roundoff) / shrink;
        *lo = dpa_composed_epsilon(O, to);
    }
    if (*up < 0) *up = 0;
    if (*lo < 0) *lo = 0;
    if (*lo > *up) *lo = *up;
}

static dpa_direction binding(const dpa_pld_acct *a, double rem, double add)
{
    if (a->ndir == 1) return DPA_DIR_BOTH;
    return rem >= add ? DPA_DIR_REMOVE : DPA_DIR_ADD;
}

/* A query: eps(delta) (is_eps, x = delta) or delta(eps) (x = eps). */
typedef struct query { int is_eps; double x; int refine; } query;

/* The largest-finite-loss bound of direction d (docs/guarantees.md §3.12):
 * every finite loss of the composition is <= wmax[d], so for eps >= wmax[d]
 * delta(eps) is at most the +inf mass infub[d], and eps(delta) <= wmax[d]
 * for delta >= infub[d].  Caps *up where that is better; returns 1 if so. */
static int cap_by_max_loss(const dpa_pld_acct *a, const query *q, int d, double *up, double *lo)
{
    int capped = 0;
    if (q->is_eps) {
        if (q->x >= a->infub[d] && a->wmax[d] < *up) {
            *up = fmax(a->wmax[d], 0.0);
            capped = 1;
        }
    } else if (q->x >= a->wmax[d] && a->infub[d] < *up) {
        *up = a->infub[d];
        capped = 1;
    }
    if (*lo > *up) *lo = *up;
    return capped;
}

/* Bounds of the current compositions, max over the directions (every
 * direction has an upper composition); returns 1 if the PLD's own upper
 * bound was +inf (before the largest-loss cap). */
static int evaluate(dpa_pld_acct *a, const query *q, dpa_result *out)
{
    double up[2] = {0, 0}, lo[2] = {0, 0};
    int capped[2] = {0, 0}, raw_inf = 0;
    for (int d = 0; d < a->ndir; d++) {
        if (q->is_eps) pld_eps_dir(a, d, q->x, &up[d], &lo[d]);
        else pld_delta_dir(a, d, q->x, &up[d], &lo[d]);
        raw_inf |= isinf(up[d]);
        capped[d] = cap_by_max_loss(a, q, d, &up[d], &lo[d]);
    }
    if (a->ndir == 1) { up[1] = up[0]; lo[1] = lo[0]; capped[1] = capped[0]; }
    out->upper = fmax(up[0], up[1]);
    out->lower = fmax(lo[0], lo[1]);
    out->upper_remove = up[0] + 0.0; /* -0 -> +0 */
    out->upper_add = up[1] + 0.0;
    if (a->ndir == 2) { /* per direction (the loss-tail query needs them) */
        out->lower_remove = lo[0] + 0.0;
        out->lower_add = lo[1] + 0.0;
    }
    out->binding = binding(a, up[0], up[1]);
    int db = up[0] >= up[1] ? 0 : 1;
    out->upper_source = capped[db] ? DPA_SOURCE_MAX_LOSS : DPA_SOURCE_METHOD;
    out->lower += 0.0; /* -0 -> +0 */
    fill_pld_info(out, a, a->ndir == 1 ? 0 : db);
    /* report the round-off allowance at this query: absolute part plus the
     * relative part times the delta it applies to */
    double rel = 0;
    int dbind = a->ndir == 1 ? 0 : db;
    for (int k = 0; k < 2; k++)
        if (a->cstep[dbind][k]) rel = fmax(rel, a->comp[dbind][k].rel_err);
    out->roundoff += rel * fmin(1.0, q->is_eps ? q->x : out->upper);
    return raw_inf;
}

int dpa_pld_evaluate_epsilon(dpa_pld_acct *a, double delta, dpa_result *out)
{
    query q = {1, delta, 0};
    return evaluate(a, &q, out);
}

/* Compose what a query needs at (step, tau) and evaluate: an upper
 * composition of every direction (a direction without one gets it on a
 * grid COARSE_OTHER times coarser: it only has to stay below the binding
 * direction), then both kinds of the binding direction at step.  The upper
 * bound is the max over directions and the lower bound at least the
 * binding direction's, so the gap is that direction's own gap.  *fine: the
 * step the binding direction was built at (coarser than step if the grid
 * had to be coarsened to fit). */
static dpa_status compose_and_evaluate(dpa_pld_acct *a, const query *q, double step, double tau, int refining,
                                       double *fine, int *raw_inf, dpa_result *out, dpa_error *err)
{
    double used;
    dpa_status st;
    /* one direction: it is the binding one */
    if (a->ndir == 1 && !dpa_pld_have(a, 0, 0, INFINITY, tau) && (st = dpa_pld_obtain(a, 3u, 0u, &step, tau, refining, err)))
        return st;
    if (a->ndir == 2 && !dpa_pld_have(a, 0, 0, INFINITY, tau) && !dpa_pld_have(a, 1, 0, INFINITY, tau)) {
        /* nothing yet: guess the remove direction binding (it is for
         * Poisson subsampling at every eps > 0 we have met; a wrong guess
         * costs one more fine build below) and compose the add direction's
         * upper in the same batch, on the same grid: one FFT length, so one
         * FFTW plan (planning a length costs a new process 5-10 ms, more
         * than composing on it), without the accurate path (it only has to
         * stay below the remove direction's upper bound) */
        if ((st = dpa_pld_obtain(a, 7u, 4u, &step, tau, refining, err))) return st;
    }
    if (a->ndir == 2) {
        unsigned m = 0;
        for (int d = 0; d < 2; d++)
            if (!dpa_pld_have(a, d, 0, INFINITY, tau)) m |= 1u << (2 * d);
        if (m && (st = dpa_pld_ensure(a, m, m, dpa_pld_align_step(a, fmin(1.0, COARSE_OTHER * step)), tau, &used, err))) return st;
    }
    *fine = step;
    for (int it = 0; it < 4; it++) {
        *raw_inf = evaluate(a, q, out);
        int d = (a->ndir == 2 && out->binding == DPA_DIR_ADD) ? 1 : 0;
        if (dpa_pld_have_exact(a, d, 0, *fine, tau) && dpa_pld_have_exact(a, d, 1, *fine, tau)) return DPA_OK;
        if ((st = dpa_pld_obtain(a, 3u << (2 * d), 0u, fine, tau, refining, err))) return st;
    }
    *raw_inf = evaluate(a, q, out);
    return DPA_OK;
}

/* The PLD query loop: evaluate, and refine the grid until the accuracy
 * target holds or refining stops paying (see dpa_options.accuracy). */
static dpa_status pld_query(dpa_pld_acct *a, const query *q, double tau, double step,
                            dpa_result *out, dpa_error *err)
{
    double acc = a->opt.accuracy, prev_gap = INFINITY, fine;
    int stalls = 0, raw_inf, refining = 0;
    if (a->built) {
        step = fmin(step, a->step);
        tau = fmin(tau, a->tau);
    }
    for (int it = 0;; it++) {
        dpa_error e2;
        dpa_status st = compose_and_evaluate(a, q, step, tau, refining, &fine, &raw_inf, out, refining ? &e2 : err);
        if (st) {
            if (!refining) return st;
            /* a finer grid does not fit: keep the last result */
            compose_and_evaluate(a, q, a->step, a->tau, 0, &fine, &raw_inf, out, NULL);
            out->accuracy_met = 0;
            return DPA_OK;
        }
        a->step = fine;
        a->tau = tau;
        double gap = out->upper - out->lower;
        double tol = q->is_eps ? acc * fmax(1.0, out->upper) : acc * out->upper + a->opt.delta_abs;
        if (q->is_eps && raw_inf) {
            /* the window's truncated mass can make the bound infinite
             * although the true eps is finite: shrink the tail budget */
            double room = q->x - fmax(a->comp[0][1].inf, a->comp[a->ndir - 1][1].inf);
            if (!isinf(out->lower) && it < MAX_REFINE && room > 0 && 1e-3 * room < tau) {
                tau = 1e-3 * room;
                refining = 0;
                continue;
            }
            /* infinite for real (lower infinite too), or delta below the
             * numerical floor: refining the grid cannot help.  The
             * largest-loss cap may still have given a finite bound. */
            out->accuracy_met = isinf(out->lower) || (isfinite(out->upper) && !(gap > tol));
            return DPA_OK;
        }
        if (!(gap > tol)) return DPA_OK;
        /* stop when refining no longer pays: the gap is then set by the
         * round-off and truncation allowances, not by the grid */
        int at_floor = !q->is_eps && gap <= 4 * (out->roundoff + out->truncated_mass);
        /* an exact lattice composition at its lattice step: the grid adds no
         * error, a finer one only a larger round-off allowance */
        at_floor |= dpa_pld_exact_lattice(a) > 0 && fine >= dpa_pld_exact_lattice(a) * (1 - 1e-12);
        if (!q->refine || a->opt.grid_step > 0 || it >= MAX_REFINE || at_floor ||
            (stalls += gap > STALL_RATIO * prev_gap) >= MAX_STALLS) {
            out->accuracy_met = 0;
            return DPA_OK;
        }
        double f = sqrt(REFINE_AIM * tol / gap);
        step = dpa_pld_align_step(a, fine * fmin(0.8, fmax(0.125, f)));
        if (step < DPA_PLD_STEP_MIN) { out->accuracy_met = 0; return DPA_OK; }
        refining = 1;
        prev_gap = gap;
    }
}

/* ---------------- (eps, delta)-DP domination fallback ---------------- */

/* Every leaf whose finite losses lie in [-E, E] in both directions, with
 * mass at most D at +inf in each, is (E, D)-DP both ways and so dominated
 * by RR_{E, D} (LT Thm 4.5); the composition of those is evaluated exactly
 * (LT Thm 4.6, src/exact/exact_rr_delta.c).  A certified upper bound for any count,
 * looser than PLD; used where PLD cannot run (its grid would be too large) or
 * certifies nothing finite.  Returns 1 if available (built on first use). */
static int fallback_ready(dpa_pld_acct *a)
{
    if (a->fb_state) return a->fb_state > 0;
    a->fb_state = -1;
    const dpa_leafset *L = a->leaves;
    dpa_leafset t;
    memset(&t, 0, sizeof t);
    t.v = calloc(L->n ? L->n : 1, sizeof *t.v);
    if (!t.v) return 0;
    t.n = L->n;
    t.all_rr = 1;
    int ok = 1;
    for (size_t i = 0; i < L->n && ok; i++) {
        double w0, i0, w1, i1;
        dpa_pld_leaf_range(&L->v[i], 0, &w0, &i0);
        dpa_pld_leaf_range(&L->v[i], 1, &w1, &i1);
        double e = fmax(fmax(w0, w1), 0.0), d = fmax(i0, i1);
        if (L->v[i].rr_eps >= 0) { /* an (eps, delta) leaf is its own dominating RR */
            e = L->v[i].rr_eps;
            d = L->v[i].rr_delta;
        }
        ok = isfinite(e) && d < 1;
        t.v[i] = (dpa_leaf){NULL, L->v[i].count, NAN, e, d, NULL, NAN, 0, DPA_EV_APPROX, {e, d}, 0, 0, {0, 0, 0}, 0, 0, 0};
        t.total_count += L->v[i].count;
    }
    if (ok && dpa_rr_applicable(&t) && dpa_rr_build(&a->fb, &t, NULL) == DPA_OK) a->fb_state = 1;
    else dpa_rr_free(&a->fb);
    free(t.v);
    return a->fb_state > 0;
}

/* Replace a PLD result by the domination bound where that is better, or
 * where PLD failed (pld_status != DPA_OK: then the result is built from
 * the fallback alone, with the trivial lower bounds).  Returns the status
 * to report. */
static dpa_status apply_fallback(dpa_pld_acct *a, const query *q, dpa_status pld_status, dpa_result *out,
                                 dpa_error *err)
{
    int failed = pld_status != DPA_OK;
    if (failed && pld_status != DPA_ENOMEM) return pld_status;
    if (!failed && isfinite(out->upper) && out->accuracy_met) return DPA_OK;
    if (!fallback_ready(a)) return pld_status;
    double up, lo;
    if (q->is_eps) dpa_rr_epsilon(&a->fb, q->x, &up, &lo);
    else dpa_rr_delta(&a->fb, q->x, &up, &lo);
    if (failed) {
        dpa_method_result_init(out, DPA_METHOD_PLD);
        /* lower bounds known without the method: +inf only if the true eps
         * is (never claimed here), delta >= max(0, 1 - e^eps) */
        out->lower = q->is_eps ? 0.0 : (q->x < 0 ? -expm1(q->x) * (1 - 2 * DPA_UNIT_ROUNDOFF) : 0.0);
        out->upper = INFINITY;
        out->accuracy_met = 0;
        if (err) dpa_error_clear(err);
    }
    if (up < out->upper) {
        out->upper = out->upper_remove = out->upper_add = up;
        out->upper_source = a->fb.loose ? DPA_SOURCE_CHERNOFF : DPA_SOURCE_DOMINATION;
        out->binding = a->ndir == 1 ? DPA_DIR_BOTH : out->binding;
        if (out->lower > out->upper) out->lower = out->upper;
        double gap = out->upper - out->lower;
        double tol = q->is_eps ? a->opt.accuracy * fmax(1.0, out->upper) : a->opt.accuracy * out->upper + a->opt.delta_abs;
        out->accuracy_met = gap <= tol;
    }
    (void)lo;
    return isinf(out->upper) && failed ? pld_status : DPA_OK;
}

/* ---------------- the method's operations ---------------- */

static dpa_status pld_supports(const dpa_leafset *L, const dpa_options *opt, dpa_error *err)
{
    (void)opt;
    if (L->zcdp_path[0]) return dpa_method_refuse_zcdp(L, "pld", err);
    return DPA_OK;
}

static void pld_destroy(void *state)
{
    dpa_pld_acct *a = state;
    if (!a) return;
    dpa_pld_release(a);
    dpa_rr_free(&a->fb);
    for (int w = 0; w < DPA_THREADS_MAX; w++) dpa_compose_ws_free(&a->ws[w]);
    dpa_fft_free(a->fft);
    free(a);
}

/* 1 if a leaf (at any depth) has a pair that only bounds its mechanism's
 * class from above: the worst case over eps-bounded-range mechanisms is a
 * curve the 2048-atom pair exceeds by design (chords, a relative margin), and
 * truncated Poisson's labelled pair reveals more than any dataset can
 * (docs/mechanisms.md §3, §4); 2 for a K-of-T random allocation with K > 1
 * (an upper bound only, docs/sampling.md §4). */
static int has_envelope_leaf(const dpa_leafset *L)
{
    for (size_t i = 0; L && i < L->n; i++) {
        const dpa_leaf *l = &L->v[i];
        if (l->kind == DPA_EV_EXPONENTIAL_MECHANISM)
            return 1;
        /* a truncation that can bind (the labelled pair; max_batch >= n is
         * plain Poisson subsampling, exact) */
        if (l->kind == DPA_EV_TRUNCATED_POISSON && l->pair && l->pair->kind == DPA_PAIR_LABELLED)
            return 1;
        /* a K-of-T random allocation (K > 1) is bounded from above only
         * (FS25, arXiv 2502.08202; docs/sampling.md §4) */
        if (l->ra_upper_only == 1)
            return 2;
        if (l->inner && has_envelope_leaf(l->inner))
            return has_envelope_leaf(l->inner);
    }
    return 0;
}

/* For such specs the bracket's lower end is 0 (delta) or 0 (eps): certified,
 * the pair's own lower bound is not. */
static void envelope_lower(const dpa_pld_acct *a, dpa_result *out)
{
    if (!a->envelope_lower)
        return;
    out->lower = out->lower_remove = out->lower_add = 0;
    if (!out->note[0] && a->envelope_lower == 2)
        snprintf(out->note, sizeof out->note, "lower bound 0: a random_allocation with selected > 1 is "
                 "accounted by an upper bound only (docs/sampling.md §4)");
    if (!out->note[0])
        snprintf(out->note, sizeof out->note, "lower bound 0: an exponential_mechanism or truncated_poisson "
                 "step is accounted by an upper envelope of its class");
}

static dpa_status pld_create(const dpa_leafset *L, const dpa_options *opt, void **state, dpa_error *err)
{
    dpa_status st = pld_supports(L, opt, err);
    if (st) return st;
    dpa_pld_acct *a = calloc(1, sizeof *a);
    if (!a || !(a->fft = dpa_fft_new(opt->fft_cache_dir))) {
        free(a);
        return dpa_error_set(err, DPA_ENOMEM, "out of memory");
    }
    a->opt = *opt;
    a->leaves = L;
    a->ndir = L->asymmetric ? 2 : 1;
    a->nthreads = opt->threads ? opt->threads : dpa_threads_default();
    if (a->nthreads > DPA_THREADS_MAX) a->nthreads = DPA_THREADS_MAX;
    for (int d = 0; d < 2; d++) dpa_pld_set_range(L, d < a->ndir ? d : 0, &a->wmax[d], &a->infub[d]);
    a->envelope_lower = has_envelope_leaf(L);
    *state = a;
    return DPA_OK;
}

static dpa_status pld_epsilon(void *state, double delta, dpa_result *out, dpa_error *err)
{
    dpa_pld_acct *a = state;
    double acc = a->opt.accuracy, tau = fmin(EPS_TAIL_MAX, EPS_TAIL_SHARE * acc * delta);
    double step = a->built ? a->step : dpa_pld_initial_step(a, acc, dpa_pld_eps_estimate(a, delta));
    query q = {1, delta, 1};
    dpa_status st = pld_query(a, &q, tau, step, out, err);
    st = apply_fallback(a, &q, st, out, err);
    /* lattice compositions whose grid missed the target (small deltas: the
     * FFT's absolute round-off allowance): the tilted composition */
    if (st == DPA_OK && !out->accuracy_met)
        dpa_pld_tilted_tighten(a, 1, delta, out);
    if (st == DPA_OK)
        envelope_lower(a, out);
    return st;
}

/* A delta query; tilt: tighten a missed target by the tilted composition
 * (single queries, not the points of a profile) */
static dpa_status pld_delta_query(dpa_pld_acct *a, double eps, int refine, int tilt, dpa_result *out,
                                  dpa_error *err)
{
    double step = a->built ? a->step : dpa_pld_initial_step(a, a->opt.accuracy, eps);
    query q = {0, eps, refine};
    dpa_status st = pld_query(a, &q, DEFAULT_TAIL, step, out, err);
    st = apply_fallback(a, &q, st, out, err);
    if (st == DPA_OK && tilt && refine && !out->accuracy_met)
        dpa_pld_tilted_tighten(a, 0, eps, out);
    if (st == DPA_OK)
        envelope_lower(a, out);
    return st;
}

static dpa_status pld_delta(void *state, double eps, int refine, dpa_result *out, dpa_error *err)
{
    return pld_delta_query(state, eps, refine, 1, out, err);
}

/* Refine on each point first (a finer build serves all later points), then
 * evaluate every point on the final builds. */
static dpa_status pld_profile(void *state, const double *eps, size_t n, double *upper, double *lower,
                              dpa_error *err)
{
    dpa_result r;
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < n; i++) {
            dpa_method_result_init(&r, DPA_METHOD_PLD);
            dpa_status st = pld_delta_query(state, eps[i], pass == 0, 0, &r, err);
            if (st) return st;
            if (pass) {
                upper[i] = r.upper;
                lower[i] = r.lower;
            }
        }
    return DPA_OK;
}

const dpa_method_ops dpa_method_pld_ops = {
    DPA_METHOD_PLD, pld_supports, pld_create, pld_destroy, pld_epsilon, pld_delta, pld_profile,
};

/* The PLD method's accountant state, shared by its builds (src/pld/build.c
 * and the files of pld_build.h: grids of the leaves, compositions, grid
 * steps; range.c: loss ranges) and its queries (src/pld/method.c:
 * bounds, adaptive refinement, the (eps, delta) domination fallback).
 * SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef DPA_PLD_ACCT_H
#define DPA_PLD_ACCT_H

#include "dpacct/accountant.h"
#include "model/leaves.h"
#include "exact/exact_rr.h"
#include "num/num.h"
#include "pld/pld.h"
#include "model/method.h"

/* The smallest grid step (loss units) the PLD method uses or accepts as a
 * fixed step (dpa_options.grid_step). */
#define DPA_PLD_STEP_MIN 1e-7

typedef struct dpa_pld_acct {
    dpa_options opt;
    const dpa_leafset *leaves; /* lent by the accountant */
    dpa_fft *fft;
    int nthreads;       /* workers of a build (options.threads resolved) */
    dpa_compose_ws ws[DPA_THREADS_MAX]; /* FFT working arrays per worker, reused by every composition */
    int ndir;
    int envelope_lower; /* some leaf's pair is an upper envelope of its mechanism's class
                         * (exponential_mechanism, truncated_poisson): lower bounds of the
                         * pair are not lower bounds of the class's worst case, so 0 is
                         * reported as the lower bound */
    int built;          /* some composition exists */
    double step, tau;   /* the finest grid step and tail budget asked for so far */
    /* grid step and tail budget of comp[d][k]; 0: not built.  The direction
     * that sets the upper bound is composed on the fine grid, upper and
     * lower; the other only needs an upper bound below it, composed on a
     * coarser grid (docs/guarantees.md §3.11). */
    double cstep[2][2], ctau[2][2];
    int crough[2][2];   /* comp[d][k] composed without the accurate path (DPA_COMPOSE_ROUGH) */
    /* per direction: the composition's largest finite loss (rounded up) and
     * an upper bound on its mass at +inf (docs/guarantees.md §3.12) */
    double wmax[2], infub[2];
    /* the (eps_i, delta_i)-DP domination bound (DPA_SOURCE_DOMINATION):
     * 0 not built yet, 1 built in fb, -1 unavailable */
    int fb_state;
    dpa_rr_comp fb;
    dpa_composed comp[2][2]; /* [direction][0 pessimistic, 1 optimistic] */
} dpa_pld_acct;

/* ---- range.c ---- */

/* Largest finite loss *wmax of leaf l in direction d (0 remove, 1 add: the
 * reversed pair) and an upper bound *inf on its mass above that loss (its
 * +inf atom and omitted atoms); *wmax = +inf when there is no finite bound.
 * dpa_pld_set_range: the same for a composition (losses add, +inf masses
 * compose), both rounded up. */
void dpa_pld_leaf_range(const dpa_leaf *l, int d, double *wmax, double *inf);
void dpa_pld_set_range(const dpa_leafset *L, int d, double *wmax, double *inf);

/* ---- step.c ---- */

/* The largest step <= step that divides the composition's atom lattice (if
 * any; the step itself under a fixed grid step). */
double dpa_pld_align_step(const dpa_pld_acct *a, double step);
/* The lattice spacing b when every leaf is atom-only on one lattice (the
 * grid of step b is then exact), else 0 (src/pld/step.c). */
double dpa_pld_exact_lattice(const dpa_pld_acct *a);
/* First grid step for a query at accuracy acc whose answer is about eps. */
double dpa_pld_initial_step(const dpa_pld_acct *a, double acc, double eps);
/* A rough Gaussian-DP estimate of eps(delta) (sizes the first grid only). */
double dpa_pld_eps_estimate(const dpa_pld_acct *a, double delta);

/* ---- build.c ---- */

/* Free every composition (the state stays usable). */
void dpa_pld_release(dpa_pld_acct *a);

/* comp[d][k] exists at (step, tau) or finer; _exact: and was composed with
 * the accurate path (what the binding direction needs). */
int dpa_pld_have(const dpa_pld_acct *a, int d, int k, double step, double tau);
int dpa_pld_have_exact(const dpa_pld_acct *a, int d, int k, double step, double tau);

/* Make sure the compositions of mask (bit 2 d + k; bits also in rough may be
 * composed without the accurate path) exist at (step, tau) or finer; on a
 * grid that does not fit, coarsen (automatic step only).  *used: the step
 * built (or already there). */
dpa_status dpa_pld_ensure(dpa_pld_acct *a, unsigned mask, unsigned rough, double step, double tau, double *used,
                          dpa_error *err);
/* The same at exactly *step when refining (a grid that does not fit is an
 * error: the caller keeps its last build); otherwise dpa_pld_ensure. */
dpa_status dpa_pld_obtain(dpa_pld_acct *a, unsigned mask, unsigned rough, double *step, double tau, int refining,
                          dpa_error *err);

/* ---- method.c ---- */

/* eps(delta) bounds of the compositions comp[d][k] with cstep[d][k] > 0
 * (max over the ndir directions, the largest-loss cap of wmax/infub), as a
 * query evaluates them, without composing anything (out initialised by
 * dpa_method_result_init).  Returns 1 if the raw upper bound was +inf. */
int dpa_pld_evaluate_epsilon(dpa_pld_acct *a, double delta, dpa_result *out);

/* ---- tilted.c ---- */

/* 1 if every leaf is an atom-only pair on one loss lattice in each
 * direction (discrete Gaussian, discrete Laplace, ...) and the grid step is
 * automatic: the tilted composition applies. */
int dpa_pld_tilted_applies(const dpa_pld_acct *a);
/* Tighten out, a certified result of an eps query at x = delta (is_eps) or
 * of a delta query at x = eps, by the exponentially tilted composition
 * (docs/guarantees.md §3.18): the new bounds are intersected with the old
 * ones; grid information and accuracy_met are those of the tilted
 * composition when it improved a bound.  Nothing if it does not apply. */
void dpa_pld_tilted_tighten(dpa_pld_acct *a, int is_eps, double x, dpa_result *out);

/* ---- export.c ---- */

/* The upper and lower composed measures of direction dir (remove, add; both
 * the same for a symmetric pair) for dpa_accountant_pld: composes them at
 * the finest step queried so far if they are missing (before any query:
 * the step an eps query at delta 1e-6 starts from), lends them in *out. */
dpa_status dpa_pld_export_dir(void *state, dpa_direction dir, dpa_pld_export *out, dpa_error *err);

/* ---- counts.c ---- */

/* Bounds on eps(delta) of the state's single plain leaf repeated counts[i]
 * times, for every i with done[i] = 0 on entry (integers in [1, K], K the
 * leaf's count), from the grids of the state's last eps query at delta (it
 * must have been made): the leaf discretized once, blocks of it composed
 * once, each count composed from the blocks.  out[i] is written and done[i]
 * set only where the bracket is certified and meets the accuracy target;
 * the others are left to the caller (a single-count query).  Nothing is
 * done for other states (several or composite leaves, envelope pairs). */
void dpa_pld_epsilon_counts(void *state, const double *counts, size_t n, double delta, dpa_result *out,
                            unsigned char *done);

/* The method table of the PLD method (src/pld/method.c), which the accountant dispatches to. */
extern const dpa_method_ops dpa_method_pld_ops;

#endif

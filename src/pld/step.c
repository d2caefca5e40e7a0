/* The PLD method's grid steps: the atom lattice of a composition and the
 * alignment of automatic steps to it, a Gaussian-DP estimate of eps(delta),
 * and the first step of a query from an error model.
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <math.h>
#include "pld/pld_acct.h"
#include "pld/pld_build.h"
#include "exact/exact.h"

/* Initial grid step from an error model (a wrong guess only costs a
 * refinement), three of them (dpa_pld_initial_step).  A single distinct
 * mechanism with atoms repeated (Laplace, subsampled Laplace): gap ~ C k
 * step^2; 3 was fitted when it also served the continuous shape (DP-SGD in
 * one stage: C = 1.9). */
#define STEP_MODEL_C_REPEAT 3.0
/* The same for a single leaf with a continuous loss and no atoms, whose gap
 * goes as k step^2 / sqrt(eps) (dpa_pld_initial_step): measured C = 4.0,
 * 5 keeps a margin. */
#define STEP_MODEL_C_CONT 5.0
/* Sets of distinct leaves: gap ~ C K step^2 / sqrt(eps) fits them better
 * (dpa_pld_initial_step); 5 covers the measured 3.0-4.6. */
#define STEP_MODEL_C_SET 5.0
/* The coarsest first step (loss units). */
#define STEP_MAX 0.05

/* Atom lattice of the composition: the spacing b of the atom-only leaf with
 * the largest count whose finite atoms are all integer multiples of b (RR,
 * pure, approx, discrete Laplace, Laplace); 0 if there is none.  A grid step dividing
 * b puts those atoms on grid points, where both discretizations are exact;
 * off the grid an atom costs first-order accuracy. */
static double atom_lattice(const dpa_pld_acct *a)
{
    double best_b = 0, best_k = 0;
    for (size_t i = 0; i < a->leaves->n; i++) {
        const dpa_pair *p = a->leaves->v[i].pair;
        if (!p || !p->natoms || a->leaves->v[i].count <= best_k) continue;
        double b = INFINITY;
        for (size_t j = 0; j < p->natoms; j++) {
            double w = fabs(p->atoms[j].w);
            if (isfinite(w) && w > 0 && p->atoms[j].la > -INFINITY && w < b) b = w;
        }
        if (!isfinite(b)) continue;
        int ok = 1;
        for (size_t j = 0; j < p->natoms && ok; j++) {
            double w = p->atoms[j].w;
            if (!isfinite(w)) continue;
            double r = w / b;
            ok = fabs(r - round(r)) <= DPA_PLD_ATOM_LATTICE_TOL * fmax(1.0, fabs(r));
        }
        if (ok) { best_b = b; best_k = a->leaves->v[i].count; }
    }
    return best_b;
}

/* The largest step <= step that divides the atom lattice (if any). */
double dpa_pld_align_step(const dpa_pld_acct *a, double step)
{
    if (a->opt.grid_step > 0) return step;
    double b = atom_lattice(a);
    if (!(b > 0)) return step;
    return b / ceil(b / step * (1 - 1e-12));
}

/* The lattice b when the composition lives on it exactly: every leaf is an
 * atom-only pair (no continuous part, no subsampled composition) whose
 * finite atoms are all integer multiples of b (discrete Gaussian, discrete
 * Laplace, pure, randomized response, approx, on a common lattice); 0
 * otherwise, for a fixed grid_step, for b outside [1e-7, 1] and for
 * two-stage builds (long repetitions).  At step b every atom sits on a grid
 * point, where both discretizations are exact (§3.3-§3.5 of
 * docs/guarantees.md): a finer grid cannot shrink the gap, only raise the
 * FFT's round-off allowance with its size. */
double dpa_pld_exact_lattice(const dpa_pld_acct *a)
{
    if (a->opt.grid_step > 0) return 0;
    double b = atom_lattice(a);
    /* b must be a valid grid step itself, and the build single-stage: a
     * two-stage build composes onto a grid Lc times coarser than the
     * leaves', where the lattice no longer sits on grid points (the plan
     * asked with the largest tail budget, the most permissive) */
    if (!(b >= DPA_PLD_STEP_MIN && b <= 1)) return 0;
    double m;
    if (dpa_pld_two_stage_plan(a, b, 1.0, &m) > 1) return 0;
    for (size_t i = 0; i < a->leaves->n; i++) {
        const dpa_pair *p = a->leaves->v[i].pair;
        if (!p || p->kind != DPA_PAIR_ATOMS) return 0;
        for (size_t j = 0; j < p->natoms; j++) {
            double w = p->atoms[j].w;
            if (!isfinite(w)) continue;
            double r = w / b;
            if (!(fabs(r - round(r)) <= DPA_PLD_ATOM_LATTICE_TOL * fmax(1.0, fabs(r)))) return 0;
        }
    }
    return b;
}

/* A rough loss variance of a leaf set (a scale, not a bound): composite
 * leaves as Poisson subsampling of their inner composition. */
static double set_var_estimate(const dpa_leafset *L)
{
    double v = 0;
    for (size_t i = 0; i < L->n; i++) {
        const dpa_leaf *l = &L->v[i];
        /* random allocation: log(S/T) ~ (S - T)/T, variance Var_B(W)/T */
        double vi = l->pair            ? dpa_pair_var_estimate(l->pair)
                    : l->ra_steps > 0 ? expm1(fmin(set_var_estimate(l->inner), 50.0)) / l->ra_steps
                                      : l->rate * l->rate * expm1(fmin(set_var_estimate(l->inner), 50.0));
        v += l->count * vi;
    }
    return v;
}

/* A Gaussian-DP estimate of eps(delta) for the composition (mu^2 = sum of
 * loss variances): only used to size the first grid. */
double dpa_pld_eps_estimate(const dpa_pld_acct *a, double delta)
{
    double v = set_var_estimate(a->leaves);
    double up, lo;
    dpa_exact_epsilon(sqrt(v), delta, &up, &lo);
    return isfinite(up) ? up : 1.0;
}

/* First grid step at the target gap accuracy * max(1, eps), from the error
 * model of the composition's shape: C k step^2 (one repeated leaf with
 * atoms), C k step^2 / sqrt(eps) (one repeated continuous leaf; eps held at
 * >= 1), C K step^2 / sqrt(eps) (several distinct leaves). */
double dpa_pld_initial_step(const dpa_pld_acct *a, double acc, double eps)
{
    if (a->opt.grid_step > 0) return a->opt.grid_step;
    double lattice = dpa_pld_exact_lattice(a);
    if (lattice > 0) return lattice; /* exact there: no finer step is needed */
    double k = fmax(1.0, a->leaves->total_count);
    double s;
    if (a->leaves->n == 1 && a->leaves->v[0].pair) {
        const dpa_pair *p = a->leaves->v[0].pair;
        int atoms = 0;
        for (size_t i = 0; i < p->natoms; i++) atoms |= isfinite(p->atoms[i].w);
        /* a continuous loss (subsampled Gaussians): the gap goes as
         * k step^2 / sqrt(eps), like the sets' below (measured C = 4.0 on
         * the DP-SGD example, eps 2.4, and on 10^6 steps, eps 10.7: with
         * k step^2 alone one constant cannot fit both, 2.6 and 1.2); with
         * atoms (Laplace, RR-like) the k step^2 model.  Fitted at eps >= 1:
         * below, the factor is held at its eps = 1 value (delta queries at
         * eps near 0 would otherwise get grids up to 5 times finer than
         * they need: DP-SGD's delta(0), 1.8 M points instead of 0.26 M) */
        double e = fmin(fmax(eps, 1.0), 1e3);
        s = atoms ? sqrt(acc * fmax(1.0, eps) / (STEP_MODEL_C_REPEAT * k))
                  : sqrt(acc * fmax(1.0, eps) * sqrt(e) / (STEP_MODEL_C_CONT * k));
    } else {
        /* several distinct leaves: measured gap ~ C' K step^2 / sqrt(eps)
         * with C' = 3.0-4.6 on subsampled Gaussian sets at delta 1e-5
         * (1000 distinct: 3.4, 100 distinct: 3.65); STEP_MODEL_C_SET keeps
         * a margin */
        double e = fmin(fmax(eps, 1e-3), 1e3);
        s = sqrt(acc * fmax(1.0, eps) * sqrt(e) / (STEP_MODEL_C_SET * k));
    }
    return dpa_pld_align_step(a, fmin(STEP_MAX, fmax(DPA_PLD_STEP_MIN, s)));
}

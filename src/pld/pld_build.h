/* What the files of the PLD method's builds share (build.c, build_compose.c,
 * leaf_grid.c, precompose.c, subsampled.c, step.c): the round-off factor of
 * a grid measure's masses, the atom-lattice tolerance, the grid measures of
 * one leaf in one build, and the functions the files call in one another.
 * The accountant state is in pld_acct.h.
 * SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef DPA_PLD_BUILD_H
#define DPA_PLD_BUILD_H

#include "pld/pld_acct.h"

/* Round-off of a grid measure's masses: relative errors of a few u (up to
 * ~|log mass| u far in the tails, where masses are negligible).  Masses
 * off by a relative e move every hockey-stick value by a relative e at most,
 * so a composition of K factors is off by a relative K e: the bounds carry a
 * factor (1 +- DPA_PLD_DISC_REL * K). */
#define DPA_PLD_DISC_REL (16 * DPA_UNIT_ROUNDOFF)
/* Atoms count as on a lattice b when w / b is within this of an integer. */
#define DPA_PLD_ATOM_LATTICE_TOL 1e-9

/* The grid measures of one leaf in one build, [direction][kind 0 upper,
 * 1 lower], and the additive allowance of each per use: pointwise
 * h_true <= h_upper + allow[d][0] and h_true >= h_lower - allow[d][1]. */
typedef struct dpa_pld_leaf_grid {
    dpa_grid_pmf pm[2][2];
    double allow[2][2];
    int pre;  /* pm is already the leaf's count-fold composition (dpa_pld_precomposed_leaf_grid) */
} dpa_pld_leaf_grid;

/* ---- leaf_grid.c ---- */

/* Cells c discretized; the measure of `kind` (0 upper, 1 lower) goes to
 * *out, the other is dropped; c is freed. */
dpa_status dpa_pld_keep_kind(dpa_cells *c, int kind, dpa_grid_pmf *out, dpa_error *err);
/* A copy of src's masses in dst. */
dpa_status dpa_grid_pmf_copy(const dpa_grid_pmf *src, dpa_grid_pmf *dst, dpa_error *err);
void dpa_pld_leaf_grid_free(dpa_pld_leaf_grid *g);
/* Pessimistic/optimistic grid measures of a mechanism leaf with pair p, the
 * directions d < nd with kinds in mask (bit 2 d + k), on `threads` threads. */
dpa_status dpa_pld_plain_leaf_grid(dpa_pld_acct *a, const dpa_pair *p, double step, double tau_leaf, int nd,
                                   unsigned mask, int threads, dpa_pld_leaf_grid *g, dpa_error *err);
/* The measure of one kind of pair p (freed here) at the common step, with
 * the snapping shift of its atoms in *snap. */
dpa_status dpa_pld_pair_kind_grid(dpa_pld_acct *a, dpa_pair *p, double step, double tau_leaf, int kind,
                                  dpa_grid_pmf *out, double *snap, dpa_error *err);

/* ---- subsampled.c ---- */

/* The atom pair of a subsampled composed measure mu at rate q in direction
 * dir; *werr its loss round-off allowance, *bsum = sum m e^{-z}. */
dpa_pair *dpa_pld_subsampled_atoms(const dpa_composed *mu, double q, int dir, double *werr, long double *bsum,
                                   dpa_error *err);
/* Lower the masses of a lower measure whose B-mass sum exceeds 1. */
void dpa_pld_trim_lower_bmass(dpa_composed *mu);

/* ---- precompose.c ---- */

/* 1 if leaf l is composed count-fold off the grid of step `step` first. */
int dpa_pld_wants_precomposition(const dpa_leaf *l, double step);
/* Its measures, the count-fold composition (g->pre set). */
dpa_status dpa_pld_precomposed_leaf_grid(dpa_pld_acct *a, dpa_compose_ws *ws, const dpa_leaf *l, double step,
                                         double tau_leaf, int nd, unsigned mask, dpa_pld_leaf_grid *g,
                                         dpa_error *err);

/* ---- build_compose.c ---- */

/* Coarsening factor L (1: single stage) and block length *m_out for a
 * build at grid step `step` and tail budget tau. */
long long dpa_pld_two_stage_plan(const dpa_pld_acct *a, double step, double tau, double *m_out);
/* Compose, for each of nsets (1 or 2) sets L[s], the leaves' grid measures
 * g[s] into out[s][d][k] for the bits of mask (2 d + k, d < nd); _leaves:
 * one set. */
dpa_status dpa_pld_compose_sets(dpa_pld_acct *a, size_t nsets, const dpa_leafset *const *L,
                                dpa_pld_leaf_grid *const *g, double tau, int nd, long long Lc, double m, int prepare,
                                unsigned mask, unsigned rough, dpa_composed (*const *out)[2], dpa_error *err);
/* The cnt-fold composition of fine grid measure g (upper if k = 0, lower if
 * k = 1), coarsened by Lc.  *allow: the fine stage's additive allowance on
 * delta (window tails, FFT round-off, discretization round-off and snapping
 * of cnt steps, leaf_allow each), to be counted once per use of the result. */
/* ---- random_allocation.c ---- */

/* The grid measure of direction d, kind k of a 1-of-T random allocation
 * leaf from the inner composition's measure mu of that direction and kind
 * (a lower remove measure trimmed to B-mass 1 by the caller,
 * dpa_pld_trim_lower_bmass; mu is only read), with its additive allowance
 * per use (docs/sampling.md §4); its compositions in the workspace ws. */
dpa_status dpa_pld_ra_grid(dpa_pld_acct *a, dpa_compose_ws *ws, const dpa_composed *mu, double T, int d, int k,
                           double step, double tau_leaf, dpa_grid_pmf *out, double *allow, dpa_error *err);

dpa_status dpa_pld_fine_power(dpa_pld_acct *a, dpa_compose_ws *ws, const dpa_grid_pmf *g, double cnt, long long Lc,
                              int k, double tau_f, double leaf_allow, unsigned cflags, dpa_grid_pmf *out, double *allow,
                              dpa_error *err);
dpa_status dpa_pld_compose_leaves(dpa_pld_acct *a, const dpa_leafset *L, dpa_pld_leaf_grid *g, double tau, int nd,
                                  long long Lc, double m, int prepare, unsigned mask, unsigned rough,
                                  dpa_composed (*out)[2], dpa_error *err);

#endif

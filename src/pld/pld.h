/* Privacy loss distributions on a uniform grid: discretization of a pair,
 * composition with FFTW, and hockey-stick queries.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A grid measure mu has masses mu[i] >= 0 at losses z = (lo + i) * step and a
 * mass at +inf.  Its hockey-stick curve is h_mu(x) = sum mu[i] (1 - x e^{-z_i})_+
 * + mu_inf, and delta_mu(eps) = h_mu(e^eps).
 *
 * Soundness rests on one lemma (docs/guarantees.md, "composition lemma"):
 * if nonnegative measures mu_j, nu_j satisfy h_{mu_j} >= h_{nu_j} pointwise,
 * then the hockey-stick curves of their convolutions satisfy the same
 * inequality.  The pessimistic grid measure of a pair dominates its true loss
 * law (h >= h_true), the optimistic one is dominated (h <= h_true), so the
 * composed grid measures bracket the true composed profile.
 */
#ifndef DPA_PLD_H
#define DPA_PLD_H

#include <stddef.h>
#include "dpacct/status.h"
#include "mech/pair.h"
#include "num/num.h"

typedef struct dpa_grid_pmf {
    long long lo;   /* grid index of mass[0] */
    size_t n;       /* number of grid points */
    double step;    /* grid spacing */
    double *mass;   /* n masses (malloc'd, owned) */
    double inf;     /* mass at +inf */
} dpa_grid_pmf;

void dpa_grid_pmf_free(dpa_grid_pmf *g);

/* Cell masses of a pair on a grid: the expensive, special-function part of
 * discretization, shared by both directions of an asymmetric pair.
 * Cells are C_i = (z_{bk[i]}, z_{bk[i+1]}], z_j = j step: one grid step wide
 * where the mass is, wider in the tails of continuous pairs (a cell of
 * width w steps is allowed while max(A, B)(C) w^2 <= 1e-6, so all wide cells
 * together add a small fraction to the discretization error), and always one
 * step wide for pairs with atoms. */
typedef struct dpa_cells {
    long long lo;
    size_t n;             /* grid points (of the measures built from the cells) */
    double step;
    size_t nc;            /* cells */
    long long *bk;        /* nc + 1 grid indices of the cell end points, or NULL:
                           * cell i is then (z_{lo+i}, z_{lo+i+1}] (nc = n - 1) */
    double *la, *lb;      /* nc log masses A(C_i), B(C_i) */
    double left_a, left_b;   /* finite masses at W <= z_0 */
    double right_a, right_b; /* finite masses at W > z_{n-1} */
    double inf_a;         /* A(W = +inf) */
    double ninf_b;        /* B(W = -inf) */
    double inf_rel;       /* relative error bound of inf_a and ninf_b (exp of the
                           * atoms' log masses: 4 u (|l| + 4) each, e.g. 3e-13 for
                           * a mass near 1e-300): pess rounds them up, opt down */
    double slack_lo, slack_hi; /* omitted-mass bounds (see pair.h) */
    double snap_shift;    /* largest loss shift of an atom snapped onto a grid point */
} dpa_cells;

/* both = 1 sizes the window for the B-mass too, so dpa_cells_reverse may be used. */
dpa_status dpa_cells_build(const dpa_pair *p, double step, double tau, int both, size_t max_points,
                           dpa_cells *c, dpa_error *err);
/* Cells of the reversed pair (B, A). */
dpa_status dpa_cells_reverse(const dpa_cells *c, dpa_cells *out, dpa_error *err);
void dpa_cells_free(dpa_cells *c);
/* Pessimistic and optimistic grid measures from cells (see dpa_discretize). */
dpa_status dpa_cells_discretize(const dpa_cells *c, dpa_grid_pmf *pess, dpa_grid_pmf *opt, dpa_error *err);

/* Discretize pair p on the grid of spacing `step`:
 *   pess: connect-the-dots (Doroshenko et al. 2022), cell by cell, with mass
 *         below the support window rounded up to its first point and mass
 *         above it moved to +inf: h_pess >= h_true everywhere.
 *   opt:  a garbling onto the grid (outputs merged so that each merged output
 *         has likelihood ratio exactly e^{z_i}; see discretize.c), or rounding
 *         losses down where that is better: h_opt <= h_true everywhere.
 * tau: A-mass allowed outside the window on each side.  max_points caps the
 * grid (DPA_ENOMEM with a message if the support needs more points).
 * Both outputs are allocated here; free with dpa_grid_pmf_free. */
dpa_status dpa_discretize(const dpa_pair *p, double step, double tau, size_t max_points,
                          dpa_grid_pmf *pess, dpa_grid_pmf *opt, dpa_error *err);

/* One factor of a composition: a grid measure repeated `count` times. */
typedef struct dpa_factor {
    const dpa_grid_pmf *pmf;
    double count;
} dpa_factor;

/* The composed measure on a window, with its error budget. */
typedef struct dpa_composed {
    long long lo;          /* grid index of mass[0] */
    size_t n;              /* window length (= FFT length) */
    double step;
    double *mass;          /* n masses (>= 0; negatives from round-off clamped) */
    int borrowed;          /* mass lives in the workspace (DPA_COMPOSE_LENT) */
    double mass0;          /* mass[0] (kept for queries below the window) */
    double inf;            /* exact composition of the factors' +inf masses */
    double tail_above;     /* bound on the mass of the composed grid measure above the window */
    double tail_outside;   /* the same, both sides */
    double roundoff;       /* a-posteriori round-off allowance on delta (absolute) */
    double rel_err;        /* relative allowance on delta: round-off of the factors'
                            * masses (set by the caller, 0 from dpa_compose) */
    /* query tables (dpa_composed_prepare): D[m] = sum_{j>m} mass[j](1 - e^{z_m - z_j}),
     * E[m] = sum_{j>m} mass[j] e^{z_m - z_j} */
    double *D, *E;
    size_t ready;          /* D[j], E[j] are valid for j >= ready (filled lazily by the queries) */
    double ed, omed;       /* e^{-step}, 1 - e^{-step} */
} dpa_composed;

void dpa_composed_free(dpa_composed *c);

/* Compose factors on one final grid: the window comes from Chernoff bounds
 * (mass outside <= tail_tau on each side), the FFT length is
 * dpa_fft_good_size(window), and transforms are multiplied in the frequency
 * domain with repeat counts applied through complex logarithms, so the cost
 * does not grow with the counts.  All factors must share `step`.
 * DPA_ENOMEM (with a message) if the window needs more than max_n points. */
/* Working arrays of dpa_compose, kept by the caller (one per accountant) and
 * grown on demand, so repeated compositions do not reallocate.  Zero-init
 * before first use; free with dpa_compose_ws_free. */
typedef struct dpa_compose_ws {
    size_t cap;            /* FFT length the arrays hold */
    double *buf, *errsum;
    fftw_complex *X, *Xt, *acc, *prod;
} dpa_compose_ws;
void dpa_compose_ws_free(dpa_compose_ws *ws);

/* lower = 1 for lower (optimistic) measures: the composed +inf mass is then
 * computed so as never to exceed the true one (factor totals capped at 1). */
dpa_status dpa_compose(dpa_fft *fft, dpa_compose_ws *ws, const dpa_factor *f, size_t nf, double tail_tau,
                       int lower, size_t max_n, dpa_composed *out, dpa_error *err);

/* dpa_compose with flags.  DPA_COMPOSE_LENT leaves the masses in the
 * workspace (out->mass points into ws, out->borrowed set): no allocation,
 * for a result that is read at once; valid until the next composition on
 * ws; never dpa_composed_prepare it; dpa_composed_free releases nothing of
 * it.  DPA_COMPOSE_ROUGH skips the accurate low-frequency path (the FFT's
 * relative error then grows k-fold, all of it in the round-off allowance):
 * for bounds that only have to stay below another (the non-binding
 * direction's upper measure), one FFT fewer per repeated factor. */
#define DPA_COMPOSE_LENT 1u
#define DPA_COMPOSE_ROUGH 2u
dpa_status dpa_compose_flags(dpa_fft *fft, dpa_compose_ws *ws, const dpa_factor *f, size_t nf, double tail_tau,
                             int lower, size_t max_n, unsigned flags, dpa_composed *out, dpa_error *err);

/* Powers of a few grid measures on one transform (the one pass of
 * pld/counts.c): dpa_powers_init folds and transforms each factor g[j]
 * once, at the FFT length of the widest window of the nk compositions
 * prod_j g_j^{ks[i nf + j]} it will be asked for (g lent:
 * kept alive and unchanged until dpa_powers_clear), and keeps log X_j;
 * dpa_powers_compose gives prod_j g_j^{k[j]} as dpa_compose_flags with
 * DPA_COMPOSE_ROUGH would on that length (same window, tails, round-off
 * allowance, +inf mass), from the kept logarithms: one inverse FFT per
 * composition.  DPA_ENOMEM if a composition's window exceeds the length,
 * or the transforms would hold more than DPA_POWERS_MAX_VALUES values. */
#define DPA_POWERS_MAX 32
/* At most this many kept frequencies (factors x half spectrum, 24 bytes
 * each: 48 MB); beyond, DPA_ENOMEM and the caller composes each power
 * afresh. */
#define DPA_POWERS_MAX_VALUES (double)(1 << 21)
typedef struct dpa_powers {
    size_t nf, N;
    const dpa_grid_pmf *g[DPA_POWERS_MAX];
    long long centre[DPA_POWERS_MAX]; /* each factor's folding centre */
    double complex *lx;               /* nf x (N / 2 + 1) logs of the transforms */
    double *la;                       /* their moduli */
} dpa_powers;
dpa_status dpa_powers_init(dpa_fft *fft, dpa_compose_ws *ws, const dpa_grid_pmf *const *g, size_t nf,
                           const double *ks, size_t nk, double tail_tau, int lower, size_t max_n, dpa_powers *p,
                           dpa_error *err);
dpa_status dpa_powers_compose(dpa_fft *fft, const dpa_powers *p, dpa_compose_ws *ws, const double *k, double tail_tau,
                              int lower, size_t max_n, dpa_composed *out, dpa_error *err);
void dpa_powers_clear(dpa_powers *p);

/* Cells of a grid L times coarser holding the masses of a composed measure
 * (before dpa_composed_prepare): dpa_cells_discretize of the result gives an
 * upper measure of an upper f and a lower measure of a lower f (coarsen.c). */
dpa_status dpa_cells_from_composed(const dpa_composed *f, long long L, dpa_cells *c, dpa_error *err);

/* Make the query tables D, E ready for the queries, which fill them lazily
 * from the top of the window down to the point they need (O(n) in all at
 * most; a query above most of the mass touches little of them). */
dpa_status dpa_composed_prepare(dpa_composed *c, dpa_error *err);

/* delta of the composed grid measure at eps (finite part + inf, without the
 * error budget): exact for the grid measure. */
double dpa_composed_delta(dpa_composed *c, double eps);

/* Smallest eps with dpa_composed_delta(c, eps) <= target (target > c->inf);
 * -INFINITY if even eps -> -inf satisfies it (target >= total mass... never in
 * practice), +INFINITY if target <= c->inf. */
double dpa_composed_epsilon(dpa_composed *c, double target);

#endif

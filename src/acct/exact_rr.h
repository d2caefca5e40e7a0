/* Closed-form accountant for compositions of (eps, delta)-DP steps.
 * SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef DPA_EXACT_RR_H
#define DPA_EXACT_RR_H

#include <stddef.h>
#include "dpacct/status.h"

/* A composition of k_i copies of RR_{eps_i, delta_i} (the dominating pair of
 * an (eps_i, delta_i)-DP step, LT Thm 4.5), grouped by distinct eps_i > 0.
 * Its loss is +inf with probability 1 - P, P = prod_j (1 - delta_j)^{k_j},
 * and otherwise S = sum_i eps_i (2 Y_i - k_i) with independent
 * Y_i ~ Bin(k_i, p_i), p_i = e^{eps_i} / (1 + e^{eps_i}) (LT Thm 4.6
 * unrolled; LT Cor 4.7 for one eps), so
 *   delta(t) = 1 - P + P F(t),   F(t) = E[(1 - e^{t - S})_+].
 *
 * Every binomial is represented on a window [lo, hi] around its mode by
 * weights w(y) relative to w(mode) = 1 (ratio recurrence in long double),
 * with checkpoint tables of suffix sums; see exact_rr.c for the error
 * bounds.  The fields are private to exact_rr.c: the accountant only
 * zero-initializes the struct, passes it to the functions below and may
 * read `loose`. */

/* One checkpoint of a binomial's window (exact_rr.c). */
typedef struct dpa_rr_ckpt {
    long double w;     /* weight at the checkpoint */
    long double A, G;  /* suffix sums from the checkpoint up to the window's end */
    double Ae, Ge;     /* their absolute error bounds (rounded up) */
} dpa_rr_ckpt;

/* One distinct eps with its total count. */
typedef struct dpa_rr_dist {
    double eps, k;              /* eps > 0 (finite), integer count k >= 1 */
    long double E, E2, E2b;     /* e^eps, e^{-2 eps}, e^{-2 eps bk} */
    long double th;             /* tanh(eps / 2) (Chernoff fallback) */
    long double c1;             /* relative error bound per recurrence step */
    double md, lo, hi, bk;      /* mode (walk origin), window, block length */
    size_t nup, ndn;            /* checkpoints at md + j bk (j < nup), md - (j+1) bk (j < ndn) */
    dpa_rr_ckpt *up, *dn;
    long double Z, Zerr, T;     /* window sum, its error bound, bound on the weight outside */
} dpa_rr_dist;

typedef struct dpa_rr_comp {
    size_t m;                   /* distinct eps > 0 */
    dpa_rr_dist *d;             /* m of them; d[m-1] has the largest window (the inner sum) */
    long double inf_lo, inf_up; /* enclosure of the +inf mass 1 - P */
    long double keep_lo, keep_up; /* enclosure of P */
    long double *Lrest;         /* Lrest[i] >= sum_{j >= i} eps_j k_j (m + 1 entries) */
    double tmax;                /* a double >= the largest finite loss sum_j eps_j k_j */
    /* 1 when the exact sum would need more than 2^27 lattice points (one
     * distinct eps with a huge count, e.g. 1e15 steps): the bounds are then
     * still certified, but the upper bound of F is a Chernoff bound
     *   F(t) <= E[e^{lam S}] e^{-lam t} lam^lam / (1 + lam)^(1 + lam)
     * minimised over lam > 0, and the lower bound a partial lattice sum (at
     * most 2^14 terms) or a Chernoff bound on the complement, so the bracket
     * may be far wider than the accuracy target.  The accountant should say
     * so (accuracy_met = 0 follows from the gap in most cases, but the flag
     * says why). */
    int loose;
} dpa_rr_comp;

struct dpa_leafset;
/* 1 if the leaf set is an unsampled (eps, delta) composition (all_rr, every
 * rr_eps finite and >= 0, every rr_delta in [0, 1]) that this method
 * evaluates: always for at most one distinct eps > 0 (huge counts get the
 * loose fallback above), and for several when the windows (binomial mass
 * beyond them below 2^-1120 of the mode's) cost at most DPA_RR_MAX_LATTICE
 * points per query: the product of all windows but the largest, times the
 * largest one's block length (1 up to 2^18 points). */
int dpa_rr_applicable(const struct dpa_leafset *L);
/* Group the leaves of an all_rr leaf set by eps and build the tables.
 * *c must be zeroed; dpa_rr_free releases it, also after a failure.
 * DPA_ENOMEM (out of memory, or a window far larger than estimated),
 * DPA_EUNSUPPORTED (not applicable). */
dpa_status dpa_rr_build(dpa_rr_comp *c, const struct dpa_leafset *L, dpa_error *err);
/* Free everything and zero the struct. */
void dpa_rr_free(dpa_rr_comp *c);

/* Largest number of window points (outer lattice points times the inner
 * block length) summed per delta evaluation. */
#define DPA_RR_MAX_LATTICE 2e5

/* Certified bracket *lo <= delta(t) <= *up (LT Thm 4.6), for any finite t;
 * never NaN, 0 <= *lo <= *up <= 1. */
void dpa_rr_delta(const dpa_rr_comp *c, double t, double *up, double *lo);

/* Smallest eps >= 0 with delta(eps) <= delta, bracketed: both +inf only
 * when delta is certainly below the +inf mass 1 - P; when delta is within
 * the +inf mass's round-off (about 1e-18 relative) of it, *up = +inf and
 * *lo finite; at delta = 1 - P exactly (computed exactly for a single step)
 * the eps is the largest finite loss. */
void dpa_rr_epsilon(const dpa_rr_comp *c, double delta, double *up, double *lo);

#endif

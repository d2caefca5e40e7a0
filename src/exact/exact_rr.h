/* Closed-form accountant for compositions of (eps, delta)-DP steps.
 * SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef DPA_EXACT_RR_H
#define DPA_EXACT_RR_H

#include <stddef.h>
#include "dpacct/status.h"

/* A composition of k_i copies of RR_{eps_i, delta_i} (the dominating pair of
 * an (eps_i, delta_i)-DP step, LT Thm 4.5), grouped by distinct eps_i > 0,
 * and more generally of "two-point" pairs: pairs whose loss takes two finite
 * values w_hi > w_lo (any reals) plus possibly +inf (A-mass only) and -inf
 * (B-mass only), such as a Poisson-subsampled pure/RR step in either
 * direction.  Identical two-point factors are grouped like equal eps.
 * The composed loss is +inf with probability 1 - P, P = prod_j F_j^{k_j}
 * (F_j = 1 - A_j(+inf); for RR F_j = 1 - delta_j), and otherwise
 * S = sum_i (Y_i w_hi,i + (k_i - Y_i) w_lo,i) with independent
 * Y_i ~ Bin(k_i, p_i), p_i the A-probability of w_hi,i within the finite
 * part (RR: w = +-eps_i, p_i = e^{eps_i} / (1 + e^{eps_i}); LT Thm 4.6
 * unrolled; LT Cor 4.7 for one eps), so
 *   delta(t) = 1 - P + P F(t),   F(t) = E[(1 - e^{t - S})_+].
 *
 * Every binomial is represented on a window [lo, hi] around its mode by
 * weights w(y) relative to w(mode) = 1 (ratio recurrence in long double),
 * with checkpoint tables of suffix sums; see exact_rr_binom.c and the
 * other exact_rr*.c files for the error bounds.  The fields are private to
 * the exact_rr*.c files: the accountant only
 * zero-initializes the struct, passes it to the functions below and may
 * read `loose`. */

/* One checkpoint of a binomial's window (exact_rr_binom.c). */
typedef struct dpa_rr_ckpt {
    long double w;     /* weight at the checkpoint */
    long double A, G;  /* suffix sums from the checkpoint up to the window's end */
    double Ae, Ge;     /* their absolute error bounds (rounded up) */
} dpa_rr_ckpt;

/* One distinct factor (an eps, or a two-point pair) with its total count. */
typedef struct dpa_rr_dist {
    int gen;                    /* 0: RR (w = +-eps), 1: general two-point factor */
    double eps, k;              /* RR: eps > 0 (finite); integer count k >= 1 */
    double whi, wlo;            /* the two finite losses (RR: eps, -eps) */
    long double D;              /* w_hi - w_lo rounded (RR: 2 eps, exact) */
    long double E, E2, E2b;     /* ratio p/(1-p) (RR: e^eps), e^{-D}, e^{-D bk} */
    long double eE, e2r, e2br;  /* their relative error bounds (RR: E_F each) */
    long double grel;           /* relative error bound of x - S(y) (RR: u) */
    long double th;             /* tanh(eps / 2) (Chernoff fallback, RR only) */
    long double c1;             /* relative error bound per recurrence step */
    double md, lo, hi, bk;      /* mode (walk origin), window, block length */
    size_t nup, ndn;            /* checkpoints at md + j bk (j < nup), md - (j+1) bk (j < ndn) */
    dpa_rr_ckpt *up, *dn;
    long double Z, Zerr, T;     /* window sum, its error bound, bound on the weight outside */
} dpa_rr_dist;

typedef struct dpa_rr_comp {
    size_t m;                   /* distinct factors (eps > 0 or two-point pairs) */
    dpa_rr_dist *d;             /* m of them; d[m-1] has the largest window (the inner sum) */
    int sym;                    /* every factor is RR (symmetric: closed forms for t <= -L) */
    long double inf_lo, inf_up; /* enclosure of the +inf mass 1 - P */
    long double keep_lo, keep_up; /* enclosure of P */
    long double *Lrest;         /* Lrest[i] >= sum_{j >= i} w_hi,j k_j (m + 1 entries) */
    double tmax;                /* a double >= max(0, the largest finite loss sum_j w_hi,j k_j) */
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
    /* the same composition with every two-point ratio and loss at the
     * bottom of its representation range (lower bounds; this one has them at
     * the top); NULL when there is no two-point factor.  Owned. */
    struct dpa_rr_comp *rep_lo;
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

/* The two-point generalization (both directions of an add/remove
 * composition).  1 if every leaf of L is either an (eps, delta) leaf
 * (rr_eps set, as for dpa_rr_applicable; also the accountant's synthetic
 * leaves with pair == NULL) or a plain leaf (inner == NULL) whose pair is
 * atom-only (kind DPA_PAIR_ATOMS, no continuous part, no truncation slack)
 * with at most two finite atoms carrying mass (each with both masses > 0),
 * plus optional atoms at +inf (A-mass only) and -inf (B-mass only), and the
 * cost limit above holds in both directions.  A single two-point factor
 * with a huge count has no Chernoff fallback: its window must stay below
 * 2^27 points (k p (1 - p) up to about 3e12).  Refused as well:
 * non-integer counts, finite losses above 1e300 in magnitude, and two
 * finite losses closer than 64 u_d of the larger one.
 *
 * The pair is taken as built, up to the representation of its atoms: the
 * true A-masses within a relative DPA_RR_REP_ULPS u_d (1 + |la|) of the
 * atoms' exp(la), the true finite losses within DPA_RR_LOSS_ULPS u_d |w| of
 * the atoms' w (u_d = 2^-53; measured against MPFR: at most 2.6 and 4.6
 * for the Poisson-subsampled RR pairs with rate <= 0.9), and the bounds
 * hold for every pair in that range (exact_rr_binom.c, section 1b). */
int dpa_rr_applicable_dir(const struct dpa_leafset *L);
/* Build for one direction: dir 0 the leaves' pairs as given (remove), dir 1
 * their reversals (B, A) (add); (eps, delta) leaves are the same in both.
 * The profile of the composition under add/remove adjacency is the maximum
 * of the two.  Same contract as dpa_rr_build; DPA_EUNSUPPORTED when
 * dpa_rr_applicable_dir would return 0, DPA_EINVAL for dir not 0 or 1. */
dpa_status dpa_rr_build_dir(dpa_rr_comp *c, const struct dpa_leafset *L, int dir, dpa_error *err);
/* Assumed bounds on the representation error of a two-point pair's atoms
 * (see dpa_rr_applicable_dir): a stored log mass la within
 * DPA_RR_REP_ULPS u_d (1 + |la|) of the log of the true mass, a stored
 * finite loss w within DPA_RR_LOSS_ULPS u_d |w| of the true loss (u_d =
 * 2^-53).  0 makes the stored values exact by definition. */
#define DPA_RR_REP_ULPS 8
#define DPA_RR_LOSS_ULPS 8

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

/* ------------- heterogeneous epsilons (exact_rr_het*.c, section 7) -------------
 *
 * Compositions of (eps, delta) steps whose distinct epsilons share no
 * lattice the sum above can afford (e.g. 10^4 steps with 10^4 distinct
 * eps).  A certified bracket, not the exact value: on the lattice h Z (h a
 * power of 2) the upper bound is the profile of a dominating pair (every
 * RR_eps replaced by the revealed-coin mixture of RR_a and RR_{a+h},
 * a = floor(eps/h) h, that RR_eps is a post-processing of), the lower bound
 * that of a dominated one (the composition's output garbled to
 * sum round(eps/h) h X); both are lattice laws whose characteristic
 * functions are products of closed forms, summed exactly over a window by a
 * finite Fourier identity, every frequency whose modulus is not certified
 * below 2^-100 evaluated.  The gap is second order in h: h is chosen from
 * an estimate and refined (halved, rebuilt) by the queries until the
 * bracket is within `rel` (relative, eps queries: of max(1, eps); delta
 * queries: of delta, plus 1e-14), unless the work budget of a build
 * (~1e8 evaluations) or the round-off floor (about 1e-16 absolute in
 * delta) stops it.  The +inf mass is that of section 4.  Not thread safe
 * (queries may rebuild); no global state. */
typedef struct dpa_rr_het dpa_rr_het;

/* default relative target of the bracket */
#define DPA_RR_HET_REL 1e-6

/* 1 if the leaf set is an (eps, delta) composition the heterogeneous method
 * takes: all_rr, every eps in [0, 1e3] with at least one > 0, every delta
 * in [0, 1], integer counts in [1, DPA_MAX_COUNT].  Cheap (no allocation). */
int dpa_rr_het_applicable(const struct dpa_leafset *L);
/* Build (the first lattice) for relative target rel (<= 0: DPA_RR_HET_REL).
 * DPA_EUNSUPPORTED outside the domain, DPA_ENOMEM. */
dpa_status dpa_rr_het_new(const struct dpa_leafset *L, double rel, dpa_rr_het **out, dpa_error *err);
void dpa_rr_het_free(dpa_rr_het *c);
/* Certified *lo <= delta(t) <= *up, for any t (refines the lattice when the
 * bracket is wider than the target); 0 <= *lo <= *up <= 1. */
void dpa_rr_het_delta(dpa_rr_het *c, double t, double *up, double *lo);
/* Certified *lo <= eps(delta) <= *up (both +inf when delta is below the
 * +inf mass); refines like dpa_rr_het_delta. */
void dpa_rr_het_epsilon(dpa_rr_het *c, double delta, double *up, double *lo);
/* The current lattice step h. */
double dpa_rr_het_step(const dpa_rr_het *c);

#endif

/* Dominating pairs, described by the law of their privacy loss.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A pair (A, B) in one direction is described by the privacy loss
 * W = log(dA/dB): a finite list of atoms plus an absolutely continuous part
 * given by its tail functions.  Everything the accountants need is a function
 * of these (LT eq 20):
 *   delta(eps) = A(W > eps) - e^eps B(W > eps)          (including A's atom at +inf)
 * Mechanisms build base pairs; subsampling (§4), reversal (LT eq 7)
 * and the replace-one symmetrization (CF Prop 29 / Cor 31, GDP Thm 4.2) are
 * transforms that build new pairs from a base pair.
 *
 * All masses are stored as natural logarithms (-INFINITY for 0).
 */
#ifndef DPA_PAIR_H
#define DPA_PAIR_H

#include <stddef.h>
#include "dpacct/status.h"

typedef struct dpa_atom {
    double w;   /* loss value; +INFINITY (then lb = -inf) or -INFINITY (then la = -inf) allowed */
    double la;  /* log A({W = w}) */
    double lb;  /* log B({W = w}) */
} dpa_atom;

typedef enum dpa_pair_kind {
    DPA_PAIR_ATOMS,     /* atoms only, no continuous part */
    DPA_PAIR_GAUSSIAN,  /* W ~ N(mu^2/2, mu^2) under A; par[0] = mu > 0 */
    DPA_PAIR_LAPLACE,   /* continuous part of Laplace; par[0] = eps0 = s/b > 0 */
    DPA_PAIR_POISSON,   /* remove-direction Poisson subsampling of base; par[0] = q in (0,1) */
    DPA_PAIR_REVERSE,   /* (B, A) of base */
    DPA_PAIR_SYMMETRIZE, /* replace-one symmetrization of base about W = 0 */
    DPA_PAIR_MIXGAUSS,  /* Gaussian mixture: A_c = sum_i e^{mix[n+i]} N(mix[i], 1), B = N(0, 1);
                         * mix[0..n-1] = mu_i >= 0 ascending, the largest > 0; n = nmix */
    DPA_PAIR_LABELLED   /* labelled mixture of pairs: with probability e^{lwpart[i]} the pair
                         * parts[i] (both A and B), the label revealed: A = sum_i w_i A_i x {i},
                         * B = sum_i w_i B_i x {i}; the loss law is the w-mixture of the parts' */
} dpa_pair_kind;

typedef struct dpa_pair dpa_pair;

/* The operations of a kind whose tails are computed in the kind's own file
 * (MIXGAUSS in mixture_gaussian.c, LABELLED in labelled.c), set by that
 * kind's constructor.  The generic functions of pair.c reach them only
 * through this table, so those files call pair.c and never the reverse. */
typedef struct dpa_pair_ops {
    /* dpa_pair_ctail's contract */
    void (*ctail)(const dpa_pair *p, double t, double out[4]);
    /* dpa_pair_var_estimate's contract */
    double (*var_estimate)(const dpa_pair *p);
    /* an interval containing the continuous part's finite loss values
     * (unrounded: dpa_pair_loss_range widens it) */
    void (*cont_range)(const dpa_pair *p, double *clo, double *chi);
} dpa_pair_ops;

struct dpa_pair {
    dpa_pair_kind kind;
    double par[2];
    dpa_pair *base;       /* owned; for transforms */
    dpa_atom *atoms;      /* owned; sorted by w ascending */
    size_t natoms;
    /* total continuous masses under A and B (log); -inf if no continuous part */
    double lca, lcb;
    /* Upper bounds on A-mass omitted when the atom list was truncated (linear):
     * slack_hi above the largest atom, slack_lo below the smallest. */
    double slack_hi, slack_lo;
    int symmetric;        /* 1 if (A,B) and (B,A) have the same loss law */
    /* kind-specific values precomputed by the constructor: POISSON:
     * log q and log1p(-q) (the tails evaluate them at every cell) */
    double pre[2];
    /* MIXGAUSS: the components (owned): mu_i then log weights, 2 nmix values */
    double *mix;
    size_t nmix;
    /* LABELLED: the parts (owned) and their log weights (owned), nparts of each */
    dpa_pair **parts;
    double *lwpart;
    size_t nparts;
    /* MIXGAUSS, LABELLED: the kind's operations (a static table); NULL otherwise */
    const dpa_pair_ops *ops;
};

/* Continuous-part tails at finite t (strict and non-strict coincide):
 * out[0] = log A_c(W > t), out[1] = log A_c(W < t),
 * out[2] = log B_c(W > t), out[3] = log B_c(W < t).
 * All -inf if the pair has no continuous part. */
void dpa_pair_ctail(const dpa_pair *p, double t, double out[4]);

/* Full tails including atoms (and A's atom at +inf in the A(W > t) term):
 * out[0] = log A(W > t), out[1] = log B(W > t). t finite. */
void dpa_pair_tail_gt(const dpa_pair *p, double t, double out[2]);

/* log delta(eps) = log H_{e^eps}(A || B), exact (LT eq 20); -inf if 0.
 * eps finite. */
double dpa_pair_log_delta(const dpa_pair *p, double eps);

/* log A(W = +inf). */
double dpa_pair_log_inf(const dpa_pair *p);

void dpa_pair_free(dpa_pair *p);

/* Sort p's atoms by loss, ascending (insertion sort: cheap for the nearly
 * sorted lists of binned constructions). */
void dpa_pair_sort_atoms(dpa_pair *p);

/* A zeroed pair of the given kind with room for natoms atoms (natoms set,
 * no continuous part: lca = lcb = -inf).  NULL + DPA_ENOMEM on failure. */
dpa_pair *dpa_pair_alloc(dpa_pair_kind kind, size_t natoms, dpa_error *err);

/* ---- constructors (return NULL and set err on failure) ---- */
/* The non-private pair: loss +inf with probability 1 (delta(eps) = 1 for all
 * eps).  Limit of mechanisms whose noise is negligible in double precision. */
dpa_pair *dpa_pair_nonprivate(dpa_error *err);
/* Gaussian mu above this is treated as the non-private pair: delta then
 * differs from 1 by less than e^{-mu^2/8} < e^{-1e299} for eps below mu^2/4. */
#define DPA_MU_NONPRIVATE 1e150
/* Gaussian with mu = sensitivity/sigma >= 0 (mu = 0: the trivial pair; mu
 * above DPA_MU_NONPRIVATE, +inf included: the non-private pair). */
dpa_pair *dpa_pair_gaussian(double mu, dpa_error *err);
/* Laplace: scale b, sensitivity s (pair Lap(0,b) vs Lap(s,b)). */
dpa_pair *dpa_pair_laplace(double scale, double sensitivity, dpa_error *err);
/* Randomized response RR_{eps,delta} (LT Thm 4.5); pure eps-DP is delta = 0. */
dpa_pair *dpa_pair_rr(double eps, double delta, dpa_error *err);
/* k-ary randomized response (integer k >= 2; k = 2 is dpa_pair_rr(eps, 0)):
 * the pair of the report given the true bucket x against x' (one person's
 * value changed): loss +eps w.p. e^eps/(e^eps+k-1) (output x), -eps w.p.
 * 1/(e^eps+k-1) (output x'), 0 w.p. (k-2)/(e^eps+k-1) under A; symmetric. */
dpa_pair *dpa_pair_rr_k(double eps, double k, dpa_error *err);
/* k-ary randomized response under REPLACE_SPECIAL (k >= 2 integer): the
 * report on x against the uniform report on the special record: loss
 * log k + eps - log(e^eps + k - 1) (A-mass e^eps/(e^eps+k-1)) and
 * log k - log(e^eps + k - 1) (A-mass (k-1)/(e^eps+k-1)); asymmetric. */
dpa_pair *dpa_pair_rr_special(double eps, double k, dpa_error *err);
/* The pair of a privacy loss table (privacy_loss events): atoms at the n
 * losses (ascending, distinct, finite) with A-masses mass[i] and B-masses
 * mass[i] e^-loss[i], A's remaining mass 1 - sum mass at +inf, B's
 * remaining mass at -inf (each only if positive).  Asymmetric in general
 * (symmetric when the table equals its own reversal). */
dpa_pair *dpa_pair_table(const double *loss, const double *mass, size_t n, dpa_error *err);
/* The pair of a privacy_profile event (docs/mechanisms.md §1): a mechanism
 * (eps[i], delta[i])-DP for every i, in both directions (eps in [0, 700],
 * delta in [0, 1], any order).  Atoms at the losses +-eps[i] of the vertices
 * of the convex envelope of the points in s = e^eps, A-mass min delta at
 * +inf, B's remainder at -inf; its profile is at least the envelope
 * everywhere (masses rounded to that side) and equal to it up to a few
 * units in the last place.  Marked symmetric. */
dpa_pair *dpa_pair_profile(const double *eps, const double *delta, size_t n, dpa_error *err);
/* A mixture of Gaussians (docs/mechanisms.md §2): output y ~ N(c_i, s^2)
 * with probability p_i under A, N(0, s^2) under B; given as mu_i = c_i / s
 * >= 0 finite and weights w_i >= 0 (n >= 1; sum w_i <= 1 + 1e-12), and
 * inf_mass >= 0: A-mass put at loss +inf, a sound stand-in for omitted
 * components (the caller bounds their mass; it is not inferred from
 * 1 - sum w_i).  Components with mu_i = 0 are kept in the continuous part
 * (the loss is then bounded below by log of their weight); if no mu_i > 0
 * the pair is atoms only.  The loss is increasing in y, so W > t iff
 * y > y(t), found by safeguarded Newton steps; tails are sums of normal
 * tails at y(t). */
dpa_pair *dpa_pair_mixgauss(const double *mu, const double *w, size_t n, double inf_mass, dpa_error *err);
/* The labelled mixture of n >= 1 pairs (docs/mechanisms.md §3): with
 * probability w[i] the mechanism's pair is parts[i], and which one is
 * known to the adversary (a label independent of the data), so
 *   H_s(A || B) = sum_i w[i] H_s(A_i || B_i)   and the same for (B, A).
 * It dominates the unlabelled mixture sum_i w_i (A_i, B_i) in both
 * directions (joint convexity of H_s).  w[i] > 0 summing to 1 up to
 * n 2^-52.  Takes ownership of every part in every case.  The parts'
 * atoms are listed (merged) in the pair's own atom list; the continuous
 * tails are the weighted sums of the parts'.
 * Symmetric if every part is.  n = 1 returns parts[0]. */
dpa_pair *dpa_pair_labelled(dpa_pair **parts, const double *w, size_t n, dpa_error *err);
/* The truncated Poisson subsampled Gaussian (truncated_poisson events,
 * docs/mechanisms.md §3): n records (the accounted one included), each
 * kept with probability q in (0, 1], batches cut to max_batch >= 1 at
 * random, a sum query with mu = sensitivity/sigma > 0.  The labelled
 * mixture of (Poisson q over Gaussian mu) with weight 1 - p_T and
 * (Poisson q_T over Gaussian 2 mu) with weight p_T,
 *   p_T = P(Bin(n - 1, q) >= max_batch),  q_T = max_batch P(Bin(n, q) > max_batch) / (n p_T).
 * Integers n, max_batch in [1, DPA_MAX_TRUNC_N]. */
dpa_pair *dpa_pair_truncated_poisson(double q, double max_batch, double n, double mu, dpa_error *err);
/* The two truncation probabilities above, in long double: *pt = p_T and
 * *qt = q_T (0 when p_T = 0); DPA_EUNSUPPORTED if the binomial tails
 * need more than DPA_TRUNC_MAX_TERMS terms. */
#define DPA_TRUNC_MAX_TERMS 20000000.0
dpa_status dpa_truncation_probs(double q, double max_batch, double n, long double *pt, long double *qt,
                                dpa_error *err);
/* An epsilon-bounded-range mechanism (exponential_mechanism events,
 * docs/mechanisms.md §4): a symmetric atoms pair whose profile is at
 * least (1 - e^{-(eps - e')/2})^2 / (1 - e^{-eps}) for e' in [0, eps]
 * (0 above), the worst case over eps-BR pairs (Dong, Durfee & Rogers
 * 2020), above it by at most the chord gap of DPA_BR_POINTS points,
 * (eps / (DPA_BR_POINTS - 1))^2 / (16 (1 - e^{-eps})) (bounded_range.c).  eps >= 0 finite;
 * eps = 0: the identity pair; above DPA_MAX_PROFILE_EPS: RR_eps (it is
 * eps-DP, which dominates). */
dpa_pair *dpa_pair_bounded_range(double eps, dpa_error *err);
/* Points of the profile grid of dpa_pair_bounded_range. */
#define DPA_BR_POINTS 2048
/* log of that profile bound at e' (finite; -inf for e' >= eps), an upper
 * bound in long double (its own few-ulp error allowed for). */
long double dpa_br_log_delta(double eps, double e1);
/* A pair dominated by K-of-T random allocation of a Gaussian step with
 * mu = sensitivity/sigma > 0 (remove direction): the law of the largest of
 * the T outputs, binned, its masses rounded to the safe side
 * (allocation_max.c; docs/sampling.md §4).  Integers 1 <= K <= T <= 1e6. */
dpa_pair *dpa_pair_allocation_max(double mu, double T, double K, dpa_error *err);
/* The Poisson(q)-subsampled Gaussian under replace-one neighbours, each
 * record's vector of norm <= m in noise units (m = C / sigma; docs/sampling.md
 * §5), q in (0, 1), m in (0, 1e6] (poisson_replace.c).  _upper: a symmetric
 * atoms pair that dominates the mechanism (the profile bound of advanced joint
 * convexity, BBG18 Thm 2, on a grid of eps, through dpa_pair_profile);
 * _lower: a symmetric atoms pair dominated by it (the antipodal instance
 * (1-q) N(0) + q N(+-m), binned, masses rounded to the safe side). */
dpa_pair *dpa_pair_poisson_replace_upper(double q, double m, dpa_error *err);
dpa_pair *dpa_pair_poisson_replace_lower(double q, double m, dpa_error *err);
/* Discrete Laplace, scale b > 0, integer sensitivity s >= 1. */
dpa_pair *dpa_pair_discrete_laplace(double scale, double sensitivity, dpa_error *err);
/* Discrete Gaussian N_Z(s, sigma^2) vs N_Z(0, sigma^2). */
dpa_pair *dpa_pair_discrete_gaussian(double sigma, double sensitivity, dpa_error *err);
/* The same noise conditioned on [-truncation, truncation] (an integer in
 * [0, DPA_MAX_DG_TRUNCATION]; DPA_DG_UNTRUNCATED: the pair above): atoms
 * at the finite losses of [s - T, T], A's mass on (T, s + T] at +inf and
 * B's on [-T, s - T) at -inf; the non-private pair when 2T < s.  Symmetric. */
dpa_pair *dpa_pair_discrete_gaussian_truncated(double sigma, double sensitivity, double truncation, dpa_error *err);

/* ---- transforms (take ownership of base in every case) ---- */
/* Remove direction of Poisson subsampling at rate q in (0, 1]:
 * (qA + (1-q)B, B) (LT Thm 5.1).  q = 1 returns base. */
dpa_pair *dpa_pair_poisson(dpa_pair *base, double q, dpa_error *err);
/* The Poisson loss map W_q = log(q e^W + 1 - q) (LT Thm 5.1), accurate to
 * a few u relative for every W (log1p(q expm1(W)) for W <= 700). */
double dpa_poisson_loss(double q, double w);
/* (B, A): W -> -W (LT eq 7).  A symmetric base is returned as is. */
dpa_pair *dpa_pair_reverse(dpa_pair *base, dpa_error *err);
/* The symmetric pair whose profile is delta_base(eps) for eps >= 0 and
 * its reversal for eps < 0 (CF Cor 31; GDP Thm 4.2's C_p for symmetric f). */
dpa_pair *dpa_pair_symmetrize(dpa_pair *base, dpa_error *err);
/* Deep copy. */
dpa_pair *dpa_pair_copy(const dpa_pair *p, dpa_error *err);

/* A rough variance of the loss under A (a scale for choosing grids, not a
 * bound): mu^2 for the Gaussian, exact for atoms, q^2 (e^{v} - 1) through
 * Poisson subsampling. */
double dpa_pair_var_estimate(const dpa_pair *p);

/* Atoms with |loss| above this are left outside every grid window and
 * treated as tail mass by the discretizer (+inf for upper measures, rounded
 * down to the window for lower ones): grid indices must stay exact doubles. */
#define DPA_GRID_LOSS_MAX 1e9

/* ---- loss range ---- */
/* An interval [*wmin, *wmax] (rounded outwards) containing every finite
 * loss value of the pair's listed atoms and continuous part (the finite
 * parts of A and B have the same support): +-INFINITY where there is no
 * finite bound (a Gaussian part).  Atoms omitted from a truncated list
 * (slack_lo/slack_hi) may lie outside.  For eps >= wmax, delta(eps) is at
 * most dpa_pair_inf_bound(p), which counts A's omitted mass above as +inf;
 * the reversed pair's range is [-wmax, -wmin] (its omitted low atoms are
 * not bounded by slack_lo, which is an A-mass). */
void dpa_pair_loss_range(const dpa_pair *p, double *wmin, double *wmax);
/* An upper bound (linear) on A's mass above the largest finite loss: the
 * atom at +inf plus the omitted mass slack_hi. */
double dpa_pair_inf_bound(const dpa_pair *p);

/* ---- support helpers ---- */
/* An interval [*lo, *hi] of finite loss values outside which the A-mass of
 * the finite part is at most tau on each side (continuous part via tails,
 * atoms by cumulative mass); with both = 1 the B-mass too (needed when the
 * reversed pair is built from the same cells).  tau in (0, 1e-3]. */
dpa_status dpa_pair_support(const dpa_pair *p, double tau, int both, double *lo, double *hi, dpa_error *err);

#endif

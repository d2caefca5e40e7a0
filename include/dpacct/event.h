/* dpacct — the event tree: what a program did with private data.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * An event is an immutable tree of mechanism leaves and combinators
 * (compose, repeat, Poisson subsampling, sampling without replacement).
 * A spec is an event plus the neighbouring relation.  Both have a JSON form
 * (see docs/spec.md):
 *
 *   {"repeat": {"count": 14063, "event": {"poisson": {"rate": 0.0042666667,
 *        "event": {"gaussian": {"sigma": 1.1}}}}}, "neighboring": "add_remove"}
 *
 * Ownership: constructors that take child events take ownership of them in
 * every case (on failure the children are freed too), so a caller never frees
 * a child it passed in.  dpa_event_free(NULL) and dpa_spec_free(NULL) are no-ops.
 * Errors: constructors return NULL and fill err with DPA_EINVAL and a message
 * naming the parameter and the violated domain (DPA_ENOMEM on allocation failure).
 */
#ifndef DPACCT_EVENT_H
#define DPACCT_EVENT_H

#include <stddef.h>
#include <stdint.h>
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum dpa_event_kind {
    DPA_EV_GAUSSIAN,            /* sigma > 0, sensitivity > 0 (default 1) */
    DPA_EV_LAPLACE,             /* scale > 0, sensitivity > 0 (default 1) */
    DPA_EV_DISCRETE_LAPLACE,    /* scale > 0, integer sensitivity >= 1 (default 1) */
    DPA_EV_DISCRETE_GAUSSIAN,   /* 0 < sigma <= 1e5, integer sensitivity >= 1 (default 1),
                                 * optional integer truncation T in [0, 1e9] (noise
                                 * conditioned on [-T, T]; DPA_DG_UNTRUNCATED if absent) */
    DPA_EV_RANDOMIZED_RESPONSE, /* epsilon >= 0, integer buckets k >= 2 (default 2: binary RR,
                                 * p = e^eps/(1+e^eps); k-ary: p = e^eps/(e^eps+k-1)) */
    DPA_EV_PURE,                /* epsilon >= 0 */
    DPA_EV_APPROX,              /* epsilon >= 0, delta in [0, 1] */
    DPA_EV_ZCDP,                /* rho >= 0 */
    DPA_EV_GDP,                 /* mu >= 0 */
    DPA_EV_COMPOSE,             /* >= 1 children */
    DPA_EV_REPEAT,              /* integer count >= 1, one child */
    DPA_EV_POISSON,             /* rate in (0, 1], one child */
    DPA_EV_SAMPLE,              /* integers 1 <= m <= n, one child */
    DPA_EV_NO_OP,               /* no parameters: a step that reveals nothing (eps = 0) */
    DPA_EV_NON_PRIVATE,         /* no parameters: a step with no privacy at all (eps = inf) */
    DPA_EV_PRIVACY_LOSS,        /* a mechanism given by its privacy loss distribution (a table) */
    DPA_EV_PRIVACY_PROFILE,     /* a mechanism given by points (eps_i, delta_i) of its privacy profile */
    DPA_EV_MIXTURE_OF_GAUSSIANS,/* sigma > 0; sensitivities c_i >= 0 with probabilities p_i (a table) */
    DPA_EV_SAMPLE_WITH_REPLACEMENT, /* integers n >= 1, m >= 1; one gaussian or gdp child */
    DPA_EV_TRUNCATED_POISSON,   /* rate in (0, 1], integers max_batch >= 1, n >= 1; one gaussian or gdp child */
    DPA_EV_EXPONENTIAL_MECHANISM, /* epsilon >= 0: an epsilon-bounded-range selection */
    DPA_EV_PERMUTE_AND_FLIP,    /* epsilon >= 0: epsilon-DP */
    DPA_EV_REPORT_NOISY_MAX,    /* epsilon >= 0, noise (dpa_rnm_noise) */
    DPA_EV_TREE_AGGREGATION,    /* sigma > 0, integer steps >= 1, sensitivity > 0 (default 1) */
    DPA_EV_REPEAT_AND_SELECT,   /* mean >= 1, shape >= 0 or Poisson; one child; a Renyi bound only */
    DPA_EV_LAPLACE_SVT,         /* scale > 0, integers 1 <= c <= k; a Renyi bound only */
    DPA_EV_GAUSSIAN_SVT,        /* sigma > 0, integers 1 <= c <= k; a Renyi bound only */
    DPA_EV_RANDOM_ALLOCATION    /* integers 1 <= selected <= steps <= DPA_MAX_RA_STEPS; one child */
} dpa_event_kind;

/* The noise of report_noisy_max (JSON "gumbel", "laplace", "exponential"). */
typedef enum dpa_rnm_noise {
    DPA_RNM_GUMBEL = 0,     /* = the exponential mechanism: epsilon-bounded range */
    DPA_RNM_LAPLACE = 1,    /* epsilon-DP (pure) */
    DPA_RNM_EXPONENTIAL = 2 /* = permute-and-flip: epsilon-DP (pure) */
} dpa_rnm_noise;

typedef enum dpa_neighboring {
    DPA_ADD_REMOVE = 0, /* default */
    DPA_REPLACE = 1,
    /* dp_accounting's REPLACE_SPECIAL: one record replaced by a special record
     * (docs/spec.md): the add_remove analysis (the special record contributes
     * nothing to a noisy sum), except randomized_response, whose pair is the
     * report on the record against the report on the special record, a
     * uniform bucket; sampling schemes whose size counts the record refused */
    DPA_REPLACE_SPECIAL = 2
} dpa_neighboring;

typedef struct dpa_event dpa_event;
typedef struct dpa_spec dpa_spec;

/* Largest accepted repeat count (counts are exact integers in a double). */
#define DPA_MAX_COUNT 1e15
/* Largest accepted discrete Gaussian sigma (its atoms are enumerated). */
#define DPA_MAX_DISCRETE_GAUSSIAN_SIGMA 1e5
/* discrete_gaussian's "truncation" when it is absent (the untruncated noise,
 * dpa_event_get_param gives this value), and the largest accepted one. */
#define DPA_DG_UNTRUNCATED (-1.0)
#define DPA_MAX_DG_TRUNCATION 1e9
/* privacy_loss tables: most points, largest |loss|, allowed excess of the
 * mass sums over 1 */
#define DPA_MAX_TABLE_POINTS 1000000
#define DPA_MAX_TABLE_LOSS 700.0
#define DPA_TABLE_SUM_SLACK 0x1p-52 /* per point: sums up to 1 + (n + 1) 2^-52 */
/* mixture_of_gaussians: most components */
#define DPA_MAX_MIXTURE_COMPONENTS 10000
/* privacy_profile points: largest epsilon (e^eps stays a finite double) */
#define DPA_MAX_PROFILE_EPS 700.0
/* Largest accepted number of buckets k of randomized response. */
#define DPA_MAX_RR_BUCKETS 1e12
/* truncated_poisson: largest accepted dataset size n and max_batch (the
 * binomial tails are summed term by term around their mode) */
#define DPA_MAX_TRUNC_N 1e12
/* Largest number of steps of one random_allocation epoch. */
#define DPA_MAX_RA_STEPS 1e6

/* ---- leaves ---- */
dpa_event *dpa_event_gaussian(double sigma, double sensitivity, dpa_error *err);
dpa_event *dpa_event_laplace(double scale, double sensitivity, dpa_error *err);
dpa_event *dpa_event_discrete_laplace(double scale, double sensitivity, dpa_error *err);
dpa_event *dpa_event_discrete_gaussian(double sigma, double sensitivity, dpa_error *err);
/* The discrete Gaussian conditioned on [-truncation, truncation] (integer in
 * [0, DPA_MAX_DG_TRUNCATION]; docs/mechanisms.md, "Truncated discrete
 * Gaussian"); truncation DPA_DG_UNTRUNCATED is dpa_event_discrete_gaussian. */
dpa_event *dpa_event_discrete_gaussian_truncated(double sigma, double sensitivity, double truncation,
                                                 dpa_error *err);
/* binary randomized response (k = 2) */
dpa_event *dpa_event_randomized_response(double epsilon, dpa_error *err);
/* k-ary randomized response: the true bucket with probability
 * e^eps / (e^eps + k - 1), each other one with 1 / (e^eps + k - 1);
 * integer k in [2, DPA_MAX_RR_BUCKETS] (docs/spec.md). */
dpa_event *dpa_event_randomized_response_k(double epsilon, double k, dpa_error *err);
dpa_event *dpa_event_pure(double epsilon, dpa_error *err);
dpa_event *dpa_event_approx(double epsilon, double delta, dpa_error *err);
dpa_event *dpa_event_zcdp(double rho, dpa_error *err);
/* {"zcdp": {"rho": rho, "xi": xi}}: (xi, rho)-zCDP, D_alpha(P||Q) <= xi + rho alpha
 * for every alpha > 1 (Bun & Steinke 2016 Def 1.1); rho, xi >= 0 and finite;
 * xi 0 is dpa_event_zcdp(rho). Only the rdp method and the rdp filter take it. */
dpa_event *dpa_event_zcdp_xi(double rho, double xi, dpa_error *err);
dpa_event *dpa_event_gdp(double mu, dpa_error *err);
/* {"no_op": {}}: releases nothing about the data (dropped from compositions) */
dpa_event *dpa_event_no_op(dpa_error *err);
/* {"non_private": {}}: releases the data itself; every composition with it
 * has eps = +inf at every delta < 1 (its loss is +inf with probability 1) */
dpa_event *dpa_event_non_private(dpa_error *err);
/* A mechanism given by its privacy loss distribution (remove direction):
 * n >= 1 finite losses loss[i] (|loss| <= DPA_MAX_TABLE_LOSS) with masses
 * mass[i] >= 0 under the first distribution P; the rest of P's mass,
 * 1 - sum mass, is at +inf (a loss of +inf).  The second distribution Q
 * has mass mass[i] e^-loss[i] at each point and the rest at -inf.  Both
 * sums may exceed 1 by at most (n + 1) DPA_TABLE_SUM_SLACK (the rounding of
 * n doubles that sum to 1); otherwise DPA_EINVAL (renormalize first).  The arrays are copied.
 * n <= DPA_MAX_TABLE_POINTS. */
dpa_event *dpa_event_privacy_loss(const double *loss, const double *mass, size_t n, dpa_error *err);
/* A mechanism known only to be (epsilon[i], delta[i])-DP for each of the
 * n >= 1 points (n <= DPA_MAX_TABLE_POINTS), in both directions (the usual
 * meaning of (eps, delta)-DP; for a one-sided profile give the larger of
 * the two directions' deltas).  epsilon[i] in [0, DPA_MAX_PROFILE_EPS],
 * delta[i] in [0, 1].  Accounted through the least private mechanism with
 * these guarantees: the pair whose profile is the convex envelope of the
 * points (docs/mechanisms.md §1), so every delta(epsilon[i]) it reports is
 * at most delta[i] up to the method's own error, and equal where the point
 * lies on the envelope.  The arrays are copied, sorted by epsilon; points
 * with equal epsilon keep the smallest delta. */
dpa_event *dpa_event_privacy_profile(const double *epsilon, const double *delta, size_t n, dpa_error *err);
/* Most points of a tradeoff_curve (its profile costs points x slopes). */
#define DPA_MAX_TRADEOFF_POINTS 10000
/* A mechanism known to be f-DP (GDP Def 2.2: for every ordered pair of
 * neighbours) for f the lower convex envelope of the n >= 1 points
 * (alpha[i], beta[i]) (n <= DPA_MAX_TRADEOFF_POINTS), completed by
 * (0, beta of the smallest alpha) and (1, 0).  Each point must lie in
 * [0, 1]^2 with beta <= 1 - alpha, and beta must not increase with alpha;
 * equal alphas keep the smallest beta.  Points sampled on a curved tradeoff
 * function stand for its chords (above it).  Returns the equivalent
 * privacy_profile event (the JSON leaf {"tradeoff_curve": {"points":
 * [[alpha, beta], ...]}} reads as it): the pair it accounts has tradeoff
 * function max{f, f^{-1}} (GDP Prop 2.1), its deltas rounded up
 * (docs/fdp.md §11).  The arrays are copied. */
dpa_event *dpa_event_tradeoff_curve(const double *alpha, const double *beta, size_t n, dpa_error *err);

/* A Gaussian mechanism whose sensitivity is random (dp_accounting's
 * MixtureOfGaussiansDpEvent): the query moves by c_i with probability
 * p_i and N(0, sigma^2) noise is added, so the remove-direction pair is
 * (sum_i p_i N(c_i, sigma^2), N(0, sigma^2)); the add direction is its
 * reversal.  sigma > 0 finite; n in [1, DPA_MAX_MIXTURE_COMPONENTS];
 * sensitivities c_i >= 0 finite; probabilities p_i in [0, 1] summing to 1
 * up to (n + 1) 2^-52 (they are divided by their sum).  Equal
 * sensitivities are merged, the table sorted; the arrays are copied.
 * Methods: pld (auto), rdp (an upper bound by Jensen's inequality, exact
 * for one component; docs/mechanisms.md §2). */
dpa_event *dpa_event_mixture_of_gaussians(double sigma, const double *sensitivities, const double *probabilities,
                                          size_t n, dpa_error *err);

/* ---- combinators (take ownership of children, see above) ---- */
/* children: array of n >= 1 events; the array itself stays the caller's. */
dpa_event *dpa_event_compose(dpa_event *const *children, size_t n, dpa_error *err);
dpa_event *dpa_event_repeat(double count, dpa_event *child, dpa_error *err);
dpa_event *dpa_event_poisson(double rate, dpa_event *child, dpa_error *err);
dpa_event *dpa_event_sample(double n, double m, dpa_event *child, dpa_error *err);
/* Random allocation (one epoch): the record takes part in exactly `selected`
 * of `steps` steps chosen uniformly at random (selected = 1: balls-in-bins);
 * each step runs child (a mechanism or a composition run on the same
 * batch).  Integers 1 <= selected <= steps <= DPA_MAX_RA_STEPS; add_remove
 * neighbouring only; epochs by repeat.  Methods: pld (and auto), which
 * bracket it (docs/sampling.md §4); the others refuse it. */
dpa_event *dpa_event_random_allocation(double steps, double selected, dpa_event *child, dpa_error *err);
/* Sampling with replacement (dp_accounting's SampledWithReplacementDpEvent):
 * a batch of m records drawn with replacement from n, so one record
 * appears K ~ Binomial(m, 1/n) times and a Gaussian query of sensitivity
 * c over the batch moves by K c.  Under add_remove only; the child must be
 * a gaussian or gdp leaf (DPA_EUNSUPPORTED from the accountant otherwise).
 * Integers n, m in [1, DPA_MAX_COUNT] (m may exceed n). */
dpa_event *dpa_event_sample_with_replacement(double n, double m, dpa_event *child, dpa_error *err);

/* Truncated Poisson subsampling (dp_accounting's
 * TruncatedSubsampledGaussianDpEvent): each of the n records of the dataset
 * (n counts the record whose privacy is accounted) is kept with probability
 * rate; a batch of more than max_batch records is cut down to a uniformly
 * random subset of max_batch; the child, a gaussian or gdp leaf, is the
 * sum query over the batch (sensitivity: the bound on one record's
 * contribution).  Under add_remove only.  The dominating pair is the
 * labelled mixture of the Poisson-subsampled Gaussian (rate, mu) with weight
 * 1 - p_T and the Poisson-subsampled Gaussian (q_T, 2 mu) with weight p_T,
 * p_T = P(Binomial(n - 1, rate) >= max_batch) and q_T the chance that the
 * record is in a truncated batch (docs/mechanisms.md §3).  rate in (0, 1];
 * integers max_batch, n in [1, DPA_MAX_TRUNC_N].  Methods: pld (auto), rdp.
 * In templates only the child's sigma may be the placeholder (the bound is
 * not monotone in rate, max_batch or n). */
dpa_event *dpa_event_truncated_poisson(double rate, double max_batch, double n, dpa_event *child, dpa_error *err);

/* The exponential mechanism with privacy parameter epsilon >= 0 finite
 * (scores of sensitivity Delta weighted by exp(epsilon u / (2 Delta))):
 * accounted as an epsilon-bounded-range mechanism (Durfee & Rogers 2019),
 * whose privacy profile is at most
 *   delta(e') = (1 - e^{-(epsilon - e')/2})^2 / (1 - e^{-epsilon}),  0 <= e' <= epsilon
 * (the worst case over the pairs with losses in [-t eps, (1 - t) eps]),
 * through a dominating pair with profile at least that (docs/mechanisms.md
 * §4).  Methods: pld (auto), phi, rdp (also the zCDP bound eps^2/8). */
dpa_event *dpa_event_exponential_mechanism(double epsilon, dpa_error *err);
/* Permute-and-flip (McKenna & Sheldon 2020) with parameter epsilon: epsilon-DP,
 * accounted as pure epsilon-DP (the pair RR_eps). */
dpa_event *dpa_event_permute_and_flip(double epsilon, dpa_error *err);
/* Report-noisy-max with privacy parameter epsilon: Gumbel noise is the
 * exponential mechanism (bounded range), Laplace noise is epsilon-DP,
 * exponential noise is permute-and-flip (epsilon-DP). */
dpa_event *dpa_event_report_noisy_max(double epsilon, dpa_rnm_noise noise, dpa_error *err);

/* Tree aggregation for DP-FTRL (Kairouz et al. 2021; dp_accounting's
 * SingleEpochTreeAggregationDpEvent): Gaussian noise of standard deviation
 * sigma on every node of a binary tree over `steps` steps, each record in
 * at most one step (for several trees in one epoch, each record in at
 * most one of them, give the largest tree's step count).  A record touches
 * at most depth = ceil(log2(steps + 1)) nodes, so the release is the
 * Gaussian mechanism with mu = sqrt(depth) sensitivity / sigma (sensitivity:
 * a node's L2 sensitivity under the spec's neighbouring relation, default 1;
 * under replace with norm clipping C it is 2C).  sigma > 0 finite, integer
 * steps in [1, DPA_MAX_COUNT], sensitivity > 0 finite.  Methods: every one
 * that takes a gaussian leaf (exact, pld, phi, rdp, clt, gdp). */
dpa_event *dpa_event_tree_aggregation(double sigma, double steps, double sensitivity, dpa_error *err);

/* A DP-SGD training run (issue 12; docs/spec.md, JSON {"dpsgd": {...}}):
 * `steps` steps (or, with steps = 0, ceil(epochs dataset_size / batch_size)
 * steps, computed exactly, a quotient within 1e-9 (relative) of an integer
 * counting as that integer: the convention of `dpacct dpsgd` and
 * python/dpacct/dpsgd.py), each adding N(0, (noise C)^2) to the sum of the
 * per-example gradients clipped to norm C:
 *   DPA_DPSGD_POISSON:  repeat(T, poisson(B/N, gaussian(noise, 1))),
 *                       under add_remove neighbouring only;
 *   DPA_DPSGD_WITHOUT_REPLACEMENT:
 *                       repeat(T, sample(N, B, gaussian(noise, 2))),
 *                       under replace neighbouring only;
 *   DPA_DPSGD_RANDOM_ALLOCATION (balls in bins, docs/training.md):
 *                       repeat(E, random_allocation(t, 1, gaussian(noise, 1)))
 *                       with t = ceil(N / B) steps per epoch and E whole
 *                       epochs (epochs a whole number, or steps a multiple
 *                       of t), under add_remove neighbouring only.
 * (Shuffling has no single pair: `dpacct dpsgd --sampling shuffle`.)
 * The event returned IS that expanded tree (kind DPA_EV_REPEAT, so every
 * method accounts it exactly as the expanded spec), remembering the run so
 * that dpa_spec_to_json writes it back as a dpsgd leaf.  dpa_spec_new
 * refuses it under the other neighbouring relation.  Integers dataset_size
 * in [1, DPA_MAX_COUNT], batch_size in [1, dataset_size]; exactly one of
 * epochs > 0 finite and integer steps in [1, DPA_MAX_COUNT] (the other 0);
 * noise > 0 finite; at most DPA_MAX_COUNT steps. */
typedef enum dpa_dpsgd_sampling {
    DPA_DPSGD_POISSON = 0,
    DPA_DPSGD_WITHOUT_REPLACEMENT = 1,
    DPA_DPSGD_RANDOM_ALLOCATION = 2
} dpa_dpsgd_sampling;
dpa_event *dpa_event_dpsgd(double dataset_size, double batch_size, double epochs, double steps, double noise,
                           dpa_dpsgd_sampling sampling, dpa_error *err);
/* The step count of `epochs` epochs of N records in batches of B (as above);
 * 0 for invalid arguments or more than DPA_MAX_COUNT steps. */
double dpa_dpsgd_steps(double epochs, double dataset_size, double batch_size);
/* 1 if e is (the root of) a dpsgd run built by dpa_event_dpsgd or read
 * from a dpsgd leaf, else 0. */
int dpa_event_is_dpsgd(const dpa_event *e);

/* Banded matrix factorization (DP-BandMF / DP-FTRL; docs/bandmf.md, JSON
 * {"bandmf": {...}} in docs/spec.md): n = iterations steps releasing
 * C X + Z, C the n x n lower-triangular Toeplitz strategy whose first column
 * is coefficients[0..bands-1] (b = bands bands, zeros below), X the
 * per-example gradients clipped to norm 1 (add/remove neighbours), Z of
 * i.i.d. N(0, noise^2) entries.  Participation:
 *   rate > 0 (participations = separation = 0): cyclic Poisson sampling
 *     over b groups (Choquette-Choo et al. 2023, arXiv 2306.08153; jax_
 *     privacy's amplified_bandmf_event with its max-column-norm-1
 *     normalization replaced by the given coefficients):
 *       repeat(ceil(n/b), poisson(rate, gaussian(noise, ||c||_2))),
 *     ||c||_2 rounded up; needs b <= n.  The bracket is that of the
 *     theorem's dominating pair: its upper bound is an upper bound for
 *     BandMF, its lower bound one for BandMF when b divides n (see
 *     dpa_event_bandmf_instance otherwise).
 *   rate = 0: fixed participation, each example in at most `participations`
 *     = k steps, at least `separation` >= b apart (0: b); needs
 *     (k - 1) sep + 1 <= n.  The Gaussian mechanism with sensitivity
 *     sqrt(sum_l m_l c_l^2), m_l = min(k, ceil((n - l)/sep)), written
 *     exactly as the composition of repeat(m_l, gaussian(noise, |c_l|)):
 *     tight, so both bounds hold for BandMF.
 * c0 > 0; every |c_l| 0 or in [1e-100, 1e100]; at most DPA_BANDMF_MAX_BANDS
 * bands; integer iterations in [1, DPA_MAX_COUNT].  Add/remove neighbouring
 * only (under replace-one neighbours pass 2 c).  The event is the expanded
 * tree (the writer gives it back expanded).  Methods: every one that takes
 * gaussian leaves and poisson-subsampled Gaussians (exact for the fixed
 * case; pld, phi, rdp, clt, gdp; auto). */
#define DPA_BANDMF_MAX_BANDS 1000000
#define DPA_BANDMF_MIN_COEF 1e-100
#define DPA_BANDMF_MAX_COEF 1e100
dpa_event *dpa_event_bandmf(const double *coefficients, size_t bands, double noise, double iterations,
                            double rate, double participations, double separation, dpa_error *err);
/* An event every bracket of which lower-bounds BandMF itself (same
 * arguments): for fixed participation dpa_event_bandmf; for cyclic Poisson
 * the attained instance of one example of group 0 (steps 0, b, 2b, ...)
 * with a constant gradient, ceil(n/b) - 1 rounds at ||c||_2 and the last at
 * the norm of the first n - (ceil(n/b) - 1) b coefficients, both rounded
 * down.  Use its lower bound with dpa_event_bandmf's upper bound. */
dpa_event *dpa_event_bandmf_instance(const double *coefficients, size_t bands, double noise, double iterations,
                                     double rate, double participations, double separation, dpa_error *err);
/* The L2 sensitivity of the strategy, rounded up (round_up = 1) or down:
 * participations = 0: the largest column norm ||c[0..min(b, n)-1]||_2;
 * else sqrt(sum_l m_l c_l^2) as above.  NaN for invalid arguments. */
double dpa_bandmf_sensitivity(const double *coefficients, size_t bands, double iterations, double participations,
                              double separation, int round_up);

/* Repeat-and-select (Papernot & Steinke 2022, "Hyperparameter tuning with
 * Renyi differential privacy"; dp_accounting's RepeatAndSelectDpEvent): the
 * child runs K times, K random with the given mean, and only the best run
 * is released.  K is truncated negative binomial with shape >= 0 (shape 1:
 * geometric; 0: logarithmic), or Poisson when shape is
 * DPA_REPSEL_POISSON.  mean >= 1 finite.  Its guarantee is a Renyi bound
 * (P&S Thm 2 and Thm 6 in terms of the child's Renyi curve), not a pair:
 * only the rdp method (and auto) takes it; the others refuse naming rdp. */
#define DPA_REPSEL_POISSON (-1.0)
dpa_event *dpa_event_repeat_and_select(double mean, double shape, dpa_event *child, dpa_error *err);
/* The sparse vector technique (answers "above threshold" to at most c of at
 * most k queries of sensitivity 1; Zhu & Wang 2020, "Improving sparse vector
 * technique with Renyi differential privacy"; autodp's LaplaceSVT_Mechanism
 * and GaussianSVT_Mechanism (c > 1 form)), accounted by the Renyi bounds
 * of autodp's rdp_bank (docs/mechanisms.md §6): Laplace noise of scale
 * `scale` on the threshold and 2 `scale` on the queries (relative to the
 * sensitivity; the bound assumes this), or Gaussian noise of standard
 * deviation `sigma` on the threshold and (c = 1, Zhu & Wang Thm 8)
 * sqrt(3) `sigma` on the queries.  Integers
 * 1 <= c <= k <= DPA_MAX_COUNT.  Renyi bounds only: rdp (and auto). */
dpa_event *dpa_event_laplace_svt(double scale, double k, double c, dpa_error *err);
dpa_event *dpa_event_gaussian_svt(double sigma, double k, double c, dpa_error *err);

/* Deep copy (labels included); NULL on allocation failure. */
dpa_event *dpa_event_copy(const dpa_event *e);
/* Labels (issue 12: "name" in an event object, docs/spec.md): a non-empty
 * string of at most DPA_EVENT_NAME_MAX bytes without control characters
 * (bytes below 0x20 and 0x7f).  The label is kept by copies, written by
 * dpa_spec_to_json and echoed in messages that give a JSON path; it has no
 * effect on any accounting.  get: the label or NULL (borrowed, valid until
 * the event is changed or freed).  set: copies name (NULL removes the
 * label); DPA_EINVAL for an invalid name (the event is unchanged). */
#define DPA_EVENT_NAME_MAX 200
const char *dpa_event_get_name(const dpa_event *e);
dpa_status dpa_event_set_name(dpa_event *e, const char *name, dpa_error *err);
void dpa_event_free(dpa_event *e);

/* ---- inspection ---- */
/* e must not be NULL (NULL returns DPA_EV_GAUSSIAN, meaningless). */
dpa_event_kind dpa_event_get_kind(const dpa_event *e);
/* Number of children (0 for leaves) and the i-th child (borrowed pointer). */
size_t dpa_event_num_children(const dpa_event *e);
const dpa_event *dpa_event_child(const dpa_event *e, size_t i);
/* Named numeric parameter ("sigma", "sensitivity", "scale", "epsilon", "delta",
 * "rho", "mu", "count", "rate", "n", "m", "k", "max_batch", "steps", "noise"
 * (report_noisy_max: the dpa_rnm_noise value), "mean", "shape"
 * (repeat_and_select: DPA_REPSEL_POISSON for Poisson), "c", "truncation"
 * (discrete_gaussian: DPA_DG_UNTRUNCATED when absent).  Returns DPA_EINVAL if this kind has
 * no such parameter. */
dpa_status dpa_event_get_param(const dpa_event *e, const char *name, double *value);

/* ---- specs ---- */
/* Takes ownership of root in every case. */
dpa_spec *dpa_spec_new(dpa_event *root, dpa_neighboring nb, dpa_error *err);
dpa_spec *dpa_spec_copy(const dpa_spec *s);
void dpa_spec_free(dpa_spec *s);
const dpa_event *dpa_spec_root(const dpa_spec *s);
dpa_neighboring dpa_spec_neighboring(const dpa_spec *s);

/* Parse a JSON spec (UTF-8 text, NUL-terminated).  Unknown keys, wrong types,
 * out-of-range values, a missing required key, more than one event key in an
 * object, trailing garbage: DPA_EINVAL with the JSON path, e.g.
 *   "/repeat/event/poisson/rate: must be in (0, 1], got 1.5".
 * Paths use JSON-pointer style: object keys and array indices separated by '/'.
 * The string "?" in place of a number is an error here (see the template API). */
dpa_spec *dpa_spec_from_json(const char *text, dpa_error *err);

/* Serialize to canonical compact JSON (every parameter written, including
 * defaults, and "neighboring").  Returns a malloc'd string the caller frees
 * with free(); NULL on allocation failure.  Round-trips through
 * dpa_spec_from_json to an equal spec. */
char *dpa_spec_to_json(const dpa_spec *s);

/* ---- templates: a spec with exactly one numeric parameter written "?" ---- */
typedef struct dpa_template dpa_template;

typedef enum dpa_param_role {
    DPA_ROLE_NOISE,  /* larger value = more private (sigma, scale, sample's n): calibrate to the smallest */
    DPA_ROLE_BUDGET  /* larger value = less private (count, rate, epsilon, mu, ...): the largest */
} dpa_param_role;

typedef struct dpa_param_info {
    char path[256];      /* JSON path of the "?" value, e.g. "/repeat/count" */
    char name[32];       /* parameter name, e.g. "count" */
    dpa_param_role role;
    int is_integer;      /* 1 for count, n, m, discrete sensitivities */
    double lo, hi;       /* closed domain [lo, hi] of values the parser accepts */
    int lo_open, hi_open;/* 1 if that end is excluded (e.g. sigma > 0, rate > 0) */
} dpa_param_info;

/* Parse a spec with exactly one "?" (zero or several: DPA_EINVAL). */
dpa_template *dpa_template_from_json(const char *text, dpa_error *err);
const dpa_param_info *dpa_template_param(const dpa_template *t);
/* A spec with the placeholder set to value (validated like a parsed value,
 * including integrality); NULL + DPA_EINVAL if out of domain. Caller frees. */
dpa_spec *dpa_template_instantiate(const dpa_template *t, double value, dpa_error *err);
void dpa_template_free(dpa_template *t);

#ifdef __cplusplus
}
#endif
#endif

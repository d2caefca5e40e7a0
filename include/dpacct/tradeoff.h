/* dpacct — tradeoff functions (f-DP) and Gaussian DP.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A tradeoff function f = T(P, Q): [0, 1] -> [0, 1] gives, for every type I
 * error x (the probability of rejecting P when P is true), the smallest type
 * II error of a test of P against Q (GDP Def 2.1).  It is convex,
 * continuous, non-increasing and f(x) <= 1 - x (GDP Prop 2.2).  A mechanism
 * is f-DP when T(M(S), M(S')) >= f for all neighbouring S, S' (GDP Def 2.2).
 * The mathematics, with equation references, is in docs/fdp.md.
 *
 * Direction of every guarantee.  A curve BELOW the truth claims less
 * privacy, so every curve this module returns is a LOWER bound on the curve
 * it stands for (the result of the operation applied, in exact arithmetic,
 * to the curves it was given), and every delta it returns is an UPPER
 * bound.  "The represented curve" of a dpa_tf is the exact function the
 * object denotes: for a closed form (Gaussian, approx, Laplace) the closed
 * form itself; for a piecewise-linear curve the linear interpolation of its
 * vertices, taken as exact reals.  Operations that must discretize a closed
 * form (e.g. subsampling G_mu) first replace it by a piecewise-linear curve
 * below it, built from supporting lines (never chords: a chord of a convex
 * function lies above it).
 *
 * Objects.  A dpa_tf is immutable once built; functions that "transform" a
 * curve return a new object that the caller frees with dpa_tf_free.
 * Functions never keep or free their arguments.  Constructors return NULL on
 * failure and fill `err` (which may be NULL): DPA_EINVAL for parameters out of
 * their documented domain (the message names the parameter and the value),
 * DPA_ENOMEM for allocation failure, DPA_ENUMERIC when a numerical procedure
 * found no bound.  The library has no global mutable state: distinct objects
 * may be used from different threads; one object may be read by several
 * threads at once.
 *
 * Naming: every function is dpa_tf_<verb>.  Tolerances and defaults are
 * named constants below, each with its justification.
 */
#ifndef DPACCT_TRADEOFF_H
#define DPACCT_TRADEOFF_H

#include <stddef.h>
#include "accountant.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dpa_tf dpa_tf;

/* ---------------------------------------------------------------------
 * Options for operations that discretize closed forms or bound the size
 * of piecewise-linear results.  NULL means the defaults below.
 * ------------------------------------------------------------------- */

/* Default discretization target: a closed form is replaced by supporting
 * lines (tangents), placed where they are most needed, until at every
 * vertex of the resulting curve the gap to the true curve is at most
 * rel_tol times min(f, 1 - f) there (and, mirrored across the diagonal,
 * rel_tol times min(x, 1 - x) times the slope), or at most abs_tol, or the
 * vertex budget is spent.  A relative target keeps small deltas (large eps,
 * f near 1) as accurate as the bulk: 1e-6 asks for six significant digits of
 * every value and of delta down to the tail.  Tangent lines converge
 * quadratically, so the count grows like rel_tol^-1/2: G_1 needs about 10^5
 * slopes per side for 1e-6; the default budget stops near 5e-6 (0.3 s).  The
 * gap is an estimate that decides where to refine, never a correction: the
 * curve is a lower bound whatever the gap. */
#define DPA_TF_DEFAULT_REL_TOL 1e-6
/* Absolute escape from the relative target (0: none). */
#define DPA_TF_DEFAULT_ABS_TOL 0.0
/* Default cap on the vertices of a piecewise-linear result (discretizations,
 * operations).  Larger results are coarsened by dropping the segments that
 * cost least (relative to the curve's value) and extending their
 * neighbours, which lowers the curve (sound).  65536 vertices are 2 MB.
 * Tensor products use at most DPA_TF_TENSOR_SIDE vertices per factor. */
#define DPA_TF_DEFAULT_MAX_VERTICES 65536
/* Vertices per factor of a tensor product of two curves that are not
 * closed-form special cases: 1448^2 < 2^21 product segments (80 MB of
 * work space).  Closed forms are discretized to this budget directly,
 * piecewise-linear factors above it are coarsened. */
#define DPA_TF_TENSOR_SIDE 1448
/* Absolute floor of the discretization target for tensor factors (used
 * instead of abs_tol when larger).  With DPA_TF_TENSOR_SIDE lines, a purely
 * relative target spreads them over the whole tail and leaves about 1e-2
 * relative accuracy everywhere (G_1 needs 10^5 lines for 1e-6); refining
 * relative to the curve only where it exceeds 1e-12 gives about 1e-5 there
 * (measured: G_0.7 (x) G_1.9 within 1.6e-5 of G_2.02, its delta within
 * 4e-4 relative for eps < 12).  Tensor products of closed forms are for
 * moderate deltas; the accountant (include/dpacct/accountant.h) composes
 * tails better. */
#define DPA_TF_TENSOR_ABS_TOL 1e-12
/* Tails of a discretized closed form below this mass are cut: the curve is
 * lowered to 1 - DPA_TF_DEFAULT_TAIL at x = 0 and reaches 0 that far before
 * x = 1.  1e-300 is near the smallest normal double. */
#define DPA_TF_DEFAULT_TAIL 1e-300

typedef struct dpa_tf_opts {
    double rel_tol;      /* in (0, 1]; default DPA_TF_DEFAULT_REL_TOL */
    double abs_tol;      /* in [0, 1]; default DPA_TF_DEFAULT_ABS_TOL */
    size_t max_vertices; /* in [8, 2^24]; default DPA_TF_DEFAULT_MAX_VERTICES */
    double tail;         /* in (0, 1e-3]; default DPA_TF_DEFAULT_TAIL */
} dpa_tf_opts;

/* Fill defaults (NULL: no-op). */
void dpa_tf_opts_init(dpa_tf_opts *opt);

/* ---------------------------------------------------------------------
 * Constructors
 * ------------------------------------------------------------------- */

/* Id(x) = 1 - x: two identical distributions (perfect privacy). */
dpa_tf *dpa_tf_identity(dpa_error *err);

/* G_mu(x) = Phi(Phi^{-1}(1 - x) - mu) = T(N(0,1), N(mu,1)) (GDP eq 6; mu-GDP
 * is G_mu-DP, GDP Def 2.4).  Domain: mu in [0, 1e8] (finite; mu = 0 is Id). */
dpa_tf *dpa_tf_gaussian(double mu, dpa_error *err);

/* f_{eps,delta}(x) = max{0, 1 - delta - e^eps x, e^-eps (1 - delta - x)}
 * (GDP eq 5), the tradeoff function of (eps, delta)-DP: T of randomized
 * response RR_{eps,delta} (LT Thm 4.5).  Domain: eps in [0, 700], delta in
 * [0, 1]. */
dpa_tf *dpa_tf_approx(double eps, double delta, dpa_error *err);

/* T(Lap(0, 1), Lap(mu, 1)) (GDP Lemma A.6): the Laplace mechanism with
 * sensitivity s and scale b has mu = s / b:
 *   1 - e^mu x on [0, e^-mu / 2],  e^-mu / (4x) on [e^-mu / 2, 1/2],
 *   e^-mu (1 - x) on [1/2, 1].  Domain: mu in [0, 700]. */
dpa_tf *dpa_tf_laplace(double mu, dpa_error *err);

/* Randomized response on two outcomes: T(P, Q) with P = (p, 1 - p),
 * Q = (q, 1 - q); piecewise linear with at most one interior vertex.
 * RR with parameter eps is p = e^eps/(1 + e^eps), q = 1/(1 + e^eps) (which
 * gives f_{eps,0}).  Domain: p, q in [0, 1]. */
dpa_tf *dpa_tf_randomized_response(double p, double q, dpa_error *err);

/* The piecewise-linear curve through n >= 1 points (x[i], y[i]).  The
 * points are the caller's statement of a LOWER bound (e.g. the vertices of
 * an exact piecewise-linear tradeoff function); points sampled ON a curved
 * tradeoff function do not qualify (their chords lie above it: use
 * dpa_tf_from_profile with supporting lines instead).
 * Requirements: 0 = x[0] < x[1] < ... < x[n-1] <= 1, y[n-1] = 0 (the curve
 * is 0 after its last point), and the points form a tradeoff function:
 * y[i] in [0, 1], non-increasing, y[i] <= 1 - x[i], convex.  Each property
 * may be violated by at most `tol` (>= 0; a vertical distance); violations
 * within tol are repaired downwards (the curve becomes the largest tradeoff
 * function below the interpolation), larger ones fail with DPA_EINVAL
 * naming the property and the point.  Points that satisfy every property
 * exactly are kept exactly. */
dpa_tf *dpa_tf_from_points(const double *x, const double *y, size_t n, double tol,
                           dpa_error *err);

/* The lower convex envelope of arbitrary points (the largest convex
 * function below their linear interpolation), after clipping y to
 * [0, 1 - x]; then made non-increasing by ending at its minimum.  Same
 * requirements on x as dpa_tf_from_points (sorted, x[0] = 0, and the last
 * point has y = 0 or x = 1); y[i] finite.  A lower bound on any tradeoff
 * function that lies above the points' interpolation. */
dpa_tf *dpa_tf_lower_envelope(const double *x, const double *y, size_t n, dpa_error *err);

/* sup_i f_{eps[i], delta[i]} (GDP Prop 2.8, "dual to primal"): the
 * tradeoff function of a mechanism known to be (eps_i, delta_i)-DP for every
 * i.  Symmetric.  Domain: n >= 1, eps[i] in [0, 700], delta[i] in [0, 1]. */
dpa_tf *dpa_tf_from_eps_delta(const double *eps, const double *delta, size_t n, dpa_error *err);

/* A deep copy. */
dpa_tf *dpa_tf_copy(const dpa_tf *f, dpa_error *err);

/* Free (NULL: no-op). */
void dpa_tf_free(dpa_tf *f);

/* ---------------------------------------------------------------------
 * Inspection
 * ------------------------------------------------------------------- */

typedef enum dpa_tf_kind {
    DPA_TF_PIECEWISE = 0, /* linear interpolation of vertices */
    DPA_TF_GAUSSIAN = 1,  /* G_mu (tensored with f_{0,delta} when delta > 0) */
    DPA_TF_APPROX = 2,    /* f_{eps,delta} */
    DPA_TF_LAPLACE = 3    /* Laplace (tensored with f_{0,delta} when delta > 0) */
} dpa_tf_kind;

/* "piecewise", "gaussian", "approx", "laplace"; NULL for an unknown value. */
const char *dpa_tf_kind_name(dpa_tf_kind k);

/* f must not be NULL. */
dpa_tf_kind dpa_tf_get_kind(const dpa_tf *f);

/* Parameters of a closed form: mu (GAUSSIAN, LAPLACE), eps (APPROX), and
 * delta: the curve is (1 - delta) g(x / (1 - delta)) on [0, 1 - delta] and
 * 0 after, i.e. g (x) f_{0,delta} (GDP eq 13), g the undecorated closed form.
 * Fields that do not apply are set to NaN; any pointer may be NULL.
 * DPA_EINVAL for a piecewise-linear curve. */
dpa_status dpa_tf_params(const dpa_tf *f, double *mu, double *eps, double *delta, dpa_error *err);

/* Vertices of a piecewise-linear curve: returns their number n (0 for a
 * closed form) and writes min(n, cap) of them.  Coordinates are given as
 * nearest doubles of the exact vertex (x, y) and, separately, of the
 * complements 1 - x and 1 - y (which carry full relative accuracy where x
 * or y is close to 1).  Any array may be NULL. */
size_t dpa_tf_vertices(const dpa_tf *f, double *x, double *one_minus_x, double *y,
                       double *one_minus_y, size_t cap);

/* ---------------------------------------------------------------------
 * Evaluation and properties
 * ------------------------------------------------------------------- */

/* y <= f(x) for the represented curve, x in [0, 1].  Error: at most
 * DPA_TF_EVAL_REL times max(f(x), the curve at the vertices around x) plus
 * 2^-1074 below the exact value for piecewise-linear curves; for the
 * closed forms the special-function allowances of docs/fdp.md §6 (about
 * 1e-14 relative for G_mu).  DPA_EINVAL for x outside [0, 1] or NaN. */
dpa_status dpa_tf_eval(const dpa_tf *f, double x, double *y, dpa_error *err);

/* Both sides: lo <= f(x) <= hi for the represented curve.  Also returns
 * 1 - f(x) bounds through the optional one_minus_lo/one_minus_hi
 * (one_minus_lo <= 1 - f(x) <= one_minus_hi), accurate where f(x) is close
 * to 1.  Any output pointer may be NULL. */
dpa_status dpa_tf_eval_bounds(const dpa_tf *f, double x, double *lo, double *hi,
                              double *one_minus_lo, double *one_minus_hi, dpa_error *err);

/* Relative error budget of piecewise-linear evaluation (documented bound,
 * see docs/fdp.md §6): the interpolation takes three rounded operations and
 * the segment slope four; 16u leaves a factor of two. */
#define DPA_TF_EVAL_REL (16 * 1.1102230246251565e-16)

/* Validity (GDP Prop 2.2): values in [0, 1], f(x) <= 1 - x, non-increasing,
 * convex, each to within `tol` (>= 0, a vertical distance; 0 asks for
 * exactness, which every curve built by this module satisfies: its vertices
 * are checked with exact predicates).  Closed forms with parameters in their
 * domains are valid.  DPA_OK if valid, DPA_EINVAL with the property, the
 * vertex and the size of the violation otherwise. */
dpa_status dpa_tf_check(const dpa_tf *f, double tol, dpa_error *err);

/* The same check on raw points (as given to dpa_tf_from_points). */
dpa_status dpa_tf_check_points(const double *x, const double *y, size_t n, double tol,
                               dpa_error *err);

/* An upper bound on sup_x |f(x) - f^{-1}(x)| for the represented curve
 * (exact maximum over the vertices of f and f^{-1}, where the difference of
 * two piecewise-linear functions attains it, widened by the evaluation
 * error).  0 for the closed forms, which are symmetric. */
dpa_status dpa_tf_symmetry_defect(const dpa_tf *f, double *defect, dpa_error *err);

/* 1 if the curve is symmetric (f = f^{-1}, GDP Prop 2.1) to within tol,
 * else 0 (also 0 on error). */
int dpa_tf_is_symmetric(const dpa_tf *f, double tol);

/* The fixed point x* = f(x*) (unique: f(x) - x is strictly decreasing),
 * bracketed for the represented curve: lo <= x* <= hi (bisection on the
 * certified lower and upper evaluations: hi - lo is the evaluation error over
 * 1 - f'(x*), about 1e-16 for piecewise-linear curves, 1e-14 for G_mu).  For
 * a lower-bound curve the true curve's fixed point is >= lo.
 * The fixed point of a symmetric f is where its slope is -1 (GDP §4.1);
 * 1 - 2 x* is the total variation distance when f is symmetric. */
dpa_status dpa_tf_fixed_point(const dpa_tf *f, double *lo, double *hi, dpa_error *err);

/* ---------------------------------------------------------------------
 * Operations.  Each returns a new curve that is a LOWER bound on the exact
 * result of the operation applied to the represented inputs (closed forms
 * that need it are discretized first, per `opt`).  opt may be NULL.
 * ------------------------------------------------------------------- */

/* f^{-1}(y) = inf{x in [0,1] : f(x) <= y} (GDP eq 4); T(P,Q)^{-1} = T(Q,P).
 * Exact for piecewise-linear curves (the vertices swap). */
dpa_tf *dpa_tf_inverse(const dpa_tf *f, dpa_error *err);

/* max{f, g}: a tradeoff function (GDP Prop 2.2). */
dpa_tf *dpa_tf_max(const dpa_tf *f, const dpa_tf *g, const dpa_tf_opts *opt, dpa_error *err);

/* The lower convex envelope of min{f, g}: min{f, g} itself is not convex
 * in general, and the largest tradeoff function below it is its lower
 * convex envelope (biconjugate, GDP §4.1).  A mechanism that is f-DP or
 * g-DP (one of the two, unknown which) is min{f,g}**-DP. */
dpa_tf *dpa_tf_min(const dpa_tf *f, const dpa_tf *g, const dpa_tf_opts *opt, dpa_error *err);

/* max{f, f^{-1}} (GDP Prop 2.1, "f^S"): valid when f bounds
 * T(M(S), M(S')) for EVERY ordered neighbouring pair (f-DP in the sense of
 * GDP Def 2.2), because then f^{-1} bounds it too. */
dpa_tf *dpa_tf_symmetrize_max(const dpa_tf *f, const dpa_tf_opts *opt, dpa_error *err);

/* Symm(f) (GDP Def F.1, Prop F.2): the guarantee of a mechanism known
 * only to be (eps, 1 + f*(-e^eps))-DP for all eps >= 0, i.e. to satisfy the
 * eps >= 0 half of f's conjugate profile in both orders.  Equal to
 * max{f_env, f_env^{-1}} with f_env = f up to the point x_bar where its slope
 * reaches -1, then the supporting line of slope -1 (the proof of Prop F.2):
 * min{f, f^{-1}}** when x_bar <= f(x_bar), max{f, f^{-1}} otherwise.  This is
 * the right symmetrization for ASYMMETRIC curves obtained from one direction
 * (e.g. f_p of subsampling); it is <= max{f, f^{-1}}. */
dpa_tf *dpa_tf_symm(const dpa_tf *f, const dpa_tf_opts *opt, dpa_error *err);

/* The p-sampling operator C_p(f) = min{f_p, f_p^{-1}}**, f_p = p f + (1-p) Id
 * (GDP Def 4.1, Thm 4.2: sampling m of n without replacement, p = m/n,
 * makes an f-DP mechanism C_p(f)-DP).  For symmetric f it equals GDP eq 14;
 * for f = f_{eps,delta} the intercept is 1 - p (e^eps - 1 + 2 delta)/(e^eps + 1)
 * (from eq 14; GDP eq 15 misprints it, docs/fdp.md §4).  Domain: p in [0, 1]. */
dpa_tf *dpa_tf_subsample(const dpa_tf *f, double p, const dpa_tf_opts *opt, dpa_error *err);

/* Group privacy: 1 - (1 - f)^{o k} (the k-fold iterate of x -> 1 - f(x),
 * subtracted from 1; GDP Thm 2.14, Lemma A.4-A.5): an f-DP mechanism is
 * this-DP for groups of k.  G_mu gives G_{k mu} exactly.  Domain: k >= 1
 * (k <= 2^20). */
dpa_tf *dpa_tf_group(const dpa_tf *f, unsigned long k, const dpa_tf_opts *opt, dpa_error *err);

/* The tensor product f (x) g = T(P x P', Q x Q') (GDP Def 3.1): the
 * composition of an f-DP and a g-DP mechanism is f (x) g-DP (GDP Thm 3.2).
 * Exact in closed form for G_a (x) G_b = G_sqrt(a^2+b^2) (GDP Cor 3.3) and
 * for products with f_{0,delta} (GDP eq 13); piecewise-linear curves compose
 * exactly as discrete pairs (RF Prop 12), near-ties of slopes and round-off
 * taken on the safe side; other closed forms are discretized first (each
 * factor to at most DPA_TF_TENSOR_SIDE vertices).  A result above
 * opt->max_vertices is coarsened (lowered).  Accuracy of products of curved
 * closed forms is limited by these budgets (docs/fdp.md §4: ~1e-5 absolute
 * for two factors); long compositions belong to the accountant. */
dpa_tf *dpa_tf_tensor(const dpa_tf *f, const dpa_tf *g, const dpa_tf_opts *opt, dpa_error *err);

/* f^{(x) n} (n >= 1, n <= 1e9).  G_mu: G_{sqrt(n) mu}; f_{eps,delta}:
 * T(Bin(n, 1/(1+e^eps)), Bin(n, e^eps/(1+e^eps))) (x) f_{0, 1-(1-delta)^n}
 * exactly (GDP / Kairouz et al.; n <= 1e7); otherwise repeated squaring of
 * piecewise-linear curves with coarsening to opt->max_vertices. */
dpa_tf *dpa_tf_tensor_power(const dpa_tf *f, unsigned long n, const dpa_tf_opts *opt,
                            dpa_error *err);

/* A piecewise-linear curve below f: closed forms are replaced by the
 * envelope of supporting lines (adaptively, to opt's tolerances);
 * piecewise-linear curves with more than opt->max_vertices vertices are
 * coarsened (segments dropped, neighbours extended), others copied. */
dpa_tf *dpa_tf_discretize(const dpa_tf *f, const dpa_tf_opts *opt, dpa_error *err);

/* ---------------------------------------------------------------------
 * Conversions between tradeoff functions and privacy profiles.
 * For f = T(P, Q), two hockey-stick profiles are determined by f:
 * ------------------------------------------------------------------- */
typedef enum dpa_tf_dir {
    /* delta(eps) = H_{e^eps}(Q || P) = 1 + f*(-e^eps)
     *            = 1 - inf_x (e^eps x + f(x))           (GDP Prop 2.12) */
    DPA_TF_QP = 0,
    /* delta(eps) = H_{e^eps}(P || Q) = 1 + (f^{-1})*(-e^eps)
     *            = 1 - inf_x (x + e^eps f(x))           (RF Prop 9) */
    DPA_TF_PQ = 1,
    /* both: delta(eps) bounds both of the above.  For symmetric f all three
     * coincide and equal GDP Prop 2.12's (eps, delta(eps))-DP profile.  A
     * mechanism that is f-DP (Def 2.2, all ordered neighbours) is
     * (eps, min(QP, PQ))-DP, and (eps, QP)-DP when f is symmetric. */
    DPA_TF_BOTH = 2
} dpa_tf_dir;

/* "qp", "pq", "both"; NULL for an unknown value. */
const char *dpa_tf_dir_name(dpa_tf_dir d);

/* An upper bound on delta(eps) in direction dir (BOTH: the max of the two)
 * for the represented curve (hence for the true curve above it).  Any
 * finite eps (negative too: delta(eps) >= 1 - e^eps).  Computed from the
 * complements 1 - f at the vertices, so small deltas keep full relative
 * accuracy; e^eps is handled in log space (no overflow). */
dpa_status dpa_tf_delta(const dpa_tf *f, double eps, dpa_tf_dir dir, double *delta_upper,
                        dpa_error *err);

/* The smallest eps >= 0 with delta(eps) <= delta (direction dir), bounded
 * above: *eps_upper >= the represented curve's eps (hence >= the truth's).
 * +INFINITY when no finite eps works (delta(+inf) = 1 - f(0) > delta, or
 * the PQ analogue).  Domain: delta in (0, 1).  Relative accuracy 1e-12 (a
 * bisection on the certified profile). */
dpa_status dpa_tf_epsilon(const dpa_tf *f, double delta, dpa_tf_dir dir, double *eps_upper,
                          dpa_error *err);

/* Profile -> tradeoff (GDP Prop 2.8, 2.12): from n >= 1 points
 * (eps[i], delta_upper[i]) with delta_upper[i] >= delta(eps[i]) in direction
 * dir of some pair (P, Q), the curve
 *   QP:   sup_i max(0, 1 - delta_i - e^{eps_i} x)
 *   PQ:   sup_i max(0, e^{-eps_i} (1 - delta_i - x))
 *   BOTH: both families (= sup_i f_{eps_i, delta_i} for eps_i >= 0)
 * is a LOWER bound on T(P, Q) (docs/fdp.md §3 proves it): every line is a
 * supporting-line bound implied by one (eps, delta) pair, and a larger delta
 * only lowers it.  eps[i] finite, |eps[i]| <= 700, delta_upper[i] in [0, 1]
 * (points with delta 1 carry no information and are skipped). */
dpa_tf *dpa_tf_from_profile(const double *eps, const double *delta_upper, size_t n,
                            dpa_tf_dir dir, const dpa_tf_opts *opt, dpa_error *err);

/* A profile given by a callback: fill delta_upper[0..n-1] with upper bounds
 * on delta(eps[i]) (in direction dir); return DPA_OK or an error (which is
 * passed on).  dpa_accountant_profile's `upper` array is such a bound (in
 * direction BOTH: it is the max over the add and remove directions). */
typedef dpa_status (*dpa_tf_profile_fn)(void *ctx, const double *eps, size_t n,
                                        double *delta_upper, dpa_error *err);

/* PLD/profile -> tradeoff (Neyman-Pearson, RF Prop 8, through its dual
 * form): dpa_tf_from_profile on the n >= 2 points eps_min + i (eps_max -
 * eps_min)/(n - 1) asked of fn.  Domain: eps_min < eps_max, both finite with
 * |eps| <= 700, n <= 1e6. */
dpa_tf *dpa_tf_from_profile_fn(dpa_tf_profile_fn fn, void *ctx, double eps_min, double eps_max,
                               size_t n, dpa_tf_dir dir, const dpa_tf_opts *opt, dpa_error *err);

/* The tradeoff curve of an accountant's spec: dpa_tf_from_profile_fn with
 * dpa_accountant_profile's certified upper bounds on [0, eps_max], direction
 * BOTH, and then up to 8192 more eps points placed by bisection where two
 * neighbouring supporting lines leave a gap (the kinks of piecewise-linear
 * curves, the bend of subsampled ones; docs/fdp.md §3).  The result f
 * satisfies f <= T(M(S), M(S')) for every ordered pair of neighbours, i.e.
 * the spec is f-DP.  Domain: eps_max in (0, 700], n in [2, 1e6]. */
dpa_tf *dpa_tf_from_accountant(dpa_accountant *a, double eps_max, size_t n,
                               const dpa_tf_opts *opt, dpa_error *err);

/* The tradeoff function of an accountant's spec at one point, bracketed on
 * both sides: *beta_lo <= f(alpha) <= *beta_hi, f the tradeoff function the
 * privacy profile implies (GDP Prop 2.12; the pair's own tradeoff function
 * for a symmetric pair), so the largest power of a test at level alpha is
 * 1 - f(alpha), within [1 - *beta_hi, 1 - *beta_lo].  From the accountant's
 * profile brackets, refined until the bracket is at most tol wide (0: 1e-9)
 * or no refinement helps; the bounds are as certified as the accountant's
 * method (phi and gdp: estimates).  Domain: alpha in (0, 1], tol in
 * [1e-15, 0.1] or 0.  docs/fdp.md §9. */
dpa_status dpa_tf_beta_at(dpa_accountant *a, double alpha, double tol, double *beta_lo, double *beta_hi,
                          dpa_error *err);

/* ---------------------------------------------------------------------
 * Gaussian differential privacy
 * ------------------------------------------------------------------- */

/* The smallest mu with G_mu <= f (f is mu-GDP), bounded above:
 * *mu_upper >= the represented curve's smallest mu >= the true one's.  For a
 * piecewise-linear f the condition need only hold at the vertices (G_mu is
 * convex); it fails for every finite mu (+INFINITY) when f(0) < 1 or f reaches
 * 0 before x = 1 — which every discretization of a curve with an infinite
 * slope at 0 does, so ask this of closed forms or exact curves (G_mu,
 * f_{eps,0}, Laplace, tensor powers of f_{eps,0}); closed forms that need it
 * are discretized per opt. */
dpa_status dpa_tf_gdp_mu(const dpa_tf *f, const dpa_tf_opts *opt, double *mu_upper,
                         dpa_error *err);

/* The smallest mu whose mu-GDP profile is >= delta[i] at eps[i] for every
 * i (n >= 1, eps[i] finite, delta[i] in [0, 1]), bounded above: *mu_upper >=
 * that mu.  This matches the profile at the given points only: between and
 * beyond them the profile is not controlled, so it is a necessary condition
 * for mu-GDP, not a proof (for a proof, build a curve and use
 * dpa_tf_gdp_mu).  +INFINITY if some delta[i] cannot be reached (delta[i] >= 1
 * at eps[i] >= 0). */
dpa_status dpa_tf_gdp_mu_from_profile(const double *eps, const double *delta, size_t n,
                                      double *mu_upper, dpa_error *err);

/* mu-GDP -> (eps, delta): the exact profile of G_mu (GDP Cor 2.13)
 * delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2), bracketed:
 * lo <= delta <= hi (relative width about 1e-12).  mu in [0, 1e8], eps
 * finite. */
dpa_status dpa_tf_gdp_delta(double mu, double eps, double *lo, double *hi, dpa_error *err);

/* The smallest eps >= 0 with delta_mu(eps) <= delta, bracketed: lo <= eps <=
 * hi.  mu in [0, 1e8], delta in (0, 1). */
dpa_status dpa_tf_gdp_epsilon(double mu, double delta, double *lo, double *hi, dpa_error *err);

#ifdef __cplusplus
}
#endif
#endif

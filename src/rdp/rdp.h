/* Rényi differential privacy: certified Rényi divergences of dominating
 * pairs, an accountant over a grid of orders, and conversions to (eps, delta).
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Notation (docs/rdp.md).  A pair (A, B) with privacy loss W = log dA/dB
 * (src/mech/pair.h).  For real theta,
 *     E(theta) = int a^{1+theta} b^{-theta} = E_A[e^{theta W}]
 * (LT Def 2.2 with q = 1 + theta).  The Rényi divergences of order
 * alpha > 1 in the two directions are
 *     D_alpha(A||B) = log E(alpha - 1) / (alpha - 1)     (theta = alpha - 1 > 0)
 *     D_alpha(B||A) = log E(-alpha)    / (alpha - 1)     (theta = -alpha < -1)
 * since int b^alpha a^{1-alpha} = E(-alpha).  Under add/remove adjacency
 * the leaf pair is the remove direction (A, B) and the add direction is its
 * reversal (B, A) (docs/sampling.md §1).
 *
 * Guarantee.  Every number returned here is a certified UPPER bound on the
 * quantity it names for the exact double inputs: floating-point round-off,
 * series truncation and quadrature error are bounded and added (see the
 * named margins in each file).  +INFINITY is returned where the divergence
 * is infinite (an atom at W = +inf in the relevant direction, an
 * (eps, delta > 0) leaf); a dpa_status error (never a value) where it
 * cannot be bounded (e.g. a truncated atom list: slack_hi/slack_lo > 0,
 * which is how discrete_gaussian pairs are built).
 *
 * Nothing here keeps global mutable state; every function is reentrant.
 */
#ifndef DPA_RDP_H
#define DPA_RDP_H

#include <stddef.h>
#include "dpacct/status.h"
#include "mech/pair.h"
#include "model/leaves.h"
#include "model/method.h"

/* ------------------------------------------------------------------ */
/* Per-pair divergences (rdp_pair.c)                                   */
/* ------------------------------------------------------------------ */

/* An upper bound *out on log E(theta) for the pair p (see above).
 * Domain: theta > 0 or theta < -1 (the orders alpha > 1 of either
 * direction), finite.  +INFINITY when E is infinite.
 * Kinds: ATOMS (exact log-sum-exp), GAUSSIAN (theta (1 + theta) mu^2 / 2),
 * LAPLACE (closed form for the continuous part plus its atoms), REVERSE
 * (E_rev(theta) = E_base(-1 - theta)), POISSON over a GAUSSIAN or LAPLACE base
 * (rdp_subsampled.c, rdp_quad.c; atoms exact), SYMMETRIZE of a symmetric
 * base (= the base) or of a POISSON pair over GAUSSIAN/LAPLACE (exact: the
 * W > 0 part of the base and its mirror image, see docs/rdp.md §2.6).
 * Errors: DPA_EINVAL (theta outside the domain, NULL pair),
 * DPA_EUNSUPPORTED (truncated atom list, a kind/base combination listed
 * nowhere above), DPA_ENUMERIC (a series or quadrature could not certify a
 * bound), DPA_ENOMEM. */
dpa_status dpa_rdp_log_e(const dpa_pair *p, double theta, double *out, dpa_error *err);

/* The Rényi divergence of order alpha, certified upper bound:
 * reverse = 0: D_alpha(A||B) (remove direction), 1: D_alpha(B||A) (add).
 * alpha > 1 finite; alpha = 1 gives the KL divergence for ATOMS, GAUSSIAN
 * and LAPLACE pairs and their reversals (the alpha -> 1 limit; other kinds:
 * DPA_EUNSUPPORTED, use alpha > 1: D_alpha is non-decreasing in alpha, so any
 * D_alpha with alpha > 1 bounds KL).  Result >= 0 or +INFINITY. */
dpa_status dpa_rdp_divergence(const dpa_pair *p, double alpha, int reverse, double *out, dpa_error *err);

/* zCDP (rho, xi) as an RDP curve: D_alpha <= xi + rho alpha (Bun & Steinke
 * 2016, Def 1.1), rounded up.  rho >= 0, xi >= 0, alpha >= 1. */
double dpa_rdp_zcdp(double rho, double xi, double alpha);

/* ------------------------------------------------------------------ */
/* Subsampled Gaussian building blocks (rdp_subsampled.c, rdp_quad.c)   */
/* ------------------------------------------------------------------ */

/* Upper bound on log of
 *     I = int_{lo < x < hi} beta(x) (1 - q + q e^x)^gamma dx,
 * beta the density of the base loss W under B (the continuous part):
 *   base DPA_PAIR_GAUSSIAN, par = mu:  W ~ N(-mu^2/2, mu^2);
 *   base DPA_PAIR_LAPLACE,  par = e0:  beta(x) = e^{-(e0 + x)/2} / 4 on (-e0, e0).
 * q in (0, 1], gamma real, lo < hi (+-INFINITY allowed).
 * Gaussian base, gamma >= 0: integer gamma, the finite binomial sum of
 * Mironov, Talwar & Zhang (2019, §3.1); fractional gamma, the two-sided
 * generalized binomial series with signs kept and a Leibniz tail bound
 * (MTZ19 §3.2), on the whole line with a budget of terms after which the
 * certified trapezoidal rule (Trefethen & Weideman 2014, Thm 5.1) takes
 * over.  Gaussian base, gamma < 0: on the whole line the trapezoidal rule,
 * on part of it (and past the rule's node cap) certified Gauss-Legendre
 * panels (Bernstein-ellipse error bound, Trefethen 2008 Thm 4.5) plus
 * analytic tail bounds.  Laplace base: the panels (docs/rdp.md §2.5). */
dpa_status dpa_rdp_mix_log_integral(dpa_pair_kind base, double par, double q, double gamma, double lo,
                                    double hi, double *out, dpa_error *err);

/* The series part alone (Gaussian base, gamma >= 0); exposed for tests. */
dpa_status dpa_rdp_sgm_series(double mu, double q, double gamma, double lo, double hi, double *out,
                              dpa_error *err);
/* The same with at most maxterms terms of the fractional series past
 * floor(gamma) + 2 (capped at the module's own limit); *converged (if not
 * NULL) is 0 when the cap, not the tolerance, ended it (the bound is then
 * still certified, only looser by the Leibniz term). */
dpa_status dpa_rdp_sgm_series_n(double mu, double q, double gamma, double lo, double hi, double maxterms,
                                int *converged, double *out, dpa_error *err);
/* The quadrature part alone (either base, any gamma); exposed for tests.
 * Gaussian base on the whole line: the certified trapezoidal rule below
 * (the panels past its node cap), otherwise Gauss-Legendre panels. */
dpa_status dpa_rdp_quad(dpa_pair_kind base, double par, double q, double gamma, double lo, double hi,
                        double *out, dpa_error *err);
/* The certified trapezoidal rule alone (Gaussian base, par = mu, the whole
 * line, gamma != 0, q < 1; docs/rdp.md §2.5): 0 and *out set, or 1 when it
 * does not apply or would need more than max_nodes nodes.  Exposed for
 * tests. */
int dpa_rdp_trap(double mu, double q, double gamma, double max_nodes, double *out);

/* ------------------------------------------------------------------ */
/* Conversions RDP -> (eps, delta) (rdp_convert.c)                     */
/* ------------------------------------------------------------------ */

typedef enum dpa_rdp_conversion {
    DPA_RDP_CLASSICAL = 0, /* eps = r + log(1/delta)/(alpha-1)  (Mironov 2017, Prop 3) */
    DPA_RDP_IMPROVED = 1,  /* eps = r + log((alpha-1)/alpha) - (log delta + log alpha)/(alpha-1)
                            * (Balle et al. 2020 Thm 21; Canonne-Kamath-Steinke 2020 Prop 12) */
    DPA_RDP_OPTIMAL = 2    /* the tight single-order conversion (docs/rdp.md §4.3): the
                            * largest delta(eps) over all pairs with D_alpha <= r */
} dpa_rdp_conversion;

/* "classical", "improved", "optimal"; NULL for an unknown value. */
const char *dpa_rdp_conversion_name(dpa_rdp_conversion c);

/* For one order alpha > 1 and a bound r >= 0 on D_alpha (r = +inf allowed):
 * an upper bound on delta(eps) (any finite eps), in [0, 1]. */
double dpa_rdp_delta_from(dpa_rdp_conversion c, double alpha, double r, double eps);
/* ... and an upper bound on the smallest eps >= 0 with delta(eps) <= delta
 * (delta in (0, 1)); +INFINITY if r is infinite. */
double dpa_rdp_eps_from(dpa_rdp_conversion c, double alpha, double r, double delta);

/* LOWER bounds on what the optimal conversion can give for (alpha, r)
 * (docs/rdp.md §4.4: the best binary pairs with D_alpha <= r): on its eps at
 * delta, and on its delta at eps.  They only serve to skip orders that
 * cannot beat a value already found; they are not privacy bounds. */
double dpa_rdp_opt_eps_lower(double alpha, double r, double delta);
double dpa_rdp_opt_delta_lower(double alpha, double r, double eps);
/* The accountant's search key for delta queries with the classical or
 * improved conversion: the log of the delta bound before it is capped at 1
 * (dpa_rdp_delta_from is min(1, e^key (1 + 2u)), a monotone function of it;
 * the key has no plateau where the bound is capped).  +INFINITY for r = +inf. */
double dpa_rdp_log_delta_key(dpa_rdp_conversion c, double alpha, double r, double eps);

/* ------------------------------------------------------------------ */
/* Accountant over orders (rdp_acct.c, rdp_eval.c, rdp_query.c)       */
/* ------------------------------------------------------------------ */

typedef struct dpa_rdp dpa_rdp;

/* The documented default orders (docs/rdp.md §3): 1.01..1.99 step 0.01,
 * 2..16 step 0.25, 16.5..64 step 0.5, then integers growing geometrically
 * (ratio ~1.05) to 10000.  Writes at most cap values to out (out may be
 * NULL) and returns the number of orders. */
size_t dpa_rdp_default_orders(double *out, size_t cap);

/* A new, empty composition (RDP 0 at every order).  orders: n values > 1,
 * finite, strictly increasing; NULL (n ignored) for the default orders.
 * DPA_EINVAL for a bad order list, DPA_ENOMEM. */
dpa_rdp *dpa_rdp_new(const double *orders, size_t n, dpa_error *err);
void dpa_rdp_free(dpa_rdp *a);

/* Compose count >= 0 (finite, may be 1e12) copies of the pair whose remove
 * direction is p (p is copied; the add direction is its reversal). */
dpa_status dpa_rdp_add_pair(dpa_rdp *a, const dpa_pair *p, double count, dpa_error *err);
/* Compose count copies of a zCDP (rho, xi) guarantee (both directions:
 * zCDP bounds the divergence of every ordered neighbouring pair).  Also the
 * discrete Gaussian: N_Z(s, sigma^2) vs N_Z(0, sigma^2) has
 * D_alpha <= alpha s^2/(2 sigma^2) (Canonne-Kamath-Steinke 2020, Prop 5),
 * i.e. rho = s^2/(2 sigma^2), xi = 0. */
dpa_status dpa_rdp_add_zcdp(dpa_rdp *a, double rho, double xi, double count, dpa_error *err);
/* Compose count copies of the discrete Gaussian (sigma, integer s) truncated
 * at T (2T >= s) with both measures conditioned on their common support
 * [s - T, T] (symmetric), by the direct sum (renyi_dg_tail.c): the part of
 * the truncated pair without its mass at +inf (rdp_method.c keeps that
 * apart as an extra delta). */
dpa_status dpa_rdp_add_dg_conditioned(dpa_rdp *a, double sigma, double s, double T, double count, dpa_error *err);
/* Compose every leaf of a flattened spec (src/model/leaves.h).  Composite
 * leaves (a subsampled composition) are bounded through the inner
 * composition's integer-order divergences (docs/rdp.md §2.7): Poisson remove
 * direction exactly at integer orders (binomial expansion), log-convex
 * interpolation between them, add direction by the degree-2 Taylor bound;
 * "sample" (replace-one) composites through E_S <= E_R + E_R' - 1.
 * DPA_EUNSUPPORTED (with the reason) for leaves that cannot be bounded. */
dpa_status dpa_rdp_add_leafset(dpa_rdp *a, const dpa_leafset *s, dpa_error *err);

/* Number of orders and the orders themselves (owned by a). */
size_t dpa_rdp_norders(const dpa_rdp *a);
const double *dpa_rdp_orders(const dpa_rdp *a);
/* The composition's RDP curve on the grid: out[i] >= D_{orders[i]} of the
 * composition in direction dir (0 remove, 1 add).  Values +INFINITY allowed.
 * out may be NULL (the values are then only cached). */
dpa_status dpa_rdp_curve(dpa_rdp *a, int dir, double *out, dpa_error *err);
/* The composition's RDP at any order alpha > 1.  Every value computed (here,
 * by dpa_rdp_curve or by a query) is cached in the accountant per order and
 * direction, until a term is added (so a is modified: not thread safe). */
dpa_status dpa_rdp_eval(dpa_rdp *a, double alpha, int dir, double *out, dpa_error *err);

typedef struct dpa_rdp_result {
    double value;        /* the certified upper bound (eps or delta): max over directions */
    double value_dir[2]; /* per direction (remove, add) */
    double alpha_dir[2]; /* order attaining each direction's bound */
    double grid_value;   /* the bound before the continuous refinement (grid orders only) */
    int binding;         /* direction attaining value: 0 remove, 1 add */
} dpa_rdp_result;

/* Smallest eps with delta(eps) <= delta (an upper bound), delta in (0, 1):
 * for each direction, the best grid order of the improved (or classical)
 * conversion, then a refinement over real alpha between its grid
 * neighbours, then (optimal conversion) the optimal conversion at the grid
 * orders around it and around the refined order; the max over directions.
 * The curve is evaluated lazily: the best grid order is found by a search
 * that assumes the conversion unimodal along the grid (true for pairs and
 * zCDP terms; composite terms and order lists of at most 24 are scanned in
 * full), and orders whose optimal conversion provably cannot win are
 * skipped (docs/rdp.md §3.1).  +INFINITY when the curve is infinite at every
 * order (e.g. an approx leaf). */
dpa_status dpa_rdp_epsilon(dpa_rdp *a, double delta, dpa_rdp_conversion c, dpa_rdp_result *out,
                           dpa_error *err);
/* delta(eps), an upper bound, eps finite; same procedure. */
dpa_status dpa_rdp_delta(dpa_rdp *a, double eps, dpa_rdp_conversion c, dpa_rdp_result *out,
                         dpa_error *err);

/* ------------------------------------------------------------------ */
/* Internal helpers shared by the files above                          */
/* ------------------------------------------------------------------ */

/* One-dimensional minimization (rdp_numeric.c).  f returns a status
 * (nonzero aborts the search and is returned); values may be +INFINITY. */
typedef int (*dpa_rdp_minfn)(double x, void *ctx, double *fx);
/* Bracket a minimum of f on [lo, hi] starting at x0 (lo <= x0 <= hi) with a
 * first step `step`, doubling the steps downhill: on return
 * lo <= *a <= *x <= *c <= hi, *fx = f(*x) and f(*x) <= f at the evaluated
 * ends; when the walk reaches lo or hi, *x may be that end. */
int dpa_rdp_bracket(dpa_rdp_minfn f, void *ctx, double lo, double hi, double x0, double step, double *a,
                    double *x, double *c, double *fx);
/* Brent's minimization on [a, b] from x (a <= x <= b, f(x) = fx known),
 * stopping once the bracket is within 2 (rtol |x| + atol) of x or after
 * maxit evaluations; *xmin, *fmin: the best point evaluated (x included). */
int dpa_rdp_brent(dpa_rdp_minfn f, void *ctx, double a, double b, double x, double fx, double rtol,
                  double atol, int maxit, double *xmin, double *fmin);

/* x rounded up by k units of round-off relative, and an absolute floor
 * (x may be negative; +-inf and NaN pass through). */
double dpa_rdp_up(double x, double k);
/* l = log(Phi(b) - Phi(a)) for a < b (+-inf allowed), where the finite
 * ends a, b carry an absolute error of at most arg_err, with *relerr in
 * [0, 1] such that |(Phi(b) - Phi(a)) - e^l| <= *relerr e^l for the exact
 * ends (relerr = 1 when cancellation leaves only 0 <= value <= e^l). */
double dpa_rdp_log_gauss_interval(double a, double b, double arg_err, double *relerr);

/* Sum of terms sign * e^{l} (each with relative error r), buffered and
 * summed at the end at the scale of the largest term, with compensated
 * summation (so the summation error does not grow with the number of
 * terms).  Allocation failure is reported by dpa_rdp_acc_log_upper
 * returning NaN. */
#define DPA_RDP_ACC_INLINE 16
typedef struct dpa_rdp_acc {
    double *l, *r;
    signed char *s;
    size_t n, cap;
    int inf, failed;
    /* the first terms live here (no allocation for short sums); the struct
     * must not be copied while in use */
    double lbuf[DPA_RDP_ACC_INLINE], rbuf[DPA_RDP_ACC_INLINE];
    signed char sbuf[DPA_RDP_ACC_INLINE];
} dpa_rdp_acc;
void dpa_rdp_acc_init(dpa_rdp_acc *a);
void dpa_rdp_acc_free(dpa_rdp_acc *a);
/* l = -INFINITY (a zero term) is ignored; l = +INFINITY makes the sum +inf. */
void dpa_rdp_acc_add(dpa_rdp_acc *a, double l, int sign, double r);
/* log of an upper bound on (the exact sum of the terms) + e^{log_extra}
 * (log_extra: -INFINITY for none), term and summation errors included;
 * -INFINITY if that bound is <= 0; NaN if an allocation failed. */
double dpa_rdp_acc_log_upper(const dpa_rdp_acc *a, double log_extra);

/* The method table of the rdp method (src/rdp/rdp_method.c), which the accountant dispatches to. */
extern const dpa_method_ops dpa_method_rdp_ops;

/* renyi_dg_tail.c (dpa_renyi and the RDP accountant's Poisson-subsampled discrete
 * Gaussian terms, rdp_eval.c): */
/* A certified bracket [*lo, *hi] on log E(theta) of the remove pair of a
 * discrete Gaussian (sigma, integer sensitivity s, truncation T, or T < 0
 * untruncated) Poisson-subsampled at rate q in (0, 1] (1: not subsampled),
 * any real theta but 0 and -1, except theta > 0 with T >= 0 (mass at +inf:
 * the caller's case); needs 2T >= s.  Returns 0, 1 if E = +inf (*lo = *hi =
 * +inf), -1 if the direct sum would be too long (no bracket).  cond (q = 1, T
 * finite): the pair of both measures conditioned on their common support
 * [s - T, T] instead (the rdp method's truncated discrete Gaussian without
 * its mass at +inf, kept apart as an extra delta: rdp_method.c). */
int dpa_renyi_dg_log_e(double sigma, double s, double q, double T, int cond, double theta, double *lo, double *hi);

#endif

/* The characteristic-function (phi) accountant: CF Algorithm 1, with the
 * atoms of every leaf handled exactly and two independent inversions.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Internal header (prefix dpa_phi_).  See docs/phi.md for the method, the
 * formulas with their paper references, and what a result guarantees.
 *
 * Objects.  For one direction of a leaf's dominating pair (A, B) with
 * privacy loss W = log dA/dB (remove: the pair as built; add: its reversal
 * (B, A), LT eq 7), everything is a function of the *finite* A-law of W:
 *   delta(eps) = H(eps) + A(W = +inf),   H(x) = E_A[(1 - e^{x - W})_+ ; W finite]
 * (LT eq 20).  The tilted moment function of the finite part,
 *   M(z) = E_A[e^{zW} ; W finite]      (complex z, Re z in [-1, inf)),
 * gives phi(t) = M(it) (the characteristic function of CF), phi'(t) =
 * M(it - 1) (the law of W under B, CF's phi of (Q, P) reflected) and the
 * Renyi function E_{1+z} (LT Def 2.2) on the Bromwich line Re z > 0.
 * Composition multiplies M (CF Prop 12), so a composition is the symbolic
 * sum  log M(z) = sum_i count_i log M_i(z)  (CF Algorithm 1, lines 4-5).
 *
 * Representation of log M_i (all leaf kinds): for a tilt r (real) and t real,
 *   log M_i(r + it) = log M_i(r) + i t m_i(r) + psi_i(r; t),
 * m_i(r) the mean of W under the normalized tilted law e^{rW} dA / M_i(r).
 * psi is computed directly in a cancellation-free form (sums of
 * p_k (e^{i t d_k} - 1) and a complex log1p), so it keeps relative accuracy
 * for small t and count * psi stays accurate for counts up to 1e15; the
 * linear phase t * sum_i count_i m_i is summed in double-double.  Counts are
 * integers, so any branch of the complex logarithm gives the same
 * exp(sum count * log M): no phase unwrapping is needed.
 */
#ifndef DPA_PHI_H
#define DPA_PHI_H

#include <complex.h>
#include <math.h>
#include <stddef.h>
#include "dpacct/status.h"
#include "mech/pair.h"
#include "model/method.h"

struct dpa_leafset;

/* ------------------------------------------------------------------ leaves
 * (phi_leaf.c) */

/* The continuous part of a leaf in one direction. */
typedef enum dpa_phi_cont {
    DPA_PHI_CONT_NONE = 0,      /* atoms only */
    DPA_PHI_CONT_GAUSS,         /* W ~ N(mu^2/2, mu^2) under A (closed form, LT Thm 2.4) */
    DPA_PHI_CONT_LAPLACE,       /* Laplace's continuous part, eps0 = s/b (closed form) */
    DPA_PHI_CONT_QUAD_GAUSS,    /* Poisson-subsampled Gaussian: numerical integration */
    DPA_PHI_CONT_QUAD_LAPLACE   /* Poisson-subsampled Laplace continuous part: numerical */
} dpa_phi_cont;

/* One leaf in one direction.  Finite atoms carry this direction's A-masses;
 * atoms at +inf are folded into inf_lo/inf_up; B-only atoms (at -inf) carry
 * no A-mass and are dropped. */
typedef struct dpa_phi_leaf {
    double count;          /* integer >= 1 */
    size_t natoms;
    double *w, *la;        /* finite atoms: loss, log A-mass (owned, sorted by w) */
    double inf_lo, inf_up; /* A(W = +inf), linear; inf_up adds the omitted (slack) mass */
    dpa_phi_cont cont;
    double par;            /* mu (GAUSS kinds) or eps0 (LAPLACE kinds) of the base mechanism */
    double q;              /* Poisson rate for the QUAD kinds (q = 1 allowed: same law as the
                            * closed form, used by the tests) */
    int sign;              /* +1: remove direction (W = log(q e^w + 1 - q) of the base loss w);
                            * -1: add direction (W = -log(q e^w + 1 - q), measure B_base) */
} dpa_phi_leaf;

/* Build the leaf of `pair` (a remove-direction pair as in src/model/leaves.h)
 * in direction dir (0 remove, 1 add = the reversed pair).  Supported pair
 * kinds: ATOMS, GAUSSIAN, LAPLACE, POISSON over GAUSSIAN or LAPLACE, and
 * REVERSE of any of these.  DPA_EUNSUPPORTED (with a reason naming the
 * "pld" method) for SYMMETRIZE pairs (sampling without replacement) and
 * other bases; DPA_EINVAL for a count that is not an integer in
 * [1, 1e15]; DPA_ENOMEM. */
dpa_status dpa_phi_leaf_init(dpa_phi_leaf *l, const dpa_pair *pair, int dir, double count, dpa_error *err);
void dpa_phi_leaf_clear(dpa_phi_leaf *l);
/* 1 if the leaf's finite law is absolutely continuous with a characteristic
 * function that decays (Gaussian, Poisson-subsampled Gaussian): a factor
 * that makes every term of a composition continuous (docs/phi.md §3). */
int dpa_phi_leaf_smooth(const dpa_phi_leaf *l);

/* A leaf prepared at one tilt r: log M(r), the tilted mean and variance,
 * and the point representation used for psi (atoms, then inner quadrature
 * nodes of the continuous part): offsets d_k = W_k - mean and normalized
 * weights p_k (sum 1).  Closed-form continuous parts (GAUSS, LAPLACE) are not
 * in the point list; their share of M(r) is rho_c. */
typedef struct dpa_phi_tilt {
    double r, logM, mean, var;
    double tmax;           /* inner rule designed for |t| <= tmax */
    size_t n;
    double *d, *p;         /* owned */
    double ed;             /* sum p_k |d_k| (round-off scale) */
    size_t nc0;            /* points [nc0, n) are inner quadrature nodes */
    double lrho_c;         /* log share of a closed-form continuous part (-inf if none) */
    double logMc, meanc_shift; /* closed-form part: log M_c(r), and (its mean - mean) */
    double inner_err;      /* estimated absolute error of psi from the inner rule (node doubling) */
    /* Set by dpa_phi_tilt_prepare_pair on its second tilt: 1 if its points
     * are the first tilt's (same positions, same order) and dpa_phi_psi_pair
     * evaluates it with the first tilt's sines; dshift = mean0 - mean1,
     * psum = sum p_k, ed_sh = sum p_k |d0_k| (d0: the first tilt's offsets). */
    int shared;
    double dshift, psum, ed_sh;
    /* cache of the inner rule's trimmed range (QUAD kinds) for this leaf at
     * tilt trim_r, reused by later preparations of the same tilt */
    const void *trim_leaf;
    double trim_r, trim_a, trim_b, trim_key[4];
} dpa_phi_tilt;

/* Prepare l at tilt r (r >= -1) for |t| <= tmax (tmax < 0: mass, mean and
 * variance only, from the first inner rule without the doubling check).  The inner rule (QUAD kinds) is refined by panel halving
 * until two successive rules agree to DPA_PHI_INNER_TOL at t = tmax, tmax/2
 * and tmax/8; DPA_ENUMERIC if that fails (inner_err then holds the
 * estimate).  *tl must be zeroed or previously prepared (it is reused). */
dpa_status dpa_phi_tilt_prepare(const dpa_phi_leaf *l, double r, double tmax, dpa_phi_tilt *tl, dpa_error *err);
void dpa_phi_tilt_clear(dpa_phi_tilt *tl);
/* Prepare l at two tilts r0 and r1 for |t| <= tmax (as dpa_phi_tilt_prepare
 * twice).  For the QUAD kinds both tilts get the same points (the inner rule
 * covers the union of their trimmed ranges and is refined jointly), and when
 * their means differ by at most DPA_PHI_SHARE_SHIFT of t1's spread sum
 * p_k |d_k| (ed), t1 is marked `shared`: dpa_phi_psi_pair then evaluates
 * both with one sine per point, half the cost of two dpa_phi_psi calls. */
dpa_status dpa_phi_tilt_prepare_pair(const dpa_phi_leaf *l, double r0, double r1, double tmax, dpa_phi_tilt *t0,
                                     dpa_phi_tilt *t1, dpa_error *err);
/* psi_r(t) = log M(r + it) - log M(r) - i t mean  (|t| <= tmax); *err (may
 * be NULL) receives an absolute error bound estimate on psi: round-off
 * (rigorous to first order) plus inner_err (an estimate). */
double complex dpa_phi_psi(const dpa_phi_leaf *l, const dpa_phi_tilt *tl, double t, double *err);
/* psi of two tilts prepared by dpa_phi_tilt_prepare_pair at the same t (the
 * same values as two dpa_phi_psi calls up to round-off; err0/err1 may be
 * NULL).  For a shared t1, its round-off bound uses the first tilt's offsets
 * shifted by dshift (8u |t| ed_sh + 16u |t dshift| (|S1'| + psum) instead of
 * 8u |t| ed): at most 11% more in that term (DPA_PHI_SHARE_SHIFT). */
void dpa_phi_psi_pair(const dpa_phi_leaf *l, const dpa_phi_tilt *t0, const dpa_phi_tilt *t1, double t,
                      double complex *psi0, double *err0, double complex *psi1, double *err1);
/* log of a non-increasing-in-|t| envelope of |M(r + it)| / M(r) where one
 * is known (atoms: 0; Gaussian: exact; Laplace: |sinh| <= cosh), and the
 * value log|M(r + it)/M(r)| itself for the quadrature kinds (not an
 * envelope: docs/phi.md §5 on what this assumes). */
double dpa_phi_log_env(const dpa_phi_leaf *l, const dpa_phi_tilt *tl, double t);
/* dpa_phi_log_env of two tilts prepared by dpa_phi_tilt_prepare_pair (one
 * sine per point when t1 is shared). */
void dpa_phi_log_env_pair(const dpa_phi_leaf *l, const dpa_phi_tilt *t0, const dpa_phi_tilt *t1, double t,
                          double *e0, double *e1);
/* Convenience for tests: log M(z) at z = r + it for one leaf (prepares a
 * tilt internally).  DPA_ENUMERIC if the inner rule cannot be certified. */
dpa_status dpa_phi_leaf_log_mgf(const dpa_phi_leaf *l, double r, double t, double complex *out, dpa_error *err);
/* The closed-form log M_c(z) of Laplace's continuous part (eps0 = e0),
 * M_c(z) = e^{-e0/2} sinh((z + 1/2) e0) / (2z + 1)   (the continuous part of
 * Laplace's loss, GDP Lemma A.6; the third
 * term of Laplace's phi with z = it; any complex z). */
double complex dpa_phi_laplace_cont_logmgf(double e0, double complex z);

/* Inner-rule agreement (absolute, on the normalized psi sum) required by
 * dpa_phi_tilt_prepare: a few hundred u, the size of the round-off of a
 * sum of ~1000 terms of size <= 1. */
#define DPA_PHI_INNER_TOL 1e-13
/* Largest |mean0 - mean1| / ed for a shared pair evaluation: the shifted
 * evaluation's round-off term grows from 8u |t| ed to at most
 * 8u |t| ed_sh + 16u |t Delta| (|S1'| + psum) <= 8u |t| (ed + 7 |Delta|)
 * (ed_sh <= ed + |Delta| psum, psum ~ 1, |S1'| <= 2), i.e. by at most
 * 7/64 < 11% (3/64 when |S1'| is small, as it is where the term matters). */
#define DPA_PHI_SHARE_SHIFT (1.0 / 64)

/* ------------------------------------------------------------------ atoms
 * (phi_atoms.c): the exact composition of atom-only leaves. */

typedef struct dpa_phi_atomset {
    size_t n;
    double *w;          /* composed finite losses, ascending (owned) */
    double *m;          /* their A-masses, linear (owned) */
    double pos_err;     /* every true loss is within pos_err of w[i] */
    double rel_err;     /* every true mass is within a relative rel_err of m[i] */
    double abs_err;     /* plus this absolute amount in total (underflow) */
    int lattice;        /* 1 if composed on a common lattice */
} dpa_phi_atomset;

/* Compose the atoms of n atom-only leaves (cont == NONE), counts included:
 * on a common lattice when all atoms lie on one (spacings commensurable to
 * DPA_PHI_LATTICE_TOL), else as an exact list with equal losses merged.
 * DPA_EUNSUPPORTED when the composed list would exceed max_atoms points or
 * the convolution work DPA_PHI_ATOM_WORK (the message names the exact and
 * pld methods). */
dpa_status dpa_phi_atoms_compose(const dpa_phi_leaf *const *leaves, size_t n, size_t max_atoms, dpa_phi_atomset *out,
                                 dpa_error *err);
void dpa_phi_atoms_free(dpa_phi_atomset *s);
/* Bracket of H(x) = sum_i m_i (1 - e^{x - w_i})_+ for the true atoms
 * (positions within pos_err, masses within rel_err/abs_err): *lo <= H <= *up. */
void dpa_phi_atoms_H(const dpa_phi_atomset *s, double x, double *lo, double *up);

#define DPA_PHI_LATTICE_TOL 1e-11
#define DPA_PHI_ATOM_WORK 4e8

/* ------------------------------------------------------------------ quadrature
 * (phi_quad.c) */

/* Gauss-Legendre rule on [-1, 1] with DPA_PHI_GL_N points from GSL's
 * glfixed table, written into the caller's arrays (nodes ascending).
 * DPA_ENOMEM if GSL cannot allocate the table. */
#define DPA_PHI_GL_N 16
dpa_status dpa_phi_gl(double x[DPA_PHI_GL_N], double w[DPA_PHI_GL_N], dpa_error *err);

/* ------------------------------------------------------------------ inversion
 * (phi_invert.c) */

/* The composed finite law of one direction, seen by the inversions. */
typedef struct dpa_phi_comp {
    size_t nleaves;
    const dpa_phi_leaf *const *leaves;
} dpa_phi_comp;

/* Result of one inversion of H(x) (without the +inf mass). */
typedef struct dpa_phi_inv {
    double value;       /* the fine-rule value */
    double quad_err;    /* SAFETY * |fine - coarse| (node doubling) */
    double trunc_err;   /* truncation of the integration range (envelope estimate) */
    double round_err;   /* floating-point allowance (first-order bound) */
    size_t nodes;       /* outer nodes used (coarse + fine) */
    int certified;      /* 1 if the doubling estimate was in its trusted regime */
    double lambda;      /* Bromwich: the tilt lambda = c - 1 used */
} dpa_phi_inv;

typedef struct dpa_phi_gp dpa_phi_gp;

/* Gil-Pelaez (CF Lemma 17 in its sub-probability form, docs/phi.md):
 *   H(x) = (M(0) - e^x M(-1))/2
 *        + (1/pi) int_0^inf Im[e^{-itx} (M(it) - e^x M(it - 1))] / t dt,
 * Gauss-Legendre on panels over [0, T], T from the envelope of |M|.  The
 * state caches psi of every leaf at the nodes (per panel count). */
dpa_phi_gp *dpa_phi_gp_new(const dpa_phi_comp *c, dpa_error *err);
void dpa_phi_gp_free(dpa_phi_gp *g);
/* H(x) of the composition (mirror = 0) or of its reversal (mirror = 1: the
 * add direction when c holds the remove direction's leaves; its moment
 * function is M(-1 - z), so both directions use the same cached nodes).
 * The panel count is at least the one needed at xlev when xlev is finite
 * (a sequence of queries on [.., xlev] then shares one pair of node sets). */
dpa_status dpa_phi_gp_H(dpa_phi_gp *g, double x, int mirror, double xlev, dpa_phi_inv *out, dpa_error *err);
/* log masses, means and variances of the composed W under A and B (sides
 * r = 0 and r = -1; mirror = 1: of the reversal). */
void dpa_phi_gp_moments(const dpa_phi_gp *g, int mirror, double logm[2], double mean[2], double var[2]);
/* Standard deviation of the composed W (max of A and B; a scale), the
 * integration range T, and the truncation estimates (relative to M(0) and
 * M(-1)); T = 0 when the envelope scan failed. */
double dpa_phi_gp_sd(const dpa_phi_gp *g);
double dpa_phi_gp_range(const dpa_phi_gp *g, double tail[2]);

/* Bromwich (LT eq 37, c > 1; docs/phi.md), at c = 1 + lambda > 1:
 *   H(x) = (1/pi) int_0^inf Re[ e^{-(lambda + iw) x} M(lambda + iw)
 *                               / ((1 + lambda + iw)(lambda + iw)) ] dw,
 * lambda at the saddle point of e^{-lambda x} M(lambda) / (lambda (1 + lambda)). */
dpa_status dpa_phi_bromwich_H(const dpa_phi_comp *c, double x, dpa_phi_inv *out, dpa_error *err);

/* Factor applied to the coarse/fine difference (the fine rule's error is
 * in practice orders below that difference; 2 is a margin, not a proof). */
#define DPA_PHI_SAFETY 2.0

/* ------------------------------------------------------------------ accountant
 * (phi_acct.c) */

typedef enum dpa_phi_inversion {
    DPA_PHI_AUTO = 0,     /* Gil-Pelaez; Bromwich where GP's bracket is wide or uncertified */
    DPA_PHI_GP = 1,       /* Gil-Pelaez only */
    DPA_PHI_BROMWICH = 2, /* Bromwich only */
    DPA_PHI_BOTH = 3      /* both, intersected; disagreement makes the result uncertified */
} dpa_phi_inversion;

typedef struct dpa_phi_options {
    dpa_phi_inversion inversion; /* default DPA_PHI_AUTO */
    size_t max_atoms;            /* exact atom list limit, default 100000 */
    double eps_rel_tol;          /* eps bisection: stop at width <= tol * max(1, eps); default 1e-10 */
} dpa_phi_options;

void dpa_phi_options_init(dpa_phi_options *o);

typedef enum dpa_phi_how {
    DPA_PHI_HOW_NONE = 0,
    DPA_PHI_HOW_ATOMS = 1,    /* exact atom composition (no continuous part) */
    DPA_PHI_HOW_GP = 2,
    DPA_PHI_HOW_BROMWICH = 3,
    DPA_PHI_HOW_BOTH = 4,
    DPA_PHI_HOW_TRIVIAL = 5   /* nothing certified: trivial bounds */
} dpa_phi_how;

typedef struct dpa_phi_result {
    double upper, lower;               /* bracket of the queried quantity (max over directions) */
    double upper_remove, upper_add;    /* per direction (equal when symmetric) */
    double lower_remove, lower_add;
    int binding;                       /* 0 symmetric, 1 remove, 2 add */
    /* 1 if every number above comes from error estimates in their trusted
     * regime (docs/phi.md §6: an estimate, not a proof); 0: the bracket is
     * still returned but is the trivial one (or, for eps, +inf above) where
     * the method could not certify, and `note` says why. */
    int certified;
    dpa_phi_how how;                   /* inversion that produced the binding bracket */
    double quad_err, trunc_err, round_err; /* binding direction, at the query (eps: at upper) */
    size_t nodes;
    char note[160];
} dpa_phi_result;

typedef struct dpa_phi dpa_phi;

/* An empty composition (delta = max(0, 1 - e^eps)).  opt may be NULL. */
dpa_phi *dpa_phi_new(const dpa_phi_options *opt, dpa_error *err);
void dpa_phi_free(dpa_phi *ph);
/* Compose `count` copies of the pair (remove direction; the add direction is
 * its reversal): O(1) in count (CF Algorithm 1).  The pair is read, not
 * kept.  Errors as dpa_phi_leaf_init; on error the composition is unchanged. */
dpa_status dpa_phi_add_pair(dpa_phi *ph, const dpa_pair *pair, double count, dpa_error *err);
/* Add every leaf of a flattened spec (src/model/leaves.h).  Composite leaves
 * (a subsampled composition) and sampling without replacement are refused
 * with DPA_EUNSUPPORTED naming "pld". */
dpa_status dpa_phi_add_leafset(dpa_phi *ph, const struct dpa_leafset *L, dpa_error *err);
/* Check that the composition can be evaluated: atoms only (exact list within
 * max_atoms), or at least one smooth leaf (dpa_phi_leaf_smooth) so that every
 * term of the mixture is continuous with a decaying characteristic function.
 * DPA_EUNSUPPORTED with the reason otherwise (e.g. Laplace leaves without a
 * Gaussian factor: their continuous part's phi decays like 1/t). */
dpa_status dpa_phi_prepare(dpa_phi *ph, dpa_error *err);
/* delta(eps) for finite eps, both directions, max reported. */
dpa_status dpa_phi_delta(dpa_phi *ph, double eps, dpa_phi_result *out, dpa_error *err);
/* Smallest eps >= 0 with delta(eps) <= delta, delta in (0, 1): upward scan
 * from 0 then bisection on the upper and the lower delta curves (docs/phi.md;
 * no cap on eps).  upper = +inf when the upper curve never reaches delta
 * where the method can certify (or delta <= the +inf mass: then lower =
 * +inf as well). */
dpa_status dpa_phi_epsilon(dpa_phi *ph, double delta, dpa_phi_result *out, dpa_error *err);

/* The leaves of direction dir (0 remove, 1 add: the reversed pairs), *n of
 * them (lent: valid until the next dpa_phi_add_* or dpa_phi_free). */
const dpa_phi_leaf *dpa_phi_leaves(const dpa_phi *ph, int dir, size_t *n);
/* Bracket [*lo, *up] of the composed +inf mass 1 - prod_i (1 - inf_i)^{k_i}
 * of n leaves of one direction. */
void dpa_phi_inf_mass(const dpa_phi_leaf *lv, size_t n, double *lo, double *up);

/* ------------------------------------------------------------------ outputs
 * (phi_cf.c; docs/phi.md §9) */

/* phi(t_j) = E_A[e^{i t_j W} ; W finite] of the composition of the nl
 * leaves lv (one direction), j < n: re, im and error (a bound on
 * |computed - true|, see phi_cf.c) are the caller's arrays of n.
 * *certified = 0 when a leaf is evaluated by quadrature (its error term is
 * then the node-doubling estimate).  DPA_ENUMERIC when a quadrature does not
 * settle or a value is not finite; DPA_ENOMEM. */
dpa_status dpa_phi_cf(const dpa_phi_leaf *lv, size_t nl, const double *t, size_t n, double *re, double *im,
                      double *error, int *certified, dpa_error *err);
/* delta(x) of the composition of the nl leaves lv (one direction) by the
 * Bromwich integral of LT eq 37 (dpa_phi_bromwich_H) plus the composed +inf
 * mass: *value an estimate, *error its estimated absolute error (+INFINITY
 * when the node doubling did not settle).  Needs a smooth leaf
 * (dpa_phi_leaf_smooth) for the integral to converge: the caller checks. */
dpa_status dpa_phi_lt_estimate(const dpa_phi_leaf *lv, size_t nl, double x, double *value, double *error,
                               dpa_error *err);

/* A double-double sum hi + lo of products k w (huge counts times means or
 * atom positions), shared by the atom lattice and the inversion. */
typedef struct dd { double hi, lo; } dd;
static inline void dd_add_prod(dd *s, double k, double w)
{
    double p = k * w, pe = fma(k, w, -p);
    double t = s->hi + p, z = t - s->hi, e = (s->hi - (t - z)) + (p - z);
    s->hi = t;
    s->lo += e + pe;
}

/* Compensated (Kahan) summation: the error of a sum of terms x_i is at most
 * (2u + 2n u^2) sum |x_i| (Higham, Accuracy and Stability, Thm 4.8 / eq
 * 4.13), independent of the order and of the partial sums; the psi and
 * Gil-Pelaez sums use it so that their summation bounds are rigorous to
 * first order (plain recursive summation can lose n u sum |x_i|). */
typedef struct dpa_phi_ks { double s, c; } dpa_phi_ks;
static inline void dpa_phi_ks_add(dpa_phi_ks *k, double x)
{
    double y = x - k->c, t = k->s + y;
    k->c = (t - k->s) - y;
    k->s = t;
}

/* The method table of the phi method (src/phi/phi_method.c), which the accountant dispatches to. */
extern const dpa_method_ops dpa_method_phi_ops;

#endif

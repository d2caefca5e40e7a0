/* What the files of dpa_renyi (include/dpacct/renyi.h) share: the leaf and
 * pair helpers of src/rdp/renyi_pair.c, the evaluations at real
 * (renyi_real.c) and complex (renyi_complex.c) orders, and the bits that say
 * how a value came about.  src/rdp/renyi.c has the notation.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef DPA_RDP_RENYI_INTERNAL_H
#define DPA_RDP_RENYI_INTERNAL_H

#include <complex.h>
#include <stddef.h>
#include "dpacct/renyi.h"
#include "dpacct/status.h"
#include "mech/pair.h"
#include "model/leaves.h"

/* how a direction's value came about (bits, for the note) */
enum {
    DPA_RENYI_H_CLOSED = 1,    /* closed forms */
    DPA_RENYI_H_RDP = 2,       /* the RDP module's certified upper bound (A > 1) */
    DPA_RENYI_H_BINOM = 4,     /* lower bound from the binomial expansion */
    DPA_RENYI_H_LOW0 = 8,      /* some leaf's lower bound is the trivial 0 */
    DPA_RENYI_H_PHI = 16,      /* the phi module's quadrature estimate */
    DPA_RENYI_H_BETA = 32,     /* upper bound through D_b, b = 1 + RENYI_BETA_STEP */
    DPA_RENYI_H_SERIES = 64,   /* lower bound from the series/quadrature upper bound on log E */
    DPA_RENYI_H_COMP = 128,    /* a composite leaf: value = upper bound */
    DPA_RENYI_H_INF = 256,     /* mass at +inf (A >= 1): D_A = +inf */
    DPA_RENYI_H_SING = 512,    /* E = 0: mutually singular (A < 1) */
    DPA_RENYI_H_SERVAL = 1024, /* value = the series-based bound (no quadrature estimate) */
    DPA_RENYI_H_HEUR = 2048,   /* complex: some branch step was heuristic */
    DPA_RENYI_H_BR = 4096,     /* lower: the best member of the bounded-range class (renyi_br.c) */
    DPA_RENYI_H_BOUND = 8192,  /* a bound-only leaf (zcdp, repeat_and_select, SVT): upper its RDP bound, lower 0 */
    DPA_RENYI_H_QUAD = 16384,  /* lower: the certified lower quadrature (renyi_pg.c) */
    DPA_RENYI_H_DGSUM = 32768  /* a discrete Gaussian leaf: direct sum with certified tails */
};

/* ---- renyi_pair.c ---- */

/* The pair's kind, for messages. */
const char *dpa_renyi_pair_kind_name(const dpa_pair *p);
/* 1 if some pair of the chain has omitted mass (slack). */
int dpa_renyi_truncated(const dpa_pair *p);
/* 1 if the pair (leaf) in direction dir has mass at loss +inf. */
int dpa_renyi_pair_inf(const dpa_pair *p, int dir);
int dpa_renyi_leaf_inf(const dpa_leaf *l, int dir);
/* Kinds: log E in closed form; evaluated by the phi module; bounded at
 * every real order here; bounded by the RDP module at orders > 1 only. */
int dpa_renyi_closed_kind(const dpa_pair *p);
int dpa_renyi_phi_kind(const dpa_pair *p);
int dpa_renyi_bounded_kind(const dpa_pair *p);
int dpa_renyi_upper_only_kind(const dpa_pair *p);
/* log E_p(theta) and KL in closed form, with an absolute error bound *e. */
double dpa_renyi_closed_log_e(const dpa_pair *p, double theta, double *e);
double dpa_renyi_closed_kl(const dpa_pair *p, int rev, double *e);
/* Certified upper bound on log E_p(theta), theta in (-1, 0); certified
 * lower bound for theta > 0 or < -1 (*how: 1 if the binomial expansion was
 * used). */
dpa_status dpa_renyi_upper_log_e_mid(const dpa_pair *p, double theta, double *out, dpa_error *err);
dpa_status dpa_renyi_lower_log_e_out(const dpa_pair *p, double theta, double *out, int *how, dpa_error *err);
/* log M(r) and the tilted mean of the pair in direction dir (phi module). */
dpa_status dpa_renyi_phi_moments(const dpa_pair *p, int dir, double r, double *logm, double *mean,
                                 dpa_error *err);
/* Count-weighted upper bounds on D_b of a composite leaf at the orders
 * b[0..n) in direction dir (the RDP accountant). */
dpa_status dpa_renyi_composite_upper(const dpa_leaf *lf, const double *b, size_t n, int dir, double *out,
                                     dpa_error *err);
/* The DPA_EUNSUPPORTED error for a leaf without a value here. */
dpa_status dpa_renyi_unsupported_leaf(const dpa_leaf *lf, dpa_error *err);

/* ---- renyi_br.c ---- */

/* A certified lower bound on the largest D_A (A > 0; KL at A = 1) over the
 * epsilon-bounded-range class (eps > 0), unsampled (q = 1) or
 * Poisson-subsampled at rate q in (0, 1), in direction dir: the divergence
 * of the best two-point member P_t found (t into *t_best if not NULL),
 * rounded down; 0 for arguments outside these domains. */
double dpa_renyi_br_lower(double eps, double q, double A, int dir, double *t_best);

/* ---- renyi_pg.c ---- */

/* A certified lower bound on D_A, A >= 1 (KL at A = 1), of the
 * Poisson(q)-subsampled Gaussian pair (mu > 0, q in (0, 1)) in direction
 * dir (0 remove, 1 add), by a lower quadrature; 0 if none is found. */
double dpa_renyi_pg_lower(double mu, double q, double A, int dir);

/* ---- renyi_real.c, renyi_complex.c ---- */

/* The divergence of the composition L at the real order A (complex order
 * A) in direction dir (0 remove, 1 add), into *v. */
dpa_status dpa_renyi_eval_real(const dpa_leafset *L, double A, int dir, dpa_renyi_value *v, dpa_error *err);
dpa_status dpa_renyi_eval_complex(const dpa_leafset *L, double complex A, int dir, dpa_renyi_value *v,
                                  dpa_error *err);

#endif

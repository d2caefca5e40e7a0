/* What the files of the (eps, delta) lattice method (exact_rr*.c) share:
 * the notation of the error analysis, its constants, the factor and group
 * types, and the functions one file calls in another.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Every reported bound is certified: each floating-point operation of the
 * exact_rr*.c files carries an explicit error bound, derived in their
 * comments, and the bounds are pushed outwards by them.  Notation:
 * u = 2^-64 (unit round-off of the x87 long double; LDBL_EPSILON / 2 in
 * general), E_F = 8 u = 4 ulp, the error bound
 * assumed for glibc's long double expl, expm1l, log1pl, logl, sinhl, tanhl
 * (glibc's libm-test-ulps lists at most 1-4 ulp for them on x86-64, in every
 * rounding mode; tests/test_exact_rr.c measures them against MPFR).  Basic
 * operations (+ - * /) are correctly rounded: relative error <= u.
 *
 * The derivation is numbered by sections, each at the top of the file
 * that implements it: 1, 1b exact_rr_binom.c (one binomial's tables,
 * two-point factors); 2, 3 exact_rr_eval.c (evaluation on a lattice cell,
 * several distinct eps); 4 exact_rr_delta.c (closed forms, the +inf mass,
 * delta(t)); 5 exact_rr_search.c (eps(delta)); 6 exact_rr_chernoff.c (cost,
 * the Chernoff fallback); 7 exact_rr_het*.c (heterogeneous epsilons).  The
 * leaves as factors and their grouping are in exact_rr_factors.c, the
 * exact-sign lattice arithmetic in exact_rr_lattice.c, the notation (u,
 * E_F) and the shared constants in exact_rr_internal.h.
 */
#ifndef DPA_EXACT_RR_INTERNAL_H
#define DPA_EXACT_RR_INTERNAL_H

#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include "dpacct/status.h"
#include "exact/exact_rr.h"
#include "model/leaves.h"
#include "num/num.h"

#if LDBL_MANT_DIG < 64 || LDBL_MIN_EXP > -16300
#error "the exact method (exact_rr*.c) needs a long double with at least 64 mantissa bits and a 15-bit exponent"
#endif

#define U (0.5L * LDBL_EPSILON)
#define E_F (8 * U)
#define ERRSLACK (1 + 0x1p-20L)
#define C1 ((3 * U + E_F) * ERRSLACK)
#define TAU 0x1p-1120L
#define TINY 0x1p-16000L
#define LN2L 0.693147180559945309417232121458176568L
/* window points summed at build time, per composition */
#define MAX_STEPS ((double)(1 << 27))
#define MAX_BK 1024
/* eps(delta) bracket: relative width of about two ulps */
#define EPS_XTOL_REL 4.5e-16

/* suffix sums of weights and their error bounds (section 1) */
typedef struct acc { long double A, H, Ae, He; } acc;

/* One leaf as a factor of the composition, in one direction. */
typedef struct fac {
    int kind;                    /* 0: (eps, delta) leaf, 1: atom-only two-point pair */
    double k;                    /* count */
    double eps, delta;           /* kind 0 */
    int nfin;                    /* kind 1: finite atoms with mass (0, 1 or 2) */
    double whi, wlo, lahi, lalo; /* kind 1; nfin 1: wlo = whi, lalo = -inf (p = 1) */
    double lainf;                /* kind 1: log A(+inf), -inf if none */
} fac;

/* One group of equal factors: a distinct eps > 0 or a distinct two-point
 * factor, with its total count and window estimate (exact_rr_factors.c). */
typedef struct grp {
    int gen;                          /* 0: RR, 1: two-point */
    double eps, whi, wlo, lahi, lalo; /* RR: eps (whi = eps, wlo = -eps) */
    double whi0, wlo0;                /* two-point: the stored losses (before shift_losses) */
    double lam;                       /* log(p / (1 - p)) (sizing) */
    double k, elo, ehi, md;
} grp;

/* delta(t) in [inf_lo + y_lo, inf_up + y_up] (exact sums of the long
 * doubles), and delta(t) >= fl_ (1 - e^t for t < 0, else 0) */
typedef struct dparts { long double inf_up, y_up, inf_lo, y_lo, fl_; } dparts;

/* exact_rr_lattice.c: the lattice of one factor */
long double dpa_rr_ratio_up(const dpa_rr_dist *d, double y);
long double dpa_rr_ratio_dn(const dpa_rr_dist *d, double z);
long double dpa_rr_xmab(long double x, long double a, long double b);
long double dpa_rr_gap(const dpa_rr_dist *d, long double x, double y);
double dpa_rr_locate(const dpa_rr_dist *d, long double x);

/* exact_rr_factors.c: leaves as factors, groups, the plan */
long double dpa_rr_rep_err(double la);
fac *dpa_rr_collect(const dpa_leafset *L, int dir, int atoms_ok, int *valid);
size_t dpa_rr_group(const fac *f, size_t n, grp *g);
double dpa_rr_bk_of(const grp *g);
int dpa_rr_plan(const grp *g, size_t m);

/* exact_rr_binom.c: one binomial's tables (section 1) */
dpa_status dpa_rr_dist_build(dpa_rr_dist *d, const grp *g, int side, double *budget, dpa_error *err);

/* exact_rr_eval.c: the window sum over dists i..m-1 (sections 2, 3) */
void dpa_rr_outer(const dpa_rr_comp *c, size_t i, long double x, long double dx, long double *vhi, long double *vlo);

/* exact_rr_chernoff.c: F bounds in the Chernoff fallback (section 6) */
void dpa_rr_chern_F(const dpa_rr_dist *d, long double t, long double *fhi, long double *flo);

/* exact_rr_delta.c: the +inf mass, delta(t) in parts (section 4) */
void dpa_rr_inf_mass(dpa_rr_comp *c, const fac *f, size_t nf);
void dpa_rr_delta_parts(const dpa_rr_comp *c, double t, int need, dparts *p);

/* exact_rr_search.c: a + b - c with an error bound (section 5) */
long double dpa_rr_sum3(long double a, long double b, long double c, long double *err);

#endif

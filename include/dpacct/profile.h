/* Operations on certified privacy profiles (implementation: src/exact/profile_ops.c).
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A pair (P, Q) is described here by brackets of its two directional
 * privacy profiles on [0, +inf]:
 *
 *   delta_{P|Q}(x) = H_{e^x}(P || Q)   ("fwd")   and   delta_{Q|P}(x)   ("rev"),
 *
 * each a function that returns *lo <= delta(x) <= *up for any x >= 0 and
 * for x = +inf (the mass at +inf).  Negative arguments follow from the other
 * direction by LT eq 7, delta_{P|Q}(x) = 1 - e^x + e^x delta_{Q|P}(-x)
 * (dpa_profile_eval).  A pair whose two directions coincide (every pair the
 * library builds for a mechanism, docs/sampling.md) has rev = NULL.
 *
 * Only the brackets are used: whatever certifies them (a closed form, an
 * accountant, a table of bounds) certifies the results, which are pushed
 * outwards by the round-off of the operations themselves
 * (docs/guarantees.md §2.4).  No global state; every function is
 * reentrant as long as the callbacks are. */
#ifndef DPACCT_PROFILE_H
#define DPACCT_PROFILE_H

#include <stddef.h>

/* *lo <= delta(x) <= *up for x in [0, +inf]; 0 <= *lo <= *up <= 1. */
typedef void (*dpa_profile_fn)(void *ctx, double x, double *up, double *lo);

typedef struct dpa_profile {
    dpa_profile_fn fwd;
    void *fwd_ctx;
    dpa_profile_fn rev; /* NULL: the pair is symmetric (rev = fwd) */
    void *rev_ctx;
} dpa_profile;

/* The bracket of delta_{P|Q} (dir 0) or delta_{Q|P} (dir 1) at any x
 * (real or +-inf; NaN gives [0, 1]). */
void dpa_profile_eval(const dpa_profile *p, int dir, double x, double *up, double *lo);

/* ---- tables ----
 * Bounds at n >= 1 points x_0 < ... < x_{n-1} (finite; any sign): up[i] >=
 * delta(x_i) >= lo[i] (lo may be NULL: 0).  Between and beyond the points
 * the bracket uses only what every profile satisfies: H_a(P || Q) is convex
 * and non-increasing in a = e^x with H_0 = 1, so the upper bound is the
 * chord in a through the neighbouring points (through (0, 1) and the first
 * point below x_0; the last value beyond x_{n-1}), and the lower bound the
 * next value to the right (0 beyond the table), or 1 - e^x if larger. */
typedef struct dpa_profile_table {
    size_t n;
    const double *x, *up, *lo;
} dpa_profile_table;

/* A dpa_profile_fn for a table (ctx: const dpa_profile_table *). */
void dpa_profile_table_eval(void *ctx, double x, double *up, double *lo);

/* ---- Poisson subsampling (LT Thm 5.1; docs/sampling.md §1) ----
 * Rate q in (0, 1].  The subsampled pair is R_q = (qP + (1-q)Q, Q): its
 * fwd profile is the remove direction,
 *   delta_R(x) = q delta_{P|Q}(log1p(expm1(x) / q)),                      x >= 0,
 * its rev profile the add direction, (Q, qP + (1-q)Q),
 *   delta_A(x) = (1 - (1-q) e^x) delta_{Q|P}(-log1p(expm1(-x) / q)),    0 <= x < -log(1-q),
 *   delta_A(x) = 0,                                                      x >= -log(1-q),
 * (LT eq 7 applied to LT Thm 5.1, rewritten without the cancellation of
 * 1 - e^x + e^x q delta_{P|Q}(log(1 + (e^{-x} - 1)/q)) at negative
 * arguments).  Both need the base only at arguments >= 0.  Since the base
 * profiles are non-increasing, upper bounds are evaluated at an argument
 * at or below the true one and lower bounds at or above it.  Under
 * add/remove adjacency the guarantee is the larger of the two directions. */
void dpa_profile_poisson_remove(const dpa_profile *base, double q, double x, double *up, double *lo);
void dpa_profile_poisson_add(const dpa_profile *base, double q, double x, double *up, double *lo);
/* The max of both directions at x >= 0; *binding: 0 remove, 1 add (the
 * larger upper bound; remove on ties). */
void dpa_profile_poisson_max(const dpa_profile *base, double q, double x, double *up, double *lo, int *binding);

/* The subsampled pair as a profile (fwd = remove, rev = add), for further
 * operations (nested subsampling multiplies the rates).  ctx is filled and
 * must outlive *out; base must outlive both. */
typedef struct dpa_profile_poisson_ctx {
    const dpa_profile *base;
    double q;
} dpa_profile_poisson_ctx;
void dpa_profile_poisson(const dpa_profile *base, double q, dpa_profile_poisson_ctx *ctx, dpa_profile *out);

#endif

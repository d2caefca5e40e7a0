/* Closed-form accountant for compositions of (eps, delta)-DP steps.
 * SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef DPA_EXACT_RR_H
#define DPA_EXACT_RR_H

#include <stddef.h>
#include "dpacct/status.h"

/* A composition of k_i copies of RR_{eps_i, delta_i} (the dominating pair of
 * an (eps_i, delta_i)-DP step, LT Thm 4.5), grouped by distinct eps_i. */
typedef struct dpa_rr_comp {
    size_t m;          /* distinct eps values */
    double *eps;       /* m values > 0 */
    double *count;     /* m integer counts */
    double log_keep;   /* log prod_j (1 - delta_j)^{k_j} (all steps, eps = 0 included) */
    double **lpmf;     /* m tables: log Bin(y; k_i, p_i), y = 0..k_i (dpa_rr_prepare) */
} dpa_rr_comp;

struct dpa_leafset;
/* 1 if the leaf set is an unsampled (eps, delta) composition (all_rr) that
 * this method can evaluate within its cost limit. */
int dpa_rr_applicable(const struct dpa_leafset *L);
/* Group the leaves of an all_rr leaf set by eps and prepare the tables
 * (LT Thm 4.6).  *c must be zeroed; dpa_rr_free releases it, also after a
 * failure.  DPA_ENOMEM. */
dpa_status dpa_rr_build(dpa_rr_comp *c, const struct dpa_leafset *L, dpa_error *err);

/* Precompute the binomial tables (after eps, count, m are set).  DPA_ENOMEM. */
dpa_status dpa_rr_prepare(dpa_rr_comp *c, dpa_error *err);
/* Free eps, count and the tables. */
void dpa_rr_free(dpa_rr_comp *c);

/* Largest product of (k_i + 1) handled (lattice points summed per query). */
#define DPA_RR_MAX_LATTICE 2e5

/* delta(t) (LT Thm 4.6 unrolled, MATH.md §3):
 *   delta(t) = 1 - P + P E[(1 - e^{t - S})_+],  P = e^{log_keep},
 *   S = sum_i eps_i (2 Y_i - k_i), Y_i ~ Bin(k_i, e^{eps_i} / (1 + e^{eps_i})),
 * summed over the lattice in log space (log-binomial pmfs by lgamma).
 * [*lo, *up] covers the evaluation error (a relative bound, see exact_rr.c). */
void dpa_rr_delta(const dpa_rr_comp *c, double t, double *up, double *lo);

/* Smallest eps >= 0 with delta(eps) <= delta, bracketed: +inf when
 * delta <= 1 - P (the +inf mass). */
void dpa_rr_epsilon(const dpa_rr_comp *c, double delta, double *up, double *lo);

#endif

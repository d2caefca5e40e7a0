/* Privacy filters: a residue filter's budget given as a tradeoff curve
 * (filter_bcurve.c; docs/filters.md "The general residue filter").
 * SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef DPA_FILTER_BCURVE_H
#define DPA_FILTER_BCURVE_H

#include <stddef.h>
#include "dpacct/status.h"

/* The budget B with the symmetric tradeoff curve g = max(f, f^-1) (f-DP for
 * every ordered pair of neighbours, GDP Prop 2.1), f piecewise linear.  Its
 * hockey-stick curve h_B(x) = 1 - inf_a (x a + g(a)) (RF Prop 9) is bounded
 * below by the supporting lines x -> (1 - g(a_j)) - x a_j at the vertices
 * a_j of f and f^-1, each with 1 - g(a_j) rounded down. */
typedef struct dpa_f_bcurve {
    size_t n;
    double *a;  /* the lines' slopes (type I errors a_j), ascending, a[0] = 0 */
    double *om; /* lower bounds on 1 - g(a_j) */
    /* the configuration as read, for the canonical JSON: points (alpha, beta)
     * or (eps, delta) pairs */
    int eps_delta;
    size_t npts;
    double *px, *py;
} dpa_f_bcurve;

/* From n tradeoff points (alpha_i, beta_i) read as the tradeoff_curve leaf
 * reads them (docs/fdp.md §11: the lower convex envelope, completed by
 * (0, beta_first) and (1, 0)), or from n (eps_i, delta_i) pairs (the
 * budget sup_i f_{eps_i, delta_i}, GDP Prop 2.8).  NULL with err (naming
 * the point) on bad input. */
dpa_f_bcurve *dpa_f_bcurve_new(const double *x, const double *y, size_t n, int eps_delta, dpa_error *err);
void dpa_f_bcurve_free(dpa_f_bcurve *c);
/* A lower bound on h_B(e^t) (t >= 0): the largest line at e^t rounded up;
 * *arg (may be NULL) gets the line's index. */
double dpa_f_bcurve_lo(const dpa_f_bcurve *c, double t, size_t *arg);
/* Line j at e^t, rounded down (a lower bound on h_B(e^t) for every t). */
double dpa_f_bcurve_line(const dpa_f_bcurve *c, size_t j, double t);
/* A lower bound on h_B(+inf) = 1 - g(0), the budget's mass at +inf. */
double dpa_f_bcurve_floor(const dpa_f_bcurve *c);

#endif

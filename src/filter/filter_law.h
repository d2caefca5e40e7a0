/* The discrete law of a query's privacy loss, shared by the GDP residue
 * filter's query builder (filter_law.c) and its dominance test
 * (filter_dominance.c).
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef DPA_FILTER_LAW_H
#define DPA_FILTER_LAW_H

#include <stddef.h>
#include "num/num.h"

/* Relative margin on a sum of n products of upper bounds: (n + 8) * 4 u
 * bounds the accumulated rounding of the sum of non-negative terms. */
#define SUM_REL(n) (((double)(n) + 8.0) * 4.0 * DPA_UNIT_ROUNDOFF)

typedef struct law {
    size_t n;
    double *w, *p; /* ascending w, p upper bounds on the masses */
    double inf;    /* upper bound on the mass at +inf */
    struct law *coarse; /* the query's laws: a coarse copy (law_coarsen), or NULL */
} law;

struct dpa_f_query {
    double mu0;   /* upper bound on the Gaussian part's mu */
    int has_rest; /* a non-Gaussian part exists */
    int sym;      /* rest symmetric: rev == fwd */
    law fwd, rev;
};

#endif

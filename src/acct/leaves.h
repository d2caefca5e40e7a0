/* Flattening an event tree into distinct mechanism leaves with counts.
 * SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef DPA_LEAVES_H
#define DPA_LEAVES_H

#include <stddef.h>
#include "dpacct/event.h"
#include "mech/pair.h"

/* One distinct leaf: its remove-direction pair (the add direction is its
 * reversal) and how many times it occurs in the composition. */
typedef struct dpa_leaf {
    dpa_pair *pair;   /* owned */
    double count;
    double mu;        /* for Gaussian-type leaves (exact method): mu; else NAN */
    double rr_eps, rr_delta; /* for (eps, delta)-DP leaves (pure, RR, approx); else NAN */
} dpa_leaf;

typedef struct dpa_leafset {
    dpa_leaf *v;
    size_t n;
    int asymmetric;     /* some pair is not symmetric: both directions differ */
    int all_gaussian;   /* every leaf is Gaussian/GDP and unsampled */
    int all_rr;         /* every leaf is pure/RR/approx and unsampled */
    double total_count; /* sum of counts */
} dpa_leafset;

/* Walk the spec: compose -> children, repeat -> counts multiply, poisson and
 * sample wrap one mechanism leaf (nested poisson rates multiply).  Identical
 * leaves are merged.  Errors name the JSON path: DPA_EUNSUPPORTED for zcdp
 * leaves, subsampled compositions, poisson under "replace" and sample under
 * "add_remove"; DPA_EINVAL for a total count above DPA_MAX_COUNT. */
dpa_status dpa_leaves_build(const dpa_spec *spec, dpa_leafset *out, dpa_error *err);
void dpa_leaves_free(dpa_leafset *s);

#endif

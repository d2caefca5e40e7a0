/* Flattening an event tree into distinct mechanism leaves with counts.
 * SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef DPA_LEAVES_H
#define DPA_LEAVES_H

#include <stddef.h>
#include "dpacct/event.h"
#include "mech/pair.h"

struct dpa_leafset;

/* One distinct leaf: its remove-direction pair (the add direction is its
 * reversal) and how many times it occurs in the composition.
 *
 * A subsampled composition (poisson or sample wrapping a compose/repeat: one
 * batch shared by several mechanisms) is a *composite* leaf: pair is NULL and
 * inner holds the flattened inner composition, whose remove-direction pair is
 * the product of its leaves' pairs.  The accountant composes it on the grid
 * and applies the subsampling map to the composed measures
 * (docs/sampling.md §3).  Inner compositions of Gaussian/GDP leaves only are
 * not composite: they are one Gaussian with mu = sqrt(sum k_i mu_i^2). */
typedef struct dpa_leaf {
    dpa_pair *pair;   /* owned; NULL for a composite leaf */
    double count;
    double mu;        /* for Gaussian-type leaves (exact method): mu; else NAN */
    double rr_eps, rr_delta; /* for (eps, delta)-DP leaves (pure, RR, approx); else NAN */
    struct dpa_leafset *inner; /* owned; composite leaves only */
    double rate;      /* subsampled leaves: Poisson rate, or m/n for sample; NAN if unsampled */
    int sample;       /* subsampled leaves: 1 for sample (replace-one, symmetrized), 0 for poisson */
    int kind;         /* the mechanism's dpa_event_kind (under any sampling); -1 for composite */
    double par[2];    /* the mechanism's two event parameters (dpa_event p[0], p[1]) */
    int zcdp;         /* 1: a zcdp leaf (rho = par[0], xi = par[1]): pair and inner are NULL; only the
                       * rdp method accounts it (a zCDP bound is a Renyi bound, not a pair) */
    int rdp_only;     /* a Renyi-only leaf: its dpa_event_kind (DPA_EV_REPEAT_AND_SELECT,
                       * DPA_EV_LAPLACE_SVT, DPA_EV_GAUSSIAN_SVT), else 0.  pair is NULL;
                       * for repeat_and_select, inner holds the repeated event's leaves (run
                       * K times, not subsampled: rate is NAN).  Only the rdp method takes
                       * it; the set's zcdp_path names it for the others' refusals. */
    double rpar[3];   /* its parameters (the event's p[0..2]); a discrete_gaussian leaf (plain or
                       * subsampled): rpar[2] = its truncation (DPA_DG_UNTRUNCATED if none) */
    /* random allocation (docs/sampling.md §4): a composite leaf (inner: the
     * step's event) for one epoch in which the record takes part in one
     * step of ra_steps chosen uniformly; 0 for other leaves.  A K-of-T
     * allocation (K > 1) becomes K 1-of-T' leaves, T' = floor(T/K) or
     * ceil(T/K) (FS25's decomposition, an upper bound only): ra_upper_only
     * is then set, and the lower bound comes from a ra_lower_only leaf or
     * is 0. */
    double ra_steps;
    int ra_upper_only; /* 1: no lower bound; 2: the lower bound is a ra_lower_only sibling */
    /* a pair dominated by a K-of-T allocation of a Gaussian step (the binned
     * maximum, dpa_pair_allocation_max): it bounds the allocation from
     * below only, its K 1-of-T' leaves (ra_upper_only = 2) from above */
    int ra_lower_only;
} dpa_leaf;

typedef struct dpa_leafset {
    dpa_leaf *v;
    size_t n;
    int asymmetric;     /* some pair is not symmetric: both directions differ */
    int all_gaussian;   /* every leaf is Gaussian/GDP and unsampled */
    int all_rr;         /* every leaf is pure/RR/approx and unsampled */
    int composite;      /* some leaf is composite (at any depth) */
    double total_count; /* sum of counts */
    /* JSON path of the first zcdp or other Renyi-only leaf ("" if none):
     * methods other than rdp refuse the set naming it */
    char zcdp_path[160];
    /* JSON path of the first non_private leaf (said in every result's note);
     * empty if none */
    char nonprivate_path[160];
    /* JSON path of the first poisson event of rate 0 (a no-op: it adds no
     * leaf; said in the results' note); empty if none */
    char noop_path[160];
    /* JSON path of the first random_allocation event (at any depth; "" if
     * none): only the pld method accounts it, the others refuse naming it */
    char ra_path[160];
} dpa_leafset;

/* Walk the spec: compose -> children, repeat -> counts multiply, poisson and
 * sample wrap a mechanism leaf or a composition (nested poisson rates
 * multiply; see dpa_leaf for composite leaves; a total Poisson rate of 0 is
 * the no-op and adds no leaf, its path kept in noop_path).  Identical leaves are
 * merged; identity mechanisms (pure/randomized_response with epsilon 0,
 * approx with epsilon 0 and delta 0) are dropped.  zcdp leaves are kept as such (dpa_leaf.zcdp; all_gaussian and
 * all_rr are then 0).  Errors name the JSON path: DPA_EUNSUPPORTED for zcdp
 * under poisson or sample (no method bounds a subsampled zCDP guarantee
 * tightly), poisson or random_allocation under "replace" and sample under
 * "add_remove"; random_allocation of a zcdp or Renyi-only step; DPA_EINVAL for a
 * total count above DPA_MAX_COUNT. */
dpa_status dpa_leaves_build(const dpa_spec *spec, dpa_leafset *out, dpa_error *err);
void dpa_leaves_free(dpa_leafset *s);

#endif

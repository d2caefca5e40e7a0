/* The loss range of a leaf and of a composition: the largest finite loss
 * and an upper bound on the mass above it (docs/guarantees.md §3.12), for
 * the PLD method's largest-finite-loss cap.
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <math.h>
#include "pld/pld_acct.h"

/* ---------------- loss range of a composition ---------------- */

void dpa_pld_leaf_range(const dpa_leaf *l, int d, double *wmax, double *inf)
{
    if (l->ra_lower_only) { /* a lower-bound device: its upper measure is the identity */
        *wmax = 0;
        *inf = 0;
        return;
    }
    if (l->pair) {
        const dpa_pair *p = l->pair;
        double lo, hi;
        dpa_pair_loss_range(p, &lo, &hi);
        if (d == 0 || p->symmetric) {
            *wmax = hi;
            *inf = dpa_pair_inf_bound(p);
            /* pure/RR/approx leaves: the +inf mass is the leaf's delta itself */
            if (l->rr_delta >= 0) *inf = l->rr_delta;
            return;
        }
        if (!l->sample && l->rate < 1) {
            /* add direction of Poisson subsampling (Q, qP + (1-q)Q):
             * dQ/d(qP + (1-q)Q) <= 1/(1-q), no mass at +inf */
            *wmax = -log1p(-l->rate) * (1 + 8 * DPA_UNIT_ROUNDOFF);
            *inf = 0;
            return;
        }
        /* reversed: largest finite loss -lo, +inf mass = B's atom at -inf */
        *wmax = -lo;
        *inf = 0;
        for (size_t i = 0; i < p->natoms; i++)
            if (p->atoms[i].w == -INFINITY && p->atoms[i].lb > -INFINITY)
                *inf += exp(p->atoms[i].lb) * (1 + 4 * DPA_UNIT_ROUNDOFF * (fabs(p->atoms[i].lb) + 6));
        if (p->slack_lo > 0) *wmax = INFINITY; /* B-mass of omitted low atoms unknown */
        return;
    }
    if (l->ra_steps > 0) {
        /* random allocation (docs/sampling.md §4): remove, log(S/T) is at
         * most the largest finite loss of one step (S/T is an average of the
         * W_j) and +inf when W* is; add, -log(S/T) <= w' + log T for S > 0
         * (S >= max_j W_j >= e^{-w'}), +inf when every W_j = 0 (at most the
         * inner +inf mass) */
        double wi, ii;
        dpa_pld_set_range(l->inner, l->inner->asymmetric ? d : 0, &wi, &ii);
        *wmax = d == 0 ? wi : wi + log(l->ra_steps) + 8 * DPA_UNIT_ROUNDOFF * (fabs(wi) + log(l->ra_steps) + 1);
        *inf = ii;
        return;
    }
    /* composite: the inner composition's remove pair, subsampled */
    double wi, ii, q = l->rate;
    dpa_pld_set_range(l->inner, 0, &wi, &ii);
    double w0 = dpa_poisson_loss(q, wi);
    w0 += 8 * DPA_UNIT_ROUNDOFF * (fabs(w0) + 1e-300);
    if (l->sample) { /* symmetrized: [-max(w0, 0), max(w0, 0)], both directions */
        *wmax = fmax(w0, 0.0);
        *inf = q * ii * (1 + 4 * DPA_UNIT_ROUNDOFF);
    } else if (d == 0) {
        *wmax = w0;
        *inf = q * ii * (1 + 4 * DPA_UNIT_ROUNDOFF);
    } else {
        /* add direction (Q, qP + (1-q)Q): dQ/d(qP + (1-q)Q) <= 1/(1-q) */
        *wmax = -log1p(-q) * (1 + 8 * DPA_UNIT_ROUNDOFF);
        *inf = 0;
    }
}

/* The same for a composition: losses add, +inf masses compose as
 * 1 - prod (1 - inf_i)^{k_i}; both rounded up. */
void dpa_pld_set_range(const dpa_leafset *L, int d, double *wmax, double *inf)
{
    double w = 0, aw = 0, lk = 0;
    int full = 0;
    for (size_t i = 0; i < L->n; i++) {
        double wi, ii;
        dpa_pld_leaf_range(&L->v[i], d, &wi, &ii);
        w += L->v[i].count * wi;
        aw += L->v[i].count * fabs(wi);
        if (ii >= 1) full = 1;
        else lk += L->v[i].count * log1p(-ii);
    }
    /* each product and sum rounds: (n + 2) u relative of sum |.|, margin 4 */
    *wmax = isnan(w) ? INFINITY : w + 4 * ((double)L->n + 2) * DPA_UNIT_ROUNDOFF * aw;
    /* -expm1 and the log1p sum: a few u relative (log1p(-x) ~ -x) */
    *inf = full ? 1.0 : fmin(1.0, -expm1(lk) * (1 + 4 * ((double)L->n + 4) * DPA_UNIT_ROUNDOFF));
}

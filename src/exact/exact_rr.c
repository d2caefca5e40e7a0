/* Closed-form accountant for compositions of (eps, delta)-DP steps
 * (exact_rr.h): building a composition's tables and freeing them.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * LT Thm 4.6 (unrolled) / LT Cor 4.7: the composition of k_i copies of
 * RR_{eps_i, delta_i} has loss +inf with probability 1 - P,
 * P = prod_j (1 - delta_j)^{k_j}, and otherwise S = sum_i eps_i (2 Y_i - k_i)
 * with independent Y_i ~ Bin(k_i, p_i), p_i = e^{eps_i} / (1 + e^{eps_i}):
 *
 *   delta(t) = 1 - P + P F(t),  F(t) = sum_{y: S(y) > t} pmf(y) (1 - e^{t - S(y)}).
 *
 * The same holds for "two-point" factors (section 1b): pairs whose loss
 * takes two finite values w_hi > w_lo plus +inf (A-mass only) and -inf
 * (B-mass only), e.g. a Poisson-subsampled pure/RR step in either direction.
 * Their k-fold composition has S = Y w_hi + (k - Y) w_lo, Y ~ Bin(k, p),
 * p = A(w_hi) / (A(w_hi) + A(w_lo)), and A(+inf) enters P; RR is the case
 * w = +-eps, p = e^eps / (1 + e^eps), and stays on its own code path
 * (bit-identical results to the RR-only version).
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
#include <stdlib.h>
#include <string.h>
#include "exact/exact_rr_internal.h"

void dpa_rr_free(dpa_rr_comp *c)
{
    if (!c) return;
    if (c->d)
        for (size_t i = 0; i < c->m; i++) {
            free(c->d[i].up);
            free(c->d[i].dn);
        }
    free(c->d);
    free(c->Lrest);
    if (c->rep_lo) {
        dpa_rr_free(c->rep_lo);
        free(c->rep_lo);
    }
    memset(c, 0, sizeof *c);
}

/* the tables of groups g[0..m-1] (pl: plan) with two-point ratios at side
 * +1 / -1 of their ranges; the +inf mass from the factors f */
static dpa_status build_one(dpa_rr_comp *c, const fac *f, size_t nf, const grp *g, size_t m, int pl, int side,
                            dpa_error *err)
{
    dpa_rr_inf_mass(c, f, nf);
    c->m = m;
    c->sym = 1;
    for (size_t i = 0; i < m; i++)
        if (g[i].gen) c->sym = 0;
    c->d = calloc(m ? m : 1, sizeof *c->d);
    c->Lrest = calloc(m + 1, sizeof *c->Lrest);
    if (!c->d || !c->Lrest) return dpa_error_set(err, DPA_ENOMEM, "out of memory");
    if (c->sym) {
        /* Lrest[i] >= sum_{j >= i} eps_j k_j: the product, the sum and the
         * scaling each round (relative u): (1 - u)^3 (1 + 4u) > 1 */
        for (size_t i = m; i-- > 0;)
            c->Lrest[i] = (c->Lrest[i + 1] + (long double)g[i].eps * g[i].k) * (1 + 4 * U);
    } else {
        /* Lrest[i] >= sum_{j >= i} w_hi,j k_j (any signs): each rounded
         * result moved up by an ulp */
        for (size_t i = m; i-- > 0;) {
            long double p = nextafterl((long double)g[i].whi * g[i].k, INFINITY);
            c->Lrest[i] = nextafterl(c->Lrest[i + 1] + p, INFINITY);
        }
    }
    c->tmax = fmax(0, dpa_ld_up(c->Lrest[0]));
    c->loose = pl == 2;
    dpa_status st = DPA_OK;
    double budget = 2 * MAX_STEPS;
    for (size_t i = 0; i < m && !st; i++) {
        dpa_rr_dist *d = &c->d[i];
        if (c->loose) { /* one RR eps (plan) */
            d->eps = g[i].eps;
            d->whi = g[i].eps;
            d->wlo = -g[i].eps;
            d->k = g[i].k;
            d->E = expl((long double)d->eps);
            d->th = tanhl(0.5L * d->eps);
            d->c1 = C1;
            d->grel = U;
        } else st = dpa_rr_dist_build(d, &g[i], side, &budget, err);
    }
    return st;
}

/* the two-point losses moved to the top (side 1) or the bottom (side -1) of
 * their representation ranges |w_true - w| <= DPA_RR_LOSS_ULPS u_d |w|:
 * dw = fl(|w| c) >= |w| c (1 - u), fl(w +- dw) is within half an ulp of
 * w +- dw, and the next double beyond it is beyond w +- |w| c (u dw is far
 * below half an ulp) */
static double shift_one(double w, int side)
{
    double dw = fabs(w) * (DPA_RR_LOSS_ULPS * 0x1p-53 * (1 + 0x1p-20));
    if (dw == 0) return w;
    return side > 0 ? nextafter(w + dw, INFINITY) : nextafter(w - dw, -INFINITY);
}

static void shift_losses(grp *g, size_t m, int side)
{
    for (size_t i = 0; i < m; i++) {
        if (!g[i].gen) continue;
        g[i].whi = shift_one(g[i].whi0, side);
        g[i].wlo = shift_one(g[i].wlo0, side);
    }
}

static dpa_status build(dpa_rr_comp *c, const dpa_leafset *L, int dir, int atoms_ok, dpa_error *err)
{
    int valid;
    fac *f = dpa_rr_collect(L, dir, atoms_ok, &valid);
    grp *g = malloc((L->n ? L->n : 1) * sizeof *g);
    if (!f || !g) {
        free(f);
        free(g);
        return dpa_error_set(err, DPA_ENOMEM, "out of memory");
    }
    size_t m = valid ? dpa_rr_group(f, L->n, g) : 0;
    int pl = valid ? dpa_rr_plan(g, m) : 0;
    dpa_status st;
    if (!pl) st = dpa_error_set(err, DPA_EUNSUPPORTED, "exact method: this composition is outside the method's "
                                                        "limits; use method pld");
    else {
        /* two-point ratios with a representation error: upper bounds at the
         * top of every range (c), lower bounds at the bottom (c->rep_lo) */
        int rep = 0;
        for (size_t i = 0; i < m; i++)
            if (g[i].gen) rep = 1;
        if (rep) shift_losses(g, m, 1);
        st = build_one(c, f, L->n, g, m, pl, 1, err);
        if (!st && rep) {
            shift_losses(g, m, -1);
            c->rep_lo = calloc(1, sizeof *c->rep_lo);
            st = c->rep_lo ? build_one(c->rep_lo, f, L->n, g, m, pl, -1, err)
                           : dpa_error_set(err, DPA_ENOMEM, "out of memory");
        }
    }
    free(f);
    free(g);
    return st;
}

dpa_status dpa_rr_build(dpa_rr_comp *c, const dpa_leafset *L, dpa_error *err)
{
    return build(c, L, 0, 0, err);
}

dpa_status dpa_rr_build_dir(dpa_rr_comp *c, const dpa_leafset *L, int dir, dpa_error *err)
{
    if (dir != 0 && dir != 1) return dpa_error_set(err, DPA_EINVAL, "exact method: direction must be 0 or 1");
    return build(c, L, dir, 1, err);
}
